//! `iolab check`: findings about the storage setup that hurt a database, each with its evidence,
//! why it matters and the fix (docs/check.md).
//!
//! The rules are a table, [`RULES`], in the shape both rule tables share
//! ([`crate::analysis::rule::Rule`]): each holds its id, severity, a one-line text saying what it
//! looks at and when it fires (its thresholds formatted from the constants it compares with),
//! the why and the fix as templates, and a function that inspects the [`EnvReport`] and returns a
//! [`Hit`] (subject, evidence, values for the `{name}` placeholders of the texts) for each place
//! it fires. [`check`] runs the table; [`rules_markdown`] renders it for docs/check.md, and
//! tests/check_docs.rs keeps the two equal. The text is `crate::output::check::render`'s.

use crate::analysis::rule::{Fix, md_cell, size};
use crate::model::units::human_bytes;
use crate::system::env::{BlockDevice, EnvReport, Partition, find};
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Critical,
}

impl Severity {
    /// The name in JSON and in docs/check.md.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Critical => "critical",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// One place a check rule fires: `at` is what it is about (a device, a partition, a mount point,
/// "system").
pub type Hit = crate::analysis::rule::Hit<String>;
pub type Inspect = fn(&EnvReport) -> Vec<Hit>;
/// One rule of `iolab check` (the shape both rule tables share: [`crate::analysis::rule::Rule`]).
pub type Rule = crate::analysis::rule::Rule<Severity, Inspect>;

fn hit(subject: &str, evidence: String) -> Hit {
    Hit::new(subject.to_string(), evidence)
}

impl crate::analysis::rule::Rule<Severity, Inspect> {
    /// This rule's findings for the report.
    pub fn findings(&self, e: &EnvReport) -> Vec<Finding> {
        (self.inspect)(e)
            .into_iter()
            .map(|h| Finding {
                id: self.id.into(),
                severity: self.class,
                why: self.why_of(&h),
                fix: self.fix_of(&h),
                subject: h.at,
                evidence: h.evidence,
            })
            .collect()
    }
}

const MIB: u64 = 1 << 20;
const TIB: u64 = 1 << 40;
/// A partition starts on a multiple of this (current partitioners' default).
pub const ALIGN_BYTES: u64 = MIB;
/// xfs `inode32` on a filesystem larger than this crowds the inodes at its start.
pub const INODE32_MAX_BYTES: u64 = TIB;
/// read_ahead_kb above this (or above [`READ_AHEAD_STRIPE_WIDTHS`] × optimal_io_size when that is
/// more).
pub const READ_AHEAD_MAX_KB: u64 = 256;
/// The read-ahead the kernel itself gives a striped device, in stripe widths (optimal_io_size).
pub const READ_AHEAD_STRIPE_WIDTHS: u64 = 2;
/// Dirty pages allowed to accumulate above this many bytes.
pub const DIRTY_MAX_BYTES: u64 = 2 << 30;
/// vm.swappiness above this, with swap configured.
pub const SWAPPINESS_MAX: u64 = 10;

/// Every rule, in the order its findings are listed (before sorting by severity).
pub static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
    Rule {
        id: "partition_misaligned_stripe",
        class: Severity::Critical,
        when: "a partition under PATH starts at an offset that is not a multiple of the RAID stripe unit (md chunk, or the device's minimum_io_size when it reports a stripe)".into(),
        why: "a misaligned partition makes many I/Os straddle two stripe units, so one database page costs two disk operations: misalignment has been measured to cost up to 15% of random reads and 23% of random writes",
        fix: &[Fix {
            case: "",
            template: "re-create the partition starting at a multiple of {stripe_unit_bytes} bytes (parted/sfdisk start at 2048 sectors = 1 MiB, a multiple of common chunk sizes), then restore the data",
        }],
        inspect: partition_misaligned_stripe,
    },
    Rule {
        id: "partition_misaligned",
        class: Severity::Warn,
        when: format!("a partition starts at an offset that is not a multiple of {} (e.g. the old sector 63), and no stripe finding covers it", size(ALIGN_BYTES)),
        why: "partitions not aligned to 1 MiB (the old DOS default starts at sector 63) straddle physical 4 KiB sectors, SSD pages and RAID stripes: misalignment has been measured to cost up to 15% on random reads and 23% on random writes",
        fix: &[Fix {
            case: "",
            template: "re-create the partition starting at sector 2048 (1 MiB); current fdisk, parted and sfdisk do this by default",
        }],
        inspect: partition_misaligned,
    },
    Rule {
        id: "fs_stripe_mismatch",
        class: Severity::Warn,
        when: "xfs sunit/swidth or ext4 stride/stripe_width differ from the md chunk × data disks, or from minimum/optimal_io_size (a value the filesystem does not tell is not compared; none at all is a mismatch)".into(),
        why: "the filesystem places files and its log on stripe boundaries only when it knows the geometry; otherwise allocations and writes straddle stripes and a RAID5/6 pays read-modify-write",
        fix: &[
            Fix {
                case: "xfs",
                template: "mkfs.xfs -d su={stripe_unit_bytes},sw={stripe_units_per_width} (or mount -o sunit={sunit_sectors},swidth={swidth_sectors})",
            },
            Fix {
                case: "ext4, ext3",
                template: "tune2fs -E stride={stride_blocks},stripe_width={stripe_width_blocks}",
            },
        ],
        inspect: fs_stripe_mismatch,
    },
    Rule {
        id: "xfs_inode32_large",
        class: Severity::Warn,
        when: format!("xfs mounted `inode32` on a filesystem larger than {}", size(INODE32_MAX_BYTES)),
        why: "with inode32 all inodes must live in the first 1 TiB: new files, and the data placed near them, crowd the start of the device, and file creation can fail with ENOSPC while space is free",
        fix: &[Fix {
            case: "",
            template: "mount with inode64 (the default since Linux 3.7)",
        }],
        inspect: xfs_inode32_large,
    },
    Rule {
        id: "volatile_cache_no_barriers",
        class: Severity::Critical,
        when: "mounted `nobarrier`/`barrier=0` while a disk below has a volatile (write back) cache".into(),
        why: "without cache flushes an fsync returns while the data is still in the disk's volatile cache: a power loss loses committed transactions and can corrupt the database, and every benchmark looks faster than the storage really is",
        fix: &[Fix {
            case: "",
            template: "remount with barriers on (remove nobarrier / barrier=0), or use a controller with a battery- or flash-backed cache and set it to write back there",
        }],
        inspect: volatile_cache_no_barriers,
    },
    Rule {
        id: "atime_updates",
        class: Severity::Warn,
        when: "the mount updates access times on every read (`strictatime`, or no `noatime`/`relatime`/`lazytime`)".into(),
        why: "each read then also writes an inode update: extra writes and journal traffic for a database that reads all day",
        fix: &[Fix {
            case: "",
            template: "mount {mountpoint} with noatime (or at least relatime)",
        }],
        inspect: atime_updates,
    },
    Rule {
        id: "scheduler_reordering",
        class: Severity::Warn,
        when: "bfq or cfq on an NVMe device, on a disk behind a hardware RAID controller (where noop/none measured about 20% faster), or on a non-rotational device".into(),
        why: "{scheduler} reorders and idles to share a disk fairly between processes; on {device_class} it adds latency and caps concurrency",
        fix: &[Fix {
            case: "",
            template: "echo {scheduler_choice} > /sys/block/{device}/queue/scheduler (and make it permanent with a udev rule)",
        }],
        inspect: scheduler_reordering,
    },
    Rule {
        id: "read_ahead_large",
        class: Severity::Warn,
        when: format!("read_ahead_kb on a device under PATH above {}, or above {} × optimal_io_size (what the kernel itself gives a striped device) when that is more", READ_AHEAD_MAX_KB, READ_AHEAD_STRIPE_WIDTHS),
        why: "a database reads pages at random; each cache miss can drag in up to that much more data, wasting disk time and evicting useful pages",
        fix: &[Fix {
            case: "",
            template: "blockdev --setra 256 /dev/{device} (= 128 KiB) for devices that hold database files",
        }],
        inspect: read_ahead_large,
    },
    Rule {
        id: "volatile_write_cache",
        class: Severity::Info,
        when: "a disk below has a volatile (write back) cache and barriers are on: durability depends on flushes, fsync latency measures them".into(),
        why: "durability then depends on the cache flushes fsync issues; fsync latency measures the flush, and a device or hypervisor that acknowledges flushes without doing them makes results look impossibly good",
        fix: &[Fix {
            case: "",
            template: "measure fsync latency (iolab run --mode rndwr --fsync-all --direct) and compare it with what the device can physically do; keep barriers on",
        }],
        inspect: volatile_write_cache,
    },
    Rule {
        id: "virtualized",
        class: Severity::Warn,
        when: "running in a VM or container (hypervisor CPU flag, DMI vendor, systemd-detect-virt, container markers): the host may cache reads and absorb flushes".into(),
        why: "the hypervisor or host may cache reads and absorb writes and flushes: VMs have been seen reporting results that were impossible for their disks. Figures describe the virtual disk, not the hardware",
        fix: &[Fix {
            case: "",
            template: "compare with the physical limits (fsync latency, link speed), check the host's cache mode (e.g. cache=none for KVM), and benchmark on bare metal when the hardware is the question",
        }],
        inspect: virtualized,
    },
    Rule {
        id: "cloud_volume",
        class: Severity::Warn,
        when: format!("a disk under the path is a cloud provider's network volume, by its model and vendor ({})", CLOUD_VOLUMES.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")),
        why: "a cloud volume's IOPS and throughput are provisioned caps, and many burst above them on credits for minutes (gp2, st1 and sc1 EBS volumes; Azure premium disks below P30; GCP balanced disks) while the instance has a cap of its own shared by all its volumes: a short benchmark measures the burst, not what a database gets after it (Seastar's iotune recorded 262 MB/s on an EBS volume provisioned at 128 MB/s)",
        fix: &[Fix {
            case: "",
            template: "run long enough to empty a burst bucket and judge the result over time: iolab run --steady-state --round 60 --time 45m (or iolab suite pts), then iolab explain ID for a rate_drop (the bucket's size and the baseline) or an iops_cap/bandwidth_cap in a block-size sweep; compare the figures with the volume's and the instance's provisioned IOPS and MB/s",
        }],
        inspect: cloud_volume,
    },
    Rule {
        id: "dirty_limit_large",
        class: Severity::Warn,
        when: format!("more than {} of dirty pages may accumulate (vm.dirty_bytes, else vm.dirty_ratio × available memory)", size(DIRTY_MAX_BYTES)),
        why: "when that much is dirty, writers block and an fsync waits behind unrelated writeback: multi-second stalls for the database",
        fix: &[Fix {
            case: "",
            template: "set vm.dirty_background_bytes (e.g. 64 MiB) and vm.dirty_bytes (e.g. 256 MiB-1 GiB) in /etc/sysctl.d/",
        }],
        inspect: dirty_limit_large,
    },
    Rule {
        id: "swap_eager",
        class: Severity::Warn,
        when: format!("swap configured with vm.swappiness above {}", SWAPPINESS_MAX),
        why: "a database sizes its buffer pool to most of memory; an eager kernel swaps parts of it out to keep page cache, and every access to a swapped page is a random disk read",
        fix: &[Fix {
            case: "",
            template: "set vm.swappiness to 1-10 (sysctl -w vm.swappiness=1; persist in /etc/sysctl.d/)",
        }],
        inspect: swap_eager,
    },
    ]
});

