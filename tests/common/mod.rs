//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod blk;
pub mod browser;
pub mod faultfs;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_iolab")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this is CI (`CI=true`), where every test must really run.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The one way a test skips: prints `SKIP: <test>: <reason>` on a line of its own (the line
/// scripts/test.sh counts; the leading newline ends cargo's progress dots). Under `CI=true` a
/// skip is a failure instead: CI has root, loop devices, cgroups, FUSE, the servers and Chromium.
/// Call it as `return skip(...)`.
pub fn skip(test: &str, reason: &str) {
    if in_ci() {
        panic!("CI=true: this test must run here: {test}: {reason}");
    }
    eprintln!("\nSKIP: {test}: {reason}");
}

/// Runs `cmd` as the unprivileged user nobody (uid/gid 65534, no supplementary groups), for
/// checks that root would pass by ignoring permissions.
pub fn as_nobody(cmd: &mut Command) -> &mut Command {
    std::os::unix::process::CommandExt::uid(cmd, NOBODY);
    std::os::unix::process::CommandExt::gid(cmd, NOBODY)
}

pub const NOBODY: u32 = 65534;

/// Longest [`interrupt_when`] waits for its condition.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Spawns `cmd` with stdout and stderr piped, waits until `ready(pid, stderr so far)` holds
/// (polled every 20 ms, at most [`READY_TIMEOUT`]), sends SIGINT (Ctrl-C) and returns the output.
/// The test fails with `what` in the message when the child ends first or the condition never
/// holds. Replaces a fixed sleep before the signal: slow machines wait longer, fast ones less.
pub fn interrupt_when(
    cmd: &mut Command,
    what: &str,
    mut ready: impl FnMut(u32, &str) -> bool,
) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iolab");
    let pid = child.id();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&stderr);
    let err_reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let text = || String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned();
    let t0 = Instant::now();
    loop {
        if ready(pid, &text()) {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let _ = err_reader.join();
            panic!("iolab ended ({status}) before {what}; stderr:\n{}", text());
        }
        if t0.elapsed() > READY_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            let _ = err_reader.join();
            panic!(
                "no {what} within {} s; stderr:\n{}",
                READY_TIMEOUT.as_secs(),
                text()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child, which has not been waited for (it is still running or a
    // zombie), so the pid is still ours.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    err_reader.join().unwrap();
    let stderr = std::mem::take(&mut *stderr.lock().unwrap());
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr,
    }
}

/// [`interrupt_when`] the child has printed `needle` on stderr.
pub fn interrupt_after_stderr(cmd: &mut Command, needle: &str) -> Output {
    interrupt_when(cmd, &format!("`{needle}` on stderr"), |_, e| {
        e.contains(needle)
    })
}

/// Whether a thread of process `pid` whose name starts with `prefix` (iolab's I/O workers are
/// `iolab-w0`, `iolab-w1`, ...) has completed a read system call: measuring has begun and at
/// least one operation is in. From /proc/PID/task/TID/{comm,io}.
pub fn thread_has_read(pid: u32, prefix: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        comm.starts_with(prefix)
            && std::fs::read_to_string(t.path().join("io"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.strip_prefix("syscr:"))
                .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
    })
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }
}

/// The exit code and text of a finished command.
pub fn to_run(o: Output) -> Run {
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs iolab with the arguments.
pub fn iolab(args: &[&str]) -> Run {
    iolab_db(&test_db(), args)
}

/// A results store private to this test process (tests that want their own pass --db).
pub fn test_db() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("iolab-test-{}.db", std::process::id()))
}

/// Runs iolab with the arguments against the store `db`.
pub fn iolab_db(db: &Path, args: &[&str]) -> Run {
    to_run(
        Command::new(bin())
            .args(args)
            .env("IOLAB_DB", db)
            .output()
            .expect("run iolab"),
    )
}

/// `iolab run --dir DIR --json --no-save -q <args>`; asserts exit 0 and returns the JSON.
pub fn run_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "run",
        "--dir",
        dir.to_str().unwrap(),
        "--json",
        "--no-save",
        "-q",
    ];
    a.extend_from_slice(args);
    let r = iolab(&a);
    assert_eq!(r.code, 0, "iolab {a:?} failed: {}", r.stderr);
    r.json()
}

pub fn ops(v: &serde_json::Value, op: &str) -> u64 {
    v["results"][op]["ops"]
        .as_u64()
        .unwrap_or_else(|| panic!("no results.{op}.ops in {v}"))
}

