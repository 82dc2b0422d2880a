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

/// SplitMix64's finaliser: one well-mixed word from any.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// What one thread's writes hold (`--buffers`, fio's buffer options): the buffer's first
/// content, and before each write its refill or scramble. Everything it needs is made with it
/// (the pattern copied once per thread): nothing allocated per write, no lock.
pub struct Filler {
    base: crate::model::buffers::BufferBase,
    scramble: bool,
    refill: bool,
    compress_pct: u64,
    chunk: u64,
    dedupe_pct: u64,
    /// dedupe_mode=working_set: how many unique contents the repeated ones are drawn from
    /// (0: repeat mode, the previous unique one)
    pool: u64,
    seed: u64,
    /// unique contents made so far, and the last one's seed
    unique: u64,
    prev: u64,
    rng: u64,
    /// writes so far (scramble's sequence number) and the thread
    seq: u64,
    thread: u64,
}

impl Filler {
    /// For `thread` of a job whose smallest write is `min_bs` and whose thread's part of the set
    /// is `part_bytes` (the working set's base).
    pub fn new(
        b: &crate::model::buffers::Buffers,
        seed: u64,
        thread: u32,
        min_bs: u64,
        part_bytes: u64,
    ) -> Self {
        let min_bs = min_bs.max(1);
        let chunk = match b.compress_chunk {
            0 => min_bs,
            c => c.min(min_bs),
        };
        let pool = b
            .dedupe_ws_pct
            .map_or(0, |ws| (part_bytes / 100 * u64::from(ws) / min_bs).max(1));
        let seed = mix(seed ^ 0x4255_4646 ^ u64::from(thread).wrapping_mul(GOLDEN));
        Filler {
            base: b.base.clone(),
            scramble: b.scramble && b.compress_pct == 0,
            refill: b.refills(),
            compress_pct: u64::from(b.compress_pct),
            chunk,
            dedupe_pct: u64::from(b.dedupe_pct),
            pool,
            seed,
            unique: 0,
            prev: seed,
            rng: seed ^ GOLDEN,
            seq: 0,
            thread: u64::from(thread),
        }
    }

    /// The first content of a buffer of slots of `slot` bytes (one per I/O in flight). A
    /// pseudo-random buffer (`AlignedBuf`'s own fill) is left as it is.
    pub fn init(&mut self, buf: &mut [u8], slot: usize) {
        if self.base == crate::model::buffers::BufferBase::Random && !self.refill {
            return;
        }
        for s in buf.chunks_mut(slot.max(1)) {
            let seed = self.next_seed();
            self.fill(s, seed);
        }
    }

    /// Before a write of `buf` at `off`: new content (refill, compression, deduplication) or
    /// the scramble (each 512-byte sector: its offset in one of its first 8 cache lines, the
    /// write's number and the thread in its first line's last 16 bytes, as fio's
    /// `small_content_scramble` puts the offset and the time).
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], off: u64) {
        self.seq += 1;
        if self.refill {
            let seed = self.next_seed();
            self.fill(buf, seed);
        } else if self.scramble {
            let line = (((self.seq ^ off) & 7) << 6) as usize;
            for (i, s) in buf.chunks_exact_mut(512).enumerate() {
                let o = off + (i as u64) * 512;
                s[line..line + 8].copy_from_slice(&o.to_le_bytes());
                s[48..56].copy_from_slice(&self.seq.to_le_bytes());
                s[56..64].copy_from_slice(&self.thread.to_le_bytes());
            }
        }
    }

    #[inline]
    fn draw(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(GOLDEN);
        mix(self.rng)
    }

    #[inline]
    fn seed_of(&self, i: u64) -> u64 {
        mix(self.seed ^ i.wrapping_mul(GOLDEN))
    }

    /// The seed of the next write's content: a repeated one (`dedupe_pct` of them: the previous
    /// unique one, or one of the working set's) or a new one.
    #[inline]
    fn next_seed(&mut self) -> u64 {
        if self.dedupe_pct > 0 && (self.dedupe_pct >= 100 || self.draw() % 100 < self.dedupe_pct) {
            if self.pool > 0 {
                let i = self.draw() % self.pool;
                return self.seed_of(i);
            }
            if self.unique > 0 {
                return self.prev;
            }
        }
        let s = self.seed_of(self.unique);
        self.unique += 1;
        self.prev = s;
        s
    }

    /// `buf` from `seed`: each chunk pseudo-random for `100 - compress_pct` % of it, the rest
    /// zeros or the pattern (fio's `fill_random_buf_percentage`); zeros or the pattern alone
    /// when the base is one and nothing is compressed.
    #[inline]
    fn fill(&self, buf: &mut [u8], seed: u64) {
        use crate::model::buffers::BufferBase;
        if self.compress_pct == 0 {
            match &self.base {
                BufferBase::Random => random_fill(buf, seed),
                BufferBase::Zero => buf.fill(0),
                BufferBase::Pattern(p) => pattern_fill(buf, p),
            }
            return;
        }
        let chunk = self.chunk as usize;
        for (i, c) in buf.chunks_mut(chunk).enumerate() {
            let rand = (chunk as u64 * (100 - self.compress_pct) / 100) as usize;
            let rand = rand.min(c.len());
            random_fill(&mut c[..rand], mix(seed ^ (i as u64).wrapping_mul(GOLDEN)));
            match &self.base {
                BufferBase::Pattern(p) => pattern_fill(&mut c[rand..], p),
                _ => c[rand..].fill(0),
            }
        }
    }
}

