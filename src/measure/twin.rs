//! `iolab run --like CAPTURE`: a synthetic twin of a captured workload. The capture is read
//! once: each request's own figures (direction, size, seek category, the gap before it, the
//! queue depth at its issue) kept as a card, and the heat of the 1 MiB regions its jumps
//! landed in. [`Synth`] deals the cards in runs of [`BLOCK`], the runs shuffled (a block
//! bootstrap: over a pass the capture's mix, sizes, gaps, depths and seek shares exactly, its
//! bursts kept), and places each request by its category: after the previous one of its
//! direction, or a jump into a region drawn by heat, the regions spread evenly over a target of
//! any size in their order. A stream as long as asked for; the replay worker issues it as it
//! issues a trace's. What `iolab fingerprint` reports of the capture, the twin has.
//!
//! Memory: the regions the capture touched, and at most [`RESERVOIR`] of its requests (runs
//! of [`BLOCK`] in its order, a uniform sample of the runs beyond that), 24 bytes each.

use crate::measure::fingerprint::{NEAR_BYTES, REGION_BYTES, read_capture};
use crate::measure::trace::{TraceIo, TraceOp};
use crate::model::capture::{CaptureIo, FileClass, IoDir};
use crate::model::hist::LatHist;
use crate::spec::dist::Rng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use std::sync::Arc;

/// The most values kept of a continuous distribution (gaps, near skips): a uniform sample of
/// them beyond that (Vitter's algorithm R).
pub const RESERVOIR: usize = 1 << 20;

/// Requests dealt together, in the capture's order.
pub const BLOCK: usize = 64;

/// A distribution of values with counts, drawn by its cumulative counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discrete {
    values: Vec<u64>,
    cum: Vec<u64>,
}

impl Discrete {
    fn from_counts(m: &HashMap<u64, u64>) -> Discrete {
        let mut v: Vec<(u64, u64)> = m.iter().map(|(&k, &n)| (k, n)).collect();
        v.sort_unstable();
        let mut total = 0;
        let (values, cum) = v
            .into_iter()
            .map(|(k, n)| {
                total += n;
                (k, total)
            })
            .unzip();
        Discrete { values, cum }
    }

    pub fn total(&self) -> u64 {
        self.cum.last().copied().unwrap_or(0)
    }

    pub fn max(&self) -> u64 {
        self.values.last().copied().unwrap_or(0)
    }

    /// One value, each as likely as its share of the counts (None when empty).
    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> Option<u64> {
        let t = self.total();
        if t == 0 {
            return None;
        }
        let x = rng.random_range(0..t);
        Some(self.values[self.cum.partition_point(|&c| c <= x)])
    }
}

/// One captured request's own figures: what the twin deals out.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Card {
    /// ns since the request before it (of any direction).
    gap_ns: u64,
    /// Bytes (0: a flush).
    len: u32,
    /// A near skip's bytes past the previous request's end (of its direction).
    near: u32,
    /// Requests in flight at its issue, itself included.
    qd: u32,
    /// 0 read, 1 write, 2 flush.
    op: u8,
    /// The alignment of its offset, log2 bytes (its trailing zero bits, 9 to 20: 512 B to
    /// 1 MiB), kept by a jump: a target can take a request as fast only if it is as aligned.
    align_log2: u8,
    /// Its seek category ([`SEQ`], [`NEAR`], [`FAR`], [`BACK`]; [`FIRST`]: its direction's
    /// first).
    seek: u8,
}

/// The seek categories of the fingerprint (`SeekShares`), and a direction's first request.
const SEQ: u8 = 0;
const NEAR: u8 = 1;
const FAR: u8 = 2;
const BACK: u8 = 3;
const FIRST: u8 = 4;

