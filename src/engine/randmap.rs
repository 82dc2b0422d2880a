//! fio's random map (`--random-map`): which blocks of a thread's range a random job has done in
//! this pass, so that each block is done once per pass (fio's default; `norandommap` draws with
//! replacement, `random_generator=lfsr` walks a full-period sequence instead).
//!
//! Made once per thread before the phase; per I/O nothing is allocated: a draw, a few word
//! operations on the bitmap (or one permutation step), no lock.

use crate::model::job::RandomMap;
use crate::spec::dist::{OffsetGen, Rng};

/// The blocks of one thread's range done in this pass.
pub enum RandMap {
    Bitmap(Bitmap),
    Lfsr(Perm),
}

impl RandMap {
    /// A map of `n` blocks (`n` > 0); `seed` picks the permutation of [`RandomMap::Lfsr`].
    pub fn new(kind: RandomMap, n: u64, seed: u64) -> Self {
        match kind {
            RandomMap::Lfsr => RandMap::Lfsr(Perm::new(n, seed)),
            _ => RandMap::Bitmap(Bitmap::new(n)),
        }
    }

    /// Where the next I/O starts: a block not done in this pass (a new pass begins once every
    /// block is done). The bitmap draws one from `offsets` and, when that one is done, takes the
    /// next one not done after it (from the start past the end), as fio's axmap.
    #[inline]
    pub fn start(&mut self, offsets: &OffsetGen, rng: &mut Rng) -> u64 {
        self.start_drawn(|_| offsets.next(rng))
    }

    /// [`RandMap::start`] with the block drawn by `draw` from the map's `n` blocks (in `0..n`;
    /// fio's own generator).
    #[inline]
    pub fn start_drawn(&mut self, draw: impl FnOnce(u64) -> u64) -> u64 {
        match self {
            RandMap::Bitmap(m) => {
                if m.left == 0 {
                    m.clear();
                }
                let b = draw(m.n);
                if m.is_done(b) { m.next_free(b) } else { b }
            }
            RandMap::Lfsr(p) => p.next(),
        }
    }

    /// Marks the `n` blocks from `block` done, those done already too (an I/O that follows the
    /// last one, `--random-every`: fio marks its blocks, busy or not). Blocks past the map are
    /// left alone.
    #[inline]
    pub fn mark(&mut self, block: u64, n: u64) {
        if let RandMap::Bitmap(m) = self {
            for b in block..block.saturating_add(n).min(m.n) {
                if !m.is_done(b) {
                    m.take(b, 1);
                }
            }
        }
    }

    /// Marks up to `want` blocks from `block` (not done) as done, stopping at the first one
    /// already done; returns how many (at least 1). The LFSR keeps no marks: each I/O owns the
    /// `want` blocks it asked for.
    #[inline]
    pub fn take(&mut self, block: u64, want: u64) -> u64 {
        match self {
            RandMap::Bitmap(m) => m.take(block, want),
            RandMap::Lfsr(_) => want,
        }
    }
}

/// One bit per block (set: done), and one bit per word of them (set: the word is full), so the
/// next free block is found in a few word reads even when few are left.
pub struct Bitmap {
    n: u64,
    bits: Vec<u64>,
    full: Vec<u64>,
    /// Blocks not done in this pass.
    left: u64,
}

impl Bitmap {
    fn new(n: u64) -> Self {
        let words = n.div_ceil(64) as usize;
        let mut m = Bitmap {
            n,
            bits: vec![0; words],
            full: vec![0; words.div_ceil(64)],
            left: n,
        };
        m.clear();
        m
    }

    /// A new pass: every block not done; the bits past `n` stay set, as do the summary bits of
    /// words past the last.
    fn clear(&mut self) {
        self.bits.fill(0);
        self.full.fill(0);
        let tail = self.n % 64;
        if tail != 0 {
            *self.bits.last_mut().expect("n > 0") = !0u64 << tail;
        }
        let words = self.bits.len() as u64;
        if !words.is_multiple_of(64) {
            *self.full.last_mut().expect("n > 0") = !0u64 << (words % 64);
        }
        self.left = self.n;
    }

