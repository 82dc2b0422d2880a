//! Comparing stored runs and groups: statistics over repetitions, Welch's t-test, settings diffs.

use crate::error::{Error, Result};
use crate::store::{MetricRow, Ref, Store};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;

/// Mean, spread and confidence of one metric over n repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Stat {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 when n = 1.
    pub stddev: f64,
    /// Half-width of the 95 % confidence interval of the mean (Student's t); null when n = 1.
    pub ci95: Option<f64>,
    /// Coefficient of variation in percent (stddev / mean × 100).
    pub cv_pct: f64,
}

/// A result is flagged noisy when its coefficient of variation exceeds this (percent).
pub const NOISY_CV_PCT: f64 = 5.0;

impl Stat {
    pub fn of(v: &[f64]) -> Option<Stat> {
        let n = v.len();
        if n == 0 {
            return None;
        }
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let stddev = var.sqrt();
        let ci95 = (n > 1).then(|| t_quantile(0.975, (n - 1) as f64) * stddev / (n as f64).sqrt());
        let cv_pct = if mean != 0.0 {
            100.0 * stddev / mean.abs()
        } else {
            0.0
        };
        Some(Stat {
            n,
            mean,
            stddev,
            ci95,
            cv_pct,
        })
    }
    pub fn noisy(&self) -> bool {
        self.n > 1 && self.cv_pct > NOISY_CV_PCT
    }
}

fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::NAN)
}

/// Welch's unequal-variances t-test: two-sided p-value that the means differ.
/// None when either side has fewer than 2 samples.
pub fn welch_p(a: &Stat, b: &Stat) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.stddev.powi(2) / a.n as f64, b.stddev.powi(2) / b.n as f64);
    let se2 = va + vb;
    if se2 == 0.0 {
        return Some(if a.mean == b.mean { 1.0 } else { 0.0 });
    }
    let t = (b.mean - a.mean) / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - dist.cdf(t.abs())))
}

/// Significance level for the comparison verdicts.
pub const ALPHA: f64 = 0.05;

/// The metrics compared, with their units.
pub const METRICS: [(&str, &str); 6] = [
    ("iops", "1/s"),
    ("mib_per_sec", "MiB/s"),
    ("lat_mean_ns", "ns"),
    ("lat_p50_ns", "ns"),
    ("lat_p99_ns", "ns"),
    ("lat_p99_9_ns", "ns"),
];

pub fn metric_value(m: &MetricRow, name: &str) -> Option<f64> {
    match name {
        "iops" => Some(m.iops),
        "mib_per_sec" => Some(m.bytes_per_sec / 1048576.0),
        "lat_mean_ns" => m.lat_mean_ns,
        "lat_p50_ns" => m.lat_p50_ns,
        "lat_p99_ns" => m.lat_p99_ns,
        "lat_p99_9_ns" => m.lat_p99_9_ns,
        _ => None,
    }
}

/// Names the cells of one run: the mode, or `mode/8t/16KiB` when a mode occurs more than once,
/// or `ROLE (mode)` for a role of a run with concurrent roles.
pub fn cell_labels(rows: &[MetricRow]) -> BTreeMap<i64, String> {
    let mut cells: BTreeMap<i64, &MetricRow> = BTreeMap::new();
    for r in rows {
        cells.entry(r.cell).or_insert(r);
    }
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for r in cells.values() {
        *count.entry(r.mode.as_str()).or_default() += 1;
    }
    cells
        .iter()
        .map(|(c, r)| {
            // a role is named by its name: two runs with roles compare role by role
            let l = if let Some(role) = &r.role {
                format!("{role} ({})", r.mode)
            } else if count[r.mode.as_str()] > 1 {
                format!(
                    "{}/{}t/{}",
                    r.mode,
                    r.threads.unwrap_or(0),
                    crate::model::units::Bytes(r.bs_bytes.unwrap_or(0) as u64)
                )
            } else {
                r.mode.clone()
            };
            (*c, l)
        })
        .collect()
}

