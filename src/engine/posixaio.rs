//! `--engine posixaio`: POSIX AIO (aio_read/aio_write/aio_fsync, aio_suspend, aio_error,
//! aio_return through libc), fio's `ioengine=posixaio`, with up to `--iodepth` I/Os in flight
//! per thread. glibc runs each request on its own helper threads (pread/pwrite there), so the
//! depth is real, buffered or not, as in fio.
//!
//! One control block per slot (the worker's tag is the slot: 0..depth for reads and writes,
//! depth for the fsync), made once in `open`; aio_suspend waits on the list of those in flight
//! (the others are null entries, which it skips). Nothing is allocated per I/O here; glibc keeps
//! its requests in a pool of its own.

use super::ops::QueueEngine;
use super::ops::Shared;
use crate::measure::stats::OpKind;
use crate::model::job::{EngineKind, FsyncMode};
use std::os::fd::RawFd;
use std::time::Duration;

pub struct PosixAio<'a> {
    fds: &'a [RawFd],
    /// One control block per tag; boxed so that they never move while the kernel side (glibc's
    /// helper threads) holds them.
    cbs: Box<[libc::aiocb]>,
    /// aio_suspend's list: `&cbs[i]` while tag `i` is in flight, else null.
    list: Box<[*const libc::aiocb]>,
    /// Tags queued and not yet submitted, and what each is.
    queued: Box<[(usize, Op)]>,
    queued_len: usize,
    /// Completions found here (a submission refused with an errno): (tag, -errno).
    done: Box<[(u64, i32)]>,
    done_len: usize,
    inflight: usize,
    fsync_op: libc::c_int,
}

#[derive(Clone, Copy)]
enum Op {
    Read,
    Write,
    Fsync,
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

impl PosixAio<'_> {
    /// Completions ready now, without a system call: refused submissions and control blocks
    /// whose status is no longer EINPROGRESS.
    fn ready(&self) -> usize {
        let finished = self
            .list
            .iter()
            .filter(|p| !p.is_null())
            // SAFETY: a non-null entry points at a control block of `cbs` in flight.
            .filter(|p| unsafe { libc::aio_error(**p) } != libc::EINPROGRESS)
            .count();
        self.done_len + finished
    }
}

impl<'a> QueueEngine<'a> for PosixAio<'a> {
    const KIND: EngineKind = EngineKind::Posixaio;

    fn open(sh: &Shared<'a>, depth: u32) -> std::io::Result<Self> {
        let n = depth as usize + 1;
        // SAFETY: aiocb is plain data; all zeros is its initial state.
        let zero: libc::aiocb = unsafe { std::mem::zeroed() };
        Ok(PosixAio {
            fds: sh.fds,
            cbs: vec![zero; n].into_boxed_slice(),
            list: vec![std::ptr::null(); n].into_boxed_slice(),
            queued: vec![(0, Op::Read); n].into_boxed_slice(),
            queued_len: 0,
            done: vec![(0, 0); n].into_boxed_slice(),
            done_len: 0,
            inflight: 0,
            fsync_op: match sh.job.fsync_mode {
                FsyncMode::Fsync => libc::O_SYNC,
                FsyncMode::Fdatasync => libc::O_DSYNC,
            },
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
        let i = tag as usize;
        let cb = &mut self.cbs[i];
        cb.aio_fildes = self.fds[file as usize];
        cb.aio_offset = off as libc::off_t;
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = len as usize;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        let op = if kind == OpKind::Write {
            Op::Write
        } else {
            Op::Read
        };
        self.queued[self.queued_len] = (i, op);
        self.queued_len += 1;
    }

    fn queue_fsync(&mut self, file: u32, tag: u64) {
        let i = tag as usize;
        let cb = &mut self.cbs[i];
        cb.aio_fildes = self.fds[file as usize];
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        self.queued[self.queued_len] = (i, Op::Fsync);
        self.queued_len += 1;
    }

    fn submit_queued(&mut self) -> std::io::Result<()> {
        for q in 0..self.queued_len {
            let (i, op) = self.queued[q];
            let cb: *mut libc::aiocb = &mut self.cbs[i];
            // SAFETY: the control block lives in `cbs` (never moved) until its completion is
            // taken in `reap` or the engine is dropped (which waits for it); its buffer stays
            // valid until then by queue_io's contract.
            let r = unsafe {
                match op {
                    Op::Read => libc::aio_read(cb),
                    Op::Write => libc::aio_write(cb),
                    Op::Fsync => libc::aio_fsync(self.fsync_op, cb),
                }
            };
            if r == 0 {
                self.list[i] = cb;
                self.inflight += 1;
            } else {
                self.done[self.done_len] = (i as u64, -errno());
                self.done_len += 1;
            }
        }
        self.queued_len = 0;
        Ok(())
    }

    fn commit_and_wait(&mut self, min: u32, timeout: Option<Duration>) -> std::io::Result<()> {
        self.submit_queued()?;
        let min = (min as usize).min(self.done_len + self.inflight);
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        while self.ready() < min {
            // SAFETY: `list` holds `list.len()` entries, each null or a control block in flight.
            let r = unsafe {
                libc::aio_suspend(
                    self.list.as_ptr(),
                    self.list.len() as libc::c_int,
                    ts.as_ref().map_or(std::ptr::null(), |t| t as *const _),
                )
            };
            if r != 0 {
                return Err(match errno() {
                    // the timeout passed: as ETIME in the contract
                    libc::EAGAIN => std::io::Error::from_raw_os_error(libc::ETIME),
                    e => std::io::Error::from_raw_os_error(e),
                });
            }
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, mut each: impl FnMut(u64, i32)) {
        for &(tag, r) in &self.done[..self.done_len] {
            each(tag, r);
        }
        self.done_len = 0;
        if self.inflight == 0 {
            return;
        }
        for i in 0..self.list.len() {
            let p = self.list[i];
            if p.is_null() {
                continue;
            }
            // SAFETY: `p` is `&cbs[i]`, in flight until aio_return below.
            let e = unsafe { libc::aio_error(p) };
            if e == libc::EINPROGRESS {
                continue;
            }
            // SAFETY: as above; aio_return is called once, after the request finished.
            let n = unsafe { libc::aio_return(p.cast_mut()) };
            self.list[i] = std::ptr::null();
            self.inflight -= 1;
            each(i as u64, if e == 0 { n as i32 } else { -e });
        }
    }
}

impl Drop for PosixAio<'_> {
    /// Cancels what is in flight and waits until glibc's helper threads are done with every
    /// control block and buffer (the buffers are freed after the engine).
    fn drop(&mut self) {
        for p in self.list.iter().filter(|p| !p.is_null()) {
            // SAFETY: a control block in flight; a cancelled one still finishes below.
            unsafe { libc::aio_cancel((**p).aio_fildes, p.cast_mut()) };
        }
        loop {
            for p in self.list.iter_mut().filter(|p| !p.is_null()) {
                // SAFETY: a control block in flight; once finished, aio_return releases it.
                if unsafe { libc::aio_error(*p) } != libc::EINPROGRESS {
                    unsafe { libc::aio_return(p.cast_mut()) };
                    *p = std::ptr::null();
                }
            }
            if self.list.iter().all(|p| p.is_null()) {
                break;
            }
            // SAFETY: every non-null entry is in flight; no timeout.
            unsafe {
                libc::aio_suspend(
                    self.list.as_ptr(),
                    self.list.len() as libc::c_int,
                    std::ptr::null(),
                )
            };
        }
    }
}
