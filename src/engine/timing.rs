//! fio's options of when a thread issues I/O, in the worker loops (`model::timing::Timing`):
//! think time, minimum rates, flows, and the phase's end when an `exitall` job ends.
//!
//! Everything here is per thread and made before the phase, except a flow's two counters,
//! which the threads of its jobs share (relaxed atomics, no lock). A pause sleeps on the clock
//! (in slices of at most [`SLICE`], so that a stop, a phase's end or the deadline ends it);
//! only `thinktime_spin` spins, as fio's.

use super::ops::{FlowShared, Shared};
use super::worker::lattarget::{LatTarget, Step};
use crate::measure::stats::OpKind;
use crate::model::timing::Timing;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// The longest single sleep of a pause: a stop or the deadline is seen within it.
const SLICE: Duration = Duration::from_millis(50);

/// The pause of a thread ahead of its flow share with `flow_sleep=0` (fio spins on the check;
/// iolab sleeps this long instead, so the CPU stays free for the storage).
const FLOW_PAUSE: Duration = Duration::from_micros(50);

/// fio's minimum rate check waits this long after the thread's start before its first cycle.
const RATE_SETTLE: Duration = Duration::from_secs(2);

/// The flows of a phase, one per `flow_id` its jobs name, each with the weights of all their
/// threads added before any starts.
pub fn phase_flows<'j>(jobs: impl Iterator<Item = &'j crate::model::job::Job>) -> Vec<FlowShared> {
    let mut flows: Vec<FlowShared> = Vec::new();
    for j in jobs {
        if let Some(f) = j.timing.flow {
            if !flows.iter().any(|x| x.id == f.id) {
                flows.push(FlowShared::new(f.id));
            }
            let x = flows.iter().find(|x| x.id == f.id).expect("just added");
            x.total_weight
                .fetch_add(f.weight.saturating_mul(u64::from(j.threads)), Relaxed);
        }
    }
    flows
}

/// Sleeps until `until` in slices, ending early when the phase stops or ends; true when it
/// slept to the end.
fn sleep_until(sh: &Shared, until: Instant) -> bool {
    loop {
        if sh.ending() {
            return false;
        }
        let now = Instant::now();
        let Some(left) = until.checked_duration_since(now).filter(|d| !d.is_zero()) else {
            return true;
        };
        std::thread::sleep(left.min(SLICE));
    }
}

/// Why a thread ended before its limit (printed once, as fio logs it).
pub enum Ended {
    /// `rate_min`/`rate_iops_min` not met in a cycle: the message.
    RateMin(String),
}

/// The per-thread state of a job's [`Timing`].
pub struct Shaper<'a> {
    t: &'a Timing,
    /// Issued and completed reads and writes of this thread (think time counts one of them).
    pub issued: u64,
    pub completed: u64,
    think_blocks: u64,
    last_think_blocks: u64,
    last_think: Instant,
    /// Minimum rates: the next instant a check is due, and per direction the baseline of the
    /// current cycle (when, bytes, ops), as fio's `last_rate_check_*`.
    next_check: Instant,
    base: [Option<(Instant, u64, u64)>; 2],
    /// Per direction: bytes and ops completed (with a minimum rate).
    pub done: [(u64, u64); 2],
    flow: Option<&'a FlowShared>,
    flow_mine: u64,
    /// fio's `latency_target`: the thread's queue-depth search, and what its completions
    /// asked of the loop since it last looked (`Step::Go`: nothing).
    pub lat: Option<LatTarget>,
    pub lat_step: Step,
    /// fio's `max_latency`: a completion was over its direction's limit (ns).
    pub max_hit: Option<u64>,
}

impl<'a> Shaper<'a> {
    pub fn new(sh: &Shared<'a>) -> Self {
        let t = &sh.job.timing;
        let start = sh.start;
        Shaper {
            t,
            issued: 0,
            completed: 0,
            think_blocks: t.think_blocks.max(1),
            last_think_blocks: 0,
            last_think: start,
            next_check: start + RATE_SETTLE,
            base: [None, None],
            done: [(0, 0); 2],
            flow: sh.flow,
            flow_mine: 0,
            lat: t.lat_target.map(|l| {
                let window = Duration::from_micros(l.window_us);
                let depth = sh.job.iodepth.max(1);
                LatTarget::new(
                    l.target_ns,
                    window,
                    l.percentile,
                    l.keep_running,
                    depth,
                    start,
                )
            }),
            lat_step: Step::Go,
            max_hit: None,
        }
    }

    /// fio's `max_latency`: whether an I/O of `kind` that took `lat_ns` is over its
    /// direction's limit (then its limit, ns).
    #[inline]
    pub fn over_max(&self, kind: OpKind, lat_ns: u64) -> Option<u64> {
        let max = match kind {
            OpKind::Read => self.t.max_lat_ns[0],
            OpKind::Write => self.t.max_lat_ns[1],
            OpKind::Trim => self.t.max_lat_ns[2],
            OpKind::Fsync => 0,
        };
        (max > 0 && lat_ns > max).then_some(max)
    }

    /// Whether the job thinks at all.
    #[inline]
    pub fn thinks(&self) -> bool {
        self.t.think_us > 0
    }

