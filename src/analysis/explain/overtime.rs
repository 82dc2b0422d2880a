//! Change over a mode (issue 30): a rate that fell and stayed lower, found in the mode's
//! per-second series: a write cliff (an SLC cache filled, a log-structured device began its
//! garbage collection: the drop comes after a volume written) or a burst bucket emptied (a
//! cloud volume's credits: the rate above the baseline came out of a bucket whose size is the
//! area above it, refilled at the baseline rate). The rule's entry is `rate_drop` in
//! [`super::rules::RULES`].

use super::Confidence;
use super::facts::{Facts, Hit, fmt_n, hit};
use crate::measure::steady::mean;
pub use crate::measure::steady::{Second, seconds};
use crate::model::units::human_bytes;

/// The rate after the change is at most this share of the rate before it.
pub const DROP_SHARE: f64 = 0.7;
/// The fewest whole seconds on each side of the change.
pub const MIN_SIDE_S: usize = 2;

/// A drop found: when, the levels before and after, and what moved before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drop {
    /// Seconds after the measurement began, within the second it fell in (its share of that
    /// second at the higher rate, from the two levels).
    pub at_s: f64,
    /// I/Os per second before and after (the baseline).
    pub before_iops: f64,
    pub after_iops: f64,
    /// Bytes per second before and after.
    pub before_bps: f64,
    pub after_bps: f64,
    /// Bytes written and moved before the change.
    pub written: f64,
    pub moved: f64,
    /// The area above the baseline before the change: I/Os and bytes (a burst bucket's size,
    /// its refill the baseline rate).
    pub above_ios: f64,
    pub above_bytes: f64,
}

/// The one step down in `s` that best splits it in two levels (least squares), if the lower
/// level is at most [`DROP_SHARE`] of the higher, each side has [`MIN_SIDE_S`] seconds, and it
/// stays: every second after it is nearer the lower level, every second before it nearer the
/// higher (a second that holds the change may fall on either side and is shared between them).
pub fn step_down(s: &[Second]) -> Option<Drop> {
    let n = s.len();
    if n < 2 * MIN_SIDE_S {
        return None;
    }
    let r: Vec<f64> = s.iter().map(|x| x.ios / x.dur_s).collect();
    let sse = |xs: &[f64]| {
        let m = mean(xs);
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>()
    };
    let k = (MIN_SIDE_S..=n - MIN_SIDE_S).min_by(|&a, &b| {
        let ca = sse(&r[..a]) + sse(&r[a..]);
        let cb = sse(&r[..b]) + sse(&r[b..]);
        ca.total_cmp(&cb)
    })?;
    let (hi, lo) = (mean(&r[..k]), mean(&r[k..]));
    let mid = (hi + lo) / 2.0;
    if hi <= 0.0
        || lo > DROP_SHARE * hi
        || r[..k].iter().any(|&x| x < mid)
        || r[k..].iter().any(|&x| x > mid)
    {
        return None;
    }
    // the levels and byte rates from the seconds away from the change (the two beside it may
    // be mixed)
    let rate = |xs: &[Second], v: fn(&Second) -> f64| {
        xs.iter().map(v).sum::<f64>() / xs.iter().map(|x| x.dur_s).sum::<f64>()
    };
    let (before, after) = (&s[..k - 1], &s[k + 1..]);
    let (hi, lo) = (rate(before, |x| x.ios), rate(after, |x| x.ios));
    let (hi_bps, lo_bps) = (rate(before, |x| x.bytes), rate(after, |x| x.bytes));
    let hi_w = rate(before, |x| x.written);
    if hi <= lo {
        return None;
    }
    let (mut at_s, mut written, mut moved, mut above_ios, mut above_bytes, mut t) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (i, x) in s.iter().enumerate() {
        if i + 1 < k {
            // wholly before: what it did
            at_s = t + x.dur_s;
            written += x.written;
            moved += x.bytes;
            above_ios += x.ios - lo * x.dur_s;
            above_bytes += x.bytes - lo_bps * x.dur_s;
        } else if i <= k {
            // beside the change: its share of the second at the higher rate
            let f = ((r[i] - lo) / (hi - lo)).clamp(0.0, 1.0) * x.dur_s;
            if f > 0.0 {
                at_s = t + f;
                written += f * hi_w;
                moved += f * hi_bps;
                above_ios += f * (hi - lo);
                above_bytes += f * (hi_bps - lo_bps);
            }
        }
        t += x.dur_s;
    }
    Some(Drop {
        at_s,
        before_iops: hi,
        after_iops: lo,
        before_bps: hi_bps,
        after_bps: lo_bps,
        written,
        moved,
        above_ios,
        above_bytes,
    })
}

