//! Block sizes: `--bs` as given (one size, a weighted mix, a range), resolved per direction
//! (`--bs-write`: writes' sizes when not the reads'; fio's `bs=R,W,T`, `bssplit=...,...`,
//! `bsrange=...,...`), and fio's draw of a size from a range.

use serde::Serialize;
use std::str::FromStr;

/// Most distinct block sizes one job may mix (each has its own statistics per thread).
pub const MAX_BS_SIZES: usize = 64;

/// The least O_DIRECT alignment a block-size range's step is checked against (a range's step is
/// its minimum, as fio draws multiples of the minimum).
pub const BS_RANGE_STEP: u64 = 4096;

/// One size of a block-size mix (`--bs 16k:70,1m:30`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct BsWeight {
    pub bs_bytes: u64,
    /// Percent of the reads and writes issued with this size (the weights sum to 100).
    pub weight_pct: u32,
}

/// A block-size range (`--bs 4k-64k`), drawn as fio draws `bsrange`: `min + max × U` (U
/// uniform in [0, 1)) down to a multiple of `step_bytes` (the minimum), at most `max_bytes`.
/// Every multiple of the step from the minimum up to the maximum is equally likely; a maximum
/// that is not a multiple is drawn with the rest of the odds (`1k-2560`: 1k and 2k 40 % each,
/// 2560 20 %).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct BsRange {
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub step_bytes: u64,
}

impl BsRange {
    /// The sizes it draws, ascending.
    pub fn sizes(&self) -> Vec<u64> {
        let step = self.step_bytes.max(1);
        let mut v: Vec<u64> = (0..=(self.max_bytes - self.min_bytes) / step)
            .map(|i| self.min_bytes + i * step)
            .collect();
        if v.last() != Some(&self.max_bytes) {
            v.push(self.max_bytes);
        }
        v
    }
}

/// fio's draw of a size from a range (io_u.c, `get_next_buflen`): `min + max × u` (`u` in
/// [0, 1)), down to a multiple of `step`, at most `max`.
#[inline]
pub fn fio_range_pick(min: u64, max: u64, step: u64, u: f64) -> u64 {
    let b = min + (max as f64 * u) as u64;
    (b - b % step.max(1)).min(max)
}

/// `--bs` as given: one size, a weighted mix, or a range (whose step the plan decides: it
/// depends on O_DIRECT).
#[derive(Debug, Clone, PartialEq)]
pub enum BsArg {
    One(u64),
    Mix(Vec<BsWeight>),
    Range { min: u64, max: u64 },
}

impl BsArg {
    /// The largest size: what files are rounded to and buffers are allocated for.
    pub fn largest(&self) -> u64 {
        match self {
            BsArg::One(b) => *b,
            BsArg::Mix(m) => m.iter().map(|w| w.bs_bytes).max().unwrap_or(0),
            BsArg::Range { max, .. } => *max,
        }
    }
}

impl FromStr for BsArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        use crate::model::units::{Bytes, parse_size};
        let t = s.trim();
        let size = |x: &str| -> Result<u64, String> {
            match parse_size(x) {
                Ok(0) => Err(format!("'{x}': a block size must be at least 1 byte")),
                Ok(v) => Ok(v),
                Err(e) => Err(e.to_string()),
            }
        };
        if t.contains(':') || t.contains(',') {
            let usage =
                "use SIZE:PCT,SIZE:PCT... with whole percents summing to 100 (e.g. 16k:70,1m:30)";
            let mut mix: Vec<BsWeight> = Vec::new();
            for part in t.split(',') {
                let (b, w) = part
                    .split_once(':')
                    .ok_or_else(|| format!("'{part}' has no weight; {usage}"))?;
                let bs_bytes = size(b)?;
                let weight_pct = w
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|w| (1..=100).contains(w))
                    .ok_or_else(|| {
                        format!("'{part}': the weight is a whole percent 1..100; {usage}")
                    })?;
                if mix.iter().any(|x| x.bs_bytes == bs_bytes) {
                    return Err(format!("{} is given twice; {usage}", Bytes(bs_bytes)));
                }
                mix.push(BsWeight {
                    bs_bytes,
                    weight_pct,
                });
            }
            let sum: u32 = mix.iter().map(|w| w.weight_pct).sum();
            if sum != 100 {
                return Err(format!("the weights sum to {sum}, not 100; {usage}"));
            }
            if mix.len() > MAX_BS_SIZES {
                return Err(format!("{} sizes; at most {MAX_BS_SIZES}", mix.len()));
            }
            mix.sort_by_key(|w| w.bs_bytes);
            return Ok(if mix.len() == 1 {
                BsArg::One(mix[0].bs_bytes)
            } else {
                BsArg::Mix(mix)
            });
        }
        if let Some((a, b)) = t.split_once('-') {
            let usage = "use MIN-MAX with MIN below MAX (e.g. 4k-64k)";
            let (min, max) = (size(a)?, size(b)?);
            if min >= max {
                return Err(format!(
                    "{} is not below {}; {usage}",
                    Bytes(min),
                    Bytes(max)
                ));
            }
            return Ok(BsArg::Range { min, max });
        }
        size(t).map(BsArg::One)
    }
}

