//! The aligned buffers of O_DIRECT I/O: one allocation per worker (or per prepare writer),
//! filled with pseudo-random bytes.

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// One aligned, zero-initialised buffer area, filled with pseudo-random bytes so writes are not
/// trivially compressible.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    pub fn new(len: usize, align: usize, fill_seed: u64) -> Self {
        // Cannot fail: every caller's alignment is a power of two (a constant, or the kernel's
        // STATX_DIOALIGN raised to one), and `len` (--bs × --iodepth) was checked against the
        // available memory before any thread started (cli::plan::check_threads).
        let layout = Layout::from_size_align(len.max(1), align.max(8)).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            // As every allocation of std (Vec, String) fails: the kernel refused memory that was
            // available when the run was checked. An abort with the size, not a panic.
            std::alloc::handle_alloc_error(layout);
        }
        let mut b = AlignedBuf { ptr, layout };
        let mut x = fill_seed | 1;
        for chunk in b.bytes_mut().chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        b
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is a live allocation of layout.size() bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, self.layout) }
    }
}
