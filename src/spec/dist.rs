//! Random block offsets: uniform, zipf and pareto over the whole file set.
//!
//! Generators are seeded per thread (`seed + thread index`), so the same `--seed` gives the same
//! offsets in the same order. Skewed distributions pick a *rank* (rank 0 is the hottest block) and
//! map ranks to blocks with a fixed multiplicative permutation, so the hot blocks are spread over
//! all files instead of sitting at the start of the first one (fio scrambles its ranks the same way).

use crate::model::job::Distribution;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution as _, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Per-thread random number generator. Xoshiro256++ is fast, small and its output is fixed by its
/// specification, so seeds stay reproducible across iolab versions.
pub type Rng = Xoshiro256PlusPlus;

pub fn thread_rng(seed: u64, thread: u32) -> Rng {
    Rng::seed_from_u64(
        seed.wrapping_add(thread as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ seed,
    )
}

/// A large prime used to permute ranks into blocks; coprime with any `n` smaller than it.
const PERMUTE_PRIME: u64 = 11_400_714_819_323_198_549;

enum Kind {
    Uniform,
    Zipf(Zipf<f64>),
    Pareto { pow: f64 },
}

pub struct OffsetGen {
    n: u64,
    kind: Kind,
}

impl OffsetGen {
    /// A generator of block indexes in `0..n` (`n` > 0).
    pub fn new(dist: Distribution, n: u64) -> Self {
        assert!(n > 0);
        let kind = match dist {
            Distribution::Uniform => Kind::Uniform,
            Distribution::Zipf { theta } => {
                Kind::Zipf(Zipf::new(n as f64, theta).expect("theta validated by the parser"))
            }
            Distribution::Pareto { h } => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
        };
        OffsetGen { n, kind }
    }

    /// Maps a rank to a block with a bijection on `0..n`.
    #[inline]
    fn permute(&self, rank: u64) -> u64 {
        if self.n.is_multiple_of(PERMUTE_PRIME) {
            return rank;
        }
        ((rank as u128 * PERMUTE_PRIME as u128) % self.n as u128) as u64
    }

    /// The next block index, in `0..n`. No allocation.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        match &self.kind {
            Kind::Uniform => rng.random_range(0..self.n),
            Kind::Zipf(z) => {
                let r = z.sample(rng) as u64; // 1..=n
                self.permute(r.clamp(1, self.n) - 1)
            }
            Kind::Pareto { pow } => {
                let u: f64 = rng.random();
                let r = ((self.n - 1) as f64 * u.powf(*pow)) as u64;
                self.permute(r.min(self.n - 1))
            }
        }
    }
}

/// A seed for runs that were not given `--seed`: the clock's nanoseconds, cut to 53 bits so JSON
/// readers that use doubles read it back exactly. It is recorded in the result, so the run can
/// be repeated with `--seed`.
pub fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64 & ((1 << 53) - 1))
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: Distribution, n: u64, draws: usize, seed: u64) -> Vec<u64> {
        let g = OffsetGen::new(d, n);
        let mut rng = thread_rng(seed, 0);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            let b = g.next(&mut rng);
            assert!(b < n);
            c[b as usize] += 1;
        }
        c
    }

    /// Share of all draws that went to the hottest `frac` of blocks.
    fn top_share(c: &[u64], frac: f64) -> f64 {
        let mut s = c.to_vec();
        s.sort_unstable_by(|a, b| b.cmp(a));
        let k = ((c.len() as f64) * frac).ceil() as usize;
        s[..k].iter().sum::<u64>() as f64 / c.iter().sum::<u64>() as f64
    }

    #[test]
    fn uniform_covers_the_whole_range_evenly() {
        let n = 1000;
        let c = counts(Distribution::Uniform, n, 200_000, 1);
        assert!(c.iter().all(|&x| x > 0), "every block is hit");
        // expected 200 per block; chi-square-ish sanity: max deviation well under 50 %
        assert!(
            c.iter().all(|&x| (100..=300).contains(&x)),
            "{:?}",
            c.iter().max()
        );
        let share = top_share(&c, 0.2);
        assert!(share < 0.25, "top 20% got {share}");
    }

    #[test]
    fn zipf_skews_towards_few_blocks_spread_over_the_range() {
        let n = 1000;
        let c = counts(Distribution::Zipf { theta: 1.2 }, n, 200_000, 2);
        let share = top_share(&c, 0.1);
        assert!(share > 0.6, "top 10% of blocks got only {share}");
        // the hottest blocks are not all in the first tenth of the set
        let mut idx: Vec<usize> = (0..n as usize).collect();
        idx.sort_unstable_by(|&a, &b| c[b].cmp(&c[a]));
        assert!(idx[..10].iter().any(|&i| i > n as usize / 10));
    }

    #[test]
    fn pareto_skews_and_half_is_uniform() {
        let n = 1000;
        let skew = counts(Distribution::Pareto { h: 0.9 }, n, 200_000, 3);
        assert!(top_share(&skew, 0.2) > 0.5);
        let flat = counts(Distribution::Pareto { h: 0.5 }, n, 200_000, 3);
        assert!(top_share(&flat, 0.2) < 0.25);
    }

    #[test]
    fn seeds_reproduce_and_differ() {
        let g = OffsetGen::new(Distribution::Uniform, 1 << 30);
        let draw = |seed, t| {
            let mut r = thread_rng(seed, t);
            (0..100).map(|_| g.next(&mut r)).collect::<Vec<_>>()
        };
        assert_eq!(draw(42, 0), draw(42, 0));
        assert_ne!(draw(42, 0), draw(43, 0));
        assert_ne!(draw(42, 0), draw(42, 1));
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 7, 64, 1000, 4096] {
            let g = OffsetGen::new(Distribution::Zipf { theta: 1.1 }, n);
            let mut seen = vec![false; n as usize];
            for r in 0..n {
                let b = g.permute(r);
                assert!(!seen[b as usize]);
                seen[b as usize] = true;
            }
        }
    }
}
