//! The loop of the engines that do no I/O (`Caps::no_io`: fio's cpuio and exec): a cycle of
//! the engine's own work, timed and counted as one read of 0 bytes (as fio counts it), then the
//! pause the engine asks for, until the job's runtime has passed. Nothing is allocated per
//! cycle.

use super::*;
use crate::engine::ops::CycleEngine;

/// The longest slice a pause sleeps before it looks at the stop flags again.
const SLICE: Duration = Duration::from_millis(20);

/// Whether the thread must end now: stopped, the phase ended (`exitall`), its steady state
/// attained or past its runtime.
fn over(sh: &Shared, now: Instant) -> bool {
    sh.ending() || sh.deadline.is_some_and(|d| now >= d)
}

/// The direction a job's cycles are counted in: reads unless the job only writes (or trims),
/// as fio counts its `rw=`.
fn kind_of(job: &Job) -> OpKind {
    if job.mode.reads() {
        OpKind::Read
    } else if job.mode.issues_writes() {
        OpKind::Write
    } else {
        OpKind::Trim
    }
}

/// Runs one worker with an engine that does no I/O.
pub fn run_cycles<'a, E: CycleEngine<'a>>(
    sh: &Shared<'a>,
    thread: u32,
    _files: u32,
    prog: &Progress,
) -> std::io::Result<ThreadStats> {
    const { assert!(E::CAPS.no_io, "an I/O engine in the cycle loop") };
    place(sh.job, thread)?;
    let mut eng = E::open(sh, thread)?;
    let kind = kind_of(sh.job);
    let mut st = ThreadStats::new(window_ns(sh));
    let mut ops = 0u64;
    let mut record = |st: &mut ThreadStats, t0: Instant, t1: Instant, r: Result<(), i32>| {
        if t0 < sh.measure_start {
            return;
        }
        match r {
            Ok(()) => {
                let lat = ns_since(t0, t1);
                st.record(kind, 0, lat, ns_since(sh.measure_start, t1));
                prog.report(kind, 0, lat);
                ops += 1;
                prog.ops.store(ops, Relaxed);
            }
            Err(e) => prog.failed(st, e),
        }
    };
    let mut now = Instant::now();
    while !over(sh, now) {
        let t0 = now;
        let r = eng.cycle();
        let t1 = Instant::now();
        record(&mut st, t0, t1, r.map(drop));
        // the pause, asleep in slices so that a stop or the runtime's end cuts it short
        let until = t1 + r.unwrap_or_default();
        now = t1;
        while now < until && !over(sh, now) {
            std::thread::sleep((until - now).min(SLICE));
            now = Instant::now();
        }
    }
    let t0 = Instant::now();
    if let Some(r) = eng.finish() {
        record(&mut st, t0, Instant::now(), r);
    }
    st.finish(ns_since(sh.measure_start, Instant::now()));
    Ok(st)
}
