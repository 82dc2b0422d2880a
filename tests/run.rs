//! `iolab run` on real files: counts, mixes, fsyncs, the file set, output and bad input.

use crate::common::*;
use std::os::unix::fs::MetadataExt;

const SMALL: &[&str] = &["--files", "4", "--size", "4M"];

fn with(extra: &[&str]) -> Vec<String> {
    SMALL
        .iter()
        .chain(extra.iter())
        .map(|s| s.to_string())
        .collect()
}

fn rj(dir: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let a = with(extra);
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    run_json(dir, &a)
}

#[test]
fn ops_gives_exact_counts_for_every_engine_and_thread_count() {
    let d = tempfile::tempdir().unwrap();
    for engine in ["sync", "io_uring", "mmap", "null"] {
        for threads in ["1", "3"] {
            let v = rj(
                d.path(),
                &[
                    "--mode",
                    "rndrd",
                    "--ops",
                    "1000",
                    "--engine",
                    engine,
                    "--threads",
                    threads,
                    "--iodepth",
                    "4",
                    "--seed",
                    "1",
                ],
            );
            assert_eq!(ops(&v, "read"), 1000, "{engine} x{threads}");
            assert_eq!(ops(&v, "write"), 0);
            assert_eq!(v["results"]["read"]["bytes"], 1000 * 16384);
        }
    }
    assert!(
        entries(d.path()).is_empty(),
        "the run removed the set it created: {:?}",
        entries(d.path())
    );
}

#[test]
fn each_mode_issues_the_right_mix() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--mode",
            "seqwr,seqrewr,seqrd,rndrd,rndwr,rndrw",
            "--ops",
            "1000",
            "--fsync-freq",
            "0",
            "--no-fsync-end",
            "--threads",
            "2",
        ],
    );
    let runs = v["runs"].as_array().expect("runs[] for a comma list");
    let got: Vec<(String, u64, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["mode"].as_str().unwrap().to_string(),
                ops(r, "read"),
                ops(r, "write"),
                ops(r, "fsync"),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("seqwr".into(), 0, 1000, 0),
            ("seqrewr".into(), 0, 1000, 0),
            ("seqrd".into(), 1000, 0, 0),
            ("rndrd".into(), 1000, 0, 0),
            ("rndwr".into(), 0, 1000, 0),
            ("rndrw".into(), 600, 400, 0),
        ]
    );
    assert_eq!(v["job"]["modes"].as_array().unwrap().len(), 6);
}

#[test]
fn rw_ratio_is_honoured() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--mode",
            "rndrw",
            "--ops",
            "1200",
            "--rw-ratio",
            "3",
            "--fsync-freq",
            "0",
            "--no-fsync-end",
        ],
    );
    assert_eq!((ops(&v, "read"), ops(&v, "write")), (900, 300));
}

#[test]
fn fsync_freq_fsync_all_and_fsync_end_give_expected_fsync_counts() {
    let d = tempfile::tempdir().unwrap();
    // 4 files of 1 MiB = 64 blocks of 16 KiB each; 256 sequential writes touch each block once.
    // Every 10th write to a file fsyncs it: 6 per file; --fsync-end then syncs the 4 dirty files.
    let v = rj(
        d.path(),
        &["--mode", "seqrewr", "--ops", "256", "--fsync-freq", "10"],
    );
    assert_eq!((ops(&v, "write"), ops(&v, "fsync")), (256, 28));
    let v = rj(
        d.path(),
        &[
            "--mode",
            "seqrewr",
            "--ops",
            "256",
            "--fsync-freq",
            "10",
            "--fsync-end=false",
        ],
    );
    assert_eq!(ops(&v, "fsync"), 24);
    let v = rj(
        d.path(),
        &[
            "--mode",
            "rndwr",
            "--ops",
            "100",
            "--fsync-all",
            "--fsync-mode",
            "fdatasync",
        ],
    );
    assert_eq!((ops(&v, "write"), ops(&v, "fsync")), (100, 100));
    let v = rj(
        d.path(),
        &[
            "--mode",
            "rndwr",
            "--ops",
            "100",
            "--fsync-all",
            "--engine",
            "io_uring",
            "--iodepth",
            "8",
        ],
    );
    assert_eq!((ops(&v, "write"), ops(&v, "fsync")), (100, 100));
    let v = rj(
        d.path(),
        &["--mode", "rndrd", "--ops", "100", "--fsync-freq", "1"],
    );
    assert_eq!(ops(&v, "fsync"), 0, "reads never fsync");
}

/// `--fsync-every 500ms`: each thread fsyncs the file it wrote every half second of a 2.2 s
/// run: 2.2 / 0.5 = 4 sweeps of 1 file per thread (one less when the fsyncs' own time pushes
/// the last past the end, never more than one more), with the sync loop and the queue loop.
#[test]
fn fsync_every_syncs_each_threads_files_by_time() {
    let d = tempfile::tempdir().unwrap();
    let (time_s, every_s, threads) = (2.2_f64, 0.5_f64, 2u64);
    let sweeps = (time_s / every_s).floor() as u64;
    for engine in ["sync", "io_uring"] {
        let v = run_json(
            d.path(),
            &[
                "--files",
                "1",
                "--size",
                "4M",
                "--mode",
                "rndwr",
                "--engine",
                engine,
                "--iodepth",
                "4",
                "--threads",
                &threads.to_string(),
                "--fsync-freq",
                "0",
                "--no-fsync-end",
                "--fsync-every",
                "500ms",
                "--time",
                &time_s.to_string(),
            ],
        );
        assert_eq!(v["job"]["fsync_every_s"], every_s);
        let (w, f) = (ops(&v, "write"), ops(&v, "fsync"));
        assert!(
            w > 0 && (threads * (sweeps - 1)..=threads * (sweeps + 1)).contains(&f),
            "{engine}: {f} fsyncs by {threads} threads ({} each), expected about {sweeps} each; {w} writes",
            f as f64 / threads as f64
        );
    }
    // without it, and with no other fsync, none
    let v = rj(
        d.path(),
        &[
            "--mode",
            "rndwr",
            "--fsync-freq",
            "0",
            "--no-fsync-end",
            "--time",
            "0.6",
        ],
    );
    assert!(v["job"]["fsync_every_s"].is_null());
    assert_eq!(ops(&v, "fsync"), 0);
}

#[test]
fn prepare_leaves_full_files_out_of_the_page_cache_and_run_reuses_them() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let r = iolab(&[
        "prepare", "--dir", dir, "--files", "3", "--size", "6M", "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        entries(d.path()),
        vec!["iolab-file.0", "iolab-file.1", "iolab-file.2"]
    );
    for i in 0..3 {
        let p = d.path().join(format!("iolab-file.{i}"));
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!(md.len(), 2 << 20);
        assert!(md.blocks() * 512 >= md.len(), "iolab-file.{i} is sparse");
        let f = std::fs::File::open(&p).unwrap();
        let resident = iolab::engine::fileset::resident_bytes(&f, md.len()).unwrap();
        let fs = iolab::system::fsinfo::fs_type(d.path());
        if fs != "tmpfs" {
            assert!(
                resident * 100 <= md.len(),
                "iolab-file.{i}: {resident} bytes still cached on {fs}"
            );
        }
    }
    let mtime = std::fs::metadata(d.path().join("iolab-file.0"))
        .unwrap()
        .mtime_nsec();
    let v = run_json(
        d.path(),
        &[
            "--files", "3", "--size", "6M", "--mode", "rndrd", "--ops", "50",
        ],
    );
    assert_eq!(
        v["prepare"]["written_bytes"], 0,
        "the prepared set was reused"
    );
    assert_eq!(v["prepare"]["reused_files"], 3);
    assert_eq!(
        std::fs::metadata(d.path().join("iolab-file.0"))
            .unwrap()
            .mtime_nsec(),
        mtime
    );
    assert_eq!(
        entries(d.path()).len(),
        3,
        "a set the user prepared is kept"
    );
    let r = iolab(&["cleanup", "--dir", dir]);
    assert_eq!(r.code, 0);
    assert!(entries(d.path()).is_empty());
}

#[test]
fn seqwr_leaves_a_user_prepared_set_complete() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    assert_eq!(
        iolab(&[
            "prepare", "--dir", dir, "--files", "2", "--size", "2M", "-q"
        ])
        .code,
        0
    );
    let v = run_json(
        d.path(),
        &[
            "--files",
            "2",
            "--size",
            "2M",
            "--mode",
            "seqwr,seqrd",
            "--ops",
            "10",
        ],
    );
    assert_eq!(ops(&v["runs"][1], "read"), 10);
    let st = iolab::engine::fileset::status(&iolab::model::job::FileSetSpec {
        dir: d.path().into(),
        files: 2,
        total_bytes: 2 << 20,
        file_size_bytes: 1 << 20,
        device: None,
        offset_bytes: None,
        file_len_bytes: None,
        layout: Default::default(),
        larger_ok: false,
    });
    assert_eq!(st.ready_files, 2);
}

#[test]
fn keep_keeps_only_iolab_files_and_nothing_is_written_outside_dir() {
    let parent = tempfile::tempdir().unwrap();
    let d = parent.path().join("set");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("mine.txt"), b"user data").unwrap();
    let _ = run_json(
        &d,
        &[
            "--files", "2", "--size", "1M", "--mode", "rndwr", "--ops", "20", "--keep",
        ],
    );
    assert_eq!(
        entries(&d),
        vec!["iolab-file.0", "iolab-file.1", "mine.txt"]
    );
    assert_eq!(entries(parent.path()), vec!["set"]);
    let _ = run_json(
        &d,
        &[
            "--files", "2", "--size", "1M", "--mode", "rndwr", "--ops", "20",
        ],
    );
    assert_eq!(
        entries(&d).len(),
        3,
        "a kept set counts as prepared and stays"
    );
    assert_eq!(iolab(&["cleanup", "--dir", d.to_str().unwrap()]).code, 0);
    assert_eq!(entries(&d), vec!["mine.txt"]);
    assert_eq!(std::fs::read(d.join("mine.txt")).unwrap(), b"user data");
}

#[test]
fn json_document_has_the_documented_fields() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--mode", "rndrw", "--time", "1.2", "--label", "base", "--tag", "disk=vda", "--tag",
            "fs=ext4",
        ],
    );
    assert_eq!(v["schema"], "iolab-run/1");
    assert_eq!(v["mode"], "rndrw");
    assert_eq!(v["label"], "base");
    assert_eq!(v["tags"]["disk"], "vda");
    for k in [
        "mode",
        "engine",
        "threads",
        "bs_bytes",
        "direct",
        "fsync_freq",
        "seed",
        "dir",
        "files",
        "file_size_bytes",
    ] {
        assert!(!v["job"][k].is_null(), "job.{k} missing: {}", v["job"]);
    }
    for op in ["read", "write", "fsync"] {
        for k in ["ops", "bytes", "iops", "bytes_per_sec", "lat_ns"] {
            assert!(
                v["results"][op].get(k).is_some(),
                "results.{op}.{k} missing"
            );
        }
    }
    let lat = &v["results"]["read"]["lat_ns"];
    let p = |k: &str| lat[k].as_f64().unwrap();
    for k in [
        "min", "mean", "max", "stddev", "p50", "p90", "p95", "p99", "p99_9", "p99_99",
    ] {
        assert!(lat[k].is_number(), "lat_ns.{k}");
    }
    assert!(
        p("min") <= p("p50")
            && p("p50") <= p("p90")
            && p("p90") <= p("p99")
            && p("p99") <= p("p99_99")
            && p("p99_99") <= p("max") * 1.001
    );
    assert!(v["cpu"]["user_pct"].is_number() && v["cpu"]["sys_pct"].is_number());
    let ts = v["timeseries"].as_array().unwrap();
    assert!(
        (2..=3).contains(&ts.len()),
        "1.2 s gives 2 intervals, got {}",
        ts.len()
    );
    let ts_ops: u64 = ts
        .iter()
        .map(|t| t["read"]["ops"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        ts_ops,
        ops(&v, "read"),
        "the time series adds up to the totals"
    );
    assert!(v["warnings"].is_array());
    // Rates count what completed inside the 1.2 s window; at most one straggler (1 thread,
    // depth 1) completes after it.
    let iops = v["results"]["read"]["iops"].as_f64().unwrap();
    assert_eq!(v["window_s"], 1.2);
    let in_window = iops * 1.2;
    let total = ops(&v, "read") as f64;
    assert!(
        in_window <= total + 0.01 && in_window >= total - 1.01,
        "{in_window} vs {total}"
    );
}

#[test]
fn rate_paces_the_offered_load() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--mode",
            "rndrd",
            "--engine",
            "null",
            "--rate",
            "400",
            "--threads",
            "2",
            "--time",
            "2",
        ],
    );
    let iops = v["results"]["read"]["iops"].as_f64().unwrap();
    assert!(
        (380.0..=420.0).contains(&iops),
        "--rate 400 gave {iops} IOPS"
    );
}

