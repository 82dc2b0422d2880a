//! IOzone automatic mode (`iozone -a`), re-implemented: [`iozone`].
//!
//! For every file size from `min_file` to `max_file` and every record size from `min_rec` to
//! `max_rec` (both doubling), with `record <= file`, one temporary file in `dir` goes through the
//! tests below in this order, each moving the whole file once (`file / record` records):
//!
//! | column | what |
//! |---|---|
//! | write | a new file (the old one is unlinked first), records written sequentially |
//! | rewrite | the same file written again, sequentially |
//! | read | read sequentially, after evicting the file from the page cache |
//! | reread | read again right away (served by the page cache: that is the point) |
//! | random read | every record read once, in a shuffled order (fixed seed), after eviction |
//! | random write | every record written once, in another shuffled order |
//! | bkwd read | records read from the last to the first, after eviction |
//! | record rewrite | the first record written `file / record` times |
//! | stride read | records 0, 17, 34, … then 1, 18, 35, … until each was read once (a stride of 17 records, iozone's `-j` default), after eviction |
//! | fwrite, frewrite | write, rewrite through a 64 KiB [`BufWriter`] (iozone's stdio `fwrite`) |
//! | fread, freread | read (after eviction), read again through a 64 KiB [`BufReader`] |
//!
//! "Eviction" is `fdatasync` + `posix_fadvise(DONTNEED)` before the timed part. Reads and writes
//! use `pread`/`pwrite` at explicit offsets (the kernel sees the same sequential stream as with
//! `read`/`write`). Opening the file is not timed. A result is in **KB/s with KB = 1024 bytes**
//! (what iozone prints as "kBytes/sec"): bytes moved / 1024 / seconds, rounded.
//!
//! Like iozone without `-e`, a write test ends when the last record was handed to the kernel: the
//! flush to stable storage is *not* timed. With `include_flush` (iozone `-e`) each write test ends
//! with an `fsync` inside the timing. The stdio writers always flush their buffer to the kernel
//! inside the timing.
//!
//! Like iozone `-a`, records smaller than 64 KiB are skipped for files larger than 16 MiB (iozone's
//! `CROSSOVER`, so from the 32 MiB file of the doubling series on): small records on large files
//! take long and say little. `all_records` turns that off (iozone `-z`).
//!
//! With `direct` the file is opened with `O_DIRECT` (aligned buffers, no page cache, no eviction);
//! the four stdio tests are then not run (`None`), as buffered streams and `O_DIRECT` do not mix.

use super::{Cleanup, check_dir, check_space, evict, shuffled, stamp, unique_name};
use crate::engine::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::model::suite::{IozoneOpts, IozoneResult, IozoneRow};
use crate::model::units::Bytes;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

pub const IOZONE_TESTS: [&str; 13] = [
    "write",
    "rewrite",
    "read",
    "reread",
    "random_read",
    "random_write",
    "bkwd_read",
    "record_rewrite",
    "stride_read",
    "fwrite",
    "frewrite",
    "fread",
    "freread",
];

/// The names iozone gives the same tests in its spreadsheet output (`-R` / `-b`), each followed
/// by " report" there.
pub const IOZONE_REPORTS: [&str; 13] = [
    "Writer",
    "Re-writer",
    "Reader",
    "Re-Reader",
    "Random read",
    "Random write",
    "Backward read",
    "Record rewrite",
    "Stride read",
    "Fwrite",
    "Re-Fwrite",
    "Fread",
    "Re-Fread",
];

/// Stride of the stride-read test, in records (iozone `-j` default).
pub const IOZONE_STRIDE: u64 = 17;
/// Files larger than this skip records smaller than [`IOZONE_LARGE_REC`] (iozone `CROSSOVER`).
pub const IOZONE_CROSSOVER: u64 = 16 << 20;
/// The smallest record used for files past [`IOZONE_CROSSOVER`] (iozone `LARGE_REC`).
pub const IOZONE_LARGE_REC: u64 = 64 << 10;
/// Buffer of the stdio tests (fwrite, frewrite, fread, freread).
const STDIO_BUF: usize = 64 << 10;
/// Seed of the random-read and random-write orders.
const IOZONE_SEED: u64 = 0x1020_2E5E_ED00;

