//! Parses real fio / sysbench result files (tests/fixtures/import/) and, where the tools are
//! installed, fresh output from short live runs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use iolab::store::import::{Cell, Imported, OpSummary, parse};

fn fixture(name: &str) -> Imported {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn op<'a>(c: &'a Cell, name: &str) -> &'a OpSummary {
    c.ops
        .iter()
        .find(|o| o.op == name)
        .unwrap_or_else(|| panic!("cell {:?} has no {name:?} op: {:?}", c.name, c.ops))
}

/// iops agrees with ops / duration within 2%, and the op did something.
fn check_rate(c: &Cell, o: &OpSummary) {
    assert!(o.ops > 0, "{}: {} ops", c.name, o.op);
    assert!(c.duration_s > 0.0, "{}: duration {}", c.name, c.duration_s);
    let derived = o.ops as f64 / c.duration_s;
    assert!(
        (derived - o.iops).abs() <= 0.02 * o.iops,
        "{} {}: iops {} vs ops/duration {derived}",
        c.name,
        o.op,
        o.iops
    );
    if o.op == "read" || o.op == "write" {
        assert!(
            o.bytes > 0 && o.bytes_per_sec > 0.0,
            "{} {}: no bytes",
            c.name,
            o.op
        );
        let derived_bw = o.bytes as f64 / c.duration_s;
        assert!(
            (derived_bw - o.bytes_per_sec).abs() <= 0.02 * o.bytes_per_sec,
            "{} {}: bytes/s {} vs bytes/duration {derived_bw}",
            c.name,
            o.op,
            o.bytes_per_sec
        );
    }
}

fn check_fio_lat(o: &OpSummary) {
    let lat = o.lat_ns.as_ref().expect("fio reports latency");
    let (min, mean, max) = (lat.min.unwrap(), lat.mean.unwrap(), lat.max.unwrap());
    assert!(min <= mean && mean <= max, "{lat:?}");
    assert!(lat.stddev.is_some());
    let p50 = lat.p50.expect("p50");
    let p99 = lat.p99.expect("p99");
    assert!(
        p50 <= p99 && lat.p99_9.is_some() && lat.p99_99.is_some(),
        "{lat:?}"
    );
}

#[test]
fn fio_randread() {
    let imp = fixture("fio-randread.json");
    assert_eq!(imp.tool, "fio");
    assert!(
        imp.tool_version.starts_with("fio-3"),
        "{}",
        imp.tool_version
    );
    assert!(imp.start_time.is_some());
    assert_eq!(imp.cells.len(), 1);
    let c = &imp.cells[0];
    assert_eq!(c.name, "rr");
    assert_eq!(c.mode, "rndrd");
    assert_eq!(
        (c.threads, c.iodepth, c.bs_bytes, c.direct),
        (1, 1, 16384, false)
    );
    assert_eq!(c.engine, "psync");
    assert_eq!(c.options["filename"], "/tmp/x");
    assert_eq!(c.ops.len(), 1);
    let r = op(c, "read");
    check_rate(c, r);
    check_fio_lat(r);
    assert_eq!(r.hist_bins, None, "plain json has no bins");
}

#[test]
fn fio_randrw_jsonplus_group_reporting() {
    let imp = fixture("fio-randrw-jsonplus.json");
    assert_eq!(imp.tool, "fio");
    assert!(imp.tool_version.starts_with("fio-3"));
    assert_eq!(imp.cells.len(), 1, "group_reporting merges the threads");
    let c = &imp.cells[0];
    assert_eq!(c.mode, "rndrw");
    assert_eq!((c.threads, c.bs_bytes, c.direct), (2, 4096, false));
    let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(names, ["read", "write", "fsync"]);
    for name in ["read", "write", "fsync"] {
        let o = op(c, name);
        check_rate(c, o);
        check_fio_lat(o);
        let bins = o.hist_bins.as_ref().expect("json+ has bins");
        assert!(bins.windows(2).all(|w| w[0].0 < w[1].0), "bins sorted");
        let total: u64 = bins.iter().map(|b| b.1).sum();
        assert!(
            total.abs_diff(o.ops) <= o.ops / 100,
            "{name}: bins count {total} vs ops {}",
            o.ops
        );
    }
    // --fsync=10: fio syncs every 10 I/Os, so far fewer fsyncs than writes
    let (w, f) = (op(c, "write").ops, op(c, "fsync").ops);
    assert!(f > 0 && f < w, "writes {w} fsyncs {f}");
}

