//! `iolab sweep` and `iolab saturate` without special privileges.

use crate::common::*;

fn base(dir: &std::path::Path) -> Vec<String> {
    [
        "--dir",
        dir.to_str().unwrap(),
        "--files",
        "2",
        "--size",
        "2M",
        "--engine",
        "null",
        "--time",
        "0.2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn a_sweep_runs_the_cross_product_and_prints_a_matrix() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut a = vec![
        "sweep".to_string(),
        "--threads".into(),
        "1,2".into(),
        "--mode".into(),
        "rndrd,rndwr,rndrw".into(),
        "--json".into(),
    ];
    a.extend(base(&data));
    let av: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    let r = iolab_db(&db, &av);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["schema"], "iolab-sweep/1");
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    assert_eq!(
        cells[0]["cell"],
        serde_json::json!({"threads": "1", "mode": "rndrd"})
    );
    assert_eq!(
        cells[5]["cell"],
        serde_json::json!({"threads": "2", "mode": "rndrw"})
    );
    assert!(
        cells
            .iter()
            .all(|c| c["figures"]["iops"].as_f64().unwrap() > 0.0)
    );
    // stored as one experiment, shown as a matrix with the chosen rows, cols and metric
    let g = v["group"].as_str().unwrap().to_string();
    let l = iolab_db(&db, &["list", "--json"]).json();
    assert_eq!(l["runs"].as_array().unwrap().len(), 6);
    assert!(
        l["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["group_id"] == 1)
    );
    let s = iolab_db(&db, &["show", &g]);
    assert!(
        s.stdout.contains("threads \\ mode") && s.stdout.contains("rndrw"),
        "{}",
        s.stdout
    );
    let mut a2 = vec![
        "sweep".to_string(),
        "--threads".into(),
        "1,2".into(),
        "--mode".into(),
        "rndrd".into(),
        "--metric".into(),
        "p99".into(),
        "--rows".into(),
        "threads".into(),
    ];
    a2.extend(base(&data));
    let av: Vec<&str> = a2.iter().map(|s| s.as_str()).collect();
    let r = iolab_db(&db, &av);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("p99 in ms"), "{}", r.stdout);
    assert!(
        entries(&data).is_empty(),
        "cells clean up: {:?}",
        entries(&data)
    );
}

