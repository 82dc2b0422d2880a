//! The formats a document is written in: one exporter per format, one table of them (as
//! hyperfine's `export/`). Every command's output goes through [`export`] (`commands::emit`
//! prints it), so a new format is one [`Exporter`], its [`Format`] and its line in [`EXPORTERS`].

use crate::error::Result;
use crate::output::document::Document;

/// A format a document is written in (`--json`, `run --output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The text a person reads.
    Text,
    /// The JSON document, pretty, one trailing newline.
    Json,
    /// The JSON document on one line (a stream of them: `iolab iostat --json`).
    JsonLine,
    /// fio's `--output-format=json` shape (a run only).
    FioJson,
}

impl Format {
    /// Every format, for the table's test.
    pub const ALL: [Format; 4] = [
        Format::Text,
        Format::Json,
        Format::JsonLine,
        Format::FioJson,
    ];

    /// `--json` or not.
    pub fn json_if(json: bool) -> Format {
        if json { Format::Json } else { Format::Text }
    }

    /// Whether a person reads it (commands add their notes only to text).
    pub fn is_text(self) -> bool {
        self == Format::Text
    }
}

/// Writes a document in one format.
pub trait Exporter: Sync {
    fn export(&self, doc: &dyn Document) -> Result<String>;
}

/// The one table: each format and its exporter.
pub static EXPORTERS: &[(Format, &dyn Exporter)] = &[
    (Format::Text, &TextExporter),
    (Format::Json, &JsonExporter),
    (Format::JsonLine, &JsonLineExporter),
    (Format::FioJson, &FioJsonExporter),
];

/// The document in the format asked for.
pub fn export(doc: &dyn Document, format: Format) -> Result<String> {
    let (_, exporter) = EXPORTERS
        .iter()
        .find(|(f, _)| *f == format)
        .expect("every format has its line in EXPORTERS");
    exporter.export(doc)
}

struct TextExporter;

impl Exporter for TextExporter {
    fn export(&self, doc: &dyn Document) -> Result<String> {
        doc.text()
    }
}

struct JsonExporter;

impl Exporter for JsonExporter {
    fn export(&self, doc: &dyn Document) -> Result<String> {
        Ok(pretty(&doc.json()))
    }
}

struct JsonLineExporter;

impl Exporter for JsonLineExporter {
    fn export(&self, doc: &dyn Document) -> Result<String> {
        Ok(format!(
            "{}\n",
            serde_json::to_string(&doc.json()).expect("json")
        ))
    }
}

struct FioJsonExporter;

impl Exporter for FioJsonExporter {
    /// A document without a fio form (only a run has one) is written as its own JSON.
    fn export(&self, doc: &dyn Document) -> Result<String> {
        Ok(pretty(&doc.fio_json().unwrap_or_else(|| doc.json())))
    }
}

/// Pretty JSON with one trailing newline.
fn pretty(v: &serde_json::Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_one_exporter() {
        for f in Format::ALL {
            assert_eq!(
                EXPORTERS.iter().filter(|(g, _)| *g == f).count(),
                1,
                "{f:?}"
            );
        }
        assert_eq!(EXPORTERS.len(), Format::ALL.len());
    }
}
