//! The text of `iolab capture`'s summary.

use crate::model::capture::{CaptureSummary, IoDir};
use crate::model::units::human_bytes;

pub fn render(s: &CaptureSummary) -> String {
    let mut t = format!(
        "captured {} ({}) for {:.1} s into {} (stopped by {})\n",
        s.device, s.majmin, s.duration_s, s.file, s.stopped_by
    );
    if let Some(p) = &s.iolog {
        t.push_str(&format!("fio iolog (version 3): {p}\n"));
    }
    t.push_str(&format!(
        "{:<9} {:>10} {:>12} {:>16} {:>16}\n",
        "", "requests", "bytes", "window captured", "device counted"
    ));
    for d in IoDir::ALL {
        let dev = if d == IoDir::Other {
            "-".to_string()
        } else {
            s.check.device.get(d).to_string()
        };
        t.push_str(&format!(
            "{:<9} {:>10} {:>12} {:>16} {:>16}\n",
            d.name(),
            s.ios.get(d),
            human_bytes(s.bytes.get(d) as f64),
            s.check.captured.get(d),
            dev
        ));
    }
    t.push_str(&format!(
        "device counts {} (largest difference {:.2} %); events lost {}; incomplete {}; requeued {}\n",
        if s.check.agree { "agree" } else { "DIFFER" },
        s.check.max_diff_pct,
        s.events_lost,
        s.incomplete,
        s.requeued
    ));
    if !s.classes.is_empty() {
        t.push_str(&format!(
            "by file ({} files mapped{}):\n{:<9} {:>10} {:>12} {:>10} {:>12} {:>8}\n",
            s.files_mapped,
            if s.left_out > 0 {
                format!("; {} requests of other processes left out", s.left_out)
            } else {
                String::new()
            },
            "class",
            "reads",
            "read bytes",
            "writes",
            "write bytes",
            "flushes"
        ));
        for c in &s.classes {
            t.push_str(&format!(
                "{:<9} {:>10} {:>12} {:>10} {:>12} {:>8}\n",
                c.class,
                c.ios.read,
                human_bytes(c.bytes.read as f64),
                c.ios.write,
                human_bytes(c.bytes.write as f64),
                c.ios.flush
            ));
        }
    }
    if let Some(db) = &s.db {
        t.push_str(&format!(
            "the database's own counters ({} {}):\n",
            db.engine, db.version
        ));
        for c in db.counters.iter().filter(|c| c.delta != 0.0) {
            let v = if c.unit == "bytes" {
                human_bytes(c.delta)
            } else {
                format!("{} {}", c.delta, c.unit)
            };
            t.push_str(&format!("  {:<48} {v}\n", c.name));
        }
        for m in &db.missing {
            t.push_str(&format!("  not read: {m}\n"));
        }
    }
    for w in &s.warnings {
        t.push_str(&format!("warning: {w}\n"));
    }
    t
}

