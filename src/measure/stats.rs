//! Per-thread statistics, kept by each worker without locks and merged once at the end.

use crate::measure::hist::{IntervalHist, LatHist, SparseHist};
use crate::measure::iostat::SHORTEST_LAST;
use crate::model::run::{
    BsResult, CellJob, CellResult, Cpu, LatSummary, OP_KINDS, OpResult, Results, TsOp, TsPoint,
};
use std::ops::AddAssign;

pub use crate::model::run::OpKind;

/// Largest errno tracked individually; anything above is counted under this index.
pub const MAX_ERRNO: usize = 160;

/// Totals for one operation type.
#[derive(Clone, Default)]
pub struct OpTotals {
    pub ops: u64,
    pub bytes: u64,
    /// Operations and bytes that completed inside the measured window (time-limited runs end
    /// with at most threads × iodepth operations completing after it).
    pub ops_in_window: u64,
    pub bytes_in_window: u64,
    pub lat: LatHist,
    /// Queue engines: each operation's submission latency (from its start to the return of the
    /// call that submitted it, fio's `slat`) and completion latency (from there to its
    /// completion, fio's `clat`); `lat` is their sum. Empty for the sync engines.
    pub slat: LatHist,
    pub clat: LatHist,
    /// Paced runs (`--rate`): each read's or write's latency from the moment iolab issued it
    /// (fio's `lat` under `rate_iops`), without the wait behind its slot that `lat` includes.
    /// Empty unpaced.
    pub from_issue: LatHist,
}

impl OpTotals {
    /// Counts one completed operation (`in_window`: it completed inside the measured window).
    #[inline]
    fn count(&mut self, bytes: u64, lat_ns: u64, in_window: bool) {
        self.ops += 1;
        self.bytes += bytes;
        if in_window {
            self.ops_in_window += 1;
            self.bytes_in_window += bytes;
        }
        self.lat.record(lat_ns);
    }
}

impl AddAssign<&OpTotals> for OpTotals {
    fn add_assign(&mut self, o: &OpTotals) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.ops_in_window += o.ops_in_window;
        self.bytes_in_window += o.bytes_in_window;
        self.lat.merge(&o.lat);
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.from_issue.merge(&o.from_issue);
    }
}

/// One second of one thread's time series.
#[derive(Clone, Default, Debug)]
pub struct Interval {
    pub ops: [u64; OP_KINDS],
    pub bytes: [u64; OP_KINDS],
    pub lat: [SparseHist; OP_KINDS],
}

/// Everything one worker thread measured.
pub struct ThreadStats {
    pub op: [OpTotals; OP_KINDS],
    /// Jobs with several block sizes: the totals of size `i` (index in `Job::bs_sizes`) at
    /// `2 i` (reads) and `2 i + 1` (writes); empty for one size. Allocated once, at setup.
    pub by_bs: Vec<OpTotals>,
    /// Failed operations by errno (index = errno).
    pub errors: Box<[u64; MAX_ERRNO + 1]>,
    /// Closed one-second intervals, from the start of the measured window.
    pub series: Vec<Interval>,
    /// With `--rate`: how late each read or write was issued by iolab itself, behind its
    /// scheduled start (the pacer's lateness, not the device's; see `schedule_lag_ns`).
    pub lag: LatHist,
    cur: [IntervalHist; OP_KINDS],
    cur_ops: [u64; OP_KINDS],
    cur_bytes: [u64; OP_KINDS],
    cur_sec: u64,
    /// Length of the measured window in ns (u64::MAX when the run is not time-limited).
    window_ns: u64,
    /// `--verify`: what this thread checked, and the generations of its blocks.
    pub verify: Option<ThreadVerify>,
    /// fio's log files of a job run from a job file: what this thread recorded for them.
    pub fio_log: Option<super::fiolog::ThreadLog>,
    /// fio's `write_iolog`: the operations this thread issued.
    pub iolog: Option<super::iolog::IoLog>,
    /// fio's `latency_target`: the depth this thread's search ended at.
    pub lat_depth: Option<u32>,
    /// When this thread's totals were started over (fio's `latency_target` final window):
    /// its runtime counts from there.
    pub since: Option<std::time::Instant>,
    /// `--replay`: how the replay kept to its trace's time.
    pub replay: Option<crate::model::replay::ReplayResult>,
}

