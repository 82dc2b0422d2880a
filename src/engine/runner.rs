//! Runs a plan: the file set, then each cell (evict, open, spawn workers, merge, check).

use crate::engine::caps;
use crate::engine::checkpoints::{Agreed, Checkpoint, PhaseSync, Solo};
use crate::engine::fileset::{self, file_path};
use crate::engine::verify::{self, VerifySetup};
use crate::error::{Error, Result};
use crate::measure::export::Observer;
use crate::measure::stats;
use crate::measure::warnings;
use crate::model::job::{FileSetSpec, Job, Layout, Mode};
use crate::model::run::{CellJob, CellResult, PrepareInfo, RunDoc, RunEnv, Warning};
use crate::system::env::Roots;
use crate::system::fsinfo;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use super::phase::ROLES_MODE;
use super::phase::{Unit, run_phase, run_roles_cell};
pub use crate::spec::plan::{DeviceHold, Plan};

mod verifyset;
use verifyset::*;

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Environment facts for --dir.
pub fn run_env(
    roots: &Roots,
    dir: &Path,
    dio: crate::spec::plan::DioAlign,
) -> (RunEnv, Option<f64>) {
    let bd = fsinfo::block_dev_for_path(&roots.sys, dir);
    let link = bd.as_ref().and_then(|b| b.link_bytes_per_sec());
    let env = RunEnv {
        host: fsinfo::hostname(),
        kernel: fsinfo::kernel_release(),
        fs_type: if is_block_device(dir) {
            "block device".into()
        } else {
            fsinfo::fs_type(dir)
        },
        device: bd.as_ref().map(|b| b.name.clone()),
        device_rotational: bd.as_ref().and_then(|b| b.rotational()),
        device_link: link.as_ref().map(|l| l.1.clone()),
        mem_total_bytes: fsinfo::meminfo(&roots.proc).map(|m| m.0),
        dio_mem_align_bytes: dio.mem,
        dio_offset_align_bytes: dio.offset,
        cgroup_io: crate::system::env::cgroup_io(roots),
    };
    (env, link.map(|l| l.0))
}

fn is_block_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
}

/// seqwr writes into freshly emptied files: drop every block (truncate to 0) and extend to the
/// file size again, so each write allocates. With `--offset`, the part before the range is kept
/// (truncated there): the range is what is emptied and written.
fn punch_files(spec: &FileSetSpec) -> Result<()> {
    let t = fileset::target(&spec.dir)?;
    for i in 0..spec.files {
        let p = file_path(&spec.dir, i);
        let f = t
            .open_existing(&fileset::file_name(i), true, 0)
            .map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
        f.set_len(spec.base_offset())
            .and_then(|_| f.set_len(spec.file_len()))
            .map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
    }
    Ok(())
}

/// Measures one cell. The file set must be complete.
#[allow(clippy::too_many_arguments)]
fn run_cell(
    plan: &Plan,
    job: &Job,
    env: &RunEnv,
    link_bps: Option<f64>,
    stop: &AtomicBool,
    resident_pct: f64,
    devices: &[String],
    vset: Option<&mut VerifySetup>,
    sync: &dyn PhaseSync,
    obs: Option<&Observer>,
) -> Result<CellResult> {
    let spec = &plan.fileset;
    let mut phase = run_phase(
        plan,
        &[Unit {
            job,
            spec,
            role: None,
        }],
        stop,
        devices,
        vset.as_deref(),
        sync,
        obs,
    )?;
    let merged = phase.merged.pop().expect("one unit");
    let threads = phase.threads.pop().unwrap_or_default();
    let steady = phase.steady.pop().unwrap_or_default();
    if let (Some(vs), Some(v)) = (vset, &merged.verify) {
        verify::apply_ranges(&mut vs.gens, &v.ranges);
        // a cell that only read changed no block: the state on disk (perhaps of other blocks,
        // which a later job may read) stays as it is
        if job.mode.writes() {
            save_verify_state(spec, vs)?;
        }
    }
    let cj = CellJob {
        job: job.clone(),
        fileset: spec.clone(),
    };
    // each thread on its own: a numjobs clone's row in fio JSON
    let mut one = job.clone();
    one.threads = 1;
    // a clone judged on its own (fio's ss without group_reporting) has its own findings
    let own = steady.len() == threads.len();
    let clones = threads
        .iter()
        .enumerate()
        .map(|(i, (m, d))| {
            let cj = CellJob {
                job: one.clone(),
                fileset: spec.clone(),
            };
            let mut cpu = phase.cpu.clone();
            cpu.user_pct /= f64::from(job.threads.max(1));
            cpu.sys_pct /= f64::from(job.threads.max(1));
            let mut c = stats::cell_result(cj, m, *d, cpu, resident_pct, phase.interrupted);
            c.steady = match own {
                true => vec![steady[i].clone()],
                false => steady.clone(),
            };
            c
        })
        .collect();
    // fio's latency_target: the runtime counts from the final window, where the totals
    // started over (the job's own duration)
    let duration_s = match job.timing.lat_target {
        Some(_) => phase
            .unit_duration_s
            .first()
            .copied()
            .unwrap_or(phase.duration_s),
        None => phase.duration_s,
    };
    let mut cell = stats::cell_result(
        cj,
        &merged,
        duration_s,
        phase.cpu,
        resident_pct,
        phase.interrupted,
    );
    cell.clones = clones;
    cell.steady = steady;
    cell.device = phase.device;
    cell.warnings = warnings::check_cell(job, spec, env, link_bps, &cell, plan.warm);
    Ok(cell)
}

