//! The documents iolab prints, behind one trait, and the one resolver from a stored reference
//! (`12`, `g3`) to what `show`, `report` and `plot` present: the same text, the same JSON and the
//! same charts for every stored kind.

use crate::error::{Error, Result};
use crate::model::db::DbDoc;
use crate::model::env::EnvReport;
use crate::model::experiment::{CellOut, Point, SaturateSpec, SweepSpec};
use crate::model::run::RunDoc;
use crate::model::suite::{BonnieResult, IozoneResult};
use crate::model::zones::ZonesResult;
use crate::output::charts::Chart;
use crate::store::compare::Comparison;
use crate::store::{Ref, Store};
use crate::system::fsyncprobe::ProbeReport;
use serde_json::{Value, json};

/// A document a command prints: as JSON with `--json`, else as text for people.
pub trait Document {
    /// The JSON document (with its `schema` field where the kind has one; docs/results.md).
    fn json(&self) -> Value;
    /// The text a person reads.
    fn text(&self) -> String;
}

/// The document as the user asked for it: pretty JSON (one trailing newline) or text.
pub fn rendered(doc: &dyn Document, json: bool) -> String {
    if json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&doc.json()).unwrap_or_default()
        )
    } else {
        doc.text()
    }
}

fn to_json(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Documents whose JSON is their serde form and whose text is one render function.
macro_rules! document {
    ($($ty:ty => $render:path,)*) => {
        $(impl Document for $ty {
            fn json(&self) -> Value {
                to_json(self)
            }
            fn text(&self) -> String {
                $render(self)
            }
        })*
    };
}

document! {
    crate::model::crashcheck::CrashDoc => crate::output::crashcheck::render,
    DbDoc => crate::output::db::render,
    EnvReport => crate::output::env::render,
    ProbeReport => crate::system::fsyncprobe::render,
    Comparison => crate::output::history::render_compare,
    crate::model::verify::VerifyDoc => render_verify,
}

/// The text of `iolab verify --dir D`.
pub fn render_verify(d: &crate::model::verify::VerifyDoc) -> String {
    let mut s = format!(
        "{}: run {:016x}, blocks of {} bytes; {} blocks no verify write reached (not checked)\n{}\n",
        d.dir,
        d.run_id,
        d.block_bytes,
        d.unwritten,
        d.verify.line()
    );
    s.push_str(&d.verify.mismatch_lines(20));
    if d.verify.bad() > 0 {
        s.push_str(&format!(
            "{} blocks do not hold what was last written to them\n",
            d.verify.bad()
        ));
    }
    s
}

impl Document for RunDoc {
    fn json(&self) -> Value {
        self.to_json()
    }
    fn text(&self) -> String {
        crate::output::table::render(self)
    }
}

/// The serde form of a document with its `schema` at the top level. The suite and zones
/// models have no field for it (documents stored without one read the same), so it is added here,
/// the one place their JSON is made.
fn with_schema(v: &impl serde::Serialize, schema: &str) -> Value {
    let mut v = to_json(v);
    if let Value::Object(m) = &mut v {
        m.insert("schema".into(), schema.into());
    }
    v
}

impl Document for IozoneResult {
    fn json(&self) -> Value {
        with_schema(self, "iolab-iozone/1")
    }
    fn text(&self) -> String {
        // iozone -a -R: the table, then the "Excel" report
        crate::output::suites::iozone_table(self) + &crate::output::suites::iozone_excel(self)
    }
}

impl Document for ZonesResult {
    fn json(&self) -> Value {
        with_schema(self, "iolab-zones/2")
    }
    fn text(&self) -> String {
        crate::output::suites::zones_table(self)
    }
}

impl Document for BonnieResult {
    fn json(&self) -> Value {
        with_schema(self, "iolab-bonnie/2")
    }
    fn text(&self) -> String {
        let mut s = crate::output::suites::bonnie_table(self);
        s.push_str(&crate::output::suites::bonnie_csv(self));
        s
    }
}

/// A finished or stored sweep (`iolab-sweep/1`).
pub struct SweepDoc<'a> {
    pub gid: i64,
    pub spec: &'a SweepSpec,
    pub cells: &'a [CellOut],
    /// Some when the sweep just ran (stored sweeps do not say).
    pub interrupted: Option<bool>,
}

impl Document for SweepDoc<'_> {
    fn json(&self) -> Value {
        let mut v = json!({"schema": "iolab-sweep/1", "group": format!("g{}", self.gid), "axes": self.spec.axes, "metric": self.spec.metric, "cells": self.cells});
        if let Some(i) = self.interrupted {
            v["interrupted"] = i.into();
        }
        v
    }
    fn text(&self) -> String {
        crate::output::experiment::render_matrix(self.spec, self.cells)
    }
}

/// A finished or stored saturation search (`iolab-saturate/1`).
pub struct SaturateDoc<'a> {
    pub gid: i64,
    pub spec: &'a SaturateSpec,
    pub points: &'a [Point],
    /// Some when the search just ran.
    pub interrupted: Option<bool>,
}

