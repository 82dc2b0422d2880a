//! fio's block-size options (`bs`, `bssplit`, `bsrange`, `blockalign`, `bs_unaligned`), per
//! direction, as `--bs`, `--bs-write` and `--block-align` (docs/fio-jobs.md, Block sizes).
//! Each value is read as fio 3.33 reads it (options.c `bssplit_ddir`, parse.c's range option,
//! io_u.c `get_next_buflen`).

use super::ctx::Ctx;
use crate::spec::fio_vocab;

/// One direction's sizes as fio resolves them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Spec {
    One(u64),
    /// (size, percent), ascending by size, the percents summing to 100.
    Mix(Vec<(u64, u32)>),
    /// min, max (min below max).
    Range(u64, u64),
}

impl Spec {
    fn smallest(&self) -> u64 {
        match self {
            Spec::One(b) | Spec::Range(b, _) => *b,
            Spec::Mix(m) => m[0].0,
        }
    }

    /// As `--bs` takes it.
    fn arg(&self) -> String {
        match self {
            Spec::One(b) => b.to_string(),
            Spec::Mix(m) => m
                .iter()
                .map(|(b, p)| format!("{b}:{p}"))
                .collect::<Vec<_>>()
                .join(","),
            Spec::Range(lo, hi) => format!("{lo}-{hi}"),
        }
    }
}

/// What the rest of the translation needs: the one size of every direction the job uses (None
/// with several) and the smallest size.
pub(super) struct Sizes {
    pub fixed: Option<u64>,
    pub min: u64,
}

/// Block sizes of the directions the job uses (`dirs`: read, write, trim): per direction
/// `bssplit`, else `bsrange`, else `bs` (fio's precedence). The reads' as `--bs`, the writes'
/// (the trims' in a trim mode) as `--bs-write` where they differ; `blockalign` as
/// `--block-align` (`map`: the job keeps fio's random map).
pub(super) fn block_sizes(
    c: &mut Ctx,
    f: &mut impl FnMut(&str, String),
    notes: &mut Vec<String>,
    dirs: [bool; 3],
    map: bool,
) -> Sizes {
    let unaligned = c.bool("bs_unaligned").unwrap_or(false);
    let split = c.by_direction("bssplit");
    let range = c.by_direction("bsrange");
    let bs = c.by_direction("bs");
    // the second side: the trims' in a trim mode, else the writes'
    let other = if dirs[2] { 2 } else { 1 };
    let spec = |c: &mut Ctx, d: usize| -> Spec {
        if let Some(v) = split.as_ref().and_then(|s| s[d].clone()) {
            return bssplit(c, &v, unaligned).unwrap_or(Spec::One(4096));
        }
        if let Some(v) = range.as_ref().and_then(|r| r[d].clone()) {
            if unaligned {
                c.refuse_key(
                    "bs_unaligned",
                    "with bsrange fio draws any byte count between the two; iolab keeps statistics per size (at most 64)",
                );
            }
            return bsrange(c, &v).unwrap_or(Spec::One(4096));
        }
        match bs.as_ref().and_then(|b| b[d].clone()) {
            Some(v) => match fio_vocab::parse_size(&v, c.kb) {
                Ok(0) => {
                    c.bad("bs", "a block size of 0");
                    Spec::One(4096)
                }
                Ok(b) => Spec::One(b),
                Err(e) => {
                    c.bad("bs", e);
                    Spec::One(4096)
                }
            },
            None => Spec::One(4096),
        }
    };
    let read = dirs[0].then(|| spec(c, 0));
    let write = (dirs[1] || dirs[2]).then(|| spec(c, other));
    let (first, second) = match (read, write) {
        (Some(r), Some(w)) if r != w => (r, Some(w)),
        (Some(r), _) => (r, None),
        (None, Some(w)) => (w, None),
        (None, None) => (Spec::One(4096), None),
    };
    f("bs", first.arg());
    if let Some(w) = &second {
        f("bs-write", w.arg());
    }
    let min = second
        .as_ref()
        .map_or(first.smallest(), |w| w.smallest().min(first.smallest()));
    let fixed = match (&first, &second) {
        (Spec::One(b), None) => Some(*b),
        _ => None,
    };
    if let (Some(w), true) = (&second, map)
        && w.smallest() != first.smallest()
    {
        notes.push(format!(
            "the smallest block sizes of reads ({}) and writes ({}) differ: with fio's random map iolab places both on one grid of {min} bytes and runs to size=; fio aligns each direction to its own smallest size but keeps one map in blocks of {min}, and its job can end early, before size=, where a busy block sends an offset past the end (fio 3.33: 'get_next_offset: offset >= io_size')",
            first.smallest(),
            w.smallest()
        ));
    }
    block_align(c, f, dirs, other, &first, second.as_ref(), map);
    Sizes { fixed, min }
}

