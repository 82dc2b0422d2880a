//! Issue 26, fio's engine semantics: the same job file run by fio 3.33 and by `iolab run
//! JOBFILE`, compared on fio's own JSON (iolab's `--output-format fio-json`).

use crate::common;
use crate::common::*;
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
fn fio_json(dir: &Path, text: &str) -> serde_json::Value {
    let work = dir.join("fio");
    std::fs::create_dir_all(&work).unwrap();
    let job = dir.join("fio.fio");
    std::fs::write(
        &job,
        format!("[global]\ndirectory={}\n{text}", work.display()),
    )
    .unwrap();
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

/// iolab's run of `text` in `dir`: (its fio JSON, its own JSON).
fn iolab_json(dir: &Path, text: &str) -> (serde_json::Value, serde_json::Value) {
    let work = dir.join("iolab");
    std::fs::create_dir_all(&work).unwrap();
    let job = dir.join("iolab.fio");
    std::fs::write(
        &job,
        format!("[global]\ndirectory={}\n{text}", work.display()),
    )
    .unwrap();
    let mut out = Vec::new();
    for fmt in ["fio-json", "json"] {
        let r = to_run(
            Command::new(bin())
                .args(["run", job.to_str().unwrap(), "--output-format", fmt])
                .args(["--no-save", "-q"])
                .env("IOLAB_DB", test_db())
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        out.push(r.json());
    }
    let own = out.pop().unwrap();
    (out.pop().unwrap(), own)
}

/// (I/Os, bytes) of a fio JSON job, reads and writes together.
fn totals(job: &serde_json::Value) -> (u64, u64) {
    let sum = |k: &str| {
        ["read", "write"]
            .iter()
            .map(|d| job[d][k].as_u64().unwrap())
            .sum::<u64>()
    };
    (sum("total_ios"), sum("io_bytes"))
}

/// fio's random map: a size-bound random job with a bssplit touches every block once, each I/O
/// trimmed to the blocks not yet done from its start, so it moves exactly size= bytes in more,
/// smaller I/Os than the mix's mean. Before, iolab drew size/mean offsets with replacement: 1311
/// I/Os and not 32 MiB.
#[test]
fn a_size_bound_random_bssplit_job_moves_size_bytes_in_fios_count_of_ios() {
    if !have_fio("a_size_bound_random_bssplit_job_moves_size_bytes_in_fios_count_of_ios") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[mix]\nioengine=psync\nsize=32m\nrw=randrw\nbssplit=4k/40:16k/30:64k/30\n";
    let f = fio_json(d.path(), text);
    let (ours, own) = iolab_json(d.path(), text);
    let (f_ios, f_bytes) = totals(&f["jobs"][0]);
    let (i_ios, i_bytes) = totals(&ours["jobs"][0]);
    assert_eq!(f_bytes, 32 << 20, "fio moves size= bytes");
    assert_eq!(i_bytes, f_bytes, "iolab moves fio's bytes");
    // the count depends on where the draws land (fio: 2127-2192 over four seeds)
    let off = (i_ios as f64 / f_ios as f64 - 1.0).abs();
    assert!(off < 0.10, "iolab {i_ios} I/Os, fio {f_ios}");
    assert_eq!(own["job"]["random_map"], "bitmap");
}

/// random_generator=lfsr: each block once, no bitmap: fio's exact count; norandommap: draws with
/// replacement (iolab's own default), still the size's count of I/Os.
#[test]
fn lfsr_and_norandommap_are_fios() {
    if !have_fio("lfsr_and_norandommap_are_fios") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for (extra, map) in [
        ("random_generator=lfsr\n", Some("lfsr")),
        ("norandommap\n", None),
        ("random_distribution=zipf:1.1\n", None),
    ] {
        let text = format!("[r]\nioengine=psync\nsize=4m\nrw=randread\nbs=4k\n{extra}");
        let f = fio_json(d.path(), &text);
        let (ours, own) = iolab_json(d.path(), &text);
        assert_eq!(totals(&f["jobs"][0]), (1024, 4 << 20), "{extra}");
        assert_eq!(totals(&ours["jobs"][0]), (1024, 4 << 20), "{extra}");
        assert_eq!(own["job"]["random_map"].as_str(), map, "{extra}");
    }
}

/// Concurrent size-bound jobs each have their own runtime (to their last completion) and their
/// rates divide by it, as fio's: a job with an eighth of the other's bytes ends first. Before,
/// every job of a phase got the phase's window: the same runtime, the rates of the slowest.
#[test]
fn concurrent_size_bound_jobs_each_get_their_own_runtime_and_rate() {
    if !have_fio("concurrent_size_bound_jobs_each_get_their_own_runtime_and_rate") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[global]\nioengine=psync\nrw=read\nbs=4k\n[small]\nsize=4m\n[large]\nsize=32m\n";
    let f = fio_json(d.path(), text);
    let (ours, _) = iolab_json(d.path(), text);
    for doc in [&f, &ours] {
        let jobs = doc["jobs"].as_array().unwrap();
        let (s, l) = (&jobs[0]["read"], &jobs[1]["read"]);
        assert_eq!(
            (s["total_ios"].as_u64(), l["total_ios"].as_u64()),
            (Some(1024), Some(8192))
        );
        let (rs, rl) = (
            s["runtime"].as_f64().unwrap(),
            l["runtime"].as_f64().unwrap(),
        );
        assert!(rs < rl, "small {rs} ms, large {rl} ms");
        for r in [s, l] {
            let (ios, ms) = (
                r["total_ios"].as_f64().unwrap(),
                r["runtime"].as_f64().unwrap(),
            );
            let iops = r["iops"].as_f64().unwrap();
            // runtime is in whole ms: the rate matches ios/runtime within that rounding
            let lo = ios / ((ms + 1.0) / 1000.0);
            let hi = ios / ((ms - 1.0).max(0.5) / 1000.0);
            assert!(
                (lo..=hi).contains(&iops),
                "{iops} IOPS, {ios} I/Os in {ms} ms"
            );
        }
    }
}

/// verify=: fio writes ONE job whose "write" holds the writes and whose "read" holds the verify
/// reads (fio 3.33: `rw=write size=1m verify=crc32c` is one job, 1 MiB written and 1 MiB read).
/// Before, iolab wrote a second job of the same name for its read-back phase.
#[test]
fn a_verify_job_is_one_fio_job_with_its_verify_reads() {
    if !have_fio("a_verify_job_is_one_fio_job_with_its_verify_reads") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[w]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\nverify=crc32c\n";
    let f = fio_json(d.path(), text);
    let (ours, own) = iolab_json(d.path(), text);
    for (who, doc) in [("fio", &f), ("iolab", &ours)] {
        let jobs = doc["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "{who}: one job");
        let j = &jobs[0];
        assert_eq!(j["jobname"], "w", "{who}");
        assert_eq!(j["write"]["io_bytes"], 1 << 20, "{who}: writes");
        assert_eq!(j["write"]["total_ios"], 256, "{who}: writes");
        assert_eq!(j["read"]["io_bytes"], 1 << 20, "{who}: verify reads");
        assert_eq!(j["read"]["total_ios"], 256, "{who}: verify reads");
    }
    let j = &ours["jobs"][0];
    let runtime = |d: &str| j[d]["runtime"].as_u64().unwrap();
    assert!(j["read"]["clat_ns"]["N"].as_u64() == Some(256));
    assert!(j["job_runtime"].as_u64().unwrap() >= runtime("read").max(runtime("write")));
    // iolab's own document keeps the two measured passes
    assert_eq!(own["runs"].as_array().map(Vec::len), Some(2));
}

/// rw=readwrite with verify=: fio reads the job's own reads and then every block it wrote (16 MiB
/// of reads for size=16m); before, iolab checked its reads as they went and read 8 MiB.
/// verify_backlog=16 on a write job: one measured mode whose reads are the writes read back
/// every 16, as fio's (before: a second seqrd mode after all the writes).
#[test]
fn verify_reads_back_every_write_of_a_mixed_job_and_every_n_with_a_backlog() {
    if !have_fio("verify_reads_back_every_write_of_a_mixed_job_and_every_n_with_a_backlog") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for text in [
        "[rw]\nioengine=psync\nrw=readwrite\nbs=4k\nsize=16m\nverify=crc32c\n",
        "[rw]\nioengine=libaio\niodepth=4\nrw=randrw\nbs=4k\nsize=8m\nverify=md5\n",
        "[b]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\nverify_backlog=16\n",
        "[b]\nioengine=libaio\niodepth=8\nrw=write\nbs=4k\nsize=1m\nverify=crc32c\nverify_backlog=16\n",
    ] {
        let f = fio_json(d.path(), text);
        let (ours, own) = iolab_json(d.path(), text);
        let (fj, ij) = (&f["jobs"][0], &ours["jobs"][0]);
        let bytes = |j: &serde_json::Value, dir: &str| j[dir]["io_bytes"].as_u64().unwrap();
        assert_eq!(ours["jobs"].as_array().unwrap().len(), 1, "{text}");
        assert_eq!(bytes(ij, "read"), bytes(fj, "read"), "read bytes: {text}");
        // the split of a mixed job's writes depends on its draws; reads + writes = size
        let total = |j| bytes(j, "read") + bytes(j, "write");
        let off = (total(ij) as f64 / total(fj) as f64 - 1.0).abs();
        assert!(off < 0.05, "iolab {} fio {}: {text}", total(ij), total(fj));
        let runs = own["runs"].as_array().map_or(1, Vec::len);
        assert_eq!(runs, 1, "one measured mode: {text}");
        let checked = own["verify"]["checked"]
            .as_u64()
            .or(own["results"]["verify"]["checked"].as_u64());
        // every write read back and checked; a job's own read of a block it wrote earlier is
        // checked too (fio's mix lets the writes run ahead of the reads at times: fio checks
        // only its read-backs)
        let checked = checked.expect("verify's checked count");
        assert!(
            (bytes(ij, "write") / 4096..=bytes(ij, "read") / 4096).contains(&checked),
            "{checked} checked: {own}"
        );
    }
}

/// numjobs=2: fio writes one row per clone, each with its own size= of I/O, and one row of both
/// with group_reporting. Before, iolab wrote one row of the clones merged either way.
#[test]
fn numjobs_clones_are_one_row_each_unless_group_reporting() {
    if !have_fio("numjobs_clones_are_one_row_each_unless_group_reporting") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for (extra, rows) in [("", 2), ("group_reporting\n", 1)] {
        let text = format!("[nj]\nioengine=psync\nrw=randread\nbs=4k\nsize=2m\nnumjobs=2\n{extra}");
        let f = fio_json(d.path(), &text);
        let (ours, _) = iolab_json(d.path(), &text);
        let per_row = |doc: &serde_json::Value| -> Vec<(String, u64, u64)> {
            doc["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| {
                    let (ios, bytes) = totals(j);
                    (j["jobname"].as_str().unwrap().to_string(), ios, bytes)
                })
                .collect()
        };
        let want = vec![("nj".to_string(), 512 * 2 / rows, (2 << 20) * 2 / rows); rows as usize];
        assert_eq!(per_row(&f), want, "fio: {extra}");
        assert_eq!(per_row(&ours), want, "iolab: {extra}");
        for j in ours["jobs"].as_array().unwrap() {
            assert_eq!(j["read"]["clat_ns"]["N"], j["read"]["total_ios"], "{extra}");
        }
    }
}

/// verify_backlog=16 on a device throttled to 200 read and 200 write IOPS (direct I/O): fio
/// reads back every 16 writes, so its reads and writes share the time (2 MiB: about 2.6 s);
/// iolab read back only after all the writes (twice fio's time, the 83 s against 41 s).
/// Each second of iolab's run now has both.
#[test]
fn verify_backlog_reads_back_while_writing_on_a_throttled_device() {
    let name = "verify_backlog_reads_back_while_writing_on_a_throttled_device";
    if !have_fio(name) {
        return;
    }
    if let Some(why) = common::blk::cannot(true) {
        return skip(name, &why);
    }
    let d = tempfile::tempdir().unwrap();
    let fs = common::blk::LoopFs::new(128, &d.path().join("mnt"));
    let t = common::blk::Throttle::new(&[fs.majmin()], 200);
    let job = "[vb]\nioengine=psync\ndirect=1\nrw=write\nbs=4k\nsize=2m\nverify=crc32c\nverify_backlog=16\n";
    let run = |who: &str, args: &[&str]| {
        let work = fs.dir.join(who);
        std::fs::create_dir_all(&work).unwrap();
        let file = d.path().join(format!("{who}.fio"));
        std::fs::write(
            &file,
            format!("[global]\ndirectory={}\n{job}", work.display()),
        )
        .unwrap();
        let mut cmd = Command::new(&t.prefix()[0]);
        cmd.args(&t.prefix()[1..]).args(args).arg(&file);
        // fio writes its verify state file (`vb-0-verify.state`) into the working directory.
        let o = cmd
            .current_dir(d.path())
            .env("IOLAB_DB", test_db())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        serde_json::from_str::<serde_json::Value>(&text[text.find('{').unwrap()..]).unwrap()
    };
    let f = run("fio", &["fio", "--output-format=json"]);
    let own = run("iolab", &[bin(), "run", "--json", "--no-save", "-q"]);
    let fio_ms = f["jobs"][0]["job_runtime"].as_f64().unwrap();
    let ours_ms = own["duration_s"].as_f64().unwrap() * 1000.0;
    assert_eq!(f["jobs"][0]["read"]["io_bytes"], 2 << 20);
    assert_eq!(own["results"]["read"]["bytes"], 2 << 20, "{own}");
    assert_eq!(own["results"]["write"]["bytes"], 2 << 20, "{own}");
    let r = ours_ms / fio_ms;
    assert!(
        (0.6..1.6).contains(&r),
        "iolab {ours_ms:.0} ms, fio {fio_ms:.0} ms"
    );
    let series = own["timeseries"].as_array().unwrap();
    assert!(series.len() >= 2, "{own}");
    for p in series {
        assert!(p["read"].is_object() && p["write"].is_object(), "{p}");
    }
}

/// `runtime=` without `time_based` stops at whichever comes first, `size=` or the runtime, as
/// fio: 16 MiB read long before 3 s; at 100 IOPS the runtime ends first, after about 100 I/Os.
/// Before, iolab measured for the whole runtime (moving far more than size=) and said so in a
/// note.
#[test]
fn runtime_without_time_based_stops_at_size_or_runtime_whichever_first() {
    if !have_fio("runtime_without_time_based_stops_at_size_or_runtime_whichever_first") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let size_first = "[r]\nioengine=psync\nsize=16m\nrw=read\nbs=4k\nruntime=3\n";
    let f = fio_json(d.path(), size_first);
    let (ours, own) = iolab_json(d.path(), size_first);
    for doc in [&f, &ours] {
        let r = &doc["jobs"][0]["read"];
        assert_eq!(totals(&doc["jobs"][0]), (4096, 16 << 20), "{r}");
        assert!(r["runtime"].as_f64().unwrap() < 3000.0, "{r}");
    }
    assert_eq!(own["job"]["limit"]["ops"], 4096, "{}", own["job"]);
    assert_eq!(own["job"]["max_time_s"], 3.0, "{}", own["job"]);
    assert!(
        !own["warnings"].to_string().contains("time_based"),
        "{}",
        own["warnings"]
    );

    let time_first = "[r]\nioengine=psync\nsize=16m\nrw=read\nbs=4k\nruntime=1\nrate_iops=100\n";
    let f = fio_json(d.path(), time_first);
    let (ours, _) = iolab_json(d.path(), time_first);
    for doc in [&f, &ours] {
        let r = &doc["jobs"][0]["read"];
        let ios = r["total_ios"].as_u64().unwrap();
        assert!((90..=110).contains(&ios), "{r}");
        let ms = r["runtime"].as_f64().unwrap();
        assert!((900.0..1200.0).contains(&ms), "{r}");
    }
}

/// `slat_ns`: the queue engines' submission latency, per I/O, as fio's (from the I/O's start to
/// the return of the call that submitted it), `clat_ns` from there on, so that `lat` is their
/// sum; the sync engines have none (fio 3.33 writes zeros and N 0 for psync). Before, iolab
/// wrote zeros for every engine and `clat_ns` was the whole latency.
#[test]
fn slat_is_measured_for_the_queue_engines_and_zero_for_psync_as_fio() {
    if !have_fio("slat_is_measured_for_the_queue_engines_and_zero_for_psync_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for engine in ["psync", "libaio", "io_uring"] {
        let text =
            format!("[j]\nioengine={engine}\niodepth=8\ndirect=1\nsize=4m\nrw=randread\nbs=4k\n");
        let f = fio_json(d.path(), &text);
        let (ours, own) = iolab_json(d.path(), &text);
        for (who, doc) in [("fio", &f), ("iolab", &ours)] {
            let r = &doc["jobs"][0]["read"];
            let (slat, clat, lat) = (&r["slat_ns"], &r["clat_ns"], &r["lat_ns"]);
            if engine == "psync" {
                assert_eq!(slat["N"], 0, "{who} {engine}: {slat}");
                assert_eq!(slat["max"], 0, "{who} {engine}: {slat}");
                continue;
            }
            assert_eq!(slat["N"], r["total_ios"], "{who} {engine}: {slat}");
            assert!(slat["min"].as_u64().unwrap() > 0, "{who} {engine}: {slat}");
            let m = |x: &serde_json::Value| x["mean"].as_f64().unwrap();
            // no order between slat and clat: where io_submit waits for a request tag (a
            // shallow device queue) it holds most of the latency, for fio and iolab alike
            // lat = slat + clat for each I/O, so for the means (histograms: 0.1 %)
            let sum = m(slat) + m(clat);
            assert!(
                (sum / m(lat) - 1.0).abs() < 0.01,
                "{who} {engine}: slat {} + clat {} vs lat {}",
                m(slat),
                m(clat),
                m(lat)
            );
        }
        let own_slat = &own["results"]["read"]["slat_ns"];
        assert_eq!(
            own_slat.is_null(),
            engine == "psync",
            "{engine}: {own_slat}"
        );
    }
}

/// `ioengine=posixaio` at iodepth 16 keeps 16 I/Os in flight, as fio's: by Little's law, IOPS ×
/// mean latency (the mean number in flight) is near 16, where a one-at-a-time engine gives at
/// most 1. Before, posixaio ran as iolab's sync engine (pread), one I/O at a time.
#[test]
fn posixaio_keeps_iodepth_in_flight_as_fio() {
    if !have_fio("posixaio_keeps_iodepth_in_flight_as_fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "[j]\nioengine=posixaio\niodepth=16\ndirect=1\nsize=8m\nrw=randread\nbs=4k\n";
    let f = fio_json(d.path(), text);
    let (ours, own) = iolab_json(d.path(), text);
    assert_eq!(own["job"]["engine"], "posixaio");
    assert_eq!(own["job"]["iodepth"], 16);
    for (who, doc) in [("fio", &f), ("iolab", &ours)] {
        let r = &doc["jobs"][0]["read"];
        assert_eq!(r["total_ios"], 2048, "{who}");
        let in_flight = r["iops"].as_f64().unwrap() * r["lat_ns"]["mean"].as_f64().unwrap() / 1e9;
        assert!(in_flight > 8.0, "{who}: {in_flight:.2} in flight: {r}");
    }
}
