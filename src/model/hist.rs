//! The main latency histogram type kept in documents and the store (see measure::hist for the
//! recording side and the per-second histograms).

use hdrhistogram::Histogram;

/// Highest value the main histogram tracks exactly: one hour in nanoseconds.
pub const MAX_TRACKED_NS: u64 = 3_600_000_000_000;

/// The latency percentiles iolab reports, as fractions.
pub const PERCENTILES: [(f64, &str); 6] = [
    (50.0, "p50"),
    (90.0, "p90"),
    (95.0, "p95"),
    (99.0, "p99"),
    (99.9, "p99_9"),
    (99.99, "p99_99"),
];

/// The main latency histogram (nanoseconds).
#[derive(Clone, Debug)]
pub struct LatHist {
    pub h: Histogram<u64>,
    /// Values that were above [`MAX_TRACKED_NS`] and were clamped.
    pub saturated: u64,
}

impl Default for LatHist {
    fn default() -> Self {
        Self::new()
    }
}

impl LatHist {
    pub fn new() -> Self {
        LatHist {
            h: Histogram::new_with_bounds(1, MAX_TRACKED_NS, 3).expect("valid hdr bounds"),
            saturated: 0,
        }
    }

    /// Records one latency. Never allocates.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = if ns == 0 {
            1
        } else if ns > MAX_TRACKED_NS {
            self.saturated += 1;
            MAX_TRACKED_NS
        } else {
            ns
        };
        // Cannot fail: v is inside the bounds given at construction.
        let _ = self.h.record(v);
    }

    pub fn merge(&mut self, other: &LatHist) {
        self.h.add(&other.h).expect("same bounds");
        self.saturated += other.saturated;
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// The value at percentile `p` (0..=100), in ns.
    pub fn percentile(&self, p: f64) -> u64 {
        self.h.value_at_percentile(p)
    }
}
