//! `iolab crashcheck`: diskchecker.pl's protocol. A writer puts checksummed records into a
//! preallocated file, syncs each one, and reports it to a journal (a listener on another host, or
//! a file on another device) before writing the next; after a power cut, `verify` reads back
//! every acknowledged record. The record format and the classification are in
//! `model::crashcheck`; the protocol and an example session in docs/verify.md.
//!
//! Protocol (TCP, one line each way, `\n`-terminated; every writer line ends with ` mac=TAG`,
//! the HMAC-SHA256 of the run, the line's index and its text under the run's key, which only
//! the writer and `verify` hold: the listener keeps lines, `verify` authenticates them):
//! ```text
//! writer   -> HELLO iolab-crashcheck/2 run=.. key=FINGERPRINT host=.. bs=.. size=.. sync=.. file=.. mac=..
//! listener <- OK                      (journal created and synced)
//! writer   -> ACK seq offset crc mac=..   (after the record's write + sync returned)
//! listener <- OK                      (line appended to the journal and fdatasync'd)
//! writer   -> FAIL seq offset why mac=..  (the record's write or sync failed: not acknowledged)
//! writer   -> END n mac=..            (the writer stopped on its own after n acknowledgements)
//! verify   -> GET RUN
//! listener <- JOURNAL nbytes, then the journal's bytes    (or ERR why)
//! ```

use crate::error::{Error, Result};
use crate::measure::peer::{self, Line};
use crate::measure::wake::{SignalWake, Woke};
use crate::model::crashcheck::{
    self as cc, Ack, Block, Class, CrashDoc, Hello, IoFailure, Journal, Problem, RunKey, Stop,
    VerifyOut, WriteOut,
};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How each record is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    Fsync,
    Fdatasync,
    /// O_DSYNC: each write returns once the data is durable
    Dsync,
    /// O_DIRECT | O_DSYNC
    DirectDsync,
}

impl SyncMode {
    pub const NAMES: [&'static str; 4] = ["fsync", "fdatasync", "dsync", "direct-dsync"];
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
    pub fn parse(s: &str) -> Option<SyncMode> {
        Some(match s {
            "fsync" => SyncMode::Fsync,
            "fdatasync" => SyncMode::Fdatasync,
            "dsync" => SyncMode::Dsync,
            "direct-dsync" => SyncMode::DirectDsync,
            _ => return None,
        })
    }
}

/// Where acknowledgements go and where verify reads them.
#[derive(Debug, Clone)]
pub enum JournalAt {
    /// a listener, `HOST:PORT`
    Tcp(String),
    /// a journal file (on another device than the data)
    File(PathBuf),
}

impl JournalAt {
    pub fn describe(&self) -> String {
        match self {
            JournalAt::Tcp(a) => format!("tcp://{a}"),
            JournalAt::File(p) => p.display().to_string(),
        }
    }
}

fn io_err(what: impl std::fmt::Display, e: std::io::Error) -> Error {
    Error::failed(format!("{what}: {e}"))
}

fn errno_text(e: &std::io::Error) -> String {
    let name = match e.raw_os_error() {
        Some(libc::EIO) => "EIO",
        Some(libc::ENOSPC) => "ENOSPC",
        Some(libc::EROFS) => "EROFS",
        Some(libc::EDQUOT) => "EDQUOT",
        Some(libc::EINVAL) => "EINVAL",
        _ => "error",
    };
    let s = e.to_string();
    format!("{name} ({})", s.split(" (os error").next().unwrap_or(&s))
}

// ---------------------------------------------------------------------------------------------
// The journal a writer reports to.

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the writer waits for one OK; a listener slower than this is taken as gone.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The writer's side of a journal: a listener connection or a local journal file, and the run's
/// key that seals every line with its index.
pub struct Sink {
    to: SinkTo,
    key: RunKey,
    /// the index of the next line (0: the HELLO)
    next: u64,
}

enum SinkTo {
    Tcp {
        w: TcpStream,
        r: BufReader<TcpStream>,
    },
    File(File),
}

fn connect(addr: &str) -> Result<TcpStream> {
    let addrs: Vec<_> = addr
        .to_socket_addrs()
        .map_err(|e| {
            Error::usage(format!(
                "{addr}: not a HOST:PORT this machine can resolve ({e})"
            ))
        })?
        .collect();
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::usage(format!(
        "the listener at {addr} cannot be reached ({}); start `iolab crashcheck listen --port P` there first. Nothing was written",
        last.map(|e| e.to_string())
            .unwrap_or_else(|| "no address".into())
    )))
}

