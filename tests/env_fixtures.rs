//! `iolab env` / `iolab check` against fixture trees: fake /proc, /sys and /etc laid out the way
//! the kernel lays them out, read through `Roots::fixture`. No tools run, nothing needs root.

use crate::common;

use iolab::analysis::check::{self, Finding, Severity};
use iolab::system::env::{self as sysenv, EnvReport, Roots};
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------------------------------------
// Fixture builder
// ---------------------------------------------------------------------------------------------

const GIB_KIB: u64 = 1 << 20;
/// 512-byte sectors in a GiB / TiB.
const GIB_SECT: u64 = 1 << 21;
const TIB_SECT: u64 = 1 << 31;

/// The queue and device attributes of a whole disk.
#[derive(Clone)]
struct DiskSpec {
    rotational: bool,
    /// the scheduler file as the kernel prints it: "mq-deadline kyber [bfq] none"
    scheduler: &'static str,
    lbs: u64,
    pbs: u64,
    min_io: u64,
    opt_io: u64,
    nr_requests: u64,
    read_ahead_kb: u64,
    write_cache: &'static str,
    fua: bool,
    max_sectors_kb: u64,
    discard_max_bytes: u64,
    model: Option<&'static str>,
    vendor: Option<&'static str>,
    queue_depth: Option<u64>,
}

impl DiskSpec {
    /// A SATA hard disk behind AHCI.
    fn sata_hdd() -> DiskSpec {
        DiskSpec {
            rotational: true,
            scheduler: "[mq-deadline] kyber bfq none",
            lbs: 512,
            pbs: 4096,
            min_io: 4096,
            opt_io: 0,
            nr_requests: 64,
            read_ahead_kb: 128,
            write_cache: "write back",
            fua: false,
            max_sectors_kb: 1280,
            discard_max_bytes: 0,
            model: Some("ST4000NM0035-1V4"),
            vendor: Some("ATA"),
            queue_depth: Some(32),
        }
    }
    /// A SATA SSD.
    fn sata_ssd() -> DiskSpec {
        DiskSpec {
            rotational: false,
            pbs: 512,
            min_io: 512,
            discard_max_bytes: 2147450880,
            model: Some("Samsung SSD 860"),
            ..DiskSpec::sata_hdd()
        }
    }
    /// A logical drive of a hardware RAID controller (PERC/MegaRAID): one disk to Linux.
    fn raid_lun() -> DiskSpec {
        DiskSpec {
            scheduler: "[mq-deadline] kyber bfq none",
            min_io: 262144,
            opt_io: 1048576,
            write_cache: "write through",
            fua: false,
            model: Some("PERC H740P Mini"),
            vendor: Some("DELL"),
            queue_depth: Some(256),
            ..DiskSpec::sata_hdd()
        }
    }
    /// An NVMe namespace (no SCSI vendor or queue_depth).
    fn nvme() -> DiskSpec {
        DiskSpec {
            rotational: false,
            scheduler: "[none] mq-deadline",
            lbs: 512,
            pbs: 512,
            min_io: 512,
            opt_io: 0,
            nr_requests: 1023,
            read_ahead_kb: 128,
            write_cache: "write back",
            fua: true,
            max_sectors_kb: 128,
            discard_max_bytes: 2199023255040,
            model: Some("SAMSUNG MZQL23T8HCLS-00A07"),
            vendor: None,
            queue_depth: None,
        }
    }
    /// A virtio-blk disk (a QEMU/KVM guest): reported rotational, no model.
    fn virtio() -> DiskSpec {
        DiskSpec {
            rotational: true,
            scheduler: "[none] mq-deadline kyber bfq",
            lbs: 512,
            pbs: 512,
            min_io: 512,
            opt_io: 0,
            nr_requests: 256,
            read_ahead_kb: 128,
            write_cache: "write back",
            fua: false,
            max_sectors_kb: 1280,
            discard_max_bytes: 0,
            model: None,
            vendor: None,
            queue_depth: None,
        }
    }
}

/// A fixture tree `base/{proc,sys,etc}` that a test fills with devices, mounts and settings.
struct Fx {
    dir: tempfile::TempDir,
    next_mount_id: u32,
}

impl Fx {
    /// A bare-metal box: hostname, kernel, os-release, uptime, a 4-thread CPU without the
    /// hypervisor flag, a Dell DMI, 64 GiB of memory (all available) and no swap, the kernel's
    /// default vm sysctls, PID 1 in init.scope, and /proc and /sys mounted.
    fn new() -> Fx {
        let mut fx = Fx {
            dir: tempfile::tempdir().expect("tempdir"),
            next_mount_id: 22,
        };
        fx.write("proc/sys/kernel/hostname", "db1")
            .write("proc/sys/kernel/osrelease", "6.8.0-45-generic")
            .write("proc/uptime", "86400.25 345000.10")
            .write(
                "etc/os-release",
                "NAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu",
            )
            .write("proc/1/cgroup", "0::/init.scope")
            .cpuinfo(false)
            .dmi("Dell Inc.", "PowerEdge R740")
            .meminfo(64 * GIB_KIB, 64 * GIB_KIB, 0, 0)
            .sysctl("vm.dirty_ratio", "20")
            .sysctl("vm.dirty_background_ratio", "10")
            .sysctl("vm.dirty_bytes", "0")
            .sysctl("vm.dirty_background_bytes", "0")
            .sysctl("vm.dirty_expire_centisecs", "3000")
            .sysctl("vm.dirty_writeback_centisecs", "500")
            .sysctl("vm.swappiness", "60")
            .sysctl("net.core.rmem_max", "212992")
            .sysctl("net.core.wmem_max", "212992")
            .sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456")
            .sysctl("net.ipv4.tcp_wmem", "4096\t16384\t4194304")
            .write(
                "sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never",
            )
            .write(
                "sys/kernel/mm/transparent_hugepage/defrag",
                "always defer defer+madvise [madvise] never",
            );
        fs_mkdir(&fx.base().join("sys/devices/system/node/node0"));
        fx.mount_raw(
            "0:21",
            "/proc",
            "rw,nosuid,nodev,noexec,relatime",
            "proc",
            "proc",
            "rw",
        );
        fx.mount_raw(
            "0:22",
            "/sys",
            "rw,nosuid,nodev,noexec,relatime",
            "sysfs",
            "sysfs",
            "rw",
        );
        fx
    }

    fn base(&self) -> &Path {
        self.dir.path()
    }

    fn roots(&self) -> Roots {
        Roots::fixture(self.base())
    }

    /// Writes `content` and a newline to `base/rel`, creating directories.
    fn write(&mut self, rel: &str, content: &str) -> &mut Self {
        let p = self.base().join(rel);
        fs_mkdir(p.parent().unwrap());
        std::fs::write(&p, format!("{content}\n")).unwrap();
        self
    }

    fn append(&mut self, rel: &str, line: &str) -> &mut Self {
        use std::io::Write;
        let p = self.base().join(rel);
        fs_mkdir(p.parent().unwrap());
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .unwrap();
        writeln!(f, "{line}").unwrap();
        self
    }

    /// `sys/dev/block/MAJ:MIN` -> `../../block/<target>` (target: "sda" or "sda/sda1").
    fn dev_link(&mut self, majmin: &str, target: &str) -> &mut Self {
        let dir = self.base().join("sys/dev/block");
        fs_mkdir(&dir);
        let link = dir.join(majmin);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(format!("../../block/{target}"), link).unwrap();
        self
    }

    fn queue(&mut self, dev: &str, s: &DiskSpec) -> &mut Self {
        let q = format!("sys/block/{dev}/queue");
        self.write(
            &format!("{q}/rotational"),
            if s.rotational { "1" } else { "0" },
        )
        .write(&format!("{q}/logical_block_size"), &s.lbs.to_string())
        .write(&format!("{q}/physical_block_size"), &s.pbs.to_string())
        .write(&format!("{q}/minimum_io_size"), &s.min_io.to_string())
        .write(&format!("{q}/optimal_io_size"), &s.opt_io.to_string())
        .write(&format!("{q}/scheduler"), s.scheduler)
        .write(&format!("{q}/nr_requests"), &s.nr_requests.to_string())
        .write(&format!("{q}/read_ahead_kb"), &s.read_ahead_kb.to_string())
        .write(&format!("{q}/write_cache"), s.write_cache)
        .write(&format!("{q}/fua"), if s.fua { "1" } else { "0" })
        .write(
            &format!("{q}/max_sectors_kb"),
            &s.max_sectors_kb.to_string(),
        )
        .write(
            &format!("{q}/discard_max_bytes"),
            &s.discard_max_bytes.to_string(),
        )
    }

    /// A whole disk `sys/block/NAME` of `size_sectors` 512-byte sectors.
    fn disk(&mut self, name: &str, majmin: &str, size_sectors: u64, s: &DiskSpec) -> &mut Self {
        let d = format!("sys/block/{name}");
        self.write(&format!("{d}/size"), &size_sectors.to_string())
            .write(&format!("{d}/dev"), majmin)
            .queue(name, s);
        fs_mkdir(&self.base().join(&d).join("device"));
        fs_mkdir(&self.base().join(&d).join("slaves"));
        fs_mkdir(&self.base().join(&d).join("holders"));
        if let Some(m) = s.model {
            self.write(&format!("{d}/device/model"), m);
        }
        if let Some(v) = s.vendor {
            self.write(&format!("{d}/device/vendor"), v);
        }
        if let Some(qd) = s.queue_depth {
            self.write(&format!("{d}/device/queue_depth"), &qd.to_string());
        }
        self.dev_link(majmin, name)
    }

    /// `n` blk-mq hardware queues for `dev` (sys/block/DEV/mq/0 ...).
    fn mq(&mut self, dev: &str, n: u32) -> &mut Self {
        for i in 0..n {
            self.write(&format!("sys/block/{dev}/mq/{i}/nr_tags"), "64");
        }
        self
    }

    /// Changes one queue attribute of a device: `set_queue("sda", "read_ahead_kb", "4096")`.
    fn set_queue(&mut self, dev: &str, attr: &str, value: &str) -> &mut Self {
        self.write(&format!("sys/block/{dev}/queue/{attr}"), value)
    }

    /// Partition `part` (number taken from its name) of `disk`: `start` and `size` in sectors.
    fn partition(
        &mut self,
        disk: &str,
        part: &str,
        majmin: &str,
        start: u64,
        size: u64,
    ) -> &mut Self {
        let n: String = part
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let d = format!("sys/block/{disk}/{part}");
        self.write(&format!("{d}/partition"), &n)
            .write(&format!("{d}/start"), &start.to_string())
            .write(&format!("{d}/size"), &size.to_string())
            .write(&format!("{d}/alignment_offset"), "0")
            .write(&format!("{d}/dev"), majmin);
        fs_mkdir(&self.base().join(&d).join("holders"));
        self.dev_link(majmin, &format!("{disk}/{part}"))
    }

    /// Where a device's sysfs directory is: `sys/block/NAME` for disks, md and dm,
    /// `sys/block/DISK/NAME` for a partition.
    fn sys_dir(&self, name: &str) -> PathBuf {
        let block = self.base().join("sys/block");
        let whole = block.join(name);
        if whole.exists() {
            return whole;
        }
        for e in std::fs::read_dir(&block).unwrap().flatten() {
            let p = e.path().join(name);
            if p.join("partition").exists() {
                return p;
            }
        }
        panic!("fixture: no device {name}");
    }

    /// `holder` is built on each of `slaves`: `NAME/slaves/S` and `S/holders/NAME` (on the
    /// partition's own directory when S is a partition, as the kernel does).
    fn link_slaves(&mut self, holder: &str, slaves: &[&str]) {
        for s in slaves {
            self.write(&format!("sys/block/{holder}/slaves/{s}"), "");
            let h = self.sys_dir(s).join("holders");
            fs_mkdir(&h);
            std::fs::write(h.join(holder), "").unwrap();
        }
    }

    /// Software RAID `md/NAME` of `level` over `members` (partitions or disks); queue limits
    /// stacked as md does: minimum_io_size = chunk, optimal_io_size = chunk x data disks.
    fn md(
        &mut self,
        name: &str,
        majmin: &str,
        level: &str,
        chunk_bytes: u64,
        members: &[&str],
        size_sectors: u64,
    ) -> &mut Self {
        let n = members.len() as u64;
        let data = match level {
            "raid0" => n,
            "raid10" => n / 2,
            "raid5" => n - 1,
            "raid6" => n - 2,
            _ => 1,
        };
        let (min_io, opt_io) = if level == "raid1" {
            (512, 0)
        } else {
            (chunk_bytes, chunk_bytes * data)
        };
        let d = format!("sys/block/{name}");
        self.write(&format!("{d}/size"), &size_sectors.to_string())
            .write(&format!("{d}/dev"), majmin)
            .write(&format!("{d}/md/level"), level)
            .write(&format!("{d}/md/chunk_size"), &chunk_bytes.to_string())
            .write(&format!("{d}/md/raid_disks"), &n.to_string())
            .write(&format!("{d}/md/array_state"), "clean")
            .queue(
                name,
                &DiskSpec {
                    scheduler: "none",
                    pbs: 4096,
                    min_io,
                    opt_io,
                    nr_requests: 128,
                    // the kernel's default for a striped device: 2 x optimal_io_size
                    // (disk_update_readahead / blk_apply_bdi_limits)
                    read_ahead_kb: (2 * opt_io / 1024).max(128),
                    write_cache: "write back",
                    ..DiskSpec::sata_hdd()
                },
            );
        fs_mkdir(&self.base().join(&d).join("holders"));
        self.link_slaves(name, members);
        self.dev_link(majmin, name)
    }