/// Pseudo-random bytes from `seed` (SplitMix64, one word at a time).
#[inline]
fn random_fill(buf: &mut [u8], seed: u64) {
    let mut x = seed;
    for w in buf.chunks_mut(8) {
        x = x.wrapping_add(GOLDEN);
        let b = mix(x).to_le_bytes();
        w.copy_from_slice(&b[..w.len()]);
    }
}

/// The pattern repeated from the start of `buf`.
#[inline]
fn pattern_fill(buf: &mut [u8], p: &[u8]) {
    if p.is_empty() {
        return;
    }
    for c in buf.chunks_mut(p.len()) {
        c.copy_from_slice(&p[..c.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::buffers::Buffers;

    fn blocks(spec: &str, writes: usize) -> Vec<Vec<u8>> {
        let b: Buffers = spec.parse().unwrap();
        let mut f = Filler::new(&b, 7, 0, 4096, 4096 * writes as u64);
        let mut buf = AlignedBuf::new(4096, 4096, 7);
        f.init(buf.bytes_mut(), 4096);
        (0..writes)
            .map(|i| {
                f.before_write(buf.bytes_mut(), i as u64 * 4096);
                buf.bytes_mut().to_vec()
            })
            .collect()
    }

    fn distinct(v: &[Vec<u8>]) -> usize {
        let mut s: Vec<&Vec<u8>> = v.iter().collect();
        s.sort();
        s.dedup();
        s.len()
    }

    #[test]
    fn scrambled_blocks_are_all_different_and_unscrambled_ones_equal() {
        assert_eq!(distinct(&blocks("random", 64)), 64);
        assert_eq!(distinct(&blocks("random,noscramble", 64)), 1);
        assert_eq!(distinct(&blocks("random,refill", 64)), 64);
        let z = blocks("zero", 4);
        assert!(z.iter().all(|b| b.iter().all(|&x| x == 0)));
        let p = blocks("pattern:0xaa55,noscramble", 2);
        assert!(p[0].chunks(2).all(|c| c == [0xaa, 0x55]));
    }

    #[test]
    fn compression_zeroes_that_share_of_each_chunk() {
        let v = blocks("random,compress=75:1024", 16);
        for b in &v {
            for c in b.chunks(1024) {
                assert!(c[256..].iter().all(|&x| x == 0));
                assert!(c[..256].iter().any(|&x| x != 0));
            }
        }
        assert_eq!(distinct(&v), 16);
    }

    #[test]
    fn dedupe_repeats_that_share_of_writes() {
        let v = blocks("random,dedupe=50", 2000);
        let unique = distinct(&v);
        assert!((900..1100).contains(&unique), "{unique}");
        assert_eq!(distinct(&blocks("random,dedupe=100", 50)), 1);
        // working set: the repeats come from the first 10 % of the part's writes
        let v = blocks("random,dedupe=40:ws=10", 1000);
        let unique = distinct(&v);
        assert!((560..660).contains(&unique), "{unique}");
    }
}
