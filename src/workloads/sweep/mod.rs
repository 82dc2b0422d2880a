//! Experiments: `iolab sweep` (any run option as an axis, a cross product of cells, one stored
//! experiment, resumable) and `iolab saturate` (bisection for the point where a target stops
//! being met). Both run each cell in-process through the normal `run` path (docs/experiments.md).
//!
//! This file holds the axes (values expanded, split from the fixed options, crossed), the cells'
//! figures, the tuning axes' checks and `run_sweep`; `points.rs` runs a point here or on every
//! rank of a distributed run; `saturate.rs` is the saturation search.

mod points;
mod saturate;
pub mod together;

pub use points::*;
pub use saturate::*;

use crate::error::{Error, Result};
pub use crate::model::experiment::*;
use crate::model::run::RunDoc;
use crate::model::units::parse_size;
use crate::store::Store;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Run options that are never axes: their values contain commas of their own.
const NOT_AXES: &[&str] = &["--open-flags", "--dir", "--label", "--tag", "--db"];

/// What a sweep needs from `iolab run`'s option parser: which flags take a value (so they can be
/// axes) and how run arguments become a plan. The CLI provides it ([`crate::cli::RunParser`]), so
/// this layer does not depend on clap's definitions.
pub trait RunOptions {
    /// Long flags of `iolab run` that take a value, e.g. `--threads`.
    fn value_flags(&self) -> Vec<String>;
    /// Parses `iolab run` arguments into a plan.
    fn plan(&self, args: &[String]) -> Result<crate::engine::runner::Plan>;
}

/// Expands one option value: `a,b,c`; `a..b` (doubling: 1..32 = 1,2,4,8,16,32; sizes too:
/// 1G..16G = 1G,2G,4G,8G,16G); `a..b:+s` (linear steps of s); `a..b:xN` (factor N).
/// The most values one axis may have.
pub const MAX_AXIS_VALUES: usize = 1000;

pub fn expand(flag: &str, v: &str) -> Result<Vec<String>> {
    let bad = |why: &str| {
        Error::usage(format!(
            "{flag} '{v}': {why}; use a list (1,4,8), a range (1..32 doubles, 1..32:+4 steps by 4, 1G..64G:x4 multiplies by 4)"
        ))
    };
    if v.contains("..") {
        let (range, step) = match v.split_once(':') {
            Some((r, s)) => (r, Some(s)),
            None => (v, None),
        };
        let (a, b) = range.split_once("..").ok_or_else(|| bad("not a range"))?;
        let num = |s: &str| -> Option<u64> { parse_size(s).ok() };
        let (lo, hi) = (
            num(a).ok_or_else(|| bad("the start is not a number or size"))?,
            num(b).ok_or_else(|| bad("the end is not a number or size"))?,
        );
        if lo > hi {
            return Err(bad("the start is above the end"));
        }
        let sized = a.chars().any(|c| c.is_ascii_alphabetic())
            || b.chars().any(|c| c.is_ascii_alphabetic());
        let fmt = |x: u64| {
            if sized {
                crate::model::units::Bytes(x).to_string()
            } else {
                x.to_string()
            }
        };
        // the next value after x: + a step, x a factor, or doubling; None past u64
        let next: Box<dyn Fn(u64) -> Option<u64>> = match step {
            Some(s) if s.starts_with('+') => {
                let st = num(&s[1..])
                    .filter(|&x| x > 0)
                    .ok_or_else(|| bad("the step must be positive"))?;
                Box::new(move |x: u64| x.checked_add(st))
            }
            Some(s) if s.starts_with('x') => {
                let f: u64 = s[1..]
                    .parse()
                    .ok()
                    .filter(|&f| f >= 2)
                    .ok_or_else(|| bad("the factor must be 2 or more"))?;
                Box::new(move |x: u64| x.checked_mul(f))
            }
            Some(_) => return Err(bad("a step is +N or xN")),
            None => Box::new(|x: u64| x.checked_mul(2)),
        };
        let mut out = Vec::new();
        let mut x = if step.is_some_and(|s| s.starts_with('+')) {
            Some(lo)
        } else {
            Some(lo.max(1))
        };
        // counted as they are made: a range of billions of values is refused, not built
        while let Some(v) = x.filter(|&v| v <= hi) {
            if out.len() == MAX_AXIS_VALUES {
                return Err(bad(&format!("more than {MAX_AXIS_VALUES} values")));
            }
            out.push(fmt(v));
            x = next(v);
        }
        return Ok(out);
    }
    let vals: Vec<String> = v.split(',').map(|x| x.trim().to_string()).collect();
    if vals.iter().any(|x| x.is_empty()) {
        return Err(bad("an empty value"));
    }
    Ok(vals)
}