impl Sink {
    /// Opens the journal and records the run's HELLO there (durably) before anything is
    /// written: an unreachable listener or an unwritable journal is a usage error (exit 2).
    pub fn open(at: &JournalAt, hello: &Hello, key: &RunKey) -> Result<Sink> {
        let to = match at {
            JournalAt::Tcp(addr) => {
                let w = connect(addr)?;
                let _ = w.set_nodelay(true);
                let _ = w.set_read_timeout(Some(ANSWER_TIMEOUT));
                let r = BufReader::new(
                    w.try_clone()
                        .map_err(|e| io_err(format!("the listener at {addr}"), e))?,
                );
                SinkTo::Tcp { w, r }
            }
            JournalAt::File(p) => {
                let f = OpenOptions::new()
                    .append(true)
                    .create_new(true)
                    .open(p)
                    .map_err(|e| {
                        Error::usage(format!(
                            "--journal {}: {e} (a new file is needed per run)",
                            p.display()
                        ))
                    })?;
                if let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                    let _ = File::open(parent).and_then(|d| d.sync_all());
                }
                SinkTo::File(f)
            }
        };
        let mut s = Sink {
            to,
            key: key.clone(),
            next: 0,
        };
        s.send(&hello.line()).map_err(|e| Error::usage(e.msg))?;
        Ok(s)
    }

    /// Sends one line, sealed with the run's key and its index, and returns once it is durable
    /// in the journal (the listener's OK).
    pub fn send(&mut self, text: &str) -> Result<()> {
        let line = self.key.seal(self.next, text) + "\n";
        self.next += 1;
        match &mut self.to {
            SinkTo::File(f) => {
                f.write_all(line.as_bytes())
                    .and_then(|_| f.sync_data())
                    .map_err(|e| io_err("the journal", e))?;
            }
            SinkTo::Tcp { w, r } => {
                w.write_all(line.as_bytes())
                    .map_err(|e| io_err("the listener", e))?;
                let mut ans = Vec::new();
                match peer::read_line(r, &mut ans, 4096, None) {
                    Ok(Line::Done) => {}
                    Ok(Line::Eof) => {
                        return Err(Error::failed("the listener closed the connection"));
                    }
                    Ok(_) => return Err(Error::failed("the listener answered a line too long")),
                    Err(e) => return Err(io_err("the listener", e)),
                }
                let ans = String::from_utf8_lossy(&ans);
                if ans.trim_end() != "OK" {
                    return Err(Error::failed(format!(
                        "the listener answered {:?}",
                        ans.trim_end()
                    )));
                }
            }
        }
        Ok(())
    }
}

/// A new run key: 32 bytes from the operating system's random source (through `rand`'s
/// thread generator, ChaCha reseeded from getrandom), under a random run id.
pub fn new_run_key() -> RunKey {
    RunKey {
        run: format!("{:016x}", new_run_id()),
        key: rand::random(),
    }
}

