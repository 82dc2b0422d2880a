//! `iolab together`: the same workload on each of several directories (devices) alone, then on
//! all of them at once, stored as a sweep of two axes, `load` (`alone`, `together`) and `dir`.
//! A cap the devices share (the host's, the instance's, or one disk's under its partitions) shows
//! as a total together no higher than the best device alone (`explain`'s `shared_cap`).
//!
//! The runs at once are one runner call per directory, each on its own thread of this process,
//! held together at every phase checkpoint by a [`Joint`] (as the ranks of a distributed run
//! are by MPI): each prepares, evicts and starts its workers at one agreed instant.

use super::{Axis, CellOut, RunOptions, SweepSpec, figures, mean_figures, run_cell};
use crate::engine::checkpoints::{Agreed, Checkpoint, PhaseSync};
use crate::error::{Error, Result};
use crate::model::run::RunDoc;
use crate::store::Store;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime};

pub use crate::model::experiment::{ALONE, LOAD, TOGETHER};

/// How far ahead of the last thread to reach the measure checkpoint the workers start: every
/// thread is then waiting for the instant, none is still leaving the checkpoint.
const START_LEAD: Duration = Duration::from_millis(20);

/// What the threads of a joint run share: how many still run, how many wait at the current
/// checkpoint, whether all that came were fine, and the agreed start.
#[derive(Default)]
struct State {
    live: usize,
    arrived: usize,
    generation: u64,
    all_ok: bool,
    stopped: bool,
    start: Option<SystemTime>,
}

/// The checkpoints of runs in threads of one process, as MPI holds the ranks of a distributed
/// run: each checkpoint passes when every thread still running has reached it; any that was not
/// fine, or left early, stops all.
pub struct Joint {
    state: Mutex<State>,
    turn: Condvar,
}

impl Joint {
    pub fn new(threads: usize) -> Joint {
        Joint {
            state: Mutex::new(State {
                live: threads,
                all_ok: true,
                ..State::default()
            }),
            turn: Condvar::new(),
        }
    }

    /// One thread's side of the joint; it leaves the joint when dropped.
    pub fn member(&self) -> Member<'_> {
        Member {
            joint: self,
            stopped: std::cell::Cell::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Everyone has come: the verdict, and the start when the workers start next.
    fn release(&self, s: &mut State, at: Option<Checkpoint>) {
        s.stopped |= !s.all_ok;
        s.arrived = 0;
        s.all_ok = true;
        s.generation += 1;
        s.start = (at == Some(Checkpoint::Measure)).then(|| SystemTime::now() + START_LEAD);
        self.turn.notify_all();
    }
}

/// One thread of a [`Joint`].
pub struct Member<'a> {
    joint: &'a Joint,
    stopped: std::cell::Cell<bool>,
}

