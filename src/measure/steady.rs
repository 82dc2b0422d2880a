//! Steady-state criteria over a series of per-interval rates, as pure functions: the window's
//! mean, largest deviation, range and least-squares slope; fio's criteria (`ss=iops|bw[_slope]`,
//! steadystate.c) over its rolling window ([`Window`], [`judge`]); and SNIA PTS's (the data
//! excursion within 20 % of the average and the best-fit line's excursion within 10 % over a
//! window of rounds, [`snia_steady`]). Nothing here samples or stops anything: `engine::steady`
//! feeds a [`Window`] once a second while a job runs.

use crate::model::steady::{Pts, Steady, SteadyMetric, SteadyState};

/// The mean of a series (0 for none).
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The largest distance of a value from the series' mean (fio's `max_deviation`).
pub fn max_deviation(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m).abs()).fold(0.0, f64::max)
}

/// The series' range, largest value less the smallest (SNIA's data excursion; 0 for none).
pub fn range(xs: &[f64]) -> f64 {
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    if xs.is_empty() { 0.0 } else { hi - lo }
}

/// The least-squares slope of the series against its positions 0, 1, ... (per position), with
/// fio's formula: (Σxy − Σx·Σy/n) / (Σx² − (Σx)²/n), the x evenly spaced. NaN for fewer than
/// two values (no line fits one point), as fio's division by zero.
pub fn slope(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum_x = n * (n - 1.0) / 2.0;
    let sum_x_sq = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
    let sum_y: f64 = xs.iter().sum();
    let sum_xy: f64 = xs.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
    (sum_xy - sum_x * sum_y / n) / (sum_x_sq - sum_x * sum_x / n)
}

/// SNIA PTS's largest data excursion in a steady-state window: a share of the window's average.
pub const SNIA_MAX_RANGE_SHARE: f64 = 0.20;
/// SNIA PTS's largest excursion of the best-fit line over the window: a share of its average.
pub const SNIA_MAX_SLOPE_SHARE: f64 = 0.10;
/// SNIA PTS's measurement window: the last five rounds.
pub const SNIA_WINDOW_ROUNDS: usize = 5;

/// SNIA PTS's steady state over a window of rounds (each one round's figure, e.g. IOPS): the
/// range within [`SNIA_MAX_RANGE_SHARE`] of the average and the least-squares line's excursion
/// over the window (its slope × (rounds − 1)) within [`SNIA_MAX_SLOPE_SHARE`] of it, both
/// inclusive. False for fewer than two rounds or a zero average.
pub fn snia_steady(window: &[f64]) -> bool {
    pts_judge(window, &Pts::SNIA).attained
}

/// One PTS judgement of a window of rounds: its average, its data excursion and its best-fit
/// line's excursion (each a percent of the average) and whether both are within `p`'s limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PtsJudged {
    pub avg: f64,
    pub range_pct: f64,
    pub slope_pct: f64,
    pub attained: bool,
}

/// Judges a window of rounds by PTS's two criteria with `p`'s limits, both inclusive. Never
/// attained for fewer than two rounds or a zero average (percentages are then NaN or infinite).
pub fn pts_judge(window: &[f64], p: &Pts) -> PtsJudged {
    let avg = mean(window);
    let n = window.len();
    let excursion = if n < 2 {
        f64::NAN
    } else {
        slope(window).abs() * (n - 1) as f64
    };
    let range_pct = 100.0 * range(window) / avg;
    let slope_pct = 100.0 * excursion / avg;
    // compared as shares, not percents, so that 20 % of 100 is exactly 20 (100 * 0.2 is not)
    let attained = n >= 2
        && avg > 0.0
        && range(window) <= p.range_pct / 100.0 * avg
        && excursion <= p.slope_pct / 100.0 * avg;
    PtsJudged {
        avg,
        range_pct,
        slope_pct,
        attained,
    }
}

/// One second of a mode: its length (s), I/Os, bytes moved, bytes written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    pub dur_s: f64,
    pub ios: f64,
    pub bytes: f64,
    pub written: f64,
}

/// The seconds of a time series (reads, writes and trims; whole seconds only, the last short
/// one left out).
pub fn seconds(ts: &[crate::model::run::TsPoint]) -> Vec<Second> {
    ts.iter()
        .filter(|p| p.dur_s >= 0.99)
        .map(|p| {
            let ops = [&p.read, &p.write, &p.trim];
            let sum = |f: fn(&crate::model::run::TsOp) -> f64| -> f64 {
                ops.iter().filter_map(|o| o.as_ref().map(f)).sum()
            };
            Second {
                dur_s: p.dur_s,
                ios: sum(|o| o.ops as f64),
                bytes: sum(|o| o.bytes_per_sec) * p.dur_s,
                written: p.write.as_ref().map_or(0.0, |o| o.bytes_per_sec * p.dur_s),
            }
        })
        .collect()
}

