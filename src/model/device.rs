//! The device's own figures (iostat -x) on the run's timeline: what a run or db document
//! embeds as `device` (docs/iostat.md).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The iostat -x figures of one device over one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Iostat {
    pub r_s: f64,
    pub w_s: f64,
    pub rkb_s: f64,
    pub wkb_s: f64,
    pub rrqm_s: f64,
    pub wrqm_s: f64,
    pub rrqm_pct: f64,
    pub wrqm_pct: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    pub aqu_sz: f64,
    pub rareq_sz_kb: f64,
    pub wareq_sz_kb: f64,
    pub svctm_ms: f64,
    pub util_pct: f64,
    pub d_s: Option<f64>,
    pub dkb_s: Option<f64>,
    pub d_await_ms: Option<f64>,
    pub f_s: Option<f64>,
    pub f_await_ms: Option<f64>,
    /// I/Os in flight at the end of the interval (pt-diskstats in_prg)
    pub in_flight: u64,
}

/// iostat's avg-cpu figures, in percent of all CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuPct {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub iowait: f64,
    pub steal: f64,
    pub idle: f64,
}

/// One interval of the device time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sample {
    /// end of the interval, seconds after the end of the ramp
    pub t_s: f64,
    pub dur_s: f64,
    pub devices: BTreeMap<String, Iostat>,
    pub cpu: CpuPct,
}

/// The device figures of one measured cell: the time series and the summary over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceReport {
    /// the devices watched: the whole stack under --dir (partition, dm/md, physical disks)
    pub devices: Vec<String>,
    pub interval_s: f64,
    /// from the end of the ramp to the end of the cell
    pub summary: Sample,
    pub timeseries: Vec<Sample>,
}
