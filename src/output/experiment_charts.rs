//! The charts of an experiment: a sweep's metric and its latency over each axis (with the knee
//! marked), a saturation search's curve with its target and the boundary it found.

use crate::error::{Error, Result};
use crate::output::charts::{Chart, Kind, Series, fmt_num};
use crate::store::Store;
use std::collections::BTreeMap;

/// Charts of an experiment: a line per combination of the other axes, over each axis; or the
/// saturation curve with its target and the point found.
/// A sweep's charts (`metric`: the one to chart instead of the sweep's own), a saturation
/// search's curve.
pub fn experiment_charts(store: &Store, gid: i64, metric: Option<&str>) -> Result<Vec<Chart>> {
    let (kind, spec) = store.experiment(gid)?;
    let spec = spec.ok_or_else(|| Error::failed(format!("g{gid}: no definition")))?;
    let mut out = Vec::new();
    if kind == crate::model::stored::GroupKind::Sweep {
        let mut spec: crate::workloads::sweep::SweepSpec =
            serde_json::from_value(spec).map_err(|e| Error::failed(e.to_string()))?;
        if let Some(m) = metric {
            spec.metric = m.to_string();
        }
        let cells = crate::workloads::sweep::stored_cells(store, gid, &spec)?;
        let unit = crate::workloads::sweep::metric_unit(&spec.metric);
        for ax in &spec.axes {
            let numeric = ax
                .values
                .iter()
                .all(|v| crate::model::units::parse_size(v).is_ok());
            let xval = |v: &str| {
                if numeric {
                    crate::model::units::parse_size(v).unwrap_or(0) as f64
                } else {
                    ax.values.iter().position(|x| x == v).unwrap_or(0) as f64
                }
            };
            let others: Vec<crate::workloads::sweep::Axis> = spec
                .axes
                .iter()
                .filter(|a| a.name != ax.name)
                .cloned()
                .collect();
            let mut c = Chart::new(
                &format!("sweep-{}", ax.name),
                &format!("{} by {}", spec.metric, ax.name),
                &ax.name,
                unit,
                if numeric { Kind::Line } else { Kind::Bars },
            );
            if numeric {
                c.x_ticks = Some(ax.values.iter().map(|v| (xval(v), v.clone())).collect());
                if ax.values.len() > 2
                    && ax.values.iter().all(|v| xval(v) > 0.0)
                    && xval(&ax.values[ax.values.len() - 1]) / xval(&ax.values[0]) >= 8.0
                {
                    c.x_log = true;
                }
            } else {
                c.categories = ax.values.clone();
            }
            // one combination of the other axes: a metric's points along this axis
            let points = |combo: &BTreeMap<String, String>, m: &str| -> Vec<(f64, f64)> {
                ax.values
                    .iter()
                    .filter_map(|v| {
                        let cell = cells.iter().find(|c| {
                            c.cell.get(&ax.name) == Some(v)
                                && combo.iter().all(|(k, vv)| c.cell.get(k) == Some(vv))
                        })?;
                        Some((xval(v), crate::workloads::sweep::metric(&cell.figures, m)?))
                    })
                    .collect()
            };
            // beside a throughput, what it cost in latency: p50, p99 and p99.9 by the same
            // axis, and the knee of each line (where more of the axis buys latency, not
            // throughput) marked on both charts
            let mut lat = c.clone();
            lat.name = format!("sweep-{}-latency", ax.name);
            lat.title = format!("latency (p50, p99, p99.9) by {}", ax.name);
            lat.y_label = "latency (ms, worst of reads and writes)".into();
            let throughput = matches!(spec.metric.as_str(), "iops" | "mibps");
            for combo in crate::workloads::sweep::cross(&others) {
                let name: Vec<String> = combo.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let pts = points(&combo, &spec.metric);
                if numeric && throughput {
                    // the points where both the throughput and p99 are known
                    let p99 = points(&combo, "p99");
                    let curve: Vec<(f64, f64, f64)> = pts
                        .iter()
                        .filter_map(|&(x, t)| Some((x, t, p99.iter().find(|q| q.0 == x)?.1)))
                        .collect();
                    if let Some(k) = knee(&curve) {
                        let (x, y, p99) = curve[k];
                        let label = format!("knee: {}={}", ax.name, fmt_num(x));
                        c.markers.push((label.clone(), x, y));
                        lat.markers.push((label, x, p99));
                    }
                }
                if !pts.is_empty() {
                    c.series.push(Series {
                        name: if name.is_empty() {
                            spec.metric.clone()
                        } else {
                            name.join(" ")
                        },
                        points: pts,
                    });
                }
                for p in ["p50", "p99", "p99.9"] {
                    let pts = points(&combo, p);
                    if !pts.is_empty() {
                        let mut n = name.clone();
                        n.push(p.into());
                        lat.series.push(Series {
                            name: n.join(" "),
                            points: pts,
                        });
                    }
                }
            }
            // the tail is often 10-100x the median: a log axis keeps p50 readable beside it
            if lat
                .series
                .iter()
                .all(|s| s.points.iter().all(|p| p.1 > 0.0))
            {
                lat.y_log = true;
                lat.y_label = "latency (ms, log scale, worst of reads and writes)".into();
            }
            out.push(c);
            if matches!(spec.metric.as_str(), "iops" | "mibps" | "cpu") {
                out.push(lat);
            }
        }
    } else if kind == crate::model::stored::GroupKind::Saturate {
        let spec: crate::workloads::sweep::SaturateSpec =
            serde_json::from_value(spec).map_err(|e| Error::failed(e.to_string()))?;
        let points = crate::workloads::sweep::stored_points(store, gid, &spec)?;
        let boundary = crate::workloads::sweep::outcome(&points).boundary();
        let pts: Vec<(f64, f64, bool)> = points
            .iter()
            .map(|p| {
                (
                    p.value as f64,
                    crate::workloads::sweep::metric(&p.figures, &spec.target.metric)
                        .unwrap_or(f64::NAN),
                    p.passed,
                )
            })
            .collect();
        let unit = if matches!(spec.target.metric.as_str(), "iops" | "mibps") {
            spec.target.metric.clone()
        } else {
            format!("{} (ms)", spec.target.metric)
        };
        let xlab = if spec.axis == "size" {
            "data size (bytes)".to_string()
        } else {
            spec.axis.clone()
        };
        let mut c = Chart::new(
            "saturation",
            &format!(
                "Saturation search: {} over {}",
                spec.target.metric, spec.axis
            ),
            &xlab,
            &unit,
            Kind::Line,
        );
        c.series.push(Series {
            name: spec.target.metric.clone(),
            points: pts.iter().map(|p| (p.0, p.1)).collect(),
        });
        let unit_suffix = if matches!(spec.target.metric.as_str(), "iops" | "mibps") {
            ""
        } else {
            " ms"
        };
        c.hlines.push((
            format!(
                "target {}{}{}{unit_suffix}",
                spec.target.metric, spec.target.op, spec.target.value
            ),
            spec.target.value,
        ));
        // the boundary the search found: the largest value that meets the target, or the
        // smallest when it gets easier as the value grows
        if let Some(p) = pts.iter().find(|p| Some(p.0 as u64) == boundary) {
            c.markers.push((
                format!(
                    "boundary: {}",
                    if spec.axis == "size" {
                        crate::model::units::Bytes(p.0 as u64).to_string()
                    } else {
                        crate::output::charts::fmt_num(p.0)
                    }
                ),
                p.0,
                p.1,
            ));
        }
        out.push(c);
    }
    Ok(out.into_iter().filter(|c| c.check().is_ok()).collect())
}

