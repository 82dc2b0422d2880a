//! `--engine libaio`: Linux native AIO (io_setup, io_submit, io_getevents), one context per
//! thread with up to `--iodepth` reads and writes in flight, as fio's `libaio` engine and
//! sysbench's `async` mode issue them.
//!
//! Raw system calls on the kernel's ABI (`linux/aio_abi.h`), no library: everything queued goes
//! to the kernel in one io_submit, which copies the iocbs, so the same preallocated iocbs are
//! filled again for the next batch. Completions are read from the ring the kernel maps into the
//! process (as libaio's and fio's userspace reap do), so reaping costs no system call;
//! io_getevents is called only to wait.
//!
//! Native AIO is asynchronous only with O_DIRECT: on buffered files the kernel does the I/O
//! inside io_submit and the queue depth buys nothing (`libaio_buffered` warns).
//!
//! fsync is IOCB_CMD_FSYNC or IOCB_CMD_FDSYNC (`--fsync-mode`). A kernel or filesystem that
//! refuses them in io_submit (EINVAL, before Linux 4.18 everywhere) gets the plain fsync(2) or
//! fdatasync(2) instead, and its result is handed out as the fsync's completion.

use super::ops::Shared;
use super::ops::{QueueEngine, errno};
use crate::measure::stats::OpKind;
use crate::model::job::{EngineKind, FsyncMode};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// `aio_context_t`: the address of the completion ring the kernel maps.
type AioContext = libc::c_ulong;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;

/// `struct iocb` of `linux/aio_abi.h`. The kernel's `PADDED(aio_key, aio_rw_flags)` puts the
/// key first on little-endian machines and second on big-endian ones.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    #[cfg(target_endian = "little")]
    aio_key: u32,
    aio_rw_flags: u32,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// The header of the completion ring (`struct aio_ring` of fs/aio.c), followed by `nr` events.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);
const _: () = assert!(std::mem::size_of::<AioRing>() == 32);

fn io_setup(nr: u32, ctx: &mut AioContext) -> Result<(), i32> {
    // SAFETY: io_setup writes one aio_context_t, which must be zero on entry.
    let r = unsafe { libc::syscall(libc::SYS_io_setup, nr as libc::c_long, ctx as *mut _) };
    if r < 0 { Err(errno()) } else { Ok(()) }
}

fn io_destroy(ctx: AioContext) {
    // SAFETY: ctx came from io_setup; io_destroy waits for the operations in flight.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
}

/// Whether this kernel gives `nr` AIO events now: io_setup and io_destroy once, before anything
/// is written. Err(errno): ENOSYS (no AIO: `CONFIG_AIO` off), EAGAIN (fs.aio-max-nr reached).
fn probe(nr: u32) -> Result<(), i32> {
    let mut ctx: AioContext = 0;
    io_setup(nr, &mut ctx)?;
    io_destroy(ctx);
    Ok(())
}

/// The usage error for a failed [`probe`]: names the flag, the cause and what to do.
fn probe_error(e: i32, nr: u32) -> String {
    match e {
        libc::ENOSYS => "--engine libaio: this kernel has no native AIO (io_setup: ENOSYS, built without CONFIG_AIO); use --engine io_uring or sync".to_string(),
        libc::EAGAIN => {
            let read = |f: &str| {
                std::fs::read_to_string(format!("/proc/sys/fs/{f}"))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_else(|_| "?".into())
            };
            format!(
                "--engine libaio: the kernel has no room for {nr} more AIO events (io_setup: EAGAIN; fs.aio-nr {} of fs.aio-max-nr {}); raise the limit (sysctl -w fs.aio-max-nr=1048576), or use fewer --threads or a lower --iodepth",
                read("aio-nr"),
                read("aio-max-nr")
            )
        }
        e => format!(
            "--engine libaio: io_setup failed ({}); use --engine io_uring or sync",
            std::io::Error::from_raw_os_error(e)
        ),
    }
}

pub struct Libaio<'a> {
    ctx: AioContext,
    fds: &'a [RawFd],
    mode: FsyncMode,
    /// The kernel refused an AIO fsync once: fsync(2) from then on.
    sync_fsync: bool,
    /// The ring header when its layout is the one known here (else io_getevents reaps).
    ring: Option<*mut AioRing>,
    /// Iocbs filled since the last submit, and pointers to each (fixed at open).
    iocbs: Box<[Iocb]>,
    ptrs: Box<[*mut Iocb]>,
    queued: usize,
    /// Submitted, not yet handed out.
    inflight: usize,
    /// Events io_getevents copied out, not handed out yet.
    events: Box<[IoEvent]>,
    ev_len: usize,
    /// Completions made here: operations io_submit refused, fsyncs done synchronously.
    done: Box<[(u64, i32)]>,
    done_len: usize,
}

