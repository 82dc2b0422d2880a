//! `iolab explain`: which layer limits a result, from the stored figures only (docs/explain.md).
//!
//! A pure function of a run document ([`run::explain_run`]), of a group's runs
//! ([`run::explain_group`]) or of a sweep's ([`sweep::explain_sweep`]): the workload's figures,
//! the device's iostat -x figures on the same timeline, CPU time, the environment snapshot
//! (including the cgroup I/O limits recorded at run time) and, for groups, the repetitions'
//! spread. Nothing is read from the live system or the store (the command reads the documents),
//! so a stored run is explained the same way the day after.
//!
//! The rules are a table, [`rules::RULES`] (id, layer, when it fires with its thresholds, why),
//! and one function per rule, in `rules.rs`; [`facts`] is what they read about a cell; [`run`]
//! runs the table on a run's cells, [`sweep`] compares a sweep's cells side by side.
//! [`rules::rules_markdown`] renders the table for docs/explain.md (tests/check_docs.rs keeps
//! them equal). This file holds the types of the findings (`iolab-explain/1`).

mod also;
pub mod facts;
mod overtime;
pub mod rules;
pub mod run;
pub mod sweep;

use serde::{Deserialize, Serialize};

/// The layer a finding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    PageCache,
    Device,
    QueueDepth,
    Throttle,
    Filesystem,
    Cpu,
    Flush,
    Alignment,
    Scheduler,
    Noise,
    None,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::PageCache => "page_cache",
            Layer::Device => "device",
            Layer::QueueDepth => "queue_depth",
            Layer::Throttle => "throttle",
            Layer::Filesystem => "filesystem",
            Layer::Cpu => "cpu",
            Layer::Flush => "flush",
            Layer::Alignment => "alignment",
            Layer::Scheduler => "scheduler",
            Layer::Noise => "noise",
            Layer::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

/// One finding about one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    pub layer: Layer,
    /// The rule that fired (docs/explain.md).
    pub rule: String,
    pub confidence: Confidence,
    /// The figures, with units.
    pub evidence: String,
    pub why: String,
    /// What to try next: a runnable iolab command line.
    pub next: String,
}

/// The findings of one measured cell (one mode of one run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CellExplain {
    /// The stored run the figures come from (absent for a run not saved).
    pub run_id: Option<i64>,
    pub mode: String,
    /// "4KiB, 1 thread, sync, direct"
    pub setup: String,
    /// A role of a roles phase (`--role`, `--profile db`): its name; absent for a mode's cell and
    /// for the phase's totals. Its device and CPU figures are the phase's, shared by the roles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub findings: Vec<Finding>,
}

/// What `iolab explain` prints (schema `iolab-explain/1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Explanation {
    pub schema: String,
    /// "run 12", "group g3", "this run"
    pub subject: String,
    pub cells: Vec<CellExplain>,
}

/// Whether a rule names the limit (the first that fires wins) or adds to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Limit,
    Also,
}
