//! The explain rule table, [`RULES`]: each rule's thresholds (the constants its text is
//! formatted from), its entry (id, layer, limit or also, when it fires, why) and its inspect
//! function. Adding a rule is an entry here, its function here, a fixture test in
//! tests/env_fixtures.rs and docs/explain.md regenerated (CONTRIBUTING.md).

pub use super::also::{MIN_FSYNCS, SPLIT_FRACTION};
use super::also::{absorbed_flush, misaligned, shared_device, split_requests};
use super::facts::hit;
pub use super::facts::{At, Hit, MIN_OPS};
use super::facts::{Facts, await_ms, fmt_n, little, members, pct, queue_engine};
use super::{Confidence, Kind, Layer};
use crate::analysis::rule::{md_cell, num, percent};
use crate::measure::warnings::{OTHER_IO_FLOOR_BPS, OTHER_IO_SHARE};
use crate::model::units::{fmt_ns, human_bytes};
use crate::store::compare::NOISY_CV_PCT;
use crate::system::fsyncprobe::{CANNOT_TELL_SHARE, MAX_RPM};
use std::sync::LazyLock;

/// An explain rule's class: the layer it names and whether it names the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    pub layer: Layer,
    pub kind: Kind,
}

pub type Inspect = for<'a, 'b> fn(&'b Facts<'a>) -> Vec<Hit>;
/// One explain rule (the shape both rule tables share: [`crate::analysis::rule::Rule`]).
pub type Rule = crate::analysis::rule::Rule<Class, Inspect>;

/// A share as a rule's text says it: 0.5 → `half`, 1/3 → `a third`.
fn share(x: f64) -> String {
    match (x * 1e6).round() as i64 {
        500_000 => "half".into(),
        333_333 => "a third".into(),
        250_000 => "a quarter".into(),
        _ => percent(x),
    }
}

/// A multiple as a rule's text says it: 2 → `twice`.
fn times(x: f64) -> String {
    if x == 2.0 {
        "twice".into()
    } else {
        format!("{} times", num(x))
    }
}

// Thresholds (docs/explain.md lists them with each rule).
/// Measured rate within this fraction of a cgroup limit: throttled.
pub const THROTTLE_TOLERANCE: f64 = 0.10;
/// The device served less than this fraction of what the workload read: page cache.
pub const CACHE_DEVICE_FRACTION: f64 = 0.10;
/// Page-cache residency at start at or above this: page cache.
pub const CACHE_RESIDENT_PCT: f64 = 50.0;
/// iolab's CPU per thread at or above this (percent of one CPU): CPU bound.
pub const CPU_PER_THREAD_PCT: f64 = 80.0;
/// The whole system's CPUs busier than this (percent, not idle nor waiting on I/O) while
/// iolab used at least [`CPU_SYSTEM_MIN_PROCESS_PCT`] of one: CPU bound.
pub const CPU_SYSTEM_BUSY_PCT: f64 = 95.0;
pub const CPU_SYSTEM_MIN_PROCESS_PCT: f64 = 50.0;
/// Queue-depth bound with more than one I/O in flight (in a sweep): the device's await at most
/// this many times its await at the sweep's fewest in flight (its low-load latency).
pub const QD_MAX_LOAD_RATIO: f64 = 1.25;
/// Queue-depth bound: the device's queue (aqu-sz) held at most this many times the workload's
/// own I/Os in flight, plus [`QD_QUEUE_SLACK`]: nothing else was queued at the device.
pub const QD_MAX_QUEUE_SHARE: f64 = 1.5;
/// The requests beyond [`QD_MAX_QUEUE_SHARE`] × in flight that the device's queue may hold.
pub const QD_QUEUE_SLACK: f64 = 1.0;
/// Queue-depth bound: the device's queue held at least this share of the workload's I/Os in
/// flight: they reached the device rather than waiting above it.
pub const QD_MIN_QUEUE_SHARE: f64 = 0.5;
/// Little's law check: IOPS × mean latency must be at least this fraction of what was in flight.
pub const LITTLE_MIN: f64 = 0.8;
/// Mean latency at least this (ns): the time goes to I/O, not to copying memory.
pub const QD_MIN_LAT_NS: f64 = 50_000.0;
/// Filesystem serialisation: at least this many in flight, and the device queue (aqu-sz)
/// below in-flight divided by [`SERIAL_QUEUE_RATIO`], with the device's queue at most
/// [`SERIAL_MAX_AQU`].
pub const SERIAL_MIN_IN_FLIGHT: f64 = 4.0;
pub const SERIAL_QUEUE_RATIO: f64 = 3.0;
pub const SERIAL_MAX_AQU: f64 = 2.0;
/// Filesystem serialisation in a sweep: the mean (per-thread) latency rose by at least this
/// share of the rise in in-flight I/Os from the sweep's fewest.
pub const SERIAL_LAT_SHARE: f64 = 0.5;
/// Device saturated: %util at least this, aqu-sz at least [`SAT_MIN_AQU`], await at least
/// [`SAT_AWAIT_RATIO`] × the service time (svctm) for a rotational disk.
pub const SAT_UTIL_PCT: f64 = 95.0;
pub const SAT_MIN_AQU: f64 = 4.0;
pub const SAT_AWAIT_RATIO: f64 = 3.0;
/// (Device saturated, in a sweep, any device: await at least [`SAT_AWAIT_RATIO`] × the
/// device's await at the sweep's fewest in flight, its low-load latency.)
/// Scheduler reordering: the device queue below in-flight divided by this.
pub const SCHED_QUEUE_RATIO: f64 = 2.0;
/// A sweep step is flat when IOPS rose by less than this fraction while in flight at least
/// doubled, the device queue took at least [`FLAT_QUEUE_SHARE`] of the added I/Os, and the
/// device was at least [`FLAT_UTIL_PCT`] busy.
/// How many times the I/Os in flight must grow from one sweep step to the next it is compared with.
pub const FLAT_MIN_STEP: f64 = 2.0;
/// A cap needs this many block sizes in the sweep.
pub const CAP_MIN_SIZES: usize = 3;
/// ... the largest at least this many times the smallest.
pub const CAP_MIN_SPAN: f64 = 4.0;
/// The capped figure within this share of its mean at every size.
pub const CAP_FLAT: f64 = 0.10;
/// The other figure moved at least this many times from the smallest size to the largest.
pub const CAP_MOVE: f64 = 2.0;
/// A cap shared by the devices of `iolab together`: alone, the devices add up to at least this
/// many times the best of them (each does a fair share on its own) ...
pub const SHARED_MIN_ADD: f64 = 1.5;
/// ... while all at once they do at most this many times the best alone.
pub const SHARED_MAX_GAIN: f64 = 1.25;
pub const FLAT_GAIN: f64 = 0.10;
pub const FLAT_QUEUE_SHARE: f64 = 0.5;
pub const FLAT_UTIL_PCT: f64 = 90.0;

