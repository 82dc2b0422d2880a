//! `iolab capture`: checks, then `system::capture` records the device's block requests; the
//! summary printed with `emit`.

use super::*;
use crate::system::capture::{self as cap, Fault};

/// Not root: capture needs tracefs, which only root may use (exit 2, nothing written).
pub const NEEDS_ROOT: &str = "iolab capture needs root: it reads the kernel's block trace events through tracefs (run it with sudo)";

pub fn cmd_capture(a: &cli::CaptureArgs) -> Result<i32> {
    let spec = cap::CaptureSpec {
        device: a.device.clone(),
        dir: a.dir.clone(),
        time_s: a.time,
        output: a.output.clone(),
        max_events: a.max_events,
        write_iolog: a.write_iolog.clone(),
        buffer_kb: a.buffer_kb,
        pid: a.pid,
        cgroup: a.cgroup.clone(),
    };
    let fault = |f: Fault| match f {
        Fault::Usage(s) => Error::usage(s),
        Fault::Failed(s) => Error::failed(s),
    };
    let roots = crate::system::env::Roots::live();
    cap::check_outputs(&spec).map_err(fault)?;
    let target = cap::resolve(&spec, &roots).map_err(fault)?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Error::usage(NEEDS_ROOT));
    }
    // the database's own counters: connected before anything starts (a bad URL writes nothing)
    use crate::workloads::db::{self as wdb, view};
    let mut db = match &a.db_url {
        Some(u) => {
            let t = wdb::Target::parse(u).map_err(|e| Error::usage(e.to_string()))?;
            if t.backend == wdb::Backend::Sqlite {
                return Err(Error::usage(format!(
                    "--url {u}: SQLite keeps no I/O counters of its own; its files tell its WAL from its data (capture --dir with the database's folder); use postgres://... or mysql://..."
                )));
            }
            let so = wdb::SqliteOpts {
                journal_mode: String::new(),
                synchronous: String::new(),
                page_size: 0,
            };
            let c = wdb::connect(&t, &so).map_err(|e| Error::failed(format!("--url: {e}")))?;
            Some((t.backend, c))
        }
        None => None,
    };
    let mut first = None;
    let mut window = |open: bool| {
        let (backend, c) = db.as_mut()?;
        let r = view::read(c.as_mut(), *backend);
        if open {
            first = Some(r);
            None
        } else {
            Some(view::delta(*backend, first.as_ref()?, &r))
        }
    };
    let stop = stop_flag();
    let summary = cap::run(&spec, &target, &roots, &stop, &mut window).map_err(fault)?;
    for w in &summary.warnings {
        eprintln!("iolab: warning: {w}");
    }
    emit(&summary, Format::json_if(a.print.json))?;
    Ok(if summary.stopped_by == "interrupted" {
        Exit::Interrupted as i32
    } else {
        0
    })
}

/// `iolab fingerprint CAPTURE`: the capture's distributions, printed and stored like a run.
pub fn cmd_fingerprint(a: &cli::FingerprintArgs) -> Result<i32> {
    let f = crate::measure::fingerprint::fingerprint_file(&a.capture)
        .map_err(|e| Error::usage(format!("{}: {e}", a.capture.display())))?;
    emit(&f, Format::json_if(a.print.json))?;
    super::suite::save_suite(
        &a.db,
        a.no_save,
        "fingerprint",
        &crate::output::document::Document::json(&f),
        None,
    )?;
    Ok(0)
}