/// One side of a comparison: a run or a group of repetitions.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Side {
    pub reference: String,
    pub run_ids: Vec<i64>,
    pub tool: String,
    pub label: Option<String>,
    pub start_time: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Cmp {
    pub stat: Option<Stat>,
    /// (this − baseline) / baseline × 100
    pub delta_pct: Option<f64>,
    /// Welch's t-test p-value against the baseline (both sides need ≥ 2 repetitions)
    pub p_value: Option<f64>,
    /// "baseline", "significant", "within noise", "no repetitions" or "missing"
    pub verdict: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Row {
    pub cell: String,
    pub op: String,
    pub metric: String,
    pub unit: String,
    pub sides: Vec<Cmp>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Change {
    pub field: String,
    pub values: Vec<Option<String>>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    pub schema: String,
    pub sides: Vec<Side>,
    pub rows: Vec<Row>,
    /// Cells or operations that exist only on some sides.
    pub not_comparable: Vec<String>,
    /// Job settings and environment fields that differ between the sides' first runs.
    pub changes: Vec<Change>,
}

pub use crate::system::env::flatten;

/// An engine name as iolab names the same system calls, so that "what changed" does not list
/// a rename. Only true equivalents are mapped: fio's `psync` (pread/pwrite) is iolab's `sync`.
/// fio's own `sync` is read/write after lseek, and `vsync`, `pvsync`, `pvsync2` are the
/// vectored calls (readv, preadv, preadv2): other system calls, so they keep a name of their
/// own (`sync` becomes `fio sync (read/write)`, never equal to iolab's). fio's `io_uring`,
/// `libaio`, `mmap` and `null` already carry iolab's names; sysbench's `sync` mode is
/// pread/pwrite and its `async` mode is Linux native AIO (io_submit), iolab's `libaio`.
fn engine_in_iolab_terms(tool: &str, engine: &str) -> String {
    match (tool, engine) {
        ("fio", "psync") => "sync".into(),
        ("fio", "sync") => "fio sync (read/write)".into(),
        ("sysbench", "async") => "libaio".into(),
        _ => engine.into(),
    }
}

/// Settings and environment of a run, flattened: `job.threads`, `env.kernel`, ...
fn settings(store: &Store, id: i64) -> Result<BTreeMap<String, String>> {
    let doc = store.doc(id)?;
    let mut out = BTreeMap::new();
    // the job: top level for one mode, else the first run's (with the list of modes)
    let job = if let Some(runs) = doc.get("runs").and_then(|r| r.as_array()) {
        let mut j = runs
            .first()
            .and_then(|r| r.get("job"))
            .cloned()
            .unwrap_or_default();
        if let (Some(o), Some(modes)) = (
            j.as_object_mut(),
            doc.get("job").and_then(|j| j.get("modes")),
        ) {
            o.insert("modes".into(), modes.clone());
            o.remove("mode");
        }
        j
    } else if let Some(cells) = doc.get("cells").and_then(|c| c.as_array()) {
        // imported: the settings every tool has, from the first job
        let c = cells.first().cloned().unwrap_or_default();
        let mut j = serde_json::Map::new();
        for k in ["mode", "threads", "iodepth", "bs_bytes", "direct", "engine"] {
            if let Some(v) = c.get(k) {
                j.insert(k.into(), v.clone());
            }
        }
        serde_json::Value::Object(j)
    } else {
        doc.get("job").cloned().unwrap_or_default()
    };
    flatten("job", &job, &mut out);
    // Runs from before `--layout` recorded none: they ran on written data (overwrite).
    if out.contains_key("job.file_size_bytes") && !out.contains_key("job.layout") {
        out.insert("job.layout".into(), "overwrite".into());
    }
    if let Some(env) = store.env(id)? {
        match (env.get("run"), env.get("system")) {
            (Some(run), system) => {
                flatten("env", run, &mut out);
                if let Some(sys) = system.and_then(|s| {
                    serde_json::from_value::<crate::system::env::EnvReport>(s.clone()).ok()
                }) {
                    for (k, v) in crate::system::env::comparable(&sys) {
                        out.insert(format!("env.{k}"), v);
                    }
                }
            }
            _ => flatten("env", &env, &mut out),
        }
    }
    let run = store.run(id)?;
    if let Some(e) = out.get_mut("job.engine") {
        *e = engine_in_iolab_terms(&run.tool, e);
    }
    out.insert("tool".into(), format!("{} {}", run.tool, run.tool_version));
    out.remove("env.host");
    out.insert("host".into(), run.host);
    // A seed picked from the clock differs every run and says nothing.
    out.remove("job.seed");
    Ok(out)
}

/// One side's values: (cell label, op) → metric → one value per run.
type SideValues = BTreeMap<(String, String), BTreeMap<&'static str, Vec<f64>>>;

/// Builds the comparison of `refs` (the first is the baseline).
pub fn compare(store: &Store, refs: &[Ref]) -> Result<Comparison> {
    if refs.len() < 2 {
        return Err(Error::usage(
            "compare: give at least two run or group ids (the first is the baseline)",
        ));
    }
    let mut sides = Vec::new();
    // per side: (cell label, op) -> metric -> values
    let mut data: Vec<SideValues> = Vec::new();
    let mut order: Vec<(String, String)> = Vec::new();
    for r in refs {
        let ids = store.resolve_run_ids(*r)?;
        let first = store.run(ids[0])?;
        sides.push(Side {
            reference: r.to_string(),
            run_ids: ids.clone(),
            tool: format!("{} {}", first.tool, first.tool_version),
            label: first.label.clone(),
            start_time: first.start_time.clone(),
        });
        let mut m: SideValues = BTreeMap::new();
        for id in ids {
            let rows = store.metrics(id)?;
            let mut labels = cell_labels(&rows);
            // A run that is one cell of an experiment is named by its coordinates, so two
            // sweeps compare cell by cell (and a sweep's cells are not pooled as repetitions).
            if let Some(serde_json::Value::Object(cell)) = store.cell(id)? {
                let coords: Vec<String> = cell
                    .iter()
                    .filter(|(k, _)| *k != "mode")
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                    .collect();
                if !coords.is_empty() {
                    for l in labels.values_mut() {
                        *l = format!("{} {l}", coords.join(" "));
                    }
                }
            }
            for row in &rows {
                let key = (labels[&row.cell].clone(), row.op.clone());
                if !order.contains(&key) {
                    order.push(key.clone());
                }
                let e = m.entry(key).or_default();
                for (name, _) in METRICS {
                    if let Some(v) = metric_value(row, name) {
                        e.entry(name).or_default().push(v);
                    }
                }
            }
        }
        data.push(m);
    }
    let mut rows = Vec::new();
    let mut not_comparable = Vec::new();
    for key in &order {
        let present: Vec<bool> = data.iter().map(|d| d.contains_key(key)).collect();
        if !present[0] || present.iter().filter(|&&p| p).count() < 2 {
            let have: Vec<String> = sides
                .iter()
                .zip(&present)
                .filter(|(_, p)| **p)
                .map(|(s, _)| s.reference.clone())
                .collect();
            not_comparable.push(format!("{} {}: only in {}", key.0, key.1, have.join(", ")));
            if !present[0] {
                continue;
            }
        }
        for (name, unit) in METRICS {
            let stats: Vec<Option<Stat>> = data
                .iter()
                .map(|d| {
                    d.get(key)
                        .and_then(|m| m.get(name))
                        .and_then(|v| Stat::of(v))
                })
                .collect();
            let Some(base) = stats[0] else {
                continue;
            };
            let cmps = stats
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    if i == 0 {
                        return Cmp {
                            stat: *s,
                            delta_pct: None,
                            p_value: None,
                            verdict: "baseline".into(),
                        };
                    }
                    match s {
                        None => Cmp {
                            stat: None,
                            delta_pct: None,
                            p_value: None,
                            verdict: "missing".into(),
                        },
                        Some(s) => {
                            let delta = (base.mean != 0.0)
                                .then(|| (s.mean - base.mean) / base.mean * 100.0);
                            let p = welch_p(&base, s);
                            let verdict = match p {
                                None => "no repetitions",
                                Some(p) if p < ALPHA => "significant",
                                Some(_) => "within noise",
                            };
                            Cmp {
                                stat: Some(*s),
                                delta_pct: delta,
                                p_value: p,
                                verdict: verdict.into(),
                            }
                        }
                    }
                })
                .collect();
            rows.push(Row {
                cell: key.0.clone(),
                op: key.1.clone(),
                metric: name.into(),
                unit: unit.into(),
                sides: cmps,
            });
        }
    }
    if rows.is_empty()
        || !rows
            .iter()
            .any(|r| r.sides.iter().skip(1).any(|c| c.stat.is_some()))
    {
        let modes: Vec<String> = data
            .iter()
            .zip(&sides)
            .map(|(d, s)| {
                let mut ms: Vec<String> = d.keys().map(|k| k.0.clone()).collect();
                ms.dedup();
                format!("{}: {}", s.reference, ms.join(","))
            })
            .collect();
        return Err(Error::usage(format!(
            "compare: nothing in common to compare ({}); compare runs of the same mode",
            modes.join("; ")
        )));
    }
    let sets: Vec<BTreeMap<String, String>> = sides
        .iter()
        .map(|s| settings(store, s.run_ids[0]))
        .collect::<Result<_>>()?;
    let mut keys: Vec<&String> = sets.iter().flat_map(|s| s.keys()).collect();
    keys.sort();
    keys.dedup();
    // Runs of different tools record different settings: compare only what all of them record.
    let tools: Vec<&String> = sets.iter().filter_map(|s| s.get("tool")).collect();
    if tools.iter().any(|t| !t.starts_with("iolab ")) {
        keys.retain(|k| sets.iter().all(|s| s.contains_key(*k)));
    }
    let changes = keys
        .into_iter()
        .filter_map(|k| {
            let vals: Vec<Option<String>> = sets.iter().map(|s| s.get(k).cloned()).collect();
            (vals.iter().any(|v| v != &vals[0])).then(|| Change {
                field: k.clone(),
                values: vals,
            })
        })
        .collect();
    Ok(Comparison {
        schema: crate::model::schema::COMPARE.into(),
        sides,
        rows,
        not_comparable,
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_psync_is_iolab_sync() {
        assert_eq!(engine_in_iolab_terms("fio", "psync"), "sync");
        assert_eq!(engine_in_iolab_terms("iolab", "sync"), "sync");
        assert_eq!(engine_in_iolab_terms("sysbench", "sync"), "sync");
        assert_eq!(engine_in_iolab_terms("sysbench", "async"), "libaio");
        assert_ne!(engine_in_iolab_terms("fio", "sync"), "sync");
        for other in ["pvsync", "pvsync2", "vsync", "libaio", "io_uring"] {
            assert_eq!(engine_in_iolab_terms("fio", other), other);
        }
    }

    #[test]
    fn stat_matches_hand_computation() {
        let s = Stat::of(&[10.0, 11.0, 12.0]).unwrap();
        assert_eq!(s.n, 3);
        assert!((s.mean - 11.0).abs() < 1e-12);
        assert!((s.stddev - 1.0).abs() < 1e-12);
        // t(0.975, 2) = 4.302653; half-width = 4.302653 / sqrt(3)
        assert!(
            (s.ci95.unwrap() - 4.302_653 / 3f64.sqrt()).abs() < 1e-5,
            "{:?}",
            s.ci95
        );
        assert!((s.cv_pct - 100.0 / 11.0).abs() < 1e-9);
        assert!(s.noisy());
        let one = Stat::of(&[5.0]).unwrap();
        assert_eq!((one.stddev, one.ci95), (0.0, None));
        assert!(!one.noisy());
    }

    #[test]
    fn welch_matches_hand_computation() {
        // A = 10, 11, 12; B = 13, 14, 15: t = 3/sqrt(2/3) = 3.6742, df = 4, two-sided p = 0.02131
        let a = Stat::of(&[10.0, 11.0, 12.0]).unwrap();
        let b = Stat::of(&[13.0, 14.0, 15.0]).unwrap();
        let p = welch_p(&a, &b).unwrap();
        assert!((p - 0.021_31).abs() < 5e-5, "p = {p}");
        // unequal variances and sizes: A = 1,2,3,4 (var 1.6667), B = 2,4,6 (var 4):
        // se² = 1.6667/4 + 4/3 = 1.75, t = 1.5/1.3229 = 1.1339,
        // df = 1.75² / (0.41667²/3 + 1.3333²/2) = 3.0625 / 0.94676 = 3.2347, p ≈ 0.3341
        let a = Stat::of(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        let b = Stat::of(&[2.0, 4.0, 6.0]).unwrap();
        let p = welch_p(&a, &b).unwrap();
        assert!((p - 0.334).abs() < 2e-3, "p = {p}");
        assert_eq!(welch_p(&Stat::of(&[1.0]).unwrap(), &b), None);
        let c = Stat::of(&[5.0, 5.0]).unwrap();
        assert_eq!(welch_p(&c, &c), Some(1.0));
    }

    #[test]
    fn labels_disambiguate_repeated_modes() {
        let row = |cell, mode: &str, threads| MetricRow {
            run_id: 1,
            cell,
            mode: mode.into(),
            role: None,
            op: "read".into(),
            threads: Some(threads),
            bs_bytes: Some(16384),
            ops: 1,
            bytes: 1,
            iops: 1.0,
            bytes_per_sec: 1.0,
            lat_min_ns: None,
            lat_mean_ns: None,
            lat_max_ns: None,
            lat_stddev_ns: None,
            lat_p50_ns: None,
            lat_p90_ns: None,
            lat_p95_ns: None,
            lat_p99_ns: None,
            lat_p99_9_ns: None,
            lat_p99_99_ns: None,
        };
        let l = cell_labels(&[row(0, "rndrd", 1), row(1, "rndrd", 8), row(2, "seqrd", 1)]);
        assert_eq!(l[&0], "rndrd/1t/16KiB");
        assert_eq!(l[&1], "rndrd/8t/16KiB");
        assert_eq!(l[&2], "seqrd");
    }
}
