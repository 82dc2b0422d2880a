//! Loop devices with a filesystem, and cgroup v1 blkio IOPS limits, for tests that need real
//! block devices (root only; see `cannot`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `cmd` with sh; its trimmed stdout, or a panic naming the command and its stderr.
pub fn sh(cmd: &str) -> String {
    let o = Command::new("sh").arg("-c").arg(cmd).output().unwrap();
    assert!(
        o.status.success(),
        "`{cmd}` failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Whether `tool` is on the PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Why loop devices (and, with `cgroup`, blkio throttling) cannot be used here, if they cannot.
pub fn cannot(cgroup: bool) -> Option<String> {
    if !super::is_root() {
        return Some("needs root".into());
    }
    for t in ["losetup", "mkfs.ext4", "mount", "lsblk"] {
        if !have(t) {
            return Some(format!("{t} is not installed"));
        }
    }
    if cgroup && !Path::new("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device").exists() {
        return Some("cgroup v1 blkio throttling is not available".into());
    }
    None
}

fn unique() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}-{n}", std::process::id())
}

/// An ext4 filesystem on a loop device (direct I/O to its image) mounted at `dir`; unmounted
/// and removed on drop.
pub struct LoopFs {
    img: PathBuf,
    pub dev: String,
    pub dir: PathBuf,
}

impl LoopFs {
    pub fn new(size_mb: u64, dir: &Path) -> LoopFs {
        let img = PathBuf::from(format!("/var/tmp/iolab-test-{}.img", unique()));
        sh(&format!("truncate -s {size_mb}M {}", img.display()));
        let dev = sh(&format!(
            "losetup --find --show --direct-io=on {}",
            img.display()
        ));
        // No lazy inode-table init: its background writes would compete with the measurement.
        sh(&format!(
            "mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 {dev} >/dev/null 2>&1"
        ));
        std::fs::create_dir_all(dir).unwrap();
        sh(&format!("mount {dev} {}", dir.display()));
        LoopFs {
            img,
            dev,
            dir: dir.to_path_buf(),
        }
    }
    pub fn majmin(&self) -> String {
        sh(&format!("lsblk -dno MAJ:MIN {}", self.dev)).replace(' ', "")
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.img);
    }
}

/// A blkio cgroup with a read and write IOPS limit on each of its devices; the limits are lifted
/// and the group removed on drop.
pub struct Throttle {
    pub path: PathBuf,
    devs: Vec<String>,
}

impl Throttle {
    pub fn new(devs_majmin: &[String], iops: u32) -> Throttle {
        let limits: Vec<(String, u32)> = devs_majmin.iter().map(|d| (d.clone(), iops)).collect();
        Throttle::with_limits(&limits)
    }
    /// A limit of its own for each device: `(MAJ:MIN, IOPS)`.
    pub fn with_limits(limits: &[(String, u32)]) -> Throttle {
        let path = PathBuf::from(format!("/sys/fs/cgroup/blkio/iolab-test-{}", unique()));
        std::fs::create_dir(&path).unwrap();
        for (d, iops) in limits {
            for f in ["read_iops_device", "write_iops_device"] {
                std::fs::write(
                    path.join(format!("blkio.throttle.{f}")),
                    format!("{d} {iops}"),
                )
                .unwrap();
            }
        }
        Throttle {
            path,
            devs: limits.iter().map(|l| l.0.clone()).collect(),
        }
    }
    /// A group with a read limit in bytes per second on one device (`MAJ:MIN`).
    pub fn read_bps(majmin: &str, bps: u64) -> Throttle {
        let mut t = Throttle::with_limits(&[]);
        std::fs::write(
            t.path.join("blkio.throttle.read_bps_device"),
            format!("{majmin} {bps}"),
        )
        .unwrap();
        t.devs.push(majmin.to_string());
        t
    }
    /// A command that runs `program` (its arguments added by the caller) inside the group.
    pub fn command(&self, program: &str) -> Command {
        let p = self.prefix();
        let mut c = Command::new(&p[0]);
        c.args(&p[1..]).arg(program);
        c
    }
    /// A command prefix that joins the group and runs the rest of the command line in it.
    pub fn prefix(&self) -> Vec<String> {
        vec![
            "sh".into(),
            "-c".into(),
            format!(
                "echo $$ > {} && exec \"$@\"",
                self.path.join("cgroup.procs").display()
            ),
            "sh".into(),
        ]
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        for d in &self.devs {
            for f in [
                "read_iops_device",
                "write_iops_device",
                "read_bps_device",
                "write_bps_device",
            ] {
                let _ = std::fs::write(
                    self.path.join(format!("blkio.throttle.{f}")),
                    format!("{d} 0"),
                );
            }
        }
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// A raw loop device (no filesystem, direct I/O to a sparse image under /var/tmp); detached
/// and removed on drop.
pub struct RawLoop {
    img: PathBuf,
    pub dev: String,
}

impl RawLoop {
    pub fn new(mb: u64) -> RawLoop {
        let img = PathBuf::from(format!("/var/tmp/iolab-raw-{}.img", unique()));
        sh(&format!("truncate -s {mb}M {}", img.display()));
        let dev = sh(&format!(
            "losetup --find --show --direct-io=on {}",
            img.display()
        ));
        RawLoop { img, dev }
    }
}

impl Drop for RawLoop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.img);
    }
}

