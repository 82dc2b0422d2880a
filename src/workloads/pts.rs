//! `iolab suite pts`: SNIA PTS's client tests (docs/steady-state.md). The target is purged
//! where the device allows, preconditioned with 128 KiB sequential writes over twice its
//! capacity, then each test runs in rounds (every cell of its matrix once per round, all
//! through the normal runner) until the tracked cell's figure is steady over 5 rounds by PTS's
//! criteria or the rounds run out; write saturation last. Every round is kept.

use crate::engine::runner::Plan;
use crate::error::{Error, Result};
use crate::model::pts::*;
use crate::model::run::CellResult;
use crate::model::steady::Pts;
use crate::workloads::sweep::RunOptions;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The tests `suite pts` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Iops,
    Throughput,
    Latency,
    Wsat,
}

impl std::str::FromStr for Which {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Ok(match s {
            "iops" => Which::Iops,
            "throughput" => Which::Throughput,
            "latency" => Which::Latency,
            "wsat" => Which::Wsat,
            _ => return Err(format!("'{s}': use iops, throughput, latency or wsat")),
        })
    }
}

/// What `suite pts` runs.
#[derive(Debug, Clone)]
pub struct PtsOpts {
    /// The run options naming the target: `--dir D --files 1 --size S` or `--device D
    /// --destructive[=...] [--size S]`.
    pub target_args: Vec<String>,
    pub engine: String,
    pub threads: u32,
    pub iodepth: u32,
    pub cell_s: f64,
    pub max_rounds: u32,
    pub wsat_round_s: f64,
    pub wsat_max_s: f64,
    pub tests: Vec<Which>,
    pub quick: bool,
    /// Progress lines on stderr.
    pub verbose: bool,
}

/// PTS's window: 5 rounds.
pub const WINDOW: usize = 5;

/// One cell of a test's matrix, before it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CellDef {
    seq: bool,
    read_pct: u32,
    bs: u64,
}

/// RND 4KiB 0/100: the cell the IOPS and latency tests track and write saturation runs.
const RND_4K_WRITE: CellDef = CellDef {
    seq: false,
    read_pct: 0,
    bs: 4096,
};

impl CellDef {
    fn name(&self) -> String {
        PtsCell {
            pattern: if self.seq { "seq" } else { "rnd" }.into(),
            read_pct: self.read_pct,
            bs_bytes: self.bs,
            iops: 0.0,
            bw_bytes_per_sec: 0.0,
            lat_mean_ns: 0.0,
            lat_max_ns: 0.0,
            lat_p99_ns: 0.0,
        }
        .name()
    }
}

/// A test's definition: its cells in the order they run, which one is tracked and how.
struct TestDef {
    name: &'static str,
    cells: Vec<CellDef>,
    tracked: usize,
    figure: Tracked,
    /// (threads, iodepth) of its own (the latency test's 1 and 1).
    load: Option<(u32, u32)>,
}

/// The tests of `which`, their block sizes limited to those the target takes (`min_bs`).
fn test_defs(which: &[Which], min_bs: u64) -> Vec<TestDef> {
    let ok = |bs: u64| bs >= min_bs && bs.is_multiple_of(min_bs);
    let matrix = |mixes: &[u32], sizes: &[u64]| -> Vec<CellDef> {
        mixes
            .iter()
            .flat_map(|&m| {
                sizes.iter().filter(|&&b| ok(b)).map(move |&bs| CellDef {
                    seq: false,
                    read_pct: m,
                    bs,
                })
            })
            .collect()
    };
    let tracked = |cells: &[CellDef], want: CellDef| {
        cells
            .iter()
            .position(|c| *c == want)
            .expect("the tracked cell is in its matrix")
    };
    let w4k = RND_4K_WRITE;
    let mut out = Vec::new();
    for w in which {
        match w {
            Which::Iops => {
                let cells = matrix(&IOPS_MIXES, &IOPS_SIZES);
                out.push(TestDef {
                    name: "iops",
                    tracked: tracked(&cells, w4k),
                    cells,
                    figure: Tracked::Iops,
                    load: None,
                });
            }
            Which::Throughput => {
                for (name, bs) in [
                    ("throughput-128k", 128u64 << 10),
                    ("throughput-1m", 1 << 20),
                ] {
                    let cells: Vec<CellDef> = [0, 100]
                        .into_iter()
                        .map(|read_pct| CellDef {
                            seq: true,
                            read_pct,
                            bs,
                        })
                        .collect();
                    out.push(TestDef {
                        name,
                        tracked: 0,
                        cells,
                        figure: Tracked::BwBytesPerSec,
                        load: None,
                    });
                }
            }
            Which::Latency => {
                let cells = matrix(&LATENCY_MIXES, &LATENCY_SIZES);
                out.push(TestDef {
                    name: "latency",
                    tracked: tracked(&cells, w4k),
                    cells,
                    figure: Tracked::LatMeanNs,
                    load: Some((1, 1)),
                });
            }
            Which::Wsat => {}
        }
    }
    out
}

