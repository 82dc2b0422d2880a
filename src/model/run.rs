//! Result documents: what `iolab run --json` prints (schema `iolab-run/1`, docs/results.md).

use crate::model::hist::LatHist;
use crate::model::job::{FileSetSpec, Job};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Operation types that are measured separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Read = 0,
    Write = 1,
    Fsync = 2,
    /// A trim (fio's `trim` direction): a hole punched in a file
    /// (`fallocate(PUNCH_HOLE | KEEP_SIZE)`), a discard on a device (`BLKDISCARD`).
    Trim = 3,
}

/// How many kinds of operation are measured separately (the length of the per-kind arrays).
pub const OP_KINDS: usize = 4;

impl OpKind {
    pub const ALL: [OpKind; OP_KINDS] = [OpKind::Read, OpKind::Write, OpKind::Fsync, OpKind::Trim];
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Fsync => "fsync",
            OpKind::Trim => "trim",
        }
    }
}

pub use crate::model::lat::LatSummary;

/// One operation type's totals.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct OpResult {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// null when ops is 0
    pub lat_ns: Option<LatSummary>,
    /// The queue engines (io_uring, libaio): the part of `lat_ns` until the call that submitted
    /// the operation returned (fio's `slat`), absent for the other engines, which submit and
    /// complete in one call (fio writes no slat for them either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat_ns: Option<LatSummary>,
    /// Paced runs (`--rate`): the latency from the moment iolab issued each operation, as fio
    /// measures its `lat` under `rate_iops`; `lat_ns` counts from each operation's slot, so it
    /// also holds the wait behind the schedule (an earlier operation still in flight, iolab's own
    /// lateness: docs/measurement.md, Paced latency). Absent unpaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_lat_ns: Option<LatSummary>,
    /// Jobs with more than one block size (`--bs 16k:70,1m:30`, `--bs 4k-64k`): the same
    /// figures per size, ascending; absent otherwise (and for fsync). Their ops and bytes add
    /// up to the totals above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_bs: Vec<BsResult>,
}

/// One block size's share of an operation type.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct BsResult {
    pub bs_bytes: u64,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// null when ops is 0
    pub lat_ns: Option<LatSummary>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Results {
    pub read: OpResult,
    pub write: OpResult,
    pub fsync: OpResult,
    /// Trims (the trim modes: fio's `rw=trim`, `randtrim`, `trimwrite`, `randtrimwrite`):
    /// bytes are the bytes trimmed. Absent when the job trims nothing.
    #[serde(default = "OpResult::none", skip_serializing_if = "OpResult::is_none")]
    pub trim: OpResult,
}

impl OpResult {
    /// No operation at all.
    pub fn none() -> Self {
        OpResult {
            ops: 0,
            bytes: 0,
            iops: 0.0,
            bytes_per_sec: 0.0,
            lat_ns: None,
            slat_ns: None,
            issue_lat_ns: None,
            by_bs: Vec::new(),
        }
    }
    /// Whether no operation was counted (a trim figure of a job that trims nothing).
    pub fn is_none(&self) -> bool {
        self.ops == 0 && self.bytes == 0
    }
}

impl Results {
    pub fn get(&self, k: OpKind) -> &OpResult {
        match k {
            OpKind::Read => &self.read,
            OpKind::Write => &self.write,
            OpKind::Fsync => &self.fsync,
            OpKind::Trim => &self.trim,
        }
    }
}

/// CPU time of the iolab process during the measured cell. Percentages are of one CPU, so they can
/// exceed 100 with several threads (like `time` and fio's usr/sys).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Default, schemars::JsonSchema)]
pub struct Cpu {
    pub user_pct: f64,
    pub sys_pct: f64,
    pub user_s: f64,
    pub sys_s: f64,
}

/// One operation type in one second of the time series.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct TsOp {
    pub ops: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
}

/// One interval of the time series.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct TsPoint {
    /// Start of the interval, seconds after the end of the ramp.
    pub t_s: f64,
    /// Length of the interval in seconds (the last one may be shorter).
    pub dur_s: f64,
    pub read: Option<TsOp>,
    pub write: Option<TsOp>,
    pub fsync: Option<TsOp>,
    /// Trims in this interval; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<TsOp>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Warning {
    /// Stable machine-readable identifier (docs/results.md lists them).
    pub code: String,
    pub message: String,
}

