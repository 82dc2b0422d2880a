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

use super::{DbDone, Done, Failed, Outcome};
use crate::measure::live::LiveCounters;
use crate::measure::peer::{self, Line};
use crate::model::auth;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
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

/// This host's IPv4 addresses, loopback last (a rank on another host reaches one of the
/// others; the loopback serves ranks on this host).
fn local_addrs() -> Vec<std::net::Ipv4Addr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed by freeifaddrs below; every node is
    // read while the list lives.
    unsafe {
        if libc::getifaddrs(&mut head) == 0 {
            let mut p = head;
            while !p.is_null() {
                let a = (*p).ifa_addr;
                if !a.is_null() && (*a).sa_family as i32 == libc::AF_INET {
                    let sin = &*(a as *const libc::sockaddr_in);
                    out.push(std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)));
                }
                p = (*p).ifa_next;
            }
            libc::freeifaddrs(head);
        }
    }
    out.sort_by_key(|a| a.is_loopback());
    out.dedup();
    if out.is_empty() {
        out.push(std::net::Ipv4Addr::LOCALHOST);
    }
    out
}

/// Rank 0: listens on every address (a port the system picks); returns the listener and what
/// to tell the other ranks: a token of this run and the addresses
/// (`TOKEN;ip:port,ip:port,...`).
pub fn listen() -> std::io::Result<(TcpListener, String)> {
    let l = TcpListener::bind("0.0.0.0:0")?;
    let port = l.local_addr()?.port();
    let addrs = local_addrs()
        .iter()
        .map(|a| format!("{a}:{port}"))
        .collect::<Vec<_>>()
        .join(",");
    let token: [u8; auth::KEY_BYTES] = rand::random();
    Ok((l, format!("{};{addrs}", auth::hex(&token))))
}

/// One line from `s`, read byte by byte (nothing after it is consumed), within its read timeout.
fn read_line_exact(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 128 {
        if s.read(&mut b)? == 0 {
            break;
        }
        line.push(b[0]);
        if b[0] == b'\n' {
            break;
        }
    }
    Ok(line)
}

