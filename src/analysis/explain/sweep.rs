//! A sweep's cells side by side ([`explain_sweep`]): the cells that differ only in threads or
//! iodepth give what one run alone does not have: the device's low-load latency
//! (`queue_depth_bound` and `device_saturated` with more than one I/O in flight), per-thread
//! latency rising with the threads (`fs_serialisation`) and flat IOPS (`device_flat`).

use super::facts::{Facts, await_ms, fmt_n, shell_word};
use super::rules::{
    CAP_FLAT, CAP_MIN_SIZES, CAP_MIN_SPAN, CAP_MOVE, FLAT_GAIN, FLAT_MIN_STEP, FLAT_QUEUE_SHARE,
    FLAT_UTIL_PCT, QD_MAX_LOAD_RATIO, RULES, SAT_AWAIT_RATIO, SAT_MIN_AQU, SAT_UTIL_PCT,
    SERIAL_LAT_SHARE, SERIAL_MAX_AQU, SHARED_MAX_GAIN, SHARED_MIN_ADD, qd_hit, queue_is_own,
    waits_for_io,
};
use super::run::{explain_runs, finding, rule};
use super::{CellExplain, Confidence, Explanation, Finding, Kind};
use crate::model::run::{CellResult, RunDoc};
use crate::model::units::fmt_ns;

/// What a sweep's cells must share to be compared: the job with threads and iodepth (and the
/// seed) left out, and the mode.
fn sweep_key(c: &CellResult) -> String {
    let mut j = c.job.clone();
    j.job.threads = 0;
    j.job.iodepth = 0;
    j.job.seed = 0;
    format!(
        "{}{}",
        c.mode,
        serde_json::to_string(&j).unwrap_or_default()
    )
}

/// The indexes of the runs' own cells (modes and phases, not their roles' blocks) among the
/// explanation's cells, in the order of the runs and their cells.
fn own_cells(cells: &[CellExplain]) -> Vec<usize> {
    cells
        .iter()
        .enumerate()
        .filter(|(_, c)| c.role.is_none())
        .map(|(i, _)| i)
        .collect()
}

/// Puts `f` in place of the cell's limit, keeping its "also" findings.
fn replace_limit(c: &mut CellExplain, f: Finding) {
    let also: Vec<Finding> = c
        .findings
        .drain(..)
        .filter(|x| {
            RULES
                .iter()
                .any(|r| r.id == x.rule && r.class.kind == Kind::Also)
        })
        .collect();
    c.findings.push(f);
    c.findings.extend(also);
}

