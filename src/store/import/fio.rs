//! fio JSON and json+ output (`--output-format=json` / `json+`).

use super::*;
// ---------------------------------------------------------------------------------------------
// fio
// ---------------------------------------------------------------------------------------------

pub(super) fn fio_err(path: &str, msg: impl Into<String>) -> ImportError {
    ImportError::Fio {
        path: path.to_string(),
        msg: msg.into(),
    }
}

/// `parent` + `.key`, or `["key"]` when the key is not a plain identifier ("job options").
pub(super) fn key_path(parent: &str, key: &str) -> String {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{key:?}]"),
    }
}

/// Byte offset where the JSON document starts: the first line that begins with '{' (fio may
/// print "note: ..." warnings or job description lines first), else the first '{' at all.
pub(super) fn json_start(text: &str) -> Option<usize> {
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(off + line.find('{').unwrap_or(0));
        }
        off += line.len();
    }
    text.find('{')
}

/// Reads the first JSON value at `start` (text after it, e.g. trailing warnings, is ignored).
/// Errors carry line/column numbers of the whole input.
pub(super) fn read_json(text: &str, start: usize) -> Result<Value, ImportError> {
    let skipped_lines = text[..start].matches('\n').count();
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let base = full.strip_suffix(&suffix).unwrap_or(&full);
            let line = e.line() + skipped_lines;
            let column = if e.line() == 1 {
                e.column() + (start - text[..start].rfind('\n').map_or(0, |p| p + 1))
            } else {
                e.column()
            };
            Err(fio_err(
                "$",
                format!("not valid JSON: {base} at line {line} column {column}"),
            ))
        }
        None => Err(fio_err("$", "no JSON document found")),
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) fn as_obj<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ImportError> {
    v.as_object()
        .ok_or_else(|| fio_err(path, format!("expected an object, found {}", type_name(v))))
}

pub(super) fn req<'a>(
    obj: &'a Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<&'a Value, ImportError> {
    obj.get(key)
        .ok_or_else(|| fio_err(&key_path(parent, key), "missing"))
}

pub(super) fn num_f64(v: &Value, path: &str) -> Result<f64, ImportError> {
    v.as_f64()
        .ok_or_else(|| fio_err(path, format!("expected a number, found {}", type_name(v))))
}

pub(super) fn num_u64(v: &Value, path: &str) -> Result<u64, ImportError> {
    if let Some(n) = v.as_u64() {
        return Ok(n);
    }
    match v.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64 => Ok(f as u64),
        Some(f) => Err(fio_err(
            path,
            format!("expected a non-negative integer, found {f}"),
        )),
        None => Err(fio_err(
            path,
            format!("expected a non-negative integer, found {}", type_name(v)),
        )),
    }
}

pub(super) fn req_f64(
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<f64, ImportError> {
    num_f64(req(obj, parent, key)?, &key_path(parent, key))
}

pub(super) fn req_u64(
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<u64, ImportError> {
    num_u64(req(obj, parent, key)?, &key_path(parent, key))
}

pub(super) fn opt_f64(
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<f64>, ImportError> {
    obj.get(key)
        .map(|v| num_f64(v, &key_path(parent, key)))
        .transpose()
}

pub(super) fn opt_obj<'a>(
    obj: &'a Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, ImportError> {
    obj.get(key)
        .map(|v| as_obj(v, &key_path(parent, key)))
        .transpose()
}

/// Parses a fio size ("4k", "16k", "1m", "64KiB", "4096", "1.5m"); fio's k is 1024.
/// For a per-direction list ("4k,16k") the first (read) value is taken; for a range
/// ("4k-16k") the lower bound.
pub fn parse_fio_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let first = s.split([',', ':']).next()?.trim();
    let first = first.split('-').next()?.trim();
    if first.is_empty() {
        return None;
    }
    let lower = first.to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (num, unit) = lower.split_at(digits_end);
    let n: f64 = num.parse().ok()?;
    let unit = unit.trim();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let mult: u64 = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        "p" => 1 << 50,
        _ => return None,
    };
    let bytes = n * mult as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then(|| bytes.round() as u64)
}

