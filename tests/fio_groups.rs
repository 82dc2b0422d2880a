//! Issue 26, fio's reporting groups and verify runs of fio's own regression pairs: the same job
//! file run by fio 3.33 and by `iolab run JOBFILE`, compared on fio's JSON (iolab's
//! `--output-format fio-json`).

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

/// A job file of `text` with `directory=` a fresh folder `who` under `dir`, and that folder.
fn job_file(dir: &Path, who: &str, text: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let work = dir.join(who);
    std::fs::create_dir_all(&work).unwrap();
    let job = dir.join(format!("{who}.fio"));
    std::fs::write(
        &job,
        format!("[global]\ndirectory={}\n{text}", work.display()),
    )
    .unwrap();
    (job, work)
}

/// fio's JSON document of `text`.
fn fio_json(dir: &Path, text: &str) -> Value {
    let (job, work) = job_file(dir, "fio", text);
    let o = Command::new("fio")
        .current_dir(dir)
        .args(["--output-format=json", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&work);
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

/// iolab's fio JSON of `text` (exit 0 required).
fn iolab_json(dir: &Path, text: &str, extra: &[&str]) -> Value {
    let (job, work) = job_file(dir, "iolab", text);
    let r = to_run(
        Command::new(bin())
            .args(["run", job.to_str().unwrap(), "--output-format", "fio-json"])
            .args(["--no-save", "-q"])
            .args(extra)
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{text}\n{}", r.stderr);
    assert!(entries(&work).is_empty(), "left: {:?}", entries(&work));
    r.json()
}

/// Each row: (jobname, groupid, read I/Os, read bytes, write I/Os, write bytes).
fn rows(doc: &Value) -> Vec<(String, u64, u64, u64, u64, u64)> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
                n("read", "total_ios"),
                n("read", "io_bytes"),
                n("write", "total_ios"),
                n("write", "io_bytes"),
            )
        })
        .collect()
}

/// fio's `group_reporting` sums every job of a reporting group (the jobs between stonewalls,
/// or from a `new_group` on) into one row named by the first; without it each job is a row of
/// its group. Before, iolab merged only numjobs clones: t0002's pair of jobs was 2 rows where
/// fio writes 1, and t0003's group row was small_writes' alone (512-byte writes where fio's
/// row has both jobs' 20490 I/Os).
#[test]
fn group_reporting_sums_each_reporting_group_into_one_row_as_fio() {
    let name = "group_reporting_sums_each_reporting_group_into_one_row_as_fio";
    if !have_fio(name) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // size-bound jobs of fixed block sizes: fio's counts are exact
    let jobs = "[a]\nrw=write\nbs=4k\nsize=1m\n\
                [b]\nrw=randread\nbs=16k\nsize=2m\n\
                [c]\nstonewall\nrw=read\nbs=64k\nsize=1m\n\
                [d]\nnew_group\nrw=randwrite\nbs=8k\nsize=512k\n\
                [e]\nrw=write\nbs=4k\nsize=256k\nverify=md5\ndo_verify=0\n";
    for gr in ["group_reporting\n", ""] {
        let text = format!("ioengine=psync\n{gr}{jobs}");
        let f = fio_json(d.path(), &text);
        let i = iolab_json(d.path(), &text, &[]);
        assert_eq!(rows(&i), rows(&f), "{gr}");
        if !gr.is_empty() {
            // a: 256 writes of 4 KiB, b: 128 reads of 16 KiB in one row of group 0
            assert_eq!(rows(&i)[0], ("a".into(), 0, 128, 2 << 20, 256, 1 << 20));
            assert_eq!(rows(&i).len(), 3);
            // the group's merged notes name their job
            let notes = i["jobs"][2]["iolab_notes"].as_array().unwrap();
            assert!(
                notes
                    .iter()
                    .any(|n| n.as_str().unwrap().starts_with("job e: ")),
                "{notes:?}"
            );
            // each direction's runtime is the longest of the group's, and the latency counts
            // are the group's
            let j = &i["jobs"][0];
            assert_eq!(j["read"]["clat_ns"]["N"], 128);
            assert_eq!(j["write"]["clat_ns"]["N"], 256);
        }
    }
}

