use clap::Parser;
use iolab::cli::{self, Cli, Cmd};
use iolab::engine::{fileset, runner};
use iolab::error::{Error, Exit};
use iolab::output::{history, table as report};
use iolab::store::compare;
use iolab::store::{self, Store};
use iolab::system::fsinfo;
use iolab::workloads::sweep::RunOptions;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Exit code when a run completed but some I/O operations failed (docs/exit-codes.md).
const EXIT_IO_ERRORS: i32 = 3;
/// Exit code when a run completed and was printed but could not be saved.
const EXIT_NOT_SAVED: i32 = 4;

fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal ends the process at once.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop));
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    stop
}

fn print_out(s: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (iolab run | head) is a normal end.
    let _ = out.write_all(s.as_bytes()).and_then(|_| out.flush());
}

fn print_json(v: &impl serde::Serialize) {
    print_out(&format!(
        "{}\n",
        serde_json::to_string_pretty(v).expect("json")
    ));
}

fn open_store(db: &cli::DbArgs) -> Result<Store, Error> {
    Store::open(&store::resolve_path(db.db.as_deref()))
}

fn open_store_write(db: &cli::DbArgs) -> Result<Store, Error> {
    Store::open_write(&store::resolve_path(db.db.as_deref()))
}

fn env_target(a: &cli::EnvArgs) -> Result<(iolab::system::env::Roots, std::path::PathBuf), Error> {
    let path = a.path.clone().unwrap_or_else(|| ".".into());
    if !path.exists() {
        return Err(Error::usage(format!(
            "{}: no such file or directory",
            path.display()
        )));
    }
    let roots = match &a.root {
        Some(r) => iolab::system::env::Roots::fixture(r),
        None => iolab::system::env::Roots::live(),
    };
    Ok((roots, path))
}

