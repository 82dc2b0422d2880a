//! Issue 26, when and where I/O is issued: fio's rates of mixed jobs (each direction on its own
//! schedule), fio's I/O log (`write_iolog`). The same job file run by fio 3.33 and by `iolab run
//! JOBFILE`, compared on fio's own JSON (iolab's `--output-format fio-json`) and on the I/O logs
//! both write.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// fio's and iolab's fio JSON of `text`, each run in its own folder under `dir` (`@` in the
/// text is that folder); None (a skip) without fio.
fn both(test: &str, dir: &Path, text: &str) -> Option<(Value, Value)> {
    if Command::new("fio").arg("--version").output().is_err() {
        skip(test, "fio is not installed");
        return None;
    }
    let mut docs = Vec::new();
    for tool in ["fio", "iolab"] {
        let work = dir.join(tool);
        std::fs::create_dir_all(&work).unwrap();
        let job = dir.join(format!("{tool}.fio"));
        let w = work.display().to_string();
        std::fs::write(
            &job,
            format!("[global]\ndirectory={w}\n{}", text.replace('@', &w)),
        )
        .unwrap();
        let out = if tool == "fio" {
            let o = Command::new("timeout")
                .current_dir(&work)
                .args(["-s", "KILL", "60", "fio", "--output-format=json"])
                .arg(&job)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8_lossy(&o.stdout).into_owned()
        } else {
            let r = to_run(
                Command::new(bin())
                    .current_dir(&work)
                    .args(["run", job.to_str().unwrap(), "--output-format", "fio-json"])
                    .args(["--no-save", "-q"])
                    .env("IOLAB_DB", test_db())
                    .output()
                    .unwrap(),
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
            r.stdout
        };
        docs.push(serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap());
    }
    let i = docs.pop().unwrap();
    Some((docs.pop().unwrap(), i))
}

/// The I/Os of direction `dir` over every row named `name` (a job's clones).
fn ios(doc: &Value, name: &str, dir: &str) -> u64 {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobname"] == name)
        .map(|j| j[dir]["total_ios"].as_u64().unwrap())
        .sum()
}

/// fio paces a mixed job's reads and writes each at its own rate (`rate_iops=r,w`, `rate=` one
/// value for each direction, `rate=,w` the writes only), and a byte rate below one I/O a
/// second by bytes: iolab issues the same count per direction as fio over the same runtime.
#[test]
fn mixed_and_fractional_rates_pace_each_direction_as_fio() {
    // in memory: the rates, not a busy disk's stalls, decide the counts
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let text = "[global]\nsize=4m\nbs=4k\ntime_based\nruntime=2\n\
                [iops]\nrw=randrw\nioengine=psync\nrate_iops=100,50\nnumjobs=2\n\
                [bytes]\nstonewall\nrw=randrw\nrwmixread=30\nioengine=libaio\niodepth=8\nrate=400k\n\
                [writes]\nstonewall\nrw=readwrite\nioengine=psync\nrate=,200k\n\
                [slow]\nstonewall\nrw=read\nioengine=psync\nrate=6k\n";
    let Some((f, i)) = both(
        "mixed_and_fractional_rates_pace_each_direction_as_fio",
        d.path(),
        text,
    ) else {
        return;
    };
    // (job, direction, the rate's I/Os over 2 s)
    for (name, dir, want) in [
        ("iops", "read", 400.0),
        ("iops", "write", 200.0),
        ("bytes", "read", 200.0),
        ("bytes", "write", 200.0),
        ("writes", "write", 100.0),
        // 6 KiB/s of 4 KiB reads: one at 0, 0.67 and 1.33 s
        ("slow", "read", 3.0),
    ] {
        let (fo, io) = (ios(&f, name, dir) as f64, ios(&i, name, dir) as f64);
        let near = |n: f64| (n - want).abs() <= (0.05 * want).max(1.0);
        assert!(
            near(fo),
            "fio {name} {dir}: {fo} I/Os, the rate's {want}: {f}"
        );
        assert!(near(io), "iolab {name} {dir}: {io} I/Os, fio {fo}");
    }
    // rate=,200k: the reads are not paced; both issue many more of them than writes
    for (tool, doc) in [("fio", &f), ("iolab", &i)] {
        let (r, w) = (ios(doc, "writes", "read"), ios(doc, "writes", "write"));
        assert!(r > 5 * w, "{tool}: {r} unpaced reads, {w} paced writes");
    }
}

/// One parsed line of an I/O log: (time µs, file, action, offset, length).
type Line = (u64, String, String, u64, u64);

fn iolog(path: &Path) -> (String, Vec<Line>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head = lines.next().unwrap_or("").to_string();
    let parsed = lines
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            let n = |i: usize| w.get(i).map_or(0, |x| x.parse::<u64>().unwrap());
            (n(0), w[1].to_string(), w[2].to_string(), n(3), n(4))
        })
        .collect();
    (head, parsed)
}

