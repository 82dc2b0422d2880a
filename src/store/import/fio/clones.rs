//! fio's `numjobs` clones, printed one entry each without group_reporting, merged into one cell
//! as group_reporting would have printed it.

use super::*;

/// Clones of one job: their group, the cells, the latency source of each op.
type CloneSet = (Option<u64>, Vec<Cell>, Map<String, Value>);

/// Without group_reporting fio prints every thread of `numjobs=N` as its own entry: same job
/// name, same options, same group. Each such set becomes one cell, as group_reporting would
/// have printed it: threads = the number of entries, ops/bytes/iops/bytes_per_sec summed,
/// duration the longest, latency merged by [`merge_lat`]. Each cell's options then get
/// [`LATENCY_SOURCE_KEY`]: op -> "clat" | "lat".
pub(super) fn merge_clones(parsed: Vec<(Cell, Option<u64>, Map<String, Value>)>) -> Vec<Cell> {
    // sets in the order of their first entry
    let mut sets: Vec<CloneSet> = Vec::new();
    for (cell, group, sources) in parsed {
        let same = |(g, cs, _): &&mut CloneSet| {
            group.is_some()
                && *g == group
                && cs[0].name == cell.name
                && cs[0].options == cell.options
        };
        match sets.iter_mut().find(|s| same(s)) {
            Some((_, cs, srcs)) => {
                for (k, v) in sources {
                    srcs.entry(k).or_insert(v);
                }
                cs.push(cell);
            }
            None => sets.push((group, vec![cell], sources)),
        }
    }
    sets.into_iter()
        .map(|(_, mut cs, sources)| {
            let mut cell = if cs.len() == 1 {
                cs.remove(0)
            } else {
                merge_cells(cs)
            };
            if let Value::Object(o) = &mut cell.options {
                o.insert(LATENCY_SOURCE_KEY.into(), Value::Object(sources));
            }
            cell
        })
        .collect()
}

/// One cell for the clones `cs` (at least two, same settings).
fn merge_cells(cs: Vec<Cell>) -> Cell {
    let mut names: Vec<String> = Vec::new();
    for c in &cs {
        for o in &c.ops {
            if !names.contains(&o.op) {
                names.push(o.op.clone());
            }
        }
    }
    let ops = names
        .iter()
        .map(|name| {
            let parts: Vec<&OpSummary> = cs
                .iter()
                .filter_map(|c| c.ops.iter().find(|o| &o.op == name))
                .collect();
            let (lat_ns, hist_bins) = merge_lat(&parts);
            OpSummary {
                op: name.clone(),
                ops: parts.iter().map(|o| o.ops).sum(),
                bytes: parts.iter().map(|o| o.bytes).sum(),
                iops: parts.iter().map(|o| o.iops).sum(),
                bytes_per_sec: parts.iter().map(|o| o.bytes_per_sec).sum(),
                lat_ns,
                hist_bins,
            }
        })
        .collect();
    let threads = cs.iter().map(|c| c.threads).sum();
    let duration_s = cs.iter().map(|c| c.duration_s).fold(0.0, f64::max);
    let first = cs.into_iter().next().expect("a set has an entry");
    Cell {
        threads,
        duration_s,
        ops,
        ..first
    }
}

/// The latency of one op over clones. min and max: the smallest and largest; mean: the mean
/// of the parts weighted by their I/Os; stddev: from the parts' means and stddevs (the
/// variance within plus between the parts). Percentiles cannot be merged from percentiles:
/// with json+ bins in every part the bins are summed and the percentiles read from them (the
/// smallest bin value with at least p % of the I/Os at or below it, as fio computes them),
/// else they are left out (null).
fn merge_lat(parts: &[&OpSummary]) -> (Option<ReportedLat>, Option<Bins>) {
    let parts: Vec<&&OpSummary> = parts.iter().filter(|o| o.ops > 0).collect();
    let lats: Option<Vec<(f64, &ReportedLat)>> = parts
        .iter()
        .map(|o| Some((o.ops as f64, o.lat_ns.as_ref()?)))
        .collect();
    let Some(lats) = lats.filter(|l| !l.is_empty()) else {
        return (None, None);
    };
    let n: f64 = lats.iter().map(|(w, _)| w).sum();
    let all = |f: fn(&ReportedLat) -> Option<f64>| -> Option<Vec<(f64, f64)>> {
        lats.iter().map(|(w, l)| Some((*w, f(l)?))).collect()
    };
    let mut lat = ReportedLat {
        min: all(|l| l.min).map(|v| v.iter().map(|x| x.1).fold(f64::MAX, f64::min)),
        max: all(|l| l.max).map(|v| v.iter().map(|x| x.1).fold(f64::MIN, f64::max)),
        ..ReportedLat::default()
    };
    if let Some(means) = all(|l| l.mean) {
        let mean = means.iter().map(|(w, m)| w * m).sum::<f64>() / n;
        lat.mean = Some(mean);
        if let Some(sds) = all(|l| l.stddev) {
            let var = sds
                .iter()
                .zip(&means)
                .map(|((w, sd), (_, m))| w * (sd * sd + (m - mean) * (m - mean)))
                .sum::<f64>()
                / n;
            lat.stddev = Some(var.sqrt());
        }
    }
    let bins: Option<Vec<&Bins>> = parts.iter().map(|o| o.hist_bins.as_ref()).collect();
    let bins = bins.map(|bs| {
        let mut sum: BTreeMap<u64, u64> = BTreeMap::new();
        for (v, c) in bs.into_iter().flatten() {
            *sum.entry(*v).or_default() += c;
        }
        sum.into_iter().collect::<Bins>()
    });
    if let Some(b) = &bins {
        let total: u64 = b.iter().map(|x| x.1).sum();
        let at = |p: f64| {
            let want = p / 100.0 * total as f64;
            let mut cum = 0u64;
            b.iter()
                .find(|(_, c)| {
                    cum += c;
                    cum as f64 >= want
                })
                .map(|(v, _)| *v as f64)
        };
        if total > 0 {
            lat.p50 = at(50.0);
            lat.p90 = at(90.0);
            lat.p95 = at(95.0);
            lat.p99 = at(99.0);
            lat.p99_9 = at(99.9);
            lat.p99_99 = at(99.99);
        }
    }
    ((!lat.is_empty()).then_some(lat), bins)
}
