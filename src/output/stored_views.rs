//! Rendering what the results store holds: list, show, compare, export, repetition summaries.

use crate::error::{Error, Result};
use crate::model::stored::RunKind;
use crate::output::table::fmt_ns;
use crate::store::compare::{Comparison, METRICS, Stat, cell_labels, metric_value};
use crate::store::{MetricRow, RunRow, Store};
use comfy_table::{CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use std::collections::BTreeMap;

fn table(header: Vec<&str>) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
}

fn right(t: &mut Table, from: usize) {
    let n = t.column_count();
    for i in from..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// A crashcheck has no speed to list: what it found instead.
fn crashcheck_headline(store: &Store, id: i64) -> String {
    let Ok(crate::model::stored::StoredDoc::Crashcheck(d)) = store.stored_doc(id) else {
        return String::new();
    };
    match (&d.write, &d.verify) {
        (Some(w), _) => match &w.failure {
            Some(f) => format!(
                "crashcheck {} acknowledged, record {} {} failed",
                w.acknowledged, f.seq, f.call
            ),
            None => format!("crashcheck {} acknowledged", w.acknowledged),
        },
        (None, Some(v)) => format!(
            "crashcheck {} of {} acknowledged lost",
            v.failures(),
            v.checked
        ),
        (None, None) => String::new(),
    }
}

/// `iolab list` as a table.
/// `iolab list` (`iolab-list/1`): the runs' rows; the text reads each run's headline.
pub struct ListDoc<'a> {
    pub store: &'a Store,
    pub rows: &'a [RunRow],
}

impl crate::output::document::Document for ListDoc<'_> {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({"schema": crate::model::schema::LIST, "runs": self.rows})
    }
    fn text(&self) -> Result<String> {
        render_list(self.store, self.rows)
    }
}

pub fn render_list(store: &Store, rows: &[RunRow]) -> Result<String> {
    let mut t = table(vec![
        "id",
        "group",
        "start (UTC)",
        "host",
        "tool",
        "modes",
        "label",
        "tags",
        "headline",
    ]);
    for r in rows {
        let m = store.metrics(r.id)?;
        let head = match r.kind {
            RunKind::Crashcheck => crashcheck_headline(store, r.id),
            RunKind::Verify => match store.stored_doc(r.id) {
                Ok(crate::model::stored::StoredDoc::Verify(d)) => d.headline(),
                _ => String::new(),
            },
            _ => m
                .first()
                // a db run's rate is transactions per second
                .map(|x| {
                    let unit = if r.kind == RunKind::Db { "TPS" } else { "IOPS" };
                    format!("{} {} {:.0} {unit}", x.mode, x.op, x.iops)
                })
                .unwrap_or_default(),
        };
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        t.add_row(vec![
            r.id.to_string(),
            r.group_id.map(|g| format!("g{g}")).unwrap_or_default(),
            r.start_time
                .chars()
                .take(19)
                .collect::<String>()
                .replace('T', " "),
            r.host.clone(),
            if r.tool == "iolab" {
                "iolab".to_string()
            } else {
                format!("{} (import)", r.tool)
            },
            r.modes.join(",") + if r.interrupted { " (partial)" } else { "" },
            r.label.clone().unwrap_or_default(),
            tags.join(" "),
            head,
        ]);
    }
    Ok(format!(
        "{t}\n{} runs in {}\n",
        rows.len(),
        store.path.display()
    ))
}

fn opt_ns(v: Option<f64>) -> String {
    v.map(fmt_ns).unwrap_or_else(|| "-".into())
}

