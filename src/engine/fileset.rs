//! The sysbench-style file set: naming, prepare, eviction from the page cache, cleanup.
//!
//! Every file iolab creates is `DIR/iolab-file.N`; cleanup removes only those names, so iolab
//! never deletes or writes anything else in `--dir`.

pub use super::pagecache::{Residency, WriteBack, drop_cached, resident_bytes, resident_bytes_at};
pub use super::setlock::{LOCK_NAME, LOCK_WAIT, SetLock, lock};
use crate::engine::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::model::job::{FileSetSpec, Layout};
use crate::model::units::human_bytes;
pub use crate::system::extents::extent_bytes;
use crate::system::extents::is_unwritten;
use crate::system::target::TargetDir;
use rustix::fs::Stat;
use std::io::IsTerminal;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

pub const FILE_PREFIX: &str = "iolab-file.";
/// The unit of prepare's data: every 1 MiB chunk is the writer's pseudo-random pattern with the
/// chunk's own number in the first 8 bytes of each 4 KiB page.
const CHUNK: usize = 1 << 20;
/// Prepare writes this many bytes (4 chunks) per pwrite: with O_DIRECT one write is split into
/// several requests the device has in flight at once (a virtio disk or a loop device takes at
/// most 1-4 MiB per request), and a file is extended a quarter as often.
const WRITE: usize = 4 * CHUNK;

pub fn file_path(dir: &Path, i: u32) -> PathBuf {
    dir.join(file_name(i))
}

/// The name of file `i` of a set in its directory.
pub fn file_name(i: u32) -> String {
    format!("{FILE_PREFIX}{i}")
}

/// The handle of the set's directory (the one the set's lock holds, else opened now): every file
/// of the set is opened, made and removed through it (system::target).
pub fn target(dir: &Path) -> Result<Arc<TargetDir>> {
    TargetDir::of(dir).map_err(|e| Error::usage(format!("--dir {}: {e}", dir.display())))
}

/// How much of the set is already there and usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetStatus {
    /// Files that exist with the right size and the set's layout (for overwrite: no holes).
    pub ready_files: u32,
    /// Files of the set that exist at all.
    pub present_files: u32,
}

impl SetStatus {
    pub fn complete(&self, spec: &FileSetSpec) -> bool {
        self.ready_files == spec.files
    }
}

/// An existing file measured against the layout of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Has the layout: usable as it is.
    Ready,
    /// overwrite only: the right size but sparse (a seqwr left it emptied); prepare completes it
    /// in place.
    Completable,
    /// Another size or layout: refused (or, with `--reprepare`, replaced).
    Other,
}

/// The shape of file `i` of the set against the set's layout; None when it does not exist.
/// Refused (exit 2) when the name holds what iolab did not make: a symbolic link (followed
/// never), a fifo, a directory, a hard link (system::target).
fn shape(t: &TargetDir, spec: &FileSetSpec, i: u32) -> Result<Option<(Shape, Stat)>> {
    let name = file_name(i);
    let Some(md) = t.entry(&name)? else {
        return Ok(None);
    };
    let size = spec.file_len();
    let (len, blocks) = (md.st_size as u64, md.st_blocks as u64);
    let alloc = blocks * 512;
    let right_size = len == size;
    // a job file's named file, longer than the job needs: fio uses it as it is, when written
    let fits = right_size || (spec.larger_ok && len > size);
    let open = || t.open_existing(&name, false, 0);
    let sh = match spec.layout {
        // Allocated and written: preallocated (unwritten) extents are completed like holes.
        Layout::Overwrite
            if fits
                && alloc >= len
                && !open()
                    .and_then(|f| extent_bytes(&f))
                    .is_ok_and(|(_, unwritten)| unwritten > 0) =>
        {
            Shape::Ready
        }
        Layout::Overwrite if right_size => Shape::Completable,
        // Sparse: (nearly) nothing allocated.
        Layout::Holes if right_size && alloc <= size / 100 => Shape::Ready,
        Layout::Unwritten if right_size && open().is_ok_and(|f| is_unwritten(&f, size, blocks)) => {
            Shape::Ready
        }
        Layout::Extend if len == 0 => Shape::Ready,
        _ => Shape::Other,
    };
    Ok(Some((sh, md)))
}

