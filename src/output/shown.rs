//! The one resolver from a stored reference (`12`, `g3`) to what `show`, `report` and `plot`
//! present: the same text, the same JSON and the same charts for every stored kind.

use crate::error::{Error, Result};
use crate::model::experiment::{SaturateSpec, SweepSpec};
use crate::output::charts::Chart;
use crate::output::document::{Document, SaturateDoc, SweepDoc};
use crate::store::{Ref, Store};
use serde_json::{Value, json};

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
    fn text(&self) -> Result<String> {
        Ok(self.text.clone())
    }
}

/// Resolves a reference to what is shown for it.
pub fn resolve_shown(store: &Store, r: Ref) -> Result<Shown> {
    resolve(store, r, None)
}

/// `show gN --metric M`: a sweep's matrix and charts of `metric` instead of its own; refused
/// for anything else.
pub fn resolve_shown_as(store: &Store, r: Ref, metric: &str) -> Result<Shown> {
    if crate::workloads::sweep::metric(&Default::default(), metric).is_none() {
        return Err(Error::usage(format!(
            "--metric {metric}: use one of {}",
            crate::workloads::sweep::METRIC_NAMES
        )));
    }
    let sweep = match r {
        Ref::Group(g) => store.experiment(g)?.0 == crate::model::stored::GroupKind::Sweep,
        Ref::Run(_) => false,
    };
    if !sweep {
        return Err(Error::usage(format!(
            "--metric: {r} is not a sweep; --metric picks the metric of a sweep's matrix (show gN of a sweep or suite sysbench-fileio)"
        )));
    }
    resolve(store, r, Some(metric))
}

fn resolve(store: &Store, r: Ref, metric: Option<&str>) -> Result<Shown> {
    use crate::output::stored_views;
    match r {
        Ref::Run(id) => {
            let kind = store.run(id)?.kind; // an unknown id is a usage error, named as such
            let json = stored_views::current_doc(store, id, &kind)?;
            Ok(Shown {
                title: format!("run {id}"),
                first_run: id,
                json,
                text: stored_views::render_show(store, id)?,
                charts: crate::output::stored_charts::run_charts(store, id)?,
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
            // an experiment's document, shown with the experiment's charts
            let experiment = |d: &dyn Document| -> Result<Shown> {
                Ok(Shown {
                    title: title.clone(),
                    first_run,
                    json: d.json(),
                    text: d.text()?,
                    charts: crate::output::experiment_charts::experiment_charts(store, g, metric)?,
                })
            };
            match kind {
                crate::model::stored::GroupKind::Sweep => {
                    let mut spec: SweepSpec = serde_json::from_value(spec_of()?).map_err(bad)?;
                    if let Some(m) = metric {
                        spec.metric = m.to_string();
                    }
                    let cells = crate::workloads::sweep::stored_cells(store, g, &spec)?;
                    let d = SweepDoc {
                        gid: g,
                        spec: &spec,
                        cells: &cells,
                        interrupted: None,
                    };
                    experiment(&d)
                }
                crate::model::stored::GroupKind::Saturate => {
                    let spec: SaturateSpec = serde_json::from_value(spec_of()?).map_err(bad)?;
                    let points = crate::workloads::sweep::stored_points(store, g, &spec)?;
                    let d = SaturateDoc {
                        gid: g,
                        spec: &spec,
                        points: &points,
                        interrupted: None,
                    };
                    experiment(&d)
                }
                _ => {
                    let rows = stored_views::group_summary(store, &ids)?;
                    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
                    let mut text = format!("group g{g}: runs {}\n", list.join(", "));
                    text.push_str(&stored_views::render_summary(&rows, ids.len()));
                    for w in stored_views::noisy_repetitions(&rows, ids.len()) {
                        text.push_str(&format!("warning [{}]: {}\n", w.code, w.message));
                    }
                    Ok(Shown {
                        title,
                        first_run,
                        json: json!({"schema": crate::model::schema::GROUP, "group": format!("g{g}"), "run_ids": ids, "summary": rows}),
                        text,
                        // every repetition, numbered, and their mean and spread; then the
                        // first repetition's own charts, named as such
                        charts: {
                            let mut c =
                                crate::output::metric_charts::repetition_charts(store, &ids)?;
                            for mut first in
                                crate::output::stored_charts::run_charts(store, first_run)?
                            {
                                first.name = format!("first-{}", first.name);
                                first.title = format!(
                                    "{} (repetition 1 of {}, run {first_run})",
                                    first.title,
                                    ids.len()
                                );
                                c.push(first);
                            }
                            c
                        },
                    })
                }
            }
        }
    }
}
