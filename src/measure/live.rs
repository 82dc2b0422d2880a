//! Periodic report lines (`--report-interval`): what each thread publishes while it runs, and
//! the reporter that sums the threads once per interval.
//!
//! A thread publishes cumulative counts and a cumulative log-linear latency histogram (the
//! [`interval_bucket`] scheme of the per-second series) in atomics that only it writes: a relaxed
//! load and a relaxed store each, no read-modify-write, no lock, no allocation (the arrays are
//! allocated once before the phase, and only when the flag is given). The reporter reads every
//! thread's arrays, subtracts its previous snapshot and takes the interval's rates and p99 from
//! the differences.

use crate::measure::hist::{INTERVAL_BUCKETS, bucket_percentile, interval_bucket};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use super::wake::StopSignal;

/// Kinds of operations a thread publishes (read, write, fsync, trim; `iolab db` uses the first).
pub const KINDS: usize = crate::model::run::OP_KINDS;

/// Cumulative counters one thread publishes for the report lines; only that thread writes them.
pub struct LiveCounters {
    ops: [AtomicU64; KINDS],
    /// Bytes of an I/O, statements of a transaction.
    amount: [AtomicU64; KINDS],
    /// KINDS × INTERVAL_BUCKETS latency bucket counts.
    lat: Box<[AtomicU64]>,
    /// The sum of the latencies in ns (`--metrics-listen`: a histogram's `_sum`).
    lat_sum_ns: [AtomicU64; KINDS],
    /// Operations that failed (`--metrics-listen`: `iolab_errors_total`).
    errors: AtomicU64,
}

impl std::fmt::Debug for LiveCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCounters")
            .field("ops", &self.ops)
            .finish_non_exhaustive()
    }
}

impl Default for LiveCounters {
    fn default() -> Self {
        LiveCounters {
            ops: Default::default(),
            amount: Default::default(),
            lat: (0..KINDS * INTERVAL_BUCKETS)
                .map(|_| AtomicU64::new(0))
                .collect(),
            lat_sum_ns: Default::default(),
            errors: AtomicU64::new(0),
        }
    }
}

/// Adds `n` to a counter only the calling thread writes: a relaxed load and store (no
/// read-modify-write; a reader sees the old or the new value, never a torn one).
#[inline]
fn bump(a: &AtomicU64, n: u64) {
    a.store(a.load(Relaxed).wrapping_add(n), Relaxed);
}

impl LiveCounters {
    /// Publishes one completed operation of `kind` (0..KINDS). Only the owning thread calls it.
    #[inline]
    pub fn publish(&self, kind: usize, amount: u64, lat_ns: u64) {
        bump(&self.ops[kind], 1);
        bump(&self.amount[kind], amount);
        bump(&self.lat_sum_ns[kind], lat_ns);
        bump(
            &self.lat[kind * INTERVAL_BUCKETS + interval_bucket(lat_ns)],
            1,
        );
    }

    /// Publishes one failed operation (an error the run's `errors` count). Only the owning
    /// thread calls it.
    #[inline]
    pub fn error(&self) {
        bump(&self.errors, 1);
    }

    /// The failed operations of every thread of `threads` now.
    pub fn errors<'a>(threads: impl IntoIterator<Item = &'a LiveCounters>) -> u64 {
        threads.into_iter().map(|c| c.errors.load(Relaxed)).sum()
    }

    /// Reads, writes and trims completed so far and their bytes, fsyncs left out (fio's
    /// `io_blocks` and `io_bytes`: what its steady state samples).
    pub fn moved(&self) -> (u64, u64) {
        let kinds = [
            crate::model::run::OpKind::Read,
            crate::model::run::OpKind::Write,
            crate::model::run::OpKind::Trim,
        ];
        kinds.iter().fold((0, 0), |(n, b), &k| {
            let k = k as usize;
            (
                n + self.ops[k].load(Relaxed),
                b + self.amount[k].load(Relaxed),
            )
        })
    }

    /// Operations of every kind completed so far (read by another thread: a distributed run's
    /// watch that I/O still completes).
    pub fn ops_total(&self) -> u64 {
        self.ops.iter().map(|o| o.load(Relaxed)).sum()
    }
}