/// Maps a fio `rw` value to an iolab mode name ("randread" -> "rndrd" ...); values without an
/// iolab equivalent are kept ("rw"/"readwrite" -> "seqrw", "trim" -> "trim").
pub fn fio_mode(rw: &str) -> String {
    let rw = rw.split(':').next().unwrap_or(rw).trim();
    match rw {
        "read" => "seqrd",
        "write" => "seqwr",
        "randread" => "rndrd",
        "randwrite" => "rndwr",
        "randrw" => "rndrw",
        "rw" | "readwrite" => "seqrw",
        other => other,
    }
    .to_string()
}

/// Looks an option up in the job's options, then the global ones; returns its value as a
/// string and its JSON path.
pub(super) fn fio_opt(
    job_opts: Option<&Map<String, Value>>,
    job_path: &str,
    global: Option<&Map<String, Value>>,
    keys: &[&str],
) -> Result<Option<(String, String)>, ImportError> {
    let sources = [(job_opts, job_path), (global, "[\"global options\"]")];
    for (src, base) in sources {
        let Some(src) = src else { continue };
        for key in keys {
            if let Some(v) = src.get(*key) {
                let path = key_path(base, key);
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => (if *b { "1" } else { "0" }).to_string(),
                    other => {
                        return Err(fio_err(
                            &path,
                            format!("expected a string, found {}", type_name(other)),
                        ));
                    }
                };
                return Ok(Some((s, path)));
            }
        }
    }
    Ok(None)
}

pub(super) fn fio_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Fills the percentile fields of `lat` from a fio "percentile" object.
pub(super) fn fio_percentiles(
    lat: &mut ReportedLat,
    pct: &Map<String, Value>,
    path: &str,
) -> Result<(), ImportError> {
    for (k, v) in pct {
        let p: f64 = k
            .trim()
            .parse()
            .map_err(|_| fio_err(&key_path(path, k), "percentile key is not a number"))?;
        let val = num_f64(v, &key_path(path, k))?;
        let slot = match p {
            _ if (p - 50.0).abs() < 1e-6 => &mut lat.p50,
            _ if (p - 90.0).abs() < 1e-6 => &mut lat.p90,
            _ if (p - 95.0).abs() < 1e-6 => &mut lat.p95,
            _ if (p - 99.0).abs() < 1e-6 => &mut lat.p99,
            _ if (p - 99.9).abs() < 1e-6 => &mut lat.p99_9,
            _ if (p - 99.99).abs() < 1e-6 => &mut lat.p99_99,
            _ => continue,
        };
        *slot = Some(val);
    }
    Ok(())
}

/// json+ latency bins: (value_ns, count), sorted by value.
pub(super) type Bins = Vec<(u64, u64)>;

pub(super) fn fio_bins(bins: &Map<String, Value>, path: &str) -> Result<Bins, ImportError> {
    let mut out = Vec::with_capacity(bins.len());
    for (k, v) in bins {
        let value: u64 = k
            .trim()
            .parse()
            .map_err(|_| fio_err(&key_path(path, k), "bin key is not an integer"))?;
        out.push((value, num_u64(v, &key_path(path, k))?));
    }
    out.sort_unstable();
    Ok(out)
}

/// Latency summary and json+ bins of one fio direction (or the "sync" object).
/// min/mean/max/stddev from `lat_ns` (`clat_ns` when there is no `lat_ns`); percentiles and bins
/// from `lat_ns` when present there, else from `clat_ns`.
pub(super) fn fio_lat(
    dir: &Map<String, Value>,
    path: &str,
) -> Result<(Option<ReportedLat>, Option<Bins>), ImportError> {
    let lat_path = key_path(path, "lat_ns");
    let clat_path = key_path(path, "clat_ns");
    let lat_ns = opt_obj(dir, path, "lat_ns")?;
    let clat_ns = opt_obj(dir, path, "clat_ns")?;
    let mut lat = ReportedLat::default();
    if let Some((stats, p)) = lat_ns
        .map(|o| (o, &lat_path))
        .or(clat_ns.map(|o| (o, &clat_path)))
    {
        lat.min = opt_f64(stats, p, "min")?;
        lat.mean = opt_f64(stats, p, "mean")?;
        lat.max = opt_f64(stats, p, "max")?;
        lat.stddev = opt_f64(stats, p, "stddev")?;
    }
    let mut pct_src = None;
    let mut bins_src = None;
    for (o, p) in [(lat_ns, &lat_path), (clat_ns, &clat_path)] {
        let Some(o) = o else { continue };
        if pct_src.is_none()
            && let Some(pct) = opt_obj(o, p, "percentile")?
        {
            pct_src = Some((pct, key_path(p, "percentile")));
        }
        if bins_src.is_none()
            && let Some(b) = opt_obj(o, p, "bins")?
        {
            bins_src = Some((b, key_path(p, "bins")));
        }
    }
    if let Some((pct, p)) = pct_src {
        fio_percentiles(&mut lat, pct, &p)?;
    }
    let bins = bins_src.map(|(b, p)| fio_bins(b, &p)).transpose()?;
    Ok(((!lat.is_empty()).then_some(lat), bins))
}