/// `--verify`: the checks of one thread (or, merged, of all) and the generation of every block
/// of its range (`gens[i]` is block `first_block + i` of the set; 0: not written by a verify
/// write, with [`crate::model::verify::GEN_UNKNOWN_BIT`]: its last write failed).
#[derive(Debug, Default)]
pub struct ThreadVerify {
    pub result: crate::model::verify::VerifyResult,
    /// (first block, generations) per thread, in thread order.
    pub ranges: Vec<(u64, Vec<u32>)>,
}

impl Default for ThreadStats {
    fn default() -> Self {
        Self::new(u64::MAX)
    }
}

impl ThreadStats {
    pub fn new(window_ns: u64) -> Self {
        ThreadStats {
            op: Default::default(),
            by_bs: Vec::new(),
            errors: Box::new([0; MAX_ERRNO + 1]),
            series: Vec::with_capacity(64),
            lag: LatHist::new(),
            cur: Default::default(),
            cur_ops: [0; OP_KINDS],
            cur_bytes: [0; OP_KINDS],
            cur_sec: 0,
            window_ns,
            verify: None,
            fio_log: None,
            iolog: None,
            lat_depth: None,
            since: None,
            replay: None,
        }
    }

    /// Starts the thread's totals over at `now` (fio's `reset_all_stats` and `reset_io_stats`
    /// when its `latency_target` search settles): operations, per-size figures, errors and
    /// lag; the per-second series and the logs go on.
    pub fn restart_totals(&mut self, now: std::time::Instant) {
        self.op = Default::default();
        for t in &mut self.by_bs {
            *t = OpTotals::default();
        }
        self.errors.fill(0);
        self.lag = LatHist::new();
        self.since = Some(now);
    }

    /// Records one completed operation, `t_ns` nanoseconds after the start of the measured window.
    /// No allocation except when a new second starts (one sparse snapshot per second).
    #[inline]
    pub fn record(&mut self, kind: OpKind, bytes: u64, lat_ns: u64, t_ns: u64) {
        let sec = t_ns / 1_000_000_000;
        if sec != self.cur_sec {
            self.roll_to(sec);
        }
        let k = kind as usize;
        self.op[k].count(bytes, lat_ns, t_ns <= self.window_ns);
        self.cur_ops[k] += 1;
        self.cur_bytes[k] += bytes;
        self.cur[k].record(lat_ns);
    }

    /// Keeps per-size totals for a job with `sizes` block sizes (nothing for one size).
    pub fn with_sizes(mut self, sizes: usize) -> Self {
        if sizes > 1 {
            self.by_bs = (0..2 * sizes).map(|_| OpTotals::default()).collect();
        }
        self
    }

    /// Records one completed read or write of size index `si` (or an fsync), like
    /// [`ThreadStats::record`], and in the per-size totals. Never allocates beyond `record`.
    #[inline]
    pub fn record_io(&mut self, kind: OpKind, si: u8, bytes: u64, lat_ns: u64, t_ns: u64) {
        self.record(kind, bytes, lat_ns, t_ns);
        // per size: reads and writes (a trim's figures are its totals only)
        if matches!(kind, OpKind::Read | OpKind::Write)
            && let Some(o) = self.by_bs.get_mut(2 * si as usize + kind as usize)
        {
            o.count(bytes, lat_ns, t_ns <= self.window_ns);
        }
    }

    /// Records the two parts of a queued read's or write's latency already counted by
    /// [`ThreadStats::record_io`]: its submission (`slat_ns`) and its completion (`clat_ns`).
    /// Never allocates.
    #[inline]
    pub fn record_submission(&mut self, kind: OpKind, slat_ns: u64, clat_ns: u64) {
        let o = &mut self.op[kind as usize];
        o.slat.record(slat_ns);
        o.clat.record(clat_ns);
    }

    /// Records a paced read's or write's latency from its issue (ns), beside its latency from
    /// its slot that [`ThreadStats::record_io`] counted. Never allocates.
    #[inline]
    pub fn record_from_issue(&mut self, kind: OpKind, ns: u64) {
        self.op[kind as usize].from_issue.record(ns);
    }

    /// Records the schedule lag of one paced operation (ns). Never allocates.
    #[inline]
    pub fn record_lag(&mut self, lag_ns: u64) {
        self.lag.record(lag_ns);
    }

