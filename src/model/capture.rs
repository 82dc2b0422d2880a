//! `iolab capture` (docs/capture.md): one block request of a capture file (`CaptureIo`, one
//! NDJSON line each), the file's first line (`CaptureHeader`, schema `iolab-capture/1`) and the
//! summary (`CaptureSummary`, `iolab-capture-summary/1`: printed, and the file's last line).
//! Plain data; the tracking is `measure::capture`, the kernel's side `system::tracefs`.

use serde::{Deserialize, Serialize};

/// What a block request does (the operation of the kernel's `rwbs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IoDir {
    Read,
    Write,
    Discard,
    Flush,
    /// Anything else (write-zeroes, zone commands, secure erase: `N`, `Z...`, `DE`).
    Other,
}

impl IoDir {
    pub const ALL: [IoDir; 5] = [
        IoDir::Read,
        IoDir::Write,
        IoDir::Discard,
        IoDir::Flush,
        IoDir::Other,
    ];
    pub fn name(self) -> &'static str {
        match self {
            IoDir::Read => "read",
            IoDir::Write => "write",
            IoDir::Discard => "discard",
            IoDir::Flush => "flush",
            IoDir::Other => "other",
        }
    }
}

/// What a file is to the database that owns it (`measure::filemap::classify`, by its path).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FileClass {
    /// The write-ahead or redo log: PostgreSQL `pg_wal/`, InnoDB `ib_logfile*` and
    /// `#innodb_redo/`, Aria's `aria_log.*`, binary logs, SQLite's `-wal` and `-journal`.
    Wal,
    /// Tables and indexes: PostgreSQL `base/`, `global/`, `pg_tblspc/`; InnoDB `*.ibd`,
    /// `ibdata*`, undo tablespaces; MyISAM/Aria `.MYD`/`.MYI`/`.MAD`/`.MAI`; SQLite databases.
    Data,
    /// Sorts and temporary tables: `pgsql_tmp`, `ibtmp*`, `#innodb_temp/`, `#sql*`.
    Temp,
    /// Any other file mapped (PostgreSQL's `pg_xact/`, configuration, ...).
    Other,
}

impl FileClass {
    pub const ALL: [FileClass; 4] = [
        FileClass::Wal,
        FileClass::Data,
        FileClass::Temp,
        FileClass::Other,
    ];
    /// The names of a request's classes, by [`FileClass::slot`]: the four, then `unmapped`
    /// (no file mapped there).
    pub const SLOTS: [&'static str; 5] = ["wal", "data", "temp", "other", "unmapped"];
    /// A request's place in [`FileClass::SLOTS`]: its class's, or `unmapped`'s for none.
    pub fn slot(c: Option<FileClass>) -> usize {
        c.map_or(4, |k| k as usize)
    }
    pub fn name(self) -> &'static str {
        match self {
            FileClass::Wal => "wal",
            FileClass::Data => "data",
            FileClass::Temp => "temp",
            FileClass::Other => "other",
        }
    }
}

/// Request counts per direction.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct DirCounts {
    pub read: u64,
    pub write: u64,
    pub discard: u64,
    pub flush: u64,
    pub other: u64,
}

impl DirCounts {
    pub fn add(&mut self, d: IoDir, n: u64) {
        *self.get_mut(d) += n;
    }
    pub fn sub(&mut self, d: IoDir, n: u64) {
        let v = self.get_mut(d);
        *v = v.saturating_sub(n);
    }
    pub fn get(&self, d: IoDir) -> u64 {
        match d {
            IoDir::Read => self.read,
            IoDir::Write => self.write,
            IoDir::Discard => self.discard,
            IoDir::Flush => self.flush,
            IoDir::Other => self.other,
        }
    }
    fn get_mut(&mut self, d: IoDir) -> &mut u64 {
        match d {
            IoDir::Read => &mut self.read,
            IoDir::Write => &mut self.write,
            IoDir::Discard => &mut self.discard,
            IoDir::Flush => &mut self.flush,
            IoDir::Other => &mut self.other,
        }
    }
    pub fn total(&self) -> u64 {
        IoDir::ALL.iter().map(|d| self.get(*d)).sum()
    }
}

/// One block request as the device saw it: a line of the capture file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaptureIo {
    /// When it was issued to the driver, ns after the capture's start.
    pub t_ns: u64,
    pub dir: IoDir,
    /// Its first byte on the whole device (sector × 512).
    pub offset_bytes: u64,
    /// Its length in bytes (0 for a flush).
    pub size_bytes: u64,
    /// `sync`, `fua`, `preflush`, `meta`, `readahead` (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Issue to completion, ns (absent: it had not completed when the capture ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_ns: Option<u64>,
    /// Requests of the device in flight just after this one was issued, itself included.
    pub qd: u32,
    /// The task that issued it to the driver (a kworker for requests dispatched later).
    pub pid: i32,
    pub comm: String,
    /// The completion's error (negative errno; absent: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<i32>,
    /// The class of the file its first byte belongs to (absent: no file mapped there: the
    /// filesystem's journal and metadata, files outside what was mapped, or a `--device` capture).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<FileClass>,
    /// That file: its path under `--dir`, or as the process named it (`--pid`, `--cgroup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The first line of a capture file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaptureHeader {
    /// `iolab-capture/1`.
    pub schema: String,
    pub iolab_version: String,
    /// The whole device captured (`loop3`, `nvme0n1`).
    pub device: String,
    /// Its `major:minor`.
    pub majmin: String,
    /// The capture's start (RFC 3339, UTC): `t_ns` 0.
    pub start: String,
    pub host: String,
    pub kernel: String,
    /// Where the records come from: `tracefs block_rq_issue/block_rq_complete`.
    pub source: String,
}