impl Warning {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Warning {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// The job of one cell with the file set it ran on.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CellJob {
    #[serde(flatten)]
    pub job: Job,
    #[serde(flatten)]
    pub fileset: FileSetSpec,
}

/// One mode's measurements.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CellResult {
    pub mode: String,
    pub job: CellJob,
    /// Seconds from the end of the ramp to the moment the last thread finished (including its
    /// --fsync-end fsyncs).
    pub duration_s: f64,
    /// Seconds the rates (iops, bytes_per_sec) are computed over: the --time window when the run
    /// was time-limited and not interrupted (counting only operations that completed inside it),
    /// else `duration_s`.
    pub window_s: f64,
    pub results: Results,
    /// With `--rate`: how late iolab itself issued each read or write behind its scheduled
    /// start (the pacer's lateness, counted in `lat_ns` too); null when not paced.
    #[serde(default)]
    pub schedule_lag_ns: Option<LatSummary>,
    pub cpu: Cpu,
    pub timeseries: Vec<TsPoint>,
    /// Failed operations by error name ("EIO", "short I/O", ...).
    pub errors: BTreeMap<String, u64>,
    /// Percent of the file set found in the page cache after eviction, just before this cell.
    pub cache_resident_pct_at_start: f64,
    pub warnings: Vec<Warning>,
    pub interrupted: bool,
    /// What the devices under --dir did meanwhile (iostat -x figures), when they could be found.
    #[serde(default)]
    pub device: Option<crate::model::device::DeviceReport>,
    /// Runs with concurrent roles (`--role`, `--profile db`): each role's own measurements, in
    /// the order given; absent otherwise. The cell's `results` are then the totals of all roles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleResult>,
    /// `--verify`: blocks checked and mismatches by kind (docs/verify.md); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::model::verify::VerifyResult>,
    /// fio's steady state (a job file's `ss`): what each judged unit found, the job's
    /// reporting group (one) or each of its threads (fio's clones) in order; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steady: Vec<crate::model::steady::SteadyState>,
    /// fio's `latency_target` (a job file's): the I/Os in flight each thread's queue-depth
    /// search ended at (the deepest of the job's threads); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
    /// `--replay`: how the replay kept to its trace's time; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::model::replay::ReplayResult>,
    /// The merged latency histograms (read, write, fsync), kept for the results store; not part
    /// of the JSON document.
    #[serde(skip)]
    pub lat_hists: Vec<LatHist>,
    /// Each thread of a job of several on its own (fio's `numjobs` clones, one row each in fio
    /// JSON without `group_reporting`), from a fresh run; empty for one thread, in a document
    /// read back, and for roles.
    #[serde(skip)]
    pub clones: Vec<CellResult>,
    /// The queue engines: the completion latencies (from submission, fio's `clat`), as
    /// `lat_hists`, for the fio JSON; empty otherwise and in documents read back.
    #[serde(skip)]
    pub clat_hists: Vec<LatHist>,
}

impl CellResult {
    pub fn total_errors(&self) -> u64 {
        self.errors.values().sum()
    }

    /// The role `r` of the phase `phase` as a cell of its own: its job, results, time series,
    /// errors and histograms, the phase's CPU, device and page-cache figures.
    pub fn of_role(phase: &CellResult, r: &RoleResult) -> CellResult {
        CellResult {
            mode: r.mode.clone(),
            job: r.job.clone(),
            duration_s: r.duration_s,
            window_s: r.window_s,
            results: r.results.clone(),
            schedule_lag_ns: r.schedule_lag_ns.clone(),
            cpu: phase.cpu.clone(),
            timeseries: r.timeseries.clone(),
            errors: r.errors.clone(),
            cache_resident_pct_at_start: phase.cache_resident_pct_at_start,
            warnings: r.warnings.clone(),
            interrupted: phase.interrupted,
            device: phase.device.clone(),
            verify: None,
            steady: r.steady.clone(),
            latency_depth: r.latency_depth,
            replay: r.replay.clone(),
            roles: Vec::new(),
            lat_hists: r.lat_hists.clone(),
            clones: Vec::new(),
            clat_hists: r.clat_hists.clone(),
        }
    }
}

