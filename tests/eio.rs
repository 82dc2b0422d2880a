//! End-to-end error and latency injection: iolab on faultfs (tests/fixtures/faultfs), a FUSE
//! passthrough filesystem that fails or delays read requests.
//!
//! Needs root, /dev/fuse, gcc, pkg-config and the fuse3 development files; without them each
//! test skips through `common::skip` (a `SKIP:` line, or a failure under `CI=true`).

mod common;
use serde_json::Value;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const IOLAB: &str = env!("CARGO_BIN_EXE_iolab");
/// Longest any iolab command may take before the test calls it a hang.
const CMD_TIMEOUT: Duration = Duration::from_secs(120);

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/faultfs")
}

/// Why this machine cannot run the FUSE tests, if it cannot.
fn skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (mounting faultfs needs root)".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse is missing".into());
    }
    let ok = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok("gcc", &["--version"]) {
        return Some("gcc is missing".into());
    }
    if !ok("pkg-config", &["--exists", "fuse3"]) {
        return Some("pkg-config or the fuse3 development files (libfuse3-dev) are missing".into());
    }
    if !ok("fusermount3", &["--version"]) {
        return Some("fusermount3 (package fuse3) is missing".into());
    }
    None
}

/// Returns from the test `$test` through `common::skip` when the FUSE tests cannot run here.
macro_rules! skip_unless_fuse {
    ($test:expr) => {
        if let Some(why) = skip_reason() {
            return common::skip($test, &why);
        }
    };
}

/// Runs a command with a time limit; a command that outlives it is killed and the test fails.
fn run_timed(cmd: &mut Command) -> Output {
    let desc = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {desc}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > CMD_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{desc} did not finish within {CMD_TIMEOUT:?} (hang?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn iolab(args: &[&str]) -> Output {
    run_timed(Command::new(IOLAB).args(args))
}

fn is_mounted(mnt: &Path) -> bool {
    let want = mnt.to_str().unwrap();
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            f.len() > 4 && f[4] == want && l.contains(" - fuse")
        })
}

