//! Which operation a worker issues next: reads or writes at which offsets, in the exact
//! `--rw-ratio` mix, with an fsync after every `--fsync-freq`th write to a file and, with
//! `--fsync-every`, an fsync of each file written since once that much time has passed, and how
//! many operations each thread owes under `--ops`.
//!
//! Deterministic for a given seed and thread, and the same for every engine.

use super::randmap::RandMap;
use crate::measure::stats::OpKind;
use crate::model::job::{BsSide, Job, Limit, Mode, RandomMap, fio_range_pick};
use crate::model::timing::Zones;
use crate::spec::dist::{OffsetGen, Rng, thread_rng};
use crate::spec::fio_rand::{FioMix, FioOffsets};
use rand::RngExt;
use std::time::{Duration, Instant};

/// The next thing a worker does. `len` is the size of a read or write in bytes, `si` the index
/// of that size in [`Job::bs_sizes`] (for the per-size statistics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Io {
        kind: OpKind,
        file: u32,
        off: u64,
        len: u64,
        si: u8,
    },
    Fsync {
        file: u32,
    },
}

/// How the size of the next read or write of a direction is chosen: precomputed at setup, one
/// table lookup and at most one draw of the thread's RNG per I/O.
enum Sizes {
    /// One size (its index): no draw (the RNG sequence of a single-size job is as before mixes
    /// existed).
    One(u8),
    /// A weighted mix: the size index of each percent.
    Table(Box<[u8; 100]>),
    /// A range, drawn as fio draws it ([`fio_range_pick`]).
    Range { min: u64, max: u64, step: u64 },
}

impl Sizes {
    /// The draw of `side`'s sizes, as indexes of `all` (the job's sizes, ascending).
    fn of(side: &BsSide, all: &[u64]) -> Self {
        let at = |b: u64| all.binary_search(&b).unwrap_or(0) as u8;
        match (&side.bs_mix, &side.bs_range) {
            (Some(mix), _) => {
                let mut tab = Box::new([0u8; 100]);
                let mut p = 0usize;
                for w in mix {
                    for slot in tab.iter_mut().skip(p).take(w.weight_pct as usize) {
                        *slot = at(w.bs_bytes);
                    }
                    p += w.weight_pct as usize;
                }
                Sizes::Table(tab)
            }
            (None, Some(r)) => Sizes::Range {
                min: r.min_bytes,
                max: r.max_bytes,
                step: r.step_bytes,
            },
            (None, None) => Sizes::One(at(side.bs_bytes)),
        }
    }
}

/// What one direction's I/Os are made of: reads (0), writes or trims (1).
struct Dir {
    pick: Sizes,
    /// Random offsets are multiples of this: `--block-align`, else the direction's smallest
    /// size (fio's `blockalign`, by default its `min_bs`); with a random map the job's smallest.
    align: u64,
    /// Aligned offsets per file where the direction's smallest I/O fits (fio's `last_block`).
    apf: u64,
    offsets: OffsetGen,
}

