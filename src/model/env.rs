//! The environment snapshot (`iolab env`, schema `iolab-env/1`, docs/env.md) that every run
//! embeds: platform, CPU, memory, kernel settings, block devices, mounts and the stack under a
//! path.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Virtualization {
    /// The CPU reports the `hypervisor` flag.
    pub hypervisor_flag: bool,
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
    /// docker, podman, lxc, kubernetes, ... when inside a container
    pub container: Option<String>,
    /// What this adds up to: e.g. "kvm", "vmware", "virtual machine", "container: docker", "none seen"
    pub verdict: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Platform {
    pub host: String,
    pub kernel: String,
    pub distribution: Option<String>,
    pub arch: String,
    pub virtualization: Virtualization,
    pub uptime_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Cpu {
    pub model: Option<String>,
    pub sockets: u32,
    pub cores: u32,
    pub threads: u32,
    pub mhz: Option<f64>,
    /// e.g. "L1d 32K", "L2 512K", "L3 32768K"
    pub caches: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Memory {
    pub total_bytes: u64,
    pub available_bytes: u64,
    pub swap_total_bytes: u64,
    pub swap_free_bytes: u64,
    /// One line per DIMM from dmidecode, when it works (root).
    pub dimms: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Kernel {
    pub numa_nodes: u32,
    /// transparent_hugepage/enabled and defrag, current value
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    pub vm_dirty_ratio: Option<u64>,
    pub vm_dirty_background_ratio: Option<u64>,
    pub vm_dirty_bytes: Option<u64>,
    pub vm_dirty_background_bytes: Option<u64>,
    pub vm_dirty_expire_centisecs: Option<u64>,
    pub vm_dirty_writeback_centisecs: Option<u64>,
    pub vm_swappiness: Option<u64>,
    pub net_core_rmem_max: Option<u64>,
    pub net_core_wmem_max: Option<u64>,
    pub net_ipv4_tcp_rmem: Option<String>,
    pub net_ipv4_tcp_wmem: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Partition {
    pub name: String,
    /// devices built on this partition (md, dm)
    #[serde(default)]
    pub holders: Vec<String>,
    pub start_sector: u64,
    pub start_bytes: u64,
    pub size_bytes: u64,
    pub alignment_offset: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct MdRaid {
    pub level: Option<String>,
    pub chunk_bytes: Option<u64>,
    pub raid_disks: Option<u32>,
    pub members: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct BlockDevice {
    pub name: String,
    /// disk, nvme, virtio, loop, dm, md, zram, ...
    pub kind: String,
    pub size_bytes: u64,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub minimum_io_size: Option<u64>,
    pub optimal_io_size: Option<u64>,
    /// every scheduler offered; `scheduler` is the one in use
    pub schedulers: Vec<String>,
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    pub read_ahead_kb: Option<u64>,
    /// "write back" or "write through"
    pub write_cache: Option<String>,
    /// the device accepts FUA writes (queue/fua)
    pub fua: Option<bool>,
    pub max_sectors_kb: Option<u64>,
    pub discard: bool,
    /// SCSI queue depth (device/queue_depth)
    pub queue_depth: Option<u64>,
    /// blk-mq hardware queues (the entries of /sys/block/X/mq/); absent on a kernel without
    /// blk-mq for the device (one queue) and in documents stored before it was recorded
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_queues: Option<u64>,
    pub partitions: Vec<Partition>,
    /// devices this one is built on (dm, md)
    pub slaves: Vec<String>,
    /// devices built on this one
    pub holders: Vec<String>,
    /// device-mapper name (vg-lv for LVM) and whether it is LVM
    pub dm_name: Option<String>,
    pub lvm: bool,
    pub md: Option<MdRaid>,
    pub loop_backing_file: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Mount {
    pub source: String,
    pub mountpoint: String,
    pub fstype: String,
    /// per-mount and superblock options together
    pub options: Vec<String>,
    /// "major:minor" of the device
    pub dev: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct FsInfo {
    pub fstype: String,
    pub block_size: Option<u64>,
    pub total_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// xfs stripe unit and width in bytes (0 = none)
    pub xfs_sunit_bytes: Option<u64>,
    pub xfs_swidth_bytes: Option<u64>,
    /// xfs: "inode64" or "inode32"
    pub xfs_inode_mode: Option<String>,
    /// ext4 RAID stride and stripe width in filesystem blocks
    pub ext4_stride_blocks: Option<u64>,
    pub ext4_stripe_width_blocks: Option<u64>,
    /// write barriers (cache flushes) on: false with nobarrier / barrier=0
    pub barriers: bool,
}

/// One layer under a path: partition, dm, md, loop or disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Layer {
    pub name: String,
    pub kind: String,
    /// nesting depth: 0 = the device the filesystem is on
    pub depth: u32,
    pub detail: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct PathStack {
    pub path: String,
    pub mountpoint: String,
    pub mount_options: Vec<String>,
    pub fs: FsInfo,
    /// The device the filesystem is on, then what it is built on, down to the physical disks.
    pub stack: Vec<Layer>,
    pub physical_disks: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct EnvReport {
    pub schema: String,
    pub platform: Platform,
    pub cpu: Cpu,
    pub memory: Memory,
    pub kernel: Kernel,
    pub block_devices: Vec<BlockDevice>,
    /// RAID controllers seen on the PCI bus (class 0x0104), with their cache policy when a
    /// vendor tool is installed.
    pub raid_controllers: Vec<String>,
    pub mounts: Vec<Mount>,
    pub path: Option<PathStack>,
    /// The block I/O limits of the cgroups this process is in (its own and their ancestors):
    /// cgroup v1 `blkio.throttle.*_device` and cgroup v2 `io.max`, one entry per device and
    /// limit. Empty when none is set (and in snapshots taken before iolab recorded them).
    #[serde(default)]
    pub cgroup_io: Vec<CgroupIoLimit>,
}

/// One cgroup I/O limit on one device.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CgroupIoLimit {
    /// The file that sets it, e.g. `/sys/fs/cgroup/blkio/db/blkio.throttle.read_iops_device`
    /// or `/sys/fs/cgroup/db.slice/io.max`.
    pub file: String,
    /// 1 (blkio.throttle) or 2 (io.max)
    pub cgroup_version: u32,
    /// "major:minor" of the device
    pub dev: String,
    /// The device's name (`sda`, `loop3`), when /sys/dev/block knows it.
    pub device: Option<String>,
    /// read_iops, write_iops, read_bps or write_bps
    pub kind: String,
    /// I/Os per second, or bytes per second
    pub limit: u64,
}

/// The devices of the stack under a path, top-down, from an env snapshot.
pub fn stack_devices(e: &EnvReport) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    if let Some(ps) = &e.path {
        for n in ps
            .stack
            .iter()
            .map(|l| &l.name)
            .chain(ps.physical_disks.iter())
        {
            if !v.contains(n) {
                v.push(n.clone());
            }
        }
    }
    v
}
