//! Which file a block request went to: each file's class by its path (`classify`), and the
//! device's byte ranges that files own (`ExtentMap`, filled from FIEMAP by `system::filemap`).

use crate::model::capture::FileClass;
use std::collections::{BTreeMap, HashMap};

/// The class of a database file by its path (a path under the mapped folder, or absolute):
/// temporary first (PostgreSQL's `base/pgsql_tmp` is under `base`), then the log, then data.
pub fn classify(path: &str) -> FileClass {
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let Some(&name) = comps.last() else {
        return FileClass::Other;
    };
    let dirs = &comps[..comps.len() - 1];
    let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    let lower = name.to_ascii_lowercase();
    let ends = |exts: &[&str]| exts.iter().any(|e| lower.ends_with(e));
    let starts = |pres: &[&str]| pres.iter().any(|p| lower.starts_with(p));
    if dirs.iter().any(|d| d.starts_with("pgsql_tmp"))
        || in_dir(&["#innodb_temp"])
        || starts(&["pgsql_tmp", "ibtmp", "#sql", "etilqs_"])
    {
        return FileClass::Temp;
    }
    if in_dir(&["pg_wal", "pg_xlog", "#innodb_redo"])
        || starts(&["ib_logfile", "aria_log.", "#ib_redo"])
        || ends(&["-wal", "-journal"])
        || is_binlog(&lower)
    {
        return FileClass::Wal;
    }
    if in_dir(&["base", "global", "pg_tblspc"])
        || starts(&["ibdata", "undo_", "undo0"])
        || ends(&[
            ".ibd", ".myd", ".myi", ".mad", ".mai", ".db", ".sqlite", ".sqlite3",
        ])
    {
        return FileClass::Data;
    }
    FileClass::Other
}

/// A MySQL/MariaDB binary or relay log: `NAME-bin.000001`, `binlog.000001`, `NAME-relay-bin.000001`.
fn is_binlog(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, num)| {
        num.len() >= 6
            && num.bytes().all(|b| b.is_ascii_digit())
            && (stem.ends_with("-bin") || stem == "binlog")
    })
}

/// A file of the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedFile {
    pub path: String,
    pub class: FileClass,
}

/// The device's byte ranges and the file each belongs to, as last mapped: a range mapped again
/// (a file's blocks freed and given to another) belongs to the file that mapped it last, so a
/// request to a file deleted since it was mapped (a finished sort's temporary file) keeps its
/// file.
#[derive(Debug, Default)]
pub struct ExtentMap {
    /// start → (end, file), non-overlapping.
    ranges: BTreeMap<u64, (u64, u32)>,
    files: Vec<MappedFile>,
    ids: HashMap<String, u32>,
}

/// Ranges kept at most (about 40 MB): past it, new extents are not mapped.
pub const MAX_RANGES: usize = 1 << 20;

impl ExtentMap {
    /// The id of the file at `path` (one per path).
    pub fn file(&mut self, path: &str) -> u32 {
        if let Some(&id) = self.ids.get(path) {
            return id;
        }
        let id = self.files.len() as u32;
        self.files.push(MappedFile {
            path: path.to_string(),
            class: classify(path),
        });
        self.ids.insert(path.to_string(), id);
        id
    }

