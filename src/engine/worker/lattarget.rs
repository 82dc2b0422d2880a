//! fio's queue-depth search (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`; its io_u.c `lat_target_*` and `queue_full`) as a per-thread state machine:
//! the thread starts at depth 1 and, at the end of each window, doubles its depth (bisects
//! towards the last failing depth once one failed) while the window's share of I/Os within the
//! target stays at or above the percentile, and halves back towards the last good depth when it
//! falls below (at 100 %, at once on the first late I/O). Once a window leaves the depth where
//! it was, the thread quiesces, restarts its counts and runs one more window at that depth, then
//! ends (unless `latency_run`). Pure: the worker loop feeds completions and the clock, and does
//! what each [`Step`] says. Nothing allocated.

use std::time::{Duration, Instant};

/// What the worker loop does after a completion or a window's check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing: go on at [`LatTarget::depth`].
    Go,
    /// The depth went down: wait for what is in flight before issuing more (fio's
    /// `io_u_quiesce`, against a storm of ramp-downs from the deeper queue).
    Quiesce,
    /// The search settled: wait for what is in flight, restart the thread's counts (fio's
    /// `reset_all_stats`) and run one more window at this depth.
    FinalRun,
    /// The final window at the settled depth is over: the thread ends (fio's `td->done`).
    Done,
    /// An I/O over the target at depth 1 (percentile 100): fio's `lat_fatal`, the thread ends
    /// with ETIMEDOUT.
    Fatal,
}

/// A thread's search.
#[derive(Debug, Clone)]
pub struct LatTarget {
    target_ns: u64,
    window: Duration,
    percentile: f64,
    keep_running: bool,
    iodepth: u32,
    qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    since: Instant,
    ios_at: u64,
    failed: u64,
    end_run: bool,
}

impl LatTarget {
    /// fio's `lat_target_init`: depth 1 between 1 and `iodepth`, the window from `now`.
    /// `target_ns` is `latency_target`, `window` `latency_window`, `percentile` 0–100,
    /// `keep_running` `latency_run`.
    pub fn new(
        target_ns: u64,
        window: Duration,
        percentile: f64,
        keep_running: bool,
        iodepth: u32,
        now: Instant,
    ) -> Self {
        LatTarget {
            target_ns,
            window,
            percentile,
            keep_running,
            iodepth: iodepth.max(1),
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            since: now,
            ios_at: 0,
            failed: 0,
            end_run: false,
        }
    }

    /// fio's `lat_target_reset` (its `reset_all_stats` at the end of `ramp_time`): the search
    /// starts over at depth 1, unless it is in its final window. `ios` the thread's completed
    /// I/Os so far.
    pub fn restart(&mut self, now: Instant, ios: u64) {
        if !self.end_run {
            *self = LatTarget::new(
                self.target_ns,
                self.window,
                self.percentile,
                self.keep_running,
                self.iodepth,
                now,
            );
            self.ios_at = ios;
        }
    }

    /// The most I/Os in flight now (fio's `latency_qd`).
    pub fn depth(&self) -> u32 {
        self.qd
    }

    /// Whether the search settled and the thread is in its final window.
    pub fn settled(&self) -> bool {
        self.end_run
    }

    /// One read, write or trim completed after `lat_ns` (fio's `account_io_completion`);
    /// `ios` the thread's completed I/Os, this one included.
    pub fn completed(&mut self, lat_ns: u64, now: Instant, ios: u64) -> Step {
        if lat_ns <= self.target_ns {
            return Step::Go;
        }
        if self.percentile == 100.0 {
            return self.failed(now, ios);
        }
        self.failed += 1;
        Step::Go
    }

    /// fio's `lat_target_check`, after each round of the worker loop (outside the ramp): at the
    /// window's end, the share of its I/Os within the target against the percentile.
    pub fn check(&mut self, now: Instant, ios: u64) -> Step {
        if now.saturating_duration_since(self.since) < self.window {
            return Step::Go;
        }
        let n = ios.saturating_sub(self.ios_at);
        // no I/O in the window: 0/0, not at or above the percentile, as fio's NaN
        let success = 100.0 * n.saturating_sub(self.failed) as f64 / n as f64;
        if success >= self.percentile {
            self.success(now, ios)
        } else {
            match self.failed(now, ios) {
                Step::Fatal => Step::Go,
                s => s,
            }
        }
    }

