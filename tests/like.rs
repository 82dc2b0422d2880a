//! `iolab run --like CAPTURE` (issue 29): a capture of a known mixed workload (fio on one raw
//! loop device), its twin run on a second one, captured there: the two captures' distributions
//! agree (two-sample Kolmogorov-Smirnov distance under 0.05 each, the mix and the rate within
//! 2 %). Bad input is one line. Root only (the kernel's block trace events, loop devices).

use crate::capture::{
    cannot_capture, fio_json, read_capture, spawn_capture, stop_capture, wait_enabled,
};
use crate::common::blk::RawLoop;
use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// What a capture's records say, the figures the fingerprint has, as samples.
struct Sample {
    reads: u64,
    writes: u64,
    /// Requests (reads, writes, flushes) per second over the window given (the capture's, as
    /// its fingerprint counts them; the twin's run).
    rate: f64,
    sizes: [Vec<u64>; 2],
    /// ns between one request's issue and the next one's.
    gaps: Vec<u64>,
    qd: Vec<u64>,
    /// Seek categories per direction: 0 sequential, 1 near (<= 1 MiB forward), 2 far, 3 back.
    seek: [Vec<u64>; 2],
    /// Share of the requests on the hottest 1, 5, 10, 20, 50 % of the 1 MiB regions touched.
    hot: Vec<f64>,
}

/// The requests of tasks `by` accepts, their rate over `window_s`.
fn sample(recs: &[Value], window_s: f64, by: impl Fn(&str) -> bool) -> Sample {
    let v: Vec<&Value> = recs
        .iter()
        .filter(|r| by(r["comm"].as_str().unwrap_or("")))
        .filter(|r| ["read", "write", "flush"].contains(&r["dir"].as_str().unwrap()))
        .collect();
    let u = |r: &Value, k: &str| r[k].as_u64().unwrap();
    let mut s = Sample {
        reads: 0,
        writes: 0,
        rate: 0.0,
        sizes: [vec![], vec![]],
        gaps: vec![],
        qd: vec![],
        seek: [vec![], vec![]],
        hot: vec![],
    };
    let mut ends = [None::<u64>; 2];
    let mut regions: HashMap<u64, u64> = HashMap::new();
    for (i, r) in v.iter().enumerate() {
        if i > 0 {
            s.gaps.push(u(r, "t_ns") - u(v[i - 1], "t_ns"));
        }
        s.qd.push(u(r, "qd"));
        let d = match r["dir"].as_str().unwrap() {
            "read" => 0,
            "write" => 1,
            _ => continue,
        };
        let (o, n) = (u(r, "offset_bytes"), u(r, "size_bytes"));
        if d == 0 {
            s.reads += 1
        } else {
            s.writes += 1
        }
        s.sizes[d].push(n);
        if let Some(e) = ends[d] {
            s.seek[d].push(if o == e {
                0
            } else if o > e && o - e <= 1 << 20 {
                1
            } else if o > e {
                2
            } else {
                3
            });
        }
        ends[d] = Some(o + n);
        *regions.entry(o >> 20).or_insert(0) += 1;
    }
    s.rate = v.len() as f64 / window_s;
    let mut heat: Vec<u64> = regions.into_values().collect();
    heat.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = heat.iter().sum();
    s.hot = [1.0, 5.0, 10.0, 20.0, 50.0]
        .iter()
        .map(|p| {
            let k = ((p / 100.0 * heat.len() as f64).ceil() as usize).clamp(1, heat.len());
            heat[..k].iter().sum::<u64>() as f64 / total as f64
        })
        .collect();
    s
}

/// Tasks whose requests are not the workload's: iolab's own probe of the device before a run,
/// udev's after it.
fn noise(c: &str) -> bool {
    c == "iolab" || c.contains("udev") || c == "blkid"
}

