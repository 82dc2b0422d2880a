//! fio job files as fio's HOWTO defines them: `[global]` and job sections, `;`/`#` comments,
//! `include FILE`, `$ENV`/`${ENV}` substitution, options with and without values, and fio's
//! number and time rules. Parsing only: what the options mean to iolab is decided in the cli
//! layer (docs/fio-jobs.md). Every option keeps the file and line it came from, for errors.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// One option as written (after comments, includes and substitution), with where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Opt {
    /// The option's name, lowercased, with fio's aliases resolved (`readwrite` is `rw`).
    pub key: String,
    pub value: Option<String>,
    pub file: String,
    pub line: usize,
}

impl Opt {
    /// `file:line`, the prefix of every message about this option.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
    /// `key=value` or `key`, as in the job file.
    pub fn spelled(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
}

/// One job: its section and the options that apply to it (the `[global]` options in force
/// where it starts, then its own; a later option wins).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSection {
    pub name: String,
    pub file: String,
    pub line: usize,
    /// Index of the job file on the command line (the first job of each later file starts a
    /// new phase, as in fio).
    pub file_index: usize,
    pub opts: Vec<Opt>,
}

impl JobSection {
    /// The last value given to `key` (None: not given; Some(None): given without a value).
    pub fn get(&self, key: &str) -> Option<&Opt> {
        self.opts.iter().rev().find(|o| o.key == key)
    }
}

/// A parsed job file: its text and its jobs in order.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    pub path: String,
    pub text: String,
    pub jobs: Vec<JobSection>,
}

/// fio's option aliases (alias, option).
pub const ALIASES: &[(&str, &str)] = &[
    ("readwrite", "rw"),
    ("blocksize", "bs"),
    ("blocksize_range", "bsrange"),
    ("blocksize_unaligned", "bs_unaligned"),
    ("ba", "blockalign"),
    ("iodepth_batch", "iodepth_batch_submit"),
    ("timeout", "runtime"),
    ("wait_for_previous", "stonewall"),
    ("ratemin", "rate_min"),
];

fn canonical_key(k: &str) -> String {
    let k = k.trim().to_ascii_lowercase();
    ALIASES
        .iter()
        .find(|(a, _)| *a == k)
        .map_or(k, |(_, o)| o.to_string())
}

/// How a job file is read: its text by path, and environment variables by name.
pub struct Source<'a> {
    pub read: &'a dyn Fn(&Path) -> std::io::Result<String>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Parses one job file (`-`: the text given as `stdin`). `file_index` is its place on the
/// command line.
pub fn parse(path: &str, stdin: Option<&str>, file_index: usize, src: &Source) -> Result<JobFile> {
    let text = match stdin {
        Some(t) => t.to_string(),
        None => (src.read)(Path::new(path))
            .map_err(|e| Error::usage(format!("{path}: cannot read the job file: {e}")))?,
    };
    let mut lines: Vec<(String, usize, String)> = Vec::new();
    let mut stack = vec![PathBuf::from(path)];
    expand(path, &text, &mut stack, &mut lines, src)?;
    let mut jobs: Vec<JobSection> = Vec::new();
    let mut global: Vec<Opt> = Vec::new();
    // None before the first section; Some(None) in [global]; Some(Some(i)) in jobs[i].
    let mut cur: Option<Option<usize>> = None;
    for (file, line, raw) in lines {
        let l = strip_comment(&raw);
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(Error::usage(format!(
                    "{file}:{line}: a section header must be [name] on its own line"
                )));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(Error::usage(format!(
                    "{file}:{line}: empty section name []"
                )));
            }
            if name == "global" {
                cur = Some(None);
            } else {
                jobs.push(JobSection {
                    name: name.to_string(),
                    file: file.clone(),
                    line,
                    file_index,
                    opts: global.clone(),
                });
                cur = Some(Some(jobs.len() - 1));
            }
            continue;
        }
        let (k, v) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (l, None),
        };
        if k.is_empty() || k.contains(char::is_whitespace) {
            return Err(Error::usage(format!(
                "{file}:{line}: '{l}' is not an option (key=value or key)"
            )));
        }
        let value = match v {
            Some(v) => Some(substitute(v, &file, line, src)?),
            None => None,
        };
        let opt = Opt {
            key: canonical_key(k),
            value,
            file: file.clone(),
            line,
        };
        match cur {
            None => {
                return Err(Error::usage(format!(
                    "{file}:{line}: option '{}' comes before any [section]",
                    opt.spelled()
                )));
            }
            Some(None) => global.push(opt),
            Some(Some(i)) => jobs[i].opts.push(opt),
        }
    }
    Ok(JobFile {
        path: path.to_string(),
        text,
        jobs,
    })
}

