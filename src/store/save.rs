//! Saving: one transaction per document (run, db, suite, crashcheck, verify, import) with its
//! metrics, histograms, tags and group, under its document id (`runs.doc_id`, schema 6): a
//! document is saved at most once (insert or skip).

use super::backend::{DbError, DbResult, Exec, vals};
use super::histo::serialize_hist;
use super::{Store, unknown};
use crate::error::{Error, Result};
use crate::measure::hist::LatHist;
use crate::measure::stats::OpKind;
use crate::model::run::RunDoc;
use crate::model::stored::{GroupKind, RunKind};
use crate::store::import::Imported;

impl Store {
    /// Starts a repetition group.
    pub fn new_group(&mut self, kind: GroupKind, label: Option<&str>, repeat: u32) -> Result<i64> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        self.write(|tx| insert_group(tx, &kind, &now, label, i64::from(repeat), None))
    }

    /// Starts an experiment: a group with its definition (axes, options) as JSON.
    pub fn new_experiment(
        &mut self,
        kind: GroupKind,
        label: Option<&str>,
        repeat: u32,
        spec: &serde_json::Value,
    ) -> Result<i64> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let spec = serde_json::to_string(spec).expect("json");
        self.write(|tx| insert_group(tx, &kind, &now, label, i64::from(repeat), Some(&spec)))
    }

    /// Replaces an experiment's definition (a saturation search's relative target, once its
    /// value is known).
    pub fn set_experiment_spec(&mut self, gid: i64, spec: &serde_json::Value) -> Result<()> {
        let spec = serde_json::to_string(spec).expect("json");
        self.write(|tx| {
            tx.exec(
                "UPDATE groups SET spec = ?1 WHERE id = ?2",
                &vals![spec.as_str(), gid],
            )
        })?;
        Ok(())
    }

    /// An experiment's kind and definition.
    pub fn experiment(&self, gid: i64) -> Result<(GroupKind, Option<serde_json::Value>)> {
        let r = self
            .q1("SELECT kind, spec FROM groups WHERE id = ?1", &vals![gid])?
            .ok_or_else(|| unknown(&self.path, &format!("group g{gid}")))?;
        Ok((
            GroupKind::parse(&r.str("kind")),
            r.opt_str("spec")
                .and_then(|s| serde_json::from_str(&s).ok()),
        ))
    }

    /// Marks a saved run as one cell of an experiment.
    pub fn set_cell(&mut self, id: i64, cell: &serde_json::Value) -> Result<()> {
        let cell = serde_json::to_string(cell).expect("json");
        self.write(|tx| {
            tx.exec(
                "UPDATE runs SET cell = ?1 WHERE id = ?2",
                &vals![cell.as_str(), id],
            )
        })?;
        Ok(())
    }

    /// The cell of a run, when it belongs to an experiment.
    pub fn cell(&self, id: i64) -> Result<Option<serde_json::Value>> {
        Ok(self
            .q1("SELECT cell FROM runs WHERE id = ?1", &vals![id])?
            .and_then(|r| r.opt_str("cell"))
            .and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// The one path every `save_*` takes, in one transaction: the document's run row (with a
    /// document id, nothing more when the store holds that document already: `already`), its
    /// tags, then its own rows (`rows`, given the new run's id: metrics, histograms).
    fn save_doc(
        &mut self,
        run: &RunIn,
        tags: &std::collections::BTreeMap<String, String>,
        mut rows: impl FnMut(&mut dyn Exec, i64) -> DbResult<()>,
    ) -> Result<Saved> {
        self.write(|tx| {
            let saved = insert_run(tx, run)?;
            if !saved.already {
                insert_tags(tx, saved.id, tags)?;
                rows(tx, saved.id)?;
            }
            Ok(saved)
        })
    }

    /// Saves one `iolab run` in one transaction. `json` is the document as printed. The run's
    /// id (that of the run saved before when the store holds its document id already).
    pub fn save_run(
        &mut self,
        doc: &RunDoc,
        json: &serde_json::Value,
        group: Option<(i64, u32)>,
        cell: Option<&serde_json::Value>,
    ) -> Result<i64> {
        Ok(self.save_run_once(doc, json, group, cell)?.id)
    }

    /// [`Store::save_run`], saying whether the store held the document already (its
    /// [`doc_id`]): then nothing is saved.
    pub fn save_run_once(
        &mut self,
        doc: &RunDoc,
        json: &serde_json::Value,
        group: Option<(i64, u32)>,
        cell: Option<&serde_json::Value>,
    ) -> Result<Saved> {
        let run = RunIn {
            doc_id: Some(doc_id(json)),
            kind: RunKind::Run,
            tool: "iolab",
            tool_version: &doc.iolab_version,
            start_time: &doc.start_time,
            end_time: Some(&doc.end_time),
            host: &doc.env.host,
            label: doc.label.as_deref(),
            modes: doc.runs.iter().map(|c| c.mode.as_str()).collect(),
            interrupted: doc.interrupted,
            doc: json,
            env: Some(serde_json::json!({"run": doc.env, "system": doc.system})),
            group,
            cell,
        };
        // A phase of concurrent roles is stored as one cell per role (`role` names it).
        let flat = crate::model::run::flat_cells(&doc.runs);
        self.save_doc(&run, &doc.tags, |tx, id| {
            for (ci, (role, c)) in flat.iter().enumerate() {
                for k in OpKind::ALL {
                    let r = c.results.get(k);
                    if r.ops == 0 {
                        continue;
                    }
                    let l = r.lat_ns.as_ref();
                    insert_metric(
                        tx,
                        id,
                        &MetricIn {
                            cell: ci as i64,
                            mode: &c.mode,
                            role: role.as_deref(),
                            op: k.name(),
                            threads: Some(c.job.job.threads as i64),
                            bs_bytes: Some(c.job.job.bs_bytes as i64),
                            ops: r.ops as i64,
                            bytes: r.bytes as i64,
                            iops: r.iops,
                            bytes_per_sec: r.bytes_per_sec,
                            lat: l.map(|x| x.columns()).unwrap_or_default(),
                        },
                    )?;
                    if let Some(h) = c.lat_hists.get(k as usize).filter(|h| h.count() > 0) {
                        insert_hist(tx, id, ci as i64, k.name(), h)?;
                    }
                }
            }
            Ok(())
        })
    }

    /// Saves an `iolab db` run in one transaction; `json` is the document as printed.
    pub fn save_db(
        &mut self,
        doc: &crate::model::db::DbDoc,
        json: &serde_json::Value,
        host: &str,
    ) -> Result<i64> {
        Ok(self.save_db_once(doc, json, host)?.id)
    }

    /// [`Store::save_db`], saying whether the store held the document already.
    pub fn save_db_once(
        &mut self,
        doc: &crate::model::db::DbDoc,
        json: &serde_json::Value,
        host: &str,
    ) -> Result<Saved> {
        let run = RunIn {
            doc_id: Some(doc_id(json)),
            kind: RunKind::Db,
            tool: "iolab",
            tool_version: &doc.iolab_version,
            start_time: &doc.start_time,
            end_time: Some(&doc.end_time),
            host,
            label: doc.label.as_deref(),
            modes: vec![doc.test.as_str()],
            interrupted: doc.interrupted,
            doc: json,
            env: Some(
                serde_json::json!({"run": {"host": host, "backend": doc.backend, "settings": doc.settings}, "system": doc.system}),
            ),
            group: None,
            cell: None,
        };
        self.save_doc(&run, &doc.tags, |tx, id| {
            for (name, r) in &doc.types {
                let l = r.lat_ns.as_ref();
                insert_metric(
                    tx,
                    id,
                    &MetricIn {
                        role: None,
                        cell: 0,
                        mode: &doc.test,
                        op: name,
                        threads: Some(doc.job.threads as i64),
                        bs_bytes: None,
                        ops: r.transactions as i64,
                        bytes: 0,
                        iops: r.tps,
                        bytes_per_sec: 0.0,
                        lat: l.map(|x| x.columns()).unwrap_or_default(),
                    },
                )?;
                if let Some(h) = doc.hist.as_ref().filter(|h| h.count() > 0) {
                    insert_hist(tx, id, 0, name, h)?;
                }
            }
            Ok(())
        })
    }

    /// Saves a suite or zones result (kind `suite`, `modes` = the suite's name) in one transaction:
    /// the document, which `show` renders, and one `metrics` row per figure
    /// ([`Store::suite_metrics`]), which `compare` and `export` read.
    pub fn save_suite(
        &mut self,
        name: &str,
        doc: &serde_json::Value,
        host: &str,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        let metrics = Self::suite_metrics(name, doc)?;
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let stored = serde_json::json!({"suite": name, "result": doc});
        let run = RunIn {
            doc_id: None,
            kind: RunKind::Suite,
            tool: "iolab",
            tool_version: env!("CARGO_PKG_VERSION"),
            start_time: &now,
            end_time: Some(&now),
            host,
            label: None,
            modes: vec![name],
            interrupted: doc
                .get("interrupted")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            doc: &stored,
            env: Some(serde_json::json!({"run": {"host": host}, "system": system})),
            group: None,
            cell: None,
        };
        let saved = self.save_doc(&run, &Default::default(), |tx, id| {
            for (ci, m) in metrics.iter().enumerate() {
                insert_metric(
                    tx,
                    id,
                    &MetricIn {
                        role: None,
                        cell: ci as i64,
                        mode: &m.mode,
                        op: m.op,
                        threads: m.threads.map(i64::from),
                        bs_bytes: m.bs_bytes.map(|b| b as i64),
                        ops: m.ops as i64,
                        bytes: m.bytes as i64,
                        iops: m.iops,
                        bytes_per_sec: m.bytes_per_sec,
                        lat: [
                            None,
                            m.lat_mean_ns,
                            m.lat_max_ns,
                            None,
                            None,
                            None,
                            None,
                            None,
                            None,
                            None,
                        ],
                    },
                )
                .map_err(|e| DbError {
                    msg: format!("{name} {}: {e}", m.mode),
                    ..e
                })?;
            }
            Ok(())
        })?;
        Ok(saved.id)
    }

    /// Saves a `crashcheck write` or `verify` document (kind `crashcheck`, `modes` = the phase).
    /// It has no metrics rows: what it says is a count of lost records, not a speed.
    pub fn save_crashcheck(
        &mut self,
        doc: &crate::model::crashcheck::CrashDoc,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let json = serde_json::to_value(doc).map_err(|e| Error::failed(e.to_string()))?;
        let run = RunIn {
            doc_id: None,
            kind: RunKind::Crashcheck,
            tool: "iolab",
            tool_version: env!("CARGO_PKG_VERSION"),
            start_time: &doc.start_time,
            end_time: Some(&now),
            host: &doc.host,
            label: None,
            modes: vec![&doc.phase],
            interrupted: doc
                .write
                .as_ref()
                .is_some_and(|w| w.stopped == crate::model::crashcheck::Stop::Interrupted),
            doc: &json,
            env: Some(serde_json::json!({"run": {"host": doc.host}, "system": system})),
            group: None,
            cell: None,
        };
        Ok(self.save_doc(&run, &Default::default(), |_, _| Ok(()))?.id)
    }

    /// Saves an `iolab verify --dir` document (kind `verify`, `modes` = `verify`), with its
    /// label and tags. Like a crashcheck it has no metrics rows: it says what it found, not a speed.
    pub fn save_verify(
        &mut self,
        doc: &crate::model::verify::VerifyDoc,
        json: &serde_json::Value,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<i64> {
        Ok(self.save_verify_once(doc, json, system)?.id)
    }

    /// [`Store::save_verify`], saying whether the store held the document already.
    pub fn save_verify_once(
        &mut self,
        doc: &crate::model::verify::VerifyDoc,
        json: &serde_json::Value,
        system: Option<&crate::system::env::EnvReport>,
    ) -> Result<Saved> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let run = RunIn {
            doc_id: Some(doc_id(json)),
            kind: RunKind::Verify,
            tool: "iolab",
            tool_version: env!("CARGO_PKG_VERSION"),
            start_time: &doc.start_time,
            end_time: Some(&now),
            host: &doc.host,
            label: doc.label.as_deref(),
            modes: vec!["verify"],
            interrupted: false,
            doc: json,
            env: Some(serde_json::json!({"run": {"host": doc.host}, "system": system})),
            group: None,
            cell: None,
        };
        self.save_doc(&run, &doc.tags, |_, _| Ok(()))
    }

    /// The `metrics` rows of a suite or zones result document (`result` of kind `suite`), by the
    /// suite's name: the model's `metric_rows` of IOZone, Bonnie++ or zones.
    pub fn suite_metrics(
        name: &str,
        doc: &serde_json::Value,
    ) -> Result<Vec<crate::model::suite::SuiteMetric>> {
        use crate::model::{suite, zones};
        let bad =
            |e: serde_json::Error| Error::failed(format!("{name} result cannot be read: {e}"));
        let r = doc.clone();
        Ok(match name {
            "iozone" => serde_json::from_value::<suite::IozoneResult>(r)
                .map_err(bad)?
                .metric_rows(),
            "bonnie" => serde_json::from_value::<suite::BonnieResult>(r)
                .map_err(bad)?
                .metric_rows(),
            "zones" => serde_json::from_value::<zones::ZonesResult>(r)
                .map_err(bad)?
                .metric_rows(),
            "pts" => serde_json::from_value::<crate::model::pts::PtsResult>(r)
                .map_err(bad)?
                .metric_rows(),
            "fingerprint" => serde_json::from_value::<crate::model::fingerprint::Fingerprint>(r)
                .map_err(bad)?
                .metric_rows(),
            other => {
                return Err(Error::failed(format!(
                    "a suite named {other:?}, which this iolab does not know"
                )));
            }
        })
    }

    /// Saves an imported result (fio, sysbench) in one transaction; `doc` is its stored document.
    pub fn save_import(
        &mut self,
        imp: &Imported,
        doc: &serde_json::Value,
        host: &str,
        label: Option<&str>,
        tags: &std::collections::BTreeMap<String, String>,
    ) -> Result<i64> {
        let start = imp.start_time.clone().unwrap_or_else(|| {
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        });
        let run = RunIn {
            doc_id: None,
            kind: RunKind::Import,
            tool: &imp.tool,
            tool_version: &imp.tool_version,
            start_time: &start,
            end_time: None,
            host,
            label,
            modes: imp.cells.iter().map(|c| c.mode.as_str()).collect(),
            interrupted: false,
            doc,
            env: None,
            group: None,
            cell: None,
        };
        // The histograms of imported latency bins, made before the transaction.
        let mut hists: Vec<(i64, &str, LatHist)> = Vec::new();
        for (ci, c) in imp.cells.iter().enumerate() {
            for o in &c.ops {
                if let Some(bins) = &o.hist_bins {
                    let mut h = LatHist::new();
                    for &(v, n) in bins {
                        let _ =
                            h.h.record_n(v.clamp(1, crate::measure::hist::MAX_TRACKED_NS), n);
                    }
                    if h.count() > 0 {
                        hists.push((ci as i64, &o.op, h));
                    }
                }
            }
        }
        let saved = self.save_doc(&run, tags, |tx, id| {
            for (ci, c) in imp.cells.iter().enumerate() {
                for o in &c.ops {
                    let l = o.lat_ns.as_ref();
                    insert_metric(
                        tx,
                        id,
                        &MetricIn {
                            role: None,
                            cell: ci as i64,
                            mode: &c.mode,
                            op: &o.op,
                            threads: Some(c.threads as i64),
                            bs_bytes: Some(c.bs_bytes as i64),
                            ops: o.ops as i64,
                            bytes: o.bytes as i64,
                            iops: o.iops,
                            bytes_per_sec: o.bytes_per_sec,
                            lat: l.map(|x| x.columns()).unwrap_or_default(),
                        },
                    )
                    .map_err(|e| DbError {
                        msg: format!("cell {ci} op {}: {e}", o.op),
                        ..e
                    })?;
                }
            }
            for (ci, op, h) in &hists {
                insert_hist(tx, id, *ci, op, h)?;
            }
            Ok(())
        })?;
        Ok(saved.id)
    }
}

/// One row of `runs`, whatever made it (run, db, suite, import).
struct RunIn<'a> {
    /// The document's id ([`doc_id`]); None: a document made here and saved now (a suite, a
    /// crashcheck, an import of a tool's output), which gets a new one.
    doc_id: Option<String>,
    kind: RunKind,
    tool: &'a str,
    tool_version: &'a str,
    start_time: &'a str,
    end_time: Option<&'a str>,
    host: &'a str,
    label: Option<&'a str>,
    modes: Vec<&'a str>,
    interrupted: bool,
    /// the document as printed
    doc: &'a serde_json::Value,
    /// what `compare` diffs: `{"run": ..., "system": ...}`
    env: Option<serde_json::Value>,
    /// experiment or repetition group, and the run's place in it
    group: Option<(i64, u32)>,
    /// an experiment cell's coordinates
    cell: Option<&'a serde_json::Value>,
}

