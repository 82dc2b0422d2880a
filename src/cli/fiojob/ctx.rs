//! What the translation of one job reads its options through ([`Ctx`]), and every blocker of
//! the job files found on the way ([`Blockers`]): nothing stops at the first, so a refusal lists
//! them all, one line each.

use crate::error::{Error, Result};
use crate::spec::fio_options;
use crate::spec::fio_vocab;
use crate::spec::fiojob::{JobSection, Opt};

/// Every reason the job files cannot run as given, in the order found: values fio itself would
/// reject (errors) and options iolab does not run (refusals, which `--ignore-unsupported` skips).
#[derive(Debug, Default)]
pub struct Blockers {
    /// (what it is about: `file:line: key`, the line, a refusal rather than an error, where:
    /// file and line, the order they are listed in)
    lines: Vec<(String, String, bool, (String, usize))>,
}

impl Blockers {
    fn has(&self, about: &str) -> bool {
        self.lines.iter().any(|l| l.0 == about)
    }
    /// A value or a file fio would not take either: `about` names it once (a `[global]` option
    /// is one blocker however many jobs it reaches).
    pub fn error(&mut self, at: (&str, usize), about: &str, line: String) {
        if !self.has(about) {
            let at = (at.0.to_string(), at.1);
            self.lines.push((about.to_string(), line, false, at));
        }
    }
    pub fn refusal(&mut self, at: (&str, usize), about: &str, line: String) {
        if !self.has(about) {
            let at = (at.0.to_string(), at.1);
            self.lines.push((about.to_string(), line, true, at));
        }
    }
    /// How many errors (not refusals) so far.
    pub fn errors(&self) -> usize {
        self.lines.iter().filter(|l| !l.2).count()
    }
    /// Ok when nothing blocks; else one usage error, one line per blocker (main prints the
    /// first after `iolab: error: `; the others carry the same prefix).
    pub fn into_result(self, ignore_unsupported: bool) -> Result<()> {
        // by file (in the order first met) and line
        let mut files: Vec<String> = Vec::new();
        for l in &self.lines {
            if !files.contains(&l.3.0) {
                files.push(l.3.0.clone());
            }
        }
        let mut lines = self.lines;
        lines.sort_by_key(|l| (files.iter().position(|f| *f == l.3.0), l.3.1));
        let shown: Vec<String> = lines
            .into_iter()
            .filter(|l| !(ignore_unsupported && l.2))
            .map(|l| l.1)
            .collect();
        if shown.is_empty() {
            return Ok(());
        }
        Err(Error::usage(shown.join("\niolab: error: ")))
    }
}

/// One job's options as the translation reads them: every getter records a value that does not
/// parse as a blocker (by `file:line`, never quoting the value) and reads as absent.
pub(super) struct Ctx<'a> {
    pub s: &'a JobSection,
    pub kb: u32,
    pub blockers: &'a mut Blockers,
    /// Options `--ignore-unsupported` drops: `file:line: key=value` (`key` alone when it is
    /// not an option of the table: an unknown key's value is never kept).
    pub ignored: Vec<String>,
}

