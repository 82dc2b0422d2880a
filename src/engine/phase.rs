//! One measured phase: the worker threads of its jobs (a mode's cell, or every role's at once)
//! started at one instant, the device sampler beside them, the live lines, each job's threads
//! merged on their own (its own duration); and a roles phase made into one cell.

use crate::engine::checkpoints::{Agreed, Checkpoint, PhaseSync};
use crate::engine::fileset::{self, file_path};
use crate::engine::ops::{MapPtr, Shared};
use crate::engine::steady::SteadyUnits;
use crate::engine::verify::VerifySetup;
use crate::engine::worker::Progress;
use crate::engine::{caps, run_worker};
use crate::error::{Error, Result};
use crate::measure::export::{Observer, PhaseUnit};
use crate::measure::live::{self, LiveCounters};
use crate::measure::stats::{self, OpKind, ThreadStats};
use crate::measure::warnings;
use crate::model::job::{FileSetSpec, Job, Limit};
use crate::model::run::{CellJob, CellResult, Cpu, RoleResult, RunEnv, Warning};
use crate::spec::plan::Plan;
use std::fs::{File, OpenOptions};
use std::io::IsTerminal;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

pub(super) fn rusage() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

pub(super) fn open_files(spec: &FileSetSpec, job: &Job) -> Result<Vec<File>> {
    let mut flags = 0;
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    if job.open_flags.sync {
        flags |= libc::O_SYNC;
    }
    if job.open_flags.dsync {
        flags |= libc::O_DSYNC;
    }
    if let Some(dev) = &spec.device {
        // A device is opened read-only for read modes. Nothing can mount or claim it while
        // iolab runs: the plan holds it open exclusively (`Plan::device`), so an O_EXCL here
        // would only meet that open.
        let writes = job.mode.writes();
        return OpenOptions::new()
            .read(true)
            .write(writes)
            .custom_flags(flags)
            .open(dev)
            .map(|f| vec![f])
            .map_err(|e| {
                let why = if e.raw_os_error() == Some(libc::EBUSY) {
                    "another program claimed it meanwhile (mounted, or held open exclusively)"
                        .to_string()
                } else {
                    e.to_string()
                };
                Error::failed(format!("--device {}: opening it: {why}", dev.display()))
            });
    }
    // never through a symbolic link planted in the set (system::target)
    let t = fileset::target(&spec.dir)?;
    (0..spec.files)
        .map(|i| {
            t.open_existing(&fileset::file_name(i), true, flags)
                .map_err(|e| {
                    Error::failed(format!(
                        "opening {}: {e}",
                        file_path(&spec.dir, i).display()
                    ))
                })
        })
        .collect()
}

pub(super) struct Maps(pub(super) Vec<MapPtr>);

impl Drop for Maps {
    fn drop(&mut self) {
        for m in &self.0 {
            // SAFETY: unmapping mappings created in map_files.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }
}

pub(super) fn map_files(files: &[File], len: u64) -> Result<Maps> {
    let mut maps = Maps(Vec::new());
    for f in files {
        // SAFETY: a shared read-write mapping of an open file of at least `len` bytes.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::failed(format!(
                "mmap of a data file failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        maps.0.push(MapPtr {
            ptr: p.cast(),
            len: len as usize,
        });
    }
    Ok(maps)
}

pub(super) fn fmt_rate(iops: f64, bps: f64) -> String {
    format!("{:>9.0} IOPS {:>9.2} MiB/s", iops, bps / 1048576.0)
}

/// One job of a measured phase and the file set it runs on.
pub(super) struct Unit<'a> {
    pub(super) job: &'a Job,
    pub(super) spec: &'a FileSetSpec,
    /// The role's name (`--report-interval` lines of a roles phase); None for a mode's cell.
    pub(super) role: Option<&'a str>,
}

