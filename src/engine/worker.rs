//! The hot path: one worker thread issuing and timing I/O.
//!
//! Each worker owns its generator, buffers and [`ThreadStats`]; nothing is shared but the
//! read-only file descriptors, a stop flag and two progress counters that only this thread
//! writes (relaxed stores, no read-modify-write). Per I/O there is no allocation, no lock and no
//! system call besides the I/O itself and two clock reads.
//!
//! Engines that complete one I/O per call (sync, mmap, null) share one loop, monomorphized per
//! engine so the choice is made once per phase; io_uring has its own loop with `iodepth` I/Os in
//! flight.

use crate::measure::stats::{OpKind, ThreadStats};
use crate::model::job::{EngineKind, FsyncMode, Job, Limit, Mode};
use crate::spec::dist::{OffsetGen, Rng, thread_rng};
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Live counters one worker publishes for the progress line.
#[derive(Default)]
#[repr(align(64))]
pub struct Progress {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
}

/// A memory mapping of one data file (mmap engine).
#[derive(Clone, Copy)]
pub struct MapPtr {
    pub ptr: *mut u8,
    pub len: usize,
}
// SAFETY: the mappings live for the whole phase (unmapped only after all workers joined); workers
// touch disjoint-or-racy bytes of a benchmark file, which is the point of the workload.
unsafe impl Send for MapPtr {}
unsafe impl Sync for MapPtr {}

/// What all workers of one phase share (read-only).
pub struct Shared<'a> {
    pub job: &'a Job,
    pub fds: &'a [RawFd],
    pub maps: &'a [MapPtr],
    pub blocks_per_file: u64,
    /// Buffer alignment for O_DIRECT (bytes, power of two).
    pub mem_align: usize,
    pub stop: &'a AtomicBool,
    /// Set by a worker that hit an unrecoverable error (engine setup); others stop too.
    pub start: Instant,
    /// End of the ramp: operations issued before it are not recorded.
    pub measure_start: Instant,
    /// No new operations are issued at or after this instant (time-limited runs).
    pub deadline: Option<Instant>,
}

/// One aligned, zero-initialised buffer area, filled with pseudo-random bytes so writes are not
/// trivially compressible.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    pub fn new(len: usize, align: usize, fill_seed: u64) -> Self {
        let layout = Layout::from_size_align(len.max(1), align.max(8)).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(
            !ptr.is_null(),
            "out of memory allocating {len} bytes of I/O buffers"
        );
        let mut b = AlignedBuf { ptr, layout };
        let mut x = fill_seed | 1;
        for chunk in b.bytes_mut().chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        b
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is a live allocation of layout.size() bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

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

    #[inline]
    fn place(&self, block: u64) -> (u32, u64) {
        ((block / self.bpf) as u32, (block % self.bpf) * self.bs)
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

/// An engine that completes one operation per call.
pub trait SyncEngine {
    /// Reads `buf.len()` bytes at `off`; Err(errno) on failure (0 = short transfer).
    fn read(&mut self, file: u32, off: u64, buf: &mut [u8]) -> Result<(), i32>;
    fn write(&mut self, file: u32, off: u64, buf: &[u8]) -> Result<(), i32>;
    fn fsync(&mut self, file: u32) -> Result<(), i32>;
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// pread(2)/pwrite(2).
pub struct Psync<'a> {
    pub fds: &'a [RawFd],
    pub mode: FsyncMode,
}

impl SyncEngine for Psync<'_> {
    #[inline]
    fn read(&mut self, file: u32, off: u64, buf: &mut [u8]) -> Result<(), i32> {
        // SAFETY: buf is valid for buf.len() bytes; fd is open for the phase.
        let r = unsafe {
            libc::pread64(
                self.fds[file as usize],
                buf.as_mut_ptr().cast(),
                buf.len(),
                off as i64,
            )
        };
        match r {
            r if r < 0 => Err(errno()),
            r if r as usize != buf.len() => Err(0),
            _ => Ok(()),
        }
    }
    #[inline]
    fn write(&mut self, file: u32, off: u64, buf: &[u8]) -> Result<(), i32> {
        // SAFETY: as above.
        let r = unsafe {
            libc::pwrite64(
                self.fds[file as usize],
                buf.as_ptr().cast(),
                buf.len(),
                off as i64,
            )
        };
        match r {
            r if r < 0 => Err(errno()),
            r if r as usize != buf.len() => Err(0),
            _ => Ok(()),
        }
    }
    #[inline]
    fn fsync(&mut self, file: u32) -> Result<(), i32> {
        let fd = self.fds[file as usize];
        // SAFETY: plain syscalls on an open fd.
        let r = unsafe {
            match self.mode {
                FsyncMode::Fsync => libc::fsync(fd),
                FsyncMode::Fdatasync => libc::fdatasync(fd),
            }
        };
        if r < 0 { Err(errno()) } else { Ok(()) }
    }
}