    /// Device mapper `dm-N` named `dm_name` with `uuid` ("LVM-..." for LVM) over `slaves`; the
    /// queue limits are stacked from the first slave, as dm does.
    fn dm(
        &mut self,
        name: &str,
        majmin: &str,
        dm_name: &str,
        uuid: &str,
        slaves: &[&str],
        size_sectors: u64,
    ) -> &mut Self {
        let q = self.sys_dir(slaves[0]).join("queue");
        let get = |f: &str| -> u64 {
            std::fs::read_to_string(q.join(f))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0)
        };
        let spec = DiskSpec {
            rotational: get("rotational") == 1,
            scheduler: "none",
            lbs: get("logical_block_size").max(512),
            pbs: get("physical_block_size").max(512),
            min_io: get("minimum_io_size").max(512),
            opt_io: get("optimal_io_size"),
            nr_requests: 128,
            // lvm2's "auto" read-ahead takes the PV's; the kernel's default is 2 x io_opt
            read_ahead_kb: get("read_ahead_kb")
                .max(2 * get("optimal_io_size") / 1024)
                .max(128),
            ..DiskSpec::sata_hdd()
        };
        let d = format!("sys/block/{name}");
        self.write(&format!("{d}/size"), &size_sectors.to_string())
            .write(&format!("{d}/dev"), majmin)
            .write(&format!("{d}/dm/name"), dm_name)
            .write(&format!("{d}/dm/uuid"), uuid)
            .write(&format!("{d}/dm/suspended"), "0")
            .queue(name, &spec);
        fs_mkdir(&self.base().join(&d).join("holders"));
        self.link_slaves(name, slaves);
        self.dev_link(majmin, name)
    }

    /// A loop device over `backing`.
    fn loop_dev(
        &mut self,
        name: &str,
        majmin: &str,
        size_sectors: u64,
        backing: &str,
    ) -> &mut Self {
        let d = format!("sys/block/{name}");
        self.write(&format!("{d}/size"), &size_sectors.to_string())
            .write(&format!("{d}/dev"), majmin)
            .write(&format!("{d}/loop/backing_file"), backing)
            .queue(
                name,
                &DiskSpec {
                    scheduler: "[none] mq-deadline",
                    ..DiskSpec::virtio()
                },
            );
        self.dev_link(majmin, name)
    }

    fn mount_raw(
        &mut self,
        majmin: &str,
        mountpoint: &str,
        opts: &str,
        fstype: &str,
        source: &str,
        super_opts: &str,
    ) -> &mut Self {
        let id = self.next_mount_id;
        self.next_mount_id += 1;
        let parent = if mountpoint == "/" { 1 } else { 27 };
        let line = format!(
            "{id} {parent} {majmin} / {} {opts} shared:{id} - {fstype} {source} {super_opts}",
            mountpoint.replace(' ', "\\040")
        );
        self.append("proc/self/mountinfo", &line)
    }

    /// A filesystem on device `majmin` at `mountpoint`: `opts` are the per-mount options,
    /// `super_opts` the superblock ones, as in /proc/self/mountinfo. The source is
    /// /dev/mapper/NAME for dm devices, /dev/NAME otherwise.
    fn mount(
        &mut self,
        majmin: &str,
        mountpoint: &str,
        fstype: &str,
        opts: &str,
        super_opts: &str,
    ) -> &mut Self {
        let source = std::fs::canonicalize(self.base().join("sys/dev/block").join(majmin))
            .ok()
            .map(|real| {
                let name = real.file_name().unwrap().to_string_lossy().into_owned();
                match std::fs::read_to_string(real.join("dm/name")) {
                    Ok(n) => format!("/dev/mapper/{}", n.trim()),
                    Err(_) => format!("/dev/{name}"),
                }
            })
            .unwrap_or_else(|| "/dev/root".into());
        self.mount_raw(majmin, mountpoint, opts, fstype, &source, super_opts)
    }

    /// /proc/meminfo with the four figures the collector reads (kB, like the kernel).
    fn meminfo(
        &mut self,
        total_kib: u64,
        available_kib: u64,
        swap_total_kib: u64,
        swap_free_kib: u64,
    ) -> &mut Self {
        let free = available_kib / 2;
        let text = format!(
            "MemTotal:       {total_kib:>8} kB\nMemFree:        {free:>8} kB\nMemAvailable:   {available_kib:>8} kB\nBuffers:          123456 kB\nCached:         {free:>8} kB\nSwapCached:            0 kB\nSwapTotal:      {swap_total_kib:>8} kB\nSwapFree:       {swap_free_kib:>8} kB\nDirty:               128 kB"
        );
        self.write("proc/meminfo", &text)
    }

    /// `sysctl("vm.dirty_ratio", "20")` -> proc/sys/vm/dirty_ratio.
    fn sysctl(&mut self, key: &str, value: &str) -> &mut Self {
        self.write(&format!("proc/sys/{}", key.replace('.', "/")), value)
    }

    /// /proc/cpuinfo: one socket, 2 cores, 4 threads; the `hypervisor` flag when asked.
    fn cpuinfo(&mut self, hypervisor: bool) -> &mut Self {
        let flags = format!(
            "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand{} lahf_lm abm avx2",
            if hypervisor { " hypervisor" } else { "" }
        );
        let mut s = String::new();
        for i in 0..4 {
            s.push_str(&format!(
                "processor\t: {i}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\ncpu MHz\t\t: 2100.000\ncache size\t: 28160 KB\nphysical id\t: 0\nsiblings\t: 4\ncore id\t\t: {}\ncpu cores\t: 2\nflags\t\t: {flags}\n\n",
                i / 2
            ));
        }
        self.write("proc/cpuinfo", &s)
    }

    fn dmi(&mut self, vendor: &str, product: &str) -> &mut Self {
        self.write("sys/class/dmi/id/sys_vendor", vendor)
            .write("sys/class/dmi/id/product_name", product)
    }

    /// A Broadcom/LSI MegaRAID SAS controller on the PCI bus (class 0x010400).
    fn pci_raid(&mut self) -> &mut Self {
        let d = "sys/bus/pci/devices/0000:03:00.0";
        self.write(&format!("{d}/class"), "0x010400")
            .write(&format!("{d}/vendor"), "0x1000")
            .write(&format!("{d}/device"), "0x0016")
    }

    /// An ordinary AHCI SATA controller (class 0x010601), which is no RAID controller.
    fn pci_ahci(&mut self) -> &mut Self {
        let d = "sys/bus/pci/devices/0000:00:17.0";
        self.write(&format!("{d}/class"), "0x010601")
            .write(&format!("{d}/vendor"), "0x8086")
            .write(&format!("{d}/device"), "0xa352")
    }

    /// The whole report, with the stack under `path` on device `majmin` (stat() of a fixture
    /// path cannot give fixture device numbers, so they are passed in).
    fn report(&self, path: &str, majmin: &str) -> EnvReport {
        let r = self.roots();
        let mut e = sysenv::collect(&r, None);
        e.path = sysenv::path_stack_for(&r, Path::new(path), majmin, &sysenv::mounts(&r));
        assert!(e.path.is_some(), "no mount for {path} ({majmin})");
        e
    }

    /// The report without a path (whole-system view).
    fn report_system(&self) -> EnvReport {
        sysenv::collect(&self.roots(), None)
    }
}

fn fs_mkdir(p: &Path) {
    std::fs::create_dir_all(p).unwrap();
}

fn ids(f: &[Finding]) -> Vec<&str> {
    f.iter().map(|x| x.id.as_str()).collect()
}

fn finding<'a>(f: &'a [Finding], id: &str) -> Option<&'a Finding> {
    f.iter().find(|x| x.id == id)
}

/// Asserts exactly one finding `id` with `severity` about `subject`; returns it.
#[track_caller]
fn assert_finding<'a>(
    f: &'a [Finding],
    id: &str,
    severity: Severity,
    subject: &str,
) -> &'a Finding {
    let v: Vec<&Finding> = f.iter().filter(|x| x.id == id).collect();
    assert_eq!(v.len(), 1, "expected one {id}, got {:?}", ids(f));
    assert_eq!(v[0].severity, severity, "{id}: {v:?}");
    assert_eq!(v[0].subject, subject, "{id}: {v:?}");
    v[0]
}

#[track_caller]
fn assert_no_finding(f: &[Finding], id: &str) {
    assert!(finding(f, id).is_none(), "unexpected {id}: {f:#?}");
}

fn layers(e: &EnvReport) -> Vec<(String, String, u32)> {
    e.path
        .as_ref()
        .unwrap()
        .stack
        .iter()
        .map(|l| (l.kind.clone(), l.name.clone(), l.depth))
        .collect()
}

fn layer(kind: &str, name: &str, depth: u32) -> (String, String, u32) {
    (kind.into(), name.into(), depth)
}

// ---------------------------------------------------------------------------------------------
// Canned trees
// ---------------------------------------------------------------------------------------------

const LVM_UUID: &str = "LVM-3fZ1vQkq8R2yXcT0pN5mW7hJ4bL6dS9aE1uG2oI3kY5rV8tC0xB7nM4qP6wZ2sD9";

/// (a) RAID10 md0 (512 KiB chunk) over sda1..sdd1 (each at sector 2048), LVM vg0-mysql (dm-0) on
/// md0, xfs on dm-0 at /var/lib/mysql; the root filesystem on a separate SSD partition.
fn raid10_lvm(xfs_super: &str) -> Fx {
    let mut fx = Fx::new();
    let disk_sect = 7_814_037_168; // 4 TB
    let part_sect = disk_sect - 2048 - 2048;
    for (i, d) in ["sda", "sdb", "sdc", "sdd"].iter().enumerate() {
        let minor = i * 16;
        fx.disk(d, &format!("8:{minor}"), disk_sect, &DiskSpec::sata_hdd())
            .partition(
                d,
                &format!("{d}1"),
                &format!("8:{}", minor + 1),
                2048,
                part_sect,
            );
    }
    let md_sect = part_sect * 2 - 2 * 262144;
    fx.md(
        "md0",
        "9:0",
        "raid10",
        524288,
        &["sda1", "sdb1", "sdc1", "sdd1"],
        md_sect,
    )
    .dm(
        "dm-0",
        "253:0",
        "vg0-mysql",
        LVM_UUID,
        &["md0"],
        6 * TIB_SECT / 2,
    )
    .disk(
        "sde",
        "8:64",
        480 * 1_000_000_000 / 512,
        &DiskSpec::sata_ssd(),
    )
    .partition(
        "sde",
        "sde1",
        "8:65",
        2048,
        480 * 1_000_000_000 / 512 - 4096,
    )
    .mount("8:65", "/", "ext4", "rw,relatime", "rw,errors=remount-ro")
    .mount("253:0", "/var/lib/mysql", "xfs", "rw,noatime", xfs_super);
    fx
}

const XFS_RAID10_OK: &str =
    "rw,attr2,inode64,logbufs=8,logbsize=256k,sunit=1024,swidth=2048,noquota";

/// (b) NVMe nvme0n1, ext4 on nvme0n1p1 at /data.
fn nvme_ext4(mount_opts: &str, scheduler: &'static str) -> Fx {
    let mut fx = Fx::new();
    let sect = 3_750_748_848u64; // 1.92 TB
    fx.disk(
        "nvme0n1",
        "259:0",
        sect,
        &DiskSpec {
            scheduler,
            ..DiskSpec::nvme()
        },
    )
    .partition("nvme0n1", "nvme0n1p1", "259:1", 2048, sect - 4096)
    .mount("259:1", "/", "ext4", mount_opts, "rw,errors=remount-ro");
    fx
}

/// (c) A KVM guest: virtio vda with vda1 at 2048, hypervisor flag, DMI QEMU.
fn kvm_guest() -> Fx {
    let mut fx = Fx::new();
    fx.cpuinfo(true)
        .dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)")
        .write("proc/1/cgroup", "0::/init.scope")
        .disk("vda", "252:0", 100 * GIB_SECT, &DiskSpec::virtio())
        .partition("vda", "vda1", "252:1", 2048, 100 * GIB_SECT - 2048)
        .mount("252:1", "/", "ext4", "rw,relatime", "rw,discard");
    fx
}

/// (d) An old DOS-labelled disk: sdb1 at sector 63.
fn dos_disk() -> Fx {
    let mut fx = Fx::new();
    let sect = 1_953_525_168u64; // 1 TB
    fx.disk("sdb", "8:16", sect, &DiskSpec::sata_hdd())
        .partition("sdb", "sdb1", "8:17", 63, sect - 63)
        .mount("8:17", "/srv", "ext4", "rw,noatime", "rw");
    fx
}

/// The well-configured box: bare-metal NVMe with a power-loss-protected (write through)
/// cache, scheduler none, ext4 noatime, 256 MiB dirty_bytes, no swap.
fn clean_box() -> Fx {
    let mut fx = Fx::new();
    let sect = 3_750_748_848u64;
    fx.disk(
        "nvme0n1",
        "259:0",
        sect,
        &DiskSpec {
            write_cache: "write through",
            ..DiskSpec::nvme()
        },
    )
    .partition("nvme0n1", "nvme0n1p1", "259:1", 2048, sect - 4096)
    .mount("259:1", "/", "ext4", "rw,noatime", "rw,errors=remount-ro")
    .sysctl("vm.dirty_ratio", "0")
    .sysctl("vm.dirty_bytes", "268435456")
    .sysctl("vm.dirty_background_ratio", "0")
    .sysctl("vm.dirty_background_bytes", "67108864")
    .sysctl("vm.swappiness", "1")
    .meminfo(64 * GIB_KIB, 60 * GIB_KIB, 0, 0);
    fx
}

// ---------------------------------------------------------------------------------------------
// 1. What collect reports for realistic trees
// ---------------------------------------------------------------------------------------------