/// Every rule, limits first in the order they are tried.
pub static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
    Rule {
        id: "throttled",
        class: Class { layer: Layer::Throttle, kind: Kind::Limit },
        when: format!(
            "a cgroup I/O limit recorded in the run's environment (cgroup v1 blkio.throttle.*_device or v2 io.max of iolab's cgroup or an ancestor) applies to a device under --dir, and the measured rate of that kind (the device's r/s, w/s, rkB/s, wkB/s when iostat figures exist, else the workload's) is within ±{} of it",
            percent(THROTTLE_TOLERANCE)
        ),
        fix: &[],
        why: "the kernel holds I/O back in the cgroup at {limit}: the figures measure the limit, not the storage",
        inspect: |f| throttled(f).into_iter().collect(),
    },
    Rule {
        id: "page_cache",
        class: Class { layer: Layer::PageCache, kind: Kind::Limit },
        when: format!(
            "not the null engine, at least {} reads (or writes) and: the file set was ≥ {} % resident in the page cache at start, or the device served < {} of the bytes the workload read (buffered reads), or wrote < {} of what buffered writes without fsync wrote",
            MIN_OPS, num(CACHE_RESIDENT_PCT), percent(CACHE_DEVICE_FRACTION), percent(CACHE_DEVICE_FRACTION)
        ),
        fix: &[],
        why: "the operations were served by the page cache (memory), not the device: the figures measure memory copies and say nothing about the storage",
        inspect: |f| page_cache(f).into_iter().collect(),
    },
    Rule {
        id: "cpu_bound",
        class: Class { layer: Layer::Cpu, kind: Kind::Limit },
        when: format!(
            "the null engine (no I/O at all), or iolab used ≥ {} % of one CPU per thread (user + system), or the CPUs were ≥ {} % busy (neither idle nor waiting on I/O) while iolab used ≥ {} % of one",
            num(CPU_PER_THREAD_PCT), num(CPU_SYSTEM_BUSY_PCT), num(CPU_SYSTEM_MIN_PROCESS_PCT)
        ),
        fix: &[],
        why: "the threads spend their time on the CPU (iolab's own work, system calls, memory copies, or other processes) rather than waiting for I/O: the CPU, not the storage, sets the rate",
        inspect: |f| cpu_bound(f).into_iter().collect(),
    },
    Rule {
        id: "fs_serialisation",
        class: Class { layer: Layer::Filesystem, kind: Kind::Limit },
        when: format!(
            "O_DIRECT writes, at least {} in flight (IOPS × mean latency ≥ {} of threads × iodepth, so the threads did wait in the system call), while the device's queue (aqu-sz) stayed ≤ {} and below {} of that; in a sweep, compared with the same job at the sweep's fewest in flight: per-thread (mean) latency up by at least {} the rise in in-flight I/Os with the device's queue still ≤ {} adds that evidence (high confidence), latency that did not rise says so (low confidence)",
            num(SERIAL_MIN_IN_FLIGHT), percent(LITTLE_MIN), num(SERIAL_MAX_AQU), share(1.0 / SERIAL_QUEUE_RATIO), share(SERIAL_LAT_SHARE), num(SERIAL_MAX_AQU)
        ),
        fix: &[],
        why: "the threads wait inside the filesystem, not at the device: {fs} takes an exclusive lock for these writes (with the {layout} layout, {layout_why}), so they reach the device one at a time and more threads add latency, not IOPS",
        inspect: |f| fs_serialisation(f).into_iter().collect(),
    },
    Rule {
        id: "scheduler_reordering",
        class: Class { layer: Layer::Scheduler, kind: Kind::Limit },
        when: format!(
            "a device under --dir that is rotational, has one hardware queue (one entry in /sys/block/X/mq/, or no blk-mq with cfq/deadline), a sorting scheduler (mq-deadline, bfq, kyber; cfq, deadline) and several members (an md array's, or a RAID logical drive's optimal_io_size / minimum_io_size), with more than one I/O in flight and the device's queue (aqu-sz) below {} of the members and of the in-flight I/Os: the threads scale far below the member count",
            share(1.0 / SCHED_QUEUE_RATIO)
        ),
        fix: &[],
        why: "{scheduler} sorts the requests of the device's one queue and hands them on a few at a time; in front of {device_class} that keeps most of the members idle, so more threads add waiting above the device, not IOPS",
        inspect: |f| scheduler_reordering(f).into_iter().collect(),
    },
    Rule {
        id: "device_saturated",
        class: Class { layer: Layer::Device, kind: Kind::Limit },
        when: format!(
            "the device at ≥ {} % util with aqu-sz ≥ {} and await ≥ {} × the service time it shows at low load. In a run alone only a rotational physical disk (kind disk, not loop/dm/md/virtio) qualifies, with its svctm as that service time (it serves one request at a time); medium confidence. In a sweep, any device: its await at the sweep's fewest in flight for the same job is the low-load one, for a cell no other rule explained; medium confidence, and the evidence says %util alone is weak evidence where the device may serve requests in parallel. When the sweep also shows IOPS flat as threads rise (device_flat's test), that is added to it and the confidence is high",
            num(SAT_UTIL_PCT), num(SAT_MIN_AQU), num(SAT_AWAIT_RATIO)
        ),
        fix: &[],
        why: "the device is busy all the time and requests wait in its queue for several times what one costs at low load: more threads only add waiting time (await grows, IOPS does not)",
        inspect: |f| device_saturated(f).into_iter().collect(),
    },
    Rule {
        id: "device_flat",
        class: Class { layer: Layer::Device, kind: Kind::Limit },
        when: format!(
            "in a sweep, two cells that differ only in threads or iodepth, the second with at least {} as many in flight: its IOPS are < {} higher while the device's queue (aqu-sz) grew by at least {} the added in-flight I/Os and the device was ≥ {} % busy; replaces queue_depth_bound or none on both cells, adds its evidence to device_saturated (a limit found by another rule stays)",
            times(FLAT_MIN_STEP), percent(FLAT_GAIN), share(FLAT_QUEUE_SHARE), num(FLAT_UTIL_PCT)
        ),
        fix: &[],
        why: "more I/Os in flight reached the device and waited in its queue, but it completed no more of them: the device (or what serves it) is at its limit, so more threads or a deeper queue only add latency",
        inspect: |_| Vec::new(),
    },
    Rule {
        id: "queue_depth_bound",
        class: Class { layer: Layer::QueueDepth, kind: Kind::Limit },
        when: format!(
            "not paced by --rate, mean latency ≥ {} µs, Little's law holds (IOPS × mean latency ≥ {} of in flight, threads × iodepth: the time goes to waiting for I/O), the device's queue (aqu-sz, when measured) held the workload's I/Os and nothing else (between {} × and {} × in flight + {}), and the device is far from saturated: its latency at this load is its low-load latency. In a run alone that is shown only with one I/O in flight (the lowest load there is); with more, in a sweep, when the device's await is ≤ {} × its await at the sweep's fewest in flight for the same job (for a cell no other rule explained). No cap on the in-flight count",
            num(QD_MIN_LAT_NS / 1000.0), percent(LITTLE_MIN), num(QD_MIN_QUEUE_SHARE), num(QD_MAX_QUEUE_SHARE), num(QD_QUEUE_SLACK), num(QD_MAX_LOAD_RATIO)
        ),
        fix: &[],
        why: "with {in_flight} in flight and each I/O taking {lat}, IOPS cannot exceed in-flight / latency (Little's law): the workload, not the storage, sets the rate; more threads or a deeper queue would raise it until the device saturates",
        inspect: |f| queue_depth_bound(f).into_iter().collect(),
    },
    Rule {
        id: "absorbed_flush",
        class: Class { layer: Layer::Flush, kind: Kind::Also },
        when: format!(
            "at least {} fsyncs and fsync-probe's verdict on their median latency is `absorbed` (a rotational device flushing more than {} % faster than one revolution of a {} rpm disk)",
            MIN_FSYNCS, fmt_n(CANNOT_TELL_SHARE * 100.0), fmt_n(MAX_RPM)
        ),
        fix: &[],
        why: "a flush that reaches a rotating disk costs at least part of a revolution; faster ones are acknowledged by a volatile cache (controller, disk or hypervisor), so fsync latency and commit rates look better than the durable storage is",
        inspect: |f| absorbed_flush(f).into_iter().collect(),
    },
    Rule {
        id: "shared_device",
        class: Class { layer: Layer::Device, kind: Kind::Also },
        when: format!(
            "the run's honesty check found I/O on the device that was not iolab's (warning `other_io`): in a direction iolab's O_DIRECT figures (or a direction iolab did not use) fall short of the device's own bytes by more than {} of them and {} MiB/s",
            percent(OTHER_IO_SHARE), num(OTHER_IO_FLOOR_BPS / 1048576.0)
        ),
        fix: &[],
        why: "another process used the same device during the run: its I/O took the device's time and queue beside iolab's, so the throughput is lower and the latency higher than the storage gives one workload alone",
        inspect: |f| shared_device(f).into_iter().collect(),
    },
    Rule {
        id: "misaligned",
        class: Class { layer: Layer::Alignment, kind: Kind::Also },
        when: "`iolab check`'s partition_misaligned or partition_misaligned_stripe fires on a partition under --dir in the run's environment".into(),
        fix: &[],
        why: "the partition starts off the device's (or stripe's) boundaries, so I/Os straddle two physical blocks or stripe units and one request costs two",
        inspect: |f| misaligned(f).into_iter().collect(),
    },
    Rule {
        id: "split_requests",
        class: Class { layer: Layer::Alignment, kind: Kind::Also },
        when: format!(
            "O_DIRECT reads (at least {}) where the device's average read request (rareq-sz) is below {} the block size",
            MIN_OPS, share(SPLIT_FRACTION)
        ),
        fix: &[],
        why: "each read reaches the device as several smaller requests (max_sectors_kb, alignment or the layer stack splits it): more requests per I/O than the workload asked for",
        inspect: |f| split_requests(f).into_iter().collect(),
    },
    Rule {
        id: "iops_cap",
        class: Class { layer: Layer::Throttle, kind: Kind::Also },
        when: format!(
            "in a sweep, the cells that differ only in their one block size ({} sizes or more, the largest at least {} the smallest): IOPS within ±{} % of their mean at every size while bytes/s rose at least {} from the smallest size to the largest",
            CAP_MIN_SIZES, times(CAP_MIN_SPAN), num(CAP_FLAT * 100.0), times(CAP_MOVE)
        ),
        fix: &[],
        why: "the rate is a fixed number of operations per second whatever their size: a limit set in operations (a cgroup's IOPS limit, a cloud volume's provisioned IOPS, a controller's command rate), not the medium, which moves fewer large operations than small ones; one shared by two devices is the host's or the instance's",
        inspect: |_| Vec::new(),
    },
    Rule {
        id: "bandwidth_cap",
        class: Class { layer: Layer::Throttle, kind: Kind::Also },
        when: format!(
            "in a sweep, the cells that differ only in their one block size ({} sizes or more, the largest at least {} the smallest): bytes/s within ±{} % of their mean at every size while IOPS fell at least {} from the smallest size to the largest",
            CAP_MIN_SIZES, times(CAP_MIN_SPAN), num(CAP_FLAT * 100.0), times(CAP_MOVE)
        ),
        fix: &[],
        why: "the rate is a fixed number of bytes per second whatever the operation size: a limit set in bytes (a cgroup's bps limit, a cloud volume's provisioned throughput, a link), or the medium's streaming rate; one shared by two devices is the host's or the instance's",
        inspect: |_| Vec::new(),
    },
    Rule {
        id: "shared_cap",
        class: Class { layer: Layer::Throttle, kind: Kind::Also },
        when: format!(
            "in `iolab together`, the same workload on each directory alone and on all at once: alone, their I/Os per second add up to at least {} the best of them, at once they make at most {} the best alone",
            times(SHARED_MIN_ADD), times(SHARED_MAX_GAIN)
        ),
        fix: &[],
        why: "each device alone reaches the figure and all of them together only once: the limit is above the devices, shared by them (the host's or the instance's limit on its volumes, one disk under its partitions, a shared controller, link or throttle), so a database on both gets no more than on one",
        inspect: |_| Vec::new(),
    },
    Rule {
        id: "rate_drop",
        class: Class { layer: Layer::Device, kind: Kind::Also },
        when: format!(
            "the mode's I/Os per second, second by second, split best (least squares) into a level and a later one at most {} of it, with at least {} whole seconds on each side, every second before nearer the first level and every second after nearer the second (a drop that stays); where it fell is placed within its second from the two levels, and the volume written (or moved) before it and the area above the lower level (a burst bucket's size, refilled at that level) are given",
            percent(super::overtime::DROP_SHARE), super::overtime::MIN_SIDE_S
        ),
        fix: &[],
        why: "the device gave a higher rate for a while and then a lower one that lasted: a cache that filled (an SLC cache, a write cache), garbage collection that began, or a burst bucket that emptied; the lower rate is what a database running for a long time gets",
        inspect: |f| super::overtime::rate_drop(f).into_iter().collect(),
    },
    Rule {
        id: "first_touch",
        class: Class { layer: Layer::Device, kind: Kind::Also },
        when: format!(
            "a read mode (writes at most {} of the bytes) whose I/Os per second split best (least squares) into a level and a later one at least {} of it, with at least {} whole seconds on each side, every second before nearer the first level and every second after nearer the second (a rise that stays); the volume read before it is compared with the set's size (medium confidence from {} to {} passes over it, low otherwise)",
            percent(super::overtime::READS_WRITE_SHARE), times(1.0 / super::overtime::DROP_SHARE), super::overtime::MIN_SIDE_S,
            num(super::overtime::ONE_PASS.0), num(super::overtime::ONE_PASS.1)
        ),
        fix: &[],
        why: "the first read of each region was slower than the reads after it: a volume restored from a snapshot fetches each block from object storage on its first read (EBS, Persistent Disk: AWS advises reading every block once, fio or dd, before production), a thin or deduplicating device maps it, or a cache in front warms; the later level is what a database gets once its data was read, the earlier what a cold start gets",
        inspect: |f| super::overtime::first_touch(f).into_iter().collect(),
    },
    Rule {
        id: "noisy",
        class: Class { layer: Layer::Noise, kind: Kind::Limit },
        when: format!(
            "a group of repetitions whose IOPS for the cell (reads + writes) have a coefficient of variation above {} %; it replaces every other finding of the cell",
            num(NOISY_CV_PCT)
        ),
        fix: &[],
        why: "the repetitions disagree by more than the effect most changes are expected to have: no conclusion about a limit can be drawn from them",
        inspect: |_| Vec::new(),
    },
    Rule {
        id: "none",
        class: Class { layer: Layer::None, kind: Kind::Limit },
        when: "no other rule fires".into(),
        fix: &[],
        why: "no limit identified from the figures: none of the rules' conditions holds, so iolab does not guess",
        inspect: |_| Vec::new(),
    },
    ]
});