impl Libaio<'_> {
    /// Completions waiting in the kernel's ring (0 without the ring).
    #[inline]
    fn ring_ready(&self) -> usize {
        let Some(r) = self.ring else { return 0 };
        // SAFETY: the ring stays mapped until io_destroy; tail is written by the kernel.
        unsafe {
            let nr = (*r).nr;
            let tail = AtomicU32::from_ptr(&raw mut (*r).tail).load(Ordering::Acquire);
            let head = AtomicU32::from_ptr(&raw mut (*r).head).load(Ordering::Relaxed);
            ((tail + nr - head) % nr) as usize
        }
    }

    /// Completions ready to hand out without waiting.
    #[inline]
    fn ready(&self) -> usize {
        self.done_len + self.ev_len + self.ring_ready()
    }

    /// Waits for at least `min` events (io_getevents) into `events`; a zero timeout polls.
    fn getevents(&mut self, min: usize, timeout: Option<Duration>) -> std::io::Result<()> {
        let room = self.events.len() - self.ev_len;
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `room` events fit at ev_len; ts lives across the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.ctx,
                min as libc::c_long,
                room as libc::c_long,
                self.events.as_mut_ptr().add(self.ev_len),
                tsp,
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        self.ev_len += r as usize;
        self.inflight -= r as usize;
        Ok(())
    }

    /// fsync(2) or fdatasync(2) of `fd` now, as a completion result.
    fn fsync_now(&self, fd: RawFd) -> i32 {
        // SAFETY: plain system calls on an open fd.
        let r = unsafe {
            match self.mode {
                FsyncMode::Fsync => libc::fsync(fd),
                FsyncMode::Fdatasync => libc::fdatasync(fd),
            }
        };
        if r < 0 { -errno() } else { 0 }
    }

    fn complete_here(&mut self, tag: u64, res: i32) {
        self.done[self.done_len] = (tag, res);
        self.done_len += 1;
    }

    /// Submits everything queued with as few io_submit calls as the kernel allows: it may take
    /// fewer than asked (the rest is submitted again), refuse the first with an errno (that one
    /// completes here with it) or have no room (EAGAIN: wait for a completion, then again).
    fn submit(&mut self) -> std::io::Result<()> {
        let mut at = 0;
        while at < self.queued {
            let iocb = self.iocbs[at];
            let is_fsync = matches!(iocb.aio_lio_opcode, IOCB_CMD_FSYNC | IOCB_CMD_FDSYNC);
            if is_fsync && self.sync_fsync {
                let r = self.fsync_now(iocb.aio_fildes as RawFd);
                self.complete_here(iocb.aio_data, r);
                at += 1;
                continue;
            }
            // SAFETY: ptrs[at..queued] point at filled iocbs; the kernel copies them.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    (self.queued - at) as libc::c_long,
                    self.ptrs.as_ptr().add(at),
                )
            };
            if r > 0 {
                at += r as usize;
                self.inflight += r as usize;
                continue;
            }
            if r == 0 {
                // Nothing taken and no error (not seen in practice): as EAGAIN.
                std::thread::yield_now();
                continue;
            }
            match errno() {
                libc::EINTR => {}
                libc::EAGAIN if self.inflight > 0 => match self.getevents(1, None) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => {
                        // Keep what is not submitted queued, in order, for the next call.
                        self.iocbs.copy_within(at..self.queued, 0);
                        self.queued -= at;
                        return Err(e);
                    }
                },
                libc::EAGAIN => std::thread::yield_now(),
                libc::EINVAL if is_fsync => {
                    self.sync_fsync = true;
                }
                e => {
                    // This operation was refused before it started; the rest go on.
                    self.complete_here(iocb.aio_data, -e);
                    at += 1;
                }
            }
        }
        self.queued = 0;
        Ok(())
    }

    #[inline]
    fn push(&mut self, iocb: Iocb) {
        assert!(self.queued < self.iocbs.len(), "room for the queued iocb");
        self.iocbs[self.queued] = iocb;
        self.queued += 1;
    }
}

