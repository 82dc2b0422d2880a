//! Issue 26, fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`, ...): the
//! same job file run by fio 3.33 and by `iolab run JOBFILE`, each in a folder of its own, and
//! the logs compared (names, columns, lines per direction, offsets, units); fio's own
//! regression checks of t0019-t0022 (t/run-fio-tests.py) on iolab's logs; fio's tools reading
//! them.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIO_SRC: &str = "/var/tmp/fiosrc/fio-3.33";

fn have_fio(test: &str) -> bool {
    let ok = Command::new("fio").arg("--version").output().is_ok();
    if !ok {
        skip(test, "fio is not installed");
    }
    ok
}

/// Runs `text` with fio in `dir/fio` (its cwd: the logs land there).
fn fio_in(dir: &Path, text: &str) -> PathBuf {
    let work = dir.join("fio");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("job.fio"), text).unwrap();
    let o = Command::new("fio")
        .current_dir(&work)
        .args(["--output=/dev/null", "job.fio"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    work
}

/// Runs `text` with iolab in `dir/iolab` (its cwd), its file set in `dir/iolab/data`.
fn iolab_in(dir: &Path, text: &str) -> (PathBuf, Run) {
    let work = dir.join("iolab");
    std::fs::create_dir_all(work.join("data")).unwrap();
    std::fs::write(work.join("job.fio"), text).unwrap();
    let r = to_run(
        Command::new(bin())
            .current_dir(&work)
            .args(["run", "job.fio", "--dir", "data", "--no-save", "-q"])
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap(),
    );
    (work, r)
}

/// The log files of a folder: name -> lines, each split on ", ".
fn logs(dir: &Path) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let n = e.file_name().to_string_lossy().to_string();
        if n.ends_with(".log") {
            let t = std::fs::read_to_string(e.path()).unwrap();
            m.insert(
                n,
                t.lines()
                    .map(|l| l.split(", ").map(str::to_string).collect())
                    .collect(),
            );
        }
    }
    m
}

fn col(lines: &[Vec<String>], i: usize) -> Vec<u64> {
    lines.iter().map(|l| l[i].parse::<u64>().unwrap()).collect()
}

/// Lines per direction (0 read, 1 write).
fn per_dir(lines: &[Vec<String>]) -> [usize; 2] {
    per_dir_in(lines, 2)
}

/// Lines per direction, the direction in column `c`.
fn per_dir_in(lines: &[Vec<String>], c: usize) -> [usize; 2] {
    let mut n = [0; 2];
    for d in col(lines, c) {
        n[d as usize] += 1;
    }
    n
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// t/run-fio-tests.py's FioJobTest_t0019: every offset read in order, 4096 apart, the last 255
/// blocks in (None: passed).
fn check_t0019(text: &str) -> Option<String> {
    let mut prev: i64 = -4096;
    let mut cur = 0i64;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        cur = l.split(',').nth(4)?.trim().parse().ok()?;
        if cur - prev != 4096 {
            return Some(format!("offsets {prev}, {cur} not sequential"));
        }
        prev = cur;
    }
    (cur / 4096 != 255).then(|| format!("unexpected last offset {cur}"))
}

/// The offsets of a bw log (column 5) and how many follow their predecessor by `bs`, counted
/// as run-fio-tests.py counts them (the last line's offset is never added to the set).
fn seq_and_offsets(text: &str, bs: i64) -> (u32, std::collections::BTreeSet<i64>) {
    let lines: Vec<&str> = text.split('\n').collect();
    let off = |l: &str| l.split(',').nth(4).unwrap().trim().parse::<i64>().unwrap();
    let mut prev = off(lines[0]);
    let (mut seq, mut offsets) = (0, std::collections::BTreeSet::new());
    for l in &lines[1..] {
        offsets.insert(prev / bs);
        if l.trim().is_empty() {
            continue;
        }
        let cur = off(l);
        if cur - prev == bs {
            seq += 1;
        }
        prev = cur;
    }
    (seq, offsets)
}

