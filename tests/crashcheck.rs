//! `iolab crashcheck` against real faults: faultfs (tests/fixtures/faultfs) with a volatile
//! write cache that acknowledges fsyncs without persisting (and loses everything not persisted on
//! a "power cut"), the same cache honouring fsync, a failing fsync, a killed writer, an
//! unreachable listener and a journal on the data's own device.
//!
//! The FUSE tests need root, /dev/fuse, gcc, pkg-config and the fuse3 development files; without
//! them they skip through `common::skip`.

use crate::common;
use crate::common::faultfs::{FaultFs, run_timed, show, skip_reason};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const IOLAB: &str = env!("CARGO_BIN_EXE_iolab");
const LOST: &str = "acknowledged writes lost: this storage does not honour fsync";

macro_rules! skip_unless_fuse {
    ($test:expr) => {
        if let Some(why) = skip_reason() {
            return common::skip($test, &why);
        }
    };
}

/// iolab with its crashcheck state (the run keys `write` keeps and `verify` reads) in this
/// build's temporary directory, not the user's.
fn cmd() -> Command {
    let state = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("crashcheck-state");
    let mut c = Command::new(IOLAB);
    c.env("XDG_STATE_HOME", state);
    c
}

fn iolab(args: &[&str]) -> Output {
    run_timed(cmd().args(args))
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", show(o)))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `iolab crashcheck listen` on 127.0.0.1 (a free port) with its journals in a temporary
/// directory off the mount; killed on drop.
struct Listener {
    child: Child,
    addr: String,
    journals: tempfile::TempDir,
    /// its stderr after the first line (one line per connection that ends)
    err: BufReader<std::process::ChildStderr>,
}

impl Listener {
    fn start() -> Listener {
        Listener::start_in(None, "127.0.0.1")
    }

    /// The listener inside network namespace `netns` (another host, as far as the network goes).
    fn start_in(netns: Option<&str>, bind: &str) -> Listener {
        let journals = tempfile::tempdir().unwrap();
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, IOLAB]);
                c
            }
            None => cmd(),
        };
        let mut child = cmd
            .args(["crashcheck", "listen", "--port", "0", "--bind", bind])
            .arg("--journal")
            .arg(journals.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting the listener");
        let mut first = String::new();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        err.read_line(&mut first).unwrap();
        let addr = first
            .strip_prefix("listening on ")
            .and_then(|r| r.split(',').next())
            .unwrap_or_else(|| panic!("the listener said {first:?}"))
            .to_string();
        Listener {
            child,
            addr,
            journals,
            err,
        }
    }

    /// The listener's next line on stderr (waits for it).
    fn next_line(&mut self) -> String {
        let mut l = String::new();
        self.err.read_line(&mut l).unwrap();
        l
    }

    /// ACK lines in the (one) journal so far.
    fn acks(&self) -> usize {
        std::fs::read_dir(self.journals.path())
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
            .map(|t| t.lines().filter(|l| l.starts_with("ACK ")).count())
            .sum()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write_args<'a>(dir: &'a str, to: &'a str, sync: &'a str, count: &'a str) -> Vec<&'a str> {
    vec![
        "crashcheck",
        "write",
        "--dir",
        dir,
        "--to",
        to,
        "--sync",
        sync,
        "--size",
        "4M",
        "--count",
        count,
        "--json",
        "--no-save",
    ]
}

fn verify(dir: &str, from: &str) -> (Output, Value, String) {
    let j = iolab(&[
        "crashcheck",
        "verify",
        "--dir",
        dir,
        "--from",
        from,
        "--json",
        "--no-save",
    ]);
    let t = iolab(&[
        "crashcheck",
        "verify",
        "--dir",
        dir,
        "--from",
        from,
        "--no-save",
    ]);
    let v = json(&j);
    assert_eq!(j.status.code(), t.status.code(), "{}", show(&t));
    (j, v, String::from_utf8_lossy(&t.stdout).into_owned())
}

const FUSE_ENV: (&str, &str) = ("FAULTFS_MATCH", "iolab-crashcheck.dat");

/// A network namespace joined to this one by a veth pair: 10.213.X.1 here, 10.213.X.2 there.
/// Removed on drop.
struct NetNs {
    name: String,
    host_if: String,
    pub peer: String,
}

impl NetNs {
    fn new() -> Option<NetNs> {
        let id = std::process::id() % 250;
        let name = format!("iolab-cc-{}", std::process::id());
        let (a, b) = (format!("icc{id}a"), format!("icc{id}b"));
        let ok = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let me = NetNs {
            name: name.clone(),
            host_if: a.clone(),
            peer: format!("10.213.{id}.2"),
        };
        let here = format!("10.213.{id}.1/24");
        let there = format!("10.213.{id}.2/24");
        let steps: [&[&str]; 7] = [
            &["netns", "add", &name],
            &["link", "add", &a, "type", "veth", "peer", "name", &b],
            &["link", "set", &b, "netns", &name],
            &["addr", "add", &here, "dev", &a],
            &["link", "set", &a, "up"],
            &["-n", &name, "addr", "add", &there, "dev", &b],
            &["-n", &name, "link", "set", &b, "up"],
        ];
        steps.iter().all(|s| ok(s)).then_some(me)
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_if])
            .stderr(Stdio::null())
            .status();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stderr(Stdio::null())
            .status();
    }
}

