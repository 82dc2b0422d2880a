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
//! several iolab processes save at once. Each run is saved in one transaction, under its
//! document id (`runs.doc_id`, unique): a document is saved at most once.

pub mod backend;
pub mod compare;
pub mod import;
pub mod spool;

use crate::error::{Error, Result};
use crate::measure::hist::LatHist;
use crate::measure::stats::OpKind;
use crate::model::run::RunDoc;
use crate::store::import::Imported;
use backend::{Conn, DbError, DbResult, Exec, Row, Val, vals};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// "iolb"
pub const APP_ID: i64 = 0x696f_6c62;
/// Current schema version.
pub const SCHEMA_VERSION: i64 = 6;

/// Migration i takes a store from version i to i + 1.
const MIGRATIONS: [&str; 6] = [
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
    // v5: a group's runs found by index (`show gN`, `compare gA gB`, `report gN`), not by reading
    // every run row (group_id sits after the documents, so a scan reads the whole store)
    "CREATE INDEX IF NOT EXISTS runs_group ON runs(group_id);",
    DOC_IDS,
];

/// v6 (both dialects): a document is saved at most once. `runs.doc_id` is the document's id
/// (its `doc_id`, else a hash of the document; rows of older stores have none) and
/// `groups.uid` a group's, each a unique key, so a kept document saved again (the next command,
/// `iolab import`, two at once) and two `store copy` at once insert-or-skip
/// (`ON CONFLICT DO NOTHING`) in the transaction that saves it.
const DOC_IDS: &str = "ALTER TABLE runs ADD COLUMN doc_id TEXT;
    CREATE UNIQUE INDEX runs_doc_id ON runs(doc_id);
    ALTER TABLE groups ADD COLUMN uid TEXT;
    CREATE UNIQUE INDEX groups_uid ON groups(uid);";

/// Where a store lives: an SQLite file, or a PostgreSQL database named by its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

/// The URL schemes `--db` / `IOLAB_DB` take, as error messages name them.
pub const SCHEMES: &str = "postgres://user:pass@host:port/db (or postgresql://), sqlite:///path/file.db, or a plain file path";

impl Location {
    /// Reads a `--db` value (`source` names where it came from: `--db` or `IOLAB_DB`). Anything
    /// that parses as a URL (`scheme:/...`) is a URL: `postgres://`/`postgresql://` or
    /// `sqlite://PATH`; any other scheme is a usage error naming the supported ones, so a URL
    /// never becomes a file named after it.
    pub fn parse(value: &std::ffi::OsStr, source: &str) -> Result<Location> {
        let Some(s) = value.to_str() else {
            return Ok(Location::Sqlite(PathBuf::from(value)));
        };
        let Some(scheme) = url_scheme(s) else {
            return Ok(Location::Sqlite(PathBuf::from(s)));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => {
                // Parsed by the client's own URL rules, so a bad one is refused here, clearly.
                s.parse::<postgres::Config>().map_err(|e| {
                    Error::usage(format!(
                        "{source} {}: not a PostgreSQL URL the client can use ({e}); use {SCHEMES}",
                        mask_password(s)
                    ))
                })?;
                Ok(Location::Postgres(s.to_string()))
            }
            "sqlite" => {
                let rest = &s[scheme.len() + 1..];
                let path = rest.strip_prefix("//").unwrap_or(rest);
                if path.is_empty() {
                    return Err(Error::usage(format!(
                        "{source} {s}: no file path after sqlite://; use {SCHEMES}"
                    )));
                }
                // sqlite://relative would name a file in the working directory nobody meant
                if !path.starts_with('/') {
                    return Err(Error::usage(format!(
                        "{source} {s}: sqlite:// takes an absolute path (sqlite:///path/file.db, three slashes); a relative path is given plainly, without sqlite://"
                    )));
                }
                Ok(Location::Sqlite(PathBuf::from(path)))
            }
            _ => Err(Error::usage(format!(
                "{source} {}: a URL of scheme {scheme}://, which iolab cannot store results in; use {SCHEMES}",
                mask_password(s)
            ))),
        }
    }

    /// The SQLite file, when the store is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Location::Sqlite(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

impl std::fmt::Display for Location {
    /// The path, or the URL with its password masked (it goes into messages and documents).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(u) => write!(f, "{}", mask_password(u)),
        }
    }
}

/// `scheme` of a value that starts like a URL (`scheme:/`), per RFC 3986's scheme characters.
fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, rest) = s.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && rest.starts_with('/'))
    .then_some(scheme)
}

/// A URL with the password of its user info replaced by `***`.
pub fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(auth_end);
    match auth.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split_once(':').map(|x| x.0).unwrap_or(user);
            format!("{scheme}://{name}:***@{host}{tail}")
        }
        _ => url.to_string(),
    }
}

/// Where the store lives: `--db`, else `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/results.db`,
/// else `~/.local/share/iolab/results.db`. A URL of a scheme iolab cannot use is a usage error.
pub fn resolve(flag: Option<&Path>) -> Result<Location> {
    if let Some(p) = flag {
        return Location::parse(p.as_os_str(), "--db");
    }
    if let Some(p) = std::env::var_os("IOLAB_DB").filter(|s| !s.is_empty()) {
        return Location::parse(&p, "IOLAB_DB");
    }
    Ok(Location::Sqlite(default_path()))
}

