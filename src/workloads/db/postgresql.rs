//! The PostgreSQL backend (rust-postgres, synchronous, prepared statements per table).

use super::*;

pub struct Pg {
    c: postgres::Client,
    stmts: std::collections::HashMap<(Q, u32), postgres::Statement>,
}

fn pg_err(e: postgres::Error) -> DbErr {
    use postgres::error::SqlState;
    if let Some(code) = e.code()
        && (*code == SqlState::T_R_DEADLOCK_DETECTED
            || *code == SqlState::T_R_SERIALIZATION_FAILURE
            || *code == SqlState::LOCK_NOT_AVAILABLE)
    {
        return DbErr::Retry(e.to_string());
    }
    if e.is_closed()
        || e.as_db_error()
            .is_none_or(|d| d.code().code().starts_with("57P") || d.code().code().starts_with("08"))
    {
        let msg = e
            .as_db_error()
            .map(|d| d.message().to_string())
            .unwrap_or_else(|| e.to_string());
        if e.as_db_error().is_none()
            || e.is_closed()
            || msg.contains("terminat")
            || msg.contains("shutdown")
        {
            return DbErr::Lost(msg);
        }
    }
    DbErr::Other(
        e.as_db_error()
            .map(|d| d.message().to_string())
            .unwrap_or_else(|| e.to_string()),
    )
}

impl Conn for Pg {
    fn exec(&mut self, sql: &str) -> std::result::Result<(), DbErr> {
        self.c.batch_execute(sql).map_err(pg_err)
    }
    fn run(&mut self, q: Q, t: u32, params: &[P]) -> std::result::Result<(), DbErr> {
        use postgres::fallible_iterator::FallibleIterator;
        let key = (q, t);
        let st = match self.stmts.get(&key) {
            Some(st) => st,
            None => {
                let st = self.c.prepare(&sql(q, &table(t))).map_err(pg_err)?;
                self.stmts.entry(key).or_insert(st)
            }
        };
        // per transaction: no parameter vectors and no row vector (the rows are read and
        // dropped one by one, as sysbench reads them)
        let args = params.iter().map(|p| match p {
            P::I(i) => i as &(dyn postgres::types::ToSql + Sync),
            P::S(s) => s as &(dyn postgres::types::ToSql + Sync),
        });
        let mut rows = self.c.query_raw(st, args).map_err(pg_err)?;
        while rows.next().map_err(pg_err)?.is_some() {}
        Ok(())
    }
    fn strings(&mut self, sql: &str) -> std::result::Result<Vec<String>, DbErr> {
        let rows = self.c.simple_query(sql).map_err(pg_err)?;
        Ok(rows
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_string()),
                _ => None,
            })
            .collect())
    }
}

/// Connects to the PostgreSQL server.
pub fn connect(t: &Target) -> Result<Pg> {
    let fail =
        |what: String| Error::failed(format!("{} at {}: {what}", t.backend.name(), t.endpoint()));
    let mut cfg: postgres::Config = t
        .url
        .parse()
        .map_err(|e| Error::usage(format!("--url {}: {e}", redact(&t.url))))?;
    cfg.connect_timeout(CONNECT_TIMEOUT);
    let c = cfg.connect(postgres::NoTls).map_err(|e| {
        let msg = e
            .as_db_error()
            .map(|d| d.message().to_string())
            .unwrap_or_else(|| {
                let s = e.to_string();
                let src = std::error::Error::source(&e)
                    .map(|x| x.to_string())
                    .unwrap_or_default();
                if src.is_empty() {
                    s
                } else {
                    format!("{s}: {src}")
                }
            });
        fail(format!("cannot connect: {msg}"))
    })?;
    Ok(Pg {
        c,
        stmts: Default::default(),
    })
}
