//! fio's file-metadata engines (`engines/fileoperations.c`): `--engine filecreate`, `filestat`
//! and `filedelete`. Each read or write is one operation on a file of the thread's own in
//! `--dir` (fio's `nrfiles` files, one operation each): create it (`openat` of one name
//! component through the directory handle with O_CREAT | O_EXCL | O_NOFOLLOW, then close), stat it (`fstatat`, never
//! following a link) or remove it (`unlinkat`, only when it is still the file iolab made: same
//! device and inode). No data moves and nothing else in the directory is touched.
//!
//! The names (`iolab-OP.PID.N.I`, N the thread's engine instance) are made when the thread
//! starts, so an operation allocates nothing and takes no lock. The files filestat and
//! filedelete work on are made before the phase's clock starts ([`make_ahead`]), as fio makes
//! them in its setup stage: neither in the job's runtime nor in its `runtime=` cap. Whatever
//! the thread made and is still there, and still its, is removed when it ends: these engines
//! leave nothing behind (fio keeps its files).

use super::ops::SyncEngine;
use super::ops::{Ahead, Shared};
use crate::model::job::{EngineKind, Job, Limit};
use crate::system::target::TargetDir;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::CString;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Engine instances made by this process (each thread's names are its own).
static INSTANCE: AtomicU64 = AtomicU64::new(0);

/// What each operation does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Create,
    Stat,
    Delete,
}

/// One thread's files: their names, what each is once made (device, inode) and whether it is
/// still there.
struct Files {
    dir: Arc<TargetDir>,
    names: Vec<CString>,
    made: Vec<Option<(u64, u64)>>,
    next: usize,
    op: Op,
}

fn errno_of(e: rustix::io::Errno) -> i32 {
    e.raw_os_error()
}

/// For each thread of a filestat or filedelete `job` in `dir`, its files made now, before the
/// phase's clock starts (fio's setup stage); none for the other engines. A thread's engine
/// takes its own when it opens; what is not taken is removed when dropped.
pub fn make_ahead(job: &Job, dir: &std::path::Path) -> std::io::Result<Vec<Ahead>> {
    let op = match job.engine {
        EngineKind::Filestat => Op::Stat,
        EngineKind::Filedelete => Op::Delete,
        _ => return Ok(Vec::new()),
    };
    (0..job.threads)
        .map(|_| {
            let f: Box<dyn std::any::Any + Send> = Box::new(Files::open(dir, job, op)?);
            Ok(std::sync::Mutex::new(Some(f)))
        })
        .collect()
}

impl Files {
    /// The thread's files: those made ahead for it ([`make_ahead`]), else its own made now.
    fn of_thread(sh: &Shared, op: Op) -> std::io::Result<Files> {
        let made = sh
            .ahead
            .and_then(|a| a.lock().ok()?.take())
            .and_then(|b| b.downcast::<Files>().ok());
        match made {
            Some(f) => Ok(*f),
            None => Files::open(sh.dir, sh.job, op),
        }
    }

    fn open(dir: &std::path::Path, job: &Job, op: Op) -> std::io::Result<Files> {
        let dir = TargetDir::of(dir)?;
        // one file per operation: the thread's share of --ops (at most ceil(ops / threads))
        let Limit::Ops(ops) = job.limit else {
            return Err(std::io::Error::other(
                "a file engine needs --ops (one file per operation)",
            ));
        };
        let count = ops.div_ceil(u64::from(job.threads.max(1))) as usize;
        let tag = match op {
            Op::Create => "create",
            Op::Stat => "stat",
            Op::Delete => "delete",
        };
        let inst = INSTANCE.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let names = (0..count)
            .map(|i| CString::new(format!("iolab-{tag}.{pid}.{inst}.{i}")).expect("no NUL"))
            .collect();
        let mut f = Files {
            dir,
            names,
            made: vec![None; count],
            next: 0,
            op,
        };
        if op != Op::Create {
            for i in 0..count {
                f.create(i).map_err(std::io::Error::from_raw_os_error)?;
            }
        }
        Ok(f)
    }

    /// Makes file `i` (O_EXCL: never an existing name) and records what it is.
    fn create(&mut self, i: usize) -> Result<(), i32> {
        let flags =
            OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // one name component beneath the directory handle, O_CREAT | O_EXCL: an existing name,
        // a symbolic link included, is EEXIST, never followed or reused
        let fd = rustix::fs::openat(
            self.dir.as_fd(),
            self.names[i].as_c_str(),
            flags,
            Mode::from_raw_mode(0o600),
        )
        .map_err(errno_of)?;
        let st = rustix::fs::fstat(&fd).map_err(errno_of)?;
        self.made[i] = Some((st.st_dev, st.st_ino));
        Ok(())
    }

