//! `iolab explain`: which layer limits a result, from the stored figures only (docs/explain.md).
//!
//! A pure function of a run document ([`explain_run`]) or of a group's runs ([`explain_group`]):
//! the workload's figures, the device's iostat -x figures on the same timeline, CPU time, the
//! environment snapshot (including the cgroup I/O limits recorded at run time) and, for
//! groups, the repetitions' spread. Nothing is read from the live system, so a stored run is
//! explained the same way the day after.
//!
//! The rules are a table, [`RULES`] (id, layer, when it fires with its thresholds, why), and
//! one function per rule. The "limit" rules are tried in the order of the table and the first
//! that fires names the cell's limiting layer; the "also" rules (flushes, alignment) add
//! what they find beside it. A cell where nothing fires gets one `none` finding with its
//! figures. [`rules_markdown`] renders the table for docs/explain.md (tests/check_docs.rs keeps
//! them equal).

use crate::model::device::{CpuPct, Iostat};
use crate::model::env::EnvReport;
use crate::model::job::{EngineKind, Job};
use crate::model::run::{CellJob, CellResult, RunDoc};
use crate::model::units::{Bytes, fmt_ns, human_bytes};
use crate::store::compare::{NOISY_CV_PCT, Stat};
use serde::{Deserialize, Serialize};

pub const EXPLAIN_SCHEMA: &str = "iolab-explain/1";

/// The layer a finding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    PageCache,
    Device,
    QueueDepth,
    Throttle,
    Filesystem,
    Cpu,
    Flush,
    Alignment,
    Scheduler,
    Noise,
    None,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::PageCache => "page_cache",
            Layer::Device => "device",
            Layer::QueueDepth => "queue_depth",
            Layer::Throttle => "throttle",
            Layer::Filesystem => "filesystem",
            Layer::Cpu => "cpu",
            Layer::Flush => "flush",
            Layer::Alignment => "alignment",
            Layer::Scheduler => "scheduler",
            Layer::Noise => "noise",
            Layer::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

/// One finding about one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub layer: Layer,
    /// The rule that fired (docs/explain.md).
    pub rule: String,
    pub confidence: Confidence,
    /// The figures, with units.
    pub evidence: String,
    pub why: String,
    /// What to try next: a runnable iolab command line.
    pub next: String,
}

/// The findings of one measured cell (one mode of one run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellExplain {
    /// The stored run the figures come from (absent for a run not saved).
    pub run_id: Option<i64>,
    pub mode: String,
    /// "4KiB, 1 thread, sync, direct"
    pub setup: String,
    /// A role of a roles phase (`--role`, `--profile db`): its name; absent for a mode's cell and
    /// for the phase's totals. Its device and CPU figures are the phase's, shared by the roles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub findings: Vec<Finding>,
}

/// What `iolab explain` prints (schema `iolab-explain/1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    pub schema: String,
    /// "run 12", "group g3", "this run"
    pub subject: String,
    pub cells: Vec<CellExplain>,
}

/// Whether a rule names the limit (the first that fires wins) or adds to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Limit,
    Also,
}

/// One rule: its texts as data and the function that decides whether it fires.
pub struct Rule {
    pub id: &'static str,
    pub layer: Layer,
    pub kind: Kind,
    /// When it fires, with its thresholds.
    pub when: &'static str,
    pub why: &'static str,
    pub inspect: fn(&Facts) -> Option<Hit>,
}

