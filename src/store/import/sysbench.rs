//! sysbench fileio text output.

use super::*;
// ---------------------------------------------------------------------------------------------
// sysbench fileio
// ---------------------------------------------------------------------------------------------

pub(super) fn sb_err(line: usize, msg: impl Into<String>) -> ImportError {
    ImportError::Sysbench {
        line,
        msg: msg.into(),
    }
}

pub(super) fn sb_num(s: &str, key: &str, line: usize) -> Result<f64, ImportError> {
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
pub(super) fn sysbench_engine(mode: &str) -> String {
    let mode = mode.trim();
    match mode {
        "synchronous" => "sync".into(),
        "asynchronous" => "async".into(),
        m if m.contains("mmap") => "mmap".into(),
        m => m.to_string(),
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum SbSection {
    None,
    FileOps,
    Throughput,
    General,
    Latency,
    /// `--histogram`: `value |*** count` rows, value in ms
    Histogram,
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
    let mut lat = ReportedLat::default();
    let mut hist: Vec<(u64, u64)> = Vec::new();

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
            "Threads fairness:" => section = SbSection::Other,
            "Latency histogram (values are in milliseconds)" => section = SbSection::Histogram,
            "Initializing worker threads..." | "Threads started!" => section = SbSection::None,
            _ => {
                // interim reports ("[ 1s ] reads: ...") and anything outside a known block
                if line.starts_with('[') {
                    continue;
                }
                if section == SbSection::Histogram {
                    // `0.003 |******    210`; the header row (`value  ---- distribution ---- count`)
                    if let Some((value, rest)) = line.split_once('|') {
                        let ms = sb_num(value.trim(), "histogram value", ln)?;
                        let count = rest.trim_start_matches(['*', ' ']).trim();
                        let n: u64 = count.parse().map_err(|_| {
                            sb_err(ln, format!("malformed histogram count {count:?}"))
                        })?;
                        hist.push(((ms * 1e6).round() as u64, n));
                    }
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

    let SbSetup {
        options,
        threads,
        direct,
        bs_bytes,
        engine,
        mode,
    } = setup;
    // sysbench prints no count per kind, only rates and the exact total of requests ("total
    // number of events": reads, writes and fsyncs). Each kind's count is its rate x time,
    // apportioned so that they add up to that total (largest remainders): a test of one kind
    // has exactly the printed count. Bytes are whole blocks of those counts.
    let rates = [reads_s, writes_s, fsyncs_s];
    let counts = apportion(&rates.map(|r| r * total_time), events);
    const MIB: f64 = 1048576.0;
    let mut ops = Vec::new();
    for ((op, rate, mib), n) in [
        ("read", reads_s, read_mib),
        ("write", writes_s, written_mib),
        ("fsync", fsyncs_s, 0.0),
    ]
    .into_iter()
    .zip(counts)
    {
        if rate > 0.0 {
            ops.push(OpSummary {
                op: op.into(),
                ops: n,
                bytes: if op == "fsync" { 0 } else { n * bs_bytes },
                iops: rate,
                bytes_per_sec: mib * MIB,
                lat_ns: None,
                hist_bins: None,
            });
        }
    }
    // `--histogram`: the latency of every request, merged by value as printed (ms to 3
    // decimals), in ns
    hist.sort_unstable();
    let mut bins: Vec<(u64, u64)> = Vec::new();
    for (v, n) in hist {
        match bins.last_mut() {
            Some((lv, ln)) if *lv == v => *ln += n,
            _ => bins.push((v, n)),
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
        hist_bins: (!bins.is_empty()).then_some(bins),
    });
    let options = Value::Object(options);
    Ok(Imported {
        tool: "sysbench".into(),
        tool_version: version.unwrap_or_else(|| "unknown".into()),
        start_time: None,
        start_time_source: None,
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
pub(super) struct SbSetup {
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

/// Whole counts in proportion to `shares` that add up to `total` (the largest remainders get the
/// units left over); all zero shares give nothing.
pub(super) fn apportion(shares: &[f64; 3], total: u64) -> [u64; 3] {
    let sum: f64 = shares.iter().sum();
    if sum <= 0.0 {
        return [0; 3];
    }
    let exact = shares.map(|s| s / sum * total as f64);
    let mut out = exact.map(|e| e.floor() as u64);
    let mut left = total.saturating_sub(out.iter().sum());
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| {
        (exact[b] - exact[b].floor())
            .partial_cmp(&(exact[a] - exact[a].floor()))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for i in order.into_iter().cycle().filter(|&i| shares[i] > 0.0) {
        if left == 0 {
            break;
        }
        out[i] += 1;
        left -= 1;
    }
    out
}
