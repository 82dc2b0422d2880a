//! Issue 26, where iolab differs from fio it says so where the user looks: a job file's notes
//! (options run with a difference) in fio's JSON shape (`iolab_notes`) and on stderr, and fio's
//! own `fio_jsonplus_clat2csv` still reads the document.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A job whose `iodepth=4` has no effect with a sync engine: iolab notes it.
const JOB: &str = "[global]\nioengine=psync\niodepth=4\nbs=4k\nsize=1m\n\n[noted]\nrw=randread\n";
const NOTE: &str = "iodepth=4 has no effect with ioengine=psync";

/// Runs `iolab run JOB --output-format FORMAT -o OUT` in `d`: (its fio JSON, its stderr).
fn run(d: &Path, format: &str) -> (Value, String) {
    let job = d.join("noted.fio");
    std::fs::write(
        &job,
        JOB.replacen(
            "[global]\n",
            &format!("[global]\ndirectory={}\n", d.display()),
            1,
        ),
    )
    .unwrap();
    let out = d.join(format!("{format}.json"));
    let o = Command::new(bin())
        .args(["run", job.to_str().unwrap(), "--output-format", format])
        .args(["-o", out.to_str().unwrap(), "--no-save", "-q"])
        .env("IOLAB_DB", d.join("results.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    (serde_json::from_str(&text).unwrap(), err)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// fio-json of a job file carries each job's notes (`jobs[].iolab_notes`) and the run's
/// (`iolab_notes`, each job's prefixed with its name), and stderr has one line per note; a job
/// without a note has an empty list.
#[test]
fn fio_json_of_a_job_file_carries_iolabs_notes_and_stderr_says_them() {
    let d = tempfile::tempdir().unwrap();
    let (fio, err) = run(d.path(), "fio-json");
    let job = &fio["jobs"][0];
    assert_eq!(job["jobname"], "noted");
    let notes = strings(&job["iolab_notes"]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with(NOTE), "{notes:?}");
    let top = strings(&fio["iolab_notes"]);
    assert!(
        top.iter().any(|n| n == &format!("job noted: {}", notes[0])),
        "{top:?}"
    );
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(NOTE)).collect();
    assert_eq!(
        lines,
        [format!("iolab: note: job noted: {}", notes[0])],
        "{err}"
    );

    // without the note: an empty list, and nothing on stderr about it
    let plain = d.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let job = plain.join("plain.fio");
    std::fs::write(
        &job,
        format!(
            "[plain]\ndirectory={}\nioengine=psync\nbs=4k\nsize=1m\nrw=read\n",
            plain.display()
        ),
    )
    .unwrap();
    let o = Command::new(bin())
        .args(["run", job.to_str().unwrap(), "--output-format", "fio-json"])
        .args(["--no-save", "-q"])
        .env("IOLAB_DB", d.path().join("results.db"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["jobs"][0]["iolab_notes"], serde_json::json!([]));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("iolab: note:"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// fio's own `fio_jsonplus_clat2csv` reads a fio-json+ document with the `iolab_notes` keys
/// (fio's tools ignore keys they do not know) and validates its CSV.
#[test]
fn fio_jsonplus_clat2csv_reads_a_document_with_notes() {
    let tool = "/usr/bin/fio_jsonplus_clat2csv";
    if !Path::new(tool).exists() {
        return skip(
            "fio_jsonplus_clat2csv_reads_a_document_with_notes",
            "fio_jsonplus_clat2csv (Debian's fio package) is not installed",
        );
    }
    let d = tempfile::tempdir().unwrap();
    let (fio, _) = run(d.path(), "fio-json+");
    assert!(!strings(&fio["jobs"][0]["iolab_notes"]).is_empty());
    let out = d.path().join("fio-json+.json");
    let csv = d.path().join("lat.csv");
    for extra in [None, Some("--validate")] {
        let o = Command::new(tool)
            .arg(&out)
            .arg(&csv)
            .args(extra)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{said}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        if extra.is_some() {
            assert!(said.contains("validated"), "{said}");
        }
    }
    let rows = std::fs::read_to_string(d.path().join("lat_job0.csv")).unwrap();
    let ios = fio["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(ios, 256, "1 MiB in 4 KiB reads");
    // the last row's cumulative count of reads is every read
    let last = rows.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(
        last.split(',').any(|c| c.trim() == ios.to_string()),
        "{last}"
    );
}
