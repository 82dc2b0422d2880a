//! `--verify` and `iolab verify`: the header every verified block carries, the check of a block
//! read back, its classification (lost, misdirected, torn, zeroed/stale), the tally a run or a
//! `verify` reports, and the state file a verify run leaves in `--dir` (docs/verify.md).

use serde::{Deserialize, Serialize};

/// First bytes of every verified block.
pub const MAGIC: [u8; 8] = *b"IOLABVF2";
/// The magic of format 1 (CRC-32 instead of CRC-32C), which this iolab recognises and refuses.
pub const MAGIC_V1: [u8; 8] = *b"IOLABVF1";
/// Bytes of the header at the start of each block.
pub const HEADER_LEN: usize = 64;
/// Where the CRC-32C sits in the header (computed with these 4 bytes zero).
const CRC_AT: usize = 48;
/// The state file of a verify run, in `--dir`.
pub const STATE_FILE: &str = ".iolab-verify";
/// How many mismatches a result lists (the counts count them all).
pub const MAX_LISTED: usize = 100;
/// Set in a block's generation when its last write failed: its content is unknown, it is not
/// checked (the next write clears it and counts on).
pub const GEN_UNKNOWN_BIT: u32 = 1 << 31;

/// A block's header, as written or as found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Header {
    pub run_id: u64,
    pub file: u32,
    pub offset_bytes: u64,
    /// How many times this run has written the block (1 for its first write).
    pub generation: u64,
    /// The worker thread that wrote it.
    pub thread: u32,
}

#[inline]
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}
#[inline]
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

/// The payload key of one write: every 8-byte word after the header is the thread's base
/// pattern XOR this key, so each generation of each block has different bytes (a block half
/// from one write and half from another fails its checksum).
#[inline]
pub fn key_of(h: &Header) -> u64 {
    let mut z = h.run_id
        ^ (h.file as u64).rotate_left(48)
        ^ h.offset_bytes.rotate_left(17)
        ^ h.generation.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

/// Fills `block` (one verify unit) for the write `h`: header, payload from `base` (the same
/// length) and the checksum. No allocation.
#[inline]
pub fn stamp(block: &mut [u8], base: &[u8], h: &Header) {
    let n = block.len();
    debug_assert!(n >= HEADER_LEN && n.is_multiple_of(8) && base.len() >= n);
    let key = key_of(h);
    for (d, s) in block[HEADER_LEN..]
        .chunks_exact_mut(8)
        .zip(base[HEADER_LEN..n].chunks_exact(8))
    {
        let w = u64::from_le_bytes(s.try_into().expect("8 bytes")) ^ key;
        d.copy_from_slice(&w.to_le_bytes());
    }
    let hd = &mut block[..HEADER_LEN];
    hd[0..8].copy_from_slice(&MAGIC);
    hd[8..16].copy_from_slice(&h.run_id.to_le_bytes());
    hd[16..20].copy_from_slice(&h.file.to_le_bytes());
    hd[20..24].copy_from_slice(&(n as u32).to_le_bytes());
    hd[24..32].copy_from_slice(&h.offset_bytes.to_le_bytes());
    hd[32..40].copy_from_slice(&h.generation.to_le_bytes());
    hd[40..44].copy_from_slice(&h.thread.to_le_bytes());
    hd[44..64].fill(0);
    let crc = crc32c::crc32c(block);
    block[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

/// The checksum `block` should carry: CRC-32C (Castagnoli; SSE4.2 / ARMv8 CRC instructions
/// through the `crc32c` crate) of the block with the crc field zero.
#[inline]
pub fn crc_of(block: &[u8]) -> u32 {
    let c = crc32c::crc32c(&block[..CRC_AT]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &block[CRC_AT + 4..])
}

/// The header found in a block, if its magic and length are there.
pub fn header_of(block: &[u8]) -> Option<Header> {
    if block.len() < HEADER_LEN || block[0..8] != MAGIC || u32_at(block, 20) as usize != block.len()
    {
        return None;
    }
    Some(Header {
        run_id: u64_at(block, 8),
        file: u32_at(block, 16),
        offset_bytes: u64_at(block, 24),
        generation: u64_at(block, 32),
        thread: u32_at(block, 40),
    })
}

/// What is wrong with a block read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A whole, correctly placed block of an older write (an earlier generation, or an earlier
    /// run): the last write never arrived.
    Lost,
    /// A whole block whose header names another file or offset: a write landed in the wrong
    /// place.
    Misdirected,
    /// The header is there but the checksum fails: part of the block is from another write (or
    /// damaged).
    Torn,
    /// No header at all: zeros, the data prepare wrote, or foreign bytes.
    Stale,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lost => "lost",
            Kind::Misdirected => "misdirected",
            Kind::Torn => "torn",
            Kind::Stale => "stale",
        }
    }
}

