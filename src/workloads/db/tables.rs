//! iolab's tables of `iolab db`: created and loaded (sysbench's layout and random strings),
//! recognised by their meta table, dropped; SQLite database files iolab created marked and
//! removed.

use super::{Backend, Conn, DbErr, TABLE_LAYOUT};
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub fn table(i: u32) -> String {
    format!("iolab_sbtest{i}")
}

fn create_sql(b: Backend, t: &str) -> String {
    match b {
        Backend::Sqlite => format!(
            "CREATE TABLE {t} (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c TEXT NOT NULL DEFAULT '', pad TEXT NOT NULL DEFAULT ''); CREATE INDEX k_{t} ON {t}(k);"
        ),
        Backend::Postgres => format!(
            "CREATE TABLE {t} (id BIGSERIAL PRIMARY KEY, k BIGINT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT ''); CREATE INDEX k_{t} ON {t}(k);"
        ),
        Backend::Mysql => format!(
            "CREATE TABLE {t} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, k BIGINT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_{t} (k)) ENGINE=InnoDB"
        ),
    }
}

/// sysbench-like random strings: groups of 11 digits separated by dashes.
pub fn rand_str(rng: &mut crate::spec::dist::Rng, len: usize) -> String {
    let mut s = String::with_capacity(len);
    rand_fill(rng, len, &mut s);
    s
}

/// Replaces `s` with sysbench-style digits of `len` characters (its capacity is reused).
pub(super) fn rand_fill(rng: &mut crate::spec::dist::Rng, len: usize, s: &mut String) {
    use rand::RngExt;
    s.clear();
    while s.len() < len {
        if !s.is_empty() && s.len() % 12 == 11 {
            s.push('-');
        } else {
            s.push((b'0' + rng.random_range(0..10u8)) as char);
        }
    }
}

