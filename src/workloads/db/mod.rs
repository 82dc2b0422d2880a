//! `iolab db`: database workloads on embedded SQLite, PostgreSQL and MariaDB/MySQL, measured and
//! stored like file runs (docs/db.md).
//!
//! This file is the contract every backend implements (`Conn`, the statements `Q`, their
//! parameters `P`, errors classified for retry), `--url` parsing and the database's settings;
//! `tables.rs` creates, loads and drops iolab's tables; `workload.rs` runs the transactions and
//! the update loop and merges the connections' figures; `sqlite.rs`, `postgresql.rs` and
//! `mariadb.rs` are one backend each.

use crate::error::{Error, Result};
pub use crate::model::db::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// Layout version of iolab's tables; a different one is refused, not silently reused.
pub const TABLE_LAYOUT: i64 = 1;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where to connect, parsed from --url.
#[derive(Debug, Clone)]
pub struct Target {
    pub backend: Backend,
    pub url: String,
    /// For SQLite: the database file.
    pub sqlite_path: Option<std::path::PathBuf>,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target> {
        let bad = || {
            Error::usage(format!(
                "--url '{}': use sqlite:///path/file.db, postgres://user:pass@host:port/db or mysql://user:pass@host:port/db",
                redact(url)
            ))
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
        match scheme {
            "sqlite" => {
                // an absolute path (a relative one would be a file in whatever directory iolab
                // runs in), and a regular file when it exists (not /dev/zero)
                if !rest.starts_with('/') {
                    return Err(bad());
                }
                if let Ok(md) = std::fs::metadata(rest)
                    && !md.is_file()
                {
                    return Err(Error::usage(format!(
                        "--url {url}: {rest} is not a regular file; give the path of an SQLite database file (made when missing)"
                    )));
                }
                Ok(Target {
                    backend: Backend::Sqlite,
                    url: url.into(),
                    sqlite_path: Some(rest.into()),
                })
            }
            "postgres" | "postgresql" => Ok(Target {
                backend: Backend::Postgres,
                url: url.into(),
                sqlite_path: None,
            }),
            "mysql" | "mariadb" => Ok(Target {
                backend: Backend::Mysql,
                url: url.replacen("mariadb://", "mysql://", 1),
                sqlite_path: None,
            }),
            _ => Err(bad()),
        }
    }
    /// "host:port" (or the socket) for messages.
    pub fn endpoint(&self) -> String {
        if let Some(p) = &self.sqlite_path {
            return p.display().to_string();
        }
        let rest = self.url.split_once("://").map(|x| x.1).unwrap_or("");
        let hostpart = rest.rsplit_once('@').map(|x| x.1).unwrap_or(rest);
        let host = hostpart.split(['/', '?']).next().unwrap_or("");
        let default_port = if self.backend == Backend::Postgres {
            "5432"
        } else {
            "3306"
        };
        let q = self.url.split_once('?').map(|x| x.1).unwrap_or("");
        let sock = q.split('&').find_map(|kv| {
            kv.strip_prefix("host=")
                .or_else(|| kv.strip_prefix("socket="))
        });
        match (host, sock) {
            (_, Some(s)) => format!("socket {s}"),
            ("", None) => format!("localhost:{default_port}"),
            (h, None) if h.contains(':') => h.to_string(),
            (h, None) => format!("{h}:{default_port}"),
        }
    }
}

/// The URL with its password replaced by ***.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((auth, host)) = rest.rsplit_once('@')
        && let Some((user, _)) = auth.split_once(':')
    {
        return format!("{scheme}://{user}:***@{host}");
    }
    url.to_string()
}

/// A failed statement, classified.
#[derive(Debug)]
pub enum DbErr {
    /// Deadlock, serialization failure, lock timeout, SQLITE_BUSY (and PostgreSQL's unique
    /// violation from read-write's DELETE+INSERT race): roll back and retry.
    Retry(String),
    /// The connection is gone (server restart, network): reconnect.
    Lost(String),
    /// Anything else.
    Other(String),
}

impl std::fmt::Display for DbErr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbErr::Retry(m) | DbErr::Lost(m) | DbErr::Other(m) => f.write_str(m),
        }
    }
}

/// The statements of the workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Q {
    PointSelect,
    RangeSimple,
    RangeSum,
    RangeOrder,
    RangeDistinct,
    UpdateIndex,
    UpdateNonIndex,
    Delete,
    InsertWithId,
    Insert,
}

/// SQL text with `$1`-style placeholders (converted per backend).
fn sql(q: Q, t: &str) -> String {
    match q {
        Q::PointSelect => format!("SELECT c FROM {t} WHERE id = $1"),
        Q::RangeSimple => format!("SELECT c FROM {t} WHERE id BETWEEN $1 AND $2"),
        Q::RangeSum => format!("SELECT SUM(k) FROM {t} WHERE id BETWEEN $1 AND $2"),
        Q::RangeOrder => format!("SELECT c FROM {t} WHERE id BETWEEN $1 AND $2 ORDER BY c"),
        Q::RangeDistinct => {
            format!("SELECT DISTINCT c FROM {t} WHERE id BETWEEN $1 AND $2 ORDER BY c")
        }
        Q::UpdateIndex => format!("UPDATE {t} SET k = k + 1 WHERE id = $1"),
        Q::UpdateNonIndex => format!("UPDATE {t} SET c = $2 WHERE id = $1"),
        Q::Delete => format!("DELETE FROM {t} WHERE id = $1"),
        Q::InsertWithId => format!("INSERT INTO {t} (id, k, c, pad) VALUES ($1, $2, $3, $4)"),
        Q::Insert => format!("INSERT INTO {t} (k, c, pad) VALUES ($1, $2, $3)"),
    }
}

