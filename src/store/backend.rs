//! The two implementations under the one store interface: SQLite (rusqlite) and PostgreSQL
//! (postgres). `Store` writes each statement once, with `?N` placeholders and portable SQL
//! (`INSERT ... RETURNING id` works on both); the backend binds [`Val`]s, turns `?N` into `$N` for
//! PostgreSQL and reads rows back as [`Row`]s. Transactions: SQLite's `BEGIN IMMEDIATE` (the
//! write lock at once, so two savers never deadlock), PostgreSQL's with a retry when the server
//! reports a serialization failure or a deadlock (SQLSTATE 40001, 40P01).

use std::error::Error as StdError;

/// A value bound to or read from a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    I(i64),
    F(f64),
    T(String),
    B(Vec<u8>),
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::I(v)
    }
}
impl From<f64> for Val {
    fn from(v: f64) -> Val {
        Val::F(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::T(v.to_string())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::T(v)
    }
}
impl From<Vec<u8>> for Val {
    fn from(v: Vec<u8>) -> Val {
        Val::B(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::I(v as i64)
    }
}
impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Val {
        v.map(Into::into).unwrap_or(Val::Null)
    }
}

/// `vals![a, b, ...]`: an array of statement parameters (`&vals![...]` is a `&[Val]`).
macro_rules! vals {
    ($($x:expr),* $(,)?) => { [$($crate::store::backend::Val::from($x)),*] };
}
pub(crate) use vals;

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Val::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Val::I(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Val::F(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Val::T(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Val::B(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

impl postgres::types::ToSql for Val {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn StdError + Sync + Send>> {
        use postgres::types::{IsNull, Type};
        match self {
            Val::Null => Ok(IsNull::Yes),
            // Every integer column is BIGINT; a parameter the server typed otherwise is converted.
            Val::I(v) if *ty == Type::INT4 => (i32::try_from(*v)?).to_sql(ty, out),
            Val::I(v) if *ty == Type::FLOAT8 => (*v as f64).to_sql(ty, out),
            Val::I(v) => v.to_sql(ty, out),
            Val::F(v) => v.to_sql(ty, out),
            Val::T(s) => s.to_sql(ty, out),
            Val::B(b) => b.to_sql(ty, out),
        }
    }
    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }
    postgres::types::to_sql_checked!();
}

/// One row read back: its values by column name.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub cols: Vec<(String, Val)>,
}

impl Row {
    pub fn get(&self, name: &str) -> &Val {
        self.cols
            .iter()
            .find(|c| c.0 == name)
            .map(|c| &c.1)
            .unwrap_or(&Val::Null)
    }
    pub fn at(&self, i: usize) -> &Val {
        self.cols.get(i).map(|c| &c.1).unwrap_or(&Val::Null)
    }
    pub fn opt_i64(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Val::I(v) => Some(*v),
            Val::F(v) => Some(*v as i64),
            _ => None,
        }
    }
    pub fn i64(&self, name: &str) -> i64 {
        self.opt_i64(name).unwrap_or(0)
    }
    pub fn opt_f64(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Val::F(v) => Some(*v),
            Val::I(v) => Some(*v as f64),
            _ => None,
        }
    }
    pub fn f64(&self, name: &str) -> f64 {
        self.opt_f64(name).unwrap_or(0.0)
    }
    pub fn opt_str(&self, name: &str) -> Option<String> {
        match self.get(name) {
            Val::T(s) => Some(s.clone()),
            _ => None,
        }
    }
    pub fn str(&self, name: &str) -> String {
        self.opt_str(name).unwrap_or_default()
    }
    pub fn opt_blob(&self, name: &str) -> Option<Vec<u8>> {
        match self.get(name) {
            Val::B(b) => Some(b.clone()),
            _ => None,
        }
    }
}

/// A database error: its text, and whether retrying the transaction can help (PostgreSQL's
/// serialization failure or deadlock) or the connection is gone.
#[derive(Debug)]
pub struct DbError {
    pub msg: String,
    pub retry: bool,
    /// SQLite's "the file is damaged" (the store's one damaged message is given for it).
    pub damaged: bool,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> DbError {
        DbError {
            damaged: matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseCorrupt)
            ),
            msg: e.to_string(),
            retry: false,
        }
    }
}

impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> DbError {
        use postgres::error::SqlState;
        let retry = e.code().is_some_and(|c| {
            *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
        });
        // The server's own message (the client's Display of a DbError is only "db error").
        let msg = match e.as_db_error() {
            Some(d) => format!("{}: {}", d.severity(), d.message()),
            None => e.to_string(),
        };
        DbError {
            msg,
            retry,
            damaged: false,
        }
    }
}

pub type DbResult<T> = std::result::Result<T, DbError>;

/// What a statement runs on: a connection or an open transaction of either backend.
pub trait Exec {
    /// Runs a statement that returns rows.
    fn query(&mut self, sql: &str, params: &[Val]) -> DbResult<Vec<Row>>;
    /// Runs a statement; returns the rows it changed.
    fn exec(&mut self, sql: &str, params: &[Val]) -> DbResult<u64>;
    /// The first row, if any.
    fn query_opt(&mut self, sql: &str, params: &[Val]) -> DbResult<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }
}

fn sqlite_row(r: &rusqlite::Row, names: &[String]) -> rusqlite::Result<Row> {
    use rusqlite::types::ValueRef;
    let mut cols = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        let v = match r.get_ref(i)? {
            ValueRef::Null => Val::Null,
            ValueRef::Integer(v) => Val::I(v),
            ValueRef::Real(v) => Val::F(v),
            ValueRef::Text(t) => Val::T(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Val::B(b.to_vec()),
        };
        cols.push((n.clone(), v));
    }
    Ok(Row { cols })
}

