//! The results store: every run kept with its exact settings, in one SQLite file.
//!
//! Layout (docs/store.md): `runs` holds one row per run with the JSON document exactly as
//! `iolab run --json` printed it (or the normalized import) and its environment; `metrics` one row
//! per run × cell × operation type for listing and comparing; `histograms` the merged latency
//! histograms (HdrHistogram V2 + deflate) so percentiles can be recomputed and histograms merged;
//! `tags`; `groups` ties the runs of `--repeat N` together.
//!
//! The file is marked with SQLite's `application_id` and its schema version in `user_version`;
//! older versions are migrated in place, newer ones refused. WAL mode and a busy timeout let
//! several iolab processes save at once. Each run is saved in one transaction.

pub mod compare;
pub mod import;

use crate::error::{Error, Result};
use crate::measure::hist::LatHist;
use crate::measure::stats::OpKind;
use crate::model::run::RunDoc;
use crate::store::import::Imported;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::path::{Path, PathBuf};

/// "iolb"
pub const APP_ID: i64 = 0x696f_6c62;
/// Current schema version.
pub const SCHEMA_VERSION: i64 = 4;

/// Migration i takes a store from version i to i + 1.
const MIGRATIONS: [&str; 4] = [
    // v1: runs, their tags and summary metrics
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        tool TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        start_time TEXT NOT NULL,
        end_time TEXT,
        host TEXT NOT NULL,
        label TEXT,
        modes TEXT NOT NULL,
        interrupted INTEGER NOT NULL DEFAULT 0,
        doc TEXT NOT NULL,
        env TEXT
    );
    CREATE TABLE tags (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        cell INTEGER NOT NULL,
        mode TEXT NOT NULL,
        op TEXT NOT NULL,
        threads INTEGER,
        bs_bytes INTEGER,
        ops INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        iops REAL NOT NULL,
        bytes_per_sec REAL NOT NULL,
        lat_min_ns REAL, lat_mean_ns REAL, lat_max_ns REAL, lat_stddev_ns REAL,
        lat_p50_ns REAL, lat_p90_ns REAL, lat_p95_ns REAL, lat_p99_ns REAL,
        lat_p99_9_ns REAL, lat_p99_99_ns REAL,
        PRIMARY KEY (run_id, cell, op)
    );",
    // v2: repetition groups and serialized histograms
    "CREATE TABLE groups (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        created TEXT NOT NULL,
        label TEXT,
        repeat INTEGER NOT NULL
    );
    ALTER TABLE runs ADD COLUMN group_id INTEGER REFERENCES groups(id);
    ALTER TABLE runs ADD COLUMN seq INTEGER;
    CREATE TABLE histograms (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        cell INTEGER NOT NULL,
        op TEXT NOT NULL,
        hdr BLOB NOT NULL,
        PRIMARY KEY (run_id, cell, op)
    );
    CREATE INDEX runs_start ON runs(start_time);",
    // v3: experiments (sweeps, saturation searches): the group's definition and each run's cell
    "ALTER TABLE groups ADD COLUMN spec TEXT;
    ALTER TABLE runs ADD COLUMN cell TEXT;",
    // v4: concurrent roles (`iolab run --role`): the role a metrics row measures (NULL: none)
    "ALTER TABLE metrics ADD COLUMN role TEXT;",
];

/// Where the store lives: `--db`, else `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/results.db`,
/// else `~/.local/share/iolab/results.db`.
pub fn resolve_path(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("IOLAB_DB").filter(|s| !s.is_empty()) {
        return PathBuf::from(p);
    }
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
                .join(".local/share")
        });
    base.join("iolab/results.db")
}

/// Where a document that could not be saved in `store` is kept, in the order tried:
/// `$XDG_STATE_HOME/iolab/unsaved` (else `~/.local/state/iolab/unsaved`), `<store>.unsaved`
/// beside the store, then `iolab-unsaved` in the temporary directory.
pub fn unsaved_dirs(store: &Path) -> Vec<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|s| !s.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        });
    let mut beside = store.as_os_str().to_owned();
    beside.push(".unsaved");
    state
        .map(|s| s.join("iolab/unsaved"))
        .into_iter()
        .chain([
            PathBuf::from(beside),
            std::env::temp_dir().join("iolab-unsaved"),
        ])
        .collect()
}

/// Summary metrics of one run × cell × op, as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricRow {
    pub run_id: i64,
    pub cell: i64,
    pub mode: String,
    /// The role of a run with concurrent roles (`--role`); None otherwise.
    pub role: Option<String>,
    pub op: String,
    pub threads: Option<i64>,
    pub bs_bytes: Option<i64>,
    pub ops: i64,
    pub bytes: i64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub lat_min_ns: Option<f64>,
    pub lat_mean_ns: Option<f64>,
    pub lat_max_ns: Option<f64>,
    pub lat_stddev_ns: Option<f64>,
    pub lat_p50_ns: Option<f64>,
    pub lat_p90_ns: Option<f64>,
    pub lat_p95_ns: Option<f64>,
    pub lat_p99_ns: Option<f64>,
    pub lat_p99_9_ns: Option<f64>,
    pub lat_p99_99_ns: Option<f64>,
}