/// A size-bound sequential job with a bssplit ends its file in the sizes that fit, as fio's
/// get_next_buflen draws again: t0002's bssplit=512/50:1M/50 over 32 MiB is 2079 I/Os in fio
/// (2048 of 512 bytes at the end); iolab wrapped to the file's start and trimmed its last I/O to
/// the quota: 63 I/Os.
#[test]
fn a_sequential_bssplit_ends_its_file_in_the_sizes_that_fit_as_fio() {
    let name = "a_sequential_bssplit_ends_its_file_in_the_sizes_that_fit_as_fio";
    if !have_fio(name) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[w]\nioengine=psync\nrw=write\nbssplit=512/50:1M/50\nsize=8m\n";
    let f = rows(&fio_json(d.path(), text));
    let i = rows(&iolab_json(d.path(), text, &[]));
    assert_eq!(i[0].5, 8 << 20, "exactly size");
    assert_eq!(i[0].5, f[0].5);
    // fio: 7 of 1 MiB and 2048 of 512 bytes (the last MiB), or fewer large ones earlier
    let (fi, ii) = (f[0].4 as f64, i[0].4 as f64);
    assert!(ii > 2000.0, "iolab {ii} I/Os, fio {fi}");
    assert!((ii - fi).abs() / fi < 0.10, "iolab {ii} I/Os, fio {fi}");
}

/// fio 3.33's experimental_verify with loops=N writes N-1 passes and reads the range back once
/// (t0026: 7 MiB written and 1 MiB read of loops=8 over 1 MiB); without it each loop writes and
/// reads back the range. Before, iolab wrote and read back N passes either way.
#[test]
fn experimental_verify_with_loops_writes_and_reads_back_as_fio() {
    let name = "experimental_verify_with_loops_writes_and_reads_back_as_fio";
    if !have_fio(name) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for (rw, loops, exp) in [("randwrite", 4, 1), ("write", 2, 1), ("randwrite", 3, 0)] {
        let text = format!(
            "[job1]\nfilename=vfile\nsize=1M\nreadwrite={rw}\nloops={loops}\ndo_verify=1\nverify=md5\nexperimental_verify={exp}\n"
        );
        let f = rows(&fio_json(d.path(), &text));
        let i = rows(&iolab_json(d.path(), &text, &[]));
        assert_eq!(i, f, "{text}");
        let passes = if exp == 1 { loops - 1 } else { loops };
        let read = if exp == 1 { 1 << 20 } else { passes << 20 };
        assert_eq!((i[0].5, i[0].3), (passes << 20, read), "{text}");
    }
}