#[test]
fn bad_axes_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let dir = d.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["sweep", "--threads", "1,,4", "--dir", dir], "--threads"),
        (&["sweep", "--threads", "8..1", "--dir", dir], "--threads"),
        (&["sweep", "--size", "1G..x", "--dir", dir], "--size"),
        (&["sweep", "--mode", "rndrd", "--dir", dir], "no axis"),
        (
            &["sweep", "--threads", "1,2", "--rows", "size", "--dir", dir],
            "--rows",
        ),
        (
            &[
                "sweep",
                "--threads",
                "1,2",
                "--metric",
                "speed",
                "--dir",
                dir,
            ],
            "--metric",
        ),
        (&["sweep", "--threads", "0,2", "--dir", dir], "--threads"),
        (
            &[
                "sweep",
                "--threads",
                "1,2",
                "--size",
                "1000T",
                "--mode",
                "rndrd",
                "--dir",
                dir,
            ],
            "needs",
        ),
        (
            &["sweep", "--threads", "1,2", "--no-save", "--dir", dir],
            "--no-save",
        ),
        (
            &[
                "sweep",
                "--threads",
                "1,2",
                "--rank-timeout",
                "0",
                "--dir",
                dir,
            ],
            "--rank-timeout",
        ),
        (
            &[
                "saturate",
                "--target",
                "speed>=1",
                "--over",
                "rate=1..10",
                "--dir",
                dir,
            ],
            "--target",
        ),
        (
            &[
                "saturate",
                "--target",
                "iops>=1",
                "--over",
                "colour=1..10",
                "--dir",
                dir,
            ],
            "--over",
        ),
        (
            &[
                "saturate",
                "--target",
                "iops>=1",
                "--over",
                "rate=10..1",
                "--dir",
                dir,
            ],
            "--over",
        ),
    ];
    for (args, needle) in cases {
        let r = iolab_db(&db, args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
    let l = iolab_db(&db, &["list", "--json"]).json();
    assert_eq!(l["runs"].as_array().unwrap().len(), 0, "nothing ran");
}

#[test]
fn an_interrupted_sweep_resumes_without_rerunning_finished_cells() {
    let d = tempfile::tempdir().unwrap();
    resume_case(&d.path().join("r.db"), d.path());
}

/// The same on a PostgreSQL store (the test server of scripts/test.sh).
#[test]
fn an_interrupted_sweep_resumes_on_a_postgres_store() {
    let Some(pg) = PgDb::new() else {
        return skip(
            "an_interrupted_sweep_resumes_on_a_postgres_store",
            "IOLAB_TEST_PG_URL is not set (scripts/test.sh starts the server as root)",
        );
    };
    let d = tempfile::tempdir().unwrap();
    resume_case(&std::path::PathBuf::from(pg.url()), d.path());
}

fn resume_case(db: &std::path::Path, tmp: &std::path::Path) {
    let db = db.to_path_buf();
    let data = tmp.join("data");
    std::fs::create_dir(&data).unwrap();
    let dstr = data.to_str().unwrap().to_string();
    // Stop once the sweep is stored and its first cell (of 1 s each) is saved.
    let o = interrupt_when(
        std::process::Command::new(bin())
            .args([
                "sweep",
                "--threads",
                "1,2,3",
                "--mode",
                "rndrd",
                "--dir",
                &dstr,
                "--files",
                "1",
                "--size",
                "1M",
                "--engine",
                "null",
                "--time",
                "1",
            ])
            .env("IOLAB_DB", &db),
        "`sweep stored as group g1` on stderr and a finished cell in the store",
        |_, e| {
            e.contains("sweep stored as group g1") && {
                let l = iolab_db(&db, &["list", "--json"]);
                l.code == 0
                    && l.json()["runs"]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|r| r["interrupted"] == false))
            }
        },
    );
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("--resume g1"));
    let before: Vec<serde_json::Value> = iolab_db(&db, &["list", "--json"]).json()["runs"]
        .as_array()
        .unwrap()
        .clone();
    let finished = before.iter().filter(|r| r["interrupted"] == false).count();
    assert!((1..3).contains(&finished), "{before:?}");
    let r = iolab_db(&db, &["sweep", "--resume", "g1", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["cells"].as_array().unwrap().len(), 3);
    let after: Vec<serde_json::Value> = iolab_db(&db, &["list", "--json"]).json()["runs"]
        .as_array()
        .unwrap()
        .clone();
    let finished_after = after.iter().filter(|r| r["interrupted"] == false).count();
    assert_eq!(finished_after, 3, "exactly the missing cells ran");
    assert_eq!(after.len(), before.len() + (3 - finished));
    assert!(entries(&data).is_empty());
}

