//! `--buffers`: what iolab's writes hold (fio's buffer options: `zero_buffers`, `buffer_pattern`,
//! `refill_buffers`, `scramble_buffers`, `buffer_compress_percentage`/`_chunk`,
//! `dedupe_percentage`, `dedupe_mode`, `dedupe_working_set_percentage`). The engine's filler
//! (`engine::buf::Filler`) makes them; docs/measurement.md, "What writes hold".

use std::fmt;
use std::str::FromStr;

/// The most bytes of a pattern (fio's `MAX_PATTERN_SIZE`).
pub const MAX_PATTERN: usize = 512;

/// What a write buffer starts from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BufferBase {
    /// Pseudo-random bytes (fio's default).
    #[default]
    Random,
    /// Zeros (`zero_buffers`).
    Zero,
    /// A pattern repeated (`buffer_pattern`).
    Pattern(Vec<u8>),
}

/// What writes hold. The default: pseudo-random bytes, scrambled per write (fio's default:
/// no two blocks alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffers {
    pub base: BufferBase,
    /// fio's `scramble_buffers`: before each write, each 512-byte sector gets its offset and the
    /// write's sequence number (16 bytes), so no two blocks written are alike.
    pub scramble: bool,
    /// fio's `refill_buffers`: fresh content before every write (implied by compression and
    /// deduplication, as fio sets it).
    pub refill: bool,
    /// fio's `buffer_compress_percentage`: this share of each chunk is zeros (or the pattern);
    /// the rest pseudo-random.
    pub compress_pct: u8,
    /// fio's `buffer_compress_chunk` (0: the smallest block size).
    pub compress_chunk: u64,
    /// fio's `dedupe_percentage`: this share of writes repeat an earlier write's content.
    pub dedupe_pct: u8,
    /// fio's `dedupe_mode=working_set` with `dedupe_working_set_percentage`: the repeated
    /// content is drawn from the first writes covering this share of the thread's part of the
    /// set; `None`: `dedupe_mode=repeat` (the previous unique write's).
    pub dedupe_ws_pct: Option<u8>,
}

impl Default for Buffers {
    fn default() -> Self {
        Buffers {
            base: BufferBase::Random,
            scramble: true,
            refill: false,
            compress_pct: 0,
            compress_chunk: 0,
            dedupe_pct: 0,
            dedupe_ws_pct: None,
        }
    }
}

impl Buffers {
    pub fn is_default(&self) -> bool {
        *self == Buffers::default()
    }
    /// Each write's content is made anew (refill, compression or deduplication).
    pub fn refills(&self) -> bool {
        self.refill || self.compress_pct > 0 || self.dedupe_pct > 0
    }
    pub const HELP: &'static str = "random, zero or pattern:0xHEX, then any of ,refill ,scramble ,noscramble ,compress=PCT[:CHUNK] ,dedupe=PCT[:ws=PCT]";
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl fmt::Display for Buffers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.base {
            BufferBase::Random => f.write_str("random")?,
            BufferBase::Zero => f.write_str("zero")?,
            BufferBase::Pattern(p) => write!(f, "pattern:0x{}", hex(p))?,
        }
        // scramble is on by default except on zeros
        let default_scramble = self.base != BufferBase::Zero;
        if self.scramble != default_scramble {
            f.write_str(if self.scramble {
                ",scramble"
            } else {
                ",noscramble"
            })?;
        }
        if self.refill {
            f.write_str(",refill")?;
        }
        if self.compress_pct > 0 {
            write!(f, ",compress={}", self.compress_pct)?;
            if self.compress_chunk > 0 {
                write!(f, ":{}", self.compress_chunk)?;
            }
        }
        if self.dedupe_pct > 0 {
            write!(f, ",dedupe={}", self.dedupe_pct)?;
            if let Some(ws) = self.dedupe_ws_pct {
                write!(f, ":ws={ws}")?;
            }
        }
        Ok(())
    }
}

fn pct(v: &str, what: &str) -> Result<u8, String> {
    match v.trim().trim_end_matches('%').parse::<u8>() {
        Ok(n) if n <= 100 => Ok(n),
        _ => Err(format!("{what}: a percentage from 0 to 100")),
    }
}

