//! The hot path: one worker thread issuing and timing I/O.
//!
//! Each worker owns its generator, buffers and [`ThreadStats`]; nothing is shared but the
//! read-only file descriptors, a stop flag and the progress counters that only this thread
//! writes (relaxed stores, no read-modify-write; with `--report-interval` also per-kind counts
//! and latency buckets, [`LiveCounters`]). Per I/O there is no allocation, no lock and no
//! system call besides the I/O itself and two clock reads.
//!
//! Two loops, one per kind of engine (see [`super::ops`]): [`run_sync`] for engines that complete
//! one I/O per call, [`run_queue`] for engines with `iodepth` I/Os in flight. Each is
//! monomorphized per engine, so the engine is chosen once per phase, not per I/O.

use super::opgen::{Next, OpGen, thread_quota};
use super::ops::Shared;
use super::ops::{QueueEngine, SyncEngine, trim};
use super::timing::{Ended, Shaper, poisson_gap};
use super::verify::Verifier;
use crate::measure::live::LiveCounters;
use crate::measure::stats::{OpKind, ThreadStats};
use crate::model::job::Job;

/// The aligned buffer, in `super::buf` (named here too for the file set and the workloads that
/// take it from the worker).
use super::buf::{AlignedBuf, Filler};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

mod cycles;
pub mod lattarget;
use lattarget::{LatTarget, Step};
mod pacer;
pub mod replay;
mod setup;
pub use cycles::run_cycles;
use pacer::{Pacer, lag_ns};
use setup::{filler, log_end, log_issue, logs, place};

/// Live counters one worker publishes for the progress line and, with `--report-interval`, for
/// the periodic report lines (`live`, allocated once before the phase; None without the flag, so
/// the hot path pays one predictable branch).
#[derive(Default)]
#[repr(align(64))]
pub struct Progress {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
    pub live: Option<std::sync::Arc<LiveCounters>>,
    /// Set by the phase when the thread has returned (its steady state is no longer sampled).
    pub done: std::sync::atomic::AtomicBool,
}

impl Progress {
    /// Publishes one completed operation to the report lines, when they are on.
    #[inline]
    fn report(&self, kind: OpKind, bytes: u64, lat_ns: u64) {
        if let Some(l) = &self.live {
            l.publish(kind as usize, bytes, lat_ns);
        }
    }

    /// One failed operation: in the thread's errors (by errno) and, when they are on, the
    /// live counters' (`iolab_errors_total`).
    #[inline]
    fn failed(&self, st: &mut ThreadStats, errno: i32) {
        st.error(errno);
        if let Some(l) = &self.live {
            l.error();
        }
    }
}

/// The measured window's length in ns for time-limited runs, else u64::MAX.
fn window_ns(sh: &Shared) -> u64 {
    sh.deadline
        .map_or(u64::MAX, |d| ns_since(sh.measure_start, d))
}

#[inline]
fn ns_since(a: Instant, b: Instant) -> u64 {
    b.saturating_duration_since(a).as_nanos() as u64
}

/// Whether an operation of `kind` counts in the `--ops`/`--io-size` quota: reads, writes and
/// trims, but in the trim-and-write modes only the writes (fio moves `size` bytes in each of
/// the two directions).
#[inline]
fn in_quota(job: &Job, kind: OpKind) -> bool {
    match kind {
        OpKind::Fsync => false,
        OpKind::Trim => !job.mode.trim_then_write(),
        OpKind::Read | OpKind::Write => true,
    }
}

/// One trim of the phase's file `file` (nothing for an engine that opens no file: null).
#[inline]
fn trim_at(sh: &Shared, file: u32, off: u64, len: u64) -> Result<(), i32> {
    sh.fds
        .get(file as usize)
        .map_or(Ok(()), |&fd| trim(fd, sh.device, off, len))
}

