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
use crate::measure::hist::{INTERVAL_BUCKETS, interval_bucket_value};
use crate::measure::live::{Delta, KINDS, LiveCounters, Stamp, Totals};
use crate::measure::wake::{SignalWake, Woke};
use crate::model::device::Sample;
use crate::model::run::{TsOp, TsPoint};
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The schema of each `--live` line.
/// Operation names by kind index (read, write, fsync).
pub const OP_NAMES: [&str; KINDS] = ["read", "write", "fsync", "trim"];

/// One job of a measured phase as the export names it: a cell's mode, or a role.
#[derive(Debug, Clone)]
pub struct PhaseUnit {
    pub mode: String,
    pub role: Option<String>,
    /// The kinds of operation it does (indexes into [`OP_NAMES`]).
    pub kinds: Vec<usize>,
}

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

/// The cells of the run so far, for the scrapes: each unit with its threads' counters.
#[derive(Debug, Default)]
struct Cells {
    units: Vec<(usize, PhaseUnit, Vec<Arc<LiveCounters>>)>,
    /// The latest device interval of the phase that is running (cell, mode), none between cells.
    device: Option<(usize, String, Sample)>,
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
    /// `run_id` and `host` label every line and series.
    pub fn new(run_id: String, host: String) -> Observer {
        Observer {
            run_id,
            host,
            ndjson: None,
            ndjson_failed: Default::default(),
            cells: Default::default(),
            next_cell: AtomicUsize::new(0),
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
    /// scrapes after the phase, so a finished cell's counters stay at their last values).
    /// Returns the phase's cell number.
    pub fn begin_phase(&self, units: &[PhaseUnit], counters: Vec<Vec<Arc<LiveCounters>>>) -> usize {
        let cell = self.next_cell.fetch_add(1, Ordering::Relaxed);
        let mut c = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        for (u, t) in units.iter().zip(counters) {
            c.units.push((cell, u.clone(), t));
        }
        c.device = None;
        cell
    }

    /// The phase ended: its device figures are no longer current.
    pub fn end_phase(&self) {
        self.cells.lock().unwrap_or_else(|e| e.into_inner()).device = None;
    }

    /// The device sampler took an interval of `cell`.
    pub fn device_sample(&self, cell: usize, mode: &str, s: &Sample) {
        self.cells.lock().unwrap_or_else(|e| e.into_inner()).device =
            Some((cell, mode.to_string(), s.clone()));
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
            cells: Arc::clone(&self.cells),
        }
    }
}

/// Upper bounds of the latency histogram's classic buckets, in seconds.
pub const LE_S: [f64; 19] = [
    10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3,
    250e-3, 500e-3, 1.0, 2.5, 5.0, 10.0,
];

/// The classic buckets (`le`, the count in that bucket alone: the encoder writes them
/// cumulative) of interval-histogram bucket counts: each bucket counted under the first bound at
/// or above its midpoint (within its 3.1 % width), then +Inf.
pub fn le_buckets(lat: &[u64]) -> Vec<(f64, u64)> {
    let mut per = vec![0u64; LE_S.len() + 1];
    for (i, &n) in lat.iter().enumerate().take(INTERVAL_BUCKETS) {
        if n == 0 {
            continue;
        }
        let v_s = interval_bucket_value(i) as f64 / 1e9;
        let at = LE_S.iter().position(|&le| v_s <= le).unwrap_or(LE_S.len());
        per[at] += n;
    }
    LE_S.iter()
        .copied()
        .chain([f64::INFINITY])
        .zip(per)
        .collect()
}

/// Encodes the run's series on each scrape.
#[derive(Debug)]
struct RunCollector {
    run_id: String,
    host: String,
    cells: Arc<Mutex<Cells>>,
}

type Labels = Vec<(&'static str, String)>;

impl RunCollector {
    fn labels(&self, cell: usize, mode: &str, role: Option<&str>) -> Labels {
        let mut l = vec![
            ("run_id", self.run_id.clone()),
            ("host", self.host.clone()),
            ("cell", cell.to_string()),
            ("mode", mode.to_string()),
        ];
        if let Some(r) = role {
            l.push(("role", r.to_string()));
        }
        l
    }
}

/// A counter value as the encoder takes it.
#[derive(Debug)]
struct Count(u64);

impl EncodeMetric for Count {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::MetricEncoder,
    ) -> std::result::Result<(), std::fmt::Error> {
        encoder.encode_counter::<prometheus_client::encoding::NoLabelSet, _, u64>(&self.0, None)
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Counter
    }
}

impl prometheus_client::collector::Collector for RunCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::result::Result<(), std::fmt::Error> {
        let cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        // Every unit × kind, summed now over its threads.
        let mut rows: Vec<(Labels, Totals)> = Vec::new();
        for (cell, u, threads) in &cells.units {
            for &k in &u.kinds {
                let mut l = self.labels(*cell, &u.mode, u.role.as_deref());
                l.push(("op", OP_NAMES[k].to_string()));
                rows.push((l, Totals::take(threads.iter().map(|t| &**t), k)));
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "iolab_ops",
                "Operations completed (reads, writes, fsyncs), from the start of the cell, ramp included",
                None,
                MetricType::Counter,
            )?;
            for (l, t) in &rows {
                Count(t.ops).encode(m.encode_family(l)?)?;
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "iolab_bytes",
                "Bytes read or written, from the start of the cell, ramp included",
                None,
                MetricType::Counter,
            )?;
            for (l, t) in rows
                .iter()
                .filter(|(l, _)| l.last().is_some_and(|o| o.1 != "fsync"))
            {
                Count(t.amount).encode(m.encode_family(l)?)?;
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "iolab_latency",
                "Latency of each completed operation (buckets within 3.1 % of their bounds)",
                Some(&Unit::Seconds),
                MetricType::Histogram,
            )?;
            for (l, t) in &rows {
                m.encode_family(l)?
                    .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                        t.lat_sum_ns as f64 / 1e9,
                        t.ops,
                        &le_buckets(&t.lat),
                        None,
                    )?;
            }
        }
        if let Some((cell, mode, s)) = &cells.device {
            type Pick = fn(&crate::model::device::Iostat) -> f64;
            let gauges: [(&str, &str, Option<Unit>, Pick); 8] = [
                (
                    "iolab_device_reads_per_second",
                    "Reads completed per second by the device (iostat r/s), latest interval",
                    None,
                    |x| x.r_s,
                ),
                (
                    "iolab_device_writes_per_second",
                    "Writes completed per second by the device (iostat w/s), latest interval",
                    None,
                    |x| x.w_s,
                ),
                (
                    "iolab_device_read_bytes_per_second",
                    "Bytes read per second by the device (iostat rkB/s × 1024), latest interval",
                    None,
                    |x| x.rkb_s * 1024.0,
                ),
                (
                    "iolab_device_write_bytes_per_second",
                    "Bytes written per second by the device (iostat wkB/s × 1024), latest interval",
                    None,
                    |x| x.wkb_s * 1024.0,
                ),
                (
                    "iolab_device_read_await",
                    "Mean read time at the device (iostat r_await), latest interval",
                    Some(Unit::Seconds),
                    |x| x.r_await_ms / 1e3,
                ),
                (
                    "iolab_device_write_await",
                    "Mean write time at the device (iostat w_await), latest interval",
                    Some(Unit::Seconds),
                    |x| x.w_await_ms / 1e3,
                ),
                (
                    "iolab_device_queue_depth",
                    "Mean requests queued or in service (iostat aqu-sz), latest interval",
                    None,
                    |x| x.aqu_sz,
                ),
                (
                    "iolab_device_util_ratio",
                    "Share of the interval the device was busy (iostat %util / 100), latest interval",
                    None,
                    |x| x.util_pct / 100.0,
                ),
            ];
            for (name, help, unit, pick) in gauges {
                let mut m = enc.encode_descriptor(name, help, unit.as_ref(), MetricType::Gauge)?;
                for (dev, x) in &s.devices {
                    let mut l = self.labels(*cell, mode, None);
                    l.push(("device", dev.clone()));
                    m.encode_family(&l)?.encode_gauge(&pick(x))?;
                }
            }
        }
        Ok(())
    }
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
}

