//! `iolab crashcheck`: the record format written to the data file, the journal lines the
//! listener keeps, how a block read back is classified, and the stored document
//! (`iolab-crashcheck/1`, docs/verify.md).
//!
//! A record fills one block of `record_bytes` at a block-aligned offset:
//!
//! ```text
//!  0  magic "IOLABCC1"      8 bytes
//!  8  run id                u64 LE (random per `crashcheck write`)
//! 16  seq                   u64 LE (1, 2, ... in the order written)
//! 24  offset                u64 LE (where the record belongs, bytes)
//! 32  length                u32 LE (record_bytes)
//! 36  reserved              u32 0
//! 40  payload seed          u64 LE (from run id and seq)
//! 48  reserved              u64 0
//! 56  checksum              u32 LE: CRC-32 of the whole record with these 4 bytes zero
//! 60  reserved              u32 0
//! 64  payload               pseudo-random bytes from the seed (SplitMix64)
//! ```

use crate::model::auth;
use crate::model::schema::CRASHCHECK_PROTOCOL as PROTOCOL;
use serde::{Deserialize, Serialize};

pub const MAGIC: &[u8; 8] = b"IOLABCC1";
pub const HEADER_BYTES: usize = 64;
/// The data file in `--dir`.
pub const DATA_FILE: &str = "iolab-crashcheck.dat";

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The payload seed of record `seq` of run `run`.
pub fn seed_of(run: u64, seq: u64) -> u64 {
    let mut x = run ^ seq.rotate_left(32);
    splitmix(&mut x)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

/// CRC-32 of a record with its checksum field taken as zero.
fn checksum(b: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&b[..56]);
    h.update(&[0; 4]);
    h.update(&b[60..]);
    h.finalize()
}

/// Fills `buf` (one whole record, at least [`HEADER_BYTES`]) with record `seq` of run `run` at
/// `offset`; returns its checksum.
pub fn encode(buf: &mut [u8], run: u64, seq: u64, offset: u64) -> u32 {
    let seed = seed_of(run, seq);
    buf[..8].copy_from_slice(MAGIC);
    buf[8..16].copy_from_slice(&run.to_le_bytes());
    buf[16..24].copy_from_slice(&seq.to_le_bytes());
    buf[24..32].copy_from_slice(&offset.to_le_bytes());
    let len = buf.len() as u32;
    buf[32..36].copy_from_slice(&len.to_le_bytes());
    buf[36..40].fill(0);
    buf[40..48].copy_from_slice(&seed.to_le_bytes());
    buf[48..64].fill(0);
    let mut x = seed;
    for chunk in buf[HEADER_BYTES..].chunks_mut(8) {
        let v = splitmix(&mut x).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    let c = checksum(buf);
    buf[56..60].copy_from_slice(&c.to_le_bytes());
    c
}

/// The header of a block read back whose checksum and payload are right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub run: u64,
    pub seq: u64,
    pub offset: u64,
    pub checksum: u32,
}

/// What a block read back holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// Only zero bytes: nothing was ever written there (or it was lost).
    Zeros,
    /// A whole, intact record.
    Record(Header),
    /// Not zeros and not a record: no magic, a wrong length, a bad checksum or payload (torn or
    /// damaged).
    Garbage,
}

/// Reads one block back.
pub fn decode(b: &[u8]) -> Block {
    if b.iter().all(|&x| x == 0) {
        return Block::Zeros;
    }
    if b.len() < HEADER_BYTES || &b[..8] != MAGIC || u32_at(b, 32) as usize != b.len() {
        return Block::Garbage;
    }
    let h = Header {
        run: u64_at(b, 8),
        seq: u64_at(b, 16),
        offset: u64_at(b, 24),
        checksum: u32_at(b, 56),
    };
    if checksum(b) != h.checksum || u64_at(b, 40) != seed_of(h.run, h.seq) {
        return Block::Garbage;
    }
    // the payload regenerated from its seed: a block that passes the CRC by chance does not
    let mut x = seed_of(h.run, h.seq);
    for chunk in b[HEADER_BYTES..].chunks(8) {
        if chunk != &splitmix(&mut x).to_le_bytes()[..chunk.len()] {
            return Block::Garbage;
        }
    }
    Block::Record(h)
}

