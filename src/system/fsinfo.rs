//! Facts about the machine and the storage under a path, read from statx(2), statfs(2), /proc and
//! /sys. Functions take a root directory for /proc and /sys so tests can feed them fixture trees.

use crate::spec::roots::Roots;
use crate::system::procfs;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use crate::spec::plan::DioAlign;

const STATX_DIOALIGN: u32 = 0x2000;

/// statx(STATX_DIOALIGN) for `path`: Some((mem, offset)) when the kernel and filesystem say,
/// Some((0, 0)) when the filesystem does not support O_DIRECT on it.
pub fn statx_dioalign(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statx fills the zeroed struct; c is a valid C string.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, STATX_DIOALIGN, &mut sx) };
    if r != 0 || sx.stx_mask & STATX_DIOALIGN == 0 {
        return None;
    }
    Some((sx.stx_dio_mem_align as u64, sx.stx_dio_offset_align as u64))
}

/// The sysfs directory of the whole block device holding `path` (for a partition, its disk), and
/// the partition's own directory when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDev {
    /// e.g. "loop0", "sda", "nvme0n1"
    pub name: String,
    /// /sys/block/<disk>
    pub disk_dir: PathBuf,
    /// /sys/block/<disk>/<part> for a partition
    pub part_dir: Option<PathBuf>,
}

/// Finds the block device that `dev` (st_dev) belongs to under `sys` (normally "/sys").
pub fn block_dev_of(sys: &Path, dev: u64) -> Option<BlockDev> {
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let link = sys.join(format!("dev/block/{maj}:{min}"));
    let real = fs::canonicalize(&link).ok()?;
    if real.join("partition").exists() {
        let disk = real.parent()?.to_path_buf();
        Some(BlockDev {
            name: disk.file_name()?.to_string_lossy().into_owned(),
            disk_dir: disk,
            part_dir: Some(real),
        })
    } else {
        Some(BlockDev {
            name: real.file_name()?.to_string_lossy().into_owned(),
            disk_dir: real,
            part_dir: None,
        })
    }
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn read_u64(p: &Path) -> Option<u64> {
    read_trim(p)?.parse().ok()
}

impl BlockDev {
    pub fn queue(&self, attr: &str) -> Option<String> {
        read_trim(&self.disk_dir.join("queue").join(attr))
    }
    pub fn logical_block_size(&self) -> Option<u64> {
        read_u64(&self.disk_dir.join("queue/logical_block_size"))
    }
    pub fn rotational(&self) -> Option<bool> {
        self.queue("rotational").map(|s| s == "1")
    }
    /// The loop device's backing file, if this is a loop device.
    pub fn loop_backing_file(&self) -> Option<PathBuf> {
        read_trim(&self.disk_dir.join("loop/backing_file")).map(PathBuf::from)
    }
    /// The most bytes per second the device's link can carry, when the link is known: NVMe over
    /// PCIe (speed × width, after 128b/130b or 8b/10b encoding) or a SATA link.
    pub fn link_bytes_per_sec(&self) -> Option<(f64, String)> {
        let dev = fs::canonicalize(self.disk_dir.join("device")).ok()?;
        // NVMe namespace: device -> nvme controller; its "device" is the PCI function.
        for cand in [dev.join("device"), dev.clone()] {
            let speed = read_trim(&cand.join("current_link_speed"));
            let width =
                read_trim(&cand.join("current_link_width")).and_then(|w| w.parse::<f64>().ok());
            if let (Some(s), Some(w)) = (speed, width) {
                let gts: f64 = s.split_whitespace().next()?.parse().ok()?;
                // PCIe 1/2 use 8b/10b, 3+ use 128b/130b.
                let eff = if gts <= 5.0 { 0.8 } else { 128.0 / 130.0 };
                let bps = gts * 1e9 * eff * w / 8.0;
                return Some((bps, format!("PCIe {s} x{w}")));
            }
        }
        // SATA: .../ataN/linkN/... appears in the device path.
        let p = dev.to_string_lossy().into_owned();
        if let Some(i) = p.find("/ata") {
            let n: String = p[i + 4..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            let spd = read_trim(&PathBuf::from(format!(
                "/sys/class/ata_link/link{n}/sata_spd"
            )))?;
            let gbps: f64 = spd.split_whitespace().next()?.parse().ok()?;
            return Some((gbps * 1e9 * 0.8 / 8.0, format!("SATA {spd}")));
        }
        None
    }
}

/// Block device under `path` (a block device node: that device itself).
pub fn block_dev_for_path(sys: &Path, path: &Path) -> Option<BlockDev> {
    use std::os::unix::fs::FileTypeExt;
    let md = fs::metadata(path).ok()?;
    if md.file_type().is_block_device() {
        return block_dev_of(sys, md.rdev());
    }
    block_dev_of(sys, md.dev())
}

/// O_DIRECT alignment for files in `dir` (probing with `probe_file`, an existing file there).
pub fn dio_align(sys: &Path, probe_file: &Path) -> DioAlign {
    if let Some((m, o)) = statx_dioalign(probe_file)
        && m > 0
        && o > 0
    {
        return DioAlign {
            mem: m,
            offset: o,
            source: "statx",
        };
    }
    if let Some(lbs) = block_dev_for_path(sys, probe_file).and_then(|b| b.logical_block_size()) {
        return DioAlign {
            mem: lbs.max(512),
            offset: lbs,
            source: "logical_block_size",
        };
    }
    DioAlign {
        mem: 4096,
        offset: 4096,
        source: "default",
    }
}

/// MemTotal and MemAvailable in bytes from `<proc>/meminfo` ([`procfs::meminfo`]).
pub fn meminfo(proc_root: &Path) -> Option<(u64, u64)> {
    let m = procfs::meminfo(proc_root);
    Some((m.total?, m.available?))
}

/// The filesystem type name of `path` (from statfs f_type), e.g. "ext4", "xfs", "tmpfs".
pub fn fs_type(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return "unknown".into();
    };
    // SAFETY: statfs fills the zeroed struct.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return "unknown".into();
    }
    match s.f_type as i64 {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x0102_1994 => "tmpfs",
        0x9123_683E => "btrfs",
        0x2FC1_2FC1 => "zfs",
        0x6573_5546 => "fuse",
        0x794C_7630 => "overlayfs",
        0x6969 => "nfs",
        0x4244 => "hfs",
        0xF2F5_2010 => "f2fs",
        0x5346_544E => "ntfs",
        0x4d44 => "vfat",
        0x0102_1997 => "9p",
        _ => return format!("0x{:x}", s.f_type),
    }
    .to_string()
}