#[test]
fn collect_raid10_md_lvm_xfs() {
    let fx = raid10_lvm(XFS_RAID10_OK);
    let e = fx.report("/var/lib/mysql/ibdata1", "253:0");
    assert_eq!(e.schema, "iolab-env/1");
    assert_eq!(e.platform.host, "db1");
    assert_eq!(e.platform.kernel, "6.8.0-45-generic");
    assert_eq!(
        e.platform.distribution.as_deref(),
        Some("Ubuntu 24.04.1 LTS")
    );
    assert_eq!(e.platform.virtualization.verdict, "none seen");
    assert_eq!(e.platform.uptime_s, Some(86400.25));
    assert_eq!((e.cpu.sockets, e.cpu.cores, e.cpu.threads), (1, 2, 4));
    assert_eq!(e.memory.total_bytes, 64 << 30);
    assert_eq!(e.kernel.vm_dirty_ratio, Some(20));
    assert_eq!(e.kernel.thp_enabled.as_deref(), Some("madvise"));
    assert_eq!(
        e.kernel.net_ipv4_tcp_rmem.as_deref(),
        Some("4096 131072 6291456")
    );

    let names: Vec<&str> = e.block_devices.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["dm-0", "md0", "sda", "sdb", "sdc", "sdd", "sde"]);

    let sda = sysenv::find(&e, "sda").unwrap();
    assert_eq!(sda.kind, "disk");
    assert_eq!(sda.size_bytes, 7_814_037_168 * 512);
    assert_eq!(sda.rotational, Some(true));
    assert_eq!(sda.schedulers, ["mq-deadline", "kyber", "bfq", "none"]);
    assert_eq!(sda.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(
        (sda.logical_block_size, sda.physical_block_size),
        (Some(512), Some(4096))
    );
    assert_eq!(sda.model.as_deref(), Some("ST4000NM0035-1V4"));
    assert_eq!(sda.vendor.as_deref(), Some("ATA"));
    assert_eq!(sda.queue_depth, Some(32));
    assert_eq!(sda.write_cache.as_deref(), Some("write back"));
    assert_eq!(sda.fua, Some(false));
    assert!(!sda.discard);
    assert_eq!(sda.partitions.len(), 1);
    assert_eq!(sda.partitions[0].name, "sda1");
    assert_eq!(sda.partitions[0].start_sector, 2048);
    assert_eq!(sda.partitions[0].start_bytes, 1 << 20);
    assert_eq!(sda.partitions[0].alignment_offset, Some(0));
    assert!(sda.md.is_none() && sda.dm_name.is_none() && !sda.lvm);

    let md0 = sysenv::find(&e, "md0").unwrap();
    assert_eq!(md0.kind, "md");
    let md = md0.md.as_ref().unwrap();
    assert_eq!(md.level.as_deref(), Some("raid10"));
    assert_eq!(md.chunk_bytes, Some(524288));
    assert_eq!(md.raid_disks, Some(4));
    assert_eq!(md.members, ["sda1", "sdb1", "sdc1", "sdd1"]);
    assert_eq!(md0.slaves, ["sda1", "sdb1", "sdc1", "sdd1"]);
    assert_eq!(md0.holders, ["dm-0"]);
    assert_eq!(
        (md0.minimum_io_size, md0.optimal_io_size),
        (Some(524288), Some(1048576))
    );
    assert_eq!(md0.scheduler.as_deref(), Some("none"));

    let dm0 = sysenv::find(&e, "dm-0").unwrap();
    assert_eq!(dm0.kind, "dm");
    assert_eq!(dm0.dm_name.as_deref(), Some("vg0-mysql"));
    assert!(dm0.lvm);
    assert_eq!(dm0.slaves, ["md0"]);
    assert!(dm0.md.is_none());

    let m = e
        .mounts
        .iter()
        .find(|m| m.mountpoint == "/var/lib/mysql")
        .unwrap();
    assert_eq!(m.source, "/dev/mapper/vg0-mysql");
    assert_eq!(m.fstype, "xfs");
    assert_eq!(m.dev, "253:0");
    assert!(m.options.iter().any(|o| o == "noatime"));
    assert!(m.options.iter().any(|o| o == "sunit=1024"));
    // proc and sysfs are no block-device mounts
    assert_eq!(e.mounts.len(), 2, "{:?}", e.mounts);

    let ps = e.path.as_ref().unwrap();
    assert_eq!(ps.path, "/var/lib/mysql/ibdata1");
    assert_eq!(ps.mountpoint, "/var/lib/mysql");
    assert_eq!(ps.fs.fstype, "xfs");
    assert_eq!(ps.fs.xfs_sunit_bytes, Some(524288));
    assert_eq!(ps.fs.xfs_swidth_bytes, Some(1048576));
    assert_eq!(ps.fs.xfs_inode_mode.as_deref(), Some("inode64"));
    assert!(ps.fs.barriers);
    assert_eq!(
        ps.fs.total_bytes,
        Some(3 << 40),
        "without statvfs the size of dm-0"
    );
    assert_eq!(
        layers(&e),
        [
            layer("lvm", "dm-0", 0),
            layer("md", "md0", 1),
            layer("partition", "sda1", 2),
            layer("disk", "sda", 3),
            layer("partition", "sdb1", 2),
            layer("disk", "sdb", 3),
            layer("partition", "sdc1", 2),
            layer("disk", "sdc", 3),
            layer("partition", "sdd1", 2),
            layer("disk", "sdd", 3),
        ]
    );
    assert_eq!(ps.stack[0].detail, "vg0-mysql (LVM)");
    assert_eq!(ps.stack[1].detail, "raid10 chunk 524288 bytes, 4 disks");
    assert_eq!(ps.physical_disks, ["sda", "sdb", "sdc", "sdd"]);

    // well set up apart from the kernel defaults: the dirty_ratio and the HDD caches
    let f = check::check(&e);
    assert_finding(&f, "dirty_limit_large", Severity::Warn, "system");
    let caches: Vec<&str> = f
        .iter()
        .filter(|x| x.id == "volatile_write_cache")
        .map(|x| x.subject.as_str())
        .collect();
    assert_eq!(caches, ["sda", "sdb", "sdc", "sdd"]);
    for id in [
        "partition_misaligned_stripe",
        "partition_misaligned",
        "fs_stripe_mismatch",
        "xfs_inode32_large",
        "volatile_cache_no_barriers",
        "atime_updates",
        "scheduler_reordering",
        "virtualized",
        "swap_eager",
    ] {
        assert_no_finding(&f, id);
    }
    // (read_ahead_large fires on md0 and dm-0 at the kernel's own 2048 KiB: see
    // kernel_default_read_ahead_of_md_is_not_flagged)

    // the text report shows the stack
    let text = iolab::output::env::render(&e);
    assert!(
        text.contains("md0 md RAID raid10: chunk 524288 bytes, 4 disks"),
        "{text}"
    );
    assert!(
        text.contains("dm-0 device-mapper vg0-mysql (LVM) on md0"),
        "{text}"
    );
    assert!(
        text.contains("physical disks: sda, sdb, sdc, sdd"),
        "{text}"
    );
}

#[test]
fn collect_nvme_ext4() {
    let fx = nvme_ext4("rw,noatime", "[none] mq-deadline");
    let e = fx.report("/", "259:1");
    let nv = sysenv::find(&e, "nvme0n1").unwrap();
    assert_eq!(nv.kind, "nvme");
    assert_eq!(nv.size_bytes, 3_750_748_848 * 512);
    assert_eq!(nv.rotational, Some(false));
    assert_eq!(nv.schedulers, ["none", "mq-deadline"]);
    assert_eq!(nv.scheduler.as_deref(), Some("none"));
    assert_eq!(
        (nv.logical_block_size, nv.physical_block_size),
        (Some(512), Some(512))
    );
    assert_eq!(nv.nr_requests, Some(1023));
    assert_eq!(nv.fua, Some(true));
    assert!(nv.discard);
    assert_eq!(nv.vendor, None);
    assert_eq!(nv.queue_depth, None);
    assert_eq!(nv.model.as_deref(), Some("SAMSUNG MZQL23T8HCLS-00A07"));
    assert_eq!(nv.partitions.len(), 1);
    assert_eq!(nv.partitions[0].name, "nvme0n1p1");
    assert_eq!(nv.partitions[0].start_sector, 2048);
    assert_eq!(nv.partitions[0].size_bytes, (3_750_748_848 - 4096) * 512);
    // partitions are not block devices of their own
    assert!(sysenv::find(&e, "nvme0n1p1").is_none());
    assert_eq!(sysenv::block_device(&fx.roots(), "nvme0n1p1"), None);

    let ps = e.path.as_ref().unwrap();
    assert_eq!(ps.mountpoint, "/");
    assert_eq!(ps.fs.fstype, "ext4");
    assert_eq!(ps.fs.xfs_inode_mode, None);
    assert!(ps.fs.barriers);
    assert_eq!(
        layers(&e),
        [
            layer("partition", "nvme0n1p1", 0),
            layer("nvme", "nvme0n1", 1)
        ]
    );
    assert_eq!(
        ps.stack[0].detail,
        format!(
            "start sector 2048 (1048576 bytes), {} bytes",
            (3_750_748_848u64 - 4096) * 512
        )
    );
    assert_eq!(ps.physical_disks, ["nvme0n1"]);
    assert_eq!(e.mounts[0].source, "/dev/nvme0n1p1");
}

#[test]
fn collect_virtio_kvm_guest() {
    let fx = kvm_guest();
    let e = fx.report("/home", "252:1");
    let v = &e.platform.virtualization;
    assert!(v.hypervisor_flag);
    assert_eq!(v.dmi_vendor.as_deref(), Some("QEMU"));
    assert_eq!(
        v.dmi_product.as_deref(),
        Some("Standard PC (Q35 + ICH9, 2009)")
    );
    assert_eq!(v.container, None);
    assert_eq!(v.verdict, "kvm/qemu");
    let vda = sysenv::find(&e, "vda").unwrap();
    assert_eq!(vda.kind, "virtio");
    assert_eq!(vda.model, None);
    assert_eq!(vda.scheduler.as_deref(), Some("none"));
    assert_eq!(vda.schedulers, ["none", "mq-deadline", "kyber", "bfq"]);
    assert_eq!(vda.size_bytes, 100 << 30);
    assert_eq!(
        layers(&e),
        [layer("partition", "vda1", 0), layer("virtio", "vda", 1)]
    );
    assert_eq!(e.path.as_ref().unwrap().physical_disks, ["vda"]);
    assert!(iolab::output::env::render(&e).contains("kvm/qemu (hypervisor flag: yes, DMI: QEMU"));
}

#[test]
fn collect_dos_partition_at_63() {
    let fx = dos_disk();
    let e = fx.report("/srv/db", "8:17");
    let sdb = sysenv::find(&e, "sdb").unwrap();
    let p = &sdb.partitions[0];
    assert_eq!(p.name, "sdb1");
    assert_eq!(p.start_sector, 63);
    assert_eq!(p.start_bytes, 63 * 512);
    assert_eq!(p.size_bytes, (1_953_525_168 - 63) * 512);
    assert_eq!(
        layers(&e),
        [layer("partition", "sdb1", 0), layer("disk", "sdb", 1)]
    );
    assert!(
        iolab::output::env::render(&e)
            .contains("sdb partition sdb1: start sector 63 (not 1 MiB aligned)")
    );
}

#[test]
fn collect_reads_mountinfo_escapes_and_loop_devices() {
    let mut fx = Fx::new();
    fx.loop_dev("loop0", "7:0", 2 * GIB_SECT, "/var/tmp/disk image.img")
        .loop_dev("loop1", "7:1", 0, "")
        .mount("7:0", "/mnt/my data", "ext4", "rw,relatime", "rw");
    let r = fx.roots();
    let m = sysenv::mounts(&r);
    let mine = m.iter().find(|m| m.dev == "7:0").unwrap();
    assert_eq!(mine.mountpoint, "/mnt/my data");
    assert_eq!(mine.source, "/dev/loop0");
    let e = fx.report("/mnt/my data/x", "7:0");
    // unused (size 0) loop devices are left out
    let names: Vec<&str> = e.block_devices.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["loop0"]);
    let l = sysenv::find(&e, "loop0").unwrap();
    assert_eq!(l.kind, "loop");
    assert_eq!(
        l.loop_backing_file.as_deref(),
        Some("/var/tmp/disk image.img")
    );
    assert_eq!(layers(&e), [layer("loop", "loop0", 0)]);
    assert!(
        e.path.as_ref().unwrap().stack[0]
            .detail
            .contains("backing file /var/tmp/disk image.img")
    );
}

/// Issue 25: /proc/self/mountinfo is read by one parser (`system::procfs`), so a mount point
/// with a space (`\040` in the file) is unescaped wherever it is shown: the env report's text,
/// and what `--device` safety says uses a device.
#[test]
fn a_mount_point_with_a_space_is_shown_unescaped_everywhere() {
    let mut fx = Fx::new();
    fx.loop_dev("loop0", "7:0", 2 * GIB_SECT, "/var/tmp/disk.img")
        .mount("7:0", "/mnt/my data", "ext4", "rw,relatime", "rw");
    let r = fx.roots();
    let text = iolab::output::env::render(&fx.report("/mnt/my data/x", "7:0"));
    assert!(text.contains("/mnt/my data"), "{text}");
    assert!(!text.contains("\\040"), "{text}");
    let t = iolab::system::blockdev::tree_by_name(&r.sys, "loop0").unwrap();
    assert_eq!(
        iolab::system::blockdev::in_use(&r, &t).as_deref(),
        Some("it is mounted at /mnt/my data")
    );
}

/// `--device` safety (docs/safety.md, section 2) on these fixtures: what uses a device is found
/// through every layer stacked on it (md over partitions, LVM on md, loop over loop, swap), and
/// named as a chain.
#[test]
fn device_in_use_is_found_through_md_lvm_loop_and_swap_stacks() {
    use iolab::system::blockdev::{in_use, tree_by_name};
    let fx = raid10_lvm(XFS_RAID10_OK);
    let r = fx.roots();
    let sda = tree_by_name(&r.sys, "sda").unwrap();
    assert_eq!(
        in_use(&r, &sda).unwrap(),
        "its partition sda1 is held by md0, which is held by dm-0, which is mounted at /var/lib/mysql"
    );
    let sdd1 = tree_by_name(&r.sys, "sdd1").unwrap();
    assert_eq!(
        in_use(&r, &sdd1).unwrap(),
        "it is held by md0, which is held by dm-0, which is mounted at /var/lib/mysql"
    );
    let sde = tree_by_name(&r.sys, "sde").unwrap();
    assert_eq!(
        in_use(&r, &sde).unwrap(),
        "its partition sde1 is mounted at /"
    );

    let mut fx = Fx::new();
    fx.disk("sdf", "8:80", 2 * GIB_SECT, &DiskSpec::sata_ssd())
        .disk("sdg", "8:96", 2 * GIB_SECT, &DiskSpec::sata_ssd())
        .loop_dev("loop3", "7:3", 2 * GIB_SECT, "/dev/sdf")
        .loop_dev("loop4", "7:4", 2 * GIB_SECT, "/dev/loop3")
        .mount("7:4", "/mnt/x", "ext4", "rw,relatime", "rw");
    let r = fx.roots();
    let sdf = tree_by_name(&r.sys, "sdf").unwrap();
    assert_eq!(
        in_use(&r, &sdf).unwrap(),
        "it backs /dev/loop3, which backs /dev/loop4, which is mounted at /mnt/x"
    );
    let sdg = tree_by_name(&r.sys, "sdg").unwrap();
    assert_eq!(in_use(&r, &sdg), None, "a free disk");
    fx.write(
        "proc/swaps",
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/sdg                                partition\t2097148\t\t0\t\t-2",
    );
    assert_eq!(
        in_use(&r, &sdg).unwrap(),
        "it is in use as swap (/proc/swaps)"
    );
}

