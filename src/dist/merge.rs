//! Rank 0's merge of what every rank measured into one run document: counts and bytes add,
//! latency histograms add (the percentiles are the merged histogram's, never an average of the
//! ranks'), rates add over the common window, and `dist` keeps every rank's own figures, host
//! environment and device figures, the failures and the stonewall figures.

use super::{Done, Outcome};
use crate::measure::hist::LatHist;
use crate::model::dist::{RankFailure, Stonewall};
use crate::model::job::Limit;
use crate::model::lat::LatSummary;
use crate::model::run::{
    BsResult, CellResult, Cpu, OpKind, OpResult, Results, RunDoc, TsOp, TsPoint, Warning,
};
use crate::model::run::{Distributed, RankCell, RankRun};
use std::collections::BTreeMap;

/// One rank that measured: its document with the histograms put back, and its windows.
struct Measured {
    rank: u32,
    host: String,
    doc: RunDoc,
    windows: Vec<(u64, u64)>,
}

fn restore(rank: u32, host: String, d: Done) -> Measured {
    let mut doc = d.doc;
    for (c, hs) in doc.runs.iter_mut().zip(&d.hists) {
        c.lat_hists = hs
            .iter()
            .map(|b| {
                if b.is_empty() {
                    LatHist::new()
                } else {
                    crate::store::deserialize_hist(b).unwrap_or_default()
                }
            })
            .collect();
    }
    Measured {
        rank,
        host,
        doc,
        windows: d.windows,
    }
}

/// The merged document, or None when no rank measured anything. Failures of ranks that only
/// stopped because another failed are not listed as failures of their own.
pub fn merge(outcomes: Vec<Outcome>) -> (Option<RunDoc>, Vec<RankFailure>) {
    let ranks = outcomes.len() as u32;
    let hosts: Vec<String> = outcomes.iter().map(|o| o.host.clone()).collect();
    let mut failures = Vec::new();
    let mut stopped_any = false;
    let mut measured = Vec::new();
    for o in outcomes {
        match o.result {
            Ok(d) => measured.push(restore(o.rank, o.host, d)),
            Err(f) if f.only_stopped() => stopped_any = true,
            Err(f) => failures.push(RankFailure {
                rank: o.rank,
                host: o.host,
                error: f.msg,
            }),
        }
    }
    if measured.is_empty() {
        return (None, failures);
    }
    let cells = measured.iter().map(|m| m.doc.runs.len()).max().unwrap_or(0);
    let mut runs = Vec::new();
    let mut stonewall = Vec::new();
    for i in 0..cells {
        let parts: Vec<(&Measured, &CellResult, (u64, u64))> = measured
            .iter()
            .filter_map(|m| {
                let c = m.doc.runs.get(i)?;
                let w = m.windows.get(i).copied().unwrap_or((0, 0));
                Some((m, c, w))
            })
            .collect();
        let mut cell = merge_cell(&parts);
        if parts.len() < measured.len() {
            cell.interrupted = true;
        }
        stonewall.push(stonewall_of(&parts));
        runs.push(cell);
    }
    let first = &measured[0].doc;
    let mut warnings: Vec<Warning> = Vec::new();
    for m in &measured {
        for w in &m.doc.warnings {
            let w = Warning::new(
                &w.code,
                format!("rank {} ({}): {}", m.rank, m.host, w.message),
            );
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    let mut prepare = first.prepare.clone();
    for m in &measured[1..] {
        let p = &m.doc.prepare;
        prepare.written_bytes += p.written_bytes;
        prepare.reused_files += p.reused_files;
        prepare.seconds = prepare.seconds.max(p.seconds);
        prepare.cache_resident_pct_after_evict = prepare
            .cache_resident_pct_after_evict
            .max(p.cache_resident_pct_after_evict);
    }
    let complete = failures.is_empty()
        && !stopped_any
        && measured.len() as u32 == ranks
        && measured.iter().all(|m| !m.doc.interrupted);
    let per_rank = measured
        .iter()
        .map(|m| RankRun {
            rank: m.rank,
            host: m.host.clone(),
            env: m.doc.env.clone(),
            system: m.doc.system.clone(),
            prepare: m.doc.prepare.clone(),
            interrupted: m.doc.interrupted,
            cells: m
                .doc
                .runs
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (s, e) = m.windows.get(i).copied().unwrap_or((0, 0));
                    RankCell {
                        measure_start_unix_ns: s,
                        measure_end_unix_ns: e,
                        hist_bins: OpKind::ALL
                            .iter()
                            .filter_map(|&k| {
                                let h = c.lat_hists.get(k as usize)?;
                                (h.count() > 0).then(|| (k.name().to_string(), bins(h)))
                            })
                            .collect(),
                        cell: c.clone(),
                    }
                })
                .collect(),
        })
        .collect();
    let doc = RunDoc {
        schema: first.schema.clone(),
        // the merge is a document of its own
        doc_id: Some(crate::model::new_doc_id()),
        iolab_version: first.iolab_version.clone(),
        start_time: measured
            .iter()
            .map(|m| m.doc.start_time.clone())
            .min()
            .unwrap_or_default(),
        end_time: measured
            .iter()
            .map(|m| m.doc.end_time.clone())
            .max()
            .unwrap_or_default(),
        label: first.label.clone(),
        tags: first.tags.clone(),
        env: first.env.clone(),
        system: first.system.clone(),
        prepare,
        warnings,
        interrupted: !complete,
        runs,
        dist: Some(Distributed {
            ranks,
            hosts,
            complete,
            failures: failures.clone(),
            stonewall,
            per_rank,
        }),
    };
    (Some(doc), failures)
}

