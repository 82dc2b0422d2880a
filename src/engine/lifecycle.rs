//! A file set's life over one command (`iolab run`, a job file, a distributed run's rank): the
//! set's lock held for the whole command, the `--dir` the command made removed at its end unless
//! kept (the lock file is the last thing in it), and after repetitions the sets the command made
//! removed. The commands call these; the set's files themselves are `fileset`'s.

use crate::engine::fileset::{self, SetLock};
use crate::engine::runner::{self, Plan};
use crate::error::Result;
use crate::model::job::FileSetSpec;
use crate::system::target::remove_made_dir;
use std::path::PathBuf;

/// A plan's file set locked for one command: one iolab at a time on a set, for every repetition
/// and the cleanup.
#[derive(Debug)]
pub struct HeldSet {
    lock: SetLock,
    dir: PathBuf,
    /// the command made `--dir` (as the plan said when the set was taken)
    made_dir: bool,
    keep: bool,
}

/// Takes the lock of the plan's set. When it is refused, a `--dir` this command made goes.
pub fn hold(plan: &Plan) -> Result<HeldSet> {
    match fileset::lock(&plan.fileset.dir) {
        Ok(lock) => Ok(HeldSet {
            lock,
            dir: plan.fileset.dir.clone(),
            made_dir: plan.created_dir,
            keep: plan.keep,
        }),
        Err(e) => {
            abandon(plan);
            Err(e)
        }
    }
}

impl HeldSet {
    /// The command is done with the set: the lock released, then the `--dir` it made removed
    /// unless `--keep` (the lock file was the last thing in it).
    pub fn release(self) {
        let HeldSet {
            lock,
            dir,
            made_dir,
            keep,
        } = self;
        drop(lock);
        if made_dir && !keep {
            remove_made_dir(&dir);
        }
    }

    /// The command ends without having run on the set (another process refused): the lock
    /// released and the `--dir` it made removed, `--keep` or not (nothing was made in it).
    pub fn abandon(self) {
        let HeldSet {
            lock,
            dir,
            made_dir,
            ..
        } = self;
        drop(lock);
        if made_dir {
            remove_made_dir(&dir);
        }
    }
}

/// The command ends before the set was taken (a store or a port refused): a `--dir` it made goes.
pub fn abandon(plan: &Plan) {
    if plan.created_dir {
        remove_made_dir(&plan.fileset.dir);
    }
}

/// After a job file's last phase and repetition (a later one may use them): the directories
/// the phases made, removed unless kept.
pub fn remove_made_dirs(plans: &[Plan]) {
    for p in plans {
        if p.created_dir && !p.keep {
            remove_made_dir(&p.fileset.dir);
        }
    }
}

/// The same set of files: directory, count, sizes and layout.
fn same_set(a: &FileSetSpec, b: &FileSetSpec) -> bool {
    a.dir == b.dir
        && a.files == b.files
        && a.file_size_bytes == b.file_size_bytes
        && a.file_len() == b.file_len()
        && a.layout == b.layout
}

/// A job file's phase whose set is in the folder of an earlier phase's set of other sizes (fio:
/// one named file, at another length; t0002's two jobs) replaces it (`--reprepare` for that
/// phase) when the run made that folder's first set (nothing of iolab's was there before it),
/// so a set kept with `--keep` is not refused as a set of other sizes; a set that was there
/// before the run is never replaced this way.
pub fn regrow_sets(plans: &mut [Plan]) {
    let one_set = |q: &Plan| q.roles.is_empty() && q.fileset.device.is_none();
    let fresh: Vec<bool> = plans
        .iter()
        .map(|p| fileset::status(&p.fileset).present_files == 0)
        .collect();
    for i in 1..plans.len() {
        if !one_set(&plans[i]) {
            continue;
        }
        let dir = plans[i].fileset.dir.clone();
        let same_dir = |q: &Plan| one_set(q) && q.fileset.dir == dir;
        let first = plans[..i].iter().position(same_dir);
        let before = plans[..i].iter().rposition(same_dir);
        if let (Some(f), Some(b)) = (first, before)
            && fresh[f]
            && !same_set(&plans[b].fileset, &plans[i].fileset)
        {
            plans[i].reprepare = true;
        }
    }
}

