//! `iolab run --output-format fio-json|fio-json+`: the run in fio's JSON shape (fio 3.33's
//! `--output-format=json` / `json+`), so fio's own tools (`fio_jsonplus_clat2csv`, ...) and
//! `iolab import` read it; and `json+`, iolab's document with each operation's latency histogram.
//! What maps to what: docs/fio-output.md.

use super::fio_group::{self, How, Row};
pub use super::fio_group::{FIO_PERCENTILES, hist_bins};
use crate::model::hist::LatHist;
use crate::model::job::{Distribution, Limit, Mode};
use crate::model::run::{CellResult, LatSummary, OpKind, RunDoc, TsOp, TsPoint};
use crate::model::steady::{Steady, SteadyState};
use crate::spec::fio_vocab;
use serde_json::{Map, Value, json};

/// The latency histogram of operation `k` of a cell, when the run has it (fresh runs do; a
/// document read back from JSON does not).
fn hist(c: &CellResult, k: OpKind) -> Option<&LatHist> {
    c.lat_hists.get(k as usize).filter(|h| h.count() > 0)
}

/// `results.<op>` of each cell of iolab's JSON document `v` (`runs[i]`, and the top level of
/// a single-mode document) gets `hist_bins`: `[[value_ns, count], ...]`, the shape of
/// imported fio json+ bins in `iolab-import/2`. For `--output-format json+`.
pub fn add_hist_bins(v: &mut Value, doc: &RunDoc) {
    for (i, c) in doc.runs.iter().enumerate() {
        for k in OpKind::ALL {
            let Some(h) = hist(c, k) else { continue };
            let bins = json!(hist_bins(h));
            if let Some(op) = v["runs"][i]["results"].get_mut(k.name()) {
                op["hist_bins"] = bins.clone();
            }
            if doc.runs.len() == 1
                && let Some(op) = v["results"].get_mut(k.name())
            {
                op["hist_bins"] = bins;
            }
        }
    }
}

/// `fio version`: says that iolab wrote it, in which format.
pub fn fio_version(doc: &RunDoc, bins: bool) -> String {
    let fmt = if bins { "fio-json+" } else { "fio-json" };
    format!("iolab-{} ({fmt})", doc.iolab_version)
}

/// The job of a job file that measured cell `cell` (role `role` of it, for a phase of jobs at
/// once): the phase is found by counting the phases' `cells`; a one-job phase's cells are all
/// that job's (a verify read-back is a second cell of the same job).
fn file_job<'a>(jobfile: &'a Value, cell: usize, role: Option<&str>) -> Option<&'a Value> {
    let mut first = 0;
    let mut phase = None;
    for p in jobfile["phases"].as_array()? {
        let n = p["cells"].as_u64()? as usize;
        if cell < first + n {
            phase = p["phase"].as_u64();
            break;
        }
        first += n;
    }
    let phase = phase?;
    let mut jobs = jobfile["jobs"]
        .as_array()?
        .iter()
        .filter(|j| j["phase"].as_u64() == Some(phase));
    match role {
        Some(r) => jobs.find(|j| j["name"] == r),
        None => {
            let j = jobs.next()?;
            jobs.next().is_none().then_some(j)
        }
    }
}

/// Whether a file job has fio's `group_reporting` on (its clones reported as one row).
fn group_reporting(j: &Value) -> bool {
    j["fio_options"]["group_reporting"]
        .as_str()
        .is_some_and(|v| fio_vocab::parse_bool(Some(v).filter(|v| !v.is_empty())).unwrap_or(true))
}

/// What iolab does otherwise than fio for a file job, one line each: its options run with a
/// difference (`jobfile.jobs[].notes`) and those `--ignore-unsupported` left out.
pub fn job_notes(j: &Value) -> Vec<String> {
    let strs = |k: &str| {
        j[k].as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect::<Vec<_>>()
    };
    let mut notes = strs("notes");
    notes.extend(
        strs("options_ignored")
            .into_iter()
            .map(|o| format!("{o}: not supported, ignored (--ignore-unsupported)")),
    );
    notes
}

