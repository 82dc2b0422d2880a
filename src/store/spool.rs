//! The spool: documents a store did not take (exit 4), kept in files until the next command that
//! writes into that store saves them, or `iolab import FILE` does (docs/store.md, docs/safety.md
//! section 4).
//!
//! iolab runs as root, so a spooled document is a result root will save into its store: only
//! this user may have written it. A spool folder is used only when it is owned by this user and
//! no one else may write in it (a folder iolab makes is 0700); it is opened once
//! (`O_DIRECTORY|O_NOFOLLOW`) and every file in it is created, claimed, read and removed through
//! that handle. A file is taken only when it is a regular file (opened with `O_NOFOLLOW`: never
//! a symlink) owned by this user and not writable by group or others. Claiming is an exclusive
//! `flock` held while the file is saved and removed, and a claimer that finds the name gone or
//! pointing elsewhere once it holds the lock leaves it (another process saved it): one process
//! saves each file. The store's unique document id is the second guard: a document saved
//! before is never saved again.

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The largest document a spool file is read up to (a run document with per-second series of a
/// long sweep is a few MiB).
const MAX_DOC_BYTES: u64 = 256 << 20;

/// Where a document that could not be saved in `store` is kept, in the order tried:
/// `$XDG_STATE_HOME/iolab/unsaved` (else `~/.local/state/iolab/unsaved`), then `<store>.unsaved`
/// beside an SQLite store. (Not the temporary directory: anyone can make folders there.)
pub fn dirs(store: &Path) -> Vec<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|s| !s.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        });
    // Beside an SQLite file; a PostgreSQL store (named by its URL) has no folder of its own.
    let beside = store
        .to_str()
        .is_none_or(|s| super::location::url_scheme(s).is_none())
        .then(|| {
            let mut b = store.as_os_str().to_owned();
            b.push(".unsaved");
            PathBuf::from(b)
        });
    state
        .map(|s| s.join("iolab/unsaved"))
        .into_iter()
        .chain(beside)
        .collect()
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// One spool folder, opened once and checked: owned by this user, writable by no one else.
pub struct Spool {
    dir: OwnedFd,
    /// The folder as messages name it.
    pub path: PathBuf,
}

/// A spool file this process holds the claim of (an exclusive `flock`), with what it says.
pub struct Claimed {
    /// The open file: its exclusive flock is the claim, held while this lives.
    _lock: OwnedFd,
    name: String,
    /// The file as messages name it.
    pub path: PathBuf,
    pub text: String,
}

