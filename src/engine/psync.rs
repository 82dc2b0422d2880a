//! `--engine sync` (alias psync): pread(2) and pwrite(2), one I/O at a time per thread.

use super::ops::Shared;
use super::ops::{SyncEngine, errno};
use crate::model::job::{EngineKind, FsyncMode};
use std::os::fd::RawFd;

pub struct Psync<'a> {
    fds: &'a [RawFd],
    mode: FsyncMode,
}

impl<'a> SyncEngine<'a> for Psync<'a> {
    const KIND: EngineKind = EngineKind::Sync;

    fn open(sh: &Shared<'a>) -> std::io::Result<Self> {
        Ok(Psync {
            fds: sh.fds,
            mode: sh.job.fsync_mode,
        })
    }

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
        sync_fd(self.fds[file as usize], self.mode)
    }
}

/// fsync(2) or fdatasync(2) of `fd` (the engines that sync a descriptor: psync, falloc,
/// ftruncate).
#[inline]
pub(super) fn sync_fd(fd: RawFd, mode: FsyncMode) -> Result<(), i32> {
    // SAFETY: plain syscalls on an open fd.
    let r = unsafe {
        match mode {
            FsyncMode::Fsync => libc::fsync(fd),
            FsyncMode::Fdatasync => libc::fdatasync(fd),
        }
    };
    if r < 0 { Err(errno()) } else { Ok(()) }
}