/// A table of stored metrics (used for imported runs).
pub fn metrics_table(rows: &[MetricRow]) -> Table {
    let labels = cell_labels(rows);
    let mut t = table(vec![
        "mode", "thr", "bs", "op", "ops", "IOPS", "MiB/s", "lat avg", "p50", "p95", "p99", "p99.9",
        "max",
    ]);
    let mut last = -1;
    for r in rows {
        let first = r.cell != last;
        last = r.cell;
        t.add_row(vec![
            if first {
                labels[&r.cell].clone()
            } else {
                String::new()
            },
            if first {
                r.threads.map(|x| x.to_string()).unwrap_or_default()
            } else {
                String::new()
            },
            if first {
                r.bs_bytes
                    .map(|b| crate::model::units::Bytes(b as u64).to_string())
                    .unwrap_or_default()
            } else {
                String::new()
            },
            r.op.clone(),
            r.ops.to_string(),
            format!("{:.0}", r.iops),
            if r.bytes == 0 {
                "-".into()
            } else {
                format!("{:.2}", r.bytes_per_sec / 1048576.0)
            },
            opt_ns(r.lat_mean_ns),
            opt_ns(r.lat_p50_ns),
            opt_ns(r.lat_p95_ns),
            opt_ns(r.lat_p99_ns),
            opt_ns(r.lat_p99_9_ns),
            opt_ns(r.lat_max_ns),
        ]);
    }
    right(&mut t, 4);
    t
}

/// `iolab show ID`: the stored run rendered like the live output.
pub fn render_show(store: &Store, id: i64) -> Result<String> {
    let run = store.run(id)?;
    let mut s = format!("run {id}");
    if let Some(g) = run.group_id {
        s.push_str(&format!(" (group g{g})"));
    }
    s.push_str(&format!(", {} on {}", run.start_time, run.host));
    if let Some(l) = &run.label {
        s.push_str(&format!(", label {l}"));
    }
    if !run.tags.is_empty() {
        let tags: Vec<String> = run.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!(", tags {}", tags.join(" ")));
    }
    s.push('\n');
    use crate::model::stored::{StoredDoc, SuiteDoc};
    match store.stored_doc(id)? {
        StoredDoc::Suite(sd) => match *sd {
            SuiteDoc::Iozone(r) => {
                s.push_str(&crate::output::suites::iozone_table(&r));
                s.push_str(&crate::output::suites::iozone_excel(&r));
            }
            SuiteDoc::Bonnie(b) => {
                s.push_str(&crate::output::suites::bonnie_table(&b));
                s.push_str(&crate::output::suites::bonnie_csv(&b));
            }
            SuiteDoc::Zones(z) => s.push_str(&crate::output::suites::zones_table(&z)),
            SuiteDoc::Pts(p) => s.push_str(&crate::output::pts::pts_text(&p)),
            SuiteDoc::Fingerprint(f) => s.push_str(&crate::output::capture::fingerprint_text(&f)),
        },
        StoredDoc::Db(d) => s.push_str(&crate::output::db::render(&d)),
        StoredDoc::Run(d) => s.push_str(&crate::output::table::render(&d)),
        StoredDoc::Crashcheck(d) => s.push_str(&crate::output::crashcheck::render(&d)),
        StoredDoc::Verify(d) => s.push_str(&crate::output::crashcheck::render_verify(&d)),
        StoredDoc::Import(_) | StoredDoc::Experiment(_) => {
            s.push_str(&format!(
                "imported from {} {}\n",
                run.tool, run.tool_version
            ));
            s.push_str(&metrics_table(&store.metrics(id)?).to_string());
            s.push('\n');
        }
    }
    Ok(s)
}

fn fmt_metric(name: &str, v: f64) -> String {
    match name {
        "iops" => format!("{v:.0}"),
        "mib_per_sec" => format!("{v:.2}"),
        _ => fmt_ns(v),
    }
}

fn fmt_stat(name: &str, s: &Stat) -> String {
    match s.ci95 {
        Some(ci) => format!("{} ±{}", fmt_metric(name, s.mean), fmt_metric(name, ci)),
        None => fmt_metric(name, s.mean),
    }
}

