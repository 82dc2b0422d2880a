//! Distributed runs (docs/distributed.md): under `mpirun -np N`, every process (rank) runs the
//! same job against its own target, waits for the others before each phase
//! ([`crate::engine::checkpoints::PhaseSync`]), and rank 0 gathers what every rank measured and
//! merges it exactly ([`merge`]). The communicator is MPI (`--features mpi`); everything else
//! here is plain code that tests run without MPI.

pub mod merge;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod side;

use crate::engine::checkpoints::{Agreed, Checkpoint, PhaseSync};
use crate::error::{Error, Result};
use crate::model::run::RunDoc;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

/// What the ranks need of a communicator: one collective of each kind, called by every rank
/// in the same order.
pub trait Comm {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// The largest `v` of all ranks, on every rank.
    fn all_max(&self, v: u8) -> u8;
    /// The largest `v` of all ranks, on every rank.
    fn all_max_u64(&self, v: u64) -> u64;
    /// Every rank's bytes, in rank order, on rank 0 (None on the others).
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Rank 0's bytes (`bytes` there; ignored on the others), on every rank.
    fn broadcast(&self, bytes: &[u8]) -> Vec<u8>;
}

/// The number of processes the MPI launcher started, when this process was started by one
/// (Open MPI's `mpirun`/`mpiexec`, a PMI launcher such as MPICH's hydra, or a Slurm `srun` step).
pub fn launched_size() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse().ok())
}

/// Whether this process is a rank other than 0 of a launch with several processes: it prints
/// nothing and writes no `--output` file (rank 0 does).
pub fn secondary_rank() -> bool {
    launched_size().is_some_and(|n| n > 1)
        && ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"]
            .iter()
            .find_map(|k| std::env::var(k).ok()?.parse::<u32>().ok())
            .is_some_and(|r| r > 0)
}

/// This process's rank in a distributed run, when there is one (more than one process).
pub struct Ranks {
    comm: Box<dyn Comm>,
    pub host: String,
    /// A checkpoint said stop: every later one answers at once.
    stopped: Cell<bool>,
    /// The measured windows of the cells run so far (wall clock, ns since the epoch).
    windows: RefCell<Vec<(u64, u64)>>,
    /// The side channel to rank 0 ([`side`]): how a rank that dies or hangs is noticed.
    link: Option<Arc<side::Link>>,
}

/// Joins the distributed run this process was started in: None when it was started alone (or
/// as the only rank); an error when a launcher started several but this build has no MPI.
pub fn join() -> Result<Option<Ranks>> {
    let Some(n) = launched_size().filter(|&n| n > 1) else {
        return Ok(None);
    };
    join_mpi(n)
}

#[cfg(feature = "mpi")]
fn join_mpi(n: u32) -> Result<Option<Ranks>> {
    let world = mpi::init().ok_or_else(|| {
        Error::failed(format!(
            "started by an MPI launcher as one of {n} processes, but MPI could not be initialized"
        ))
    })?;
    let mut ranks = Ranks::new(Box::new(world), crate::system::fsinfo::hostname());
    ranks.open_side()?;
    Ok(Some(ranks))
}

#[cfg(not(feature = "mpi"))]
fn join_mpi(n: u32) -> Result<Option<Ranks>> {
    Err(Error::usage(format!(
        "started by an MPI launcher as one of {n} processes, but this iolab was built without MPI: build it with `cargo build --release --features mpi` (docs/distributed.md), or run it without mpirun"
    )))
}

/// `{rank}` and `{host}` in a path (`--dir /mnt/{host}/r{rank}`).
pub fn substitute(p: &Path, rank: u32, host: &str) -> PathBuf {
    let s = p.to_string_lossy();
    if !s.contains('{') {
        return p.to_path_buf();
    }
    PathBuf::from(substitute_str(&s, rank, host))
}

/// `{rank}` and `{host}` in a text (`--url sqlite:///data/{host}/r{rank}.db`).
pub fn substitute_str(s: &str, rank: u32, host: &str) -> String {
    s.replace("{rank}", &rank.to_string())
        .replace("{host}", host)
}

