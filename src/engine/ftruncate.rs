//! `--engine ftruncate` (fio's `ioengine=ftruncate`): each write truncates (or extends) its file
//! to the write's offset with ftruncate(2), its length only counted, as fio's engine; there are
//! no reads (fio fails them with EINVAL, iolab refuses a mode with reads). Unlike fio, each
//! file is put back to the set's file size when the thread ends (the blocks past the last
//! truncation stay holes), so the set can be kept, completed or removed as any other.

use super::ops::Shared;
use super::ops::{SyncEngine, errno};
use crate::model::job::{EngineKind, FsyncMode};
use std::os::fd::RawFd;

pub struct Ftruncate<'a> {
    fds: &'a [RawFd],
    mode: FsyncMode,
    file_size: u64,
}

impl<'a> SyncEngine<'a> for Ftruncate<'a> {
    const KIND: EngineKind = EngineKind::Ftruncate;

    fn open(sh: &Shared<'a>) -> std::io::Result<Self> {
        Ok(Ftruncate {
            fds: sh.fds,
            mode: sh.job.fsync_mode,
            file_size: sh.file_size_bytes,
        })
    }

    #[inline]
    fn read(&mut self, _file: u32, _off: u64, _buf: &mut [u8]) -> Result<(), i32> {
        Err(libc::EINVAL)
    }

    #[inline]
    fn write(&mut self, file: u32, off: u64, _buf: &[u8]) -> Result<(), i32> {
        // SAFETY: ftruncate takes plain integers; fd is open for the phase.
        let r = unsafe { libc::ftruncate(self.fds[file as usize], off as libc::off_t) };
        if r < 0 { Err(errno()) } else { Ok(()) }
    }

    #[inline]
    fn fsync(&mut self, file: u32) -> Result<(), i32> {
        super::psync::sync_fd(self.fds[file as usize], self.mode)
    }
}

impl Drop for Ftruncate<'_> {
    fn drop(&mut self) {
        for &fd in self.fds {
            // SAFETY: as above; a failure leaves the file at its last size, which the set's
            // check after the run reports.
            unsafe { libc::ftruncate(fd, self.file_size as libc::off_t) };
        }
    }
}
