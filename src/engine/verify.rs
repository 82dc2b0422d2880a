//! `--verify` in the worker loops, the state file a verify run leaves in `--dir`, and
//! `iolab verify --dir` (re-reading a set against that state). docs/verify.md.
//!
//! Each thread keeps to its own range of the set (the op generator sees to it), so the
//! generation of each of its blocks is exact and kept in the thread's own array: no lock, no
//! shared map. Per write: one pass that fills the payload and one CRC-32C per verify block; per
//! read: one CRC-32C per block. No allocation, no system call.

use super::buf::AlignedBuf;
use super::opgen::Next;
use crate::error::{Error, Result};
use crate::measure::stats::ThreadVerify;
use crate::model::verify::{
    self as v, GEN_UNKNOWN_BIT, Header, Mismatch, STATE_FILE, StateHead, VerifyResult,
};
use crate::system::target::TargetDir;
use std::io::{Read, Write};
use std::path::Path;

/// What a verify phase starts from: the run id and every block's generation so far.
pub struct VerifySetup {
    pub run_id: u64,
    /// The verify block (the smallest size of the job).
    pub block: u64,
    pub gens: Vec<u32>,
}

/// The most writes one thread keeps waiting to be read back (32 bytes each).
pub const MAX_BACKLOG: u64 = 1 << 20;

/// fio's `verify_backlog=N` (`--verify-backlog N`): every N writes a thread issues, it reads
/// those N back (and checks them) before writing more; when its writes are done, what is left.
/// The pieces wait in an array made before the phase (N entries), so nothing is allocated per
/// I/O.
struct Backlog {
    /// The writes not yet read back, in the order issued: (file, offset, length, size index).
    pending: Vec<(u32, u64, u64, u8)>,
    /// While reading back: the next of `pending` to read.
    next: usize,
    draining: bool,
}

/// One thread's verifier.
pub struct Verifier {
    run_id: u64,
    thread: u32,
    block: u64,
    fsize: u64,
    /// Where the measured range starts in each file (`--offset`): block 0 of a file is there.
    origin: u64,
    first: u64,
    gens: Vec<u32>,
    /// The thread's base pattern (one verify block), XORed with each write's key.
    base: AlignedBuf,
    result: VerifyResult,
    backlog: Option<Backlog>,
}

impl Verifier {
    /// For the blocks of `range` (bytes of the set); generations from `setup`.
    pub fn new(setup: &VerifySetup, thread: u32, fsize: u64, range: (u64, u64), seed: u64) -> Self {
        let first = range.0 / setup.block;
        let last = (range.1 / setup.block).min(setup.gens.len() as u64);
        let gens = setup.gens[first.min(last) as usize..last as usize].to_vec();
        Verifier {
            run_id: setup.run_id,
            thread,
            block: setup.block,
            fsize,
            origin: 0,
            first,
            gens,
            base: AlignedBuf::new(setup.block as usize, 64, seed ^ 0x5652_4659 ^ thread as u64),
            result: VerifyResult::default(),
            backlog: None,
        }
    }

    /// The files' blocks start at `origin` (`--offset` of the set): the offsets given to
    /// [`Verifier::stamp`] and [`Verifier::check`] are the files' own.
    pub fn with_origin(mut self, origin: u64) -> Self {
        self.origin = origin;
        self
    }

    /// `--verify-backlog N` (0: none, the blocks are read back by a later read mode). At most
    /// [`MAX_BACKLOG`] or the thread's blocks wait (a larger N reads back as often as that: the
    /// same reads, earlier).
    pub fn with_backlog(mut self, n: u64) -> Self {
        let cap = n.min(MAX_BACKLOG).min(self.gens.len().max(1) as u64);
        self.backlog = (n > 0).then(|| Backlog {
            pending: Vec::with_capacity(cap as usize),
            next: 0,
            draining: false,
        });
        self
    }

    /// A write was issued at (`file`, `off`, `len`) (size index `si`): with a backlog, it waits
    /// to be read back; the Nth starts the read-back.
    #[inline]
    pub fn wrote(&mut self, file: u32, off: u64, len: u64, si: u8) {
        if let Some(b) = &mut self.backlog {
            if b.pending.len() < b.pending.capacity() {
                b.pending.push((file, off, len, si));
            }
            b.draining |= b.pending.len() == b.pending.capacity();
        }
    }

    /// Writes wait to be read back (the thread goes on until they are, after its quota).
    #[inline]
    pub fn backlog_left(&self) -> bool {
        self.backlog
            .as_ref()
            .is_some_and(|b| b.next < b.pending.len())
    }