/// `iolab compare` as tables.
pub fn render_compare(c: &Comparison) -> String {
    let mut s = String::new();
    for (i, side) in c.sides.iter().enumerate() {
        let role = if i == 0 { "baseline" } else { "" };
        s.push_str(&format!(
            "{:<9} {} ({} run{}), {}, {}{}\n",
            role,
            side.reference,
            side.run_ids.len(),
            if side.run_ids.len() == 1 { "" } else { "s" },
            side.tool,
            side.start_time,
            side.label
                .as_ref()
                .map(|l| format!(", label {l}"))
                .unwrap_or_default()
        ));
    }
    let mut header = vec!["mode".to_string(), "op".into(), "metric".into()];
    for (i, side) in c.sides.iter().enumerate() {
        header.push(side.reference.clone());
        if i > 0 {
            header.push(format!("Δ% vs {}", c.sides[0].reference));
        }
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(header);
    let names: BTreeMap<&str, &str> = [
        ("iops", "IOPS"),
        ("mib_per_sec", "MiB/s"),
        ("lat_mean_ns", "lat avg"),
        ("lat_p50_ns", "p50"),
        ("lat_p99_ns", "p99"),
        ("lat_p99_9_ns", "p99.9"),
    ]
    .into_iter()
    .collect();
    let mut last = (String::new(), String::new());
    // fsyncs move no bytes: no MiB/s row; end-of-mode fsyncs (stored with a rate of 0) have no
    // IOPS either
    let fsync_no_rate = |r: &crate::store::compare::Row, st: &Stat| {
        r.op == "fsync" && r.metric == "iops" && st.mean == 0.0
    };
    for r in c
        .rows
        .iter()
        .filter(|r| !(r.op == "fsync" && r.metric == "mib_per_sec"))
        .filter(|r| {
            !r.sides
                .iter()
                .all(|x| x.stat.is_none_or(|st| fsync_no_rate(r, &st)))
        })
    {
        let first = (r.cell.clone(), r.op.clone()) != last;
        last = (r.cell.clone(), r.op.clone());
        let mut row = vec![
            if first { r.cell.clone() } else { String::new() },
            if first { r.op.clone() } else { String::new() },
            names
                .get(r.metric.as_str())
                .copied()
                .unwrap_or(&r.metric)
                .to_string(),
        ];
        for (i, cmp) in r.sides.iter().enumerate() {
            row.push(
                cmp.stat
                    .as_ref()
                    .filter(|st| !fsync_no_rate(r, st))
                    .map(|st| fmt_stat(&r.metric, st))
                    .unwrap_or_else(|| "-".into()),
            );
            let no_rate = r
                .sides
                .iter()
                .any(|x| x.stat.is_some_and(|st| fsync_no_rate(r, &st)));
            if i > 0 && no_rate {
                row.push("-".into());
            } else if i > 0 {
                let d = cmp
                    .delta_pct
                    .map(|d| format!("{d:+.1}%"))
                    .unwrap_or_else(|| "-".into());
                let mark = match cmp.verdict.as_str() {
                    "significant" => format!(" * p={:.3}", cmp.p_value.unwrap_or(0.0)),
                    "within noise" => " ~noise".to_string(),
                    _ => String::new(),
                };
                row.push(format!("{d}{mark}"));
            }
        }
        t.add_row(row);
    }
    right(&mut t, 3);
    s.push_str(&t.to_string());
    s.push('\n');
    let reps = c.sides.iter().all(|x| x.run_ids.len() > 1);
    if reps {
        s.push_str("values: mean ±95% CI over repetitions; * = significant (Welch's t-test, p < 0.05); ~noise = the difference is within the noise\n");
        s.push_str(&few_repetitions_note(c));
    } else {
        s.push_str("single runs: differences cannot be tested for significance; use --repeat N for both sides\n");
    }
    for n in &c.not_comparable {
        s.push_str(&format!("not compared: {n}\n"));
    }
    if c.changes.is_empty() {
        s.push_str("what changed: no job setting or environment field differs\n");
    } else {
        s.push_str("what changed:\n");
        for ch in &c.changes {
            let vals: Vec<String> = ch
                .values
                .iter()
                .map(|v| v.clone().unwrap_or_else(|| "(none)".into()))
                .collect();
            s.push_str(&format!("  {}: {}\n", ch.field, vals.join(" → ")));
        }
    }
    s
}

/// Below this many repetitions a side's 95% CI is so wide that most differences read as noise.
const FEW_REPETITIONS: usize = 5;

/// Why few repetitions call differences noise: for each small n present, how many standard
/// errors the 95% CI reaches either side of the mean (Student's t quantile for n − 1 degrees of
/// freedom: 12.71 for n = 2, 4.30 for n = 3), and what `--repeat 5` would give.
fn few_repetitions_note(c: &Comparison) -> String {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let t = |n: usize| {
        StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .map(|d| d.inverse_cdf(0.975))
            .unwrap_or(f64::NAN)
    };
    // the repetitions each side has, per compared value
    let mut by_n: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (i, side) in c.sides.iter().enumerate() {
        let ns: std::collections::BTreeSet<usize> = c
            .rows
            .iter()
            .filter_map(|r| r.sides.get(i).and_then(|x| x.stat).map(|st| st.n))
            .collect();
        for n in ns.into_iter().filter(|n| (2..FEW_REPETITIONS).contains(n)) {
            by_n.entry(n).or_default().push(&side.reference);
        }
    }
    let mut s = String::new();
    for (n, sides) in &by_n {
        let df = n - 1;
        s.push_str(&format!(
            "note: with n={n} repetitions ({}) the 95% CI reaches {:.1} standard errors either side of the mean (Student's t for {df} degree{} of freedom: {:.3}), so only large differences show as significant",
            sides.join(", "),
            t(*n),
            if df == 1 { "" } else { "s" },
            t(*n)
        ));
        s.push_str(&format!(
            "; use --repeat {FEW_REPETITIONS} or more ({:.1} standard errors at n={FEW_REPETITIONS})\n",
            t(FEW_REPETITIONS)
        ));
    }
    s
}

/// One row of the CSV export (one per run × cell × op type).
#[derive(Serialize)]
struct CsvRow<'a> {
    run_id: i64,
    /// `g3`, as `list` and `show` name groups; empty outside a group.
    group: Option<&'a str>,
    group_id: Option<i64>,
    tool: &'a str,
    tool_version: &'a str,
    start_time: &'a str,
    host: &'a str,
    label: &'a str,
    cell: i64,
    mode: &'a str,
    op: &'a str,
    threads: Option<i64>,
    bs_bytes: Option<i64>,
    ops: i64,
    bytes: i64,
    iops: f64,
    bytes_per_sec: f64,
    lat_min_ns: Option<f64>,
    lat_mean_ns: Option<f64>,
    lat_max_ns: Option<f64>,
    lat_stddev_ns: Option<f64>,
    lat_p50_ns: Option<f64>,
    lat_p90_ns: Option<f64>,
    lat_p95_ns: Option<f64>,
    lat_p99_ns: Option<f64>,
    lat_p99_9_ns: Option<f64>,
    lat_p99_99_ns: Option<f64>,
}