/// How much of the set is there with the set's layout. A file is ready when it has exactly the
/// right size and the layout (overwrite: fully allocated, not sparse; holes: (nearly) no block
/// allocated; unwritten: preallocated unwritten extents; extend: empty).
/// A name that holds what iolab did not make counts as present, never ready ([`check_sizes`]
/// refuses it).
pub fn status(spec: &FileSetSpec) -> SetStatus {
    let mut s = SetStatus {
        ready_files: 0,
        present_files: 0,
    };
    let Ok(t) = target(&spec.dir) else {
        return s;
    };
    for i in 0..spec.files {
        match shape(&t, spec, i) {
            Ok(None) => {}
            Ok(Some((sh, _))) => {
                s.present_files += 1;
                if sh == Shape::Ready {
                    s.ready_files += 1;
                }
            }
            Err(_) => s.present_files += 1,
        }
    }
    s
}

/// What a file of `layout` is, for messages.
fn layout_shape(layout: Layout, size: u64) -> String {
    let size = human_bytes(size as f64);
    match layout {
        Layout::Overwrite => size,
        Layout::Holes => format!("a sparse file of {size} (no block allocated)"),
        Layout::Unwritten => format!("{size} of preallocated, unwritten extents"),
        Layout::Extend => "an empty file (size 0)".to_string(),
    }
}

/// Refuses a set in `--dir` whose files do not have this run's sizes (like sysbench: "Size of
/// file ... is 11.5MiB, but at least 16MiB is expected") or, for a `--layout` other than
/// overwrite, its layout: iolab never rewrites or removes files it did not create. A file of the
/// right size that is sparse (a seqwr left it emptied) is completed in place by prepare
/// (overwrite).
/// A set member that is not a regular file iolab made (a symbolic link, a fifo, a directory, a
/// hard link) is refused first, in one line (exit 2).
pub fn check_sizes(spec: &FileSetSpec) -> Result<()> {
    let t = target(&spec.dir)?;
    for i in 0..spec.files {
        shape(&t, spec, i)?;
    }
    for i in 0..spec.files {
        let p = file_path(&spec.dir, i);
        let Some((sh, md)) = shape(&t, spec, i)? else {
            continue;
        };
        if sh != Shape::Other {
            continue;
        }
        let d = spec.dir.display();
        let found = human_bytes(md.st_size as f64);
        if spec.layout != Layout::Overwrite {
            return Err(Error::usage(format!(
                "--layout {l}: {} is {found} with {} allocated, but {} is expected (--layout {l}, --size {} over --files {}): --dir {d} holds a file set of another layout or sizes, and iolab does not rewrite a set it did not create; run with the --layout, --size and --files it was prepared with, give --reprepare to replace it with a set of this layout (iolab's files only), or remove it with `iolab cleanup --dir {d}` and run again",
                p.display(),
                human_bytes((md.st_blocks as u64 * 512) as f64),
                layout_shape(spec.layout, spec.file_len()),
                human_bytes(spec.total_bytes as f64),
                spec.files,
                l = spec.layout,
            )));
        }
        return Err(Error::usage(format!(
            "--size/--files: {} is {found}, but {} is expected (--size {} over --files {}): --dir {d} holds a file set prepared with other sizes or left incomplete, and iolab does not rewrite a set it did not create; run with the --size and --files it was prepared with, give --reprepare to replace it with a set of these sizes (iolab's files only), or remove it with `iolab cleanup --dir {d}` and run again",
            p.display(),
            human_bytes(spec.file_len() as f64),
            human_bytes(spec.total_bytes as f64),
            spec.files,
        )));
    }
    Ok(())
}

