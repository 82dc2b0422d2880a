use super::*;
use crate::analysis::explain::Explanation;
use crate::model::run::RunDoc;

pub fn list(a: &cli::ListArgs) -> Result<i32> {
    let s = open_store(&a.db)?;
    let f = store::Filter {
        label: a.label.label.clone(),
        tags: cli::parse_tags(&a.tag.tags)?.into_iter().collect(),
        mode: a.mode.clone(),
        host: a.host.clone(),
        since: a.since.as_deref().map(cli::parse_since).transpose()?,
        limit: Some(a.limit),
    };
    let rows = s.list(&f)?;
    let doc = stored_views::ListDoc {
        store: &s,
        rows: &rows,
    };
    emit(&doc, Format::json_if(a.print.json))?;
    Ok(0)
}

pub fn show(a: &cli::ShowArgs) -> Result<i32> {
    let s = open_store(&a.r.db)?;
    let r: store::Ref = a.r.id.parse().map_err(Error::usage)?;
    let shown = match &a.metric {
        None => crate::output::shown::resolve_shown(&s, r)?,
        Some(m) => crate::output::shown::resolve_shown_as(&s, r, m)?,
    };
    emit(&shown, Format::json_if(a.r.print.json))?;
    Ok(0)
}

pub fn explain(a: &cli::RefArgs) -> Result<i32> {
    let s = open_store(&a.db)?;
    let r: store::Ref = a.id.parse().map_err(Error::usage)?;
    emit(&explain_ref(&s, r)?, Format::json_if(a.print.json))?;
    Ok(0)
}

/// What `iolab explain REF` explains: the run documents of the store behind the reference,
/// read here, explained by `analysis::explain`: a run's, a group's (sweeps: side by side;
/// repetitions: their spread; saturation searches: every run).
pub fn explain_ref(store: &Store, r: store::Ref) -> Result<Explanation> {
    use crate::analysis::explain::{run, sweep};
    use crate::model::stored::{GroupKind, StoredDoc};
    let doc_of = |id: i64| -> Result<RunDoc> {
        let kind = store.run(id)?.kind;
        match store.stored_doc(id)? {
            StoredDoc::Run(d) => Ok(*d),
            _ => Err(Error::usage(format!(
                "run {id} is a {kind} document: iolab explain reads iolab run documents"
            ))),
        }
    };
    match r {
        store::Ref::Run(id) => Ok(run::explain_run(
            &doc_of(id)?,
            Some(id),
            &format!("run {id}"),
        )),
        store::Ref::Group(g) => {
            let (kind, spec) = store.experiment(g)?;
            let ids = store.group_runs(g)?;
            let mut runs = Vec::new();
            for id in ids {
                runs.push((id, doc_of(id)?));
            }
            let subject = format!("group g{g}");
            let together = spec
                .and_then(|s| serde_json::from_value::<crate::workloads::sweep::SweepSpec>(s).ok())
                .is_some_and(|s| crate::workloads::sweep::together::is_together(&s));
            Ok(match kind {
                GroupKind::Repeat => run::explain_group(&runs, &subject),
                GroupKind::Sweep if together => {
                    let mut coords = Vec::new();
                    for (id, _) in &runs {
                        coords.push(
                            store
                                .cell(*id)?
                                .and_then(|c| serde_json::from_value(c).ok())
                                .unwrap_or_default(),
                        );
                    }
                    sweep::explain_together(&runs, &coords, &subject)
                }
                GroupKind::Sweep => sweep::explain_sweep(&runs, &subject),
                _ => run::explain_runs(&runs, &subject),
            })
        }
    }
}

pub fn delete(a: &cli::DeleteArgs) -> Result<i32> {
    let mut s = open_store_write(&a.db)?;
    let refs = cli::parse_refs(&a.ids)?;
    // Check them all first: nothing is deleted when one id is unknown.
    let mut ids = Vec::new();
    for r in &refs {
        ids.extend(s.resolve_run_ids(*r)?);
    }
    for id in &ids {
        s.delete(*id)?;
    }
    print_out(&format!(
        "deleted {} run{}\n",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" }
    ));
    Ok(0)
}