impl Ctx<'_> {
    pub fn opt(&self, k: &str) -> Option<&Opt> {
        self.s.get(k)
    }
    pub fn val(&self, k: &str) -> Option<String> {
        self.s.get(k).map(|o| o.value.clone().unwrap_or_default())
    }
    /// An option (or its value) iolab does not run, and why.
    pub fn refuse(&mut self, o: &Opt, why: &str) {
        let about = format!("{}: {}", o.at(), o.key);
        self.blockers.refusal(
            (&o.file, o.line),
            &about,
            format!("{about}: refused: {why}"),
        );
        // a value is kept only for an option iolab reads (a refused one may hold anything)
        let read =
            fio_options::find(&o.key).is_some_and(|t| t.status != fio_options::Status::Refused);
        let what = if read { o.spelled() } else { o.key.clone() };
        let line = format!("{}: {what}", o.at());
        if !self.ignored.contains(&line) {
            self.ignored.push(line);
        }
    }
    /// [`Ctx::refuse`] of the option `k`, which is given.
    pub fn refuse_key(&mut self, k: &str, why: &str) {
        if let Some(o) = self.opt(k).cloned() {
            self.refuse(&o, why);
        }
    }
    /// A value fio would not take: `file:line: key: why`; a value derived from others (size
    /// from filesize, numjobs × nrfiles): `file:line: job 'NAME': key: why` at the section.
    pub fn bad(&mut self, k: &str, why: impl std::fmt::Display) {
        match self.s.get(k) {
            Some(o) => {
                let about = format!("{}: {}", o.at(), o.key);
                let at = (o.file.clone(), o.line);
                self.blockers
                    .error((&at.0, at.1), &about, format!("{about}: {why}"));
            }
            None => {
                let about = format!(
                    "{}:{}: job '{}': {k}",
                    self.s.file, self.s.line, self.s.name
                );
                self.blockers.error(
                    (&self.s.file, self.s.line),
                    &about,
                    format!("{about}: {why}"),
                );
            }
        }
    }
    /// A blocker of the job as a whole (`file:line: job 'NAME' ...` at its section).
    pub fn bad_job(&mut self, what: &str, why: impl std::fmt::Display) {
        let about = format!(
            "{}:{}: job '{}'{what}",
            self.s.file, self.s.line, self.s.name
        );
        self.blockers
            .error((&self.s.file, self.s.line), &about, format!("{about}{why}"));
    }
    pub fn size(&mut self, k: &str) -> Option<u64> {
        let v = self.val(k)?;
        fio_vocab::parse_size(&v, self.kb)
            .map_err(|e| self.bad(k, e))
            .ok()
    }
    pub fn bool(&mut self, k: &str) -> Option<bool> {
        let v = self.opt(k)?.value.clone();
        fio_vocab::parse_bool(v.as_deref())
            .map_err(|e| self.bad(k, e))
            .ok()
    }
    pub fn int(&mut self, k: &str) -> Option<u64> {
        let v = self.val(k)?;
        // an expression `(...)` as for sizes (fio's str_to_decimal)
        if fio_vocab::is_expression(&v) {
            return fio_vocab::parse_size(&v, self.kb)
                .map_err(|e| self.bad(k, e))
                .ok();
        }
        v.trim()
            .parse::<u64>()
            .map_err(|_| self.bad(k, "not a whole number"))
            .ok()
    }
    pub fn time(&mut self, k: &str) -> Option<f64> {
        let v = self.val(k)?;
        fio_vocab::parse_time(&v, 1.0)
            .map_err(|e| self.bad(k, e))
            .ok()
    }
    /// Both directions' values of a `read,write` option, refused when they differ.
    pub fn one_for_both(&mut self, k: &str) -> Option<String> {
        let v = self.val(k)?;
        let parts: Vec<&str> = v
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        match parts.as_slice() {
            [] => None,
            [x] => Some(x.to_string()),
            [x, rest @ ..] if rest.iter().all(|r| r == x) => Some(x.to_string()),
            _ => {
                self.refuse_key(k, "different values for reads and writes");
                Some(parts[0].to_string())
            }
        }
    }
    /// The values of a `read,write,trim` option per direction (read, write, trim), by fio's
    /// rules: a value not followed by a comma applies to the directions after it too, an empty
    /// one is the default (None) (`bs=8k,32k`: 32k for writes and trims; `bs=8k,32k,`: the
    /// default for trims).
    pub fn by_direction(&self, k: &str) -> Option<[Option<String>; 3]> {
        let v = self.val(k)?;
        let parts: Vec<&str> = v.split(',').map(str::trim).collect();
        let last = parts.last().copied().unwrap_or("");
        let of =
            |i: usize| Some(parts.get(i).unwrap_or(&last).to_string()).filter(|p| !p.is_empty());
        Some([of(0), of(1), of(2)])
    }
    /// Every option of the job against the table: unknown and refused options are refusals,
    /// a value not of its option's kind an error. The last value of a key is the one checked
    /// (a job's own overrides its `[global]`'s). Keys whose values the translation reads in
    /// its own way (`size=N%`, zones) are left to it.
    pub fn check_all(&mut self, own_parse: &[&str]) {
        let mut seen: Vec<&str> = Vec::new();
        let opts: Vec<Opt> = self.s.opts.iter().rev().cloned().collect();
        for o in &opts {
            if seen.contains(&o.key.as_str()) {
                continue;
            }
            seen.push(&o.key);
            match fio_options::find(&o.key) {
                None => self.refuse(o, "not one of fio's options iolab knows"),
                Some(t) if t.status == fio_options::Status::Refused => self.refuse(o, t.what),
                Some(_) if own_parse.contains(&o.key.as_str()) => {}
                Some(t) => {
                    if let Err(e) = t.kind.check(o.value.as_deref(), self.kb) {
                        self.bad(&o.key, e);
                    }
                }
            }
        }
    }
}
