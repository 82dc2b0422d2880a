//! The target directory (`--dir`, a suite's or crashcheck's directory) held by one handle taken
//! at the start, and every file iolab makes, writes or removes in it opened relative to that
//! handle (docs/safety.md, section 1).
//!
//! - Names are one path component; `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` (Linux 5.6+;
//!   `openat` with `O_NOFOLLOW` where the kernel has no openat2) never follows a symbolic link
//!   planted at a name iolab writes, and new files are made with `O_CREAT | O_EXCL | O_NOFOLLOW`.
//! - Something at such a name that is not a regular file with one link (a symbolic link, even a
//!   dangling one, a fifo, a directory, a device, a hard link to another file) is refused in one
//!   line (exit 2): iolab never writes, follows or removes it.
//! - Each file's device and inode are recorded when iolab makes it (or first finds it, for a set
//!   that was there); removal (`unlinkat` through the handle) checks them again, so a
//!   filesystem unmounted lazily during a run (`umount -l`) leaves the files under its
//!   mountpoint untouched, and iolab says in one line that the target disappeared.

use crate::error::{Error, Result};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// What a file is, whatever its name: (device, inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ident {
    pub dev: u64,
    pub ino: u64,
}

impl Ident {
    fn of(st: &Stat) -> Ident {
        Ident {
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }
}

/// A directory iolab works in, opened once.
#[derive(Debug)]
pub struct TargetDir {
    fd: OwnedFd,
    path: PathBuf,
    ident: Ident,
    /// The "target disappeared" line was printed.
    said_gone: AtomicBool,
}

/// The files iolab made (or first found as its set) in each directory, by the directory's and
/// the file's name: kept for the whole process, so a directory opened again (a role's set
/// removed after repetitions) still knows its files, and a directory that now stands where the
/// target was (its filesystem unmounted) has none.
static MADE: Mutex<Option<HashMap<(Ident, OsString), Ident>>> = Mutex::new(None);

/// The records of one directory.
struct Made {
    g: std::sync::MutexGuard<'static, Option<HashMap<(Ident, OsString), Ident>>>,
    dir: Ident,
}

impl Made {
    fn map(&mut self) -> &mut HashMap<(Ident, OsString), Ident> {
        self.g.get_or_insert_with(HashMap::new)
    }
    fn get(&mut self, name: &str) -> Option<Ident> {
        let k = (self.dir, OsString::from(name));
        self.map().get(&k).copied()
    }
    fn insert(&mut self, name: &str, id: Ident) {
        let k = (self.dir, OsString::from(name));
        self.map().insert(k, id);
    }
    fn first_seen(&mut self, name: &str, id: Ident) {
        let k = (self.dir, OsString::from(name));
        self.map().entry(k).or_insert(id);
    }
    fn remove(&mut self, name: &str) -> Option<Ident> {
        let k = (self.dir, OsString::from(name));
        self.map().remove(&k)
    }
}

/// The handles held while a command works in a directory (by the set's lock), by path.
static HELD: Mutex<Vec<(PathBuf, Weak<TargetDir>)>> = Mutex::new(Vec::new());
/// The kernel has no openat2 (before 5.6, or a seccomp filter refuses it).
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

fn held_list() -> std::sync::MutexGuard<'static, Vec<(PathBuf, Weak<TargetDir>)>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// The directories iolab made (a missing `--dir`, a role's own set), by path and what they are.
static MADE_DIRS: Mutex<Vec<(PathBuf, Ident)>> = Mutex::new(Vec::new());

fn made_dirs() -> std::sync::MutexGuard<'static, Vec<(PathBuf, Ident)>> {
    MADE_DIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes the directory `path` (its parent must exist) and records what it is, so that
/// [`remove_made_dir`] removes it and nothing that later stands at that path.
pub fn make_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)?;
    let st = rustix::fs::lstat(path)?;
    made_dirs().push((path.to_path_buf(), Ident::of(&st)));
    Ok(())
}

/// Removes the directory `path` when iolab made it ([`make_dir`]), it is still that directory
/// (same device and inode: not another one that stands there after its filesystem was
/// unmounted, nor a link put in its place) and it is empty; anything else is left as it is.
pub fn remove_made_dir(path: &Path) {
    remove_made(path, |p| std::fs::remove_dir(p))
}

/// [`remove_made_dir`] with whatever iolab put in it (a suite's metadata directory): removed
/// only while `path` is still the directory iolab made; std's `remove_dir_all` follows no
/// symbolic link inside it.
pub fn remove_made_tree(path: &Path) {
    remove_made(path, |p| std::fs::remove_dir_all(p))
}