/// The device's own counts beside the captured ones, over the same window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CountCheck {
    /// Requests the capture saw complete in the window.
    pub captured: DirCounts,
    /// Requests the device counted complete in the window (`/sys/block/DEV/stat`).
    pub device: DirCounts,
    /// The largest difference of a direction, percent of the device's count.
    pub max_diff_pct: f64,
    /// Whether every direction is within 1 %.
    pub agree: bool,
}

/// What `iolab capture` prints (`--json`) and writes as the capture file's last line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaptureSummary {
    /// `iolab-capture-summary/1`.
    pub schema: String,
    pub device: String,
    pub majmin: String,
    /// The capture file.
    pub file: String,
    /// The fio iolog (version 3) written beside it, with `--write-iolog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iolog: Option<String>,
    pub start: String,
    /// The window, seconds.
    pub duration_s: f64,
    /// Requests recorded in the file, by direction.
    pub ios: DirCounts,
    /// Bytes of the recorded requests, by direction.
    pub bytes: DirCounts,
    /// The device's counts beside the captured ones.
    pub check: CountCheck,
    /// Events the kernel's trace buffer lost (overrun, dropped: `per_cpu/cpuN/stats`).
    pub events_lost: u64,
    /// Recorded requests that had not completed when the capture ended (no `lat_ns`).
    pub incomplete: u64,
    /// Completions of requests issued before the capture began (not recorded).
    pub unmatched_completions: u64,
    /// Empty preflush writes (an fsync of the device, a filesystem's flush): never issued to
    /// the driver (their flush request is recorded, `dir` flush) but counted by the device as
    /// writes, so in `check.captured.write` and not in the file.
    pub empty_preflush_writes: u64,
    /// Requests the driver gave back to be issued again (`block_rq_requeue`; each recorded once).
    pub requeued: u64,
    /// Why it ended: `time`, `max_events` or `interrupted`.
    pub stopped_by: String,
    /// Requests recorded, by the class of the file they went to (`unmapped`: no file mapped
    /// there); absent when no file was mapped (`--device`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassCounts>,
    /// Files whose extents were mapped (FIEMAP) to tell each request's file.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub files_mapped: u64,
    /// With `--pid`/`--cgroup`: the device's requests left out of the file (neither to a file
    /// of those processes nor issued by them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: u64,
    /// The database's own counters over the capture (`--url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<DbView>,
    /// One line each: events lost, counts that differ by more than 1 %, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One file class's requests in a capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassCounts {
    /// `wal`, `data`, `temp`, `other` or `unmapped`.
    pub class: String,
    pub ios: DirCounts,
    pub bytes: DirCounts,
}

/// One counter the database keeps, its change over the capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DbCounter {
    /// Where it comes from: `pg_stat_wal.wal_bytes`, `pg_stat_io.writes (client backend,
    /// relation, normal)`, `file_summary_by_instance.wal.bytes_written`.
    pub name: String,
    /// Its value at the end less its value at the start.
    pub delta: f64,
    /// Its unit: `bytes`, `count`, `ms`.
    pub unit: String,
}

/// What the database says it did over the capture (`--url URL`), read at the window's start
/// and end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DbView {
    /// `postgresql` or `mysql`.
    pub engine: String,
    /// The server's version string.
    pub version: String,
    pub counters: Vec<DbCounter>,
    /// Views the server does not have or has off (`pg_stat_io: PostgreSQL 16 and later`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_direction() {
        let mut c = DirCounts::default();
        c.add(IoDir::Read, 3);
        c.add(IoDir::Flush, 1);
        assert_eq!((c.read, c.flush, c.total()), (3, 1, 4));
        let io = CaptureIo {
            t_ns: 5,
            dir: IoDir::Write,
            offset_bytes: 4096,
            size_bytes: 16384,
            flags: vec!["sync".into()],
            lat_ns: Some(10),
            qd: 1,
            pid: 7,
            comm: "fio".into(),
            error: None,
            class: None,
            file: None,
        };
        let s = serde_json::to_string(&io).unwrap();
        assert_eq!(
            s,
            r#"{"t_ns":5,"dir":"write","offset_bytes":4096,"size_bytes":16384,"flags":["sync"],"lat_ns":10,"qd":1,"pid":7,"comm":"fio"}"#
        );
        assert_eq!(serde_json::from_str::<CaptureIo>(&s).unwrap(), io);
    }
}
