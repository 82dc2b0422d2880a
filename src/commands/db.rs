use super::*;

use crate::workloads::db;

/// What `iolab db` has set up before it prepares or measures: the checked options, the target,
/// the open connection and (when saving) the store.
struct Begin {
    test: db::Test,
    trx: &'static str,
    so: db::SqliteOpts,
    target: db::Target,
    tags: std::collections::BTreeMap<String, String>,
    store: Option<Store>,
    conn: Box<dyn db::Conn + Send>,
    sqlite_file: Option<std::path::PathBuf>,
}

pub fn cmd_db(a: &cli::DbRunArgs) -> Result<i32> {
    if let Some(ranks) = crate::dist::join()? {
        return cmd_db_dist(a, &ranks);
    }
    let Some(mut b) = begin(a, a.action == "run" && !a.no_save)? else {
        return Ok(0);
    };
    let stop = stop_flag();
    match a.action.as_str() {
        "cleanup" => {
            let n = db::cleanup(b.conn.as_mut(), b.target.backend, a.tables)?;
            let mut msg = format!(
                "dropped {n} iolab tables from {}\n",
                db::redact(&b.target.url)
            );
            if let Some(p) = &b.sqlite_file
                && db::sqlite_is_ours_and_empty(b.conn.as_mut())
            {
                drop(b.conn);
                for f in db::remove_sqlite_files(p)? {
                    msg.push_str(&format!("removed {}\n", f.display()));
                }
            }
            print_out(&msg);
            return Ok(0);
        }
        "prepare" => {
            let p = db::prepare(
                b.conn.as_mut(),
                b.target.backend,
                a.tables,
                a.table_size,
                a.quiet.quiet || a.print.json,
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
    let (job, doc, devices) = measure_setup(a, &mut b);
    if b.test != db::Test::UpdateLoop {
        prepare_tables(a, &mut b, &stop)?;
    }
    let Begin {
        target,
        so,
        store,
        conn,
        ..
    } = b;
    drop(conn);
    let doc = measure(a, &target, &so, &job, doc, &devices, &stop, None)?;
    save_and_print(a, store, doc, false)
}

/// Checks the options, opens the store (`save`) and connects. None: `cleanup` of an SQLite
/// database that is not there (said on stdout; opening it would create it).
fn begin(a: &cli::DbRunArgs, save: bool) -> Result<Option<Begin>> {
    let test: db::Test = a
        .test
        .parse()
        .map_err(|e: String| Error::usage(format!("--test: {e}")))?;
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
    let tags = cli::parse_tags(&a.tag.tags)?;
    let store = if save {
        Some(open_store_write(&a.db)?)
    } else {
        None
    };
    let sqlite_file = target.sqlite_path.clone();
    if a.action == "cleanup"
        && let Some(p) = &sqlite_file
        && !p.exists()
    {
        print_out(&format!(
            "no SQLite database at {}: nothing to clean up\n",
            p.display()
        ));
        return Ok(None);
    }
    let created = sqlite_file.as_ref().is_some_and(|p| !p.exists());
    // The first connection, before anything runs: a server that cannot be reached (or refuses
    // these credentials) is bad input, as for a PostgreSQL results store (exit 2).
    let mut conn = db::connect(&target, &so).map_err(|e| Error::usage(e.msg))?;
    if created {
        db::mark_created(conn.as_mut())?;
    }
    Ok(Some(Begin {
        test,
        trx,
        so,
        target,
        tags,
        store,
        conn,
        sqlite_file,
    }))
}

/// The job and the document's skeleton (settings, env snapshot of the data directory) and the
/// devices to sample.
fn measure_setup(a: &cli::DbRunArgs, b: &mut Begin) -> (db::DbJob, db::DbDoc, Vec<String>) {
    let (test, trx, target, so) = (b.test, b.trx, &b.target, &b.so);
    let conn = &mut b.conn;
    let settings = db::settings(conn.as_mut(), target.backend);
    let system = db::data_dir(target, &settings)
        .map(|d| crate::system::env::collect(&crate::system::env::Roots::live(), Some(&d)));
    let devices = system
        .as_ref()
        .map(crate::measure::iostat::stack_devices)
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
    let doc = db::DbDoc {
        schema: crate::model::schema::DB.into(),
        doc_id: Some(crate::model::new_doc_id()),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        start_time: now(),
        end_time: String::new(),
        label: a.label.label.clone(),
        tags: b.tags.clone(),
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
        client_cpu_s: None,
        client_cpu_us_per_tx: None,
        types: Default::default(),
        timeseries: Vec::new(),
        update_loop: None,
        device: None,
        system,
        warnings: Vec::new(),
        interrupted: false,
        dist: None,
        hist: None,
    };
    (job, doc, devices)
}

/// Creates and loads the tables when they are not there (OLTP tests).
fn prepare_tables(a: &cli::DbRunArgs, b: &mut Begin, stop: &AtomicBool) -> Result<()> {
    db::prepare(
        b.conn.as_mut(),
        b.target.backend,
        a.tables,
        a.table_size,
        a.quiet.quiet || a.print.json,
        stop,
    )
    .map(|_| ())
}

/// Runs the test (the connection of the setup closed) with the device sampler beside it.
/// `watch`: a distributed run's side channel, given the connections' live counters.
#[allow(clippy::too_many_arguments)]
fn measure(
    a: &cli::DbRunArgs,
    target: &db::Target,
    so: &db::SqliteOpts,
    job: &db::DbJob,
    mut doc: db::DbDoc,
    devices: &[String],
    stop: &AtomicBool,
    watch: Option<db::Watch>,
) -> Result<db::DbDoc> {
    let interval = std::time::Duration::from_secs(1);
    let report = a.report_interval.map(std::time::Duration::from_secs_f64);
    if job.test == db::Test::UpdateLoop {
        let (r, dev) = crate::measure::iostat::with_sampler(
            &crate::system::env::Roots::live().proc,
            devices,
            interval,
            || db::update_loop(target, so, a.iterations, stop, report),
        );
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
        let (r, dev) = crate::measure::iostat::with_sampler(
            &crate::system::env::Roots::live().proc,
            devices,
            interval,
            || db::run_oltp(target, job, stop, report, watch),
        );
        let (dur, outs) = r?;
        db::merge_into(&mut doc, outs, dur);
        doc.device = dev;
    }
    doc.end_time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    doc.interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    doc.warnings = db::warnings(&doc);
    Ok(doc)
}

/// Saves (when a store is open), prints, and says the exit code. `early`: rank 0's watchdog
/// ended a distributed run (a rank died or hung): where it was saved is said before the results
/// are printed, as `mpirun`, ending the job, forwards only the first few KiB printed next.
fn save_and_print(
    a: &cli::DbRunArgs,
    mut store: Option<Store>,
    doc: db::DbDoc,
    early: bool,
) -> Result<i32> {
    let json = serde_json::to_value(&doc).expect("json");
    let saved = store.as_mut().map(|s| {
        s.save_db(&doc, &json, &fsinfo::hostname())
            .map(|id| (id, s.path.clone()))
            .map_err(|e| (e, s.path.clone()))
    });
    if early && let Some(Ok((id, p))) = &saved {
        eprintln!("saved as run {id} in {}", p.display());
    }
    emit(&doc, Format::json_if(a.print.json))?;
    match saved {
        Some(Ok(_)) if early => {}
        Some(Ok((id, p))) => eprintln!("saved as run {id} in {}", p.display()),
        Some(Err((e, path))) => {
            // Kept in a file, as `iolab run` does, so `iolab import` can save it later.
            eprintln!(
                "iolab: error: the results above were not saved: {}",
                kept_instead(&path, &e.msg, &json)
            );
            return Ok(Exit::NotSaved as i32);
        }
        None => {}
    }
    Ok(if doc.interrupted {
        Exit::Interrupted as i32
    } else if doc.errors > 0 {
        Exit::IoErrors as i32
    } else {
        0
    })
}

/// `mpirun -np N iolab db run ...` (docs/distributed.md): every rank is a client (of one server
/// given by `--url`, or of its own SQLite file in `--dir`/`--url` with `{rank}`/`{host}`); the
/// tables are prepared once (by rank 0 on a server, by each rank in its own SQLite file), every
/// rank learns whether all are ready, they start their transactions at one instant, and rank 0
/// merges TPS, latency (histograms added) and errors, prints and saves one run.
fn cmd_db_dist(a: &cli::DbRunArgs, ranks: &crate::dist::Ranks) -> Result<i32> {
    use crate::dist::{DbDone, Failed, substitute, substitute_str, unix_ns};
    let rank = ranks.rank();
    let mut a = a.clone();
    a.dir = substitute(&a.dir, rank, &ranks.host);
    a.url = a.url.map(|u| substitute_str(&u, rank, &ranks.host));
    let stop = stop_flag();
    ranks.watch_stop(std::sync::Arc::clone(&stop));
    ranks.set_rank_timeout(std::time::Duration::from_secs_f64(a.rank.rank_timeout));
    if rank == 0 {
        // A rank that dies or hangs: rank 0's watchdog ends the run (on its own thread: this
        // one may be waiting in a collective that never returns), prints and saves what the
        // other ranks measured, marked incomplete, as for a rank that failed on its own.
        let a0 = a.clone();
        ranks.on_db_fault(Box::new(move |outcomes, _| {
            let store = if a0.no_save {
                None
            } else {
                open_store_write(&a0.db)
                    .inspect_err(|e| {
                        eprintln!("iolab: error: the results below were not saved: {e}")
                    })
                    .ok()
            };
            end_output(finish_db_dist(&a0, outcomes, store, true))
        }));
    }
    let stopped = || Failed::from(&crate::engine::checkpoints::stopped());
    // Everything before the transactions, on every rank.
    let setup = if a.action != "run" {
        Err(Error::usage(format!(
            "iolab db {} is done once, not by {} ranks: run it without mpirun",
            a.action,
            ranks.size()
        )))
    } else {
        begin(&a, rank == 0 && !a.no_save).map(|b| {
            let mut b = b.expect("a run never stops at the cleanup check");
            let (job, doc, devices) = measure_setup(&a, &mut b);
            (b, job, doc, devices)
        })
    };
    // Every rank learns whether all could start (the same collectives on every rank).
    let all_set = ranks.all_ok(setup.is_ok());
    let mut outcome: std::result::Result<_, Failed> = match setup {
        Ok(x) if all_set => Ok(x),
        Ok(_) => Err(stopped()),
        Err(e) => Err(Failed::from(&e)),
    };
    if all_set {
        // The tables: once on a server (rank 0), each rank's own SQLite file otherwise.
        if let Ok((b, ..)) = &mut outcome
            && b.test != db::Test::UpdateLoop
            && (b.target.backend == db::Backend::Sqlite || rank == 0)
            && let Err(e) = prepare_tables(&a, b, &stop)
        {
            outcome = Err(Failed::from(&e));
        }
        if !ranks.all_ok(outcome.is_ok()) && outcome.is_ok() {
            outcome = Err(stopped());
        }
    }
    let mut store = None;
    let result: std::result::Result<DbDone, Failed> = match outcome {
        Err(f) => Err(f),
        Ok((b, job, doc, devices)) => {
            let Begin {
                target,
                so,
                store: s,
                conn,
                ..
            } = b;
            store = s;
            drop(conn);
            ranks.start_together();
            let t0 = std::time::SystemTime::now();
            let watch = |live: Vec<std::sync::Arc<crate::measure::live::LiveCounters>>| {
                crate::engine::checkpoints::PhaseSync::measuring(ranks, live)
            };
            let measured = measure(&a, &target, &so, &job, doc, &devices, &stop, Some(&watch));
            let t1 = std::time::SystemTime::now();
            crate::engine::checkpoints::PhaseSync::measured(ranks, t0, t1);
            match measured {
                Ok(doc) => {
                    let done = DbDone {
                        hist: doc
                            .hist
                            .as_ref()
                            .filter(|h| h.count() > 0)
                            .map(crate::store::serialize_hist)
                            .unwrap_or_default(),
                        doc,
                        window: (unix_ns(t0), unix_ns(t1)),
                    };
                    if ranks.aborted() {
                        // Rank 0 ended the run early (a rank died or hung): it takes this
                        // rank's document from the side channel, not from a gather.
                        ranks.progress_db(done);
                        Err(stopped())
                    } else {
                        Ok(done)
                    }
                }
                Err(e) => Err(Failed::from(&e)),
            }
        }
    };
    let Some(outcomes) = ranks.gather_any(result) else {
        return Ok(0);
    };
    finish_db_dist(&a, outcomes, store, false)
}

/// Rank 0's end of a distributed `iolab db`: one line per failing rank, the merged run printed
/// and saved (marked incomplete when a rank failed); the exit code. `early`: rank 0's watchdog
/// ended the run (a rank died or hung).
fn finish_db_dist(
    a: &cli::DbRunArgs,
    outcomes: Vec<crate::dist::Outcome<crate::dist::DbDone>>,
    store: Option<Store>,
    early: bool,
) -> Result<i32> {
    let code = crate::dist::first_exit(&outcomes);
    let (doc, failures) = crate::dist::merge::merge_db(outcomes);
    for f in &failures {
        eprintln!("iolab: error: rank {} on {}: {}", f.rank, f.host, f.error);
    }
    let Some(doc) = doc else {
        return Ok(code.unwrap_or(Exit::Interrupted as i32));
    };
    let c = save_and_print(a, store, doc, early)?;
    Ok(code.unwrap_or(c))
}
