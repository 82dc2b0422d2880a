//! `--engine io_uring`: one ring per thread with up to `--iodepth` reads and writes in flight.
//! Everything queued goes to the kernel in one io_uring_enter, which also waits for the next
//! completion.

use super::ops::{Caps, Direct, QueueEngine};
use super::worker::Shared;
use crate::measure::stats::OpKind;
use crate::model::job::FsyncMode;
use io_uring::{IoUring, opcode, types};
use std::os::fd::RawFd;
use std::time::Duration;

pub struct Uring<'a> {
    ring: IoUring,
    fds: &'a [RawFd],
    fsync_flags: types::FsyncFlags,
}

impl<'a> QueueEngine<'a> for Uring<'a> {
    const CAPS: Caps = Caps {
        name: "io_uring",
        needs_files: true,
        needs_mapping: false,
        direct: Direct::Honoured,
        async_queue: true,
        counts_errors: true,
    };

    fn open(sh: &Shared<'a>, depth: u32) -> std::io::Result<Self> {
        Ok(Uring {
            ring: IoUring::new(depth.next_power_of_two().max(2))?,
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
        for cqe in self.ring.completion() {
            each(cqe.user_data(), cqe.result());
        }
    }
}
