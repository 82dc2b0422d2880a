//! Two classic file-system benchmark suites, re-implemented so their numbers can be produced (and
//! read) the way their users know them: IOzone's automatic mode (`iozone -a`) and Bonnie++.
//!
//! # IOzone automatic mode ([`iozone`])
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
//!
//! # Bonnie++ ([`bonnie`])
//!
//! One file of `size` bytes, in `chunk`-sized pieces:
//!
//! * **Sequential Output, Per Chr**: the first [`BONNIE_CHAR_IO_BYTES`] (3 MiB) of the file, or
//!   all of a smaller one, written one byte per `write(2)`, as bonnie++ 2.00 does (its "putc"
//!   is `write(fd, &c, 1)`: CPU-bound, a system call per byte).
//! * **Block**: the whole file written anew, `chunk` bytes per `write`.
//! * **Rewrite**: each chunk read, changed, the position moved back (`lseek`), written.
//! * **Sequential Input, Per Chr**: the same bytes read one byte per `read(2)` (bonnie++'s
//!   "getc").
//! * **Block**: read `chunk` bytes per `read`.
//! * **Random Seeks**: 3 threads (bonnie++ uses 3 processes) together do `seeks` reads of a random
//!   chunk; one read in ten is followed by writing the chunk back changed, like bonnie++.
//!
//! Like bonnie++, a `size` below twice the RAM is refused (the page cache would hold the file)
//! unless `force` is set, which runs it with a warning in the result. Unlike bonnie++, which
//! relies on `size` >= 2 × RAM, the file is evicted from the page cache
//! (fdatasync + `posix_fadvise(DONTNEED)`, untimed) before Rewrite, each Sequential Input test and
//! Random Seeks, so a smaller `size` still reads from the device. Writes are not flushed (as in
//! bonnie++): with a small `size` the output tests measure the page cache.
//!
//! Then in a new subdirectory, with `files × 1024` empty files: **Sequential Create** (create the
//! files in name order), **Read** (stat them in name order, bonnie++'s "Read" of empty files),
//! **Delete** (in name order), and **Random Create / Read / Delete** (each in its own random order).
//!
//! Each test reports: the rate (KiB/s = "K/sec" for the data tests, operations per second for
//! seeks and files), **%CP**: the process's user + system CPU time during the test (getrusage) /
//! wall time × 100, and the **latency**: the longest single operation, like bonnie++ 1.9x (for the
//! per-character tests one operation is one chunk's worth of characters). A test that took less
//! than 500 ms is "too fast to measure": its rate and %CP are `None`, printed `+++++` / `+++`
//! like bonnie++; its latency is still reported.
//!
//! Both suites remove every file and directory they created, also after an error or a stop. When
//! `stop` is set they return `Ok` with `interrupted: true` and the results measured so far.

use crate::engine::buf::AlignedBuf;
use crate::engine::fileset::WriteBack;
use crate::error::{Error, Result};
pub use crate::model::suite::*;
use crate::model::units::{Bytes, human_bytes};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

/// A generator whose output is fixed by its definition (SplitMix64), so shuffles and seek offsets
/// are the same for the same seed on every machine and version.
struct SplitMix(rand_xoshiro::SplitMix64);

