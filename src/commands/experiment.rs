use super::*;

/// Under mpirun, a rank other than 0 follows rank 0's experiment (each point a distributed run)
/// and is done when it ends: true then.
fn followed(ranks: &Option<crate::dist::Ranks>) -> bool {
    match ranks {
        Some(r) if r.rank() != 0 => {
            let stop = stop_flag();
            // rank 0 ending the experiment early (a rank died or hung) stops this rank's point
            r.watch_stop(Arc::clone(&stop));
            crate::workloads::sweep::follow(&cli::RunParser, r, &stop);
            true
        }
        _ => false,
    }
}

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
            .filter(|_| kind == "sweep")
            .and_then(|s| serde_json::from_value(s).ok())
            .ok_or_else(|| Error::usage(format!("--resume {r}: not a sweep")))?;
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
            "sweep",
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
        r.set_rank_timeout(std::time::Duration::from_secs_f64(a.exp.rank.rank_timeout));
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

/// A new experiment refused (exit 2) before any point was saved leaves no empty group behind
/// (everything checkable is checked before the group is made; this is for what only the
/// system can refuse, such as a device setting the kernel does not take).
fn drop_if_refused(store: &mut Store, gid: i64, err: Option<&Error>) {
    if let Some(e) = err
        && e.exit == Exit::Usage
        && store.group_runs(gid).is_ok_and(|v| v.is_empty())
        && store.delete_empty_group(gid).is_ok()
    {
        eprintln!("iolab: group g{gid} removed: nothing of it ran");
    }
}

/// Rank 0 of a distributed experiment, when a rank died or hung in a point: the failing rank
/// named (one line), the point as the other ranks measured it saved in the experiment's group
/// marked incomplete (the finished points are stored already); the store (None when it could
/// not be opened or the point not saved: said on stderr), the point's run id and the exit code.
fn save_fault_point(
    db: &cli::DbArgs,
    outcomes: Vec<crate::dist::Outcome>,
    at: &crate::workloads::sweep::PointAt,
) -> (Option<Store>, Option<i64>, i32) {
    let code = crate::dist::first_exit(&outcomes).unwrap_or(Exit::Failed as i32);
    let (doc, failures) = crate::dist::merge::merge(outcomes);
    for f in &failures {
        eprintln!("iolab: error: rank {} on {}: {}", f.rank, f.host, f.error);
    }
    let mut store = match open_store(db) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iolab: error: the point in progress was not saved: {e}");
            return (None, None, code);
        }
    };
    let point: Vec<String> = at.cell.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let Some(doc) = doc else {
        eprintln!(
            "the point in progress ({}) had measured nothing: not saved",
            point.join(" ")
        );
        return (Some(store), None, code);
    };
    let cell = serde_json::to_value(&at.cell).expect("json");
    match store.save_run(&doc, &doc.to_json(), Some((at.gid, at.seq)), Some(&cell)) {
        Ok(id) => {
            // said before the results: mpirun, ending the job, forwards little of what follows
            let f = crate::workloads::sweep::figures(&doc);
            let ranks: Vec<String> = doc
                .dist
                .as_ref()
                .map(|d| d.per_rank.iter().map(|r| r.rank.to_string()).collect())
                .unwrap_or_default();
            eprintln!(
                "saved the point in progress ({}) as run {id} in {}, marked incomplete: ranks {} measured {:.0} IOPS, {:.2} MiB/s, p99 {:.2} ms until the stop",
                point.join(" "),
                store.path.display(),
                ranks.join(", "),
                f.iops,
                f.mibps,
                f.p99_ms
            );
            (Some(store), Some(id), code)
        }
        Err(e) => {
            eprintln!("iolab: error: the point in progress was not saved: {e}");
            (Some(store), None, code)
        }
    }
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