/// The verdict on one acknowledged record (the last acknowledged at its offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The acknowledged record is there, whole.
    Ok,
    /// A later record of the same run (written, maybe not acknowledged) replaced it: allowed.
    Overwritten,
    /// The block holds an earlier record, another run's record or zeros: the write was lost.
    Lost,
    /// The block holds damaged data (torn write, bad checksum) or the wrong checksum for that seq.
    Corrupt,
    /// The block holds a whole record that belongs at another offset.
    Misdirected,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Overwritten => "overwritten",
            Class::Lost => "lost",
            Class::Corrupt => "corrupt",
            Class::Misdirected => "misdirected",
        }
    }
    /// Whether this verdict blames the storage.
    pub fn is_failure(self) -> bool {
        matches!(self, Class::Lost | Class::Corrupt | Class::Misdirected)
    }
}

/// Classifies the block at `ack.offset` against the acknowledged record `ack` of run `run`.
pub fn classify(run: u64, ack: &Ack, block: Block) -> Class {
    match block {
        Block::Zeros => Class::Lost,
        Block::Garbage => Class::Corrupt,
        Block::Record(h) if h.offset != ack.offset => Class::Misdirected,
        Block::Record(h) if h.run != run || h.seq < ack.seq => Class::Lost,
        Block::Record(h) if h.seq > ack.seq => Class::Overwritten,
        Block::Record(h) if h.checksum != ack.checksum => Class::Corrupt,
        Block::Record(_) => Class::Ok,
    }
}

/// One acknowledged record, as the journal keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub seq: u64,
    pub offset: u64,
    pub checksum: u32,
}

/// The longest journal line a listener takes (bytes, newline included); a HELLO with a file
/// path near PATH_MAX fits.
pub const MAX_LINE: usize = 64 * 1024;

/// A run's secret, made by `crashcheck write` and kept on the writer's machine (a key file, and
/// printed): every journal line carries an HMAC-SHA256 tag over the run, the line's index and
/// its text under this key, so `verify` takes only the lines this writer wrote, in its order.
#[derive(Clone, PartialEq, Eq)]
pub struct RunKey {
    /// the run id, 16 hex digits
    pub run: String,
    pub key: [u8; auth::KEY_BYTES],
}

impl std::fmt::Debug for RunKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // never the key itself
        write!(
            f,
            "RunKey {{ run: {}, key: {} }}",
            self.run,
            self.fingerprint()
        )
    }
}

impl RunKey {
    /// The key's public name (16 hex digits), in HELLO and in the documents.
    pub fn fingerprint(&self) -> String {
        auth::fingerprint(&self.key)
    }

