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

/// How a job file is read: its text by path (an error says why, to follow `PATH: `), and
/// environment variables by name.
pub struct Source<'a> {
    pub read: &'a dyn Fn(&Path) -> std::result::Result<String, String>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// How deep `include`s may nest (a chain of distinct files; a loop is refused anyway).
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// How deep an arithmetic expression may nest (parentheses, unary minus, `^` chains): fio's
/// own are a few levels; a deeper one is refused instead of overflowing the stack.
pub const MAX_EXPR_DEPTH: usize = 64;

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
    let mut budget = crate::spec::input::JOB_FILE_MAX_BYTES.saturating_sub(text.len() as u64);
    expand(path, &text, &mut stack, &mut lines, &mut budget, src)?;
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
        // An option's name only (fio's are letters, digits and `_`): a line that is not an
        // option is refused without quoting it (an included file may hold anything).
        if !is_option_name(k) {
            return Err(Error::usage(format!(
                "{file}:{line}: not an option line (key=value, key, [section] or include FILE)"
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
                    opt.key
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

/// Whether `k` is shaped as an option name: ASCII letters, digits, `_` and `-`, at most 64.
fn is_option_name(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 64
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The lines of a file with its `include`s expanded in place: (file, line number, text).
/// `budget`: the bytes the includes may still add (the job file and its includes together hold
/// at most [`JOB_FILE_MAX_BYTES`](crate::spec::input::JOB_FILE_MAX_BYTES)).
fn expand(
    file: &str,
    text: &str,
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<(String, usize, String)>,
    budget: &mut u64,
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
        if stack.len() > MAX_INCLUDE_DEPTH {
            return Err(Error::usage(format!(
                "{file}:{line}: include {name}: includes nest more than {MAX_INCLUDE_DEPTH} deep"
            )));
        }
        let inc = (src.read)(&target).map_err(|e| {
            let shown = target.display().to_string();
            let at = if shown == name {
                name.clone()
            } else {
                format!("{name} ({shown})")
            };
            Error::usage(format!("{file}:{line}: include {at}: {e}"))
        })?;
        *budget = budget.checked_sub(inc.len() as u64).ok_or_else(|| {
            Error::usage(format!(
                "{file}:{line}: include {name}: the job file and its includes hold more than {} MiB",
                crate::spec::input::JOB_FILE_MAX_BYTES >> 20
            ))
        })?;
        stack.push(target.clone());
        expand(&target.display().to_string(), &inc, stack, out, budget, src)?;
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
                    "{file}:{line}: '${{' without its closing '}}'"
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
                    "{file}:{line}: environment variable '{name}' is not set"
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
        // fio's expression lexer: k/kb, m/mb, ... p/pb are powers of 1024, kib, mib, gib, pib
        // powers of 1000, whatever kb_base says
        let unit = |u: &str| {
            let p = |e: u32| 1024i128.pow(e);
            Some(match u.to_ascii_lowercase().as_str() {
                "k" | "kb" => p(1),
                "m" | "mb" => p(2),
                "g" | "gb" => p(3),
                "t" | "tb" => p(4),
                "p" | "pb" => p(5),
                "kib" => 1_000,
                "mib" => 1_000_000,
                "gib" => 1_000_000_000,
                "pib" => 1_000_000_000_000,
                _ => return None,
            })
        };
        let v = eval_expression(s, &unit)?;
        return u64::try_from(v)
            .map_err(|_| "not a byte count (it is larger than 2^64)".to_string());
    }
    let t = s.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16)
            .map_err(|_| "not a hexadecimal number of bytes".to_string());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num == "." {
        return Err("not a number (4096, 4k, 1m, 0x1000)".to_string());
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
        _ => {
            return Err(
                "not a number with a unit fio knows (b, k, kb, ki, kib, m ... p)".to_string(),
            );
        }
    };
    let base: f64 = if (kb_base == 1000) == iec {
        1024.0
    } else {
        1000.0
    };
    let n: f64 = num
        .parse()
        .map_err(|_| "not a number (4096, 4k, 1m, 0x1000)".to_string())?;
    let v = n * base.powi(power);
    if !v.is_finite() || v >= u64::MAX as f64 || v.fract() != 0.0 {
        return Err("not a whole number of bytes below 2^64".to_string());
    }
    Ok(v as u64)
}

/// A time by fio's rules in seconds: a number with d, h, m, s/sec, ms/msec, us/usec (case
/// insensitive); without a unit, `default_unit_s` seconds (1 for runtime, 1e-6 for
/// microsecond options).
pub fn parse_time(s: &str, default_unit_s: f64) -> std::result::Result<f64, String> {
    if is_expression(s) {
        // fio: an expression's time is in microseconds; its lexer's time units are us, ms, s,
        // h and d (`m` there is a mebibyte, not a minute: refused)
        let unit = |u: &str| {
            Some(match u.to_ascii_lowercase().as_str() {
                "us" => 1,
                "ms" => 1_000,
                "s" => 1_000_000,
                "h" => 3_600_000_000,
                "d" => 86_400_000_000,
                _ => return None,
            })
        };
        let v = eval_expression(s, &unit)?;
        return Ok(v as f64 * 1e-6);
    }
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| "not a time (e.g. 30, 30s, 5m, 250ms)".to_string())?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" => default_unit_s,
        "d" => 86400.0,
        "h" => 3600.0,
        "m" | "min" => 60.0,
        "s" | "sec" => 1.0,
        "ms" | "msec" => 1e-3,
        "us" | "usec" => 1e-6,
        _ => return Err("not a time (e.g. 30, 30s, 5m, 250ms)".to_string()),
    };
    Ok(n * mult)
}

/// fio's reserved keywords (HOWTO "Reserved keywords"): replaced by the system's values, and a
/// value that uses one with arithmetic (`size=8*$mb_memory`) is evaluated as an expression.
pub const RESERVED: &[&str] = &["pagesize", "mb_memory", "ncpus"];

/// Is this value one of fio's arithmetic expressions? fio evaluates a numeric value that starts
/// with `(` (HOWTO "Job file parameters": "provided it is surrounded by parentheses"); `4k` and
/// `1k-4k` are not expressions.
pub fn is_expression(s: &str) -> bool {
    s.trim_start().starts_with('(')
}

/// Evaluates one of fio's arithmetic expressions (the whole value) as fio's grammar
/// (exp/expression-parser.y) does for integers: whole numbers (decimal or `0x` hex), `+ - * /
/// % ^`, unary minus, parentheses, and unit suffixes (`unit`'s factor) as postfix operators.
/// Precedence, lowest first, as fio's: `+ -`; a unit; `* /`; `^` (right to left); `%`; unary
/// minus. So `(1+2k)` is 1 + 2048, `(8/2k)` is (8/2)k, `(2*1024)k` and `(1+2)*3` are whole
/// expressions. Anything else (`$((...))`, names, decimals, `<<`) is refused.
fn eval_expression(
    s: &str,
    unit: &dyn Fn(&str) -> Option<i128>,
) -> std::result::Result<u128, String> {
    let mut p = Expr {
        toks: tokenize(s)?,
        i: 0,
        depth: 0,
        unit,
    };
    let v = p.expr(0)?;
    if p.i != p.toks.len() {
        return Err(p.err("text after the expression"));
    }
    u128::try_from(v).map_err(|_| "negative".to_string())
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i128),
    Unit(String),
    Op(char),
}