/// fio's name of a job: its `name=` option, else its section.
fn file_job_name(j: &Value) -> Option<&str> {
    j["fio_options"]["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .or_else(|| j["section"].as_str())
}

/// A run as fio would have printed it: one job per measured mode (`groupid` = its index).
/// `bins`: json+ (per-bucket latency counts). `jobfile`: a run of fio job files, the document's
/// `jobfile` part (docs/fio-jobs.md): each job is then named as in its file and carries the
/// file's resolved options.
pub fn fio_json(doc: &RunDoc, bins: bool, jobfile: Option<&Value>) -> Value {
    let mut top = Map::new();
    top.insert("fio version".into(), fio_version(doc, bins).into());
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&doc.start_time) {
        top.insert("timestamp".into(), t.timestamp().into());
        top.insert("timestamp_ms".into(), t.timestamp_millis().into());
        let local = t.with_timezone(&chrono::Local);
        top.insert(
            "time".into(),
            local.format("%a %b %e %H:%M:%S %Y").to_string().into(),
        );
    }
    if let Some(c) = doc.runs.first() {
        top.insert("global options".into(), Value::Object(global_options(c)));
    }
    // A phase of concurrent roles is one group of jobs, one job per role (named by the role),
    // as fio reports the jobs it ran between two stonewalls.
    let mut jobs: Vec<(Row, Option<(u64, bool)>)> = Vec::new();
    // the file job the last rows written came from (a one-job phase), and how many rows
    let mut last: Option<&Value> = None;
    let mut last_rows = 0;
    for (i, c) in doc.runs.iter().enumerate() {
        for (role, rc) in crate::model::run::flat_cells(std::slice::from_ref(c)) {
            let from_file = jobfile.and_then(|f| file_job(f, i, role.as_deref()));
            // a job file's numjobs clones: one row each, as fio writes them without
            // group_reporting (with it, one row of them all)
            let cells: Vec<&CellResult> = match from_file {
                Some(f) if role.is_none() && rc.clones.len() > 1 && !group_reporting(f) => {
                    rc.clones.iter().collect()
                }
                _ => vec![&rc],
            };
            let rows: Vec<Row> = cells
                .into_iter()
                .map(|cell| {
                    let mut j = job(cell, i, bins);
                    if let Some(fj) = from_file {
                        // the job as its file says: its name and its resolved options
                        if let Some(n) = file_job_name(fj) {
                            j["jobname"] = n.into();
                        }
                        if let Some(o) = fj["fio_options"].as_object() {
                            j["job options"] = Value::Object(o.clone());
                        }
                        j["iolab_notes"] = json!(job_notes(fj));
                    } else if let Some(r) = &role {
                        j["jobname"] = r.as_str().into();
                    }
                    let pct = |k: OpKind| {
                        cell.clat_hists
                            .get(k as usize)
                            .filter(|h| h.count() > 0)
                            .or_else(|| hist(cell, k))
                            .cloned()
                    };
                    Row {
                        v: j,
                        hists: [pct(OpKind::Read), pct(OpKind::Write), pct(OpKind::Trim)],
                    }
                })
                .collect();
            // a verify read-back is the next cell of the same one-job phase: fio reports its
            // reads in the job that wrote (one job, both directions; clone by clone)
            let same = from_file
                .filter(|f| role.is_none() && last.is_some_and(|l| std::ptr::eq(l, *f)))
                .is_some();
            last = from_file.filter(|_| role.is_none());
            if same && last_rows == rows.len() {
                let at = jobs.len() - rows.len();
                for ((into, _), j) in jobs[at..].iter_mut().zip(&rows) {
                    fio_group::add(into, j, How::After);
                }
                continue;
            }
            last_rows = rows.len();
            // fio's reporting group of the file's job (its groupid), and group_reporting
            let group = from_file.and_then(|f| Some((f["group"].as_u64()?, group_reporting(f))));
            jobs.extend(rows.into_iter().map(|r| (r, group)));
        }
    }
    // group_reporting: the jobs of a reporting group as one row, as fio sums them
    let jobs = fio_group::report(jobs);
    top.insert("jobs".into(), Value::Array(jobs));
    top.insert("disk_util".into(), disk_util(doc));
    // iolab's notes on the run (approximations of a job file's options, page cache, ...): a
    // key fio does not write, which fio's tools ignore
    top.insert(
        "iolab_notes".into(),
        doc.warnings.iter().map(|w| w.message.as_str()).collect(),
    );
    Value::Object(top)
}