#[test]
fn fio_two_jobs_without_group_reporting() {
    // fio printed a job description line before the JSON; it is skipped.
    let imp = fixture("fio-two-jobs.json");
    assert_eq!(imp.options["bs"], "8k");
    assert_eq!(imp.cells.len(), 2);
    let (a, b) = (&imp.cells[0], &imp.cells[1]);
    assert_eq!((a.name.as_str(), a.mode.as_str()), ("seqr", "seqrd"));
    assert_eq!(
        (a.threads, a.iodepth, a.bs_bytes, a.direct),
        (1, 1, 8192, true)
    );
    assert_eq!(a.engine, "psync");
    assert_eq!((b.name.as_str(), b.mode.as_str()), ("rndw", "rndwr"));
    assert_eq!(
        (b.threads, b.iodepth, b.bs_bytes, b.direct),
        (1, 4, 4096, true)
    );
    assert_eq!(b.engine, "libaio");
    assert_eq!(
        b.options["size"], "16M",
        "global options merged under the job's"
    );
    assert_eq!(a.ops.len(), 1);
    assert_eq!(b.ops.len(), 1);
    check_rate(a, op(a, "read"));
    check_rate(b, op(b, "write"));
    check_fio_lat(op(b, "write"));
}

fn check_sysbench(imp: &Imported) -> &Cell {
    assert_eq!(imp.tool, "sysbench");
    assert!(imp.tool_version.starts_with("1.0."), "{}", imp.tool_version);
    assert_eq!(imp.start_time, None);
    assert_eq!(imp.cells.len(), 1);
    let c = &imp.cells[0];
    assert_eq!(c.name, "fileio");
    assert_eq!(c.options, imp.options);
    let ev = op(c, "events");
    check_rate(c, ev);
    let lat = ev.lat_ns.as_ref().expect("events latency");
    assert!(lat.p95.is_some(), "p95 present: {lat:?}");
    assert!(lat.min.is_some() && lat.mean.is_some() && lat.max.is_some());
    let sum: u64 = c
        .ops
        .iter()
        .filter(|o| o.op != "events")
        .map(|o| o.ops)
        .sum();
    assert!(
        sum.abs_diff(ev.ops) <= ev.ops / 50 + 2,
        "read+write+fsync {sum} vs events {}",
        ev.ops
    );
    c
}

#[test]
fn sysbench_rndrw() {
    let imp = fixture("sysbench-rndrw.txt");
    let c = check_sysbench(&imp);
    assert_eq!(c.mode, "rndrw");
    assert_eq!(
        (c.threads, c.iodepth, c.bs_bytes, c.direct),
        (1, 1, 16384, false)
    );
    assert_eq!(c.engine, "sync");
    assert_eq!(c.options["Files"], "4");
    assert_eq!(c.options["Total file size"], "64MiB");
    let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(names, ["read", "write", "fsync", "events"]);
    for o in &c.ops {
        check_rate(c, o);
    }
}

#[test]
fn sysbench_seqrd_direct() {
    let imp = fixture("sysbench-seqrd.txt");
    let c = check_sysbench(&imp);
    assert_eq!(c.mode, "seqrd");
    assert_eq!((c.threads, c.bs_bytes, c.direct), (1, 16384, true));
    assert_eq!(c.engine, "sync");
    let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(names, ["read", "events"], "zero-rate write/fsync skipped");
    check_rate(c, op(c, "read"));
}