/// A capture's distributions, read once.
#[derive(Debug, Clone, PartialEq)]
pub struct Twin {
    pub capture: String,
    /// The capture's window (ns).
    pub duration_ns: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    /// Requests of the capture the twin does not make (discards, write-zeroes, zone commands).
    pub skipped: u64,
    pub max_len_bytes: u64,
    pub max_qd: u32,
    /// 1 MiB regions touched by a read or a write.
    pub regions_touched: u64,
    /// The device's p99 latency of the captured reads or writes, the higher (ns).
    pub p99_ns: Option<u64>,
    /// The captured requests (a uniform sample of [`RESERVOIR`] of them beyond that).
    deck: Vec<Card>,
    /// Requests per region, the regions numbered in their order on the device from 0.
    heat: Discrete,
}

/// Which file class a captured request belongs to, in [`FileClass::SLOTS`]: a read's or a
/// write's own; a flush (no sectors, no file) the class of the last write to a file before it
/// (the writes it makes durable: a WAL's fdatasync follows the WAL's write; the filesystem's
/// journal writes between them are `unmapped` and do not count), `unmapped` before any.
#[derive(Debug, Default)]
pub struct Owner {
    last_write: Option<usize>,
}

impl Owner {
    pub fn slot(&mut self, r: &CaptureIo) -> usize {
        let slot = FileClass::slot(r.class);
        match r.dir {
            IoDir::Flush => self.last_write.unwrap_or(slot),
            IoDir::Write if r.class.is_some() => {
                self.last_write = Some(slot);
                slot
            }
            _ => slot,
        }
    }
}

/// The reads and writes of each file class of a capture, by [`FileClass::SLOTS`], in one pass.
pub fn class_requests(path: &std::path::Path) -> Result<[u64; 5], String> {
    let mut n = [0u64; 5];
    let mut owner = Owner::default();
    read_capture(path, |r| {
        let slot = owner.slot(r);
        if matches!(r.dir, IoDir::Read | IoDir::Write) && r.size_bytes > 0 {
            n[slot] += 1;
        }
    })?;
    Ok(n)
}