/// Checks one block read back against the write expected there (`expected.thread` is not
/// compared: only the writer's map knows it). Ok, or the kind of mismatch and the header found.
#[inline]
pub fn check(block: &[u8], expected: &Header) -> Result<(), (Kind, Option<Header>)> {
    let Some(found) = header_of(block) else {
        return Err((Kind::Stale, None));
    };
    if u32_at(block, CRC_AT) != crc_of(block) {
        return Err((Kind::Torn, Some(found)));
    }
    if found.file != expected.file || found.offset_bytes != expected.offset_bytes {
        return Err((Kind::Misdirected, Some(found)));
    }
    if found.run_id != expected.run_id || found.generation != expected.generation {
        return Err((Kind::Lost, Some(found)));
    }
    Ok(())
}

/// One block that did not verify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mismatch {
    pub file: u32,
    pub offset_bytes: u64,
    pub kind: Kind,
    pub expected: Header,
    /// The header found (absent: none, for `stale`).
    pub found: Option<Header>,
}

impl Mismatch {
    /// `torn: file 0 offset 16384: expected generation 3 of run 0x..., found ...`.
    pub fn line(&self) -> String {
        let e = &self.expected;
        let found = match &self.found {
            None => "no header (zeros or foreign data)".to_string(),
            Some(f) => format!(
                "header of file {} offset {} generation {} run {:016x}",
                f.file, f.offset_bytes, f.generation, f.run_id
            ),
        };
        format!(
            "{}: file {} offset {}: expected generation {} of run {:016x}, found {found}",
            self.kind.name(),
            self.file,
            self.offset_bytes,
            e.generation,
            e.run_id
        )
    }
}

/// The counts of a verify run or of `iolab verify`, with the first [`MAX_LISTED`] mismatches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyResult {
    /// Blocks read back and checked.
    pub checked: u64,
    pub lost: u64,
    pub misdirected: u64,
    pub torn: u64,
    pub stale: u64,
    pub mismatches: Vec<Mismatch>,
}

impl VerifyResult {
    pub fn bad(&self) -> u64 {
        self.lost + self.misdirected + self.torn + self.stale
    }
    /// Counts one mismatch, listing it while fewer than [`MAX_LISTED`] are.
    pub fn record(&mut self, m: Mismatch) {
        match m.kind {
            Kind::Lost => self.lost += 1,
            Kind::Misdirected => self.misdirected += 1,
            Kind::Torn => self.torn += 1,
            Kind::Stale => self.stale += 1,
        }
        if self.mismatches.len() < MAX_LISTED {
            self.mismatches.push(m);
        }
    }
    /// Adds another result (the per-thread results of a run).
    pub fn add(&mut self, o: &VerifyResult) {
        self.checked += o.checked;
        for m in &o.mismatches {
            if self.mismatches.len() < MAX_LISTED {
                self.mismatches.push(m.clone());
            }
        }
        self.lost += o.lost;
        self.misdirected += o.misdirected;
        self.torn += o.torn;
        self.stale += o.stale;
    }
    /// The first `n` listed mismatches, one line each, and how many more there are.
    pub fn mismatch_lines(&self, n: usize) -> String {
        let mut s = String::new();
        for m in self.mismatches.iter().take(n) {
            s.push_str(&format!("  {}\n", m.line()));
        }
        let more = self
            .bad()
            .saturating_sub(n.min(self.mismatches.len()) as u64);
        if more > 0 {
            s.push_str(&format!(
                "  ... and {more} more (the first {MAX_LISTED} are listed with --json)\n"
            ));
        }
        s
    }
    /// One line: `verify: 1234 blocks checked, 0 lost, 0 misdirected, 0 torn, 0 stale`.
    pub fn line(&self) -> String {
        format!(
            "verify: {} blocks checked, {} lost, {} misdirected, {} torn, {} stale",
            self.checked, self.lost, self.misdirected, self.torn, self.stale
        )
    }
}