/// FioJobTest_t0020 (t0020, t0021): not sequential, every one of the 256 offsets touched.
fn check_t0020(text: &str) -> Option<String> {
    let (seq, offsets) = seq_and_offsets(text, 4096);
    let mut why = String::new();
    if seq > 10 {
        why += &format!("too many ({seq}) consecutive offsets");
    }
    if offsets.len() != 256 {
        why += &format!(" number of offsets is {} instead of 256", offsets.len());
    }
    (!why.is_empty()).then_some(why)
}

/// FioJobTest_t0022: norandommap touches some offset twice (not every one of the 256).
fn check_t0022(text: &str) -> Option<String> {
    let (seq, offsets) = seq_and_offsets(text, 4096);
    let mut why = String::new();
    if seq > 10 {
        why += &format!("too many ({seq}) consecutive offsets");
    }
    if offsets.len() == 256 {
        why += " no duplicate offsets found with norandommap=1";
    }
    (!why.is_empty()).then_some(why)
}

/// fio's regression jobs t0019-t0022 judge the offsets of a bw log: iolab's logs reach fio's
/// verdicts (passed), checked as t/run-fio-tests.py checks them; fio is run beside to show
/// that these checks pass with fio too.
#[test]
fn fio_regression_jobs_t0019_to_t0022_pass_fios_checks_on_iolabs_logs() {
    if !Path::new(FIO_SRC).exists() {
        skip(
            "t0019_t0022",
            "fio's source is not unpacked at /var/tmp/fiosrc",
        );
        return;
    }
    type Check = fn(&str) -> Option<String>;
    let checks: [(&str, Check); 4] = [
        ("t0019", check_t0019),
        ("t0020", check_t0020),
        ("t0021", check_t0020),
        ("t0022", check_t0022),
    ];
    for (t, check) in checks {
        let text = std::fs::read_to_string(format!("{FIO_SRC}/t/jobs/{t}.fio")).unwrap();
        let d = tempfile::tempdir().unwrap();
        let (work, r) = iolab_in(d.path(), &text);
        assert_eq!(r.code, 0, "{t}: {}", r.stderr);
        let log = std::fs::read_to_string(work.join("test_bw.log")).unwrap();
        assert_eq!(log.lines().count(), 256, "{t}");
        // t0020: fio's check allows 10 consecutive pairs; drawing a block and taking the next
        // free one when it is done has a median of 9 over 256 blocks: iolab passes because its
        // offsets are fio's own (fio's generator, fio's seed), 5 such pairs as fio's
        assert_eq!(check(&log), None, "{t}: iolab's log fails fio's check");
        // the check can fail: a sequential log fails t0020's, a permutation fails t0022's
        let seq = std::fs::read_to_string(d.path().join("iolab/test_bw.log")).unwrap();
        if t == "t0019" {
            assert!(check_t0020(&seq).is_some());
        } else if t != "t0022" {
            assert!(check_t0022(&log).is_some(), "{t}: every offset once");
        }
        if have_fio(t) {
            let w = fio_in(d.path(), &text);
            let f = std::fs::read_to_string(w.join("test_bw.log")).unwrap();
            assert_eq!(check(&f), None, "{t}: fio's own log fails its check");
            // the offsets themselves, in order, where both draw with fio's tausworthe (t0020
            // with the random map, t0022 without; t0019 is sequential, t0021's lfsr is a
            // permutation of iolab's own)
            if t == "t0020" || t == "t0022" {
                let offs = |l: &str| -> Vec<String> {
                    l.lines()
                        .map(|x| x.split(',').nth(4).unwrap_or("").trim().to_string())
                        .collect()
                };
                assert_eq!(offs(&log), offs(&f), "{t}: iolab's offsets are not fio's");
            }
        }
    }
}

