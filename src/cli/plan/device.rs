//! A `--device` target of `plan_run`: checked (what it is, in use, signatures, size) and its
//! range as a file set.

use super::*;

/// A `--device` target, checked: what it is and how big.
pub(super) struct DeviceTarget {
    pub(super) path: PathBuf,
    pub(super) tree: blockdev::DevTree,
    pub(super) size: u64,
    pub(super) lbs: u64,
}

/// Checks `--device` and the flags that cannot go with it, before anything is opened for writing.
pub(super) fn device_target(a: &RunArgs, dev: &Path, engine: EngineKind) -> Result<DeviceTarget> {
    let d = dev.display();
    if a.set.dir != Path::new(DEFAULT_DIR) {
        return Err(Error::usage(format!(
            "--device {d} cannot be used with --dir: a run measures either a block device (--device) or a file set in a directory (--dir); give one of them"
        )));
    }
    if a.set.files.is_some_and(|f| f != 1) {
        return Err(Error::usage(format!(
            "--device {d}: --files does not apply, the device is the one target; leave --files out (--size and --offset choose the range)"
        )));
    }
    if engine.caps().needs_mapping {
        return Err(Error::usage(format!(
            "--device {d} cannot be used with --engine {} (a mapping of a block device measures the page cache); use --engine sync or io_uring",
            engine.name()
        )));
    }
    if a.layout != "overwrite" {
        return Err(Error::usage(format!(
            "--device {d} cannot be used with --layout {}: a layout is what iolab makes of the files of a set in --dir, and a device has no files; leave --layout out",
            a.layout
        )));
    }
    for (set, name) in [
        (a.warm, "--warm"),
        (a.reprepare, "--reprepare"),
        (a.keep, "--keep"),
    ] {
        if set {
            return Err(Error::usage(format!(
                "--device {d}: {name} applies to a file set in --dir, not to a device (nothing is prepared or removed there); leave it out"
            )));
        }
    }
    let sys = crate::system::env::Roots::live().sys;
    let tree = blockdev::tree_of_path(&sys, dev).map_err(|why| {
        Error::usage(format!(
            "--device {d}: {why}; give a block device such as /dev/sdb, /dev/nvme0n1 or /dev/loop0"
        ))
    })?;
    let size = blockdev::size_bytes(dev).map_err(|e| {
        Error::usage(format!(
            "--device {d}: cannot open it ({e}); iolab needs read access to the device (root)"
        ))
    })?;
    let lbs = blockdev::logical_block_size(&sys, &tree);
    Ok(DeviceTarget {
        path: dev.to_path_buf(),
        tree,
        size,
        lbs,
    })
}

/// The range of a device target: `--offset` (aligned) and `--size` (default: to the end),
/// rounded down to whole blocks of `unit`; refused when it does not fit.
pub(super) fn device_spec(a: &RunArgs, t: &DeviceTarget, unit: u64) -> Result<FileSetSpec> {
    let d = t.path.display();
    let off = a.offset.unwrap_or(0);
    if !off.is_multiple_of(t.lbs) {
        return Err(Error::usage(format!(
            "--offset {off} on --device {d}: not a multiple of its logical block size ({} bytes); use a multiple such as {}",
            t.lbs,
            off / t.lbs * t.lbs
        )));
    }
    if off >= t.size {
        return Err(Error::usage(format!(
            "--offset {} on --device {d}: at or beyond its end ({}); use an --offset below {}",
            Bytes(off),
            Bytes(t.size),
            Bytes(t.size)
        )));
    }
    let room = t.size - off;
    let want = a.set.size.unwrap_or(room);
    if want > room {
        return Err(Error::usage(format!(
            "--size {} from --offset {} on --device {d}: beyond its end (the device is {}); use --size {} or less",
            Bytes(want),
            Bytes(off),
            Bytes(t.size),
            Bytes(room)
        )));
    }
    let len = want / unit * unit;
    if len == 0 {
        return Err(Error::usage(format!(
            "--size {} on --device {d}: less than one block of {}; use a larger --size",
            Bytes(want),
            Bytes(unit)
        )));
    }
    Ok(FileSetSpec {
        dir: t.path.clone(),
        files: 1,
        total_bytes: len,
        file_size_bytes: len,
        device: Some(t.path.clone()),
        offset_bytes: Some(off),
        file_len_bytes: None,
        layout: Layout::Overwrite,
        larger_ok: false,
    })
}