    /// Whether file `i` is still the regular file iolab made.
    fn is_ours(&self, i: usize) -> Result<bool, i32> {
        let st = rustix::fs::statat(
            self.dir.as_fd(),
            self.names[i].as_c_str(),
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .map_err(errno_of)?;
        Ok(self.made[i] == Some((st.st_dev, st.st_ino))
            && st.st_mode & libc::S_IFMT == libc::S_IFREG)
    }

    /// Removes file `i` if it is still the file iolab made.
    fn remove(&mut self, i: usize) -> Result<(), i32> {
        if !self.is_ours(i)? {
            return Err(libc::EPERM);
        }
        rustix::fs::unlinkat(self.dir.as_fd(), self.names[i].as_c_str(), AtFlags::empty())
            .map_err(errno_of)?;
        self.made[i] = None;
        Ok(())
    }

    /// One operation on the next file.
    #[inline]
    fn op(&mut self) -> Result<(), i32> {
        let i = self.next;
        if i >= self.names.len() {
            return Err(libc::ENOSPC);
        }
        self.next += 1;
        match self.op {
            Op::Create => self.create(i),
            Op::Stat => self.is_ours(i).map(|_| ()),
            Op::Delete => self.remove(i),
        }
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        for i in 0..self.names.len() {
            if self.made[i].is_some() {
                let _ = self.remove(i);
            }
        }
    }
}

macro_rules! file_engine {
    ($(#[$doc:meta])* $name:ident, $kind:ident, $op:expr) => {
        $(#[$doc])*
        pub struct $name(Files);

        impl<'a> SyncEngine<'a> for $name {
            const KIND: EngineKind = EngineKind::$kind;

            fn open(sh: &Shared<'a>) -> std::io::Result<Self> {
                Files::of_thread(sh, $op).map($name)
            }

            #[inline]
            fn read(&mut self, _file: u32, _off: u64, _buf: &mut [u8]) -> Result<(), i32> {
                self.0.op()
            }

            #[inline]
            fn write(&mut self, _file: u32, _off: u64, _buf: &[u8]) -> Result<(), i32> {
                self.0.op()
            }

            /// Nothing to sync: no descriptor stays open.
            #[inline]
            fn fsync(&mut self, _file: u32) -> Result<(), i32> {
                Ok(())
            }
        }
    };
}

file_engine!(
    /// `--engine filecreate`: each operation creates a file.
    Create,
    Filecreate,
    Op::Create
);
file_engine!(
    /// `--engine filestat`: each operation stats a file.
    Stat,
    Filestat,
    Op::Stat
);
file_engine!(
    /// `--engine filedelete`: each operation removes a file.
    Delete,
    Filedelete,
    Op::Delete
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::Mode;

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    /// filestat's and filedelete's files are made ahead, each thread's own (fio's setup stage,
    /// before the clock): all there before any operation, and removed when not taken;
    /// filecreate makes none ahead.
    #[test]
    fn files_to_stat_or_delete_are_made_ahead_and_removed_when_not_used() {
        let d = tempfile::tempdir().unwrap();
        let mut job = super::super::opgen::tests::job(Mode::Rndrd, 2);
        job.limit = Limit::Ops(10);
        job.engine = EngineKind::Filecreate;
        assert!(make_ahead(&job, d.path()).unwrap().is_empty());
        for engine in [EngineKind::Filestat, EngineKind::Filedelete] {
            job.engine = engine;
            let ahead = make_ahead(&job, d.path()).unwrap();
            assert_eq!(ahead.len(), 2);
            // 5 each, their names the thread's own
            let made = names(d.path());
            assert_eq!(made.len(), 10, "{made:?}");
            let tag = if engine == EngineKind::Filestat {
                "iolab-stat."
            } else {
                "iolab-delete."
            };
            assert!(made.iter().all(|n| n.starts_with(tag)), "{made:?}");
            // a thread's files: one operation each, then none left (filestat: ENOSPC)
            let mine = ahead[0].lock().unwrap().take().unwrap();
            let mut f = *mine.downcast::<Files>().unwrap();
            for _ in 0..5 {
                f.op().unwrap();
            }
            assert_eq!(f.op(), Err(libc::ENOSPC));
            drop(f);
            drop(ahead);
            assert!(names(d.path()).is_empty(), "{:?}", names(d.path()));
        }
    }
}
