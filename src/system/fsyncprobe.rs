//! `iolab fsync-probe`: does a flush reach stable storage? Write + fsync/fdatasync latency of small
//! writes, alone and while other threads write, judged against what the device could physically do
//! (docs/fsync-probe.md).

use crate::error::{Error, Result};
use crate::measure::hist::LatHist;
use crate::model::run::LatSummary;
use crate::system::env::{EnvReport, find};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The fastest rotating disks spin at 15,000 rpm: one revolution takes 4 ms.
pub const MAX_RPM: f64 = 15_000.0;

/// How far under one revolution at [`MAX_RPM`] (4 ms) a median must be before it is called
/// absorbed: within this share of it, a fast disk's short seeks and writes that land just ahead of
/// the head, and the noise of a few hundred samples, cannot tell a cache from the platter.
pub const CANNOT_TELL_SHARE: f64 = 0.25;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProbeTest {
    pub name: String,
    pub write_bytes: u64,
    /// "fsync" or "fdatasync"
    pub sync: String,
    /// other threads writing (buffered, no sync) meanwhile
    pub background_writers: u32,
    pub n: u64,
    /// latency of write + sync, in ns
    pub lat_ns: LatSummary,
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Verdict {
    /// "stable" (flushes reach stable storage), "absorbed" (a volatile cache acknowledges them),
    /// "unknown" (cannot tell)
    pub code: String,
    pub text: String,
    /// 60 s / median flush latency: the disk speed a real flush at that latency would need
    pub implied_rpm: Option<f64>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProbeReport {
    pub schema: String,
    pub path: String,
    pub device: Option<String>,
    pub rotational: Option<bool>,
    pub write_cache: Option<String>,
    pub virtualization: String,
    pub tests: Vec<ProbeTest>,
    pub verdict: Verdict,
    pub interrupted: bool,
}

/// Judges the median flush latency (write + fdatasync of 4 KiB, alone) against the device.
pub fn verdict(
    p50_ns: u64,
    rotational: Option<bool>,
    write_cache: Option<&str>,
    virt: &str,
    has_device: bool,
) -> Verdict {
    let secs = p50_ns as f64 / 1e9;
    let rpm = (secs > 0.0).then(|| 60.0 / secs);
    let virt_note = if virt != "none seen" {
        format!(
            " This system runs in {virt}: the hypervisor or host may acknowledge flushes from its own cache."
        )
    } else {
        String::new()
    };
    if !has_device {
        return Verdict {
            code: "unknown".into(),
            text: format!(
                "cannot tell: no block device under the path (a memory filesystem?): fsync has nothing to flush.{virt_note}"
            ),
            implied_rpm: rpm,
        };
    }
    // one revolution at the fastest spindle, and how far the median is from it
    let rev_s = 60.0 / MAX_RPM;
    let off_pct = 100.0 * (secs - rev_s) / rev_s;
    let how_close = if off_pct < 0.0 {
        format!("{:.1} % under", -off_pct)
    } else {
        format!("{off_pct:.1} % over")
    };
    match rotational {
        Some(true) if secs < rev_s * (1.0 - CANNOT_TELL_SHARE) => Verdict {
            code: "absorbed".into(),
            text: format!(
                "flushes are absorbed by a volatile cache: the device says it is a rotating disk, but a real flush needs at least about one revolution ({:.0} ms at {MAX_RPM:.0} rpm); a median of {:.3} ms, {how_close} it, would need {:.0} rpm. A write-back cache (controller, disk) or the hypervisor acknowledges them.{virt_note}",
                rev_s * 1e3,
                secs * 1e3,
                rpm.unwrap_or(0.0)
            ),
            implied_rpm: rpm,
        },
        Some(true) if secs < rev_s => Verdict {
            code: "unknown".into(),
            text: format!(
                "cannot tell: a median of {:.3} ms is {how_close} the {:.0} ms of one revolution at {MAX_RPM:.0} rpm, within the {:.0} % where a fast disk's short seeks and this measurement's noise cannot tell a cache from the platter (absorbed under {:.1} ms). A longer run (--count) on a quiet device narrows it.{virt_note}",
                secs * 1e3,
                rev_s * 1e3,
                CANNOT_TELL_SHARE * 100.0,
                rev_s * (1.0 - CANNOT_TELL_SHARE) * 1e3
            ),
            implied_rpm: rpm,
        },
        Some(true) => Verdict {
            code: "stable".into(),
            text: format!(
                "flushes take {:.2} ms (median), {how_close} one revolution at {MAX_RPM:.0} rpm: consistent with a rotating disk writing through at about {:.0} rpm or slower.{virt_note}",
                secs * 1e3,
                rpm.unwrap_or(0.0)
            ),
            implied_rpm: rpm,
        },
        _ => {
            let wt = if write_cache == Some("write through") {
                " The kernel sees a write-through cache and sends no cache flushes: durability rests on the device honouring that."
            } else {
                ""
            };
            Verdict {
                code: "unknown".into(),
                text: format!(
                    "cannot tell: the device is not rotational, so a fast flush ({:.3} ms median) may be real (an SSD with power-loss protection) or a volatile cache acknowledging it.{wt}{virt_note}",
                    secs * 1e3
                ),
                implied_rpm: rpm,
            }
        }
    }
}

struct Cleanup(Vec<PathBuf>);
impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn sync(f: &File, data_only: bool) -> std::io::Result<()> {
    if data_only {
        f.sync_data()
    } else {
        f.sync_all()
    }
}

/// One probe: `n` × (pwrite `size` bytes, then fsync/fdatasync), overwriting a preallocated area.
fn probe(f: &File, size: usize, data_only: bool, n: u64, stop: &AtomicBool) -> Result<LatHist> {
    let buf = vec![0x5au8; size];
    let mut h = LatHist::new();
    let area = 1u64 << 20;
    for i in 0..n {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let off = (i * size as u64) % area;
        let t0 = Instant::now();
        f.write_all_at(&buf, off)
            .and_then(|_| sync(f, data_only))
            .map_err(|e| Error::failed(format!("fsync-probe: {e}")))?;
        h.record(t0.elapsed().as_nanos() as u64);
    }
    Ok(h)
}

/// Runs the probe in `dir`.
pub fn run(
    dir: &Path,
    env: &EnvReport,
    count: u64,
    writers: u32,
    stop: &AtomicBool,
) -> Result<ProbeReport> {
    let pid = std::process::id();
    let probe_path = dir.join(format!(".iolab-fsync-probe-{pid}"));
    let mut cleanup = Cleanup(Vec::new());
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&probe_path)
        .map_err(|e| {
            Error::usage(format!(
                "{}: cannot create a probe file: {e}",
                dir.display()
            ))
        })?;
    // removed again only once made here (a link planted at the name is not iolab's)
    cleanup.0.push(probe_path.clone());
    // Preallocate with real data, so fdatasync has no size or allocation to write.
    (&f).write_all(&vec![0xa5u8; 1 << 20])
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::failed(format!("fsync-probe: {e}")))?;
    let mut tests = Vec::new();
    let mut push = |name: String, size: u64, data_only: bool, writers: u32, h: LatHist| {
        if let Some(lat_ns) = LatSummary::from_hist(&h) {
            tests.push(ProbeTest {
                name,
                write_bytes: size,
                sync: if data_only { "fdatasync" } else { "fsync" }.into(),
                background_writers: writers,
                n: h.count(),
                lat_ns,
            });
        }
    };
    for size in [4096usize, 16384] {
        for data_only in [true, false] {
            let h = probe(&f, size, data_only, count, stop)?;
            push(
                format!(
                    "{} KiB write + {}",
                    size / 1024,
                    if data_only { "fdatasync" } else { "fsync" }
                ),
                size as u64,
                data_only,
                0,
                h,
            );
        }
    }
    // The same while other threads write without syncing (an fsync can wait for
    // unrelated dirty data of the same filesystem).
    if writers > 0 && !stop.load(Ordering::Relaxed) {
        let done = AtomicBool::new(false);
        // Made afresh (O_EXCL, never through a symbolic link planted at the name); only the
        // files made here are removed again.
        let mut files = Vec::new();
        for w in 0..writers {
            let p = dir.join(format!(".iolab-fsync-probe-{pid}-writer{w}"));
            if let Ok(wf) = OpenOptions::new().write(true).create_new(true).open(&p) {
                cleanup.0.push(p);
                files.push(wf);
            }
        }
        let h = std::thread::scope(|s| -> Result<LatHist> {
            for wf in files {
                let done = &done;
                s.spawn(move || {
                    let chunk = vec![0x33u8; 1 << 20];
                    let mut off = 0u64;
                    while !done.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                        if wf.write_all_at(&chunk, off).is_err() {
                            break;
                        }
                        off = (off + chunk.len() as u64) % (256 << 20);
                    }
                });
            }
            std::thread::sleep(Duration::from_millis(300)); // let dirty data build up
            let r = probe(&f, 16384, false, count, stop);
            done.store(true, Ordering::Relaxed);
            r
        })?;
        push(
            format!("16 KiB write + fsync, {writers} other writers"),
            16384,
            false,
            writers,
            h,
        );
    }
    drop(f);
    drop(cleanup);
    let dev = env
        .path
        .as_ref()
        .and_then(|p| p.physical_disks.first())
        .and_then(|n| find(env, n));
    let base = tests.first().map(|t| t.lat_ns.p50).unwrap_or(0);
    let v = &env.platform.virtualization.verdict;
    let verdict = verdict(
        base,
        dev.and_then(|d| d.rotational),
        dev.and_then(|d| d.write_cache.as_deref()),
        v,
        dev.is_some(),
    );
    Ok(ProbeReport {
        schema: crate::model::schema::FSYNC_PROBE.into(),
        path: dir.display().to_string(),
        device: dev.map(|d| d.name.clone()),
        rotational: dev.and_then(|d| d.rotational),
        write_cache: dev.and_then(|d| d.write_cache.clone()),
        virtualization: v.clone(),
        tests,
        verdict,
        interrupted: stop.load(Ordering::Relaxed),
    })
}

