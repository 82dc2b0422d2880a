//! fio's `write_iolog`: the I/O a job's threads issue, one line each, in fio's I/O log format
//! (version 3, fio 3.33's `iolog.c`): a first line `fio version 3 iolog`, then `TIME FILE add`
//! and `TIME FILE open` for each file, `TIME FILE ACTION OFFSET LENGTH` per I/O (`read`,
//! `write`, `trim`; a flush is `TIME FILE sync` or `datasync`), `TIME FILE close` at the end.
//! TIME is µs since the job's threads began issuing, in issue order (as fio logs at queue time),
//! the ramp and failed I/Os included.
//!
//! The hot path: [`IoLog::issue`] takes no lock and allocates only when a chunk of [`CHUNK`]
//! records is full (one allocation per 65,536 I/Os; 24 bytes each). Memory is bounded by the
//! job's share of the phase's log records (`FioLogs::max_record_bytes`); a thread past its share
//! stops recording and the log says so (`truncated`).

use crate::model::fiologs::DEFAULT_RECORD_BYTES;
use crate::model::run::OpKind;
use std::io::Write;

/// Records per chunk (24 bytes each: 1.5 MiB).
pub const CHUNK: usize = 1 << 16;

/// fio's action words by code: read, write, trim, sync, datasync.
const ACTIONS: [&str; 5] = ["read", "write", "trim", "sync", "datasync"];
const DIR_SHIFT: u32 = 61;
const OFF_MASK: u64 = (1 << DIR_SHIFT) - 1;

/// One issued operation (24 bytes).
#[derive(Debug, Clone, Copy, Default)]
struct Rec {
    /// µs since the thread's start.
    t_us: u64,
    /// Offset; bits 61-63 the action (an index of [`ACTIONS`]).
    off_act: u64,
    len: u32,
    file: u32,
}

/// What one worker thread issued, for its job's `write_iolog`.
#[derive(Debug)]
pub struct IoLog {
    chunks: Vec<Box<[Rec]>>,
    used: usize,
    cap: u64,
    kept: u64,
    /// A flush is fio's `datasync` (`fdatasync=`), not `sync`.
    datasync: bool,
    /// Past its share of the records: the later I/Os are not in the log.
    pub truncated: bool,
    /// When the thread stopped issuing (µs since its start).
    pub end_us: u64,
}

impl IoLog {
    /// The log of one of `threads` threads whose job's records may take `budget` bytes (0: the
    /// default); its first chunk is allocated here, before the phase.
    pub fn new(budget: u64, threads: u32, datasync: bool) -> Self {
        let budget = if budget == 0 {
            DEFAULT_RECORD_BYTES
        } else {
            budget
        };
        IoLog {
            chunks: vec![vec![Rec::default(); CHUNK].into_boxed_slice()],
            used: 0,
            cap: budget / std::mem::size_of::<Rec>() as u64 / u64::from(threads.max(1)),
            kept: 0,
            datasync,
            truncated: false,
            end_us: 0,
        }
    }

    /// One operation issued `t_us` after the thread's start. No lock; an allocation only per
    /// [`CHUNK`] operations.
    #[inline]
    pub fn issue(&mut self, kind: OpKind, file: u32, off: u64, len: u64, t_us: u64) {
        if self.kept >= self.cap {
            self.truncated = true;
            return;
        }
        let act: u64 = match kind {
            OpKind::Read => 0,
            OpKind::Write => 1,
            OpKind::Trim => 2,
            OpKind::Fsync if self.datasync => 4,
            OpKind::Fsync => 3,
        };
        if self.used == CHUNK {
            self.chunks
                .push(vec![Rec::default(); CHUNK].into_boxed_slice());
            self.used = 0;
        }
        let last = self.chunks.len() - 1;
        self.chunks[last][self.used] = Rec {
            t_us,
            off_act: (off & OFF_MASK) | act << DIR_SHIFT,
            len: len.min(u64::from(u32::MAX)) as u32,
            file,
        };
        self.used += 1;
        self.kept += 1;
    }

    fn records(&self) -> impl Iterator<Item = &Rec> {
        let n = self.chunks.len();
        self.chunks.iter().enumerate().flat_map(move |(i, c)| {
            let used = if i + 1 == n { self.used } else { CHUNK };
            c[..used].iter()
        })
    }
}

/// Writes the log of one job: the version line, `add` and `open` of each of `names` (the job's
/// files, by index), every thread's operations in issue-time order (threads in order at equal
/// times), and `close` of each file when the last thread ended.
pub fn write(names: &[String], logs: &[IoLog], out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "fio version 3 iolog")?;
    for n in names {
        writeln!(out, "0 {n} add")?;
    }
    for n in names {
        writeln!(out, "0 {n} open")?;
    }
    let mut its: Vec<_> = logs.iter().map(|l| l.records().peekable()).collect();
    let mut heap = std::collections::BinaryHeap::new();
    for (t, it) in its.iter_mut().enumerate() {
        if let Some(r) = it.peek() {
            heap.push(std::cmp::Reverse((r.t_us, t)));
        }
    }
    let unknown = String::from("?");
    while let Some(std::cmp::Reverse((_, t))) = heap.pop() {
        let r = its[t].next().expect("a peeked record");
        let name = names.get(r.file as usize).unwrap_or(&unknown);
        let act = ACTIONS[((r.off_act >> DIR_SHIFT) as usize).min(ACTIONS.len() - 1)];
        if act.ends_with("sync") {
            writeln!(out, "{} {name} {act}", r.t_us)?;
        } else {
            let off = r.off_act & OFF_MASK;
            writeln!(out, "{} {name} {act} {off} {}", r.t_us, r.len)?;
        }
        if let Some(n) = its[t].peek() {
            heap.push(std::cmp::Reverse((n.t_us, t)));
        }
    }
    let end = logs.iter().map(|l| l.end_us).max().unwrap_or(0);
    for n in names {
        writeln!(out, "{end} {n} close")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_fios_format_and_issue_order_across_threads() {
        let mut a = IoLog::new(0, 2, false);
        let mut b = IoLog::new(0, 2, true);
        a.issue(OpKind::Read, 0, 0, 4096, 5);
        a.issue(OpKind::Write, 1, 8192, 4096, 20);
        a.end_us = 30;
        b.issue(OpKind::Trim, 0, 4096, 512, 10);
        b.issue(OpKind::Fsync, 1, 0, 0, 20);
        b.end_us = 40;
        let mut out = Vec::new();
        write(&["f0".into(), "f1".into()], &[a, b], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "fio version 3 iolog\n0 f0 add\n0 f1 add\n0 f0 open\n0 f1 open\n\
             5 f0 read 0 4096\n10 f0 trim 4096 512\n20 f1 write 8192 4096\n20 f1 datasync\n\
             40 f0 close\n40 f1 close\n"
        );
    }

    #[test]
    fn a_thread_past_its_share_stops_recording_and_chunks_grow_without_limit_below_it() {
        let mut l = IoLog::new(24 * 3, 1, false);
        for i in 0..5 {
            l.issue(OpKind::Read, 0, i * 4096, 4096, i);
        }
        assert!(l.truncated);
        assert_eq!(l.records().count(), 3);
        let mut big = IoLog::new(0, 1, false);
        for i in 0..(CHUNK as u64 + 3) {
            big.issue(OpKind::Write, 0, i, 1, i);
        }
        assert_eq!(big.records().count(), CHUNK + 3);
        assert_eq!(big.records().last().unwrap().t_us, CHUNK as u64 + 2);
    }
}
