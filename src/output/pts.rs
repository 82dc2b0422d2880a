//! `iolab suite pts`'s report as text (PTS's pages: each test's steady-state verdict, its
//! measurement window table and its matrix over the window) and its charts (the steady-state
//! plot of each test, the IOPS matrix's 2D plot and its bars by block size and mix, the
//! throughput and latency tests, write saturation against what was written).

use crate::model::pts::*;
use crate::model::units::Bytes;
use crate::output::charts::{Chart, Kind, Series};
use comfy_table::{CellAlignment, Table};

fn table() -> Table {
    let mut t = Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t
}

fn right(t: &mut Table, from: usize) {
    let n = t.column_count();
    for i in from..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// A figure in the unit its table prints.
fn figure(f: Tracked, v: f64) -> String {
    match f {
        Tracked::Iops => format!("{v:.0}"),
        Tracked::BwBytesPerSec => format!("{:.1}", v / 1048576.0),
        Tracked::LatMeanNs => format!("{:.1}", v / 1000.0),
    }
}

fn unit(f: Tracked) -> &'static str {
    match f {
        Tracked::Iops => "IOPS",
        Tracked::BwBytesPerSec => "MiB/s",
        Tracked::LatMeanNs => "mean latency us",
    }
}

/// A test's title as PTS names it.
pub fn title(t: &PtsTest) -> String {
    match t.name.as_str() {
        "iops" => "IOPS test".into(),
        "throughput-128k" => "Throughput test, 128 KiB".into(),
        "throughput-1m" => "Throughput test, 1024 KiB".into(),
        "latency" => "Latency test".into(),
        n => n.into(),
    }
}

/// The steady-state verdict of a test, one line.
pub fn verdict(t: &PtsTest) -> String {
    let s = &t.steady;
    let window = match (s.window_first, s.window_last) {
        (Some(a), Some(b)) => format!("rounds {a}-{b}"),
        _ => "none: fewer rounds than the window".into(),
    };
    let figures = match (s.window_avg, s.range_pct, s.slope_pct) {
        (Some(avg), Some(r), Some(sl)) => format!(
            "; {} {} on average, range {r:.1} % of it (limit {} %), best-fit excursion {sl:.1} % (limit {} %)",
            figure(t.tracked, avg),
            unit(t.tracked),
            s.range_limit_pct,
            s.slope_limit_pct
        ),
        _ => String::new(),
    };
    format!(
        "{}: {} (tracked: {} {}); measurement window {window}{figures}",
        title(t),
        if s.attained {
            format!("steady state reached at round {}", t.tracked_rounds.len())
        } else {
            format!(
                "NOT steady after {} rounds: the figures below are the last rounds', not a steady state",
                t.tracked_rounds.len()
            )
        },
        t.tracked_cell,
        unit(t.tracked)
    )
}

/// PTS's measurement window table: each round of the window and the tracked figure.
fn window_table(t: &PtsTest) -> String {
    let (Some(a), Some(b)) = (t.steady.window_first, t.steady.window_last) else {
        return String::new();
    };
    let mut tb = table();
    tb.set_header(vec![
        "round".to_string(),
        format!("{} {}", t.tracked_cell, unit(t.tracked)),
    ]);
    for r in a..=b {
        tb.add_row(vec![
            r.to_string(),
            figure(t.tracked, t.tracked_rounds[r as usize - 1]),
        ]);
    }
    right(&mut tb, 0);
    format!("measurement window:\n{tb}\n")
}

/// A test's cells over the window: block sizes down, mixes across (R/W).
fn matrix(t: &PtsTest, f: Tracked) -> String {
    let mut mixes: Vec<u32> = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    for c in &t.window {
        if !mixes.contains(&c.read_pct) {
            mixes.push(c.read_pct);
        }
        if !sizes.contains(&c.bs_bytes) {
            sizes.push(c.bs_bytes);
        }
    }
    let mut tb = table();
    let mut head = vec!["block size".to_string()];
    head.extend(mixes.iter().map(|m| format!("{m}/{}", 100 - m)));
    tb.set_header(head);
    for bs in &sizes {
        let mut row = vec![kib(*bs)];
        for m in &mixes {
            row.push(
                t.window
                    .iter()
                    .find(|c| c.bs_bytes == *bs && c.read_pct == *m)
                    .map(|c| figure(f, f.of(c)))
                    .unwrap_or_default(),
            );
        }
        tb.add_row(row);
    }
    right(&mut tb, 1);
    format!(
        "{} (R/W mix across; {}, average over the window):\n{tb}\n",
        unit(f),
        if t.name == "latency" {
            "one thread, one I/O in flight"
        } else {
            "every thread"
        }
    )
}

