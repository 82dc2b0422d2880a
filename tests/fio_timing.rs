//! Issue 26, fio's options of when I/O is issued: think time, number_ios, startdelay, exitall,
//! rate_process=poisson, minimum rates, flows. The same job file run by fio 3.33 and by `iolab
//! run JOBFILE`, compared on fio's own JSON (iolab's `--output-format fio-json`) and, for flows,
//! on the verdict of fio's own regression checks (t/run-fio-tests.py, t0011/t0012/t0014).

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

/// fio's JSON document of `text` (with `directory=` a fresh folder under `dir`).
fn fio_json(dir: &Path, text: &str) -> Value {
    let work = dir.join("fio");
    std::fs::create_dir_all(&work).unwrap();
    let job = dir.join("fio.fio");
    std::fs::write(
        &job,
        format!("[global]\ndirectory={}\n{text}", work.display()),
    )
    .unwrap();
    // fio 3.33 now and then does not end here (libaio with thinktime, io_submit_mode=offload:
    // past its runtime, deaf to SIGTERM): killed after 60 s and run again, three times at most
    let o = (0..3)
        .map(|_| {
            output_within(
                Command::new("fio")
                    .current_dir(dir)
                    .arg("--output-format=json")
                    .arg(&job),
                std::time::Duration::from_secs(60),
            )
        })
        .find(|o| o.status.code().is_some())
        .expect("fio 3.33 did not end in 60 s, three times");
    let _ = std::fs::remove_dir_all(&work);
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

/// iolab's run of `text` in `dir` as `format` (fio-json or json): its exit code, document and
/// stderr.
fn iolab(dir: &Path, text: &str, format: &str) -> (i32, Value, String) {
    let work = dir.join("iolab");
    std::fs::create_dir_all(&work).unwrap();
    let job = dir.join("iolab.fio");
    std::fs::write(
        &job,
        format!("[global]\ndirectory={}\n{text}", work.display()),
    )
    .unwrap();
    let r = to_run(
        Command::new(bin())
            .args(["run", job.to_str().unwrap(), "--output-format", format])
            .args(["--no-save", "-q"])
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap(),
    );
    let v = r.stdout.find('{').map_or(Value::Null, |i| {
        serde_json::from_str(&r.stdout[i..]).unwrap()
    });
    (r.code, v, r.stderr)
}

fn fio_of_iolab(dir: &Path, text: &str) -> Value {
    let (code, v, err) = iolab(dir, text, "fio-json");
    assert_eq!(code, 0, "{err}");
    v
}

/// The job named `name` of a fio JSON document.
fn job<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {doc}"))
}

fn ios(j: &Value) -> u64 {
    j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap()
}

/// The I/Os of every row named `name` (a job's clones).
fn all_ios(doc: &Value, name: &str) -> u64 {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobname"] == name)
        .map(ios)
        .sum()
}

fn runtime_ms(j: &Value) -> u64 {
    j["job_runtime"].as_u64().unwrap()
}

/// number_ios: each clone stops at that count (× loops) when its size does not stop it first;
/// with time_based fio 3.33 ignores it. Exact, as fio.
#[test]
fn number_ios_stops_each_clone_at_fios_count() {
    if !have_fio("number_ios_stops_each_clone_at_fios_count") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[n]\nioengine=psync\nsize=4m\nbs=4k\nrw=randread\nnumber_ios=100\n\
                [l]\nioengine=psync\nsize=4m\nbs=4k\nrw=read\nnumber_ios=300\nloops=2\n\
                [s]\nioengine=psync\nsize=256k\nbs=4k\nrw=write\nnumber_ios=1000\nnumjobs=2\n";
    let f = fio_json(d.path(), text);
    let i = fio_of_iolab(d.path(), text);
    // n: 100 of 1024 blocks; l: 300 × 2 loops; s: the size stops each clone at 64
    for (name, want) in [("n", 100), ("l", 600), ("s", 128)] {
        assert_eq!(all_ios(&f, name), want, "fio {name}");
        assert_eq!(all_ios(&i, name), want, "iolab {name}");
    }
}