/// How far ahead of the measure checkpoint the ranks' common start is put.
pub const START_LEAD: std::time::Duration = std::time::Duration::from_millis(20);

/// What a rank sends to rank 0 at the end: `T` when it measured, else why not.
#[derive(Serialize, Deserialize)]
pub struct Outcome<T = Done> {
    pub rank: u32,
    pub host: String,
    pub result: std::result::Result<T, Failed>,
}

/// A rank's `iolab db` document, its latency histogram and its measured window.
#[derive(Serialize, Deserialize)]
pub struct DbDone {
    pub doc: crate::model::db::DbDoc,
    /// HdrHistogram V2 (deflate); empty when nothing was measured.
    pub hist: Vec<u8>,
    pub window: (u64, u64),
}

/// A rank's run document, its histograms and measured windows.
#[derive(Serialize, Deserialize)]
pub struct Done {
    pub doc: RunDoc,
    /// Per cell, per operation (read, write, fsync): the HdrHistogram V2 (deflate) bytes the
    /// results store keeps; empty when the operation did not run.
    pub hists: Vec<Vec<Vec<u8>>>,
    /// Per cell: the measured window (wall clock, ns since the epoch).
    pub windows: Vec<(u64, u64)>,
}

/// Why a rank failed (or stopped because another did).
#[derive(Serialize, Deserialize, Clone)]
pub struct Failed {
    pub exit: i32,
    pub msg: String,
}

impl From<&Error> for Failed {
    fn from(e: &Error) -> Failed {
        Failed {
            exit: e.exit as i32,
            msg: e.msg.clone(),
        }
    }
}

impl Failed {
    /// Stopped because another rank failed: not a failure of its own.
    pub fn only_stopped(&self) -> bool {
        self.msg == crate::engine::checkpoints::STOPPED
    }
}

/// The exit code of the first rank that failed on its own (not only stopped because another
/// rank failed), in rank order; `None` when none did.
pub fn first_exit<T>(outcomes: &[Outcome<T>]) -> Option<i32> {
    outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .find(|f| !f.only_stopped())
        .map(|f| f.exit)
}

/// A histogram as rank 0 receives it: the store's HdrHistogram V2 bytes, empty when the
/// operation recorded nothing.
pub fn hist_bytes(h: &crate::model::hist::LatHist) -> Vec<u8> {
    if h.count() > 0 {
        crate::store::serialize_hist(h)
    } else {
        Vec::new()
    }
}