/// Every recorded output in tests/fixtures/import/ parses to exactly the document saved in its
/// `NAME.expected.json` snapshot (taken from the hand-walking fio parser before it was replaced
/// by serde structs, so the two parsers agree on every fixture). The comparison is on the
/// serialized text, so floats are compared bit for bit, and the start time in UTC. `IOLAB_BLESS=1` rewrites the snapshots.
#[test]
fn every_fixture_matches_its_snapshot() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".expected.json"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    let bless = std::env::var("IOLAB_BLESS").as_deref() == Ok("1");
    for name in names {
        let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        let snap = dir.join(format!("{stem}.expected.json"));
        let mut imp = fixture(&name);
        // fio's start time is printed in the local time zone: compare the instant, in UTC
        imp.start_time = imp.start_time.map(|t| {
            chrono::DateTime::parse_from_rfc3339(&t)
                .unwrap_or_else(|e| panic!("{name}: start_time {t:?}: {e}"))
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        });
        let got = serde_json::to_string_pretty(&imp).unwrap() + "\n";
        if bless {
            std::fs::write(&snap, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&snap)
            .unwrap_or_else(|e| panic!("{}: {e} (IOLAB_BLESS=1 writes it)", snap.display()));
        assert_eq!(got, want, "{name}: output differs from {}", snap.display());
    }
}

/// The json+ fixture as a JSON value, to break in one place.
fn jsonplus() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/fio-randrw-jsonplus.json");
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

/// The error message of importing the json+ fixture after `edit`.
fn broken(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v = jsonplus();
    edit(&mut v);
    match parse(&serde_json::to_string_pretty(&v).unwrap()) {
        Ok(imp) => panic!("imported: {imp:?}"),
        Err(e) => e.to_string(),
    }
}

/// A change to a fio document.
type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;

fn remove(v: &mut serde_json::Value, key: &str) {
    v.as_object_mut().unwrap().remove(key).expect(key);
}

