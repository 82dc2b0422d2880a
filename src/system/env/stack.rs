//! Mounts and the stack under a path: its mount, filesystem facts, and the layers (partition,
//! dm, md, loop) down to the physical disks.

use super::devices::{block_device, names_in};
use super::tool;
use crate::model::env::*;
use crate::spec::roots::Roots;
use std::fs;
use std::path::Path;

use crate::system::procfs;

/// Mounts from `<proc>/self/mountinfo` ([`procfs::mounts`]).
pub fn mounts(r: &Roots) -> Vec<Mount> {
    procfs::mounts(&r.proc)
}

fn opt_value(opts: &[String], key: &str) -> Option<String> {
    opts.iter()
        .find_map(|o| o.strip_prefix(&format!("{key}=")).map(String::from))
}

/// The block-device name (in /sys/block or a partition) for "major:minor".
fn sys_name(r: &Roots, dev: &str) -> Option<(String, Option<String>)> {
    let real = fs::canonicalize(r.sys.join("dev/block").join(dev)).ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    if real.join("partition").exists() {
        let disk = real.parent()?.file_name()?.to_string_lossy().into_owned();
        Some((disk, Some(name)))
    } else {
        Some((name, None))
    }
}

/// The layers under a block device, top-down, and the physical disks at the bottom.
pub fn stack_of(r: &Roots, dev: &str) -> (Vec<Layer>, Vec<String>) {
    let mut layers = Vec::new();
    let mut phys = Vec::new();
    if let Some((disk, part)) = sys_name(r, dev) {
        let mut depth = 0;
        if let Some(p) = &part {
            let bd = block_device(r, &disk);
            let pi = bd
                .as_ref()
                .and_then(|b| b.partitions.iter().find(|x| &x.name == p).cloned())
                .unwrap_or_default();
            layers.push(Layer {
                name: p.clone(),
                kind: "partition".into(),
                depth,
                detail: format!(
                    "start sector {} ({} bytes), {} bytes",
                    pi.start_sector, pi.start_bytes, pi.size_bytes
                ),
            });
            depth += 1;
        }
        walk(r, &disk, depth, &mut layers, &mut phys);
    }
    phys.sort();
    phys.dedup();
    (layers, phys)
}

fn walk(r: &Roots, name: &str, depth: u32, layers: &mut Vec<Layer>, phys: &mut Vec<String>) {
    let Some(b) = block_device(r, name) else {
        // a partition used as a member (md, dm slaves are often partitions)
        if let Some(disk) = partition_parent(r, name) {
            layers.push(Layer {
                name: name.into(),
                kind: "partition".into(),
                depth,
                detail: String::new(),
            });
            walk(r, &disk, depth + 1, layers, phys);
        }
        return;
    };
    let detail = match (&b.md, &b.dm_name) {
        (Some(md), _) => format!(
            "{} chunk {} bytes, {} disks",
            md.level.clone().unwrap_or_default(),
            md.chunk_bytes.unwrap_or(0),
            md.raid_disks.unwrap_or(0)
        ),
        (None, Some(n)) => format!("{}{}", n, if b.lvm { " (LVM)" } else { "" }),
        _ => format!(
            "{} bytes{}{}",
            b.size_bytes,
            b.model
                .as_ref()
                .map(|m| format!(", {m}"))
                .unwrap_or_default(),
            b.loop_backing_file
                .as_ref()
                .map(|f| format!(", backing file {f}"))
                .unwrap_or_default()
        ),
    };
    let kind = if b.lvm {
        "lvm".to_string()
    } else {
        b.kind.clone()
    };
    layers.push(Layer {
        name: b.name.clone(),
        kind,
        depth,
        detail,
    });
    if b.slaves.is_empty() {
        phys.push(b.name.clone());
    }
    for s in &b.slaves {
        walk(r, s, depth + 1, layers, phys);
    }
}

fn partition_parent(r: &Roots, part: &str) -> Option<String> {
    let block = r.sys.join("block");
    names_in(&block)
        .into_iter()
        .find(|d| block.join(d).join(part).join("partition").exists())
}

