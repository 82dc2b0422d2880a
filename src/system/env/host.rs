//! The machine: platform (distribution, virtualization, container), CPU, memory, and the kernel
//! settings that matter for storage.

use super::{read, read_u64, tool};
use crate::model::env::*;
use crate::spec::roots::Roots;
use crate::system::procfs;
use std::fs;
use std::path::Path;

pub(super) fn platform(r: &Roots) -> Platform {
    let cpuinfo = read(&r.proc.join("cpuinfo")).unwrap_or_default();
    let flag = cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
    let dmi_vendor = read(&r.sys.join("class/dmi/id/sys_vendor"));
    let dmi_product = read(&r.sys.join("class/dmi/id/product_name"));
    let container = container(r);
    let live = if r.tools {
        tool("systemd-detect-virt", &["--vm"])
            .map(|s| s.trim().to_string())
            .filter(|s| s != "none")
    } else {
        None
    };
    let verdict = if let Some(c) = &container {
        format!("container: {c}")
    } else if let Some(v) = live {
        v
    } else if let Some(v) = dmi_vendor
        .as_deref()
        .and_then(|v| vm_vendor(v, dmi_product.as_deref(), flag))
    {
        v.to_string()
    } else if flag {
        "virtual machine".into()
    } else {
        "none seen".into()
    };
    let os = read(&r.etc.join("os-release")).and_then(|s| {
        s.lines().find_map(|l| {
            l.strip_prefix("PRETTY_NAME=")
                .map(|v| v.trim_matches('"').to_string())
        })
    });
    Platform {
        host: procfs::hostname(&r.proc),
        kernel: procfs::kernel_release(&r.proc),
        distribution: os,
        arch: std::env::consts::ARCH.to_string(),
        virtualization: Virtualization {
            hypervisor_flag: flag,
            dmi_vendor,
            dmi_product,
            container,
            verdict,
        },
        uptime_s: read(&r.proc.join("uptime"))
            .and_then(|s| s.split_whitespace().next()?.parse().ok()),
    }
}

/// A hypervisor named by the DMI vendor. Vendors that also sell hardware (Microsoft, Google,
/// Amazon) count only with the hypervisor CPU flag or a virtual product name.
fn vm_vendor(v: &str, product: Option<&str>, flag: bool) -> Option<&'static str> {
    let l = v.to_lowercase();
    let p = product.unwrap_or("").to_lowercase();
    let virtual_product = p.contains("virtual")
        || p.contains("compute engine")
        || p.contains("hvm")
        || p.contains("kvm");
    let sure = [
        ("qemu", "kvm/qemu"),
        ("vmware", "vmware"),
        ("xen", "xen"),
        ("innotek", "virtualbox"),
        ("bochs", "kvm/qemu"),
        ("red hat", "kvm/qemu"),
    ];
    let maybe = [
        ("microsoft", "hyper-v"),
        ("amazon ec2", "aws"),
        ("google", "gce"),
    ];
    sure.into_iter()
        .find(|(k, _)| l.contains(k))
        .or_else(|| {
            maybe
                .into_iter()
                .find(|(k, _)| l.contains(k) && (flag || virtual_product))
        })
        .map(|(_, v)| v)
}

fn container(r: &Roots) -> Option<String> {
    if let Ok(env) = fs::read(r.proc.join("1/environ")) {
        for kv in env.split(|&b| b == 0) {
            if let Some(v) = kv.strip_prefix(b"container=") {
                return Some(String::from_utf8_lossy(v).into_owned());
            }
        }
    }
    let cg = read(&r.proc.join("1/cgroup")).unwrap_or_default();
    for k in ["kubepods", "docker", "lxc", "libpod"] {
        if cg.contains(k) {
            return Some(
                k.replace("kubepods", "kubernetes")
                    .replace("libpod", "podman"),
            );
        }
    }
    if r.tools && Path::new("/.dockerenv").exists() {
        return Some("docker".into());
    }
    None
}