pub fn render(r: &ProbeReport) -> String {
    use crate::model::units::fmt_ns;
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec!["test", "n", "min", "p50", "p90", "p99", "max"]);
    for x in &r.tests {
        let l = &x.lat_ns;
        t.add_row(vec![
            x.name.clone(),
            x.n.to_string(),
            fmt_ns(l.min as f64),
            fmt_ns(l.p50 as f64),
            fmt_ns(l.p90 as f64),
            fmt_ns(l.p99 as f64),
            fmt_ns(l.max as f64),
        ]);
    }
    format!(
        "fsync probe in {} (device {}, rotational {}, write cache {}, {})\n{t}\nverdict: {}: {}\n",
        r.path,
        r.device.as_deref().unwrap_or("none"),
        r.rotational
            .map(|x| x.to_string())
            .unwrap_or_else(|| "?".into()),
        r.write_cache.as_deref().unwrap_or("?"),
        r.virtualization,
        r.verdict.code,
        r.verdict.text
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_physics() {
        // 0.2 ms flushes on a "rotating" disk: 300,000 rpm: a cache
        let v = verdict(200_000, Some(true), Some("write back"), "none seen", true);
        assert_eq!(v.code, "absorbed");
        assert!((v.implied_rpm.unwrap() - 300_000.0).abs() < 1.0);
        // 8.3 ms: a 7,200 rpm disk writing through
        let v = verdict(
            8_333_333,
            Some(true),
            Some("write through"),
            "none seen",
            true,
        );
        assert_eq!(v.code, "stable");
        assert!((v.implied_rpm.unwrap() - 7200.0).abs() < 1.0);
        // a hair under 4 ms (3.998): too close to call, and it says how close
        let v = verdict(3_998_000, Some(true), Some("write back"), "none seen", true);
        assert_eq!(v.code, "unknown", "{}", v.text);
        assert!(
            v.text.contains("3.998 ms is 0.1 % under the 4 ms"),
            "{}",
            v.text
        );
        // 2.9 ms: more than 25 % under one revolution: absorbed, and how far under
        let v = verdict(2_900_000, Some(true), Some("write back"), "none seen", true);
        assert_eq!(v.code, "absorbed");
        assert!(v.text.contains("27.5 % under"), "{}", v.text);
        // 3.1 ms: within 25 %: cannot tell
        let v = verdict(3_100_000, Some(true), Some("write back"), "none seen", true);
        assert_eq!(v.code, "unknown");
        // SSD: cannot tell, and a VM is named
        let v = verdict(50_000, Some(false), Some("write back"), "kvm", true);
        assert_eq!(v.code, "unknown");
        assert!(v.text.contains("kvm"));
        assert_eq!(
            verdict(1000, None, None, "none seen", false).code,
            "unknown"
        );
    }
}
