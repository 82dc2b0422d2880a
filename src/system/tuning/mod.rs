//! Switching block-device settings for experiments (scheduler, read_ahead_kb, nr_requests) and
//! always putting back everything a switch may disturb.
//!
//! Switching the scheduler resets `nr_requests` and starts the new scheduler with default
//! tunables, so before iolab changes anything on a device it records the device's whole queue
//! state ([`snapshot`]: the scheduler, nr_requests, every tunable of the current scheduler under
//! `queue/iosched/`, read_ahead_kb, wbt_lat_usec) and puts all of it back, the scheduler first.
//!
//! A restore record belongs to the process that wrote it: one file per owner,
//! `<pid>-<start time>.json` in the records folder ([`records_dir`]), written under the folder's
//! lock and synced to disk before the first change. The owner puts its settings back when its
//! [`Tuner`] is restored or dropped (normal end, error, Ctrl-C, panic) and removes its own file.
//! Nothing else removes a record but a restorer that has seen its owner dead: the pid gone, a
//! zombie, or reused by a process with another start time (`/proc/PID/stat`), or a record of an
//! earlier boot (whose switches went with that boot). [`replay_pending`] is that restorer at
//! every iolab start (after `kill -9`); a [`Tuner`] also runs it before it takes a device. Two
//! iolabs never switch the same device at once: a device in a live owner's record is refused.
//!
//! `queue.rs` reads a device's queue state and puts it back; `records.rs` keeps the restore
//! records (owners, the folder and its lock, replay); this file is the [`Tuner`] that switches
//! settings with both.

mod queue;
mod records;

pub use queue::*;
pub use records::*;

use crate::error::{Error, Result};
use std::path::PathBuf;

/// Another iolab, `pid`, is switching settings of `dev`.
pub fn refusal(flag: &str, pid: u32, dev: &str) -> Error {
    Error::usage(format!(
        "{flag}: another iolab (pid {pid}) is switching device settings of {dev}; wait for it to finish"
    ))
}

/// Changes settings and restores them when dropped.
pub struct Tuner {
    records: Records,
    owner: Owner,
    /// the devices this tuner took, each with its state before the first change
    devices: Vec<DeviceState>,
}

impl Default for Tuner {
    fn default() -> Self {
        Tuner::with_roots(&crate::system::env::Roots::live())
    }
}

impl Tuner {
    /// A tuner for the devices under `roots.sys`.
    pub fn with_roots(roots: &crate::system::env::Roots) -> Tuner {
        Tuner::new(Records {
            dir: records_dir(),
            sys: roots.sys.clone(),
        })
    }

    pub fn new(records: Records) -> Tuner {
        Tuner {
            records,
            owner: Owner::me(),
            devices: Vec::new(),
        }
    }

    fn record_path(&self) -> PathBuf {
        self.records.dir.join(self.owner.file_name())
    }

    /// Takes `dev`: under the folder's lock, puts back what dead owners left, refuses a device
    /// in a live owner's record, records the device's state in this owner's record.
    fn take(&mut self, dev: &str, flag: &str) -> Result<()> {
        if !valid_dev(dev) {
            return Err(Error::usage(format!(
                "{flag}: '{dev}' is not a block device"
            )));
        }
        let _lock = self.records.lock(true).map_err(|e| {
            Error::failed(format!(
                "{flag}: cannot lock the restore records in {}: {e}",
                self.records.dir.display()
            ))
        })?;
        for line in self.records.replay_locked() {
            eprintln!("iolab: {line}");
        }
        for (_, rec) in self.records.list() {
            let Ok(rec) = rec else { continue };
            if rec.owner != self.owner
                && rec.devices.iter().any(|d| d.dev == dev)
                && rec.owner.life() == Life::Alive
            {
                return Err(refusal(flag, rec.owner.pid, dev));
            }
        }
        let state = snapshot(&self.records.sys, dev).map_err(|e| {
            Error::usage(format!(
                "{flag}: cannot read the queue settings of {dev} under {}: {e}",
                self.records.sys.display()
            ))
        })?;
        self.devices.push(state);
        let rec = Record {
            owner: self.owner.clone(),
            devices: self.devices.clone(),
        };
        write_record(&self.record_path(), &rec).map_err(|e| {
            self.devices.pop();
            Error::failed(format!(
                "{flag}: cannot write the restore record {}: {e}",
                self.record_path().display()
            ))
        })
    }

    /// Sets `attr` (scheduler, read_ahead_kb, nr_requests) of block device `dev` to `value`.
    /// `flag` names the option for error messages.
    pub fn set(&mut self, dev: &str, attr: &str, value: &str, flag: &str) -> Result<()> {
        if !self.devices.iter().any(|d| d.dev == dev) {
            self.take(dev, flag)?;
        }
        let path = queue(&self.records.sys, dev).join(attr);
        let recorded = self
            .devices
            .iter()
            .any(|d| d.dev == dev && d.settings.iter().any(|s| s.attr == attr));
        if !recorded {
            return Err(Error::usage(format!(
                "{flag}: cannot read {}",
                path.display()
            )));
        }
        write_value(&path, value).map_err(|e| {
            let why = match e.raw_os_error() {
                Some(libc::EACCES) | Some(libc::EPERM) => {
                    "permission denied: switching device settings needs root".to_string()
                }
                Some(libc::EINVAL) => format!("the device does not accept '{value}'"),
                _ => e.to_string(),
            };
            Error::usage(format!(
                "{flag} {value}: cannot set {}: {why}",
                path.display()
            ))
        })?;
        if attr == "scheduler" && current(&path).ok().as_deref() != Some(value) {
            return Err(Error::usage(format!(
                "{flag} {value}: {dev} did not switch to it"
            )));
        }
        Ok(())
    }

    /// Puts back the whole recorded state of every device this tuner took, the last taken
    /// first; removes this owner's record, or keeps in it what could not be put back (the next
    /// iolab start tries again). Touches no other record. Returns one line per failure.
    pub fn restore(&mut self) -> Vec<String> {
        if self.devices.is_empty() {
            return Vec::new();
        }
        let mut errs = Vec::new();
        let mut left = Vec::new();
        for d in self.devices.iter().rev() {
            if let PutBack::Done { failed, .. } = put_back(&self.records.sys, d) {
                errs.extend(failure_lines(&d.dev, &failed));
                if !failed.is_empty() {
                    left.insert(
                        0,
                        DeviceState {
                            settings: failed.into_iter().map(|f| f.0).collect(),
                            ..d.clone()
                        },
                    );
                }
            }
        }
        self.devices.clear();
        let rec = Record {
            owner: self.owner.clone(),
            devices: left,
        };
        if let Err(e) = write_record(&self.record_path(), &rec) {
            errs.push(format!(
                "cannot update the restore record {}: {e}",
                self.record_path().display()
            ));
        }
        errs
    }
}

impl Drop for Tuner {
    fn drop(&mut self) {
        for e in self.restore() {
            eprintln!("iolab: {e}");
        }
    }
}

/// The schedulers a device offers.
pub fn schedulers(roots: &crate::system::env::Roots, dev: &str) -> Vec<String> {
    std::fs::read_to_string(roots.sys.join(format!("block/{dev}/queue/scheduler")))
        .map(|s| {
            s.split_whitespace()
                .map(|x| x.trim_matches(|c| c == '[' || c == ']').to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
