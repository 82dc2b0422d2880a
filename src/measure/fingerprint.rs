//! `iolab fingerprint`: a capture file read once, line by line (memory bounded by the distinct
//! sizes, queue depths and 1 MiB regions it holds, never by its length), into the distributions
//! of `model::fingerprint::Fingerprint`.

use crate::model::capture::{
    CaptureHeader, CaptureIo, CaptureSummary, DirCounts, FileClass, IoDir,
};
use crate::model::fingerprint::*;
use crate::model::hist::LatHist;
use crate::model::lat::LatSummary;
use std::collections::HashMap;

/// The hot-set curve's regions.
pub const REGION_BYTES: u64 = 1 << 20;
/// The points of the hot-set curve, percent of the regions touched.
const HOT_POINTS: [f64; 6] = [1.0, 5.0, 10.0, 20.0, 50.0, 100.0];
/// The most sizes and queue depths listed (the rest summed).
const MOST_LISTED: usize = 16;
/// Distinct sizes or queue depths kept at most; beyond that new values go to the rest.
const MOST_KEPT: usize = 65_536;
/// The longest line of a capture file read (a record is ~200 bytes).
pub const MAX_LINE_BYTES: u64 = 64 << 10;
/// A near skip: forward of the previous request's end by at most this.
pub const NEAR_BYTES: u64 = 1 << 20;

/// One direction's figures as they are added up.
#[derive(Default)]
struct Dir {
    requests: u64,
    bytes: u64,
    sizes: HashMap<u64, u64>,
    sizes_dropped: u64,
    /// Where the previous request of this direction ended.
    end: Option<u64>,
    seq: u64,
    near: u64,
    far: u64,
    back: u64,
    sync: u64,
    fua: u64,
    preflush: u64,
    lat: Option<LatHist>,
}

impl Dir {
    fn add(&mut self, r: &CaptureIo) {
        self.requests += 1;
        self.bytes += r.size_bytes;
        bump(&mut self.sizes, &mut self.sizes_dropped, r.size_bytes);
        if let Some(end) = self.end {
            let o = r.offset_bytes;
            if o == end {
                self.seq += 1;
            } else if o > end && o - end <= NEAR_BYTES {
                self.near += 1;
            } else if o > end {
                self.far += 1;
            } else {
                self.back += 1;
            }
        }
        self.end = Some(r.offset_bytes + r.size_bytes);
        for f in &r.flags {
            match f.as_str() {
                "sync" => self.sync += 1,
                "fua" => self.fua += 1,
                "preflush" => self.preflush += 1,
                _ => {}
            }
        }
        if let Some(l) = r.lat_ns {
            self.lat.get_or_insert_with(LatHist::new).record(l.max(1));
        }
    }

    fn print(&self, secs: f64) -> DirPrint {
        let pct = |n: u64| {
            if self.requests == 0 {
                0.0
            } else {
                100.0 * n as f64 / self.requests as f64
            }
        };
        let (sizes, rest) = listed(&self.sizes, self.sizes_dropped, self.requests);
        let judged = (self.seq + self.near + self.far + self.back).max(1) as f64;
        DirPrint {
            requests: self.requests,
            bytes: self.bytes,
            iops: self.requests as f64 / secs,
            bytes_per_sec: self.bytes as f64 / secs,
            sizes,
            other_sizes_pct: rest,
            mean_size_bytes: if self.requests == 0 {
                0.0
            } else {
                self.bytes as f64 / self.requests as f64
            },
            seek: SeekShares {
                sequential_pct: 100.0 * self.seq as f64 / judged,
                near_pct: 100.0 * self.near as f64 / judged,
                forward_far_pct: 100.0 * self.far as f64 / judged,
                backward_pct: 100.0 * self.back as f64 / judged,
            },
            sync_pct: pct(self.sync),
            fua_pct: pct(self.fua),
            preflush_pct: pct(self.preflush),
            lat_ns: self.lat.as_ref().and_then(LatSummary::from_hist),
        }
    }
}

/// Counts `v` in `m`, or in `dropped` once `m` holds [`MOST_KEPT`] other values.
fn bump(m: &mut HashMap<u64, u64>, dropped: &mut u64, v: u64) {
    if let Some(n) = m.get_mut(&v) {
        *n += 1;
    } else if m.len() < MOST_KEPT {
        m.insert(v, 1);
    } else {
        *dropped += 1;
    }
}