/// What a rule found: its confidence, evidence and next command (the why is the rule's,
/// with `{name}` placeholders filled from `vars`).
pub struct Hit {
    pub confidence: Confidence,
    pub evidence: String,
    pub next: String,
    pub vars: Vec<(&'static str, String)>,
}

// Thresholds (docs/explain.md lists them with each rule).
/// Measured rate within this fraction of a cgroup limit: throttled.
pub const THROTTLE_TOLERANCE: f64 = 0.10;
/// The device served less than this fraction of what the workload read: page cache.
pub const CACHE_DEVICE_FRACTION: f64 = 0.10;
/// Page-cache residency at start at or above this: page cache.
pub const CACHE_RESIDENT_PCT: f64 = 50.0;
/// Fewer operations than this say nothing about a cache or a queue.
pub const MIN_OPS: u64 = 100;
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
/// own I/Os in flight, plus one: nothing else was queued at the device.
pub const QD_MAX_QUEUE_SHARE: f64 = 1.5;
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
/// Device saturated, in a sweep (any device): await at least [`SAT_AWAIT_RATIO`] × the
/// device's await at the sweep's fewest in flight (its low-load latency).
/// Scheduler reordering: the device queue below in-flight divided by this.
pub const SCHED_QUEUE_RATIO: f64 = 2.0;
/// Split requests: the device's average read request below this fraction of the block size.
pub const SPLIT_FRACTION: f64 = 0.5;
/// A sweep step is flat when IOPS rose by less than this fraction while in flight at least
/// doubled, the device queue took at least [`FLAT_QUEUE_SHARE`] of the added I/Os, and the
/// device was at least [`FLAT_UTIL_PCT`] busy.
pub const FLAT_GAIN: f64 = 0.10;
pub const FLAT_QUEUE_SHARE: f64 = 0.5;
pub const FLAT_UTIL_PCT: f64 = 90.0;
/// Flushes counted: at least this many fsyncs.
pub const MIN_FSYNCS: u64 = 10;

/// Every rule, limits first in the order they are tried.
pub static RULES: &[Rule] = &[
    Rule {
        id: "throttled",
        layer: Layer::Throttle,
        kind: Kind::Limit,
        when: "a cgroup I/O limit recorded in the run's environment (cgroup v1 blkio.throttle.*_device or v2 io.max of iolab's cgroup or an ancestor) applies to a device under --dir, and the measured rate of that kind (the device's r/s, w/s, rkB/s, wkB/s when iostat figures exist, else the workload's) is within ±10 % of it",
        why: "the kernel holds I/O back in the cgroup at {limit}: the figures measure the limit, not the storage",
        inspect: throttled,
    },
    Rule {
        id: "page_cache",
        layer: Layer::PageCache,
        kind: Kind::Limit,
        when: "not the null engine, at least 100 reads (or writes) and: the file set was ≥ 50 % resident in the page cache at start, or the device served < 10 % of the bytes the workload read (buffered reads), or wrote < 10 % of what buffered writes without fsync wrote",
        why: "the operations were served by the page cache (memory), not the device: the figures measure memory copies and say nothing about the storage",
        inspect: page_cache,
    },
    Rule {
        id: "cpu_bound",
        layer: Layer::Cpu,
        kind: Kind::Limit,
        when: "the null engine (no I/O at all), or iolab used ≥ 80 % of one CPU per thread (user + system), or the CPUs were ≥ 95 % busy (neither idle nor waiting on I/O) while iolab used ≥ 50 % of one",
        why: "the threads spend their time on the CPU (iolab's own work, system calls, memory copies, or other processes) rather than waiting for I/O: the CPU, not the storage, sets the rate",
        inspect: cpu_bound,
    },
    Rule {
        id: "fs_serialisation",
        layer: Layer::Filesystem,
        kind: Kind::Limit,
        when: "O_DIRECT writes, at least 4 in flight (IOPS × mean latency ≥ 80 % of threads × iodepth, so the threads did wait in the system call), while the device's queue (aqu-sz) stayed ≤ 2 and below a third of that; in a sweep, compared with the same job at the sweep's fewest in flight: per-thread (mean) latency up by at least half the rise in in-flight I/Os with the device's queue still ≤ 2 adds that evidence (high confidence), latency that did not rise says so (low confidence)",
        why: "the threads wait inside the filesystem, not at the device: {fs} takes an exclusive lock for these writes (with the {layout} layout, {layout_why}), so they reach the device one at a time and more threads add latency, not IOPS",
        inspect: fs_serialisation,
    },
    Rule {
        id: "scheduler_reordering",
        layer: Layer::Scheduler,
        kind: Kind::Limit,
        when: "a device under --dir that is rotational, has one hardware queue (one entry in /sys/block/X/mq/, or no blk-mq with cfq/deadline), a sorting scheduler (mq-deadline, bfq, kyber; cfq, deadline) and several members (an md array's, or a RAID logical drive's optimal_io_size / minimum_io_size), with more than one I/O in flight and the device's queue (aqu-sz) below half of the members and of the in-flight I/Os: the threads scale far below the member count",
        why: "{scheduler} sorts the requests of the device's one queue and hands them on a few at a time; in front of {device_class} that keeps most of the members idle, so more threads add waiting above the device, not IOPS",
        inspect: scheduler_reordering,
    },
    Rule {
        id: "device_saturated",
        layer: Layer::Device,
        kind: Kind::Limit,
        when: "the device at ≥ 95 % util with aqu-sz ≥ 4 and await ≥ 3 × the service time it shows at low load. In a run alone only a rotational physical disk (kind disk, not loop/dm/md/virtio) qualifies, with its svctm as that service time (it serves one request at a time); medium confidence. In a sweep, any device: its await at the sweep's fewest in flight for the same job is the low-load one, for a cell no other rule explained; medium confidence, and the evidence says %util alone is weak evidence where the device may serve requests in parallel. When the sweep also shows IOPS flat as threads rise (device_flat's test), that is added to it and the confidence is high",
        why: "the device is busy all the time and requests wait in its queue for several times what one costs at low load: more threads only add waiting time (await grows, IOPS does not)",
        inspect: device_saturated,
    },
    Rule {
        id: "device_flat",
        layer: Layer::Device,
        kind: Kind::Limit,
        when: "in a sweep, two cells that differ only in threads or iodepth, the second with at least twice as many in flight: its IOPS are < 10 % higher while the device's queue (aqu-sz) grew by at least half the added in-flight I/Os and the device was ≥ 90 % busy; replaces queue_depth_bound or none on both cells, adds its evidence to device_saturated (a limit found by another rule stays)",
        why: "more I/Os in flight reached the device and waited in its queue, but it completed no more of them: the device (or what serves it) is at its limit, so more threads or a deeper queue only add latency",
        inspect: |_| None,
    },
    Rule {
        id: "queue_depth_bound",
        layer: Layer::QueueDepth,
        kind: Kind::Limit,
        when: "not paced by --rate, mean latency ≥ 50 µs, Little's law holds (IOPS × mean latency ≥ 80 % of in flight, threads × iodepth: the time goes to waiting for I/O), the device's queue (aqu-sz, when measured) held the workload's I/Os and nothing else (between 0.5 × and 1.5 × in flight + 1), and the device is far from saturated: its latency at this load is its low-load latency. In a run alone that is shown only with one I/O in flight (the lowest load there is); with more, in a sweep, when the device's await is ≤ 1.25 × its await at the sweep's fewest in flight for the same job (for a cell no other rule explained). No cap on the in-flight count",
        why: "with {in_flight} in flight and each I/O taking {lat}, IOPS cannot exceed in-flight / latency (Little's law): the workload, not the storage, sets the rate; more threads or a deeper queue would raise it until the device saturates",
        inspect: queue_depth_bound,
    },
    Rule {
        id: "absorbed_flush",
        layer: Layer::Flush,
        kind: Kind::Also,
        when: "at least 10 fsyncs and fsync-probe's verdict on their median latency is `absorbed` (a rotational device flushing faster than a 15,000 rpm disk can)",
        why: "a flush that reaches a rotating disk costs at least part of a revolution; faster ones are acknowledged by a volatile cache (controller, disk or hypervisor), so fsync latency and commit rates look better than the durable storage is",
        inspect: absorbed_flush,
    },
    Rule {
        id: "misaligned",
        layer: Layer::Alignment,
        kind: Kind::Also,
        when: "`iolab check`'s partition_misaligned or partition_misaligned_stripe fires on a partition under --dir in the run's environment",
        why: "the partition starts off the device's (or stripe's) boundaries, so I/Os straddle two physical blocks or stripe units and one request costs two",
        inspect: misaligned,
    },
    Rule {
        id: "split_requests",
        layer: Layer::Alignment,
        kind: Kind::Also,
        when: "O_DIRECT reads (at least 100) where the device's average read request (rareq-sz) is below half the block size",
        why: "each read reaches the device as several smaller requests (max_sectors_kb, alignment or the layer stack splits it): more requests per I/O than the workload asked for",
        inspect: split_requests,
    },
    Rule {
        id: "noisy",
        layer: Layer::Noise,
        kind: Kind::Limit,
        when: "a group of repetitions whose IOPS for the cell (reads + writes) have a coefficient of variation above 5 %; it replaces every other finding of the cell",
        why: "the repetitions disagree by more than the effect most changes are expected to have: no conclusion about a limit can be drawn from them",
        inspect: |_| None,
    },
    Rule {
        id: "none",
        layer: Layer::None,
        kind: Kind::Limit,
        when: "no other rule fires",
        why: "no limit identified from the figures: none of the rules' conditions holds, so iolab does not guess",
        inspect: |_| None,
    },
];

/// What the rules read about one cell.
pub struct Facts<'a> {
    pub cell: &'a CellResult,
    pub job: &'a Job,
    pub env: Option<&'a EnvReport>,
    pub fs_type: &'a str,
    /// threads × iodepth (queue engines), else threads
    pub in_flight: f64,
    /// reads + writes per second, and their mean latency (ns, weighted by ops)
    pub iops: f64,
    pub lat_mean_ns: f64,
    /// the device the filesystem is on and its figures over the window
    pub dev: Option<(&'a str, &'a Iostat)>,
    pub sys_cpu: Option<&'a CpuPct>,
    /// the command line of this cell (`iolab run ...`) and the same options for a sweep
    pub run_cmd: String,
    pub opts_without_threads: String,
    /// The role this cell is (its own job and results, the phase's device and CPU figures);
    /// None for a mode's cell or a phase's totals.
    pub role: Option<&'a str>,
    /// Whether the cell does no I/O at all (the null engine; for a phase's totals: every role).
    pub null: bool,
    /// O_DIRECT only (for a phase's totals: every role).
    pub direct: bool,
    /// The reads and writes (ops, bytes/s) that went to files: a phase's totals leave out its
    /// null-engine roles, which do no I/O.
    pub io_read: (u64, f64),
    pub io_write: (u64, f64),
    /// For a role: whether the phase's page-cache residency at start was measured on the role's
    /// own file set (the first role's set, shared with the phase).
    pub resident_is_own: bool,
}

