//! fio's steady state (`steadystate`/`ss`, `ss_dur`, `ss_ramp`; options.c
//! `str_steadystate_cb`, steadystate.c `td_steadystate_init`) as a job's
//! `model::steady::Steady`: read per job, then judged per reporting group, as fio judges the
//! jobs of a group with `group_reporting` as one and rejects a group whose jobs' criteria differ.

use super::FioJob;
use super::ctx::{Blockers, Ctx};
use crate::model::steady::Steady;
use crate::spec::fio_vocab;

/// fio's default criterion (`steadystate`'s `.def`), when only `ss_dur` is given.
const DEFAULT: &str = "iops_slope:0.01%";

/// The job's steady state: None unless `ss_dur` is at least a second (fio enables it only
/// then, its duration truncated to whole seconds), or when a value does not parse (recorded).
pub(super) fn steady(c: &mut Ctx) -> Option<Steady> {
    let spelled = c.val("steadystate");
    let text = spelled.clone().unwrap_or_else(|| DEFAULT.into());
    let parsed = fio_vocab::steadystate(&text, c.kb);
    if let (Err(e), Some(_)) = (&parsed, &spelled) {
        c.bad("steadystate", e);
    }
    let ramp_s = c.time("steadystate_ramp_time").unwrap_or(0.0);
    let window_s = c.time("steadystate_duration").unwrap_or(0.0);
    if !(1.0..=crate::cli::flags::MAX_SECONDS).contains(&window_s) {
        return None;
    }
    if c.time("ramp_time").is_some_and(|r| r > 0.0) {
        c.refuse_key(
            "steadystate_duration",
            "with ramp_time: fio restarts the job's counts at the ramp's end under its steady-state sampler, so its samples are wrong (a wrapped count) for a window; use ss_ramp",
        );
        return None;
    }
    if ramp_s > crate::cli::flags::MAX_SECONDS {
        c.bad("steadystate_ramp_time", "longer than 10 years");
        return None;
    }
    let (metric, slope, limit, pct) = parsed.ok()?;
    Some(Steady {
        metric,
        slope,
        limit,
        pct,
        window_s: window_s as u64,
        ramp_s,
        group: None,
        pts: None,
        round_s: 1.0,
    })
}

/// The section's `file` and `line` of a job's `at` (`file:line`).
fn at_of(j: &FioJob) -> (String, usize) {
    match j.at.rsplit_once(':') {
        Some((f, l)) => (f.to_string(), l.parse().unwrap_or(0)),
        None => (j.at.clone(), 0),
    }
}

/// Judges the steady states of the run's jobs by reporting group, once groups and phases are
/// known: a group whose jobs' criteria differ (one without) is fio's rejection, as fio's
/// `td_steadystate_init`; with `group_reporting` a group's jobs are judged as one
/// (`Steady::group`). A job judged clone by clone (no `group_reporting`, `numjobs` > 1) beside
/// other jobs of its phase is refused: iolab reports such a job as one row, fio one per clone,
/// each with its steady state.
pub(super) fn by_group(jobs: &mut [FioJob], blockers: &mut Blockers) {
    for i in 0..jobs.len() {
        let mine = |j: &FioJob| {
            j.args.timing.steady.as_ref().map(|s| Steady {
                group: None,
                ..s.clone()
            })
        };
        let own = mine(&jobs[i]);
        if jobs
            .iter()
            .any(|o| o.group == jobs[i].group && mine(o) != own)
        {
            let (f, l) = at_of(&jobs[i]);
            let about = format!("{}: job '{}': steadystate", jobs[i].at, jobs[i].section);
            blockers.error(
                (&f, l),
                &about,
                format!(
                    "{about}: fio rejects the job: steadystate options must be consistent within reporting groups"
                ),
            );
        }
    }
    // then each job's unit (a refused one dropped only now, after every group was compared)
    for i in 0..jobs.len() {
        let j = &jobs[i];
        let reporting = j.fio_options.get("group_reporting").is_some_and(|v| {
            fio_vocab::parse_bool(Some(v.as_str()).filter(|v| !v.is_empty())).unwrap_or(true)
        });
        let clones = j.args.threads.unwrap_or(1);
        let beside = jobs.iter().filter(|o| o.phase == j.phase).count() > 1;
        let (group, at, section) = (j.group as u64, j.at.clone(), j.section.clone());
        let Some(s) = jobs[i].args.timing.steady.as_mut() else {
            continue;
        };
        if reporting {
            s.group = Some(group);
        } else if clones > 1 && beside {
            let (f, l) = at_of(&jobs[i]);
            let about = format!("{at}: job '{section}': steadystate");
            blockers.refusal(
                (&f, l),
                &about,
                format!(
                    "{about}: refused: judged clone by clone (no group_reporting) beside other jobs of its phase: iolab reports such a job as one row, fio each clone with its steady state"
                ),
            );
            jobs[i].args.timing.steady = None;
            jobs[i].ignored.push(format!("{at}: steadystate"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::steady::SteadyMetric;

    #[test]
    fn criteria_as_fio_reads_them() {
        let p = |v| fio_vocab::steadystate(v, 1024);
        assert_eq!(p("iops:10%"), Ok((SteadyMetric::Iops, false, 10.0, true)));
        assert_eq!(p("bw_slope:0.5%"), Ok((SteadyMetric::Bw, true, 0.5, true)));
        assert_eq!(
            p("iops_slope:20"),
            Ok((SteadyMetric::Iops, true, 20.0, false))
        );
        assert_eq!(
            p("bw:10m"),
            Ok((SteadyMetric::Bw, false, 10.0 * 1048576.0, false))
        );
        assert!(p("iops").is_err(), "no threshold");
        assert!(p("lat:10%").is_err());
        assert!(p("iops:x%").is_err());
    }
}