/// The lines of a file with its `include`s expanded in place: (file, line number, text).
fn expand(
    file: &str,
    text: &str,
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<(String, usize, String)>,
    src: &Source,
) -> Result<()> {
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = strip_comment(raw);
        let t = t.trim();
        let Some(rest) = t.strip_prefix("include") else {
            out.push((file.to_string(), line, raw.to_string()));
            continue;
        };
        if !rest.starts_with(char::is_whitespace) {
            out.push((file.to_string(), line, raw.to_string()));
            continue;
        }
        let name = substitute(rest.trim(), file, line, src)?;
        let p = Path::new(&name);
        let target = if p.is_absolute() {
            p.to_path_buf()
        } else {
            Path::new(file).parent().unwrap_or(Path::new("")).join(p)
        };
        let key = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
        if stack
            .iter()
            .any(|s| std::fs::canonicalize(s).unwrap_or_else(|_| s.clone()) == key)
        {
            return Err(Error::usage(format!(
                "{file}:{line}: include {name}: an include loop ({} includes itself through this line)",
                target.display()
            )));
        }
        let inc = (src.read)(&target).map_err(|e| {
            Error::usage(format!(
                "{file}:{line}: include {name}: cannot read {}: {e}",
                target.display()
            ))
        })?;
        stack.push(target.clone());
        expand(&target.display().to_string(), &inc, stack, out, src)?;
        stack.pop();
    }
    Ok(())
}

/// A line without its comment: a line starting with `;` or `#`, or from ` ;`/` #` on.
fn strip_comment(l: &str) -> String {
    let t = l.trim_start();
    if t.starts_with(';') || t.starts_with('#') {
        return String::new();
    }
    let b = l.as_bytes();
    for i in 1..b.len() {
        if (b[i] == b';' || b[i] == b'#') && b[i - 1].is_ascii_whitespace() {
            return l[..i].to_string();
        }
    }
    l.to_string()
}

/// `$NAME` and `${NAME}` replaced by the environment's value; an unset name is an error. A
/// value that uses one of fio's reserved keywords in arithmetic (`8*$mb_memory`) becomes the
/// expression `(8*16384)`, as fio evaluates it.
fn substitute(v: &str, file: &str, line: usize, src: &Source) -> Result<String> {
    let mut reserved = false;
    let out = substitute_names(v, file, line, src, &mut reserved)?;
    let arithmetic = out.contains(['+', '-', '*', '/', '%', '^'])
        && out.starts_with(|c: char| c.is_ascii_digit() || c == '(')
        && out
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-*/%^(). ".contains(c));
    if reserved && arithmetic && !is_expression(&out) {
        return Ok(format!("({out})"));
    }
    Ok(out)
}