/// A thread below its minimum rate ends as fio's: one line on stderr, an EIO in its errors,
/// and with `exitall_on_error` the phase ends too.
fn rate_min_end(sh: &Shared, st: &mut ThreadStats, prog: &Progress, e: Ended) {
    let Ended::RateMin(msg) = e;
    eprintln!("iolab: {msg}: the thread ends, as fio's job would (an EIO in its errors)");
    prog.failed(st, libc::EIO);
    if sh.job.timing.exit_on_error || sh.job.timing.exit_all {
        sh.exit.store(true, Relaxed);
    }
}

/// fio's `lat_fatal`: an I/O slower than `max_latency` (`max_ns`), or than `latency_target`
/// at depth 1 (with `latency_percentile=100`; `max_ns` None): the thread ends with ETIMEDOUT,
/// as fio's job.
fn lat_fatal(sh: &Shared, st: &mut ThreadStats, max_ns: Option<u64>) {
    let (what, us) = match max_ns {
        Some(m) => ("max_latency", m / 1000),
        None => (
            "latency_target",
            sh.job.timing.lat_target.map_or(0, |l| l.target_ns / 1000),
        ),
    };
    let depth = if max_ns.is_none() { " at depth 1" } else { "" };
    eprintln!(
        "iolab: {what}: an I/O took longer than {us} µs{depth}: the thread ends, as fio's job would (an ETIMEDOUT in its errors)"
    );
    st.error(libc::ETIMEDOUT);
    if sh.job.timing.exit_on_error || sh.job.timing.exit_all {
        sh.exit.store(true, Relaxed);
    }
}

