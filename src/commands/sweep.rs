//! `iolab sweep`: a new sweep's axes checked and stored, or a stored one resumed, then run.

use super::experiment::{drop_if_refused, finish_sweep, followed, rank0_args, save_fault_point};
use super::*;

pub fn cmd_sweep(a: &cli::SweepArgs) -> Result<i32> {
    use crate::workloads::sweep;
    // Under mpirun: rank 0 runs the sweep, each point a distributed run; the others follow.
    let ranks = crate::dist::join()?;
    if followed(&ranks) {
        return Ok(0);
    }
    let _lead = ranks.as_ref().map(sweep::Lead);
    if ranks.is_some()
        && (a.scheduler.is_some() || a.read_ahead.is_some() || a.nr_requests.is_some())
    {
        return Err(Error::usage(
            "--scheduler/--read-ahead/--nr-requests: device settings are not switched on every host of a distributed sweep yet; run that sweep without mpirun",
        ));
    }
    let stop = stop_flag();
    let resumed = a.resume.is_some();
    // (a new sweep's store is opened once its options are checked: a refused one creates none)
    let (mut store, gid, spec) = if let Some(r) = &a.resume {
        let store = open_store_write(&a.exp.db)?;
        let g = match r.parse::<store::Ref>().map_err(Error::usage)? {
            store::Ref::Group(g) => g,
            store::Ref::Run(_) => {
                return Err(Error::usage(format!(
                    "--resume {r}: give the sweep's group id, e.g. g4"
                )));
            }
        };
        let (kind, spec) = store.experiment(g)?;
        let spec: sweep::SweepSpec = spec
            .filter(|_| kind == crate::model::stored::GroupKind::Sweep)
            .and_then(|s| serde_json::from_value(s).ok())
            .ok_or_else(|| Error::usage(format!("--resume {r}: not a sweep")))?;
        if sweep::together::is_together(&spec) {
            return Err(Error::usage(format!(
                "--resume {r}: a group of `iolab together` (run it again: its runs at once are one measurement)"
            )));
        }
        if a.exp.run_args.iter().any(|x| x != "-q" && x != "--quiet") {
            return Err(Error::usage(
                "--resume: give no other run options; the sweep's own are used",
            ));
        }
        let mut spec = spec;
        if a.exp.quiet.quiet && !spec.fixed.iter().any(|x| x == "-q" || x == "--quiet") {
            spec.fixed.push("-q".into());
        }
        (store, g, spec)
    } else {
        if a.exp.run_args.iter().any(|x| x == "--no-save") {
            return Err(Error::usage(
                "--no-save: a sweep is stored as one experiment (it is what makes --resume possible)",
            ));
        }
        if a.exp
            .run_args
            .iter()
            .any(|x| x == "--repeat" || x.starts_with("--repeat="))
        {
            return Err(Error::usage(
                "--repeat: give it to the sweep once (runs per cell)",
            ));
        }
        let (fixed, mut axes) = sweep::split_axes(&cli::RunParser, &a.exp.run_args)?;
        for (name, v) in [
            ("scheduler", &a.scheduler),
            ("read-ahead", &a.read_ahead),
            ("nr-requests", &a.nr_requests),
        ] {
            if let Some(v) = v {
                let vals = if v == "all" {
                    vec!["all".to_string()]
                } else {
                    sweep::expand(&format!("--{name}"), v)?
                };
                // device settings go outermost: fewer switches
                axes.insert(
                    0,
                    sweep::Axis {
                        name: name.into(),
                        values: vals,
                    },
                );
            }
        }
        if axes.is_empty() {
            return Err(Error::usage(
                "sweep: no axis: give at least one run option as a list or range (e.g. --threads 1,4,8 or --size 1G..16G)",
            ));
        }
        if sweep::metric(&sweep::Figures::default(), &a.metric).is_none() {
            return Err(Error::usage(format!(
                "--metric '{}': use {}",
                a.metric,
                sweep::METRIC_NAMES
            )));
        }
        for (flag, v) in [("--rows", &a.rows), ("--cols", &a.cols)] {
            if let Some(v) = v
                && !axes.iter().any(|x| &x.name == v)
            {
                let names: Vec<&str> = axes.iter().map(|x| x.name.as_str()).collect();
                return Err(Error::usage(format!(
                    "{flag} '{v}': not an axis of this sweep (axes: {})",
                    names.join(", ")
                )));
            }
        }
        let tuning: Vec<&sweep::Axis> = axes
            .iter()
            .filter(|x| sweep::TUNING.contains(&x.name.as_str()))
            .collect();
        if !tuning.is_empty() {
            // the devices the sweep will switch, found as it will find them
            let devs = sweep::tuning_devices(&cli::RunParser, &fixed)?;
            sweep::check_tuning(&mut axes, &devs)?;
        }
        sweep::check_cells(&cli::RunParser, &rank0_args(&ranks, &fixed), &axes)?;
        let spec = sweep::SweepSpec {
            fixed,
            axes,
            repeat: a.repeat,
            rows: a.rows.clone(),
            cols: a.cols.clone(),
            metric: a.metric.clone(),
        };
        let mut store = open_store_write(&a.exp.db)?;
        let g = store.new_experiment(
            crate::model::stored::GroupKind::Sweep,
            a.exp.label.label.as_deref(),
            a.repeat,
            &serde_json::to_value(&spec).expect("json"),
        )?;
        eprintln!(
            "sweep stored as group g{g} ({} cells x {} runs); resume with: iolab sweep --resume g{g}",
            sweep::cross(&spec.axes).len(),
            spec.repeat
        );
        (store, g, spec)
    };
    if let Some(r) = &ranks {
        r.set_rank_timeout(std::time::Duration::from_secs_f64(a.rank.rank_timeout));
        r.watch_stop(Arc::clone(&stop));
    }
    let on_fault = sweep_fault(a, &spec);
    let points = ranks
        .as_ref()
        .map_or(sweep::Points::Here, |r| sweep::Points::Ranks(r, &on_fault));
    let r = finish_sweep(
        &mut store,
        gid,
        &spec,
        a.exp.print.json,
        a.exp.quiet.quiet,
        &stop,
        points,
    );
    if !resumed {
        drop_if_refused(&mut store, gid, r.as_ref().err());
    }
    r
}

/// [`sweep::OnPointFault`] of a sweep: the point saved ([`save_fault_point`]), then the
/// finished cells printed as after Ctrl-C.
fn sweep_fault(
    a: &cli::SweepArgs,
    spec: &crate::workloads::sweep::SweepSpec,
) -> crate::workloads::sweep::OnPointFault {
    use crate::workloads::sweep;
    let (db, spec, json) = (a.exp.db.clone(), spec.clone(), a.exp.print.json);
    Arc::new(move |outcomes, _, at| {
        let gid = at.gid;
        let (store, _, code) = save_fault_point(&db, outcomes, &at);
        let r = store
            .map_or(Ok(Vec::new()), |s| sweep::stored_cells(&s, gid, &spec))
            .and_then(|cells| {
                emit(
                    &crate::output::document::SweepDoc {
                        gid,
                        spec: &spec,
                        cells: &cells,
                        interrupted: Some(true),
                    },
                    Format::json_if(json),
                )?;
                if !json {
                    print_out(&format!(
                        "a rank failed: finished cells are kept; continue with: iolab sweep --resume g{gid}\n"
                    ));
                }
                Ok(code)
            });
        end_output(r)
    })
}