/// Makes the files of a set of layout unwritten, holes or extend: each file is emptied
/// (truncated to 0, or created) and then made sparse at full size (holes), preallocated with
/// fallocate(2) (unwritten) or left empty (extend), and fsynced. With `only_missing`, files that
/// exist are left as they are. A write consumes these layouts, so the runner makes them again
/// before every mode. Returns how many files it made; on an error, those it created are removed.
pub fn make_layout(spec: &FileSetSpec, only_missing: bool) -> Result<u32> {
    let t = target(&spec.dir)?;
    for i in 0..spec.files {
        t.entry(&file_name(i))?;
    }
    let mut created = Vec::new();
    let mut made = 0;
    let r = (|| -> std::io::Result<()> {
        for i in 0..spec.files {
            let name = file_name(i);
            let exists = !matches!(t.entry(&name), Ok(None));
            if only_missing && exists {
                continue;
            }
            // Emptied: every block of the old file is freed before the layout is made.
            let f = if exists {
                let f = t.open_existing(&name, true, 0)?;
                f.set_len(0)?;
                f
            } else {
                let f = t.create_new(&name, 0)?;
                created.push(name);
                f
            };
            match spec.layout {
                Layout::Holes => f.set_len(spec.file_len())?,
                Layout::Unwritten => {
                    // SAFETY: fallocate on our own open descriptor.
                    let r = unsafe {
                        libc::fallocate(f.as_raw_fd(), 0, 0, spec.file_len() as libc::off_t)
                    };
                    if r != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Layout::Extend | Layout::Overwrite => {}
            }
            f.sync_all()?;
            made += 1;
        }
        Ok(())
    })();
    match r {
        Ok(()) => Ok(made),
        Err(e) => {
            for name in &created {
                t.remove(name, true);
            }
            let why = if is_nospace(&e) {
                format!(
                    "no space left (the set needs {})",
                    human_bytes(spec.total_bytes as f64)
                )
            } else {
                e.to_string()
            };
            Err(Error::failed(format!(
                "--layout {}: making the file set in {}: {why}",
                spec.layout,
                spec.dir.display()
            )))
        }
    }
}

/// `--reprepare`: when the set in `--dir` does not have this spec's sizes (what [`check_sizes`]
/// refuses), removes every `iolab-file.N` there, as `iolab cleanup` does and nothing else, so the
/// set is prepared afresh. Returns how many files it removed (0: the set fits and is kept).
pub fn remove_other_sizes(spec: &FileSetSpec) -> Result<u32> {
    match check_sizes(spec) {
        Ok(()) => Ok(0),
        Err(_) => cleanup_dir(&spec.dir),
    }
}

/// How prepare writes the files of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrepWrite {
    /// With O_DIRECT, required (`--direct`): a filesystem that refuses it is an error.
    Direct,
    /// With O_DIRECT where the filesystem takes it, else through the page cache: a file whose
    /// O_DIRECT open, or one of whose O_DIRECT writes (an unaligned tail), fails with EINVAL is
    /// written on (from where it was) buffered. The default: data written with O_DIRECT costs no
    /// copy into the page cache and no writeback, and leaves nothing cached to evict.
    Auto,
    /// Through the page cache (`prepare --buffered`).
    Buffered,
}

/// What prepare did.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrepareReport {
    pub written_bytes: u64,
    /// Of `written_bytes`, those written with O_DIRECT.
    pub direct_bytes: u64,
    pub reused_files: u32,
    pub seconds: f64,
}

