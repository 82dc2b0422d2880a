//! `iolab run JOBFILE...`: fio job files planned, run phase by phase and stored as one run
//! (docs/fio-jobs.md); `--parse-only` prints the translation.

use super::*;

/// The options of a workload given as flags beside a job file: the job file defines the
/// workload, so each of them is refused rather than silently not used.
fn workload_flags_beside_a_jobfile(a: &cli::RunArgs) -> Vec<&'static str> {
    [
        (a.mode.is_some(), "--mode"),
        (a.set.bs.is_some(), "--bs"),
        (a.set.bs_write.is_some(), "--bs-write"),
        (a.block_align.is_some(), "--block-align"),
        (a.set.size.is_some(), "--size"),
        (a.set.files.is_some(), "--files"),
        (a.threads.is_some(), "--threads"),
        (a.rw_ratio.is_some(), "--rw-ratio"),
        (a.rwmixread.is_some(), "--rwmixread"),
        (a.engine != "sync", "--engine"),
        (a.iodepth != 1, "--iodepth"),
        (a.direct, "--direct"),
        (a.buffered, "--buffered"),
        (a.device.is_some(), "--device"),
        (a.offset.is_some(), "--offset"),
        (a.layout != "overwrite", "--layout"),
        (!a.open_flags.is_empty(), "--open-flags"),
        (a.fsync_freq != 100, "--fsync-freq"),
        (a.fsync_every.is_some(), "--fsync-every"),
        (a.fsync_all, "--fsync-all"),
        (a.fsync_mode != "fsync", "--fsync-mode"),
        (a.distribution != "uniform", "--distribution"),
        (a.seed.is_some(), "--seed"),
        (a.rate.is_some(), "--rate"),
        (a.time.is_some(), "--time"),
        (a.ops.is_some(), "--ops"),
        (a.ramp != 0.0, "--ramp"),
        (!a.roles.is_empty(), "--role"),
        (a.profile.is_some(), "--profile"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

/// `iolab run JOBFILE --parse-only`: each job as iolab would run it, and nothing run.
fn parse_only_text(run: &cli::fiojob::FioRun) -> String {
    let mut out = String::new();
    for j in &run.jobs {
        out.push_str(&format!(
            "{} [{}] phase {}: iolab run {}\n",
            j.at,
            j.section,
            j.phase + 1,
            j.iolab_args.join(" ")
        ));
        if let Some(l) = &j.args.fio_logs {
            let files = cli::fiojob::log_files(l, j.args.threads.unwrap_or(1));
            out.push_str(&format!("  fio logs: {}\n", files.join(", ")));
        }
        for i in &j.ignored {
            out.push_str(&format!("  ignored (--ignore-unsupported): {i}\n"));
        }
        for n in &j.notes {
            out.push_str(&format!("  approximated: {n}\n"));
        }
    }
    out
}

/// `iolab run JOBFILE...`: every phase planned before anything runs, then run one after the
/// other; the phases' cells make one document, stored as one run with the job files' text.
pub(super) fn cmd_run_jobfiles(a: &cli::RunArgs) -> Result<i32> {
    use crate::model::run::Warning;
    let given = workload_flags_beside_a_jobfile(a);
    if !given.is_empty() {
        return Err(Error::usage(format!(
            "{}: a job file defines the workload, so {} cannot be given beside it; put the option in the job file ([global] or a job section), or run without the job file",
            given.join(", "),
            if given.len() == 1 { "it" } else { "they" }
        )));
    }
    let fmt = a.format();
    if a.repeat > 1 && !matches!(fmt, OutputFormat::Normal | OutputFormat::Json) {
        return Err(Error::usage(format!(
            "--output-format {} prints the document of one run: it cannot be used with --repeat (use --json for the repetitions' summary, or run them one by one)",
            fmt.to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        )));
    }
    let run = cli::fiojob::load(a)?;
    if a.parse_only {
        print!("{}", parse_only_text(&run));
        return Ok(0);
    }
    let mut plans = Vec::new();
    for ph in 0..run.phases {
        let jobs: Vec<&cli::fiojob::FioJob> = run.jobs.iter().filter(|j| j.phase == ph).collect();
        match cli::fiojob::plan_phase(&jobs) {
            Ok(p) => plans.push(p),
            Err(e) => {
                plans.iter().for_each(lifecycle::abandon);
                return Err(e);
            }
        }
    }
    // fio keeps a job's files for the jobs after it: a set a later phase uses again is kept
    let names: Vec<Option<String>> = (0..run.phases)
        .map(|ph| {
            match run
                .jobs
                .iter()
                .filter(|j| j.phase == ph)
                .collect::<Vec<_>>()[..]
            {
                [j] => j.fio_options.get("filename").cloned(),
                _ => None,
            }
        })
        .collect();
    let shared = lifecycle::share_sets(&mut plans, &names);
    lifecycle::regrow_sets(&mut plans);
    let mut warnings = Vec::new();
    for j in &run.jobs {
        for i in &j.ignored {
            eprintln!("iolab: warning: {i}: not supported, ignored (--ignore-unsupported)");
            warnings.push(Warning::new(
                "fio_option_ignored",
                format!("job {} ({i}): not supported by iolab, ignored", j.name),
            ));
        }
        for n in &j.notes {
            // fio's JSON shape has no place a person reads: the notes go to stderr too
            if matches!(fmt, OutputFormat::FioJson | OutputFormat::FioJsonPlus) {
                eprintln!("iolab: note: job {}: {n}", j.name);
            }
            warnings.push(Warning::new(
                "fio_option_approximated",
                format!("job {}: {n}", j.name),
            ));
        }
    }
    let reps = a.repeat.max(1);
    let mut db = if a.no_save {
        None
    } else {
        Some(open_store_write(&a.db)?)
    };
    let (obs, server) = live_export(a)?;
    let stop = stop_flag();
    // --repeat N: N stored runs of the whole job file, as a group (as `iolab run --repeat`)
    let group = match (&mut db, reps > 1) {
        (Some(s), true) => Some(s.new_group(
            crate::model::stored::GroupKind::Repeat,
            a.label.label.as_deref(),
            reps,
        )?),
        _ => None,
    };
    let mut saved_ids = Vec::new();
    let mut not_saved = None;
    let mut worst = 0;
    for rep in 0..reps {
        let (doc, jobfile, failed) =
            match run_jobfile_once(&run, &mut plans, &stop, &warnings, obs.as_ref()) {
                Ok(x) => x,
                Err(e) => {
                    if rep == 0 {
                        lifecycle::remove_shared(&shared);
                        lifecycle::remove_made_dirs(&plans);
                        return Err(e);
                    }
                    // earlier repetitions were measured and saved
                    eprintln!("iolab: {e}");
                    worst = e.exit as i32;
                    break;
                }
            };
        let printed = Printed {
            doc: &doc,
            multi: run.phases > 1,
            bins: false,
            jobfile: Some(jobfile),
        };
        let json = crate::output::document::Document::json(&printed);
        let mut saved = None;
        if let Some(s) = &mut db {
            match s.save_run(&doc, &json, group.map(|g| (g, rep + 1)), None) {
                Ok(id) => {
                    saved = Some(id);
                    saved_ids.push(id);
                }
                Err(e) => not_saved = Some(kept_instead(&s.path, &e.msg, &json)),
            }
        }
        if reps == 1 {
            let printed = Printed {
                bins: fmt.bins(),
                ..printed
            };
            emit(&printed, fmt.export_format())?;
            if let (None, Some(s), Some(id)) = (&not_saved, &db, saved) {
                eprintln!("saved as run {id} in {}", s.path.display());
            }
        } else if fmt == OutputFormat::Normal {
            print_out(&repetition_line(&doc, rep, reps));
        }
        let code = if let Some(e) = &failed {
            e.exit as i32
        } else if doc.interrupted {
            Exit::Interrupted as i32
        } else if doc
            .runs
            .iter()
            .any(|c| c.total_errors() > 0 || c.verify.as_ref().is_some_and(|v| v.bad() > 0))
        {
            // failed I/O or blocks that did not verify: exit 3, as a flag run
            Exit::IoErrors as i32
        } else {
            0
        };
        if code != 0 {
            worst = code;
        }
        if doc.interrupted || failed.is_some() || not_saved.is_some() {
            break;
        }
    }
    lifecycle::remove_shared(&shared);
    lifecycle::remove_made_dirs(&plans);
    // a group is made only for --repeat N > 1 with a store
    if let (Some(s), Some(g)) = (&db, group) {
        // json+ and the fio formats print the summary's text
        let format = Format::json_if(fmt == OutputFormat::Json);
        let repeat = stored_views::RepeatDoc::read(s, g, &saved_ids, !format.is_text())?;
        emit(&repeat, format)?;
        if not_saved.is_none() {
            eprintln!(
                "saved as group g{g} (runs {}) in {}",
                saved_ids
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                s.path.display()
            );
        }
    }
    linger(a, obs.as_ref(), server.as_ref(), &stop);
    if let Some(why) = not_saved {
        eprintln!("iolab: error: the results above were not saved: {why}");
        return Ok(Exit::NotSaved as i32);
    }
    Ok(worst)
}

/// One run of the whole job file: its phases one after the other, made into one document (and
/// its `jobfile` part). An error in a later phase keeps the phases before it (the error is
/// returned beside the document); no phase measured is an error.
fn run_jobfile_once(
    run: &cli::fiojob::FioRun,
    plans: &mut [crate::spec::plan::Plan],
    stop: &AtomicBool,
    warnings: &[crate::model::run::Warning],
    obs: Option<&crate::measure::export::Observer>,
) -> Result<(RunDoc, serde_json::Value, Option<Error>)> {
    let mut docs: Vec<RunDoc> = Vec::new();
    let mut failed: Option<Error> = None;
    for plan in plans.iter_mut() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let lock = match fileset::lock(&plan.fileset.dir) {
            Ok(l) => l,
            Err(e) => {
                failed = Some(e);
                break;
            }
        };
        let r = runner::run_observed(plan, stop, obs, |_| {});
        drop(lock);
        match r {
            Ok(d) => {
                let interrupted = d.interrupted;
                docs.push(d);
                if interrupted {
                    break;
                }
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let Some(first) = docs.first() else {
        return Err(
            failed.unwrap_or_else(|| Error::interrupted("interrupted before the first phase"))
        );
    };
    if let Some(e) = &failed {
        eprintln!(
            "iolab: error: phase {} failed: {e}; the phases before it are kept",
            docs.len() + 1
        );
    }
    let mut doc = first.clone();
    let mut phases = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        phases.push(serde_json::json!({
            "phase": i + 1,
            "start_time": d.start_time,
            "end_time": d.end_time,
            "cells": d.runs.len(),
            "jobs": run.jobs.iter().filter(|j| j.phase == i).map(|j| j.name.clone()).collect::<Vec<_>>(),
        }));
        if i == 0 {
            continue;
        }
        doc.runs.extend(d.runs.iter().cloned());
        doc.end_time = d.end_time.clone();
        doc.interrupted |= d.interrupted;
        doc.prepare.written_bytes += d.prepare.written_bytes;
        doc.prepare.seconds += d.prepare.seconds;
        for w in &d.warnings {
            if !doc.warnings.contains(w) {
                doc.warnings.push(w.clone());
            }
        }
    }
    if failed.is_some() {
        doc.interrupted = true;
    }
    doc.warnings.extend(warnings.iter().cloned());
    let jobfile = serde_json::json!({
        "files": run.files.iter().map(|f| serde_json::json!({"path": f.path, "text": f.text})).collect::<Vec<_>>(),
        "phases": phases,
        "jobs": run.jobs.iter().map(|j| serde_json::json!({
            "name": j.name,
            "section": j.section,
            "at": j.at,
            "phase": j.phase + 1,
            "group": j.group,
            "fio_options": j.fio_options,
            "iolab_args": j.iolab_args,
            "options_ignored": j.ignored,
            "notes": j.notes,
            "log_files": j.args.fio_logs.as_ref().map(|l| cli::fiojob::log_files(l, j.args.threads.unwrap_or(1))).unwrap_or_default(),
        })).collect::<Vec<_>>(),
    });
    Ok((doc, jobfile, failed))
}
