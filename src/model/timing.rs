//! When a job issues its I/O, beyond `--rate`: fio's think time, start delay, exit of a whole
//! phase, Poisson arrivals, per-direction and minimum rates, completion batches, overlap
//! serialization and flows; when it ends early (fio's steady state); and where, with strided
//! zones (docs/fio-jobs.md). Job files set them (`cli::fiojob`); the worker loops
//! (`engine::worker`, `engine::timing`) run them. All absent by default, and absent from
//! documents then.

use serde::Serialize;

/// fio's options that shape when a job issues I/O. Each field is fio's, per thread (a `numjobs`
/// clone is one of fio's threads) unless it says otherwise.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Timing {
    /// `thinktime`: after every `think_blocks` I/Os, wait until none is in flight, then pause
    /// this long (µs; 0: no think time).
    #[serde(skip_serializing_if = "is_zero")]
    pub think_us: u64,
    /// `thinktime_spin`: the first part of the pause spent busy (µs), the rest asleep.
    #[serde(skip_serializing_if = "is_zero")]
    pub think_spin_us: u64,
    /// `thinktime_blocks` (fio's default 1; 0 read as 1).
    #[serde(skip_serializing_if = "is_zero")]
    pub think_blocks: u64,
    /// `thinktime_blocks_type=issue`: count issued I/Os, not completed ones (fio's default).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub think_on_issue: bool,
    /// `thinktime_iotime`: also pause once this many µs of I/O have passed since the last
    /// pause (without `thinktime_blocks` given: only then).
    #[serde(skip_serializing_if = "is_zero")]
    pub think_iotime_us: u64,
    /// With `think_iotime_us`: whether `thinktime_blocks` was given (it counts too then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub think_blocks_given: bool,
    /// `startdelay` (a range drawn once per job): the job starts this long after the phase
    /// (seconds); its runtime, ramp and rates count from its own start, as fio's.
    #[serde(skip_serializing_if = "is_zero_f")]
    pub start_delay_s: f64,
    /// `exitall`: when a thread of this job ends, the other jobs of the phase end too.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exit_all: bool,
    /// `exitall_on_error`: when a thread of this job ends on an error, the phase ends.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exit_on_error: bool,
    /// `rate_process=poisson`: the gaps between `--rate` slots are exponential (mean 1/rate).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub poisson: bool,
    /// fio's `rate`/`rate_iops` where `--rate` (one schedule for every I/O, in whole I/Os per
    /// second) cannot run them: per thread, bytes/s of reads and writes (0: that direction not
    /// paced), each direction on its own schedule, as fio's (a mixed job's directions, a byte
    /// rate that is not whole I/Os per second, mixed block sizes).
    #[serde(skip_serializing_if = "is_zero_pair")]
    pub rate_bps: [u64; 2],
    /// `rate_min` (bytes/s; reads, writes) per thread: measured over each `rate_cycle_ms`
    /// after 2 s, a direction below it ends the thread with EIO, as fio's.
    #[serde(skip_serializing_if = "is_zero_pair")]
    pub rate_min_bps: [u64; 2],
    /// `rate_iops_min` (reads, writes) per thread, the same way (used when `rate_min` is not).
    #[serde(skip_serializing_if = "is_zero_pair")]
    pub rate_min_iops: [u64; 2],
    /// `ratecycle` (ms; fio's default 1000).
    #[serde(skip_serializing_if = "is_zero")]
    pub rate_cycle_ms: u64,
    /// `iodepth_batch_complete_min`: a queue engine waits for this many completions (at most
    /// what is in flight) before issuing again (0 and 1: one).
    #[serde(skip_serializing_if = "is_zero")]
    pub complete_min: u64,
    /// `serialize_overlap`: an I/O overlapping one in flight waits for it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub serialize_overlap: bool,
    /// `flow`: this job's weight in its flow (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
    /// `zonemode=strided`: where a sequential job's I/O goes (absent: through its whole range).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
    /// fio's steady state (`ss`, `ss_dur`, `ss_ramp`): the job ends once its criterion holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::model::steady::Steady>,
    /// fio's queue-depth search (`latency_target`, ...): the depth the thread keeps in flight
    /// is searched for, and the job ends once it settled (unless `keep_running`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat_target: Option<LatencyTarget>,
    /// `max_latency` per direction (reads, writes, trims; ns, 0: none): an I/O slower than
    /// this ends its thread with ETIMEDOUT, as fio's `lat_fatal`.
    #[serde(skip_serializing_if = "no_max_latency")]
    pub max_lat_ns: [u64; 3],
}

fn no_max_latency(v: &[u64; 3]) -> bool {
    v.iter().all(|&x| x == 0)
}

/// fio's `latency_target`, `latency_window`, `latency_percentile`, `latency_run` (io_u.c
/// `lat_target_*`; `engine::worker::lattarget` runs it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LatencyTarget {
    /// `latency_target`: an I/O's latency (ns, issue to completion) within it is on time.
    pub target_ns: u64,
    /// `latency_window`: how long each depth is tried (µs).
    pub window_us: u64,
    /// `latency_percentile`: the share of a window's I/Os that must be on time (%, 0–100;
    /// at 100 the first late I/O lowers the depth at once).
    pub percentile: f64,
    /// `latency_run`: go on searching after the depth settled, instead of ending.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_running: bool,
}

/// fio's strided zones (`zonemode=strided`, its io_u.c `setup_strided_zone_mode`): a thread's
/// sequential I/O moves `size` bytes in each zone (from the zone's start, and again from there
/// when it reaches `range` bytes into it), then the next zone starts `range + skip` bytes after
/// this one's start; a zone starting at or past the end of the thread's range starts over at
/// its start. Bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Zones {
    /// `zonesize`: the bytes moved in each zone.
    pub size: u64,
    /// `zonerange` (default `zonesize`): how far into the zone the I/O goes.
    pub range: u64,
    /// `zoneskip`: the bytes skipped after a zone's range.
    pub skip: u64,
}

/// fio's `flow`: the threads of the jobs of a phase that share a `flow_id` issue their I/Os in
/// the ratio of their weights, through one shared counter.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Flow {
    /// `flow_id`.
    pub id: u64,
    /// `flow` (each thread of the job adds it to the flow's total).
    pub weight: u64,
    /// `flow_sleep` (µs): how long a thread ahead of its share pauses (0: a short pause).
    pub sleep_us: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f(n: &f64) -> bool {
    *n == 0.0
}

fn is_zero_pair(p: &[u64; 2]) -> bool {
    *p == [0, 0]
}

impl Timing {
    /// Whether nothing is set (a job without any of these options).
    pub fn is_default(&self) -> bool {
        *self == Timing::default()
    }

    /// Whether a minimum rate is checked.
    pub fn checks_min_rate(&self) -> bool {
        self.rate_min_bps != [0, 0] || self.rate_min_iops != [0, 0]
    }
}