/// Memory-mapped files: a read copies from the mapping, a write copies into it, fsync is msync.
/// An I/O error on a mapping arrives as SIGBUS, which no engine can count: use sync or io_uring
/// to study errors.
pub struct Mmap<'a> {
    pub maps: &'a [MapPtr],
}

impl SyncEngine for Mmap<'_> {
    #[inline]
    fn read(&mut self, file: u32, off: u64, buf: &mut [u8]) -> Result<(), i32> {
        let m = self.maps[file as usize];
        if off as usize + buf.len() > m.len {
            return Err(0);
        }
        // SAFETY: the range is inside the live mapping; buf is a separate allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(m.ptr.add(off as usize), buf.as_mut_ptr(), buf.len())
        };
        std::hint::black_box(&buf);
        Ok(())
    }
    #[inline]
    fn write(&mut self, file: u32, off: u64, buf: &[u8]) -> Result<(), i32> {
        let m = self.maps[file as usize];
        if off as usize + buf.len() > m.len {
            return Err(0);
        }
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), m.ptr.add(off as usize), buf.len()) };
        Ok(())
    }
    #[inline]
    fn fsync(&mut self, file: u32) -> Result<(), i32> {
        let m = self.maps[file as usize];
        // SAFETY: msync on a live mapping.
        let r = unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) };
        if r < 0 { Err(errno()) } else { Ok(()) }
    }
}

/// No I/O: what is left is iolab's own cost per operation.
pub struct Null;

impl SyncEngine for Null {
    #[inline]
    fn read(&mut self, _: u32, _: u64, buf: &mut [u8]) -> Result<(), i32> {
        std::hint::black_box(buf);
        Ok(())
    }
    #[inline]
    fn write(&mut self, _: u32, _: u64, buf: &[u8]) -> Result<(), i32> {
        std::hint::black_box(buf);
        Ok(())
    }
    #[inline]
    fn fsync(&mut self, _: u32) -> Result<(), i32> {
        Ok(())
    }
}

/// Paces issue times for `--rate` (per thread), or lets everything go at once.
struct Pacer {
    interval: Option<Duration>,
    next: Instant,
}