fn substitute_names(
    v: &str,
    file: &str,
    line: usize,
    src: &Source,
    reserved: &mut bool,
) -> Result<String> {
    let mut out = String::new();
    let mut rest = v;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(b) = after.strip_prefix('{') {
            let Some(end) = b.find('}') else {
                return Err(Error::usage(format!(
                    "{file}:{line}: '${{' without its closing '}}' in '{v}'"
                )));
            };
            (&b[..end], end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        *reserved |= RESERVED.contains(&name);
        match (src.env)(name) {
            Some(x) => out.push_str(&x),
            None => {
                return Err(Error::usage(format!(
                    "{file}:{line}: environment variable '{name}' is not set (used in '{v}')"
                )));
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A byte count by fio's rules: an integer (or decimal) with an optional, case-insensitive
/// suffix b, k, kb, ki, kib, m, ... p. With `kb_base` 1024 (fio's default) k/kb/K/KB are powers
/// of 1024 and ki/kib powers of 1000; with 1000 the other way round. Hex `0x..` is taken too.
pub fn parse_size(s: &str, kb_base: u32) -> std::result::Result<u64, String> {
    if is_expression(s) {
        let number = |tok: &str| parse_size(tok, kb_base).map(u128::from);
        let unit = |u: &str| parse_size(&format!("1{u}"), kb_base).map(u128::from);
        let v = eval_expression(s, &number, &unit)?;
        return u64::try_from(v).map_err(|_| format!("'{s}' is not a byte count (it is {v})"));
    }
    let t = s.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).map_err(|_| format!("'{s}' is not a number"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num == "." {
        return Err(format!("'{s}' is not a number"));
    }
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit.strip_suffix('b').unwrap_or(&unit);
    let (letter, iec) = match unit.strip_suffix('i') {
        Some(l) => (l, true),
        None => (unit, false),
    };
    let power = match letter {
        "" if !iec => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return Err(format!("'{s}' is not a number (unit '{unit}')")),
    };
    let base: f64 = if (kb_base == 1000) == iec {
        1024.0
    } else {
        1000.0
    };
    let n: f64 = num.parse().map_err(|_| format!("'{s}' is not a number"))?;
    let v = n * base.powi(power);
    if !v.is_finite() || v >= u64::MAX as f64 || v.fract() != 0.0 {
        return Err(format!("'{s}' is not a whole number of bytes"));
    }
    Ok(v as u64)
}

/// A time by fio's rules in seconds: a number with d, h, m, s/sec, ms/msec, us/usec (case
/// insensitive); without a unit, `default_unit_s` seconds (1 for runtime, 1e-6 for
/// microsecond options).
pub fn parse_time(s: &str, default_unit_s: f64) -> std::result::Result<f64, String> {
    if is_expression(s) {
        // fio: in an expression a time without a unit is in microseconds; a unit after the
        // closing parenthesis is the unit of the result
        let us = |tok: &str| {
            let v = parse_time(tok, 1e-6)? * 1e6;
            if v.fract() != 0.0 {
                return Err(format!("'{tok}' is not a whole number of microseconds"));
            }
            Ok(v as u128)
        };
        let v = eval_expression(s, &us, &|u| us(&format!("1{u}")).map(|x| x.max(1)))?;
        return Ok(v as f64 * 1e-6);
    }
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a time (e.g. 30, 30s, 5m, 250ms)"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" => default_unit_s,
        "d" => 86400.0,
        "h" => 3600.0,
        "m" | "min" => 60.0,
        "s" | "sec" => 1.0,
        "ms" | "msec" => 1e-3,
        "us" | "usec" => 1e-6,
        _ => return Err(format!("'{s}' is not a time (e.g. 30, 30s, 5m, 250ms)")),
    };
    Ok(n * mult)
}

/// fio's reserved keywords (HOWTO "Reserved keywords"): replaced by the system's values, and a
/// value that uses one with arithmetic (`size=8*$mb_memory`) is evaluated as an expression.
pub const RESERVED: &[&str] = &["pagesize", "mb_memory", "ncpus"];

/// Is this value one of fio's arithmetic expressions (HOWTO "Job file parameters": a numeric
/// value "surrounded by parentheses")? `(1+2)*3` and `(2*1024)k` are; `4k` and `1k-4k` are not.
pub fn is_expression(s: &str) -> bool {
    s.trim_start().starts_with('(')
}

/// Evaluates one of fio's arithmetic expressions: whole numbers (with fio's unit suffixes, turned
/// into base units by `number`), `+ - * / % ^`, unary minus and parentheses, in integer
/// arithmetic as fio does for integer options (`/` truncates; `^` is a power, right to left).
/// A unit right after the outer closing parenthesis (`(2*1024)k`) multiplies the result by
/// `unit`'s value of that suffix. Anything else (`$((...))`, names, `<<`) is refused.
fn eval_expression(
    s: &str,
    number: &dyn Fn(&str) -> std::result::Result<u128, String>,
    unit: &dyn Fn(&str) -> std::result::Result<u128, String>,
) -> std::result::Result<u128, String> {
    let t = s.trim();
    // the expression is the outer parenthesis; a unit may follow it
    let mut depth = 0i32;
    let mut end = None;
    for (i, c) in t.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(end) = end else {
        return Err(format!("'{s}': '(' without its closing ')'"));
    };
    let (expr, suffix) = (&t[..=end], t[end + 1..].trim());
    let mut p = Expr {
        toks: tokenize(expr, s)?,
        i: 0,
        s,
        number,
    };
    let v = p.sum()?;
    if p.i != p.toks.len() {
        return Err(format!("'{s}' is not an arithmetic expression fio takes"));
    }
    let v = if suffix.is_empty() {
        v
    } else if suffix.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let m = unit(suffix)
            .map_err(|_| format!("'{s}': unknown unit '{suffix}' after the expression"))?;
        v.checked_mul(i128::try_from(m).map_err(|_| format!("'{s}' overflows"))?)
            .ok_or_else(|| format!("'{s}' overflows"))?
    } else {
        return Err(format!(
            "'{s}': only a unit may follow the closing ')' (put the whole expression in parentheses)"
        ));
    };
    u128::try_from(v).map_err(|_| format!("'{s}' is negative ({v})"))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(String),
    Op(char),
}

fn tokenize(e: &str, whole: &str) -> std::result::Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = e.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' => {}
            '+' | '-' | '*' | '/' | '%' | '^' | '(' | ')' => out.push(Tok::Op(c)),
            '0'..='9' | '.' => {
                let mut j = i + c.len_utf8();
                while let Some(&(k, d)) = chars.peek() {
                    if d.is_ascii_alphanumeric() || d == '.' {
                        j = k + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Tok::Num(e[i..j].to_string()));
            }
            _ => {
                return Err(format!(
                    "'{whole}': '{c}' is not part of fio's arithmetic (numbers with units, + - * / % ^ and parentheses)"
                ));
            }
        }
    }
    Ok(out)
}

/// A recursive descent over fio's grammar: sum = product {(+|-) product}; product = unary
/// {(*|/|%) unary}; unary = -unary | power; power = atom [^ unary]; atom = number | (sum).
struct Expr<'a> {
    toks: Vec<Tok>,
    i: usize,
    s: &'a str,
    number: &'a dyn Fn(&str) -> std::result::Result<u128, String>,
}

impl Expr<'_> {
    fn peek(&self) -> Option<char> {
        match self.toks.get(self.i) {
            Some(Tok::Op(c)) => Some(*c),
            _ => None,
        }
    }
    fn err(&self, why: &str) -> String {
        format!(
            "'{}' is not an arithmetic expression fio takes: {why}",
            self.s
        )
    }
    fn sum(&mut self) -> std::result::Result<i128, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or_else(|| self.err("overflow"))?;
        }
        Ok(v)
    }
    fn product(&mut self) -> std::result::Result<i128, String> {
        let mut v = self.unary()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.i += 1;
            let r = self.unary()?;
            if op != '*' && r == 0 {
                return Err(self.err("division by zero"));
            }
            v = match op {
                '*' => v.checked_mul(r),
                '/' => v.checked_div(r),
                _ => v.checked_rem(r),
            }
            .ok_or_else(|| self.err("overflow"))?;
        }
        Ok(v)
    }
    fn unary(&mut self) -> std::result::Result<i128, String> {
        if self.peek() == Some('-') {
            self.i += 1;
            return Ok(-self.unary()?);
        }
        self.power()
    }
    fn power(&mut self) -> std::result::Result<i128, String> {
        let b = self.atom()?;
        if self.peek() != Some('^') {
            return Ok(b);
        }
        self.i += 1;
        let e = self.unary()?;
        let e = u32::try_from(e).map_err(|_| self.err("a negative or huge exponent"))?;
        b.checked_pow(e).ok_or_else(|| self.err("overflow"))
    }
    fn atom(&mut self) -> std::result::Result<i128, String> {
        match self.toks.get(self.i).cloned() {
            Some(Tok::Num(n)) => {
                self.i += 1;
                let v = (self.number)(&n).map_err(|e| self.err(&e))?;
                i128::try_from(v).map_err(|_| self.err("overflow"))
            }
            Some(Tok::Op('(')) => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(')') {
                    return Err(self.err("a '(' without its ')'"));
                }
                self.i += 1;
                Ok(v)
            }
            Some(Tok::Op(c)) => Err(self.err(&format!("'{c}' where a number belongs"))),
            None => Err(self.err("it ends where a number belongs")),
        }
    }
}