impl Exec for rusqlite::Connection {
    fn query(&mut self, sql: &str, params: &[Val]) -> DbResult<Vec<Row>> {
        let mut st = self.prepare_cached(sql)?;
        let names: Vec<String> = st.column_names().map(|s| s.to_string()).collect();
        let rows = st
            .query_map(rusqlite::params_from_iter(params.iter()), |r| {
                sqlite_row(r, &names)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
    fn exec(&mut self, sql: &str, params: &[Val]) -> DbResult<u64> {
        let mut st = self.prepare_cached(sql)?;
        Ok(st.execute(rusqlite::params_from_iter(params.iter()))? as u64)
    }
}

/// `?N` placeholders as PostgreSQL's `$N` (iolab's statements have no `?` in literals).
pub fn pg_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut it = sql.chars().peekable();
    while let Some(c) = it.next() {
        if c == '?' && it.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn pg_rows(rows: Vec<postgres::Row>) -> DbResult<Vec<Row>> {
    use postgres::types::Type;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let mut cols = Vec::with_capacity(r.len());
        for (i, c) in r.columns().iter().enumerate() {
            let t = c.type_();
            let v = if *t == Type::INT8 {
                r.try_get::<_, Option<i64>>(i)?.map(Val::I)
            } else if *t == Type::INT4 {
                r.try_get::<_, Option<i32>>(i)?.map(|v| Val::I(v.into()))
            } else if *t == Type::INT2 {
                r.try_get::<_, Option<i16>>(i)?.map(|v| Val::I(v.into()))
            } else if *t == Type::BOOL {
                r.try_get::<_, Option<bool>>(i)?.map(|v| Val::I(v.into()))
            } else if *t == Type::FLOAT8 {
                r.try_get::<_, Option<f64>>(i)?.map(Val::F)
            } else if *t == Type::FLOAT4 {
                r.try_get::<_, Option<f32>>(i)?.map(|v| Val::F(v.into()))
            } else if *t == Type::BYTEA {
                r.try_get::<_, Option<Vec<u8>>>(i)?.map(Val::B)
            } else {
                r.try_get::<_, Option<String>>(i)?.map(Val::T)
            };
            cols.push((c.name().to_string(), v.unwrap_or(Val::Null)));
        }
        out.push(Row { cols });
    }
    Ok(out)
}

fn pg_params(params: &[Val]) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| p as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

impl Exec for postgres::Client {
    fn query(&mut self, sql: &str, params: &[Val]) -> DbResult<Vec<Row>> {
        pg_rows(postgres::Client::query(
            self,
            &pg_sql(sql),
            &pg_params(params),
        )?)
    }
    fn exec(&mut self, sql: &str, params: &[Val]) -> DbResult<u64> {
        Ok(postgres::Client::execute(
            self,
            &pg_sql(sql),
            &pg_params(params),
        )?)
    }
}

impl Exec for postgres::Transaction<'_> {
    fn query(&mut self, sql: &str, params: &[Val]) -> DbResult<Vec<Row>> {
        pg_rows(postgres::Transaction::query(
            self,
            &pg_sql(sql),
            &pg_params(params),
        )?)
    }
    fn exec(&mut self, sql: &str, params: &[Val]) -> DbResult<u64> {
        Ok(postgres::Transaction::execute(
            self,
            &pg_sql(sql),
            &pg_params(params),
        )?)
    }
}

/// The SQL dialect of a backend: how it spells the column types of the one neutral schema
/// (`store::schema`: `{id}`, `{int}`, `{real}`, `{blob}`) and the name of its
/// `{NAME:...}` sections there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
        }
    }

    /// Each placeholder of the neutral schema and its spelling in this dialect.
    pub fn types(self) -> [(&'static str, &'static str); 4] {
        match self {
            Dialect::Sqlite => [
                ("{id}", "INTEGER PRIMARY KEY AUTOINCREMENT"),
                ("{int}", "INTEGER"),
                ("{real}", "REAL"),
                ("{blob}", "BLOB"),
            ],
            Dialect::Postgres => [
                (
                    "{id}",
                    "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                ),
                ("{int}", "BIGINT"),
                ("{real}", "DOUBLE PRECISION"),
                ("{blob}", "BYTEA"),
            ],
        }
    }
}

/// A connection of either backend.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Pg(Box<postgres::Client>),
}

/// How many times a PostgreSQL transaction is tried when the server asks for a retry.
pub const PG_TRIES: u32 = 20;

impl Conn {
    pub fn exec_on(&mut self) -> &mut dyn Exec {
        match self {
            Conn::Sqlite(c) => c,
            Conn::Pg(c) => &mut **c,
        }
    }