    fn parts<'a>(&'a self, index: &'a [u8; 8], text: &'a str) -> [&'a [u8]; 4] {
        [
            PROTOCOL.as_bytes(),
            self.run.as_bytes(),
            index,
            text.as_bytes(),
        ]
    }

    /// Journal line `index` (0: the HELLO) with its tag: `TEXT mac=TAG`.
    pub fn seal(&self, index: u64, text: &str) -> String {
        let i = index.to_le_bytes();
        format!(
            "{text} mac={}",
            auth::tag_hex(&self.key, &self.parts(&i, text))
        )
    }

    /// The text of journal line `index` when its tag is this run's; None when it is not (forged,
    /// altered, moved, or of another run).
    pub fn open<'a>(&self, index: u64, line: &'a str) -> Option<&'a str> {
        let (text, tag) = split_mac(line)?;
        let i = index.to_le_bytes();
        auth::tag_ok(&self.key, &self.parts(&i, text), tag).then_some(text)
    }

    /// The key file's one line: `KEY iolab-crashcheck/2 run=RUN key=HEX file=PATH`.
    pub fn file_line(&self, file: &str) -> String {
        format!(
            "KEY {PROTOCOL} run={} key={} file={file}\n",
            self.run,
            auth::hex(&self.key)
        )
    }

    /// A key file's line: the key and the data file it was made for.
    pub fn parse_file(text: &str) -> Option<(RunKey, String)> {
        let rest = text
            .strip_prefix("KEY ")?
            .strip_prefix(PROTOCOL)?
            .trim_start();
        let (head, file) = rest.split_once(" file=")?;
        let (mut run, mut key) = (None, None);
        for kv in head.split(' ') {
            match kv.split_once('=')? {
                ("run", v) => run = Some(v.to_string()),
                ("key", v) => key = Some(RunKey::parse_key(v)?),
                _ => {}
            }
        }
        let k = RunKey {
            run: run.filter(|r| is_run_id(r))?,
            key: key?,
        };
        Some((k, file.trim_end_matches('\n').to_string()))
    }

    /// The run id as a number (the records carry it).
    pub fn run_id(&self) -> u64 {
        u64::from_str_radix(&self.run, 16).unwrap_or(0)
    }

    /// A key as `write` prints it (64 hex digits).
    pub fn parse_key(hex: &str) -> Option<[u8; auth::KEY_BYTES]> {
        auth::unhex(hex)?.try_into().ok()
    }
}

/// A run id: 16 hex digits.
pub fn is_run_id(s: &str) -> bool {
    s.len() == 16 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// `TEXT mac=TAG` split into the text and the tag (64 hex digits); None without one.
pub fn split_mac(line: &str) -> Option<(&str, &str)> {
    let (text, tag) = line.rsplit_once(" mac=")?;
    (tag.len() == 64 && tag.chars().all(|c| c.is_ascii_hexdigit())).then_some((text, tag))
}

/// The run a journal describes (its `HELLO` line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hello {
    /// 16 hex digits
    pub run: String,
    /// the fingerprint of the run's key
    pub key: String,
    pub host: String,
    /// the data file, as the writer named it (absolute)
    pub file: String,
    pub record_bytes: u64,
    pub file_bytes: u64,
    pub sync: String,
}

impl Hello {
    pub fn run_id(&self) -> Option<u64> {
        u64::from_str_radix(&self.run, 16).ok()
    }
    /// `HELLO iolab-crashcheck/2 run=.. key=.. host=.. bs=.. size=.. sync=.. file=..` (the file
    /// last: it may hold spaces), without its tag.
    pub fn line(&self) -> String {
        format!(
            "HELLO {PROTOCOL} run={} key={} host={} bs={} size={} sync={} file={}",
            self.run, self.key, self.host, self.record_bytes, self.file_bytes, self.sync, self.file
        )
    }
    /// A HELLO line's text (its tag taken off).
    pub fn parse(text: &str) -> Option<Hello> {
        let rest = text
            .strip_prefix("HELLO ")?
            .strip_prefix(PROTOCOL)?
            .strip_prefix(' ')?;
        let (head, file) = rest.split_once(" file=")?;
        let mut h = Hello {
            run: String::new(),
            key: String::new(),
            host: String::new(),
            file: file.to_string(),
            record_bytes: 0,
            file_bytes: 0,
            sync: String::new(),
        };
        for kv in head.split(' ') {
            let (k, v) = kv.split_once('=')?;
            match k {
                "run" => h.run = v.into(),
                "key" => h.key = v.into(),
                "host" => h.host = v.into(),
                "bs" => h.record_bytes = v.parse().ok()?,
                "size" => h.file_bytes = v.parse().ok()?,
                "sync" => h.sync = v.into(),
                _ => {}
            }
        }
        (is_run_id(&h.run) && h.record_bytes > 0).then_some(h)
    }
}

