//! A distributed run (`mpirun -np N iolab run ...`, docs/distributed.md): what each process
//! (rank) measured on its host, which ranks failed, and the stonewall figures. The merged
//! figures themselves are the run document's own `results` (histograms added, never averaged).

use crate::model::env::EnvReport;
use crate::model::run::{CellResult, PrepareInfo, RunEnv};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `dist` of a run document (absent for a run of one process).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Distributed {
    /// Processes the run was started with.
    pub ranks: u32,
    /// Host name of each rank, in rank order.
    pub hosts: Vec<String>,
    /// Every rank measured every cell: false when one failed or was interrupted (the merged
    /// figures then hold what the others measured).
    pub complete: bool,
    /// The ranks that failed, and why.
    pub failures: Vec<RankFailure>,
    /// One per cell (`runs[i]`), in order.
    pub stonewall: Vec<Stonewall>,
    /// What each rank measured, in rank order (the ranks that failed before measuring anything
    /// are only in `failures`).
    pub per_rank: Vec<RankRun>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankFailure {
    pub rank: u32,
    pub host: String,
    pub error: String,
}

/// Aggregate rates until the first rank finished its measured window and until the last
/// (IOR's and elbencho's stonewall figures): a large gap means some ranks (hosts) were slower.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stonewall {
    /// Latest measure start minus earliest, in ms (how together the ranks started).
    pub start_spread_ms: f64,
    /// The rank that finished first.
    pub first_rank: u32,
    /// Seconds from the earliest measure start to the first rank's end and to the last's.
    pub first_finished_s: f64,
    pub last_finished_s: f64,
    /// Reads and writes of every rank until the first one finished, per second of that span
    /// (each rank's count taken from its time series up to that instant).
    pub iops_until_first: f64,
    pub bytes_per_sec_until_first: f64,
    /// Every rank's reads and writes, per second until the last one finished.
    pub iops_until_last: f64,
    pub bytes_per_sec_until_last: f64,
}

/// `dist` of an `iolab db` document run by several ranks (clients of one server, or each of
/// its own SQLite file): the document's figures are every rank's merged.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DbDistributed {
    pub ranks: u32,
    pub hosts: Vec<String>,
    pub complete: bool,
    pub failures: Vec<RankFailure>,
    /// Latest measure start minus earliest, in ms.
    pub start_spread_ms: f64,
    pub per_rank: Vec<DbRank>,
}

/// One rank of a distributed `iolab db`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DbRank {
    pub rank: u32,
    pub host: String,
    /// When this rank started and ended its transactions (its host's clock, ns since the epoch).
    pub measure_start_unix_ns: u64,
    pub measure_end_unix_ns: u64,
    /// The rank's own document (`iolab-db/1`: its TPS, latency, time series, device figures).
    pub doc: crate::model::db::DbDoc,
    /// Its transactions' latency buckets `[[value_ns, count], ...]`.
    #[serde(default)]
    pub hist_bins: Vec<(u64, u64)>,
}

/// One rank's run: where it ran and what it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankRun {
    pub rank: u32,
    pub host: String,
    pub env: RunEnv,
    /// This host's `iolab env` snapshot.
    #[serde(default)]
    pub system: Option<EnvReport>,
    pub prepare: PrepareInfo,
    pub interrupted: bool,
    pub cells: Vec<RankCell>,
}

/// One cell of one rank.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankCell {
    /// The measured window on this host's wall clock, nanoseconds since the Unix epoch.
    pub measure_start_unix_ns: u64,
    pub measure_end_unix_ns: u64,
    /// The cell as this rank measured it (its device figures included).
    pub cell: CellResult,
    /// Each operation's latency histogram: `op -> [[value_ns, count], ...]` (the buckets'
    /// highest values), so the merge can be checked or redone.
    #[serde(default)]
    pub hist_bins: BTreeMap<String, Vec<(u64, u64)>>,
}