/// Cumulative totals of one kind of operation over a group of threads, read at one instant
/// (`--metrics-listen`): counts, amount, the latency sum and bucket counts.
pub struct Totals {
    pub ops: u64,
    pub amount: u64,
    pub lat_sum_ns: u64,
    /// INTERVAL_BUCKETS bucket counts (index: [`interval_bucket`]).
    pub lat: Vec<u64>,
}

impl Totals {
    /// Sums `kind` of every thread of `threads` now.
    pub fn take<'a>(threads: impl IntoIterator<Item = &'a LiveCounters>, kind: usize) -> Totals {
        let mut t = Totals {
            ops: 0,
            amount: 0,
            lat_sum_ns: 0,
            lat: vec![0; INTERVAL_BUCKETS],
        };
        for c in threads {
            t.ops += c.ops[kind].load(Relaxed);
            t.amount += c.amount[kind].load(Relaxed);
            t.lat_sum_ns += c.lat_sum_ns[kind].load(Relaxed);
            let own = &c.lat[kind * INTERVAL_BUCKETS..(kind + 1) * INTERVAL_BUCKETS];
            for (sum, b) in t.lat.iter_mut().zip(own) {
                *sum += b.load(Relaxed);
            }
        }
        t
    }
}

/// The sum of every thread's counters at one instant.
pub struct Snapshot {
    pub at: Instant,
    ops: [u64; KINDS],
    amount: [u64; KINDS],
    lat: Vec<u64>,
}

impl Snapshot {
    pub fn take<'a>(threads: impl IntoIterator<Item = &'a LiveCounters>, at: Instant) -> Self {
        let mut s = Snapshot {
            at,
            ops: [0; KINDS],
            amount: [0; KINDS],
            lat: vec![0; KINDS * INTERVAL_BUCKETS],
        };
        for t in threads {
            for k in 0..KINDS {
                s.ops[k] += t.ops[k].load(Relaxed);
                s.amount[k] += t.amount[k].load(Relaxed);
            }
            for (sum, c) in s.lat.iter_mut().zip(t.lat.iter()) {
                *sum += c.load(Relaxed);
            }
        }
        s
    }

    /// What happened between `prev` and this snapshot.
    pub fn since(&self, prev: &Snapshot) -> Delta {
        Delta {
            secs: self
                .at
                .saturating_duration_since(prev.at)
                .as_secs_f64()
                .max(1e-9),
            ops: std::array::from_fn(|k| self.ops[k].saturating_sub(prev.ops[k])),
            amount: std::array::from_fn(|k| self.amount[k].saturating_sub(prev.amount[k])),
            lat: self
                .lat
                .iter()
                .zip(&prev.lat)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
        }
    }
}

/// One interval: counts and latency buckets of the operations completed in it.
pub struct Delta {
    /// Its real length.
    pub secs: f64,
    pub ops: [u64; KINDS],
    pub amount: [u64; KINDS],
    lat: Vec<u64>,
}

impl Delta {
    /// Operations of `kind` per second.
    pub fn rate(&self, kind: usize) -> f64 {
        self.ops[kind] as f64 / self.secs
    }
    /// Amount (bytes, statements) of `kind` per second.
    pub fn amount_rate(&self, kind: usize) -> f64 {
        self.amount[kind] as f64 / self.secs
    }
    /// The latency percentile `p` (0..=100) of `kind` in ns (within 3.1 %); None without
    /// operations.
    pub fn percentile(&self, kind: usize, p: f64) -> Option<u64> {
        bucket_percentile(
            &self.lat[kind * INTERVAL_BUCKETS..(kind + 1) * INTERVAL_BUCKETS],
            p,
        )
    }
    fn total_ops(&self) -> u64 {
        self.ops.iter().sum()
    }
}

/// When a line's interval ended, in seconds: during the ramp from the start of the ramp, else
/// from the start of the measured window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stamp {
    Ramp(f64),
    Measured(f64),
}

impl std::fmt::Display for Stamp {
    /// `[ 2s ]`, `[ 2.5s ]`, `[ ramp 1s ]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = |t: f64| {
            let s = format!("{t:.2}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            format!("{s}s")
        };
        match *self {
            Stamp::Ramp(t) => write!(f, "[ ramp {} ]", secs(t)),
            Stamp::Measured(t) => write!(f, "[ {} ]", secs(t)),
        }
    }
}

