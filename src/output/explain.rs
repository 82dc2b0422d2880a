//! The text of `iolab explain` / `run --explain`: the findings of [`crate::analysis::explain`],
//! rendered (the analysis itself is in `src/analysis/explain/`).

use crate::analysis::explain::Explanation;

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

impl crate::output::document::Document for Explanation {
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    fn text(&self) -> String {
        render(self)
    }
}
