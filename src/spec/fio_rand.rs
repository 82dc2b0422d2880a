//! fio's own random generators (lib/rand.c, lib/rand.h of fio 3.33): the combined Tausworthe
//! generators taus88 (32-bit, fio's default `random_generator=tausworthe`) and taus258
//! (`tausworthe64`), seeded as fio seeds them. A job file that leaves its seeds to fio
//! (`randrepeat=1`, or a `randseed=`) then draws the same random offsets and the same
//! read/write mix decisions, in the same order, as fio does for that job: the random map's
//! walk (fio's t0020 checks how few neighbours it has) and the bytes a `readwrite` job writes
//! (t0008) are fio's, not merely of the same distribution.
//!
//! Per draw: a few shifts and XORs on three or five words, no allocation.

use crate::model::job::FioRand;

/// fio's taus88: three 32-bit Tausworthe components (`struct taus88_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taus88 {
    s: [u32; 3],
}

/// fio's `__seed`: a component's state is at least its minimum (L'Ecuyer's erratum).
fn at_least(x: u64, m: u64) -> u64 {
    if x < m { x + m } else { x }
}

/// fio's start value of the seeding LCG, `(2^31) + (2^17) + (2^7)` with C's `^` (XOR): 60.
const LCG_START: u64 = (2 ^ 31) + (2 ^ 17) + (2 ^ 7);

impl Taus88 {
    /// fio's `__init_rand32(state, (unsigned int) seed)`: the seed truncated to 32 bits, then
    /// six draws discarded.
    pub fn new(seed: u64) -> Self {
        let seed = seed as u32;
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let s1 = at_least(u64::from(lcg(LCG_START as u32)), 1) as u32;
        let s2 = at_least(u64::from(lcg(s1)), 7) as u32;
        let s3 = at_least(u64::from(lcg(s2)), 15) as u32;
        let mut t = Taus88 { s: [s1, s2, s3] };
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    /// fio's `__rand32`.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        #[inline]
        fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
            ((s & c) << d) ^ (((s << a) ^ s) >> b)
        }
        self.s[0] = step(self.s[0], 13, 19, 4_294_967_294, 12);
        self.s[1] = step(self.s[1], 2, 25, 4_294_967_288, 4);
        self.s[2] = step(self.s[2], 3, 11, 4_294_967_280, 17);
        self.s[0] ^ self.s[1] ^ self.s[2]
    }

    /// fio's `rand_between(state, start, end)` of a 32-bit state: `start..=end`, drawn as
    /// `rand32_upto` draws (a double product, truncated).
    #[inline]
    pub fn between(&mut self, start: u32, end: u32) -> u32 {
        let r = self.next_u32();
        let span = f64::from(end - start) + 1.0;
        start + (span * (f64::from(r) / 4_294_967_296.0)) as u32
    }
}

/// fio's taus258: five 64-bit components (`struct taus258_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taus258 {
    s: [u64; 5],
}

impl Taus258 {
    /// fio's `__init_rand64(state, seed)`.
    pub fn new(seed: u64) -> Self {
        let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
        let mut s = [0u64; 5];
        let mins = [1, 7, 15, 33, 49];
        let mut prev = LCG_START;
        for (i, m) in mins.into_iter().enumerate() {
            s[i] = at_least(lcg(prev), m);
            prev = s[i];
        }
        let mut t = Taus258 { s };
        for _ in 0..6 {
            t.next_u64();
        }
        t
    }

    /// fio's `__rand64`.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let x = ((s[0] << 1) ^ s[0]) >> 53;
        s[0] = ((s[0] & 18_446_744_073_709_551_614) << 10) ^ x;
        let x = ((s[1] << 24) ^ s[1]) >> 50;
        s[1] = ((s[1] & 18_446_744_073_709_551_104) << 5) ^ x;
        let x = ((s[2] << 3) ^ s[2]) >> 23;
        s[2] = ((s[2] & 18_446_744_073_709_547_520) << 29) ^ x;
        let x = ((s[3] << 5) ^ s[3]) >> 24;
        s[3] = ((s[3] & 18_446_744_073_709_420_544) << 23) ^ x;
        let x = ((s[4] << 3) ^ s[4]) >> 33;
        s[4] = ((s[4] & 18_446_744_073_701_163_008) << 8) ^ x;
        s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
    }
}

/// The generator of a job's random offsets (fio's `td->random_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioOffsets {
    T32(Taus88),
    T64(Taus258),
}

impl FioOffsets {
    /// The offsets' generator of fio's thread `thread_number` (1 for a file's first job).
    pub fn new(r: &FioRand, thread_number: u64) -> Self {
        let seed = r.block_seed(thread_number);
        if r.use64 {
            FioOffsets::T64(Taus258::new(seed))
        } else {
            FioOffsets::T32(Taus88::new(seed))
        }
    }

    /// fio's `__get_next_rand_offset` with a Tausworthe generator: a block in `0..blocks`,
    /// `lastb * (r / (rand_max + 1.0))`.
    #[inline]
    pub fn block(&mut self, blocks: u64) -> u64 {
        let u = match self {
            FioOffsets::T32(t) => f64::from(t.next_u32()) / 4_294_967_296.0,
            FioOffsets::T64(t) => t.next_u64() as f64 / 18_446_744_073_709_551_616.0,
        };
        ((blocks as f64 * u) as u64).min(blocks.saturating_sub(1))
    }
}