/// The file set, in fio's option names (values are strings, as fio prints them).
fn global_options(c: &CellResult) -> Map<String, Value> {
    let fs = &c.job.fileset;
    let mut o = Map::new();
    match &fs.device {
        Some(d) => {
            o.insert("filename".into(), d.display().to_string().into());
            o.insert("offset".into(), fs.base_offset().to_string().into());
            o.insert("size".into(), fs.file_size_bytes.to_string().into());
        }
        None => {
            o.insert("directory".into(), fs.dir.display().to_string().into());
            o.insert("nrfiles".into(), fs.files.to_string().into());
            o.insert("filesize".into(), fs.file_size_bytes.to_string().into());
            o.insert("size".into(), fs.total_bytes.to_string().into());
        }
    }
    o
}

/// The cell's job, resolved, in fio's option names.
fn job_options(c: &CellResult) -> Map<String, Value> {
    let j = &c.job.job;
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.into(), Value::String(v));
    };
    put("name", c.mode.clone());
    put("rw", fio_vocab::rw_of_mode(j.mode).into());
    if j.mode == Mode::Seqrewr {
        put("overwrite", "1".into());
    }
    if j.mode.is_mixed() {
        let pct = 100.0 * j.rw_ratio / (1.0 + j.rw_ratio);
        put("rwmixread", format!("{}", pct.round() as u64));
    }
    // per direction as fio writes them (`bs=R,W,T`): the second side is the writes' and the
    // trims'
    let (r, w) = (j.bs_side(false), j.bs_side(true));
    let both = |a: String, b: String| if a == b { a } else { format!("{a},{b},{b}") };
    put("bs", both(r.bs_bytes.to_string(), w.bs_bytes.to_string()));
    let (rk, rv) = r.fio();
    let (wk, wv) = w.fio();
    // one size where the other side is a split or a range: that option's form of one size
    let as_kind = |k: &str, one: u64| match k {
        "bssplit" => format!("{one}/100"),
        _ => format!("{one}-{one}"),
    };
    match (rk, wk) {
        ("bs", "bs") => {}
        (a, b) if a == b => put(a, both(rv, wv)),
        ("bs", k) => put(k, both(as_kind(k, r.bs_bytes), wv)),
        (k, "bs") => put(k, both(rv, as_kind(k, w.bs_bytes))),
        // a split for one side, a range for the other: the split's side only in bssplit
        ("bssplit", _) => {
            put("bssplit", format!("{rv},,"));
            put("bsrange", wv);
        }
        _ => {
            put("bssplit", format!(",{wv},{wv}"));
            put("bsrange", rv);
        }
    }
    put("ioengine", j.engine.caps().fio[0].into());
    put("iodepth", j.iodepth.to_string());
    put("direct", if j.direct { "1" } else { "0" }.into());
    put("numjobs", j.threads.to_string());
    match j.limit {
        Limit::TimeS(s) => {
            put("runtime", format!("{s}"));
            put("time_based", "1".into());
        }
        Limit::Ops(n) => put("number_ios", (n / u64::from(j.threads.max(1))).to_string()),
        Limit::Bytes(n) => put("io_size", (n / u64::from(j.threads.max(1))).to_string()),
    }
    if let Some(s) = j.max_time_s {
        // runtime without time_based: whichever comes first, as fio
        put("runtime", format!("{s}"));
    }
    if j.ramp_s > 0.0 {
        put("ramp_time", format!("{}", j.ramp_s));
    }
    if j.mode.writes() {
        let key = match j.fsync_mode {
            crate::model::job::FsyncMode::Fsync => "fsync",
            crate::model::job::FsyncMode::Fdatasync => "fdatasync",
        };
        let freq = if j.fsync_all { 1 } else { j.fsync_freq };
        put(key, freq.to_string());
        put("end_fsync", if j.fsync_end { "1" } else { "0" }.into());
    }
    if j.open_flags.sync {
        put("sync", "sync".into());
    } else if j.open_flags.dsync {
        put("sync", "dsync".into());
    }
    if j.mode.is_random() {
        let dist = match &j.distribution {
            Distribution::Uniform => "random".to_string(),
            other => other.to_string(),
        };
        put("random_distribution", dist);
        put("randseed", j.seed.to_string());
    }
    if let Some(r) = j.rate_iops {
        put("rate_iops", (r / u64::from(j.threads.max(1))).to_string());
    }
    o
}

