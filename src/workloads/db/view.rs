//! The database's own view of its I/O (`iolab capture --url URL`): counters read at the capture's
//! start and end, their change beside what the block layer saw. PostgreSQL: the WAL position,
//! `pg_stat_wal` (14+), `pg_stat_io` (16+) and `pg_stat_bgwriter`'s buffers; MariaDB/MySQL:
//! `performance_schema.file_summary_by_instance` summed per file class, and InnoDB's own
//! counters (`SHOW GLOBAL STATUS`).

use super::{Backend, Conn};
use crate::measure::filemap::classify;
use crate::model::capture::{DbCounter, DbView};
use std::collections::BTreeMap;

/// One reading of the counters: name → (value, unit).
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub version: String,
    pub values: BTreeMap<String, (f64, String)>,
    pub missing: Vec<String>,
}

/// Rows `name|value|unit` of `sql` into `r`; the error (a view the server lacks) into
/// `missing` as `what: why`.
fn rows(c: &mut dyn Conn, sql: &str, what: &str, r: &mut Reading) {
    match c.strings(sql) {
        Ok(v) => {
            for line in v {
                let mut p = line.splitn(3, '|');
                if let (Some(n), Some(v), Some(u)) = (p.next(), p.next(), p.next())
                    && let Ok(x) = v.trim().parse::<f64>()
                {
                    let e = r
                        .values
                        .entry(n.to_string())
                        .or_insert((0.0, u.to_string()));
                    e.0 += x;
                }
            }
        }
        Err(e) => r
            .missing
            .push(format!("{what}: {}", one_line(&e.to_string()))),
    }
}

