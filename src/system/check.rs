//! `iolab check`: findings about the storage setup that the seed articles warn about, each with
//! its evidence, why it matters for a database, and the fix (docs/check.md).

use crate::model::units::human_bytes;
use crate::system::env::{BlockDevice, EnvReport, find};
use serde::{Deserialize, Serialize};

pub const CHECK_SCHEMA: &str = "iolab-check/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Critical,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier (docs/check.md).
    pub id: String,
    pub severity: Severity,
    /// What it is about: a device, a partition, a mount point, "system".
    pub subject: String,
    pub evidence: String,
    pub why: String,
    pub fix: String,
}

fn f(
    id: &str,
    severity: Severity,
    subject: &str,
    evidence: String,
    why: &str,
    fix: String,
) -> Finding {
    Finding {
        id: id.into(),
        severity,
        subject: subject.into(),
        evidence,
        why: why.into(),
        fix,
    }
}

const MIB: u64 = 1 << 20;
const TIB: u64 = 1 << 40;

/// Data disks of an md array (for the stripe width).
fn data_disks(level: &str, n: u32) -> Option<u32> {
    match level {
        "raid0" => Some(n),
        "raid10" => Some(n / 2),
        "raid5" => n.checked_sub(1),
        "raid6" => n.checked_sub(2),
        "raid1" => Some(1),
        _ => None,
    }
}

/// (stripe unit, stripe width) in bytes the storage under the filesystem asks for.
fn expected_stripe(dev: &BlockDevice) -> Option<(u64, u64, String)> {
    if let Some(md) = &dev.md
        && let (Some(chunk), Some(level), Some(n)) =
            (md.chunk_bytes, md.level.as_deref(), md.raid_disks)
        && let Some(d) = data_disks(level, n)
        && level != "raid1"
    {
        return Some((
            chunk,
            chunk * d as u64,
            format!("{} {level}, chunk {chunk} bytes x {d} data disks", dev.name),
        ));
    }
    let lbs = dev.logical_block_size.unwrap_or(512);
    match (dev.minimum_io_size, dev.optimal_io_size) {
        (Some(min), Some(opt)) if opt > 0 && min > lbs && min < opt => Some((
            min,
            opt,
            format!("{} minimum_io_size {min}, optimal_io_size {opt}", dev.name),
        )),
        _ => None,
    }
}

