use super::*;

/// Stores a suite or zones result unless --no-save; says where.
pub(super) fn save_suite(
    db: &cli::DbArgs,
    no_save: bool,
    name: &str,
    doc: &serde_json::Value,
    dir: Option<&Path>,
) -> Result<()> {
    if no_save {
        return Ok(());
    }
    let mut s = open_store_write(db)?;
    let system =
        dir.map(|d| crate::system::env::collect(&crate::system::env::Roots::live(), Some(d)));
    let id = s.save_suite(name, doc, &fsinfo::hostname(), system.as_ref())?;
    eprintln!("saved as run {id} in {}", s.path.display());
    Ok(())
}

fn suite_dir(dir: &Path) -> Result<bool> {
    cli::check_dir(dir, dir == Path::new(cli::DEFAULT_DIR))
}

/// The lock of the directory a suite works in (the file-set lock `iolab run` takes): two
/// benchmarks in one directory would measure each other.
fn lock_suite_dir(dir: &Path, created: bool) -> Result<fileset::SetLock> {
    fileset::lock(dir).inspect_err(|_| {
        if created {
            crate::system::target::remove_made_dir(dir);
        }
    })
}

/// Runs `work` in a suite's directory: made if it is the default and missing, locked as
/// `iolab run` locks a file set, the lock released and a directory it made removed after.
fn in_suite_dir<T>(dir: &Path, work: impl FnOnce() -> Result<T>) -> Result<T> {
    let created = suite_dir(dir)?;
    let lock = lock_suite_dir(dir, created)?;
    let r = work();
    drop(lock);
    if created {
        crate::system::target::remove_made_dir(dir);
    }
    r
}

pub fn cmd_iozone(a: &cli::IozoneArgs) -> Result<i32> {
    use crate::workloads::suites;
    let o = suites::IozoneOpts {
        dir: a.dir.clone(),
        min_file: a.min_file,
        max_file: a.max_file,
        min_rec: a.min_rec,
        max_rec: a.max_rec,
        direct: a.direct,
        include_flush: a.include_flush,
        ..Default::default()
    };
    let stop = stop_flag();
    let r = in_suite_dir(&a.dir, || {
        let bar = crate::engine::fileset::progress_bar(1, a.quiet.quiet || a.print.json, "iozone");
        let r = suites::iozone(&o, &stop, &|done, total| {
            bar.set_length(total);
            bar.set_position(done);
        });
        bar.finish_and_clear();
        r
    })?;
    let csv = crate::output::suites::iozone_csv(&r);
    finish_suite(
        &r,
        "iozone",
        r.interrupted,
        &csv,
        a.print.json,
        &a.csv,
        &a.db,
        a.no_save,
        &a.dir,
    )
}

pub fn cmd_bonnie(a: &cli::BonnieArgs) -> Result<i32> {
    use crate::workloads::suites;
    let mut o = suites::BonnieOpts {
        dir: a.dir.clone(),
        chunk: a.chunk,
        files: a.files,
        seeks: a.seeks,
        force: a.force,
        ..Default::default()
    };
    if let Some(s) = a.size {
        o.size = s;
    }
    // the values, then Bonnie++'s RAM rule, before anything is printed or created
    suites::bonnie_check_values(&o)?;
    if let Some(w) = suites::bonnie_ram_rule(o.size, suites::machine_ram(), o.force)? {
        eprintln!("warning: {}", w.message);
    }
    let stop = stop_flag();
    let r = in_suite_dir(&a.dir, || suites::bonnie(&o, &stop))?;
    let csv = crate::output::suites::bonnie_csv(&r);
    finish_suite(
        &r,
        "bonnie",
        r.interrupted,
        &csv,
        a.print.json,
        &a.csv,
        &a.db,
        a.no_save,
        &a.dir,
    )
}

