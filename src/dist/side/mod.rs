//! The side channel of a distributed run (docs/distributed.md, "When a rank dies or hangs"): a
//! TCP connection from every rank to rank 0 that does not depend on MPI surviving. Open MPI 4
//! (no ULFM) cannot go on once a process died, and a rank that hangs keeps the others waiting in
//! a collective; over this channel rank 0 still learns what every rank measured and when one of
//! them is gone, so it can name it, save what the others measured and end the run.
//!
//! Every rank other than 0 keeps two threads: one sends a heartbeat every second (its phase and
//! the operations its workers completed so far, read from their live counters, never locked by
//! them), one waits for rank 0's stop and ends this rank when rank 0's own heartbeat stops for
//! the rank timeout (rank 0 stopped or hung: nobody else would end it). After each measured cell the rank sends the document
//! so far (as [`Done`] carries it: the cells and their HdrHistogram V2 bytes). Rank 0 keeps the
//! latest of each in a [`Monitor`] whose watchdog ends the run when a rank's connection closes
//! without its goodbye (killed: the kernel closes a dead process's sockets), when its heartbeats
//! stop for the rank timeout (stopped, or the whole process hung), or when its workers complete
//! no I/O for that long while measuring (I/O that never returns). It then tells every rank to
//! stop, waits a moment for their last cells, hands every rank's outcome to the command's
//! failure handler (which prints, saves and says how to exit) and ends the process.
//!
//! This file holds what both ends share: the messages, the phases and timings, each process's
//! [`Link`] and rank 0's [`Monitor`]; `rank.rs` is a rank other than 0 (its connection, heartbeat
//! and stop threads), `rank0.rs` rank 0's listener (the handshake, each rank's lines),
//! `watchdog.rs` rank 0's judgement and the early end.

mod rank;
mod rank0;
mod watchdog;

pub use rank::connect;
pub use rank0::{listen, serve, wait_hellos};
pub use watchdog::start_watchdog;

use super::{DbDone, Done, Outcome};
use crate::measure::live::LiveCounters;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What a rank is doing, as its heartbeats say.
pub const WORKING: u8 = 0;
/// Its workers are measuring (its completed operations must grow).
pub const MEASURING: u8 = 1;
/// In a collective, waiting for the other ranks.
pub const WAITING: u8 = 2;
/// Stopped after rank 0's stop, waiting to be ended.
pub const PARKED: u8 = 3;

fn phase_name(p: u8) -> &'static str {
    match p {
        MEASURING => "measuring",
        WAITING => "waiting for the other ranks",
        PARKED => "stopped",
        _ => "working",
    }
}

/// The default of `--rank-timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Between heartbeats.
const BEAT: Duration = Duration::from_secs(1);
/// How long rank 0 waits, after telling the ranks to stop, for their last cells. Open MPI's
/// launcher ends every process about 2 s after one died (SIGTERM after 1 s, SIGKILL after 2 s):
/// rank 0 must have saved by then.
const SETTLE: Duration = Duration::from_millis(800);
/// How long a rank tries to reach rank 0's listener, and rank 0 waits for every rank's hello.
pub const CONNECT: Duration = Duration::from_secs(10);

/// A message from a rank to rank 0, one JSON line each.
#[derive(Serialize, Deserialize)]
enum Up {
    /// The first line of a connection. `proof`: the HMAC-SHA256 of the rank, host and `nonce`
    /// under the token rank 0 sent over MPI (never the token itself), so that rank 0 takes only
    /// this run's ranks, and a rank that reached another process listening at the same address
    /// and port (another job's rank 0, a loopback or container bridge address that exists on
    /// every host) tries the next address: rank 0's welcome proves the token in turn.
    Hello {
        rank: u32,
        host: String,
        nonce: String,
        proof: String,
    },
    Beat {
        phase: u8,
        ops: u64,
    },
    /// What the rank measured so far in the run (or experiment point) `epoch`.
    Progress(u64, SoFar),
    Bye,
}

/// What a rank measured so far, as it would send it at the end: an `iolab run` document (a
/// run's, or an experiment point's) or an `iolab db` one.
#[derive(Serialize, Deserialize)]
pub enum SoFar {
    Run(Box<Done>),
    Db(Box<DbDone>),
}