/// Keeps a run's key in `path`: a new file (O_EXCL, never through a symlink), mode 0600, synced
/// with its directory, before anything is written.
pub fn save_key(path: &Path, key: &RunKey, data_file: &str) -> Result<()> {
    let what = |e: std::io::Error| {
        Error::usage(format!(
            "--key-file {}: {e} (a new file is made per run)",
            path.display()
        ))
    };
    let parent = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(what)?;
    f.write_all(key.file_line(data_file).as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(what)?;
    File::open(parent)
        .and_then(|d| d.sync_all())
        .map_err(what)?;
    Ok(())
}

/// Reads a key file `save_key` wrote: the key and the data file it was made for.
pub fn load_key(path: &Path) -> Result<(RunKey, String)> {
    let bad = |why: String| Error::usage(format!("--key-file {}: {why}", path.display()));
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| bad(e.to_string()))?;
    let m = f.metadata().map_err(|e| bad(e.to_string()))?;
    // SAFETY: geteuid has no failure mode.
    let me = unsafe { libc::geteuid() };
    if !m.is_file() || m.uid() != me || m.mode() & 0o077 != 0 {
        return Err(bad(format!(
            "a key file is a regular file of uid {me} that only it can read (mode 0600)"
        )));
    }
    let mut text = String::new();
    f.take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|e| bad(e.to_string()))?;
    RunKey::parse_file(&text).ok_or_else(|| {
        Error::usage(format!(
            "--key-file {}: not a crashcheck key file (KEY {} run=.. key=.. file=..)",
            path.display(),
            crate::model::schema::CRASHCHECK_PROTOCOL
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// The writer.

pub struct WriteOpts {
    pub dir: PathBuf,
    pub record_bytes: u64,
    pub file_bytes: u64,
    pub sync: SyncMode,
    pub count: Option<u64>,
    pub time_s: Option<f64>,
}

/// A random run id (unpredictable, so nobody can take a run's journal name before it; never 0).
pub fn new_run_id() -> u64 {
    rand::random::<u64>().max(1)
}

/// Offsets in a scattered order that visits every block once before any repeats: block
/// `(start + i * stride) mod n` with `stride` coprime to `n`.
pub struct Offsets {
    n: u64,
    start: u64,
    stride: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Offsets {
    pub fn new(blocks: u64, run: u64) -> Offsets {
        let n = blocks.max(1);
        let mut stride = (n as f64 * 0.618_033_988_7) as u64 + (run % 97);
        stride = stride.max(1);
        while gcd(stride % n, n) != 1 && n > 1 {
            stride += 1;
        }
        Offsets {
            n,
            start: run % n,
            stride: stride % n.max(2),
        }
    }
    /// The block of the i-th record (i from 0).
    pub fn block(&self, i: u64) -> u64 {
        ((self.start as u128 + i as u128 * self.stride as u128) % self.n as u128) as u64
    }
}

/// A block-aligned buffer (O_DIRECT needs one).
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096).expect("layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            // as std's own allocations fail: an abort naming the size, not a panic
            std::alloc::handle_alloc_error(layout);
        }
        Aligned { ptr, layout }
    }
    fn buf(&mut self) -> &mut [u8] {
        // SAFETY: ptr is a live allocation of layout.size() bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

pub fn data_path(dir: &Path) -> PathBuf {
    dir.join(cc::DATA_FILE)
}

/// Refuses (exit 2) a data file name in `dir` that holds what iolab did not make: a symbolic
/// link, a fifo, a directory (checked before the journal is opened, so nothing is left).
pub fn check_data_file(dir: &Path) -> Result<()> {
    let t = crate::system::target::TargetDir::of(dir).map_err(|e| io_err(dir.display(), e))?;
    t.entry(cc::DATA_FILE).map(|_| ())
}

/// Creates the data file afresh at its full size (allocated where the filesystem can) and makes
/// that durable, then opens it for the records with the sync mode's flags.
/// Through the directory's handle (system::target): a data file name that holds what iolab did
/// not make (a symbolic link, a fifo, a directory) is refused in one line (exit 2), never
/// removed or written through.
pub fn create_data_file(o: &WriteOpts) -> Result<File> {
    use crate::system::target::TargetDir;
    let p = data_path(&o.dir);
    let what = || p.display().to_string();
    let t = TargetDir::of(&o.dir).map_err(|e| io_err(o.dir.display(), e))?;
    t.entry(cc::DATA_FILE)?;
    t.remove(cc::DATA_FILE, false);
    let f = t
        .create_new(cc::DATA_FILE, 0)
        .map_err(|e| io_err(what(), e))?;
    // SAFETY: plain system call on an open descriptor.
    let _ = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, o.file_bytes as libc::off_t) };
    f.set_len(o.file_bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| io_err(what(), e))?;
    t.sync().map_err(|e| io_err(o.dir.display(), e))?;
    drop(f);
    let flags = match o.sync {
        SyncMode::Fsync | SyncMode::Fdatasync => 0,
        SyncMode::Dsync => libc::O_DSYNC,
        SyncMode::DirectDsync => libc::O_DSYNC | libc::O_DIRECT,
    };
    t.open_existing(cc::DATA_FILE, true, flags).map_err(|e| {
        t.remove(cc::DATA_FILE, true);
        if e.raw_os_error() == Some(libc::EINVAL) {
            Error::usage(format!(
                "--sync {}: {} refuses O_DIRECT; use --sync dsync",
                o.sync.name(),
                o.dir.display()
            ))
        } else {
            io_err(what(), e)
        }
    })
}

fn sync_call(f: &File, mode: SyncMode) -> std::io::Result<()> {
    match mode {
        SyncMode::Fsync => f.sync_all(),
        SyncMode::Fdatasync => f.sync_data(),
        SyncMode::Dsync | SyncMode::DirectDsync => Ok(()),
    }
}

/// Writes records until `--count`, `--time`, a stop signal, an I/O error or a lost listener.
/// Each record is written and synced, then acknowledged to `sink`, and only then is the next
/// one written. A failed sync is never retried into an acknowledgement: the run stops there.
/// `tell` hears one line per event worth a line (the failure).
pub fn write(
    o: &WriteOpts,
    run: u64,
    f: &File,
    sink: &mut Sink,
    stop: &AtomicBool,
    tell: &dyn Fn(&str),
) -> WriteOut {
    let blocks = o.file_bytes / o.record_bytes;
    let offsets = Offsets::new(blocks, run);
    let mut buf = Aligned::new(o.record_bytes as usize);
    let t0 = Instant::now();
    let mut written = 0u64;
    let mut acked = 0u64;
    let mut failure = None;
    let stopped = loop {
        if o.count.is_some_and(|c| acked >= c) {
            break Stop::Count;
        }
        if o.time_s.is_some_and(|t| t0.elapsed().as_secs_f64() >= t) {
            break Stop::Time;
        }
        if stop.load(Ordering::Relaxed) {
            break Stop::Interrupted;
        }
        let seq = written + 1;
        let offset = offsets.block(written) * o.record_bytes;
        let crc = cc::encode(buf.buf(), run, seq, offset);
        let res = f
            .write_all_at(buf.buf(), offset)
            .map_err(|e| ("write", e))
            .and_then(|_| {
                sync_call(f, o.sync).map_err(|e| {
                    (
                        if o.sync == SyncMode::Fsync {
                            "fsync"
                        } else {
                            "fdatasync"
                        },
                        e,
                    )
                })
            });
        written += 1;
        if let Err((call, e)) = res {
            // fsyncgate: the kernel reports a writeback error once; a second sync that returns
            // 0 says nothing about this record. It is not acknowledged, and nothing after it is.
            let second = match o.sync {
                SyncMode::Fsync => f.sync_all(),
                _ => f.sync_data(),
            };
            let second_sync = Some(match &second {
                Ok(()) => "ok".to_string(),
                Err(e) => errno_text(e),
            });
            let fail = IoFailure {
                seq,
                offset_bytes: offset,
                call: call.into(),
                error: errno_text(&e),
                second_sync,
            };
            tell(&failure_line(&fail, o.sync));
            let _ = sink.send(&format!("FAIL {seq} {offset} {call} {}", fail.error));
            failure = Some(fail);
            break Stop::IoError;
        }
        if let Err(e) = sink.send(&cc::ack_line(&Ack {
            seq,
            offset,
            checksum: crc,
        })) {
            tell(&format!(
                "record {seq} was written and synced but could not be acknowledged: {e}; stopping"
            ));
            break Stop::ListenerLost;
        }
        acked += 1;
    };
    if stopped != Stop::ListenerLost {
        let _ = sink.send(&format!("END {acked}"));
    }
    let elapsed_s = t0.elapsed().as_secs_f64();
    WriteOut {
        written,
        acknowledged: acked,
        elapsed_s,
        acks_per_sec: if elapsed_s > 0.0 {
            acked as f64 / elapsed_s
        } else {
            0.0
        },
        stopped,
        failure,
    }
}

/// The one line a failed write or sync gets.
pub fn failure_line(f: &IoFailure, mode: SyncMode) -> String {
    let mut s = format!(
        "record {} at offset {}: {} failed: {}",
        f.seq, f.offset_bytes, f.call, f.error
    );
    match f.second_sync.as_deref() {
        Some("ok") => s.push_str(&format!(
            "; a second {} then returned success, which proves nothing (the error is reported once and the data may be gone)",
            if mode == SyncMode::Fsync { "fsync" } else { "fdatasync" }
        )),
        Some(e) => s.push_str(&format!("; a second sync failed too: {e}")),
        None => {}
    }
    s.push_str(&format!(
        "; record {} is not acknowledged and the run stops",
        f.seq
    ));
    s
}

// ---------------------------------------------------------------------------------------------
// The listener.

fn journal_file(dir: &Path, run: &str) -> PathBuf {
    dir.join(format!("{run}.journal"))
}

/// Connections served at once; more are closed at once with a line (a flood of clients costs
/// bounded threads and memory: at most this many lines of [`cc::MAX_LINE`]).
const MAX_CONNECTIONS: usize = 64;

/// Serves writers (one journal per run) and verifiers until `stop` is set or `wake` sees its
/// signal; between connections it sleeps in poll(2) on the socket and `wake`. `say` hears one line
/// per connection that ends.
pub fn listen(
    l: TcpListener,
    dir: &Path,
    stop: &AtomicBool,
    wake: &SignalWake,
    say: &(dyn Fn(&str) + Sync),
) -> Result<()> {
    l.set_nonblocking(true)
        .map_err(|e| io_err("the listening socket", e))?;
    let busy = AtomicUsize::new(0);
    let busy = &busy;
    std::thread::scope(|s| {
        while !stop.load(Ordering::Relaxed) {
            match l.accept() {
                Ok((c, peer)) => {
                    if busy.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                        say(&format!(
                            "{peer}: {MAX_CONNECTIONS} connections are being served already; connection closed"
                        ));
                        continue;
                    }
                    let _ = c.set_nonblocking(false);
                    busy.fetch_add(1, Ordering::SeqCst);
                    // A connection the listener has no thread for (a thread limit) is refused
                    // (closed), said, and the listener goes on.
                    let started = std::thread::Builder::new().spawn_scoped(s, move || {
                        if let Err(e) = serve(c, dir, stop, say) {
                            say(&format!("{peer}: {e}"));
                        }
                        busy.fetch_sub(1, Ordering::SeqCst);
                    });
                    if let Err(e) = started {
                        busy.fetch_sub(1, Ordering::SeqCst);
                        say(&format!(
                            "{peer}: no thread to serve it ({e}); connection closed"
                        ));
                    }
                }
                // asleep until a connection or the stop's signal (no polling)
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    match wake.wait(Some(l.as_fd()), None) {
                        Ok(Woke::Signal) => stop.store(true, Ordering::Relaxed),
                        Ok(_) => {}
                        Err(e) => {
                            say(&format!("waiting for connections: {e}"));
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
                Err(e) => say(&format!("accept: {e}")),
            }
        }
    });
    Ok(())
}

/// The line a listener drops a connection with when a line is longer than [`cc::MAX_LINE`].
fn too_long() -> String {
    format!(
        "a line longer than {} KiB: connection dropped",
        cc::MAX_LINE / 1024
    )
}

/// One connection: a writer's run (HELLO, then ACK/FAIL/END lines) or a verifier's GET. Ends
/// when the peer closes it, sends its END, or `stop` is set. Every line is bounded
/// ([`cc::MAX_LINE`]) and the first one must come within [`ANSWER_TIMEOUT`]; a line that is not
/// the protocol's ends the connection with one line. The lines' tags are kept as they came:
/// only `verify`, which holds the run's key, can check them.
fn serve(
    c: TcpStream,
    dir: &Path,
    stop: &AtomicBool,
    say: &dyn Fn(&str),
) -> std::result::Result<(), String> {
    let peer = c
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let mut w = c.try_clone().map_err(|e| e.to_string())?;
    let mut r = BufReader::new(c);
    let mut first = Vec::new();
    // a client that says nothing, or trickles, is not waited for forever
    match peer::read_line(
        &mut r,
        &mut first,
        cc::MAX_LINE,
        Some(Instant::now() + ANSWER_TIMEOUT),
    )
    .map_err(|e| e.to_string())?
    {
        Line::Done => {}
        Line::Eof => return Ok(()),
        Line::TooLong => return Err(too_long()),
        Line::Late => {
            return Err(format!(
                "no first line in {} s: connection dropped",
                ANSWER_TIMEOUT.as_secs()
            ));
        }
    }
    let first = String::from_utf8_lossy(&first);
    let first = first.trim_end_matches('\n');
    if let Some(run) = first.strip_prefix("GET ") {
        let reply = match find_journal(dir, run) {
            Ok((_, text)) => {
                let mut v = format!("JOURNAL {}\n", text.len()).into_bytes();
                v.extend_from_slice(text.as_bytes());
                v
            }
            Err(e) => format!("ERR {e}\n").into_bytes(),
        };
        return w.write_all(&reply).map_err(|e| e.to_string());
    }
    let Some(hello) = cc::split_mac(first).and_then(|(t, _)| Hello::parse(t)) else {
        let _ = w.write_all(
            format!(
                "ERR expected HELLO {} ... mac=.. or GET RUN\n",
                crate::model::schema::CRASHCHECK_PROTOCOL
            )
            .as_bytes(),
        );
        return Err(format!(
            "not a crashcheck client of {}: {:?}",
            crate::model::schema::CRASHCHECK_PROTOCOL,
            first.chars().take(80).collect::<String>()
        ));
    };
    let path = journal_file(dir, &hello.run);
    let mut j = OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| {
            let _ = w.write_all(format!("ERR {}: {e}\n", path.display()).as_bytes());
            format!("{}: {e}", path.display())
        })?;
    let durable = |j: &mut File, line: &str| -> std::result::Result<(), String> {
        j.write_all(format!("{line}\n").as_bytes())
            .and_then(|_| j.sync_data())
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    durable(&mut j, first)?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    w.write_all(b"OK\n").map_err(|e| e.to_string())?;
    let (mut acks, mut end) = (0u64, None);
    // wake up now and then to see whether the listener is being stopped
    let _ = r
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(500)));
    let mut line = Vec::new();
    let mut dropped = None;
    while end.is_none() {
        match peer::read_line(&mut r, &mut line, cc::MAX_LINE, None) {
            Ok(Line::Done) => {}
            Ok(Line::TooLong) => {
                dropped = Some(too_long());
                break;
            }
            Ok(_) => break,
            // a partial line stays in `line` and is completed by the next read
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                continue;
            }
            Err(_) => break,
        }
        let l = String::from_utf8_lossy(&std::mem::take(&mut line)).into_owned();
        let l = l.trim_end_matches('\n');
        if !cc::is_report_line(l) {
            let _ = w.write_all(b"ERR expected ACK, FAIL or END with mac=\n");
            dropped = Some(format!(
                "not a report line: {:?}: connection dropped",
                l.chars().take(80).collect::<String>()
            ));
            break;
        }
        if let Err(e) = durable(&mut j, l) {
            let _ = w.write_all(format!("ERR {e}\n").as_bytes());
            return Err(e);
        }
        if l.starts_with("ACK ") {
            acks += 1;
        }
        if l.starts_with("END ") {
            end = Some(());
        }
        if w.write_all(b"OK\n").is_err() {
            break;
        }
    }
    say(&format!(
        "run {} from {} ({peer}): {acks} acknowledged, {}",
        hello.run,
        hello.host,
        match (&dropped, end) {
            (Some(why), _) => why.as_str(),
            (None, Some(_)) => "ended",
            (None, None) => "connection lost without END (killed, crashed or power cut?)",
        }
    ));
    Ok(())
}