/// The twin of the capture file `path` (its errors as `fingerprint`'s: `line N: ...`).
pub fn twin_of(path: &std::path::Path, class: Option<&str>) -> Result<Twin, String> {
    let mut rng = Rng::seed_from_u64(0x7477_696e);
    let mut ends: [Option<u64>; 2] = [None; 2];
    let (mut deck, mut seen) = (Vec::new(), 0u64);
    let mut run = Vec::with_capacity(BLOCK);
    let mut regions = HashMap::new();
    let mut touched = std::collections::HashSet::new();
    let (mut first_t, mut last_t, mut max_t) = (None::<u64>, None::<u64>, 0u64);
    let mut counts = [0u64; 3];
    let (mut skipped, mut max_len, mut max_qd) = (0u64, 0u64, 0u32);
    let mut lat = [LatHist::new(), LatHist::new()];
    let mut owner = Owner::default();
    let each = |r: &CaptureIo| {
        // the capture's window without its summary: to its last request of any class
        max_t = max_t.max(r.t_ns);
        // `--class`: only that file class's requests (`unmapped`: those of no file; a flush
        // is the class's whose file write came last before it)
        if let Some(c) = class
            && FileClass::SLOTS[owner.slot(r)] != c
        {
            return;
        }
        let op = match r.dir {
            IoDir::Read if r.size_bytes > 0 => 0,
            IoDir::Write if r.size_bytes > 0 => 1,
            IoDir::Flush => 2,
            _ => {
                skipped += 1;
                return;
            }
        };
        counts[op] += 1;
        first_t.get_or_insert(r.t_ns);
        let gap_ns = last_t.map_or(0, |t| r.t_ns.saturating_sub(t));
        last_t = Some(r.t_ns);
        max_qd = max_qd.max(r.qd);
        let mut c = Card {
            gap_ns,
            qd: r.qd.max(1),
            op: op as u8,
            seek: FIRST,
            ..Card::default()
        };
        if op < 2 {
            let o = r.offset_bytes;
            c.len = r.size_bytes.min(u64::from(u32::MAX)) as u32;
            c.align_log2 = o.trailing_zeros().clamp(9, 20) as u8;
            max_len = max_len.max(r.size_bytes);
            if let Some(end) = ends[op] {
                c.seek = if o == end {
                    SEQ
                } else if o > end && o - end <= NEAR_BYTES {
                    c.near = (o - end) as u32;
                    NEAR
                } else if o > end {
                    FAR
                } else {
                    BACK
                };
            }
            ends[op] = Some(o + r.size_bytes);
            // the heat the twin draws its jumps by: where the jumps landed (a sequential or
            // near request follows the one before it, as the twin's do)
            if matches!(c.seek, FAR | BACK | FIRST) {
                *regions.entry(o / REGION_BYTES).or_insert(0u64) += 1;
            }
            for region in o / REGION_BYTES..=(o + r.size_bytes - 1) / REGION_BYTES {
                touched.insert(region);
            }
            if let Some(l) = r.lat_ns {
                lat[op].record(l.max(1));
            }
        }
        // runs of BLOCK requests in the capture's order (a block bootstrap: what follows
        // what within a run, bursts and their queue depths, is kept); beyond RESERVOIR
        // requests a uniform sample of the runs (Vitter's algorithm R)
        run.push(c);
        if run.len() == BLOCK {
            add_run(&mut deck, &mut run, &mut seen, &mut rng);
        }
    };
    fn add_run(deck: &mut Vec<Card>, run: &mut Vec<Card>, seen: &mut u64, rng: &mut Rng) {
        *seen += 1;
        let slots = (RESERVOIR / BLOCK) as u64;
        if *seen <= slots {
            deck.extend_from_slice(run);
        } else {
            let i = rng.random_range(0..*seen);
            if i < slots && run.len() == BLOCK {
                let at = i as usize * BLOCK;
                deck[at..at + BLOCK].copy_from_slice(run);
            }
        }
        run.clear();
    }
    let (_, summary) = read_capture(path, each)?;
    if !run.is_empty() && (seen as usize) < RESERVOIR / BLOCK {
        add_run(&mut deck, &mut run, &mut seen, &mut rng);
    }
    // the regions touched in their order on the device, numbered from 0
    let mut order: Vec<u64> = touched.into_iter().collect();
    order.sort_unstable();
    let heat: HashMap<u64, u64> = order
        .iter()
        .enumerate()
        .filter_map(|(i, r)| regions.get(r).map(|&n| (i as u64, n)))
        .collect();
    let duration_ns = summary
        .map(|s| (s.duration_s * 1e9) as u64)
        .filter(|&n| n > 0)
        .unwrap_or(max_t);
    // The first request's gap: the capture's quiet end and quiet start, as if it ran again
    // (a pass of the deck lasts the capture's window, not the span from its first request to
    // its last: a class whose requests came in one burst keeps its rate over the window)
    if let (Some(first), Some(last), Some(c)) = (first_t, last_t, deck.first_mut())
        && seen <= (RESERVOIR / BLOCK) as u64
    {
        c.gap_ns = duration_ns.saturating_sub(last) + first;
    }
    Ok(Twin {
        capture: path.display().to_string(),
        duration_ns,
        reads: counts[0],
        writes: counts[1],
        flushes: counts[2],
        skipped,
        max_len_bytes: max_len,
        max_qd,
        regions_touched: order.len() as u64,
        p99_ns: lat
            .iter()
            .filter(|h| h.count() > 0)
            .map(|h| h.percentile(99.0))
            .max(),
        deck,
        heat: Discrete::from_counts(&heat),
    })
}

/// Requests drawn from a [`Twin`], in the shape of a trace's: the captured requests dealt
/// out shuffled (each once per pass over the deck, then shuffled again), so that a pass has the
/// capture's mix, sizes, gaps, queue depths and seek categories exactly, and lasts its window.
pub struct Synth {
    twin: Arc<Twin>,
    /// The deck's order of this pass (indices into it); the next card.
    order: Vec<u32>,
    next: usize,
    rng: Rng,
    t_ns: u64,
    /// No request after this time of the stream (ns; None: endless).
    end_ns: Option<u64>,
    /// The target's bytes the regions spread over.
    range: u64,
    ends: [Option<u64>; 2],
    /// The captured queue depth is multiplied by this.
    qd_scale: f64,
}