/// `rate_drop`: the mode's rate fell by at least 30 % and stayed there.
pub(super) fn rate_drop(f: &Facts) -> Option<Hit> {
    if f.null {
        return None;
    }
    let d = step_down(&seconds(&f.cell.timeseries))?;
    let writes = d.written > 0.5 * d.moved;
    let what = if writes {
        format!(
            "after {} written: a write cliff (an SLC or write cache that filled, or garbage collection that began), or a burst bucket that emptied",
            human_bytes(d.written)
        )
    } else {
        format!(
            "after {} moved: a burst bucket that emptied (credits spent), or a cache in front of the device that stopped helping",
            human_bytes(d.moved)
        )
    };
    hit(
        Confidence::Medium,
        format!(
            "the rate fell from {} to {} IOPS ({} to {}/s) at {:.1} s and stayed there to the end, {what}; as a bucket: about {} I/Os ({}) above the baseline, refilled at the baseline's {} IOPS. The mode's average mixes the two levels: the lower one is what lasts",
            fmt_n(d.before_iops),
            fmt_n(d.after_iops),
            human_bytes(d.before_bps),
            human_bytes(d.after_bps),
            d.at_s,
            fmt_n(d.above_ios),
            human_bytes(d.above_bytes),
            fmt_n(d.after_iops),
        ),
        format!("{} --steady-state --round 60", f.run_cmd),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` seconds at `hi` I/Os of `bs` bytes until `change_s` (a fraction within its second),
    /// then `lo`; all writes or all reads.
    fn series(n: usize, hi: f64, lo: f64, change_s: f64, bs: f64, write: bool) -> Vec<Second> {
        (0..n)
            .map(|i| {
                let t = i as f64;
                let at_hi = (change_s - t).clamp(0.0, 1.0);
                let ios = at_hi * hi + (1.0 - at_hi) * lo;
                Second {
                    dur_s: 1.0,
                    ios,
                    bytes: ios * bs,
                    written: if write { ios * bs } else { 0.0 },
                }
            })
            .collect()
    }

    /// A write cliff after 96 MiB written (3.2 s at 30 MiB/s of 16 KiB writes, then 4 MiB/s):
    /// found within 5 % of where it was, at the two levels.
    #[test]
    fn a_write_cliff_is_found_where_it_was() {
        let bs = 16384.0;
        let hi = 30.0 * 1048576.0 / bs;
        let lo = 4.0 * 1048576.0 / bs;
        let s = series(12, hi, lo, 3.2, bs, true);
        let d = step_down(&s).expect("a drop");
        let n = 96.0 * 1048576.0;
        assert!(
            (d.written - n).abs() <= 0.05 * n,
            "{} MiB",
            d.written / 1048576.0
        );
        assert!((d.at_s - 3.2).abs() < 0.1, "{d:?}");
        assert!(
            (d.before_iops - hi).abs() < 1.0 && (d.after_iops - lo).abs() < 1.0,
            "{d:?}"
        );
    }

    /// A bucket of 6400 I/Os over a 400 IOPS baseline at 2000 IOPS: it lasts 4 s; its size and
    /// the baseline come back within 10 %.
    #[test]
    fn a_burst_buckets_size_and_refill_are_estimated() {
        let s = series(15, 2000.0, 400.0, 4.0, 4096.0, false);
        let d = step_down(&s).expect("a drop");
        assert!((d.above_ios - 6400.0).abs() <= 640.0, "{d:?}");
        assert!((d.after_iops - 400.0).abs() <= 40.0, "{d:?}");
        assert!(
            (d.above_bytes - 6400.0 * 4096.0).abs() <= 640.0 * 4096.0,
            "{d:?}"
        );
    }

    /// No drop: a flat series, noise of ±10 %, a drop of only 20 %, a dip that recovers, a
    /// rise, and too few seconds on a side.
    #[test]
    fn no_drop_is_found_where_there_is_none() {
        let flat = series(10, 1000.0, 1000.0, 0.0, 4096.0, false);
        assert_eq!(step_down(&flat), None);
        let mut noisy = flat.clone();
        for (i, x) in noisy.iter_mut().enumerate() {
            x.ios *= if i % 2 == 0 { 1.1 } else { 0.9 };
        }
        assert_eq!(step_down(&noisy), None);
        assert_eq!(
            step_down(&series(10, 1000.0, 800.0, 5.0, 4096.0, false)),
            None
        );
        let mut dip = flat.clone();
        for x in &mut dip[4..6] {
            x.ios = 300.0;
        }
        assert_eq!(step_down(&dip), None, "a dip that recovers does not stay");
        assert_eq!(
            step_down(&series(10, 300.0, 1000.0, 5.0, 4096.0, false)),
            None
        );
        assert_eq!(
            step_down(&series(10, 1000.0, 300.0, 9.0, 4096.0, false)),
            None
        );
        assert_eq!(
            step_down(&series(3, 1000.0, 300.0, 1.5, 4096.0, false)),
            None
        );
    }
}
