//! Issue 26, fio's steady state (`ss`, `ss_dur`, `ss_ramp`): the same job file run by fio 3.33
//! and by `iolab run JOBFILE`, compared on fio's own JSON (iolab's `--output-format fio-json`):
//! whether each job's criterion was attained, the job ending early as fio's does, and the
//! window's samples and criterion within noise. The null engine at a fixed `rate_iops` makes
//! the per-second series predictable (1000 I/Os a second per thread).

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn have_fio(test: &str) -> bool {
    let ok = Command::new("fio").arg("--version").output().is_ok();
    if !ok {
        skip(test, "fio is not installed");
    }
    ok
}

/// fio's JSON document of the job file `text`.
fn fio_json(dir: &Path, text: &str) -> Value {
    let job = dir.join("fio.fio");
    std::fs::write(&job, text).unwrap();
    let o = output_within(
        Command::new("fio")
            .current_dir(dir)
            .arg("--output-format=json")
            .arg(&job),
        std::time::Duration::from_secs(120),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&text[text.find('{').expect("fio's JSON")..]).unwrap()
}

/// iolab's fio JSON of the job file `text`.
fn iolab_json(dir: &Path, text: &str) -> Value {
    let job = dir.join("iolab.fio");
    std::fs::write(&job, text).unwrap();
    let r = to_run(
        Command::new(bin())
            .current_dir(dir)
            .args(["run", job.to_str().unwrap(), "--output-format", "fio-json"])
            .args(["--no-save", "-q"])
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout[r.stdout.find('{').unwrap()..]).unwrap()
}

/// The rows named `name` of a fio JSON document (a job's clones without group_reporting).
fn rows<'a>(doc: &'a Value, name: &str) -> Vec<&'a Value> {
    let v: Vec<&Value> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobname"] == name)
        .collect();
    assert!(!v.is_empty(), "no job {name} in {doc}");
    v
}

fn runtime_ms(j: &Value) -> i64 {
    j["job_runtime"].as_i64().unwrap()
}

/// The numeric part of fio's criterion string (`0.074944%`, `-1.000000`).
fn criterion(ss: &Value) -> f64 {
    let s = ss["criterion"].as_str().unwrap();
    s.trim_end_matches('%').parse().unwrap()
}

/// Each job's steady state against fio's: `a` (a deviation criterion after `ss_ramp`), `b` (a
/// reporting group of two clones judged as one, a slope in percent), `c` (a slope limit of 0
/// that no window meets: it runs its whole runtime, not attained), `d` (a deviation in bytes
/// per second, fio's units), `e` (two clones without group_reporting, each judged alone, each
/// its own row). Attained or not as fio; an attained job ends within fio's sampling phase of
/// fio's runtime (fio's helper ticks on its own clock, up to a second from the job's start),
/// long before its 20 s; the criterion, its spelling, the window's length and its means as
/// fio's (the means within 5 %, the criteria both under their limit, or both not).
#[test]
fn steady_state_ends_jobs_as_fio() {
    if !have_fio("steady_state_ends_jobs_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based\nruntime=20\n\
                rate_iops=1000\n\
                [a]\nss=iops:5%\nss_dur=3\nss_ramp=1\n\
                [b]\nstonewall\ngroup_reporting\nnumjobs=2\nss=iops_slope:2%\nss_dur=3\n\
                [c]\nstonewall\nruntime=4\nss=iops_slope:0\nss_dur=2\n\
                [d]\nstonewall\nss=bw:100k\nss_dur=2\n\
                [e]\nstonewall\nnumjobs=2\nss=iops:5%\nss_dur=2\n";
    let f = fio_json(d.path(), text);
    let i = iolab_json(d.path(), text);
    // (job, rows, attained, the group's I/Os per second)
    for (name, n, attained, iops) in [
        ("a", 1, 1, 1000),
        ("b", 1, 1, 2000),
        ("c", 1, 0, 1000),
        ("d", 1, 1, 1000),
        ("e", 2, 1, 1000),
    ] {
        let (fr, ir) = (rows(&f, name), rows(&i, name));
        assert_eq!((fr.len(), ir.len()), (n, n), "{name}: rows");
        for (fj, ij) in fr.iter().zip(&ir) {
            let (fs, is) = (&fj["steadystate"], &ij["steadystate"]);
            let at = format!("{name}: fio {fs} iolab {is}");
            assert_eq!(fs["attained"], attained, "fio {at}");
            assert_eq!(is["attained"], attained, "iolab {at}");
            assert_eq!(is["ss"], fs["ss"], "{at}");
            assert_eq!(is["duration"], fs["duration"], "{at}");
            let len = fs["duration"].as_u64().unwrap() as usize;
            assert_eq!(is["data"]["iops"].as_array().unwrap().len(), len, "{at}");
            assert_eq!(is["data"]["bw"].as_array().unwrap().len(), len, "{at}");
            for doc in [fs, is] {
                let mean = doc["data"]["iops_mean"].as_f64().unwrap();
                assert!(
                    (mean - f64::from(iops)).abs() <= 0.05 * f64::from(iops),
                    "{at}"
                );
                let bw = doc["data"]["bw_mean"].as_f64().unwrap();
                assert!((bw / mean - 4096.0).abs() < 0.05 * 4096.0, "{at}");
            }
            // both met their limit, or both did not (c: fio's slope limit of 0 is never met)
            if attained == 1 {
                let limit: f64 = fs["ss"]
                    .as_str()
                    .unwrap()
                    .split(':')
                    .nth(1)
                    .unwrap()
                    .trim_end_matches('%')
                    .parse()
                    .unwrap();
                assert!(
                    criterion(fs).abs() < limit && criterion(is).abs() < limit,
                    "{at}"
                );
            }
            let (ft, it) = (runtime_ms(fj), runtime_ms(ij));
            match (name, attained) {
                // a reporting group's runtime is its clones' summed
                ("b", _) => assert!((it - ft).abs() <= 2 * 1300, "{at}: {ft} ms, {it} ms"),
                (_, 1) => assert!((it - ft).abs() <= 1300, "{at}: {ft} ms, {it} ms"),
                _ => assert_eq!((ft / 100, it / 100), (40, 40), "{at}: its whole runtime"),
            }
            assert!(it < 9000, "{at}: ended early ({it} ms of 20 s)");
        }
    }
    // the window ended where the criterion held: ss_ramp=1, ss_dur=3 takes 3 samples after
    // the ramp's second: at least 4 s (fio: up to a second later)
    assert!(runtime_ms(rows(&i, "a")[0]) >= 3900);
}
