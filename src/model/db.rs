//! The `iolab db` document (schema `iolab-db/1`, docs/db.md): what was run against which
//! database, transactions per second, latencies, the server's storage settings.

use crate::model::hist::LatHist;
use crate::model::run::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        }
    }
}

/// The workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    UpdateLoop,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    ReadWrite,
}

impl std::str::FromStr for Test {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Test, String> {
        Ok(match s {
            "update-loop" => Test::UpdateLoop,
            "point-select" => Test::PointSelect,
            "update-index" => Test::UpdateIndex,
            "update-non-index" => Test::UpdateNonIndex,
            "insert" => Test::Insert,
            "read-write" => Test::ReadWrite,
            _ => {
                return Err(format!(
                    "'{s}' is not a test: use update-loop, point-select, update-index, update-non-index, insert or read-write"
                ));
            }
        })
    }
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::UpdateLoop => "update-loop",
            Test::PointSelect => "point-select",
            Test::UpdateIndex => "update-index",
            Test::UpdateNonIndex => "update-non-index",
            Test::Insert => "insert",
            Test::ReadWrite => "read-write",
        }
    }
}

/// SQLite settings exposed as options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SqliteOpts {
    pub journal_mode: String,
    pub synchronous: String,
    pub page_size: u32,
}

/// Everything `iolab db` resolved.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct DbJob {
    pub test: Test,
    pub backend: Backend,
    /// the URL without its password
    pub url: String,
    pub threads: u32,
    pub tables: u32,
    pub table_size: u64,
    /// "explicit" (BEGIN ... COMMIT per transaction) or "auto" (every statement commits)
    pub trx: String,
    pub time_s: Option<f64>,
    pub transactions: Option<u64>,
    pub iterations: u64,
    pub seed: u64,
    pub sqlite: Option<SqliteOpts>,
}

use crate::model::lat::LatSummary;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct TypeResult {
    pub transactions: u64,
    pub tps: f64,
    pub lat_ns: Option<LatSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct DbPoint {
    pub t_s: f64,
    pub tps: f64,
    pub qps: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
}

/// The update loop's report (the single-row autocommit UPDATE timing that exposes flush cost), in seconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct UpdateLoop {
    pub start_time: String,
    pub finish_time: String,
    pub iterations: u64,
    pub total_time_s: f64,
    pub initialisation_time_s: f64,
    pub finalisation_time_s: f64,
    pub benchmark_loop_s: f64,
    pub benchmark_sum_s: f64,
    pub min_s: f64,
    pub average_s: f64,
    pub max_s: f64,
    pub median_s: f64,
    pub stddev_s: f64,
    pub p95_s: f64,
    pub p99_s: f64,
    /// every timed update, in seconds (for recomputation and the report's histogram)
    pub timings_s: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DbDoc {
    pub schema: String,
    /// The document's id ([`crate::model::new_doc_id`]), absent in documents of an iolab before
    /// it (the store then takes a hash of the document as its id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc_id: Option<String>,
    pub iolab_version: String,
    pub start_time: String,
    pub end_time: String,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub test: String,
    pub backend: String,
    pub job: DbJob,
    /// the server's (or SQLite's) storage settings
    pub settings: BTreeMap<String, String>,
    pub duration_s: f64,
    pub tps: f64,
    pub qps: f64,
    pub transactions: u64,
    pub queries: u64,
    /// failed transactions (after retries), by message
    pub errors: u64,
    pub error_messages: BTreeMap<String, u64>,
    /// transactions rolled back and retried (deadlocks, serialization failures, busy)
    pub retries: u64,
    pub reconnects: u64,
    /// The client's own CPU time (user + system) over the measured loop, summed over its
    /// worker threads (its CPU time, as getrusage(RUSAGE_THREAD) reports it, read with
    /// clock_gettime(CLOCK_THREAD_CPUTIME_ID) at each thread's start and end of its loop),
    /// in seconds; absent for the update loop and in documents written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_s: Option<f64>,
    /// `client_cpu_s` per completed transaction, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_us_per_tx: Option<f64>,
    /// per transaction type
    pub types: BTreeMap<String, TypeResult>,
    pub timeseries: Vec<DbPoint>,
    pub update_loop: Option<UpdateLoop>,
    pub device: Option<crate::model::device::DeviceReport>,
    pub system: Option<crate::model::env::EnvReport>,
    pub warnings: Vec<Warning>,
    pub interrupted: bool,
    /// Run by several MPI ranks: each rank's document, failures; the figures above are the
    /// merge (docs/distributed.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<DbDistributed>,
    #[serde(skip)]
    pub hist: Option<LatHist>,
}

/// `dist` of an `iolab db` document run by several ranks (clients of one server, or each of
/// its own SQLite file): the document's figures are every rank's merged.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DbDistributed {
    pub ranks: u32,
    pub hosts: Vec<String>,
    pub complete: bool,
    pub failures: Vec<crate::model::dist::RankFailure>,
    /// Latest measure start minus earliest, in ms.
    pub start_spread_ms: f64,
    pub per_rank: Vec<DbRank>,
}

/// One rank of a distributed `iolab db`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DbRank {
    pub rank: u32,
    pub host: String,
    /// When this rank started and ended its transactions (its host's clock, ns since the epoch).
    pub measure_start_unix_ns: u64,
    pub measure_end_unix_ns: u64,
    /// The rank's own document (`iolab-db/1`: its TPS, latency, time series, device figures).
    pub doc: DbDoc,
    /// Its transactions' latency buckets `[[value_ns, count], ...]`.
    #[serde(default)]
    pub hist_bins: Vec<(u64, u64)>,
}
