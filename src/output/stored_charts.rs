//! The charts of every stored kind (runs, database runs, zones, sweeps, saturation searches,
//! comparisons), from the same stored documents as `iolab show`; drawn by `crate::output::charts`.

use crate::error::{Error, Result};
use crate::model::run::RunDoc;
use crate::output::charts::{Chart, Kind, Series};
use crate::store::Store;
use crate::store::compare::{Comparison, cell_labels};

use crate::output::metric_charts::{nines, nines_points, nines_ticks};

/// Mode labels of a run's cells, as `compare` names them.
fn labels(doc: &RunDoc) -> Vec<String> {
    let mut count = std::collections::BTreeMap::new();
    for c in &doc.runs {
        *count.entry(c.mode.clone()).or_insert(0) += 1;
    }
    doc.runs
        .iter()
        .map(|c| {
            if count[&c.mode] > 1 {
                format!("{}/{}t/{}", c.mode, c.job.job.threads, c.job.job.bs_label())
            } else {
                c.mode.clone()
            }
        })
        .collect()
}

/// The charts of one stored run (file run or database run).
pub fn run_charts(store: &Store, id: i64) -> Result<Vec<Chart>> {
    use crate::model::stored::{StoredDoc, SuiteDoc};
    let doc = match store.stored_doc(id)? {
        StoredDoc::Run(d) => *d,
        StoredDoc::Db(_) => return db_charts(store, id),
        StoredDoc::Suite(sd) => {
            if let SuiteDoc::Pts(p) = &*sd {
                return Ok(crate::output::pts::pts_charts(p));
            }
            if let SuiteDoc::Fingerprint(f) = &*sd {
                return Ok(crate::output::capture::fingerprint_charts(f));
            }
            let SuiteDoc::Zones(z) = *sd else {
                // Bonnie++ and IOZone: their rows in the one measurement shape
                return crate::output::metric_charts::metric_charts(store, id);
            };
            let mut c = Chart::new(
                "zones",
                &format!("Read throughput across {}", z.target),
                "offset into the target (%)",
                "MiB/s",
                Kind::Line,
            );
            c.series.push(Series {
                name: "MiB/s".into(),
                points: z
                    .zones
                    .iter()
                    .map(|x| (x.offset_pct, x.mib_per_sec))
                    .collect(),
            });
            return Ok(vec![c].into_iter().filter(|c| c.check().is_ok()).collect());
        }
        StoredDoc::Import(_) => return crate::output::metric_charts::metric_charts(store, id),
        StoredDoc::Experiment(_) | StoredDoc::Crashcheck(_) | StoredDoc::Verify(_) => {
            return Ok(Vec::new());
        }
    };
    // A phase of concurrent roles: one series per role, numbered as the store numbers them.
    let doc = RunDoc {
        runs: crate::output::table::shown_cells(&doc.runs),
        ..doc
    };
    let names = labels(&doc);
    let mut out = Vec::new();
    for (name, title, ylab, f) in [
        (
            "iops",
            "Operations per second by mode",
            "IOPS (operations/s)",
            (|r: &crate::model::run::OpResult| r.iops) as fn(&crate::model::run::OpResult) -> f64,
        ),
        (
            "mibps",
            "Throughput by mode",
            "MiB/s (1 MiB = 1048576 bytes)",
            |r| r.bytes_per_sec / 1048576.0,
        ),
    ] {
        let mut c = Chart::new(name, title, "mode", ylab, Kind::Bars);
        c.categories = names.clone();
        for (op, g) in [("read", 0usize), ("write", 1), ("fsync", 2)] {
            if name == "mibps" && op == "fsync" {
                continue;
            }
            let pts: Vec<(f64, f64)> = doc
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, cell)| {
                    let r = match g {
                        0 => &cell.results.read,
                        1 => &cell.results.write,
                        _ => &cell.results.fsync,
                    };
                    (r.ops > 0).then(|| (i as f64, f(r)))
                })
                .collect();
            if !pts.is_empty() {
                c.series.push(Series {
                    name: op.into(),
                    points: pts,
                });
            }
        }
        out.push(c);
    }
    // latency percentile curves
    let mut c = Chart::new(
        "latency-percentiles",
        "Latency percentiles",
        "percentile",
        "latency (ms, log scale)",
        Kind::Line,
    );
    c.y_log = true;
    c.x_ticks = Some(nines_ticks());
    for (i, cell) in doc.runs.iter().enumerate() {
        for (op, r) in [
            ("read", &cell.results.read),
            ("write", &cell.results.write),
            ("fsync", &cell.results.fsync),
        ] {
            if let Some(points) = percentile_curve(store, id, i, op, r)? {
                c.series.push(Series {
                    name: format!("{} {op}", names[i]),
                    points,
                });
            }
        }
    }
    out.push(c);
    // histograms from the stored HDR histograms
    let mut c = Chart::new(
        "latency-histogram",
        "Latency distribution",
        "latency (ms, log scale)",
        "operations per bucket",
        Kind::Line,
    );
    c.x_log = true;
    for (i, _) in doc.runs.iter().enumerate() {
        for op in ["read", "write", "fsync"] {
            if let Some(h) = store.histogram(id, i as i64, op)? {
                let lo = h.h.min().max(1);
                let pts: Vec<(f64, f64)> =
                    h.h.iter_log(lo, 1.25)
                        .map(|v| {
                            (
                                v.value_iterated_to() as f64 / 1e6,
                                v.count_since_last_iteration() as f64,
                            )
                        })
                        .filter(|p| p.0 > 0.0)
                        .collect();
                if !pts.is_empty() {
                    c.series.push(Series {
                        name: format!("{} {op}", names[i]),
                        points: pts,
                    });
                }
            }
        }
    }
    if !c.series.is_empty() {
        out.push(c);
    }
    out.extend(steady_charts(&doc, &names));
    // time series
    for (name, title, ylab) in [
        ("timeseries-iops", "IOPS over time", "IOPS (operations/s)"),
        ("timeseries-mibps", "Throughput over time", "MiB/s"),
        (
            "timeseries-p99",
            "p99 latency over time",
            "p99 latency (ms)",
        ),
    ] {
        let mut c = Chart::new(
            name,
            title,
            "time since the end of the ramp (s)",
            ylab,
            Kind::Line,
        );
        for (i, cell) in doc.runs.iter().enumerate() {
            let pts: Vec<(f64, f64)> = cell
                .timeseries
                .iter()
                .map(|p| {
                    let ops = [&p.read, &p.write];
                    let v = match name {
                        "timeseries-iops" => {
                            ops.iter().filter_map(|o| o.as_ref()).map(|o| o.iops).sum()
                        }
                        "timeseries-mibps" => {
                            ops.iter()
                                .filter_map(|o| o.as_ref())
                                .map(|o| o.bytes_per_sec)
                                .sum::<f64>()
                                / 1048576.0
                        }
                        _ => {
                            ops.iter()
                                .filter_map(|o| o.as_ref().and_then(|o| o.p99_ns))
                                .max()
                                .unwrap_or(0) as f64
                                / 1e6
                        }
                    };
                    (p.t_s + p.dur_s, v)
                })
                .collect();
            if !pts.is_empty() {
                c.series.push(Series {
                    name: names[i].clone(),
                    points: pts,
                });
            }
        }
        out.push(c);
    }
    // what iolab did and what the device was asked, second by second, on one axis: iolab's
    // reads and writes per second beside the device's r/s and w/s (iostat's columns)
    let mut c = Chart::new(
        "device-iops",
        "Operations per second: iolab and the device",
        "time since the end of the ramp (s)",
        "operations per second",
        Kind::Line,
    );
    for (i, cell) in doc.runs.iter().enumerate() {
        for (op, w) in [("reads", 0), ("writes", 1)] {
            let pts: Vec<(f64, f64)> = cell
                .timeseries
                .iter()
                .filter_map(|p| {
                    let o = if w == 0 { &p.read } else { &p.write };
                    o.as_ref().map(|o| (p.t_s + p.dur_s, o.iops))
                })
                .collect();
            if pts.iter().any(|p| p.1 > 0.0) {
                c.series.push(Series {
                    name: format!("{} iolab {op}/s", names[i]),
                    points: pts,
                });
            }
        }
        let Some(d) = &cell.device else { continue };
        let Some(dev) = d.devices.first() else {
            continue;
        };
        for (col, w) in [("r/s", 0), ("w/s", 1)] {
            let pts: Vec<(f64, f64)> = d
                .timeseries
                .iter()
                .filter_map(|s| {
                    let x = s.devices.get(dev)?;
                    Some((s.t_s, if w == 0 { x.r_s } else { x.w_s }))
                })
                .collect();
            if pts.iter().any(|p| p.1 > 0.0) {
                c.series.push(Series {
                    name: format!("{} {dev} {col}", names[i]),
                    points: pts,
                });
            }
        }
    }
    if c.series.len() > 1 {
        out.push(c);
    }
    // the device on the same time axis
    for (name, title, ylab) in [
        ("device-util", "Device utilization", "%util"),
        ("device-await", "Device await", "await (ms)"),
        ("device-queue", "Device queue size", "aqu-sz (requests)"),
    ] {
        let mut c = Chart::new(
            name,
            title,
            "time since the end of the ramp (s)",
            ylab,
            Kind::Line,
        );
        for (i, cell) in doc.runs.iter().enumerate() {
            let Some(d) = &cell.device else { continue };
            let Some(dev) = d.devices.first() else {
                continue;
            };
            let pts: Vec<(f64, f64)> = d
                .timeseries
                .iter()
                .filter_map(|s| {
                    let x = s.devices.get(dev)?;
                    Some((
                        s.t_s,
                        match name {
                            "device-util" => x.util_pct,
                            "device-await" => x.r_await_ms.max(x.w_await_ms),
                            _ => x.aqu_sz,
                        },
                    ))
                })
                .collect();
            if !pts.is_empty() {
                c.series.push(Series {
                    name: format!("{} {dev}", names[i]),
                    points: pts,
                });
            }
        }
        if !c.series.is_empty() {
            out.push(c);
        }
    }
    Ok(out.into_iter().filter(|c| c.check().is_ok()).collect())
}

