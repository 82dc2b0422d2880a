//! The inspect functions of the explain rules that add to a cell's limit ("also": absorbed
//! flushes, a shared device, misalignment, split requests); their entries, thresholds and texts
//! are in [`super::rules::RULES`].

use super::Confidence;
use super::facts::{Facts, Hit, MIN_OPS, fmt_n, hit, shell_word};
use crate::model::units::{Bytes, fmt_ns};

/// Split requests: the device's average read request below this fraction of the block size.
pub const SPLIT_FRACTION: f64 = 0.5;
/// Flushes counted: at least this many fsyncs.
pub const MIN_FSYNCS: u64 = 10;

pub(super) fn absorbed_flush(f: &Facts) -> Option<Hit> {
    let r = &f.cell.results.fsync;
    if r.ops < MIN_FSYNCS {
        return None;
    }
    let p50 = r.lat_ns.as_ref()?.p50;
    let env = f.env?;
    // the physical disks under the path: rotational and write cache of the first
    let phys = env
        .path
        .as_ref()
        .and_then(|p| p.physical_disks.first())
        .and_then(|n| crate::system::env::find(env, n));
    let v = crate::system::fsyncprobe::verdict(
        p50,
        phys.and_then(|b| b.rotational),
        phys.and_then(|b| b.write_cache.as_deref()),
        &env.platform.virtualization.verdict,
        phys.is_some(),
    );
    if v.code != "absorbed" {
        return None;
    }
    hit(
        Confidence::High,
        format!(
            "fsync median {} over {} fsyncs on {}: {}",
            fmt_ns(p50 as f64),
            fmt_n(r.ops as f64),
            phys.map(|b| b.name.as_str()).unwrap_or("?"),
            v.text
        ),
        format!(
            "iolab fsync-probe {}",
            shell_word(&f.cell.job.fileset.dir.to_string_lossy())
        ),
    )
}

pub(super) fn shared_device(f: &Facts) -> Option<Hit> {
    let w = f.cell.warnings.iter().find(|w| w.code == "other_io")?;
    let dev = f.dev.map_or("DEVICE", |d| d.0);
    hit(
        Confidence::High,
        w.message.clone(),
        format!(
            "iolab iostat {dev} -i 1  # who else uses it, live (pidstat -d 1 names the process)"
        ),
    )
}

pub(super) fn misaligned(f: &Facts) -> Option<Hit> {
    // the environment's, said once on the phase
    if f.role.is_some() {
        return None;
    }
    let env = f.env?;
    let ps = env.path.as_ref()?;
    let names: Vec<&str> = ps.stack.iter().map(|l| l.name.as_str()).collect();
    let found: Vec<crate::analysis::check::Finding> = crate::analysis::check::RULES
        .iter()
        .filter(|r| r.id == "partition_misaligned" || r.id == "partition_misaligned_stripe")
        .flat_map(|r| r.findings(env))
        .filter(|x| names.contains(&x.subject.as_str()))
        .collect();
    let first = found.first()?;
    hit(
        Confidence::Medium,
        format!("{} (iolab check: {})", first.evidence, first.id),
        format!("iolab check {}", shell_word(&ps.path)),
    )
}

pub(super) fn split_requests(f: &Facts) -> Option<Hit> {
    let (reads, _) = f.ops();
    // rareq-sz is the average over every role's reads: judged on a role only alone
    if f.role.is_some()
        || !f.direct
        || reads < MIN_OPS
        || f.job.bs_mix.is_some()
        || f.job.bs_range.is_some()
    {
        return None;
    }
    let (name, d) = f.dev?;
    let bs_kb = f.job.bs_bytes as f64 / 1024.0;
    if d.rareq_sz_kb <= 0.0 || d.rareq_sz_kb >= SPLIT_FRACTION * bs_kb {
        return None;
    }
    hit(
        Confidence::Medium,
        format!(
            "device {name} rareq-sz {:.1} KiB vs the workload's {} reads: {:.1} device requests per read ({} r/s for {} IOPS)",
            d.rareq_sz_kb,
            Bytes(f.job.bs_bytes),
            bs_kb / d.rareq_sz_kb,
            fmt_n(d.r_s),
            fmt_n(f.cell.results.read.iops)
        ),
        format!(
            "iolab check {}",
            shell_word(&f.cell.job.fileset.dir.to_string_lossy())
        ),
    )
}
