//! The engine contract: every registered engine runs the same cases.
//!
//! The engines come from `iolab::engine::ENGINES`, so a new engine inherits every case here the
//! day it is registered. A case that an engine cannot do is skipped because of what the engine
//! declares in its capability flags ([`Caps`]), never because of its name; an engine this kernel
//! cannot run (its own probe, `engine::available`) is skipped with its reason, which fails under
//! `CI=true`.
//!
//! Expected results (buggy results in brackets):
//! - `--ops N` gives exactly N reads or writes, whatever the thread count and queue depth
//!   [a thread over- or under-issues; a queue engine counts submissions it never reaped].
//! - `--rw-ratio R` gives exactly R reads per write [the mix drifts or is random].
//! - `--fsync-freq K` gives one fsync per K writes to a file, plus one per dirty file at the end
//!   [the engine skips fsyncs, or a queue engine loses the one due with the last write].
//! - A write the kernel refuses (EFBIG past RLIMIT_FSIZE) is counted by errno, the rest complete,
//!   and the run exits 3 [errors counted as successes, or the run aborts].
//! - `--direct`, `--iodepth` and the file set do what the flags say.
//! - `--bs 4k:50,64k:50` (sizes that vary per I/O, also in flight together) completes every I/O
//!   whole, and the per-size counts add up to the totals [a slot buffer too small, an I/O past
//!   the end of its file, a short transfer counted as an error].

use crate::common::*;
use iolab::engine::{Caps, Direct, ENGINES};
use iolab::model::job::EngineKind;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The registered engines this kernel can run (each engine's own probe, `engine::available`,
/// for as many threads and as deep a queue as any case here asks); an engine it cannot run is
/// skipped by [`skip`] with the engine's reason (a failure under `CI=true`).
fn engines(test: &str) -> impl Iterator<Item = &'static Caps> {
    let test = test.to_string();
    // the engines without I/O (cpuio, exec) run from job files only, with no counts to check
    // here: tests/fio_noio.rs compares them with fio
    ENGINES.iter().filter(|c| !c.no_io).filter(move |c| {
        let kind: EngineKind = c.name.parse().unwrap();
        match iolab::engine::available(kind, 4, 16) {
            Ok(()) => true,
            Err(why) => {
                skip(&format!("{test} ({})", c.name), &why);
                false
            }
        }
    })
}

/// A random mode the engine runs and the operation it counts: random reads, or random writes
/// for an engine without reads (ftruncate, which declares it).
fn random_op(c: &Caps) -> (&'static str, &'static str) {
    if c.reads {
        ("rndrd", "read")
    } else {
        ("rndwr", "write")
    }
}

/// 4 files of 1 MiB: 64 blocks of 16 KiB each.
const SET: &[&str] = &["--files", "4", "--size", "4M"];

/// `iolab run` with engine `c` on the small set; asserts exit 0 and returns the JSON.
fn run(dir: &Path, c: &Caps, extra: &[&str]) -> Value {
    let mut a = vec!["--engine", c.name];
    a.extend_from_slice(SET);
    a.extend_from_slice(extra);
    let v = run_json(dir, &a);
    assert_eq!(v["job"]["engine"], c.name, "{a:?}");
    v
}

fn errors(v: &Value) -> &serde_json::Map<String, Value> {
    v["errors"]
        .as_object()
        .unwrap_or_else(|| panic!("no errors map in {v}"))
}

