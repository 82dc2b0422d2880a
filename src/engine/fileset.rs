//! The sysbench-style file set: naming, prepare, eviction from the page cache, cleanup.
//!
//! Every file iolab creates is `DIR/iolab-file.N`; cleanup removes only those names, so iolab
//! never deletes or writes anything else in `--dir`.

use crate::engine::worker::AlignedBuf;
use crate::error::{Error, Result};
use crate::model::job::FileSetSpec;
use crate::model::units::human_bytes;
use std::fs::{self, File, OpenOptions};
use std::io::IsTerminal;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

pub const FILE_PREFIX: &str = "iolab-file.";
const CHUNK: usize = 1 << 20;

pub fn file_path(dir: &Path, i: u32) -> PathBuf {
    dir.join(format!("{FILE_PREFIX}{i}"))
}

/// How much of the set is already there and usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetStatus {
    /// Files that exist with the right size and no holes.
    pub ready_files: u32,
    /// Files of the set that exist at all.
    pub present_files: u32,
}

impl SetStatus {
    pub fn complete(&self, spec: &FileSetSpec) -> bool {
        self.ready_files == spec.files
    }
}

/// A file is reusable when it has exactly the right size and is fully allocated (not sparse).
pub fn status(spec: &FileSetSpec) -> SetStatus {
    let mut s = SetStatus {
        ready_files: 0,
        present_files: 0,
    };
    for i in 0..spec.files {
        if let Ok(md) = fs::metadata(file_path(&spec.dir, i)) {
            s.present_files += 1;
            if md.is_file() && md.len() == spec.file_size_bytes && md.blocks() * 512 >= md.len() {
                s.ready_files += 1;
            }
        }
    }
    s
}

/// What prepare did.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrepareReport {
    pub written_bytes: u64,
    pub reused_files: u32,
    pub seconds: f64,
}

