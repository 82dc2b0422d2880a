//! How fio sums jobs into one row of its JSON (stat.c `sum_thread_stats`), for the fio JSON of a
//! job file's run (`output::fio`): a verify job's read-back cell folded into the job that wrote
//! (fio's one job, its verify after its writes), and fio's reporting groups, the jobs between two
//! stonewalls (or `new_group`) as one row with `group_reporting` (named by the group's first job,
//! each direction's runtime the longest of the group's, bytes and I/Os added, latencies combined
//! as fio's `__sum_stat`, percentiles from the merged histograms).

use crate::model::hist::LatHist;
use serde_json::{Map, Value, json};

/// The percentiles fio prints by default (its `percentile_list`), keyed `"99.000000"`.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The histogram's recorded buckets as (value in ns, count), ascending: each bucket's value is
/// the highest value it holds (HdrHistogram's `value_iterated_to`), so the smallest value with at
/// least p % of the counts at or below it is exactly the histogram's own percentile p.
pub fn hist_bins(h: &LatHist) -> Vec<(u64, u64)> {
    h.h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// One row of fio's `jobs[]`, with the histograms its `clat_ns` percentiles come from (read,
/// write, trim; None where the run has none, e.g. a document read back).
pub struct Row {
    pub v: Value,
    pub hists: [Option<LatHist>; 3],
}

/// How a row is added into another.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The same job's next cell (a verify read-back), after it: its times add up.
    After,
    /// Another job of the reporting group, beside it: each direction's runtime is the longest,
    /// `elapsed` the longest, the per-second samples' statistics added (fio's pure sums).
    Beside,
}

const DIRS: [&str; 3] = ["read", "write", "trim"];

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or(0)
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(0.0)
}

/// fio's `__sum_stat` of two latency objects (`min`, `max`, `mean`, `stddev`, `N`): the means
/// weighted by the samples, the variance by the parallel algorithm; the percentiles are the
/// larger's until the merged histogram replaces them.
fn sum_lat(a: &Value, b: &Value) -> Value {
    let (na, nb) = (n(a, "N"), n(b, "N"));
    if nb == 0 {
        return a.clone();
    }
    if na == 0 {
        return b.clone();
    }
    let mut l = if nb > na { b.clone() } else { a.clone() };
    let (fa, fb) = (na as f64, nb as f64);
    let (ma, mb) = (f(a, "mean"), f(b, "mean"));
    let s = |v: &Value, k: f64| f(v, "stddev").powi(2) * (k - 1.0);
    let sq = s(a, fa) + s(b, fb) + (mb - ma).powi(2) * fa * fb / (fa + fb);
    l["min"] = n(a, "min").min(n(b, "min")).into();
    l["max"] = n(a, "max").max(n(b, "max")).into();
    l["mean"] = ((ma * fa + mb * fb) / (fa + fb)).into();
    l["stddev"] = (sq / (fa + fb - 1.0)).max(0.0).sqrt().into();
    l["N"] = (na + nb).into();
    l
}

/// The per-second bandwidth or IOPS samples' statistics (`{p}_min`, `_max`, `_mean`, `dev`,
/// `_samples`): beside, fio's pure sum (each added); after, one series followed by the other.
fn sum_samples(m: &mut Value, a: &Value, b: &Value, p: &str, dev: &str, how: How) {
    let (min, max, mean, samples) = (
        format!("{p}_min"),
        format!("{p}_max"),
        format!("{p}_mean"),
        format!("{p}_samples"),
    );
    let (na, nb) = (n(a, &samples) as f64, n(b, &samples) as f64);
    let var = |v: &Value, k: f64| f(v, dev).powi(2) * (k - 1.0).max(0.0);
    match how {
        How::Beside => {
            m[&min] = (n(a, &min) + n(b, &min)).into();
            m[&max] = (n(a, &max) + n(b, &max)).into();
            m[&mean] = (f(a, &mean) + f(b, &mean)).into();
            let (s, k) = (var(a, na) + var(b, nb), na + nb);
            m[dev] = if k > 1.0 { (s / (k - 1.0)).sqrt() } else { 0.0 }.into();
        }
        How::After => {
            if nb == 0.0 {
                return;
            }
            if na == 0.0 {
                for k in [min.as_str(), max.as_str(), mean.as_str(), dev] {
                    m[k] = b[k].clone();
                }
            } else {
                m[&min] = n(a, &min).min(n(b, &min)).into();
                m[&max] = n(a, &max).max(n(b, &max)).into();
                let (ma, mb) = (f(a, &mean), f(b, &mean));
                let all = (ma * na + mb * nb) / (na + nb);
                let sq = var(a, na) + var(b, nb) + (mb - ma).powi(2) * na * nb / (na + nb);
                m[&mean] = all.into();
                m[dev] = (sq / (na + nb - 1.0)).max(0.0).sqrt().into();
            }
        }
    }
    m[&samples] = ((na + nb) as u64).into();
}

