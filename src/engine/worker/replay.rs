//! `iolab run --replay TRACE`: one worker issues a trace's requests with a queue engine, in the
//! trace's order, each at its own time (open loop: `start + (t - t_first) / speed`, one
//! `clock_nanosleep` to an absolute time, or a wait for completions with that timeout), or with
//! `--closed` as soon as fewer than its captured queue depth are in flight. A flush waits for
//! everything in flight, then is one fsync of its file, waited for (the barrier the trace
//! had); a trim is done in place (as the queue loop's). Offsets are taken modulo the target's
//! size and aligned (`Replay::align_bytes`).
//!
//! The trace is read on a thread of its own into batches of [`BATCH`] requests, handed over a
//! channel of two and handed back empty to be filled again: the worker allocates nothing per
//! request, and memory does not grow with the trace.

use super::pacer::{Clock, set_min_timer_slack};
use super::setup::place;
use super::{Progress, ns_since, trim_at, window_ns};
use crate::engine::buf::AlignedBuf;
use crate::engine::ops::{QueueEngine, Shared};
use crate::measure::stats::{OpKind, ThreadStats};
use crate::measure::trace::{TraceIo, TraceOp, TraceReader};
use crate::measure::twin::Synth;
use crate::model::replay::ReplayResult;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Requests per batch handed from the reader to the worker.
pub const BATCH: usize = 4096;

/// A request later than this behind its time counts in `late_over_1ms`.
const LATE_NS: u64 = 1_000_000;

/// One request in flight.
#[derive(Clone, Copy)]
struct Slot {
    issued: Instant,
    submitted: Instant,
    kind: OpKind,
    bytes: u64,
}

/// Where a request of the trace goes on the target: its file (modulo the set's `files`) and
/// offset (modulo `range`, rounded down to `align`, moved back to fit), and its length rounded
/// up to `align` (at most `range`).
#[inline]
pub fn remap(io: &TraceIo, files: u32, range: u64, align: u64) -> (u32, u64, u64) {
    let align = align.max(1);
    let len = io.len.div_ceil(align).saturating_mul(align).min(range);
    let mut off = (io.off % range) / align * align;
    if off + len > range {
        off = (range - len) / align * align;
    }
    (io.file % files.max(1), off, len)
}

/// Where the requests come from: a trace file, or `--like`'s twin.
enum Source {
    Trace(TraceReader),
    Twin(Synth),
}

impl Source {
    #[inline]
    fn next_io(&mut self, io: &mut TraceIo) -> Result<bool, String> {
        match self {
            Source::Trace(r) => r.next_io(io),
            Source::Twin(s) => Ok(s.next_io(io)),
        }
    }
}

