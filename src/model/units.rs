//! Parsing and printing of byte sizes.
//!
//! Sizes are plain integers of bytes (`512`) or an integer with a binary suffix:
//! `k`/`K`/`KiB`/`KB` = 1024, `m`/`M`/`MiB`/`MB` = 1024², `g`/`G`/`GiB`/`GB` = 1024³,
//! `t`/`T`/`TiB`/`TB` = 1024⁴. Like sysbench and fio, K/M/G always mean powers of 1024
//! here, also when written `KB`: storage people type `16k` for an InnoDB page.

use std::fmt;

/// Why a size string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("empty size")]
    Empty,
    #[error(
        "'{0}' is not a size: use an integer with an optional unit (512, 16k, 16KiB, 1G, 1GiB)"
    )]
    Invalid(String),
    #[error("'{0}' is too large")]
    Overflow(String),
}

/// Parses `16k`, `16KiB`, `1G`, `1GiB`, `512` into bytes.
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(SizeError::Empty);
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(SizeError::Invalid(s.to_string()));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| SizeError::Overflow(s.to_string()))?;
    let mult: u64 = match unit.trim() {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "KB" | "kB" | "kb" | "kib" => 1 << 10,
        "m" | "M" | "MiB" | "MB" | "mb" | "mib" => 1 << 20,
        "g" | "G" | "GiB" | "GB" | "gb" | "gib" => 1 << 30,
        "t" | "T" | "TiB" | "TB" | "tb" | "tib" => 1 << 40,
        _ => return Err(SizeError::Invalid(s.to_string())),
    };
    n.checked_mul(mult)
        .ok_or_else(|| SizeError::Overflow(s.to_string()))
}

/// A byte count printed with the largest binary unit that divides it exactly
/// (`16KiB`, `1GiB`, `1536B`), so that it parses back to the same number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 4] = [
            (1 << 40, "TiB"),
            (1 << 30, "GiB"),
            (1 << 20, "MiB"),
            (1 << 10, "KiB"),
        ];
        for (m, u) in UNITS {
            if self.0 >= m && self.0.is_multiple_of(m) {
                return write!(f, "{}{}", self.0 / m, u);
            }
        }
        write!(f, "{}B", self.0)
    }
}

/// A byte count rounded for people: `1.50 GiB`.
pub fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

/// A latency in nanoseconds, with a unit chosen for people: `812 ns`, `95.3 µs`, `12.4 ms`, `1.20 s`.
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_documented_forms() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("16k"), Ok(16384));
        assert_eq!(parse_size("16K"), Ok(16384));
        assert_eq!(parse_size("16KiB"), Ok(16384));
        assert_eq!(parse_size("16KB"), Ok(16384));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("4m"), Ok(4 << 20));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size(" 8k "), Ok(8192));
    }

    #[test]
    fn rejects_garbage() {
        assert!(matches!(parse_size("16x"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("k"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("-1"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("1.5G"), Err(SizeError::Invalid(_))));
        assert_eq!(parse_size(""), Err(SizeError::Empty));
        assert!(matches!(
            parse_size("99999999999T"),
            Err(SizeError::Overflow(_))
        ));
    }

    #[test]
    fn display_round_trips() {
        for v in [512u64, 16384, 1 << 30, 1536, 3 << 20, 1 << 40] {
            assert_eq!(parse_size(&Bytes(v).to_string()), Ok(v));
        }
        assert_eq!(Bytes(16384).to_string(), "16KiB");
        assert_eq!(Bytes(1536).to_string(), "1536B");
    }
}
