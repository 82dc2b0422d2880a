//! fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`): what one worker thread
//! records while it runs, and the lines of fio's format made from it after the phase
//! (docs/fio-jobs.md, Log files). fio's semantics (its `stat.c` and `iolog.c`, 3.33):
//!
//! - a line is `time (ms), value, direction (0 read, 1 write), block size, [offset,] priority`;
//!   time is ms since the thread's measured window began, values are ns (latency logs), KiB/s
//!   (bandwidth) and I/Os (IOPS); the priority is 0 (not the real-time class), or fio's ioprio
//!   value in hex with `log_prio`;
//! - without `log_avg_msec` one line per read or write (fsyncs are never logged): `lat` is the
//!   whole latency, `clat` from submission to completion, `slat` the submission (queue engines
//!   only: a sync engine's slat log is empty, as fio's), `bw` the I/O's bytes over its clat
//!   (bytes × 10⁶ / clat ns), `iops` 1;
//! - `write_hist_log` with `log_hist_msec`: a line per interval and direction, at the completion
//!   that ends it: time, direction, block size, then the interval's completion latencies counted
//!   in fio's 1856 bins ([`plat_idx`]), `2^log_hist_coarseness` bins summed per column; an
//!   interval not ended when the thread ends is not logged (as fio's);
//! - with `log_avg_msec` one line per window and direction, block size and offset 0: the latency
//!   logs the mean (rounded) or, with `log_max_value`, the largest of the window's samples, a
//!   window closing at the first sample at least `log_avg_msec` after the last close (the rest
//!   when the thread ends); bandwidth and IOPS the window's bytes (KiB/s) and I/Os per second,
//!   at the end of each whole window that had any.
//!
//! The hot path: [`ThreadLog::io`] takes no lock and allocates only when a chunk of
//! [`CHUNK`] records is full (one allocation per 65,536 I/Os; windows allocate one line per
//! window). Memory is bounded: at most [`MAX_BYTES`] of per-I/O records per phase, split over
//! its threads; a thread past its share stops recording and its logs say so (`truncated`).

use crate::model::job::FioLogs;
use crate::model::run::OpKind;
use std::io::Write;

/// Records per chunk of a per-I/O log (32 bytes each: 2 MiB).
pub const CHUNK: usize = 1 << 16;
/// The most memory the per-I/O records of one phase may take (all its jobs and threads): 1 GiB,
/// 33.5 million I/Os, or a quarter of the memory available when less (the job file's
/// translation splits it over the phase's jobs: `FioLogs::max_record_bytes`). Use
/// `log_avg_msec` for longer runs.
pub use crate::model::fiologs::DEFAULT_RECORD_BYTES as MAX_BYTES;

/// One read or write as the logs need it (32 bytes).
#[derive(Debug, Clone, Copy, Default)]
struct Rec {
    /// Completion, ns since the measured window began.
    t_ns: u64,
    /// Whole latency (ns).
    lat_ns: u64,
    /// Offset; bits 62-63: the direction (fio's: 0 read, 1 write, 2 trim).
    off_dir: u64,
    /// Submission latency (ns, saturated); `u32::MAX` when the engine has none (sync engines).
    slat_ns: u32,
    /// Bytes (saturated).
    bytes: u32,
}

const DIR_SHIFT: u32 = 62;
const OFF_MASK: u64 = (1 << DIR_SHIFT) - 1;
/// fio's directions a log line may have: read, write, trim.
pub const DIRS: usize = 3;
const NO_SLAT: u32 = u32::MAX;

/// The kinds of log file, each with its file name's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Lat,
    Slat,
    Clat,
    Bw,
    Iops,
    /// `write_hist_log`: completion latency histograms per interval.
    Hist,
}

impl LogKind {
    pub const ALL: [LogKind; 6] = [
        LogKind::Lat,
        LogKind::Slat,
        LogKind::Clat,
        LogKind::Bw,
        LogKind::Iops,
        LogKind::Hist,
    ];
    /// The word in the file name (`PREFIX_WORD.N.log`).
    pub fn word(self) -> &'static str {
        match self {
            LogKind::Lat => "lat",
            LogKind::Slat => "slat",
            LogKind::Clat => "clat",
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Hist => "clat_hist",
        }
    }
    /// The prefix the job gives this kind, when it writes it.
    pub fn prefix(self, l: &FioLogs) -> Option<&str> {
        match self {
            LogKind::Lat | LogKind::Slat | LogKind::Clat => l.lat.as_deref(),
            LogKind::Bw => l.bw.as_deref(),
            LogKind::Iops => l.iops.as_deref(),
            LogKind::Hist => l.hist.as_deref(),
        }
    }
}