/// The first line of the state file (JSON); the generations follow as little-endian u32, one
/// per block of `block_bytes` of the set (files one after the other).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StateHead {
    pub schema: String,
    pub run_id: u64,
    /// The verify block (the smallest `--bs`).
    pub block_bytes: u64,
    pub file_size_bytes: u64,
    /// The data files, in order (names relative to the directory).
    pub files: Vec<String>,
    /// Where the verify blocks start in each file (`--offset`; absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The `iolab verify --dir D` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyDoc {
    pub schema: String,
    /// The document's id ([`crate::model::new_doc_id`]), absent in documents of an iolab before
    /// it (the store then takes a hash of the document as its id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc_id: Option<String>,
    pub iolab_version: String,
    pub start_time: String,
    pub dir: String,
    pub run_id: u64,
    pub block_bytes: u64,
    /// Blocks of the set that no verify write reached (not checked).
    pub unwritten: u64,
    pub verify: VerifyResult,
    /// The host that checked the set (absent in documents of iolab before it was stored).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// `--label`, stored with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `--tag K=V`, stored with it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, String>,
}

impl VerifyDoc {
    /// The one line `iolab list` shows for it.
    pub fn headline(&self) -> String {
        let v = &self.verify;
        format!(
            "verify {} blocks checked, {} lost, {} misdirected, {} torn, {} stale",
            v.checked, v.lost, v.misdirected, v.torn, v.stale
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(g: u64) -> Header {
        Header {
            run_id: 7,
            file: 1,
            offset_bytes: 16384,
            generation: g,
            thread: 0,
        }
    }

    /// CRC-32C bit by bit (reflected polynomial 0x82F63B78), the reference the header's field
    /// is checked against.
    fn crc32c_reference(data: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn the_header_carries_the_crc32c_of_the_block() {
        // the standard check value of CRC-32C
        assert_eq!(crc32c_reference(b"123456789"), 0xE306_9283);
        let base: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 253) as u8).collect();
        let mut b = vec![0u8; 4096];
        stamp(&mut b, &base, &hdr(5));
        assert_eq!(&b[..8], b"IOLABVF2");
        let stored = u32_at(&b, CRC_AT);
        let mut zeroed = b.clone();
        zeroed[CRC_AT..CRC_AT + 4].fill(0);
        assert_eq!(stored, crc32c_reference(&zeroed));
        assert_eq!(crc_of(&b), stored);
        // a block of format 1 (CRC-32 headers) has no header this iolab reads
        let mut old = b.clone();
        old[..8].copy_from_slice(&MAGIC_V1);
        assert_eq!(header_of(&old), None);
    }

    #[test]
    fn classification() {
        let base: Vec<u8> = (0..16384u32).map(|i| (i * 31 % 251) as u8).collect();
        let mut b = vec![0u8; 16384];
        stamp(&mut b, &base, &hdr(2));
        assert_eq!(check(&b, &hdr(2)), Ok(()));
        assert_eq!(check(&b, &hdr(3)).unwrap_err().0, Kind::Lost);
        let other = Header {
            offset_bytes: 0,
            ..hdr(3)
        };
        assert_eq!(check(&b, &other).unwrap_err().0, Kind::Misdirected);
        let mut old = vec![0u8; 16384];
        stamp(&mut old, &base, &hdr(1));
        let mut torn = b.clone();
        torn[8192..].copy_from_slice(&old[8192..]);
        assert_eq!(check(&torn, &hdr(2)).unwrap_err().0, Kind::Torn);
        assert_eq!(
            check(&vec![0u8; 16384], &hdr(2)).unwrap_err().0,
            Kind::Stale
        );
        let mut r = VerifyResult::default();
        for _ in 0..150 {
            r.record(Mismatch {
                file: 0,
                offset_bytes: 0,
                kind: Kind::Torn,
                expected: hdr(1),
                found: None,
            });
        }
        assert_eq!((r.torn, r.mismatches.len()), (150, MAX_LISTED));
    }
}