pub(super) fn cpu(r: &Roots) -> Cpu {
    let info = read(&r.proc.join("cpuinfo")).unwrap_or_default();
    let field = |l: &str| l.split_once(':').map(|(_, v)| v.trim().to_string());
    let mut c = Cpu::default();
    let mut sockets = std::collections::BTreeSet::new();
    let mut cores_per = 0u32;
    for l in info.lines() {
        if l.starts_with("processor") {
            c.threads += 1;
        } else if l.starts_with("model name") && c.model.is_none() {
            c.model = field(l);
        } else if l.starts_with("physical id") {
            sockets.insert(field(l).unwrap_or_default());
        } else if l.starts_with("cpu cores") {
            cores_per = field(l).and_then(|v| v.parse().ok()).unwrap_or(0);
        } else if l.starts_with("cpu MHz") && c.mhz.is_none() {
            c.mhz = field(l).and_then(|v| v.parse().ok());
        }
    }
    c.sockets = (sockets.len() as u32).max(1);
    c.cores = if cores_per > 0 {
        cores_per * c.sockets
    } else {
        c.threads
    };
    let cache = r.sys.join("devices/system/cpu/cpu0/cache");
    if let Ok(rd) = fs::read_dir(&cache) {
        let mut v: Vec<String> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
            .filter_map(|e| {
                let p = e.path();
                let level = read(&p.join("level"))?;
                let ty = read(&p.join("type")).unwrap_or_default();
                let size = read(&p.join("size"))?;
                let t = match ty.as_str() {
                    "Data" => "d",
                    "Instruction" => "i",
                    _ => "",
                };
                Some(format!("L{level}{t} {size}"))
            })
            .collect();
        v.sort();
        c.caches = v;
    }
    c
}

pub(super) fn memory(r: &Roots) -> Memory {
    let mi = procfs::meminfo(&r.proc);
    let mut m = Memory {
        total_bytes: mi.total.unwrap_or(0),
        available_bytes: mi.available.unwrap_or(0),
        swap_total_bytes: mi.swap_total.unwrap_or(0),
        swap_free_bytes: mi.swap_free.unwrap_or(0),
        dimms: Vec::new(),
    };
    if r.tools
        && let Some(out) = tool("dmidecode", &["-t", "memory"])
    {
        m.dimms = parse_dmidecode(&out);
    }
    m
}

/// "Locator: size type speed" per installed DIMM.
pub fn parse_dmidecode(out: &str) -> Vec<String> {
    let mut v = Vec::new();
    for block in out.split("\n\n").filter(|b| b.contains("Memory Device")) {
        let get = |k: &str| {
            block
                .lines()
                .find_map(|l| l.trim().strip_prefix(k).map(|x| x.trim().to_string()))
        };
        let size = get("Size:").unwrap_or_default();
        if size.is_empty() || size.starts_with("No Module") {
            continue;
        }
        v.push(format!(
            "{}: {} {} {}",
            get("Locator:").unwrap_or_default(),
            size,
            get("Type:").unwrap_or_default(),
            get("Speed:").unwrap_or_default()
        ));
    }
    v
}

/// The value in brackets of a sysfs choice list: "always [madvise] never" -> "madvise".
pub fn bracketed(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

pub(super) fn kernel(r: &Roots) -> Kernel {
    let sys = |k: &str| read_u64(&r.proc.join("sys").join(k));
    let nodes = fs::read_dir(r.sys.join("devices/system/node"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_prefix("node")
                        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
                })
                .count() as u32
        })
        .unwrap_or(0);
    let thp = |f: &str| {
        read(&r.sys.join("kernel/mm/transparent_hugepage").join(f)).and_then(|s| bracketed(&s))
    };
    Kernel {
        numa_nodes: nodes.max(1),
        thp_enabled: thp("enabled"),
        thp_defrag: thp("defrag"),
        vm_dirty_ratio: sys("vm/dirty_ratio"),
        vm_dirty_background_ratio: sys("vm/dirty_background_ratio"),
        vm_dirty_bytes: sys("vm/dirty_bytes"),
        vm_dirty_background_bytes: sys("vm/dirty_background_bytes"),
        vm_dirty_expire_centisecs: sys("vm/dirty_expire_centisecs"),
        vm_dirty_writeback_centisecs: sys("vm/dirty_writeback_centisecs"),
        vm_swappiness: sys("vm/swappiness"),
        net_core_rmem_max: sys("net/core/rmem_max"),
        net_core_wmem_max: sys("net/core/wmem_max"),
        net_ipv4_tcp_rmem: read(&r.proc.join("sys/net/ipv4/tcp_rmem"))
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
        net_ipv4_tcp_wmem: read(&r.proc.join("sys/net/ipv4/tcp_wmem"))
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
    }
}