impl MetricRow {
    /// The latency columns as the one latency summary of reported figures.
    pub fn lat(&self) -> crate::model::lat::ReportedLat {
        crate::model::lat::ReportedLat {
            min: self.lat_min_ns,
            mean: self.lat_mean_ns,
            max: self.lat_max_ns,
            stddev: self.lat_stddev_ns,
            p50: self.lat_p50_ns,
            p90: self.lat_p90_ns,
            p95: self.lat_p95_ns,
            p99: self.lat_p99_ns,
            p99_9: self.lat_p99_9_ns,
            p99_99: self.lat_p99_99_ns,
        }
    }
}

/// One run as listed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    pub id: i64,
    /// The group as every command names it (`g3`), null outside a group.
    pub group: Option<String>,
    /// The group's number alone (3), kept for scripts written before `group`.
    pub group_id: Option<i64>,
    pub kind: String,
    pub tool: String,
    pub tool_version: String,
    pub start_time: String,
    pub end_time: Option<String>,
    pub host: String,
    pub label: Option<String>,
    pub modes: Vec<String>,
    pub tags: std::collections::BTreeMap<String, String>,
    pub interrupted: bool,
}

/// Filters for `iolab list`.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub label: Option<String>,
    pub tags: Vec<(String, String)>,
    pub mode: Option<String>,
    pub host: Option<String>,
    /// RFC 3339 lower bound on start_time
    pub since: Option<String>,
    pub limit: Option<usize>,
}

pub struct Store {
    conn: Connection,
    pub path: PathBuf,
}

/// What a passed integrity check saw of the store's files, kept beside the store in
/// `<store>.checked`: device, inode, size, mtime and ctime (ns) of the main file and the size,
/// mtime and ctime of a non-empty `-wal` file. Any write to the store (iolab's own saves, a
/// checkpoint, another program overwriting pages, a truncation) changes one of them, and the next
/// command checks the whole file again. ctime cannot be set back by a user. A write within the
/// same timestamp tick of the file system (a few ms) as the check itself, without a change of
/// size, is the one change it could miss.
#[derive(Debug, PartialEq, Eq)]
struct CheckStamp(String);

