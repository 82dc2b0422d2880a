//! Integrity: `PRAGMA quick_check` on opening an SQLite store (a damaged store is refused with
//! exit 2), and the record of a passed check (`<store>.checked`, [`CheckStamp`]) that lets the
//! next command skip it while the file is unchanged.

use super::{SCHEMA_VERSION, Store, damaged, db_err};
use crate::error::Result;
use std::path::{Path, PathBuf};

/// What a passed integrity check saw of the store's files, kept beside the store in
/// `<store>.checked`: device, inode, size, mtime and ctime (ns) of the main file and the size,
/// mtime and ctime of a non-empty `-wal` file. Any write to the store (iolab's own saves, a
/// checkpoint, another program overwriting pages, a truncation) changes one of them, and the next
/// command checks the whole file again. ctime cannot be set back by a user. A write within the
/// same timestamp tick of the file system (a few ms) as the check itself, without a change of
/// size, is the one change it could miss.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct CheckStamp(String);

impl CheckStamp {
    pub(super) fn of(path: &Path) -> Option<CheckStamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        // a fresh, empty -wal is created by every connection: only its content counts
        let w = match std::fs::metadata(PathBuf::from(wal)) {
            Ok(w) if w.len() > 0 => format!(
                "{} {}.{} {}.{}",
                w.len(),
                w.mtime(),
                w.mtime_nsec(),
                w.ctime(),
                w.ctime_nsec()
            ),
            Ok(_) => "empty".into(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "none".into(),
            Err(_) => return None,
        };
        Some(CheckStamp(format!(
            "iolab-store-check/1 schema {SCHEMA_VERSION} main {} {} {} {}.{} {}.{} wal {w}",
            m.dev(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        )))
    }

    fn file(path: &Path) -> PathBuf {
        let mut p = path.as_os_str().to_owned();
        p.push(".checked");
        PathBuf::from(p)
    }

    /// Whether the last passed check recorded exactly this (a regular file of at most 4 KiB,
    /// never read through a symbolic link or from a fifo).
    pub(super) fn recorded(&self, path: &Path) -> bool {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(Self::file(path))
        else {
            return false;
        };
        let mut t = String::new();
        f.metadata().is_ok_and(|m| m.is_file())
            && f.take(4096).read_to_string(&mut t).is_ok()
            && t.trim_end() == self.0
    }

    /// Records a passed check (whole or absent: written aside in a temporary file of an
    /// unpredictable name made with O_EXCL in the store's directory, then renamed over
    /// `<store>.checked`, never written through a link planted there). A store in a directory
    /// iolab cannot write is simply checked every time.
    pub(super) fn record(&self, path: &Path) {
        use std::io::Write;
        let f = Self::file(path);
        let dir = match f.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let prefix = format!(
            "{}.",
            f.file_name()
                .map_or("iolab".into(), |n| n.to_string_lossy())
        );
        let Ok(mut tmp) = tempfile::Builder::new().prefix(&prefix).tempfile_in(dir) else {
            return;
        };
        if tmp.write_all(format!("{}\n", self.0).as_bytes()).is_ok() {
            // an unsaved temporary file is removed when `tmp` is dropped
            let _ = tmp.persist(&f);
        }
    }
}

impl Store {
    /// `PRAGMA quick_check`: every page of every b-tree is read and checked (not the indexes
    /// against their tables), so a damaged store is refused before a benchmark is run into it.
    /// (SQLite only: a PostgreSQL server checks its own pages.)
    pub fn check_integrity(&self) -> Result<()> {
        let Some(c) = self.sqlite() else {
            return Ok(());
        };
        let mut st = c
            .prepare("PRAGMA quick_check(1)")
            .map_err(|e| db_err(&self.path, e))?;
        let first: String =
            st.query_row([], |r| r.get(0))
                .map_err(|e| match e.sqlite_error_code() {
                    Some(rusqlite::ErrorCode::NotADatabase) => damaged(&self.path, &e),
                    _ => db_err(&self.path, e),
                })?;
        if first != "ok" {
            // One line: SQLite puts the database name on a line of its own.
            let why = first
                .lines()
                .filter(|l| !l.starts_with("***"))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(damaged(&self.path, format!("quick_check: {why}")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod checked_tests {
    use super::*;

    /// `<store>.checked` is written aside under an unpredictable name: a symbolic link planted
    /// at the name an older iolab used (`<store>.checked.<pid>`) is never written through.
    #[test]
    fn the_checked_file_is_never_written_through_a_planted_link() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::write(&outside, b"keep").unwrap();
        let store = d.path().join("s.db");
        let planted = d
            .path()
            .join(format!("s.db.checked.{}", std::process::id()));
        std::os::unix::fs::symlink(&outside, &planted).unwrap();
        let stamp = CheckStamp("stamp".into());
        stamp.record(&store);
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(&planted).unwrap().is_symlink());
        assert!(stamp.recorded(&store));
        // a link at `<store>.checked` itself is replaced, never followed
        std::fs::remove_file(CheckStamp::file(&store)).unwrap();
        std::os::unix::fs::symlink(&outside, CheckStamp::file(&store)).unwrap();
        assert!(!stamp.recorded(&store));
        stamp.record(&store);
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
        assert!(stamp.recorded(&store));
    }
}
