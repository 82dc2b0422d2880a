//! The cgroup I/O limits (v1 blkio throttles, v2 `io.max`) that apply to this process.

use super::read;
use crate::model::env::*;
use crate::spec::roots::Roots;
use std::fs;
use std::path::Path;

/// The cgroup I/O limits that apply to this process: for each hierarchy in
/// `/proc/self/cgroup` (v1 `blkio`, v2 the unified one), the limit files of its cgroup and of
/// every ancestor (a parent's limit applies to its children too), below `/sys/fs/cgroup`.
pub fn cgroup_io(r: &Roots) -> Vec<CgroupIoLimit> {
    let own = read(&r.proc.join("self/cgroup")).unwrap_or_default();
    let base = r.sys.join("fs/cgroup");
    let mut out = Vec::new();
    for line in own.lines() {
        let mut it = line.splitn(3, ':');
        let (Some(_), Some(ctrls), Some(path)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        let (version, mount) = if ctrls.split(',').any(|c| c == "blkio") {
            // v1: the blkio hierarchy, alone or co-mounted (blkio,cpu)
            let m = fs::read_dir(&base)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|n| n.split(',').any(|c| c == "blkio"));
            match m {
                Some(m) => (1, base.join(m)),
                None => continue,
            }
        } else if ctrls.is_empty() {
            // v2: unified at /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid system
            if base.join("cgroup.controllers").exists() {
                (2, base.clone())
            } else if base.join("unified/cgroup.controllers").exists() {
                (2, base.join("unified"))
            } else {
                continue;
            }
        } else {
            continue;
        };
        // the process's cgroup, then its ancestors up to the hierarchy's root
        let mut dirs = Vec::new();
        let mut p = Path::new(path.trim());
        loop {
            dirs.push(mount.join(p.strip_prefix("/").unwrap_or(p)));
            match p.parent() {
                Some(q) => p = q,
                None => break,
            }
        }
        for dir in dirs {
            let files: &[(&str, &str)] = if version == 1 {
                &[
                    ("blkio.throttle.read_iops_device", "read_iops"),
                    ("blkio.throttle.write_iops_device", "write_iops"),
                    ("blkio.throttle.read_bps_device", "read_bps"),
                    ("blkio.throttle.write_bps_device", "write_bps"),
                ]
            } else {
                &[("io.max", "")]
            };
            for (name, kind) in files {
                let f = dir.join(name);
                let Some(text) = read(&f) else { continue };
                for l in text.lines() {
                    let mut w = l.split_whitespace();
                    let Some(dev) = w.next() else { continue };
                    let limits: Vec<(String, u64)> = if version == 1 {
                        w.next()
                            .and_then(|v| v.parse().ok())
                            .filter(|&v: &u64| v > 0)
                            .map(|v| vec![(kind.to_string(), v)])
                            .unwrap_or_default()
                    } else {
                        w.filter_map(|kv| {
                            let (k, v) = kv.split_once('=')?;
                            let kind = match k {
                                "riops" => "read_iops",
                                "wiops" => "write_iops",
                                "rbps" => "read_bps",
                                "wbps" => "write_bps",
                                _ => return None,
                            };
                            Some((kind.to_string(), v.parse().ok()?))
                        })
                        .collect()
                    };
                    let device = fs::read_link(r.sys.join("dev/block").join(dev))
                        .ok()
                        .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()));
                    for (kind, limit) in limits {
                        out.push(CgroupIoLimit {
                            file: f.to_string_lossy().into_owned(),
                            cgroup_version: version,
                            dev: dev.to_string(),
                            device: device.clone(),
                            kind,
                            limit,
                        });
                    }
                }
            }
        }
    }
    out
}
