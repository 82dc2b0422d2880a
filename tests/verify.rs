//! `iolab run --verify` and `iolab verify --dir`: no false positives on healthy storage (a plain
//! directory, and ext4 on a loop device as root), damage made by hand in the files, and real
//! write faults from faultfs (tests/fixtures/faultfs: FAULTFS_MISDIRECT, FAULTFS_TEAR,
//! FAULTFS_DROP, FAULTFS_ZERO), each classified exactly; bad input.
//!
//! The FUSE and loop-device tests need root (and /dev/fuse, gcc, the fuse3 development files);
//! without them they skip through `common::skip`.

use crate::common;
use crate::common::faultfs::{FaultFs, run_timed, show, skip_reason};
use crate::common::*;
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Output};

const BS: u64 = 16384;

fn iolab_out(args: &[&str]) -> Output {
    run_timed(Command::new(bin()).env("IOLAB_DB", test_db()).args(args))
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", show(o)))
}

/// `iolab verify --dir D --json`: (exit code, document).
fn verify_dir(dir: &Path) -> (i32, Value) {
    let o = iolab_out(&["verify", "--dir", dir.to_str().unwrap(), "--json"]);
    let code = o.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 3, "{}", show(&o));
    (code, json_of(&o))
}

fn counts(v: &Value) -> [u64; 5] {
    ["checked", "lost", "misdirected", "torn", "stale"].map(|k| {
        v[k].as_u64()
            .unwrap_or_else(|| panic!("no verify.{k} in {v}"))
    })
}

/// 10k random 16 KiB writes and 10k reads, 4 threads, checked as they go and again by
/// `iolab verify`; then reads of the kept set, checked against what the first run wrote.
fn healthy(dir: &Path, extra: &[&str]) {
    let mut a = vec![
        "--mode",
        "rndrw",
        "--bs",
        "16k",
        "--files",
        "8",
        "--size",
        "64M",
        "--ops",
        "20000",
        "--rw-ratio",
        "1",
        "--threads",
        "4",
        "--verify",
        "--keep",
    ];
    a.extend_from_slice(extra);
    let v = run_json(dir, &a);
    assert_eq!(ops(&v, "write"), 10000);
    let c = counts(&v["verify"]);
    assert!(c[0] > 1000, "reads checked: {}", v["verify"]);
    assert_eq!(&c[1..], &[0, 0, 0, 0], "{}", v["verify"]);
    let (code, d) = verify_dir(dir);
    assert_eq!(code, 0, "{d}");
    assert_eq!(d["schema"], "iolab-verify/1");
    let c = counts(&d["verify"]);
    assert!(c[0] > 2000, "{d}");
    assert_eq!(&c[1..], &[0, 0, 0, 0], "{d}");
    assert_eq!(d["verify"]["mismatches"].as_array().unwrap().len(), 0);
    // a later read-only run goes on from the state: its reads are checked too
    let mut b = vec![
        "--mode", "rndrd", "--bs", "16k", "--files", "8", "--size", "64M", "--ops", "5000",
        "--verify", "--keep",
    ];
    b.extend_from_slice(extra);
    let v = run_json(dir, &b);
    let c = counts(&v["verify"]);
    assert!(c[0] > 1000, "{}", v["verify"]);
    assert_eq!(&c[1..], &[0, 0, 0, 0], "{}", v["verify"]);
}

#[test]
fn healthy_directory_has_no_false_positives() {
    let d = tempfile::tempdir().unwrap();
    healthy(d.path(), &[]);
}

