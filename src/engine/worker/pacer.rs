//! Pacing: when a worker issues its next read or write. `--rate` is one schedule for all of a
//! thread's I/Os (an interval each); fio's `rate`/`rate_iops` that `--rate` cannot run (a mixed
//! job's, or a byte rate that is not whole I/Os per second) are one schedule per direction in
//! bytes, as fio's (`usec_for_io`, `rate_ddir` in io_u.c): a direction's next I/O is due when
//! its bytes issued so far would take that long at its rate; when the direction the mix chose
//! is ahead of its schedule, the other is taken if it is due, else the thread waits for the
//! earlier of the two and takes that one.

use super::*;
use crate::model::job::Mode;

/// How long before a slot a thread that may spin ([`Pacer::spin`]) stops sleeping and spins on
/// the clock: the wakeup lateness of a `clock_nanosleep` with the timer slack at its minimum on
/// an idle machine (measured in docs/measurement.md#paced-latency). A thread that may not spin
/// sleeps to the slot itself.
pub(super) const SPIN_LAST: Duration = Duration::from_micros(20);

/// The longest single sleep of a wait for a slot: a stop, the phase's end or the deadline is
/// seen within it (a slot may be many seconds away at a low byte rate).
const SLICE: Duration = Duration::from_millis(50);

/// fio's per-direction schedules (reads 0, writes 1).
struct Dirs {
    /// Bytes/s of this thread (0: that direction is not paced).
    bps: [u64; 2],
    bytes: [u64; 2],
    next: [Instant; 2],
    /// Whether the mix issues that direction at all (fio switches only to one it does).
    mixed: [bool; 2],
    /// `rate_process=poisson`: the mean gap of each direction (its smallest block at its rate).
    gap: [Duration; 2],
    start: Instant,
    /// The direction of the operation being issued.
    cur: usize,
}

/// Paces issue times for `--rate` (per thread) or fio's per-direction rates, or lets everything
/// go at once.
///
/// Latency is measured from the schedule, so the schedule has to be kept, without taking the
/// CPU that the storage stack needs (a loop device's worker, dm-crypt, a network block client,
/// a virtio backend): a slot is waited for by one `clock_nanosleep` to an absolute time on
/// `CLOCK_MONOTONIC`, with the thread's timer slack set to its minimum once. Only a thread that
/// leaves a CPU idle to spare (fewer paced threads than the CPUs it may run on, less one) and
/// runs without `--no-spin` sleeps to [`SPIN_LAST`] before the slot and spins the rest. Per I/O
/// that is at most one sleep and some clock reads: no allocation, no lock.
pub(super) struct Pacer {
    interval: Option<Duration>,
    next: Instant,
    /// `rate_process=poisson`: exponential gaps drawn from this generator.
    poisson: Option<crate::spec::dist::Rng>,
    dirs: Option<Dirs>,
    /// How long before a slot the wait stops sleeping and spins (zero: it sleeps to the slot).
    spin: Duration,
    /// Turns a slot into `clock_nanosleep`'s absolute time.
    clock: Clock,
}

impl Pacer {
    pub(super) fn new(sh: &Shared, thread: u32) -> Self {
        let job = sh.job;
        let thread_rate = job.rate_iops.map(|r| r as f64 / job.threads as f64);
        let bps = job.timing.rate_bps;
        let dirs = (bps != [0, 0]).then(|| {
            let min_bs = job.bs_sizes()[0].max(1);
            let gap = |b: u64| {
                if b == 0 {
                    Duration::ZERO
                } else {
                    Duration::from_secs_f64(min_bs as f64 / b as f64)
                }
            };
            let r = job.mode.reads();
            let w = job.mode.issues_writes();
            let mix = matches!(job.mode, Mode::Rndrw | Mode::Seqrw);
            Dirs {
                bps,
                bytes: [0, 0],
                next: [sh.start; 2],
                // rw_ratio: reads per write (the largest double: reads only)
                mixed: [
                    r && (!mix || job.rw_ratio > 0.0),
                    w && (!mix || job.rw_ratio < f64::MAX),
                ],
                gap: [gap(bps[0]), gap(bps[1])],
                start: sh.start,
                cur: usize::from(!r),
            }
        });
        let paced = thread_rate.is_some() || dirs.is_some();
        if paced {
            set_min_timer_slack();
        }
        Pacer {
            spin: if paced && spare_cpu(job) {
                SPIN_LAST
            } else {
                Duration::ZERO
            },
            clock: Clock::new(),
            interval: thread_rate.map(|r| Duration::from_secs_f64(1.0 / r)),
            // the threads' slots interleave (thread t a t/threads share of an interval later)
            // so that the job's I/Os arrive evenly spaced, not in bursts of one per thread
            next: match thread_rate.filter(|_| !job.timing.poisson) {
                Some(r) if job.threads > 1 => {
                    let share = f64::from(thread % job.threads) / f64::from(job.threads);
                    sh.start + Duration::from_secs_f64(share / r)
                }
                _ => sh.start,
            },
            poisson: (job.timing.poisson && paced)
                .then(|| crate::spec::dist::thread_rng(job.seed ^ 0x706f_6973, thread)),
            dirs,
        }
    }

    /// fio's `rate_ddir`: with per-direction rates, whether the next read or write is a read,
    /// given that the mix chose a read (`read`) or a write, at `now`. None: no per-direction
    /// rates (the mix decides).
    #[inline]
    pub(super) fn choose(&mut self, read: bool, now: Instant) -> Option<bool> {
        let d = self.dirs.as_mut()?;
        let mut dir = usize::from(!read);
        let due = |d: &Dirs, x: usize| d.bps[x] == 0 || d.next[x] <= now;
        if !due(d, dir) {
            let o = 1 - dir;
            if d.mixed[o] && (due(d, o) || d.next[o] < d.next[dir]) {
                dir = o;
            }
        }
        d.cur = dir;
        Some(dir == 0)
    }