fn cmd_db(a: &cli::DbRunArgs) -> Result<i32, Error> {
    use iolab::workloads::db;
    let test: db::Test = a
        .test
        .parse()
        .map_err(|e: String| Error::usage(format!("--test: {e}")))?;
    for (v, name) in [
        (a.threads as u64, "--threads"),
        (a.tables as u64, "--tables"),
        (a.table_size, "--table-size"),
        (a.iterations, "--iterations"),
    ] {
        if v == 0 {
            return Err(Error::usage(format!("{name} must be at least 1")));
        }
    }
    if a.transactions == Some(0) {
        return Err(Error::usage("--transactions must be at least 1"));
    }
    if let Some(t) = a.time
        && !(t > 0.0 && t.is_finite())
    {
        return Err(Error::usage("--time must be a positive number of seconds"));
    }
    let trx = match (a.autocommit, a.trx.as_deref()) {
        (true, _) => "auto",
        (false, Some("auto")) => "auto",
        (false, Some("explicit")) => "explicit",
        (false, Some(other)) => {
            return Err(Error::usage(format!(
                "--trx '{other}': use explicit or auto"
            )));
        }
        (false, None) => {
            if test == db::Test::ReadWrite {
                "explicit"
            } else {
                "auto"
            }
        }
    };
    let so = db::SqliteOpts {
        journal_mode: a.journal_mode.to_lowercase(),
        synchronous: a.synchronous.to_lowercase(),
        page_size: a.page_size,
    };
    if !["delete", "truncate", "persist", "wal", "memory", "off"]
        .contains(&so.journal_mode.as_str())
    {
        return Err(Error::usage(format!(
            "--journal-mode '{}': use delete, truncate, persist, wal, memory or off",
            a.journal_mode
        )));
    }
    if !["off", "normal", "full", "extra"].contains(&so.synchronous.as_str()) {
        return Err(Error::usage(format!(
            "--synchronous '{}': use off, normal, full or extra",
            a.synchronous
        )));
    }
    let url = match &a.url {
        Some(u) => u.clone(),
        None => {
            cli::check_dir(&a.dir, a.dir == Path::new(cli::DEFAULT_DIR))?;
            let abs = std::fs::canonicalize(&a.dir)
                .map_err(|e| Error::usage(format!("--dir {}: {e}", a.dir.display())))?;
            format!("sqlite://{}", abs.join("iolab.db").display())
        }
    };
    let target = db::Target::parse(&url)?;
    let tags = cli::parse_tags(&a.tags)?;
    let mut store = if a.no_save || a.action != "run" {
        None
    } else {
        Some(open_store_write(&a.db)?)
    };
    let stop = stop_flag();
    let mut conn = db::connect(&target, &so)?;
    match a.action.as_str() {
        "cleanup" => {
            let n = db::cleanup(conn.as_mut(), target.backend, a.tables)?;
            print_out(&format!(
                "dropped {n} iolab tables from {}\n",
                db::redact(&target.url)
            ));
            return Ok(0);
        }
        "prepare" => {
            let p = db::prepare(
                conn.as_mut(),
                target.backend,
                a.tables,
                a.table_size,
                a.quiet || a.json,
                &stop,
            )?;
            print_out(&if p.reused {
                format!(
                    "{} tables of {} rows are already there (reused)\n",
                    a.tables, a.table_size
                )
            } else {
                format!(
                    "loaded {} rows into {} tables in {:.1} s\n",
                    p.rows_loaded, a.tables, p.seconds
                )
            });
            return Ok(0);
        }
        _ => {}
    }
    let settings = db::settings(conn.as_mut(), target.backend);
    let system = db::data_dir(&target, &settings)
        .map(|d| iolab::system::env::collect(&iolab::system::env::Roots::live(), Some(&d)));
    let devices = system
        .as_ref()
        .map(iolab::measure::iostat::stack_devices)
        .unwrap_or_default();
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 & ((1 << 53) - 1))
            .unwrap_or(1)
    });
    let job = db::DbJob {
        test,
        backend: target.backend,
        url: db::redact(&target.url),
        threads: if test == db::Test::UpdateLoop {
            1
        } else {
            a.threads
        },
        tables: a.tables,
        table_size: a.table_size,
        trx: if test == db::Test::UpdateLoop {
            "auto".into()
        } else {
            trx.into()
        },
        time_s: if a.transactions.is_some() {
            None
        } else {
            Some(a.time.unwrap_or(10.0))
        },
        transactions: a.transactions,
        iterations: a.iterations,
        seed,
        sqlite: (target.backend == db::Backend::Sqlite).then(|| so.clone()),
    };
    let now = || chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut doc = db::DbDoc {
        schema: db::DB_SCHEMA.into(),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        start_time: now(),
        end_time: String::new(),
        label: a.label.clone(),
        tags,
        test: test.name().into(),
        backend: target.backend.name().into(),
        job: job.clone(),
        settings,
        duration_s: 0.0,
        tps: 0.0,
        qps: 0.0,
        transactions: 0,
        queries: 0,
        errors: 0,
        error_messages: Default::default(),
        retries: 0,
        reconnects: 0,
        types: Default::default(),
        timeseries: Vec::new(),
        update_loop: None,
        device: None,
        system,
        warnings: Vec::new(),
        interrupted: false,
        hist: None,
    };
    let interval = std::time::Duration::from_secs(1);
    if test == db::Test::UpdateLoop {
        drop(conn);
        let (r, dev) = iolab::measure::iostat::with_sampler(&devices, interval, || {
            db::update_loop(&target, &so, a.iterations, &stop)
        });
        let (u, h) = r?;
        doc.device = dev;
        doc.duration_s = u.benchmark_loop_s;
        doc.transactions = u.iterations;
        doc.queries = u.iterations;
        doc.tps = u.iterations as f64 / u.benchmark_loop_s.max(1e-9);
        doc.qps = doc.tps;
        doc.types.insert(
            "update".into(),
            db::TypeResult {
                transactions: u.iterations,
                tps: doc.tps,
                lat_ns: db::lat_of(&h),
            },
        );
        doc.hist = Some(h);
        doc.update_loop = Some(u);
    } else {
        db::prepare(
            conn.as_mut(),
            target.backend,
            a.tables,
            a.table_size,
            a.quiet || a.json,
            &stop,
        )?;
        drop(conn);
        let (r, dev) = iolab::measure::iostat::with_sampler(&devices, interval, || {
            db::run_oltp(&target, &job, &stop)
        });
        let (dur, outs) = r?;
        db::merge_into(&mut doc, outs, dur);
        doc.device = dev;
    }
    doc.end_time = now();
    doc.interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    doc.warnings = db::warnings(&doc);
    let json = serde_json::to_value(&doc).expect("json");
    let saved = store.as_mut().map(|s| {
        s.save_db(&doc, &json, &fsinfo::hostname())
            .map(|id| (id, s.path.clone()))
    });
    if a.json {
        print_json(&json);
    } else {
        print_out(&db::render(&doc));
    }
    match saved {
        Some(Ok((id, p))) => eprintln!("saved as run {id} in {}", p.display()),
        Some(Err(e)) => {
            eprintln!("iolab: error: the results above were not saved: {}", e.msg);
            return Ok(EXIT_NOT_SAVED);
        }
        None => {}
    }
    Ok(if doc.interrupted {
        Exit::Interrupted as i32
    } else if doc.errors > 0 {
        EXIT_IO_ERRORS
    } else {
        0
    })
}