/// A latency in ms with three significant digits (`0.452`, `12.3`, `0.00213`); `-` for none.
pub fn fmt_ms(ns: Option<u64>) -> String {
    match ns {
        None => "-".into(),
        Some(ns) => {
            let ms = ns as f64 / 1e6;
            let decimals = if ms <= 0.0 {
                3
            } else {
                (2 - ms.log10().floor() as i32).clamp(0, 6) as usize
            };
            format!("{ms:.decimals$}")
        }
    }
}

/// Writes one report line to stderr. A stderr that was closed (`| head`) does not stop the
/// measurement (eprintln! would panic).
pub fn print_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Calls `line` once per `every` with what the threads completed in that interval, until
/// `done` is set (the threads finished and published everything); it sleeps on `done` between
/// lines and wakes at once when it is set (no polling). Intervals are aligned to the ramp
/// start `start` while before `measured`, then to `measured`; the last ramp line ends at
/// `measured`. A partial interval (the last of the ramp, the last of the run) is a line of its
/// own, rated over its real length, when it lasted at least 0.2 s (or half an interval, if
/// shorter); the last of the run also only when it holds operations.
pub fn report_every(
    threads: &[&LiveCounters],
    every: Duration,
    start: Instant,
    measured: Instant,
    done: &StopSignal,
    line: &mut dyn FnMut(Stamp, &Delta),
) {
    report_every_groups(
        &[threads.to_vec()],
        every,
        start,
        measured,
        done,
        &mut |stamp, d| line(stamp, &d[0]),
    )
}

