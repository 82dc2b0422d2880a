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
                "--target '{s}': use METRIC>=VALUE or METRIC<=VALUE with a metric of {METRIC_NAMES}, e.g. mibps>=22, p99<=10ms, iops>=1000, p99<=2x (twice the range's low end)"
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
        // relative: N times the figure at the range's low end (`p99<=2x`)
        if let Some(k) = raw.strip_suffix('x') {
            let k: f64 = k.parse().map_err(|_| bad())?;
            if !(k.is_finite() && k > 0.0) {
                return Err(bad());
            }
            return Ok(Target {
                metric,
                op: op.to_string(),
                value: 0.0,
                times_low_end: Some(k),
            });
        }
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
            times_low_end: None,
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

/// Bisection over the axis for the boundary of the target. Both ends are measured first, and
/// they say which way the target goes: met at LO and missed at HI (it gets harder as the value
/// grows: more data, more offered load), the largest value that meets it; missed at LO and met
/// at HI (it gets easier: `iops>=12000` over threads), the smallest. Met or missed at both ends:
/// no boundary inside the range, nothing more is measured.
pub fn saturate(
    ro: &dyn RunOptions,
    store: &mut Store,
    gid: i64,
    spec: &mut SaturateSpec,
    stop: &AtomicBool,
    quiet: bool,
    points_on: Points,
) -> Result<Vec<Point>> {
    let mut target = spec.target.clone();
    let r = search(ro, store, gid, spec, &mut target, stop, quiet, points_on);
    spec.target = target;
    r
}

/// [`saturate`]'s search, judged by `target` (a relative one's value set at the low end).
#[allow(clippy::too_many_arguments)]
fn search(
    ro: &dyn RunOptions,
    store: &mut Store,
    gid: i64,
    spec: &SaturateSpec,
    target: &mut Target,
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
        // a relative target takes its value from the first point measured: the low end
        if let Some(k) = target.times_low_end
            && points.is_empty()
        {
            target.value = k * metric(&f, &target.metric).unwrap_or(f64::NAN);
            let mut s = spec.clone();
            s.target = target.clone();
            store.set_experiment_spec(gid, &serde_json::to_value(&s).expect("json"))?;
        }
        let passed = target.met(&f);
        if !quiet {
            eprintln!(
                "saturate: {}={} -> {} = {:.3}: {}",
                spec.axis,
                cell[&spec.axis],
                target.metric,
                metric(&f, &target.metric).unwrap_or(0.0),
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
    let Some(hi_ok) = eval(hi, store, &mut points)? else {
        return Ok(points);
    };
    if hi_ok == lo_ok {
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
        // the half whose ends differ holds the boundary, whichever way the target goes
        match eval(mid, store, &mut points)? {
            None => break,
            Some(ok) if ok == lo_ok => lo = mid,
            Some(_) => hi = mid,
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
        let r = Target::parse("p99<=2x").unwrap();
        assert_eq!((r.value, r.times_low_end), (0.0, Some(2.0)));
        assert!(Target::parse("p99<=0x").is_err());
        assert!(Target::parse("p99<=twox").is_err());
        assert!(Target::parse("iops=5").is_err());
    }
}

/// Which way a target went over the measured points of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Met up to `held`, missed from `fails` on (harder as the value grows).
    MetBelow {
        held: u64,
        fails: u64,
    },
    /// Missed up to `missed`, met from `met` on (easier as the value grows).
    MetAbove {
        missed: u64,
        met: u64,
    },
    /// Met at every measured value (LO..HI).
    MetEverywhere {
        lo: u64,
        hi: u64,
    },
    /// Missed at every measured value (LO..HI).
    MissedEverywhere {
        lo: u64,
        hi: u64,
    },
    NoPoint,
}

impl Outcome {
    /// `met_below`, `met_above`, `met_everywhere`, `missed_everywhere` (the JSON's `direction`).
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Outcome::MetBelow { .. } => "met_below",
            Outcome::MetAbove { .. } => "met_above",
            Outcome::MetEverywhere { .. } => "met_everywhere",
            Outcome::MissedEverywhere { .. } => "missed_everywhere",
            Outcome::NoPoint => return None,
        })
    }
    /// The boundary value: the largest that meets the target (met below) or the smallest
    /// (met above).
    pub fn boundary(self) -> Option<u64> {
        match self {
            Outcome::MetBelow { held, .. } => Some(held),
            Outcome::MetAbove { met, .. } => Some(met),
            _ => None,
        }
    }
}

/// The outcome of the points (any order): the lowest point says which side the target starts
/// on, the first change along the axis is the boundary.
pub fn outcome(points: &[Point]) -> Outcome {
    let mut pts: Vec<&Point> = points.iter().collect();
    pts.sort_by_key(|p| p.value);
    let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
        return Outcome::NoPoint;
    };
    match pts.windows(2).find(|w| w[0].passed != w[1].passed) {
        Some(w) if first.passed => Outcome::MetBelow {
            held: w[0].value,
            fails: w[1].value,
        },
        Some(w) => Outcome::MetAbove {
            missed: w[0].value,
            met: w[1].value,
        },
        None if first.passed => Outcome::MetEverywhere {
            lo: first.value,
            hi: last.value,
        },
        None => Outcome::MissedEverywhere {
            lo: first.value,
            hi: last.value,
        },
    }
}

#[cfg(test)]
mod outcome_tests {
    use super::*;

    fn pts(v: &[(u64, bool)]) -> Vec<Point> {
        v.iter()
            .map(|&(value, passed)| Point {
                value,
                run_id: 1,
                figures: Figures::default(),
                passed,
            })
            .collect()
    }

    #[test]
    fn the_lowest_point_says_which_way_the_target_goes() {
        // any order: met up to 4, missed from 8 on
        let o = outcome(&pts(&[(16, false), (1, true), (8, false), (4, true)]));
        assert_eq!(o, Outcome::MetBelow { held: 4, fails: 8 });
        assert_eq!((o.name(), o.boundary()), (Some("met_below"), Some(4)));
        let o = outcome(&pts(&[(1, false), (16, true), (4, false), (8, true)]));
        assert_eq!(o, Outcome::MetAbove { missed: 4, met: 8 });
        assert_eq!(o.boundary(), Some(8));
        assert_eq!(
            outcome(&pts(&[(1, true), (16, true)])),
            Outcome::MetEverywhere { lo: 1, hi: 16 }
        );
        assert_eq!(
            outcome(&pts(&[(16, false), (1, false)])),
            Outcome::MissedEverywhere { lo: 1, hi: 16 }
        );
        assert_eq!(outcome(&[]).name(), None);
    }
}
