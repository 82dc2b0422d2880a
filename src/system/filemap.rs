//! The files a capture maps to tell each request's file (docs/capture.md, "Files"): the files
//! under `--dir`, or those a process tree (`--pid`) or a cgroup's processes (`--cgroup`) hold
//! open and those under their working directory (PostgreSQL's is its data directory). Each is
//! mapped with FIEMAP (`system::extents`: read-only, nothing written back) onto the captured
//! disk's bytes; a pass repeats every half second on a thread of its own, mapping again only
//! the files that changed (size, times) or had blocks not allocated yet (delayed allocation).
//!
//! It only reads: directories (no symbolic link followed, no other filesystem entered),
//! `/proc/PID/{fd,cwd,stat}`, `cgroup.procs`, and each file's extents through a read-only open.

use crate::spec::roots::Roots;
use crate::system::extents::{self, FIEMAP_EXTENT_DELALLOC, FIEMAP_EXTENT_UNKNOWN};
use crate::system::fsinfo;
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How often the files are mapped again.
const PASS: Duration = Duration::from_millis(500);
/// Files looked at in one pass at most: past it, the rest are left unmapped (a warning).
pub const MAX_FILES: usize = 200_000;

/// Whose files to map.
#[derive(Debug, Clone)]
pub enum Select {
    /// The files under a folder, named by their path under it.
    Dir(PathBuf),
    /// A process and its descendants.
    Tree(i32),
    /// The processes of a cgroup (v1 or v2) and of the cgroups under it.
    Cgroup(PathBuf),
}

/// What one pass found: the extents of files new or changed, and the processes selected.
pub struct Update {
    /// When the pass began (CLOCK_MONOTONIC, ns): a request issued before it had its blocks
    /// allocated by then, so its file is in this update or an earlier one.
    pub since_ns: u64,
    /// (first byte on the disk, length, file) of each extent.
    pub extents: Vec<(u64, u64, String)>,
    /// The selected processes (`--pid`, `--cgroup`).
    pub pids: Vec<i32>,
    /// Files mapped so far.
    pub files: u64,
    /// Said once: the file limit reached, FIEMAP not supported.
    pub warnings: Vec<String>,
}

/// Where a file was when last mapped.
struct Seen {
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    /// It had extents not allocated yet (delayed allocation): mapped again next pass.
    pending: bool,
}

struct Mapper {
    select: Select,
    sys: PathBuf,
    proc: PathBuf,
    /// The captured disk's name.
    disk: String,
    /// st_dev → the byte offset of its filesystem on the disk (None: not on the disk).
    offsets: HashMap<u64, Option<u64>>,
    seen: HashMap<(u64, u64), Seen>,
    warned_full: bool,
    warned_fiemap: bool,
    /// The selected processes' working directories seen so far: walked on every pass, also
    /// after their process has ended (a short-lived writer's files are mapped after it).
    cwds: Vec<PathBuf>,
}

impl Mapper {
    /// Where `dev`'s filesystem starts on the captured disk, if it is on it.
    fn offset(&mut self, dev: u64) -> Option<u64> {
        let (sys, disk) = (&self.sys, &self.disk);
        *self.offsets.entry(dev).or_insert_with(|| {
            let bd = fsinfo::block_dev_of(sys, dev)?;
            if &bd.name != disk {
                return None;
            }
            match &bd.part_dir {
                Some(p) => fs::read_to_string(p.join("start"))
                    .ok()?
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .map(|s| s * 512),
                None => Some(0),
            }
        })
    }