#[test]
fn seeds_reproduce_results_of_the_offset_generator() {
    // The same seed and op count on the null engine give identical op counts and per-second shape.
    let d = tempfile::tempdir().unwrap();
    let a = rj(
        d.path(),
        &[
            "--mode",
            "rndrw",
            "--ops",
            "500",
            "--seed",
            "9",
            "--engine",
            "null",
            "--fsync-freq",
            "7",
        ],
    );
    let b = rj(
        d.path(),
        &[
            "--mode",
            "rndrw",
            "--ops",
            "500",
            "--seed",
            "9",
            "--engine",
            "null",
            "--fsync-freq",
            "7",
        ],
    );
    assert_eq!(ops(&a, "fsync"), ops(&b, "fsync"));
    assert_eq!(a["job"]["seed"], 9);
}

#[test]
fn buffered_small_sets_warn_about_the_page_cache_and_unsynced_writes() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &["--mode", "rndwr", "--ops", "50", "--fsync-freq", "0"],
    );
    let codes: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"page_cache"), "{codes:?}");
    assert!(codes.contains(&"writes_not_synced"), "{codes:?}");
}

/// `--engine libaio` on buffered files blocks inside io_submit (nothing stays in flight): the
/// run says so with `libaio_buffered`, naming --direct; with --direct it does not.
#[test]
fn libaio_without_direct_warns_that_it_blocks_in_submit() {
    let d = tempfile::tempdir().unwrap();
    let codes = |v: &serde_json::Value| -> Vec<String> {
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap().to_string())
            .collect()
    };
    let base = [
        "--engine",
        "libaio",
        "--iodepth",
        "8",
        "--mode",
        "rndrd",
        "--ops",
        "200",
    ];
    let v = rj(d.path(), &base);
    let c = codes(&v);
    assert!(c.contains(&"libaio_buffered".to_string()), "{c:?}");
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "libaio_buffered")
        .unwrap();
    let msg = w["message"].as_str().unwrap();
    assert!(
        msg.contains("--direct") && msg.contains("io_submit") && msg.contains("--iodepth 8"),
        "{msg}"
    );
    let mut direct = base.to_vec();
    direct.push("--direct");
    let v = rj(d.path(), &direct);
    let c = codes(&v);
    assert!(!c.contains(&"libaio_buffered".to_string()), "{c:?}");
    assert_eq!(ops(&v, "read"), 200, "the direct run ran");
    // and no other engine is warned about it
    let v = rj(
        d.path(),
        &["--engine", "sync", "--mode", "rndrd", "--ops", "50"],
    );
    assert!(!codes(&v).contains(&"libaio_buffered".to_string()));
}

/// The last, partial second of a run is rated over its real length (ops / dur_s), and a tail
/// shorter than 0.2 s gets no point of its own (as in db runs and the device series): the
/// per-second series never shows a sliver of a second as a full second's collapse.
#[test]
fn the_last_partial_second_of_a_run_is_rated_over_its_real_length() {
    let d = tempfile::tempdir().unwrap();
    for (time, points, last_s) in [("1.1", 1, 1.0), ("1.5", 2, 0.5), ("2", 2, 1.0)] {
        let v = rj(
            d.path(),
            &["--engine", "null", "--mode", "rndrd", "--time", time],
        );
        let ts = v["timeseries"].as_array().unwrap();
        assert_eq!(ts.len(), points, "--time {time}: {ts:?}");
        for (i, p) in ts.iter().enumerate() {
            assert_eq!(p["t_s"].as_f64().unwrap(), i as f64, "--time {time}");
            let dur = p["dur_s"].as_f64().unwrap();
            let want = if i + 1 == points { last_s } else { 1.0 };
            assert!(
                (dur - want).abs() < 1e-9,
                "--time {time}: point {i} lasts {dur} s"
            );
            let r = &p["read"];
            let ops = r["ops"].as_f64().unwrap();
            let iops = r["iops"].as_f64().unwrap();
            assert!(ops > 0.0, "--time {time}: {p}");
            assert!(
                (iops - ops / dur).abs() <= 1e-9 * iops,
                "--time {time}: point {i}: {iops} IOPS is not its {ops} ops over {dur} s"
            );
        }
    }
}

#[test]
fn warm_reads_the_set_into_the_cache() {
    let mut d = tempfile::tempdir().unwrap();
    if iolab::system::fsinfo::fs_type(d.path()) == "tmpfs" {
        // a tmpfs cannot be evicted; the target directory is on real storage
        d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    }
    if iolab::system::fsinfo::fs_type(d.path()) == "tmpfs" {
        return skip(
            "warm_reads_the_set_into_the_cache",
            "the temp dir and the target dir are tmpfs",
        );
    }
    let v = rj(d.path(), &["--mode", "rndrd", "--ops", "50", "--warm"]);
    assert!(v["cache_resident_pct_at_start"].as_f64().unwrap() > 90.0);
}

fn err(args: &[&str]) -> Run {
    let r = iolab(args);
    assert_ne!(r.code, 0, "{args:?} should fail");
    assert_eq!(r.stderr.trim().lines().count(), 1, "one line: {}", r.stderr);
    r
}

#[test]
fn bad_input_gets_one_line_naming_the_flag_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--dir", dir, "--bs", "16x"], "--bs"),
        (&["run", "--dir", dir, "--size", "1.5G"], "--size"),
        (&["run", "--dir", dir, "--mode", "rndread"], "--mode"),
        (&["run", "--dir", dir, "--engine", "aio"], "--engine"),
        (
            &["run", "--dir", dir, "--distribution", "zipf:x"],
            "--distribution",
        ),
        (
            &["run", "--dir", dir, "--open-flags", "fast"],
            "--open-flags",
        ),
        (&["run", "--dir", dir, "--threads", "0"], "--threads"),
        (
            &[
                "run", "--dir", dir, "--direct", "--bs", "1000", "--mode", "rndrd",
            ],
            "--bs",
        ),
        (
            &[
                "run", "--dir", dir, "--size", "1000T", "--mode", "rndrd", "--ops", "1",
            ],
            "--size",
        ),
        (
            &[
                "run", "--dir", dir, "--files", "64", "--size", "64K", "--mode", "rndrd",
            ],
            "--size",
        ),
        (&["run", "--dir", dir, "--tag", "novalue"], "--tag"),
        (
            &["run", "--dir", dir, "--engine", "mmap", "--direct"],
            "--direct",
        ),
        (
            &["run", "--dir", "/nonexistent/iolab", "--mode", "rndrd"],
            "--dir",
        ),
        (
            &["run", "--dir", dir, "--ops", "5", "--io-size", "1m"],
            "--ops",
        ),
        // counts and intervals are typed in the flag definitions: the same words everywhere
        (&["run", "--dir", dir, "--iodepth", "0"], "--iodepth"),
        (&["run", "--dir", dir, "--bs", "0"], "--bs"),
        (
            &["run", "--dir", dir, "--iostat-interval", "0.01"],
            "--iostat-interval",
        ),
        // --device and what goes with it
        (
            &[
                "run",
                "--dir",
                dir,
                "--device",
                "/dev/null",
                "--mode",
                "rndrd",
            ],
            "--device",
        ),
        (&["run", "--device", dir, "--mode", "rndrd"], "--device"),
        (
            &["run", "--device", "/dev/null", "--mode", "rndrd"],
            "--device",
        ),
        (
            &[
                "run",
                "--device",
                "/dev/null",
                "--layout",
                "holes",
                "--mode",
                "rndwr",
            ],
            "--layout",
        ),
        (&["run", "--dir", dir, "--destructive"], "--destructive"),
        (
            &["run", "--device", "/dev/null", "--destructive=all"],
            "--destructive",
        ),
        (
            &["run", "--dir", dir, "--report-interval", "0"],
            "--report-interval",
        ),
        (
            &["run", "--dir", dir, "--report-interval", "-1"],
            "--report-interval",
        ),
        (
            &["run", "--dir", dir, "--report-interval", "1s"],
            "--report-interval",
        ),
        (&["db", "--report-interval", "0"], "--report-interval"),
        (&["db", "--transactions", "0"], "--transactions"),
        (&["iostat", "--interval", "0"], "--interval"),
        (&["fsync-probe", "--count", "0"], "--count"),
        (&["sweep", "--repeat", "0", "--threads", "1,2"], "--repeat"),
        (&["run", "--dir", dir, "--layout", "sparse"], "--layout"),
        (&["prepare", "--dir", dir, "--layout", "sparse"], "--layout"),
        // reads of holes or unwritten extents never reach the device (allowed with --force)
        (
            &["run", "--dir", dir, "--layout", "holes", "--mode", "rndrd"],
            "--layout holes",
        ),
        (
            &[
                "run",
                "--dir",
                dir,
                "--layout",
                "unwritten",
                "--mode",
                "rndwr,seqrd",
            ],
            "--layout unwritten",
        ),
        (
            &["run", "--dir", dir, "--layout", "holes"],
            "--layout holes",
        ),
        // extend: empty files that only sequential writes grow
        (
            &["run", "--dir", dir, "--layout", "extend", "--mode", "rndwr"],
            "--layout extend",
        ),
        (
            &[
                "run", "--dir", dir, "--layout", "extend", "--mode", "seqwr", "--engine", "mmap",
            ],
            "--layout extend",
        ),
        // block-size mixes and ranges, zones, fio's read percent
        (&["run", "--dir", dir, "--bs", "16k:70,1m"], "--bs"),
        (&["run", "--dir", dir, "--bs", "16k:70,1m:20"], "--bs"),
        (&["run", "--dir", dir, "--bs", "64k-4k"], "--bs"),
        (&["run", "--dir", dir, "--bs", "4k-65000"], "--bs"),
        (
            &["run", "--dir", dir, "--bs", "4k-1m", "--mode", "rndrd"],
            "--bs",
        ),
        (
            &["run", "--dir", dir, "--distribution", "zoned:50/5:30/15"],
            "--distribution",
        ),
        (
            &[
                "run",
                "--dir",
                dir,
                "--distribution",
                "zoned:50/5:30/15:20/70",
            ],
            "--distribution",
        ),
        (&["run", "--dir", dir, "--rwmixread", "120"], "--rwmixread"),
        (
            &["run", "--dir", dir, "--fsync-every", "soon"],
            "--fsync-every",
        ),
        (&["run", "--dir", dir, "--fsync-every=-2s"], "--fsync-every"),
        (
            &["run", "--dir", dir, "--rank-timeout", "0"],
            "--rank-timeout",
        ),
        (
            &["run", "--dir", dir, "--rank-timeout", "soon"],
            "--rank-timeout",
        ),
        (
            &["run", "--dir", dir, "--role", "c:mode=rndwr,fsync-every=2x"],
            "--fsync-every",
        ),
        (
            &[
                "run",
                "--dir",
                dir,
                "--rwmixread",
                "70",
                "--rw-ratio",
                "1.5",
                "--mode",
                "rndrw",
            ],
            "--rwmixread",
        ),
    ];
    for (args, flag) in cases {
        let r = err(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(flag),
            "{args:?}: message should name {flag}: {}",
            r.stderr
        );
        assert_eq!(
            r.stderr.lines().count(),
            1,
            "{args:?}: one line: {}",
            r.stderr
        );
    }
    assert!(
        entries(d.path()).is_empty(),
        "nothing was written: {:?}",
        entries(d.path())
    );
}

#[test]
fn tmpfs_cannot_be_evicted_and_the_run_says_so() {
    let shm = std::path::Path::new("/dev/shm");
    if iolab::system::fsinfo::fs_type(shm) != "tmpfs" {
        return skip(
            "tmpfs_cannot_be_evicted_and_the_run_says_so",
            "/dev/shm is not tmpfs here",
        );
    }
    let d = tempfile::tempdir_in(shm).unwrap();
    let v = run_json(
        d.path(),
        &[
            "--files", "2", "--size", "2M", "--mode", "rndrd", "--ops", "20",
        ],
    );
    let codes: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"eviction_failed"), "{codes:?}");
    assert!(
        v["prepare"]["cache_resident_pct_after_evict"]
            .as_f64()
            .unwrap()
            > 99.0
    );
    assert!(entries(d.path()).is_empty());
}

#[test]
fn read_only_dir_is_refused_for_non_root() {
    let d = tempfile::tempdir().unwrap();
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    let args = ["run", "--dir", ro.to_str().unwrap(), "--mode", "rndrd"];
    let r = if is_root() {
        // Root ignores permissions: iolab runs as nobody, with a store it may write.
        let home = d.path().join("nobody");
        std::fs::create_dir(&home).unwrap();
        std::os::unix::fs::chown(&home, Some(NOBODY), Some(NOBODY)).unwrap();
        std::fs::set_permissions(
            d.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let r = to_run(
            as_nobody(&mut std::process::Command::new(bin()))
                .args(args)
                .env("IOLAB_DB", home.join("results.db"))
                .output()
                .unwrap(),
        );
        assert_eq!(r.stderr.trim().lines().count(), 1, "one line: {}", r.stderr);
        r
    } else {
        err(&args)
    };
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--dir") && r.stderr.contains("not writable"),
        "{}",
        r.stderr
    );
}