/// fio's read/write mix of a `rw`/`randrw` job (`get_rw_ddir` in io_u.c): the direction is
/// drawn (1..=100 against `rwmixread`) once this direction has issued as many I/Os as its turn
/// allows; a change of direction sets the new one's turn to the old one's issued I/Os times the
/// new one's percent. Read-backs of verify are not counted (as fio's `IO_U_F_VER_LIST`).
#[derive(Debug, Clone)]
pub struct FioMix {
    rng: Taus88,
    read_pct: u32,
    /// The current direction: 0 reads, 1 writes (fio starts on reads).
    dir: usize,
    issued: [u64; 2],
    turn: u64,
    /// The direction of the next read or write, decided when the last one was issued.
    next_read: bool,
}

impl FioMix {
    pub fn new(r: &FioRand, thread_number: u64, read_pct: u32) -> Self {
        let mut m = FioMix {
            rng: Taus88::new(r.seeds(thread_number)[MIX_OFF]),
            read_pct,
            dir: 0,
            issued: [0, 0],
            turn: 0,
            next_read: true,
        };
        m.next_read = m.decide();
        m
    }

    fn decide(&mut self) -> bool {
        if self.issued[self.dir] >= self.turn {
            let v = self.rng.between(1, 100);
            let d = usize::from(v > self.read_pct);
            if d != self.dir {
                let pct = if d == 0 {
                    self.read_pct
                } else {
                    100 - self.read_pct
                };
                self.turn = self.issued[self.dir] * u64::from(pct) / 100;
            }
            self.dir = d;
        }
        self.dir == 0
    }

    /// Whether the next read or write is a read.
    #[inline]
    pub fn next_is_read(&self) -> bool {
        self.next_read
    }

    /// A read (`true`) or write was issued: counted, and the next one's direction decided.
    #[inline]
    pub fn issued(&mut self, read: bool) {
        self.issued[usize::from(!read)] += 1;
        self.next_read = self.decide();
    }
}

/// fio's `FIO_RAND_MIX_OFF`: the index of the mix's seed in `td->rand_seeds`.
pub const MIX_OFF: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's seeds of a job file that sets none: `randrepeat=1`, `randseed=0x89`, taus88.
    fn defaults() -> FioRand {
        FioRand {
            thread_number: 1,
            rand_seed: 0x89,
            repeat: true,
            all_repeat: false,
            use64: false,
        }
    }

    /// fio 3.33's own draws, from its `--debug=random` ("off rand") and `--debug=io` output
    /// (`fio --name=x --ioengine=null --filesize=1M --rw=randread --bs=4k`; a second job
    /// beside it; `--random_generator=tausworthe64`; `--rw=readwrite --rwmixread=50|70`).
    #[test]
    fn draws_are_fios() {
        let r = defaults();
        let mut t = Taus88::new(r.block_seed(1));
        assert_eq!(
            (0..5).map(|_| t.next_u32()).collect::<Vec<_>>(),
            [259043585, 3179521932, 3621444214, 2018697059, 1726199243]
        );
        // the blocks of a 1 MiB file of 4 KiB: 0xf000 and 0xbd000 first
        let mut o = FioOffsets::new(&r, 1);
        assert_eq!([o.block(256), o.block(256)], [0xf, 0xbd]);
        let mut t = Taus88::new(r.block_seed(2));
        assert_eq!([t.next_u32(), t.next_u32()], [1094293889, 780151754]);
        let mut t = Taus258::new(r.block_seed(1));
        assert_eq!(
            (0..3).map(|_| t.next_u64()).collect::<Vec<_>>(),
            [
                17311067694306724737,
                485009114434689783,
                1488059811897507987
            ]
        );
        for (pct, fio) in [
            (
                50,
                "000100111010100011001111010111100101100110100110111001010110",
            ),
            (
                70,
                "000100100010100000001101000111000101100100100100110000010010",
            ),
        ] {
            let mut m = FioMix::new(&r, 1, pct);
            let dirs: String = (0..fio.len())
                .map(|_| {
                    let read = m.next_is_read();
                    m.issued(read);
                    if read { '0' } else { '1' }
                })
                .collect();
            assert_eq!(dirs, fio, "rwmixread={pct}");
        }
        // fio --size=32m --rw=readwrite --bs=4k: 16568 KiB written (fio's t0008 asks for this)
        let mut m = FioMix::new(&r, 1, 50);
        let writes = (0..8192)
            .filter(|_| {
                let read = m.next_is_read();
                m.issued(read);
                !read
            })
            .count();
        assert_eq!(writes * 4, 16568);
    }

    #[test]
    fn between_stays_in_its_range_and_reaches_both_ends() {
        let mut t = Taus88::new(7);
        let mut seen = [false; 101];
        for _ in 0..100_000 {
            let v = t.between(1, 100);
            assert!((1..=100).contains(&v));
            seen[v as usize] = true;
        }
        assert!(seen[1..].iter().all(|&s| s));
    }

    #[test]
    fn the_mix_keeps_its_share_over_many_ios() {
        let r = defaults();
        for pct in [50u32, 70, 10] {
            let mut m = FioMix::new(&r, 1, pct);
            let n = 100_000;
            let reads = (0..n)
                .filter(|_| {
                    let read = m.next_is_read();
                    m.issued(read);
                    read
                })
                .count();
            let share = reads as f64 / n as f64 * 100.0;
            assert!((share - f64::from(pct)).abs() < 3.0, "{pct}: {share}");
        }
    }

    #[test]
    fn offsets_cover_their_range() {
        let r = FioRand {
            use64: true,
            ..defaults()
        };
        for r in [r.clone(), FioRand { use64: false, ..r }] {
            let mut o = FioOffsets::new(&r, 1);
            let mut seen = vec![false; 256];
            for _ in 0..10_000 {
                seen[o.block(256) as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "{r:?}");
        }
    }
}