/// All findings for the report (and the stack under its path, when it has one), most severe
/// first; within a severity in the order of `RULES`.
pub fn check(e: &EnvReport) -> Vec<Finding> {
    let mut out: Vec<Finding> = RULES.iter().flat_map(|r| r.findings(e)).collect();
    out.sort_by_key(|x| std::cmp::Reverse(x.severity));
    out
}

/// The rule list of docs/check.md: one table row per rule (id, severity, what it looks at, why,
/// fix), from `RULES`.
pub fn rules_markdown() -> String {
    let mut s = String::from("| id | severity | looks at | why | fix |\n|---|---|---|---|---|\n");
    for r in RULES.iter() {
        let fix: Vec<String> = r
            .fix
            .iter()
            .map(|f| {
                if f.case.is_empty() {
                    md_cell(f.template)
                } else {
                    format!("*{}:* {}", f.case, md_cell(f.template))
                }
            })
            .collect();
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id,
            r.class.name(),
            md_cell(&r.when),
            md_cell(r.why),
            fix.join("<br>")
        ));
    }
    s
}

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

/// Devices in the stack under the path (or every device when there is none).
fn stack_devs(e: &EnvReport) -> Vec<&BlockDevice> {
    match e.path.as_ref() {
        Some(p) => p.stack.iter().filter_map(|l| find(e, &l.name)).collect(),
        None => e.block_devices.iter().collect(),
    }
}