fn throttled(f: &Facts) -> Option<Hit> {
    // the device's rates are the phase's: the phase's totals are judged against the limit
    if f.role.is_some() {
        return None;
    }
    let env = f.env?;
    let stack = f.stack();
    let r = &f.cell.results;
    for l in &env.cgroup_io {
        let Some(name) = l.device.as_deref() else {
            continue;
        };
        if !stack.iter().any(|s| s == name) {
            continue;
        }
        let dev = f
            .cell
            .device
            .as_ref()
            .and_then(|d| d.summary.devices.get(name));
        let (workload, device, unit) = match l.kind.as_str() {
            "read_iops" => (r.read.iops, dev.map(|d| d.r_s), "IOPS"),
            "write_iops" => (r.write.iops, dev.map(|d| d.w_s), "IOPS"),
            "read_bps" => (r.read.bytes_per_sec, dev.map(|d| d.rkb_s * 1024.0), "B/s"),
            "write_bps" => (r.write.bytes_per_sec, dev.map(|d| d.wkb_s * 1024.0), "B/s"),
            _ => continue,
        };
        let limit = l.limit as f64;
        let measured = device.unwrap_or(workload);
        if limit <= 0.0 || (measured / limit - 1.0).abs() > THROTTLE_TOLERANCE {
            continue;
        }
        let show = |x: f64| {
            if unit == "B/s" {
                format!("{}/s", human_bytes(x))
            } else {
                format!("{} IOPS", fmt_n(x))
            }
        };
        let op = if l.kind.starts_with("read") {
            "read"
        } else {
            "write"
        };
        let dev_part = device
            .map(|d| format!(", device {name} {}", show(d)))
            .unwrap_or_default();
        let limit_text = format!(
            "{} on {name} ({}), {}",
            show(limit),
            l.dev,
            l.file.rsplit('/').next().unwrap_or(&l.file)
        );
        let mut h = hit(
            Confidence::High,
            format!(
                "workload {op} {}{dev_part}, cgroup v{} limit {} {unit} on {name} ({}) in {}: {} of the limit",
                show(workload),
                l.cgroup_version,
                fmt_n(limit),
                l.dev,
                l.file,
                pct(measured, limit)
            ),
            format!(
                "{} --rate {}  # below the limit, outside the cgroup or with the limit in {} raised, to measure the storage",
                f.run_cmd,
                if unit == "IOPS" {
                    (limit * 0.8).round() as u64
                } else {
                    ((limit * 0.8) / f.job.bs_bytes.max(1) as f64).round() as u64
                },
                l.file
            ),
        )?;
        h.vars.push(("limit", limit_text));
        return Some(h);
    }
    None
}