/// `0xHEX` as bytes, in order (an odd count of digits: the first alone, as fio reads it).
pub fn hex_bytes(h: &str) -> Option<Vec<u8>> {
    let d = h.strip_prefix("0x").or_else(|| h.strip_prefix("0X"))?;
    if d.is_empty() || !d.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let (first, rest) = d.split_at(d.len() % 2);
    let mut out = Vec::with_capacity(d.len() / 2 + 1);
    if !first.is_empty() {
        out.push(u8::from_str_radix(first, 16).ok()?);
    }
    for i in (0..rest.len()).step_by(2) {
        out.push(u8::from_str_radix(&rest[i..i + 2], 16).ok()?);
    }
    Some(out)
}

impl FromStr for Buffers {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split(',').map(str::trim);
        let base = match parts.next().unwrap_or("") {
            "random" => BufferBase::Random,
            "zero" => BufferBase::Zero,
            p if p.starts_with("pattern:") => {
                let b = hex_bytes(&p["pattern:".len()..])
                    .ok_or("pattern: give the bytes as 0xHEX (e.g. pattern:0xdeadbeef)")?;
                if b.len() > MAX_PATTERN {
                    return Err(format!("pattern: at most {MAX_PATTERN} bytes"));
                }
                BufferBase::Pattern(b)
            }
            _ => return Err(format!("not a buffer content: use {}", Self::HELP)),
        };
        let mut b = Buffers {
            scramble: base != BufferBase::Zero,
            base,
            ..Buffers::default()
        };
        for p in parts {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            match k {
                "refill" if v.is_empty() => b.refill = true,
                "scramble" if v.is_empty() => b.scramble = true,
                "noscramble" if v.is_empty() => b.scramble = false,
                "compress" => {
                    let (p, chunk) = v.split_once(':').unwrap_or((v, ""));
                    b.compress_pct = pct(p, "compress")?;
                    if !chunk.is_empty() {
                        b.compress_chunk = chunk
                            .parse::<u64>()
                            .ok()
                            .filter(|&c| c > 0)
                            .ok_or("compress=PCT:CHUNK: the chunk in bytes, at least 1")?;
                    }
                }
                "dedupe" => {
                    let (p, ws) = v.split_once(':').unwrap_or((v, ""));
                    b.dedupe_pct = pct(p, "dedupe")?;
                    if !ws.is_empty() {
                        let w = ws
                            .strip_prefix("ws=")
                            .ok_or("dedupe=PCT:ws=PCT: the working set's share of the set")?;
                        b.dedupe_ws_pct = Some(pct(w, "dedupe ws")?);
                    }
                }
                _ => return Err(format!("'{p}' is not a buffer option: use {}", Self::HELP)),
            }
        }
        // fio: 100 % compressible is zeros; the working set and the repeated share fit in 100
        if b.compress_pct == 100 {
            b.compress_pct = 0;
            b.compress_chunk = 0;
            if b.base == BufferBase::Random {
                b.base = BufferBase::Zero;
            }
        }
        if let Some(ws) = b.dedupe_ws_pct
            && (ws == 0 || u32::from(ws) + u32::from(b.dedupe_pct) > 100)
        {
            return Err(
                "dedupe=PCT:ws=PCT: the working set must be above 0 % and, with the repeated share, at most 100 %"
                    .into(),
            );
        }
        Ok(b)
    }
}

super::serde_as_text!(Buffers);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_read_and_print_back() {
        for s in [
            "random",
            "zero",
            "random,noscramble",
            "zero,scramble",
            "pattern:0xaa55",
            "random,refill",
            "random,compress=50:4096",
            "random,dedupe=30",
            "random,compress=25,dedupe=30:ws=50",
        ] {
            let b: Buffers = s.parse().unwrap();
            assert_eq!(b.to_string(), s);
        }
        assert!(Buffers::default().is_default());
        assert_eq!("random".parse::<Buffers>().unwrap(), Buffers::default());
        assert_eq!(
            "random,compress=100".parse::<Buffers>().unwrap().base,
            BufferBase::Zero
        );
        assert!("random,dedupe=60:ws=50".parse::<Buffers>().is_err());
        assert!("pattern:zz".parse::<Buffers>().is_err());
        assert!("random,compress=101".parse::<Buffers>().is_err());
        assert!("random,fast".parse::<Buffers>().is_err());
    }

    #[test]
    fn hex_reads_as_fio_reads_it() {
        assert_eq!(hex_bytes("0xaa555aa5"), Some(vec![0xaa, 0x55, 0x5a, 0xa5]));
        // an odd count: the first digit alone (fio's t0006 `0xaaa`)
        assert_eq!(hex_bytes("0xaaa"), Some(vec![0x0a, 0xaa]));
        assert_eq!(hex_bytes("0x"), None);
        assert_eq!(hex_bytes("aa"), None);
    }
}
