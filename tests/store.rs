//! The results store: round trips, repetitions, comparison, export, import, migrations, faults.

use crate::common::*;
use rusqlite::Connection;
use std::path::Path;

struct Lab {
    _tmp: tempfile::TempDir,
    /// The store: an SQLite file, or the URL of a PostgreSQL database of its own.
    db: std::path::PathBuf,
    dir: std::path::PathBuf,
    _pg: Option<PgDb>,
}

/// The backends the store tests run against.
#[derive(Clone, Copy, Debug)]
enum Backend {
    Sqlite,
    Pg,
}

/// Runs each named test (a `fn NAME(lab: Lab)`) once per backend: `sqlite::NAME` and `pg::NAME`
/// (skipped, or a failure under CI=true, without a test PostgreSQL server).
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(super::Lab::new()) })*
        }
        mod pg {
            $(#[test] fn $name() {
                match super::Lab::on(super::Backend::Pg) {
                    Some(lab) => super::$name(lab),
                    None => super::skip(concat!("pg::", stringify!($name)), "IOLAB_TEST_PG_URL is not set (scripts/test.sh starts the server as root)"),
                }
            })*
        }
    };
}

on_both_backends!(
    run_save_show_gives_the_same_json,
    roles_are_stored_shown_and_compared_by_name,
    repeat_stores_a_group_and_compare_tests_significance,
    compare_reports_the_seed_000_delta_and_what_cannot_be_compared,
    export_csv_and_json,
    imports_real_fio_and_sysbench_output,
    bad_imports_name_the_key_or_line_and_import_nothing,
    concurrent_runs_both_save,
    unknown_ids_are_refused,
    compare_with_few_repetitions_says_how_wide_the_interval_is,
    zones_runs_compare_and_export_zone_by_zone,
    export_gives_every_stored_kind_the_same_cells_shape,
    numjobs_without_group_reporting_compares_with_the_grouped_import,
    importing_the_same_file_twice_warns_and_imports,
    groups_are_named_gn_in_list_csv_and_export,
);

