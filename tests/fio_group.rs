//! Issue 26, examples/falloc.fio: fio's `group_reporting` over jobs that run at once (iolab's
//! roles) and fio's falloc engine, compared with fio 3.33 on the same job file (iolab's
//! `--output-format fio-json`).

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// (fio's JSON, iolab's fio JSON) of `text`, each with `directory=` a folder of its own.
fn both(dir: &Path, text: &str) -> Option<(Value, Value)> {
    if Command::new("fio").arg("--version").output().is_err() {
        skip("fio_group", "fio is not installed");
        return None;
    }
    let mut out = Vec::new();
    for tool in ["fio", "iolab"] {
        let wd = dir.join(tool);
        std::fs::create_dir_all(&wd).unwrap();
        let job = dir.join(format!("{tool}.fio"));
        std::fs::write(&job, text.replace("DIR", wd.to_str().unwrap())).unwrap();
        let o = if tool == "fio" {
            Command::new("fio")
                .args(["--output-format=json", job.to_str().unwrap()])
                .output()
                .unwrap()
        } else {
            Command::new(bin())
                .args(["run", job.to_str().unwrap(), "--no-save", "-q"])
                .args(["--output-format", "fio-json"])
                .env("IOLAB_DB", test_db())
                .output()
                .unwrap()
        };
        assert!(
            o.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        out.push(serde_json::from_str::<Value>(&text[text.find('{').unwrap()..]).unwrap());
    }
    let ours = out.pop().unwrap();
    Some((out.pop().unwrap(), ours))
}

fn n(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// falloc.fio's first phase (a falloc writer and two hole punchers on one file, at once) with
/// `group_reporting`: fio writes one row of the three threads, named after the first job, with
/// the last job's options; iolab wrote a row per job ("jobs: fio 3, iolab 4", the writer's row
/// with no trims). The trims of fio's falloc engine punch holes as iolab's do (no note saying
/// fio fails them, which is true of fio's other engines only).
#[test]
fn group_reporting_makes_one_row_of_a_phase_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nioengine=falloc\ndirectory=DIR\nnrfiles=1\nsize=8m\nfilesize=8m\ngroup_reporting\n[falloc-fuzzer]\nruntime=2\ntime_based\nbssplit=4k/10:64k/50:32k/40\nrw=randwrite\nfilename=frag\n[punch hole-fuzzer]\nbs=4k\nruntime=2\ntime_based\nrw=randtrim\nnumjobs=2\nfilename=frag\n[seq read]\nstonewall\nioengine=sync\nrw=read\nbs=64k\nfilename=frag\n";
    let Some((fio, ours)) = both(d.path(), text) else {
        return;
    };
    let names = |v: &Value| -> Vec<String> {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["jobname"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&fio), ["falloc-fuzzer", "seq read"]);
    assert_eq!(names(&ours), names(&fio));
    let (f, i) = (&fio["jobs"][0], &ours["jobs"][0]);
    for (who, j) in [("fio", f), ("iolab", i)] {
        for d in ["write", "trim"] {
            assert!(n(&j[d]["total_ios"]) > 0.0, "{who} {d}: {j}");
        }
        assert_eq!(j["read"]["total_ios"], 0, "{who}");
        // the last job's options
        assert_eq!(j["job options"]["rw"], "randtrim", "{who}");
        assert_eq!(
            n(&j["trim"]["io_bytes"]) / n(&j["trim"]["total_ios"]),
            4096.0
        );
        // three threads of 2 s
        let jr = n(&j["job_runtime"]);
        assert!((5000.0..=7500.0).contains(&jr), "{who} job_runtime {jr}");
    }
    let mean = |j: &Value| n(&j["write"]["io_bytes"]) / n(&j["write"]["total_ios"]);
    assert!(
        (mean(f) - mean(i)).abs() / mean(f) < 0.1,
        "{} {}",
        mean(f),
        mean(i)
    );
    let notes: Vec<&str> = i["iolab_notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        !notes.iter().any(|n| n.contains("fails trims")),
        "{notes:?}"
    );
    // the next phase reads the whole file in both
    for j in [&fio["jobs"][1], &ours["jobs"][1]] {
        assert_eq!(j["read"]["io_bytes"], 8 << 20);
    }
}

/// A job with `group_reporting` after one without it: fio writes the one without alone and adds
/// the one with it to the row before (stat.c), and so does iolab.
#[test]
fn group_reporting_joins_a_job_to_the_row_before_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\ndirectory=DIR\nsize=1m\nruntime=1\n[a]\nrw=read\n[b]\nrw=read\n[c]\ngroup_reporting\nrw=read\n";
    let Some((fio, ours)) = both(d.path(), text) else {
        return;
    };
    // fio: a, then b and c together (and an empty entry without a name: fio 3.33 counts a row
    // for c, then adds c to b's)
    let named: Vec<&Value> = fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j.get("jobname").is_some())
        .collect();
    assert_eq!(named.len(), 2);
    assert_eq!(named[1]["jobname"], "b");
    assert_eq!(named[1]["read"]["io_bytes"], 2 << 20);
    let ours = ours["jobs"].as_array().unwrap();
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert_eq!(ours[0]["jobname"], "a");
    assert_eq!(ours[1]["jobname"], "b");
    assert_eq!(ours[1]["read"]["io_bytes"], 2 << 20);
}
