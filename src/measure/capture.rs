//! `iolab capture`: the kernel's block request events (issue, complete, requeue; read by
//! `system::tracefs`) made into one record per request (`model::capture::CaptureIo`), in issue
//! order, with its latency and the queue depth at issue; and the fio iolog (version 3) of them.
//!
//! Memory is bounded by what is in flight: a request waits in the in-flight map (keyed by
//! device and sector) until it completes, and a completed one waits only for the requests
//! issued before it to complete, so records leave in issue order.

use crate::model::capture::{CaptureIo, DirCounts, IoDir};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;

/// What a block event says happened to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvKind {
    Issue,
    /// With the completion's error (0, or a negative errno).
    Complete(i32),
    Requeue,
}

/// One `block_rq_*` event as the trace buffer holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEvent {
    /// The trace clock (CLOCK_MONOTONIC), ns.
    pub ts_ns: u64,
    pub kind: EvKind,
    /// The kernel's dev_t (major << 20 | minor).
    pub dev: u32,
    pub sector: u64,
    pub nr_sector: u32,
    /// The request's bytes (issue events; 0 otherwise).
    pub bytes: u32,
    /// The kernel's `rwbs` text (`R`, `WS`, `FWFS`, `FF`, `D`).
    pub rwbs: String,
    pub pid: i32,
    pub comm: String,
}

/// The direction and flags of the kernel's `rwbs` (`blk_fill_rwbs`: `F` first for a preflush,
/// then the operation, then `F` FUA, `A` readahead, `S` sync, `M` meta).
pub fn parse_rwbs(s: &str) -> (IoDir, Vec<String>) {
    let b = s.as_bytes();
    let is_op = |c: u8| matches!(c, b'R' | b'W' | b'D' | b'F' | b'N' | b'Z');
    let (preflush, rest) = if b.len() >= 2 && b[0] == b'F' && is_op(b[1]) {
        (true, &b[1..])
    } else {
        (false, b)
    };
    let mut flags = Vec::new();
    if preflush {
        flags.push("preflush".to_string());
    }
    let Some((&op, mut tail)) = rest.split_first() else {
        return (IoDir::Other, flags);
    };
    let dir = match op {
        b'R' => IoDir::Read,
        b'W' => IoDir::Write,
        b'D' if tail.first() == Some(&b'E') => {
            tail = &tail[1..];
            IoDir::Other
        }
        b'D' => IoDir::Discard,
        b'F' => IoDir::Flush,
        b'Z' => {
            tail = tail.get(1..).unwrap_or(&[]);
            IoDir::Other
        }
        _ => IoDir::Other,
    };
    for c in tail {
        let f = match c {
            b'F' => "fua",
            b'A' => "readahead",
            b'S' => "sync",
            b'M' => "meta",
            b'U' => "atomic",
            _ => continue,
        };
        flags.push(f.to_string());
    }
    (dir, flags)
}

/// The last [`RECENT`] writes completed (device, sector): a write in a flush sequence (a
/// preflush or FUA the device has not) completes again, with 0 sectors, after its flushes.
#[derive(Default)]
struct Recent {
    order: VecDeque<(u32, u64)>,
    count: HashMap<(u32, u64), u32>,
}

/// Writes remembered for their flush sequence's end (a bounded memory: at 100,000 writes/s,
/// 0.65 s of them).
const RECENT: usize = 65_536;

impl Recent {
    fn remember(&mut self, key: (u32, u64)) {
        if self.order.len() == RECENT
            && let Some(old) = self.order.pop_front()
        {
            self.forget(old);
        }
        self.order.push_back(key);
        *self.count.entry(key).or_default() += 1;
    }
    /// Whether `key` was remembered (and is not any more).
    fn forget(&mut self, key: (u32, u64)) -> bool {
        match self.count.get_mut(&key) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                self.count.remove(&key);
            }
            None => return false,
        }
        true
    }
}

/// The most records waiting for an earlier request to complete (about 200 bytes each).
pub const MAX_WAITING: usize = 262_144;

/// A request issued and not yet written out.
struct Pending {
    io: CaptureIo,
    issued_ns: u64,
    /// Sectors not completed yet (a request may complete in parts).
    left: u64,
    done: bool,
}