/// `blockalign` (`ba`): random offsets multiples of it. Equal to each direction's smallest
/// size (fio's default) it changes nothing; otherwise `--block-align`, one value for the
/// directions the job uses, without fio's random map.
fn block_align(
    c: &mut Ctx,
    f: &mut impl FnMut(&str, String),
    dirs: [bool; 3],
    other: usize,
    first: &Spec,
    second: Option<&Spec>,
    map: bool,
) {
    let Some(ba) = c.by_direction("blockalign") else {
        return;
    };
    let used: Vec<usize> = [0, other]
        .into_iter()
        .filter(|&d| if d == 0 { dirs[0] } else { dirs[1] || dirs[2] })
        .collect();
    let mut vals = Vec::new();
    for &d in &used {
        let smallest = if d == 0 || second.is_none() {
            first.smallest()
        } else {
            second.map_or(first.smallest(), Spec::smallest)
        };
        let v = match &ba[d] {
            None => smallest,
            Some(v) => match fio_vocab::parse_size(v, c.kb) {
                Ok(b) if b > 0 => b,
                Ok(_) => return c.bad("blockalign", "an alignment of 0"),
                Err(e) => return c.bad("blockalign", e),
            },
        };
        vals.push((v, smallest));
    }
    if vals.iter().all(|(v, s)| v == s) {
        return;
    }
    if vals.windows(2).any(|w| w[0].0 != w[1].0) {
        return c.refuse_key(
            "blockalign",
            "different alignments for reads and writes (iolab aligns both to one)",
        );
    }
    if map {
        return c.refuse_key(
            "blockalign",
            "other than the smallest block size with fio's random map (fio draws blocks of blockalign but marks its map in blocks of the smallest size); add norandommap",
        );
    }
    f("block-align", vals[0].0.to_string());
}

/// One direction's `bssplit` value (`SIZE/PCT:SIZE/PCT...`) as fio reads it: a percent of 0 or
/// none is missing, and the missing ones share what the others leave (whole percents, the
/// remainder of the division to the last entry); each percent at most 100; the entries sorted
/// by percent, each drawn with its percent of the draws in that order and the last taking
/// what is left; each size down to a multiple of the smallest (unless `bs_unaligned`).
pub(super) fn bssplit(c: &mut Ctx, v: &str, unaligned: bool) -> Option<Spec> {
    let mut parts: Vec<(u64, Option<u32>)> = Vec::new();
    for p in v.split(':') {
        if p.is_empty() {
            break;
        }
        let (b, pct) = p.split_once('/').unwrap_or((p, ""));
        let b = match fio_vocab::parse_size(b, c.kb) {
            Ok(0) => {
                c.bad("bssplit", "a block size of 0");
                return None;
            }
            Ok(b) => b,
            Err(e) => {
                c.bad("bssplit", e);
                return None;
            }
        };
        // atoi: the leading digits, 0 when none
        let digits: String = pct
            .trim()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let pct = digits.parse::<u64>().unwrap_or(0).min(100) as u32;
        parts.push((b, (pct > 0).then_some(pct)));
        if parts.len() == 64 {
            break;
        }
    }
    if parts.is_empty() {
        c.bad("bssplit", "no block size");
        return None;
    }
    let given: u32 = parts.iter().filter_map(|p| p.1).sum();
    let missing = parts.iter().filter(|p| p.1.is_none()).count() as u32;
    if given > 100 && missing > 1 {
        c.bad("bssplit", "the percentages add up to more than 100");
        return None;
    }
    let given = if missing == 1 && parts.len() == 1 {
        100
    } else {
        given
    };
    let share = 100u32
        .saturating_sub(given)
        .checked_div(missing)
        .unwrap_or(0);
    let mut entries: Vec<(u64, u32)> = parts
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or(share)))
        .collect();
    let lo = entries.iter().map(|e| e.0).min().unwrap_or(4096);
    let hi = entries.iter().map(|e| e.0).max().unwrap_or(4096);
    if lo == hi {
        return Some(Spec::One(lo));
    }
    // qsort by percent (glibc's merge sort keeps the order of equal ones)
    entries.sort_by_key(|e| e.1);
    let mut cum = 0u32;
    let mut mix: Vec<(u64, u32)> = Vec::new();
    let last = entries.iter().rposition(|e| e.1 > 0);
    for (i, &(b, p)) in entries.iter().enumerate() {
        if p == 0 {
            continue;
        }
        let before = cum.min(100);
        cum += p;
        let w = if Some(i) == last {
            100 - before
        } else {
            cum.min(100) - before
        };
        let b = if unaligned { b } else { (b - b % lo).min(hi) };
        match mix.iter_mut().find(|m| m.0 == b) {
            Some(m) => m.1 += w,
            None => mix.push((b, w)),
        }
    }
    mix.retain(|m| m.1 > 0);
    mix.sort_by_key(|m| m.0);
    Some(match mix.as_slice() {
        [(b, _)] => Spec::One(*b),
        _ => Spec::Mix(mix),
    })
}

/// One direction's `bsrange` value (`LOW-HIGH`, or `LOW:HIGH`) as parse.c reads it: split at
/// the first `-` (else `:`), each side a number and a unit with anything after them ignored
/// (`512/25:1k:25:...` is 512-1k), the two swapped when the first is larger.
pub(super) fn bsrange(c: &mut Ctx, v: &str) -> Option<Spec> {
    let Some((a, b)) = v.split_once('-').or_else(|| v.split_once(':')) else {
        c.bad("bsrange", "use LOW-HIGH (e.g. 4k-64k)");
        return None;
    };
    let side = |c: &mut Ctx, s: &str| match fio_vocab::parse_size_lead(s, c.kb) {
        Ok((0, _)) => {
            c.bad("bsrange", "a block size of 0");
            None
        }
        Ok(v) => Some(v),
        Err(e) => {
            c.bad("bsrange", e);
            None
        }
    };
    // what follows a number and its unit is ignored, as fio does
    let ((mut lo, _), (mut hi, _)) = (side(c, a)?, side(c, b)?);
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    Some(if lo == hi {
        Spec::One(lo)
    } else {
        Spec::Range(lo, hi)
    })
}