/// Chooses operations and offsets for one thread.
pub struct OpGen {
    mode: Mode,
    /// The sizes, ascending (at most [`crate::model::job::MAX_BS_SIZES`]).
    sizes: Vec<u64>,
    /// Reads' (0) and writes' or trims' (1) sizes and offsets (`--bs-write`, `--block-align`).
    dirs: [Dir; 2],
    /// The smallest size: the random map's blocks, the threads' ranges.
    grid: u64,
    /// The file size in bytes.
    fsize: u64,
    /// Added to every offset: where this thread's range starts in each file or on the device
    /// (`--offset`, and its `--offset-increment`s).
    base: u64,
    /// This thread's byte range of the set (files one after the other) for sequential modes.
    seq_lo: u64,
    seq_hi: u64,
    pos: u64,
    /// `seqrw`: the writes' own sequential position (`pos` is the reads').
    pos_w: u64,
    /// `--seq-skip` (fio's `rw=...:N`): bytes moved on after each sequential I/O, and the
    /// length fio compares a position with (its file's, from the range's start).
    skip: i64,
    skip_real: u64,
    /// `--random-every N`: I/Os left until the next drawn offset (the first is drawn), and
    /// where the last read and the last write started and ended (bytes of the set).
    every: u32,
    every_same: bool,
    every_left: u32,
    last: [(u64, u64); 2],
    /// `--random-pct`: the percent of a random mode's I/Os that follow the last one.
    follow_pct: u8,
    rng: Rng,
    ratio: f64,
    reads: u64,
    writes: u64,
    /// Writes to each file since its last fsync (by this thread).
    wsince: Vec<u32>,
    fsync_freq: u32,
    fsync_all: bool,
    pending_fsync: Option<u32>,
    /// `--fsync-every`: the period, when the thread last synced by time (the start of its
    /// last sweep, then each fsync of it as it completes; None until its first write
    /// completes), and the sweep under way (the first file not yet looked at).
    fsync_every: Option<Duration>,
    last_sync: Option<Instant>,
    sweep: Option<u32>,
    /// `--verify`: random offsets stay inside this thread's range too (`seq_lo..seq_hi`, whole
    /// blocks of the largest size), so no other thread writes its blocks.
    verify: bool,
    /// `--random-map`: the blocks of this thread's range done in this pass (random offsets then
    /// stay inside the range, each block once per pass).
    map: Option<RandMap>,
    /// The most bytes the next read or write may move (`--io-size`: what is left of the
    /// thread's share), set by the worker before each [`OpGen::next_op`].
    cap: u64,
    /// The trim modes: the operation of the mode's direction is a trim (not a write).
    trims: bool,
    /// `trimwrite`/`randtrimwrite`: the write owed at the place of the trim just issued (file,
    /// offset, length, size index), issued next, before anything else.
    write_after: Option<(u32, u64, u64, u8)>,
    /// The direction the pacer chose for the next read or write ([`OpGen::prefer`]).
    prefer: Option<bool>,
    /// A job file's offsets from fio's own generator (uniform offsets with fio's seeds).
    fio_off: Option<FioOffsets>,
    /// A job file's read/write mix as fio decides it (fio's seeds).
    fio_mix: Option<FioMix>,
    /// fio's strided zones of a sequential mode: the zones, where the current one starts
    /// (from `seq_lo`) and the bytes moved in it.
    zones: Option<(Zones, u64, u64)>,
}