/// The listener on "another host" (a network namespace over a veth pair): the writer reaches it
/// over the network, is not warned about a local listener, and verify finds the records the
/// volatile cache lost in the power cut.
#[test]
fn a_listener_on_another_host_sees_the_lost_writes() {
    skip_unless_fuse!("a_listener_on_another_host_sees_the_lost_writes");
    let Some(ns) = NetNs::new() else {
        return common::skip(
            "a_listener_on_another_host_sees_the_lost_writes",
            "cannot create a network namespace with a veth pair (ip netns)",
        );
    };
    let fs = FaultFs::mount(&[
        ("FAULTFS_CACHE", "volatile"),
        ("FAULTFS_PERSIST_AT", "30"),
        FUSE_ENV,
    ]);
    let l = Listener::start_in(Some(&ns.name), &ns.peer);
    assert!(l.addr.starts_with(&ns.peer), "{}", l.addr);
    let w = iolab(&write_args(fs.dir(), &l.addr, "fsync", "80"));
    assert_eq!(w.status.code(), Some(0), "{}", show(&w));
    assert!(!stderr(&w).contains("warning"), "{}", show(&w));
    fs.ctl("powercut");
    let (o, v, text) = verify(fs.dir(), &l.addr);
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    assert_eq!(v["verify"]["lost"], 50, "{v}");
    assert_eq!(v["verify"]["ok"], 30, "{v}");
    assert!(text.contains(&format!("50 {LOST}")), "{text}");
}