/// fio's judgement of one full window (steadystate.c `steadystate_slope`/`_deviation`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    pub criterion: f64,
    pub max_deviation: f64,
    pub slope: f64,
    pub attained: bool,
}

/// Judges a full window of the criterion's samples (oldest first) as fio does: a deviation
/// criterion is the largest deviation from the mean (in percent of the mean with `pct`) and
/// holds below the limit; a slope criterion is the slope (in percent of the mean, the mean a
/// whole number as fio's integer division makes it) and holds when its magnitude is below it.
/// A zero mean makes a percentage NaN or infinite: never attained, as fio's.
pub fn judge(spec: &Steady, window: &[u64]) -> Judged {
    let ys: Vec<f64> = window.iter().map(|&y| y as f64).collect();
    let n = window.len().max(1) as u64;
    if spec.slope {
        let s = slope(&ys);
        let whole_mean = (window.iter().sum::<u64>() / n) as f64;
        let criterion = if spec.pct { 100.0 * s / whole_mean } else { s };
        Judged {
            criterion,
            max_deviation: 0.0,
            slope: s,
            attained: criterion.abs() < spec.limit,
        }
    } else {
        let d = max_deviation(&ys);
        let criterion = if spec.pct { 100.0 * d / mean(&ys) } else { d };
        Judged {
            criterion,
            max_deviation: d,
            slope: 0.0,
            attained: criterion < spec.limit,
        }
    }
}

/// fio's rolling window of one judged unit: the last `window_s` samples of I/Os and bytes per
/// second, judged on each new sample once full, until the criterion holds.
#[derive(Debug, Clone)]
pub struct Window {
    spec: Steady,
    iops: Vec<u64>,
    bw: Vec<u64>,
    last: Option<Judged>,
    last_pts: Option<PtsJudged>,
    attained_at_s: Option<f64>,
    all_iops: Vec<u64>,
    all_bw: Vec<u64>,
}

impl Window {
    pub fn new(spec: &Steady) -> Self {
        let n = spec.window_s as usize;
        Window {
            spec: spec.clone(),
            iops: Vec::with_capacity(n),
            bw: Vec::with_capacity(n),
            last: None,
            last_pts: None,
            attained_at_s: None,
            all_iops: Vec::new(),
            all_bw: Vec::new(),
        }
    }

    /// Whether the criterion held (no sample is taken after that).
    pub fn attained(&self) -> bool {
        self.attained_at_s.is_some()
    }

    /// Adds one second's sample (`at_s`: seconds since the job's start); true when the window
    /// is full and the criterion now holds.
    pub fn push(&mut self, iops: u64, bw_bytes_per_sec: u64, at_s: f64) -> bool {
        if self.attained() {
            return true;
        }
        let n = self.spec.window_s as usize;
        if n == 0 {
            return false;
        }
        if self.iops.len() == n {
            self.iops.remove(0);
            self.bw.remove(0);
        }
        self.iops.push(iops);
        self.bw.push(bw_bytes_per_sec);
        self.all_iops.push(iops);
        self.all_bw.push(bw_bytes_per_sec);
        if self.iops.len() < n {
            return false;
        }
        let series = match self.spec.metric {
            SteadyMetric::Iops => &self.iops,
            SteadyMetric::Bw => &self.bw,
        };
        let attained = match &self.spec.pts {
            Some(p) => {
                let ys: Vec<f64> = series.iter().map(|&y| y as f64).collect();
                let j = pts_judge(&ys, p);
                self.last_pts = Some(j);
                j.attained
            }
            None => {
                let j = judge(&self.spec, series);
                self.last = Some(j);
                j.attained
            }
        };
        if attained {
            self.attained_at_s = Some(at_s);
        }
        attained
    }