    #[inline]
    pub fn error(&mut self, errno: i32) {
        let i = (errno.max(0) as usize).min(MAX_ERRNO);
        self.errors[i] += 1;
    }

    fn close_current(&mut self) {
        let iv = Interval {
            ops: self.cur_ops,
            bytes: self.cur_bytes,
            lat: std::array::from_fn(|k| self.cur[k].take_sparse()),
        };
        self.series.push(iv);
        self.cur_ops = [0; OP_KINDS];
        self.cur_bytes = [0; OP_KINDS];
    }

    #[cold]
    fn roll_to(&mut self, sec: u64) {
        while self.cur_sec < sec {
            self.close_current();
            self.cur_sec += 1;
        }
    }

    /// Closes the time series at the end of the run (`end_ns` after the window start).
    pub fn finish(&mut self, end_ns: u64) {
        if let Some(l) = &mut self.fio_log {
            l.finish(end_ns);
        }
        let last = end_ns / 1_000_000_000;
        self.roll_to(last);
        if !end_ns.is_multiple_of(1_000_000_000) || self.cur_ops.iter().any(|&x| x > 0) {
            self.close_current();
            self.cur_sec += 1;
        }
    }

    pub fn total_errors(&self) -> u64 {
        self.errors.iter().sum()
    }
}

/// All threads merged.
pub struct Merged {
    pub op: [OpTotals; OP_KINDS],
    /// Per block size, as in [`ThreadStats::by_bs`].
    pub by_bs: Vec<OpTotals>,
    pub errors: Vec<(i32, u64)>,
    /// For each second: per-thread intervals (to merge histograms per second).
    pub series: Vec<Vec<Interval>>,
    /// Schedule lag of paced operations, all threads (empty when not paced).
    pub lag: LatHist,
    /// `--verify`: every thread's checks and block generations.
    pub verify: Option<ThreadVerify>,
    /// fio's `latency_target`: the deepest of the threads' final depths.
    pub lat_depth: Option<u32>,
    /// `--replay`: its thread's figures (one thread replays).
    pub replay: Option<crate::model::replay::ReplayResult>,
}

pub fn merge(threads: Vec<ThreadStats>) -> Merged {
    let mut op: [OpTotals; OP_KINDS] = Default::default();
    let mut errs = [0u64; MAX_ERRNO + 1];
    let secs = threads.iter().map(|t| t.series.len()).max().unwrap_or(0);
    let mut series: Vec<Vec<Interval>> = (0..secs).map(|_| Vec::new()).collect();
    let mut lag = LatHist::new();
    let mut by_bs: Vec<OpTotals> = Vec::new();
    let mut verify: Option<ThreadVerify> = None;
    let lat_depth = threads.iter().filter_map(|t| t.lat_depth).max();
    let replay = threads.iter().find_map(|t| t.replay.clone());
    for mut t in threads {
        if let Some(v) = t.verify.take() {
            let m = verify.get_or_insert_with(ThreadVerify::default);
            m.result.add(&v.result);
            m.ranges.extend(v.ranges);
        }
        lag.merge(&t.lag);
        if by_bs.len() < t.by_bs.len() {
            by_bs.resize_with(t.by_bs.len(), OpTotals::default);
        }
        for (dst, src) in by_bs.iter_mut().zip(t.by_bs.iter()) {
            *dst += src;
        }
        for (dst, src) in op.iter_mut().zip(t.op.iter()) {
            *dst += src;
        }
        for (i, e) in t.errors.iter().enumerate() {
            errs[i] += e;
        }
        for (s, iv) in t.series.into_iter().enumerate() {
            series[s].push(iv);
        }
    }
    let errors = errs
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(i, c)| (i as i32, *c))
        .collect();
    Merged {
        op,
        by_bs,
        errors,
        series,
        lag,
        verify,
        lat_depth,
        replay,
    }
}