/// The journal of run `run` (16 hex digits).
fn find_journal(dir: &Path, run: &str) -> std::result::Result<(PathBuf, String), String> {
    if !cc::is_run_id(run) {
        return Err(format!(
            "{:?} is not a run id (16 hex digits)",
            run.chars().take(40).collect::<String>()
        ));
    }
    let p = journal_file(dir, run);
    std::fs::read_to_string(&p)
        .map(|t| (p, t))
        .map_err(|_| format!("no journal of run {run} here"))
}

/// Reads run `run`'s journal: from a listener (`GET RUN`) or a local file. What a listener
/// sends is read as it arrives (no buffer of the size it announces).
pub fn fetch_journal(at: &JournalAt, run: &str) -> Result<String> {
    match at {
        // a regular file only (not /dev/zero or a FIFO), at most 1 GiB (20 million records)
        JournalAt::File(p) => crate::spec::input::read_text(p, 1 << 30)
            .map_err(|e| Error::usage(format!("--journal {}: {e}", p.display()))),
        JournalAt::Tcp(addr) => {
            let mut c = connect(addr)?;
            let _ = c.set_read_timeout(Some(ANSWER_TIMEOUT));
            c.write_all(format!("GET {run}\n").as_bytes())
                .map_err(|e| io_err(format!("the listener at {addr}"), e))?;
            let mut r = BufReader::new(c);
            let mut head = Vec::new();
            peer::read_line(&mut r, &mut head, cc::MAX_LINE, None)
                .map_err(|e| io_err(format!("the listener at {addr}"), e))?;
            let head = String::from_utf8_lossy(&head);
            let head = head.trim_end();
            if let Some(e) = head.strip_prefix("ERR ") {
                return Err(Error::usage(format!("the listener at {addr}: {e}")));
            }
            let n: u64 = head
                .strip_prefix("JOURNAL ")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    Error::failed(format!("the listener at {addr} answered {head:?}"))
                })?;
            let mut v = Vec::new();
            r.take(n)
                .read_to_end(&mut v)
                .map_err(|e| io_err(format!("the listener at {addr}"), e))?;
            if (v.len() as u64) < n {
                return Err(Error::failed(format!(
                    "the listener at {addr} sent {} of the journal's {n} bytes",
                    v.len()
                )));
            }
            String::from_utf8(v)
                .map_err(|_| Error::failed(format!("the listener at {addr}: a journal not UTF-8")))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Verify.

const MAX_PROBLEMS: usize = 100;

/// Reads back the last acknowledged record of every offset in `file` and classifies it.
/// A missing data file counts every acknowledged record as lost.
pub fn verify(j: &Journal, file: &Path) -> Result<(VerifyOut, Vec<String>)> {
    let run = j
        .hello
        .run_id()
        .ok_or_else(|| Error::failed("the journal has no run id"))?;
    let bs = j.hello.record_bytes as usize;
    let mut warnings = Vec::new();
    let f = match File::open(file) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            warnings.push(format!(
                "{}: the data file is missing, although its creation was synced",
                file.display()
            ));
            None
        }
        Err(e) => return Err(io_err(file.display(), e)),
    };
    let mut buf = vec![0u8; bs];
    let mut out = VerifyOut {
        acknowledged: j.acks.len() as u64,
        checked: 0,
        ok: 0,
        overwritten: 0,
        lost: 0,
        corrupt: 0,
        misdirected: 0,
        writer: match (&j.failed, j.ended) {
            (Some((seq, _, why)), _) => format!("stopped at record {seq}: {why}"),
            (None, Some(n)) => format!("ended ({n} acknowledged)"),
            (None, None) => "no end recorded (killed, crashed or power cut)".into(),
        },
        problems: Vec::new(),
    };
    for a in j.last_per_offset() {
        buf.fill(0);
        if let Some(f) = &f {
            let mut got = 0;
            while got < bs {
                match f.read_at(&mut buf[got..], a.offset + got as u64) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) => return Err(io_err(format!("{} at {}", file.display(), a.offset), e)),
                }
            }
        }
        let block = cc::decode(&buf);
        let class = cc::classify(run, &a, block);
        out.checked += 1;
        match class {
            Class::Ok => out.ok += 1,
            Class::Overwritten => out.overwritten += 1,
            Class::Lost => out.lost += 1,
            Class::Corrupt => out.corrupt += 1,
            Class::Misdirected => out.misdirected += 1,
        }
        if class.is_failure() {
            out.problems.push(Problem {
                seq: a.seq,
                offset_bytes: a.offset,
                class,
                found: match block {
                    Block::Zeros => "zeros".into(),
                    Block::Garbage => "garbage (torn or damaged)".into(),
                    Block::Record(h) if h.run != run => {
                        format!("run {:016x} seq {}", h.run, h.seq)
                    }
                    Block::Record(h) => format!("seq {} (offset {})", h.seq, h.offset),
                },
            });
        }
    }
    // the first problems by seq: the earliest acknowledged writes the storage dropped
    out.problems.sort_by_key(|p| p.seq);
    out.problems.truncate(MAX_PROBLEMS);
    Ok((out, warnings))
}

