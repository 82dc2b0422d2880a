//! `iolab run JOBFILE...`: fio job files translated into iolab run options, job by job, and
//! grouped into phases (jobs between stonewalls run at once, as roles). docs/fio-jobs.md.

use super::*;
use crate::spec::fio_vocab;
use crate::spec::fiojob::{self, JobFile, JobSection};

mod bsizes;
mod buffers;
mod ctx;
mod engines;
mod iolog;
mod job;
mod logs;
mod noio;
mod runopts;
mod steady;
mod timing;
mod verify;
mod zones;

pub use logs::log_files;

pub use ctx::Blockers;
pub use verify::FIO_CHECKSUMS;

/// fio's default random seed (`randrepeat=1` without `randseed`): the same offsets every run.
pub use crate::model::job::FIO_RANDSEED;

/// One fio job as iolab runs it.
#[derive(Debug, Clone)]
pub struct FioJob {
    /// The role name (the section name in iolab's role alphabet, unique in the run).
    pub name: String,
    /// The section as written.
    pub section: String,
    /// `file:line` of the section.
    pub at: String,
    pub phase: usize,
    /// fio's reporting group (its `groupid`): a stonewall, `new_group` or a later job file
    /// starts the next, after a job; `group_reporting` reports a group's jobs as one row.
    pub group: usize,
    /// The run options this job runs with.
    pub args: RunArgs,
    /// The same as `iolab run` flags: the equivalent flag run.
    pub iolab_args: Vec<String>,
    /// Every option of the job as resolved (globals included, later wins), fio's spelling.
    pub fio_options: BTreeMap<String, String>,
    /// Options iolab did not run (`--ignore-unsupported`): `file:line: key=value`.
    pub ignored: Vec<String>,
    /// How an option was approximated.
    pub notes: Vec<String>,
}

/// The job files of a run, parsed and translated.
#[derive(Debug, Clone)]
pub struct FioRun {
    pub files: Vec<JobFile>,
    pub jobs: Vec<FioJob>,
    pub phases: usize,
}

/// Reads a job file or an include: a regular file of at most 1 MiB of text
/// (`spec::input`), so `/dev/zero`, a FIFO or a huge file is refused before it is read.
fn read_jobfile(p: &Path) -> std::result::Result<String, String> {
    crate::spec::input::read_text(p, crate::spec::input::JOB_FILE_MAX_BYTES).map_err(|e| e.0)
}

/// Reads, parses and translates the job files of `iolab run JOBFILE...`. Unsupported options
/// are refused (in one line) unless `--ignore-unsupported`.
pub fn load(a: &RunArgs) -> Result<FioRun> {
    let read = read_jobfile;
    // fio's reserved names first ($ncpus, $pagesize, $mb_memory), then the environment
    let env = |k: &str| match k {
        "ncpus" => Some(
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
        ),
        // SAFETY: sysconf has no preconditions.
        "pagesize" => Some(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.to_string()),
        "mb_memory" => {
            // SAFETY: sysconf has no preconditions.
            let (pages, size) = unsafe {
                (
                    libc::sysconf(libc::_SC_PHYS_PAGES),
                    libc::sysconf(libc::_SC_PAGESIZE),
                )
            };
            Some(((pages as i128 * size as i128) >> 20).to_string())
        }
        _ => std::env::var(k).ok(),
    };
    let src = fiojob::Source {
        read: &read,
        env: &env,
    };
    let mut files = Vec::new();
    let mut stdin_used = false;
    for (i, p) in a.jobfiles.iter().enumerate() {
        let s = p.display().to_string();
        // a job file is `-`, a path ending in .fio, or a file whose first line that is not a
        // comment is a [section]
        let text = if s == "-" {
            if stdin_used {
                return Err(Error::usage("-: standard input can be read only once"));
            }
            stdin_used = true;
            crate::spec::input::bounded_text(
                std::io::stdin().lock(),
                crate::spec::input::JOB_FILE_MAX_BYTES,
            )
            .map_err(|e| Error::usage(format!("-: standard input: {e}")))?
        } else {
            let t = read_jobfile(p).map_err(|e| Error::usage(format!("{s}: job file: {e}")))?;
            if p.extension().is_none_or(|e| e != "fio") && !fiojob::looks_like_jobfile(&t) {
                return Err(Error::usage(format!(
                    "{s}: not a fio job file (its first line that is not a comment is no [section]); run options are given as --flags"
                )));
            }
            t
        };
        files.push(fiojob::parse(&s, Some(&text), i, &src)?);
    }
    translate(a, files)
}

/// The translation of parsed job files (a device's size is read when a job on one gives none).
pub fn translate(a: &RunArgs, files: Vec<JobFile>) -> Result<FioRun> {
    translate_with(a, files, &|p| blockdev::size_bytes(p).ok())
}