fn warning_codes(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .expect("warnings[]")
        .iter()
        .map(|w| w["code"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[test]
fn the_registry_lists_every_engine_once() {
    let mut names: Vec<&str> = ENGINES.iter().map(|c| c.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), ENGINES.len());
    for c in ENGINES {
        let kind: EngineKind = c.name.parse().unwrap();
        assert_eq!(iolab::engine::caps(kind), c);
    }
}

#[test]
fn ops_gives_exact_counts_at_any_thread_count_and_depth() {
    let d = tempfile::tempdir().unwrap();
    for c in engines("ops_gives_exact_counts_at_any_thread_count_and_depth") {
        for threads in ["1", "3"] {
            for (mode, op) in [("rndrd", "read"), ("seqrd", "read"), ("rndwr", "write")] {
                if op == "read" && !c.reads {
                    continue; // declared: the engine has no reads (usage error, below)
                }
                let v = run(
                    d.path(),
                    c,
                    &[
                        "--mode",
                        mode,
                        "--ops",
                        "1000",
                        "--threads",
                        threads,
                        "--iodepth",
                        "4",
                        "--fsync-freq",
                        "0",
                        "--no-fsync-end",
                        "--seed",
                        "7",
                    ],
                );
                let what = format!("{} {mode} x{threads}", c.name);
                assert_eq!(ops(&v, op), 1000, "{what}");
                assert_eq!(v["results"][op]["bytes"], 1000 * 16384, "{what}");
                let other = if op == "read" { "write" } else { "read" };
                assert_eq!(ops(&v, other), 0, "{what}");
                assert_eq!(ops(&v, "fsync"), 0, "{what}");
                assert!(errors(&v).is_empty(), "{what}: {:?}", errors(&v));
            }
        }
    }
}

#[test]
fn rw_ratio_gives_an_exact_split() {
    let d = tempfile::tempdir().unwrap();
    for c in engines("rw_ratio_gives_an_exact_split").filter(|c| c.reads) {
        for (ratio, n, want) in [("3", "1200", (900, 300)), ("0.5", "900", (300, 600))] {
            let v = run(
                d.path(),
                c,
                &[
                    "--mode",
                    "rndrw",
                    "--ops",
                    n,
                    "--rw-ratio",
                    ratio,
                    "--threads",
                    "2",
                    "--iodepth",
                    "8",
                    "--fsync-freq",
                    "0",
                    "--no-fsync-end",
                ],
            );
            assert_eq!(
                (ops(&v, "read"), ops(&v, "write")),
                want,
                "{} --rw-ratio {ratio}",
                c.name
            );
            assert!(errors(&v).is_empty(), "{}: {:?}", c.name, errors(&v));
        }
    }
}

#[test]
fn fsync_freq_fsync_all_and_fsync_end_give_exact_fsync_counts() {
    let d = tempfile::tempdir().unwrap();
    for c in engines("fsync_freq_fsync_all_and_fsync_end_give_exact_fsync_counts") {
        // 256 sequential writes touch each of the 4 x 64 blocks once; every 10th write to a
        // file fsyncs it (6 per file), then --fsync-end syncs the 4 files left dirty.
        let base = ["--mode", "seqrewr", "--ops", "256", "--fsync-freq", "10"];
        let v = run(d.path(), c, &base);
        assert_eq!(
            (ops(&v, "write"), ops(&v, "fsync")),
            (256, 28),
            "{}",
            c.name
        );
        let v = run(d.path(), c, &[&base[..], &["--no-fsync-end"]].concat());
        assert_eq!(
            (ops(&v, "write"), ops(&v, "fsync")),
            (256, 24),
            "{}",
            c.name
        );
        // One fsync per write, also with writes in flight and the fdatasync flavour.
        for fsync_mode in ["fsync", "fdatasync"] {
            let v = run(
                d.path(),
                c,
                &[
                    "--mode",
                    "rndwr",
                    "--ops",
                    "100",
                    "--fsync-all",
                    "--fsync-mode",
                    fsync_mode,
                    "--iodepth",
                    "8",
                ],
            );
            assert_eq!(
                (ops(&v, "write"), ops(&v, "fsync")),
                (100, 100),
                "{} {fsync_mode}",
                c.name
            );
            assert!(errors(&v).is_empty(), "{}: {:?}", c.name, errors(&v));
        }
        if c.reads {
            let v = run(
                d.path(),
                c,
                &["--mode", "rndrd", "--ops", "100", "--fsync-freq", "1"],
            );
            assert_eq!(ops(&v, "fsync"), 0, "{}: reads never fsync", c.name);
        } else {
            // an engine without reads refuses a read mode, with one line naming the engine
            let mut a = vec!["run", "--dir", d.path().to_str().unwrap(), "--no-save"];
            a.extend_from_slice(&["--engine", c.name, "--mode", "rndrd,rndwr"]);
            a.extend_from_slice(SET);
            let r = iolab(&a);
            assert_eq!(r.code, 2, "{}: {}", c.name, r.stderr);
            assert!(r.stderr.contains("--engine"), "{}", r.stderr);
            assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        }
    }
}

#[test]
fn refused_writes_are_counted_by_errno_and_the_rest_complete() {
    const LIMIT: u64 = 2 << 20;
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    // One 4 MiB file, written before the limit applies.
    let r = iolab(&[
        "prepare", "--dir", dir, "--files", "1", "--size", "4M", "-q",
    ]);
    assert_eq!(r.code, 0, "prepare: {}", r.stderr);
    let mut ran = 0;
    for c in engines("refused_writes_are_counted_by_errno_and_the_rest_complete") {
        if !c.moves_data {
            // Declared too: its writes allocate or truncate (falloc, ftruncate), and the kernel
            // refuses neither inside a file's size at RLIMIT_FSIZE as it refuses a write.
            eprintln!(
                "note: refused_writes_are_counted_by_errno: {} declares that it moves no data",
                c.name
            );
            continue;
        }
        if !c.counts_errors {
            // Not a skip: the engine declares it, and the contract test reads the declaration.
            eprintln!(
                "note: refused_writes_are_counted_by_errno: {} declares that it cannot count errors",
                c.name
            );
            continue;
        }
        // The kernel refuses writes at or past RLIMIT_FSIZE with EFBIG (and SIGXFSZ, ignored
        // here), also inside an existing file: the second half of each pass over the file fails.
        let mut cmd = Command::new(bin());
        cmd.args([
            "run",
            "--dir",
            dir,
            "--files",
            "1",
            "--size",
            "4M",
            "--keep",
            "--json",
            "--no-save",
            "-q",
            "--engine",
            c.name,
            "--mode",
            "seqrewr",
            "--ops",
            "512",
            "--iodepth",
            "4",
            "--fsync-freq",
            "0",
            "--no-fsync-end",
        ])
        .env("IOLAB_DB", test_db());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let lim = libc::rlimit {
                    rlim_cur: LIMIT,
                    rlim_max: LIMIT,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
        let o = cmd.output().expect("run iolab");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{}: {stderr}", c.name);
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{}: stdout is not JSON ({e}): {stderr}", c.name));
        // 2 passes over 256 blocks: blocks 0..127 are below the limit, 128..255 past it.
        assert_eq!(ops(&v, "write"), 256, "{}", c.name);
        assert_eq!(v["results"]["write"]["bytes"], 256 * 16384, "{}", c.name);
        let e = errors(&v);
        assert_eq!(e.len(), 1, "{}: {e:?}", c.name);
        assert_eq!(e["EFBIG"], 256, "{}: {e:?}", c.name);
        assert!(warning_codes(&v).contains(&"io_errors".to_string()));
        ran += 1;
    }
    assert!(ran > 0, "no engine counts errors: the case tested nothing");
}

/// Whether the filesystem under `dir` accepts O_DIRECT.
fn direct_ok(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let p = dir.join("direct-probe");
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_DIRECT)
        .open(&p)
        .is_ok();
    let _ = std::fs::remove_file(&p);
    ok
}

#[test]
fn direct_is_honoured_refused_or_ignored_as_declared() {
    let d = tempfile::tempdir().unwrap();
    let can_direct = direct_ok(d.path());
    for c in engines("direct_is_honoured_refused_or_ignored_as_declared") {
        let (mode, op) = random_op(c);
        let args = ["--mode", mode, "--ops", "200", "--direct"];
        match c.direct {
            Direct::Refused => {
                let mut a = vec!["run", "--dir", d.path().to_str().unwrap(), "--no-save"];
                a.extend_from_slice(&["--engine", c.name]);
                a.extend_from_slice(SET);
                a.extend_from_slice(&args);
                let r = iolab(&a);
                assert_eq!(r.code, 2, "{}: {}", c.name, r.stderr);
                assert!(r.stderr.contains("--direct"), "{}: {}", c.name, r.stderr);
                assert_eq!(r.stderr.lines().count(), 1, "{}: {}", c.name, r.stderr);
                assert!(entries(d.path()).is_empty(), "nothing written");
            }
            Direct::Honoured if !can_direct => skip(
                "direct_is_honoured",
                &format!("{}: the test directory refuses O_DIRECT", c.name),
            ),
            Direct::Honoured | Direct::Ignored => {
                let v = run(d.path(), c, &args);
                assert_eq!(v["job"]["direct"], true, "{}", c.name);
                assert_eq!(ops(&v, op), 200, "{}", c.name);
                assert!(errors(&v).is_empty(), "{}: {:?}", c.name, errors(&v));
            }
        }
    }
}

#[test]
fn iodepth_applies_only_to_queue_engines() {
    let d = tempfile::tempdir().unwrap();
    for c in engines("iodepth_applies_only_to_queue_engines") {
        let (mode, op) = random_op(c);
        let v = run(
            d.path(),
            c,
            &["--mode", mode, "--ops", "500", "--iodepth", "16"],
        );
        assert_eq!(ops(&v, op), 500, "{}", c.name);
        let ignored = warning_codes(&v).contains(&"iodepth_ignored".to_string());
        assert_eq!(ignored, !c.async_queue, "{}: {:?}", c.name, v["warnings"]);
    }
}

#[test]
fn only_engines_that_need_files_get_a_file_set() {
    for c in engines("only_engines_that_need_files_get_a_file_set") {
        let d = tempfile::tempdir().unwrap();
        let v = run(d.path(), c, &["--mode", "rndwr", "--ops", "100"]);
        assert_eq!(ops(&v, "write"), 100, "{}", c.name);
        let written = v["prepare"]["written_bytes"]
            .as_u64()
            .expect("prepare.written_bytes");
        let want = if c.needs_files { 4 << 20 } else { 0 };
        assert_eq!(written, want, "{}: bytes of file set written", c.name);
        assert!(
            entries(d.path()).is_empty(),
            "{}: the set this run created is removed: {:?}",
            c.name,
            entries(d.path())
        );
    }
}

#[test]
fn a_bs_mix_is_issued_whole_by_every_engine() {
    let d = tempfile::tempdir().unwrap();
    let can_direct = direct_ok(d.path());
    for c in engines("a_bs_mix_is_issued_whole_by_every_engine") {
        let direct = c.direct == Direct::Honoured && can_direct;
        for mode in ["rndrw", "seqrd", "seqrewr"] {
            if !c.reads && mode != "seqrewr" {
                continue; // declared: no reads
            }
            let mut a = vec![
                "--mode",
                mode,
                "--bs",
                "4k:50,64k:50",
                "--ops",
                "1000",
                "--threads",
                "3",
                "--iodepth",
                "8",
                "--fsync-freq",
                "0",
                "--no-fsync-end",
            ];
            if direct {
                a.push("--direct");
            }
            let v = run(d.path(), c, &a);
            let what = format!("{} {mode} direct={direct}", c.name);
            assert!(errors(&v).is_empty(), "{what}: {:?}", errors(&v));
            assert_eq!(ops(&v, "read") + ops(&v, "write"), 1000, "{what}");
            for op in ["read", "write"] {
                if ops(&v, op) == 0 {
                    continue;
                }
                let e = v["results"][op]["by_bs"].as_array().expect("by_bs");
                let (n, b): (u64, u64) = e.iter().fold((0, 0), |(n, b), x| {
                    (
                        n + x["ops"].as_u64().unwrap(),
                        b + x["bytes"].as_u64().unwrap(),
                    )
                });
                assert_eq!(n, ops(&v, op), "{what} {op}");
                assert_eq!(
                    b,
                    v["results"][op]["bytes"].as_u64().unwrap(),
                    "{what} {op}"
                );
            }
        }
    }
}

#[test]
fn verify_finds_no_mismatch_with_every_engine() {
    // --verify: writes carry headers, reads are checked, a later run goes on from the state the
    // earlier left; an engine that touches no file refuses the flag.
    for c in engines("verify_finds_no_mismatch_with_every_engine") {
        let d = tempfile::tempdir().unwrap();
        let can_direct = direct_ok(d.path());
        if !c.needs_files || !c.moves_data {
            let r = iolab(&[
                "run",
                "--dir",
                d.path().to_str().unwrap(),
                "--engine",
                c.name,
                "--mode",
                "rndwr",
                "--ops",
                "100",
                "--verify",
                "--no-save",
                "-q",
            ]);
            assert_eq!(r.code, 2, "{}: {}", c.name, r.stderr);
            assert!(r.stderr.contains("--verify"), "{}", r.stderr);
            continue;
        }
        let direct = c.direct == Direct::Honoured && can_direct;
        for mode in ["rndwr", "rndrw", "seqrewr", "seqrd"] {
            let mut a = vec![
                "--mode",
                mode,
                "--bs",
                "4k:50,64k:50",
                "--ops",
                "2000",
                "--threads",
                "3",
                "--iodepth",
                "8",
                "--verify",
                "--keep",
            ];
            if direct {
                a.push("--direct");
            }
            let v = run(d.path(), c, &a);
            let what = format!("{} {mode} direct={direct}", c.name);
            assert!(errors(&v).is_empty(), "{what}: {:?}", errors(&v));
            let vf = &v["verify"];
            for k in ["lost", "misdirected", "torn", "stale"] {
                assert_eq!(vf[k], 0, "{what}: {vf}");
            }
            if mode == "rndrw" || mode == "seqrd" {
                assert!(vf["checked"].as_u64().unwrap() > 0, "{what}: {vf}");
            }
        }
    }
}