const W: usize = 0;
const RW: usize = 1;
const R: usize = 2;
const RR: usize = 3;
const RND_R: usize = 4;
const RND_W: usize = 5;
const BKWD: usize = 6;
const REC_RW: usize = 7;
const STRIDE_R: usize = 8;
const FW: usize = 9;
const FRW: usize = 10;
const FR: usize = 11;
const FRR: usize = 12;

/// The (file size, record size) pairs [`iozone`] runs, in order, in bytes: file sizes doubling
/// from `min_file` to `max_file`, for each the records doubling from `min_rec` to `max_rec` that
/// are no larger than the file, without records under 64 KiB for files over 16 MiB unless
/// `all_records`.
pub fn iozone_plan(o: &IozoneOpts) -> Vec<(u64, u64)> {
    let doubling = |from: u64, to: u64| {
        std::iter::successors((from > 0).then_some(from), |x| x.checked_mul(2))
            .take_while(move |&x| x <= to)
    };
    let mut v = Vec::new();
    for f in doubling(o.min_file, o.max_file) {
        for r in doubling(o.min_rec, o.max_rec.min(f)) {
            if o.all_records || f <= IOZONE_CROSSOVER || r >= IOZONE_LARGE_REC {
                v.push((f, r));
            }
        }
    }
    v
}

fn iozone_validate(o: &IozoneOpts) -> Result<()> {
    check_dir(&o.dir)?;
    for (flag, v) in [
        ("--min-file", o.min_file),
        ("--max-file", o.max_file),
        ("--min-rec", o.min_rec),
        ("--max-rec", o.max_rec),
    ] {
        if v == 0 || !v.is_multiple_of(1024) {
            return Err(Error::usage(format!(
                "{flag} must be a positive multiple of 1 KiB (iozone works in kB), got {v} bytes"
            )));
        }
    }
    if o.min_file > o.max_file {
        return Err(Error::usage(format!(
            "--min-file {} is larger than --max-file {}",
            Bytes(o.min_file),
            Bytes(o.max_file)
        )));
    }
    if o.min_rec > o.max_rec {
        return Err(Error::usage(format!(
            "--min-rec {} is larger than --max-rec {}",
            Bytes(o.min_rec),
            Bytes(o.max_rec)
        )));
    }
    if iozone_plan(o).is_empty() {
        return Err(Error::usage(format!(
            "--min-rec {} is larger than every file size (up to --max-file {}): nothing to run",
            Bytes(o.min_rec),
            Bytes(o.max_file)
        )));
    }
    Ok(())
}

/// How a test opens the file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    /// Unlink, then create a new file.
    New,
    /// The existing file, for writing.
    Write,
    /// The existing file, for reading.
    Read,
}

