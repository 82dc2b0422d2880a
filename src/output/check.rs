//! The text of `iolab check`: the findings of [`crate::analysis::check`], most severe first.

use crate::analysis::check::{Finding, Severity};

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