impl OpGen {
    /// `fsize`: the size of each file in bytes (a multiple of the largest block size).
    pub fn new(job: &Job, files: u32, fsize: u64, thread: u32) -> Self {
        let sizes = job.bs_sizes();
        assert!(sizes.len() <= crate::model::job::MAX_BS_SIZES);
        let grid = sizes[0];
        let total = files as u64 * (fsize / grid);
        let t = thread as u64;
        let n = job.threads as u64;
        // Sequential modes: each thread streams through its own part of the set; whole files
        // when there are at least as many files as threads.
        // --verify: ranges of whole blocks of the largest size (plan checks there is one per
        // thread), so that no I/O of one thread reaches into another's range.
        // --offset-increment: every thread moves through the whole range (its own files when
        // there are as many as threads), N increments further on (`base`)
        let spread = job.offset_increment_bytes > 0;
        let (lo, hi) = if spread && (files as u64) < n {
            (0, files as u64 * fsize)
        } else if job.verify {
            let big = job.bs_bytes;
            let blocks = files as u64 * fsize / big;
            ((t * blocks / n) * big, ((t + 1) * blocks / n) * big)
        } else if files as u64 >= n {
            let f = files as u64;
            ((t * f / n) * fsize, ((t + 1) * f / n) * fsize)
        } else {
            ((t * total / n) * grid, ((t + 1) * total / n) * grid)
        };
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (0, files as u64 * fsize)
        };
        let own = job.verify || job.random_map != RandomMap::Off || spread;
        let map = (job.mode.is_random() && job.random_map != RandomMap::Off).then(|| {
            RandMap::new(
                job.random_map,
                ((hi - lo) / grid).max(1),
                job.seed ^ u64::from(thread).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            )
        });
        let map_on = map.is_some();
        // fio's thread number of this thread: its seeds
        let fio_thread = job.fio_rand.as_ref().map(|r| (r, r.thread_number + t));
        let uniform = matches!(job.distribution, crate::model::job::Distribution::Uniform);
        let dir = |side: BsSide| {
            let min = side.sizes()[0];
            let align = match job.block_align_bytes {
                _ if map_on => grid,
                0 => min,
                a => a,
            };
            // fio's last_block: the offsets where the smallest I/O still fits
            let apf = (fsize.saturating_sub(min.saturating_sub(align)) / align).max(1);
            let blocks = if own {
                ((hi - lo) / align).max(1)
            } else {
                files as u64 * apf
            };
            Dir {
                pick: if sizes.len() == 1 {
                    Sizes::One(0)
                } else {
                    Sizes::of(&side, &sizes)
                },
                align,
                apf,
                offsets: OffsetGen::new(&job.distribution, blocks),
            }
        };
        let dirs = [dir(job.bs_side(false)), dir(job.bs_side(true))];
        OpGen {
            mode: job.mode,
            sizes,
            dirs,
            grid,
            fsize,
            base: t.saturating_mul(job.offset_increment_bytes),
            seq_lo: lo,
            seq_hi: hi,
            pos: lo,
            pos_w: lo,
            skip: job.seq_skip_bytes,
            skip_real: (hi - lo) + t.saturating_mul(job.offset_increment_bytes),
            every: job.random_every,
            every_same: job.random_every_same,
            every_left: 1,
            follow_pct: if job.mode.is_random() {
                job.follow_pct
            } else {
                0
            },
            last: [(lo, lo); 2],
            rng: thread_rng(job.seed, thread),
            ratio: job.rw_ratio,
            reads: 0,
            writes: 0,
            wsince: vec![0; files as usize],
            fsync_freq: job.fsync_freq,
            fsync_all: job.fsync_all,
            pending_fsync: None,
            fsync_every: job
                .fsync_every_s
                .filter(|&s| s > 0.0 && s.is_finite())
                .map(Duration::from_secs_f64),
            last_sync: None,
            sweep: None,
            verify: own,
            map,
            cap: u64::MAX,
            trims: job.mode.trims(),
            write_after: None,
            prefer: None,
            fio_off: fio_thread
                .filter(|_| uniform && job.mode.is_random())
                .map(|(r, n)| FioOffsets::new(r, n)),
            fio_mix: fio_thread
                .filter(|_| matches!(job.mode, Mode::Rndrw | Mode::Seqrw))
                .map(|(r, n)| {
                    let pct = (100.0 * job.rw_ratio / (1.0 + job.rw_ratio)).round();
                    FioMix::new(r, n, if pct.is_finite() { pct as u32 } else { 100 })
                }),
            zones: job
                .timing
                .zones
                .filter(|_| !job.mode.is_random())
                .map(|z| (z, 0, 0)),
        }
    }

    /// `--io-size`: the next read or write moves at most `bytes` (what is left of the thread's
    /// share); its size is trimmed to that.
    #[inline]
    pub fn cap(&mut self, bytes: u64) {
        self.cap = bytes;
    }

    /// The index of the largest size of the job not above `len` (the per-size statistics of an
    /// I/O trimmed to fit).
    #[inline]
    fn size_index(&self, len: u64) -> u8 {
        self.sizes.iter().rposition(|&s| s <= len).unwrap_or(0) as u8
    }

    /// `--random-map`: the next block of this thread's range not done in this pass and the
    /// length of an I/O there: its size drawn again until it ends inside its file and the range
    /// (fio's `io_u_fits`), then trimmed to the blocks not done from its start (each marked
    /// done).
    #[inline]
    fn place_mapped(&mut self, w: usize, si: &mut u8, len: &mut u64) -> (u32, u64) {
        let map = self.map.as_mut().expect("a random map");
        let block = match self.fio_off.as_mut() {
            Some(f) => map.start_drawn(|n| f.block(n)),
            None => map.start(&self.dirs[w].offsets, &mut self.rng),
        };
        let p = self.seq_lo + block * self.grid;
        let file_end = (p / self.fsize + 1) * self.fsize;
        let end = self.seq_hi.min(file_end);
        self.refit(w, end - p, si, len);
        let room = (end - p).div_ceil(self.grid);
        let want = len.div_ceil(self.grid).min(room).max(1);
        let map = self.map.as_mut().expect("a random map");
        let got = map.take(block, want);
        let stop = (p + got * self.grid).min(end);
        if *len > stop - p {
            *len = stop - p;
            *si = self.size_index(*len);
        }
        ((p / self.fsize) as u32, self.base + p % self.fsize)
    }

    /// fio's `io_u_fits`: while an I/O of `len` bytes would not fit in the `room` bytes from its
    /// offset, its size is drawn again (a direction of one size, or 64 draws that never fit:
    /// left to the caller, which trims or moves it).
    #[inline]
    fn refit(&mut self, w: usize, room: u64, si: &mut u8, len: &mut u64) {
        let mut n = 0;
        while *len > room && n < 64 && !matches!(self.dirs[w].pick, Sizes::One(_)) {
            (*si, *len) = self.draw(w);
            n += 1;
        }
    }

    /// This thread's range of the set in bytes (files one after the other): with `--verify`,
    /// every block it reads or writes lies inside it.
    pub fn range(&self) -> (u64, u64) {
        (self.seq_lo, self.seq_hi)
    }

    /// `--verify`: a random aligned block of this thread's range to (file, offset); an I/O
    /// that would reach past the range or its file is moved back to the last aligned offset
    /// where it fits.
    #[inline]
    fn place_own(&self, w: usize, block: u64, len: u64) -> (u32, u64) {
        let a = self.dirs[w].align;
        let p = self.seq_lo + block * a;
        let file_start = p / self.fsize * self.fsize;
        let end = self.seq_hi.min(file_start + self.fsize);
        let p = if p + len > end {
            (end - len) / a * a
        } else {
            p
        };
        ((p / self.fsize) as u32, self.base + p % self.fsize)
    }

    /// Every offset starts at `base` (`--offset`: of a `--device` target, or in each file),
    /// and this thread's `--offset-increment`s further on.
    pub fn with_base(mut self, base: u64) -> Self {
        self.base += base;
        self.skip_real += base;
        self
    }

    /// The size of the next read (`w` 0) or write or trim (`w` 1): (index, bytes).
    #[inline]
    fn pick_size(&mut self, w: usize) -> (u8, u64) {
        let rng = &mut self.rng;
        match &self.dirs[w].pick {
            Sizes::One(i) => (*i, self.sizes[*i as usize]),
            Sizes::Table(t) => {
                let i = t[rng.random_range(0..100usize)];
                (i, self.sizes[i as usize])
            }
            &Sizes::Range { min, max, step } => {
                let len = fio_range_pick(min, max, step, rng.random::<f64>());
                (self.size_index(len), len)
            }
        }
    }

    /// A size drawn for direction `w`, trimmed to what `--io-size` leaves.
    #[inline]
    fn draw(&mut self, w: usize) -> (u8, u64) {
        let (si, len) = self.pick_size(w);
        if len > self.cap {
            let len = self.cap.max(1);
            (self.size_index(len), len)
        } else {
            (si, len)
        }
    }

    /// A random aligned block of direction `w` to (file, offset): an I/O that would reach past
    /// the end of its file takes another size (fio's `io_u_fits`), or, when none fits, moves
    /// back to the last aligned offset where it does.
    #[inline]
    fn place(&mut self, w: usize, block: u64, si: &mut u8, len: &mut u64) -> (u32, u64) {
        let (a, apf) = (self.dirs[w].align, self.dirs[w].apf);
        let mut off = (block % apf) * a;
        self.refit(w, self.fsize.saturating_sub(off), si, len);
        if off + *len > self.fsize {
            off = self.fsize.saturating_sub(*len) / a * a;
        }
        ((block / apf) as u32, self.base + off)
    }

    /// The next sequential position (a byte of the set) for an I/O of `len` bytes; the
    /// position then moves on by `len`. An I/O never crosses the end of its file: it starts
    /// the next file instead, and the thread wraps to the start of its range at its end.
    #[inline]
    fn seq_next(&mut self, len: u64) -> (u32, u64) {
        let mut p = self.pos;
        if p + len > self.seq_hi {
            p = self.seq_lo;
        }
        let in_file = p % self.fsize;
        if in_file + len > self.fsize {
            p += self.fsize - in_file;
            if p + len > self.seq_hi {
                // a range narrower than this I/O: the start of the file holding the range
                p = self.seq_lo / self.fsize * self.fsize;
            }
        }
        self.pos = p + len;
        if self.pos >= self.seq_hi {
            self.pos = self.seq_lo;
        }
        ((p / self.fsize) as u32, self.base + p % self.fsize)
    }

    /// `--seq-skip`: the next position of the thread's range for an I/O of `len` bytes, fio's
    /// way ([`skip_step`]); the range's start when the pass ended.
    #[inline]
    fn seq_skip(&mut self, len: u64) -> (u32, u64) {
        let range = self.seq_hi - self.seq_lo;
        let rel = skip_step(
            self.pos - self.seq_lo,
            len,
            range,
            self.skip_real,
            self.skip,
        )
        .unwrap_or(0);
        let p = self.seq_lo + rel;
        self.pos = p + len;
        ((p / self.fsize) as u32, self.base + p % self.fsize)
    }

    /// `--random-every`: an I/O between two drawn ones: after the last of its direction (or at
    /// its start, `--random-every-same`); None when it would leave the range or its file (then
    /// it is drawn, as fio falls back to a random block).
    #[inline]
    fn follow(&self, read: bool, len: u64) -> Option<(u32, u64)> {
        let (start, end) = self.last[usize::from(!read)];
        let p = if self.every_same { start } else { end };
        // the thread's own range, or the whole set where random offsets reach all of it
        let end = if self.verify {
            self.seq_hi
        } else {
            self.wsince.len() as u64 * self.fsize
        };
        let fits = p + len <= end && p % self.fsize + len <= self.fsize;
        fits.then(|| ((p / self.fsize) as u32, self.base + p % self.fsize))
    }

    /// The bytes from the next sequential position (the writes' own with seqrw) to the end of
    /// its file or of the thread's range, whichever is nearer.
    #[inline]
    fn seq_room(&self, read: bool) -> u64 {
        let p = if self.mode == Mode::Seqrw && !read {
            self.pos_w
        } else {
            self.pos
        };
        (self.seq_hi.saturating_sub(p)).min(self.fsize - p % self.fsize)
    }

    #[inline]
    fn seq_at(&mut self, len: u64) -> (u32, u64) {
        if let Some((z, start, bytes)) = &mut self.zones {
            // fio's setup_strided_zone_mode: the next zone once this one moved its bytes
            if *bytes >= z.size {
                *bytes = 0;
                *start = start.saturating_add(z.range.saturating_add(z.skip));
                if *start >= self.seq_hi - self.seq_lo {
                    *start = 0;
                }
                self.pos = self.seq_lo + *start;
            }
            // back to the zone's start past its range (or the end of the thread's range)
            let zs = self.seq_lo + *start;
            if self.pos < zs
                || self.pos >= zs.saturating_add(z.range)
                || self.pos + len > self.seq_hi
            {
                self.pos = zs;
            }
            *bytes += len;
        }
        if self.skip == 0 {
            self.seq_next(len)
        } else {
            self.seq_skip(len)
        }
    }

    /// Whether the next read/write is a read: the direction the pacer chose (fio's per-direction
    /// rates), else the mix's.
    #[inline]
    fn pick_read(&mut self) -> bool {
        self.prefer.take().unwrap_or_else(|| self.would_read())
    }

    /// fio's per-direction rates: the next read or write is a read (`true`) or a write, whatever
    /// the mix says (an fsync due still comes first).
    #[inline]
    pub fn prefer(&mut self, read: bool) {
        self.prefer = Some(read);
    }

    /// Whether the mix makes the next read/write a read.
    #[inline]
    pub fn would_read(&self) -> bool {
        match self.mode {
            Mode::Seqrd | Mode::Rndrd => true,
            Mode::Seqwr | Mode::Seqrewr | Mode::Rndwr => false,
            Mode::Seqtrim | Mode::Rndtrim | Mode::Seqtrimwr | Mode::Rndtrimwr => false,
            // Exact ratio: read while reads < ratio × (writes + 1). 1.5 gives r r w r w | r r w r w ...
            Mode::Rndrw | Mode::Seqrw => match &self.fio_mix {
                Some(m) => m.next_is_read(),
                None => (self.reads as f64) < self.ratio * (self.writes + 1) as f64,
            },
        }
    }

    /// A read, write or fsync of this thread completed at `t`, the clock reading the worker
    /// took for its latency (no clock read here). With `--fsync-every`, a write that completes
    /// that long after the thread last synced by time starts a sweep: an fsync of each file it
    /// wrote since its last fsync, before its next read or write; each fsync of the sweep moves
    /// the time of the last sync on as it completes.
    #[inline]
    pub fn completed(&mut self, kind: OpKind, t: Instant) {
        let Some(every) = self.fsync_every else {
            return;
        };
        match kind {
            OpKind::Write if self.sweep.is_none() => {
                let last = *self.last_sync.get_or_insert(t);
                if t.saturating_duration_since(last) >= every {
                    self.sweep = Some(0);
                    self.last_sync = Some(t);
                }
            }
            OpKind::Fsync if self.sweep.is_some() => self.last_sync = Some(t),
            _ => {}
        }
    }

    /// The first file from `from` on that this thread wrote since its last fsync of it.
    fn written_from(&self, from: u32) -> Option<u32> {
        self.wsince
            .get(from as usize..)?
            .iter()
            .position(|&w| w > 0)
            .map(|i| from + i as u32)
    }

    /// The next operation. An fsync that is due comes before the next read or write.
    #[inline]
    pub fn next_op(&mut self) -> Next {
        if let Some(f) = self.pending_fsync.take() {
            return Next::Fsync { file: f };
        }
        if let Some(from) = self.sweep {
            match self.written_from(from) {
                Some(f) => {
                    self.wsince[f as usize] = 0;
                    self.sweep = Some(f + 1);
                    return Next::Fsync { file: f };
                }
                None => self.sweep = None,
            }
        }
        if let Some((file, off, len, si)) = self.write_after.take() {
            // the write of a trim-and-write pair: the trim's place and size (fio's trimwrite)
            return self.counted_write(file, off, len, si);
        }
        let read = self.pick_read();
        let w = usize::from(!read);
        let (mut si, mut len) = self.pick_size(w);
        if !matches!(self.dirs[w].pick, Sizes::One(_)) && !self.mode.is_random() && self.skip == 0 {
            // fio draws the size again until one fits before the end of the file or range
            // (get_next_buflen's io_u_fits): a 512/50:1M/50 split ends each pass over its file
            // in 512-byte I/Os, where iolab had wrapped to the start. The sizes are drawn
            // whole: what --io-size leaves trims only the size that fits (fio's last I/O)
            let room = self.seq_room(read);
            let mut n = 0;
            while len > room && n < 64 {
                (si, len) = self.pick_size(w);
                n += 1;
            }
            if len > room && self.sizes[0] <= room {
                si = self.size_index(room);
                len = self.sizes[si as usize];
            }
        }
        if len > self.cap {
            len = self.cap.max(1);
            si = self.size_index(len);
        }
        // --random-every: every Nth drawn; --random-pct: of those, the share drawn (fio's
        // rw_seq_hit, then should_do_random)
        let follow = self.mode.is_random()
            && if self.every > 1 {
                self.every_left -= 1;
                if self.every_left == 0 {
                    self.every_left = self.every;
                }
                self.every_left != self.every
            } else {
                false
            }
            || (self.follow_pct > 0 && self.rng.random_range(0..100u8) < self.follow_pct);
        let followed = if follow { self.follow(read, len) } else { None };
        let (file, off) = if let Some(at) = followed {
            if let Some(m) = self.map.as_mut() {
                let p = u64::from(at.0) * self.fsize + (at.1 - self.base);
                if let Some(rel) = p.checked_sub(self.seq_lo) {
                    m.mark(rel / self.grid, len.div_ceil(self.grid));
                }
            }
            at
        } else if self.map.is_some() {
            self.place_mapped(w, &mut si, &mut len)
        } else if self.mode.is_random() {
            let offsets = &self.dirs[w].offsets;
            let block = match self.fio_off.as_mut() {
                Some(f) => f.block(offsets.blocks()),
                None => offsets.next(&mut self.rng),
            };
            if self.verify {
                self.place_own(w, block, len)
            } else {
                self.place(w, block, &mut si, &mut len)
            }
        } else if self.mode == Mode::Seqrw && !read {
            // the writes' own position
            std::mem::swap(&mut self.pos, &mut self.pos_w);
            let at = self.seq_at(len);
            std::mem::swap(&mut self.pos, &mut self.pos_w);
            at
        } else {
            self.seq_at(len)
        };
        if self.every > 1 || self.follow_pct > 0 {
            let p = u64::from(file) * self.fsize + (off - self.base);
            self.last[usize::from(!read)] = (p, p + len);
        }
        if let Some(m) = self.fio_mix.as_mut() {
            m.issued(read);
        }
        if read {
            self.reads += 1;
            Next::Io {
                kind: OpKind::Read,
                file,
                off,
                len,
                si,
            }
        } else if self.trims {
            if self.mode.trim_then_write() {
                self.write_after = Some((file, off, len, si));
            }
            Next::Io {
                kind: OpKind::Trim,
                file,
                off,
                len,
                si,
            }
        } else {
            self.counted_write(file, off, len, si)
        }
    }

    /// A write, counted for the fsyncs it makes due.
    #[inline]
    fn counted_write(&mut self, file: u32, off: u64, len: u64, si: u8) -> Next {
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
            len,
            si,
        }
    }

    /// The fsyncs still owed when a thread stops: an fsync that fell due with the last write
    /// (`carried` or pending here), the rest of a time sweep under way, then, with --fsync-end,
    /// every file written since its last fsync. Clears the marks. Called once per phase, so its
    /// allocation is off the hot path.
    pub fn final_fsyncs(&mut self, carried: Option<u32>, fsync_end: bool) -> Vec<u32> {
        let mut v: Vec<u32> = carried
            .into_iter()
            .chain(self.pending_fsync.take())
            .collect();
        let sweep = self.sweep.take();
        for (i, w) in self.wsince.iter_mut().enumerate() {
            let due = fsync_end || sweep.is_some_and(|from| i as u32 >= from);
            if *w > 0 && due && !v.contains(&(i as u32)) {
                v.push(i as u32);
            }
            *w = 0;
        }
        v
    }
}

