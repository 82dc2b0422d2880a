//! `iolab env`: a storage-focused system summary read from /proc, /sys and /etc (and, where they
//! are installed, standard tools; never required). Every reader takes [`Roots`], so tests can feed
//! fixture trees instead of the live system. Schema `iolab-env/1` (docs/env.md).
//!
//! This file reads the whole report ([`collect`]) with the readers every part uses; `host.rs`
//! reads the platform, CPU, memory and kernel settings, `devices.rs` the block devices and RAID
//! controllers, `stack.rs` the mounts and the stack under a path (layers, filesystem), `cgroup.rs`
//! the process's cgroup I/O limits, and `compare.rs` makes the comparable subset of a report.

mod cgroup;
mod compare;
mod devices;
mod host;
mod stack;

pub use cgroup::*;
pub use compare::*;
pub use devices::*;
pub use host::*;
pub use stack::*;

pub use crate::model::env::*;
use std::fs;
use std::path::Path;

pub use crate::spec::roots::Roots;

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