/// One thread's totals as a merged set of one (a `numjobs` clone's own row in fio JSON): its
/// operations, per-size figures, errors and lag; no per-second series or verify state.
pub fn thread_totals(t: &ThreadStats) -> Merged {
    let mut op: [OpTotals; OP_KINDS] = Default::default();
    for (dst, src) in op.iter_mut().zip(t.op.iter()) {
        *dst += src;
    }
    let mut lag = LatHist::new();
    lag.merge(&t.lag);
    Merged {
        op,
        by_bs: t.by_bs.clone(),
        errors: (t.errors.iter().enumerate())
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (i as i32, *c))
            .collect(),
        series: Vec::new(),
        lag,
        verify: None,
        lat_depth: t.lat_depth,
        replay: t.replay.clone(),
    }
}

/// Several merged sets of threads as one (the totals of concurrent roles): operations, errors,
/// lag and per-second intervals add up; per-size figures are left out (the roles' sizes differ).
pub fn combine(parts: &[Merged]) -> Merged {
    let mut op: [OpTotals; OP_KINDS] = Default::default();
    let mut errs: std::collections::BTreeMap<i32, u64> = Default::default();
    let secs = parts.iter().map(|m| m.series.len()).max().unwrap_or(0);
    let mut series: Vec<Vec<Interval>> = (0..secs).map(|_| Vec::new()).collect();
    let mut lag = LatHist::new();
    for m in parts {
        for (dst, src) in op.iter_mut().zip(m.op.iter()) {
            *dst += src;
        }
        for (e, c) in &m.errors {
            *errs.entry(*e).or_default() += c;
        }
        for (s, ivs) in m.series.iter().enumerate() {
            series[s].extend(ivs.iter().cloned());
        }
        lag.merge(&m.lag);
    }
    Merged {
        op,
        by_bs: Vec::new(),
        errors: errs.into_iter().collect(),
        series,
        lag,
        verify: None,
        lat_depth: parts.iter().filter_map(|m| m.lat_depth).max(),
        replay: None,
    }
}

/// The symbolic name of common errnos ("EIO"), or "errno N".
pub fn errno_name(e: i32) -> String {
    let n = match e {
        libc::EIO => "EIO",
        libc::ENOSPC => "ENOSPC",
        libc::EINVAL => "EINVAL",
        libc::EAGAIN => "EAGAIN",
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::EROFS => "EROFS",
        libc::ENXIO => "ENXIO",
        libc::EINTR => "EINTR",
        libc::ENOMEM => "ENOMEM",
        libc::EPERM => "EPERM",
        libc::EACCES => "EACCES",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EDQUOT => "EDQUOT",
        libc::EFBIG => "EFBIG",
        libc::ENODEV => "ENODEV",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ECANCELED => "ECANCELED",
        0 => "short I/O",
        _ => return format!("errno {e}"),
    };
    n.to_string()
}

/// Rates over `window_s`: with a fixed window (time-limited runs) they count what completed
/// inside it; otherwise everything.
pub fn op_result(t: &OpTotals, window_s: f64, fixed_window: bool) -> OpResult {
    let per = |x: u64| {
        if window_s > 0.0 {
            x as f64 / window_s
        } else {
            0.0
        }
    };
    let (o, b) = if fixed_window {
        (t.ops_in_window, t.bytes_in_window)
    } else {
        (t.ops, t.bytes)
    };
    OpResult {
        ops: t.ops,
        bytes: t.bytes,
        iops: per(o),
        bytes_per_sec: per(b),
        lat_ns: LatSummary::from_hist(&t.lat),
        slat_ns: LatSummary::from_hist(&t.slat),
        issue_lat_ns: LatSummary::from_hist(&t.from_issue),
        by_bs: Vec::new(),
    }
}

/// The per-size results of one operation type (`k`: 0 reads, 1 writes) when the job has
/// several sizes and the operation ran; else empty.
fn by_bs_results(
    merged: &Merged,
    sizes: &[u64],
    k: usize,
    window_s: f64,
    fixed_window: bool,
) -> Vec<BsResult> {
    if sizes.len() < 2 || merged.op[k].ops == 0 || merged.by_bs.len() < 2 * sizes.len() {
        return Vec::new();
    }
    sizes
        .iter()
        .enumerate()
        .map(|(i, &bs)| {
            let r = op_result(&merged.by_bs[2 * i + k], window_s, fixed_window);
            BsResult {
                bs_bytes: bs,
                ops: r.ops,
                bytes: r.bytes,
                iops: r.iops,
                bytes_per_sec: r.bytes_per_sec,
                lat_ns: r.lat_ns,
            }
        })
        .collect()
}