/// The run options of one cell.
fn cell_args(o: &PtsOpts, c: &CellDef, threads: u32, iodepth: u32, time_s: f64) -> Vec<String> {
    let mode = match (c.seq, c.read_pct) {
        (true, 100) => "seqrd",
        (true, 0) => "seqwr",
        (true, _) => "seqrw",
        (false, 100) => "rndrd",
        (false, 0) => "rndwr",
        (false, _) => "rndrw",
    };
    let mut a = o.target_args.clone();
    a.extend(
        [
            "--mode",
            mode,
            "--bs",
            &c.bs.to_string(),
            "--threads",
            &threads.to_string(),
            "--iodepth",
            &iodepth.to_string(),
            "--engine",
            &o.engine,
            "--time",
            &format!("{time_s}"),
        ]
        .map(String::from),
    );
    if !matches!(c.read_pct, 0 | 100) {
        a.extend(["--rwmixread".to_string(), c.read_pct.to_string()]);
    }
    a.extend(common_args(o));
    a
}

/// What every cell and the preconditioning run with: O_DIRECT, no fsync (PTS measures the
/// device, not the host's flushes), a test file kept between rounds (`run_suite` removes it).
fn common_args(o: &PtsOpts) -> Vec<String> {
    let mut a: Vec<String> = ["--direct", "--fsync-freq", "0", "--fsync-end=false"]
        .map(String::from)
        .to_vec();
    if o.target_args.iter().any(|x| x == "--dir") {
        a.push("--keep".into());
    }
    a
}

/// A cell's result as PTS reports it: reads and writes together.
fn pts_cell(c: &CellDef, r: &CellResult) -> PtsCell {
    let (rd, wr) = (&r.results.read, &r.results.write);
    let ops = (rd.ops + wr.ops) as f64;
    fn lat(o: &crate::model::run::OpResult) -> Option<&crate::model::lat::LatSummary> {
        o.lat_ns.as_ref()
    }
    let mean = if ops > 0.0 {
        [rd, wr]
            .iter()
            .map(|o| lat(o).map_or(0.0, |l| l.mean * o.ops as f64))
            .sum::<f64>()
            / ops
    } else {
        0.0
    };
    let most = |f: fn(&crate::model::lat::LatSummary) -> u64| {
        [rd, wr]
            .iter()
            .filter_map(|o| lat(o).map(f))
            .max()
            .unwrap_or(0) as f64
    };
    PtsCell {
        pattern: if c.seq { "seq" } else { "rnd" }.into(),
        read_pct: c.read_pct,
        bs_bytes: c.bs,
        iops: rd.iops + wr.iops,
        bw_bytes_per_sec: rd.bytes_per_sec + wr.bytes_per_sec,
        lat_mean_ns: mean,
        lat_max_ns: most(|l| l.max),
        lat_p99_ns: most(|l| l.p99),
    }
}

