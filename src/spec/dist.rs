//! Random block offsets: uniform, zipf, pareto and zoned over the whole file set.
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
    Pareto {
        pow: f64,
    },
    /// Zone by access percent (100 entries), then uniform inside the zone's blocks.
    Zoned {
        pick: Box<[u8; 100]>,
        /// First block and number of blocks of each zone.
        span: Vec<(u64, u64)>,
    },
}

pub struct OffsetGen {
    n: u64,
    kind: Kind,
}

impl OffsetGen {
    /// A generator of block indexes in `0..n` (`n` > 0).
    pub fn new(dist: &Distribution, n: u64) -> Self {
        assert!(n > 0);
        let kind = match *dist {
            Distribution::Uniform => Kind::Uniform,
            Distribution::Zipf { theta } => {
                Kind::Zipf(Zipf::new(n as f64, theta).expect("theta validated by the parser"))
            }
            Distribution::Pareto { h } => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            Distribution::Zoned { ref zones } => {
                let mut pick = Box::new([0u8; 100]);
                let mut span = Vec::with_capacity(zones.len());
                let (mut at, mut cum_size, mut start) = (0usize, 0u64, 0u64);
                for (i, z) in zones.iter().enumerate() {
                    for p in pick.iter_mut().skip(at).take(z.access_pct as usize) {
                        *p = i as u8;
                    }
                    at += z.access_pct as usize;
                    cum_size += z.size_pct as u64;
                    let end = (n as u128 * cum_size as u128 / 100) as u64;
                    // a zone narrower than a block still gets one
                    span.push((start.min(n - 1), end.saturating_sub(start).max(1)));
                    start = end;
                }
                Kind::Zoned { pick, span }
            }
        };
        OffsetGen { n, kind }
    }

    /// How many blocks it draws from (`0..n`).
    pub fn blocks(&self) -> u64 {
        self.n
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
            Kind::Zoned { pick, span } => {
                let (lo, len) = span[pick[rng.random_range(0..100usize)] as usize];
                (lo + rng.random_range(0..len)).min(self.n - 1)
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
        let g = OffsetGen::new(&d, n);
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
    fn zoned_gives_each_zone_its_share_of_the_accesses() {
        let d: Distribution = "zoned:50/5:30/15:20/80".parse().unwrap();
        let n = 10_000u64;
        let draws = 200_000;
        let c = counts(d, n, draws, 4);
        // zones from the start of the set: blocks 0..500, 500..2000, 2000..10000
        let share = |a: usize, b: usize| c[a..b].iter().sum::<u64>() as f64 / draws as f64;
        for (got, want) in [
            (share(0, 500), 0.5),
            (share(500, 2000), 0.3),
            (share(2000, 10_000), 0.2),
        ] {
            assert!((got - want).abs() < 0.02, "got {got}, want {want}");
        }
        // uniform inside a zone: the two halves of the first zone get about the same
        let (h1, h2) = (share(0, 250), share(250, 500));
        assert!((h1 - h2).abs() < 0.02, "{h1} {h2}");
        // a tiny set still gives every draw a block inside it
        let c = counts("zoned:90/1:10/99".parse().unwrap(), 3, 1000, 5);
        assert_eq!(c.iter().sum::<u64>(), 1000);
    }

    #[test]
    fn zoned_parses_prints_and_refuses_bad_shares() {
        let d: Distribution = "zoned:50/5:30/15:20/80".parse().unwrap();
        assert_eq!(d.to_string(), "zoned:50/5:30/15:20/80");
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            serde_json::json!({"kind": "zoned", "zones": [
                {"access_pct": 50, "size_pct": 5},
                {"access_pct": 30, "size_pct": 15},
                {"access_pct": 20, "size_pct": 80}]})
        );
        for bad in [
            "zoned:50/5:30/15",
            "zoned:50/5:30/15:30/70",
            "zoned:50/5:50/15:0/70",
            "zoned:50:50",
            "zoned:",
            "zoned:100/0:0/100",
        ] {
            let e = bad.parse::<Distribution>().unwrap_err();
            assert!(e.contains("zoned:ACCESS/SIZE"), "{bad}: {e}");
        }
    }

    #[test]
    fn seeds_reproduce_and_differ() {
        let g = OffsetGen::new(&Distribution::Uniform, 1 << 30);
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
            let g = OffsetGen::new(&Distribution::Zipf { theta: 1.1 }, n);
            let mut seen = vec![false; n as usize];
            for r in 0..n {
                let b = g.permute(r);
                assert!(!seen[b as usize]);
                seen[b as usize] = true;
            }
        }
    }
}
