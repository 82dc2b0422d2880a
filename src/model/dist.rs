//! A distributed run (`mpirun -np N iolab run ...`, docs/distributed.md): which ranks failed and
//! the stonewall figures, shared by the `dist` part of a run document ([`crate::model::run`]'s
//! `Distributed`, with what each rank measured) and of an `iolab db` document
//! ([`crate::model::db`]'s `DbDistributed`). The merged figures themselves are the documents'
//! own results (histograms added, never averaged).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RankFailure {
    pub rank: u32,
    pub host: String,
    pub error: String,
}

/// Aggregate rates until the first rank finished its measured window and until the last
/// (IOR's and elbencho's stonewall figures): a large gap means some ranks (hosts) were slower.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
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
