//! What a thread of fio's engines that do no I/O does instead (fio's `FIO_NOIO` engines, set by
//! a job file's `ioengine=cpuio` or `ioengine=exec`; docs/fio-jobs.md, "Engines without I/O").
//! Each thread repeats a cycle of the engine's own, which fio counts as one read of 0 bytes
//! (its latency is the cycle's), and pauses between cycles; no file is made or opened.

use serde::Serialize;

/// The work of a `cpuio` or `exec` job's threads. Absent from documents of other runs.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoIo {
    /// fio's `cpuio`: each cycle keeps the thread busy for `chunk_us` (noop) or one round of
    /// sorts (qsort), then sleeps so that busy time is `load_pct` % of the thread's time.
    Cpu(CpuLoad),
    /// fio's `exec`: thread 0 starts `program` once, then checks on it every 50 ms until the
    /// job's runtime has passed, sends it SIGTERM, waits `grace_s`, and SIGKILLs it.
    Exec(ExecProgram),
}

/// fio's `cpuio` options.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CpuLoad {
    /// `cpuload`: the share of each thread's time spent busy (1..=100 %).
    pub load_pct: u32,
    /// `cpuchunks`: how long one busy cycle spins (µs; fio's default 50000). With `qsort` the
    /// first cycle's length; each later one takes as long as its sorts take.
    pub chunk_us: u64,
    /// `cpumode=qsort`: each cycle sorts 256 Ki 32-bit numbers four times, as fio's (else
    /// `noop`: spins on the clock).
    pub qsort: bool,
}

/// fio's `exec` options.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ExecProgram {
    /// `program` and `arguments`, split on spaces as fio splits them, `%r` (the runtime in
    /// seconds) and `%n` (the job's name) replaced: the program first.
    pub argv: Vec<String>,
    /// `grace_time`: seconds between SIGTERM and SIGKILL (fio's default 1).
    pub grace_s: u64,
    /// `std_redirect` (fio's default on): the program's standard output and error go to
    /// `NAME.stdout` and `NAME.stderr` in the directory iolab runs in (else they are iolab's).
    pub redirect: Option<String>,
    /// The folder `NAME.stdout` and `NAME.stderr` go to (the current directory, as fio's).
    pub redirect_dir: std::path::PathBuf,
}