/// `$XDG_DATA_HOME/iolab/results.db`, else `~/.local/share/iolab/results.db`.
fn default_path() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
                .join(".local/share")
        });
    base.join("iolab/results.db")
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
    conn: std::cell::RefCell<Conn>,
    /// The store as messages name it: the file, or the URL with its password masked.
    pub path: PathBuf,
    pub loc: Location,
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

    /// Whether the last passed check recorded exactly this (a regular file of at most 4 KiB,
    /// never read through a symbolic link or from a fifo).
    fn recorded(&self, path: &Path) -> bool {
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
    fn record(&self, path: &Path) {
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

/// The error for an id the store does not have.
fn unknown(path: &Path, what: &str) -> Error {
    Error::usage(format!(
        "no {what} in {} (iolab list shows the ids)",
        path.display()
    ))
}

fn db_err(path: &Path, e: impl std::fmt::Display + 'static) -> Error {
    // A damaged file found while reading or writing gets the one message of every unusable store.
    let any = &e as &dyn std::any::Any;
    if let Some(e) = any.downcast_ref::<rusqlite::Error>()
        && is_damage(e)
    {
        return damaged(path, e);
    }
    if let Some(e) = any.downcast_ref::<DbError>()
        && e.damaged
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

/// PostgreSQL: the schema, one statement list per version (the same tables and columns as the
/// SQLite store's [`MIGRATIONS`], in PostgreSQL's types). Migration i takes a store from
/// version i to i + 1; the version is kept in `iolab_store`.
const PG_MIGRATIONS: [&str; 6] = [
    "CREATE TABLE runs (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        kind TEXT NOT NULL,
        tool TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        start_time TEXT NOT NULL,
        end_time TEXT,
        host TEXT NOT NULL,
        label TEXT,
        modes TEXT NOT NULL,
        interrupted BIGINT NOT NULL DEFAULT 0,
        doc TEXT NOT NULL,
        env TEXT
    );
    CREATE TABLE tags (
        run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE metrics (
        run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        cell BIGINT NOT NULL,
        mode TEXT NOT NULL,
        op TEXT NOT NULL,
        threads BIGINT,
        bs_bytes BIGINT,
        ops BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        iops DOUBLE PRECISION NOT NULL,
        bytes_per_sec DOUBLE PRECISION NOT NULL,
        lat_min_ns DOUBLE PRECISION, lat_mean_ns DOUBLE PRECISION, lat_max_ns DOUBLE PRECISION,
        lat_stddev_ns DOUBLE PRECISION, lat_p50_ns DOUBLE PRECISION, lat_p90_ns DOUBLE PRECISION,
        lat_p95_ns DOUBLE PRECISION, lat_p99_ns DOUBLE PRECISION, lat_p99_9_ns DOUBLE PRECISION,
        lat_p99_99_ns DOUBLE PRECISION,
        PRIMARY KEY (run_id, cell, op)
    );",
    "CREATE TABLE groups (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        kind TEXT NOT NULL,
        created TEXT NOT NULL,
        label TEXT,
        repeat BIGINT NOT NULL
    );
    ALTER TABLE runs ADD COLUMN group_id BIGINT REFERENCES groups(id);
    ALTER TABLE runs ADD COLUMN seq BIGINT;
    CREATE TABLE histograms (
        run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        cell BIGINT NOT NULL,
        op TEXT NOT NULL,
        hdr BYTEA NOT NULL,
        PRIMARY KEY (run_id, cell, op)
    );
    CREATE INDEX runs_start ON runs(start_time);
    CREATE INDEX runs_group ON runs(group_id);",
    "ALTER TABLE groups ADD COLUMN spec TEXT;
    ALTER TABLE runs ADD COLUMN cell TEXT;",
    "ALTER TABLE metrics ADD COLUMN role TEXT;",
    // v5: the SQLite store's runs_group, which this schema had from v2
    "CREATE INDEX IF NOT EXISTS runs_group ON runs(group_id);",
    DOC_IDS,
];

/// The key of the advisory lock that serialises creating and migrating a PostgreSQL store.
const PG_LOCK: i64 = APP_ID;

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

    /// Opens the store at `loc` (see [`Store::open`]; a PostgreSQL store is created in its
    /// database when that holds none, and migrated).
    pub fn open_at(loc: &Location) -> Result<Store> {
        match loc {
            Location::Sqlite(p) => Self::open(p),
            Location::Postgres(url) => Self::open_pg(url, SCHEMA_VERSION),
        }
    }

    /// Opens the store at `loc` for saving (see [`Store::open_write`]).
    pub fn open_write_at(loc: &Location) -> Result<Store> {
        match loc {
            Location::Sqlite(p) => Self::open_write(p),
            Location::Postgres(_) => {
                let s = Self::open_at(loc)?;
                let ok = s
                    .q(
                        "SELECT has_table_privilege('runs', 'INSERT') AND has_table_privilege('metrics', 'INSERT') AS ok",
                        &[],
                    )?
                    .first()
                    .and_then(|r| r.opt_i64("ok"))
                    == Some(1);
                if !ok {
                    return Err(Error::usage(format!(
                        "--db {loc}: the results store cannot be written (this user may not insert into its tables); use another --db or --no-save"
                    )));
                }
                Ok(s)
            }
        }
    }

    /// Opens (and creates or migrates to `target`) the store in the PostgreSQL database `url`.
    /// A server that cannot be reached is a usage error naming the store (exit 2), so a run
    /// refuses before measuring; a database whose `runs` table is not iolab's, or a store of a
    /// newer schema, is refused as with SQLite.
    #[doc(hidden)]
    pub fn open_pg(url: &str, target: i64) -> Result<Store> {
        let shown = mask_password(url);
        let path = PathBuf::from(&shown);
        let mut client = postgres::Client::connect(url, postgres::NoTls).map_err(|e| {
            let why = DbError::from(e);
            Error::usage(format!(
                "--db {shown}: cannot reach the PostgreSQL results store ({why}); start the server or fix the URL, or run with --no-save"
            ))
        })?;
        let bad = |e: DbError| db_err(&path, e);
        let mark = |c: &mut dyn Exec| -> DbResult<(bool, bool, i64)> {
            let r = c
                .query(
                    "SELECT to_regclass('iolab_store') IS NOT NULL AS ours, to_regclass('runs') IS NOT NULL AS runs",
                    &[],
                )?
                .remove(0);
            let ours = r.i64("ours") == 1;
            let version = if ours {
                c.query("SELECT version FROM iolab_store", &[])?
                    .first()
                    .map(|r| r.i64("version"))
                    .unwrap_or(0)
            } else {
                0
            };
            Ok((ours, r.i64("runs") == 1, version))
        };
        let (ours, runs, version) = mark(&mut client).map_err(bad)?;
        let not_ours = || {
            Error::usage(format!(
                "--db {shown}: not an iolab results store (the database has a table runs that iolab did not make; use another database)"
            ))
        };
        let newer = |v: i64| {
            Error::usage(format!(
                "--db {shown}: written by a newer iolab (store schema {v}, this iolab knows up to {SCHEMA_VERSION}); upgrade iolab or use another --db"
            ))
        };
        if !ours && runs {
            return Err(not_ours());
        }
        if version > SCHEMA_VERSION {
            return Err(newer(version));
        }
        if version < target {
            // Under an advisory lock, taken before the transaction begins (so its snapshot,
            // the catalog's included, sees what a process that held the lock made): hosts that
            // start together migrate once, the others wait and find the store made.
            Exec::query(
                &mut client,
                "SELECT pg_advisory_lock(?1)::text AS l",
                &[Val::I(PG_LOCK)],
            )
            .map_err(bad)?;
            let mut conn = Conn::Pg(Box::new(client));
            let r = conn.write_tx(|tx| {
                let (ours, runs, now) = mark(tx)?;
                if !ours && runs {
                    return Ok(Err(not_ours()));
                }
                if now > SCHEMA_VERSION {
                    return Ok(Err(newer(now)));
                }
                if !ours {
                    tx.exec(
                        "CREATE TABLE IF NOT EXISTS iolab_store (app TEXT NOT NULL, version BIGINT NOT NULL)",
                        &[],
                    )?;
                    tx.exec(
                        "INSERT INTO iolab_store SELECT 'iolab', 0 WHERE NOT EXISTS (SELECT 1 FROM iolab_store)",
                        &[],
                    )?;
                }
                for v in now..target {
                    for stmt in PG_MIGRATIONS[v as usize].split(';') {
                        if !stmt.trim().is_empty() {
                            tx.exec(stmt, &[]).map_err(|e| DbError {
                                msg: format!("migrating schema {v} -> {}: {e}", v + 1),
                                ..e
                            })?;
                        }
                    }
                }
                if now < target {
                    tx.exec("UPDATE iolab_store SET version = ?1", &[Val::I(target)])?;
                }
                Ok(Ok(()))
            });
            let _ = conn.exec_on().query(
                "SELECT pg_advisory_unlock(?1)::text AS l",
                &[Val::I(PG_LOCK)],
            );
            r.map_err(bad)??;
            return Ok(Store {
                conn: std::cell::RefCell::new(conn),
                path,
                loc: Location::Postgres(url.to_string()),
            });
        }
        Ok(Store {
            conn: std::cell::RefCell::new(Conn::Pg(Box::new(client))),
            path,
            loc: Location::Postgres(url.to_string()),
        })
    }

    /// The SQLite connection (the file-only checks: pages, pragmas).
    fn sqlite(&self) -> Option<std::cell::RefMut<'_, rusqlite::Connection>> {
        std::cell::RefMut::filter_map(self.conn.borrow_mut(), |c| match c {
            Conn::Sqlite(c) => Some(c),
            Conn::Pg(_) => None,
        })
        .ok()
    }

    /// Runs a statement that returns rows.
    fn q(&self, sql: &str, params: &[Val]) -> Result<Vec<Row>> {
        self.conn
            .borrow_mut()
            .exec_on()
            .query(sql, params)
            .map_err(|e| db_err(&self.path, e))
    }

    /// The first row of a statement, if any.
    fn q1(&self, sql: &str, params: &[Val]) -> Result<Option<Row>> {
        Ok(self.q(sql, params)?.into_iter().next())
    }

    /// Runs `f` in one write transaction (retried on PostgreSQL's serialization failures).
    fn write<T>(&self, f: impl FnMut(&mut dyn Exec) -> DbResult<T>) -> Result<T> {
        self.conn
            .borrow_mut()
            .write_tx(f)
            .map_err(|e| db_err(&self.path, e))
    }

    /// Opens the store for saving: also refuses a store that cannot be written (read-only file or
    /// filesystem), before any benchmark time is spent.
    pub fn open_write(path: &Path) -> Result<Store> {
        let s = Self::open(path)?;
        let (ro, probe) = {
            let c = s.sqlite().expect("an SQLite store");
            (
                c.is_readonly(rusqlite::MAIN_DB).unwrap_or(false),
                c.execute_batch("BEGIN IMMEDIATE; ROLLBACK;"),
            )
        };
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
        if std::fs::symlink_metadata(path).is_err() {
            create_atomically(path, target)?;
        }
        Self::open_file(path, target)
    }

    /// Opens an existing file (or one SQLite creates: the temporary of [`create_atomically`]).
    fn open_file(path: &Path, target: i64) -> Result<Store> {
        // A store is a regular file: /dev/null, a FIFO or a directory is refused (exit 2).
        if let Ok(md) = std::fs::metadata(path)
            && !md.is_file()
        {
            return Err(Error::usage(format!(
                "--db {}: not a regular file; give the path of an SQLite file (made when missing)",
                path.display()
            )));
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
        // The three marks are read in one read transaction: one snapshot, so a store another
        // process is initialising at this moment is seen before or after, never half made.
        conn.execute_batch("BEGIN DEFERRED").map_err(classify)?;
        let marks = (|| -> rusqlite::Result<(i64, i64, i64)> {
            Ok((
                conn.query_row("PRAGMA application_id", [], |r| r.get(0))?,
                conn.query_row("PRAGMA user_version", [], |r| r.get(0))?,
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?,
            ))
        })();
        let _ = conn.execute_batch("COMMIT");
        let (app, version, tables) = marks.map_err(classify)?;
        if app != APP_ID && (app != 0 || tables > 0 || version != 0) {
            return Err(not_ours());
        }
        if version > SCHEMA_VERSION {
            return Err(Error::usage(format!(
                "--db {}: written by a newer iolab (store schema {version}, this iolab knows up to {SCHEMA_VERSION}); upgrade iolab or use another --db",
                path.display()
            )));
        }
        let mut conn = conn;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| db_err(path, e))?;
        if version < target {
            migrate_sqlite(&mut conn, path, version, target)?;
        }
        // WAL lets readers and one writer work at once; readonly files fail here, clearly.
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| Error::usage(format!("--db {}: cannot write to the results store ({e}); use another --db or --no-save", path.display())))?;
        let _ = mode;
        Ok(Store {
            conn: std::cell::RefCell::new(Conn::Sqlite(conn)),
            path: path.to_path_buf(),
            loc: Location::Sqlite(path.to_path_buf()),
        })
    }
}

