//! The latency summary every iolab document uses (runs, database runs, the fsync probe), and
//! its partial form for imports, where a tool may not report every figure.

use crate::model::hist::{LatHist, PERCENTILES};
use serde::{Deserialize, Serialize};

/// Latency summary in nanoseconds: `lat_ns` in every document (docs/results.md).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LatSummary {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
    pub stddev: f64,
    pub p50: u64,
    /// (database documents stored before iolab kept p90, p99.9 and p99.99 read them as 0)
    #[serde(default)]
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    #[serde(default)]
    pub p99_9: u64,
    #[serde(default)]
    pub p99_99: u64,
}

impl LatSummary {
    /// The summary of a histogram; None when it is empty.
    pub fn from_hist(h: &LatHist) -> Option<LatSummary> {
        if h.count() == 0 {
            return None;
        }
        let p: Vec<u64> = PERCENTILES.iter().map(|(q, _)| h.percentile(*q)).collect();
        Some(LatSummary {
            min: h.h.min(),
            mean: h.h.mean(),
            max: h.h.max(),
            stddev: h.h.stdev(),
            p50: p[0],
            p90: p[1],
            p95: p[2],
            p99: p[3],
            p99_9: p[4],
            p99_99: p[5],
        })
    }

    /// min, mean, max, stddev, p50, p90, p95, p99, p99.9, p99.99: the store's latency columns.
    pub fn columns(&self) -> [Option<f64>; 10] {
        ReportedLat::from(self).columns()
    }
}

/// A latency summary as another tool reported it (imports): the same fields, in ns, each None
/// where the tool does not report it (sysbench has no p50, fio no p99.99 without json+ ...).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ReportedLat {
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

impl ReportedLat {
    pub fn is_empty(&self) -> bool {
        *self == ReportedLat::default()
    }

    /// min, mean, max, stddev, p50, p90, p95, p99, p99.9, p99.99: the store's latency columns.
    pub fn columns(&self) -> [Option<f64>; 10] {
        [
            self.min,
            self.mean,
            self.max,
            self.stddev,
            self.p50,
            self.p90,
            self.p95,
            self.p99,
            self.p99_9,
            self.p99_99,
        ]
    }
}

impl From<&LatSummary> for ReportedLat {
    fn from(l: &LatSummary) -> ReportedLat {
        ReportedLat {
            min: Some(l.min as f64),
            mean: Some(l.mean),
            max: Some(l.max as f64),
            stddev: Some(l.stddev),
            p50: Some(l.p50 as f64),
            p90: Some(l.p90 as f64),
            p95: Some(l.p95 as f64),
            p99: Some(l.p99 as f64),
            p99_9: Some(l.p99_9 as f64),
            p99_99: Some(l.p99_99 as f64),
        }
    }
}