    /// Whether a pause is due now (fio's `handle_thinktime`, after an I/O is issued): the
    /// blocks counted since the last pause reached `thinktime_blocks`, or `thinktime_iotime`
    /// of I/O passed.
    #[inline]
    pub fn think_due(&self, now: Instant) -> bool {
        if !self.thinks() {
            return false;
        }
        if self.t.think_iotime_us > 0 {
            let since = now.saturating_duration_since(self.last_think);
            if since >= Duration::from_micros(self.t.think_iotime_us + self.t.think_us) {
                return true;
            }
            if !self.t.think_blocks_given {
                return false;
            }
        }
        let b = if self.t.think_on_issue {
            self.issued
        } else {
            self.completed
        };
        b >= self.last_think_blocks.saturating_add(self.think_blocks)
    }

    /// The pause itself (nothing in flight by now): `thinktime_spin` busy, the rest of
    /// `thinktime` asleep, cut short by a stop, the phase's end or the deadline.
    pub fn think(&mut self, sh: &Shared) {
        let begin = Instant::now();
        let spin = Duration::from_micros(self.t.think_spin_us.min(self.t.think_us));
        while begin.elapsed() < spin {
            std::hint::spin_loop();
        }
        let mut until = begin + Duration::from_micros(self.t.think_us);
        if let Some(d) = sh.deadline {
            until = until.min(d);
        }
        sleep_until(sh, until);
        self.last_think_blocks = if self.t.think_on_issue {
            self.issued
        } else {
            self.completed
        };
        if self.t.think_iotime_us > 0 {
            self.last_think = begin;
        }
    }

    /// Counts a completed read (`dir` 0) or write (1) of `bytes` for the minimum rates.
    #[inline]
    pub fn count(&mut self, dir: usize, bytes: u64) {
        self.done[dir].0 += bytes;
        self.done[dir].1 += 1;
    }

    /// fio's `check_min_rate` (2 s after the thread's start, then every `ratecycle`): the
    /// message when a direction that moved data fell below its minimum in the last cycle.
    #[inline]
    pub fn rate_check(&mut self, now: Instant) -> Option<Ended> {
        if !self.t.checks_min_rate() || now < self.next_check {
            return None;
        }
        let cycle = Duration::from_millis(self.t.rate_cycle_ms.max(1));
        self.next_check = now + cycle.min(Duration::from_millis(100));
        for dir in 0..2 {
            let (bytes, ops) = self.done[dir];
            if bytes == 0 {
                continue;
            }
            if let Some((at, b0, o0)) = self.base[dir] {
                let spent = now.saturating_duration_since(at);
                if spent < cycle {
                    continue;
                }
                let ms = spent.as_millis().max(1) as u64;
                let name = ["read", "write"][dir];
                if self.t.rate_min_bps[dir] > 0 {
                    let got = (bytes - b0) * 1000 / ms;
                    if got < self.t.rate_min_bps[dir] {
                        return Some(Ended::RateMin(format!(
                            "rate_min={}B/s ({name}s) not met, got {got}B/s",
                            self.t.rate_min_bps[dir]
                        )));
                    }
                } else if self.t.rate_min_iops[dir] > 0 {
                    let got = (ops - o0) * 1000 / ms;
                    if got < self.t.rate_min_iops[dir] {
                        return Some(Ended::RateMin(format!(
                            "rate_iops_min={} ({name}s) not met, got {got} IOPS",
                            self.t.rate_min_iops[dir]
                        )));
                    }
                }
            }
            self.base[dir] = Some((now, bytes, ops));
        }
        None
    }

    /// Whether the thread is in a flow.
    #[inline]
    pub fn flows(&self) -> bool {
        self.flow.is_some()
    }

    /// fio's `flow_threshold_exceeded`: true when this thread is ahead of its weight's share
    /// of its flow's I/Os (the caller waits for what is in flight, then [`Shaper::flow_pause`]s
    /// and asks again); else counts the I/O about to be issued in the flow and its own.
    #[inline]
    pub fn flow_ahead(&mut self) -> bool {
        let (Some(f), Some(w)) = (self.flow, self.t.flow) else {
            return false;
        };
        let total = f.total_weight.load(Relaxed).max(1);
        let counter = f.counter.load(Relaxed).max(1);
        // mine / counter > weight / total, in integers
        if u128::from(self.flow_mine) * u128::from(total)
            > u128::from(w.weight) * u128::from(counter)
        {
            return true;
        }
        f.counter.fetch_add(1, Relaxed);
        self.flow_mine += 1;
        false
    }

    /// The pause of a thread ahead of its share: `flow_sleep`, else [`FLOW_PAUSE`].
    pub fn flow_pause(&self, sh: &Shared) {
        let us = self.t.flow.map_or(0, |f| f.sleep_us);
        let d = if us == 0 {
            FLOW_PAUSE
        } else {
            Duration::from_micros(us)
        };
        sleep_until(sh, Instant::now() + d);
    }
}

impl Drop for Shaper<'_> {
    /// fio's `flow_put`: the thread's I/Os and weight leave its flow, so the others go on in
    /// their own ratio.
    fn drop(&mut self) {
        if let (Some(f), Some(w)) = (self.flow, self.t.flow) {
            f.counter.fetch_sub(self.flow_mine, Relaxed);
            f.total_weight.fetch_sub(w.weight, Relaxed);
        }
    }
}

/// The gap to the next `--rate` slot with `rate_process=poisson`: exponential with mean
/// `interval` (fio's `-ln(u)` times the mean), from the thread's generator.
#[inline]
pub fn poisson_gap(interval: Duration, rng: &mut crate::spec::dist::Rng) -> Duration {
    use rand::RngExt;
    let u: f64 = rng.random::<f64>();
    let u = u.max(f64::MIN_POSITIVE);
    interval.mul_f64(-u.ln())
}