impl CheckStamp {
    fn of(path: &Path) -> Option<CheckStamp> {
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

    /// Whether the last passed check recorded exactly this.
    fn recorded(&self, path: &Path) -> bool {
        std::fs::read_to_string(Self::file(path)).is_ok_and(|t| t.trim_end() == self.0)
    }

    /// Records a passed check (whole or absent: written aside, then renamed). A store in a
    /// directory iolab cannot write is simply checked every time.
    fn record(&self, path: &Path) {
        let f = Self::file(path);
        let mut tmp = f.as_os_str().to_owned();
        tmp.push(format!(".{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let done = std::fs::write(&tmp, format!("{}\n", self.0)).is_ok()
            && std::fs::rename(&tmp, &f).is_ok();
        if !done {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The error for an id the store does not have.
fn unknown(path: &Path, what: &str) -> Error {
    Error::usage(format!(
        "no {what} in {} (iolab list shows the ids)",
        path.display()
    ))
}

fn db_err(path: &Path, e: impl std::fmt::Display + 'static) -> Error {
    // A damaged file found while reading or writing gets the one message of every unusable store.
    if let Some(e) = (&e as &dyn std::any::Any).downcast_ref::<rusqlite::Error>()
        && is_damage(e)
    {
        return damaged(path, e);
    }
    Error::failed(format!("results store {}: {e}", path.display()))
}

/// SQLite's word for a file whose pages cannot be read as a database.
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// The one error of a store that cannot be read back (overwritten pages, a truncated file):
/// exit 2, one line naming the store, whatever command found it (docs/exit-codes.md).
pub fn damaged(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::usage(format!(
        "--db {}: the results store is damaged and cannot be read back ({why}); iolab left it as it is and ran nothing: keep it for diagnosis and use another --db, or restore a backup",
        path.display()
    ))
}

impl Store {
    /// Opens (creating when missing) and migrates the store. Refuses files that are not iolab
    /// stores or come from a newer iolab.
    /// Every command checks the pages first (`PRAGMA quick_check`): a damaged store is refused
    /// the same way by `list` and by `run` (before a benchmark is run into it). The check reads
    /// the whole file, so a command skips it when the file is exactly as a passed check left it
    /// ([`CheckStamp`]): the first command after a change pays it, the others do not.
    pub fn open(path: &Path) -> Result<Store> {
        let s = Self::open_to(path, SCHEMA_VERSION)?;
        let stamp = CheckStamp::of(path);
        if stamp.as_ref().is_some_and(|st| st.recorded(path)) {
            return Ok(s);
        }
        s.check_integrity()?;
        if let Some(st) = stamp {
            st.record(path);
        }
        Ok(s)
    }

    /// Opens the store for saving: also refuses a store that cannot be written (read-only file or
    /// filesystem), before any benchmark time is spent.
    pub fn open_write(path: &Path) -> Result<Store> {
        let s = Self::open(path)?;
        let ro = s.conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false);
        let probe = s.conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;");
        if ro || probe.is_err() {
            let why = probe
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "read-only".into());
            return Err(Error::usage(format!(
                "--db {}: the results store cannot be written ({why}); use another --db or --no-save",
                path.display()
            )));
        }
        Ok(s)
    }

    /// `PRAGMA quick_check`: every page of every b-tree is read and checked (not the indexes
    /// against their tables), so a damaged store is refused before a benchmark is run into it.
    pub fn check_integrity(&self) -> Result<()> {
        let mut st = self
            .conn
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

    /// Opens and brings the schema to `target` (tests use this to make old stores).
    #[doc(hidden)]
    pub fn open_to(path: &Path, target: i64) -> Result<Store> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::usage(format!(
                    "--db {}: cannot create {}: {e}",
                    path.display(),
                    parent.display()
                ))
            })?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| {
            Error::usage(format!(
                "--db {}: cannot open the results store: {e}",
                path.display()
            ))
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| db_err(path, e))?;
        let not_ours = || {
            Error::usage(format!(
                "--db {}: not an iolab results store (use another path, or move that file away)",
                path.display()
            ))
        };
        let classify = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => not_ours(),
            Some(rusqlite::ErrorCode::DatabaseCorrupt) => damaged(path, &e),
            _ => Error::usage(format!(
                "--db {}: cannot read the results store: {e} (a store in WAL mode also needs to create its -wal and -shm files beside it)",
                path.display()
            )),
        };
        let app: i64 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(classify)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(classify)?;
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(classify)?;
        if app != APP_ID && (app != 0 || tables > 0 || version != 0) {
            return Err(not_ours());
        }
        if version > SCHEMA_VERSION {
            return Err(Error::usage(format!(
                "--db {}: written by a newer iolab (store schema {version}, this iolab knows up to {SCHEMA_VERSION}); upgrade iolab or use another --db",
                path.display()
            )));
        }
        let mut s = Store {
            conn,
            path: path.to_path_buf(),
        };
        s.conn
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| db_err(path, e))?;
        if version < target {
            s.migrate(version, target)?;
        }
        // WAL lets readers and one writer work at once; readonly files fail here, clearly.
        let mode: String = s
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| Error::usage(format!("--db {}: cannot write to the results store ({e}); use another --db or --no-save", path.display())))?;
        let _ = mode;
        Ok(s)
    }

    fn migrate(&mut self, from: i64, to: i64) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| Error::usage(format!("--db {}: cannot write to the results store ({e}); use another --db or --no-save", path.display())))?;
        // Another process may have migrated meanwhile.
        let now: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db_err(&path, e))?;
        for v in now.max(from)..to {
            tx.execute_batch(MIGRATIONS[v as usize])
                .map_err(|e| db_err(&path, format!("migrating schema {v} -> {}: {e}", v + 1)))?;
        }
        tx.execute_batch(&format!(
            "PRAGMA application_id = {APP_ID}; PRAGMA user_version = {to};"
        ))
        .map_err(|e| db_err(&path, e))?;
        tx.commit().map_err(|e| db_err(&path, e))
    }

    pub fn schema_version(&self) -> i64 {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap_or(0)
    }

    /// Starts a repetition group.
    pub fn new_group(&mut self, kind: &str, label: Option<&str>, repeat: u32) -> Result<i64> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        self.conn
            .execute(
                "INSERT INTO groups (kind, created, label, repeat) VALUES (?1, ?2, ?3, ?4)",
                params![kind, now, label, repeat],
            )
            .map_err(|e| db_err(&self.path, e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Starts an experiment: a group with its definition (axes, options) as JSON.
    pub fn new_experiment(
        &mut self,
        kind: &str,
        label: Option<&str>,
        repeat: u32,
        spec: &serde_json::Value,
    ) -> Result<i64> {
        let id = self.new_group(kind, label, repeat)?;
        self.conn
            .execute(
                "UPDATE groups SET spec = ?1 WHERE id = ?2",
                params![serde_json::to_string(spec).expect("json"), id],
            )
            .map_err(|e| db_err(&self.path, e))?;
        Ok(id)
    }

    /// An experiment's kind and definition.
    pub fn experiment(&self, gid: i64) -> Result<(String, Option<serde_json::Value>)> {
        let (kind, spec): (String, Option<String>) = self
            .conn
            .query_row("SELECT kind, spec FROM groups WHERE id = ?1", [gid], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(|e| db_err(&self.path, e))?
            .ok_or_else(|| unknown(&self.path, &format!("group g{gid}")))?;
        Ok((kind, spec.and_then(|s| serde_json::from_str(&s).ok())))
    }

    /// Marks a saved run as one cell of an experiment.
    pub fn set_cell(&mut self, id: i64, cell: &serde_json::Value) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET cell = ?1 WHERE id = ?2",
                params![serde_json::to_string(cell).expect("json"), id],
            )
            .map_err(|e| db_err(&self.path, e))?;
        Ok(())
    }

    /// The cell of a run, when it belongs to an experiment.
    pub fn cell(&self, id: i64) -> Result<Option<serde_json::Value>> {
        let s: Option<String> = self
            .conn
            .query_row("SELECT cell FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .map_err(|e| db_err(&self.path, e))?;
        Ok(s.and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// Saves one `iolab run` in one transaction. `json` is the document as printed.
    pub fn save_run(
        &mut self,
        doc: &RunDoc,
        json: &serde_json::Value,
        group: Option<(i64, u32)>,
        cell: Option<&serde_json::Value>,
    ) -> Result<i64> {
        let path = self.path.clone();
        let tx = self.begin()?;
        let id = insert_run(
            &tx,
            &RunIn {
                kind: "run",
                tool: "iolab",
                tool_version: &doc.iolab_version,
                start_time: &doc.start_time,
                end_time: Some(&doc.end_time),
                host: &doc.env.host,
                label: doc.label.as_deref(),
                modes: doc.runs.iter().map(|c| c.mode.as_str()).collect(),
                interrupted: doc.interrupted,
                doc: json,
                env: Some(serde_json::json!({"run": doc.env, "system": doc.system})),
                group,
                cell,
            },
        )
        .map_err(|e| db_err(&path, e))?;
        insert_tags(&tx, id, &doc.tags).map_err(|e| db_err(&path, e))?;
        // A phase of concurrent roles is stored as one cell per role (`role` names it).
        for (ci, (role, c)) in crate::model::run::flat_cells(&doc.runs).iter().enumerate() {
            for k in OpKind::ALL {
                let r = c.results.get(k);
                if r.ops == 0 {
                    continue;
                }
                let l = r.lat_ns.as_ref();
                insert_metric(
                    &tx,
                    id,
                    &MetricIn {
                        cell: ci as i64,
                        mode: &c.mode,
                        role: role.as_deref(),
                        op: k.name(),
                        threads: Some(c.job.job.threads as i64),
                        bs_bytes: Some(c.job.job.bs_bytes as i64),
                        ops: r.ops as i64,
                        bytes: r.bytes as i64,
                        iops: r.iops,
                        bytes_per_sec: r.bytes_per_sec,
                        lat: l.map(|x| x.columns()).unwrap_or_default(),
                    },
                )
                .map_err(|e| db_err(&path, e))?;
                if let Some(h) = c.lat_hists.get(k as usize).filter(|h| h.count() > 0) {
                    tx.execute(
                        "INSERT INTO histograms VALUES (?1, ?2, ?3, ?4)",
                        params![id, ci as i64, k.name(), serialize_hist(h)],
                    )
                    .map_err(|e| db_err(&path, e))?;
                }
            }
        }
        tx.commit().map_err(|e| db_err(&path, e))?;
        Ok(id)
    }

    /// A write transaction that takes the lock at once (no deadlock between two savers).
    fn begin(&mut self) -> Result<rusqlite::Transaction<'_>> {
        let path = self.path.clone();
        self.conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| db_err(&path, e))
    }

    /// Saves an `iolab db` run in one transaction; `json` is the document as printed.
    pub fn save_db(
        &mut self,
        doc: &crate::model::db::DbDoc,
        json: &serde_json::Value,
        host: &str,
    ) -> Result<i64> {
        let path = self.path.clone();
        let tx = self.begin()?;
        let id = insert_run(
            &tx,
            &RunIn {
                kind: "db",
                tool: "iolab",
                tool_version: &doc.iolab_version,
                start_time: &doc.start_time,
                end_time: Some(&doc.end_time),
                host,
                label: doc.label.as_deref(),
                modes: vec![doc.test.as_str()],
                interrupted: doc.interrupted,
                doc: json,
                env: Some(
                    serde_json::json!({"run": {"host": host, "backend": doc.backend, "settings": doc.settings}, "system": doc.system}),
                ),
                group: None,
                cell: None,
            },
        )
        .map_err(|e| db_err(&path, e))?;
        insert_tags(&tx, id, &doc.tags).map_err(|e| db_err(&path, e))?;
        for (name, r) in &doc.types {
            let l = r.lat_ns.as_ref();
            insert_metric(
                &tx,
                id,
                &MetricIn {
                    role: None,
                    cell: 0,
                    mode: &doc.test,
                    op: name,
                    threads: Some(doc.job.threads as i64),
                    bs_bytes: None,
                    ops: r.transactions as i64,
                    bytes: 0,
                    iops: r.tps,
                    bytes_per_sec: 0.0,
                    lat: l.map(|x| x.columns()).unwrap_or_default(),
                },
            )
            .map_err(|e| db_err(&path, e))?;
            if let Some(h) = doc.hist.as_ref().filter(|h| h.count() > 0) {
                tx.execute(
                    "INSERT INTO histograms VALUES (?1, 0, ?2, ?3)",
                    params![id, name, serialize_hist(h)],
                )
                .map_err(|e| db_err(&path, e))?;
            }
        }
        tx.commit().map_err(|e| db_err(&path, e))?;
        Ok(id)
    }

    /// Saves a suite or zones result (kind `suite`, `modes` = the suite's name) in one transaction:
    /// the document, which `show` renders, and one `metrics` row per figure
    /// ([`Store::suite_metrics`]), which `compare` and `export` read.
    pub fn save_suite(
        &mut self,
        name: &str,
        doc: &serde_json::Value,
        host: &str,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        let path = self.path.clone();
        let metrics = Self::suite_metrics(name, doc)?;
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| db_err(&path, e))?;
        let id = insert_run(
            &tx,
            &RunIn {
                kind: "suite",
                tool: "iolab",
                tool_version: env!("CARGO_PKG_VERSION"),
                start_time: &now,
                end_time: Some(&now),
                host,
                label: None,
                modes: vec![name],
                interrupted: doc
                    .get("interrupted")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false),
                doc: &serde_json::json!({"suite": name, "result": doc}),
                env: Some(serde_json::json!({"run": {"host": host}, "system": system})),
                group: None,
                cell: None,
            },
        )
        .map_err(|e| db_err(&path, e))?;
        for (ci, m) in metrics.iter().enumerate() {
            insert_metric(
                &tx,
                id,
                &MetricIn {
                    role: None,
                    cell: ci as i64,
                    mode: &m.mode,
                    op: m.op,
                    threads: m.threads.map(i64::from),
                    bs_bytes: m.bs_bytes.map(|b| b as i64),
                    ops: m.ops as i64,
                    bytes: m.bytes as i64,
                    iops: m.iops,
                    bytes_per_sec: m.bytes_per_sec,
                    lat: [
                        None,
                        m.lat_mean_ns,
                        m.lat_max_ns,
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                    ],
                },
            )
            .map_err(|e| db_err(&path, format!("{name} {}: {e}", m.mode)))?;
        }
        tx.commit().map_err(|e| db_err(&path, e))?;
        Ok(id)
    }

    /// Saves a `crashcheck write` or `verify` document (kind `crashcheck`, `modes` = the phase).
    /// It has no metrics rows: what it says is a count of lost records, not a speed.
    pub fn save_crashcheck(
        &mut self,
        doc: &crate::model::crashcheck::CrashDoc,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        let path = self.path.clone();
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let json = serde_json::to_value(doc).map_err(|e| Error::failed(e.to_string()))?;
        let tx = self.begin()?;
        let id = insert_run(
            &tx,
            &RunIn {
                kind: "crashcheck",
                tool: "iolab",
                tool_version: env!("CARGO_PKG_VERSION"),
                start_time: &doc.start_time,
                end_time: Some(&now),
                host: &doc.host,
                label: None,
                modes: vec![&doc.phase],
                interrupted: doc
                    .write
                    .as_ref()
                    .is_some_and(|w| w.stopped == crate::model::crashcheck::Stop::Interrupted),
                doc: &json,
                env: Some(serde_json::json!({"run": {"host": doc.host}, "system": system})),
                group: None,
                cell: None,
            },
        )
        .map_err(|e| db_err(&path, e))?;
        tx.commit().map_err(|e| db_err(&path, e))?;
        Ok(id)
    }

    /// Saves an `iolab verify --dir` document (kind `verify`, `modes` = `verify`), with its
    /// label and tags. Like a crashcheck it has no metrics rows: it says what it found, not a speed.
    pub fn save_verify(
        &mut self,
        doc: &crate::model::verify::VerifyDoc,
        json: &serde_json::Value,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        let path = self.path.clone();
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let tx = self.begin()?;
        let id = insert_run(
            &tx,
            &RunIn {
                kind: "verify",
                tool: "iolab",
                tool_version: env!("CARGO_PKG_VERSION"),
                start_time: &doc.start_time,
                end_time: Some(&now),
                host: &doc.host,
                label: doc.label.as_deref(),
                modes: vec!["verify"],
                interrupted: false,
                doc: json,
                env: Some(serde_json::json!({"run": {"host": doc.host}, "system": system})),
                group: None,
                cell: None,
            },
        )
        .map_err(|e| db_err(&path, e))?;
        insert_tags(&tx, id, &doc.tags).map_err(|e| db_err(&path, e))?;
        tx.commit().map_err(|e| db_err(&path, e))?;
        Ok(id)
    }

    /// The `metrics` rows of a suite or zones result document (`result` of kind `suite`), by the
    /// suite's name: the model's `metric_rows` of IOZone, Bonnie++ or zones.
    pub fn suite_metrics(
        name: &str,
        doc: &serde_json::Value,
    ) -> Result<Vec<crate::model::suite::SuiteMetric>> {
        use crate::model::{suite, zones};
        let bad =
            |e: serde_json::Error| Error::failed(format!("{name} result cannot be read: {e}"));
        let r = doc.clone();
        Ok(match name {
            "iozone" => serde_json::from_value::<suite::IozoneResult>(r)
                .map_err(bad)?
                .metric_rows(),
            "bonnie" => serde_json::from_value::<suite::BonnieResult>(r)
                .map_err(bad)?
                .metric_rows(),
            "zones" => serde_json::from_value::<zones::ZonesResult>(r)
                .map_err(bad)?
                .metric_rows(),
            other => {
                return Err(Error::failed(format!(
                    "a suite named {other:?}, which this iolab does not know"
                )));
            }
        })
    }

    /// Saves an imported result (fio, sysbench) in one transaction; `doc` is its stored document.
    pub fn save_import(
        &mut self,
        imp: &Imported,
        doc: &serde_json::Value,
        host: &str,
        label: Option<&str>,
        tags: &std::collections::BTreeMap<String, String>,
    ) -> Result<i64> {
        let path = self.path.clone();
        let tx = self.begin()?;
        let start = imp.start_time.clone().unwrap_or_else(|| {
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        });
        let id = insert_run(
            &tx,
            &RunIn {
                kind: "import",
                tool: &imp.tool,
                tool_version: &imp.tool_version,
                start_time: &start,
                end_time: None,
                host,
                label,
                modes: imp.cells.iter().map(|c| c.mode.as_str()).collect(),
                interrupted: false,
                doc,
                env: None,
                group: None,
                cell: None,
            },
        )
        .map_err(|e| db_err(&path, e))?;
        insert_tags(&tx, id, tags).map_err(|e| db_err(&path, e))?;
        for (ci, c) in imp.cells.iter().enumerate() {
            for o in &c.ops {
                let l = o.lat_ns.as_ref();
                insert_metric(
                    &tx,
                    id,
                    &MetricIn {
                        role: None,
                        cell: ci as i64,
                        mode: &c.mode,
                        op: &o.op,
                        threads: Some(c.threads as i64),
                        bs_bytes: Some(c.bs_bytes as i64),
                        ops: o.ops as i64,
                        bytes: o.bytes as i64,
                        iops: o.iops,
                        bytes_per_sec: o.bytes_per_sec,
                        lat: l.map(|x| x.columns()).unwrap_or_default(),
                    },
                )
                .map_err(|e| db_err(&path, format!("cell {ci} op {}: {e}", o.op)))?;
                if let Some(bins) = &o.hist_bins {
                    let mut h = LatHist::new();
                    for &(v, n) in bins {
                        for _ in 0..n.min(1) {}
                        let _ =
                            h.h.record_n(v.clamp(1, crate::measure::hist::MAX_TRACKED_NS), n);
                    }
                    if h.count() > 0 {
                        tx.execute(
                            "INSERT INTO histograms VALUES (?1, ?2, ?3, ?4)",
                            params![id, ci as i64, o.op, serialize_hist(&h)],
                        )
                        .map_err(|e| db_err(&path, e))?;
                    }
                }
            }
        }
        tx.commit().map_err(|e| db_err(&path, e))?;
        Ok(id)
    }

    fn row_to_run(&self, r: &rusqlite::Row) -> rusqlite::Result<RunRow> {
        let modes: String = r.get("modes")?;
        let group_id: Option<i64> = r.get("group_id")?;
        Ok(RunRow {
            id: r.get("id")?,
            group: group_id.map(|g| format!("g{g}")),
            group_id,
            kind: r.get("kind")?,
            tool: r.get("tool")?,
            tool_version: r.get("tool_version")?,
            start_time: r.get("start_time")?,
            end_time: r.get("end_time")?,
            host: r.get("host")?,
            label: r.get("label")?,
            modes: modes
                .split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            tags: Default::default(),
            interrupted: r.get::<_, i64>("interrupted")? != 0,
        })
    }

    fn fill_tags(&self, run: &mut RunRow) -> Result<()> {
        let mut st = self
            .conn
            .prepare_cached("SELECT key, value FROM tags WHERE run_id = ?1 ORDER BY key")
            .map_err(|e| db_err(&self.path, e))?;
        let rows = st
            .query_map([run.id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| db_err(&self.path, e))?;
        for kv in rows {
            let (k, v) = kv.map_err(|e| db_err(&self.path, e))?;
            run.tags.insert(k, v);
        }
        Ok(())
    }

    /// Runs matching the filter, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<RunRow>> {
        let mut sql = String::from("SELECT * FROM runs WHERE 1=1");
        let mut args: Vec<String> = Vec::new();
        if let Some(l) = &f.label {
            args.push(l.clone());
            sql.push_str(&format!(" AND label = ?{}", args.len()));
        }
        if let Some(m) = &f.mode {
            args.push(format!("%,{m},%"));
            sql.push_str(&format!(" AND modes LIKE ?{}", args.len()));
        }
        if let Some(h) = &f.host {
            args.push(h.clone());
            sql.push_str(&format!(" AND host = ?{}", args.len()));
        }
        if let Some(s) = &f.since {
            args.push(s.clone());
            sql.push_str(&format!(" AND start_time >= ?{}", args.len()));
        }
        for (k, v) in &f.tags {
            args.push(k.clone());
            args.push(v.clone());
            sql.push_str(&format!(" AND EXISTS (SELECT 1 FROM tags t WHERE t.run_id = runs.id AND t.key = ?{} AND t.value = ?{})", args.len() - 1, args.len()));
        }
        sql.push_str(" ORDER BY start_time DESC, id DESC");
        if let Some(n) = f.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut st = self.conn.prepare(&sql).map_err(|e| db_err(&self.path, e))?;
        let rows = st
            .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                self.row_to_run(r)
            })
            .map_err(|e| db_err(&self.path, e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| db_err(&self.path, e))?;
        let mut rows = rows;
        for r in &mut rows {
            self.fill_tags(r)?;
        }
        Ok(rows)
    }

    /// One run's row, or a usage error naming the id.
    pub fn run(&self, id: i64) -> Result<RunRow> {
        let mut r = self
            .conn
            .query_row("SELECT * FROM runs WHERE id = ?1", [id], |r| {
                self.row_to_run(r)
            })
            .optional()
            .map_err(|e| db_err(&self.path, e))?
            .ok_or_else(|| unknown(&self.path, &format!("run {id}")))?;
        self.fill_tags(&mut r)?;
        Ok(r)
    }

    /// The first run of `kind` whose stored document is `doc` exactly (an import of the same
    /// file, a run document imported again).
    pub fn same_doc(&self, kind: &str, doc: &serde_json::Value) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT id FROM runs WHERE kind = ?1 AND doc = ?2 ORDER BY id LIMIT 1",
                params![kind, serde_json::to_string(doc).unwrap_or_default()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| db_err(&self.path, e))
    }

    /// The stored document of a run.
    pub fn doc(&self, id: i64) -> Result<serde_json::Value> {
        let s: String = self
            .conn
            .query_row("SELECT doc FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .map_err(|e| db_err(&self.path, e))?;
        serde_json::from_str(&s).map_err(|e| {
            db_err(
                &self.path,
                format!("run {id}: stored document is not JSON: {e}"),
            )
        })
    }

    /// The stored document of run `id`, typed by its kind: the one place that maps the kind
    /// strings of the `runs` table to document types.
    pub fn stored_doc(&self, id: i64) -> Result<crate::model::stored::StoredDoc> {
        use crate::model::stored::{StoredDoc, SuiteDoc};
        let kind = self.run(id)?.kind;
        let doc = self.doc(id)?;
        let bad = |e: serde_json::Error| {
            Error::failed(format!("run {id}: stored document cannot be read: {e}"))
        };
        Ok(match kind.as_str() {
            "run" => StoredDoc::Run(Box::new(RunDoc::from_json(&doc).map_err(bad)?)),
            "db" => StoredDoc::Db(Box::new(serde_json::from_value(doc).map_err(bad)?)),
            "import" => StoredDoc::Import(Box::new(Imported::from_doc(&doc).map_err(bad)?)),
            "crashcheck" => {
                StoredDoc::Crashcheck(Box::new(serde_json::from_value(doc).map_err(bad)?))
            }
            "verify" => StoredDoc::Verify(Box::new(serde_json::from_value(doc).map_err(bad)?)),
            "suite" => {
                let name = doc.get("suite").and_then(|x| x.as_str()).unwrap_or("");
                let r = doc.get("result").cloned().unwrap_or_default();
                StoredDoc::Suite(Box::new(match name {
                    "iozone" => SuiteDoc::Iozone(serde_json::from_value(r).map_err(bad)?),
                    "bonnie" => SuiteDoc::Bonnie(serde_json::from_value(r).map_err(bad)?),
                    "zones" => SuiteDoc::Zones(serde_json::from_value(r).map_err(bad)?),
                    other => {
                        return Err(Error::failed(format!(
                            "run {id}: a suite named {other:?}, which this iolab does not know"
                        )));
                    }
                }))
            }
            other => {
                return Err(Error::failed(format!(
                    "run {id}: a stored kind {other:?}, which this iolab does not know"
                )));
            }
        })
    }

    pub fn env(&self, id: i64) -> Result<Option<serde_json::Value>> {
        let s: Option<String> = self
            .conn
            .query_row("SELECT env FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .map_err(|e| db_err(&self.path, e))?;
        Ok(s.and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// The measured cells of run `id` in the one shape every stored kind shares
    /// (`cells[].results.<op>`), from its metrics rows.
    pub fn cells(&self, id: i64) -> Result<Vec<crate::model::stored::MeasuredCell>> {
        use crate::model::stored::{MeasuredCell, OpMeasure};
        let mut out: Vec<MeasuredCell> = Vec::new();
        for m in self.metrics(id)? {
            if out.last().is_none_or(|c| c.cell != m.cell) {
                out.push(MeasuredCell {
                    cell: m.cell,
                    mode: m.mode.clone(),
                    role: m.role.clone(),
                    threads: m.threads,
                    bs_bytes: m.bs_bytes,
                    results: Default::default(),
                });
            }
            let lat = m.lat();
            if let Some(c) = out.last_mut() {
                c.results.insert(
                    m.op.clone(),
                    OpMeasure {
                        ops: m.ops.max(0) as u64,
                        bytes: m.bytes.max(0) as u64,
                        iops: m.iops,
                        bytes_per_sec: m.bytes_per_sec,
                        lat_ns: lat,
                    },
                );
            }
        }
        Ok(out)
    }

    pub fn metrics(&self, id: i64) -> Result<Vec<MetricRow>> {
        let mut st = self.conn.prepare_cached("SELECT * FROM metrics WHERE run_id = ?1 ORDER BY cell, CASE op WHEN 'read' THEN 0 WHEN 'write' THEN 1 WHEN 'fsync' THEN 2 ELSE 3 END").map_err(|e| db_err(&self.path, e))?;
        st.query_map([id], |r| {
            Ok(MetricRow {
                run_id: r.get("run_id")?,
                cell: r.get("cell")?,
                mode: r.get("mode")?,
                role: r.get("role")?,
                op: r.get("op")?,
                threads: r.get("threads")?,
                bs_bytes: r.get("bs_bytes")?,
                ops: r.get("ops")?,
                bytes: r.get("bytes")?,
                iops: r.get("iops")?,
                bytes_per_sec: r.get("bytes_per_sec")?,
                lat_min_ns: r.get("lat_min_ns")?,
                lat_mean_ns: r.get("lat_mean_ns")?,
                lat_max_ns: r.get("lat_max_ns")?,
                lat_stddev_ns: r.get("lat_stddev_ns")?,
                lat_p50_ns: r.get("lat_p50_ns")?,
                lat_p90_ns: r.get("lat_p90_ns")?,
                lat_p95_ns: r.get("lat_p95_ns")?,
                lat_p99_ns: r.get("lat_p99_ns")?,
                lat_p99_9_ns: r.get("lat_p99_9_ns")?,
                lat_p99_99_ns: r.get("lat_p99_99_ns")?,
            })
        })
        .map_err(|e| db_err(&self.path, e))?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| db_err(&self.path, e))
    }

    /// A stored latency histogram of one run × cell × op.
    pub fn histogram(&self, id: i64, cell: i64, op: &str) -> Result<Option<LatHist>> {
        let blob: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT hdr FROM histograms WHERE run_id = ?1 AND cell = ?2 AND op = ?3",
                params![id, cell, op],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| db_err(&self.path, e))?;
        blob.map(|b| {
            deserialize_hist(&b).map_err(|e| db_err(&self.path, format!("run {id} histogram: {e}")))
        })
        .transpose()
    }

    /// Run ids of a group, in repetition order.
    pub fn group_runs(&self, gid: i64) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare("SELECT id FROM runs WHERE group_id = ?1 ORDER BY seq, id")
            .map_err(|e| db_err(&self.path, e))?;
        let ids = st
            .query_map([gid], |r| r.get(0))
            .map_err(|e| db_err(&self.path, e))?
            .collect::<rusqlite::Result<Vec<i64>>>()
            .map_err(|e| db_err(&self.path, e))?;
        if ids.is_empty() {
            return Err(unknown(&self.path, &format!("group g{gid}")));
        }
        Ok(ids)
    }

    /// Deletes a run (with its metrics, tags and histograms).
    pub fn delete(&mut self, id: i64) -> Result<()> {
        self.run(id)?;
        let path = self.path.clone();
        let tx = self.begin()?;
        tx.execute("DELETE FROM runs WHERE id = ?1", [id])
            .map_err(|e| db_err(&path, e))?;
        tx.execute("DELETE FROM groups WHERE NOT EXISTS (SELECT 1 FROM runs WHERE runs.group_id = groups.id)", []).map_err(|e| db_err(&path, e))?;
        tx.commit().map_err(|e| db_err(&path, e))
    }
}