    #[inline]
    fn is_done(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] >> (b % 64) & 1 == 1
    }

    /// The first block not done from `b` on, from the start past the end (`left` > 0).
    #[inline]
    fn next_free(&self, b: u64) -> u64 {
        let w = (b / 64) as usize;
        let free = !self.bits[w] & (!0u64 << (b % 64));
        if free != 0 {
            return w as u64 * 64 + u64::from(free.trailing_zeros());
        }
        let w = self
            .word_not_full(w + 1)
            .or_else(|| self.word_not_full(0))
            .expect("a block left in the pass");
        w as u64 * 64 + u64::from((!self.bits[w]).trailing_zeros())
    }

    /// The first word from `w` on with a block not done.
    #[inline]
    fn word_not_full(&self, w: usize) -> Option<usize> {
        let mut s = w / 64;
        let mut mask = !0u64 << (w % 64);
        while s < self.full.len() {
            let open = !self.full[s] & mask;
            if open != 0 {
                return Some(s * 64 + open.trailing_zeros() as usize);
            }
            s += 1;
            mask = !0;
        }
        None
    }

    #[inline]
    fn take(&mut self, block: u64, want: u64) -> u64 {
        let mut got = 0;
        let mut b = block;
        while got < want && b < self.n && !self.is_done(b) {
            let w = (b / 64) as usize;
            self.bits[w] |= 1 << (b % 64);
            if self.bits[w] == !0 {
                self.full[w / 64] |= 1 << (w % 64);
            }
            got += 1;
            b += 1;
        }
        self.left -= got;
        got
    }
}

/// A full-period sequence over `0..n` without a bitmap: a seeded bijection on `0..2^k`
/// (`2^k` the power of two at or above `n`) applied to a counter, values at or past `n` skipped,
/// so each block comes once per pass of the counter (at most two steps per block on average).
pub struct Perm {
    n: u64,
    k: u32,
    mask: u64,
    keys: [u64; 4],
    ctr: u64,
}

impl Perm {
    fn new(n: u64, seed: u64) -> Self {
        let k = (64 - (n - 1).leading_zeros()).clamp(1, 63);
        let mut s = seed;
        let mut key = || {
            // splitmix64
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Perm {
            n,
            k,
            mask: (1 << k) - 1,
            keys: [key(), key() | 1, key(), key() | 1],
            ctr: 0,
        }
    }

    /// A bijection on `0..2^k`: each step (xor, multiply by an odd number, add, xor with a
    /// right shift) is invertible modulo `2^k`.
    #[inline]
    fn permute(&self, x: u64) -> u64 {
        let m = self.mask;
        let mut x = (x ^ self.keys[0]) & m;
        x = x.wrapping_mul(self.keys[1]) & m;
        x ^= x >> (self.k / 2 + 1);
        x = x.wrapping_add(self.keys[2]) & m;
        x = x.wrapping_mul(self.keys[3]) & m;
        x ^ (x >> self.k.div_ceil(2))
    }

    #[inline]
    fn next(&mut self) -> u64 {
        loop {
            if self.ctr > self.mask {
                self.ctr = 0; // a new pass
            }
            let x = self.permute(self.ctr);
            self.ctr += 1;
            if x < self.n {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::Distribution;
    use crate::spec::dist::thread_rng;

    /// Each pass of either map gives every block once; the bitmap's I/Os of several blocks are
    /// trimmed to the run not done, so the blocks of a pass add up to the range exactly.
    #[test]
    fn every_block_once_per_pass() {
        for n in [1u64, 5, 64, 65, 4096 + 3, 10_000] {
            let offsets = OffsetGen::new(&Distribution::Uniform, n);
            let mut rng = thread_rng(7, 0);
            for kind in [RandomMap::Bitmap, RandomMap::Lfsr] {
                let mut m = RandMap::new(kind, n, 42);
                for pass in 0..3 {
                    let mut seen = vec![0u8; n as usize];
                    let mut done = 0;
                    while done < n {
                        let b = m.start(&offsets, &mut rng);
                        let want = if kind == RandomMap::Lfsr {
                            1
                        } else {
                            1 + b % 4
                        };
                        let got = m.take(b, want);
                        assert!((1..=want).contains(&got), "{kind:?} n={n}: {got} of {want}");
                        for x in b..b + got {
                            seen[x as usize] += 1;
                        }
                        done += got;
                    }
                    assert_eq!(done, n);
                    assert!(
                        seen.iter().all(|&c| c == 1),
                        "{kind:?} n={n} pass {pass}: every block once"
                    );
                }
            }
        }
    }

    /// The LFSR's order is not the blocks' order, and another seed gives another order.
    #[test]
    fn the_lfsr_sequence_is_scrambled_and_seeded() {
        let order = |seed| {
            let mut p = Perm::new(1000, seed);
            (0..1000).map(|_| p.next()).collect::<Vec<_>>()
        };
        let a = order(1);
        assert_ne!(a, (0..1000).collect::<Vec<_>>());
        assert_ne!(a, order(2));
        assert_eq!(a, order(1));
        let ascending = a.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(ascending < 50, "{ascending} neighbours in order");
    }
}