/// Splits run arguments into the fixed ones and the axes.
pub fn split_axes(ro: &dyn RunOptions, args: &[String]) -> Result<(Vec<String>, Vec<Axis>)> {
    let takes = ro.value_flags();
    let mut fixed = Vec::new();
    let mut axes = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        if flag.starts_with("--") && takes.contains(&flag) {
            let v = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or_else(|| Error::usage(format!("{flag}: a value is required")))?
                }
            };
            // a block-size mix (--bs 16k:70,1m:30) is one value, not a list
            let vals = if NOT_AXES.contains(&flag.as_str()) || (flag == "--bs" && v.contains(':')) {
                vec![v.clone()]
            } else {
                expand(&flag, &v)?
            };
            if vals.len() > 1 {
                let name = flag.trim_start_matches("--").to_string();
                if axes.iter().any(|x: &Axis| x.name == name) {
                    return Err(Error::usage(format!("{flag} is given twice as an axis")));
                }
                axes.push(Axis { name, values: vals });
            } else {
                fixed.push(flag);
                fixed.push(vals.into_iter().next().unwrap_or(v));
            }
        } else {
            fixed.push(a.clone());
        }
        i += 1;
    }
    Ok((fixed, axes))
}

/// The cells of a cross product, first axis outermost.
pub fn cross(axes: &[Axis]) -> Vec<BTreeMap<String, String>> {
    let mut cells: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for ax in axes {
        let mut next = Vec::new();
        for c in &cells {
            for v in &ax.values {
                let mut c2 = c.clone();
                c2.push((ax.name.clone(), v.clone()));
                next.push(c2);
            }
        }
        cells = next;
    }
    cells.into_iter().map(|c| c.into_iter().collect()).collect()
}

/// The arguments of `iolab run` for one cell (tuning axes are not run options).
pub fn cell_args(fixed: &[String], cell: &BTreeMap<String, String>) -> Vec<String> {
    let mut a = fixed.to_vec();
    for (k, v) in cell {
        if TUNING.contains(&k.as_str()) {
            continue;
        }
        a.push(format!("--{k}"));
        a.push(v.clone());
    }
    a
}

/// Axes that switch device settings instead of run options: name → sysfs attribute.
pub const TUNING: &[&str] = &["scheduler", "read-ahead", "nr-requests"];

fn sysfs_attr(axis: &str) -> &'static str {
    match axis {
        "scheduler" => "scheduler",
        "read-ahead" => "read_ahead_kb",
        _ => "nr_requests",
    }
}

pub fn figures(doc: &RunDoc) -> Figures {
    let mut f = Figures::default();
    let mut n = 0.0;
    for c in &doc.runs {
        for r in [&c.results.read, &c.results.write] {
            f.iops += r.iops;
            f.mibps += r.bytes_per_sec / 1048576.0;
            if let Some(l) = &r.lat_ns {
                f.p99_ms = f.p99_ms.max(l.p99 as f64 / 1e6);
                f.p50_ms = f.p50_ms.max(l.p50 as f64 / 1e6);
                f.p90_ms = f.p90_ms.max(l.p90 as f64 / 1e6);
                f.p99_9_ms = f.p99_9_ms.max(l.p99_9 as f64 / 1e6);
                f.mean_ms += l.mean / 1e6 * r.ops as f64;
                n += r.ops as f64;
            }
        }
    }
    if n > 0.0 {
        f.mean_ms /= n;
    }
    if !doc.runs.is_empty() {
        f.cpu_pct = doc
            .runs
            .iter()
            .map(|c| c.cpu.user_pct + c.cpu.sys_pct)
            .sum::<f64>()
            / doc.runs.len() as f64;
    }
    f
}

pub fn metric(f: &Figures, name: &str) -> Option<f64> {
    Some(match name {
        "iops" => f.iops,
        "mibps" => f.mibps,
        "p99" => f.p99_ms,
        "p50" => f.p50_ms,
        "p90" => f.p90_ms,
        "p99.9" => f.p99_9_ms,
        "mean" | "lat_avg" => f.mean_ms,
        "cpu" => f.cpu_pct,
        _ => return None,
    })
}