/// The requests of one capture, from its events in time order.
pub struct Tracker {
    /// Start of the capture (trace clock, ns): requests issued before it are not recorded.
    start_ns: u64,
    /// End of the window (trace clock, ns): issues after it are not recorded.
    end_ns: u64,
    /// Requests to record at most.
    max: u64,
    seq: u64,
    /// Requests recorded (a requeued one once).
    recorded: u64,
    in_flight: HashMap<(u32, u64), VecDeque<u64>>,
    n_in_flight: u32,
    pending: BTreeMap<u64, Pending>,
    /// Writes completed lately, whose flush sequence may still end.
    recent: Recent,
    /// Recorded requests by direction, and their bytes.
    pub ios: DirCounts,
    pub bytes: DirCounts,
    /// Completions within [start, end], recorded or not (what the device's counters count).
    pub window: DirCounts,
    pub unmatched: u64,
    /// Empty preflush writes (completed, never issued: their flush request is recorded).
    pub empty_preflush: u64,
    pub requeued: u64,
    pub incomplete: u64,
    /// Issues seen after `max` records (not recorded).
    pub over_max: u64,
}

impl Tracker {
    pub fn new(start_ns: u64, max: Option<u64>) -> Tracker {
        Tracker {
            start_ns,
            end_ns: u64::MAX,
            max: max.unwrap_or(u64::MAX),
            seq: 0,
            recorded: 0,
            in_flight: HashMap::new(),
            n_in_flight: 0,
            pending: BTreeMap::new(),
            recent: Recent::default(),
            ios: DirCounts::default(),
            bytes: DirCounts::default(),
            window: DirCounts::default(),
            unmatched: 0,
            empty_preflush: 0,
            requeued: 0,
            incomplete: 0,
            over_max: 0,
        }
    }

    /// The window ends at `end_ns`: later issues are not recorded, later completions not counted.
    pub fn end_window(&mut self, end_ns: u64) {
        self.end_ns = end_ns;
    }

    /// Whether `max` requests are recorded.
    pub fn full(&self) -> bool {
        self.recorded >= self.max
    }

    /// Requests issued (recorded or not) and not completed.
    pub fn in_flight(&self) -> u32 {
        self.n_in_flight
    }

    /// Recorded requests not completed yet.
    pub fn waiting(&self) -> usize {
        self.pending.values().filter(|p| !p.done).count()
    }

    /// One event, in time order.
    pub fn event(&mut self, e: &BlockEvent) {
        // a flush request is issued at sector 0 and completes at sector -1 (never set)
        let key = (e.dev, if e.sector == u64::MAX { 0 } else { e.sector });
        match e.kind {
            EvKind::Issue => {
                self.n_in_flight += 1;
                let (dir, flags) = parse_rwbs(&e.rwbs);
                // a flush has no data: its sectors say nothing
                let size = if dir == IoDir::Flush {
                    0
                } else {
                    u64::from(e.nr_sector) * 512
                };
                let record = e.ts_ns >= self.start_ns && e.ts_ns <= self.end_ns;
                if record && self.recorded >= self.max {
                    self.over_max += 1;
                }
                // unrecorded requests are tracked too (u64::MAX - n: never written)
                let id = if record && self.recorded < self.max {
                    self.seq += 1;
                    self.recorded += 1;
                    self.ios.add(dir, 1);
                    self.bytes.add(dir, size);
                    self.pending.insert(
                        self.seq,
                        Pending {
                            io: CaptureIo {
                                t_ns: e.ts_ns - self.start_ns,
                                dir,
                                offset_bytes: e.sector * 512,
                                size_bytes: size,
                                flags,
                                lat_ns: None,
                                qd: self.n_in_flight,
                                pid: e.pid,
                                comm: e.comm.clone(),
                                error: None,
                                class: None,
                                file: None,
                            },
                            issued_ns: e.ts_ns,
                            left: u64::from(e.nr_sector),
                            done: false,
                        },
                    );
                    self.seq
                } else {
                    0
                };
                self.in_flight.entry(key).or_default().push_back(id);
            }
            EvKind::Complete(err) => {
                let Some(id) = self.take(key) else {
                    // A write with a preflush or FUA completes twice: its data (counted),
                    // then, after the flushes, the whole sequence with no sectors left (the
                    // moment the device's counter counts it): the second is not counted again.
                    // An empty preflush (an fsync of the device, a filesystem's flush) is
                    // never issued to the driver (its flush request is) but completes as a
                    // write of 0 sectors, which the device's counter counts as a write.
                    let d = parse_rwbs(&e.rwbs).0;
                    if e.nr_sector == 0 && d != IoDir::Flush {
                        if self.recent.forget(key) {
                            return;
                        }
                        if e.ts_ns >= self.start_ns && e.ts_ns <= self.end_ns {
                            self.empty_preflush += 1;
                            self.window.add(d, 1);
                        }
                        return;
                    }
                    // issued before the capture: counted, not recorded
                    if let Some(d) = self.in_window(e) {
                        self.unmatched += 1;
                        self.window.add(d, 1);
                    }
                    return;
                };
                let Some(p) = self.pending.get_mut(&id) else {
                    // a request not recorded (before the start, past the cap)
                    self.n_in_flight = self.n_in_flight.saturating_sub(1);
                    if let Some(d) = self.in_window(e) {
                        self.window.add(d, 1);
                    }
                    return;
                };
                let n = u64::from(e.nr_sector);
                if n > 0 && n < p.left {
                    // completed in part: the rest goes on at the next sector
                    p.left -= n;
                    self.in_flight
                        .entry((e.dev, e.sector + n))
                        .or_default()
                        .push_front(id);
                    return;
                }
                p.done = true;
                p.io.lat_ns = Some(e.ts_ns.saturating_sub(p.issued_ns));
                p.io.error = (err != 0).then_some(err);
                let d = p.io.dir;
                if d == IoDir::Write {
                    self.recent.remember(key);
                }
                self.n_in_flight = self.n_in_flight.saturating_sub(1);
                if e.ts_ns >= self.start_ns && e.ts_ns <= self.end_ns {
                    self.window.add(d, 1);
                }
            }
            EvKind::Requeue => {
                // issued again later: the first issue is forgotten
                if let Some(id) = self.take(key) {
                    self.n_in_flight = self.n_in_flight.saturating_sub(1);
                    if let Some(p) = self.pending.remove(&id) {
                        // counted at its first issue; the next issue counts it again
                        self.requeued += 1;
                        self.recorded -= 1;
                        self.ios.sub(p.io.dir, 1);
                        self.bytes.sub(p.io.dir, p.io.size_bytes);
                    }
                }
            }
        }
    }