/// What a listener takes after a HELLO, before its tag is checked (by `verify`, which has the
/// key): `ACK seq offset crc`, `FAIL seq offset why` or `END n`, each with a tag.
pub fn is_report_line(line: &str) -> bool {
    let Some((text, _)) = split_mac(line) else {
        return false;
    };
    let f: Vec<&str> = text.split(' ').collect();
    let num = |k: usize| f.get(k).is_some_and(|x| x.parse::<u64>().is_ok());
    match f[0] {
        "ACK" => f.len() == 4 && num(1) && num(2) && u32::from_str_radix(f[3], 16).is_ok(),
        "FAIL" => num(1) && num(2),
        "END" => f.len() == 2 && num(1),
        _ => false,
    }
}

/// A journal read back: the run, its acknowledged records in order, and how the writer ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    pub hello: Hello,
    pub acks: Vec<Ack>,
    /// `FAIL seq offset why`: the record whose write or sync failed (not acknowledged).
    pub failed: Option<(u64, u64, String)>,
    /// `END n`: the writer ended on its own (count, time, Ctrl-C) after n acknowledgements.
    pub ended: Option<u64>,
}

/// `ACK seq offset checksum` (checksum in hex).
pub fn ack_line(a: &Ack) -> String {
    format!("ACK {} {} {:08x}", a.seq, a.offset, a.checksum)
}

impl Journal {
    /// Parses the journal of the run `key` names, taking only lines authenticated by that key
    /// in the writer's order. A torn last line (the listener died while appending) is ignored;
    /// a journal of another run, an older unauthenticated journal, or any line whose tag is not
    /// the run's (forged, altered, moved) refuses the whole journal with one line saying so.
    pub fn parse(text: &str, key: &RunKey) -> Result<Journal, String> {
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("");
        let who = format!("run {} (key {})", key.run, key.fingerprint());
        let head = split_mac(first).map_or(first, |(t, _)| t);
        let Some(hello) = Hello::parse(head) else {
            return Err(if first.starts_with("HELLO iolab-crashcheck/1 ") {
                format!(
                    "line 1 is an unauthenticated iolab-crashcheck/1 HELLO, which cannot be told from a forged one; not the journal of {who}"
                )
            } else {
                format!("line 1 is not a HELLO line of {PROTOCOL}: not the journal of {who}")
            });
        };
        if hello.run != key.run || hello.key != key.fingerprint() {
            return Err(format!(
                "the journal is of run {} (key {}), not of {who}",
                hello.run, hello.key
            ));
        }
        if key.open(0, first).is_none() {
            return Err(format!(
                "line 1: its HELLO is not authenticated by the key of {who}: forged or altered"
            ));
        }
        let mut j = Journal {
            hello,
            acks: Vec::new(),
            failed: None,
            ended: None,
        };
        let all: Vec<&str> = lines.collect();
        let torn_ok = !text.ends_with('\n');
        for (i, line) in all.iter().enumerate() {
            let Some(l) = key.open(i as u64 + 1, line) else {
                if torn_ok && i + 1 == all.len() {
                    break;
                }
                return Err(format!(
                    "line {}: not authenticated by the key of {who} (forged, altered, moved or of another run)",
                    i + 2
                ));
            };
            let f: Vec<&str> = l.split(' ').collect();
            let num = |k: usize| f.get(k).and_then(|x| x.parse::<u64>().ok());
            let ok = match f.first().copied() {
                Some("ACK") => match (
                    num(1),
                    num(2),
                    f.get(3).and_then(|x| u32::from_str_radix(x, 16).ok()),
                ) {
                    (Some(seq), Some(offset), Some(checksum)) if f.len() == 4 => {
                        j.acks.push(Ack {
                            seq,
                            offset,
                            checksum,
                        });
                        true
                    }
                    _ => false,
                },
                Some("FAIL") => match (num(1), num(2)) {
                    (Some(s), Some(o)) => {
                        j.failed = Some((s, o, f[3..].join(" ")));
                        true
                    }
                    _ => false,
                },
                Some("END") => match num(1) {
                    Some(n) => {
                        j.ended = Some(n);
                        true
                    }
                    None => false,
                },
                _ => false,
            };
            if !ok {
                if torn_ok && i + 1 == all.len() {
                    break;
                }
                return Err(format!("line {}: {l:?} is not a journal line", i + 2));
            }
        }
        // the writer's END counts its acknowledgements: every one must be here
        if let Some(n) = j.ended.filter(|&n| n != j.acks.len() as u64) {
            return Err(format!(
                "its END says {n} acknowledged, but it holds {} acknowledgements of {who}",
                j.acks.len()
            ));
        }
        Ok(j)
    }

