//! Latency histograms.
//!
//! * [`LatHist`] is the run's main histogram: an HdrHistogram (`hdrhistogram` crate, the Rust port
//!   of Gil Tene's HdrHistogram) recording nanoseconds from 1 ns to 1 hour with 3 significant
//!   digits. Every recorded value is kept with a relative error of at most 0.1 % (1 part in 1000);
//!   values above one hour are clamped to one hour and counted in `saturated`. Histograms merge
//!   exactly (bucket counts add), so per-thread histograms merged at the end give the same
//!   percentiles as one global histogram would.
//! * [`IntervalHist`] is a small log-linear histogram used for the per-second time series
//!   (16 sub-buckets per power of two, values reported at the bucket midpoint: relative error at
//!   most 1/32 ≈ 3.1 %). It is a fixed array, so recording never allocates; at each second boundary
//!   the owning thread takes a sparse snapshot of it (one small allocation per second, never per I/O).

pub use crate::model::hist::{LatHist, MAX_TRACKED_NS, PERCENTILES};

/// Bits of sub-bucket resolution per power of two in [`IntervalHist`].
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// 64 powers of two cover every u64.
pub const INTERVAL_BUCKETS: usize = 64 * SUB;

/// Bucket index of a value in the log-linear interval histogram.
#[inline]
pub fn interval_bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) | sub
}

/// Midpoint of the value range covered by a bucket.
pub fn interval_bucket_value(idx: usize) -> u64 {
    if idx < SUB {
        return idx as u64;
    }
    let shift = (idx >> SUB_BITS) - 1;
    let sub = (idx & (SUB - 1)) as u64;
    let lo = (SUB as u64 | sub) << shift;
    let width = 1u64 << shift;
    lo + width / 2
}

/// A fixed-size log-linear histogram for one interval of the time series.
#[derive(Clone)]
pub struct IntervalHist {
    counts: Box<[u32; INTERVAL_BUCKETS]>,
    total: u64,
}

impl Default for IntervalHist {
    fn default() -> Self {
        IntervalHist {
            counts: Box::new([0; INTERVAL_BUCKETS]),
            total: 0,
        }
    }
}

impl IntervalHist {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let b = interval_bucket(ns);
        self.counts[b] = self.counts[b].saturating_add(1);
        self.total += 1;
    }

    /// Takes a sparse copy of the non-empty buckets and clears the histogram.
    pub fn take_sparse(&mut self) -> SparseHist {
        if self.total == 0 {
            return SparseHist::default();
        }
        let mut v = Vec::new();
        for (i, c) in self.counts.iter_mut().enumerate() {
            if *c != 0 {
                v.push((i as u16, *c));
                *c = 0;
            }
        }
        self.total = 0;
        SparseHist(v)
    }
}

/// Non-empty buckets of an [`IntervalHist`]: (bucket index, count), sorted by index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseHist(pub Vec<(u16, u32)>);

impl SparseHist {
    /// Percentiles (0..=100) of several sparse histograms merged, in ns.
    pub fn merged_percentiles(parts: &[&SparseHist], ps: &[f64]) -> Vec<Option<u64>> {
        let mut counts = vec![0u64; INTERVAL_BUCKETS];
        for p in parts {
            for &(i, c) in &p.0 {
                counts[i as usize] += c as u64;
            }
        }
        ps.iter().map(|&p| bucket_percentile(&counts, p)).collect()
    }
}

/// The percentile `p` (0..=100) of interval-histogram bucket counts (index = bucket), in ns at
/// the bucket midpoint; None when all counts are 0. Same rank rule as HdrHistogram: the
/// smallest value with at least p% of the counts at or below it.
pub fn bucket_percentile(counts: &[u64], p: f64) -> Option<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return Some(interval_bucket_value(i));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Brute-force percentile: the smallest sample with at least p% of samples at or below it.
    fn brute(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1]
    }

    fn samples(seed: u64, n: usize) -> Vec<u64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                // log-uniform from 100 ns to 100 ms, like real latencies
                let e: f64 = rng.random_range(2.0..8.0);
                10f64.powf(e) as u64
            })
            .collect()
    }

    #[test]
    fn percentiles_match_brute_force_within_error_bound() {
        let v = samples(7, 100_000);
        let mut h = LatHist::new();
        for &x in &v {
            h.record(x);
        }
        let mut s = v.clone();
        s.sort_unstable();
        for (p, _) in PERCENTILES {
            let exact = brute(&s, p) as f64;
            let got = h.percentile(p) as f64;
            assert!(
                (got - exact).abs() / exact <= 0.001,
                "p{p}: hdr {got} vs exact {exact}"
            );
        }
        let min = *s.first().unwrap() as f64;
        assert!((h.h.min() as f64 - min).abs() / min <= 0.001);
        let max = *s.last().unwrap() as f64;
        assert!((h.h.max() as f64 - max).abs() / max <= 0.001);
    }

    #[test]
    fn merged_thread_histograms_equal_one_global_histogram() {
        let parts: Vec<Vec<u64>> = (0..4).map(|t| samples(100 + t, 20_000)).collect();
        let mut global = LatHist::new();
        let mut merged = LatHist::new();
        for p in &parts {
            let mut local = LatHist::new();
            for &x in p {
                local.record(x);
                global.record(x);
            }
            merged.merge(&local);
        }
        assert_eq!(merged.count(), 80_000);
        for (p, _) in PERCENTILES {
            assert_eq!(merged.percentile(p), global.percentile(p));
        }
        assert_eq!(merged.h.mean(), global.h.mean());
    }

    #[test]
    fn clamps_and_counts_values_above_one_hour() {
        let mut h = LatHist::new();
        h.record(0);
        h.record(MAX_TRACKED_NS * 2);
        assert_eq!(h.count(), 2);
        assert_eq!(h.saturated, 1);
        assert_eq!(h.h.min(), 1);
    }

    #[test]
    fn interval_buckets_are_monotonic_and_within_bound() {
        let mut last = 0;
        for v in [
            1u64,
            5,
            15,
            16,
            17,
            31,
            32,
            33,
            1000,
            65_535,
            1 << 30,
            u64::MAX / 2,
        ] {
            let b = interval_bucket(v);
            assert!(b >= last, "bucket order at {v}");
            last = b;
            let mid = interval_bucket_value(b) as f64;
            assert!(
                (mid - v as f64).abs() / (v as f64) <= 1.0 / 32.0 + 1e-9,
                "{v} -> {mid}"
            );
        }
        assert!(interval_bucket(u64::MAX) < INTERVAL_BUCKETS);
    }

    #[test]
    fn sparse_percentiles_match_brute_force_within_bound() {
        let v = samples(3, 50_000);
        let (a, b) = v.split_at(20_000);
        let mut ha = IntervalHist::default();
        let mut hb = IntervalHist::default();
        a.iter().for_each(|&x| ha.record(x));
        b.iter().for_each(|&x| hb.record(x));
        let (sa, sb) = (ha.take_sparse(), hb.take_sparse());
        let mut s = v.clone();
        s.sort_unstable();
        let got = SparseHist::merged_percentiles(&[&sa, &sb], &[50.0, 99.0]);
        for (g, p) in got.iter().zip([50.0, 99.0]) {
            let exact = brute(&s, p) as f64;
            let g = g.unwrap() as f64;
            assert!(
                (g - exact).abs() / exact <= 1.0 / 32.0 + 1e-9,
                "p{p}: {g} vs {exact}"
            );
        }
        // taking the snapshot cleared it
        assert_eq!(ha.take_sparse(), SparseHist::default());
    }
}
