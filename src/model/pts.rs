//! `iolab suite pts`: the SNIA Solid State Storage Performance Test Specification's client tests
//! (purge, preconditioning, the IOPS, throughput and latency tests run in rounds until steady,
//! write saturation), as one document keeping every round (docs/steady-state.md).

use serde::{Deserialize, Serialize};

/// The read/write mixes of PTS's IOPS test, percent of reads (R/W 100/0 ... 0/100).
pub const IOPS_MIXES: [u32; 7] = [100, 95, 65, 50, 35, 5, 0];
/// The block sizes of PTS's IOPS test, bytes (1024 KiB down to 0.5 KiB).
pub const IOPS_SIZES: [u64; 8] = [
    1 << 20,
    128 << 10,
    64 << 10,
    32 << 10,
    16 << 10,
    8 << 10,
    4 << 10,
    512,
];
/// The mixes of PTS's latency test.
pub const LATENCY_MIXES: [u32; 3] = [100, 65, 0];
/// The block sizes of PTS's latency test.
pub const LATENCY_SIZES: [u64; 3] = [8 << 10, 4 << 10, 512];

/// One cell of a round: an access pattern, a mix and a block size, and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PtsCell {
    /// `rnd` (random offsets) or `seq` (sequential).
    pub pattern: String,
    /// Percent of the I/Os that are reads (PTS's R/W mix: 65 is 65/35).
    pub read_pct: u32,
    /// Bytes per I/O.
    pub bs_bytes: u64,
    /// Reads and writes per second together.
    pub iops: f64,
    /// Bytes read and written per second together.
    pub bw_bytes_per_sec: f64,
    /// Mean latency of every read and write, ns.
    pub lat_mean_ns: f64,
    /// The longest read or write, ns.
    pub lat_max_ns: f64,
    /// The larger of the reads' and the writes' 99th percentile, ns.
    pub lat_p99_ns: f64,
}

impl PtsCell {
    /// `RND 4KiB 65/35`, PTS's way of naming a cell.
    pub fn name(&self) -> String {
        format!(
            "{} {} {}/{}",
            self.pattern.to_uppercase(),
            kib(self.bs_bytes),
            self.read_pct,
            100 - self.read_pct
        )
    }
}

/// `4KiB`, `0.5KiB`, `1024KiB`: PTS writes every size in KiB.
pub fn kib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{}KiB", bytes / 1024)
    } else {
        format!("{}KiB", bytes as f64 / 1024.0)
    }
}

/// The figure a test tracks to decide steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tracked {
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    BwBytesPerSec,
    /// Mean latency, ns.
    LatMeanNs,
}

impl Tracked {
    /// The cell's figure this tracks.
    pub fn of(self, c: &PtsCell) -> f64 {
        match self {
            Tracked::Iops => c.iops,
            Tracked::BwBytesPerSec => c.bw_bytes_per_sec,
            Tracked::LatMeanNs => c.lat_mean_ns,
        }
    }
}

/// The steady-state decision of one test over its rounds (SNIA PTS: a window of 5 rounds, the
/// range within 20 % and the best-fit line's excursion within 10 % of the window's average).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PtsSteady {
    /// Whether a window of rounds met both criteria (the test then ended).
    pub attained: bool,
    /// The measurement window: its first and last round, 1-based (the last rounds run when
    /// steady state was not attained; absent with fewer rounds than the window).
    pub window_first: Option<u32>,
    pub window_last: Option<u32>,
    /// The tracked figure's average over the window.
    pub window_avg: Option<f64>,
    /// The window's largest round less its smallest, percent of the average.
    pub range_pct: Option<f64>,
    /// The window's best-fit line's excursion (|slope| × (rounds − 1)), percent of the average.
    pub slope_pct: Option<f64>,
    /// The best-fit line's slope, the tracked figure's unit per round.
    pub slope: Option<f64>,
    /// The limits judged: range and excursion, percent (PTS: 20, 10).
    pub range_limit_pct: f64,
    pub slope_limit_pct: f64,
    /// Rounds in the window (PTS: 5).
    pub window_rounds: u32,
}

