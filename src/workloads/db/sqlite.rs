//! The embedded SQLite backend.

use super::*;

pub struct Sqlite {
    c: rusqlite::Connection,
}

fn sqlite_err(e: rusqlite::Error) -> DbErr {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked) => {
            DbErr::Retry(e.to_string())
        }
        _ => DbErr::Other(e.to_string()),
    }
}

impl Conn for Sqlite {
    fn exec(&mut self, sql: &str) -> std::result::Result<(), DbErr> {
        self.c.execute_batch(sql).map_err(sqlite_err)
    }
    /// Takes the write lock at BEGIN: a deferred transaction that upgrades later fails with
    /// SQLITE_BUSY at once when another writer is there, instead of waiting its turn.
    fn begin(&mut self) -> std::result::Result<(), DbErr> {
        self.exec("BEGIN IMMEDIATE")
    }
    fn run(&mut self, q: Q, t: u32, params: &[P]) -> std::result::Result<(), DbErr> {
        let text = sql(q, &table(t)).replace('$', "?");
        let mut st = self.c.prepare_cached(&text).map_err(sqlite_err)?;
        let vals: Vec<rusqlite::types::Value> = params
            .iter()
            .map(|p| match p {
                P::I(i) => rusqlite::types::Value::Integer(*i),
                P::S(s) => rusqlite::types::Value::Text(s.clone()),
            })
            .collect();
        let mut rows = st
            .query(rusqlite::params_from_iter(vals.iter()))
            .map_err(sqlite_err)?;
        while rows.next().map_err(sqlite_err)?.is_some() {}
        Ok(())
    }
    fn strings(&mut self, sql: &str) -> std::result::Result<Vec<String>, DbErr> {
        let mut st = self.c.prepare(sql).map_err(sqlite_err)?;
        let rows = st
            .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
            .map_err(sqlite_err)?;
        rows.map(|r| {
            r.map(|v| match v {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Real(f) => f.to_string(),
                rusqlite::types::Value::Text(s) => s,
                _ => String::new(),
            })
            .map_err(sqlite_err)
        })
        .collect()
    }
}

/// Opens the SQLite database with the job's page size, journal mode and synchronous setting.
pub fn connect(t: &Target, so: &SqliteOpts) -> Result<Sqlite> {
    let fail =
        |what: String| Error::failed(format!("{} at {}: {what}", t.backend.name(), t.endpoint()));
    let p = t
        .sqlite_path
        .as_ref()
        .ok_or_else(|| Error::usage("--url: no SQLite database path"))?;
    let c = rusqlite::Connection::open(p).map_err(|e| {
        Error::usage(format!(
            "--url {}: cannot open the SQLite database: {e}",
            p.display()
        ))
    })?;
    c.busy_timeout(Duration::from_secs(10))
        .map_err(|e| fail(e.to_string()))?;
    c.pragma_update(None, "page_size", so.page_size)
        .map_err(|e| fail(e.to_string()))?;
    let jm: String = c
        .query_row(
            &format!("PRAGMA journal_mode = {}", so.journal_mode),
            [],
            |r| r.get(0),
        )
        .map_err(|e| {
            Error::usage(format!(
                "--url {}: cannot use the SQLite database: {e}",
                p.display()
            ))
        })?;
    if jm.to_lowercase() != so.journal_mode.to_lowercase() {
        return Err(Error::usage(format!(
            "--journal-mode {}: SQLite kept journal_mode {jm} at {}",
            so.journal_mode,
            p.display()
        )));
    }
    c.pragma_update(None, "synchronous", &so.synchronous)
        .map_err(|e| fail(e.to_string()))?;
    Ok(Sqlite { c })
}