    /// What the unit found: its last judgement and the window, oldest first, zeros after the
    /// last sample when fewer than the window were taken (fio's JSON `data`).
    pub fn state(&self) -> SteadyState {
        let n = self.spec.window_s as usize;
        let pad = |v: &[u64]| {
            let mut w = v.to_vec();
            w.resize(n.max(v.len()), 0);
            w
        };
        let j = self.last.unwrap_or(Judged {
            criterion: 0.0,
            max_deviation: 0.0,
            slope: 0.0,
            attained: false,
        });
        SteadyState {
            attained: self.attained(),
            attained_at_s: self.attained_at_s,
            criterion: j.criterion,
            max_deviation: j.max_deviation,
            slope: j.slope,
            iops: pad(&self.iops),
            bw_bytes_per_sec: pad(&self.bw),
            rounds_iops: self.all_iops.clone(),
            rounds_bw_bytes_per_sec: self.all_bw.clone(),
            range_pct: self.last_pts.map(|j| j.range_pct),
            slope_pct: self.last_pts.map(|j| j.slope_pct),
            window_avg: self.last_pts.map(|j| j.avg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(metric: SteadyMetric, slope: bool, limit: f64, pct: bool, n: u64) -> Steady {
        Steady {
            metric,
            slope,
            limit,
            pct,
            window_s: n,
            ramp_s: 0.0,
            group: None,
            pts: None,
            round_s: 1.0,
        }
    }

    /// PTS's boundaries, decided as the specification words them: a range of 19.9 % of the
    /// average holds and 20.1 % does not; a best-fit excursion of 9.9 % holds and 10.1 % does
    /// not (each series built so that only the one figure is near its limit).
    #[test]
    fn pts_criteria_at_their_boundaries() {
        let p = Pts::SNIA;
        // symmetric about the middle round, so the best-fit line is level: average 100, range
        // as given
        let flat = |r: f64| {
            let h = r / 2.0;
            [100.0 + h, 100.0 - h, 100.0, 100.0 - h, 100.0 + h]
        };
        let j = pts_judge(&flat(19.9), &p);
        assert!(j.attained && (j.range_pct - 19.9).abs() < 1e-9, "{j:?}");
        assert!(j.slope_pct.abs() < 1e-9, "{j:?}");
        assert!(!pts_judge(&flat(20.1), &p).attained);
        assert!(pts_judge(&flat(20.0), &p).attained, "inclusive");
        // a straight line through average 100: excursion e spread over 4 steps
        let line = |e: f64| -> Vec<f64> {
            (0..5)
                .map(|i| 100.0 - e / 2.0 + e * i as f64 / 4.0)
                .collect()
        };
        let j = pts_judge(&line(9.9), &p);
        assert!(j.attained && (j.slope_pct - 9.9).abs() < 1e-9, "{j:?}");
        assert!(
            (j.range_pct - 9.9).abs() < 1e-9,
            "a line's range is its excursion"
        );
        let j = pts_judge(&line(10.1), &p);
        assert!(
            !j.attained && j.range_pct < 20.0,
            "only the slope fails: {j:?}"
        );
        // falling as well as rising
        let down: Vec<f64> = line(10.1).into_iter().rev().collect();
        assert!(!pts_judge(&down, &p).attained);
        assert!(!pts_judge(&[100.0], &p).attained, "one round is no window");
        assert!(!pts_judge(&[0.0; 5], &p).attained, "nothing moved");
        assert!(snia_steady(&line(9.9)) && !snia_steady(&line(10.1)));
    }

    /// A PTS window rolls over rounds and keeps every round; it holds on the first full window
    /// that meets both criteria, and records that window's figures.
    #[test]
    fn a_pts_window_keeps_every_round() {
        let mut s = spec(SteadyMetric::Iops, false, 0.0, false, 5);
        s.pts = Some(Pts::SNIA);
        s.round_s = 2.0;
        let mut w = Window::new(&s);
        // a falling start (not steady), then flat
        let rounds = [400, 300, 200, 150, 110, 100, 102, 98, 101, 99];
        let mut at = None;
        for (i, r) in rounds.iter().enumerate() {
            if w.push(*r, r * 4096, 2.0 * (i + 1) as f64) {
                at = Some(i);
                break;
            }
        }
        // window 110,100,102,98,101: range 12 % of 102.2, slope line within 10 %: round 9
        assert_eq!(at, Some(8), "{:?}", w.state());
        let st = w.state();
        assert_eq!(st.rounds_iops, rounds[..9]);
        assert_eq!(st.iops, [110, 100, 102, 98, 101]);
        assert_eq!(st.attained_at_s, Some(18.0));
        assert!((st.window_avg.unwrap() - 102.2).abs() < 1e-9);
        assert!(st.range_pct.unwrap() < 20.0 && st.slope_pct.unwrap() < 10.0);
    }

    #[test]
    fn slope_is_the_least_squares_line() {
        assert_eq!(slope(&[1.0, 2.0, 3.0, 4.0]), 1.0);
        assert_eq!(slope(&[5.0, 5.0, 5.0]), 0.0);
        assert!((slope(&[3.0, 1.0, 2.0]) - (-0.5)).abs() < 1e-12);
        assert!(slope(&[7.0]).is_nan(), "no line through one point");
    }

    #[test]
    fn deviation_and_range() {
        assert_eq!(max_deviation(&[90.0, 100.0, 110.0]), 10.0);
        assert_eq!(range(&[90.0, 100.0, 115.0]), 25.0);
        assert_eq!(range(&[]), 0.0);
        assert_eq!(mean(&[]), 0.0);
    }

    /// fio's own figures (a null job at rate_iops=1000, `ss=iops:5%`, `ss_dur=4`, fio 3.33):
    /// iops [1001, 1001, 1000, 1001], max_deviation 0.75, criterion 0.074944 %.
    #[test]
    fn deviation_criterion_as_fio_printed_it() {
        let s = spec(SteadyMetric::Iops, false, 5.0, true, 4);
        let j = judge(&s, &[1001, 1001, 1000, 1001]);
        assert_eq!(j.max_deviation, 0.75);
        assert_eq!(format!("{:.6}", j.criterion as f32), "0.074944");
        assert!(j.attained);
        assert_eq!(j.slope, 0.0);
    }

    /// fio's own figures (two clones of 500 IOPS with group_reporting, `iops_slope:2%`,
    /// `ss_dur=3`): iops [1001, 999, 1000], slope -0.5, criterion -0.05 %.
    #[test]
    fn slope_criterion_as_fio_printed_it() {
        let s = spec(SteadyMetric::Iops, true, 2.0, true, 3);
        let j = judge(&s, &[1001, 999, 1000]);
        assert_eq!(j.slope, -0.5);
        assert!((j.criterion - -0.05).abs() < 1e-12);
        assert!(j.attained);
    }

    /// The limit is strict, as fio's `<`: a deviation of exactly the limit does not hold; a
    /// negative slope counts by its magnitude.
    #[test]
    fn limits_are_strict_and_slopes_count_both_ways() {
        let dev = spec(SteadyMetric::Bw, false, 10.0, false, 3);
        assert!(
            !judge(&dev, &[90, 100, 110]).attained,
            "deviation 10, limit 10"
        );
        assert!(judge(&dev, &[91, 100, 109]).attained);
        let up = spec(SteadyMetric::Iops, true, 1.0, false, 3);
        assert!(!judge(&up, &[1, 2, 3]).attained, "slope 1, limit 1");
        assert!(!judge(&up, &[3, 2, 1]).attained, "slope -1");
        assert!(judge(&up, &[3, 2, 2]).attained, "slope -0.5");
        // a percentage of a zero mean is never attained
        let pct = spec(SteadyMetric::Iops, false, 10.0, true, 2);
        assert!(!judge(&pct, &[0, 0]).attained);
        let pct = spec(SteadyMetric::Iops, true, 10.0, true, 2);
        assert!(!judge(&pct, &[0, 0]).attained);
    }

    /// The slope's percentage is of the mean as a whole number (fio's integer division).
    #[test]
    fn slope_percentage_of_a_whole_mean() {
        let s = spec(SteadyMetric::Iops, true, 100.0, true, 2);
        // mean 1.5 → 1: slope 1 is 100 %, not 66.7 %
        assert_eq!(judge(&s, &[1, 2]).criterion, 100.0);
    }

    #[test]
    fn the_window_rolls_and_is_judged_once_full() {
        let s = spec(SteadyMetric::Iops, false, 5.0, true, 3);
        let mut w = Window::new(&s);
        assert!(!w.push(10, 40, 1.0));
        assert!(!w.push(100, 400, 2.0));
        let st = w.state();
        assert_eq!(st.iops, [10, 100, 0], "padded with zeros, as fio's");
        assert_eq!(st.criterion, 0.0, "not judged before the window is full");
        assert!(!w.push(100, 400, 3.0), "10 is far from the mean (85 %)");
        assert!(w.push(104, 416, 4.0), "deviation 2.7 of 101.3: 2.6 %");
        let st = w.state();
        assert!(st.attained);
        assert_eq!(st.attained_at_s, Some(4.0));
        assert_eq!(st.iops, [100, 100, 104]);
        assert_eq!(st.bw_bytes_per_sec, [400, 400, 416]);
        assert_eq!(st.means(), (101, 405));
        // nothing is taken after the criterion held
        assert!(w.push(1, 1, 6.0));
        assert_eq!(w.state().iops, [100, 100, 104]);
    }

    #[test]
    fn snia_window_boundaries() {
        // range 20 % of the average, a flat line: steady (inclusive)
        assert!(snia_steady(&[90.0, 110.0, 100.0, 100.0, 100.0]));
        // range just over 20 %
        assert!(!snia_steady(&[89.0, 111.0, 100.0, 100.0, 100.0]));
        // a rising line: slope 2.5 per round, 10 over the window of average 100: steady
        assert!(snia_steady(&[95.0, 97.5, 100.0, 102.5, 105.0]));
        // slope 3 per round: 12 over the window
        assert!(!snia_steady(&[94.0, 97.0, 100.0, 103.0, 106.0]));
        assert!(!snia_steady(&[100.0]));
        assert!(!snia_steady(&[0.0, 0.0, 0.0]));
        assert_eq!(SNIA_WINDOW_ROUNDS, 5);
    }
}
