//! Reading the store: listing runs, their rows, documents, metrics and histograms, groups, and
//! the references (`12`, `g3`) commands take; deleting runs.

use super::backend::{Row, Val, vals};
use super::histo::deserialize_hist;
use super::{Store, db_err, unknown};
use crate::error::{Error, Result};
use crate::measure::hist::LatHist;
use crate::model::run::RunDoc;
use crate::store::import::Imported;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricRow {
    pub run_id: i64,
    pub cell: i64,
    pub mode: String,
    /// The role of a run with concurrent roles (`--role`); None otherwise.
    pub role: Option<String>,
    pub op: String,
    pub threads: Option<i64>,
    pub bs_bytes: Option<i64>,
    pub ops: i64,
    pub bytes: i64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub lat_min_ns: Option<f64>,
    pub lat_mean_ns: Option<f64>,
    pub lat_max_ns: Option<f64>,
    pub lat_stddev_ns: Option<f64>,
    pub lat_p50_ns: Option<f64>,
    pub lat_p90_ns: Option<f64>,
    pub lat_p95_ns: Option<f64>,
    pub lat_p99_ns: Option<f64>,
    pub lat_p99_9_ns: Option<f64>,
    pub lat_p99_99_ns: Option<f64>,
}

impl MetricRow {
    /// The latency columns as the one latency summary of reported figures.
    pub fn lat(&self) -> crate::model::lat::ReportedLat {
        crate::model::lat::ReportedLat {
            min: self.lat_min_ns,
            mean: self.lat_mean_ns,
            max: self.lat_max_ns,
            stddev: self.lat_stddev_ns,
            p50: self.lat_p50_ns,
            p90: self.lat_p90_ns,
            p95: self.lat_p95_ns,
            p99: self.lat_p99_ns,
            p99_9: self.lat_p99_9_ns,
            p99_99: self.lat_p99_99_ns,
        }
    }
}

/// One run as listed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct RunRow {
    pub id: i64,
    /// The group as every command names it (`g3`), null outside a group.
    pub group: Option<String>,
    /// The group's number alone (3), kept for scripts written before `group`.
    pub group_id: Option<i64>,
    pub kind: crate::model::stored::RunKind,
    pub tool: String,
    pub tool_version: String,
    pub start_time: String,
    pub end_time: Option<String>,
    pub host: String,
    pub label: Option<String>,
    pub modes: Vec<String>,
    pub tags: std::collections::BTreeMap<String, String>,
    pub interrupted: bool,
}

/// Filters for `iolab list`.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub label: Option<String>,
    pub tags: Vec<(String, String)>,
    pub mode: Option<String>,
    pub host: Option<String>,
    /// RFC 3339 lower bound on start_time
    pub since: Option<String>,
    pub limit: Option<usize>,
}

/// A run or group reference: `12` (run) or `g3` (group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ref {
    Run(i64),
    Group(i64),
}

impl std::str::FromStr for Ref {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Ref, String> {
        let bad = || {
            format!(
                "'{s}' is not a run or group id: use a run id like 12 or a group id like g3 (iolab list shows them)"
            )
        };
        if let Some(g) = s.strip_prefix('g').or_else(|| s.strip_prefix("group:")) {
            return g.parse().map(Ref::Group).map_err(|_| bad());
        }
        s.parse().map(Ref::Run).map_err(|_| bad())
    }
}

impl std::fmt::Display for Ref {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ref::Run(i) => write!(f, "{i}"),
            Ref::Group(g) => write!(f, "g{g}"),
        }
    }
}

impl Store {
    fn row_to_run(r: &Row) -> RunRow {
        let group_id = r.opt_i64("group_id");
        RunRow {
            id: r.i64("id"),
            group: group_id.map(|g| format!("g{g}")),
            group_id,
            kind: crate::model::stored::RunKind::parse(&r.str("kind")),
            tool: r.str("tool"),
            tool_version: r.str("tool_version"),
            start_time: r.str("start_time"),
            end_time: r.opt_str("end_time"),
            host: r.str("host"),
            label: r.opt_str("label"),
            modes: r
                .str("modes")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            tags: Default::default(),
            interrupted: r.i64("interrupted") != 0,
        }
    }

    fn fill_tags(&self, run: &mut RunRow) -> Result<()> {
        for r in self.q(
            "SELECT key, value FROM tags WHERE run_id = ?1 ORDER BY key",
            &vals![run.id],
        )? {
            run.tags.insert(r.str("key"), r.str("value"));
        }
        Ok(())
    }

