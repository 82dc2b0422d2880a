//! Issue 24, "hostile input gets one line and exit 2": generated flag values, job files and
//! import files fed to the real binary. Every case must end with exit 0 or 2; on 2, stderr is
//! lines starting `iolab: error:` only (one; a job file's refusal one per blocker); never a panic (exit 101, "panicked") or a signal;
//! and nothing is left in the working directory or `--dir` (a private temporary directory
//! each) beyond what a successful run keeps (nothing: runs here never `--keep`).
//!
//! The generator is a SplitMix64 seeded by `IOLAB_FUZZ_SEED` (default below), printed first, so
//! a failure is reproduced by running with the seed it printed. The number of cases is fixed
//! (`CASES` per kind), and accepted runs are tiny (`--engine null`, 0.05 s), so the whole test
//! is bounded in time. It prints how many inputs were tried and how many were refused in one
//! line with exit 2.

use crate::common::*;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Cases per kind (flags, job files, imports).
const CASES: usize = 120;
/// The seed when `IOLAB_FUZZ_SEED` is not set.
const DEFAULT_SEED: u64 = 0x1a1b_2024;
/// Longest one case may take before it is killed and reported (a hang is a failure too).
const CASE_LIMIT: Duration = Duration::from_secs(60);

/// SplitMix64: a small, fixed generator (the same sequence on every platform).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T: ?Sized>(&mut self, v: &[&'a T]) -> &'a T {
        v[self.below(v.len())]
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    /// Random bytes, 1 to `max` of them.
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = 1 + self.below(max);
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Hostile values: numbers out of range, negatives, NaN, inf, unicode, empty, garbage. Valid
/// values among them are small, so an accepted run stays tiny.
const VALUES: &[&str] = &[
    "-1",
    "-0",
    "0",
    "1",
    "+1",
    "1.5",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1e99",
    "1e19",
    "1e-300",
    "18446744073709551616",
    "99999999999999999999",
    "4294967296",
    "9223372036854775808",
    "",
    " ",
    "abc",
    "１",
    "٣",
    "é",
    "\u{202e}1",
    "1,,2",
    ",",
    "0x10",
    "4k",
    "16E",
    "1..2",
    "1..1e99",
    "1..18446744073709551615",
    "0..4000000000:+1",
    "1..16E:x2",
    "(1+",
    "((((((((((1))))))))))",
    "$((1))",
    "%s%n",
    "../../etc/passwd",
    "/dev/zero",
    "1ms",
    "1e99d",
    "99999999999999999999d",
    "zipf:1e99",
    "zipf:NaN",
    "pareto:1",
    "zoned:50/5:50/95",
    "zoned:100/0",
    "zoned:",
    "uniform",
    "rndrd,,rndwr",
    "rndrd",
    "seqwr,rndrw",
    "bogus",
    "4k:50,1m:50",
    "4k-1p",
    "0-0",
    "16k:101",
    "sync,dsync",
    "fdatasync",
    "io_uring",
    "mmap",
    "null",
    "extend",
    "holes",
    "yes",
    "wipe-signatures",
];

/// Value options of `iolab run` fuzzed here (those that write files of their own, --live,
/// --output, --metrics-listen, are the target part's; --keep would keep the set on purpose).
const RUN_FLAGS: &[&str] = &[
    "--threads",
    "--iodepth",
    "--files",
    "--size",
    "--bs",
    "--rate",
    "--time",
    "--ops",
    "--ramp",
    "--fsync-freq",
    "--fsync-every",
    "--fsync-mode",
    "--seed",
    "--rw-ratio",
    "--rwmixread",
    "--repeat",
    "--offset",
    "--iostat-interval",
    "--report-interval",
    "--rank-timeout",
    "--mode",
    "--distribution",
    "--engine",
    "--layout",
    "--open-flags",
    "--label",
    "--tag",
    "--role",
    "--profile",
    "--db",
    "--destructive",
    "--output-format",
];

/// One finished case.
struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    stderr: String,
}