fn meta(c: &mut dyn Conn, b: Backend) -> Option<BTreeMap<String, String>> {
    let q = if b == Backend::Mysql {
        "SELECT CONCAT(k, '=', v) FROM iolab_db_meta"
    } else {
        "SELECT k || '=' || v FROM iolab_db_meta"
    };
    let rows = c.strings(q).ok()?;
    Some(
        rows.iter()
            .filter_map(|r| r.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn table_exists(c: &mut dyn Conn, t: &str) -> bool {
    c.strings(&format!("SELECT COUNT(*) FROM {t} WHERE 1 = 0"))
        .is_ok()
}

/// What `prepare` found or did.
#[derive(Debug, Clone, Serialize)]
pub struct Prepared {
    pub reused: bool,
    pub rows_loaded: u64,
    pub seconds: f64,
}

/// Creates and loads `tables` tables of `size` rows (reused when iolab's meta says they are
/// there). Tables of another layout are refused.
pub fn prepare(
    c: &mut dyn Conn,
    b: Backend,
    tables: u32,
    size: u64,
    quiet: bool,
    stop: &AtomicBool,
) -> Result<Prepared> {
    let t0 = Instant::now();
    let fail = |e: DbErr| Error::failed(format!("prepare: {e}"));
    if let Some(m) = meta(c, b) {
        let layout = m.get("layout").and_then(|v| v.parse::<i64>().ok());
        if layout != Some(TABLE_LAYOUT) {
            return Err(Error::usage(format!(
                "the database holds iolab tables of another layout (version {}; this iolab uses {TABLE_LAYOUT}): run `iolab db cleanup` with the same --url first",
                m.get("layout").cloned().unwrap_or_else(|| "?".into())
            )));
        }
        let (mt, ms) = (
            m.get("tables").cloned().unwrap_or_default(),
            m.get("table_size").cloned().unwrap_or_default(),
        );
        if mt == tables.to_string()
            && ms == size.to_string()
            && (1..=tables).all(|i| table_exists(c, &table(i)))
        {
            return Ok(Prepared {
                reused: true,
                rows_loaded: 0,
                seconds: 0.0,
            });
        }
        return Err(Error::usage(format!(
            "the database holds iolab tables prepared with --tables {mt} --table-size {ms}: use those values, or run `iolab db cleanup` first"
        )));
    }
    for i in 1..=tables {
        if table_exists(c, &table(i)) {
            return Err(Error::usage(format!(
                "table {} exists but was not made by this iolab (no iolab_db_meta): an older or other schema; drop it or run `iolab db cleanup` with the same --url",
                table(i)
            )));
        }
    }
    let bar = crate::engine::fileset::progress_bar(tables as u64 * size, quiet, "load rows");
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} rows, eta {eta}")
            .expect("template")
            .progress_chars("=> "),
    );
    let mut rng = crate::spec::dist::thread_rng(42, 0);
    use rand::RngExt;
    for i in 1..=tables {
        let t = table(i);
        c.exec(&create_sql(b, &t)).map_err(fail)?;
        let mut id = 1u64;
        while id <= size {
            if stop.load(Ordering::Relaxed) {
                let _ = cleanup(c, b, tables.max(i));
                return Err(Error::interrupted(
                    "interrupted during db prepare; the tables were dropped",
                ));
            }
            let n = (size - id + 1).min(1000);
            let mut q = format!("INSERT INTO {t} (id, k, c, pad) VALUES ");
            for j in 0..n {
                if j > 0 {
                    q.push(',');
                }
                let k = rng.random_range(1..=size.max(1));
                q.push_str(&format!(
                    "({}, {k}, '{}', '{}')",
                    id + j,
                    rand_str(&mut rng, 119),
                    rand_str(&mut rng, 59)
                ));
            }
            c.exec("BEGIN").map_err(fail)?;
            c.exec(&q).map_err(fail)?;
            c.exec("COMMIT").map_err(fail)?;
            id += n;
            bar.inc(n);
        }
        if b == Backend::Postgres {
            c.exec(&format!(
                "SELECT setval(pg_get_serial_sequence('{t}', 'id'), (SELECT MAX(id) FROM {t}))"
            ))
            .map_err(fail)?;
        }
    }
    bar.finish_and_clear();
    c.exec("CREATE TABLE iolab_db_meta (k VARCHAR(64) PRIMARY KEY, v VARCHAR(255))")
        .map_err(fail)?;
    c.exec(&format!(
        "INSERT INTO iolab_db_meta (k, v) VALUES ('layout', '{TABLE_LAYOUT}'), ('tables', '{tables}'), ('table_size', '{size}')"
    ))
    .map_err(fail)?;
    Ok(Prepared {
        reused: false,
        rows_loaded: tables as u64 * size,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Drops iolab's tables (and only those). Returns how many.
pub fn cleanup(c: &mut dyn Conn, b: Backend, max_tables: u32) -> Result<u32> {
    let n = meta(c, b)
        .and_then(|m| m.get("tables").and_then(|v| v.parse::<u32>().ok()))
        .unwrap_or(0)
        .max(max_tables);
    let mut dropped = 0;
    for i in 1..=n.max(1) {
        let t = table(i);
        if table_exists(c, &t) {
            c.exec(&format!("DROP TABLE {t}"))
                .map_err(|e| Error::failed(format!("cleanup: {e}")))?;
            dropped += 1;
        }
    }
    let _ = c.exec("DROP TABLE iolab_db_meta");
    let _ = c.exec("DROP TABLE iolab_update_loop");
    Ok(dropped)
}

/// SQLite's `application_id` in the header of a database file iolab created (ASCII "iolb"):
/// `iolab db cleanup` removes such a file once its tables are gone, never a file the user had.
pub const SQLITE_APP_ID: i64 = 0x696f_6c62;

/// Marks a SQLite database file as created by iolab (its `application_id`).
pub fn mark_created(c: &mut dyn Conn) -> Result<()> {
    c.exec(&format!("PRAGMA application_id = {SQLITE_APP_ID}"))
        .map_err(|e| Error::failed(format!("sqlite: {e}")))
}

/// Whether the SQLite database was created by iolab and holds no tables any more.
pub fn sqlite_is_ours_and_empty(c: &mut dyn Conn) -> bool {
    let id = c
        .strings("PRAGMA application_id")
        .ok()
        .and_then(|v| v.first().and_then(|x| x.parse::<i64>().ok()));
    let tables = c
        .strings("SELECT name FROM sqlite_master WHERE type = 'table'")
        .map(|v| v.len())
        .unwrap_or(1);
    id == Some(SQLITE_APP_ID) && tables == 0
}

/// Removes a SQLite database file and its companions (-wal, -shm, -journal). Returns the
/// paths removed.
pub fn remove_sqlite_files(p: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    let mut v = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let f = std::path::PathBuf::from(format!("{}{suffix}", p.display()));
        match std::fs::remove_file(&f) {
            Ok(()) => v.push(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::failed(format!("cleanup: {}: {e}", f.display())));
            }
        }
    }
    Ok(v)
}
