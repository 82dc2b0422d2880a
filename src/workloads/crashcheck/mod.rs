//! `iolab crashcheck`: diskchecker.pl's protocol. A writer puts checksummed records into a
//! preallocated file, syncs each one, and reports it to a journal (a listener on another host, or
//! a file on another device) before writing the next; after a power cut, `verify` reads back
//! every acknowledged record. The record format and the classification are in
//! `model::crashcheck`; the protocol and an example session in docs/verify.md.
//!
//! Protocol (TCP, one line each way, `\n`-terminated; every writer line ends with ` mac=TAG`,
//! the HMAC-SHA256 of the run, the line's index and its text under the run's key, which only
//! the writer and `verify` hold: the listener keeps lines, `verify` authenticates them):
//! ```text
//! writer   -> HELLO iolab-crashcheck/2 run=.. key=FINGERPRINT host=.. bs=.. size=.. sync=.. file=.. mac=..
//! listener <- OK                      (journal created and synced)
//! writer   -> ACK seq offset crc mac=..   (after the record's write + sync returned)
//! listener <- OK                      (line appended to the journal and fdatasync'd)
//! writer   -> FAIL seq offset why mac=..  (the record's write or sync failed: not acknowledged)
//! writer   -> END n mac=..            (the writer stopped on its own after n acknowledgements)
//! verify   -> GET RUN
//! listener <- JOURNAL nbytes, then the journal's bytes    (or ERR why)
//! ```
//!
//! This file holds the sync modes, where the journal is, the documents and the same-device
//! warning; `journal.rs` is the writer's end of the journal and the run key's file, `writer.rs`
//! the writer, `listener.rs` the listener (and fetching a run's journal from it), `verify.rs`
//! reading back every acknowledged record.

mod journal;
mod listener;
mod verify;
mod writer;

pub use journal::*;
pub use listener::*;
pub use verify::*;
pub use writer::*;

use crate::error::{Error, Result};
use crate::measure::peer::{self, Line};
use crate::measure::wake::{SignalWake, Woke};
use crate::model::crashcheck::{
    self as cc, Ack, Block, Class, CrashDoc, Hello, IoFailure, Journal, Problem, RunKey, Stop,
    VerifyOut, WriteOut,
};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How each record is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    Fsync,
    Fdatasync,
    /// O_DSYNC: each write returns once the data is durable
    Dsync,
    /// O_DIRECT | O_DSYNC
    DirectDsync,
}

impl SyncMode {
    pub const NAMES: [&'static str; 4] = ["fsync", "fdatasync", "dsync", "direct-dsync"];
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
    pub fn parse(s: &str) -> Option<SyncMode> {
        Some(match s {
            "fsync" => SyncMode::Fsync,
            "fdatasync" => SyncMode::Fdatasync,
            "dsync" => SyncMode::Dsync,
            "direct-dsync" => SyncMode::DirectDsync,
            _ => return None,
        })
    }
}

/// Where acknowledgements go and where verify reads them.
#[derive(Debug, Clone)]
pub enum JournalAt {
    /// a listener, `HOST:PORT`
    Tcp(String),
    /// a journal file (on another device than the data)
    File(PathBuf),
}

impl JournalAt {
    pub fn describe(&self) -> String {
        match self {
            JournalAt::Tcp(a) => format!("tcp://{a}"),
            JournalAt::File(p) => p.display().to_string(),
        }
    }
}

fn io_err(what: impl std::fmt::Display, e: std::io::Error) -> Error {
    Error::failed(format!("{what}: {e}"))
}

fn errno_text(e: &std::io::Error) -> String {
    let name = match e.raw_os_error() {
        Some(libc::EIO) => "EIO",
        Some(libc::ENOSPC) => "ENOSPC",
        Some(libc::EROFS) => "EROFS",
        Some(libc::EDQUOT) => "EDQUOT",
        Some(libc::EINVAL) => "EINVAL",
        _ => "error",
    };
    let s = e.to_string();
    format!("{name} ({})", s.split(" (os error").next().unwrap_or(&s))
}

/// A document of one phase, filled from the run's HELLO.
pub fn doc(phase: &str, h: &Hello, journal: &JournalAt, warnings: Vec<String>) -> CrashDoc {
    CrashDoc {
        schema: crate::model::schema::CRASHCHECK.into(),
        phase: phase.into(),
        run: h.run.clone(),
        key: Some(h.key.clone()),
        host: h.host.clone(),
        file: h.file.clone(),
        record_bytes: h.record_bytes,
        file_bytes: h.file_bytes,
        sync: h.sync.clone(),
        journal: journal.describe(),
        start_time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        warnings,
        write: None,
        verify: None,
    }
}

/// The warning when the journal would die with the data: a journal file on the data's device,
/// or a listener on this machine.
pub fn same_device_warning(dir: &Path, at: &JournalAt) -> Option<String> {
    match at {
        JournalAt::File(p) => {
            let parent = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let a = std::fs::metadata(dir).ok()?.dev();
            let b = std::fs::metadata(parent).ok()?.dev();
            (a == b).then(|| {
                format!(
                    "the journal {} is on the same device as {}: a power cut or a lying cache would lose it too, and acknowledged records would go unnoticed; put it on another device or use a listener on another host",
                    p.display(),
                    dir.display()
                )
            })
        }
        JournalAt::Tcp(addr) => {
            let local = addr.to_socket_addrs().ok()?.all(|a| a.ip().is_loopback());
            local.then(|| {
                format!(
                    "the listener {addr} is on this machine: fine for kill -9, but a power cut or VM reset takes its journal too unless it is on another device"
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_modes_by_name() {
        for n in SyncMode::NAMES {
            assert_eq!(SyncMode::parse(n).unwrap().name(), n);
        }
        assert!(SyncMode::parse("sync").is_none());
    }
}
