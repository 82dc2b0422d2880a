//! The text of `iolab check`: the findings of [`crate::analysis::check`], most severe first.

use crate::analysis::check::{Finding, Severity};

/// `iolab check`'s document (`iolab-check/1`).
pub struct CheckDoc<'a> {
    /// The path checked, as the text names it.
    pub target: String,
    /// The path of the stack the environment found under it (the JSON's `path`).
    pub path: Option<String>,
    pub findings: &'a [Finding],
}

impl crate::output::document::Document for CheckDoc<'_> {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({"schema": crate::model::schema::CHECK, "path": self.path, "findings": self.findings})
    }
    fn text(&self) -> crate::error::Result<String> {
        Ok(render(&self.target, self.findings))
    }
}

pub fn render(path: &str, findings: &[Finding]) -> String {
    let mut s = format!("iolab check {path}: ");
    let n = |sev| findings.iter().filter(|f| f.severity == sev).count();
    s.push_str(&format!(
        "{} critical, {} warn, {} info\n",
        n(Severity::Critical),
        n(Severity::Warn),
        n(Severity::Info)
    ));
    for x in findings {
        let tag = match x.severity {
            Severity::Critical => "CRITICAL",
            Severity::Warn => "WARN",
            Severity::Info => "info",
        };
        s.push_str(&format!(
            "\n[{tag}] {} ({})\n  evidence: {}\n  why:      {}\n  fix:      {}\n",
            x.id, x.subject, x.evidence, x.why, x.fix
        ));
    }
    s
}