fn one_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// PostgreSQL's counters now.
fn read_pg(c: &mut dyn Conn) -> Reading {
    let mut r = Reading::default();
    let _ = c.exec("SELECT pg_stat_clear_snapshot()");
    r.version = c
        .strings("SHOW server_version")
        .ok()
        .and_then(|v| v.into_iter().next())
        .unwrap_or_default();
    let num: u32 = c
        .strings("SHOW server_version_num")
        .ok()
        .and_then(|v| v.into_iter().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    rows(
        c,
        "SELECT 'wal_position|' || pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text || '|bytes'",
        "pg_current_wal_lsn",
        &mut r,
    );
    if num >= 140000 {
        rows(
            c,
            "SELECT x FROM pg_stat_wal, LATERAL (VALUES \
             ('pg_stat_wal.wal_records|' || wal_records || '|count'), \
             ('pg_stat_wal.wal_fpi|' || wal_fpi || '|count'), \
             ('pg_stat_wal.wal_bytes|' || wal_bytes || '|bytes'), \
             ('pg_stat_wal.wal_write|' || wal_write || '|count'), \
             ('pg_stat_wal.wal_sync|' || wal_sync || '|count'), \
             ('pg_stat_wal.wal_write_time|' || wal_write_time || '|ms'), \
             ('pg_stat_wal.wal_sync_time|' || wal_sync_time || '|ms')) AS v(x)",
            "pg_stat_wal",
            &mut r,
        );
    } else {
        r.missing
            .push("pg_stat_wal: PostgreSQL 14 and later".to_string());
    }
    if num >= 160000 {
        rows(
            c,
            "SELECT x FROM pg_stat_io, LATERAL (VALUES \
             ('pg_stat_io.' || object || '.' || context || '.read_bytes|' || coalesce(reads * op_bytes, 0) || '|bytes'), \
             ('pg_stat_io.' || object || '.' || context || '.write_bytes|' || coalesce(writes * op_bytes, 0) || '|bytes'), \
             ('pg_stat_io.' || object || '.' || context || '.extend_bytes|' || coalesce(extends * op_bytes, 0) || '|bytes'), \
             ('pg_stat_io.' || object || '.' || context || '.fsyncs|' || coalesce(fsyncs, 0) || '|count')) AS v(x)",
            "pg_stat_io",
            &mut r,
        );
    } else {
        r.missing.push(format!(
            "pg_stat_io: PostgreSQL 16 and later (this is {})",
            r.version
        ));
    }
    if num < 170000 {
        rows(
            c,
            "SELECT x FROM pg_stat_bgwriter, LATERAL (VALUES \
             ('pg_stat_bgwriter.buffers_checkpoint|' || buffers_checkpoint || '|pages'), \
             ('pg_stat_bgwriter.buffers_clean|' || buffers_clean || '|pages'), \
             ('pg_stat_bgwriter.buffers_backend|' || buffers_backend || '|pages'), \
             ('pg_stat_bgwriter.buffers_backend_fsync|' || buffers_backend_fsync || '|count')) AS v(x)",
            "pg_stat_bgwriter",
            &mut r,
        );
    }
    r
}

/// MariaDB/MySQL's counters now: each file of `file_summary_by_instance` summed into its class.
fn read_my(c: &mut dyn Conn) -> Reading {
    let mut r = Reading {
        version: c
            .strings("SELECT VERSION()")
            .ok()
            .and_then(|v| v.into_iter().next())
            .unwrap_or_default(),
        ..Reading::default()
    };
    match c.strings(
        "SELECT CONCAT_WS('|', FILE_NAME, SUM_NUMBER_OF_BYTES_READ, SUM_NUMBER_OF_BYTES_WRITE, \
         COUNT_READ, COUNT_WRITE, COUNT_MISC) FROM performance_schema.file_summary_by_instance",
    ) {
        Ok(v) if !v.is_empty() => {
            for line in v {
                let f: Vec<&str> = line.split('|').collect();
                if f.len() != 6 {
                    continue;
                }
                let class = classify(f[0]).name();
                for (i, (what, unit)) in [
                    ("bytes_read", "bytes"),
                    ("bytes_written", "bytes"),
                    ("reads", "count"),
                    ("writes", "count"),
                    ("misc", "count"),
                ]
                .iter()
                .enumerate()
                {
                    if let Ok(x) = f[i + 1].parse::<f64>() {
                        r.values
                            .entry(format!("file_summary_by_instance.{class}.{what}"))
                            .or_insert((0.0, unit.to_string()))
                            .0 += x;
                    }
                }
            }
        }
        Ok(_) => r.missing.push(
            "performance_schema.file_summary_by_instance: empty (performance_schema is off: performance_schema=ON in the server's configuration)"
                .to_string(),
        ),
        Err(e) => r.missing.push(format!(
            "performance_schema.file_summary_by_instance: {}",
            one_line(&e.to_string())
        )),
    }
    rows(
        c,
        "SELECT CONCAT('status.', LOWER(VARIABLE_NAME), '|', VARIABLE_VALUE, '|', \
         IF(VARIABLE_NAME LIKE '%WRITTEN' OR VARIABLE_NAME LIKE '%READ', 'bytes', 'count')) \
         FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('INNODB_OS_LOG_WRITTEN', \
         'INNODB_OS_LOG_FSYNCS', 'INNODB_DATA_WRITTEN', 'INNODB_DATA_READ', 'INNODB_DATA_FSYNCS', \
         'INNODB_DATA_WRITES', 'INNODB_DATA_READS', 'INNODB_PAGES_WRITTEN')",
        "GLOBAL_STATUS",
        &mut r,
    );
    r
}

/// The counters of `backend` now (SQLite has none: its files tell).
pub fn read(c: &mut dyn Conn, backend: Backend) -> Reading {
    match backend {
        Backend::Postgres => read_pg(c),
        Backend::Mysql => read_my(c),
        Backend::Sqlite => Reading::default(),
    }
}

/// The change from `a` to `b`: every counter both have, those that moved first.
pub fn delta(backend: Backend, a: &Reading, b: &Reading) -> DbView {
    let mut counters: Vec<DbCounter> = b
        .values
        .iter()
        .filter_map(|(n, (v, u))| {
            let (v0, _) = a.values.get(n)?;
            Some(DbCounter {
                name: n.clone(),
                delta: v - v0,
                unit: u.clone(),
            })
        })
        .collect();
    counters.sort_by(|x, y| {
        (x.delta == 0.0)
            .cmp(&(y.delta == 0.0))
            .then(x.name.cmp(&y.name))
    });
    let mut missing = a.missing.clone();
    for m in &b.missing {
        if !missing.contains(m) {
            missing.push(m.clone());
        }
    }
    DbView {
        engine: match backend {
            Backend::Postgres => "postgresql",
            Backend::Mysql => "mysql",
            Backend::Sqlite => "sqlite",
        }
        .to_string(),
        version: b.version.clone(),
        counters,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(v: &[(&str, f64)]) -> Reading {
        Reading {
            version: "15.14".into(),
            values: v
                .iter()
                .map(|(n, x)| (n.to_string(), (*x, "bytes".to_string())))
                .collect(),
            missing: vec!["pg_stat_io: PostgreSQL 16 and later (this is 15.14)".into()],
        }
    }

    /// The change of each counter both readings have, the moved ones first; a counter only
    /// one has is left out.
    #[test]
    fn deltas_of_the_counters_both_readings_have() {
        let a = reading(&[("wal_position", 100.0), ("pg_stat_wal.wal_fpi", 3.0)]);
        let b = reading(&[
            ("wal_position", 16_777_316.0),
            ("pg_stat_wal.wal_fpi", 3.0),
            ("new", 1.0),
        ]);
        let d = delta(Backend::Postgres, &a, &b);
        let got: Vec<(&str, f64)> = d
            .counters
            .iter()
            .map(|c| (c.name.as_str(), c.delta))
            .collect();
        assert_eq!(
            got,
            vec![("wal_position", 16_777_216.0), ("pg_stat_wal.wal_fpi", 0.0)]
        );
        assert_eq!(d.missing.len(), 1);
        assert_eq!(d.engine, "postgresql");
    }
}