pub fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Ranks {
    pub fn new(comm: Box<dyn Comm>, host: String) -> Ranks {
        Ranks {
            comm,
            host,
            stopped: Cell::new(false),
            windows: RefCell::new(Vec::new()),
            link: None,
        }
    }

    /// Opens the side channel (a collective): rank 0 listens and tells every rank where; each
    /// connects. Every rank learns whether all could; rank 0's watchdog then starts.
    pub fn open_side(&mut self) -> Result<()> {
        let (rank, n) = (self.rank(), self.size());
        if rank == 0 {
            let opened = side::listen();
            let addrs = opened.as_ref().map(|o| o.1.clone()).unwrap_or_default();
            self.comm.broadcast(addrs.as_bytes());
            let served = opened.and_then(|(l, info)| side::serve(l, n, &self.host, &info));
            let ok = self.all_ok(served.is_ok());
            let link = served.map_err(|e| {
                Error::failed(format!(
                    "rank 0 on {}: cannot open the side channel (a TCP listener): {e}",
                    self.host
                ))
            })?;
            if !ok {
                // the ranks that could not connect gave up before the reduction
                let missing = side::wait_hellos(&link, Duration::from_secs(1));
                let addrs = addrs.split_once(';').map_or(addrs.as_str(), |t| t.1);
                return Err(Error::failed(format!(
                    "rank {} could not connect to rank 0's side channel at {addrs} (TCP; a firewall between the hosts? docs/distributed.md)",
                    missing
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", rank ")
                )));
            }
            side::wait_hellos(&link, side::CONNECT);
            side::start_watchdog(&link)
                .map_err(|e| Error::failed(format!("cannot start the side channel: {e}")))?;
            self.link = Some(link);
        } else {
            let addrs = String::from_utf8_lossy(&self.comm.broadcast(&[])).into_owned();
            let link = if addrs.is_empty() {
                Err(String::new())
            } else {
                side::connect(&addrs, rank, &self.host)
            };
            if !self.all_ok(link.is_ok()) {
                // rank 0 names the ranks that could not connect
                std::process::exit(crate::error::Exit::Failed as i32);
            }
            self.link = link.ok();
        }
        Ok(())
    }

    /// Rank 0 ended the run early (a rank died or hung): no more collectives.
    pub fn aborted(&self) -> bool {
        self.link.as_ref().is_some_and(|l| l.aborted())
    }

    /// The run's stop flag (Ctrl-C's), set when rank 0 ends the run early.
    pub fn watch_stop(&self, stop: Arc<AtomicBool>) {
        if let Some(l) = &self.link {
            l.watch_stop(stop);
        }
    }

    /// Rank 0: what to do when a rank dies or hangs (print and save what the others measured).
    pub fn on_fault(&self, f: side::OnFault) {
        if let Some(l) = &self.link {
            l.on_fault(f);
        }
    }

    /// Rank 0: [`Ranks::on_fault`] of `iolab db`.
    pub fn on_db_fault(&self, f: side::OnDbFault) {
        if let Some(l) = &self.link {
            l.on_db_fault(f);
        }
    }

    /// What this rank's `iolab db` measured, for rank 0 when it ends the run early (a rank died
    /// or hung): sent over the side channel instead of the gather.
    pub fn progress_db(&self, done: DbDone) {
        if let Some(l) = &self.link {
            l.progress(side::SoFar::Db(Box::new(done)));
        }
    }

    /// Rank 0: how long a rank may be silent, or measure without completing I/O.
    pub fn set_rank_timeout(&self, t: Duration) {
        if let Some(l) = &self.link {
            l.set_timeout(t);
        }
    }

    /// A collective, with this rank's phase "waiting" on the side channel while in it. After
    /// rank 0 ended the run early, the rank waits there to be ended instead.
    fn collective<T>(&self, f: impl FnOnce() -> T) -> T {
        let Some(l) = &self.link else { return f() };
        if l.aborted() {
            l.park();
        }
        l.set_phase(side::WAITING);
        let r = f();
        l.set_phase(side::WORKING);
        r
    }
    pub fn rank(&self) -> u32 {
        self.comm.rank()
    }
    pub fn size(&self) -> u32 {
        self.comm.size()
    }

    /// [`PhaseSync::common_start`], waited for (a collective): returns at the instant every
    /// rank returns.
    pub fn start_together(&self) {
        if let Some(at) = self.common_start()
            && let Ok(d) = at.duration_since(SystemTime::now())
        {
            std::thread::sleep(d);
        }
    }

    /// Rank 0's bytes on every rank (a collective).
    pub fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
        self.collective(|| self.comm.broadcast(bytes))
    }

    /// Ready for another run (an experiment's next point): no stop agreed, no windows.
    pub fn reset(&self) {
        self.stopped.set(false);
        self.windows.borrow_mut().clear();
        if let Some(l) = &self.link {
            l.arm();
        }
    }

    /// Whether every rank is fine (a collective: every rank calls it at the same point).
    pub fn all_ok(&self, ok: bool) -> bool {
        self.collective(|| self.comm.all_max(u8::from(!ok)) == 0)
    }

    /// Sends this rank's result to rank 0: there, every rank's outcome in rank order.
    pub fn gather(&self, r: &Result<RunDoc>) -> Option<Vec<Outcome>> {
        let result = match r {
            Ok(doc) => Ok(self.done(doc)),
            Err(e) => Err(Failed::from(e)),
        };
        self.gather_any(result)
    }

    /// A document as rank 0 receives it: with its histograms' bytes and the measured windows.
    fn done(&self, doc: &RunDoc) -> Done {
        Done {
            doc: doc.clone(),
            hists: doc
                .runs
                .iter()
                .map(|c| c.lat_hists.iter().map(hist_bytes).collect())
                .collect(),
            windows: self.windows.borrow().clone(),
        }
    }

    /// Sends this rank's outcome to rank 0: there, every rank's in rank order.
    pub fn gather_any<T: Serialize + serde::de::DeserializeOwned>(
        &self,
        result: std::result::Result<T, Failed>,
    ) -> Option<Vec<Outcome<T>>> {
        let me = Outcome {
            rank: self.rank(),
            host: self.host.clone(),
            result,
        };
        let bytes = serde_json::to_vec(&me).expect("serializable");
        let all = self.collective(|| self.comm.gather(&bytes))?;
        if let Some(l) = &self.link
            && !l.claim()
        {
            // rank 0's watchdog is ending the run (a rank died just now): it prints and saves
            l.park();
        }
        Some(
            all.iter()
                .enumerate()
                .map(|(i, b)| {
                    serde_json::from_slice(b).unwrap_or_else(|e| Outcome {
                        rank: i as u32,
                        host: "?".into(),
                        result: Err(Failed {
                            exit: 1,
                            msg: format!("its result could not be read: {e}"),
                        }),
                    })
                })
                .collect(),
        )
    }
}

