//! Opening a store: an SQLite file (created atomically, its marks read in one snapshot, migrated,
//! WAL) or a PostgreSQL database (created and migrated under an advisory lock), and the checks
//! that refuse a store a command cannot use before any benchmark time is spent.

use super::backend::{Conn, DbError, DbResult, Dialect, Exec, Val};
use super::integrity::CheckStamp;
use super::location::{Location, mask_password};
use super::schema::{migrate_sqlite, migration};
use super::{APP_ID, SCHEMA_VERSION, Store, damaged, db_err};
use crate::error::{Error, Result};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

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
                    for stmt in migration(v, Dialect::Postgres).split(';') {
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