/// A document saved: its run id, and whether the store held it already (its document id), in
/// which case nothing was saved and `id` is the run saved before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saved {
    pub id: i64,
    pub already: bool,
}

/// The id a document is saved under (`runs.doc_id`): its `doc_id` when that is one iolab made
/// (32 lowercase hex digits, [`crate::model::new_doc_id`]), else (a document of an iolab before
/// document ids) the SHA-256 of the document as stored, 64 hex digits: the same document gets
/// the same id wherever it is saved from.
pub fn doc_id(doc: &serde_json::Value) -> String {
    match doc.get("doc_id").and_then(|v| v.as_str()) {
        Some(id)
            if id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
        {
            id.to_string()
        }
        _ => hash_id(&serde_json::to_string(doc).unwrap_or_default()),
    }
}

/// SHA-256 of `text`, in hex.
pub(super) fn hash_id(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The one `INSERT INTO runs`, or none when the store holds the document id already (insert or
/// skip, in the caller's transaction: two savers of one document never both insert it).
fn insert_run(c: &mut dyn Exec, r: &RunIn) -> DbResult<Saved> {
    let json = |v: &serde_json::Value| serde_json::to_string(v).unwrap_or_default();
    let key = r.doc_id.clone().unwrap_or_else(crate::model::new_doc_id);
    // A document without an id of its own (an older iolab's) may be stored already by an iolab
    // before schema 6, with no id: the same document is that run.
    if key.len() == 64
        && let Some(row) = c.query_opt(
            "SELECT id FROM runs WHERE doc_id IS NULL AND start_time = ?1 AND kind = ?2 AND doc = ?3 ORDER BY id LIMIT 1",
            &vals![r.start_time, r.kind.as_str(), json(r.doc)],
        )?
    {
        return Ok(Saved {
            id: row.i64("id"),
            already: true,
        });
    }
    let row = c.query(
        "INSERT INTO runs (kind, tool, tool_version, start_time, end_time, host, label, modes, interrupted, doc, env, group_id, seq, cell, doc_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) ON CONFLICT (doc_id) DO NOTHING RETURNING id",
        &vals![
            r.kind.as_str(),
            r.tool,
            r.tool_version,
            r.start_time,
            r.end_time,
            r.host,
            r.label,
            format!(",{},", r.modes.join(",")),
            r.interrupted,
            json(r.doc),
            r.env.as_ref().map(json),
            r.group.map(|g| g.0),
            r.group.map(|g| i64::from(g.1)),
            r.cell.map(json),
            key.as_str(),
        ],
    )?;
    if let Some(row) = row.first() {
        return Ok(Saved {
            id: row.i64("id"),
            already: false,
        });
    }
    let id = c
        .query_opt(
            "SELECT id FROM runs WHERE doc_id = ?1",
            &vals![key.as_str()],
        )?
        .map(|r| r.i64("id"))
        .unwrap_or(0);
    Ok(Saved { id, already: true })
}

/// The one `INSERT INTO groups`; returns the new group id.
fn insert_group(
    c: &mut dyn Exec,
    kind: &GroupKind,
    created: &str,
    label: Option<&str>,
    repeat: i64,
    spec: Option<&str>,
) -> DbResult<i64> {
    let row = c.query(
        "INSERT INTO groups (kind, created, label, repeat, spec, uid) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        &vals![kind.as_str(), created, label, repeat, spec, crate::model::new_doc_id()],
    )?;
    Ok(row.first().map(|r| r.i64("id")).unwrap_or(0))
}

fn insert_tags(
    tx: &mut dyn Exec,
    run_id: i64,
    tags: &std::collections::BTreeMap<String, String>,
) -> DbResult<()> {
    for (k, v) in tags {
        tx.exec(
            "INSERT INTO tags (run_id, key, value) VALUES (?1, ?2, ?3)",
            &vals![run_id, k.as_str(), v.as_str()],
        )?;
    }
    Ok(())
}

fn insert_hist(tx: &mut dyn Exec, run_id: i64, cell: i64, op: &str, h: &LatHist) -> DbResult<u64> {
    tx.exec(
        "INSERT INTO histograms (run_id, cell, op, hdr) VALUES (?1, ?2, ?3, ?4)",
        &vals![run_id, cell, op, serialize_hist(h)],
    )
}

/// One row of `metrics`; `lat` in ns: min, mean, max, stddev, p50, p90, p95, p99, p99.9, p99.99.
struct MetricIn<'a> {
    cell: i64,
    mode: &'a str,
    /// The role of a run with concurrent roles.
    role: Option<&'a str>,
    op: &'a str,
    threads: Option<i64>,
    bs_bytes: Option<i64>,
    ops: i64,
    bytes: i64,
    iops: f64,
    bytes_per_sec: f64,
    lat: [Option<f64>; 10],
}

fn insert_metric(tx: &mut dyn Exec, run_id: i64, m: &MetricIn) -> DbResult<u64> {
    let l = &m.lat;
    tx.exec(
        "INSERT INTO metrics (run_id, cell, mode, op, threads, bs_bytes, ops, bytes, iops, bytes_per_sec,
            lat_min_ns, lat_mean_ns, lat_max_ns, lat_stddev_ns, lat_p50_ns, lat_p90_ns, lat_p95_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, role)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
        &vals![run_id, m.cell, m.mode, m.op, m.threads, m.bs_bytes, m.ops, m.bytes, m.iops, m.bytes_per_sec, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], m.role],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document's own id is its id; one without a well-formed one is known by the SHA-256 of
    /// the document as stored, the same wherever it is saved from.
    #[test]
    fn a_document_is_known_by_its_id_or_its_hash() {
        let id = crate::model::new_doc_id();
        assert_eq!(id.len(), 32);
        assert_ne!(id, crate::model::new_doc_id());
        let doc = serde_json::json!({"schema": "iolab-run/1", "doc_id": id, "label": "a"});
        assert_eq!(doc_id(&doc), id);
        let old = serde_json::json!({"schema": "iolab-run/1", "label": "a"});
        let h = doc_id(&old);
        assert_eq!(h.len(), 64);
        assert_eq!(h, hash_id(&serde_json::to_string(&old).unwrap()));
        let reread: serde_json::Value =
            serde_json::from_str(&serde_json::to_string_pretty(&old).unwrap()).unwrap();
        assert_eq!(
            doc_id(&reread),
            h,
            "the same document, however it was spelled"
        );
        for bad in ["ABC", "x", &id.to_uppercase(), &format!("{id}0")] {
            let d = serde_json::json!({"doc_id": bad});
            assert_eq!(doc_id(&d).len(), 64, "{bad}");
        }
    }
}