/// A size-bound job of two clones with every log and offsets, beside a sequential libaio
/// job: the same file names, columns, lines per direction (within noise for the random mix),
/// the sequential job's offsets exactly, and values of the same magnitude.
#[test]
fn per_io_logs_match_fios_names_columns_counts_offsets_and_units() {
    if !have_fio("per_io_logs") {
        return;
    }
    let job = "[global]\nfilesize=2M\nwrite_lat_log=lt\nwrite_bw_log=bw\nwrite_iops_log=io\nlog_offset=1\n\
               [mix]\nioengine=psync\nrw=randrw\nnumjobs=2\n\
               [seq]\nioengine=libaio\niodepth=4\nrw=write\nbs=8k\n";
    let d = tempfile::tempdir().unwrap();
    let fw = fio_in(d.path(), job);
    let (iw, r) = iolab_in(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (f, i) = (logs(&fw), logs(&iw));
    let names: Vec<&String> = f.keys().collect();
    assert_eq!(names, i.keys().collect::<Vec<_>>());
    assert_eq!(names.len(), 15, "{names:?}"); // 5 kinds x 3 threads
    for (n, fl) in &f {
        let il = &i[n];
        assert_eq!(fl.len(), il.len(), "{n}: lines");
        for l in fl.iter().chain(il) {
            assert_eq!(l.len(), 6, "{n}: {l:?}");
            assert_eq!(l[5], "0", "{n}: priority");
        }
        if fl.is_empty() {
            // a sync engine's submission log: empty in both
            assert!(n.starts_with("lt_slat"), "{n}");
            continue;
        }
        let (fd, id) = (per_dir(fl), per_dir(il));
        for k in 0..2 {
            let (a, b) = (fd[k] as f64, id[k] as f64);
            assert!(
                (a - b).abs() <= 0.15 * a.max(b) + 8.0,
                "{n}: per direction {fd:?} {id:?}"
            );
        }
        // block sizes as the job's
        assert_eq!(
            col(fl, 3),
            col(il, 3).iter().map(|_| col(fl, 3)[0]).collect::<Vec<_>>()
        );
        // the same offsets in the same order: the sequential job's, and the random mix's of
        // each clone, drawn by fio's generator with fio's seeds (its thread numbers 1 and 2),
        // in the same directions (fio's mix decisions from its own seed too)
        assert_eq!(col(fl, 4), col(il, 4), "{n}: offsets");
        assert_eq!(col(fl, 2), col(il, 2), "{n}: directions");
        // units by magnitude: IOPS 1 each; latency ns and bandwidth KiB/s within 1000x of fio
        let (mf, mi) = (median(col(fl, 1)), median(col(il, 1)));
        if n.starts_with("io_") {
            assert!(mf == 1 && mi == 1, "{n}");
        } else {
            let ratio = mi.max(1) as f64 / mf.max(1) as f64;
            assert!(
                (1e-3..1e3).contains(&ratio),
                "{n}: median {mi} vs fio's {mf}"
            );
        }
    }
}

/// log_avg_msec: one line per window and direction, block size and offset 0; as many lines
/// as fio's within noise.
#[test]
fn windowed_logs_have_fios_lines_per_window_and_direction() {
    if !have_fio("windowed_logs") {
        return;
    }
    let job = "[j]\nioengine=null\nsize=1g\nrw=randrw\ntime_based\nruntime=1\nlog_avg_msec=200\nwrite_lat_log=w\nwrite_iops_log=w\nwrite_bw_log=w\n";
    let d = tempfile::tempdir().unwrap();
    let fw = fio_in(d.path(), job);
    let (iw, r) = iolab_in(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (f, i) = (logs(&fw), logs(&iw));
    assert_eq!(f.keys().collect::<Vec<_>>(), i.keys().collect::<Vec<_>>());
    for (n, fl) in &f {
        let il = &i[n];
        if n.starts_with("w_slat") {
            assert!(il.is_empty() && fl.is_empty(), "{n}");
            continue;
        }
        // 1 s in 200 ms windows: about 5 per direction (fio's helper may miss one)
        let (fd, id) = (per_dir(fl), per_dir(il));
        for k in 0..2 {
            assert!(fd[k].abs_diff(id[k]) <= 2, "{n}: {fd:?} vs {id:?}");
            assert!((3..=6).contains(&id[k]), "{n}: {id:?}");
        }
        for l in il {
            assert_eq!(l.len(), 5, "{n}: {l:?}");
            assert_eq!(l[3], "0", "{n}: block size");
        }
        let times = col(il, 0);
        if n.starts_with("w_iops") || n.starts_with("w_bw") {
            assert!(times.iter().all(|t| t % 200 == 0), "{n}: {times:?}");
        }
        let ratio = median(col(il, 1)).max(1) as f64 / median(col(fl, 1)).max(1) as f64;
        assert!((1e-3..1e3).contains(&ratio), "{n}");
    }
}

/// fio's tools read iolab's logs as they read fio's: fio2gnuplot takes both (every line a
/// value); tools/fiologparser.py of fio 3.33 gives both the same verdict (it expects the four
/// columns of older fio and refuses fio 3.33's own logs).
#[test]
fn fios_tools_read_iolabs_logs_as_fios() {
    if !have_fio("fio_tools") {
        return;
    }
    // paced, so that the lines are spread over time (fio2gnuplot fails on a log whose times
    // are all 0)
    let job = "[j]\nioengine=null\nsize=128k\nrate_iops=400\nwrite_bw_log=t\nwrite_iops_log=t\n";
    let d = tempfile::tempdir().unwrap();
    let fw = fio_in(d.path(), job);
    let (iw, r) = iolab_in(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    if Path::new("/usr/bin/fio2gnuplot").exists() {
        let mut counts = Vec::new();
        for (w, who) in [(&fw, "fio"), (&iw, "iolab")] {
            let out = w.join("gp");
            std::fs::create_dir_all(&out).unwrap();
            let o = Command::new("/usr/bin/fio2gnuplot")
                .current_dir(w)
                .args(["-p", "t_bw.1.log", "-d", "gp"])
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{who}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let g = std::fs::read_to_string(out.join("t_bw.1.global")).unwrap();
            let n: u64 = g
                .lines()
                .find_map(|l| l.strip_prefix("values_count="))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            counts.push(n);
            assert!(n >= 24, "{who}: {g}");
        }
        // fio2gnuplot's per-second values of 32 lines over ~80 ms: the same count for both
        assert!(counts[0].abs_diff(counts[1]) <= 2, "{counts:?}");
    } else {
        skip("fio2gnuplot", "/usr/bin/fio2gnuplot is not installed");
    }
    let parser = format!("{FIO_SRC}/tools/fiologparser.py");
    if Path::new(&parser).exists() {
        let verdict = |w: &Path| {
            let o = Command::new("python3")
                .current_dir(w)
                .args([parser.as_str(), "-s", "t_iops.1.log"])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            (o.status.code(), err.lines().last().map(str::to_string))
        };
        assert_eq!(verdict(&fw), verdict(&iw));
    } else {
        skip(
            "fiologparser",
            "fio's source is not unpacked at /var/tmp/fiosrc",
        );
    }
}

/// A log name that is a symbolic link is refused before anything runs (exit 2, one line by
/// file:line) and what it points to is left as it was; a log beside it is written whole.
#[test]
fn a_log_name_that_is_a_symlink_is_refused_and_nothing_is_written_through_it() {
    let d = tempfile::tempdir().unwrap();
    let work = d.path().join("iolab");
    std::fs::create_dir_all(&work).unwrap();
    let precious = d.path().join("precious");
    std::fs::write(&precious, "keep").unwrap();
    std::os::unix::fs::symlink(&precious, work.join("x_bw.log")).unwrap();
    let (_, r) = iolab_in(
        d.path(),
        "[j]\nioengine=null\nsize=64k\nwrite_bw_log=x\nper_job_logs=0\n",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("job.fio:1: fio log x_bw.log: exists and is not a regular file"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
    // without the link: written, no temporary file left beside it
    std::fs::remove_file(work.join("x_bw.log")).unwrap();
    let (_, r) = iolab_in(
        d.path(),
        "[j]\nioengine=null\nsize=64k\nwrite_bw_log=x\nper_job_logs=0\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(logs(&work)["x_bw.log"].len(), 16);
    let stray: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

/// per_job_logs=0: the jobs of a run that share a name write one file, each job's lines after
/// the one before (fio appends), and a file left by an earlier run is replaced, not appended.
#[test]
fn jobs_sharing_a_log_name_write_one_file_in_job_order() {
    let job = "[global]\nioengine=null\nwrite_bw_log=s\nper_job_logs=0\nlog_offset=1\n\
               [a]\nsize=16k\n[b]\nstonewall\nsize=32k\n";
    let d = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let (w, r) = iolab_in(d.path(), job);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let l = &logs(&w)["s_bw.log"];
        assert_eq!(
            col(l, 4),
            [
                0, 4096, 8192, 12288, 0, 4096, 8192, 12288, 16384, 20480, 24576, 28672
            ]
        );
    }
}

/// write_hist_log with log_hist_msec and log_hist_coarseness: fio's columns (time, direction,
/// block size, then 1856 / 2^coarseness bins), about as many lines per direction as fio, each
/// counting its interval's completions, and the slowest bins empty for a null engine.
#[test]
fn histogram_logs_have_fios_columns_and_lines() {
    if !have_fio("hist_logs") {
        return;
    }
    let job = "[j]\nioengine=null\nsize=1g\nrw=randrw\ntime_based\nruntime=1\nwrite_hist_log=h\nlog_hist_msec=100\nlog_hist_coarseness=2\n";
    let d = tempfile::tempdir().unwrap();
    let fw = fio_in(d.path(), job);
    let (iw, r) = iolab_in(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (f, i) = (logs(&fw), logs(&iw));
    assert_eq!(f.keys().collect::<Vec<_>>(), ["h_clat_hist.1.log"]);
    assert_eq!(i.keys().collect::<Vec<_>>(), ["h_clat_hist.1.log"]);
    let (fl, il) = (&f["h_clat_hist.1.log"], &i["h_clat_hist.1.log"]);
    let (fd, id) = (per_dir_in(fl, 1), per_dir_in(il, 1));
    for k in 0..2 {
        assert!(fd[k].abs_diff(id[k]) <= 2, "{fd:?} vs {id:?}");
        assert!((7..=10).contains(&id[k]), "{id:?}");
    }
    for l in il {
        assert_eq!(l.len(), 3 + 1856 / 4, "columns");
        assert_eq!(l[2], "4096");
        let counts: Vec<u64> = l[3..].iter().map(|c| c.parse().unwrap()).collect();
        assert!(counts.iter().sum::<u64>() > 0);
        // nothing near fio's last bins (seconds) for a null engine
        assert!(counts[400..].iter().all(|c| *c == 0), "{l:?}");
    }
}

/// log_unix_epoch: the times are Unix ms, as fio's, between the test's clock before and after.
#[test]
fn log_unix_epoch_gives_unix_times_as_fio() {
    if !have_fio("unix_epoch") {
        return;
    }
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let job = "[j]\nioengine=null\nsize=64k\nwrite_iops_log=u\nlog_unix_epoch=1\n";
    let d = tempfile::tempdir().unwrap();
    let before = now();
    let fw = fio_in(d.path(), job);
    let (iw, r) = iolab_in(d.path(), job);
    let after = now();
    assert_eq!(r.code, 0, "{}", r.stderr);
    for w in [&fw, &iw] {
        let l = &logs(w)["u_iops.1.log"];
        assert_eq!(l.len(), 16);
        assert!(
            col(l, 0).iter().all(|t| (before..=after).contains(t)),
            "{l:?}"
        );
    }
    // a clock the system lacks is refused by file:line
    let (_, r) = iolab_in(
        d.path(),
        "[j]\nioengine=null\nsize=64k\nwrite_iops_log=u\nlog_alternate_epoch=1\nlog_alternate_epoch_clock_id=99\n",
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("job.fio:6: log_alternate_epoch_clock_id: not a clock"),
        "{}",
        r.stderr
    );
}

/// The result document names each job's log files (`jobfile.jobs[].log_files`).
#[test]
fn the_result_document_names_each_jobs_log_files() {
    let d = tempfile::tempdir().unwrap();
    let work = d.path().join("iolab");
    std::fs::create_dir_all(work.join("data")).unwrap();
    std::fs::write(
        work.join("job.fio"),
        "[global]\nioengine=null\nsize=64k\n[a]\nnumjobs=2\nwrite_iops_log=x\n[b]\n",
    )
    .unwrap();
    let r = to_run(
        Command::new(bin())
            .current_dir(&work)
            .args([
                "run",
                "job.fio",
                "--dir",
                "data",
                "--no-save",
                "-q",
                "--json",
            ])
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let jobs = &r.json()["jobfile"]["jobs"];
    assert_eq!(
        jobs[0]["log_files"],
        serde_json::json!(["x_iops.1.log", "x_iops.2.log"])
    );
    assert_eq!(jobs[1]["log_files"], serde_json::json!([]));
    assert_eq!(logs(&work).len(), 2);
}