/// All findings for the report (and the stack under its path, when it has one).
pub fn check(e: &EnvReport) -> Vec<Finding> {
    let mut out = Vec::new();
    let ps = e.path.as_ref();
    // devices in the stack under the path (or every device when there is none)
    let stack_devs: Vec<&BlockDevice> = match ps {
        Some(p) => p.stack.iter().filter_map(|l| find(e, &l.name)).collect(),
        None => e.block_devices.iter().collect(),
    };
    let physical: Vec<&BlockDevice> = match ps {
        Some(p) => p.physical_disks.iter().filter_map(|n| find(e, n)).collect(),
        None => e
            .block_devices
            .iter()
            .filter(|b| b.slaves.is_empty())
            .collect(),
    };

    // Partition alignment: every partition in the stack (or on the devices).
    let parts: Vec<(&BlockDevice, &crate::system::env::Partition)> = match ps {
        Some(p) => p
            .stack
            .iter()
            .filter(|l| l.kind == "partition")
            .filter_map(|l| {
                e.block_devices.iter().find_map(|b| {
                    b.partitions
                        .iter()
                        .find(|x| x.name == l.name)
                        .map(|x| (b, x))
                })
            })
            .collect(),
        None => e
            .block_devices
            .iter()
            .flat_map(|b| b.partitions.iter().map(move |x| (b, x)))
            .collect(),
    };
    for (disk, p) in parts {
        // the stripe the partition should respect: the disk's own geometry, or an array above it
        let stripe = expected_stripe(disk).map(|s| s.0).or_else(|| {
            disk.holders
                .iter()
                .chain(stack_devs.iter().map(|d| &d.name))
                .filter_map(|h| find(e, h))
                .find_map(expected_stripe)
                .map(|s| s.0)
        });
        if let Some(su) = stripe
            && p.start_bytes % su != 0
        {
            out.push(f(
                "partition_misaligned_stripe",
                Severity::Critical,
                &p.name,
                format!("{} starts at sector {} = {} bytes, not a multiple of the {su}-byte RAID stripe unit", p.name, p.start_sector, p.start_bytes),
                "a misaligned partition makes many I/Os straddle two stripe units, so one database page costs two disk operations: seed 000 measured up to 15% fewer random reads and 23% fewer random writes",
                format!("re-create the partition starting at a multiple of {su} bytes (parted/sfdisk start at 2048 sectors = 1 MiB, a multiple of common chunk sizes), then restore the data"),
            ));
        } else if p.start_bytes % MIB != 0 {
            out.push(f(
                "partition_misaligned",
                Severity::Warn,
                &p.name,
                format!("{} starts at sector {} = {} bytes, not a multiple of 1 MiB", p.name, p.start_sector, p.start_bytes),
                "partitions not aligned to 1 MiB (the old DOS default starts at sector 63) straddle physical 4 KiB sectors, SSD pages and RAID stripes: seed 000 measured up to 15% on random reads and 23% on random writes",
                "re-create the partition starting at sector 2048 (1 MiB); current fdisk, parted and sfdisk do this by default".into(),
            ));
        }
    }

    if let Some(p) = ps {
        let fs = &p.fs;
        // Filesystem stripe geometry against the device's.
        if let Some(dev) = p
            .stack
            .iter()
            .find(|l| l.kind != "partition")
            .and_then(|l| find(e, &l.name))
            && let Some((su, sw, src)) = expected_stripe(dev)
        {
            let bs = fs.block_size.unwrap_or(4096);
            let have = match fs.fstype.as_str() {
                "xfs" => Some((
                    fs.xfs_sunit_bytes.unwrap_or(0),
                    fs.xfs_swidth_bytes.unwrap_or(0),
                )),
                "ext4" | "ext3" => Some((
                    fs.ext4_stride_blocks.unwrap_or(0) * bs,
                    fs.ext4_stripe_width_blocks.unwrap_or(0) * bs,
                )),
                _ => None,
            };
            // A value the filesystem does not tell (0: e.g. ext4's stride without tune2fs) is not
            // a mismatch; only known values are compared.
            if let Some((hsu, hsw)) = have
                && ((hsu != 0 && hsu != su) || (hsw != 0 && hsw != sw) || (hsu == 0 && hsw == 0))
            {
                out.push(f(
                    "fs_stripe_mismatch",
                    Severity::Warn,
                    &p.mountpoint,
                    format!("{} has stripe unit {hsu} / width {hsw} bytes; the storage has {su} / {sw} ({src})", fs.fstype, ),
                    "the filesystem places files and its log on stripe boundaries only when it knows the geometry; otherwise allocations and writes straddle stripes and a RAID5/6 pays read-modify-write (seed 000)",
                    if fs.fstype == "xfs" {
                        format!("mkfs.xfs -d su={su},sw={} (or mount -o sunit={},swidth={})", sw / su.max(1), su / 512, sw / 512)
                    } else {
                        format!("tune2fs -E stride={},stripe_width={}", su / bs, sw / bs)
                    },
                ));
            }
        }
        // xfs inode32 on a large device
        if fs.fstype == "xfs"
            && fs.xfs_inode_mode.as_deref() == Some("inode32")
            && fs.total_bytes.unwrap_or(0) > TIB
        {
            out.push(f(
                "xfs_inode32_large",
                Severity::Warn,
                &p.mountpoint,
                format!("xfs mounted inode32 on {} (more than 1 TiB)", human_bytes(fs.total_bytes.unwrap_or(0) as f64)),
                "with inode32 all inodes must live in the first 1 TiB: new files, and the data placed near them, crowd the start of the device, and file creation can fail with ENOSPC while space is free (seed 000)",
                "mount with inode64 (the default since Linux 3.7)".into(),
            ));
        }
        if !fs.barriers {
            for d in &physical {
                if d.write_cache.as_deref() == Some("write back") {
                    out.push(f(
                        "volatile_cache_no_barriers",
                        Severity::Critical,
                        &p.mountpoint,
                        format!("{} is mounted without barriers (nobarrier/barrier=0) and {} has a volatile write cache (write back)", p.mountpoint, d.name),
                        "without cache flushes an fsync returns while the data is still in the disk's volatile cache: a power loss loses committed transactions and can corrupt the database, and every benchmark looks faster than the storage really is",
                        "remount with barriers on (remove nobarrier / barrier=0), or use a controller with a battery- or flash-backed cache and set it to write back there".into(),
                    ));
                }
            }
        }
        // atime updates
        let opts = &p.mount_options;
        if opts.iter().any(|o| o == "strictatime")
            || !opts
                .iter()
                .any(|o| o == "noatime" || o == "relatime" || o == "lazytime")
        {
            out.push(f(
                "atime_updates",
                Severity::Warn,
                &p.mountpoint,
                format!("{} is mounted with {} (every read updates the access time)", p.mountpoint, if opts.iter().any(|o| o == "strictatime") { "strictatime" } else { "atime" }),
                "each read then also writes an inode update: extra writes and journal traffic for a database that reads all day",
                format!("mount {} with noatime (or at least relatime)", p.mountpoint),
            ));
        }
    }

    // Schedulers.
    let hw_raid = !e.raid_controllers.is_empty();
    for d in &physical {
        let Some(s) = d.scheduler.as_deref() else {
            continue;
        };
        if s != "bfq" && s != "cfq" {
            continue;
        }
        let why_dev = if d.kind == "nvme" {
            Some("an NVMe device, whose own queues schedule far better than a host-side fair queue")
        } else if hw_raid && d.kind == "disk" {
            Some(
                "a device behind a hardware RAID controller: one device to Linux but many spindles, which the fair queue starves by serving one process at a time (seed 004: noop/none about 20% faster)",
            )
        } else if d.rotational == Some(false) {
            Some("a non-rotational device, where there is no seek to save")
        } else {
            None
        };
        if let Some(w) = why_dev {
            out.push(f(
                "scheduler_reordering",
                Severity::Warn,
                &d.name,
                format!("{} uses the {s} scheduler (offered: {})", d.name, d.schedulers.join(" ")),
                &format!("{s} reorders and idles to share a disk fairly between processes; on {w} it adds latency and caps concurrency"),
                format!(
                    "echo {} > /sys/block/{}/queue/scheduler (and make it permanent with a udev rule)",
                    if d.kind == "nvme" { "none" } else { "mq-deadline" },
                    d.name
                ),
            ));
        }
    }
    // Read-ahead on the devices in the stack.
    for d in &stack_devs {
        // The kernel itself gives striped devices 2 × their optimal I/O size of read-ahead.
        let limit = 256.max(2 * d.optimal_io_size.unwrap_or(0) / 1024);
        if let Some(ra) = d.read_ahead_kb
            && ra > limit
        {
            out.push(f(
                "read_ahead_large",
                Severity::Warn,
                &d.name,
                format!("{} read_ahead_kb = {ra}", d.name),
                "a database reads pages at random; each cache miss can drag in up to that much more data, wasting disk time and evicting useful pages",
                format!("blockdev --setra {} /dev/{} (= 128 KiB) for devices that hold database files", 256, d.name),
            ));
        }
    }
    // Volatile write cache on the physical disks: flushes must reach it.
    for d in &physical {
        if d.write_cache.as_deref() == Some("write back") && ps.is_none_or(|p| p.fs.barriers) {
            out.push(f(
                "volatile_write_cache",
                Severity::Info,
                &d.name,
                format!("{} has a volatile write cache (write back){}", d.name, if d.fua == Some(false) { ", no FUA: every commit costs a full cache flush" } else { "" }),
                "durability then depends on the cache flushes fsync issues; fsync latency measures the flush, and a device or hypervisor that acknowledges flushes without doing them makes results look impossibly good",
                "measure fsync latency (iolab run --mode rndwr --fsync-all --direct) and compare it with what the device can physically do; keep barriers on".into(),
            ));
        }
    }
    // Virtualization.
    let v = &e.platform.virtualization;
    if v.verdict != "none seen" {
        out.push(f(
            "virtualized",
            Severity::Warn,
            "system",
            format!("running in {} (hypervisor flag: {}{})", v.verdict, v.hypervisor_flag, v.dmi_vendor.as_ref().map(|x| format!(", DMI vendor {x}")).unwrap_or_default()),
            "the hypervisor or host may cache reads and absorb writes and flushes: seed 003 saw a VM report results that were impossible for its disks. Figures describe the virtual disk, not the hardware",
            "compare with the physical limits (fsync latency, link speed), check the host's cache mode (e.g. cache=none for KVM), and benchmark on bare metal when the hardware is the question".into(),
        ));
    }
    // Dirty page limits.
    let k = &e.kernel;
    let mem = e.memory.available_bytes.max(1);
    let limit = match (k.vm_dirty_bytes, k.vm_dirty_ratio) {
        (Some(b), _) if b > 0 => Some(b),
        (_, Some(r)) => Some(mem / 100 * r),
        _ => None,
    };
    if let Some(l) = limit
        && l > 2 << 30
    {
        out.push(f(
            "dirty_limit_large",
            Severity::Warn,
            "system",
            format!(
                "the kernel lets {} of dirty pages accumulate (vm.dirty_ratio {} of {} available, vm.dirty_bytes {}): at 200 MB/s that is {:.0} s of writeback",
                human_bytes(l as f64),
                k.vm_dirty_ratio.map(|x| format!("{x}%")).unwrap_or_else(|| "-".into()),
                human_bytes(mem as f64),
                k.vm_dirty_bytes.unwrap_or(0),
                l as f64 / 200e6
            ),
            "when that much is dirty, writers block and an fsync waits behind unrelated writeback: multi-second stalls for the database (seed 002)",
            "set vm.dirty_background_bytes (e.g. 64 MiB) and vm.dirty_bytes (e.g. 256 MiB-1 GiB) in /etc/sysctl.d/".into(),
        ));
    }
    if e.memory.swap_total_bytes > 0 && k.vm_swappiness.unwrap_or(60) > 10 {
        out.push(f(
            "swap_eager",
            Severity::Warn,
            "system",
            format!("{} of swap with vm.swappiness = {}", human_bytes(e.memory.swap_total_bytes as f64), k.vm_swappiness.unwrap_or(60)),
            "a database sizes its buffer pool to most of memory; an eager kernel swaps parts of it out to keep page cache, and every access to a swapped page is a random disk read",
            "set vm.swappiness to 1-10 (sysctl -w vm.swappiness=1; persist in /etc/sysctl.d/)".into(),
        ));
    }
    out.sort_by_key(|x| std::cmp::Reverse(x.severity));
    out
}

/// Whether the findings warrant exit code 1.
pub fn has_warnings(f: &[Finding]) -> bool {
    f.iter().any(|x| x.severity >= Severity::Warn)
}

pub fn render(path: &str, findings: &[Finding]) -> String {
    let mut s = format!("iolab check {path}: ");
    let n = |sev| findings.iter().filter(|f| f.severity == sev).count();
    s.push_str(&format!(
        "{} critical, {} warn, {} info\n",
        n(Severity::Critical),
        n(Severity::Warn),
        n(Severity::Info)
    ));
    for x in findings {
        let tag = match x.severity {
            Severity::Critical => "CRITICAL",
            Severity::Warn => "WARN",
            Severity::Info => "info",
        };
        s.push_str(&format!(
            "\n[{tag}] {} ({})\n  evidence: {}\n  why:      {}\n  fix:      {}\n",
            x.id, x.subject, x.evidence, x.why, x.fix
        ));
    }
    s
}
