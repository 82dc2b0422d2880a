//! Paced latency against fio 3.33 (issue 27, "Numbers that hold under load"): 16 KiB O_DIRECT
//! random reads of one file on ext4 on a loop device (its image in /dev/shm, direct I/O to it),
//! psync, at 1/5 and 1/2 of the device's capacity (fio's unpaced IOPS with one thread), with 1,
//! 2 and 4 threads. iolab `--rate` and fio `--rate_iops` take turns on the same file; the
//! medians of iolab's p50 and p99 from each I/O's issue (`issue_lat_ns`, as fio measures) are
//! within 1.3x of fio's (`lat_ns`); iolab's latency from the slot is printed beside them. A pacer that spins before each slot fails it from 2 threads on a 2-CPU machine
//! (p99 12.3 ms against fio's 173 µs in the issue): the loop device's worker gets no CPU. Root
//! only (loop device, mount); bench/paced-vs-fio.sh is the same comparison at length.

use crate::common::blk::{ShmLoop, cannot};
use crate::common::{iolab, output_within, skip};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Seconds per run of either tool.
const RUNTIME_S: u64 = 2;
/// Runs of each tool per case (alternating); their medians are compared.
const REPEAT: usize = 3;
/// Measurements of a case at most: one over the bound is measured afresh and judged on the
/// last (a host's passing stalls are not pacing's latency; one that lasts is).
const ATTEMPTS: usize = 3;
/// How far above fio's iolab's p50 and p99 may be (the issue's bound).
const BOUND: f64 = 1.3;
/// The data file's size (MiB).
const SIZE_MB: u64 = 256;

/// fio's JSON of `threads` psync jobs of 16 KiB O_DIRECT random reads of `file`, each at
/// `rate` IOPS (None: unpaced), with latency percentiles (`lat_ns`).
fn fio(file: &Path, threads: u64, rate: Option<u64>) -> Value {
    let mut c = Command::new("fio");
    c.args([
        "--name=paced",
        &format!("--filename={}", file.display()),
        &format!("--size={SIZE_MB}M"),
        "--rw=randread",
        "--bs=16k",
        "--direct=1",
        "--ioengine=psync",
        &format!("--numjobs={threads}"),
        "--time_based",
        &format!("--runtime={RUNTIME_S}"),
        "--lat_percentiles=1",
        "--group_reporting",
        "--output-format=json",
    ]);
    if let Some(r) = rate {
        c.arg(format!("--rate_iops={r}"));
    }
    // fio 3.33 now and then does not end here: killed after 60 s and run again, 3 times at most
    let o = (0..3)
        .map(|_| output_within(&mut c, Duration::from_secs(60)))
        .find(|o| o.status.code().is_some())
        .expect("fio 3.33 did not end in 60 s, three times");
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&text[text.find('{').expect("fio's JSON")..]).unwrap()
}