// ---------------------------------------------------------------------------------------------
// 2. Every finding: a tree that triggers it and one that does not
// ---------------------------------------------------------------------------------------------

/// md0 raid0 over sda1..sdd1 with `chunk` bytes, partitions at `start`; xfs with the right
/// geometry on md0 at /data.
fn md_on_partitions(start: u64, chunk: u64) -> Fx {
    let mut fx = Fx::new();
    let sect = 1_953_525_168u64;
    let mut parts = Vec::new();
    for (i, d) in ["sda", "sdb", "sdc", "sdd"].iter().enumerate() {
        let p = format!("{d}1");
        fx.disk(d, &format!("8:{}", i * 16), sect, &DiskSpec::sata_hdd())
            .partition(d, &p, &format!("8:{}", i * 16 + 1), start, sect - start);
        parts.push(p);
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let su = chunk / 512;
    fx.md("md0", "9:0", "raid0", chunk, &refs, (sect - start) * 4)
        .mount(
            "9:0",
            "/data",
            "xfs",
            "rw,noatime",
            &format!("rw,attr2,inode64,sunit={su},swidth={},noquota", su * 4),
        );
    fx
}

#[test]
fn partition_misaligned_stripe_from_md_chunk() {
    // sector 63 under a 512 KiB chunk
    let e = md_on_partitions(63, 524288).report("/data", "9:0");
    let f = check::check(&e);
    for p in ["sda1", "sdb1", "sdc1", "sdd1"] {
        let x = f
            .iter()
            .find(|x| x.id == "partition_misaligned_stripe" && x.subject == p)
            .unwrap_or_else(|| panic!("no finding for {p}: {f:#?}"));
        assert_eq!(x.severity, Severity::Critical);
        assert!(
            x.evidence.contains("524288-byte RAID stripe unit"),
            "{}",
            x.evidence
        );
    }
    // the stripe finding replaces the plain 1 MiB one
    assert_no_finding(&f, "partition_misaligned");
    assert!(check::has_warnings(&f));
    // critical findings sort first
    assert_eq!(f[0].severity, Severity::Critical);

    // 1 MiB (sector 2048) is not a multiple of a 2 MiB chunk either
    let e = md_on_partitions(2048, 2 << 20).report("/data", "9:0");
    let f = check::check(&e);
    assert_eq!(
        ids(&f)
            .iter()
            .filter(|i| **i == "partition_misaligned_stripe")
            .count(),
        4,
        "{f:#?}"
    );
    assert_no_finding(&f, "partition_misaligned");
}

#[test]
fn partition_misaligned_stripe_from_device_io_hints() {
    // a hardware RAID logical drive reporting a 256 KiB stripe unit / 1 MiB width
    let mk = |start: u64| {
        let mut fx = Fx::new();
        let sect = 4 * TIB_SECT;
        fx.pci_raid()
            .disk("sda", "8:0", sect, &DiskSpec::raid_lun())
            .partition("sda", "sda1", "8:1", start, sect - start - 2048)
            .mount(
                "8:1",
                "/data",
                "xfs",
                "rw,noatime",
                "rw,inode64,sunit=512,swidth=2048",
            );
        fx
    };
    let f = check::check(&mk(63).report("/data", "8:1"));
    let x = assert_finding(
        &f,
        "partition_misaligned_stripe",
        Severity::Critical,
        "sda1",
    );
    assert!(x.evidence.contains("262144-byte"), "{}", x.evidence);
    let f = check::check(&mk(2048).report("/data", "8:1"));
    assert_no_finding(&f, "partition_misaligned_stripe");
    assert_no_finding(&f, "partition_misaligned");
    assert_no_finding(&f, "fs_stripe_mismatch");
}

#[test]
fn partition_aligned_to_stripe_is_fine() {
    let e = md_on_partitions(2048, 524288).report("/data", "9:0");
    let f = check::check(&e);
    assert_no_finding(&f, "partition_misaligned_stripe");
    assert_no_finding(&f, "partition_misaligned");
    assert_no_finding(&f, "fs_stripe_mismatch");
}

#[test]
fn partition_misaligned_at_sector_63() {
    let f = check::check(&dos_disk().report("/srv/db", "8:17"));
    let x = assert_finding(&f, "partition_misaligned", Severity::Warn, "sdb1");
    assert!(
        x.evidence.contains("sector 63 = 32256 bytes"),
        "{}",
        x.evidence
    );
    assert_no_finding(&f, "partition_misaligned_stripe");
    // without a path every partition is checked
    let f = check::check(&dos_disk().report_system());
    assert_finding(&f, "partition_misaligned", Severity::Warn, "sdb1");
}

#[test]
fn partition_at_2048_is_aligned() {
    let f = check::check(&nvme_ext4("rw,noatime", "[none] mq-deadline").report("/", "259:1"));
    assert_no_finding(&f, "partition_misaligned");
    assert_no_finding(&f, "partition_misaligned_stripe");
    let mut fx = dos_disk();
    fx.partition("sdb", "sdb1", "8:17", 2048, 1_953_525_168 - 2048);
    let f = check::check(&fx.report("/srv/db", "8:17"));
    assert_no_finding(&f, "partition_misaligned");
}

#[test]
fn fs_stripe_mismatch_xfs_on_md() {
    // no sunit/swidth at all (mkfs.xfs on a device that hid its geometry)
    let e = raid10_lvm("rw,attr2,inode64,logbufs=8,logbsize=256k,noquota")
        .report("/var/lib/mysql", "253:0");
    let f = check::check(&e);
    let x = assert_finding(&f, "fs_stripe_mismatch", Severity::Warn, "/var/lib/mysql");
    assert!(
        x.evidence
            .contains("xfs has stripe unit 0 / width 0 bytes; the storage has 524288 / 1048576"),
        "{}",
        x.evidence
    );
    assert!(x.fix.contains("sunit=1024,swidth=2048"), "{}", x.fix);

    // a wrong width: sunit right, swidth as if for 4 data disks
    let e = raid10_lvm("rw,attr2,inode64,sunit=1024,swidth=4096,noquota")
        .report("/var/lib/mysql", "253:0");
    assert_finding(
        &check::check(&e),
        "fs_stripe_mismatch",
        Severity::Warn,
        "/var/lib/mysql",
    );

    // xfs directly on md0: the expectation comes from md's level and chunk
    let mut fx = md_on_partitions(2048, 524288);
    fx.mount(
        "9:0",
        "/data2",
        "xfs",
        "rw,noatime",
        "rw,inode64,sunit=128,swidth=512",
    );
    let f = check::check(&fx.report("/data2", "9:0"));
    let x = assert_finding(&f, "fs_stripe_mismatch", Severity::Warn, "/data2");
    assert!(
        x.evidence
            .contains("md0 raid0, chunk 524288 bytes x 4 data disks"),
        "{}",
        x.evidence
    );
}

#[test]
fn fs_stripe_matching_is_fine() {
    let e = raid10_lvm(XFS_RAID10_OK).report("/var/lib/mysql", "253:0");
    assert_no_finding(&check::check(&e), "fs_stripe_mismatch");
    // no stripe below (plain NVMe): nothing to compare
    let mut fx = nvme_ext4("rw,noatime", "[none] mq-deadline");
    fx.mount("259:1", "/x", "xfs", "rw,noatime", "rw,inode64");
    assert_no_finding(
        &check::check(&fx.report("/x", "259:1")),
        "fs_stripe_mismatch",
    );
    // raid1 has no stripe
    let mut fx = Fx::new();
    fx.disk("sda", "8:0", GIB_SECT * 100, &DiskSpec::sata_ssd())
        .disk("sdb", "8:16", GIB_SECT * 100, &DiskSpec::sata_ssd())
        .md("md1", "9:1", "raid1", 0, &["sda", "sdb"], GIB_SECT * 100)
        .mount("9:1", "/", "xfs", "rw,noatime", "rw,inode64");
    let e = fx.report("/", "9:1");
    assert_eq!(
        layers(&e),
        [
            layer("md", "md1", 0),
            layer("disk", "sda", 1),
            layer("disk", "sdb", 1)
        ]
    );
    assert_eq!(sysenv::find(&e, "sda").unwrap().holders, ["md1"]);
    assert_no_finding(&check::check(&e), "fs_stripe_mismatch");
}

/// BUG: ext4's stride is only known from `tune2fs -l` (tools, root); the `stripe=` mount option
/// gives the width. When the width is right but the stride unknown, check compares stride 0
/// with the chunk and reports a mismatch.
#[test]

fn fs_stripe_ext4_stripe_option_matching_is_fine() {
    // md0 raid0 4 x 256 KiB: stripe width 1 MiB = 256 4 KiB blocks
    let mut fx = md_on_partitions(2048, 262144);
    fx.mount("9:0", "/e", "ext4", "rw,noatime", "rw,stripe=256");
    let e = fx.report("/e", "9:0");
    assert_eq!(
        e.path.as_ref().unwrap().fs.ext4_stripe_width_blocks,
        Some(256)
    );
    assert_no_finding(&check::check(&e), "fs_stripe_mismatch");
}

/// BUG: the filesystem size comes only from statvfs(), which is only called when tools are on
/// (the live system), so from a fixture (and `--root`) `total_bytes` is None and the finding can
/// never fire. Fix: fall back to the size of the device the filesystem is on (the top of the
/// stack, `BlockDevice.size_bytes` or the partition's `size_bytes`).
#[test]

fn xfs_inode32_large_from_fixture() {
    let fx = raid10_lvm("rw,attr2,inode32,sunit=1024,swidth=2048,noquota");
    let e = fx.report("/var/lib/mysql", "253:0");
    assert_eq!(sysenv::find(&e, "dm-0").unwrap().size_bytes, 3 << 40);
    let f = check::check(&e);
    assert_finding(&f, "xfs_inode32_large", Severity::Warn, "/var/lib/mysql");
}

/// The check itself, given a size (as the live collector would have): fires above 1 TiB.
#[test]
fn xfs_inode32_large_given_size() {
    let fx = raid10_lvm("rw,attr2,inode32,sunit=1024,swidth=2048,noquota");
    let mut e = fx.report("/var/lib/mysql", "253:0");
    assert_eq!(
        e.path.as_ref().unwrap().fs.xfs_inode_mode.as_deref(),
        Some("inode32")
    );
    // from the fixture alone: the size of dm-0 (3 TiB) triggers it; a small one does not
    assert!(check::check(&e).iter().any(|x| x.id == "xfs_inode32_large"));
    e.path.as_mut().unwrap().fs.total_bytes = Some(1 << 39);
    assert_no_finding(&check::check(&e), "xfs_inode32_large");
    e.path.as_mut().unwrap().fs.total_bytes = Some(3 << 40);
    let f = check::check(&e);
    let x = assert_finding(&f, "xfs_inode32_large", Severity::Warn, "/var/lib/mysql");
    assert!(x.evidence.contains("inode32"), "{}", x.evidence);
    // inode64, or a small filesystem: fine
    e.path.as_mut().unwrap().fs.total_bytes = Some(500 << 30);
    assert_no_finding(&check::check(&e), "xfs_inode32_large");
    let mut e = raid10_lvm(XFS_RAID10_OK).report("/var/lib/mysql", "253:0");
    e.path.as_mut().unwrap().fs.total_bytes = Some(3 << 40);
    assert_no_finding(&check::check(&e), "xfs_inode32_large");
}

#[test]
fn volatile_cache_no_barriers() {
    // ext4 nobarrier on a SATA disk with its cache on
    let mut fx = Fx::new();
    let sect = 1_953_525_168u64;
    fx.disk("sda", "8:0", sect, &DiskSpec::sata_hdd())
        .partition("sda", "sda1", "8:1", 2048, sect - 2048)
        .mount(
            "8:1",
            "/db",
            "ext4",
            "rw,noatime",
            "rw,nobarrier,data=ordered",
        );
    let e = fx.report("/db", "8:1");
    assert!(!e.path.as_ref().unwrap().fs.barriers);
    let f = check::check(&e);
    let x = assert_finding(&f, "volatile_cache_no_barriers", Severity::Critical, "/db");
    assert!(
        x.evidence.contains("sda has a volatile write cache"),
        "{}",
        x.evidence
    );
    // the info-level finding is subsumed
    assert_no_finding(&f, "volatile_write_cache");

    // barrier=0 counts too
    fx.mount("8:1", "/db2", "ext4", "rw,noatime", "rw,barrier=0");
    assert_finding(
        &check::check(&fx.report("/db2", "8:1")),
        "volatile_cache_no_barriers",
        Severity::Critical,
        "/db2",
    );

    // nobarrier with a write-through cache (BBU controller): not this finding
    fx.set_queue("sda", "write_cache", "write through");
    let f = check::check(&fx.report("/db", "8:1"));
    assert_no_finding(&f, "volatile_cache_no_barriers");
    assert_no_finding(&f, "volatile_write_cache");
}

#[test]
fn barriers_on_with_volatile_cache_is_not_critical() {
    let fx = dos_disk(); // ext4 with barriers, sdb write back
    let f = check::check(&fx.report("/srv/db", "8:17"));
    assert_no_finding(&f, "volatile_cache_no_barriers");
}

#[test]
fn atime_updates() {
    // strictatime: the kernel prints neither noatime nor relatime
    let f = check::check(&nvme_ext4("rw", "[none] mq-deadline").report("/", "259:1"));
    let x = assert_finding(&f, "atime_updates", Severity::Warn, "/");
    assert!(x.evidence.contains("with atime"), "{}", x.evidence);
    // spelled out
    let f = check::check(&nvme_ext4("rw,strictatime", "[none] mq-deadline").report("/", "259:1"));
    let x = assert_finding(&f, "atime_updates", Severity::Warn, "/");
    assert!(x.evidence.contains("strictatime"), "{}", x.evidence);
}

#[test]
fn noatime_relatime_lazytime_are_fine() {
    for opts in ["rw,noatime", "rw,relatime", "rw,nodiratime,relatime"] {
        let f = check::check(&nvme_ext4(opts, "[none] mq-deadline").report("/", "259:1"));
        assert_no_finding(&f, "atime_updates");
    }
    // lazytime is a superblock option
    let mut fx = Fx::new();
    fx.disk("nvme0n1", "259:0", GIB_SECT * 100, &DiskSpec::nvme())
        .mount("259:0", "/", "ext4", "rw", "rw,lazytime");
    assert_no_finding(&check::check(&fx.report("/", "259:0")), "atime_updates");
}

#[test]
fn scheduler_reordering_bfq_on_nvme() {
    let f =
        check::check(&nvme_ext4("rw,noatime", "mq-deadline kyber [bfq] none").report("/", "259:1"));
    let x = assert_finding(&f, "scheduler_reordering", Severity::Warn, "nvme0n1");
    assert!(x.evidence.contains("bfq scheduler"), "{}", x.evidence);
    assert!(
        x.fix
            .starts_with("echo none > /sys/block/nvme0n1/queue/scheduler"),
        "{}",
        x.fix
    );
}

#[test]
fn scheduler_reordering_bfq_behind_raid_controller() {
    let mk = |raid: bool| {
        let mut fx = Fx::new();
        let sect = 4 * TIB_SECT;
        if raid {
            fx.pci_raid();
        } else {
            fx.pci_ahci();
        }
        fx.disk(
            "sda",
            "8:0",
            sect,
            &DiskSpec {
                scheduler: "mq-deadline kyber [bfq] none",
                ..DiskSpec::sata_hdd()
            },
        )
        .partition("sda", "sda1", "8:1", 2048, sect - 4096)
        .mount("8:1", "/", "ext4", "rw,noatime", "rw");
        fx
    };
    let e = mk(true).report("/", "8:1");
    assert_eq!(
        e.raid_controllers,
        ["0000:03:00.0 RAID controller 0x1000:0x0016"]
    );
    let f = check::check(&e);
    let x = assert_finding(&f, "scheduler_reordering", Severity::Warn, "sda");
    assert!(x.why.contains("hardware RAID"), "{}", x.why);
    assert!(x.fix.starts_with("echo mq-deadline"), "{}", x.fix);

    // the same rotational disk on a plain AHCI controller: bfq is a fair choice
    let e = mk(false).report("/", "8:1");
    assert!(e.raid_controllers.is_empty());
    assert_no_finding(&check::check(&e), "scheduler_reordering");
}

#[test]
fn scheduler_reordering_bfq_on_ssd_cfq_on_ssd() {
    for sched in ["mq-deadline kyber [bfq] none", "noop deadline [cfq]"] {
        let mut fx = Fx::new();
        fx.disk(
            "sda",
            "8:0",
            GIB_SECT * 480,
            &DiskSpec {
                scheduler: sched,
                ..DiskSpec::sata_ssd()
            },
        )
        .mount("8:0", "/", "ext4", "rw,noatime", "rw");
        let f = check::check(&fx.report("/", "8:0"));
        let x = assert_finding(&f, "scheduler_reordering", Severity::Warn, "sda");
        assert!(x.why.contains("non-rotational"), "{}", x.why);
    }
}

#[test]
fn scheduler_none_or_deadline_is_fine() {
    let f = check::check(&nvme_ext4("rw,noatime", "[none] mq-deadline").report("/", "259:1"));
    assert_no_finding(&f, "scheduler_reordering");
    let f = check::check(&nvme_ext4("rw,noatime", "none [mq-deadline]").report("/", "259:1"));
    assert_no_finding(&f, "scheduler_reordering");
    // mq-deadline on disks behind a RAID controller
    let mut fx = Fx::new();
    fx.pci_raid()
        .disk("sda", "8:0", TIB_SECT, &DiskSpec::raid_lun())
        .mount(
            "8:0",
            "/",
            "xfs",
            "rw,noatime",
            "rw,inode64,sunit=512,swidth=2048",
        );
    assert_no_finding(
        &check::check(&fx.report("/", "8:0")),
        "scheduler_reordering",
    );
}

#[test]
fn read_ahead_large() {
    let mut fx = nvme_ext4("rw,noatime", "[none] mq-deadline");
    fx.set_queue("nvme0n1", "read_ahead_kb", "4096");
    let f = check::check(&fx.report("/", "259:1"));
    let x = assert_finding(&f, "read_ahead_large", Severity::Warn, "nvme0n1");
    assert_eq!(x.evidence, "nvme0n1 read_ahead_kb = 4096");
    // on an LVM volume in the stack (blockdev --setra on the LV)
    let mut fx = raid10_lvm(XFS_RAID10_OK);
    fx.set_queue("md0", "read_ahead_kb", "128")
        .set_queue("dm-0", "read_ahead_kb", "8192");
    let f = check::check(&fx.report("/var/lib/mysql", "253:0"));
    assert_finding(&f, "read_ahead_large", Severity::Warn, "dm-0");
}

/// Design issue: since Linux 5.10 the kernel itself sets a striped device's read-ahead to
/// 2 x optimal_io_size (2048 KiB for a 4-disk RAID10 with 512 KiB chunks, and lvm2's "auto"
/// passes it on to the LV), so every healthy md array is flagged.
#[test]

fn kernel_default_read_ahead_of_md_is_not_flagged() {
    let e = raid10_lvm(XFS_RAID10_OK).report("/var/lib/mysql", "253:0");
    assert_eq!(sysenv::find(&e, "md0").unwrap().read_ahead_kb, Some(2048));
    assert_no_finding(&check::check(&e), "read_ahead_large");
}

#[test]
fn read_ahead_default_is_fine() {
    let f = check::check(&nvme_ext4("rw,noatime", "[none] mq-deadline").report("/", "259:1"));
    assert_no_finding(&f, "read_ahead_large");
    let mut fx = nvme_ext4("rw,noatime", "[none] mq-deadline");
    fx.set_queue("nvme0n1", "read_ahead_kb", "256");
    assert_no_finding(&check::check(&fx.report("/", "259:1")), "read_ahead_large");
    // a device outside the stack under the path is not looked at
    fx.disk(
        "sda",
        "8:0",
        GIB_SECT * 100,
        &DiskSpec {
            read_ahead_kb: 4096,
            ..DiskSpec::sata_hdd()
        },
    );
    assert_no_finding(&check::check(&fx.report("/", "259:1")), "read_ahead_large");
}

#[test]
fn volatile_write_cache() {
    let f = check::check(&nvme_ext4("rw,noatime", "[none] mq-deadline").report("/", "259:1"));
    let x = assert_finding(&f, "volatile_write_cache", Severity::Info, "nvme0n1");
    // FUA present: no remark about full flushes
    assert_eq!(
        x.evidence,
        "nvme0n1 has a volatile write cache (write back)"
    );
    let f = check::check(&dos_disk().report("/srv/db", "8:17"));
    let x = assert_finding(&f, "volatile_write_cache", Severity::Info, "sdb");
    assert!(x.evidence.contains("no FUA"), "{}", x.evidence);
}

#[test]
fn write_through_cache_is_fine() {
    let mut fx = nvme_ext4("rw,noatime", "[none] mq-deadline");
    fx.set_queue("nvme0n1", "write_cache", "write through");
    let f = check::check(&fx.report("/", "259:1"));
    assert_no_finding(&f, "volatile_write_cache");
}

#[test]
fn virtualized() {
    // hypervisor flag and QEMU DMI
    let f = check::check(&kvm_guest().report("/", "252:1"));
    let x = assert_finding(&f, "virtualized", Severity::Warn, "system");
    assert!(x.evidence.contains("kvm/qemu"), "{}", x.evidence);
    // the flag alone (a hypervisor with an unknown DMI vendor)
    let mut fx = Fx::new();
    fx.cpuinfo(true).dmi("Example Cloud", "Server");
    let e = fx.report_system();
    assert_eq!(e.platform.virtualization.verdict, "virtual machine");
    assert_finding(&check::check(&e), "virtualized", Severity::Warn, "system");
    // DMI alone
    let mut fx = Fx::new();
    fx.dmi("VMware, Inc.", "VMware7,1");
    assert_eq!(fx.report_system().platform.virtualization.verdict, "vmware");
    // a container: docker in PID 1's cgroup, or container= in its environment
    let mut fx = Fx::new();
    fx.write(
        "proc/1/cgroup",
        "12:blkio:/docker/4f3c2a1b\n0::/docker/4f3c2a1b",
    );
    let e = fx.report_system();
    assert_eq!(
        e.platform.virtualization.container.as_deref(),
        Some("docker")
    );
    assert_eq!(e.platform.virtualization.verdict, "container: docker");
    assert_finding(&check::check(&e), "virtualized", Severity::Warn, "system");
    let mut fx = Fx::new();
    std::fs::create_dir_all(fx.base().join("proc/1")).unwrap();
    std::fs::write(
        fx.base().join("proc/1/environ"),
        b"PATH=/usr/bin\0container=podman\0HOME=/\0",
    )
    .unwrap();
    fx.write("proc/1/cgroup", "0::/");
    assert_eq!(
        fx.report_system().platform.virtualization.verdict,
        "container: podman"
    );
}

#[test]
fn bare_metal_is_not_virtualized() {
    let e = Fx::new().report_system();
    let v = &e.platform.virtualization;
    assert!(!v.hypervisor_flag);
    assert_eq!(v.container, None);
    assert_eq!(v.dmi_vendor.as_deref(), Some("Dell Inc."));
    assert_eq!(v.verdict, "none seen");
    assert_no_finding(&check::check(&e), "virtualized");
}

/// BUG: DMI vendor matching by substring calls bare-metal machines virtual: Microsoft Surface
/// laptops have sys_vendor "Microsoft Corporation" (as do Hyper-V guests, whose product_name is
/// "Virtual Machine"), and Chromebooks/Pixelbooks have sys_vendor "Google".
#[test]

fn surface_laptop_is_not_virtualized() {
    let mut fx = Fx::new();
    fx.dmi("Microsoft Corporation", "Surface Pro 7");
    let e = fx.report_system();
    assert!(!e.platform.virtualization.hypervisor_flag);
    assert_eq!(e.platform.virtualization.verdict, "none seen");
}

#[test]
fn dirty_limit_large() {
    // the kernel default: 20% of 64 GiB
    let e = Fx::new().report_system();
    assert_eq!(e.memory.available_bytes, 64 << 30);
    let f = check::check(&e);
    let x = assert_finding(&f, "dirty_limit_large", Severity::Warn, "system");
    assert!(x.evidence.contains("vm.dirty_ratio 20%"), "{}", x.evidence);
    // dirty_bytes set large wins over the ratio
    let mut fx = Fx::new();
    fx.sysctl("vm.dirty_ratio", "0")
        .sysctl("vm.dirty_bytes", &(4u64 << 30).to_string());
    assert_finding(
        &check::check(&fx.report_system()),
        "dirty_limit_large",
        Severity::Warn,
        "system",
    );
}

#[test]
fn dirty_limit_small_is_fine() {
    let mut fx = Fx::new();
    fx.sysctl("vm.dirty_ratio", "0")
        .sysctl("vm.dirty_bytes", "268435456");
    let e = fx.report_system();
    assert_eq!(e.kernel.vm_dirty_bytes, Some(268435456));
    assert_no_finding(&check::check(&e), "dirty_limit_large");
    // 20% of 8 GiB is 1.6 GiB: under the 2 GiB line
    let mut fx = Fx::new();
    fx.meminfo(8 * GIB_KIB, 8 * GIB_KIB, 0, 0);
    assert_no_finding(&check::check(&fx.report_system()), "dirty_limit_large");
}

#[test]
fn swap_eager() {
    let mut fx = Fx::new();
    fx.meminfo(64 * GIB_KIB, 60 * GIB_KIB, 8 * GIB_KIB, 8 * GIB_KIB);
    let e = fx.report_system();
    assert_eq!(e.memory.swap_total_bytes, 8 << 30);
    assert_eq!(e.kernel.vm_swappiness, Some(60));
    let f = check::check(&e);
    let x = assert_finding(&f, "swap_eager", Severity::Warn, "system");
    assert!(x.evidence.contains("vm.swappiness = 60"), "{}", x.evidence);
}

#[test]
fn swap_with_low_swappiness_or_no_swap_is_fine() {
    let mut fx = Fx::new();
    fx.meminfo(64 * GIB_KIB, 60 * GIB_KIB, 8 * GIB_KIB, 8 * GIB_KIB)
        .sysctl("vm.swappiness", "1");
    assert_no_finding(&check::check(&fx.report_system()), "swap_eager");
    // no swap, default swappiness
    let e = Fx::new().report_system();
    assert_eq!(e.memory.swap_total_bytes, 0);
    assert_no_finding(&check::check(&e), "swap_eager");
}

#[test]
fn clean_nvme_box_has_no_findings() {
    let fx = clean_box();
    let e = fx.report("/var/lib/postgresql", "259:1");
    let f = check::check(&e);
    assert!(f.is_empty(), "{f:#?}");
    assert!(!check::has_warnings(&f));
    // info only is no warning either
    let mut fx = clean_box();
    fx.set_queue("nvme0n1", "write_cache", "write back");
    let f = check::check(&fx.report("/var/lib/postgresql", "259:1"));
    assert_eq!(ids(&f), ["volatile_write_cache"]);
    assert!(!check::has_warnings(&f));
}

// ---------------------------------------------------------------------------------------------
// Every rule of the table fires on some fixture
// ---------------------------------------------------------------------------------------------

/// One report per kind of trouble the tests above build: between them every rule of
/// `check::RULES` must fire (`every_rule_fires_on_a_fixture`; tests/check_docs.rs points here).
fn rule_fixtures() -> Vec<(&'static str, EnvReport)> {
    let mut nobarrier = Fx::new();
    let sect = 1_953_525_168u64;
    nobarrier
        .disk("sda", "8:0", sect, &DiskSpec::sata_hdd())
        .partition("sda", "sda1", "8:1", 2048, sect - 2048)
        .mount("8:1", "/db", "ext4", "rw,noatime", "rw,nobarrier");
    let mut read_ahead = nvme_ext4("rw,noatime", "[none] mq-deadline");
    read_ahead.set_queue("nvme0n1", "read_ahead_kb", "4096");
    let mut swap = Fx::new();
    swap.meminfo(64 * GIB_KIB, 60 * GIB_KIB, 8 * GIB_KIB, 8 * GIB_KIB);
    let mut ebs = Fx::new();
    ebs.disk(
        "nvme1n1",
        "259:0",
        GIB_SECT * 500,
        &DiskSpec {
            model: Some("Amazon Elastic Block Store"),
            ..DiskSpec::nvme()
        },
    )
    .mount("259:0", "/data", "xfs", "rw,noatime", "rw");
    vec![
        (
            "md raid0 on partitions at sector 63",
            md_on_partitions(63, 524288).report("/data", "9:0"),
        ),
        ("DOS disk", dos_disk().report("/srv/db", "8:17")),
        (
            "xfs without sunit/swidth, inode32, on LVM on md raid10",
            raid10_lvm("rw,attr2,inode32,logbufs=8,logbsize=256k,noquota")
                .report("/var/lib/mysql", "253:0"),
        ),
        (
            "ext4 nobarrier on a SATA disk",
            nobarrier.report("/db", "8:1"),
        ),
        (
            "NVMe with atime and bfq",
            nvme_ext4("rw", "mq-deadline kyber [bfq] none").report("/", "259:1"),
        ),
        (
            "NVMe with 4 MiB read-ahead",
            read_ahead.report("/", "259:1"),
        ),
        ("KVM guest", kvm_guest().report("/", "252:1")),
        ("bare metal with swap", swap.report_system()),
        ("an EBS volume", ebs.report("/data", "259:0")),
    ]
}

#[test]
fn every_rule_fires_on_a_fixture() {
    let mut fired = std::collections::BTreeSet::new();
    for (name, e) in rule_fixtures() {
        for x in check::check(&e) {
            let rule = check::RULES
                .iter()
                .find(|r| r.id == x.id)
                .unwrap_or_else(|| panic!("{name}: {} is not in RULES", x.id));
            assert_eq!(x.severity, rule.class, "{name}: {x:?}");
            // every placeholder of the templates was filled
            assert!(
                !x.why.contains('{') && !x.fix.contains('{'),
                "{name}: {x:#?}"
            );
            fired.insert(rule.id);
        }
    }
    let missing: Vec<&str> = check::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !fired.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules no fixture fires: {missing:?} (add one to rule_fixtures)"
    );
}