/// The axis label of a metric's values.
pub fn metric_unit(name: &str) -> &'static str {
    match name {
        "iops" => "IOPS (reads + writes)",
        "mibps" => "MiB/s (reads + writes)",
        "cpu" => "% of one CPU (user + system)",
        _ => "latency (ms)",
    }
}

pub const METRIC_NAMES: &str =
    "iops, mibps, p50, p90, p99, p99.9, mean or lat_avg (latencies in ms), cpu (% of one CPU)";

/// The mean of the figures of several repetitions.
pub fn mean_figures(figs: &[Figures]) -> Figures {
    let n = figs.len().max(1) as f64;
    let avg = |f: fn(&Figures) -> f64| figs.iter().map(f).sum::<f64>() / n;
    Figures {
        iops: avg(|f| f.iops),
        mibps: avg(|f| f.mibps),
        p99_ms: avg(|f| f.p99_ms),
        p50_ms: avg(|f| f.p50_ms),
        p90_ms: avg(|f| f.p90_ms),
        p99_9_ms: avg(|f| f.p99_9_ms),
        mean_ms: avg(|f| f.mean_ms),
        cpu_pct: avg(|f| f.cpu_pct),
    }
}

/// Runs one cell's plan holding the lock of its file set, as `iolab run` does: a second iolab
/// in the same --dir waits for the cell or is refused, never overwrites its files.
fn run_cell(plan: &crate::engine::runner::Plan, stop: &AtomicBool) -> Result<RunDoc> {
    let lock = match crate::engine::fileset::lock(&plan.fileset.dir) {
        Ok(l) => l,
        Err(e) => {
            if plan.created_dir {
                crate::system::target::remove_made_dir(&plan.fileset.dir);
            }
            return Err(e);
        }
    };
    let r = crate::engine::runner::run(plan, stop, |_| {});
    drop(lock);
    // The lock file was the last thing in a --dir this cell created.
    if plan.created_dir && !plan.keep {
        crate::system::target::remove_made_dir(&plan.fileset.dir);
    }
    r
}

fn key(c: &BTreeMap<String, String>) -> String {
    serde_json::to_string(c).expect("json")
}

