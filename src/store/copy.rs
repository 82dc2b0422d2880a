//! `iolab store copy`: every run of one store into another, each inserted or skipped by the
//! source's document id in one transaction, groups by their `uid`.

use super::backend::{DbResult, Exec, Row, Val, vals};
use super::save::hash_id;
use super::{Saved, Store, unknown};
use crate::error::Result;

/// What `store copy` did: (id in the source, id in the destination) of each run.
#[derive(Debug, Default)]
pub struct CopyReport {
    pub copied: Vec<(i64, i64)>,
    /// Runs the destination held already (copied before): not copied again.
    pub already: Vec<(i64, i64)>,
}

/// `INSERT INTO table (cols...) VALUES (...)` of a row read back, without the columns in `skip`
/// and with `set` replacing the values of the columns it names (or adding them, when the row has
/// no such column: an older store's). With `unique`, nothing is inserted when a row with the
/// same value of that column exists (insert or skip). `returning`: the new row's id (None:
/// skipped).
fn insert_row(
    tx: &mut dyn Exec,
    table: &str,
    row: &Row,
    skip: &[&str],
    set: &[(&str, Val)],
    unique: Option<&str>,
    returning: bool,
) -> DbResult<Option<i64>> {
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    for (name, v) in &row.cols {
        if skip.contains(&name.as_str()) || set.iter().any(|s| s.0 == name) {
            continue;
        }
        cols.push(name.as_str());
        vals.push(v.clone());
    }
    for (name, v) in set {
        cols.push(name);
        vals.push(v.clone());
    }
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({}){}{}",
        cols.join(", "),
        marks.join(", "),
        unique
            .map(|u| format!(" ON CONFLICT ({u}) DO NOTHING"))
            .unwrap_or_default(),
        if returning { " RETURNING id" } else { "" }
    );
    if returning {
        Ok(tx.query(&sql, &vals)?.first().map(|r| r.i64("id")))
    } else {
        tx.exec(&sql, &vals)?;
        Ok(None)
    }
}

/// The id of a group of a source store in `store copy`: its `uid`, else (a group of a store
/// before schema 6) a hash of what it is.
fn group_uid(g: &Row) -> String {
    g.opt_str("uid").unwrap_or_else(|| {
        let f = |n: &str| match g.get(n) {
            Val::T(s) => s.clone(),
            Val::I(i) => i.to_string(),
            _ => String::new(),
        };
        hash_id(&format!(
            "iolab-group\0{}\0{}\0{}\0{}\0{}",
            f("kind"),
            f("created"),
            f("label"),
            f("repeat"),
            f("spec")
        ))
    })
}

/// The destination's group for the source's group `g` (in the transaction that copies a run):
/// the one with its uid, else (copied by an iolab before schema 6) the one that is the same
/// (kind, creation time, repeat, label), else a new one, inserted or skipped by its uid.
fn copy_group(tx: &mut dyn Exec, g: &Row) -> DbResult<i64> {
    let uid = group_uid(g);
    let by_uid = |tx: &mut dyn Exec| -> DbResult<Option<i64>> {
        Ok(tx
            .query_opt("SELECT id FROM groups WHERE uid = ?1", &vals![uid.as_str()])?
            .map(|r| r.i64("id")))
    };
    if let Some(id) = by_uid(tx)? {
        return Ok(id);
    }
    if let Some(r) = tx.query_opt(
        "SELECT id FROM groups WHERE uid IS NULL AND kind = ?1 AND created = ?2 AND repeat = ?3 AND coalesce(label, '') = coalesce(?4, '') ORDER BY id LIMIT 1",
        &[
            g.get("kind").clone(),
            g.get("created").clone(),
            g.get("repeat").clone(),
            g.get("label").clone(),
        ],
    )? {
        return Ok(r.i64("id"));
    }
    match insert_row(
        tx,
        "groups",
        g,
        &["id"],
        &[("uid", Val::T(uid.clone()))],
        Some("uid"),
        true,
    )? {
        Some(id) => Ok(id),
        None => Ok(by_uid(tx)?.unwrap_or(0)),
    }
}

impl Store {
    /// Copies every run of this store into `dst` (`iolab store copy`), oldest first, each in one
    /// transaction of `dst` with its tags, metrics, histograms and group (made in `dst` once, the
    /// runs' places in it kept). Each run is copied under the source's document id (its
    /// `doc_id`, else a hash of its document), a unique key of `dst`: a run `dst` holds already
    /// (copied before, or by another copy running at the same time) is skipped in the same
    /// transaction, so a repeated copy adds nothing and two at once copy each run once. A run
    /// copied by an iolab before schema 6 (no document id) is recognised by what it is (kind,
    /// start time, host, document).
    pub fn copy_into(&self, dst: &mut Store) -> Result<CopyReport> {
        let mut report = CopyReport::default();
        let mut groups: std::collections::HashMap<i64, Row> = Default::default();
        for run in self.q("SELECT * FROM runs ORDER BY id", &[])? {
            let id = run.i64("id");
            let key = run
                .opt_str("doc_id")
                .unwrap_or_else(|| hash_id(&run.str("doc")));
            let group = match run.opt_i64("group_id") {
                None => None,
                Some(g) => Some(match groups.entry(g) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => e.insert(
                        self.q1("SELECT * FROM groups WHERE id = ?1", &vals![g])?
                            .ok_or_else(|| unknown(&self.path, &format!("group g{g}")))?,
                    ),
                }),
            };
            let tags = self.q("SELECT * FROM tags WHERE run_id = ?1", &vals![id])?;
            let metrics = self.q("SELECT * FROM metrics WHERE run_id = ?1", &vals![id])?;
            let hists = self.q("SELECT * FROM histograms WHERE run_id = ?1", &vals![id])?;
            let saved = dst.write(|tx| {
                let there = match tx.query_opt(
                    "SELECT id FROM runs WHERE doc_id = ?1",
                    &vals![key.as_str()],
                )? {
                    Some(r) => Some(r),
                    None => tx.query_opt(
                        "SELECT id FROM runs WHERE doc_id IS NULL AND start_time = ?1 AND kind = ?2 AND host = ?3 AND doc = ?4 ORDER BY id LIMIT 1",
                        &[
                            run.get("start_time").clone(),
                            run.get("kind").clone(),
                            run.get("host").clone(),
                            run.get("doc").clone(),
                        ],
                    )?,
                };
                if let Some(t) = there {
                    return Ok(Saved {
                        id: t.i64("id"),
                        already: true,
                    });
                }
                let dg = group.as_deref().map(|g| copy_group(tx, g)).transpose()?;
                let Some(new) = insert_row(
                    tx,
                    "runs",
                    &run,
                    &["id"],
                    &[("group_id", dg.into()), ("doc_id", Val::T(key.clone()))],
                    Some("doc_id"),
                    true,
                )?
                else {
                    // another copy saved it since this transaction looked
                    let id = tx
                        .query_opt("SELECT id FROM runs WHERE doc_id = ?1", &vals![key.as_str()])?
                        .map(|r| r.i64("id"))
                        .unwrap_or(0);
                    return Ok(Saved { id, already: true });
                };
                for (table, rows) in [
                    ("tags", &tags),
                    ("metrics", &metrics),
                    ("histograms", &hists),
                ] {
                    for r in rows {
                        insert_row(tx, table, r, &[], &[("run_id", Val::I(new))], None, false)?;
                    }
                }
                Ok(Saved {
                    id: new,
                    already: false,
                })
            })?;
            if saved.already {
                report.already.push((id, saved.id));
            } else {
                report.copied.push((id, saved.id));
            }
        }
        Ok(report)
    }
}