impl<'a> QueueEngine<'a> for Libaio<'a> {
    const KIND: EngineKind = EngineKind::Libaio;

    /// One context per thread, each with room for `depth` operations and an fsync.
    fn available(threads: u32, depth: u32) -> Result<(), String> {
        let nr = threads.saturating_mul(depth.saturating_add(1));
        probe(nr).map_err(|e| probe_error(e, nr))
    }

    fn open(sh: &Shared<'a>, depth: u32) -> std::io::Result<Self> {
        let n = depth as usize + 1;
        let mut ctx: AioContext = 0;
        io_setup(n as u32, &mut ctx).map_err(|e| {
            std::io::Error::new(
                std::io::Error::from_raw_os_error(e).kind(),
                probe_error(e, n as u32),
            )
        })?;
        let r = ctx as *mut AioRing;
        // SAFETY: the context is the address of the ring header the kernel mapped.
        let known = unsafe {
            (*r).magic == AIO_RING_MAGIC
                && (*r).incompat_features == 0
                && (*r).header_length as usize == std::mem::size_of::<AioRing>()
                && (*r).nr > 0
        };
        let mut iocbs = vec![Iocb::default(); n].into_boxed_slice();
        let ptrs = iocbs.iter_mut().map(|c| c as *mut Iocb).collect();
        Ok(Libaio {
            ctx,
            fds: sh.fds,
            mode: sh.job.fsync_mode,
            sync_fsync: false,
            ring: known.then_some(r),
            iocbs,
            ptrs,
            queued: 0,
            inflight: 0,
            events: vec![IoEvent::default(); n].into_boxed_slice(),
            ev_len: 0,
            done: vec![(0, 0); n].into_boxed_slice(),
            done_len: 0,
        })
    }

    #[inline]
    unsafe fn queue_io(
        &mut self,
        kind: OpKind,
        file: u32,
        off: u64,
        buf: *mut u8,
        len: u32,
        tag: u64,
    ) {
        self.push(Iocb {
            aio_data: tag,
            aio_lio_opcode: match kind {
                OpKind::Read => IOCB_CMD_PREAD,
                _ => IOCB_CMD_PWRITE,
            },
            aio_fildes: self.fds[file as usize] as u32,
            aio_buf: buf as u64,
            aio_nbytes: len as u64,
            aio_offset: off as i64,
            ..Iocb::default()
        });
    }

    #[inline]
    fn queue_fsync(&mut self, file: u32, tag: u64) {
        self.push(Iocb {
            aio_data: tag,
            aio_lio_opcode: match self.mode {
                FsyncMode::Fsync => IOCB_CMD_FSYNC,
                FsyncMode::Fdatasync => IOCB_CMD_FDSYNC,
            },
            aio_fildes: self.fds[file as usize] as u32,
            ..Iocb::default()
        });
    }

    #[inline]
    fn submit_queued(&mut self) -> std::io::Result<()> {
        if self.queued > 0 {
            self.submit()?;
        }
        Ok(())
    }

    fn commit_and_wait(&mut self, min: u32, timeout: Option<Duration>) -> std::io::Result<()> {
        if self.queued > 0 {
            self.submit()?;
        }
        // At most what is submitted or completed (the ring's events are part of `inflight`).
        let min = (min as usize).min(self.done_len + self.ev_len + self.inflight);
        if self.ready() >= min {
            return Ok(());
        }
        // Only what the ring does not hold yet: io_getevents takes the ring's events first.
        self.getevents(min - self.done_len - self.ev_len, timeout)
    }

    #[inline]
    fn reap(&mut self, mut each: impl FnMut(u64, i32)) {
        for &(tag, r) in &self.done[..self.done_len] {
            each(tag, r);
        }
        self.done_len = 0;
        for e in &self.events[..self.ev_len] {
            each(e.data, e.res as i32);
        }
        self.ev_len = 0;
        if self.inflight == 0 {
            return;
        }
        let Some(r) = self.ring else {
            // No ring to read: poll with a zero timeout.
            if self.getevents(0, Some(Duration::ZERO)).is_ok() {
                for e in &self.events[..self.ev_len] {
                    each(e.data, e.res as i32);
                }
                self.ev_len = 0;
            }
            return;
        };
        // SAFETY: the ring stays mapped until io_destroy. The kernel writes an event before it
        // publishes the tail (release), and reads the head this thread stores only in this
        // thread's own system calls.
        unsafe {
            let nr = (*r).nr;
            let tail = AtomicU32::from_ptr(&raw mut (*r).tail).load(Ordering::Acquire);
            let head_p = AtomicU32::from_ptr(&raw mut (*r).head);
            let mut head = head_p.load(Ordering::Relaxed);
            let ev = r.add(1).cast::<IoEvent>();
            while head != tail {
                let e = std::ptr::read_volatile(ev.add(head as usize));
                self.inflight -= 1;
                head = (head + 1) % nr;
                each(e.data, e.res as i32);
            }
            head_p.store(head, Ordering::Release);
        }
    }
}

impl Drop for Libaio<'_> {
    fn drop(&mut self) {
        io_destroy(self.ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn iocb_layout_is_the_kernels() {
        assert_eq!(offset_of!(Iocb, aio_data), 0);
        assert_eq!(offset_of!(Iocb, aio_lio_opcode), 16);
        assert_eq!(offset_of!(Iocb, aio_fildes), 20);
        assert_eq!(offset_of!(Iocb, aio_buf), 24);
        assert_eq!(offset_of!(Iocb, aio_nbytes), 32);
        assert_eq!(offset_of!(Iocb, aio_offset), 40);
        assert_eq!(offset_of!(Iocb, aio_flags), 56);
        assert_eq!(offset_of!(IoEvent, res), 16);
        #[cfg(target_endian = "little")]
        assert_eq!(offset_of!(Iocb, aio_key), 8);
    }

    #[test]
    fn probe_errors_name_the_flag_and_the_way_out() {
        let m = probe_error(libc::ENOSYS, 2);
        assert!(m.starts_with("--engine libaio") && m.contains("ENOSYS") && m.contains("io_uring"));
        let m = probe_error(libc::EAGAIN, 2);
        assert!(m.contains("EAGAIN") && m.contains("fs.aio-max-nr") && m.contains("--iodepth"));
        assert!(!m.contains('\n'));
    }
}
