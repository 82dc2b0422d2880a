//! fio's steady state in a phase (steadystate.c `steadystate_check`, run by fio's helper thread
//! every second): the judged units of the phase's jobs (a reporting group's threads with
//! `group_reporting`, else each thread, fio's clone, on its own), sampled once a second from
//! the threads' live counters on a thread of its own, each unit's window judged by
//! `measure::steady`, and a unit whose criterion holds ended through its threads' `halt` flag.
//! Nothing is added to the worker loops but that flag's load beside the stop flags.

use crate::engine::worker::Progress;
use crate::measure::steady::Window;
use crate::measure::wake::StopSignal;
use crate::model::job::Job;
use crate::model::steady::{Steady, SteadyState};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// fio's `STEADYSTATE_MSEC`: one sample per second (its ramp's extra second too).
const EVERY: Duration = Duration::from_secs(1);

/// One judged unit: its criterion, its threads (job of the phase, thread) and the flag that
/// ends them.
struct Judged {
    spec: Steady,
    members: Vec<(usize, u32)>,
    halt: AtomicBool,
}

/// The judged units of one phase (none when no job has `ss`).
pub(super) struct SteadyUnits {
    units: Vec<Judged>,
}

impl SteadyUnits {
    /// The units of the phase's jobs: with `group_reporting` (`Steady::group`) every thread of
    /// the jobs of one reporting group, else each thread alone.
    pub(super) fn new<'a>(jobs: impl IntoIterator<Item = &'a Job>) -> Self {
        Self::of(
            jobs.into_iter()
                .map(|j| (j.threads, j.timing.steady.as_ref())),
        )
    }

    /// [`SteadyUnits::new`] of each job's thread count and criterion.
    fn of<'a>(jobs: impl IntoIterator<Item = (u32, Option<&'a Steady>)>) -> Self {
        let mut units: Vec<Judged> = Vec::new();
        for (ui, (n, spec)) in jobs.into_iter().enumerate() {
            let Some(spec) = spec else {
                continue;
            };
            let threads = (0..n).map(|t| (ui, t));
            let group = spec
                .group
                .and_then(|g| units.iter_mut().find(|u| u.spec.group == Some(g)));
            match (spec.group, group) {
                (Some(_), Some(u)) => u.members.extend(threads),
                (Some(_), None) => units.push(Judged {
                    spec: spec.clone(),
                    members: threads.collect(),
                    halt: AtomicBool::new(false),
                }),
                (None, _) => units.extend(threads.map(|m| Judged {
                    spec: spec.clone(),
                    members: vec![m],
                    halt: AtomicBool::new(false),
                })),
            }
        }
        SteadyUnits { units }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// The flag that ends thread `t` of job `ui` once its unit is steady.
    pub(super) fn halt(&self, ui: usize, t: u32) -> Option<&AtomicBool> {
        self.units
            .iter()
            .find(|u| u.members.contains(&(ui, t)))
            .map(|u| &u.halt)
    }

    /// Samples the units every second from `start` (the phase's start; fio's helper ticks on
    /// its own clock) until every thread of the phase is done: each running thread's reads,
    /// writes and trims and their bytes since its previous sample (from its job's start,
    /// `epochs[ui]`, at first) as whole I/Os and bytes per second over the milliseconds
    /// between, added over the unit's threads whose `ss_ramp` is over (one second after it, as
    /// fio's; at once without one); a thread that ended is left out, as fio leaves out an exited job. A unit whose
    /// window then meets its criterion is ended. Returns each unit's findings, in unit order.
    pub(super) fn watch(
        &self,
        progress: &[Vec<Progress>],
        epochs: &[Instant],
        start: Instant,
        all_done: &StopSignal,
    ) -> Vec<SteadyState> {
        let mut windows: Vec<Window> = self.units.iter().map(|u| Window::new(&u.spec)).collect();
        // each thread's counts and instant at its previous sample
        let mut prev: Vec<Vec<(u64, u64, Instant)>> = progress
            .iter()
            .zip(epochs)
            .map(|(ps, &e)| vec![(0, 0, e); ps.len()])
            .collect();
        // one sample a round: fio's every second, --steady-state's every --round
        let every = self
            .units
            .iter()
            .map(|u| Duration::from_secs_f64(u.spec.round_s.max(0.001)))
            .min()
            .unwrap_or(EVERY);
        let mut tick = start;
        loop {
            tick += every;
            if all_done.wait_until(tick) {
                break;
            }
            let now = Instant::now();
            for (u, w) in self.units.iter().zip(&mut windows) {
                if w.attained() {
                    continue;
                }
                let (mut iops, mut bw, mut over) = (0u64, 0u64, false);
                for &(ui, t) in &u.members {
                    let (p, epoch) = (&progress[ui][t as usize], epochs[ui]);
                    if now < epoch || p.done.load(Relaxed) {
                        continue;
                    }
                    let (ops, bytes) = p.live.as_ref().map_or((0, 0), |l| l.moved());
                    let (p_ops, p_bytes, at) = prev[ui][t as usize];
                    let ms = now.saturating_duration_since(at).as_millis() as u64;
                    prev[ui][t as usize] = (ops, bytes, now);
                    // fio's ramp is over at once without ss_ramp, else a second after it
                    let ramp = Duration::from_secs_f64(u.spec.ramp_s) + EVERY;
                    let ramping =
                        u.spec.ramp_s > 0.0 && now.saturating_duration_since(epoch) < ramp;
                    if ms == 0 || ramping {
                        continue;
                    }
                    over = true;
                    iops += 1000 * ops.saturating_sub(p_ops) / ms;
                    bw += 1000 * bytes.saturating_sub(p_bytes) / ms;
                }
                let Some(&(ui0, _)) = u.members.first() else {
                    continue;
                };
                let at_s = now.saturating_duration_since(epochs[ui0]).as_secs_f64();
                if over && w.push(iops, bw, at_s) {
                    u.halt.store(true, Relaxed);
                }
            }
        }
        windows.iter().map(Window::state).collect()
    }

    /// The findings that judged job `ui`'s threads, in thread order: its reporting group's
    /// (one), or each thread's.
    pub(super) fn states_of(&self, ui: usize, states: &[SteadyState]) -> Vec<SteadyState> {
        self.units
            .iter()
            .zip(states)
            .filter(|(u, _)| u.members.iter().any(|m| m.0 == ui))
            .map(|(_, s)| s.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::steady::SteadyMetric;

    fn spec(group: Option<u64>) -> Steady {
        Steady {
            metric: SteadyMetric::Iops,
            slope: false,
            limit: 10.0,
            pct: true,
            window_s: 3,
            ramp_s: 0.0,
            group,
            pts: None,
            round_s: 1.0,
        }
    }

    #[test]
    fn a_group_is_one_unit_and_clones_alone_are_one_each() {
        let (g, alone) = (spec(Some(0)), spec(None));
        let units = SteadyUnits::of([(2, Some(&g)), (1, Some(&g)), (1, None), (3, Some(&alone))]);
        assert_eq!(units.units.len(), 1 + 3);
        assert_eq!(units.units[0].members, [(0, 0), (0, 1), (1, 0)]);
        assert!(units.halt(2, 0).is_none(), "a job without ss");
        assert!(std::ptr::eq(
            units.halt(0, 1).unwrap(),
            units.halt(1, 0).unwrap()
        ));
        assert!(!std::ptr::eq(
            units.halt(3, 0).unwrap(),
            units.halt(3, 1).unwrap()
        ));
        let states: Vec<SteadyState> = (0..4)
            .map(|i| {
                let mut w = Window::new(&g);
                w.push(i, 0, 1.0);
                w.state()
            })
            .collect();
        assert_eq!(units.states_of(1, &states).len(), 1);
        let of_c: Vec<u64> = units
            .states_of(3, &states)
            .iter()
            .map(|s| s.iops[0])
            .collect();
        assert_eq!(of_c, [1, 2, 3]);
    }
}
