use super::*;

pub fn cmd_db(a: &cli::DbRunArgs) -> Result<i32> {
    use crate::workloads::db;
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
    let tags = cli::parse_tags(&a.tags)?;
    let mut store = if a.no_save || a.action != "run" {
        None
    } else {
        Some(open_store_write(&a.db)?)
    };
    let stop = stop_flag();
    let sqlite_file = target.sqlite_path.clone();
    if a.action == "cleanup"
        && let Some(p) = &sqlite_file
        && !p.exists()
    {
        // opening it would create it
        print_out(&format!(
            "no SQLite database at {}: nothing to clean up\n",
            p.display()
        ));
        return Ok(0);
    }
    let created = sqlite_file.as_ref().is_some_and(|p| !p.exists());
    let mut conn = db::connect(&target, &so)?;
    if created {
        db::mark_created(conn.as_mut())?;
    }
    match a.action.as_str() {
        "cleanup" => {
            let n = db::cleanup(conn.as_mut(), target.backend, a.tables)?;
            let mut msg = format!(
                "dropped {n} iolab tables from {}\n",
                db::redact(&target.url)
            );
            if let Some(p) = &sqlite_file
                && db::sqlite_is_ours_and_empty(conn.as_mut())
            {
                drop(conn);
                for f in db::remove_sqlite_files(p)? {
                    msg.push_str(&format!("removed {}\n", f.display()));
                }
            }
            print_out(&msg);
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
    let report = a.report_interval.map(std::time::Duration::from_secs_f64);
    if test == db::Test::UpdateLoop {
        drop(conn);
        let (r, dev) = crate::measure::iostat::with_sampler(
            &crate::system::env::Roots::live().proc,
            &devices,
            interval,
            || db::update_loop(&target, &so, a.iterations, &stop, report),
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
        db::prepare(
            conn.as_mut(),
            target.backend,
            a.tables,
            a.table_size,
            a.quiet || a.json,
            &stop,
        )?;
        drop(conn);
        let (r, dev) = crate::measure::iostat::with_sampler(
            &crate::system::env::Roots::live().proc,
            &devices,
            interval,
            || db::run_oltp(&target, &job, &stop, report),
        );
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
            .map_err(|e| (e, s.path.clone()))
    });
    emit(&doc, a.json);
    match saved {
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