/// `queue_depth_bound` and `device_saturated` with more than one I/O in flight, in a sweep: the
/// device's await at the sweep's fewest in flight for the same job is its low-load latency,
/// which one run alone does not have. Only a cell no rule explained (`none`) is given one.
fn low_load_steps(runs: &[(i64, RunDoc)], cells: &mut [CellExplain]) {
    let mut all = Vec::new();
    for (id, d) in runs {
        for c in &d.runs {
            all.push((*id, d, c, sweep_key(c), Facts::of(d, c)));
        }
    }
    let index = own_cells(cells);
    for (at, (_, _, _, key, f)) in all.iter().enumerate() {
        let Some(&ci) = index.get(at) else {
            continue;
        };
        if f.in_flight <= 1.0 || cells[ci].findings.first().is_none_or(|x| x.rule != "none") {
            continue;
        }
        let Some((name, d)) = f.dev else {
            continue;
        };
        // the reference: the same job with the fewest in flight, fewer than here
        let Some((ref_id, _, _, _, r)) = all
            .iter()
            .filter(|x| &x.3 == key && x.4.in_flight < f.in_flight)
            .filter(|x| x.4.dev.is_some_and(|(_, io)| await_ms(io) > 0.0))
            .min_by(|a, b| a.4.in_flight.total_cmp(&b.4.in_flight))
        else {
            continue;
        };
        let r0 = r.dev.map_or(0.0, |(_, io)| await_ms(io));
        let a = await_ms(d);
        let ratio = a / r0;
        let low = format!(
            "device {name} await {a:.2} ms at {} in flight vs {r0:.2} ms at {} in flight (run {ref_id}, its low-load latency): {ratio:.2}×",
            fmt_n(f.in_flight),
            fmt_n(r.in_flight),
        );
        let rotational_disk = f
            .env
            .and_then(|e| crate::system::env::find(e, name))
            .is_some_and(|b| b.kind == "disk" && b.rotational == Some(true));
        if d.util_pct >= SAT_UTIL_PCT && d.aqu_sz >= SAT_MIN_AQU && ratio >= SAT_AWAIT_RATIO {
            let rl = rule("device_saturated");
            replace_limit(
                &mut cells[ci],
                Finding {
                    layer: rl.class.layer,
                    rule: rl.id.into(),
                    confidence: Confidence::Medium,
                    evidence: format!(
                        "{low}; %util {:.0}, aqu-sz {:.1}; {} r/s + {} w/s{}",
                        d.util_pct,
                        d.aqu_sz,
                        fmt_n(d.r_s),
                        fmt_n(d.w_s),
                        if rotational_disk {
                            ""
                        } else {
                            "; %util alone is weak evidence on a device that may serve requests in parallel (iostat(1)): the await against its low-load await is what shows the queue"
                        }
                    ),
                    why: rl.why.into(),
                    next: f.sweep_cmd(),
                },
            );
        } else if ratio <= QD_MAX_LOAD_RATIO
            && waits_for_io(f)
            && queue_is_own(f)
            && let Some(h) = qd_hit(f, Confidence::High, &low)
        {
            replace_limit(&mut cells[ci], finding(rule("queue_depth_bound"), h));
        }
    }
}

/// `fs_serialisation` in a sweep: per-thread latency up as threads rise. A cell the rule found
/// serialised is compared with the same job at the sweep's fewest in flight: when its mean
/// latency rose by at least half the ratio of in-flight I/Os while the device's queue stayed
/// ≤ [`SERIAL_MAX_AQU`], the sweep confirms it (evidence added, high confidence); when it did
/// not, the finding stays with that said and low confidence.
fn serial_steps(runs: &[(i64, RunDoc)], cells: &mut [CellExplain]) {
    let mut all = Vec::new();
    for (id, d) in runs {
        for c in &d.runs {
            all.push((*id, sweep_key(c), Facts::of(d, c)));
        }
    }
    let index = own_cells(cells);
    for (at, (_, key, f)) in all.iter().enumerate() {
        let Some(&ci) = index.get(at) else {
            continue;
        };
        let Some(found) = cells[ci]
            .findings
            .first_mut()
            .filter(|x| x.rule == "fs_serialisation")
        else {
            continue;
        };
        let Some((ref_id, _, r)) = all
            .iter()
            .filter(|x| &x.1 == key && x.2.in_flight < f.in_flight && x.2.lat_mean_ns > 0.0)
            .min_by(|a, b| a.2.in_flight.total_cmp(&b.2.in_flight))
        else {
            continue;
        };
        let rise = f.lat_mean_ns / r.lat_mean_ns;
        let more = f.in_flight / r.in_flight;
        let aqu = |x: &Facts| x.dev.map_or(f64::NAN, |(_, io)| io.aqu_sz);
        let up = rise >= SERIAL_LAT_SHARE * more && aqu(f) <= SERIAL_MAX_AQU;
        found.evidence.push_str(&format!(
            "; per-thread latency {}: {} at {} in flight (run {ref_id}) → {} at {} ({rise:.1}× for {more:.1}× the in-flight I/Os), IOPS {} → {}, device aqu-sz {:.2} → {:.2}",
            if up { "up as threads rise" } else { "did not rise with the threads" },
            fmt_ns(r.lat_mean_ns),
            fmt_n(r.in_flight),
            fmt_ns(f.lat_mean_ns),
            fmt_n(f.in_flight),
            fmt_n(r.iops),
            fmt_n(f.iops),
            aqu(r),
            aqu(f),
        ));
        found.confidence = if up {
            Confidence::High
        } else {
            Confidence::Low
        };
    }
}