/// Sample mean and standard deviation (n - 1, as fio computes them); (0, 0) without samples.
fn mean_dev(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// `min`, `max`, `mean`, `stddev`, `N` and, with `pct`, `percentile` (and with `bins` the
/// json+ `bins`) of one latency; zeros where nothing was measured.
fn lat_obj(sum: Option<&LatSummary>, h: Option<&LatHist>, n: u64, pct: bool, bins: bool) -> Value {
    let Some(s) = sum else {
        return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    };
    let n = h.map_or(n, LatHist::count);
    let mut o = json!({"min": s.min, "max": s.max, "mean": s.mean, "stddev": s.stddev, "N": n});
    if pct {
        let mut p = Map::new();
        match h {
            Some(h) => {
                for q in FIO_PERCENTILES {
                    p.insert(format!("{q:.6}"), h.percentile(q).into());
                }
            }
            // Without the histogram: the percentiles iolab's summary keeps.
            None => {
                for (q, v) in [
                    (50.0, s.p50),
                    (90.0, s.p90),
                    (95.0, s.p95),
                    (99.0, s.p99),
                    (99.9, s.p99_9),
                    (99.99, s.p99_99),
                ] {
                    p.insert(format!("{q:.6}"), v.into());
                }
            }
        }
        o["percentile"] = Value::Object(p);
        if let (true, Some(h)) = (bins, h) {
            let b: Map<String, Value> = hist_bins(h)
                .into_iter()
                .map(|(v, c)| (v.to_string(), c.into()))
                .collect();
            o["bins"] = Value::Object(b);
        }
    }
    o
}

/// `read` / `write` / `trim` of a job (all zero for a direction the job does not do).
fn direction(c: &CellResult, k: OpKind, bins: bool, sel: fn(&TsPoint) -> Option<&TsOp>) -> Value {
    let r = c.results.get(k);
    let h = hist(c, k);
    let did = r.ops > 0;
    // Per-second samples (seconds without this operation count as 0 while it ran).
    let (bw, iops): (Vec<f64>, Vec<f64>) = if did {
        c.timeseries
            .iter()
            .map(|p| sel(p).map_or((0.0, 0.0), |o| (o.bytes_per_sec / 1024.0, o.iops)))
            .unzip()
    } else {
        (Vec::new(), Vec::new())
    };
    let (bw_mean, bw_dev) = mean_dev(&bw);
    let (iops_mean, iops_dev) = mean_dev(&iops);
    let min_of = |v: &[f64]| {
        v.iter()
            .copied()
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))))
            .unwrap_or(0.0)
    };
    let max_of = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let bw_bytes = r.bytes_per_sec.round() as u64;
    let lat = lat_obj(r.lat_ns.as_ref(), h, r.ops, false, false);
    // The queue engines: clat from the submission on, slat before it (lat = slat + clat per
    // I/O, as fio's); the others, as fio's sync engines, clat = lat and no slat.
    let ch = c.clat_hists.get(k as usize).filter(|h| h.count() > 0);
    let mut clat = match ch {
        Some(ch) => lat_obj(
            LatSummary::from_hist(ch).as_ref(),
            Some(ch),
            r.ops,
            did,
            bins,
        ),
        None => lat_obj(r.lat_ns.as_ref(), h, r.ops, did, bins),
    };
    // clat's mean exactly (the histogram's is within 0.1 %): each I/O's lat is its slat plus
    // its clat, so the means add up, as fio's do (fio's own t0015..t0017 check it to 1 ns)
    if let (Some(_), Some(l), Some(s)) = (ch, r.lat_ns.as_ref(), r.slat_ns.as_ref()) {
        clat["mean"] = json!(l.mean - s.mean);
    }
    // fio counts a direction's runtime only when it moved bytes (backend.c, `update_runtime`),
    // and its iops over that runtime: 0 for the cycles of cpuio and exec
    let timed = did && r.bytes > 0;
    json!({
        "io_bytes": r.bytes,
        "io_kbytes": r.bytes / 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes / 1024,
        "iops": if timed { r.iops } else { 0.0 },
        "runtime": if timed { (c.window_s * 1000.0).round() as u64 } else { 0 },
        "total_ios": r.ops,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": lat_obj(r.slat_ns.as_ref(), None, r.ops, false, false),
        "clat_ns": clat,
        "lat_ns": lat,
        "bw_min": min_of(&bw).round() as u64,
        "bw_max": max_of(&bw).round() as u64,
        "bw_agg": if did { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": bw.len(),
        "iops_min": min_of(&iops).round() as u64,
        "iops_max": max_of(&iops).round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": iops.len(),
    })
}