/// fio runs the verify options with an engine that moves no data (t0009: ioengine=null, judged
/// by its runtime): iolab runs it too, with a note that nothing is checked. Before, iolab
/// refused the job (--verify with --engine null).
#[test]
fn verify_with_the_null_engine_runs_and_checks_nothing() {
    let name = "verify_with_the_null_engine_runs_and_checks_nothing";
    if !have_fio(name) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[n]\nioengine=null\nsize=20g\nnorandommap\nbs=4k\nrw=randwrite\ntime_based\nruntime=2\nverify=crc32c-intel\ndo_verify=1\nverify_backlog=1m\n";
    let f = fio_json(d.path(), text);
    let i = iolab_json(d.path(), text, &[]);
    let rt = |v: &Value| v["jobs"][0]["write"]["runtime"].as_u64().unwrap();
    assert!(
        rt(&f) >= 1900 && rt(&i) >= 1900,
        "fio {} iolab {}",
        rt(&f),
        rt(&i)
    );
    assert!(rt(&i) < 2600, "iolab {}", rt(&i));
    assert!(i["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 0);
    assert_eq!(i["jobs"][0]["read"]["total_ios"], 0, "nothing read back");
    let notes = i["jobs"][0]["iolab_notes"].to_string();
    assert!(notes.contains("nothing is checked"), "{notes}");
}

/// fio's examples/basic-verify.fio on a loop device: random 4 KiB writes over the whole device,
/// then each block read back and checked (with --destructive, as any iolab write to a device).
/// Both do 16384 writes and 16384 reads of 64 MiB; iolab checks every block and leaves nothing
/// beside the device. Before, iolab refused --verify on a --device.
#[test]
fn basic_verify_on_a_device_writes_then_checks_every_block_as_fio() {
    let name = "basic_verify_on_a_device_writes_then_checks_every_block_as_fio";
    if !is_root() {
        return skip(name, "needs root (a loop device)");
    }
    if Command::new("losetup").arg("--version").output().is_err() {
        return skip(name, "losetup is not installed");
    }
    if !have_fio(name) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    std::fs::write(&img, vec![0u8; 64 << 20]).unwrap();
    let o = Command::new("losetup")
        .args(["--find", "--show", img.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let _detach = Detach(dev.clone());
    let src = std::fs::read_to_string(fio_examples().join("basic-verify.fio"))
        .unwrap_or_else(|_| {
            "[write-and-verify]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=libaio\niodepth=16\nverify=crc32c\nfilename=/dev/XXX\n".into()
        });
    let text = src.replace("/dev/XXX", &dev);
    let job = d.path().join("basic-verify.fio");
    std::fs::write(&job, &text).unwrap();
    let o = Command::new("fio")
        .current_dir(d.path())
        .args(["--output-format=json", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let f: Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    std::fs::write(&img, vec![0u8; 64 << 20]).unwrap();
    let run = |extra: &[&str]| {
        to_run(
            Command::new(bin())
                .current_dir(d.path())
                .args(["run", job.to_str().unwrap(), "--no-save", "-q"])
                .args(extra)
                .env("IOLAB_DB", test_db())
                .output()
                .unwrap(),
        )
    };
    // without --destructive: refused, one line, nothing written
    let r = run(&["--output-format", "fio-json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--destructive"), "{}", r.stderr);
    let r = run(&["--output-format", "fio-json", "--destructive"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(rows(&r.json()), rows(&f));
    assert_eq!(rows(&f)[0].2, 16384, "fio read back every block");
    let r = run(&["--json", "--destructive"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let checked: u64 = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["verify"]["checked"].as_u64())
        .sum();
    assert_eq!(checked, 16384, "every block checked: {v}");
    let left = entries(d.path());
    assert!(!left.iter().any(|e| e.contains("iolab")), "{left:?}");
}

/// fio's source tree's examples/ (`FIO_SRC`, else /var/tmp/fiosrc/fio-3.33).
fn fio_examples() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var("FIO_SRC").unwrap_or_else(|_| "/var/tmp/fiosrc/fio-3.33".into()),
    )
    .join("examples")
}

/// rw=write:N with io_size and loops (examples/cross-stripe-verify.fio's shape): fio makes each
/// loop one pass over its range (a pass ends where the next I/O would not fit), at most loops ×
/// io_size in all, then passes on to io_size: over 4 MiB from 120 KiB at a 128 KiB stride a pass
/// is 32 writes, so io_size=1m is 64 writes at loops=2 and 96 at loops=3, io_size=640k is 40
/// at loops=1 and 64 at loops=2, io_size=10m is 640 at loops=8. Before, iolab refused it.
#[test]
fn holes_with_io_size_and_loops_make_fios_passes() {
    let name = "holes_with_io_size_and_loops_make_fios_passes";
    if !have_fio(name) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for (io, loops, numjobs, inc) in [
        ("1m", 2, 1, "0"),
        ("1m", 3, 1, "0"),
        ("640k", 1, 1, "0"),
        ("640k", 2, 1, "0"),
        ("3m", 2, 1, "0"),
        ("10m", 8, 1, "0"),
        ("1m", 3, 2, "2m"),
    ] {
        let text = format!(
            "[j]\nfilename=f\nsize=4m\nbs=16k\nrw=write:112k\noffset=120k\nio_size={io}\nloops={loops}\nnumjobs={numjobs}\noffset_increment={inc}\n"
        );
        let writes = |v: &Value| -> Vec<u64> {
            v["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["write"]["total_ios"].as_u64().unwrap())
                .collect()
        };
        let f = writes(&fio_json(d.path(), &text));
        let i = writes(&iolab_json(d.path(), &text, &[]));
        assert_eq!(i, f, "{text}");
    }
}
