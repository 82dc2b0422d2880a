//! Issue 26, fio's engines that do no I/O (`ioengine=cpuio`, `ioengine=exec`): the same job
//! file run by fio 3.33 and by `iolab run JOBFILE`, compared on fio's own JSON (iolab's
//! `--output-format fio-json`): the cycles counted as reads of 0 bytes, their length, the
//! CPU a cpuio thread burns, the program exec runs and what it wrote.

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

/// Runs `text` with fio in `dir/fio` and with iolab in `dir/iolab` (each its current
/// directory, where exec's output files go): (fio's JSON, iolab's fio JSON).
fn both(dir: &Path, text: &str) -> (Value, Value) {
    let job = dir.join("job.fio");
    std::fs::write(&job, text).unwrap();
    let mut out = Vec::new();
    for tool in ["fio", "iolab"] {
        let wd = dir.join(tool);
        std::fs::create_dir_all(&wd).unwrap();
        let o = if tool == "fio" {
            Command::new("fio")
                .current_dir(&wd)
                .args(["--output-format=json", job.to_str().unwrap()])
                .output()
                .unwrap()
        } else {
            Command::new(bin())
                .current_dir(&wd)
                .args(["run", job.to_str().unwrap(), "--no-save", "-q"])
                .args(["--output-format", "fio-json"])
                .env("IOLAB_DB", test_db())
                .output()
                .unwrap()
        };
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        out.push(serde_json::from_str::<Value>(&text[text.find('{').unwrap()..]).unwrap());
    }
    let ours = out.pop().unwrap();
    (out.pop().unwrap(), ours)
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// Within `tol` (a share) of each other.
fn near(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.max(b)
}

/// What a row of a job without I/O must say as fio's does: cycles counted as reads of 0 bytes,
/// no write or trim, a direction's runtime and iops 0 (fio counts them only for bytes moved).
fn no_io_row(j: &Value) {
    assert_eq!(j["read"]["io_bytes"], 0, "{}", j["jobname"]);
    assert_eq!(j["read"]["runtime"], 0, "{}", j["jobname"]);
    assert_eq!(num(&j["read"]["iops"]), 0.0, "{}", j["jobname"]);
    assert_eq!(j["write"]["total_ios"], 0);
    assert_eq!(j["trim"]["total_ios"], 0);
    assert!(j["read"]["total_ios"].as_u64().unwrap() > 0);
}

/// cpuio (examples/cpuio.fio, shortened): each thread busy for cpuchunks, asleep for
/// chunk × (100 − load) / load; one row per clone, its cycles counted as reads of 0 bytes.
/// iolab refused ioengine=cpuio before. The count of cycles and their length match fio's; the
/// CPU each burns is under its duty cycle (the spin is on the clock, so a loaded machine gives
/// less) and near fio's in the same run.
#[test]
fn cpuio_burns_fios_duty_cycle_and_counts_its_cycles() {
    if !have_fio("cpuio_burns_fios_duty_cycle_and_counts_its_cycles") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nioengine=cpuio\ntime_based\nruntime=2\n[burn]\ncpuload=40\ncpuchunks=20000\nnumjobs=2\n[sort]\nstonewall\nruntime=4\ncpuload=50\ncpumode=qsort\n";
    let (fio, ours) = both(d.path(), text);
    let names = |v: &Value| -> Vec<String> {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["jobname"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&fio), ["burn", "burn", "sort"]);
    assert_eq!(names(&ours), names(&fio));
    for (f, i) in fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(ours["jobs"].as_array().unwrap())
    {
        no_io_row(f);
        no_io_row(i);
        let name = f["jobname"].as_str().unwrap();
        let cycles = |j: &Value| num(&j["read"]["total_ios"]);
        let cycle_ms = |j: &Value| num(&j["read"]["clat_ns"]["mean"]) / 1e6;
        let cpu = |j: &Value| num(&j["usr_cpu"]) + num(&j["sys_cpu"]);
        if name == "burn" {
            // 2 s of 20 ms busy + 30 ms asleep: 40 cycles of about 20 ms (fio burns a number of
            // loops calibrated at its start: a CPU less loaded later makes its cycle shorter)
            assert!(cycle_ms(f) >= 15.0 && cycle_ms(i) >= 15.0, "{f}\n{i}");
            assert!(near(cycles(f), cycles(i), 0.25), "{f}\n{i}");
            assert!(near(cycle_ms(f), cycle_ms(i), 0.3), "{f}\n{i}");
        } else {
            // qsort: the same sorts with the same C library (the comparators are this debug
            // build's: up to 3 times fio's), and the pause after each as long as the round
            // (cpuload=50): busy about half of the job's time in both
            assert!(cycle_ms(i) < 3.0 * cycle_ms(f), "{f}\n{i}");
            let busy = |j: &Value| cycles(j) * cycle_ms(j) / num(&j["job_runtime"]);
            for (who, j) in [("fio", f), ("iolab", i)] {
                assert!(
                    (0.3..=0.75).contains(&busy(j)),
                    "{who} busy {}: {j}",
                    busy(j)
                );
            }
        }
        let load = if name == "burn" { 40.0 } else { 50.0 };
        assert!(cpu(i) > 1.0 && cpu(i) <= load + 10.0, "iolab {}", cpu(i));
        assert!(
            (cpu(i) - cpu(f)).abs() <= 15.0 + 0.5 * cpu(f).max(cpu(i)),
            "{name}: iolab {} % CPU, fio {} %",
            cpu(i),
            cpu(f)
        );
        assert!(near(num(&f["job_runtime"]), num(&i["job_runtime"]), 0.25));
    }
}

/// exec (examples/exec.fio's sleep job, and a program whose output is kept): the program runs
/// for the runtime, checked every 50 ms (about 20 checks in 2 s, each a read of 0 bytes), and
/// its standard output lands in NAME.stdout of the current directory with %n and %r expanded,
/// as fio's. A link at that name is refused before anything runs.
#[test]
fn exec_runs_the_program_for_the_runtime_as_fio() {
    if !have_fio("exec_runs_the_program_for_the_runtime_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\ntime_based\nruntime=2\n[sleep]\nioengine=exec\nprogram=/bin/sleep\narguments=%r\ngrace_time=0\nstd_redirect=0\n[say]\nstonewall\nioengine=exec\nprogram=echo\narguments=hello  %n %r\n";
    let (fio, ours) = both(d.path(), text);
    assert_eq!(ours["jobs"].as_array().unwrap().len(), 2);
    for (f, i) in fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(ours["jobs"].as_array().unwrap())
    {
        no_io_row(f);
        no_io_row(i);
        let checks = |j: &Value| num(&j["read"]["total_ios"]);
        assert!(near(checks(f), checks(i), 0.3), "{f}\n{i}");
        assert!((15.0..=25.0).contains(&checks(i)), "{}", checks(i));
        // fio's job runtime is the runtime and the grace time (its last check sends SIGTERM,
        // sleeps grace_time whether the program still runs or not, and counts); iolab's is the
        // runtime, and its note says so
        let grace_ms = if f["jobname"] == "say" { 1000.0 } else { 0.0 };
        assert!(
            near(
                num(&f["job_runtime"]) - grace_ms,
                num(&i["job_runtime"]),
                0.3
            ),
            "{f}\n{i}"
        );
        assert!(
            i["iolab_notes"].to_string().contains("fio counts it"),
            "{i}"
        );
    }
    for tool in ["fio", "iolab"] {
        let out = std::fs::read_to_string(d.path().join(tool).join("say.stdout")).unwrap();
        assert_eq!(out, "hello say 2\n", "{tool}");
        let err = std::fs::read_to_string(d.path().join(tool).join("say.stderr")).unwrap();
        assert_eq!(err, "", "{tool}");
    }
    // nothing else left by iolab: no temporary file, no set
    let mut left = entries(&d.path().join("iolab"));
    left.sort();
    assert_eq!(left, ["say.stderr", "say.stdout"]);
    // a link where the output goes: refused by file:line before anything runs
    let victim = d.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let wd = d.path().join("iolab");
    std::fs::remove_file(wd.join("say.stdout")).unwrap();
    std::os::unix::fs::symlink(&victim, wd.join("say.stdout")).unwrap();
    let job = d.path().join("job.fio");
    let r = to_run(
        Command::new(bin())
            .current_dir(&wd)
            .args(["run", job.to_str().unwrap(), "--no-save", "-q"])
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("std_redirect"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

/// The engines without I/O run from job files: `--engine cpuio` on the command line is a usage
/// error naming the way to run it, before anything is made.
#[test]
fn cpuio_and_exec_as_flags_are_refused_with_the_way_to_run_them() {
    let d = tempfile::tempdir().unwrap();
    for e in ["cpuio", "exec"] {
        let r = iolab(&[
            "run",
            "--engine",
            e,
            "--dir",
            d.path().to_str().unwrap(),
            "--time",
            "1",
        ]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(&format!("ioengine={e}")), "{}", r.stderr);
    }
    assert!(entries(d.path()).is_empty());
}