/// Run options as rank 0 of a distributed experiment uses them (`{rank}`, `{host}` put in), to
/// check them before anything runs; as given otherwise.
fn rank0_args(ranks: &Option<crate::dist::Ranks>, args: &[String]) -> Vec<String> {
    match ranks {
        Some(r) => args
            .iter()
            .map(|x| crate::dist::substitute_str(x, r.rank(), &r.host))
            .collect(),
        None => args.to_vec(),
    }
}
/// Runs a stored sweep and prints its matrix (or JSON).
fn finish_sweep(
    store: &mut Store,
    gid: i64,
    spec: &crate::workloads::sweep::SweepSpec,
    json: bool,
    quiet: bool,
    stop: &AtomicBool,
    points: crate::workloads::sweep::Points,
) -> Result<i32> {
    use crate::workloads::sweep;
    let cells = sweep::run_sweep(
        &cli::RunParser,
        store,
        gid,
        spec,
        stop,
        json || quiet,
        points,
    )?;
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    let doc = crate::output::document::SweepDoc {
        gid,
        spec,
        cells: &cells,
        interrupted: Some(interrupted),
    };
    emit(&doc, Format::json_if(json))?;
    if !json && interrupted {
        print_out(&format!(
            "interrupted: finished cells are kept; continue with: iolab sweep --resume g{gid}\n"
        ));
    }
    Ok(if interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

pub fn cmd_sysbench_fileio(a: &cli::SbFileioArgs) -> Result<i32> {
    use crate::workloads::sweep;
    let gib = 1u64 << 30;
    let sizes: Vec<String> = [1, 4, 16]
        .iter()
        .map(|g| crate::model::units::Bytes(g * gib / a.scale / (1 << 20) * (1 << 20)).to_string())
        .collect();
    let backlog = a.file_async_backlog.to_string();
    let engine: &[&str] = match a.file_io_mode.as_deref() {
        None => &["--engine", &a.engine],
        Some("sync") => &["--engine", "sync"],
        Some("async") => &["--engine", "libaio", "--iodepth", &backlog],
        Some(m) => {
            return Err(Error::usage(format!(
                "--file-io-mode: '{m}' is not offered; use sync or async (the suite runs O_DIRECT, which sysbench's mmap mode bypasses)"
            )));
        }
    };
    let fixed: Vec<String> = [
        "--dir",
        &a.dir.display().to_string(),
        "--files",
        "64",
        "--bs",
        "16k",
        "--direct",
        "--time",
        &a.time.to_string(),
    ]
    .iter()
    .chain(engine)
    .map(|s| s.to_string())
    .chain(
        a.label
            .label
            .iter()
            .flat_map(|l| ["--label".to_string(), l.clone()]),
    )
    .chain(a.reprepare.then(|| "--reprepare".to_string()))
    .collect();
    let axes = vec![
        sweep::Axis {
            name: "size".into(),
            values: sizes,
        },
        sweep::Axis {
            name: "threads".into(),
            values: vec!["1".into(), "4".into(), "8".into()],
        },
        sweep::Axis {
            name: "mode".into(),
            values: ["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        },
    ];
    sweep::check_cells(&cli::RunParser, &fixed, &axes)?;
    let spec = sweep::SweepSpec {
        fixed,
        axes,
        repeat: a.repeat.max(1),
        rows: Some("threads".into()),
        cols: Some("mode".into()),
        metric: "iops".into(),
    };
    let mut store = open_store_write(&a.db)?;
    let gid = store.new_experiment(
        "sweep",
        a.label.label.as_deref().or(Some("sysbench-fileio")),
        spec.repeat,
        &serde_json::to_value(&spec).expect("json"),
    )?;
    eprintln!(
        "sysbench-fileio suite stored as group g{gid} ({} cells); resume with: iolab sweep --resume g{gid}",
        sweep::cross(&spec.axes).len()
    );
    let stop = stop_flag();
    finish_sweep(
        &mut store,
        gid,
        &spec,
        a.print.json,
        false,
        &stop,
        sweep::Points::Here,
    )
}

pub fn cmd_saturate(a: &cli::SaturateArgs) -> Result<i32> {
    use crate::workloads::sweep;
    // Under mpirun: rank 0 searches, each step a distributed run; the others follow.
    let ranks = crate::dist::join()?;
    if followed(&ranks) {
        return Ok(0);
    }
    let _lead = ranks.as_ref().map(sweep::Lead);
    let target = sweep::Target::parse(&a.target)?;
    let (axis, range) = a.over.split_once('=').ok_or_else(|| {
        Error::usage(format!(
            "--over '{}': use AXIS=LO..HI, e.g. size=10G..750G or rate=100..5000",
            a.over
        ))
    })?;
    if !["size", "rate", "threads", "iodepth", "files"].contains(&axis) {
        return Err(Error::usage(format!(
            "--over {axis}: search over size, rate, threads, iodepth or files"
        )));
    }
    let (lo, hi) = range
        .split_once("..")
        .ok_or_else(|| Error::usage(format!("--over '{}': the range is LO..HI", a.over)))?;
    let num = |s: &str| {
        crate::model::units::parse_size(s).map_err(|e| Error::usage(format!("--over: {e}")))
    };
    let (lo, hi) = (num(lo)?, num(hi)?);
    if lo == 0 || lo >= hi {
        return Err(Error::usage(format!(
            "--over '{}': need 0 < LO < HI",
            a.over
        )));
    }
    let step = match &a.step {
        Some(s) => num(s)?.max(1),
        None => ((hi - lo) / 32).max(1),
    };
    if a.exp.run_args.iter().any(|x| x == "--no-save") {
        return Err(Error::usage(
            "--no-save: every step of a saturation search is stored",
        ));
    }
    let (fixed, axes) = sweep::split_axes(&cli::RunParser, &a.exp.run_args)?;
    if !axes.is_empty() {
        return Err(Error::usage(format!(
            "saturate: --{} is a list; only --over varies",
            axes[0].name
        )));
    }
    if fixed.iter().any(|x| x == &format!("--{axis}")) {
        return Err(Error::usage(format!(
            "--{axis}: it is the axis of --over; do not also fix it"
        )));
    }
    let spec = sweep::SaturateSpec {
        fixed,
        axis: axis.into(),
        lo,
        hi,
        step,
        max_steps: a.max_steps.max(2),
        target,
    };
    // validate the run options at both ends of the range before measuring anything (and
    // before the group is made)
    for end in [lo, hi] {
        let mut probe_cell = std::collections::BTreeMap::new();
        probe_cell.insert(spec.axis.clone(), end.to_string());
        let probe = cli::RunParser.plan(&rank0_args(
            &ranks,
            &sweep::cell_args(&spec.fixed, &probe_cell),
        ))?;
        if probe.created_dir {
            crate::system::target::remove_made_dir(&probe.fileset.dir);
        }
        if probe.cells.len() != 1 {
            return Err(sweep::one_mode_needed());
        }
    }
    let mut store = open_store_write(&a.exp.db)?;
    let gid = store.new_experiment(
        "saturate",
        a.exp.label.label.as_deref(),
        1,
        &serde_json::to_value(&spec).expect("json"),
    )?;
    let stop = stop_flag();
    if let Some(r) = &ranks {
        r.set_rank_timeout(std::time::Duration::from_secs_f64(a.exp.rank.rank_timeout));
        r.watch_stop(Arc::clone(&stop));
    }
    let on_fault = saturate_fault(a, &spec);
    let points_on = ranks
        .as_ref()
        .map_or(sweep::Points::Here, |r| sweep::Points::Ranks(r, &on_fault));
    let points = sweep::saturate(
        &cli::RunParser,
        &mut store,
        gid,
        &spec,
        &stop,
        a.exp.print.json || a.exp.quiet.quiet,
        points_on,
    );
    drop_if_refused(&mut store, gid, points.as_ref().err());
    let points = points?;
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    let doc = crate::output::document::SaturateDoc {
        gid,
        spec: &spec,
        points: &points,
        interrupted: Some(interrupted),
    };
    emit(&doc, Format::json_if(a.exp.print.json))?;
    eprintln!("stored as group g{gid}");
    Ok(if interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

/// [`sweep::OnPointFault`] of a saturation search: the point saved ([`save_fault_point`]), then
/// the points measured before it printed as after Ctrl-C.
fn saturate_fault(
    a: &cli::SaturateArgs,
    spec: &crate::workloads::sweep::SaturateSpec,
) -> crate::workloads::sweep::OnPointFault {
    use crate::workloads::sweep;
    let (db, spec, json) = (a.exp.db.clone(), spec.clone(), a.exp.print.json);
    Arc::new(move |outcomes, _, at| {
        let gid = at.gid;
        let (store, id, code) = save_fault_point(&db, outcomes, &at);
        let r = store
            .map_or(Ok(Vec::new()), |s| sweep::stored_points(&s, gid, &spec))
            .and_then(|mut points| {
                // the incomplete point is stored, but not a point of the search
                points.retain(|p| Some(p.run_id) != id);
                emit(
                    &crate::output::document::SaturateDoc {
                        gid,
                        spec: &spec,
                        points: &points,
                        interrupted: Some(true),
                    },
                    Format::json_if(json),
                )?;
                eprintln!("stored as group g{gid}");
                Ok(code)
            });
        end_output(r)
    })
}
