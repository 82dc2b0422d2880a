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

use crate::error::{Error, Result};
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
enum Life {
    Alive,
    Dead,
    EarlierBoot,
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The start time of a running process, None when there is none with this pid (or only its
/// zombie, which restores nothing).
fn start_time(pid: u32) -> Option<u64> {
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

    fn file_name(&self) -> String {
        format!("{}-{}.json", self.pid, self.start)
    }

    fn life(&self) -> Life {
        if self.boot != boot_id() {
            Life::EarlierBoot
        } else if start_time(self.pid) == Some(self.start) {
            Life::Alive
        } else {
            Life::Dead
        }
    }
}

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

/// A restore record: whose it is and what it changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub owner: Owner,
    pub devices: Vec<DeviceState>,
}

/// Attributes put back after the scheduler and before its tunables: writing `nr_requests`
/// resets mq-deadline's `async_depth`.
const BEFORE_TUNABLES: &[&str] = &["nr_requests"];
/// Attributes put back last: no scheduler switch resets read-ahead; bfq turns write-back
/// throttling off and other schedulers turn it on again.
const AFTER_TUNABLES: &[&str] = &["read_ahead_kb", "wbt_lat_usec"];

fn valid_dev(dev: &str) -> bool {
    !dev.is_empty() && !dev.starts_with('.') && !dev.contains('/')
}

/// Only queue attributes are ever written: a record names nothing else.
fn valid_attr(attr: &str) -> bool {
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
fn current(path: &Path) -> std::io::Result<String> {
    let s = std::fs::read_to_string(path)?;
    let s = s.trim();
    Ok(crate::system::env::bracketed(s).unwrap_or_else(|| s.to_string()))
}

fn write_value(path: &Path, v: &str) -> std::io::Result<()> {
    std::fs::write(path, v)
}

fn queue(sys: &Path, dev: &str) -> PathBuf {
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
enum PutBack {
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
fn put_back(sys: &Path, d: &DeviceState) -> PutBack {
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

fn failure_lines(dev: &str, failed: &[(Saved, String)]) -> Vec<String> {
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

/// The records folder and the sysfs whose devices its records name.
pub struct Records {
    pub dir: PathBuf,
    pub sys: PathBuf,
}

/// The records folder's lock, held while records are checked, written or replayed; released
/// when dropped (or by the kernel when its holder dies).
struct Locked(#[allow(dead_code)] File);

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
    fn lock(&self, create: bool) -> std::io::Result<Locked> {
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
    fn list(&self) -> Vec<(PathBuf, std::result::Result<Record, String>)> {
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

    fn replay_locked(&self) -> Vec<String> {
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

fn read_record(path: &Path) -> std::result::Result<Record, String> {
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
fn write_record(path: &Path, rec: &Record) -> std::io::Result<()> {
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
    fn replay_legacy(&self, path: &Path) -> Vec<String> {
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
mod tests {
    use super::*;

    /// A records folder and a sysfs tree with `sda` under mq-deadline.
    fn fixture() -> (tempfile::TempDir, Records) {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("sys/block/sda/queue");
        std::fs::create_dir_all(q.join("iosched")).unwrap();
        std::fs::write(q.join("scheduler"), "none [mq-deadline] kyber\n").unwrap();
        std::fs::write(q.join("nr_requests"), "77\n").unwrap();
        std::fs::write(q.join("read_ahead_kb"), "128\n").unwrap();
        std::fs::write(q.join("iosched/fifo_batch"), "7\n").unwrap();
        std::fs::write(q.join("iosched/read_expire"), "123\n").unwrap();
        std::fs::write(d.path().join("sys/block/sda/diskseq"), "9\n").unwrap();
        let records = Records {
            dir: d.path().join("records"),
            sys: d.path().join("sys"),
        };
        (d, records)
    }

    fn val(r: &Records, attr: &str) -> String {
        current(&queue(&r.sys, "sda").join(attr)).unwrap()
    }

    /// pid 1 never dies: a record of it is a live owner's.
    fn live_other() -> Owner {
        Owner {
            pid: 1,
            start: start_time(1).unwrap(),
            boot: boot_id(),
        }
    }

    #[test]
    fn the_whole_queue_state_is_recorded_in_restore_order() {
        let (_d, r) = fixture();
        let s = snapshot(&r.sys, "sda").unwrap();
        let attrs: Vec<&str> = s.settings.iter().map(|s| s.attr.as_str()).collect();
        assert_eq!(
            attrs,
            [
                "scheduler",
                "nr_requests",
                "iosched/fifo_batch",
                "iosched/read_expire",
                "read_ahead_kb"
            ]
        );
        assert_eq!(s.settings[0].original, "mq-deadline");
        assert_eq!(s.diskseq.as_deref(), Some("9"));
    }

    #[test]
    fn a_tuner_puts_back_every_value_and_removes_only_its_own_record() {
        let (_d, r) = fixture();
        std::fs::create_dir_all(&r.dir).unwrap();
        let other = r.dir.join(live_other().file_name());
        let theirs = Record {
            owner: live_other(),
            devices: vec![DeviceState {
                dev: "sdb".into(),
                diskseq: None,
                settings: vec![Saved {
                    attr: "scheduler".into(),
                    original: "bfq".into(),
                }],
            }],
        };
        write_record(&other, &theirs).unwrap();
        let sys = r.sys.clone();
        let mut t = Tuner::new(r);
        t.set("sda", "scheduler", "none", "--scheduler").unwrap();
        let mine = t.record_path();
        assert!(mine.exists());
        // what the kernel does on a switch: nr_requests and the tunables reset
        let q = queue(&sys, "sda");
        std::fs::write(q.join("nr_requests"), "256").unwrap();
        std::fs::write(q.join("iosched/fifo_batch"), "16").unwrap();
        assert!(t.restore().is_empty());
        assert_eq!(val(&t.records, "scheduler"), "mq-deadline");
        assert_eq!(val(&t.records, "nr_requests"), "77");
        assert_eq!(val(&t.records, "iosched/fifo_batch"), "7");
        assert!(!mine.exists());
        assert_eq!(
            read_record(&other).unwrap(),
            theirs,
            "another's record untouched"
        );
    }

    #[test]
    fn a_live_owners_device_is_refused_and_its_record_kept() {
        let (_d, r) = fixture();
        std::fs::create_dir_all(&r.dir).unwrap();
        let theirs = Record {
            owner: live_other(),
            devices: vec![snapshot(&r.sys, "sda").unwrap()],
        };
        let path = r.dir.join(theirs.owner.file_name());
        write_record(&path, &theirs).unwrap();
        assert!(r.replay().is_empty());
        let mut t = Tuner::new(r);
        let e = t
            .set("sda", "scheduler", "none", "--scheduler")
            .unwrap_err();
        assert!(e.to_string().contains("another iolab (pid 1)"), "{e}");
        assert!(t.restore().is_empty());
        drop(t);
        assert_eq!(read_record(&path).unwrap(), theirs);
    }

    #[test]
    fn a_dead_owners_record_is_replayed_and_removed() {
        let (_d, r) = fixture();
        std::fs::create_dir_all(&r.dir).unwrap();
        // the pid of this process with another start time: a reused pid
        let dead = Owner {
            start: Owner::me().start + 1,
            ..Owner::me()
        };
        let rec = Record {
            owner: dead.clone(),
            devices: vec![snapshot(&r.sys, "sda").unwrap()],
        };
        let path = r.dir.join(dead.file_name());
        write_record(&path, &rec).unwrap();
        let q = queue(&r.sys, "sda");
        std::fs::write(q.join("scheduler"), "none").unwrap();
        std::fs::write(q.join("iosched/read_expire"), "500").unwrap();
        let lines = r.replay();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("scheduler mq-deadline, iosched/read_expire 123"),
            "{lines:?}"
        );
        assert_eq!(val(&r, "scheduler"), "mq-deadline");
        assert_eq!(val(&r, "iosched/read_expire"), "123");
        assert!(!path.exists());
    }

    #[test]
    fn a_record_of_an_earlier_iolab_is_put_back_once() {
        let (d, r) = fixture();
        let legacy = d.path().join("restore.json");
        let q = queue(&r.sys, "sda");
        // above the kernel's highest pid (PID_MAX_LIMIT, 2^22): no such process
        let rec = serde_json::json!({
            "pid": i32::MAX,
            "settings": [
                {"path": q.join("scheduler"), "original": "kyber"},
                {"path": d.path().join("victim"), "original": "x"},
            ]
        });
        std::fs::write(&legacy, rec.to_string()).unwrap();
        let lines = r.replay_legacy(&legacy);
        assert_eq!(val(&r, "scheduler"), "kyber", "{lines:?}");
        assert!(!d.path().join("victim").exists());
        assert!(!legacy.exists());
    }

    #[test]
    fn a_record_names_only_queue_settings() {
        let (d, r) = fixture();
        std::fs::create_dir_all(&r.dir).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let rec = Record {
            owner: Owner {
                pid: u32::MAX,
                ..Owner::me()
            },
            devices: vec![DeviceState {
                dev: "sda".into(),
                diskseq: None,
                settings: vec![Saved {
                    attr: "../../../../victim".into(),
                    original: "overwritten".into(),
                }],
            }],
        };
        write_record(&r.dir.join("x.json"), &rec).unwrap();
        let lines = r.replay();
        assert!(
            lines.iter().any(|l| l.contains("not a queue setting")),
            "{lines:?}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!r.dir.join("x.json").exists(), "nothing in it to try again");
    }
}
