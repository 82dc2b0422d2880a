//! Running the explain table on a run document ([`explain_run`]), on a roles phase's roles
//! ([`explain_roles`]) and on a group of repetitions ([`explain_group`]): the "limit" rules are
//! tried in the order of the table and the first that fires names the cell's limiting layer; the
//! "also" rules add what they find beside it; a cell where nothing fires gets one `none` finding
//! with its figures.

use super::facts::{Facts, fmt_n, little, queue_engine, run_options};
use super::rules::{Hit, RULES, Rule};
use super::{CellExplain, Confidence, Explanation, Finding, Kind, Layer};
use crate::model::run::{CellResult, RunDoc};
use crate::model::units::{fmt_ns, human_bytes};
use crate::store::compare::{NOISY_CV_PCT, Stat};

pub fn finding(rule: &Rule, h: Hit) -> Finding {
    Finding {
        layer: rule.class.layer,
        rule: rule.id.into(),
        confidence: h.at.confidence,
        why: rule.why_of(&h),
        evidence: h.evidence,
        next: h.at.next,
    }
}

pub fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|r| r.id == id).expect("a rule of RULES")
}

fn setup(c: &CellResult) -> String {
    let j = &c.job.job;
    let mut s = format!(
        "{}, {} thread{}",
        j.bs_label(),
        j.threads,
        if j.threads == 1 { "" } else { "s" }
    );
    if queue_engine(j.engine) {
        s.push_str(&format!(" × iodepth {}", j.iodepth));
    }
    s.push_str(&format!(", {}", j.engine.name()));
    if j.direct {
        s.push_str(", direct");
    }
    if c.job.fileset.layout != Default::default() {
        s.push_str(&format!(", layout {}", c.job.fileset.layout));
    }
    s
}

/// The findings of one cell of a run.
pub fn explain_cell(doc: &RunDoc, cell: &CellResult) -> Vec<Finding> {
    explain_facts(&Facts::of(doc, cell))
}

/// The role `r` of the phase `phase` as a cell of its own: its job, results and errors, the
/// phase's device, CPU and page-cache figures.
pub fn role_cell(phase: &CellResult, r: &crate::model::run::RoleResult) -> CellResult {
    CellResult {
        timeseries: Vec::new(),
        lat_hists: Vec::new(),
        clones: Vec::new(),
        ..CellResult::of_role(phase, r)
    }
}

/// One block per role of a roles phase (mode `role NAME (mode)`), each judged on its own job
/// and results with the phase's device and CPU figures (docs/explain.md).
pub fn explain_roles(doc: &RunDoc, phase: &CellResult, run_id: Option<i64>) -> Vec<CellExplain> {
    phase
        .roles
        .iter()
        .map(|r| {
            let c = role_cell(phase, r);
            let f = Facts::of_role(doc, phase, &c, &r.name);
            CellExplain {
                run_id,
                mode: format!("role {} ({})", r.name, r.mode),
                setup: setup(&c),
                role: Some(r.name.clone()),
                findings: explain_facts(&f),
            }
        })
        .collect()
}

pub fn explain_facts(f: &Facts) -> Vec<Finding> {
    let cell = f.cell;
    let mut out = Vec::new();
    if let Some(r) = RULES
        .iter()
        .filter(|r| r.class.kind == Kind::Limit)
        .find_map(|r| {
            let h = (r.inspect)(f).into_iter().next()?;
            Some(finding(r, h))
        })
    {
        out.push(r);
    }
    // the null engine does no I/O: nothing about flushes or requests to say
    let io = !f.null;
    for r in RULES.iter().filter(|r| io && r.class.kind == Kind::Also) {
        for h in (r.inspect)(f) {
            out.push(finding(r, h));
        }
    }
    if out.is_empty() {
        let mut ev = format!(
            "{} IOPS, {}/s, mean latency {}, {} in flight (IOPS × latency = {:.2}), iolab CPU {:.0} % of one{}; {}",
            fmt_n(f.iops),
            human_bytes(cell.results.read.bytes_per_sec + cell.results.write.bytes_per_sec),
            fmt_ns(f.lat_mean_ns),
            fmt_n(f.in_flight),
            little(f),
            f.cpu_pct(),
            if f.role.is_some() {
                " (the whole phase's)"
            } else {
                ""
            },
            f.dev_text_shared()
        );
        if let Some(rate) = f.job.rate_iops {
            ev.push_str(&format!("; paced by --rate {rate}"));
        }
        let r = rule("none");
        out.push(Finding {
            layer: Layer::None,
            rule: r.id.into(),
            confidence: Confidence::Low,
            evidence: ev,
            why: r.why.into(),
            next: f.sweep_cmd(),
        });
    }
    out
}