#[test]
fn default_profile_runs_the_database_cells() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(
        d.path(),
        &[
            "--files", "4", "--size", "8M", "--time", "0.2", "--engine", "null",
        ],
    );
    let cells: Vec<(String, u64, u64)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["mode"].as_str().unwrap().to_string(),
                r["job"]["threads"].as_u64().unwrap(),
                r["job"]["bs_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let k16 = 16384;
    let m1 = 1 << 20;
    assert_eq!(
        cells,
        vec![
            ("rndrd".into(), 1, k16),
            ("rndrd".into(), 8, k16),
            ("rndwr".into(), 1, k16),
            ("rndwr".into(), 8, k16),
            ("rndrw".into(), 1, k16),
            ("rndrw".into(), 8, k16),
            ("seqrd".into(), 1, m1),
            ("seqwr".into(), 1, m1),
        ]
    );
    // human output: one table
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--files",
        "4",
        "--size",
        "8M",
        "--time",
        "0.2",
        "--engine",
        "null",
        "--no-save",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for col in ["mode", "IOPS", "MiB/s", "p99"] {
        assert!(r.stdout.contains(col), "{}", r.stdout);
    }
    assert!(entries(d.path()).is_empty());
}

#[test]
fn ctrl_c_prints_partial_results_and_cleans_up() {
    let d = tempfile::tempdir().unwrap();
    // With --json -q nothing is printed before the end: wait until a worker thread has read.
    let out = interrupt_when(
        std::process::Command::new(bin()).args([
            "run",
            "--dir",
            d.path().to_str().unwrap(),
            "--files",
            "2",
            "--size",
            "4M",
            "--mode",
            "rndrd,rndwr",
            "--time",
            "30",
            "--json",
            "--no-save",
            "-q",
        ]),
        "a read by an iolab-w worker thread",
        |pid, _| thread_has_read(pid, "iolab-w"),
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("partial results as JSON");
    assert_eq!(v["interrupted"], true);
    // Two modes asked: the multi-mode layout, with the one measured before the stop.
    let c = &v["runs"][0];
    assert!(
        ops(c, "read") > 0,
        "what was measured before the stop is reported"
    );
    assert!(c["duration_s"].as_f64().unwrap() < 10.0);
    assert!(
        entries(d.path()).is_empty(),
        "cleaned up: {:?}",
        entries(d.path())
    );
}

/// The cells of the table rows of `text` (lines with `┆`), trimmed, with the op column carried
/// down from the row above when blank (`op_col` is its index).
fn table_rows(text: &str, op_col: usize) -> Vec<Vec<String>> {
    let mut op = String::new();
    text.lines()
        .filter(|l| l.contains('┆'))
        .map(|l| {
            let mut cells: Vec<String> = l
                .trim_matches(|c| c == '│' || c == ' ')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect();
            if cells[op_col].is_empty() {
                cells[op_col] = op.clone();
            }
            op = cells[op_col].clone();
            cells
        })
        .collect()
}

#[test]
fn fsync_rows_show_no_mibps_and_end_of_mode_fsyncs_no_rate() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let db = d.path().join("r.db");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--dir",
            dir.to_str().unwrap(),
            "--files",
            "2",
            "--size",
            "2M",
            "--mode",
            "rndwr",
            "--engine",
            "null",
            "--time",
            "0.3",
            "-q",
        ];
        a.extend_from_slice(extra);
        let r = iolab_db(&db, &a);
        assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
        r.stdout
    };
    // the run table: mode thr bs op ops IOPS MiB/s ...
    let end = run(&["--fsync-freq", "0", "--no-save"]);
    let rows = table_rows(&end, 3);
    let f = rows
        .iter()
        .find(|r| r[3].starts_with("fsync"))
        .unwrap_or_else(|| panic!("an fsync row: {end}"));
    assert_ne!(f[4], "0", "end-of-mode fsyncs are counted: {end}");
    assert_eq!(
        (f[5].as_str(), f[6].as_str()),
        ("-", "-"),
        "end-of-mode fsyncs: no IOPS, no MiB/s: {end}"
    );
    assert!(!f[7].is_empty() && f[7] != "-", "but a latency: {end}");
    let freq = run(&["--fsync-freq", "10", "--no-save"]);
    let rows = table_rows(&freq, 3);
    let f = rows.iter().find(|r| r[3].starts_with("fsync")).unwrap();
    assert!(
        f[5].parse::<f64>().unwrap() > 0.0,
        "fsyncs during the mode have a rate: {freq}"
    );
    assert_eq!(f[6], "-", "but no MiB/s: {freq}");
    // the repetition summary (mode op metric ...) and compare (mode op metric ...)
    for (fsync_freq, group) in [("0", "g1"), ("10", "g2")] {
        let out = run(&["--fsync-freq", fsync_freq, "--repeat", "2"]);
        let metrics: Vec<String> = table_rows(&out, 1)
            .into_iter()
            .filter(|r| r[1] == "fsync")
            .map(|r| r[2].clone())
            .collect();
        assert!(metrics.contains(&"p99".to_string()), "{out}");
        assert!(!metrics.contains(&"MiB/s".to_string()), "{out}");
        assert_eq!(
            metrics.contains(&"IOPS".to_string()),
            fsync_freq != "0",
            "{out}"
        );
        let show = iolab_db(&db, &["show", group]).stdout;
        assert!(!show.contains("0.00 ±0.00"), "{show}");
    }
    let r = iolab_db(&db, &["compare", "g1", "g2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let metrics: Vec<String> = table_rows(&r.stdout, 1)
        .into_iter()
        .filter(|r| r[1] == "fsync")
        .map(|r| format!("{} {}", r[2], r[3]))
        .collect();
    assert!(
        metrics.iter().all(|m| !m.starts_with("MiB/s")),
        "{}",
        r.stdout
    );
    let iops = metrics.iter().find(|m| m.starts_with("IOPS")).unwrap();
    assert!(
        iops.starts_with("IOPS -"),
        "g1 has no fsync rate: {}",
        r.stdout
    );
}

#[test]
fn readme_and_docs_commands_work_as_root_without_sudo() {
    // a fresh Debian container runs as root and has no sudo; scripts/setup.sh elevates itself
    // only when it is not root
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let setup = std::fs::read_to_string(root.join("scripts/setup.sh")).unwrap();
    assert!(
        setup.contains("id -u") && setup.contains("SUDO=\"sudo\""),
        "setup.sh elevates only when needed"
    );
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let mut first = None;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let mut in_code = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if !in_code {
                continue;
            }
            let cmd = line.trim_start().trim_start_matches("$ ");
            if first.is_none() && f.ends_with("README.md") && !cmd.is_empty() {
                first = Some(cmd.to_string());
            }
            for part in cmd.split(['&', '|', ';']) {
                assert!(
                    !part.trim_start().starts_with("sudo "),
                    "{}:{}: `{line}` fails as root in a container without sudo",
                    f.display(),
                    i + 1
                );
            }
        }
    }
    let first = first.expect("README has a first command");
    assert!(
        first.starts_with("bash scripts/setup.sh && cargo run --release -- run"),
        "{first}"
    );
}

/// The null engine touches no file: with --keep it still writes no file set (it used to complete
/// the "kept" set at the end of the run, writing every file it had not needed).
#[test]
fn null_engine_with_keep_writes_no_files() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(
        d.path(),
        &[
            "--engine", "null", "--mode", "rndwr", "--ops", "100", "--keep", "--size", "8M",
        ],
    );
    assert_eq!(ops(&v, "write"), 100, "{v}");
    assert_eq!(v["prepare"]["written_bytes"], 0, "{}", v["prepare"]);
    assert!(
        entries(d.path()).is_empty(),
        "files left: {:?}",
        entries(d.path())
    );
}

/// `cmd` with its address space limited to `bytes` (RLIMIT_AS): a thread stack that does not fit
/// fails to start, as on a machine out of threads or memory, without growing this machine's.
fn limit_as(cmd: &mut std::process::Command, bytes: u64) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; it only lowers the child's own limit.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