// ---------------------------------------------------------------------------------------------
// Mount selection in path_stack_for
// ---------------------------------------------------------------------------------------------

#[test]
fn path_stack_picks_the_mount_of_the_device() {
    let mut fx = raid10_lvm(XFS_RAID10_OK);
    // the same LV bind-mounted deeper, and an unrelated /var mount
    fx.mount("8:65", "/var", "ext4", "rw,relatime", "rw");
    let e = fx.report("/var/lib/mysql/db/t.ibd", "253:0");
    assert_eq!(e.path.as_ref().unwrap().mountpoint, "/var/lib/mysql");
    let e = fx.report("/var/log/syslog", "8:65");
    assert_eq!(e.path.as_ref().unwrap().mountpoint, "/var");
    assert_eq!(
        layers(&e),
        [layer("partition", "sde1", 0), layer("disk", "sde", 1)]
    );
}

/// BUG: when the device number matches no mount (always the case with `--root`, where it comes
/// from the live stat()), the fallback picks the longest mount point that is a *string* prefix of
/// the path: /data is taken for /data2/x.
#[test]

fn path_stack_fallback_respects_path_components() {
    let mut fx = nvme_ext4("rw,noatime", "[none] mq-deadline");
    fx.disk("sda", "8:0", GIB_SECT * 100, &DiskSpec::sata_hdd())
        .mount("8:0", "/data", "ext4", "rw,noatime", "rw");
    let r = fx.roots();
    let ps =
        sysenv::path_stack_for(&r, Path::new("/data2/x"), "0:99", &sysenv::mounts(&r)).unwrap();
    assert_eq!(ps.mountpoint, "/");
}