/// [`translate`] with the size of a named device from `device_size` (tests give their own).
pub fn translate_with(
    a: &RunArgs,
    files: Vec<JobFile>,
    device_size: &dyn Fn(&Path) -> Option<u64>,
) -> Result<FioRun> {
    if a.mode.is_some() || !a.roles.is_empty() || a.profile.is_some() {
        return Err(Error::usage(
            "a job file says what to run: --mode, --role and --profile cannot be given with one",
        ));
    }
    let mut jobs: Vec<FioJob> = Vec::new();
    let mut blockers = Blockers::default();
    let mut phase = 0usize;
    let mut phase_jobs: Vec<String> = Vec::new();
    // fio's reporting groups (init.c add_job: stonewall or new_group after a job of the group)
    let (mut group, mut group_jobs) = (0usize, 0usize);
    let mut prev_file: Option<usize> = None;
    let mut index = 0u64;
    let mut thread_number = 1u64;
    let mut all_names: Vec<String> = Vec::new();
    for f in &files {
        if f.jobs.is_empty() {
            blockers.error(
                (&f.path, 0),
                &f.path,
                format!("{}: no job in the file (only [global] or nothing)", f.path),
            );
        }
        for s in &f.jobs {
            let at = format!("{}:{}", s.file, s.line);
            let mut j = job::translate_job(a, s, index, &mut blockers, device_size);
            index += 1;
            // fio numbers its threads across the run, each numjobs clone one (its seeds)
            if let Some(j) = j.as_mut() {
                if let Some(r) = j.args.fio_rand.as_mut() {
                    r.thread_number = thread_number;
                }
                thread_number += u64::from(j.args.threads.unwrap_or(1));
            }
            // phases: a stonewall, a wait_for on a job of this phase, or a later job file
            let stonewall = match s.get("stonewall") {
                Some(o) => fio_vocab::parse_bool(o.value.as_deref()).unwrap_or(false),
                None => false,
            };
            let mut new_phase = stonewall || prev_file.is_some_and(|p| p != s.file_index);
            let new_group = match s.get("new_group") {
                Some(o) => fio_vocab::parse_bool(o.value.as_deref()).unwrap_or(false),
                None => false,
            };
            if (new_phase || new_group) && group_jobs > 0 {
                group += 1;
                group_jobs = 0;
            }
            group_jobs += 1;
            if let Some(o) = s.get("wait_for") {
                let w = o.value.clone().unwrap_or_default();
                if !all_names.contains(&w) {
                    blockers.error(
                        (&o.file, o.line),
                        &o.at(),
                        format!(
                            "{}: wait_for: no job of that name comes before this one",
                            o.at()
                        ),
                    );
                }
                new_phase |= phase_jobs.contains(&w);
            }
            if new_phase && !phase_jobs.is_empty() {
                phase += 1;
                phase_jobs.clear();
            }
            prev_file = Some(s.file_index);
            // fio names a job by its section; only the job's own name= renames it (a
            // [global] name= does not: fio 3.33's JSON keeps the section names)
            let fio_name = job_name(s);
            phase_jobs.push(fio_name.clone());
            phase_jobs.push(s.name.clone());
            all_names.push(fio_name);
            all_names.push(s.name.clone());
            let Some(mut j) = j else { continue };
            j.phase = phase;
            j.group = group;
            j.at = at;
            // a unique role name
            let base = role_name(&j.section);
            let mut name = base.clone();
            let mut n = 2;
            while jobs.iter().any(|x| x.name == name) {
                name = format!("{base}-{n}");
                n += 1;
            }
            j.name = name;
            jobs.push(j);
        }
    }
    logs::number_logs(&mut jobs, &mut blockers);
    steady::by_group(&mut jobs, &mut blockers);
    blockers.into_result(a.ignore_unsupported)?;
    let phases = verify_alone(&mut jobs, phase + 1);
    // the named files' note says where each job's set is: shared by a phase's jobs that name
    // the same files, else (jobs of one phase) in a folder of the job's own
    for ph in 0..phases {
        let idx: Vec<usize> = (0..jobs.len()).filter(|&i| jobs[i].phase == ph).collect();
        if idx.len() < 2 {
            continue;
        }
        let shared = shares_named_set(&idx.iter().map(|&i| &jobs[i]).collect::<Vec<_>>());
        for &i in &idx {
            let j = &mut jobs[i];
            let sub = j.args.set.dir.join(&j.name);
            for n in j.notes.iter_mut().filter(|n| n.starts_with("filename=")) {
                *n = if shared {
                    format!(
                        "{n}, one set shared by the jobs of this phase that name them (as fio shares the file)"
                    )
                } else if let Some(cut) = n.rfind(" in ") {
                    format!(
                        "{} in {} (a set of the job's own: the jobs of a phase run at once) instead of the named file(s)",
                        &n[..cut],
                        sub.display()
                    )
                } else {
                    continue;
                };
            }
        }
    }
    Ok(FioRun {
        files,
        jobs,
        phases,
    })
}

