//! The engine contract, after fio's `ioengine_ops`: what an engine declares ([`Caps`]) and the
//! calls a worker loop makes on it.
//!
//! An engine is one type in one file. It implements [`SyncEngine`] when each call completes one
//! operation (the worker then runs [`run_sync`](super::worker::run_sync)), or [`QueueEngine`] when
//! it keeps up to `--iodepth` operations in flight ([`run_queue`](super::worker::run_queue)). Its
//! [`Caps`] are read once per phase, by the runner (which files to open or map) and by the tests
//! (which cases apply); the worker loops are monomorphized per engine, so no I/O goes through a
//! virtual call.

use super::verify::VerifySetup;
use crate::measure::stats::OpKind;
pub use crate::model::job::{Caps, Direct};
use crate::model::job::{EngineKind, Job};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;
use std::time::Instant;

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

/// One flow of a phase (`flow_id`): how many I/Os its threads issued (starting at 1, as
/// fio's) and the sum of the weights of its threads still running.
#[derive(Debug)]
pub struct FlowShared {
    pub id: u64,
    pub counter: AtomicU64,
    pub total_weight: AtomicU64,
}

impl FlowShared {
    pub fn new(id: u64) -> Self {
        FlowShared {
            id,
            counter: AtomicU64::new(1),
            total_weight: AtomicU64::new(0),
        }
    }
}

/// What the workers of one job of a phase share (read-only); each thread has its own copy,
/// which differs only in `halt`.
#[derive(Clone)]
pub struct Shared<'a> {
    pub job: &'a Job,
    pub fds: &'a [RawFd],
    pub maps: &'a [MapPtr],
    /// Size of each data file in bytes (a multiple of the largest block size).
    pub file_size_bytes: u64,
    /// Added to every offset (`--offset` of a `--device` target; 0 for files).
    pub base_offset: u64,
    /// Buffer alignment for O_DIRECT (bytes, power of two).
    pub mem_align: usize,
    /// Set on Ctrl-C, or by a worker that hit an unrecoverable error (engine setup); the others
    /// stop too.
    pub stop: &'a AtomicBool,
    /// Set when a job of the phase with `exitall` ended (or `exitall_on_error` hit an error):
    /// every thread of the phase ends, as fio's `exitall` (not an interruption).
    pub exit: &'a AtomicBool,
    /// Set when the thread's steady state was attained (fio's `ss`: its reporting group's, or
    /// its own): the thread ends, as fio's `fio_mark_td_terminate`, the other jobs go on.
    pub halt: Option<&'a AtomicBool>,
    /// The job's flow (fio's `flow_id`), shared with the other jobs of the phase in it.
    pub flow: Option<&'a FlowShared>,
    /// When the workers start issuing (the ramp begins; the job's `startdelay` after the
    /// phase's start).
    pub start: Instant,
    /// End of the ramp: operations issued before it are not recorded.
    pub measure_start: Instant,
    /// No new operations are issued at or after this instant (time-limited runs).
    pub deadline: Option<Instant>,
    /// `--verify`: the run id and the generations the phase starts from.
    pub verify: Option<&'a VerifySetup>,
    /// The target is a block device (`--device`): a trim is a discard (`BLKDISCARD`); else a
    /// hole punched in the file.
    pub device: bool,
    /// `--dir` (the file engines make their own files there).
    pub dir: &'a std::path::Path,
    /// What the thread's engine made before the phase's clock started (fio's setup stage: the
    /// files filestat and filedelete work on), taken once when the engine opens; the engine's
    /// own type inside.
    pub ahead: Option<&'a Ahead>,
}

/// A thread's engine's setup, made before the phase's clock starts ([`Shared::ahead`]).
pub type Ahead = std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>;

impl Shared<'_> {
    /// Whether the thread must end now, its time aside: stopped (Ctrl-C, a failed worker), its
    /// phase ended (`exitall`) or its steady state attained.
    #[inline]
    pub fn ending(&self) -> bool {
        self.stop.load(Relaxed)
            || self.exit.load(Relaxed)
            || self.halt.is_some_and(|h| h.load(Relaxed))
    }
}