/// The steady-state decision over a test's tracked rounds: the last window judged by PTS's
/// criteria (its window the last rounds run when not attained).
pub fn judge(tracked: &[f64]) -> PtsSteady {
    let p = Pts::SNIA;
    let mut s = PtsSteady {
        attained: false,
        window_first: None,
        window_last: None,
        window_avg: None,
        range_pct: None,
        slope_pct: None,
        slope: None,
        range_limit_pct: p.range_pct,
        slope_limit_pct: p.slope_pct,
        window_rounds: WINDOW as u32,
    };
    if tracked.len() < WINDOW {
        return s;
    }
    let first = tracked.len() - WINDOW;
    let w = &tracked[first..];
    let j = crate::measure::steady::pts_judge(w, &p);
    s.attained = j.attained;
    s.window_first = Some(first as u32 + 1);
    s.window_last = Some(tracked.len() as u32);
    s.window_avg = Some(j.avg);
    s.range_pct = Some(j.range_pct).filter(|x| x.is_finite());
    s.slope_pct = Some(j.slope_pct).filter(|x| x.is_finite());
    s.slope = Some(crate::measure::steady::slope(w));
    s
}

/// Each cell averaged over the rounds of the window (every round when fewer were run).
fn window_cells(rounds: &[Vec<PtsCell>], s: &PtsSteady) -> Vec<PtsCell> {
    let first = s.window_first.map_or(0, |f| f as usize - 1);
    let w: Vec<&Vec<PtsCell>> = rounds[first..].iter().filter(|r| !r.is_empty()).collect();
    let Some(cells) = w.iter().map(|r| r.len()).min() else {
        return Vec::new();
    };
    let n = w.len() as f64;
    (0..cells)
        .map(|i| {
            let avg = |f: fn(&PtsCell) -> f64| w.iter().map(|r| f(&r[i])).sum::<f64>() / n;
            PtsCell {
                iops: avg(|c| c.iops),
                bw_bytes_per_sec: avg(|c| c.bw_bytes_per_sec),
                lat_mean_ns: avg(|c| c.lat_mean_ns),
                lat_max_ns: w.iter().map(|r| r[i].lat_max_ns).fold(0.0, f64::max),
                lat_p99_ns: avg(|c| c.lat_p99_ns),
                ..w[0][i].clone()
            }
        })
        .collect()
}

