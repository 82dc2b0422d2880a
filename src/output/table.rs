//! Human-readable output: the summary table and the warnings.

use crate::measure::stats::OpKind;
use crate::model::run::{CellResult, RunDoc};
use crate::model::units::{Bytes, human_bytes};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

pub use crate::model::units::fmt_ns;

/// Whether `k` of cell `c` is fsync and its fsyncs are only the end-of-mode ones (--fsync-end,
/// no --fsync-freq, --fsync-all or --fsync-every): they come after the measured window, so they have a count
/// and latencies but no meaningful rate.
pub fn end_only_fsyncs(c: &CellResult, k: OpKind) -> bool {
    k == OpKind::Fsync && !c.job.job.syncs_while_running()
}

/// The cells as the table and the charts show them: a phase of concurrent roles as one block
/// per role, named `ROLE (mode)` (the CPU column is the whole phase's), in the order the results
/// store numbers its cells.
pub fn shown_cells(cells: &[CellResult]) -> Vec<CellResult> {
    crate::model::run::flat_cells(cells)
        .into_iter()
        .map(|(role, mut c)| {
            if let Some(r) = role {
                c.mode = format!("{r} ({})", c.mode);
            }
            c
        })
        .collect()
}

/// One row per mode × operation type.
pub fn summary_table(cells: &[CellResult]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec![
        "mode",
        "thr",
        "bs",
        "op",
        "ops",
        "IOPS",
        "MiB/s",
        "lat avg",
        "p50",
        "p99",
        "p99.9",
        "max",
        "cpu usr/sys %",
    ]);
    for c in cells {
        let j = &c.job.job;
        let mut first = true;
        for k in OpKind::ALL {
            let r = c.results.get(k);
            if r.ops == 0 {
                continue;
            }
            let lat = r.lat_ns.as_ref();
            let l = |f: fn(&crate::model::run::LatSummary) -> f64| {
                lat.map(|x| fmt_ns(f(x))).unwrap_or_default()
            };
            let mut mode = c.mode.clone();
            if c.interrupted {
                mode.push_str(" (partial)");
            }
            // fsyncs carry no bytes; without --fsync-freq or --fsync-all the only fsyncs are the
            // ones at the end of the mode (--fsync-end), after the measured window: a count and
            // latencies, but no rate
            let end_only = end_only_fsyncs(c, k);
            t.add_row(vec![
                if first { mode } else { String::new() },
                if first {
                    j.threads.to_string()
                } else {
                    String::new()
                },
                if first { j.bs_label() } else { String::new() },
                if end_only {
                    format!("{} (end)", k.name())
                } else {
                    k.name().to_string()
                },
                r.ops.to_string(),
                if end_only {
                    "-".into()
                } else {
                    format!("{:.0}", r.iops)
                },
                if k == OpKind::Fsync {
                    "-".into()
                } else {
                    format!("{:.2}", r.bytes_per_sec / 1048576.0)
                },
                l(|x| x.mean),
                l(|x| x.p50 as f64),
                l(|x| x.p99 as f64),
                l(|x| x.p99_9 as f64),
                l(|x| x.max as f64),
                if first {
                    format!("{:.0}/{:.0}", c.cpu.user_pct, c.cpu.sys_pct)
                } else {
                    String::new()
                },
            ]);
            first = false;
            // a job of several block sizes: one indented row per size that ran
            for b in r.by_bs.iter().filter(|b| b.ops > 0) {
                let l = |f: fn(&crate::model::run::LatSummary) -> f64| {
                    b.lat_ns.as_ref().map(|x| fmt_ns(f(x))).unwrap_or_default()
                };
                t.add_row(vec![
                    String::new(),
                    String::new(),
                    String::new(),
                    format!("  {} {}", k.name(), Bytes(b.bs_bytes)),
                    b.ops.to_string(),
                    format!("{:.0}", b.iops),
                    format!("{:.2}", b.bytes_per_sec / 1048576.0),
                    l(|x| x.mean),
                    l(|x| x.p50 as f64),
                    l(|x| x.p99 as f64),
                    l(|x| x.p99_9 as f64),
                    l(|x| x.max as f64),
                    String::new(),
                ]);
            }
        }
        if first {
            t.add_row(vec![
                c.mode.clone(),
                j.threads.to_string(),
                j.bs_label(),
                "-".into(),
                "0".into(),
            ]);
        }
    }
    for i in 4..12 {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The device figures of each mode, as two tables that each fit a printed page: the request
/// rates (r/s, w/s, kB/s, merges, flushes) and how the device coped (await, queue, request
/// sizes, %util, CPU). One table of all 17 columns was about 190 characters wide.
pub fn device_tables(cells: &[CellResult]) -> Option<(Table, Table)> {
    if cells.iter().all(|c| c.device.is_none()) {
        return None;
    }
    let new_table = |cols: &[&str]| {
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled);
        let mut h = vec!["mode", "thr", "device"];
        h.extend_from_slice(cols);
        t.set_header(h);
        t
    };
    let mut rates = new_table(&["r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "f/s"]);
    let mut coping = new_table(&[
        "r_await",
        "w_await",
        "aqu-sz",
        "rareq-sz",
        "wareq-sz",
        "%util",
        "cpu %usr/%sys/%iowait/%idle",
    ]);
    for c in cells {
        let Some(d) = &c.device else { continue };
        let cpu = &d.summary.cpu;
        for (i, name) in d.devices.iter().enumerate() {
            let Some(x) = d.summary.devices.get(name) else {
                continue;
            };
            let first = |v: String| if i == 0 { v } else { String::new() };
            let key = [
                first(c.mode.clone()),
                first(c.job.job.threads.to_string()),
                name.clone(),
            ];
            let mut r = key.to_vec();
            r.extend([
                format!("{:.1}", x.r_s),
                format!("{:.1}", x.w_s),
                format!("{:.1}", x.rkb_s),
                format!("{:.1}", x.wkb_s),
                format!("{:.1}", x.rrqm_s),
                format!("{:.1}", x.wrqm_s),
                x.f_s
                    .map(|f| format!("{f:.1}"))
                    .unwrap_or_else(|| "-".into()),
            ]);
            rates.add_row(r);
            let mut q = key.to_vec();
            q.extend([
                format!("{:.2}", x.r_await_ms),
                format!("{:.2}", x.w_await_ms),
                format!("{:.2}", x.aqu_sz),
                format!("{:.1}", x.rareq_sz_kb),
                format!("{:.1}", x.wareq_sz_kb),
                format!("{:.1}", x.util_pct),
                first(format!(
                    "{:.1}/{:.1}/{:.1}/{:.1}",
                    cpu.user, cpu.system, cpu.iowait, cpu.idle
                )),
            ]);
            coping.add_row(q);
        }
    }
    for (t, n) in [(&mut rates, 10), (&mut coping, 9)] {
        for i in 3..n {
            if let Some(col) = t.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    Some((rates, coping))
}

/// `libaio, iodepth 32`: the engine and the queue depth each thread keeps (its values when the
/// cells differ; 1 for an engine without a queue).
fn engine_line(doc: &RunDoc) -> String {
    let engine = doc.runs.first().map_or("?", |c| c.job.job.engine.name());
    let mut depths: Vec<u32> = doc.runs.iter().map(|c| c.job.job.iodepth).collect();
    depths.sort_unstable();
    depths.dedup();
    let depths: Vec<String> = depths.iter().map(u32::to_string).collect();
    format!("{engine}, iodepth {}", depths.join("/"))
}

/// `each cell: 10 s asked for, measured 10.0 s`: what bounded each cell (time, operations or
/// bytes, `--ramp` before it) and the measured windows' range.
fn time_line(doc: &RunDoc) -> String {
    use crate::model::job::Limit;
    let Some(c) = doc.runs.first() else {
        return String::new();
    };
    let j = &c.job.job;
    let mut asked = match j.limit {
        Limit::TimeS(t) => format!("{t} s"),
        Limit::Ops(n) => format!("{n} operations"),
        Limit::Bytes(b) => format!("{}", Bytes(b)),
    };
    if let Some(t) = j.max_time_s {
        asked.push_str(&format!(" or {t} s, whichever comes first"));
    }
    if j.ramp_s > 0.0 {
        asked.push_str(&format!(" after a {} s ramp", j.ramp_s));
    }
    let (lo, hi) = doc
        .runs
        .iter()
        .map(|c| c.window_s)
        .fold((f64::MAX, 0f64), |(lo, hi), w| (lo.min(w), hi.max(w)));
    let measured = if hi - lo < 0.05 {
        format!("{hi:.1} s")
    } else {
        format!("{lo:.1} to {hi:.1} s")
    };
    let each = if doc.runs.len() > 1 {
        "each cell: "
    } else {
        ""
    };
    format!("{each}{asked} asked for, measured {measured}\n")
}

/// The header lines before the table: what ran where.
pub fn header(doc: &RunDoc) -> String {
    let mut s = String::new();
    if let Some(c) = doc.runs.first() {
        let fsd = &c.job.fileset;
        let dev = doc.env.device.as_deref().unwrap_or("?");
        if let Some(d) = &fsd.device {
            s.push_str(&format!(
                "iolab {} on device {} ({}): {} from offset {}, engine {}, {}\n",
                doc.iolab_version,
                d.display(),
                dev,
                human_bytes(fsd.total_bytes as f64),
                Bytes(fsd.base_offset()),
                engine_line(doc),
                if doc.runs.iter().all(|c| c.job.job.direct) {
                    "O_DIRECT"
                } else {
                    "buffered"
                },
            ));
            s.push_str(&time_line(doc));
            s.push_str("a device target: nothing was prepared, nothing is removed; only the range was read or written\n");
            return s;
        }
        s.push_str(&format!(
            "iolab {} on {} ({} on {}): {} files x {} = {}, engine {}, {}\n",
            doc.iolab_version,
            fsd.dir.display(),
            doc.env.fs_type,
            dev,
            fsd.files,
            Bytes(fsd.file_size_bytes),
            human_bytes(fsd.total_bytes as f64),
            engine_line(doc),
            if doc.runs.iter().all(|c| c.job.job.direct) {
                "O_DIRECT"
            } else {
                "buffered"
            },
        ));
        s.push_str(&time_line(doc));
    }
    if let Some(c) = doc.runs.iter().find(|c| !c.roles.is_empty()) {
        let sets: Vec<String> = c
            .roles
            .iter()
            .map(|r| {
                let f = &r.job.fileset;
                if c.job.fileset == *f {
                    r.name.clone()
                } else {
                    format!(
                        "{} (own set in {}: {} files x {})",
                        r.name,
                        f.dir.display(),
                        f.files,
                        Bytes(f.file_size_bytes)
                    )
                }
            })
            .collect();
        s.push_str(&format!(
            "{} roles at once, over the same {:.1} s: {}\n",
            c.roles.len(),
            c.window_s,
            sets.join(", ")
        ));
    }
    let p = &doc.prepare;
    if doc
        .runs
        .iter()
        .all(|c| !crate::engine::caps(c.job.job.engine).needs_files)
    {
        s.push_str("null engine: no I/O was issued and no files were used; the figures are iolab's own cost per operation\n");
    } else if let Some(c) = doc.runs.first()
        && c.job.fileset.layout != crate::model::job::Layout::Overwrite
    {
        s.push_str(&format!(
            "layout {}: the files were made afresh before each mode, nothing written (docs/layouts.md)\n",
            c.job.fileset.layout
        ));
    } else if p.written_bytes > 0 {
        s.push_str(&format!(
            "prepared {} in {:.1} s ({} files reused); page cache after eviction: {:.1}% resident\n",
            human_bytes(p.written_bytes as f64),
            p.seconds,
            p.reused_files,
            p.cache_resident_pct_after_evict
        ));
    } else {
        s.push_str(&format!(
            "reused the prepared file set; page cache after eviction: {:.1}% resident\n",
            p.cache_resident_pct_after_evict
        ));
    }
    s
}

/// `--replay`: how the replay kept to its trace's time, one line.
fn replay_line(c: &CellResult) -> Option<String> {
    let (rp, r) = (c.job.job.replay.as_ref()?, c.replay.as_ref()?);
    let its = if rp.like.is_some() {
        "stream's"
    } else {
        "trace's"
    };
    let pace = if rp.closed {
        format!("closed loop (--closed), {:.3} s", r.replay_s)
    } else {
        let err = r
            .timing_error_pct
            .map_or_else(|| "not judged".into(), |e| format!("{e:+.2} %"));
        let lag = c.schedule_lag_ns.as_ref().map_or_else(String::new, |l| {
            format!(
                "; issued behind the {its} times p50 {} p99 {} max {}, {} over 1 ms",
                fmt_ns(l.p50 as f64),
                fmt_ns(l.p99 as f64),
                fmt_ns(l.max as f64),
                r.late_over_1ms
            )
        });
        format!(
            "{:.3} s for the {its} {:.3} s at speed {} (timing error {err}){lag}",
            r.replay_s, r.trace_s, rp.speed
        )
    };
    if let Some(l) = &rp.like {
        let class = l
            .class
            .as_ref()
            .map_or(String::new(), |k| format!(", its {k} requests"));
        return Some(format!(
            "{}: twin of {}{class} (--like, {} times its load): {} requests drawn, {pace}; at most {} in flight; the capture's {} regions of 1 MiB spread over the target\n",
            c.mode, rp.trace, l.scale, r.issued, r.max_in_flight, l.regions_touched
        ));
    }
    Some(format!(
        "{}: replay of {} ({}): {} of its {} requests issued, {pace}; at most {} in flight\n",
        c.mode,
        rp.trace,
        rp.format.name(),
        r.issued,
        rp.requests,
        r.max_in_flight
    ))
}

/// The whole human report of a run.
pub fn render(doc: &RunDoc) -> String {
    let mut s = header(doc);
    let shown = shown_cells(&doc.runs);
    s.push_str(&summary_table(&shown).to_string());
    s.push('\n');
    if shown
        .iter()
        .any(|c| c.results.fsync.ops > 0 && end_only_fsyncs(c, OpKind::Fsync))
    {
        s.push_str("fsync (end): the fsyncs of the files still dirty at the end of a mode (--fsync-end), after the measured window: a count and latencies, no rate (--fsync-freq N measures fsyncs during the mode)\n");
    }
    for c in &shown {
        if let Some(line) = replay_line(c) {
            s.push_str(&line);
            continue;
        }
        if let Some(l) = &c.schedule_lag_ns {
            s.push_str(&format!(
                "{}: schedule lag (iolab issuing behind the --rate schedule, included in the latencies): p50 {} p99 {} max {}\n",
                c.mode,
                fmt_ns(l.p50 as f64),
                fmt_ns(l.p99 as f64),
                fmt_ns(l.max as f64)
            ));
        }
    }
    for c in &shown {
        if let Some(line) = steady_line(c) {
            s.push_str(&line);
        }
    }
    for c in &shown {
        if let Some(v) = &c.verify {
            s.push_str(&format!("{}: {}\n", c.mode, v.line()));
            s.push_str(&v.mismatch_lines(20));
        }
    }
    if let Some((rates, coping)) = device_tables(&doc.runs) {
        s.push_str("device figures over the measured window (iostat -x; kB = 1024 bytes, await in ms, rareq/wareq-sz in kB):\n");
        s.push_str(&rates.to_string());
        s.push('\n');
        s.push_str(&coping.to_string());
        s.push('\n');
    }
    if let Some(d) = &doc.dist {
        s.push_str(&dist_text(doc, d));
    }
    if doc.interrupted {
        s.push_str("interrupted: the figures above cover what was measured before the stop\n");
    }
    // One line per warning code: the first message, and how many other modes had the same.
    let mut all: Vec<&crate::model::run::Warning> = Vec::new();
    for w in doc
        .warnings
        .iter()
        .chain(doc.runs.iter().flat_map(|c| c.warnings.iter()))
    {
        if !all.contains(&w) {
            all.push(w);
        }
    }
    let mut codes: Vec<&str> = Vec::new();
    for w in &all {
        if !codes.contains(&w.code.as_str()) {
            codes.push(&w.code);
        }
    }
    for code in codes {
        let same: Vec<&&crate::model::run::Warning> =
            all.iter().filter(|w| w.code == code).collect();
        s.push_str(&format!("warning [{code}]: {}", same[0].message));
        if same.len() > 1 {
            s.push_str(&format!(
                " (and {} more like it; see --json)",
                same.len() - 1
            ));
        }
        s.push('\n');
    }
    s
}

/// `--steady-state`'s verdict of a mode: when it held and the measurement window's figures, or
/// that it did not (the not_steady warning says why).
fn steady_line(c: &CellResult) -> Option<String> {
    use crate::model::steady::SteadyMetric;
    let spec = c.job.job.timing.steady.as_ref()?;
    spec.pts?;
    let st = c.steady.first()?;
    let what = match spec.metric {
        SteadyMetric::Iops => "IOPS",
        SteadyMetric::Bw => "MiB/s",
    };
    let fig = |v: f64| match spec.metric {
        SteadyMetric::Iops => format!("{v:.0} IOPS"),
        SteadyMetric::Bw => format!("{:.2} MiB/s", v / 1048576.0),
    };
    let n = st.rounds_iops.len();
    Some(
        match (st.attained, st.window_avg, st.range_pct, st.slope_pct) {
            (true, Some(avg), Some(r), Some(sl)) => format!(
                "{}: steady state (SNIA PTS on {what}, rounds of {} s): reached at round {n} ({:.0} s); the window of the last {} rounds: {} on average, range {r:.1} % of it, best-fit excursion {sl:.1} %\n",
                c.mode,
                spec.round_s,
                st.attained_at_s.unwrap_or(0.0),
                spec.window_s,
                fig(avg)
            ),
            _ => format!(
                "{}: steady state (SNIA PTS on {what}, rounds of {} s): not reached in {n} rounds\n",
                c.mode, spec.round_s
            ),
        },
    )
}

/// A distributed run: a row per rank and host for each cell, the stonewall figures and the
/// failed ranks (the table above is the merge of every rank).
fn dist_text(doc: &RunDoc, d: &crate::model::run::Distributed) -> String {
    let mut hosts: Vec<&str> = d.hosts.iter().map(String::as_str).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut s = format!(
        "distributed run: {} ranks on {} host{} ({}); the figures above are every rank's merged (histograms added){}\n",
        d.ranks,
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        hosts.join(", "),
        if d.complete {
            ""
        } else {
            "; INCOMPLETE: not every rank measured every mode"
        }
    );
    for (i, c) in doc.runs.iter().enumerate() {
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(vec![
                "rank",
                "host",
                "mode",
                "read IOPS",
                "write IOPS",
                "MiB/s",
                "p99 ms",
                "start ms",
                "window s",
            ]);
        let t0 = d
            .per_rank
            .iter()
            .filter_map(|r| r.cells.get(i))
            .map(|rc| rc.measure_start_unix_ns)
            .min()
            .unwrap_or(0);
        for r in &d.per_rank {
            let Some(rc) = r.cells.get(i) else { continue };
            let res = &rc.cell.results;
            let p99 = [&res.read, &res.write]
                .iter()
                .filter_map(|o| o.lat_ns.as_ref().map(|l| l.p99))
                .max();
            t.add_row(vec![
                r.rank.to_string(),
                r.host.clone(),
                rc.cell.mode.clone(),
                format!("{:.0}", res.read.iops),
                format!("{:.0}", res.write.iops),
                format!(
                    "{:.2}",
                    (res.read.bytes_per_sec + res.write.bytes_per_sec) / 1048576.0
                ),
                p99.map_or_else(|| "-".into(), |p| format!("{:.3}", p as f64 / 1e6)),
                format!(
                    "+{:.1}",
                    rc.measure_start_unix_ns.saturating_sub(t0) as f64 / 1e6
                ),
                format!("{:.2}", rc.cell.window_s),
            ]);
        }
        for (j, col) in t.column_iter_mut().enumerate() {
            if j >= 3 {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        s.push_str(&format!("{}: per rank\n{t}\n", c.mode));
        if let Some(w) = d.stonewall.get(i) {
            s.push_str(&format!(
                "{}: stonewall: {:.0} IOPS {:.2} MiB/s until the first rank (rank {}) finished at {:.2} s; {:.0} IOPS {:.2} MiB/s until the last finished at {:.2} s; starts within {:.1} ms\n",
                c.mode,
                w.iops_until_first,
                w.bytes_per_sec_until_first / 1048576.0,
                w.first_rank,
                w.first_finished_s,
                w.iops_until_last,
                w.bytes_per_sec_until_last / 1048576.0,
                w.last_finished_s,
                w.start_spread_ms
            ));
        }
    }
    for f in &d.failures {
        s.push_str(&format!(
            "rank {} on {} failed: {}\n",
            f.rank, f.host, f.error
        ));
    }
    s
}

/// One `iolab iostat` report, laid out like `iostat -x`.
pub fn iostat_text(time: &str, s: &crate::measure::iostat::Sample, devices: &[String]) -> String {
    let c = &s.cpu;
    let mut out = format!(
        "{time}  avg-cpu: %user {:.2} %nice {:.2} %system {:.2} %iowait {:.2} %steal {:.2} %idle {:.2}\n",
        c.user, c.nice, c.system, c.iowait, c.steal, c.idle
    );
    let mut t = Table::new();
    t.load_style(comfy_table::presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec![
        "Device", "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s",
        "wrqm/s", "%wrqm", "w_await", "wareq-sz", "d/s", "f/s", "f_await", "aqu-sz", "%util",
        "in_prg",
    ]);
    for d in devices {
        let Some(x) = s.devices.get(d) else { continue };
        let o = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
        t.add_row(vec![
            d.clone(),
            format!("{:.2}", x.r_s),
            format!("{:.2}", x.rkb_s),
            format!("{:.2}", x.rrqm_s),
            format!("{:.2}", x.rrqm_pct),
            format!("{:.2}", x.r_await_ms),
            format!("{:.2}", x.rareq_sz_kb),
            format!("{:.2}", x.w_s),
            format!("{:.2}", x.wkb_s),
            format!("{:.2}", x.wrqm_s),
            format!("{:.2}", x.wrqm_pct),
            format!("{:.2}", x.w_await_ms),
            format!("{:.2}", x.wareq_sz_kb),
            o(x.d_s),
            o(x.f_s),
            o(x.f_await_ms),
            format!("{:.2}", x.aqu_sz),
            format!("{:.2}", x.util_pct),
            x.in_flight.to_string(),
        ]);
    }
    for i in 1..19 {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_units_are_explicit() {
        assert_eq!(fmt_ns(812.0), "812 ns");
        assert_eq!(fmt_ns(95_300.0), "95.3 µs");
        assert_eq!(fmt_ns(12_400_000.0), "12.40 ms");
        assert_eq!(fmt_ns(1_200_000_000.0), "1.20 s");
    }
}