/// A job's settings as the labels of `iolab_run_info` (docs/metrics.md): always these names,
/// in this order (`rate_iops` empty when not paced).
fn run_info(job: &Job, spec: &FileSetSpec) -> Vec<(&'static str, String)> {
    vec![
        ("engine", caps(job.engine).name.to_string()),
        ("bs", job.bs_label()),
        ("bs_bytes", job.bs_bytes.to_string()),
        ("threads", job.threads.to_string()),
        ("iodepth", job.iodepth.to_string()),
        ("direct", job.direct.to_string()),
        (
            "rate_iops",
            job.rate_iops.map_or_else(String::new, |r| r.to_string()),
        ),
        ("distribution", job.distribution.to_string()),
        ("files", spec.files.to_string()),
        ("file_size_bytes", spec.file_size_bytes.to_string()),
        (
            "target",
            spec.device
                .as_ref()
                .unwrap_or(&spec.dir)
                .display()
                .to_string(),
        ),
        ("iolab_version", env!("CARGO_PKG_VERSION").to_string()),
    ]
}

/// What one phase measured: the merged statistics of each unit, and what the units share.
pub(super) struct Phase {
    pub(super) merged: Vec<stats::Merged>,
    /// Each unit's threads on their own, with each one's own duration (fio's `numjobs` clones),
    /// when it has more than one.
    pub(super) threads: Vec<Vec<(stats::Merged, f64)>>,
    /// Seconds from the end of the ramp to the end of the last thread.
    pub(super) duration_s: f64,
    /// The same for each unit's own threads: a size-bound job's runtime is its own, not the
    /// phase's (its rates divide by it), as fio's per job.
    pub(super) unit_duration_s: Vec<f64>,
    /// Each unit's steady-state findings (fio's `ss`): its reporting group's, or each thread's.
    pub(super) steady: Vec<Vec<crate::model::steady::SteadyState>>,
    pub(super) cpu: Cpu,
    pub(super) device: Option<crate::model::device::DeviceReport>,
    pub(super) interrupted: bool,
}