fn db_charts(store: &Store, id: i64) -> Result<Vec<Chart>> {
    let d: crate::workloads::db::DbDoc = serde_json::from_value(store.doc(id)?)
        .map_err(|e| Error::failed(format!("run {id}: {e}")))?;
    let mut out = Vec::new();
    let types: Vec<String> = d.types.keys().cloned().collect();
    let mut c = Chart::new(
        "tps",
        "Transactions and queries per second",
        "transaction type",
        "per second",
        Kind::Bars,
    );
    c.categories = types.clone();
    c.series.push(Series {
        name: "TPS".into(),
        points: d
            .types
            .values()
            .enumerate()
            .map(|(i, t)| (i as f64, t.tps))
            .collect(),
    });
    c.series.push(Series {
        name: "QPS".into(),
        points: vec![(0.0, d.qps)],
    });
    out.push(c);
    let mut c = Chart::new(
        "db-latency",
        "Transaction latency",
        "transaction type",
        "latency (ms)",
        Kind::Bars,
    );
    c.categories = types;
    for (name, f) in [
        (
            "p50",
            (|l: &crate::model::lat::LatSummary| l.p50)
                as fn(&crate::model::lat::LatSummary) -> u64,
        ),
        ("p95", |l| l.p95),
        ("p99", |l| l.p99),
    ] {
        c.series.push(Series {
            name: name.into(),
            points: d
                .types
                .values()
                .enumerate()
                .filter_map(|(i, t)| t.lat_ns.as_ref().map(|l| (i as f64, f(l) as f64 / 1e6)))
                .collect(),
        });
    }
    out.push(c);
    if !d.timeseries.is_empty() {
        let mut c = Chart::new(
            "db-timeseries",
            "Transactions per second over time",
            "time (s)",
            "TPS",
            Kind::Line,
        );
        c.series.push(Series {
            name: "TPS".into(),
            points: d.timeseries.iter().map(|p| (p.t_s + 1.0, p.tps)).collect(),
        });
        out.push(c);
    }
    if let Some(u) = &d.update_loop
        && !u.timings_s.is_empty()
    {
        // log-spaced bins from the fastest to the slowest update
        let (lo, hi) = (u.min_s.max(1e-7), u.max_s.max(u.min_s * 1.01).max(1e-7));
        let bins = 40usize;
        let f = (hi / lo).powf(1.0 / bins as f64);
        let mut counts = vec![0u64; bins + 1];
        for t in &u.timings_s {
            let i = ((t.max(lo) / lo).ln() / f.ln()).floor() as usize;
            counts[i.min(bins)] += 1;
        }
        let mut c = Chart::new(
            "update-loop-histogram",
            "Update loop: time per UPDATE",
            "time per UPDATE (ms, log scale)",
            "UPDATEs",
            Kind::Line,
        );
        c.x_log = true;
        c.series.push(Series {
            name: "updates".into(),
            points: counts
                .iter()
                .enumerate()
                .map(|(i, n)| (lo * f.powi(i as i32) * 1e3, *n as f64))
                .collect(),
        });
        c.hlines = vec![];
        out.push(c);
    }
    Ok(out.into_iter().filter(|c| c.check().is_ok()).collect())
}