impl PhaseSync for Member<'_> {
    fn checkpoint(&self, at: Checkpoint, ok: bool) -> Agreed {
        if self.stopped.get() {
            return Agreed::Stop;
        }
        let j = self.joint;
        let mut s = j.lock();
        if !s.stopped {
            s.all_ok &= ok;
            s.arrived += 1;
            let generation = s.generation;
            if s.arrived >= s.live {
                j.release(&mut s, Some(at));
            } else {
                while s.generation == generation {
                    s = j.turn.wait(s).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
        if s.stopped {
            self.stopped.set(true);
            Agreed::Stop
        } else {
            Agreed::Go
        }
    }
    fn common_start(&self) -> Option<SystemTime> {
        self.joint.lock().start
    }
}

impl Drop for Member<'_> {
    /// A thread whose run ended: the others no longer wait for it. Ending while they wait at a
    /// checkpoint it never reached (its run failed) stops them.
    fn drop(&mut self) {
        let j = self.joint;
        let mut s = j.lock();
        s.live = s.live.saturating_sub(1);
        if s.arrived > 0 && s.arrived >= s.live {
            s.all_ok = false;
            j.release(&mut s, None);
        }
    }
}

/// The spec of a together experiment: a sweep over `load` (outer) and `dir`, marked so that
/// `sweep --resume` does not take it for one of its own.
pub fn spec(fixed: Vec<String>, dirs: &[String]) -> SweepSpec {
    SweepSpec {
        fixed,
        axes: vec![
            Axis {
                name: LOAD.into(),
                values: vec![ALONE.into(), TOGETHER.into()],
            },
            Axis {
                name: "dir".into(),
                values: dirs.to_vec(),
            },
        ],
        repeat: 1,
        rows: Some("dir".into()),
        cols: Some(LOAD.into()),
        metric: "iops".into(),
    }
}

/// Whether a stored sweep is a together experiment (its axes are `load` and `dir`).
pub fn is_together(spec: &SweepSpec) -> bool {
    spec.axes.iter().any(|a| a.name == LOAD) && spec.axes.iter().any(|a| a.name == "dir")
}

/// The run options of one directory: the fixed ones and `--dir`.
fn dir_args(fixed: &[String], dir: &str) -> Vec<String> {
    let mut a = fixed.to_vec();
    a.push("--dir".into());
    a.push(dir.into());
    a
}

/// Runs the experiment: each directory alone (its file set kept for the runs at once), then all
/// at once; every run saved in group `gid` with its cell. A run interrupted ends the experiment
/// (what ran is stored and returned). The sets the runs alone made are removed at the end,
/// whatever happened, unless the run options hold `--keep`; a set that was there before is
/// left as it was found.
pub fn run_together(
    ro: &dyn RunOptions,
    store: &mut Store,
    gid: i64,
    spec: &SweepSpec,
    dirs: &[String],
    stop: &AtomicBool,
) -> Result<Vec<CellOut>> {
    let keep = spec.fixed.iter().any(|a| a == "--keep");
    let mut made = Vec::new();
    let r = measure(ro, store, gid, spec, dirs, stop, &mut made);
    if !keep {
        for (set, dir_made) in made {
            crate::engine::fileset::cleanup(&set);
            if dir_made {
                crate::system::target::remove_made_dir(&set.dir);
            }
        }
    }
    r
}

/// [`run_together`]'s runs; `made`: the file sets they made (and whether the directory too).
fn measure(
    ro: &dyn RunOptions,
    store: &mut Store,
    gid: i64,
    spec: &SweepSpec,
    dirs: &[String],
    stop: &AtomicBool,
    made: &mut Vec<(crate::model::job::FileSetSpec, bool)>,
) -> Result<Vec<CellOut>> {
    let mut out = Vec::new();
    let mut seq = 0;
    let mut save = |store: &mut Store, load: &str, dir: &str, doc: &RunDoc| -> Result<bool> {
        let cell: BTreeMap<String, String> = [
            (LOAD.to_string(), load.to_string()),
            ("dir".to_string(), dir.to_string()),
        ]
        .into();
        seq += 1;
        let cj = serde_json::to_value(&cell).expect("json");
        let id = store.save_run(doc, &doc.to_json(), Some((gid, seq)), Some(&cj))?;
        if !doc.interrupted {
            out.push(CellOut {
                cell,
                run_ids: vec![id],
                figures: mean_figures(&[figures(doc)]),
            });
        }
        Ok(!doc.interrupted)
    };
    // alone, one after another, each set kept for the runs at once
    for d in dirs {
        if stop.load(Ordering::Relaxed) {
            return Ok(out);
        }
        let mut args = dir_args(&spec.fixed, d);
        args.push("--keep".into());
        let plan = ro.plan(&args)?;
        if crate::engine::fileset::status(&plan.fileset).present_files == 0
            && plan.fileset.device.is_none()
        {
            made.push((plan.fileset.clone(), plan.created_dir));
        }
        let doc = match run_cell(&plan, stop) {
            Ok(doc) => doc,
            Err(e) if e.exit == crate::error::Exit::Interrupted => return Ok(out),
            Err(e) => return Err(e),
        };
        if !save(store, ALONE, d, &doc)? {
            return Ok(out);
        }
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(out);
    }
    // together: every plan made and locked before any starts
    let mut plans = Vec::new();
    let mut locks = Vec::new();
    for d in dirs {
        let plan = ro.plan(&dir_args(&spec.fixed, d))?;
        locks.push(crate::engine::fileset::lock(&plan.fileset.dir)?);
        plans.push(plan);
    }
    let joint = Joint::new(plans.len());
    let docs: Vec<Result<RunDoc>> = std::thread::scope(|sc| {
        let handles: Vec<_> = plans
            .iter()
            .enumerate()
            .map(|(i, plan)| {
                let joint = &joint;
                std::thread::Builder::new()
                    .name(format!("iolab-together-{i}"))
                    .spawn_scoped(sc, move || {
                        let member = joint.member();
                        crate::engine::runner::run_synced(plan, stop, &member, |_| {})
                    })
                    .expect("a thread for each directory")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::failed("a run of the runs at once panicked")))
            })
            .collect()
    });
    drop(locks);
    let mut first_err = None;
    for (d, r) in dirs.iter().zip(docs) {
        match r {
            Ok(doc) => {
                save(store, TOGETHER, d, &doc)?;
            }
            Err(e) => {
                first_err.get_or_insert(Error {
                    msg: format!("--dir {d}: {}", e.msg),
                    ..e
                });
            }
        }
    }
    match first_err {
        Some(e) if e.exit != crate::error::Exit::Interrupted => Err(e),
        _ => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Three threads pass each checkpoint together: none passes before the last arrives, and
    /// all get one start at the measure checkpoint.
    #[test]
    fn a_joint_holds_every_thread_at_each_checkpoint() {
        let joint = Joint::new(3);
        let arrived = AtomicUsize::new(0);
        let starts: Vec<Option<SystemTime>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..3)
                .map(|i| {
                    let (joint, arrived) = (&joint, &arrived);
                    sc.spawn(move || {
                        let m = joint.member();
                        std::thread::sleep(Duration::from_millis(30 * i));
                        arrived.fetch_add(1, Ordering::SeqCst);
                        assert_eq!(m.checkpoint(Checkpoint::Prepare, true), Agreed::Go);
                        // nobody passed before all three had come
                        assert_eq!(arrived.load(Ordering::SeqCst), 3);
                        assert_eq!(m.checkpoint(Checkpoint::Measure, true), Agreed::Go);
                        m.common_start()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(starts[0].is_some());
        assert!(starts.iter().all(|s| *s == starts[0]));
    }

    /// One thread not fine stops all at that checkpoint and every later one; one that leaves
    /// (its run failed) while the others wait stops them instead of leaving them waiting.
    #[test]
    fn one_failing_or_leaving_thread_stops_the_others() {
        let joint = Joint::new(2);
        let got: Vec<(Agreed, Agreed)> = std::thread::scope(|sc| {
            let hs: Vec<_> = [true, false]
                .into_iter()
                .map(|ok| {
                    let joint = &joint;
                    sc.spawn(move || {
                        let m = joint.member();
                        let a = m.checkpoint(Checkpoint::Prepare, ok);
                        (a, m.checkpoint(Checkpoint::Measure, true))
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(got, [(Agreed::Stop, Agreed::Stop); 2]);
        let joint = Joint::new(2);
        let a = std::thread::scope(|sc| {
            let waiter = sc.spawn(|| joint.member().checkpoint(Checkpoint::Evict, true));
            std::thread::sleep(Duration::from_millis(50));
            drop(joint.member());
            waiter.join().unwrap()
        });
        assert_eq!(a, Agreed::Stop);
    }
}