/// Runs the replay of `sh.job.replay` on one worker thread with the queue engine `E`.
pub fn run_replay<'a, E: QueueEngine<'a>>(
    sh: &Shared<'a>,
    thread: u32,
    files: u32,
    prog: &Progress,
) -> std::io::Result<ThreadStats> {
    let rp = sh.job.replay.as_ref().expect("a replay job");
    let twin = rp.twin.is_some();
    let job = sh.job;
    place(job, thread)?;
    set_min_timer_slack();
    let depth = job.iodepth.max(1) as usize;
    let maxlen = job.bs_bytes.max(rp.align_bytes) as usize;
    // declared before the engine: they outlive it, also on an error with I/O in flight
    let mut bufs = AlignedBuf::new(maxlen * depth, sh.mem_align.max(4096), job.seed);
    let base = bufs.bytes_mut().as_mut_ptr();
    let mut eng = E::open(sh, depth as u32)?;
    let mut st = ThreadStats::new(window_ns(sh));
    let mut slots: Vec<Option<Slot>> = vec![None; depth + 1]; // index depth: the flush
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut inflight = 0usize;
    let clock = Clock::new();
    let range = sh.file_size_bytes;
    let mut res = ReplayResult::default();
    let (mut first_t, mut first_issue, mut last_issue) = (None::<u64>, None::<Instant>, sh.start);
    // the stream's times of the first and the last request issued (a twin's span is theirs)
    let (mut first_io_t, mut last_io_t) = (None::<u64>, 0u64);
    let mut epoch = None::<Instant>;
    let (mut p_ops, mut p_bytes) = (0u64, 0u64);

    // Reaps every completion available now; returns how many.
    let mut reap = |eng: &mut E,
                    slots: &mut Vec<Option<Slot>>,
                    free: &mut Vec<usize>,
                    st: &mut ThreadStats|
     -> usize {
        let mut n = 0;
        let t1 = Instant::now();
        eng.reap(|tag, r| {
            let idx = tag as usize;
            let s = slots[idx].take().expect("completion for a live slot");
            if idx < depth {
                free.push(idx);
            }
            n += 1;
            if r < 0 {
                prog.failed(st, -r);
            } else if r as u64 != s.bytes && s.kind != OpKind::Fsync {
                prog.failed(st, 0);
            } else {
                let lat = ns_since(s.issued, t1);
                st.record_io(s.kind, 0, s.bytes, lat, ns_since(sh.measure_start, t1));
                if s.kind != OpKind::Fsync {
                    let slat = ns_since(s.issued, s.submitted);
                    st.record_submission(s.kind, slat, lat.saturating_sub(slat));
                }
                prog.report(s.kind, s.bytes, lat);
                p_ops += 1;
                p_bytes += s.bytes;
                prog.ops.store(p_ops, Relaxed);
                prog.bytes.store(p_bytes, Relaxed);
            }
        });
        n
    };
    // Waits for at least one completion (a timeout: until `until`), then reaps.
    macro_rules! wait_one {
        ($until:expr) => {{
            let until: Option<Instant> = $until;
            let timeout = until.map(|u| u.saturating_duration_since(Instant::now()));
            match eng.commit_and_wait(1, timeout) {
                Ok(()) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::ETIME)) => {}
                Err(e) => return Err(e),
            }
            inflight -= reap(&mut eng, &mut slots, &mut free, &mut st);
        }};
    }
    macro_rules! drain {
        () => {
            while inflight > 0 {
                wait_one!(None);
            }
        };
    }

    std::thread::scope(|s| -> std::io::Result<ThreadStats> {
        let (tx, rx) = mpsc::sync_channel::<Result<Vec<TraceIo>, String>>(2);
        let (back_tx, back_rx) = mpsc::channel::<Vec<TraceIo>>();
        let path = std::path::PathBuf::from(&rp.trace);
        // --like: requests drawn from the capture's twin, the regions spread over the target
        let synth = rp.twin.as_ref().map(|t| {
            let qd_scale = match &rp.like {
                Some(l) if rp.closed => l.scale,
                _ => 1.0,
            };
            let end = (!rp.closed).then_some(rp.span_ns);
            let twin = Arc::clone(&t.0)
                .downcast::<crate::measure::twin::Twin>()
                .expect("--like's twin");
            Synth::new(twin, range, end, qd_scale, job.seed)
        });
        std::thread::Builder::new()
            .name("iolab-trace".into())
            .spawn_scoped(s, move || {
                let mut r = match synth {
                    Some(sy) => Source::Twin(sy),
                    None => match TraceReader::open(&path) {
                        Ok(r) => Source::Trace(r),
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    },
                };
                let mut io = TraceIo::default();
                loop {
                    let mut b = back_rx
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    b.clear();
                    while b.len() < BATCH {
                        match r.next_io(&mut io) {
                            Ok(true) => b.push(io),
                            Ok(false) => break,
                            Err(e) => {
                                let _ = tx.send(Err(e));
                                return;
                            }
                        }
                    }
                    let last = b.len() < BATCH;
                    if (!b.is_empty() && tx.send(Ok(b)).is_err()) || last {
                        return;
                    }
                }
            })?;
        let ended = |now: Instant| sh.ending() || sh.deadline.is_some_and(|d| now >= d);
        // the replay stopped before the trace's end (Ctrl-C, --time): its span is not judged
        let mut cut = false;
        'trace: for batch in rx.iter() {
            let batch =
                batch.map_err(|e| std::io::Error::other(format!("the trace {}: {e}", rp.trace)))?;
            for io in &batch {
                // the replay's time 0: its first request in hand (the trace read so far)
                // (a twin's stream: its own time 0, before its first request's gap)
                let t0_trace = *first_t.get_or_insert(if twin { 0 } else { io.t_ns });
                let epoch = *epoch.get_or_insert_with(Instant::now);
                let sched = (!rp.closed).then(|| {
                    epoch
                        + Duration::from_nanos(
                            (io.t_ns.saturating_sub(t0_trace) as f64 / rp.speed) as u64,
                        )
                });
                // open loop: wait for its time, reaping what completes meanwhile
                if let Some(at) = sched {
                    loop {
                        let now = Instant::now();
                        if ended(now) {
                            cut = true;
                            break 'trace;
                        }
                        if now >= at {
                            break;
                        }
                        let until = at.min(now + Duration::from_millis(100));
                        if inflight > 0 {
                            wait_one!(Some(until));
                        } else {
                            clock.sleep_until(until);
                        }
                    }
                }
                let (file, off, len) = remap(io, files, range, rp.align_bytes);
                let kind = match io.op {
                    TraceOp::Read => OpKind::Read,
                    TraceOp::Write => OpKind::Write,
                    TraceOp::Trim => OpKind::Trim,
                    TraceOp::Flush => OpKind::Fsync,
                };
                // the trace's barrier: a flush after everything before it; a trim done in place.
                // --like's flushes are not barriers: in flight beside the reads and writes, as a
                // block device's flush requests are (what its capture saw)
                let barrier = match kind {
                    OpKind::Trim => true,
                    OpKind::Fsync => !twin,
                    _ => false,
                };
                if barrier {
                    drain!();
                } else {
                    let limit = match (rp.closed, io.qd) {
                        (true, q) if q > 0 => (q as usize).min(depth),
                        _ => depth,
                    };
                    while inflight >= limit {
                        wait_one!(None);
                    }
                }
                if ended(Instant::now()) {
                    cut = true;
                    break 'trace;
                }
                let t0 = Instant::now();
                if let Some(at) = sched {
                    let late = ns_since(at, t0);
                    st.record_lag(late);
                    res.max_late_ns = res.max_late_ns.max(late);
                    res.late_over_1ms += (late > LATE_NS) as u64;
                }
                first_issue.get_or_insert(t0);
                last_issue = t0;
                res.issued += 1;
                first_io_t.get_or_insert(io.t_ns);
                last_io_t = io.t_ns;
                match kind {
                    OpKind::Trim => {
                        let r = trim_at(sh, file, sh.base_offset + off, len);
                        let t1 = Instant::now();
                        match r {
                            Ok(()) => {
                                let lat = ns_since(t0, t1);
                                st.record(kind, len, lat, ns_since(sh.measure_start, t1));
                                prog.report(kind, len, lat);
                            }
                            Err(e) => prog.failed(&mut st, e),
                        }
                    }
                    OpKind::Fsync if twin => {
                        let i = free.pop().expect("a free slot below the limit");
                        eng.queue_fsync(file, i as u64);
                        match eng.submit_queued() {
                            Ok(()) => {}
                            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                            Err(e) => return Err(e),
                        }
                        slots[i] = Some(Slot {
                            issued: t0,
                            submitted: Instant::now(),
                            kind,
                            bytes: 0,
                        });
                        inflight += 1;
                        res.max_in_flight = res.max_in_flight.max(inflight as u32);
                    }
                    OpKind::Fsync => {
                        eng.queue_fsync(file, depth as u64);
                        slots[depth] = Some(Slot {
                            issued: t0,
                            submitted: t0,
                            kind,
                            bytes: 0,
                        });
                        inflight += 1;
                        drain!();
                    }
                    OpKind::Read | OpKind::Write => {
                        let i = free.pop().expect("a free slot below the limit");
                        // SAFETY: slot i's part of `bufs` (maxlen bytes, len <= maxlen) is this
                        // request's alone until its completion is reaped, and `bufs` outlives
                        // the engine.
                        unsafe {
                            eng.queue_io(
                                kind,
                                file,
                                sh.base_offset + off,
                                base.add(i * maxlen),
                                len as u32,
                                i as u64,
                            );
                        }
                        match eng.submit_queued() {
                            Ok(()) => {}
                            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                            Err(e) => return Err(e),
                        }
                        slots[i] = Some(Slot {
                            issued: t0,
                            submitted: Instant::now(),
                            kind,
                            bytes: len,
                        });
                        inflight += 1;
                        res.max_in_flight = res.max_in_flight.max(inflight as u32);
                    }
                }
            }
            let mut batch = batch;
            batch.clear();
            let _ = back_tx.send(batch);
        }
        drop(rx);
        drain!();
        let end = Instant::now();
        st.finish(ns_since(sh.measure_start, end));
        let span = last_issue.saturating_duration_since(first_issue.unwrap_or(last_issue));
        res.replay_s = span.as_secs_f64();
        // a trace's first-to-last span; a twin's stream's, from its first request issued to its
        // last (its window has quiet stretches at either end)
        res.trace_s = if twin {
            last_io_t.saturating_sub(first_io_t.unwrap_or(last_io_t)) as f64 / 1e9 / rp.speed
        } else {
            rp.span_ns as f64 / 1e9 / rp.speed
        };
        res.timing_error_pct = (!rp.closed && res.trace_s > 0.0 && !cut)
            .then(|| (res.replay_s - res.trace_s) / res.trace_s * 100.0);
        st.replay = Some(res);
        Ok(st)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(file: u32, off: u64, len: u64) -> TraceIo {
        TraceIo {
            file,
            off,
            len,
            ..TraceIo::default()
        }
    }

    #[test]
    fn requests_are_remapped_into_the_target() {
        // inside the target: unchanged
        assert_eq!(
            remap(&io(0, 8192, 16384), 1, 1 << 20, 4096),
            (0, 8192, 16384)
        );
        // past its end: modulo its size
        assert_eq!(
            remap(&io(3, (1 << 20) + 4096, 4096), 2, 1 << 20, 4096),
            (1, 4096, 4096)
        );
        // a 512-byte offset and length on a 4 KiB-aligned target: rounded down, up
        assert_eq!(remap(&io(0, 4608, 512), 1, 1 << 20, 4096), (0, 4096, 4096));
        // a request that would cross the end moves back to fit
        assert_eq!(
            remap(&io(0, (1 << 20) - 4096, 16384), 1, 1 << 20, 4096),
            (0, (1 << 20) - 16384, 16384)
        );
        // one larger than the target is cut to it
        assert_eq!(remap(&io(0, 0, 4 << 20), 1, 1 << 20, 4096), (0, 0, 1 << 20));
    }
}
