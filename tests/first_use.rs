//! What a fio or sysbench user trips on when trying iolab for the first time (issue 28): flags
//! that must not be silently ignored, output that scripts read, text that says what ran.

use crate::common::*;

/// The default profile (no `--mode`) takes `--bs` and `--threads` for every cell instead of its
/// own 16 KiB / 1 MiB at 1 and 8 threads: never a flag silently ignored.
#[test]
fn the_default_profile_takes_bs_and_threads() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let v = run_json(
        d.path(),
        &[
            "--files",
            "2",
            "--size",
            "8M",
            "--bs",
            "4k",
            "--threads",
            "2",
            "--time",
            "0.2",
        ],
    );
    let runs = v["runs"].as_array().unwrap();
    let modes: Vec<&str> = runs.iter().map(|c| c["mode"].as_str().unwrap()).collect();
    // one cell per mode: the thread counts 1 and 8 became the one asked for
    assert_eq!(modes, ["rndrd", "rndwr", "rndrw", "seqrd", "seqwr"], "{v}");
    for c in runs {
        assert_eq!(c["job"]["bs_bytes"], 4096, "{}", c["mode"]);
        assert_eq!(c["job"]["threads"], 2, "{}", c["mode"]);
    }
    // without them, the profile's own sizes and thread counts
    let v = run_json(d.path(), &["--files", "2", "--size", "8M", "--time", "0.1"]);
    let cells: Vec<(String, u64, u64)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["mode"].as_str().unwrap().to_string(),
                c["job"]["bs_bytes"].as_u64().unwrap(),
                c["job"]["threads"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(cells.len(), 8, "{cells:?}");
    assert!(cells.contains(&("rndrw".into(), 16384, 8)), "{cells:?}");
    assert!(cells.contains(&("seqwr".into(), 1 << 20, 1)), "{cells:?}");
}

/// `--live -`: stdout carries the NDJSON lines only, so `| jq .` reads it; the table goes to
/// stderr (tests/metrics.rs checks the lines themselves).
#[test]
fn live_on_stdout_leaves_nothing_else_on_stdout() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--files",
        "1",
        "--size",
        "4M",
        "--mode",
        "rndrd,rndwr",
        "--time",
        "1",
        "--no-save",
        "--live",
        "-",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.trim().is_empty());
    let started = chrono_free_now_s();
    for l in r.stdout.lines() {
        let v: serde_json::Value =
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert_eq!(v["schema"], "iolab-live/1");
        // each line says when, on the wall clock: within the test's own minutes
        let t = v["time"].as_str().unwrap_or_else(|| panic!("no time: {l}"));
        assert!(t.ends_with('Z') && t.len() == 24, "{t}");
        let at = rfc3339_s(t);
        assert!((started - 600.0..started + 60.0).contains(&at), "{t}");
    }
    assert!(r.stderr.contains("rndwr"), "the table: {}", r.stderr);
}

/// One mode or several, the results are in `runs[]` (the single mode's fields stay at the top
/// level too, for the scripts that read them there).
#[test]
fn every_run_document_has_runs() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = ["--files", "1", "--size", "4M", "--ops", "64", "--seed", "3"];
    let mut one = base.to_vec();
    one.extend(["--mode", "rndrd"]);
    let v1 = run_json(d.path(), &one);
    let mut two = base.to_vec();
    two.extend(["--mode", "rndrd,rndwr"]);
    let v2 = run_json(d.path(), &two);
    // the same script line reads both
    let reads = |v: &serde_json::Value| v["runs"][0]["results"]["read"]["ops"].as_u64();
    assert_eq!(reads(&v1), Some(64), "{v1}");
    assert_eq!(reads(&v2), Some(64), "{v2}");
    assert_eq!(v1["results"], v1["runs"][0]["results"]);
    assert_eq!(v1["runs"].as_array().unwrap().len(), 1);
    assert_eq!(v2["runs"].as_array().unwrap().len(), 2);
}