/// Runs the suite. `ro` plans run options (the CLI's parser). Stops between cells when `stop`
/// is set, keeping what ran.
pub fn pts(ro: &dyn RunOptions, o: &PtsOpts, stop: &AtomicBool) -> Result<PtsResult> {
    let say = |s: String| {
        if o.verbose {
            eprintln!("pts: {s}");
        }
    };
    // Everything planned before anything is written: a cell the target refuses is refused now.
    let probe = RND_4K_WRITE;
    let base = ro.plan(&cell_args(o, &probe, o.threads, o.iodepth, o.cell_s))?;
    let min_bs = base.dio.offset.max(512);
    let mut notes = Vec::new();
    let left_out: Vec<String> = IOPS_SIZES
        .iter()
        .chain(LATENCY_SIZES.iter())
        .filter(|&&b| b < min_bs || !b.is_multiple_of(min_bs))
        .map(|&b| kib(b))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !left_out.is_empty() {
        notes.push(format!(
            "block sizes {} left out: O_DIRECT on this target takes multiples of {min_bs} bytes",
            left_out.join(", ")
        ));
    }
    let defs = test_defs(&o.tests, min_bs);
    let mut planned: Vec<Vec<Plan>> = Vec::new();
    for d in &defs {
        let (t, q) = d.load.unwrap_or((o.threads, o.iodepth));
        let mut v = Vec::new();
        for c in &d.cells {
            v.push(ro.plan(&cell_args(o, c, t, q, o.cell_s))?);
        }
        planned.push(v);
    }
    let spec = base.fileset.clone();
    let capacity = spec.total_bytes;
    let device = spec.device.is_some();
    let wsat_cell = RND_4K_WRITE;
    let wsat_plan = ro.plan(&cell_args(
        o,
        &wsat_cell,
        o.threads,
        o.iodepth,
        o.wsat_round_s,
    ))?;
    let mut pre_args = o.target_args.clone();
    pre_args.extend(
        [
            "--mode",
            "seqwr",
            "--bs",
            "128k",
            "--threads",
            "1",
            "--iodepth",
            &o.iodepth.to_string(),
            "--engine",
            &o.engine,
            "--io-size",
            &(2 * capacity).to_string(),
        ]
        .map(String::from),
    );
    pre_args.extend(common_args(o));
    let pre_plan = ro.plan(&pre_args)?;

    let mut doc = PtsResult {
        target: spec.dir.display().to_string(),
        kind: if device { "block device" } else { "file" }.into(),
        capacity_bytes: capacity,
        settings: PtsSettings {
            engine: o.engine.clone(),
            threads: o.threads,
            iodepth: o.iodepth,
            cell_s: o.cell_s,
            max_rounds: o.max_rounds,
            quick: o.quick,
            direct: true,
        },
        purge: Purge {
            method: None,
            note: String::new(),
        },
        precondition: None,
        tests: Vec::new(),
        wsat: None,
        notes,
        interrupted: false,
    };

    // Purge: a device's range discarded (securely where it can be); a file cannot be.
    doc.purge = match base.device.as_ref() {
        Some(h) => {
            use std::os::fd::AsRawFd;
            match crate::engine::ops::purge(h.claim.as_raw_fd(), spec.base_offset(), capacity) {
                Ok(how) => Purge {
                    method: Some(how.into()),
                    note: format!(
                        "{how} of the {} tested ({})",
                        crate::model::units::Bytes(capacity),
                        if how == "discard" {
                            "BLKDISCARD; the device offers no secure discard"
                        } else {
                            "BLKSECDISCARD"
                        }
                    ),
                },
                Err(e) => Purge {
                    method: None,
                    note: format!(
                        "not purged: the device refused a discard ({}); PTS asks for a purge (secure erase, sanitize) where the device offers one: give it with the device's own tool before the suite",
                        std::io::Error::from_raw_os_error(e)
                    ),
                },
            }
        }
        None => Purge {
            method: None,
            note: "not purged: the target is a file on a filesystem, whose device keeps what it held; a purge needs --device".into(),
        },
    };
    say(doc.purge.note.clone());

    // Preconditioning: 128 KiB sequential writes over twice the capacity.
    let pre = crate::engine::runner::run(&pre_plan, stop, |_| {})?;
    if let Some(c) = pre.runs.first() {
        let w = &c.results.write;
        doc.precondition = Some(Precondition {
            bytes_written: w.bytes,
            seconds: c.duration_s,
            bw_bytes_per_sec: w.bytes_per_sec,
        });
        say(format!(
            "preconditioned: {} of 128 KiB sequential writes in {:.1} s",
            crate::model::units::Bytes(w.bytes),
            c.duration_s
        ));
    }
    if pre.interrupted || stop.load(Ordering::Relaxed) {
        doc.interrupted = true;
        return Ok(doc);
    }

    let seed0 = base.cells[0].seed;
    for (d, plans) in defs.iter().zip(&planned) {
        let (threads, iodepth) = d.load.unwrap_or((o.threads, o.iodepth));
        let mut t = PtsTest {
            name: d.name.into(),
            tracked_cell: d.cells[d.tracked].name(),
            tracked: d.figure,
            threads,
            iodepth,
            cell_s: o.cell_s,
            rounds: Vec::new(),
            tracked_rounds: Vec::new(),
            steady: judge(&[]),
            window: Vec::new(),
        };
        for round in 1..=o.max_rounds {
            let mut plan = base.clone();
            plan.cells = plans
                .iter()
                .map(|p| {
                    let mut j = p.cells[0].clone();
                    j.seed = seed0.wrapping_add(round as u64 * 1000 + t.rounds.len() as u64);
                    j
                })
                .collect();
            let r = crate::engine::runner::run(&plan, stop, |_| {})?;
            let cells: Vec<PtsCell> = d
                .cells
                .iter()
                .zip(&r.runs)
                .map(|(c, res)| pts_cell(c, res))
                .collect();
            let whole = cells.len() == d.cells.len() && !r.interrupted;
            if !whole {
                doc.interrupted = true;
                if !cells.is_empty() {
                    t.rounds.push(cells);
                }
                break;
            }
            let v = d.figure.of(&cells[d.tracked]);
            t.tracked_rounds.push(v);
            t.rounds.push(cells);
            t.steady = judge(&t.tracked_rounds);
            say(format!(
                "{} round {round}: {} {}{}",
                d.name,
                t.tracked_cell,
                shown(d.figure, v),
                if t.steady.attained { " (steady)" } else { "" }
            ));
            if t.steady.attained {
                break;
            }
        }
        t.steady = judge(&t.tracked_rounds);
        t.window = window_cells(&t.rounds, &t.steady);
        doc.tests.push(t);
        if doc.interrupted {
            return Ok(doc);
        }
    }

    if o.tests.contains(&Which::Wsat) {
        let mut w = Wsat {
            round_s: o.wsat_round_s,
            target_bytes: 4 * capacity,
            max_s: o.wsat_max_s,
            reached: false,
            rounds: Vec::new(),
        };
        let start = Instant::now();
        let mut written = 0u64;
        let mut n = 0u64;
        while written < w.target_bytes && start.elapsed().as_secs_f64() < o.wsat_max_s {
            n += 1;
            let mut plan = wsat_plan.clone();
            plan.cells[0].seed = seed0.wrapping_add(1_000_000 + n);
            let r = crate::engine::runner::run(&plan, stop, |_| {})?;
            let Some(c) = r.runs.first() else {
                doc.interrupted = true;
                break;
            };
            let pc = pts_cell(&wsat_cell, c);
            written += c.results.write.bytes;
            w.rounds.push(WsatRound {
                elapsed_s: start.elapsed().as_secs_f64(),
                iops: pc.iops,
                lat_mean_ns: pc.lat_mean_ns,
                written_total_bytes: written,
            });
            if r.interrupted {
                doc.interrupted = true;
                break;
            }
        }
        w.reached = written >= w.target_bytes;
        say(format!(
            "write saturation: {} rounds, {} written",
            w.rounds.len(),
            crate::model::units::human_bytes(written as f64)
        ));
        doc.wsat = Some(w);
    }
    Ok(doc)
}