// ---------------------------------------------------------------------------------------------
// 3. The CLI with the hidden --root flag
// ---------------------------------------------------------------------------------------------

fn iolab(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .env(
            "IOLAB_DB",
            std::env::temp_dir().join("iolab-env-fixtures-unused.db"),
        )
        .output()
        .expect("run iolab");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// "MAJ:MIN" of the filesystem `p` is on (the live system).
fn live_dev(p: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let d = std::fs::metadata(p).unwrap().dev();
    format!("{}:{}", libc::major(d), libc::minor(d))
}

#[test]
fn cli_env_and_check_with_root() {
    // The path must exist on the live system; use the fixture's own directory.
    let mut warn = nvme_ext4("rw,noatime", "mq-deadline kyber [bfq] none");
    warn.meminfo(64 * GIB_KIB, 60 * GIB_KIB, 8 * GIB_KIB, 8 * GIB_KIB);
    let base = warn.base().to_str().unwrap().to_string();
    let path = std::fs::canonicalize(warn.base()).unwrap();
    let path_s = path.to_str().unwrap();

    let (code, out, err) = iolab(&["env", "--root", &base, "--json", path_s]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["schema"], "iolab-env/1");
    assert_eq!(j["platform"]["host"], "db1");
    assert_eq!(j["block_devices"][0]["name"], "nvme0n1");
    assert_eq!(j["block_devices"][0]["scheduler"], "bfq");
    assert_eq!(j["memory"]["swap_total_bytes"], 8u64 << 30);
    assert_eq!(j["mounts"][0]["dev"], "259:1");
    // The path's live device number is unknown to the fixture: the fixture mount covering the
    // path ("/") is used, and the stack is the one under that mount's own device.
    assert_eq!(j["path"]["path"], path_s);
    assert_eq!(j["path"]["mountpoint"], "/");
    assert_eq!(j["path"]["stack"][0]["name"], "nvme0n1p1", "{}", j["path"]);
    assert_eq!(j["path"]["physical_disks"], serde_json::json!(["nvme0n1"]));

    // check: the system-wide warnings (swap, dirty ratio) give exit 1
    let (code, out, err) = iolab(&["check", "--root", &base, path_s]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("[WARN] swap_eager"), "{out}");
    let (code, out, _) = iolab(&["check", "--root", &base, "--json", path_s]);
    assert_eq!(code, 1);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["schema"], "iolab-check/1");
    let got: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(
        got.contains(&"swap_eager") && got.contains(&"dirty_limit_large"),
        "{got:?}"
    );

    // the clean tree: exit 0
    let clean = clean_box();
    let cbase = clean.base().to_str().unwrap().to_string();
    let cpath = std::fs::canonicalize(clean.base()).unwrap();
    let (code, out, err) = iolab(&["check", "--root", &cbase, cpath.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 critical, 0 warn, 0 info"), "{out}");

    // a path that does not exist: usage error
    let (code, _, _) = iolab(&["check", "--root", &cbase, "/no/such/path/iolab"]);
    assert_eq!(code, 2);
}

/// Workaround for the live-stat() limitation: give the fixture's partition the live device
/// number of the path, so the whole stack under it is the fixture's.
#[test]
fn cli_check_with_root_and_live_device_number() {
    let mut fx = Fx::new();
    let path = std::fs::canonicalize(fx.base()).unwrap();
    let live = live_dev(&path);
    let sect = 3_750_748_848u64;
    fx.disk(
        "nvme0n1",
        "259:0",
        sect,
        &DiskSpec {
            scheduler: "mq-deadline kyber [bfq] none",
            read_ahead_kb: 4096,
            ..DiskSpec::nvme()
        },
    )
    .partition("nvme0n1", "nvme0n1p1", &live, 2048, sect - 4096)
    .mount(&live, "/", "ext4", "rw,noatime", "rw")
    .sysctl("vm.dirty_ratio", "0")
    .sysctl("vm.dirty_bytes", "268435456");
    let base = fx.base().to_str().unwrap().to_string();
    let p = path.to_str().unwrap();

    let (code, out, err) = iolab(&["env", "--root", &base, "--json", p]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let stack: Vec<String> = j["path"]["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l["kind"].as_str().unwrap(),
                l["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(stack, ["partition nvme0n1p1", "nvme nvme0n1"]);
    assert_eq!(j["path"]["physical_disks"], serde_json::json!(["nvme0n1"]));

    let (code, out, _) = iolab(&["check", "--root", &base, "--json", p]);
    assert_eq!(code, 1, "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let got: Vec<(String, String)> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("scheduler_reordering", "warn"),
        ("read_ahead_large", "warn"),
        ("volatile_write_cache", "info"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------------------------
// `iolab explain` on what needs hardware: the environment from a fixture tree, the figures of a
// run on it (a real run document with the device's figures put in)
// ---------------------------------------------------------------------------------------------

mod explain {
    use super::*;
    use iolab::analysis::explain::{self, Finding as ExFinding};
    use iolab::model::device::{CpuPct, DeviceReport, Iostat, Sample};
    use iolab::model::job::EngineKind;
    use iolab::model::run::RunDoc;

    /// A real run document (null engine, 16 KiB random writes with an fsync after each).
    fn base_doc() -> RunDoc {
        let d = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_iolab"))
            .args(["run", "--dir"])
            .arg(d.path())
            .args([
                "--engine",
                "null",
                "--mode",
                "rndwr",
                "--fsync-freq",
                "1",
                "--files",
                "1",
                "--size",
                "1M",
                "--ops",
                "2000",
                "--json",
                "--no-save",
                "-q",
            ])
            .env("IOLAB_DB", d.path().join("r.db"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        RunDoc::from_json(&serde_json::from_slice(&o.stdout).unwrap()).unwrap()
    }

    /// That run made O_DIRECT sync random reads by `threads` threads at `iops` (latency from
    /// Little's law), on `dev` with the figures `io`, in the environment `e`; `fsync_p50_ns`
    /// keeps 1000 fsyncs with that median.
    fn run_on(
        e: EnvReport,
        dev: &str,
        threads: u32,
        iops: f64,
        io: Iostat,
        fsync_p50_ns: Option<u64>,
    ) -> Vec<ExFinding> {
        let doc = doc_on(&base_doc(), e, dev, threads, iops, io, fsync_p50_ns);
        let e = explain::run::explain_run(&doc, None, "fixture");
        assert_eq!(e.cells.len(), 1);
        e.cells[0].findings.clone()
    }

    /// The document [`run_on`] explains, made from `base`.
    fn doc_on(
        base: &RunDoc,
        e: EnvReport,
        dev: &str,
        threads: u32,
        iops: f64,
        io: Iostat,
        fsync_p50_ns: Option<u64>,
    ) -> RunDoc {
        let mut doc = base.clone();
        doc.system = Some(e);
        let c = &mut doc.runs[0];
        c.job.job.engine = EngineKind::Sync;
        c.job.job.direct = true;
        c.job.job.threads = threads;
        c.job.job.fsync_freq = 0;
        c.cache_resident_pct_at_start = 0.0;
        c.cpu = Default::default();
        let mut r = c.results.write.clone();
        r.ops = (iops * 10.0) as u64;
        r.iops = iops;
        r.bytes_per_sec = iops * c.job.job.bs_bytes as f64;
        let lat = r.lat_ns.as_mut().unwrap();
        lat.mean = threads as f64 / iops * 1e9;
        lat.p50 = lat.mean as u64;
        c.results.read = r;
        c.results.write.ops = 0;
        c.results.write.iops = 0.0;
        c.results.write.bytes_per_sec = 0.0;
        c.results.write.lat_ns = None;
        match fsync_p50_ns {
            Some(p50) => {
                c.results.fsync.ops = 1000;
                c.results.fsync.lat_ns.as_mut().unwrap().p50 = p50;
            }
            None => {
                c.results.fsync.ops = 0;
                c.results.fsync.lat_ns = None;
            }
        }
        let summary = Sample {
            t_s: 10.0,
            dur_s: 10.0,
            devices: [(dev.to_string(), io)].into_iter().collect(),
            cpu: CpuPct {
                user: 2.0,
                system: 3.0,
                iowait: 20.0,
                idle: 75.0,
                ..Default::default()
            },
        };
        c.device = Some(DeviceReport {
            devices: vec![dev.to_string()],
            interval_s: 1.0,
            summary,
            timeseries: Vec::new(),
        });
        doc
    }

    fn rules(f: &[ExFinding]) -> Vec<&str> {
        f.iter().map(|x| x.rule.as_str()).collect()
    }

    /// iostat figures of a busy device: `r_s` reads of 16 KiB per second, queue `aqu`.
    fn busy(r_s: f64, aqu: f64, svctm_ms: f64) -> Iostat {
        Iostat {
            r_s,
            rkb_s: r_s * 16.0,
            r_await_ms: aqu / r_s * 1e3,
            aqu_sz: aqu,
            rareq_sz_kb: 16.0,
            svctm_ms,
            util_pct: 100.0,
            ..Default::default()
        }
    }

    /// A disk `sda` (partition sda1 on /) with `spec`, the scheduler file `sched`, `queues`
    /// blk-mq hardware queues (None: no mq directory), behind a hardware RAID controller or
    /// a plain AHCI one.
    fn sched_env(
        spec: DiskSpec,
        sched: &'static str,
        queues: Option<u32>,
        raid: bool,
    ) -> EnvReport {
        let mut fx = Fx::new();
        let sect = 4 * TIB_SECT;
        if raid {
            fx.pci_raid();
        } else {
            fx.pci_ahci();
        }
        fx.disk(
            "sda",
            "8:0",
            sect,
            &DiskSpec {
                scheduler: sched,
                ..spec
            },
        )
        .partition("sda", "sda1", "8:1", 2048, sect - 4096)
        .mount("8:1", "/", "ext4", "rw,noatime", "rw");
        if let Some(n) = queues {
            fx.mq("sda", n);
        }
        fx.report("/", "8:1")
    }

    /// Scheduler reordering by the issue's conditions: a rotational logical drive of 4 data
    /// members (1 MiB stripe / 256 KiB chunk), one hardware queue, a sorting scheduler, 16
    /// threads and a device queue of 1.3 (fewer than half the members busy). Each condition
    /// taken away in turn gives no such finding (and nothing else).
    #[test]
    fn explain_scheduler_reordering_on_a_rotational_array() {
        let bfq = "mq-deadline kyber [bfq] none";
        let lun = DiskSpec::raid_lun;
        let shallow = || busy(400.0, 1.3, 2.5);
        let e = sched_env(lun(), bfq, Some(1), true);
        let sda = e.block_devices.iter().find(|b| b.name == "sda").unwrap();
        assert_eq!(sda.hw_queues, Some(1));
        let f = run_on(e, "sda", 16, 400.0, shallow(), None);
        assert_eq!(rules(&f), ["scheduler_reordering"], "{f:#?}");
        assert_eq!(f[0].layer, explain::Layer::Scheduler);
        let ev = &f[0].evidence;
        assert!(
            ev.contains("rotational, 1 hardware queue, scheduler bfq")
                && ev.contains("= 4 data members")
                && ev.contains("aqu-sz 1.30 for 16 in flight"),
            "{ev}"
        );
        assert!(
            f[0].why.contains("4 rotating members behind"),
            "{}",
            f[0].why
        );
        assert!(f[0].next.contains("--scheduler bfq,none"), "{}", f[0].next);
        // mq-deadline sorts too; no RAID controller needed when the device says its members
        let e = sched_env(lun(), "[mq-deadline] kyber bfq none", Some(1), false);
        let f = run_on(e, "sda", 16, 400.0, shallow(), None);
        assert_eq!(rules(&f), ["scheduler_reordering"], "{f:#?}");
        // a kernel without blk-mq for it: cfq on the single-queue block layer
        let e = sched_env(lun(), "noop deadline [cfq]", None, true);
        let f = run_on(e, "sda", 16, 400.0, shallow(), None);
        assert_eq!(rules(&f), ["scheduler_reordering"], "{f:#?}");
        assert!(f[0].evidence.contains("single-queue block layer"));
        // each condition away: 4 hardware queues, no mq directory with an mq scheduler, no
        // sorting (none), not rotational, no members (a plain disk), a queue of 3 (more than
        // half the 4 members busy), one thread
        let cases: Vec<(&str, EnvReport, u32, Iostat)> = vec![
            (
                "4 queues",
                sched_env(lun(), bfq, Some(4), true),
                16,
                shallow(),
            ),
            ("no mq", sched_env(lun(), bfq, None, true), 16, shallow()),
            (
                "none",
                sched_env(lun(), "mq-deadline kyber bfq [none]", Some(1), true),
                16,
                shallow(),
            ),
            (
                "ssd",
                sched_env(
                    DiskSpec {
                        rotational: false,
                        ..lun()
                    },
                    bfq,
                    Some(1),
                    true,
                ),
                16,
                shallow(),
            ),
            (
                "one disk",
                sched_env(DiskSpec::sata_hdd(), bfq, Some(1), true),
                16,
                shallow(),
            ),
            (
                "queue 3",
                sched_env(lun(), bfq, Some(1), true),
                16,
                busy(400.0, 3.0, 2.5),
            ),
        ];
        for (what, e, t, io) in cases {
            let f = run_on(e, "sda", t, 400.0, io, None);
            assert_eq!(rules(&f), ["none"], "{what}: {f:#?}");
        }
        let f = run_on(
            sched_env(lun(), bfq, Some(1), true),
            "sda",
            1,
            150.0,
            busy(150.0, 1.0, 6.6),
            None,
        );
        assert_eq!(rules(&f), ["queue_depth_bound"], "{f:#?}");
    }

    /// A partition at sector 63 (old DOS label): misaligned beside the limit (one read at a
    /// time: queue-depth bound); at sector 2048 not.
    #[test]
    fn explain_misaligned_partition() {
        let e = dos_disk().report("/srv", "8:17");
        let f = run_on(e, "sdb1", 1, 150.0, busy(150.0, 1.0, 6.6), None);
        assert_eq!(rules(&f), ["queue_depth_bound", "misaligned"], "{f:#?}");
        assert_eq!(f[1].layer, explain::Layer::Alignment);
        assert!(f[1].evidence.contains("sector 63"), "{}", f[1].evidence);
        assert!(f[1].next.starts_with("iolab check /srv"), "{}", f[1].next);
        let mut fx = Fx::new();
        let sect = 1_953_525_168u64;
        fx.disk("sdb", "8:16", sect, &DiskSpec::sata_hdd())
            .partition("sdb", "sdb1", "8:17", 2048, sect - 4096)
            .mount("8:17", "/srv", "ext4", "rw,noatime", "rw");
        let f = run_on(
            fx.report("/srv", "8:17"),
            "sdb1",
            1,
            150.0,
            busy(150.0, 1.0, 6.6),
            None,
        );
        assert_eq!(rules(&f), ["queue_depth_bound"], "{f:#?}");
        // the same reads reaching the device as 4 KiB requests: split
        let mut io = busy(600.0, 1.0, 1.6);
        io.rareq_sz_kb = 4.0;
        let f = run_on(fx.report("/srv", "8:17"), "sdb1", 1, 150.0, io, None);
        assert_eq!(rules(&f), ["queue_depth_bound", "split_requests"], "{f:#?}");
        assert!(
            f[1].evidence.contains("rareq-sz 4.0 KiB"),
            "{}",
            f[1].evidence
        );
    }

    /// Sweeps over block sizes (4, 16, 64 KiB): IOPS that stay at 400 are an IOPS cap, bytes/s
    /// that stay at 4 MiB/s a bandwidth cap, on every cell; a device that moves fewer large
    /// operations but more bytes has neither.
    #[test]
    fn explain_sweep_tells_an_iops_cap_from_a_bandwidth_cap() {
        let base = base_doc();
        let sweep = |iops_at: &dyn Fn(f64) -> f64| -> Vec<Vec<String>> {
            let runs: Vec<(i64, RunDoc)> = [4096u64, 16384, 65536]
                .iter()
                .enumerate()
                .map(|(i, &bs)| {
                    let mut b = base.clone();
                    b.runs[0].job.job.bs_bytes = bs;
                    let iops = iops_at(bs as f64);
                    let e = sched_env(DiskSpec::sata_ssd(), "[none] mq-deadline", None, false);
                    let io = busy(iops, 0.9, 0.9);
                    (i as i64 + 1, doc_on(&b, e, "sda", 4, iops, io, None))
                })
                .collect();
            explain::sweep::explain_sweep(&runs, "fixture")
                .cells
                .iter()
                .map(|c| {
                    c.findings
                        .iter()
                        .map(|f| f.rule.clone())
                        .filter(|r| r.ends_with("_cap"))
                        .collect()
                })
                .collect()
        };
        let each = |r: &str| vec![vec![r.to_string()]; 3];
        assert_eq!(sweep(&|_| 400.0), each("iops_cap"));
        assert_eq!(sweep(&|bs| 4194304.0 / bs), each("bandwidth_cap"));
        let neither = sweep(&|bs| 2000.0 * (4096.0 / bs).sqrt());
        assert_eq!(neither, vec![Vec::<String>::new(); 3]);
    }

    /// `iolab together`'s four runs (two directories alone, then at once): 400 IOPS each alone
    /// and 200 each at once is a cap the two share, on every cell; 400 each at once (limits of
    /// their own) is none; the boundaries of the verdict decided as the rule's text says.
    #[test]
    fn explain_together_finds_a_cap_two_devices_share() {
        use std::collections::BTreeMap;
        let base = base_doc();
        let together = |alone: f64, at_once: f64| -> Vec<Vec<String>> {
            let mut runs = Vec::new();
            let mut coords = Vec::new();
            for (i, (load, dev)) in [
                ("alone", "sda"),
                ("alone", "sdb"),
                ("together", "sda"),
                ("together", "sdb"),
            ]
            .into_iter()
            .enumerate()
            {
                let iops = if load == "alone" { alone } else { at_once };
                let e = sched_env(DiskSpec::sata_ssd(), "[none] mq-deadline", None, false);
                let io = busy(iops, 0.9, 0.9);
                runs.push((i as i64 + 1, doc_on(&base, e, dev, 4, iops, io, None)));
                coords.push(BTreeMap::from([
                    ("load".to_string(), load.to_string()),
                    ("dir".to_string(), format!("/data/{dev}")),
                ]));
            }
            explain::sweep::explain_together(&runs, &coords, "fixture")
                .cells
                .iter()
                .map(|c| {
                    c.findings
                        .iter()
                        .map(|f| f.rule.clone())
                        .filter(|r| r == "shared_cap")
                        .collect()
                })
                .collect()
        };
        assert_eq!(
            together(400.0, 200.0),
            vec![vec!["shared_cap".to_string()]; 4]
        );
        assert_eq!(together(400.0, 400.0), vec![Vec::<String>::new(); 4]);
        // at once at most 1.25x the best alone: 250 each (500 = 1.25x 400) is shared, 252 not
        assert_eq!(together(400.0, 250.0)[0], ["shared_cap"]);
        assert!(together(400.0, 252.0)[0].is_empty());
        let row = |dir: &str, alone, together| explain::sweep::SharedRow {
            dir: dir.into(),
            dev: None,
            alone,
            together,
        };
        // alone they must add up to 1.5x the best: a device that does little alone says nothing
        let v = explain::sweep::shared_verdict(&[row("a", 400.0, 200.0), row("b", 190.0, 190.0)])
            .unwrap();
        assert!(!v.shared, "{v:?}");
        let v = explain::sweep::shared_verdict(&[row("a", 400.0, 200.0), row("b", 200.0, 200.0)])
            .unwrap();
        assert!(v.shared, "{v:?}");
        assert!(
            v.evidence
                .contains("all at once: 200 + 200 = 400 IOPS, 1.00x the best alone"),
            "{}",
            v.evidence
        );
        assert!(explain::sweep::shared_verdict(&[row("a", 400.0, 200.0)]).is_none());
    }

    /// A mode whose reads ran at 2000 IOPS for 4 s, then at 400 to its end (a burst bucket
    /// emptied): `rate_drop`, with the two levels, where it fell and the bucket's size (1600
    /// I/Os a second above the baseline for 4 s); the same mode at an even rate has none.
    #[test]
    fn explain_a_rate_that_fell_and_stayed() {
        use iolab::model::run::{TsOp, TsPoint};
        let point = |t: usize, iops: f64| TsPoint {
            t_s: t as f64,
            dur_s: 1.0,
            read: Some(TsOp {
                ops: iops as u64,
                iops,
                bytes_per_sec: iops * 16384.0,
                p50_ns: None,
                p99_ns: None,
            }),
            write: None,
            fsync: None,
            trim: None,
        };
        let explain_with = |rates: &dyn Fn(usize) -> f64| {
            let e = sched_env(DiskSpec::sata_ssd(), "[none] mq-deadline", None, false);
            let mut doc = doc_on(
                &base_doc(),
                e,
                "sda",
                1,
                1000.0,
                busy(1000.0, 0.9, 0.9),
                None,
            );
            doc.runs[0].timeseries = (0..12).map(|t| point(t, rates(t))).collect();
            explain::run::explain_run(&doc, None, "fixture").cells[0]
                .findings
                .clone()
        };
        let f = explain_with(&|t| if t < 4 { 2000.0 } else { 400.0 });
        let drops: Vec<&str> = rules(&f)
            .into_iter()
            .filter(|r| r.starts_with("rate_"))
            .collect();
        assert_eq!(drops, ["rate_drop"], "{f:#?}");
        let d = f.iter().find(|x| x.rule == "rate_drop").unwrap();
        assert_eq!(d.layer, explain::Layer::Device);
        for want in [
            "fell from 2,000 to 400 IOPS",
            "at 4.0 s",
            "about 6,400 I/Os (100.00 MiB) above the baseline",
            "refilled at the baseline's 400 IOPS",
            "a burst bucket that emptied",
        ] {
            assert!(d.evidence.contains(want), "{want}: {}", d.evidence);
        }
        let f = explain_with(&|t| if t % 2 == 0 { 1050.0 } else { 950.0 });
        assert!(!rules(&f).contains(&"rate_drop"), "{f:#?}");
        assert!(!rules(&f).contains(&"first_touch"), "{f:#?}");
        // reads that rose and stayed: first-touch reads
        let f = explain_with(&|t| if t < 5 { 500.0 } else { 20000.0 });
        let rises: Vec<&str> = rules(&f)
            .into_iter()
            .filter(|r| *r == "first_touch" || r.starts_with("rate_"))
            .collect();
        assert_eq!(rises, ["first_touch"], "{f:#?}");
        let d = f.iter().find(|x| x.rule == "first_touch").unwrap();
        assert!(
            d.evidence.contains("rose from 500 to 20,000 IOPS at 5.0 s"),
            "{}",
            d.evidence
        );
    }

    /// One SATA hard disk, 32 threads: 100 % busy, a queue of 30 and await 30 × the service
    /// time: the device is saturated; flushes of 0.1 ms on it are absorbed by a cache.
    #[test]
    fn explain_saturated_rotational_disk_and_absorbed_flushes() {
        let mk = || {
            let mut fx = Fx::new();
            fx.pci_ahci();
            let sect = 1_953_525_168u64;
            fx.disk("sdb", "8:16", sect, &DiskSpec::sata_hdd())
                .partition("sdb", "sdb1", "8:17", 2048, sect - 4096)
                .mount("8:17", "/srv", "ext4", "rw,noatime", "rw");
            fx.report("/srv", "8:17")
        };
        let f = run_on(mk(), "sdb", 32, 150.0, busy(150.0, 30.0, 6.6), None);
        assert_eq!(rules(&f), ["device_saturated"], "{f:#?}");
        assert_eq!(f[0].confidence, explain::Confidence::Medium);
        assert!(
            !f[0].evidence.contains("weak evidence"),
            "{}",
            f[0].evidence
        );
        assert!(
            f[0].evidence.contains("%util 100, aqu-sz 30.0"),
            "{}",
            f[0].evidence
        );
        let f = run_on(mk(), "sdb", 1, 150.0, busy(150.0, 1.0, 6.6), Some(100_000));
        assert_eq!(rules(&f), ["queue_depth_bound", "absorbed_flush"], "{f:#?}");
        // 8 ms flushes are what a disk does
        let f = run_on(
            mk(),
            "sdb",
            1,
            150.0,
            busy(150.0, 1.0, 6.6),
            Some(8_000_000),
        );
        assert_eq!(rules(&f), ["queue_depth_bound"], "{f:#?}");
    }

    /// A SATA SSD under /srv (non-rotational, kind disk).
    fn ssd() -> EnvReport {
        let mut fx = Fx::new();
        fx.pci_ahci();
        let sect = 4 * GIB_SECT;
        fx.disk("sda", "8:0", sect, &DiskSpec::sata_ssd())
            .partition("sda", "sda1", "8:1", 2048, sect - 4096)
            .mount("8:1", "/srv", "ext4", "rw,noatime", "rw");
        fx.report("/srv", "8:1")
    }

    /// Queue-depth bound in a run alone: one read at a time is the low-load latency by
    /// definition (high confidence, %util 100 read as one I/O outstanding); with more in flight
    /// one run has no low-load latency to compare with, so the rule does not fire whatever the
    /// in-flight count, nor does it when the device's queue holds others' I/O or not the
    /// workload's. No device_saturated on a non-rotational disk in a run alone either.
    #[test]
    fn explain_queue_depth_bound_in_a_run_alone() {
        let f = run_on(ssd(), "sda", 1, 5000.0, busy(5000.0, 1.0, 0.2), None);
        assert_eq!(rules(&f), ["queue_depth_bound"], "{f:#?}");
        assert_eq!(f[0].confidence, explain::Confidence::High);
        assert!(f[0].evidence.contains("lowest load"), "{}", f[0].evidence);
        assert!(
            f[0].evidence.contains("%util 100 only says"),
            "{}",
            f[0].evidence
        );
        // 2 and 8 threads at that latency, 32 queued at 8 × it: nothing a run alone can show
        for (t, iops, aqu) in [(2, 10_000.0, 2.0), (8, 40_000.0, 8.0), (32, 20_000.0, 32.0)] {
            let f = run_on(ssd(), "sda", t, iops, busy(iops, aqu, 0.02), None);
            assert_eq!(rules(&f), ["none"], "{t} threads: {f:#?}");
        }
        // 1 thread, 10 queued at the device (someone else's I/O), or 16 threads with 1.3
        // queued (they wait above the device): not bound
        let f = run_on(ssd(), "sda", 1, 5000.0, busy(5000.0, 10.0, 0.2), None);
        assert_eq!(rules(&f), ["none"], "{f:#?}");
        let f = run_on(ssd(), "sda", 16, 400.0, busy(400.0, 1.3, 2.5), None);
        assert_eq!(rules(&f), ["none"], "{f:#?}");
    }

    /// A sweep of 1 and 8 threads on an SSD: the device's await at 1 thread is its low-load
    /// latency. Await unchanged at 8: queue-depth bound (high); 6.7 × it with IOPS still rising:
    /// saturated (medium, %util called weak evidence); 7.7 × with IOPS flat: the 1-thread cell
    /// is device_flat and the 8-thread one saturated with the flat IOPS added (high); 1.6 ×:
    /// neither (none).
    #[test]
    fn explain_sweep_low_load_latency_decides_queue_depth_or_saturation() {
        let base = base_doc();
        let sweep = |iops8: f64| {
            let one = doc_on(&base, ssd(), "sda", 1, 5000.0, busy(5000.0, 1.0, 0.2), None);
            let eight = doc_on(&base, ssd(), "sda", 8, iops8, busy(iops8, 8.0, 0.02), None);
            explain::sweep::explain_sweep(&[(1, one), (2, eight)], "group g1")
        };
        let rules2 = |e: &explain::Explanation| -> Vec<Vec<String>> {
            e.cells
                .iter()
                .map(|c| c.findings.iter().map(|f| f.rule.clone()).collect())
                .collect()
        };
        let e = sweep(40_000.0);
        assert_eq!(
            rules2(&e),
            [["queue_depth_bound"], ["queue_depth_bound"]],
            "{e:#?}"
        );
        let f = &e.cells[1].findings[0];
        assert_eq!(f.confidence, explain::Confidence::High);
        assert!(
            f.evidence.contains(
                "device sda await 0.20 ms at 8 in flight vs 0.20 ms at 1 in flight (run 1, its low-load latency): 1.00×"
            ),
            "{}",
            f.evidence
        );
        let e = sweep(6000.0);
        assert_eq!(
            rules2(&e),
            [["queue_depth_bound"], ["device_saturated"]],
            "{e:#?}"
        );
        let f = &e.cells[1].findings[0];
        assert_eq!(f.confidence, explain::Confidence::Medium);
        assert!(
            f.evidence.contains("1.33 ms at 8 in flight vs 0.20 ms")
                && f.evidence.contains("6.67×")
                && f.evidence.contains("weak evidence"),
            "{}",
            f.evidence
        );
        let e = sweep(5200.0);
        assert_eq!(
            rules2(&e),
            [["device_flat"], ["device_saturated"]],
            "{e:#?}"
        );
        let f = &e.cells[1].findings[0];
        assert_eq!(f.confidence, explain::Confidence::High);
        assert!(
            f.evidence
                .contains("IOPS flat as threads rise: 1 → 8 in flight"),
            "{}",
            f.evidence
        );
        let e = sweep(25_000.0);
        assert_eq!(rules2(&e), [["queue_depth_bound"], ["none"]], "{e:#?}");
    }

    /// [`doc_on`] with the reads made O_DIRECT writes into holes.
    fn writes_on(base: &RunDoc, threads: u32, iops: f64, aqu: f64) -> RunDoc {
        let mut d = doc_on(
            base,
            ssd(),
            "sda",
            threads,
            iops,
            busy(iops, aqu, 0.1),
            None,
        );
        let c = &mut d.runs[0];
        c.results.write = c.results.read.clone();
        c.results.read.ops = 0;
        c.results.read.iops = 0.0;
        c.results.read.bytes_per_sec = 0.0;
        c.results.read.lat_ns = None;
        c.job.fileset.layout = iolab::model::job::Layout::Holes;
        d
    }

    /// fs_serialisation in a sweep of 1 and 8 threads, device queue about 1 throughout:
    /// per-thread latency 5.6 × higher at 8 threads (IOPS 600 → 850) confirms it (high
    /// confidence, said in the evidence); latency only 1.2 × higher (IOPS 600 → 4,000, which
    /// such a queue cannot carry at that latency: the figures contradict each other) leaves it
    /// with low confidence and says it did not rise. The run alone is medium/high without that
    /// evidence.
    #[test]
    fn explain_sweep_fs_serialisation_wants_per_thread_latency_up() {
        let base = base_doc();
        let one = || writes_on(&base, 1, 600.0, 0.8);
        let rules2 = |e: &explain::Explanation| -> Vec<Vec<String>> {
            e.cells
                .iter()
                .map(|c| c.findings.iter().map(|f| f.rule.clone()).collect())
                .collect()
        };
        let alone = explain::run::explain_run(&writes_on(&base, 8, 850.0, 1.07), None, "x");
        let f = &alone.cells[0].findings[0];
        assert_eq!(f.rule, "fs_serialisation");
        assert_eq!(f.confidence, explain::Confidence::High);
        assert!(!f.evidence.contains("per-thread latency"), "{}", f.evidence);
        let e = explain::sweep::explain_sweep(
            &[(1, one()), (2, writes_on(&base, 8, 850.0, 1.07))],
            "group g1",
        );
        assert_eq!(
            rules2(&e),
            [["queue_depth_bound"], ["fs_serialisation"]],
            "{e:#?}"
        );
        let f = &e.cells[1].findings[0];
        assert_eq!(f.confidence, explain::Confidence::High);
        assert!(
            f.evidence.contains(
                "per-thread latency up as threads rise: 1.67 ms at 1 in flight (run 1) → 9.41 ms at 8 (5.6×"
            ),
            "{}",
            f.evidence
        );
        let e = explain::sweep::explain_sweep(
            &[(1, one()), (2, writes_on(&base, 8, 4000.0, 1.0))],
            "group g1",
        );
        assert_eq!(
            rules2(&e),
            [["queue_depth_bound"], ["fs_serialisation"]],
            "{e:#?}"
        );
        let f = &e.cells[1].findings[0];
        assert_eq!(f.confidence, explain::Confidence::Low);
        assert!(
            f.evidence
                .contains("per-thread latency did not rise with the threads"),
            "{}",
            f.evidence
        );
    }

    /// The cgroup limits of the process, read from a fixture tree: v1 blkio.throttle files of
    /// its cgroup and its parent, v2 io.max, with the device names from /sys/dev/block.
    #[test]
    fn cgroup_io_limits_are_recorded() {
        let mut fx = Fx::new();
        fx.disk("sda", "8:0", 4 * GIB_SECT, &DiskSpec::sata_ssd());
        fx.write(
            "proc/self/cgroup",
            "7:blkio:/db/pg\n0::/system.slice/pg.service",
        )
        .write(
            "sys/fs/cgroup/blkio/db/pg/blkio.throttle.read_iops_device",
            "8:0 500",
        )
        .write(
            "sys/fs/cgroup/blkio/db/blkio.throttle.write_bps_device",
            "8:0 10485760",
        )
        .write("sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", "")
        .write("sys/fs/cgroup/unified/cgroup.controllers", "io memory")
        .write(
            "sys/fs/cgroup/unified/system.slice/pg.service/io.max",
            "8:0 rbps=max wbps=max riops=1000 wiops=max",
        );
        let got: Vec<(u32, String, Option<String>, String, u64)> = sysenv::cgroup_io(&fx.roots())
            .into_iter()
            .map(|l| (l.cgroup_version, l.dev, l.device, l.kind, l.limit))
            .collect();
        let sda = || Some("sda".to_string());
        assert_eq!(
            got,
            [
                (1, "8:0".into(), sda(), "read_iops".into(), 500),
                (1, "8:0".into(), sda(), "write_bps".into(), 10485760),
                (2, "8:0".into(), sda(), "read_iops".into(), 1000),
            ]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 4. The text, whole: snapshots (IOLAB_BLESS=1 rewrites them)
// ---------------------------------------------------------------------------------------------

/// `iolab env` and `iolab check` text for fixed trees, compared with tests/snapshots/. Through
/// the library: the stack under /var/lib/mysql (RAID10, LVM, xfs without stripe geometry), its
/// findings, exported as the commands export them. Through the binary with `--root`: the whole
/// command, on a tree with system-wide warnings (the live path the binary needs is `<PATH>`).
#[test]
fn env_and_check_text_match_the_snapshots() {
    use iolab::output::export::{Format, export};
    let fx = raid10_lvm("rw,attr2,inode64,logbufs=8,logbsize=256k,noquota");
    let e = fx.report("/var/lib/mysql", "253:0");
    let env_text = export(&e, Format::Text).unwrap();
    common::assert_snapshot("env-raid10-lvm-xfs.txt", &host_free(&env_text));
    let findings = check::check(&e);
    let doc = iolab::output::check::CheckDoc {
        target: "/var/lib/mysql".into(),
        path: e.path.as_ref().map(|p| p.path.clone()),
        findings: &findings,
    };
    common::assert_snapshot(
        "check-raid10-lvm-xfs.txt",
        &export(&doc, Format::Text).unwrap(),
    );

    let mut warn = nvme_ext4("rw,noatime", "mq-deadline kyber [bfq] none");
    warn.meminfo(64 * GIB_KIB, 60 * GIB_KIB, 8 * GIB_KIB, 8 * GIB_KIB);
    let base = warn.base().to_str().unwrap().to_string();
    let path = std::fs::canonicalize(warn.base()).unwrap();
    let path_s = path.to_str().unwrap();
    for (cmd, code) in [("env", 0), ("check", 1)] {
        let (got, out, err) = iolab(&[cmd, "--root", &base, path_s]);
        assert_eq!(got, code, "{cmd}: {out}{err}");
        let out = out.replace(path_s, "<PATH>").replace(&base, "<ROOT>");
        common::assert_snapshot(&format!("{cmd}-cli-nvme-ext4.txt"), &host_free(&out));
    }
}

/// The text without what the fixture cannot fix: the architecture iolab was built for, and the
/// padding of a heading that names the (replaced) live path.
fn host_free(text: &str) -> String {
    let arch = format!("| {}\n", std::env::consts::ARCH);
    text.replace(&arch, "| <ARCH>\n")
        .lines()
        .map(|l| {
            if l.starts_with("# Storage under <PATH>") {
                l.trim_end_matches('#').trim_end()
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A cloud provider's network volume under the path is named by its model (and vendor): EBS
/// over NVMe, an Azure managed disk (Hyper-V SCSI, vendor Msft); local instance storage and a
/// plain NVMe SSD are not.
#[test]
fn check_names_a_cloud_volume_by_its_model() {
    let nvme = |model: &'static str| {
        let mut fx = Fx::new();
        let sect = GIB_SECT * 100;
        fx.disk(
            "nvme1n1",
            "259:0",
            sect,
            &DiskSpec {
                model: Some(model),
                ..DiskSpec::nvme()
            },
        )
        .mount("259:0", "/data", "xfs", "rw,noatime", "rw");
        check::check(&fx.report("/data", "259:0"))
    };
    let f = nvme("Amazon Elastic Block Store              ");
    let x = assert_finding(&f, "cloud_volume", Severity::Warn, "nvme1n1");
    assert!(x.evidence.contains("Amazon EBS"), "{}", x.evidence);
    assert!(x.fix.contains("--steady-state"), "{}", x.fix);
    assert_no_finding(&nvme("Amazon EC2 NVMe Instance Storage"), "cloud_volume");
    assert_no_finding(&nvme("Samsung SSD 980 PRO 1TB"), "cloud_volume");
    let azure = |vendor: &'static str| {
        let mut fx = Fx::new();
        let sect = GIB_SECT * 100;
        fx.disk(
            "sdc",
            "8:32",
            sect,
            &DiskSpec {
                model: Some("Virtual Disk    "),
                vendor: Some(vendor),
                ..DiskSpec::sata_ssd()
            },
        )
        .mount("8:32", "/data", "ext4", "rw,noatime", "rw");
        check::check(&fx.report("/data", "8:32"))
    };
    let f = azure("Msft    ");
    let x = assert_finding(&f, "cloud_volume", Severity::Warn, "sdc");
    assert!(x.evidence.contains("Azure managed disk"), "{}", x.evidence);
    // another hypervisor's "Virtual Disk" (VMware) is not Azure's
    assert_no_finding(&azure("VMware  "), "cloud_volume");
}