    /// Runs matching the filter, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<RunRow>> {
        let mut sql = String::from("SELECT * FROM runs WHERE 1=1");
        let mut args: Vec<Val> = Vec::new();
        let arg = |v: String, args: &mut Vec<Val>| {
            args.push(Val::T(v));
            args.len()
        };
        if let Some(l) = &f.label {
            let n = arg(l.clone(), &mut args);
            sql.push_str(&format!(" AND label = ?{n}"));
        }
        if let Some(m) = &f.mode {
            let n = arg(format!("%,{m},%"), &mut args);
            sql.push_str(&format!(" AND modes LIKE ?{n}"));
        }
        if let Some(h) = &f.host {
            let n = arg(h.clone(), &mut args);
            sql.push_str(&format!(" AND host = ?{n}"));
        }
        if let Some(s) = &f.since {
            let n = arg(s.clone(), &mut args);
            sql.push_str(&format!(" AND start_time >= ?{n}"));
        }
        for (k, v) in &f.tags {
            let a = arg(k.clone(), &mut args);
            let b = arg(v.clone(), &mut args);
            sql.push_str(&format!(" AND EXISTS (SELECT 1 FROM tags t WHERE t.run_id = runs.id AND t.key = ?{a} AND t.value = ?{b})"));
        }
        sql.push_str(" ORDER BY start_time DESC, id DESC");
        if let Some(n) = f.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut rows: Vec<RunRow> = self.q(&sql, &args)?.iter().map(Self::row_to_run).collect();
        for r in &mut rows {
            self.fill_tags(r)?;
        }
        Ok(rows)
    }

    /// One run's row, or a usage error naming the id.
    pub fn run(&self, id: i64) -> Result<RunRow> {
        let mut r = self
            .q1("SELECT * FROM runs WHERE id = ?1", &vals![id])?
            .map(|r| Self::row_to_run(&r))
            .ok_or_else(|| unknown(&self.path, &format!("run {id}")))?;
        self.fill_tags(&mut r)?;
        Ok(r)
    }

    /// The first run of `kind` whose stored document is `doc` exactly (an import of the same
    /// file, a run document imported again).
    pub fn same_doc(
        &self,
        kind: &crate::model::stored::RunKind,
        doc: &serde_json::Value,
    ) -> Result<Option<i64>> {
        Ok(self
            .q1(
                "SELECT id FROM runs WHERE kind = ?1 AND doc = ?2 ORDER BY id LIMIT 1",
                &vals![
                    kind.as_str(),
                    serde_json::to_string(doc).unwrap_or_default()
                ],
            )?
            .map(|r| r.i64("id")))
    }

    /// The stored document of a run.
    pub fn doc(&self, id: i64) -> Result<serde_json::Value> {
        let s = self
            .q1("SELECT doc FROM runs WHERE id = ?1", &vals![id])?
            .map(|r| r.str("doc"))
            .ok_or_else(|| unknown(&self.path, &format!("run {id}")))?;
        serde_json::from_str(&s).map_err(|e| {
            db_err(
                &self.path,
                format!("run {id}: stored document is not JSON: {e}"),
            )
        })
    }

    /// The stored document of run `id`, typed by its kind: the one place that maps the kind
    /// strings of the `runs` table to document types.
    pub fn stored_doc(&self, id: i64) -> Result<crate::model::stored::StoredDoc> {
        use crate::model::stored::{RunKind, StoredDoc, SuiteDoc};
        let kind = self.run(id)?.kind;
        let doc = self.doc(id)?;
        let bad = |e: serde_json::Error| {
            Error::failed(format!("run {id}: stored document cannot be read: {e}"))
        };
        Ok(match kind {
            RunKind::Run => StoredDoc::Run(Box::new(RunDoc::from_json(&doc).map_err(bad)?)),
            RunKind::Db => StoredDoc::Db(Box::new(serde_json::from_value(doc).map_err(bad)?)),
            RunKind::Import => StoredDoc::Import(Box::new(Imported::from_doc(&doc).map_err(bad)?)),
            RunKind::Crashcheck => {
                StoredDoc::Crashcheck(Box::new(serde_json::from_value(doc).map_err(bad)?))
            }
            RunKind::Verify => {
                StoredDoc::Verify(Box::new(serde_json::from_value(doc).map_err(bad)?))
            }
            RunKind::Suite => {
                let name = doc.get("suite").and_then(|x| x.as_str()).unwrap_or("");
                let r = doc.get("result").cloned().unwrap_or_default();
                StoredDoc::Suite(Box::new(match name {
                    "iozone" => SuiteDoc::Iozone(serde_json::from_value(r).map_err(bad)?),
                    "bonnie" => SuiteDoc::Bonnie(serde_json::from_value(r).map_err(bad)?),
                    "zones" => SuiteDoc::Zones(serde_json::from_value(r).map_err(bad)?),
                    "pts" => SuiteDoc::Pts(serde_json::from_value(r).map_err(bad)?),
                    "fingerprint" => SuiteDoc::Fingerprint(serde_json::from_value(r).map_err(bad)?),
                    other => {
                        return Err(Error::failed(format!(
                            "run {id}: a suite named {other:?}, which this iolab does not know"
                        )));
                    }
                }))
            }
            RunKind::Unknown(other) => {
                return Err(Error::failed(format!(
                    "run {id}: a stored kind {other:?}, which this iolab does not know"
                )));
            }
        })
    }

    pub fn env(&self, id: i64) -> Result<Option<serde_json::Value>> {
        Ok(self
            .q1("SELECT env FROM runs WHERE id = ?1", &vals![id])?
            .and_then(|r| r.opt_str("env"))
            .and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// The measured cells of run `id` in the one shape every stored kind shares
    /// (`cells[].results.<op>`), from its metrics rows.
    pub fn cells(&self, id: i64) -> Result<Vec<crate::model::stored::MeasuredCell>> {
        use crate::model::stored::{MeasuredCell, OpMeasure};
        let mut out: Vec<MeasuredCell> = Vec::new();
        for m in self.metrics(id)? {
            if out.last().is_none_or(|c| c.cell != m.cell) {
                out.push(MeasuredCell {
                    cell: m.cell,
                    mode: m.mode.clone(),
                    role: m.role.clone(),
                    threads: m.threads,
                    bs_bytes: m.bs_bytes,
                    results: Default::default(),
                });
            }
            let lat = m.lat();
            if let Some(c) = out.last_mut() {
                c.results.insert(
                    m.op.clone(),
                    OpMeasure {
                        ops: m.ops.max(0) as u64,
                        bytes: m.bytes.max(0) as u64,
                        iops: m.iops,
                        bytes_per_sec: m.bytes_per_sec,
                        lat_ns: lat,
                    },
                );
            }
        }
        Ok(out)
    }

    pub fn metrics(&self, id: i64) -> Result<Vec<MetricRow>> {
        Ok(self
            .q("SELECT * FROM metrics WHERE run_id = ?1 ORDER BY cell, CASE op WHEN 'read' THEN 0 WHEN 'write' THEN 1 WHEN 'fsync' THEN 2 ELSE 3 END", &vals![id])?
            .iter()
            .map(|r| MetricRow {
                run_id: r.i64("run_id"),
                cell: r.i64("cell"),
                mode: r.str("mode"),
                role: r.opt_str("role"),
                op: r.str("op"),
                threads: r.opt_i64("threads"),
                bs_bytes: r.opt_i64("bs_bytes"),
                ops: r.i64("ops"),
                bytes: r.i64("bytes"),
                iops: r.f64("iops"),
                bytes_per_sec: r.f64("bytes_per_sec"),
                lat_min_ns: r.opt_f64("lat_min_ns"),
                lat_mean_ns: r.opt_f64("lat_mean_ns"),
                lat_max_ns: r.opt_f64("lat_max_ns"),
                lat_stddev_ns: r.opt_f64("lat_stddev_ns"),
                lat_p50_ns: r.opt_f64("lat_p50_ns"),
                lat_p90_ns: r.opt_f64("lat_p90_ns"),
                lat_p95_ns: r.opt_f64("lat_p95_ns"),
                lat_p99_ns: r.opt_f64("lat_p99_ns"),
                lat_p99_9_ns: r.opt_f64("lat_p99_9_ns"),
                lat_p99_99_ns: r.opt_f64("lat_p99_99_ns"),
            })
            .collect())
    }

    /// A stored latency histogram of one run × cell × op.
    pub fn histogram(&self, id: i64, cell: i64, op: &str) -> Result<Option<LatHist>> {
        let blob = self
            .q1(
                "SELECT hdr FROM histograms WHERE run_id = ?1 AND cell = ?2 AND op = ?3",
                &vals![id, cell, op],
            )?
            .and_then(|r| r.opt_blob("hdr"));
        blob.map(|b| {
            deserialize_hist(&b).map_err(|e| db_err(&self.path, format!("run {id} histogram: {e}")))
        })
        .transpose()
    }

    /// Run ids of a group, in repetition order.
    pub fn group_runs(&self, gid: i64) -> Result<Vec<i64>> {
        let ids: Vec<i64> = self
            .q(
                "SELECT id FROM runs WHERE group_id = ?1 ORDER BY seq, id",
                &vals![gid],
            )?
            .iter()
            .map(|r| r.i64("id"))
            .collect();
        if ids.is_empty() {
            return Err(unknown(&self.path, &format!("group g{gid}")));
        }
        Ok(ids)
    }

    /// Deletes group `gid` when no run is in it (an experiment refused before its first point).
    pub fn delete_empty_group(&mut self, gid: i64) -> Result<()> {
        self.write(|tx| {
            tx.exec(
                "DELETE FROM groups WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.group_id = ?1)",
                &vals![gid],
            )?;
            Ok(())
        })
    }

    /// Deletes a run (with its metrics, tags and histograms).
    pub fn delete(&mut self, id: i64) -> Result<()> {
        self.run(id)?;
        self.write(|tx| {
            tx.exec("DELETE FROM runs WHERE id = ?1", &vals![id])?;
            tx.exec("DELETE FROM groups WHERE NOT EXISTS (SELECT 1 FROM runs WHERE runs.group_id = groups.id)", &[])?;
            Ok(())
        })
    }

    /// The run ids a reference stands for.
    pub fn resolve_run_ids(&self, r: Ref) -> Result<Vec<i64>> {
        match r {
            Ref::Run(id) => {
                self.run(id)?;
                Ok(vec![id])
            }
            Ref::Group(g) => self.group_runs(g),
        }
    }
}