/// One windowed line (block size and offset 0).
#[derive(Debug, Clone, Copy)]
struct Line {
    t_ms: u64,
    value: u64,
    dir: u8,
}

/// A latency log's window per direction (fio's `avg_window`).
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    n: u64,
    sum: u128,
    max: u64,
    /// When the window opened (fio's `avg_last`, ms).
    last_ms: u64,
}

/// A bandwidth/IOPS window (all directions): its index and counts.
#[derive(Debug, Clone, Copy, Default)]
struct RateWindow {
    index: u64,
    bytes: [u64; DIRS],
    ios: [u64; DIRS],
}

/// What one worker thread records for its job's logs.
#[derive(Debug)]
pub struct ThreadLog {
    spec: FioLogs,
    chunks: Vec<Box<[Rec]>>,
    /// Records in the last chunk.
    used: usize,
    /// Records this thread may keep.
    cap: u64,
    kept: u64,
    /// Past its share of [`MAX_BYTES`]: the later I/Os are not in the logs.
    pub truncated: bool,
    /// Windowed: per latency kind (lat, slat, clat) and direction.
    windows: [[Window; DIRS]; 3],
    rate: RateWindow,
    lines: [Vec<Line>; 5],
    /// `write_hist_log` with `log_hist_msec`.
    hist: Option<Box<Hist>>,
}

/// fio's latency bins (its `stat.h`): 29 groups of 64, a value's bin from its top 7 bits.
pub const PLAT_BITS: u32 = 6;
pub const PLAT_VAL: usize = 1 << PLAT_BITS;
pub const PLAT_NR: usize = 29 * PLAT_VAL;