    /// The direction of a completion within the window, when it is.
    fn in_window(&self, e: &BlockEvent) -> Option<IoDir> {
        (e.ts_ns >= self.start_ns && e.ts_ns <= self.end_ns).then(|| parse_rwbs(&e.rwbs).0)
    }

    fn take(&mut self, key: (u32, u64)) -> Option<u64> {
        let q = self.in_flight.get_mut(&key)?;
        let id = q.pop_front();
        if q.is_empty() {
            self.in_flight.remove(&key);
        }
        id
    }

    /// The records ready to be written, in issue order: each completed one whose earlier
    /// requests have all completed. Past [`MAX_WAITING`] records waiting (an earlier request
    /// whose completion the trace buffer lost holds them), the oldest leave without a latency.
    pub fn ready(&mut self, out: &mut Vec<CaptureIo>) {
        loop {
            let over = self.pending.len() > MAX_WAITING;
            let Some(e) = self.pending.first_entry() else {
                break;
            };
            if !e.get().done {
                if !over {
                    break;
                }
                self.incomplete += 1;
            }
            out.push(e.remove().io);
        }
    }

    /// At the end: every record left, the incomplete ones without a latency.
    pub fn finish(&mut self, out: &mut Vec<CaptureIo>) {
        for (_, p) in std::mem::take(&mut self.pending) {
            if !p.done {
                self.incomplete += 1;
            }
            out.push(p.io);
        }
    }
}

/// fio's iolog, version 3 (fio 3.33's `iolog.c`: `TIME FILE ACTION [OFFSET LENGTH]`, TIME in
/// µs from the start), written as the records leave: reads, writes, discards as `trim` and
/// flushes as `sync` on the device `file`; other requests are left out (counted).
pub struct IologWriter<W: Write> {
    out: W,
    file: String,
    pub left_out: u64,
    last_us: u64,
}

impl<W: Write> IologWriter<W> {
    pub fn new(mut out: W, file: &str) -> std::io::Result<Self> {
        writeln!(out, "fio version 3 iolog")?;
        writeln!(out, "0 {file} add")?;
        writeln!(out, "0 {file} open")?;
        Ok(IologWriter {
            out,
            file: file.to_string(),
            left_out: 0,
            last_us: 0,
        })
    }

    pub fn io(&mut self, io: &CaptureIo) -> std::io::Result<()> {
        let t = io.t_ns / 1000;
        self.last_us = self.last_us.max(t);
        let f = &self.file;
        match io.dir {
            IoDir::Read => writeln!(
                self.out,
                "{t} {f} read {} {}",
                io.offset_bytes, io.size_bytes
            ),
            IoDir::Write => writeln!(
                self.out,
                "{t} {f} write {} {}",
                io.offset_bytes, io.size_bytes
            ),
            IoDir::Discard => writeln!(
                self.out,
                "{t} {f} trim {} {}",
                io.offset_bytes, io.size_bytes
            ),
            IoDir::Flush => writeln!(self.out, "{t} {f} sync 0 0"),
            IoDir::Other => {
                self.left_out += 1;
                Ok(())
            }
        }
    }

    /// The `close` line; the writer back.
    pub fn finish(mut self) -> std::io::Result<W> {
        writeln!(self.out, "{} {} close", self.last_us, self.file)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests;