#[test]
fn saturation_over_offered_load_finds_where_latency_breaks() {
    // On the null engine the limit is iolab's own pacing: a fixed schedule far above what one
    // thread can issue makes latency (measured from the schedule) grow without bound.
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let r = iolab_db(
        &db,
        &[
            "saturate",
            "--target",
            "p99<=50ms",
            "--over",
            "rate=1000..100000000",
            "--max-steps",
            "8",
            "--json",
            "--mode",
            "rndrd",
            "--engine",
            "null",
            "--dir",
            data.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "1M",
            "--time",
            "0.3",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["schema"], "iolab-saturate/1");
    let pts = v["points"].as_array().unwrap();
    assert!(pts.len() >= 3 && pts.len() <= 8, "{pts:?}");
    let lp = v["last_pass"].as_u64().unwrap();
    let ff = v["first_fail"].as_u64().unwrap();
    assert!(lp < ff, "{lp} < {ff}");
    // every point is stored, and show prints the curve again
    let s = iolab_db(&db, &["show", v["group"].as_str().unwrap()]);
    assert!(s.stdout.contains("holds up to rate="), "{}", s.stdout);
}

/// A finished sweep resumes with -q (nothing left to run: exit 0 and the matrix), and a one-axis
/// sweep's matrix names the axis and the metric in its header.
#[test]
fn resume_takes_quiet_and_a_one_axis_matrix_names_its_columns() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut a: Vec<String> = ["sweep", "--threads", "1,2", "--mode", "rndrd", "-q"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(base(&data));
    let av: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    let r = iolab_db(&db, &av);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let header = r
        .stdout
        .lines()
        .find(|l| l.contains("threads"))
        .unwrap_or_else(|| panic!("no axis name in the matrix: {}", r.stdout));
    assert!(header.contains("iops"), "no metric column: {}", r.stdout);
    assert!(!header.contains('\\'), "{}", r.stdout);
    let g = r
        .stderr
        .split("group ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no group in {}", r.stderr))
        .to_string();
    for q in ["-q", "--quiet"] {
        let r = iolab_db(&db, &["sweep", "--resume", &g, q]);
        assert_eq!(r.code, 0, "--resume {g} {q}: {}", r.stderr);
        assert!(r.stdout.contains("threads"), "{}", r.stdout);
    }
    // other run options are still refused with --resume
    let r = iolab_db(&db, &["sweep", "--resume", &g, "-q", "--threads", "4"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Sweeps, saturation searches and the suites take the file-set lock of their --dir like
/// `iolab run`: while a run holds the directory they wait, then refuse naming the holder, and
/// touch none of its files.
#[test]
fn sweeps_saturate_and_suites_respect_the_lock_of_a_running_set() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap().to_string();
    let db = test_db();
    let db_s = db.to_str().unwrap().to_string();
    let mut seconds = Vec::new();
    let out = interrupt_when(
        std::process::Command::new(bin()).args([
            "run",
            "--dir",
            &dir,
            "--files",
            "2",
            "--size",
            "2M",
            "--mode",
            "rndrd",
            "--time",
            "60",
            "--no-save",
            "-q",
        ]),
        "a read by an iolab-w worker thread",
        |pid, _| {
            if !thread_has_read(pid, "iolab-w") {
                return false;
            }
            let before = entries(std::path::Path::new(&dir));
            for args in [
                vec![
                    "sweep",
                    "--db",
                    &db_s,
                    "--dir",
                    &dir,
                    "--files",
                    "2",
                    "--size",
                    "2M",
                    "--mode",
                    "rndwr",
                    "--threads",
                    "1,2",
                    "--ops",
                    "10",
                    "-q",
                ],
                vec![
                    "saturate",
                    "--db",
                    &db_s,
                    "--dir",
                    &dir,
                    "--files",
                    "2",
                    "--size",
                    "2M",
                    "--mode",
                    "rndwr",
                    "--over",
                    "threads=1..2",
                    "--ops",
                    "10",
                    "--target",
                    "iops>=1",
                    "-q",
                ],
                vec![
                    "suite",
                    "bonnie",
                    "--force",
                    "--dir",
                    &dir,
                    "--size",
                    "8M",
                    "--files",
                    "0",
                    "--seeks",
                    "10",
                    "--no-save",
                ],
                vec![
                    "suite",
                    "iozone",
                    "--dir",
                    &dir,
                    "--min-file",
                    "64k",
                    "--max-file",
                    "64k",
                    "--min-rec",
                    "4k",
                    "--max-rec",
                    "4k",
                    "-q",
                    "--no-save",
                ],
            ] {
                let r = iolab(&args);
                seconds.push((pid, args.join(" "), r));
            }
            assert_eq!(entries(std::path::Path::new(&dir)), before);
            true
        },
    );
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(seconds.len(), 4);
    for (pid, args, r) in seconds {
        assert_eq!(r.code, 1, "{args}: {}", r.stderr);
        let last = r.stderr.trim().lines().last().unwrap_or("");
        assert!(
            last.contains("in use") && last.contains(&format!("pid {pid}")),
            "{args}: {}",
            r.stderr
        );
    }
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// `suite sysbench-fileio --file-io-mode async` is sysbench's async mode: every cell runs on
/// libaio with `--file-async-backlog` I/Os in flight per thread, O_DIRECT.
#[test]
fn sysbench_fileio_async_mode_runs_on_libaio_with_the_backlog_as_iodepth() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let dir = data.to_str().unwrap();
    let suite = [
        "suite",
        "sysbench-fileio",
        "--dir",
        dir,
        "--scale",
        "1024",
        "--time",
        "0.05",
    ];
    // sysbench's mmap mode is not offered (the suite is O_DIRECT); --engine and
    // --file-io-mode do not go together
    for (extra, flag) in [
        (&["--file-io-mode", "mmap"][..], "--file-io-mode"),
        (
            &["--file-io-mode", "async", "--engine", "sync"][..],
            "--engine",
        ),
    ] {
        let r = iolab_db(&db, &[&suite[..], extra].concat());
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(flag), "{extra:?}: {}", r.stderr);
    }
    assert!(
        !db.exists() || iolab_db(&db, &["list", "--json"]).json()["runs"] == serde_json::json!([])
    );
    let extra = [
        "--file-io-mode",
        "async",
        "--file-async-backlog",
        "4",
        "--json",
    ];
    let r = iolab_db(&db, &[&suite[..], &extra[..]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cells = r.json()["cells"].as_array().unwrap().len();
    assert_eq!(cells, 3 * 3 * 6);
    for id in ["1", &cells.to_string()] {
        let job = iolab_db(&db, &["show", id, "--json"]).json()["job"].clone();
        assert_eq!(
            (&job["engine"], &job["iodepth"], &job["direct"]),
            (
                &serde_json::json!("libaio"),
                &serde_json::json!(4),
                &serde_json::json!(true)
            ),
            "run {id}"
        );
    }
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
}

// ------------------------------------------------ issue 24: refused before anything is stored

/// A refused sweep or saturation search wrote an empty experiment group (and printed "resume
/// with"): now everything is checked before the store is even opened.
#[test]
fn refused_experiments_leave_no_group_and_no_store() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let b = base(&data);
    let b: Vec<&str> = b.iter().map(|s| s.as_str()).collect();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["saturate", "--target", "mibps>=1", "--over", "threads=1..2"],
            "exactly one --mode",
        ),
        (
            vec![
                "saturate",
                "--target",
                "mibps>=NaN",
                "--over",
                "threads=1..2",
                "--mode",
                "rndrd",
            ],
            "--target 'mibps>=NaN'",
        ),
        (
            vec![
                "saturate",
                "--target",
                "mibps>=1",
                "--over",
                "threads=1..4000000000",
                "--mode",
                "rndrd",
            ],
            "--threads",
        ),
        (
            vec![
                "sweep",
                "--threads",
                "1,2",
                "--mode",
                "rndrd",
                "--ramp",
                "0,1e99",
            ],
            "'--ramp <",
        ),
        (
            vec!["sweep", "--threads", "1,2", "--mode", "rndrd,,rndwr"],
            "--mode",
        ),
    ];
    for (args, want) in cases {
        let mut a = args.clone();
        a.extend_from_slice(&b);
        let r = iolab_db(&db, &a);
        assert_refused(&r, want);
        assert!(!r.stderr.contains("resume with"), "{}", r.stderr);
        assert!(!db.exists(), "{args:?} created the store");
    }
}