/// One row of `runs`, whatever made it (run, db, suite, import).
struct RunIn<'a> {
    kind: &'a str,
    tool: &'a str,
    tool_version: &'a str,
    start_time: &'a str,
    end_time: Option<&'a str>,
    host: &'a str,
    label: Option<&'a str>,
    modes: Vec<&'a str>,
    interrupted: bool,
    /// the document as printed
    doc: &'a serde_json::Value,
    /// what `compare` diffs: `{"run": ..., "system": ...}`
    env: Option<serde_json::Value>,
    /// experiment or repetition group, and the run's place in it
    group: Option<(i64, u32)>,
    /// an experiment cell's coordinates
    cell: Option<&'a serde_json::Value>,
}

/// The one `INSERT INTO runs`; returns the new run id.
fn insert_run(c: &rusqlite::Connection, r: &RunIn) -> rusqlite::Result<i64> {
    let json = |v: &serde_json::Value| serde_json::to_string(v).unwrap_or_default();
    c.execute(
        "INSERT INTO runs (kind, tool, tool_version, start_time, end_time, host, label, modes, interrupted, doc, env, group_id, seq, cell)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            r.kind,
            r.tool,
            r.tool_version,
            r.start_time,
            r.end_time,
            r.host,
            r.label,
            format!(",{},", r.modes.join(",")),
            r.interrupted,
            json(r.doc),
            r.env.as_ref().map(json),
            r.group.map(|g| g.0),
            r.group.map(|g| g.1),
            r.cell.map(json),
        ],
    )?;
    Ok(c.last_insert_rowid())
}