fn page_cache(f: &Facts) -> Option<Hit> {
    if f.null {
        return None;
    }
    let (reads, read_bps) = f.io_read;
    let (writes, write_bps) = f.io_write;
    let r = &f.cell.results;
    let resident = if f.resident_is_own {
        f.cell.cache_resident_pct_at_start
    } else {
        0.0
    };
    let next = format!(
        "iolab run {} --direct  # or a file set larger than memory ({})",
        f.opts_without_threads.replace(" --direct", "") + &format!(" --threads {}", f.job.threads),
        f.env
            .map(|e| human_bytes(e.memory.total_bytes as f64))
            .unwrap_or_else(|| "RAM".into())
    );
    if reads + writes >= MIN_OPS && resident >= CACHE_RESIDENT_PCT {
        return hit(
            Confidence::High,
            format!(
                "{resident:.1} % of the file set was in the page cache when the cell started; {}{}",
                f.dev_text(),
                f.shared()
            ),
            next,
        );
    }
    let (_, d) = f.dev?;
    if f.direct {
        return None;
    }
    // For a role the device's bytes are every role's: the role's reads alone exceeding ten times
    // what the device served in total still cannot have come from the device.
    if reads >= MIN_OPS
        && !f.cell.job.fileset.layout.reads_zeros()
        && read_bps > 0.0
        && d.rkb_s * 1024.0 < CACHE_DEVICE_FRACTION * read_bps
    {
        return hit(
            Confidence::High,
            format!(
                "device read {}/s ({} r/s) vs workload {}/s ({} IOPS): {} of the bytes{}",
                human_bytes(d.rkb_s * 1024.0),
                fmt_n(d.r_s),
                human_bytes(read_bps),
                fmt_n(r.read.iops),
                pct(d.rkb_s * 1024.0, read_bps),
                f.shared()
            ),
            next,
        );
    }
    let fsyncs = r.fsync.ops > 0 || f.job.open_flags.sync || f.job.open_flags.dsync;
    if writes >= MIN_OPS
        && !fsyncs
        && write_bps > 0.0
        && d.wkb_s * 1024.0 < CACHE_DEVICE_FRACTION * write_bps
    {
        return hit(
            Confidence::Medium,
            format!(
                "device wrote {}/s vs workload {}/s: {} of the bytes, no fsync{}",
                human_bytes(d.wkb_s * 1024.0),
                human_bytes(write_bps),
                pct(d.wkb_s * 1024.0, write_bps),
                f.shared()
            ),
            next,
        );
    }
    None
}