/// Free bytes available to this user on the filesystem holding `path` (None when unknown).
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // ramfs and some pseudo filesystems report no size at all: unknown, not zero.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 || s.f_blocks == 0 {
        return None;
    }
    Some(s.f_bavail * s.f_frsize)
}

/// The filesystem type of the mount holding `path`, by name, from `<proc>/self/mountinfo`
/// (statfs cannot tell devtmpfs from tmpfs).
pub fn mount_fstype(proc_root: &Path, path: &Path) -> Option<String> {
    let dev = fs::metadata(path).ok()?.dev();
    let key = format!("{}:{}", libc::major(dev), libc::minor(dev));
    procfs::mounts(proc_root)
        .into_iter()
        .find(|m| m.dev == key)
        .map(|m| m.fstype)
}

/// Why `path` is on a filesystem that is not storage (proc, sysfs, cgroup, devtmpfs, ...), or
/// None: writing a file set there measures nothing, and may fill memory or upset the kernel.
pub fn not_storage(proc_root: &Path, path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs fills the zeroed struct.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let why = match s.f_type as i64 {
        0x9fa0 => Some("proc, the kernel's process information"),
        0x6265_6572 => Some("sysfs, the kernel's device and driver settings"),
        0x0027_e0eb => Some("cgroup (v1), the kernel's control groups"),
        0x6367_7270 => Some("cgroup2, the kernel's control groups"),
        0x1cd1 => Some("devpts, pseudo-terminals"),
        0x6462_6720 => Some("debugfs, kernel debugging"),
        0x7472_6163 => Some("tracefs, kernel tracing"),
        0x7363_6673 => Some("securityfs"),
        0xcafe_4a11 => Some("bpf, the BPF filesystem"),
        0x6265_6570 => Some("configfs, kernel configuration"),
        0x6e73_6673 => Some("nsfs, namespaces"),
        _ => None,
    };
    why.or_else(|| {
        (mount_fstype(proc_root, path).as_deref() == Some("devtmpfs"))
            .then_some("devtmpfs, the kernel's device nodes (in memory)")
    })
}