#[test]
fn healthy_loop_device_has_no_false_positives() {
    const T: &str = "healthy_loop_device_has_no_false_positives";
    if !is_root() {
        return skip(T, "not root (needs a loop device)");
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = tmp.path().join("img");
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let sh = |c: &str| Command::new("sh").args(["-c", c]).output().expect("sh");
    let o = sh(&format!(
        "truncate -s 256M {0} && losetup --find --show --direct-io=on {0}",
        img.display()
    ));
    if !o.status.success() {
        return skip(
            T,
            &format!("no loop device: {}", String::from_utf8_lossy(&o.stderr)),
        );
    }
    let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let o = sh(&format!(
        "mkfs.ext4 -q -F {dev} && mount {dev} {}",
        mnt.display()
    ));
    let ok = o.status.success();
    if ok {
        // O_DIRECT through ext4 to the loop device, so the device is what is read back
        let r = std::panic::catch_unwind(|| healthy(&mnt, &["--direct"]));
        sh(&format!("umount {}", mnt.display()));
        sh(&format!("losetup -d {dev}"));
        if let Err(e) = r {
            std::panic::resume_unwind(e);
        }
    } else {
        sh(&format!("losetup -d {dev}"));
        panic!("mkfs/mount failed: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// One file of 64 blocks of 16 KiB, each written once (seqrewr, one thread), kept.
fn write_once(dir: &Path, passes: u64, direct: bool) -> Value {
    let ops = (64 * passes).to_string();
    let mut a = vec![
        "--mode",
        "seqrewr",
        "--bs",
        "16k",
        "--files",
        "1",
        "--size",
        "1M",
        "--ops",
        &ops,
        "--threads",
        "1",
        "--verify",
        "--keep",
    ];
    if direct {
        a.push("--direct");
    }
    run_json(dir, &a)
}

fn block(dir: &Path, i: u64) -> Vec<u8> {
    let f = std::fs::File::open(dir.join("iolab-file.0")).unwrap();
    let mut b = vec![0u8; BS as usize];
    f.read_exact_at(&mut b, i * BS).unwrap();
    b
}

fn put(dir: &Path, i: u64, b: &[u8]) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("iolab-file.0"))
        .unwrap();
    f.write_all_at(b, i * BS).unwrap();
    f.sync_all().unwrap();
}

/// The one mismatch listed at `block`, of `kind`.
fn listed(d: &Value, kind: &str, block: u64) -> Value {
    let m = d["verify"]["mismatches"].as_array().unwrap();
    m.iter()
        .find(|x| x["kind"] == kind && x["offset_bytes"] == block * BS)
        .unwrap_or_else(|| panic!("no {kind} mismatch at block {block}: {d}"))
        .clone()
}

#[test]
fn damage_made_in_the_files_is_classified() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write_once(dir, 1, false);
    let (code, v) = verify_dir(dir);
    assert_eq!((code, counts(&v["verify"])), (0, [64, 0, 0, 0, 0]), "{v}");
    // a second run goes on from the first one's state: every block at generation 2; block 3
    // gets its generation 1 back (lost)
    let old3 = block(dir, 3);
    write_once(dir, 1, false);
    put(dir, 3, &old3);
    // block 5 gets block 9's bytes (misdirected), block 7 is zeroed (stale), block 11 is half
    // from another write (torn)
    put(dir, 5, &block(dir, 9));
    put(dir, 7, &vec![0u8; BS as usize]);
    let mut t = block(dir, 11);
    t[8192..].copy_from_slice(&block(dir, 12)[8192..]);
    put(dir, 11, &t);
    let (code, v) = verify_dir(dir);
    assert_eq!(code, 3, "{v}");
    assert_eq!(counts(&v["verify"]), [64, 1, 1, 1, 1], "{v}");
    let m = listed(&v, "lost", 3);
    assert_eq!(
        (
            m["expected"]["generation"].as_u64(),
            m["found"]["generation"].as_u64()
        ),
        (Some(2), Some(1))
    );
    let m = listed(&v, "misdirected", 5);
    assert_eq!(m["found"]["offset_bytes"], 9 * BS);
    assert_eq!(m["expected"]["offset_bytes"], 5 * BS);
    assert_eq!(m["expected"]["generation"], 2);
    assert!(listed(&v, "stale", 7)["found"].is_null());
    assert_eq!(listed(&v, "torn", 11)["found"]["offset_bytes"], 11 * BS);
    // the text names each
    let o = iolab_out(&["verify", "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("verify: 64 blocks checked, 1 lost, 1 misdirected, 1 torn, 1 stale"),
        "{text}"
    );
}

#[test]
fn reads_in_a_verify_run_find_damage() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write_once(dir, 1, false);
    put(dir, 2, &vec![0u8; BS as usize]);
    let r = iolab(&[
        "run",
        "--dir",
        dir.to_str().unwrap(),
        "--mode",
        "seqrd",
        "--bs",
        "16k",
        "--files",
        "1",
        "--size",
        "1M",
        "--ops",
        "64",
        "--verify",
        "--keep",
        "--json",
        "--no-save",
        "-q",
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let v = r.json();
    assert_eq!(counts(&v["verify"]), [64, 0, 0, 0, 1], "{}", v["verify"]);
    assert_eq!(v["verify"]["mismatches"][0]["offset_bytes"], 2 * BS);
}

#[test]
fn verify_dir_of_a_set_written_without_verify_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    run_json(
        d.path(),
        &[
            "--mode", "rndwr", "--files", "1", "--size", "1M", "--ops", "50", "--keep",
        ],
    );
    let r = iolab(&["verify", "--dir", dir]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("not written by `iolab run --verify --keep`"),
        "{}",
        r.stderr
    );
    // a run that writes without --verify makes an earlier verify state void
    write_once(d.path(), 1, false);
    assert!(d.path().join(".iolab-verify").exists());
    run_json(
        d.path(),
        &[
            "--mode", "rndwr", "--bs", "16k", "--files", "1", "--size", "1M", "--ops", "50",
            "--keep",
        ],
    );
    assert_eq!(iolab(&["verify", "--dir", dir]).code, 2);
    // without --keep the state goes with the set
    let e = tempfile::tempdir().unwrap();
    run_json(
        e.path(),
        &[
            "--mode", "rndwr", "--files", "1", "--size", "1M", "--ops", "50", "--verify",
        ],
    );
    assert_eq!(entries(e.path()), Vec::<String>::new());
}

#[test]
fn verify_refuses_what_it_cannot_check() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (extra, needle) in [
        (&["--engine", "null"][..], "--engine null"),
        (
            &[
                "--bs",
                "4k",
                "--size",
                "4k",
                "--files",
                "1",
                "--threads",
                "2",
            ][..],
            "per thread",
        ),
        (&["--bs", "4k:50,6k:50"][..], "multiple of the smallest"),
        (&["--profile", "db"][..], "--role or --profile"),
    ] {
        let mut a = vec![
            "run",
            "--dir",
            dir,
            "--mode",
            "rndrw",
            "--ops",
            "10",
            "--verify",
            "-q",
            "--no-save",
        ];
        a.extend_from_slice(extra);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{a:?}: {}", r.stderr);
    }
}

macro_rules! skip_unless_fuse {
    ($test:expr) => {
        if let Some(why) = skip_reason() {
            return common::skip($test, &why);
        }
    };
}

/// A verify run (one file of 64 blocks, each written `passes` times in order, O_DIRECT so each
/// write reaches faultfs as it was made) on faultfs with one write fault; then `iolab verify`.
fn faulted(env: &[(&str, &str)], passes: u64) -> Value {
    let fs = FaultFs::mount(env);
    let dir = Path::new(fs.dir());
    let v = write_once(dir, passes, true);
    assert_eq!(counts(&v["verify"])[1..], [0, 0, 0, 0], "{}", v["verify"]);
    let (code, d) = verify_dir(dir);
    assert_eq!(code, 3, "{d}");
    d
}

#[test]
fn faultfs_misdirected_write() {
    skip_unless_fuse!("faultfs_misdirected_write");
    // block 5's write lands on block 1 (written before it): block 1 holds block 5's header,
    // block 5 still holds what prepare wrote
    let d = faulted(&[("FAULTFS_MISDIRECT", &format!("{}:{}", 5 * BS, BS))], 1);
    assert_eq!(counts(&d["verify"]), [64, 0, 1, 0, 1], "{d}");
    let m = listed(&d, "misdirected", 1);
    assert_eq!(m["found"]["offset_bytes"], 5 * BS);
    listed(&d, "stale", 5);
}

#[test]
fn faultfs_torn_write() {
    skip_unless_fuse!("faultfs_torn_write");
    let d = faulted(&[("FAULTFS_TEAR", &(5 * BS).to_string())], 1);
    assert_eq!(counts(&d["verify"]), [64, 0, 0, 1, 0], "{d}");
    assert_eq!(listed(&d, "torn", 5)["found"]["generation"], 1);
}

#[test]
fn faultfs_zeroed_block() {
    skip_unless_fuse!("faultfs_zeroed_block");
    let d = faulted(&[("FAULTFS_ZERO", &(5 * BS).to_string())], 1);
    assert_eq!(counts(&d["verify"]), [64, 0, 0, 0, 1], "{d}");
    assert!(listed(&d, "stale", 5)["found"].is_null());
}

#[test]
fn faultfs_lost_write() {
    skip_unless_fuse!("faultfs_lost_write");
    // two passes: the second write of block 5 is acknowledged and dropped
    let d = faulted(
        &[
            ("FAULTFS_DROP", &(5 * BS).to_string()),
            ("FAULTFS_FAULT_NTH", "2"),
        ],
        2,
    );
    assert_eq!(counts(&d["verify"]), [64, 1, 0, 0, 0], "{d}");
    let m = listed(&d, "lost", 5);
    assert_eq!(m["expected"]["generation"], 2);
    assert_eq!(m["found"]["generation"], 1);
}

/// A set written by an iolab of verify format 1 (CRC-32 block headers, magic `IOLABVF1`, state
/// `iolab-verify-state/1`) is recognised and refused in one line, exit 2; writing it again with
/// `--verify` makes it a set this iolab verifies.
#[test]
fn a_set_of_the_older_crc32_format_is_refused_clearly() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    write_once(d.path(), 1, false);
    // make it what format 1 wrote: the old magic and CRC-32 over the block (field zeroed)
    for i in 0..64 {
        let mut b = block(d.path(), i);
        assert_eq!(&b[..8], b"IOLABVF2", "block {i}");
        b[..8].copy_from_slice(b"IOLABVF1");
        b[48..52].fill(0);
        let crc = crc32fast::hash(&b);
        b[48..52].copy_from_slice(&crc.to_le_bytes());
        put(d.path(), i, &b);
    }
    let state = d.path().join(".iolab-verify");
    let body = std::fs::read(&state).unwrap();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("\"iolab-verify-state/2\""));
    let old = text.replacen("iolab-verify-state/2", "iolab-verify-state/1", 1);
    std::fs::write(&state, old.as_bytes()).unwrap();
    let r = iolab(&["verify", "--dir", dir, "--no-save"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("written by an older iolab (verify format 1, CRC-32"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    // written again: verified clean
    write_once(d.path(), 1, false);
    let (code, v) = verify_dir(d.path());
    assert_eq!(code, 0, "{v}");
    assert_eq!(counts(&v["verify"]), [64, 0, 0, 0, 0], "{v}");
}