/// One PTS test run in rounds until steady.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PtsTest {
    /// `iops`, `throughput-128k`, `throughput-1m`, `latency`.
    pub name: String,
    /// The cell whose figure is tracked, PTS's name (`RND 4KiB 0/100`).
    pub tracked_cell: String,
    /// Which figure of it.
    pub tracked: Tracked,
    /// Threads and I/Os in flight per thread (the latency test: 1 and 1).
    pub threads: u32,
    pub iodepth: u32,
    /// Seconds each cell of a round ran.
    pub cell_s: f64,
    /// Every round's cells, in the order they ran.
    pub rounds: Vec<Vec<PtsCell>>,
    /// The tracked figure of each round.
    pub tracked_rounds: Vec<f64>,
    pub steady: PtsSteady,
    /// Each cell averaged over the measurement window (the report's tables and plots).
    pub window: Vec<PtsCell>,
}

/// One round of write saturation: 4 KiB random writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WsatRound {
    /// Seconds from the test's start to the round's end.
    pub elapsed_s: f64,
    pub iops: f64,
    pub lat_mean_ns: f64,
    /// Bytes written by this round and every round before (PTS's total gigabytes written).
    pub written_total_bytes: u64,
}

/// PTS's write saturation test: 4 KiB random writes until four times the capacity is written
/// or its time is up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Wsat {
    pub round_s: f64,
    /// What it writes before it ends: four times the capacity.
    pub target_bytes: u64,
    /// The most seconds it runs (PTS: 24 h).
    pub max_s: f64,
    /// Whether `target_bytes` were written.
    pub reached: bool,
    pub rounds: Vec<WsatRound>,
}

/// How the target was purged before the tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Purge {
    /// `secure discard` (BLKSECDISCARD), `discard` (BLKDISCARD); absent when not purged.
    pub method: Option<String>,
    /// What was done, or why it was not.
    pub note: String,
}

/// PTS's workload-independent preconditioning: 128 KiB sequential writes over twice the
/// capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Precondition {
    pub bytes_written: u64,
    pub seconds: f64,
    pub bw_bytes_per_sec: f64,
}

/// What the suite ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PtsSettings {
    pub engine: String,
    pub threads: u32,
    pub iodepth: u32,
    /// Seconds each cell of a round runs (PTS: 60).
    pub cell_s: f64,
    /// The most rounds of a test (PTS: 25).
    pub max_rounds: u32,
    /// `--quick`: scaled to minutes (shorter cells, fewer rounds, a shorter write saturation).
    pub quick: bool,
    /// Every I/O with O_DIRECT (PTS bypasses the host's caches).
    pub direct: bool,
}

/// `iolab suite pts`'s document (`iolab-pts/1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PtsResult {
    /// The device or the test file's directory.
    pub target: String,
    /// "block device" or "file".
    pub kind: String,
    /// The bytes tested (PTS's user capacity: the device's range, or the test file).
    pub capacity_bytes: u64,
    pub settings: PtsSettings,
    pub purge: Purge,
    /// Absent when the suite stopped before it.
    pub precondition: Option<Precondition>,
    pub tests: Vec<PtsTest>,
    pub wsat: Option<Wsat>,
    /// What was left out and why (block sizes below the device's logical block size).
    pub notes: Vec<String>,
    /// Stopped early (Ctrl-C): what ran is kept.
    pub interrupted: bool,
}

impl PtsResult {
    /// One cell per test and cell of its measurement window, mode `TEST CELL` (`iops RND 4KiB
    /// 65/35`), op `read` (100/0), `write` (0/100) or `rw`; the window's averages; `ops` and
    /// `bytes` what those rates move over the window's rounds (rate × cell seconds × rounds).
    /// Write saturation is left out (its rounds are a curve, not a cell).
    pub fn metric_rows(&self) -> Vec<crate::model::suite::SuiteMetric> {
        let mut out = Vec::new();
        for t in &self.tests {
            let rounds = match (t.steady.window_first, t.steady.window_last) {
                (Some(a), Some(b)) => (b + 1 - a) as f64,
                _ => t.rounds.len() as f64,
            };
            let secs = rounds * t.cell_s;
            for c in &t.window {
                out.push(crate::model::suite::SuiteMetric {
                    mode: format!("{} {}", t.name, c.name()),
                    op: match c.read_pct {
                        100 => "read",
                        0 => "write",
                        _ => "rw",
                    },
                    threads: Some(t.threads),
                    bs_bytes: Some(c.bs_bytes),
                    ops: (c.iops * secs).round() as u64,
                    bytes: (c.bw_bytes_per_sec * secs).round() as u64,
                    iops: c.iops,
                    bytes_per_sec: c.bw_bytes_per_sec,
                    lat_mean_ns: Some(c.lat_mean_ns),
                    lat_max_ns: Some(c.lat_max_ns),
                });
            }
        }
        out
    }
}
