use super::*;
use serde_json::json;

// ---- fio helpers ----

fn dir(total: u64, runtime: u64) -> Value {
    json!({
        "io_bytes": total * 4096, "bw_bytes": (total * 4096 * 1000).checked_div(runtime).unwrap_or(0),
        "iops": if runtime > 0 { total as f64 * 1000.0 / runtime as f64 } else { 0.0 },
        "runtime": runtime, "total_ios": total,
        "clat_ns": { "min": 900, "max": 9000, "mean": 1900.0, "stddev": 10.0, "N": total,
            "percentile": { "1.000000": 950, "50.000000": 1000, "90.000000": 2000, "95.000000": 3000,
                "99.000000": 4000, "99.900000": 5000, "99.990000": 6000 } },
        "lat_ns": { "min": 1000, "max": 10000, "mean": 2000.5, "stddev": 11.0, "N": total },
    })
}

fn job(name: &str, opts: Value, read: Value, write: Value) -> Value {
    json!({
        "jobname": name, "groupid": 0, "job options": opts,
        "read": read, "write": write, "trim": dir(0, 0),
        "sync": { "total_ios": 0, "lat_ns": { "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 } },
        "job_runtime": 1000,
    })
}

fn doc(global: Option<Value>, jobs: Vec<Value>) -> String {
    let mut d = json!({ "fio version": "fio-3.33", "timestamp": 1700000000, "time": "Tue Nov 14 22:13:20 2023", "jobs": jobs });
    if let Some(g) = global {
        d["global options"] = g;
    }
    serde_json::to_string_pretty(&d).unwrap()
}

fn one(opts: Value) -> Cell {
    let text = doc(None, vec![job("j", opts, dir(1000, 1000), dir(0, 0))]);
    parse_fio_json(&text).unwrap().cells.remove(0)
}

fn fio_error(text: &str) -> (String, String) {
    match parse_fio_json(text) {
        Err(ImportError::Fio { path, msg }) => (path, msg),
        other => panic!("expected a fio error, got {other:?}"),
    }
}

#[test]
fn fio_rw_mapping() {
    for (rw, mode) in [
        ("randread", "rndrd"),
        ("randwrite", "rndwr"),
        ("randrw", "rndrw"),
        ("read", "seqrd"),
        ("write", "seqwr"),
        ("rw", "seqrw"),
        ("readwrite", "seqrw"),
        ("trim", "seqtrim"),
        ("randtrim", "rndtrim"),
        ("trimwrite", "seqtrimwr"),
        ("randtrimwrite", "rndtrimwr"),
        ("randread:8", "rndrd"),
    ] {
        assert_eq!(one(json!({ "rw": rw })).mode, mode, "rw={rw}");
    }
    assert_eq!(one(json!({ "readwrite": "randwrite" })).mode, "rndwr");
    // fio's default is a sequential read
    assert_eq!(one(json!({})).mode, "seqrd");
}

#[test]
fn fio_sizes() {
    for (s, v) in [
        ("4k", 4096),
        ("16k", 16384),
        ("16K", 16384),
        ("1m", 1 << 20),
        ("4096", 4096),
        ("64KiB", 64000),
        ("8kb", 8192),
        ("1g", 1 << 30),
        ("512b", 512),
        ("1.5m", 1572864),
        ("4k,16k", 4096),
        ("4k-16k", 4096),
    ] {
        assert_eq!(parse_fio_size(s, 1024), Some(v), "{s}");
    }
    assert_eq!(parse_fio_size("abc", 1024), None);
    assert_eq!(parse_fio_size("4x", 1024), None);
    assert_eq!(parse_fio_size("", 1024), None);
}

#[test]
fn fio_job_options_over_global() {
    let g = json!({ "bs": "8k", "direct": "1", "ioengine": "libaio", "iodepth": "8", "rw": "randread", "size": "1G" });
    let text = doc(
        Some(g.clone()),
        vec![
            job("a", json!({ "name": "a" }), dir(1000, 1000), dir(0, 0)),
            job(
                "b",
                json!({ "name": "b", "bs": "1m", "direct": "0", "ioengine": "io_uring", "iodepth": "32", "rw": "write" }),
                dir(0, 0),
                dir(1000, 1000),
            ),
        ],
    );
    let imp = parse_fio_json(&text).unwrap();
    assert_eq!(imp.tool, "fio");
    assert_eq!(imp.tool_version, "fio-3.33");
    assert_eq!(imp.options, g);
    let (a, b) = (&imp.cells[0], &imp.cells[1]);
    assert_eq!(
        (
            a.name.as_str(),
            a.mode.as_str(),
            a.bs_bytes,
            a.direct,
            a.engine.as_str(),
            a.iodepth
        ),
        ("a", "rndrd", 8192, true, "libaio", 8)
    );
    assert_eq!(
        (
            b.name.as_str(),
            b.mode.as_str(),
            b.bs_bytes,
            b.direct,
            b.engine.as_str(),
            b.iodepth
        ),
        ("b", "seqwr", 1 << 20, false, "io_uring", 32)
    );
    assert_eq!(a.options["size"], "1G");
    assert_eq!(b.options["bs"], "1m");
    assert_eq!(b.options["size"], "1G");
    // two entries in one group: no group_reporting, each entry is one thread
    assert_eq!((a.threads, b.threads), (1, 1));
}

/// The importer reads options by the option table's names and fio's aliases of them, as a job
/// file may spell them (fio's JSON prints them as written).
#[test]
fn fio_options_by_the_tables_names_and_aliases() {
    let c = one(json!({ "blocksize": "8k", "readwrite": "randread" }));
    assert_eq!((c.bs_bytes, c.mode.as_str()), (8192, "rndrd"));
    let o = crate::spec::fio_options::find("bs").unwrap();
    assert_eq!(crate::spec::fio_options::spellings(o), ["bs", "blocksize"]);
    // a job's own spelling wins over [global]'s other one, as fio resolves them
    let text = doc(
        Some(json!({ "blocksize": "64k" })),
        vec![job("j", json!({ "bs": "16k" }), dir(1000, 1000), dir(0, 0))],
    );
    assert_eq!(parse_fio_json(&text).unwrap().cells[0].bs_bytes, 16384);
}

#[test]
fn fio_defaults() {
    let c = one(json!({}));
    assert_eq!(
        (
            c.bs_bytes,
            c.iodepth,
            c.threads,
            c.direct,
            c.engine.as_str()
        ),
        (4096, 1, 1, false, "psync")
    );
    assert!(!one(json!({ "buffered": "1" })).direct);
    assert!(one(json!({ "buffered": "0" })).direct);
}

#[test]
fn fio_threads_group_reporting() {
    // one entry with numjobs=4: fio merged the threads (group_reporting)
    assert_eq!(one(json!({ "numjobs": "4" })).threads, 4);
    // numjobs=2 without group_reporting: two entries in the same group, one cell of 2
    let j = job("x", json!({ "numjobs": "2" }), dir(10, 1000), dir(0, 0));
    let imp = parse_fio_json(&doc(None, vec![j.clone(), j.clone()])).unwrap();
    assert_eq!(imp.cells.iter().map(|c| c.threads).collect::<Vec<_>>(), [2]);
    let r = &imp.cells[0].ops[0];
    assert_eq!((r.ops, r.bytes, r.iops), (20, 20 * 4096, 20.0));
    // the same job name with other options, or in another group, stays apart
    let k = job(
        "x",
        json!({ "numjobs": "2", "bs": "8k" }),
        dir(10, 1000),
        dir(0, 0),
    );
    let mut l = job("x", json!({ "numjobs": "2" }), dir(10, 1000), dir(0, 0));
    l["groupid"] = json!(1);
    // (alone in group 1, `l` reads as group_reporting: numjobs threads)
    let imp = parse_fio_json(&doc(None, vec![j.clone(), j, k, l])).unwrap();
    assert_eq!(
        imp.cells.iter().map(|c| c.threads).collect::<Vec<_>>(),
        [2, 1, 2]
    );
}

#[test]
fn fio_ops_and_latency() {
    let text = doc(
        None,
        vec![job(
            "j",
            json!({ "rw": "randrw" }),
            dir(1000, 2000),
            dir(500, 2000),
        )],
    );
    let c = parse_fio_json(&text).unwrap().cells.remove(0);
    assert_eq!(c.duration_s, 2.0);
    assert_eq!(c.ops.len(), 2);
    let r = &c.ops[0];
    assert_eq!(
        (r.op.as_str(), r.ops, r.bytes, r.iops, r.bytes_per_sec),
        ("read", 1000, 4096000, 500.0, 2048000.0)
    );
    let lat = r.lat_ns.as_ref().unwrap();
    // every figure from clat_ns, the one with percentiles
    assert_eq!(
        (lat.min, lat.mean, lat.max, lat.stddev),
        (Some(900.0), Some(1900.0), Some(9000.0), Some(10.0))
    );
    assert_eq!(
        c.options[LATENCY_SOURCE_KEY],
        json!({ "read": "clat", "write": "clat" })
    );
    assert_eq!(
        (lat.p50, lat.p90, lat.p95, lat.p99, lat.p99_9, lat.p99_99),
        (
            Some(1000.0),
            Some(2000.0),
            Some(3000.0),
            Some(4000.0),
            Some(5000.0),
            Some(6000.0)
        )
    );
    assert_eq!(r.hist_bins, None);
    assert_eq!((c.ops[1].op.as_str(), c.ops[1].ops), ("write", 500));
}

#[test]
fn fio_lat_percentiles_preferred() {
    // lat_percentiles=1: fio prints the percentiles in lat_ns, none in clat_ns
    let mut r = dir(100, 1000);
    r["clat_ns"].as_object_mut().unwrap().remove("percentile");
    r["lat_ns"]["percentile"] = json!({ "50.000000": 1111, "99.990000": 9999 });
    let c = parse_fio_json(&doc(None, vec![job("j", json!({}), r, dir(0, 0))]))
        .unwrap()
        .cells
        .remove(0);
    let lat = c.ops[0].lat_ns.clone().unwrap();
    assert_eq!(
        (lat.p50, lat.p99_99, lat.p90),
        (Some(1111.0), Some(9999.0), None)
    );
    assert_eq!((lat.mean, lat.min), (Some(2000.5), Some(1000.0)));
    assert_eq!(c.options[LATENCY_SOURCE_KEY]["read"], "lat");
}

#[test]
fn fio_duration_fallback_job_runtime() {
    // no I/O at all: job_runtime (ms, summed over the merged threads)
    let mut j = job("j", json!({ "numjobs": "2" }), dir(0, 0), dir(0, 0));
    j["job_runtime"] = json!(3000);
    let c = parse_fio_json(&doc(None, vec![j])).unwrap().cells.remove(0);
    assert_eq!((c.duration_s, c.ops.len()), (1.5, 0));
}

#[test]
fn fio_sync_and_trim() {
    let mut j = job(
        "j",
        json!({ "rw": "trimwrite", "fsync": "4" }),
        dir(0, 0),
        dir(400, 2000),
    );
    j["trim"] = dir(100, 2000);
    j["sync"] = json!({ "total_ios": 100, "lat_ns": { "min": 5, "max": 50, "mean": 20.0, "stddev": 1.0, "N": 100,
            "percentile": { "50.000000": 21, "99.000000": 49 }, "bins": { "21": 60, "5": 10, "49": 30 } } });
    let c = parse_fio_json(&doc(None, vec![j])).unwrap().cells.remove(0);
    assert_eq!(c.mode, "seqtrimwr");
    let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(names, ["write", "trim", "fsync"]);
    let f = &c.ops[2];
    assert_eq!(
        (f.ops, f.bytes, f.iops, f.bytes_per_sec),
        (100, 0, 50.0, 0.0)
    );
    let lat = f.lat_ns.as_ref().unwrap();
    assert_eq!(
        (lat.min, lat.max, lat.p50, lat.p99, lat.p95),
        (Some(5.0), Some(50.0), Some(21.0), Some(49.0), None)
    );
    assert_eq!(f.hist_bins, Some(vec![(5, 10), (21, 60), (49, 30)]));
}

#[test]
fn fio_jsonplus_bins() {
    let mut r = dir(6, 1000);
    r["clat_ns"]["bins"] = json!({ "2048": 1, "1024": 2, "10240": 3 });
    let c = parse_fio_json(&doc(None, vec![job("j", json!({}), r.clone(), dir(0, 0))]))
        .unwrap()
        .cells
        .remove(0);
    assert_eq!(
        c.ops[0].hist_bins,
        Some(vec![(1024, 2), (2048, 1), (10240, 3)])
    );
    // lat_ns.bins when fio printed them there (lat_percentiles=1, clat_ns without any)
    r["lat_ns"]["bins"] = json!({ "3000": 6 });
    r["lat_ns"]["percentile"] = r["clat_ns"]["percentile"].clone();
    let clat = r["clat_ns"].as_object_mut().unwrap();
    clat.remove("bins");
    clat.remove("percentile");
    let c = parse_fio_json(&doc(None, vec![job("j", json!({}), r, dir(0, 0))]))
        .unwrap()
        .cells
        .remove(0);
    assert_eq!(c.ops[0].hist_bins, Some(vec![(3000, 6)]));
}

#[test]
fn fio_start_time_from_timestamp() {
    let imp = parse_fio_json(&doc(None, vec![job("j", json!({}), dir(1, 1), dir(0, 0))])).unwrap();
    let t = chrono::DateTime::parse_from_rfc3339(imp.start_time.as_deref().unwrap()).unwrap();
    assert_eq!(t.timestamp(), 1700000000);
    // no timestamp: the "time" text (local time) is used
    let text = r#"{"fio version": "fio-3.1", "time": "Tue Nov 14 22:13:20 2023", "jobs": []}"#;
    let top: FioOutput = serde_json::from_str(text).unwrap();
    let s = fio_start_time(&top).unwrap();
    assert!(s.starts_with("2023-11-14T22:13:20"), "{s}");
    let top: FioOutput = serde_json::from_value(json!({ "fio version": "x", "jobs": [] })).unwrap();
    assert_eq!(fio_start_time(&top), None);
}

#[test]
fn fio_leading_text_skipped() {
    let body = doc(None, vec![job("j", json!({}), dir(10, 1000), dir(0, 0))]);
    let text = format!(
        "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\nj: (g=0): rw=read, bs=(R) 4096B-4096B\n{body}\nfio: trailing noise\n"
    );
    let imp = parse(&text).unwrap();
    assert_eq!(imp.cells[0].ops[0].ops, 10);
}

#[test]
fn fio_error_not_json() {
    let (path, msg) = fio_error("note: x\n{\n  \"fio version\": \"fio-3.33\",\n  \"jobs\": [,]\n}");
    assert_eq!(path, "$");
    assert!(msg.contains("line 4 column 12"), "{msg}");
    let (path, msg) = fio_error("no json here");
    assert_eq!((path.as_str(), msg.as_str()), ("$", "no JSON object found"));
    let (path, _) = fio_error("[1, 2]");
    assert_eq!(path, "$");
}

#[test]
fn fio_error_paths() {
    let ok = || job("j", json!({}), dir(10, 1000), dir(0, 0));
    assert_eq!(fio_error(r#"{"jobs": []}"#).0, "[\"fio version\"]");
    assert_eq!(fio_error(r#"{"fio version": "fio-3.33"}"#).0, "jobs");
    assert_eq!(
        fio_error(r#"{"fio version": "fio-3.33", "jobs": {}}"#).0,
        "jobs"
    );
    assert_eq!(
        fio_error(r#"{"fio version": "fio-3.33", "jobs": []}"#).0,
        "jobs"
    );

    let mut bad = ok();
    bad["read"].as_object_mut().unwrap().remove("total_ios");
    let (path, msg) = fio_error(&doc(None, vec![ok(), bad]));
    assert_eq!(
        (path.as_str(), msg.as_str()),
        ("jobs[1].read.total_ios", "missing")
    );

    let mut bad = ok();
    bad["read"]["iops"] = json!("fast");
    let (path, msg) = fio_error(&doc(None, vec![bad]));
    assert_eq!(
        (path.as_str(), msg.as_str()),
        ("jobs[0].read.iops", "expected a number, found a string")
    );

    let mut bad = ok();
    bad.as_object_mut().unwrap().remove("write");
    assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].write");

    let mut bad = ok();
    bad.as_object_mut().unwrap().remove("jobname");
    assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].jobname");

    let mut bad = ok();
    bad["job options"] = json!({ "bs": "huge" });
    assert_eq!(
        fio_error(&doc(None, vec![bad])).0,
        "jobs[0][\"job options\"].bs"
    );

    let (path, _) = fio_error(&doc(Some(json!({ "numjobs": "two" })), vec![ok()]));
    assert_eq!(path, "[\"global options\"].numjobs");

    let mut bad = ok();
    bad["read"]["clat_ns"]["bins"] = json!({ "12x": 1 });
    assert_eq!(
        fio_error(&doc(None, vec![bad])).0,
        "jobs[0].read.clat_ns.bins[\"12x\"]"
    );

    let mut bad = ok();
    bad["read"]["clat_ns"]["percentile"] = json!({ "50.000000": "x" });
    assert_eq!(
        fio_error(&doc(None, vec![bad])).0,
        "jobs[0].read.clat_ns.percentile[\"50.000000\"]"
    );

    let mut bad = ok();
    bad["sync"] = json!({ "lat_ns": {} });
    assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].sync.total_ios");

    let mut bad = ok();
    bad["read"]["total_ios"] = json!(-3);
    assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].read.total_ios");

    assert_eq!(
        fio_error(r#"{"fio version": "fio-3.33", "jobs": [7]}"#).0,
        "jobs[0]"
    );
}

#[test]
fn error_display() {
    let e = fio_err("jobs[0].read.iops", "missing");
    assert_eq!(e.to_string(), "fio JSON: jobs[0].read.iops: missing");
    assert_eq!(sb_err(3, "x").to_string(), "sysbench output, line 3: x");
}

#[test]
fn serde_round_trip_pairs() {
    let mut r = dir(3, 1000);
    r["clat_ns"]["bins"] = json!({ "1024": 2, "2048": 1 });
    let imp = parse_fio_json(&doc(None, vec![job("j", json!({}), r, dir(0, 0))])).unwrap();
    let v = serde_json::to_value(&imp).unwrap();
    assert_eq!(
        v["cells"][0]["ops"][0]["hist_bins"],
        json!([[1024, 2], [2048, 1]])
    );
    let back: Imported = serde_json::from_value(v).unwrap();
    assert_eq!(back, imp);
}

// ---- sysbench ----

const SB: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 4
Initializing random number generator from current time


Extra file open flags: directio
128 files, 16MiB each
2GiB total file size
Block size 16KiB
Number of IO requests: 0
Read/Write ratio for combined random IO test: 1.50
Periodic FSYNC enabled, calling fsync() each 100 requests.
Calling fsync() at the end of test, Enabled.
Using synchronous I/O mode
Doing random r/w test
Initializing worker threads...

Threads started!

[ 1s ] reads: 10.00 MiB/s writes: 6.00 MiB/s fsyncs: 10.00/s latency (ms,95%): 0.100

File operations:
    reads/s:                      600.00
    writes/s:                     400.00
    fsyncs/s:                     40.00

Throughput:
    read, MiB/s:                  9.38
    written, MiB/s:               6.25

General statistics:
    total time:                          10.0089s
    total number of events:              10400

Latency (ms):
         min:                                    0.01
         avg:                                    3.84
         max:                                  120.50
         95th percentile:                       10.65
         sum:                                39936.00

Threads fairness:
    events (avg/stddev):           2600.0000/12.00
    execution time (avg/stddev):   9.9840/0.00
";

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

fn sb_error(text: &str) -> (usize, String) {
    match parse_sysbench_fileio(text) {
        Err(ImportError::Sysbench { line, msg }) => (line, msg),
        other => panic!("expected a sysbench error, got {other:?}"),
    }
}

#[test]
fn sysbench_full() {
    let imp = parse_sysbench_fileio(SB).unwrap();
    assert_eq!(
        (
            imp.tool.as_str(),
            imp.tool_version.as_str(),
            imp.start_time.as_deref()
        ),
        ("sysbench", "1.0.20", None)
    );
    let c = &imp.cells[0];
    assert_eq!(imp.options, c.options);
    assert_eq!(
        (
            c.name.as_str(),
            c.mode.as_str(),
            c.threads,
            c.iodepth,
            c.bs_bytes,
            c.direct,
            c.engine.as_str()
        ),
        ("fileio", "rndrw", 4, 1, 16384, true, "sync")
    );
    assert_eq!(c.duration_s, 10.0089);
    let o = &c.options;
    assert_eq!(o["Number of threads"], "4");
    assert_eq!(o["Extra file open flags"], "directio");
    assert_eq!(o["Files"], "128");
    assert_eq!(o["File size"], "16MiB");
    assert_eq!(o["Total file size"], "2GiB");
    assert_eq!(o["Block size"], "16KiB");
    assert_eq!(o["Number of IO requests"], "0");
    assert_eq!(o["Read/Write ratio for combined random IO test"], "1.50");
    assert_eq!(o["Periodic FSYNC"], "100");
    assert_eq!(o["Calling fsync() at the end of test"], "Enabled");
    assert_eq!(o["I/O mode"], "synchronous");
    assert_eq!(o["Test"], "random r/w");
    assert_eq!(o["Random number generator"], "current time");
    assert_eq!(o.as_object().unwrap().len(), 13);

    let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(names, ["read", "write", "fsync", "events"]);
    // the kinds' counts split sysbench's exact total (10400 requests) in the ratio of their
    // rates (600 : 400 : 40), whole blocks of 16 KiB each
    let r = &c.ops[0];
    assert_eq!(
        (r.ops, r.iops, r.lat_ns.clone(), r.hist_bins.clone()),
        (6000, 600.0, None, None)
    );
    assert_eq!(r.bytes, 6000 * 16384);
    assert_eq!(r.bytes_per_sec, 9.38 * 1048576.0);
    assert_eq!(
        (c.ops[1].ops, c.ops[1].bytes, c.ops[1].bytes_per_sec),
        (4000, 4000 * 16384, 6.25 * 1048576.0)
    );
    let f = &c.ops[2];
    assert_eq!(
        (f.ops, f.bytes, f.iops, f.bytes_per_sec),
        (400, 0, 40.0, 0.0)
    );
    assert_eq!(r.ops + c.ops[1].ops + f.ops, 10400);
    let e = &c.ops[3];
    assert_eq!((e.ops, e.bytes), (10400, 0));
    assert!((e.iops - 10400.0 / 10.0089).abs() < 1e-9);
    let lat = e.lat_ns.as_ref().unwrap();
    assert_eq!(lat.min, Some(0.01 * 1e6));
    assert_eq!(lat.mean, Some(3.84 * 1e6));
    assert_eq!(lat.max, Some(120.5 * 1e6));
    assert_eq!(lat.p95, Some(10.65 * 1e6));
    assert_eq!((lat.stddev, lat.p50, lat.p99), (None, None, None));
}

#[test]
fn sysbench_modes_and_engines() {
    for (doing, mode) in [
        ("sequential write (creation)", "seqwr"),
        ("sequential rewrite", "seqrewr"),
        ("sequential read", "seqrd"),
        ("random read", "rndrd"),
        ("random write", "rndwr"),
        ("random r/w", "rndrw"),
    ] {
        let text = SB.replace("Doing random r/w test", &format!("Doing {doing} test"));
        assert_eq!(
            parse_sysbench_fileio(&text).unwrap().cells[0].mode,
            mode,
            "{doing}"
        );
    }
    for (io, engine) in [
        ("asynchronous", "async"),
        ("fast mmaped", "mmap"),
        ("slow mmaped", "mmap"),
        ("synchronous", "sync"),
    ] {
        let text = SB.replace(
            "Using synchronous I/O mode",
            &format!("Using {io} I/O mode"),
        );
        assert_eq!(
            parse_sysbench_fileio(&text).unwrap().cells[0].engine,
            engine,
            "{io}"
        );
    }
    let text = SB.replace(
        "Extra file open flags: directio",
        "Extra file open flags: (none)",
    );
    assert!(!parse_sysbench_fileio(&text).unwrap().cells[0].direct);
    let text = SB.replace("Block size 16KiB", "Block size 1MiB");
    assert_eq!(
        parse_sysbench_fileio(&text).unwrap().cells[0].bs_bytes,
        1 << 20
    );
    let text = SB.replace("95th percentile", "99th percentile");
    let lat = parse_sysbench_fileio(&text).unwrap().cells[0].ops[3]
        .lat_ns
        .clone()
        .unwrap();
    assert_eq!((lat.p95, lat.p99), (None, Some(10.65 * 1e6)));
}

#[test]
fn sysbench_zero_rates_skipped() {
    let text = SB
        .replace(
            "writes/s:                     400.00",
            "writes/s:                     0.00",
        )
        .replace(
            "fsyncs/s:                     40.00",
            "fsyncs/s:                     0.00",
        );
    let c = parse_sysbench_fileio(&text).unwrap().cells.remove(0);
    let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(names, ["read", "events"]);
}

#[test]
fn sysbench_sizes() {
    assert_eq!(parse_sysbench_size("16KiB"), Some(16384));
    assert_eq!(parse_sysbench_size("2GiB"), Some(2 << 30));
    assert_eq!(parse_sysbench_size("512B"), Some(512));
    assert_eq!(parse_sysbench_size("16Kb"), Some(16384));
    assert_eq!(parse_sysbench_size("16 furlongs"), None);
}

#[test]
fn sysbench_errors() {
    let last = SB.lines().count();
    let t = SB.replace(
        "reads/s:                      600.00",
        "reads/s:                      6x0.00",
    );
    let (line, msg) = sb_error(&t);
    assert_eq!(line, line_of(&t, "reads/s:"));
    assert_eq!(msg, "malformed number \"6x0.00\" for \"reads/s\"");

    let t = SB.replace("10.0089s", "ten seconds");
    assert_eq!(sb_error(&t).0, line_of(&t, "total time:"));

    let t = SB.replace("10400", "1e4");
    assert_eq!(sb_error(&t).0, line_of(&t, "total number of events:"));

    let t = SB.replace(
        "min:                                    0.01",
        "min:                                    -",
    );
    assert_eq!(sb_error(&t).0, line_of(&t, "min:"));

    let t = SB.replace(
        "written, MiB/s:               6.25",
        "written, MiB/s:               NaN",
    );
    assert_eq!(sb_error(&t).0, line_of(&t, "written, MiB/s:"));

    let t = SB.replace("Number of threads: 4", "Number of threads: four");
    assert_eq!(
        sb_error(&t),
        (
            4,
            "malformed number \"four\" for \"Number of threads\"".into()
        )
    );

    let t = SB.replace("Block size 16KiB", "Block size big");
    assert_eq!(
        sb_error(&t),
        (
            line_of(&t, "Block size"),
            "malformed block size \"big\"".into()
        )
    );

    let t = SB.replace("File operations:", "File ops:");
    assert_eq!(
        sb_error(&t),
        (last, "missing \"File operations:\" section".into())
    );

    let t = SB.replace("total time:", "total tim:");
    assert_eq!(
        sb_error(&t),
        (
            last,
            "missing \"total time:\" under \"General statistics:\"".into()
        )
    );

    let t = SB.replace("    fsyncs/s:                     40.00\n", "");
    assert_eq!(
        sb_error(&t),
        (
            last - 1,
            "missing \"fsyncs/s:\" under \"File operations:\"".into()
        )
    );

    // truncated after the "File operations:" block
    let cut: String = SB
        .lines()
        .take(line_of(SB, "Throughput:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (line, msg) = sb_error(&cut);
    assert_eq!(line, line_of(SB, "Throughput:"));
    assert_eq!(msg, "missing \"read, MiB/s:\" under \"Throughput:\"");

    assert_eq!(sb_error("").0, 1);
}

// ---- detection ----

#[test]
fn detect() {
    assert_eq!(parse(SB).unwrap().tool, "sysbench");
    let fio = doc(None, vec![job("j", json!({}), dir(1, 1), dir(0, 0))]);
    assert_eq!(parse(&fio).unwrap().tool, "fio");
    assert!(matches!(parse(""), Err(ImportError::Unknown(_))));
    assert!(matches!(parse("hello"), Err(ImportError::Unknown(_))));
    assert_eq!(
        parse(r#"{"a": 1}"#),
        Err(ImportError::Unknown(
            "a JSON object without a \"fio version\" key".into()
        ))
    );
    let prepare = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n128 files, 16384Kb each, 2048Mb total\nCreating files for the test...\n";
    assert!(
        matches!(parse(prepare), Err(ImportError::Unknown(m)) if m.contains("File operations"))
    );
    // broken fio JSON reports the fio error, not "unknown"
    assert!(
        matches!(parse("{\"fio version\": \"fio-3.33\", \"jobs\": [}"), Err(ImportError::Fio { path, .. }) if path == "$")
    );
    // sysbench output truncated inside a block reports the sysbench error
    let t = SB.replace("total time:", "total tim:");
    assert!(matches!(parse(&t), Err(ImportError::Sysbench { .. })));
    let e = parse("hello").unwrap_err().to_string();
    assert!(e.starts_with("not a result iolab can import: neither fio JSON nor sysbench fileio output (expected fio"), "{e}");
}

#[test]
fn parse_file_reads_each_format_from_one_parse() {
    let fio = doc(
        None,
        vec![job(
            "j",
            json!({"rw": "randread", "bs": "4k"}),
            dir(100, 1000),
            dir(0, 0),
        )],
    );
    assert!(matches!(parse_file(&fio), Ok(ImportFile::Tool(i)) if i.tool == "fio"));
    // fio's warnings before the JSON: still fio
    let warned = format!("fio: some warning\n{fio}");
    assert!(matches!(parse_file(&warned), Ok(ImportFile::Tool(i)) if i.tool == "fio"));
    // an iolab document whose fields cannot be read names its schema
    for schema in [
        crate::model::schema::RUN,
        crate::model::schema::DB,
        crate::model::schema::VERIFY,
    ] {
        let e = parse_file(&json!({"schema": schema, "runs": 3}).to_string()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("an {schema} document that cannot be read: ")),
            "{e}"
        );
    }
    // other JSON is neither
    let e = parse_file(r#"{"schema": "iolab-env/1"}"#).unwrap_err();
    assert!(matches!(e, ImportError::Unknown(_)), "{e}");
    assert!(kept_doc(json!({"schema": "iolab-env/1"})).is_none());
    assert!(kept_doc(json!([1])).is_none());
}

#[test]
fn sysbench_counts_add_up_to_its_total_and_its_histogram_is_read() {
    // rates that do not divide the total evenly: the largest remainders take the rest
    assert_eq!(super::sysbench::apportion(&[1.0, 1.0, 1.0], 10), [4, 3, 3]);
    assert_eq!(
        super::sysbench::apportion(&[865_080.0, 0.0, 0.0], 865_259),
        [865_259, 0, 0]
    );
    assert_eq!(super::sysbench::apportion(&[0.0, 0.0, 0.0], 5), [0, 0, 0]);
    let text = SB.replace(
        "Threads fairness:",
        "Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.001 |                                         4
       0.001 |                                         6
       3.137 |****************************************  10000
     118.916 |*                                         390

Threads fairness:",
    );
    let c = parse_sysbench_fileio(&text).unwrap().cells.remove(0);
    let e = c.ops.iter().find(|o| o.op == "events").unwrap();
    // rows with the same printed value merged, ms to ns
    assert_eq!(
        e.hist_bins.as_deref(),
        Some(&[(1000, 10), (3_137_000, 10000), (118_916_000, 390)][..])
    );
}