/// A loop device (direct I/O to an image under /var/tmp) with a GPT of two partitions, each
/// holding ext4, mounted at `dirs[0]` and `dirs[1]`: two block devices under one disk (a cgroup
/// limit on the disk holds both). Unmounted, its partitions dropped and the device detached on
/// drop.
pub struct PartedLoop {
    img: PathBuf,
    pub dev: String,
    pub dirs: [PathBuf; 2],
}

impl PartedLoop {
    pub fn new(part_mb: u64, dirs: [PathBuf; 2]) -> PartedLoop {
        let img = PathBuf::from(format!("/var/tmp/iolab-parted-{}.img", unique()));
        sh(&format!(
            "truncate -s {}M {}",
            2 * part_mb + 4,
            img.display()
        ));
        let dev = sh(&format!(
            "losetup --find --show --direct-io=on {}",
            img.display()
        ));
        let p = PartedLoop { img, dev, dirs };
        // the kernel reads no partition table of a loop device here: partx adds them
        sh(&format!(
            "printf 'label: gpt\\n,{part_mb}M\\n,{part_mb}M\\n' | sfdisk -q {} >/dev/null 2>&1; partx -a {}",
            p.dev, p.dev
        ));
        for (i, d) in p.dirs.iter().enumerate() {
            let part = format!("{}p{}", p.dev, i + 1);
            sh(&format!(
                "mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 {part} >/dev/null 2>&1"
            ));
            std::fs::create_dir_all(d).unwrap();
            sh(&format!("mount {part} {}", d.display()));
        }
        p
    }
    /// The whole disk's `MAJ:MIN` (where a cgroup limit goes: the kernel takes none on a
    /// partition).
    pub fn majmin(&self) -> String {
        sh(&format!("lsblk -dno MAJ:MIN {}", self.dev)).replace(' ', "")
    }
}

impl Drop for PartedLoop {
    fn drop(&mut self) {
        for d in &self.dirs {
            let _ = Command::new("umount").arg(d).status();
        }
        let _ = Command::new("partx").args(["-d", &self.dev]).output();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.img);
    }
}

/// ext4 on a loop device over a sparse image in /dev/shm (a fast device that takes O_DIRECT, its
/// memory only what is written), mounted at a fresh folder; all undone on drop.
pub struct ShmLoop {
    img: PathBuf,
    pub dev: String,
    pub dir: PathBuf,
}

impl ShmLoop {
    pub fn new(size_mb: u64) -> ShmLoop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let tag = format!("{}-{nanos}", std::process::id());
        let img = PathBuf::from(format!("/dev/shm/iolab-paced-{tag}.img"));
        let dir = PathBuf::from(format!("/var/tmp/iolab-paced-{tag}"));
        sh(&format!("truncate -s {size_mb}M {}", img.display()));
        let dev = sh(&format!(
            "losetup --find --show --direct-io=on {}",
            img.display()
        ));
        let fs = ShmLoop { img, dev, dir };
        sh(&format!(
            "mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 {} >/dev/null 2>&1",
            fs.dev
        ));
        std::fs::create_dir_all(&fs.dir).unwrap();
        sh(&format!("mount {} {}", fs.dev, fs.dir.display()));
        fs
    }
}

impl Drop for ShmLoop {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.img);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Bytes free in /dev/shm (0 when it cannot be read): a [`ShmLoop`]'s writes take memory there.
pub fn shm_free_bytes() -> u64 {
    let o = Command::new("df")
        .args(["--output=avail", "-B1", "/dev/shm"])
        .output();
    o.ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .nth(1)
                .and_then(|l| l.trim().parse().ok())
        })
        .unwrap_or(0)
}
