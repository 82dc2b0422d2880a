//! `iolab saturate`: the highest load that meets a latency target, found by bisection.

use super::experiment::{drop_if_refused, followed, rank0_args, save_fault_point};
use super::*;

pub fn cmd_saturate(a: &cli::SaturateArgs) -> Result<i32> {
    use crate::workloads::sweep;
    // Under mpirun: rank 0 searches, each step a distributed run; the others follow.
    let ranks = crate::dist::join()?;
    if followed(&ranks) {
        return Ok(0);
    }
    let _lead = ranks.as_ref().map(sweep::Lead);
    let target = match &a.target {
        Some(t) => sweep::Target::parse(t)?,
        None => like_target(&a.exp.run_args)?,
    };
    let (axis, range) = a.over.split_once('=').ok_or_else(|| {
        Error::usage(format!(
            "--over '{}': use AXIS=LO..HI, e.g. size=10G..750G or rate=100..5000",
            a.over
        ))
    })?;
    if !["size", "rate", "threads", "iodepth", "files", "scale"].contains(&axis) {
        return Err(Error::usage(format!(
            "--over {axis}: search over size, rate, threads, iodepth, files or scale (with --like)"
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
    let mut spec = sweep::SaturateSpec {
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
        crate::model::stored::GroupKind::Saturate,
        a.exp.label.label.as_deref(),
        1,
        &serde_json::to_value(&spec).expect("json"),
    )?;
    let stop = stop_flag();
    if let Some(r) = &ranks {
        r.set_rank_timeout(std::time::Duration::from_secs_f64(a.rank.rank_timeout));
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
        &mut spec,
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

/// `saturate --like CAPTURE` without `--target`: the load at which the p99 doubles, `p99<=2x`
/// (twice the p99 at the range's low end, `scale=1`: today's load on this storage). The
/// capture's own p99 is the device's service time, below the block layer's queues and
/// throttles; the twin's is measured from each request's issue, as every run's.
fn like_target(run_args: &[String]) -> Result<crate::model::experiment::Target> {
    if !run_args
        .iter()
        .any(|x| x == "--like" || x.starts_with("--like="))
    {
        return Err(Error::usage(
            "--target: give the target to search for, e.g. --target 'p99<=10ms', 'mibps>=22' or 'p99<=2x' (twice the low end's; the default with --like CAPTURE)",
        ));
    }
    crate::model::experiment::Target::parse("p99<=2x")
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
        // the stored definition: a relative target's value set once the low end was measured
        let spec = store
            .as_ref()
            .and_then(|s| s.experiment(gid).ok())
            .and_then(|(_, v)| v)
            .and_then(|v| serde_json::from_value::<sweep::SaturateSpec>(v).ok())
            .unwrap_or_else(|| spec.clone());
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
