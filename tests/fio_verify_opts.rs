//! Issue 26, verify options, buffer contents and the options that change no I/O: the same job
//! files run by fio 3.33 and by `iolab run JOBFILE`, compared on fio's own checks (bytes read
//! and written, the verify verdict, the same corruption found; what the written data dedupes
//! and compresses to).

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

/// fio's run of `text` with `dir` as its working directory: its exit code and JSON document.
fn fio(dir: &Path, name: &str, text: &str) -> (i32, Value) {
    let job = dir.join(format!("{name}.fio"));
    std::fs::write(&job, text).unwrap();
    let o = Command::new("fio")
        .current_dir(dir)
        .args(["--output-format=json", job.to_str().unwrap()])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let v = out
        .find('{')
        .and_then(|i| serde_json::from_str(&out[i..]).ok())
        .unwrap_or(Value::Null);
    (o.status.code().unwrap_or(-1), v)
}

/// iolab's run of `text` with `dir` as its working directory (`filename=` names a file there):
/// its exit code, its own JSON document and stderr.
fn iolab(dir: &Path, name: &str, text: &str, extra: &[&str]) -> (i32, Value, String) {
    let job = dir.join(format!("{name}.fio"));
    std::fs::write(&job, text).unwrap();
    let r = to_run(
        Command::new(bin())
            .current_dir(dir)
            .args(["run", job.to_str().unwrap(), "--json", "--no-save", "-q"])
            .args(extra)
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap(),
    );
    let v = serde_json::from_str(&r.stdout).unwrap_or(Value::Null);
    (r.code, v, r.stderr)
}

/// (read bytes, written bytes) of fio's first job.
fn fio_bytes(v: &Value) -> (u64, u64) {
    let j = &v["jobs"][0];
    (
        j["read"]["io_bytes"].as_u64().unwrap(),
        j["write"]["io_bytes"].as_u64().unwrap(),
    )
}

