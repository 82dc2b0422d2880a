//! The schema: one list of migrations, each written once in a neutral form and rendered to
//! the dialect of each backend (SQLite, PostgreSQL) by a small type map, and the SQLite
//! migration (PostgreSQL's runs in `open::open_pg`, under its advisory lock).
//!
//! Neutral form: plain SQL with `{id}` (an auto-numbered primary key), `{int}` (a 64-bit
//! integer), `{real}` (a double), `{blob}` (bytes), spelled by each [`Dialect`]'s type map
//! (`backend.rs`), and `{postgres:...}` (statements only that dialect runs: PostgreSQL's
//! `runs_group` index came with v2, SQLite's with v5). A schema change appends one migration
//! here; a new backend adds its `Dialect` and type map in `backend.rs`, nothing here.

use super::backend::Dialect;
use super::{APP_ID, Store, db_err};
use crate::error::{Error, Result};
use rusqlite::Connection;
use std::path::Path;

/// Migration i takes a store from version i to i + 1 (the version is kept in SQLite's
/// `user_version`, in PostgreSQL's `iolab_store` table).
const MIGRATIONS: [&str; super::SCHEMA_VERSION as usize] = [
    // v1: runs, their tags and summary metrics
    "CREATE TABLE runs (
        id {id},
        kind TEXT NOT NULL,
        tool TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        start_time TEXT NOT NULL,
        end_time TEXT,
        host TEXT NOT NULL,
        label TEXT,
        modes TEXT NOT NULL,
        interrupted {int} NOT NULL DEFAULT 0,
        doc TEXT NOT NULL,
        env TEXT
    );
    CREATE TABLE tags (
        run_id {int} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE metrics (
        run_id {int} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        cell {int} NOT NULL,
        mode TEXT NOT NULL,
        op TEXT NOT NULL,
        threads {int},
        bs_bytes {int},
        ops {int} NOT NULL,
        bytes {int} NOT NULL,
        iops {real} NOT NULL,
        bytes_per_sec {real} NOT NULL,
        lat_min_ns {real}, lat_mean_ns {real}, lat_max_ns {real}, lat_stddev_ns {real},
        lat_p50_ns {real}, lat_p90_ns {real}, lat_p95_ns {real}, lat_p99_ns {real},
        lat_p99_9_ns {real}, lat_p99_99_ns {real},
        PRIMARY KEY (run_id, cell, op)
    );",
    // v2: repetition groups and serialized histograms
    "CREATE TABLE groups (
        id {id},
        kind TEXT NOT NULL,
        created TEXT NOT NULL,
        label TEXT,
        repeat {int} NOT NULL
    );
    ALTER TABLE runs ADD COLUMN group_id {int} REFERENCES groups(id);
    ALTER TABLE runs ADD COLUMN seq {int};
    CREATE TABLE histograms (
        run_id {int} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        cell {int} NOT NULL,
        op TEXT NOT NULL,
        hdr {blob} NOT NULL,
        PRIMARY KEY (run_id, cell, op)
    );
    CREATE INDEX runs_start ON runs(start_time);{postgres:
    CREATE INDEX runs_group ON runs(group_id);}",
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

/// v6: a document is saved at most once. `runs.doc_id` is the document's id
/// (its `doc_id`, else a hash of the document; rows of older stores have none) and
/// `groups.uid` a group's, each a unique key, so a kept document saved again (the next command,
/// `iolab import`, two at once) and two `store copy` at once insert-or-skip
/// (`ON CONFLICT DO NOTHING`) in the transaction that saves it.
const DOC_IDS: &str = "ALTER TABLE runs ADD COLUMN doc_id TEXT;
    CREATE UNIQUE INDEX runs_doc_id ON runs(doc_id);
    ALTER TABLE groups ADD COLUMN uid TEXT;
    CREATE UNIQUE INDEX groups_uid ON groups(uid);";

/// Migration `v` (from version `v` to `v + 1`) in `dialect`.
pub(super) fn migration(v: i64, dialect: Dialect) -> String {
    let mut sql = MIGRATIONS[v as usize].to_string();
    // `{NAME:...}`: kept (without its braces) in dialect NAME, dropped in the others
    let mut from = 0;
    while let Some(start) = sql[from..].find('{').map(|i| from + i) {
        let end = start + sql[start..].find('}').expect("a {...} is closed");
        let Some((name, inner)) = sql[start + 1..end].split_once(':') else {
            from = end; // a type placeholder
            continue;
        };
        let kept = if name == dialect.name() { inner } else { "" }.to_string();
        sql.replace_range(start..=end, &kept);
        from = start + kept.len();
    }
    for (mark, spelled) in dialect.types() {
        sql = sql.replace(mark, spelled);
    }
    sql
}

pub(super) fn migrate_sqlite(conn: &mut Connection, path: &Path, from: i64, to: i64) -> Result<()> {
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
        tx.execute_batch(&migration(v, Dialect::Sqlite))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SQLite statements of schemas 1 to 6 as they were written before the one list, kept
    /// here verbatim (SQLite keeps each table's `CREATE` text in `sqlite_master`, so they must
    /// come out byte for byte).
    const SQLITE: [&str; 6] = [
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
        OLD_DOC_IDS,
    ];

    /// The PostgreSQL statements as they were written before the one list.
    const POSTGRES: [&str; 6] = [
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
        OLD_DOC_IDS,
    ];

    const OLD_DOC_IDS: &str = "ALTER TABLE runs ADD COLUMN doc_id TEXT;
    CREATE UNIQUE INDEX runs_doc_id ON runs(doc_id);
    ALTER TABLE groups ADD COLUMN uid TEXT;
    CREATE UNIQUE INDEX groups_uid ON groups(uid);";

    /// Whitespace collapsed: what PostgreSQL sees of a statement.
    fn words(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Both dialects rendered from the one list are today's statements for every schema
    /// version: an existing store migrates exactly as before (SQLite byte for byte; PostgreSQL
    /// statement for statement, its line breaks aside).
    #[test]
    fn both_dialects_render_the_statements_of_every_version() {
        assert_eq!(MIGRATIONS.len() as i64, crate::store::SCHEMA_VERSION);
        // the versions written before the one list; a later one is checked by tests/store.rs
        for i in 0..SQLITE.len() {
            let v = i as i64;
            assert_eq!(
                migration(v, Dialect::Sqlite),
                SQLITE[i],
                "SQLite {v} -> {}",
                v + 1
            );
            let pg = migration(v, Dialect::Postgres);
            let stmts = |s: &str| s.split(';').map(words).collect::<Vec<_>>();
            assert_eq!(
                stmts(&pg),
                stmts(POSTGRES[i]),
                "PostgreSQL {v} -> {}",
                v + 1
            );
            assert!(!pg.contains('{') && !pg.contains('}'), "{pg}");
        }
    }
}