/// thinktime: every thinktime_blocks I/Os the thread waits for what is in flight and pauses:
/// the same number of I/Os as fio over the same runtime (sync and queue engines; blocks
/// counted at issue or at completion), within 35% on a loaded machine (25% idle).
#[test]
fn thinktime_paces_a_thread_as_fio() {
    if !have_fio("thinktime_paces_a_thread_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nsize=1m\nbs=4k\nrw=read\ntime_based\nruntime=2\n\
                [sync]\nioengine=psync\nthinktime=10ms\nthinktime_blocks=4\n\
                [queue]\nioengine=libaio\niodepth=8\nthinktime=20000\nthinktime_blocks=16\nthinktime_blocks_type=issue\n\
                [spin]\nioengine=psync\nthinktime=5ms\nthinktime_spin=1ms\n";
    let f = fio_json(d.path(), text);
    let i = fio_of_iolab(d.path(), text);
    // at most blocks per pause: sync 4/10 ms, queue 16/20 ms, spin 1/5 ms over 2 s
    for (name, most) in [("sync", 800u64), ("queue", 1600), ("spin", 400)] {
        let (fi, ii) = (ios(job(&f, name)), ios(job(&i, name)));
        // (a loaded machine oversleeps: both lose some pauses' worth)
        assert!(fi <= most + 16 && fi > most / 4, "fio {name}: {fi}");
        assert!(ii <= most + 16 && ii > most / 4, "iolab {name}: {ii}");
        let off = (ii as f64 / fi as f64 - 1.0).abs();
        assert!(off < 0.35, "{name}: iolab {ii} I/Os, fio {fi}");
    }
}

/// startdelay: the job starts later; its runtime (and rates) count from its own start, as
/// fio's job_runtime; iolab's document shows the delay and the phase lasts delay + runtime.
#[test]
fn startdelay_starts_the_job_later_as_fio() {
    if !have_fio("startdelay_starts_the_job_later_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nioengine=psync\nsize=1m\nbs=4k\nrw=read\ntime_based\nruntime=1\nrate_iops=200\n\
                [now]\n[later]\nstartdelay=1\n[range]\nstartdelay=500ms-1500ms\n";
    let f = fio_json(d.path(), text);
    let i = fio_of_iolab(d.path(), text);
    for name in ["now", "later", "range"] {
        for (who, doc) in [("fio", &f), ("iolab", &i)] {
            let j = job(doc, name);
            let rt = runtime_ms(j);
            assert!((950..1200).contains(&rt), "{who} {name}: {rt} ms");
            let n = ios(j);
            assert!((180..=215).contains(&n), "{who} {name}: {n} I/Os");
        }
    }
    let (code, own, err) = iolab(d.path(), text, "json");
    assert_eq!(code, 0, "{err}");
    let role = |n: &str| {
        own["roles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(role("later")["job"]["timing"]["start_delay_s"], 1.0);
    assert!(role("now")["job"]["timing"].is_null(), "no timing: absent");
    let r = role("range")["job"]["timing"]["start_delay_s"]
        .as_f64()
        .unwrap();
    assert!((0.5..=1.5).contains(&r), "{r}");
    let phase = own["duration_s"].as_f64().unwrap();
    assert!(
        phase >= 1.9,
        "the phase lasts the delay and the runtime: {phase}"
    );
}

/// exitall: when the short job ends, the long one (time_based, 20 s) ends too, in fio and in
/// iolab; without it the long job runs on.
#[test]
fn exitall_ends_the_phase_when_a_job_ends() {
    if !have_fio("exitall_ends_the_phase_when_a_job_ends") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nioengine=psync\nsize=1m\nbs=4k\nrw=read\nexitall\n\
                [short]\nnumber_ios=200\nthinktime=1ms\n\
                [long]\ntime_based\nruntime=20\nrate_iops=1000\nexit_what=stonewall\n";
    let f = fio_json(d.path(), text);
    let i = fio_of_iolab(d.path(), text);
    for (who, doc) in [("fio", &f), ("iolab", &i)] {
        assert_eq!(ios(job(doc, "short")), 200, "{who}");
        let rt = runtime_ms(job(doc, "long"));
        assert!(
            rt < 3000,
            "{who}: the long job ended with the short one, {rt} ms"
        );
    }
}

/// rate_process=poisson: the mean rate is rate_iops, as fio's. iolab runs the file with
/// io_submit_mode=offload (examples/poisson-rate-submission.fio); fio runs it inline, as fio
/// 3.33 with offload did not end here (past its runtime, ignoring SIGTERM).
#[test]
fn poisson_arrivals_keep_the_mean_rate() {
    if !have_fio("poisson_arrivals_keep_the_mean_rate") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[p]\nioengine=libaio\niodepth=8\nsize=4m\nbs=4k\nrw=randread\ntime_based\nruntime=2\n\
                rate_iops=500\nrate_process=poisson\n";
    let f = fio_json(d.path(), text);
    let text = format!("{text}io_submit_mode=offload\n");
    let i = fio_of_iolab(d.path(), &text);
    for (who, doc) in [("fio", &f), ("iolab", &i)] {
        let iops = job(doc, "p")["read"]["iops"].as_f64().unwrap();
        assert!((425.0..575.0).contains(&iops), "{who}: {iops} IOPS");
    }
    let (_, own, _) = iolab(d.path(), &text, "json");
    assert_eq!(own["job"]["timing"]["poisson"], true);
}

/// rate_iops_min above what the job can do (20 IOPS under its think time): fio ends the job
/// after its 2 s settle and one cycle with EIO; iolab does the same and says so on stderr (exit
/// 3: an error). A minimum above the job's own rate is refused, as fio refuses it.
#[test]
fn a_job_below_its_minimum_rate_ends_as_fio() {
    if !have_fio("a_job_below_its_minimum_rate_ends_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[slow]\nioengine=psync\nsize=1m\nbs=4k\nrw=read\ntime_based\nruntime=10\n\
                thinktime=50ms\nrate_iops_min=50\nratecycle=500\n";
    let f = fio_json(d.path(), text);
    let fj = job(&f, "slow");
    assert_eq!(fj["error"], 5, "fio: EIO");
    let frt = runtime_ms(fj);
    let (code, i, err) = iolab(d.path(), text, "fio-json");
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("rate_iops_min=50 (reads) not met"), "{err}");
    let irt = runtime_ms(job(&i, "slow"));
    for (who, rt) in [("fio", frt), ("iolab", irt)] {
        assert!((2000..4000).contains(&rt), "{who}: ended after {rt} ms");
    }
    let (code, _, err) = iolab(
        d.path(),
        "[r]\nsize=1m\nrate_iops=100\nrate_iops_min=200\n",
        "json",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("rate_iops_min: above rate_iops"), "{err}");
}

/// fio's t0012 (flow weights 1:5:10 with flow_sleep, its runtime shortened, its logs left
/// out): fio's check, job3/job2 in [1, 3] and job3/job1 in [7, 13], on both. The counts are
/// close to fio's too.
#[test]
fn flows_keep_fios_ratio_t0012() {
    if !have_fio("flows_keep_fios_ratio_t0012") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nbs=4k\nioengine=null\nsize=100g\nruntime=3\nflow_id=1\nflow_sleep=100\nthread\n\
                [flow1]\nflow=1\n[flow2]\nflow=5\n[flow3]\nflow=10\n";
    let f = fio_json(d.path(), text);
    let i = fio_of_iolab(d.path(), text);
    for (who, doc) in [("fio", &f), ("iolab", &i)] {
        let n: Vec<f64> = ["flow1", "flow2", "flow3"]
            .iter()
            .map(|j| ios(job(doc, j)) as f64)
            .collect();
        let (r1, r2) = (n[2] / n[1], n[2] / n[0]);
        assert!((1.0..=3.0).contains(&r1), "{who}: job3/job2 {r1} ({n:?})");
        assert!((7.0..=13.0).contains(&r2), "{who}: job3/job1 {r2} ({n:?})");
    }
    let (a, b) = (ios(job(&f, "flow3")) as f64, ios(job(&i, "flow3")) as f64);
    assert!((b / a - 1.0).abs() < 0.3, "flow3: iolab {b}, fio {a}");
}

/// fio's t0014 (weights 1:2:3, the third job ending halfway): job1/job2 about 0.5 over the
/// whole run and job1/job3 about 1/3 while job3 runs (fio's bounds), on iolab's per-second
/// series; fio's totals give the same 0.5.
#[test]
fn a_flow_recalibrates_when_a_job_leaves_t0014() {
    if !have_fio("a_flow_recalibrates_when_a_job_leaves_t0014") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nbs=4k\nioengine=null\nsize=100g\nruntime=4\nflow_id=1\nthread\ntime_based\n\
                [flow1]\nflow=1\n[flow2]\nflow=2\n[flow3]\nflow=3\nruntime=2\n";
    let f = fio_json(d.path(), text);
    let r = ios(job(&f, "flow1")) as f64 / ios(job(&f, "flow2")) as f64;
    assert!((0.43..=0.57).contains(&r), "fio: job1/job2 {r}");
    let (code, own, err) = iolab(d.path(), text, "json");
    assert_eq!(code, 0, "{err}");
    let series = |n: &str| -> Vec<f64> {
        own["roles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap()["timeseries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["read"]["ops"].as_f64().unwrap_or(0.0))
            .collect()
    };
    let (s1, s2, s3) = (series("flow1"), series("flow2"), series("flow3"));
    let first = |s: &[f64]| s.iter().take(2).sum::<f64>();
    let r13 = first(&s1) / first(&s3);
    assert!((0.21..=0.45).contains(&r13), "iolab: job1/job3 {r13}");
    let r12 = s1.iter().sum::<f64>() / s2.iter().sum::<f64>();
    assert!((0.43..=0.57).contains(&r12), "iolab: job1/job2 {r12}");
    // after job3 left, job1 and job2 go on at 1:2 with job3's share
    let late = |s: &[f64]| s.iter().skip(2).sum::<f64>();
    assert!(
        late(&s1) > first(&s1) * 1.2,
        "job1 took part of job3's share"
    );
}

/// fio's t0011 (flow1 paced at 1000 IOPS with weight 1, flow2 weight 8) and t0013
/// (io_submit_mode=offload, serialize_overlap, 8 clones of a 4 KiB job looping), runtimes
/// shortened: both run (fio's verdict is success), flow2 at about 8 times flow1. t0013 is run
/// by iolab alone: fio 3.33 with offload did not end here.
#[test]
fn t0011_and_t0013_run_as_fio() {
    if !have_fio("t0011_and_t0013_run_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let t11 = "[global]\nbs=4k\nioengine=null\nsize=100g\nruntime=2\nflow_id=1\n\
               [flow1]\nflow=1\nrate_iops=1000\n[flow2]\nflow=8\n";
    let f = fio_json(d.path(), t11);
    let i = fio_of_iolab(d.path(), t11);
    for (who, doc) in [("fio", &f), ("iolab", &i)] {
        let r = ios(job(doc, "flow2")) as f64 / ios(job(doc, "flow1")) as f64;
        assert!((6.0..=10.0).contains(&r), "{who}: flow2/flow1 {r}");
    }
    let t13 = "[test]\nioengine=null\nthread=1\nsize=4K\nblocksize=4K\nio_submit_mode=offload\n\
               iodepth=1\nserialize_overlap=1\nnumjobs=8\nloops=1000\nruntime=2\n";
    let i = fio_of_iolab(d.path(), t13);
    let rows = i["jobs"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "a row per clone");
    let total: u64 = rows.iter().map(ios).sum();
    assert_eq!(total, 8000, "8 clones × 1000 loops × 1 block");
}