/// A set a job file's phases share: removed after the last phase and repetition.
#[derive(Debug)]
pub struct SharedSet {
    spec: FileSetSpec,
    /// its `--dir` was made for it
    made_dir: bool,
}

/// A job file's phases, as fio keeps a job's files for the jobs after it: a phase's set (no
/// roles, no device) is kept for the next phase on the same directory when both name the same
/// files (`names[i]`: the `filename=` of phase `i`'s one job) and the set has the same files,
/// sizes and layout, so the later job reads what the earlier one wrote (and, with `--verify`,
/// checks it). Jobs that name no file have files of their own in fio: not shared. Returns the
/// sets to remove after the last phase and repetition: those not there before the run, unless
/// `--keep`.
pub fn share_sets(plans: &mut [Plan], names: &[Option<String>]) -> Vec<SharedSet> {
    let mut shared: Vec<SharedSet> = Vec::new();
    let one_set = |q: &Plan| q.roles.is_empty() && q.fileset.device.is_none();
    for i in 0..plans.len() {
        let p = &plans[i];
        let name = names.get(i).cloned().flatten();
        let next = plans[i + 1..]
            .iter()
            .enumerate()
            .find(|(_, q)| q.fileset.device.is_none() && q.fileset.dir == p.fileset.dir);
        let again = next.is_some_and(|(j, q)| {
            one_set(q)
                && same_set(&q.fileset, &p.fileset)
                && name.is_some()
                && names.get(i + 1 + j).cloned().flatten() == name
        });
        if p.keep || !one_set(p) || !again {
            continue;
        }
        let fresh = fileset::status(&p.fileset).present_files == 0 || runner::replaces_set(p);
        if fresh && !shared.iter().any(|s| same_set(&s.spec, &p.fileset)) {
            shared.push(SharedSet {
                spec: p.fileset.clone(),
                made_dir: p.created_dir,
            });
        }
        plans[i].keep = true;
    }
    shared
}

/// After a job file's last phase and repetition: the sets [`share_sets`] kept, removed (and a
/// `--dir` made for them).
pub fn remove_shared(sets: &[SharedSet]) {
    for s in sets {
        fileset::cleanup(&s.spec);
        if s.made_dir {
            remove_made_dir(&s.spec.dir);
        }
    }
}

/// What was there before a run with repetitions, so that the sets it made (and only those) are
/// removed after the last one; the sets are kept between repetitions.
#[derive(Debug)]
pub struct Repetitions {
    /// the plan's set was there before (a device target always counts as there)
    existed: bool,
    /// the roles' own sets (DIR/NAME/): the set, whether it and its directory were there before
    own_sets: Vec<(FileSetSpec, bool, bool)>,
    /// `--keep`: nothing is removed
    keep: bool,
}

/// Records what is there before the first of `reps` repetitions; with more than one, the plan
/// keeps its set (and `--dir`) between them.
pub fn repetitions(plan: &mut Plan, reps: u32) -> Repetitions {
    // A set --reprepare replaces was there before: it stays, in its new sizes.
    // A device target is never prepared or removed: it counts as there before.
    let existed = plan.fileset.device.is_some() || fileset::status(&plan.fileset).present_files > 0;
    let own_sets = plan
        .roles
        .iter()
        .filter(|r| r.own_set)
        .map(|r| {
            (
                r.fileset.clone(),
                fileset::status(&r.fileset).present_files > 0,
                r.fileset.dir.exists(),
            )
        })
        .collect();
    let keep = plan.keep;
    if reps > 1 {
        // Keep the set between repetitions; it is removed after the last one if this run made it.
        plan.keep = true;
        plan.created_dir = false;
    }
    Repetitions {
        existed,
        own_sets,
        keep,
    }
}

impl Repetitions {
    /// After the last repetition, or a failed one: the sets this run made removed (the roles'
    /// own directories too when it made them), unless `--keep`.
    pub fn cleanup(&self, plan: &Plan) {
        if self.keep {
            return;
        }
        if !self.existed {
            fileset::cleanup(&plan.fileset);
        }
        for (spec, set_existed, dir_existed) in &self.own_sets {
            if !set_existed {
                fileset::cleanup(spec);
                if !dir_existed {
                    remove_made_dir(&spec.dir);
                }
            }
        }
    }
}