/// Parses fio `--output-format=json` or `json+` output. Leading non-JSON lines are skipped.
pub fn parse_fio_json(text: &str) -> Result<Imported, ImportError> {
    let start = json_start(text).ok_or_else(|| fio_err("$", "no JSON object found"))?;
    let doc = read_json(text, start)?;
    let top = as_obj(&doc, "$")?;
    let version = match req(top, "", "fio version")? {
        Value::String(s) => s.clone(),
        other => {
            return Err(fio_err(
                "[\"fio version\"]",
                format!("expected a string, found {}", type_name(other)),
            ));
        }
    };
    let start_time = fio_start_time(top);
    let global = opt_obj(top, "", "global options")?;
    let jobs = match req(top, "", "jobs")? {
        Value::Array(a) => a,
        other => {
            return Err(fio_err(
                "jobs",
                format!("expected an array, found {}", type_name(other)),
            ));
        }
    };
    if jobs.is_empty() {
        return Err(fio_err("jobs", "no jobs in the result"));
    }
    // With group_reporting fio prints one entry per group; without it one per thread. The
    // "group_reporting" flag itself is not printed, so count the entries of each group.
    let groupids: Vec<Option<u64>> = jobs
        .iter()
        .map(|j| j.get("groupid").and_then(Value::as_u64))
        .collect();
    let mut cells = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        let jp = format!("jobs[{i}]");
        let job = as_obj(job, &jp)?;
        let name = match req(job, &jp, "jobname")? {
            Value::String(s) => s.clone(),
            other => {
                return Err(fio_err(
                    &key_path(&jp, "jobname"),
                    format!("expected a string, found {}", type_name(other)),
                ));
            }
        };
        let job_opts_path = key_path(&jp, "job options");
        let job_opts = opt_obj(job, &jp, "job options")?;
        let opt = |keys: &[&str]| fio_opt(job_opts, &job_opts_path, global, keys);

        let mode = fio_mode(&opt(&["rw", "readwrite"])?.map_or("read".into(), |(s, _)| s));
        let bs_bytes = match opt(&["bs", "blocksize"])? {
            Some((s, p)) => parse_fio_size(&s)
                .filter(|&b| b > 0)
                .ok_or_else(|| fio_err(&p, format!("cannot parse block size {s:?}")))?,
            None => 4096,
        };
        let numjobs = match opt(&["numjobs"])? {
            Some((s, p)) => s
                .trim()
                .parse::<u32>()
                .map_err(|_| fio_err(&p, format!("cannot parse numjobs {s:?}")))?,
            None => 1,
        };
        let merged_group = match groupids[i] {
            Some(g) => groupids.iter().filter(|x| **x == Some(g)).count() == 1,
            None => true,
        };
        let threads = if merged_group { numjobs.max(1) } else { 1 };
        let iodepth = match opt(&["iodepth"])? {
            Some((s, p)) => s
                .trim()
                .parse::<u32>()
                .map_err(|_| fio_err(&p, format!("cannot parse iodepth {s:?}")))?,
            None => 1,
        };
        let direct = match opt(&["direct"])? {
            Some((s, p)) => {
                fio_bool(&s).ok_or_else(|| fio_err(&p, format!("cannot parse direct {s:?}")))?
            }
            None => match opt(&["buffered"])? {
                Some((s, p)) => !fio_bool(&s)
                    .ok_or_else(|| fio_err(&p, format!("cannot parse buffered {s:?}")))?,
                None => false,
            },
        };
        let engine = opt(&["ioengine"])?.map_or("psync".into(), |(s, _)| s);

        // Directions. "runtime" of a direction is the wall time (the longest thread under
        // group_reporting); "job_runtime" is summed over the threads of a group.
        let mut dirs = Vec::new();
        let mut runtime_ms: f64 = 0.0;
        for (key, required) in [("read", true), ("write", true), ("trim", false)] {
            let dp = key_path(&jp, key);
            let dir = if required {
                as_obj(req(job, &jp, key)?, &dp)?
            } else {
                match opt_obj(job, &jp, key)? {
                    Some(d) => d,
                    None => continue,
                }
            };
            let total = req_u64(dir, &dp, "total_ios")?;
            if total == 0 {
                continue;
            }
            runtime_ms = runtime_ms.max(req_f64(dir, &dp, "runtime")?);
            dirs.push((key, dir, dp, total));
        }
        let duration_s = if runtime_ms > 0.0 {
            runtime_ms / 1000.0
        } else {
            match job.get("job_runtime") {
                Some(v) => num_f64(v, &key_path(&jp, "job_runtime"))? / 1000.0 / f64::from(threads),
                None => 0.0,
            }
        };
        let mut ops = Vec::new();
        for (key, dir, dp, total) in dirs {
            let (lat_ns, hist_bins) = fio_lat(dir, &dp)?;
            ops.push(OpSummary {
                op: key.to_string(),
                ops: total,
                bytes: req_u64(dir, &dp, "io_bytes")?,
                iops: req_f64(dir, &dp, "iops")?,
                bytes_per_sec: req_f64(dir, &dp, "bw_bytes")?,
                lat_ns,
                hist_bins,
            });
        }
        if let Some(sync) = opt_obj(job, &jp, "sync")? {
            let sp = key_path(&jp, "sync");
            let total = req_u64(sync, &sp, "total_ios")?;
            if total > 0 {
                let (lat_ns, hist_bins) = fio_lat(sync, &sp)?;
                ops.push(OpSummary {
                    op: "fsync".into(),
                    ops: total,
                    bytes: 0,
                    iops: if duration_s > 0.0 {
                        total as f64 / duration_s
                    } else {
                        0.0
                    },
                    bytes_per_sec: 0.0,
                    lat_ns,
                    hist_bins,
                });
            }
        }
        let mut options = global.cloned().unwrap_or_default();
        if let Some(j) = job_opts {
            options.extend(j.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        cells.push(Cell {
            name,
            mode,
            threads,
            iodepth,
            bs_bytes,
            direct,
            engine,
            duration_s,
            ops,
            options: Value::Object(options),
        });
    }
    Ok(Imported {
        tool: "fio".into(),
        tool_version: version,
        start_time,
        options: Value::Object(global.cloned().unwrap_or_default()),
        cells,
    })
}

/// fio's start time: "timestamp_ms" / "timestamp" (Unix time), else "time" (local time text).
pub(super) fn fio_start_time(top: &Map<String, Value>) -> Option<String> {
    use chrono::{DateTime, Local, NaiveDateTime, SecondsFormat, TimeZone};
    let from_ms = |ms: i64| {
        DateTime::from_timestamp_millis(ms).map(|t| {
            t.with_timezone(&Local)
                .to_rfc3339_opts(SecondsFormat::Millis, true)
        })
    };
    if let Some(ms) = top
        .get("timestamp_ms")
        .and_then(Value::as_i64)
        .filter(|&x| x > 0)
    {
        return from_ms(ms);
    }
    if let Some(s) = top
        .get("timestamp")
        .and_then(Value::as_i64)
        .filter(|&x| x > 0)
    {
        return from_ms(s.checked_mul(1000)?);
    }
    let text = top.get("time")?.as_str()?;
    let naive = NaiveDateTime::parse_from_str(text.trim(), "%a %b %e %H:%M:%S %Y").ok()?;
    Local
        .from_local_datetime(&naive)
        .earliest()
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
}