fn run_small(d: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["run", "--dir", d.to_str().unwrap(), "--no-save", "-q"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(with(extra));
    a
}

#[test]
fn threads_beyond_the_system_limits_are_refused_up_front() {
    let d = tempfile::tempdir().unwrap();
    let r = to_run(
        limit_as(
            std::process::Command::new(bin())
                .args(run_small(
                    d.path(),
                    &["--mode", "rndrd", "--threads", "100000", "--time", "1"],
                ))
                .env("IOLAB_DB", test_db()),
            4 << 30,
        )
        .output()
        .unwrap(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--threads 100000") && r.stderr.contains("at most"),
        "{}",
        r.stderr
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// A block size that not even one worker can hold is refused naming --bs and --iodepth (not
/// "use --threads 0"), up front, nothing created.
#[test]
fn a_block_size_no_worker_can_hold_is_refused_naming_bs() {
    let d = tempfile::tempdir().unwrap();
    let a = run_small(
        d.path(),
        &[
            "--mode", "rndrd", "--bs", "4T", "--engine", "null", "--ops", "1",
        ],
    );
    let r = iolab(&a.iter().map(|s| s.as_str()).collect::<Vec<_>>());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--bs 4TiB with --iodepth 1")
            && r.stderr.contains("not even one worker")
            && !r.stderr.contains("--threads 0"),
        "{}",
        r.stderr
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn a_worker_thread_that_cannot_start_fails_the_run_without_a_panic() {
    if !is_root() {
        return skip(
            "a_worker_thread_that_cannot_start_fails_the_run_without_a_panic",
            "needs root to run iolab as nobody under RLIMIT_NPROC",
        );
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        d.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    // As nobody with at most 40 threads (RLIMIT_NPROC binds users other than root).
    let limited = |skip_check: bool| {
        let mut c = std::process::Command::new(bin());
        c.args(run_small(
            d.path(),
            &["--mode", "rndrd", "--threads", "200", "--time", "1"],
        ));
        if skip_check {
            c.env("IOLAB_TEST_SKIP_THREAD_CHECK", "1");
        }
        as_nobody(&mut c);
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe; it only lowers the child's own limit.
        unsafe {
            c.pre_exec(|| {
                let rl = libc::rlimit {
                    rlim_cur: 40,
                    rlim_max: 40,
                };
                if libc::setrlimit(libc::RLIMIT_NPROC, &rl) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        to_run(c.output().unwrap())
    };
    // Up front: refused, naming the limit.
    let r = limited(false);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("RLIMIT_NPROC"), "{}", r.stderr);
    // Past the check, a thread start fails midway: an error (exit 1), files removed, no panic.
    let r = limited(true);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(r.stderr.contains("--threads 200"), "{}", r.stderr);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// Roles run at once: their threads together must fit, not only each role's own. As nobody
/// under RLIMIT_NPROC 40, two roles of 30 threads each fit alone and are refused together, up
/// front, with one line naming the roles and the limit, nothing created.
#[test]
fn concurrent_roles_threads_are_checked_together_up_front() {
    if !is_root() {
        return skip(
            "concurrent_roles_threads_are_checked_together_up_front",
            "needs root to run iolab as nobody under RLIMIT_NPROC",
        );
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        d.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let set = d.path().join("set");
    let limited = |roles: &[&str]| {
        let mut c = std::process::Command::new(bin());
        c.args([
            "run",
            "--dir",
            d.path().to_str().unwrap(),
            "--files",
            "2",
            "--size",
            "2M",
            "--engine",
            "null",
            "--time",
            "0.2",
            "--no-save",
            "-q",
        ]);
        for r in roles {
            c.args(["--role", r]);
        }
        as_nobody(&mut c);
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe; it only lowers the child's own limit.
        unsafe {
            c.pre_exec(|| {
                let rl = libc::rlimit {
                    rlim_cur: 40,
                    rlim_max: 40,
                };
                if libc::setrlimit(libc::RLIMIT_NPROC, &rl) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        to_run(c.output().unwrap())
    };
    // each role alone fits
    for r in ["a:mode=rndrd,threads=30", "b:mode=rndwr,threads=30"] {
        let one = limited(&[r]);
        assert_eq!(one.code, 0, "{r}: {}", one.stderr);
    }
    // together they do not
    let r = limited(&["a:mode=rndrd,threads=30", "b:mode=rndwr,threads=30"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("(a 30, b 30)")
            && r.stderr.contains("60 worker threads")
            && r.stderr.contains("RLIMIT_NPROC"),
        "{}",
        r.stderr
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
    assert!(!set.exists());
}

#[test]
fn ctrl_c_during_prepare_saves_nothing_and_says_what_was_prepared() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("r.db");
    let dir = d.path().join("set");
    std::fs::create_dir(&dir).unwrap();
    let first = dir.join("iolab-file.0");
    let out = interrupt_when(
        std::process::Command::new(bin())
            .args([
                "run",
                "--dir",
                dir.to_str().unwrap(),
                "--files",
                "2",
                "--size",
                "4G",
                "--mode",
                "rndrd",
                "--time",
                "30",
            ])
            .env("IOLAB_DB", &store)
            .env("IOLAB_TEST_SKIP_SPACE_CHECK", "1"),
        "the first data file in --dir",
        |_, _| first.exists(),
    );
    let r = to_run(out);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "no table: {}", r.stdout);
    assert!(!r.stderr.contains("null engine"), "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("prepare") && r.stderr.contains("removed"),
        "{}",
        r.stderr
    );
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    if store.exists() {
        let l = iolab_db(&store, &["list", "--json"]).json();
        assert_eq!(l["runs"].as_array().map_or(0, |a| a.len()), 0, "{l}");
    }
}

#[test]
fn an_interrupted_multi_mode_run_keeps_the_multi_mode_document() {
    let d = tempfile::tempdir().unwrap();
    let out = interrupt_when(
        std::process::Command::new(bin()).args(run_small(
            d.path(),
            &["--mode", "rndrd,rndwr", "--time", "30", "--json"],
        )),
        "a read by an iolab-w worker thread",
        |pid, _| thread_has_read(pid, "iolab-w"),
    );
    let r = to_run(out);
    assert_eq!(r.code, 130, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["runs"].as_array().map(|a| a.len()), Some(1), "{v}");
    assert_eq!(v["job"]["modes"], serde_json::json!(["rndrd"]), "{v}");
    assert!(v["runs"][0]["results"]["read"]["ops"].as_u64().unwrap() > 0);
}

fn fingerprint(dir: &std::path::Path) -> Vec<(String, u64, u64, i64)> {
    entries(dir)
        .into_iter()
        .map(|n| {
            let md = std::fs::metadata(dir.join(&n)).unwrap();
            (
                n,
                md.ino(),
                md.len(),
                md.mtime_nsec() + md.mtime() * 1_000_000_000,
            )
        })
        .collect()
}

#[test]
fn a_prepared_set_of_other_sizes_is_refused_and_never_removed() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let p = iolab(&[
        "prepare", "--dir", dir, "--files", "4", "--size", "8M", "-q",
    ]);
    assert_eq!(p.code, 0, "{}", p.stderr);
    let before = fingerprint(d.path());
    assert_eq!(before.len(), 4);
    // Other sizes: refused, nothing rewritten or removed.
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--files",
        "4",
        "--size",
        "16M",
        "--mode",
        "rndrd",
        "--ops",
        "10",
        "--no-save",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--size") && r.stderr.contains("iolab cleanup --dir"),
        "{}",
        r.stderr
    );
    assert_eq!(fingerprint(d.path()), before);
    // An incomplete set (one file cut short): refused too, left as it is.
    let f1 = d.path().join("iolab-file.1");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f1)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let before = fingerprint(d.path());
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--files",
        "4",
        "--size",
        "8M",
        "--mode",
        "rndrd",
        "--ops",
        "10",
        "--no-save",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(fingerprint(d.path()), before);
    // A set with a missing file is completed and kept: the run did not create it.
    std::fs::remove_file(&f1).unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--files",
        "4",
        "--size",
        "8M",
        "--mode",
        "rndrd",
        "--ops",
        "10",
        "--no-save",
        "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = fingerprint(d.path());
    assert_eq!(after.len(), 4, "{after:?}");
    assert!(after.iter().all(|f| f.2 == 2 << 20), "{after:?}");
    assert!(iolab(&["cleanup", "--dir", dir]).code == 0);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn a_second_run_in_the_same_dir_is_refused_while_the_first_holds_it() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap().to_string();
    let mut second = None;
    let out = interrupt_when(
        std::process::Command::new(bin())
            .args(run_small(d.path(), &["--mode", "rndrd", "--time", "60"])),
        "a read by an iolab-w worker thread",
        |pid, _| {
            if !thread_has_read(pid, "iolab-w") {
                return false;
            }
            second = Some((
                pid,
                iolab(&[
                    "run",
                    "--dir",
                    &dir,
                    "--files",
                    "4",
                    "--size",
                    "4M",
                    "--mode",
                    "rndwr",
                    "--ops",
                    "10",
                    "--no-save",
                    "-q",
                ]),
            ));
            true
        },
    );
    assert_eq!(out.status.code(), Some(130));
    let (pid, r) = second.unwrap();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("in use") && r.stderr.contains(&format!("pid {pid}")),
        "{}",
        r.stderr
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn pseudo_filesystems_and_block_devices_are_refused_as_dir() {
    for (dir, word) in [("/dev", "devtmpfs"), ("/proc", "proc"), ("/sys", "sysfs")] {
        if !std::path::Path::new(dir).is_dir() {
            continue;
        }
        let before = entries(std::path::Path::new(dir)).len();
        let r = iolab(&[
            "run",
            "--dir",
            dir,
            "--files",
            "1",
            "--size",
            "1M",
            "--ops",
            "1",
            "--no-save",
        ]);
        assert_eq!(r.code, 2, "{dir}: {}", r.stderr);
        assert!(
            r.stderr.contains("not storage") && r.stderr.contains(word),
            "{dir}: {}",
            r.stderr
        );
        if dir == "/dev" {
            assert!(!std::path::Path::new("/dev/iolab-file.0").exists());
            assert_eq!(entries(std::path::Path::new(dir)).len(), before);
        }
    }
    // cgroupfs: every cgroup (v1 hierarchy) or cgroup2 mount, wherever the system put it
    // (/sys/fs/cgroup itself is a tmpfs holding the v1 hierarchies on some systems).
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let cgroups: Vec<(String, String)> = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 2 && (f[2] == "cgroup" || f[2] == "cgroup2"))
                .then(|| (f[1].to_string(), f[2].to_string()))
        })
        .collect();
    if cgroups.is_empty() {
        skip(
            "pseudo_filesystems_and_block_devices_are_refused_as_dir",
            "no cgroup or cgroup2 filesystem is mounted (the cgroup case is not checked)",
        );
    }
    for (dir, fstype) in &cgroups {
        let before = entries(std::path::Path::new(dir));
        let r = iolab(&[
            "run",
            "--dir",
            dir,
            "--files",
            "1",
            "--size",
            "1M",
            "--ops",
            "1",
            "--no-save",
        ]);
        assert_eq!(r.code, 2, "{dir}: {}", r.stderr);
        let word = if fstype == "cgroup2" {
            "cgroup2"
        } else {
            "cgroup (v1)"
        };
        assert!(
            r.stderr.contains("not storage") && r.stderr.contains(word),
            "{dir} ({fstype}): {}",
            r.stderr
        );
        assert_eq!(r.stderr.trim().lines().count(), 1, "{dir}: {}", r.stderr);
        // nothing made there: no file set, and no child cgroup (a mkdir in cgroupfs makes one)
        assert_eq!(entries(std::path::Path::new(dir)), before, "{dir}");
    }
    let dev = std::fs::read_dir("/sys/class/block")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| format!("/dev/{}", e.file_name().to_string_lossy()))
        .find(|p| {
            use std::os::unix::fs::FileTypeExt;
            std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
        });
    let Some(dev) = dev else {
        return skip(
            "pseudo_filesystems_and_block_devices_are_refused_as_dir",
            "no block device node in /dev",
        );
    };
    let r = iolab(&["run", "--dir", &dev, "--no-save"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("block device") && r.stderr.contains(&format!("--device {dev}")),
        "{}",
        r.stderr
    );
}

/// Help, warnings and findings name the effect, never the articles iolab was started from
/// ("seed 000" and the like mean nothing to a user).
#[test]
fn help_and_messages_name_effects_not_source_articles() {
    let top = iolab(&["--help"]);
    let mut texts = vec![top.stdout.clone()];
    let subs = [
        "run",
        "prepare",
        "cleanup",
        "env",
        "check",
        "iostat",
        "fsync-probe",
        "db",
        "sweep",
        "saturate",
        "suite",
        "zones",
        "report",
        "plot",
        "list",
        "show",
        "delete",
        "compare",
        "export",
        "import",
        "crashcheck",
    ];
    for s in subs {
        texts.push(iolab(&[s, "--help"]).stdout);
    }
    for s in ["iozone", "bonnie", "sysbench-fileio"] {
        texts.push(iolab(&["suite", s, "--help"]).stdout);
    }
    for s in ["listen", "write", "verify"] {
        texts.push(iolab(&["crashcheck", s, "--help"]).stdout);
    }
    for t in &texts {
        assert!(!t.is_empty(), "help printed");
        assert!(!t.to_lowercase().contains("seed 00"), "{t}");
    }
    // and every string the binary can print: the sources' literals and doc comments (help)
    let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap().to_lowercase();
                assert!(
                    !text.contains("seed 00"),
                    "{} names a source article",
                    p.display()
                );
            }
        }
    }
}

/// `--rate` keeps its schedule: a paced cell reports how late iolab itself issued its operations
/// behind the schedule (`schedule_lag_ns`), which on a fast target is a small part of the interval
/// between them, for the sync loop and the queue loop; an unpaced cell has null there.
#[test]
fn paced_runs_report_a_small_schedule_lag() {
    let d = tempfile::tempdir().unwrap();
    // One operation every 1 ms per thread.
    for engine in ["null", "io_uring"] {
        let v = run_json(
            d.path(),
            &[
                "--engine", engine, "--mode", "rndrd", "--rate", "1000", "--ops", "1000", "--size",
                "4M", "--files", "1", "--seed", "1",
            ],
        );
        assert_eq!(ops(&v, "read"), 1000, "{v}");
        let lag = &v["schedule_lag_ns"];
        assert!(lag.is_object(), "{engine}: schedule_lag_ns missing: {v}");
        let (p50, p99, max) = (
            lag["p50"].as_u64().unwrap(),
            lag["p99"].as_u64().unwrap(),
            lag["max"].as_u64().unwrap(),
        );
        eprintln!("{engine} at 1000 IOPS: schedule lag p50 {p50} ns, p99 {p99} ns");
        assert!(p50 <= p99 && p99 <= max, "{lag}");
        // Generous for a loaded machine: a fifth of the 1 ms interval.
        assert!(p50 < 200_000, "{engine}: schedule lag p50 {p50} ns");
        // The latency is measured from the schedule and includes the lag: never below it.
        let lat = v["results"]["read"]["lat_ns"]["p50"].as_u64().unwrap();
        assert!(
            lat >= p50,
            "{engine}: latency p50 {lat} below the lag p50 {p50}"
        );
    }
    // Not paced: the field is there and null.
    let v = run_json(
        d.path(),
        &["--engine", "null", "--mode", "rndrd", "--ops", "1000"],
    );
    let obj = v.as_object().unwrap();
    assert!(obj.contains_key("schedule_lag_ns"), "{v}");
    assert!(v["schedule_lag_ns"].is_null(), "{v}");
    // Several modes: each cell has its own; the text names it.
    let v = run_json(
        d.path(),
        &[
            "--engine",
            "null",
            "--mode",
            "rndrd,rndwr",
            "--rate",
            "2000",
            "--ops",
            "200",
        ],
    );
    for c in v["runs"].as_array().unwrap() {
        assert!(c["schedule_lag_ns"]["p50"].is_u64(), "{c}");
    }
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--no-save",
        "-q",
        "--engine",
        "null",
        "--mode",
        "rndrd",
        "--rate",
        "2000",
        "--ops",
        "200",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("schedule lag"), "{}", r.stdout);
}

/// `env` and `check` take the same target but each has help of its own: check's speaks of
/// checking and of its iolab-check/1 findings, env's of describing and of iolab-env/1.
#[test]
fn env_and_check_have_help_of_their_own() {
    let env = iolab(&["env", "--help"]);
    let check = iolab(&["check", "--help"]);
    assert_eq!((env.code, check.code), (0, 0));
    let (env, check) = (env.stdout, check.stdout);
    let section = |help: &str, head: &str| -> String {
        help.lines()
            .skip_while(|l| !l.starts_with(head))
            .take_while(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    };
    // the PATH argument
    let (ea, ca) = (section(&env, "Arguments:"), section(&check, "Arguments:"));
    assert!(ea.contains("describe"), "{env}");
    assert!(
        !ca.contains("describe") && ca.contains("check"),
        "check's PATH: {ca}"
    );
    // --json names each command's own schema, and only it
    let (eo, co) = (section(&env, "Options:"), section(&check, "Options:"));
    assert!(
        eo.contains("iolab-env/1") && !eo.contains("iolab-check/1"),
        "{eo}"
    );
    assert!(
        co.contains("iolab-check/1") && !co.contains("iolab-env/1"),
        "{co}"
    );
    assert!(!co.contains("for check"), "{co}");
    assert_ne!(ea, ca);
}

/// Every option of every subcommand has a description in its --help, and sweep/saturate list
/// the run options they accept.
#[test]
fn every_flag_of_every_subcommand_is_described() {
    fn commands(prefix: &[String]) -> Vec<Vec<String>> {
        let mut a: Vec<&str> = prefix.iter().map(|s| s.as_str()).collect();
        a.push("--help");
        let r = iolab(&a);
        assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
        let mut out = vec![prefix.to_vec()];
        let mut in_cmds = false;
        for l in r.stdout.lines() {
            if l.starts_with("Commands:") {
                in_cmds = true;
                continue;
            }
            if in_cmds {
                if !l.starts_with("  ") {
                    in_cmds = false;
                    continue;
                }
                // a command line: two spaces, the name, spaces, text (continuations are indented more)
                if l.starts_with("  ") && !l.starts_with("   ") {
                    let name = l.split_whitespace().next().unwrap().to_string();
                    if name != "help" {
                        let mut p = prefix.to_vec();
                        p.push(name);
                        out.extend(commands(&p));
                    }
                }
            }
        }
        out
    }
    let all = commands(&[]);
    assert!(all.len() > 20, "{all:?}");
    for cmd in &all[1..] {
        let mut a: Vec<&str> = cmd.iter().map(|s| s.as_str()).collect();
        a.push("--help");
        let help = iolab(&a).stdout;
        // the Options section: from "Options:" to the first blank line
        let lines: Vec<&str> = help
            .lines()
            .skip_while(|l| !l.starts_with("Options:"))
            .take_while(|l| !l.trim().is_empty())
            .collect();
        assert!(
            !lines.is_empty(),
            "iolab {}: no options: {help}",
            cmd.join(" ")
        );
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            if !(t.starts_with("--") || (t.starts_with('-') && t.get(2..4) == Some(", "))) {
                continue;
            }
            let indent = l.len() - t.len();
            if !(2..=6).contains(&indent) {
                continue; // not an option line: a wrapped description, or the after-help lists
            }
            let same_line = t
                .split_once("  ")
                .is_some_and(|(_, x)| !x.trim().is_empty());
            let next_line = lines.get(i + 1).is_some_and(|n| {
                let nt = n.trim_start();
                !nt.is_empty() && !nt.starts_with('-') && n.len() - nt.len() > indent
            });
            assert!(
                same_line || next_line,
                "iolab {}: `{}` has no description",
                cmd.join(" "),
                t.trim()
            );
        }
    }
    for cmd in ["sweep", "saturate"] {
        let help = iolab(&[cmd, "--help"]).stdout;
        for f in [
            "iolab run --help",
            "--bs",
            "--mode",
            "--direct",
            "--threads",
        ] {
            assert!(help.contains(f), "{cmd} --help does not name {f}: {help}");
        }
    }
}

/// The shape of a JSON value: every key path with its type (array elements merged), so two runs
/// of the same job compare equal while their figures differ.
fn shape(v: &serde_json::Value, path: &str, out: &mut std::collections::BTreeSet<String>) {
    use serde_json::Value as V;
    match v {
        V::Object(m) => {
            out.insert(format!("{path}: object"));
            for (k, x) in m {
                shape(x, &format!("{path}.{k}"), out);
            }
        }
        V::Array(a) => {
            out.insert(format!("{path}: array"));
            for x in a {
                shape(x, &format!("{path}[]"), out);
            }
        }
        V::Null => {
            out.insert(format!("{path}: null"));
        }
        V::Bool(_) => {
            out.insert(format!("{path}: bool"));
        }
        V::Number(_) => {
            out.insert(format!("{path}: number"));
        }
        V::String(_) => {
            out.insert(format!("{path}: string"));
        }
    }
}

/// `--output FILE` (`-o`): what stdout would have printed (JSON with --json, else the table)
/// goes to FILE, written whole after the run is saved, and stdout gets nothing; stderr says where.
#[test]
fn run_output_writes_the_result_to_a_file_instead_of_stdout() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let job = [
        "run",
        "--dir",
        set.to_str().unwrap(),
        "--engine",
        "null",
        "--mode",
        "rndrd,rndwr",
        "--ops",
        "200",
        "--seed",
        "1",
        "-q",
    ];
    let with = |extra: &[&str]| {
        let mut a = job.to_vec();
        a.extend_from_slice(extra);
        let r = iolab_db(&db, &a);
        assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
        r
    };
    // JSON
    let out = d.path().join("r.json");
    let r = with(&["--json", "--output", out.to_str().unwrap()]);
    assert_eq!(r.stdout, "", "nothing on stdout");
    assert!(
        r.stderr.contains(&format!("wrote {}", out.display())),
        "{}",
        r.stderr
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(file["schema"], "iolab-run/1");
    let printed = with(&["--json"]).json();
    let (mut a, mut b) = (Default::default(), Default::default());
    shape(&file, "", &mut a);
    shape(&printed, "", &mut b);
    assert_eq!(a, b, "the file has what stdout has");
    // The run was saved before the file was written: the store holds the same document.
    let shown = iolab_db(&db, &["show", "1", "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(shown.json(), file);
    // `show -o` writes exactly what `show` prints.
    let show = d.path().join("show.txt");
    let r = iolab_db(&db, &["show", "1", "-o", show.to_str().unwrap()]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&show).unwrap(),
        iolab_db(&db, &["show", "1"]).stdout
    );
    // The text table, with -o.
    let out = d.path().join("r.txt");
    let r = with(&["--no-save", "-o", out.to_str().unwrap()]);
    assert_eq!(r.stdout, "");
    let table = std::fs::read_to_string(&out).unwrap();
    let printed = with(&["--no-save"]).stdout;
    assert!(table.contains("rndwr") && table.contains("IOPS"), "{table}");
    assert_eq!(
        table.lines().count(),
        printed.lines().count(),
        "{table}\n{printed}"
    );
    assert_eq!(table.lines().next(), printed.lines().next());
    // Nothing but the files asked for (no temporary files) beside them, and the store's record
    // of its last passed integrity check (docs/store.md).
    assert_eq!(
        entries(d.path()),
        [
            "r.json",
            "r.txt",
            "results.db",
            "results.db.checked",
            "set",
            "show.txt"
        ]
    );
}

/// `--output FILE` is written whole or not at all: when the command fails (bad input, a run
/// refused, a store it cannot save into, a result that is not there) a FILE that already exists
/// keeps its contents and its inode, and no temporary file is left beside it.
#[test]
fn a_failing_command_leaves_an_existing_output_untouched() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let out = d.path().join("keep.json");
    let before = "{\"earlier\": \"result\"}\n";
    std::fs::write(&out, before).unwrap();
    let ino = std::fs::metadata(&out).unwrap().ino();
    let o = out.to_str().unwrap();
    let s = set.to_str().unwrap();
    let base = [
        "run", "--dir", s, "--engine", "null", "--ops", "100", "-q", "--json", "--output", o,
    ];
    let cases: Vec<(Vec<&str>, i32)> = vec![
        // bad input
        ([&base[..], &["--mode", "sideways"]].concat(), 2),
        // a --dir that is not there
        (
            vec![
                "run",
                "--dir",
                "/nonexistent/iolab",
                "--json",
                "--output",
                o,
            ],
            2,
        ),
        // a stored result that is not there
        (vec!["show", "99", "--json", "--output", o], 2),
    ];
    // an unreadable store: the run is refused before it measures
    let broken = d.path().join("broken.db");
    std::fs::write(&broken, vec![0x5a_u8; 8192]).unwrap();
    for (args, code) in cases {
        let r = iolab_db(&db, &args);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), before, "{args:?}");
        assert_eq!(std::fs::metadata(&out).unwrap().ino(), ino, "{args:?}");
    }
    let r = iolab_db(&broken, &base);
    assert_eq!(r.code, 2, "a run into a broken store: {}", r.stderr);
    assert!(r.stderr.contains("broken.db"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    assert_eq!(std::fs::metadata(&out).unwrap().ino(), ino);
    let names = entries(d.path());
    assert!(
        names.contains(&"keep.json".to_string()) && !names.iter().any(|n| n.ends_with(".tmp")),
        "no temporary file beside the output: {names:?}"
    );
    assert!(entries(&set).is_empty(), "nothing was prepared");
    // and the same command that succeeds replaces it whole
    let r = iolab_db(
        &db,
        &[&base[..], &["--mode", "rndrd", "--no-save"]].concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["schema"], "iolab-run/1");
}

/// An `--output` that cannot be written is refused before anything runs: one line naming
/// `--output` and the path, exit 2, nothing measured or saved, no file (not even a temporary one).
#[test]
fn an_unwritable_output_is_refused_before_the_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let run = |out: &str| {
        iolab_db(
            &db,
            &[
                "run",
                "--dir",
                set.to_str().unwrap(),
                "--engine",
                "null",
                "--mode",
                "rndrd",
                "--ops",
                "100",
                "-q",
                "--json",
                "--output",
                out,
            ],
        )
    };
    let missing = d.path().join("no/such/dir/r.json");
    for out in [missing.to_str().unwrap(), d.path().to_str().unwrap()] {
        let r = run(out);
        assert_eq!(r.code, 2, "{out}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "one line: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("--output {out}")),
            "{}",
            r.stderr
        );
        assert_eq!(r.stdout, "");
    }
    assert!(!db.exists(), "nothing was run or saved");
    assert_eq!(entries(d.path()), ["set"]);
    assert!(entries(&set).is_empty());
    // A directory the user may not write: as nobody (root ignores permissions).
    if !is_root() {
        return skip(
            "an_unwritable_output_is_refused_before_the_run",
            "needs root to run iolab as nobody",
        );
    }
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    std::fs::set_permissions(
        d.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    std::fs::set_permissions(&set, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let out = ro.join("r.json");
    let r = to_run(
        as_nobody(&mut std::process::Command::new(bin()))
            .args([
                "run",
                "--dir",
                set.to_str().unwrap(),
                "--engine",
                "null",
                "--mode",
                "rndrd",
                "--ops",
                "100",
                "-q",
                "--no-save",
                "-o",
                out.to_str().unwrap(),
            ])
            .env("IOLAB_DB", d.path().join("nobody.db"))
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "one line: {}", r.stderr);
    assert!(
        r.stderr.contains(&format!("--output {}", out.display())),
        "{}",
        r.stderr
    );
    assert!(entries(&ro).is_empty());
}

/// Every command that prints a result takes `--output FILE` (`-o`); the others do not
/// (`report` and `plot` write their own file with `-o`).
#[test]
fn every_command_that_prints_a_result_takes_output() {
    let printing: &[&[&str]] = &[
        &["run"],
        &["db"],
        &["sweep"],
        &["saturate"],
        &["suite", "sysbench-fileio"],
        &["suite", "iozone"],
        &["suite", "bonnie"],
        &["zones"],
        &["env"],
        &["check"],
        &["iostat"],
        &["fsync-probe"],
        &["list"],
        &["show"],
        &["compare"],
        &["export"],
        &["crashcheck", "write"],
        &["crashcheck", "verify"],
    ];
    for cmd in printing {
        let mut a = cmd.to_vec();
        a.push("--help");
        let help = iolab(&a).stdout;
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with("-o, --output <FILE>")),
            "iolab {}: no --output: {help}",
            cmd.join(" ")
        );
    }
    for cmd in ["prepare", "cleanup", "delete", "import"] {
        let help = iolab(&[cmd, "--help"]).stdout;
        assert!(!help.contains("--output <"), "iolab {cmd}: {help}");
    }
    // sweep and saturate take it as their own option, not as a run option of every cell
    for cmd in ["sweep", "saturate"] {
        let help = iolab(&[cmd, "--help"]).stdout;
        let (own, runs) = help.split_once("Run options").unwrap();
        assert!(own.contains("--output"), "{help}");
        assert!(!runs.contains("--output"), "{help}");
    }
}

/// `-o` after the run options of a sweep is the sweep's own: its matrix goes to the file.
#[test]
fn a_sweep_writes_its_matrix_to_output() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let out = d.path().join("sweep.json");
    let r = iolab_db(
        &db,
        &[
            "sweep",
            "--dir",
            set.to_str().unwrap(),
            "--engine",
            "null",
            "--mode",
            "rndrd",
            "--threads",
            "1,2",
            "--ops",
            "50",
            "--json",
            "-q",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["schema"], "iolab-sweep/1");
    assert_eq!(v["cells"].as_array().unwrap().len(), 2);
}

/// `--reprepare`: a set of other sizes is refused without it (the message names it) and left as
/// it is; with it, iolab's files of the set are replaced by a set of the new sizes and every other
/// file in --dir stays. The set was there before the run, so it stays after it too (in its new
/// sizes), as a set that fits does.
#[test]
fn reprepare_replaces_a_set_of_other_sizes_and_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let p = iolab(&[
        "prepare", "--dir", dir, "--files", "4", "--size", "8M", "-q",
    ]);
    assert_eq!(p.code, 0, "{}", p.stderr);
    // Files that are not iolab's set: never touched.
    for f in ["notes.txt", "iolab-file.x", "iolab-file."] {
        std::fs::write(d.path().join(f), f).unwrap();
    }
    let sizes = || -> Vec<u64> {
        (0..4)
            .filter_map(|i| std::fs::metadata(d.path().join(format!("iolab-file.{i}"))).ok())
            .map(|m| m.len())
            .collect()
    };
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--dir",
            dir,
            "--files",
            "4",
            "--mode",
            "rndrd",
            "--ops",
            "10",
            "--no-save",
            "-q",
        ];
        if !extra.contains(&"--size") {
            a.extend(["--size", "16M"]);
        }
        a.extend_from_slice(extra);
        iolab(&a)
    };
    let before = fingerprint(d.path());
    let r = run(&[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--reprepare") && r.stderr.contains("iolab cleanup --dir"),
        "{}",
        r.stderr
    );
    assert_eq!(fingerprint(d.path()), before, "refused: nothing touched");
    // With --reprepare and --keep: the set now has the new sizes and stays.
    let r = run(&["--reprepare", "--keep"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(sizes(), [4 << 20; 4]);
    for f in ["notes.txt", "iolab-file.x", "iolab-file."] {
        assert_eq!(std::fs::read_to_string(d.path().join(f)).unwrap(), f);
    }
    // A set that fits is reused as it is.
    let before = fingerprint(d.path());
    let r = run(&["--reprepare"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(fingerprint(d.path()), before);
    // Without --keep too, a replaced set was there before: it stays, in its new sizes, also over
    // repetitions (it was removed at the end before issue 28: re-prepared, then deleted).
    for (extra, each) in [
        (&["--size", "8M"][..], 2 << 20),
        (&["--size", "32M", "--repeat", "2"][..], 8 << 20),
    ] {
        let r = run(&[&["--reprepare"][..], extra].concat());
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        assert_eq!(sizes(), [each; 4], "{extra:?}");
        assert_eq!(
            entries(d.path()),
            [
                "iolab-file.",
                "iolab-file.0",
                "iolab-file.1",
                "iolab-file.2",
                "iolab-file.3",
                "iolab-file.x",
                "notes.txt"
            ]
        );
    }
    let p = iolab(&["cleanup", "--dir", dir]);
    assert_eq!(p.code, 0, "{}", p.stderr);
    let p = iolab(&[
        "prepare", "--dir", dir, "--files", "4", "--size", "16M", "-q",
    ]);
    assert_eq!(p.code, 0, "{}", p.stderr);
    // prepare: refused too, and --reprepare replaces the set (prepare keeps it).
    let p = iolab(&[
        "prepare", "--dir", dir, "--files", "4", "--size", "8M", "-q",
    ]);
    assert_eq!(p.code, 2, "{}", p.stderr);
    assert!(p.stderr.contains("--reprepare"), "{}", p.stderr);
    assert_eq!(sizes(), [4 << 20; 4]);
    let p = iolab(&[
        "prepare",
        "--dir",
        dir,
        "--files",
        "4",
        "--size",
        "8M",
        "-q",
        "--reprepare",
    ]);
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_eq!(sizes(), [2 << 20; 4]);
    assert_eq!(entries(d.path()).len(), 7);
}

/// The entries of `results.<op>.by_bs` as (bs_bytes, ops, bytes); checks they add up to the
/// op's totals exactly and that each entry's bytes are its ops × its size.
fn by_bs(v: &serde_json::Value, op: &str) -> Vec<(u64, u64, u64)> {
    let r = &v["results"][op];
    let e: Vec<(u64, u64, u64)> = r["by_bs"]
        .as_array()
        .unwrap_or_else(|| panic!("no results.{op}.by_bs in {r}"))
        .iter()
        .map(|b| {
            let bs = b["bs_bytes"].as_u64().unwrap();
            let (o, y) = (b["ops"].as_u64().unwrap(), b["bytes"].as_u64().unwrap());
            assert_eq!(y, o * bs, "{b}");
            if o > 0 {
                assert!(b["lat_ns"]["p50"].as_u64().is_some(), "{b}");
                assert!(b["iops"].as_f64().unwrap() > 0.0, "{b}");
            }
            (bs, o, y)
        })
        .collect();
    assert_eq!(e.iter().map(|x| x.1).sum::<u64>(), ops(v, op), "{op} ops");
    assert_eq!(
        e.iter().map(|x| x.2).sum::<u64>(),
        r["bytes"].as_u64().unwrap(),
        "{op} bytes"
    );
    e
}

#[test]
fn a_bs_mix_reports_each_size_by_its_share() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--bs",
            "4k:50,64k:50",
            "--mode",
            "rndrd",
            "--engine",
            "psync",
            "--ops",
            "4000",
            "--seed",
            "3",
        ],
    );
    assert_eq!(v["job"]["bs_bytes"], 65536, "bs_bytes is the largest size");
    assert_eq!(
        v["job"]["bs_mix"],
        serde_json::json!([{"bs_bytes": 4096, "weight_pct": 50}, {"bs_bytes": 65536, "weight_pct": 50}])
    );
    assert!(v["job"].get("bs_range").is_none());
    let e = by_bs(&v, "read");
    assert_eq!(e.iter().map(|x| x.0).collect::<Vec<_>>(), vec![4096, 65536]);
    for (bs, o, _) in &e {
        let share = *o as f64 / 4000.0;
        assert!((share - 0.5).abs() < 0.04, "{bs}: {share}");
    }
    assert!(
        v["results"]["write"].get("by_bs").is_none(),
        "no writes, no breakdown"
    );
    // a single size keeps today's document: no mix, no breakdown
    let v = rj(
        d.path(),
        &["--bs", "16k", "--mode", "rndrd", "--ops", "100"],
    );
    assert_eq!(v["job"]["bs_bytes"], 16384);
    assert!(v["job"].get("bs_mix").is_none() && v["job"].get("bs_range").is_none());
    assert!(v["results"]["read"].get("by_bs").is_none());
}

#[test]
fn a_bs_range_keeps_every_size_on_its_steps_and_inside_the_files() {
    let d = tempfile::tempdir().unwrap();
    for mode in ["rndrw", "seqrd"] {
        let v = rj(
            d.path(),
            &[
                "--bs",
                "4k-32k",
                "--mode",
                mode,
                "--ops",
                "3000",
                "--threads",
                "2",
                "--fsync-freq",
                "0",
                "--no-fsync-end",
            ],
        );
        assert_eq!(
            v["job"]["bs_range"],
            serde_json::json!({"min_bytes": 4096, "max_bytes": 32768, "step_bytes": 4096})
        );
        assert!(
            v["errors"].as_object().unwrap().is_empty(),
            "{mode}: {}",
            v["errors"]
        );
        let ops_read = by_bs(&v, "read");
        assert_eq!(ops_read.len(), 8, "{mode}: one entry per size");
        for (bs, o, _) in &ops_read {
            assert!(
                bs % 4096 == 0 && (4096..=32768).contains(bs),
                "{mode}: {bs}"
            );
            assert!(*o > 0, "{mode}: {bs} was never issued");
        }
        if mode == "rndrw" {
            by_bs(&v, "write");
        }
    }
}

#[test]
fn the_run_table_breaks_a_mix_down_by_size() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--no-save",
        "-q",
        // one 16 MiB file: a 1 MiB read fits at 15/16 of its 16 KiB offsets (as fio, a size
        // that does not fit where the offset fell is drawn again; in 1 MiB files only offset 0
        // takes one, and 200 reads saw none)
        "--files",
        "1",
        "--size",
        "16M",
        "--bs",
        "16k:70,1m:30",
        "--mode",
        "rndrd",
        "--ops",
        "200",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for want in ["16KiB:70,1MiB:30", "  read 16KiB", "  read 1MiB"] {
        assert!(r.stdout.contains(want), "{want}: {}", r.stdout);
    }
}

