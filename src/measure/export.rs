//! Live export while a run goes on (docs/metrics.md): `--live FILE|-` writes the per-second
//! series as NDJSON (one object per measured second, the fields of the stored time series), and
//! `--metrics-listen ADDR:PORT` serves Prometheus / OpenMetrics text.
//!
//! Both read the counters each worker already publishes ([`LiveCounters`]: relaxed atomics only
//! that thread writes), so the hot path does nothing more for them. The NDJSON lines come from
//! the same interval reporter as `--report-interval` (one tick per second, aligned to the start of
//! the measured window, as the stored series is); a scrape sums the counters at the moment it
//! arrives, so a counter's rate between two scrapes is exact. The exposition format is written by
//! `prometheus-client`; the HTTP side is a minimal server here, bounded in request size and time
//! (a scrape is one small GET), with `httparse` parsing the request head.

use crate::error::{Error, Result};
use crate::measure::iostat::DeviceCounts;
use crate::measure::live::{Delta, LiveCounters, Stamp};
use crate::measure::prom::{CellUnit, Cells, RunCollector};
use crate::measure::wake::{SignalWake, Woke};
use crate::model::device::Sample;
use crate::model::run::{TsOp, TsPoint};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

pub use crate::measure::prom::{OP_NAMES, PhaseUnit};

/// One `--live` line: which cell (and role), then the fields of the stored time series.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct LiveLine<'a> {
    pub schema: &'static str,
    pub run_id: &'a str,
    pub host: &'a str,
    /// The measured phase, from 0 (a cell of a run; all roles of a run with roles share one).
    pub cell: usize,
    pub mode: &'a str,
    pub role: Option<&'a str>,
    /// Wall-clock time (UTC, RFC 3339 with milliseconds) when the interval ended and the line
    /// was made: what a log shipper or a chart beside other tools aligns on.
    pub time: String,
    #[serde(flatten)]
    pub point: TsPoint,
}

/// The point of the stored time series for one interval of the reporter: `t_s` is its start
/// after the end of the ramp (a whole second: the ticks are aligned to the window, as the stored
/// series is), `dur_s` its real length; an operation the job does not do, or did
/// not complete in it, is null (as stored).
pub fn ts_point(end_s: f64, d: &Delta) -> TsPoint {
    let op = |k: usize| -> Option<TsOp> {
        (d.ops[k] > 0).then(|| TsOp {
            ops: d.ops[k],
            iops: d.rate(k),
            bytes_per_sec: d.amount_rate(k),
            p50_ns: d.percentile(k, 50.0),
            p99_ns: d.percentile(k, 99.0),
        })
    };
    TsPoint {
        t_s: (end_s - d.secs).round().max(0.0),
        dur_s: d.secs,
        read: op(0),
        write: op(1),
        fsync: op(2),
        trim: op(3),
    }
}

