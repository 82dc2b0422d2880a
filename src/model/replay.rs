//! `iolab run --replay TRACE`: what is replayed (in the job's settings) and how the replay kept
//! to the trace's time (in the mode's results). docs/capture.md, Replay.

use serde::{Deserialize, Serialize};

/// The kind of trace a replay reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum TraceFormat {
    /// `iolab capture`'s file (`iolab-capture/1`, NDJSON).
    #[serde(rename = "iolab-capture")]
    IolabCapture,
    /// fio's `write_iolog` version 2 (no times; `wait` lines).
    #[serde(rename = "fio-iolog-2")]
    FioIolog2,
    /// fio's `write_iolog` version 3 (each line's time in µs).
    #[serde(rename = "fio-iolog-3")]
    FioIolog3,
    /// blktrace's binary events (one CPU's file, or every CPU's merged by `blkparse -d`), as
    /// fio's `read_iolog` replays them: the queue (`Q`) events.
    #[serde(rename = "blktrace")]
    Blktrace,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::IolabCapture => "iolab-capture",
            TraceFormat::FioIolog2 => "fio-iolog-2",
            TraceFormat::FioIolog3 => "fio-iolog-3",
            TraceFormat::Blktrace => "blktrace",
        }
    }
}

/// A replay's settings and what its trace holds (read once before the run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Replay {
    /// The trace file, as given.
    pub trace: String,
    pub format: TraceFormat,
    /// `--speed`: the trace's time divided by this (2: twice as fast); 1 by default.
    pub speed: f64,
    /// `--closed`: as fast as the target allows, in the trace's order, each request waiting
    /// until fewer than its captured queue depth are in flight (the trace's times unused).
    pub closed: bool,
    /// Requests in the trace that are replayed: reads, writes, trims, flushes.
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub flushes: u64,
    /// Requests of the trace not replayed (a capture's `other`: write-zeroes, zone commands).
    pub skipped: u64,
    /// From the trace's first request to its last, ns (of the trace's own time).
    pub span_ns: u64,
    /// The largest offset + length in the trace (bytes): a target at least this large keeps
    /// every offset; a smaller one takes them modulo its size.
    pub extent_bytes: u64,
    /// The largest request (bytes).
    pub max_len_bytes: u64,
    /// The most requests the trace had in flight (a capture's `qd`; 0 for a fio iolog, which
    /// does not say).
    pub max_qd: u32,
    /// The files the trace names (a fio iolog's, blktrace's devices; one, the device, for a
    /// capture): file N of the trace goes to file N modulo `--files` of the set.
    pub files: u32,
    /// Offsets are rounded down to this, lengths up (bytes; the target's O_DIRECT alignment).
    pub align_bytes: u64,
    /// `--like`: requests drawn from the trace's (a capture's) distributions instead of the
    /// trace itself (absent for a replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub like: Option<Like>,
    /// `--like`'s distributions, read once when the run is planned (never in a document).
    #[serde(skip)]
    #[schemars(skip)]
    pub twin: Option<TwinRef>,
}

/// `iolab run --like CAPTURE`: a synthetic twin of a captured workload (docs/capture.md, Like).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Like {
    /// `--scale`: N times the captured load: its request rate (open loop), or with `--closed`
    /// its queue depth.
    pub scale: f64,
    /// How long the twin runs (s): `--time`, else the capture's window.
    pub time_s: f64,
    /// The capture's window (s).
    pub capture_s: f64,
    /// The 1 MiB regions the capture touched: spread evenly over the target, in their order.
    pub regions_touched: u64,
    /// The device's p99 latency of the captured reads and writes (ns): `saturate --like`'s
    /// default target is twice it.
    pub captured_p99_ns: Option<u64>,
    /// `--class`: the twin of this file class's requests only (absent: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

/// A twin's distributions (`measure::twin::Twin`, a higher layer: held here opaque), shared
/// by the plan's copies of a job (equal when the same).
#[derive(Clone)]
pub struct TwinRef(pub std::sync::Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for TwinRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TwinRef")
    }
}

impl PartialEq for TwinRef {
    fn eq(&self, o: &TwinRef) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &o.0)
    }
}

/// How a replay kept to its trace, in a mode's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayResult {
    /// Requests issued (reads, writes, trims, flushes).
    pub issued: u64,
    /// The trace's span divided by `--speed`: how long the replay should take, first request
    /// to last (s).
    pub trace_s: f64,
    /// From the first request's issue to the last one's (s).
    pub replay_s: f64,
    /// `(replay_s - trace_s) / trace_s` in percent: above 0 the replay ran late (null with
    /// `--closed`, a span of 0, or a replay cut short by Ctrl-C or `--time`).
    pub timing_error_pct: Option<f64>,
    /// Requests issued more than 1 ms after their time (behind a full queue, a flush, or a
    /// thread that could not keep up); 0 with `--closed`.
    pub late_over_1ms: u64,
    /// The latest a request was issued behind its time (ns); 0 with `--closed`.
    pub max_late_ns: u64,
    /// The most requests in flight at once.
    pub max_in_flight: u32,
}
