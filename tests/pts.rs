//! `iolab suite pts`: SNIA PTS's client tests end to end, on a raw loop device (purged by a
//! discard, preconditioned, every test in rounds, the report opened in a browser) and on a
//! file (not purged, the test file removed after).

use crate::common::blk::{RawLoop, cannot};
use crate::common::{iolab_db, skip};
use serde_json::Value;

/// The PTS decision on a window, recomputed here from the rounds (range <= 20 % and the
/// best-fit line's excursion <= 10 % of the average).
fn pts_steady(w: &[f64]) -> bool {
    let n = w.len() as f64;
    let avg = w.iter().sum::<f64>() / n;
    let xm = (n - 1.0) / 2.0;
    let sxy: f64 = w
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - xm) * (y - avg))
        .sum();
    let sxx: f64 = (0..w.len()).map(|i| (i as f64 - xm).powi(2)).sum();
    let excursion = (sxy / sxx).abs() * (n - 1.0);
    let range =
        w.iter().cloned().fold(f64::MIN, f64::max) - w.iter().cloned().fold(f64::MAX, f64::min);
    avg > 0.0 && range <= 0.2 * avg + 1e-9 && excursion <= 0.1 * avg + 1e-9
}

/// Each test's rounds and decision agree with PTS: it ended at the first steady window or at
/// the most rounds; its window is the last 5 rounds; every round has every cell, each moving.
fn check_tests(v: &Value, max_rounds: usize, cells: &[(&str, usize)]) {
    let tests = v["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        cells.iter().map(|c| c.0).collect::<Vec<_>>(),
        "{names:?}"
    );
    for (t, (name, n)) in tests.iter().zip(cells) {
        let tracked: Vec<f64> = t["tracked_rounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let rounds = t["rounds"].as_array().unwrap();
        assert_eq!(rounds.len(), tracked.len(), "{name}");
        assert!(
            (5..=max_rounds).contains(&rounds.len()),
            "{name}: {tracked:?}"
        );
        for r in rounds {
            let r = r.as_array().unwrap();
            assert_eq!(r.len(), *n, "{name}");
            // a cell of a few hundredths of a second on a loaded machine may complete no 1 MiB
            // I/O; the round as a whole moves
            let moved: f64 = r
                .iter()
                .map(|c| c["bw_bytes_per_sec"].as_f64().unwrap())
                .sum();
            assert!(moved > 0.0, "{name}: a round that moved nothing");
        }
        // 4 KiB random writes complete by the hundred in any cell (a 1 MiB cell may not)
        if *name == "iops" {
            assert!(tracked.iter().all(|&x| x > 0.0), "{name}: {tracked:?}");
        }
        // the first steady window ends the test; none before it was steady
        let steady_at = (5..=tracked.len()).find(|&k| pts_steady(&tracked[k - 5..k]));
        let st = &t["steady"];
        match steady_at {
            Some(k) => {
                assert_eq!(
                    k,
                    tracked.len(),
                    "{name}: steady at round {k} but ran on: {tracked:?}"
                );
                assert_eq!(st["attained"], true, "{name}: {st}");
            }
            None => {
                assert_eq!(tracked.len(), max_rounds, "{name}: {tracked:?}");
                assert_eq!(st["attained"], false, "{name}: {st}");
            }
        }
        assert_eq!(st["window_last"].as_u64().unwrap() as usize, tracked.len());
        assert_eq!(
            st["window_first"].as_u64().unwrap() as usize,
            tracked.len() - 4
        );
        let avg = tracked[tracked.len() - 5..].iter().sum::<f64>() / 5.0;
        assert!(
            (st["window_avg"].as_f64().unwrap() - avg).abs() <= 1e-6 * avg,
            "{name}"
        );
        assert_eq!(t["window"].as_array().unwrap().len(), *n, "{name}");
    }
}

#[test]
fn suite_pts_quick_on_a_loop_device() {
    let name = "suite_pts_quick_on_a_loop_device";
    if let Some(why) = cannot(false) {
        return skip(name, &why);
    }
    let Some(browser) = crate::common::browser::chromium() else {
        return skip(
            name,
            "chromium is not installed (scripts/setup.sh installs it)",
        );
    };
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("s.db");
    let b = RawLoop::new(32);
    let args = [
        "suite",
        "pts",
        "--device",
        &b.dev,
        "--destructive",
        "--quick",
        "--cell-time",
        "0.05",
        "--max-rounds",
        "5",
        "--wsat-time",
        "20",
        "--wsat-round",
        "0.25",
        "--json",
        "-q",
    ];
    let r = iolab_db(&db, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["schema"], "iolab-pts/1");
    assert_eq!(v["kind"], "block device");
    let cap = v["capacity_bytes"].as_u64().unwrap();
    assert_eq!(cap, 32 << 20);
    // a loop device discards (it punches holes in its image)
    assert_eq!(v["purge"]["method"], "discard", "{}", v["purge"]);
    assert_eq!(
        v["precondition"]["bytes_written"].as_u64().unwrap(),
        2 * cap
    );
    check_tests(
        &v,
        5,
        &[
            ("iops", 56),
            ("throughput-128k", 2),
            ("throughput-1m", 2),
            ("latency", 9),
        ],
    );
    // the IOPS matrix: PTS's 7 mixes x 8 sizes, the tracked cell RND 4KiB 0/100
    let iops = &v["tests"][0];
    assert_eq!(iops["tracked_cell"], "RND 4KiB 0/100");
    let lat = &v["tests"][3];
    assert_eq!(
        (lat["threads"].as_u64(), lat["iodepth"].as_u64()),
        (Some(1), Some(1))
    );
    // write saturation: 4 x the capacity (128 MiB) written, or its 20 s ran out
    let w = &v["wsat"];
    let rounds = w["rounds"].as_array().unwrap();
    let written: Vec<u64> = rounds
        .iter()
        .map(|x| x["written_total_bytes"].as_u64().unwrap())
        .collect();
    assert!(written.windows(2).all(|p| p[0] < p[1]), "{written:?}");
    assert_eq!(w["reached"], *written.last().unwrap() >= 4 * cap, "{w}");
    assert_eq!(w["target_bytes"].as_u64().unwrap(), 4 * cap);

    // stored: show prints PTS's pages; the report has them and opens in a browser
    let show = iolab_db(&db, &["show", "1"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    for needle in [
        "SNIA PTS client tests",
        "purge: discard",
        "IOPS test:",
        "measurement window:",
        "R/W mix across",
        "Latency test:",
        "Write saturation:",
    ] {
        assert!(show.stdout.contains(needle), "{needle}: {}", show.stdout);
    }
    let html = d.path().join("pts.html");
    let rep = iolab_db(&db, &["report", "1", "-o", html.to_str().unwrap()]);
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    for needle in [
        "IOPS test: steady state of RND 4KiB 0/100",
        "IOPS test: IOPS by block size and R/W mix",
        "Throughput test, 1024 KiB: steady state",
        "Latency test: mean and max latency",
        "Write saturation: RND 4KiB 0/100 IOPS against what was written",
    ] {
        assert!(page.contains(needle), "{needle} not in the report");
    }
    crate::common::browser::assert_opens(browser, &html, "suite pts");
    // the store keeps every round
    let kept = iolab_db(&db, &["show", "1", "--json"]).json();
    assert_eq!(kept["suite"], "pts");
    assert!(
        kept["result"]["tests"] == v["tests"],
        "the stored rounds differ from the printed ones"
    );
}

#[test]
fn suite_pts_on_a_file_is_not_purged_and_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("s.db");
    let dir = d.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let r = iolab_db(
        &db,
        &[
            "suite",
            "pts",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "8M",
            "--tests",
            "throughput,wsat",
            "--cell-time",
            "0.02",
            "--max-rounds",
            "5",
            "--wsat-time",
            "1",
            "--wsat-round",
            "0.2",
            "--json",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["kind"], "file");
    assert!(v["purge"]["method"].is_null());
    assert!(
        v["purge"]["note"]
            .as_str()
            .unwrap()
            .starts_with("not purged"),
        "{}",
        v["purge"]
    );
    check_tests(&v, 5, &[("throughput-128k", 2), ("throughput-1m", 2)]);
    assert!(!v["wsat"]["rounds"].as_array().unwrap().is_empty());
    // the test file it made is gone
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // bad values: one line naming the flag
    for (args, needle) in [
        (vec!["--tests", "iops,bogus"], "--tests 'bogus'"),
        (vec!["--max-rounds", "4"], "--max-rounds 4"),
        (vec!["--destructive"], "--destructive"),
    ] {
        let mut a = vec!["suite", "pts", "--dir", dir.to_str().unwrap(), "--no-save"];
        a.extend(args);
        let r = iolab_db(&db, &a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{a:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
}
