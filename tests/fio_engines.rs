//! Issue 26, fio's modes and engines that are not plain reads and writes: the same job file run
//! by fio 3.33 and by `iolab run JOBFILE`, compared on fio's own JSON (iolab's
//! `--output-format fio-json`) and on what the files hold afterwards.

use crate::common::*;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};

fn have_fio(test: &str) -> bool {
    let ok = Command::new("fio").arg("--version").output().is_ok();
    if !ok {
        skip(test, "fio is not installed");
    }
    ok
}

/// fio 3.33 on the job file `job` (run in `dir`): its output and its JSON document.
fn fio(dir: &Path, job: &Path) -> (Output, Value) {
    let o = Command::new("fio")
        .current_dir(dir)
        .args(["--output-format=json", job.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let v = serde_json::from_str(&text[text.find('{').expect("fio's JSON")..]).unwrap();
    (o, v)
}

/// iolab on the job file `job` (run in `dir`, `extra` flags added): its result and, when it ran,
/// its fio JSON.
fn iolab_fio_json(dir: &Path, job: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        job.to_str().unwrap(),
        "--no-save",
        "-q",
        "--output-format",
        "fio-json",
    ];
    args.extend_from_slice(extra);
    iolab_in(dir, &args)
}

/// iolab run in `dir` with a private store.
fn iolab_in(dir: &Path, args: &[&str]) -> Run {
    to_run(
        Command::new(bin())
            .current_dir(dir)
            .args(args)
            .env("IOLAB_DB", test_db())
            .output()
            .expect("run iolab"),
    )
}

fn write_job(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// (total_ios, io_bytes) of direction `d` of a fio JSON job.
fn dir_of(job: &Value, d: &str) -> (u64, u64) {
    (
        job[d]["total_ios"].as_u64().unwrap(),
        job[d]["io_bytes"].as_u64().unwrap(),
    )
}

fn job_named<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {v}"))
}

/// fio's own regression jobs t0023 (randtrimwrite) and t0024 (trimwrite), without their log
/// options (another part of issue 26) and the bsrange lines fio reads its own way: each job
/// trims its 1 MiB once and writes it once, each trim followed by a write of its size. fio
/// 3.33 counts per direction what iolab counts, exactly for one block size; with a range both
/// directions move 1 MiB in the same number of I/Os on each side (the sizes are drawn).
#[test]
fn trimwrite_and_randtrimwrite_count_as_fios_regression_jobs() {
    let test = "trimwrite t0023/t0024";
    if !have_fio(test) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for (t, rw) in [("t0023", "randtrimwrite"), ("t0024", "trimwrite")] {
        let src = std::fs::read_to_string(format!("/var/tmp/fiosrc/fio-3.33/t/jobs/{t}.fio"))
            .unwrap_or_else(|_| {
                // the jobs as fio 3.33 ships them, less the log options
                format!(
                    "[global]\nfilesize=1M\nioengine=null\nrw={rw}\nrandrepeat=0\n[basic]\n[bs]\nbs=8k,8k,8k\n[bsrange]\nbsrange=512-4k\n[basic_no_rm]\nnorandommap=1\n[bs_no_rm]\nbs=4k,4k,8k\nnorandommap=1\n"
                )
            });
        let text: String = src
            .lines()
            .filter(|l| !l.contains("log") && !l.contains("512/25"))
            .map(|l| format!("{l}\n"))
            .collect();
        let job = write_job(d.path(), &format!("{t}.fio"), &text);
        let (o, f) = fio(d.path(), &job);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = iolab_fio_json(d.path(), &job, &[]);
        assert_eq!(r.code, 0, "{t}: {}", r.stderr);
        let ours = r.json();
        let names: Vec<&str> = f["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["jobname"].as_str().unwrap())
            .collect();
        assert!(names.len() >= 4, "{t}: {names:?}");
        for name in names {
            let (fj, oj) = (job_named(&f, name), job_named(&ours, name));
            let (ft, fw) = (dir_of(fj, "trim"), dir_of(fj, "write"));
            let (ot, ow) = (dir_of(oj, "trim"), dir_of(oj, "write"));
            assert_eq!(dir_of(oj, "read"), (0, 0), "{t} {name}");
            // each trim has its write, of its size
            assert_eq!(ft, fw, "{t} {name}: fio");
            assert_eq!(ot, ow, "{t} {name}: iolab");
            assert_eq!(ot.1, 1 << 20, "{t} {name}: iolab trims the file once");
            if !name.contains("bsrange") {
                assert_eq!(ot, ft, "{t} {name}: iolab against fio");
            }
        }
    }
}

/// rw=trim and randtrim on files: every block trimmed once (fio JSON's trim direction and
/// iolab's own `results.trim`), with a note in iolab's document that fio 3.33 fails these trims
/// (it issues BLKDISCARD on a regular file: ENOTTY, error 25), which fio itself confirms here.
#[test]
fn trims_of_files_are_counted_in_the_trim_direction_and_noted_against_fio() {
    let test = "trim on files";
    let d = tempfile::tempdir().unwrap();
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    for (rw, engine) in [
        ("trim", "psync"),
        ("randtrim", "psync"),
        ("randtrim", "io_uring"),
        ("trim", "libaio"),
    ] {
        let text = format!(
            "[t]\ndirectory={}\nfilesize=2M\nbs=16k\nrw={rw}\nioengine={engine}\niodepth=4\n",
            set.display()
        );
        let job = write_job(d.path(), "t.fio", &text);
        let r = iolab_fio_json(d.path(), &job, &[]);
        assert_eq!(r.code, 0, "{rw} {engine}: {}", r.stderr);
        let v = r.json();
        let j = &v["jobs"][0];
        assert_eq!(dir_of(j, "trim"), (128, 2 << 20), "{rw} {engine}");
        assert_eq!(dir_of(j, "write"), (0, 0), "{rw} {engine}");
        assert_eq!(j["job options"]["rw"], rw);
        // iolab's own document: results.trim, with the note among the warnings
        let own = iolab_in(
            d.path(),
            &["run", job.to_str().unwrap(), "--no-save", "-q", "--json"],
        );
        assert_eq!(own.code, 0, "{}", own.stderr);
        let o = own.json();
        let res = &o["results"];
        assert_eq!(res["trim"]["ops"], 128, "{o}");
        assert_eq!(res["trim"]["bytes"], 2 << 20);
        assert!(res["trim"]["lat_ns"]["p99"].as_f64().unwrap() > 0.0);
        assert_eq!(res["write"]["ops"], 0);
        assert!(
            o["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["message"].as_str().unwrap().contains("punches a hole")),
            "{o}"
        );
    }
    // a read job's document has no trim figure (documents of other modes are unchanged)
    let job = write_job(
        d.path(),
        "r.fio",
        &format!("[r]\ndirectory={}\nfilesize=1M\nrw=read\n", set.display()),
    );
    let own = iolab_in(
        d.path(),
        &["run", job.to_str().unwrap(), "--no-save", "-q", "--json"],
    );
    assert_eq!(own.code, 0, "{}", own.stderr);
    assert!(own.json()["results"].get("trim").is_none());
    if !have_fio(test) {
        return;
    }
    let fset = d.path().join("fio");
    std::fs::create_dir(&fset).unwrap();
    let job = write_job(
        d.path(),
        "f.fio",
        &format!("[t]\ndirectory={}\nfilesize=1M\nrw=trim\n", fset.display()),
    );
    let (_, f) = fio(d.path(), &job);
    assert_eq!(
        f["jobs"][0]["error"],
        libc::ENOTTY,
        "fio 3.33 fails a trim of a file"
    );
}

/// trimwrite on files: the pairs, and the file written whole again at the end (each trimmed
/// block rewritten), for a sync and a queue engine.
#[test]
fn trimwrite_on_files_rewrites_what_it_trimmed() {
    let d = tempfile::tempdir().unwrap();
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    for (rw, engine) in [("trimwrite", "psync"), ("randtrimwrite", "libaio")] {
        let text = format!(
            "[t]\ndirectory={}\nfilename=data\nfilesize=1M\nbs=4k\nrw={rw}\nioengine={engine}\niodepth=8\n",
            set.display()
        );
        let job = write_job(d.path(), "t.fio", &text);
        let r = iolab_fio_json(d.path(), &job, &["--keep"]);
        assert_eq!(r.code, 0, "{rw} {engine}: {}", r.stderr);
        let v = r.json();
        let j = &v["jobs"][0];
        assert_eq!(dir_of(j, "trim"), (256, 1 << 20), "{rw} {engine}");
        assert_eq!(dir_of(j, "write"), (256, 1 << 20), "{rw} {engine}");
    }
}

/// A loop device (root): fio's rw=trim discards every block (BLKDISCARD), which punches holes in
/// the loop's backing file; iolab's does the same, and only with --destructive. Compared on the
/// backing file's allocated blocks (st_blocks) after each run.
#[test]
fn trim_of_a_device_discards_as_fio_and_needs_destructive() {
    let test = "trim of a loop device";
    if !is_root() {
        return skip(test, "needs root (a loop device)");
    }
    if Command::new("losetup").arg("--version").output().is_err() {
        return skip(test, "losetup is not installed");
    }
    if !have_fio(test) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let fill = || {
        std::fs::write(&img, vec![0xA5u8; 8 << 20]).unwrap();
        std::fs::File::open(&img).unwrap().sync_all().unwrap();
        std::fs::metadata(&img).unwrap().blocks()
    };
    let full = fill();
    assert!(full >= 16384, "{full}");
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
    let job = write_job(
        d.path(),
        "t.fio",
        &format!("[t]\nfilename={dev}\nrw=trim\nbs=64k\n"),
    );
    let (o, f) = fio(d.path(), &job);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(dir_of(&f["jobs"][0], "trim"), (128, 8 << 20));
    let after_fio = std::fs::metadata(&img).unwrap().blocks();
    assert!(
        after_fio < full / 8,
        "fio discarded: {after_fio} of {full} blocks left"
    );

    // iolab: refused without --destructive, nothing discarded
    fill();
    let r = iolab_fio_json(d.path(), &job, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--destructive"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert_eq!(std::fs::metadata(&img).unwrap().blocks(), full);

    let r = iolab_fio_json(d.path(), &job, &["--destructive"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(dir_of(&v["jobs"][0], "trim"), dir_of(&f["jobs"][0], "trim"));
    let after_ours = std::fs::metadata(&img).unwrap().blocks();
    assert_eq!(
        after_ours, after_fio,
        "the same blocks left allocated as after fio's"
    );
}

/// ioengine=falloc (fio's examples/falloc.fio, size-bound): writes allocate, reads allocate
/// without growing, trims punch holes; fio and iolab issue the same operations per direction.
/// ioengine=ftruncate (examples/ftruncate.fio, size-bound): a write per block, each an
/// ftruncate to its offset; iolab puts the file back to its size at the end (fio leaves it at
/// the last offset, 1 MiB - 4 KiB here), so a kept set is whole again, and a read job is
/// refused (fio fails each read with EINVAL).
#[test]
fn falloc_and_ftruncate_issue_what_fio_issues() {
    let test = "falloc and ftruncate";
    if !have_fio(test) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    for (engine, rw, dir) in [
        ("falloc", "randwrite", "write"),
        ("falloc", "read", "read"),
        ("falloc", "randtrim", "trim"),
        ("ftruncate", "write", "write"),
        ("ftruncate", "randwrite", "write"),
    ] {
        let text = format!(
            "[j]\ndirectory={}\nfilename=data\nsize=1M\nbs=4k\nrw={rw}\nioengine={engine}\n",
            set.display()
        );
        let job = write_job(d.path(), "j.fio", &text);
        let (o, f) = fio(d.path(), &job);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let fio_size = std::fs::metadata(set.join("data")).unwrap().len();
        std::fs::remove_file(set.join("data")).unwrap();
        let fj = &f["jobs"][0];
        assert_eq!(fj["error"], 0, "{engine} {rw}: fio");
        let r = iolab_fio_json(d.path(), &job, &["--keep"]);
        assert_eq!(r.code, 0, "{engine} {rw}: {}", r.stderr);
        let v = r.json();
        let oj = &v["jobs"][0];
        assert_eq!(oj["error"], 0, "{engine} {rw}: iolab");
        for d in ["read", "write", "trim"] {
            assert_eq!(dir_of(oj, d), dir_of(fj, d), "{engine} {rw} {d}");
        }
        assert_eq!(dir_of(oj, dir).0, 256, "{engine} {rw}");
        let kept: Vec<_> = std::fs::read_dir(&set).unwrap().flatten().collect();
        assert_eq!(kept.len(), 1, "{engine} {rw}: {kept:?}");
        let ours = kept[0].metadata().unwrap();
        assert_eq!(
            ours.len(),
            1 << 20,
            "{engine} {rw}: the kept file has its size"
        );
        if engine == "ftruncate" && rw == "write" {
            assert_eq!(
                fio_size,
                (1 << 20) - 4096,
                "fio: the last truncation's offset"
            );
        } else if engine == "ftruncate" {
            assert!(
                fio_size < 1 << 20,
                "fio: a random truncation's offset: {fio_size}"
            );
        } else {
            assert_eq!(fio_size, 1 << 20, "{engine} {rw}: fio");
        }
        std::fs::remove_file(kept[0].path()).unwrap();
    }
    let job = write_job(
        d.path(),
        "r.fio",
        &format!(
            "[j]\ndirectory={}\nsize=1M\nrw=randread\nioengine=ftruncate\n",
            set.display()
        ),
    );
    let r = iolab_fio_json(d.path(), &job, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("ftruncate only writes"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

/// The trim modes from iolab's own flags (fio's names too): `--rw trimwrite` pairs its trims
/// and writes; `--verify` with a trim mode is a usage error (trims are not checked).
#[test]
fn trim_modes_run_from_flags_and_refuse_verify() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let base = ["run", "--dir", dir, "--size", "1M", "--no-save", "-q"];
    let r = iolab_in(
        d.path(),
        &[
            &base[..],
            &["--rw", "trimwrite", "--bs", "4k", "--ops", "256", "--json"],
        ]
        .concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["mode"], "seqtrimwr");
    assert_eq!(v["results"]["trim"]["ops"], 256);
    assert_eq!(v["results"]["write"]["ops"], 256);
    let r = iolab_in(
        d.path(),
        &[&base[..], &["--mode", "rndtrim", "--verify"]].concat(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--verify"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

/// ioengine=filecreate, filestat and filedelete (fio's examples/file*-ioengine.fio, smaller):
/// one operation per file (nrfiles per job, bytes nrfiles × filesize in the read direction, as
/// fio counts them), the jobs of a phase at once in the one directory. iolab's files are made
/// with O_EXCL beside what is there, which stays untouched, and none is left afterwards.
#[test]
fn file_engines_count_as_fio_and_touch_only_their_own_files() {
    let test = "file engines";
    if !have_fio(test) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    std::fs::write(set.join("someone-elses"), b"keep").unwrap();
    for engine in ["filecreate", "filestat", "filedelete"] {
        let text = format!(
            "[global]\ndirectory={}\nioengine={engine}\nfilesize=4k\nnrfiles=50\nopenfiles=1\n[t0]\n[t1]\n",
            set.display()
        );
        let job = write_job(d.path(), "f.fio", &text);
        let (o, f) = fio(d.path(), &job);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // fio's own files: out of the way before iolab runs
        for e in std::fs::read_dir(&set).unwrap().flatten() {
            if e.file_name() != "someone-elses" {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
        let r = iolab_fio_json(d.path(), &job, &[]);
        assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
        let v = r.json();
        for name in ["t0", "t1"] {
            let (fj, oj) = (job_named(&f, name), job_named(&v, name));
            assert_eq!(fj["error"], 0, "{engine} {name}: fio");
            assert_eq!(oj["error"], 0, "{engine} {name}: iolab");
            assert_eq!(dir_of(oj, "read"), dir_of(fj, "read"), "{engine} {name}");
            assert_eq!(dir_of(oj, "read"), (50, 50 * 4096), "{engine} {name}");
        }
        let left: Vec<_> = std::fs::read_dir(&set)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["someone-elses"], "{engine}: nothing of iolab's left");
        assert_eq!(std::fs::read(set.join("someone-elses")).unwrap(), b"keep");
    }
    // one file per operation: --ops is needed, and a directory
    let r = iolab_in(
        d.path(),
        &[
            "run",
            "--dir",
            set.to_str().unwrap(),
            "--engine",
            "filecreate",
            "--time",
            "1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--ops"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}
