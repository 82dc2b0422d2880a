//! `iolab saturate`: the target (`p99<=10ms`, `iops>=5000`), judged on a point's figures, and the
//! bisection for the point where it stops being met.

use super::{METRIC_NAMES, PointAt, Points, RunOptions, cell_args, figures, metric};
use crate::error::{Error, Result};
use crate::model::experiment::*;
use crate::model::run::RunDoc;
use crate::model::units::parse_size;
use crate::store::Store;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// A saturation search measures one mode per step.
pub fn one_mode_needed() -> Error {
    Error::usage("saturate: give exactly one --mode")
}

impl Target {
    pub fn parse(s: &str) -> Result<Target> {
        let bad = || {
            Error::usage(format!(
                "--target '{s}': use METRIC>=VALUE or METRIC<=VALUE with a metric of {METRIC_NAMES}, e.g. mibps>=22, p99<=10ms, iops>=1000"
            ))
        };
        let t: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let (i, op) = ["<=", ">=", "<", ">"]
            .iter()
            .find_map(|op| t.find(op).map(|i| (i, *op)))
            .ok_or_else(bad)?;
        let metric = t[..i].to_lowercase();
        let raw = &t[i + op.len()..];
        if metric_names().iter().all(|m| *m != metric) {
            return Err(bad());
        }
        let latency = !matches!(metric.as_str(), "iops" | "mibps");
        let value = if latency {
            let (num, mult) = if let Some(x) = raw.strip_suffix("ms") {
                (x, 1.0)
            } else if let Some(x) = raw.strip_suffix("us").or_else(|| raw.strip_suffix("µs")) {
                (x, 1e-3)
            } else if let Some(x) = raw.strip_suffix("ns") {
                (x, 1e-6)
            } else if let Some(x) = raw.strip_suffix('s') {
                (x, 1e3)
            } else {
                (raw, 1.0)
            };
            num.parse::<f64>().map_err(|_| bad())? * mult
        } else {
            raw.parse::<f64>().map_err(|_| bad())?
        };
        // NaN would judge every measurement the same way; a negative rate or latency never
        // bounds anything
        if !(value.is_finite() && value >= 0.0) {
            return Err(Error::usage(format!(
                "--target '{s}': the value must be a number of 0 or more (e.g. mibps>=22, p99<=10ms)"
            )));
        }
        Ok(Target {
            metric,
            op: op.to_string(),
            value,
        })
    }
    pub fn met(&self, f: &Figures) -> bool {
        let v = metric(f, &self.metric).unwrap_or(f64::NAN);
        match self.op.as_str() {
            ">=" => v >= self.value,
            "<=" => v <= self.value,
            ">" => v > self.value,
            _ => v < self.value,
        }
    }
}

fn metric_names() -> [&'static str; 7] {
    ["iops", "mibps", "p50", "p90", "p99", "p99.9", "mean"]
}

/// Bisection over the axis: the largest value that still meets the target (the target is
/// assumed to get harder as the value grows: more data, more offered load).
pub fn saturate(
    ro: &dyn RunOptions,
    store: &mut Store,
    gid: i64,
    spec: &SaturateSpec,
    stop: &AtomicBool,
    quiet: bool,
    points_on: Points,
) -> Result<Vec<Point>> {
    let mut points: Vec<Point> = Vec::new();
    let sized = spec.axis == "size";
    let mut seq = 0;
    let mut eval = |x: u64, store: &mut Store, points: &mut Vec<Point>| -> Result<Option<bool>> {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let v = if sized {
            crate::model::units::Bytes(x).to_string()
        } else {
            x.to_string()
        };
        if !quiet {
            eprintln!("saturate: {}={v} ...", spec.axis);
        }
        let mut cell = BTreeMap::new();
        cell.insert(spec.axis.clone(), v);
        let one_mode = |plan: &crate::engine::runner::Plan| {
            if plan.cells.len() != 1 {
                return Err(one_mode_needed());
            }
            Ok(())
        };
        let at = PointAt {
            gid,
            seq: seq + 1,
            cell: cell.clone(),
        };
        let doc = match points_on.run(ro, &cell_args(&spec.fixed, &cell), stop, &one_mode, at) {
            Ok(d) => d,
            // Stopped before this point measured anything: the search ends with what it has.
            Err(e) if e.exit == crate::error::Exit::Interrupted => return Ok(None),
            Err(e) => return Err(e),
        };
        seq += 1;
        let id = store.save_run(
            &doc,
            &doc.to_json(),
            Some((gid, seq)),
            Some(&serde_json::to_value(&cell).expect("json")),
        )?;
        if doc.interrupted {
            return Ok(None);
        }
        let f = figures(&doc);
        let passed = spec.target.met(&f);
        if !quiet {
            eprintln!(
                "saturate: {}={} -> {} = {:.3}: {}",
                spec.axis,
                cell[&spec.axis],
                spec.target.metric,
                metric(&f, &spec.target.metric).unwrap_or(0.0),
                if passed {
                    "meets the target"
                } else {
                    "misses it"
                }
            );
        }
        points.push(Point {
            value: x,
            run_id: id,
            figures: f,
            passed,
        });
        Ok(Some(passed))
    };
    let (mut lo, mut hi) = (spec.lo, spec.hi);
    let Some(lo_ok) = eval(lo, store, &mut points)? else {
        return Ok(points);
    };
    if !lo_ok {
        return Ok(points);
    }
    let Some(hi_ok) = eval(hi, store, &mut points)? else {
        return Ok(points);
    };
    if hi_ok {
        return Ok(points);
    }
    let mut steps = 2;
    while hi - lo > spec.step && steps < spec.max_steps {
        let mut mid = lo + (hi - lo) / 2;
        // keep values on the step grid from lo
        mid = lo + ((mid - lo) / spec.step.max(1)).max(1) * spec.step.max(1);
        if mid >= hi {
            break;
        }
        match eval(mid, store, &mut points)? {
            None => break,
            Some(true) => lo = mid,
            Some(false) => hi = mid,
        }
        steps += 1;
    }
    points.sort_by_key(|p| p.value);
    Ok(points)
}

/// The measured points of a stored saturation search, by axis value.
pub fn stored_points(store: &Store, gid: i64, spec: &SaturateSpec) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for id in store.group_runs(gid)? {
        let d = RunDoc::from_json(&store.doc(id)?)
            .map_err(|e| Error::failed(format!("run {id}: {e}")))?;
        let f = figures(&d);
        let value = store
            .cell(id)?
            .and_then(|c| {
                c.get(&spec.axis)
                    .and_then(|x| x.as_str().and_then(|x| parse_size(x).ok()))
            })
            .unwrap_or(0);
        points.push(Point {
            value,
            run_id: id,
            figures: f,
            passed: spec.target.met(&f),
        });
    }
    points.sort_by_key(|p| p.value);
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_judge() {
        let t = Target::parse("mibps>=22").unwrap();
        assert_eq!(
            (t.metric.as_str(), t.op.as_str(), t.value),
            ("mibps", ">=", 22.0)
        );
        assert!(t.met(&Figures {
            mibps: 23.0,
            ..Default::default()
        }));
        assert!(!t.met(&Figures {
            mibps: 21.0,
            ..Default::default()
        }));
        assert_eq!(Target::parse("p99<=10ms").unwrap().value, 10.0);
        assert_eq!(Target::parse("p99 <= 500us").unwrap().value, 0.5);
        assert_eq!(Target::parse("mean<=2s").unwrap().value, 2000.0);
        assert!(Target::parse("speed>=1").is_err());
        assert!(Target::parse("iops=5").is_err());
    }
}