fn remove_made(path: &Path, rm: impl FnOnce(&Path) -> std::io::Result<()>) {
    let mut made = made_dirs();
    let Some(i) = made.iter().position(|(p, _)| p == path) else {
        return;
    };
    let same = rustix::fs::lstat(path)
        .map(|st| {
            Ident::of(&st) == made[i].1
                && FileType::from_raw_mode(st.st_mode) == FileType::Directory
        })
        .unwrap_or(false);
    if same && rm(path).is_ok() {
        made.remove(i);
    }
}

/// What kind of thing a stat describes, for refusals.
fn kind(st: &Stat) -> &'static str {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile if st.st_nlink != 1 => "a hard link to a file that has other names",
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a fifo",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "not a regular file",
    }
}

/// One path component: no `/`, not `.` or `..`.
fn is_name(name: &str) -> bool {
    !(name.contains('/') || name == ".." || name == "." || name.is_empty())
}

fn is_plain(st: &Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::RegularFile && st.st_nlink == 1
}

/// The one-line refusal of a name that holds what iolab did not make.
pub fn refusal(path: &Path, what: &str) -> Error {
    Error::usage(format!(
        "{}: is {what}, not a regular file iolab made; iolab never writes through, follows or removes it: remove it yourself or use another directory",
        path.display()
    ))
}

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e.raw_os_error())
}

impl TargetDir {
    /// Opens `path` (the directory the user named; a symbolic link there is the user's).
    pub fn open(path: &Path) -> std::io::Result<TargetDir> {
        let flags = OFlags::DIRECTORY | OFlags::CLOEXEC;
        // read access to fsync the directory; O_PATH where it cannot be read
        let fd = rustix::fs::open(path, flags | OFlags::RDONLY, Mode::empty())
            .or_else(|_| rustix::fs::open(path, flags | OFlags::PATH, Mode::empty()))
            .map_err(io)?;
        let st = rustix::fs::fstat(&fd).map_err(io)?;
        Ok(TargetDir {
            fd,
            path: path.to_path_buf(),
            ident: Ident::of(&st),
            said_gone: AtomicBool::new(false),
        })
    }