fn cpu_bound(f: &Facts) -> Option<Hit> {
    // iolab's CPU time is the whole process's, the phase's: a role is CPU bound only when it
    // does no I/O at all (the null engine); the CPU figures are judged on the phase
    if let Some(name) = f.role {
        if !f.null {
            return None;
        }
        return hit(
            Confidence::High,
            format!(
                "role {name} uses the null engine, which does no I/O: {} IOPS at {} mean are iolab's own cost per operation (iolab's CPU, {:.0} % of one, is the whole phase's, all roles together)",
                fmt_n(f.iops),
                fmt_ns(f.lat_mean_ns),
                f.cpu_pct()
            ),
            format!(
                "{}  # the null engine does no I/O: this is iolab's own cost per operation",
                f.run_cmd
            ),
        );
    }
    let cpu = f.cpu_pct();
    let threads = f.job.threads.max(1) as f64;
    let per = cpu / threads;
    let next = if f.null {
        format!(
            "{}  # the null engine does no I/O: this is iolab's own cost per operation",
            f.run_cmd
        )
    } else if queue_engine(f.job.engine) {
        f.run_cmd.clone()
    } else {
        f.run_cmd.replace(
            &format!("--engine {}", f.job.engine.name()),
            "--engine io_uring",
        ) + " --iodepth 16"
    };
    if per >= CPU_PER_THREAD_PCT || f.null {
        return hit(
            Confidence::High,
            format!(
                "{}iolab used {cpu:.0} % of one CPU (user {:.0} %, system {:.0} %) with {} thread{}: {per:.0} % per thread; {} IOPS at {} mean",
                if f.null {
                    "the null engine does no I/O; "
                } else {
                    ""
                },
                f.cell.cpu.user_pct,
                f.cell.cpu.sys_pct,
                f.job.threads,
                if f.job.threads == 1 { "" } else { "s" },
                fmt_n(f.iops),
                fmt_ns(f.lat_mean_ns)
            ),
            next,
        );
    }
    let c = f.sys_cpu?;
    let busy = 100.0 - c.idle - c.iowait;
    if busy >= CPU_SYSTEM_BUSY_PCT && cpu >= CPU_SYSTEM_MIN_PROCESS_PCT {
        return hit(
            Confidence::Medium,
            format!(
                "the CPUs were {busy:.0} % busy (user {:.0} %, system {:.0} %, idle {:.0} %, iowait {:.0} %); iolab used {cpu:.0} % of one CPU",
                c.user, c.system, c.idle, c.iowait
            ),
            next,
        );
    }
    None
}

