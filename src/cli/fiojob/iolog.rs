//! A job with fio's `read_iolog`: the log replayed as `iolab run --replay` (docs/fio-jobs.md),
//! with `replay_redirect` (the device), `replay_time_scale` (the speed, percent of the log's
//! rate) and `replay_no_stall` (closed loop).

use super::ctx::Ctx;
use super::*;

/// The job's replay: its flags parsed by the run's own parser, as any job's.
pub(super) fn replay_job(a: &RunArgs, mut c: Ctx) -> Option<FioJob> {
    let s = c.s;
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let log = c.val("read_iolog").unwrap_or_default();
    let log = log.trim();
    if log.is_empty() || log == "-" {
        c.bad(
            "read_iolog",
            "name a log file (iolab does not read a log from standard input)",
        );
        return None;
    }
    flags.push(("replay".into(), log.to_string()));
    if let Some(pct) = c.int("replay_time_scale") {
        if pct == 0 {
            c.bad("replay_time_scale", "must be at least 1 (percent)");
            return None;
        }
        if pct != 100 {
            flags.push(("speed".into(), format!("{}", pct as f64 / 100.0)));
        }
    }
    if c.bool("replay_no_stall") == Some(true) {
        flags.push(("closed".into(), String::new()));
    }
    let redirect = c.val("replay_redirect").map(|d| d.trim().to_string());
    let filename = c
        .val("filename")
        .map(|f| f.trim().to_string())
        .filter(|f| f.starts_with("/dev/") && !f.contains(':'));
    if let Some(dev) = redirect.or(filename) {
        flags.push(("device".into(), dev));
    } else if let Some(d) = c.val("directory") {
        flags.push(("dir".into(), d.trim().to_string()));
    }
    if c.bool("direct") != Some(true) {
        flags.push(("buffered".into(), String::new()));
    }
    if let Some(e) = c.val("ioengine") {
        let e = e.trim();
        match e {
            "libaio" | "io_uring" => flags.push(("engine".into(), e.to_string())),
            _ => notes.push(format!(
                "ioengine={e}: the replay runs on a queue engine (io_uring, else libaio), as deep as the log's queue"
            )),
        }
    }
    if let Some(d) = c.int("iodepth").filter(|&d| d > 1) {
        flags.push(("iodepth".into(), d.to_string()));
    }
    notes.push(format!(
        "read_iolog={log}: replayed as `iolab run --replay {log}` (each request at its time; the job's rw=, bs= and size= are the log's own)"
    ));
    super::runopts::run_options(a, s, c, flags, notes)
}
