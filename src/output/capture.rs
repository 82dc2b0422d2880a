//! The text of `iolab capture`'s summary.

use crate::model::capture::{CaptureSummary, IoDir};
use crate::model::units::human_bytes;

pub fn render(s: &CaptureSummary) -> String {
    let mut t = format!(
        "captured {} ({}) for {:.1} s into {} (stopped by {})\n",
        s.device, s.majmin, s.duration_s, s.file, s.stopped_by
    );
    if let Some(p) = &s.iolog {
        t.push_str(&format!("fio iolog (version 3): {p}\n"));
    }
    t.push_str(&format!(
        "{:<9} {:>10} {:>12} {:>16} {:>16}\n",
        "", "requests", "bytes", "window captured", "device counted"
    ));
    for d in IoDir::ALL {
        let dev = if d == IoDir::Other {
            "-".to_string()
        } else {
            s.check.device.get(d).to_string()
        };
        t.push_str(&format!(
            "{:<9} {:>10} {:>12} {:>16} {:>16}\n",
            d.name(),
            s.ios.get(d),
            human_bytes(s.bytes.get(d) as f64),
            s.check.captured.get(d),
            dev
        ));
    }
    t.push_str(&format!(
        "device counts {} (largest difference {:.2} %); events lost {}; incomplete {}; requeued {}\n",
        if s.check.agree { "agree" } else { "DIFFER" },
        s.check.max_diff_pct,
        s.events_lost,
        s.incomplete,
        s.requeued
    ));
    for w in &s.warnings {
        t.push_str(&format!("warning: {w}\n"));
    }
    t
}
