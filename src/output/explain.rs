//! The text of `iolab explain` / `run --explain`: the findings of [`crate::analysis::explain`],
//! rendered (the analysis itself is in `src/analysis/explain/`).

use crate::analysis::explain::Explanation;
use crate::output::document::Document;

/// The text a person reads.
pub fn render(e: &Explanation) -> String {
    let mut s = format!("explain {}\n", e.subject);
    for c in &e.cells {
        let run = c.run_id.map(|i| format!("run {i}, ")).unwrap_or_default();
        s.push_str(&format!("\n{} ({run}{}):\n", c.mode, c.setup));
        for f in &c.findings {
            s.push_str(&format!(
                "  {}: {} [{} confidence]\n    evidence: {}\n    why: {}\n    next: {}\n",
                f.layer.name(),
                f.rule,
                f.confidence.name(),
                f.evidence,
                f.why,
                f.next
            ));
        }
    }
    s
}

/// A document with `--explain`'s findings: in its JSON as `explain`, after its text (a blank line
/// between). Without a document, the findings alone.
pub struct Explained<'a> {
    pub doc: Option<&'a dyn Document>,
    pub explain: Option<&'a Explanation>,
}

impl Document for Explained<'_> {
    fn json(&self) -> serde_json::Value {
        match (self.doc, self.explain) {
            (Some(d), Some(e)) => {
                let mut v = d.json();
                v["explain"] = e.json();
                v
            }
            (Some(d), None) => d.json(),
            (None, Some(e)) => e.json(),
            (None, None) => serde_json::Value::Null,
        }
    }
    fn text(&self) -> crate::error::Result<String> {
        let mut t = match self.doc {
            Some(d) => d.text()?,
            None => String::new(),
        };
        if let Some(e) = self.explain {
            t.push('\n');
            t.push_str(&render(e));
        }
        Ok(t)
    }
    /// fio's shape has no place for findings.
    fn fio_json(&self) -> Option<serde_json::Value> {
        self.doc.and_then(|d| d.fio_json())
    }
}

impl Document for Explanation {
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    fn text(&self) -> crate::error::Result<String> {
        Ok(render(self))
    }
}
