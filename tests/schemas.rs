//! docs/schemas/ holds one JSON Schema per document kind, generated from the Rust types
//! (`iolab::model::schema::json_schemas`, schemars): each file must equal what the types give, so
//! the published schemas cannot drift from the documents. After changing a document type,
//! regenerate them with
//!
//! ```sh
//! IOLAB_BLESS=1 cargo test --test schemas
//! ```
//!
//! which rewrites the files instead of failing. The documents the commands print are validated
//! against their schema (jsonschema).

mod common;

use common::*;
use iolab::model::schema;
use serde_json::Value;
use std::path::PathBuf;

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schemas")
}

fn pretty(v: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap())
}

#[test]
fn docs_schemas_are_generated_from_the_types() {
    let bless = std::env::var("IOLAB_BLESS").as_deref() == Ok("1");
    let mut stale = Vec::new();
    for (id, s) in schema::json_schemas() {
        let path = schema_dir().join(schema::file_name(id));
        let want = pretty(&s);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(want.as_str()) {
            continue;
        }
        if bless {
            std::fs::create_dir_all(schema_dir()).unwrap();
            std::fs::write(&path, want).unwrap();
            eprintln!("IOLAB_BLESS=1: rewrote {}", path.display());
        } else {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "differ from the types: {stale:?}; regenerate with IOLAB_BLESS=1 cargo test --test schemas"
    );
    // no schema file of a kind the types do not give
    let ids: Vec<String> = schema::json_schemas()
        .iter()
        .map(|(id, _)| schema::file_name(id))
        .collect();
    for e in std::fs::read_dir(schema_dir()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            ids.contains(&name),
            "docs/schemas/{name}: no such document type"
        );
    }
}

/// Every schema id is either generated or listed as not yet: none forgotten.
#[test]
fn every_kind_is_accounted_for() {
    for (id, _) in schema::json_schemas() {
        assert!(!schema::WITHOUT_JSON_SCHEMA.contains(&id), "{id}");
    }
}

/// The document validates against the schema of its `schema` field.
fn assert_valid(doc: &Value) {
    assert_valid_as(
        doc["schema"].as_str().expect("a document names its schema"),
        doc,
    );
}

/// The document validates against the schema of `id` (an embedded part names none).
fn assert_valid_as(id: &str, doc: &Value) {
    let (_, s) = schema::json_schemas()
        .into_iter()
        .find(|(k, _)| *k == id)
        .unwrap_or_else(|| panic!("no JSON Schema for {id}"));
    let v = jsonschema::validator_for(&s).expect("a valid JSON Schema");
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{id}: {errors:#?}\n{doc:#}");
}

#[test]
fn env_document_validates() {
    let d = tempfile::tempdir().unwrap();
    let r = iolab(&["env", "--json", d.path().to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_valid(&r.json());
}

#[test]
fn verify_document_validates() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--mode",
        "seqwr",
        "--bs",
        "16k",
        "--files",
        "1",
        "--size",
        "1M",
        "--ops",
        "64",
        "--verify",
        "--keep",
        "--json",
        "--no-save",
        "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = iolab(&["verify", "--dir", dir, "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_valid(&r.json());
}