    /// Files known.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    pub fn ranges(&self) -> usize {
        self.ranges.len()
    }

    /// The device's bytes [start, start + len) belong to `file`; false when the map is full.
    pub fn set(&mut self, start: u64, len: u64, file: u32) -> bool {
        if len == 0 {
            return true;
        }
        let end = start.saturating_add(len);
        // the ranges that overlap [start, end): trimmed or removed
        let over: Vec<u64> = self
            .ranges
            .range(..end)
            .rev()
            .take_while(|(_, (e, _))| *e > start)
            .map(|(s, _)| *s)
            .collect();
        for s in over {
            let (e, f) = self.ranges.remove(&s).unwrap_or_default();
            if s < start {
                self.ranges.insert(s, (start, f));
            }
            if e > end {
                self.ranges.insert(end, (e, f));
            }
        }
        if self.ranges.len() >= MAX_RANGES {
            return false;
        }
        self.ranges.insert(start, (end, file));
        true
    }

    /// The file holding the device's byte `off`.
    pub fn lookup(&self, off: u64) -> Option<&MappedFile> {
        let (_, (end, f)) = self.ranges.range(..=off).next_back()?;
        (off < *end).then(|| &self.files[*f as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_files_by_their_paths() {
        for (path, want) in [
            ("pg_wal/000000010000000000000001", FileClass::Wal),
            (
                "/var/lib/postgresql/15/main/pg_wal/00000001000000000000000A",
                FileClass::Wal,
            ),
            ("base/16384/16397", FileClass::Data),
            ("base/16384/16397_fsm", FileClass::Data),
            ("global/1262", FileClass::Data),
            ("base/pgsql_tmp/pgsql_tmp1234.0", FileClass::Temp),
            (
                "pg_tblspc/16400/PG_15_202209061/16384/16401",
                FileClass::Data,
            ),
            ("pg_xact/0000", FileClass::Other),
            ("postgresql.auto.conf", FileClass::Other),
            ("ib_logfile0", FileClass::Wal),
            ("#innodb_redo/#ib_redo10", FileClass::Wal),
            ("aria_log.00000001", FileClass::Wal),
            ("mysql-bin.000003", FileClass::Wal),
            ("binlog.000012", FileClass::Wal),
            ("binlog.index", FileClass::Other),
            ("ibdata1", FileClass::Data),
            ("sbtest/sbtest1.ibd", FileClass::Data),
            ("undo_001", FileClass::Data),
            ("ibtmp1", FileClass::Temp),
            ("#sql-1a2b_3.ibd", FileClass::Temp),
            ("mysql/user.MAD", FileClass::Data),
            ("iolab.db", FileClass::Data),
            ("iolab.db-wal", FileClass::Wal),
            ("iolab.db-journal", FileClass::Wal),
            ("", FileClass::Other),
        ] {
            assert_eq!(classify(path), want, "{path}");
        }
    }

    /// A range mapped again belongs to its last file; the ranges either side of it keep theirs.
    #[test]
    fn the_last_mapping_of_a_range_wins() {
        let mut m = ExtentMap::default();
        let wal = m.file("pg_wal/000000010000000000000001");
        let data = m.file("base/1/2");
        assert_eq!(m.file("base/1/2"), data);
        assert!(m.set(0, 1 << 20, wal));
        assert!(m.set(4 << 20, 1 << 20, data));
        assert_eq!(m.lookup(0).unwrap().class, FileClass::Wal);
        assert_eq!(m.lookup((1 << 20) - 1).unwrap().class, FileClass::Wal);
        assert_eq!(m.lookup(1 << 20), None);
        assert_eq!(m.lookup(4 << 20).unwrap().path, "base/1/2");
        // the WAL file's middle given to the data file
        assert!(m.set(4096, 8192, data));
        assert_eq!(m.lookup(4095).unwrap().class, FileClass::Wal);
        assert_eq!(m.lookup(4096).unwrap().class, FileClass::Data);
        assert_eq!(m.lookup(12287).unwrap().class, FileClass::Data);
        assert_eq!(m.lookup(12288).unwrap().class, FileClass::Wal);
        // a range over several: they are cut at its ends
        assert!(m.set(8192, 5 << 20, wal));
        assert_eq!(m.lookup(4096).unwrap().class, FileClass::Data);
        assert_eq!(m.lookup(8192).unwrap().class, FileClass::Wal);
        assert_eq!(m.lookup((5 << 20) - 1).unwrap().class, FileClass::Wal);
        assert_eq!(m.lookup(5 << 20).unwrap().class, FileClass::Wal);
        assert_eq!(m.lookup((5 << 20) + 8191).unwrap().class, FileClass::Wal);
        assert_eq!(m.lookup((5 << 20) + 8192), None);
        assert_eq!(m.ranges(), 3);
    }
}