/// A sweep's knee: the first value after which the next step adds less than
/// [`KNEE_MIN_GAIN`] of throughput while p99 grows by at least [`KNEE_MIN_P99_RISE`] (more of
/// the axis then buys latency, not throughput). `curve`: (axis value, throughput, p99) in the
/// axis' order. None when every step still pays, or with fewer than three points.
pub fn knee(curve: &[(f64, f64, f64)]) -> Option<usize> {
    if curve.len() < 3 {
        return None;
    }
    curve.windows(2).position(|w| {
        let ((_, t0, l0), (_, t1, l1)) = (w[0], w[1]);
        t0 > 0.0
            && l0 > 0.0
            && t1 < t0 * (1.0 + KNEE_MIN_GAIN)
            && l1 >= l0 * (1.0 + KNEE_MIN_P99_RISE)
    })
}

/// The throughput gain of a step below which a sweep's curve has turned (10 %).
pub const KNEE_MIN_GAIN: f64 = 0.10;
/// The p99 rise of that step that marks the knee (50 %).
pub const KNEE_MIN_P99_RISE: f64 = 0.50;

#[cfg(test)]
mod tests {
    use super::knee;

    #[test]
    fn the_knee_is_where_throughput_stops_paying_for_latency() {
        // threads 1, 2, 4, 8, 16: IOPS doubles to 4 threads, then flat while p99 climbs
        let c = [
            (1.0, 1000.0, 1.0),
            (2.0, 1900.0, 1.1),
            (4.0, 3600.0, 1.3),
            (8.0, 3700.0, 2.6),
            (16.0, 3750.0, 5.2),
        ];
        assert_eq!(knee(&c), Some(2));
        // still scaling: no knee
        let s = [(1.0, 1000.0, 1.0), (2.0, 2000.0, 1.0), (4.0, 4000.0, 1.1)];
        assert_eq!(knee(&s), None);
        // flat throughput with flat latency is a plateau, not a knee
        let f = [(1.0, 1000.0, 1.0), (2.0, 1010.0, 1.0), (4.0, 1020.0, 1.05)];
        assert_eq!(knee(&f), None);
        assert_eq!(knee(&c[..2]), None);
    }
}