fn fmt_n(x: f64) -> String {
    let r = x.round();
    if x.abs() >= 100.0 || ((x - r).abs() < 0.05 && r.abs() < 1e15) {
        let s = format!("{}", r.abs() as i64);
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if r < 0.0 {
            out.insert(0, '-');
        }
        out
    } else {
        format!("{x:.1}")
    }
}

fn pct(a: f64, b: f64) -> String {
    if b <= 0.0 {
        return "n/a".into();
    }
    let p = a / b * 100.0;
    if p < 0.1 {
        format!("{p:.3} %")
    } else {
        format!("{p:.1} %")
    }
}

fn queue_engine(e: EngineKind) -> bool {
    matches!(e, EngineKind::IoUring | EngineKind::Libaio)
}

/// The options that make this cell again, as `iolab run` takes them (without `--threads` when
/// `threads` is false).
fn run_options(cj: &CellJob, mode: &str, threads: bool) -> String {
    let j = &cj.job;
    let fs = &cj.fileset;
    let mut a = vec![format!("--mode {mode}")];
    match &fs.device {
        Some(d) => a.push(format!("--device {}", shell_word(&d.to_string_lossy()))),
        None => {
            a.push(format!("--dir {}", shell_word(&fs.dir.to_string_lossy())));
            a.push(format!("--files {}", fs.files));
            a.push(format!("--size {}", Bytes(fs.total_bytes)));
            if fs.layout != Default::default() {
                a.push(format!("--layout {}", fs.layout));
            }
        }
    }
    a.push(format!("--bs {}", shell_word(&j.bs_label())));
    a.push(format!("--engine {}", j.engine.name()));
    if threads {
        a.push(format!("--threads {}", j.threads));
        if queue_engine(j.engine) {
            a.push(format!("--iodepth {}", j.iodepth));
        }
    }
    if j.direct {
        a.push("--direct".into());
    }
    a.join(" ")
}

/// The `iolab run` options that run a roles phase again: the shared set and one `--role` per
/// role (a role with a set of its own gives its size, files and layout).
fn roles_options(cell: &CellResult) -> String {
    let fs = &cell.job.fileset;
    let mut a = vec![
        format!("--dir {}", shell_word(&fs.dir.to_string_lossy())),
        format!("--files {}", fs.files),
        format!("--size {}", Bytes(fs.total_bytes)),
    ];
    for r in &cell.roles {
        let j = &r.job.job;
        let mut k = vec![
            format!("mode={}", r.mode),
            format!("bs={}", j.bs_label()),
            format!("threads={}", j.threads),
            format!("engine={}", j.engine.name()),
        ];
        if queue_engine(j.engine) {
            k.push(format!("iodepth={}", j.iodepth));
        }
        k.push(format!("direct={}", j.direct));
        let own = &r.job.fileset;
        if own.dir != fs.dir {
            k.push(format!("size={}", Bytes(own.total_bytes)));
            k.push(format!("files={}", own.files));
            if own.layout != Default::default() {
                k.push(format!("layout={}", own.layout));
            }
        }
        a.push(format!(
            "--role {}",
            shell_word(&format!("{}:{}", r.name, k.join(",")))
        ));
    }
    a.join(" ")
}

fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:,=+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