    /// fio's `__lat_target_failed`: at depth 1 there is nowhere to go (fatal); else the depth
    /// halves back towards the last good one.
    fn failed(&mut self, now: Instant, ios: u64) -> Step {
        if self.qd == 1 {
            return Step::Fatal;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.new_cycle(now, ios);
        Step::Quiesce
    }

    /// fio's `lat_target_success`.
    fn success(&mut self, now: Instant, ios: u64) -> Step {
        let was = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            // one below the failing depth: three good windows in a row try one deeper
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.iodepth {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        };
        self.qd = self.qd.min(self.iodepth);
        let mut step = Step::Go;
        if !self.keep_running && self.qd == was {
            if self.end_run {
                step = Step::Done;
            } else {
                self.end_run = true;
                step = Step::FinalRun;
            }
        }
        self.new_cycle(now, ios);
        step
    }

    /// fio's `lat_new_cycle`: a new window from now.
    fn new_cycle(&mut self, now: Instant, ios: u64) {
        self.since = now;
        self.ios_at = ios;
        self.failed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_secs(1);

    /// A device on which the thread's I/Os are late from `bad` in flight on: one window per
    /// step, 100 I/Os each, all late at or above `bad`. The depths the search takes, with
    /// what ended it.
    fn walk(iodepth: u32, bad: u32, percentile: f64, keep_running: bool) -> (Vec<u32>, Step) {
        let t0 = Instant::now();
        let mut lt = LatTarget::new(1000, W, percentile, keep_running, iodepth, t0);
        let (mut depths, mut ios) = (vec![lt.depth()], 0u64);
        for k in 1..60u32 {
            let now = t0 + W * k;
            let late = lt.depth() >= bad;
            let mut step = Step::Go;
            for _ in 0..100 {
                ios += 1;
                let s = lt.completed(if late { 5000 } else { 10 }, now, ios);
                if s != Step::Go {
                    step = s;
                    break;
                }
            }
            if step == Step::Go {
                step = lt.check(now + W, ios);
            }
            if matches!(step, Step::Done | Step::Fatal) {
                return (depths, step);
            }
            depths.push(lt.depth());
        }
        (depths, Step::Go)
    }

    /// fio's walk: doubling to the first failing depth, then bisecting: 1, 2, 4, 8 (late),
    /// 6 (late), 5; at 5 the next depth is 5 again: a final window, then done.
    #[test]
    fn doubles_then_bisects_to_the_deepest_good_depth() {
        let (d, end) = walk(8, 6, 100.0, false);
        assert_eq!(d, [1, 2, 4, 8, 6, 5, 5]);
        assert_eq!(end, Step::Done);
        // a percentile: the window's share decides, at its end
        let (d, end) = walk(8, 6, 99.0, false);
        assert_eq!(d, [1, 2, 4, 8, 6, 5, 5]);
        assert_eq!(end, Step::Done);
    }

    /// Every depth good: up to iodepth, which it then keeps (a final window and done).
    #[test]
    fn all_good_settles_at_iodepth() {
        let (d, end) = walk(128, u32::MAX, 99.9, false);
        assert_eq!(d, [1, 2, 4, 8, 16, 32, 64, 128, 128]);
        assert_eq!(end, Step::Done);
    }

    /// Late already at depth 1: fatal at 100 % (fio's lat_fatal); with a percentile the check
    /// stays at 1 and the search settles there (no ramp-down below 1).
    #[test]
    fn late_at_depth_one() {
        assert_eq!(walk(8, 1, 100.0, false), (vec![1], Step::Fatal));
        let (d, end) = walk(8, 1, 90.0, false);
        assert!(d.iter().all(|&q| q == 1), "{d:?}");
        assert_eq!(end, Step::Go, "never a good window: never done");
    }

    /// latency_run: the search goes on at the settled depth, three good windows one below the
    /// failing depth trying one deeper, as fio's stable count.
    #[test]
    fn latency_run_keeps_searching() {
        let (d, end) = walk(8, 6, 100.0, true);
        assert_eq!(end, Step::Go);
        assert_eq!(&d[..8], [1, 2, 4, 8, 6, 5, 5, 5]);
        assert!(
            d.contains(&6) && d[8..].iter().all(|&q| q == 5 || q == 6),
            "{d:?}"
        );
    }

    /// A window without I/O is a failed one (fio's 0/0); the window is not judged before its
    /// length.
    #[test]
    fn windows() {
        let t0 = Instant::now();
        let mut lt = LatTarget::new(1000, W, 99.0, false, 4, t0);
        assert_eq!(lt.check(t0 + W / 2, 10), Step::Go);
        assert_eq!(lt.depth(), 1);
        assert_eq!(lt.check(t0 + W, 10), Step::Go, "10 good of 10");
        assert_eq!(lt.depth(), 2);
        assert_eq!(
            lt.check(t0 + W * 2, 10),
            Step::Quiesce,
            "none in the window"
        );
        assert_eq!(lt.depth(), 1);
        lt.restart(t0 + W * 3, 10);
        assert_eq!((lt.depth(), lt.settled()), (1, false));
    }
}