/// fio's `latency_ns` / `latency_us` / `latency_ms`: percent of the reads and writes whose
/// latency falls under each bound (and at or above the one before), from the histograms.
fn latency_maps(c: &CellResult) -> [(&'static str, Value); 3] {
    const BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    let idx = |x: u64| BOUNDS.iter().filter(|&&b| b <= x).count();
    let mut total = 0u64;
    for k in [OpKind::Read, OpKind::Write] {
        let Some(h) = hist(c, k) else { continue };
        for (v, n) in hist_bins(h) {
            total += n;
            if v < 1000 {
                ns[idx(v)] += n;
            } else if v < 1_000_000 {
                us[idx(v / 1000)] += n;
            } else {
                let m = v / 1_000_000;
                let i = if m >= 2000 {
                    11
                } else if m >= 1000 {
                    10
                } else {
                    idx(m)
                };
                ms[i] += n;
            }
        }
    }
    let pct = |n: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * n as f64 / total as f64
        }
    };
    let map = |counts: &[u64], keys: &[&str]| -> Value {
        Value::Object(
            keys.iter()
                .zip(counts)
                .map(|(k, &n)| (k.to_string(), pct(n).into()))
                .collect(),
        )
    };
    let keys = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    let ms_keys = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    [
        ("latency_ns", map(&ns, &keys)),
        ("latency_us", map(&us, &keys)),
        ("latency_ms", map(&ms, &ms_keys)),
    ]
}

/// fio's `error`: 0, or the errno of the cell's most frequent failure (1 for one without an
/// errno, such as a short I/O).
fn error_code(c: &CellResult) -> i32 {
    let Some((name, _)) = c.errors.iter().max_by_key(|(_, n)| **n) else {
        return 0;
    };
    match name.as_str() {
        "EIO" => libc::EIO,
        "ENOSPC" => libc::ENOSPC,
        "EINVAL" => libc::EINVAL,
        "EAGAIN" => libc::EAGAIN,
        "EBADF" => libc::EBADF,
        "EFAULT" => libc::EFAULT,
        "EROFS" => libc::EROFS,
        "ENXIO" => libc::ENXIO,
        "EINTR" => libc::EINTR,
        "ENOMEM" => libc::ENOMEM,
        "EPERM" => libc::EPERM,
        "EACCES" => libc::EACCES,
        "ETIMEDOUT" => libc::ETIMEDOUT,
        "EDQUOT" => libc::EDQUOT,
        "EFBIG" => libc::EFBIG,
        "ENODEV" => libc::ENODEV,
        "EOPNOTSUPP" => libc::EOPNOTSUPP,
        "ECANCELED" => libc::ECANCELED,
        other => other
            .strip_prefix("errno ")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1),
    }
}