impl Document for SaturateDoc<'_> {
    fn json(&self) -> Value {
        let last_pass = self
            .points
            .iter()
            .filter(|p| p.passed)
            .map(|p| p.value)
            .max();
        let first_fail = self
            .points
            .iter()
            .filter(|p| !p.passed)
            .map(|p| p.value)
            .min();
        let mut v = json!({"schema": "iolab-saturate/1", "group": format!("g{}", self.gid), "spec": self.spec, "points": self.points, "last_pass": last_pass, "first_fail": first_fail});
        if let Some(i) = self.interrupted {
            v["interrupted"] = i.into();
        }
        v
    }
    fn text(&self) -> String {
        let mut t = crate::output::experiment::render_saturate(self.spec, self.points);
        if self.interrupted == Some(true) {
            t.push_str(
                "stopped before the search ended: the verdict covers the points above only\n",
            );
        }
        t
    }
}

/// What one reference names in the store, read once: its JSON, its text and its charts. `show`,
/// `report` and `plot` all present this, so they cannot drift apart.
pub struct Shown {
    /// "run 12", "group g3"
    pub title: String,
    /// The first run behind the reference (for the report's header).
    pub first_run: i64,
    pub json: Value,
    pub text: String,
    pub charts: Vec<Chart>,
}

impl Document for Shown {
    fn json(&self) -> Value {
        self.json.clone()
    }
    fn text(&self) -> String {
        self.text.clone()
    }
}

/// A stored document in today's layout: imports stored as `iolab-import/1` (`cells[].ops[]`)
/// and Bonnie++/zones results stored as version 1 (fields without units) come out as the current
/// version, read through their types; every other document as stored.
pub fn current_doc(store: &Store, id: i64, kind: &str) -> Result<Value> {
    use crate::model::stored::{StoredDoc, SuiteDoc};
    let mut doc = store.doc(id)?;
    match kind {
        "import"
            if doc.get("schema").and_then(|s| s.as_str())
                != Some(crate::model::import::IMPORT_SCHEMA) =>
        {
            if let Ok(StoredDoc::Import(imp)) = store.stored_doc(id) {
                let source = doc
                    .get("source_file")
                    .and_then(|s| s.as_str())
                    .unwrap_or("");
                doc = imp.to_doc(source);
            }
        }
        "suite" => {
            if let Ok(StoredDoc::Suite(sd)) = store.stored_doc(id) {
                doc["result"] = match *sd {
                    SuiteDoc::Iozone(r) => r.json(),
                    SuiteDoc::Bonnie(r) => r.json(),
                    SuiteDoc::Zones(r) => r.json(),
                };
            }
        }
        _ => {}
    }
    Ok(doc)
}

/// Resolves a reference to what is shown for it.
pub fn resolve(store: &Store, r: Ref) -> Result<Shown> {
    use crate::output::history;
    match r {
        Ref::Run(id) => {
            let kind = store.run(id)?.kind; // an unknown id is a usage error, named as such
            let json = current_doc(store, id, &kind)?;
            Ok(Shown {
                title: format!("run {id}"),
                first_run: id,
                json,
                text: history::render_show(store, id)?,
                charts: crate::output::html::run_charts(store, id)?,
            })
        }
        Ref::Group(g) => {
            let (kind, spec) = store.experiment(g)?;
            let ids = store.group_runs(g)?;
            let first_run = *ids
                .first()
                .ok_or_else(|| Error::failed(format!("group g{g} has no runs")))?;
            let title = format!("group g{g}");
            let spec_of = || {
                spec.clone()
                    .ok_or_else(|| Error::failed(format!("group g{g}: its definition is missing")))
            };
            let bad = |e: serde_json::Error| Error::failed(format!("g{g}: {e}"));
            match kind.as_str() {
                "sweep" => {
                    let spec: SweepSpec = serde_json::from_value(spec_of()?).map_err(bad)?;
                    let cells = crate::workloads::sweep::stored_cells(store, g, &spec)?;
                    let d = SweepDoc {
                        gid: g,
                        spec: &spec,
                        cells: &cells,
                        interrupted: None,
                    };
                    Ok(Shown {
                        title,
                        first_run,
                        json: d.json(),
                        text: d.text(),
                        charts: crate::output::html::experiment_charts(store, g)?,
                    })
                }
                "saturate" => {
                    let spec: SaturateSpec = serde_json::from_value(spec_of()?).map_err(bad)?;
                    let points = crate::workloads::sweep::stored_points(store, g, &spec)?;
                    let d = SaturateDoc {
                        gid: g,
                        spec: &spec,
                        points: &points,
                        interrupted: None,
                    };
                    Ok(Shown {
                        title,
                        first_run,
                        json: d.json(),
                        text: d.text(),
                        charts: crate::output::html::experiment_charts(store, g)?,
                    })
                }
                _ => {
                    let rows = history::group_summary(store, &ids)?;
                    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
                    let mut text = format!("group g{g}: runs {}\n", list.join(", "));
                    text.push_str(&history::render_summary(&rows, ids.len()));
                    Ok(Shown {
                        title,
                        first_run,
                        json: json!({"schema": "iolab-group/1", "group": format!("g{g}"), "run_ids": ids, "summary": rows}),
                        text,
                        charts: crate::output::html::run_charts(store, first_run)?,
                    })
                }
            }
        }
    }
}