/// The text names the queue depth and how long each cell ran (asked for and measured).
#[test]
fn the_text_says_the_iodepth_and_the_time() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--files",
        "1",
        "--size",
        "4M",
        "--mode",
        "rndrd",
        "--engine",
        "io_uring",
        "--iodepth",
        "4",
        "--time",
        "0.5",
        "--no-save",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let head: Vec<&str> = r.stdout.lines().take(2).collect();
    assert!(head[0].contains("engine io_uring, iodepth 4"), "{head:?}");
    assert!(
        head[1].starts_with("0.5 s asked for, measured 0.5 s"),
        "{head:?}"
    );
    let r = iolab(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--files",
        "1",
        "--size",
        "4M",
        "--mode",
        "rndrd,rndwr",
        "--ops",
        "100",
        "--no-save",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("each cell: 100 operations asked for, measured "),
        "{}",
        r.stdout
    );
}

/// A target that gets easier as the axis grows (`iops>=N` over the offered rate, as over
/// threads) is searched upwards: missed at LO, met at HI, and the verdict names the smallest
/// value that meets it instead of "fails already at LO".
#[test]
fn saturate_searches_the_way_the_target_goes() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let search = |target: &str| {
        let r = iolab_db(
            &db,
            &[
                "saturate",
                "--target",
                target,
                "--over",
                "rate=100..1000",
                "--step",
                "50",
                "--json",
                "-q",
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
                "0.5",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json()
    };
    // the null engine keeps any rate up to 1000/s: the IOPS are the offered rate
    let v = search("iops>=480");
    assert_eq!(v["direction"], "met_above", "{v}");
    let b = v["boundary"].as_u64().unwrap();
    assert!((480..=480 + 50).contains(&b), "boundary {b}: {v}");
    let s = iolab_db(&db, &["show", v["group"].as_str().unwrap()]);
    assert!(
        s.stdout.contains("iops>=480 is missed up to rate=")
            && s.stdout.contains("the search went up"),
        "{}",
        s.stdout
    );
    // met at both ends: said, with both ends, and nothing more measured
    let v = search("iops>=50");
    assert_eq!(v["direction"], "met_everywhere", "{v}");
    assert_eq!(v["points"].as_array().unwrap().len(), 2, "{v}");
}

/// Seconds since the epoch now.
fn chrono_free_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// `2026-11-28T23:40:01.123Z` as seconds since the epoch (days from the civil date).
fn rfc3339_s(t: &str) -> f64 {
    let n = |a: usize, b: usize| t[a..b].parse::<i64>().unwrap();
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let days = 365 * y + y / 4 - y / 100 + y / 400 + (153 * m + 2) / 5 + d - 719_469;
    let secs: f64 = t[17..23].parse().unwrap();
    (days * 86400 + n(11, 13) * 3600 + n(14, 16) * 60) as f64 + secs
}

/// An imported run is listed at its own time: fio's printed timestamp, or for sysbench (which
/// prints none) the output file's modification time, when sysbench finished writing it, less the
/// run's duration; the document says which (`start_time_source`).
#[test]
fn an_import_is_listed_at_the_runs_own_time() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let f = d.path().join("sysbench.txt");
    std::fs::copy("tests/fixtures/import/sysbench-rndrw.txt", &f).unwrap();
    // finished 2025-01-02 03:04:05 UTC
    let end = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_735_787_045);
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(end)
        .unwrap();
    let r = iolab_db(&db, &["import", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = iolab_db(&db, &["list", "--json"]);
    let row = &l.json()["runs"][0];
    // the fixture's total time is 2.0041 s
    assert_eq!(row["start_time"], "2025-01-02T03:04:02.995Z", "{row}");
    let s = iolab_db(&db, &["show", "1", "--json"]);
    assert_eq!(s.json()["start_time_source"], "file_mtime");
    let text = iolab_db(&db, &["list"]);
    assert!(text.stdout.contains("2025-01-02"), "{}", text.stdout);
}

/// sysbench's own output, `--histogram` on: the import's read count is the total sysbench
/// printed (865,259, not rate x time's 865,080), and its latency histogram is kept (its counts
/// add up to that total).
#[test]
fn a_sysbench_import_reads_what_sysbench_printed() {
    if std::process::Command::new("sysbench")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip(
            "a_sysbench_import_reads_what_sysbench_printed",
            "sysbench is not installed",
        );
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let sb = |args: &[&str]| {
        let o = std::process::Command::new("sysbench")
            .current_dir(d.path())
            .args(["fileio", "--file-total-size=8M", "--file-num=2"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    sb(&["prepare"]);
    let out = sb(&["--file-test-mode=rndrd", "--time=1", "--histogram", "run"]);
    let printed: u64 = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let f = d.path().join("sb.txt");
    std::fs::write(&f, &out).unwrap();
    let db = d.path().join("r.db");
    let r = iolab_db(&db, &["import", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = iolab_db(&db, &["show", "1", "--json"]).json();
    let res = &v["cells"][0]["results"];
    assert_eq!(res["read"]["ops"], printed, "{v}");
    assert_eq!(res["read"]["bytes"], printed * 16384);
    let bins = res["events"]["hist_bins"].as_array().unwrap();
    let counted: u64 = bins.iter().map(|b| b[1].as_u64().unwrap()).sum();
    assert_eq!(counted, printed);
}

/// `plot gN` of repetitions: every repetition (numbered) and their mean with its spread, then the
/// first repetition's own charts named as such; `plot` of an import charts it too (it listed
/// nothing, with exit 0).
#[test]
fn repetitions_and_imports_are_charted() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let r = iolab_db(
        &db,
        &[
            "run",
            "--dir",
            data.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "4M",
            "--mode",
            "rndrd",
            "--ops",
            "200",
            "--repeat",
            "3",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list = iolab_db(&db, &["plot", "g1", "--list"]).stdout;
    for name in [
        "repetitions-iops ",
        "repetitions-iops-mean ",
        "repetitions-p99 ",
        "first-iops ",
    ] {
        assert!(list.contains(name), "{name}: {list}");
    }
    assert!(list.contains("(repetition 1 of 3, run 1)"), "{list}");
    // the chart of every repetition has 3 points, one per repetition (its SVG's circles)
    let svg = d.path().join("rep.svg");
    let p = iolab_db(
        &db,
        &[
            "plot",
            "g1",
            "--chart",
            "repetitions-iops",
            "-o",
            svg.to_str().unwrap(),
        ],
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(text.matches("<circle").count(), 3, "{text}");
    assert!(text.contains("rndrd read mean"), "the mean line");
    // an imported fio run
    let r = iolab_db(&db, &["import", "tests/fixtures/import/fio-two-jobs.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list = iolab_db(&db, &["plot", "4", "--list"]).stdout;
    for name in ["iops ", "mibps ", "latency-percentiles "] {
        assert!(list.contains(name), "{name}: {list}");
    }
}

/// `show gN --metric` of a sweep: its matrix in another metric (latency, CPU), and its report
/// charts latency beside throughput by the same axis.
#[test]
fn a_sweep_is_shown_in_any_metric_and_charts_its_latency() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let r = iolab_db(
        &db,
        &[
            "sweep",
            "--threads",
            "1,2",
            "--mode",
            "rndrd",
            "--dir",
            data.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "4M",
            "--time",
            "0.3",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let p99 = iolab_db(&db, &["show", "g1", "--metric", "p99"]);
    assert_eq!(p99.code, 0, "{}", p99.stderr);
    assert!(p99.stdout.contains("p99 in ms"), "{}", p99.stdout);
    let cpu = iolab_db(&db, &["show", "g1", "--metric", "cpu", "--json"]);
    assert_eq!(cpu.code, 0, "{}", cpu.stderr);
    assert_eq!(cpu.json()["metric"], "cpu");
    assert!(
        cpu.json()["cells"][0]["figures"]["cpu_pct"]
            .as_f64()
            .unwrap()
            > 0.0,
        "{}",
        cpu.stdout
    );
    let lat = iolab_db(&db, &["show", "g1", "--metric", "lat_avg"]);
    assert!(lat.stdout.contains("lat_avg in ms"), "{}", lat.stdout);
    let bad = iolab_db(&db, &["show", "g1", "--metric", "speed"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("--metric speed: use one of"),
        "{}",
        bad.stderr
    );
    let not_sweep = iolab_db(&db, &["show", "1", "--metric", "p99"]);
    assert_eq!(not_sweep.code, 2, "{}", not_sweep.stderr);
    let list = iolab_db(&db, &["plot", "g1", "--list"]).stdout;
    assert!(list.contains("sweep-threads-latency"), "{list}");
}

/// fsyncs that only came at the end of a mode (after the measured window) are a count and
/// latencies without a rate, said as such; fsyncs during the mode have their rate.
#[test]
fn end_of_mode_fsyncs_have_a_count_and_no_rate() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--dir",
            d.path().to_str().unwrap(),
            "--files",
            "4",
            "--size",
            "4M",
            "--mode",
            "seqwr",
            "--ops",
            "256",
            "--no-save",
        ];
        a.extend_from_slice(extra);
        let r = iolab(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    // the fsync row's cells: op, ops, IOPS
    let fsync_row = |text: &str| -> Vec<String> {
        let l = text
            .lines()
            .find(|l| l.contains("fsync"))
            .unwrap_or_else(|| panic!("no fsync row: {text}"));
        l.split('┆').map(|c| c.trim().to_string()).collect()
    };
    let end_only = run(&["--fsync-freq", "0"]);
    let row = fsync_row(&end_only);
    assert_eq!(row[3], "fsync (end)", "{end_only}");
    assert_eq!(row[4], "4", "one per written file: {end_only}");
    assert_eq!(row[5], "-", "no rate: {end_only}");
    assert!(end_only.contains("fsync (end): the fsyncs of the files still dirty"));
    let during = run(&["--fsync-freq", "16", "--no-fsync-end"]);
    let row = fsync_row(&during);
    assert_eq!(row[3], "fsync", "{during}");
    assert!(row[5].parse::<f64>().unwrap() > 0.0, "{during}");
}

/// The words of one shell command line (single and double quotes; no expansion).
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for ch in line.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Every `iolab` command in README.md's examples is accepted as written, and the ones that need
/// no device, server, network peer or root setting run, in order, scaled down (sizes of 8 MiB,
/// fractions of a second, a private store and folder; run ids mapped to the ones this test
/// made): no example in the README can drift from what iolab takes.
#[test]
fn readme_examples_run_as_written_scaled_down() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut cmds: Vec<Vec<String>> = Vec::new();
    let mut in_code = false;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        // a comment ends the command; `;` separates commands; `> FILE` is the shell's
        let line = line.split(" #").next().unwrap_or("");
        for part in line.split(';') {
            let mut w = shell_words(part.split(" > ").next().unwrap_or(""));
            if w.first().map(String::as_str) == Some("mpirun") {
                // `mpirun -np 4 target/release/iolab ...`: the iolab part
                let at = w.iter().position(|x| x.ends_with("/iolab")).unwrap();
                w.drain(..at);
            }
            if w.first()
                .is_some_and(|x| x == "iolab" || x.ends_with("/iolab"))
            {
                cmds.push(w);
            }
        }
    }
    assert!(cmds.len() > 40, "the README's examples: {}", cmds.len());
    // every one is accepted as written
    for c in &cmds {
        if let Err(e) = iolab::cli::parse_from(iolab::cli::presplit(c.clone())) {
            panic!("README: `{}` is refused: {e}", c.join(" "));
        }
    }
    // the ones that run here, scaled down
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("r.db");
    let here = d.path().to_str().unwrap().to_string();
    // the README's capture (`db.cap`, relative to the commands' folder): 200 reads and writes
    // of 16 KiB over 0.1 s, as `iolab capture` writes them
    let mut cap = String::from(
        "{\"schema\":\"iolab-capture/1\",\"iolab_version\":\"x\",\"device\":\"loop0\",\"majmin\":\"7:0\",\"start\":\"2026-11-30T00:00:00Z\",\"host\":\"h\",\"kernel\":\"k\",\"source\":\"s\"}\n",
    );
    for i in 0..200u64 {
        let dir = if i % 3 == 0 { "write" } else { "read" };
        cap.push_str(&format!(
            "{{\"t_ns\":{},\"dir\":\"{dir}\",\"offset_bytes\":{},\"size_bytes\":16384,\"lat_ns\":100000,\"qd\":1,\"pid\":1,\"comm\":\"db\"}}\n",
            i * 500_000,
            (i * 7919 % 512) * 16384
        ));
    }
    std::fs::write(d.path().join("db.cap"), cap).unwrap();
    let mut ran = 0;
    for c in &cmds {
        let a: Vec<&str> = c.iter().skip(1).map(String::as_str).collect();
        let sub = a.first().copied().unwrap_or("");
        let joined = a.join(" ");
        // needs a device (or two), a server, a peer, root settings, files the README's reader
        // has, the MPI build, or runs until stopped
        let elsewhere = joined.contains("/dev/")
            || joined.contains("--url")
            || joined.contains("--scheduler")
            || joined.contains("--metrics-listen")
            || joined.contains("job.fio")
            || matches!(
                sub,
                "crashcheck" | "iostat" | "import" | "store" | "zones" | "fingerprint"
                    // two devices
                    | "together"
            )
            || (sub == "suite" && joined.contains("--scale"))
            || c[0] != "iolab";
        if elsewhere {
            continue;
        }
        let mut v: Vec<String> = Vec::new();
        let mut it = a.iter().peekable();
        while let Some(&w) = it.next() {
            match w {
                "--size" => {
                    it.next();
                    v.extend(["--size".into(), "8M".into()]);
                }
                "--time" => {
                    it.next();
                    v.extend(["--time".into(), "0.2".into()]);
                }
                "--iterations" => {
                    it.next();
                    v.extend(["--iterations".into(), "50".into()]);
                }
                "--dir" => {
                    it.next();
                    v.extend(["--dir".into(), here.clone()]);
                }
                "--over" => {
                    let over = it.next().copied().unwrap_or("");
                    let scaled = if over.starts_with("scale=") {
                        "scale=1..2"
                    } else {
                        "size=8M..32M"
                    };
                    v.extend(["--over".into(), scaled.into()]);
                }
                w if w.starts_with("/var/lib") || w.starts_with("/data") => v.push(here.clone()),
                // a run id of the README's store: this store's first run
                w if w.parse::<u32>().is_ok() && matches!(sub, "show" | "explain") => {
                    v.push("1".into())
                }
                w => v.push(w.to_string()),
            }
        }
        if matches!(sub, "run" | "sweep" | "saturate")
            && !v.iter().any(|x| x == "--time" || x == "--ops")
        {
            v.extend(["--time".into(), "0.2".into()]);
        }
        if matches!(sub, "run" | "prepare" | "sweep" | "saturate") {
            if !v.iter().any(|x| x == "--size") && !joined.contains("size=") {
                v.extend(["--size".into(), "8M".into()]);
            }
            v.extend(["--files".into(), "4".into()]);
        }
        if sub == "sweep" {
            // its --size list: one small size per value
            if let Some(i) = a.iter().position(|x| *x == "--size") {
                let n = a[i + 1].split(',').count();
                let sizes: Vec<String> = (1..=n).map(|k| format!("{}M", 4 * k)).collect();
                let at = v.iter().position(|x| x == "--size").unwrap();
                v[at + 1] = sizes.join(",");
            }
        }
        let args: Vec<&str> = v.iter().map(String::as_str).collect();
        let r = to_run(
            std::process::Command::new(bin())
                .current_dir(d.path())
                .args(&args)
                .env("IOLAB_DB", &db)
                .output()
                .unwrap(),
        );
        // check: exit 1 when it warns
        let ok = r.code == 0 || (sub == "check" && r.code == 1);
        assert!(
            ok,
            "README `{joined}` as `iolab {}`: exit {}: {}",
            v.join(" "),
            r.code,
            r.stderr
        );
        ran += 1;
    }
    assert!(ran >= 25, "{ran} of the README's examples ran");
}
