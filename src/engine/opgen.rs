//! Which operation a worker issues next: reads or writes at which offsets, in the exact
//! `--rw-ratio` mix, with an fsync after every `--fsync-freq`th write to a file, and how many
//! operations each thread owes under `--ops`.
//!
//! Deterministic for a given seed and thread, and the same for every engine.

use crate::measure::stats::OpKind;
use crate::model::job::{Job, Limit, Mode};
use crate::spec::dist::{OffsetGen, Rng, thread_rng};

/// The next thing a worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Io { kind: OpKind, file: u32, off: u64 },
    Fsync { file: u32 },
}

/// Chooses operations and offsets for one thread.
pub struct OpGen {
    mode: Mode,
    bs: u64,
    bpf: u64,
    /// Added to every offset: where the range starts on a device target (0 for files).
    base: u64,
    /// This thread's range of linear block numbers for sequential modes.
    seq_lo: u64,
    seq_hi: u64,
    pos: u64,
    rng: Rng,
    offsets: OffsetGen,
    ratio: f64,
    reads: u64,
    writes: u64,
    /// Writes to each file since its last fsync (by this thread).
    wsince: Vec<u32>,
    fsync_freq: u32,
    fsync_all: bool,
    pending_fsync: Option<u32>,
}

impl OpGen {
    pub fn new(job: &Job, files: u32, bpf: u64, thread: u32) -> Self {
        let total = files as u64 * bpf;
        let t = thread as u64;
        let n = job.threads as u64;
        // Sequential modes: each thread streams through its own part of the set; whole files
        // when there are at least as many files as threads.
        let (lo, hi) = if files as u64 >= n {
            let f = files as u64;
            ((t * f / n) * bpf, ((t + 1) * f / n) * bpf)
        } else {
            (t * total / n, (t + 1) * total / n)
        };
        let (lo, hi) = if hi > lo { (lo, hi) } else { (0, total) };
        OpGen {
            mode: job.mode,
            bs: job.bs_bytes,
            bpf,
            base: 0,
            seq_lo: lo,
            seq_hi: hi,
            pos: lo,
            rng: thread_rng(job.seed, thread),
            offsets: OffsetGen::new(job.distribution, total),
            ratio: job.rw_ratio,
            reads: 0,
            writes: 0,
            wsince: vec![0; files as usize],
            fsync_freq: job.fsync_freq,
            fsync_all: job.fsync_all,
            pending_fsync: None,
        }
    }