/// A document of one phase, filled from the run's HELLO.
pub fn doc(phase: &str, h: &Hello, journal: &JournalAt, warnings: Vec<String>) -> CrashDoc {
    CrashDoc {
        schema: crate::model::schema::CRASHCHECK.into(),
        phase: phase.into(),
        run: h.run.clone(),
        key: Some(h.key.clone()),
        host: h.host.clone(),
        file: h.file.clone(),
        record_bytes: h.record_bytes,
        file_bytes: h.file_bytes,
        sync: h.sync.clone(),
        journal: journal.describe(),
        start_time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        warnings,
        write: None,
        verify: None,
    }
}

/// The warning when the journal would die with the data: a journal file on the data's device,
/// or a listener on this machine.
pub fn same_device_warning(dir: &Path, at: &JournalAt) -> Option<String> {
    match at {
        JournalAt::File(p) => {
            let parent = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let a = std::fs::metadata(dir).ok()?.dev();
            let b = std::fs::metadata(parent).ok()?.dev();
            (a == b).then(|| {
                format!(
                    "the journal {} is on the same device as {}: a power cut or a lying cache would lose it too, and acknowledged records would go unnoticed; put it on another device or use a listener on another host",
                    p.display(),
                    dir.display()
                )
            })
        }
        JournalAt::Tcp(addr) => {
            let local = addr.to_socket_addrs().ok()?.all(|a| a.ip().is_loopback());
            local.then(|| {
                format!(
                    "the listener {addr} is on this machine: fine for kill -9, but a power cut or VM reset takes its journal too unless it is on another device"
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_visit_every_block_once_per_pass() {
        for n in [1u64, 2, 7, 64, 1000, 4096] {
            let o = Offsets::new(n, 0xdead_beef);
            let mut seen: Vec<u64> = (0..n).map(|i| o.block(i)).collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len() as u64, n, "n={n}");
            assert_eq!(o.block(n), o.block(0));
        }
        // scattered, not sequential
        let o = Offsets::new(4096, 1);
        assert!((0..10).any(|i| o.block(i + 1) != o.block(i) + 1));
    }

    #[test]
    fn sync_modes_by_name() {
        for n in SyncMode::NAMES {
            assert_eq!(SyncMode::parse(n).unwrap().name(), n);
        }
        assert!(SyncMode::parse("sync").is_none());
    }
}