/// Runs iolab with `args` in `cwd`, stdin empty; kills it after [`CASE_LIMIT`].
fn run_case(args: &[String], cwd: &Path, store: &Path) -> Outcome {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env("IOLAB_DB", store)
        .env("XDG_STATE_HOME", store.with_extension("state"))
        .env("XDG_DATA_HOME", store.with_extension("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iolab");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    // the watchdog waits on a channel: the case's end wakes it at once
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(CASE_LIMIT).is_err() {
            // SAFETY: our child, not yet waited for (the main thread waits after this ends or
            // the channel closes), so the pid is still ours.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut err = String::new();
    let _ = child.stderr.take().expect("piped").read_to_string(&mut err);
    let status = child.wait().expect("wait");
    let _ = tx.send(());
    watchdog.join().expect("watchdog");
    Outcome {
        code: status.code(),
        signal: status.signal(),
        stderr: err,
    }
}

/// Tallies of the cases.
#[derive(Default)]
struct Tally {
    tried: usize,
    refused_one_line: usize,
    accepted: usize,
    failures: Vec<String>,
}

impl Tally {
    /// Judges one case: exit 0 or 2, `iolab: error:` lines only on 2 (one, or one per blocker
    /// of a job file), no panic or signal, and
    /// `clean` (what must be empty afterwards) empty.
    fn judge(&mut self, what: &str, o: &Outcome, clean: &[&Path]) {
        self.tried += 1;
        let lines: Vec<&str> = o.stderr.lines().collect();
        let mut bad = Vec::new();
        if let Some(s) = o.signal {
            bad.push(format!("killed by signal {s}"));
        }
        if o.stderr.contains("panicked") || o.code == Some(101) {
            bad.push("a panic".into());
        }
        match o.code {
            Some(0) => self.accepted += 1,
            // a job file's refusal lists each blocker on a line of its own (docs/fio-jobs.md)
            Some(2)
                if !lines.is_empty() && lines.iter().all(|l| l.starts_with("iolab: error: ")) =>
            {
                self.refused_one_line += 1
            }
            Some(2) => bad.push(format!("exit 2 with {} stderr lines", lines.len())),
            c => bad.push(format!("exit {c:?}")),
        }
        for d in clean {
            let left = entries(d);
            if !left.is_empty() {
                bad.push(format!("left {left:?} in {}", d.display()));
                for n in left {
                    let p = d.join(n);
                    let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
                }
            }
        }
        if !bad.is_empty() {
            let tail: String = o.stderr.chars().take(600).collect();
            self.failures
                .push(format!("{what}: {}\n  stderr: {tail}", bad.join("; ")));
        }
    }
}

/// A private place for the cases: the working directory (`cwd`, must stay empty), the data
/// directory (`set`, must be empty after each case), inputs and the store outside both.
struct Place {
    _tmp: tempfile::TempDir,
    cwd: PathBuf,
    set: PathBuf,
    inputs: PathBuf,
    store: PathBuf,
}

impl Place {
    fn new() -> Place {
        let tmp = tempfile::tempdir().unwrap();
        let p = |n: &str| {
            let d = tmp.path().join(n);
            std::fs::create_dir(&d).unwrap();
            d
        };
        let (cwd, set, inputs, stores) = (p("cwd"), p("set"), p("inputs"), p("store"));
        Place {
            cwd,
            set,
            inputs,
            store: stores.join("r.db"),
            _tmp: tmp,
        }
    }
}

fn seed() -> u64 {
    match std::env::var("IOLAB_FUZZ_SEED") {
        Ok(s) => s.trim().parse().expect("IOLAB_FUZZ_SEED: a number"),
        Err(_) => DEFAULT_SEED,
    }
}

/// One generated `iolab run` (or another command) with hostile flag values.
fn flag_case(g: &mut Gen, pl: &Place) -> Vec<String> {
    let set = pl.set.display().to_string();
    match g.below(10) {
        // most cases: iolab run, tiny and on the null engine unless a flag says otherwise; a
        // fuzzed flag replaces the base's value of it (a flag given twice is refused by clap
        // before its value is looked at)
        0..=6 => {
            let mut opts: Vec<(String, String)> = [
                ("--dir", set.as_str()),
                ("--mode", "rndrd"),
                ("--size", "64k"),
                ("--files", "1"),
                ("--bs", "4k"),
                ("--engine", "null"),
                ("--time", "0.05"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            for _ in 0..1 + g.below(3) {
                let f = g.pick(RUN_FLAGS).to_string();
                let v = g.pick(VALUES).to_string();
                opts.retain(|(k, _)| *k != f);
                opts.push((f, v));
            }
            let mut a: Vec<String> = vec!["run".into(), "--no-save".into(), "-q".into()];
            for (f, v) in opts {
                if g.chance(30) {
                    a.push(format!("{f}={v}"));
                } else {
                    a.push(f);
                    a.push(v);
                }
            }
            a
        }
        7 => {
            let f = g.pick(&["--since", "--limit", "--mode", "--label", "--tag", "--host"]);
            vec!["list".into(), f.into(), g.pick(VALUES).into()]
        }
        8 => {
            let v = g.pick(VALUES).to_string();
            let target = format!(
                "{}{}{v}",
                g.pick(&["mibps", "iops", "p99", "p99.9", "mean", "speed", ""]),
                g.pick(&[">=", "<=", "<", ">", "="])
            );
            [
                "saturate",
                "--target",
                &target,
                "--over",
                &format!("threads=1..{}", g.pick(&["2", "0", "1e99", "-1", "x"])),
                "--max-steps",
                "2",
                "--dir",
                &set,
                "--mode",
                "rndrd",
                "--size",
                "64k",
                "--files",
                "1",
                "--engine",
                "null",
                "--time",
                "0.05",
                "-q",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        }
        _ => {
            // a sweep over a hostile list
            let f = g.pick(RUN_FLAGS);
            if matches!(f, "--db" | "--repeat" | "--role" | "--profile") {
                return vec!["sweep".into(), f.into(), g.pick(VALUES).into()];
            }
            [
                "sweep",
                f,
                &if g.chance(50) {
                    g.pick(VALUES).to_string()
                } else {
                    format!("{},{}", g.pick(VALUES), g.pick(VALUES))
                },
                "--dir",
                &set,
                "--mode",
                "rndrd",
                "--size",
                "64k",
                "--files",
                "1",
                "--engine",
                "null",
                "--time",
                "0.05",
                "-q",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        }
    }
}

/// Option lines of a generated job file.
fn job_line(g: &mut Gen, pl: &Place) -> String {
    let fifo = pl.inputs.join("fifo");
    let dir = pl.inputs.display().to_string();
    match g.below(12) {
        0 => format!(
            "size={}{}{}",
            "(".repeat(g.below(3) * 100_000 + g.below(70)),
            g.pick(&["1", "4k", "2*4k", "1/0", "-1"]),
            ")".repeat(g.below(3) * 100_000 + g.below(70))
        ),
        1 => format!(
            "include {}",
            g.pick(&[
                "/dev/zero",
                "/dev/urandom",
                "/dev/null",
                &dir,
                fifo.to_str().unwrap(),
                "/nonexistent/x.fio",
                "",
                "garbage.bin",
                "secrets.env",
            ])
        ),
        2 => String::from_utf8_lossy(&g.bytes(200)).into_owned(),
        // never 0: every job is timed by the [global] runtime, so a huge valid size= on the
        // null engine stays a 0.05 s run
        3 => format!(
            "{}={}",
            g.pick(&["runtime", "ramp_time", "startdelay", "thinktime", "timeout"]),
            g.pick(&[
                "99999999999999999999",
                "1e99",
                "-1",
                "abc",
                "",
                "(1/0)",
                "((((((((50))))))))ms",
                "0.05",
                "50ms",
                "1e-300",
                "99999999999d",
                "(2^200)",
                "１",
            ])
        ),
        4 => format!(
            "{}={}",
            g.pick(&[
                "bs",
                "bsrange",
                "bssplit",
                "iodepth",
                "numjobs",
                "nrfiles",
                "rate",
                "rate_iops",
                "rwmixread",
                "offset",
                "filesize",
                "fsync",
                "kb_base",
                "loops",
                "randseed"
            ]),
            g.pick(VALUES)
        ),
        5 => format!(
            "{}={}",
            g.pick(&[
                "rw",
                "random_distribution",
                "verify",
                "sync",
                "direct",
                "fallocate",
                "wait_for"
            ]),
            g.pick(VALUES)
        ),
        6 => format!(
            "{}=${{{}}}",
            g.pick(&["bs", "size"]),
            g.pick(&["NOPE", "", "HOME"])
        ),
        7 => format!("[{}]", g.pick(&["", "global", "x y", "ünï", "a]b", "j2"])),
        8 => format!("db_password=SECRET{}", g.pick(VALUES)),
        9 => "x".repeat(g.below(200_000)),
        10 => g
            .pick(&[
                "stonewall",
                "time_based",
                "group_reporting",
                "=",
                "==",
                "[",
                "]",
            ])
            .into(),
        _ => format!("size={}", g.pick(VALUES)),
    }
}

/// A generated job file: a small valid core (on the null engine, in the private --dir) with
/// hostile lines mixed in.
fn job_case(g: &mut Gen, pl: &Place, n: usize) -> Vec<String> {
    let mut text = format!(
        "[global]\nioengine=null\nruntime=0.05\ndirectory={}\n[j]\nrw=randread\nsize=64k\n",
        pl.set.display()
    );
    for _ in 0..1 + g.below(4) {
        text.push_str(&job_line(g, pl));
        text.push('\n');
    }
    // the null engine wins over a generated ioengine= (no file I/O)
    text.push_str("ioengine=null\n");
    let f = pl.inputs.join(format!("job-{n}.fio"));
    std::fs::write(&f, text).unwrap();
    let mut a = vec![
        "run".to_string(),
        f.display().to_string(),
        "--no-save".into(),
        "-q".into(),
    ];
    if g.chance(30) {
        a.push("--ignore-unsupported".into());
    }
    a
}

/// A generated import: a real fio or sysbench output (or a Bonnie++ CSV line) truncated,
/// with bytes flipped, numbers swapped for hostile ones, or plain garbage.
fn import_case(g: &mut Gen, pl: &Place, n: usize) -> Vec<String> {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let sources = [
        "import/fio-randread.json",
        "import/fio-two-jobs.json",
        "import/fio-randrw-jsonplus.json",
        "import/sysbench-rndrw.txt",
        "import/sysbench-seqrd.txt",
        "bonnie/bonnie++-2.00a-s0-n1.csv",
    ];
    let mut b = std::fs::read(fx.join(sources[g.below(sources.len())])).unwrap();
    match g.below(6) {
        0 => b.truncate(g.below(b.len() + 1)),
        1 => {
            for _ in 0..1 + g.below(8) {
                let i = g.below(b.len());
                b[i] = g.next() as u8;
            }
        }
        2 => {
            // every number of one kind replaced by a hostile one
            let t = String::from_utf8_lossy(&b).into_owned();
            let v = g.pick(&[
                "1e999",
                "-1",
                "NaN",
                "18446744073709551616",
                "-1e308",
                "1e308",
                "\"x\"",
            ]);
            let d = g.pick(&["0", "1", "2", "5", "9"]);
            b = t.replace(d, v).into_bytes();
        }
        3 => b = g.bytes(4096),
        4 => {
            let depth = 1 + g.below(200_000);
            b = format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes();
        }
        _ => {
            let cut = g.below(b.len() + 1);
            b.truncate(cut);
            b.extend_from_slice(&g.bytes(64));
        }
    }
    let f = pl.inputs.join(format!("import-{n}.out"));
    std::fs::write(&f, b).unwrap();
    vec!["import".into(), f.display().to_string()]
}

#[test]
fn hostile_input_gets_one_line_and_exit_2() {
    let seed = seed();
    eprintln!("fuzz_input: seed {seed} (IOLAB_FUZZ_SEED={seed} reproduces this run)");
    let mut g = Gen(seed);
    let pl = Place::new();
    // inputs the job files name: a FIFO, binary garbage, a secrets file
    let fifo = pl.inputs.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(pl.inputs.join("garbage.bin"), g.bytes(4096)).unwrap();
    std::fs::write(pl.inputs.join("secrets.env"), "db_password=SECRET\n").unwrap();
    let mut t = Tally::default();
    let clean = [pl.cwd.as_path(), pl.set.as_path()];
    for n in 0..CASES * 3 {
        let (kind, args) = match n % 3 {
            0 => ("flags", flag_case(&mut g, &pl)),
            1 => ("job file", job_case(&mut g, &pl, n)),
            _ => ("import", import_case(&mut g, &pl, n)),
        };
        let o = run_case(&args, &pl.cwd, &pl.store);
        if o.stderr.contains("SECRET") {
            t.failures.push(format!(
                "case {n} ({kind}) {args:?}: quoted a secret: {}",
                o.stderr
            ));
        }
        let mut what: String = format!("case {n} ({kind}) {args:?}")
            .chars()
            .take(400)
            .collect();
        if kind == "job file" {
            // the text, to see what failed (the seed makes it again)
            let text = std::fs::read(&args[1]).unwrap_or_default();
            let text: String = String::from_utf8_lossy(&text).chars().take(300).collect();
            what.push_str(&format!("\n  job file: {text:?}"));
        }
        t.judge(&what, &o, &clean);
    }
    eprintln!(
        "fuzz_input: {} inputs tried, {} refused with one line and exit 2, {} accepted (exit 0), {} failures",
        t.tried,
        t.refused_one_line,
        t.accepted,
        t.failures.len()
    );
    assert!(
        t.failures.is_empty(),
        "seed {seed}: {} of {} cases failed:\n{}",
        t.failures.len(),
        t.tried,
        t.failures.join("\n")
    );
}
