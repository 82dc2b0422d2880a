//! End-to-end error and latency injection: iolab on faultfs (tests/fixtures/faultfs), a FUSE
//! passthrough filesystem that fails or delays read requests.
//!
//! Needs root, /dev/fuse, gcc, pkg-config and the fuse3 development files; without them each
//! test skips through `common::skip` (a `SKIP:` line, or a failure under `CI=true`).

use crate::common;
use crate::common::faultfs::{FaultFs, run_timed, show, skip_reason};
use serde_json::Value;
use std::process::{Command, Output};

const IOLAB: &str = env!("CARGO_BIN_EXE_iolab");

/// Returns from the test `$test` through `common::skip` when the FUSE tests cannot run here.
macro_rules! skip_unless_fuse {
    ($test:expr) => {
        if let Some(why) = skip_reason() {
            return common::skip($test, &why);
        }
    };
}

fn iolab(args: &[&str]) -> Output {
    run_timed(Command::new(IOLAB).args(args))
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

    // --metrics-listen too: the final scrape's errors counter is the document's
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let scraper = std::thread::spawn(move || common::last_scrape(port));
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
        "--metrics-listen",
        &listen,
        "--metrics-linger",
        "30s",
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
    let last = scraper.join().unwrap();
    let series = |name: &str| -> u64 {
        last.lines()
            .find(|l| l.starts_with(&format!("{name}{{")))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {last}"))
    };
    assert_eq!(series("iolab_errors_total"), eio, "{last}");
    assert_eq!(series("iolab_ops_total"), reads, "{last}");
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
