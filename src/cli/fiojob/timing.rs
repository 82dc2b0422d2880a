//! fio's options of when a job issues I/O (`model::timing::Timing`): think time, start delay,
//! exitall, `rate_process`, minimum rates, submission and completion batches, overlap
//! serialization and flows. A job file sets them; the run has no flags for them.

use super::ctx::Ctx;
use crate::model::timing::{Flow, LatencyTarget, Timing};
use crate::spec::fio_vocab;

/// fio's `FLOW_MAX_WEIGHT`: the largest `flow=`.
const FLOW_MAX_WEIGHT: u64 = 1000;

/// A time of option `k` in seconds (`unit`: of a bare number), at most 10 years as every
/// duration of iolab's (`cli::flags::MAX_SECONDS`).
fn seconds(c: &mut Ctx, k: &str, v: &str, unit: f64) -> Option<f64> {
    match fio_vocab::parse_time(v, unit) {
        Ok(s) if s.is_finite() && (0.0..=crate::cli::flags::MAX_SECONDS).contains(&s) => Some(s),
        Ok(_) => {
            c.bad(k, "longer than 10 years");
            None
        }
        Err(e) => {
            c.bad(k, e);
            None
        }
    }
}

/// A time option in microseconds unless its unit says otherwise (fio's `is_time` options).
fn micros(c: &mut Ctx, k: &str) -> Option<u64> {
    let v = c.val(k)?;
    seconds(c, k, &v, 1e-6).map(|s| (s * 1e6).round() as u64)
}

/// Option `k`'s per-direction values as fio reads rates (`read,write[,trim]`: `N` of them): one
/// value for every direction, an empty one for none (`rate=,1m`: writes only); `sizes`: with
/// fio's units, else counts. A value that does not parse is recorded and gives none at all.
fn per_dir<const N: usize>(c: &mut Ctx, k: &str, sizes: bool) -> [u64; N] {
    let Some(v) = c.val(k) else { return [0; N] };
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let mut out = [0u64; N];
    for (i, slot) in out.iter_mut().enumerate() {
        let p = match parts.len() {
            1 => parts[0],
            _ => parts.get(i).copied().unwrap_or(""),
        };
        if p.is_empty() {
            continue;
        }
        let r = if sizes {
            fio_vocab::parse_size(p, c.kb)
        } else {
            p.parse::<u64>()
                .map_err(|_| "not a whole number".to_string())
        };
        match r {
            Ok(n) => *slot = n,
            Err(e) => {
                c.bad(k, e);
                return [0; N];
            }
        }
    }
    out
}

/// fio's `rate` and `rate_iops` of a job (`read,write,trim`, per clone; `rate` wins where both
/// give a direction, `rate_iops` is bytes at the direction's smallest block, as fio's
/// `__setup_rate`): `--rate` in I/Os per second per clone where that is fio's schedule (the
/// job does one direction, of one block size, and its rate is whole I/Os per second), else
/// the bytes/s per clone of reads and writes that the pacer runs on their own schedules as fio
/// does (`rate_ddir`): a mixed job's directions each at their own rate, a rate of a fraction
/// of an I/O per second, mixed block sizes.
pub(super) fn rates(
    c: &mut Ctx,
    mode: &str,
    bs_fixed: Option<u64>,
    bs_min: u64,
) -> (Option<u64>, [u64; 2]) {
    if c.opt("rate").is_none() && c.opt("rate_iops").is_none() {
        return (None, [0, 0]);
    }
    let bytes = per_dir::<3>(c, "rate", true);
    let iops = per_dir::<3>(c, "rate_iops", false);
    let bps: Vec<u64> = (0..3)
        .map(|d| match bytes[d] {
            0 => iops[d].saturating_mul(bs_min.max(1)),
            b => b,
        })
        .collect();
    let m = mode.parse::<crate::model::job::Mode>().ok();
    if m.is_some_and(|m| m.is_mixed()) {
        return (None, [bps[0], bps[1]]);
    }
    // the one direction of the job (trim-and-write modes: the writes, whose rate fio gives the
    // trims too only when they are the same)
    let d = if m.is_some_and(|m| m.reads()) {
        0
    } else if m.is_some_and(|m| m.trims() && !m.trim_then_write()) {
        2
    } else {
        1
    };
    if m.is_some_and(|m| m.trim_then_write()) && bps[1] != bps[2] {
        c.refuse_key(
            if bytes != [0; 3] { "rate" } else { "rate_iops" },
            "different rates for the trims and the writes of a trim-and-write job",
        );
    }
    let whole = match (bs_fixed, bytes[d], iops[d]) {
        (_, 0, 0) => return (None, [0, 0]),
        (Some(_), 0, n) => Some(n),
        (Some(b), n, _) if n % b == 0 => Some(n / b),
        _ => None,
    };
    match whole {
        Some(n) => (Some(n), [0, 0]),
        None if d == 0 => (None, [bps[0], 0]),
        None => (None, [0, bps[d]]),
    }
}