/// The values with the most requests (at most [`MOST_LISTED`], ties by value) and the percent
/// of `total` the others hold.
fn listed(m: &HashMap<u64, u64>, dropped: u64, total: u64) -> (Vec<Share>, f64) {
    let mut v: Vec<(u64, u64)> = m.iter().map(|(&k, &n)| (k, n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let t = total.max(1) as f64;
    let shown: Vec<Share> = v
        .iter()
        .take(MOST_LISTED)
        .map(|&(value, count)| Share {
            value,
            count,
            pct: 100.0 * count as f64 / t,
        })
        .collect();
    let rest = v.iter().skip(MOST_LISTED).map(|x| x.1).sum::<u64>() + dropped;
    (shown, 100.0 * rest as f64 / t)
}

/// The fingerprint being added up, one request at a time.
pub struct Printer {
    all: DirCounts,
    read: Dir,
    write: Dir,
    last_t: Option<u64>,
    arrivals: Option<LatHist>,
    qd: HashMap<u64, u64>,
    qd_dropped: u64,
    qd_sum: u64,
    regions: HashMap<u64, u64>,
    errors: u64,
    max_t: u64,
}

impl Default for Printer {
    fn default() -> Self {
        Self::new()
    }
}

impl Printer {
    pub fn new() -> Printer {
        Printer {
            all: DirCounts::default(),
            read: Dir::default(),
            write: Dir::default(),
            last_t: None,
            arrivals: None,
            qd: HashMap::new(),
            qd_dropped: 0,
            qd_sum: 0,
            regions: HashMap::new(),
            errors: 0,
            max_t: 0,
        }
    }

    /// Adds one request (in the file's order: issue order).
    pub fn add(&mut self, r: &CaptureIo) {
        self.all.add(r.dir, 1);
        self.max_t = self.max_t.max(r.t_ns);
        if let Some(t) = self.last_t {
            self.arrivals
                .get_or_insert_with(LatHist::new)
                .record(r.t_ns.saturating_sub(t).max(1));
        }
        self.last_t = Some(r.t_ns);
        bump(&mut self.qd, &mut self.qd_dropped, u64::from(r.qd));
        self.qd_sum += u64::from(r.qd);
        if r.error.is_some_and(|e| e != 0) {
            self.errors += 1;
        }
        let d = match r.dir {
            IoDir::Read => &mut self.read,
            IoDir::Write => &mut self.write,
            _ => return,
        };
        d.add(r);
        if r.size_bytes > 0 {
            let (a, b) = (
                r.offset_bytes / REGION_BYTES,
                (r.offset_bytes + r.size_bytes - 1) / REGION_BYTES,
            );
            for region in a..=b {
                *self.regions.entry(region).or_insert(0) += 1;
            }
        }
    }

    /// The fingerprint, over a window of `duration_s` (the capture's; the last request's time
    /// when the file has no summary).
    pub fn finish(
        self,
        capture: &str,
        device: &str,
        start: &str,
        duration_s: Option<f64>,
    ) -> Fingerprint {
        let secs = duration_s
            .filter(|d| *d > 0.0)
            .unwrap_or(self.max_t as f64 / 1e9)
            .max(1e-9);
        let rw = self.read.requests + self.write.requests;
        let total = self.all.total();
        let (queue_depth, _) = listed(&self.qd, self.qd_dropped, total);
        // the hot-set curve: regions hottest first, the share of requests on the first k
        let mut heat: Vec<u64> = self.regions.values().copied().collect();
        heat.sort_unstable_by(|a, b| b.cmp(a));
        let touches: u64 = heat.iter().sum();
        let hot_set = if heat.is_empty() {
            Vec::new()
        } else {
            HOT_POINTS
                .iter()
                .map(|&p| {
                    let k = ((p / 100.0 * heat.len() as f64).ceil() as usize).clamp(1, heat.len());
                    HotPoint {
                        regions_pct: p,
                        requests_pct: 100.0 * heat[..k].iter().sum::<u64>() as f64 / touches as f64,
                    }
                })
                .collect()
        };
        Fingerprint {
            capture: capture.into(),
            device: device.into(),
            start: start.into(),
            duration_s: secs,
            requests: self.all,
            read_pct: if rw == 0 {
                0.0
            } else {
                100.0 * self.read.requests as f64 / rw as f64
            },
            read: self.read.print(secs),
            write: self.write.print(secs),
            flushes_per_sec: self.all.flush as f64 / secs,
            interarrival_ns: self.arrivals.as_ref().and_then(LatSummary::from_hist),
            queue_depth,
            queue_depth_mean: if total == 0 {
                0.0
            } else {
                self.qd_sum as f64 / total as f64
            },
            region_bytes: REGION_BYTES,
            regions_touched: heat.len() as u64,
            hot_set,
            errors: self.errors,
            classes: Vec::new(),
        }
    }
}

/// What one line of a capture file is.
pub enum Line {
    Header(Box<CaptureHeader>),
    Io(Box<CaptureIo>),
    Summary(Box<CaptureSummary>),
}

/// Reads one line of a capture file: its first line is the header (`iolab-capture/1`), its
/// last the summary (`iolab-capture-summary/1`), the others records.
pub fn parse_line(s: &str) -> Result<Line, String> {
    let v: serde_json::Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    let err = |e: serde_json::Error| e.to_string();
    Ok(match v.get("schema").and_then(|x| x.as_str()) {
        Some(crate::model::schema::CAPTURE) => {
            Line::Header(Box::new(serde_json::from_value(v).map_err(err)?))
        }
        Some(crate::model::schema::CAPTURE_SUMMARY) => {
            Line::Summary(Box::new(serde_json::from_value(v).map_err(err)?))
        }
        Some(other) => return Err(format!("a line of schema {other:?}, not a capture's")),
        None => Line::Io(Box::new(serde_json::from_value(v).map_err(err)?)),
    })
}

/// Reads the capture file `path` once, line by line (each line at most [`MAX_LINE_BYTES`]),
/// handing each request to `each` in the file's order; its header and summary (None when the
/// capture did not end). An error names the line (`line 12: ...`).
pub fn read_capture(
    path: &std::path::Path,
    mut each: impl FnMut(&CaptureIo),
) -> Result<(Box<CaptureHeader>, Option<Box<CaptureSummary>>), String> {
    use std::io::{BufRead, Read};
    let f = crate::spec::input::open_regular(path).map_err(|e| e.to_string())?;
    let mut r = std::io::BufReader::new(f);
    let (mut header, mut summary) = (None, None);
    let mut buf = Vec::new();
    let mut n = 0u64;
    loop {
        buf.clear();
        let got = (&mut r)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("cannot read it: {e}"))?;
        if got == 0 {
            break;
        }
        n += 1;
        if buf.len() as u64 > MAX_LINE_BYTES {
            return Err(format!(
                "line {n}: longer than {MAX_LINE_BYTES} bytes: not a capture file"
            ));
        }
        let s = std::str::from_utf8(&buf).map_err(|_| format!("line {n}: not UTF-8"))?;
        if s.trim().is_empty() {
            continue;
        }
        match parse_line(s).map_err(|e| format!("line {n}: {e}"))? {
            Line::Header(h) if n == 1 => header = Some(h),
            Line::Header(_) => return Err(format!("line {n}: a second header")),
            _ if header.is_none() => {
                return Err(
                    "line 1: not a capture file's header (iolab-capture/1; made by iolab capture)"
                        .into(),
                );
            }
            Line::Io(io) if summary.is_none() => each(&io),
            Line::Io(_) => return Err(format!("line {n}: a request after the summary")),
            Line::Summary(s) => summary = Some(s),
        }
    }
    let h = header.ok_or("empty: not a capture file (iolab capture -o FILE makes one)")?;
    Ok((h, summary))
}

/// Fingerprints the capture file `path` ([`read_capture`]); where its requests have files
/// (`--dir`, `--pid`, `--cgroup`), each file class's fingerprint too (`unmapped`: no file).
pub fn fingerprint_file(path: &std::path::Path) -> Result<Fingerprint, String> {
    let mut p = Printer::new();
    let mut by_class: [Option<Printer>; 5] = Default::default();
    let (h, summary) = read_capture(path, |io| {
        p.add(io);
        let slot = FileClass::slot(io.class);
        by_class[slot].get_or_insert_with(Printer::new).add(io);
    })?;
    let name = path.display().to_string();
    let secs = summary.as_ref().map(|s| s.duration_s);
    let mapped = summary.as_ref().is_some_and(|s| !s.classes.is_empty())
        || by_class[..4].iter().any(Option::is_some);
    let mut f = p.finish(&name, &h.device, &h.start, secs);
    if mapped {
        let total = f.requests.total().max(1) as f64;
        let bytes = (f.read.bytes + f.write.bytes).max(1) as f64;
        for (n, c) in FileClass::SLOTS.iter().zip(by_class) {
            let Some(c) = c else { continue };
            let cf = c.finish(&name, &h.device, &h.start, Some(f.duration_s));
            f.classes.push(ClassPrint {
                class: n.to_string(),
                requests_pct: 100.0 * cf.requests.total() as f64 / total,
                bytes_pct: 100.0 * (cf.read.bytes + cf.write.bytes) as f64 / bytes,
                fingerprint: cf,
            });
        }
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(t: u64, dir: IoDir, off: u64, size: u64, qd: u32, flags: &[&str]) -> CaptureIo {
        CaptureIo {
            t_ns: t,
            dir,
            offset_bytes: off,
            size_bytes: size,
            flags: flags.iter().map(|s| s.to_string()).collect(),
            lat_ns: Some(100_000),
            qd,
            pid: 1,
            comm: "x".into(),
            error: None,
            class: None,
            file: None,
        }
    }

    /// 700 sequential 16 KiB reads and 300 random 4 KiB sync writes, one every ms, and 10
    /// flushes: the mix, sizes, sequentiality, rates and the hot set come out exactly.
    #[test]
    fn a_known_workload_is_fingerprinted_exactly() {
        let mut p = Printer::new();
        let (mut roff, mut t) = (0u64, 0u64);
        for i in 0..1000u64 {
            t += 1_000_000;
            if i % 10 < 7 {
                p.add(&io(t, IoDir::Read, roff, 16384, 2, &[]));
                roff += 16384;
            } else {
                // every write 64 MiB away from the last: far forward, in a region of its own
                let off = (1 << 30) + ((i * 64) << 20);
                p.add(&io(t, IoDir::Write, off, 4096, 1, &["sync"]));
            }
            if i % 100 == 0 {
                p.add(&io(t, IoDir::Flush, 0, 0, 1, &[]));
            }
        }
        let f = p.finish("c", "loop0", "now", Some(1.0));
        assert_eq!((f.read.requests, f.write.requests), (700, 300));
        assert_eq!(f.requests.flush, 10);
        assert!((f.read_pct - 70.0).abs() < 1e-9);
        assert_eq!(f.read.sizes[0].value, 16384);
        assert!((f.read.sizes[0].pct - 100.0).abs() < 1e-9);
        assert!((f.read.seek.sequential_pct - 100.0).abs() < 1e-9);
        assert!((f.write.seek.forward_far_pct - 100.0).abs() < 1e-9);
        assert!((f.write.sync_pct - 100.0).abs() < 1e-9);
        assert!((f.read.iops - 700.0).abs() < 1e-9);
        assert!((f.flushes_per_sec - 10.0).abs() < 1e-9);
        // 700 reads of 16 KiB fill 11 regions of 1 MiB (64 each, the last 60); 300 writes
        // touch 300 regions once: 311 regions, the hottest 1 % (4) hold 256 of 1000
        assert_eq!(f.regions_touched, 311);
        assert!(
            (f.hot_set[0].requests_pct - 25.6).abs() < 1e-9,
            "{:?}",
            f.hot_set
        );
        assert!((f.hot_set[5].requests_pct - 100.0).abs() < 1e-9);
        // arrivals: 1 ms apart (the flushes at the same time as a request: 1 ns)
        let a = f.interarrival_ns.unwrap();
        assert!((a.p50 as f64 - 1e6).abs() < 1e4, "{a:?}");
        assert_eq!(f.queue_depth[0].value, 2);
    }
}