impl Pacer {
    fn new(sh: &Shared, thread_rate: Option<f64>) -> Self {
        Pacer {
            interval: thread_rate.map(|r| Duration::from_secs_f64(1.0 / r)),
            next: sh.start,
        }
    }
    /// Scheduled start of the next operation (None when not rate limited).
    #[inline]
    fn peek(&self) -> Option<Instant> {
        self.interval.map(|_| self.next)
    }
    #[inline]
    fn advance(&mut self) {
        if let Some(i) = self.interval {
            self.next += i;
        }
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

fn thread_rate(job: &Job) -> Option<f64> {
    job.rate_iops.map(|r| r as f64 / job.threads as f64)
}

/// The measured window's length in ns for time-limited runs, else u64::MAX.
fn window_ns(sh: &Shared) -> u64 {
    sh.deadline
        .map_or(u64::MAX, |d| ns_since(sh.measure_start, d))
}

#[inline]
fn ns_since(a: Instant, b: Instant) -> u64 {
    b.saturating_duration_since(a).as_nanos() as u64
}

/// Runs one worker with an engine that completes one I/O per call.
pub fn run_sync<E: SyncEngine>(
    sh: &Shared,
    thread: u32,
    files: u32,
    eng: &mut E,
    prog: &Progress,
) -> ThreadStats {
    let job = sh.job;
    let bs = job.bs_bytes as usize;
    let mut st = ThreadStats::new(window_ns(sh));
    let mut g = OpGen::new(job, files, sh.blocks_per_file, thread);
    let mut buf = AlignedBuf::new(bs, sh.mem_align, job.seed ^ thread as u64);
    let quota = thread_quota(job, thread);
    let mut done_in_window = 0u64;
    let mut pacer = Pacer::new(sh, thread_rate(job));
    let (mut p_ops, mut p_bytes) = (0u64, 0u64);
    let mut now = Instant::now();
    loop {
        if sh.stop.load(Relaxed)
            || sh.deadline.is_some_and(|d| now >= d)
            || quota.is_some_and(|q| done_in_window >= q)
        {
            break;
        }
        let next = g.next_op();
        let sched = pacer.peek();
        if let Some(s) = sched
            && s > now
        {
            std::thread::sleep(s - now);
        }
        let t0 = Instant::now();
        let (kind, bytes, res) = match next {
            Next::Io {
                kind: OpKind::Read,
                file,
                off,
            } => (
                OpKind::Read,
                bs as u64,
                eng.read(file, off, buf.bytes_mut()),
            ),
            Next::Io { kind: _, file, off } => (
                OpKind::Write,
                bs as u64,
                eng.write(file, off, buf.bytes_mut()),
            ),
            Next::Fsync { file } => (OpKind::Fsync, 0, eng.fsync(file)),
        };
        let t1 = Instant::now();
        now = t1;
        if kind != OpKind::Fsync {
            pacer.advance();
        }
        let issued = sched.unwrap_or(t0);
        if issued < sh.measure_start {
            continue;
        }
        match res {
            Ok(()) => {
                st.record(
                    kind,
                    bytes,
                    ns_since(issued, t1),
                    ns_since(sh.measure_start, t1),
                );
                p_ops += 1;
                p_bytes += bytes;
                prog.ops.store(p_ops, Relaxed);
                prog.bytes.store(p_bytes, Relaxed);
            }
            Err(e) => st.error(e),
        }
        if kind != OpKind::Fsync {
            done_in_window += 1;
        }
    }
    if job.mode.writes() && !sh.stop.load(Relaxed) {
        for f in g.final_fsyncs(None, job.fsync_end) {
            let t0 = Instant::now();
            let r = eng.fsync(f);
            let t1 = Instant::now();
            match r {
                Ok(()) => st.record(
                    OpKind::Fsync,
                    0,
                    ns_since(t0, t1),
                    ns_since(sh.measure_start, t1),
                ),
                Err(e) => st.error(e),
            }
        }
    }
    st.finish(ns_since(sh.measure_start, Instant::now()));
    st
}

/// One I/O in flight on the ring.
#[derive(Clone, Copy)]
struct Slot {
    issued: Instant,
    kind: OpKind,
    bytes: u64,
    expect: u32,
}

/// Runs one worker on io_uring with up to `iodepth` I/Os in flight.
pub fn run_uring(
    sh: &Shared,
    thread: u32,
    files: u32,
    prog: &Progress,
) -> std::io::Result<ThreadStats> {
    use io_uring::{IoUring, opcode, types};
    let job = sh.job;
    let depth = job.iodepth.max(1) as usize;
    let bs = job.bs_bytes as usize;
    let mut ring = IoUring::new((depth as u32).next_power_of_two().max(2))?;
    let mut st = ThreadStats::new(window_ns(sh));
    let mut g = OpGen::new(job, files, sh.blocks_per_file, thread);
    let mut bufs = AlignedBuf::new(bs * depth, sh.mem_align.max(4096), job.seed ^ thread as u64);
    let base = bufs.bytes_mut().as_mut_ptr();
    let mut slots: Vec<Option<Slot>> = vec![None; depth + 1]; // index depth = the fsync slot
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let quota = thread_quota(job, thread);
    let mut issued_in_window = 0u64;
    let mut inflight = 0usize;
    let mut pacer = Pacer::new(sh, thread_rate(job));
    let (mut p_ops, mut p_bytes) = (0u64, 0u64);
    let mut carry: Option<Next> = None;
    let mut stopping = false;
    let fsync_flags = match job.fsync_mode {
        FsyncMode::Fsync => types::FsyncFlags::empty(),
        FsyncMode::Fdatasync => types::FsyncFlags::DATASYNC,
    };

    // Reaps every available completion; returns how many.
    let mut reap = |ring: &mut IoUring,
                    slots: &mut Vec<Option<Slot>>,
                    free: &mut Vec<usize>,
                    st: &mut ThreadStats|
     -> usize {
        let mut n = 0;
        let t1 = Instant::now();
        for cqe in ring.completion() {
            let idx = cqe.user_data() as usize;
            let s = slots[idx].take().expect("completion for a live slot");
            if idx < depth {
                free.push(idx);
            }
            n += 1;
            if s.issued < sh.measure_start {
                continue;
            }
            let r = cqe.result();
            if r < 0 {
                st.error(-r);
            } else if r as u32 != s.expect {
                st.error(0);
            } else {
                st.record(
                    s.kind,
                    s.bytes,
                    ns_since(s.issued, t1),
                    ns_since(sh.measure_start, t1),
                );
                p_ops += 1;
                p_bytes += s.bytes;
                prog.ops.store(p_ops, Relaxed);
                prog.bytes.store(p_bytes, Relaxed);
            }
        }
        n
    };

    loop {
        let now = Instant::now();
        if !stopping
            && (sh.stop.load(Relaxed)
                || sh.deadline.is_some_and(|d| now >= d)
                || quota.is_some_and(|q| issued_in_window >= q))
        {
            stopping = true;
        }
        // Issue as many as allowed.
        let mut wait_until: Option<Instant> = None;
        while !stopping && inflight < depth {
            let next = carry.take().unwrap_or_else(|| g.next_op());
            if let Next::Fsync { file } = next {
                if inflight > 0 {
                    carry = Some(next); // drain first: the fsync covers completed writes
                    break;
                }
                let sqe = opcode::Fsync::new(types::Fd(sh.fds[file as usize]))
                    .flags(fsync_flags)
                    .build()
                    .user_data(depth as u64);
                slots[depth] = Some(Slot {
                    issued: Instant::now(),
                    kind: OpKind::Fsync,
                    bytes: 0,
                    expect: 0,
                });
                // SAFETY: the sqe references no memory.
                unsafe { ring.submission().push(&sqe).expect("room in the SQ") };
                inflight += 1;
                break;
            }
            let sched = pacer.peek();
            let t = Instant::now();
            if let Some(s) = sched
                && s > t
            {
                carry = Some(next);
                wait_until = Some(s);
                break;
            }
            let Next::Io { kind, file, off } = next else {
                unreachable!()
            };
            let slot = free.pop().expect("a free slot when inflight < depth");
            // SAFETY: slot < depth, so the buffer lies inside bufs.
            let ptr = unsafe { base.add(slot * bs) };
            let fd = types::Fd(sh.fds[file as usize]);
            let sqe = match kind {
                OpKind::Read => opcode::Read::new(fd, ptr, bs as u32).offset(off).build(),
                _ => opcode::Write::new(fd, ptr, bs as u32).offset(off).build(),
            };
            let issued = sched.unwrap_or(t);
            slots[slot] = Some(Slot {
                issued,
                kind,
                bytes: bs as u64,
                expect: bs as u32,
            });
            // SAFETY: the buffer stays valid and untouched until the completion is reaped.
            unsafe {
                ring.submission()
                    .push(&sqe.user_data(slot as u64))
                    .expect("room in the SQ")
            };
            inflight += 1;
            pacer.advance();
            if issued >= sh.measure_start {
                issued_in_window += 1;
                if quota.is_some_and(|q| issued_in_window >= q) {
                    stopping = true;
                }
            }
        }
        if inflight == 0 {
            if stopping {
                break;
            }
            if let Some(w) = wait_until {
                let now = Instant::now();
                if w > now {
                    std::thread::sleep(w - now);
                }
            }
            continue;
        }
        match wait_until {
            Some(w) if !stopping => {
                let d = w.saturating_duration_since(Instant::now());
                let ts = types::Timespec::new()
                    .sec(d.as_secs())
                    .nsec(d.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                match ring.submitter().submit_with_args(1, &args) {
                    Ok(_) => {}
                    Err(e)
                        if e.raw_os_error() == Some(libc::ETIME)
                            || e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => return Err(e),
                }
            }
            _ => match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(e),
            },
        }
        inflight -= reap(&mut ring, &mut slots, &mut free, &mut st);
    }
    if job.mode.writes() && !sh.stop.load(Relaxed) {
        let carried = match carry {
            Some(Next::Fsync { file }) => Some(file),
            _ => None,
        };
        for f in g.final_fsyncs(carried, job.fsync_end) {
            let sqe = opcode::Fsync::new(types::Fd(sh.fds[f as usize]))
                .flags(fsync_flags)
                .build()
                .user_data(depth as u64);
            slots[depth] = Some(Slot {
                issued: Instant::now(),
                kind: OpKind::Fsync,
                bytes: 0,
                expect: 0,
            });
            // SAFETY: no memory referenced.
            unsafe { ring.submission().push(&sqe).expect("room in the SQ") };
            loop {
                match ring.submit_and_wait(1) {
                    Ok(_) => break,
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(e) => return Err(e),
                }
            }
            reap(&mut ring, &mut slots, &mut free, &mut st);
        }
    }
    st.finish(ns_since(sh.measure_start, Instant::now()));
    Ok(st)
}

/// Runs one worker with the job's engine.
pub fn run_worker(
    sh: &Shared,
    thread: u32,
    files: u32,
    prog: &Progress,
) -> std::io::Result<ThreadStats> {
    Ok(match sh.job.engine {
        EngineKind::Sync => run_sync(
            sh,
            thread,
            files,
            &mut Psync {
                fds: sh.fds,
                mode: sh.job.fsync_mode,
            },
            prog,
        ),
        EngineKind::Mmap => run_sync(sh, thread, files, &mut Mmap { maps: sh.maps }, prog),
        EngineKind::Null => run_sync(sh, thread, files, &mut Null, prog),
        EngineKind::IoUring => return run_uring(sh, thread, files, prog),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::{Distribution, OpenFlags};

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
    fn quota_splits_exactly() {
        let mut j = job(Mode::Rndrd, 3);
        j.limit = Limit::Ops(1000);
        let q: Vec<u64> = (0..3).map(|t| thread_quota(&j, t).unwrap()).collect();
        assert_eq!(q.iter().sum::<u64>(), 1000);
        assert_eq!(q, vec![334, 333, 333]);
    }
}
