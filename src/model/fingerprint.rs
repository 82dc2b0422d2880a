//! `iolab fingerprint CAPTURE`: what a captured workload does to its device, as distributions
//! (`iolab-fingerprint/1`, docs/capture.md): the mix, sizes, sequentiality, arrivals,
//! concurrency, flushes, the hot set and the device's latency while it ran.

use crate::model::lat::LatSummary;
use serde::{Deserialize, Serialize};

/// A value and how many requests had it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Share {
    /// Bytes (sizes), or requests in flight (queue depth).
    pub value: u64,
    pub count: u64,
    /// Percent of the direction's requests (of every request for the queue depth).
    pub pct: f64,
}

/// How far a request starts from where the previous one of its direction ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeekShares {
    /// Percent starting exactly where the previous one ended (sequential).
    pub sequential_pct: f64,
    /// Percent starting forward of it by at most 1 MiB (a near skip).
    pub near_pct: f64,
    /// Percent starting further forward.
    pub forward_far_pct: f64,
    /// Percent starting before it (backwards).
    pub backward_pct: f64,
}

/// One direction's requests (read or write).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DirPrint {
    pub requests: u64,
    pub bytes: u64,
    /// Requests per second over the capture's window.
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// The sizes, most requests first (at most 16; `other_sizes_pct` holds the rest).
    pub sizes: Vec<Share>,
    pub other_sizes_pct: f64,
    /// Mean request size, bytes.
    pub mean_size_bytes: f64,
    pub seek: SeekShares,
    /// Percent of requests marked sync, FUA, preflush.
    pub sync_pct: f64,
    pub fua_pct: f64,
    pub preflush_pct: f64,
    /// The device's latency (issue to completion) of the requests that completed.
    pub lat_ns: Option<LatSummary>,
}

/// The hot set: what share of the requests went to the hottest regions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HotPoint {
    /// The hottest regions that make up this percent of the regions touched.
    pub regions_pct: f64,
    /// Received this percent of the reads and writes.
    pub requests_pct: f64,
}

/// `iolab fingerprint`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fingerprint {
    /// The capture file.
    pub capture: String,
    pub device: String,
    /// The capture's start (RFC 3339) and window, seconds.
    pub start: String,
    pub duration_s: f64,
    /// Every request of the file, by direction (read, write, discard, flush, other).
    pub requests: crate::model::capture::DirCounts,
    /// Percent of reads among reads and writes.
    pub read_pct: f64,
    pub read: DirPrint,
    pub write: DirPrint,
    /// Flush requests per second (the device's cache flushes: fsync, journal commits).
    pub flushes_per_sec: f64,
    /// Nanoseconds between one request's issue and the next one's (any direction).
    pub interarrival_ns: Option<LatSummary>,
    /// Requests in flight at issue (the device's queue depth), most requests first (at most 16).
    pub queue_depth: Vec<Share>,
    pub queue_depth_mean: f64,
    /// The size of a region of the hot-set curve, bytes (1 MiB).
    pub region_bytes: u64,
    /// Regions touched by a read or write.
    pub regions_touched: u64,
    /// The hot-set curve: the hottest 1, 5, 10, 20, 50 and 100 % of the regions touched.
    pub hot_set: Vec<HotPoint>,
    /// Requests whose completion carried an error.
    pub errors: u64,
    /// Each file class's own fingerprint (`wal`, `data`, `temp`, `other`, `unmapped`), when the
    /// capture knew the file of each request (`--dir`, `--pid`, `--cgroup`); its queue depths
    /// are the device's, its rates over the whole capture's window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassPrint>,
}

/// One file class of a capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassPrint {
    /// `wal`, `data`, `temp`, `other`, or `unmapped` (no file mapped there: the filesystem's
    /// journal and metadata, other files).
    pub class: String,
    /// Percent of the capture's requests, and of its read and written bytes.
    pub requests_pct: f64,
    pub bytes_pct: f64,
    pub fingerprint: Fingerprint,
}

impl Fingerprint {
    /// One cell per direction with requests: mode `reads` or `writes`, op `read`/`write`, the
    /// direction's mean size, requests and bytes, their rates over the window, the device's
    /// latency.
    pub fn metric_rows(&self) -> Vec<crate::model::suite::SuiteMetric> {
        [("read", &self.read), ("write", &self.write)]
            .into_iter()
            .filter(|(_, d)| d.requests > 0)
            .map(|(op, d)| crate::model::suite::SuiteMetric {
                mode: format!("{op}s"),
                op,
                threads: None,
                bs_bytes: Some(d.mean_size_bytes.round() as u64),
                ops: d.requests,
                bytes: d.bytes,
                iops: d.iops,
                bytes_per_sec: d.bytes_per_sec,
                lat_mean_ns: d.lat_ns.as_ref().map(|l| l.mean),
                lat_max_ns: d.lat_ns.as_ref().map(|l| l.max as f64),
            })
            .collect()
    }
}
