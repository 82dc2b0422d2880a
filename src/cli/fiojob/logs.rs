//! fio's log options of one job (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `log_avg_msec`, ...) as the [`FioLogs`] its threads write (docs/fio-jobs.md, Log files);
//! the thread numbers and the files shared between jobs are the run's ([`number_logs`]).

use super::FioJob;
use super::ctx::Ctx;
use crate::measure::fiolog::{LogKind, file_name};
use crate::model::fiologs::DEFAULT_RECORD_BYTES;
use crate::model::job::FioLogs;
use std::path::Path;

/// The job's logs, None when it writes none.
pub(super) fn log_options(c: &mut Ctx, job_name: &str) -> Option<FioLogs> {
    let prefix = |c: &mut Ctx, k: &str| {
        c.opt(k)?;
        let v = c.val(k).unwrap_or_default();
        let v = v.trim();
        Some(if v.is_empty() {
            job_name.to_string()
        } else {
            v.to_string()
        })
    };
    let bw = prefix(c, "write_bw_log");
    let lat = prefix(c, "write_lat_log");
    let iops = prefix(c, "write_iops_log");
    let hist = prefix(c, "write_hist_log");
    let iolog = match c.val("write_iolog").map(|v| v.trim().to_string()) {
        Some(v) if v.is_empty() => {
            c.bad("write_iolog", "needs a file name");
            None
        }
        v => v,
    };
    let hist_coarseness = match c.int("log_hist_coarseness") {
        Some(n) if n > 6 => {
            c.bad("log_hist_coarseness", "fio takes 0 to 6");
            0
        }
        n => n.unwrap_or(0) as u32,
    };
    let spec = FioLogs {
        bw,
        lat,
        iops,
        hist,
        iolog,
        hist_msec: c.int("log_hist_msec").unwrap_or(0),
        hist_coarseness,
        avg_msec: c.int("log_avg_msec").unwrap_or(0),
        max_value: c.bool("log_max_value").unwrap_or(false),
        offset: c.bool("log_offset").unwrap_or(false),
        prio: c.bool("log_prio").unwrap_or(false),
        per_job: c.bool("per_job_logs").unwrap_or(true),
        epoch_clock: epoch_clock(c),
        max_record_bytes: 0,
        first_thread: 1,
        append: Vec::new(),
    };
    (spec.stat_logs() || spec.iolog.is_some()).then_some(spec)
}

/// `log_unix_epoch`/`log_alternate_epoch`: the clock of the log times (fio reads
/// `log_alternate_epoch_clock_id` for both), one clock_gettime takes.
fn epoch_clock(c: &mut Ctx) -> Option<i32> {
    let unix = c.bool("log_unix_epoch").unwrap_or(false);
    let alternate = c.bool("log_alternate_epoch").unwrap_or(false);
    let id = c.int("log_alternate_epoch_clock_id").unwrap_or(0);
    if !(unix || alternate) {
        return None;
    }
    match i32::try_from(id)
        .ok()
        .filter(|id| crate::engine::fiolog::clock_ms(*id, Default::default()).is_ok())
    {
        Some(id) => Some(id),
        None => {
            c.bad(
                "log_alternate_epoch_clock_id",
                "not a clock this system has (0 CLOCK_REALTIME, 1 CLOCK_MONOTONIC, ...)",
            );
            None
        }
    }
}

/// The file names of a job's logs (every thread's with `per_job_logs`).
pub fn log_files(spec: &FioLogs, threads: u32) -> Vec<String> {
    let mut names = Vec::new();
    for kind in LogKind::ALL {
        for t in 0..if spec.per_job { threads } else { 1 } {
            if let Some(n) = file_name(spec, kind, spec.first_thread + t) {
                names.push(n);
            }
        }
    }
    names.extend(spec.iolog.clone());
    names
}

/// fio's thread numbers (1-based over the run, one per `numjobs` clone) and the files a job
/// shares with an earlier one (appended to, as fio appends with `per_job_logs=0`); a log file
/// whose name is a symbolic link or anything but a regular file, or whose folder does not
/// exist, is a blocker at the job.
pub(super) fn number_logs(jobs: &mut [FioJob], blockers: &mut super::Blockers) {
    // the records' memory: 1 GiB per phase, or a quarter of what is available when less,
    // split over the phase's jobs with per-I/O logs
    let available =
        crate::system::procfs::meminfo(&crate::system::env::Roots::live().proc).available;
    let budget = available.map_or(DEFAULT_RECORD_BYTES, |a| (a / 4).min(DEFAULT_RECORD_BYTES));
    let logging = |phase: usize| {
        jobs.iter()
            .filter(|j| j.phase == phase && j.args.fio_logs.is_some())
            .count()
            .max(1) as u64
    };
    let shares: Vec<u64> = jobs.iter().map(|j| budget / logging(j.phase)).collect();
    let mut thread = 1u32;
    let mut written: Vec<String> = Vec::new();
    for (i, j) in jobs.iter_mut().enumerate() {
        let threads = j.args.threads.unwrap_or(1);
        if let Some(l) = &mut j.args.fio_logs {
            l.first_thread = thread;
            l.max_record_bytes = shares[i];
            let names = log_files(l, threads);
            l.append = names
                .iter()
                .filter(|n| written.contains(n))
                .cloned()
                .collect();
            for n in names {
                if let Some(why) = crate::engine::fiolog::unwritable(Path::new(&n)) {
                    let (file, line) = j.at.rsplit_once(':').unwrap_or((&j.at, "0"));
                    let about = format!("{}: fio log {n}", j.at);
                    blockers.error(
                        (file, line.parse().unwrap_or(0)),
                        &about,
                        format!("{about}: {why}"),
                    );
                }
                if !written.contains(&n) {
                    written.push(n);
                }
            }
        }
        thread = thread.saturating_add(threads);
    }
}