/// The explanation of one run document (`run_id` when it is stored).
pub fn explain_run(doc: &RunDoc, run_id: Option<i64>, subject: &str) -> Explanation {
    Explanation {
        schema: crate::model::schema::EXPLAIN.into(),
        subject: subject.into(),
        cells: doc
            .runs
            .iter()
            .flat_map(|c| {
                let mut v = vec![CellExplain {
                    run_id,
                    mode: c.mode.clone(),
                    setup: setup(c),
                    role: None,
                    findings: explain_cell(doc, c),
                }];
                v.extend(explain_roles(doc, c, run_id));
                v
            })
            .collect(),
    }
}

/// The explanation of a group of repetitions (the same job each time): per cell, `noisy` when
/// their IOPS disagree (CV above 5 %), else the first run's findings.
pub fn explain_group(runs: &[(i64, RunDoc)], subject: &str) -> Explanation {
    let mut cells = Vec::new();
    let Some((first_id, first)) = runs.first() else {
        return Explanation {
            schema: crate::model::schema::EXPLAIN.into(),
            subject: subject.into(),
            cells,
        };
    };
    for (i, c) in first.runs.iter().enumerate() {
        let iops: Vec<f64> = runs
            .iter()
            .filter_map(|(_, d)| d.runs.get(i))
            .filter(|x| x.mode == c.mode)
            .map(|x| x.results.read.iops + x.results.write.iops)
            .collect();
        let mut noisy = false;
        let findings = match Stat::of(&iops) {
            Some(st) if st.n > 1 && st.cv_pct > NOISY_CV_PCT => {
                noisy = true;
                let r = rule("noisy");
                let each: Vec<String> = iops.iter().map(|x| fmt_n(*x)).collect();
                let more = ((st.n as f64) * (st.cv_pct / NOISY_CV_PCT).powi(2))
                    .ceil()
                    .clamp(st.n as f64 + 1.0, 50.0) as u32;
                vec![Finding {
                    layer: Layer::Noise,
                    rule: r.id.into(),
                    confidence: Confidence::High,
                    evidence: format!(
                        "IOPS over {} repetitions: {} (mean {}, stddev {}, CV {:.1} % > {NOISY_CV_PCT} %)",
                        st.n,
                        each.join(", "),
                        fmt_n(st.mean),
                        fmt_n(st.stddev),
                        st.cv_pct
                    ),
                    why: r.why.into(),
                    next: format!(
                        "iolab run {} --repeat {more}",
                        run_options(&c.job, &c.mode, true)
                    ),
                }]
            }
            _ => explain_cell(first, c),
        };
        cells.push(CellExplain {
            run_id: Some(*first_id),
            mode: c.mode.clone(),
            setup: setup(c),
            role: None,
            findings,
        });
        // repetitions that disagree: no role is judged either
        if !noisy {
            cells.extend(explain_roles(first, c, Some(*first_id)));
        }
    }
    Explanation {
        schema: crate::model::schema::EXPLAIN.into(),
        subject: subject.into(),
        cells,
    }
}

/// The explanation of several runs, each on its own (a saturation search's).
pub fn explain_runs(runs: &[(i64, RunDoc)], subject: &str) -> Explanation {
    let mut cells = Vec::new();
    for (id, d) in runs {
        cells.extend(explain_run(d, Some(*id), "").cells);
    }
    Explanation {
        schema: crate::model::schema::EXPLAIN.into(),
        subject: subject.into(),
        cells,
    }
}