pub fn compare(a: &cli::CompareArgs) -> Result<i32> {
    let s = open_store(&a.db)?;
    let refs = cli::parse_refs(&a.ids)?;
    let c = compare::compare(&s, &refs)?;
    emit(&c, Format::json_if(a.print.json))?;
    Ok(0)
}

pub fn export(a: &cli::ExportArgs) -> Result<i32> {
    let s = open_store(&a.db)?;
    let mut ids = Vec::new();
    for r in cli::parse_refs(&a.ids)? {
        ids.extend(s.resolve_run_ids(r)?);
    }
    let mut buf: Vec<u8> = Vec::new();
    match a.format.as_str() {
        "json" => {
            buf = format!(
                "{}\n",
                serde_json::to_string_pretty(&stored_views::export_json(&s, &ids)?).expect("json")
            )
            .into_bytes()
        }
        "csv" => stored_views::export_csv(&s, &ids, &mut buf)?,
        other => return Err(Error::usage(format!("--format '{other}': use json or csv"))),
    }
    // With --output the file is written whole when the command ends.
    print_out(&String::from_utf8_lossy(&buf));
    Ok(0)
}

pub fn import(a: &cli::ImportArgs) -> Result<i32> {
    let tags = cli::parse_tags(&a.tag.tags)?;
    let host = a.host.clone().unwrap_or_else(fsinfo::hostname);
    // Parse everything first: nothing is imported (and no store created) when one file is bad.
    // Each is a regular file (or stdin) of at most 64 MiB: /dev/zero or a FIFO is refused.
    let limit = crate::spec::input::IMPORT_MAX_BYTES;
    let mut parsed = Vec::new();
    for f in &a.files {
        let text = if f.as_os_str() == "-" {
            crate::spec::input::bounded_text(std::io::stdin().lock(), limit)
                .map_err(|e| Error::usage(format!("stdin: {e}")))?
        } else {
            crate::spec::input::read_text(f, limit)
                .map_err(|e| Error::usage(format!("{}: {e}", f.display())))?
        };
        // An iolab document a command kept because the store did not take it, or a tool's output.
        let p = store::import::parse_file(&text)
            .map_err(|e| Error::usage(format!("{}: {e}", f.display())))?;
        parsed.push((f.clone(), p));
    }
    // Not open_store_write: the files named here are imported, not the kept ones too.
    let mut s = Store::open_write_at(&store::resolve_location(a.db.db.as_deref())?)?;
    use store::import::ImportFile;
    for (f, p) in parsed {
        // An iolab document is saved once: imported again (or saved by the command after the
        // one that kept it), it is said to be there already.
        let (saved, what, v) = match p {
            ImportFile::Run(doc, v) => (
                s.save_run_once(&doc, &v, None, None)?,
                format!(
                    "iolab {}, {} mode{}",
                    doc.iolab_version,
                    doc.runs.len(),
                    if doc.runs.len() == 1 { "" } else { "s" }
                ),
                v,
            ),
            ImportFile::Db(doc, v) => {
                let host = a.host.clone().unwrap_or_else(fsinfo::hostname);
                (
                    s.save_db_once(&doc, &v, &host)?,
                    format!("iolab db {} on {}", doc.test, doc.backend),
                    v,
                )
            }
            ImportFile::Verify(doc, v) => (
                s.save_verify_once(&doc, &v, None)?,
                format!("iolab verify of {}", doc.dir),
                v,
            ),
            ImportFile::Tool(mut imp) => {
                // the run's own time: the tool's, else the file's (sysbench prints none)
                let modified = (f.as_os_str() != "-")
                    .then(|| std::fs::metadata(&f).and_then(|m| m.modified()).ok())
                    .flatten();
                imp.date_from_file(modified);
                let doc = imp.to_doc(&f.display().to_string());
                warn_again(&s, &f, &crate::model::stored::RunKind::Import, &doc)?;
                let id = s.save_import(&imp, &doc, &host, a.label.label.as_deref(), &tags)?;
                print_out(&format!(
                    "imported {} as run {id} ({} {}, {} job{})\n",
                    f.display(),
                    imp.tool,
                    imp.tool_version,
                    imp.cells.len(),
                    if imp.cells.len() == 1 { "" } else { "s" }
                ));
                continue;
            }
        };
        if saved.already {
            print_out(&format!(
                "{} is already run {} ({what}): not imported again\n",
                f.display(),
                saved.id
            ));
        } else {
            print_out(&format!(
                "imported {} as run {} ({what})\n",
                f.display(),
                saved.id
            ));
        }
        remove_kept(&s, &f, &v);
    }
    Ok(0)
}