/// Charts of a comparison: grouped bars per mode and op with % change labels and noise marks.
pub fn compare_charts(c: &Comparison) -> Vec<Chart> {
    let mut out = Vec::new();
    for (metric, name, title, ylab) in [
        (
            "iops",
            "compare-iops",
            "IOPS against the baseline",
            "IOPS (operations/s)",
        ),
        (
            "mib_per_sec",
            "compare-mibps",
            "Throughput against the baseline",
            "MiB/s",
        ),
        (
            "lat_p99_ns",
            "compare-p99",
            "p99 latency against the baseline",
            "p99 latency (ms)",
        ),
    ] {
        // fsyncs move no bytes, and end-of-mode fsyncs (stored with a rate of 0) have no rate
        let no_rate = |r: &crate::store::compare::Row| {
            r.op == "fsync"
                && (metric == "mib_per_sec"
                    || (metric == "iops"
                        && r.sides
                            .iter()
                            .any(|x| x.stat.is_some_and(|s| s.mean == 0.0))))
        };
        let rows: Vec<&crate::store::compare::Row> = c
            .rows
            .iter()
            .filter(|r| r.metric == metric && !no_rate(r))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let scale = if metric.ends_with("_ns") { 1e-6 } else { 1.0 };
        let mut ch = Chart::new(name, title, "mode and operation", ylab, Kind::Bars);
        ch.categories = rows
            .iter()
            .map(|r| format!("{} {}", r.cell, r.op))
            .collect();
        for (si, side) in c.sides.iter().enumerate() {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.sides[si].stat.map(|s| (i as f64, s.mean * scale)))
                .collect();
            ch.series.push(Series {
                name: format!(
                    "{}{}",
                    side.reference,
                    side.label
                        .as_ref()
                        .map(|l| format!(" ({l})"))
                        .unwrap_or_default()
                ),
                points: pts,
            });
            ch.errors.push(
                rows.iter()
                    .map(|r| r.sides[si].stat.and_then(|s| s.ci95).map(|x| x * scale))
                    .collect(),
            );
            ch.bar_labels.push(
                rows.iter()
                    .map(|r| {
                        let cmp = &r.sides[si];
                        cmp.delta_pct.map(|d| {
                            let mark = match cmp.verdict.as_str() {
                                "significant" => "*",
                                "within noise" => " ~",
                                _ => "",
                            };
                            format!("{d:+.1}%{mark}")
                        })
                    })
                    .collect(),
            );
        }
        out.push(ch);
    }
    out.into_iter().filter(|c| c.check().is_ok()).collect()
}