fn fs_serialisation(f: &Facts) -> Option<Hit> {
    let (_, writes) = f.ops();
    if !f.direct || writes < MIN_OPS || f.in_flight < SERIAL_MIN_IN_FLIGHT {
        return None;
    }
    let (name, d) = f.dev?;
    let waiting = little(f);
    if waiting < LITTLE_MIN * f.in_flight
        || d.aqu_sz > SERIAL_MAX_AQU
        || d.aqu_sz * SERIAL_QUEUE_RATIO > f.in_flight
    {
        return None;
    }
    let layout = f.cell.job.fileset.layout;
    let allocating = matches!(
        layout,
        crate::model::job::Layout::Holes
            | crate::model::job::Layout::Extend
            | crate::model::job::Layout::Unwritten
    );
    let fs = if f.fs_type.is_empty() {
        "the filesystem".to_string()
    } else {
        f.fs_type.to_string()
    };
    let mut h = hit(
        if allocating {
            Confidence::High
        } else {
            Confidence::Medium
        },
        format!(
            "{} in flight ({} IOPS × {} mean = {waiting:.1} waiting in the system call) but device {name} aqu-sz {:.2} ({} w/s, %util {:.0}); {fs}, layout {layout}{}",
            fmt_n(f.in_flight),
            fmt_n(f.iops),
            fmt_ns(f.lat_mean_ns),
            d.aqu_sz,
            fmt_n(d.w_s),
            d.util_pct,
            f.shared()
        ),
        if allocating {
            format!(
                "iolab sweep {} --threads {} --layout overwrite,{layout}",
                f.opts_without_threads
                    .replace(&format!(" --layout {layout}"), ""),
                f.job.threads
            )
        } else {
            format!(
                "iolab sweep {} --threads 1,{}",
                f.opts_without_threads, f.job.threads
            )
        },
    )?;
    h.vars.push(("fs", fs));
    h.vars.push(("layout", layout.to_string()));
    h.vars.push((
        "layout_why",
        if allocating {
            "each write allocates blocks or converts extents"
        } else {
            "writes still take the inode lock exclusively here"
        }
        .to_string(),
    ));
    Some(h)
}