fn insert_tags(
    tx: &rusqlite::Transaction,
    run_id: i64,
    tags: &std::collections::BTreeMap<String, String>,
) -> rusqlite::Result<()> {
    for (k, v) in tags {
        tx.execute(
            "INSERT INTO tags (run_id, key, value) VALUES (?1, ?2, ?3)",
            params![run_id, k, v],
        )?;
    }
    Ok(())
}

/// One row of `metrics`; `lat` in ns: min, mean, max, stddev, p50, p90, p95, p99, p99.9, p99.99.
struct MetricIn<'a> {
    cell: i64,
    mode: &'a str,
    /// The role of a run with concurrent roles.
    role: Option<&'a str>,
    op: &'a str,
    threads: Option<i64>,
    bs_bytes: Option<i64>,
    ops: i64,
    bytes: i64,
    iops: f64,
    bytes_per_sec: f64,
    lat: [Option<f64>; 10],
}

fn insert_metric(tx: &rusqlite::Transaction, run_id: i64, m: &MetricIn) -> rusqlite::Result<usize> {
    let l = &m.lat;
    tx.execute(
        "INSERT INTO metrics (run_id, cell, mode, op, threads, bs_bytes, ops, bytes, iops, bytes_per_sec,
            lat_min_ns, lat_mean_ns, lat_max_ns, lat_stddev_ns, lat_p50_ns, lat_p90_ns, lat_p95_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, role)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
        params![run_id, m.cell, m.mode, m.op, m.threads, m.bs_bytes, m.ops, m.bytes, m.iops, m.bytes_per_sec, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], m.role],
    )
}