fn cmd_sweep(a: &cli::SweepArgs) -> Result<i32, Error> {
    use iolab::workloads::sweep;
    let mut store = open_store_write(&a.db)?;
    let stop = stop_flag();
    let (gid, spec) = if let Some(r) = &a.resume {
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
        if !a.run_args.is_empty() {
            return Err(Error::usage(
                "--resume: give no other run options; the sweep's own are used",
            ));
        }
        (g, spec)
    } else {
        if a.repeat == 0 {
            return Err(Error::usage("--repeat must be at least 1"));
        }
        if a.run_args.iter().any(|x| x == "--no-save") {
            return Err(Error::usage(
                "--no-save: a sweep is stored as one experiment (it is what makes --resume possible)",
            ));
        }
        if a.run_args
            .iter()
            .any(|x| x == "--repeat" || x.starts_with("--repeat="))
        {
            return Err(Error::usage(
                "--repeat: give it to the sweep once (runs per cell)",
            ));
        }
        let (fixed, mut axes) = sweep::split_axes(&cli::RunParser, &a.run_args)?;
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
            let probe = cli::RunParser.plan(&fixed)?;
            let env = iolab::system::env::collect(
                &iolab::system::env::Roots::live(),
                Some(&probe.fileset.dir),
            );
            let devs: Vec<String> = env
                .path
                .as_ref()
                .map(|p| p.physical_disks.clone())
                .unwrap_or_default();
            if probe.created_dir {
                let _ = std::fs::remove_dir(&probe.fileset.dir);
            }
            if devs.is_empty() {
                return Err(Error::usage(format!(
                    "--scheduler/--read-ahead/--nr-requests: no block device under {}",
                    probe.fileset.dir.display()
                )));
            }
            sweep::check_tuning(&mut axes, &devs)?;
        }
        sweep::check_cells(&cli::RunParser, &fixed, &axes)?;
        let spec = sweep::SweepSpec {
            fixed,
            axes,
            repeat: a.repeat,
            rows: a.rows.clone(),
            cols: a.cols.clone(),
            metric: a.metric.clone(),
        };
        let g = store.new_experiment(
            "sweep",
            a.label.as_deref(),
            a.repeat,
            &serde_json::to_value(&spec).expect("json"),
        )?;
        eprintln!(
            "sweep stored as group g{g} ({} cells x {} runs); resume with: iolab sweep --resume g{g}",
            sweep::cross(&spec.axes).len(),
            spec.repeat
        );
        (g, spec)
    };
    finish_sweep(&mut store, gid, &spec, a.json, &stop)
}