    /// Maps `open()`'s file, named `name`, when it is new or changed.
    fn file(
        &mut self,
        md: &fs::Metadata,
        name: &str,
        open: impl Fn() -> Option<File>,
        u: &mut Update,
    ) {
        let Some(off) = self.offset(md.dev()) else {
            return;
        };
        let key = (md.dev(), md.ino());
        let (mtime_ns, ctime_ns) = (
            md.mtime() * 1_000_000_000 + md.mtime_nsec(),
            md.ctime() * 1_000_000_000 + md.ctime_nsec(),
        );
        if let Some(s) = self.seen.get(&key)
            && !s.pending
            && (s.size, s.mtime_ns, s.ctime_ns) == (md.size(), mtime_ns, ctime_ns)
        {
            return;
        }
        let Some(f) = open() else { return };
        // the path may name another file by now
        match f.metadata() {
            Ok(m) if m.is_file() && (m.dev(), m.ino()) == key => {}
            _ => return,
        }
        let mut pending = false;
        let r = extents::each_extent(&f, |e| {
            if e.flags & (FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN) != 0 {
                pending = true;
            } else {
                u.extents
                    .push((off + e.physical, e.length, name.to_string()));
            }
        });
        if let Err(e) = r {
            if !self.warned_fiemap {
                self.warned_fiemap = true;
                u.warnings.push(format!(
                    "{name}: its filesystem does not say where its blocks are (FIEMAP: {e}): requests to such files have no file"
                ));
            }
            return;
        }
        self.seen.insert(
            key,
            Seen {
                size: md.size(),
                mtime_ns,
                ctime_ns,
                pending,
            },
        );
    }

    /// The regular files under `root` (no symbolic link followed, no other disk entered),
    /// named `prefix` + their path under it.
    fn walk(&mut self, root: &Path, prefix: &str, looked: &mut usize, u: &mut Update) {
        let mut stack = vec![(root.to_path_buf(), prefix.to_string())];
        while let Some((dir, name)) = stack.pop() {
            let Ok(rd) = fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                if *looked >= MAX_FILES {
                    self.full(u);
                    return;
                }
                *looked += 1;
                let Ok(md) = fs::symlink_metadata(e.path()) else {
                    continue;
                };
                let child = if name.is_empty() {
                    e.file_name().to_string_lossy().into_owned()
                } else {
                    format!("{name}/{}", e.file_name().to_string_lossy())
                };
                if md.is_dir() {
                    if self.offset(md.dev()).is_some() {
                        stack.push((e.path(), child));
                    }
                } else if md.is_file() {
                    let p = e.path();
                    self.file(&md, &child, || open_nofollow(&p), u);
                }
            }
        }
    }

    fn full(&mut self, u: &mut Update) {
        if !self.warned_full {
            self.warned_full = true;
            u.warnings.push(format!(
                "over {MAX_FILES} files to map: the rest are left out (their requests have no file)"
            ));
        }
    }

    /// The selected processes: a tree's, or a cgroup's and its children's.
    fn pids(&self) -> Vec<i32> {
        match &self.select {
            Select::Dir(_) => Vec::new(),
            Select::Tree(root) => tree_of(&self.proc, *root),
            Select::Cgroup(cg) => cgroup_pids(cg),
        }
    }

    /// One pass.
    fn pass(&mut self, since_ns: u64) -> Update {
        let mut u = Update {
            since_ns,
            extents: Vec::new(),
            pids: Vec::new(),
            files: 0,
            warnings: Vec::new(),
        };
        let mut looked = 0usize;
        if let Select::Dir(d) = &self.select {
            let d = d.clone();
            self.walk(&d, "", &mut looked, &mut u);
        } else {
            let pids = self.pids();
            for &pid in &pids {
                if let Ok(cwd) = fs::read_link(self.proc.join(pid.to_string()).join("cwd"))
                    && cwd != Path::new("/")
                    && cwd.is_absolute()
                    && !self.cwds.contains(&cwd)
                {
                    self.cwds.push(cwd);
                }
            }
            let mut walked = HashSet::new();
            for cwd in self.cwds.clone() {
                // a folder under another already walked is not walked twice
                if walked.iter().any(|w: &PathBuf| cwd.starts_with(w)) {
                    continue;
                }
                walked.insert(cwd.clone());
                let name = cwd.to_string_lossy().into_owned();
                self.walk(&cwd, &name, &mut looked, &mut u);
            }
            for &pid in &pids {
                let pd = self.proc.join(pid.to_string());
                let Ok(rd) = fs::read_dir(pd.join("fd")) else {
                    continue;
                };
                for e in rd.flatten() {
                    if looked >= MAX_FILES {
                        self.full(&mut u);
                        break;
                    }
                    looked += 1;
                    let fdp = e.path();
                    // the open file itself (the magic link is followed: it names no path)
                    let Ok(md) = fs::metadata(&fdp) else { continue };
                    if !md.is_file() {
                        continue;
                    }
                    let Ok(target) = fs::read_link(&fdp) else {
                        continue;
                    };
                    let t = target.to_string_lossy();
                    let name = t.strip_suffix(" (deleted)").unwrap_or(&t).to_string();
                    self.file(&md, &name, || open_fd(&fdp), &mut u);
                }
            }
            u.pids = pids;
        }
        u.files = self.seen.len() as u64;
        u
    }
}

