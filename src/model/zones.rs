//! `iolab zones` results: read throughput across a device or file, zone by zone.

use serde::{Deserialize, Serialize};

/// One zone's read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZoneStat {
    /// 0-based, from the start of the target.
    pub index: u32,
    /// Where the zone starts, bytes.
    pub offset_bytes: u64,
    /// `offset_bytes` / target size × 100.
    pub offset_pct: f64,
    /// Bytes read in the zone.
    pub bytes: u64,
    /// MiB/s (MiB = 2²⁰ bytes).
    pub mib_per_sec: f64,
    /// Mean latency of one `bs` read, ms.
    pub lat_ms_mean: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZonesResult {
    pub target: String,
    /// "block device" or "regular file".
    pub kind: String,
    pub size_bytes: u64,
    /// Bytes per read (`bs` in `iolab-zones/1`).
    #[serde(alias = "bs")]
    pub bs_bytes: u64,
    /// Bytes read per zone after clamping (the last zone reads on to the end).
    pub per_zone_bytes: u64,
    /// Read with O_DIRECT (else buffered, see `notes`).
    pub direct: bool,
    /// What was changed from the request and why.
    pub notes: Vec<String>,
    pub zones: Vec<ZoneStat>,
    /// First zone MiB/s / last zone MiB/s (outer vs inner tracks); None with fewer than 2 zones.
    pub first_last_ratio: Option<f64>,
    /// Stopped early: `zones` holds the zones read before.
    pub interrupted: bool,
}

impl ZonesResult {
    /// One cell per zone read, mode `zone NN` (the 0-based index, two digits), op `read`, one
    /// thread, `bs_bytes` = bs; `bytes` as read, `ops` = bytes / bs rounded up (the reads, the
    /// last one possibly short), `bytes_per_sec` = MiB/s × 1048576, `iops` = ops over the same
    /// time, `lat_mean_ns` = mean latency ms × 10⁶.
    pub fn metric_rows(&self) -> Vec<crate::model::suite::SuiteMetric> {
        self.zones
            .iter()
            .map(|z| {
                let bytes_per_sec = z.mib_per_sec * 1_048_576.0;
                let ops = if self.bs_bytes > 0 {
                    z.bytes.div_ceil(self.bs_bytes)
                } else {
                    0
                };
                crate::model::suite::SuiteMetric {
                    mode: format!("zone {:02}", z.index),
                    op: "read",
                    threads: Some(1),
                    bs_bytes: Some(self.bs_bytes),
                    ops,
                    bytes: z.bytes,
                    iops: if z.bytes > 0 {
                        ops as f64 * bytes_per_sec / z.bytes as f64
                    } else {
                        0.0
                    },
                    bytes_per_sec,
                    lat_mean_ns: Some(z.lat_ms_mean * 1e6),
                    lat_max_ns: None,
                }
            })
            .collect()
    }
}