/// A histogram's recorded buckets: `[value_ns, count]`, the value the bucket's highest.
fn bins(h: &LatHist) -> Vec<(u64, u64)> {
    h.h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// The ranks' measured windows are one fixed window: time-limited, none interrupted.
fn fixed_window(parts: &[(&Measured, &CellResult, (u64, u64))]) -> Option<f64> {
    let c0 = parts[0].1;
    let Limit::TimeS(t) = c0.job.job.limit else {
        return None;
    };
    parts
        .iter()
        .all(|(_, c, _)| !c.interrupted && (c.window_s - t).abs() < 1e-9)
        .then_some(t)
}

/// Seconds from the earliest measure start to the latest end.
fn span_s(parts: &[(&Measured, &CellResult, (u64, u64))]) -> f64 {
    let t0 = parts.iter().map(|p| p.2.0).min().unwrap_or(0);
    let t1 = parts.iter().map(|p| p.2.1).max().unwrap_or(0);
    (t1.saturating_sub(t0) as f64 / 1e9).max(1e-9)
}

fn merge_cell(parts: &[(&Measured, &CellResult, (u64, u64))]) -> CellResult {
    let c0 = parts[0].1;
    let fixed = fixed_window(parts);
    let span = span_s(parts);
    let window_s = fixed.unwrap_or(span);
    let mut hists: Vec<LatHist> = OpKind::ALL.iter().map(|_| LatHist::new()).collect();
    for (_, c, _) in parts {
        for (dst, src) in hists.iter_mut().zip(&c.lat_hists) {
            dst.merge(src);
        }
    }
    let op = |k: OpKind| -> OpResult {
        let ops: Vec<&OpResult> = parts.iter().map(|p| p.1.results.get(k)).collect();
        let total_ops: u64 = ops.iter().map(|o| o.ops).sum();
        let total_bytes: u64 = ops.iter().map(|o| o.bytes).sum();
        // A fixed window: each rank's rate counts what completed inside the same window, so
        // the rates add; otherwise everything over the whole span (first start to last end).
        let (iops, bps) = if fixed.is_some() {
            (
                ops.iter().map(|o| o.iops).sum(),
                ops.iter().map(|o| o.bytes_per_sec).sum(),
            )
        } else {
            (total_ops as f64 / span, total_bytes as f64 / span)
        };
        let mut by: BTreeMap<u64, BsResult> = BTreeMap::new();
        for o in &ops {
            for b in &o.by_bs {
                let e = by.entry(b.bs_bytes).or_insert(BsResult {
                    bs_bytes: b.bs_bytes,
                    ops: 0,
                    bytes: 0,
                    iops: 0.0,
                    bytes_per_sec: 0.0,
                    // per-size histograms stay with the ranks
                    lat_ns: None,
                });
                e.ops += b.ops;
                e.bytes += b.bytes;
                if fixed.is_some() {
                    e.iops += b.iops;
                    e.bytes_per_sec += b.bytes_per_sec;
                } else {
                    e.iops = e.ops as f64 / span;
                    e.bytes_per_sec = e.bytes as f64 / span;
                }
            }
        }
        OpResult {
            ops: total_ops,
            bytes: total_bytes,
            iops,
            bytes_per_sec: bps,
            lat_ns: LatSummary::from_hist(&hists[k as usize]),
            // the submission latencies stay with the ranks
            slat_ns: None,
            issue_lat_ns: None,
            by_bs: by.into_values().collect(),
        }
    };
    let results = Results {
        read: op(OpKind::Read),
        write: op(OpKind::Write),
        fsync: op(OpKind::Fsync),
        trim: op(OpKind::Trim),
    };
    let mut cpu = Cpu::default();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut warnings: Vec<Warning> = Vec::new();
    for (m, c, _) in parts {
        cpu.user_s += c.cpu.user_s;
        cpu.sys_s += c.cpu.sys_s;
        cpu.user_pct += c.cpu.user_pct;
        cpu.sys_pct += c.cpu.sys_pct;
        for (e, n) in &c.errors {
            *errors.entry(e.clone()).or_default() += n;
        }
        for w in &c.warnings {
            let w = Warning::new(
                &w.code,
                format!("rank {} ({}): {}", m.rank, m.host, w.message),
            );
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    let mut job = c0.job.clone();
    job.job.threads = parts.iter().map(|p| p.1.job.job.threads).sum();
    let verify = parts.iter().try_fold(None, |acc: Option<_>, p| {
        let v = p.1.verify.as_ref()?;
        let mut a: crate::model::verify::VerifyResult = acc.unwrap_or_default();
        a.add(v);
        Some(Some(a))
    });
    CellResult {
        mode: c0.mode.clone(),
        job,
        duration_s: span,
        window_s,
        results,
        schedule_lag_ns: None,
        cpu,
        timeseries: merge_series(parts),
        errors,
        cache_resident_pct_at_start: parts
            .iter()
            .map(|p| p.1.cache_resident_pct_at_start)
            .fold(0.0, f64::max),
        warnings,
        interrupted: parts.iter().any(|p| p.1.interrupted),
        device: None,
        roles: Vec::new(),
        verify: verify.flatten(),
        steady: Vec::new(),
        latency_depth: None,
        replay: None,
        lat_hists: hists,
        clones: Vec::new(),
        clat_hists: Vec::new(),
    }
}

/// Second by second, the ranks' counts and rates added (their windows start together);
/// per-second percentiles are each rank's own (in `dist.per_rank`), so null here.
fn merge_series(parts: &[(&Measured, &CellResult, (u64, u64))]) -> Vec<TsPoint> {
    let n = parts
        .iter()
        .map(|p| p.1.timeseries.len())
        .max()
        .unwrap_or(0);
    (0..n)
        .map(|i| {
            let pts: Vec<&TsPoint> = parts.iter().filter_map(|p| p.1.timeseries.get(i)).collect();
            let add = |sel: fn(&TsPoint) -> Option<&TsOp>| -> Option<TsOp> {
                let ops: Vec<&TsOp> = pts.iter().filter_map(|p| sel(p)).collect();
                if ops.is_empty() {
                    return None;
                }
                Some(TsOp {
                    ops: ops.iter().map(|o| o.ops).sum(),
                    iops: ops.iter().map(|o| o.iops).sum(),
                    bytes_per_sec: ops.iter().map(|o| o.bytes_per_sec).sum(),
                    p50_ns: None,
                    p99_ns: None,
                })
            };
            TsPoint {
                t_s: i as f64,
                dur_s: pts.iter().map(|p| p.dur_s).fold(0.0, f64::max),
                read: add(|p| p.read.as_ref()),
                write: add(|p| p.write.as_ref()),
                fsync: add(|p| p.fsync.as_ref()),
                trim: add(|p| p.trim.as_ref()),
            }
        })
        .collect()
}

/// Reads and writes (ops, bytes) a rank completed in the first `tau_s` seconds of its window,
/// from its time series (the second that `tau_s` falls in counted in proportion).
fn done_by(c: &CellResult, tau_s: f64) -> (f64, f64) {
    let (mut ops, mut bytes) = (0.0, 0.0);
    for p in &c.timeseries {
        let share = ((tau_s - p.t_s) / p.dur_s.max(1e-9)).clamp(0.0, 1.0);
        for o in [&p.read, &p.write].into_iter().flatten() {
            ops += o.ops as f64 * share;
            bytes += o.bytes_per_sec * p.dur_s * share;
        }
    }
    (ops, bytes)
}

fn stonewall_of(parts: &[(&Measured, &CellResult, (u64, u64))]) -> Stonewall {
    let t0 = parts.iter().map(|p| p.2.0).min().unwrap_or(0);
    let latest_start = parts.iter().map(|p| p.2.0).max().unwrap_or(0);
    let first = parts
        .iter()
        .min_by_key(|p| p.2.1)
        .expect("at least one rank");
    let first_end = first.2.1;
    let last_end = parts.iter().map(|p| p.2.1).max().unwrap_or(0);
    let secs = |t: u64| t.saturating_sub(t0) as f64 / 1e9;
    let (first_s, last_s) = (secs(first_end).max(1e-9), secs(last_end).max(1e-9));
    let (mut ops_first, mut bytes_first) = (0.0, 0.0);
    let (mut ops_all, mut bytes_all) = (0u64, 0u64);
    for (_, c, (s, _)) in parts {
        let tau = first_end.saturating_sub(*s) as f64 / 1e9;
        let (o, b) = done_by(c, tau);
        ops_first += o;
        bytes_first += b;
        ops_all += c.results.read.ops + c.results.write.ops;
        bytes_all += c.results.read.bytes + c.results.write.bytes;
    }
    Stonewall {
        start_spread_ms: latest_start.saturating_sub(t0) as f64 / 1e6,
        first_rank: first.0.rank,
        first_finished_s: first_s,
        last_finished_s: last_s,
        iops_until_first: ops_first / first_s,
        bytes_per_sec_until_first: bytes_first / first_s,
        iops_until_last: ops_all as f64 / last_s,
        bytes_per_sec_until_last: bytes_all as f64 / last_s,
    }
}

/// Rank 0's merge of a distributed `iolab db`: transactions, queries, errors, retries and
/// reconnects added; TPS and QPS added when every rank ran the same `--time`, else all
/// transactions over the longest rank's duration; latency from the added histograms; the time
/// series added second by second. None when no rank measured.
pub fn merge_db(
    outcomes: Vec<Outcome<super::DbDone>>,
) -> (Option<crate::model::db::DbDoc>, Vec<RankFailure>) {
    use crate::model::db::{DbDistributed, DbRank};
    use crate::model::db::{DbPoint, TypeResult};
    let ranks = outcomes.len() as u32;
    let hosts: Vec<String> = outcomes.iter().map(|o| o.host.clone()).collect();
    let mut failures = Vec::new();
    let mut stopped_any = false;
    let mut done = Vec::new();
    for o in outcomes {
        match o.result {
            Ok(mut d) => {
                d.doc.hist = (!d.hist.is_empty())
                    .then(|| crate::store::deserialize_hist(&d.hist).ok())
                    .flatten();
                done.push((o.rank, o.host, d));
            }
            Err(f) if f.only_stopped() => stopped_any = true,
            Err(f) => failures.push(RankFailure {
                rank: o.rank,
                host: o.host,
                error: f.msg,
            }),
        }
    }
    if done.is_empty() {
        return (None, failures);
    }
    let mut doc = done[0].2.doc.clone();
    // the merge is a document of its own
    doc.doc_id = Some(crate::model::new_doc_id());
    let timed = done
        .iter()
        .all(|(_, _, d)| d.doc.job.time_s.is_some() && !d.doc.interrupted);
    let longest = done
        .iter()
        .map(|(_, _, d)| d.doc.duration_s)
        .fold(0.0, f64::max)
        .max(1e-9);
    let mut hist = LatHist::new();
    doc.transactions = 0;
    doc.queries = 0;
    doc.errors = 0;
    doc.retries = 0;
    doc.reconnects = 0;
    let mut cpu_s = Some(0.0);
    doc.error_messages.clear();
    doc.warnings.clear();
    doc.job.threads = 0;
    let (mut tps, mut qps) = (0.0, 0.0);
    // each warning once: as it is when every rank had it, else naming the ranks
    let mut said: Vec<(String, String, Vec<String>)> = Vec::new();
    for (r, host, d) in &done {
        let x = &d.doc;
        doc.transactions += x.transactions;
        doc.queries += x.queries;
        doc.errors += x.errors;
        doc.retries += x.retries;
        doc.reconnects += x.reconnects;
        cpu_s = cpu_s.zip(x.client_cpu_s).map(|(a, b)| a + b);
        doc.job.threads += x.job.threads;
        tps += x.tps;
        qps += x.qps;
        for (k, v) in &x.error_messages {
            *doc.error_messages.entry(k.clone()).or_default() += v;
        }
        for w in &x.warnings {
            match said
                .iter_mut()
                .find(|(c, m, _)| *c == w.code && *m == w.message)
            {
                Some((_, _, who)) => who.push(format!("{r} ({host})")),
                None => said.push((
                    w.code.clone(),
                    w.message.clone(),
                    vec![format!("{r} ({host})")],
                )),
            }
        }
        if let Some(h) = &x.hist {
            hist.merge(h);
        }
        doc.start_time = doc.start_time.clone().min(x.start_time.clone());
        doc.end_time = doc.end_time.clone().max(x.end_time.clone());
    }
    doc.warnings = said
        .into_iter()
        .map(|(code, msg, who)| {
            if who.len() == done.len() {
                Warning::new(&code, msg)
            } else {
                Warning::new(&code, format!("rank {}: {msg}", who.join(", rank ")))
            }
        })
        .collect();
    doc.duration_s = longest;
    doc.client_cpu_s = cpu_s;
    doc.client_cpu_us_per_tx = cpu_s
        .filter(|_| doc.transactions > 0)
        .map(|c| c * 1e6 / doc.transactions as f64);
    if timed {
        doc.tps = tps;
        doc.qps = qps;
    } else {
        doc.tps = doc.transactions as f64 / longest;
        doc.qps = doc.queries as f64 / longest;
    }
    // One transaction type per test: its figures are the totals.
    for (name, t) in doc.types.iter_mut() {
        *t = TypeResult {
            transactions: done
                .iter()
                .filter_map(|(_, _, d)| d.doc.types.get(name))
                .map(|t| t.transactions)
                .sum(),
            tps: if timed {
                done.iter()
                    .filter_map(|(_, _, d)| d.doc.types.get(name))
                    .map(|t| t.tps)
                    .sum()
            } else {
                doc.transactions as f64 / longest
            },
            lat_ns: LatSummary::from_hist(&hist),
        };
    }
    let n = done
        .iter()
        .map(|(_, _, d)| d.doc.timeseries.len())
        .max()
        .unwrap_or(0);
    doc.timeseries = (0..n)
        .map(|i| {
            let pts: Vec<&DbPoint> = done
                .iter()
                .filter_map(|(_, _, d)| d.doc.timeseries.get(i))
                .collect();
            DbPoint {
                t_s: i as f64,
                tps: pts.iter().map(|p| p.tps).sum(),
                qps: pts.iter().map(|p| p.qps).sum(),
                p50_ns: None,
                p99_ns: None,
            }
        })
        .collect();
    doc.update_loop = None;
    doc.device = None;
    let complete = failures.is_empty()
        && !stopped_any
        && done.len() as u32 == ranks
        && done.iter().all(|(_, _, d)| !d.doc.interrupted);
    doc.interrupted = !complete;
    let starts: Vec<u64> = done.iter().map(|(_, _, d)| d.window.0).collect();
    doc.dist = Some(DbDistributed {
        ranks,
        hosts,
        complete,
        failures: failures.clone(),
        start_spread_ms: (starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0))
            as f64
            / 1e6,
        per_rank: done
            .into_iter()
            .map(|(rank, host, d)| DbRank {
                rank,
                host,
                measure_start_unix_ns: d.window.0,
                measure_end_unix_ns: d.window.1,
                hist_bins: d.doc.hist.as_ref().map(bins).unwrap_or_default(),
                doc: d.doc,
            })
            .collect(),
    });
    doc.hist = Some(hist);
    (Some(doc), failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Failed;

    /// A rank's one-mode document: `lats` read latencies (ns) over a 2 s fixed window, its
    /// time series `per_s` reads in each second, measured from `start_ns` to `end_ns`.
    fn rank(r: u32, lats: &[u64], per_s: [u64; 2], window: (u64, u64)) -> Outcome {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/report/run.json")).unwrap();
        let mut doc = RunDoc::from_json(&v).unwrap();
        doc.runs.truncate(1);
        let c = &mut doc.runs[0];
        let mut h = LatHist::new();
        for &l in lats {
            h.record(l);
        }
        let n = lats.len() as u64;
        c.results.read.ops = n;
        c.results.read.bytes = n * 16384;
        c.results.read.iops = n as f64 / 2.0;
        c.results.read.bytes_per_sec = (n * 16384) as f64 / 2.0;
        c.results.read.lat_ns = LatSummary::from_hist(&h);
        for (p, &k) in c.timeseries.iter_mut().zip(&per_s) {
            let o = p.read.as_mut().unwrap();
            o.ops = k;
            o.iops = k as f64;
            o.bytes_per_sec = (k * 16384) as f64;
        }
        c.timeseries.truncate(2);
        // the last second is as long as what is left of the window
        c.timeseries[1].dur_s = (window.1 - window.0) as f64 / 1e9 - 1.0;
        c.lat_hists = vec![h, LatHist::new(), LatHist::new()];
        let hists = c.lat_hists.iter().map(crate::dist::hist_bytes).collect();
        Outcome {
            rank: r,
            host: format!("h{r}"),
            result: Ok(Done {
                doc,
                hists: vec![hists],
                windows: vec![window],
            }),
        }
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn counts_add_and_percentiles_come_from_the_added_histograms() {
        // Rank 0 fast, rank 1 slow: the average of their p50s is nowhere near the merged p50.
        let fast: Vec<u64> = (0..900).map(|i| 10_000 + i).collect();
        let slow: Vec<u64> = (0..100).map(|i| 5_000_000 + 1000 * i).collect();
        let (doc, failures) = merge(vec![
            rank(0, &fast, [450, 450], (10 * S, 12 * S)),
            rank(1, &slow, [50, 50], (10 * S, 12 * S)),
        ]);
        assert!(failures.is_empty());
        let doc = doc.unwrap();
        let r = &doc.runs[0].results.read;
        assert_eq!((r.ops, r.bytes), (1000, 1000 * 16384));
        assert_eq!(r.iops, 500.0, "rates over the same fixed window add");
        let mut all = LatHist::new();
        for &l in fast.iter().chain(&slow) {
            all.record(l);
        }
        let lat = r.lat_ns.as_ref().unwrap();
        assert_eq!(lat.p50, all.percentile(50.0));
        assert_eq!(lat.p99, all.percentile(99.0));
        assert!(lat.p50 < 11_000, "p50 is a fast rank's: {}", lat.p50);
        assert!(lat.p99 > 5_000_000, "p99 is the slow rank's: {}", lat.p99);
        let d = doc.dist.unwrap();
        assert!(d.complete);
        assert_eq!(d.hosts, vec!["h0", "h1"]);
        assert_eq!(d.per_rank[1].cells[0].cell.results.read.ops, 100);
        let bins_total: u64 = d.per_rank[0].cells[0].hist_bins["read"]
            .iter()
            .map(|b| b.1)
            .sum();
        assert_eq!(bins_total, 900);
        assert_eq!(doc.runs[0].timeseries[0].read.as_ref().unwrap().ops, 500);
    }

    #[test]
    fn stonewall_counts_every_rank_until_the_first_finished() {
        // Rank 1 finishes after 1.5 s, rank 0 after 2 s; both start together.
        let (doc, _) = merge(vec![
            rank(0, &[1000; 400], [200, 200], (0, 2 * S)),
            rank(1, &[1000; 300], [200, 100], (0, 3 * S / 2)),
        ]);
        let w = &doc.unwrap().dist.unwrap().stonewall[0];
        assert_eq!(w.first_rank, 1);
        assert!((w.first_finished_s - 1.5).abs() < 1e-9);
        assert!((w.last_finished_s - 2.0).abs() < 1e-9);
        // until 1.5 s: rank 0 did 200 + 100 (half its second second), rank 1 all its 300
        assert!((w.iops_until_first - 600.0 / 1.5).abs() < 1e-6, "{w:?}");
        assert!((w.iops_until_last - 700.0 / 2.0).abs() < 1e-6, "{w:?}");
        assert_eq!(w.start_spread_ms, 0.0);
    }

    #[test]
    fn a_failed_rank_is_listed_and_the_others_kept_as_incomplete() {
        let failed = Outcome {
            rank: 2,
            host: "h2".into(),
            result: Err(Failed {
                exit: 1,
                msg: "opening /d/iolab-file.0: Operation not permitted".into(),
            }),
        };
        let stopped = Outcome {
            rank: 1,
            host: "h1".into(),
            result: Err(Failed {
                exit: 130,
                msg: crate::engine::checkpoints::STOPPED.into(),
            }),
        };
        let (doc, failures) = merge(vec![
            rank(0, &[1000; 10], [5, 5], (0, 2 * S)),
            stopped,
            failed,
        ]);
        assert_eq!(failures.len(), 1, "a rank that only stopped is no failure");
        assert_eq!((failures[0].rank, failures[0].host.as_str()), (2, "h2"));
        let doc = doc.unwrap();
        assert!(doc.interrupted);
        let d = doc.dist.unwrap();
        assert!(!d.complete);
        assert_eq!(d.ranks, 3);
        assert_eq!(doc.runs[0].results.read.ops, 10);
        let (none, f) = merge(vec![Outcome {
            rank: 0,
            host: "h0".into(),
            result: Err(Failed {
                exit: 2,
                msg: "--dir /x: no such directory".into(),
            }),
        }]);
        assert!(none.is_none());
        assert_eq!(f.len(), 1);
    }
}