fn open(path: &Path, how: Open, direct: bool) -> io::Result<File> {
    if how == Open::New {
        match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let mut oo = OpenOptions::new();
    oo.read(true);
    match how {
        Open::New => oo.write(true).create_new(true),
        Open::Write => oo.write(true),
        Open::Read => &mut oo,
    };
    // never through a symbolic link planted at the suite's file name
    oo.custom_flags(libc::O_NOFOLLOW | if direct { libc::O_DIRECT } else { 0 });
    oo.open(path)
}

/// Moves one record per offset with pread/pwrite; the elapsed time, or None when stopped.
fn pass<const WRITE: bool, I: Iterator<Item = u64>>(
    f: &File,
    buf: &mut [u8],
    offsets: I,
    flush: bool,
    stop: &AtomicBool,
) -> io::Result<Option<Duration>> {
    let t0 = Instant::now();
    for (i, off) in offsets.enumerate() {
        if stop.load(Relaxed) {
            return Ok(None);
        }
        if WRITE {
            stamp(buf, off ^ ((i as u64) << 40));
            f.write_all_at(buf, off)?;
        } else {
            f.read_exact_at(buf, off)?;
        }
    }
    if WRITE && flush {
        f.sync_all()?;
    }
    Ok(Some(t0.elapsed()))
}

/// Moves `n` records sequentially through a 64 KiB stdio-like buffer.
fn stdio_pass<const WRITE: bool>(
    f: &File,
    buf: &mut [u8],
    n: u64,
    flush: bool,
    stop: &AtomicBool,
) -> io::Result<Option<Duration>> {
    if WRITE {
        let mut w = BufWriter::with_capacity(STDIO_BUF, f);
        let t0 = Instant::now();
        for i in 0..n {
            if stop.load(Relaxed) {
                return Ok(None);
            }
            stamp(buf, i);
            w.write_all(buf)?;
        }
        w.flush()?;
        if flush {
            f.sync_all()?;
        }
        Ok(Some(t0.elapsed()))
    } else {
        let mut r = BufReader::with_capacity(STDIO_BUF, f);
        let t0 = Instant::now();
        for _ in 0..n {
            if stop.load(Relaxed) {
                return Ok(None);
            }
            r.read_exact(buf)?;
        }
        Ok(Some(t0.elapsed()))
    }
}

/// Opens the file as `how`, evicts it when `evict_first`, then runs one pread/pwrite pass.
#[allow(clippy::too_many_arguments)]
fn io_test<const WRITE: bool, I: Iterator<Item = u64>>(
    path: &Path,
    how: Open,
    direct: bool,
    evict_first: bool,
    buf: &mut [u8],
    offsets: I,
    flush: bool,
    stop: &AtomicBool,
) -> io::Result<Option<Duration>> {
    let f = open(path, how, direct)?;
    if evict_first {
        evict(&f)?;
    }
    pass::<WRITE, I>(&f, buf, offsets, flush, stop)
}

fn stdio_test<const WRITE: bool>(
    path: &Path,
    how: Open,
    evict_first: bool,
    buf: &mut [u8],
    n: u64,
    flush: bool,
    stop: &AtomicBool,
) -> io::Result<Option<Duration>> {
    let f = open(path, how, false)?;
    if evict_first {
        evict(&f)?;
    }
    stdio_pass::<WRITE>(&f, buf, n, flush, stop)
}

/// KB/s (KB = 1024 bytes), rounded.
fn kb_per_sec(bytes: u64, d: Duration) -> u64 {
    (bytes as f64 / 1024.0 / d.as_secs_f64().max(1e-9)).round() as u64
}

/// Record offsets of the stride read: 0, s, 2s, … then 1, 1+s, … (s = 17 records), each once.
fn stride_offsets(n: u64, rec: u64) -> impl Iterator<Item = u64> {
    (0..IOZONE_STRIDE.min(n)).flat_map(move |start| {
        (start..n)
            .step_by(IOZONE_STRIDE as usize)
            .map(move |i| i * rec)
    })
}

/// Bookkeeping shared by the tests of a run.
struct IozoneRun<'a> {
    path: &'a Path,
    dir: &'a Path,
    direct: bool,
    flush: bool,
    stop: &'a AtomicBool,
    done: u64,
    total: u64,
    progress: &'a dyn Fn(u64, u64),
}