/// fio's next sequential position with `rw=...:N` (`get_next_seq_offset`, `skip` = N), in a
/// range of `range` bytes whose I/O before ended at `last` (relative to the range's start; 0
/// before the first): after a first I/O, `skip` further on; a position at or past `real` (the
/// file's length from the range's start) or before the start wraps, forwards to the start,
/// backwards to `range + skip`. None when the I/O before ended at `real` or an I/O of `len`
/// bytes would not fit in the range: fio's pass over the file ends.
#[inline]
pub fn skip_step(last: u64, len: u64, range: u64, real: u64, skip: i64) -> Option<u64> {
    if last >= real {
        return None;
    }
    let mut p = last;
    if p != 0 {
        let q = i128::from(p) + i128::from(skip);
        p = if q < 0 || q >= i128::from(real) {
            if skip > 0 {
                0
            } else {
                u64::try_from(i128::from(range) + i128::from(skip)).ok()?
            }
        } else {
            q as u64
        };
    }
    (p < range && p + len <= range).then_some(p)
}

/// How many I/Os of `len` bytes one pass of fio's `rw=...:N` makes over a range (see
/// [`skip_step`]) before it ends, at most `limit`.
pub fn skip_pass_ops(len: u64, range: u64, real: u64, skip: i64, limit: u64) -> u64 {
    let (mut last, mut n) = (0u64, 0u64);
    while n < limit {
        match skip_step(last, len, range, real, skip) {
            Some(p) => {
                last = p + len;
                n += 1;
            }
            None => break,
        }
    }
    n
}