/// A rank other than 0: connects to the first of rank 0's addresses where rank 0 of this run
/// answers its hello; its heartbeat and stop threads start. Err says which addresses were tried.
pub fn connect(info: &str, rank: u32, host: &str) -> Result<Arc<Link>, String> {
    let deadline = Instant::now() + CONNECT;
    let (token, addrs) = info.split_once(';').unwrap_or(("", info));
    let list: Vec<SocketAddr> = addrs.split(',').filter_map(|a| a.parse().ok()).collect();
    let mut last = String::from("no address");
    let nonce = auth::hex(&rand::random::<[u8; 16]>());
    let hello = {
        let proof = auth::tag_hex(token.as_bytes(), &refs(&hello_parts(rank, host, &nonce)));
        let mut h = serde_json::to_vec(&Up::Hello {
            rank,
            host: host.to_string(),
            nonce: nonce.clone(),
            proof,
        })
        .expect("serializable");
        h.push(b'\n');
        h
    };
    // rank 0's welcome: `welcome TAG`, the token's HMAC over this rank and nonce
    let welcomed = |answer: &[u8]| {
        std::str::from_utf8(answer)
            .ok()
            .and_then(|a| a.strip_prefix("welcome "))
            .and_then(|a| a.strip_suffix('\n'))
            .is_some_and(|tag| {
                auth::tag_ok(token.as_bytes(), &refs(&welcome_parts(rank, &nonce)), tag)
            })
    };
    let stream = 'found: loop {
        for a in &list {
            let tried = TcpStream::connect_timeout(a, Duration::from_secs(2)).and_then(|mut s| {
                s.set_read_timeout(Some(Duration::from_secs(2)))?;
                s.write_all(&hello)?;
                let answer = read_line_exact(&mut s)?;
                s.set_read_timeout(None)?;
                Ok((s, answer))
            });
            match tried {
                Ok((s, answer)) if welcomed(&answer) => break 'found s,
                Ok(_) => last = format!("{a}: not this run's rank 0"),
                Err(e) => last = format!("{a}: {e}"),
            }
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "cannot reach rank 0's side channel at {addrs} ({last})"
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = stream.set_nodelay(true);
    let reader = stream.try_clone().map_err(|e| e.to_string())?;
    let link = Arc::new(Link {
        phase: AtomicU8::new(WORKING),
        live: Mutex::new(Vec::new()),
        aborted: AtomicBool::new(false),
        stop: Mutex::new(None),
        up: Some(Mutex::new(stream)),
        monitor: None,
        timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
        done: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
    });
    let l = Arc::clone(&link);
    std::thread::Builder::new()
        .name("iolab-beat".into())
        .spawn(move || {
            loop {
                std::thread::sleep(BEAT);
                l.beat();
            }
        })
        .map_err(|e| e.to_string())?;
    let l = Arc::clone(&link);
    let host = host.to_string();
    let _ = reader.set_read_timeout(Some(BEAT));
    std::thread::Builder::new()
        .name("iolab-stop".into())
        .spawn(move || {
            let mut r = BufReader::new(reader);
            let mut line = Vec::new();
            let mut heard = Instant::now();
            loop {
                // rank 0 sends only `beat` and `stop`
                match peer::read_line(&mut r, &mut line, 64, None) {
                    // rank 0's end: the launcher ends this rank
                    Ok(Line::Eof | Line::TooLong | Line::Late) => return,
                    Ok(Line::Done) => {
                        heard = Instant::now();
                        if line == STOP.as_bytes() {
                            l.abort_here();
                        }
                        line.clear();
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => return,
                }
                let t = l.timeout();
                if heard.elapsed() > t && !l.done.load(Ordering::SeqCst) && !l.aborted() {
                    // Rank 0 is stopped or hung: nobody would end this rank. It ends, and the
                    // launcher ends the others.
                    eprintln!(
                        "iolab: error: rank {rank} on {host}: rank 0 sent no heartbeat for {} s (stopped or hung): ending the run",
                        t.as_secs_f64()
                    );
                    std::process::exit(crate::error::Exit::Failed as i32);
                }
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(link)
}

/// Rank 0: accepts the other ranks' connections and keeps what they say. The watchdog starts
/// with [`start_watchdog`], once every rank said hello.
pub fn serve(l: TcpListener, n: u32, host: &str, info: &str) -> std::io::Result<Arc<Link>> {
    let token = info.split_once(';').map_or("", |t| t.0).to_string();
    let now = Instant::now();
    let ranks = (0..n)
        .map(|r| Seen {
            host: if r == 0 { host.to_string() } else { "?".into() },
            hello: r == 0,
            phase: WORKING,
            ops: 0,
            ops_at: now,
            beat_at: now,
            done: None,
            closed: false,
            bye: false,
            conn: None,
        })
        .collect();
    let monitor = Arc::new(Monitor {
        ranks: Mutex::new(ranks),
        closed: std::sync::Condvar::new(),
        timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
        armed: AtomicBool::new(false),
        on_fault: Mutex::new(None),
    });
    let m = Arc::clone(&monitor);
    std::thread::Builder::new()
        .name("iolab-accept".into())
        .spawn(move || {
            // every connection is read: one that is not a rank of this run ends at its first
            // line (bounded in size and time), dropped with one line
            let handshakes = Arc::new(AtomicUsize::new(0));
            while let Ok((s, peer)) = l.accept() {
                if handshakes.load(Ordering::SeqCst) >= MAX_HANDSHAKES {
                    dropped(&peer, "too many connections saying hello at once");
                    continue;
                }
                handshakes.fetch_add(1, Ordering::SeqCst);
                let (m, token, h) = (Arc::clone(&m), token.clone(), Arc::clone(&handshakes));
                let started = std::thread::Builder::new()
                    .name("iolab-rank".into())
                    .spawn(move || read_rank(s, &m, &token, &h));
                if started.is_err() {
                    handshakes.fetch_sub(1, Ordering::SeqCst);
                }
            }
        })?;
    Ok(Arc::new(Link {
        phase: AtomicU8::new(WORKING),
        live: Mutex::new(Vec::new()),
        aborted: AtomicBool::new(false),
        stop: Mutex::new(None),
        up: None,
        monitor: Some(monitor),
        timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
        done: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
    }))
}

/// Rank 0's one line about a connection it drops (not a rank of this run): it changes nothing.
fn dropped(peer: &SocketAddr, why: &str) {
    eprintln!("iolab: warning: side channel: {peer}: {why}; connection dropped");
}

/// Rank 0: a connection's hello, read and checked before anything else of it is read or kept:
/// one line of at most [`HELLO_MAX`] bytes within [`HELLO_TIME`], its proof checked in constant
/// time, a rank of this run that has not said hello yet. Err: why it is dropped.
fn handshake(
    r: &mut BufReader<TcpStream>,
    m: &Monitor,
    token: &str,
) -> Result<(usize, String, String), String> {
    let mut line = Vec::new();
    match peer::read_line(r, &mut line, HELLO_MAX, Some(Instant::now() + HELLO_TIME)) {
        Ok(Line::Done) => {}
        Ok(Line::Eof) => return Err("closed before its hello".into()),
        Ok(Line::TooLong) => return Err(format!("a first line over {HELLO_MAX} bytes")),
        Ok(Line::Late) => {
            return Err(format!("no hello in {} s", HELLO_TIME.as_secs()));
        }
        Err(e) => return Err(e.to_string()),
    }
    let Ok(Up::Hello {
        rank,
        host,
        nonce,
        proof,
    }) = serde_json::from_slice::<Up>(&line)
    else {
        return Err("not a hello".into());
    };
    if !auth::tag_ok(
        token.as_bytes(),
        &refs(&hello_parts(rank, &host, &nonce)),
        &proof,
    ) {
        return Err("a hello without this run's token".into());
    }
    let n = lock(&m.ranks).len();
    if rank as usize >= n || rank == 0 {
        return Err(format!("a hello of rank {rank}, not one of ranks 1..{n}"));
    }
    if lock(&m.ranks)[rank as usize].hello {
        return Err(format!("a second hello of rank {rank}"));
    }
    Ok((rank as usize, host, nonce))
}

/// Rank 0: one connection: its hello ([`handshake`]), then the rank's lines until it closes.
fn read_rank(s: TcpStream, m: &Monitor, token: &str, handshakes: &AtomicUsize) {
    let peer = s
        .peer_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let writer = s.try_clone().ok();
    let mut r = BufReader::new(s);
    let hello = handshake(&mut r, m, token);
    handshakes.fetch_sub(1, Ordering::SeqCst);
    let (who, host, nonce) = match hello {
        Ok(h) => h,
        Err(why) => return dropped(&peer, &why),
    };
    let _ = r.get_ref().set_read_timeout(None);
    {
        let mut all = lock(&m.ranks);
        let Some(seen) = all.get_mut(who).filter(|s| !s.hello) else {
            drop(all);
            return dropped(&peer, &format!("a second hello of rank {who}"));
        };
        if let Some(mut w) = writer.as_ref().and_then(|w| w.try_clone().ok()) {
            let tag = auth::tag_hex(token.as_bytes(), &refs(&welcome_parts(who as u32, &nonce)));
            let _ = w.write_all(format!("welcome {tag}\n").as_bytes());
        }
        seen.host = host;
        seen.hello = true;
        seen.beat_at = Instant::now();
        seen.ops_at = Instant::now();
        seen.conn = writer.as_ref().and_then(|w| w.try_clone().ok());
        if let Some(c) = &seen.conn {
            // a stopped rank's full buffer never blocks rank 0
            let _ = c.set_write_timeout(Some(Duration::from_millis(200)));
        }
    }
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(msg) = serde_json::from_slice::<Up>(&line) else {
            continue;
        };
        match msg {
            Up::Hello { .. } => {}
            Up::Beat { phase, ops } => m.beat(who, phase, ops),
            Up::Progress(epoch, d) => lock(&m.ranks)[who].done = Some((epoch, d)),
            Up::Bye => lock(&m.ranks)[who].bye = true,
        }
    }
    lock(&m.ranks)[who].closed = true;
    m.closed.notify_all();
}

/// Rank 0: waits until every rank said hello (at most `wait`); the ranks that did not.
pub fn wait_hellos(link: &Link, wait: Duration) -> Vec<u32> {
    let Some(m) = &link.monitor else {
        return Vec::new();
    };
    let deadline = Instant::now() + wait;
    loop {
        let missing: Vec<u32> = lock(&m.ranks)
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.hello)
            .map(|(r, _)| r as u32)
            .collect();
        if missing.is_empty() || Instant::now() >= deadline {
            return missing;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Rank 0: the watchdog thread. Judges every rank until the run ends normally ([`Link::bye`]);
/// on the first fault it ends the run and the process.
pub fn start_watchdog(link: &Arc<Link>) -> std::io::Result<()> {
    let Some(m) = link.monitor.clone() else {
        return Ok(());
    };
    m.armed.store(true, Ordering::SeqCst);
    let link = Arc::clone(link);
    std::thread::Builder::new()
        .name("iolab-watch".into())
        .spawn(move || {
            let mut beat_at = Instant::now();
            loop {
                // a closed connection wakes it at once; silences are judged 4 times a second
                {
                    let all = lock(&m.ranks);
                    let armed = m.armed.load(Ordering::SeqCst);
                    if !(armed && all.iter().any(|s| s.closed && !s.bye)) {
                        let _ = m.closed.wait_timeout(all, Duration::from_millis(250));
                    }
                }
                if beat_at.elapsed() >= BEAT {
                    // rank 0's heartbeat: the other ranks end should rank 0 stop or hang
                    beat_at = Instant::now();
                    for s in lock(&m.ranks).iter_mut() {
                        if let Some(c) = s.conn.as_mut() {
                            let _ = c.write_all(b"beat\n");
                        }
                    }
                }
                if !m.armed.load(Ordering::SeqCst) {
                    continue;
                }
                link.beat();
                if let Some(f) = judge(&m) {
                    // unless rank 0's main thread just took the outcomes from the gather
                    if m.armed.swap(false, Ordering::SeqCst) {
                        let code = end_early(&link, &m, f);
                        std::process::exit(code);
                    }
                }
            }
        })?;
    Ok(())
}

/// The first rank found gone or hung, if any.
fn judge(m: &Monitor) -> Option<Fault> {
    let t = m.timeout();
    let all = lock(&m.ranks);
    let fault = |r: usize, reason: String| Fault {
        rank: r as u32,
        host: all[r].host.clone(),
        reason,
    };
    for (r, s) in all.iter().enumerate() {
        if r == 0 || s.bye {
            continue;
        }
        if s.closed {
            return Some(fault(
                r,
                format!(
                    "killed or exited (its connection to rank 0 closed) while {}",
                    phase_name(s.phase)
                ),
            ));
        }
        if s.beat_at.elapsed() > t {
            return Some(fault(
                r,
                format!(
                    "no heartbeat for {} s (stopped or hung) while {}",
                    t.as_secs_f64(),
                    phase_name(s.phase)
                ),
            ));
        }
    }
    for (r, s) in all.iter().enumerate() {
        if s.phase == MEASURING && !s.bye && s.ops_at.elapsed() > t {
            return Some(fault(
                r,
                format!(
                    "no I/O completed for {} s while measuring (I/O that does not return)",
                    t.as_secs_f64()
                ),
            ));
        }
    }
    None
}

/// Tells every rank to stop, waits (at most [`SETTLE`]) for their last cells, and hands every
/// rank's outcome to the command: the faulty rank's reason, each other rank's document so far
/// (or "stopped" when it had measured nothing). Returns the exit code.
fn end_early(link: &Link, m: &Monitor, f: Fault) -> i32 {
    for s in lock(&m.ranks).iter_mut() {
        if let Some(c) = s.conn.as_mut() {
            let _ = c.write_all(STOP.as_bytes());
        }
    }
    link.abort_here();
    let deadline = Instant::now() + SETTLE;
    while Instant::now() < deadline {
        link.beat();
        let settled = lock(&m.ranks)
            .iter()
            .enumerate()
            .all(|(r, s)| r == f.rank as usize || s.bye || s.closed || s.phase >= WAITING);
        if settled {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if lock(&m.ranks)[0].phase >= WAITING {
        // This rank's workers have stopped. The SIGTERM the launcher sends 1 s after a death
        // would end this process at once while its stop flag is set (a second Ctrl-C): cleared,
        // that signal only sets it again, and the save below has until the SIGKILL.
        link.release_stop();
    }
    let handler = lock(&m.on_fault).take();
    match handler {
        Some(Handler::Run(h)) => h(
            outcomes(m, &f, link.epoch(), |d| match d {
                SoFar::Run(d) => Some(*d),
                SoFar::Db(_) => None,
            }),
            &f,
        ),
        Some(Handler::Db(h)) => h(
            outcomes(m, &f, link.epoch(), |d| match d {
                SoFar::Db(d) => Some(*d),
                SoFar::Run(_) => None,
            }),
            &f,
        ),
        None => {
            eprintln!("iolab: error: rank {} on {}: {}", f.rank, f.host, f.reason);
            crate::error::Exit::Failed as i32
        }
    }
}

/// Every rank's outcome when rank 0 ends a run early: the faulty rank's reason, each other
/// rank's document so far in the current run or experiment point `epoch` (`pick`: of the
/// command's kind), or "stopped" when it had measured nothing there.
fn outcomes<T>(
    m: &Monitor,
    f: &Fault,
    epoch: u64,
    pick: fn(SoFar) -> Option<T>,
) -> Vec<Outcome<T>> {
    lock(&m.ranks)
        .iter_mut()
        .enumerate()
        .map(|(r, s)| Outcome {
            rank: r as u32,
            host: s.host.clone(),
            result: if r == f.rank as usize {
                Err(Failed {
                    exit: crate::error::Exit::Failed as i32,
                    msg: f.reason.clone(),
                })
            } else {
                s.done
                    .take()
                    .filter(|d| d.0 == epoch)
                    .and_then(|d| pick(d.1))
                    .ok_or_else(|| Failed {
                        exit: crate::error::Exit::Interrupted as i32,
                        msg: crate::engine::checkpoints::STOPPED.to_string(),
                    })
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(n: u32) -> (Arc<Link>, Vec<Arc<Link>>) {
        let (l, addrs) = listen().unwrap();
        let zero = serve(l, n, "h0", &addrs).unwrap();
        let others: Vec<Arc<Link>> = (1..n)
            .map(|r| connect(&addrs, r, &format!("h{r}")).unwrap())
            .collect();
        assert!(wait_hellos(&zero, CONNECT).is_empty());
        (zero, others)
    }

    /// Rank 0's side-channel address in `info` (the loopback one).
    fn port_of(info: &str) -> SocketAddr {
        info.split_once(';')
            .unwrap()
            .1
            .split(',')
            .filter_map(|a| a.parse::<SocketAddr>().ok())
            .find(|a| a.ip().is_loopback())
            .unwrap()
    }

    /// Reads until rank 0 closes the connection: true when it did (EOF or reset) before the
    /// test's own limit, far above rank 0's handshake time.
    fn closed_by_rank_0(mut c: TcpStream) -> bool {
        use std::io::Read;
        c.set_read_timeout(Some(HELLO_TIME * 6)).unwrap();
        let mut b = [0u8; 256];
        loop {
            match c.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
    }

    /// Connections to rank 0's port that are not ranks of this run: garbage, an endless line,
    /// nothing at all, a hello without the token, a replayed hello of a rank already there. Each
    /// is dropped (rank 0 reads at most [`HELLO_MAX`] of it, waits at most [`HELLO_TIME`]), none
    /// counts as a rank or changes one, and the real rank still joins.
    #[test]
    fn strangers_on_rank_0s_port_are_dropped_and_change_nothing() {
        let (l, info) = listen().unwrap();
        let zero = serve(l, 3, "h0", &info).unwrap();
        let m = zero.monitor.clone().unwrap();
        let at = port_of(&info);
        // garbage, then a valid-looking hello after it: dropped at the first line
        let mut g = TcpStream::connect(at).unwrap();
        g.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(closed_by_rank_0(g), "garbage was not dropped");
        // an endless line: rank 0 stops reading after HELLO_MAX bytes and closes
        let mut huge = TcpStream::connect(at).unwrap();
        huge.set_write_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let chunk = vec![b'x'; 1 << 20];
        let mut sent = 0usize;
        while sent < 256 << 20 {
            match huge.write(&chunk) {
                Ok(n) => sent += n,
                Err(_) => break,
            }
        }
        assert!(
            sent < 256 << 20,
            "rank 0 took {sent} bytes of a line that never ends"
        );
        // nothing at all: closed after the handshake time, while a real rank joins meanwhile
        let silent = TcpStream::connect(at).unwrap();
        // a hello with a made-up proof
        let forged = serde_json::to_vec(&Up::Hello {
            rank: 1,
            host: "evil".into(),
            nonce: "00".into(),
            proof: "11".repeat(32),
        })
        .unwrap();
        let mut f = TcpStream::connect(at).unwrap();
        f.write_all(&forged).unwrap();
        f.write_all(b"\n").unwrap();
        assert!(closed_by_rank_0(f), "a forged hello was not dropped");
        assert!(!lock(&m.ranks)[1].hello, "a forged hello counted");
        let one = connect(&info, 1, "h1").unwrap();
        let two = connect(&info, 2, "h2").unwrap();
        assert!(wait_hellos(&zero, CONNECT).is_empty());
        assert_eq!(lock(&m.ranks)[1].host, "h1");
        // a second hello of rank 1 (a replay, or another process with the token) is dropped
        let (token, _) = info.split_once(';').unwrap();
        let nonce = "ab".to_string();
        let proof = auth::tag_hex(token.as_bytes(), &refs(&hello_parts(1, "h1", &nonce)));
        let mut again = TcpStream::connect(at).unwrap();
        let mut line = serde_json::to_vec(&Up::Hello {
            rank: 1,
            host: "h1".into(),
            nonce,
            proof,
        })
        .unwrap();
        line.push(b'\n');
        again.write_all(&line).unwrap();
        assert!(closed_by_rank_0(again), "a second hello was not dropped");
        assert!(closed_by_rank_0(silent), "a silent connection was kept");
        m.armed.store(true, Ordering::SeqCst);
        assert!(judge(&m).is_none(), "a stranger changed a rank");
        drop((one, two));
    }

    #[test]
    fn a_rank_skips_an_address_where_another_runs_rank_0_listens() {
        let (la, info_a) = listen().unwrap();
        let (lb, info_b) = listen().unwrap();
        let a = serve(la, 2, "a0", &info_a).unwrap();
        let b = serve(lb, 2, "b0", &info_b).unwrap();
        // run B's token, run A's address first
        let (token_b, addrs_b) = info_b.split_once(';').unwrap();
        let addr_a = info_a.split_once(';').unwrap().1.split(',').next().unwrap();
        let link = connect(&format!("{token_b};{addr_a},{addrs_b}"), 1, "h1").unwrap();
        assert!(
            wait_hellos(&b, CONNECT).is_empty(),
            "run B's rank 0 got the hello"
        );
        assert_eq!(wait_hellos(&a, Duration::from_millis(200)), vec![1]);
        drop(link);
    }

    #[test]
    fn a_closed_connection_without_goodbye_is_a_fault_naming_the_rank_and_host() {
        let (zero, others) = pair(3);
        let m = zero.monitor.clone().unwrap();
        m.armed.store(true, Ordering::SeqCst);
        assert!(judge(&m).is_none());
        others[0].bye();
        // rank 1 said goodbye: its closing is normal; rank 2 just closes (as when killed)
        for l in &others {
            let s = lock(l.up.as_ref().unwrap());
            s.shutdown(std::net::Shutdown::Both).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        let f = loop {
            if let Some(f) = judge(&m) {
                break f;
            }
            assert!(Instant::now() < deadline, "no fault seen");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!((f.rank, f.host.as_str()), (2, "h2"));
        assert!(f.reason.starts_with("killed or exited"), "{}", f.reason);
    }

    #[test]
    fn silence_and_stalled_io_are_faults_after_the_timeout() {
        let (zero, others) = pair(2);
        let m = zero.monitor.clone().unwrap();
        zero.set_timeout(Duration::from_millis(1));
        // a rank whose last beat is older than the timeout
        lock(&m.ranks)[1].beat_at = Instant::now() - Duration::from_secs(1);
        let f = judge(&m).unwrap();
        assert_eq!(f.rank, 1);
        assert!(f.reason.starts_with("no heartbeat"), "{}", f.reason);
        // rank 0 measuring with counters that do not grow
        m.beat(1, WAITING, 0);
        zero.measuring(vec![Arc::new(LiveCounters::default())]);
        lock(&m.ranks)[0].ops_at = Instant::now() - Duration::from_secs(1);
        let f = judge(&m).unwrap();
        assert_eq!(f.rank, 0);
        assert!(f.reason.starts_with("no I/O completed"), "{}", f.reason);
        drop(others);
    }

    /// A run document as a rank sends it (the report fixture's).
    fn so_far() -> SoFar {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/report/run.json")).unwrap();
        SoFar::Run(Box::new(Done {
            doc: crate::model::run::RunDoc::from_json(&v).unwrap(),
            hists: Vec::new(),
            windows: Vec::new(),
        }))
    }

    #[test]
    fn a_document_of_an_earlier_experiment_point_is_never_taken() {
        let (zero, others) = pair(3);
        let m = zero.monitor.clone().unwrap();
        let fault = Fault {
            rank: 2,
            host: "h2".into(),
            reason: "test".into(),
        };
        let sent = |n: usize| {
            let deadline = Instant::now() + Duration::from_secs(5);
            while lock(&m.ranks)[1].done.is_none() {
                assert!(Instant::now() < deadline, "progress {n} did not arrive");
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        // point 1: rank 1 measured and sent its document
        for l in [&zero, &others[0], &others[1]] {
            l.arm();
        }
        others[0].progress(so_far());
        sent(1);
        // point 2: a rank fails before rank 1 sent anything of it
        for l in [&zero, &others[0], &others[1]] {
            l.arm();
        }
        let out = outcomes(&m, &fault, zero.epoch(), Some);
        let r1 = out[1]
            .result
            .as_ref()
            .err()
            .expect("not point 1's document");
        assert!(r1.only_stopped(), "{}", r1.msg);
        assert_eq!(out[2].result.as_ref().err().unwrap().msg, "test");
        // rank 1's document of point 2 is taken
        others[0].progress(so_far());
        sent(2);
        let out = outcomes(&m, &fault, zero.epoch(), Some);
        assert!(out[1].result.is_ok());
    }

    #[test]
    fn a_stop_from_rank_0_sets_each_ranks_stop_flag() {
        let (zero, others) = pair(2);
        let flag = Arc::new(AtomicBool::new(false));
        others[0].watch_stop(Arc::clone(&flag));
        let m = zero.monitor.clone().unwrap();
        others[0].set_phase(PARKED);
        let code = end_early(
            &zero,
            &m,
            Fault {
                rank: 1,
                host: "h1".into(),
                reason: "test".into(),
            },
        );
        assert_eq!(code, crate::error::Exit::Failed as i32);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !flag.load(Ordering::Relaxed) {
            assert!(Instant::now() < deadline, "the stop did not arrive");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(others[0].aborted() && zero.aborted());
    }
}