impl MetricsServer {
    /// Binds `addr` (a port in use, an address not of this host: a usage error before the run)
    /// and serves `obs`'s series. OpenMetrics text when the scraper asks for it (`Accept:
    /// application/openmetrics-text`), else the Prometheus text format 0.0.4.
    pub fn start(addr: &str, obs: &Observer) -> Result<MetricsServer> {
        let l = std::net::TcpListener::bind(addr)
            .and_then(|l| l.set_nonblocking(true).map(|_| l))
            .map_err(|e| {
                Error::usage(format!(
                    "--metrics-listen {addr}: cannot listen there ({e}); give a free ADDR:PORT of this host, e.g. 127.0.0.1:9464 or 0.0.0.0:9464"
                ))
            })?;
        let bound = l
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| addr.to_string());
        let (rx, wake) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| Error::failed(format!("--metrics-listen: {e}")))?;
        let rx = SignalWake::from_stream(rx)
            .map_err(|e| Error::failed(format!("--metrics-listen: {e}")))?;
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(obs.collector()));
        let registry = Arc::new(registry);
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
                            let (reg, b) = (Arc::clone(&registry), Arc::clone(&busy));
                            let started = std::thread::Builder::new()
                                .name("iolab-scrape".into())
                                .spawn(move || {
                                    answer(c, &reg);
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
        })
    }
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
fn answer(mut c: std::net::TcpStream, registry: &prometheus_client::registry::Registry) {
    let _ = c.set_nonblocking(false);
    let _ = c.set_write_timeout(Some(WRITE_TIME));
    let head = match read_head(&mut c) {
        Ok(h) => h,
        Err(Some(code)) => return respond(&mut c, code, "text/plain", "", false),
        Err(None) => return,
    };
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => {
            return respond(&mut c, 431, "text/plain", "", false);
        }
        _ => return respond(&mut c, 400, "text/plain", "", false),
    }
    let head_only = req.method == Some("HEAD");
    if !head_only && req.method != Some("GET") {
        return respond(&mut c, 405, "text/plain", "", false);
    }
    let open = req.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("Accept")
            && String::from_utf8_lossy(h.value).contains("application/openmetrics-text")
    });
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
        Ok(()) => respond(&mut c, 200, ctype, &body, head_only),
        Err(_) => respond(&mut c, 500, "text/plain", "encoding failed\n", head_only),
    }
}