fn is_nospace(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// Writes every missing or incomplete file with real (non-zero, non-repeating) data, in parallel
/// across files, with O_DIRECT as `how` says ([`PrepWrite`]; the bytes are the same either way),
/// then fsyncs each file. A file that exists is
/// completed in place, never removed.
/// On ENOSPC, a failure or interruption the files this prepare created are removed again (with
/// `keep`, on interruption only those it had not finished); the error says what was prepared.
pub fn prepare(
    spec: &FileSetSpec,
    how: PrepWrite,
    mem_align: u64,
    stop: &AtomicBool,
    quiet: bool,
    keep: bool,
) -> Result<PrepareReport> {
    let t0 = std::time::Instant::now();
    let t = target(&spec.dir)?;
    if spec.layout != Layout::Overwrite {
        // Nothing to write: the files are made (truncate, fallocate) and a ready one is reused.
        let reused = status(spec).ready_files;
        make_layout(spec, true)?;
        return Ok(PrepareReport {
            reused_files: reused,
            seconds: t0.elapsed().as_secs_f64(),
            ..Default::default()
        });
    }
    let mut todo: Vec<u32> = Vec::new();
    let mut created: Vec<bool> = Vec::new();
    for i in 0..spec.files {
        match shape(&t, spec, i)? {
            Some((Shape::Ready, _)) => {}
            Some(_) => {
                todo.push(i);
                created.push(false);
            }
            None => {
                todo.push(i);
                created.push(true);
            }
        }
    }
    let reused = spec.files - todo.len() as u32;
    let need = todo.len() as u64 * spec.file_len();
    if need == 0 {
        return Ok(PrepareReport {
            reused_files: reused,
            ..Default::default()
        });
    }
    let free = crate::system::fsinfo::free_bytes(&spec.dir).unwrap_or(u64::MAX);
    // Files being rewritten give their current space back.
    let reclaim: u64 = todo
        .iter()
        .filter_map(|&i| t.entry(&file_name(i)).ok().flatten())
        .map(|m| m.st_blocks as u64 * 512)
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
    let direct_bytes = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let done: Vec<AtomicBool> = todo.iter().map(|_| AtomicBool::new(false)).collect();
    let workers = (std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        * 2)
    .clamp(1, 16)
    .min(todo.len());
    let results: Vec<std::io::Result<()>> = std::thread::scope(|s| {
        let mut hs = Vec::new();
        let mut spawn_err = None;
        for w in 0..workers {
            let (todo, next, written, direct_bytes, failed, bar, done, t) = (
                &todo,
                &next,
                &written,
                &direct_bytes,
                &failed,
                &bar,
                &done,
                &*t,
            );
            let h = std::thread::Builder::new()
                .name(format!("iolab-prep{w}"))
                .spawn_scoped(s, move || -> std::io::Result<()> {
                    let mut buf =
                        AlignedBuf::new(WRITE, mem_align.max(4096) as usize, 0x5eed ^ w as u64);
                    // every chunk of a write starts from the same pattern (the bytes a write of
                    // one chunk at a time made)
                    let b = buf.bytes_mut();
                    let (first, rest) = b.split_at_mut(CHUNK);
                    for c in rest.chunks_mut(CHUNK) {
                        c.copy_from_slice(&first[..c.len()]);
                    }
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
                            t,
                            spec,
                            todo[k],
                            how,
                            &mut buf,
                            &mut chunk_no,
                            stop,
                            bar,
                            (written, direct_bytes),
                        );
                        match r {
                            Ok(true) => done[k].store(true, Ordering::Relaxed),
                            Ok(false) => {}
                            Err(e) => {
                                failed.store(true, Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                });
            match h {
                Ok(h) => hs.push(h),
                Err(e) => {
                    // Fewer writers than planned: the ones running stop, and prepare fails.
                    failed.store(true, Ordering::Relaxed);
                    spawn_err = Some(e);
                    break;
                }
            }
        }
        let mut r: Vec<std::io::Result<()>> = hs
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("prepare thread panicked")))
            })
            .collect();
        if let Some(e) = spawn_err {
            r.push(Err(std::io::Error::new(
                e.kind(),
                format!("starting a prepare thread: {e}"),
            )));
        }
        r
    });
    bar.finish_and_clear();
    let err = results.into_iter().find_map(|r| r.err());
    let interrupted = stop.load(Ordering::Relaxed);
    let finished = done.iter().filter(|d| d.load(Ordering::Relaxed)).count();
    let wrote = written.load(Ordering::Relaxed);
    if interrupted || err.is_some() {
        // Remove what this prepare created (with --keep on interruption: what it left unfinished).
        let mut removed = 0;
        for (k, &i) in todo.iter().enumerate() {
            let keep_it = keep && err.is_none() && done[k].load(Ordering::Relaxed);
            if created[k] && !keep_it && t.remove(&file_name(i), true) {
                removed += 1;
            }
        }
        let kept = reused as usize
            + todo
                .iter()
                .enumerate()
                .filter(|&(k, _)| !created[k] || (keep && done[k].load(Ordering::Relaxed)))
                .count();
        let what = format!(
            "{finished} of {} files ({} of {}) were prepared in {}; {}",
            todo.len(),
            human_bytes(wrote as f64),
            human_bytes(need as f64),
            spec.dir.display(),
            match (removed, kept) {
                (0, 0) => "nothing was left behind".to_string(),
                (r, 0) => format!("the {r} files this run created were removed"),
                (0, k) => format!("{k} files of the set were kept"),
                (r, k) => format!(
                    "the {r} files this run created and left unfinished were removed, {k} files of the set were kept"
                ),
            }
        );
        if interrupted && err.is_none() {
            return Err(Error::interrupted(format!(
                "interrupted during prepare, before measuring began (nothing saved): {what}"
            )));
        }
        let e = err.expect("an error when not interrupted");
        if is_nospace(&e) {
            return Err(Error::failed(format!(
                "prepare: no space left in --dir {} after writing {}: the set needs {} ({} files of {}); {} was free before prepare. {what}",
                spec.dir.display(),
                human_bytes(wrote as f64),
                human_bytes(need as f64),
                todo.len(),
                human_bytes(spec.file_len() as f64),
                human_bytes(free as f64),
            )));
        }
        return Err(Error::failed(format!(
            "prepare: writing the file set in {} failed: {e}; {what}",
            spec.dir.display()
        )));
    }
    Ok(PrepareReport {
        written_bytes: wrote,
        direct_bytes: direct_bytes.load(Ordering::Relaxed),
        reused_files: reused,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Writes file `i` whole; Ok(false) when stopped before the end. `counts`: bytes written, and
/// of them with O_DIRECT.
#[allow(clippy::too_many_arguments)]
fn write_file(
    t: &TargetDir,
    spec: &FileSetSpec,
    i: u32,
    how: PrepWrite,
    buf: &mut AlignedBuf,
    chunk_no: &mut u64,
    stop: &AtomicBool,
    bar: &indicatif::ProgressBar,
    counts: (&AtomicU64, &AtomicU64),
) -> std::io::Result<bool> {
    let name = file_name(i);
    // In place: a file that exists (an incomplete one of a set) is completed, never truncated;
    // never through a symbolic link (system::target).
    let open = |direct: bool| t.open_or_create(&name, if direct { libc::O_DIRECT } else { 0 });
    let einval = |e: &std::io::Error| e.raw_os_error() == Some(libc::EINVAL);
    let (mut f, mut direct) = match how {
        PrepWrite::Buffered => (open(false)?, false),
        PrepWrite::Direct => (open(true)?, true),
        PrepWrite::Auto => match open(true) {
            Ok(f) => (f, true),
            // the filesystem refuses O_DIRECT (open(2): EINVAL)
            Err(e) if einval(&e) => (open(false)?, false),
            Err(e) => return Err(e),
        },
    };
    // the whole file, the part before an --offset too (as fio lays a file out)
    let len = spec.file_len();
    if f.metadata()?.len() > len {
        f.set_len(len)?;
    }
    let mut off = 0u64;
    while off < len {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let n = ((len - off) as usize).min(WRITE);
        // Make every chunk different so deduplicating or compressing storage cannot cheat.
        let b = buf.bytes_mut();
        for c in b[..n.next_multiple_of(CHUNK)].chunks_mut(CHUNK) {
            *chunk_no += 1;
            for page in c.chunks_mut(4096) {
                page[..8].copy_from_slice(&(*chunk_no ^ ((i as u64) << 40)).to_le_bytes());
            }
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
                let e = std::io::Error::last_os_error();
                if how == PrepWrite::Auto && direct && einval(&e) {
                    // An O_DIRECT write the filesystem does not take (a length or offset off
                    // its alignment, as a tail can be): the rest of the file goes buffered.
                    f = open(false)?;
                    direct = false;
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
            done += r as usize;
            if direct {
                counts.1.fetch_add(r as u64, Ordering::Relaxed);
            }
        }
        off += n as u64;
        bar.inc(n as u64);
        counts.0.fetch_add(n as u64, Ordering::Relaxed);
    }
    f.sync_all()?;
    Ok(true)
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

/// Writes back and drops the set from the page cache (fsync, then posix_fadvise DONTNEED), then
/// measures what is still resident with mincore.
pub fn evict(spec: &FileSetSpec) -> std::io::Result<Residency> {
    let mut res = Residency::default();
    let t = TargetDir::of(&spec.dir)?;
    for i in 0..spec.files {
        let f = match t.open_existing(&file_name(i), false, 0) {
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
    let t = TargetDir::of(&spec.dir)?;
    for i in 0..spec.files {
        let mut f = t.open_existing(&file_name(i), false, 0)?;
        let len = f.metadata()?.len();
        while f.read(&mut buf)? > 0 {}
        res.resident_bytes += resident_bytes(&f, len)?;
        res.total_bytes += len;
    }
    Ok(res)
}

/// Removes the files of this set (`iolab-file.0` .. `iolab-file.<files-1>`) and nothing else:
/// through the directory's handle, only the files iolab made or found as its set (same device
/// and inode), so a target unmounted during the run leaves what its mountpoint holds untouched
/// (and one line says it disappeared). Returns how many.
pub fn cleanup(spec: &FileSetSpec) -> u32 {
    let Ok(t) = target(&spec.dir) else {
        return 0;
    };
    t.say_if_gone();
    crate::engine::verify::remove_state_in(&t);
    (0..spec.files)
        .filter(|&i| t.remove(&file_name(i), true))
        .count() as u32
}

/// Removes every `iolab-file.N` in the directory (and nothing else). A name among them that
/// holds what iolab did not make (a symbolic link, a fifo, a directory) is refused in one line
/// (exit 2) before anything is removed. Returns how many.
pub fn cleanup_dir(dir: &Path) -> Result<u32> {
    let t = target(dir)?;
    let names: Vec<String> = t
        .names()
        .into_iter()
        .filter(|name| {
            name.strip_prefix(FILE_PREFIX)
                .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
        })
        .collect();
    for name in &names {
        t.entry(name)?;
    }
    crate::engine::verify::check_state_in(&t)?;
    t.say_if_gone();
    crate::engine::verify::remove_state_in(&t);
    Ok(names.iter().filter(|name| t.remove(name, false)).count() as u32)
}

#[cfg(test)]
mod tests;