pub fn export_csv(store: &Store, ids: &[i64], out: &mut dyn std::io::Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for &id in ids {
        let r = store.run(id)?;
        for m in store.metrics(id)? {
            w.serialize(CsvRow {
                run_id: id,
                group: r.group.as_deref(),
                group_id: r.group_id,
                tool: &r.tool,
                tool_version: &r.tool_version,
                start_time: &r.start_time,
                host: &r.host,
                label: r.label.as_deref().unwrap_or(""),
                cell: m.cell,
                mode: &m.mode,
                op: &m.op,
                threads: m.threads,
                bs_bytes: m.bs_bytes,
                ops: m.ops,
                bytes: m.bytes,
                iops: m.iops,
                bytes_per_sec: m.bytes_per_sec,
                lat_min_ns: m.lat_min_ns,
                lat_mean_ns: m.lat_mean_ns,
                lat_max_ns: m.lat_max_ns,
                lat_stddev_ns: m.lat_stddev_ns,
                lat_p50_ns: m.lat_p50_ns,
                lat_p90_ns: m.lat_p90_ns,
                lat_p95_ns: m.lat_p95_ns,
                lat_p99_ns: m.lat_p99_ns,
                lat_p99_9_ns: m.lat_p99_9_ns,
                lat_p99_99_ns: m.lat_p99_99_ns,
            })
            .map_err(|e| Error::failed(format!("export: {e}")))?;
        }
    }
    w.flush().map_err(|e| Error::failed(format!("export: {e}")))
}