/// Runs the units of one phase at once: every unit's worker threads start at the same instant
/// and measure the same window (the first unit's ramp and limit set it when time-limited), the
/// device sampler runs once beside them, and each unit's threads are merged on their own. The
/// file sets must be complete.
pub(super) fn run_phase(
    plan: &Plan,
    units: &[Unit],
    stop: &AtomicBool,
    devices: &[String],
    vset: Option<&VerifySetup>,
    sync: &dyn PhaseSync,
    obs: Option<&Observer>,
) -> Result<Phase> {
    let mut files: Vec<Vec<File>> = Vec::new();
    let mut maps: Vec<Maps> = Vec::new();
    for u in units {
        let engine = caps(u.job.engine);
        let f = if engine.needs_files {
            open_files(u.spec, u.job)?
        } else {
            Vec::new()
        };
        maps.push(if engine.needs_mapping {
            map_files(&f, u.spec.file_len())?
        } else {
            Maps(Vec::new())
        });
        files.push(f);
    }
    // filestat and filedelete: each thread's files made now, before the clock (fio's setup)
    let ahead: Vec<Vec<crate::engine::ops::Ahead>> = units
        .iter()
        .map(|u| crate::engine::fileops::make_ahead(u.job, &u.spec.dir))
        .collect::<std::io::Result<_>>()
        .map_err(|e| {
            Error::failed(format!(
                "{}: making the files to work on: {e}",
                units[0].spec.dir.display()
            ))
        })?;
    let fds: Vec<Vec<RawFd>> = files
        .iter()
        .map(|f| f.iter().map(|f| f.as_raw_fd()).collect())
        .collect();
    // fio's steady state: the units judged each second (from the threads' live counters)
    let steady = SteadyUnits::new(units.iter().map(|u| u.job));
    let progress: Vec<Vec<Progress>> = units
        .iter()
        .map(|u| {
            (0..u.job.threads)
                .map(|_| Progress {
                    live: (plan.report_interval.is_some()
                        || obs.is_some()
                        || sync.watched()
                        || !steady.is_empty())
                    .then(|| std::sync::Arc::new(LiveCounters::default())),
                    ..Progress::default()
                })
                .collect()
        })
        .collect();
    let total_threads: u32 = units.iter().map(|u| u.job.threads).sum();
    let finished = AtomicUsize::new(0);
    // set by the last worker to finish: wakes the live line at once
    let all_done = crate::measure::iostat::StopSignal::new();
    let job0 = units[0].job;
    // The files are open: wait for the other processes of a distributed run, so that every
    // one's ramp and measured window start at the same instant.
    if sync.checkpoint(Checkpoint::Measure, !stop.load(Ordering::Relaxed)) == Agreed::Stop {
        stop.store(true, Ordering::Relaxed);
        return Err(crate::engine::checkpoints::stopped());
    }
    let start = match sync.common_start() {
        // the same instant on every process, whenever each left the checkpoint
        Some(at) => Instant::now() + at.duration_since(SystemTime::now()).unwrap_or_default(),
        None => Instant::now() + Duration::from_millis(5),
    };
    if sync.watched() {
        sync.measuring(
            progress
                .iter()
                .flatten()
                .filter_map(|p| p.live.clone())
                .collect(),
        );
    }
    let measure_start = start + Duration::from_secs_f64(job0.ramp_s);
    let measure_start_wall = SystemTime::now() + measure_start.duration_since(Instant::now());
    // fio's exitall: set when a job that has it ends; flows: one per flow_id of the phase
    let exit = AtomicBool::new(false);
    let flows = crate::engine::timing::phase_flows(units.iter().map(|u| u.job));
    let shared: Vec<Shared> = units
        .iter()
        .enumerate()
        .map(|(i, u)| {
            // startdelay: the job's own start, ramp and window come that much later
            let delay = Duration::from_secs_f64(u.job.timing.start_delay_s);
            let measure_start = measure_start + delay;
            Shared {
                job: u.job,
                fds: &fds[i],
                maps: &maps[i].0,
                file_size_bytes: u.spec.file_size_bytes,
                base_offset: u.spec.base_offset(),
                // Page-aligned at least: a buffer that straddles an extra page costs an extra page pin per O_DIRECT I/O.
                mem_align: plan.dio.mem.max(4096) as usize,
                stop,
                exit: &exit,
                halt: None,
                flow: u
                    .job
                    .timing
                    .flow
                    .and_then(|f| flows.iter().find(|x| x.id == f.id)),
                start: start + delay,
                measure_start,
                deadline: u
                    .job
                    .deadline_s()
                    .map(|t| measure_start + Duration::from_secs_f64(t)),
                verify: vset.filter(|_| u.job.verify),
                device: u.spec.device.is_some(),
                dir: &u.spec.dir,
                ahead: None,
            }
        })
        .collect();
    let live = !plan.quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    // The live export: this phase's units and their threads' counters, a cell number.
    let export_units: Vec<PhaseUnit> = units
        .iter()
        .map(|u| PhaseUnit {
            mode: u.job.mode.to_string(),
            role: u.role.map(str::to_string),
            kinds: op_kinds(u.job).iter().map(|k| k.0 as usize).collect(),
            settings: run_info(u.job, u.spec),
        })
        .collect();
    let export_cell = obs.map(|o| {
        o.begin_phase(
            &export_units,
            progress
                .iter()
                .map(|ps| ps.iter().filter_map(|p| p.live.clone()).collect())
                .collect(),
            measure_start_wall,
        )
    });
    let (u0, s0) = rusage();
    let cell_done = crate::measure::iostat::StopSignal::new();
    let mut device = None;
    let mut states: Option<Vec<crate::model::steady::SteadyState>> = None;
    type Ended = (std::io::Result<ThreadStats>, Instant);
    let results: Vec<Vec<Ended>> = std::thread::scope(|s| {
        // The device sampler: one read of /proc/diskstats and /proc/stat per interval.
        let sampler = match (!devices.is_empty())
            .then(|| {
                let cell_done = &cell_done;
                std::thread::Builder::new()
                    .name("iolab-iostat".into())
                    .spawn_scoped(s, move || {
                        let mode = job0.mode.to_string();
                        crate::measure::iostat::sample_until_with(
                            &plan.roots.proc,
                            devices,
                            plan.iostat_interval,
                            measure_start,
                            cell_done,
                            &|sample, counts| {
                                if let (Some(o), Some(c)) = (obs, export_cell) {
                                    o.device_sample(c, &mode, sample, counts);
                                }
                            },
                        )
                    })
            })
            .transpose()
        {
            Ok(h) => h,
            Err(e) => return Err(e),
        };
        let mut handles = Vec::new();
        let mut spawn_err = None;
        'spawn: for (ui, u) in units.iter().enumerate() {
            let mut hs = Vec::new();
            for t in 0..u.job.threads {
                // the thread's own copy: its steady-state unit's flag
                let sh = Shared {
                    halt: steady.halt(ui, t),
                    ahead: ahead[ui].get(t as usize),
                    ..shared[ui].clone()
                };
                let (prog, finished) = (&progress[ui][t as usize], &finished);
                let all_done = &all_done;
                let files_n = u.spec.files;
                let name = if units.len() > 1 {
                    format!("iolab-r{ui}w{t}")
                } else {
                    format!("iolab-w{t}")
                };
                match std::thread::Builder::new()
                    .name(name)
                    .spawn_scoped(s, move || {
                        // asleep through a startdelay, then the last moment on the clock
                        if let Some(d) = sh
                            .start
                            .checked_duration_since(Instant::now())
                            .and_then(|d| d.checked_sub(Duration::from_millis(2)))
                        {
                            std::thread::sleep(d);
                        }
                        while Instant::now() < sh.start {
                            std::hint::spin_loop();
                        }
                        let r = run_worker(&sh, t, files_n, prog);
                        let ended = Instant::now();
                        prog.done.store(true, Ordering::Relaxed);
                        if r.is_err() {
                            sh.stop.store(true, Ordering::Relaxed);
                        }
                        if sh.job.timing.exit_all {
                            sh.exit.store(true, Ordering::Relaxed);
                        }
                        if finished.fetch_add(1, Ordering::Release) + 1 == total_threads as usize {
                            all_done.set();
                        }
                        (r, ended)
                    }) {
                    Ok(h) => hs.push(h),
                    Err(e) => {
                        spawn_err = Some(e);
                        handles.push(hs);
                        break 'spawn;
                    }
                }
            }
            handles.push(hs);
        }
        // fio's steady state: sampled each second on a thread of its own
        let judge = match (!steady.is_empty() && spawn_err.is_none())
            .then(|| {
                let (steady, progress, all_done) = (&steady, &progress, &all_done);
                let epochs: Vec<Instant> = shared.iter().map(|sh| sh.start).collect();
                std::thread::Builder::new()
                    .name("iolab-steady".into())
                    .spawn_scoped(s, move || steady.watch(progress, &epochs, start, all_done))
            })
            .transpose()
        {
            Ok(h) => h,
            Err(e) => {
                spawn_err = Some(e);
                None
            }
        };
        // A thread that cannot be started (the system's thread or memory limit) fails the cell:
        // the workers already running are stopped and joined, never a panic.
        if let Some(e) = spawn_err {
            stop.store(true, Ordering::Relaxed);
            cell_done.set();
            return Err(e);
        }
        // `--live`: one line per measured second, on a thread of its own (beside the report
        // lines or the live line).
        let lines = match (obs, export_cell) {
            (Some(o), Some(cell)) if o.wants_lines() => {
                let (progress, all_done, export_units) = (&progress, &all_done, &export_units);
                std::thread::Builder::new()
                    .name("iolab-live".into())
                    .spawn_scoped(s, move || {
                        let groups: Vec<Vec<&LiveCounters>> = progress
                            .iter()
                            .map(|ps| ps.iter().filter_map(|p| p.live.as_deref()).collect())
                            .collect();
                        live::report_every_groups(
                            &groups,
                            Duration::from_secs(1),
                            start,
                            measure_start,
                            all_done,
                            &mut |stamp, ds| o.interval(cell, export_units, stamp, ds),
                        );
                    })
                    .ok()
            }
            _ => None,
        };
        if let Some(every) = plan.report_interval {
            report_lines(units, &progress, &all_done, every, start, measure_start);
        } else if live {
            let label = if units.len() > 1 {
                format!("{} roles", units.len())
            } else {
                job0.mode.to_string()
            };
            let all: Vec<&Progress> = progress.iter().flatten().collect();
            monitor(
                &label,
                total_threads,
                job0.limit,
                &all,
                &all_done,
                measure_start,
                shared[0].deadline,
            );
        }
        let r = handles
            .into_iter()
            .map(|hs| {
                hs.into_iter()
                    .map(|h| h.join().expect("worker panicked"))
                    .collect()
            })
            .collect();
        cell_done.set();
        device = sampler.map(|h| h.join().expect("sampler panicked"));
        states = judge.map(|h| h.join().expect("steady state panicked"));
        if let Some(h) = lines {
            h.join().expect("live lines panicked");
        }
        if let Some(o) = obs {
            o.end_phase();
        }
        Ok(r)
    })
    .map_err(|e| {
        Error::failed(format!(
            "--threads {total_threads}: starting worker thread failed ({e}); the system's limit on threads or memory is lower than its figures said: use fewer --threads"
        ))
    })?;
    let end = Instant::now();
    sync.measured(measure_start_wall, SystemTime::now());
    let (u1, s1) = rusage();
    let unit_starts: Vec<Instant> = shared.iter().map(|sh| sh.measure_start).collect();
    drop(shared);
    drop(maps);
    drop(files);
    let states = states.unwrap_or_default();
    let steady_of: Vec<_> = (0..units.len())
        .map(|ui| steady.states_of(ui, &states))
        .collect();
    let mut merged = Vec::new();
    let mut threads = Vec::new();
    let mut unit_duration_s = Vec::new();
    let since_start = |t: Instant| t.saturating_duration_since(measure_start).as_secs_f64();
    for ((u, rs), &unit_start) in units.iter().zip(results).zip(&unit_starts) {
        let mut stats = Vec::new();
        let mut each = Vec::new();
        // a job's runtime counts from its own start (after its startdelay), as fio's
        let since_start = |t: Instant| t.saturating_duration_since(unit_start).as_secs_f64();
        let mut longest = 0f64;
        for (r, ended) in rs {
            let r =
                r.map_err(|e| Error::failed(format!("--engine {}: {e}", u.job.engine.name())))?;
            // from where its totals started over (fio's latency_target), if they did
            let from = r.since.map_or(0.0, since_start);
            stats.push(r);
            let d = since_start(ended) - from;
            each.push(d.max(1e-9));
            longest = longest.max(d);
        }
        // fio's log files of a job file's job, written before its threads are merged
        let logs: Vec<_> = stats.iter_mut().filter_map(|s| s.fio_log.take()).collect();
        if let Some(spec) = &u.job.fio_logs {
            let since = measure_start.elapsed();
            for w in crate::engine::fiolog::write_job_logs(spec, &logs, since) {
                eprintln!("iolab: warning: {w}");
            }
            if let Some(w) = crate::engine::fiolog::write_iolog(spec, u.spec, &mut stats) {
                eprintln!("iolab: warning: {w}");
            }
        }
        threads.push(if stats.len() > 1 {
            stats.iter().map(stats::thread_totals).zip(each).collect()
        } else {
            Vec::new()
        });
        merged.push(stats::merge(stats));
        unit_duration_s.push(longest.max(1e-9));
    }
    let wall = end.saturating_duration_since(start).as_secs_f64().max(1e-9);
    Ok(Phase {
        merged,
        threads,
        duration_s: since_start(end).max(1e-9),
        unit_duration_s,
        steady: steady_of,
        cpu: Cpu {
            user_s: u1 - u0,
            sys_s: s1 - s0,
            user_pct: 100.0 * (u1 - u0) / wall,
            sys_pct: 100.0 * (s1 - s0) / wall,
        },
        device,
        interrupted: stop.load(Ordering::Relaxed),
    })
}

