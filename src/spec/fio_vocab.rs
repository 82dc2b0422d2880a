//! fio's value vocabulary, in one place for every reader and writer of fio's words: numbers
//! and sizes with `kb_base` (and fio's arithmetic expressions), times, bools, percentages, and
//! the `rw` <-> [`Mode`] map. Used by the job file reader (`spec::fiojob`), its translation to
//! run options (`cli::fiojob`), the fio JSON importer (`store::import::fio`) and the fio JSON
//! writer (`output::fio`). Where fio's HOWTO and fio disagree, this follows fio (the binary):
//! `tests/fiojob.rs` pins the sizes against fio's own parse when `fio` is installed.

use crate::model::job::Mode;

/// How deep an arithmetic expression may nest (parentheses, unary minus, `^` chains): fio's
/// own are a few levels; a deeper one is refused instead of overflowing the stack.
pub const MAX_EXPR_DEPTH: usize = 64;

/// fio's `rw` values that are an iolab mode, and the mode. The first entry of a mode is the
/// one written back (`rw` for [`Mode::Seqrw`], not `readwrite`).
pub const RW_MODES: [(&str, Mode); 11] = [
    ("read", Mode::Seqrd),
    ("write", Mode::Seqwr),
    ("randread", Mode::Rndrd),
    ("randwrite", Mode::Rndwr),
    ("randrw", Mode::Rndrw),
    ("rw", Mode::Seqrw),
    ("readwrite", Mode::Seqrw),
    ("trim", Mode::Seqtrim),
    ("randtrim", Mode::Rndtrim),
    ("trimwrite", Mode::Seqtrimwr),
    ("randtrimwrite", Mode::Rndtrimwr),
];

/// The mode of a fio `rw` value without its `:stride` (`randread` -> [`Mode::Rndrd`]); `None`
/// for what is not fio's.
pub fn mode_of_rw(rw: &str) -> Option<Mode> {
    let rw = rw.trim();
    RW_MODES.iter().find(|(r, _)| *r == rw).map(|(_, m)| *m)
}

/// fio's `rw` for a mode; a rewrite in place is fio's `write` (with `overwrite=1`).
pub fn rw_of_mode(m: Mode) -> &'static str {
    let m = if m == Mode::Seqrewr { Mode::Seqwr } else { m };
    RW_MODES
        .iter()
        .find(|(_, x)| *x == m)
        .map_or("write", |(r, _)| r)
}

/// A byte count by fio's rules: an integer (or decimal) with an optional, case-insensitive
/// suffix b, k, kb, ki, kib, m, ... p. With `kb_base` 1024 (fio's default) k/kb/ki are powers of
/// 1024 and kib (the `ib` spelling only) powers of 1000; with 1000 the other way round. So with
/// the default `64KiB` is 64,000 and `64ki` 65,536, as fio 3.33 reads them (its HOWTO says `1mi`
/// is 10^6; fio's `get_mult_bytes` matches `k` before `ki`, and the binary says 2^20). Hex
/// `0x..` is taken too. Where fio takes text iolab refuses (`4q` is 4 to fio, `1.5k` is 1: fio
/// stops at the dot), iolab refuses or reads the decimal.
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
    // fio's get_mult_bytes: only `kib` ... `pib` take the other base; `ki` is `k`
    let (letter, iec) = match unit.strip_suffix("ib") {
        Some(l) if !l.is_empty() => (l, true),
        _ => match unit.strip_suffix('b') {
            Some(l) => (l, false),
            None => (unit.strip_suffix('i').unwrap_or(&unit), false),
        },
    };
    let power = match letter {
        "" if unit.is_empty() || unit == "b" => 0,
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

/// A byte count at the start of `s` as fio's range options read each side (parse.c
/// `str_to_decimal`: the number and its unit, whatever follows ignored; `bsrange=512/25:1k`
/// is 512-1k), and whether anything was ignored.
pub fn parse_size_lead(s: &str, kb_base: u32) -> std::result::Result<(u64, bool), String> {
    let t = s.trim();
    if is_expression(t) || t.starts_with("0x") || t.starts_with("0X") {
        return parse_size(t, kb_base).map(|v| (v, false));
    }
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let unit = t[digits..]
        .find(|c: char| !c.is_ascii_alphabetic())
        .map_or(t.len(), |u| digits + u);
    let (head, rest) = t.split_at(unit);
    parse_size(head, kb_base).map(|v| (v, !rest.trim().is_empty()))
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

/// `CRITERION:LIMIT[%]` as fio reads it: the criterion one of `iops`, `iops_slope`, `bw`,
/// `bw_slope`; the limit a percentage of the mean (`N%`), else a number of I/Os per second, or
/// of bytes per second with fio's units (`bw:10m`).
pub fn steadystate(
    v: &str,
    kb: u32,
) -> Result<(crate::model::steady::SteadyMetric, bool, f64, bool), String> {
    let (crit, limit) = v.trim().split_once(':').ok_or(
        "steadystate threshold must be specified in addition to criterion (fio: iops:10%)",
    )?;
    let (metric, slope) = match crit.trim().to_ascii_lowercase().as_str() {
        "iops" => (crate::model::steady::SteadyMetric::Iops, false),
        "iops_slope" => (crate::model::steady::SteadyMetric::Iops, true),
        "bw" => (crate::model::steady::SteadyMetric::Bw, false),
        "bw_slope" => (crate::model::steady::SteadyMetric::Bw, true),
        _ => return Err("not a criterion of fio's (iops, iops_slope, bw, bw_slope)".into()),
    };
    let limit = limit.trim();
    let number = |t: &str| {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    if let Some(p) = limit.strip_suffix('%') {
        let x = number(p).ok_or("could not parse steadystate threshold percentage")?;
        return Ok((metric, slope, x, true));
    }
    let x = match metric {
        crate::model::steady::SteadyMetric::Iops => {
            number(limit).ok_or("steadystate IOPS threshold is not a number")?
        }
        crate::model::steady::SteadyMetric::Bw => parse_size(limit, kb)? as f64,
    };
    Ok((metric, slope, x, false))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            // fio 3.33: `ki`, `mi` ... without `b` are `k`, `m` (tests/fiojob.rs asks fio)
            ("1mi", 1 << 20),
            ("1000ki", 1_024_000),
            ("1t", 1 << 40),
            ("1ti", 1 << 40),
            ("1MiB", 1_000_000),
            ("4KiB", 4000),
            ("1.5k", 1536),
            ("0x1000", 4096),
            ("512b", 512),
        ] {
            assert_eq!(parse_size(s, 1024), Ok(v), "{s}");
        }
        assert_eq!(parse_size("4KiB", 1000), Ok(4096));
        assert_eq!(parse_size("4k", 1000), Ok(4000));
        assert_eq!(parse_size("4ki", 1000), Ok(4000));
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
    fn rw_and_modes_round_trip() {
        for m in Mode::ALL {
            let back = mode_of_rw(rw_of_mode(m)).unwrap();
            assert_eq!(back, if m == Mode::Seqrewr { Mode::Seqwr } else { m });
        }
        assert_eq!(rw_of_mode(Mode::Seqrw), "rw");
        assert_eq!(mode_of_rw("readwrite"), Some(Mode::Seqrw));
        assert_eq!(mode_of_rw("randtrimwrite"), Some(Mode::Rndtrimwr));
        assert_eq!(mode_of_rw("trim:8"), None);
    }
}
