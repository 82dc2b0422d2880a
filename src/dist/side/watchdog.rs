//! Rank 0's watchdog: judges every rank (a connection closed without goodbye, heartbeats or
//! I/O stopped for the rank timeout), and on the first fault ends the run: tells the ranks to
//! stop, waits for their last cells and hands every rank's outcome to the command.

use super::{
    BEAT, Fault, Handler, Link, MEASURING, Monitor, SETTLE, STOP, SoFar, WAITING, lock, phase_name,
};
use crate::dist::{Failed, Outcome};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Rank 0: the watchdog thread. Judges every rank until the run ends normally ([`Link::bye`]);
/// on the first fault it ends the run and the process.
pub fn start_watchdog(link: &Arc<Link>) -> std::io::Result<()> {
    let Some(m) = link.monitor.clone() else {
        return Ok(());
    };
    m.armed.store(true, Ordering::SeqCst);
    let link = Arc::clone(link);
    std::thread::Builder::new()
        .name("iolab-watch".into())
        .spawn(move || {
            let mut beat_at = Instant::now();
            loop {
                // a closed connection wakes it at once; silences are judged 4 times a second
                {
                    let all = lock(&m.ranks);
                    let armed = m.armed.load(Ordering::SeqCst);
                    if !(armed && all.iter().any(|s| s.closed && !s.bye)) {
                        let _ = m.closed.wait_timeout(all, Duration::from_millis(250));
                    }
                }
                if beat_at.elapsed() >= BEAT {
                    // rank 0's heartbeat: the other ranks end should rank 0 stop or hang
                    beat_at = Instant::now();
                    for s in lock(&m.ranks).iter_mut() {
                        if let Some(c) = s.conn.as_mut() {
                            let _ = c.write_all(b"beat\n");
                        }
                    }
                }
                if !m.armed.load(Ordering::SeqCst) {
                    continue;
                }
                link.beat();
                if let Some(f) = judge(&m) {
                    // unless rank 0's main thread just took the outcomes from the gather
                    if m.armed.swap(false, Ordering::SeqCst) {
                        let code = end_early(&link, &m, f);
                        std::process::exit(code);
                    }
                }
            }
        })?;
    Ok(())
}

/// The first rank found gone or hung, if any.
pub(super) fn judge(m: &Monitor) -> Option<Fault> {
    let t = m.timeout();
    let all = lock(&m.ranks);
    let fault = |r: usize, reason: String| Fault {
        rank: r as u32,
        host: all[r].host.clone(),
        reason,
    };
    for (r, s) in all.iter().enumerate() {
        if r == 0 || s.bye {
            continue;
        }
        if s.closed {
            return Some(fault(
                r,
                format!(
                    "killed or exited (its connection to rank 0 closed) while {}",
                    phase_name(s.phase)
                ),
            ));
        }
        if s.beat_at.elapsed() > t {
            return Some(fault(
                r,
                format!(
                    "no heartbeat for {} s (stopped or hung) while {}",
                    t.as_secs_f64(),
                    phase_name(s.phase)
                ),
            ));
        }
    }
    for (r, s) in all.iter().enumerate() {
        if s.phase == MEASURING && !s.bye && s.ops_at.elapsed() > t {
            return Some(fault(
                r,
                format!(
                    "no I/O completed for {} s while measuring (I/O that does not return)",
                    t.as_secs_f64()
                ),
            ));
        }
    }
    None
}

/// Tells every rank to stop, waits (at most [`SETTLE`]) for their last cells, and hands every
/// rank's outcome to the command: the faulty rank's reason, each other rank's document so far
/// (or "stopped" when it had measured nothing). Returns the exit code.
pub(super) fn end_early(link: &Link, m: &Monitor, f: Fault) -> i32 {
    for s in lock(&m.ranks).iter_mut() {
        if let Some(c) = s.conn.as_mut() {
            let _ = c.write_all(STOP.as_bytes());
        }
    }
    link.abort_here();
    let deadline = Instant::now() + SETTLE;
    while Instant::now() < deadline {
        link.beat();
        let settled = lock(&m.ranks)
            .iter()
            .enumerate()
            .all(|(r, s)| r == f.rank as usize || s.bye || s.closed || s.phase >= WAITING);
        if settled {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if lock(&m.ranks)[0].phase >= WAITING {
        // This rank's workers have stopped. The SIGTERM the launcher sends 1 s after a death
        // would end this process at once while its stop flag is set (a second Ctrl-C): cleared,
        // that signal only sets it again, and the save below has until the SIGKILL.
        link.release_stop();
    }
    let handler = lock(&m.on_fault).take();
    match handler {
        Some(Handler::Run(h)) => h(
            outcomes(m, &f, link.epoch(), |d| match d {
                SoFar::Run(d) => Some(*d),
                SoFar::Db(_) => None,
            }),
            &f,
        ),
        Some(Handler::Db(h)) => h(
            outcomes(m, &f, link.epoch(), |d| match d {
                SoFar::Db(d) => Some(*d),
                SoFar::Run(_) => None,
            }),
            &f,
        ),
        None => {
            eprintln!("iolab: error: rank {} on {}: {}", f.rank, f.host, f.reason);
            crate::error::Exit::Failed as i32
        }
    }
}

/// Every rank's outcome when rank 0 ends a run early: the faulty rank's reason, each other
/// rank's document so far in the current run or experiment point `epoch` (`pick`: of the
/// command's kind), or "stopped" when it had measured nothing there.
pub(super) fn outcomes<T>(
    m: &Monitor,
    f: &Fault,
    epoch: u64,
    pick: fn(SoFar) -> Option<T>,
) -> Vec<Outcome<T>> {
    lock(&m.ranks)
        .iter_mut()
        .enumerate()
        .map(|(r, s)| Outcome {
            rank: r as u32,
            host: s.host.clone(),
            result: if r == f.rank as usize {
                Err(Failed {
                    exit: crate::error::Exit::Failed as i32,
                    msg: f.reason.clone(),
                })
            } else {
                s.done
                    .take()
                    .filter(|d| d.0 == epoch)
                    .and_then(|d| pick(d.1))
                    .ok_or_else(|| Failed {
                        exit: crate::error::Exit::Interrupted as i32,
                        msg: crate::engine::checkpoints::STOPPED.to_string(),
                    })
            },
        })
        .collect()
}