/// How many I/Os of `len` bytes fio's strided zones `z` make over a range of `range` bytes
/// before one would not fit in it (fio's pass ends there: `fill_io_u`), at most `limit`. A zone
/// whose I/Os all fit is counted at once.
pub fn zone_pass_ops(len: u64, range: u64, z: &Zones, limit: u64) -> u64 {
    let len = len.max(1);
    // I/Os per zone, and per pass through its range
    let per_zone = z.size.div_ceil(len).max(1);
    let per_cycle = z.range.div_ceil(len).max(1);
    let (mut n, mut start) = (0u64, 0u64);
    while n < limit {
        let k = per_zone.min(limit - n);
        if start.saturating_add(k.min(per_cycle).saturating_mul(len)) <= range {
            n += k;
        } else {
            let mut pos = start;
            for _ in 0..k {
                if pos >= start.saturating_add(z.range) {
                    pos = start;
                }
                if pos + len > range {
                    return n;
                }
                pos += len;
                n += 1;
            }
        }
        start = start.saturating_add(z.range.saturating_add(z.skip));
        if start >= range {
            start = 0;
        }
    }
    n
}

/// How far past the first thread's range the last thread's starts (`--offset-increment`), the
/// most of the jobs'.
pub fn increment_reach(jobs: &[Job]) -> u64 {
    jobs.iter()
        .map(|j| u64::from(j.threads.saturating_sub(1)).saturating_mul(j.offset_increment_bytes))
        .max()
        .unwrap_or(0)
}