/// One direction (`read`, `write`, `trim`) of two rows added.
fn sum_dir(a: &Value, b: &Value, how: How) -> Value {
    if n(b, "total_ios") == 0 {
        return a.clone();
    }
    if n(a, "total_ios") == 0 {
        return b.clone();
    }
    let mut m = a.clone();
    for k in [
        "io_bytes",
        "io_kbytes",
        "total_ios",
        "short_ios",
        "drop_ios",
    ] {
        m[k] = (n(a, k) + n(b, k)).into();
    }
    m["runtime"] = match how {
        How::After => n(a, "runtime") + n(b, "runtime"),
        How::Beside => n(a, "runtime").max(n(b, "runtime")),
    }
    .into();
    let ms = n(&m, "runtime").max(1);
    let bw = n(&m, "io_bytes") * 1000 / ms;
    m["bw_bytes"] = bw.into();
    m["bw"] = (bw / 1024).into();
    m["iops"] = (n(&m, "total_ios") as f64 * 1000.0 / ms as f64).into();
    for k in ["slat_ns", "clat_ns", "lat_ns"] {
        m[k] = sum_lat(&a[k], &b[k]);
    }
    sum_samples(&mut m, a, b, "bw", "bw_dev", how);
    sum_samples(&mut m, a, b, "iops", "iops_stddev", how);
    m
}

/// Percent maps (`latency_*`, `iodepth_level`) of two rows weighted by their I/Os.
fn weigh(a: &Value, b: &Value, wa: f64, wb: f64) -> Value {
    let (Some(x), Some(y)) = (a.as_object(), b.as_object()) else {
        return a.clone();
    };
    let m: Map<String, Value> = x
        .iter()
        .map(|(k, v)| {
            let (p, q) = (v.as_f64().unwrap_or(0.0), y.get(k).and_then(Value::as_f64));
            let v = (p * wa + q.unwrap_or(0.0) * wb) / (wa + wb);
            (k.clone(), v.into())
        })
        .collect();
    Value::Object(m)
}

/// Adds row `from` into `into`, `how` says whether after it (the same job) or beside it (its
/// reporting group).
pub fn add(into: &mut Row, from: &Row, how: How) {
    let ios = |j: &Value| DIRS.iter().map(|d| n(&j[*d], "total_ios")).sum::<u64>() as f64;
    let (wa, wb) = (ios(&into.v), ios(&from.v));
    let (a, b) = (&mut into.v, &from.v);
    if wa + wb > 0.0 {
        for k in ["latency_ns", "latency_us", "latency_ms", "iodepth_level"] {
            a[k] = weigh(&a[k], &b[k], wa, wb);
        }
    }
    let (ra, rb) = (n(a, "job_runtime") as f64, n(b, "job_runtime") as f64);
    for k in ["usr_cpu", "sys_cpu"] {
        let (x, y) = (f(a, k), f(b, k));
        a[k] = if ra + rb > 0.0 {
            ((x * ra + y * rb) / (ra + rb)).into()
        } else {
            x.into()
        };
    }
    for k in ["job_runtime", "ctx", "majf", "minf"] {
        a[k] = (n(a, k) + n(b, k)).into();
    }
    a["elapsed"] = match how {
        How::After => n(a, "elapsed") + n(b, "elapsed"),
        How::Beside => n(a, "elapsed").max(n(b, "elapsed")),
    }
    .into();
    if a["error"] == 0 {
        a["error"] = b["error"].clone();
    }
    a["sync"]["total_ios"] = (n(&a["sync"], "total_ios") + n(&b["sync"], "total_ios")).into();
    a["sync"]["lat_ns"] = sum_lat(&a["sync"]["lat_ns"], &b["sync"]["lat_ns"]);
    for (i, d) in DIRS.iter().enumerate() {
        let (x, y) = (n(&a[*d], "total_ios"), n(&b[*d], "total_ios"));
        a[*d] = sum_dir(&a[*d], &b[*d], how);
        // the histogram of the sum: both, or the one side that did this direction
        let h = match (&into.hists[i], &from.hists[i]) {
            _ if y == 0 => continue,
            (_, Some(hb)) if x == 0 => Some(hb.clone()),
            (Some(ha), Some(hb)) => {
                let mut h = ha.clone();
                h.merge(hb);
                Some(h)
            }
            _ => None,
        };
        if let Some(h) = h.as_ref().filter(|_| x > 0) {
            let clat = &mut a[*d]["clat_ns"];
            if clat.get("percentile").is_some() {
                let p: Map<String, Value> = FIO_PERCENTILES
                    .iter()
                    .map(|q| (format!("{q:.6}"), h.percentile(*q).into()))
                    .collect();
                clat["percentile"] = Value::Object(p);
            }
            if clat.get("bins").is_some() {
                let bins: Map<String, Value> = hist_bins(h)
                    .into_iter()
                    .map(|(v, c)| (v.to_string(), c.into()))
                    .collect();
                clat["bins"] = Value::Object(bins);
            }
        }
        into.hists[i] = h;
    }
}