/// Runs one worker with an engine that completes one I/O per call.
pub fn run_sync<'a, E: SyncEngine<'a>>(
    sh: &Shared<'a>,
    thread: u32,
    files: u32,
    prog: &Progress,
) -> std::io::Result<ThreadStats> {
    const { assert!(!E::CAPS.async_queue, "a queue engine in the sync loop") };
    place(sh.job, thread)?;
    let mut eng = E::open(sh)?;
    let eng = &mut eng;
    let job = sh.job;
    // One buffer of the largest size; each I/O uses its first `len` bytes.
    let bs = job.bs_bytes as usize;
    let mut st = ThreadStats::new(window_ns(sh)).with_sizes(job.bs_sizes().len());
    logs(job, &mut st);
    let mut g = OpGen::new(job, files, sh.file_size_bytes, thread).with_base(sh.base_offset);
    let mut buf = AlignedBuf::new(bs, sh.mem_align, job.seed ^ thread as u64);
    let mut vf = sh
        .verify
        .map(|s| {
            Verifier::new(s, thread, sh.file_size_bytes, g.range(), job.seed)
                .with_origin(sh.base_offset)
        })
        .map(|v| v.with_backlog(job.verify_backlog));
    let mut fill = filler(job, thread, &g);
    if vf.is_none() {
        fill.init(buf.bytes_mut(), bs);
    }
    let quota = thread_quota(job, thread);
    let (mut done_in_window, mut bytes_in_window) = (0u64, 0u64);
    let mut pacer = Pacer::new(sh, thread);
    let mut prev_lag = 0u64;
    let (mut p_ops, mut p_bytes) = (0u64, 0u64);
    let mut sp = Shaper::new(sh);
    let mut now = Instant::now();
    loop {
        let paid = quota.is_some_and(|q| q.paid(done_in_window, bytes_in_window));
        if sh.ending()
            || sh.deadline.is_some_and(|d| now >= d)
            || (paid && !vf.as_ref().is_some_and(Verifier::backlog_left))
        {
            break;
        }
        let ready = now;
        // --verify-backlog: a read-back of the thread's last writes when one is due (not
        // counted in the quota)
        let back = vf.as_mut().and_then(|v| v.back(paid));
        if let Some(q) = quota {
            g.cap(q.left(bytes_in_window));
        }
        if back.is_none()
            && let Some(read) = pacer.choose(g.would_read(), now)
        {
            g.prefer(read);
        }
        let next = back.unwrap_or_else(|| g.next_op());
        // fio's flow: a thread ahead of its share of the flow pauses before issuing
        if sp.flows() && matches!(next, Next::Io { .. }) {
            let mut ahead = sp.flow_ahead();
            while ahead && !sh.ending() && sh.deadline.is_none_or(|d| Instant::now() < d) {
                sp.flow_pause(sh);
                ahead = sp.flow_ahead();
            }
            now = Instant::now();
            if ahead {
                // stopped, ended or past the deadline while waiting: the loop's top ends it
                continue;
            }
        }
        let io_off = match next {
            Next::Io { off, .. } => off,
            Next::Fsync { .. } => 0,
        };
        let sched = pacer.peek();
        let t0 = match sched {
            Some(s) if s > now => match pacer.wait(s, now, sh) {
                Some(t) => t,
                // stopped, ended or past the deadline: the loop's top ends it
                None => {
                    now = Instant::now();
                    continue;
                }
            },
            _ => Instant::now(),
        };
        log_issue(&mut st, next, sh.start, t0);
        let (kind, si, bytes, res) = match next {
            Next::Io {
                kind: OpKind::Read,
                file,
                off,
                len,
                si,
            } => {
                let b = &mut buf.bytes_mut()[..len as usize];
                let r = eng.read(file, off, b);
                if let (Ok(()), Some(v)) = (r, &mut vf) {
                    v.check(b, file, off);
                }
                (OpKind::Read, si, len, r)
            }
            Next::Io {
                kind: OpKind::Trim,
                file,
                off,
                len,
                si,
            } => (OpKind::Trim, si, len, trim_at(sh, file, off, len)),
            Next::Io {
                kind: _,
                file,
                off,
                len,
                si,
            } => {
                let b = &mut buf.bytes_mut()[..len as usize];
                if let Some(v) = &mut vf {
                    v.stamp(b, file, off);
                    v.wrote(file, off, len, si);
                } else {
                    fill.before_write(b, off);
                }
                let r = eng.write(file, off, b);
                if let (Err(_), Some(v)) = (r, &mut vf) {
                    v.failed(file, off, len);
                }
                (OpKind::Write, si, len, r)
            }
            Next::Fsync { file } => (OpKind::Fsync, 0, 0, eng.fsync(file)),
        };
        let t1 = Instant::now();
        now = t1;
        g.completed(kind, t1);
        if kind != OpKind::Fsync {
            pacer.advance(bytes);
        }
        let issued = sched.unwrap_or(t0);
        // a paced read or write: its own lateness, carried while the thread stays behind
        let paced = sched.filter(|_| kind != OpKind::Fsync);
        if let Some(s) = paced {
            prev_lag = lag_ns(s, ready, t0, prev_lag);
        }
        if issued < sh.measure_start {
            // the ramp: only its report lines see it
            if res.is_ok() && t1 < sh.measure_start {
                prog.report(kind, bytes, ns_since(issued, t1));
            }
            continue;
        }
        if paced.is_some() {
            st.record_lag(prev_lag);
        }
        match res {
            Ok(()) => {
                let lat = ns_since(issued, t1);
                let t = ns_since(sh.measure_start, t1);
                st.record_io(kind, si, bytes, lat, t);
                if paced.is_some() {
                    st.record_from_issue(kind, ns_since(t0, t1));
                }
                if let Some(l) = &mut st.fio_log {
                    l.io(kind, io_off, bytes, lat, None, t);
                }
                prog.report(kind, bytes, lat);
                p_ops += 1;
                p_bytes += bytes;
                prog.ops.store(p_ops, Relaxed);
                prog.bytes.store(p_bytes, Relaxed);
                if let Some(max) = sp.over_max(kind, lat) {
                    lat_fatal(sh, &mut st, Some(max));
                    break;
                }
            }
            Err(e) => prog.failed(&mut st, e),
        }
        if in_quota(job, kind) && back.is_none() {
            done_in_window += 1;
            bytes_in_window += bytes;
        }
        if kind != OpKind::Fsync {
            sp.issued += 1;
            sp.completed += 1;
            if res.is_ok() {
                sp.count((kind == OpKind::Write) as usize, bytes);
            }
        }
        if res.is_err() && job.timing.exit_on_error {
            // exitall_on_error: this thread's error ends the phase
            sh.exit.store(true, Relaxed);
        }
        if let Some(e) = sp.rate_check(now) {
            rate_min_end(sh, &mut st, prog, e);
            break;
        }
        if sp.think_due(now) {
            sp.think(sh);
            now = Instant::now();
        }
    }
    if job.mode.writes() && !sh.stop.load(Relaxed) {
        for f in g.final_fsyncs(None, job.fsync_end) {
            let t0 = Instant::now();
            log_issue(&mut st, Next::Fsync { file: f }, sh.start, t0);
            let r = eng.fsync(f);
            let t1 = Instant::now();
            match r {
                Ok(()) => {
                    let lat = ns_since(t0, t1);
                    st.record(OpKind::Fsync, 0, lat, ns_since(sh.measure_start, t1));
                    prog.report(OpKind::Fsync, 0, lat);
                }
                Err(e) => prog.failed(&mut st, e),
            }
        }
    }
    log_end(&mut st, sh.start);
    st.finish(ns_since(sh.measure_start, Instant::now()));
    st.verify = vf.map(Verifier::finish);
    Ok(st)
}