/// What the export of one `iolab run` shares between the runner and the HTTP server.
pub struct Observer {
    run_id: String,
    host: String,
    ndjson: Option<Mutex<Box<dyn Write + Send>>>,
    /// Set once a `--live` write failed: said once, then the lines stop (the run goes on).
    ndjson_failed: std::sync::atomic::AtomicBool,
    cells: Arc<Mutex<Cells>>,
    next_cell: AtomicUsize,
    /// When the run began, in Unix seconds (`iolab_run_start_time_seconds`).
    start_s: f64,
    /// Set when the run is over and every counter final: a scrape from then on is a final one.
    finished: Arc<AtomicBool>,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("run_id", &self.run_id)
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl Observer {
    /// `run_id` and `host` label every line and series; `started` is when the run began.
    pub fn new(run_id: String, host: String, started: SystemTime) -> Observer {
        Observer {
            run_id,
            host,
            ndjson: None,
            ndjson_failed: Default::default(),
            cells: Default::default(),
            next_cell: AtomicUsize::new(0),
            start_s: unix_s(started),
            finished: Default::default(),
        }
    }

    /// The `--live` stream (set before the run; a server already started keeps serving).
    pub fn with_lines(mut self, ndjson: Option<Box<dyn Write + Send>>) -> Observer {
        self.ndjson = ndjson.map(Mutex::new);
        self
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Whether `--live` lines are wanted (the runner starts their reporter only then).
    pub fn wants_lines(&self) -> bool {
        self.ndjson.is_some()
    }

    /// A measured phase begins: its units and each unit's thread counters (kept for the
    /// scrapes after the phase, so a finished cell's counters stay at their last values), and
    /// when its measured window begins. Returns the phase's cell number.
    pub fn begin_phase(
        &self,
        units: &[PhaseUnit],
        counters: Vec<Vec<Arc<LiveCounters>>>,
        measured_from: SystemTime,
    ) -> usize {
        let cell = self.next_cell.fetch_add(1, Ordering::Relaxed);
        let mut c = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        for (u, t) in units.iter().zip(counters) {
            c.units.push(CellUnit {
                cell,
                unit: u.clone(),
                threads: t,
                start_s: unix_s(measured_from),
            });
        }
        c.device = None;
        cell
    }

    /// The run is over: every counter is final, and a scrape from now on is a final scrape
    /// (what [`MetricsServer::linger`] waits for).
    pub fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
    }

    /// The phase ended: its device figures are no longer current.
    pub fn end_phase(&self) {
        self.cells.lock().unwrap_or_else(|e| e.into_inner()).device = None;
    }

    /// The device sampler took a reading of `cell`: the interval that ended (None: the first
    /// reading, or a last interval too short for the series) and each device's counts since the
    /// start of the cell's measured window.
    pub fn device_sample(
        &self,
        cell: usize,
        mode: &str,
        s: Option<&Sample>,
        counts: &BTreeMap<String, DeviceCounts>,
    ) {
        let mut c = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = s {
            c.device = Some((cell, mode.to_string(), s.clone()));
        }
        match c.device_counts.iter_mut().find(|d| d.0 == cell) {
            Some(d) => d.2 = counts.clone(),
            None => c
                .device_counts
                .push((cell, mode.to_string(), counts.clone())),
        }
    }

    /// One reporter interval of phase `cell`: a `--live` line per unit for a measured interval
    /// (the ramp is not part of the stored series, so not of the stream either), flushed at once.
    pub fn interval(&self, cell: usize, units: &[PhaseUnit], stamp: Stamp, ds: &[Delta]) {
        let (Some(out), Stamp::Measured(end_s)) = (&self.ndjson, stamp) else {
            return;
        };
        if self.ndjson_failed.load(Ordering::Relaxed) {
            return;
        }
        let mut text = String::new();
        let time = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        for (u, d) in units.iter().zip(ds) {
            let line = LiveLine {
                time: time.clone(),
                schema: crate::model::schema::LIVE,
                run_id: &self.run_id,
                host: &self.host,
                cell,
                mode: &u.mode,
                role: u.role.as_deref(),
                point: ts_point(end_s, d),
            };
            text.push_str(&serde_json::to_string(&line).expect("json"));
            text.push('\n');
        }
        let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = w.write_all(text.as_bytes()).and_then(|_| w.flush()) {
            self.ndjson_failed.store(true, Ordering::Relaxed);
            crate::measure::live::print_line(&format!(
                "iolab: warning: --live: writing failed ({e}); no more lines are written, the run goes on"
            ));
        }
    }

    /// The Prometheus collector of this run (register it once).
    fn collector(&self) -> RunCollector {
        RunCollector {
            run_id: self.run_id.clone(),
            host: self.host.clone(),
            start_s: self.start_s,
            cells: Arc::clone(&self.cells),
        }
    }
}

/// Seconds since the Unix epoch.
fn unix_s(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The longest request head the `--metrics-listen` server reads (a scrape's is a few hundred
/// bytes); a longer one is answered 431 and the connection closed.
pub const HEAD_MAX: usize = 8 * 1024;
/// How long a client has to send its whole request head (answered 408 after that: a client
/// that trickles bytes holds a connection no longer than this).
pub const HEAD_TIME: Duration = Duration::from_secs(5);
/// How long writing an answer may block (a client that does not read).
const WRITE_TIME: Duration = Duration::from_secs(5);
/// Connections served at once; more are closed at once.
pub const MAX_CONNECTIONS: usize = 16;

/// The `--metrics-listen` HTTP server: bound before the run, serving every path with the
/// exposition (`/metrics` is the usual one) until dropped. A minimal HTTP/1.x server, one
/// request per connection (`Connection: close`), each connection on its own thread with its
/// request head bounded in size ([`HEAD_MAX`]) and time ([`HEAD_TIME`]), at most
/// [`MAX_CONNECTIONS`] at once; the head is parsed by `httparse`.
pub struct MetricsServer {
    /// A byte written here wakes the accept thread to end.
    wake: std::os::unix::net::UnixStream,
    thread: Option<std::thread::JoinHandle<()>>,
    pub addr: String,
    /// Readable once a scrape has been answered with the final counts (a byte per such scrape).
    served_final: std::os::unix::net::UnixStream,
}

/// The address `--metrics-listen` binds for `addr`: `:PORT` (no host, as most exporters take
/// it) is every address, IPv6 and IPv4 (`[::]:PORT`, which takes IPv4 too where the host allows
/// it), else IPv4 alone (`0.0.0.0:PORT`); anything else as given.
pub fn listen_addrs(addr: &str) -> Vec<String> {
    match addr.strip_prefix(':') {
        Some(port) => vec![format!("[::]:{port}"), format!("0.0.0.0:{port}")],
        None => vec![addr.to_string()],
    }
}

impl MetricsServer {
    /// Binds `addr` (a port in use, an address not of this host: a usage error before the run)
    /// and serves `obs`'s series. OpenMetrics text when the scraper asks for it (`Accept:
    /// application/openmetrics-text`), else the Prometheus text format 0.0.4.
    pub fn start(addr: &str, obs: &Observer) -> Result<MetricsServer> {
        let mut bound = Err(std::io::Error::other("no address"));
        for a in listen_addrs(addr) {
            bound = std::net::TcpListener::bind(&a);
            // [::] refused (no IPv6 on this host): 0.0.0.0 next; a port in use is said at once
            match &bound {
                Err(e) if e.kind() != std::io::ErrorKind::AddrInUse => continue,
                _ => break,
            }
        }
        let l = bound
            .and_then(|l| l.set_nonblocking(true).map(|_| l))
            .map_err(|e| {
                Error::usage(format!(
                    "--metrics-listen {addr}: cannot listen there ({e}); give a free ADDR:PORT of this host, e.g. 127.0.0.1:9464, 0.0.0.0:9464 or :9464 (every address)"
                ))
            })?;
        let bound = l
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| addr.to_string());
        let failed = |e: std::io::Error| Error::failed(format!("--metrics-listen: {e}"));
        let (rx, wake) = std::os::unix::net::UnixStream::pair().map_err(failed)?;
        let rx = SignalWake::from_stream(rx).map_err(failed)?;
        let (served_final, final_tx) = std::os::unix::net::UnixStream::pair().map_err(failed)?;
        final_tx.set_nonblocking(true).map_err(failed)?;
        let scraped = Scraped {
            finished: Arc::clone(&obs.finished),
            tx: final_tx,
        };
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(obs.collector()));
        let shared = Arc::new((registry, scraped));
        let busy = Arc::new(AtomicUsize::new(0));
        let thread = std::thread::Builder::new()
            .name("iolab-metrics".into())
            .spawn(move || {
                loop {
                    match l.accept() {
                        Ok((c, _)) => {
                            // over the limit: closed at once (dropped)
                            if busy.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                                continue;
                            }
                            busy.fetch_add(1, Ordering::SeqCst);
                            let (sh, b) = (Arc::clone(&shared), Arc::clone(&busy));
                            let started = std::thread::Builder::new()
                                .name("iolab-scrape".into())
                                .spawn(move || {
                                    answer(c, &sh.0, &sh.1);
                                    b.fetch_sub(1, Ordering::SeqCst);
                                });
                            if started.is_err() {
                                busy.fetch_sub(1, Ordering::SeqCst);
                            }
                        }
                        Err(e) => {
                            // asleep until a connection or the end; after another error
                            // (no descriptor left) a moment before the next try
                            let wait = (e.kind() != std::io::ErrorKind::WouldBlock)
                                .then(|| Instant::now() + Duration::from_millis(100));
                            match rx.wait(Some(l.as_fd()), wait) {
                                Ok(Woke::Signal) | Err(_) => return,
                                Ok(_) => {}
                            }
                        }
                    }
                }
            })
            .map_err(|e| Error::failed(format!("--metrics-listen: starting its thread: {e}")))?;
        Ok(MetricsServer {
            wake,
            thread: Some(thread),
            addr: bound,
            served_final,
        })
    }