fn tokenize(s: &str) -> std::result::Result<Vec<Tok>, String> {
    let bad = |why: String| {
        format!(
            "not an arithmetic expression fio takes ({why}; fio's are whole numbers with units, + - * / % ^ and parentheses)"
        )
    };
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c == ' ' || c == '\t' {
            i += 1;
        } else if "+-*/%^()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c.is_ascii_digit() {
            let hex = s[i..].starts_with("0x") || s[i..].starts_with("0X");
            let start = if hex { i + 2 } else { i };
            let mut j = start;
            while j < b.len()
                && (b[j] as char).is_ascii_hexdigit()
                && (hex || b[j].is_ascii_digit())
            {
                j += 1;
            }
            if j < b.len() && b[j] == b'.' {
                return Err(bad("decimal numbers are refused".into()));
            }
            let n = i128::from_str_radix(&s[start..j], if hex { 16 } else { 10 })
                .map_err(|_| bad("a number too large".into()))?;
            out.push(Tok::Num(n));
            i = j;
        } else if c.is_ascii_alphabetic() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_alphabetic() {
                j += 1;
            }
            out.push(Tok::Unit(s[i..j].to_string()));
            i = j;
        } else {
            return Err(bad("a character that is none of these".into()));
        }
    }
    Ok(out)
}

