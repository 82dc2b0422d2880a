//! The comparable subset of a report: the settings that describe the setup, flattened, for
//! "what changed" between runs.

use crate::model::env::*;
use std::collections::BTreeMap;

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