/// One I/O in flight.
#[derive(Clone, Copy)]
struct Slot {
    issued: Instant,
    /// When iolab queued it: its slot's time is `issued` when paced (then `Some`).
    queued: Option<Instant>,
    /// When the call that submitted it returned (its submission latency ends there: fio's
    /// `slat`; its completion latency, `clat`, begins).
    submitted: Instant,
    kind: OpKind,
    /// Index of the block size (per-size statistics).
    si: u8,
    bytes: u64,
    expect: u32,
    /// Where (for `--verify`).
    file: u32,
    off: u64,
}

/// Submits what is queued (`unsubmitted`, the slots queued since the last submission) and
/// stamps their submission's end: one clock reading per batch, nothing allocated. EINTR leaves
/// the rest to `commit_and_wait`.
#[inline]
fn submit<'a, E: QueueEngine<'a>>(
    eng: &mut E,
    slots: &mut [Option<Slot>],
    unsubmitted: &mut Vec<usize>,
) -> std::io::Result<()> {
    if unsubmitted.is_empty() {
        return Ok(());
    }
    match eng.submit_queued() {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
        Err(e) => return Err(e),
    }
    let at = Instant::now();
    for i in unsubmitted.drain(..) {
        if let Some(s) = slots[i].as_mut() {
            s.submitted = at;
        }
    }
    Ok(())
}