/// Two-sample Kolmogorov-Smirnov distance: the largest gap between the two empirical CDFs.
fn ks(a: &[u64], b: &[u64]) -> f64 {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut d) = (0, 0, 0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

#[test]
fn ks_distance_of_known_samples() {
    assert_eq!(ks(&[1, 2, 3, 4], &[1, 2, 3, 4]), 0.0);
    assert_eq!(ks(&[1, 2], &[3, 4]), 1.0);
    assert!((ks(&[1, 2, 3, 4], &[1, 2, 5, 6]) - 0.5).abs() < 1e-12);
}

/// A mixed workload (random reads and writes of 4, 16 and 64 KiB, 4 in flight, at Poisson
/// arrivals; beside it sequential 8 KiB writes with an fdatasync every 16) captured on one
/// loop device; `--like` of that capture run on another, captured there: each distribution of
/// the fingerprint (sizes, gaps, queue depth, seek categories, hot set) within KS 0.05 of the
/// original, the read share and the rate (over the capture's window, as its fingerprint counts
/// it; the twin's over its run) within 2 %.
#[test]
fn the_twin_of_a_capture_has_its_fingerprint() {
    if let Some(why) = cannot_capture() {
        return skip("like", &why);
    }
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (RawLoop::new(64), RawLoop::new(64));
    let (cap_a, cap_b) = (d.path().join("a.cap"), d.path().join("b.cap"));
    let child = spawn_capture(&a.dev, &cap_a, &["--time", "600", "--json"]);
    wait_enabled(child.id());
    fio_json(&[
        "--name=data",
        &format!("--filename={}", a.dev),
        "--size=48M",
        "--rw=randrw",
        "--rwmixread=70",
        "--bssplit=4k/30:16k/50:64k/20",
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=4",
        "--rate_iops=700,300",
        "--rate_process=poisson",
        "--runtime=6",
        "--time_based",
        "--name=wal",
        &format!("--filename={}", a.dev),
        "--offset=48M",
        "--size=16M",
        "--rw=write",
        "--bs=8k",
        "--direct=1",
        "--ioengine=psync",
        "--rate_iops=,200",
        "--rate_process=poisson",
        "--fdatasync=16",
        "--runtime=6",
        "--time_based",
    ]);
    stop_capture(child);
    let (_, recs_a, sum_a) = read_capture(&cap_a);
    let sa = sample(&recs_a, sum_a["duration_s"].as_f64().unwrap(), |c| {
        !noise(c)
    });
    assert!(
        sa.reads > 3000 && sa.writes > 2000,
        "{} reads, {} writes captured",
        sa.reads,
        sa.writes
    );

    // the twin measured afresh once if it differs (a stall of the shared host's disk under
    // the loop devices, a flush held for half a second, skews one run's queue depths)
    let mut bad = Vec::new();
    for attempt in 1..=2 {
        let _ = std::fs::remove_file(&cap_b);
        bad = twin_differs(&sa, &recs_a, &cap_a, &b.dev, &cap_b);
        eprintln!(
            "attempt {attempt}: {}",
            if bad.is_empty() { "agrees" } else { "differs" }
        );
        if bad.is_empty() {
            break;
        }
    }
    assert!(
        bad.is_empty(),
        "the twin's fingerprint differs: {}",
        bad.join("; ")
    );
}

/// Runs `--like cap_a` on `dev_b`, captured into `cap_b`, and compares what `dev_b` saw with
/// `sa` (the capture's sample): what differs beyond its bound (empty: the twin agrees).
fn twin_differs(
    sa: &Sample,
    recs_a: &[Value],
    cap_a: &Path,
    dev_b: &str,
    cap_b: &Path,
) -> Vec<String> {
    let child = spawn_capture(dev_b, cap_b, &["--time", "600", "--json"]);
    wait_enabled(child.id());
    let r = iolab(&[
        "run",
        "--like",
        cap_a.to_str().unwrap(),
        "--device",
        dev_b,
        "--destructive",
        "--json",
        "--no-save",
        "-q",
    ]);
    stop_capture(child);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let like = &v["job"]["replay"]["like"];
    assert_eq!(like["scale"], 1.0, "{}", v["job"]["replay"]);
    let (_, recs_b, _) = read_capture(cap_b);
    // the twin's requests over its run (the capture's window: `time_s`)
    let sb = sample(&recs_b, like["time_s"].as_f64().unwrap(), |c| !noise(c));
    let mut report = Vec::new();
    let mut bad = Vec::new();
    let mut judge = |what: &str, x: f64, bound: f64| {
        report.push(format!("{what} {x:.4}"));
        if x >= bound {
            bad.push(format!("{what} {x:.4} (bound {bound})"));
        }
    };
    for (d, name) in [(0, "read"), (1, "write")] {
        judge(
            &format!("KS {name} sizes"),
            ks(&sa.sizes[d], &sb.sizes[d]),
            0.05,
        );
        judge(
            &format!("KS {name} seek"),
            ks(&sa.seek[d], &sb.seek[d]),
            0.05,
        );
    }
    judge("KS gaps", ks(&sa.gaps, &sb.gaps), 0.05);
    judge("KS queue depth", ks(&sa.qd, &sb.qd), 0.05);
    let depths = |s: &Sample| {
        (1..=8)
            .map(|q| {
                let n = s.qd.iter().filter(|&&x| x == q).count();
                format!("{:.1}", 100.0 * n as f64 / s.qd.len() as f64)
            })
            .collect::<Vec<_>>()
            .join("/")
    };
    eprintln!(
        "queue depth 1..8 (% of requests): capture {}, twin {}",
        depths(sa),
        depths(&sb)
    );
    let lat = |recs: &[Value]| {
        let mut l: Vec<u64> = recs
            .iter()
            .filter(|r| !noise(r["comm"].as_str().unwrap_or("")))
            .filter_map(|r| r["lat_ns"].as_u64())
            .collect();
        l.sort_unstable();
        (l[l.len() / 2], l[l.len() * 99 / 100])
    };
    eprintln!(
        "device latency p50, p99 (ns): capture {:?}, twin {:?}; the twin's replay {}",
        lat(recs_a),
        lat(&recs_b),
        v["replay"]
    );
    let hot = sa
        .hot
        .iter()
        .zip(&sb.hot)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    judge("hot set (largest difference of a share)", hot, 0.05);
    let share = |s: &Sample| s.reads as f64 / (s.reads + s.writes) as f64;
    judge(
        "read share (relative)",
        (share(&sb) / share(sa) - 1.0).abs(),
        0.02,
    );
    judge("rate (relative)", (sb.rate / sa.rate - 1.0).abs(), 0.02);
    eprintln!(
        "capture {}/{} at {:.1}/s; twin {}/{} at {:.1}/s; {}",
        sa.reads,
        sa.writes,
        sa.rate,
        sb.reads,
        sb.writes,
        sb.rate,
        report.join(", ")
    );
    bad
}

/// Bad input: one line naming the flag, exit 2.
#[test]
fn bad_likes_are_one_line() {
    let d = tempfile::tempdir().unwrap();
    let junk = d.path().join("junk");
    std::fs::write(&junk, "hello\n").unwrap();
    let dir = d.path().join("set");
    std::fs::create_dir(&dir).unwrap();
    let s = dir.to_str().unwrap();
    for (args, want) in [
        (vec!["--like", "/nonexistent/c"], "--like /nonexistent/c"),
        (vec!["--like", junk.to_str().unwrap()], "line 1"),
        (
            vec![
                "--like",
                junk.to_str().unwrap(),
                "--replay",
                junk.to_str().unwrap(),
            ],
            "--replay",
        ),
        (vec!["--scale", "2"], "--like"),
    ] {
        let mut a = vec!["run", "--dir", s, "--no-save", "-q"];
        a.extend(args.iter().copied());
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing made");
}

/// `saturate --like CAPTURE --over scale=1..16` with no `--target`: the scale at which the
/// p99 of today's load (scale 1, measured first) doubles. A 100 IOPS random-read workload (Poisson arrivals) captured on a loop
/// device throttled to 500 IOPS; its twin at N times that load on the same throttled device
/// keeps the p99 within twice that at scale 1 while N x 100 is well under the throttle, not
/// once it passes it: it holds at 2 at least and fails by 6 (at 5 the throttle is just full:
/// here 4..5 twice, 5..6 once).
#[test]
fn saturate_like_finds_the_scale_where_the_captured_p99_doubles() {
    if let Some(why) = cannot_capture().or_else(|| crate::common::blk::cannot(true)) {
        return skip("saturate_like", &why);
    }
    let d = tempfile::tempdir().unwrap();
    let b = RawLoop::new(64);
    let majmin = crate::common::blk::sh(&format!("lsblk -dno MAJ:MIN {}", b.dev)).replace(' ', "");
    let th = crate::common::blk::Throttle::new(&[majmin.trim().to_string()], 500);
    let cap = d.path().join("c.cap");
    let child = spawn_capture(&b.dev, &cap, &["--time", "600", "--json"]);
    wait_enabled(child.id());
    let o = th
        .command("fio")
        .args([
            "--name=db",
            &format!("--filename={}", b.dev),
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=1",
            "--rate_iops=100",
            "--rate_process=poisson",
            "--runtime=4",
            "--time_based",
        ])
        .output()
        .unwrap();
    stop_capture(child);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let db = d.path().join("r.db");
    let r = to_run(
        th.command(bin())
            .args([
                "saturate",
                "--db",
                db.to_str().unwrap(),
                "--over",
                "scale=1..16",
                "--json",
                "--like",
                cap.to_str().unwrap(),
                "--device",
                &b.dev,
                "--destructive",
                "--time",
                "3",
            ])
            .output()
            .unwrap(),
    );
    drop(th);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let target = &v["spec"]["target"];
    assert_eq!(
        (target["metric"].as_str(), target["op"].as_str()),
        (Some("p99"), Some("<="))
    );
    let points: Vec<String> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}: p99 {:.2} ms {}",
                p["value"], p["figures"]["p99_ms"], p["passed"]
            )
        })
        .collect();
    eprintln!("target {target}; {}", points.join(", "));
    let (lp, ff) = (v["last_pass"].as_u64(), v["first_fail"].as_u64());
    assert!(
        lp.is_some_and(|x| x >= 2) && ff.is_some_and(|x| x <= 6),
        "boundary {lp:?}..{ff:?}: {}",
        points.join(", ")
    );
}