/// Schedulers that sort requests (and hold them back to sort them): blk-mq's mq-deadline,
/// bfq and kyber; cfq and deadline on kernels before blk-mq.
pub const SORTING_SCHEDULERS: &[&str] = &["mq-deadline", "bfq", "kyber", "cfq", "deadline"];

fn scheduler_reordering(f: &Facts) -> Option<Hit> {
    // the device's queue is the phase's: judged on the phase's totals
    if f.role.is_some() {
        return None;
    }
    let env = f.env?;
    // the scaling: how many requests the device had at once (aqu-sz) for the I/Os in flight
    let (dev_name, d) = f.dev?;
    if f.in_flight <= 1.0 {
        return None;
    }
    for name in f.stack() {
        let Some(b) = crate::system::env::find(env, &name) else {
            continue;
        };
        let Some(sched) = b.scheduler.as_deref() else {
            continue;
        };
        if b.rotational != Some(true) || !SORTING_SCHEDULERS.contains(&sched) {
            continue;
        }
        // one hardware queue: blk-mq says how many; without blk-mq (cfq, deadline) there is one
        let queues = match b.hw_queues {
            Some(1) => "1 hardware queue".to_string(),
            None if matches!(sched, "cfq" | "deadline") => "single-queue block layer".into(),
            _ => continue,
        };
        let Some((n, how)) = members(b) else {
            continue;
        };
        // far below the members: fewer than half of them had a request, though the workload
        // had at least twice as many in flight as reached the device
        if d.aqu_sz * SCHED_QUEUE_RATIO > (n as f64).min(f.in_flight) {
            continue;
        }
        let class = if env.raid_controllers.is_empty() {
            format!("{n} rotating members")
        } else {
            format!(
                "{n} rotating members behind {}",
                env.raid_controllers.join(", ")
            )
        };
        let choice = if b.schedulers.iter().any(|x| x == "none") {
            "none"
        } else {
            "noop"
        };
        let mut out = hit(
            Confidence::Medium,
            format!(
                "{name}: rotational, {queues}, scheduler {sched}, {how}; device {dev_name} aqu-sz {:.2} for {} in flight: at most {:.1} of {n} members busy; {} IOPS",
                d.aqu_sz,
                fmt_n(f.in_flight),
                d.aqu_sz,
                fmt_n(f.iops)
            ),
            format!(
                "iolab sweep {} --threads {} --scheduler {sched},{choice}",
                f.opts_without_threads, f.job.threads,
            ),
        )?;
        out.vars.push(("scheduler", sched.to_string()));
        out.vars.push(("device_class", class));
        return Some(out);
    }
    None
}

