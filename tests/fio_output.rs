//! `iolab run --output-format fio-json|fio-json+|json+`: fio's JSON shape, checked against fio's
//! own `fio_jsonplus_clat2csv`, against iolab's document of the same run and against
//! `iolab import`.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `iolab run` of a small synchronous rndrw job (reads, writes and fsyncs) in `d`, saved in
/// `db`, printing `format` to `out`; returns the stored iolab document of the run.
fn run_to(d: &Path, db: &Path, format: &str, out: &Path, extra: &[&str]) -> Value {
    let set = d.join("set");
    std::fs::create_dir_all(&set).unwrap();
    let mut a = vec![
        "run",
        "--dir",
        set.to_str().unwrap(),
        "--engine",
        "sync",
        "--mode",
        "rndrw",
        "--size",
        "8M",
        "--ops",
        "4000",
        "--fsync-freq",
        "20",
        "--seed",
        "7",
        "-q",
        "--output-format",
        format,
        "-o",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    let r = iolab_db(db, &a);
    assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
    assert_eq!(r.stdout, "");
    let shown = iolab_db(db, &["show", "1", "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    shown.json()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

/// The value of the smallest bucket with at least p % of the counts at or below it.
fn pct_of(rows: &[(u64, u64)], p: f64) -> u64 {
    let total: u64 = rows.iter().map(|r| r.1).sum();
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut cum = 0;
    rows.iter()
        .find(|(_, c)| {
            cum += c;
            cum >= rank
        })
        .unwrap()
        .0
}

const PCTS: [(f64, &str); 6] = [
    (50.0, "p50"),
    (90.0, "p90"),
    (95.0, "p95"),
    (99.0, "p99"),
    (99.9, "p99_9"),
    (99.99, "p99_99"),
];

/// fio-json+: fio's keys; fio's `fio_jsonplus_clat2csv` reads it (and `--validate` finds its CSV
/// rows equal to the bins), and its rows are iolab's histogram: as many I/Os as the run did,
/// the same percentiles, min and max as iolab's own document of the same run.
#[test]
fn fio_json_plus_reads_in_fio_jsonplus_clat2csv_as_iolabs_histogram() {
    let tool = "/usr/bin/fio_jsonplus_clat2csv";
    if !Path::new(tool).exists() {
        return skip(
            "fio_json_plus_reads_in_fio_jsonplus_clat2csv_as_iolabs_histogram",
            "fio_jsonplus_clat2csv (Debian's fio package) is not installed",
        );
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let out = d.path().join("fio.json");
    let doc = run_to(d.path(), &db, "fio-json+", &out, &[]);
    let fio = read_json(&out);
    let v = fio["fio version"].as_str().unwrap();
    assert!(v.starts_with("iolab-") && v.ends_with("(fio-json+)"), "{v}");
    for k in [
        "timestamp",
        "timestamp_ms",
        "time",
        "global options",
        "disk_util",
    ] {
        assert!(fio.get(k).is_some(), "no {k}: {fio}");
    }
    let job = &fio["jobs"][0];
    assert_eq!(fio["jobs"].as_array().unwrap().len(), 1);
    for k in [
        "jobname",
        "groupid",
        "error",
        "eta",
        "elapsed",
        "job options",
        "read",
        "write",
        "trim",
        "sync",
        "job_runtime",
        "usr_cpu",
        "sys_cpu",
        "ctx",
        "majf",
        "minf",
        "iodepth_level",
        "latency_ns",
        "latency_us",
        "latency_ms",
    ] {
        assert!(job.get(k).is_some(), "no jobs[0].{k}: {job}");
    }
    assert_eq!(job["job options"]["rw"], "randrw");
    assert_eq!(job["job options"]["ioengine"], "psync");
    for dir in ["read", "write", "trim"] {
        for k in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
            "slat_ns",
            "clat_ns",
            "lat_ns",
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
        ] {
            assert!(job[dir].get(k).is_some(), "no jobs[0].{dir}.{k}");
        }
    }
    assert_eq!(job["trim"]["total_ios"], 0);
    assert!(job["trim"]["clat_ns"].get("bins").is_none());
    assert_eq!(job["read"]["slat_ns"]["N"], 0, "iolab measures no slat");
    assert_eq!(
        job["read"]["clat_ns"]["percentile"]["99.000000"],
        doc["results"]["read"]["lat_ns"]["p99"]
    );
    // The latency maps add up to 100 % of the reads and writes.
    let sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| job[*k].as_object().unwrap().values())
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert!(close(sum, 100.0, 1e-9), "{sum}");

    let csv = d.path().join("lat.csv");
    let made = Command::new(tool).arg(&out).arg(&csv).output().unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let val = Command::new(tool)
        .arg(&out)
        .arg(&csv)
        .arg("--validate")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&val.stdout);
    assert!(val.status.success() && said.contains("validated"), "{said}");
    let text = std::fs::read_to_string(d.path().join("lat_job0.csv")).unwrap();
    let mut lines = text.lines();
    let cols: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|c| c.trim().to_string())
        .collect();
    let rows: Vec<Vec<String>> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|c| c.trim().to_string()).collect())
        .collect();
    for op in ["read", "write"] {
        let col = |name: &str| {
            cols.iter()
                .position(|c| c == &format!("{op}_clat_ns_{name}"))
                .unwrap()
        };
        let (cc, cu) = (col("count"), col("cumulative"));
        let mine: Vec<(u64, u64, u64)> = rows
            .iter()
            .filter(|r| !r[cc].is_empty())
            .map(|r| {
                (
                    r[0].parse().unwrap(),
                    r[cc].parse().unwrap(),
                    r[cu].parse().unwrap(),
                )
            })
            .collect();
        let ops = doc["results"][op]["ops"].as_u64().unwrap();
        assert!(ops > 0, "{op}");
        let lat = &doc["results"][op]["lat_ns"];
        let counts: Vec<(u64, u64)> = mine.iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(counts.iter().map(|r| r.1).sum::<u64>(), ops, "{op}: I/Os");
        assert_eq!(mine.last().unwrap().2, ops, "{op}: cumulative");
        assert_eq!(job[op]["total_ios"].as_u64(), Some(ops));
        assert_eq!(job[op]["clat_ns"]["N"].as_u64(), Some(ops));
        for (p, key) in PCTS {
            assert_eq!(Some(pct_of(&counts, p)), lat[key].as_u64(), "{op} {key}");
        }
        assert_eq!(
            Some(mine.last().unwrap().0),
            lat["max"].as_u64(),
            "{op} max"
        );
        let (first, min) = (mine[0].0 as f64, lat["min"].as_f64().unwrap());
        assert!(
            first >= min && close(first, min, 1e-3),
            "{op}: {first} vs min {min}"
        );
    }
    // fsyncs: fio's `sync`, with their bins too.
    let fs = doc["results"]["fsync"]["ops"].as_u64().unwrap();
    assert!(fs > 0);
    assert_eq!(job["sync"]["total_ios"].as_u64(), Some(fs));
    let bins: u64 = job["sync"]["lat_ns"]["bins"]
        .as_object()
        .unwrap()
        .values()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(bins, fs);
}

