//! `--engine io_uring`: one ring per thread with up to `--iodepth` reads and writes in flight.
//! Everything queued goes to the kernel in one io_uring_enter (`submit_queued`: its return ends
//! the I/Os' submission latency, fio's `slat`), and a second one waits for the next completion,
//! as fio's commit and getevents do.
//!
//! The ring is set up as fio's io_uring engine sets up its own (fio 3.33, `engines/io_uring.c`):
//! `IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN` (Linux 6.1) with
//! `IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG` (5.19), falling back to fewer flags
//! on older kernels. Without them every operation that the kernel completes outside this thread
//! (a buffered read the file system cannot do without blocking, which io_uring hands to its
//! io-wq worker threads: on tmpfs, every read) posts task work to this thread with a
//! signal-like notification that interrupts it, once per I/O. Measured on a 2-vCPU VM with
//! 4 KiB random reads of a file on tmpfs at iodepth 32, that cost 3-6 µs of CPU per I/O instead
//! of about 2 and held iolab at 0.34-0.9 of fio; with deferred task work the completions are
//! posted in batches when this thread waits, as fio's are (docs/vs-fio.md).

use super::ops::QueueEngine;
use super::ops::Shared;
use crate::measure::stats::OpKind;
use crate::model::job::{EngineKind, FsyncMode};
use io_uring::{IoUring, opcode, types};
use std::os::fd::RawFd;
use std::time::Duration;

pub struct Uring<'a> {
    ring: IoUring,
    fds: &'a [RawFd],
    fsync_flags: types::FsyncFlags,
}

impl<'a> QueueEngine<'a> for Uring<'a> {
    const KIND: EngineKind = EngineKind::IoUring;

    fn available(_threads: u32, _depth: u32) -> Result<(), String> {
        IoUring::new(2).map(drop).map_err(|e| {
            format!("--engine io_uring: io_uring is not available on this kernel or is disabled ({e}); use --engine sync")
        })
    }

    fn open(sh: &Shared<'a>, depth: u32) -> std::io::Result<Self> {
        Ok(Uring {
            ring: new_ring(depth.next_power_of_two().max(2))?,
            fds: sh.fds,
            fsync_flags: match sh.job.fsync_mode {
                FsyncMode::Fsync => types::FsyncFlags::empty(),
                FsyncMode::Fdatasync => types::FsyncFlags::DATASYNC,
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
        let fd = types::Fd(self.fds[file as usize]);
        let sqe = match kind {
            OpKind::Read => opcode::Read::new(fd, buf, len).offset(off).build(),
            _ => opcode::Write::new(fd, buf, len).offset(off).build(),
        };
        // SAFETY: the caller keeps the buffer valid and untouched until the completion is reaped.
        unsafe {
            self.ring
                .submission()
                .push(&sqe.user_data(tag))
                .expect("room in the SQ")
        };
    }

    #[inline]
    fn queue_fsync(&mut self, file: u32, tag: u64) {
        let sqe = opcode::Fsync::new(types::Fd(self.fds[file as usize]))
            .flags(self.fsync_flags)
            .build()
            .user_data(tag);
        // SAFETY: the sqe references no memory.
        unsafe { self.ring.submission().push(&sqe).expect("room in the SQ") };
    }

    #[inline]
    fn submit_queued(&mut self) -> std::io::Result<()> {
        self.ring.submit().map(drop)
    }

    fn commit_and_wait(&mut self, min: u32, timeout: Option<Duration>) -> std::io::Result<()> {
        match timeout {
            Some(d) => {
                let ts = types::Timespec::new()
                    .sec(d.as_secs())
                    .nsec(d.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring
                    .submitter()
                    .submit_with_args(min as usize, &args)
                    .map(drop)
            }
            None => self.ring.submit_and_wait(min as usize).map(drop),
        }
    }

    #[inline]
    fn reap(&mut self, mut each: impl FnMut(u64, i32)) {
        // With deferred task work a finished operation reaches the CQ only when this thread
        // enters the kernel. After a wait that returned with completions the CQ is not empty and
        // this costs one load; when it is empty (the pacer's spin, a timed-out wait) and the
        // kernel flags work pending, one io_uring_enter(0, 0, GETEVENTS) posts it. A failure
        // here (EINTR) only leaves the work for the next commit_and_wait.
        if self.ring.completion().is_empty() && self.ring.submission().taskrun() {
            let _ = self.ring.submitter().submit_and_wait(0);
        }
        for cqe in self.ring.completion() {
            each(cqe.user_data(), cqe.result());
        }
    }
}

/// A ring of `entries` SQEs with deferred, cooperative task work where the kernel has it.
///
/// The ring must be used only by the thread that creates it (`SINGLE_ISSUER`): the worker
/// thread opens its engine itself and drops it before it returns.
fn new_ring(entries: u32) -> std::io::Result<IoUring> {
    let attempts: [fn(&mut io_uring::Builder); 3] = [
        |b| {
            b.setup_coop_taskrun()
                .setup_taskrun_flag()
                .setup_single_issuer()
                .setup_defer_taskrun();
        },
        |b| {
            b.setup_coop_taskrun().setup_taskrun_flag();
        },
        |_| {},
    ];
    let mut last = None;
    for set in attempts {
        let mut b = IoUring::builder();
        set(&mut b);
        match b.build(entries) {
            Ok(r) => return Ok(r),
            // EINVAL: a flag this kernel does not know; try with fewer.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("at least one attempt"))
}