/// One fio job for a cell.
fn job(c: &CellResult, groupid: usize, bins: bool) -> Value {
    let j = &c.job.job;
    let threads = f64::from(j.threads.max(1));
    let fsync = &c.results.fsync;
    let fh = hist(c, OpKind::Fsync);
    let mut o = Map::new();
    o.insert("jobname".into(), c.mode.clone().into());
    o.insert("groupid".into(), groupid.into());
    o.insert("error".into(), error_code(c).into());
    o.insert("eta".into(), 0.into());
    o.insert(
        "elapsed".into(),
        ((c.duration_s + j.ramp_s).round() as u64).into(),
    );
    o.insert("job options".into(), Value::Object(job_options(c)));
    o.insert(
        "read".into(),
        direction(c, OpKind::Read, bins, |p| p.read.as_ref()),
    );
    o.insert(
        "write".into(),
        direction(c, OpKind::Write, bins, |p| p.write.as_ref()),
    );
    o.insert(
        "trim".into(),
        direction(c, OpKind::Trim, bins, |p| p.trim.as_ref()),
    );
    o.insert(
        "sync".into(),
        json!({
            "total_ios": fsync.ops,
            "lat_ns": lat_obj(fsync.lat_ns.as_ref(), fh, fsync.ops, fsync.ops > 0, bins),
        }),
    );
    o.insert(
        "job_runtime".into(),
        ((c.window_s * 1000.0 * threads).round() as u64).into(),
    );
    o.insert("usr_cpu".into(), (c.cpu.user_pct / threads).into());
    o.insert("sys_cpu".into(), (c.cpu.sys_pct / threads).into());
    for k in ["ctx", "majf", "minf"] {
        o.insert(k.into(), 0.into());
    }
    // Every thread keeps `iodepth` I/Os in flight (1 for the synchronous engines).
    let depth = if j.engine.caps().async_queue {
        j.iodepth
    } else {
        1
    };
    let level: Map<String, Value> = [1u32, 2, 4, 8, 16, 32, 64]
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let key = if d == 64 {
                ">=64".into()
            } else {
                d.to_string()
            };
            let next = [2u32, 4, 8, 16, 32, 64, u32::MAX][i];
            let here = depth >= d && depth < next;
            (key, (if here { 100.0 } else { 0.0 }).into())
        })
        .collect();
    o.insert("iodepth_level".into(), Value::Object(level));
    for (k, v) in latency_maps(c) {
        o.insert(k.into(), v);
    }
    // fio's latency_target: the depth the search ended at, the target (ns), the window (µs)
    let lt = j.timing.lat_target;
    let depth = c
        .latency_depth
        .filter(|_| lt.is_some())
        .unwrap_or(j.iodepth);
    o.insert("latency_depth".into(), depth.into());
    o.insert(
        "latency_target".into(),
        lt.map_or(0, |l| l.target_ns).into(),
    );
    o.insert(
        "latency_percentile".into(),
        lt.map_or(100.0, |l| l.percentile).into(),
    );
    o.insert(
        "latency_window".into(),
        lt.map_or(0, |l| l.window_us).into(),
    );
    if let (Some(spec), Some(st)) = (&j.timing.steady, c.steady.first()) {
        o.insert("steadystate".into(), steadystate(spec, st));
    }
    Value::Object(o)
}

