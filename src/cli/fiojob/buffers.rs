//! fio's buffer options (what writes hold) as `--buffers` (model::buffers; docs/fio-jobs.md).

use super::ctx::Ctx;
use crate::model::buffers::{BufferBase, Buffers, MAX_PATTERN, hex_bytes};
use crate::spec::fio_vocab;

/// fio's pattern (`buffer_pattern`, lib/pattern.c): `0xHEX`, decimal numbers (little-endian, the
/// fewest bytes) and quoted strings, one after the other. `None`: not one fio reads.
pub fn fio_pattern(v: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = v.trim();
    while !rest.is_empty() {
        if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let end = rest[1..].find(q)? + 1;
            out.extend_from_slice(&rest.as_bytes()[1..end]);
            rest = &rest[end + 1..];
        } else if rest.starts_with("0x") || rest.starts_with("0X") {
            let len = 2 + rest[2..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(rest.len() - 2);
            out.extend(hex_bytes(&rest[..len])?);
            rest = &rest[len..];
        } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
            let len = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let n: u32 = rest[..len].parse().ok().filter(|n| *n <= i32::MAX as u32)?;
            if n == 0 {
                out.push(0);
            } else {
                let mut n = n;
                while n > 0 {
                    out.push((n & 0xff) as u8);
                    n >>= 8;
                }
            }
            rest = &rest[len..];
        } else {
            return None;
        }
        rest = rest.trim_start();
    }
    (!out.is_empty() && out.len() <= MAX_PATTERN).then_some(out)
}

/// `--buffers` for a job that writes (`None`: fio's default, iolab's too).
pub(super) fn buffers(c: &mut Ctx, notes: &mut Vec<String>) -> Option<Buffers> {
    let zero = c.bool("zero_buffers");
    let base = match c.val("buffer_pattern") {
        Some(p) => match fio_pattern(&p) {
            Some(b) => BufferBase::Pattern(b),
            None => {
                c.bad(
                    "buffer_pattern",
                    "not a pattern fio reads (0xHEX, a number or a quoted string, at most 512 bytes)",
                );
                BufferBase::Random
            }
        },
        None if zero == Some(true) => BufferBase::Zero,
        None => BufferBase::Random,
    };
    let pct = |c: &mut Ctx, k: &str| -> u8 {
        c.val(k)
            .and_then(|v| fio_vocab::parse_percent(&v).ok())
            .map_or(0, |p| p.min(100) as u8)
    };
    let compress_pct = pct(c, "buffer_compress_percentage");
    let compress_chunk = c.size("buffer_compress_chunk").unwrap_or(0);
    let dedupe_pct = pct(c, "dedupe_percentage");
    let ws = match c.val("dedupe_mode").as_deref().map(str::trim) {
        None | Some("repeat") => None,
        Some("working_set") => Some(match c.val("dedupe_working_set_percentage") {
            Some(_) => pct(c, "dedupe_working_set_percentage"),
            None => 5,
        }),
        Some(_) => {
            c.bad("dedupe_mode", "not repeat or working_set");
            None
        }
    };
    if let Some(w) = ws
        && dedupe_pct > 0
        && u32::from(w) + u32::from(dedupe_pct) > 100
    {
        c.bad(
            "dedupe_working_set_percentage",
            "with dedupe_percentage above 100 %, as fio refuses it",
        );
    }
    if c.bool("dedupe_global") == Some(true) && dedupe_pct > 0 && ws.is_some() {
        notes.push(
            "dedupe_global=1: each thread draws its repeated content from its own working set (fio from every job's)"
                .into(),
        );
    }
    let mut b = Buffers {
        // fio scrambles when asked to, else unless zero_buffers is set
        scramble: c.bool("scramble_buffers").unwrap_or(zero != Some(true)),
        base,
        refill: c.bool("refill_buffers").unwrap_or(false),
        compress_pct,
        compress_chunk: if compress_pct > 0 { compress_chunk } else { 0 },
        dedupe_pct,
        dedupe_ws_pct: ws.filter(|_| dedupe_pct > 0),
    };
    // fio: 100 % compressible is zeros
    if b.compress_pct == 100 {
        b.compress_pct = 0;
        b.compress_chunk = 0;
        if b.base == BufferBase::Random {
            b.base = BufferBase::Zero;
        }
    }
    (!b.is_default()).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_read_as_fio_reads_them() {
        assert_eq!(
            fio_pattern("0xdeadface"),
            Some(vec![0xde, 0xad, 0xfa, 0xce])
        );
        assert_eq!(fio_pattern("0"), Some(vec![0]));
        assert_eq!(fio_pattern("258"), Some(vec![2, 1]));
        assert_eq!(fio_pattern("'ab'0x01"), Some(vec![b'a', b'b', 1]));
        assert_eq!(fio_pattern("\"x y\""), Some(b"x y".to_vec()));
        assert_eq!(fio_pattern("zz"), None);
        assert_eq!(fio_pattern("'open"), None);
    }
}