/// One role of a phase with concurrent roles: its own job, file set and results, measured over
/// the same window as the other roles (docs/results.md, docs/roles.md).
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RoleResult {
    pub name: String,
    pub mode: String,
    pub job: CellJob,
    pub duration_s: f64,
    pub window_s: f64,
    pub results: Results,
    #[serde(default)]
    pub schedule_lag_ns: Option<LatSummary>,
    pub timeseries: Vec<TsPoint>,
    pub errors: BTreeMap<String, u64>,
    pub warnings: Vec<Warning>,
    /// fio's steady state (a job file's `ss`): what each judged unit found, the job's
    /// reporting group (one) or each of its threads (fio's clones) in order; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steady: Vec<crate::model::steady::SteadyState>,
    /// As [`CellResult::latency_depth`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
    /// As [`CellResult::replay`]: a role of `--like`'s roles per file class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::model::replay::ReplayResult>,
    /// As [`CellResult::lat_hists`], for the results store.
    #[serde(skip)]
    pub lat_hists: Vec<LatHist>,
    /// As [`CellResult::clat_hists`].
    #[serde(skip)]
    pub clat_hists: Vec<LatHist>,
}

impl RoleResult {
    /// The role's part of a phase, from the cell its statistics alone would make.
    pub fn from_cell(name: &str, c: CellResult) -> RoleResult {
        RoleResult {
            name: name.to_string(),
            mode: c.mode,
            job: c.job,
            duration_s: c.duration_s,
            window_s: c.window_s,
            results: c.results,
            schedule_lag_ns: c.schedule_lag_ns,
            timeseries: c.timeseries,
            errors: c.errors,
            warnings: c.warnings,
            steady: c.steady,
            latency_depth: c.latency_depth,
            replay: c.replay,
            lat_hists: c.lat_hists,
            clat_hists: c.clat_hists,
        }
    }
}

/// The measured cells one by one: a phase of concurrent roles as one cell per role, with the
/// role's name (its CPU figures are the whole phase's), every other cell as it is, without a
/// name. The results store numbers its cells (metrics, histograms) in this order.
pub fn flat_cells(cells: &[CellResult]) -> Vec<(Option<String>, CellResult)> {
    let mut out = Vec::new();
    for c in cells {
        if c.roles.is_empty() {
            out.push((None, c.clone()));
            continue;
        }
        for r in &c.roles {
            let rc = CellResult::of_role(c, r);
            out.push((Some(r.name.clone()), rc));
        }
    }
    out
}

/// Facts about where the run happened, recorded with every run.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RunEnv {
    pub host: String,
    pub kernel: String,
    pub fs_type: String,
    /// Block device under --dir (whole disk name), when found.
    pub device: Option<String>,
    pub device_rotational: Option<bool>,
    pub device_link: Option<String>,
    pub mem_total_bytes: Option<u64>,
    pub dio_mem_align_bytes: u64,
    pub dio_offset_align_bytes: u64,
    /// The cgroup I/O limits on iolab's process when the run started (as `system.cgroup_io`),
    /// which the honesty check compares iolab's counts with; absent when none is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cgroup_io: Vec<crate::model::env::CgroupIoLimit>,
}

/// What prepare did before the first cell.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Default, schemars::JsonSchema)]
pub struct PrepareInfo {
    pub written_bytes: u64,
    pub reused_files: u32,
    pub seconds: f64,
    pub direct: bool,
    /// Percent of the set still in the page cache after fsync + POSIX_FADV_DONTNEED (mincore).
    pub cache_resident_pct_after_evict: f64,
}

/// The whole document of one `iolab run`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RunDoc {
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
    pub env: RunEnv,
    /// The `iolab env` snapshot for --dir taken when the run started (schema iolab-env/1).
    #[serde(default)]
    pub system: Option<crate::model::env::EnvReport>,
    pub prepare: PrepareInfo,
    /// Warnings about the run as a whole (each cell also has its own).
    pub warnings: Vec<Warning>,
    pub interrupted: bool,
    pub runs: Vec<CellResult>,
    /// A distributed run (MPI): each rank's figures, failures and stonewall figures; the
    /// document's `results` are then the merge of every rank's (docs/distributed.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<Distributed>,
}

