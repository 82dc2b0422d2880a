//! The faultfs FUSE fixture (tests/fixtures/faultfs): building, mounting and unmounting it, for
//! tests/eio.rs (errors and latency), tests/layouts.rs (a device with a fixed latency) and
//! tests/crashcheck.rs (a volatile write cache, power cuts, fsync errors).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longest any iolab command may take before the test calls it a hang.
const CMD_TIMEOUT: Duration = Duration::from_secs(120);

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/faultfs")
}

/// Why this machine cannot run the FUSE tests, if it cannot.
pub fn skip_reason() -> Option<String> {
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

/// Runs a command with a time limit; a command that outlives it is killed and the test fails.
pub fn run_timed(cmd: &mut Command) -> Output {
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

pub fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn is_mounted(mnt: &Path) -> bool {
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
pub struct FaultFs {
    _tmp: tempfile::TempDir,
    pub backing: PathBuf,
    pub mnt: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl FaultFs {
    /// Builds faultfs and mounts it over a fresh backing directory with these FAULTFS_* settings,
    /// single-threaded (`-s`: requests served one at a time, in order).
    pub fn mount(env: &[(&str, &str)]) -> FaultFs {
        FaultFs::mount_with(env, false)
    }

    /// [`FaultFs::mount`], with `multi_threaded`: libfuse's multi-threaded loop (no `-s`), so
    /// requests are served concurrently, each with its own FAULTFS_DELAY_US: a device with a
    /// fixed latency per request and no limit on parallel requests.
    pub fn mount_with(env: &[(&str, &str)], multi_threaded: bool) -> FaultFs {
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
            .arg("-f")
            .args(if multi_threaded { &[][..] } else { &["-s"][..] })
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

    pub fn dir(&self) -> &str {
        self.mnt.to_str().unwrap()
    }

    /// The FUSE server's process id (stopped with SIGSTOP, its filesystem's I/O never returns).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Runs a control command of the write cache (FAULTFS_CACHE): "persist" or "powercut". It is
    /// done when this returns (the write of the command waits for it).
    pub fn ctl(&self, cmd: &str) {
        fs::write(self.mnt.join(".faultfs-ctl"), cmd)
            .unwrap_or_else(|e| panic!("faultfs control {cmd:?}: {e}\n{}", self.log_text()));
    }

    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn backing_names(&self) -> Vec<String> {
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
