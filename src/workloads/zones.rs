//! `zones`: sequential read throughput at evenly spaced places of a disk or file (like the
//! "zoned" transfer-rate graphs of disk tools and bonnie++'s `zcav`).
//!
//! A rotating disk packs more sectors into its outer tracks, which are at the start of its
//! address space, so reading the first zones is faster than reading the last ones, often by a
//! factor of 1.5 to 2; an SSD is flat. The target is opened **read-only** and never written.
//!
//! Definitions:
//! * `zones` places, zone *i* starting at `i × (size − per_zone) / (zones − 1)` rounded down to a
//!   multiple of `bs`; the last zone reads on to the end of the target. Zones never overlap:
//!   `per_zone` is rounded down to a multiple of `bs` (at least one block) and clamped to
//!   `size / zones` (rounded down to `bs`), with a note.
//! * Each zone is read sequentially in `bs` blocks with `pread`, with `O_DIRECT` when the target
//!   accepts it, else through the page cache after `posix_fadvise(DONTNEED)` of the zone (noted).
//! * `mib_per_sec`: bytes read in the zone / 2²⁰ / seconds; `lat_ms_mean`: mean time of one
//!   `bs` read, ms; `offset_pct`: zone start / target size × 100.
//! * `first_last_ratio`: MiB/s of the first zone / MiB/s of the last zone ("outer vs inner
//!   tracks"; well above 1 on a rotating disk, about 1 on an SSD).

use crate::engine::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::model::units::{Bytes, human_bytes};
pub use crate::model::zones::*;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// ioctl returning a block device's size in bytes (u64).
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

fn open_ro(target: &Path, direct: bool) -> std::io::Result<File> {
    let mut oo = OpenOptions::new();
    oo.read(true);
    if direct {
        oo.custom_flags(libc::O_DIRECT);
    }
    oo.open(target)
}

fn block_dev_size(f: &File) -> std::io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

/// Reads `zones` zones of `per_zone` bytes spread evenly over `target` in `bs` blocks (see the
/// module documentation). Defaults: 16 zones, 64 MiB per zone, 1 MiB blocks.
pub fn zones(
    target: &Path,
    zones: u32,
    per_zone: u64,
    bs: u64,
    stop: &AtomicBool,
) -> Result<ZonesResult> {
    if zones == 0 {
        return Err(Error::usage("--zones must be at least 1"));
    }
    if bs == 0 || !bs.is_multiple_of(512) {
        return Err(Error::usage(format!(
            "--bs must be a positive multiple of 512 bytes, got {bs}"
        )));
    }
    if per_zone == 0 {
        return Err(Error::usage("--per-zone must be positive"));
    }
    let name = target.display();
    let md = std::fs::metadata(target).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::usage(format!("{name}: no such file or block device"))
        } else {
            Error::usage(format!("{name}: {e}"))
        }
    })?;
    let ft = md.file_type();
    let is_blk = ft.is_block_device();
    if !is_blk && !ft.is_file() {
        return Err(Error::usage(format!(
            "{name}: not a regular file or a block device"
        )));
    }
    let mut notes = Vec::new();
    let mut direct = true;
    let mut f = match open_ro(target, true) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            direct = false;
            notes.push(format!(
                "O_DIRECT refused ({e}): buffered reads, each zone dropped from the page cache first (posix_fadvise DONTNEED; pages dirty in the cache cannot be dropped)"
            ));
            open_ro(target, false).map_err(|e| Error::usage(format!("{name}: {e}")))?
        }
        Err(e) => {
            let hint = if is_blk && e.kind() == std::io::ErrorKind::PermissionDenied {
                " (reading a block device usually needs root or the disk group)"
            } else {
                ""
            };
            return Err(Error::usage(format!("{name}: {e}{hint}")));
        }
    };
    let size = if is_blk {
        block_dev_size(&f)
            .map_err(|e| Error::failed(format!("{name}: BLKGETSIZE64 failed: {e}")))?
    } else {
        md.len()
    };
    let fit = size / zones as u64 / bs * bs;
    if fit == 0 {
        return Err(Error::usage(format!(
            "{name}: {} is too small for {zones} zones of at least one --bs block ({}); use fewer --zones or a smaller --bs",
            Bytes(size),
            Bytes(bs)
        )));
    }
    let mut per = (per_zone / bs * bs).max(bs);
    if per > fit {
        notes.push(format!(
            "--per-zone {} clamped to {}: {zones} zones of it do not fit in {} ({})",
            Bytes(per_zone),
            Bytes(fit),
            name,
            human_bytes(size as f64)
        ));
        per = fit;
    }
    let mut abuf = AlignedBuf::new(bs as usize, 4096, 0x2035);
    let buf = &mut abuf.bytes_mut()[..bs as usize];
    // Some filesystems accept O_DIRECT at open time and refuse the reads.
    if direct && let Err(e) = f.read_at(buf, 0) {
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(Error::failed(format!("{name}: reading failed: {e}")));
        }
        direct = false;
        notes.push(format!(
            "O_DIRECT reads refused ({e}): buffered reads, each zone dropped from the page cache first (posix_fadvise DONTNEED)"
        ));
        f = open_ro(target, false).map_err(|e| Error::usage(format!("{name}: {e}")))?;
    }
    let mut res = ZonesResult {
        target: target.display().to_string(),
        kind: if is_blk {
            "block device"
        } else {
            "regular file"
        }
        .into(),
        size_bytes: size,
        bs_bytes: bs,
        per_zone_bytes: per,
        direct,
        notes,
        zones: Vec::with_capacity(zones as usize),
        first_last_ratio: None,
        interrupted: false,
    };
    let span = (size - per) as u128;
    for i in 0..zones {
        let start = if zones == 1 {
            0
        } else {
            (i as u128 * span / (zones - 1) as u128) as u64 / bs * bs
        };
        let end = if i + 1 == zones { size } else { start + per };
        if !direct {
            // Read-only: nothing to write back; pages dirty in the cache stay (noted above).
            let _ = crate::engine::fileset::drop_cached(
                &f,
                crate::engine::fileset::WriteBack::No,
                start,
                end - start,
            );
        }
        let (mut off, mut reads, mut busy) = (start, 0u64, Duration::ZERO);
        let t0 = Instant::now();
        while off < end {
            if stop.load(Relaxed) {
                res.interrupted = true;
                return Ok(finish(res));
            }
            let t = Instant::now();
            let got = f.read_at(buf, off).map_err(|e| {
                Error::failed(format!(
                    "{name}: reading {} at offset {off} failed: {e}",
                    bs
                ))
            })?;
            busy += t.elapsed();
            reads += 1;
            // A short read only happens at the end of the target.
            off += got as u64;
            if got < buf.len() {
                break;
            }
        }
        let secs = t0.elapsed().as_secs_f64().max(1e-9);
        let bytes = off.min(end) - start;
        res.zones.push(ZoneStat {
            index: i,
            offset_bytes: start,
            offset_pct: start as f64 / size as f64 * 100.0,
            bytes,
            mib_per_sec: bytes as f64 / (1u64 << 20) as f64 / secs,
            lat_ms_mean: busy.as_secs_f64() * 1e3 / reads.max(1) as f64,
        });
    }
    Ok(finish(res))
}

fn finish(mut r: ZonesResult) -> ZonesResult {
    if r.zones.len() >= 2 {
        let (first, last) = (&r.zones[0], &r.zones[r.zones.len() - 1]);
        if last.mib_per_sec > 0.0 {
            r.first_last_ratio = Some(first.mib_per_sec / last.mib_per_sec);
        }
    }
    r
}