/// iolab verifies one workload at a time (`--verify` is not run beside roles): in a phase of
/// several jobs, each verify job runs in a phase of its own after the others (which stay
/// together), with a note.
/// Returns the number of phases.
fn verify_alone(jobs: &mut [FioJob], phases: usize) -> usize {
    let mut next = 0usize;
    let was: Vec<usize> = jobs.iter().map(|j| j.phase).collect();
    for p in 0..phases {
        let at: Vec<usize> = (0..jobs.len()).filter(|&i| was[i] == p).collect();
        let split = at.len() > 1 && at.iter().any(|&i| jobs[i].args.verify);
        let others = at.iter().any(|&i| !jobs[i].args.verify);
        for &i in &at {
            jobs[i].phase = next;
        }
        if !split {
            next += 1;
            continue;
        }
        if others {
            next += 1;
        }
        let together: Vec<String> = at.iter().map(|&i| jobs[i].section.clone()).collect();
        let verifying: Vec<usize> = at
            .iter()
            .copied()
            .filter(|&i| jobs[i].args.verify)
            .collect();
        for i in verifying {
            let j = &mut jobs[i];
            j.phase = next;
            next += 1;
            j.notes.push(format!(
                "verify: runs in a phase of its own, not at once with {} as in fio (iolab verifies one workload at a time)",
                together
                    .iter()
                    .filter(|s| **s != j.section)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    next
}

/// A job's fio name: its own `name=` (given in its section, not in a `[global]`), else the
/// section's name, as fio 3.33 reports `jobname`.
pub fn job_name(s: &JobSection) -> String {
    s.opts
        .iter()
        .rev()
        .find(|o| o.key == "name" && !o.global)
        .and_then(|o| o.value.clone())
        .unwrap_or_else(|| s.name.clone())
}

/// A section name in the role alphabet (`[a-z0-9_-]+`).
fn role_name(s: &str) -> String {
    let n: String = s
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if n.is_empty() { "job".into() } else { n }
}

/// Whether the jobs of one phase share one file set, as fio's jobs share the file they name:
/// each names the same files (`filename=`) in the same directory, with the same sizes and no
/// offset, and none empties its files first (a sequential write job, `seqwr`).
pub fn shares_named_set(jobs: &[&FioJob]) -> bool {
    let key = |j: &FioJob| {
        let a = &j.args;
        (
            j.fio_options.get("filename").cloned(),
            a.set.dir.clone(),
            a.set.files,
            a.set.size,
            a.layout.clone(),
        )
    };
    jobs.len() > 1
        && jobs[0].fio_options.contains_key("filename")
        && jobs.iter().all(|j| {
            key(j) == key(jobs[0])
                && j.args.offset.is_none()
                && j.args.offset_increment.is_none()
                && !j
                    .args
                    .mode
                    .as_deref()
                    .is_some_and(|m| m.split(',').any(|x| x == "seqwr"))
        })
}

/// The plan of one phase: one job is an ordinary run, several are roles, each on its own file
/// set in `DIR/NAME/`, or on one set in `DIR` when they name the same files
/// ([`shares_named_set`]); the file engines' (filecreate, ...) in `DIR`, where each makes files
/// of its own.
pub fn plan_phase(jobs: &[&FioJob]) -> Result<Plan> {
    match jobs {
        [] => Err(Error::usage("a phase without jobs")),
        [j] => plan_run(&j.args).map_err(|e| Error {
            msg: format!("{} [{}]: {}", j.at, j.section, e.msg),
            ..e
        }),
        _ if jobs.iter().any(|j| j.args.replay.is_some()) => {
            let j = jobs
                .iter()
                .find(|j| j.args.replay.is_some())
                .unwrap_or(&jobs[0]);
            Err(Error::usage(format!(
                "{} [{}]: read_iolog: a replay runs in a phase of its own, not beside other jobs (stonewall before and after it)",
                j.at, j.section
            )))
        }
        _ => {
            let base = jobs[0].args.clone();
            let own = !shares_named_set(jobs);
            plan_role_set(
                &base,
                jobs.iter()
                    .map(|j| {
                        // the file engines (filecreate, ...) work in the directory itself, the
                        // engines without I/O (cpuio, exec) on no file
                        let files = j
                            .args
                            .engine
                            .parse::<crate::model::job::EngineKind>()
                            .is_ok_and(|k| k.caps().file_ops || k.caps().no_io);
                        (j.name.clone(), j.args.clone(), own && !files, false)
                    })
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests;
