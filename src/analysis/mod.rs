//! Analysis: documents in, findings out. Two rule tables with one rule shape ([`rule::Rule`]):
//! `iolab check` judges an environment report ([`check`]), `iolab explain` a run document, a
//! group's or a sweep's ([`explain`]). Nothing here reads the live system, the store or prints:
//! commands read the documents, `output` renders the findings.

pub mod check;
pub mod explain;
pub mod rule;

#[cfg(test)]
mod tests {
    /// The string literal at the start of `s` (after its first `"`), up to its closing `"`.
    fn literal(s: &str) -> &str {
        let s = &s[s.find('"').map_or(s.len(), |i| i + 1)..];
        let mut prev = ' ';
        for (i, c) in s.char_indices() {
            if c == '"' && prev != '\\' {
                return &s[..i];
            }
            prev = c;
        }
        s
    }

    /// Every number a rule's `when` text states is a constant the rule uses, formatted into the
    /// text (`{}`), except the citations listed here: the text and the rule cannot
    /// disagree.
    #[test]
    fn rule_texts_take_their_numbers_from_constants() {
        // citations, examples and option values, not thresholds (digits inside names, `ext4`,
        // `v2`, are names)
        const NOT_THRESHOLDS: &[&str] = &["sector 63", "about 20%", "barrier=0"];
        let sources = [
            ("check.rs", include_str!("check.rs")),
            ("explain/rules.rs", include_str!("explain/rules.rs")),
        ];
        let mut texts = 0;
        for (file, src) in sources {
            for part in src.split("        when: ").skip(1) {
                let lit = literal(part);
                let mut t = lit.to_string();
                for n in NOT_THRESHOLDS {
                    t = t.replace(n, "");
                }
                let number = t
                    .chars()
                    .zip(std::iter::once(' ').chain(t.chars()))
                    .any(|(c, before)| c.is_ascii_digit() && !before.is_alphanumeric());
                assert!(
                    !number,
                    "{file}: a number written into a rule's text instead of formatted from its constant: {lit}"
                );
                texts += 1;
            }
        }
        assert_eq!(
            texts,
            crate::analysis::check::RULES.len() + crate::analysis::explain::rules::RULES.len()
        );
    }

    #[test]
    fn a_literal_ends_at_its_closing_quote() {
        assert_eq!(literal("format!(\n  \"a {} b\", X)"), "a {} b");
        assert_eq!(literal("\"x \\\" y\".into()"), "x \\\" y");
    }
}
