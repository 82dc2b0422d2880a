//! A device's queue state: read whole before the first change ([`snapshot`]: the scheduler,
//! nr_requests, the scheduler's tunables, read_ahead_kb, wbt_lat_usec) and put back in order,
//! the scheduler first.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One queue attribute and the value it had before iolab's first change.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Saved {
    /// relative to `/sys/block/DEV/queue`: `scheduler`, `nr_requests`, `iosched/fifo_batch`, ...
    pub attr: String,
    pub original: String,
}

/// A device's queue state before iolab's first change, in the order it is put back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceState {
    pub dev: String,
    /// `/sys/block/DEV/diskseq`: a loop device detached and attached again is another device
    pub diskseq: Option<String>,
    pub settings: Vec<Saved>,
}

/// Attributes put back after the scheduler and before its tunables: writing `nr_requests`
/// resets mq-deadline's `async_depth`.
const BEFORE_TUNABLES: &[&str] = &["nr_requests"];
/// Attributes put back last: no scheduler switch resets read-ahead; bfq turns write-back
/// throttling off and other schedulers turn it on again.
const AFTER_TUNABLES: &[&str] = &["read_ahead_kb", "wbt_lat_usec"];

pub(super) fn valid_dev(dev: &str) -> bool {
    !dev.is_empty() && !dev.starts_with('.') && !dev.contains('/')
}

/// Only queue attributes are ever written: a record names nothing else.
pub(super) fn valid_attr(attr: &str) -> bool {
    attr == "scheduler"
        || BEFORE_TUNABLES.contains(&attr)
        || AFTER_TUNABLES.contains(&attr)
        || attr.strip_prefix("iosched/").is_some_and(|t| {
            !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// The value currently in effect: for a choice list like "none [mq-deadline] kyber", the
/// bracketed one.
pub(super) fn current(path: &Path) -> std::io::Result<String> {
    let s = std::fs::read_to_string(path)?;
    let s = s.trim();
    Ok(crate::system::env::bracketed(s).unwrap_or_else(|| s.to_string()))
}

pub(super) fn write_value(path: &Path, v: &str) -> std::io::Result<()> {
    std::fs::write(path, v)
}

pub(super) fn queue(sys: &Path, dev: &str) -> PathBuf {
    sys.join("block").join(dev).join("queue")
}

fn diskseq(sys: &Path, dev: &str) -> Option<String> {
    std::fs::read_to_string(sys.join("block").join(dev).join("diskseq"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Everything of `dev`'s queue that a switch of iolab's may disturb, in the order it is put
/// back: the scheduler, nr_requests, the current scheduler's tunables (`queue/iosched/*`, the
/// writable ones), read_ahead_kb and wbt_lat_usec (those the device has).
pub fn snapshot(sys: &Path, dev: &str) -> std::io::Result<DeviceState> {
    let q = queue(sys, dev);
    let mut settings = vec![Saved {
        attr: "scheduler".into(),
        original: current(&q.join("scheduler"))?,
    }];
    let mut add = |attr: String| {
        if let Ok(original) = current(&q.join(&attr)) {
            settings.push(Saved { attr, original });
        }
    };
    for a in BEFORE_TUNABLES {
        add(a.to_string());
    }
    let mut tunables: Vec<String> = std::fs::read_dir(q.join("iosched"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.metadata()
                .is_ok_and(|m| m.is_file() && m.mode() & 0o200 != 0)
        })
        .filter_map(|e| e.file_name().into_string().ok())
        .map(|n| format!("iosched/{n}"))
        .filter(|a| valid_attr(a))
        .collect();
    tunables.sort();
    for a in tunables {
        add(a);
    }
    for a in AFTER_TUNABLES {
        add(a.to_string());
    }
    Ok(DeviceState {
        dev: dev.to_string(),
        diskseq: diskseq(sys, dev),
        settings,
    })
}

/// What putting a device's state back did.
pub(super) enum PutBack {
    /// the device is gone, or another device has its name now: nothing to put back
    Gone(String),
    /// `changed`: `attr value` of each value written; `failed`: what could not be put back, why
    Done {
        changed: Vec<String>,
        failed: Vec<(Saved, String)>,
    },
}

/// Puts a device's recorded state back in the recorded order (the scheduler first), writing only
/// the values that differ. The scheduler's tunables are skipped when the scheduler could not be
/// put back (they would be another scheduler's).
pub(super) fn put_back(sys: &Path, d: &DeviceState) -> PutBack {
    if !valid_dev(&d.dev) || !sys.join("block").join(&d.dev).exists() {
        return PutBack::Gone(format!("{} is gone", d.dev));
    }
    if d.diskseq.is_some() && diskseq(sys, &d.dev) != d.diskseq {
        return PutBack::Gone(format!(
            "{} is another device now (diskseq {} was {})",
            d.dev,
            diskseq(sys, &d.dev).unwrap_or_default(),
            d.diskseq.as_deref().unwrap_or_default()
        ));
    }
    let q = queue(sys, &d.dev);
    let mut changed = Vec::new();
    let mut failed = Vec::new();
    let mut scheduler_back = true;
    for s in &d.settings {
        if !valid_attr(&s.attr) {
            failed.push((s.clone(), "not a queue setting iolab switches".into()));
            continue;
        }
        if s.attr.starts_with("iosched/") && !scheduler_back {
            failed.push((s.clone(), "the scheduler is not back".into()));
            continue;
        }
        let p = q.join(&s.attr);
        let r = current(&p).and_then(|now| {
            if now == s.original {
                return Ok(false);
            }
            write_value(&p, &s.original)?;
            if s.attr == "scheduler" && current(&p)? != s.original {
                return Err(std::io::Error::other("the device did not switch back"));
            }
            Ok(true)
        });
        match r {
            Ok(true) => changed.push(format!("{} {}", s.attr, s.original)),
            Ok(false) => {}
            Err(e) => {
                if s.attr == "scheduler" {
                    scheduler_back = false;
                }
                failed.push((s.clone(), e.to_string()));
            }
        }
    }
    PutBack::Done { changed, failed }
}

pub(super) fn failure_lines(dev: &str, failed: &[(Saved, String)]) -> Vec<String> {
    failed
        .iter()
        .map(|(s, why)| {
            format!(
                "could not restore {dev} queue/{} to {}: {why}",
                s.attr, s.original
            )
        })
        .collect()
}
