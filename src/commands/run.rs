use super::*;
use crate::cli::OutputFormat;
use crate::engine::lifecycle;
use crate::model::run::RunDoc;
use crate::output::document::Document;
use crate::output::explain::Explained;
use crate::output::export::Format;
use clap::ValueEnum;

mod jobfile;

pub fn cmd_run(a: &cli::RunArgs) -> Result<i32> {
    if let Some(ranks) = crate::dist::join()? {
        return cmd_run_dist(a, &ranks);
    }
    if !a.jobfiles.is_empty() {
        return jobfile::cmd_run_jobfiles(a);
    }
    for (given, flag) in [
        (a.parse_only, "--parse-only"),
        (a.ignore_unsupported, "--ignore-unsupported"),
    ] {
        if given {
            return Err(Error::usage(format!(
                "{flag} applies to fio job files: give one (iolab run JOB.fio {flag})"
            )));
        }
    }
    let fmt = a.format();
    if a.repeat > 1 && !matches!(fmt, OutputFormat::Normal | OutputFormat::Json) {
        return Err(Error::usage(format!(
            "--output-format {} prints the document of one run: it cannot be used with --repeat (use --json for the repetitions' summary, or run them one by one)",
            fmt.to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        )));
    }
    if a.explain && matches!(fmt, OutputFormat::FioJson | OutputFormat::FioJsonPlus) {
        return Err(Error::usage(
            "--explain adds to iolab's own output (the table or --json): it cannot be used with --output-format fio-json or fio-json+",
        ));
    }
    let mut plan = cli::plan_run(a)?;
    // Open the store first: a store that cannot take the results should not cost a benchmark;
    // the same for the live export (a port in use, a --live file that cannot be made).
    let ready = (|| -> Result<_> {
        let db = if a.no_save {
            None
        } else {
            Some(open_store_write(&a.db)?)
        };
        Ok((db, live_export(a)?))
    })();
    let (db, (obs, server)) = match ready {
        Ok(x) => x,
        Err(e) => {
            lifecycle::abandon(&plan);
            return Err(e);
        }
    };
    let stop = stop_flag();
    let reps = a.repeat.max(1);
    // One iolab at a time on a file set, for the whole run (all repetitions and the cleanup).
    let held = lifecycle::hold(&plan)?;
    let r = run_locked(a, &mut plan, db, &stop, reps, obs.as_ref());
    held.release();
    if r.is_ok() {
        linger(a, obs.as_ref(), server.as_ref(), &stop);
    }
    r
}

/// `--metrics-listen`, the run over and its results printed: every counter is final; serve
/// until one scrape has read them, at most `--metrics-linger` (not after Ctrl-C).
pub(super) fn linger(
    a: &cli::RunArgs,
    obs: Option<&crate::measure::export::Observer>,
    server: Option<&crate::measure::export::MetricsServer>,
    stop: &AtomicBool,
) {
    let (Some(o), Some(s)) = (obs, server) else {
        return;
    };
    o.finish();
    if a.metrics_linger <= 0.0 || stop.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    if !a.quiet.quiet {
        eprintln!(
            "metrics: serving the final counts at http://{}/metrics until a scrape reads them, at most {} s (--metrics-linger; Ctrl-C ends it)",
            s.addr, a.metrics_linger
        );
    }
    let read = s.linger(std::time::Duration::from_secs_f64(a.metrics_linger));
    if !read && !a.quiet.quiet && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "metrics: no scrape read the final counts within {} s (--metrics-linger)",
            a.metrics_linger
        );
    }
}

/// The run document as printed and stored: a run of several modes keeps its multi-mode layout
/// (`runs[]`, `job.modes`) also when an interruption left one measured mode.
struct Printed<'a> {
    doc: &'a RunDoc,
    multi: bool,
    /// json+: each operation's latency histogram as `hist_bins` (printed, not stored: the store
    /// keeps the histograms themselves).
    bins: bool,
    /// A run of fio job files: the files, phases and jobs (`jobfile`, docs/fio-jobs.md).
    jobfile: Option<serde_json::Value>,
}

