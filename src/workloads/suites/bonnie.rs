//! Bonnie++, re-implemented: [`bonnie`].
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

use super::{
    Cleanup, SplitMix, check_dir, check_space, evict, nofollow, shuffled, stamp, unique_name,
};
use crate::engine::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::model::suite::{BonnieOpts, BonnieResult, BonnieStat};
use crate::model::units::{Bytes, human_bytes};
use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

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