fn fio_lat(v: &Value, p: &str) -> u64 {
    v["jobs"][0]["read"]["lat_ns"]["percentile"][p]
        .as_u64()
        .unwrap_or_else(|| panic!("fio's read lat_ns percentile {p}: {}", v["jobs"][0]))
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

#[test]
fn paced_p50_and_p99_are_within_1_3x_of_fios_at_1_2_and_4_threads() {
    let name = "paced_p50_and_p99_are_within_1_3x_of_fios_at_1_2_and_4_threads";
    if let Some(why) = cannot(false) {
        return skip(name, &why);
    }
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(
            name,
            "fio is not installed (it is the reference for paced latency)",
        );
    }
    let fs = ShmLoop::new(SIZE_MB + 128);
    let dir = fs.dir.to_str().unwrap().to_string();
    let size = format!("{SIZE_MB}M");
    let set = [
        "--dir",
        dir.as_str(),
        "--files",
        "1",
        "--size",
        size.as_str(),
    ];
    let mut a = vec!["prepare", "-q"];
    a.extend_from_slice(&set);
    let r = iolab(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file = fs.dir.join("iolab-file.0");
    // the capacity the loads are shares of: fio, unpaced, one thread
    let free = fio(&file, 1, None);
    let cap = free["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!(
        cap > 500.0,
        "the loop device does {cap} IOPS: {}",
        free["jobs"][0]
    );
    eprintln!(
        "capacity {cap:.0} IOPS (fio unpaced, 1 thread, p50 {} ns); load {}",
        fio_lat(&free, "50.000000"),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let mut failed = Vec::new();
    for threads in [1u64, 2, 4] {
        for (share, frac) in [("1/5", 0.2), ("1/2", 0.5)] {
            // whole I/Os per second per thread, the same for both tools
            let per_thread = ((cap * frac / threads as f64).round() as u64).max(1);
            let rate = per_thread * threads;
            // a case over the bound is measured afresh, both tools, up to ATTEMPTS times in
            // all, and judged on the last (a shared machine's stalls of tens of ms land in a
            // case's p99 for a while at times: seen in CI at 1/2 load twice in a row)
            for attempt in 1..=ATTEMPTS {
                let (mut f50, mut f99, mut i50, mut i99, mut lag) =
                    (vec![], vec![], vec![], vec![], vec![]);
                let mut s99 = vec![];
                for _ in 0..REPEAT {
                    let f = fio(&file, threads, Some(per_thread));
                    let fio_iops = f["jobs"][0]["read"]["iops"].as_f64().unwrap();
                    assert!(
                        fio_iops > 0.9 * rate as f64,
                        "fio at {rate} IOPS did {fio_iops}: the comparison needs both at the rate"
                    );
                    f50.push(fio_lat(&f, "50.000000"));
                    f99.push(fio_lat(&f, "99.000000"));
                    let t = threads.to_string();
                    let r_s = rate.to_string();
                    let time = RUNTIME_S.to_string();
                    let mut a = vec![
                        "run",
                        "--mode",
                        "rndrd",
                        "--direct",
                        "--bs",
                        "16k",
                        "--threads",
                        &t,
                        "--rate",
                        &r_s,
                        "--time",
                        &time,
                        "--json",
                        "--no-save",
                        "-q",
                        "--keep",
                    ];
                    a.extend_from_slice(&set);
                    let r = iolab(&a);
                    assert_eq!(r.code, 0, "{}", r.stderr);
                    let v = r.json();
                    let read = &v["results"]["read"];
                    let iops = read["iops"].as_f64().unwrap();
                    assert!(
                        iops > 0.9 * rate as f64,
                        "iolab at {rate} IOPS did {iops}: {}",
                        v["results"]
                    );
                    // fio measures from each I/O's issue: so does issue_lat_ns (lat_ns counts
                    // from the slot, the wait behind an earlier I/O included, which fio's omits)
                    let from_issue = &read["issue_lat_ns"];
                    i50.push(from_issue["p50"].as_u64().unwrap());
                    i99.push(from_issue["p99"].as_u64().unwrap());
                    s99.push(read["lat_ns"]["p99"].as_u64().unwrap());
                    lag.push(v["schedule_lag_ns"]["p99"].as_u64().unwrap());
                }
                let (f50, f99, i50, i99) = (median(f50), median(f99), median(i50), median(i99));
                let line = format!(
                    "{threads} thread(s) at {share} ({rate} IOPS), measurement {attempt}: fio p50 {f50} p99 {f99} ns, iolab from issue p50 {i50} p99 {i99} ns ({:.2}x, {:.2}x; from the slot p99 {s99:?} ns, lag p99 {lag:?} ns)",
                    i50 as f64 / f50 as f64,
                    i99 as f64 / f99 as f64,
                );
                eprintln!("{line}");
                let over = i50 as f64 > BOUND * f50 as f64 || i99 as f64 > BOUND * f99 as f64;
                if !over {
                    break;
                }
                if attempt == ATTEMPTS {
                    failed.push(line);
                }
            }
        }
    }
    eprintln!(
        "load at the end {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    assert_eq!(iolab(&["cleanup", "--dir", &dir]).code, 0);
    assert!(
        failed.is_empty(),
        "paced latency above {BOUND}x fio's:\n{}",
        failed.join("\n")
    );
}