fn respond(c: &mut std::net::TcpStream, code: u16, ctype: &str, body: &str, head_only: bool) {
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
    let _ = c.write_all(out.as_bytes());
    let _ = c.shutdown(std::net::Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_buckets_hold_each_operation_once() {
        use crate::measure::hist::interval_bucket;
        let mut lat = vec![0u64; INTERVAL_BUCKETS];
        lat[interval_bucket(80_000)] += 3; // 80 µs: under 100 µs
        lat[interval_bucket(2_000_000)] += 2; // 2 ms: under 2.5 ms
        lat[interval_bucket(30_000_000_000)] += 1; // 30 s: only +Inf
        let b = le_buckets(&lat);
        assert_eq!(b.len(), LE_S.len() + 1);
        let at = |le: f64| b.iter().find(|x| x.0 == le).unwrap().1;
        assert_eq!(at(50e-6), 0);
        assert_eq!(at(100e-6), 3);
        assert_eq!(at(1e-3), 0);
        assert_eq!(at(2.5e-3), 2);
        assert_eq!(at(10.0), 0);
        assert_eq!(at(f64::INFINITY), 1);
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 6);
    }

    #[test]
    fn a_scrape_sums_the_threads_and_keeps_finished_cells() {
        let obs = Observer::new("r1".into(), "h".into());
        let a = Arc::new(LiveCounters::default());
        let b = Arc::new(LiveCounters::default());
        for _ in 0..7 {
            a.publish(0, 4096, 90_000);
        }
        for _ in 0..5 {
            b.publish(0, 4096, 3_000_000);
        }
        let u = PhaseUnit {
            mode: "rndrd".into(),
            role: None,
            kinds: vec![0],
        };
        assert_eq!(
            obs.begin_phase(std::slice::from_ref(&u), vec![vec![a, b]]),
            0
        );
        assert_eq!(obs.begin_phase(&[u], vec![vec![]]), 1);
        let mut reg = prometheus_client::registry::Registry::default();
        reg.register_collector(Box::new(obs.collector()));
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &reg).unwrap();
        let l = r#"{run_id="r1",host="h",cell="0",mode="rndrd",op="read"}"#;
        assert!(text.contains(&format!("iolab_ops_total{l} 12\n")), "{text}");
        assert!(
            text.contains(&format!("iolab_bytes_total{l} 49152\n")),
            "{text}"
        );
        // cumulative in the exposition: 7 under 100 µs, all 12 under 5 ms
        assert!(
            text.contains(r#"iolab_latency_seconds_bucket{run_id="r1",host="h",cell="0",mode="rndrd",op="read",le="0.0001"} 7"#),
            "{text}"
        );
        assert!(
            text.contains(r#"iolab_latency_seconds_bucket{run_id="r1",host="h",cell="0",mode="rndrd",op="read",le="0.005"} 12"#),
            "{text}"
        );
        assert!(
            text.contains(r#"iolab_latency_seconds_bucket{run_id="r1",host="h",cell="0",mode="rndrd",op="read",le="+Inf"} 12"#),
            "{text}"
        );
        assert!(
            text.contains(&format!("iolab_latency_seconds_count{l} 12\n")),
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
}