pub fn export_json(store: &Store, ids: &[i64]) -> Result<serde_json::Value> {
    let mut runs = Vec::new();
    for &id in ids {
        let r = store.run(id)?;
        let doc = current_doc(store, id, &r.kind)?;
        runs.push(serde_json::json!({"id": id, "group": r.group, "group_id": r.group_id, "kind": r.kind, "tool": r.tool, "tool_version": r.tool_version, "label": r.label, "tags": r.tags, "cells": store.cells(id)?, "doc": doc}));
    }
    Ok(serde_json::json!({"schema": crate::model::schema::EXPORT, "runs": runs}))
}

/// Mean, CI and noise of the headline metrics over the runs of a group.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SummaryRow {
    pub cell: String,
    pub op: String,
    pub metric: String,
    pub stat: Stat,
    pub noisy: bool,
}

pub fn group_summary(store: &Store, ids: &[i64]) -> Result<Vec<SummaryRow>> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut vals: BTreeMap<(String, String, &'static str), Vec<f64>> = BTreeMap::new();
    for &id in ids {
        let rows = store.metrics(id)?;
        let labels = cell_labels(&rows);
        // cells whose fsyncs all came at the end of the mode: no fsync rate to summarize
        let end_only: Vec<i64> = match store.stored_doc(id) {
            Ok(crate::model::stored::StoredDoc::Run(d)) => d
                .runs
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    crate::output::table::end_only_fsyncs(c, crate::measure::stats::OpKind::Fsync)
                })
                .map(|(i, _)| i as i64)
                .collect(),
            _ => Vec::new(),
        };
        for r in &rows {
            let key = (labels[&r.cell].clone(), r.op.clone());
            if !order.contains(&key) {
                order.push(key.clone());
            }
            for (name, _) in METRICS {
                // fsyncs move no bytes, and end-of-mode fsyncs have no rate
                let no_rate = r.op == "fsync"
                    && (name == "mib_per_sec" || (name == "iops" && end_only.contains(&r.cell)));
                if matches!(name, "iops" | "mib_per_sec" | "lat_mean_ns" | "lat_p99_ns")
                    && !no_rate
                    && let Some(v) = metric_value(r, name)
                {
                    vals.entry((key.0.clone(), key.1.clone(), name))
                        .or_default()
                        .push(v);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (cell, op) in order {
        for name in ["iops", "mib_per_sec", "lat_mean_ns", "lat_p99_ns"] {
            if let Some(st) = vals
                .get(&(cell.clone(), op.clone(), name))
                .and_then(|v| Stat::of(v))
            {
                out.push(SummaryRow {
                    cell: cell.clone(),
                    op: op.clone(),
                    metric: name.into(),
                    stat: st,
                    noisy: st.noisy(),
                });
            }
        }
    }
    Ok(out)
}

/// `run --repeat N` with a store: the group's runs and their summary (`iolab-repeat/1`).
pub struct RepeatDoc<'a> {
    pub group: i64,
    pub run_ids: &'a [i64],
    /// The runs' stored documents, read only for JSON (the text is the summary).
    pub runs: Vec<serde_json::Value>,
    pub summary: Vec<SummaryRow>,
}

impl<'a> RepeatDoc<'a> {
    /// The group's summary from the store, and its runs' documents when `with_runs`.
    pub fn read(store: &Store, group: i64, run_ids: &'a [i64], with_runs: bool) -> Result<Self> {
        let summary = group_summary(store, run_ids)?;
        let runs = if with_runs {
            run_ids
                .iter()
                .map(|&id| store.doc(id))
                .collect::<Result<_>>()?
        } else {
            Vec::new()
        };
        Ok(RepeatDoc {
            group,
            run_ids,
            runs,
            summary,
        })
    }
}

impl crate::output::document::Document for RepeatDoc<'_> {
    fn json(&self) -> serde_json::Value {
        let warnings = noisy_repetitions(&self.summary, self.run_ids.len());
        serde_json::json!({"schema": crate::model::schema::REPEAT, "group": format!("g{}", self.group), "run_ids": self.run_ids, "runs": self.runs, "summary": self.summary, "warnings": warnings})
    }
    fn text(&self) -> Result<String> {
        let mut s = render_summary(&self.summary, self.run_ids.len());
        for w in noisy_repetitions(&self.summary, self.run_ids.len()) {
            s.push_str(&format!("warning [{}]: {}\n", w.code, w.message));
        }
        Ok(s)
    }
}

