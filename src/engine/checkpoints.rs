//! Points where the runner waits for the other processes of a distributed run (MPI ranks,
//! docs/distributed.md) before a phase starts. A run on one machine uses [`Solo`], which waits
//! for nothing. Every call happens between phases, never on the hot path.

use std::time::SystemTime;

/// The phases every process starts together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkpoint {
    /// Before a cell's file set is prepared (written, completed or laid out).
    Prepare,
    /// Before the file set is dropped from (or, `--warm`, read into) the page cache.
    Evict,
    /// Before the workers start: the ramp and the measured window follow at the same offsets
    /// on every process.
    Measure,
    /// Before the set is completed again or removed, at the end of the run.
    Cleanup,
}

impl Checkpoint {
    pub fn name(self) -> &'static str {
        match self {
            Checkpoint::Prepare => "prepare",
            Checkpoint::Evict => "evict",
            Checkpoint::Measure => "measure",
            Checkpoint::Cleanup => "cleanup",
        }
    }
}

/// What the processes agreed at a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreed {
    /// Every process got here without a failure: go on.
    Go,
    /// A process failed or was interrupted: stop measuring (every process learns it at the same
    /// checkpoint, so none is left waiting for the others).
    Stop,
}

/// The runner's side of a distributed run.
pub trait PhaseSync {
    /// Called at the same points on every process, with whether this one is fine so far
    /// (`ok`: no error and not interrupted). Once a checkpoint said [`Agreed::Stop`], every
    /// later call answers `Stop` at once without waiting.
    fn checkpoint(&self, at: Checkpoint, ok: bool) -> Agreed;
    /// The measured window of a cell just run, on the wall clock: from the end of the ramp to the
    /// end of the last thread.
    fn measured(&self, _start: SystemTime, _end: SystemTime) {}
    /// Right after [`Checkpoint::Measure`] said go: the instant (wall clock) every process
    /// starts its workers at, or None to start at once.
    fn common_start(&self) -> Option<SystemTime> {
        None
    }
    /// Whether this process is watched while it runs (a distributed run's side channel): the
    /// workers then publish live counters ([`PhaseSync::measuring`]) and the runner reports
    /// the document so far after every cell ([`PhaseSync::progress`]).
    fn watched(&self) -> bool {
        false
    }
    /// The workers of a cell start now; `threads` are their live counters (read by another
    /// thread, never locked by the workers). Cleared by [`PhaseSync::measured`].
    fn measuring(&self, _threads: Vec<std::sync::Arc<crate::measure::live::LiveCounters>>) {}
    /// After each measured cell (when [`PhaseSync::watched`]): the document so far, what this
    /// process has measured should the run end without reaching its end.
    fn progress(&self, _doc: &crate::model::run::RunDoc) {}
}

/// One process alone: every checkpoint goes on.
pub struct Solo;

impl PhaseSync for Solo {
    fn checkpoint(&self, _at: Checkpoint, _ok: bool) -> Agreed {
        Agreed::Go
    }
}

/// The message of a process that stopped because another one failed or was interrupted.
pub const STOPPED: &str =
    "stopped: another process of the distributed run failed or was interrupted";

/// The error of a process that stopped because another one failed (an interruption: what it
/// measured before is kept).
pub fn stopped() -> crate::error::Error {
    crate::error::Error::interrupted(STOPPED)
}