impl Document for Printed<'_> {
    fn fio_json(&self) -> Option<serde_json::Value> {
        Some(crate::output::fio::fio_json(
            self.doc,
            self.bins,
            self.jobfile.as_ref(),
        ))
    }
    fn json(&self) -> serde_json::Value {
        let single = self.doc.to_json();
        let mut v = if !self.multi || self.doc.runs.len() != 1 {
            single
        } else {
            let mut v = serde_json::to_value(self.doc).unwrap_or_default();
            v["warnings"] = single["warnings"].clone();
            let c = &self.doc.runs[0];
            let mut job = serde_json::to_value(&c.job.fileset).unwrap_or_default();
            job["modes"] = serde_json::json!([c.mode]);
            v["job"] = job;
            v
        };
        if self.bins {
            crate::output::fio::add_hist_bins(&mut v, self.doc);
        }
        if let Some(j) = &self.jobfile {
            v["jobfile"] = j.clone();
        }
        v
    }
    fn text(&self) -> Result<String> {
        let body = crate::output::document::Document::text(self.doc)?;
        let Some(j) = &self.jobfile else {
            return Ok(body);
        };
        // which job ran when: `phase 1: a, b (at once)`
        let files: Vec<&str> = j["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["path"].as_str())
            .collect();
        let mut head = format!("job file {}:", files.join(", "));
        for p in j["phases"].as_array().into_iter().flatten() {
            let names: Vec<&str> = p["jobs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str())
                .collect();
            let at_once = if names.len() > 1 { " (at once)" } else { "" };
            head.push_str(&format!(
                " phase {}: {}{at_once};",
                p["phase"],
                names.join(", ")
            ));
        }
        head.pop();
        Ok(format!("{head}\n{body}"))
    }
}

fn run_locked(
    a: &cli::RunArgs,
    plan: &mut crate::spec::plan::Plan,
    mut db: Option<Store>,
    stop: &AtomicBool,
    reps: u32,
    obs: Option<&crate::measure::export::Observer>,
) -> Result<i32> {
    // What was there before: after the last repetition the sets this run made are removed.
    let sets = lifecycle::repetitions(plan, reps);
    let group = match (&mut db, reps > 1) {
        (Some(s), true) => Some(s.new_group(
            crate::model::stored::GroupKind::Repeat,
            plan.label.as_deref(),
            reps,
        )?),
        _ => None,
    };
    let mut saved_ids = Vec::new();
    // the repetitions' documents, for --explain --repeat (also when they are not saved)
    let mut done: Vec<(i64, RunDoc)> = Vec::new();
    let mut not_saved: Option<String> = None;
    let mut worst = 0;
    let multi = plan.roles.is_empty() && plan.cells.len() > 1;
    let fmt = a.format();
    let want_json = fmt != OutputFormat::Normal;
    for i in 0..reps {
        let doc = match runner::run_observed(plan, stop, obs, |_| {}) {
            Ok(d) => d,
            Err(e) => {
                if reps > 1 {
                    // The set kept between repetitions goes too, as on any failure.
                    sets.cleanup(plan);
                }
                if i > 0 && e.exit == Exit::Interrupted {
                    // Earlier repetitions were measured and saved.
                    eprintln!("iolab: {e}");
                    worst = Exit::Interrupted as i32;
                    break;
                }
                return Err(e);
            }
        };
        let printed = Printed {
            doc: &doc,
            multi,
            bins: false,
            jobfile: None,
        };
        let json = crate::output::document::Document::json(&printed);
        if let Some(s) = &mut db {
            match s.save_run(&doc, &json, group.map(|g| (g, i + 1)), None) {
                Ok(id) => saved_ids.push(id),
                Err(e) => not_saved = Some(kept_instead(&s.path, &e.msg, &json)),
            }
        }
        if reps == 1 {
            let explained = a.explain.then(|| {
                let id = (not_saved.is_none())
                    .then(|| saved_ids.last().copied())
                    .flatten();
                let subject = id.map_or_else(|| "this run".to_string(), |i| format!("run {i}"));
                crate::analysis::explain::run::explain_run(&doc, id, &subject)
            });
            let printed = Printed {
                bins: fmt.bins(),
                ..printed
            };
            emit(
                &Explained {
                    doc: Some(&printed),
                    explain: explained.as_ref(),
                },
                fmt.export_format(),
            )?;
        } else if !want_json {
            print_out(&repetition_line(&doc, i, reps));
        }
        let errors: u64 = doc
            .runs
            .iter()
            .map(|c| c.total_errors() + c.verify.as_ref().map_or(0, |v| v.bad()))
            .sum();
        if a.explain && reps > 1 {
            let id = if not_saved.is_none() {
                saved_ids.last().copied().unwrap_or(0)
            } else {
                0
            };
            done.push((id, doc.clone()));
        }
        if doc.interrupted {
            worst = Exit::Interrupted as i32;
            break;
        }
        if errors > 0 {
            worst = Exit::IoErrors as i32;
        }
        if not_saved.is_some() {
            break;
        }
    }
    if reps > 1 {
        sets.cleanup(plan);
        let format = Format::json_if(want_json);
        let repeat = match (&db, group) {
            (Some(s), Some(g)) => Some(stored_views::RepeatDoc::read(
                s,
                g,
                &saved_ids,
                !format.is_text(),
            )?),
            _ => None,
        };
        let explained = a.explain.then(|| {
            let subject = group.map_or_else(
                || "these repetitions".to_string(),
                |g| format!("group g{g}"),
            );
            let mut e = crate::analysis::explain::run::explain_group(&done, &subject);
            if group.is_none() {
                // not saved: no run ids to name
                for c in &mut e.cells {
                    c.run_id = None;
                }
            }
            e
        });
        if repeat.is_some() || explained.is_some() {
            let doc = repeat.as_ref().map(|r| r as &dyn Document);
            emit(
                &Explained {
                    doc,
                    explain: explained.as_ref(),
                },
                format,
            )?;
        }
    }
    if let Some(why) = not_saved {
        eprintln!("iolab: error: the results above were not saved: {why}");
        return Ok(Exit::NotSaved as i32);
    }
    if let Some(s) = &db {
        match (group, saved_ids.as_slice()) {
            (Some(g), ids) => eprintln!(
                "saved as group g{g} (runs {}) in {}",
                ids.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                s.path.display()
            ),
            (None, [id]) => eprintln!("saved as run {id} in {}", s.path.display()),
            _ => {}
        }
    }
    Ok(worst)
}

/// The line `--repeat N` prints after repetition `i` (from 0) in text mode: each mode's IOPS.
fn repetition_line(doc: &crate::model::run::RunDoc, i: u32, reps: u32) -> String {
    let head: Vec<String> = doc
        .runs
        .iter()
        .map(|c| {
            format!(
                "{} {:.0} IOPS",
                c.mode,
                c.results.read.iops + c.results.write.iops
            )
        })
        .collect();
    format!("repetition {}/{reps}: {}\n", i + 1, head.join(", "))
}

/// `mpirun -np N iolab run ...` (docs/distributed.md): every rank runs the job against its own
/// `--dir` (`{rank}` and `{host}` put in), every phase starts behind a collective check that
/// every rank is fine, and rank 0 merges what the ranks measured, prints it and saves it as one
/// run. A rank that fails stops the others at the next phase; rank 0 names it (rank, host,
/// reason) and keeps what the others measured, marked incomplete. The other ranks print and
/// save nothing.
fn cmd_run_dist(a: &cli::RunArgs, ranks: &crate::dist::Ranks) -> Result<i32> {
    use crate::dist::substitute;
    let rank = ranks.rank();
    let mut a = a.clone();
    a.set.dir = substitute(&a.set.dir, rank, &ranks.host);
    if let Some(d) = &a.device {
        a.device = Some(substitute(d, rank, &ranks.host));
    }
    let refused = [
        (!a.jobfiles.is_empty(), "a job file"),
        (a.repeat > 1, "--repeat"),
        (a.explain, "--explain"),
        (a.live.is_some(), "--live"),
        (a.metrics_listen.is_some(), "--metrics-listen"),
    ]
    .into_iter()
    .find_map(|(given, what)| given.then_some(what));
    // Everything that can be refused before any I/O, on every rank; then every rank learns
    // whether all of them can start.
    let setup = (|| -> Result<_> {
        if let Some(what) = refused {
            return Err(Error::usage(format!(
                "{what} cannot be used in a distributed run (mpirun -np {}): run it without mpirun, or run the ranks' job as plain flags",
                ranks.size()
            )));
        }
        let mut plan = cli::plan_run(&a)?;
        if rank != 0 {
            plan.quiet = true;
        }
        let db = if rank == 0 && !a.no_save {
            Some(open_store(&a.db)?)
        } else {
            None
        };
        let held = lifecycle::hold(&plan)?;
        Ok((plan, db, held))
    })();
    let all_ok = ranks.all_ok(setup.is_ok());
    let stop = stop_flag();
    ranks.watch_stop(Arc::clone(&stop));
    ranks.set_rank_timeout(std::time::Duration::from_secs_f64(a.rank.rank_timeout));
    if rank == 0 {
        // A rank that dies or hangs: rank 0's watchdog ends the run (on its own thread: this
        // one may be waiting in a collective that never returns), prints and saves what every
        // other rank measured, marked incomplete.
        let a0 = a.clone();
        ranks.on_fault(Box::new(move |outcomes, _| {
            let mut store = if a0.no_save {
                None
            } else {
                open_store(&a0.db)
                    .inspect_err(|e| {
                        eprintln!("iolab: error: the results below were not saved: {e}")
                    })
                    .ok()
            };
            let code = finish_dist(&a0, outcomes, store.as_mut(), true);
            end_output(Ok(code))
        }));
    }
    let (result, mut kept) = match setup {
        Err(e) => (Err(e), None),
        Ok((_, db, held)) if !all_ok => {
            held.abandon();
            drop(db);
            (Err(crate::engine::checkpoints::stopped()), None)
        }
        Ok((plan, db, held)) => {
            let r = runner::run_synced(&plan, &stop, ranks, |_| {});
            held.release();
            if ranks.aborted()
                && let Ok(doc) = &r
            {
                // Rank 0 ended the run early (a rank died or hung): it takes this rank's
                // document from the side channel (the roles' too), not from a gather.
                crate::engine::checkpoints::PhaseSync::progress(ranks, doc);
            }
            (r, Some((plan, db)))
        }
    };
    // Rank 0 gets every rank's outcome; the others are done.
    let Some(outcomes) = ranks.gather(&result) else {
        return Ok(0);
    };
    let store = kept.as_mut().and_then(|(_, s)| s.as_mut());
    Ok(finish_dist(&a, outcomes, store, false))
}

/// Rank 0's end of a distributed run: one line per failing rank, the merged run printed and
/// saved (marked incomplete when a rank failed); the exit code. `early`: rank 0's watchdog ended
/// the run (a rank died or hung): where it was saved is said before the results are printed,
/// as `mpirun`, ending the job, forwards only the first few KiB of what rank 0 prints next.
fn finish_dist(
    a: &cli::RunArgs,
    outcomes: Vec<crate::dist::Outcome>,
    store: Option<&mut Store>,
    early: bool,
) -> i32 {
    let code = crate::dist::first_exit(&outcomes);
    let (doc, failures) = crate::dist::merge::merge(outcomes);
    for f in &failures {
        eprintln!("iolab: error: rank {} on {}: {}", f.rank, f.host, f.error);
    }
    let Some(doc) = doc else {
        if failures.is_empty() {
            eprintln!("iolab: error: interrupted before measuring began (nothing saved)");
            return Exit::Interrupted as i32;
        }
        return code.unwrap_or(Exit::Failed as i32);
    };
    let multi = doc.runs.len() > 1;
    let printed = Printed {
        doc: &doc,
        multi,
        bins: false,
        jobfile: None,
    };
    let json = crate::output::document::Document::json(&printed);
    let mut saved = None;
    let mut not_saved = None;
    // Rank 0 measured only when every rank could start, so its store is open.
    if let Some(s) = store {
        match s.save_run(&doc, &json, None, None) {
            Ok(id) => saved = Some((id, s.path.clone())),
            Err(e) => not_saved = Some(kept_instead(&s.path, &e.msg, &json)),
        }
    }
    if early {
        if let Some(why) = &not_saved {
            eprintln!("iolab: error: the results below were not saved: {why}");
        }
        if let Some((id, path)) = &saved {
            eprintln!("saved as run {id} in {}", path.display());
        }
    }
    let fmt = a.format();
    let printed = Printed {
        bins: fmt.bins(),
        ..printed
    };
    // a run's text cannot fail
    if let Err(e) = emit(&printed, fmt.export_format()) {
        return end_output(Err(e));
    }
    if let Some(why) = not_saved {
        if !early {
            eprintln!("iolab: error: the results above were not saved: {why}");
        }
        return Exit::NotSaved as i32;
    }
    if let Some((id, path)) = saved
        && !early
    {
        eprintln!("saved as run {id} in {}", path.display());
    }
    if let Some(c) = code {
        return c;
    }
    let errors: u64 = doc.runs.iter().map(|c| c.total_errors()).sum();
    if doc.interrupted {
        Exit::Interrupted as i32
    } else if errors > 0 {
        Exit::IoErrors as i32
    } else {
        0
    }
}

/// `--live FILE|-` and `--metrics-listen ADDR:PORT`: the observer the runner feeds and the
/// server that reads it, both made before anything runs (a port in use or a file that cannot be
/// created is a usage error, exit 2). `-` is stdout, refused when stdout also carries a JSON
/// document.
fn live_export(
    a: &cli::RunArgs,
) -> Result<(
    Option<crate::measure::export::Observer>,
    Option<crate::measure::export::MetricsServer>,
)> {
    use crate::measure::export::{MetricsServer, Observer};
    if a.live.is_none() && a.metrics_listen.is_none() {
        return Ok((None, None));
    }
    let stdout_lines = a.live.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if stdout_lines && a.format() != OutputFormat::Normal && a.out.output.is_none() {
        return Err(Error::usage(
            "--live -: stdout carries the JSON document of the run; write the lines to a file (--live FILE) or the document with --output FILE",
        ));
    }
    if stdout_lines {
        // stdout carries one format: the lines; the table goes to stderr (or --output)
        super::stdout_taken_by_live_lines();
    }
    let now = chrono::Utc::now();
    let run_id = format!(
        "{}-{}",
        now.format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id()
    );
    let obs = Observer::new(run_id, fsinfo::hostname(), now.into());
    // The port first: a port in use leaves no --live file behind.
    let server = match &a.metrics_listen {
        Some(addr) => {
            let s = MetricsServer::start(addr, &obs)?;
            if !a.quiet.quiet {
                eprintln!(
                    "metrics: http://{}/metrics (run_id {})",
                    s.addr,
                    obs.run_id()
                );
            }
            Some(s)
        }
        None => None,
    };
    let out: Option<Box<dyn std::io::Write + Send>> = match &a.live {
        None => None,
        Some(_) if stdout_lines => Some(Box::new(std::io::stdout())),
        Some(p) => {
            // Never through a symbolic link (one planted where iolab writes, in /tmp say): the
            // file itself is opened, created when missing, and emptied only once it is known
            // to be a regular file (a fifo a reader waits on is written as it is).
            use std::os::unix::fs::OpenOptionsExt;
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(p)
                .and_then(|f| {
                    if f.metadata()?.is_file() {
                        f.set_len(0)?;
                    }
                    Ok(f)
                })
                .map_err(|e| {
                    let why = if e.raw_os_error() == Some(libc::ELOOP) {
                        "it is a symbolic link, which iolab never writes through; name the file itself".to_string()
                    } else {
                        e.to_string()
                    };
                    Error::usage(format!(
                        "--live {}: cannot create the file ({why})",
                        p.display()
                    ))
                })?;
            Some(Box::new(std::io::LineWriter::new(f)))
        }
    };
    Ok((Some(obs.with_lines(out)), server))
}