/// The line rank 0 sends every rank when the run ends early.
const STOP: &str = "stop\n";
/// The longest first line rank 0 reads from a connection (a hello is about 250 bytes), and how
/// long it waits for it; a connection that sends more, or nothing, is dropped with one line.
const HELLO_MAX: usize = 4096;
const HELLO_TIME: Duration = Duration::from_secs(5);
/// Connections rank 0 is reading a first line from at once; more are closed at once.
const MAX_HANDSHAKES: usize = 64;

/// The parts a hello's proof authenticates.
fn hello_parts(rank: u32, host: &str, nonce: &str) -> [Vec<u8>; 4] {
    [
        b"iolab side hello".to_vec(),
        rank.to_le_bytes().to_vec(),
        host.as_bytes().to_vec(),
        nonce.as_bytes().to_vec(),
    ]
}

/// The parts rank 0's welcome to a hello with `nonce` authenticates.
fn welcome_parts(rank: u32, nonce: &str) -> [Vec<u8>; 3] {
    [
        b"iolab side welcome".to_vec(),
        rank.to_le_bytes().to_vec(),
        nonce.as_bytes().to_vec(),
    ]
}

fn refs<const N: usize>(v: &[Vec<u8>; N]) -> [&[u8]; N] {
    std::array::from_fn(|i| v[i].as_slice())
}

/// Why rank 0 ends a run early.
#[derive(Clone, Debug)]
pub struct Fault {
    pub rank: u32,
    pub host: String,
    pub reason: String,
}

/// What the command does with the outcomes when rank 0 ends a run early: prints and saves what
/// the ranks measured; returns the exit code. Runs on the watchdog's thread (the main thread
/// may be inside a collective that never returns).
pub type OnFault = Box<dyn FnOnce(Vec<Outcome>, &Fault) -> i32 + Send>;
/// [`OnFault`] of `iolab db`: the ranks' db documents.
pub type OnDbFault = Box<dyn FnOnce(Vec<Outcome<DbDone>>, &Fault) -> i32 + Send>;