/// The sizes of one direction, resolved: one size, a mix or a range.
#[derive(
    Debug, Clone, PartialEq, Eq, Default, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct BsSide {
    /// The size, or the largest of the mix or range.
    pub bs_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_mix: Option<Vec<BsWeight>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_range: Option<BsRange>,
}

impl BsSide {
    /// The distinct sizes, ascending.
    pub fn sizes(&self) -> Vec<u64> {
        if let Some(m) = &self.bs_mix {
            return m.iter().map(|w| w.bs_bytes).collect();
        }
        if let Some(r) = &self.bs_range {
            return r.sizes();
        }
        vec![self.bs_bytes]
    }

    /// As `--bs` takes it: `16KiB`, `16KiB:70,1MiB:30`, `4KiB-64KiB`.
    pub fn label(&self) -> String {
        use crate::model::units::Bytes;
        if let Some(m) = &self.bs_mix {
            return m
                .iter()
                .map(|w| format!("{}:{}", Bytes(w.bs_bytes), w.weight_pct))
                .collect::<Vec<_>>()
                .join(",");
        }
        if let Some(r) = &self.bs_range {
            return format!("{}-{}", Bytes(r.min_bytes), Bytes(r.max_bytes));
        }
        Bytes(self.bs_bytes).to_string()
    }

    /// As fio's `bs`, `bssplit` or `bsrange` value of one direction (bytes): the option's name
    /// and its value.
    pub fn fio(&self) -> (&'static str, String) {
        if let Some(m) = &self.bs_mix {
            let parts: Vec<String> = m
                .iter()
                .map(|w| format!("{}/{}", w.bs_bytes, w.weight_pct))
                .collect();
            return ("bssplit", parts.join(":"));
        }
        if let Some(r) = &self.bs_range {
            return ("bsrange", format!("{}-{}", r.min_bytes, r.max_bytes));
        }
        ("bs", self.bs_bytes.to_string())
    }
}

/// `--bs` and `--bs-write`: the reads' sizes and the writes' (the trims' in the trim modes)
/// when they differ (fio's `bs=R,W,T`, `bssplit=R,W,T`, `bsrange=R,W,T`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BsDirs {
    pub read: BsSide,
    pub write: BsSide,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_draws_as_fio_does() {
        // 1k-4k: 1k, 2k, 3k, 4k a quarter each (min + max × u, down to a multiple of 1k)
        let mut n = [0u32; 5];
        for i in 0..4000 {
            let b = fio_range_pick(1024, 4096, 1024, f64::from(i) / 4000.0);
            n[(b / 1024) as usize] += 1;
        }
        assert_eq!(n, [0, 1000, 1000, 1000, 1000]);
        // 1k-2560: 1k and 2k 40 % each, the maximum the rest
        let mut m = std::collections::BTreeMap::new();
        for i in 0..1000 {
            *m.entry(fio_range_pick(1024, 2560, 1024, f64::from(i) / 1000.0))
                .or_insert(0) += 1;
        }
        assert_eq!(
            m.into_iter().collect::<Vec<_>>(),
            [(1024, 400), (2048, 400), (2560, 200)]
        );
        let r = BsRange {
            min_bytes: 1024,
            max_bytes: 2560,
            step_bytes: 1024,
        };
        assert_eq!(r.sizes(), [1024, 2048, 2560]);
    }
}
