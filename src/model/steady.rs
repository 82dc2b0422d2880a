//! fio's steady state (`ss`, `ss_dur`, `ss_ramp`): what a job judges ([`Steady`], a field of its
//! `Timing` that job files set) and what it found ([`SteadyState`], beside the job's results in
//! the run document and in its fio JSON's `steadystate`). The criteria themselves are
//! `measure::steady`'s pure functions; the sampling is `engine::steady`'s.

use serde::Serialize;

/// What one steady-state sample is: the job's I/Os or bytes per second (reads, writes and trims
/// together, as fio's `io_blocks` and `io_bytes`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SteadyMetric {
    Iops,
    Bw,
}

/// fio's steady-state criterion of a job (steadystate.c): one sample per second, a rolling
/// window of the last `window_s` of them, judged each second once it is full; the job ends as
/// soon as the criterion holds.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Steady {
    pub metric: SteadyMetric,
    /// `iops_slope`/`bw_slope`: the window's least-squares slope (per second) must stay within
    /// the limit; else (`iops`/`bw`) its largest deviation from its mean.
    pub slope: bool,
    /// The limit the criterion must be under: a percentage of the window's mean with `pct`,
    /// else in the metric's unit (I/Os per second, bytes per second; per second for a slope).
    pub limit: f64,
    /// `ss=...:N%`: the limit is a percentage of the window's mean.
    pub pct: bool,
    /// `ss_dur`: the window, whole seconds (fio truncates it).
    pub window_s: u64,
    /// `ss_ramp`: seconds after the job's start before the first sample (taken a second later,
    /// as fio's).
    pub ramp_s: f64,
    /// With `group_reporting`: fio's reporting group (`groupid`), whose jobs are judged as one
    /// (their samples summed) and end together. Absent: each thread (fio's clone) on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u64>,
    /// `--steady-state`: SNIA PTS's two criteria, both over the window of rounds, in place of
    /// fio's one (`slope`, `limit` and `pct` are then unused). Absent for fio's `ss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pts: Option<Pts>,
    /// Seconds per sample (a PTS round): 1 for fio's `ss` (its `STEADYSTATE_MSEC`), `--round`
    /// for `--steady-state`. `window_s` counts samples of this length.
    #[serde(default = "one_s", skip_serializing_if = "is_one_s")]
    pub round_s: f64,
}

fn one_s() -> f64 {
    1.0
}

fn is_one_s(s: &f64) -> bool {
    *s == 1.0
}

/// SNIA PTS's steady-state criteria over a window of rounds, each a percent of the window's
/// average of the tracked variable; both must hold (inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Pts {
    /// The data excursion (the largest round less the smallest) at most this percent (PTS: 20).
    pub range_pct: f64,
    /// The best-fit line's excursion over the window (|slope| × (rounds − 1)) at most this
    /// percent (PTS: 10).
    pub slope_pct: f64,
}

impl Pts {
    /// The specification's own figures: 20 % and 10 %.
    pub const SNIA: Pts = Pts {
        range_pct: 20.0,
        slope_pct: 10.0,
    };
}

impl Steady {
    /// fio's spelling of the criterion (its JSON's `ss`): `iops:10.000000%`,
    /// `bw_slope:1048576.000000`.
    pub fn fio_spelling(&self) -> String {
        let m = match self.metric {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Bw => "bw",
        };
        format!(
            "{m}{}:{:.6}{}",
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }
}

/// What one judged unit (a reporting group, or one thread) found.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SteadyState {
    /// Whether the criterion held (the unit's threads then ended).
    pub attained: bool,
    /// Seconds from the job's start to the sample that attained it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attained_at_s: Option<f64>,
    /// The last criterion judged (0 before the window was full): percent of the window's mean
    /// with `pct`, else in the metric's unit.
    pub criterion: f64,
    /// The largest deviation from the window's mean (I/Os or bytes per second; 0 for a slope
    /// criterion, as fio's).
    pub max_deviation: f64,
    /// The window's least-squares slope (per second, of I/Os or bytes per second; 0 for a
    /// deviation criterion, as fio's).
    pub slope: f64,
    /// The window's samples, oldest first (zeros after the last when fewer were taken): I/Os per
    /// second.
    pub iops: Vec<u64>,
    /// The same samples' bytes per second.
    pub bw_bytes_per_sec: Vec<u64>,
    /// Every sample taken (each round's I/Os per second), oldest first; `iops` keeps only the
    /// last window, as fio's JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds_iops: Vec<u64>,
    /// Every sample's bytes per second, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds_bw_bytes_per_sec: Vec<u64>,
    /// `--steady-state`: the last full window's data excursion (largest round less smallest) as
    /// a percent of its average; absent for fio's `ss` or before the window was full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_pct: Option<f64>,
    /// `--steady-state`: the last full window's best-fit line excursion (|slope| × (rounds − 1))
    /// as a percent of its average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_pct: Option<f64>,
    /// `--steady-state`: the last full window's average of the tracked variable (I/Os or bytes
    /// per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_avg: Option<f64>,
}

impl SteadyState {
    /// fio's `data.iops_mean` / `bw_mean`: the window's sum over its length, whole numbers.
    pub fn means(&self) -> (u64, u64) {
        let m = |v: &[u64]| {
            let n = v.len().max(1) as u64;
            v.iter().sum::<u64>() / n
        };
        (m(&self.iops), m(&self.bw_bytes_per_sec))
    }
}