/// Devices whose settings tuning axes switch: the physical disks under --dir.
pub fn tuning_devices(ro: &dyn RunOptions, fixed: &[String]) -> Result<Vec<String>> {
    let plan = ro.plan(fixed)?;
    let env = crate::system::env::collect(&plan.roots, Some(&plan.fileset.dir));
    let devs: Vec<String> = env
        .path
        .as_ref()
        .map(|p| {
            p.physical_disks
                .iter()
                .filter(|d| {
                    plan.roots
                        .sys
                        .join(format!("block/{d}/queue/scheduler"))
                        .exists()
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    if devs.is_empty() {
        return Err(Error::usage(format!(
            "--scheduler/--read-ahead/--nr-requests: no block device with a queue under {}",
            plan.fileset.dir.display()
        )));
    }
    // created --dir of the probe plan must not linger
    if plan.created_dir {
        crate::system::target::remove_made_dir(&plan.fileset.dir);
    }
    Ok(devs)
}

/// Checks tuning axes before anything runs: root, values the devices offer.
pub fn check_tuning(axes: &mut [Axis], devs: &[String]) -> Result<()> {
    for ax in axes
        .iter_mut()
        .filter(|a| TUNING.contains(&a.name.as_str()))
    {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(Error::usage(format!(
                "--{}: switching device settings needs root (run iolab as root, or drop this axis)",
                ax.name
            )));
        }
        for d in devs {
            if let Some(pid) = crate::system::tuning::switching(d) {
                return Err(crate::system::tuning::refusal(
                    &format!("--{}", ax.name),
                    pid,
                    d,
                ));
            }
        }
        if ax.name == "scheduler" {
            let offered =
                crate::system::tuning::schedulers(&crate::system::env::Roots::live(), &devs[0]);
            if ax.values == ["all"] {
                ax.values = offered.clone();
            }
            for v in &ax.values {
                if !offered.contains(v) {
                    return Err(Error::usage(format!(
                        "--scheduler {v}: {} offers only {}",
                        devs[0],
                        offered.join(", ")
                    )));
                }
            }
        } else {
            // the kernel takes at most 2^32-1 (queue_var_store), refused here rather than
            // midway through the sweep
            for v in &ax.values {
                if v.parse::<u32>().is_err() {
                    return Err(Error::usage(format!(
                        "--{} {v}: a whole number from 0 to {} is needed",
                        ax.name,
                        u32::MAX
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Checks every cell before anything runs (options parse, values are valid) and that the largest
/// file set fits in the free space.
pub fn check_cells(ro: &dyn RunOptions, fixed: &[String], axes: &[Axis]) -> Result<()> {
    let mut need = 0u64;
    let mut dir = None;
    for cell in cross(axes) {
        let p = ro.plan(&cell_args(fixed, &cell))?;
        if p.fileset.device.is_some() {
            // A device target takes no space: its range is checked by the plan.
            continue;
        }
        let present: u64 = (0..p.fileset.files)
            .filter_map(|i| {
                std::fs::metadata(crate::engine::fileset::file_path(&p.fileset.dir, i)).ok()
            })
            .map(|m| m.len().min(p.fileset.file_size_bytes))
            .sum();
        need = need.max(p.fileset.total_bytes.saturating_sub(present));
        if p.created_dir {
            crate::system::target::remove_made_dir(&p.fileset.dir);
        }
        dir = Some(p.fileset.dir.clone());
    }
    if let Some(d) = &dir
        && let Some(free) = crate::system::fsinfo::free_bytes(d)
        && need > free
    {
        return Err(Error::usage(format!(
            "sweep: its largest file set needs {} in {} but only {} is free; use smaller --size values",
            crate::model::units::human_bytes(need as f64),
            d.display(),
            crate::model::units::human_bytes(free as f64)
        )));
    }
    Ok(())
}

/// Runs (or resumes) a sweep into experiment `gid`. Returns the finished cells in order.
pub fn run_sweep(
    ro: &dyn RunOptions,
    store: &mut Store,
    gid: i64,
    spec: &SweepSpec,
    stop: &AtomicBool,
    quiet: bool,
    points: Points,
) -> Result<Vec<CellOut>> {
    let cells = cross(&spec.axes);
    let tuned = spec.axes.iter().any(|a| TUNING.contains(&a.name.as_str()));
    let devs = if tuned {
        tuning_devices(ro, &spec.fixed)?
    } else {
        Vec::new()
    };
    // what was already done (resume): completed, not interrupted runs per cell
    let mut done: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for id in store.group_runs(gid).unwrap_or_default() {
        if let (Some(c), Ok(r)) = (store.cell(id)?, store.run(id))
            && !r.interrupted
        {
            done.entry(c.to_string()).or_default().push(id);
        }
    }
    let total: u64 = cells
        .iter()
        .map(|c| {
            spec.repeat
                .saturating_sub(done.get(&key(c)).map_or(0, |v| v.len() as u32)) as u64
        })
        .sum();
    let bar = crate::engine::fileset::progress_bar(total, quiet, "sweep");
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} cells, {elapsed} elapsed, eta {eta}  {msg}",
        )
        .expect("template")
        .progress_chars("=> "),
    );
    let mut tuner = crate::system::tuning::Tuner::default();
    let mut out = Vec::new();
    let mut seq = store.group_runs(gid).map(|v| v.len() as u32).unwrap_or(0);
    for cell in &cells {
        let k = key(cell);
        let mut ids = done.get(&k).cloned().unwrap_or_default();
        while (ids.len() as u32) < spec.repeat && !stop.load(Ordering::Relaxed) {
            for (axis, v) in cell.iter().filter(|(a, _)| TUNING.contains(&a.as_str())) {
                for d in &devs {
                    tuner.set(d, sysfs_attr(axis), v, &format!("--{axis}"))?;
                }
            }
            let desc: Vec<String> = cell.iter().map(|(a, v)| format!("{a}={v}")).collect();
            bar.set_message(desc.join(" "));
            let at = PointAt {
                gid,
                seq: seq + 1,
                cell: cell.clone(),
            };
            let doc = match points.run(ro, &cell_args(&spec.fixed, cell), stop, &|_| Ok(()), at) {
                Ok(d) => d,
                // Stopped before this cell measured anything: nothing to save; the sweep ends
                // here with its finished cells, resumable.
                Err(e) if e.exit == crate::error::Exit::Interrupted => break,
                Err(e) => return Err(e),
            };
            let json = doc.to_json();
            seq += 1;
            let cj = serde_json::to_value(cell).expect("json");
            let id = store.save_run(&doc, &json, Some((gid, seq)), Some(&cj))?;
            if doc.interrupted {
                break;
            }
            ids.push(id);
            bar.inc(1);
        }
        let mut figs = Vec::new();
        for &id in &ids {
            let d = RunDoc::from_json(&store.doc(id)?)
                .map_err(|e| Error::failed(format!("run {id}: {e}")))?;
            figs.push(figures(&d));
        }
        if !figs.is_empty() {
            out.push(CellOut {
                cell: cell.clone(),
                run_ids: ids,
                figures: mean_figures(&figs),
            });
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    bar.finish_and_clear();
    for e in tuner.restore() {
        eprintln!("iolab: {e}");
    }
    Ok(out)
}

/// The finished cells of a stored sweep.
pub fn stored_cells(store: &Store, gid: i64, spec: &SweepSpec) -> Result<Vec<CellOut>> {
    let mut by: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for id in store.group_runs(gid)? {
        if let Some(c) = store.cell(id)?
            && !store.run(id)?.interrupted
        {
            by.entry(c.to_string()).or_default().push(id);
        }
    }
    let mut out = Vec::new();
    for cell in cross(&spec.axes) {
        let Some(ids) = by.get(&serde_json::to_value(&cell).expect("json").to_string()) else {
            continue;
        };
        let mut figs = Vec::new();
        for &id in ids {
            let d = RunDoc::from_json(&store.doc(id)?)
                .map_err(|e| Error::failed(format!("run {id}: {e}")))?;
            figs.push(figures(&d));
        }
        out.push(CellOut {
            cell,
            run_ids: ids.clone(),
            figures: mean_figures(&figs),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_expand() {
        assert_eq!(expand("--threads", "1,4,8").unwrap(), vec!["1", "4", "8"]);
        assert_eq!(
            expand("--threads", "1..32").unwrap(),
            vec!["1", "2", "4", "8", "16", "32"]
        );
        assert_eq!(
            expand("--threads", "4..16:+4").unwrap(),
            vec!["4", "8", "12", "16"]
        );
        assert_eq!(
            expand("--size", "1G..16G:x4").unwrap(),
            vec!["1GiB", "4GiB", "16GiB"]
        );
        assert_eq!(
            expand("--size", "1G..4G").unwrap(),
            vec!["1GiB", "2GiB", "4GiB"]
        );
        assert!(expand("--threads", "8..1").is_err());
        assert!(expand("--threads", "1,,2").is_err());
        assert!(expand("--threads", "1..x").is_err());
        assert!(expand("--threads", "1..8:x1").is_err());
    }

    #[test]
    fn axes_split_from_fixed_options_and_cross() {
        let args: Vec<String> = [
            "--threads",
            "1,4",
            "--size=1G,2G",
            "--mode",
            "rndrd",
            "--direct",
            "--open-flags",
            "sync,dsync",
            "--bs",
            "16k:70,1m:30",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        struct Flags;
        impl RunOptions for Flags {
            fn value_flags(&self) -> Vec<String> {
                ["--threads", "--size", "--mode", "--open-flags", "--bs"]
                    .map(String::from)
                    .to_vec()
            }
            fn plan(&self, _: &[String]) -> Result<crate::engine::runner::Plan> {
                unreachable!("not planned in this test")
            }
        }
        let (fixed, axes) = split_axes(&Flags, &args).unwrap();
        assert_eq!(
            fixed,
            vec![
                "--mode",
                "rndrd",
                "--direct",
                "--open-flags",
                "sync,dsync",
                "--bs",
                "16k:70,1m:30"
            ],
            "a block-size mix is one value, not an axis"
        );
        assert_eq!(
            axes.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            vec!["threads", "size"]
        );
        let cells = cross(&axes);
        assert_eq!(cells.len(), 4);
        assert_eq!(cells[0]["threads"], "1");
        assert_eq!(cells[0]["size"], "1G");
        assert_eq!(cells[1]["size"], "2G");
        assert_eq!(cells[2]["threads"], "4");
        let a = cell_args(&fixed, &cells[3]);
        assert!(
            a.windows(2).any(|w| w == ["--threads", "4"])
                && a.windows(2).any(|w| w == ["--size", "2G"])
        );
    }
}
