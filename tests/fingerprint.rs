//! `iolab fingerprint`: a capture file of a known workload (written here: the format of
//! `iolab capture`) gives its mix, sizes, sequentiality and hot set exactly; stored, shown and
//! reported like a run; a file that is not a capture is refused in one line.

use crate::common::iolab_db;
use iolab::model::capture::{CaptureHeader, CaptureIo, IoDir};
use std::io::Write;

/// 800 reads of 8 KiB, sequential in runs of 4 then a jump of 1 GiB (75 % sequential), and 200
/// 16 KiB writes with FUA over four 1 MiB regions, all 1 ms apart, at a queue depth of 4.
fn write_capture(path: &std::path::Path) {
    let mut f = std::fs::File::create(path).unwrap();
    let h = CaptureHeader {
        schema: "iolab-capture/1".into(),
        iolab_version: "test".into(),
        device: "loop9".into(),
        majmin: "7:9".into(),
        start: "2026-11-29T10:00:00.000Z".into(),
        host: "h".into(),
        kernel: "k".into(),
        source: "test".into(),
    };
    writeln!(f, "{}", serde_json::to_string(&h).unwrap()).unwrap();
    let mut off = 0u64;
    for i in 0..1000u64 {
        let r = if i % 5 == 4 {
            CaptureIo {
                t_ns: (i + 1) * 1_000_000,
                dir: IoDir::Write,
                // four regions of 1 MiB in turn, 50 writes each
                offset_bytes: (1 << 40) + ((i / 5) % 4) * (1 << 20),
                size_bytes: 16384,
                flags: vec!["fua".into()],
                lat_ns: Some(200_000),
                qd: 4,
                pid: 7,
                comm: "postgres".into(),
                error: None,
                class: None,
                file: None,
            }
        } else {
            if i % 5 == 0 {
                off += 1 << 30;
            }
            let r = CaptureIo {
                t_ns: (i + 1) * 1_000_000,
                dir: IoDir::Read,
                offset_bytes: off,
                size_bytes: 8192,
                flags: vec![],
                lat_ns: Some(100_000),
                qd: 4,
                pid: 7,
                comm: "postgres".into(),
                error: None,
                class: None,
                file: None,
            };
            off += 8192;
            r
        };
        writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
    }
}

#[test]
fn a_known_capture_is_fingerprinted_stored_and_reported() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("s.db");
    let cap = d.path().join("cap.ndjson");
    write_capture(&cap);
    let r = iolab_db(&db, &["fingerprint", cap.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["schema"], "iolab-fingerprint/1");
    assert_eq!(v["read"]["requests"], 800);
    assert_eq!(v["write"]["requests"], 200);
    assert_eq!(v["read_pct"], 80.0);
    assert_eq!(v["read"]["sizes"][0]["value"], 8192);
    assert_eq!(v["write"]["sizes"][0]["value"], 16384);
    // of the 799 reads after the first, 600 follow the one before, 199 jump 1 GiB forward
    let seq = v["read"]["seek"]["sequential_pct"].as_f64().unwrap();
    assert!((seq - 100.0 * 600.0 / 799.0).abs() < 1e-9, "{seq}");
    assert_eq!(v["write"]["fua_pct"], 100.0);
    assert_eq!(v["queue_depth"][0]["value"], 4);
    // the window: the last request at 1 s
    assert!((v["duration_s"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    assert!((v["read"]["iops"].as_f64().unwrap() - 800.0).abs() < 1e-6);
    // the reads' 200 regions of 1 MiB hold 4 reads each, the writes' 4 regions 50 each: the
    // hottest 1 % (3 regions) hold 150 of 1000
    assert_eq!(v["regions_touched"], 204);
    assert!((v["hot_set"][0]["requests_pct"].as_f64().unwrap() - 15.0).abs() < 1e-9);

    // stored like a run: show, report with its charts
    let r = iolab_db(&db, &["fingerprint", cap.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("800 reads and 200 writes (80.0 % reads)"),
        "{}",
        r.stdout
    );
    let show = iolab_db(&db, &["show", "1"]);
    assert!(show.stdout.contains("75.1 % sequential"), "{}", show.stdout);
    let html = d.path().join("f.html");
    let rep = iolab_db(&db, &["report", "1", "-o", html.to_str().unwrap()]);
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    for needle in ["Request sizes", "Hot set", "queue depth"] {
        assert!(page.contains(needle), "{needle} not in the report");
    }
    // compare matches the cells by their names
    let c = iolab_db(&db, &["compare", "1", "2"]);
    assert_eq!(c.code, 0, "{}", c.stderr);

    // not a capture: one line naming the file and the line, exit 2, nothing stored
    let bad = d.path().join("bad.ndjson");
    std::fs::write(&bad, "{\"t_ns\": 1}\n").unwrap();
    let r = iolab_db(&db, &["fingerprint", bad.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("bad.ndjson: line 1"), "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    let r = iolab_db(&db, &["fingerprint", "/dev/zero"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
}