/// `startdelay`: seconds, or a range `LOW-HIGH` from which one delay is drawn per job (from
/// `seed`, so the same file gives the same delays).
fn start_delay(c: &mut Ctx, seed: u64, notes: &mut Vec<String>) -> f64 {
    let Some(v) = c.val("startdelay") else {
        return 0.0;
    };
    let t = v.trim();
    let one = |c: &mut Ctx, s: &str| seconds(c, "startdelay", s, 1.0).unwrap_or(0.0);
    match t.split_once('-').filter(|_| !fio_vocab::is_expression(t)) {
        Some((lo, hi)) => {
            let (mut lo, mut hi) = (one(c, lo), one(c, hi));
            if lo > hi {
                std::mem::swap(&mut lo, &mut hi);
            }
            // splitmix64 of the seed: a fraction in [0, 1)
            let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let d = lo + (hi - lo) * ((z >> 11) as f64 / (1u64 << 53) as f64);
            notes.push(format!(
                "startdelay={t}: this job starts {d:.3} s after the phase (one draw from the range, iolab's own generator: fio draws another)"
            ));
            d
        }
        None => one(c, t),
    }
}

/// The job's [`Timing`]; `seed` draws a `startdelay` range, `paced` says whether the job has a
/// `--rate` (which `rate_process` shapes).
pub(super) fn timing_options(
    c: &mut Ctx,
    seed: u64,
    paced: bool,
    queue: bool,
    notes: &mut Vec<String>,
) -> Timing {
    let mut t = Timing {
        think_us: micros(c, "thinktime").unwrap_or(0),
        think_spin_us: micros(c, "thinktime_spin").unwrap_or(0),
        think_blocks: c.int("thinktime_blocks").unwrap_or(1),
        think_blocks_given: c.opt("thinktime_blocks").is_some(),
        ..Timing::default()
    };
    match c.val("thinktime_blocks_type").as_deref().map(str::trim) {
        None | Some("complete") => {}
        Some("issue") => t.think_on_issue = true,
        Some(_) => c.bad("thinktime_blocks_type", "not complete or issue"),
    }
    if let Some(s) = c.val("thinktime_iotime")
        && let Some(x) = seconds(c, "thinktime_iotime", &s, 1.0)
    {
        t.think_iotime_us = (x * 1e6).round() as u64;
    }
    if t.think_us == 0 {
        // fio ignores them without a think time
        t.think_spin_us = 0;
        t.think_iotime_us = 0;
        t.think_blocks_given = false;
    }
    if t.think_us == 0 || t.think_blocks == 1 && !t.think_blocks_given {
        t.think_blocks = if t.think_us == 0 { 0 } else { 1 };
    }
    t.start_delay_s = start_delay(c, seed, notes);

    // exitall: the phase is fio's group (jobs between stonewalls)
    t.exit_all = c.bool("exitall").unwrap_or(false);
    t.exit_on_error = c.bool("exitall_on_error").unwrap_or(false);
    match c.val("exit_what").as_deref().map(str::trim) {
        None | Some("group") | Some("stonewall") => {}
        Some("all") if t.exit_all => notes.push(
            "exit_what=all: the phase ends when this job does; the phases after it still run (fio would end them too)".into(),
        ),
        Some("all") => {}
        Some(_) => c.bad("exit_what", "not group, stonewall or all"),
    }

    match c.val("rate_process").as_deref().map(str::trim) {
        None | Some("linear") => {}
        Some("poisson") => t.poisson = paced,
        Some(_) => c.bad("rate_process", "not linear or poisson"),
    }
    t.rate_min_bps = per_dir(c, "rate_min", true);
    t.rate_min_iops = per_dir(c, "rate_iops_min", false);
    // fio refuses a minimum above the job's own rate ("minimum rate exceeds rate")
    let (rate_bps, rate_iops) = (
        per_dir::<2>(c, "rate", true),
        per_dir::<2>(c, "rate_iops", false),
    );
    for d in 0..2 {
        if rate_bps[d] > 0 && t.rate_min_bps[d] > rate_bps[d] {
            c.bad(
                "rate_min",
                "above rate= (fio refuses a minimum rate above the rate)",
            );
        }
        if rate_iops[d] > 0 && t.rate_min_iops[d] > rate_iops[d] {
            c.bad(
                "rate_iops_min",
                "above rate_iops= (fio refuses a minimum rate above the rate)",
            );
        }
    }
    if t.checks_min_rate() {
        t.rate_cycle_ms = c.int("ratecycle").unwrap_or(1000).max(1);
    }

    match c.val("io_submit_mode").as_deref().map(str::trim) {
        None | Some("inline") => {}
        Some("offload") => notes.push(
            "io_submit_mode=offload: iolab submits from the worker thread itself (fio hands each I/O to a submitter thread); the I/O, its pacing and the rates are the same, its latency counts from the scheduled slot as fio's".into(),
        ),
        Some(_) => c.bad("io_submit_mode", "not inline or offload"),
    }
    if queue {
        if c.int("iodepth_batch_submit").is_some_and(|n| n > 1) {
            notes.push("iodepth_batch_submit: iolab submits every I/O it queued in one call each round (up to iodepth), whatever the batch".into());
        }
        t.complete_min = c.int("iodepth_batch_complete_min").unwrap_or(0);
        if c.int("iodepth_batch_complete_max").is_some() {
            notes.push(
                "iodepth_batch_complete_max: iolab reaps every completion there is each round"
                    .into(),
            );
        }
    }
    t.serialize_overlap = c.bool("serialize_overlap").unwrap_or(false) && queue;

    if let Some(w) = c.int("flow").filter(|w| *w > 0) {
        if w > FLOW_MAX_WEIGHT {
            c.bad("flow", "at most 1000 (fio's largest weight)");
        }
        let sleep_us = c.int("flow_sleep").unwrap_or(0);
        if sleep_us as f64 > crate::cli::flags::MAX_SECONDS * 1e6 {
            c.bad("flow_sleep", "longer than 10 years");
        }
        t.flow = Some(Flow {
            id: c.int("flow_id").unwrap_or(0),
            weight: w.min(FLOW_MAX_WEIGHT),
            sleep_us,
        });
        notes.push("flow: the jobs of one phase that share a flow_id keep fio's ratio of I/Os (a flow does not reach across stonewalls); with flow_sleep=0 a thread ahead of its share sleeps 50 µs where fio spins".into());
    }
    t.lat_target = lat_target(c, queue);
    t.max_lat_ns = max_latency(c);
    t
}