/// A read-only open of a regular file, through no symbolic link, not blocking on a FIFO that
/// took its place, not touching its access time where the kernel allows.
fn open_nofollow(p: &Path) -> Option<File> {
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(p)
        .ok()
}

/// A read-only open of a process's open file (`/proc/PID/fd/N`).
fn open_fd(p: &Path) -> Option<File> {
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(p)
        .ok()
}

/// `root` and its descendants, from each process's parent in `/proc/PID/stat`.
pub fn tree_of(proc: &Path, root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for e in fs::read_dir(proc).into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(ppid) = fs::read_to_string(e.path().join("stat"))
            .ok()
            .and_then(|s| parent_of(&s))
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    if !proc.join(root.to_string()).is_dir() {
        return out;
    }
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        out.push(p);
        if let Some(c) = children.get(&p) {
            stack.extend(c);
        }
    }
    out
}

/// The parent pid of a `/proc/PID/stat` line (after the command's closing parenthesis: the
/// command may hold spaces and parentheses).
pub fn parent_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The processes of cgroup folder `cg` and every cgroup under it (`cgroup.procs`).
pub fn cgroup_pids(cg: &Path) -> Vec<i32> {
    let mut out = Vec::new();
    let mut stack = vec![cg.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(s) = fs::read_to_string(d.join("cgroup.procs")) {
            out.extend(s.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
        }
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    out
}

/// The mapping thread: a pass now and every half second until `stop`, then one more that
/// began after `stop` was set.
pub struct Running {
    pub updates: mpsc::Receiver<Update>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    /// Ends the passes; the last one began after this call.
    pub fn finish(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Starts mapping `select`'s files onto disk `disk` (its name under /sys/class/block).
pub fn start(select: Select, disk: &str, roots: &Roots, now_ns: fn() -> u64) -> Running {
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let mut m = Mapper {
        select,
        sys: roots.sys.clone(),
        proc: roots.proc.clone(),
        disk: disk.to_string(),
        offsets: HashMap::new(),
        seen: HashMap::new(),
        warned_full: false,
        warned_fiemap: false,
        cwds: Vec::new(),
    };
    let st = stop.clone();
    let handle = std::thread::Builder::new()
        .name("iolab-filemap".into())
        .spawn(move || {
            loop {
                let last = st.load(Ordering::SeqCst);
                let u = m.pass(now_ns());
                if tx.send(u).is_err() || last {
                    return;
                }
                let mut slept = Duration::ZERO;
                while slept < PASS && !st.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(10));
                    slept += Duration::from_millis(10);
                }
            }
        })
        .ok();
    Running {
        updates: rx,
        stop,
        handle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_from_stat_lines() {
        assert_eq!(parent_of("123 (postgres) S 1 123 123 0"), Some(1));
        assert_eq!(parent_of("77 (a) b (c)) R 42 77 1"), Some(42));
        assert_eq!(parent_of("garbage"), None);
    }

    /// A fixture /proc: the tree of 10 is 10, its child 11 and grandchild 12, not 20.
    #[test]
    fn a_process_tree_from_proc() {
        let d = tempfile::tempdir().unwrap();
        for (pid, ppid) in [(1, 0), (10, 1), (11, 10), (12, 11), (20, 1)] {
            let p = d.path().join(pid.to_string());
            fs::create_dir_all(&p).unwrap();
            fs::write(p.join("stat"), format!("{pid} (x y) S {ppid} 0 0")).unwrap();
        }
        let mut t = tree_of(d.path(), 10);
        t.sort();
        assert_eq!(t, vec![10, 11, 12]);
        assert!(tree_of(d.path(), 99).is_empty());
    }

    #[test]
    fn a_cgroups_processes_and_its_childrens() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("db/child")).unwrap();
        fs::write(d.path().join("db/cgroup.procs"), "5\n6\n").unwrap();
        fs::write(d.path().join("db/child/cgroup.procs"), "7\n").unwrap();
        let mut p = cgroup_pids(&d.path().join("db"));
        p.sort();
        assert_eq!(p, vec![5, 6, 7]);
    }
}