/// Names of the entries in a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The rule ids of each cell of an explanation (`iolab-explain/1`: `iolab explain --json`, or
/// the `explain` key of `run --explain --json`).
pub fn explain_rules(e: &serde_json::Value) -> Vec<Vec<String>> {
    assert_eq!(e["schema"], "iolab-explain/1", "{e}");
    e["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["rule"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

/// A database of its own on the test PostgreSQL server (IOLAB_TEST_PG_URL), dropped at the end.
pub struct PgDb {
    admin: String,
    name: String,
}

impl PgDb {
    /// None when no server is given (the caller skips).
    pub fn new() -> Option<PgDb> {
        let admin = std::env::var("IOLAB_TEST_PG_URL")
            .ok()
            .filter(|u| !u.is_empty())?;
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let name = format!(
            "iolab_store_{}_{}_{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        let mut c = postgres::Client::connect(&admin, postgres::NoTls).expect("test server");
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        Some(PgDb { admin, name })
    }
    /// The URL of this database (the server's URL with the database name replaced).
    pub fn url(&self) -> String {
        let (base, _) = self.admin.rsplit_once('/').unwrap();
        format!("{base}/{}", self.name)
    }
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls).unwrap()
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// VmHWM (the peak resident memory) of process `pid`, KiB: how much a process ever held, read
/// once after what might have grown it.
pub fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Writes `byte` to `c` (a line, a header that never ends) until `limit` bytes or until the peer
/// closes the connection; how many bytes it took.
pub fn send_until_closed(c: &mut std::net::TcpStream, byte: u8, limit: usize) -> usize {
    use std::io::Write;
    c.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
    let chunk = vec![byte; 1 << 20];
    let mut sent = 0;
    while sent < limit {
        match c.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    sent
}

/// Asserts a refusal of bad input (issue 24): exit 2, stderr exactly one line, starting
/// `iolab: error:` and containing `needle`, no panic.
pub fn assert_refused(r: &Run, needle: &str) {
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert!(
        r.code == 2
            && lines.len() == 1
            && lines[0].starts_with("iolab: error: ")
            && lines[0].contains(needle),
        "expected exit 2 and one `iolab: error:` line containing {needle:?}; got exit {}:\n{}",
        r.code,
        r.stderr
    );
}

/// Compares `got` with the snapshot `tests/snapshots/NAME`; `IOLAB_BLESS=1` (the one bless
/// variable of every generated or snapshot file: schemas, rule docs, snapshots) rewrites it.
pub fn assert_snapshot(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var("IOLAB_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, got).unwrap();
        eprintln!("IOLAB_BLESS=1: rewrote {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (IOLAB_BLESS=1 writes it)", path.display()));
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
        panic!(
            "{name} differs from tests/snapshots/{name} from line {} on; if the change is \
             intended, rewrite it with IOLAB_BLESS=1\n--- got\n{got}\n--- snapshot\n{want}",
            line + 1
        );
    }
}

/// Runs `cmd` for at most `limit`: its stdout and stderr go to files, never pipes, and every
/// process that carries its marker (an environment variable no other process has) is killed
/// with SIGKILL when it ends or the limit passes. fio's job processes call setsid(2), so they
/// leave `timeout`'s process group: a hung one (fio 3.33's io_submit_mode=offload here) kept the
/// test's output pipes open and the test waited forever. Exit code None: killed at the limit.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let mark = format!(
        "IOLAB_TEST_MARK={}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let (key, value) = mark.split_once('=').unwrap();
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let mut child = cmd
        .env(key, value)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .spawn()
        .expect("spawn");
    let end = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() >= end {
            kill_marked(&mark);
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // what outlived it (a job process of a fio that ended or was killed)
    kill_marked(&mark);
    let read = |mut f: std::fs::File| {
        use std::io::Seek;
        let mut v = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut v).unwrap();
        v
    };
    Output {
        status,
        stdout: read(out),
        stderr: read(err),
    }
}

/// SIGKILL to every process whose environment holds `mark` (`KEY=VALUE`).
fn kill_marked(mark: &str) {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(p.path().join("environ")) else {
            continue;
        };
        if env.split(|&b| b == 0).any(|v| v == mark.as_bytes()) {
            // SAFETY: kill(2) with a pid read from /proc; a process gone by now is ESRCH.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Scrapes `127.0.0.1:port` every 50 ms from the first answer until the server is gone (at most
/// 2 minutes); the last answer. A run with `--metrics-linger` ends only after answering a
/// scrape with its final counts, so that is the last answer.
pub fn last_scrape(port: u16) -> String {
    use std::io::{Read, Write};
    let t0 = std::time::Instant::now();
    let mut last: Option<String> = None;
    while t0.elapsed() < std::time::Duration::from_secs(120) {
        let got = std::net::TcpStream::connect(("127.0.0.1", port))
            .ok()
            .and_then(|mut c| {
                c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").ok()?;
                let mut t = String::new();
                c.read_to_string(&mut t).ok()?;
                Some(t).filter(|t| t.starts_with("HTTP/1.1 200"))
            });
        match (got, &last) {
            (Some(t), _) => last = Some(t),
            (None, Some(_)) => break,
            (None, None) => {}
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    last.expect("no scrape answered")
}