impl RunDoc {
    /// Reads back a document that [`RunDoc::to_json`] produced.
    pub fn from_json(v: &serde_json::Value) -> Result<RunDoc, serde_json::Error> {
        let mut v = v.clone();
        let obj = v
            .as_object_mut()
            .ok_or_else(|| serde::de::Error::custom("not an object"))?;
        if !obj.contains_key("runs") {
            // single mode: the cell's fields are at the top level
            let mut cell = serde_json::Map::new();
            for k in [
                "mode",
                "job",
                "duration_s",
                "window_s",
                "results",
                "schedule_lag_ns",
                "cpu",
                "timeseries",
                "errors",
                "cache_resident_pct_at_start",
                "device",
                "roles",
            ] {
                if let Some(x) = obj.remove(k) {
                    cell.insert(k.into(), x);
                }
            }
            cell.insert("warnings".into(), serde_json::json!([]));
            cell.insert(
                "interrupted".into(),
                obj.get("interrupted")
                    .cloned()
                    .unwrap_or(serde_json::json!(false)),
            );
            obj.insert(
                "runs".into(),
                serde_json::Value::Array(vec![serde_json::Value::Object(cell)]),
            );
        } else {
            obj.remove("job");
        }
        serde_json::from_value(v)
    }

    /// The JSON document: every cell in `runs[]`, whatever their number (the place scripts
    /// read); with a single mode, the cell's `mode`, `job`, `results`, `cpu`, `timeseries`, ...
    /// sit at the top level too, as before `runs[]` was always written (kept for scripts that
    /// read them there).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("serializable");
        let obj = v.as_object_mut().expect("object");
        let mut all_w: Vec<serde_json::Value> = serde_json::to_value(&self.warnings)
            .unwrap()
            .as_array()
            .unwrap()
            .clone();
        for c in &self.runs {
            for w in &c.warnings {
                let wv = serde_json::to_value(w).unwrap();
                if !all_w.contains(&wv) {
                    all_w.push(wv);
                }
            }
        }
        obj.insert("warnings".into(), serde_json::Value::Array(all_w));
        if self.runs.len() == 1 {
            if let Some(serde_json::Value::Object(c)) = obj["runs"].get(0).cloned() {
                for (k, val) in c {
                    if k != "warnings" && k != "interrupted" {
                        obj.insert(k, val);
                    }
                }
            }
        } else {
            let modes: Vec<String> = self.runs.iter().map(|c| c.mode.clone()).collect();
            let mut job = serde_json::Map::new();
            if let Some(c) = self.runs.first() {
                job = serde_json::to_value(&c.job.fileset)
                    .unwrap()
                    .as_object()
                    .unwrap()
                    .clone();
            }
            job.insert("modes".into(), serde_json::to_value(modes).unwrap());
            obj.insert("job".into(), serde_json::Value::Object(job));
        }
        v
    }
}

/// `dist` of a run document (absent for a run of one process).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Distributed {
    /// Processes the run was started with.
    pub ranks: u32,
    /// Host name of each rank, in rank order.
    pub hosts: Vec<String>,
    /// Every rank measured every cell: false when one failed or was interrupted (the merged
    /// figures then hold what the others measured).
    pub complete: bool,
    /// The ranks that failed, and why.
    pub failures: Vec<crate::model::dist::RankFailure>,
    /// One per cell (`runs[i]`), in order.
    pub stonewall: Vec<crate::model::dist::Stonewall>,
    /// What each rank measured, in rank order (the ranks that failed before measuring anything
    /// are only in `failures`).
    pub per_rank: Vec<RankRun>,
}

/// One rank's run: where it ran and what it measured.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankRun {
    pub rank: u32,
    pub host: String,
    pub env: RunEnv,
    /// This host's `iolab env` snapshot.
    #[serde(default)]
    pub system: Option<crate::model::env::EnvReport>,
    pub prepare: PrepareInfo,
    pub interrupted: bool,
    pub cells: Vec<RankCell>,
}

/// One cell of one rank.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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