/// write_iolog: iolab's log is fio's version 3 format, with the same I/Os in the same order
/// as fio's for a sequential job with holes (t0007's shape), the same actions and counts for a
/// random mixed job with fsyncs; each file added and opened before its I/O and closed after;
/// times never go back. A second run appends, as fio opens the log for appending.
#[test]
fn write_iolog_logs_the_ios_fio_logs() {
    let d = tempfile::tempdir().unwrap();
    let text = "[seq]\nsize=16m\nrw=read:512k\nbs=1m\nnorandommap\nwrite_iolog=@/seq.log\n\
                [mix]\nstonewall\nsize=256k\nrw=randrw\nbs=4k\nioengine=libaio\niodepth=4\nwrite_iolog=@/mix.log\n\
                [sync]\nstonewall\nsize=248k\nrw=randwrite\nbs=4k\nfsync=4\nwrite_iolog=@/sync.log\n";
    let Some((f, i)) = both("write_iolog_logs_the_ios_fio_logs", d.path(), text) else {
        return;
    };
    assert_eq!(ios(&f, "seq", "read"), 11);
    assert_eq!(ios(&i, "seq", "read"), 11);
    // fio draws the mix's directions, iolab keeps it exact: the same total
    let rw = |d: &Value| ios(d, "mix", "read") + ios(d, "mix", "write");
    assert_eq!(rw(&f), 64);
    assert_eq!(rw(&i), 64);
    let io_of = |l: &[Line]| -> Vec<(String, u64, u64)> {
        l.iter()
            .filter(|x| !matches!(x.2.as_str(), "add" | "open" | "close"))
            .map(|x| (x.2.clone(), x.3, x.4))
            .collect()
    };
    let (fh, fl) = iolog(&d.path().join("fio/seq.log"));
    let (ih, il) = iolog(&d.path().join("iolab/seq.log"));
    assert_eq!(fh, "fio version 3 iolog");
    assert_eq!(ih, fh);
    // 11 reads of 1 MiB, 512 KiB apart
    assert_eq!(io_of(&il), io_of(&fl));
    assert_eq!(io_of(&il).len(), 11);
    for l in [&fl, &il] {
        let acts: Vec<&str> = l.iter().map(|x| x.2.as_str()).collect();
        assert_eq!(acts[..2], ["add", "open"]);
        assert_eq!(acts.last(), Some(&"close"));
        assert!(l.windows(2).all(|w| w[0].0 <= w[1].0), "{l:?}");
    }
    // the mixed job: 64 reads and writes of 4 KiB blocks of the file; the random writes: a sync
    // after every 4
    let (_, fm) = iolog(&d.path().join("fio/mix.log"));
    let (_, im) = iolog(&d.path().join("iolab/mix.log"));
    let (_, fs) = iolog(&d.path().join("fio/sync.log"));
    let (_, is) = iolog(&d.path().join("iolab/sync.log"));
    let count = |l: &[Line], a: &str| l.iter().filter(|x| x.2 == a).count();
    for a in ["add", "open", "close"] {
        assert_eq!(count(&im, a), count(&fm, a), "{a}: iolab, fio");
    }
    for (tool, m, s) in [("fio", &fm, &fs), ("iolab", &im, &is)] {
        assert_eq!(count(m, "read") + count(m, "write"), 64, "{tool}");
        assert_eq!((count(s, "write"), count(s, "sync")), (62, 15), "{tool}");
    }
    assert!(
        im.iter()
            .filter(|x| x.2 == "read" || x.2 == "write")
            .all(|x| x.4 == 4096 && x.3 % 4096 == 0 && x.3 < 256 << 10)
    );
    // the log names iolab's file, and the job's notes say so
    assert!(il[0].1.ends_with("iolab-file.0"), "{:?}", il[0]);
    let notes = i["jobs"][0]["iolab_notes"].to_string();
    assert!(notes.contains("write_iolog"), "{notes}");

    // run again: the log is appended to, as fio's
    let job = d.path().join("iolab.fio");
    let r = iolab(&["run", job.to_str().unwrap(), "--no-save", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let again = std::fs::read_to_string(d.path().join("iolab/seq.log")).unwrap();
    assert_eq!(again.matches("fio version 3 iolog").count(), 2);
    assert_eq!(again.matches(" read ").count(), 22);
}

/// numjobs clones write one log, in time order, with every clone's I/Os (fio's clones each
/// append through their own buffer); a log name that is a symbolic link is refused before
/// anything runs, and what it points to is left alone.
#[test]
fn write_iolog_of_clones_is_one_log_and_a_link_is_never_written_through() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().display();
    let job = d.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[c]\ndirectory={w}\nsize=64k\nbs=4k\nrw=randwrite\nnumjobs=3\nwrite_iolog={w}/c.log\n"
        ),
    )
    .unwrap();
    let r = iolab(&["run", job.to_str().unwrap(), "--no-save", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (head, l) = iolog(&d.path().join("c.log"));
    assert_eq!(head, "fio version 3 iolog");
    assert_eq!(l.iter().filter(|x| x.2 == "write").count(), 48);
    assert!(l.windows(2).all(|w| w[0].0 <= w[1].0));
    std::fs::write(d.path().join("precious"), "keep").unwrap();
    std::fs::remove_file(d.path().join("c.log")).unwrap();
    std::os::unix::fs::symlink(d.path().join("precious"), d.path().join("c.log")).unwrap();
    let r = iolab(&["run", job.to_str().unwrap(), "--no-save", "-q"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("c.log"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(d.path().join("precious")).unwrap(),
        "keep"
    );
}

/// The reads and writes of an I/O log: (action, offset, length), in order.
fn ios_of(path: &Path) -> Vec<(String, u64, u64)> {
    iolog(path)
        .1
        .into_iter()
        .filter(|x| x.2 == "read" || x.2 == "write")
        .map(|x| (x.2, x.3, x.4))
        .collect()
}

/// zonemode=strided: the same offsets as fio, in the same order (both tools' write_iolog):
/// zones read one after another and over again from the start, a zone's bytes beyond its range
/// written from its start again, a size-bound pass that ends where a zone runs past the file
/// (4.5 MiB of 12.5), and a time-based queue job (the same offsets as far as both went).
#[test]
fn strided_zones_issue_fios_offsets() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let text = "[global]\nbs=64k\nzonemode=strided\n\
                [a]\nsize=15m\nrw=read\nzonesize=1m\nzoneskip=3m\nwrite_iolog=@/a.log\n\
                [b]\nstonewall\nsize=8m\nrw=write\nzonesize=256k\nzonerange=128k\nzoneskip=1m\nwrite_iolog=@/b.log\n\
                [c]\nstonewall\nsize=12800k\nrw=read\nzonesize=1m\nzoneskip=2m\nwrite_iolog=@/c.log\n\
                [d]\nstonewall\nsize=4m\nrw=read\nioengine=libaio\niodepth=4\nzonesize=512k\nzoneskip=1m\ntime_based\nruntime=1\nwrite_iolog=@/d.log\n";
    let Some((f, i)) = both("strided_zones_issue_fios_offsets", d.path(), text) else {
        return;
    };
    let bytes = |doc: &Value, name: &str, dir: &str| -> u64 {
        doc["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["jobname"] == name)
            .map(|j| j[dir]["io_bytes"].as_u64().unwrap())
            .unwrap()
    };
    for (name, dir, want) in [
        ("a", "read", 15u64 << 20),
        ("b", "write", 8 << 20),
        ("c", "read", 4608 << 10),
    ] {
        assert_eq!(bytes(&f, name, dir), want, "fio {name}");
        assert_eq!(bytes(&i, name, dir), want, "iolab {name}");
        let log = |tool: &str| ios_of(&d.path().join(format!("{tool}/{name}.log")));
        assert_eq!(log("iolab"), log("fio"), "{name}: the offsets");
    }
    let (fd, id) = (
        ios_of(&d.path().join("fio/d.log")),
        ios_of(&d.path().join("iolab/d.log")),
    );
    let n = fd.len().min(id.len());
    assert!(n > 1000, "fio {} reads, iolab {}", fd.len(), id.len());
    assert_eq!(id[..n], fd[..n], "d: the offsets as far as both went");
    // the zones (512 KiB of every 1.5 MiB): no read outside them
    assert!(id.iter().all(|x| x.1 % (1536 << 10) < 512 << 10));
}