/// `--destructive=wipe-signatures`: erases every signature libblkid finds on the device
/// (through the plan's exclusive open), as `wipefs --all`; a warning naming what was wiped.
fn wipe_signatures(spec: &FileSetSpec, hold: &DeviceHold) -> Result<Option<Warning>> {
    let wiped = crate::system::blkid::wipe(&hold.claim).map_err(|e| {
        Error::failed(format!(
            "--device {}: --destructive=wipe-signatures: {e}",
            spec.dir.display()
        ))
    })?;
    if wiped.is_empty() {
        return Ok(None);
    }
    let what: Vec<String> = wiped.iter().map(|s| s.describe()).collect();
    Ok(Some(Warning::new(
        "signatures_wiped",
        format!(
            "--destructive=wipe-signatures: wiped {} on {} before writing",
            what.join(" and "),
            spec.dir.display()
        ),
    )))
}

/// Writes back and drops the range of a device target from the page cache (fsync, then
/// posix_fadvise DONTNEED on the range); returns the resident percentage, measured with mincore
/// for ranges up to 64 GiB (0 beyond: not measured).
fn evict_device(spec: &FileSetSpec) -> std::io::Result<f64> {
    let f = File::open(&spec.dir)?;
    let (off, len) = (spec.base_offset(), spec.total_bytes);
    fileset::drop_cached(&f, fileset::WriteBack::All, off, len)?;
    if len > 64 << 30 {
        return Ok(0.0);
    }
    let resident = fileset::resident_bytes_at(&f, off, len)?;
    Ok(100.0 * resident as f64 / len.max(1) as f64)
}

/// Whether [`run`] will remove the set in `--dir` first (`--reprepare` and a set of other sizes
/// that this plan's files would use): the set then counts as created by this run.
pub fn replaces_set(plan: &Plan) -> bool {
    plan.reprepare
        && plan
            .cells
            .iter()
            .any(|c| crate::engine::caps(c.engine).needs_files)
        && fileset::check_sizes(&plan.fileset).is_err()
}

/// Runs the plan. Returns the document (also when interrupted: `interrupted` is then true).
pub fn run(plan: &Plan, stop: &AtomicBool, on_cell: impl FnMut(&CellResult)) -> Result<RunDoc> {
    run_with(plan, stop, &Solo, None, on_cell)
}

/// [`run`], waiting at each [`Checkpoint`] for the other processes of a distributed run
/// (`sync`). When a checkpoint says another process failed, this one stops as after Ctrl-C: what
/// it measured is returned, marked interrupted.
pub fn run_synced(
    plan: &Plan,
    stop: &AtomicBool,
    sync: &dyn PhaseSync,
    on_cell: impl FnMut(&CellResult),
) -> Result<RunDoc> {
    run_with(plan, stop, sync, None, on_cell)
}