/// A mounted faultfs; unmounted (and its process reaped) on drop, also when the test panics.
struct FaultFs {
    _tmp: tempfile::TempDir,
    backing: PathBuf,
    mnt: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl FaultFs {
    /// Builds faultfs and mounts it over a fresh backing directory with these FAULTFS_* settings.
    fn mount(env: &[(&str, &str)]) -> FaultFs {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("faultfs");
        let b = run_timed(Command::new(fixture_dir().join("build.sh")).arg(&bin));
        assert!(b.status.success(), "building faultfs failed: {}", show(&b));
        let backing = tmp.path().join("backing");
        let mnt = tmp.path().join("mnt");
        fs::create_dir(&backing).unwrap();
        fs::create_dir(&mnt).unwrap();
        let log = tmp.path().join("faultfs.log");
        let mut cmd = Command::new(&bin);
        // -f: stay in the foreground (our child); -s: one thread, requests served in order.
        cmd.arg(&backing)
            .arg(&mnt)
            .args(["-f", "-s"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(&log).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("starting faultfs");
        let mut me = FaultFs {
            _tmp: tmp,
            backing,
            mnt,
            log,
            child: Some(child),
        };
        let t0 = Instant::now();
        while !is_mounted(&me.mnt) {
            if let Some(s) = me.child.as_mut().unwrap().try_wait().unwrap() {
                me.child = None;
                panic!("faultfs exited ({s}) before mounting:\n{}", me.log_text());
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "faultfs did not mount within 10 s:\n{}",
                me.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        me
    }

    fn dir(&self) -> &str {
        self.mnt.to_str().unwrap()
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn backing_names(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(&self.backing)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        if is_mounted(&self.mnt) {
            let umount = |args: &[&str]| {
                Command::new("fusermount3")
                    .args(args)
                    .arg(&self.mnt)
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            // A busy mount (a hung iolab still holding files) is detached lazily.
            if !umount(&["-u"]) {
                umount(&["-u", "-z"]);
            }
        }
        if let Some(mut child) = self.child.take() {
            // Unmounting ends the FUSE loop; give it a moment, then make sure.
            let t0 = Instant::now();
            while child.try_wait().ok().flatten().is_none() && t0.elapsed() < Duration::from_secs(5)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        eprintln!("{}", self.log_text().trim_end());
    }
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", show(o)))
}

#[test]
fn eio_is_counted_reported_and_the_run_finishes() {
    skip_unless_fuse!("eio_is_counted_reported_and_the_run_finishes");
    // Reads of the first MiB of iolab-file.0 fail; writes (prepare) are not affected.
    let fs = FaultFs::mount(&[
        ("FAULTFS_MATCH", "iolab-file.0"),
        ("FAULTFS_EIO", "0-1048576"),
    ]);
    let dir = fs.dir();
    let p = iolab(&[
        "prepare", "--dir", dir, "--files", "4", "--size", "16M", "-q",
    ]);
    assert!(p.status.success(), "prepare failed: {}", show(&p));
    assert_eq!(
        fs.backing_names(),
        [
            "iolab-file.0",
            "iolab-file.1",
            "iolab-file.2",
            "iolab-file.3"
        ]
    );

    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--files",
        "4",
        "--size",
        "16M",
        "--mode",
        "rndrd",
        "--ops",
        "2000",
        "--seed",
        "1",
        "--json",
        "--no-save",
        "-q",
        "--keep",
    ]);
    eprintln!("iolab run stderr: {}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        r.status.code(),
        Some(3),
        "exit code 3 = completed with I/O errors: {}",
        show(&r)
    );
    let doc = json(&r);
    eprintln!(
        "results.read = {}\nerrors = {}\nwarnings = {}",
        doc["results"]["read"], doc["errors"], doc["warnings"]
    );
    let eio = doc["errors"]["EIO"].as_u64().unwrap_or(0);
    let reads = doc["results"]["read"]["ops"]
        .as_u64()
        .expect("results.read.ops");
    assert!(eio > 0, "no EIO counted: errors = {}", doc["errors"]);
    assert_eq!(
        doc["errors"].as_object().unwrap().len(),
        1,
        "only EIO expected: errors = {}",
        doc["errors"]
    );
    assert_eq!(
        reads + eio,
        2000,
        "every one of the 2000 reads either succeeded or failed"
    );
    // 1 MiB of the 16 MiB set fails: about 1/16 of uniform random reads.
    assert!(
        (40..=300).contains(&eio),
        "EIO count {eio} is far from the expected ~125 (1/16 of 2000)"
    );
    let warnings = doc["warnings"].as_array().expect("warnings array");
    assert!(
        warnings.iter().any(|w| w["code"] == "io_errors"),
        "no io_errors warning: {}",
        doc["warnings"]
    );

    let c = iolab(&["cleanup", "--dir", dir]);
    assert!(c.status.success(), "cleanup failed: {}", show(&c));
    assert!(
        String::from_utf8_lossy(&c.stdout).starts_with("removed 4 files"),
        "{}",
        show(&c)
    );
    assert!(fs.backing_names().is_empty(), "{:?}", fs.backing_names());
}

#[test]
fn injected_read_latency_shows_in_p50() {
    skip_unless_fuse!("injected_read_latency_shows_in_p50");
    // Every read request of the set waits 2 ms; no errors.
    let fs = FaultFs::mount(&[
        ("FAULTFS_MATCH", "iolab-file."),
        ("FAULTFS_DELAY_US", "2000"),
    ]);
    // No prepare and no --keep: run creates the set itself and removes it again.
    let r = iolab(&[
        "run",
        "--dir",
        fs.dir(),
        "--files",
        "4",
        "--size",
        "16M",
        "--mode",
        "rndrd",
        "--ops",
        "200",
        "--seed",
        "1",
        "--json",
        "--no-save",
        "-q",
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", show(&r));
    let doc = json(&r);
    let read = &doc["results"]["read"];
    eprintln!("results.read = {read}");
    assert_eq!(read["ops"], 200, "{read}");
    assert_eq!(doc["errors"], serde_json::json!({}), "{}", doc["errors"]);
    let p50 = read["lat_ns"]["p50"]
        .as_u64()
        .expect("results.read.lat_ns.p50");
    assert!(
        p50 >= 2_000_000,
        "p50 read latency {p50} ns is below the injected 2 ms"
    );
    assert!(fs.backing_names().is_empty(), "{:?}", fs.backing_names());
}