pub fn cmd_zones(a: &cli::ZonesArgs) -> Result<i32> {
    let stop = stop_flag();
    let r = crate::workloads::zones::zones(&a.target, a.zones, a.per_zone, a.bs, &stop)?;
    emit(&r, Format::json_if(a.print.json))?;
    save_suite(
        &a.db,
        a.no_save,
        "zones",
        &crate::output::document::Document::json(&r),
        None,
    )?;
    Ok(if r.interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

/// Prints a suite's result, writes its CSV where asked (`--csv`), stores it, and gives the exit
/// code (130 when interrupted).
#[allow(clippy::too_many_arguments)]
fn finish_suite<D: crate::output::document::Document>(
    r: &D,
    name: &str,
    interrupted: bool,
    csv: &str,
    json: bool,
    csv_path: &Option<std::path::PathBuf>,
    db: &cli::DbArgs,
    no_save: bool,
    dir: &Path,
) -> Result<i32> {
    emit(r, Format::json_if(json))?;
    write_side_file(csv_path, csv)?;
    save_suite(db, no_save, name, &r.json(), Some(dir))?;
    Ok(if interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

/// `iolab suite sysbench-fileio`: sysbench fileio's classic matrix, run as a stored sweep.
pub fn cmd_sysbench_fileio(a: &cli::SbFileioArgs) -> Result<i32> {
    use crate::workloads::sweep;
    // sysbench's options translated into a sweep (cli::sysbench)
    let spec = cli::sysbench_fileio_sweep(a)?;
    let mut store = open_store_write(&a.db)?;
    let gid = store.new_experiment(
        crate::model::stored::GroupKind::Sweep,
        a.label.label.as_deref().or(Some("sysbench-fileio")),
        spec.repeat,
        &serde_json::to_value(&spec).expect("json"),
    )?;
    eprintln!(
        "sysbench-fileio suite stored as group g{gid} ({} cells); resume with: iolab sweep --resume g{gid}",
        sweep::cross(&spec.axes).len()
    );
    let stop = stop_flag();
    super::experiment::finish_sweep(
        &mut store,
        gid,
        &spec,
        a.print.json,
        false,
        &stop,
        sweep::Points::Here,
    )
}

/// `iolab suite pts`: SNIA PTS's client tests on a file or a `--destructive` device, stored as
/// one suite result keeping every round.
pub fn cmd_pts(a: &cli::PtsArgs) -> Result<i32> {
    use crate::workloads::pts;
    let tests = pts::parse_tests(&a.tests).map_err(|e| Error::usage(format!("--tests {e}")))?;
    let (cell, rounds, wsat_round, wsat_max) = if a.quick {
        (0.5, 10, 1.0, 60.0)
    } else {
        (60.0, 25, 60.0, 86_400.0)
    };
    let mut target = Vec::new();
    match (&a.device, &a.dir) {
        (Some(d), _) => {
            target.extend(["--device".to_string(), d.display().to_string()]);
            if let Some(w) = &a.destructive {
                target.push(format!("--destructive={w}"));
            }
            if let Some(o) = a.offset {
                target.extend(["--offset".to_string(), o.to_string()]);
            }
            if let Some(s) = a.size {
                target.extend(["--size".to_string(), s.to_string()]);
            }
        }
        (None, dir) => {
            if a.destructive.is_some() {
                return Err(Error::usage(
                    "--destructive: only with --device (a file target needs no such flag)",
                ));
            }
            let dir = dir.clone().unwrap_or_else(|| cli::DEFAULT_DIR.into());
            target.extend([
                "--dir".to_string(),
                dir.display().to_string(),
                "--files".to_string(),
                "1".to_string(),
                "--size".to_string(),
                a.size.unwrap_or(1 << 30).to_string(),
            ]);
        }
    }
    let o = pts::PtsOpts {
        target_args: target,
        engine: a.engine.clone(),
        threads: a.threads,
        iodepth: a.iodepth,
        cell_s: a.cell_time.unwrap_or(cell),
        max_rounds: a.max_rounds.unwrap_or(rounds),
        wsat_round_s: a.wsat_round.unwrap_or(wsat_round),
        wsat_max_s: a.wsat_time.unwrap_or(wsat_max),
        tests,
        quick: a.quick,
        verbose: !a.quiet.quiet && !a.print.json,
    };
    pts::check(&o)?;
    let stop = stop_flag();
    let r = pts::run_suite(&cli::RunParser, &o, &stop)?;
    let dir = (r.kind == "file").then(|| std::path::PathBuf::from(&r.target));
    emit(&r, Format::json_if(a.print.json))?;
    save_suite(
        &a.db,
        a.no_save,
        "pts",
        &crate::output::document::Document::json(&r),
        dir.as_deref(),
    )?;
    Ok(if r.interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}