/// Runs the suite on its target for one command: the set's lock held throughout (one iolab at a
/// time on a target), a test file the suite made removed at the end and a `--dir` it made
/// removed too; a file that was there before (of the same size) is used and kept.
pub fn run_suite(ro: &dyn RunOptions, o: &PtsOpts, stop: &AtomicBool) -> Result<PtsResult> {
    let probe = RND_4K_WRITE;
    let first = ro.plan(&cell_args(o, &probe, o.threads, o.iodepth, o.cell_s))?;
    let spec = first.fileset.clone();
    let made_dir = first.created_dir;
    let gone = || {
        if made_dir {
            crate::system::target::remove_made_dir(&spec.dir);
        }
    };
    let lock = match crate::engine::fileset::lock(&spec.dir) {
        Ok(l) => l,
        Err(e) => {
            gone();
            return Err(e);
        }
    };
    let existed = spec.device.is_some() || crate::engine::fileset::status(&spec).complete(&spec);
    let r = pts(ro, o, stop);
    if !existed {
        crate::engine::fileset::cleanup(&spec);
    }
    drop(lock);
    gone();
    drop(first);
    r
}

/// A tracked figure with its unit.
pub fn shown(f: Tracked, v: f64) -> String {
    match f {
        Tracked::Iops => format!("{v:.0} IOPS"),
        Tracked::BwBytesPerSec => format!("{:.1} MiB/s", v / 1048576.0),
        Tracked::LatMeanNs => format!("{:.1} us mean latency", v / 1000.0),
    }
}