#[test]
fn fio_errors_name_the_path_and_the_kinds() {
    use serde_json::json;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["jobs"][0]["read"]["iops"] = json!("fast")),
            "jobs[0].read.iops: expected a number, found a string",
        ),
        (
            Box::new(|v| remove(&mut v["jobs"][0], "write")),
            "jobs[0].write: missing",
        ),
        (
            Box::new(|v| remove(&mut v["jobs"][0], "jobname")),
            "jobs[0].jobname: missing",
        ),
        (
            Box::new(|v| remove(&mut v["jobs"][0]["sync"], "total_ios")),
            "jobs[0].sync.total_ios: missing",
        ),
        (
            Box::new(|v| remove(&mut v["jobs"][0]["read"], "runtime")),
            "jobs[0].read.runtime: missing",
        ),
        (
            Box::new(|v| remove(&mut v["jobs"][0]["write"], "bw_bytes")),
            "jobs[0].write.bw_bytes: missing",
        ),
        (
            Box::new(|v| v["fio version"] = json!(null)),
            "[\"fio version\"]: expected a string, found null",
        ),
        (
            Box::new(|v| v["fio version"] = json!(3.33)),
            "[\"fio version\"]: expected a string, found a number",
        ),
        (
            Box::new(|v| v["global options"] = json!("bs=4k")),
            "[\"global options\"]: expected an object, found a string",
        ),
        (
            Box::new(|v| v["jobs"] = json!({})),
            "jobs: expected an array, found an object",
        ),
        (
            Box::new(|v| v["jobs"] = json!([])),
            "jobs: no jobs in the result",
        ),
        (
            Box::new(|v| v["jobs"][0] = json!(true)),
            "jobs[0]: expected an object, found a boolean",
        ),
        // an array is not read as the fields of a direction in order
        (
            Box::new(|v| v["jobs"][0]["read"] = json!([1, 2, 3])),
            "jobs[0].read: expected an object, found an array",
        ),
        (
            Box::new(|v| v["jobs"][0]["read"]["clat_ns"] = json!(null)),
            "jobs[0].read.clat_ns: expected an object, found null",
        ),
        (
            Box::new(|v| v["jobs"][0]["read"]["total_ios"] = json!(-1)),
            "jobs[0].read.total_ios: expected a non-negative integer, found -1",
        ),
        (
            Box::new(|v| v["jobs"][0]["read"]["io_bytes"] = json!(1.5)),
            "jobs[0].read.io_bytes: expected a non-negative integer, found 1.5",
        ),
        (
            Box::new(|v| v["jobs"][0]["job options"]["bs"] = json!(["4k"])),
            "jobs[0][\"job options\"].bs: expected a string, found an array",
        ),
        (
            Box::new(|v| v["jobs"][0]["job options"]["numjobs"] = json!("two")),
            "jobs[0][\"job options\"].numjobs: cannot parse numjobs \"two\"",
        ),
        (
            Box::new(|v| v["jobs"][0]["read"]["clat_ns"]["bins"]["12x"] = json!(1)),
            "jobs[0].read.clat_ns.bins[\"12x\"]: bin key is not an integer",
        ),
        (
            Box::new(|v| v["jobs"][0]["write"]["clat_ns"]["bins"]["1024"] = json!("many")),
            "jobs[0].write.clat_ns.bins[\"1024\"]: expected a non-negative integer, found a string",
        ),
        (
            Box::new(|v| v["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"] = json!(null)),
            "jobs[0].sync.lat_ns.percentile[\"99.000000\"]: expected a number, found null",
        ),
        (
            Box::new(|v| v["jobs"][0]["read"]["clat_ns"]["percentile"]["p50"] = json!(1)),
            "jobs[0].read.clat_ns.percentile.p50: percentile key is not a number",
        ),
    ];
    for (edit, want) in cases {
        assert_eq!(broken(edit), format!("fio JSON: {want}"));
    }
}

#[test]
fn fio_lenient_where_the_old_parser_was() {
    use serde_json::json;
    let want = serde_json::to_value(fixture("fio-randrw-jsonplus.json")).unwrap();
    let same = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = jsonplus();
        edit(&mut v);
        let imp = parse(&serde_json::to_string(&v).unwrap()).unwrap();
        serde_json::to_value(imp).unwrap()
    };
    // a direction that did no I/O needs only total_ios
    assert_eq!(
        same(&|v| {
            let trim = v["jobs"][0]["trim"].as_object_mut().unwrap();
            trim.retain(|k, _| k == "total_ios");
        }),
        want
    );
    // no trim at all (older fio), no sync, keys iolab does not read of any kind
    assert_eq!(
        same(&|v| {
            let job = v["jobs"][0].as_object_mut().unwrap();
            job.remove("trim");
            job.insert("usr_cpu".into(), json!("n/a"));
            job["read"]["slat_ns"] = json!(null);
            v["disk_util"] = json!(7);
        }),
        want
    );
    // a group id or time stamp of another kind is ignored, as before
    let mut other = same(&|v| v["jobs"][0]["groupid"] = json!("0"));
    assert_eq!(other["cells"][0]["threads"], 2);
    other = same(&|v| {
        v["timestamp_ms"] = json!("soon");
        v["timestamp"] = json!(null);
        v["time"] = json!(1);
    });
    assert_eq!(other["start_time"], serde_json::Value::Null);
    // numbers and booleans in job options are read as fio's strings
    other = same(&|v| {
        v["jobs"][0]["job options"]["numjobs"] = json!(2);
        v["jobs"][0]["job options"]["direct"] = json!(true);
    });
    assert_eq!(
        (&other["cells"][0]["threads"], &other["cells"][0]["direct"]),
        (&json!(2), &json!(true))
    );
}

