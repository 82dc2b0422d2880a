//! The restore records: one file per owner (`PID-STARTTIME.json`) in the records folder, written
//! under the folder's lock; an owner's life read from `/proc/PID/stat` and the boot id; the
//! replay of dead owners' records (and of the one record of an earlier iolab).

use super::queue::{DeviceState, PutBack, Saved, failure_lines, put_back, valid_attr, valid_dev};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The environment variable that moves the records folder (tests, unusual layouts).
pub const RECORDS_DIR_ENV: &str = "IOLAB_RESTORE_DIR";

/// Where restore records live: `/var/lib/iolab/restore` as root, else
/// `$XDG_STATE_HOME/iolab/restore`; [`RECORDS_DIR_ENV`] overrides.
pub fn records_dir() -> PathBuf {
    if let Some(p) = std::env::var_os(RECORDS_DIR_ENV).filter(|s| !s.is_empty()) {
        return PathBuf::from(p);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/lib/iolab/restore");
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()))
                .join(".local/state")
        });
    base.join("iolab/restore")
}

/// The process that wrote a record. The start time tells it apart from a later process with the
/// same pid, the boot id from a process of an earlier boot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    /// field 22 of /proc/PID/stat: clock ticks after boot
    pub start: u64,
    /// /proc/sys/kernel/random/boot_id
    pub boot: String,
}

#[derive(Debug, PartialEq)]
pub(super) enum Life {
    Alive,
    Dead,
    EarlierBoot,
}

pub(super) fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The start time of a running process, None when there is none with this pid (or only its
/// zombie, which restores nothing).
pub(super) fn start_time(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces and ')': fields 3 (the
    // state) and after follow the last ')'.
    let mut f = s.rsplit_once(')')?.1.split_whitespace();
    if f.next()? == "Z" {
        return None;
    }
    f.nth(18)?.parse().ok()
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start: start_time(pid).unwrap_or(0),
            boot: boot_id(),
        }
    }

    pub(super) fn file_name(&self) -> String {
        format!("{}-{}.json", self.pid, self.start)
    }

    pub(super) fn life(&self) -> Life {
        if self.boot != boot_id() {
            Life::EarlierBoot
        } else if start_time(self.pid) == Some(self.start) {
            Life::Alive
        } else {
            Life::Dead
        }
    }
}

/// A restore record: whose it is and what it changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub owner: Owner,
    pub devices: Vec<DeviceState>,
}

/// The records folder and the sysfs whose devices its records name.
pub struct Records {
    pub dir: PathBuf,
    pub sys: PathBuf,
}

/// The records folder's lock, held while records are checked, written or replayed; released
/// when dropped (or by the kernel when its holder dies).
pub(super) struct Locked(#[allow(dead_code)] File);

impl Records {
    /// The live records folder and /sys.
    pub fn live() -> Records {
        Records {
            dir: records_dir(),
            sys: PathBuf::from("/sys"),
        }
    }

    /// The folder must be a folder of this user's that nobody else can write to: a record
    /// planted by someone else would be written to sysfs as root.
    fn check_dir(&self) -> std::io::Result<()> {
        let m = std::fs::symlink_metadata(&self.dir)?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if !m.is_dir() || m.uid() != me || m.mode() & 0o022 != 0 {
            return Err(std::io::Error::other(format!(
                "{} is not a folder of uid {me} closed to others",
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// Takes the folder's lock, creating the folder (0700) first when `create`.
    pub(super) fn lock(&self, create: bool) -> std::io::Result<Locked> {
        if create {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)?;
        }
        self.check_dir()?;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(self.dir.join(".lock"))?;
        f.lock()?;
        Ok(Locked(f))
    }

    /// The record files in the folder (`*.json`), each read or with why it could not be.
    pub(super) fn list(&self) -> Vec<(PathBuf, std::result::Result<Record, String>)> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".json") && !n.starts_with('.'))
            })
            .collect();
        v.sort();
        v.into_iter()
            .map(|p| {
                let r = read_record(&p);
                (p, r)
            })
            .collect()
    }

    /// Whether the folder holds any record (without creating or locking anything).
    fn any(&self) -> bool {
        !self.list().is_empty()
    }

    /// Puts back what dead owners left switched and removes their records; returns one line
    /// per device. Records of live owners are left alone (their owners restore them), and so
    /// is a dead owner's device that a live owner has taken since.
    pub fn replay(&self) -> Vec<String> {
        if !self.any() {
            return Vec::new();
        }
        match self.lock(false) {
            Ok(_l) => self.replay_locked(),
            Err(e) => vec![format!(
                "cannot read the restore records in {}: {e}",
                self.dir.display()
            )],
        }
    }

    pub(super) fn replay_locked(&self) -> Vec<String> {
        let recs = self.list();
        let mut lines = Vec::new();
        let taken: Vec<String> = recs
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok())
            .filter(|r| r.owner.life() == Life::Alive)
            .flat_map(|r| r.devices.iter().map(|d| d.dev.clone()))
            .collect();
        for (path, rec) in recs {
            let rec = match rec {
                Ok(r) => r,
                Err(why) => {
                    lines.push(format!("ignored restore record {}: {why}", path.display()));
                    continue;
                }
            };
            let pid = rec.owner.pid;
            let mut left = Vec::new();
            match rec.owner.life() {
                Life::Alive => continue,
                Life::EarlierBoot => lines.push(format!(
                    "the settings iolab (pid {pid}) switched before the last reboot went with it; removed its restore record"
                )),
                Life::Dead => {
                    for d in rec.devices {
                        if taken.contains(&d.dev) {
                            left.push(d);
                            continue;
                        }
                        match put_back(&self.sys, &d) {
                            PutBack::Gone(why) => lines.push(format!(
                                "{why}: nothing to restore of what iolab (pid {pid}) switched"
                            )),
                            PutBack::Done { changed, failed } => {
                                lines.push(format!(
                                    "restored {} as it was before iolab (pid {pid}), which did not finish, switched it: {}",
                                    d.dev,
                                    if changed.is_empty() {
                                        "nothing was left switched".to_string()
                                    } else {
                                        changed.join(", ")
                                    }
                                ));
                                lines.extend(failure_lines(&d.dev, &failed));
                                // kept to try again at the next start, but never what is not
                                // a queue setting
                                let settings: Vec<Saved> = failed
                                    .into_iter()
                                    .map(|f| f.0)
                                    .filter(|s| valid_attr(&s.attr))
                                    .collect();
                                if !settings.is_empty() {
                                    left.push(DeviceState { settings, ..d });
                                }
                            }
                        }
                    }
                }
            }
            let rest = Record {
                owner: rec.owner,
                devices: left,
            };
            if let Err(e) = write_record(&path, &rest) {
                lines.push(format!(
                    "cannot update the restore record {}: {e}",
                    path.display()
                ));
            }
        }
        lines
    }
}

