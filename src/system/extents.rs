//! What the filesystem says of a file's extents (FIEMAP): how much is mapped and how much of it
//! is preallocated and unwritten, so a set's `--layout` is recognised (engine::fileset); where a
//! file's bytes lie on the device, so a captured request's file is known (system::filemap).

use std::fs::File;
use std::os::fd::AsRawFd;

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
const FIEMAP_BATCH: usize = 64;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [FiemapExtent; FIEMAP_BATCH],
}

/// An extent of a file (FIEMAP): its bytes `logical..logical + length` lie on the filesystem's
/// device at `physical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
    /// `FIEMAP_EXTENT_*` flags.
    pub flags: u32,
}

pub const FIEMAP_EXTENT_UNKNOWN: u32 = 0x2;
pub const FIEMAP_EXTENT_DELALLOC: u32 = 0x4;

/// Each extent of `f` from FIEMAP (ioctl FS_IOC_FIEMAP, without FIEMAP_FLAG_SYNC: nothing is
/// written back), in order. An error (EOPNOTSUPP) when the filesystem cannot tell.
pub fn each_extent(f: &File, mut each: impl FnMut(Extent)) -> std::io::Result<()> {
    let mut start = 0u64;
    loop {
        let mut fm = Fiemap {
            fm_start: start,
            fm_length: u64::MAX - start,
            fm_flags: 0,
            fm_mapped_extents: 0,
            fm_extent_count: FIEMAP_BATCH as u32,
            fm_reserved: 0,
            fm_extents: [FiemapExtent::default(); FIEMAP_BATCH],
        };
        // SAFETY: FS_IOC_FIEMAP fills at most fm_extent_count extents of the struct we own.
        if unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP as _, &mut fm as *mut Fiemap) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = (fm.fm_mapped_extents as usize).min(FIEMAP_BATCH);
        if n == 0 {
            return Ok(());
        }
        for e in &fm.fm_extents[..n] {
            each(Extent {
                logical: e.fe_logical,
                physical: e.fe_physical,
                length: e.fe_length,
                flags: e.fe_flags,
            });
        }
        let last = fm.fm_extents[n - 1];
        if last.fe_flags & FIEMAP_EXTENT_LAST != 0 {
            return Ok(());
        }
        start = last.fe_logical + last.fe_length;
    }
}

/// Extents of `f` from FIEMAP: (bytes mapped, of them in unwritten extents). An error
/// (EOPNOTSUPP) when the filesystem cannot tell.
pub fn extent_bytes(f: &File) -> std::io::Result<(u64, u64)> {
    let (mut mapped, mut unwritten) = (0u64, 0u64);
    each_extent(f, |e| {
        mapped += e.length;
        if e.flags & FIEMAP_EXTENT_UNWRITTEN != 0 {
            unwritten += e.length;
        }
    })?;
    Ok((mapped, unwritten))
}

/// Whether `f` (of length `len`) is preallocated and unwritten: FIEMAP says its extents cover it
/// and are unwritten; where the filesystem has no FIEMAP, it is allocated and its first and last
/// pages read as zeros (prepare's data never does).
pub fn is_unwritten(f: &File, len: u64, blocks: u64) -> bool {
    use std::os::unix::fs::FileExt;
    match extent_bytes(f) {
        Ok((_, unwritten)) => unwritten >= len,
        Err(_) => {
            let mut page = [0u8; 4096];
            blocks * 512 >= len
                && [0, len.saturating_sub(4096)].iter().all(|&off| {
                    f.read_at(&mut page, off)
                        .is_ok_and(|n| page[..n].iter().all(|&b| b == 0))
                })
        }
    }
}