// ---- live runs ----

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run_in(dir: &Path, tool: &str, args: &[&str]) -> String {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn live_fio() {
    if !have("fio") {
        return common::skip(
            "live_fio",
            "fio is not installed (scripts/setup.sh installs it)",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let file: PathBuf = dir.path().join("live.dat");
    let filename = format!("--filename={}", file.display());
    let text = run_in(
        dir.path(),
        "fio",
        &[
            "--name=live",
            "--rw=randrw",
            "--bs=8k",
            "--size=8M",
            &filename,
            "--runtime=1",
            "--time_based",
            "--output-format=json+",
        ],
    );
    let imp = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(imp.tool, "fio");
    let c = &imp.cells[0];
    assert_eq!(
        (c.name.as_str(), c.mode.as_str(), c.bs_bytes, c.threads),
        ("live", "rndrw", 8192, 1)
    );
    for name in ["read", "write"] {
        let o = op(c, name);
        check_rate(c, o);
        check_fio_lat(o);
        assert!(o.hist_bins.is_some());
    }
}

#[test]
fn live_sysbench() {
    if !have("sysbench") {
        return common::skip(
            "live_sysbench",
            "sysbench is not installed (scripts/setup.sh installs it)",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let common = ["fileio", "--file-num=2", "--file-total-size=8M"];
    let with = |extra: &[&str]| -> Vec<String> {
        common.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let args = |v: &[String]| v.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
    let prepare = with(&["prepare"]);
    let run = with(&["--file-test-mode=rndrd", "--threads=2", "--time=1", "run"]);
    let cleanup = with(&["cleanup"]);
    let call = |v: &Vec<String>| {
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        run_in(dir.path(), "sysbench", &refs)
    };
    call(&prepare);
    let text = call(&run);
    call(&cleanup);
    let imp = parse(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", args(&run)));
    let c = check_sysbench(&imp);
    assert_eq!(
        (c.mode.as_str(), c.threads, c.bs_bytes),
        ("rndrd", 2, 16384)
    );
    check_rate(c, op(c, "read"));
}

/// A fixture file as raw JSON.
fn raw(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name);
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

#[test]
fn numjobs_clones_without_group_reporting_import_as_one_summed_cell() {
    // fio --numjobs=4 without --group_reporting: four entries of one job, one cell in iolab
    let doc = raw("fio-numjobs4-separate.json");
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    let imp = fixture("fio-numjobs4-separate.json");
    assert_eq!(imp.cells.len(), 1, "{:?}", imp.cells);
    let c = &imp.cells[0];
    let grouped = fixture("fio-numjobs4-grouped.json");
    let g = &grouped.cells[0];
    assert_eq!(
        (c.mode.as_str(), c.threads, c.bs_bytes, c.engine.as_str()),
        (g.mode.as_str(), g.threads, g.bs_bytes, g.engine.as_str())
    );
    assert_eq!((c.mode.as_str(), c.threads, c.bs_bytes), ("rndrd", 4, 4096));
    let r = op(c, "read");
    let sum = |k: &str| {
        jobs.iter()
            .map(|j| j["read"][k].as_f64().unwrap())
            .sum::<f64>()
    };
    assert_eq!(r.ops as f64, sum("total_ios"));
    assert_eq!(r.bytes as f64, sum("io_bytes"));
    assert!(
        (r.iops - sum("iops")).abs() < 1e-6,
        "{} vs {}",
        r.iops,
        sum("iops")
    );
    assert!((r.bytes_per_sec - sum("bw_bytes")).abs() < 1e-3);
    check_rate(c, r);
    // the mean weighted by each job's I/Os, from clat_ns; percentiles cannot be merged
    let weighted = jobs
        .iter()
        .map(|j| {
            j["read"]["clat_ns"]["mean"].as_f64().unwrap()
                * j["read"]["total_ios"].as_f64().unwrap()
        })
        .sum::<f64>()
        / sum("total_ios");
    let lat = r.lat_ns.as_ref().unwrap();
    assert!(
        (lat.mean.unwrap() - weighted).abs() < 1e-6,
        "{lat:?} vs {weighted}"
    );
    let min = jobs
        .iter()
        .map(|j| j["read"]["clat_ns"]["min"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    let max = jobs
        .iter()
        .map(|j| j["read"]["clat_ns"]["max"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!((lat.min, lat.max), (Some(min), Some(max)));
    assert!(lat.stddev.unwrap() > 0.0);
    assert_eq!((lat.p50, lat.p99, lat.p99_99), (None, None, None));
    assert_eq!(r.hist_bins, None);
}

#[test]
fn numjobs_clones_in_json_plus_merge_their_bins() {
    let doc = raw("fio-numjobs4-separate-jsonplus.json");
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    let imp = fixture("fio-numjobs4-separate-jsonplus.json");
    assert_eq!(imp.cells.len(), 1);
    let c = &imp.cells[0];
    assert_eq!(c.threads, 4);
    let r = op(c, "read");
    let bins = r.hist_bins.as_ref().unwrap();
    assert_eq!(bins.iter().map(|b| b.1).sum::<u64>(), r.ops);
    assert!(
        bins.windows(2).all(|w| w[0].0 < w[1].0),
        "sorted, one entry per value"
    );
    // percentiles recomputed from the merged bins lie within the jobs' own range
    let lat = r.lat_ns.as_ref().unwrap();
    let p99: Vec<f64> = jobs
        .iter()
        .map(|j| {
            j["read"]["clat_ns"]["percentile"]["99.000000"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let got = lat.p99.unwrap();
    assert!(
        p99.iter().cloned().fold(f64::MAX, f64::min) <= got
            && got <= p99.iter().cloned().fold(0.0, f64::max),
        "{got} not within {p99:?}"
    );
    assert!(lat.p50.unwrap() <= lat.p90.unwrap() && lat.p90.unwrap() <= lat.p99_99.unwrap());
}

#[test]
fn latency_figures_all_come_from_clat_when_it_has_percentiles() {
    let doc = raw("fio-numjobs4-grouped.json");
    let read = &doc["jobs"][0]["read"];
    let (clat, tot) = (&read["clat_ns"], &read["lat_ns"]);
    assert_ne!(clat["mean"], tot["mean"]);
    let imp = fixture("fio-numjobs4-grouped.json");
    let c = &imp.cells[0];
    let lat = op(c, "read").lat_ns.clone().unwrap();
    assert_eq!(lat.mean, clat["mean"].as_f64());
    assert_eq!(lat.min, clat["min"].as_f64());
    assert_eq!(lat.max, clat["max"].as_f64());
    assert_eq!(lat.stddev, clat["stddev"].as_f64());
    assert_eq!(lat.p99, clat["percentile"]["99.000000"].as_f64());
    assert_eq!(c.options["iolab.latency_source"]["read"], "clat");
    // with percentiles of the total latency (lat_percentiles=1), lat_ns for every figure
    let mut v = doc.clone();
    let r = &mut v["jobs"][0]["read"];
    let pct = r["clat_ns"]
        .as_object_mut()
        .unwrap()
        .remove("percentile")
        .unwrap();
    r["lat_ns"]["percentile"] = pct.clone();
    let imp = parse(&serde_json::to_string(&v).unwrap()).unwrap();
    let lat = op(&imp.cells[0], "read").lat_ns.clone().unwrap();
    assert_eq!(lat.mean, tot["mean"].as_f64());
    assert_eq!(lat.min, tot["min"].as_f64());
    assert_eq!(lat.p99, pct["99.000000"].as_f64());
    assert_eq!(imp.cells[0].options["iolab.latency_source"]["read"], "lat");
}