/// `--tests`: a list of tests, each once.
pub fn parse_tests(s: &str) -> std::result::Result<Vec<Which>, String> {
    let mut v: Vec<Which> = Vec::new();
    for t in s.split(',') {
        let w: Which = t.trim().parse()?;
        if !v.contains(&w) {
            v.push(w);
        }
    }
    Ok(v)
}

/// Checks the options' figures (PTS's window needs 5 rounds).
pub fn check(o: &PtsOpts) -> Result<()> {
    if o.max_rounds < WINDOW as u32 {
        return Err(Error::usage(format!(
            "--max-rounds {}: at least {WINDOW} (SNIA PTS judges steady state over a window of {WINDOW} rounds)",
            o.max_rounds
        )));
    }
    if o.tests.is_empty() {
        return Err(Error::usage(
            "--tests: name at least one of iops, throughput, latency, wsat",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrices_are_ptss() {
        let d = test_defs(
            &[Which::Iops, Which::Throughput, Which::Latency, Which::Wsat],
            512,
        );
        let names: Vec<&str> = d.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            ["iops", "throughput-128k", "throughput-1m", "latency"]
        );
        assert_eq!(d[0].cells.len(), 56);
        assert_eq!(d[0].cells[d[0].tracked].name(), "RND 4KiB 0/100");
        assert_eq!(d[0].cells[0].name(), "RND 1024KiB 100/0");
        assert_eq!(d[0].cells[7].name(), "RND 0.5KiB 100/0");
        assert_eq!(d[3].cells.len(), 9);
        assert_eq!(d[3].load, Some((1, 1)));
        assert_eq!(d[3].cells[d[3].tracked].name(), "RND 4KiB 0/100");
        assert_eq!(d[1].cells[0].name(), "SEQ 128KiB 0/100");
        // a 4 KiB-sector device: no 0.5 KiB cells
        let d = test_defs(&[Which::Iops, Which::Latency], 4096);
        assert_eq!(d[0].cells.len(), 49);
        assert_eq!(d[1].cells.len(), 6);
    }

    #[test]
    fn steady_state_is_judged_on_the_last_five_rounds() {
        let s = judge(&[100.0, 100.0, 100.0, 100.0]);
        assert!(!s.attained && s.window_first.is_none());
        // a falling start, then flat
        let s = judge(&[300.0, 200.0, 150.0, 101.0, 99.0, 100.0, 100.0]);
        assert!(!s.attained, "{s:?}");
        let s = judge(&[300.0, 200.0, 150.0, 101.0, 99.0, 100.0, 100.0, 100.0]);
        assert!(s.attained, "{s:?}");
        assert_eq!((s.window_first, s.window_last), (Some(4), Some(8)));
        assert!((s.window_avg.unwrap() - 100.0).abs() < 1e-9);
        // the boundary: a range of 20.0 % of the average holds, 20.1 % not
        assert!(judge(&[90.0, 110.0, 100.0, 110.0, 90.0]).attained);
        assert!(!judge(&[89.95, 110.05, 100.0, 110.05, 89.95]).attained);
    }

    #[test]
    fn the_window_averages_each_cell() {
        let c = |iops: f64, max: f64| PtsCell {
            pattern: "rnd".into(),
            read_pct: 0,
            bs_bytes: 4096,
            iops,
            bw_bytes_per_sec: iops * 4096.0,
            lat_mean_ns: 1000.0,
            lat_max_ns: max,
            lat_p99_ns: 2000.0,
        };
        let rounds: Vec<Vec<PtsCell>> = [500.0, 100.0, 100.0, 110.0, 90.0, 100.0]
            .iter()
            .enumerate()
            .map(|(i, &v)| vec![c(v, 1000.0 * (i + 1) as f64)])
            .collect();
        let tracked: Vec<f64> = rounds.iter().map(|r| r[0].iops).collect();
        let s = judge(&tracked);
        let w = window_cells(&rounds, &s);
        assert_eq!(w.len(), 1);
        assert!((w[0].iops - 100.0).abs() < 1e-9);
        assert_eq!(w[0].lat_max_ns, 6000.0);
    }
}