#[test]
fn rwmixread_is_stored_as_the_same_rw_ratio() {
    let d = tempfile::tempdir().unwrap();
    let base = [
        "--mode",
        "rndrw",
        "--ops",
        "1000",
        "--seed",
        "5",
        "--fsync-freq",
        "0",
        "--no-fsync-end",
    ];
    // rw_ratio is reads per write: 70 % reads = 70/30 reads per write
    let fio = rj(d.path(), &[&base[..], &["--rwmixread", "70"]].concat());
    let sb = rj(
        d.path(),
        &[&base[..], &["--rw-ratio", &(70.0f64 / 30.0).to_string()]].concat(),
    );
    assert_eq!(fio["job"], sb["job"]);
    assert_eq!(fio["job"]["rw_ratio"].as_f64(), Some(70.0 / 30.0));
    assert_eq!((ops(&fio, "read"), ops(&fio, "write")), (700, 300));
    // both spellings together are fine when they agree
    let both = rj(
        d.path(),
        &[&base[..], &["--rwmixread", "60", "--rw-ratio", "1.5"]].concat(),
    );
    assert_eq!((ops(&both, "read"), ops(&both, "write")), (600, 400));
    // the ends: all writes, all reads
    let w = rj(d.path(), &[&base[..], &["--rwmixread", "0"]].concat());
    assert_eq!((ops(&w, "read"), ops(&w, "write")), (0, 1000));
    let r = rj(d.path(), &[&base[..], &["--rwmixread", "100"]].concat());
    assert_eq!((ops(&r, "read"), ops(&r, "write")), (1000, 0));
}