/// How many more threads this process may start, and what bounds it: the smallest of
/// kernel.threads-max and kernel.pid_max minus the threads that exist, the pids.max of our
/// cgroup (v2) minus its pids.current, and RLIMIT_NPROC minus our user's threads (not for
/// root, whom the kernel does not hold to it).
pub fn thread_room(proc_root: &Path, sys_root: &Path) -> Option<(u64, String)> {
    let mut best: Option<(u64, String)> = None;
    let mut bound = |room: u64, why: String| {
        if best.as_ref().is_none_or(|b| room < b.0) {
            best = Some((room, why));
        }
    };
    // /proc/loadavg: "0.00 0.01 0.05 2/345 6789": 345 threads exist.
    let existing = read_trim(&proc_root.join("loadavg"))
        .and_then(|l| l.split(' ').nth(3)?.split('/').nth(1)?.parse::<u64>().ok());
    if let Some(n) = existing {
        for k in ["threads-max", "pid_max"] {
            if let Some(max) = read_u64(&proc_root.join("sys/kernel").join(k)) {
                bound(
                    max.saturating_sub(n),
                    format!("kernel.{k} {max} with {n} threads running"),
                );
            }
        }
    }
    let cg = fs::read_to_string(proc_root.join("self/cgroup")).unwrap_or_default();
    if let Some(rel) = cg.lines().find_map(|l| l.strip_prefix("0::")) {
        let d = sys_root.join("fs/cgroup").join(rel.trim_start_matches('/'));
        if let (Some(max), Some(cur)) = (
            read_u64(&d.join("pids.max")),
            read_u64(&d.join("pids.current")),
        ) {
            bound(
                max.saturating_sub(cur),
                format!("the cgroup's pids.max {max} with {cur} in use"),
            );
        }
    }
    // SAFETY: geteuid and getrlimit have no preconditions; getrlimit fills the zeroed struct.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::geteuid() } != 0
        && unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) } == 0
        && rl.rlim_cur != libc::RLIM_INFINITY
    {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let mine: u64 = fs::read_dir(proc_root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .filter_map(|e| fs::read_to_string(e.path().join("status")).ok())
            .filter(|st| {
                st.lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .and_then(|u| u.split_whitespace().next()?.parse::<u32>().ok())
                    == Some(uid)
            })
            .filter_map(|st| {
                st.lines()
                    .find_map(|l| l.strip_prefix("Threads:"))
                    .and_then(|n| n.trim().parse::<u64>().ok())
            })
            .sum();
        let max = rl.rlim_cur;
        bound(
            max.saturating_sub(mine),
            format!("RLIMIT_NPROC (ulimit -u) {max} with {mine} threads of this user"),
        );
    }
    best
}

/// This host's name.
pub fn hostname() -> String {
    procfs::hostname(&Roots::live().proc)
}

/// Kernel release (uname -r).
pub fn kernel_release() -> String {
    procfs::kernel_release(&Roots::live().proc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_parses_fixture() {
        let d = tempfile::tempdir().unwrap();
        fs::write(
            d.path().join("meminfo"),
            "MemTotal:       24576000 kB\nMemFree:        1000 kB\nMemAvailable:   20000000 kB\n",
        )
        .unwrap();
        assert_eq!(
            meminfo(d.path()),
            Some((24_576_000 * 1024, 20_000_000 * 1024))
        );
    }

    #[test]
    fn block_dev_resolves_partitions_to_their_disk() {
        let d = tempfile::tempdir().unwrap();
        let sys = d.path();
        let disk = sys.join("devices/virtual/block/sdz");
        let part = disk.join("sdz1");
        fs::create_dir_all(part.clone()).unwrap();
        fs::create_dir_all(disk.join("queue")).unwrap();
        fs::write(part.join("partition"), "1\n").unwrap();
        fs::write(disk.join("queue/logical_block_size"), "4096\n").unwrap();
        fs::write(disk.join("queue/rotational"), "1\n").unwrap();
        fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&part, sys.join("dev/block/8:1")).unwrap();
        let b = block_dev_of(sys, libc::makedev(8, 1)).unwrap();
        assert_eq!(b.name, "sdz");
        assert_eq!(b.logical_block_size(), Some(4096));
        assert_eq!(b.rotational(), Some(true));
        assert!(b.part_dir.is_some());
    }

    #[test]
    fn live_filesystem_facts_are_sane() {
        let t = std::env::temp_dir();
        assert!(free_bytes(&t).is_some());
        assert_ne!(fs_type(&t), "unknown");
        let (total, avail) = meminfo(Path::new("/proc")).unwrap();
        assert!(total >= avail && avail > 0);
    }
}
