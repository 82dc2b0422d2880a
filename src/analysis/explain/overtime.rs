//! Change over a mode (issue 30): a rate that fell and stayed lower, found in the mode's
//! per-second series: a write cliff (an SLC cache filled, a log-structured device began its
//! garbage collection: the drop comes after a volume written) or a burst bucket emptied (a
//! cloud volume's credits: the rate above the baseline came out of a bucket whose size is the
//! area above it, refilled at the baseline rate); and reads that rose and stayed higher once
//! the set was read (first-touch reads: a volume restored from a snapshot fetching blocks, a thin
//! device). The rules' entries are `rate_drop` and `first_touch` in [`super::rules::RULES`].

use super::Confidence;
use super::facts::{Facts, Hit, fmt_n, hit};
use crate::measure::steady::mean;
pub use crate::measure::steady::{Second, seconds};
use crate::model::units::human_bytes;

/// The rate after the change is at most this share of the rate before it.
pub const DROP_SHARE: f64 = 0.7;
/// The fewest whole seconds on each side of the change.
pub const MIN_SIDE_S: usize = 2;
/// `first_touch` judges a mode whose writes are at most this share of its bytes.
pub const READS_WRITE_SHARE: f64 = 0.1;
/// `first_touch` is medium confidence when the volume before the rise is this many passes over
/// the set (from, to), low otherwise.
pub const ONE_PASS: (f64, f64) = (0.5, 1.5);

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
    let k = best_split(&r)?;
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

/// Where a series of rates splits best in two levels (least squares), with at least
/// [`MIN_SIDE_S`] values on each side: the index of the first value of the second level.
fn best_split(r: &[f64]) -> Option<usize> {
    let n = r.len();
    if n < 2 * MIN_SIDE_S {
        return None;
    }
    let sse = |xs: &[f64]| {
        let m = mean(xs);
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>()
    };
    (MIN_SIDE_S..=n - MIN_SIDE_S).min_by(|&a, &b| {
        let ca = sse(&r[..a]) + sse(&r[a..]);
        let cb = sse(&r[..b]) + sse(&r[b..]);
        ca.total_cmp(&cb)
    })
}

/// A rise found: when, the levels before and after, and the bytes moved before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rise {
    pub at_s: f64,
    pub before_iops: f64,
    pub after_iops: f64,
    pub moved: f64,
}

/// The one step up in `s` that best splits it in two levels, if the earlier level is at most
/// [`DROP_SHARE`] of the later, each side has [`MIN_SIDE_S`] seconds, and it stays (every
/// second before nearer the lower level, every second after nearer the higher).
pub fn step_up(s: &[Second]) -> Option<Rise> {
    let r: Vec<f64> = s.iter().map(|x| x.ios / x.dur_s).collect();
    let k = best_split(&r)?;
    let (lo, hi) = (mean(&r[..k]), mean(&r[k..]));
    let mid = (hi + lo) / 2.0;
    if hi <= 0.0
        || lo > DROP_SHARE * hi
        || r[..k].iter().any(|&x| x > mid)
        || r[k..].iter().any(|&x| x < mid)
    {
        return None;
    }
    let rate = |xs: &[Second], v: fn(&Second) -> f64| {
        xs.iter().map(v).sum::<f64>() / xs.iter().map(|x| x.dur_s).sum::<f64>()
    };
    let (lo, hi) = (rate(&s[..k - 1], |x| x.ios), rate(&s[k + 1..], |x| x.ios));
    let lo_bps = rate(&s[..k - 1], |x| x.bytes);
    if hi <= lo {
        return None;
    }
    let (mut at_s, mut moved, mut t) = (0.0, 0.0, 0.0);
    for (i, x) in s.iter().enumerate() {
        if i + 1 < k {
            at_s = t + x.dur_s;
            moved += x.bytes;
        } else if i <= k {
            // beside the change: its share of the second at the lower rate
            let f = ((hi - r[i]) / (hi - lo)).clamp(0.0, 1.0) * x.dur_s;
            if f > 0.0 {
                at_s = t + f;
                moved += f * lo_bps;
            }
        }
        t += x.dur_s;
    }
    Some(Rise {
        at_s,
        before_iops: lo,
        after_iops: hi,
        moved,
    })
}

/// `first_touch`: reads that rose by at least 1 / [`DROP_SHARE`] and stayed there; the volume
/// read before the rise against the set's size says whether it was the first pass over it.
pub(super) fn first_touch(f: &Facts) -> Option<Hit> {
    if f.null {
        return None;
    }
    let s = seconds(&f.cell.timeseries);
    let (moved, written): (f64, f64) = s
        .iter()
        .fold((0.0, 0.0), |(m, w), x| (m + x.bytes, w + x.written));
    if moved <= 0.0 || written > READS_WRITE_SHARE * moved {
        return None;
    }
    let u = step_up(&s)?;
    let set = f.cell.job.fileset.total_bytes as f64;
    let share = if set > 0.0 { u.moved / set } else { 0.0 };
    let (confidence, what) = if (ONE_PASS.0..=ONE_PASS.1).contains(&share) {
        (
            Confidence::Medium,
            "about one pass over the set: the first read of each region was slower than the ones after",
        )
    } else {
        (
            Confidence::Low,
            "not one pass over the set: a cache in front of the device warming up, or regions read for the first time",
        )
    };
    hit(
        confidence,
        format!(
            "reads rose from {} to {} IOPS at {:.1} s and stayed there, after {} read ({:.0} % of the {} set), {what}: a volume restored from a snapshot that fetches each block on its first read (EBS, Persistent Disk), a thin or deduplicating device mapping it, or a cache warming; the later level is what a database gets once its data was read, the earlier what a cold start gets",
            fmt_n(u.before_iops),
            fmt_n(u.after_iops),
            u.at_s,
            human_bytes(u.moved),
            100.0 * share,
            human_bytes(set),
        ),
        format!(
            "{} --random-map bitmap  # each block once per pass: compare the first pass with the next",
            f.run_cmd
        ),
    )
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

    /// Reads at 500 IOPS of 16 KiB for 4.5 s (36 MiB), then 20,000: a rise found there, with the
    /// volume before it within 5 %; a flat series and a drop give none.
    #[test]
    fn a_rise_that_stays_is_found_where_it_was() {
        let s = series(10, 500.0, 20000.0, 4.5, 16384.0, false);
        let u = step_up(&s).expect("a rise");
        let want = 500.0 * 4.5 * 16384.0;
        assert!((u.moved - want).abs() <= 0.05 * want, "{u:?}");
        assert!((u.at_s - 4.5).abs() < 0.1, "{u:?}");
        assert!(step_up(&series(10, 500.0, 500.0, 4.5, 16384.0, false)).is_none());
        assert!(step_up(&series(10, 2000.0, 400.0, 4.5, 16384.0, false)).is_none());
        assert!(step_down(&s).is_none());
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
