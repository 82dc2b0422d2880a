//! Experiments as text: a sweep's matrices and a saturation search's table and verdict.

use crate::model::experiment::*;
use crate::workloads::sweep::{cross, metric};

/// The result as matrices: rows × cols of `metric`, one matrix per combination of the other axes.
pub fn render_matrix(spec: &SweepSpec, cells: &[CellOut]) -> String {
    let names: Vec<&str> = spec.axes.iter().map(|a| a.name.as_str()).collect();
    let rows = spec
        .rows
        .clone()
        .or_else(|| names.first().map(|s| s.to_string()));
    let cols = spec.cols.clone().or_else(|| {
        names
            .iter()
            .find(|n| Some(n.to_string()) != rows)
            .map(|s| s.to_string())
    });
    let others: Vec<&Axis> = spec
        .axes
        .iter()
        .filter(|a| Some(&a.name) != rows.as_ref() && Some(&a.name) != cols.as_ref())
        .collect();
    let unit = match spec.metric.as_str() {
        "iops" | "mibps" | "cpu" => crate::workloads::sweep::metric_unit(&spec.metric),
        "mean" | "lat_avg" => "ms (over reads and writes)",
        _ => "ms (worst of reads and writes)",
    };
    let mut s = String::new();
    for combo in cross(&others.iter().map(|a| (*a).clone()).collect::<Vec<_>>()) {
        let title: Vec<String> = combo.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!(
            "{} in {unit}{}\n",
            spec.metric,
            if title.is_empty() {
                String::new()
            } else {
                format!(", {}", title.join(" "))
            }
        ));
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
        let rvals = rows
            .as_ref()
            .and_then(|r| spec.axes.iter().find(|a| &a.name == r))
            .map(|a| a.values.clone())
            .unwrap_or_else(|| vec![String::new()]);
        let cvals = cols
            .as_ref()
            .and_then(|c| spec.axes.iter().find(|a| &a.name == c))
            .map(|a| a.values.clone())
            .unwrap_or_else(|| vec![String::new()]);
        // one axis: a column named by the axis and one named by the metric
        let mut header = match &cols {
            Some(c) => vec![format!("{} \\ {c}", rows.clone().unwrap_or_default())],
            None => vec![rows.clone().unwrap_or_default()],
        };
        if cols.is_some() {
            header.extend(cvals.iter().cloned());
        } else {
            header.push(spec.metric.clone());
        }
        t.set_header(header);
        for rv in &rvals {
            let mut row = vec![rv.clone()];
            for cv in &cvals {
                let v = cells.iter().find(|c| {
                    rows.as_ref().is_none_or(|r| c.cell.get(r) == Some(rv))
                        && cols.as_ref().is_none_or(|k| c.cell.get(k) == Some(cv))
                        && combo.iter().all(|(k, v)| c.cell.get(k) == Some(v))
                });
                row.push(match v.and_then(|c| metric(&c.figures, &spec.metric)) {
                    Some(x) if spec.metric == "iops" => format!("{x:.0}"),
                    Some(x) => format!("{x:.2}"),
                    None => "-".into(),
                });
            }
            t.add_row(row);
        }
        for i in 1..=cvals.len() {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(comfy_table::CellAlignment::Right);
            }
        }
        s.push_str(&t.to_string());
        s.push('\n');
    }
    s
}

pub fn render_saturate(spec: &SaturateSpec, points: &[Point]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        spec.axis.clone(),
        "run".into(),
        "IOPS".into(),
        "MiB/s".into(),
        "p99 ms".into(),
        spec.target.metric.clone(),
        "target".into(),
    ]);
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.value);
    let show = |x: u64| {
        if spec.axis == "size" {
            crate::model::units::Bytes(x).to_string()
        } else {
            x.to_string()
        }
    };
    for p in &pts {
        t.add_row(vec![
            show(p.value),
            p.run_id.to_string(),
            format!("{:.0}", p.figures.iops),
            format!("{:.2}", p.figures.mibps),
            format!("{:.2}", p.figures.p99_ms),
            format!(
                "{:.3}",
                metric(&p.figures, &spec.target.metric).unwrap_or(0.0)
            ),
            if p.passed {
                "met".into()
            } else {
                "missed".into()
            },
        ]);
    }
    let tgt = format!(
        "{}{}{}{}",
        spec.target.metric,
        spec.target.op,
        spec.target.value,
        if matches!(spec.target.metric.as_str(), "iops" | "mibps") {
            ""
        } else {
            "ms"
        }
    );
    use crate::workloads::sweep::Outcome;
    let a = &spec.axis;
    let verdict = match crate::workloads::sweep::outcome(&pts) {
        Outcome::MetBelow { held, fails } => format!(
            "{tgt} holds up to {a}={} and fails from {} on",
            show(held),
            show(fails)
        ),
        Outcome::MetAbove { missed, met } => format!(
            "{tgt} is missed up to {a}={} and met from {} on (it gets easier as {a} grows: the search went up)",
            show(missed),
            show(met)
        ),
        Outcome::MetEverywhere { lo, hi } if lo == hi => {
            format!("{tgt} holds at {a}={}", show(lo))
        }
        Outcome::MetEverywhere { lo, hi } => format!(
            "{tgt} holds over the whole range ({a}={} to {}): no boundary inside it",
            show(lo),
            show(hi)
        ),
        Outcome::MissedEverywhere { lo, hi } if lo == hi => {
            format!("{tgt} fails at {a}={}", show(lo))
        }
        Outcome::MissedEverywhere { lo, hi } => format!(
            "{tgt} fails over the whole range ({a}={} and {} both measured): no boundary inside it",
            show(lo),
            show(hi)
        ),
        Outcome::NoPoint => "no point was measured".into(),
    };
    format!("{t}\n{verdict}\n")
}