impl SplitMix {
    fn new(seed: u64) -> SplitMix {
        use rand::SeedableRng;
        SplitMix(rand_xoshiro::SplitMix64::seed_from_u64(seed))
    }
    /// Uniform in `0..n` (`n` > 0), by multiply-shift.
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        use rand::Rng;
        ((self.0.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// `0..n` in a random order (Fisher-Yates). Built before a timed loop, never inside one.
fn shuffled(n: u64, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    let mut rng = SplitMix::new(seed);
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

/// Writes the file's dirty pages back and drops its pages from the page cache.
fn evict(f: &File) -> io::Result<()> {
    crate::engine::fileset::drop_cached(f, WriteBack::Data, 0, 0)
}

/// Marks every 4 KiB page of `buf` with `v`, so no two written records are identical and
/// deduplicating storage cannot skip them. A few stores per page: cheap enough for a timed loop.
#[inline]
fn stamp(buf: &mut [u8], v: u64) {
    for page in buf.chunks_mut(4096) {
        if page.len() >= 8 {
            page[..8].copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// A process-wide counter that keeps the temporary names of concurrent runs apart.
static RUN_NO: AtomicU32 = AtomicU32::new(0);

fn unique_name(prefix: &str) -> String {
    format!(
        "{prefix}.{}.{}",
        std::process::id(),
        RUN_NO.fetch_add(1, Relaxed)
    )
}

/// Options that never open through a symbolic link (O_NOFOLLOW): a suite's files are its own.
fn nofollow() -> OpenOptions {
    let mut oo = OpenOptions::new();
    oo.custom_flags(libc::O_NOFOLLOW);
    oo
}

/// Removes the files and directories a suite created when it goes out of scope, whatever happened.
struct Cleanup {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for f in &self.files {
            let _ = fs::remove_file(f);
        }
        for d in &self.dirs {
            crate::system::target::remove_made_tree(d);
        }
    }
}

/// `--dir` must be an existing directory.
fn check_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Error::usage(format!(
            "--dir {}: not a directory",
            dir.display()
        ))),
        Err(e) => Err(Error::usage(format!("--dir {}: {e}", dir.display()))),
    }
}

/// Refuses a run that cannot fit in `dir`, before anything is written.
fn check_space(dir: &Path, need: u64, flag: &str) -> Result<()> {
    if std::env::var_os("IOLAB_TEST_SKIP_SPACE_CHECK").is_some() {
        return Ok(());
    }
    if let Some(free) = crate::system::fsinfo::free_bytes(dir)
        && need > free
    {
        return Err(Error::usage(format!(
            "{flag}: the test needs {} in --dir {} but only {} is free",
            human_bytes(need as f64),
            dir.display(),
            human_bytes(free as f64)
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// IOzone
// ---------------------------------------------------------------------------------------------

/// Test identifiers in column order (the order of [`IozoneRow::kb_per_sec`]).
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

/// A test shorter than this is "too fast to measure" (seconds).
pub const BONNIE_MIN_TIME_S: f64 = 0.5;
/// Threads doing the random seeks (bonnie++ forks 3 processes).
pub const BONNIE_SEEK_THREADS: u32 = 3;
/// bonnie++'s default chunk size; the CSV leaves `io_chunk_size` empty for it, like bonnie++.
pub const BONNIE_DEFAULT_CHUNK: u64 = 8 << 10;
/// The CSV format written: bonnie++ 1.98 and 2.00 write `1.98` as the line's first field.
pub const BONNIE_CSV_FORMAT: &str = "1.98";
/// Bytes of the per-character tests: bonnie++ 2.00 writes and reads 3 MiB one byte at a time
/// (counted with strace: 3,145,728 one-byte `write(2)`s and `read(2)`s), whatever `-s` is.
pub const BONNIE_CHAR_IO_BYTES: u64 = 3 << 20;

/// The 50 fields of the CSV line bonnie++ 1.98 and 2.00 write (and `bon_csv2txt` /
/// `bon_csv2html` 2.00 read), in order: the 1.97 layout with the number of seeks and of seeker
/// processes after the chunk size (tests/fixtures/bonnie/ holds lines bonnie++ 2.00a wrote).
pub const BONNIE_CSV_FIELDS: [&str; 50] = [
    "format_version",
    "bonnie_version",
    "name",
    "concurrency",
    "seed",
    "file_size",
    "io_chunk_size",
    "num_seeks",
    "seek_proc_count",
    "putc",
    "putc_cpu",
    "put_block",
    "put_block_cpu",
    "rewrite",
    "rewrite_cpu",
    "getc",
    "getc_cpu",
    "get_block",
    "get_block_cpu",
    "seeks",
    "seeks_cpu",
    "num_files",
    "max_size",
    "min_size",
    "num_dirs",
    "file_chunk_size",
    "seq_create",
    "seq_create_cpu",
    "seq_stat",
    "seq_stat_cpu",
    "seq_del",
    "seq_del_cpu",
    "ran_create",
    "ran_create_cpu",
    "ran_stat",
    "ran_stat_cpu",
    "ran_del",
    "ran_del_cpu",
    "putc_latency",
    "put_block_latency",
    "rewrite_latency",
    "getc_latency",
    "get_block_latency",
    "seeks_latency",
    "seq_create_latency",
    "seq_stat_latency",
    "seq_del_latency",
    "ran_create_latency",
    "ran_stat_latency",
    "ran_del_latency",
];

/// What iolab writes where bonnie++ writes its own version: `iolab-<version>`.
pub fn bonnie_version() -> String {
    format!("iolab-{}", env!("CARGO_PKG_VERSION"))
}

/// Process CPU time (user + system), seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Wall time, CPU time and the longest operation of one test.
struct Meter {
    t0: Instant,
    cpu0: f64,
    max: Duration,
    ops: u64,
}

impl Meter {
    fn start() -> Self {
        Meter {
            cpu0: cpu_seconds(),
            t0: Instant::now(),
            max: Duration::ZERO,
            ops: 0,
        }
    }
    /// One operation that began at `t`.
    #[inline]
    fn op(&mut self, t: Instant) {
        let d = t.elapsed();
        if d > self.max {
            self.max = d;
        }
        self.ops += 1;
    }
    /// `amount`: KiB moved (data tests) or operations done.
    fn finish(self, amount: f64) -> BonnieStat {
        let secs = self.t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - self.cpu0;
        let measurable = secs >= BONNIE_MIN_TIME_S;
        BonnieStat {
            value: measurable.then(|| amount / secs),
            cpu_pct: measurable.then(|| (cpu / secs * 100.0).max(0.0)),
            max_latency_ns: u64::try_from(self.max.as_nanos()).unwrap_or(u64::MAX),
            seconds: secs,
            ops: self.ops,
        }
    }
}

type Step = io::Result<Option<BonnieStat>>;

/// Bytes the per-character tests move: [`BONNIE_CHAR_IO_BYTES`], or the whole file if smaller,
/// in whole chunks.
pub fn bonnie_char_io_bytes(size: u64, chunk: u64) -> u64 {
    let n = size.min(BONNIE_CHAR_IO_BYTES.max(chunk));
    n - n % chunk.max(1)
}

/// bonnie++'s "putc": `bytes` written one byte per `write(2)`, as bonnie++ 2.00 does; one timed
/// operation per chunk's worth of bytes.
fn putc_test(path: &Path, bytes: u64, chunk: u64, stop: &AtomicBool) -> Step {
    let mut f = nofollow()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let mut c = 0u8;
    let mut m = Meter::start();
    for _ in 0..bytes / chunk {
        if stop.load(Relaxed) {
            return Ok(None);
        }
        let t = Instant::now();
        for _ in 0..chunk {
            // one system call per byte (write_all retries only on EINTR)
            f.write_all(std::slice::from_ref(&c))?;
            c = c.wrapping_add(1) & 0x7f;
        }
        m.op(t);
    }
    Ok(Some(m.finish(bytes as f64 / 1024.0)))
}

fn block_write_test(path: &Path, size: u64, buf: &mut [u8], stop: &AtomicBool) -> Step {
    let mut f = nofollow()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let mut m = Meter::start();
    for i in 0..size / buf.len() as u64 {
        if stop.load(Relaxed) {
            return Ok(None);
        }
        stamp(buf, i);
        let t = Instant::now();
        f.write_all(buf)?;
        m.op(t);
    }
    Ok(Some(m.finish(size as f64 / 1024.0)))
}

fn rewrite_test(path: &Path, size: u64, buf: &mut [u8], stop: &AtomicBool) -> Step {
    let mut f = nofollow().read(true).write(true).open(path)?;
    evict(&f)?;
    let back = SeekFrom::Current(-(buf.len() as i64));
    let mut m = Meter::start();
    for _ in 0..size / buf.len() as u64 {
        if stop.load(Relaxed) {
            return Ok(None);
        }
        let t = Instant::now();
        f.read_exact(buf)?;
        buf[0] = buf[0].wrapping_add(1);
        f.seek(back)?;
        f.write_all(buf)?;
        m.op(t);
    }
    Ok(Some(m.finish(size as f64 / 1024.0)))
}

/// bonnie++'s "getc": the first `bytes` of the file read one byte per `read(2)`.
fn getc_test(path: &Path, bytes: u64, chunk: u64, stop: &AtomicBool) -> Step {
    let mut f = nofollow().read(true).open(path)?;
    evict(&f)?;
    let mut c = [0u8; 1];
    let mut m = Meter::start();
    for _ in 0..bytes / chunk {
        if stop.load(Relaxed) {
            return Ok(None);
        }
        let t = Instant::now();
        for _ in 0..chunk {
            // one system call per byte
            f.read_exact(&mut c)?;
        }
        m.op(t);
    }
    Ok(Some(m.finish(bytes as f64 / 1024.0)))
}

fn block_read_test(path: &Path, size: u64, buf: &mut [u8], stop: &AtomicBool) -> Step {
    let mut f = nofollow().read(true).open(path)?;
    evict(&f)?;
    let mut m = Meter::start();
    for _ in 0..size / buf.len() as u64 {
        if stop.load(Relaxed) {
            return Ok(None);
        }
        let t = Instant::now();
        f.read_exact(buf)?;
        m.op(t);
    }
    Ok(Some(m.finish(size as f64 / 1024.0)))
}

/// One seeker: `n` random chunk reads, one in ten written back changed. (ops, longest op, stopped)
fn seeker(
    path: &Path,
    chunks: u64,
    chunk: u64,
    n: u64,
    seed: u64,
    stop: &AtomicBool,
) -> io::Result<(u64, Duration, bool)> {
    let f = nofollow().read(true).write(true).open(path)?;
    let mut buf = vec![0u8; chunk as usize];
    let mut rng = SplitMix::new(seed);
    let mut max = Duration::ZERO;
    for i in 0..n {
        if stop.load(Relaxed) {
            return Ok((i, max, true));
        }
        let off = rng.below(chunks) * chunk;
        let dirty = rng.below(10) == 0;
        let t = Instant::now();
        f.read_exact_at(&mut buf, off)?;
        if dirty {
            buf[0] = buf[0].wrapping_add(1);
            f.write_all_at(&buf, off)?;
        }
        max = max.max(t.elapsed());
    }
    Ok((n, max, false))
}

fn seeks_test(
    path: &Path,
    size: u64,
    chunk: u64,
    seeks: u32,
    seed: u64,
    stop: &AtomicBool,
) -> Step {
    evict(&nofollow().read(true).open(path)?)?;
    let chunks = size / chunk;
    let k = BONNIE_SEEK_THREADS as u64;
    let m = Meter::start();
    let results: Vec<io::Result<(u64, Duration, bool)>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..k)
            .map(|t| {
                let n = seeks as u64 / k + u64::from(t < seeks as u64 % k);
                let seed = seed ^ (t + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93);
                s.spawn(move || seeker(path, chunks, chunk, n, seed, stop))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("seek thread panicked"))
            .collect()
    });
    let mut m = m;
    let mut stopped = false;
    for r in results {
        let (ops, max, st) = r?;
        m.ops += ops;
        m.max = m.max.max(max);
        stopped |= st;
    }
    if stopped {
        return Ok(None);
    }
    let ops = m.ops as f64;
    Ok(Some(m.finish(ops)))
}

#[derive(Clone, Copy)]
enum FileOp {
    Create,
    Stat,
    Delete,
}

/// Creates, stats or deletes every file of `names`, in the order given.
fn file_test(names: &[PathBuf], order: &[u64], op: FileOp, stop: &AtomicBool) -> Step {
    let mut m = Meter::start();
    for &i in order {
        if stop.load(Relaxed) {
            return Ok(None);
        }
        let p = &names[i as usize];
        let t = Instant::now();
        match op {
            FileOp::Create => {
                nofollow().write(true).create_new(true).open(p)?;
            }
            FileOp::Stat => {
                fs::metadata(p)?;
            }
            FileOp::Delete => fs::remove_file(p)?,
        }
        m.op(t);
    }
    let n = order.len() as f64;
    Ok(Some(m.finish(n)))
}

/// The warning code of a Bonnie++ run on a file below twice the RAM (`--force`).
pub const BONNIE_SMALL_SIZE_WARNING: &str = "bonnie_size_below_2x_ram";

/// Bonnie++'s rule: a data file below twice the RAM measures the page cache, so bonnie++
/// refuses it ("File size should be double RAM for good results") unless `-r` fakes the RAM.
/// `ram`: bytes of RAM (None: unknown, no rule). Below twice the RAM: a usage error without
/// `force`, else the warning to record. `size` 0 (no data tests) passes.
pub fn bonnie_ram_rule(
    size: u64,
    ram: Option<u64>,
    force: bool,
) -> Result<Option<crate::model::run::Warning>> {
    let Some(ram) = ram else { return Ok(None) };
    if size == 0 || size >= ram.saturating_mul(2) {
        return Ok(None);
    }
    let what = format!(
        "--size {} is below twice the RAM ({} of RAM, so {} or more): the page cache would hold the file",
        Bytes(size),
        human_bytes(ram as f64),
        human_bytes(ram as f64 * 2.0)
    );
    if !force {
        return Err(Error::usage(format!(
            "{what}; Bonnie++ refuses that too (give --force to run anyway)"
        )));
    }
    Ok(Some(crate::model::run::Warning::new(
        BONNIE_SMALL_SIZE_WARNING,
        format!("{what} (run with --force): the output tests measure memory, not the device"),
    )))
}

/// The RAM of this machine (MemTotal), bytes.
pub fn machine_ram() -> Option<u64> {
    crate::system::fsinfo::meminfo(&crate::system::env::Roots::live().proc).map(|(t, _)| t)
}

fn bonnie_validate(o: &BonnieOpts) -> Result<()> {
    bonnie_ram_rule(o.size, machine_ram(), o.force)?;
    check_dir(&o.dir)?;
    bonnie_check_values(o)?;
    check_space(&o.dir, o.size, "--size")
}

/// The checks of Bonnie++'s options that need no directory (sizes, chunk, file count): done
/// before anything is printed or created.
pub fn bonnie_check_values(o: &BonnieOpts) -> Result<()> {
    if o.size == 0 && o.files == 0 {
        return Err(Error::usage(
            "--size 0 and --files 0: nothing to run (give a file size, a file count or both)",
        ));
    }
    if o.chunk == 0 {
        return Err(Error::usage("--chunk must be positive"));
    }
    if o.size > 0 && (o.size < o.chunk || !o.size.is_multiple_of(o.chunk)) {
        return Err(Error::usage(format!(
            "--size {} must be a positive multiple of --chunk {}",
            Bytes(o.size),
            Bytes(o.chunk)
        )));
    }
    if o.files as u64 * 1024 > u32::MAX as u64 {
        return Err(Error::usage(format!(
            "--files {} is too many (it counts in multiples of 1024)",
            o.files
        )));
    }
    Ok(())
}

fn bonnie_err(what: &str, dir: &Path, e: io::Error) -> Error {
    Error::failed(format!(
        "bonnie: the {what} test in --dir {} failed: {e}",
        dir.display()
    ))
}

/// Runs the Bonnie++ tests (see the module documentation).
pub fn bonnie(o: &BonnieOpts, stop: &AtomicBool) -> Result<BonnieResult> {
    bonnie_validate(o)?;
    let warnings: Vec<_> = bonnie_ram_rule(o.size, machine_ram(), o.force)?
        .into_iter()
        .collect();
    let char_io = bonnie_char_io_bytes(o.size, o.chunk);
    let seed = o.seed.unwrap_or_else(crate::spec::dist::seed_from_clock);
    let name = unique_name("iolab-bonnie");
    let path = o.dir.join(&name);
    let sub = o.dir.join(name + ".d");
    let mut cleanup = Cleanup {
        files: vec![path.clone()],
        dirs: vec![],
    };
    // Nothing is measured before the file and the subdirectory can be created.
    let cant = |p: &Path, e: io::Error| {
        Error::usage(format!(
            "--dir {}: cannot create {}: {e}",
            o.dir.display(),
            p.display()
        ))
    };
    if o.size > 0 {
        nofollow()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| cant(&path, e))?;
    }
    if o.files > 0 {
        crate::system::target::make_dir(&sub).map_err(|e| cant(&sub, e))?;
        cleanup.dirs.push(sub.clone());
    }
    let mut r = BonnieResult {
        version: bonnie_version(),
        machine: o.machine.clone(),
        concurrency: 1,
        seed,
        file_size_bytes: o.size,
        chunk_bytes: o.chunk,
        files: o.files,
        seek_count: if o.size > 0 { o.seeks } else { 0 },
        seek_procs: BONNIE_SEEK_THREADS,
        char_io_bytes: if o.size > 0 { char_io } else { 0 },
        putc: None,
        put_block: None,
        rewrite: None,
        getc: None,
        get_block: None,
        seeks: None,
        seq_create: None,
        seq_stat: None,
        seq_del: None,
        ran_create: None,
        ran_stat: None,
        ran_del: None,
        interrupted: false,
        warnings,
    };
    let dir = o.dir.as_path();
    // Runs one step: stores its result, or marks the run interrupted and returns it.
    macro_rules! step {
        ($field:ident, $what:expr, $e:expr) => {
            match $e.map_err(|e| bonnie_err($what, dir, e))? {
                Some(s) => r.$field = Some(s),
                None => {
                    r.interrupted = true;
                    return Ok(r);
                }
            }
        };
    }
    if o.size > 0 {
        let mut abuf = AlignedBuf::new(o.chunk as usize, 4096, seed);
        let buf = &mut abuf.bytes_mut()[..o.chunk as usize];
        step!(
            putc,
            "per-char output",
            putc_test(&path, char_io, o.chunk, stop)
        );
        step!(
            put_block,
            "block output",
            block_write_test(&path, o.size, buf, stop)
        );
        step!(rewrite, "rewrite", rewrite_test(&path, o.size, buf, stop));
        step!(
            getc,
            "per-char input",
            getc_test(&path, char_io, o.chunk, stop)
        );
        step!(
            get_block,
            "block input",
            block_read_test(&path, o.size, buf, stop)
        );
        if o.seeks > 0 {
            step!(
                seeks,
                "random seeks",
                seeks_test(&path, o.size, o.chunk, o.seeks, seed, stop)
            );
        }
        let _ = fs::remove_file(&path);
    }
    if o.files > 0 {
        let n = o.files as u64 * 1024;
        let names: Vec<PathBuf> = (0..n).map(|i| sub.join(format!("{i:010}"))).collect();
        let seq: Vec<u64> = (0..n).collect();
        let (rc, rs, rd) = (
            shuffled(n, seed ^ 0xC4EA),
            shuffled(n, seed ^ 0x5747),
            shuffled(n, seed ^ 0xDE1E),
        );
        use FileOp::*;
        step!(
            seq_create,
            "sequential create",
            file_test(&names, &seq, Create, stop)
        );
        step!(
            seq_stat,
            "sequential stat",
            file_test(&names, &seq, Stat, stop)
        );
        step!(
            seq_del,
            "sequential delete",
            file_test(&names, &seq, Delete, stop)
        );
        step!(
            ran_create,
            "random create",
            file_test(&names, &rc, Create, stop)
        );
        step!(ran_stat, "random stat", file_test(&names, &rs, Stat, stop));
        step!(
            ran_del,
            "random delete",
            file_test(&names, &rd, Delete, stop)
        );
    }
    Ok(r)
}

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

impl Default for BonnieOpts {
    fn default() -> Self {
        let ram = machine_ram();
        BonnieOpts {
            dir: PathBuf::from("."),
            size: ram
                .map(|r| r * 2 / (1 << 20) * (1 << 20))
                .unwrap_or(2 << 30),
            chunk: BONNIE_DEFAULT_CHUNK,
            files: 16,
            seeks: 8000,
            machine: crate::system::fsinfo::hostname(),
            seed: None,
            force: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffles_are_permutations_and_fixed_by_the_seed() {
        let a = shuffled(1000, 7);
        let mut s = a.clone();
        s.sort();
        assert_eq!(s, (0..1000).collect::<Vec<_>>());
        assert_eq!(a, shuffled(1000, 7));
        assert_ne!(a, shuffled(1000, 8));
    }

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