    /// The next read-back of the backlog, when one is due: N writes were issued since the last
    /// read-back, or `writes_done` (the thread's quota is paid) and some are left. None: go on
    /// with the job's own operations (the backlog emptied, ready for the next N).
    #[inline]
    pub fn back(&mut self, writes_done: bool) -> Option<Next> {
        let b = self.backlog.as_mut()?;
        b.draining |= writes_done;
        if !b.draining {
            return None;
        }
        if let Some(&(file, off, len, si)) = b.pending.get(b.next) {
            b.next += 1;
            return Some(Next::Io {
                kind: crate::measure::stats::OpKind::Read,
                file,
                off,
                len,
                si,
            });
        }
        b.pending.clear();
        b.next = 0;
        b.draining = false;
        None
    }

    #[inline]
    fn index(&self, file: u32, off: u64) -> Option<usize> {
        let b = (file as u64 * self.fsize + off.checked_sub(self.origin)?) / self.block;
        b.checked_sub(self.first)
            .map(|i| i as usize)
            .filter(|&i| i < self.gens.len())
    }

    #[inline]
    fn header(&self, file: u32, off: u64, generation: u32) -> Header {
        Header {
            run_id: self.run_id,
            file,
            offset_bytes: off,
            generation: generation as u64,
            thread: self.thread,
        }
    }

    /// Fills `buf` for a write at (`file`, `off`): each verify block gets its next generation.
    #[inline]
    pub fn stamp(&mut self, buf: &mut [u8], file: u32, off: u64) {
        let bs = self.block as usize;
        // SAFETY: base is a live allocation of `block` bytes owned by self.
        let base = unsafe { std::slice::from_raw_parts(self.base.ptr(), bs) };
        for (i, blk) in buf.chunks_exact_mut(bs).enumerate() {
            let o = off + (i * bs) as u64;
            let Some(ix) = self.index(file, o) else {
                continue;
            };
            let g = (self.gens[ix] & !GEN_UNKNOWN_BIT) + 1;
            self.gens[ix] = g;
            let h = self.header(file, o, g);
            v::stamp(blk, base, &h);
        }
    }

    /// A write at (`file`, `off`) of `len` bytes failed: its blocks are not checked until written
    /// again.
    #[inline]
    pub fn failed(&mut self, file: u32, off: u64, len: u64) {
        let mut o = off;
        while o < off + len {
            if let Some(ix) = self.index(file, o) {
                self.gens[ix] |= GEN_UNKNOWN_BIT;
            }
            o += self.block;
        }
    }

    /// Checks the blocks of a read at (`file`, `off`) that a verify write reached.
    #[inline]
    pub fn check(&mut self, buf: &[u8], file: u32, off: u64) {
        let bs = self.block as usize;
        for (i, blk) in buf.chunks_exact(bs).enumerate() {
            let o = off + (i * bs) as u64;
            let Some(ix) = self.index(file, o) else {
                continue;
            };
            let g = self.gens[ix];
            if g == 0 || g & GEN_UNKNOWN_BIT != 0 {
                continue;
            }
            self.result.checked += 1;
            let exp = self.header(file, o, g);
            if let Err((kind, found)) = v::check(blk, &exp) {
                self.result.record(Mismatch {
                    file,
                    offset_bytes: o,
                    kind,
                    expected: Header {
                        thread: self.thread,
                        ..exp
                    },
                    found,
                });
            }
        }
    }

    /// What the thread hands back with its statistics.
    pub fn finish(self) -> ThreadVerify {
        ThreadVerify {
            result: self.result,
            ranges: vec![(self.first, self.gens)],
        }
    }
}

/// The state file's path in `dir`.
pub fn state_path(dir: &Path) -> std::path::PathBuf {
    dir.join(STATE_FILE)
}

/// Lays the ranges of a phase's threads over the generations it started from.
pub fn apply_ranges(gens: &mut [u32], ranges: &[(u64, Vec<u32>)]) {
    for (first, g) in ranges {
        let at = *first as usize;
        let end = (at + g.len()).min(gens.len());
        if at < end {
            gens[at..end].copy_from_slice(&g[..end - at]);
        }
    }
}