/// The figures of one sweep cell that `device_flat` compares.
struct Step {
    /// index into the explanation's cells
    at: usize,
    /// the cell's job with threads and iodepth left out, as JSON (what must be equal)
    key: String,
    in_flight: f64,
    iops: f64,
    dev: Option<(String, f64, f64)>,
    dir: String,
}

/// `device_flat`: compares the cells of a sweep that differ only in threads or iodepth.
fn flat_steps(runs: &[(i64, RunDoc)], cells: &mut [CellExplain]) {
    let mut steps = Vec::new();
    let mut at = 0;
    for (_, d) in runs {
        for c in &d.runs {
            let f = Facts::of(d, c);
            steps.push(Step {
                at,
                key: sweep_key(c),
                in_flight: f.in_flight,
                iops: f.iops,
                dev: f.dev.map(|(n, io)| (n.to_string(), io.aqu_sz, io.util_pct)),
                dir: shell_word(&c.job.fileset.dir.to_string_lossy()),
            });
            at += 1;
        }
    }
    // the cells of the runs' modes and phases, not their roles' blocks
    let index = own_cells(cells);
    steps.sort_by(|a, b| a.key.cmp(&b.key).then(a.in_flight.total_cmp(&b.in_flight)));
    let r = rule("device_flat");
    for w in steps.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.key != b.key || b.in_flight < FLAT_MIN_STEP * a.in_flight || a.iops <= 0.0 {
            continue;
        }
        let (Some((name, aqu_a, _)), Some((_, aqu_b, util_b))) = (&a.dev, &b.dev) else {
            continue;
        };
        let gain = b.iops / a.iops - 1.0;
        if gain >= FLAT_GAIN
            || *util_b < FLAT_UTIL_PCT
            || aqu_b - aqu_a < FLAT_QUEUE_SHARE * (b.in_flight - a.in_flight)
        {
            continue;
        }
        let evidence = format!(
            "{} → {} in flight: {} → {} IOPS ({:+.1} %), while device {name} aqu-sz {aqu_a:.2} → {aqu_b:.2} at %util {util_b:.0}",
            fmt_n(a.in_flight),
            fmt_n(b.in_flight),
            fmt_n(a.iops),
            fmt_n(b.iops),
            gain * 100.0
        );
        for s in [a, b] {
            let Some(&i) = index.get(s.at) else {
                continue;
            };
            let c = &mut cells[i];
            // a device found saturated on its own figures: the flat IOPS confirm it
            if let Some(sat) = c.findings.first_mut()
                && sat.rule == "device_saturated"
            {
                sat.evidence
                    .push_str(&format!("; IOPS flat as threads rise: {evidence}"));
                sat.confidence = Confidence::High;
                continue;
            }
            if c.findings
                .first()
                .is_some_and(|f| f.rule != "queue_depth_bound" && f.rule != "none")
            {
                continue;
            }
            replace_limit(
                c,
                Finding {
                    layer: r.class.layer,
                    rule: r.id.into(),
                    confidence: Confidence::High,
                    evidence: evidence.clone(),
                    why: r.why.into(),
                    next: format!(
                        "iolab check {}  # the setup of the device; iolab iostat {name} while it runs shows its queue",
                        s.dir
                    ),
                },
            );
        }
    }
}

