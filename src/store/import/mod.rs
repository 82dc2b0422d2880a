//! Import of results from other tools (fio JSON / json+, sysbench fileio text) into one
//! normalized structure, [`Imported`], so iolab can store them beside its own runs.
//!
//! Entry points: [`parse`] (detects the format), [`parse_fio_json`], [`parse_sysbench_fileio`].

pub use crate::model::import::*;
use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ImportError {
    /// fio JSON that is malformed or lacks a needed key; `path` is the JSON path at fault, e.g. "jobs[0].read.iops"
    #[error("fio JSON: {path}: {msg}")]
    Fio { path: String, msg: String },
    /// sysbench text that cannot be parsed; `line` is 1-based
    #[error("sysbench output, line {line}: {msg}")]
    Sysbench { line: usize, msg: String },
    #[error(
        "not a result iolab can import: {0} (expected fio --output-format=json or json+, or the output of `sysbench fileio ... run`)"
    )]
    Unknown(String),
}

/// Detects the format (JSON object with "fio version" -> fio; text containing "sysbench" and
/// "File operations:" -> sysbench) and parses.
pub fn parse(text: &str) -> Result<Imported, ImportError> {
    if text.trim().is_empty() {
        return Err(ImportError::Unknown("the input is empty".into()));
    }
    if let Some(start) = json_start(text) {
        match read_json(text, start) {
            Ok(v) => {
                if v.get("fio version").is_some() {
                    return parse_fio_json(text);
                }
                let what = if v.is_object() {
                    "a JSON object without a \"fio version\" key"
                } else {
                    "JSON that is not an object"
                };
                return Err(ImportError::Unknown(what.into()));
            }
            // Broken fio JSON: report where it breaks rather than "unknown format".
            Err(e) if text.contains("\"fio version\"") => return Err(e),
            Err(_) => {}
        }
    }
    if text.contains("sysbench") {
        if text.contains("File operations:") {
            return parse_sysbench_fileio(text);
        }
        return Err(ImportError::Unknown(
            "sysbench output without a \"File operations:\" section".into(),
        ));
    }
    Err(ImportError::Unknown(
        "neither fio JSON nor sysbench fileio output".into(),
    ))
}

// ---------------------------------------------------------------------------------------------
// fio
// ---------------------------------------------------------------------------------------------

fn fio_err(path: &str, msg: impl Into<String>) -> ImportError {
    ImportError::Fio {
        path: path.to_string(),
        msg: msg.into(),
    }
}

