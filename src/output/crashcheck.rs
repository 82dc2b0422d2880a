//! The text of `iolab crashcheck write` and `verify` (and of `show` for a stored one).

use crate::model::crashcheck::{CrashDoc, Stop, VerifyOut};
use crate::model::units::Bytes;

/// The verdict line of a verify: plain words, the count first.
pub fn verdict(v: &VerifyOut) -> String {
    let n = v.failures();
    if n > 0 {
        format!("{n} acknowledged writes lost: this storage does not honour fsync")
    } else {
        format!(
            "all {} acknowledged writes are there: no acknowledged write was lost",
            v.checked
        )
    }
}

/// Problems listed in the text (the JSON has up to 100).
const SHOWN: usize = 20;

pub fn render(d: &CrashDoc) -> String {
    let key = d
        .key
        .as_ref()
        .map(|k| format!(" (key {k})"))
        .unwrap_or_default();
    let mut s = format!(
        "crashcheck {}: run {}{key} on {}\n  file {} ({}, {} records, {})\n  journal {}\n",
        d.phase,
        d.run,
        d.host,
        d.file,
        Bytes(d.file_bytes),
        Bytes(d.record_bytes),
        d.sync,
        d.journal
    );
    for w in &d.warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    if let Some(w) = &d.write {
        s.push_str(&format!(
            "written {}, acknowledged {} in {:.2} s ({:.0} acknowledged/s), stopped: {}\n",
            w.written,
            w.acknowledged,
            w.elapsed_s,
            w.acks_per_sec,
            match w.stopped {
                Stop::Count => "--count reached",
                Stop::Time => "--time reached",
                Stop::Interrupted => "interrupted",
                Stop::IoError => "I/O error",
                Stop::ListenerLost => "the listener was lost",
            }
        ));
        if let Some(f) = &w.failure {
            s.push_str(&format!(
                "FAILED: record {} at offset {}: {} failed: {}",
                f.seq, f.offset_bytes, f.call, f.error
            ));
            if let Some(second) = &f.second_sync {
                s.push_str(&format!("; a second sync returned {second}"));
            }
            s.push_str(&format!(
                "; record {} is not acknowledged (fsync errors are reported once: a later success does not bring the data back)\n",
                f.seq
            ));
        }
    }
    if let Some(v) = &d.verify {
        s.push_str(&format!("writer: {}\n", v.writer));
        s.push_str(&format!(
            "acknowledged {}, offsets checked {}: ok {}, overwritten later {}, lost {}, corrupt {}, misdirected {}\n",
            v.acknowledged, v.checked, v.ok, v.overwritten, v.lost, v.corrupt, v.misdirected
        ));
        if !v.problems.is_empty() {
            let mut t = comfy_table::Table::new();
            t.load_style(comfy_table::presets::NOTHING);
            t.set_header(["seq", "offset", "verdict", "found"]);
            for p in v.problems.iter().take(SHOWN) {
                t.add_row([
                    p.seq.to_string(),
                    p.offset_bytes.to_string(),
                    p.class.name().to_string(),
                    p.found.clone(),
                ]);
            }
            s.push_str(&t.to_string());
            s.push('\n');
            let shown = v.problems.len().min(SHOWN);
            if (shown as u64) < v.failures() {
                s.push_str(&format!(
                    "(the first {shown} of {}; --json lists up to {})\n",
                    v.failures(),
                    v.problems.len()
                ));
            }
        }
        s.push_str(&verdict(v));
        s.push('\n');
    }
    s
}

/// The text of `iolab verify --dir D`.
pub fn render_verify(d: &crate::model::verify::VerifyDoc) -> String {
    let mut s = format!(
        "{}: run {:016x}, blocks of {} bytes; {} blocks no verify write reached (not checked)\n{}\n",
        d.dir,
        d.run_id,
        d.block_bytes,
        d.unwritten,
        d.verify.line()
    );
    s.push_str(&d.verify.mismatch_lines(20));
    if d.verify.bad() > 0 {
        s.push_str(&format!(
            "{} blocks do not hold what was last written to them\n",
            d.verify.bad()
        ));
    }
    s
}