/// [`run`] with the live export (`--live`, `--metrics-listen`) fed while each cell runs.
pub fn run_observed(
    plan: &Plan,
    stop: &AtomicBool,
    obs: Option<&Observer>,
    on_cell: impl FnMut(&CellResult),
) -> Result<RunDoc> {
    run_with(plan, stop, &Solo, obs, on_cell)
}

/// [`run`] with both: the other processes' checkpoints and the live export.
pub fn run_with(
    plan: &Plan,
    stop: &AtomicBool,
    sync: &dyn PhaseSync,
    obs: Option<&Observer>,
    mut on_cell: impl FnMut(&CellResult),
) -> Result<RunDoc> {
    let spec = &plan.fileset;
    let start_time = now_rfc3339();
    // The set's directory is held for the whole run (the command's lock holds it too): every
    // file is made, opened and removed through this one handle (system::target).
    let _held = spec
        .device
        .is_none()
        .then(|| crate::system::target::TargetDir::hold(&spec.dir).ok());
    let (env, link_bps) = run_env(&plan.roots, &spec.dir, plan.dio);
    let system = Some(crate::system::env::collect(&plan.roots, Some(&spec.dir)));
    // The whole stack under --dir: partition, dm/md, physical disks.
    let devices = system
        .as_ref()
        .map(crate::measure::iostat::stack_devices)
        .unwrap_or_default();
    if !plan.roles.is_empty() {
        let (runs, prep, warnings, outcome) = run_roles(
            plan,
            stop,
            &env,
            link_bps,
            &devices,
            plan.notes.clone(),
            sync,
            obs,
        );
        for c in &runs {
            on_cell(c);
        }
        let doc = RunDoc {
            schema: crate::model::schema::RUN.to_string(),
            doc_id: Some(crate::model::new_doc_id()),
            iolab_version: env!("CARGO_PKG_VERSION").to_string(),
            start_time,
            end_time: now_rfc3339(),
            label: plan.label.clone(),
            tags: plan.tags.clone(),
            env,
            system,
            prepare: prep,
            warnings,
            interrupted: stop.load(Ordering::Relaxed),
            runs,
            dist: None,
        };
        return finish(doc, outcome, || {
            Error::interrupted(
                "interrupted before measuring began (nothing saved); the roles' file sets were left as they were found",
            )
        });
    }
    // An engine that touches no file (null) leaves the set alone; a device is never prepared,
    // extended or removed: only its range is read or written.
    let device = spec.device.is_some();
    let touches_files = !device
        && plan
            .cells
            .iter()
            .any(|c| crate::engine::caps(c.engine).needs_files);
    // The set is this run's (removed at the end unless --keep) only when none of its files was
    // there before; a set that was there, even incomplete or of other sizes that --reprepare
    // replaces, is completed and kept (in its new sizes).
    let existed = device || fileset::status(spec).present_files > 0;
    if touches_files {
        // --reprepare: a set of other sizes is removed first, and made again in these sizes.
        if plan.reprepare {
            let n = fileset::remove_other_sizes(spec)?;
            if n > 0 && !plan.quiet {
                eprintln!(
                    "--reprepare: removed the {n} files of a set of other sizes from {}",
                    spec.dir.display()
                );
            }
        }
        // A set of other sizes is refused before anything is written (never rewritten), and
        // so is a name of the set or its verify state holding what iolab did not make.
        fileset::check_sizes(spec)?;
        verify::check_state(&spec.dir)?;
    }
    let needs_data = |m: Mode| m != Mode::Seqwr;
    // --verify: one run id, and every verify block's generation across the cells. A run that
    // writes to the set makes an older verify state wrong: it is removed now (and saved again
    // after each verify cell).
    let mut vset = new_verify_setup(plan);
    if touches_files && plan.cells.iter().any(|c| c.mode.writes()) {
        verify::remove_state(&spec.dir);
    }
    let mut prep = PrepareInfo {
        direct: plan.cells.iter().any(|c| c.direct),
        ..Default::default()
    };
    let prep_write = prep_write(prep.direct);
    let mut runs = Vec::new();
    let mut warnings = plan.notes.clone();
    // reads alone check what an earlier verify write left: say so when nothing did
    if let Some(v) = &vset
        && !plan.cells.iter().any(|c| c.verify && c.mode.writes())
        && v.gens.iter().all(|&g| g == 0)
    {
        warnings.push(Warning::new(
            "verify_nothing_written",
            format!(
                "--verify on reads only: no verify write of this run or a kept one reached the set in {} (no {} of these files and sizes), so no block is checked",
                spec.dir.display(),
                crate::model::verify::STATE_FILE
            ),
        ));
    }
    let mut outcome: Result<()> = Ok(());
    let mut first = true;
    for job in &plan.cells {
        if sync.checkpoint(Checkpoint::Prepare, !stop.load(Ordering::Relaxed)) == Agreed::Stop {
            stop.store(true, Ordering::Relaxed);
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if !caps(job.engine).needs_files || device {
            // No files needed, none written; a device's range is dropped from the page cache.
            let was_first = std::mem::replace(&mut first, false);
            let mut resident = 0.0;
            if sync.checkpoint(Checkpoint::Evict, true) == Agreed::Stop {
                stop.store(true, Ordering::Relaxed);
                break;
            }
            if was_first && let Some(hold) = plan.device.as_ref().filter(|h| h.wipe_signatures) {
                match wipe_signatures(spec, hold) {
                    Ok(Some(w)) => warnings.push(w),
                    Ok(None) => {}
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            }
            if device && caps(job.engine).needs_files {
                match evict_device(spec) {
                    Ok(r) => resident = r,
                    Err(e) => {
                        outcome = Err(Error::failed(format!(
                            "--device {}: dropping its range from the page cache: {e}",
                            spec.dir.display()
                        )));
                        break;
                    }
                }
            }
            // --verify on a device: the generations of this run, kept in memory (no state)
            let vs = vset.as_mut().filter(|_| device);
            match run_cell(
                plan, job, &env, link_bps, stop, resident, &devices, vs, sync, obs,
            ) {
                Ok(cell) => keep_cell(cell, &mut runs, &mut on_cell, sync, |runs| {
                    so_far(plan, &start_time, &env, &system, &prep, &warnings, runs)
                }),
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
            continue;
        }
        if spec.layout != Layout::Overwrite {
            // A write consumes the layout (holes get allocated, extents converted, files grow):
            // every mode starts from files made afresh.
            let t0 = Instant::now();
            if let Some(v) = vset.as_mut() {
                v.gens.fill(0);
            }
            match fileset::make_layout(spec, false) {
                Ok(_) => {
                    if first {
                        prep.seconds = t0.elapsed().as_secs_f64();
                    }
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        } else {
            let st = fileset::status(spec);
            if !st.complete(spec) && (needs_data(job.mode) || first) {
                match fileset::prepare(
                    spec,
                    prep_write,
                    plan.dio.mem,
                    stop,
                    plan.quiet,
                    plan.keep || existed,
                ) {
                    Ok(r) => {
                        if r.written_bytes > 0
                            && let Some(v) = vset.as_mut()
                        {
                            // files written afresh: nothing of an earlier verify run is left
                            v.gens.fill(0);
                        }
                        if first {
                            prep.written_bytes = r.written_bytes;
                            prep.reused_files = r.reused_files;
                            prep.seconds = r.seconds;
                            if r.written_bytes > 0 {
                                prep.direct = r.direct_bytes == r.written_bytes;
                            }
                        }
                    }
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            } else if first {
                prep.reused_files = spec.files;
            }
            if job.mode == Mode::Seqwr {
                if let Some(v) = vset.as_mut() {
                    v.gens.fill(0);
                }
                if let Err(e) = punch_files(spec) {
                    outcome = Err(e);
                    break;
                }
            }
        }
        if sync.checkpoint(Checkpoint::Evict, true) == Agreed::Stop {
            stop.store(true, Ordering::Relaxed);
            break;
        }
        let res = match if plan.warm {
            fileset::warm(spec)
        } else {
            fileset::evict(spec)
        } {
            Ok(r) => r,
            Err(e) => {
                outcome = Err(Error::failed(format!(
                    "evicting the file set from the page cache: {e}"
                )));
                break;
            }
        };
        if first {
            prep.cache_resident_pct_after_evict = res.pct();
            if !plan.warm && res.pct() > warnings::EVICT_FAIL_PCT {
                warnings.push(Warning::new(
                    "eviction_failed",
                    format!(
                        "after prepare, {:.1}% of the file set is still in the page cache (fsync + POSIX_FADV_DONTNEED did not evict it on {}): reads will partly measure memory",
                        res.pct(),
                        env.fs_type
                    ),
                ));
            }
        }
        first = false;
        match run_cell(
            plan,
            job,
            &env,
            link_bps,
            stop,
            res.pct(),
            &devices,
            vset.as_mut(),
            sync,
            obs,
        ) {
            Ok(cell) => keep_cell(cell, &mut runs, &mut on_cell, sync, |runs| {
                so_far(plan, &start_time, &env, &system, &prep, &warnings, runs)
            }),
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    // Every process has measured (or failed): the sets are completed or removed together.
    let _ = sync.checkpoint(
        Checkpoint::Cleanup,
        outcome.is_ok() && !stop.load(Ordering::Relaxed),
    );
    let interrupted = stop.load(Ordering::Relaxed);
    // Leave the set as we found it: a set that existed (or is kept) is completed again after a
    // seqwr emptied it (other layouts: made again, as the writes consumed them); a set this run
    // created is removed unless --keep.
    if touches_files
        && (existed || plan.keep)
        && !interrupted
        && outcome.is_ok()
        && spec.layout == Layout::Overwrite
        && !fileset::status(spec).complete(spec)
    {
        let never = AtomicBool::new(false);
        outcome =
            fileset::prepare(spec, prep_write, plan.dio.mem, &never, plan.quiet, true).map(|_| ());
        if vset.is_some() {
            // the blocks seqwr wrote were written again: nothing left to verify later
            verify::remove_state(&spec.dir);
            warnings.push(Warning::new(
                "verify_state_removed",
                "--verify: seqwr left the set incomplete and it was prepared again, so `iolab verify --dir` has nothing to check",
            ));
        }
    }
    // The other layouts take milliseconds to make: made again also after an interruption or a
    // failure, so a set that was there keeps its layout.
    if touches_files
        && (existed || plan.keep)
        && spec.layout != Layout::Overwrite
        && !fileset::status(spec).complete(spec)
    {
        let r = fileset::make_layout(spec, false).map(|_| ());
        if outcome.is_ok() {
            outcome = r;
        }
    }
    let removed = !existed && !plan.keep && touches_files;
    if !existed && !plan.keep && !device {
        fileset::cleanup(spec);
        if plan.created_dir {
            crate::system::target::remove_made_dir(&spec.dir);
        }
    }
    let doc = RunDoc {
        schema: crate::model::schema::RUN.to_string(),
        doc_id: Some(crate::model::new_doc_id()),
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        start_time,
        end_time: now_rfc3339(),
        label: plan.label.clone(),
        tags: plan.tags.clone(),
        env,
        system,
        prepare: prep,
        warnings,
        interrupted,
        runs,
        dist: None,
    };
    finish(doc, outcome, || {
        if device {
            Error::interrupted(format!(
                "interrupted before measuring began (nothing saved); nothing was written to {}",
                spec.dir.display()
            ))
        } else if !touches_files {
            Error::interrupted(
                "interrupted before measuring began (nothing saved); no files were used",
            )
        } else {
            Error::interrupted(format!(
                "interrupted before measuring began (nothing saved): the file set ({} files, {}) in {} {}",
                spec.files,
                crate::model::units::human_bytes(spec.total_bytes as f64),
                spec.dir.display(),
                if removed {
                    "was prepared by this run and removed again"
                } else if existed {
                    "was there before and was kept"
                } else {
                    "was prepared and kept (--keep)"
                }
            ))
        }
    })
}

/// The document of what a run measured so far (a distributed run's progress, between cells):
/// marked interrupted, as it is what remains should the run end here.
/// A measured cell: handed to the caller, kept, and (a watched process of a distributed run)
/// the document so far sent to rank 0.
fn keep_cell(
    cell: CellResult,
    runs: &mut Vec<CellResult>,
    on_cell: &mut impl FnMut(&CellResult),
    sync: &dyn PhaseSync,
    so_far: impl FnOnce(&[CellResult]) -> RunDoc,
) {
    on_cell(&cell);
    runs.push(cell);
    if sync.watched() {
        sync.progress(&so_far(runs));
    }
}

fn so_far(
    plan: &Plan,
    start_time: &str,
    env: &RunEnv,
    system: &Option<crate::model::env::EnvReport>,
    prep: &PrepareInfo,
    warnings: &[Warning],
    runs: &[CellResult],
) -> RunDoc {
    RunDoc {
        schema: crate::model::schema::RUN.to_string(),
        doc_id: Some(crate::model::new_doc_id()),
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        start_time: start_time.to_string(),
        end_time: now_rfc3339(),
        label: plan.label.clone(),
        tags: plan.tags.clone(),
        env: env.clone(),
        system: system.clone(),
        prepare: prep.clone(),
        warnings: warnings.to_vec(),
        interrupted: true,
        runs: runs.to_vec(),
        dist: None,
    }
}

/// The end of a run: nothing measured after an interruption is an error (nothing to save);
/// an interruption after measuring is a document marked interrupted.
fn finish(doc: RunDoc, outcome: Result<()>, nothing: impl FnOnce() -> Error) -> Result<RunDoc> {
    if doc.interrupted
        && doc.runs.is_empty()
        && outcome
            .as_ref()
            .err()
            .is_none_or(|e| e.exit == crate::error::Exit::Interrupted)
    {
        // Nothing was measured: no document, nothing to save; one line on what was prepared.
        return Err(match outcome {
            Err(e) if e.exit == crate::error::Exit::Interrupted => e,
            _ => nothing(),
        });
    }
    match outcome {
        Ok(()) => Ok(doc),
        Err(e) if e.exit == crate::error::Exit::Interrupted => Ok(RunDoc {
            interrupted: true,
            ..doc
        }),
        Err(e) => Err(e),
    }
}

/// One file set the roles of a run use, and what this run did to it.
struct RoleSet<'a> {
    spec: &'a FileSetSpec,
    /// Its directory's handle, held until the set is cleaned up (system::target).
    _held: Option<std::sync::Arc<crate::system::target::TargetDir>>,
    /// Some of its files were there before this run.
    existed: bool,
    /// This run created its directory (a role's own `DIR/NAME/`).
    created_dir: bool,
}

/// Runs the roles of a plan: prepares and evicts each file set (the shared one and the roles'
/// own in `DIR/NAME/`), measures them in one phase, and leaves every set as it was found (a
/// set this run created is removed unless --keep).
#[allow(clippy::too_many_arguments)]
fn run_roles(
    plan: &Plan,
    stop: &AtomicBool,
    env: &RunEnv,
    link_bps: Option<f64>,
    devices: &[String],
    mut warnings: Vec<Warning>,
    sync: &dyn PhaseSync,
    obs: Option<&Observer>,
) -> (Vec<CellResult>, PrepareInfo, Vec<Warning>, Result<()>) {
    let mut prep = PrepareInfo {
        direct: plan.roles.iter().any(|r| r.job.direct),
        ..Default::default()
    };
    let prep_write = prep_write(prep.direct);
    let mut sets: Vec<RoleSet> = Vec::new();
    let mut runs = Vec::new();
    let mut resident = vec![0.0; plan.roles.len()];
    let outcome = (|| -> Result<()> {
        if sync.checkpoint(Checkpoint::Prepare, !stop.load(Ordering::Relaxed)) == Agreed::Stop {
            stop.store(true, Ordering::Relaxed);
            return Ok(());
        }
        for r in &plan.roles {
            if !caps(r.job.engine).needs_files || sets.iter().any(|s| s.spec == &r.fileset) {
                continue;
            }
            let spec = &r.fileset;
            let mut created_dir = false;
            if r.own_set && !spec.dir.exists() {
                crate::system::target::make_dir(&spec.dir).map_err(|e| {
                    Error::failed(format!(
                        "role {}: creating {}: {e}",
                        r.name,
                        spec.dir.display()
                    ))
                })?;
                created_dir = true;
            }
            // a role's set that was there stays, also when --reprepare makes it again
            let existed = fileset::status(spec).present_files > 0;
            if plan.reprepare {
                fileset::remove_other_sizes(spec)?;
            }
            sets.push(RoleSet {
                spec,
                _held: crate::system::target::TargetDir::hold(&spec.dir).ok(),
                existed,
                created_dir,
            });
            fileset::check_sizes(spec)?;
        }
        let mut direct_bytes = 0u64;
        for set in &sets {
            if set.spec.layout != Layout::Overwrite {
                // holes, unwritten or extend: made afresh (a write consumes them)
                let t0 = Instant::now();
                fileset::make_layout(set.spec, false)?;
                prep.seconds += t0.elapsed().as_secs_f64();
            } else if !fileset::status(set.spec).complete(set.spec) {
                let rep = fileset::prepare(
                    set.spec,
                    prep_write,
                    plan.dio.mem,
                    stop,
                    plan.quiet,
                    plan.keep || set.existed,
                )?;
                prep.written_bytes += rep.written_bytes;
                prep.reused_files += rep.reused_files;
                prep.seconds += rep.seconds;
                direct_bytes += rep.direct_bytes;
            } else {
                prep.reused_files += set.spec.files;
            }
        }
        if prep.written_bytes > 0 {
            prep.direct = direct_bytes == prep.written_bytes;
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        for r in &plan.roles {
            if !caps(r.job.engine).needs_files {
                continue;
            }
            if r.job.mode == Mode::Seqwr && r.fileset.layout == Layout::Overwrite {
                punch_files(&r.fileset)?;
            }
        }
        if sync.checkpoint(Checkpoint::Evict, true) == Agreed::Stop {
            stop.store(true, Ordering::Relaxed);
            return Ok(());
        }
        let mut worst = 0.0f64;
        for set in &sets {
            let res = if plan.warm {
                fileset::warm(set.spec)
            } else {
                fileset::evict(set.spec)
            }
            .map_err(|e| {
                Error::failed(format!("evicting the file set from the page cache: {e}"))
            })?;
            worst = worst.max(res.pct());
            for (i, r) in plan.roles.iter().enumerate() {
                if &r.fileset == set.spec && caps(r.job.engine).needs_files {
                    resident[i] = res.pct();
                }
            }
        }
        prep.cache_resident_pct_after_evict = worst;
        if !plan.warm && worst > warnings::EVICT_FAIL_PCT {
            warnings.push(Warning::new(
                "eviction_failed",
                format!(
                    "after prepare, {worst:.1}% of a file set is still in the page cache (fsync + POSIX_FADV_DONTNEED did not evict it on {}): reads will partly measure memory",
                    env.fs_type
                ),
            ));
        }
        runs.push(run_roles_cell(
            plan, env, link_bps, stop, &resident, devices, sync, obs,
        )?);
        Ok(())
    })();
    let _ = sync.checkpoint(
        Checkpoint::Cleanup,
        outcome.is_ok() && !stop.load(Ordering::Relaxed),
    );
    let interrupted = stop.load(Ordering::Relaxed);
    let mut outcome = outcome;
    for set in &sets {
        if (set.existed || plan.keep) && set.spec.layout != Layout::Overwrite {
            // a kept set of another layout keeps it: made again (the writes consumed it)
            let r = fileset::make_layout(set.spec, false).map(|_| ());
            if outcome.is_ok() {
                outcome = r;
            }
        } else if (set.existed || plan.keep)
            && !interrupted
            && outcome.is_ok()
            && !fileset::status(set.spec).complete(set.spec)
        {
            // a seqwr role emptied a set that was there before (or is kept): complete it again
            let never = AtomicBool::new(false);
            outcome =
                fileset::prepare(set.spec, prep_write, plan.dio.mem, &never, plan.quiet, true)
                    .map(|_| ());
        }
        if !set.existed && !plan.keep {
            fileset::cleanup(set.spec);
            if set.created_dir {
                crate::system::target::remove_made_dir(&set.spec.dir);
            }
        }
    }
    if plan.created_dir && !plan.keep && sets.iter().all(|s| !s.existed) {
        crate::system::target::remove_made_dir(&plan.fileset.dir);
    }
    (runs, prep, warnings, outcome)
}

/// How prepare writes a run's sets: with O_DIRECT when a cell measures with it (a refusal is then
/// an error, as for the run), else with O_DIRECT where the filesystem takes it and buffered where
/// not ([`fileset::PrepWrite::Auto`]): the same bytes, faster, and nothing left to evict.
fn prep_write(direct: bool) -> fileset::PrepWrite {
    if direct {
        fileset::PrepWrite::Direct
    } else {
        fileset::PrepWrite::Auto
    }
}