impl IozoneRun<'_> {
    /// Stores one test's result; false when the test was stopped.
    fn record(
        &mut self,
        vals: &mut [Option<u64>],
        test: usize,
        (file, rec, bytes): (u64, u64, u64),
        r: io::Result<Option<Duration>>,
    ) -> Result<bool> {
        match r {
            Ok(Some(d)) => {
                vals[test] = Some(kb_per_sec(bytes, d));
                self.done += bytes;
                (self.progress)(self.done, self.total);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(Error::failed(format!(
                "iozone: the {} test ({} file, {} records) in --dir {} failed: {e}",
                IOZONE_TESTS[test],
                Bytes(file),
                Bytes(rec),
                self.dir.display()
            ))),
        }
    }

    /// All tests of one pair; None when stopped.
    fn pair(&mut self, buf: &mut [u8], file: u64, rec: u64) -> Result<Option<Vec<Option<u64>>>> {
        let n = file / rec;
        let bytes = n * rec;
        let what = (file, rec, bytes);
        let b = &mut buf[..rec as usize];
        let (p, d, fl, s) = (self.path, self.direct, self.flush, self.stop);
        // Evict before the cold reads; with O_DIRECT there is nothing cached to evict.
        let ev = !d;
        let seq = || (0..n).map(move |i| i * rec);
        let rnd_r = shuffled(n, IOZONE_SEED ^ file ^ rec.rotate_left(32));
        let rnd_w = shuffled(n, !IOZONE_SEED ^ file ^ rec.rotate_left(32));
        let mut v = vec![None; IOZONE_TESTS.len()];

        let t = io_test::<true, _>(p, Open::New, d, false, b, seq(), fl, s);
        if !self.record(&mut v, W, what, t)? {
            return Ok(None);
        }
        let t = io_test::<true, _>(p, Open::Write, d, false, b, seq(), fl, s);
        if !self.record(&mut v, RW, what, t)? {
            return Ok(None);
        }
        let t = io_test::<false, _>(p, Open::Read, d, ev, b, seq(), false, s);
        if !self.record(&mut v, R, what, t)? {
            return Ok(None);
        }
        let t = io_test::<false, _>(p, Open::Read, d, false, b, seq(), false, s);
        if !self.record(&mut v, RR, what, t)? {
            return Ok(None);
        }
        let offs = rnd_r.iter().map(|&i| i * rec);
        let t = io_test::<false, _>(p, Open::Read, d, ev, b, offs, false, s);
        if !self.record(&mut v, RND_R, what, t)? {
            return Ok(None);
        }
        let offs = rnd_w.iter().map(|&i| i * rec);
        let t = io_test::<true, _>(p, Open::Write, d, false, b, offs, fl, s);
        if !self.record(&mut v, RND_W, what, t)? {
            return Ok(None);
        }
        let offs = (0..n).rev().map(|i| i * rec);
        let t = io_test::<false, _>(p, Open::Read, d, ev, b, offs, false, s);
        if !self.record(&mut v, BKWD, what, t)? {
            return Ok(None);
        }
        let offs = std::iter::repeat_n(0, n as usize);
        let t = io_test::<true, _>(p, Open::Write, d, false, b, offs, fl, s);
        if !self.record(&mut v, REC_RW, what, t)? {
            return Ok(None);
        }
        let t = io_test::<false, _>(p, Open::Read, d, ev, b, stride_offsets(n, rec), false, s);
        if !self.record(&mut v, STRIDE_R, what, t)? {
            return Ok(None);
        }
        if d {
            return Ok(Some(v));
        }
        let t = stdio_test::<true>(p, Open::New, false, b, n, fl, s);
        if !self.record(&mut v, FW, what, t)? {
            return Ok(None);
        }
        let t = stdio_test::<true>(p, Open::Write, false, b, n, fl, s);
        if !self.record(&mut v, FRW, what, t)? {
            return Ok(None);
        }
        let t = stdio_test::<false>(p, Open::Read, true, b, n, false, s);
        if !self.record(&mut v, FR, what, t)? {
            return Ok(None);
        }
        let t = stdio_test::<false>(p, Open::Read, false, b, n, false, s);
        if !self.record(&mut v, FRR, what, t)? {
            return Ok(None);
        }
        Ok(Some(v))
    }
}