impl<'a> Facts<'a> {
    pub fn of(doc: &'a RunDoc, cell: &'a CellResult) -> Facts<'a> {
        let job = &cell.job.job;
        let depth = if queue_engine(job.engine) {
            job.iodepth.max(1)
        } else {
            1
        };
        let r = &cell.results;
        let iops = r.read.iops + r.write.iops;
        let lat = |o: &crate::model::run::OpResult| o.lat_ns.as_ref().map_or(0.0, |l| l.mean);
        let n = (r.read.ops + r.write.ops) as f64;
        let lat_mean_ns = if n > 0.0 {
            (lat(&r.read) * r.read.ops as f64 + lat(&r.write) * r.write.ops as f64) / n
        } else {
            0.0
        };
        let dev = cell.device.as_ref().and_then(|d| {
            let name = d.devices.first()?;
            Some((name.as_str(), d.summary.devices.get(name)?))
        });
        let io: Vec<&crate::model::run::Results> = if cell.roles.is_empty() {
            vec![r]
        } else {
            cell.roles
                .iter()
                .filter(|x| x.job.job.engine != EngineKind::Null)
                .map(|x| &x.results)
                .collect()
        };
        let in_flight = if cell.roles.is_empty() {
            (job.threads.max(1) * depth) as f64
        } else {
            cell.roles
                .iter()
                .map(|x| {
                    let j = &x.job.job;
                    let d = if queue_engine(j.engine) {
                        j.iodepth.max(1)
                    } else {
                        1
                    };
                    (j.threads.max(1) * d) as f64
                })
                .sum()
        };
        Facts {
            role: None,
            null: if cell.roles.is_empty() {
                job.engine == EngineKind::Null
            } else {
                cell.roles
                    .iter()
                    .all(|x| x.job.job.engine == EngineKind::Null)
            },
            direct: if cell.roles.is_empty() {
                job.direct
            } else {
                cell.roles.iter().all(|x| x.job.job.direct)
            },
            io_read: (
                io.iter().map(|x| x.read.ops).sum(),
                io.iter().map(|x| x.read.bytes_per_sec).sum(),
            ),
            io_write: (
                io.iter().map(|x| x.write.ops).sum(),
                io.iter().map(|x| x.write.bytes_per_sec).sum(),
            ),
            resident_is_own: true,
            cell,
            job,
            env: doc.system.as_ref(),
            fs_type: &doc.env.fs_type,
            in_flight,
            iops,
            lat_mean_ns,
            dev,
            sys_cpu: cell.device.as_ref().map(|d| &d.summary.cpu),
            run_cmd: match cell.roles.first() {
                None => format!("iolab run {}", run_options(&cell.job, &cell.mode, true)),
                Some(_) => format!("iolab run {}", roles_options(cell)),
            },
            // A roles phase cannot be swept: the sweeps it suggests vary its first role alone.
            opts_without_threads: match cell.roles.first() {
                None => run_options(&cell.job, &cell.mode, false),
                Some(r) => run_options(&r.job, &r.mode, false),
            },
        }
    }

    /// The facts of one role of a roles phase: `cell` is the role made a cell (its job and
    /// results, [`role_cell`]), `phase` the phase's cell (device and CPU figures). The next
    /// commands run the role alone.
    pub fn of_role(
        doc: &'a RunDoc,
        phase: &'a CellResult,
        cell: &'a CellResult,
        name: &'a str,
    ) -> Facts<'a> {
        let mut f = Facts::of(doc, cell);
        f.role = Some(name);
        f.resident_is_own = phase.roles.first().map(|r| &r.job.fileset) == Some(&phase.job.fileset)
            && cell.job.fileset == phase.job.fileset;
        f
    }

    /// " (the device's figures are the whole phase's, all roles')" for a role.
    fn shared(&self) -> &'static str {
        if self.role.is_some() {
            " (device figures: the whole phase's, all roles together)"
        } else {
            ""
        }
    }

    fn sweep_cmd(&self) -> String {
        if queue_engine(self.job.engine) {
            format!(
                "iolab sweep {} --threads {} --iodepth 1,4,16,32,64",
                self.opts_without_threads, self.job.threads
            )
        } else {
            format!(
                "iolab sweep {} --threads 1,2,4,8,16,32",
                self.opts_without_threads
            )
        }
    }

    fn ops(&self) -> (u64, u64) {
        (self.cell.results.read.ops, self.cell.results.write.ops)
    }

    fn dev_text(&self) -> String {
        match self.dev {
            Some((n, d)) => format!(
                "device {n}: {} r/s, {} w/s, aqu-sz {:.2}, %util {:.0}",
                fmt_n(d.r_s),
                fmt_n(d.w_s),
                d.aqu_sz,
                d.util_pct
            ),
            None => "no device figures (no block device found under --dir)".into(),
        }
    }

    /// [`Self::dev_text`], said to be the phase's for a role.
    fn dev_text_shared(&self) -> String {
        format!("{}{}", self.dev_text(), self.shared())
    }

    fn cpu_pct(&self) -> f64 {
        self.cell.cpu.user_pct + self.cell.cpu.sys_pct
    }

    /// The devices of the stack under --dir (names).
    fn stack(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .cell
            .device
            .as_ref()
            .map(|d| d.devices.clone())
            .unwrap_or_default();
        if let Some(e) = self.env {
            for n in crate::model::env::stack_devices(e) {
                if !v.contains(&n) {
                    v.push(n);
                }
            }
        }
        if let Some(d) = &self.cell.job.fileset.device
            && let Some(n) = d.file_name()
        {
            v.push(n.to_string_lossy().into_owned());
        }
        v
    }
}

fn hit(confidence: Confidence, evidence: String, next: String) -> Option<Hit> {
    Some(Hit {
        confidence,
        evidence,
        next,
        vars: Vec::new(),
    })
}

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