/// Parameters of one statement.
#[derive(Debug, Clone)]
pub enum P {
    I(i64),
    S(String),
}

/// One connection of one backend.
pub trait Conn {
    fn exec(&mut self, sql: &str) -> std::result::Result<(), DbErr>;
    /// Starts an explicit transaction.
    fn begin(&mut self) -> std::result::Result<(), DbErr> {
        self.exec("BEGIN")
    }
    /// Runs a workload statement on table `t` (prepared once per connection).
    fn run(&mut self, q: Q, t: u32, params: &[P]) -> std::result::Result<(), DbErr>;
    /// Rows of a single-column text query (for settings and checks).
    fn strings(&mut self, sql: &str) -> std::result::Result<Vec<String>, DbErr>;
}

mod mariadb;
mod postgresql;
mod sqlite;
mod tables;
pub mod view;
mod workload;

pub use mariadb::My;
#[cfg(test)]
use mariadb::dollar_to_q;
pub use postgresql::Pg;
pub use sqlite::Sqlite;

/// Opens a connection; errors name the server and say what is wrong.
pub fn connect(t: &Target, so: &SqliteOpts) -> Result<Box<dyn Conn + Send>> {
    Ok(match t.backend {
        Backend::Sqlite => Box::new(sqlite::connect(t, so)?),
        Backend::Postgres => Box::new(postgresql::connect(t)?),
        Backend::Mysql => Box::new(mariadb::connect(t)?),
    })
}

/// The database's own storage settings.
pub fn settings(c: &mut dyn Conn, b: Backend) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    match b {
        Backend::Sqlite => {
            for k in [
                "journal_mode",
                "synchronous",
                "page_size",
                "cache_size",
                "wal_autocheckpoint",
            ] {
                if let Ok(v) = c.strings(&format!("PRAGMA {k}")) {
                    let mut v = v.into_iter().next().unwrap_or_default();
                    if k == "synchronous" {
                        v = match v.as_str() {
                            "0" => "off",
                            "1" => "normal",
                            "2" => "full",
                            "3" => "extra",
                            x => x,
                        }
                        .to_string();
                    }
                    m.insert(k.to_string(), v);
                }
            }
            m.insert("version".into(), rusqlite::version().to_string());
        }
        Backend::Postgres => {
            for k in [
                "server_version",
                "fsync",
                "synchronous_commit",
                "wal_sync_method",
                "full_page_writes",
                "shared_buffers",
                "checkpoint_timeout",
                "max_wal_size",
                "checkpoint_completion_target",
                "wal_level",
                "data_directory",
            ] {
                if let Ok(v) = c.strings(&format!("SHOW {k}")) {
                    m.insert(
                        if k == "server_version" {
                            "version".into()
                        } else {
                            k.to_string()
                        },
                        v.into_iter().next().unwrap_or_default(),
                    );
                }
            }
        }
        Backend::Mysql => {
            let names = [
                "innodb_flush_log_at_trx_commit",
                "innodb_flush_method",
                "innodb_buffer_pool_size",
                "innodb_log_file_size",
                "innodb_io_capacity",
                "innodb_doublewrite",
                "sync_binlog",
                "datadir",
                "version",
            ];
            for k in names {
                if let Ok(v) = c.strings(&format!("SELECT @@GLOBAL.{k}")) {
                    m.insert(k.to_string(), v.into_iter().next().unwrap_or_default());
                }
            }
        }
    }
    m
}

/// Local directory of the server's data, when it is on this host.
pub fn data_dir(t: &Target, s: &BTreeMap<String, String>) -> Option<std::path::PathBuf> {
    let p = match t.backend {
        Backend::Sqlite => t
            .sqlite_path
            .as_ref()?
            .parent()
            .map(|p| {
                if p.as_os_str().is_empty() {
                    std::path::Path::new(".")
                } else {
                    p
                }
            })?
            .to_path_buf(),
        Backend::Postgres => s.get("data_directory")?.into(),
        Backend::Mysql => s.get("datadir")?.into(),
    };
    p.is_dir().then_some(p)
}

pub use tables::*;
pub use workload::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_redact() {
        let t = Target::parse("postgres://u:secret@db1:6432/app").unwrap();
        assert_eq!(t.backend, Backend::Postgres);
        assert_eq!(t.endpoint(), "db1:6432");
        assert_eq!(redact(&t.url), "postgres://u:***@db1:6432/app");
        assert_eq!(
            Target::parse("mysql://u:p@10.0.0.5/app")
                .unwrap()
                .endpoint(),
            "10.0.0.5:3306"
        );
        assert_eq!(
            Target::parse("postgres:///app?host=/var/run/postgresql")
                .unwrap()
                .endpoint(),
            "socket /var/run/postgresql"
        );
        let s = Target::parse("sqlite:///tmp/x.db").unwrap();
        assert_eq!(
            s.sqlite_path.unwrap(),
            std::path::PathBuf::from("/tmp/x.db")
        );
        assert!(Target::parse("oracle://x").is_err());
        assert!(Target::parse("nonsense").is_err());
    }

    #[test]
    fn placeholders_convert() {
        assert_eq!(
            dollar_to_q("SELECT c FROM t WHERE id BETWEEN $1 AND $12"),
            "SELECT c FROM t WHERE id BETWEEN ? AND ?"
        );
    }
}
