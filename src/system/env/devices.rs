//! The block devices of `/sys/block` (queue settings, partitions, holders and slaves) and the
//! RAID controllers found.

use super::host::bracketed;
use super::{read, read_u64, tool};
use crate::model::env::*;
use crate::spec::roots::Roots;
use std::fs;
use std::path::Path;

pub(crate) fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn kind_of(name: &str, dir: &Path) -> String {
    let k = if name.starts_with("nvme") {
        "nvme"
    } else if name.starts_with("loop") {
        "loop"
    } else if name.starts_with("dm-") {
        "dm"
    } else if name.starts_with("md") {
        "md"
    } else if name.starts_with("zram") {
        "zram"
    } else if name.starts_with("vd") {
        "virtio"
    } else if name.starts_with("xvd") {
        "xen"
    } else if dir.join("device").exists() {
        "disk"
    } else {
        "virtual"
    };
    k.to_string()
}

/// Reads one whole block device from `/sys/block/NAME`.
pub fn block_device(r: &Roots, name: &str) -> Option<BlockDevice> {
    let d = r.sys.join("block").join(name);
    if !d.exists() {
        return None;
    }
    let q = d.join("queue");
    let sched = read(&q.join("scheduler")).unwrap_or_default();
    let schedulers: Vec<String> = sched
        .split_whitespace()
        .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect();
    let mut partitions = Vec::new();
    for p in names_in(&d) {
        let pd = d.join(&p);
        if pd.join("partition").exists() {
            let start = read_u64(&pd.join("start")).unwrap_or(0);
            partitions.push(Partition {
                name: p.clone(),
                holders: names_in(&pd.join("holders")),
                start_sector: start,
                start_bytes: start * 512,
                size_bytes: read_u64(&pd.join("size")).unwrap_or(0) * 512,
                alignment_offset: read_u64(&pd.join("alignment_offset")),
            });
        }
    }
    let dm_name = read(&d.join("dm/name"));
    let lvm = read(&d.join("dm/uuid")).is_some_and(|u| u.starts_with("LVM-"));
    let slaves = names_in(&d.join("slaves"));
    let md = d.join("md").exists().then(|| MdRaid {
        level: read(&d.join("md/level")),
        chunk_bytes: read_u64(&d.join("md/chunk_size")),
        raid_disks: read_u64(&d.join("md/raid_disks")).map(|x| x as u32),
        members: slaves.clone(),
    });
    Some(BlockDevice {
        name: name.to_string(),
        kind: kind_of(name, &d),
        size_bytes: read_u64(&d.join("size")).unwrap_or(0) * 512,
        model: read(&d.join("device/model")),
        vendor: read(&d.join("device/vendor")),
        rotational: read(&q.join("rotational")).map(|s| s == "1"),
        logical_block_size: read_u64(&q.join("logical_block_size")),
        physical_block_size: read_u64(&q.join("physical_block_size")),
        minimum_io_size: read_u64(&q.join("minimum_io_size")),
        optimal_io_size: read_u64(&q.join("optimal_io_size")),
        scheduler: bracketed(&sched)
            .or_else(|| (schedulers.len() == 1).then(|| schedulers[0].clone())),
        schedulers,
        nr_requests: read_u64(&q.join("nr_requests")),
        read_ahead_kb: read_u64(&q.join("read_ahead_kb")),
        write_cache: read(&q.join("write_cache")),
        fua: read(&q.join("fua")).map(|s| s == "1"),
        max_sectors_kb: read_u64(&q.join("max_sectors_kb")),
        discard: read_u64(&q.join("discard_max_bytes")).unwrap_or(0) > 0,
        queue_depth: read_u64(&d.join("device/queue_depth")),
        hw_queues: d.join("mq").is_dir().then(|| {
            names_in(&d.join("mq"))
                .iter()
                .filter(|n| n.parse::<u32>().is_ok())
                .count() as u64
        }),
        partitions,
        slaves,
        holders: names_in(&d.join("holders")),
        dm_name,
        lvm,
        md,
        loop_backing_file: read(&d.join("loop/backing_file")),
    })
}

pub(super) fn block_devices(r: &Roots) -> Vec<BlockDevice> {
    names_in(&r.sys.join("block"))
        .iter()
        .filter_map(|n| block_device(r, n))
        // unused loop and zram devices are noise
        .filter(|b| b.size_bytes > 0)
        .collect()
}

pub(super) fn raid_controllers(r: &Roots) -> Vec<String> {
    let mut v = Vec::new();
    let pci = r.sys.join("bus/pci/devices");
    for dev in names_in(&pci) {
        let p = pci.join(&dev);
        if read(&p.join("class")).is_some_and(|c| c.starts_with("0x0104")) {
            let ids = format!(
                "{}:{}",
                read(&p.join("vendor")).unwrap_or_default(),
                read(&p.join("device")).unwrap_or_default()
            );
            let name = if r.tools {
                tool("lspci", &["-s", &dev]).map(|s| s.trim().to_string())
            } else {
                None
            };
            v.push(name.unwrap_or_else(|| format!("{dev} RAID controller {ids}")));
        }
    }
    if r.tools && !v.is_empty() {
        for (t, args) in [
            ("storcli64", vec!["/call", "show", "all"]),
            ("storcli", vec!["/call", "show", "all"]),
            ("perccli64", vec!["/call", "show", "all"]),
            ("megacli", vec!["-LDInfo", "-Lall", "-aALL"]),
        ] {
            if let Some(out) = tool(t, &args) {
                for l in out
                    .lines()
                    .filter(|l| l.to_lowercase().contains("cache"))
                    .take(8)
                {
                    v.push(format!("{t}: {}", l.trim()));
                }
                break;
            }
        }
    }
    v
}
