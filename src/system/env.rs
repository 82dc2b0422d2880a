//! `iolab env`: a storage-focused system summary read from /proc, /sys and /etc (and, where they
//! are installed, standard tools; never required). Every reader takes [`Roots`], so tests can feed
//! fixture trees instead of the live system. Schema `iolab-env/1` (docs/env.md).

pub use crate::model::env::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

pub use crate::spec::roots::Roots;
use crate::system::procfs;

fn read(p: &Path) -> Option<String> {
    fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_u64(p: &Path) -> Option<u64> {
    read(p)?.split_whitespace().next()?.parse().ok()
}

fn tool(cmd: &str, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new(cmd)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

fn platform(r: &Roots) -> Platform {
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

fn cpu(r: &Roots) -> Cpu {
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

fn memory(r: &Roots) -> Memory {
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

fn kernel(r: &Roots) -> Kernel {
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

fn block_devices(r: &Roots) -> Vec<BlockDevice> {
    names_in(&r.sys.join("block"))
        .iter()
        .filter_map(|n| block_device(r, n))
        // unused loop and zram devices are noise
        .filter(|b| b.size_bytes > 0)
        .collect()
}

fn raid_controllers(r: &Roots) -> Vec<String> {
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

/// The whole report; `path` adds the stack under it.
pub fn collect(r: &Roots, path: Option<&Path>) -> EnvReport {
    let all = mounts(r);
    let path = path.and_then(|p| path_stack(r, p, &all));
    EnvReport {
        schema: crate::model::schema::ENV.into(),
        platform: platform(r),
        cpu: cpu(r),
        memory: memory(r),
        kernel: kernel(r),
        block_devices: block_devices(r),
        raid_controllers: raid_controllers(r),
        mounts: all
            .into_iter()
            .filter(|m| {
                m.source.starts_with("/dev/")
                    || m.dev.split(':').next().is_some_and(|maj| maj != "0")
            })
            .collect(),
        path,
        cgroup_io: cgroup_io(r),
    }
}

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

/// Fields that change from minute to minute and say nothing about the setup (left out when
/// runs are compared).
pub const VOLATILE: &[&str] = &[
    "platform.uptime_s",
    "memory.available_bytes",
    "memory.swap_free_bytes",
    "path.fs.free_bytes",
    "cpu.mhz",
];

/// The block device record for a name, if present.
pub fn find<'a>(e: &'a EnvReport, name: &str) -> Option<&'a BlockDevice> {
    e.block_devices.iter().find(|b| b.name == name)
}

/// Flattens a JSON object into dotted keys.
pub fn flatten(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        serde_json::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// The settings of a snapshot that describe the setup, flattened (`kernel.vm_dirty_ratio`,
/// `device.vda.scheduler`, `path.mount_options`): what "what changed" compares. Readings that
/// change by themselves (uptime, free memory and space) and devices outside the stack under the
/// path are left out.
pub fn comparable(e: &EnvReport) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut put = |k: &str, v: serde_json::Value| flatten(k, &v, &mut out);
    let p = &e.platform;
    put("platform.kernel", p.kernel.clone().into());
    put(
        "platform.distribution",
        serde_json::to_value(&p.distribution).unwrap_or_default(),
    );
    put(
        "platform.virtualization",
        p.virtualization.verdict.clone().into(),
    );
    put(
        "cpu.model",
        serde_json::to_value(&e.cpu.model).unwrap_or_default(),
    );
    put("cpu.threads", e.cpu.threads.into());
    put("memory.total_bytes", e.memory.total_bytes.into());
    put("memory.swap_total_bytes", e.memory.swap_total_bytes.into());
    put(
        "kernel",
        serde_json::to_value(&e.kernel).unwrap_or_default(),
    );
    if let Some(ps) = &e.path {
        put("path.mountpoint", ps.mountpoint.clone().into());
        put("path.mount_options", ps.mount_options.join(",").into());
        let mut fs = serde_json::to_value(&ps.fs).unwrap_or_default();
        if let Some(o) = fs.as_object_mut() {
            o.remove("free_bytes");
        }
        put("path.fs", fs);
        let layers: Vec<String> = ps
            .stack
            .iter()
            .map(|l| format!("{} {}", l.kind, l.name))
            .collect();
        put("path.stack", layers.join(" > ").into());
        for l in &ps.stack {
            if let Some(b) = find(e, &l.name) {
                let mut v = serde_json::to_value(b).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    for k in ["name", "partitions", "holders"] {
                        o.remove(k);
                    }
                    o.insert("schedulers".into(), b.schedulers.join(" ").into());
                    o.insert("slaves".into(), b.slaves.join(" ").into());
                }
                put(&format!("device.{}", b.name), v);
            }
        }
    }
    out
}