/// `BLKDISCARD` (`_IO(0x12, 119)`, linux/fs.h): discards a byte range (start, length) of a
/// block device.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// One trim of `len` bytes at `off` of `fd`, as fio does it (`os_trim` on a device,
/// `fallocate(PUNCH_HOLE | KEEP_SIZE)` on a file): the same for every engine, one system call,
/// nothing allocated. The queue engines trim synchronously too, as fio's io_uring and libaio
/// engines do (`do_io_u_trim`).
#[inline]
pub fn trim(fd: RawFd, device: bool, off: u64, len: u64) -> Result<(), i32> {
    let r = if device {
        let range: [u64; 2] = [off, len];
        // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, which lives for
        // the call.
        unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
    } else {
        // SAFETY: fallocate takes plain integers.
        unsafe {
            libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                off as libc::off_t,
                len as libc::off_t,
            )
        }
    };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

/// `BLKSECDISCARD` (`_IO(0x12, 125)`, linux/fs.h): a discard after which the device must not
/// return what the range held (few devices offer it).
const BLKSECDISCARD: libc::c_ulong = 0x127d;

/// A purge of a device's byte range (`iolab suite pts`): a secure discard where the device
/// offers one, else a discard. Which one was done, or the errno of the discard.
pub fn purge(fd: RawFd, off: u64, len: u64) -> Result<&'static str, i32> {
    let range: [u64; 2] = [off, len];
    // SAFETY: BLKSECDISCARD reads two u64 (start, length) from the pointer, which lives for
    // the call.
    if unsafe { libc::ioctl(fd, BLKSECDISCARD as _, range.as_ptr()) } == 0 {
        return Ok("secure discard");
    }
    trim(fd, true, off, len).map(|()| "discard")
}

/// An engine that completes one operation per call (pread, a memory copy, nothing).
///
/// Results: `Ok(())` for a whole transfer, `Err(errno)` for a failure, `Err(0)` for a short one.
pub trait SyncEngine<'a>: Sized {
    /// Which engine this is: its row in `model::engines`' `engines!` table, which holds its
    /// [`Caps`].
    const KIND: EngineKind;
    /// What the engine is and can do (`KIND`'s capabilities).
    const CAPS: &'static Caps = Self::KIND.caps();
    /// Whether this kernel can run the engine for `threads` threads with `depth` operations in
    /// flight each, checked once before anything is written: the usage error otherwise, naming
    /// `--engine`, the cause and what to use instead.
    fn available(threads: u32, depth: u32) -> Result<(), String> {
        let _ = (threads, depth);
        Ok(())
    }
    /// Sets the engine up for one worker thread (once per phase).
    fn open(sh: &Shared<'a>) -> std::io::Result<Self>;
    /// Reads `buf.len()` bytes of `file` at `off`.
    fn read(&mut self, file: u32, off: u64, buf: &mut [u8]) -> Result<(), i32>;
    /// Writes `buf` to `file` at `off`.
    fn write(&mut self, file: u32, off: u64, buf: &[u8]) -> Result<(), i32>;
    /// Makes the writes to `file` durable (`--fsync-mode` where the engine has a choice).
    fn fsync(&mut self, file: u32) -> Result<(), i32>;
}