/// A bool option: bare (true), 0/1, true/false, yes/no, on/off.
pub fn parse_bool(v: Option<&str>) -> std::result::Result<bool, String> {
    match v.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(x) => Err(format!("'{x}' is not 0 or 1")),
    }
}

/// A percentage `N` or `N%` (0..100).
pub fn parse_percent(s: &str) -> std::result::Result<u32, String> {
    let t = s.trim().trim_end_matches('%');
    match t.parse::<u32>() {
        Ok(n) if n <= 100 => Ok(n),
        _ => Err(format!("'{s}' is not a percentage (0..100)")),
    }
}

/// Does this text look like a job file: its first line that is no comment is a `[section]`?
pub fn looks_like_jobfile(text: &str) -> bool {
    text.lines()
        .map(strip_comment)
        .map(|l| l.trim().to_string())
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse_with(files: &[(&str, &str)], env: &[(&str, &str)]) -> Result<JobFile> {
        let files: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let read = |p: &Path| {
            files
                .get(p)
                .cloned()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        };
        let envf = |k: &str| env.get(k).cloned();
        parse(
            "d/job.fio",
            None,
            0,
            &Source {
                read: &read,
                env: &envf,
            },
        )
    }

    #[test]
    fn sections_globals_comments_aliases_and_bare_options() {
        let j = parse_with(
            &[(
                "d/job.fio",
                "; a comment\n# another\n[global]\nblocksize=8k ; trailing\ndirect\n[a]\nreadwrite=randread # why\n[global]\niodepth=4\n[b]\nrw=write\nbs=16k\n",
            )],
            &[],
        )
        .unwrap();
        assert_eq!(j.jobs.len(), 2);
        let a = &j.jobs[0];
        assert_eq!((a.name.as_str(), a.line), ("a", 6));
        assert_eq!(a.get("bs").unwrap().value.as_deref(), Some("8k"));
        assert_eq!(a.get("direct").unwrap().value, None);
        assert_eq!(a.get("rw").unwrap().value.as_deref(), Some("randread"));
        assert_eq!(a.get("rw").unwrap().at(), "d/job.fio:7");
        assert!(
            a.get("iodepth").is_none(),
            "a later [global] does not reach back"
        );
        let b = &j.jobs[1];
        assert_eq!(b.get("iodepth").unwrap().value.as_deref(), Some("4"));
        assert_eq!(b.get("bs").unwrap().value.as_deref(), Some("16k"));
    }

    #[test]
    fn includes_are_relative_and_loops_are_refused() {
        let j = parse_with(
            &[
                (
                    "d/job.fio",
                    "[global]\ninclude inc/common.fio\n[a]\nrw=read\n",
                ),
                ("d/inc/common.fio", "bs=64k\n"),
            ],
            &[],
        )
        .unwrap();
        let o = j.jobs[0].get("bs").unwrap();
        assert_eq!(o.at(), "d/inc/common.fio:1");
        let e = parse_with(
            &[
                ("d/job.fio", "[a]\ninclude b.fio\n"),
                ("d/b.fio", "rw=read\ninclude job.fio\n"),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.msg.starts_with("d/b.fio:2: include job.fio"), "{}", e.msg);
        assert!(e.msg.contains("loop") && !e.msg.contains('\n'));
        let e = parse_with(&[("d/job.fio", "[a]\n\ninclude nope.fio\n")], &[]).unwrap_err();
        assert!(
            e.msg.starts_with("d/job.fio:3: include nope.fio"),
            "{}",
            e.msg
        );
    }

    #[test]
    fn environment_substitution() {
        let j = parse_with(
            &[("d/job.fio", "[a]\nsize=${SZ}\ndirectory=$DIR/x\n")],
            &[("SZ", "1g"), ("DIR", "/mnt")],
        )
        .unwrap();
        assert_eq!(j.jobs[0].get("size").unwrap().value.as_deref(), Some("1g"));
        assert_eq!(
            j.jobs[0].get("directory").unwrap().value.as_deref(),
            Some("/mnt/x")
        );
        let e = parse_with(&[("d/job.fio", "[a]\nsize=${NOPE}\n")], &[]).unwrap_err();
        assert!(
            e.msg
                .starts_with("d/job.fio:2: environment variable 'NOPE'")
        );
        let e = parse_with(&[("d/job.fio", "rw=read\n[a]\n")], &[]).unwrap_err();
        assert!(
            e.msg
                .starts_with("d/job.fio:1: option 'rw=read' comes before")
        );
    }

    #[test]
    fn fio_number_rules() {
        for (s, v) in [
            ("4096", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4kb", 4096),
            ("4KB", 4096),
            ("1m", 1 << 20),
            ("1024k", 1 << 20),
            ("1mi", 1_000_000),
            ("1000ki", 1_000_000),
            ("1t", 1 << 40),
            ("1ti", 1_000_000_000_000),
            ("4KiB", 4000),
            ("1.5k", 1536),
            ("0x1000", 4096),
            ("512b", 512),
        ] {
            assert_eq!(parse_size(s, 1024), Ok(v), "{s}");
        }
        assert_eq!(parse_size("4KiB", 1000), Ok(4096));
        assert_eq!(parse_size("4k", 1000), Ok(4000));
        for bad in ["abc", "4q", "", "k", "1.1b"] {
            assert!(parse_size(bad, 1024).is_err(), "{bad}");
        }
    }

    #[test]
    fn fio_arithmetic_expressions() {
        // HOWTO "Job file parameters": numeric values in parentheses, + - * / % ^
        for (e, v) in [
            ("(1+2)*3", None),
            ("((1+2)*3)", Some(9)),
            ("(2*1024)", Some(2048)),
            ("(2*1024)k", Some(2 << 20)),
            ("(4k+4k)", Some(8192)),
            ("(1m/4)", Some(262_144)),
            ("(10-3)", Some(7)),
            ("(7/2)", Some(3)),
            ("(10%4)", Some(2)),
            ("(2^10)", Some(1024)),
            ("(2^3^2)", Some(512)),
            ("(-2+10)", Some(8)),
            ("( 3 * (4 + 1) )", Some(15)),
            ("(1.5k*2)", Some(3072)),
        ] {
            match v {
                Some(v) => assert_eq!(parse_size(e, 1024), Ok(v), "{e}"),
                None => assert!(parse_size(e, 1024).is_err(), "{e}"),
            }
        }
        // the whole expression in parentheses, a unit after it, nothing else
        for bad in [
            "$((2*1024))k",
            "(2*1024",
            "(2*)",
            "(1/0)",
            "(2-3)",
            "(2<<3)",
            "(x*2)",
            "(2)+1",
            "(2)q",
        ] {
            let e = parse_size(bad, 1024).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
        // times: microseconds inside an expression, a unit after it is the result's unit
        assert_eq!(parse_time("(1000*1000)", 1.0), Ok(1.0));
        assert_eq!(parse_time("(2*5)s", 1.0), Ok(10.0));
        assert_eq!(parse_time("(1+1)m", 1.0), Ok(120.0));
        assert_eq!(parse_time("(1s+500ms)", 1.0), Ok(1.5));
    }

    #[test]
    fn reserved_keywords_with_arithmetic_are_expressions() {
        // HOWTO "Reserved keywords": size=8*$mb_memory
        let j = parse_with(
            &[(
                "d/job.fio",
                "[a]\nsize=8*$mb_memory\nnumjobs=$ncpus\nbs=$pagesize\ndirectory=/x/$ncpus-y\n",
            )],
            &[("mb_memory", "16"), ("ncpus", "4"), ("pagesize", "4096")],
        )
        .unwrap();
        let get = |k: &str| j.jobs[0].get(k).unwrap().value.clone().unwrap();
        assert_eq!(get("size"), "(8*16)");
        assert_eq!(parse_size(&get("size"), 1024), Ok(128));
        assert_eq!(get("numjobs"), "4");
        assert_eq!(get("bs"), "4096");
        assert_eq!(get("directory"), "/x/4-y");
    }

    #[test]
    fn times_bools_percentages() {
        assert_eq!(parse_time("30", 1.0), Ok(30.0));
        assert_eq!(parse_time("2m", 1.0), Ok(120.0));
        assert_eq!(parse_time("1h", 1.0), Ok(3600.0));
        assert_eq!(parse_time("1d", 1.0), Ok(86400.0));
        assert_eq!(parse_time("250ms", 1.0), Ok(0.25));
        assert_eq!(parse_time("500us", 1.0), Ok(0.0005));
        assert_eq!(parse_time("10s", 1.0), Ok(10.0));
        assert!(parse_time("ten", 1.0).is_err());
        assert_eq!(parse_bool(None), Ok(true));
        assert_eq!(parse_bool(Some("0")), Ok(false));
        assert!(parse_bool(Some("2")).is_err());
        assert_eq!(parse_percent("70"), Ok(70));
        assert_eq!(parse_percent("30%"), Ok(30));
        assert!(parse_percent("101").is_err());
    }

    #[test]
    fn detects_job_files() {
        assert!(looks_like_jobfile("; c\n\n[global]\nrw=read\n"));
        assert!(!looks_like_jobfile("rw=read\n"));
        assert!(!looks_like_jobfile(""));
    }
}
