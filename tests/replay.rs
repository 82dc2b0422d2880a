//! `iolab run --replay TRACE` (docs/capture.md, Replay): a capture replayed at its times (the
//! trace's requests per direction, its flushes as fsyncs, its time within 0.5 %), faster with
//! `--speed`, as fast as it can with `--closed`; fio's own `write_iolog` replayed by iolab with
//! fio's counts, and by fio itself; a long trace in bounded memory; bad input in one line.
//! No root: a file set in a temporary directory under /var/tmp (O_DIRECT).

use crate::common::blk::have;
use crate::common::*;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// A scratch directory on a filesystem with O_DIRECT (not tmpfs before Linux 6.6).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iolab-replay-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// A capture file of `n` requests, one every `gap_ns`: 16 KiB, 70 % reads, offsets over
/// 64 MiB, a flush after every 100th, queue depth 1 (the header and a summary line around).
fn capture(path: &Path, n: u64, gap_ns: u64) -> (u64, u64, u64) {
    let mut s = String::from(
        r#"{"schema":"iolab-capture/1","iolab_version":"t","device":"loop9","majmin":"7:9","start":"2026-01-01T00:00:00Z","host":"h","kernel":"k","source":"s"}"#,
    );
    s.push('\n');
    let (mut r, mut w, mut f) = (0, 0, 0);
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let dir = if x % 10 < 7 { "read" } else { "write" };
        if dir == "read" {
            r += 1
        } else {
            w += 1
        }
        let off = (x >> 8) % 4096 * 16384;
        writeln!(
            s,
            r#"{{"t_ns":{},"dir":"{dir}","offset_bytes":{off},"size_bytes":16384,"flags":["sync"],"lat_ns":200000,"qd":1,"pid":7,"comm":"db"}}"#,
            i * gap_ns
        )
        .unwrap();
        if i % 100 == 99 {
            f += 1;
            writeln!(
                s,
                r#"{{"t_ns":{},"dir":"flush","offset_bytes":0,"size_bytes":0,"flags":["preflush"],"lat_ns":900000,"qd":1,"pid":7,"comm":"db"}}"#,
                i * gap_ns + 1000
            )
            .unwrap();
        }
    }
    s.push_str(r#"{"schema":"iolab-capture-summary/1"}"#);
    s.push('\n');
    std::fs::write(path, s).unwrap();
    (r, w, f)
}

/// The file set's directory `set` in the scratch directory `d`, made empty.
fn set_in(d: &tempfile::TempDir) -> std::path::PathBuf {
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    set
}

fn replay(dir: &Path, trace: &Path, extra: &[&str]) -> Value {
    let mut a = vec!["--replay", trace.to_str().unwrap()];
    a.extend_from_slice(extra);
    run_json(dir, &a)
}

/// A replay whose timing error is within `bound_pct`: a replay over the bound (a host that
/// stalled the process for tens of ms near its end) is run afresh, up to 3 times in all, and
/// judged on the last.
fn on_time(set: &Path, trace: &Path, extra: &[&str], bound_pct: f64) -> Value {
    let mut last = Value::Null;
    for attempt in 1..=3 {
        last = replay(set, trace, extra);
        let err = last["replay"]["timing_error_pct"].as_f64().unwrap();
        if err.abs() < bound_pct {
            return last;
        }
        eprintln!("{extra:?}: timing error {err} % at attempt {attempt}: measured afresh");
    }
    panic!(
        "{extra:?}: timing error over {bound_pct} % three times: {}",
        last["replay"]
    );
}

