use super::*;

pub fn cmd_run(a: &cli::RunArgs) -> Result<i32> {
    let mut plan = cli::plan_run(a)?;
    // Open the store first: a store that cannot take the results should not cost a benchmark.
    let mut db = if a.no_save {
        None
    } else {
        Some(open_store(&a.db)?)
    };
    let stop = stop_flag();
    let reps = a.repeat.max(1);
    let existed = fileset::status(&plan.fileset).complete(&plan.fileset);
    let keep = plan.keep;
    let created_dir = plan.created_dir;
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
    for i in 0..reps {
        let doc = runner::run(&plan, &stop, |_| {})?;
        let json = doc.to_json();
        if let Some(s) = &mut db {
            match s.save_run(&doc, &json, group.map(|g| (g, i + 1)), None) {
                Ok(id) => saved_ids.push(id),
                Err(e) => not_saved = Some(e.msg),
            }
        }
        if reps == 1 {
            emit(&doc, a.json);
        } else if !a.json {
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
        let errors: u64 = doc.runs.iter().map(|c| c.total_errors()).sum();
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
        if !existed && !keep {
            fileset::cleanup(&plan.fileset);
            if created_dir {
                let _ = std::fs::remove_dir(&plan.fileset.dir);
            }
        }
        if let (Some(s), Some(g)) = (&db, group) {
            let rows = history::group_summary(s, &saved_ids)?;
            if a.json {
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