impl Drop for Ranks {
    /// The run ended normally: rank 0's watchdog stands down, the other ranks say goodbye (their
    /// closing side channel is not taken for a death).
    fn drop(&mut self) {
        if let Some(l) = &self.link {
            l.bye();
        }
    }
}

impl PhaseSync for Ranks {
    fn checkpoint(&self, _at: Checkpoint, ok: bool) -> Agreed {
        if self.stopped.get() {
            return Agreed::Stop;
        }
        if self.aborted() {
            self.stopped.set(true);
            return Agreed::Stop;
        }
        if self.all_ok(ok) {
            Agreed::Go
        } else {
            self.stopped.set(true);
            Agreed::Stop
        }
    }
    /// Each rank proposes its clock now plus [`START_LEAD`]; the latest proposal is everyone's
    /// start, so a rank that left the checkpoint late (scheduled out, a slower link) still starts
    /// with the others. A start further ahead than a second (clocks that disagree: hosts without
    /// NTP) is not waited for: the rank starts at once.
    fn common_start(&self) -> Option<SystemTime> {
        let at = self.collective(|| {
            self.comm
                .all_max_u64(unix_ns(SystemTime::now() + START_LEAD))
        });
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(at);
        let ahead = at.duration_since(SystemTime::now()).unwrap_or_default();
        (ahead < std::time::Duration::from_secs(1)).then_some(at)
    }
    fn measured(&self, start: SystemTime, end: SystemTime) {
        self.windows
            .borrow_mut()
            .push((unix_ns(start), unix_ns(end)));
        if let Some(l) = &self.link {
            l.measured();
        }
    }
    fn watched(&self) -> bool {
        self.link.is_some()
    }
    fn measuring(&self, threads: Vec<Arc<crate::measure::live::LiveCounters>>) {
        if let Some(l) = &self.link {
            l.measuring(threads);
        }
    }
    fn progress(&self, doc: &RunDoc) {
        if let Some(l) = &self.link {
            l.progress(side::SoFar::Run(Box::new(self.done(doc))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_host_are_put_into_a_path() {
        assert_eq!(
            substitute(Path::new("/mnt/{host}/r{rank}"), 3, "db7"),
            PathBuf::from("/mnt/db7/r3")
        );
        assert_eq!(
            substitute(Path::new("/data"), 3, "db7"),
            PathBuf::from("/data")
        );
    }
}