pub(super) fn read_record(path: &Path) -> std::result::Result<Record, String> {
    use std::io::Read;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| e.to_string())?;
    let m = f.metadata().map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions.
    if !m.is_file() || m.uid() != unsafe { libc::geteuid() } {
        return Err("not a regular file of this user's".into());
    }
    let mut s = String::new();
    f.take(1 << 20)
        .read_to_string(&mut s)
        .map_err(|e| e.to_string())?;
    serde_json::from_str(&s).map_err(|e| e.to_string())
}

/// Writes a record whole (a temporary file synced, renamed over it, the folder synced), or
/// removes it when it holds no device.
pub(super) fn write_record(path: &Path, rec: &Record) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if rec.devices.is_empty() {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    } else {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = dir.join(format!(".{name}.tmp"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(
            serde_json::to_string_pretty(rec)
                .map_err(std::io::Error::other)?
                .as_bytes(),
        )?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
    }
    File::open(dir)?.sync_all()
}

/// The pid of a running iolab whose record holds `dev`: a check before anything is created (the
/// binding one is made under the lock when a [`Tuner`] takes the device).
pub fn switching(dev: &str) -> Option<u32> {
    Records::live()
        .list()
        .into_iter()
        .filter_map(|(_, r)| r.ok())
        .find(|r| {
            r.owner != Owner::me()
                && r.devices.iter().any(|d| d.dev == dev)
                && r.owner.life() == Life::Alive
        })
        .map(|r| r.owner.pid)
}

/// Restores what previous, killed iolabs left switched. Returns one line per device.
pub fn replay_pending() -> Vec<String> {
    let r = Records::live();
    let mut lines = r.replay_legacy(&r.dir.with_file_name("restore.json"));
    lines.extend(r.replay());
    lines
}

/// The one record of iolab before per-owner records (`iolab/restore.json` beside the records
/// folder): sysfs paths and their values, and the pid that wrote it.
#[derive(Deserialize)]
struct LegacyRecord {
    pid: u32,
    settings: Vec<LegacySaved>,
}

#[derive(Deserialize)]
struct LegacySaved {
    path: PathBuf,
    original: String,
}

impl Records {
    /// Puts back a record an earlier iolab killed before an upgrade left, when its pid is gone:
    /// only the queue settings it names, newest change first, then removes it.
    pub(super) fn replay_legacy(&self, path: &Path) -> Vec<String> {
        let Ok(s) = std::fs::read_to_string(path) else {
            return Vec::new();
        };
        let Ok(rec) = serde_json::from_str::<LegacyRecord>(&s) else {
            return vec![format!(
                "ignored restore record {}: not iolab's",
                path.display()
            )];
        };
        let Ok(pid) = i32::try_from(rec.pid) else {
            return Vec::new();
        };
        // SAFETY: signal 0 only checks that the process exists (pid > 0: one process).
        if pid <= 0
            || unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
        {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for e in rec.settings.iter().rev() {
            let mut parts = e.path.strip_prefix(self.sys.join("block")).ok().map(|p| {
                p.iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            });
            let Some([dev, q, attr]) = parts.as_deref_mut() else {
                continue;
            };
            if q != "queue" || !valid_dev(dev) || !valid_attr(attr) {
                continue;
            }
            let d = DeviceState {
                dev: dev.clone(),
                diskseq: None,
                settings: vec![Saved {
                    attr: attr.clone(),
                    original: e.original.clone(),
                }],
            };
            if let PutBack::Done { changed, failed } = put_back(&self.sys, &d) {
                lines.extend(changed.iter().map(|c| {
                    format!(
                        "restored {dev} {c} (left switched by iolab pid {}, killed)",
                        rec.pid
                    )
                }));
                lines.extend(failure_lines(dev, &failed));
            }
        }
        let _ = std::fs::remove_file(path);
        lines
    }
}
