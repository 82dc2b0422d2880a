//! `--engine falloc` (fio's `ioengine=falloc`): each operation is one fallocate(2) on the range
//! of the I/O, no data moves: a write allocates it (mode 0), a read allocates it without
//! changing the size (`FALLOC_FL_KEEP_SIZE`), a trim punches a hole (the worker's trim, the same
//! call fio's engine makes for a trim); fsync is fsync(2).

use super::ops::Shared;
use super::ops::{SyncEngine, errno};
use crate::model::job::{EngineKind, FsyncMode};
use std::os::fd::RawFd;

pub struct Falloc<'a> {
    fds: &'a [RawFd],
    mode: FsyncMode,
}

/// fallocate(2) of `len` bytes at `off` of `fd` with `flags`.
#[inline]
fn fallocate(fd: RawFd, flags: i32, off: u64, len: usize) -> Result<(), i32> {
    // SAFETY: fallocate takes plain integers; fd is open for the phase.
    let r = unsafe { libc::fallocate(fd, flags, off as libc::off_t, len as libc::off_t) };
    if r < 0 { Err(errno()) } else { Ok(()) }
}

impl<'a> SyncEngine<'a> for Falloc<'a> {
    const KIND: EngineKind = EngineKind::Falloc;

    fn open(sh: &Shared<'a>) -> std::io::Result<Self> {
        Ok(Falloc {
            fds: sh.fds,
            mode: sh.job.fsync_mode,
        })
    }

    #[inline]
    fn read(&mut self, file: u32, off: u64, buf: &mut [u8]) -> Result<(), i32> {
        fallocate(
            self.fds[file as usize],
            libc::FALLOC_FL_KEEP_SIZE,
            off,
            buf.len(),
        )
    }

    #[inline]
    fn write(&mut self, file: u32, off: u64, buf: &[u8]) -> Result<(), i32> {
        fallocate(self.fds[file as usize], 0, off, buf.len())
    }

    #[inline]
    fn fsync(&mut self, file: u32) -> Result<(), i32> {
        super::psync::sync_fd(self.fds[file as usize], self.mode)
    }
}