/// As root, a device setting the kernel cannot take was refused only when the sweep switched
/// it, after its group was stored.
#[test]
fn a_tuning_value_the_kernel_cannot_take_is_refused_before_the_group() {
    if !is_root() {
        return skip(
            "a_tuning_value_the_kernel_cannot_take_is_refused_before_the_group",
            "switching read_ahead_kb needs root",
        );
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut a = vec!["sweep", "--read-ahead", "99999999999999", "--mode", "rndrd"];
    let b = base(&data);
    a.extend(b.iter().map(|s| s.as_str()));
    let r = iolab_db(&db, &a);
    assert_refused(&r, "--read-ahead 99999999999999");
    assert!(!db.exists(), "the refused sweep created the store");
}

/// An axis range past u64 overflowed (a panic) and one of billions of values was built before
/// it was counted (memory): both refused in one line, nothing stored.
#[test]
fn axis_ranges_that_overflow_or_never_end_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    for (axis, v, want) in [
        ("--size", "1..18446744073709551615", "--size"),
        (
            "--rate",
            "1..18446744073709551615:+1",
            "more than 1000 values",
        ),
        ("--threads", "1..4000000000:+1", "more than 1000 values"),
        (
            "--seed",
            "18446744073709551615..18446744073709551615:+1",
            "no axis",
        ),
    ] {
        let mut a = vec!["sweep", axis, v, "--mode", "rndrd"];
        let b: Vec<String> = base(&data)
            .into_iter()
            .filter(|x| x != "--size" && x != "2M")
            .collect();
        a.extend(b.iter().map(|s| s.as_str()));
        let r = iolab_db(&db, &a);
        assert_refused(&r, want);
        assert!(!db.exists(), "{axis} {v} created the store");
    }
}

