//! Experiments as stored: a sweep's axes and cells, a saturation search's target and points
//! (docs/experiments.md).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An axis: a run option and its values, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Axis {
    /// "threads", "size", "mode", "scheduler", ...
    pub name: String,
    pub values: Vec<String>,
}

/// Headline figures of one run (all modes of it together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figures {
    pub iops: f64,
    pub mibps: f64,
    /// worst p99 of reads and writes, ms
    pub p99_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_9_ms: f64,
    /// mean latency over reads and writes, ms
    pub mean_ms: f64,
    /// iolab's CPU (user + system), % of one CPU, the mean over the run's cells; 0 in figures
    /// stored before it was recorded
    #[serde(default)]
    pub cpu_pct: f64,
}

/// The definition of a sweep, stored with the experiment (enough to resume it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SweepSpec {
    pub fixed: Vec<String>,
    pub axes: Vec<Axis>,
    pub repeat: u32,
    pub rows: Option<String>,
    pub cols: Option<String>,
    pub metric: String,
}

/// `iolab together`'s axis that says whether a cell ran alone or with the other directories,
/// and its two values.
pub const LOAD: &str = "load";
pub const ALONE: &str = "alone";
pub const TOGETHER: &str = "together";

/// One finished cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CellOut {
    pub cell: BTreeMap<String, String>,
    pub run_ids: Vec<i64>,
    pub figures: Figures,
}

/// A target such as `mibps>=22`, `p99<=10ms`, `iops>=1000`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Target {
    pub metric: String,
    pub op: String,
    /// in the metric's unit (ms for latencies)
    pub value: f64,
    /// A target relative to the range's low end (`p99<=2x`): `value` is this many times the
    /// metric measured there, set once it is measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times_low_end: Option<f64>,
}

/// One evaluated point of a saturation search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Point {
    pub value: u64,
    pub run_id: i64,
    pub figures: Figures,
    pub passed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SaturateSpec {
    pub fixed: Vec<String>,
    pub axis: String,
    pub lo: u64,
    pub hi: u64,
    pub step: u64,
    pub max_steps: u32,
    pub target: Target,
}