/// `iops_cap` and `bandwidth_cap`: the cells of a sweep that differ only in their one block
/// size, at least [`CAP_MIN_SIZES`] sizes, the largest at least [`CAP_MIN_SPAN`] times the
/// smallest. IOPS within ±[`CAP_FLAT`] of their mean at every size while bytes/s rose at least
/// [`CAP_MOVE`] times is a ceiling in operations; bytes/s within it while IOPS fell at least as
/// much, a ceiling in bytes. Added to every cell of the group.
fn cap_steps(runs: &[(i64, RunDoc)], cells: &mut [CellExplain]) {
    let mut all: Vec<Sized> = Vec::new();
    let mut at = 0;
    for (_, d) in runs {
        for c in &d.runs {
            let f = Facts::of(d, c);
            let j = &c.job.job;
            if j.bs_mix.is_none() && j.bs_range.is_none() && j.bs_dirs.is_none() {
                let mut job = c.job.clone();
                job.job.bs_bytes = 0;
                job.job.seed = 0;
                let key = format!(
                    "{}{}",
                    c.mode,
                    serde_json::to_string(&job).unwrap_or_default()
                );
                let bps = f.io_read.1 + f.io_write.1;
                all.push(Sized {
                    at,
                    key,
                    bs: j.bs_bytes,
                    iops: f.iops,
                    bps,
                    dev: f.dev.map(|(n, _)| n.to_string()),
                });
            }
            at += 1;
        }
    }
    all.sort_by(|a, b| a.key.cmp(&b.key).then(a.bs.cmp(&b.bs)));
    let index = own_cells(cells);
    for group in all.chunk_by(|a, b| a.key == b.key) {
        let sizes = group
            .iter()
            .map(|x| x.bs)
            .collect::<std::collections::BTreeSet<_>>();
        let (lo, hi) = (group[0].bs, group[group.len() - 1].bs);
        if sizes.len() < CAP_MIN_SIZES || (hi as f64) < CAP_MIN_SPAN * lo as f64 {
            continue;
        }
        let flat = |v: fn(&Sized) -> f64| {
            let xs: Vec<f64> = group.iter().map(v).collect();
            let m = xs.iter().sum::<f64>() / xs.len() as f64;
            m > 0.0 && xs.iter().all(|x| (x - m).abs() <= CAP_FLAT * m)
        };
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let iops_flat = flat(|x| x.iops) && last.bps >= CAP_MOVE * first.bps;
        let bytes_flat = flat(|x| x.bps) && first.iops >= CAP_MOVE * last.iops;
        let (id, what) = match (iops_flat, bytes_flat) {
            (true, _) => ("iops_cap", "IOPS"),
            (_, true) => ("bandwidth_cap", "bytes/s"),
            _ => continue,
        };
        let row = group
            .iter()
            .map(|x| {
                format!(
                    "{} {} IOPS {}/s",
                    crate::model::units::human_bytes(x.bs as f64),
                    fmt_n(x.iops),
                    crate::model::units::human_bytes(x.bps)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let dev = first
            .dev
            .as_deref()
            .map_or(String::new(), |d| format!(" on {d}"));
        let r = rule(id);
        for x in group {
            let Some(&i) = index.get(x.at) else {
                continue;
            };
            cells[i].findings.push(Finding {
                layer: r.class.layer,
                rule: r.id.into(),
                confidence: Confidence::Medium,
                evidence: format!(
                    "{what} within ±{} % across {} block sizes{dev} ({row})",
                    fmt_n(CAP_FLAT * 100.0),
                    sizes.len()
                ),
                why: r.why.into(),
                next: "iolab env  # cgroup limits and the platform (a cloud volume's provisioned IOPS or throughput)".into(),
            });
        }
    }
}

/// One cell of a block-size sweep: its index, its job without its block size, the block size,
/// IOPS, bytes/s and device.
struct Sized {
    at: usize,
    key: String,
    bs: u64,
    iops: f64,
    bps: f64,
    dev: Option<String>,
}

/// The explanation of a sweep's runs: each run's, then what the cells that differ only in
/// threads or iodepth show side by side (the low-load latency, flat IOPS), and those that
/// differ only in block size (a cap).
pub fn explain_sweep(runs: &[(i64, RunDoc)], subject: &str) -> Explanation {
    let mut cells = explain_runs(runs, subject).cells;
    low_load_steps(runs, &mut cells);
    serial_steps(runs, &mut cells);
    flat_steps(runs, &mut cells);
    cap_steps(runs, &mut cells);
    Explanation {
        schema: crate::model::schema::EXPLAIN.into(),
        subject: subject.into(),
        cells,
    }
}

/// One directory of `iolab together`: its device, and its I/Os per second alone and at once
/// with the others.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedRow {
    pub dir: String,
    pub dev: Option<String>,
    pub alone: f64,
    pub together: f64,
}

/// What `iolab together` measured, summed up: the best device alone, the devices alone added,
/// all at once, and whether that is a cap they share ([`SHARED_MIN_ADD`], [`SHARED_MAX_GAIN`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedVerdict {
    pub best_alone: f64,
    pub sum_alone: f64,
    pub together: f64,
    pub shared: bool,
    /// The figures in one line, with units.
    pub evidence: String,
}

/// The verdict over every directory of a together experiment; None with fewer than two
/// directories measured both ways or nothing measured alone.
pub fn shared_verdict(rows: &[SharedRow]) -> Option<SharedVerdict> {
    if rows.len() < 2 {
        return None;
    }
    let best_alone = rows.iter().map(|r| r.alone).fold(0.0, f64::max);
    if best_alone <= 0.0 {
        return None;
    }
    let sum_alone: f64 = rows.iter().map(|r| r.alone).sum();
    let together: f64 = rows.iter().map(|r| r.together).sum();
    let shared =
        sum_alone >= SHARED_MIN_ADD * best_alone && together <= SHARED_MAX_GAIN * best_alone;
    let name = |r: &SharedRow| match &r.dev {
        Some(d) => format!("{} ({d})", r.dir),
        None => r.dir.clone(),
    };
    let alone = rows
        .iter()
        .map(|r| format!("{} {} IOPS", name(r), fmt_n(r.alone)))
        .collect::<Vec<_>>()
        .join(", ");
    let at_once = rows
        .iter()
        .map(|r| fmt_n(r.together))
        .collect::<Vec<_>>()
        .join(" + ");
    let evidence = format!(
        "alone: {alone}; all at once: {at_once} = {} IOPS, {:.2}x the best alone, where devices with limits of their own would give up to {} IOPS ({:.2}x)",
        fmt_n(together),
        together / best_alone,
        fmt_n(sum_alone),
        sum_alone / best_alone
    );
    Some(SharedVerdict {
        best_alone,
        sum_alone,
        together,
        shared,
        evidence,
    })
}

/// The explanation of `iolab together`'s runs (`coords`: each run's cell, `load` and `dir`):
/// the sweep's, and `shared_cap` on every cell when the devices share a cap.
pub fn explain_together(
    runs: &[(i64, RunDoc)],
    coords: &[std::collections::BTreeMap<String, String>],
    subject: &str,
) -> Explanation {
    use crate::model::experiment::{ALONE, LOAD, TOGETHER};
    let mut e = explain_sweep(runs, subject);
    let mut rows: Vec<SharedRow> = Vec::new();
    for ((_, d), c) in runs.iter().zip(coords) {
        let (Some(load), Some(dir)) = (c.get(LOAD), c.get("dir")) else {
            continue;
        };
        let Some(cell) = d.runs.first() else { continue };
        let f = Facts::of(d, cell);
        let at = match rows.iter().position(|r| &r.dir == dir) {
            Some(i) => i,
            None => {
                rows.push(SharedRow {
                    dir: dir.clone(),
                    dev: f.dev.map(|(n, _)| n.to_string()),
                    alone: 0.0,
                    together: 0.0,
                });
                rows.len() - 1
            }
        };
        match load.as_str() {
            ALONE => rows[at].alone = f.iops,
            TOGETHER => rows[at].together = f.iops,
            _ => {}
        }
    }
    if let Some(v) = shared_verdict(&rows).filter(|v| v.shared) {
        let r = rule("shared_cap");
        for i in own_cells(&e.cells) {
            e.cells[i].findings.push(Finding {
                layer: r.class.layer,
                rule: r.id.into(),
                confidence: Confidence::Medium,
                evidence: v.evidence.clone(),
                why: r.why.into(),
                next: "iolab env  # the devices' stack (partitions of one disk, one controller) and the platform (an instance's limit across its volumes)".into(),
            });
        }
    }
    e
}