/// `iolab together` refuses in one line (exit 2), before its store exists: one directory, two on
/// one filesystem, a list, more than one mode, `--no-save`; as the tests are run anywhere, a
/// run on two filesystems here (a folder under /var/tmp and one in /dev/shm, buffered reads):
/// four runs stored, each directory alone and at once, the sets it made removed after.
#[test]
fn together_checks_its_input_and_runs_each_directory_alone_and_at_once() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("t.db");
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let w = ["--files", "1", "--size", "1M", "--time", "0.3"];
    let m = ["--mode", "rndrd"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--dir", a, m[0], m[1]],
            "--dir: give two directories or more",
        ),
        (
            vec!["--dir", a, "--dir", b, m[0], m[1]],
            "on the same filesystem as --dir",
        ),
        (vec!["--dir", a, "--dir", a, m[0], m[1]], "given twice"),
        (
            vec!["--dir", a, "--dir", b, m[0], m[1], "--threads", "1,2"],
            "--threads is a list",
        ),
        (
            vec!["--dir", a, "--dir", b, m[0], m[1], "--no-save"],
            "--no-save",
        ),
        // no mode: the default profile's cells
        (vec!["--dir", a, "--dir", b], "exactly one --mode"),
    ];
    for (args, want) in cases {
        let mut v = vec!["together"];
        v.extend_from_slice(&w);
        v.extend_from_slice(&args);
        let r = iolab_db(&db, &v);
        assert_refused(&r, want);
        assert!(!db.exists(), "{args:?} created the store");
    }
    let shm = std::path::Path::new("/dev/shm");
    use std::os::unix::fs::MetadataExt;
    let (Ok(m1), Ok(m2)) = (std::fs::metadata(shm), std::fs::metadata(d.path())) else {
        return;
    };
    if m1.dev() == m2.dev() {
        eprintln!(
            "/dev/shm and {} are one filesystem: the run is not tried",
            d.path().display()
        );
        return;
    }
    let s = tempfile::tempdir_in(shm).unwrap();
    let s = s.path().to_str().unwrap();
    let mut v = vec!["together", "--dir", a, "--dir", s, "--json", "-q"];
    v.extend_from_slice(&w);
    v.extend_from_slice(&m);
    let r = iolab_db(&db, &v);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["schema"], "iolab-sweep/1");
    let cells: Vec<String> = j["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["cell"]["load"].as_str().unwrap(),
                c["cell"]["dir"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            format!("alone {a}"),
            format!("alone {s}"),
            format!("together {a}"),
            format!("together {s}")
        ]
    );
    for c in j["cells"].as_array().unwrap() {
        assert!(c["figures"]["iops"].as_f64().unwrap() > 0.0, "{c}");
    }
    for dir in [a, s] {
        assert_eq!(
            std::fs::read_dir(dir).unwrap().count(),
            0,
            "{dir} keeps files"
        );
    }
    let e = iolab_db(&db, &["explain", "g1", "--json"]).json();
    assert_eq!(e["cells"].as_array().unwrap().len(), 4, "{e}");
}