/// What a thread owes under `--ops` or `--io-size`: its share, split exactly across threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    Ops(u64),
    Bytes(u64),
}

impl Quota {
    /// Whether `ops` reads and writes moving `bytes` pay it.
    #[inline]
    pub fn paid(self, ops: u64, bytes: u64) -> bool {
        match self {
            Quota::Ops(n) => ops >= n,
            Quota::Bytes(n) => bytes >= n,
        }
    }

    /// The most bytes the next read or write may move after `bytes` (u64::MAX for `--ops`).
    #[inline]
    pub fn left(self, bytes: u64) -> u64 {
        match self {
            Quota::Ops(_) => u64::MAX,
            Quota::Bytes(n) => n.saturating_sub(bytes),
        }
    }
}

/// Per-thread quota for `--ops` or `--io-size`, split exactly across threads (bytes in whole
/// blocks of the smallest size where they divide so).
pub fn thread_quota(job: &Job, thread: u32) -> Option<Quota> {
    let t = job.threads as u64;
    let share = |n: u64| n / t + u64::from((thread as u64) < n % t);
    match job.limit {
        Limit::Ops(n) => Some(Quota::Ops(share(n))),
        Limit::Bytes(n) => {
            let grid = job.bs_sizes()[0];
            if n.is_multiple_of(grid) {
                Some(Quota::Bytes(share(n / grid) * grid))
            } else {
                Some(Quota::Bytes(share(n)))
            }
        }
        Limit::TimeS(_) => None,
    }
}

#[cfg(test)]
pub(super) mod tests;