    /// Runs `f` in one write transaction: committed when it returns Ok, rolled back otherwise.
    /// On PostgreSQL a serialization failure or deadlock anywhere in it runs it again (up to
    /// [`PG_TRIES`] times, with a short growing pause), so concurrent writers lose nothing.
    pub fn write_tx<T>(&mut self, mut f: impl FnMut(&mut dyn Exec) -> DbResult<T>) -> DbResult<T> {
        match self {
            Conn::Sqlite(c) => {
                c.execute_batch("BEGIN IMMEDIATE")?;
                match f(c) {
                    Ok(v) => match c.execute_batch("COMMIT") {
                        Ok(()) => Ok(v),
                        Err(e) => {
                            let _ = c.execute_batch("ROLLBACK");
                            Err(e.into())
                        }
                    },
                    Err(e) => {
                        let _ = c.execute_batch("ROLLBACK");
                        Err(e)
                    }
                }
            }
            Conn::Pg(c) => {
                let mut tries = 0;
                loop {
                    tries += 1;
                    let r = (|| -> DbResult<T> {
                        let mut tx = c.transaction()?;
                        let v = f(&mut tx)?;
                        tx.commit()?;
                        Ok(v)
                    })();
                    match r {
                        Err(e) if e.retry && tries < PG_TRIES => {
                            std::thread::sleep(std::time::Duration::from_millis(
                                5 * u64::from(tries),
                            ));
                        }
                        r => return r,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PostgreSQL transaction the server aborts with a serialization failure is run again,
    /// the failed attempts rolled back: a real conflict (a row another connection updated after
    /// this REPEATABLE READ transaction's snapshot) twice, then a commit.
    #[test]
    fn pg_serialization_failures_are_retried_and_lose_nothing() {
        let Some(url) = std::env::var("IOLAB_TEST_PG_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI=true: IOLAB_TEST_PG_URL must be set");
            }
            eprintln!(
                "\nSKIP: pg_serialization_failures_are_retried_and_lose_nothing: IOLAB_TEST_PG_URL is not set"
            );
            return;
        };
        let table = format!("iolab_retry_{}", std::process::id());
        let mut other = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        other
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (k TEXT PRIMARY KEY, n BIGINT); INSERT INTO {table} VALUES ('x', 0)"
            ))
            .unwrap();
        let mut conn = Conn::Pg(Box::new(
            postgres::Client::connect(&url, postgres::NoTls).unwrap(),
        ));
        let mut tries = 0;
        let r = conn.write_tx(|tx| {
            tries += 1;
            tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", &[])?;
            let n = tx
                .query(&format!("SELECT n FROM {table} WHERE k = 'x'"), &[])?
                .remove(0)
                .i64("n");
            tx.exec(
                &format!("INSERT INTO {table} VALUES (?1, ?2)"),
                &[Val::T(format!("try{tries}")), Val::I(n)],
            )?;
            if tries <= 2 {
                // Another host updates the row after this transaction's snapshot.
                other
                    .batch_execute(&format!("UPDATE {table} SET n = n + 1 WHERE k = 'x'"))
                    .unwrap();
            }
            // 40001 "could not serialize access due to concurrent update" on the first two tries
            tx.exec(
                &format!("UPDATE {table} SET n = ?1 WHERE k = 'x'"),
                &[Val::I(n + 10)],
            )?;
            Ok(n)
        });
        let rows: Vec<(String, i64)> = other
            .query(&format!("SELECT k, n FROM {table} ORDER BY k"), &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        other.batch_execute(&format!("DROP TABLE {table}")).unwrap();
        assert_eq!(r.unwrap(), 2, "the last try read both other updates");
        assert_eq!(tries, 3, "two serialization failures, then a commit");
        assert_eq!(
            rows,
            [("try3".to_string(), 2), ("x".to_string(), 12)],
            "the failed tries left nothing"
        );
    }

    #[test]
    fn placeholders_become_dollar_numbers() {
        assert_eq!(
            pg_sql("SELECT a FROM t WHERE x = ?1 AND y = ?12 OR z = '?'"),
            "SELECT a FROM t WHERE x = $1 AND y = $12 OR z = '?'"
        );
    }

    #[test]
    fn sqlite_rows_read_back_by_name() {
        let mut c = rusqlite::Connection::open_in_memory().unwrap();
        c.exec("CREATE TABLE t (a INTEGER, b REAL, c TEXT, d BLOB)", &[])
            .unwrap();
        c.exec(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
            &vals![7i64, 1.5f64, "x", vec![1u8, 2]],
        )
        .unwrap();
        c.exec(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
            &vals![None::<i64>, None::<f64>, None::<String>, None::<Vec<u8>>],
        )
        .unwrap();
        let r = c.query("SELECT * FROM t ORDER BY a", &[]).unwrap();
        assert_eq!(r[0].get("a"), &Val::Null);
        assert_eq!(r[1].i64("a"), 7);
        assert_eq!(r[1].f64("b"), 1.5);
        assert_eq!(r[1].str("c"), "x");
        assert_eq!(r[1].opt_blob("d"), Some(vec![1, 2]));
    }
}
