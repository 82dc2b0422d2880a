//! `iolab iostat` and `iolab fsync-probe` without special privileges.

use crate::common::*;

#[test]
fn iostat_streams_one_json_object_per_interval() {
    let r = iolab(&["iostat", "--json", "--count", "3", "--interval", "0.2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["schema"], "iolab-iostat/1");
        assert!((v["interval_s"].as_f64().unwrap() - 0.2).abs() < 0.1);
        for k in ["user", "system", "iowait", "idle"] {
            assert!(v["cpu"][k].is_number());
        }
        let total: f64 = ["user", "nice", "system", "iowait", "steal", "idle"]
            .iter()
            .map(|k| v["cpu"][k].as_f64().unwrap())
            .sum();
        assert!(total <= 100.5, "{total}");
        if let Some((_, d)) = v["devices"].as_object().unwrap().iter().next() {
            for k in [
                "r_s",
                "w_s",
                "rkb_s",
                "wkb_s",
                "rrqm_s",
                "wrqm_s",
                "r_await_ms",
                "w_await_ms",
                "aqu_sz",
                "rareq_sz_kb",
                "wareq_sz_kb",
                "svctm_ms",
                "util_pct",
            ] {
                assert!(d[k].is_number(), "{k}");
            }
        }
    }
    let t = iolab(&["iostat", "--count", "1", "--interval", "0.1"]);
    assert_eq!(t.code, 0);
    assert!(
        t.stdout.contains("avg-cpu") && t.stdout.contains("%util"),
        "{}",
        t.stdout
    );
}

#[test]
fn iostat_refuses_unknown_devices() {
    let r = iolab(&["iostat", "nosuchdisk9", "--count", "1"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("nosuchdisk9") && r.stderr.contains("known"),
        "{}",
        r.stderr
    );
}

#[test]
fn fsync_probe_reports_latencies_and_a_verdict_and_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    let r = iolab(&[
        "fsync-probe",
        d.path().to_str().unwrap(),
        "--count",
        "20",
        "--writers",
        "1",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["schema"], "iolab-fsync-probe/1");
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 5);
    for t in tests {
        assert_eq!(t["n"], 20);
        let l = &t["lat_ns"];
        assert!(
            l["min"].as_u64().unwrap() <= l["p50"].as_u64().unwrap()
                && l["p50"].as_u64().unwrap() <= l["max"].as_u64().unwrap() + 1
        );
    }
    assert_eq!(tests[4]["background_writers"], 1);
    assert!(["stable", "absorbed", "unknown"].contains(&v["verdict"]["code"].as_str().unwrap()));
    assert!(!v["verdict"]["text"].as_str().unwrap().is_empty());
    assert!(
        entries(d.path()).is_empty(),
        "probe files removed: {:?}",
        entries(d.path())
    );
    let r = iolab(&["fsync-probe", "/nonexistent/x"]);
    assert_eq!(r.code, 2);
}

/// `iostat --output FILE`: every report goes to the file at once when iostat ends (here after
/// --count), nothing to stdout; also when Ctrl-C ends it.
#[test]
fn iostat_writes_its_reports_to_output_when_it_ends() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("io.ndjson");
    let r = iolab(&[
        "iostat",
        "--json",
        "--count",
        "2",
        "--interval",
        "0.1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["schema"], "iolab-iostat/1");
    }
    let out = d.path().join("live.txt");
    let o = interrupt_when(
        std::process::Command::new(bin()).args([
            "iostat",
            "--interval",
            "0.05",
            "-o",
            out.to_str().unwrap(),
        ]),
        "iolab catching Ctrl-C",
        |pid, _| {
            // SIGINT (2) caught: the stop flag is set up, so Ctrl-C ends iostat normally.
            std::fs::read_to_string(format!("/proc/{pid}/status"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.strip_prefix("SigCgt:"))
                .any(|m| u64::from_str_radix(m.trim(), 16).is_ok_and(|m| m & 2 != 0))
        },
    );
    let r = to_run(o);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("wrote"), "{}", r.stderr);
    assert!(out.exists());
}