    /// The last acknowledged record per offset (later acknowledgements at the same offset
    /// replace earlier ones), in offset order.
    pub fn last_per_offset(&self) -> Vec<Ack> {
        let mut m = std::collections::BTreeMap::new();
        for a in &self.acks {
            m.insert(a.offset, *a);
        }
        m.into_values().collect()
    }
}

/// Why `crashcheck write` stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// `--count` records acknowledged
    Count,
    /// `--time` passed
    Time,
    /// Ctrl-C / SIGTERM
    Interrupted,
    /// a write, or the sync after it, failed: that record is not acknowledged
    IoError,
    /// the listener went away or did not answer
    ListenerLost,
}

/// A failed write or sync: the record is not acknowledged and the run stops there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IoFailure {
    pub seq: u64,
    pub offset_bytes: u64,
    /// "write", "fsync", "fdatasync" (O_DSYNC writes fail in "write")
    pub call: String,
    /// "EIO (Input/output error)"
    pub error: String,
    /// For a failed sync: what a second sync of the file returned right after ("ok" is the
    /// fsyncgate trap: the error is reported once, the data may be gone anyway).
    pub second_sync: Option<String>,
}

/// The result of `crashcheck write`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WriteOut {
    pub written: u64,
    pub acknowledged: u64,
    pub elapsed_s: f64,
    /// acknowledged records per second
    pub acks_per_sec: f64,
    pub stopped: Stop,
    pub failure: Option<IoFailure>,
}

/// One acknowledged record that verify found missing, damaged or misplaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Problem {
    pub seq: u64,
    pub offset_bytes: u64,
    pub class: Class,
    /// what the block holds: "zeros", "garbage", "run 1f.. seq 17 (offset 8192)"
    pub found: String,
}

/// The result of `crashcheck verify`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyOut {
    /// acknowledgements in the journal
    pub acknowledged: u64,
    /// offsets checked (the last acknowledged record of each)
    pub checked: u64,
    pub ok: u64,
    /// replaced by a later record of the run (not a failure)
    pub overwritten: u64,
    pub lost: u64,
    pub corrupt: u64,
    pub misdirected: u64,
    /// how the writer ended: "ended (N acknowledged)", "no end recorded (killed, crashed or
    /// power cut)", "stopped at record N: fsync failed (EIO ...)"
    pub writer: String,
    /// the first 100 problems, in seq order
    pub problems: Vec<Problem>,
}

impl VerifyOut {
    /// Acknowledged records the storage did not keep (lost, corrupt or misdirected).
    pub fn failures(&self) -> u64 {
        self.lost + self.corrupt + self.misdirected
    }
}