/// 20,000 requests per second of a fio iolog (4 KiB, a quarter writes, on a cached file): the
/// replay keeps the trace's time within 0.5 % (no stall, no drift).
#[test]
fn twenty_thousand_requests_a_second_keep_their_time() {
    let d = scratch();
    let log = d.path().join("fast.iolog");
    let mut s = String::from("fio version 3 iolog\n0 f add\n0 f open\n");
    for i in 0..40_000u64 {
        let op = if i % 4 == 0 { "write" } else { "read" };
        writeln!(s, "{} f {op} {} 4096", i * 50, (i * 7919 % 2048) * 4096).unwrap();
    }
    std::fs::write(&log, s).unwrap();
    let set = set_in(&d);
    let v = on_time(&set, &log, &["--buffered"], 0.5);
    assert_eq!(ops(&v, "read") + ops(&v, "write"), 40_000);
    assert!((v["replay"]["trace_s"].as_f64().unwrap() - 1.99995).abs() < 1e-6);
}

/// 1,000 requests at 250 per second (4 s), with 10 flushes: every request replayed, per
/// direction, the flushes as fsyncs; the replay's span within 0.5 % of the trace's; `--speed 2`
/// takes half the time; `--closed` ignores the times.
#[test]
fn a_capture_replays_at_its_times_faster_with_speed_and_at_once_closed() {
    let d = scratch();
    let cap = d.path().join("t.cap");
    let (r, w, f) = capture(&cap, 1000, 4_000_000);
    let set = set_in(&d);
    let v = on_time(&set, &cap, &[], 0.5);
    assert_eq!(
        (ops(&v, "read"), ops(&v, "write"), ops(&v, "fsync")),
        (r, w, f),
        "the trace's requests, per direction"
    );
    assert_eq!(v["results"]["read"]["bytes"].as_u64(), Some(r * 16384));
    let rp = &v["job"]["replay"];
    assert_eq!(rp["format"], "iolab-capture");
    assert_eq!(rp["requests"].as_u64(), Some(r + w + f));
    assert_eq!(v["job"]["direct"], true, "O_DIRECT by default");
    let res = &v["replay"];
    assert_eq!(res["issued"].as_u64(), Some(r + w + f));
    let trace_s = res["trace_s"].as_f64().unwrap();
    assert!((trace_s - 3.996_001).abs() < 1e-6, "{res}");
    assert!(
        v["schedule_lag_ns"]["p50"].as_u64().unwrap() < 2_000_000,
        "{}",
        v["schedule_lag_ns"]
    );

    let v = on_time(&set, &cap, &["--speed", "2"], 1.0);
    assert!((v["replay"]["trace_s"].as_f64().unwrap() - 1.998).abs() < 1e-3);
    assert_eq!(ops(&v, "read") + ops(&v, "write"), r + w);

    let v = replay(&set, &cap, &["--closed"]);
    let res = &v["replay"];
    assert!(res["timing_error_pct"].is_null());
    assert!(
        res["replay_s"].as_f64().unwrap() < 2.0,
        "--closed: the trace's 4 s in {res}"
    );
    assert_eq!(ops(&v, "read") + ops(&v, "write"), r + w);
    assert_eq!(res["max_in_flight"].as_u64(), Some(1), "the captured qd 1");
}

/// `--time` cuts a replay short: the requests of its first second, its span not judged.
#[test]
fn time_cuts_a_replay_short_and_leaves_its_timing_unjudged() {
    let d = scratch();
    let cap = d.path().join("t.cap");
    capture(&cap, 1000, 4_000_000);
    let set = set_in(&d);
    let v = replay(&set, &cap, &["--time", "1"]);
    let issued = v["replay"]["issued"].as_u64().unwrap();
    assert!((200..=300).contains(&issued), "{}", v["replay"]);
    assert!(v["replay"]["timing_error_pct"].is_null(), "{}", v["replay"]);
    assert!(v["replay"]["replay_s"].as_f64().unwrap() <= 1.01);
}