/// Precedence climbing over fio's yacc precedences.
struct Expr<'a> {
    toks: Vec<Tok>,
    i: usize,
    /// How deep `expr`/`unary` recurse now (bounded by [`MAX_EXPR_DEPTH`]).
    depth: usize,
    unit: &'a dyn Fn(&str) -> Option<i128>,
}

/// (operator, precedence, right-associative)
const BINARY: &[(char, u8, bool)] = &[
    ('+', 1, false),
    ('-', 1, false),
    ('*', 3, false),
    ('/', 3, false),
    ('^', 4, true),
    ('%', 5, false),
];
/// A unit suffix binds between `+ -` and `* /`.
const UNIT_PREC: u8 = 2;

impl Expr<'_> {
    fn err(&self, why: &str) -> String {
        format!("not an arithmetic expression fio takes: {why}")
    }
    /// Runs one level of the recursion, refused past [`MAX_EXPR_DEPTH`].
    fn nested(
        &mut self,
        f: impl FnOnce(&mut Self) -> std::result::Result<i128, String>,
    ) -> std::result::Result<i128, String> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(self.err(&format!("nested more than {MAX_EXPR_DEPTH} deep")));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }
    fn expr(&mut self, min: u8) -> std::result::Result<i128, String> {
        self.nested(|p| p.expr_at(min))
    }
    fn expr_at(&mut self, min: u8) -> std::result::Result<i128, String> {
        let mut v = self.unary()?;
        loop {
            match self.toks.get(self.i).cloned() {
                Some(Tok::Unit(u)) if UNIT_PREC >= min => {
                    let m = (self.unit)(&u).ok_or_else(|| self.err("a unit fio does not know"))?;
                    self.i += 1;
                    v = v.checked_mul(m).ok_or_else(|| self.err("overflow"))?;
                }
                Some(Tok::Op(c)) => {
                    let Some(&(_, prec, right)) = BINARY.iter().find(|(o, _, _)| *o == c) else {
                        break;
                    };
                    if prec < min {
                        break;
                    }
                    self.i += 1;
                    let r = self.expr(if right { prec } else { prec + 1 })?;
                    v = self.apply(c, v, r)?;
                }
                _ => break,
            }
        }
        Ok(v)
    }
    fn apply(&self, op: char, a: i128, b: i128) -> std::result::Result<i128, String> {
        if matches!(op, '/' | '%') && b == 0 {
            return Err(self.err("division by zero"));
        }
        let r = match op {
            '+' => a.checked_add(b),
            '-' => a.checked_sub(b),
            '*' => a.checked_mul(b),
            '/' => a.checked_div(b),
            '%' => a.checked_rem(b),
            _ => {
                let e = u32::try_from(b).map_err(|_| self.err("a negative or huge exponent"))?;
                a.checked_pow(e)
            }
        };
        r.ok_or_else(|| self.err("overflow"))
    }
    fn unary(&mut self) -> std::result::Result<i128, String> {
        self.nested(Self::unary_at)
    }
    fn unary_at(&mut self) -> std::result::Result<i128, String> {
        match self.toks.get(self.i).cloned() {
            Some(Tok::Op('-')) => {
                self.i += 1;
                self.unary()?
                    .checked_neg()
                    .ok_or_else(|| self.err("overflow"))
            }
            Some(Tok::Num(n)) => {
                self.i += 1;
                Ok(n)
            }
            Some(Tok::Op('(')) => {
                self.i += 1;
                let v = self.expr(0)?;
                if self.toks.get(self.i) != Some(&Tok::Op(')')) {
                    return Err(self.err("a '(' without its ')'"));
                }
                self.i += 1;
                Ok(v)
            }
            Some(Tok::Op(_)) => Err(self.err("an operator where a number belongs")),
            Some(Tok::Unit(_)) => Err(self.err("a unit where a number belongs")),
            None => Err(self.err("it ends where a number belongs")),
        }
    }
}

/// A bool option: bare (true), 0/1, true/false, yes/no, on/off.
pub fn parse_bool(v: Option<&str>) -> std::result::Result<bool, String> {
    match v.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(_) => Err("not 0 or 1 (true/false, yes/no, on/off)".to_string()),
    }
}