/// fio's `max_latency=R[,W][,T]` (µs unless a unit says; one value: every direction, an empty
/// one: none for that direction), in ns.
fn max_latency(c: &mut Ctx) -> [u64; 3] {
    let Some(v) = c.val("max_latency") else {
        return [0; 3];
    };
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let mut out = [0u64; 3];
    for (i, slot) in out.iter_mut().enumerate() {
        let p = if parts.len() == 1 {
            parts[0]
        } else {
            parts.get(i).copied().unwrap_or("")
        };
        if !p.is_empty()
            && let Some(s) = seconds(c, "max_latency", p, 1e-6)
        {
            *slot = (s * 1e9).round() as u64;
        }
    }
    out
}

/// fio's queue-depth search: `latency_target` (µs unless a unit says; 0 or absent: none),
/// `latency_window` (µs, default 0: every round), `latency_percentile` (default 100),
/// `latency_run`. Refused with a synchronous engine and with `ramp_time` (see the table).
fn lat_target(c: &mut Ctx, queue: bool) -> Option<LatencyTarget> {
    let target_us = micros(c, "latency_target").filter(|&t| t > 0)?;
    let window_us = micros(c, "latency_window").unwrap_or(0);
    let percentile = match c.val("latency_percentile") {
        None => 100.0,
        Some(v) => match v.trim().trim_end_matches('%').parse::<f64>() {
            Ok(p) if (0.0..=100.0).contains(&p) => p,
            _ => {
                c.bad("latency_percentile", "not a percentage (0..100)");
                return None;
            }
        },
    };
    let keep_running = c.bool("latency_run").unwrap_or(false);
    if !queue {
        c.refuse_key(
            "latency_target",
            "with a synchronous engine: iolab searches the depth of queue engines only (fio's search at iodepth=1 stays at 1 and ends the job after two windows)",
        );
        return None;
    }
    if c.time("ramp_time").is_some_and(|r| r > 0.0) {
        c.refuse_key(
            "latency_target",
            "with ramp_time: fio starts its search over at the ramp's end",
        );
        return None;
    }
    Some(LatencyTarget {
        target_ns: target_us.saturating_mul(1000),
        window_us,
        percentile,
        keep_running,
    })
}
