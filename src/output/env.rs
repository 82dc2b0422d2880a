//! `iolab env` as text: the storage system summary a person reads (pt-summary's role).

use crate::model::env::*;

fn gib(b: u64) -> String {
    crate::model::units::human_bytes(b as f64)
}

fn o<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "-".into())
}

/// The readable, sectioned report (like pt-summary).
pub fn render(e: &EnvReport) -> String {
    let mut s = String::new();
    let sec = |s: &mut String, t: &str| {
        s.push_str(&format!(
            "\n# {t} {}\n",
            "#".repeat(60usize.saturating_sub(t.len()))
        ))
    };
    let kv = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:>22} | {v}\n"));
    sec(&mut s, "Platform");
    let p = &e.platform;
    kv(&mut s, "Hostname", p.host.clone());
    kv(&mut s, "Kernel", p.kernel.clone());
    kv(&mut s, "Distribution", o(&p.distribution));
    kv(&mut s, "Architecture", p.arch.clone());
    kv(
        &mut s,
        "Virtualization",
        format!(
            "{} (hypervisor flag: {}{}{})",
            p.virtualization.verdict,
            if p.virtualization.hypervisor_flag {
                "yes"
            } else {
                "no"
            },
            p.virtualization
                .dmi_vendor
                .as_ref()
                .map(|v| format!(", DMI: {v}"))
                .unwrap_or_default(),
            p.virtualization
                .dmi_product
                .as_ref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default()
        ),
    );
    kv(
        &mut s,
        "Uptime",
        p.uptime_s
            .map(|u| format!("{:.1} days", u / 86400.0))
            .unwrap_or_else(|| "-".into()),
    );
    sec(&mut s, "Processor");
    kv(&mut s, "Model", o(&e.cpu.model));
    kv(
        &mut s,
        "Topology",
        format!(
            "{} sockets, {} cores, {} threads",
            e.cpu.sockets, e.cpu.cores, e.cpu.threads
        ),
    );
    kv(
        &mut s,
        "Speed",
        e.cpu
            .mhz
            .map(|m| format!("{m:.0} MHz"))
            .unwrap_or_else(|| "-".into()),
    );
    kv(&mut s, "Caches", e.cpu.caches.join(", "));
    sec(&mut s, "Memory");
    kv(&mut s, "Total", gib(e.memory.total_bytes));
    kv(&mut s, "Available", gib(e.memory.available_bytes));
    kv(
        &mut s,
        "Swap",
        format!(
            "{} ({} free)",
            gib(e.memory.swap_total_bytes),
            gib(e.memory.swap_free_bytes)
        ),
    );
    for d in &e.memory.dimms {
        kv(&mut s, "DIMM", d.clone());
    }
    let k = &e.kernel;
    kv(&mut s, "NUMA nodes", k.numa_nodes.to_string());
    kv(
        &mut s,
        "Transparent hugepages",
        format!("enabled={} defrag={}", o(&k.thp_enabled), o(&k.thp_defrag)),
    );
    kv(
        &mut s,
        "vm.dirty_ratio",
        format!(
            "{} (background {}; bytes {} / {})",
            o(&k.vm_dirty_ratio),
            o(&k.vm_dirty_background_ratio),
            o(&k.vm_dirty_bytes),
            o(&k.vm_dirty_background_bytes)
        ),
    );
    kv(
        &mut s,
        "vm.dirty_expire",
        format!(
            "{} cs (writeback every {} cs)",
            o(&k.vm_dirty_expire_centisecs),
            o(&k.vm_dirty_writeback_centisecs)
        ),
    );
    kv(&mut s, "vm.swappiness", o(&k.vm_swappiness));
    kv(
        &mut s,
        "net.core r/wmem_max",
        format!("{} / {}", o(&k.net_core_rmem_max), o(&k.net_core_wmem_max)),
    );
    kv(
        &mut s,
        "tcp_rmem / tcp_wmem",
        format!("{} / {}", o(&k.net_ipv4_tcp_rmem), o(&k.net_ipv4_tcp_wmem)),
    );
    sec(&mut s, "Block devices");
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "dev",
        "kind",
        "size",
        "model",
        "rot",
        "lbs/pbs",
        "min/opt io",
        "scheduler",
        "nr_req",
        "ra KiB",
        "write cache",
        "max KiB",
        "discard",
        "qd",
    ]);
    for b in &e.block_devices {
        let sched: Vec<String> = b
            .schedulers
            .iter()
            .map(|x| {
                if Some(x) == b.scheduler.as_ref() {
                    format!("[{x}]")
                } else {
                    x.clone()
                }
            })
            .collect();
        t.add_row(vec![
            b.name.clone(),
            if b.lvm { "lvm".into() } else { b.kind.clone() },
            gib(b.size_bytes),
            [b.vendor.clone(), b.model.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" "),
            b.rotational
                .map(|r| if r { "yes" } else { "no" })
                .unwrap_or("-")
                .into(),
            format!("{}/{}", o(&b.logical_block_size), o(&b.physical_block_size)),
            format!("{}/{}", o(&b.minimum_io_size), o(&b.optimal_io_size)),
            sched.join(" "),
            o(&b.nr_requests),
            o(&b.read_ahead_kb),
            o(&b.write_cache),
            o(&b.max_sectors_kb),
            if b.discard { "yes" } else { "no" }.into(),
            o(&b.queue_depth),
        ]);
    }
    s.push_str(&t.to_string());
    s.push('\n');
    for b in &e.block_devices {
        for p in &b.partitions {
            s.push_str(&format!(
                "  {} partition {}: start sector {} ({}), size {}{}\n",
                b.name,
                p.name,
                p.start_sector,
                if p.start_bytes % (1 << 20) == 0 {
                    "1 MiB aligned"
                } else {
                    "not 1 MiB aligned"
                },
                gib(p.size_bytes),
                p.alignment_offset
                    .filter(|&a| a > 0)
                    .map(|a| format!(", alignment_offset {a}"))
                    .unwrap_or_default()
            ));
        }
        if let Some(md) = &b.md {
            s.push_str(&format!(
                "  {} md RAID {}: chunk {} bytes, {} disks: {}\n",
                b.name,
                o(&md.level),
                o(&md.chunk_bytes),
                o(&md.raid_disks),
                md.members.join(" ")
            ));
        }
        if let Some(n) = &b.dm_name {
            s.push_str(&format!(
                "  {} device-mapper {}{} on {}\n",
                b.name,
                n,
                if b.lvm { " (LVM)" } else { "" },
                b.slaves.join(" ")
            ));
        }
        if let Some(f) = &b.loop_backing_file {
            s.push_str(&format!("  {} loop on {}\n", b.name, f));
        }
    }
    if !e.raid_controllers.is_empty() {
        sec(&mut s, "RAID controllers");
        for c in &e.raid_controllers {
            s.push_str(&format!("  {c}\n"));
        }
    }
    sec(&mut s, "Mounted filesystems");
    for m in &e.mounts {
        s.push_str(&format!(
            "  {} on {} type {} ({})\n",
            m.source,
            m.mountpoint,
            m.fstype,
            m.options.join(",")
        ));
    }
    if let Some(ps) = &e.path {
        sec(&mut s, &format!("Storage under {}", ps.path));
        let f = &ps.fs;
        s.push_str(&format!(
            "  {} -> mount {} ({})\n",
            ps.path,
            ps.mountpoint,
            ps.mount_options.join(",")
        ));
        let mut fsd = format!(
            "  filesystem {}: block size {}, {} free of {}",
            f.fstype,
            o(&f.block_size),
            f.free_bytes.map(gib).unwrap_or_else(|| "-".into()),
            f.total_bytes.map(gib).unwrap_or_else(|| "-".into())
        );
        if f.fstype == "xfs" {
            fsd.push_str(&format!(
                ", sunit {} bytes, swidth {} bytes, {}",
                o(&f.xfs_sunit_bytes),
                o(&f.xfs_swidth_bytes),
                o(&f.xfs_inode_mode)
            ));
        }
        if f.ext4_stride_blocks.is_some() || f.ext4_stripe_width_blocks.is_some() {
            fsd.push_str(&format!(
                ", RAID stride {} / stripe width {} blocks",
                o(&f.ext4_stride_blocks),
                o(&f.ext4_stripe_width_blocks)
            ));
        }
        fsd.push_str(if f.barriers {
            ", barriers on"
        } else {
            ", barriers OFF"
        });
        s.push_str(&fsd);
        s.push('\n');
        for l in &ps.stack {
            s.push_str(&format!(
                "  {}-> {} {} {}\n",
                "  ".repeat(l.depth as usize + 1),
                l.kind,
                l.name,
                l.detail
            ));
        }
        s.push_str(&format!(
            "  physical disks: {}\n",
            if ps.physical_disks.is_empty() {
                "-".into()
            } else {
                ps.physical_disks.join(", ")
            }
        ));
    }
    s
}
