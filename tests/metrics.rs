//! Live export (docs/metrics.md): `--live` NDJSON against the stored series, `--metrics-listen`
//! scrapes, and what is refused before a run. The scrape against a throttled device is in
//! tests/root.rs.

use crate::common::*;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A free TCP port of 127.0.0.1 (bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET /metrics` over plain HTTP/1.0; the body, or None when nothing listens.
fn scrape(port: u16) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut t = String::new();
    s.read_to_string(&mut t).ok()?;
    let (head, body) = t.split_once("\r\n\r\n")?;
    assert!(
        head.starts_with("HTTP/1.") && head.contains(" 200"),
        "{head}"
    );
    Some(body.to_string())
}

/// The value of the first series of `name` whose labels contain every one of `labels`.
fn value(body: &str, name: &str, labels: &[&str]) -> Option<f64> {
    body.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .find(|l| labels.iter().all(|x| l.contains(x)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// The NDJSON lines of `--live` and the stored series of the same run agree second by second:
/// one line per measured second, the same `t_s`, the same fields, the same IOPS (within the
/// operations that complete right at a second boundary).
#[test]
fn live_lines_are_the_stored_series_second_by_second() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let live = tmp.path().join("live.ndjson");
    let data = tmp.path().join("data");
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
            "8M",
            "--mode",
            "rndrd",
            "--rate",
            "400",
            "--time",
            "4",
            "--ramp",
            "1",
            "-q",
            "--live",
            live.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.stderr.split("saved as run ").nth(1).unwrap();
    let id: String = id.chars().take_while(|c| c.is_ascii_digit()).collect();
    let stored = iolab_db(&db, &["show", &id, "--json"]).json();
    let series = stored["timeseries"].as_array().unwrap();
    let text = std::fs::read_to_string(&live).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    eprintln!("{text}");
    assert_eq!(
        lines.len(),
        series.len(),
        "one line per stored second:\n{text}"
    );
    for (l, s) in lines.iter().zip(series) {
        assert_eq!(l["schema"], "iolab-live/1");
        assert_eq!(l["mode"], "rndrd");
        assert_eq!(l["cell"], 0);
        assert_eq!(l["t_s"], s["t_s"], "{l}\n{s}");
        // the fields of the stored point, each there
        for k in s.as_object().unwrap().keys() {
            assert!(l.get(k).is_some(), "{k} missing in {l}");
        }
        let (li, si) = (
            l["read"]["iops"].as_f64().unwrap(),
            s["read"]["iops"].as_f64().unwrap(),
        );
        let (lo, so) = (
            l["read"]["ops"].as_i64().unwrap(),
            s["read"]["ops"].as_i64().unwrap(),
        );
        eprintln!(
            "t {}: live {li:.1} IOPS ({lo} ops), stored {si:.1} IOPS ({so} ops)",
            s["t_s"]
        );
        // A whole second holds about 400 operations; the two sides may place the few that end
        // within a millisecond or two of a boundary on either side of it.
        assert!(
            (lo - so).abs() <= 4,
            "t {}: live {lo} ops, stored {so}",
            s["t_s"]
        );
        if s["dur_s"].as_f64().unwrap() >= 0.99 {
            assert!(
                (li - si).abs() / si <= 0.02,
                "t {}: live {li}, stored {si}",
                s["t_s"]
            );
        }
    }
}

/// A port already in use is a usage error before the run: one line naming the flag, exit 2,
/// nothing prepared, no `--live` file made.
#[test]
fn a_metrics_port_in_use_is_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let live = tmp.path().join("live.ndjson");
    let r = iolab(&[
        "run",
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
        "--metrics-listen",
        &addr,
        "--live",
        live.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("--metrics-listen {addr}")),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
    assert!(!live.exists());
}

/// A fio job file of two phases with `--metrics-listen`: the run waits for a scrape of the final
/// counts, and that scrape's counters of each cell are the counts of that phase in the document.
#[test]
fn a_job_file_run_lingers_for_the_final_counts_of_every_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let scraper = std::thread::spawn(move || last_scrape(port));
    let job = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fio-jobs/sizebound.fio"
    );
    let r = to_run(
        Command::new(bin())
            .args([
                "run",
                job,
                "--json",
                "--no-save",
                "--metrics-listen",
                &format!("127.0.0.1:{port}"),
                "--metrics-linger",
                "30s",
            ])
            .env("IOLAB_FIO_DIR", tmp.path())
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("until a scrape reads them"),
        "{}",
        r.stderr
    );
    let last = scraper.join().unwrap();
    let v = r.json();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (cell, op) in [(0, "read"), (1, "write"), (1, "fsync")] {
        let want = runs[cell]["results"][op]["ops"].as_f64().unwrap();
        let got = value(
            &last,
            "iolab_ops_total",
            &[&format!("cell=\"{cell}\""), &format!("op=\"{op}\"")],
        );
        assert_eq!(got, Some(want), "cell {cell} {op}: {last}");
    }
}

/// `--metrics-linger` without `--metrics-listen` is refused in one line that names what it
/// needs (clap's list of missing arguments is on lines of its own: kept on the one line).
#[test]
fn a_linger_without_a_listener_is_refused_naming_it() {
    let r = iolab(&["run", "--metrics-linger", "5s", "--ops", "10"]);
    assert_refused(&r, "not provided: --metrics-listen");
}

/// `--live -` with a JSON document on stdout is refused (the two would interleave).
#[test]
fn live_on_stdout_with_json_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        tmp.path().to_str().unwrap(),
        "--engine",
        "null",
        "--ops",
        "10",
        "--json",
        "--live",
        "-",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--live -"), "{}", r.stderr);
}

/// A scrape while a run goes on: the counters, the histogram and the labels, and a counter that
/// grows between two scrapes; the server is gone when the run ends.
#[test]
fn a_scrape_during_a_run_reads_growing_counters() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = Command::new(bin())
        .args([
            "run",
            "--dir",
            tmp.path().to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "4M",
            "--mode",
            "rndrw",
            "--bs",
            "4k",
            "--rate",
            "500",
            "--time",
            "4",
            "--no-save",
            "-q",
            "--metrics-listen",
            &format!("127.0.0.1:{port}"),
            // no wait for a final scrape: the server ends with the run
            "--metrics-linger",
            "0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let first = loop {
        if let Some(b) = scrape(port)
            .filter(|b| value(b, "iolab_ops_total", &[r#"op="read""#]).is_some_and(|v| v > 0.0))
        {
            break b;
        }
        assert!(t0.elapsed() < READY_TIMEOUT, "no scrape with operations");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(1));
    let second = scrape(port).expect("still serving");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for l in [
        r#"mode="rndrw""#,
        r#"cell="0""#,
        "run_id=\"",
        &format!("host=\"{}\"", host.trim()),
    ] {
        assert!(first.contains(l), "{l} in\n{first}");
    }
    let ops = |b: &str, op: &str| value(b, "iolab_ops_total", &[&format!("op=\"{op}\"")]).unwrap();
    assert!(ops(&second, "read") > ops(&first, "read"), "{second}");
    assert!(ops(&second, "write") > ops(&first, "write"), "{second}");
    let bytes = value(&second, "iolab_bytes_total", &[r#"op="read""#]).unwrap();
    // ops and bytes are read one after the other: an operation may complete between them
    let ops_r = ops(&second, "read");
    assert!(
        (bytes - ops_r * 4096.0).abs() <= 4096.0,
        "{bytes} bytes, {ops_r} reads"
    );
    let count = value(&second, "iolab_latency_seconds_count", &[r#"op="read""#]).unwrap();
    let inf = value(
        &second,
        "iolab_latency_seconds_bucket",
        &[r#"op="read""#, r#"le="+Inf""#],
    )
    .unwrap();
    assert!((count - inf).abs() <= 1.0, "count {count}, +Inf {inf}");
    assert!(
        second.contains("# TYPE iolab_latency_seconds histogram"),
        "{second}"
    );
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(scrape(port).is_none(), "the server ends with the run");
}

/// A sweep's runs do not take --live or --metrics-listen (they are `iolab run`'s): refused, exit 2.
#[test]
fn sweeps_refuse_the_live_export() {
    let tmp = tempfile::tempdir().unwrap();
    let r = iolab(&[
        "sweep",
        "--dir",
        tmp.path().to_str().unwrap(),
        "--engine",
        "null",
        "--ops",
        "10",
        "--threads",
        "1,2",
        "--metrics-listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--metrics-listen"), "{}", r.stderr);
}

/// `--live -` writes the lines on stdout and nothing else (`| jq .` reads it); the run's
/// table goes to stderr.
#[test]
fn live_on_stdout_is_the_only_thing_on_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        tmp.path().to_str().unwrap(),
        "--files",
        "1",
        "--size",
        "4M",
        "--mode",
        "rndrd",
        "--rate",
        "200",
        "--time",
        "2",
        "--no-save",
        "-q",
        "--live",
        "-",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // every line of stdout is one JSON document
    let json: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    // one per second of the 2 s window (fewer only when a line was written late and covers two)
    assert!((1..=2).contains(&json.len()), "{}", r.stdout);
    assert!(json.iter().all(|l| l["schema"] == "iolab-live/1"));
    assert_eq!(json[0]["t_s"], 0.0);
    assert!(
        r.stderr.lines().any(|l| l.contains("rndrd")),
        "the table is on stderr: {}",
        r.stderr
    );
}

/// `iolab run --metrics-listen` on a free port of 127.0.0.1, serving until the test ends
/// (killed on drop); returns once a scrape answers.
struct Serving {
    child: std::process::Child,
    port: u16,
    _tmp: tempfile::TempDir,
}

impl Serving {
    fn start() -> Serving {
        let tmp = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(bin())
            .args(["run", "--dir", tmp.path().to_str().unwrap()])
            .args(["--engine", "null", "--mode", "rndrd", "--rate", "100"])
            .args(["--time", "600", "--no-save", "-q", "--metrics-listen"])
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let s = Serving {
            child,
            port,
            _tmp: tmp,
        };
        let t0 = Instant::now();
        while scrape(port).is_none() {
            assert!(t0.elapsed() < READY_TIMEOUT, "no scrape answered");
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    fn peak_kib(&self) -> u64 {
        peak_rss_kib(self.child.id())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue 24: one 500 MB HTTP header took the benchmark process from 16 MB to 520 MB. The server
/// reads at most 8 KiB of a request head, answers 431 and closes: the client cannot send the
/// rest, the process does not grow, and scrapes go on.
#[test]
fn a_huge_request_header_is_refused_early_and_memory_stays_bounded() {
    const HEADER: usize = 500 << 20;
    let s = Serving::start();
    let before = s.peak_kib();
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let _ = c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
    let sent = send_until_closed(&mut c, b'a', HEADER);
    assert!(
        sent < HEADER,
        "the server took all {sent} bytes of one header"
    );
    let after = s.peak_kib();
    eprintln!(
        "peak RSS {before} KiB before, {after} KiB after; {sent} bytes sent before the close"
    );
    assert!(
        after < before + 32 * 1024,
        "the process grew from {before} KiB to {after} KiB"
    );
    assert!(scrape(s.port).is_some(), "scrapes go on");
}

/// A client that sends part of a request head and then nothing (slow-loris) does not hold up
/// scrapes, and is answered 408 and closed once its time is up.
#[test]
fn a_slow_client_does_not_block_scrapes_and_is_closed() {
    let s = Serving::start();
    let mut slow = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    slow.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let body = scrape(s.port).expect("a scrape beside the slow client");
    assert!(body.contains("iolab_ops_total"), "{body}");
    // the test's own limit is far above the server's 5 s for a request head
    slow.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut answer = String::new();
    slow.read_to_string(&mut answer)
        .expect("the server closes the slow connection");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}