/// An engine with operations in flight: queue, then commit and wait, then reap (fio's queue,
/// commit, getevents and event). Each operation carries a tag that comes back with its result.
pub trait QueueEngine<'a>: Sized {
    /// Which engine this is: its row in `model::engines`' `engines!` table, which holds its
    /// [`Caps`].
    const KIND: EngineKind;
    /// What the engine is and can do (`KIND`'s capabilities).
    const CAPS: &'static Caps = Self::KIND.caps();
    /// Whether this kernel can run the engine for `threads` threads with `depth` operations in
    /// flight each, checked once before anything is written: the usage error otherwise, naming
    /// `--engine`, the cause and what to use instead.
    fn available(threads: u32, depth: u32) -> Result<(), String> {
        let _ = (threads, depth);
        Ok(())
    }
    /// Sets the engine up for one worker thread with room for `depth` operations in flight and
    /// one more fsync (once per phase).
    fn open(sh: &Shared<'a>, depth: u32) -> std::io::Result<Self>;
    /// Queues a read or write of `len` bytes at `buf`; nothing is submitted yet.
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes, and untouched, until the operation's completion
    /// has been reaped.
    unsafe fn queue_io(
        &mut self,
        kind: OpKind,
        file: u32,
        off: u64,
        buf: *mut u8,
        len: u32,
        tag: u64,
    );
    /// Queues an fsync of `file`.
    fn queue_fsync(&mut self, file: u32, tag: u64);
    /// Submits everything queued without waiting for a completion. The worker takes the clock
    /// when it returns: the end of each operation's submission latency (fio's `slat`). It may
    /// fail with EINTR: `commit_and_wait` then submits what is left.
    fn submit_queued(&mut self) -> std::io::Result<()>;
    /// Submits everything queued and waits until at least `min` operations have completed, or
    /// until `timeout` passes. It may fail with ETIME (the timeout passed) or EINTR (a signal):
    /// neither is a failure of the engine, the caller reaps what there is and carries on.
    fn commit_and_wait(&mut self, min: u32, timeout: Option<Duration>) -> std::io::Result<()>;
    /// Hands every completion available now to `each` as (tag, result), the result being the
    /// bytes transferred or a negative errno. Does not wait.
    fn reap(&mut self, each: impl FnMut(u64, i32));
}

/// An engine that does no I/O (`Caps::no_io`: fio's cpuio and exec): each call is one cycle of
/// its own work, which fio counts as a read of 0 bytes (its latency the cycle's), followed by a
/// pause (fio's think time, which fio's engine sets). The worker runs
/// [`run_cycles`](super::worker::run_cycles) until the job's runtime has passed.
pub trait CycleEngine<'a>: Sized {
    /// Which engine this is: its row in `model::engines`'s `engines!` table.
    const KIND: EngineKind;
    /// What the engine is and can do (`KIND`'s capabilities).
    const CAPS: &'static Caps = Self::KIND.caps();
    /// Whether this machine can run the engine, checked once before the run.
    fn available(threads: u32, depth: u32) -> Result<(), String> {
        let _ = (threads, depth);
        Ok(())
    }
    /// Sets the engine up for worker `thread` (once per phase, before its clock starts).
    fn open(sh: &Shared<'a>, thread: u32) -> std::io::Result<Self>;
    /// One cycle; returns how long the thread pauses after it.
    fn cycle(&mut self) -> Result<Duration, i32>;
    /// What the thread does last, when its runtime has passed or the run stops (exec: the
    /// program ended). `Some`: it is timed as one more cycle, as fio's last check is.
    fn finish(&mut self) -> Option<Result<(), i32>> {
        None
    }
}

/// errno of the last failed libc call.
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;

    /// A trim of a file frees its blocks and keeps its size (what `rw=trim` does to iolab's
    /// files); a trim of a file with BLKDISCARD fails as fio 3.33's does (ENOTTY).
    #[test]
    fn a_trim_punches_a_hole_and_keeps_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        f.sync_all().unwrap();
        let before = f.metadata().unwrap().blocks();
        assert!(before >= 2048, "{before} blocks written");
        super::trim(f.as_raw_fd(), false, 0, 1 << 19).unwrap();
        let m = f.metadata().unwrap();
        assert_eq!(m.len(), 1 << 20, "the size is kept");
        assert!(
            m.blocks() <= before - 1024,
            "{} of {before} blocks left",
            m.blocks()
        );
        assert_eq!(super::trim(f.as_raw_fd(), true, 0, 4096), Err(libc::ENOTTY));
    }
}