/// Filesystem facts for a mount.
fn fs_info(r: &Roots, m: &Mount, path: Option<&Path>) -> FsInfo {
    let mut fi = FsInfo {
        fstype: m.fstype.clone(),
        barriers: true,
        ..Default::default()
    };
    let o = &m.options;
    if o.iter().any(|x| x == "nobarrier" || x == "barrier=0") {
        fi.barriers = false;
    }
    if let Some(p) = path {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) {
            // SAFETY: statvfs fills the zeroed struct.
            let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0 {
                fi.block_size = Some(s.f_bsize);
                fi.total_bytes = Some(s.f_blocks * s.f_frsize);
                fi.free_bytes = Some(s.f_bavail * s.f_frsize);
            }
        }
    }
    match m.fstype.as_str() {
        "xfs" => {
            // mount options give sunit/swidth in 512-byte units
            fi.xfs_sunit_bytes = opt_value(o, "sunit")
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| v * 512);
            fi.xfs_swidth_bytes = opt_value(o, "swidth")
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| v * 512);
            fi.xfs_inode_mode = Some(
                if o.iter().any(|x| x == "inode32") {
                    "inode32"
                } else {
                    "inode64"
                }
                .into(),
            );
            if r.tools
                && fi.xfs_sunit_bytes.is_none()
                && let Some(out) = tool("xfs_info", &[&m.mountpoint])
            {
                let (su, sw, bs) = parse_xfs_info(&out);
                fi.xfs_sunit_bytes = su.zip(bs).map(|(a, b)| a * b);
                fi.xfs_swidth_bytes = sw.zip(bs).map(|(a, b)| a * b);
            }
            fi.xfs_sunit_bytes.get_or_insert(0);
            fi.xfs_swidth_bytes.get_or_insert(0);
        }
        "ext4" | "ext3" | "ext2" => {
            if let Some(s) = opt_value(o, "stripe").and_then(|v| v.parse().ok()) {
                fi.ext4_stripe_width_blocks = Some(s);
            }
            if r.tools
                && m.source.starts_with("/dev/")
                && let Some(out) = tool("tune2fs", &["-l", &m.source])
            {
                for l in out.lines() {
                    if let Some(v) = l.strip_prefix("RAID stride:") {
                        fi.ext4_stride_blocks = v.trim().parse().ok();
                    }
                    if let Some(v) = l.strip_prefix("RAID stripe width:") {
                        fi.ext4_stripe_width_blocks = v.trim().parse().ok();
                    }
                }
            }
        }
        _ => {}
    }
    fi
}

/// (sunit, swidth, bsize) in blocks / bytes from `xfs_info` output.
pub fn parse_xfs_info(out: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
    let num = |key: &str| -> Option<u64> {
        let i = out.find(key)? + key.len();
        out[i..]
            .split(|c: char| !c.is_ascii_digit())
            .find(|s| !s.is_empty())?
            .parse()
            .ok()
    };
    let bsize = out
        .lines()
        .find(|l| l.trim_start().starts_with("data"))
        .and_then(|l| {
            let i = l.find("bsize=")? + 6;
            l[i..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        });
    (num("sunit="), num("swidth="), bsize)
}

/// The stack under `path` given its device "major:minor" (tests pass fixture numbers).
pub fn path_stack_for(r: &Roots, path: &Path, dev: &str, all: &[Mount]) -> Option<PathStack> {
    let p = path.to_string_lossy();
    // A mount point covers the path when it is the path or one of its parent directories.
    let covers = |m: &&Mount| path.starts_with(Path::new(&m.mountpoint));
    let m = all
        .iter()
        .filter(|m| m.dev == dev)
        .filter(covers)
        .max_by_key(|m| m.mountpoint.len())
        .or_else(|| all.iter().filter(covers).max_by_key(|m| m.mountpoint.len()))?
        .clone();
    let live = r.tools.then_some(path);
    let mut fs = fs_info(r, &m, live);
    // The device of the mount we found (the path's own number may be a live one in a fixture).
    let (stack, physical_disks) = stack_of(r, &m.dev);
    if fs.total_bytes.is_none() {
        // without statvfs (fixture trees), the device the filesystem is on gives its size
        fs.total_bytes = stack.first().and_then(|l| find_size(r, &l.name));
    }
    Some(PathStack {
        path: p.into_owned(),
        mountpoint: m.mountpoint.clone(),
        mount_options: m.options.clone(),
        fs,
        stack,
        physical_disks,
    })
}

/// Size in bytes of a whole device or a partition, by name.
fn find_size(r: &Roots, name: &str) -> Option<u64> {
    if let Some(b) = block_device(r, name) {
        return Some(b.size_bytes);
    }
    let disk = partition_parent(r, name)?;
    block_device(r, &disk)?
        .partitions
        .into_iter()
        .find(|x| x.name == name)
        .map(|x| x.size_bytes)
}

/// The live stack under `path`.
pub fn path_stack(r: &Roots, path: &Path, all: &[Mount]) -> Option<PathStack> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let abs = fs::canonicalize(path).ok()?;
    let md = fs::metadata(&abs).ok()?;
    if md.file_type().is_block_device() {
        // A block device path describes that device (its stack and queue settings), not the
        // devtmpfs its node lives on; where it is mounted, that filesystem too.
        let key = format!("{}:{}", libc::major(md.rdev()), libc::minor(md.rdev()));
        let (stack, physical_disks) = stack_of(r, &key);
        let m = all.iter().find(|m| m.dev == key);
        let mut fs = m.map(|m| fs_info(r, m, None)).unwrap_or_default();
        if fs.total_bytes.is_none() {
            fs.total_bytes = stack.first().and_then(|l| find_size(r, &l.name));
        }
        return Some(PathStack {
            path: abs.to_string_lossy().into_owned(),
            mountpoint: m.map(|m| m.mountpoint.clone()).unwrap_or_default(),
            mount_options: m.map(|m| m.options.clone()).unwrap_or_default(),
            fs,
            stack,
            physical_disks,
        });
    }
    let dev = md.dev();
    let key = format!("{}:{}", libc::major(dev), libc::minor(dev));
    path_stack_for(r, &abs, &key, all)
}
