//! `--metrics-listen` scraped by a real Prometheus server (Debian's `prometheus` package; issue
//! 27): a private server (its own config, 1 s scrape interval, storage in a temp dir, a free
//! port) scrapes a run, and its HTTP API's answers are compared with the run document: the p99
//! `histogram_quantile` computes from the buckets within 5 % of iolab's, the final counters equal
//! to iolab's counts (the run lingers until a scrape has read them), the settings in
//! `iolab_run_info`.

use crate::common::*;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// A free TCP port of 127.0.0.1 (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The private Prometheus server, killed (by its pid) and reaped when the test ends.
struct Server {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `prometheus` scraping `127.0.0.1:target` every second, with everything it keeps
    /// under `dir`; returns once it answers ready.
    fn start(dir: &std::path::Path, target: u16) -> Server {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: iolab\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let log = dir.join("prometheus.log");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start prometheus");
        let s = Server { child, port, log };
        let t0 = Instant::now();
        while s.get("/-/ready").is_none_or(|(code, _)| code != 200) {
            assert!(
                t0.elapsed() < READY_TIMEOUT,
                "prometheus not ready: {}",
                s.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// GET `path` over HTTP/1.0: the status and the body, None when nothing answers.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut c = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(c, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut t = String::new();
        c.read_to_string(&mut t).ok()?;
        let (head, body) = t.split_once("\r\n\r\n")?;
        let code = head.split(' ').nth(1)?.parse().ok()?;
        Some((code, body.to_string()))
    }

    /// An instant query of the HTTP API (`/api/v1/query`): each result's labels and value.
    fn query(&self, q: &str) -> Vec<(serde_json::Value, f64)> {
        let enc: String = q
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let (code, body) = self
            .get(&format!("/api/v1/query?query={enc}"))
            .expect("prometheus answers");
        assert_eq!(code, 200, "{q}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], "success", "{q}: {body}");
        v["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let x: f64 = r["value"][1].as_str().unwrap().parse().unwrap();
                (r["metric"].clone(), x)
            })
            .collect()
    }

    /// The one value of `q` (the test's run is the only one scraped).
    fn one(&self, q: &str) -> f64 {
        let r = self.query(q);
        assert_eq!(r.len(), 1, "{q}: {r:?}");
        r[0].1
    }
}

/// Prometheus scrapes a 5 s run every second: after the run its final counters are iolab's
/// counts, and `histogram_quantile` over the buckets is within 5 % of the run's p99 and p50.
#[test]
fn prometheus_agrees_with_the_run() {
    let name = "prometheus_agrees_with_the_run";
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip(
            name,
            "prometheus is not installed (apt-get install prometheus)",
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let target = free_port();
    let prom = Server::start(tmp.path(), target);
    let began = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    // reads and writes as fast as one thread goes (the page cache and the file system: tens
    // of thousands, µs to ms), over several scrapes; so many that the buckets around the p99
    // hold enough of them for an interpolation as exact as the buckets are
    let out = Command::new(bin())
        .args([
            "run",
            "--dir",
            data.to_str().unwrap(),
            "--files",
            "2",
            "--size",
            "16M",
            "--mode",
            "rndrw",
            "--bs",
            "4k",
            "--threads",
            "1",
            "--time",
            "5",
            "--json",
            "--no-save",
            "--metrics-listen",
            &format!("127.0.0.1:{target}"),
            "--metrics-linger",
            "20s",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // it waited for a scrape of the final counts, and one came (every second)
    assert!(
        stderr.contains("until a scrape reads them"),
        "no linger: {stderr}"
    );
    assert!(
        !stderr.contains("no scrape read the final counts"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // every scrape before the run ended is in the server once a later one has failed (a
    // target's scrapes are one after the other): wait for `up` 0
    let t0 = Instant::now();
    while prom.query(r#"up{job="iolab"} == 0"#).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "no failed scrape after the run: {}",
            prom.log_text()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // the series are stale now (their target is gone): the last value in the last minute
    let last = |q: &str| format!("last_over_time({q}[1m])");
    for op in ["read", "write"] {
        let ops = doc["results"][op]["ops"].as_u64().unwrap();
        assert!(ops > 1000, "{op}: {ops}");
        let sel = format!(r#"{{job="iolab",op="{op}"}}"#);
        let got = prom.one(&last(&format!("iolab_ops_total{sel}")));
        assert_eq!(got, ops as f64, "{op}: prometheus {got}, iolab {ops}");
        let bytes = doc["results"][op]["bytes"].as_u64().unwrap();
        assert_eq!(
            prom.one(&last(&format!("iolab_bytes_total{sel}"))),
            bytes as f64,
            "{op} bytes"
        );
        assert_eq!(
            prom.one(&last(&format!("iolab_latency_seconds_count{sel}"))),
            ops as f64,
            "{op} latency count"
        );
        // the issue's p99, and the median
        for (q, field) in [(0.99, "p99"), (0.5, "p50")] {
            let want = doc["results"][op]["lat_ns"][field].as_f64().unwrap();
            let got = prom.one(&format!(
                "histogram_quantile({q}, sum by (le) ({}))",
                last(&format!("iolab_latency_seconds_bucket{sel}"))
            )) * 1e9;
            eprintln!(
                "{op}: {ops} ops; {field} iolab {:.1} µs, prometheus {:.1} µs ({:+.2} %)",
                want / 1e3,
                got / 1e3,
                (got - want) / want * 100.0
            );
            assert!(
                (got - want).abs() / want <= 0.05,
                "{op}: {field} iolab {want} ns, prometheus {got} ns"
            );
        }
    }
    assert_eq!(
        prom.one(&last(r#"iolab_errors_total{job="iolab"}"#)),
        0.0,
        "errors"
    );
    // what the run is, and when it began
    let info = prom.query(&last(r#"iolab_run_info{job="iolab"}"#));
    assert_eq!(info.len(), 1, "{info:?}");
    let l = &info[0].0;
    for (k, v) in [
        ("mode", "rndrw"),
        ("bs_bytes", "4096"),
        ("threads", "1"),
        ("iodepth", "1"),
        ("bs", "4KiB"),
        ("engine", "sync"),
        ("direct", "false"),
        ("target", data.to_str().unwrap()),
        ("files", "2"),
        ("file_size_bytes", "8388608"),
        ("cell", "0"),
    ] {
        assert_eq!(l[k], v, "{k} in {l}");
    }
    // not paced: rate_iops is empty, which Prometheus keeps as no label
    assert!(l.get("rate_iops").is_none(), "{l}");
    let start = prom.one(&last(r#"iolab_run_start_time_seconds{job="iolab"}"#));
    let cell_start = prom.one(&last(r#"iolab_cell_start_time_seconds{job="iolab"}"#));
    assert!(
        began <= start + 1.0 && start <= cell_start && cell_start - began < 60.0,
        "began {began}, run start {start}, cell start {cell_start}"
    );
}