/// The command's failure handler, of the kind of document its ranks send.
enum Handler {
    Run(OnFault),
    Db(OnDbFault),
}
/// This process's end of the side channel (every rank).
pub struct Link {
    phase: AtomicU8,
    /// The live counters of the cell being measured (empty between cells).
    live: Mutex<Vec<Arc<LiveCounters>>>,
    /// Rank 0 said stop (or, on rank 0, its watchdog did): no more collectives.
    aborted: AtomicBool,
    /// The run's stop flag (Ctrl-C's), set when aborted.
    stop: Mutex<Option<Arc<AtomicBool>>>,
    /// Ranks other than 0: the connection to rank 0.
    up: Option<Mutex<TcpStream>>,
    /// Rank 0: what every rank said.
    monitor: Option<Arc<Monitor>>,
    /// `--rank-timeout` in ms: how long a rank (rank 0 too) may be silent.
    timeout_ms: AtomicU64,
    /// This rank said goodbye (the run ended normally).
    done: AtomicBool,
    /// The experiment point being run (every rank counts them alike, [`Link::arm`]): rank 0
    /// takes only what a rank measured in the current one.
    epoch: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Link {
    pub fn aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    /// The run's stop flag, set when rank 0 ends the run early.
    pub fn watch_stop(&self, stop: Arc<AtomicBool>) {
        if self.aborted() {
            stop.store(true, Ordering::Relaxed);
        }
        *lock(&self.stop) = Some(stop);
    }

    fn abort_here(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        if let Some(s) = lock(&self.stop).as_ref() {
            s.store(true, Ordering::Relaxed);
        }
    }

    fn release_stop(&self) {
        if let Some(s) = lock(&self.stop).as_ref() {
            s.store(false, Ordering::Relaxed);
        }
    }

    /// The phase this rank is in; rank 0 learns it at once.
    pub fn set_phase(&self, p: u8) {
        self.phase.store(p, Ordering::SeqCst);
        self.beat();
    }

    pub fn measuring(&self, threads: Vec<Arc<LiveCounters>>) {
        *lock(&self.live) = threads;
        self.set_phase(MEASURING);
    }

    pub fn measured(&self) {
        lock(&self.live).clear();
        self.set_phase(WORKING);
    }

    /// Operations the workers of the cell being measured completed so far.
    fn ops(&self) -> u64 {
        lock(&self.live).iter().map(|c| c.ops_total()).sum()
    }

    fn send(&self, m: &Up) {
        if let Some(up) = &self.up {
            let mut line = serde_json::to_vec(m).expect("serializable");
            line.push(b'\n');
            // rank 0 gone: the launcher ends this rank
            let _ = lock(up).write_all(&line);
        }
    }

    fn beat(&self) {
        let phase = self.phase.load(Ordering::SeqCst);
        match &self.monitor {
            Some(m) => m.beat(0, phase, self.ops()),
            None => self.send(&Up::Beat {
                phase,
                ops: self.ops(),
            }),
        }
    }

    /// What this rank measured so far.
    pub fn progress(&self, done: SoFar) {
        match &self.monitor {
            Some(m) => lock(&m.ranks)[0].done = Some((self.epoch(), done)),
            None => self.send(&Up::Progress(self.epoch(), done)),
        }
    }

    /// The run ended normally (after the gather): rank 0's watchdog stands down, the others
    /// say goodbye so that their closing connection is not taken for a death.
    pub fn bye(&self) {
        self.done.store(true, Ordering::SeqCst);
        match &self.monitor {
            Some(m) => m.armed.store(false, Ordering::SeqCst),
            None => self.send(&Up::Bye),
        }
    }

    /// After rank 0 ended the run early: wait to be ended (rank 0's watchdog ends rank 0; the
    /// launcher ends the others when rank 0 is gone).
    pub fn park(&self) -> ! {
        self.set_phase(PARKED);
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }

    /// Rank 0, its gather done: the watchdog stands down (false when it already ended the run:
    /// the caller then waits to be ended). Other ranks: true.
    pub fn claim(&self) -> bool {
        self.monitor
            .as_ref()
            .is_none_or(|m| m.armed.swap(false, Ordering::SeqCst))
    }

    /// Rank 0: the watchdog judges again (an experiment's next point).
    pub fn arm(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        if let Some(m) = &self.monitor {
            m.armed.store(true, Ordering::SeqCst);
        }
    }

    /// Rank 0: what the command does when the run ends early.
    pub fn on_fault(&self, f: OnFault) {
        if let Some(m) = &self.monitor {
            *lock(&m.on_fault) = Some(Handler::Run(f));
        }
    }

    /// Rank 0: [`Link::on_fault`] of `iolab db`.
    pub fn on_db_fault(&self, f: OnDbFault) {
        if let Some(m) = &self.monitor {
            *lock(&m.on_fault) = Some(Handler::Db(f));
        }
    }

    /// The rank timeout (`--rank-timeout`): rank 0 judges the others by it, the others rank 0.
    pub fn set_timeout(&self, t: Duration) {
        let ms = t.as_millis().max(1) as u64;
        self.timeout_ms.store(ms, Ordering::SeqCst);
        if let Some(m) = &self.monitor {
            m.timeout_ms.store(ms, Ordering::SeqCst);
        }
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::SeqCst))
    }

    fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }
}

/// What rank 0 last heard from a rank.
struct Seen {
    host: String,
    hello: bool,
    phase: u8,
    ops: u64,
    /// When `ops` last grew (or the phase changed).
    ops_at: Instant,
    beat_at: Instant,
    /// What it measured so far, and in which experiment point ([`Link::arm`]).
    done: Option<(u64, SoFar)>,
    closed: bool,
    bye: bool,
    conn: Option<TcpStream>,
}

/// Rank 0's record of every rank and its watchdog's settings.
pub struct Monitor {
    ranks: Mutex<Vec<Seen>>,
    /// Notified when a connection closes: the watchdog wakes at once.
    closed: std::sync::Condvar,
    timeout_ms: AtomicU64,
    /// The watchdog judges (between the start and the gather).
    armed: AtomicBool,
    on_fault: Mutex<Option<Handler>>,
}

impl Monitor {
    fn beat(&self, r: usize, phase: u8, ops: u64) {
        let mut all = lock(&self.ranks);
        let Some(s) = all.get_mut(r) else { return };
        let now = Instant::now();
        if ops != s.ops || phase != s.phase {
            s.ops_at = now;
        }
        s.phase = phase;
        s.ops = ops;
        s.beat_at = now;
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests;