fn migrate_sqlite(conn: &mut Connection, path: &Path, from: i64, to: i64) -> Result<()> {
    if from >= to {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|e| {
            Error::usage(format!(
                "--db {}: cannot write to the results store ({e}); use another --db or --no-save",
                path.display()
            ))
        })?;
    // Another process may have migrated meanwhile.
    let now: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| db_err(path, e))?;
    for v in now.max(from)..to {
        tx.execute_batch(MIGRATIONS[v as usize])
            .map_err(|e| db_err(path, format!("migrating schema {v} -> {}: {e}", v + 1)))?;
    }
    tx.execute_batch(&format!(
        "PRAGMA application_id = {APP_ID}; PRAGMA user_version = {to};"
    ))
    .map_err(|e| db_err(path, e))?;
    tx.commit().map_err(|e| db_err(path, e))
}

impl Store {
    pub fn schema_version(&self) -> i64 {
        match self.sqlite() {
            Some(c) => c
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap_or(0),
            None => self
                .q1("SELECT version FROM iolab_store", &[])
                .ok()
                .flatten()
                .map(|r| r.i64("version"))
                .unwrap_or(0),
        }
    }

    /// Starts a repetition group.
    pub fn new_group(&mut self, kind: &str, label: Option<&str>, repeat: u32) -> Result<i64> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        self.write(|tx| insert_group(tx, kind, &now, label, i64::from(repeat), None))
    }

    /// Starts an experiment: a group with its definition (axes, options) as JSON.
    pub fn new_experiment(
        &mut self,
        kind: &str,
        label: Option<&str>,
        repeat: u32,
        spec: &serde_json::Value,
    ) -> Result<i64> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let spec = serde_json::to_string(spec).expect("json");
        self.write(|tx| insert_group(tx, kind, &now, label, i64::from(repeat), Some(&spec)))
    }

    /// An experiment's kind and definition.
    pub fn experiment(&self, gid: i64) -> Result<(String, Option<serde_json::Value>)> {
        let r = self
            .q1("SELECT kind, spec FROM groups WHERE id = ?1", &vals![gid])?
            .ok_or_else(|| unknown(&self.path, &format!("group g{gid}")))?;
        Ok((
            r.str("kind"),
            r.opt_str("spec")
                .and_then(|s| serde_json::from_str(&s).ok()),
        ))
    }

    /// Marks a saved run as one cell of an experiment.
    pub fn set_cell(&mut self, id: i64, cell: &serde_json::Value) -> Result<()> {
        let cell = serde_json::to_string(cell).expect("json");
        self.write(|tx| {
            tx.exec(
                "UPDATE runs SET cell = ?1 WHERE id = ?2",
                &vals![cell.as_str(), id],
            )
        })?;
        Ok(())
    }

    /// The cell of a run, when it belongs to an experiment.
    pub fn cell(&self, id: i64) -> Result<Option<serde_json::Value>> {
        Ok(self
            .q1("SELECT cell FROM runs WHERE id = ?1", &vals![id])?
            .and_then(|r| r.opt_str("cell"))
            .and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// Saves one `iolab run` in one transaction. `json` is the document as printed. The run's
    /// id (that of the run saved before when the store holds its document id already).
    pub fn save_run(
        &mut self,
        doc: &RunDoc,
        json: &serde_json::Value,
        group: Option<(i64, u32)>,
        cell: Option<&serde_json::Value>,
    ) -> Result<i64> {
        Ok(self.save_run_once(doc, json, group, cell)?.id)
    }

    /// [`Store::save_run`], saying whether the store held the document already (its
    /// [`doc_id`]): then nothing is saved.
    pub fn save_run_once(
        &mut self,
        doc: &RunDoc,
        json: &serde_json::Value,
        group: Option<(i64, u32)>,
        cell: Option<&serde_json::Value>,
    ) -> Result<Saved> {
        let run = RunIn {
            doc_id: Some(doc_id(json)),
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
        };
        // A phase of concurrent roles is stored as one cell per role (`role` names it).
        let flat = crate::model::run::flat_cells(&doc.runs);
        self.write(|tx| {
            let saved = insert_run(tx, &run)?;
            if saved.already {
                return Ok(saved);
            }
            let id = saved.id;
            insert_tags(tx, id, &doc.tags)?;
            for (ci, (role, c)) in flat.iter().enumerate() {
                for k in OpKind::ALL {
                    let r = c.results.get(k);
                    if r.ops == 0 {
                        continue;
                    }
                    let l = r.lat_ns.as_ref();
                    insert_metric(
                        tx,
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
                    )?;
                    if let Some(h) = c.lat_hists.get(k as usize).filter(|h| h.count() > 0) {
                        insert_hist(tx, id, ci as i64, k.name(), h)?;
                    }
                }
            }
            Ok(saved)
        })
    }

    /// Saves an `iolab db` run in one transaction; `json` is the document as printed.
    pub fn save_db(
        &mut self,
        doc: &crate::model::db::DbDoc,
        json: &serde_json::Value,
        host: &str,
    ) -> Result<i64> {
        Ok(self.save_db_once(doc, json, host)?.id)
    }

    /// [`Store::save_db`], saying whether the store held the document already.
    pub fn save_db_once(
        &mut self,
        doc: &crate::model::db::DbDoc,
        json: &serde_json::Value,
        host: &str,
    ) -> Result<Saved> {
        let run = RunIn {
            doc_id: Some(doc_id(json)),
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
        };
        self.write(|tx| {
            let saved = insert_run(tx, &run)?;
            if saved.already {
                return Ok(saved);
            }
            let id = saved.id;
            insert_tags(tx, id, &doc.tags)?;
            for (name, r) in &doc.types {
                let l = r.lat_ns.as_ref();
                insert_metric(
                    tx,
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
                )?;
                if let Some(h) = doc.hist.as_ref().filter(|h| h.count() > 0) {
                    insert_hist(tx, id, 0, name, h)?;
                }
            }
            Ok(saved)
        })
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
        let metrics = Self::suite_metrics(name, doc)?;
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let stored = serde_json::json!({"suite": name, "result": doc});
        let run = RunIn {
            doc_id: None,
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
            doc: &stored,
            env: Some(serde_json::json!({"run": {"host": host}, "system": system})),
            group: None,
            cell: None,
        };
        self.write(|tx| {
            let id = insert_run(tx, &run)?.id;
            for (ci, m) in metrics.iter().enumerate() {
                insert_metric(
                    tx,
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
                .map_err(|e| DbError {
                    msg: format!("{name} {}: {e}", m.mode),
                    ..e
                })?;
            }
            Ok(id)
        })
    }

    /// Saves a `crashcheck write` or `verify` document (kind `crashcheck`, `modes` = the phase).
    /// It has no metrics rows: what it says is a count of lost records, not a speed.
    pub fn save_crashcheck(
        &mut self,
        doc: &crate::model::crashcheck::CrashDoc,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let json = serde_json::to_value(doc).map_err(|e| Error::failed(e.to_string()))?;
        let run = RunIn {
            doc_id: None,
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
        };
        self.write(|tx| insert_run(tx, &run).map(|s| s.id))
    }

    /// Saves an `iolab verify --dir` document (kind `verify`, `modes` = `verify`), with its
    /// label and tags. Like a crashcheck it has no metrics rows: it says what it found, not a speed.
    pub fn save_verify(
        &mut self,
        doc: &crate::model::verify::VerifyDoc,
        json: &serde_json::Value,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        Ok(self.save_verify_once(doc, json, system)?.id)
    }

    /// [`Store::save_verify`], saying whether the store held the document already.
    pub fn save_verify_once(
        &mut self,
        doc: &crate::model::verify::VerifyDoc,
        json: &serde_json::Value,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<Saved> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let run = RunIn {
            doc_id: Some(doc_id(json)),
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
        };
        self.write(|tx| {
            let saved = insert_run(tx, &run)?;
            if !saved.already {
                insert_tags(tx, saved.id, &doc.tags)?;
            }
            Ok(saved)
        })
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
        let start = imp.start_time.clone().unwrap_or_else(|| {
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        });
        let run = RunIn {
            doc_id: None,
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
        };
        // The histograms of imported latency bins, made before the transaction.
        let mut hists: Vec<(i64, &str, LatHist)> = Vec::new();
        for (ci, c) in imp.cells.iter().enumerate() {
            for o in &c.ops {
                if let Some(bins) = &o.hist_bins {
                    let mut h = LatHist::new();
                    for &(v, n) in bins {
                        let _ =
                            h.h.record_n(v.clamp(1, crate::measure::hist::MAX_TRACKED_NS), n);
                    }
                    if h.count() > 0 {
                        hists.push((ci as i64, &o.op, h));
                    }
                }
            }
        }
        self.write(|tx| {
            let id = insert_run(tx, &run)?.id;
            insert_tags(tx, id, tags)?;
            for (ci, c) in imp.cells.iter().enumerate() {
                for o in &c.ops {
                    let l = o.lat_ns.as_ref();
                    insert_metric(
                        tx,
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
                    .map_err(|e| DbError {
                        msg: format!("cell {ci} op {}: {e}", o.op),
                        ..e
                    })?;
                }
            }
            for (ci, op, h) in &hists {
                insert_hist(tx, id, *ci, op, h)?;
            }
            Ok(id)
        })
    }

    fn row_to_run(r: &Row) -> RunRow {
        let group_id = r.opt_i64("group_id");
        RunRow {
            id: r.i64("id"),
            group: group_id.map(|g| format!("g{g}")),
            group_id,
            kind: r.str("kind"),
            tool: r.str("tool"),
            tool_version: r.str("tool_version"),
            start_time: r.str("start_time"),
            end_time: r.opt_str("end_time"),
            host: r.str("host"),
            label: r.opt_str("label"),
            modes: r
                .str("modes")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            tags: Default::default(),
            interrupted: r.i64("interrupted") != 0,
        }
    }

    fn fill_tags(&self, run: &mut RunRow) -> Result<()> {
        for r in self.q(
            "SELECT key, value FROM tags WHERE run_id = ?1 ORDER BY key",
            &vals![run.id],
        )? {
            run.tags.insert(r.str("key"), r.str("value"));
        }
        Ok(())
    }

    /// Runs matching the filter, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<RunRow>> {
        let mut sql = String::from("SELECT * FROM runs WHERE 1=1");
        let mut args: Vec<Val> = Vec::new();
        let arg = |v: String, args: &mut Vec<Val>| {
            args.push(Val::T(v));
            args.len()
        };
        if let Some(l) = &f.label {
            let n = arg(l.clone(), &mut args);
            sql.push_str(&format!(" AND label = ?{n}"));
        }
        if let Some(m) = &f.mode {
            let n = arg(format!("%,{m},%"), &mut args);
            sql.push_str(&format!(" AND modes LIKE ?{n}"));
        }
        if let Some(h) = &f.host {
            let n = arg(h.clone(), &mut args);
            sql.push_str(&format!(" AND host = ?{n}"));
        }
        if let Some(s) = &f.since {
            let n = arg(s.clone(), &mut args);
            sql.push_str(&format!(" AND start_time >= ?{n}"));
        }
        for (k, v) in &f.tags {
            let a = arg(k.clone(), &mut args);
            let b = arg(v.clone(), &mut args);
            sql.push_str(&format!(" AND EXISTS (SELECT 1 FROM tags t WHERE t.run_id = runs.id AND t.key = ?{a} AND t.value = ?{b})"));
        }
        sql.push_str(" ORDER BY start_time DESC, id DESC");
        if let Some(n) = f.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut rows: Vec<RunRow> = self.q(&sql, &args)?.iter().map(Self::row_to_run).collect();
        for r in &mut rows {
            self.fill_tags(r)?;
        }
        Ok(rows)
    }

    /// One run's row, or a usage error naming the id.
    pub fn run(&self, id: i64) -> Result<RunRow> {
        let mut r = self
            .q1("SELECT * FROM runs WHERE id = ?1", &vals![id])?
            .map(|r| Self::row_to_run(&r))
            .ok_or_else(|| unknown(&self.path, &format!("run {id}")))?;
        self.fill_tags(&mut r)?;
        Ok(r)
    }

    /// The first run of `kind` whose stored document is `doc` exactly (an import of the same
    /// file, a run document imported again).
    pub fn same_doc(&self, kind: &str, doc: &serde_json::Value) -> Result<Option<i64>> {
        Ok(self
            .q1(
                "SELECT id FROM runs WHERE kind = ?1 AND doc = ?2 ORDER BY id LIMIT 1",
                &vals![kind, serde_json::to_string(doc).unwrap_or_default()],
            )?
            .map(|r| r.i64("id")))
    }

    /// The stored document of a run.
    pub fn doc(&self, id: i64) -> Result<serde_json::Value> {
        let s = self
            .q1("SELECT doc FROM runs WHERE id = ?1", &vals![id])?
            .map(|r| r.str("doc"))
            .ok_or_else(|| unknown(&self.path, &format!("run {id}")))?;
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
        Ok(self
            .q1("SELECT env FROM runs WHERE id = ?1", &vals![id])?
            .and_then(|r| r.opt_str("env"))
            .and_then(|s| serde_json::from_str(&s).ok()))
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
        Ok(self
            .q("SELECT * FROM metrics WHERE run_id = ?1 ORDER BY cell, CASE op WHEN 'read' THEN 0 WHEN 'write' THEN 1 WHEN 'fsync' THEN 2 ELSE 3 END", &vals![id])?
            .iter()
            .map(|r| MetricRow {
                run_id: r.i64("run_id"),
                cell: r.i64("cell"),
                mode: r.str("mode"),
                role: r.opt_str("role"),
                op: r.str("op"),
                threads: r.opt_i64("threads"),
                bs_bytes: r.opt_i64("bs_bytes"),
                ops: r.i64("ops"),
                bytes: r.i64("bytes"),
                iops: r.f64("iops"),
                bytes_per_sec: r.f64("bytes_per_sec"),
                lat_min_ns: r.opt_f64("lat_min_ns"),
                lat_mean_ns: r.opt_f64("lat_mean_ns"),
                lat_max_ns: r.opt_f64("lat_max_ns"),
                lat_stddev_ns: r.opt_f64("lat_stddev_ns"),
                lat_p50_ns: r.opt_f64("lat_p50_ns"),
                lat_p90_ns: r.opt_f64("lat_p90_ns"),
                lat_p95_ns: r.opt_f64("lat_p95_ns"),
                lat_p99_ns: r.opt_f64("lat_p99_ns"),
                lat_p99_9_ns: r.opt_f64("lat_p99_9_ns"),
                lat_p99_99_ns: r.opt_f64("lat_p99_99_ns"),
            })
            .collect())
    }

    /// A stored latency histogram of one run × cell × op.
    pub fn histogram(&self, id: i64, cell: i64, op: &str) -> Result<Option<LatHist>> {
        let blob = self
            .q1(
                "SELECT hdr FROM histograms WHERE run_id = ?1 AND cell = ?2 AND op = ?3",
                &vals![id, cell, op],
            )?
            .and_then(|r| r.opt_blob("hdr"));
        blob.map(|b| {
            deserialize_hist(&b).map_err(|e| db_err(&self.path, format!("run {id} histogram: {e}")))
        })
        .transpose()
    }

    /// Run ids of a group, in repetition order.
    pub fn group_runs(&self, gid: i64) -> Result<Vec<i64>> {
        let ids: Vec<i64> = self
            .q(
                "SELECT id FROM runs WHERE group_id = ?1 ORDER BY seq, id",
                &vals![gid],
            )?
            .iter()
            .map(|r| r.i64("id"))
            .collect();
        if ids.is_empty() {
            return Err(unknown(&self.path, &format!("group g{gid}")));
        }
        Ok(ids)
    }

    /// Deletes group `gid` when no run is in it (an experiment refused before its first point).
    pub fn delete_empty_group(&mut self, gid: i64) -> Result<()> {
        self.write(|tx| {
            tx.exec(
                "DELETE FROM groups WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.group_id = ?1)",
                &vals![gid],
            )?;
            Ok(())
        })
    }

    /// Deletes a run (with its metrics, tags and histograms).
    pub fn delete(&mut self, id: i64) -> Result<()> {
        self.run(id)?;
        self.write(|tx| {
            tx.exec("DELETE FROM runs WHERE id = ?1", &vals![id])?;
            tx.exec("DELETE FROM groups WHERE NOT EXISTS (SELECT 1 FROM runs WHERE runs.group_id = groups.id)", &[])?;
            Ok(())
        })
    }
}

/// Creates a new SQLite store at `path` so that no other process ever sees it half made: the
/// schema is written into a temporary file beside it, which is then hard-linked to `path` (an
/// atomic create that fails when `path` appeared meanwhile: another process made the store first,
/// and that one is used). Filesystems without hard links get `renameat2(RENAME_NOREPLACE)`.
fn create_atomically(path: &Path, target: i64) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results.db".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{name}.creating-{}-{nanos}", std::process::id()));
    let remove_tmp = || {
        for sfx in ["", "-wal", "-shm", "-journal"] {
            let mut p = tmp.as_os_str().to_owned();
            p.push(sfx);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    };
    let made = Store::open_file(&tmp, target).and_then(|s| {
        // Closing checkpoints the WAL and removes -wal/-shm: the file alone is the store.
        match s.conn.into_inner() {
            Conn::Sqlite(c) => c.close(),
            Conn::Pg(_) => Ok(()),
        }
        .map_err(|(_, e)| db_err(path, format!("creating the store: {e}")))
    });
    if let Err(mut e) = made {
        remove_tmp();
        // The message names the store asked for, not the temporary.
        e.msg = e
            .msg
            .replace(&tmp.display().to_string(), &path.display().to_string());
        return Err(e);
    }
    let linked = match std::fs::hard_link(&tmp, path) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => rename_noreplace(&tmp, path),
        r => r,
    };
    remove_tmp();
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::usage(format!(
            "--db {}: cannot create the results store: {e}",
            path.display()
        ))),
    }
}