#[test]
fn a_zoned_distribution_is_run_and_recorded() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--mode",
            "rndrd",
            "--ops",
            "200",
            "--distribution",
            "zoned:50/5:30/15:20/80",
        ],
    );
    assert_eq!(ops(&v, "read"), 200);
    assert_eq!(
        v["job"]["distribution"],
        serde_json::json!({"kind": "zoned", "zones": [
            {"access_pct": 50, "size_pct": 5},
            {"access_pct": 30, "size_pct": 15},
            {"access_pct": 20, "size_pct": 80}]})
    );
}

/// Runs `iolab args` with the system call `nr` failing with `errno` (a seccomp filter installed in
/// the child).
fn failing_syscall(nr: libc::c_long, errno: u32, args: &[&str]) -> Run {
    use std::os::unix::process::CommandExt;
    // BPF: load the system call number; `nr` returns errno, everything else runs.
    let filter = [
        libc::sock_filter {
            code: 0x20, // BPF_LD | BPF_W | BPF_ABS
            jt: 0,
            jf: 0,
            k: 0, // offsetof(struct seccomp_data, nr)
        },
        libc::sock_filter {
            code: 0x15, // BPF_JMP | BPF_JEQ | BPF_K
            jt: 0,
            jf: 1,
            k: nr as u32,
        },
        libc::sock_filter {
            code: 0x06, // BPF_RET | BPF_K
            jt: 0,
            jf: 0,
            k: 0x0005_0000 | errno, // SECCOMP_RET_ERRNO
        },
        libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0x7fff_0000, // SECCOMP_RET_ALLOW
        },
    ];
    let mut cmd = std::process::Command::new(bin());
    cmd.args(args).env("IOLAB_DB", test_db());
    // SAFETY: only prctl between fork and exec; the filter lives in this frame.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    to_run(cmd.output().expect("run iolab"))
}

/// io_setup failing as on a kernel without AIO (ENOSYS) or with fs.aio-max-nr used up (EAGAIN).
fn without_aio(errno: u32, args: &[&str]) -> Run {
    failing_syscall(libc::SYS_io_setup, errno, args)
}