    /// Every offset starts at `base` (`--offset` of a `--device` target).
    pub fn with_base(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    #[inline]
    fn place(&self, block: u64) -> (u32, u64) {
        (
            (block / self.bpf) as u32,
            self.base + (block % self.bpf) * self.bs,
        )
    }

    #[inline]
    fn seq_next(&mut self) -> u64 {
        let b = self.pos;
        self.pos += 1;
        if self.pos >= self.seq_hi {
            self.pos = self.seq_lo;
        }
        b
    }

    /// Whether the next read/write is a read.
    #[inline]
    fn pick_read(&mut self) -> bool {
        match self.mode {
            Mode::Seqrd | Mode::Rndrd => true,
            Mode::Seqwr | Mode::Seqrewr | Mode::Rndwr => false,
            // Exact ratio: read while reads < ratio × (writes + 1). 1.5 gives r r w r w | r r w r w ...
            Mode::Rndrw => (self.reads as f64) < self.ratio * (self.writes + 1) as f64,
        }
    }

    /// The next operation. An fsync that is due comes before the next read or write.
    #[inline]
    pub fn next_op(&mut self) -> Next {
        if let Some(f) = self.pending_fsync.take() {
            return Next::Fsync { file: f };
        }
        let read = self.pick_read();
        let block = if self.mode.is_random() {
            self.offsets.next(&mut self.rng)
        } else {
            self.seq_next()
        };
        let (file, off) = self.place(block);
        if read {
            self.reads += 1;
            Next::Io {
                kind: OpKind::Read,
                file,
                off,
            }
        } else {
            self.writes += 1;
            let w = &mut self.wsince[file as usize];
            *w += 1;
            if self.fsync_all || (self.fsync_freq > 0 && *w >= self.fsync_freq) {
                *w = 0;
                self.pending_fsync = Some(file);
            }
            Next::Io {
                kind: OpKind::Write,
                file,
                off,
            }
        }
    }

    /// The fsyncs still owed when a thread stops: an fsync that fell due with the last write
    /// (`carried` or pending here), then, with --fsync-end, every file written since its last
    /// fsync. Clears the marks. Called once per phase, so its allocation is off the hot path.
    pub fn final_fsyncs(&mut self, carried: Option<u32>, fsync_end: bool) -> Vec<u32> {
        let mut v: Vec<u32> = carried
            .into_iter()
            .chain(self.pending_fsync.take())
            .collect();
        for (i, w) in self.wsince.iter_mut().enumerate() {
            if *w > 0 && fsync_end && !v.contains(&(i as u32)) {
                v.push(i as u32);
            }
            *w = 0;
        }
        v
    }
}

/// Per-thread operation quota for `--ops`, split exactly across threads.
pub fn thread_quota(job: &Job, thread: u32) -> Option<u64> {
    match job.limit {
        Limit::Ops(n) => {
            let t = job.threads as u64;
            Some(n / t + u64::from((thread as u64) < n % t))
        }
        Limit::TimeS(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::{Distribution, EngineKind, FsyncMode, OpenFlags};

    fn job(mode: Mode, threads: u32) -> Job {
        Job {
            mode,
            engine: EngineKind::Null,
            threads,
            iodepth: 1,
            bs_bytes: 16384,
            direct: false,
            open_flags: OpenFlags::default(),
            fsync_freq: 0,
            fsync_all: false,
            fsync_end: true,
            fsync_mode: FsyncMode::Fsync,
            rw_ratio: 1.5,
            distribution: Distribution::Uniform,
            seed: 1,
            rate_iops: None,
            limit: Limit::Ops(1000),
            ramp_s: 0.0,
        }
    }

    #[test]
    fn rndrw_keeps_the_exact_read_write_ratio() {
        let mut g = OpGen::new(&job(Mode::Rndrw, 1), 4, 64, 0);
        let (mut r, mut w) = (0, 0);
        for _ in 0..1000 {
            match g.next_op() {
                Next::Io {
                    kind: OpKind::Read, ..
                } => r += 1,
                Next::Io {
                    kind: OpKind::Write,
                    ..
                } => w += 1,
                other => panic!("unexpected {other:?} with fsync freq 0"),
            }
        }
        assert_eq!((r, w), (600, 400));
    }

    #[test]
    fn fsync_follows_every_nth_write_to_a_file() {
        let mut j = job(Mode::Seqrewr, 1);
        j.fsync_freq = 10;
        let mut g = OpGen::new(&j, 2, 16, 0);
        let mut seq = Vec::new();
        for _ in 0..35 {
            seq.push(g.next_op());
        }
        let fsyncs: Vec<usize> = seq
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n, Next::Fsync { .. }))
            .map(|(i, _)| i)
            .collect();
        // 16 blocks per file: writes 0..9 go to file 0, then its fsync; 6 more to file 0, then
        // 10 to file 1 and its fsync; the rest leaves both files dirty.
        assert_eq!(fsyncs, vec![10, 27]);
        assert_eq!(seq[10], Next::Fsync { file: 0 });
        assert_eq!(seq[27], Next::Fsync { file: 1 });
        assert_eq!(g.final_fsyncs(None, true), vec![0, 1]);
        assert_eq!(
            g.final_fsyncs(None, true),
            Vec::<u32>::new(),
            "marks cleared"
        );
    }

    #[test]
    fn an_fsync_due_with_the_last_write_is_still_owed() {
        let mut j = job(Mode::Rndwr, 1);
        j.fsync_all = true;
        let mut g = OpGen::new(&j, 4, 16, 0);
        let Next::Io { file, .. } = g.next_op() else {
            panic!()
        };
        assert_eq!(g.final_fsyncs(None, false), vec![file]);
    }

    #[test]
    fn sequential_threads_get_disjoint_whole_files() {
        let j = job(Mode::Seqrd, 4);
        let mut seen = std::collections::HashSet::new();
        for t in 0..4 {
            let mut g = OpGen::new(&j, 8, 4, t);
            for _ in 0..8 {
                let Next::Io { file, off, .. } = g.next_op() else {
                    panic!()
                };
                assert_eq!(file / 2, t, "thread {t} stays in its files");
                assert!(seen.insert((file, off)));
            }
        }
        assert_eq!(seen.len(), 32, "together they cover the set once");
    }

    #[test]
    fn a_base_offset_moves_every_io_into_the_range() {
        let j = job(Mode::Rndrw, 1);
        let mut g = OpGen::new(&j, 1, 64, 0).with_base(1 << 20);
        for _ in 0..1000 {
            let Next::Io { file, off, .. } = g.next_op() else {
                panic!()
            };
            assert_eq!(file, 0);
            assert!((1 << 20..(1 << 20) + 64 * 16384).contains(&off), "{off}");
            assert_eq!(off % 16384, 0);
        }
    }

    #[test]
    fn quota_splits_exactly() {
        let mut j = job(Mode::Rndrd, 3);
        j.limit = Limit::Ops(1000);
        let q: Vec<u64> = (0..3).map(|t| thread_quota(&j, t).unwrap()).collect();
        assert_eq!(q.iter().sum::<u64>(), 1000);
        assert_eq!(q, vec![334, 333, 333]);
    }
}
