//! The MariaDB/MySQL backend (mysql crate, no TLS, prepared statements per table).

use super::*;

pub struct My {
    c: mysql::Conn,
    stmts: std::collections::HashMap<(Q, u32), mysql::Statement>,
}

/// The error as one line with the server's or the system's message, without the crate's
/// `DriverError { ... }` wrapping.
pub(super) fn my_message(e: &mysql::Error) -> String {
    use mysql::DriverError as D;
    let s = match e {
        mysql::Error::MySqlError(m) => {
            format!("{} (error {}, SQLSTATE {})", m.message, m.code, m.state)
        }
        mysql::Error::DriverError(D::CouldNotConnect(Some((_, desc, _)))) => desc.clone(),
        mysql::Error::DriverError(D::CouldNotConnect(None)) => "no address to connect to".into(),
        mysql::Error::DriverError(D::ConnectTimeout) => {
            format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())
        }
        mysql::Error::DriverError(d) => d.to_string(),
        mysql::Error::IoError(io) => io.to_string(),
        mysql::Error::CodecError(c) => c.to_string(),
        mysql::Error::UrlError(u) => u.to_string(),
        other => other.to_string(),
    };
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn my_err(e: mysql::Error) -> DbErr {
    match &e {
        mysql::Error::MySqlError(m) if m.code == 1213 || m.code == 1205 => {
            DbErr::Retry(m.message.clone())
        }
        mysql::Error::MySqlError(m)
            if m.code == 1927 || m.code == 1053 || m.code == 2006 || m.code == 2013 =>
        {
            DbErr::Lost(m.message.clone())
        }
        mysql::Error::MySqlError(m) => DbErr::Other(m.message.clone()),
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) | mysql::Error::DriverError(_) => {
            DbErr::Lost(my_message(&e))
        }
        _ => DbErr::Other(my_message(&e)),
    }
}

impl Conn for My {
    fn exec(&mut self, sql: &str) -> std::result::Result<(), DbErr> {
        use mysql::prelude::Queryable;
        self.c.query_drop(sql).map_err(my_err)
    }
    fn run(&mut self, q: Q, t: u32, params: &[P]) -> std::result::Result<(), DbErr> {
        use mysql::prelude::Queryable;
        let key = (q, t);
        if !self.stmts.contains_key(&key) {
            let t = table(t);
            let t = t.as_str();
            let text = sql(q, t);
            // $2 ... $1 order matters for MySQL's positional ?: UpdateNonIndex binds c first.
            let text = if q == Q::UpdateNonIndex {
                format!("UPDATE {t} SET c = ? WHERE id = ?")
            } else {
                dollar_to_q(&text)
            };
            let st = self.c.prep(text).map_err(my_err)?;
            self.stmts.insert(key, st);
        }
        let st = &self.stmts[&key];
        let mut vals: Vec<mysql::Value> = params
            .iter()
            .map(|p| match p {
                P::I(i) => mysql::Value::Int(*i),
                P::S(s) => mysql::Value::Bytes(s.clone().into_bytes()),
            })
            .collect();
        if q == Q::UpdateNonIndex {
            vals.swap(0, 1);
        }
        self.c
            .exec_drop(st, mysql::Params::Positional(vals))
            .map_err(my_err)
    }
    fn strings(&mut self, sql: &str) -> std::result::Result<Vec<String>, DbErr> {
        use mysql::prelude::Queryable;
        let rows: Vec<mysql::Row> = self.c.query(sql).map_err(my_err)?;
        Ok(rows
            .into_iter()
            .map(|r| match r.as_ref(0) {
                Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                Some(mysql::Value::Int(i)) => i.to_string(),
                Some(mysql::Value::UInt(i)) => i.to_string(),
                Some(v) => format!("{v:?}"),
                None => String::new(),
            })
            .collect())
    }
}

pub(super) fn dollar_to_q(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

/// Connects to the MariaDB/MySQL server over TCP.
pub fn connect(t: &Target) -> Result<My> {
    let fail =
        |what: String| Error::failed(format!("{} at {}: {what}", t.backend.name(), t.endpoint()));
    let opts = mysql::Opts::from_url(&t.url)
        .map_err(|e| Error::usage(format!("--url {}: {e}", redact(&t.url))))?;
    let b = mysql::OptsBuilder::from_opts(opts)
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
        .read_timeout(Some(Duration::from_secs(60)))
        .prefer_socket(false);
    let c = mysql::Conn::new(b).map_err(|e| fail(format!("cannot connect: {}", my_message(&e))))?;
    Ok(My {
        c,
        stmts: Default::default(),
    })
}
