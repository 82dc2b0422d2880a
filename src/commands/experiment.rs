//! What the experiment commands (`sweep`, `saturate`, `suite sysbench-fileio`) share: the other
//! ranks of a distributed experiment following rank 0, a refused experiment's empty group
//! removed, a faulty point saved, a stored sweep run and printed.

use super::*;

/// Under mpirun, a rank other than 0 follows rank 0's experiment (each point a distributed run)
/// and is done when it ends: true then.
pub(super) fn followed(ranks: &Option<crate::dist::Ranks>) -> bool {
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

/// A new experiment refused (exit 2) before any point was saved leaves no empty group behind
/// (everything checkable is checked before the group is made; this is for what only the
/// system can refuse, such as a device setting the kernel does not take).
pub(super) fn drop_if_refused(store: &mut Store, gid: i64, err: Option<&Error>) {
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
pub(super) fn save_fault_point(
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

/// Run options as rank 0 of a distributed experiment uses them (`{rank}`, `{host}` put in), to
/// check them before anything runs; as given otherwise.
pub(super) fn rank0_args(ranks: &Option<crate::dist::Ranks>, args: &[String]) -> Vec<String> {
    match ranks {
        Some(r) => args
            .iter()
            .map(|x| crate::dist::substitute_str(x, r.rank(), &r.host))
            .collect(),
        None => args.to_vec(),
    }
}
/// Runs a stored sweep and prints its matrix (or JSON).
pub(super) fn finish_sweep(
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