/// The repetitions' IOPS of a mode and operation varied by more than
/// [`crate::store::compare::NOISY_CV_PCT`] (coefficient of variation): said once per mode and
/// operation, with how many repetitions would bring the 95 % confidence interval of the mean to
/// about ±5 % of it (n ≈ (2 × CV / 5 %)², Student's t taken as 2), or longer ones when the run
/// already has that many.
pub fn noisy_repetitions(rows: &[SummaryRow], n: usize) -> Vec<crate::model::run::Warning> {
    use crate::store::compare::NOISY_CV_PCT;
    rows.iter()
        .filter(|r| r.metric == "iops" && r.noisy)
        .map(|r| {
            let cv = r.stat.cv_pct;
            let want = ((2.0 * cv / NOISY_CV_PCT).powi(2)).ceil() as usize;
            let ci = r
                .stat
                .ci95
                .map(|c| format!(" (95 % CI of the mean ±{:.0} %)", 100.0 * c / r.stat.mean))
                .unwrap_or_default();
            let more = if want > n {
                format!("run about {want} repetitions (--repeat {want}) to bring it to ±{NOISY_CV_PCT:.0} %, or longer ones (--time)")
            } else {
                "run longer repetitions (--time), or find what else uses the device or the CPUs (the honesty warnings of each run say)".into()
            };
            crate::model::run::Warning::new(
                "noisy_repetitions",
                format!(
                    "{} {}: IOPS varied by {cv:.1} % (coefficient of variation) over {n} repetitions{ci}, above the {NOISY_CV_PCT:.0} % that lets a change be told from noise: {more}",
                    r.cell, r.op
                ),
            )
        })
        .collect()
}