/// Writes the state file whole (a temporary file of an unpredictable name made with O_EXCL,
/// synced, renamed, directory synced), through the directory's handle (system::target); a state
/// name that holds what iolab did not make (a symbolic link, a fifo, a directory) is refused.
pub fn save_state(dir: &Path, head: &StateHead, gens: &[u32]) -> std::io::Result<()> {
    let t = TargetDir::of(dir)?;
    check_state_in(&t).map_err(|e| std::io::Error::other(e.msg))?;
    let mut body = serde_json::to_vec(head).map_err(std::io::Error::other)?;
    body.push(b'\n');
    body.reserve(gens.len() * 4);
    for g in gens {
        body.extend_from_slice(&g.to_le_bytes());
    }
    let (mut f, tmp) = t.create_temp(&format!("{STATE_FILE}."))?;
    let r = f
        .write_all(&body)
        .and_then(|_| f.sync_all())
        .and_then(|_| t.rename(&tmp, STATE_FILE));
    if r.is_err() {
        t.remove(&tmp, true);
    }
    r?;
    // the directory entry too, where the filesystem can (some FUSE filesystems cannot)
    let _ = t.sync();
    Ok(())
}

/// Refuses (exit 2) a state name (`.iolab-verify`) that holds what iolab did not make: a
/// symbolic link, a fifo, a directory.
pub fn check_state_in(t: &TargetDir) -> Result<()> {
    t.entry(STATE_FILE).map(|_| ())
}

/// [`check_state_in`] for a directory.
pub fn check_state(dir: &Path) -> Result<()> {
    let t =
        TargetDir::of(dir).map_err(|e| Error::usage(format!("--dir {}: {e}", dir.display())))?;
    check_state_in(&t)
}

/// Removes a state file (a run that writes without --verify makes it wrong): a regular file
/// only, never a link planted in its place.
pub fn remove_state(dir: &Path) {
    if let Ok(t) = TargetDir::of(dir) {
        remove_state_in(&t);
    }
}

/// [`remove_state`] through the directory's handle.
pub fn remove_state_in(t: &TargetDir) {
    t.remove(STATE_FILE, false);
}

/// Reads the state file of `dir`.
pub fn load_state(dir: &Path) -> Result<(StateHead, Vec<u32>)> {
    let p = state_path(dir);
    let t =
        TargetDir::of(dir).map_err(|e| Error::usage(format!("--dir {}: {e}", dir.display())))?;
    check_state_in(&t)?;
    let mut body = Vec::new();
    match t.open_existing(STATE_FILE, false, 0) {
        Ok(mut f) => f
            .read_to_end(&mut body)
            .map(|_| ())
            .map_err(|e| Error::failed(format!("{}: {e}", p.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::usage(format!(
                "--dir {}: no verify state ({STATE_FILE}): this set was not written by `iolab run --verify --keep` (or a later run without --verify rewrote it); nothing to verify",
                dir.display()
            )));
        }
        Err(e) => return Err(Error::failed(format!("{}: {e}", p.display()))),
    }
    let bad = |why: &str| {
        Error::usage(format!(
            "{}: not an iolab verify state file ({why})",
            p.display()
        ))
    };
    let nl = body
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("no header line"))?;
    let head: StateHead =
        serde_json::from_slice(&body[..nl]).map_err(|e| bad(&format!("header: {e}")))?;
    if head.schema == crate::model::schema::VERIFY_STATE_V1 {
        return Err(Error::usage(format!(
            "--dir {}: this set was written by an older iolab (verify format 1, CRC-32 block headers); this iolab writes and checks format 2 (CRC-32C) and cannot verify it: write the set again with `iolab run --verify --keep`",
            dir.display()
        )));
    }
    if head.schema != crate::model::schema::VERIFY_STATE {
        return Err(bad(&format!("schema {}", head.schema)));
    }
    let rest = &body[nl + 1..];
    let blocks = head.files.len() as u64 * head.file_size_bytes / head.block_bytes.max(1);
    if head.block_bytes < v::HEADER_LEN as u64 || rest.len() as u64 != blocks * 4 {
        return Err(bad("truncated"));
    }
    let gens = rest
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    Ok((head, gens))
}

