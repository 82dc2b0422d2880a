//! Issue 26, fio's queue-depth search (`latency_target`, `latency_window`,
//! `latency_percentile`): the same job file run by fio 3.33 and by `iolab run JOBFILE` on a
//! loop device throttled to 1000 IOPS by a blkio cgroup (an I/O's latency grows with the
//! depth: about 1 ms per I/O in flight), compared on fio's own JSON (iolab's
//! `--output-format fio-json`). Root only.

use crate::common::blk::{LoopFs, Throttle, cannot};
use crate::common::*;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// `who`'s run (`args` and the job file) of `job` in the throttle's group, a folder of its
/// own on the loop device: its JSON and how long it took.
fn both(
    d: &tempfile::TempDir,
    fs: &LoopFs,
    t: &Throttle,
    who: &str,
    args: &[&str],
    job: &str,
) -> (Value, Duration) {
    let work = fs.dir.join(who);
    std::fs::create_dir_all(&work).unwrap();
    let file = d.path().join(format!("{who}.fio"));
    let text = format!("[global]\ndirectory={}\n{job}", work.display());
    std::fs::write(&file, text).unwrap();
    let mut cmd = Command::new(&t.prefix()[0]);
    cmd.args(&t.prefix()[1..]).args(args).arg(&file);
    let began = Instant::now();
    let o = output_within(
        cmd.current_dir(d.path()).env("IOLAB_DB", test_db()),
        Duration::from_secs(60),
    );
    let took = began.elapsed();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let at = String::from_utf8_lossy(&o.stderr).to_string();
    let i = text.find('{').unwrap_or_else(|| panic!("{who}: {at}"));
    (serde_json::from_str(&text[i..]).unwrap(), took)
}

const FIO: &[&str] = &["fio", "--output-format=json"];

fn iolab_args() -> Vec<&'static str> {
    vec![
        bin(),
        "run",
        "--output-format",
        "fio-json",
        "--no-save",
        "-q",
    ]
}

/// A 10 ms target met by 95 % of each 1 s window, iodepth up to 32: both tools search the
/// depth, settle, run one more window there and end long before the 30 s runtime; their JSON
/// gives the job's target (ns), percentile and window (µs) as fio's, a settled depth within 2 of
/// fio's (the throttle's slices make the 95th percentile at a depth noisy: fio itself settles at
/// 4 or 5 from one run to the next), the final window's runtime and I/Os (the counts start over
/// there) within the same bounds, and a mean latency under the target.
#[test]
fn latency_target_settles_on_a_depth_as_fio() {
    let name = "latency_target_settles_on_a_depth_as_fio";
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(name, "fio is not installed");
    }
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let d = tempfile::tempdir().unwrap();
    let fs = LoopFs::new(128, &d.path().join("mnt"));
    let t = Throttle::new(&[fs.majmin()], 1000);
    let job = "ioengine=libaio\ndirect=1\nrw=randread\nbs=4k\nsize=16m\n\
               iodepth=32\ntime_based\nruntime=30\nlatency_target=10ms\nlatency_window=1s\n\
               latency_percentile=95\n[lt]\n";
    let run = |who: &str, args: &[&str]| {
        let (doc, took) = both(&d, &fs, &t, who, args, job);
        (doc["jobs"][0].clone(), took)
    };
    let (f, f_took) = run("fio", &["fio", "--output-format=json"]);
    let (i, i_took) = run(
        "iolab",
        &[
            bin(),
            "run",
            "--output-format",
            "fio-json",
            "--no-save",
            "-q",
        ],
    );
    let at = format!("fio {f}\niolab {i}");
    for j in [&f, &i] {
        assert_eq!(j["latency_target"], 10_000_000, "{at}");
        assert_eq!(j["latency_percentile"].as_f64(), Some(95.0), "{at}");
        assert_eq!(j["latency_window"], 1_000_000, "{at}");
        // the final window only: about a second at the settled depth (1000 IOPS)
        let ms = j["job_runtime"].as_u64().unwrap();
        assert!((900..=3500).contains(&ms), "runtime {ms} ms: {at}");
        let ios = j["read"]["total_ios"].as_u64().unwrap();
        assert!((700..=3500).contains(&ios), "{ios} I/Os: {at}");
        let lat = j["read"]["lat_ns"]["mean"].as_f64().unwrap();
        assert!(lat < 10e6, "mean latency {lat} ns: {at}");
    }
    let (fd, id) = (
        f["latency_depth"].as_i64().unwrap(),
        i["latency_depth"].as_i64().unwrap(),
    );
    assert!((2..=10).contains(&fd), "fio's depth {fd}: {at}");
    assert!((fd - id).abs() <= 2, "depths: fio {fd}, iolab {id}");
    // both ended by themselves, long before the runtime
    for took in [f_took, i_took] {
        assert!(took < Duration::from_secs(25), "{took:?}: {at}");
    }
}

/// `max_latency` per direction on a loop device throttled to 100 IOPS: a libaio job at depth 4
/// whose reads take far over 5 ms ends at its first such read with ETIMEDOUT (fio's JSON
/// `error` 110), as fio's, long before its 10 s; a psync read job whose limit is on writes only
/// (`max_latency=,5ms`) runs its whole runtime without an error, as fio's; and a libaio write
/// job limited on writes alone (`max_latency=,5ms`) ends at its first slow write, as fio's.
#[test]
fn max_latency_ends_the_job_as_fio() {
    let name = "max_latency_ends_the_job_as_fio";
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(name, "fio is not installed");
    }
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let d = tempfile::tempdir().unwrap();
    let fs = LoopFs::new(128, &d.path().join("mnt"));
    let t = Throttle::new(&[fs.majmin()], 100);
    let job = "direct=1\nrw=randread\nbs=4k\nsize=16m\ntime_based\nruntime=4\n\
               [q]\nioengine=libaio\niodepth=4\nmax_latency=5ms\n\
               [s]\nstonewall\nioengine=psync\nmax_latency=,5ms\n\
               [w]\nstonewall\nrw=randwrite\nioengine=libaio\niodepth=4\nmax_latency=,5ms\n";
    let (f, _) = both(&d, &fs, &t, "fio", FIO, job);
    let (i, _) = both(&d, &fs, &t, "iolab", &iolab_args(), job);
    let at = format!("fio {f}\niolab {i}");
    let row = |doc: &Value, n: &str| {
        doc["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["jobname"] == n)
            .unwrap()
            .clone()
    };
    for doc in [&f, &i] {
        let q = row(doc, "q");
        assert_eq!(q["error"], 110, "{at}");
        assert!(q["job_runtime"].as_u64().unwrap() < 1500, "{at}");
        assert!(q["read"]["total_ios"].as_u64().unwrap() < 100, "{at}");
        let s = row(doc, "s");
        assert_eq!(s["error"], 0, "{at}");
        assert!(s["job_runtime"].as_u64().unwrap() >= 3900, "{at}");
        let w = row(doc, "w");
        assert_eq!(w["error"], 110, "{at}");
        assert!(w["job_runtime"].as_u64().unwrap() < 1500, "{at}");
        assert!(w["write"]["total_ios"].as_u64().unwrap() < 100, "{at}");
    }
}