/// A percentage `N` or `N%` (0..100).
pub fn parse_percent(s: &str) -> std::result::Result<u32, String> {
    let t = s.trim().trim_end_matches('%');
    match t.parse::<u32>() {
        Ok(n) if n <= 100 => Ok(n),
        _ => Err("not a percentage (0..100)".to_string()),
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
                .ok_or_else(|| "cannot read it: No such file or directory".to_string())
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
        assert!(e.msg.starts_with("d/job.fio:1: option 'rw' comes before"));
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
        // HOWTO "Job file parameters": a value in parentheses, + - * / % ^; the precedences and
        // units of fio's exp/expression-parser.y
        for (e, v) in [
            ("(1+2)*3", 9),
            ("((1+2)*3)", 9),
            ("(2*1024)", 2048),
            ("(2*1024)k", 2 << 20),
            ("(4k+4k)", 8192),
            ("(1m/4)", 262_144),
            ("(1+2k)", 2049),
            ("(8/2k)", 4096),
            ("(2k*3)", 6144),
            ("(10-3)", 7),
            ("(7/2)", 3),
            ("(10%4)", 2),
            ("(2^10)", 1024),
            ("(2^3^2)", 512),
            ("(2*7%4)", 6),
            ("(-2+10)", 8),
            ("( 3 * (4 + 1) )", 15),
            ("(0x10*2)", 32),
            ("(1kib)", 1000),
            ("(1KB)", 1024),
        ] {
            assert_eq!(parse_size(e, 1024), Ok(v), "{e}");
        }
        // kb_base does not reach fio's expression units
        assert_eq!(parse_size("(4k)", 1000), Ok(4096));
        for bad in [
            "$((2*1024))k",
            "(2*1024",
            "(2*)",
            "(1/0)",
            "(2-3)",
            "(2<<3)",
            "(x*2)",
            "(2)q",
            "(1.5k)",
            "(2)(3)",
        ] {
            let e = parse_size(bad, 1024).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
        // times: microseconds unless a unit says otherwise; fio's units us ms s h d
        assert_eq!(parse_time("(1000*1000)", 1.0), Ok(1.0));
        assert_eq!(parse_time("(2*5)s", 1.0), Ok(10.0));
        assert_eq!(parse_time("(1s+500ms)", 1.0), Ok(1.5));
        assert_eq!(parse_time("(1h)", 1.0), Ok(3600.0));
        assert!(parse_time("(1m)", 1.0).is_err(), "m is a mebibyte to fio");
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

    /// Issue 24: deep nesting is refused (it overflowed the stack), a line that is no option is
    /// refused without being quoted, includes nest at most MAX_INCLUDE_DEPTH deep.
    #[test]
    fn hostile_values_are_bounded_and_never_quoted() {
        let deep = format!("{}1{}", "(".repeat(200_000), ")".repeat(200_000));
        let e = parse_size(&deep, 1024).unwrap_err();
        assert!(e.contains("nested more than 64 deep"), "{e}");
        let e = parse_size(&format!("({}1)", "-".repeat(10_000)), 1024).unwrap_err();
        assert!(e.contains("nested"), "{e}");
        assert_eq!(
            parse_size(&format!("{}4k{}", "(".repeat(30), ")".repeat(30)), 1024),
            Ok(4096)
        );
        let e = parse_size("(0-170141183460469231731687303715884105727-1)", 1024).unwrap_err();
        assert!(!e.contains("1701"), "{e}");
        let e = parse_size("(-(0-170141183460469231731687303715884105727-1))", 1024).unwrap_err();
        assert!(e.contains("overflow"), "{e}");
        let e = parse_with(
            &[
                ("d/job.fio", "[a]\ninclude s\n"),
                ("d/s", "root:$6$secret:20228:0:99999:7:::\n"),
            ],
            &[],
        )
        .unwrap_err();
        assert_eq!(
            e.msg,
            "d/s:1: not an option line (key=value, key, [section] or include FILE)"
        );
        let mut files = vec![("d/job.fio".to_string(), "[a]\ninclude i0\n".to_string())];
        for i in 0..40 {
            files.push((format!("d/i{i}"), format!("include i{}\n", i + 1)));
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let e = parse_with(&files, &[]).unwrap_err();
        assert!(e.msg.contains("nest more than 16 deep"), "{}", e.msg);
    }

    #[test]
    fn detects_job_files() {
        assert!(looks_like_jobfile("; c\n\n[global]\nrw=read\n"));
        assert!(!looks_like_jobfile("rw=read\n"));
        assert!(!looks_like_jobfile(""));
    }
}
