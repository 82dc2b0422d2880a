//! `--engine mmap`: shared mappings of the files. A read copies from the mapping, a write copies
//! into it, fsync is msync(MS_SYNC) whatever `--fsync-mode` says.
//!
//! An I/O error on a mapping arrives as SIGBUS, which no engine can count: use sync or io_uring
//! to study errors.

use super::ops::{MapPtr, Shared};
use super::ops::{SyncEngine, errno};
use crate::model::job::EngineKind;

pub struct Mmap<'a> {
    maps: &'a [MapPtr],
}

impl<'a> SyncEngine<'a> for Mmap<'a> {
    const KIND: EngineKind = EngineKind::Mmap;

    fn open(sh: &Shared<'a>) -> std::io::Result<Self> {
        Ok(Mmap { maps: sh.maps })
    }

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