impl Spool {
    /// Opens the spool folder `path` (made, 0700, with its missing parents when `create`). A
    /// folder another user owns, or that group or others may write, a symlink, or no folder at
    /// all, is refused: the error says why (None: it does not exist and `create` is false).
    pub fn open(path: &Path, create: bool) -> Option<std::result::Result<Spool, String>> {
        if create {
            use std::os::unix::fs::DirBuilderExt;
            if let Err(e) = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(path)
            {
                return Some(Err(format!("{}: {e}", path.display())));
            }
        }
        let dir = match rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(d) => d,
            Err(rustix::io::Errno::NOENT) if !create => return None,
            Err(e) => {
                return Some(Err(format!(
                    "{}: {} (a spool folder must be a folder, not a symlink)",
                    path.display(),
                    std::io::Error::from(e)
                )));
            }
        };
        Some(Self::checked(dir, path))
    }

    fn checked(dir: OwnedFd, path: &Path) -> std::result::Result<Spool, String> {
        let st = rustix::fs::fstat(&dir).map_err(|e| format!("{}: {e}", path.display()))?;
        if st.st_uid != euid() {
            return Err(format!(
                "{} is owned by uid {}, not by this user (uid {}): not used to keep results",
                path.display(),
                st.st_uid,
                euid()
            ));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(format!(
                "{} may be written by group or others (mode {:o}): not used to keep results",
                path.display(),
                st.st_mode & 0o7777
            ));
        }
        Ok(Spool {
            dir,
            path: path.to_path_buf(),
        })
    }

    /// Writes `text` as the file `name` in the folder, whole or absent: into a temporary name
    /// (created with `O_EXCL|O_NOFOLLOW`, mode 0600, synced), then renamed.
    pub fn keep(&self, name: &str, text: &[u8]) -> std::result::Result<PathBuf, String> {
        let tmp = format!(".{name}.{:016x}.tmp", rand::random::<u64>());
        let made = (|| -> std::io::Result<()> {
            let fd = rustix::fs::openat(
                &self.dir,
                tmp.as_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )?;
            let mut f = std::fs::File::from(fd);
            f.write_all(text)?;
            f.sync_all()?;
            rustix::fs::renameat(&self.dir, tmp.as_str(), &self.dir, name)?;
            rustix::fs::fsync(&self.dir)?;
            Ok(())
        })();
        let p = self.path.join(name);
        made.map(|()| p.clone()).map_err(|e| {
            let _ = rustix::fs::unlinkat(&self.dir, tmp.as_str(), AtFlags::empty());
            format!("{}: {e}", p.display())
        })
    }

    /// The names of the files in the folder that end with `suffix`, sorted (oldest first: names
    /// start with the time).
    pub fn names(&self, suffix: &str) -> Vec<String> {
        let Ok(dir) = rustix::fs::Dir::read_from(&self.dir) else {
            return Vec::new();
        };
        let mut v: Vec<String> = dir
            .flatten()
            .filter_map(|e| e.file_name().to_str().ok().map(String::from))
            .filter(|n| n.ends_with(suffix) && !n.starts_with('.'))
            .collect();
        v.sort();
        v
    }

    /// Claims the file `name` to save it: Ok(None) when another process holds it or has saved
    /// and removed it; an error (saying why, the file left as it is) for anything but a regular
    /// file of this user that no one else may write.
    pub fn claim(&self, name: &str) -> std::result::Result<Option<Claimed>, String> {
        let path = self.path.join(name);
        let bad = |why: String| format!("{} is not taken: {why}", path.display());
        let file = match rustix::fs::openat(
            &self.dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(f) => f,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(rustix::io::Errno::LOOP) => return Err(bad("a symlink".into())),
            Err(e) => return Err(bad(std::io::Error::from(e).to_string())),
        };
        let st = rustix::fs::fstat(&file).map_err(|e| bad(e.to_string()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(bad("not a regular file".into()));
        }
        if st.st_uid != euid() {
            return Err(bad(format!(
                "owned by uid {}, not by this user (uid {})",
                st.st_uid,
                euid()
            )));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(bad(format!(
                "group or others may write it (mode {:o})",
                st.st_mode & 0o7777
            )));
        }
        if st.st_size as u64 > MAX_DOC_BYTES {
            return Err(bad(format!(
                "{} bytes, more than a document iolab writes ({MAX_DOC_BYTES})",
                st.st_size
            )));
        }
        match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
            Err(e) => return Err(bad(e.to_string())),
        }
        // Holding the claim: a process that saved it before removed the name while it held the
        // claim, so the name is gone or is another file now.
        match rustix::fs::statat(&self.dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(now) if now.st_dev == st.st_dev && now.st_ino == st.st_ino => {}
            _ => return Ok(None),
        }
        let mut text = String::new();
        let mut f = std::fs::File::from(file);
        (&mut f)
            .take(MAX_DOC_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| bad(e.to_string()))?;
        Ok(Some(Claimed {
            _lock: f.into(),
            name: name.to_string(),
            path,
            text,
        }))
    }

    /// Removes a claimed file (its document is in the store), then lets the claim go.
    pub fn remove(&self, c: Claimed) -> std::io::Result<()> {
        let r = rustix::fs::unlinkat(&self.dir, c.name.as_str(), AtFlags::empty());
        let _ = rustix::fs::fsync(&self.dir);
        // the claim ends with the file's handle
        drop(c);
        r.map_err(Into::into)
    }

    /// The folder `file` is in as a spool, when it is usable as one (this user's, writable by no
    /// one else), and the file's name in it: `iolab import` of a kept file removes it once saved.
    pub fn holding(file: &Path) -> Option<(Spool, String)> {
        let parent = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = file.file_name()?.to_str()?.to_string();
        Some((Spool::open(parent, false)?.ok()?, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A kept file is claimed by one holder at a time; once removed, a later claim finds
    /// nothing; the temporary name of a write is never listed.
    #[test]
    fn a_kept_file_is_claimed_once_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("state/iolab/unsaved");
        let spool = Spool::open(&dir, true).unwrap().unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o700);
        let p = spool.keep("1-for-x.json", b"{}\n").unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o600
        );
        assert_eq!(spool.names("-for-x.json"), ["1-for-x.json"]);
        let other = Spool::open(&dir, false).unwrap().unwrap();
        let c = spool.claim("1-for-x.json").unwrap().unwrap();
        assert_eq!(c.text, "{}\n");
        assert!(other.claim("1-for-x.json").unwrap().is_none(), "held");
        spool.remove(c).unwrap();
        assert!(other.claim("1-for-x.json").unwrap().is_none(), "gone");
        assert!(spool.names("").is_empty());
    }

    /// A folder others may write, and a symlink or a writable file in a good one, are refused.
    #[test]
    fn what_others_could_have_written_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = Spool::open(&open, false).unwrap().err().unwrap();
        assert!(e.contains("group or others"), "{e}");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path().join("good"), &link).unwrap();
        let good = Spool::open(&d.path().join("good"), true).unwrap().unwrap();
        assert!(Spool::open(&link, false).unwrap().is_err());
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("good/2-for-x.json")).unwrap();
        let e = good.claim("2-for-x.json").err().unwrap();
        assert!(e.contains("symlink"), "{e}");
        let w = d.path().join("good/3-for-x.json");
        std::fs::write(&w, "{}").unwrap();
        std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = good.claim("3-for-x.json").err().unwrap();
        assert!(e.contains("may write it"), "{e}");
        assert!(good.claim("4-for-x.json").unwrap().is_none());
    }
}
