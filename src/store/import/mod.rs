//! Import of results from other tools (fio JSON / json+, sysbench fileio text) into one
//! normalized structure, [`Imported`], so iolab can store them beside its own runs.
//!
//! Entry points: [`parse_file`] (what `iolab import` reads: an iolab document kept because the
//! store did not take it, or another tool's output; the format detected once), [`parse`] (another
//! tool's output), [`parse_fio_json`], [`parse_sysbench_fileio`].

mod fio;
mod sysbench;

pub use crate::model::import::*;
pub use fio::*;
use serde_json::{Map, Value};
pub use sysbench::*;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ImportError {
    /// fio JSON that is malformed or lacks a needed key; `path` is the JSON path at fault, e.g. "jobs[0].read.iops"
    #[error("fio JSON: {path}: {msg}")]
    Fio { path: String, msg: String },
    /// sysbench text that cannot be parsed; `line` is 1-based
    #[error("sysbench output, line {line}: {msg}")]
    Sysbench { line: usize, msg: String },
    #[error(
        "not a result iolab can import: {0} (expected fio --output-format=json or json+, or the output of `sysbench fileio ... run`)"
    )]
    Unknown(String),
    /// An iolab document (its schema id named) whose fields cannot be read.
    #[error("an {schema} document that cannot be read: {msg}")]
    Document { schema: &'static str, msg: String },
}

/// One file `iolab import` reads: an iolab document a command kept because the store did not take
/// it (with the JSON as read, which is saved as it is), or another tool's output.
#[derive(Debug)]
pub enum ImportFile {
    Run(Box<crate::model::run::RunDoc>, Value),
    Db(Box<crate::model::db::DbDoc>, Value),
    Verify(Box<crate::model::verify::VerifyDoc>, Value),
    Tool(Imported),
}

/// Reads one file for `iolab import`, its text parsed once: a whole JSON document whose `schema`
/// is `iolab-run/1`, `iolab-db/1` or `iolab-verify/1` is that iolab document ([`kept_doc`]);
/// anything else is another tool's output ([`parse`]).
pub fn parse_file(text: &str) -> Result<ImportFile, ImportError> {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return parse(text).map(ImportFile::Tool);
    };
    if v.is_object() && v.get("fio version").is_some() {
        // the whole text is the JSON value `parse` would find first: read it, not the text again
        return fio_from_value(v).map(ImportFile::Tool);
    }
    kept_doc(v).unwrap_or_else(|| parse(text).map(ImportFile::Tool))
}

/// An iolab document a command kept because the store did not take it (`iolab run`, `iolab db`,
/// `iolab verify`), by its `schema`; None for any other JSON.
pub fn kept_doc(v: Value) -> Option<Result<ImportFile, ImportError>> {
    use crate::model::schema;
    let unreadable = |schema: &'static str| {
        move |e: serde_json::Error| ImportError::Document {
            schema,
            msg: e.to_string(),
        }
    };
    let typed = match v.get("schema").and_then(|x| x.as_str())? {
        schema::RUN => crate::model::run::RunDoc::from_json(&v)
            .map(|d| ImportFile::Run(Box::new(d), v.clone()))
            .map_err(unreadable(schema::RUN)),
        schema::DB => serde_json::from_value(v.clone())
            .map(|d| ImportFile::Db(Box::new(d), v.clone()))
            .map_err(unreadable(schema::DB)),
        schema::VERIFY => serde_json::from_value(v.clone())
            .map(|d| ImportFile::Verify(Box::new(d), v.clone()))
            .map_err(unreadable(schema::VERIFY)),
        _ => return None,
    };
    Some(typed)
}

/// Detects the format (JSON object with "fio version" -> fio; text containing "sysbench" and
/// "File operations:" -> sysbench) and parses.
pub fn parse(text: &str) -> Result<Imported, ImportError> {
    if text.trim().is_empty() {
        return Err(ImportError::Unknown("the input is empty".into()));
    }
    if let Some(start) = json_start(text) {
        match read_json(text, start) {
            Ok(v) => {
                if v.get("fio version").is_some() {
                    return fio_from_value(v);
                }
                let what = if v.is_object() {
                    "a JSON object without a \"fio version\" key"
                } else {
                    "JSON that is not an object"
                };
                return Err(ImportError::Unknown(what.into()));
            }
            // Broken fio JSON: report where it breaks rather than "unknown format".
            Err(e) if text.contains("\"fio version\"") => return Err(e),
            Err(_) => {}
        }
    }
    if text.contains("sysbench") {
        if text.contains("File operations:") {
            return parse_sysbench_fileio(text);
        }
        return Err(ImportError::Unknown(
            "sysbench output without a \"File operations:\" section".into(),
        ));
    }
    Err(ImportError::Unknown(
        "neither fio JSON nor sysbench fileio output".into(),
    ))
}

#[cfg(test)]
mod tests;