/// `iolab crashcheck write` or `verify`, as printed and stored (kind `crashcheck`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CrashDoc {
    pub schema: String,
    /// "write" or "verify"
    pub phase: String,
    pub run: String,
    /// The fingerprint of the run's key (16 hex digits; the key itself is never stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub host: String,
    pub file: String,
    pub record_bytes: u64,
    pub file_bytes: u64,
    /// fsync, fdatasync, dsync or direct-dsync
    pub sync: String,
    /// "tcp://HOST:PORT" or the journal's path
    pub journal: String,
    pub start_time: String,
    pub warnings: Vec<String>,
    pub write: Option<WriteOut>,
    pub verify: Option<VerifyOut>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(run: u64, seq: u64, off: u64) -> (Vec<u8>, u32) {
        let mut b = vec![0u8; 4096];
        let c = encode(&mut b, run, seq, off);
        (b, c)
    }

    #[test]
    fn records_round_trip_and_damage_is_seen() {
        let (b, c) = rec(7, 3, 8192);
        assert_eq!(
            decode(&b),
            Block::Record(Header {
                run: 7,
                seq: 3,
                offset: 8192,
                checksum: c
            })
        );
        assert_eq!(decode(&[0u8; 4096]), Block::Zeros);
        // a torn write: the second half of the block is an older record's
        let (old, _) = rec(7, 1, 8192);
        let mut torn = b.clone();
        torn[2048..].copy_from_slice(&old[2048..]);
        assert_eq!(decode(&torn), Block::Garbage);
        let mut flip = b.clone();
        flip[100] ^= 1;
        assert_eq!(decode(&flip), Block::Garbage);
        let mut short = b.clone();
        short.truncate(2048);
        assert_eq!(decode(&short), Block::Garbage);
        // the payload differs between records
        let (b2, _) = rec(7, 4, 8192);
        assert_ne!(b[64..], b2[64..]);
    }

    #[test]
    fn classification_of_an_acknowledged_record() {
        let (b, c) = rec(7, 3, 8192);
        let ack = Ack {
            seq: 3,
            offset: 8192,
            checksum: c,
        };
        assert_eq!(classify(7, &ack, decode(&b)), Class::Ok);
        assert_eq!(classify(7, &ack, Block::Zeros), Class::Lost);
        assert_eq!(classify(7, &ack, Block::Garbage), Class::Corrupt);
        let older = decode(&rec(7, 1, 8192).0);
        assert_eq!(classify(7, &ack, older), Class::Lost);
        let other_run = decode(&rec(8, 3, 8192).0);
        assert_eq!(classify(7, &ack, other_run), Class::Lost);
        let later = decode(&rec(7, 9, 8192).0);
        assert_eq!(classify(7, &ack, later), Class::Overwritten);
        let elsewhere = decode(&rec(7, 3, 4096).0);
        assert_eq!(classify(7, &ack, elsewhere), Class::Misdirected);
        let wrong = Ack {
            checksum: c ^ 1,
            ..ack
        };
        assert_eq!(classify(7, &wrong, decode(&b)), Class::Corrupt);
        assert!(Class::Lost.is_failure() && !Class::Overwritten.is_failure());
    }

    fn key(run: u64, k: u8) -> RunKey {
        RunKey {
            run: format!("{run:016x}"),
            key: [k; auth::KEY_BYTES],
        }
    }

    /// A journal as a writer with `k` writes it: line i sealed with index i.
    fn sealed(k: &RunKey, texts: &[String]) -> String {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| k.seal(i as u64, t) + "\n")
            .collect()
    }

    #[test]
    fn journal_lines_round_trip_last_ack_per_offset_counts() {
        let k = key(0xabc, 1);
        let h = Hello {
            run: k.run.clone(),
            key: k.fingerprint(),
            host: "db1".into(),
            file: "/mnt/a b/iolab-crashcheck.dat".into(),
            record_bytes: 4096,
            file_bytes: 1 << 20,
            sync: "fdatasync".into(),
        };
        assert_eq!(Hello::parse(&h.line()), Some(h.clone()));
        let a = |seq, offset| Ack {
            seq,
            offset,
            checksum: seq as u32,
        };
        let texts = vec![
            h.line(),
            ack_line(&a(1, 0)),
            ack_line(&a(2, 4096)),
            ack_line(&a(3, 0)),
            "FAIL 4 0 fsync EIO".into(),
            "END 3".into(),
        ];
        let text = sealed(&k, &texts);
        assert!(text.lines().all(|l| split_mac(l).is_some()));
        assert!(text.lines().skip(1).all(is_report_line));
        let j = Journal::parse(&text, &k).unwrap();
        assert_eq!(j.acks.len(), 3);
        assert_eq!(j.failed, Some((4, 0, "fsync EIO".into())));
        assert_eq!(j.ended, Some(3));
        assert_eq!(j.last_per_offset(), vec![a(3, 0), a(2, 4096)]);
        // a torn last line is ignored; a bad line in the middle is not
        let mut torn = sealed(&k, &texts[..2]);
        torn.push_str(&k.seal(2, "ACK 2 4096 00000002")[..30]);
        assert_eq!(Journal::parse(&torn, &k).unwrap().acks.len(), 1);
        let bad = sealed(&k, &[h.line(), "ACK x".into(), ack_line(&a(1, 0))]);
        assert!(Journal::parse(&bad, &k).unwrap_err().starts_with("line 2"));
        assert!(Journal::parse("nonsense\n", &k).is_err());
        // a key file's line round-trips; the key is never in Debug
        let (back, file) = RunKey::parse_file(&k.file_line("/a b/f")).unwrap();
        assert_eq!((back, file.as_str()), (k.clone(), "/a b/f"));
        assert!(!format!("{k:?}").contains(&auth::hex(&k.key)));
    }

    #[test]
    fn a_journal_not_the_writers_is_refused() {
        let k = key(0xabc, 1);
        let hello = |k: &RunKey| Hello {
            run: k.run.clone(),
            key: k.fingerprint(),
            host: "h".into(),
            file: "/f".into(),
            record_bytes: 4096,
            file_bytes: 1 << 20,
            sync: "fsync".into(),
        };
        let texts = vec![hello(&k).line(), "ACK 1 0 0000abcd".into(), "END 1".into()];
        assert!(Journal::parse(&sealed(&k, &texts), &k).is_ok());
        // another run's journal, even a well-formed one
        let other = key(0xdef, 2);
        let e = Journal::parse(&sealed(&other, &[hello(&other).line()]), &k).unwrap_err();
        assert!(e.contains("not of run 0000000000000abc"), "{e}");
        // the same run id and fingerprint claimed by someone without the key
        let forger = RunKey {
            key: [9; auth::KEY_BYTES],
            ..k.clone()
        };
        let mut forged = sealed(&forger, &texts);
        forged = forged.replacen(&forger.fingerprint(), &k.fingerprint(), 1);
        assert!(Journal::parse(&forged, &k).unwrap_err().contains("forged"));
        // a forged END appended, lines swapped, a line without a tag
        let mut appended = sealed(&k, &texts[..2]);
        appended.push_str(&(forger.seal(2, "END 0") + "\n"));
        appended.push_str(&(k.seal(3, "ACK 2 4096 0000abcd") + "\n"));
        assert!(
            Journal::parse(&appended, &k)
                .unwrap_err()
                .starts_with("line 3")
        );
        let mut lines: Vec<String> = sealed(&k, &texts).lines().map(String::from).collect();
        lines.swap(1, 2);
        let swapped = lines.join("\n") + "\n";
        assert!(
            Journal::parse(&swapped, &k)
                .unwrap_err()
                .starts_with("line 2")
        );
        // an END that does not count the acknowledgements before it
        let short = sealed(&k, &[hello(&k).line(), "END 1".into()]);
        assert!(
            Journal::parse(&short, &k)
                .unwrap_err()
                .contains("END says 1")
        );
        let v1 = "HELLO iolab-crashcheck/1 run=0000000000000abc host=h bs=4096 size=1 sync=fsync file=/f\nEND 0\n";
        assert!(
            Journal::parse(v1, &k)
                .unwrap_err()
                .contains("unauthenticated")
        );
    }
}
