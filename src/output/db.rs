//! `iolab db` as text: the sysbench-like summary and seed tables of a database run.

use crate::model::db::*;
use crate::model::lat::LatSummary;
use crate::model::units::fmt_ns;

fn s6(x: f64) -> String {
    format!("{x:.6}")
}

/// The human report.
pub fn render(d: &DbDoc) -> String {
    let what = if d.update_loop.is_some() {
        "one row, autocommitted UPDATEs".to_string()
    } else {
        format!(
            "{} thread{}, {} tables x {} rows, {} transactions",
            d.job.threads,
            if d.job.threads == 1 { "" } else { "s" },
            d.job.tables,
            d.job.table_size,
            d.job.trx
        )
    };
    let mut s = format!(
        "iolab db {} on {} {} ({}), {what}\n",
        d.test,
        d.backend,
        d.settings.get("version").cloned().unwrap_or_default(),
        d.job.url
    );
    let keys: Vec<String> = d
        .settings
        .iter()
        .filter(|(k, _)| *k != "version")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    s.push_str(&format!("storage settings: {}\n", keys.join(" ")));
    if let Some(u) = &d.update_loop {
        s.push_str(&format!("# Start time: {}\n", u.start_time));
        let line = |s: &mut String, indent: usize, k: &str, v: String| {
            s.push_str(&format!(
                "{}{:<w$}: {v}\n",
                " ".repeat(indent),
                k,
                w = 40 - indent
            ))
        };
        line(&mut s, 0, "Iterations", u.iterations.to_string());
        line(&mut s, 0, "Total time", s6(u.total_time_s));
        line(
            &mut s,
            8,
            "Initialisation time",
            s6(u.initialisation_time_s),
        );
        line(&mut s, 8, "Finalisation time", s6(u.finalisation_time_s));
        line(&mut s, 8, "Benchmark loop", s6(u.benchmark_loop_s));
        line(&mut s, 8, "Benchmark sum", s6(u.benchmark_sum_s));
        line(
            &mut s,
            16,
            "Min/Average/Max",
            format!("{}/{}/{}", s6(u.min_s), s6(u.average_s), s6(u.max_s)),
        );
        line(&mut s, 16, "Median", s6(u.median_s));
        line(&mut s, 16, "Standard deviation", s6(u.stddev_s));
        line(
            &mut s,
            16,
            "95th/99th percentile",
            format!("{}/{}", s6(u.p95_s), s6(u.p99_s)),
        );
        s.push_str(&format!("# Finish time: {}\n", u.finish_time));
    } else {
        s.push_str(&format!(
            "transactions: {} ({:.2} per sec.), queries: {} ({:.2} per sec.), errors: {}, retries: {}, reconnects: {}, time: {:.3} s\n",
            d.transactions, d.tps, d.queries, d.qps, d.errors, d.retries, d.reconnects, d.duration_s
        ));
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
        t.set_header(vec![
            "transaction",
            "count",
            "TPS",
            "min",
            "avg",
            "p50",
            "p95",
            "p99",
            "max",
        ]);
        for (name, r) in &d.types {
            let l = |f: fn(&LatSummary) -> f64| {
                r.lat_ns
                    .as_ref()
                    .map(|x| crate::model::units::fmt_ns(f(x)))
                    .unwrap_or_default()
            };
            t.add_row(vec![
                name.clone(),
                r.transactions.to_string(),
                format!("{:.2}", r.tps),
                l(|x| x.min as f64),
                l(|x| x.mean),
                l(|x| x.p50 as f64),
                l(|x| x.p95 as f64),
                l(|x| x.p99 as f64),
                l(|x| x.max as f64),
            ]);
        }
        s.push_str(&t.to_string());
        s.push('\n');
        for (m, n) in &d.error_messages {
            s.push_str(&format!("error ({n}x): {m}\n"));
        }
    }
    if let Some(dd) = &d.dist {
        s.push_str(&dist_text(dd));
    }
    if d.interrupted {
        s.push_str("interrupted: the figures above cover what was measured before the stop\n");
    }
    for w in &d.warnings {
        s.push_str(&format!("warning [{}]: {}\n", w.code, w.message));
    }
    s
}

/// A distributed `iolab db`: a row per rank and host, and the failed ranks.
fn dist_text(d: &crate::model::db::DbDistributed) -> String {
    let mut hosts: Vec<&str> = d.hosts.iter().map(String::as_str).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut s = format!(
        "distributed run: {} ranks on {} host{} ({}), started within {:.1} ms; the figures above are every rank's merged (histograms added){}\n",
        d.ranks,
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        hosts.join(", "),
        d.start_spread_ms,
        if d.complete {
            ""
        } else {
            "; INCOMPLETE: not every rank measured"
        }
    );
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
        .set_header(vec![
            "rank",
            "host",
            "transactions",
            "TPS",
            "p50",
            "p99",
            "errors",
        ]);
    for r in &d.per_rank {
        let lat = r.doc.types.values().next().and_then(|t| t.lat_ns.as_ref());
        let f = |x: Option<u64>| x.map_or_else(|| "-".into(), |v| fmt_ns(v as f64));
        t.add_row(vec![
            r.rank.to_string(),
            r.host.clone(),
            r.doc.transactions.to_string(),
            format!("{:.2}", r.doc.tps),
            f(lat.map(|l| l.p50)),
            f(lat.map(|l| l.p99)),
            r.doc.errors.to_string(),
        ]);
    }
    s.push_str(&format!("per rank\n{t}\n"));
    for f in &d.failures {
        s.push_str(&format!(
            "rank {} on {} failed: {}\n",
            f.rank, f.host, f.error
        ));
    }
    s
}