/// A comparison's charts ([`compare_charts`]) and its latency distributions overlaid: each
/// side's percentile curve per mode and operation from its first run's stored HDR histograms
/// (sides without them, an import say, are left out of that chart).
pub fn compare_charts_with_curves(store: &Store, c: &Comparison) -> Result<Vec<Chart>> {
    use crate::model::stored::StoredDoc;
    let mut out = compare_charts(c);
    let mut ch = Chart::new(
        "compare-latency-percentiles",
        "Latency percentiles, overlaid",
        "percentile",
        "latency (ms, log scale)",
        Kind::Line,
    );
    ch.y_log = true;
    ch.x_ticks = Some(nines_ticks());
    for side in &c.sides {
        let Some(&id) = side.run_ids.first() else {
            continue;
        };
        let StoredDoc::Run(doc) = store.stored_doc(id)? else {
            continue;
        };
        let names = labels(&doc);
        for (i, cell) in doc.runs.iter().enumerate() {
            for (op, r) in [
                ("read", &cell.results.read),
                ("write", &cell.results.write),
                ("fsync", &cell.results.fsync),
            ] {
                if let Some(points) = percentile_curve(store, id, i, op, r)? {
                    ch.series.push(Series {
                        name: format!("{} {} {op}", side.reference, names[i]),
                        points,
                    });
                }
            }
        }
    }
    if ch.check().is_ok() {
        out.push(ch);
    }
    Ok(out)
}

/// Labels of the modes of a stored run (for other modules).
pub fn mode_labels(store: &Store, id: i64) -> Result<Vec<String>> {
    Ok(cell_labels(&store.metrics(id)?).into_values().collect())
}