/// One line on stderr when the store already holds this document (the same file imported again);
/// it is imported anyway.
fn warn_again(
    s: &Store,
    f: &Path,
    kind: &crate::model::stored::RunKind,
    doc: &serde_json::Value,
) -> Result<()> {
    if let Some(id) = s.same_doc(kind, doc)? {
        eprintln!(
            "iolab: warning: {} was imported before, as run {id}; importing it again",
            f.display()
        );
    }
    Ok(())
}

/// `iolab store copy --from A --to B`: every run of A into B (created when missing), ids
/// mapped; runs B already holds are not copied again, so repeating it copies nothing.
pub fn store_copy(a: &cli::StoreCopyArgs) -> Result<i32> {
    let from = store::Location::parse(a.from.as_os_str(), "--from")?;
    let to = store::Location::parse(a.to.as_os_str(), "--to")?;
    if from == to {
        return Err(Error::usage(format!(
            "--from and --to name the same store ({from}); give two stores"
        )));
    }
    // A source that does not exist is not made (an empty store copies nothing).
    if let Some(p) = from.sqlite_path().filter(|p| !p.exists()) {
        return Err(Error::usage(format!(
            "--from {}: no such results store",
            p.display()
        )));
    }
    let src = Store::open_at(&from).map_err(|e| rename_flag(e, "--from"))?;
    let mut dst = Store::open_write_at(&to).map_err(|e| rename_flag(e, "--to"))?;
    let r = src.copy_into(&mut dst)?;
    emit(
        &Copied {
            from: from.to_string(),
            to: to.to_string(),
            r,
        },
        Format::json_if(a.print.json),
    )?;
    Ok(0)
}

/// `iolab store copy` (`iolab-store-copy/1`): the runs copied and those there already.
struct Copied {
    from: String,
    to: String,
    r: store::CopyReport,
}

impl crate::output::document::Document for Copied {
    fn json(&self) -> serde_json::Value {
        let Copied { from, to, r } = self;
        serde_json::json!({
            "schema": crate::model::schema::STORE_COPY,
            "from": from.to_string(),
            "to": to.to_string(),
            "copied": r.copied.iter().map(|(f, t)| serde_json::json!({"from": f, "to": t})).collect::<Vec<_>>(),
            "already": r.already.iter().map(|(f, t)| serde_json::json!({"from": f, "to": t})).collect::<Vec<_>>(),
        })
    }
    fn text(&self) -> Result<String> {
        let Copied { from, to, r } = self;
        let mut s = String::new();
        for (f, t) in &r.copied {
            s.push_str(&format!("run {f} -> {t}\n"));
        }
        for (f, t) in &r.already {
            s.push_str(&format!("run {f} = {t} (already there)\n"));
        }
        s.push_str(&format!(
            "copied {} runs from {from} to {to}; {} were there already\n",
            r.copied.len(),
            r.already.len()
        ));
        Ok(s)
    }
}

/// An error about a store opened for `store copy` names the flag that gave it, not `--db`.
fn rename_flag(mut e: Error, flag: &str) -> Error {
    if let Some(rest) = e.msg.strip_prefix("--db ") {
        e.msg = format!("{flag} {rest}");
    }
    e
}