impl Synth {
    /// A stream onto `range` bytes, until `end_ns` of its own time, the captured queue depths
    /// times `qd_scale`, dealt with `seed`. The deck's order is its one allocation.
    pub fn new(
        twin: Arc<Twin>,
        range: u64,
        end_ns: Option<u64>,
        qd_scale: f64,
        seed: u64,
    ) -> Synth {
        let order = (0..twin.deck.len().div_ceil(BLOCK) as u32).collect();
        let mut s = Synth {
            twin,
            order,
            next: 0,
            rng: Rng::seed_from_u64(seed ^ 0x6c69_6b65),
            t_ns: 0,
            end_ns,
            range: range.max(1),
            ends: [None; 2],
            qd_scale: qd_scale.max(0.0),
        };
        s.shuffle();
        s
    }

    /// A new order of the deck's runs (rand's Fisher-Yates).
    fn shuffle(&mut self) {
        self.order.shuffle(&mut self.rng);
        self.next = 0;
    }

    /// Where a request starts that lands in a region drawn by its heat, the regions spread
    /// evenly over the target, aligned to `align` bytes.
    fn in_a_region(&mut self, align: u64) -> u64 {
        let tw = &self.twin;
        let regions = tw.regions_touched.max(1);
        let idx = tw.heat.draw(&mut self.rng).unwrap_or(0);
        let span = (self.range / regions).max(1);
        let start = (u128::from(idx) * u128::from(self.range) / u128::from(regions)) as u64;
        (start + self.rng.random_range(0..span)) / align * align
    }