/// A last, partial per-second interval shorter than this (seconds) is not part of a time series
/// (file runs, roles and db runs; the device series uses the same [`SHORTEST_LAST`]).
pub const SHORTEST_LAST_S: f64 = SHORTEST_LAST.as_secs_f64();

/// The result of one measured cell from its merged per-thread statistics.
pub fn cell_result(
    job: CellJob,
    merged: &Merged,
    duration_s: f64,
    cpu: Cpu,
    resident_pct: f64,
    interrupted: bool,
) -> CellResult {
    let [r, w, f, t] = &merged.op;
    let time_limit = job.job.time_limit_s();
    let (window_s, fixed_window) = match time_limit {
        Some(t) if !interrupted && duration_s >= t => (t, true),
        _ => (duration_s, false),
    };
    let sizes = job.job.bs_sizes();
    let mut results = Results {
        read: op_result(r, window_s, fixed_window),
        write: op_result(w, window_s, fixed_window),
        fsync: op_result(f, window_s, fixed_window),
        trim: op_result(t, window_s, fixed_window),
    };
    results.read.by_bs = by_bs_results(merged, &sizes, 0, window_s, fixed_window);
    results.write.by_bs = by_bs_results(merged, &sizes, 1, window_s, fixed_window);
    // Intervals of the window; with a fixed window, operations that completed after it (at
    // most threads × iodepth) are counted in its last interval rather than in a sliver of
    // their own.
    let span = if fixed_window { window_s } else { duration_s };
    let n = (span.ceil() as usize)
        .max(1)
        .min(merged.series.len().max(1));
    let mut groups: Vec<Vec<&Interval>> = vec![Vec::new(); n];
    for (i, ivs) in merged.series.iter().enumerate() {
        groups[i.min(n - 1)].extend(ivs.iter());
    }
    if merged.series.is_empty() {
        groups.clear();
    }
    // A last, partial interval shorter than SHORTEST_LAST is left out, as in db runs and the
    // device series (a few operations over a few ms are noise, not a rate); a longer one is rated
    // over its real length below. Its operations stay in the totals.
    // (1e-9: a --time 1.2 leaves a tail of 0.2 s, which 1.2 - 1.0 computes as 0.19999...)
    if groups.len() > 1 && span - ((groups.len() - 1) as f64) < SHORTEST_LAST_S - 1e-9 {
        groups.pop();
    }
    let last = groups.len();
    let timeseries = groups
        .iter()
        .enumerate()
        .map(|(i, ivs)| {
            let dur = if i + 1 == last {
                (span - i as f64).clamp(1e-3, 1.0)
            } else {
                1.0
            };
            let op = |k: usize| -> Option<TsOp> {
                let ops: u64 = ivs.iter().map(|iv| iv.ops[k]).sum();
                if ops == 0 {
                    return None;
                }
                let bytes: u64 = ivs.iter().map(|iv| iv.bytes[k]).sum();
                let parts: Vec<&SparseHist> = ivs.iter().map(|iv| &iv.lat[k]).collect();
                let p = SparseHist::merged_percentiles(&parts, &[50.0, 99.0]);
                Some(TsOp {
                    ops,
                    iops: ops as f64 / dur,
                    bytes_per_sec: bytes as f64 / dur,
                    p50_ns: p[0],
                    p99_ns: p[1],
                })
            };
            TsPoint {
                t_s: i as f64,
                dur_s: dur,
                read: op(0),
                write: op(1),
                fsync: op(2),
                trim: op(3),
            }
        })
        .collect();
    let errors = merged
        .errors
        .iter()
        .map(|(e, c)| (errno_name(*e), *c))
        .collect();
    CellResult {
        mode: job.job.mode.name().to_string(),
        job,
        duration_s,
        window_s,
        results,
        // Empty, so null, when the cell was not paced.
        schedule_lag_ns: LatSummary::from_hist(&merged.lag),
        cpu,
        timeseries,
        errors,
        cache_resident_pct_at_start: resident_pct,
        warnings: Vec::new(),
        interrupted,
        device: None,
        roles: Vec::new(),
        verify: merged.verify.as_ref().map(|v| v.result.clone()),
        steady: Vec::new(),
        latency_depth: merged.lat_depth,
        replay: merged.replay.clone(),
        lat_hists: merged.op.iter().map(|o| o.lat.clone()).collect(),
        clones: Vec::new(),
        clat_hists: merged.op.iter().map(|o| o.clat.clone()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submission_latencies_merge_and_only_queued_ios_have_a_slat() {
        let mut a = ThreadStats::new(u64::MAX);
        a.record_io(OpKind::Read, 0, 4096, 100_000, 1);
        let sync = merge(vec![a]);
        assert!(op_result(&sync.op[0], 1.0, false).slat_ns.is_none());
        let (mut a, mut b) = (ThreadStats::new(u64::MAX), ThreadStats::new(u64::MAX));
        for (t, slat) in [(&mut a, 2_000), (&mut b, 6_000)] {
            t.record_io(OpKind::Read, 0, 4096, 100_000, 1);
            t.record_submission(OpKind::Read, slat, 100_000 - slat);
        }
        let m = merge(vec![a, b]);
        let r = op_result(&m.op[0], 1.0, false);
        let s = r.slat_ns.unwrap();
        assert_eq!((s.min / 100, s.max / 100), (20, 60));
        assert_eq!(m.op[0].clat.count(), 2);
        assert!(op_result(&m.op[1], 1.0, false).slat_ns.is_none());
    }

    #[test]
    fn time_series_buckets_by_second_and_merges_threads() {
        let mut a = ThreadStats::default();
        let mut b = ThreadStats::default();
        a.record(OpKind::Read, 4096, 1000, 100);
        a.record(OpKind::Read, 4096, 2000, 1_500_000_000);
        a.record(OpKind::Write, 4096, 3000, 2_100_000_000);
        b.record(OpKind::Read, 4096, 4000, 200_000_000);
        a.finish(2_500_000_000);
        b.finish(2_500_000_000);
        assert_eq!(a.series.len(), 3);
        assert_eq!(b.series.len(), 3, "an idle thread still has every second");
        let m = merge(vec![a, b]);
        assert_eq!(m.op[0].ops, 3);
        assert_eq!(m.op[0].bytes, 3 * 4096);
        assert_eq!(m.op[1].ops, 1);
        assert_eq!(m.series.len(), 3);
        let s0: u64 = m.series[0].iter().map(|i| i.ops[0]).sum();
        let s1: u64 = m.series[1].iter().map(|i| i.ops[0]).sum();
        let s2w: u64 = m.series[2].iter().map(|i| i.ops[1]).sum();
        assert_eq!((s0, s1, s2w), (2, 1, 1));
    }

    #[test]
    fn per_size_totals_add_up_to_the_op_totals_across_threads() {
        let mut a = ThreadStats::default().with_sizes(2);
        let mut b = ThreadStats::default().with_sizes(2);
        a.record_io(OpKind::Read, 0, 4096, 1000, 10);
        a.record_io(OpKind::Read, 1, 65536, 2000, 20);
        b.record_io(OpKind::Write, 1, 65536, 3000, 30);
        b.record_io(OpKind::Fsync, 0, 0, 4000, 40);
        let m = merge(vec![a, b]);
        assert_eq!(m.by_bs.len(), 4);
        assert_eq!((m.by_bs[0].ops, m.by_bs[0].bytes), (1, 4096));
        assert_eq!((m.by_bs[2].ops, m.by_bs[2].bytes), (1, 65536));
        assert_eq!((m.by_bs[3].ops, m.by_bs[1].ops), (1, 0));
        assert_eq!(m.op[2].ops, 1, "fsyncs only in the op totals");
        let r = by_bs_results(&m, &[4096, 65536], 0, 1.0, false);
        assert_eq!(r.iter().map(|x| x.bytes).sum::<u64>(), m.op[0].bytes);
        assert!(by_bs_results(&m, &[4096], 0, 1.0, false).is_empty());
        assert!(ThreadStats::default().with_sizes(1).by_bs.is_empty());
    }

    #[test]
    fn errors_are_counted_by_errno() {
        let mut a = ThreadStats::default();
        a.error(libc::EIO);
        a.error(libc::EIO);
        a.error(9999);
        let m = merge(vec![a]);
        assert_eq!(m.errors, vec![(libc::EIO, 2), (MAX_ERRNO as i32, 1)]);
        assert_eq!(errno_name(libc::EIO), "EIO");
    }
}