/// fio's reporting of a job file's rows (stat.c `__show_run_stats`): a row starts a new entry
/// unless its job has `group_reporting` and is of the reporting group of the row before
/// (`group`: the job's `(groupid, group_reporting)`, None for a row of no job file's job). Each
/// row's `groupid` is its job's group; an entry of several jobs is named by the first, carries
/// the last one's `job options` (fio prints the last member's) and every member's notes, each
/// after its job's name.
pub fn report(rows: Vec<(Row, Option<(u64, bool)>)>) -> Vec<Value> {
    let mut out: Vec<(Row, Vec<(String, Value)>)> = Vec::new();
    let mut last: Option<u64> = None;
    for (mut row, group) in rows {
        let name = row.v["jobname"].as_str().unwrap_or("").to_string();
        let notes = row.v["iolab_notes"].clone();
        if let Some((g, _)) = group {
            row.v["groupid"] = g.into();
        }
        match (group, out.last_mut()) {
            (Some((g, true)), Some((into, members))) if last == Some(g) => {
                add(into, &row, How::Beside);
                into.v["job options"] = row.v["job options"].clone();
                members.push((name, notes));
            }
            _ => out.push((row, vec![(name, notes)])),
        }
        last = group.map(|g| g.0);
    }
    out.into_iter()
        .map(|(mut row, members)| {
            if members.len() > 1 {
                let notes: Vec<String> = members
                    .iter()
                    .flat_map(|(name, notes)| {
                        notes
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(move |s| format!("job {name}: {s}"))
                    })
                    .collect();
                row.v["iolab_notes"] = json!(notes);
            }
            row.v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(v: &[f64]) -> Value {
        let k = v.len() as f64;
        let mean = v.iter().sum::<f64>() / k;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
        json!({"min": v.iter().cloned().fold(f64::MAX, f64::min) as u64,
               "max": v.iter().cloned().fold(0.0, f64::max) as u64,
               "mean": mean, "stddev": sd, "N": v.len()})
    }

    #[test]
    fn latencies_combine_as_one_series() {
        let (a, b) = ([10.0, 20.0, 30.0], [100.0, 200.0]);
        let all: Vec<f64> = a.iter().chain(&b).copied().collect();
        let (got, want) = (sum_lat(&lat(&a), &lat(&b)), lat(&all));
        for k in ["min", "max", "N"] {
            assert_eq!(got[k], want[k], "{k}");
        }
        for k in ["mean", "stddev"] {
            assert!((f(&got, k) - f(&want, k)).abs() < 1e-9, "{k}: {got} {want}");
        }
    }

    fn dir(ios: u64, bytes: u64, runtime: u64) -> Value {
        json!({"io_bytes": bytes, "io_kbytes": bytes / 1024, "total_ios": ios, "short_ios": 0,
               "drop_ios": 0, "runtime": runtime, "slat_ns": lat(&[1.0, 2.0]),
               "clat_ns": lat(&[5.0, 7.0]), "lat_ns": lat(&[6.0, 9.0]), "bw_min": 1, "bw_max": 2,
               "bw_mean": 1.5, "bw_dev": 0.5, "bw_samples": 2, "iops_min": 3, "iops_max": 4,
               "iops_mean": 3.5, "iops_stddev": 0.5, "iops_samples": 2})
    }

    #[test]
    fn a_group_adds_bytes_and_takes_the_longest_runtime() {
        let a = dir(100, 409600, 1000);
        let b = dir(50, 1 << 20, 4000);
        let m = sum_dir(&a, &b, How::Beside);
        assert_eq!(m["total_ios"], 150);
        assert_eq!(m["io_bytes"], 409600 + (1 << 20));
        assert_eq!(m["runtime"], 4000);
        assert_eq!(m["bw_bytes"], (409600 + (1 << 20)) * 1000 / 4000);
        assert_eq!(m["bw_min"], 2);
        assert_eq!(m["bw_samples"], 4);
        let s = sum_dir(&a, &b, How::After);
        assert_eq!(s["runtime"], 5000);
        assert_eq!(s["bw_min"], 1);
        assert_eq!(s["bw_max"], 2);
        assert_eq!(sum_dir(&a, &dir(0, 0, 0), How::Beside), a);
    }
}