/// (read bytes, written bytes, blocks checked, mismatching blocks) of iolab's document, every
/// measured pass together.
fn iolab_bytes(v: &Value) -> (u64, u64, u64, u64) {
    // several passes: `runs`; one: the document itself
    let one = [v.clone()];
    let runs = v["runs"].as_array().map_or(&one[..], |r| &r[..]);
    let sum = |f: &dyn Fn(&Value) -> u64| runs.iter().map(f).sum::<u64>();
    let bad = |r: &Value| {
        ["lost", "misdirected", "torn", "stale"]
            .iter()
            .map(|k| r["verify"][k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    (
        sum(&|r| r["results"]["read"]["bytes"].as_u64().unwrap()),
        sum(&|r| r["results"]["write"]["bytes"].as_u64().unwrap()),
        sum(&|r| r["verify"]["checked"].as_u64().unwrap_or(0)),
        sum(&bad),
    )
}

/// fio's pre/post pairs (t/jobs/t0002, t0003): a read job with `verify=` checks the blocks an
/// earlier job wrote with verify headers. fio reads them back and checks them; iolab checks the
/// blocks its own verify wrote. Before, iolab refused `verify` on a job that only reads.
#[test]
fn a_read_job_checks_what_an_earlier_job_of_the_run_wrote() {
    if !have_fio("a_read_job_checks_what_an_earlier_job_of_the_run_wrote") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nbs=4k\nsize=1m\nverify=md5\nfilename=vfile\n[w]\nrw=write\ndo_verify=0\n[r]\nstonewall\nrw=read\n";
    let (code, f) = fio(d.path(), "f", text);
    assert_eq!(code, 0, "{f}");
    let fr = &f["jobs"][1];
    assert_eq!(fr["read"]["io_bytes"], 1 << 20, "fio: the read job reads");
    assert_eq!(fr["error"], 0);
    std::fs::remove_file(d.path().join("vfile")).unwrap();
    let (code, v, err) = iolab(d.path(), "i", text, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(iolab_bytes(&v), (1 << 20, 1 << 20, 256, 0), "{err}");
    // the phases shared the set; the run removed it at its end
    assert!(!d.path().join("iolab-file.0").exists());
    // a read job whose blocks no iolab verify wrote checks nothing, and says so
    let (code, v, err) = iolab(
        d.path(),
        "r",
        "[r]\nrw=read\nbs=4k\nsize=1m\nverify=md5\nfilename=other\n",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(iolab_bytes(&v).2, 0);
    let warned = &v["warnings"];
    assert!(
        warned.to_string().contains("\"verify_nothing_written\""),
        "{warned}"
    );
}

/// t0003's shape (a write job with `verify=md5 do_verify=0`, then a job that reads and verifies
/// it), with one block damaged between the two runs: fio fails the verify (non-zero exit), iolab
/// finds the same block (exit 3, the damaged block's offset) and no other.
#[test]
fn the_same_damaged_block_is_found_by_fio_and_by_iolab() {
    if !have_fio("the_same_damaged_block_is_found_by_fio_and_by_iolab") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let pre = "[w]\nfilename=foo\nrw=write\nbs=4k\nsize=1m\nverify=md5\ndo_verify=0\n";
    let post = "[r]\nfilename=foo\nrw=read\nbs=4k\nsize=1m\nverify=md5\nverify_dump=1\n";
    let damage = |p: &Path| {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        // 100 bytes inside the 17th block (offset 64 KiB), past both tools' headers
        f.write_all_at(&[0x5a; 100], 65536 + 1000).unwrap();
    };
    let (code, _) = fio(d.path(), "pre", pre);
    assert_eq!(code, 0);
    let (code, f) = fio(d.path(), "post", post);
    assert_eq!(code, 0, "fio: the intact file verifies");
    assert_eq!(fio_bytes(&f).0, 1 << 20);
    damage(&d.path().join("foo"));
    let (code, f) = fio(d.path(), "post", post);
    assert_ne!(code, 0, "fio: the damaged block fails the verify: {f}");
    // fio's verify_dump: the damaged block's data, as read and as expected
    let dumped: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".received"))
        .collect();
    assert_eq!(dumped, ["foo.65536.received"], "fio's dump");

    let (code, v, err) = iolab(d.path(), "pre", pre, &["--keep"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(iolab_bytes(&v), (0, 1 << 20, 0, 0));
    let (code, v, err) = iolab(d.path(), "post", post, &["--keep"]);
    assert_eq!(code, 0, "iolab: the intact set verifies: {err}");
    assert_eq!(iolab_bytes(&v), (1 << 20, 0, 256, 0));
    damage(&d.path().join("iolab-file.0"));
    let (code, v, err) = iolab(d.path(), "post", post, &[]);
    assert_eq!(code, 3, "iolab: the damaged block fails the verify: {err}");
    assert_eq!(iolab_bytes(&v), (1 << 20, 0, 256, 1));
    let m = &v["verify"]["mismatches"][0];
    assert_eq!(m["offset_bytes"], 65536, "{m}");
    assert_eq!(m["kind"], "torn", "{m}");
    assert!(
        v["jobfile"]["jobs"][0]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("verify_dump=1: ")),
        "{}",
        v["jobfile"]
    );
}

/// t0003 itself: a file written with verify headers in blocks of one size, then read and
/// verified in blocks of another (and over less of it than was written). fio uses the longer
/// file it finds and fails the verify (each block's header is not where, or not as long as, the
/// reader expects); iolab uses its kept set, longer than the job needs, as it is, and fails each
/// block read where the verify wrote (exit 3). Read in the blocks it was written in, the same
/// first half verifies, in both.
#[test]
fn blocks_read_in_other_sizes_than_verify_wrote_them_fail_as_fios() {
    if !have_fio("blocks_read_in_other_sizes_than_verify_wrote_them_fail_as_fios") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let pre = "[w]\nfilename=foo\nrw=write\nbs=64k\nsize=2m\nverify=md5\ndo_verify=0\n";
    let post = |bs: &str| {
        format!("[r]\nfilename=foo\nrw=read\nbs={bs}\nsize=1m\nverify=md5\nverify_fatal=1\n")
    };
    let (code, _) = fio(d.path(), "pre", pre);
    assert_eq!(code, 0);
    let (code, f) = fio(d.path(), "post", &post("64k"));
    assert_eq!(
        code, 0,
        "fio: read in its own blocks, the first MiB verifies: {f}"
    );
    let (code, f) = fio(d.path(), "post", &post("4k"));
    assert_ne!(
        code, 0,
        "fio: 4 KiB reads of 64 KiB verify blocks fail: {f}"
    );

    let (code, _, err) = iolab(d.path(), "pre", pre, &["--keep"]);
    assert_eq!(code, 0, "{err}");
    let file = d.path().join("iolab-file.0");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 2 << 20);
    let (code, v, err) = iolab(d.path(), "post", &post("64k"), &[]);
    assert_eq!(
        code, 0,
        "iolab: the longer set is used as it is and verifies: {err}"
    );
    assert_eq!(iolab_bytes(&v), (1 << 20, 0, 16, 0));
    let (code, v, err) = iolab(d.path(), "post", &post("4k"), &[]);
    assert_eq!(
        code, 3,
        "iolab: 4 KiB reads of 64 KiB verify blocks fail: {err}"
    );
    assert_eq!(iolab_bytes(&v), (1 << 20, 0, 256, 256));
    // no 4 KiB block holds a header of its own (the 64 KiB blocks' headers are of 64 KiB)
    assert_eq!(v["verify"]["stale"], 256);
    assert_eq!(v["verify"]["mismatches"][0]["offset_bytes"], 0);
    // the set was there before: used, not rewritten, not removed, its verify state kept
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 2 << 20);
    let (code, _, err) = iolab(d.path(), "post", &post("64k"), &[]);
    assert_eq!(
        code, 0,
        "the state of the 64 KiB blocks is still there: {err}"
    );
}

/// `verify_only=1`: fio does not write; it reads back and checks what the previous invocation of
/// the job wrote (its JSON still counts the writes it skipped). iolab reads the set a kept run
/// wrote: the same reads, every block checked, no write.
#[test]
fn verify_only_reads_back_what_the_previous_run_wrote_without_writing() {
    if !have_fio("verify_only_reads_back_what_the_previous_run_wrote_without_writing") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let job = "[v]\nfilename=vo\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n";
    let only = format!("{job}verify_only=1\n");
    let (code, _) = fio(d.path(), "w", job);
    assert_eq!(code, 0);
    let (code, f) = fio(d.path(), "o", &only);
    assert_eq!(code, 0, "{f}");
    assert_eq!(fio_bytes(&f).0, 1 << 20);
    let (code, _, err) = iolab(d.path(), "w", job, &["--keep"]);
    assert_eq!(code, 0, "{err}");
    let (code, v, err) = iolab(d.path(), "o", &only, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(iolab_bytes(&v), (1 << 20, 0, 256, 0));
}

/// t0025 (run-fio-tests.py: "experimental verify read backs written data pattern"): fio reads
/// back 128 KiB. Before, iolab refused experimental_verify.
#[test]
fn experimental_verify_reads_back_what_was_written_as_t0025() {
    if !have_fio("experimental_verify_reads_back_what_was_written_as_t0025") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // t/jobs/t0025.fio
    let text = "[job]\nfilename=t0025file\nsize=128k\nreadwrite=write\ndo_verify=1\nverify=md5\nexperimental_verify=1\n";
    let (code, f) = fio(d.path(), "t", text);
    assert_eq!(code, 0);
    assert_eq!(f["jobs"][0]["read"]["io_kbytes"], 128);
    let (code, v, err) = iolab(d.path(), "t", text, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(iolab_bytes(&v), (128 << 10, 128 << 10, 32, 0));
}

/// t0006's shape (randrw, verify=meta, verify_backlog, verify_fatal, verify_pattern), smaller:
/// run-fio-tests.py checks that the job reads twice what it writes (its own reads and every
/// write read back: `size` bytes of reads, about half of it written; at 8 MiB the mix's draw
/// moves the ratio by a few percent, at t0006's 4 GiB by less than 1 %). Before, iolab refused
/// verify_pattern.
#[test]
fn a_mixed_verify_pattern_job_reads_twice_what_it_writes_as_t0006() {
    if !have_fio("a_mixed_verify_pattern_job_reads_twice_what_it_writes_as_t0006") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nrw=randrw\nbs=4k\nioengine=libaio\niodepth=8\nverify=meta\nverify_backlog=64\nverify_fatal=1\n[ver-test]\nfilename=foo\nsize=8m\nverify_pattern=0xaaa\n";
    let (code, f) = fio(d.path(), "t", text);
    assert_eq!(code, 0);
    let (r, w) = fio_bytes(&f);
    let ratio = r as f64 / w as f64;
    assert_eq!(r, 8 << 20, "fio");
    assert!((1.8..=2.2).contains(&ratio), "fio: {r} / {w}");
    let (code, v, err) = iolab(d.path(), "t", text, &[]);
    assert_eq!(code, 0, "{err}");
    let (r, w, checked, bad) = iolab_bytes(&v);
    let ratio = r as f64 / w as f64;
    assert_eq!(r, 8 << 20, "iolab");
    assert!((1.8..=2.2).contains(&ratio), "iolab: {r} / {w}");
    assert_eq!(bad, 0);
    assert!(checked >= w / 4096, "{checked} blocks checked");
}

/// The written data as fio-dedupe and gzip see it: fio's default (scrambled: no two blocks
/// alike), `dedupe_percentage` + `buffer_compress_percentage`, `dedupe_mode=working_set`,
/// `zero_buffers`, `buffer_pattern`. Before, iolab wrote the same bytes in every block (fio-dedupe:
/// 0 unique of 2048) and refused the options.
#[test]
fn written_data_dedupes_and_compresses_as_fios() {
    if !have_fio("written_data_dedupes_and_compresses_as_fios") {
        return;
    }
    if Command::new("fio-dedupe").arg("-h").output().is_err()
        || Command::new("gzip").arg("-h").output().is_err()
    {
        return skip(
            "written_data_dedupes_and_compresses_as_fios",
            "fio-dedupe or gzip is not installed",
        );
    }
    let unique = |p: &Path| -> u64 {
        let o = Command::new("fio-dedupe")
            .arg(p)
            .args(["-b", "4096"])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let at = out.find("Unique extents=").expect("fio-dedupe's summary") + 15;
        out[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let gzipped = |p: &Path| -> u64 {
        let o = Command::new("gzip").arg("-c").arg(p).output().unwrap();
        o.stdout.len() as u64
    };
    let d = tempfile::tempdir().unwrap();
    for opts in [
        "",
        "dedupe_percentage=50\nbuffer_compress_percentage=50\n",
        "dedupe_mode=working_set\ndedupe_percentage=50\ndedupe_working_set_percentage=20\n",
        "zero_buffers=1\n",
        "buffer_pattern=0xdeadbeef\nscramble_buffers=0\n",
        "refill_buffers=1\n",
    ] {
        let text = format!("[j]\nfilename=data\nrw=write\nbs=4k\nsize=8m\n{opts}");
        let (code, _) = fio(d.path(), "f", &text);
        assert_eq!(code, 0, "{opts}");
        let fio_file = d.path().join("data");
        let (fu, fz) = (unique(&fio_file), gzipped(&fio_file));
        std::fs::remove_file(&fio_file).unwrap();
        let (code, _, err) = iolab(d.path(), "i", &text, &["--keep"]);
        assert_eq!(code, 0, "{opts}: {err}");
        let ours = d.path().join("iolab-file.0");
        let (iu, iz) = (unique(&ours), gzipped(&ours));
        std::fs::remove_file(&ours).unwrap();
        let _ = std::fs::remove_file(d.path().join(".iolab-verify"));
        // unique blocks within 3 % of the 2048 (or both none), compressed sizes within 10 %
        assert!(
            fu.abs_diff(iu) <= 64,
            "{opts}: unique 4 KiB blocks: fio {fu}, iolab {iu}"
        );
        assert!(
            fz.abs_diff(iz) as f64 <= 0.1 * fz.max(iz) as f64 + 4096.0,
            "{opts}: gzip: fio {fz} bytes, iolab {iz}"
        );
    }
}

/// Options that change how fio times, places or prioritises a job run with a note each, and
/// the job moves fio's bytes (before: gtod_reduce, cpus_allowed, prio, ... were refused).
#[test]
fn options_that_change_no_io_run_with_a_note_and_move_fios_bytes() {
    if !have_fio("options_that_change_no_io_run_with_a_note_and_move_fios_bytes") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nthreads=4\n[j]\nfilename=nio\nrw=randwrite\nbs=4k\nsize=2m\ngtod_reduce=1\ndisable_slat=1\ncpus_allowed=0\ncpus_allowed_policy=split\nprio=4\nprioclass=2\nclat_percentiles=0\npercentile_list=50:99\ncontinue_on_error=write\n";
    let (code, f) = fio(d.path(), "f", text);
    assert_eq!(code, 0, "{f}");
    let (code, v, err) = iolab(d.path(), "i", text, &[]);
    assert_eq!(code, 0, "{err}");
    let (r, w, _, _) = iolab_bytes(&v);
    assert_eq!((r, w), fio_bytes(&f));
    let notes: Vec<&str> = v["jobfile"]["jobs"][0]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for k in [
        "gtod_reduce=1: ",
        "disable_slat=1: ",
        "clat_percentiles=0: ",
        "percentile_list=50:99: ",
        "continue_on_error=write: ",
    ] {
        assert!(notes.iter().any(|n| n.starts_with(k)), "{k} {notes:?}");
    }
    assert!(!notes.iter().any(|n| n.starts_with("threads")), "{notes:?}");
    let args = v["jobfile"]["jobs"][0]["iolab_args"].to_string();
    assert!(args.contains("\"--cpus=0:split\""), "{args}");
    assert!(args.contains("\"--ioprio=be:4\""), "{args}");
}

/// `cpus_allowed=0-1` with `cpus_allowed_policy=split` and two clones: each worker thread runs
/// on one CPU of its own, as fio pins each job (read from /proc while the job runs); `prio=5`: each
/// thread's I/O priority best-effort 5 (`ionice -p TID`, fio's default class). Before, both
/// were refused.
#[test]
fn cpus_allowed_split_and_prio_place_each_thread() {
    let name = "cpus_allowed_split_and_prio_place_each_thread";
    let mut own = vec![0u32; 0];
    if let Ok(t) = std::fs::read_to_string("/proc/self/status") {
        // the CPUs this test may use: 0 and 1 must both be among them
        let l = t.lines().find(|l| l.starts_with("Cpus_allowed_list:"));
        if l.is_some_and(|l| l.contains("0-") || l.contains("0,1")) {
            own = vec![0, 1];
        }
    }
    if own.is_empty() {
        return skip(name, "CPUs 0 and 1 are not both available");
    }
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("p.fio");
    std::fs::write(
        &job,
        "[p]\nioengine=null\nrw=read\nbs=4k\nsize=1m\ntime_based\nruntime=3\nnumjobs=2\ncpus_allowed=0-1\ncpus_allowed_policy=split\nprio=5\n",
    )
    .unwrap();
    let mut child = Command::new(bin())
        .current_dir(d.path())
        .args(["run", job.to_str().unwrap(), "--no-save", "-q"])
        .env("IOLAB_DB", test_db())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tasks = format!("/proc/{}/task", child.id());
    // a worker is named from its start and places itself just after: read until both show
    // what they settled on (each read replaces the last), for at most the run's 3 s
    let want = [
        (
            "iolab-w0".to_string(),
            ("0".to_string(), "best-effort: prio 5".to_string()),
        ),
        (
            "iolab-w1".to_string(),
            ("1".to_string(), "best-effort: prio 5".to_string()),
        ),
    ];
    let mut seen = std::collections::BTreeMap::new();
    let t0 = std::time::Instant::now();
    while seen.clone().into_iter().collect::<Vec<_>>() != want
        && t0.elapsed() < std::time::Duration::from_secs(3)
    {
        for e in std::fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|c| c.trim().to_string());
            if let (w @ ("iolab-w0" | "iolab-w1"), Some(c)) = (comm.trim(), cpus) {
                let tid = e.file_name().to_string_lossy().into_owned();
                let prio = Command::new("ionice")
                    .args(["-p", &tid])
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                    .unwrap_or_default();
                seen.insert(w.to_string(), (c, prio));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), want);
}

/// fio's own files that only these options kept from running now translate
/// (`iolab run FILE --parse-only`, exit 0): examples/null.fio (gtod_reduce), numa.fio,
/// t0006 (verify_pattern), t0025/t0026 (experimental_verify), steadystate's and waitfor's
/// `threads=` are checked where fio's source is unpacked.
#[test]
fn fios_own_files_with_these_options_translate() {
    let root = Path::new("/var/tmp/fiosrc/fio-3.33");
    if !root.exists() {
        return skip(
            "fios_own_files_with_these_options_translate",
            "fio's source is not at /var/tmp/fiosrc/fio-3.33",
        );
    }
    for f in [
        "examples/null.fio",
        "examples/waitfor.fio",
        "examples/dedupe-global.fio",
        "t/jobs/t0006-82af2a7c.fio",
        "t/jobs/t0025.fio",
        "t/jobs/t0026.fio",
    ] {
        let r = to_run(
            Command::new(bin())
                .args(["run", root.join(f).to_str().unwrap(), "--parse-only"])
                .env("IOLAB_DB", test_db())
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 0, "{f}: {}", r.stderr);
    }
}

/// t0026's second job (randrw, time_based, verify, experimental_verify): fio's verify phase
/// never starts (the runtime is used up), so the job reads about what it writes. Before, iolab
/// read back every write as well (twice the reads).
#[test]
fn a_time_based_mixed_verify_job_reads_about_what_it_writes_as_t0026() {
    if !have_fio("a_time_based_mixed_verify_job_reads_about_what_it_writes_as_t0026") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[job2]\nfilename=t0026file\nsize=1M\nreadwrite=randrw\ntime_based\nruntime=2\ndo_verify=1\nverify=md5\nexperimental_verify=1\n";
    let (code, f) = fio(d.path(), "f", text);
    assert_eq!(code, 0);
    let (r, w) = fio_bytes(&f);
    assert!(
        (0.8..1.25).contains(&(r as f64 / w as f64)),
        "fio: {r} / {w}"
    );
    let (code, v, err) = iolab(d.path(), "i", text, &[]);
    assert_eq!(code, 0, "{err}");
    let (r, w, _, bad) = iolab_bytes(&v);
    assert!(
        (0.8..1.25).contains(&(r as f64 / w as f64)),
        "iolab: {r} / {w}"
    );
    assert_eq!(bad, 0);
}

/// `numa_cpu_nodes=0`: the threads run on node 0's CPUs (`--cpus` of its cpulist); a node the
/// machine does not have is refused by name, as fio refuses it ("numa_parse_nodestring
/// failed").
#[test]
fn numa_cpu_nodes_run_on_the_nodes_cpus() {
    let Ok(list) = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist") else {
        return skip(
            "numa_cpu_nodes_run_on_the_nodes_cpus",
            "no /sys/devices/system/node",
        );
    };
    let d = tempfile::tempdir().unwrap();
    let parse = |nodes: &str| {
        let job = d.path().join("n.fio");
        std::fs::write(&job, format!("[n]\nsize=1m\nnuma_cpu_nodes={nodes}\n")).unwrap();
        to_run(
            Command::new(bin())
                .args(["run", job.to_str().unwrap(), "--parse-only"])
                .env("IOLAB_DB", test_db())
                .output()
                .unwrap(),
        )
    };
    let r = parse("0");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!(" --cpus={}\n", list.trim())),
        "{}",
        r.stdout
    );
    let r = parse("1000");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("numa_cpu_nodes: node 1000 is not one of this machine's NUMA nodes"),
        "{}",
        r.stderr
    );
}
