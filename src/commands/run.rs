use super::*;
use crate::cli::OutputFormat;
use crate::model::run::RunDoc;
use clap::ValueEnum;

pub fn cmd_run(a: &cli::RunArgs) -> Result<i32> {
    let fmt = a.format();
    if a.repeat > 1 && !matches!(fmt, OutputFormat::Normal | OutputFormat::Json) {
        return Err(Error::usage(format!(
            "--output-format {} prints the document of one run: it cannot be used with --repeat (use --json for the repetitions' summary, or run them one by one)",
            fmt.to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        )));
    }
    let mut plan = cli::plan_run(a)?;
    // Open the store first: a store that cannot take the results should not cost a benchmark.
    let db = if a.no_save {
        None
    } else {
        Some(open_store(&a.db)?)
    };
    let stop = stop_flag();
    let reps = a.repeat.max(1);
    // One iolab at a time on a file set, for the whole run (all repetitions and the cleanup).
    let lock = match fileset::lock(&plan.fileset.dir) {
        Ok(l) => l,
        Err(e) => {
            if plan.created_dir {
                let _ = std::fs::remove_dir(&plan.fileset.dir);
            }
            return Err(e);
        }
    };
    let (created_dir, keep) = (plan.created_dir, plan.keep);
    let r = run_locked(a, &mut plan, db, &stop, reps);
    drop(lock);
    // The lock file was the last thing in a --dir this run created.
    if created_dir && !keep {
        let _ = std::fs::remove_dir(&plan.fileset.dir);
    }
    r
}

/// The run document as printed and stored: a run of several modes keeps its multi-mode layout
/// (`runs[]`, `job.modes`) also when an interruption left one measured mode.
struct Printed<'a> {
    doc: &'a RunDoc,
    multi: bool,
    /// json+: each operation's latency histogram as `hist_bins` (printed, not stored: the store
    /// keeps the histograms themselves).
    bins: bool,
}

impl crate::output::document::Document for Printed<'_> {
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
        v
    }
    fn text(&self) -> String {
        crate::output::document::Document::text(self.doc)
    }
}

fn run_locked(
    a: &cli::RunArgs,
    plan: &mut crate::spec::plan::Plan,
    mut db: Option<Store>,
    stop: &AtomicBool,
    reps: u32,
) -> Result<i32> {
    // A set --reprepare replaces is this run's, like one it created.
    // A device target is never prepared or removed: it counts as there before.
    let existed = plan.fileset.device.is_some()
        || (fileset::status(&plan.fileset).present_files > 0 && !runner::replaces_set(plan));
    // The roles' own sets (DIR/NAME/): whether each (and its directory) was there before.
    let own_sets: Vec<(crate::model::job::FileSetSpec, bool, bool)> = plan
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
    // After repetitions (the sets kept between them): remove the sets this run created.
    let cleanup_all = |plan: &crate::spec::plan::Plan| {
        if !existed {
            fileset::cleanup(&plan.fileset);
        }
        for (spec, set_existed, dir_existed) in &own_sets {
            if !set_existed {
                fileset::cleanup(spec);
                if !dir_existed {
                    let _ = std::fs::remove_dir(&spec.dir);
                }
            }
        }
    };
    let keep = plan.keep;
    if reps > 1 {
        // Keep the set between repetitions; it is removed after the last one if this run made it.
        plan.keep = true;
        plan.created_dir = false;
    }
    let group = match (&mut db, reps > 1) {
        (Some(s), true) => Some(s.new_group("run", plan.label.as_deref(), reps)?),
        _ => None,
    };
    let mut saved_ids = Vec::new();
    let mut not_saved: Option<String> = None;
    let mut worst = 0;
    let multi = plan.roles.is_empty() && plan.cells.len() > 1;
    let fmt = a.format();
    let want_json = fmt != OutputFormat::Normal;
    for i in 0..reps {
        let doc = match runner::run(plan, stop, |_| {}) {
            Ok(d) => d,
            Err(e) => {
                if reps > 1 && !keep {
                    // The set kept between repetitions goes too, as on any failure.
                    cleanup_all(plan);
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
        };
        let json = crate::output::document::Document::json(&printed);
        if let Some(s) = &mut db {
            match s.save_run(&doc, &json, group.map(|g| (g, i + 1)), None) {
                Ok(id) => saved_ids.push(id),
                Err(e) => {
                    not_saved = Some(match keep_unsaved(&s.path, &json) {
                        Ok(p) => format!(
                            "{}; the document is kept in {} (`iolab import {}` saves it later)",
                            e.msg,
                            p.display(),
                            p.display()
                        ),
                        Err(why) => {
                            format!("{}; it could not be kept in a file either: {why}", e.msg)
                        }
                    })
                }
            }
        }
        if reps == 1 {
            let bins = matches!(fmt, OutputFormat::JsonPlus | OutputFormat::FioJsonPlus);
            match fmt {
                OutputFormat::Normal => emit(&printed, false),
                OutputFormat::Json | OutputFormat::JsonPlus => {
                    emit(&Printed { bins, ..printed }, true)
                }
                OutputFormat::FioJson | OutputFormat::FioJsonPlus => {
                    emit(&crate::output::fio::FioDoc { doc: &doc, bins }, true)
                }
            }
        } else if !want_json {
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
            print_out(&format!(
                "repetition {}/{reps}: {}\n",
                i + 1,
                head.join(", ")
            ));
        }
        let errors: u64 = doc
            .runs
            .iter()
            .map(|c| c.total_errors() + c.verify.as_ref().map_or(0, |v| v.bad()))
            .sum();
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
        if !keep {
            cleanup_all(plan);
        }
        if let (Some(s), Some(g)) = (&db, group) {
            let rows = history::group_summary(s, &saved_ids)?;
            if want_json {
                let docs: Vec<serde_json::Value> = saved_ids
                    .iter()
                    .map(|&id| s.doc(id))
                    .collect::<std::result::Result<_, _>>()?;
                print_json(
                    &serde_json::json!({"schema": "iolab-repeat/1", "group": format!("g{g}"), "run_ids": saved_ids, "runs": docs, "summary": rows}),
                );
            } else {
                print_out(&history::render_summary(&rows, saved_ids.len()));
            }
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