/// fio's bin of `ns` (its `plat_val_to_idx`): exact below 128, then 64 bins per power of two.
pub fn plat_idx(ns: u64) -> usize {
    let msb = if ns == 0 { 0 } else { 63 - ns.leading_zeros() };
    if msb <= PLAT_BITS {
        return ns as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (ns >> error_bits) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The histogram log of one thread: the completion latencies so far per direction, what the
/// last line had, and the lines (each the bins that changed in its interval).
#[derive(Debug)]
struct Hist {
    counts: [Box<[u64]>; DIRS],
    at_last_line: [Box<[u64]>; DIRS],
    /// When the interval began (fio's `hist_last`, ms; 0 until the first sample).
    last_ms: [u64; DIRS],
    lines: Vec<HistLine>,
    /// (bin, count) of every line, each line's run after the one before.
    bins: Vec<(u16, u32)>,
}

#[derive(Debug, Clone, Copy)]
struct HistLine {
    t_ms: u64,
    dir: u8,
    bs: u64,
    /// Its bins: `bins[start..start + len]`.
    start: usize,
    len: usize,
}

impl Hist {
    fn new() -> Self {
        let zero = || vec![0u64; PLAT_NR].into_boxed_slice();
        Hist {
            counts: [zero(), zero(), zero()],
            at_last_line: [zero(), zero(), zero()],
            last_ms: [0; DIRS],
            lines: Vec::with_capacity(256),
            bins: Vec::with_capacity(4096),
        }
    }

    /// One completion latency (fio's `add_clat_sample`): a line when the interval is over.
    #[inline]
    fn sample(&mut self, dir: usize, clat_ns: u64, bs: u64, at_ms: u64, every_ms: u64) {
        self.counts[dir][plat_idx(clat_ns)] += 1;
        if self.last_ms[dir] == 0 {
            self.last_ms[dir] = at_ms;
        }
        let window = at_ms.saturating_sub(self.last_ms[dir]);
        if window < every_ms {
            return;
        }
        let start = self.bins.len();
        for (i, (now, before)) in self.counts[dir]
            .iter()
            .zip(self.at_last_line[dir].iter_mut())
            .enumerate()
        {
            if *now != *before {
                self.bins
                    .push((i as u16, (*now - *before).min(u64::from(u32::MAX)) as u32));
                *before = *now;
            }
        }
        self.lines.push(HistLine {
            t_ms: at_ms,
            dir: dir as u8,
            bs,
            start,
            len: self.bins.len() - start,
        });
        // the next interval from where this one should have ended (fio keeps the drift out)
        self.last_ms[dir] = at_ms - (window - every_ms);
    }

    /// The lines in fio's format: time, direction, block size, then the interval's count of
    /// every bin (`2^coarseness` bins summed into one).
    fn write(&self, coarseness: u32, epoch_ms: u64, out: &mut impl Write) -> std::io::Result<()> {
        let stride = 1usize << coarseness.min(6);
        let mut row = vec![0u64; PLAT_NR / stride];
        for l in &self.lines {
            row.iter_mut().for_each(|c| *c = 0);
            for &(i, n) in &self.bins[l.start..l.start + l.len] {
                row[i as usize / stride] += u64::from(n);
            }
            write!(out, "{}, {}, {}", l.t_ms + epoch_ms, l.dir, l.bs)?;
            for c in &row {
                write!(out, ", {c}")?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}

impl ThreadLog {
    /// The log of one of `threads` threads of a job with `spec` (its first chunk allocated
    /// here, before the phase).
    pub fn new(spec: &FioLogs, threads: u32) -> Self {
        let windowed = spec.avg_msec > 0;
        let budget = match spec.max_record_bytes {
            0 => MAX_BYTES,
            b => b,
        };
        let cap = budget / std::mem::size_of::<Rec>() as u64 / u64::from(threads.max(1));
        let mut chunks = Vec::new();
        if !windowed && (spec.bw.is_some() || spec.lat.is_some() || spec.iops.is_some()) {
            chunks.push(vec![Rec::default(); CHUNK].into_boxed_slice());
        }
        ThreadLog {
            spec: spec.clone(),
            chunks,
            used: 0,
            cap,
            kept: 0,
            truncated: false,
            windows: Default::default(),
            rate: RateWindow::default(),
            lines: Default::default(),
            hist: (spec.hist.is_some() && spec.hist_msec > 0).then(|| Box::new(Hist::new())),
        }
    }

    /// One completed read or write: `off` its offset, `lat_ns` its whole latency, `slat_ns` its
    /// submission's (None for a sync engine), `t_ns` its completion since the measured window
    /// began. No lock; an allocation only per [`CHUNK`] I/Os or per window.
    #[inline]
    pub fn io(
        &mut self,
        kind: OpKind,
        off: u64,
        bytes: u64,
        lat_ns: u64,
        slat_ns: Option<u64>,
        t_ns: u64,
    ) {
        let dir = match kind {
            OpKind::Read => 0usize,
            OpKind::Write => 1,
            OpKind::Trim => 2,
            OpKind::Fsync => return,
        };
        self.io_dir(dir, off, bytes, lat_ns, slat_ns, t_ns);
    }

    /// [`ThreadLog::io`] of fio's direction `dir` (0 read, 1 write, 2 trim).
    #[inline]
    pub fn io_dir(
        &mut self,
        dir: usize,
        off: u64,
        bytes: u64,
        lat_ns: u64,
        slat_ns: Option<u64>,
        t_ns: u64,
    ) {
        let dir = dir.min(DIRS - 1);
        if let Some(h) = &mut self.hist {
            let clat = lat_ns - slat_ns.unwrap_or(0).min(lat_ns);
            h.sample(dir, clat, bytes, t_ns / 1_000_000, self.spec.hist_msec);
        }
        if self.spec.avg_msec > 0 {
            self.windowed(dir, bytes, lat_ns, slat_ns, t_ns);
            return;
        }
        if self.spec.bw.is_none() && self.spec.lat.is_none() && self.spec.iops.is_none() {
            return;
        }
        if self.kept >= self.cap {
            self.truncated = true;
            return;
        }
        if self.used == CHUNK {
            self.chunks
                .push(vec![Rec::default(); CHUNK].into_boxed_slice());
            self.used = 0;
        }
        let last = self.chunks.len() - 1;
        self.chunks[last][self.used] = Rec {
            t_ns,
            lat_ns,
            off_dir: (off & OFF_MASK) | (dir as u64) << DIR_SHIFT,
            slat_ns: slat_ns.map_or(NO_SLAT, |s| s.min(u64::from(NO_SLAT - 1)) as u32),
            bytes: bytes.min(u64::from(u32::MAX)) as u32,
        };
        self.used += 1;
        self.kept += 1;
    }

    fn windowed(&mut self, dir: usize, bytes: u64, lat_ns: u64, slat_ns: Option<u64>, t_ns: u64) {
        let avg = self.spec.avg_msec;
        let slat = slat_ns.unwrap_or(0).min(lat_ns);
        let clat_ns = lat_ns - slat;
        let done_ms = t_ns / 1_000_000;
        if self.spec.lat.is_some() {
            let submitted_ms = t_ns.saturating_sub(clat_ns) / 1_000_000;
            let samples = [
                (0, lat_ns, done_ms),
                (1, slat, submitted_ms),
                (2, clat_ns, done_ms),
            ];
            for (k, v, at) in samples {
                if k == 1 && slat_ns.is_none() {
                    continue;
                }
                let w = &mut self.windows[k][dir];
                w.n += 1;
                w.sum += u128::from(v);
                w.max = w.max.max(v);
                if at >= w.last_ms && at - w.last_ms >= avg {
                    let value = window_value(w, self.spec.max_value);
                    self.lines[k].push(Line {
                        t_ms: at,
                        value,
                        dir: dir as u8,
                    });
                    *w = Window {
                        last_ms: at - at % avg,
                        ..Window::default()
                    };
                }
            }
        }
        if self.spec.bw.is_some() || self.spec.iops.is_some() {
            let index = done_ms / avg;
            if index != self.rate.index {
                self.close_rate_window();
                self.rate = RateWindow {
                    index,
                    ..RateWindow::default()
                };
            }
            self.rate.bytes[dir] += bytes;
            self.rate.ios[dir] += 1;
        }
    }

    /// The bandwidth and IOPS lines of the window that just ended (directions with I/O only).
    fn close_rate_window(&mut self) {
        let avg = self.spec.avg_msec;
        let t_ms = (self.rate.index + 1) * avg;
        for dir in 0..DIRS {
            if self.rate.ios[dir] == 0 {
                continue;
            }
            let bw = self.rate.bytes[dir] * 1000 / avg / 1024;
            let iops = self.rate.ios[dir] * 1000 / avg;
            for (k, value) in [(3, bw), (4, iops)] {
                self.lines[k].push(Line {
                    t_ms,
                    value,
                    dir: dir as u8,
                });
            }
        }
    }

    /// The thread ended `end_ns` after its measured window began: the latency windows still
    /// open are closed there (fio's `finalize_logs`; a bandwidth or IOPS window not whole is
    /// not logged, as fio's).
    pub fn finish(&mut self, end_ns: u64) {
        if self.spec.avg_msec == 0 {
            return;
        }
        let end_ms = end_ns / 1_000_000;
        for k in 0..3 {
            for dir in 0..DIRS {
                let w = self.windows[k][dir];
                if w.n > 0 {
                    let value = window_value(&w, self.spec.max_value);
                    self.lines[k].push(Line {
                        t_ms: end_ms,
                        value,
                        dir: dir as u8,
                    });
                }
            }
        }
        // the rate window in progress ends with the thread only if it is whole
        if (self.rate.index + 1) * self.spec.avg_msec <= end_ms {
            self.close_rate_window();
        }
        self.rate = RateWindow::default();
    }

    /// How many lines of `kind` this thread writes.
    pub fn lines(&self, kind: LogKind) -> u64 {
        if kind == LogKind::Hist {
            return self.hist.as_ref().map_or(0, |h| h.lines.len() as u64);
        }
        if self.spec.avg_msec > 0 {
            return self.lines[kind as usize].len() as u64;
        }
        match kind {
            LogKind::Slat => self.records().filter(|r| r.slat_ns != NO_SLAT).count() as u64,
            _ => self.kept,
        }
    }

    fn records(&self) -> impl Iterator<Item = &Rec> {
        let n = self.chunks.len();
        self.chunks.iter().enumerate().flat_map(move |(i, c)| {
            let len = if i + 1 == n { self.used } else { CHUNK };
            c[..len].iter()
        })
    }

    /// Writes the lines of `kind` in fio's format, `epoch_ms` added to every time
    /// (`log_unix_epoch`, `log_alternate_epoch`: the clock's time when the window began).
    pub fn write(&self, kind: LogKind, epoch_ms: u64, out: &mut impl Write) -> std::io::Result<()> {
        if kind == LogKind::Hist {
            return match &self.hist {
                Some(h) => h.write(self.spec.hist_coarseness, epoch_ms, out),
                None => Ok(()),
            };
        }
        let prio = if self.spec.prio { "0x0000" } else { "0" };
        if self.spec.avg_msec > 0 {
            for l in &self.lines[kind as usize] {
                if self.spec.offset {
                    writeln!(
                        out,
                        "{}, {}, {}, 0, 0, {prio}",
                        l.t_ms + epoch_ms,
                        l.value,
                        l.dir
                    )?;
                } else {
                    writeln!(
                        out,
                        "{}, {}, {}, 0, {prio}",
                        l.t_ms + epoch_ms,
                        l.value,
                        l.dir
                    )?;
                }
            }
            return Ok(());
        }
        for r in self.records() {
            let has_slat = r.slat_ns != NO_SLAT;
            if kind == LogKind::Slat && !has_slat {
                continue;
            }
            let slat = if has_slat {
                u64::from(r.slat_ns).min(r.lat_ns)
            } else {
                0
            };
            let clat = r.lat_ns - slat;
            let (t_ns, value) = match kind {
                LogKind::Lat => (r.t_ns, r.lat_ns),
                LogKind::Clat => (r.t_ns, clat),
                LogKind::Slat => (r.t_ns.saturating_sub(clat), slat),
                LogKind::Bw => (
                    r.t_ns,
                    (u64::from(r.bytes) * 1_000_000)
                        .checked_div(clat)
                        .unwrap_or(0),
                ),
                LogKind::Iops => (r.t_ns, 1),
                // written from its own lines above
                LogKind::Hist => return Ok(()),
            };
            let dir = r.off_dir >> DIR_SHIFT;
            let t_ms = t_ns / 1_000_000 + epoch_ms;
            if self.spec.offset {
                let off = r.off_dir & OFF_MASK;
                writeln!(out, "{t_ms}, {value}, {dir}, {}, {off}, {prio}", r.bytes)?;
            } else {
                writeln!(out, "{t_ms}, {value}, {dir}, {}, {prio}", r.bytes)?;
            }
        }
        Ok(())
    }

    /// Whether this job writes `kind`.
    pub fn writes(&self, kind: LogKind) -> bool {
        kind.prefix(&self.spec).is_some()
    }

    /// Memory the records take (bytes).
    pub fn bytes(&self) -> u64 {
        (self.chunks.len() * CHUNK * std::mem::size_of::<Rec>()) as u64
            + self.hist.as_ref().map_or(0, |h| {
                (4 * PLAT_NR * 8 + h.bins.capacity() * 8 + h.lines.capacity() * 40) as u64
            })
            + self
                .lines
                .iter()
                .map(|l| (l.capacity() * std::mem::size_of::<Line>()) as u64)
                .sum::<u64>()
    }
}

fn window_value(w: &Window, max: bool) -> u64 {
    if max {
        w.max
    } else {
        // fio: the mean plus 0.5, truncated
        ((w.sum * 2 + u128::from(w.n)) / (2 * u128::from(w.n))) as u64
    }
}

/// The file name of `kind` for fio's thread `thread` (1-based) of a job with `spec`:
/// `PREFIX_KIND.N.log` with `per_job_logs` (fio's default), else `PREFIX_KIND.log`.
pub fn file_name(spec: &FioLogs, kind: LogKind, thread: u32) -> Option<String> {
    let prefix = kind.prefix(spec)?;
    Some(if spec.per_job {
        format!("{prefix}_{}.{thread}.log", kind.word())
    } else {
        format!("{prefix}_{}.log", kind.word())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FioLogs {
        FioLogs {
            bw: Some("b".into()),
            lat: Some("l".into()),
            iops: Some("i".into()),
            offset: true,
            per_job: true,
            first_thread: 1,
            ..FioLogs::default()
        }
    }

    fn text(l: &ThreadLog, k: LogKind) -> String {
        let mut v = Vec::new();
        l.write(k, 0, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn one_line_per_io_with_fios_columns_and_units() {
        let mut l = ThreadLog::new(&spec(), 1);
        // a 4 KiB read: 10 µs in all, 2 µs of it submitting, done 1.5 ms in
        l.io(OpKind::Read, 8192, 4096, 10_000, Some(2_000), 1_500_000);
        l.io(OpKind::Fsync, 0, 0, 5_000, None, 1_600_000);
        l.io(OpKind::Write, 4096, 4096, 4_000, None, 2_000_000);
        l.finish(3_000_000);
        assert_eq!(
            text(&l, LogKind::Lat),
            "1, 10000, 0, 4096, 8192, 0\n2, 4000, 1, 4096, 4096, 0\n"
        );
        assert_eq!(
            text(&l, LogKind::Clat),
            "1, 8000, 0, 4096, 8192, 0\n2, 4000, 1, 4096, 4096, 0\n"
        );
        // submitted at 1.5 ms - 8 µs; the write's engine has no slat: no line
        assert_eq!(text(&l, LogKind::Slat), "1, 2000, 0, 4096, 8192, 0\n");
        // 4096 bytes in 8 µs: 512,000 (fio's bytes × 10⁶ / clat ns)
        assert_eq!(
            text(&l, LogKind::Bw),
            "1, 512000, 0, 4096, 8192, 0\n2, 1024000, 1, 4096, 4096, 0\n"
        );
        assert_eq!(
            text(&l, LogKind::Iops),
            "1, 1, 0, 4096, 8192, 0\n2, 1, 1, 4096, 4096, 0\n"
        );
        assert_eq!(l.lines(LogKind::Slat), 1);
        assert_eq!(l.lines(LogKind::Lat), 2);
    }

    #[test]
    fn without_offsets_five_columns_and_prio_in_hex_with_log_prio() {
        let s = FioLogs {
            offset: false,
            prio: true,
            ..spec()
        };
        let mut l = ThreadLog::new(&s, 1);
        l.io(OpKind::Read, 8192, 4096, 10_000, None, 0);
        assert_eq!(text(&l, LogKind::Lat), "0, 10000, 0, 4096, 0x0000\n");
    }

    #[test]
    fn chunks_grow_past_one_and_keep_every_record_in_order() {
        let mut l = ThreadLog::new(&spec(), 1);
        let n = CHUNK as u64 + 10;
        for i in 0..n {
            l.io(OpKind::Read, i * 4096, 4096, 1000, None, i * 1_000_000);
        }
        assert_eq!(l.chunks.len(), 2);
        assert_eq!(l.lines(LogKind::Lat), n);
        let t = text(&l, LogKind::Iops);
        let last = t.lines().last().unwrap();
        assert_eq!(
            last,
            format!("{}, 1, 0, 4096, {}, 0", n - 1, (n - 1) * 4096)
        );
    }

    #[test]
    fn a_thread_past_its_share_stops_recording_and_says_so() {
        let mut l = ThreadLog::new(&spec(), 1);
        l.cap = 3;
        for i in 0..5 {
            l.io(OpKind::Read, 0, 4096, 1000, None, i);
        }
        assert!(l.truncated);
        assert_eq!(l.lines(LogKind::Lat), 3);
    }

    #[test]
    fn windows_average_per_direction_and_rates_per_whole_window() {
        let s = FioLogs {
            avg_msec: 100,
            ..spec()
        };
        let mut l = ThreadLog::new(&s, 1);
        // reads of 1000 and 2000 ns in the first window, one at 100 ms closes it
        l.io(OpKind::Read, 0, 4096, 1000, None, 10_000_000);
        l.io(OpKind::Read, 0, 4096, 2000, None, 50_000_000);
        l.io(OpKind::Read, 0, 4096, 4000, None, 100_000_000);
        l.io(OpKind::Write, 0, 8192, 500, None, 120_000_000);
        l.finish(250_000_000);
        // (1000 + 2000 + 4000) / 3 = 2333.3 -> 2333; the write's window opened at 0 and
        // closes with its first sample, 120 ms in (fio's avg_last starts at 0)
        assert_eq!(
            text(&l, LogKind::Lat),
            "100, 2333, 0, 0, 0, 0\n120, 500, 1, 0, 0, 0\n"
        );
        // window 0: two reads (8 KiB in 100 ms: 80 KiB/s, 20 IOPS); window 1: one read, one
        // write; window 2 is not whole at 250 ms
        assert_eq!(
            text(&l, LogKind::Iops),
            "100, 20, 0, 0, 0, 0\n200, 10, 0, 0, 0, 0\n200, 10, 1, 0, 0, 0\n"
        );
        assert_eq!(
            text(&l, LogKind::Bw),
            "100, 80, 0, 0, 0, 0\n200, 40, 0, 0, 0, 0\n200, 80, 1, 0, 0, 0\n"
        );
        assert!(l.chunks.is_empty());
    }

    #[test]
    fn an_epoch_is_added_to_every_time() {
        let mut l = ThreadLog::new(&spec(), 1);
        l.io(OpKind::Read, 0, 4096, 1000, None, 2_000_000);
        let mut v = Vec::new();
        l.write(LogKind::Iops, 1_700_000_000_000, &mut v).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "1700000000002, 1, 0, 4096, 0, 0\n"
        );
    }

    #[test]
    fn a_trim_is_direction_2_in_every_log() {
        let s = FioLogs {
            avg_msec: 0,
            ..spec()
        };
        let mut l = ThreadLog::new(&s, 1);
        l.io_dir(2, 1 << 40, 4096, 1000, None, 0);
        assert_eq!(text(&l, LogKind::Iops), "0, 1, 2, 4096, 1099511627776, 0\n");
    }

    #[test]
    fn log_max_value_logs_the_windows_largest() {
        let s = FioLogs {
            avg_msec: 100,
            max_value: true,
            ..spec()
        };
        let mut l = ThreadLog::new(&s, 1);
        l.io(OpKind::Read, 0, 4096, 1000, None, 10_000_000);
        l.io(OpKind::Read, 0, 4096, 9000, None, 20_000_000);
        l.finish(30_000_000);
        assert_eq!(text(&l, LogKind::Lat), "30, 9000, 0, 0, 0, 0\n");
    }

    #[test]
    fn fios_latency_bins() {
        // exact below 128 ns; then 64 bins per power of two (fio's plat_val_to_idx)
        assert_eq!(plat_idx(0), 0);
        assert_eq!(plat_idx(127), 127);
        assert_eq!(plat_idx(128), 128);
        assert_eq!(plat_idx(129), 128);
        assert_eq!(plat_idx(256), 192);
        assert_eq!(plat_idx(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn histogram_lines_count_each_intervals_completions_per_bin() {
        let s = FioLogs {
            hist: Some("h".into()),
            hist_msec: 100,
            hist_coarseness: 1,
            ..FioLogs::default()
        };
        let mut l = ThreadLog::new(&s, 1);
        assert!(l.chunks.is_empty());
        // 100 ns twice, then 130 ns: the interval opens at 10 ms, its line at 110 ms
        l.io(OpKind::Read, 0, 4096, 100, None, 10_000_000);
        l.io(OpKind::Read, 0, 4096, 100, None, 50_000_000);
        l.io(OpKind::Read, 0, 4096, 130, None, 110_000_000);
        // the next interval: 210 ms; one 100 ns read in it
        l.io(OpKind::Read, 0, 4096, 100, None, 150_000_000);
        l.io(OpKind::Read, 0, 4096, 100, None, 215_000_000);
        l.finish(300_000_000);
        let t = text(&l, LogKind::Hist);
        let lines: Vec<Vec<&str>> = t.lines().map(|l| l.split(", ").collect()).collect();
        assert_eq!(lines.len(), 2);
        // 3 + PLAT_NR / 2 columns; 100 ns in bin 100 / 2 = 50, 130 ns in bin 129 / 2 = 64
        assert_eq!(lines[0].len(), 3 + PLAT_NR / 2);
        assert_eq!(&lines[0][..3], ["110", "0", "4096"]);
        assert_eq!(lines[0][3 + 50], "2");
        assert_eq!(lines[0][3 + 64], "1");
        let total: u64 = lines[1][3..]
            .iter()
            .map(|c| c.parse::<u64>().unwrap())
            .sum();
        assert_eq!((lines[1][0], total), ("215", 2));
    }

    #[test]
    fn file_names_are_fios() {
        let s = spec();
        assert_eq!(file_name(&s, LogKind::Clat, 3).unwrap(), "l_clat.3.log");
        let s = FioLogs {
            per_job: false,
            ..s
        };
        assert_eq!(file_name(&s, LogKind::Bw, 3).unwrap(), "b_bw.log");
        let s = FioLogs { iops: None, ..s };
        assert!(file_name(&s, LogKind::Iops, 1).is_none());
    }
}