/// `rename(from, to)` that fails with `AlreadyExists` instead of replacing `to`.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: two valid NUL-terminated paths, relative to the working directory.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// One row of `runs`, whatever made it (run, db, suite, import).
struct RunIn<'a> {
    /// The document's id ([`doc_id`]); None: a document made here and saved now (a suite, a
    /// crashcheck, an import of a tool's output), which gets a new one.
    doc_id: Option<String>,
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

/// A document saved: its run id, and whether the store held it already (its document id), in
/// which case nothing was saved and `id` is the run saved before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saved {
    pub id: i64,
    pub already: bool,
}

/// The id a document is saved under (`runs.doc_id`): its `doc_id` when that is one iolab made
/// (32 lowercase hex digits, [`crate::model::new_doc_id`]), else (a document of an iolab before
/// document ids) the SHA-256 of the document as stored, 64 hex digits: the same document gets
/// the same id wherever it is saved from.
pub fn doc_id(doc: &serde_json::Value) -> String {
    match doc.get("doc_id").and_then(|v| v.as_str()) {
        Some(id)
            if id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
        {
            id.to_string()
        }
        _ => hash_id(&serde_json::to_string(doc).unwrap_or_default()),
    }
}

/// SHA-256 of `text`, in hex.
fn hash_id(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The one `INSERT INTO runs`, or none when the store holds the document id already (insert or
/// skip, in the caller's transaction: two savers of one document never both insert it).
fn insert_run(c: &mut dyn Exec, r: &RunIn) -> DbResult<Saved> {
    let json = |v: &serde_json::Value| serde_json::to_string(v).unwrap_or_default();
    let key = r.doc_id.clone().unwrap_or_else(crate::model::new_doc_id);
    // A document without an id of its own (an older iolab's) may be stored already by an iolab
    // before schema 6, with no id: the same document is that run.
    if key.len() == 64
        && let Some(row) = c.query_opt(
            "SELECT id FROM runs WHERE doc_id IS NULL AND start_time = ?1 AND kind = ?2 AND doc = ?3 ORDER BY id LIMIT 1",
            &vals![r.start_time, r.kind, json(r.doc)],
        )?
    {
        return Ok(Saved {
            id: row.i64("id"),
            already: true,
        });
    }
    let row = c.query(
        "INSERT INTO runs (kind, tool, tool_version, start_time, end_time, host, label, modes, interrupted, doc, env, group_id, seq, cell, doc_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) ON CONFLICT (doc_id) DO NOTHING RETURNING id",
        &vals![
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
            r.group.map(|g| i64::from(g.1)),
            r.cell.map(json),
            key.as_str(),
        ],
    )?;
    if let Some(row) = row.first() {
        return Ok(Saved {
            id: row.i64("id"),
            already: false,
        });
    }
    let id = c
        .query_opt(
            "SELECT id FROM runs WHERE doc_id = ?1",
            &vals![key.as_str()],
        )?
        .map(|r| r.i64("id"))
        .unwrap_or(0);
    Ok(Saved { id, already: true })
}

/// The one `INSERT INTO groups`; returns the new group id.
fn insert_group(
    c: &mut dyn Exec,
    kind: &str,
    created: &str,
    label: Option<&str>,
    repeat: i64,
    spec: Option<&str>,
) -> DbResult<i64> {
    let row = c.query(
        "INSERT INTO groups (kind, created, label, repeat, spec, uid) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        &vals![kind, created, label, repeat, spec, crate::model::new_doc_id()],
    )?;
    Ok(row.first().map(|r| r.i64("id")).unwrap_or(0))
}

fn insert_tags(
    tx: &mut dyn Exec,
    run_id: i64,
    tags: &std::collections::BTreeMap<String, String>,
) -> DbResult<()> {
    for (k, v) in tags {
        tx.exec(
            "INSERT INTO tags (run_id, key, value) VALUES (?1, ?2, ?3)",
            &vals![run_id, k.as_str(), v.as_str()],
        )?;
    }
    Ok(())
}

fn insert_hist(tx: &mut dyn Exec, run_id: i64, cell: i64, op: &str, h: &LatHist) -> DbResult<u64> {
    tx.exec(
        "INSERT INTO histograms (run_id, cell, op, hdr) VALUES (?1, ?2, ?3, ?4)",
        &vals![run_id, cell, op, serialize_hist(h)],
    )
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

fn insert_metric(tx: &mut dyn Exec, run_id: i64, m: &MetricIn) -> DbResult<u64> {
    let l = &m.lat;
    tx.exec(
        "INSERT INTO metrics (run_id, cell, mode, op, threads, bs_bytes, ops, bytes, iops, bytes_per_sec,
            lat_min_ns, lat_mean_ns, lat_max_ns, lat_stddev_ns, lat_p50_ns, lat_p90_ns, lat_p95_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, role)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
        &vals![run_id, m.cell, m.mode, m.op, m.threads, m.bs_bytes, m.ops, m.bytes, m.iops, m.bytes_per_sec, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], m.role],
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

/// What `store copy` did: (id in the source, id in the destination) of each run.
#[derive(Debug, Default)]
pub struct CopyReport {
    pub copied: Vec<(i64, i64)>,
    /// Runs the destination held already (copied before): not copied again.
    pub already: Vec<(i64, i64)>,
}

/// `INSERT INTO table (cols...) VALUES (...)` of a row read back, without the columns in `skip`
/// and with `set` replacing the values of the columns it names (or adding them, when the row has
/// no such column: an older store's). With `unique`, nothing is inserted when a row with the
/// same value of that column exists (insert or skip). `returning`: the new row's id (None:
/// skipped).
fn insert_row(
    tx: &mut dyn Exec,
    table: &str,
    row: &Row,
    skip: &[&str],
    set: &[(&str, Val)],
    unique: Option<&str>,
    returning: bool,
) -> DbResult<Option<i64>> {
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    for (name, v) in &row.cols {
        if skip.contains(&name.as_str()) || set.iter().any(|s| s.0 == name) {
            continue;
        }
        cols.push(name.as_str());
        vals.push(v.clone());
    }
    for (name, v) in set {
        cols.push(name);
        vals.push(v.clone());
    }
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({}){}{}",
        cols.join(", "),
        marks.join(", "),
        unique
            .map(|u| format!(" ON CONFLICT ({u}) DO NOTHING"))
            .unwrap_or_default(),
        if returning { " RETURNING id" } else { "" }
    );
    if returning {
        Ok(tx.query(&sql, &vals)?.first().map(|r| r.i64("id")))
    } else {
        tx.exec(&sql, &vals)?;
        Ok(None)
    }
}

/// The id of a group of a source store in `store copy`: its `uid`, else (a group of a store
/// before schema 6) a hash of what it is.
fn group_uid(g: &Row) -> String {
    g.opt_str("uid").unwrap_or_else(|| {
        let f = |n: &str| match g.get(n) {
            Val::T(s) => s.clone(),
            Val::I(i) => i.to_string(),
            _ => String::new(),
        };
        hash_id(&format!(
            "iolab-group\0{}\0{}\0{}\0{}\0{}",
            f("kind"),
            f("created"),
            f("label"),
            f("repeat"),
            f("spec")
        ))
    })
}

/// The destination's group for the source's group `g` (in the transaction that copies a run):
/// the one with its uid, else (copied by an iolab before schema 6) the one that is the same
/// (kind, creation time, repeat, label), else a new one, inserted or skipped by its uid.
fn copy_group(tx: &mut dyn Exec, g: &Row) -> DbResult<i64> {
    let uid = group_uid(g);
    let by_uid = |tx: &mut dyn Exec| -> DbResult<Option<i64>> {
        Ok(tx
            .query_opt("SELECT id FROM groups WHERE uid = ?1", &vals![uid.as_str()])?
            .map(|r| r.i64("id")))
    };
    if let Some(id) = by_uid(tx)? {
        return Ok(id);
    }
    if let Some(r) = tx.query_opt(
        "SELECT id FROM groups WHERE uid IS NULL AND kind = ?1 AND created = ?2 AND repeat = ?3 AND coalesce(label, '') = coalesce(?4, '') ORDER BY id LIMIT 1",
        &[
            g.get("kind").clone(),
            g.get("created").clone(),
            g.get("repeat").clone(),
            g.get("label").clone(),
        ],
    )? {
        return Ok(r.i64("id"));
    }
    match insert_row(
        tx,
        "groups",
        g,
        &["id"],
        &[("uid", Val::T(uid.clone()))],
        Some("uid"),
        true,
    )? {
        Some(id) => Ok(id),
        None => Ok(by_uid(tx)?.unwrap_or(0)),
    }
}

impl Store {
    /// Copies every run of this store into `dst` (`iolab store copy`), oldest first, each in one
    /// transaction of `dst` with its tags, metrics, histograms and group (made in `dst` once, the
    /// runs' places in it kept). Each run is copied under the source's document id (its
    /// `doc_id`, else a hash of its document), a unique key of `dst`: a run `dst` holds already
    /// (copied before, or by another copy running at the same time) is skipped in the same
    /// transaction, so a repeated copy adds nothing and two at once copy each run once. A run
    /// copied by an iolab before schema 6 (no document id) is recognised by what it is (kind,
    /// start time, host, document).
    pub fn copy_into(&self, dst: &mut Store) -> Result<CopyReport> {
        let mut report = CopyReport::default();
        let mut groups: std::collections::HashMap<i64, Row> = Default::default();
        for run in self.q("SELECT * FROM runs ORDER BY id", &[])? {
            let id = run.i64("id");
            let key = run
                .opt_str("doc_id")
                .unwrap_or_else(|| hash_id(&run.str("doc")));
            let group = match run.opt_i64("group_id") {
                None => None,
                Some(g) => Some(match groups.entry(g) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => e.insert(
                        self.q1("SELECT * FROM groups WHERE id = ?1", &vals![g])?
                            .ok_or_else(|| unknown(&self.path, &format!("group g{g}")))?,
                    ),
                }),
            };
            let tags = self.q("SELECT * FROM tags WHERE run_id = ?1", &vals![id])?;
            let metrics = self.q("SELECT * FROM metrics WHERE run_id = ?1", &vals![id])?;
            let hists = self.q("SELECT * FROM histograms WHERE run_id = ?1", &vals![id])?;
            let saved = dst.write(|tx| {
                let there = match tx.query_opt(
                    "SELECT id FROM runs WHERE doc_id = ?1",
                    &vals![key.as_str()],
                )? {
                    Some(r) => Some(r),
                    None => tx.query_opt(
                        "SELECT id FROM runs WHERE doc_id IS NULL AND start_time = ?1 AND kind = ?2 AND host = ?3 AND doc = ?4 ORDER BY id LIMIT 1",
                        &[
                            run.get("start_time").clone(),
                            run.get("kind").clone(),
                            run.get("host").clone(),
                            run.get("doc").clone(),
                        ],
                    )?,
                };
                if let Some(t) = there {
                    return Ok(Saved {
                        id: t.i64("id"),
                        already: true,
                    });
                }
                let dg = group.as_deref().map(|g| copy_group(tx, g)).transpose()?;
                let Some(new) = insert_row(
                    tx,
                    "runs",
                    &run,
                    &["id"],
                    &[("group_id", dg.into()), ("doc_id", Val::T(key.clone()))],
                    Some("doc_id"),
                    true,
                )?
                else {
                    // another copy saved it since this transaction looked
                    let id = tx
                        .query_opt("SELECT id FROM runs WHERE doc_id = ?1", &vals![key.as_str()])?
                        .map(|r| r.i64("id"))
                        .unwrap_or(0);
                    return Ok(Saved { id, already: true });
                };
                for (table, rows) in [
                    ("tags", &tags),
                    ("metrics", &metrics),
                    ("histograms", &hists),
                ] {
                    for r in rows {
                        insert_row(tx, table, r, &[], &[("run_id", Val::I(new))], None, false)?;
                    }
                }
                Ok(Saved {
                    id: new,
                    already: false,
                })
            })?;
            if saved.already {
                report.already.push((id, saved.id));
            } else {
                report.copied.push((id, saved.id));
            }
        }
        Ok(report)
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A document's own id is its id; one without a well-formed one is known by the SHA-256 of
    /// the document as stored, the same wherever it is saved from.
    #[test]
    fn a_document_is_known_by_its_id_or_its_hash() {
        let id = crate::model::new_doc_id();
        assert_eq!(id.len(), 32);
        assert_ne!(id, crate::model::new_doc_id());
        let doc = serde_json::json!({"schema": "iolab-run/1", "doc_id": id, "label": "a"});
        assert_eq!(doc_id(&doc), id);
        let old = serde_json::json!({"schema": "iolab-run/1", "label": "a"});
        let h = doc_id(&old);
        assert_eq!(h.len(), 64);
        assert_eq!(h, hash_id(&serde_json::to_string(&old).unwrap()));
        let reread: serde_json::Value =
            serde_json::from_str(&serde_json::to_string_pretty(&old).unwrap()).unwrap();
        assert_eq!(
            doc_id(&reread),
            h,
            "the same document, however it was spelled"
        );
        for bad in ["ABC", "x", &id.to_uppercase(), &format!("{id}0")] {
            let d = serde_json::json!({"doc_id": bad});
            assert_eq!(doc_id(&d).len(), 64, "{bad}");
        }
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
