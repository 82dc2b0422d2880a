//! Results imported from other tools (fio JSON / json+, sysbench fileio text), normalized.

use serde::{Deserialize, Serialize};

/// Latency summary in nanoseconds; None where the tool does not report it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Lat {
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub max: Option<f64>,
    pub stddev: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub p99_9: Option<f64>,
    pub p99_99: Option<f64>,
}

impl Lat {
    pub fn is_empty(&self) -> bool {
        *self == Lat::default()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpSummary {
    /// "read", "write", "trim" (fio), "fsync", or "events" (sysbench's latency covers all
    /// operations together)
    pub op: String,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub lat_ns: Option<Lat>,
    /// Latency histogram rebuilt from fio json+ `clat_ns.bins` / `lat_ns.bins` (value_ns -> count), when present.
    /// Serialized as a list of [value_ns, count] pairs; None otherwise.
    pub hist_bins: Option<Vec<(u64, u64)>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cell {
    /// The tool's job name (fio job name; "fileio" for sysbench)
    pub name: String,
    /// iolab mode name when it maps (seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw), else the tool's own (e.g. fio "trim")
    pub mode: String,
    pub threads: u32,
    pub iodepth: u32,
    pub bs_bytes: u64,
    pub direct: bool,
    /// engine as the tool names it ("psync", "io_uring", "libaio", "sync" for sysbench's synchronous mode, "mmap" ...)
    pub engine: String,
    pub duration_s: f64,
    pub ops: Vec<OpSummary>,
    /// the job's own options as the tool printed them (fio: job options merged over global options; sysbench: the "Running the test with following options" block as key/value strings)
    pub options: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Imported {
    /// "fio" or "sysbench"
    pub tool: String,
    /// e.g. "fio-3.33", "1.0.20"
    pub tool_version: String,
    /// RFC 3339 when the tool recorded it (fio "time"/"timestamp"), else None
    pub start_time: Option<String>,
    /// fio "global options"; sysbench: same as the cell options
    pub options: serde_json::Value,
    pub cells: Vec<Cell>,
}
