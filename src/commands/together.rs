//! `iolab together`: the same workload on each directory alone, then on all at once, stored as
//! a sweep (`load` x `dir`); whether the devices share a cap (`shared_cap`).

use super::experiment::drop_if_refused;
use super::*;
use std::os::unix::fs::MetadataExt;

pub fn cmd_together(a: &cli::TogetherArgs) -> Result<i32> {
    use crate::workloads::sweep::{self, together};
    if crate::dist::join()?.is_some() {
        return Err(Error::usage(
            "together: run it without mpirun (it runs its directories at once itself)",
        ));
    }
    if a.dirs.len() < 2 {
        return Err(Error::usage(
            "--dir: give two directories or more, each on a device of its own (each is measured alone, then all at once)",
        ));
    }
    let mut dirs = Vec::new();
    for d in &a.dirs {
        let s = d
            .to_str()
            .ok_or_else(|| Error::usage(format!("--dir {}: not UTF-8", d.display())))?;
        if dirs.iter().any(|x: &String| x == s) {
            return Err(Error::usage(format!("--dir {s}: given twice")));
        }
        dirs.push(s.to_string());
    }
    for (flag, why) in [
        (
            "--no-save",
            "every run of `iolab together` is stored (the verdict compares them)",
        ),
        (
            "--repeat",
            "together runs each directory once alone and once at once",
        ),
        (
            "--device",
            "together compares directories (give each device's with --dir)",
        ),
        ("--role", "together runs one mode"),
        ("--profile", "together runs one mode"),
    ] {
        if a.exp
            .run_args
            .iter()
            .any(|x| x == flag || x.starts_with(&format!("{flag}=")))
        {
            return Err(Error::usage(format!("{flag}: {why}")));
        }
    }
    let (fixed, axes) = sweep::split_axes(&cli::RunParser, &a.exp.run_args)?;
    if let Some(x) = axes.first() {
        return Err(Error::usage(format!(
            "together: --{} is a list; every run has the same options but its --dir",
            x.name
        )));
    }
    let spec = together::spec(fixed, &dirs);
    // every directory's run planned before anything runs (and before the group is made); two
    // on one filesystem would share everything and tell nothing
    let mut devs: Vec<(u64, &String)> = Vec::new();
    for d in &dirs {
        let mut args = spec.fixed.clone();
        args.extend(["--dir".to_string(), d.clone()]);
        let plan = cli::RunParser.plan(&args)?;
        let dev = std::fs::metadata(&plan.fileset.dir).map(|m| m.dev());
        if plan.created_dir {
            crate::system::target::remove_made_dir(&plan.fileset.dir);
        }
        if plan.cells.len() != 1 {
            return Err(Error::usage(
                "together: give exactly one --mode (every directory runs it alone and at once)",
            ));
        }
        let dev = dev.map_err(|e| Error::usage(format!("--dir {d}: {e}")))?;
        if let Some((_, other)) = devs.iter().find(|(x, _)| *x == dev) {
            return Err(Error::usage(format!(
                "--dir {d}: on the same filesystem as --dir {other}; give a directory on each device to compare"
            )));
        }
        devs.push((dev, d));
    }
    let mut store = open_store_write(&a.exp.db)?;
    let gid = store.new_experiment(
        crate::model::stored::GroupKind::Sweep,
        a.exp.label.label.as_deref(),
        1,
        &serde_json::to_value(&spec).expect("json"),
    )?;
    if !a.exp.print.json && !a.exp.quiet.quiet {
        eprintln!(
            "together stored as group g{gid}: {} directories alone, then all at once",
            dirs.len()
        );
    }
    let stop = stop_flag();
    let r = together::run_together(&cli::RunParser, &mut store, gid, &spec, &dirs, &stop);
    drop_if_refused(&mut store, gid, r.as_ref().err());
    let cells = r?;
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    emit(
        &crate::output::document::SweepDoc {
            gid,
            spec: &spec,
            cells: &cells,
            interrupted: Some(interrupted),
        },
        Format::json_if(a.exp.print.json),
    )?;
    if !a.exp.print.json {
        let rows: Vec<crate::analysis::explain::sweep::SharedRow> = dirs
            .iter()
            .map(|d| {
                let iops = |load: &str| {
                    cells
                        .iter()
                        .find(|c| {
                            c.cell.get(together::LOAD).map(String::as_str) == Some(load)
                                && c.cell.get("dir") == Some(d)
                        })
                        .map_or(0.0, |c| c.figures.iops)
                };
                crate::analysis::explain::sweep::SharedRow {
                    dir: d.clone(),
                    dev: None,
                    alone: iops(together::ALONE),
                    together: iops(together::TOGETHER),
                }
            })
            .collect();
        if let Some(v) = crate::analysis::explain::sweep::shared_verdict(&rows) {
            let say = if interrupted {
                "interrupted: not judged"
            } else if v.shared {
                "a cap the devices share (shared_cap: the host's, the instance's or one disk's)"
            } else {
                "no cap shared"
            };
            print_out(&format!(
                "{say}: {}\niolab explain g{gid} gives the evidence\n",
                v.evidence
            ));
        }
    }
    Ok(if interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}