    /// After the run (its [`Observer::finish`] called): keeps serving until one scrape has been
    /// answered with the final counts, for at most `linger`, or until SIGINT/SIGTERM. Returns
    /// whether a final scrape was served. It sleeps in poll(2): no polling.
    pub fn linger(&self, linger: Duration) -> bool {
        let Ok(wake) = SignalWake::register(&[libc::SIGINT, libc::SIGTERM]) else {
            return false;
        };
        let deadline = Instant::now() + linger;
        matches!(
            wake.wait(Some(self.served_final.as_fd()), Some(deadline)),
            Ok(Woke::Ready)
        )
    }
}

/// What a scrape needs to tell the lingering run that it read the final counts.
struct Scraped {
    /// The observer's: the run is over.
    finished: Arc<AtomicBool>,
    /// A byte written here per final scrape answered (non-blocking: a full pipe already says it).
    tx: std::os::unix::net::UnixStream,
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        let _ = (&self.wake).write_all(b"x");
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads a request head (up to the empty line) of at most [`HEAD_MAX`] bytes within
/// [`HEAD_TIME`]; Err: the status to answer with (None: the client is gone, no answer).
fn read_head(c: &mut std::net::TcpStream) -> std::result::Result<Vec<u8>, Option<u16>> {
    use std::io::Read;
    let deadline = Instant::now() + HEAD_TIME;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Some(408));
        }
        let room = HEAD_MAX - buf.len();
        if room == 0 {
            return Err(Some(431));
        }
        let _ = c.set_read_timeout(Some(left));
        let want = room.min(chunk.len());
        let n = match c.read(&mut chunk[..want]) {
            Ok(0) => return Err(None),
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                continue; // the loop decides with the clock
            }
            Err(_) => return Err(None),
        };
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        let tail = &buf[from..];
        if tail.windows(4).any(|w| w == b"\r\n\r\n") || tail.windows(2).any(|w| w == b"\n\n") {
            return Ok(buf);
        }
    }
}