    /// The handle of `path` held by a running command, else one opened now.
    pub fn of(path: &Path) -> std::io::Result<Arc<TargetDir>> {
        let mut l = held_list();
        l.retain(|(_, w)| w.strong_count() > 0);
        if let Some(t) = l
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(t);
        }
        drop(l);
        Ok(Arc::new(TargetDir::open(path)?))
    }

    /// Takes the handle of `path` for as long as the returned value lives: every use of the
    /// directory meanwhile goes through it.
    pub fn hold(path: &Path) -> std::io::Result<Arc<TargetDir>> {
        let t = TargetDir::of(path)?;
        let mut l = held_list();
        if !l.iter().any(|(p, w)| p == path && w.strong_count() > 0) {
            l.push((path.to_path_buf(), Arc::downgrade(&t)));
        }
        Ok(t)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in the directory, for messages.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    fn lookup(&self) -> Made {
        Made {
            g: MADE.lock().unwrap_or_else(|p| p.into_inner()),
            dir: self.ident,
        }
    }

    /// What is at `name` (not following a symbolic link): None when nothing; refused (exit 2)
    /// when it is not a regular file with one link. A regular file is recorded as the set's
    /// when first seen.
    pub fn entry(&self, name: &str) -> Result<Option<Stat>> {
        if !is_name(name) {
            return Err(Error::usage(format!(
                "{name:?}: not a file name in {} (one path component)",
                self.path.display()
            )));
        }
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if is_plain(&st) => {
                self.lookup().first_seen(name, Ident::of(&st));
                Ok(Some(st))
            }
            Ok(st) => Err(refusal(&self.join(name), kind(&st))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(Error::failed(format!(
                "{}: {}",
                self.join(name).display(),
                io(e)
            ))),
        }
    }

    /// Opens `name`, never through a symbolic link. `create`: made with O_EXCL (it must not
    /// exist), recorded as iolab's. The opened file must be a regular file with one link (else
    /// an error saying what it is). `custom`: further open flags (O_DIRECT, O_SYNC, ...).
    fn open_at(
        &self,
        name: &str,
        write: bool,
        create: bool,
        custom: libc::c_int,
    ) -> std::io::Result<File> {
        if !is_name(name) {
            return Err(std::io::Error::other(format!("{name:?}: not a file name")));
        }
        let mut flags = OFlags::CLOEXEC
            | OFlags::NOFOLLOW
            | OFlags::from_bits_retain(custom as _)
            | if write { OFlags::RDWR } else { OFlags::RDONLY };
        if create {
            flags |= OFlags::CREATE | OFlags::EXCL;
        } else {
            // a fifo planted at the name must not block the open
            flags |= OFlags::NONBLOCK;
        }
        // openat2 takes a mode only with O_CREAT
        let mode = Mode::from_raw_mode(if create { 0o666 } else { 0 });
        let r = if NO_OPENAT2.load(Ordering::Relaxed) {
            Err(rustix::io::Errno::NOSYS)
        } else {
            rustix::fs::openat2(
                &self.fd,
                name,
                flags,
                mode,
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
            )
        };
        let fd = match r {
            Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
                rustix::fs::openat(&self.fd, name, flags, mode)
            }
            r => r,
        }
        .map_err(|e| match e {
            rustix::io::Errno::LOOP | rustix::io::Errno::MLINK => std::io::Error::other(format!(
                "{}: is a symbolic link, which iolab never follows",
                self.join(name).display()
            )),
            e => io(e),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(io)?;
        if !is_plain(&st) {
            return Err(std::io::Error::other(format!(
                "{}: is {}, not a regular file iolab made",
                self.join(name).display(),
                kind(&st)
            )));
        }
        if !create {
            // SAFETY: fcntl on our own open descriptor.
            unsafe {
                let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
                libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
            }
        }
        let mut made = self.lookup();
        let id = Ident::of(&st);
        if create {
            made.insert(name, id);
        } else {
            made.first_seen(name, id);
        }
        Ok(File::from(fd))
    }

    /// Opens an existing regular file `name` (read and write when `write`).
    pub fn open_existing(
        &self,
        name: &str,
        write: bool,
        custom: libc::c_int,
    ) -> std::io::Result<File> {
        self.open_at(name, write, false, custom)
    }

    /// Makes `name` afresh (O_CREAT | O_EXCL | O_NOFOLLOW), read and write, recorded as iolab's.
    pub fn create_new(&self, name: &str, custom: libc::c_int) -> std::io::Result<File> {
        self.open_at(name, true, true, custom)
    }

    /// Opens `name` for writing: the regular file that is there, else a new one.
    pub fn open_or_create(&self, name: &str, custom: libc::c_int) -> std::io::Result<File> {
        loop {
            match self.open_at(name, true, true, custom) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                r => return r,
            }
            match self.open_at(name, true, false, custom) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                r => return r,
            }
        }
    }

    /// Makes a file with an unpredictable name starting with `prefix` (O_EXCL), for a whole file
    /// written aside and then renamed ([`TargetDir::rename`]). Returns it and its name.
    pub fn create_temp(&self, prefix: &str) -> std::io::Result<(File, String)> {
        use rand::RngExt;
        let mut rng = rand::rng();
        loop {
            let suffix: String = (0..12)
                .map(|_| {
                    char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.random_range(0..36)])
                })
                .collect();
            let name = format!("{prefix}{suffix}");
            match self.create_new(&name, 0) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                r => return r.map(|f| (f, name)),
            }
        }
    }

    /// Renames `from` over `to` in the directory (neither is followed if a symbolic link).
    pub fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(io)?;
        let mut made = self.lookup();
        if let Some(id) = made.remove(from) {
            made.insert(to, id);
        }
        Ok(())
    }

    /// Removes `name` if it is a regular file with one link and, when iolab recorded it (made or
    /// first found it), still the same file (device and inode). `only_recorded`: leave a file
    /// iolab did not record. Returns whether it removed it.
    pub fn remove(&self, name: &str, only_recorded: bool) -> bool {
        let Ok(st) = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
            return false;
        };
        let mut made = self.lookup();
        let ok = is_plain(&st)
            && match made.get(name) {
                Some(id) => id == Ident::of(&st),
                None => !only_recorded,
            };
        if ok && rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).is_ok() {
            made.remove(name);
            return true;
        }
        false
    }

    /// Removes `name` only if it is the file `id` (the file iolab holds open).
    pub fn remove_if(&self, name: &str, id: Ident) -> bool {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if Ident::of(&st) == id && is_plain(&st) => {
                rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).is_ok()
            }
            _ => false,
        }
    }

    /// The names of the directory's entries.
    pub fn names(&self) -> Vec<String> {
        // a second descriptor: reading a directory moves its position
        let Ok(fd) = rustix::fs::openat(
            &self.fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return Vec::new();
        };
        let Ok(dir) = rustix::fs::Dir::read_from(&fd) else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
            .collect()
    }

    /// fsyncs the directory (its entries), where the filesystem can.
    pub fn sync(&self) -> std::io::Result<()> {
        rustix::fs::fsync(&self.fd).map_err(io)
    }

    /// Whether `path` no longer names the directory opened at the start (unmounted, even
    /// lazily, removed or replaced).
    pub fn gone(&self) -> bool {
        rustix::fs::stat(&self.path).map_or(true, |st| Ident::of(&st) != self.ident)
    }

    /// Says once, in one line, that the target disappeared, if it did.
    pub fn say_if_gone(&self) {
        if self.gone() && !self.said_gone.swap(true, Ordering::Relaxed) {
            eprintln!(
                "iolab: warning: {}: the target disappeared during the run (unmounted or replaced); iolab removed only its own files, through the directory it opened at the start, and touched nothing of what {} names now",
                self.path.display(),
                self.path.display()
            );
        }
    }

    pub fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn never_through_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(outside.path(), b"keep").unwrap();
        symlink(outside.path(), d.path().join("a")).unwrap();
        symlink("/nonexistent-iolab", d.path().join("b")).unwrap();
        let t = TargetDir::open(d.path()).unwrap();
        assert!(t.entry("a").is_err());
        assert!(t.entry("b").is_err());
        assert!(t.open_existing("a", true, 0).is_err());
        assert!(t.create_new("b", 0).is_err());
        assert!(t.open_or_create("b", 0).is_err());
        assert!(!t.remove("a", false));
        assert!(std::fs::symlink_metadata(d.path().join("b")).is_ok());
        assert_eq!(std::fs::read(outside.path()).unwrap(), b"keep");
        assert!(!Path::new("/nonexistent-iolab").exists());
    }

    /// Kernels before 5.6 (or a seccomp filter) have no openat2: openat with O_NOFOLLOW refuses
    /// the same names. (Other tests running meanwhile take the fallback too, equally safe.)
    #[test]
    fn without_openat2_the_fallback_refuses_the_same() {
        NO_OPENAT2.store(true, Ordering::Relaxed);
        never_through_a_symlink();
    }

    /// A directory iolab made is removed only while it is that directory and empty: not one
    /// that stands at its path later (a filesystem unmounted under it, a directory moved
    /// away and another made), nor a link put in its place.
    #[test]
    fn removes_only_the_directory_it_made() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("set");
        make_dir(&a).unwrap();
        remove_made_dir(&a);
        assert!(!a.exists(), "its own empty directory is removed");
        // the one it made moved away; the user's directory of that name stays
        make_dir(&a).unwrap();
        std::fs::rename(&a, d.path().join("moved")).unwrap();
        std::fs::create_dir(&a).unwrap();
        remove_made_dir(&a);
        assert!(a.is_dir(), "another directory at the path is left");
        remove_made_tree(&a);
        assert!(a.is_dir(), "and never emptied");
        // a link put in its place, to a directory with the user's files
        std::fs::remove_dir(&a).unwrap();
        let b = d.path().join("b");
        make_dir(&b).unwrap();
        std::fs::rename(&b, d.path().join("b-moved")).unwrap();
        let user = d.path().join("user");
        std::fs::create_dir(&user).unwrap();
        std::fs::write(user.join("keep"), b"x").unwrap();
        std::os::unix::fs::symlink(&user, &b).unwrap();
        remove_made_tree(&b);
        assert!(std::fs::symlink_metadata(&b).unwrap().is_symlink());
        assert_eq!(std::fs::read(user.join("keep")).unwrap(), b"x");
        // a directory it made that holds something is left by remove_made_dir, removed whole by
        // remove_made_tree
        let c = d.path().join("c");
        make_dir(&c).unwrap();
        std::fs::write(c.join("f"), b"x").unwrap();
        remove_made_dir(&c);
        assert!(c.join("f").exists());
        remove_made_tree(&c);
        assert!(!c.exists());
        // a path it never made is never removed
        let never = d.path().join("never");
        std::fs::create_dir(&never).unwrap();
        remove_made_dir(&never);
        assert!(never.is_dir());
    }

    #[test]
    fn removes_only_the_file_it_made() {
        let d = tempfile::tempdir().unwrap();
        let t = TargetDir::open(d.path()).unwrap();
        t.create_new("f", 0).unwrap();
        // replaced under iolab: the new file is not iolab's (the old one kept, so its inode
        // number is not reused)
        std::fs::rename(d.path().join("f"), d.path().join("old")).unwrap();
        std::fs::write(d.path().join("f"), b"user").unwrap();
        assert!(!t.remove("f", true));
        assert!(!t.remove("f", false));
        assert_eq!(std::fs::read(d.path().join("f")).unwrap(), b"user");
        let (_, name) = t.create_temp(".x.").unwrap();
        t.rename(&name, "g").unwrap();
        assert!(t.remove("g", true));
        assert!(!t.gone());
    }
}