/// The physical disks under the path (or every device built on nothing when there is none).
fn physical(e: &EnvReport) -> Vec<&BlockDevice> {
    match e.path.as_ref() {
        Some(p) => p.physical_disks.iter().filter_map(|n| find(e, n)).collect(),
        None => e
            .block_devices
            .iter()
            .filter(|b| b.slaves.is_empty())
            .collect(),
    }
}

/// The physical disks (of [`physical`]) with a volatile write cache ("write back").
fn write_back_disks(e: &EnvReport) -> impl Iterator<Item = &BlockDevice> {
    physical(e)
        .into_iter()
        .filter(|d| d.write_cache.as_deref() == Some("write back"))
}

/// Every partition in the stack under the path (or on the devices), with the stripe unit it
/// should respect: its disk's own geometry, or an array above it.
fn partitions(e: &EnvReport) -> Vec<(&Partition, Option<u64>)> {
    let parts: Vec<(&BlockDevice, &Partition)> = match e.path.as_ref() {
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
    let stack = stack_devs(e);
    parts
        .into_iter()
        .map(|(disk, p)| {
            let stripe = expected_stripe(disk).map(|s| s.0).or_else(|| {
                disk.holders
                    .iter()
                    .chain(stack.iter().map(|d| &d.name))
                    .filter_map(|h| find(e, h))
                    .find_map(expected_stripe)
                    .map(|s| s.0)
            });
            (p, stripe)
        })
        .collect()
}

/// Whether the partition starts off its stripe unit.
fn off_stripe(p: &Partition, stripe: Option<u64>) -> Option<u64> {
    stripe.filter(|su| !p.start_bytes.is_multiple_of(*su))
}

fn partition_misaligned_stripe(e: &EnvReport) -> Vec<Hit> {
    partitions(e)
        .into_iter()
        .filter_map(|(p, stripe)| {
            let su = off_stripe(p, stripe)?;
            Some(
                hit(
                    &p.name,
                    format!(
                        "{} starts at sector {} = {} bytes, not a multiple of the {su}-byte RAID stripe unit",
                        p.name, p.start_sector, p.start_bytes
                    ),
                )
                .var("stripe_unit_bytes", su),
            )
        })
        .collect()
}

fn partition_misaligned(e: &EnvReport) -> Vec<Hit> {
    partitions(e)
        .into_iter()
        // the stripe finding replaces this one
        .filter(|(p, stripe)| off_stripe(p, *stripe).is_none() && p.start_bytes % ALIGN_BYTES != 0)
        .map(|(p, _)| {
            hit(
                &p.name,
                format!(
                    "{} starts at sector {} = {} bytes, not a multiple of 1 MiB",
                    p.name, p.start_sector, p.start_bytes
                ),
            )
        })
        .collect()
}

fn fs_stripe_mismatch(e: &EnvReport) -> Vec<Hit> {
    let Some(p) = e.path.as_ref() else {
        return Vec::new();
    };
    let fs = &p.fs;
    let Some((su, sw, src)) = p
        .stack
        .iter()
        .find(|l| l.kind != "partition")
        .and_then(|l| find(e, &l.name))
        .and_then(expected_stripe)
    else {
        return Vec::new();
    };
    let bs = fs.block_size.unwrap_or(4096);
    let (fix, have) = match fs.fstype.as_str() {
        "xfs" => (
            0,
            (
                fs.xfs_sunit_bytes.unwrap_or(0),
                fs.xfs_swidth_bytes.unwrap_or(0),
            ),
        ),
        "ext4" | "ext3" => (
            1,
            (
                fs.ext4_stride_blocks.unwrap_or(0) * bs,
                fs.ext4_stripe_width_blocks.unwrap_or(0) * bs,
            ),
        ),
        _ => return Vec::new(),
    };
    let (hsu, hsw) = have;
    // A value the filesystem does not tell (0: e.g. ext4's stride without tune2fs) is not a
    // mismatch; only known values are compared.
    if !((hsu != 0 && hsu != su) || (hsw != 0 && hsw != sw) || (hsu == 0 && hsw == 0)) {
        return Vec::new();
    }
    vec![
        hit(
            &p.mountpoint,
            format!(
                "{} has stripe unit {hsu} / width {hsw} bytes; the storage has {su} / {sw} ({src})",
                fs.fstype
            ),
        )
        .fix(fix)
        .var("stripe_unit_bytes", su)
        .var("stripe_units_per_width", sw / su.max(1))
        .var("sunit_sectors", su / 512)
        .var("swidth_sectors", sw / 512)
        .var("stride_blocks", su / bs)
        .var("stripe_width_blocks", sw / bs),
    ]
}

fn xfs_inode32_large(e: &EnvReport) -> Vec<Hit> {
    let Some(p) = e.path.as_ref() else {
        return Vec::new();
    };
    let fs = &p.fs;
    if fs.fstype == "xfs"
        && fs.xfs_inode_mode.as_deref() == Some("inode32")
        && fs.total_bytes.unwrap_or(0) > INODE32_MAX_BYTES
    {
        vec![hit(
            &p.mountpoint,
            format!(
                "xfs mounted inode32 on {} (more than 1 TiB)",
                human_bytes(fs.total_bytes.unwrap_or(0) as f64)
            ),
        )]
    } else {
        Vec::new()
    }
}

fn volatile_cache_no_barriers(e: &EnvReport) -> Vec<Hit> {
    let Some(p) = e.path.as_ref().filter(|p| !p.fs.barriers) else {
        return Vec::new();
    };
    write_back_disks(e)
        .map(|d| {
            hit(
                &p.mountpoint,
                format!(
                    "{} is mounted without barriers (nobarrier/barrier=0) and {} has a volatile write cache (write back)",
                    p.mountpoint, d.name
                ),
            )
        })
        .collect()
}

fn atime_updates(e: &EnvReport) -> Vec<Hit> {
    let Some(p) = e.path.as_ref() else {
        return Vec::new();
    };
    let opts = &p.mount_options;
    let strict = opts.iter().any(|o| o == "strictatime");
    if !strict
        && opts
            .iter()
            .any(|o| o == "noatime" || o == "relatime" || o == "lazytime")
    {
        return Vec::new();
    }
    vec![
        hit(
            &p.mountpoint,
            format!(
                "{} is mounted with {} (every read updates the access time)",
                p.mountpoint,
                if strict { "strictatime" } else { "atime" }
            ),
        )
        .var("mountpoint", &p.mountpoint),
    ]
}

fn scheduler_reordering(e: &EnvReport) -> Vec<Hit> {
    let hw_raid = !e.raid_controllers.is_empty();
    let mut out = Vec::new();
    for d in physical(e) {
        let Some(s) = d.scheduler.as_deref() else {
            continue;
        };
        if s != "bfq" && s != "cfq" {
            continue;
        }
        let class = if d.kind == "nvme" {
            "an NVMe device, whose own queues schedule far better than a host-side fair queue"
        } else if hw_raid && d.kind == "disk" {
            "a device behind a hardware RAID controller: one device to Linux but many spindles, which the fair queue starves by serving one process at a time (noop/none measured about 20% faster)"
        } else if d.rotational == Some(false) {
            "a non-rotational device, where there is no seek to save"
        } else {
            continue;
        };
        out.push(
            hit(
                &d.name,
                format!(
                    "{} uses the {s} scheduler (offered: {})",
                    d.name,
                    d.schedulers.join(" ")
                ),
            )
            .var("scheduler", s)
            .var("device_class", class)
            .var(
                "scheduler_choice",
                if d.kind == "nvme" {
                    "none"
                } else {
                    "mq-deadline"
                },
            )
            .var("device", &d.name),
        );
    }
    out
}

fn read_ahead_large(e: &EnvReport) -> Vec<Hit> {
    stack_devs(e)
        .into_iter()
        .filter_map(|d| {
            // The kernel itself gives striped devices 2 × their optimal I/O size of read-ahead.
            let limit = READ_AHEAD_MAX_KB
                .max(READ_AHEAD_STRIPE_WIDTHS * d.optimal_io_size.unwrap_or(0) / 1024);
            let ra = d.read_ahead_kb.filter(|ra| *ra > limit)?;
            Some(hit(&d.name, format!("{} read_ahead_kb = {ra}", d.name)).var("device", &d.name))
        })
        .collect()
}

fn volatile_write_cache(e: &EnvReport) -> Vec<Hit> {
    if !e.path.as_ref().is_none_or(|p| p.fs.barriers) {
        return Vec::new();
    }
    write_back_disks(e)
        .map(|d| {
            hit(
                &d.name,
                format!(
                    "{} has a volatile write cache (write back){}",
                    d.name,
                    if d.fua == Some(false) {
                        ", no FUA: every commit costs a full cache flush"
                    } else {
                        ""
                    }
                ),
            )
        })
        .collect()
}

fn virtualized(e: &EnvReport) -> Vec<Hit> {
    let v = &e.platform.virtualization;
    if v.verdict == "none seen" {
        return Vec::new();
    }
    vec![hit(
        "system",
        format!(
            "running in {} (hypervisor flag: {}{})",
            v.verdict,
            v.hypervisor_flag,
            v.dmi_vendor
                .as_ref()
                .map(|x| format!(", DMI vendor {x}"))
                .unwrap_or_default()
        ),
    )]
}

/// A cloud provider's network volume, as its disk names itself to Linux.
pub struct CloudVolume {
    /// The provider's name for it.
    pub name: &'static str,
    /// The disk's model starts with this (case-insensitive).
    pub model: &'static str,
    /// And its vendor, where the provider sets one (SCSI), starts with this.
    pub vendor: Option<&'static str>,
}

/// The network volumes of the large providers, by what their disks report: EBS's NVMe
/// controller model, Persistent Disk's SCSI and NVMe models, Azure's Hyper-V virtual disks
/// (vendor `Msft`). Local instance storage (`Amazon EC2 NVMe Instance Storage`, `nvme_card`,
/// Azure's temporary disk aside) is not a network volume and is not listed.
pub const CLOUD_VOLUMES: &[CloudVolume] = &[
    CloudVolume {
        name: "Amazon EBS",
        model: "Amazon Elastic Block Store",
        vendor: None,
    },
    CloudVolume {
        name: "Google Persistent Disk",
        model: "PersistentDisk",
        vendor: None,
    },
    CloudVolume {
        name: "Google Persistent Disk (NVMe)",
        model: "nvme_card-pd",
        vendor: None,
    },
    CloudVolume {
        name: "Azure managed disk",
        model: "Virtual Disk",
        vendor: Some("Msft"),
    },
];

fn cloud_volume(e: &EnvReport) -> Vec<Hit> {
    let starts = |v: &Option<String>, p: &str| {
        v.as_deref()
            .is_some_and(|x| x.trim().to_lowercase().starts_with(&p.to_lowercase()))
    };
    physical(e)
        .into_iter()
        .filter_map(|d| {
            let c = CLOUD_VOLUMES.iter().find(|c| {
                starts(&d.model, c.model) && c.vendor.is_none_or(|v| starts(&d.vendor, v))
            })?;
            Some(hit(
                &d.name,
                format!(
                    "{} is a cloud volume: {} (model {:?}{})",
                    d.name,
                    c.name,
                    d.model.as_deref().unwrap_or("").trim(),
                    d.vendor
                        .as_deref()
                        .map(|v| format!(", vendor {:?}", v.trim()))
                        .unwrap_or_default()
                ),
            ))
        })
        .collect()
}

fn dirty_limit_large(e: &EnvReport) -> Vec<Hit> {
    let k = &e.kernel;
    let mem = e.memory.available_bytes.max(1);
    let limit = match (k.vm_dirty_bytes, k.vm_dirty_ratio) {
        (Some(b), _) if b > 0 => Some(b),
        (_, Some(r)) => Some(mem / 100 * r),
        _ => None,
    };
    let Some(l) = limit.filter(|l| *l > DIRTY_MAX_BYTES) else {
        return Vec::new();
    };
    vec![hit(
        "system",
        format!(
            "the kernel lets {} of dirty pages accumulate (vm.dirty_ratio {} of {} available, vm.dirty_bytes {}): at 200 MB/s that is {:.0} s of writeback",
            human_bytes(l as f64),
            k.vm_dirty_ratio
                .map(|x| format!("{x}%"))
                .unwrap_or_else(|| "-".into()),
            human_bytes(mem as f64),
            k.vm_dirty_bytes.unwrap_or(0),
            l as f64 / 200e6
        ),
    )]
}

fn swap_eager(e: &EnvReport) -> Vec<Hit> {
    let swappiness = e.kernel.vm_swappiness.unwrap_or(60);
    if e.memory.swap_total_bytes == 0 || swappiness <= SWAPPINESS_MAX {
        return Vec::new();
    }
    vec![hit(
        "system",
        format!(
            "{} of swap with vm.swappiness = {swappiness}",
            human_bytes(e.memory.swap_total_bytes as f64)
        ),
    )]
}

/// Whether the findings warrant exit code 1.
pub fn has_warnings(f: &[Finding]) -> bool {
    f.iter().any(|x| x.severity >= Severity::Warn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_every_rule_has_a_fix() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
        for r in RULES.iter() {
            assert!(!r.fix.is_empty(), "{}", r.id);
            assert!(
                r.fix.len() == 1 || r.fix.iter().all(|f| !f.case.is_empty()),
                "{}",
                r.id
            );
            assert!(!r.when.contains('\n') && !r.why.contains('\n'), "{}", r.id);
        }
    }

    #[test]
    fn rules_markdown_has_a_row_per_rule() {
        let md = rules_markdown();
        assert_eq!(md.lines().count(), 2 + RULES.len());
        for r in RULES.iter() {
            assert!(md.contains(&format!("| `{}` | {} |", r.id, r.class.name())));
        }
    }
}