    /// The next request into `io`; false when the stream has ended (or the deck is empty).
    #[inline]
    pub fn next_io(&mut self, io: &mut TraceIo) -> bool {
        if self.order.is_empty() {
            return false;
        }
        let n = self.twin.deck.len();
        let c = loop {
            if self.next / BLOCK == self.order.len() {
                self.shuffle();
            }
            let at = self.order[self.next / BLOCK] as usize * BLOCK + self.next % BLOCK;
            if at < n {
                self.next += 1;
                break self.twin.deck[at];
            }
            // past the end of the deck's last block, a short one: on to the next block
            self.next = (self.next / BLOCK + 1) * BLOCK;
        };
        // each request its card's gap after the one before, the first after its gap from the
        // stream's start (time 0): a pass of the deck lasts the capture's window, whichever
        // card comes first
        self.t_ns += c.gap_ns;
        if self.end_ns.is_some_and(|e| self.t_ns > e) {
            return false;
        }
        *io = TraceIo {
            t_ns: self.t_ns,
            op: TraceOp::Flush,
            file: 0,
            off: 0,
            len: 0,
            qd: ((f64::from(c.qd) * self.qd_scale).ceil() as u32).max(1),
        };
        let d = match c.op {
            0 => 0,
            1 => 1,
            _ => return true,
        };
        let len = u64::from(c.len);
        let cat = if self.ends[d].is_none() { FAR } else { c.seek };
        let end = self.ends[d].unwrap_or(0) % self.range;
        let off = match cat {
            SEQ => end,
            NEAR => end + u64::from(c.near),
            // a region by its heat, drawn again (8 times at most) until it lies on the side of
            // the previous request's end that the category says
            _ => {
                let mut o = self.in_a_region(1 << c.align_log2);
                for _ in 0..8 {
                    let fits = match cat {
                        FAR => o > end + NEAR_BYTES,
                        BACK => o < end,
                        _ => true,
                    };
                    if fits {
                        break;
                    }
                    o = self.in_a_region(1 << c.align_log2);
                }
                o
            }
        };
        let off = if off + len > self.range { 0 } else { off };
        self.ends[d] = Some(off + len);
        io.op = if d == 0 {
            TraceOp::Read
        } else {
            TraceOp::Write
        };
        io.off = off;
        io.len = len;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture file's first line.
    const HEADER: &str = "{\"schema\":\"iolab-capture/1\",\"iolab_version\":\"x\",\"device\":\"loop0\",\"majmin\":\"7:0\",\"start\":\"now\",\"host\":\"h\",\"kernel\":\"k\",\"source\":\"s\"}\n";

    /// Two-sample Kolmogorov-Smirnov distance of two samples.
    fn ks(mut a: Vec<u64>, mut b: Vec<u64>) -> f64 {
        a.sort_unstable();
        b.sort_unstable();
        let (mut i, mut j, mut d) = (0, 0, 0f64);
        while i < a.len() && j < b.len() {
            let x = a[i].min(b[j]);
            while i < a.len() && a[i] <= x {
                i += 1;
            }
            while j < b.len() && b[j] <= x {
                j += 1;
            }
            d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
        }
        d
    }

    /// A capture of 70 % sequential 16 KiB reads and 30 % 4 KiB writes with exponential gaps
    /// (mean 1 ms) and a flush every 100 requests: the twin's stream has its mix, sizes, gaps
    /// and sequential share (KS distance under 0.02 at 200,000 requests each).
    #[test]
    fn the_twin_draws_the_captures_distributions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.cap");
        let mut s = String::from(HEADER);
        let mut rng = Rng::seed_from_u64(1);
        let (mut t, mut roff) = (0u64, 0u64);
        let (mut gaps, mut sizes) = (Vec::new(), Vec::new());
        for i in 0..200_000u64 {
            let u: f64 = rng.random();
            let g = (-(1.0 - u).ln() * 1e6) as u64;
            t += g;
            if i > 0 {
                gaps.push(g);
            }
            let (dir, off, size) = if i % 100 == 99 {
                ("flush", 0, 0)
            } else if rng.random_range(0..10) < 7 {
                roff += 16384;
                ("read", roff - 16384, 16384)
            } else {
                ("write", rng.random_range(0..1u64 << 18) * 4096, 4096)
            };
            if size > 0 {
                sizes.push(size);
            }
            s.push_str(&format!(
                "{{\"t_ns\":{t},\"dir\":\"{dir}\",\"offset_bytes\":{off},\"size_bytes\":{size},\"lat_ns\":100000,\"qd\":1,\"pid\":1,\"comm\":\"x\"}}\n"
            ));
        }
        std::fs::write(&path, s).unwrap();
        let tw = Arc::new(twin_of(&path, None).unwrap());
        assert_eq!(tw.flushes, 2000);
        let p99 = tw.p99_ns.unwrap();
        assert!(p99.abs_diff(100_000) < 2000, "p99 {p99}");
        let mut sy = Synth::new(Arc::clone(&tw), 4 << 30, None, 1.0, 7);
        let mut io = TraceIo::default();
        let (mut sg, mut ss) = (Vec::new(), Vec::new());
        let (mut reads, mut seq_reads, mut flushes, mut last_t) = (0u64, 0u64, 0u64, 0u64);
        let mut rend = None;
        for i in 0..200_000u64 {
            assert!(sy.next_io(&mut io));
            if i > 0 {
                sg.push(io.t_ns - last_t);
            }
            last_t = io.t_ns;
            match io.op {
                TraceOp::Flush => flushes += 1,
                TraceOp::Read => {
                    reads += 1;
                    seq_reads += u64::from(rend == Some(io.off));
                    rend = Some(io.off + io.len);
                    ss.push(io.len);
                }
                _ => ss.push(io.len),
            }
            assert!(io.off + io.len <= 4 << 30);
        }
        let (kg, kz) = (ks(gaps, sg), ks(sizes, ss));
        assert!(kg < 0.02 && kz < 0.02, "KS gaps {kg}, sizes {kz}");
        let rf = reads as f64 / (200_000 - flushes) as f64;
        assert!((rf - 0.7).abs() < 0.01, "read share {rf}");
        assert!(flushes.abs_diff(2000) < 300, "{flushes} flushes");
        // every read continues the previous one but the first and the capture's first (a jump)
        assert!(
            seq_reads + 2 >= reads,
            "{seq_reads} of {reads} reads sequential"
        );
    }