/// Measures the roles of a plan in one phase: one cell whose `roles` are each role's results
/// and whose `results` are their totals. The file sets must be complete; `resident_pct` is the
/// share of each role's set in the page cache at the start.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_roles_cell(
    plan: &Plan,
    env: &RunEnv,
    link_bps: Option<f64>,
    stop: &AtomicBool,
    resident_pct: &[f64],
    devices: &[String],
    sync: &dyn PhaseSync,
    obs: Option<&Observer>,
) -> Result<CellResult> {
    let units: Vec<Unit> = plan
        .roles
        .iter()
        .map(|r| Unit {
            job: &r.job,
            spec: &r.fileset,
            role: Some(&r.name),
        })
        .collect();
    let phase = run_phase(plan, &units, stop, devices, None, sync, obs)?;
    let mut roles = Vec::new();
    let mut warnings: Vec<Warning> = Vec::new();
    for (i, (r, m)) in plan.roles.iter().zip(&phase.merged).enumerate() {
        let cj = CellJob {
            job: r.job.clone(),
            fileset: r.fileset.clone(),
        };
        let mut c = stats::cell_result(
            cj,
            m,
            phase.unit_duration_s[i],
            phase.cpu.clone(),
            resident_pct[i],
            phase.interrupted,
        );
        c.warnings = warnings::check_cell(&r.job, &r.fileset, env, link_bps, &c, plan.warm);
        c.steady = phase.steady[i].clone();
        for w in &c.warnings {
            let w = Warning::new(&w.code, format!("role {}: {}", r.name, w.message));
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        roles.push(RoleResult::from_cell(&r.name, c));
    }
    // The totals: every role's threads as one job (one block size: per-size figures stay with
    // the roles).
    let mut total = plan.roles[0].job.clone();
    total.threads = plan.roles.iter().map(|r| r.job.threads).sum();
    total.bs_mix = None;
    total.bs_range = None;
    total.bs_dirs = None;
    total.replay = None;
    let cj = CellJob {
        job: total,
        fileset: plan.fileset.clone(),
    };
    let mut cell = stats::cell_result(
        cj,
        &stats::combine(&phase.merged),
        phase.duration_s,
        phase.cpu,
        resident_pct.first().copied().unwrap_or(0.0),
        phase.interrupted,
    );
    cell.mode = ROLES_MODE.to_string();
    // each replaying role's own figures are its own (`roles[].replay`)
    cell.replay = None;
    cell.device = phase.device;
    cell.warnings = warnings;
    cell.roles = roles;
    Ok(cell)
}

/// The `mode` of the cell of a run with roles.
pub const ROLES_MODE: &str = "roles";

/// `--report-interval`: one line per interval on stderr (terminal or not, also with -q), until
/// the workers finish. Replaces the live progress line.
/// With roles (several units), one line per role per interval, each summing that role's own
/// threads and named `role NAME` instead of the mode.
pub(super) fn report_lines(
    units: &[Unit],
    progress: &[Vec<Progress>],
    all_done: &crate::measure::iostat::StopSignal,
    every: Duration,
    start: Instant,
    measure_start: Instant,
) {
    let groups: Vec<Vec<&LiveCounters>> = progress
        .iter()
        .map(|ps| ps.iter().filter_map(|p| p.live.as_deref()).collect())
        .collect();
    let kinds: Vec<Vec<(OpKind, &str)>> = units.iter().map(|u| op_kinds(u.job)).collect();
    live::report_every_groups(
        &groups,
        every,
        start,
        measure_start,
        all_done,
        &mut |stamp, ds| {
            for ((u, k), d) in units.iter().zip(&kinds).zip(ds) {
                live::print_line(&report_line(u, k, stamp, d));
            }
        },
    );
}

/// The kinds of operation a job does, with their names (reads, writes, fsyncs when it syncs,
/// trims).
pub(super) fn op_kinds(job: &Job) -> Vec<(OpKind, &'static str)> {
    let fsyncs = job.mode.writes() && (job.syncs_while_running() || job.fsync_end);
    [
        (OpKind::Read, job.mode.reads()),
        (OpKind::Write, job.mode.issues_writes()),
        (OpKind::Fsync, fsyncs),
        (OpKind::Trim, job.mode.trims()),
    ]
    .into_iter()
    .filter(|k| k.1)
    .map(|(k, _)| (k, k.name()))
    .collect()
}

/// `[ 2s ] rndrw 4t  read: 1234 IOPS 19.28 MiB/s p99 0.452 ms  write: ...  fsync: 12 p99 3.10 ms`;
/// a role's line names it: `[ 2s ] role wal 1t  write: ...`.
pub(super) fn report_line(
    u: &Unit,
    kinds: &[(OpKind, &str)],
    stamp: live::Stamp,
    d: &live::Delta,
) -> String {
    let job = u.job;
    let mut l = match u.role {
        Some(name) => format!("{stamp} role {name} {}t", job.threads),
        None => format!("{stamp} {} {}t", job.mode, job.threads),
    };
    for &(k, name) in kinds {
        let i = k as usize;
        let p99 = live::fmt_ms(d.percentile(i, 99.0));
        if k == OpKind::Fsync {
            l.push_str(&format!("  {name}: {} p99 {p99} ms", d.ops[i]));
        } else {
            l.push_str(&format!(
                "  {name}: {:.0} IOPS {:.2} MiB/s p99 {p99} ms",
                d.rate(i),
                d.amount_rate(i) / 1048576.0
            ));
        }
    }
    l
}

/// The live progress line (stderr, only on a terminal).
pub(super) fn monitor(
    label: &str,
    threads: u32,
    limit: Limit,
    progress: &[&Progress],
    all_done: &crate::measure::iostat::StopSignal,
    measure_start: Instant,
    deadline: Option<Instant>,
) {
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("template"));
    let mut last = (Instant::now(), 0u64, 0u64);
    while !all_done.is_set() {
        // a refresh every 250 ms; the end of the run wakes it at once
        all_done.wait_until(Instant::now() + Duration::from_millis(250));
        let ops: u64 = progress.iter().map(|p| p.ops.load(Ordering::Relaxed)).sum();
        let bytes: u64 = progress
            .iter()
            .map(|p| p.bytes.load(Ordering::Relaxed))
            .sum();
        let now = Instant::now();
        let dt = now.duration_since(last.0).as_secs_f64().max(1e-3);
        let rate = fmt_rate((ops - last.1) as f64 / dt, (bytes - last.2) as f64 / dt);
        last = (now, ops, bytes);
        let when = if now < measure_start {
            format!(
                "ramp {:.0}s",
                measure_start.duration_since(now).as_secs_f64()
            )
        } else {
            let el = now.duration_since(measure_start).as_secs_f64();
            match (deadline, limit) {
                (Some(d), _) => format!(
                    "{el:.0}s elapsed, {:.0}s left",
                    d.saturating_duration_since(now).as_secs_f64()
                ),
                (None, Limit::Ops(n)) => format!("{el:.0}s elapsed, {ops}/{n} ops"),
                (None, Limit::Bytes(n)) => format!("{el:.0}s elapsed, {ops} ops of {n} bytes"),
                _ => format!("{el:.0}s"),
            }
        };
        pb.set_message(format!("{label} {threads}t {rate}  {when}"));
        pb.tick();
    }
    pb.finish_and_clear();
}