    /// Scheduled start of the next operation (None when not rate limited).
    #[inline]
    pub(super) fn peek(&self) -> Option<Instant> {
        match &self.dirs {
            Some(d) => (d.bps[d.cur] > 0).then_some(d.next[d.cur]),
            None => self.interval.map(|_| self.next),
        }
    }

    /// The operation scheduled by [`Pacer::peek`] was issued, moving `bytes`.
    #[inline]
    pub(super) fn advance(&mut self, bytes: u64) {
        if let Some(d) = &mut self.dirs {
            let c = d.cur;
            if d.bps[c] == 0 {
                return;
            }
            d.bytes[c] += bytes;
            d.next[c] = match &mut self.poisson {
                Some(rng) => d.next[c] + poisson_gap(d.gap[c], rng),
                None => {
                    let ns = u128::from(d.bytes[c]) * 1_000_000_000 / u128::from(d.bps[c]);
                    d.start + Duration::from_nanos(ns.min(u128::from(u64::MAX)) as u64)
                }
            };
        } else if let Some(i) = self.interval {
            self.next += match &mut self.poisson {
                Some(rng) => poisson_gap(i, rng),
                None => i,
            };
        }
    }

    /// How long before a slot this thread spins instead of sleeping (zero: it sleeps to the
    /// slot; the queue loop waits for completions until then).
    #[inline]
    pub(super) fn spin(&self) -> Duration {
        self.spin
    }

    /// Waits until `slot` (`now` is a recent clock reading); returns the clock reading that
    /// ended the wait, at or just after `slot`. None when the phase stopped or ended, or the
    /// deadline came first (fio issues nothing then either): the thread ends.
    #[inline]
    pub(super) fn wait(&self, slot: Instant, mut now: Instant, sh: &Shared) -> Option<Instant> {
        if sh.deadline.is_some_and(|d| slot >= d) {
            let d = sh.deadline.expect("a deadline");
            while now < d && !sh.ending() {
                std::thread::sleep((d - now).min(SLICE));
                now = Instant::now();
            }
            return None;
        }
        while let Some(left) = slot.checked_duration_since(now)
            && left > self.spin
        {
            if sh.ending() {
                return None;
            }
            // one sleep to the slot (less the spin), in slices of at most SLICE
            let until = if left - self.spin > SLICE {
                now + SLICE
            } else {
                slot - self.spin
            };
            self.clock.sleep_until(until);
            now = Instant::now();
        }
        while now < slot {
            std::hint::spin_loop();
            now = Instant::now();
        }
        Some(now)
    }
}

/// Whether a paced thread of `job` may spin before its slots: never with `--no-spin`, else
/// when its threads leave at least one of the CPUs it may run on (its affinity, the cgroup's
/// quota) idle besides: `threads < CPUs - 1`. With as many spinning threads as CPUs the kernel's
/// own work for the device gets no CPU, the device slows, and the latency measures that harm.
fn spare_cpu(job: &crate::model::job::Job) -> bool {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    !job.no_spin && (job.threads as usize) + 1 < cpus
}

/// `CLOCK_MONOTONIC` (which [`Instant`] reads on Linux) at one instant, in ns: turns an
/// [`Instant`] into an absolute time for `clock_nanosleep` without a clock read per sleep.
#[derive(Clone, Copy)]
pub(super) struct Clock {
    at: Instant,
    mono_ns: u64,
}

impl Clock {
    pub(super) fn new() -> Clock {
        // the Instant between two readings of the clock: the anchor is off by half their gap
        let a = mono_ns();
        let at = Instant::now();
        let b = mono_ns();
        Clock {
            at,
            mono_ns: a + (b.saturating_sub(a)) / 2,
        }
    }

    /// Sleeps until `t` (or a signal): one `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`.
    #[inline]
    pub(super) fn sleep_until(&self, t: Instant) {
        let ns = match t.checked_duration_since(self.at) {
            Some(d) => self.mono_ns.saturating_add(d.as_nanos() as u64),
            None => self
                .mono_ns
                .saturating_sub(self.at.duration_since(t).as_nanos() as u64),
        };
        let ts = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: `ts` is a valid timespec for the duration of the call; no remainder is asked
        // for (null) with TIMER_ABSTIME. An EINTR returns early: the caller reads the clock.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            );
        }
    }
}

/// `CLOCK_MONOTONIC` now, in ns (read once per thread, by [`Clock::new`]).
fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sets this thread's timer slack to 1 ns (the default 50 µs would make every sleep of the
/// pacer end up to 50 µs late). Only the calling thread is affected; a refusal leaves the
/// default slack (later wakeups, counted in the schedule lag).
pub(super) fn set_min_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// The generator's own lateness for one paced operation issued at `t0`, scheduled at `sched`,
/// that the thread was free to issue at `ready` (the previous completion); `prev` is the
/// previous operation's. It is how long the operation waited after the later of its slot and
/// `ready`, plus as much of the previous operation's lag as it is still behind by: a backlog that
/// iolab's own stall left (a preempted thread) is iolab's, a backlog behind a busy or saturated
/// device is not, and stays only in the latency.
#[inline]
pub(super) fn lag_ns(sched: Instant, ready: Instant, t0: Instant, prev: u64) -> u64 {
    ns_since(sched.max(ready), t0) + ns_since(sched, ready).min(prev)
}