/// `parent` + `.key`, or `["key"]` when the key is not a plain identifier ("job options").
fn key_path(parent: &str, key: &str) -> String {
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
fn json_start(text: &str) -> Option<usize> {
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
fn read_json(text: &str, start: usize) -> Result<Value, ImportError> {
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

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn as_obj<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ImportError> {
    v.as_object()
        .ok_or_else(|| fio_err(path, format!("expected an object, found {}", type_name(v))))
}

fn req<'a>(obj: &'a Map<String, Value>, parent: &str, key: &str) -> Result<&'a Value, ImportError> {
    obj.get(key)
        .ok_or_else(|| fio_err(&key_path(parent, key), "missing"))
}

fn num_f64(v: &Value, path: &str) -> Result<f64, ImportError> {
    v.as_f64()
        .ok_or_else(|| fio_err(path, format!("expected a number, found {}", type_name(v))))
}

fn num_u64(v: &Value, path: &str) -> Result<u64, ImportError> {
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

fn req_f64(obj: &Map<String, Value>, parent: &str, key: &str) -> Result<f64, ImportError> {
    num_f64(req(obj, parent, key)?, &key_path(parent, key))
}

fn req_u64(obj: &Map<String, Value>, parent: &str, key: &str) -> Result<u64, ImportError> {
    num_u64(req(obj, parent, key)?, &key_path(parent, key))
}

fn opt_f64(obj: &Map<String, Value>, parent: &str, key: &str) -> Result<Option<f64>, ImportError> {
    obj.get(key)
        .map(|v| num_f64(v, &key_path(parent, key)))
        .transpose()
}

fn opt_obj<'a>(
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
fn fio_opt(
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

fn fio_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Fills the percentile fields of `lat` from a fio "percentile" object.
fn fio_percentiles(lat: &mut Lat, pct: &Map<String, Value>, path: &str) -> Result<(), ImportError> {
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
type Bins = Vec<(u64, u64)>;

fn fio_bins(bins: &Map<String, Value>, path: &str) -> Result<Bins, ImportError> {
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
fn fio_lat(
    dir: &Map<String, Value>,
    path: &str,
) -> Result<(Option<Lat>, Option<Bins>), ImportError> {
    let lat_path = key_path(path, "lat_ns");
    let clat_path = key_path(path, "clat_ns");
    let lat_ns = opt_obj(dir, path, "lat_ns")?;
    let clat_ns = opt_obj(dir, path, "clat_ns")?;
    let mut lat = Lat::default();
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
fn fio_start_time(top: &Map<String, Value>) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// sysbench fileio
// ---------------------------------------------------------------------------------------------

fn sb_err(line: usize, msg: impl Into<String>) -> ImportError {
    ImportError::Sysbench {
        line,
        msg: msg.into(),
    }
}

fn sb_num(s: &str, key: &str, line: usize) -> Result<f64, ImportError> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| sb_err(line, format!("malformed number {:?} for {key:?}", s.trim())))
}

/// Parses a sysbench size ("16KiB", "64MiB", "2GiB", "512B").
pub fn parse_sysbench_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    let n: f64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "KiB" | "Kb" | "K" | "k" => 1 << 10,
        "MiB" | "Mb" | "M" | "m" => 1 << 20,
        "GiB" | "Gb" | "G" | "g" => 1 << 30,
        "TiB" | "Tb" | "T" | "t" => 1 << 40,
        "PiB" | "Pb" | "P" | "p" => 1 << 50,
        _ => return None,
    };
    let bytes = n * mult as f64;
    (bytes.is_finite() && bytes < u64::MAX as f64).then(|| bytes.round() as u64)
}

/// Maps sysbench's "Doing <X> test" to an iolab mode name.
pub fn sysbench_mode(test: &str) -> String {
    match test.trim() {
        "sequential write (creation)" => "seqwr",
        "sequential rewrite" => "seqrewr",
        "sequential read" => "seqrd",
        "random read" => "rndrd",
        "random write" => "rndwr",
        "random r/w" => "rndrw",
        other => other,
    }
    .to_string()
}

/// Maps sysbench's "Using <X> I/O mode" to an engine name.
fn sysbench_engine(mode: &str) -> String {
    let mode = mode.trim();
    match mode {
        "synchronous" => "sync".into(),
        "asynchronous" => "async".into(),
        m if m.contains("mmap") => "mmap".into(),
        m => m.to_string(),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum SbSection {
    None,
    FileOps,
    Throughput,
    General,
    Latency,
    Other,
}

/// Parses the output of `sysbench fileio ... run` (sysbench 1.0.x).
///
/// The options block becomes key/value strings: sysbench's own "Key: value" lines as they are,
/// and "Files", "File size", "Total file size", "Block size", "Periodic FSYNC" (requests between
/// fsyncs), "I/O mode", "Test", "Random number generator", "Calling fsync() ..." for its
/// sentence-style lines. Missing items default to threads 1, block size 16 KiB, engine "sync",
/// mode "unknown", version "unknown".
pub fn parse_sysbench_fileio(text: &str) -> Result<Imported, ImportError> {
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.len().max(1);
    let mut version: Option<String> = None;
    let mut setup = SbSetup::default();
    let mut in_options = false;
    let mut section = SbSection::None;
    let mut saw_fileops = false;
    let (mut reads_s, mut writes_s, mut fsyncs_s) = (None, None, None);
    let (mut read_mib, mut written_mib) = (None, None);
    let (mut total_time, mut events) = (None, None);
    let mut lat = Lat::default();

    for (idx, raw) in lines.iter().enumerate() {
        let ln = idx + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if version.is_none()
            && let Some(rest) = line.strip_prefix("sysbench ")
        {
            version = rest.split_whitespace().next().map(str::to_string);
            continue;
        }
        match line {
            "Running the test with following options:" => {
                in_options = true;
                continue;
            }
            "File operations:" => (section, saw_fileops) = (SbSection::FileOps, true),
            "Throughput:" => section = SbSection::Throughput,
            "General statistics:" => section = SbSection::General,
            "Latency (ms):" => section = SbSection::Latency,
            "Threads fairness:" | "Latency histogram (values are in milliseconds)" => {
                section = SbSection::Other
            }
            "Initializing worker threads..." | "Threads started!" => section = SbSection::None,
            _ => {
                // interim reports ("[ 1s ] reads: ...") and anything outside a known block
                if line.starts_with('[') {
                    continue;
                }
                if in_options && section == SbSection::None {
                    setup.option(line, ln)?;
                    continue;
                }
                let Some((key, value)) = line.split_once(':') else {
                    continue;
                };
                let (key, value) = (key.trim(), value.trim());
                match (section, key) {
                    (SbSection::FileOps, "reads/s") => reads_s = Some(sb_num(value, key, ln)?),
                    (SbSection::FileOps, "writes/s") => writes_s = Some(sb_num(value, key, ln)?),
                    (SbSection::FileOps, "fsyncs/s") => fsyncs_s = Some(sb_num(value, key, ln)?),
                    (SbSection::Throughput, "read, MiB/s") => {
                        read_mib = Some(sb_num(value, key, ln)?)
                    }
                    (SbSection::Throughput, "written, MiB/s") => {
                        written_mib = Some(sb_num(value, key, ln)?)
                    }
                    (SbSection::General, "total time") => {
                        let v = value.strip_suffix('s').unwrap_or(value);
                        total_time = Some(sb_num(v, key, ln)?);
                    }
                    (SbSection::General, "total number of events") => {
                        events = Some(value.parse::<u64>().map_err(|_| {
                            sb_err(ln, format!("malformed number {value:?} for {key:?}"))
                        })?)
                    }
                    (SbSection::Latency, "min") => lat.min = Some(sb_num(value, key, ln)? * 1e6),
                    (SbSection::Latency, "avg") => lat.mean = Some(sb_num(value, key, ln)? * 1e6),
                    (SbSection::Latency, "max") => lat.max = Some(sb_num(value, key, ln)? * 1e6),
                    (SbSection::Latency, k) if k.ends_with("th percentile") => {
                        let p = k.trim_end_matches("th percentile").trim();
                        let p: u32 = p
                            .parse()
                            .map_err(|_| sb_err(ln, format!("malformed percentile {k:?}")))?;
                        let v = Some(sb_num(value, key, ln)? * 1e6);
                        match p {
                            50 => lat.p50 = v,
                            90 => lat.p90 = v,
                            95 => lat.p95 = v,
                            99 => lat.p99 = v,
                            _ => {}
                        }
                    }
                    _ => {}
                }
                continue;
            }
        }
        in_options = false;
    }

    if !saw_fileops {
        return Err(sb_err(last, "missing \"File operations:\" section"));
    }
    let missing = |what: &str, sect: &str| sb_err(last, format!("missing {what:?} under {sect:?}"));
    let reads_s = reads_s.ok_or_else(|| missing("reads/s:", "File operations:"))?;
    let writes_s = writes_s.ok_or_else(|| missing("writes/s:", "File operations:"))?;
    let fsyncs_s = fsyncs_s.ok_or_else(|| missing("fsyncs/s:", "File operations:"))?;
    let read_mib = read_mib.ok_or_else(|| missing("read, MiB/s:", "Throughput:"))?;
    let written_mib = written_mib.ok_or_else(|| missing("written, MiB/s:", "Throughput:"))?;
    let total_time = total_time.ok_or_else(|| missing("total time:", "General statistics:"))?;
    let events = events.ok_or_else(|| missing("total number of events:", "General statistics:"))?;

    const MIB: f64 = 1048576.0;
    let mut ops = Vec::new();
    for (op, rate, mib) in [
        ("read", reads_s, read_mib),
        ("write", writes_s, written_mib),
        ("fsync", fsyncs_s, 0.0),
    ] {
        if rate > 0.0 {
            ops.push(OpSummary {
                op: op.into(),
                ops: (rate * total_time).round() as u64,
                bytes: (mib * MIB * total_time).round() as u64,
                iops: rate,
                bytes_per_sec: mib * MIB,
                lat_ns: None,
                hist_bins: None,
            });
        }
    }
    ops.push(OpSummary {
        op: "events".into(),
        ops: events,
        bytes: 0,
        iops: if total_time > 0.0 {
            events as f64 / total_time
        } else {
            0.0
        },
        bytes_per_sec: 0.0,
        lat_ns: (!lat.is_empty()).then_some(lat),
        hist_bins: None,
    });
    let SbSetup {
        options,
        threads,
        direct,
        bs_bytes,
        engine,
        mode,
    } = setup;
    let options = Value::Object(options);
    Ok(Imported {
        tool: "sysbench".into(),
        tool_version: version.unwrap_or_else(|| "unknown".into()),
        start_time: None,
        options: options.clone(),
        cells: vec![Cell {
            name: "fileio".into(),
            mode,
            threads,
            iodepth: 1,
            bs_bytes,
            direct,
            engine,
            duration_s: total_time,
            ops,
            options,
        }],
    })
}

/// What sysbench's options block says (defaults where it says nothing).
struct SbSetup {
    options: Map<String, Value>,
    threads: u32,
    direct: bool,
    bs_bytes: u64,
    engine: String,
    mode: String,
}

impl Default for SbSetup {
    fn default() -> Self {
        SbSetup {
            options: Map::new(),
            threads: 1,
            direct: false,
            bs_bytes: 16384,
            engine: "sync".into(),
            mode: "unknown".into(),
        }
    }
}

impl SbSetup {
    /// One line of sysbench's "Running the test with following options:" block.
    fn option(&mut self, line: &str, ln: usize) -> Result<(), ImportError> {
        let options = &mut self.options;
        let mut put = |k: &str, v: &str| {
            options.insert(k.to_string(), Value::String(v.to_string()));
        };
        let sentence = line.strip_suffix('.').unwrap_or(line);
        if let Some(v) = line.strip_prefix("Number of threads:") {
            let v = v.trim();
            self.threads = v.parse().map_err(|_| {
                sb_err(
                    ln,
                    format!("malformed number {v:?} for \"Number of threads\""),
                )
            })?;
            put("Number of threads", v);
        } else if let Some(v) = line.strip_prefix("Extra file open flags:") {
            let v = v.trim();
            self.direct = v.contains("direct");
            put("Extra file open flags", v);
        } else if let Some(v) = line.strip_prefix("Block size ") {
            let v = v.trim();
            self.bs_bytes = parse_sysbench_size(v)
                .filter(|&b| b > 0)
                .ok_or_else(|| sb_err(ln, format!("malformed block size {v:?}")))?;
            put("Block size", v);
        } else if let Some(v) = line.strip_suffix(" total file size") {
            put("Total file size", v.trim());
        } else if let Some((n, size)) = line
            .strip_suffix(" each")
            .and_then(|l| l.split_once(" files, "))
        {
            put("Files", n.trim());
            put("File size", size.trim());
        } else if let Some(v) = sentence
            .strip_prefix("Periodic FSYNC enabled, calling fsync() each ")
            .and_then(|r| r.strip_suffix(" requests"))
        {
            put("Periodic FSYNC", v.trim());
        } else if let Some(v) = line
            .strip_prefix("Using ")
            .and_then(|r| r.strip_suffix(" I/O mode"))
        {
            self.engine = sysbench_engine(v);
            put("I/O mode", v.trim());
        } else if let Some(v) = line
            .strip_prefix("Doing ")
            .and_then(|r| r.strip_suffix(" test"))
        {
            self.mode = sysbench_mode(v);
            put("Test", v.trim());
        } else if let Some(v) = sentence.strip_prefix("Initializing random number generator from ")
        {
            put("Random number generator", v.trim());
        } else if let Some((k, v)) = line.split_once(':') {
            put(k.trim(), v.trim());
        } else if let Some((k, v)) = sentence.split_once(", ") {
            // "Calling fsync() at the end of test, Enabled."
            put(k.trim(), v.trim());
        } else if sentence.starts_with("Calling ") {
            // "Calling fsync() after each write operation."
            put(sentence, "Enabled");
        } else {
            put(sentence, "");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // ---- fio helpers ----

    fn dir(total: u64, runtime: u64) -> Value {
        json!({
            "io_bytes": total * 4096, "bw_bytes": (total * 4096 * 1000).checked_div(runtime).unwrap_or(0),
            "iops": if runtime > 0 { total as f64 * 1000.0 / runtime as f64 } else { 0.0 },
            "runtime": runtime, "total_ios": total,
            "clat_ns": { "min": 900, "max": 9000, "mean": 1900.0, "stddev": 10.0, "N": total,
                "percentile": { "1.000000": 950, "50.000000": 1000, "90.000000": 2000, "95.000000": 3000,
                    "99.000000": 4000, "99.900000": 5000, "99.990000": 6000 } },
            "lat_ns": { "min": 1000, "max": 10000, "mean": 2000.5, "stddev": 11.0, "N": total },
        })
    }

    fn job(name: &str, opts: Value, read: Value, write: Value) -> Value {
        json!({
            "jobname": name, "groupid": 0, "job options": opts,
            "read": read, "write": write, "trim": dir(0, 0),
            "sync": { "total_ios": 0, "lat_ns": { "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 } },
            "job_runtime": 1000,
        })
    }

    fn doc(global: Option<Value>, jobs: Vec<Value>) -> String {
        let mut d = json!({ "fio version": "fio-3.33", "timestamp": 1700000000, "time": "Tue Nov 14 22:13:20 2023", "jobs": jobs });
        if let Some(g) = global {
            d["global options"] = g;
        }
        serde_json::to_string_pretty(&d).unwrap()
    }

    fn one(opts: Value) -> Cell {
        let text = doc(None, vec![job("j", opts, dir(1000, 1000), dir(0, 0))]);
        parse_fio_json(&text).unwrap().cells.remove(0)
    }

    fn fio_error(text: &str) -> (String, String) {
        match parse_fio_json(text) {
            Err(ImportError::Fio { path, msg }) => (path, msg),
            other => panic!("expected a fio error, got {other:?}"),
        }
    }

    #[test]
    fn fio_rw_mapping() {
        for (rw, mode) in [
            ("randread", "rndrd"),
            ("randwrite", "rndwr"),
            ("randrw", "rndrw"),
            ("read", "seqrd"),
            ("write", "seqwr"),
            ("rw", "seqrw"),
            ("readwrite", "seqrw"),
            ("trim", "trim"),
            ("randtrim", "randtrim"),
            ("randread:8", "rndrd"),
        ] {
            assert_eq!(one(json!({ "rw": rw })).mode, mode, "rw={rw}");
        }
        assert_eq!(one(json!({ "readwrite": "randwrite" })).mode, "rndwr");
        // fio's default is a sequential read
        assert_eq!(one(json!({})).mode, "seqrd");
    }

    #[test]
    fn fio_sizes() {
        for (s, v) in [
            ("4k", 4096),
            ("16k", 16384),
            ("16K", 16384),
            ("1m", 1 << 20),
            ("4096", 4096),
            ("64KiB", 65536),
            ("8kb", 8192),
            ("1g", 1 << 30),
            ("512b", 512),
            ("1.5m", 1572864),
            ("4k,16k", 4096),
            ("4k-16k", 4096),
        ] {
            assert_eq!(parse_fio_size(s), Some(v), "{s}");
        }
        assert_eq!(parse_fio_size("abc"), None);
        assert_eq!(parse_fio_size("4x"), None);
        assert_eq!(parse_fio_size(""), None);
    }

    #[test]
    fn fio_job_options_over_global() {
        let g = json!({ "bs": "8k", "direct": "1", "ioengine": "libaio", "iodepth": "8", "rw": "randread", "size": "1G" });
        let text = doc(
            Some(g.clone()),
            vec![
                job("a", json!({ "name": "a" }), dir(1000, 1000), dir(0, 0)),
                job(
                    "b",
                    json!({ "name": "b", "bs": "1m", "direct": "0", "ioengine": "io_uring", "iodepth": "32", "rw": "write" }),
                    dir(0, 0),
                    dir(1000, 1000),
                ),
            ],
        );
        let imp = parse_fio_json(&text).unwrap();
        assert_eq!(imp.tool, "fio");
        assert_eq!(imp.tool_version, "fio-3.33");
        assert_eq!(imp.options, g);
        let (a, b) = (&imp.cells[0], &imp.cells[1]);
        assert_eq!(
            (
                a.name.as_str(),
                a.mode.as_str(),
                a.bs_bytes,
                a.direct,
                a.engine.as_str(),
                a.iodepth
            ),
            ("a", "rndrd", 8192, true, "libaio", 8)
        );
        assert_eq!(
            (
                b.name.as_str(),
                b.mode.as_str(),
                b.bs_bytes,
                b.direct,
                b.engine.as_str(),
                b.iodepth
            ),
            ("b", "seqwr", 1 << 20, false, "io_uring", 32)
        );
        assert_eq!(a.options["size"], "1G");
        assert_eq!(b.options["bs"], "1m");
        assert_eq!(b.options["size"], "1G");
        // two entries in one group: no group_reporting, each entry is one thread
        assert_eq!((a.threads, b.threads), (1, 1));
    }

    #[test]
    fn fio_defaults() {
        let c = one(json!({}));
        assert_eq!(
            (
                c.bs_bytes,
                c.iodepth,
                c.threads,
                c.direct,
                c.engine.as_str()
            ),
            (4096, 1, 1, false, "psync")
        );
        assert!(!one(json!({ "buffered": "1" })).direct);
        assert!(one(json!({ "buffered": "0" })).direct);
    }

    #[test]
    fn fio_threads_group_reporting() {
        // one entry with numjobs=4: fio merged the threads (group_reporting)
        assert_eq!(one(json!({ "numjobs": "4" })).threads, 4);
        // numjobs=2 without group_reporting: two entries in the same group
        let j = job("x", json!({ "numjobs": "2" }), dir(10, 1000), dir(0, 0));
        let imp = parse_fio_json(&doc(None, vec![j.clone(), j])).unwrap();
        assert_eq!(
            imp.cells.iter().map(|c| c.threads).collect::<Vec<_>>(),
            [1, 1]
        );
    }

    #[test]
    fn fio_ops_and_latency() {
        let text = doc(
            None,
            vec![job(
                "j",
                json!({ "rw": "randrw" }),
                dir(1000, 2000),
                dir(500, 2000),
            )],
        );
        let c = parse_fio_json(&text).unwrap().cells.remove(0);
        assert_eq!(c.duration_s, 2.0);
        assert_eq!(c.ops.len(), 2);
        let r = &c.ops[0];
        assert_eq!(
            (r.op.as_str(), r.ops, r.bytes, r.iops, r.bytes_per_sec),
            ("read", 1000, 4096000, 500.0, 2048000.0)
        );
        let lat = r.lat_ns.as_ref().unwrap();
        // stats from lat_ns, percentiles from clat_ns (lat_ns has none)
        assert_eq!(
            (lat.min, lat.mean, lat.max, lat.stddev),
            (Some(1000.0), Some(2000.5), Some(10000.0), Some(11.0))
        );
        assert_eq!(
            (lat.p50, lat.p90, lat.p95, lat.p99, lat.p99_9, lat.p99_99),
            (
                Some(1000.0),
                Some(2000.0),
                Some(3000.0),
                Some(4000.0),
                Some(5000.0),
                Some(6000.0)
            )
        );
        assert_eq!(r.hist_bins, None);
        assert_eq!((c.ops[1].op.as_str(), c.ops[1].ops), ("write", 500));
    }

    #[test]
    fn fio_lat_percentiles_preferred() {
        let mut r = dir(100, 1000);
        r["lat_ns"]["percentile"] = json!({ "50.000000": 1111, "99.990000": 9999 });
        let c = parse_fio_json(&doc(None, vec![job("j", json!({}), r, dir(0, 0))]))
            .unwrap()
            .cells
            .remove(0);
        let lat = c.ops[0].lat_ns.clone().unwrap();
        assert_eq!(
            (lat.p50, lat.p99_99, lat.p90),
            (Some(1111.0), Some(9999.0), None)
        );
    }

    #[test]
    fn fio_duration_fallback_job_runtime() {
        // no I/O at all: job_runtime (ms, summed over the merged threads)
        let mut j = job("j", json!({ "numjobs": "2" }), dir(0, 0), dir(0, 0));
        j["job_runtime"] = json!(3000);
        let c = parse_fio_json(&doc(None, vec![j])).unwrap().cells.remove(0);
        assert_eq!((c.duration_s, c.ops.len()), (1.5, 0));
    }

    #[test]
    fn fio_sync_and_trim() {
        let mut j = job(
            "j",
            json!({ "rw": "trimwrite", "fsync": "4" }),
            dir(0, 0),
            dir(400, 2000),
        );
        j["trim"] = dir(100, 2000);
        j["sync"] = json!({ "total_ios": 100, "lat_ns": { "min": 5, "max": 50, "mean": 20.0, "stddev": 1.0, "N": 100,
            "percentile": { "50.000000": 21, "99.000000": 49 }, "bins": { "21": 60, "5": 10, "49": 30 } } });
        let c = parse_fio_json(&doc(None, vec![j])).unwrap().cells.remove(0);
        assert_eq!(c.mode, "trimwrite");
        let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
        assert_eq!(names, ["write", "trim", "fsync"]);
        let f = &c.ops[2];
        assert_eq!(
            (f.ops, f.bytes, f.iops, f.bytes_per_sec),
            (100, 0, 50.0, 0.0)
        );
        let lat = f.lat_ns.as_ref().unwrap();
        assert_eq!(
            (lat.min, lat.max, lat.p50, lat.p99, lat.p95),
            (Some(5.0), Some(50.0), Some(21.0), Some(49.0), None)
        );
        assert_eq!(f.hist_bins, Some(vec![(5, 10), (21, 60), (49, 30)]));
    }

    #[test]
    fn fio_jsonplus_bins() {
        let mut r = dir(6, 1000);
        r["clat_ns"]["bins"] = json!({ "2048": 1, "1024": 2, "10240": 3 });
        let c = parse_fio_json(&doc(None, vec![job("j", json!({}), r.clone(), dir(0, 0))]))
            .unwrap()
            .cells
            .remove(0);
        assert_eq!(
            c.ops[0].hist_bins,
            Some(vec![(1024, 2), (2048, 1), (10240, 3)])
        );
        // lat_ns.bins wins when fio printed them (lat_percentiles=1)
        r["lat_ns"]["bins"] = json!({ "3000": 6 });
        let c = parse_fio_json(&doc(None, vec![job("j", json!({}), r, dir(0, 0))]))
            .unwrap()
            .cells
            .remove(0);
        assert_eq!(c.ops[0].hist_bins, Some(vec![(3000, 6)]));
    }

    #[test]
    fn fio_start_time_from_timestamp() {
        let imp =
            parse_fio_json(&doc(None, vec![job("j", json!({}), dir(1, 1), dir(0, 0))])).unwrap();
        let t = chrono::DateTime::parse_from_rfc3339(imp.start_time.as_deref().unwrap()).unwrap();
        assert_eq!(t.timestamp(), 1700000000);
        // no timestamp: the "time" text (local time) is used
        let text = r#"{"fio version": "fio-3.1", "time": "Tue Nov 14 22:13:20 2023", "jobs": []}"#;
        let top: Value = serde_json::from_str(text).unwrap();
        let s = fio_start_time(top.as_object().unwrap()).unwrap();
        assert!(s.starts_with("2023-11-14T22:13:20"), "{s}");
        let top = json!({ "fio version": "x" });
        assert_eq!(fio_start_time(top.as_object().unwrap()), None);
    }

    #[test]
    fn fio_leading_text_skipped() {
        let body = doc(None, vec![job("j", json!({}), dir(10, 1000), dir(0, 0))]);
        let text = format!(
            "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\nj: (g=0): rw=read, bs=(R) 4096B-4096B\n{body}\nfio: trailing noise\n"
        );
        let imp = parse(&text).unwrap();
        assert_eq!(imp.cells[0].ops[0].ops, 10);
    }

    #[test]
    fn fio_error_not_json() {
        let (path, msg) =
            fio_error("note: x\n{\n  \"fio version\": \"fio-3.33\",\n  \"jobs\": [,]\n}");
        assert_eq!(path, "$");
        assert!(msg.contains("line 4 column 12"), "{msg}");
        let (path, msg) = fio_error("no json here");
        assert_eq!((path.as_str(), msg.as_str()), ("$", "no JSON object found"));
        let (path, _) = fio_error("[1, 2]");
        assert_eq!(path, "$");
    }

    #[test]
    fn fio_error_paths() {
        let ok = || job("j", json!({}), dir(10, 1000), dir(0, 0));
        assert_eq!(fio_error(r#"{"jobs": []}"#).0, "[\"fio version\"]");
        assert_eq!(fio_error(r#"{"fio version": "fio-3.33"}"#).0, "jobs");
        assert_eq!(
            fio_error(r#"{"fio version": "fio-3.33", "jobs": {}}"#).0,
            "jobs"
        );
        assert_eq!(
            fio_error(r#"{"fio version": "fio-3.33", "jobs": []}"#).0,
            "jobs"
        );

        let mut bad = ok();
        bad["read"].as_object_mut().unwrap().remove("total_ios");
        let (path, msg) = fio_error(&doc(None, vec![ok(), bad]));
        assert_eq!(
            (path.as_str(), msg.as_str()),
            ("jobs[1].read.total_ios", "missing")
        );

        let mut bad = ok();
        bad["read"]["iops"] = json!("fast");
        let (path, msg) = fio_error(&doc(None, vec![bad]));
        assert_eq!(
            (path.as_str(), msg.as_str()),
            ("jobs[0].read.iops", "expected a number, found a string")
        );

        let mut bad = ok();
        bad.as_object_mut().unwrap().remove("write");
        assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].write");

        let mut bad = ok();
        bad.as_object_mut().unwrap().remove("jobname");
        assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].jobname");

        let mut bad = ok();
        bad["job options"] = json!({ "bs": "huge" });
        assert_eq!(
            fio_error(&doc(None, vec![bad])).0,
            "jobs[0][\"job options\"].bs"
        );

        let (path, _) = fio_error(&doc(Some(json!({ "numjobs": "two" })), vec![ok()]));
        assert_eq!(path, "[\"global options\"].numjobs");

        let mut bad = ok();
        bad["read"]["clat_ns"]["bins"] = json!({ "12x": 1 });
        assert_eq!(
            fio_error(&doc(None, vec![bad])).0,
            "jobs[0].read.clat_ns.bins[\"12x\"]"
        );

        let mut bad = ok();
        bad["read"]["clat_ns"]["percentile"] = json!({ "50.000000": "x" });
        assert_eq!(
            fio_error(&doc(None, vec![bad])).0,
            "jobs[0].read.clat_ns.percentile[\"50.000000\"]"
        );

        let mut bad = ok();
        bad["sync"] = json!({ "lat_ns": {} });
        assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].sync.total_ios");

        let mut bad = ok();
        bad["read"]["total_ios"] = json!(-3);
        assert_eq!(fio_error(&doc(None, vec![bad])).0, "jobs[0].read.total_ios");

        assert_eq!(
            fio_error(r#"{"fio version": "fio-3.33", "jobs": [7]}"#).0,
            "jobs[0]"
        );
    }

    #[test]
    fn error_display() {
        let e = fio_err("jobs[0].read.iops", "missing");
        assert_eq!(e.to_string(), "fio JSON: jobs[0].read.iops: missing");
        assert_eq!(sb_err(3, "x").to_string(), "sysbench output, line 3: x");
    }

    #[test]
    fn serde_round_trip_pairs() {
        let mut r = dir(3, 1000);
        r["clat_ns"]["bins"] = json!({ "1024": 2, "2048": 1 });
        let imp = parse_fio_json(&doc(None, vec![job("j", json!({}), r, dir(0, 0))])).unwrap();
        let v = serde_json::to_value(&imp).unwrap();
        assert_eq!(
            v["cells"][0]["ops"][0]["hist_bins"],
            json!([[1024, 2], [2048, 1]])
        );
        let back: Imported = serde_json::from_value(v).unwrap();
        assert_eq!(back, imp);
    }

    // ---- sysbench ----

    const SB: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 4
Initializing random number generator from current time


Extra file open flags: directio
128 files, 16MiB each
2GiB total file size
Block size 16KiB
Number of IO requests: 0
Read/Write ratio for combined random IO test: 1.50
Periodic FSYNC enabled, calling fsync() each 100 requests.
Calling fsync() at the end of test, Enabled.
Using synchronous I/O mode
Doing random r/w test
Initializing worker threads...

Threads started!

[ 1s ] reads: 10.00 MiB/s writes: 6.00 MiB/s fsyncs: 10.00/s latency (ms,95%): 0.100

File operations:
    reads/s:                      600.00
    writes/s:                     400.00
    fsyncs/s:                     40.00

Throughput:
    read, MiB/s:                  9.38
    written, MiB/s:               6.25

General statistics:
    total time:                          10.0089s
    total number of events:              10400

Latency (ms):
         min:                                    0.01
         avg:                                    3.84
         max:                                  120.50
         95th percentile:                       10.65
         sum:                                39936.00

Threads fairness:
    events (avg/stddev):           2600.0000/12.00
    execution time (avg/stddev):   9.9840/0.00
";

    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|l| l.contains(needle)).unwrap() + 1
    }

    fn sb_error(text: &str) -> (usize, String) {
        match parse_sysbench_fileio(text) {
            Err(ImportError::Sysbench { line, msg }) => (line, msg),
            other => panic!("expected a sysbench error, got {other:?}"),
        }
    }

    #[test]
    fn sysbench_full() {
        let imp = parse_sysbench_fileio(SB).unwrap();
        assert_eq!(
            (
                imp.tool.as_str(),
                imp.tool_version.as_str(),
                imp.start_time.as_deref()
            ),
            ("sysbench", "1.0.20", None)
        );
        let c = &imp.cells[0];
        assert_eq!(imp.options, c.options);
        assert_eq!(
            (
                c.name.as_str(),
                c.mode.as_str(),
                c.threads,
                c.iodepth,
                c.bs_bytes,
                c.direct,
                c.engine.as_str()
            ),
            ("fileio", "rndrw", 4, 1, 16384, true, "sync")
        );
        assert_eq!(c.duration_s, 10.0089);
        let o = &c.options;
        assert_eq!(o["Number of threads"], "4");
        assert_eq!(o["Extra file open flags"], "directio");
        assert_eq!(o["Files"], "128");
        assert_eq!(o["File size"], "16MiB");
        assert_eq!(o["Total file size"], "2GiB");
        assert_eq!(o["Block size"], "16KiB");
        assert_eq!(o["Number of IO requests"], "0");
        assert_eq!(o["Read/Write ratio for combined random IO test"], "1.50");
        assert_eq!(o["Periodic FSYNC"], "100");
        assert_eq!(o["Calling fsync() at the end of test"], "Enabled");
        assert_eq!(o["I/O mode"], "synchronous");
        assert_eq!(o["Test"], "random r/w");
        assert_eq!(o["Random number generator"], "current time");
        assert_eq!(o.as_object().unwrap().len(), 13);

        let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
        assert_eq!(names, ["read", "write", "fsync", "events"]);
        let r = &c.ops[0];
        assert_eq!(
            (r.ops, r.iops, r.lat_ns.clone(), r.hist_bins.clone()),
            (6005, 600.0, None, None)
        );
        assert_eq!(r.bytes, (9.38 * 1048576.0 * 10.0089f64).round() as u64);
        assert_eq!(r.bytes_per_sec, 9.38 * 1048576.0);
        assert_eq!(
            (c.ops[1].ops, c.ops[1].bytes_per_sec),
            (4004, 6.25 * 1048576.0)
        );
        let f = &c.ops[2];
        assert_eq!(
            (f.ops, f.bytes, f.iops, f.bytes_per_sec),
            (400, 0, 40.0, 0.0)
        );
        let e = &c.ops[3];
        assert_eq!((e.ops, e.bytes), (10400, 0));
        assert!((e.iops - 10400.0 / 10.0089).abs() < 1e-9);
        let lat = e.lat_ns.as_ref().unwrap();
        assert_eq!(lat.min, Some(0.01 * 1e6));
        assert_eq!(lat.mean, Some(3.84 * 1e6));
        assert_eq!(lat.max, Some(120.5 * 1e6));
        assert_eq!(lat.p95, Some(10.65 * 1e6));
        assert_eq!((lat.stddev, lat.p50, lat.p99), (None, None, None));
    }

    #[test]
    fn sysbench_modes_and_engines() {
        for (doing, mode) in [
            ("sequential write (creation)", "seqwr"),
            ("sequential rewrite", "seqrewr"),
            ("sequential read", "seqrd"),
            ("random read", "rndrd"),
            ("random write", "rndwr"),
            ("random r/w", "rndrw"),
        ] {
            let text = SB.replace("Doing random r/w test", &format!("Doing {doing} test"));
            assert_eq!(
                parse_sysbench_fileio(&text).unwrap().cells[0].mode,
                mode,
                "{doing}"
            );
        }
        for (io, engine) in [
            ("asynchronous", "async"),
            ("fast mmaped", "mmap"),
            ("slow mmaped", "mmap"),
            ("synchronous", "sync"),
        ] {
            let text = SB.replace(
                "Using synchronous I/O mode",
                &format!("Using {io} I/O mode"),
            );
            assert_eq!(
                parse_sysbench_fileio(&text).unwrap().cells[0].engine,
                engine,
                "{io}"
            );
        }
        let text = SB.replace(
            "Extra file open flags: directio",
            "Extra file open flags: (none)",
        );
        assert!(!parse_sysbench_fileio(&text).unwrap().cells[0].direct);
        let text = SB.replace("Block size 16KiB", "Block size 1MiB");
        assert_eq!(
            parse_sysbench_fileio(&text).unwrap().cells[0].bs_bytes,
            1 << 20
        );
        let text = SB.replace("95th percentile", "99th percentile");
        let lat = parse_sysbench_fileio(&text).unwrap().cells[0].ops[3]
            .lat_ns
            .clone()
            .unwrap();
        assert_eq!((lat.p95, lat.p99), (None, Some(10.65 * 1e6)));
    }

    #[test]
    fn sysbench_zero_rates_skipped() {
        let text = SB
            .replace(
                "writes/s:                     400.00",
                "writes/s:                     0.00",
            )
            .replace(
                "fsyncs/s:                     40.00",
                "fsyncs/s:                     0.00",
            );
        let c = parse_sysbench_fileio(&text).unwrap().cells.remove(0);
        let names: Vec<&str> = c.ops.iter().map(|o| o.op.as_str()).collect();
        assert_eq!(names, ["read", "events"]);
    }

    #[test]
    fn sysbench_sizes() {
        assert_eq!(parse_sysbench_size("16KiB"), Some(16384));
        assert_eq!(parse_sysbench_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_sysbench_size("512B"), Some(512));
        assert_eq!(parse_sysbench_size("16Kb"), Some(16384));
        assert_eq!(parse_sysbench_size("16 furlongs"), None);
    }

    #[test]
    fn sysbench_errors() {
        let last = SB.lines().count();
        let t = SB.replace(
            "reads/s:                      600.00",
            "reads/s:                      6x0.00",
        );
        let (line, msg) = sb_error(&t);
        assert_eq!(line, line_of(&t, "reads/s:"));
        assert_eq!(msg, "malformed number \"6x0.00\" for \"reads/s\"");

        let t = SB.replace("10.0089s", "ten seconds");
        assert_eq!(sb_error(&t).0, line_of(&t, "total time:"));

        let t = SB.replace("10400", "1e4");
        assert_eq!(sb_error(&t).0, line_of(&t, "total number of events:"));

        let t = SB.replace(
            "min:                                    0.01",
            "min:                                    -",
        );
        assert_eq!(sb_error(&t).0, line_of(&t, "min:"));

        let t = SB.replace(
            "written, MiB/s:               6.25",
            "written, MiB/s:               NaN",
        );
        assert_eq!(sb_error(&t).0, line_of(&t, "written, MiB/s:"));

        let t = SB.replace("Number of threads: 4", "Number of threads: four");
        assert_eq!(
            sb_error(&t),
            (
                4,
                "malformed number \"four\" for \"Number of threads\"".into()
            )
        );

        let t = SB.replace("Block size 16KiB", "Block size big");
        assert_eq!(
            sb_error(&t),
            (
                line_of(&t, "Block size"),
                "malformed block size \"big\"".into()
            )
        );

        let t = SB.replace("File operations:", "File ops:");
        assert_eq!(
            sb_error(&t),
            (last, "missing \"File operations:\" section".into())
        );

        let t = SB.replace("total time:", "total tim:");
        assert_eq!(
            sb_error(&t),
            (
                last,
                "missing \"total time:\" under \"General statistics:\"".into()
            )
        );

        let t = SB.replace("    fsyncs/s:                     40.00\n", "");
        assert_eq!(
            sb_error(&t),
            (
                last - 1,
                "missing \"fsyncs/s:\" under \"File operations:\"".into()
            )
        );

        // truncated after the "File operations:" block
        let cut: String = SB
            .lines()
            .take(line_of(SB, "Throughput:"))
            .map(|l| format!("{l}\n"))
            .collect();
        let (line, msg) = sb_error(&cut);
        assert_eq!(line, line_of(SB, "Throughput:"));
        assert_eq!(msg, "missing \"read, MiB/s:\" under \"Throughput:\"");

        assert_eq!(sb_error("").0, 1);
    }

    // ---- detection ----

    #[test]
    fn detect() {
        assert_eq!(parse(SB).unwrap().tool, "sysbench");
        let fio = doc(None, vec![job("j", json!({}), dir(1, 1), dir(0, 0))]);
        assert_eq!(parse(&fio).unwrap().tool, "fio");
        assert!(matches!(parse(""), Err(ImportError::Unknown(_))));
        assert!(matches!(parse("hello"), Err(ImportError::Unknown(_))));
        assert_eq!(
            parse(r#"{"a": 1}"#),
            Err(ImportError::Unknown(
                "a JSON object without a \"fio version\" key".into()
            ))
        );
        let prepare = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n128 files, 16384Kb each, 2048Mb total\nCreating files for the test...\n";
        assert!(
            matches!(parse(prepare), Err(ImportError::Unknown(m)) if m.contains("File operations"))
        );
        // broken fio JSON reports the fio error, not "unknown"
        assert!(
            matches!(parse("{\"fio version\": \"fio-3.33\", \"jobs\": [}"), Err(ImportError::Fio { path, .. }) if path == "$")
        );
        // sysbench output truncated inside a block reports the sysbench error
        let t = SB.replace("total time:", "total tim:");
        assert!(matches!(parse(&t), Err(ImportError::Sysbench { .. })));
        let e = parse("hello").unwrap_err().to_string();
        assert!(e.starts_with("not a result iolab can import: neither fio JSON nor sysbench fileio output (expected fio"), "{e}");
    }
}