/// One connection: its request read (bounded) and answered, then closed.
fn answer(
    mut c: std::net::TcpStream,
    registry: &prometheus_client::registry::Registry,
    scraped: &Scraped,
) {
    let _ = c.set_nonblocking(false);
    let _ = c.set_write_timeout(Some(WRITE_TIME));
    let refuse = |c: &mut std::net::TcpStream, code| {
        respond(c, code, "text/plain", "", false);
    };
    let head = match read_head(&mut c) {
        Ok(h) => h,
        Err(Some(code)) => return refuse(&mut c, code),
        Err(None) => return,
    };
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => return refuse(&mut c, 431),
        _ => return refuse(&mut c, 400),
    }
    let head_only = req.method == Some("HEAD");
    if !head_only && req.method != Some("GET") {
        return refuse(&mut c, 405);
    }
    let open = req.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("Accept")
            && String::from_utf8_lossy(h.value).contains("application/openmetrics-text")
    });
    // read before the counters are: a scrape that began after the end sees the final counts
    let last = scraped.finished.load(Ordering::SeqCst);
    let mut body = String::new();
    let (ok, ctype) = if open {
        (
            prometheus_client::encoding::text::encode(&mut body, registry),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )
    } else {
        (
            prometheus_client::encoding::prometheus_text::encode(&mut body, registry),
            "text/plain; version=0.0.4; charset=utf-8",
        )
    };
    match ok {
        Ok(()) => {
            if respond(&mut c, 200, ctype, &body, head_only) && last && !head_only {
                let _ = (&scraped.tx).write_all(b"x");
            }
        }
        Err(_) => {
            respond(&mut c, 500, "text/plain", "encoding failed\n", head_only);
        }
    }
}