    /// A capture of 1 s: a WAL file's 8 KiB writes every 10 ms, each followed by a flush (a
    /// journal write to no file between them), and a data file's 20 reads in one burst of 20 ms.
    /// Each class's twin has its own requests, the WAL's flushes its own; and a stream of the
    /// capture's window draws each class's requests once (a pass lasts the window, not the
    /// burst: the data's 20, not 50 times as many).
    #[test]
    fn each_class_has_its_own_requests_flushes_and_rate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.cap");
        let mut s = String::from(HEADER);
        let rec = |t: u64, dir: &str, off: u64, size: u64, file: Option<&str>| {
            let f = file.map_or(String::new(), |f| {
                let class = match f {
                    "pg_wal/0001" => "wal",
                    "base/1/2" => "data",
                    _ => "other",
                };
                format!(",\"file\":\"{f}\",\"class\":\"{class}\"")
            });
            format!(
                "{{\"t_ns\":{t},\"dir\":\"{dir}\",\"offset_bytes\":{off},\"size_bytes\":{size},\"lat_ns\":100000,\"qd\":1,\"pid\":1,\"comm\":\"x\"{f}}}\n"
            )
        };
        for i in 0..100u64 {
            let t = 5_000_000 + i * 10_000_000;
            s.push_str(&rec(t, "write", i * 8192, 8192, Some("pg_wal/0001")));
            s.push_str(&rec(t + 1000, "write", 1 << 30, 4096, None));
            s.push_str(&rec(t + 2000, "flush", 0, 0, None));
        }
        for i in 0..20u64 {
            let t = 400_000_000 + i * 1_000_000;
            s.push_str(&rec(
                t,
                "read",
                (64 << 20) + i * 16384,
                16384,
                Some("base/1/2"),
            ));
        }
        // a capture without its summary line (cut short) ends at its last request: one to
        // another file at 1 s
        s.push_str(&rec(
            1_000_000_000,
            "read",
            0,
            4096,
            Some("postgresql.conf"),
        ));
        std::fs::write(&path, &s).unwrap();
        assert_eq!(class_requests(&path).unwrap(), [100, 20, 0, 1, 100]);
        let wal = twin_of(&path, Some("wal")).unwrap();
        assert_eq!((wal.reads, wal.writes, wal.flushes), (0, 100, 100));
        let unmapped = twin_of(&path, Some("unmapped")).unwrap();
        assert_eq!((unmapped.writes, unmapped.flushes), (100, 0));
        let data = Arc::new(twin_of(&path, Some("data")).unwrap());
        assert_eq!((data.reads, data.writes, data.flushes), (20, 0, 0));
        assert_eq!(data.duration_ns, 1_000_000_000);
        let mut sy = Synth::new(Arc::clone(&data), 1 << 30, Some(data.duration_ns), 1.0, 3);
        let mut io = TraceIo::default();
        let mut n = 0;
        while sy.next_io(&mut io) {
            n += 1;
        }
        assert!((20..=21).contains(&n), "{n} reads in the window");
    }

    /// An end time ends the stream; the queue depth is scaled; the deck is dealt again.
    #[test]
    fn a_stream_ends_at_its_time_and_scales_its_depth() {
        let card = Card {
            gap_ns: 1000,
            len: 4096,
            qd: 2,
            op: 0,
            seek: SEQ,
            ..Card::default()
        };
        let tw = Arc::new(Twin {
            capture: "c".into(),
            duration_ns: 3000,
            reads: 3,
            writes: 0,
            flushes: 0,
            skipped: 0,
            max_len_bytes: 4096,
            max_qd: 2,
            regions_touched: 1,
            p99_ns: None,
            deck: vec![card; 3],
            heat: Discrete::from_counts(&HashMap::from([(0, 3)])),
        });
        let mut sy = Synth::new(tw, 1 << 20, Some(10_000), 4.0, 1);
        let mut io = TraceIo::default();
        let mut n = 0;
        while sy.next_io(&mut io) {
            assert_eq!((io.op, io.len, io.qd), (TraceOp::Read, 4096, 8));
            assert_eq!(io.t_ns, (n + 1) * 1000);
            n += 1;
        }
        // at 1000, 2000, ..., 10000 ns
        assert_eq!(n, 10);
    }
}