/// A cache that acknowledges fsyncs and persists only when told to: after a power cut, verify
/// reports exactly the records acknowledged since the last persist (the 100th flush persisted
/// records 1..100), and says so plainly; with O_DSYNC writes the same.
#[test]
fn a_volatile_cache_loses_exactly_the_writes_acknowledged_since_the_last_persist() {
    skip_unless_fuse!(
        "a_volatile_cache_loses_exactly_the_writes_acknowledged_since_the_last_persist"
    );
    for sync in ["fdatasync", "dsync"] {
        let fs = FaultFs::mount(&[
            ("FAULTFS_CACHE", "volatile"),
            ("FAULTFS_PERSIST_AT", "100"),
            FUSE_ENV,
        ]);
        let l = Listener::start();
        let w = iolab(&write_args(fs.dir(), &l.addr, sync, "200"));
        assert_eq!(w.status.code(), Some(0), "{sync}: {}", show(&w));
        let wj = json(&w);
        assert_eq!(wj["schema"], "iolab-crashcheck/1");
        assert_eq!(wj["write"]["acknowledged"], 200, "{wj}");
        assert_eq!(wj["write"]["stopped"], "count");
        fs.ctl("powercut");
        let (o, v, text) = verify(fs.dir(), &l.addr);
        assert_eq!(o.status.code(), Some(3), "{sync}: {}", show(&o));
        let r = &v["verify"];
        assert_eq!(r["acknowledged"], 200, "{sync}: {v}");
        assert_eq!(r["lost"], 100, "{sync}: {v}");
        assert_eq!(r["ok"], 100, "{sync}: {v}");
        assert_eq!(r["corrupt"], 0, "{sync}: {v}");
        assert_eq!(r["misdirected"], 0, "{sync}: {v}");
        let mut seqs: Vec<u64> = r["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["seq"].as_u64().unwrap())
            .collect();
        seqs.sort();
        assert_eq!(seqs, (101..=200).collect::<Vec<u64>>(), "{sync}");
        assert!(
            r["problems"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["found"] == "zeros"),
            "{v}"
        );
        assert!(text.contains(&format!("100 {LOST}")), "{sync}: {text}");
        assert!(text.contains("writer: ended (200 acknowledged)"), "{text}");
    }
}

/// The same cache honouring fsync: nothing acknowledged is lost in the power cut, for every
/// sync mode.
#[test]
fn an_honest_cache_loses_no_acknowledged_write() {
    skip_unless_fuse!("an_honest_cache_loses_no_acknowledged_write");
    for sync in ["fsync", "fdatasync", "dsync", "direct-dsync"] {
        let fs = FaultFs::mount(&[("FAULTFS_CACHE", "honest"), FUSE_ENV]);
        let l = Listener::start();
        let w = iolab(&write_args(fs.dir(), &l.addr, sync, "150"));
        assert_eq!(w.status.code(), Some(0), "{sync}: {}", show(&w));
        fs.ctl("powercut");
        let (o, v, text) = verify(fs.dir(), &l.addr);
        assert_eq!(o.status.code(), Some(0), "{sync}: {}", show(&o));
        assert_eq!(v["verify"]["ok"], 150, "{sync}: {v}");
        assert_eq!(v["verify"]["lost"], 0, "{sync}: {v}");
        assert!(!text.contains(LOST), "{text}");
        assert!(
            text.contains("all 150 acknowledged writes are there"),
            "{text}"
        );
    }
}

/// kill -9 of the writer mid-run, then a power cut: every record it had acknowledged is
/// reported lost (none was persisted), and the journal shows no orderly end. Records written but
/// not yet acknowledged are not blamed.
#[test]
fn a_killed_writer_then_a_power_cut_loses_every_acknowledged_write() {
    skip_unless_fuse!("a_killed_writer_then_a_power_cut_loses_every_acknowledged_write");
    let fs = FaultFs::mount(&[("FAULTFS_CACHE", "volatile"), FUSE_ENV]);
    let l = Listener::start();
    let mut w = cmd()
        .args(["crashcheck", "write", "--dir", fs.dir(), "--to", &l.addr])
        .args(["--size", "4M", "--no-save"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while l.acks() < 30 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no 30 acknowledgements in 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    w.kill().unwrap(); // SIGKILL
    w.wait().unwrap();
    fs.ctl("powercut");
    let (o, v, text) = verify(fs.dir(), &l.addr);
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    // the listener may still append an ACK the writer sent just before it died: count the
    // journal as verify read it
    // (the writer is dead and verify has asked the listener, so its journal is complete now):
    // the count verify reports is the journal's ACK lines, every one of them
    let acked = v["verify"]["acknowledged"].as_u64().unwrap();
    assert!(acked >= 30, "{v}");
    assert_eq!(acked as usize, l.acks(), "{v}");
    assert_eq!(v["verify"]["lost"], acked, "{v}");
    assert!(
        v["verify"]["writer"]
            .as_str()
            .unwrap()
            .starts_with("no end recorded"),
        "{v}"
    );
    assert!(text.contains(&format!("{acked} {LOST}")), "{text}");
}

/// fsyncgate: the 50th flush fails with EIO and the cache drops the file's pages; a second
/// fdatasync then succeeds. The writer reports the failure once, does not acknowledge record 50,
/// stops (exit 3), and verify finds the 49 acknowledged records (the journal is a file here).
#[test]
fn an_fsync_error_is_reported_once_and_not_hidden_by_a_later_success() {
    skip_unless_fuse!("an_fsync_error_is_reported_once_and_not_hidden_by_a_later_success");
    let fs = FaultFs::mount(&[
        ("FAULTFS_CACHE", "honest"),
        ("FAULTFS_FSYNC_EIO", "50"),
        FUSE_ENV,
    ]);
    let jd = tempfile::tempdir().unwrap();
    let journal = jd.path().join("run.journal");
    let js = journal.to_str().unwrap();
    let w = iolab(&[
        "crashcheck",
        "write",
        "--dir",
        fs.dir(),
        "--journal",
        js,
        "--size",
        "4M",
        "--count",
        "200",
        "--json",
        "--no-save",
    ]);
    assert_eq!(w.status.code(), Some(3), "{}", show(&w));
    let v = json(&w);
    let wr = &v["write"];
    assert_eq!(wr["acknowledged"], 49, "{v}");
    assert_eq!(wr["written"], 50, "{v}");
    assert_eq!(wr["stopped"], "io_error", "{v}");
    assert_eq!(wr["failure"]["seq"], 50, "{v}");
    assert_eq!(wr["failure"]["call"], "fdatasync", "{v}");
    assert!(
        wr["failure"]["error"].as_str().unwrap().starts_with("EIO"),
        "{v}"
    );
    assert_eq!(wr["failure"]["second_sync"], "ok", "{v}");
    let err = stderr(&w);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("failed: EIO")).collect();
    assert_eq!(lines.len(), 1, "one line for the failure: {err}");
    assert!(
        lines[0].contains("record 50 ")
            && lines[0].contains("a second fdatasync then returned success")
            && lines[0].contains("not acknowledged"),
        "{err}"
    );
    let text = std::fs::read_to_string(&journal).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("ACK ")).count(), 49);
    assert!(text.contains("\nFAIL 50 "), "{text}");
    let o = iolab(&[
        "crashcheck",
        "verify",
        "--dir",
        fs.dir(),
        "--journal",
        js,
        "--json",
        "--no-save",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let v = json(&o);
    assert_eq!(v["verify"]["ok"], 49, "{v}");
    assert!(
        v["verify"]["writer"]
            .as_str()
            .unwrap()
            .starts_with("stopped at record 50: fdatasync EIO"),
        "{v}"
    );
}

/// An unreachable listener is refused before anything is written: exit 2, no data file.
#[test]
fn an_unreachable_listener_is_refused_before_writing() {
    let d = tempfile::tempdir().unwrap();
    // a port that was free a moment ago and has nobody listening now
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let to = format!("127.0.0.1:{port}");
    let w = iolab(&write_args(
        d.path().to_str().unwrap(),
        &to,
        "fdatasync",
        "10",
    ));
    assert_eq!(w.status.code(), Some(2), "{}", show(&w));
    assert!(stderr(&w).contains("cannot be reached"), "{}", show(&w));
    assert!(stderr(&w).contains("Nothing was written"), "{}", show(&w));
    assert!(common::entries(d.path()).is_empty());
}

/// A journal file on the same device as the data is warned about (a power cut would take it
/// too); on that device it still works, and the run verifies clean.
#[test]
fn a_journal_on_the_data_device_is_warned_about() {
    let d = tempfile::tempdir().unwrap();
    let data: PathBuf = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let journal = d.path().join("j.journal");
    let (ds, js) = (data.to_str().unwrap(), journal.to_str().unwrap());
    let w = iolab(&[
        "crashcheck",
        "write",
        "--dir",
        ds,
        "--journal",
        js,
        "--size",
        "1M",
        "--count",
        "20",
        "--json",
        "--no-save",
    ]);
    assert_eq!(w.status.code(), Some(0), "{}", show(&w));
    // what the writer says it acknowledged is what the journal holds
    let journal_text = std::fs::read_to_string(&journal).unwrap();
    let journal_acks = journal_text
        .lines()
        .filter(|l| l.starts_with("ACK "))
        .count();
    assert_eq!(journal_acks, 20, "{journal_text}");
    assert_eq!(json(&w)["write"]["acknowledged"], 20, "{}", show(&w));
    let err = stderr(&w);
    assert!(
        err.contains("warning: the journal") && err.contains("is on the same device as"),
        "{err}"
    );
    assert!(
        json(&w)["warnings"][0]
            .as_str()
            .unwrap()
            .contains("same device"),
        "{}",
        show(&w)
    );
    let o = iolab(&[
        "crashcheck",
        "verify",
        "--dir",
        ds,
        "--journal",
        js,
        "--no-save",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("all 20 acknowledged writes are there"),
        "{}",
        show(&o)
    );
    // a journal that exists already is not reused
    let again = iolab(&[
        "crashcheck",
        "write",
        "--dir",
        ds,
        "--journal",
        js,
        "--count",
        "1",
        "--no-save",
    ]);
    assert_eq!(again.status.code(), Some(2), "{}", show(&again));
    assert_eq!(
        std::fs::read_to_string(&journal).unwrap(),
        journal_text,
        "the refused writer touched the journal"
    );
}

/// A listener that dies mid-run stops the writer (exit 1): the record in flight was written and
/// synced but cannot be acknowledged, so nothing more is written.
#[test]
fn a_lost_listener_stops_the_writer() {
    let d = tempfile::tempdir().unwrap();
    let mut l = Listener::start();
    let mut w = cmd()
        .args(["crashcheck", "write", "--dir", d.path().to_str().unwrap()])
        .args(["--to", &l.addr, "--size", "1M", "--json", "--no-save"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while l.acks() < 10 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no 10 acknowledgements in 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    l.child.kill().unwrap();
    l.child.wait().unwrap();
    let t0 = Instant::now();
    while w.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = w.kill();
            panic!("the writer went on without its listener");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = w.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let v = json(&o);
    assert_eq!(v["write"]["stopped"], "listener_lost", "{v}");
    // One record at a time is reported: the writer saw every acknowledgement the listener
    // journaled, except perhaps the last one, on its way when the listener was killed.
    let journaled = l.acks() as u64;
    let acked = v["write"]["acknowledged"].as_u64().unwrap();
    assert!(journaled >= 10, "{journaled}");
    assert!(
        acked <= journaled && acked + 1 >= journaled,
        "the writer counts {acked} acknowledged, the listener journaled {journaled}: {v}"
    );
    assert!(
        stderr(&o).contains("could not be acknowledged"),
        "{}",
        show(&o)
    );
}

/// `run R key K` from what `write` printed on stderr.
fn run_and_key(w: &Output) -> (String, String) {
    let err = stderr(w);
    let l = err
        .lines()
        .find(|l| l.starts_with("run ") && l.contains(" key "))
        .unwrap_or_else(|| panic!("no run key printed: {err}"));
    let f: Vec<&str> = l.split(' ').collect();
    (f[1].to_string(), f[3].to_string())
}

/// The data file's blocks all zeros: every acknowledged record lost, as after a cache that
/// lied about every flush.
fn lose_everything(dir: &str) {
    let p = PathBuf::from(dir).join("iolab-crashcheck.dat");
    let len = std::fs::metadata(&p).unwrap().len();
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(len).unwrap();
    f.sync_all().unwrap();
}

/// One client line to the listener and its answer ("" when it closed).
fn say_to(c: &mut std::net::TcpStream, line: &str) -> String {
    use std::io::Write;
    let _ = c.write_all(line.as_bytes());
    let mut ans = String::new();
    let _ = BufReader::new(c.try_clone().unwrap()).read_line(&mut ans);
    ans
}

/// Issue 24: a stray client's `HELLO` + `END 0` on the listener turned "N acknowledged writes
/// lost" (exit 3) into "all 0 acknowledged writes are there" (exit 0), because verify took the
/// newest journal of the data file. Now verify checks the run its key names, every line
/// authenticated by that key: forged runs (the old unauthenticated protocol, a new-looking HELLO
/// with a made-up tag, the real run's id) cannot change the verdict, and a forged journal asked
/// for by name is refused with one line.
#[test]
fn a_forged_hello_and_end_cannot_change_the_verdict() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let mut l = Listener::start();
    let w = iolab(&write_args(dir, &l.addr, "fdatasync", "20"));
    assert_eq!(w.status.code(), Some(0), "{}", show(&w));
    let (run, key) = run_and_key(&w);
    let said = l.next_line();
    assert!(said.contains("20 acknowledged, ended"), "{said}");
    lose_everything(dir);
    let (o, v, _) = verify(dir, &l.addr);
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    assert_eq!(v["verify"]["lost"], 20, "{v}");
    // the forgers, after the run: the two lines (the old protocol) ...
    let data = format!("{dir}/iolab-crashcheck.dat");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    let mut c = std::net::TcpStream::connect(&l.addr).unwrap();
    let ans = say_to(
        &mut c,
        &format!(
            "HELLO iolab-crashcheck/1 run=00000000000000f0 host={host} bs=4096 size=4194304 sync=fdatasync file={data}\n"
        ),
    );
    assert!(ans.starts_with("ERR"), "{ans}");
    // ... a HELLO of the new protocol with a made-up tag, and an END
    let fp = v["key"].as_str().unwrap().to_string();
    let tag = "0".repeat(64);
    let mut c = std::net::TcpStream::connect(&l.addr).unwrap();
    let ans = say_to(
        &mut c,
        &format!(
            "HELLO iolab-crashcheck/2 run=00000000000000f1 key={fp} host={host} bs=4096 size=4194304 sync=fdatasync file={data} mac={tag}\n"
        ),
    );
    assert_eq!(ans, "OK\n");
    assert_eq!(say_to(&mut c, &format!("END 0 mac={tag}\n")), "OK\n");
    drop(c);
    // ... and one that takes the real run's id
    let mut c = std::net::TcpStream::connect(&l.addr).unwrap();
    let ans = say_to(
        &mut c,
        &format!(
            "HELLO iolab-crashcheck/2 run={run} key={fp} host={host} bs=4096 size=4194304 sync=fdatasync file={data} mac={tag}\n"
        ),
    );
    assert!(ans.starts_with("ERR"), "{ans}");
    // the verdict is the same, and names the run it checked
    let (o, v, text) = verify(dir, &l.addr);
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    assert_eq!(v["verify"]["lost"], 20, "{v}");
    assert_eq!(v["run"], run.as_str(), "{v}");
    assert!(text.contains(&format!("20 {LOST}")), "{text}");
    assert!(
        stderr(&o).contains(&format!("checking run {run} (key {fp}")),
        "{}",
        show(&o)
    );
    // the forged run asked for by name, with the real key: refused, one line, exit 2
    let o = iolab(&[
        "crashcheck",
        "verify",
        "--dir",
        dir,
        "--from",
        &l.addr,
        "--run",
        "00000000000000f1",
        "--key",
        &key,
        "--no-save",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let err = stderr(&o);
    let errs: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("iolab: error:"))
        .collect();
    assert_eq!(errs.len(), 1, "{err}");
    assert!(
        errs[0].contains("forged") && errs[0].contains("refused"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "{}", show(&o));
}

/// `verify` refuses, in one line and with exit 2, a journal that is not its run's: another
/// run's journal, and the run's own with one line altered.
#[test]
fn verify_refuses_a_journal_of_another_run_or_altered() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let (ja, jb) = (t.path().join("a.journal"), t.path().join("b.journal"));
    for (d, j) in [(&a, &ja), (&b, &jb)] {
        let w = iolab(&[
            "crashcheck",
            "write",
            "--dir",
            d.to_str().unwrap(),
            "--journal",
            j.to_str().unwrap(),
            "--size",
            "1M",
            "--count",
            "5",
            "--no-save",
        ]);
        assert_eq!(w.status.code(), Some(0), "{}", show(&w));
    }
    let verify_a = |j: &PathBuf| {
        iolab(&[
            "crashcheck",
            "verify",
            "--dir",
            a.to_str().unwrap(),
            "--journal",
            j.to_str().unwrap(),
            "--no-save",
        ])
    };
    let one_error = |o: &Output, want: &str| {
        assert_eq!(o.status.code(), Some(2), "{}", show(o));
        let err = stderr(o);
        let errs: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("iolab: error:"))
            .collect();
        assert_eq!(errs.len(), 1, "{err}");
        assert!(errs[0].contains(want), "{err}");
        assert!(o.stdout.is_empty(), "{}", show(o));
    };
    assert_eq!(verify_a(&ja).status.code(), Some(0));
    one_error(&verify_a(&jb), "not of run");
    // one acknowledgement's checksum changed in a's own journal
    let text = std::fs::read_to_string(&ja).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let f: Vec<&str> = lines[2].splitn(4, ' ').collect();
    lines[2] = format!(
        "ACK {} {} 00000000 {}",
        f[1],
        f[2],
        f[3].split_once(' ').unwrap().1
    );
    std::fs::write(&ja, lines.join("\n") + "\n").unwrap();
    one_error(&verify_a(&ja), "line 3: not authenticated");
}

/// A client that sends an endless line (as its first line, or after a HELLO) is dropped with one
/// line once the line passes 64 KiB: the listener never holds it (it took 1.5 GB from one
/// connection before), and goes on serving.
#[test]
fn an_endless_line_is_dropped_and_the_listener_stays_small() {
    const LIMIT: usize = 512 << 20;
    let mut l = Listener::start();
    let pid = l.child.id();
    let mut c = std::net::TcpStream::connect(&l.addr).unwrap();
    let sent = common::send_until_closed(&mut c, b'x', LIMIT);
    assert!(sent < LIMIT, "the listener took {sent} bytes of one line");
    let said = l.next_line();
    assert!(
        said.contains("a line longer than 64 KiB: connection dropped"),
        "{said}"
    );
    // after a HELLO
    let tag = "0".repeat(64);
    let mut c = std::net::TcpStream::connect(&l.addr).unwrap();
    let ans = say_to(
        &mut c,
        &format!(
            "HELLO iolab-crashcheck/2 run=00000000000000f2 key=00 host=h bs=4096 size=4096 sync=fsync file=/x mac={tag}\n"
        ),
    );
    assert_eq!(ans, "OK\n");
    let sent = common::send_until_closed(&mut c, b'x', LIMIT);
    assert!(sent < LIMIT, "the listener took {sent} bytes of one line");
    let said = l.next_line();
    assert!(
        said.contains("a line longer than 64 KiB: connection dropped"),
        "{said}"
    );
    let peak = common::peak_rss_kib(pid);
    eprintln!("listener peak RSS {peak} KiB after two endless lines");
    assert!(peak < 64 * 1024, "the listener grew to {peak} KiB");
    // still serving
    let d = tempfile::tempdir().unwrap();
    let w = iolab(&write_args(
        d.path().to_str().unwrap(),
        &l.addr,
        "fdatasync",
        "3",
    ));
    assert_eq!(w.status.code(), Some(0), "{}", show(&w));
}

/// A journal that is not one (garbage, or no regular file) is bad input: exit 2 in one line
/// (issue 24: it was exit 1). No FUSE needed.
#[test]
fn a_garbage_journal_is_refused_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("j.txt");
    std::fs::write(&j, "garbage\nHELLO?\n").unwrap();
    let dir = d.path().to_str().unwrap();
    let run = |journal: &str| {
        common::to_run(
            Command::new(IOLAB)
                .args([
                    "crashcheck",
                    "verify",
                    "--dir",
                    dir,
                    "--journal",
                    journal,
                    "--run",
                    "0123456789abcdef",
                    "--key",
                    &"ab".repeat(32),
                    "--no-save",
                ])
                .output()
                .unwrap(),
        )
    };
    common::assert_refused(&run(j.to_str().unwrap()), "the journal from");
    common::assert_refused(&run("/dev/zero"), "--journal /dev/zero: a character device");
}