/// `iolab import` of a fio-json+ file gives the run's own figures: I/Os, bytes, rates and
/// latency of every operation, the job's threads and block size.
#[test]
fn fio_json_plus_imports_to_the_same_figures() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let out = d.path().join("fio.json");
    let doc = run_to(d.path(), &db, "fio-json+", &out, &["--threads", "2"]);
    let r = iolab_db(&db, &["import", out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let imp = iolab_db(&db, &["show", "2", "--json"]).json();
    assert_eq!(imp["tool"], "fio");
    let cell = &imp["cells"][0];
    assert_eq!(imp["cells"].as_array().unwrap().len(), 1);
    assert_eq!(cell["mode"], "rndrw");
    assert_eq!(cell["threads"], 2);
    assert_eq!(cell["bs_bytes"], doc["job"]["bs_bytes"]);
    assert_eq!(cell["engine"], "psync");
    for op in ["read", "write", "fsync"] {
        let (a, b) = (&doc["results"][op], &cell["results"][op]);
        assert_eq!(a["ops"], b["ops"], "{op}");
        assert_eq!(a["bytes"], b["bytes"], "{op}");
        // fsync rates come from fio's runtime in whole ms: off by up to half a ms of the
        // fsyncs' own time (a run of ~30 ms is off by up to ~1.7 %)
        let rel = if op == "fsync" {
            let secs = a["ops"].as_f64().unwrap() / a["iops"].as_f64().unwrap().max(1e-9);
            (0.0005 / secs.max(1e-6)) * 1.05 + 1e-9
        } else {
            1e-9
        };
        assert!(
            close(
                a["iops"].as_f64().unwrap(),
                b["iops"].as_f64().unwrap(),
                rel
            ),
            "{op} iops: {a} vs {b}"
        );
        assert!(
            (a["bytes_per_sec"].as_f64().unwrap() - b["bytes_per_sec"].as_f64().unwrap()).abs()
                <= 0.5,
            "{op}"
        );
        for k in [
            "min", "max", "mean", "stddev", "p50", "p90", "p95", "p99", "p99_9", "p99_99",
        ] {
            let (x, y) = (
                a["lat_ns"][k].as_f64().unwrap(),
                b["lat_ns"][k].as_f64().unwrap(),
            );
            assert!(close(x, y, 1e-9), "{op} {k}: {x} vs {y}");
        }
        let bins: u64 = b["hist_bins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[1].as_u64().unwrap())
            .sum();
        assert_eq!(Some(bins), a["ops"].as_u64(), "{op}");
    }
}

/// fio-json is fio's json (percentiles, no bins); json+ is iolab's document with each
/// operation's histogram as `hist_bins`, whose percentiles are the document's own; the stored
/// document has no bins. Both refuse --repeat and --json beside them.
#[test]
fn fio_json_has_no_bins_and_json_plus_has_iolabs_bins() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let out = d.path().join("fio.json");
    run_to(d.path(), &db, "fio-json", &out, &[]);
    let fio = read_json(&out);
    assert!(fio["fio version"].as_str().unwrap().ends_with("(fio-json)"));
    let job = &fio["jobs"][0];
    for op in ["read", "write"] {
        assert!(
            job[op]["clat_ns"]["percentile"]["50.000000"]
                .as_u64()
                .is_some()
        );
        assert!(job[op]["clat_ns"].get("bins").is_none(), "{op}");
        assert!(job[op]["lat_ns"].get("percentile").is_none(), "{op}");
    }
    assert!(job["sync"]["lat_ns"].get("bins").is_none());

    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let out = d.path().join("plus.json");
    let stored = run_to(d.path(), &db, "json+", &out, &[]);
    let plus = read_json(&out);
    assert_eq!(plus["schema"], "iolab-run/1");
    for op in ["read", "write", "fsync"] {
        let r = &plus["results"][op];
        let bins: Vec<(u64, u64)> = r["hist_bins"]
            .as_array()
            .unwrap_or_else(|| panic!("no hist_bins in {op}"))
            .iter()
            .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
            .collect();
        assert_eq!(
            bins.iter().map(|b| b.1).sum::<u64>(),
            r["ops"].as_u64().unwrap()
        );
        for (p, key) in PCTS {
            assert_eq!(
                Some(pct_of(&bins, p)),
                r["lat_ns"][key].as_u64(),
                "{op} {key}"
            );
        }
        assert!(stored["results"][op].get("hist_bins").is_none());
    }

    // Several modes: one job each, its own group, imported as one cell each.
    let set = d.path().join("set");
    let multi = d.path().join("multi.json");
    let r = iolab_db(
        &db,
        &[
            "run",
            "--dir",
            set.to_str().unwrap(),
            "--engine",
            "null",
            "--mode",
            "rndrd,seqrewr",
            "--ops",
            "500",
            "--threads",
            "3",
            "-q",
            "--output-format",
            "fio-json+",
            "-o",
            multi.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fio = read_json(&multi);
    let jobs = fio["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for (i, (name, rw)) in [("rndrd", "randread"), ("seqrewr", "write")]
        .iter()
        .enumerate()
    {
        assert_eq!(jobs[i]["jobname"], *name);
        assert_eq!(jobs[i]["groupid"], i);
        assert_eq!(jobs[i]["job options"]["rw"], *rw);
        assert_eq!(jobs[i]["job options"]["numjobs"], "3");
    }
    assert_eq!(jobs[1]["job options"]["overwrite"], "1");
    // the writer speaks the job reader's vocabulary: every option it writes is one of fio's
    // options in iolab's one table (spec::fio_options)
    for o in jobs
        .iter()
        .flat_map(|j| j["job options"].as_object().unwrap().keys())
        .chain(fio["global options"].as_object().unwrap().keys())
    {
        assert!(
            iolab::spec::fio_options::find(o).is_some(),
            "the fio JSON writer writes {o}, not in spec::fio_options::OPTIONS"
        );
    }
    let r = iolab_db(&db, &["import", multi.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let imp = iolab_db(&db, &["show", "3", "--json"]).json();
    let modes: Vec<&str> = imp["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["rndrd", "seqwr"]);
    assert_eq!(imp["cells"][0]["threads"], 3);
    assert_eq!(imp["cells"][0]["results"]["read"]["ops"], 500);

    for bad in [
        vec!["--output-format", "fio-json", "--repeat", "2"],
        vec!["--output-format", "json+", "--repeat", "2"],
        vec!["--output-format", "fio-json", "--json"],
        vec!["--output-format", "xml"],
    ] {
        let mut a = vec![
            "run",
            "--dir",
            set.to_str().unwrap(),
            "--engine",
            "null",
            "--ops",
            "10",
            "--no-save",
            "-q",
        ];
        a.extend_from_slice(&bad);
        let r = iolab_db(&db, &a);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stderr);
        assert_eq!(r.stdout, "");
    }
}