/// Runs one worker with an engine that keeps up to `iodepth` I/Os in flight.
pub fn run_queue<'a, E: QueueEngine<'a>>(
    sh: &Shared<'a>,
    thread: u32,
    files: u32,
    prog: &Progress,
) -> std::io::Result<ThreadStats> {
    const { assert!(E::CAPS.async_queue, "a sync engine in the queue loop") };
    if sh.job.replay.is_some() {
        return replay::run_replay::<E>(sh, thread, files, prog);
    }
    place(sh.job, thread)?;
    let job = sh.job;
    let depth = job.iodepth.max(1) as usize;
    // One slot of the largest size per I/O in flight; each I/O uses the first `len` bytes of
    // its slot.
    let bs = job.bs_bytes as usize;
    // The buffers are declared before the engine so that they outlive it, also on an error
    // return with I/O in flight.
    let mut bufs = AlignedBuf::new(bs * depth, sh.mem_align.max(4096), job.seed ^ thread as u64);
    let base = bufs.bytes_mut().as_mut_ptr();
    let mut eng = E::open(sh, depth as u32)?;
    let mut st = ThreadStats::new(window_ns(sh)).with_sizes(job.bs_sizes().len());
    logs(job, &mut st);
    let mut g = OpGen::new(job, files, sh.file_size_bytes, thread).with_base(sh.base_offset);
    let mut vf = sh
        .verify
        .map(|s| {
            Verifier::new(s, thread, sh.file_size_bytes, g.range(), job.seed)
                .with_origin(sh.base_offset)
        })
        .map(|v| v.with_backlog(job.verify_backlog));
    let mut fill = filler(job, thread, &g);
    if vf.is_none() {
        fill.init(bufs.bytes_mut(), bs);
    }
    let mut slots: Vec<Option<Slot>> = vec![None; depth + 1]; // index depth = the fsync slot
    let mut free: Vec<usize> = (0..depth).rev().collect();
    // The slots queued since the last submission (room for all: nothing allocated per I/O).
    let mut unsubmitted: Vec<usize> = Vec::with_capacity(depth + 1);
    let quota = thread_quota(job, thread);
    let (mut issued_in_window, mut bytes_in_window) = (0u64, 0u64);
    let mut inflight = 0usize;
    let mut pacer = Pacer::new(sh, thread);
    // The progress counts, published by the reaping closure and by a trim done in the loop.
    let (p_ops, p_bytes) = (std::cell::Cell::new(0u64), std::cell::Cell::new(0u64));
    let publish = |kind: OpKind, bytes: u64, lat: u64| {
        prog.report(kind, bytes, lat);
        p_ops.set(p_ops.get() + 1);
        p_bytes.set(p_bytes.get() + bytes);
        prog.ops.store(p_ops.get(), Relaxed);
        prog.bytes.store(p_bytes.get(), Relaxed);
    };
    let mut carry: Option<Next> = None;
    // The carried operation is a --verify-backlog read-back (outside the quota).
    let mut carry_back = false;
    // The carried operation is ready and only waits for its slot (lag counts from the slot).
    let mut waits_for_slot = false;
    let mut prev_lag = 0u64;
    let mut stopping = false;
    let mut sp = Shaper::new(sh);
    // the runtime's end: fio's latency_target restarts it at its final window
    let mut deadline = sh.deadline;
    // this thread counted the next I/O in its flow already; a pause (think time or a flow's)
    // waits for what is in flight first
    let mut flow_passed = false;
    let overlap_waits = sh.verify.is_some() || job.timing.serialize_overlap;

    // Reaps every available completion; returns how many.
    let reap = |eng: &mut E,
                g: &mut OpGen,
                slots: &mut Vec<Option<Slot>>,
                free: &mut Vec<usize>,
                st: &mut ThreadStats,
                vf: &mut Option<Verifier>,
                sp: &mut Shaper|
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
            g.completed(s.kind, t1);
            if s.kind != OpKind::Fsync {
                sp.completed += 1;
                if r >= 0 && r as u32 == s.expect {
                    sp.count((s.kind == OpKind::Write) as usize, s.bytes);
                }
            }
            if let Some(v) = vf.as_mut().filter(|_| idx < depth) {
                let whole = r >= 0 && r as u32 == s.expect;
                if s.kind == OpKind::Read && whole {
                    // SAFETY: the slot's buffer (idx < depth) holds the `bytes` just read, and
                    // nothing else touches it until the slot is reused.
                    let b =
                        unsafe { std::slice::from_raw_parts(base.add(idx * bs), s.bytes as usize) };
                    v.check(b, s.file, s.off);
                } else if s.kind == OpKind::Write && !whole {
                    v.failed(s.file, s.off, s.bytes);
                }
            }
            if s.issued < sh.measure_start {
                // the ramp: only its report lines see it
                if r >= 0 && r as u32 == s.expect && t1 < sh.measure_start {
                    prog.report(s.kind, s.bytes, ns_since(s.issued, t1));
                }
                return;
            }
            if r < 0 {
                prog.failed(st, -r);
            } else if r as u32 != s.expect {
                prog.failed(st, 0);
            } else {
                let lat = ns_since(s.issued, t1);
                let t = ns_since(sh.measure_start, t1);
                st.record_io(s.kind, s.si, s.bytes, lat, t);
                if s.kind != OpKind::Fsync {
                    if let Some(max) = sp.over_max(s.kind, lat) {
                        sp.max_hit = Some(max);
                    }
                    if let Some(l) = sp.lat.as_mut() {
                        let step = l.completed(lat, t1, sp.completed);
                        if step != Step::Go {
                            sp.lat_step = step;
                        }
                    }
                    let slat = ns_since(s.issued, s.submitted);
                    st.record_submission(s.kind, slat, lat.saturating_sub(slat));
                    if let Some(q) = s.queued {
                        st.record_from_issue(s.kind, ns_since(q, t1));
                    }
                    if let Some(l) = &mut st.fio_log {
                        l.io(s.kind, s.off, s.bytes, lat, Some(slat), t);
                    }
                }
                publish(s.kind, s.bytes, lat);
            }
        });
        n
    };
    // Submits what is queued and reaps until nothing is in flight (fio's io_u_quiesce): before
    // a think-time or flow pause and at the latency search's steps.
    macro_rules! quiesce {
        () => {
            submit(&mut eng, &mut slots, &mut unsubmitted)?;
            while inflight > 0 {
                match eng.commit_and_wait(inflight as u32, None) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => return Err(e),
                }
                inflight -= reap(
                    &mut eng, &mut g, &mut slots, &mut free, &mut st, &mut vf, &mut sp,
                );
            }
        };
    }

    loop {
        let now = Instant::now();
        if !stopping
            && (sh.ending()
                || deadline.is_some_and(|d| now >= d)
                || (quota.is_some_and(|q| q.paid(issued_in_window, bytes_in_window))
                    && !vf.as_ref().is_some_and(Verifier::backlog_left)))
        {
            stopping = true;
        }
        // Issue as many as allowed.
        let mut wait_until: Option<Instant> = None;
        let mut pause = false;
        // fio's latency_target: the depth its search is at
        let cap = sp.lat.as_ref().map_or(depth, |l| l.depth() as usize);
        while !stopping && inflight < cap {
            if sp.flows() && !flow_passed {
                if sp.flow_ahead() {
                    pause = true;
                    break;
                }
                flow_passed = true;
            }
            let paid = quota.is_some_and(|q| q.paid(issued_in_window, bytes_in_window));
            let mut is_back = std::mem::take(&mut carry_back);
            let next = match carry.take() {
                Some(n) => n,
                // --verify-backlog: a read-back of the thread's last writes when one is due
                None => match vf.as_mut().and_then(|v| v.back(paid)) {
                    Some(n) => {
                        is_back = true;
                        n
                    }
                    None if paid => {
                        stopping = true;
                        break;
                    }
                    None => {
                        if let Some(q) = quota {
                            g.cap(q.left(bytes_in_window));
                        }
                        if let Some(read) = pacer.choose(g.would_read(), Instant::now()) {
                            g.prefer(read);
                        }
                        g.next_op()
                    }
                },
            };
            if let Next::Fsync { file } = next {
                if inflight > 0 {
                    carry = Some(next); // drain first: the fsync covers completed writes
                    break;
                }
                let issued = Instant::now();
                slots[depth] = Some(Slot {
                    issued,
                    queued: None,
                    submitted: issued,
                    kind: OpKind::Fsync,
                    si: 0,
                    bytes: 0,
                    expect: 0,
                    file,
                    off: 0,
                });
                eng.queue_fsync(file, depth as u64);
                log_issue(&mut st, next, sh.start, issued);
                inflight += 1;
                break;
            }
            let sched = pacer.peek();
            let t = Instant::now();
            if let Some(s) = sched
                && s > t
            {
                carry = Some(next);
                carry_back = is_back;
                waits_for_slot = true;
                wait_until = Some(s);
                break;
            }
            let Next::Io {
                kind,
                file,
                off,
                len,
                si,
            } = next
            else {
                unreachable!()
            };
            if kind == OpKind::Trim {
                // done here, synchronously, as fio's queue engines trim (what is queued is
                // submitted first; what is in flight stays in flight)
                submit(&mut eng, &mut slots, &mut unsubmitted)?;
                let issued = sched.unwrap_or(t);
                log_issue(&mut st, next, sh.start, t);
                let r = trim_at(sh, file, off, len);
                let t1 = Instant::now();
                g.completed(kind, t1);
                pacer.advance(len);
                let waited = std::mem::take(&mut waits_for_slot);
                if let Some(s) = sched {
                    prev_lag = lag_ns(s, if waited { s } else { now }, t, prev_lag);
                }
                if issued < sh.measure_start {
                    if r.is_ok() && t1 < sh.measure_start {
                        prog.report(kind, len, ns_since(issued, t1));
                    }
                    continue;
                }
                if sched.is_some() {
                    st.record_lag(prev_lag);
                }
                match r {
                    Ok(()) => {
                        let lat = ns_since(issued, t1);
                        st.record_io(kind, si, len, lat, ns_since(sh.measure_start, t1));
                        publish(kind, len, lat);
                    }
                    Err(e) => prog.failed(&mut st, e),
                }
                if in_quota(job, kind) {
                    issued_in_window += 1;
                    bytes_in_window += len;
                    if quota.is_some_and(|q| q.paid(issued_in_window, bytes_in_window)) {
                        stopping = true;
                    }
                }
                continue;
            }
            // --verify: an I/O that overlaps one in flight waits for it (their order on the
            // device is not known otherwise).
            if overlap_waits
                && slots[..depth]
                    .iter()
                    .flatten()
                    .any(|o| o.file == file && o.off < off + len && off < o.off + o.bytes)
            {
                carry = Some(next);
                carry_back = is_back;
                break;
            }
            let slot = free.pop().expect("a free slot when inflight < depth");
            // SAFETY: slot < depth, so the slot (bs bytes, len <= bs) lies inside bufs.
            let ptr = unsafe { base.add(slot * bs) };
            let issued = sched.unwrap_or(t);
            slots[slot] = Some(Slot {
                issued,
                queued: sched.map(|_| t),
                submitted: issued,
                kind,
                si,
                bytes: len,
                expect: len as u32,
                file,
                off,
            });
            if kind == OpKind::Write {
                // SAFETY: as below: the slot's `len` bytes inside bufs, no I/O in flight on it.
                let b = unsafe { std::slice::from_raw_parts_mut(ptr, len as usize) };
                if let Some(v) = &mut vf {
                    v.stamp(b, file, off);
                    v.wrote(file, off, len, si);
                } else {
                    fill.before_write(b, off);
                }
            }
            // SAFETY: the slot's buffer stays valid and untouched until its completion is
            // reaped: the slot returns to `free` only then, and `bufs` outlives the loop.
            unsafe { eng.queue_io(kind, file, off, ptr, len as u32, slot as u64) };
            log_issue(&mut st, next, sh.start, t);
            unsubmitted.push(slot);
            inflight += 1;
            flow_passed = false;
            sp.issued += 1;
            pacer.advance(len);
            let waited = std::mem::take(&mut waits_for_slot);
            if let Some(s) = sched {
                // Free to go since this pass began (`now`), unless it waited for its slot.
                let ready = if waited { s } else { now };
                prev_lag = lag_ns(s, ready, t, prev_lag);
            }
            if issued >= sh.measure_start {
                if sched.is_some() {
                    st.record_lag(prev_lag);
                }
                if !is_back && in_quota(job, kind) {
                    issued_in_window += 1;
                    bytes_in_window += len;
                }
                if quota.is_some_and(|q| q.paid(issued_in_window, bytes_in_window))
                    && !vf.as_ref().is_some_and(Verifier::backlog_left)
                {
                    stopping = true;
                }
            }
            if sp.think_due(Instant::now()) {
                pause = true;
                break;
            }
        }
        if pause && !stopping {
            // thinktime or a flow's pause: what is in flight completes first
            quiesce!();
            if sp.flows() && !flow_passed {
                sp.flow_pause(sh);
            } else {
                sp.think(sh);
            }
            continue;
        }
        if inflight == 0 {
            if stopping {
                break;
            }
            if let Some(w) = wait_until {
                // a stop, the phase's end or the deadline: the loop's top sees it
                pacer.wait(w, Instant::now(), sh);
            }
            continue;
        }
        // Until the next slot, wait for a completion (a timed wait, to the slot); a thread that
        // may spin waits until shortly before it, then submits what is queued and spins to the
        // slot, reaping completions as they come (no system call).
        let mut timeout = None;
        if let Some(w) = wait_until.filter(|_| !stopping) {
            let left = w.saturating_duration_since(Instant::now());
            if left <= pacer.spin() {
                submit(&mut eng, &mut slots, &mut unsubmitted)?;
                loop {
                    inflight -= reap(
                        &mut eng, &mut g, &mut slots, &mut free, &mut st, &mut vf, &mut sp,
                    );
                    if Instant::now() >= w {
                        break;
                    }
                    std::hint::spin_loop();
                }
                continue;
            }
            timeout = Some(left - pacer.spin());
        }
        submit(&mut eng, &mut slots, &mut unsubmitted)?;
        // iodepth_batch_complete_min: wait for that many completions (at most those in flight)
        let min = job.timing.complete_min.clamp(1, inflight as u64) as u32;
        match eng.commit_and_wait(min, timeout) {
            Ok(()) => {}
            Err(e)
                if e.raw_os_error() == Some(libc::EINTR)
                    || (timeout.is_some() && e.raw_os_error() == Some(libc::ETIME)) => {}
            Err(e) => return Err(e),
        }
        inflight -= reap(
            &mut eng, &mut g, &mut slots, &mut free, &mut st, &mut vf, &mut sp,
        );
        if !stopping && let Some(e) = sp.rate_check(Instant::now()) {
            rate_min_end(sh, &mut st, prog, e);
            stopping = true;
        }
        if !stopping && job.timing.exit_on_error && st.errors.iter().any(|&n| n > 0) {
            sh.exit.store(true, Relaxed);
        }
        // fio's max_latency: an I/O over it ends the thread
        if !stopping && let Some(max) = sp.max_hit {
            lat_fatal(sh, &mut st, Some(max));
            stopping = true;
        }
        // fio's latency_target: what a late completion asked, else the window's judgement
        if !stopping && sp.lat.is_some() {
            let done = sp.completed;
            let step = match std::mem::replace(&mut sp.lat_step, Step::Go) {
                Step::Go => sp
                    .lat
                    .as_mut()
                    .map_or(Step::Go, |l| l.check(Instant::now(), done)),
                s => s,
            };
            match step {
                Step::Go => {}
                Step::Done => stopping = true,
                Step::Fatal => {
                    lat_fatal(sh, &mut st, None);
                    stopping = true;
                }
                Step::Quiesce | Step::FinalRun => {
                    // what is in flight completes first
                    quiesce!();
                    if step == Step::FinalRun {
                        // fio's reset_all_stats: the counts and the runtime start over
                        let now = Instant::now();
                        st.restart_totals(now);
                        deadline = sh
                            .deadline
                            .map(|d| now + d.saturating_duration_since(sh.measure_start));
                    }
                }
            }
        }
    }
    if job.mode.writes() && !sh.stop.load(Relaxed) {
        let carried = match carry {
            Some(Next::Fsync { file }) => Some(file),
            _ => None,
        };
        for f in g.final_fsyncs(carried, job.fsync_end) {
            let issued = Instant::now();
            slots[depth] = Some(Slot {
                issued,
                queued: None,
                submitted: issued,
                kind: OpKind::Fsync,
                si: 0,
                bytes: 0,
                expect: 0,
                file: f,
                off: 0,
            });
            eng.queue_fsync(f, depth as u64);
            log_issue(&mut st, Next::Fsync { file: f }, sh.start, issued);
            loop {
                match eng.commit_and_wait(1, None) {
                    Ok(()) => break,
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(e) => return Err(e),
                }
            }
            reap(
                &mut eng, &mut g, &mut slots, &mut free, &mut st, &mut vf, &mut sp,
            );
        }
    }
    log_end(&mut st, sh.start);
    st.finish(ns_since(sh.measure_start, Instant::now()));
    st.verify = vf.map(Verifier::finish);
    st.lat_depth = sp.lat.as_ref().map(LatTarget::depth);
    Ok(st)
}
