//! The lock of a file set (a lock file in `--dir`, an flock on a `--device`), held for a whole
//! run, prepare or cleanup; it holds the directory's handle (system::target).

use crate::error::{Error, Result};
use crate::system::target::{Ident, TargetDir};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Arc;

/// The lock file of a file set: `DIR/.iolab-lock`, flock(2)ed for the whole run, prepare or
/// cleanup, holding the holder's pid and command line.
pub const LOCK_NAME: &str = ".iolab-lock";

/// How long a second iolab waits for the lock of a set before it refuses.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// An exclusive lock on the file set in a directory, released (and the lock file removed when
/// this holder created it) on drop. It holds the directory's handle (system::target) for the
/// whole command: every file of the set is opened and removed through it.
#[derive(Debug)]
pub struct SetLock {
    file: File,
    /// The directory and the lock file's device and inode; None for a `--device`.
    dir: Option<(Arc<TargetDir>, Ident)>,
    created: bool,
}

impl Drop for SetLock {
    fn drop(&mut self) {
        // Unlinked while still locked: a waiter that then gets the lock of the removed file sees
        // that the path no longer names it and starts over. Only the file this holder made.
        if let Some((t, id)) = &self.dir {
            t.say_if_gone();
            if self.created {
                t.remove_if(LOCK_NAME, *id);
            }
        }
        // SAFETY: unlocking our own open descriptor (closing it would too).
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Takes the lock of the set in `dir`, waiting up to [`LOCK_WAIT`] for another iolab to finish;
/// then refuses with one line naming the holder (pid and command line from the lock file).
/// A block device (`--device`) holds no lock file: its node itself is flock(2)ed, the lock
/// partitioning tools and udev also honour.
/// The directory is held (system::target) from here on; a lock file that is not a regular file
/// iolab made (a symbolic link, a fifo, a directory) is refused in one line (exit 2), never
/// truncated or written through.
pub fn lock(dir: &Path) -> Result<SetLock> {
    use std::io::{Read, Write};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if std::fs::metadata(dir).is_ok_and(|m| m.file_type().is_block_device()) {
        return lock_device(dir);
    }
    let path = dir.join(LOCK_NAME);
    let t = TargetDir::hold(dir)
        .map_err(|e| Error::failed(format!("locking the file set ({}): {e}", path.display())))?;
    let t0 = std::time::Instant::now();
    let fail = |e: std::io::Error| {
        Error::failed(format!("locking the file set ({}): {e}", path.display()))
    };
    loop {
        t.entry(LOCK_NAME)?;
        let (mut file, created) = match t.create_new(LOCK_NAME, 0) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                match t.open_existing(LOCK_NAME, true, 0) {
                    Ok(f) => (f, false),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(fail(e)),
                }
            }
            Err(e) => return Err(fail(e)),
        };
        // SAFETY: flock on our own open descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            // The holder before us may have removed the file meanwhile: then lock the new one.
            let mine = file.metadata().map(|m| Ident {
                dev: m.dev(),
                ino: m.ino(),
            });
            let same = match (t.entry(LOCK_NAME), &mine) {
                (Ok(Some(st)), Ok(id)) => st.st_ino == id.ino && st.st_dev == id.dev,
                _ => false,
            };
            let Ok(id) = mine else { continue };
            if !same {
                continue;
            }
            let cmd = std::env::args().collect::<Vec<_>>().join(" ");
            let _ = file
                .set_len(0)
                .and_then(|_| write!(file, "{}\n{cmd}\n", std::process::id()));
            return Ok(SetLock {
                file,
                dir: Some((t, id)),
                created,
            });
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(fail(e));
        }
        if t0.elapsed() >= LOCK_WAIT {
            let mut s = String::new();
            let _ = file.read_to_string(&mut s);
            let mut l = s.lines();
            let pid = l.next().unwrap_or("").trim();
            let cmd = l.next().unwrap_or("").trim();
            let who = match (pid.is_empty(), cmd.is_empty()) {
                (true, _) => "another iolab".to_string(),
                (false, true) => format!("another iolab (pid {pid})"),
                (false, false) => format!("another iolab (pid {pid}: {cmd})"),
            };
            return Err(Error::failed(format!(
                "--dir {}: the file set is in use by {who}, which holds {}; wait for it to end or use another --dir",
                dir.display(),
                path.display()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The lock of a block device target: an exclusive flock(2) on the device node, waiting up to
/// [`LOCK_WAIT`].
fn lock_device(dev: &Path) -> Result<SetLock> {
    let file = File::open(dev).map_err(|e| {
        Error::failed(format!(
            "--device {}: opening it to lock it: {e}",
            dev.display()
        ))
    })?;
    let t0 = std::time::Instant::now();
    loop {
        // SAFETY: flock on our own open descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(SetLock {
                file,
                dir: None,
                created: false,
            });
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(Error::failed(format!(
                "--device {}: locking it: {e}",
                dev.display()
            )));
        }
        if t0.elapsed() >= LOCK_WAIT {
            return Err(Error::failed(format!(
                "--device {}: in use by another program that holds a lock on it (flock: another iolab, a partitioning tool or udev); wait for it to end or use another --device",
                dev.display()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
