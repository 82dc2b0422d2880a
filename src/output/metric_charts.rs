//! Charts drawn from the store's measurement rows (`metrics`), the one shape every stored kind
//! has: an imported fio or sysbench run, a Bonnie++ or IOZone suite, and the repetitions of a
//! group (every repetition, its mean and spread). The charts of a run itself and of experiments
//! are `crate::output::stored_charts`.

use crate::error::Result;
use crate::output::charts::{Chart, Kind, Series};
use crate::store::MetricRow;
use crate::store::Store;
use crate::store::compare::{Stat, cell_labels};

/// Percentile p (50..99.99) on a "nines" axis: 50 → 0.3, 90 → 1, 99 → 2, 99.9 → 3, 99.99 → 4.
pub fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// The x ticks of a percentile axis.
pub fn nines_ticks() -> Vec<(f64, String)> {
    [
        (50.0, "p50"),
        (90.0, "p90"),
        (95.0, "p95"),
        (99.0, "p99"),
        (99.9, "p99.9"),
        (99.99, "p99.99"),
    ]
    .iter()
    .map(|&(p, t)| (nines(p), t.to_string()))
    .collect()
}

/// A row's percentiles that the tool reported, as (nines, ms) points.
fn percentile_points(r: &MetricRow) -> Vec<(f64, f64)> {
    nines_points([
        (50.0, r.lat_p50_ns),
        (90.0, r.lat_p90_ns),
        (95.0, r.lat_p95_ns),
        (99.0, r.lat_p99_ns),
        (99.9, r.lat_p99_9_ns),
        (99.99, r.lat_p99_99_ns),
    ])
}

/// Latencies in ns at percentiles, (percentile, ns), as (nines, ms) points for a percentile
/// chart; those not known are left out.
pub fn nines_points(pts: impl IntoIterator<Item = (f64, Option<f64>)>) -> Vec<(f64, f64)> {
    pts.into_iter()
        .filter_map(|(p, v)| Some((nines(p), (v? / 1e6).max(1e-6))))
        .collect()
}

/// The charts of a stored run that is not an iolab run document (an import, a suite): IOPS and
/// MiB/s by job and operation, and the latency percentiles the tool reported.
pub fn metric_charts(store: &Store, id: i64) -> Result<Vec<Chart>> {
    let rows = store.metrics(id)?;
    let labels = cell_labels(&rows);
    let cells: Vec<i64> = labels.keys().copied().collect();
    let mut ops: Vec<&str> = Vec::new();
    for r in &rows {
        if !ops.contains(&r.op.as_str()) {
            ops.push(&r.op);
        }
    }
    let mut out = Vec::new();
    for (name, title, ylab, f) in [
        (
            "iops",
            "Operations per second by job",
            "IOPS (operations/s)",
            (|r: &MetricRow| r.iops) as fn(&MetricRow) -> f64,
        ),
        (
            "mibps",
            "Throughput by job",
            "MiB/s (1 MiB = 1048576 bytes)",
            |r| r.bytes_per_sec / 1048576.0,
        ),
    ] {
        let mut c = Chart::new(name, title, "job", ylab, Kind::Bars);
        c.categories = labels.values().cloned().collect();
        for op in &ops {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.op == *op && f(r) > 0.0)
                .filter_map(|r| Some((cells.iter().position(|&c| c == r.cell)? as f64, f(r))))
                .collect();
            if !pts.is_empty() {
                c.series.push(Series {
                    name: op.to_string(),
                    points: pts,
                });
            }
        }
        out.push(c);
    }
    let mut c = Chart::new(
        "latency-percentiles",
        "Latency percentiles (as the tool reported them)",
        "percentile",
        "latency (ms, log scale)",
        Kind::Line,
    );
    c.y_log = true;
    c.x_ticks = Some(nines_ticks());
    for r in &rows {
        let pts = percentile_points(r);
        if pts.len() >= 2 {
            c.series.push(Series {
                name: format!("{} {}", labels[&r.cell], r.op),
                points: pts,
            });
        }
    }
    out.push(c);
    Ok(out.into_iter().filter(|c| c.check().is_ok()).collect())
}

/// The charts of a group of repetitions (`run --repeat N`): each repetition's IOPS and p99 by
/// mode and operation (every one of them, numbered), and the mean with its spread (one standard
/// deviation) as bars with error marks.
pub fn repetition_charts(store: &Store, ids: &[i64]) -> Result<Vec<Chart>> {
    // (mode label, op) in first-seen order, and its rows by repetition
    let mut keys: Vec<(String, String)> = Vec::new();
    let mut per: Vec<Vec<(usize, MetricRow)>> = Vec::new();
    for (i, &id) in ids.iter().enumerate() {
        let rows = store.metrics(id)?;
        let labels = cell_labels(&rows);
        for r in rows {
            let key = (labels[&r.cell].clone(), r.op.clone());
            let at = match keys.iter().position(|k| *k == key) {
                Some(at) => at,
                None => {
                    keys.push(key);
                    per.push(Vec::new());
                    keys.len() - 1
                }
            };
            per[at].push((i, r));
        }
    }
    let n = ids.len();
    let ticks: Vec<(f64, String)> = (0..n)
        .map(|i| ((i + 1) as f64, (i + 1).to_string()))
        .collect();
    let mut out = Vec::new();
    for (name, what, ylab, f) in [
        (
            "iops",
            "IOPS",
            "IOPS (operations/s)",
            (|r: &MetricRow| (r.iops > 0.0).then_some(r.iops)) as fn(&MetricRow) -> Option<f64>,
        ),
        ("p99", "p99 latency", "p99 latency (ms)", |r| {
            r.lat_p99_ns.map(|v| v / 1e6)
        }),
    ] {
        let mut each = Chart::new(
            &format!("repetitions-{name}"),
            &format!("{what} of every repetition ({n})"),
            "repetition",
            ylab,
            Kind::Line,
        );
        each.x_ticks = Some(ticks.clone());
        let mut mean = Chart::new(
            &format!("repetitions-{name}-mean"),
            &format!("{what}: mean of {n} repetitions, ± one standard deviation"),
            "mode and operation",
            ylab,
            Kind::Bars,
        );
        let mut pts = Vec::new();
        let mut errs = Vec::new();
        for ((label, op), rows) in keys.iter().zip(&per) {
            let vals: Vec<(usize, f64)> =
                rows.iter().filter_map(|(i, r)| Some((*i, f(r)?))).collect();
            if vals.is_empty() {
                continue;
            }
            let series = format!("{label} {op}");
            each.series.push(Series {
                name: series.clone(),
                points: vals.iter().map(|&(i, v)| ((i + 1) as f64, v)).collect(),
            });
            let v: Vec<f64> = vals.iter().map(|p| p.1).collect();
            if let Some(st) = Stat::of(&v) {
                pts.push((mean.categories.len() as f64, st.mean));
                errs.push(Some(st.stddev));
                mean.categories.push(series);
            }
        }
        if each.series.len() <= 4 {
            // each line's mean beside it
            for s in &each.series {
                let v: Vec<f64> = s.points.iter().map(|p| p.1).collect();
                if let Some(st) = Stat::of(&v) {
                    each.hlines.push((
                        format!(
                            "{} mean {}",
                            s.name,
                            crate::output::charts::fmt_num(st.mean)
                        ),
                        st.mean,
                    ));
                }
            }
        }
        mean.series.push(Series {
            name: "mean".into(),
            points: pts,
        });
        mean.errors = vec![errs];
        out.push(each);
        out.push(mean);
    }
    Ok(out.into_iter().filter(|c| c.check().is_ok()).collect())
}