/// [`report_every`] for several groups of threads (the roles of a phase) on the same ticks:
/// `line` gets one [`Delta`] per group, in their order. The last partial interval is reported
/// when any group completed operations in it.
pub fn report_every_groups(
    groups: &[Vec<&LiveCounters>],
    every: Duration,
    start: Instant,
    measured: Instant,
    done: &StopSignal,
    line: &mut dyn FnMut(Stamp, &[Delta]),
) {
    let take = |at: Instant| -> Vec<Snapshot> {
        groups
            .iter()
            .map(|g| Snapshot::take(g.iter().copied(), at))
            .collect()
    };
    let since = |a: &[Snapshot], b: &[Snapshot]| -> Vec<Delta> {
        a.iter().zip(b).map(|(a, b)| a.since(b)).collect()
    };
    let mut prev = take(start.min(Instant::now()));
    let prev_at = |p: &[Snapshot]| p[0].at;
    let mut in_ramp = measured > start;
    let mut k = 1u64;
    let shortest = every.mul_f64(0.5).min(Duration::from_millis(200));
    loop {
        let base = if in_ramp { start } else { measured };
        let mut tick = base + every.mul_f64(k as f64);
        if in_ramp && tick >= measured {
            tick = measured;
        }
        let finished = done.wait_until(tick);
        let now = Instant::now();
        if now >= tick {
            let snap = take(now);
            if in_ramp && tick == measured {
                // the measured window begins: the rest of the ramp is a line when it is not too
                // short, and the lines start again from the window
                if now.saturating_duration_since(prev_at(&prev)) >= shortest {
                    let t = measured.saturating_duration_since(start).as_secs_f64();
                    line(Stamp::Ramp(t), &since(&snap, &prev));
                }
                in_ramp = false;
                k = 1;
            } else {
                // a late wake-up covers every tick that passed, in one line
                let passed = (now.saturating_duration_since(base).as_secs_f64()
                    / every.as_secs_f64())
                .floor()
                .max(k as f64) as u64;
                let t = every.as_secs_f64() * passed as f64;
                let stamp = if in_ramp {
                    Stamp::Ramp(t)
                } else {
                    Stamp::Measured(t)
                };
                line(stamp, &since(&snap, &prev));
                k = passed + 1;
            }
            prev = snap;
            if !finished {
                continue;
            }
        }
        if finished {
            let snap = take(now);
            let d = since(&snap, &prev);
            if d.iter().map(Delta::total_ops).sum::<u64>() > 0
                && prev_at(&snap).saturating_duration_since(prev_at(&prev)) >= shortest
            {
                let base = if in_ramp { start } else { measured };
                let t = now.saturating_duration_since(base).as_secs_f64();
                line(
                    if in_ramp {
                        Stamp::Ramp(t)
                    } else {
                        Stamp::Measured(t)
                    },
                    &d,
                );
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::hist::interval_bucket_value;

    #[test]
    fn p99_comes_from_the_bucket_differences_of_the_interval_only() {
        let a = LiveCounters::default();
        let b = LiveCounters::default();
        let t0 = Instant::now();
        // before the interval: slow writes and reads that must not count in it
        for _ in 0..1000 {
            a.publish(0, 4096, 50_000_000);
            b.publish(1, 4096, 80_000_000);
        }
        let s0 = Snapshot::take([&a, &b], t0);
        // the interval: 990 reads at 100 µs and 10 at 2 ms over two threads; 5 fsyncs at 3 ms
        for i in 0..1000 {
            let t = if i % 2 == 0 { &a } else { &b };
            t.publish(0, 16384, if i < 10 { 2_000_000 } else { 100_000 });
        }
        for _ in 0..5 {
            a.publish(2, 0, 3_000_000);
        }
        let s1 = Snapshot::take([&a, &b], t0 + Duration::from_secs(2));
        let d = s1.since(&s0);
        assert_eq!(d.secs, 2.0);
        assert_eq!(d.ops, [1000, 0, 5, 0]);
        assert_eq!(d.rate(0), 500.0);
        assert_eq!(d.amount_rate(0), 16384.0 * 500.0);
        // rank 990 of 1000 is the last 100 µs read: p99 is 100 µs, p99.5 is 2 ms (within 3.1 %)
        let p99 = d.percentile(0, 99.0).unwrap();
        assert_eq!(p99, interval_bucket_value(interval_bucket(100_000)));
        assert!((p99 as f64 - 100_000.0).abs() / 100_000.0 <= 1.0 / 32.0);
        let p995 = d.percentile(0, 99.5).unwrap() as f64;
        assert!((p995 - 2e6).abs() / 2e6 <= 1.0 / 32.0, "{p995}");
        // the slow operations before the interval are not in it
        assert_eq!(d.percentile(1, 99.0), None);
        let f = d.percentile(2, 99.0).unwrap() as f64;
        assert!((f - 3e6).abs() / 3e6 <= 1.0 / 32.0);
    }

    #[test]
    fn stamps_and_latencies_format_for_reading_and_parsing() {
        assert_eq!(Stamp::Measured(2.0).to_string(), "[ 2s ]");
        assert_eq!(Stamp::Measured(2.5).to_string(), "[ 2.5s ]");
        assert_eq!(Stamp::Ramp(1.0).to_string(), "[ ramp 1s ]");
        assert_eq!(fmt_ms(Some(452_000)), "0.452");
        assert_eq!(fmt_ms(Some(12_345_678)), "12.3");
        assert_eq!(fmt_ms(Some(2_130)), "0.00213");
        assert_eq!(fmt_ms(Some(1_234_000_000)), "1234");
        assert_eq!(fmt_ms(None), "-");
    }

    #[test]
    fn the_reporter_gives_one_line_per_interval_and_the_rest_at_the_end() {
        let c = LiveCounters::default();
        let stop = StopSignal::new();
        let start = Instant::now();
        let mut lines = Vec::new();
        std::thread::scope(|s| {
            s.spawn(|| {
                // one operation per ms for 0.65 s
                while start.elapsed() < Duration::from_millis(650) {
                    c.publish(0, 1, 1000);
                    std::thread::sleep(Duration::from_millis(1));
                }
                stop.set();
            });
            report_every(
                &[&c],
                Duration::from_millis(200),
                start,
                start,
                &stop,
                &mut |st, d| lines.push((st, d.ops[0])),
            );
        });
        let stamps: Vec<String> = lines.iter().map(|l| l.0.to_string()).collect();
        assert_eq!(stamps, ["[ 0.2s ]", "[ 0.4s ]", "[ 0.6s ]"], "{lines:?}");
        // the last 50 ms are shorter than half an interval: not a line of their own
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines.iter().all(|l| l.1 > 0));
    }
}
