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
//!
//! One file per job: `location` (`--db` paths and URLs), `open` (opening, creating and migrating
//! a store of either backend), `schema` (the one migration list, rendered per dialect),
//! `integrity` (`quick_check`, `<store>.checked`), `save` (the `save_*`, document ids), `query`
//! (reads, references, deletes), `histo` (histogram encoding), `copy` (`store copy`), `backend`
//! (SQLite and PostgreSQL under one `Exec`). This file holds the `Store` type, the statement
//! helpers every job uses and the store's errors.

pub mod backend;
pub mod compare;
mod copy;
mod histo;
pub mod import;
mod integrity;
mod location;
mod open;
mod query;
mod save;
mod schema;
pub mod spool;

pub use copy::CopyReport;
pub use histo::{deserialize_hist, serialize_hist};
pub use location::{Location, SCHEMES, mask_password, resolve_location};
pub use query::{Filter, MetricRow, Ref, RunRow};
pub use save::{Saved, doc_id};

use crate::error::{Error, Result};
use backend::{Conn, DbError, DbResult, Exec, Row, Val};
use std::path::{Path, PathBuf};

/// "iolb"
pub const APP_ID: i64 = 0x696f_6c62;
/// Current schema version.
pub const SCHEMA_VERSION: i64 = 6;

pub struct Store {
    conn: std::cell::RefCell<Conn>,
    /// The store as messages name it: the file, or the URL with its password masked.
    pub path: PathBuf,
    pub loc: Location,
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

impl Store {
    /// The SQLite connection (the file-only checks: pages, pragmas).
    fn sqlite(&self) -> Option<std::cell::RefMut<'_, rusqlite::Connection>> {
        std::cell::RefMut::filter_map(self.conn.borrow_mut(), |c| match c {
            Conn::Sqlite(c) => Some(c),
            // the other backends check their own pages
            _ => None,
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
}
