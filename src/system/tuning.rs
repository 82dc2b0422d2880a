//! Switching block-device settings for experiments (scheduler, read_ahead_kb, nr_requests) and
//! always putting them back.
//!
//! Before the first change to a setting, its original value is written to a restore record
//! (`/var/lib/iolab/restore.json` as root, else `$XDG_STATE_HOME/iolab/restore.json`), synced to
//! disk. Settings are restored when the [`Tuner`] is dropped (normal end, error, Ctrl-C, panic);
//! if iolab is killed (`kill -9`, power loss), the next iolab start finds the record and restores
//! it ([`replay_pending`]).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One sysfs value changed by iolab.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Saved {
    pub path: PathBuf,
    pub original: String,
}

/// Where the restore record lives.
pub fn record_path() -> PathBuf {
    if let Some(p) = std::env::var_os("IOLAB_RESTORE_FILE").filter(|s| !s.is_empty()) {
        return PathBuf::from(p);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/lib/iolab/restore.json");
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()))
                .join(".local/state")
        });
    base.join("iolab/restore.json")
}

/// The restore record: who changed what.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// the iolab process that made the changes
    pub pid: u32,
    pub settings: Vec<Saved>,
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid != 0
        && (unsafe { libc::kill(pid as i32, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

fn read_record(path: &Path) -> Option<Record> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn write_record(path: &Path, entries: &[Saved]) -> std::io::Result<()> {
    if entries.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    let rec = Record {
        pid: std::process::id(),
        settings: entries.to_vec(),
    };
    f.write_all(serde_json::to_string_pretty(&rec).expect("json").as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// The value currently in effect: for a choice list like "none [mq-deadline] kyber", the
/// bracketed one.
fn current(path: &Path) -> std::io::Result<String> {
    let s = std::fs::read_to_string(path)?;
    let s = s.trim();
    Ok(crate::system::env::bracketed(s).unwrap_or_else(|| s.to_string()))
}

fn write_value(path: &Path, v: &str) -> std::io::Result<()> {
    std::fs::write(path, v)
}

/// Restores what a previous, killed iolab left changed. Returns one line per restored setting.
pub fn replay_pending() -> Vec<String> {
    let path = record_path();
    let Some(rec) = read_record(&path) else {
        return Vec::new();
    };
    if rec.pid == std::process::id() || alive(rec.pid) {
        // its owner is still running and will restore them itself
        return Vec::new();
    }
    let entries = rec.settings;
    let mut out = Vec::new();
    let mut left = Vec::new();
    for e in entries.iter().rev() {
        match write_value(&e.path, &e.original) {
            Ok(()) => out.push(format!(
                "restored {} to {} (left changed by an iolab that did not finish)",
                e.path.display(),
                e.original
            )),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                out.push(format!("{} is gone; nothing to restore", e.path.display()))
            }
            Err(err) => {
                out.push(format!(
                    "could not restore {} to {}: {err}",
                    e.path.display(),
                    e.original
                ));
                left.push(e.clone());
            }
        }
    }
    let _ = write_record(&path, &left);
    out
}

/// Changes settings and restores them when dropped.
pub struct Tuner {
    record: PathBuf,
    /// sysfs, from the [`Roots`](crate::system::env::Roots) it was made with
    sys: PathBuf,
    saved: Vec<Saved>,
}

impl Default for Tuner {
    fn default() -> Self {
        Tuner::with_roots(&crate::system::env::Roots::live())
    }
}

impl Tuner {
    /// A tuner for the devices under `roots.sys`.
    pub fn with_roots(roots: &crate::system::env::Roots) -> Tuner {
        Tuner {
            record: record_path(),
            sys: roots.sys.clone(),
            saved: Vec::new(),
        }
    }

    /// Sets `attr` (scheduler, read_ahead_kb, nr_requests) of block device `dev` to `value`.
    /// `flag` names the option for error messages.
    pub fn set(&mut self, dev: &str, attr: &str, value: &str, flag: &str) -> Result<()> {
        let path = self.sys.join(format!("block/{dev}/queue/{attr}"));
        if self.saved.is_empty()
            && let Some(rec) = read_record(&self.record)
            && rec.pid != std::process::id()
            && alive(rec.pid)
        {
            return Err(Error::usage(format!(
                "{flag}: another iolab (pid {}) is switching device settings; wait for it to finish",
                rec.pid
            )));
        }
        if !self.saved.iter().any(|s| s.path == path) {
            let original = current(&path).map_err(|e| {
                Error::usage(format!("{flag}: cannot read {}: {e}", path.display()))
            })?;
            self.saved.push(Saved {
                path: path.clone(),
                original,
            });
            write_record(&self.record, &self.saved).map_err(|e| {
                Error::failed(format!(
                    "{flag}: cannot write the restore record {}: {e}",
                    self.record.display()
                ))
            })?;
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

    /// Puts every changed setting back, newest change first; clears the record.
    pub fn restore(&mut self) -> Vec<String> {
        let mut errs = Vec::new();
        for s in self.saved.iter().rev() {
            if let Err(e) = write_value(&s.path, &s.original) {
                errs.push(format!(
                    "could not restore {} to {}: {e}",
                    s.path.display(),
                    s.original
                ));
            }
        }
        if errs.is_empty() {
            self.saved.clear();
            let _ = write_record(&self.record, &self.saved);
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
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_and_an_empty_record_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let rec = d.path().join("state/restore.json");
        let target = d.path().join("setting");
        std::fs::write(&target, "none [mq-deadline] kyber\n").unwrap();
        assert_eq!(current(&target).unwrap(), "mq-deadline");
        let saved = vec![Saved {
            path: target.clone(),
            original: "mq-deadline".into(),
        }];
        write_record(&rec, &saved).unwrap();
        let back = read_record(&rec).unwrap();
        assert_eq!(back.settings, saved);
        assert_eq!(back.pid, std::process::id());
        write_record(&rec, &[]).unwrap();
        assert!(!rec.exists());
    }
}