fn is_nospace(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// Writes every missing or wrong-sized file with real (non-zero, non-repeating) data, in parallel
/// across files, with O_DIRECT when `direct`, then fsyncs each file.
/// On ENOSPC or interruption every file of the set is removed again.
pub fn prepare(
    spec: &FileSetSpec,
    direct: bool,
    mem_align: u64,
    stop: &AtomicBool,
    quiet: bool,
) -> Result<PrepareReport> {
    let t0 = std::time::Instant::now();
    let todo: Vec<u32> = (0..spec.files)
        .filter(|&i| match fs::metadata(file_path(&spec.dir, i)) {
            Ok(md) => !(md.len() == spec.file_size_bytes && md.blocks() * 512 >= md.len()),
            Err(_) => true,
        })
        .collect();
    let reused = spec.files - todo.len() as u32;
    let need = todo.len() as u64 * spec.file_size_bytes;
    if need == 0 {
        return Ok(PrepareReport {
            written_bytes: 0,
            reused_files: reused,
            seconds: 0.0,
        });
    }
    let free = crate::system::fsinfo::free_bytes(&spec.dir).unwrap_or(u64::MAX);
    // Files being rewritten give their current space back.
    let reclaim: u64 = todo
        .iter()
        .filter_map(|&i| fs::metadata(file_path(&spec.dir, i)).ok())
        .map(|m| m.blocks() * 512)
        .sum();
    if std::env::var_os("IOLAB_TEST_SKIP_SPACE_CHECK").is_none()
        && need > free.saturating_add(reclaim)
    {
        return Err(Error::usage(format!(
            "--size: the file set needs {} in --dir {} but only {} is free; use a smaller --size or another --dir",
            human_bytes(need as f64),
            spec.dir.display(),
            human_bytes(free.saturating_add(reclaim) as f64)
        )));
    }
    let bar = progress_bar(need, quiet, "prepare");
    let next = AtomicU32::new(0);
    let written = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let workers = (std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        * 2)
    .clamp(1, 16)
    .min(todo.len());
    let results: Vec<std::io::Result<()>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..workers)
            .map(|w| {
                let (todo, next, written, failed, bar) = (&todo, &next, &written, &failed, &bar);
                s.spawn(move || -> std::io::Result<()> {
                    let mut buf =
                        AlignedBuf::new(CHUNK, mem_align.max(4096) as usize, 0x5eed ^ w as u64);
                    let mut chunk_no = 0u64;
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed) as usize;
                        if k >= todo.len()
                            || stop.load(Ordering::Relaxed)
                            || failed.load(Ordering::Relaxed)
                        {
                            return Ok(());
                        }
                        let r = write_file(
                            spec,
                            todo[k],
                            direct,
                            &mut buf,
                            &mut chunk_no,
                            stop,
                            bar,
                            written,
                        );
                        if r.is_err() {
                            failed.store(true, Ordering::Relaxed);
                            return r;
                        }
                    }
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("prepare thread panicked"))
            .collect()
    });
    bar.finish_and_clear();
    let err = results.into_iter().find_map(|r| r.err());
    if stop.load(Ordering::Relaxed) {
        cleanup(spec);
        return Err(Error::interrupted(
            "interrupted during prepare; the partly written file set was removed",
        ));
    }
    if let Some(e) = err {
        cleanup(spec);
        if is_nospace(&e) {
            return Err(Error::failed(format!(
                "prepare: no space left in --dir {} after writing {}: the set needs {} ({} files of {}); {} was free before prepare. The partly written set was removed",
                spec.dir.display(),
                human_bytes(written.load(Ordering::Relaxed) as f64),
                human_bytes(need as f64),
                todo.len(),
                human_bytes(spec.file_size_bytes as f64),
                human_bytes(free as f64),
            )));
        }
        return Err(Error::failed(format!(
            "prepare: writing the file set in {} failed: {e}; the partly written set was removed",
            spec.dir.display()
        )));
    }
    Ok(PrepareReport {
        written_bytes: written.load(Ordering::Relaxed),
        reused_files: reused,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[allow(clippy::too_many_arguments)]
fn write_file(
    spec: &FileSetSpec,
    i: u32,
    direct: bool,
    buf: &mut AlignedBuf,
    chunk_no: &mut u64,
    stop: &AtomicBool,
    bar: &indicatif::ProgressBar,
    written: &AtomicU64,
) -> std::io::Result<()> {
    let mut oo = OpenOptions::new();
    oo.write(true).create(true).truncate(true);
    if direct {
        oo.custom_flags(libc::O_DIRECT);
    }
    let f = oo.open(file_path(&spec.dir, i))?;
    let mut off = 0u64;
    while off < spec.file_size_bytes {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let n = ((spec.file_size_bytes - off) as usize).min(CHUNK);
        // Make every chunk different so deduplicating or compressing storage cannot cheat.
        *chunk_no += 1;
        let b = buf.bytes_mut();
        for page in b.chunks_mut(4096) {
            page[..8].copy_from_slice(&(*chunk_no ^ ((i as u64) << 40)).to_le_bytes());
        }
        let data = &b[..n];
        let mut done = 0;
        while done < n {
            // SAFETY: data is valid for n bytes; fd is open for writing.
            let r = unsafe {
                libc::pwrite64(
                    f.as_raw_fd(),
                    data[done..].as_ptr().cast(),
                    n - done,
                    (off + done as u64) as i64,
                )
            };
            if r < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if r == 0 {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
            done += r as usize;
        }
        off += n as u64;
        bar.inc(n as u64);
        written.fetch_add(n as u64, Ordering::Relaxed);
    }
    f.sync_all()?;
    Ok(())
}

pub fn progress_bar(len: u64, quiet: bool, what: &str) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}

/// Page-cache residency of the set after eviction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Residency {
    pub resident_bytes: u64,
    pub total_bytes: u64,
}

impl Residency {
    pub fn pct(&self) -> f64 {
        if self.total_bytes == 0 {
            0.0
        } else {
            100.0 * self.resident_bytes as f64 / self.total_bytes as f64
        }
    }
}

/// Bytes of `f` (of length `len`) resident in the page cache, from mincore(2).
pub fn resident_bytes(f: &File, len: u64) -> std::io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    // SAFETY: a read-only shared mapping of an open file; unmapped below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let pages = len.div_ceil(page) as usize;
    let mut vec = vec![0u8; pages];
    // SAFETY: vec has one byte per page of the mapping.
    let r = unsafe { libc::mincore(p, len as usize, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: unmapping what we mapped.
    unsafe { libc::munmap(p, len as usize) };
    if r != 0 {
        return Err(err);
    }
    Ok(vec.iter().filter(|&&b| b & 1 == 1).count() as u64 * page)
}

/// What to write back before dropping a file's pages from the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteBack {
    /// Nothing (a file that was only read); dirty pages stay cached.
    No,
    /// `fdatasync`: the data, and metadata only as far as needed to read it back.
    Data,
    /// `fsync`: data and all metadata.
    All,
}

/// Page-cache eviction, the one primitive behind the file set, the suites and zones: writes
/// `f` back as `wb` says, then drops its cached pages in `offset..offset + len` (`len` 0: to the
/// end) with `posix_fadvise(POSIX_FADV_DONTNEED)`. Dirty pages cannot be dropped, which is why
/// writers write back first; [`resident_bytes`] (mincore) verifies what remained.
pub fn drop_cached(f: &File, wb: WriteBack, offset: u64, len: u64) -> std::io::Result<()> {
    match wb {
        WriteBack::No => {}
        WriteBack::Data => f.sync_data()?,
        WriteBack::All => f.sync_all()?,
    }
    // SAFETY: an advisory call on an open descriptor; it reads no memory of ours.
    let r = unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    if r != 0 {
        return Err(std::io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// Writes back and drops the set from the page cache (fsync, then posix_fadvise DONTNEED), then
/// measures what is still resident with mincore.
pub fn evict(spec: &FileSetSpec) -> std::io::Result<Residency> {
    let mut res = Residency::default();
    for i in 0..spec.files {
        let p = file_path(&spec.dir, i);
        let f = match File::open(&p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let len = f.metadata()?.len();
        drop_cached(&f, WriteBack::All, 0, 0)?;
        res.resident_bytes += resident_bytes(&f, len)?;
        res.total_bytes += len;
    }
    Ok(res)
}

/// Reads the whole set through the page cache (for --warm), then measures residency.
pub fn warm(spec: &FileSetSpec) -> std::io::Result<Residency> {
    use std::io::Read;
    let mut res = Residency::default();
    let mut buf = vec![0u8; CHUNK];
    for i in 0..spec.files {
        let mut f = File::open(file_path(&spec.dir, i))?;
        let len = f.metadata()?.len();
        while f.read(&mut buf)? > 0 {}
        res.resident_bytes += resident_bytes(&f, len)?;
        res.total_bytes += len;
    }
    Ok(res)
}

/// Removes every `iolab-file.N` in the directory (and nothing else). Returns how many.
pub fn cleanup(spec: &FileSetSpec) -> u32 {
    cleanup_dir(&spec.dir)
}

pub fn cleanup_dir(dir: &Path) -> u32 {
    let mut n = 0;
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if let Some(rest) = name.strip_prefix(FILE_PREFIX)
                && !rest.is_empty()
                && rest.chars().all(|c| c.is_ascii_digit())
                && fs::remove_file(e.path()).is_ok()
            {
                n += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path, files: u32, fsize: u64) -> FileSetSpec {
        FileSetSpec {
            dir: dir.to_path_buf(),
            files,
            total_bytes: files as u64 * fsize,
            file_size_bytes: fsize,
        }
    }

    #[test]
    fn prepare_writes_full_files_then_reuses_them() {
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), 3, 256 * 1024);
        let stop = AtomicBool::new(false);
        assert_eq!(status(&s).ready_files, 0);
        let r = prepare(&s, false, 4096, &stop, true).unwrap();
        assert_eq!(r.written_bytes, 3 * 256 * 1024);
        assert!(status(&s).complete(&s));
        for i in 0..3 {
            let md = fs::metadata(file_path(d.path(), i)).unwrap();
            assert!(md.blocks() * 512 >= md.len(), "not sparse");
            let data = fs::read(file_path(d.path(), i)).unwrap();
            assert!(
                data.iter().filter(|&&b| b == 0).count() < data.len() / 100,
                "real data, not zeros"
            );
        }
        let r2 = prepare(&s, false, 4096, &stop, true).unwrap();
        assert_eq!((r2.written_bytes, r2.reused_files), (0, 3));
        // a wrong-sized file is rewritten
        fs::write(file_path(d.path(), 1), b"short").unwrap();
        let r3 = prepare(&s, false, 4096, &stop, true).unwrap();
        assert_eq!((r3.written_bytes, r3.reused_files), (256 * 1024, 2));
    }

    #[test]
    fn cleanup_removes_only_iolab_files() {
        let d = tempfile::tempdir().unwrap();
        for n in [
            "iolab-file.0",
            "iolab-file.12",
            "iolab-file.x",
            "keep.txt",
            "iolab-file.",
        ] {
            fs::write(d.path().join(n), b"x").unwrap();
        }
        assert_eq!(cleanup_dir(d.path()), 2);
        let mut left: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["iolab-file.", "iolab-file.x", "keep.txt"]);
    }

    #[test]
    fn residency_is_measured_with_mincore() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, vec![1u8; 1 << 20]).unwrap();
        let f = File::open(&p).unwrap();
        // just written through the page cache: resident (unless the fs is odd)
        let r = resident_bytes(&f, 1 << 20).unwrap();
        assert!(r <= 1 << 20);
    }
}