/// The whole report as text.
pub fn pts_text(r: &PtsResult) -> String {
    let s = &r.settings;
    let mut out = format!(
        "SNIA PTS client tests on {} ({}, {} tested): {} threads x {} I/O in flight ({}), O_DIRECT, cells of {} s, at most {} rounds per test{}\n",
        r.target,
        r.kind,
        Bytes(r.capacity_bytes),
        s.threads,
        s.iodepth,
        s.engine,
        s.cell_s,
        s.max_rounds,
        if s.quick { " (--quick)" } else { "" }
    );
    out += &format!("purge: {}\n", r.purge.note);
    match &r.precondition {
        Some(p) => {
            out += &format!(
                "preconditioning: {} of 128 KiB sequential writes (twice the capacity) in {:.1} s, {:.1} MiB/s\n",
                Bytes(p.bytes_written),
                p.seconds,
                p.bw_bytes_per_sec / 1048576.0
            )
        }
        None => out += "preconditioning: not done\n",
    }
    for t in &r.tests {
        out += &format!("\n{}\n", verdict(t));
        out += &window_table(t);
        match t.name.as_str() {
            "latency" => {
                out += &matrix(t, Tracked::LatMeanNs);
                out += &format!(
                    "max latency us over the window: {}\n",
                    t.window
                        .iter()
                        .map(|c| format!("{} {:.1}", c.name(), c.lat_max_ns / 1000.0))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            n if n.starts_with("throughput") => out += &matrix(t, Tracked::BwBytesPerSec),
            _ => out += &matrix(t, Tracked::Iops),
        }
    }
    if let Some(w) = &r.wsat {
        let first = w.rounds.first();
        let last = w.rounds.last();
        out += &format!(
            "\nWrite saturation: {} rounds of {} s of RND 4KiB 0/100, {} written ({} of the 4 x capacity, {}){}\n",
            w.rounds.len(),
            w.round_s,
            crate::model::units::human_bytes(last.map_or(0, |x| x.written_total_bytes) as f64),
            Bytes(w.target_bytes),
            if w.reached {
                "reached"
            } else {
                "not reached: its time ran out"
            },
            match (first, last) {
                (Some(a), Some(b)) => format!(
                    "; IOPS {:.0} in the first round, {:.0} in the last",
                    a.iops, b.iops
                ),
                _ => String::new(),
            }
        );
    }
    for n in &r.notes {
        out += &format!("note: {n}\n");
    }
    if r.interrupted {
        out += "interrupted: only what ran is above\n";
    }
    out
}

/// PTS's steady-state plot: every round's tracked figure and, over the window, its average,
/// 110 % and 90 % of it (the range PTS allows) and the best-fit line.
#[allow(clippy::too_many_arguments)]
pub fn steady_chart(
    name: &str,
    title: &str,
    ylab: &str,
    what: &str,
    rounds: &[f64],
    window: usize,
    avg: f64,
    range_pct: f64,
) -> Option<Chart> {
    if window < 2 || rounds.len() < window {
        return None;
    }
    let first = rounds.len() - window;
    let slope = crate::measure::steady::slope(&rounds[first..]);
    let mid = (window - 1) as f64 / 2.0;
    let round = |k: usize| (k + 1) as f64;
    let mut c = Chart::new(name, title, "round", ylab, Kind::Line);
    let flat = |name: String, y: f64| Series {
        name,
        points: vec![(round(first), y), (round(rounds.len() - 1), y)],
    };
    c.series.push(Series {
        name: what.into(),
        points: rounds
            .iter()
            .enumerate()
            .map(|(k, &y)| (round(k), y))
            .collect(),
    });
    c.series.push(flat("window average".into(), avg));
    let half = range_pct / 200.0;
    c.series.push(flat(
        format!("{:.0} % of the average", 100.0 * (1.0 + half)),
        avg * (1.0 + half),
    ));
    c.series.push(flat(
        format!("{:.0} % of the average", 100.0 * (1.0 - half)),
        avg * (1.0 - half),
    ));
    c.series.push(Series {
        name: "best-fit line".into(),
        points: (0..window)
            .map(|k| (round(first + k), avg + slope * (k as f64 - mid)))
            .collect(),
    });
    c.check().is_ok().then_some(c)
}

/// The charts of a PTS result (each checked; one that cannot be drawn is left out).
pub fn pts_charts(r: &PtsResult) -> Vec<Chart> {
    let mut out = Vec::new();
    for t in &r.tests {
        let scale = match t.tracked {
            Tracked::Iops => 1.0,
            Tracked::BwBytesPerSec => 1.0 / 1048576.0,
            Tracked::LatMeanNs => 1.0 / 1000.0,
        };
        let ylab = match t.tracked {
            Tracked::Iops => "IOPS (operations/s)",
            Tracked::BwBytesPerSec => "MiB/s (1 MiB = 1048576 bytes)",
            Tracked::LatMeanNs => "mean latency (us)",
        };
        let rounds: Vec<f64> = t.tracked_rounds.iter().map(|v| v * scale).collect();
        if let Some(avg) = t.steady.window_avg
            && let Some(c) = steady_chart(
                &format!("steady-state-{}", t.name),
                &format!(
                    "{}: steady state of {} (SNIA PTS: {} % range, {} % slope)",
                    title(t),
                    t.tracked_cell,
                    t.steady.range_limit_pct,
                    t.steady.slope_limit_pct
                ),
                ylab,
                unit(t.tracked),
                &rounds,
                t.steady.window_rounds as usize,
                avg * scale,
                t.steady.range_limit_pct,
            )
        {
            out.push(c);
        }
        match t.name.as_str() {
            "iops" => {
                // PTS's 2D plot: IOPS against block size, one line per mix
                let mut c = Chart::new(
                    "pts-iops-2d",
                    "IOPS test: IOPS by block size and R/W mix (average over the window)",
                    "block size (KiB)",
                    "IOPS (operations/s)",
                    Kind::Line,
                );
                c.x_log = true;
                c.y_log = true;
                let mut mixes: Vec<u32> = t.window.iter().map(|c| c.read_pct).collect();
                mixes.dedup();
                for m in &mixes {
                    let mut points: Vec<(f64, f64)> = t
                        .window
                        .iter()
                        .filter(|c| c.read_pct == *m && c.iops > 0.0)
                        .map(|c| (c.bs_bytes as f64 / 1024.0, c.iops))
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    c.series.push(Series {
                        name: format!("R/W {m}/{}", 100 - m),
                        points,
                    });
                }
                if c.check().is_ok() {
                    out.push(c);
                }
                // PTS's 3D bar plot, flattened: bars by block size, one per mix
                let mut sizes: Vec<u64> = t.window.iter().map(|c| c.bs_bytes).collect();
                sizes.sort_unstable();
                sizes.dedup();
                let mut b = Chart::new(
                    "pts-iops-bars",
                    "IOPS test: IOPS by block size (bars) and R/W mix (average over the window)",
                    "block size",
                    "IOPS (operations/s)",
                    Kind::Bars,
                );
                b.categories = sizes.iter().map(|&s| kib(s)).collect();
                for m in &mixes {
                    b.series.push(Series {
                        name: format!("R/W {m}/{}", 100 - m),
                        points: sizes
                            .iter()
                            .enumerate()
                            .map(|(i, s)| {
                                (
                                    i as f64,
                                    t.window
                                        .iter()
                                        .find(|c| c.read_pct == *m && c.bs_bytes == *s)
                                        .map_or(0.0, |c| c.iops),
                                )
                            })
                            .collect(),
                    });
                }
                if b.check().is_ok() {
                    out.push(b);
                }
            }
            "latency" => {
                let mut b = Chart::new(
                    "pts-latency",
                    "Latency test: mean and max latency (one thread, one I/O in flight)",
                    "cell",
                    "latency (us)",
                    Kind::Bars,
                );
                b.categories = t.window.iter().map(|c| c.name()).collect();
                for (name, f) in [
                    ("mean", (|c: &PtsCell| c.lat_mean_ns) as fn(&PtsCell) -> f64),
                    ("max", |c: &PtsCell| c.lat_max_ns),
                ] {
                    b.series.push(Series {
                        name: name.into(),
                        points: t
                            .window
                            .iter()
                            .enumerate()
                            .map(|(i, c)| (i as f64, f(c) / 1000.0))
                            .collect(),
                    });
                }
                if b.check().is_ok() {
                    out.push(b);
                }
            }
            _ => {}
        }
    }
    if let Some(w) = &r.wsat {
        let mut c = Chart::new(
            "pts-wsat",
            "Write saturation: RND 4KiB 0/100 IOPS against what was written",
            "total written (GiB)",
            "IOPS (operations/s)",
            Kind::Line,
        );
        c.series.push(Series {
            name: "IOPS".into(),
            points: w
                .rounds
                .iter()
                .map(|x| (x.written_total_bytes as f64 / 1073741824.0, x.iops))
                .collect(),
        });
        if c.check().is_ok() {
            out.push(c);
        }
    }
    out
}