/// Writes the answer and closes the writing side; whether all of it was written.
fn respond(
    c: &mut std::net::TcpStream,
    code: u16,
    ctype: &str,
    body: &str,
    head_only: bool,
) -> bool {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    };
    let body = if code == 200 || code == 500 {
        body.to_string()
    } else {
        format!("{code} {reason}\n")
    };
    let mut out = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if !head_only {
        out.push_str(&body);
    }
    let sent = c.write_all(out.as_bytes()).is_ok();
    let _ = c.shutdown(std::net::Shutdown::Write);
    sent
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::hist::interval_bucket;

    fn unit(mode: &str) -> PhaseUnit {
        PhaseUnit {
            mode: mode.into(),
            role: None,
            kinds: vec![0],
            settings: vec![("bs", "4KiB".into()), ("threads", "2".into())],
        }
    }

    fn text_of(obs: &Observer) -> String {
        let mut reg = prometheus_client::registry::Registry::default();
        reg.register_collector(Box::new(obs.collector()));
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &reg).unwrap();
        text
    }

    #[test]
    fn a_scrape_sums_the_threads_and_keeps_finished_cells() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let obs = Observer::new("r1".into(), "h".into(), t0);
        let a = Arc::new(LiveCounters::default());
        let b = Arc::new(LiveCounters::default());
        for _ in 0..7 {
            a.publish(0, 4096, 90_000);
        }
        for _ in 0..5 {
            b.publish(0, 4096, 3_000_000);
        }
        b.error();
        let u = unit("rndrd");
        let from = t0 + Duration::from_millis(2500);
        assert_eq!(
            obs.begin_phase(std::slice::from_ref(&u), vec![vec![a, b]], from),
            0
        );
        assert_eq!(obs.begin_phase(&[u], vec![vec![]], from), 1);
        let text = text_of(&obs);
        let cell0 = r#"run_id="r1",host="h",cell="0",mode="rndrd""#;
        let l = format!(r#"{{{cell0},op="read"}}"#);
        assert!(text.contains(&format!("iolab_ops_total{l} 12\n")), "{text}");
        assert!(
            text.contains(&format!("iolab_bytes_total{l} 49152\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("iolab_errors_total{{{cell0}}} 1\n")),
            "{text}"
        );
        // cumulative in the exposition: 7 at the top of 90 µs's bucket, all 12 at 2^22 ns
        let top_90us = {
            let i = interval_bucket(90_000);
            (interval_bucket_start(i + 1) - 1) as f64 / 1e9
        };
        // the count of cell 0's read bucket whose `le` is `le` (as a number: the encoder
        // writes 9.0111e-05)
        let bucket = |le: f64| -> Option<u64> {
            let head = format!(r#"iolab_latency_seconds_bucket{{{cell0},op="read",le=""#);
            text.lines().find_map(|line| {
                let (b, rest) = line.strip_prefix(head.as_str())?.split_once("\"} ")?;
                let v: f64 = if b == "+Inf" {
                    f64::INFINITY
                } else {
                    b.parse().ok()?
                };
                (v == le).then(|| rest.parse().ok())?
            })
        };
        assert_eq!(bucket(top_90us), Some(7), "{top_90us} {text}");
        assert_eq!(bucket(0.004194303), Some(12), "{text}");
        assert_eq!(bucket(f64::INFINITY), Some(12), "{text}");
        assert!(
            text.contains(&format!("iolab_latency_seconds_count{l} 12\n")),
            "{text}"
        );
        // the settings, the run's and the cell's start
        assert!(
            text.contains(&format!(
                "iolab_run_info{{{cell0},bs=\"4KiB\",threads=\"2\"}} 1\n"
            )),
            "{text}"
        );
        assert!(
            text.contains("iolab_run_start_time_seconds{run_id=\"r1\",host=\"h\"} 1700000000.0\n"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "iolab_cell_start_time_seconds{{{cell0}}} 1700000002.5\n"
            )),
            "{text}"
        );
        // the second cell is there with zero counts
        assert!(
            text.contains(
                r#"iolab_ops_total{run_id="r1",host="h",cell="1",mode="rndrd",op="read"} 0"#
            ),
            "{text}"
        );
    }

    /// The start of interval bucket `i` (the value that maps to it first).
    fn interval_bucket_start(i: usize) -> u64 {
        (0..u64::MAX).find(|&v| interval_bucket(v) == i).unwrap()
    }

    #[test]
    fn device_counts_are_counters_that_stay_after_the_cell() {
        let obs = Observer::new("r".into(), "h".into(), SystemTime::now());
        obs.begin_phase(&[unit("seqwr")], vec![vec![]], SystemTime::now());
        let counts = |w: u64| -> BTreeMap<String, DeviceCounts> {
            [(
                "loop7".to_string(),
                DeviceCounts {
                    writes: w,
                    write_bytes: w * 4096,
                    flushes: Some(2),
                    ..DeviceCounts::default()
                },
            )]
            .into_iter()
            .collect()
        };
        obs.device_sample(0, "seqwr", None, &counts(0));
        obs.device_sample(0, "seqwr", None, &counts(300));
        obs.end_phase();
        let text = text_of(&obs);
        let l = r#"{run_id="r",host="h",cell="0",mode="seqwr",device="loop7"}"#;
        for (series, v) in [
            ("iolab_device_writes_total", 300),
            ("iolab_device_written_bytes_total", 300 * 4096),
            ("iolab_device_reads_total", 0),
            ("iolab_device_flushes_total", 2),
        ] {
            assert!(
                text.contains(&format!("{series}{l} {v}\n")),
                "{series}: {text}"
            );
        }
        // no discard fields from this kernel: no series
        assert!(!text.contains("iolab_device_discards_total"), "{text}");
        // the gauges are the running cell's only
        assert!(!text.contains("iolab_device_util_ratio"), "{text}");
    }

    #[test]
    fn a_port_without_a_host_is_every_address() {
        assert_eq!(listen_addrs(":9464"), ["[::]:9464", "0.0.0.0:9464"]);
        assert_eq!(listen_addrs("127.0.0.1:9464"), ["127.0.0.1:9464"]);
        let obs = Observer::new("r".into(), "h".into(), SystemTime::now());
        let s = MetricsServer::start(":0", &obs).unwrap();
        let port = s.addr.rsplit(':').next().unwrap().to_string();
        // reachable on IPv4's loopback
        assert!(std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_ok());
    }

    /// GET over HTTP/1.0, the answer's status line.
    fn get(addr: &str) -> String {
        use std::io::Read;
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut t = String::new();
        c.read_to_string(&mut t).unwrap();
        t.lines().next().unwrap_or_default().to_string()
    }

    #[test]
    fn linger_ends_at_the_first_scrape_after_the_run() {
        let obs = Observer::new("r".into(), "h".into(), SystemTime::now());
        let s = MetricsServer::start("127.0.0.1:0", &obs).unwrap();
        // a scrape during the run is not a final one: the linger runs to its end
        assert!(get(&s.addr).contains(" 200"));
        assert!(!s.linger(Duration::from_millis(300)));
        obs.finish();
        // a scrape after the end ends a linger of a year (the test would hang otherwise)
        let addr = s.addr.clone();
        let t = std::thread::spawn(move || get(&addr));
        assert!(s.linger(Duration::from_secs(365 * 86_400)));
        assert!(t.join().unwrap().contains(" 200"));
    }
}