/// `iolab verify --dir D`: reads every block a verify write reached (dropped from the page cache
/// first, so what the storage holds is read) and checks it. Returns the result and how many
/// blocks were not written by a verify run.
pub fn verify_set(dir: &Path) -> Result<(StateHead, VerifyResult, u64)> {
    use std::os::fd::AsRawFd;
    let (head, gens) = load_state(dir)?;
    let t =
        TargetDir::of(dir).map_err(|e| Error::usage(format!("--dir {}: {e}", dir.display())))?;
    let bs = head.block_bytes as usize;
    let per_file = (head.file_size_bytes / head.block_bytes) as usize;
    let mut res = VerifyResult::default();
    let mut unwritten = 0u64;
    let chunk_blocks = (1usize << 20).div_ceil(bs).max(1);
    let mut buf = vec![0u8; chunk_blocks * bs];
    for (fi, name) in head.files.iter().enumerate() {
        let p = dir.join(name);
        t.entry(name)?;
        let mut f = t
            .open_existing(name, false, 0)
            .map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
        // SAFETY: fadvise on our own descriptor; a failure only leaves pages cached.
        unsafe {
            libc::fdatasync(f.as_raw_fd());
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
        // the verify blocks start at the set's --offset
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(head.offset_bytes))
            .map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
        let fgens = &gens[fi * per_file..(fi + 1) * per_file];
        let mut b = 0usize;
        while b < per_file {
            let n = chunk_blocks.min(per_file - b);
            let want = &mut buf[..n * bs];
            let mut got = 0;
            while got < want.len() {
                match f.read(&mut want[got..]) {
                    Ok(0) => break,
                    Ok(k) => got += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(Error::failed(format!(
                            "{}: reading at {}: {e}",
                            p.display(),
                            head.offset_bytes + (b * bs + got) as u64
                        )));
                    }
                }
            }
            want[got..].fill(0); // a short file: its missing blocks are zeros (stale)
            for (i, blk) in want.chunks_exact(bs).enumerate() {
                let g = fgens[b + i];
                if g == 0 || g & GEN_UNKNOWN_BIT != 0 {
                    unwritten += 1;
                    continue;
                }
                res.checked += 1;
                let exp = Header {
                    run_id: head.run_id,
                    file: fi as u32,
                    offset_bytes: head.offset_bytes + ((b + i) * bs) as u64,
                    generation: g as u64,
                    thread: 0,
                };
                if let Err((kind, found)) = v::check(blk, &exp) {
                    res.record(Mismatch {
                        file: fi as u32,
                        offset_bytes: exp.offset_bytes,
                        kind,
                        expected: exp,
                        found,
                    });
                }
            }
            b += n;
        }
    }
    Ok((head, res, unwritten))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::OpKind;

    fn verifier(backlog: u64) -> Verifier {
        let setup = VerifySetup {
            run_id: 1,
            block: 4096,
            gens: vec![0; 64],
        };
        Verifier::new(&setup, 0, 64 * 4096, (0, 64 * 4096), 7).with_backlog(backlog)
    }

    fn read_at(n: Option<Next>) -> Option<u64> {
        match n? {
            Next::Io {
                kind: OpKind::Read,
                off,
                len: 4096,
                ..
            } => Some(off),
            other => panic!("not a read-back: {other:?}"),
        }
    }

    /// verify_backlog=4: nothing is due before the 4th write; then those 4 are read back in the
    /// order written, then the job goes on; after its last write, what is left.
    #[test]
    fn a_backlog_reads_back_every_n_writes_in_order_and_the_rest_at_the_end() {
        let mut v = verifier(4);
        for (i, off) in [3u64, 0, 2].iter().enumerate() {
            v.wrote(0, off * 4096, 4096, 0);
            assert_eq!(read_at(v.back(false)), None, "write {i}");
        }
        v.wrote(0, 9 * 4096, 4096, 0);
        assert!(v.backlog_left());
        let back: Vec<u64> = std::iter::from_fn(|| read_at(v.back(false))).collect();
        assert_eq!(back, [3 * 4096, 0, 2 * 4096, 9 * 4096]);
        assert!(!v.backlog_left());
        v.wrote(0, 5 * 4096, 4096, 0);
        assert_eq!(read_at(v.back(false)), None, "one write: not due");
        assert_eq!(
            read_at(v.back(true)),
            Some(5 * 4096),
            "writes done: the rest"
        );
        assert_eq!(read_at(v.back(true)), None);
        assert!(!v.backlog_left());
        // a backlog larger than the thread's 64 blocks reads back every 64 writes
        let mut big = verifier(1 << 40);
        for b in 0..64 {
            assert_eq!(read_at(big.back(false)), None, "write {b}");
            big.wrote(0, b * 4096, 4096, 0);
        }
        assert_eq!(std::iter::from_fn(|| read_at(big.back(false))).count(), 64);
        // without a backlog nothing is ever due
        let mut none = verifier(0);
        none.wrote(0, 0, 4096, 0);
        assert!(!none.backlog_left());
        assert_eq!(read_at(none.back(true)), None);
    }
}