/// Runs a stored sweep and prints its matrix (or JSON).
fn finish_sweep(
    store: &mut Store,
    gid: i64,
    spec: &iolab::workloads::sweep::SweepSpec,
    json: bool,
    stop: &AtomicBool,
) -> Result<i32, Error> {
    use iolab::workloads::sweep;
    let cells = sweep::run_sweep(&cli::RunParser, store, gid, spec, stop, json)?;
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    if json {
        print_json(
            &serde_json::json!({"schema": "iolab-sweep/1", "group": format!("g{gid}"), "axes": spec.axes, "metric": spec.metric, "cells": cells, "interrupted": interrupted}),
        );
    } else {
        print_out(&sweep::render_matrix(spec, &cells));
        if interrupted {
            print_out(&format!(
                "interrupted: finished cells are kept; continue with: iolab sweep --resume g{gid}\n"
            ));
        }
    }
    Ok(if interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

fn cmd_sysbench_fileio(a: &cli::SbFileioArgs) -> Result<i32, Error> {
    use iolab::workloads::sweep;
    if a.scale == 0 {
        return Err(Error::usage("--scale must be at least 1"));
    }
    let gib = 1u64 << 30;
    let sizes: Vec<String> = [1, 4, 16]
        .iter()
        .map(|g| iolab::model::units::Bytes(g * gib / a.scale / (1 << 20) * (1 << 20)).to_string())
        .collect();
    let fixed: Vec<String> = [
        "--dir",
        &a.dir.display().to_string(),
        "--files",
        "64",
        "--bs",
        "16k",
        "--direct",
        "--engine",
        &a.engine,
        "--time",
        &a.time.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(
        a.label
            .iter()
            .flat_map(|l| ["--label".to_string(), l.clone()]),
    )
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
        a.label.as_deref().or(Some("sysbench-fileio")),
        spec.repeat,
        &serde_json::to_value(&spec).expect("json"),
    )?;
    eprintln!(
        "sysbench-fileio suite stored as group g{gid} ({} cells); resume with: iolab sweep --resume g{gid}",
        sweep::cross(&spec.axes).len()
    );
    let stop = stop_flag();
    finish_sweep(&mut store, gid, &spec, a.json, &stop)
}

fn cmd_saturate(a: &cli::SaturateArgs) -> Result<i32, Error> {
    use iolab::workloads::sweep;
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
        iolab::model::units::parse_size(s).map_err(|e| Error::usage(format!("--over: {e}")))
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
    if a.run_args.iter().any(|x| x == "--no-save") {
        return Err(Error::usage(
            "--no-save: every step of a saturation search is stored",
        ));
    }
    let (fixed, axes) = sweep::split_axes(&cli::RunParser, &a.run_args)?;
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
    let mut store = open_store_write(&a.db)?;
    let spec = sweep::SaturateSpec {
        fixed,
        axis: axis.into(),
        lo,
        hi,
        step,
        max_steps: a.max_steps.max(2),
        target,
    };
    // validate the run options once before measuring anything
    let mut probe_cell = std::collections::BTreeMap::new();
    probe_cell.insert(spec.axis.clone(), lo.to_string());
    let probe = cli::RunParser.plan(&sweep::cell_args(&spec.fixed, &probe_cell))?;
    if probe.created_dir {
        let _ = std::fs::remove_dir(&probe.fileset.dir);
    }
    let gid = store.new_experiment(
        "saturate",
        a.label.as_deref(),
        1,
        &serde_json::to_value(&spec).expect("json"),
    )?;
    let stop = stop_flag();
    let points = sweep::saturate(&cli::RunParser, &mut store, gid, &spec, &stop, a.json)?;
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    let last_pass = points.iter().filter(|p| p.passed).map(|p| p.value).max();
    let first_fail = points.iter().filter(|p| !p.passed).map(|p| p.value).min();
    if a.json {
        print_json(
            &serde_json::json!({"schema": "iolab-saturate/1", "group": format!("g{gid}"), "spec": spec, "points": points, "last_pass": last_pass, "first_fail": first_fail, "interrupted": interrupted}),
        );
    } else {
        print_out(&sweep::render_saturate(&spec, &points));
    }
    eprintln!("stored as group g{gid}");
    Ok(if interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

fn write_side_file(p: &Option<std::path::PathBuf>, text: &str) -> Result<(), Error> {
    if let Some(p) = p {
        write_atomically(p, text.as_bytes(), "--csv")?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

/// Stores a suite or zones result unless --no-save; says where.
fn save_suite(
    db: &cli::DbArgs,
    no_save: bool,
    name: &str,
    doc: &serde_json::Value,
    dir: Option<&Path>,
) -> Result<(), Error> {
    if no_save {
        return Ok(());
    }
    let mut s = open_store_write(db)?;
    let system =
        dir.map(|d| iolab::system::env::collect(&iolab::system::env::Roots::live(), Some(d)));
    let id = s.save_suite(name, doc, &fsinfo::hostname(), system.as_ref())?;
    eprintln!("saved as run {id} in {}", s.path.display());
    Ok(())
}

fn suite_dir(dir: &Path) -> Result<bool, Error> {
    cli::check_dir(dir, dir == Path::new(cli::DEFAULT_DIR))
}

fn cmd_iozone(a: &cli::IozoneArgs) -> Result<i32, Error> {
    use iolab::workloads::suites;
    let created = suite_dir(&a.dir)?;
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
    let bar = iolab::engine::fileset::progress_bar(1, a.quiet || a.json, "iozone");
    let r = suites::iozone(&o, &stop, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    if created {
        let _ = std::fs::remove_dir(&a.dir);
    }
    let r = r?;
    if a.json {
        print_json(&r);
    } else {
        print_out(&suites::iozone_table(&r));
    }
    write_side_file(&a.csv, &suites::iozone_csv(&r))?;
    save_suite(
        &a.db,
        a.no_save,
        "iozone",
        &serde_json::to_value(&r).expect("json"),
        Some(&a.dir),
    )?;
    Ok(if r.interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

fn cmd_bonnie(a: &cli::BonnieArgs) -> Result<i32, Error> {
    use iolab::workloads::suites;
    let created = suite_dir(&a.dir)?;
    let mut o = suites::BonnieOpts {
        dir: a.dir.clone(),
        chunk: a.chunk,
        files: a.files,
        seeks: a.seeks,
        ..Default::default()
    };
    if let Some(s) = a.size {
        o.size = s;
    }
    let stop = stop_flag();
    let r = suites::bonnie(&o, &stop);
    if created {
        let _ = std::fs::remove_dir(&a.dir);
    }
    let r = r?;
    if a.json {
        print_json(&r);
    } else {
        print_out(&suites::bonnie_table(&r));
        print_out(&suites::bonnie_csv(&r));
    }
    write_side_file(&a.csv, &suites::bonnie_csv(&r))?;
    save_suite(
        &a.db,
        a.no_save,
        "bonnie",
        &serde_json::to_value(&r).expect("json"),
        Some(&a.dir),
    )?;
    Ok(if r.interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

fn cmd_zones(a: &cli::ZonesArgs) -> Result<i32, Error> {
    let stop = stop_flag();
    let r = iolab::workloads::zones::zones(&a.target, a.zones, a.per_zone, a.bs, &stop)?;
    if a.json {
        print_json(&r);
    } else {
        print_out(&iolab::workloads::zones::zones_table(&r));
    }
    save_suite(
        &a.db,
        a.no_save,
        "zones",
        &serde_json::to_value(&r).expect("json"),
        None,
    )?;
    Ok(if r.interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}

/// Writes a whole file or nothing: a temporary file beside it, then a rename.
fn write_atomically(p: &Path, bytes: &[u8], flag: &str) -> Result<(), Error> {
    let tmp = p.with_extension("iolab-tmp");
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, p))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::usage(format!("{flag} {}: {e}", p.display()))
        })
}

fn cmd_iostat(a: &cli::IostatArgs) -> Result<i32, Error> {
    use iolab::measure::iostat;
    if !(a.interval >= 0.05 && a.interval.is_finite()) {
        return Err(Error::usage("--interval must be at least 0.05 seconds"));
    }
    let proc_root = Path::new("/proc");
    let all = iostat::read_diskstats(proc_root);
    let devices: Vec<String> = if a.devices.is_empty() {
        all.iter()
            .filter(|(_, d)| d.rd_ios + d.wr_ios > 0)
            .map(|(k, _)| k.clone())
            .collect()
    } else {
        let mut v = Vec::new();
        for d in &a.devices {
            let n = d.trim_start_matches("/dev/").to_string();
            if !all.contains_key(&n) {
                let known: Vec<&String> = all.keys().collect();
                return Err(Error::usage(format!(
                    "{d}: no such block device in /proc/diskstats (known: {})",
                    known
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            v.push(n);
        }
        v
    };
    let stop = stop_flag();
    let interval = std::time::Duration::from_secs_f64(a.interval);
    let mut prev = iostat::reading(proc_root, &devices);
    let t0 = prev.at;
    let mut n = 0u64;
    while a.count.is_none_or(|c| n < c) {
        let next = prev.at + interval;
        while std::time::Instant::now() < next {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(0);
            }
            std::thread::sleep(
                (next - std::time::Instant::now()).min(std::time::Duration::from_millis(50)),
            );
        }
        let cur = iostat::reading(proc_root, &devices);
        let s = iostat::between(&prev, &cur, t0);
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        if a.json {
            let v = serde_json::json!({"schema": "iolab-iostat/1", "time": now, "t_s": s.t_s, "interval_s": s.dur_s, "cpu": s.cpu, "devices": s.devices});
            print_out(&format!("{}\n", serde_json::to_string(&v).expect("json")));
        } else {
            print_out(&iolab::output::table::iostat_text(&now, &s, &devices));
        }
        prev = cur;
        n += 1;
    }
    Ok(0)
}

fn cmd_run(a: &cli::RunArgs) -> Result<i32, Error> {
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
            if a.json {
                print_json(&json);
            } else {
                print_out(&report::render(&doc));
            }
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
            worst = EXIT_IO_ERRORS;
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
                    .collect::<Result<_, _>>()?;
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
        return Ok(EXIT_NOT_SAVED);
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

fn real_main() -> Result<i32, Error> {
    let cli = match Cli::try_parse_from(cli::presplit(std::env::args().collect())) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind as K;
            if matches!(
                e.kind(),
                K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return Ok(if e.kind() == K::DisplayHelpOnMissingArgumentOrSubcommand {
                    Exit::Usage as i32
                } else {
                    0
                });
            }
            let msg = e.to_string();
            let line = msg
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            return Err(Error::usage(line.to_string()));
        }
    };
    match cli.cmd {
        Cmd::Run(a) => cmd_run(&a),
        Cmd::Prepare(a) => {
            let is_default = a.set.dir == Path::new(cli::DEFAULT_DIR);
            cli::check_dir(&a.set.dir, is_default)?;
            let probe = cli::Probe::create(&a.set.dir)?;
            let dio = fsinfo::dio_align(Path::new("/sys"), &probe.0);
            if a.direct && !probe.direct_ok() {
                return Err(Error::usage(format!(
                    "--direct: the filesystem at {} does not support O_DIRECT",
                    a.set.dir.display()
                )));
            }
            drop(probe);
            let bs = a.set.bs.unwrap_or(16384);
            if a.direct && bs % dio.offset != 0 {
                return Err(Error::usage(format!(
                    "--bs {bs} is not a multiple of {} bytes, the O_DIRECT alignment",
                    dio.offset
                )));
            }
            let spec = cli::fileset_spec(&a.set, bs)?;
            let stop = stop_flag();
            let r = fileset::prepare(&spec, a.direct, dio.mem, &stop, a.quiet)?;
            let res = fileset::evict(&spec)
                .map_err(|e| Error::failed(format!("evicting the file set: {e}")))?;
            print_out(&format!(
                "prepared {} files of {} in {} ({} written in {:.1} s, {} reused); page cache after eviction: {:.1}% resident\n",
                spec.files,
                iolab::model::units::Bytes(spec.file_size_bytes),
                spec.dir.display(),
                iolab::model::units::human_bytes(r.written_bytes as f64),
                r.seconds,
                r.reused_files,
                res.pct()
            ));
            if res.pct() > iolab::measure::truth::EVICT_FAIL_PCT {
                eprintln!(
                    "warning [eviction_failed]: {:.1}% of the file set is still in the page cache after fsync + POSIX_FADV_DONTNEED",
                    res.pct()
                );
            }
            Ok(0)
        }
        Cmd::Cleanup(a) => {
            cli::check_dir(&a.dir, false)?;
            let n = fileset::cleanup_dir(&a.dir);
            print_out(&format!("removed {n} files from {}\n", a.dir.display()));
            Ok(0)
        }
        Cmd::Env(a) => {
            let (roots, path) = env_target(&a)?;
            let e = iolab::system::env::collect(&roots, Some(&path));
            if a.json {
                print_json(&e);
            } else {
                print_out(&iolab::system::env::render(&e));
            }
            Ok(0)
        }
        Cmd::Check(a) => {
            let (roots, path) = env_target(&a)?;
            let e = iolab::system::env::collect(&roots, Some(&path));
            let findings = iolab::system::check::check(&e);
            if a.json {
                print_json(
                    &serde_json::json!({"schema": iolab::system::check::CHECK_SCHEMA, "path": e.path.as_ref().map(|p| p.path.clone()), "findings": findings}),
                );
            } else {
                print_out(&iolab::system::check::render(
                    &path.display().to_string(),
                    &findings,
                ));
            }
            Ok(if iolab::system::check::has_warnings(&findings) {
                1
            } else {
                0
            })
        }
        Cmd::Iostat(a) => cmd_iostat(&a),
        Cmd::FsyncProbe(a) => {
            let dir = a.path.clone().unwrap_or_else(|| ".".into());
            if !dir.is_dir() {
                return Err(Error::usage(format!("{}: not a directory", dir.display())));
            }
            if a.count == 0 {
                return Err(Error::usage("--count must be at least 1"));
            }
            let env = iolab::system::env::collect(&iolab::system::env::Roots::live(), Some(&dir));
            let stop = stop_flag();
            let r = iolab::system::fsyncprobe::run(&dir, &env, a.count, a.writers, &stop)?;
            if a.json {
                print_json(&r);
            } else {
                print_out(&iolab::system::fsyncprobe::render(&r));
            }
            Ok(if r.interrupted {
                Exit::Interrupted as i32
            } else {
                0
            })
        }
        Cmd::Db(a) => cmd_db(&a),
        Cmd::Sweep(a) => cmd_sweep(&a),
        Cmd::Saturate(a) => cmd_saturate(&a),
        Cmd::Suite(a) => match &a.which {
            cli::SuiteCmd::SysbenchFileio(x) => cmd_sysbench_fileio(x),
            cli::SuiteCmd::Iozone(x) => cmd_iozone(x),
            cli::SuiteCmd::Bonnie(x) => cmd_bonnie(x),
        },
        Cmd::Zones(a) => cmd_zones(&a),
        Cmd::Report(a) => {
            let s = open_store(&a.db)?;
            let refs = cli::parse_refs(&a.ids)?;
            let html = iolab::output::html::html(&s, &refs)?;
            write_atomically(&a.output, html.as_bytes(), "--output")?;
            eprintln!("wrote {}", a.output.display());
            Ok(0)
        }
        Cmd::Plot(a) => {
            let s = open_store(&a.db)?;
            let refs = cli::parse_refs(&a.ids)?;
            let charts = iolab::output::html::charts_for(&s, &refs)?;
            if a.list {
                for c in &charts {
                    print_out(&format!("{:<22} {}\n", c.name, c.title));
                }
                return Ok(0);
            }
            let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
            let name = a.chart.as_deref().ok_or_else(|| {
                Error::usage(format!("--chart: name one of {}", names.join(", ")))
            })?;
            let c = charts.iter().find(|c| c.name == name).ok_or_else(|| {
                Error::usage(format!(
                    "--chart {name}: not a chart of {}; use one of {}",
                    a.ids.join(" "),
                    names.join(", ")
                ))
            })?;
            if !(100..=10000).contains(&a.width) || !(100..=10000).contains(&a.height) {
                return Err(Error::usage("--width/--height: use 100 to 10000 pixels"));
            }
            let out = a
                .output
                .clone()
                .unwrap_or_else(|| format!("{name}.svg").into());
            let svg = c.svg(a.width, a.height);
            let bytes = match out.extension().and_then(|e| e.to_str()) {
                Some("svg") => svg.into_bytes(),
                Some("png") => iolab::output::charts::png(&svg)
                    .map_err(|e| Error::failed(format!("png: {e}")))?,
                _ => {
                    return Err(Error::usage(format!(
                        "--output {}: use a .svg or .png file name",
                        out.display()
                    )));
                }
            };
            write_atomically(&out, &bytes, "--output")?;
            eprintln!("wrote {}", out.display());
            Ok(0)
        }
        Cmd::List(a) => {
            let s = open_store(&a.db)?;
            let f = store::Filter {
                label: a.label.clone(),
                tags: cli::parse_tags(&a.tags)?.into_iter().collect(),
                mode: a.mode.clone(),
                host: a.host.clone(),
                since: a.since.as_deref().map(cli::parse_since).transpose()?,
                limit: Some(a.limit),
            };
            let rows = s.list(&f)?;
            if a.json {
                print_json(&serde_json::json!({"schema": "iolab-list/1", "runs": rows}));
            } else {
                print_out(&history::render_list(&s, &rows)?);
            }
            Ok(0)
        }
        Cmd::Show(a) => {
            let s = open_store(&a.db)?;
            let r: store::Ref = a.id.parse().map_err(Error::usage)?;
            match r {
                store::Ref::Run(id) => {
                    if a.json {
                        s.run(id)?;
                        print_json(&s.doc(id)?);
                    } else {
                        print_out(&history::render_show(&s, id)?);
                    }
                }
                store::Ref::Group(g)
                    if matches!(s.experiment(g)?.0.as_str(), "sweep" | "saturate") =>
                {
                    let (kind, spec) = s.experiment(g)?;
                    let spec = spec.ok_or_else(|| {
                        Error::failed(format!("group g{g}: its definition is missing"))
                    })?;
                    if kind == "sweep" {
                        let spec: iolab::workloads::sweep::SweepSpec = serde_json::from_value(spec)
                            .map_err(|e| Error::failed(format!("g{g}: {e}")))?;
                        let cells = iolab::workloads::sweep::stored_cells(&s, g, &spec)?;
                        if a.json {
                            print_json(
                                &serde_json::json!({"schema": "iolab-sweep/1", "group": format!("g{g}"), "axes": spec.axes, "metric": spec.metric, "cells": cells}),
                            );
                        } else {
                            print_out(&iolab::workloads::sweep::render_matrix(&spec, &cells));
                        }
                    } else {
                        let spec: iolab::workloads::sweep::SaturateSpec =
                            serde_json::from_value(spec)
                                .map_err(|e| Error::failed(format!("g{g}: {e}")))?;
                        let points = iolab::workloads::sweep::stored_points(&s, g, &spec)?;
                        if a.json {
                            print_json(
                                &serde_json::json!({"schema": "iolab-saturate/1", "group": format!("g{g}"), "spec": spec, "points": points}),
                            );
                        } else {
                            print_out(&iolab::workloads::sweep::render_saturate(&spec, &points));
                        }
                    }
                }
                store::Ref::Group(g) => {
                    let ids = s.group_runs(g)?;
                    let rows = history::group_summary(&s, &ids)?;
                    if a.json {
                        print_json(
                            &serde_json::json!({"schema": "iolab-group/1", "group": format!("g{g}"), "run_ids": ids, "summary": rows}),
                        );
                    } else {
                        print_out(&format!(
                            "group g{g}: runs {}\n",
                            ids.iter()
                                .map(|i| i.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                        print_out(&history::render_summary(&rows, ids.len()));
                    }
                }
            }
            Ok(0)
        }
        Cmd::Delete(a) => {
            let mut s = open_store_write(&a.db)?;
            let refs = cli::parse_refs(&a.ids)?;
            // Check them all first: nothing is deleted when one id is unknown.
            let mut ids = Vec::new();
            for r in &refs {
                ids.extend(s.resolve(*r)?);
            }
            for id in &ids {
                s.delete(*id)?;
            }
            print_out(&format!(
                "deleted {} run{}\n",
                ids.len(),
                if ids.len() == 1 { "" } else { "s" }
            ));
            Ok(0)
        }
        Cmd::Compare(a) => {
            let s = open_store(&a.db)?;
            let refs = cli::parse_refs(&a.ids)?;
            let c = compare::compare(&s, &refs)?;
            if a.json {
                print_json(&c);
            } else {
                print_out(&history::render_compare(&c));
            }
            Ok(0)
        }
        Cmd::Export(a) => {
            let s = open_store(&a.db)?;
            let mut ids = Vec::new();
            for r in cli::parse_refs(&a.ids)? {
                ids.extend(s.resolve(r)?);
            }
            let mut buf: Vec<u8> = Vec::new();
            match a.format.as_str() {
                "json" => {
                    buf = format!(
                        "{}\n",
                        serde_json::to_string_pretty(&history::export_json(&s, &ids)?)
                            .expect("json")
                    )
                    .into_bytes()
                }
                "csv" => history::export_csv(&s, &ids, &mut buf)?,
                other => return Err(Error::usage(format!("--format '{other}': use json or csv"))),
            }
            match &a.output {
                // Written whole to a temporary file, then renamed: never half a file.
                Some(p) => {
                    let tmp = p.with_extension("iolab-tmp");
                    std::fs::write(&tmp, &buf)
                        .and_then(|_| std::fs::rename(&tmp, p))
                        .map_err(|e| {
                            let _ = std::fs::remove_file(&tmp);
                            Error::failed(format!("--output {}: {e}", p.display()))
                        })?;
                    eprintln!("exported {} runs to {}", ids.len(), p.display());
                }
                None => print_out(&String::from_utf8_lossy(&buf)),
            }
            Ok(0)
        }
        Cmd::Import(a) => {
            let mut s = open_store_write(&a.db)?;
            let tags = cli::parse_tags(&a.tags)?;
            let host = a.host.clone().unwrap_or_else(fsinfo::hostname);
            // Parse everything first: nothing is imported when one file is bad.
            let mut parsed = Vec::new();
            for f in &a.files {
                let text = if f.as_os_str() == "-" {
                    let mut t = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
                        .map_err(|e| Error::usage(format!("stdin: {e}")))?;
                    t
                } else {
                    std::fs::read_to_string(f)
                        .map_err(|e| Error::usage(format!("{}: {e}", f.display())))?
                };
                let imp = iolab::store::import::parse(&text)
                    .map_err(|e| Error::usage(format!("{}: {e}", f.display())))?;
                parsed.push((f.clone(), imp));
            }
            for (f, imp) in parsed {
                let doc = serde_json::json!({"schema": "iolab-import/1", "tool": imp.tool, "tool_version": imp.tool_version, "start_time": imp.start_time, "source_file": f, "options": imp.options, "cells": imp.cells});
                let id = s.save_import(&imp, &doc, &host, a.label.as_deref(), &tags)?;
                print_out(&format!(
                    "imported {} as run {id} ({} {}, {} job{})\n",
                    f.display(),
                    imp.tool,
                    imp.tool_version,
                    imp.cells.len(),
                    if imp.cells.len() == 1 { "" } else { "s" }
                ));
            }
            Ok(0)
        }
    }
}

fn main() {
    // Settings a killed iolab left switched (scheduler, read-ahead) are put back first.
    for line in iolab::system::tuning::replay_pending() {
        eprintln!("iolab: {line}");
    }
    let code = match real_main() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("iolab: error: {e}");
            e.exit as i32
        }
    };
    std::process::exit(code);
}