#[test]
fn libaio_without_aio_is_refused_up_front_with_the_cause() {
    let d = tempfile::tempdir().unwrap();
    let set = d.path().join("set");
    let dir = set.to_str().unwrap();
    for (errno, cause) in [(libc::ENOSYS, "ENOSYS"), (libc::EAGAIN, "fs.aio-max-nr")] {
        let r = without_aio(
            errno as u32,
            &[
                "run",
                "--dir",
                dir,
                "--engine",
                "libaio",
                "--mode",
                "rndrd",
                "--ops",
                "10",
                "--no-save",
            ],
        );
        assert_eq!(r.code, 2, "{cause}: {}", r.stderr);
        assert!(
            r.stderr.contains("--engine libaio") && r.stderr.contains(cause),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
    }
    // The same filter leaves the other engines alone (the filter is not what refuses).
    let r = without_aio(
        libc::ENOSYS as u32,
        &[
            "run",
            "--dir",
            d.path().to_str().unwrap(),
            "--engine",
            "sync",
            "--mode",
            "rndrd",
            "--ops",
            "10",
            "--files",
            "1",
            "--size",
            "1M",
            "--no-save",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// io_submit refusing every iocb with EINVAL, as kernels before 4.18 refuse AIO fsync: each
/// refused write is counted by errno and the rest go on, and fsyncs fall back to fsync(2).
#[test]
fn libaio_counts_refused_submissions_and_falls_back_to_a_plain_fsync() {
    let d = tempfile::tempdir().unwrap();
    let r = failing_syscall(
        libc::SYS_io_submit,
        libc::EINVAL as u32,
        &[
            "run",
            "--dir",
            d.path().to_str().unwrap(),
            "--engine",
            "libaio",
            "--iodepth",
            "4",
            "--mode",
            "seqrewr",
            "--ops",
            "40",
            "--fsync-freq",
            "10",
            "--files",
            "1",
            "--size",
            "1M",
            "--json",
            "--no-save",
            "-q",
        ],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    let v = r.json();
    assert_eq!(
        v["errors"],
        serde_json::json!({"EINVAL": 40}),
        "{}",
        v["errors"]
    );
    // 40 writes to one file: an fsync after every 10th, and none left dirty at the end
    assert_eq!(ops(&v, "fsync"), 4, "{}", v["results"]);
}

/// The report lines of stderr (`[ 2s ] rndrw 2t  read: 1234 IOPS 19.28 MiB/s p99 0.452 ms  ...`):
/// (stamp with `ramp ` when in the ramp, seconds, mode and threads, [(op, IOPS or count, MiB/s,
/// p99 ms)]).
type ReportLine = (
    bool,
    f64,
    String,
    Vec<(String, f64, Option<f64>, Option<f64>)>,
);

fn report_lines(stderr: &str) -> Vec<ReportLine> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("[ ")?;
            let (stamp, rest) = rest.split_once(" ] ")?;
            let (ramp, t) = match stamp.strip_prefix("ramp ") {
                Some(t) => (true, t),
                None => (false, stamp),
            };
            let t: f64 = t.strip_suffix('s')?.parse().ok()?;
            let mut parts = rest.split("  ");
            let cell = parts.next()?.to_string();
            let ops = parts
                .map(|p| {
                    let (op, figs) = p.split_once(": ").expect("op: figures");
                    let w: Vec<&str> = figs.split(' ').collect();
                    let num = |s: &str| s.parse::<f64>().ok();
                    match w.as_slice() {
                        [n, "IOPS", mib, "MiB/s", "p99", p, "ms"] => {
                            (op.to_string(), num(n).unwrap(), num(mib), num(p))
                        }
                        [n, "p99", p, "ms"] => (op.to_string(), num(n).unwrap(), None, num(p)),
                        _ => panic!("unexpected report line: {l}"),
                    }
                })
                .collect();
            Some((ramp, t, cell, ops))
        })
        .collect()
}

#[test]
fn report_interval_prints_lines_on_stderr_while_stdout_stays_json() {
    let d = tempfile::tempdir().unwrap();
    // stdout and stderr are pipes, and -q is given: the lines still come, on stderr
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--engine",
        "null",
        "--mode",
        "rndrw",
        "--threads",
        "2",
        "--ramp",
        "1",
        "--time",
        "3",
        "--report-interval",
        "1",
        "--json",
        "--no-save",
        "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let lines = report_lines(&r.stderr);
    let (ramp, measured): (Vec<_>, Vec<_>) = lines.iter().partition(|l| l.0);
    assert_eq!(ramp.len(), 1, "one ramp line: {}", r.stderr);
    assert_eq!(ramp[0].1, 1.0);
    assert!(measured.len() >= 2, "a line per second: {}", r.stderr);
    for (i, l) in measured.iter().enumerate() {
        assert_eq!(l.2, "rndrw 2t", "{}", r.stderr);
        let names: Vec<&str> = l.3.iter().map(|o| o.0.as_str()).collect();
        assert_eq!(names, ["read", "write", "fsync"], "{}", r.stderr);
        if i + 1 < measured.len() {
            assert_eq!(l.1, (i + 1) as f64, "whole seconds: {}", r.stderr);
        }
        for (op, n, mib, p99) in &l.3 {
            assert!(*n > 0.0, "{op}: {}", r.stderr);
            assert!(p99.is_some(), "{op} p99: {}", r.stderr);
            if op != "fsync" {
                assert!(mib.unwrap() > 0.0, "{op}: {}", r.stderr);
            }
        }
    }
    // rates × interval lengths add up to what the document counted
    let mut prev = 0.0;
    let (mut reads, mut fsyncs) = (0.0, 0.0);
    for l in &measured {
        reads += l.3[0].1 * (l.1 - prev);
        fsyncs += l.3[2].1;
        prev = l.1;
    }
    for (what, lines, doc) in [
        ("read", reads, ops(&v, "read") as f64),
        ("fsync", fsyncs, ops(&v, "fsync") as f64),
    ] {
        assert!(
            (lines - doc).abs() <= 0.2 * doc,
            "{what}: lines {lines} vs document {doc}: {}",
            r.stderr
        );
    }
}

#[test]
fn report_interval_shows_only_the_operations_of_each_mode() {
    let d = tempfile::tempdir().unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--files",
        "2",
        "--size",
        "4M",
        "--mode",
        "rndrd,rndwr",
        "--fsync-end=false",
        "--fsync-freq",
        "0",
        "--time",
        "1",
        "--report-interval",
        "0.5",
        "--json",
        "--no-save",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json();
    let lines = report_lines(&r.stderr);
    let cells: Vec<(&str, Vec<&str>)> = lines
        .iter()
        .map(|l| (l.2.as_str(), l.3.iter().map(|o| o.0.as_str()).collect()))
        .collect();
    assert!(
        cells.contains(&("rndrd 1t", vec!["read"])) && cells.contains(&("rndwr 1t", vec!["write"])),
        "{}",
        r.stderr
    );
    assert!(
        cells
            .iter()
            .all(|c| c == &("rndrd 1t", vec!["read"]) || c == &("rndwr 1t", vec!["write"])),
        "{}",
        r.stderr
    );
    assert!(lines.iter().any(|l| l.1 == 0.5), "{}", r.stderr);
}

#[test]
fn ctrl_c_with_report_interval_still_prints_what_was_measured() {
    let d = tempfile::tempdir().unwrap();
    let out = interrupt_after_stderr(
        std::process::Command::new(bin())
            .args([
                "run",
                "--dir",
                d.path().to_str().unwrap(),
                "--engine",
                "null",
                "--mode",
                "rndrd",
                "--time",
                "30",
                "--report-interval",
                "0.5",
                "--json",
                "--no-save",
            ])
            .env("IOLAB_DB", test_db()),
        "[ 0.5s ] rndrd 1t  read: ",
    );
    let r = to_run(out);
    assert_eq!(r.code, 130, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["interrupted"], true);
    assert!(ops(&v, "read") > 0);
    assert!(!report_lines(&r.stderr).is_empty(), "{}", r.stderr);
}

/// `--layout`: prepare makes each layout (and reuses a set that has it), a run records it in the
/// document, makes it afresh before each mode and leaves a kept set with it; a set of another
/// layout is refused (--reprepare replaces it); read modes on holes need --force and warn.
#[test]
fn layouts_are_prepared_recorded_and_made_afresh() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let set = ["--dir", dir, "--files", "2", "--size", "8M"];
    let prep = |layout: &str| {
        let mut a = vec!["prepare", "--layout", layout];
        a.extend_from_slice(&set);
        iolab(&a)
    };
    let md = |i: u32| std::fs::metadata(d.path().join(format!("iolab-file.{i}"))).unwrap();
    // holes: full size, nothing allocated; prepared again: reused
    let r = prep("holes");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("2 made"), "{}", r.stdout);
    for i in 0..2 {
        assert_eq!(md(i).len(), 4 << 20);
        assert!(
            md(i).blocks() * 512 <= 64 << 10,
            "sparse: {}",
            md(i).blocks()
        );
    }
    assert!(prep("holes").stdout.contains("2 reused"));
    // a set of another layout is refused, naming the flag, and left alone
    let r = prep("extend");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--layout extend") && r.stderr.contains("--reprepare"));
    assert_eq!(md(0).len(), 4 << 20);
    // a write run over the holes: recorded, and the kept set is holes again afterwards
    let mut a = vec![
        "--layout", "holes", "--mode", "rndwr", "--ops", "200", "--files", "2", "--size", "8M",
    ];
    let v = run_json(d.path(), &a);
    assert_eq!(v["job"]["layout"], "holes", "{}", v["job"]);
    let codes: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"layout_allocating_writes"), "{codes:?}");
    for i in 0..2 {
        assert!(md(i).blocks() * 512 <= 64 << 10, "made again after the run");
    }
    // overwrite completes the sparse set in place (written data); holes then refuses it
    let r = prep("overwrite");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(md(0).blocks() * 512 >= md(0).len());
    a.extend_from_slice(&["--dir", dir, "--json", "--no-save", "-q"]);
    let mut run = vec!["run"];
    run.extend_from_slice(&a);
    let r = iolab(&run);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--layout holes"), "{}", r.stderr);
    // --reprepare replaces it (iolab's files only); a set that was there stays, in the new layout
    std::fs::write(d.path().join("mine.txt"), b"user data").unwrap();
    run.push("--reprepare");
    let r = iolab(&run);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        entries(d.path()),
        vec!["iolab-file.0", "iolab-file.1", "mine.txt"]
    );
    let r = iolab(&["cleanup", "--dir", dir]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(entries(d.path()), vec!["mine.txt"]);
    // extend: empty files; seqwr grows them
    let r = prep("extend");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(md(0).len(), 0);
    let v = run_json(
        d.path(),
        &[
            "--layout", "extend", "--mode", "seqwr", "--ops", "64", "--files", "2", "--size", "8M",
        ],
    );
    assert_eq!(v["job"]["layout"], "extend");
    assert_eq!(md(0).len(), 0, "the kept extend set is empty again");
    // unwritten: allocated, reads return zeros, FIEMAP (where there is one) says unwritten
    let r = prep("unwritten");
    assert_eq!(r.code, 2, "an extend set is not unwritten: {}", r.stderr);
    iolab(&["cleanup", "--dir", dir]);
    let r = prep("unwritten");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let f = d.path().join("iolab-file.1");
    assert!(md(1).blocks() * 512 >= 4 << 20, "preallocated");
    assert!(std::fs::read(&f).unwrap().iter().all(|&b| b == 0));
    if let Ok((mapped, unwritten)) =
        iolab::engine::fileset::extent_bytes(&std::fs::File::open(&f).unwrap())
    {
        assert!(
            mapped >= 4 << 20 && unwritten >= 4 << 20,
            "{mapped} {unwritten}"
        );
    }
    // a read mode on unwritten extents runs only with --force, and says what it measured
    let v = run_json(
        d.path(),
        &[
            "--layout",
            "unwritten",
            "--mode",
            "rndrd",
            "--force",
            "--ops",
            "50",
            "--files",
            "2",
            "--size",
            "8M",
        ],
    );
    let warned = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "layout_reads_zeros");
    assert!(warned, "{}", v["warnings"]);
    // and holes the same
    iolab(&["cleanup", "--dir", dir]);
    let v = run_json(
        d.path(),
        &[
            "--layout", "holes", "--mode", "rndrd", "--force", "--ops", "50", "--files", "2",
            "--size", "8M",
        ],
    );
    assert_eq!(v["job"]["layout"], "holes");
    let warned = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "layout_reads_zeros");
    assert!(warned, "{}", v["warnings"]);
    assert_eq!(
        entries(d.path()),
        vec!["mine.txt"],
        "the run's own set is removed"
    );
}

/// `--role`: the roles run at once, each with its own job, threads and results; the cell's
/// results are their totals.
#[test]
fn roles_run_at_once_each_with_its_own_results() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--engine",
            "null",
            "--time",
            "0.4",
            "--role",
            "a:mode=rndrd,threads=2",
            "--role",
            "b:mode=rndwr,threads=1,bs=4k,fsync-freq=10",
        ],
    );
    assert_eq!(v["mode"], "roles");
    let roles = v["roles"].as_array().unwrap();
    let names: Vec<&str> = roles.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b"]);
    let (a, b) = (&roles[0], &roles[1]);
    assert_eq!(a["mode"], "rndrd");
    assert_eq!(a["job"]["threads"], 2);
    assert_eq!(b["job"]["threads"], 1);
    assert_eq!(b["job"]["bs_bytes"], 4096);
    assert!(ops(a, "read") > 0 && ops(a, "write") == 0);
    assert!(ops(b, "write") > 0 && ops(b, "read") == 0);
    assert_eq!(
        b["results"]["write"]["bytes"].as_u64().unwrap(),
        4096 * ops(b, "write")
    );
    assert!(ops(b, "fsync") > 0, "fsync-freq=10 of role b: {b}");
    // the same window for both, and totals that add up
    assert_eq!(a["window_s"], b["window_s"]);
    assert_eq!(ops(&v, "read"), ops(a, "read"));
    assert_eq!(ops(&v, "write"), ops(b, "write"));
    assert_eq!(v["job"]["threads"], 3);
    // the table shows one block per role
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--no-save",
        "-q",
        "--engine",
        "null",
        "--ops",
        "100",
        "--role",
        "a:mode=rndrd",
        "--role",
        "b:mode=rndwr",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("a (rndrd)") && r.stdout.contains("b (rndwr)"),
        "{}",
        r.stdout
    );
}