impl Lab {
    fn new() -> Lab {
        Lab::on(Backend::Sqlite).unwrap()
    }
    /// A lab whose store is on `backend`; None for PostgreSQL without a test server.
    fn on(backend: Backend) -> Option<Lab> {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        let (db, pg) = match backend {
            Backend::Sqlite => (tmp.path().join("store/results.db"), None),
            Backend::Pg => {
                let pg = PgDb::new()?;
                (std::path::PathBuf::from(pg.url()), Some(pg))
            }
        };
        Some(Lab {
            _tmp: tmp,
            db,
            dir,
            _pg: pg,
        })
    }
    /// The store opened in this process.
    fn store(&self) -> iolab::store::Store {
        let loc = iolab::store::Location::parse(self.db.as_os_str(), "--db").unwrap();
        iolab::store::Store::open_at(&loc).unwrap()
    }
    fn run(&self, args: &[&str]) -> Run {
        let mut a = vec![
            "run",
            "--dir",
            self.dir.to_str().unwrap(),
            "--files",
            "2",
            "--size",
            "2M",
            "-q",
        ];
        a.extend_from_slice(args);
        iolab_db(&self.db, &a)
    }
    fn ok(&self, args: &[&str]) -> Run {
        let r = iolab_db(&self.db, args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r
    }
    /// Runs and returns the saved run id.
    fn saved(&self, args: &[&str]) -> i64 {
        let r = self.run(args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        saved_id(&r.stderr)
    }
}

fn saved_id(stderr: &str) -> i64 {
    let i = stderr
        .find("saved as run ")
        .unwrap_or_else(|| panic!("not saved: {stderr}"));
    stderr[i + 13..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn run_save_show_gives_the_same_json(lab: Lab) {
    let r = lab.run(&[
        "--mode", "rndrw", "--ops", "300", "--json", "--label", "base", "--tag", "disk=vda",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = saved_id(&r.stderr);
    let printed = r.json();
    let shown = lab.ok(&["show", &id.to_string(), "--json"]).json();
    assert_eq!(printed, shown);
    // multi-mode documents too
    let r = lab.run(&["--mode", "rndrd,rndwr", "--ops", "100", "--json"]);
    let id2 = saved_id(&r.stderr);
    assert_eq!(
        r.json(),
        lab.ok(&["show", &id2.to_string(), "--json"]).json()
    );
    // the human rendering of a stored run is the live one
    let live = lab.run(&[
        "--mode", "rndrd", "--ops", "50", "--engine", "null", "--seed", "1",
    ]);
    let id3 = saved_id(&live.stderr);
    let shown = lab.ok(&["show", &id3.to_string()]).stdout;
    assert!(
        shown.ends_with(&live.stdout),
        "show:\n{shown}\nlive:\n{}",
        live.stdout
    );
    // list, with filters
    let l = lab.ok(&["list", "--json"]).json();
    assert_eq!(l["runs"].as_array().unwrap().len(), 3);
    assert_eq!(l["runs"][0]["id"], id3, "newest first");
    let l = lab.ok(&["list", "--json", "--label", "base"]).json();
    assert_eq!(l["runs"].as_array().unwrap().len(), 1);
    assert_eq!(l["runs"][0]["tags"]["disk"], "vda");
    assert_eq!(
        lab.ok(&["list", "--json", "--tag", "disk=vda"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        lab.ok(&["list", "--json", "--mode", "rndwr"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        lab.ok(&["list", "--json", "--since", "1h"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        lab.ok(&["list", "--json", "--since", "2999-01-01"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        lab.ok(&["list", "--json", "--host", "no-such-host"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // histograms are stored and give back the percentiles
    let store = lab.store();
    assert!(
        store.histogram(id, 0, "write").unwrap().is_some(),
        "read and write histograms of rndrw"
    );
    let h = store.histogram(id, 0, "read").unwrap().unwrap();
    assert_eq!(
        h.count(),
        printed["results"]["read"]["ops"].as_u64().unwrap()
    );
    assert_eq!(
        h.percentile(99.0),
        printed["results"]["read"]["lat_ns"]["p99"]
            .as_u64()
            .unwrap()
    );
    // delete
    lab.ok(&["delete", &id.to_string()]);
    assert_eq!(
        lab.ok(&["list", "--json"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let r = iolab_db(&lab.db, &["show", &id.to_string()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains(&format!("no run {id}")), "{}", r.stderr);
    // its histograms went with it
    let store = lab.store();
    assert!(store.histogram(id, 0, "read").unwrap().is_none());
    assert!(store.histogram(id, 0, "write").unwrap().is_none());
}

#[test]
fn no_save_saves_nothing() {
    let lab = Lab::new();
    let r = lab.run(&["--mode", "rndrd", "--ops", "10", "--no-save"]);
    assert_eq!(r.code, 0);
    assert!(!r.stderr.contains("saved"));
    assert!(!lab.db.exists(), "--no-save does not even create the store");
}

fn repeat_stores_a_group_and_compare_tests_significance(lab: Lab) {
    let args = |rate: &'static str| {
        vec![
            "--mode", "rndrd", "--engine", "null", "--rate", rate, "--time", "0.5", "--repeat", "3",
        ]
    };
    let r = lab.run(&args("1000"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("summary of 3 repetitions") && r.stdout.contains("95% CI"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("saved as group g1"), "{}", r.stderr);
    let r = lab.run(&args("2000"));
    assert!(r.stderr.contains("saved as group g2"), "{}", r.stderr);
    let g = lab.ok(&["show", "g1", "--json"]).json();
    assert_eq!(g["run_ids"].as_array().unwrap().len(), 3);
    let iops = g["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "iops")
        .unwrap()
        .clone();
    assert!(
        (iops["stat"]["mean"].as_f64().unwrap() - 1000.0).abs() < 50.0,
        "{iops}"
    );
    let c = lab.ok(&["compare", "g1", "g2", "--json"]).json();
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "iops")
        .unwrap();
    let d = row["sides"][1]["delta_pct"].as_f64().unwrap();
    assert!(
        (d - 100.0).abs() < 10.0,
        "2000 vs 1000 IOPS is about +100%: {d}"
    );
    assert_eq!(row["sides"][1]["verdict"], "significant");
    assert!(row["sides"][1]["p_value"].as_f64().unwrap() < 0.05);
    let changes: Vec<String> = c["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(changes, vec!["job.rate_iops"], "only the rate changed");
    let text = lab.ok(&["compare", "g1", "g2"]).stdout;
    assert!(text.contains("job.rate_iops: 1000 → 2000"), "{text}");
}

fn sysbench_text(reads_per_s: f64) -> String {
    format!(
        "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 1
Initializing random number generator from current time


Extra file open flags: (none)
64 files, 16MiB each
1GiB total file size
Block size 16KiB
Number of IO requests: 0
Read/Write ratio for combined random IO test: 1.50
Periodic FSYNC enabled, calling fsync() each 100 requests.
Calling fsync() at the end of test, Enabled.
Using synchronous I/O mode
Doing random read test
Initializing worker threads...

Threads started!


File operations:
    reads/s:                      {reads_per_s:.2}
    writes/s:                     0.00
    fsyncs/s:                     0.00

Throughput:
    read, MiB/s:                  {:.2}
    written, MiB/s:               0.00

General statistics:
    total time:                          10.0010s
    total number of events:              {}

Latency (ms):
         min:                                    0.05
         avg:                                    1.00
         max:                                   20.00
         95th percentile:                        2.00
         sum:                                 9990.00

Threads fairness:
    events (avg/stddev):           9090.0000/0.00
    execution time (avg/stddev):   9.9900/0.00

",
        reads_per_s * 16384.0 / 1048576.0,
        (reads_per_s * 10.001) as u64
    )
}

fn compare_reports_the_seed_000_delta_and_what_cannot_be_compared(lab: Lab) {
    let d = lab._tmp.path();
    std::fs::write(d.join("a.txt"), sysbench_text(909.0)).unwrap();
    std::fs::write(d.join("b.txt"), sysbench_text(1049.0)).unwrap();
    let out = lab
        .ok(&[
            "import",
            d.join("a.txt").to_str().unwrap(),
            d.join("b.txt").to_str().unwrap(),
            "--label",
            "aligned",
        ])
        .stdout;
    assert!(
        out.contains("as run 1") && out.contains("as run 2"),
        "{out}"
    );
    let c = lab.ok(&["compare", "1", "2", "--json"]).json();
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "read" && r["metric"] == "iops")
        .unwrap();
    // 909 vs 1049 iops = +15.4 %
    assert!(
        (row["sides"][1]["delta_pct"].as_f64().unwrap() - 15.4015).abs() < 0.01,
        "{row}"
    );
    assert_eq!(row["sides"][1]["verdict"], "no repetitions");
    // a native rndwr run has nothing in common with them
    let w = lab.saved(&["--mode", "rndwr", "--ops", "20"]);
    let r = iolab_db(&lab.db, &["compare", "1", &w.to_string()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("nothing in common")
            && r.stderr.contains("rndrd")
            && r.stderr.contains("rndwr"),
        "{}",
        r.stderr
    );
    // partly comparable: the missing cells are named
    let rw = lab.saved(&["--mode", "rndrd,rndwr", "--ops", "20"]);
    let c = lab.ok(&["compare", "1", &rw.to_string(), "--json"]).json();
    let nc: Vec<String> = c["not_comparable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    assert!(nc.iter().any(|x| x.contains("rndwr")), "{nc:?}");
}

fn export_csv_and_json(lab: Lab) {
    let id = lab.saved(&["--mode", "rndrw", "--ops", "100", "--label", "x"]);
    let csv = lab
        .ok(&["export", &id.to_string(), "--format", "csv"])
        .stdout;
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    for col in [
        "run_id",
        "mode",
        "op",
        "ops",
        "iops",
        "bytes_per_sec",
        "lat_p99_ns",
        "lat_p99_99_ns",
        "bs_bytes",
    ] {
        assert!(header.split(',').any(|h| h == col), "{col} in {header}");
    }
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3, "read, write and fsync rows: {csv}");
    let out = lab._tmp.path().join("e.json");
    lab.ok(&[
        "export",
        &id.to_string(),
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["schema"], "iolab-export/1");
    assert_eq!(v["runs"][0]["doc"]["schema"], "iolab-run/1");
    let r = iolab_db(&lab.db, &["export", &id.to_string(), "--format", "xml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--format"));
}

fn imports_real_fio_and_sysbench_output(lab: Lab) {
    let d = lab._tmp.path();
    let have = |t: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {t}"))
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !have("fio") || !have("sysbench") {
        return skip(
            "imports_real_fio_and_sysbench_output",
            "fio or sysbench is not installed",
        );
    }
    let f = d.join("fio.data");
    let o = std::process::Command::new("fio")
        .args([
            "--name=rr",
            "--rw=randread",
            "--bs=16k",
            "--size=8M",
            "--runtime=1",
            "--time_based",
            "--output-format=json+",
        ])
        .arg(format!("--filename={}", f.display()))
        .output()
        .unwrap();
    assert!(o.status.success());
    std::fs::write(d.join("fio.json"), &o.stdout).unwrap();
    let sb = |args: &[&str]| {
        std::process::Command::new("sysbench")
            .current_dir(d)
            .args(["fileio", "--file-num=2", "--file-total-size=8M"])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(sb(&["prepare"]).status.success());
    let o = sb(&["--file-test-mode=rndrw", "--time=1", "run"]);
    assert!(o.status.success());
    sb(&["cleanup"]);
    std::fs::write(d.join("sb.txt"), &o.stdout).unwrap();
    let out = lab
        .ok(&[
            "import",
            d.join("fio.json").to_str().unwrap(),
            d.join("sb.txt").to_str().unwrap(),
            "--tag",
            "src=import",
        ])
        .stdout;
    assert!(out.contains("fio") && out.contains("sysbench"), "{out}");
    let l = lab.ok(&["list", "--json", "--tag", "src=import"]).json();
    let tools: Vec<&str> = l["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, vec!["sysbench", "fio"]);
    let show = lab.ok(&["show", "1"]).stdout;
    assert!(
        show.contains("rndrd") && show.contains("imported from fio"),
        "{show}"
    );
    // the json+ histogram was kept
    let store = lab.store();
    assert!(store.histogram(1, 0, "read").unwrap().is_some());
    // imported and native runs compare
    let native = lab.saved(&["--mode", "rndrd", "--ops", "200", "--bs", "16k"]);
    let c = lab
        .ok(&["compare", "1", &native.to_string(), "--json"])
        .json();
    assert!(!c["rows"].as_array().unwrap().is_empty());
    let fields: Vec<&str> = c["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"tool"), "{fields:?}");
}

fn bad_imports_name_the_key_or_line_and_import_nothing(lab: Lab) {
    let d = lab._tmp.path();
    std::fs::write(d.join("good.txt"), sysbench_text(500.0)).unwrap();
    std::fs::write(
        d.join("bad.json"),
        r#"{"fio version": "fio-3.33", "jobs": [{"jobname": "x"}]}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("bad.txt"),
        sysbench_text(500.0).replace(
            "reads/s:                      500.00",
            "reads/s:                      many",
        ),
    )
    .unwrap();
    std::fs::write(d.join("what.csv"), "a,b\n1,2\n").unwrap();
    for (f, needle) in [
        ("bad.json", "jobs[0]"),
        ("bad.txt", "line "),
        ("what.csv", "not a result"),
    ] {
        let r = iolab_db(
            &lab.db,
            &[
                "import",
                d.join("good.txt").to_str().unwrap(),
                d.join(f).to_str().unwrap(),
            ],
        );
        assert_eq!(r.code, 2, "{f}: {}", r.stderr);
        assert!(
            r.stderr.contains(f) && r.stderr.contains(needle),
            "{f}: {}",
            r.stderr
        );
        assert_eq!(r.stderr.trim().lines().count(), 1);
    }
    let l = lab.ok(&["list", "--json"]).json();
    assert_eq!(
        l["runs"].as_array().unwrap().len(),
        0,
        "nothing half-imported"
    );
}

#[test]
fn stores_that_are_not_ours_or_newer_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let junk = d.path().join("junk.db");
    std::fs::write(
        &junk,
        "this is not sqlite at all, just text that is long enough to be a header....",
    )
    .unwrap();
    let other = d.path().join("other.db");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE customers (id INTEGER);")
        .unwrap();
    let newer = d.path().join("newer.db");
    drop(iolab::store::Store::open(&newer).unwrap());
    Connection::open(&newer)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    for (p, needle) in [
        (&junk, "not an iolab results store"),
        (&other, "not an iolab results store"),
        (&newer, "newer iolab"),
    ] {
        let r = iolab(&["list", "--db", p.to_str().unwrap()]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(needle) && r.stderr.contains("--db"),
            "{}",
            r.stderr
        );
        // a run refuses before measuring anything
        let data = d.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let r = iolab(&[
            "run",
            "--db",
            p.to_str().unwrap(),
            "--dir",
            data.to_str().unwrap(),
            "--mode",
            "rndrd",
            "--ops",
            "5",
            "--files",
            "1",
            "--size",
            "1M",
        ]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stdout.is_empty());
        assert!(entries(&data).is_empty());
    }
    // the other application's data is untouched
    let n: i64 = Connection::open(&other)
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn an_older_schema_is_migrated_in_place() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("old.db");
    // A version-1 store with one run in it, as iolab 1 would have written it.
    drop(iolab::store::Store::open_to(&db, 1).unwrap());
    let conn = Connection::open(&db).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 1);
    conn.execute(
        "INSERT INTO runs (kind, tool, tool_version, start_time, host, label, modes, doc) VALUES ('import', 'sysbench', '1.0.20', '2026-01-01T00:00:00.000Z', 'old-host', 'v1', ',rndrd,', '{}')",
        [],
    )
    .unwrap();
    conn.execute("INSERT INTO metrics (run_id, cell, mode, op, ops, bytes, iops, bytes_per_sec) VALUES (1, 0, 'rndrd', 'read', 9090, 148930560, 909.0, 14891520.0)", []).unwrap();
    drop(conn);
    let l = iolab_db(&db, &["list", "--json"]);
    assert_eq!(l.code, 0, "{}", l.stderr);
    let l = l.json();
    assert_eq!(l["runs"][0]["label"], "v1");
    assert_eq!(l["runs"][0]["group_id"], serde_json::Value::Null);
    let conn = Connection::open(&db).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, iolab::store::SCHEMA_VERSION);
    let t: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN ('groups', 'histograms')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(t, 2);
}

fn concurrent_runs_both_save(lab: Lab) {
    let spawn = |dir: &Path| {
        std::process::Command::new(bin())
            .args([
                "run",
                "--dir",
                dir.to_str().unwrap(),
                "--files",
                "1",
                "--size",
                "1M",
                "--mode",
                "rndrd",
                "--engine",
                "null",
                "--time",
                "0.3",
                "--repeat",
                "3",
                "-q",
            ])
            .env("IOLAB_DB", &lab.db)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let d2 = lab._tmp.path().join("data2");
    std::fs::create_dir(&d2).unwrap();
    let a = spawn(&lab.dir);
    let b = spawn(&d2);
    for c in [a, b] {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let l = lab.ok(&["list", "--json"]).json();
    assert_eq!(
        l["runs"].as_array().unwrap().len(),
        6,
        "all six runs of both processes were saved"
    );
}

#[test]
fn a_locked_store_waits_and_saves() {
    let lab = Lab::new();
    drop(iolab::store::Store::open(&lab.db).unwrap());
    let conn = Connection::open(&lab.db).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let child = std::process::Command::new(bin())
        .args([
            "run",
            "--dir",
            lab.dir.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "1M",
            "--mode",
            "rndrd",
            "--engine",
            "null",
            "--ops",
            "10",
            "-q",
        ])
        .env("IOLAB_DB", &lab.db)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    conn.execute_batch("COMMIT;").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("saved as run 1"));
}

fn unknown_ids_are_refused(lab: Lab) {
    lab.saved(&["--mode", "rndrd", "--ops", "5"]);
    for args in [
        vec!["show", "42"],
        vec!["delete", "1", "42"],
        vec!["compare", "1", "g7"],
        vec!["export", "nope"],
    ] {
        let r = iolab_db(&lab.db, &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1);
    }
    assert_eq!(
        lab.ok(&["list", "--json"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "delete 1 42 deleted nothing"
    );
}

fn compare_with_few_repetitions_says_how_wide_the_interval_is(lab: Lab) {
    let group = |repeat: &str| {
        let r = lab.run(&[
            "--mode", "rndrd", "--engine", "null", "--time", "0.2", "--repeat", repeat,
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    group("2"); // g1
    group("2"); // g2
    group("3"); // g3
    let text = lab.ok(&["compare", "g1", "g2"]).stdout;
    let note = text
        .lines()
        .find(|l| l.starts_with("note: with n=2"))
        .unwrap_or_else(|| panic!("a note on n=2: {text}"));
    assert!(
        note.contains("(g1, g2)")
            && note.contains("12.7 standard errors")
            && note.contains("12.706")
            && note.contains("1 degree of freedom")
            && note.contains("--repeat 5"),
        "{note}"
    );
    // the width follows the t quantile of the n present: 4.303 for n = 3
    let text = lab.ok(&["compare", "g1", "g3"]).stdout;
    assert!(
        text.contains("n=2 repetitions (g1)") && text.contains("12.7 standard errors"),
        "{text}"
    );
    assert!(
        text.contains("n=3 repetitions (g3)")
            && text.contains("4.3 standard errors")
            && text.contains("2 degrees of freedom: 4.303"),
        "{text}"
    );
    // single runs get the single-run line, not this note
    let text = lab.ok(&["compare", "1", "3"]).stdout;
    assert!(!text.contains("note: with n="), "{text}");
}

/// A store written before imports took the `cells[].results.<op>` shape (schema
/// `iolab-import/1`, `cells[].ops[]`; tests/fixtures/store/v3-imports.db: a fio json+ import, a
/// sysbench import and a null-engine run) is read by show, compare, export and report, and its
/// imports export in today's shape, with the same figures as a fresh import of the same file.
#[test]
fn imports_stored_in_the_old_shape_read_as_today() {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.db.parent().unwrap()).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    std::fs::copy(fixtures.join("store/v3-imports.db"), &lab.db).unwrap();
    let old: String = Connection::open(&lab.db)
        .unwrap()
        .query_row("SELECT doc FROM runs WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert!(
        old.contains("\"iolab-import/1\""),
        "the fixture holds an old import"
    );
    for id in ["1", "2", "3"] {
        let r = lab.ok(&["show", id]);
        assert!(!r.stdout.is_empty(), "show {id}");
    }
    assert!(
        lab.ok(&["show", "1"]).stdout.contains("16575"),
        "fio read IOPS"
    );
    // a fresh import of the same fio file: today's shape, same figures
    let f = fixtures.join("import/fio-randrw-jsonplus.json");
    let r = lab.ok(&["import", f.to_str().unwrap()]);
    assert!(r.stdout.contains("as run 4"), "{}", r.stdout);
    let ex = lab.ok(&["export", "1", "4", "--format", "json"]).json();
    let (old, new) = (&ex["runs"][0]["doc"], &ex["runs"][1]["doc"]);
    for d in [old, new] {
        assert_eq!(d["schema"], "iolab-import/2", "{d}");
        let read = &d["cells"][0]["results"]["read"];
        assert_eq!(read["ops"], 33199, "{read}");
        assert!(read["iops"].as_f64().unwrap() > 16000.0, "{read}");
        assert!(read["lat_ns"]["p99"].as_f64().is_some(), "{read}");
        assert!(
            d["cells"][0].get("ops").is_none(),
            "no ops[] in today's shape"
        );
    }
    // Today's parser takes every latency figure from clat_ns (the old one took min/mean/max/
    // stddev from lat_ns) and records that in options["iolab.latency_source"]: apart from
    // those, the old import reads as the new one.
    let without_lat_source = |cells: &serde_json::Value| {
        let mut cells = cells.clone();
        for c in cells.as_array_mut().unwrap() {
            c["options"]
                .as_object_mut()
                .unwrap()
                .remove("iolab.latency_source");
            for (_, r) in c["results"].as_object_mut().unwrap() {
                let lat = r["lat_ns"].as_object_mut().unwrap();
                for k in ["min", "mean", "max", "stddev"] {
                    lat.remove(k);
                }
            }
        }
        cells
    };
    assert_eq!(
        without_lat_source(&old["cells"]),
        without_lat_source(&new["cells"]),
        "the old import reads as the new one"
    );
    // compare the old and the new import: the same workload, no change
    let c = lab.ok(&["compare", "1", "4", "--json"]).json();
    let rows = c["rows"].as_array().expect("rows");
    assert!(!rows.is_empty(), "{c}");
    let report = lab.db.with_file_name("r.html");
    lab.ok(&["report", "1", "-o", report.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&report).unwrap().contains("16575"));
}

/// Zones results are stored as metrics rows too (docs/results.md, "One measurement shape"): one
/// cell per zone, so two reads of the same target compare zone by zone and export as CSV.
fn zones_runs_compare_and_export_zone_by_zone(lab: Lab) {
    let img = lab.dir.join("disk.img");
    std::fs::write(&img, vec![9u8; 8 << 20]).unwrap();
    let args = [
        "zones",
        img.to_str().unwrap(),
        "--zones",
        "4",
        "--per-zone",
        "1M",
        "--bs",
        "256k",
    ];
    for id in ["1", "2"] {
        let r = lab.ok(&args);
        assert!(
            r.stderr.contains(&format!("saved as run {id}")),
            "{}",
            r.stderr
        );
    }
    let c = lab.ok(&["compare", "1", "2", "--json"]).json();
    let rows = c["rows"].as_array().expect("rows");
    for z in ["zone 00", "zone 01", "zone 02", "zone 03"] {
        for metric in ["iops", "mib_per_sec", "lat_mean_ns"] {
            let row = rows
                .iter()
                .find(|r| r["cell"] == z && r["op"] == "read" && r["metric"] == metric)
                .unwrap_or_else(|| panic!("no {metric} row for {z}: {c}"));
            assert!(row["sides"][1]["delta_pct"].is_number(), "{row}");
        }
    }
    let text = lab.ok(&["compare", "1", "2"]).stdout;
    assert!(text.contains("zone 03"), "{text}");

    let csv = lab.ok(&["export", "1", "--format", "csv"]).stdout;
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 4, "{csv}");
    let head: Vec<&str> = lines[0].split(',').collect();
    let col = |l: &str, name: &str| -> String {
        let i = head.iter().position(|h| *h == name).unwrap();
        l.split(',').nth(i).unwrap().to_string()
    };
    for (i, l) in lines[1..].iter().enumerate() {
        assert_eq!(col(l, "mode"), format!("zone {i:02}"));
        assert_eq!(col(l, "op"), "read");
        assert_eq!(col(l, "bs_bytes"), "262144");
        assert_eq!(col(l, "bytes"), (1u64 << 20).to_string());
        assert_eq!(col(l, "ops"), "4");
        assert!(col(l, "lat_mean_ns").parse::<f64>().unwrap() > 0.0, "{l}");
    }
    // show still renders the zones document
    let show = lab.ok(&["show", "1"]).stdout;
    assert!(
        show.contains("first/last") || show.contains("zone"),
        "{show}"
    );
}

/// Every stored kind comes out of `export --format json` with its measurements in one shape,
/// `cells[].results.<op>.{ops, bytes, iops, bytes_per_sec, lat_ns}`, beside its own document: a
/// file run, an import, a database run and an IOZone suite.
fn export_gives_every_stored_kind_the_same_cells_shape(lab: Lab) {
    let data = lab.dir.to_str().unwrap().to_string();
    let run = lab.saved(&["--engine", "null", "--mode", "rndrw", "--ops", "400"]);
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/fio-randread.json");
    lab.ok(&["import", f.to_str().unwrap()]);
    lab.ok(&[
        "db",
        "--test",
        "update-loop",
        "--iterations",
        "50",
        "--dir",
        &data,
        "-q",
    ]);
    lab.ok(&[
        "suite",
        "iozone",
        "--dir",
        &data,
        "--min-file",
        "64k",
        "--max-file",
        "64k",
        "--min-rec",
        "4k",
        "--max-rec",
        "4k",
        "-q",
    ]);
    let ex = lab
        .ok(&["export", "1", "2", "3", "4", "--format", "json"])
        .json();
    let runs = ex["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let kinds: Vec<&str> = runs.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["run", "import", "db", "suite"]);
    for r in runs {
        let cells = r["cells"]
            .as_array()
            .unwrap_or_else(|| panic!("no cells: {r}"));
        assert!(!cells.is_empty(), "{}: no cells", r["kind"]);
        for c in cells {
            let results = c["results"].as_object().expect("results");
            assert!(!results.is_empty(), "{c}");
            for (op, m) in results {
                for k in ["ops", "bytes", "iops", "bytes_per_sec"] {
                    assert!(m[k].is_number(), "{} {op}.{k}: {m}", r["kind"]);
                }
                assert!(m["lat_ns"].is_object(), "{} {op}.lat_ns: {m}", r["kind"]);
            }
        }
    }
    // the run's cells are its modes' results, exactly
    assert_eq!(run, 1);
    let doc = &runs[0]["doc"];
    let read = &runs[0]["cells"][0]["results"]["read"];
    assert_eq!(read["ops"], doc["results"]["read"]["ops"]);
    assert_eq!(
        read["lat_ns"]["p99"].as_f64(),
        doc["results"]["read"]["lat_ns"]["p99"].as_f64()
    );
    // a db run's cells are its transaction types, TPS as iops
    let db = &runs[2];
    let t = db["cells"][0]["results"].as_object().unwrap();
    let (name, m) = t.iter().next().unwrap();
    assert_eq!(
        m["iops"].as_f64(),
        db["doc"]["types"][name]["tps"].as_f64(),
        "{name}"
    );
}

fn import_fixture(lab: &Lab, name: &str) -> i64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name);
    let out = lab.ok(&["import", path.to_str().unwrap()]).stdout;
    let i = out
        .find(" as run ")
        .unwrap_or_else(|| panic!("not imported: {out}"));
    out[i + 8..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn numjobs_without_group_reporting_compares_with_the_grouped_import(lab: Lab) {
    let grouped = import_fixture(&lab, "fio-numjobs4-grouped.json");
    let separate = import_fixture(&lab, "fio-numjobs4-separate.json");
    let c = lab
        .ok(&[
            "compare",
            &grouped.to_string(),
            &separate.to_string(),
            "--json",
        ])
        .json();
    let rows = c["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["cell"] == "rndrd" && r["op"] == "read"),
        "{c}"
    );
    assert!(c["not_comparable"].as_array().unwrap().is_empty(), "{c}");
    let fields: Vec<&str> = c["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap())
        .collect();
    assert!(!fields.contains(&"job.threads"), "{fields:?}");
}

#[test]
fn fio_psync_and_iolab_sync_are_the_same_engine() {
    let lab = Lab::new();
    let fio = import_fixture(&lab, "fio-numjobs4-grouped.json");
    let native = lab.saved(&["--mode", "rndrd", "--ops", "200", "--engine", "sync"]);
    let c = lab
        .ok(&["compare", &fio.to_string(), &native.to_string(), "--json"])
        .json();
    let fields: Vec<&str> = c["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"tool"), "{fields:?}");
    assert!(!fields.contains(&"job.engine"), "{fields:?}");
}

/// A store with `n` runs of the null engine, checkpointed so every page is in the main file.
fn store_with_runs(lab: &Lab, n: usize) {
    for _ in 0..n {
        lab.saved(&["--engine", "null", "--mode", "rndrd", "--ops", "10"]);
    }
    let c = Connection::open(&lab.db).unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
}

#[test]
fn a_damaged_store_is_refused_before_running_with_one_code_and_message() {
    use std::io::{Seek, SeekFrom, Write};
    for how in ["garbage", "truncated"] {
        let lab = Lab::new();
        store_with_runs(&lab, 6);
        // a passed check is recorded (`<store>.checked`), and the commands after it skip the
        // whole-file check while the file is unchanged: the damage below must still be found
        for _ in 0..2 {
            let ok = iolab_db(&lab.db, &["list"]);
            assert_eq!(ok.code, 0, "{how}: {}", ok.stderr);
        }
        let len = std::fs::metadata(&lab.db).unwrap().len();
        let pages = len / 4096;
        assert!(pages >= 6, "{pages} pages");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&lab.db)
            .unwrap();
        if how == "garbage" {
            // two pages in the middle overwritten
            f.seek(SeekFrom::Start(pages / 2 * 4096)).unwrap();
            f.write_all(&vec![0xa5u8; 2 * 4096]).unwrap();
        } else {
            f.set_len(len / 2).unwrap();
        }
        drop(f);
        let db = lab.db.to_str().unwrap();
        let list = iolab_db(&lab.db, &["list"]);
        let run = lab.run(&["--engine", "null", "--mode", "rndrd", "--ops", "10"]);
        for (what, r) in [("list", &list), ("run", &run)] {
            assert_eq!(r.code, 2, "{how} {what}: {}", r.stderr);
            let lines: Vec<&str> = r.stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{how} {what}: {}", r.stderr);
            assert!(
                lines[0].starts_with("iolab: error: --db ")
                    && lines[0].contains(db)
                    && lines[0].contains("damaged"),
                "{how} {what}: {}",
                r.stderr
            );
            assert!(r.stdout.is_empty(), "{how} {what}: {}", r.stdout);
        }
        assert_eq!(list.stderr, run.stderr, "{how}");
        // nothing was run: no file set was prepared
        assert!(
            entries(&lab.dir).is_empty(),
            "{how}: {:?}",
            entries(&lab.dir)
        );
    }
}

#[test]
fn a_run_the_store_did_not_take_is_kept_in_a_file_and_imported_later() {
    let lab = Lab::new();
    let state = lab._tmp.path().join("state");
    // A store that refuses every new run, as a full disk would.
    drop(iolab::store::Store::open(&lab.db).unwrap());
    Connection::open(&lab.db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER no_room BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'no room left'); END;",
        )
        .unwrap();
    let o = std::process::Command::new(bin())
        .args([
            "run",
            "--dir",
            lab.dir.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "1M",
            "--mode",
            "rndrd",
            "--engine",
            "null",
            "--ops",
            "10",
            "-q",
            "--json",
        ])
        .env("IOLAB_DB", &lab.db)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let dir = state.join("iolab/unsaved");
    let files = entries(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let kept = dir.join(&files[0]);
    assert!(files[0].ends_with(".json"), "{files:?}");
    assert!(
        stderr.contains("not saved") && stderr.contains(kept.to_str().unwrap()),
        "{stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(doc, printed);
    assert_eq!(doc["schema"], "iolab-run/1");

    // imported into a good store, it is a normal run
    let good = lab._tmp.path().join("good.db");
    let r = iolab_db(&good, &["import", kept.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("as run 1"), "{}", r.stdout);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let shown = iolab_db(&good, &["show", "1", "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    for k in ["schema", "start_time", "end_time", "mode"] {
        assert_eq!(shown[k], doc[k], "{k}");
    }
    assert_eq!(shown["results"]["read"]["ops"], 10);
    let list = iolab_db(&good, &["list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(list["runs"][0]["kind"], "run");
    assert_eq!(list["runs"][0]["tool"], "iolab");
}

fn importing_the_same_file_twice_warns_and_imports(lab: Lab) {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/fio-randread.json");
    let first = lab.ok(&["import", f.to_str().unwrap()]);
    assert!(!first.stderr.contains("warning"), "{}", first.stderr);
    let again = lab.ok(&["import", f.to_str().unwrap()]);
    let lines: Vec<&str> = again.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", again.stderr);
    assert!(
        lines[0].contains("warning") && lines[0].contains("run 1"),
        "{}",
        again.stderr
    );
    assert!(again.stdout.contains("as run 2"), "{}", again.stdout);
}

fn groups_are_named_gn_in_list_csv_and_export(lab: Lab) {
    let r = lab.run(&[
        "--engine", "null", "--mode", "rndrd", "--ops", "10", "--repeat", "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("group g1"), "{}", r.stderr);
    let single = lab.saved(&["--engine", "null", "--mode", "rndrd", "--ops", "10"]);
    let l = lab.ok(&["list", "--json"]).json();
    let runs = l["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        if r["id"] == single {
            assert_eq!(r["group"], serde_json::Value::Null, "{r}");
        } else {
            assert_eq!(r["group"], "g1", "{r}");
            assert_eq!(r["group_id"], 1, "{r}");
        }
    }
    let csv = lab.ok(&["export", "g1", "--format", "csv"]).stdout;
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let gi = head
        .iter()
        .position(|h| *h == "group")
        .expect("group column");
    for l in lines {
        assert_eq!(l.split(',').nth(gi), Some("g1"), "{csv}");
    }
    let e = lab.ok(&["export", "g1", "--format", "json"]).json();
    for r in e["runs"].as_array().unwrap() {
        assert_eq!(r["group"], "g1", "{r}");
    }
    // the table says g1 too
    assert!(lab.ok(&["list"]).stdout.contains("g1"));
}

/// `iolab db` keeps a result the store did not take like `iolab run` does, and `iolab import`
/// saves it later; `list` calls a db run's rate TPS, not IOPS.
#[test]
fn a_db_run_the_store_did_not_take_is_kept_and_imported_later() {
    let lab = Lab::new();
    let state = lab._tmp.path().join("state");
    drop(iolab::store::Store::open(&lab.db).unwrap());
    Connection::open(&lab.db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER no_room BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'no room left'); END;",
        )
        .unwrap();
    let o = std::process::Command::new(bin())
        .args([
            "db",
            "--test",
            "update-loop",
            "--iterations",
            "20",
            "--dir",
            lab.dir.to_str().unwrap(),
            "-q",
            "--json",
        ])
        .env("IOLAB_DB", &lab.db)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    let dir = state.join("iolab/unsaved");
    let files = entries(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let kept = dir.join(&files[0]);
    assert!(stderr.contains(kept.to_str().unwrap()), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(doc["schema"], "iolab-db/1");
    let good = lab._tmp.path().join("good.db");
    let r = iolab_db(&good, &["import", kept.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("as run 1"), "{}", r.stdout);
    let shown = iolab_db(&good, &["show", "1", "--json"]).json();
    assert_eq!(shown["test"], "update-loop");
    assert_eq!(shown["transactions"], doc["transactions"]);
    let list = iolab_db(&good, &["list"]);
    assert!(list.stdout.contains("TPS"), "{}", list.stdout);
    assert!(!list.stdout.contains("IOPS"), "{}", list.stdout);
}

/// A run with roles: stored as one metrics cell per role (the `role` column), shown like the
/// live table, compared role by role with another run of the same roles.
fn roles_are_stored_shown_and_compared_by_name(lab: Lab) {
    let args = [
        "--engine",
        "null",
        "--ops",
        "300",
        "--role",
        "wal:mode=seqwr,bs=4k,fsync-freq=1,size=64k",
        "--role",
        "reads:mode=rndrd,threads=2",
        "--json",
    ];
    let r = lab.run(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = saved_id(&r.stderr);
    let printed = r.json();
    assert_eq!(printed["roles"][0]["results"]["write"]["ops"], 300);
    assert_eq!(printed["roles"][1]["results"]["read"]["ops"], 300);
    assert_eq!(printed, lab.ok(&["show", &id.to_string(), "--json"]).json());
    let shown = lab.ok(&["show", &id.to_string()]).stdout;
    assert!(
        shown.contains("wal (seqwr)") && shown.contains("reads (rndrd)"),
        "{shown}"
    );
    let mut rows: Vec<(i64, Option<String>, String, String, i64)> = lab
        .store()
        .metrics(id)
        .unwrap()
        .into_iter()
        .map(|m| (m.cell, m.role, m.mode, m.op, m.ops))
        .collect();
    rows.sort();
    let want = |c, role: &str, mode: &str, op: &str, n| {
        (
            c,
            Some(role.to_string()),
            mode.to_string(),
            op.to_string(),
            n,
        )
    };
    assert_eq!(
        rows,
        [
            want(0, "wal", "seqwr", "fsync", 300),
            want(0, "wal", "seqwr", "write", 300),
            want(1, "reads", "rndrd", "read", 300),
        ]
    );
    // the same roles the other way round: matched by name, not by position
    let r = lab.run(&[
        "--engine",
        "null",
        "--ops",
        "300",
        "--role",
        "reads:mode=rndrd,threads=2",
        "--role",
        "wal:mode=seqwr,bs=4k,fsync-freq=1,size=64k",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id2 = saved_id(&r.stderr);
    let c = lab
        .ok(&["compare", &id.to_string(), &id2.to_string(), "--json"])
        .json();
    let cells: Vec<(String, String)> = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "iops" && !r["sides"][1]["stat"].is_null())
        .map(|r| {
            (
                r["cell"].as_str().unwrap().to_string(),
                r["op"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for want in [
        ("wal (seqwr)", "write"),
        ("wal (seqwr)", "fsync"),
        ("reads (rndrd)", "read"),
    ] {
        assert!(
            cells.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {cells:?}"
        );
    }
    assert!(c["not_comparable"].as_array().unwrap().is_empty(), "{c}");
    // the report has a series per role
    let html = lab._tmp.path().join("r.html");
    lab.ok(&["report", &id.to_string(), "-o", html.to_str().unwrap()]);
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("wal (seqwr)") && h.contains("reads (rndrd)"));
}

/// A file set written by `run --verify --keep` in `lab.dir` (64 blocks of 16 KiB).
fn verify_set(lab: &Lab) {
    let r = iolab_db(
        &lab.db,
        &[
            "run",
            "--dir",
            lab.dir.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "1M",
            "--bs",
            "16k",
            "--mode",
            "seqwr",
            "--ops",
            "64",
            "--verify",
            "--keep",
            "--no-save",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn verify_dir_is_stored_listed_shown_and_kept_when_the_store_refuses_it() {
    let lab = Lab::new();
    verify_set(&lab);
    let dir = lab.dir.to_str().unwrap();
    // --no-save: nothing stored
    lab.ok(&["verify", "--dir", dir, "--no-save"]);
    let r = lab.ok(&[
        "verify",
        "--dir",
        dir,
        "--label",
        "after-reboot",
        "--tag",
        "host=a",
    ]);
    assert!(r.stderr.contains("saved as run 1"), "{}", r.stderr);
    let list = lab.ok(&["list"]).stdout;
    assert!(
        list.contains("verify 64 blocks checked, 0 lost, 0 misdirected, 0 torn, 0 stale"),
        "{list}"
    );
    let l: serde_json::Value = serde_json::from_str(&lab.ok(&["list", "--json"]).stdout).unwrap();
    assert_eq!(l["runs"].as_array().unwrap().len(), 1, "{l}");
    assert_eq!(l["runs"][0]["kind"], "verify");
    assert_eq!(l["runs"][0]["label"], "after-reboot");
    let show = lab.ok(&["show", "1"]).stdout;
    assert!(show.contains("verify: 64 blocks checked, 0 lost"), "{show}");
    assert!(show.contains("tags host=a"), "{show}");
    let j: serde_json::Value =
        serde_json::from_str(&lab.ok(&["show", "1", "--json"]).stdout).unwrap();
    assert_eq!(j["schema"], "iolab-verify/1");
    assert_eq!(j["verify"]["checked"], 64);

    // a store that refuses it: printed, kept in a file, exit 4; imported later
    let state = lab._tmp.path().join("state");
    Connection::open(&lab.db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER no_room BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'no room left'); END;",
        )
        .unwrap();
    let o = std::process::Command::new(bin())
        .args(["verify", "--dir", dir, "--json"])
        .env("IOLAB_DB", &lab.db)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kept_dir = state.join("iolab/unsaved");
    let files = entries(&kept_dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let kept = kept_dir.join(&files[0]);
    assert!(
        stderr.contains("not saved") && stderr.contains(kept.to_str().unwrap()),
        "{stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(doc, printed);
    let good = lab._tmp.path().join("good.db");
    let r = iolab_db(&good, &["import", kept.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("as run 1"), "{}", r.stdout);
    let l = iolab_db(&good, &["list", "--json"]);
    let l: serde_json::Value = serde_json::from_str(&l.stdout).unwrap();
    assert_eq!(l["runs"][0]["kind"], "verify");
}

/// Concurrent first use of a store that does not exist yet: 8 `iolab run` processes started
/// together on a fresh `--db` path, 20 times. Every one saves its run: a store being created is
/// never judged foreign ("not an iolab results store") by a process that finds it half made.
#[test]
fn concurrent_first_use_of_a_new_store_saves_every_run() {
    const PROCS: usize = 8;
    const TRIALS: usize = 20;
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = (0..PROCS)
        .map(|i| {
            let d = tmp.path().join(format!("data{i}"));
            std::fs::create_dir(&d).unwrap();
            d
        })
        .collect();
    for trial in 0..TRIALS {
        let db = tmp.path().join(format!("t{trial}/results.db"));
        let children: Vec<_> = dirs
            .iter()
            .map(|d| {
                std::process::Command::new(bin())
                    .args([
                        "run",
                        "--db",
                        db.to_str().unwrap(),
                        "--dir",
                        d.to_str().unwrap(),
                        "--files",
                        "1",
                        "--size",
                        "1M",
                        "--mode",
                        "rndrd",
                        "--engine",
                        "null",
                        "--ops",
                        "10",
                        "-q",
                    ])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(
                o.status.success(),
                "trial {trial}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let l = iolab(&["list", "--json", "--db", db.to_str().unwrap()]);
        assert_eq!(l.code, 0, "{}", l.stderr);
        assert_eq!(l.json()["runs"].as_array().unwrap().len(), PROCS);
        // Nothing but the store (and its WAL files) is left beside it: no half-made temporaries.
        let left: Vec<String> = entries(db.parent().unwrap())
            .into_iter()
            .filter(|n| !n.starts_with("results.db"))
            .collect();
        assert!(
            left.is_empty(),
            "trial {trial}: left beside the store: {left:?}"
        );
    }
}

/// A `--db` that parses as a URL is a URL: a scheme iolab does not know is one clear line naming
/// the supported ones (exit 2), and nothing is created, neither a file named after the URL nor
/// a run's files.
#[test]
fn a_db_url_of_an_unknown_scheme_is_refused_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    for url in [
        "mysql://u@h:3306/db",
        "http://example.invalid/x",
        "Redis://h/0",
    ] {
        for args in [
            vec!["list", "--db", url],
            vec![
                "run",
                "--db",
                url,
                "--dir",
                data.to_str().unwrap(),
                "--files",
                "1",
                "--size",
                "1M",
                "--mode",
                "rndrd",
                "--ops",
                "5",
            ],
        ] {
            let r = to_run(
                std::process::Command::new(bin())
                    .args(&args)
                    .current_dir(tmp.path())
                    .env_remove("IOLAB_DB")
                    .output()
                    .unwrap(),
            );
            assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
            assert!(
                r.stderr.contains("--db")
                    && r.stderr.contains("postgres://")
                    && r.stderr.contains("sqlite://"),
                "{}",
                r.stderr
            );
            assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
            assert!(r.stdout.is_empty());
        }
    }
    // Nothing was made: no file or folder named after a URL, no files in --dir.
    assert_eq!(entries(tmp.path()), ["data"]);
    assert!(entries(&data).is_empty());
    // The same through IOLAB_DB.
    let r = to_run(
        std::process::Command::new(bin())
            .args(["list"])
            .current_dir(tmp.path())
            .env("IOLAB_DB", "ftp://h/x")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("IOLAB_DB"), "{}", r.stderr);
    assert_eq!(entries(tmp.path()), ["data"]);
}

/// `sqlite:///path` names the same SQLite store as the plain path.
#[test]
fn a_sqlite_url_is_the_same_store_as_its_path() {
    let lab = Lab::new();
    let id = lab.saved(&["--mode", "rndrd", "--engine", "null", "--ops", "10"]);
    let url = format!("sqlite://{}", lab.db.display());
    let r = iolab(&["show", &id.to_string(), "--json", "--db", &url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["mode"], "rndrd");
    assert_eq!(
        r.json(),
        lab.ok(&["show", &id.to_string(), "--json"]).json()
    );
}

/// A lab on the test PostgreSQL server, or a printed SKIP (a failure under CI=true).
fn pg_lab(test: &str) -> Option<Lab> {
    let l = Lab::on(Backend::Pg);
    if l.is_none() {
        skip(
            test,
            "IOLAB_TEST_PG_URL is not set (scripts/test.sh starts the server as root)",
        );
    }
    l
}

/// Four hosts writing into one PostgreSQL store at once (its first use included), 50 runs
/// each: all 200 runs are saved, each group holds its own 50, no id twice.
#[test]
fn pg_four_concurrent_writers_of_fifty_runs_lose_nothing() {
    let Some(lab) = pg_lab("pg_four_concurrent_writers_of_fifty_runs_lose_nothing") else {
        return;
    };
    let children: Vec<_> = (0..4)
        .map(|i| {
            let d = lab._tmp.path().join(format!("w{i}"));
            std::fs::create_dir(&d).unwrap();
            std::process::Command::new(bin())
                .args([
                    "run",
                    "--dir",
                    d.to_str().unwrap(),
                    "--files",
                    "1",
                    "--size",
                    "1M",
                    "--mode",
                    "rndrd",
                    "--engine",
                    "null",
                    "--ops",
                    "20",
                    "--repeat",
                    "50",
                    "--label",
                    &format!("writer{i}"),
                    "-q",
                ])
                .env("IOLAB_DB", &lab.db)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let l = lab.ok(&["list", "--json", "--limit", "1000"]).json();
    let runs = l["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 200);
    let mut ids: Vec<i64> = runs.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 200);
    for i in 0..4 {
        let mine: Vec<&serde_json::Value> = runs
            .iter()
            .filter(|r| r["label"] == format!("writer{i}"))
            .collect();
        assert_eq!(mine.len(), 50, "writer{i}");
        let g = &mine[0]["group"];
        assert!(
            mine.iter().all(|r| &r["group"] == g),
            "writer{i}: one group"
        );
        // every run has its metrics
        let id = mine[0]["id"].to_string();
        let e = lab.ok(&["export", &id, "--format", "json"]).json();
        assert!(!e.to_string().is_empty());
    }
    let hosts: std::collections::BTreeSet<&str> =
        runs.iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(hosts.len(), 1, "runs name their host: {hosts:?}");
    assert!(!hosts.iter().next().unwrap().is_empty());
}

/// A PostgreSQL store that cannot be reached at start: one clear line naming the store (with
/// its password masked), exit 2, the run does not start; with --no-save it runs.
#[test]
fn pg_down_at_start_refuses_the_run_unless_no_save() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://iolab:secret@127.0.0.1:{port}/iolab");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--db",
            url.as_str(),
            "--dir",
            data.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "1M",
            "--mode",
            "rndrd",
            "--ops",
            "10",
        ];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let r = to_run(
        std::process::Command::new(bin())
            .args(args(&[]))
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("cannot reach the PostgreSQL results store")
            && r.stderr
                .contains(&format!("--db postgres://iolab:***@127.0.0.1:{port}/iolab"))
            && !r.stderr.contains("secret")
            && r.stderr.contains("--no-save"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    assert!(entries(&data).is_empty(), "the run did not start");
    let r = to_run(
        std::process::Command::new(bin())
            .args(args(&["--no-save", "--json"]))
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["results"]["read"]["ops"], 10);
}

/// PostgreSQL going away while a run measures (its connection ended by the server): the
/// results are printed, the document is kept in the local spool, exit 4; the next command that
/// writes into the store saves it.
#[test]
fn pg_going_away_mid_run_prints_keeps_the_results_and_exits_4() {
    let Some(lab) = pg_lab("pg_going_away_mid_run_prints_keeps_the_results_and_exits_4") else {
        return;
    };
    let pg = lab._pg.as_ref().unwrap();
    let state = lab._tmp.path().join("state");
    let mut cmd = std::process::Command::new(bin());
    cmd.args([
        "run",
        "--dir",
        lab.dir.to_str().unwrap(),
        "--files",
        "1",
        "--size",
        "1M",
        "--mode",
        "rndrd",
        "--engine",
        "null",
        "--rate",
        "1000",
        "--time",
        "2",
        "--report-interval",
        "0.2",
        "-q",
        "--json",
    ])
    .env("IOLAB_DB", &lab.db)
    .env("XDG_STATE_HOME", &state);
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the run measures, the server ends every connection to the store's database.
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("[ 0.2s ]") {
        let n = std::io::Read::read(&mut err, &mut buf).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let killed: i64 = pg
        .client()
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(killed >= 1, "iolab's connection was ended");
    let _ = std::io::Read::read_to_end(&mut err, &mut seen);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&seen);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(printed["results"]["read"]["ops"].as_u64().unwrap() > 0);
    let dir = state.join("iolab/unsaved");
    let files = entries(&dir);
    assert_eq!(files.len(), 1, "{files:?}: {stderr}");
    let kept = dir.join(&files[0]);
    assert!(
        stderr.contains("not saved") && stderr.contains(kept.to_str().unwrap()),
        "{stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(doc, printed);
    assert_eq!(
        lab.ok(&["list", "--json"]).json()["runs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // The next command that writes into the store saves the kept run first, and removes it.
    let next = std::process::Command::new(bin())
        .args([
            "run",
            "--dir",
            lab.dir.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "1M",
            "--mode",
            "seqrd",
            "--engine",
            "null",
            "--ops",
            "10",
            "-q",
        ])
        .env("IOLAB_DB", &lab.db)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let next_err = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{next_err}");
    assert!(
        next_err.contains(&format!("saved {}", kept.display())) && next_err.contains("as run 1"),
        "{next_err}"
    );
    assert!(next_err.contains("saved as run 2"), "{next_err}");
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    assert_eq!(lab.ok(&["show", "1", "--json"]).json(), printed);
}

/// `store copy` between SQLite and PostgreSQL, both ways: every run with its group, tags,
/// metrics and histograms, ids mapped; a second copy adds nothing.
#[test]
fn store_copy_moves_runs_between_sqlite_and_postgres_once() {
    let Some(pg) = pg_lab("store_copy_moves_runs_between_sqlite_and_postgres_once") else {
        return;
    };
    let lite = Lab::new();
    // In SQLite: a group of two, a tagged single run, an import.
    let r = lite.run(&[
        "--mode", "rndrd", "--engine", "null", "--ops", "50", "--repeat", "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let single = lite.saved(&[
        "--mode", "rndrw", "--ops", "100", "--tag", "disk=vda", "--label", "one",
    ]);
    import_fixture(&lite, "fio-randrw-jsonplus.json");
    let n = |lab: &Lab| {
        lab.ok(&["list", "--json"]).json()["runs"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(n(&lite), 4);
    // PostgreSQL already holds a run of its own: ids differ, so they are mapped.
    pg.saved(&["--mode", "seqrd", "--engine", "null", "--ops", "10"]);
    let copy = |from: &Path, to: &Path| {
        let r = iolab(&[
            "store",
            "copy",
            "--from",
            from.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json()
    };
    let first = copy(&lite.db, &pg.db);
    assert_eq!(first["copied"].as_array().unwrap().len(), 4, "{first}");
    let to_of = |j: &serde_json::Value, from: i64| {
        j["copied"]
            .as_array()
            .unwrap()
            .iter()
            .chain(j["already"].as_array().unwrap())
            .find(|m| m["from"] == from)
            .unwrap()["to"]
            .as_i64()
            .unwrap()
    };
    let new_single = to_of(&first, single);
    assert_ne!(new_single, single);
    assert_eq!(n(&pg), 5);
    // the same run on both sides: document, metrics, tags, group
    let show = |lab: &Lab, id: i64| lab.ok(&["show", &id.to_string(), "--json"]).json();
    assert_eq!(show(&lite, single), show(&pg, new_single));
    let exp = |lab: &Lab, id: i64| {
        let mut e = lab
            .ok(&["export", &id.to_string(), "--format", "json"])
            .json();
        // the run's own id is the one thing that differs
        e["runs"][0]["id"] = serde_json::Value::Null;
        for m in e["runs"][0]["metrics"].as_array_mut().into_iter().flatten() {
            m["run_id"] = serde_json::Value::Null;
        }
        e
    };
    let (a, b) = (exp(&lite, single), exp(&pg, new_single));
    assert_eq!(a["runs"][0]["tags"], b["runs"][0]["tags"]);
    assert_eq!(a["runs"][0]["cells"], b["runs"][0]["cells"], "{a}\n{b}");
    let gl = pg.ok(&["list", "--json", "--label", "one"]).json();
    assert_eq!(gl["runs"][0]["id"], new_single);
    // the group came along whole
    let grouped: Vec<String> = pg.ok(&["list", "--json"]).json()["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["group"].as_str().map(String::from))
        .collect();
    assert_eq!(grouped.len(), 2, "{grouped:?}");
    assert_eq!(grouped[0], grouped[1]);
    let e = pg.ok(&["export", &grouped[0], "--format", "json"]).json();
    assert_eq!(e["runs"].as_array().unwrap().len(), 2, "{e}");
    // the histograms came along: percentiles recomputed from them agree
    let h1 = lite.store().histogram(single, 0, "read").unwrap().unwrap();
    let h2 = pg
        .store()
        .histogram(new_single, 0, "read")
        .unwrap()
        .unwrap();
    assert_eq!(h1.count(), h2.count());
    // again: nothing is copied twice
    let again = copy(&lite.db, &pg.db);
    assert_eq!(again["copied"].as_array().unwrap().len(), 0, "{again}");
    assert_eq!(again["already"].as_array().unwrap().len(), 4);
    assert_eq!(n(&pg), 5);
    // and back: PostgreSQL into a new SQLite store, then once more
    let back = lite._tmp.path().join("back.db");
    let b1 = copy(&pg.db, &back);
    assert_eq!(b1["copied"].as_array().unwrap().len(), 5);
    let b2 = copy(&pg.db, &back);
    assert_eq!(b2["copied"].as_array().unwrap().len(), 0);
    let r = iolab_db(
        &back,
        &["show", &to_of(&b1, new_single).to_string(), "--json"],
    );
    assert_eq!(r.json(), show(&lite, single));
}

/// A PostgreSQL database whose `runs` table iolab did not make, and a store of a newer schema,
/// are refused as SQLite files are: exit 2, one line, nothing run, nothing changed.
#[test]
fn pg_stores_that_are_not_ours_or_newer_are_refused() {
    let Some(other) = pg_lab("pg_stores_that_are_not_ours_or_newer_are_refused") else {
        return;
    };
    let Some(newer) = pg_lab("pg_stores_that_are_not_ours_or_newer_are_refused") else {
        return;
    };
    other
        ._pg
        .as_ref()
        .unwrap()
        .client()
        .batch_execute("CREATE TABLE runs (id INT, customer TEXT)")
        .unwrap();
    newer.ok(&["list"]);
    newer
        ._pg
        .as_ref()
        .unwrap()
        .client()
        .batch_execute("UPDATE iolab_store SET version = 99")
        .unwrap();
    for (lab, needle) in [
        (&other, "not an iolab results store"),
        (&newer, "newer iolab"),
    ] {
        let r = iolab_db(&lab.db, &["list"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
        assert!(
            r.stderr.contains(needle) && r.stderr.contains("--db postgres://"),
            "{}",
            r.stderr
        );
        let r = lab.run(&["--mode", "rndrd", "--ops", "5"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stdout.is_empty());
        assert!(entries(&lab.dir).is_empty());
    }
    // the other application's table is untouched, and no store was made beside it
    let mut c = other._pg.as_ref().unwrap().client();
    let cols: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = 'runs'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(cols, 2);
    let ours: bool = c
        .query_one("SELECT to_regclass('iolab_store') IS NOT NULL", &[])
        .unwrap()
        .get(0);
    assert!(!ours);
}

/// A run an SQLite store did not take (exit 4) is saved by the next run into that store, once
/// the store takes runs again, whatever spelling of its path that run uses.
#[test]
fn a_kept_run_is_saved_by_the_next_run_into_its_store() {
    let lab = Lab::new();
    let state = lab._tmp.path().join("state");
    drop(iolab::store::Store::open(&lab.db).unwrap());
    let conn = Connection::open(&lab.db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER no_room BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'no room left'); END;",
    )
    .unwrap();
    let run = |db: &Path| {
        std::process::Command::new(bin())
            .args([
                "run",
                "--dir",
                lab.dir.to_str().unwrap(),
                "--files",
                "1",
                "--size",
                "1M",
                "--mode",
                "rndrd",
                "--engine",
                "null",
                "--ops",
                "10",
                "-q",
                "--json",
            ])
            .env("IOLAB_DB", db)
            .env("XDG_STATE_HOME", &state)
            .output()
            .unwrap()
    };
    let o = run(&lab.db);
    assert_eq!(o.status.code(), Some(4));
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let dir = state.join("iolab/unsaved");
    assert_eq!(entries(&dir).len(), 1);
    // still refused: the next run is kept too, and the first stays
    let o = run(&lab.db);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is still not saved"), "{err}");
    assert_eq!(entries(&dir).len(), 2);
    conn.execute_batch("DROP TRIGGER no_room;").unwrap();
    // the store's path spelled another way (through its folder's `..`)
    let other = lab
        .db
        .parent()
        .unwrap()
        .join("../store")
        .join(lab.db.file_name().unwrap());
    let o = run(&other);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("(kept when").count(), 2, "{err}");
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    let l = lab.ok(&["list", "--json"]).json();
    assert_eq!(l["runs"].as_array().unwrap().len(), 3);
    assert_eq!(lab.ok(&["show", "1", "--json"]).json(), printed);
}

/// `store copy` from a file that does not exist, or into a URL of an unknown scheme: one line
/// naming the flag, exit 2, nothing made.
#[test]
fn store_copy_refuses_a_missing_source_and_an_unknown_scheme() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing.db");
    let to = tmp.path().join("to.db");
    let r = iolab(&[
        "store",
        "copy",
        "--from",
        missing.to_str().unwrap(),
        "--to",
        to.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--from") && r.stderr.contains("no such results store"),
        "{}",
        r.stderr
    );
    let lab = Lab::new();
    lab.saved(&["--mode", "rndrd", "--engine", "null", "--ops", "5"]);
    let r = iolab(&[
        "store",
        "copy",
        "--from",
        lab.db.to_str().unwrap(),
        "--to",
        "mysql://h/x",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--to mysql://h/x"), "{}", r.stderr);
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

// ---- Issue 24: no forged or doubled results (docs/safety.md, section 4) ----

/// Makes the SQLite store at `db` refuse every new run, as a full disk would.
fn refuse_runs(db: &Path) {
    drop(iolab::store::Store::open(db).unwrap());
    Connection::open(db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER no_room BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'no room left'); END;",
        )
        .unwrap();
}

fn take_runs(db: &Path) {
    Connection::open(db)
        .unwrap()
        .execute_batch("DROP TRIGGER no_room;")
        .unwrap();
}

/// `iolab run` (null engine, 10 reads) into `lab`'s store with the environment `env`.
fn run_with_env(lab: &Lab, env: &[(&str, &Path)], label: &str) -> std::process::Output {
    let mut c = std::process::Command::new(bin());
    c.args([
        "run",
        "--dir",
        lab.dir.to_str().unwrap(),
        "--files",
        "1",
        "--size",
        "1M",
        "--mode",
        "rndrd",
        "--engine",
        "null",
        "--ops",
        "10",
        "--label",
        label,
        "-q",
        "--json",
    ])
    .env("IOLAB_DB", &lab.db)
    .env_remove("XDG_STATE_HOME");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The labels of every run in `lab`'s store.
fn labels(lab: &Lab) -> Vec<String> {
    lab.ok(&["list", "--json", "--limit", "100000"]).json()["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A run the store did not take, kept in `state`'s spool: the file and its document.
fn kept_run(lab: &Lab, state: &Path, label: &str) -> (std::path::PathBuf, serde_json::Value) {
    let o = run_with_env(lab, &[("XDG_STATE_HOME", state)], label);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    let dir = state.join("iolab/unsaved");
    let f = entries(&dir)
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| err.contains(p.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no kept file named in: {err}"));
    let doc = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    (f, doc)
}

/// `-for-<hash>.json`: the end of a kept file's name, which names its store.
fn store_suffix(kept: &Path) -> String {
    let n = kept.file_name().unwrap().to_str().unwrap();
    n[n.find("-for-").unwrap()..].to_string()
}

/// Issue 24: a result planted by another user where root's iolab keeps unsaved documents (the
/// old world-writable `$TMPDIR/iolab-unsaved`, a `$XDG_STATE_HOME` that user made, a file of
/// theirs or a symlink in root's own spool) is never saved into root's store, and root never
/// keeps its own documents in a folder another user owns.
#[test]
fn a_spool_file_another_user_planted_is_never_saved() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !is_root() {
        return skip(
            "a_spool_file_another_user_planted_is_never_saved",
            "needs root to plant files as nobody",
        );
    }
    let lab = Lab::new();
    let t = lab._tmp.path();
    std::fs::set_permissions(t, PermissionsExt::from_mode(0o755)).unwrap();
    // a shared temporary directory, as /tmp is
    let shared = t.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, PermissionsExt::from_mode(0o1777)).unwrap();
    let home = t.join("home");
    std::fs::create_dir(&home).unwrap();
    // A real document kept by root names the store's suffix and is the forger's template.
    refuse_runs(&lab.db);
    let (real, doc) = kept_run(&lab, &home.join(".local/state"), "root's own");
    let suffix = store_suffix(&real);
    std::fs::remove_file(&real).unwrap();
    take_runs(&lab.db);
    let mut forged = doc.clone();
    forged["label"] = "forged".into();
    forged.as_object_mut().unwrap().remove("doc_id");
    let template = shared.join("template.json");
    std::fs::write(&template, serde_json::to_string(&forged).unwrap()).unwrap();
    std::fs::set_permissions(&template, PermissionsExt::from_mode(0o644)).unwrap();
    // As nobody: the old spool in the temporary directory, and a state folder of nobody's.
    let old_spool = shared.join("iolab-unsaved");
    let nobodys_state = shared.join("state");
    let name = format!("20260101T000000.000Z-1{suffix}");
    let o = as_nobody(&mut std::process::Command::new("sh"))
        .args([
            "-c",
            "umask 000; mkdir -p \"$1\" \"$2/iolab/unsaved\" && cp \"$3\" \"$1/$4\" && cp \"$3\" \"$2/iolab/unsaved/$4\"",
            "sh",
        ])
        .arg(&old_spool)
        .arg(&nobodys_state)
        .arg(&template)
        .arg(&name)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // In root's own spool: a file nobody owns, and a symlink to nobody's file.
    let own = home.join(".local/state/iolab/unsaved");
    let theirs = own.join(format!("20260101T000000.000Z-2{suffix}"));
    std::fs::copy(&template, &theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    std::os::unix::fs::symlink(
        old_spool.join(&name),
        own.join(format!("20260101T000000.000Z-3{suffix}")),
    )
    .unwrap();
    let planted = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    // Root's next runs, with TMPDIR the shared folder, then with nobody's XDG_STATE_HOME.
    for env in [
        vec![("HOME", home.as_path()), ("TMPDIR", shared.as_path())],
        vec![
            ("HOME", home.as_path()),
            ("TMPDIR", shared.as_path()),
            ("XDG_STATE_HOME", nobodys_state.as_path()),
        ],
    ] {
        let o = run_with_env(&lab, &env, "root");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(!err.contains("(kept when"), "{env:?}: {err}");
    }
    assert_eq!(labels(&lab), ["root", "root"], "no forged run saved");
    for p in [
        old_spool.join(&name),
        nobodys_state.join("iolab/unsaved").join(&name),
        theirs.clone(),
    ] {
        assert!(planted(&p), "{} was left as it was", p.display());
    }
    // Root keeps its own documents only in a folder of its own that no one else can write.
    refuse_runs(&lab.db);
    let o = run_with_env(
        &lab,
        &[
            ("HOME", home.as_path()),
            ("TMPDIR", shared.as_path()),
            ("XDG_STATE_HOME", nobodys_state.as_path()),
        ],
        "kept",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    let i = err.find("kept in ").unwrap_or_else(|| panic!("{err}")) + 8;
    let kept = Path::new(err[i..].split_whitespace().next().unwrap());
    assert!(!kept.starts_with(&shared), "{err}");
    let f = std::fs::symlink_metadata(kept).unwrap();
    let d = std::fs::metadata(kept.parent().unwrap()).unwrap();
    assert_eq!(
        (f.uid(), f.mode() & 0o7777),
        (0, 0o600),
        "{}",
        kept.display()
    );
    assert_eq!(
        (d.uid(), d.mode() & 0o7777),
        (0, 0o700),
        "{}",
        kept.display()
    );
}

/// Issue 24: eight commands that start together into a store with kept documents save each of
/// them exactly once (three trials of ten kept documents each).
#[test]
fn eight_commands_at_once_save_each_kept_document_once() {
    const PROCS: usize = 8;
    const KEPT: usize = 10;
    let lab = Lab::new();
    let state = lab._tmp.path().join("state");
    refuse_runs(&lab.db);
    let (real, doc) = kept_run(&lab, &state, "template");
    let suffix = store_suffix(&real);
    std::fs::remove_file(&real).unwrap();
    take_runs(&lab.db);
    let spool = state.join("iolab/unsaved");
    for trial in 0..3 {
        for i in 0..KEPT {
            let mut d = doc.clone();
            d["label"] = format!("kept-{trial}-{i}").into();
            d["doc_id"] = format!("{:032x}", 1000 * (trial + 1) + i).into();
            std::fs::write(
                spool.join(format!("20260101T00000{trial}.000Z-{i}{suffix}")),
                serde_json::to_string(&d).unwrap(),
            )
            .unwrap();
        }
        let children: Vec<_> = (0..PROCS)
            .map(|_| {
                let mut c = std::process::Command::new(bin());
                c.args([
                    "run",
                    "--dir",
                    lab.dir.to_str().unwrap(),
                    "--files",
                    "1",
                    "--size",
                    "1M",
                    "--mode",
                    "rndrd",
                    "--engine",
                    "null",
                    "--ops",
                    "10",
                    "--label",
                    "new",
                    "-q",
                ])
                .env("IOLAB_DB", &lab.db)
                .env("XDG_STATE_HOME", &state)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let l = labels(&lab);
        for i in 0..KEPT {
            let want = format!("kept-{trial}-{i}");
            assert_eq!(
                l.iter().filter(|x| **x == want).count(),
                1,
                "trial {trial}: {want} saved once: {l:?}"
            );
        }
        assert_eq!(l.len(), (trial + 1) * (KEPT + PROCS), "{l:?}");
        assert!(entries(&spool).is_empty(), "{:?}", entries(&spool));
    }
}

/// Issue 24: `iolab import KEPT` (what the exit-4 message says to run) saves the kept document
/// and removes the kept file; a copy of it left in the spool, and the same document imported
/// again, are not saved a second time.
#[test]
fn an_imported_kept_document_is_saved_once() {
    let lab = Lab::new();
    let state = lab._tmp.path().join("state");
    refuse_runs(&lab.db);
    let (kept, _) = kept_run(&lab, &state, "kept");
    let copy = kept.with_file_name(format!("20260101T000000.000Z-9{}", store_suffix(&kept)));
    std::fs::copy(&kept, &copy).unwrap();
    let elsewhere = lab._tmp.path().join("kept.json");
    std::fs::copy(&kept, &elsewhere).unwrap();
    take_runs(&lab.db);
    let r = iolab_db(&lab.db, &["import", kept.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("as run 1"), "{}", r.stdout);
    assert!(!kept.exists(), "the kept file is removed once saved");
    // the next command finds the copy: already saved, not saved again
    let o = run_with_env(&lab, &[("XDG_STATE_HOME", state.as_path())], "next");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(labels(&lab), ["next", "kept"]);
    assert!(
        !copy.exists(),
        "the copy is removed: its document is stored"
    );
    // the same document imported again from elsewhere: said, not saved
    let r = iolab_db(&lab.db, &["import", elsewhere.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("already"), "{}", r.stdout);
    assert_eq!(labels(&lab), ["next", "kept"]);
}

/// Issue 24: two `iolab store copy` at once into the same store copy every run exactly once
/// (the source's document ids are a unique key of the destination), with its group made once;
/// three trials, each into a new destination. (Before the fix SQLite doubled a run or more in
/// most trials, PostgreSQL in every one.)
fn two_store_copies_at_once(backend: Backend, test: &str) {
    const GROUP: usize = 100;
    let src = Lab::new();
    let r = src.run(&[
        "--mode",
        "rndrd",
        "--engine",
        "null",
        "--ops",
        "5",
        "--repeat",
        &GROUP.to_string(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    import_fixture(&src, "fio-randread.json");
    let n = src.ok(&["list", "--json", "--limit", "1000"]).json()["runs"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(n, GROUP + 1);
    for trial in 0..3 {
        let Some(dst) = Lab::on(backend) else {
            return skip(
                test,
                "IOLAB_TEST_PG_URL is not set (scripts/test.sh starts the server as root)",
            );
        };
        let children: Vec<_> = (0..2)
            .map(|_| {
                std::process::Command::new(bin())
                    .args(["store", "copy", "--from"])
                    .arg(&src.db)
                    .arg("--to")
                    .arg(&dst.db)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let runs = dst.ok(&["list", "--json", "--limit", "1000"]).json()["runs"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(runs.len(), n, "trial {trial}: every run once");
        let mut groups: Vec<String> = runs
            .iter()
            .filter_map(|r| r["group"].as_str().map(String::from))
            .collect();
        assert_eq!(groups.len(), GROUP, "trial {trial}");
        groups.dedup();
        assert_eq!(
            groups.len(),
            1,
            "trial {trial}: the group made once: {groups:?}"
        );
    }
}

#[test]
fn sqlite_two_store_copies_at_once_copy_each_run_once() {
    two_store_copies_at_once(
        Backend::Sqlite,
        "sqlite_two_store_copies_at_once_copy_each_run_once",
    );
}

#[test]
fn pg_two_store_copies_at_once_copy_each_run_once() {
    two_store_copies_at_once(
        Backend::Pg,
        "pg_two_store_copies_at_once_copy_each_run_once",
    );
}

/// Issue 24: a document of an older iolab (no `doc_id`) that a store before schema 6 holds
/// already (a row with no document id: `iolab import` of a kept file left the file) is not
/// saved again when the next command finds the kept file.
#[test]
fn a_document_stored_before_document_ids_is_not_saved_again() {
    let lab = Lab::new();
    let state = lab._tmp.path().join("state");
    refuse_runs(&lab.db);
    let (kept, mut doc) = kept_run(&lab, &state, "old");
    take_runs(&lab.db);
    // as an older iolab wrote it, and stored it
    doc.as_object_mut().unwrap().remove("doc_id");
    std::fs::write(&kept, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let elsewhere = lab._tmp.path().join("old.json");
    std::fs::copy(&kept, &elsewhere).unwrap();
    let r = iolab_db(&lab.db, &["import", elsewhere.to_str().unwrap()]);
    assert!(r.stdout.contains("as run 1"), "{}", r.stdout);
    Connection::open(&lab.db)
        .unwrap()
        .execute_batch("UPDATE runs SET doc_id = NULL")
        .unwrap();
    let o = run_with_env(&lab, &[("XDG_STATE_HOME", state.as_path())], "next");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("holds its document already, as run 1"),
        "{err}"
    );
    assert_eq!(labels(&lab), ["next", "old"]);
    assert!(!kept.exists());
}

// ------------------------------------------------ issue 24: hostile input gets one line, exit 2

/// iolab in `d` (working directory) with `args`, the store given by `--db` in `args`.
fn in_dir(d: &Path, args: &[&str]) -> Run {
    to_run(
        std::process::Command::new(bin())
            .args(args)
            .current_dir(d)
            .env_remove("IOLAB_DB")
            .env("XDG_DATA_HOME", d.join("xdg"))
            .output()
            .unwrap(),
    )
}

/// `iolab import /dev/zero` grew until the OOM killer; /dev/urandom read forever. Nothing is
/// created for a refused import (the store was opened first).
#[test]
fn import_refuses_what_is_not_a_bounded_regular_file() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let db = db.to_str().unwrap();
    for (f, want) in [
        (
            "/dev/zero",
            "/dev/zero: a character device, not a regular file",
        ),
        (
            "/dev/urandom",
            "/dev/urandom: a character device, not a regular file",
        ),
        ("/tmp", "/tmp: a directory, not a regular file"),
    ] {
        let r = in_dir(d.path(), &["import", "--db", db, f]);
        assert_refused(&r, want);
    }
    let big = d.path().join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(65 << 20).unwrap();
    drop(f);
    let r = in_dir(d.path(), &["import", "--db", db, big.to_str().unwrap()]);
    assert_refused(&r, "larger than 64 MiB");
    let garbage = d.path().join("g.json");
    std::fs::write(
        &garbage,
        b"{\"fio version\": \"fio-3\", \"jobs\": [{\"jobname\": ",
    )
    .unwrap();
    let r = in_dir(d.path(), &["import", "--db", db, garbage.to_str().unwrap()]);
    assert_refused(&r, "g.json: fio JSON");
    std::fs::remove_file(&big).unwrap();
    std::fs::remove_file(&garbage).unwrap();
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// `--db /dev/null` exited 1 ("disk I/O error"); `--db sqlite://relative` made `relative` in
/// the working directory.
#[test]
fn a_db_that_is_no_file_or_a_relative_sqlite_url_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let r = in_dir(d.path(), &["list", "--db", "/dev/null"]);
    assert_refused(&r, "--db /dev/null: not a regular file");
    let r = in_dir(d.path(), &["list", "--db", d.path().to_str().unwrap()]);
    assert_refused(&r, "not a regular file");
    let r = in_dir(d.path(), &["list", "--db", "sqlite://relative"]);
    assert_refused(&r, "sqlite:// takes an absolute path");
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// `list --since 99999999d` panicked (chrono's subtraction overflowed): an age before the epoch
/// lists everything.
#[test]
fn list_since_an_age_beyond_the_calendar_lists_everything() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let run = iolab_db(
        &db,
        &[
            "run",
            "--dir",
            d.path().to_str().unwrap(),
            "--mode",
            "rndrd",
            "--size",
            "1M",
            "--files",
            "1",
            "--engine",
            "null",
            "--time",
            "0.1",
            "-q",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    for age in ["99999999d", "9223372036854775807s", "99999999999w"] {
        let r = iolab_db(&db, &["list", "--since", age, "--json"]);
        assert_eq!(r.code, 0, "{age}: {}", r.stderr);
        assert_eq!(
            r.json()["runs"].as_array().map_or(0, |a| a.len()),
            1,
            "{age}: {}",
            r.stdout
        );
    }
    let r = iolab_db(&db, &["list", "--since", "99999999999999999999999d"]);
    assert_refused(&r, "--since");
}

/// `list --limit` beyond a signed 64-bit integer failed in the store's query (exit 1, "datatype
/// mismatch"), found by tests/fuzz_input.rs: refused naming the flag.
#[test]
fn list_limit_beyond_what_the_store_takes_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let r = iolab_db(&db, &["list", "--limit", "9223372036854775808"]);
    assert_refused(&r, "'--limit <LIMIT>'");
    let r = iolab_db(&db, &["list", "--limit", "9223372036854775807"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}
