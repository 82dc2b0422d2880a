//! `iolab run JOBFILE...`: fio job files run end to end (tests/fixtures/fio-jobs/).

use crate::common;
use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio-jobs")
        .join(name)
        .display()
        .to_string()
}

/// iolab with `IOLAB_FIO_DIR` (the fixtures' directory=) set to `dir`.
fn iolab_in(dir: &Path, db: &Path, args: &[&str]) -> Run {
    to_run(
        Command::new(bin())
            .args(args)
            .env("IOLAB_DB", db)
            .env("IOLAB_FIO_DIR", dir)
            .output()
            .expect("run iolab"),
    )
}

fn run_file(dir: &Path, name: &str) -> serde_json::Value {
    let r = iolab_in(
        dir,
        &test_db(),
        &["run", &fixture(name), "--json", "--no-save", "-q"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json()
}

#[test]
fn size_bound_jobs_move_exactly_size_bytes_and_clones_have_their_files() {
    let d = tempfile::tempdir().unwrap();
    let v = run_file(d.path(), "sizebound.fio");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "two phases");
    // reader: size=8m per clone, numjobs=2, nrfiles=2, bs=4k
    let r = &runs[0];
    assert_eq!(r["mode"], "rndrd");
    assert_eq!(r["results"]["read"]["bytes"], 2 * 8 * 1024 * 1024);
    assert_eq!(r["results"]["read"]["ops"], 2 * 2048);
    assert_eq!(r["job"]["threads"], 2);
    // writer: size=4m in 16k writes, an fsync every 8
    let w = &runs[1];
    assert_eq!(w["mode"], "seqwr");
    assert_eq!(w["results"]["write"]["bytes"], 4 * 1024 * 1024);
    assert_eq!(w["results"]["write"]["ops"], 256);
    assert!(w["results"]["fsync"]["ops"].as_u64().unwrap() >= 32);
    assert_eq!(v["jobfile"]["jobs"][1]["section"], "writer");
    // the set was this run's: removed
    assert!(
        entries(d.path())
            .iter()
            .all(|e| !e.starts_with("iolab-file"))
    );
    // numjobs x nrfiles files on disk, each size / nrfiles bytes: the reader alone, kept
    let kept = tempfile::tempdir().unwrap();
    let reader =
        "[reader]\ndirectory=${IOLAB_FIO_DIR}\nrw=randread\nbs=4k\nsize=8m\nnrfiles=2\nnumjobs=2\n";
    run_text(kept.path(), reader, &["--keep"]);
    let mut files: Vec<(String, u64)> = std::fs::read_dir(kept.path())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("iolab-file"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    files.sort();
    let want: Vec<(String, u64)> = (0..4)
        .map(|i| (format!("iolab-file.{i}"), 4 * 1024 * 1024))
        .collect();
    assert_eq!(files, want, "2 clones x 2 files of 8m / 2");
}

#[test]
fn randrw_read_share_is_rwmixread_within_2_percent() {
    let d = tempfile::tempdir().unwrap();
    let v = run_file(d.path(), "mixed.fio");
    let (r, w) = (ops(&v, "read") as f64, ops(&v, "write") as f64);
    let share = r / (r + w) * 100.0;
    assert!((share - 70.0).abs() <= 2.0, "read share {share:.1}%");
    assert_eq!(
        v["job"]["distribution"],
        serde_json::json!({"kind": "zipf", "theta": 1.1})
    );
}

fn ts(s: &serde_json::Value) -> String {
    s.as_str().unwrap().to_string()
}

#[test]
fn jobs_between_stonewalls_run_at_once_and_phases_do_not_overlap() {
    let d = tempfile::tempdir().unwrap();
    let v = run_file(d.path(), "concurrent.fio");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let roles: Vec<&str> = runs[0]["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["log", "pages"]);
    assert_eq!(runs[1]["mode"], "rndwr");
    let ph = v["jobfile"]["phases"].as_array().unwrap();
    assert_eq!(ph.len(), 2);
    // RFC 3339 UTC timestamps of one format compare as text
    assert!(ts(&ph[0]["end_time"]) <= ts(&ph[1]["start_time"]), "{ph:?}");
    assert!(ts(&ph[0]["start_time"]) < ts(&ph[0]["end_time"]));
    assert_eq!(ph[1]["jobs"], serde_json::json!(["after"]));
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn bad_input_is_one_line_naming_file_and_line_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let db = test_db();
    for (file, want) in [
        ("nope.fio", "nope.fio: job file: cannot read it"),
        (
            "badwait.fio",
            "badwait.fio:6: wait_for: no job of that name",
        ),
        ("badbs.fio", "badbs.fio:3: bs: not a number"),
        (
            "loop-a.fio",
            "loop-b.fio:2: include loop-a.fio: an include loop",
        ),
    ] {
        let r = iolab_in(d.path(), &db, &["run", &fixture(file), "--no-save"]);
        assert_eq!(r.code, 2, "{file}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{file}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{file}: {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    assert!(entries(d.path()).is_empty());
}

#[test]
fn unsupported_options_are_refused_before_running_or_recorded_when_ignored() {
    let d = tempfile::tempdir().unwrap();
    let f = fixture("unsupported.fio");
    let r = iolab_in(d.path(), &test_db(), &["run", &f, "--no-save"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // one line per blocker, each named by file, line and name, never a value
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stderr);
    assert!(
        lines[0].starts_with("iolab: error: ")
            && lines[0]
                .ends_with("unsupported.fio:7: zonemode: refused: zoned block device mode (write pointers, zone resets) is not run")
            && lines[1].starts_with("iolab: error: ")
            && lines[1].contains("unsupported.fio:8: lockmem: refused: ")
            && !r.stderr.contains("zbd"),
        "{}",
        r.stderr
    );
    assert!(entries(d.path()).is_empty(), "nothing ran");
    let r = iolab_in(
        d.path(),
        &test_db(),
        &[
            "run",
            &f,
            "--ignore-unsupported",
            "--no-save",
            "--json",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("zonemode=zbd: not supported, ignored"),
        "{}",
        r.stderr
    );
    let v = r.json();
    let ign = &v["jobfile"]["jobs"][0]["options_ignored"];
    assert_eq!(ign.as_array().unwrap().len(), 2, "{ign}");
    assert!(
        ign.as_array().unwrap().iter().any(|i| i
            .as_str()
            .unwrap()
            .ends_with("unsupported.fio:7: zonemode=zbd")),
        "{ign}"
    );
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "fio_option_ignored")
    );
}

#[test]
fn stored_as_one_run_with_the_text_and_compared_with_the_flag_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let f = fixture("concurrent.fio");
    let r = iolab_in(&data, &db, &["run", &f, "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("saved as run 1"), "{}", r.stderr);
    let shown = iolab_in(&data, &db, &["show", "1", "--json"]).json();
    assert_eq!(
        shown["jobfile"]["files"][0]["text"],
        std::fs::read_to_string(&f).unwrap()
    );
    // the same first phase as flags
    let r = iolab_in(
        &data,
        &db,
        &[
            "run",
            "--dir",
            data.to_str().unwrap(),
            "--role",
            "log:mode=seqwr,bs=4k,size=4m,files=1,fsync-freq=1,fsync-mode=fdatasync",
            "--role",
            "pages:mode=rndrd,bs=4k,size=4m,files=1",
            "--time",
            "1",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = iolab_in(&data, &db, &["compare", "1", "2", "--json"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    let c = c.json();
    let both = |cell: &str, op: &str| {
        c["rows"].as_array().unwrap().iter().any(|r| {
            r["cell"].as_str().is_some_and(|x| x.starts_with(cell))
                && r["op"] == op
                && r["metric"] == "iops"
                && r["sides"][1]["stat"]["mean"].is_number()
        })
    };
    assert!(
        both("log (seqwr)", "write") && both("pages (rndrd)", "read"),
        "{c}"
    );
}

#[test]
fn stdin_and_files_named_otherwise_are_job_files() {
    let d = tempfile::tempdir().unwrap();
    let text = format!(
        "# no .fio suffix\n[one]\nrw=randwrite\nsize=1m\ndirectory={}\n",
        d.path().display()
    );
    let mut c = Command::new(bin())
        .args(["run", "-", "--no-save", "--json", "-q"])
        .env("IOLAB_DB", test_db())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(c.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
    let r = to_run(c.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ops(&r.json(), "write"), 256);
    let p = d.path().join("job.txt");
    std::fs::write(&p, &text).unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", p.to_str().unwrap(), "--no-save", "--json", "-q"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["jobfile"]["files"][0]["text"], text);
}

#[test]
fn fio_json_has_one_job_per_fio_job_and_the_text_names_the_phases() {
    let d = tempfile::tempdir().unwrap();
    let f = fixture("concurrent.fio");
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", &f, "--no-save", "-q", "--output-format", "fio-json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let jobs: Vec<(String, u64)> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
            )
        })
        .collect();
    // fio's groupid is the reporting group: wait_for starts a phase, not a group (fio 3.33
    // reports after in group 0 too; before, iolab gave each phase a group of its own)
    assert_eq!(
        jobs,
        [
            ("log".to_string(), 0),
            ("pages".to_string(), 0),
            ("after".to_string(), 0)
        ]
    );
    // each job's options are its file's, resolved ([global] included), not rebuilt from iolab's
    let after = &v["jobs"][2]["job options"];
    assert_eq!(after["wait_for"], "pages", "{after}");
    assert_eq!(after["rw"], "randwrite", "{after}");
    assert_eq!(after["size"], "4m", "{after}");
    assert_eq!(after["time_based"], "", "{after}");
    assert_eq!(v["jobs"][0]["job options"]["fdatasync"], "1");
    assert!(v["jobs"][0]["job options"].get("wait_for").is_none());
    let r = iolab_in(d.path(), &test_db(), &["run", &f, "--no-save", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with(&format!(
            "job file {f}: phase 1: log, pages (at once); phase 2: after\n"
        )),
        "{}",
        r.stdout
    );
}

#[test]
fn phases_share_the_default_directory_and_leave_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("two.fio"),
        "[a]\nrw=randread\nsize=1m\n[b]\nstonewall\nrw=randwrite\nsize=1m\n",
    )
    .unwrap();
    let r = to_run(
        Command::new(bin())
            .args(["run", "two.fio", "--no-save", "--json", "-q"])
            .current_dir(d.path())
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    assert_eq!(v["runs"][1]["results"]["write"]["ops"], 256);
    assert_eq!(entries(d.path()), ["two.fio"]);
}

#[test]
fn fio_reserved_names_are_this_machines() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("n.fio");
    std::fs::write(
        &p,
        format!(
            "[n]\nrw=randread\nnumjobs=$ncpus\nbs=$pagesize\nsize=1m\ndirectory={}\n",
            d.path().display()
        ),
    )
    .unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", p.to_str().unwrap(), "--no-save", "--json", "-q"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let n = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(v["job"]["threads"], n);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    assert_eq!(v["job"]["bs_bytes"], page);
}

/// The workload's options belong to the job file: given as flags beside it they are refused
/// (exit 2, one line naming them) and nothing runs.
#[test]
fn workload_flags_beside_a_job_file_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("j.fio");
    std::fs::write(
        &job,
        "[j]\nrw=randread\nbs=4k\nsize=1m\nioengine=null\nruntime=1\ntime_based\n",
    )
    .unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let r = common::iolab(&[
        "run",
        job.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
        "--bs",
        "16k",
        "--threads",
        "4",
        "--no-save",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--bs, --threads") && r.stderr.contains("job file"),
        "{}",
        r.stderr
    );
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none());
}

/// (read bytes, write bytes) over all the modes of an iolab run document.
fn rw_bytes(v: &serde_json::Value) -> (u64, u64, u64, u64) {
    // one mode: the document is the run; several: `runs[]`
    let runs = match v["runs"].as_array() {
        Some(r) => r.clone(),
        None => vec![v.clone()],
    };
    let sum = |op: &str| {
        runs.iter()
            .map(|r| r["results"][op]["bytes"].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    let vsum = |k: &str| {
        runs.iter()
            .map(|r| r["verify"][k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    let bad = ["lost", "misdirected", "torn", "stale"]
        .iter()
        .map(|k| vsum(k))
        .sum();
    (sum("read"), sum("write"), vsum("checked"), bad)
}

#[test]
fn a_write_job_with_verify_reads_back_what_it_wrote_as_fio_does() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let job = d.path().join("v.fio");
    std::fs::write(
        &job,
        "[v]\nrw=write\nsize=1m\nbs=4k\nverify=crc32c\nverify_backlog=16\n",
    )
    .unwrap();
    let r = iolab_in(
        &data,
        &test_db(),
        &[
            "run",
            job.to_str().unwrap(),
            "--dir",
            data.to_str().unwrap(),
            "--json",
            "--no-save",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let (rd, wr, checked, bad) = rw_bytes(&v);
    assert_eq!((rd, wr, checked, bad), (1 << 20, 1 << 20, 256, 0), "{v}");
    // one mode: one cell in runs[]
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(1), "{v}");
    let modes = [v["mode"].as_str().unwrap()];
    // verify_backlog: the writes are read back every 16 in the same mode, as fio
    assert_eq!(modes, ["seqwr"]);
    let notes = v["jobfile"]["jobs"][0]["notes"].to_string();
    assert!(
        notes.contains(
            "verify=crc32c: iolab's header, with the same checksum (CRC-32C) as fio's crc32c"
        ),
        "{notes}"
    );
    assert!(
        notes.contains("verify_backlog=16: every 16 writes the thread reads them back"),
        "{notes}"
    );
    // do_verify=0: the headers are written, nothing is read back
    std::fs::write(
        &job,
        "[v]\nrw=randwrite\nsize=1m\nbs=4k\nverify=md5\ndo_verify=0\n",
    )
    .unwrap();
    let r = iolab_in(
        &data,
        &test_db(),
        &[
            "run",
            job.to_str().unwrap(),
            "--dir",
            data.to_str().unwrap(),
            "--json",
            "--no-save",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (rd2, wr2, _, bad) = rw_bytes(&r.json());
    assert_eq!((rd2, wr2, bad), (0, 1 << 20, 0));
    // fio's own run of the first job file: the same byte counts
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(
            "a_write_job_with_verify_reads_back_what_it_wrote_as_fio_does",
            "fio is not installed",
        );
    }
    std::fs::write(
        &job,
        format!(
            "[v]\nfilename={}\nrw=write\nsize=1m\nbs=4k\nverify=crc32c\nverify_backlog=16\n",
            d.path().join("fio-file").display()
        ),
    )
    .unwrap();
    // fio saves a verify state file (local-v-0-verify.state) in its working directory: the
    // temporary one, so the test leaves nothing behind.
    let f = fio_json(d.path(), &job);
    let j = &f["jobs"][0];
    assert_eq!(
        (
            j["read"]["io_bytes"].as_u64(),
            j["write"]["io_bytes"].as_u64()
        ),
        (Some(1 << 20), Some(1 << 20)),
        "{j}"
    );
}

/// `--repeat N` with a job file: N stored runs of the whole file (every phase), one group, the
/// summary of `iolab run --repeat`; formats of one run's document are refused.
#[test]
fn repeat_runs_the_whole_job_file_n_times_as_one_group() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let f = fixture("sizebound.fio");
    let r = iolab_in(&data, &db, &["run", &f, "--repeat", "2", "--json", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("saved as group g1 (runs 1, 2)"),
        "{}",
        r.stderr
    );
    let v = r.json();
    assert_eq!(v["schema"], "iolab-repeat/1");
    assert_eq!(v["run_ids"], serde_json::json!([1, 2]));
    for run in v["runs"].as_array().unwrap() {
        // each repetition is the whole file: both phases, exact sizes, the text kept
        let cells = run["runs"].as_array().unwrap();
        assert_eq!(cells.len(), 2, "{run}");
        assert_eq!(cells[0]["results"]["read"]["bytes"], 2 * 8 * 1024 * 1024);
        assert_eq!(cells[1]["results"]["write"]["bytes"], 4 * 1024 * 1024);
        assert_eq!(
            run["jobfile"]["files"][0]["text"],
            std::fs::read_to_string(&f).unwrap()
        );
    }
    let s = v["summary"].as_array().unwrap();
    assert!(
        s.iter()
            .any(|r| r["cell"] == "rndrd" && r["op"] == "read" && r["stat"]["n"] == 2),
        "{v}"
    );
    // the table: one line per repetition, then the summary
    let r = iolab_in(&data, &db, &["run", &f, "--repeat", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("repetition 2/2: rndrd"), "{}", r.stdout);
    assert!(
        r.stdout.contains("summary of 2 repetitions"),
        "{}",
        r.stdout
    );
    assert!(
        entries(&data).iter().all(|e| !e.starts_with("iolab-file")),
        "the sets were the runs': removed"
    );
    let r = iolab_in(
        &data,
        &db,
        &["run", &f, "--repeat", "2", "--output-format", "fio-json"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("--repeat"), "{}", r.stderr);
}

/// fio's arithmetic (`(...)` values, reserved keywords with math) end to end; anything else is
/// one line naming file:line.
#[test]
fn arithmetic_values_are_evaluated_as_fio_does() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.fio");
    std::fs::write(
        &p,
        format!(
            "[m]\nrw=randread\nbs=(2*2)k\nsize=((1+1)*512k)\nnumjobs=(2^1)\nruntime=(500*1000)\ntime_based\ndirectory={}\n",
            d.path().display()
        ),
    )
    .unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", p.to_str().unwrap(), "--no-save", "--json", "-q"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["job"]["bs_bytes"], 4096);
    assert_eq!(v["job"]["threads"], 2);
    let opts = &v["jobfile"]["jobs"][0]["iolab_args"];
    assert!(opts.to_string().contains("0.5"), "{opts}");
    std::fs::write(&p, "[m]\nrw=read\nsize=$((2*1024))k\n").unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", p.to_str().unwrap(), "--no-save"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("m.fio:3: size: not a number") && !r.stderr.contains("$(("),
        "{}",
        r.stderr
    );
}

/// Writes `text` as `job.fio` in a directory of its own (beside the data directory `dir`) and
/// runs it with `extra` options; the JSON document.
fn run_text(dir: &Path, text: &str, extra: &[&str]) -> serde_json::Value {
    let jobs = tempfile::tempdir().unwrap();
    let p = jobs.path().join("job.fio");
    std::fs::write(&p, text).unwrap();
    let mut args = vec!["run", p.to_str().unwrap(), "--json", "--no-save", "-q"];
    args.extend_from_slice(extra);
    let r = iolab_in(dir, &test_db(), &args);
    assert_eq!(r.code, 0, "{text}\n{}", r.stderr);
    r.json()
}

fn notes_of(v: &serde_json::Value, job: usize) -> Vec<String> {
    v["jobfile"]["jobs"][job]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn invalidate_0_is_noted_and_random_jobs_keep_fios_random_map() {
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\ndirectory=${IOLAB_FIO_DIR}\nsize=1m\nbs=4k\n\n\
                [cold]\nrw=randread\ninvalidate=0\n\n\
                [mapped]\nstonewall\nrw=randread\nnorandommap\n\n\
                [timed]\nstonewall\nrw=randread\nruntime=1\ntime_based\n";
    let v = run_text(d.path(), text, &[]);
    let cold = notes_of(&v, 0);
    assert!(
        cold.iter()
            .any(|n| n.starts_with("invalidate=0: iolab still evicts")),
        "{cold:?}"
    );
    assert_eq!(cold.len(), 1, "{cold:?}");
    // fio's random map, size-bound or time-bound, unless norandommap: nothing to say
    assert!(notes_of(&v, 1).is_empty(), "{:?}", notes_of(&v, 1));
    assert!(notes_of(&v, 2).is_empty(), "{:?}", notes_of(&v, 2));
    let maps: Vec<serde_json::Value> = cells(&v)
        .iter()
        .map(|c| c["job"]["random_map"].clone())
        .collect();
    assert_eq!(
        maps,
        [
            serde_json::json!("bitmap"),
            serde_json::Value::Null,
            serde_json::json!("bitmap")
        ]
    );
    // the notes are the document's warnings too
    let warned: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "fio_option_approximated")
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned.iter().all(|w| w.starts_with("job cold: ")),
        "{warned:?}"
    );
    // --warm reads the set in: invalidate=0 is then no approximation
    let v = run_text(d.path(), text, &["--warm"]);
    assert!(
        !notes_of(&v, 0)
            .iter()
            .any(|n| n.starts_with("invalidate=0")),
        "{:?}",
        notes_of(&v, 0)
    );
}

/// The cells of a job-file run, one per phase (`runs[]`, or the document itself for one phase).
fn cells(v: &serde_json::Value) -> Vec<serde_json::Value> {
    match v["runs"].as_array() {
        Some(r) => r.clone(),
        None => vec![v.clone()],
    }
}

fn op(c: &serde_json::Value, op: &str) -> (u64, u64) {
    let r = &c["results"][op];
    (r["ops"].as_u64().unwrap(), r["bytes"].as_u64().unwrap())
}

fn codes(c: &serde_json::Value) -> Vec<String> {
    c["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

const MIB: u64 = 1024 * 1024;

/// Every engine iolab maps runs from a job file and moves exactly `size` bytes.
#[test]
fn each_engine_of_a_job_file_runs_and_moves_exactly_size() {
    let d = tempfile::tempdir().unwrap();
    let v = run_file(d.path(), "engines.fio");
    let c = cells(&v);
    assert_eq!(c.len(), 4, "one phase per job");
    let want = [
        ("libaio", "rndrd", "read", 256),
        ("io_uring", "rndwr", "write", 256),
        ("mmap", "seqrd", "read", 16),
        ("null", "seqwr", "write", 256),
    ];
    for (c, (engine, mode, dir, ops)) in c.iter().zip(want) {
        assert_eq!(c["job"]["engine"], engine, "{}", c["job"]);
        assert_eq!(c["mode"], mode);
        assert_eq!(op(c, dir), (ops, MIB), "{engine}");
        let other = if dir == "read" { "write" } else { "read" };
        assert_eq!(op(c, other), (0, 0), "{engine}");
    }
    assert_eq!(c[0]["job"]["direct"], true, "direct=1");
    assert_eq!(c[0]["job"]["iodepth"], 8);
    assert_eq!(c[1]["job"]["iodepth"], 4);
    assert_eq!(c[2]["job"]["bs_bytes"], 65536);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// bssplit, bsrange, loops, kb_base, fallocate, sync= and fsync_on_close, each a size-bound job
/// of its own phase: the counts each job fixes, exactly.
#[test]
fn sizes_loops_layouts_and_syncs_of_a_job_file_give_their_exact_counts() {
    let d = tempfile::tempdir().unwrap();
    let v = run_file(d.path(), "sizes.fio");
    let c = cells(&v);
    let names: Vec<&str> = v["jobfile"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    let want = [
        "split",
        "range",
        "looped",
        "decimal",
        "holes",
        "unwritten",
        "dsync",
        "osync",
        "closing",
    ];
    assert_eq!(names, want);
    assert_eq!(c.len(), want.len());
    let at = |n: &str| &c[want.iter().position(|w| *w == n).unwrap()];

    // bssplit=4k/50:16k/50, size=10000k: exactly size bytes, as fio (its last read trimmed to
    // fit), in about 1000 reads of 4 KiB or 16 KiB, half and half (fio 3.33: 1027)
    let (ops, bytes) = op(at("split"), "read");
    assert_eq!(bytes, 10_240_000);
    assert!((900..=1100).contains(&ops), "{ops} reads");
    // bsrange=4k-16k: exactly size bytes in reads of 4, 8, 12 or 16 KiB, 10 KiB on average
    // (fio 3.33: 976 reads, and one 4 KiB read past size=)
    let (ops, bytes) = op(at("range"), "read");
    assert_eq!(bytes, 10_240_000);
    let mean = bytes as f64 / ops as f64;
    assert!((mean - 10240.0).abs() <= 1024.0, "mean read {mean} bytes");
    // loops=3: three times size
    assert_eq!(op(at("looped"), "write"), (768, 3 * MIB));
    // kb_base=1000: size=4096k is 4,096,000 bytes, bs=4KiB is 4096
    assert_eq!(op(at("decimal"), "read"), (1000, 4_096_000));
    // fallocate=none / posix: the set made sparse / preallocated, and written through
    for (n, layout) in [("holes", "holes"), ("unwritten", "unwritten")] {
        assert_eq!(at(n)["job"]["layout"], layout);
        assert_eq!(op(at(n), "write"), (256, MIB), "{n}");
        assert!(
            codes(at(n)).contains(&"layout_allocating_writes".to_string()),
            "{n}: {:?}",
            codes(at(n))
        );
    }
    assert_eq!(at("looped")["job"]["layout"], "overwrite");
    // sync=dsync / sync=1: O_DSYNC / O_SYNC writes, so no warning that writes were not synced
    assert_eq!(
        at("dsync")["job"]["open_flags"],
        serde_json::json!({"dsync": true, "sync": false})
    );
    assert_eq!(
        at("osync")["job"]["open_flags"],
        serde_json::json!({"dsync": false, "sync": true})
    );
    for n in ["dsync", "osync"] {
        assert_eq!(op(at(n), "write"), (64, 256 * 1024), "{n}");
        assert!(
            !codes(at(n)).contains(&"writes_not_synced".to_string()),
            "{n}: {:?}",
            codes(at(n))
        );
    }
    assert!(codes(at("looped")).contains(&"writes_not_synced".to_string()));
    // fsync_on_close=1: one fsync of the one file at the end; none without it
    assert_eq!(op(at("closing"), "fsync").0, 1);
    assert_eq!(op(at("closing"), "write"), (256, MIB));
    assert_eq!(op(at("looped"), "fsync").0, 0);
}

/// rate_iops and rate (per clone, as fio's) pace a time-based job: ops = rate x window within
/// 10%; ramp_time runs before the measured window.
#[test]
fn rates_and_ramp_of_a_job_file_pace_and_delay_the_window() {
    let d = tempfile::tempdir().unwrap();
    let v = run_file(d.path(), "paced.fio");
    let c = cells(&v);
    assert_eq!(c.len(), 3);
    // rate_iops=100 with numjobs=2: 200 reads a second
    let w = c[0]["window_s"].as_f64().unwrap();
    let (ops, _) = op(&c[0], "read");
    let want = 200.0 * w;
    assert!(
        (ops as f64 - want).abs() <= 0.1 * want,
        "{ops} reads in {w} s at 200/s"
    );
    // rate=400k of 4 KiB writes: 100 a second
    let w = c[1]["window_s"].as_f64().unwrap();
    let (ops, bytes) = op(&c[1], "write");
    let want = 100.0 * w;
    assert!(
        (ops as f64 - want).abs() <= 0.1 * want,
        "{ops} writes in {w} s at 100/s"
    );
    assert_eq!(bytes, ops * 4096);
    // ramp_time=1, runtime=1: a 1 s window after 1 s of ramp
    assert_eq!(c[2]["job"]["ramp_s"], 1.0);
    let w = c[2]["window_s"].as_f64().unwrap();
    assert!((w - 1.0).abs() < 0.05, "window {w} s");
    let ph = &v["jobfile"]["phases"][2];
    let t = |k: &str| chrono::DateTime::parse_from_rfc3339(ph[k].as_str().unwrap()).unwrap();
    let phase_s = (t("end_time") - t("start_time")).as_seconds_f64();
    assert!(phase_s >= 2.0, "the ramped phase took {phase_s} s");
}

/// `include` in [global] and in a job: the included options apply (paths relative to the file
/// that includes them), and the job runs with them.
#[test]
fn an_included_file_gives_its_options_to_the_job() {
    let d = tempfile::tempdir().unwrap();
    let v = run_file(d.path(), "included.fio");
    // bs=8k from inc/common.fio, rw=randread and size=2m from inc/reader.fio; numjobs=2
    assert_eq!(v["mode"], "rndrd");
    assert_eq!(v["job"]["bs_bytes"], 8192);
    assert_eq!(op(&v, "read"), (2 * 256, 2 * 2 * MIB));
    let o = &v["jobfile"]["jobs"][0]["fio_options"];
    assert_eq!(o["bs"], "8k");
    assert_eq!(o["rw"], "randread");
    assert!(
        v["jobfile"]["files"][0]["text"]
            .as_str()
            .unwrap()
            .contains("include inc/reader.fio")
    );
}

/// The distribution decides where random writes land: each job writes 1024 random 4 KiB blocks
/// over 1024 blocks with verify headers; `iolab verify` on the kept set counts the blocks no
/// write reached. Uniform: about 1 - 1/e of the blocks are written; zoned 80/10:20/90: the hot
/// tenth and about a fifth of the rest (~287); pareto:0.9 fewer still.
#[test]
fn zoned_and_pareto_distributions_concentrate_the_writes() {
    let d = tempfile::tempdir().unwrap();
    for n in ["uniform", "zoned", "pareto"] {
        std::fs::create_dir(d.path().join(n)).unwrap();
    }
    let v = run_text(
        d.path(),
        &std::fs::read_to_string(fixture("dist.fio")).unwrap(),
        &["--keep"],
    );
    let c = cells(&v);
    assert_eq!(c.len(), 6, "each job writes, then reads back (verify)");
    let mut written = Vec::new();
    for (i, n) in ["uniform", "zoned", "pareto"].iter().enumerate() {
        assert_eq!(op(&c[2 * i], "write"), (1024, 4 * MIB), "{n}");
        let dir = d.path().join(n);
        let r = iolab_in(
            d.path(),
            &test_db(),
            &[
                "verify",
                "--dir",
                dir.to_str().unwrap(),
                "--json",
                "--no-save",
            ],
        );
        assert_eq!(r.code, 0, "{n}: {}", r.stderr);
        let j = r.json();
        let checked = j["verify"]["checked"].as_u64().unwrap();
        assert_eq!(checked + j["unwritten"].as_u64().unwrap(), 1024, "{j}");
        written.push(checked);
    }
    let [uniform, zoned, pareto] = written[..] else {
        unreachable!()
    };
    assert!((600..=700).contains(&uniform), "uniform: {uniform}");
    assert!((250..=330).contains(&zoned), "zoned: {zoned}");
    assert!(pareto < 400, "pareto: {pareto} (uniform {uniform})");
}

/// rw=readwrite (and its spelling rw=rw): sequential reads and writes mixed by rwmixread, a
/// size-bound job moving exactly `size` bytes in all, as fio's own run of the file does.
#[test]
fn readwrite_is_a_sequential_mix_that_moves_exactly_size() {
    let d = tempfile::tempdir().unwrap();
    for rw in ["readwrite", "rw"] {
        let text = format!(
            "[seqmix]\ndirectory=${{IOLAB_FIO_DIR}}\nrw={rw}\nrwmixread=70\nbs=4k\nsize=2m\n"
        );
        let v = run_text(d.path(), &text, &[]);
        assert_eq!(v["mode"], "seqrw", "{rw}");
        let (r, rb) = op(&v, "read");
        let (w, wb) = op(&v, "write");
        assert_eq!(r + w, 512, "{rw}: size / bs operations in all");
        assert_eq!(rb + wb, 2 * MIB, "{rw}");
        let share = r as f64 / 512.0 * 100.0;
        assert!((share - 70.0).abs() <= 2.0, "{rw}: read share {share:.1}%");
        assert!(notes_of(&v, 0).is_empty(), "{:?}", notes_of(&v, 0));
    }
    let jobs = tempfile::tempdir().unwrap();
    let p = jobs.path().join("mix.fio");
    std::fs::write(
        &p,
        "[seqmix]\ndirectory=${IOLAB_FIO_DIR}\nrw=readwrite\nbs=4k\nsize=1m\n",
    )
    .unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &[
            "run",
            p.to_str().unwrap(),
            "--no-save",
            "-q",
            "--output-format",
            "fio-json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let j = &v["jobs"][0];
    assert_eq!(j["job options"]["rw"], "readwrite");
    let (rb, wb) = (
        j["read"]["io_bytes"].as_u64().unwrap(),
        j["write"]["io_bytes"].as_u64().unwrap(),
    );
    assert_eq!(rb + wb, MIB);
    assert!(rb > 0 && wb > 0);
    // fio's run of the same file: the same total
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(
            "readwrite_is_a_sequential_mix_that_moves_exactly_size",
            "fio is not installed",
        );
    }
    let o = Command::new("fio")
        .current_dir(d.path())
        .env("IOLAB_FIO_DIR", d.path())
        .args(["--output-format=json", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let f: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let fj = &f["jobs"][0];
    let (frb, fwb) = (
        fj["read"]["io_bytes"].as_u64().unwrap(),
        fj["write"]["io_bytes"].as_u64().unwrap(),
    );
    assert_eq!(frb + fwb, MIB, "{fj}");
}

// ------------------------------------------------ issue 24: hostile job files

/// `iolab run FILE --no-save -q --dir D` in `d` (cwd and store private), the file's text given.
fn hostile_run(d: &Path, text: &str, extra: &[&str]) -> Run {
    let f = d.join("job.fio");
    std::fs::write(&f, text).unwrap();
    let set = d.join("set");
    std::fs::create_dir_all(&set).unwrap();
    let mut a = vec![
        "run",
        f.to_str().unwrap(),
        "--no-save",
        "-q",
        "--dir",
        set.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    to_run(
        Command::new(bin())
            .args(&a)
            .current_dir(d)
            .env("IOLAB_DB", d.join("r.db"))
            .output()
            .expect("run iolab"),
    )
}

/// runtime=99999999999999999999 panicked; 200,000 nested parentheses overflowed the stack.
#[test]
fn huge_runtimes_and_deep_expressions_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let r = hostile_run(
        d.path(),
        "[j]\nsize=1m\nruntime=99999999999999999999\n",
        &[],
    );
    assert_refused(&r, "job.fio:1: job 'j'");
    let r = hostile_run(
        d.path(),
        "[j]\nsize=1m\nramp_time=99999999999d\nruntime=1\n",
        &[],
    );
    assert_refused(&r, "'--ramp <");
    let deep = format!("{}1m{}", "(".repeat(200_000), ")".repeat(200_000));
    let r = hostile_run(d.path(), &format!("[j]\nsize={deep}\n"), &[]);
    assert_refused(
        &r,
        "job.fio:2: size: not an arithmetic expression fio takes: nested more than 64 deep",
    );
    assert!(entries(&d.path().join("set")).is_empty());
}

/// `include /dev/zero` grew until the OOM killer; a job file that is a device or FIFO, or too
/// large, is refused before it is read.
#[test]
fn includes_and_job_files_that_are_not_bounded_regular_files_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for dev in ["/dev/zero", "/dev/urandom"] {
        let r = hostile_run(d.path(), &format!("[j]\nsize=1m\ninclude {dev}\n"), &[]);
        assert_refused(
            &r,
            &format!("job.fio:3: include {dev}: a character device, not a regular file"),
        );
    }
    let r = hostile_run(
        d.path(),
        &format!("[j]\nsize=1m\ninclude {}\n", d.path().display()),
        &[],
    );
    assert_refused(&r, "a directory, not a regular file");
    let big = d.path().join("big.fio");
    std::fs::write(
        &big,
        format!("[j]\nsize=1m\n{}", "; padding\n".repeat(120_000)),
    )
    .unwrap();
    let r = iolab(&["run", big.to_str().unwrap(), "--no-save"]);
    assert_refused(&r, "larger than 1 MiB");
    let fifo = d.path().join("fifo.fio");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let r = iolab(&["run", fifo.to_str().unwrap(), "--no-save"]);
    assert_refused(&r, "a FIFO, not a regular file");
    // standard input is bounded too
    let mut c = Command::new(bin())
        .args(["run", "-", "--no-save"])
        .env("IOLAB_DB", test_db())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = c.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let chunk = vec![b'x'; 1 << 16];
        // until iolab stops reading (a broken pipe)
        for _ in 0..64 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let r = to_run(c.wait_with_output().unwrap());
    feeder.join().unwrap();
    assert_refused(&r, "-: standard input: larger than 1 MiB");
}

/// `include /etc/shadow` printed 29 lines quoting the file; with --ignore-unsupported every
/// key=value of an included file was stored in the run document.
#[test]
fn included_secrets_are_never_quoted_nor_stored() {
    let d = tempfile::tempdir().unwrap();
    let shadow = d.path().join("shadow");
    std::fs::write(
        &shadow,
        "root:$6$SECRETHASH:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n",
    )
    .unwrap();
    let r = hostile_run(
        d.path(),
        &format!("[j]\nsize=1m\ninclude {}\n", shadow.display()),
        &[],
    );
    assert_refused(&r, "shadow:1: not an option line");
    assert!(
        !r.stderr.contains("SECRET") && !r.stderr.contains("root"),
        "{}",
        r.stderr
    );
    // a secrets file in key=value form: refused by name, never by value
    let env = d.path().join("app.env");
    std::fs::write(&env, "db_password=SECRETPASS\napi_token=SECRETTOKEN\n").unwrap();
    let job = format!(
        "[j]\nsize=1m\nrw=randread\nbs=4k\ninclude {}\n",
        env.display()
    );
    let r = hostile_run(d.path(), &job, &[]);
    // one line per unknown key, by name
    assert_eq!(r.code, 2);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stderr);
    assert!(
        lines[0].ends_with("app.env:1: db_password: refused: not one of fio's options iolab knows"),
        "{}",
        r.stderr
    );
    assert!(
        lines[1].contains("app.env:2: api_token: refused: "),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("SECRET"), "{}", r.stderr);
    // a value that does not parse is not quoted either
    let r = hostile_run(d.path(), "[j]\nsize=SECRETSIZE\n", &[]);
    assert_refused(&r, "job.fio:2: size: not a number");
    assert!(!r.stderr.contains("SECRET"), "{}", r.stderr);
    // --ignore-unsupported runs without them, and stores neither their values nor them as used
    let r = hostile_run(d.path(), &job, &["--ignore-unsupported", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("SECRET"), "{}", r.stdout);
    assert!(!r.stderr.contains("SECRET"), "{}", r.stderr);
    let v = r.json();
    let job = &v["jobfile"]["jobs"][0];
    assert!(job["fio_options"].get("db_password").is_none(), "{job}");
    assert_eq!(job["fio_options"]["rw"], "randread");
    let ignored: Vec<&str> = job["options_ignored"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(
        ignored
            .iter()
            .any(|i| i.ends_with("app.env:1: db_password")),
        "{ignored:?}"
    );
}

/// Issue 25: fio's sizes are read one way by the job reader and the importer
/// (`spec::fio_vocab::parse_size`), and that way is fio's own: each spelling is run through the
/// fio binary (`ioengine=null`, `bs=1`, so `io_bytes` is the size fio read) and compared. fio's
/// HOWTO says `1mi` is 10^6 with the default `kb_base`; fio 3.33 reads it as 2^20.
#[test]
fn sizes_are_read_as_fio_reads_them() {
    use iolab::spec::fio_vocab::parse_size;
    use iolab::store::import::parse_fio_size;
    if Command::new("fio").arg("--version").output().is_err() {
        return skip("sizes_are_read_as_fio_reads_them", "fio is not installed");
    }
    let spellings = [
        "4096", "4k", "4K", "4kb", "4KB", "4kB", "64KiB", "64kib", "64KIB", "64ki", "64Ki", "1mi",
        "1m", "1MiB", "2mib", "0x1000", "512b", "1000ki",
    ];
    let d = tempfile::tempdir().unwrap();
    let mut text = format!(
        "[global]\nioengine=null\nbs=1\nrw=read\nfilename={}\n",
        d.path().join("f").display()
    );
    let mut want = Vec::new();
    for kb_base in [1024u32, 1000] {
        for s in spellings {
            text.push_str(&format!("[j{}]\nsize={s}\nkb_base={kb_base}\n", want.len()));
            let ours = parse_size(s, kb_base).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(
                parse_fio_size(s, kb_base),
                Some(ours),
                "{s} kb_base={kb_base}"
            );
            want.push((s, kb_base, ours));
        }
    }
    let job = d.path().join("sizes.fio");
    std::fs::write(&job, text).unwrap();
    let f = fio_json(d.path(), &job);
    for (i, (s, kb_base, ours)) in want.into_iter().enumerate() {
        let j = &f["jobs"][i];
        assert_eq!(j["jobname"], format!("j{i}"));
        assert_eq!(
            j["read"]["io_bytes"].as_u64(),
            Some(ours),
            "size={s} kb_base={kb_base}: fio's bytes, then iolab's"
        );
    }
}

/// fio's JSON document of a job file run in `dir` (fio's state files land there).
fn fio_json(dir: &Path, job: &Path) -> serde_json::Value {
    let o = Command::new("fio")
        .current_dir(dir)
        .args(["--output-format=json", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

/// Both tools' fio JSON of the same job text, run in `dir` (`DIR` in the text is `dir`): fio's,
/// then iolab's (`--output-format fio-json`); `None` without fio.
fn both(dir: &Path, text: &str, extra: &[&str]) -> Option<(serde_json::Value, serde_json::Value)> {
    if Command::new("fio").arg("--version").output().is_err() {
        skip("fio comparison", "fio is not installed");
        return None;
    }
    let text = text.replace("DIR", dir.to_str().unwrap());
    let job = dir.join("job.fio");
    std::fs::write(&job, &text).unwrap();
    let fio = fio_json(dir, &job);
    for e in entries(dir) {
        if e != "job.fio" {
            let p = dir.join(&e);
            let _ = std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir_all(&p));
        }
    }
    let mut args = vec![
        "run",
        job.to_str().unwrap(),
        "--no-save",
        "-q",
        "--output-format",
        "fio-json",
    ];
    args.extend_from_slice(extra);
    let r = iolab_in(dir, &test_db(), &args);
    assert_eq!(r.code, 0, "{text}\n{}", r.stderr);
    Some((fio, r.json()))
}

fn jobnames(v: &serde_json::Value) -> Vec<String> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap().to_string())
        .collect()
}

/// A [global] name= renames no job: fio 3.33 reports the sections' names (iolab reported the
/// global name for every job, and `wait_for` matched it).
#[test]
fn a_global_name_renames_no_job_as_in_fio() {
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nname=gname\nsize=1m\ndirectory=DIR\n[sec1]\nrw=read\n[sec2]\nrw=write\n";
    let Some((fio, ours)) = both(d.path(), text, &[]) else {
        return;
    };
    assert_eq!(jobnames(&fio), ["sec1", "sec2"]);
    assert_eq!(jobnames(&ours), jobnames(&fio));
}

/// Job files iolab refused wrongly run, moving the bytes fio moves: bsrange whose minimum is
/// below 4 KiB (refused: "not a multiple of the step 4KiB"), fio's rand-zones list ending in
/// `20/`, `offset=0%`, fio's `$jobnum`/`$filenum` placeholders in filename_format (refused as
/// unset environment variables). Sizes drawn from a range make iolab's bytes approximate
/// (size / mean block size operations): within 10%.
#[test]
fn jobs_iolab_refused_wrongly_run_as_fio_does() {
    let d = tempfile::tempdir().unwrap();
    for (opts, exact) in [
        ("rw=randread\nbsrange=1k-4k\n", false),
        ("rw=randread\nbsrange=512-4k\n", false),
        (
            "rw=randread\nrandom_distribution=zoned:50/5:30/15:20/\n",
            true,
        ),
        ("rw=read\noffset=0%\n", true),
        ("rw=write\nfilename_format=f.$jobnum.$filenum\n", true),
    ] {
        let text = format!("[j]\nsize=1m\ndirectory=DIR\n{opts}");
        let Some((fio, ours)) = both(d.path(), &text, &[]) else {
            return;
        };
        let dir = if opts.contains("write") {
            "write"
        } else {
            "read"
        };
        let bytes = |v: &serde_json::Value| v["jobs"][0][dir]["io_bytes"].as_u64().unwrap();
        let (f, o) = (bytes(&fio), bytes(&ours));
        assert_eq!(f, 1 << 20, "{opts}: fio moves size");
        if exact {
            assert_eq!(o, f, "{opts}");
        } else {
            assert!(o.abs_diff(f) * 10 <= f, "{opts}: fio {f}, iolab {o}");
        }
    }
}

/// A job on a block device without size= covers the whole device, as fio (it was refused: "on
/// a device gives neither size= nor runtime=").
#[test]
fn a_device_job_without_size_reads_the_whole_device_as_fio() {
    if !is_root() {
        skip("device without size", "needs root (a loop device)");
        return;
    }
    if Command::new("losetup").arg("--version").output().is_err() {
        skip("device without size", "losetup is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
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
    let text = format!("[j]\nfilename={dev}\nrw=read\nbs=64k\n");
    let Some((fio, ours)) = both(d.path(), &text, &[]) else {
        return;
    };
    let bytes = |v: &serde_json::Value| v["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert_eq!(bytes(&fio), 8 << 20);
    assert_eq!(bytes(&ours), bytes(&fio));
}

/// `iolab run` takes fio's spellings of its flags (--rw with fio's names, --numjobs,
/// --runtime, --ioengine with fio's engines, --filename) and units in --time; a close miss
/// says what was meant, on the one error line.
#[test]
fn run_takes_fios_flag_spellings_and_says_what_a_close_miss_meant() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("set");
    std::fs::create_dir(&dir).unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &[
            "run",
            "--rw",
            "randread",
            "--numjobs",
            "2",
            "--runtime",
            "300ms",
            "--ioengine",
            "pvsync2",
            "--iodepth",
            "1",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "1m",
            "--files",
            "1",
            "--no-save",
            "-q",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(
        (
            &v["mode"],
            &v["job"]["threads"],
            &v["job"]["engine"],
            &v["job"]["limit"]["time_s"]
        ),
        (
            &serde_json::json!("rndrd"),
            &serde_json::json!(2),
            &serde_json::json!("sync"),
            &serde_json::json!(0.3)
        )
    );
    let time = |t: &str| match iolab::cli::parse_from(["iolab", "run", "--time", t]) {
        Ok(c) => match c.cmd {
            iolab::cli::Cmd::Run(a) => a.time,
            _ => unreachable!(),
        },
        Err(_) => None,
    };
    assert_eq!(
        [
            time("30"),
            time("30s"),
            time("2m"),
            time("500ms"),
            time("0s")
        ],
        [Some(30.0), Some(30.0), Some(120.0), Some(0.5), None]
    );
    let r = iolab_in(d.path(), &test_db(), &["run", "--numjob", "4", "--no-save"]);
    assert_refused(
        &r,
        "unexpected argument '--numjob' found; did you mean --numjobs?",
    );
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", "--filename", "/nonexistent/dev", "--no-save"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("/nonexistent/dev"), "{}", r.stderr);
}

/// `--parse-only` (fio's spelling): each job's equivalent flags and phase, nothing run or made;
/// a file with blockers gives the same lines and exit 2 as a run would; without a job file it is
/// refused in one line.
#[test]
fn parse_only_prints_the_translation_and_runs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", &fixture("concurrent.fio"), "--parse-only"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with("  ")).collect();
    assert!(lines.len() >= 2, "{}", r.stdout);
    for l in &lines {
        assert!(
            l.contains("concurrent.fio:")
                && l.contains(" phase ")
                && l.contains(": iolab run --mode="),
            "{l}"
        );
    }
    assert!(
        entries(d.path()).is_empty(),
        "nothing made: {:?}",
        entries(d.path())
    );
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", &fixture("unsupported.fio"), "--parse-only"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stdout.is_empty() && r.stderr.contains("unsupported.fio:7: zonemode"),
        "{}",
        r.stderr
    );
    let r = iolab(&["run", "--parse-only", "--no-save"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--parse-only applies to fio job files"),
        "{}",
        r.stderr
    );
}

/// One named file at two lengths in two phases (t0002: 16 MiB, then 64 MiB on), run with
/// --keep: the later phase replaces the set the earlier one made in this run (fio grows the
/// file) instead of refusing it as a set of other sizes; the longer set is what is kept.
#[test]
fn kept_phases_on_one_file_at_two_lengths_grow_the_set() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = d.path().join("grow.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nfilename=f\nsize=4m\nrw=write\nbs=64k\n[a]\noffset=0\n[b]\nstonewall\noffset=8m\n",
            d.path().display()
        ),
    )
    .unwrap();
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", job.to_str().unwrap(), "--keep", "--no-save", "-q"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let len = std::fs::metadata(d.path().join("iolab-file.0"))
        .unwrap()
        .len();
    assert_eq!(len, 12 << 20, "the set of the longer phase");
    // the set this run made was replaced; one that was there before is never
    let r = iolab_in(
        d.path(),
        &test_db(),
        &["run", job.to_str().unwrap(), "--keep", "--no-save", "-q"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--reprepare"), "{}", r.stderr);
}