/// `iolab fingerprint`'s text: the mix, then each direction's sizes, sequentiality, flags and
/// latency, then arrivals, queue depth and the hot set.
pub fn fingerprint_text(f: &crate::model::fingerprint::Fingerprint) -> String {
    use crate::model::units::Bytes;
    let mut t = format!(
        "fingerprint of {} ({}, {:.1} s from {}): {} reads and {} writes ({:.1} % reads), {} flushes ({:.1}/s), {} discards\n",
        f.capture,
        f.device,
        f.duration_s,
        f.start,
        f.read.requests,
        f.write.requests,
        f.read_pct,
        f.requests.flush,
        f.flushes_per_sec,
        f.requests.discard
    );
    let ms = |ns: u64| format!("{:.3} ms", ns as f64 / 1e6);
    for (name, d) in [("reads", &f.read), ("writes", &f.write)] {
        if d.requests == 0 {
            continue;
        }
        let sizes: Vec<String> = d
            .sizes
            .iter()
            .take(6)
            .map(|s| format!("{} {:.1} %", Bytes(s.value), s.pct))
            .collect();
        t.push_str(&format!(
            "{name}: {:.0}/s, {}/s, mean size {}; sizes {}{}\n",
            d.iops,
            human_bytes(d.bytes_per_sec),
            human_bytes(d.mean_size_bytes),
            sizes.join(", "),
            if d.sizes.len() > 6 || d.other_sizes_pct > 0.0 {
                ", ..."
            } else {
                ""
            }
        ));
        t.push_str(&format!(
            "  after the previous {name}: {:.1} % sequential, {:.1} % a near skip (<= 1 MiB), {:.1} % far forward, {:.1} % backward; sync {:.1} %, FUA {:.1} %, preflush {:.1} %\n",
            d.seek.sequential_pct,
            d.seek.near_pct,
            d.seek.forward_far_pct,
            d.seek.backward_pct,
            d.sync_pct,
            d.fua_pct,
            d.preflush_pct
        ));
        if let Some(l) = &d.lat_ns {
            t.push_str(&format!(
                "  device latency: mean {}, p50 {}, p99 {}, p99.9 {}, max {}\n",
                ms(l.mean as u64),
                ms(l.p50),
                ms(l.p99),
                ms(l.p99_9),
                ms(l.max)
            ));
        }
    }
    if let Some(a) = &f.interarrival_ns {
        t.push_str(&format!(
            "between requests: p50 {}, p99 {}, max {}\n",
            ms(a.p50),
            ms(a.p99),
            ms(a.max)
        ));
    }
    let qd: Vec<String> = f
        .queue_depth
        .iter()
        .take(6)
        .map(|q| format!("{} {:.1} %", q.value, q.pct))
        .collect();
    t.push_str(&format!(
        "in flight at issue: mean {:.2}; {}\n",
        f.queue_depth_mean,
        qd.join(", ")
    ));
    let hot: Vec<String> = f
        .hot_set
        .iter()
        .map(|h| format!("{} % -> {:.1} %", h.regions_pct, h.requests_pct))
        .collect();
    t.push_str(&format!(
        "hot set ({} regions of {} touched; hottest regions -> share of reads and writes): {}\n",
        f.regions_touched,
        Bytes(f.region_bytes),
        hot.join(", ")
    ));
    if f.errors > 0 {
        t.push_str(&format!("{} requests completed with an error\n", f.errors));
    }
    if !f.classes.is_empty() {
        t.push_str(&format!(
            "by file class:\n{:<9} {:>9} {:>8} {:>9} {:>10} {:>9} {:>10} {:>8} {:>11} {:>11}\n",
            "class",
            "requests",
            "bytes",
            "reads/s",
            "read size",
            "writes/s",
            "write size",
            "seq wr",
            "flushes/s",
            "p99"
        ));
        for c in &f.classes {
            let g = &c.fingerprint;
            let p99 = [&g.read, &g.write]
                .iter()
                .filter_map(|d| d.lat_ns.as_ref().map(|l| l.p99))
                .max();
            t.push_str(&format!(
                "{:<9} {:>8.1}% {:>7.1}% {:>9.1} {:>10} {:>9.1} {:>10} {:>7.1}% {:>11.1} {:>11}\n",
                c.class,
                c.requests_pct,
                c.bytes_pct,
                g.read.iops,
                human_bytes(g.read.mean_size_bytes),
                g.write.iops,
                human_bytes(g.write.mean_size_bytes),
                g.write.seek.sequential_pct,
                g.flushes_per_sec,
                p99.map_or("-".to_string(), ms)
            ));
        }
    }
    t
}

/// A fingerprint's charts: each direction's sizes, the queue depth, the hot-set curve.
pub fn fingerprint_charts(
    f: &crate::model::fingerprint::Fingerprint,
) -> Vec<crate::output::charts::Chart> {
    use crate::output::charts::{Chart, Kind, Series};
    let mut out = Vec::new();
    let mut sizes: Vec<u64> = f
        .read
        .sizes
        .iter()
        .chain(&f.write.sizes)
        .map(|s| s.value)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut c = Chart::new(
        "fingerprint-sizes",
        "Request sizes (percent of each direction's requests)",
        "request size",
        "requests (%)",
        Kind::Bars,
    );
    c.categories = sizes
        .iter()
        .map(|&s| crate::model::units::Bytes(s).to_string())
        .collect();
    for (name, d) in [("reads", &f.read), ("writes", &f.write)] {
        if d.requests == 0 {
            continue;
        }
        c.series.push(Series {
            name: name.into(),
            points: sizes
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    (
                        i as f64,
                        d.sizes
                            .iter()
                            .find(|x| x.value == *s)
                            .map_or(0.0, |x| x.pct),
                    )
                })
                .collect(),
        });
    }
    out.push(c);
    let mut q = Chart::new(
        "fingerprint-queue-depth",
        "Requests in flight at issue (the device's queue depth)",
        "in flight",
        "requests (%)",
        Kind::Bars,
    );
    let mut qd = f.queue_depth.clone();
    qd.sort_by_key(|x| x.value);
    q.categories = qd.iter().map(|x| x.value.to_string()).collect();
    q.series.push(Series {
        name: "requests".into(),
        points: qd
            .iter()
            .enumerate()
            .map(|(i, x)| (i as f64, x.pct))
            .collect(),
    });
    out.push(q);
    let mut h = Chart::new(
        "fingerprint-hot-set",
        "Hot set: share of reads and writes on the hottest regions",
        "hottest regions (% of the regions touched)",
        "reads and writes (%)",
        Kind::Line,
    );
    h.series.push(Series {
        name: "share".into(),
        points: std::iter::once((0.0, 0.0))
            .chain(f.hot_set.iter().map(|p| (p.regions_pct, p.requests_pct)))
            .collect(),
    });
    out.push(h);
    out.into_iter().filter(|c| c.check().is_ok()).collect()
}
