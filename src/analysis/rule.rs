//! The one shape of a rule, shared by both rule tables ([`crate::analysis::check::RULES`],
//! `iolab check`; [`crate::analysis::explain::rules::RULES`], `iolab explain`): an id, its class
//! (check: a severity; explain: a layer and whether it names the limit), a one-line text saying
//! when it fires (its thresholds formatted from the constants the rule compares with, so the
//! text and the test cannot disagree), a why template, fix templates, and an inspect function
//! that returns a [`Hit`] (evidence, values for the `{name}` placeholders) for each place it
//! fires. The tables write their own docs (docs/check.md, docs/explain.md; tests/check_docs.rs).

/// One rule of a table. `C` is the table's class of rule, `I` its inspect function's type
/// (`fn(&Input) -> Vec<Hit<X>>`: a function pointer, so a table is plain data).
pub struct Rule<C, I> {
    /// Stable identifier: the `id`/`rule` of its findings (docs/check.md, docs/explain.md).
    pub id: &'static str,
    pub class: C,
    /// One line: what the rule looks at and when it fires, with its thresholds.
    pub when: String,
    /// Why it matters; `{name}` is filled from the hit's `vars`.
    pub why: &'static str,
    /// The fix: none (explain's findings carry a command line instead), one template, or one per
    /// case (the hit's `fix` picks it); `{name}` is filled from the hit's `vars`.
    pub fix: &'static [Fix],
    /// Every place the rule fires.
    pub inspect: I,
}

/// A fix template and the case it is for ("" when the rule has only one).
pub struct Fix {
    pub case: &'static str,
    pub template: &'static str,
}

/// One place a rule fires: what was read (the numbers), the values for the placeholders of its
/// texts, and what the table adds (`X`: check's subject and fix case, explain's confidence and
/// next command).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<X> {
    pub evidence: String,
    /// Which of the rule's fixes applies (an index into `Rule::fix`).
    pub fix: usize,
    /// Values for the `{name}` placeholders of the why and fix templates.
    pub vars: Vec<(&'static str, String)>,
    pub at: X,
}

impl<X> Hit<X> {
    pub fn new(at: X, evidence: String) -> Hit<X> {
        Hit {
            evidence,
            fix: 0,
            vars: Vec::new(),
            at,
        }
    }

    pub fn var(mut self, name: &'static str, value: impl ToString) -> Hit<X> {
        self.vars.push((name, value.to_string()));
        self
    }

    pub fn fix(mut self, case: usize) -> Hit<X> {
        self.fix = case;
        self
    }
}

impl<C, I> Rule<C, I> {
    /// The why of a hit, its placeholders filled.
    pub fn why_of<X>(&self, h: &Hit<X>) -> String {
        fill(self.why, &h.vars)
    }

    /// The fix of a hit (its case's template, placeholders filled; "" for a rule without one).
    pub fn fix_of<X>(&self, h: &Hit<X>) -> String {
        self.fix
            .get(h.fix)
            .map(|f| fill(f.template, &h.vars))
            .unwrap_or_default()
    }
}

/// `template` with each `{name}` replaced by its value in `vars`; an unknown name stays as it is.
pub fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let name = &after[..close];
        match vars.iter().find(|(k, _)| *k == name) {
            Some((_, v)) => out.push_str(v),
            None => out.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A text for a cell of a Markdown table (`|` escaped).
pub fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A threshold as a rule's text says it: `x` without a trailing `.0` (`10`, `0.5`, `1.25`).
pub fn num(x: f64) -> String {
    let r = (x * 1e6).round() / 1e6;
    format!("{r}")
}

/// A fraction as a percentage in a rule's text: 0.10 → `10 %`.
pub fn percent(fraction: f64) -> String {
    format!("{} %", num(fraction * 100.0))
}

/// A size as a rule's text says it: `1 MiB`, `2 GiB` (units of 1024).
pub fn size(bytes: u64) -> String {
    let s = crate::model::units::Bytes(bytes).to_string();
    let at = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    format!("{} {}", &s[..at], &s[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_known_names_and_keeps_the_rest() {
        let vars = [("a", "1".to_string()), ("bb", "two".to_string())];
        assert_eq!(fill("x {a} y {bb}{a}", &vars), "x 1 y two1");
        assert_eq!(fill("{unknown} {a}", &vars), "{unknown} 1");
        assert_eq!(fill("open { no close", &vars), "open { no close");
        assert_eq!(fill("", &vars), "");
    }

    #[test]
    fn thresholds_read_as_written() {
        assert_eq!(percent(0.10), "10 %");
        assert_eq!(percent(0.5), "50 %");
        assert_eq!(num(1.25), "1.25");
        assert_eq!(num(95.0), "95");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(size(1 << 20), "1 MiB");
        assert_eq!(size(2 << 30), "2 GiB");
    }
}