/// HdrHistogram V2 with deflate: the standard, compact, portable encoding.
pub fn serialize_hist(h: &LatHist) -> Vec<u8> {
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&h.h, &mut out)
        .expect("serialize histogram");
    out
}

pub fn deserialize_hist(b: &[u8]) -> std::result::Result<LatHist, String> {
    use hdrhistogram::serialization::Deserializer;
    let h: hdrhistogram::Histogram<u64> = Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(b))
        .map_err(|e| format!("{e:?}"))?;
    let mut l = LatHist::new();
    l.h.add(&h).map_err(|e| format!("{e:?}"))?;
    Ok(l)
}

/// A run or group reference: `12` (run) or `g3` (group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ref {
    Run(i64),
    Group(i64),
}

impl std::str::FromStr for Ref {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Ref, String> {
        let bad = || {
            format!(
                "'{s}' is not a run or group id: use a run id like 12 or a group id like g3 (iolab list shows them)"
            )
        };
        if let Some(g) = s.strip_prefix('g').or_else(|| s.strip_prefix("group:")) {
            return g.parse().map(Ref::Group).map_err(|_| bad());
        }
        s.parse().map(Ref::Run).map_err(|_| bad())
    }
}

impl std::fmt::Display for Ref {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ref::Run(i) => write!(f, "{i}"),
            Ref::Group(g) => write!(f, "g{g}"),
        }
    }
}

impl Store {
    /// The run ids a reference stands for.
    pub fn resolve(&self, r: Ref) -> Result<Vec<i64>> {
        match r {
            Ref::Run(id) => {
                self.run(id)?;
                Ok(vec![id])
            }
            Ref::Group(g) => self.group_runs(g),
        }
    }
}