/// A trace's requests land where it put them (inside a target as large as its extent), and
/// past a smaller `--size` they wrap around it: the file set's file is never grown.
#[test]
fn offsets_past_the_target_wrap_around_it() {
    let d = scratch();
    let cap = d.path().join("t.cap");
    capture(&cap, 300, 100_000);
    let set = set_in(&d);
    let v = replay(&set, &cap, &["--closed", "--size", "4m", "--keep"]);
    assert!(v["job"]["replay"]["extent_bytes"].as_u64().unwrap() > 4 << 20);
    assert_eq!(ops(&v, "read") + ops(&v, "write"), 300);
    let files: Vec<_> = std::fs::read_dir(&set)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("iolab-file"))
        .collect();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].metadata().unwrap().len(), 4 << 20);
    let r = iolab(&["cleanup", "--dir", set.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// fio 3.33's own `write_iolog` (version 3) of a random read/write job: iolab replays it with
/// fio's reads and writes, and fio replays the same log with the same counts.
#[test]
fn fios_iolog_is_replayed_with_fios_counts() {
    if !have("fio") {
        return skip(
            "fios_iolog_is_replayed_with_fios_counts",
            "fio is not installed",
        );
    }
    let d = scratch();
    let file = d.path().join("data");
    let log = d.path().join("fio.iolog");
    let o = Command::new("fio")
        .args([
            "--name=w",
            &format!("--filename={}", file.display()),
            "--size=8m",
            "--rw=randrw",
            "--bs=4k",
            "--number_ios=600",
            "--direct=1",
            &format!("--write_iolog={}", log.display()),
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let f: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let (fr, fw) = (
        f["jobs"][0]["read"]["total_ios"].as_u64().unwrap(),
        f["jobs"][0]["write"]["total_ios"].as_u64().unwrap(),
    );
    assert_eq!(fr + fw, 600);
    let set = set_in(&d);
    let v = replay(&set, &log, &[]);
    assert_eq!(v["job"]["replay"]["format"], "fio-iolog-3");
    assert_eq!(
        (ops(&v, "read"), ops(&v, "write")),
        (fr, fw),
        "fio's counts"
    );
    assert_eq!(
        v["job"]["iodepth"].as_u64(),
        Some(32),
        "an iolog's default depth"
    );
    // fio replays its own log onto the same file: the same counts
    let read_iolog = format!("--read_iolog={}", log.display());
    assert_eq!(
        fio_counts(&["--name=r", &read_iolog, "--direct=1"]).0,
        (fr, fw)
    );
    // the same log in a job file (fio's read_iolog, replay_time_scale, replay_no_stall), run
    // by iolab as its replay (onto a file under directory=) and by fio itself: the same counts
    let job = d.path().join("r.fio");
    let set_dir = d.path().join("set");
    std::fs::create_dir_all(&set_dir).unwrap();
    for (extra, speed, closed) in [
        ("replay_time_scale=200\n", 2.0, false),
        ("replay_no_stall=1\n", 1.0, true),
    ] {
        std::fs::write(
            &job,
            format!(
                "[r]\nread_iolog={}\ndirect=1\ndirectory={}\n{extra}",
                log.display(),
                set_dir.display()
            ),
        )
        .unwrap();
        let r = iolab(&["run", job.to_str().unwrap(), "--no-save", "--json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = r.json();
        assert_eq!((ops(&v, "read"), ops(&v, "write")), (fr, fw), "{extra}");
        assert_eq!(v["job"]["replay"]["speed"].as_f64(), Some(speed), "{extra}");
        assert_eq!(
            v["job"]["replay"]["closed"].as_bool(),
            Some(closed),
            "{extra}"
        );
        // fio replays onto the log's own file (its directory= would prefix the log's path)
        let fio_job = d.path().join("f.fio");
        std::fs::write(
            &fio_job,
            format!("[r]\nread_iolog={}\ndirect=1\n{extra}", log.display()),
        )
        .unwrap();
        let (fio_ops, fio_bytes) = fio_counts(&[fio_job.to_str().unwrap()]);
        assert_eq!(fio_ops, (fr, fw), "fio's own replay of {extra}");
        // per direction the same bytes as fio's own replay of the job
        let bytes = |d: &str| v["results"][d]["bytes"].as_u64().unwrap();
        assert_eq!(
            (bytes("read"), bytes("write")),
            fio_bytes,
            "bytes of {extra}"
        );
    }
    // beside another job in its phase: refused in one line
    std::fs::write(
        &job,
        format!(
            "[r]\nread_iolog={}\ndirectory={}\n[w]\nrw=write\nsize=1m\ndirectory={}\n",
            log.display(),
            set_dir.display(),
            set_dir.display()
        ),
    )
    .unwrap();
    let r = iolab(&["run", job.to_str().unwrap(), "--no-save"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("read_iolog: a replay runs in a phase of its own")
            && r.stderr.trim_end().lines().count() == 1,
        "{}",
        r.stderr
    );
}

/// fio run with `args` (JSON output): its first job's reads and writes, and their bytes.
fn fio_counts(args: &[&str]) -> ((u64, u64), (u64, u64)) {
    let o = Command::new("fio")
        .args(args)
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let g: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let n = |d: &str| g["jobs"][0][d]["total_ios"].as_u64().unwrap();
    let b = |d: &str| g["jobs"][0][d]["io_bytes"].as_u64().unwrap();
    ((n("read"), n("write")), (b("read"), b("write")))
}

/// A million-request fio iolog replayed closed-loop on a small cached file: memory does not
/// follow the trace (its file is 30 MB; iolab's resident peak, VmHWM, stays under 100 MB).
#[test]
fn a_long_trace_replays_in_bounded_memory() {
    let d = scratch();
    let log = d.path().join("long.iolog");
    let mut s = String::with_capacity(32 << 20);
    s.push_str("fio version 3 iolog\n0 f add\n0 f open\n");
    const N: u64 = 1_000_000;
    for i in 0..N {
        let op = if i % 4 == 0 { "write" } else { "read" };
        writeln!(s, "{} f {op} {} 4096", i, (i * 7919 % 2048) * 4096).unwrap();
    }
    s.push_str("1000000 f close\n");
    std::fs::write(&log, &s).unwrap();
    drop(s);
    let set = set_in(&d);
    let mut child = Command::new(bin())
        .args([
            "run",
            "--replay",
            log.to_str().unwrap(),
            "--closed",
            "--buffered",
            "--dir",
            set.to_str().unwrap(),
            "--json",
            "--no-save",
            "-q",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut so = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).unwrap();
        v
    });
    // its own peak, VmHWM of its address space, read while it runs: wait4's ru_maxrss is no
    // measure here, as exec folds the spawning process's peak (this test harness's, hundreds
    // of MB after a long run of tests) into it
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let status_file = format!("/proc/{}/status", child.id());
    let watch = {
        let done = done.clone();
        std::thread::spawn(move || {
            let (mut peak, mut reads) = (0u64, 0u32);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(kib) = std::fs::read_to_string(&status_file)
                    .ok()
                    .and_then(|s| vm_hwm_kib(&s))
                {
                    peak = peak.max(kib);
                    reads += 1;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            (peak, reads)
        })
    };
    let status = child.wait().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (rss_kib, reads) = watch.join().unwrap();
    let stdout = out.join().unwrap();
    assert!(status.success(), "{status}");
    assert!(reads > 0, "no reading of {}'s VmHWM", bin());
    let v: Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(ops(&v, "read") + ops(&v, "write"), N);
    assert!(
        rss_kib < 100 * 1024,
        "resident peak {rss_kib} KiB for a {N}-request trace"
    );
}

/// The `VmHWM:` figure of a /proc/PID/status text (KiB).
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let l = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

/// Bad input: one line naming the flag or the file, exit 2, nothing made.
#[test]
fn bad_replays_are_one_line_and_make_nothing() {
    let d = scratch();
    let set = set_in(&d);
    let junk = d.path().join("junk");
    std::fs::write(&junk, "hello\n").unwrap();
    let cap = d.path().join("t.cap");
    capture(&cap, 10, 1000);
    let bad_line = d.path().join("bad.iolog");
    std::fs::write(&bad_line, "fio version 3 iolog\n0 f add\n5 f read 0 x\n").unwrap();
    let s = set.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--replay", "/nonexistent/t"],
            "--replay /nonexistent/t: cannot read it",
        ),
        (vec!["--replay", junk.to_str().unwrap()], "line 1: neither"),
        (
            vec!["--replay", bad_line.to_str().unwrap()],
            "line 3: the length \"x\"",
        ),
        (
            vec!["--replay", cap.to_str().unwrap(), "--mode", "rndrd"],
            "--mode cannot be used with it",
        ),
        (
            vec!["--replay", cap.to_str().unwrap(), "--engine", "mmap"],
            "--replay needs an engine",
        ),
        (
            vec!["--replay", cap.to_str().unwrap(), "--speed", "0"],
            "--speed",
        ),
        (vec!["--speed", "2"], "--replay"),
    ] {
        let mut a = vec!["run", "--dir", s, "--no-save"];
        a.extend_from_slice(&args);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(
            entries(&set).is_empty(),
            "{args:?} made {:?}",
            entries(&set)
        );
    }
}

/// One `struct blk_io_trace` (little-endian, this machine's order) with its payload.
fn blk_event(seq: u32, t: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(48 + pdu.len());
    v.extend_from_slice(&0x6561_7407u32.to_le_bytes()); // magic | version 7
    v.extend_from_slice(&seq.to_le_bytes());
    v.extend_from_slice(&t.to_le_bytes());
    v.extend_from_slice(&sector.to_le_bytes());
    v.extend_from_slice(&bytes.to_le_bytes());
    v.extend_from_slice(&action.to_le_bytes());
    v.extend_from_slice(&42u32.to_le_bytes()); // pid
    v.extend_from_slice(&((7u32 << 20) | 9).to_le_bytes()); // device 7:9
    v.extend_from_slice(&0u32.to_le_bytes()); // cpu
    v.extend_from_slice(&0u16.to_le_bytes()); // error
    v.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
    v.extend_from_slice(pdu);
    v
}

/// A blktrace binary (one CPU's events: a process note, queue, issue and complete events of
/// 16 KiB reads and sync writes 1 ms apart, two flushes, a discard) merged by blkparse 1.2
/// (`blkparse -i t -d merged.bin`): iolab replays the queue events blkparse lists, per
/// direction, and refuses a cut file in one line.
#[test]
fn a_blktrace_replays_the_queue_events_blkparse_lists() {
    if !have("blkparse") {
        return skip(
            "a_blktrace_replays_the_queue_events_blkparse_lists",
            "blkparse (package blktrace) is not installed",
        );
    }
    const TC: u32 = 16;
    let (read, write, flush, sync, queue, issue, complete, notify, discard) = (
        1u32, 2u32, 4u32, 8u32, 16u32, 64u32, 128u32, 1024u32, 8192u32,
    );
    let mut b = blk_event(0, 0, 0, 0, notify << TC, b"db\0");
    let mut seq = 1;
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    for i in 0..200u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let cat = if x % 10 < 3 { write | sync } else { read };
        let (t, sector) = ((i + 1) * 1_000_000, (x >> 16) % 8192 * 32);
        for (dt, a) in [
            (0, 1 | ((queue | cat) << TC)),
            (1000, 7 | ((issue | cat) << TC)),
            (200_000, 8 | ((complete | cat) << TC)),
        ] {
            b.extend(blk_event(seq, t + dt, sector, 16384, a, &[]));
            seq += 1;
        }
        if i == 50 || i == 150 {
            b.extend(blk_event(
                seq,
                t + 300_000,
                0,
                0,
                1 | ((queue | write | flush) << TC),
                &[],
            ));
            seq += 1;
        }
        if i == 100 {
            b.extend(blk_event(
                seq,
                t + 400_000,
                1 << 20,
                1 << 20,
                1 | ((queue | write | discard) << TC),
                &[],
            ));
            seq += 1;
        }
    }
    let d = scratch();
    std::fs::write(d.path().join("t.blktrace.0"), &b).unwrap();
    let text = Command::new("blkparse")
        .current_dir(d.path())
        .args(["-i", "t", "-d", "merged.bin"])
        .output()
        .unwrap();
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    // blkparse's own listing: `7,9 0 SEQ TIME PID Q RWBS SECTOR + N [db]`
    let q: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 6 && f[5] == "Q").then(|| f[6])
        })
        .collect();
    let n = |f: fn(&str) -> bool| q.iter().filter(|r| f(r)).count() as u64;
    let (flushes, trims) = (n(|r| r.starts_with('F')), n(|r| r.contains('D')));
    let (reads, writes) = (
        n(|r| r == "R"),
        n(|r| r.starts_with('W') && !r.contains('D')),
    );
    assert_eq!((flushes, trims), (2, 1), "{q:?}");
    assert_eq!(reads + writes, 200);
    let set = set_in(&d);
    let v = replay(&set, &d.path().join("merged.bin"), &["--closed"]);
    assert_eq!(v["job"]["replay"]["format"], "blktrace");
    assert_eq!(
        (
            ops(&v, "read"),
            ops(&v, "write"),
            ops(&v, "fsync"),
            ops(&v, "trim")
        ),
        (reads, writes, flushes, trims),
        "blkparse's queue events"
    );
    assert_eq!(v["job"]["replay"]["span_ns"].as_u64(), Some(199_000_000));
    // a file cut inside an event
    let merged = std::fs::read(d.path().join("merged.bin")).unwrap();
    let cut = d.path().join("cut.bin");
    std::fs::write(&cut, &merged[..merged.len() - 20]).unwrap();
    let r = iolab(&[
        "run",
        "--replay",
        cut.to_str().unwrap(),
        "--dir",
        set.to_str().unwrap(),
        "--no-save",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("a blktrace event cut short"),
        "{}",
        r.stderr
    );
}

/// A replay creates and writes only through the file set's own rules (docs/safety.md): a
/// symbolic link planted where its file goes is refused, neither followed nor removed, and the
/// file it points to is unchanged.
#[test]
fn a_symlink_planted_as_the_replays_file_is_neither_followed_nor_removed() {
    let d = scratch();
    let cap = d.path().join("t.cap");
    capture(&cap, 20, 1000);
    let set = set_in(&d);
    let outside = d.path().join("outside");
    std::fs::write(&outside, "keep me").unwrap();
    std::os::unix::fs::symlink(&outside, set.join("iolab-file.0")).unwrap();
    let r = iolab(&[
        "run",
        "--replay",
        cap.to_str().unwrap(),
        "--dir",
        set.to_str().unwrap(),
        "--no-save",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is a symbolic link"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me");
    let link = std::fs::symlink_metadata(set.join("iolab-file.0")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is left as it was");
}

/// A replay onto a device in use (a mounted filesystem's loop device) is refused, also with
/// --destructive, before anything is written (root).
#[test]
fn a_replay_onto_a_mounted_device_is_refused_even_with_destructive() {
    if let Some(why) = crate::common::blk::cannot(false) {
        return skip(
            "a_replay_onto_a_mounted_device_is_refused_even_with_destructive",
            &why,
        );
    }
    let d = scratch();
    let cap = d.path().join("t.cap");
    capture(&cap, 20, 1000);
    let fs = crate::common::blk::LoopFs::new(64, &d.path().join("mnt"));
    std::fs::write(fs.dir.join("data"), "keep me").unwrap();
    let r = iolab(&[
        "run",
        "--replay",
        cap.to_str().unwrap(),
        "--device",
        &fs.dev,
        "--destructive",
        "--no-save",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is mounted at"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(fs.dir.join("data")).unwrap(),
        "keep me"
    );
}