/// Roles without size=/files= share the run's file set; a role with them has its own in
/// DIR/NAME/; both are removed afterwards when this run created them.
#[test]
fn roles_share_the_file_set_or_have_their_own() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &[
            "--time",
            "0.3",
            "--role",
            "log:mode=seqwr,bs=4k,fsync-freq=1,fsync-mode=fdatasync,size=256k,files=1",
            "--role",
            "rd:mode=rndrd,threads=2",
        ],
    );
    let roles = v["roles"].as_array().unwrap();
    let dir = d.path().to_str().unwrap();
    assert_eq!(roles[0]["job"]["dir"], format!("{dir}/log"));
    assert_eq!(roles[0]["job"]["files"], 1);
    assert_eq!(roles[0]["job"]["total_bytes"], 256 * 1024);
    assert_eq!(roles[1]["job"]["dir"], dir);
    assert_eq!(roles[1]["job"]["files"], 4);
    let log = &roles[0];
    assert!(ops(log, "write") > 0);
    assert!(
        ops(log, "fsync") + 1 >= ops(log, "write"),
        "an fdatasync after each write: {log}"
    );
    assert!(ops(&roles[1], "read") > 0);
    assert!(
        entries(d.path()).is_empty(),
        "the run removed the sets it created: {:?}",
        entries(d.path())
    );
    // repetitions keep the sets between them and remove them after the last
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--files",
        "4",
        "--size",
        "4M",
        "--no-save",
        "-q",
        "--repeat",
        "2",
        "--time",
        "0.2",
        "--role",
        "log:mode=seqwr,bs=4k,size=256k,files=1",
        "--role",
        "rd:mode=rndrd",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
    // --profile db: wal, reads, checkpoint
    let v = rj(
        d.path(),
        &["--profile", "db", "--engine", "null", "--time", "0.3"],
    );
    let roles = v["roles"].as_array().unwrap();
    let got: Vec<(&str, u64)> = roles
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["job"]["threads"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("wal", 1), ("reads", 8), ("checkpoint", 2)]);
    assert_eq!(roles[0]["job"]["fsync_mode"], "fdatasync");
    assert_eq!(roles[0]["job"]["bs_bytes"], 4096);
    assert_eq!(roles[2]["job"]["direct"], false);
}

/// `--profile db` is what issue 13 names: the log writer (4 KiB appends to an empty file, each
/// followed by an fdatasync, 1 thread), page reads (16 KiB random, O_DIRECT, 8 threads) and
/// checkpoint writes (16 KiB random, buffered, an fsync of each file written every 2 seconds,
/// 2 threads); and with a real engine the log writer really syncs each append.
#[test]
fn profile_db_is_the_log_writer_page_reads_and_checkpoint_writes() {
    let d = tempfile::tempdir().unwrap();
    let v = rj(
        d.path(),
        &["--profile", "db", "--engine", "sync", "--time", "0.5"],
    );
    let roles = v["roles"].as_array().unwrap();
    let job = |i: usize, k: &str| roles[i]["job"][k].clone();
    let names: Vec<&str> = roles.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["wal", "reads", "checkpoint"]);
    // wal
    assert_eq!(job(0, "mode"), "seqwr");
    assert_eq!(job(0, "layout"), "extend");
    assert_eq!(job(0, "bs_bytes"), 4096);
    assert_eq!(job(0, "fsync_freq"), 1);
    assert_eq!(job(0, "fsync_mode"), "fdatasync");
    assert_eq!(job(0, "threads"), 1);
    assert_eq!(job(0, "files"), 1);
    // reads
    assert_eq!(job(1, "mode"), "rndrd");
    assert_eq!(job(1, "bs_bytes"), 16384);
    assert_eq!(job(1, "threads"), 8);
    assert_eq!(job(1, "direct"), true);
    // checkpoint
    assert_eq!(job(2, "mode"), "rndwr");
    assert_eq!(job(2, "bs_bytes"), 16384);
    assert_eq!(job(2, "direct"), false);
    assert_eq!(
        job(2, "fsync_freq"),
        0,
        "the checkpoint syncs by time, not by count"
    );
    assert_eq!(job(2, "fsync_every_s"), 2.0);
    assert_eq!(job(2, "threads"), 2);
    assert!(job(0, "fsync_every_s").is_null() && job(1, "fsync_every_s").is_null());
    // what each role did: the log writer synced every append (and no more than one extra at
    // the end), the readers only read, the checkpoint wrote and, in 0.5 s, less than its 2 s
    // period, synced only at the end of the mode (each file its threads touched, once each)
    let (w, f) = (ops(&roles[0], "write"), ops(&roles[0], "fsync"));
    assert!(
        w > 0 && (w..=w + 1).contains(&f),
        "wal: {w} writes, {f} fsyncs"
    );
    assert!(ops(&roles[1], "read") > 0 && ops(&roles[1], "write") == 0);
    let (w, f) = (ops(&roles[2], "write"), ops(&roles[2], "fsync"));
    let files = job(2, "files").as_u64().unwrap();
    assert!(
        w > 0 && (1..=2 * files).contains(&f),
        "checkpoint: {w} writes, {f} fsyncs"
    );
}

#[test]
fn bad_roles_are_refused_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, want) in [
        (
            vec!["--role", "wal:mode=seqwr,colour=blue"],
            "--role wal: unknown key 'colour'",
        ),
        (vec!["--role", "wal:threads=0"], "--role wal:"),
        (
            vec!["--role", "w:mode=seqwr"],
            "--role w: seqwr empties its files first",
        ),
        (vec!["--role", "r:bs=4k"], "--role r: give the role a mode"),
        (vec!["--role", "r:mode=rndrd,rndwr"], "one mode per role"),
        (
            vec!["--role", "r:mode=rndrd", "--role", "r:mode=rndwr"],
            "given twice",
        ),
        (vec!["--profile", "oltp"], "not a profile"),
        (
            vec!["--mode", "rndrd,rndwr", "--profile", "db"],
            "--mode with --role",
        ),
    ] {
        let mut a = vec!["run", "--dir", dir, "--no-save", "-q", "--time", "0.1"];
        a.extend_from_slice(&args);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
    let r = iolab(&[
        "sweep",
        "--dir",
        dir,
        "--threads",
        "1,2",
        "--role",
        "a:mode=rndrd",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("takes no roles"), "{}", r.stderr);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// `--report-interval` with roles: one line per interval per role, named `role NAME`, each
/// summing that role's own threads; stdout stays the JSON document.
#[test]
fn report_interval_with_roles_prints_a_line_per_role() {
    let d = tempfile::tempdir().unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--engine",
        "null",
        "--time",
        "2",
        "--report-interval",
        "1",
        "--role",
        "wal:mode=seqwr,threads=1,fsync-freq=1,size=1m,files=1",
        "--role",
        "reads:mode=rndrd,threads=2",
        "--json",
        "--no-save",
        "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["mode"], "roles");
    let lines = report_lines(&r.stderr);
    let of = |name: &str| -> Vec<_> { lines.iter().filter(|l| l.2 == name).collect() };
    let (wal, reads) = (of("role wal 1t"), of("role reads 2t"));
    assert!(wal.len() >= 2 && reads.len() >= 2, "{}", r.stderr);
    assert_eq!(wal.len(), reads.len(), "{}", r.stderr);
    assert_eq!(lines.len(), wal.len() + reads.len(), "{}", r.stderr);
    // each role's own operations: writes and fsyncs for wal, reads for reads
    let kinds = |l: &&ReportLine| -> Vec<String> { l.3.iter().map(|o| o.0.clone()).collect() };
    assert_eq!(kinds(&wal[0]), ["write", "fsync"], "{}", r.stderr);
    assert_eq!(kinds(&reads[0]), ["read"], "{}", r.stderr);
    assert!(wal[0].3[0].1 > 0.0 && reads[0].3[0].1 > 0.0, "{}", r.stderr);
}

// ------------------------------------------------ issue 24: hostile input gets one line, exit 2

/// `iolab run --dir D --mode rndrd --size 1M --files 1 --no-save -q <extra>` with the store and
/// working directory private to the test.
fn refused_run(d: &std::path::Path, extra: &[&str]) -> Run {
    let dir = d.join("set");
    std::fs::create_dir_all(&dir).unwrap();
    let mut a = vec![
        "run",
        "--dir",
        dir.to_str().unwrap(),
        "--mode",
        "rndrd",
        "--size",
        "1M",
        "--files",
        "1",
        "--no-save",
        "-q",
    ];
    a.extend_from_slice(extra);
    let r = to_run(
        std::process::Command::new(bin())
            .args(&a)
            .current_dir(d)
            .env("IOLAB_DB", d.join("r.db"))
            .output()
            .unwrap(),
    );
    assert!(
        entries(&dir).is_empty(),
        "{extra:?} left {:?}",
        entries(&dir)
    );
    r
}

/// Durations past what the clock arithmetic holds panicked (exit 101) and left iolab-file.0.
#[test]
fn huge_durations_are_refused_naming_the_flag() {
    let d = tempfile::tempdir().unwrap();
    for (flag, v) in [
        ("--time", "1e99"),
        ("--time", "1e19"),
        ("--time", "inf"),
        ("--time", "NaN"),
        ("--ramp", "1e99"),
        ("--iostat-interval", "1e99"),
        ("--report-interval", "1e99"),
        ("--fsync-every", "1e99"),
        ("--rank-timeout", "1e99"),
    ] {
        let r = refused_run(d.path(), &[flag, v]);
        assert_refused(&r, &format!("'{flag} <"));
    }
    assert_eq!(entries(d.path()), ["set"]);
}

/// A negative value said "unexpected argument '-1' found" without naming the flag.
#[test]
fn negative_values_are_refused_naming_the_flag() {
    let d = tempfile::tempdir().unwrap();
    for flag in [
        "--threads",
        "--iodepth",
        "--files",
        "--size",
        "--bs",
        "--rate",
        "--ops",
        "--time",
        "--ramp",
        "--fsync-freq",
        "--fsync-every",
        "--seed",
        "--rw-ratio",
        "--rwmixread",
        "--repeat",
        "--offset",
        "--iostat-interval",
        "--report-interval",
        "--rank-timeout",
    ] {
        let extra: &[&str] = if matches!(flag, "--size" | "--files") {
            // given once: the helper's own --size/--files are replaced by a second run below
            &[]
        } else {
            &[flag, "-1"]
        };
        if extra.is_empty() {
            let r = iolab(&["run", "--no-save", flag, "-1"]);
            assert_refused(&r, &format!("'{flag} <"));
            continue;
        }
        let r = refused_run(d.path(), extra);
        assert_refused(&r, &format!("'{flag} <"));
    }
}

/// `--mode rndrd,,rndwr` and `--distribution zipf:1e99` ran; a role key given twice silently
/// took the last.
#[test]
fn typos_in_modes_distributions_and_roles_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let r = refused_run(d.path(), &["--mode", "rndrd,,rndwr"]);
    assert_refused(&r, "--mode");
    let r = refused_run(d.path(), &["--distribution", "zipf:1e99"]);
    assert_refused(&r, "zipf THETA must be at most 100");
    let r = refused_run(d.path(), &["--distribution", "zipf:NaN"]);
    assert_refused(&r, "--distribution");
    let r = iolab(&[
        "run",
        "--no-save",
        "--dir",
        d.path().to_str().unwrap(),
        "--role",
        "a:mode=rndrd,threads=1,threads=2",
    ]);
    assert_refused(&r, "--role a: threads is given twice");
}

/// A run refused after `./iolab-data` was made (here: more threads than fit) left it behind.
#[test]
fn a_refused_run_leaves_no_default_dir() {
    let d = tempfile::tempdir().unwrap();
    for extra in [
        &["--threads", "4000000000"][..],
        &["--time", "1e99"],
        &["--bs", "3", "--direct"],
    ] {
        let mut a = vec!["run", "--mode", "rndrd", "--no-save", "-q"];
        a.extend_from_slice(extra);
        let r = to_run(
            std::process::Command::new(bin())
                .args(&a)
                .current_dir(d.path())
                .env("IOLAB_DB", d.path().join("r.db"))
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stderr);
        assert!(
            entries(d.path()).is_empty(),
            "{extra:?} left {:?}",
            entries(d.path())
        );
    }
    // the same for prepare and db (whose SQLite file goes in the default --dir)
    for args in [
        &["prepare", "--size", "0"][..],
        &["prepare", "--files", "3", "--size", "4k"],
        &["db", "--page-size", "3", "--transactions", "1", "--no-save"],
    ] {
        let r = to_run(
            std::process::Command::new(bin())
                .args(args)
                .current_dir(d.path())
                .env("IOLAB_DB", d.path().join("r.db"))
                .output()
                .unwrap(),
        );
        assert_refused(&r, "--");
        assert!(
            entries(d.path()).is_empty(),
            "{args:?} left {:?}",
            entries(d.path())
        );
    }
}