fn little(f: &Facts) -> f64 {
    f.iops * f.lat_mean_ns / 1e9
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

/// How many rotating members serve one device: an md array's members, else the data disks of
/// a RAID logical drive as the stripe width over the chunk (optimal_io_size / minimum_io_size,
/// which RAID controllers and md export); None when the device does not say.
fn members(b: &crate::model::env::BlockDevice) -> Option<(u64, String)> {
    if let Some(md) = &b.md
        && md.members.len() >= 2
    {
        return Some((
            md.members.len() as u64,
            format!("md {} members", md.members.len()),
        ));
    }
    match (b.minimum_io_size, b.optimal_io_size) {
        (Some(min), Some(opt)) if min > 0 && opt >= 2 * min && opt % min == 0 => Some((
            opt / min,
            format!(
                "optimal_io_size {} / minimum_io_size {} = {} data members",
                human_bytes(opt as f64),
                human_bytes(min as f64),
                opt / min
            ),
        )),
        _ => None,
    }
}

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

/// The device's await (ms), reads and writes weighted by their rates.
fn await_ms(d: &Iostat) -> f64 {
    if d.r_s + d.w_s > 0.0 {
        (d.r_await_ms * d.r_s + d.w_await_ms * d.w_s) / (d.r_s + d.w_s)
    } else {
        0.0
    }
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
fn waits_for_io(f: &Facts) -> bool {
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
fn queue_is_own(f: &Facts) -> bool {
    match f.dev {
        Some((_, d)) if f.role.is_none() => {
            d.aqu_sz <= QD_MAX_QUEUE_SHARE * f.in_flight + 1.0
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
fn qd_hit(f: &Facts, confidence: Confidence, low: &str) -> Option<Hit> {
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

fn absorbed_flush(f: &Facts) -> Option<Hit> {
    let r = &f.cell.results.fsync;
    if r.ops < MIN_FSYNCS {
        return None;
    }
    let p50 = r.lat_ns.as_ref()?.p50;
    let env = f.env?;
    // the physical disks under the path: rotational and write cache of the first
    let phys = env
        .path
        .as_ref()
        .and_then(|p| p.physical_disks.first())
        .and_then(|n| crate::system::env::find(env, n));
    let v = crate::system::fsyncprobe::verdict(
        p50,
        phys.and_then(|b| b.rotational),
        phys.and_then(|b| b.write_cache.as_deref()),
        &env.platform.virtualization.verdict,
        phys.is_some(),
    );
    if v.code != "absorbed" {
        return None;
    }
    hit(
        Confidence::High,
        format!(
            "fsync median {} over {} fsyncs on {}: {}",
            fmt_ns(p50 as f64),
            fmt_n(r.ops as f64),
            phys.map(|b| b.name.as_str()).unwrap_or("?"),
            v.text
        ),
        format!(
            "iolab fsync-probe {}",
            shell_word(&f.cell.job.fileset.dir.to_string_lossy())
        ),
    )
}

fn misaligned(f: &Facts) -> Option<Hit> {
    // the environment's, said once on the phase
    if f.role.is_some() {
        return None;
    }
    let env = f.env?;
    let ps = env.path.as_ref()?;
    let names: Vec<&str> = ps.stack.iter().map(|l| l.name.as_str()).collect();
    let found: Vec<crate::system::check::Finding> = crate::system::check::RULES
        .iter()
        .filter(|r| r.id == "partition_misaligned" || r.id == "partition_misaligned_stripe")
        .flat_map(|r| r.findings(env))
        .filter(|x| names.contains(&x.subject.as_str()))
        .collect();
    let first = found.first()?;
    hit(
        Confidence::Medium,
        format!("{} (iolab check: {})", first.evidence, first.id),
        format!("iolab check {}", shell_word(&ps.path)),
    )
}

fn split_requests(f: &Facts) -> Option<Hit> {
    let (reads, _) = f.ops();
    // rareq-sz is the average over every role's reads: judged on a role only alone
    if f.role.is_some()
        || !f.direct
        || reads < MIN_OPS
        || f.job.bs_mix.is_some()
        || f.job.bs_range.is_some()
    {
        return None;
    }
    let (name, d) = f.dev?;
    let bs_kb = f.job.bs_bytes as f64 / 1024.0;
    if d.rareq_sz_kb <= 0.0 || d.rareq_sz_kb >= SPLIT_FRACTION * bs_kb {
        return None;
    }
    hit(
        Confidence::Medium,
        format!(
            "device {name} rareq-sz {:.1} KiB vs the workload's {} reads: {:.1} device requests per read ({} r/s for {} IOPS)",
            d.rareq_sz_kb,
            Bytes(f.job.bs_bytes),
            bs_kb / d.rareq_sz_kb,
            fmt_n(d.r_s),
            fmt_n(f.cell.results.read.iops)
        ),
        format!(
            "iolab check {}",
            shell_word(&f.cell.job.fileset.dir.to_string_lossy())
        ),
    )
}

/// `template` with `{name}` replaced from `vars`.
fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut s = template.to_string();
    for (k, v) in vars {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

fn finding(rule: &Rule, h: Hit) -> Finding {
    Finding {
        layer: rule.layer,
        rule: rule.id.into(),
        confidence: h.confidence,
        why: fill(rule.why, &h.vars),
        evidence: h.evidence,
        next: h.next,
    }
}

fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|r| r.id == id).expect("a rule of RULES")
}

fn setup(c: &CellResult) -> String {
    let j = &c.job.job;
    let mut s = format!(
        "{}, {} thread{}",
        j.bs_label(),
        j.threads,
        if j.threads == 1 { "" } else { "s" }
    );
    if queue_engine(j.engine) {
        s.push_str(&format!(" × iodepth {}", j.iodepth));
    }
    s.push_str(&format!(", {}", j.engine.name()));
    if j.direct {
        s.push_str(", direct");
    }
    if c.job.fileset.layout != Default::default() {
        s.push_str(&format!(", layout {}", c.job.fileset.layout));
    }
    s
}

/// The findings of one cell of a run.
pub fn explain_cell(doc: &RunDoc, cell: &CellResult) -> Vec<Finding> {
    explain_facts(&Facts::of(doc, cell))
}

/// The role `r` of the phase `phase` as a cell of its own: its job, results and errors, the
/// phase's device, CPU and page-cache figures.
pub fn role_cell(phase: &CellResult, r: &crate::model::run::RoleResult) -> CellResult {
    CellResult {
        mode: r.mode.clone(),
        job: r.job.clone(),
        duration_s: r.duration_s,
        window_s: r.window_s,
        results: r.results.clone(),
        schedule_lag_ns: r.schedule_lag_ns.clone(),
        cpu: phase.cpu.clone(),
        timeseries: Vec::new(),
        errors: r.errors.clone(),
        cache_resident_pct_at_start: phase.cache_resident_pct_at_start,
        warnings: r.warnings.clone(),
        interrupted: phase.interrupted,
        device: phase.device.clone(),
        roles: Vec::new(),
        verify: None,
        lat_hists: Vec::new(),
    }
}

/// One block per role of a roles phase (mode `role NAME (mode)`), each judged on its own job
/// and results with the phase's device and CPU figures (docs/explain.md).
pub fn explain_roles(doc: &RunDoc, phase: &CellResult, run_id: Option<i64>) -> Vec<CellExplain> {
    phase
        .roles
        .iter()
        .map(|r| {
            let c = role_cell(phase, r);
            let f = Facts::of_role(doc, phase, &c, &r.name);
            CellExplain {
                run_id,
                mode: format!("role {} ({})", r.name, r.mode),
                setup: setup(&c),
                role: Some(r.name.clone()),
                findings: explain_facts(&f),
            }
        })
        .collect()
}

fn explain_facts(f: &Facts) -> Vec<Finding> {
    let cell = f.cell;
    let mut out = Vec::new();
    if let Some(r) = RULES
        .iter()
        .filter(|r| r.kind == Kind::Limit)
        .find_map(|r| {
            let h = (r.inspect)(f)?;
            Some(finding(r, h))
        })
    {
        out.push(r);
    }
    // the null engine does no I/O: nothing about flushes or requests to say
    let io = !f.null;
    for r in RULES.iter().filter(|r| io && r.kind == Kind::Also) {
        if let Some(h) = (r.inspect)(f) {
            out.push(finding(r, h));
        }
    }
    if out.is_empty() {
        let mut ev = format!(
            "{} IOPS, {}/s, mean latency {}, {} in flight (IOPS × latency = {:.2}), iolab CPU {:.0} % of one{}; {}",
            fmt_n(f.iops),
            human_bytes(cell.results.read.bytes_per_sec + cell.results.write.bytes_per_sec),
            fmt_ns(f.lat_mean_ns),
            fmt_n(f.in_flight),
            little(f),
            f.cpu_pct(),
            if f.role.is_some() {
                " (the whole phase's)"
            } else {
                ""
            },
            f.dev_text_shared()
        );
        if let Some(rate) = f.job.rate_iops {
            ev.push_str(&format!("; paced by --rate {rate}"));
        }
        let r = rule("none");
        out.push(Finding {
            layer: Layer::None,
            rule: r.id.into(),
            confidence: Confidence::Low,
            evidence: ev,
            why: r.why.into(),
            next: f.sweep_cmd(),
        });
    }
    out
}

/// The explanation of one run document (`run_id` when it is stored).
pub fn explain_run(doc: &RunDoc, run_id: Option<i64>, subject: &str) -> Explanation {
    Explanation {
        schema: EXPLAIN_SCHEMA.into(),
        subject: subject.into(),
        cells: doc
            .runs
            .iter()
            .flat_map(|c| {
                let mut v = vec![CellExplain {
                    run_id,
                    mode: c.mode.clone(),
                    setup: setup(c),
                    role: None,
                    findings: explain_cell(doc, c),
                }];
                v.extend(explain_roles(doc, c, run_id));
                v
            })
            .collect(),
    }
}

/// The explanation of a group of repetitions (the same job each time): per cell, `noisy` when
/// their IOPS disagree (CV above 5 %), else the first run's findings.
pub fn explain_group(runs: &[(i64, RunDoc)], subject: &str) -> Explanation {
    let mut cells = Vec::new();
    let Some((first_id, first)) = runs.first() else {
        return Explanation {
            schema: EXPLAIN_SCHEMA.into(),
            subject: subject.into(),
            cells,
        };
    };
    for (i, c) in first.runs.iter().enumerate() {
        let iops: Vec<f64> = runs
            .iter()
            .filter_map(|(_, d)| d.runs.get(i))
            .filter(|x| x.mode == c.mode)
            .map(|x| x.results.read.iops + x.results.write.iops)
            .collect();
        let mut noisy = false;
        let findings = match Stat::of(&iops) {
            Some(st) if st.n > 1 && st.cv_pct > NOISY_CV_PCT => {
                noisy = true;
                let r = rule("noisy");
                let each: Vec<String> = iops.iter().map(|x| fmt_n(*x)).collect();
                let more = ((st.n as f64) * (st.cv_pct / NOISY_CV_PCT).powi(2))
                    .ceil()
                    .clamp(st.n as f64 + 1.0, 50.0) as u32;
                vec![Finding {
                    layer: Layer::Noise,
                    rule: r.id.into(),
                    confidence: Confidence::High,
                    evidence: format!(
                        "IOPS over {} repetitions: {} (mean {}, stddev {}, CV {:.1} % > {NOISY_CV_PCT} %)",
                        st.n,
                        each.join(", "),
                        fmt_n(st.mean),
                        fmt_n(st.stddev),
                        st.cv_pct
                    ),
                    why: r.why.into(),
                    next: format!(
                        "iolab run {} --repeat {more}",
                        run_options(&c.job, &c.mode, true)
                    ),
                }]
            }
            _ => explain_cell(first, c),
        };
        cells.push(CellExplain {
            run_id: Some(*first_id),
            mode: c.mode.clone(),
            setup: setup(c),
            role: None,
            findings,
        });
        // repetitions that disagree: no role is judged either
        if !noisy {
            cells.extend(explain_roles(first, c, Some(*first_id)));
        }
    }
    Explanation {
        schema: EXPLAIN_SCHEMA.into(),
        subject: subject.into(),
        cells,
    }
}

/// What a sweep's cells must share to be compared: the job with threads and iodepth (and the
/// seed) left out, and the mode.
fn sweep_key(c: &CellResult) -> String {
    let mut j = c.job.clone();
    j.job.threads = 0;
    j.job.iodepth = 0;
    j.job.seed = 0;
    format!(
        "{}{}",
        c.mode,
        serde_json::to_string(&j).unwrap_or_default()
    )
}

/// The indexes of the runs' own cells (modes and phases, not their roles' blocks) among the
/// explanation's cells, in the order of the runs and their cells.
fn own_cells(cells: &[CellExplain]) -> Vec<usize> {
    cells
        .iter()
        .enumerate()
        .filter(|(_, c)| c.role.is_none())
        .map(|(i, _)| i)
        .collect()
}

/// Puts `f` in place of the cell's limit, keeping its "also" findings.
fn replace_limit(c: &mut CellExplain, f: Finding) {
    let also: Vec<Finding> = c
        .findings
        .drain(..)
        .filter(|x| RULES.iter().any(|r| r.id == x.rule && r.kind == Kind::Also))
        .collect();
    c.findings.push(f);
    c.findings.extend(also);
}

/// `queue_depth_bound` and `device_saturated` with more than one I/O in flight, in a sweep: the
/// device's await at the sweep's fewest in flight for the same job is its low-load latency,
/// which one run alone does not have. Only a cell no rule explained (`none`) is given one.
fn low_load_steps(runs: &[(i64, RunDoc)], cells: &mut [CellExplain]) {
    let mut all = Vec::new();
    for (id, d) in runs {
        for c in &d.runs {
            all.push((*id, d, c, sweep_key(c), Facts::of(d, c)));
        }
    }
    let index = own_cells(cells);
    for (at, (_, _, _, key, f)) in all.iter().enumerate() {
        let Some(&ci) = index.get(at) else {
            continue;
        };
        if f.in_flight <= 1.0 || cells[ci].findings.first().is_none_or(|x| x.rule != "none") {
            continue;
        }
        let Some((name, d)) = f.dev else {
            continue;
        };
        // the reference: the same job with the fewest in flight, fewer than here
        let Some((ref_id, _, _, _, r)) = all
            .iter()
            .filter(|x| &x.3 == key && x.4.in_flight < f.in_flight)
            .filter(|x| x.4.dev.is_some_and(|(_, io)| await_ms(io) > 0.0))
            .min_by(|a, b| a.4.in_flight.total_cmp(&b.4.in_flight))
        else {
            continue;
        };
        let r0 = r.dev.map_or(0.0, |(_, io)| await_ms(io));
        let a = await_ms(d);
        let ratio = a / r0;
        let low = format!(
            "device {name} await {a:.2} ms at {} in flight vs {r0:.2} ms at {} in flight (run {ref_id}, its low-load latency): {ratio:.2}×",
            fmt_n(f.in_flight),
            fmt_n(r.in_flight),
        );
        let rotational_disk = f
            .env
            .and_then(|e| crate::system::env::find(e, name))
            .is_some_and(|b| b.kind == "disk" && b.rotational == Some(true));
        if d.util_pct >= SAT_UTIL_PCT && d.aqu_sz >= SAT_MIN_AQU && ratio >= SAT_AWAIT_RATIO {
            let rl = rule("device_saturated");
            replace_limit(
                &mut cells[ci],
                Finding {
                    layer: rl.layer,
                    rule: rl.id.into(),
                    confidence: Confidence::Medium,
                    evidence: format!(
                        "{low}; %util {:.0}, aqu-sz {:.1}; {} r/s + {} w/s{}",
                        d.util_pct,
                        d.aqu_sz,
                        fmt_n(d.r_s),
                        fmt_n(d.w_s),
                        if rotational_disk {
                            ""
                        } else {
                            "; %util alone is weak evidence on a device that may serve requests in parallel (iostat(1)): the await against its low-load await is what shows the queue"
                        }
                    ),
                    why: rl.why.into(),
                    next: f.sweep_cmd(),
                },
            );
        } else if ratio <= QD_MAX_LOAD_RATIO
            && waits_for_io(f)
            && queue_is_own(f)
            && let Some(h) = qd_hit(f, Confidence::High, &low)
        {
            replace_limit(&mut cells[ci], finding(rule("queue_depth_bound"), h));
        }
    }
}

/// `fs_serialisation` in a sweep: per-thread latency up as threads rise. A cell the rule found
/// serialised is compared with the same job at the sweep's fewest in flight: when its mean
/// latency rose by at least half the ratio of in-flight I/Os while the device's queue stayed
/// ≤ [`SERIAL_MAX_AQU`], the sweep confirms it (evidence added, high confidence); when it did
/// not, the finding stays with that said and low confidence.
fn serial_steps(runs: &[(i64, RunDoc)], cells: &mut [CellExplain]) {
    let mut all = Vec::new();
    for (id, d) in runs {
        for c in &d.runs {
            all.push((*id, sweep_key(c), Facts::of(d, c)));
        }
    }
    let index = own_cells(cells);
    for (at, (_, key, f)) in all.iter().enumerate() {
        let Some(&ci) = index.get(at) else {
            continue;
        };
        let Some(found) = cells[ci]
            .findings
            .first_mut()
            .filter(|x| x.rule == "fs_serialisation")
        else {
            continue;
        };
        let Some((ref_id, _, r)) = all
            .iter()
            .filter(|x| &x.1 == key && x.2.in_flight < f.in_flight && x.2.lat_mean_ns > 0.0)
            .min_by(|a, b| a.2.in_flight.total_cmp(&b.2.in_flight))
        else {
            continue;
        };
        let rise = f.lat_mean_ns / r.lat_mean_ns;
        let more = f.in_flight / r.in_flight;
        let aqu = |x: &Facts| x.dev.map_or(f64::NAN, |(_, io)| io.aqu_sz);
        let up = rise >= SERIAL_LAT_SHARE * more && aqu(f) <= SERIAL_MAX_AQU;
        found.evidence.push_str(&format!(
            "; per-thread latency {}: {} at {} in flight (run {ref_id}) → {} at {} ({rise:.1}× for {more:.1}× the in-flight I/Os), IOPS {} → {}, device aqu-sz {:.2} → {:.2}",
            if up { "up as threads rise" } else { "did not rise with the threads" },
            fmt_ns(r.lat_mean_ns),
            fmt_n(r.in_flight),
            fmt_ns(f.lat_mean_ns),
            fmt_n(f.in_flight),
            fmt_n(r.iops),
            fmt_n(f.iops),
            aqu(r),
            aqu(f),
        ));
        found.confidence = if up {
            Confidence::High
        } else {
            Confidence::Low
        };
    }
}

/// The figures of one sweep cell that `device_flat` compares.
struct Step {
    /// index into the explanation's cells
    at: usize,
    /// the cell's job with threads and iodepth left out, as JSON (what must be equal)
    key: String,
    in_flight: f64,
    iops: f64,
    dev: Option<(String, f64, f64)>,
    dir: String,
}

/// `device_flat`: compares the cells of a sweep that differ only in threads or iodepth.
fn flat_steps(runs: &[(i64, RunDoc)], cells: &mut [CellExplain]) {
    let mut steps = Vec::new();
    let mut at = 0;
    for (_, d) in runs {
        for c in &d.runs {
            let f = Facts::of(d, c);
            steps.push(Step {
                at,
                key: sweep_key(c),
                in_flight: f.in_flight,
                iops: f.iops,
                dev: f.dev.map(|(n, io)| (n.to_string(), io.aqu_sz, io.util_pct)),
                dir: shell_word(&c.job.fileset.dir.to_string_lossy()),
            });
            at += 1;
        }
    }
    // the cells of the runs' modes and phases, not their roles' blocks
    let index = own_cells(cells);
    steps.sort_by(|a, b| a.key.cmp(&b.key).then(a.in_flight.total_cmp(&b.in_flight)));
    let r = rule("device_flat");
    for w in steps.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.key != b.key || b.in_flight < 2.0 * a.in_flight || a.iops <= 0.0 {
            continue;
        }
        let (Some((name, aqu_a, _)), Some((_, aqu_b, util_b))) = (&a.dev, &b.dev) else {
            continue;
        };
        let gain = b.iops / a.iops - 1.0;
        if gain >= FLAT_GAIN
            || *util_b < FLAT_UTIL_PCT
            || aqu_b - aqu_a < FLAT_QUEUE_SHARE * (b.in_flight - a.in_flight)
        {
            continue;
        }
        let evidence = format!(
            "{} → {} in flight: {} → {} IOPS ({:+.1} %), while device {name} aqu-sz {aqu_a:.2} → {aqu_b:.2} at %util {util_b:.0}",
            fmt_n(a.in_flight),
            fmt_n(b.in_flight),
            fmt_n(a.iops),
            fmt_n(b.iops),
            gain * 100.0
        );
        for s in [a, b] {
            let Some(&i) = index.get(s.at) else {
                continue;
            };
            let c = &mut cells[i];
            // a device found saturated on its own figures: the flat IOPS confirm it
            if let Some(sat) = c.findings.first_mut()
                && sat.rule == "device_saturated"
            {
                sat.evidence
                    .push_str(&format!("; IOPS flat as threads rise: {evidence}"));
                sat.confidence = Confidence::High;
                continue;
            }
            if c.findings
                .first()
                .is_some_and(|f| f.rule != "queue_depth_bound" && f.rule != "none")
            {
                continue;
            }
            replace_limit(
                c,
                Finding {
                    layer: r.layer,
                    rule: r.id.into(),
                    confidence: Confidence::High,
                    evidence: evidence.clone(),
                    why: r.why.into(),
                    next: format!(
                        "iolab check {}  # the setup of the device; iolab iostat {name} while it runs shows its queue",
                        s.dir
                    ),
                },
            );
        }
    }
}

/// The explanation of a sweep's runs: each run's, then what the cells that differ only in
/// threads or iodepth show side by side (the low-load latency, flat IOPS).
pub fn explain_sweep(runs: &[(i64, RunDoc)], subject: &str) -> Explanation {
    let mut cells = Vec::new();
    for (id, d) in runs {
        cells.extend(explain_run(d, Some(*id), "").cells);
    }
    low_load_steps(runs, &mut cells);
    serial_steps(runs, &mut cells);
    flat_steps(runs, &mut cells);
    Explanation {
        schema: EXPLAIN_SCHEMA.into(),
        subject: subject.into(),
        cells,
    }
}

/// The text a person reads.
pub fn render(e: &Explanation) -> String {
    let mut s = format!("explain {}\n", e.subject);
    for c in &e.cells {
        let run = c.run_id.map(|i| format!("run {i}, ")).unwrap_or_default();
        s.push_str(&format!("\n{} ({run}{}):\n", c.mode, c.setup));
        for f in &c.findings {
            s.push_str(&format!(
                "  {}: {} [{} confidence]\n    evidence: {}\n    why: {}\n    next: {}\n",
                f.layer.name(),
                f.rule,
                f.confidence.name(),
                f.evidence,
                f.why,
                f.next
            ));
        }
    }
    s
}

impl crate::output::document::Document for Explanation {
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    fn text(&self) -> String {
        render(self)
    }
}

/// The rule list of docs/explain.md, from [`RULES`].
pub fn rules_markdown() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut s = String::from("| rule | layer | kind | fires when | why |\n|---|---|---|---|---|\n");
    for r in RULES {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id,
            r.layer.name(),
            match r.kind {
                Kind::Limit => "limit",
                Kind::Also => "also",
            },
            cell(r.when),
            cell(r.why)
        ));
    }
    s
}

/// What `iolab explain REF` explains: a run document of the store, or a group's runs (sweeps
/// and saturation searches: every run; repetitions: [`explain_group`]).
pub fn explain_ref(
    store: &crate::store::Store,
    r: crate::store::Ref,
) -> crate::error::Result<Explanation> {
    use crate::error::Error;
    use crate::model::stored::StoredDoc;
    let doc_of = |id: i64| -> crate::error::Result<RunDoc> {
        let kind = store.run(id)?.kind;
        match store.stored_doc(id)? {
            StoredDoc::Run(d) => Ok(*d),
            _ => Err(Error::usage(format!(
                "run {id} is a {kind} document: iolab explain reads iolab run documents"
            ))),
        }
    };
    match r {
        crate::store::Ref::Run(id) => Ok(explain_run(&doc_of(id)?, Some(id), &format!("run {id}"))),
        crate::store::Ref::Group(g) => {
            let (kind, _) = store.experiment(g)?;
            let ids = store.group_runs(g)?;
            let mut runs = Vec::new();
            for id in ids {
                runs.push((id, doc_of(id)?));
            }
            let subject = format!("group g{g}");
            if kind == "run" {
                return Ok(explain_group(&runs, &subject));
            }
            if kind == "sweep" {
                return Ok(explain_sweep(&runs, &subject));
            }
            let mut cells = Vec::new();
            for (id, d) in &runs {
                cells.extend(explain_run(d, Some(*id), "").cells);
            }
            Ok(Explanation {
                schema: EXPLAIN_SCHEMA.into(),
                subject,
                cells,
            })
        }
    }
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

    #[test]
    fn numbers_read_like_numbers() {
        assert_eq!(fmt_n(21000.0), "21,000");
        assert_eq!(fmt_n(12.0), "12");
        assert_eq!(fmt_n(0.5), "0.5");
        assert_eq!(fmt_n(12629.4), "12,629");
        assert_eq!(fmt_n(-1234567.0), "-1,234,567");
        assert_eq!(pct(12.0, 21000.0), "0.057 %");
    }
}