fn device_saturated(f: &Facts) -> Option<Hit> {
    // a busy device is the phase's: judged on the phase's totals
    if f.role.is_some() {
        return None;
    }
    let (name, d) = f.dev?;
    if d.util_pct < SAT_UTIL_PCT || d.aqu_sz < SAT_MIN_AQU {
        return None;
    }
    // Only a rotational disk serves one request at a time, so only there is its svctm (busy
    // time per request) its service time at low load. On any other device svctm = %util /
    // IOPS understates what one request costs, await / svctm is aqu-sz / %util by Little's
    // law whatever the load, and one run has no low-load latency to compare with: a sweep
    // gives it (`low_load_steps`).
    let b = crate::system::env::find(f.env?, name)?;
    if b.kind != "disk" || b.rotational != Some(true) || d.svctm_ms <= 0.0 {
        return None;
    }
    let await_ms = await_ms(d);
    if await_ms < SAT_AWAIT_RATIO * d.svctm_ms {
        return None;
    }
    hit(
        Confidence::Medium,
        format!(
            "rotational disk {name}: %util {:.0}, aqu-sz {:.1}, await {await_ms:.2} ms vs service time {:.2} ms ({:.1}×); {} r/s + {} w/s",
            d.util_pct,
            d.aqu_sz,
            d.svctm_ms,
            await_ms / d.svctm_ms,
            fmt_n(d.r_s),
            fmt_n(d.w_s)
        ),
        f.sweep_cmd(),
    )
}

/// Little's law holds, the run is not paced and its latency is I/O's: the common part of
/// queue_depth_bound in a run alone and in a sweep.
pub fn waits_for_io(f: &Facts) -> bool {
    let (reads, writes) = f.ops();
    if f.null || reads + writes < MIN_OPS || f.lat_mean_ns < QD_MIN_LAT_NS {
        return false;
    }
    if let Some(rate) = f.job.rate_iops
        && f.iops >= 0.9 * rate as f64
    {
        return false;
    }
    little(f) >= LITTLE_MIN * f.in_flight
}

/// The device's queue held the workload's I/Os and nothing else: they reached it (a queue
/// short of them: they wait above the device, on a lock or a scheduler, and more threads would
/// not help), and no one else's I/O queued there. A role's device figures are the phase's:
/// not judged per role.
pub fn queue_is_own(f: &Facts) -> bool {
    match f.dev {
        Some((_, d)) if f.role.is_none() => {
            d.aqu_sz <= QD_MAX_QUEUE_SHARE * f.in_flight + QD_QUEUE_SLACK
                && d.aqu_sz >= QD_MIN_QUEUE_SHARE * f.in_flight
        }
        _ => true,
    }
}

fn qd_depth(f: &Facts) -> String {
    if queue_engine(f.job.engine) {
        format!("{} threads × iodepth {}", f.job.threads, f.job.iodepth)
    } else {
        format!(
            "{} thread{} × 1 ({})",
            f.job.threads,
            if f.job.threads == 1 { "" } else { "s" },
            f.job.engine.name()
        )
    }
}

/// The queue_depth_bound finding, with `low`: why the latency is the low-load latency.
pub fn qd_hit(f: &Facts, confidence: Confidence, low: &str) -> Option<Hit> {
    let util = match f.dev {
        Some((_, d)) if f.role.is_none() && d.util_pct >= SAT_UTIL_PCT => format!(
            "; %util {:.0} only says an I/O was always outstanding, not that the device was at its limit",
            d.util_pct
        ),
        _ => String::new(),
    };
    let mut h = hit(
        confidence,
        format!(
            "{} IOPS × {} mean latency = {:.2} in flight, of {} ({}); at most {} IOPS at this latency; {low}; {}{util}",
            fmt_n(f.iops),
            fmt_ns(f.lat_mean_ns),
            little(f),
            fmt_n(f.in_flight),
            qd_depth(f),
            fmt_n(f.in_flight / (f.lat_mean_ns / 1e9)),
            f.dev_text_shared()
        ),
        f.sweep_cmd(),
    )?;
    h.vars.push(("in_flight", fmt_n(f.in_flight)));
    h.vars.push(("lat", fmt_ns(f.lat_mean_ns)));
    Some(h)
}

fn queue_depth_bound(f: &Facts) -> Option<Hit> {
    // One I/O in flight is the lowest load there is: the latency at it is the device's
    // low-load latency, so the device is as far from saturated as the workload can leave it.
    // With more in flight one run cannot tell a device serving them in parallel (bound by the
    // workload) from one queueing them (saturated): a sweep over threads or iodepth gives the
    // low-load latency to compare with (`low_load_steps`).
    if f.in_flight > 1.0 || !waits_for_io(f) || !queue_is_own(f) {
        return None;
    }
    qd_hit(
        f,
        if f.dev.is_some() {
            Confidence::High
        } else {
            Confidence::Low
        },
        "one I/O at a time, the lowest load there is: its latency is the low-load latency",
    )
}

pub fn rules_markdown() -> String {
    let mut s = String::from("| rule | layer | kind | fires when | why |\n|---|---|---|---|---|\n");
    for r in RULES.iter() {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id,
            r.class.layer.name(),
            match r.class.kind {
                Kind::Limit => "limit",
                Kind::Also => "also",
            },
            md_cell(&r.when),
            md_cell(r.why)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_documented() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
        let md = rules_markdown();
        assert_eq!(md.lines().count(), 2 + RULES.len());
    }
}
