//! The points of an experiment: each run here, or under MPI as a distributed run (rank 0
//! broadcasts the point's options, the other ranks [`follow`], [`Lead`] ends them), and what
//! rank 0 saves and prints when a rank dies or hangs in a point ([`OnPointFault`], [`PointAt`]).

use super::{RunOptions, run_cell};
use crate::error::{Error, Result};
use crate::model::run::RunDoc;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

/// A check of rank 0's plan of a point before it runs (saturate: exactly one mode).
type PlanCheck<'a> = &'a dyn Fn(&crate::engine::runner::Plan) -> Result<()>;

/// Where a point of an experiment is stored: its group, its place in it and its cell.
pub struct PointAt {
    pub gid: i64,
    pub seq: u32,
    pub cell: BTreeMap<String, String>,
}

/// Rank 0 of a distributed experiment: what it does when a rank dies or hangs while a point
/// runs (on the watchdog's thread, as [`crate::dist::side::OnFault`]): given every rank's
/// outcome of the point, the fault and where the point is stored, it saves and prints what the
/// other ranks measured and the experiment so far; returns the exit code.
pub type OnPointFault = std::sync::Arc<
    dyn Fn(Vec<crate::dist::Outcome>, &crate::dist::side::Fault, PointAt) -> i32 + Send + Sync,
>;

/// Where the points of an experiment run: in this process, or as distributed runs of every MPI
/// rank (rank 0 drives and stores; the others [`follow`]).
#[derive(Clone, Copy)]
pub enum Points<'a> {
    Here,
    Ranks(&'a crate::dist::Ranks, &'a OnPointFault),
}

impl Points<'_> {
    /// Runs one point: the run options `args`, planned (and judged by `check`) then run; `at`:
    /// where it will be stored.
    pub(super) fn run(
        self,
        ro: &dyn RunOptions,
        args: &[String],
        stop: &AtomicBool,
        check: PlanCheck,
        at: PointAt,
    ) -> Result<RunDoc> {
        match self {
            Points::Here => {
                let plan = ro.plan(args)?;
                check(&plan)?;
                run_cell(&plan, stop)
            }
            Points::Ranks(r, on_fault) => {
                // a rank that dies or hangs in this point: rank 0 saves what the others measured
                let on_fault = std::sync::Arc::clone(on_fault);
                r.on_fault(Box::new(move |outcomes, f| on_fault(outcomes, f, at)));
                r.broadcast(&serde_json::to_vec(&Some(args)).expect("json"));
                point_on_ranks(ro, r, args, stop, Some(check))
                    .expect("rank 0 gets the merged point")
            }
        }
    }
}

/// One point of a distributed experiment, on every rank alike: the options with `{rank}` and
/// `{host}` put in, planned and locked, every rank told whether all can start, run with the
/// phases together, gathered. On rank 0 the merged document (failed ranks named on stderr);
/// None on the others.
fn point_on_ranks(
    ro: &dyn RunOptions,
    r: &crate::dist::Ranks,
    args: &[String],
    stop: &AtomicBool,
    check: Option<PlanCheck>,
) -> Option<Result<RunDoc>> {
    r.reset();
    let args: Vec<String> = args
        .iter()
        .map(|a| crate::dist::substitute_str(a, r.rank(), &r.host))
        .collect();
    let setup = ro.plan(&args).and_then(|mut plan| {
        if let Some(c) = check {
            c(&plan)?;
        }
        if r.rank() != 0 {
            plan.quiet = true;
        }
        match crate::engine::fileset::lock(&plan.fileset.dir) {
            Ok(l) => Ok((plan, l)),
            Err(e) => {
                if plan.created_dir {
                    crate::system::target::remove_made_dir(&plan.fileset.dir);
                }
                Err(e)
            }
        }
    });
    let all = r.all_ok(setup.is_ok());
    let result = match setup {
        Err(e) => Err(e),
        Ok((plan, lock)) => {
            let res = if all {
                crate::engine::runner::run_synced(&plan, stop, r, |_| {})
            } else {
                Err(crate::engine::checkpoints::stopped())
            };
            drop(lock);
            if plan.created_dir && !plan.keep {
                crate::system::target::remove_made_dir(&plan.fileset.dir);
            }
            res
        }
    };
    let outcomes = r.gather(&result)?;
    let first_exit = crate::dist::first_exit(&outcomes);
    let (doc, failures) = crate::dist::merge::merge(outcomes);
    let named =
        |f: &crate::model::dist::RankFailure| format!("rank {} on {}: {}", f.rank, f.host, f.error);
    Some(match doc {
        Some(d) => {
            // saved marked incomplete; the experiment stops after it
            for f in &failures {
                eprintln!("iolab: error: {}", named(f));
            }
            Ok(d)
        }
        None => match failures.split_first() {
            Some((f, rest)) => {
                for o in rest {
                    eprintln!("iolab: error: {}", named(o));
                }
                Err(Error {
                    exit: match first_exit {
                        Some(2) => crate::error::Exit::Usage,
                        _ => crate::error::Exit::Failed,
                    },
                    msg: named(f),
                })
            }
            None => Err(crate::engine::checkpoints::stopped()),
        },
    })
}

/// A rank other than 0 of a distributed experiment: runs each point rank 0 sends, until rank 0
/// says the experiment ended.
pub fn follow(ro: &dyn RunOptions, r: &crate::dist::Ranks, stop: &AtomicBool) {
    loop {
        let b = r.broadcast(&[]);
        let args: Option<Vec<String>> = serde_json::from_slice(&b).unwrap_or(None);
        let Some(args) = args else { break };
        let _ = point_on_ranks(ro, r, &args, stop, None);
    }
}

/// Rank 0's side of a distributed experiment: when dropped (the experiment ended, however),
/// tells the other ranks.
pub struct Lead<'a>(pub &'a crate::dist::Ranks);

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.0
            .broadcast(&serde_json::to_vec(&None::<Vec<String>>).expect("json"));
    }
}