pub fn render_summary(rows: &[SummaryRow], n: usize) -> String {
    let mut t = table(vec![
        "mode", "op", "metric", "mean", "stddev", "95% CI", "CV", "",
    ]);
    let mut last = (String::new(), String::new());
    for r in rows {
        let first = (r.cell.clone(), r.op.clone()) != last;
        last = (r.cell.clone(), r.op.clone());
        let name = match r.metric.as_str() {
            "iops" => "IOPS",
            "mib_per_sec" => "MiB/s",
            "lat_mean_ns" => "lat avg",
            "lat_p99_ns" => "p99",
            m => m,
        };
        t.add_row(vec![
            if first { r.cell.clone() } else { String::new() },
            if first { r.op.clone() } else { String::new() },
            name.to_string(),
            fmt_metric(&r.metric, r.stat.mean),
            fmt_metric(&r.metric, r.stat.stddev),
            r.stat
                .ci95
                .map(|c| format!("±{}", fmt_metric(&r.metric, c)))
                .unwrap_or_else(|| "-".into()),
            format!("{:.1}%", r.stat.cv_pct),
            if r.noisy {
                "noisy".into()
            } else {
                String::new()
            },
        ]);
    }
    right(&mut t, 3);
    let mut s = format!(
        "summary of {n} repetitions (mean, sample stddev, 95% confidence interval of the mean, coefficient of variation; noisy = CV above 5%)\n"
    );
    s.push_str(&t.to_string());
    s.push('\n');
    s
}

/// A stored document in today's layout: imports stored as `iolab-import/1` (`cells[].ops[]`)
/// and Bonnie++/zones results stored as version 1 (fields without units) come out as the current
/// version, read through their types; every other document as stored.
pub fn current_doc(store: &Store, id: i64, kind: &RunKind) -> Result<serde_json::Value> {
    use crate::model::stored::{StoredDoc, SuiteDoc};
    use crate::output::document::Document;
    let mut doc = store.doc(id)?;
    match kind {
        RunKind::Import
            if doc.get("schema").and_then(|s| s.as_str()) != Some(crate::model::schema::IMPORT) =>
        {
            if let Ok(StoredDoc::Import(imp)) = store.stored_doc(id) {
                let source = doc
                    .get("source_file")
                    .and_then(|s| s.as_str())
                    .unwrap_or("");
                doc = imp.to_doc(source);
            }
        }
        RunKind::Suite => {
            if let Ok(StoredDoc::Suite(sd)) = store.stored_doc(id) {
                doc["result"] = match *sd {
                    SuiteDoc::Iozone(r) => r.json(),
                    SuiteDoc::Bonnie(r) => r.json(),
                    SuiteDoc::Zones(r) => r.json(),
                    SuiteDoc::Pts(r) => r.json(),
                    SuiteDoc::Fingerprint(r) => r.json(),
                };
            }
        }
        _ => {}
    }
    Ok(doc)
}

impl crate::output::document::Document for Comparison {
    fn json(&self) -> serde_json::Value {
        crate::output::document::to_json(self)
    }
    fn text(&self) -> Result<String> {
        Ok(render_compare(self))
    }
}

#[cfg(test)]
mod noisy_tests {
    use super::*;

    fn row(metric: &str, v: &[f64]) -> SummaryRow {
        let stat = Stat::of(v).unwrap();
        SummaryRow {
            cell: "rndrd".into(),
            op: "read".into(),
            metric: metric.into(),
            noisy: stat.noisy(),
            stat,
        }
    }

    #[test]
    fn noisy_repetitions_say_how_many_more_would_do() {
        // CV 10 %: (2 x 10 / 5)^2 = 16 repetitions
        let rows = [
            row("iops", &[900.0, 1000.0, 1100.0]),
            row("lat_p99_ns", &[1.0, 2.0, 3.0]),
        ];
        let w = noisy_repetitions(&rows, 3);
        assert_eq!(w.len(), 1, "IOPS only: {w:?}");
        assert_eq!(w[0].code, "noisy_repetitions");
        assert!(
            w[0].message.contains("IOPS varied by 10.0 %"),
            "{}",
            w[0].message
        );
        assert!(w[0].message.contains("--repeat 16"), "{}", w[0].message);
        // already that many: longer ones
        let w = noisy_repetitions(&rows, 20);
        assert!(
            w[0].message.contains("run longer repetitions"),
            "{}",
            w[0].message
        );
        // quiet: nothing
        assert!(noisy_repetitions(&[row("iops", &[1000.0, 1001.0, 999.0])], 3).is_empty());
    }
}