/// Runs IOzone's automatic mode (see the module documentation). `progress(done, total)` is called
/// after each test with the bytes moved so far and in all.
pub fn iozone(
    o: &IozoneOpts,
    stop: &AtomicBool,
    progress: &dyn Fn(u64, u64),
) -> Result<IozoneResult> {
    iozone_validate(o)?;
    let plan = iozone_plan(o);
    let largest_file = plan.iter().map(|p| p.0).max().unwrap_or(0);
    let largest_rec = plan.iter().map(|p| p.1).max().unwrap_or(0);
    check_space(&o.dir, largest_file, "--max-file")?;
    let path = o.dir.join(unique_name("iolab-iozone") + ".tmp");
    let _cleanup = Cleanup {
        files: vec![path.clone()],
        dirs: vec![],
    };
    // Nothing is measured before the file can be created (with O_DIRECT when asked).
    if let Err(e) = open(&path, Open::New, o.direct) {
        return Err(if o.direct && e.raw_os_error() == Some(libc::EINVAL) {
            Error::usage(format!(
                "--direct: the filesystem of --dir {} ({}) refuses O_DIRECT",
                o.dir.display(),
                crate::system::fsinfo::fs_type(&o.dir)
            ))
        } else {
            Error::usage(format!(
                "--dir {}: cannot create a file: {e}",
                o.dir.display()
            ))
        });
    }
    let mut align = 4096u64;
    if o.direct {
        let da = crate::system::fsinfo::dio_align(&crate::system::env::Roots::live().sys, &path);
        align = da.mem.max(da.offset).max(512);
        if !o.min_rec.is_multiple_of(da.offset) {
            return Err(Error::usage(format!(
                "--min-rec {}: with --direct, records must be multiples of {} (the O_DIRECT alignment in --dir {})",
                Bytes(o.min_rec),
                Bytes(da.offset),
                o.dir.display()
            )));
        }
    }
    let tests = if o.direct {
        9
    } else {
        IOZONE_TESTS.len() as u64
    };
    let total = plan.iter().map(|&(f, r)| f / r * r * tests).sum();
    let mut buf = AlignedBuf::new(largest_rec as usize, align as usize, 0x10_20_0e);
    let mut run = IozoneRun {
        path: &path,
        dir: &o.dir,
        direct: o.direct,
        flush: o.include_flush,
        stop,
        done: 0,
        total,
        progress,
    };
    progress(0, total);
    let mut res = IozoneResult {
        tests: IOZONE_TESTS.iter().map(|s| s.to_string()).collect(),
        rows: Vec::with_capacity(plan.len()),
        direct: o.direct,
        include_flush: o.include_flush,
        interrupted: false,
    };
    for (file, rec) in plan {
        if stop.load(Relaxed) {
            res.interrupted = true;
            break;
        }
        match run.pair(buf.bytes_mut(), file, rec)? {
            Some(v) => res.rows.push(IozoneRow {
                file_kb: file / 1024,
                reclen_kb: rec / 1024,
                kb_per_sec: v,
            }),
            None => {
                res.interrupted = true;
                break;
            }
        }
    }
    Ok(res)
}

// ---------------------------------------------------------------------------------------------
// Bonnie++
// ---------------------------------------------------------------------------------------------

impl Default for IozoneOpts {
    fn default() -> Self {
        IozoneOpts {
            dir: PathBuf::from("."),
            min_file: 64 << 10,
            max_file: 512 << 20,
            min_rec: 4 << 10,
            max_rec: 16 << 20,
            direct: false,
            include_flush: false,
            all_records: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_visits_every_record_once() {
        for n in [1u64, 5, 17, 18, 64, 100] {
            let mut v: Vec<u64> = stride_offsets(n, 4096).map(|o| o / 4096).collect();
            if n > 17 {
                assert_eq!(&v[..2], &[0, 17]);
            }
            v.sort();
            assert_eq!(v, (0..n).collect::<Vec<_>>(), "n={n}");
        }
    }
}