/// SNIA PTS's steady-state plot of each `--steady-state` mode: every round's tracked figure, and
/// over the measurement window (its last rounds) the average, 110 % and 90 % of it (the data
/// excursion PTS allows, ±half its range limit) and the best-fit line.
fn steady_charts(doc: &RunDoc, names: &[String]) -> Vec<Chart> {
    use crate::model::steady::SteadyMetric;
    let mut out = Vec::new();
    for (i, cell) in doc.runs.iter().enumerate() {
        let (Some(spec), Some(st)) = (cell.job.job.timing.steady.as_ref(), cell.steady.first())
        else {
            continue;
        };
        let (Some(p), Some(avg)) = (spec.pts, st.window_avg) else {
            continue;
        };
        let bw = spec.metric == SteadyMetric::Bw;
        let unit = |v: f64| if bw { v / 1048576.0 } else { v };
        let all: Vec<f64> = if bw {
            &st.rounds_bw_bytes_per_sec
        } else {
            &st.rounds_iops
        }
        .iter()
        .map(|&v| unit(v as f64))
        .collect();
        let (what, ylab) = if bw {
            ("MiB/s", "MiB/s (1 MiB = 1048576 bytes)")
        } else {
            ("IOPS", "IOPS (operations/s)")
        };
        let name = if doc.runs.len() == 1 {
            "steady-state".to_string()
        } else {
            format!("steady-state-{}", i + 1)
        };
        let title = format!(
            "Steady state of {} (SNIA PTS: {} % range, {} % slope, rounds of {} s)",
            names[i], p.range_pct, p.slope_pct, spec.round_s
        );
        out.extend(crate::output::pts::steady_chart(
            &name,
            &title,
            ylab,
            what,
            &all,
            spec.window_s as usize,
            unit(avg),
            p.range_pct,
        ));
    }
    out
}

/// The percentile curve of one operation of a run's mode `cell`: the whole curve from its
/// stored HDR histogram, else the percentiles its document keeps; None when it has neither.
fn percentile_curve(
    store: &Store,
    id: i64,
    cell: usize,
    op: &str,
    r: &crate::model::run::OpResult,
) -> Result<Option<Vec<(f64, f64)>>> {
    Ok(match store.histogram(id, cell as i64, op)? {
        Some(h) if !h.h.is_empty() => Some(hdr_curve(&h.h)),
        _ => r.lat_ns.as_ref().map(stored_percentiles),
    })
}

/// The percentiles a run document keeps (p50 to p99.99), as (nines, ms) points: the curve of a
/// run stored without its histograms.
fn stored_percentiles(l: &crate::model::run::LatSummary) -> Vec<(f64, f64)> {
    nines_points(
        [
            (50.0, l.p50),
            (90.0, l.p90),
            (95.0, l.p95),
            (99.0, l.p99),
            (99.9, l.p99_9),
            (99.99, l.p99_99),
        ]
        .map(|(p, v)| (p, Some(v as f64))),
    )
}

/// Percentiles of an HDR histogram as a curve on a "nines" axis (HdrHistogram's percentile
/// distribution): from p50 one point per half-nine out to where the samples end (the last
/// percentile with at least one sample above it), then the maximum; (nines, ms).
pub fn hdr_curve(h: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    let n = h.len().max(1) as f64;
    let mut out = Vec::new();
    let mut tail = 0.5f64; // 1 − p
    while tail * n >= 1.0 {
        let p = 100.0 * (1.0 - tail);
        out.push((
            nines(p),
            (h.value_at_quantile(1.0 - tail) as f64 / 1e6).max(1e-6),
        ));
        tail /= 10f64.sqrt();
    }
    out.push((
        nines(100.0 * (1.0 - 1.0 / n)).max(out.last().map_or(0.0, |l| l.0) + 0.1),
        (h.max() as f64 / 1e6).max(1e-6),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::hdr_curve;
    use crate::output::metric_charts::nines;

    /// The curve of 10,000 latencies of 1..=10,000 µs: p50 first, then every half-nine from
    /// there while a sample lies above it, then the maximum.
    #[test]
    fn an_hdr_curve_runs_from_the_median_to_the_maximum() {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for us in 1..=10_000u64 {
            h.record(us * 1000).unwrap();
        }
        let c = hdr_curve(&h);
        assert!((c[0].0 - nines(50.0)).abs() < 1e-9);
        assert!((c[0].1 - 5.0).abs() < 0.01, "{c:?}");
        assert!(
            c.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
            "{c:?}"
        );
        let last = c[c.len() - 1];
        assert!((last.1 - 10.0).abs() < 0.01, "{c:?}");
        // p50, p84.2, p95, p98.4, p99.5, p99.84, p99.95, p99.984 and the maximum
        assert_eq!(c.len(), 9, "{c:?}");
    }
}