/// fio's `steadystate` of a job (stat.c `show_thread_status_json`): its criterion as fio spells
/// it, the window's length, whether it was attained, the last criterion judged, and the
/// window's samples (oldest first) with their whole-number means.
fn steadystate(spec: &Steady, st: &SteadyState) -> Value {
    let pct = if spec.pct { "%" } else { "" };
    let c = st.criterion as f32;
    // as C's printf spells what is not a number
    let criterion = match c {
        c if c.is_nan() => format!("nan{pct}"),
        c if c.is_infinite() => format!("{}inf{pct}", if c < 0.0 { "-" } else { "" }),
        c => format!("{c:.6}{pct}"),
    };
    let (iops_mean, bw_mean) = st.means();
    json!({
        "ss": spec.fio_spelling(),
        "duration": spec.window_s,
        "attained": u8::from(st.attained),
        "criterion": criterion,
        "max_deviation": st.max_deviation,
        "slope": st.slope,
        "data": {
            "bw_mean": bw_mean,
            "iops_mean": iops_mean,
            "iops": st.iops,
            "bw": st.bw_bytes_per_sec,
        },
    })
}

/// fio's `disk_util[]`: per device, the counts over the measured windows of all cells, from the
/// iostat -x figures iolab sampled (rates × seconds, rounded): I/Os, merges, ticks (ms spent on
/// reads / writes), in_queue (ms × average queue size) and util (%, time-weighted).
fn disk_util(doc: &RunDoc) -> Value {
    #[derive(Default)]
    struct D {
        r: f64,
        w: f64,
        rm: f64,
        wm: f64,
        rt: f64,
        wt: f64,
        q: f64,
        busy: f64,
        secs: f64,
    }
    let mut by: Vec<(String, D)> = Vec::new();
    for c in &doc.runs {
        let Some(dev) = &c.device else { continue };
        let s = &dev.summary;
        let t = s.dur_s;
        for name in &dev.devices {
            let Some(x) = s.devices.get(name) else {
                continue;
            };
            let i = match by.iter().position(|(n, _)| n == name) {
                Some(i) => i,
                None => {
                    by.push((name.clone(), D::default()));
                    by.len() - 1
                }
            };
            let d = &mut by[i].1;
            d.r += x.r_s * t;
            d.w += x.w_s * t;
            d.rm += x.rrqm_s * t;
            d.wm += x.wrqm_s * t;
            d.rt += x.r_await_ms * x.r_s * t;
            d.wt += x.w_await_ms * x.w_s * t;
            d.q += x.aqu_sz * t * 1000.0;
            d.busy += x.util_pct * t;
            d.secs += t;
        }
    }
    Value::Array(
        by.into_iter()
            .map(|(name, d)| {
                let util = if d.secs > 0.0 { d.busy / d.secs } else { 0.0 };
                json!({
                    "name": name,
                    "read_ios": d.r.round() as u64,
                    "write_ios": d.w.round() as u64,
                    "read_merges": d.rm.round() as u64,
                    "write_merges": d.wm.round() as u64,
                    "read_ticks": d.rt.round() as u64,
                    "write_ticks": d.wt.round() as u64,
                    "in_queue": d.q.round() as u64,
                    "util": util,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_give_the_histograms_own_percentiles() {
        let mut h = LatHist::new();
        for i in 1..=10_000u64 {
            h.record(i * 37 % 5_000_000 + 500);
        }
        let b = hist_bins(&h);
        let total: u64 = b.iter().map(|x| x.1).sum();
        assert_eq!(total, h.count());
        assert_eq!(b.last().unwrap().0, h.h.max());
        for q in FIO_PERCENTILES {
            let rank = ((q / 100.0) * total as f64).ceil() as u64;
            let mut cum = 0;
            let v = b
                .iter()
                .find(|(_, c)| {
                    cum += c;
                    cum >= rank
                })
                .unwrap()
                .0;
            assert_eq!(v, h.percentile(q), "p{q}");
        }
    }

    #[test]
    fn percentile_keys_are_fios() {
        assert_eq!(format!("{:.6}", FIO_PERCENTILES[12]), "99.000000");
        assert_eq!(format!("{:.6}", FIO_PERCENTILES[16]), "99.990000");
    }

    #[test]
    fn sample_stddev_is_fios() {
        assert_eq!(mean_dev(&[]), (0.0, 0.0));
        assert_eq!(mean_dev(&[4.0]), (4.0, 0.0));
        let (m, d) = mean_dev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(m, 5.0);
        assert!((d - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }
}
