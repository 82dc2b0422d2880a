//! A file's pages in the page cache: measured with mincore, dropped with fsync and
//! posix_fadvise(DONTNEED) (the one page-cache eviction of the file set, the suites and verify).

use std::fs::File;
use std::os::fd::AsRawFd;

/// Page-cache residency of the set after eviction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Residency {
    pub resident_bytes: u64,
    pub total_bytes: u64,
}

impl Residency {
    pub fn pct(&self) -> f64 {
        if self.total_bytes == 0 {
            0.0
        } else {
            100.0 * self.resident_bytes as f64 / self.total_bytes as f64
        }
    }
}

/// Bytes of `f` (of length `len`) resident in the page cache, from mincore(2).
pub fn resident_bytes(f: &File, len: u64) -> std::io::Result<u64> {
    resident_bytes_at(f, 0, len)
}

/// Bytes of `f` in `offset..offset + len` resident in the page cache (whole pages around the
/// range), from mincore(2).
pub fn resident_bytes_at(f: &File, offset: u64, len: u64) -> std::io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let start = offset / page * page;
    let len = offset + len - start;
    // SAFETY: a read-only shared mapping of an open file; unmapped below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            start as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let pages = len.div_ceil(page) as usize;
    let mut vec = vec![0u8; pages];
    // SAFETY: vec has one byte per page of the mapping.
    let r = unsafe { libc::mincore(p, len as usize, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: unmapping what we mapped.
    unsafe { libc::munmap(p, len as usize) };
    if r != 0 {
        return Err(err);
    }
    Ok(vec.iter().filter(|&&b| b & 1 == 1).count() as u64 * page)
}

/// What to write back before dropping a file's pages from the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteBack {
    /// Nothing (a file that was only read); dirty pages stay cached.
    No,
    /// `fdatasync`: the data, and metadata only as far as needed to read it back.
    Data,
    /// `fsync`: data and all metadata.
    All,
}

/// Page-cache eviction, the one primitive behind the file set, the suites and zones: writes
/// `f` back as `wb` says, then drops its cached pages in `offset..offset + len` (`len` 0: to the
/// end) with `posix_fadvise(POSIX_FADV_DONTNEED)`. Dirty pages cannot be dropped, which is why
/// writers write back first; [`resident_bytes`] (mincore) verifies what remained.
pub fn drop_cached(f: &File, wb: WriteBack, offset: u64, len: u64) -> std::io::Result<()> {
    match wb {
        WriteBack::No => {}
        WriteBack::Data => f.sync_data()?,
        WriteBack::All => f.sync_all()?,
    }
    // SAFETY: an advisory call on an open descriptor; it reads no memory of ours.
    let r = unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    if r != 0 {
        return Err(std::io::Error::from_raw_os_error(r));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn residency_is_measured_with_mincore() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, vec![1u8; 1 << 20]).unwrap();
        let f = File::open(&p).unwrap();
        // just written through the page cache: resident (unless the fs is odd)
        let r = resident_bytes(&f, 1 << 20).unwrap();
        assert!(r <= 1 << 20);
    }
}
