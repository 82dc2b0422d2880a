//! A block device as a benchmark target (`iolab run --device`): what it is (its kernel name,
//! partitions, parent disk, size, logical block size) and whether iolab may use it
//! (docs/safety.md, section 2). [`check`] refuses, for reads and writes and whatever
//! `--destructive` says, a device in use ([`in_use`]: it, its partitions or its disk mounted, in
//! use as swap, held by md/LVM/dm/bcache, backing a loop device, and whatever is stacked on
//! those in turn; then an exclusive open that fails), and takes the device with an exclusive
//! open (O_EXCL) kept for the run. Writes need `--destructive`, and a device on which libblkid
//! finds any signature (`system::blkid`) `--destructive=wipe-signatures`.

use crate::spec::roots::Roots;
use crate::system::{blkid, env, procfs};
use std::fs::{self, File};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// One block device node as sysfs names it: `loop3`, `loop3p1`, with its `major:minor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub majmin: String,
}

/// A block device target and its relatives in sysfs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevTree {
    pub node: Node,
    /// The whole disk when the target is a partition.
    pub parent: Option<Node>,
    /// The partitions of the target when it is a whole disk.
    pub partitions: Vec<Node>,
}

impl DevTree {
    /// The target, its partitions and its parent disk: every node whose use makes the target busy.
    pub fn related(&self) -> impl Iterator<Item = &Node> {
        std::iter::once(&self.node)
            .chain(&self.partitions)
            .chain(&self.parent)
    }
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// Every block device sysfs knows, disks and partitions alike: its name and its directory
/// (from `<sys>/dev/block/MAJ:MIN`).
fn all_devices(sys: &Path) -> Vec<(String, PathBuf)> {
    let dir = sys.join("dev/block");
    let mut v: Vec<(String, PathBuf)> = env::names_in(&dir)
        .into_iter()
        .filter_map(|mm| {
            let real = fs::canonicalize(dir.join(mm)).ok()?;
            Some((real.file_name()?.to_string_lossy().into_owned(), real))
        })
        .collect();
    v.sort();
    v.dedup_by(|a, b| a.0 == b.0);
    v
}

/// The sysfs directory of the device named `name`: `<sys>/class/block/<name>`, else found
/// through `<sys>/dev/block`.
fn dir_of(sys: &Path, name: &str) -> Option<PathBuf> {
    let c = sys.join("class/block").join(name);
    if c.exists() {
        return Some(c);
    }
    all_devices(sys)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, d)| d)
}

/// The sysfs tree of the device named `name`.
pub fn tree_by_name(sys: &Path, name: &str) -> Option<DevTree> {
    let dir = dir_of(sys, name)?;
    let majmin = read_trim(&dir.join("dev"))?;
    let node = Node {
        name: name.to_string(),
        majmin,
    };
    let real = fs::canonicalize(&dir).unwrap_or(dir.clone());
    let (parent, partitions) = if real.join("partition").exists() {
        let pdir = real.parent()?;
        let pname = pdir.file_name()?.to_string_lossy().into_owned();
        let pmm = read_trim(&pdir.join("dev"))?;
        (
            Some(Node {
                name: pname,
                majmin: pmm,
            }),
            Vec::new(),
        )
    } else {
        let mut parts = Vec::new();
        if let Ok(rd) = fs::read_dir(&real) {
            for e in rd.flatten() {
                let p = e.path();
                if p.join("partition").exists()
                    && let Some(mm) = read_trim(&p.join("dev"))
                {
                    parts.push(Node {
                        name: e.file_name().to_string_lossy().into_owned(),
                        majmin: mm,
                    });
                }
            }
        }
        parts.sort_by(|a, b| a.name.cmp(&b.name));
        (None, parts)
    };
    Some(DevTree {
        node,
        parent,
        partitions,
    })
}

/// The sysfs tree of the block device node at `path`; an error line when it is not one.
pub fn tree_of_path(sys: &Path, path: &Path) -> Result<DevTree, String> {
    let md = fs::metadata(path).map_err(|e| format!("{e}"))?;
    if !md.file_type().is_block_device() {
        return Err(if md.is_dir() {
            "a directory, not a block device".into()
        } else {
            "not a block device".into()
        });
    }
    let (maj, min) = (libc::major(md.rdev()), libc::minor(md.rdev()));
    let real = fs::canonicalize(sys.join(format!("dev/block/{maj}:{min}")))
        .map_err(|_| format!("block device {maj}:{min} is not in {}", sys.display()))?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or("no sysfs name")?;
    tree_by_name(sys, &name).ok_or_else(|| format!("{name}: no sysfs entry"))
}

/// Size in bytes of the device at `path` (the end of the opened node).
pub fn size_bytes(path: &Path) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    File::open(path)?.seek(SeekFrom::End(0))
}

/// Logical block size from sysfs (the queue is the whole disk's), 512 when unknown.
pub fn logical_block_size(sys: &Path, tree: &DevTree) -> u64 {
    let disk = tree.parent.as_ref().unwrap_or(&tree.node);
    read_trim(
        &sys.join("class/block")
            .join(&disk.name)
            .join("queue/logical_block_size"),
    )
    .and_then(|s| s.parse().ok())
    .filter(|&v: &u64| v >= 512)
    .unwrap_or(512)
}

/// "major:minor" of a device number.
fn majmin(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// Whether `path` (a mount's source, a file name in /proc/swaps, a loop device's backing file)
/// names `node`: a block device node with its number, else its name under /dev (fixture trees).
/// Only paths under /dev are looked at: a regular file (a loop device's image) is never the
/// device, and is not stat'ed (it may be on a network filesystem that hangs).
fn names_node(path: &str, node: &Node) -> bool {
    let p = path.strip_suffix(" (deleted)").unwrap_or(path);
    if !p.starts_with("/dev/") {
        return false;
    }
    match fs::metadata(p) {
        Ok(md) if md.file_type().is_block_device() => majmin(md.rdev()) == node.majmin,
        _ => p == format!("/dev/{}", node.name),
    }
}

/// How many devices deep [`in_use`] follows devices stacked on devices.
const MAX_STACK: usize = 16;

/// Devices stacked on `node`, each with what uses it (a clause: "which is mounted at /mnt/x"):
/// its holders (`holders/`, and every device whose `slaves/` names it: md, LVM, dm, bcache) and
/// the loop devices whose backing file it is. Holders first; among each kind a used one first.
fn stacked_on(roots: &Roots, node: &Node, depth: usize, seen: &mut Vec<String>) -> Option<String> {
    let all = all_devices(&roots.sys);
    let mut holders = dir_of(&roots.sys, &node.name)
        .map(|d| env::names_in(&d.join("holders")))
        .unwrap_or_default();
    for (h, dir) in &all {
        if !holders.contains(h) && dir.join("slaves").join(&node.name).exists() {
            holders.push(h.clone());
        }
    }
    let loops: Vec<&String> = all
        .iter()
        .filter(|(_, dir)| {
            read_trim(&dir.join("loop/backing_file")).is_some_and(|b| names_node(&b, node))
        })
        .map(|(l, _)| l)
        .collect();
    // Among several, one that is used in turn is named.
    let pick = |found: Vec<(String, Option<String>)>| {
        let i = found.iter().position(|(_, u)| u.is_some()).unwrap_or(0);
        found.into_iter().nth(i)
    };
    let held = holders
        .iter()
        .map(|h| (h.clone(), stack_use(roots, h, depth + 1, seen)))
        .collect();
    if let Some((h, u)) = pick(held) {
        return Some(match u {
            Some(u) => format!("is held by {h}, {u}"),
            None => format!(
                "is held by {h} (md RAID, LVM, device-mapper or bcache: /sys/class/block/{}/holders)",
                node.name
            ),
        });
    }
    let backs = loops
        .into_iter()
        .map(|l| (l.clone(), stack_use(roots, l, depth + 1, seen)))
        .collect();
    pick(backs).map(|(l, u)| match u {
        Some(u) => format!("backs /dev/{l}, {u}"),
        None => format!("backs /dev/{l}"),
    })
}

/// What uses the device `name` stacked on the target, or one of its partitions, as a clause
/// ("which is mounted at /mnt/x", "whose partition loop4p1 is in use as swap").
fn stack_use(roots: &Roots, name: &str, depth: usize, seen: &mut Vec<String>) -> Option<String> {
    if depth > MAX_STACK || seen.iter().any(|s| s == name) {
        return None;
    }
    seen.push(name.to_string());
    let t = tree_by_name(&roots.sys, name)?;
    if let Some(u) = use_of(roots, &t.node, depth, seen) {
        return Some(format!("which {u}"));
    }
    t.partitions.iter().find_map(|p| {
        use_of(roots, p, depth, seen).map(|u| format!("whose partition {} {u}", p.name))
    })
}

/// The first use of `node` itself (not of its partitions), as what follows its name: "is mounted
/// at /mnt/x", "is in use as swap (/proc/swaps)", "is held by dm-0, which is mounted at /mnt/x",
/// "backs /dev/loop4, which is mounted at /mnt/x".
fn use_of(roots: &Roots, node: &Node, depth: usize, seen: &mut Vec<String>) -> Option<String> {
    // Any mount of it: its number (btrfs mounts show an anonymous one: then its source).
    if let Some(m) = env::mounts(roots)
        .into_iter()
        .find(|m| m.dev == node.majmin || names_node(&m.source, node))
    {
        return Some(format!("is mounted at {}", m.mountpoint));
    }
    let swaps = fs::read_to_string(roots.proc.join("swaps")).unwrap_or_default();
    if swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .any(|f| names_node(&procfs::unescape(f), node))
    {
        return Some("is in use as swap (/proc/swaps)".into());
    }
    stacked_on(roots, node, depth, seen)
}

/// Whether the device or anything related is in use, and by what (the first use found): it, its
/// partitions or its disk mounted, in use as swap, held by md/LVM/dm/bcache (`holders`,
/// `slaves`), or backing a loop device, and whatever is stacked on those devices in turn. As
/// what follows "in use: ": "it backs /dev/loop4, which is mounted at /mnt/x".
pub fn in_use(roots: &Roots, tree: &DevTree) -> Option<String> {
    let mut seen: Vec<String> = tree.related().map(|n| n.name.clone()).collect();
    tree.related().find_map(|n| {
        let who = if n == &tree.node {
            "it".to_string()
        } else if tree.parent.as_ref() == Some(n) {
            format!("its disk {}", n.name)
        } else {
            format!("its partition {}", n.name)
        };
        use_of(roots, n, 0, &mut seen).map(|u| format!("{who} {u}"))
    })
}

/// The exclusive opens this process holds: device number, opened for writing, the open.
static CLAIMS: Mutex<Vec<(u64, bool, Weak<File>)>> = Mutex::new(Vec::new());

/// An exclusive open (O_EXCL) of the device at `path` (whose number must be `majmin`), for
/// writing when `write`. While it is held the kernel refuses every other exclusive opener: a
/// mount, swapon, md, dm, mkfs. One this process holds already is shared (a sweep's check plans
/// all its points). An exclusive open for reading cannot become one for writing: a plan that
/// writes while another plan of this process holds the device for reading is refused as busy
/// (iolab's plans of one device live one after the other).
pub fn claim(path: &Path, majmin_of_node: &str, write: bool) -> std::io::Result<Arc<File>> {
    let rdev = fs::metadata(path)?.rdev();
    let mut held = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
    held.retain(|(_, _, f)| f.strong_count() > 0);
    if let Some(f) = held
        .iter()
        .filter(|(r, w, _)| *r == rdev && (*w || !write))
        .find_map(|(_, _, f)| f.upgrade())
    {
        return Ok(f);
    }
    let f = fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)?;
    let got = f.metadata()?.rdev();
    if majmin(got) != majmin_of_node {
        return Err(std::io::Error::other(format!(
            "it is now device {} instead of {majmin_of_node}",
            majmin(got)
        )));
    }
    let f = Arc::new(f);
    held.push((got, write, Arc::downgrade(&f)));
    Ok(f)
}

/// The processes other than this one that have the device `majmin` open ("pid 42 (mkfs.ext4)"),
/// from `<proc>/PID/fd`: only links to paths under /dev are followed. At most four.
pub fn openers(proc_root: &Path, majmin_of_node: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut who = Vec::new();
    for pid in env::names_in(proc_root) {
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let fds = proc_root.join(&pid).join("fd");
        let has = env::names_in(&fds).iter().any(|fd| {
            let p = fds.join(fd);
            fs::read_link(&p).is_ok_and(|t| t.starts_with("/dev/"))
                && fs::metadata(&p).is_ok_and(|m| {
                    m.file_type().is_block_device() && majmin(m.rdev()) == majmin_of_node
                })
        });
        if has {
            let comm = read_trim(&proc_root.join(&pid).join("comm")).unwrap_or_default();
            who.push(format!("pid {pid} ({comm})"));
            if who.len() == 4 {
                break;
            }
        }
    }
    who
}

/// What `--destructive` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destructive {
    /// No flag: read modes only.
    No,
    /// `--destructive`: writes to a device on which libblkid finds no signature.
    Yes,
    /// `--destructive=wipe-signatures`: writes also to a device with filesystem, swap, RAID, LVM,
    /// crypto or partition-table signatures; every one is wiped first (as `wipefs --all`), and
    /// one that libblkid cannot wipe is refused.
    WipeSignatures,
}

/// Checks `--device PATH` and takes it: the exclusive open held for the run, or the one-line
/// reason why it may not be used. `writes`: the first mode that writes. A device in use (see
/// [`in_use`], and an exclusive open that fails) is refused for reads and writes, whatever
/// `--destructive` says; writes need `--destructive`, and a device with signatures
/// `--destructive=wipe-signatures`.
pub fn check(
    roots: &Roots,
    path: &Path,
    tree: &DevTree,
    writes: Option<&str>,
    destructive: Destructive,
) -> Result<Arc<File>, String> {
    let d = path.display();
    let busy = |why: String| {
        format!(
            "--device {d}: in use: {why}; iolab refuses a device in use, for reads and writes, even with --destructive"
        )
    };
    if let Some(why) = in_use(roots, tree) {
        return Err(busy(why));
    }
    if let Some(mode) = writes
        && destructive == Destructive::No
    {
        return Err(format!(
            "--device {d}: mode {mode} writes to the device and destroys what is on it; give --destructive to allow that, or run read modes only (--mode seqrd,rndrd)"
        ));
    }
    let held = match claim(path, &tree.node.majmin, writes.is_some()) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            let who = openers(&roots.proc, &tree.node.majmin);
            let by = if who.is_empty() {
                "the kernel or a program (a filesystem, md, dm, swap, or a tool such as mkfs)"
                    .to_string()
            } else {
                format!("another program: {} has it open", who.join(", "))
            };
            return Err(busy(format!(
                "it is held open exclusively (O_EXCL) by {by}"
            )));
        }
        Err(e) => {
            return Err(format!(
                "--device {d}: cannot open it ({e}); iolab needs read access to the device (root), and write access for write modes"
            ));
        }
    };
    if writes.is_none() {
        return Ok(held);
    }
    let found = blkid::probe(&held).map_err(|e| {
        format!("--device {d}: cannot look for signatures on it: {e}; --destructive needs a device libblkid can read")
    })?;
    let list = || {
        found
            .iter()
            .map(blkid::Signature::describe)
            .collect::<Vec<_>>()
            .join(" and ")
    };
    match destructive {
        Destructive::Yes if !found.is_empty() => Err(format!(
            "--device {d}: it carries {}; its data would be destroyed: give --destructive=wipe-signatures to wipe them and write over it anyway, or pick a blank device",
            list()
        )),
        Destructive::WipeSignatures => match found.iter().find(|s| s.magic.is_none()) {
            Some(s) => Err(format!(
                "--device {d}: --destructive=wipe-signatures cannot wipe {}: libblkid knows no magic to erase; wipe it with its own tool (wipefs, zpool labelclear, ...) or pick a blank device",
                s.describe()
            )),
            None => Ok(held),
        },
        _ => Ok(held),
    }
}

/// The device path as given, canonical (`/dev/disk/by-id/...` to `/dev/sdb`).
pub fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// loop9 (7:9) with partitions loop9p1 (259:1) and loop9p2 (259:2), laid out as the kernel
    /// does (`devices/virtual/block`, links in `class/block` and `dev/block`); / on sda1.
    fn fixture() -> (tempfile::TempDir, Roots) {
        let d = tempfile::tempdir().unwrap();
        let r = Roots::fixture(d.path());
        let disk = r.sys.join("devices/virtual/block/loop9");
        fs::create_dir_all(disk.join("holders")).unwrap();
        fs::create_dir_all(disk.join("queue")).unwrap();
        fs::write(disk.join("dev"), "7:9\n").unwrap();
        fs::write(disk.join("queue/logical_block_size"), "4096\n").unwrap();
        for (p, mm) in [("loop9p1", "259:1"), ("loop9p2", "259:2")] {
            fs::create_dir_all(disk.join(p).join("holders")).unwrap();
            fs::write(disk.join(p).join("dev"), format!("{mm}\n")).unwrap();
            fs::write(disk.join(p).join("partition"), "1\n").unwrap();
        }
        fs::create_dir_all(r.sys.join("class/block")).unwrap();
        fs::create_dir_all(r.sys.join("dev/block")).unwrap();
        for (n, mm) in [
            ("loop9", "7:9"),
            ("loop9/loop9p1", "259:1"),
            ("loop9/loop9p2", "259:2"),
        ] {
            let name = n.rsplit('/').next().unwrap();
            let real = r.sys.join("devices/virtual/block").join(n);
            std::os::unix::fs::symlink(&real, r.sys.join("class/block").join(name)).unwrap();
            std::os::unix::fs::symlink(&real, r.sys.join("dev/block").join(mm)).unwrap();
        }
        fs::create_dir_all(r.proc.join("self")).unwrap();
        fs::write(
            r.proc.join("self/mountinfo"),
            "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
        )
        .unwrap();
        (d, r)
    }

    /// A device `name` (`mm`) stacked beside loop9: its own directory and links.
    fn add_dev(r: &Roots, name: &str, mm: &str) -> PathBuf {
        let dir = r.sys.join("devices/virtual/block").join(name);
        fs::create_dir_all(dir.join("holders")).unwrap();
        fs::create_dir_all(dir.join("slaves")).unwrap();
        fs::write(dir.join("dev"), format!("{mm}\n")).unwrap();
        std::os::unix::fs::symlink(&dir, r.sys.join("class/block").join(name)).unwrap();
        std::os::unix::fs::symlink(&dir, r.sys.join("dev/block").join(mm)).unwrap();
        dir
    }

    fn mount(r: &Roots, line: &str) {
        let mi = r.proc.join("self/mountinfo");
        let s = fs::read_to_string(&mi).unwrap();
        fs::write(mi, format!("{s}{line}\n")).unwrap();
    }

    #[test]
    fn the_tree_knows_partitions_and_parents() {
        let (_d, r) = fixture();
        let t = tree_by_name(&r.sys, "loop9").unwrap();
        assert_eq!(t.node.majmin, "7:9");
        let names: Vec<&str> = t.partitions.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["loop9p1", "loop9p2"]);
        assert_eq!(logical_block_size(&r.sys, &t), 4096);
        let p = tree_by_name(&r.sys, "loop9p2").unwrap();
        assert_eq!(p.parent.as_ref().unwrap().name, "loop9");
        assert_eq!(logical_block_size(&r.sys, &p), 4096);
    }

    #[test]
    fn a_mounted_partition_makes_the_disk_busy_but_not_its_sibling() {
        let (_d, r) = fixture();
        let disk = tree_by_name(&r.sys, "loop9").unwrap();
        let p2 = tree_by_name(&r.sys, "loop9p2").unwrap();
        assert_eq!(in_use(&r, &disk), None);
        mount(&r, "40 22 259:1 / /mnt/a rw - ext4 /dev/loop9p1 rw");
        assert_eq!(
            in_use(&r, &disk).unwrap(),
            "its partition loop9p1 is mounted at /mnt/a"
        );
        assert_eq!(in_use(&r, &p2), None, "a free partition is a target");
        let p1 = tree_by_name(&r.sys, "loop9p1").unwrap();
        assert_eq!(in_use(&r, &p1).unwrap(), "it is mounted at /mnt/a");
    }

    #[test]
    fn a_btrfs_mount_is_found_by_its_source() {
        let (_d, r) = fixture();
        let disk = tree_by_name(&r.sys, "loop9").unwrap();
        // btrfs shows an anonymous device number; the source names the device
        mount(&r, "41 22 0:45 / /mnt/b rw - btrfs /dev/loop9 rw");
        assert_eq!(in_use(&r, &disk).unwrap(), "it is mounted at /mnt/b");
    }

    #[test]
    fn swap_holders_slaves_and_loops_stacked_on_it_make_it_busy() {
        let (_d, r) = fixture();
        let disk = tree_by_name(&r.sys, "loop9").unwrap();
        // swap on a partition
        fs::write(
            r.proc.join("swaps"),
            "Filename\tType\tSize\tUsed\tPriority\n/dev/loop9p2 partition\t1020\t0\t-2\n",
        )
        .unwrap();
        assert_eq!(
            in_use(&r, &disk).unwrap(),
            "its partition loop9p2 is in use as swap (/proc/swaps)"
        );
        fs::remove_file(r.proc.join("swaps")).unwrap();
        // a holder with nothing on it
        let dm = add_dev(&r, "dm-0", "253:0");
        fs::create_dir_all(
            r.sys
                .join("devices/virtual/block/loop9/loop9p2/holders/dm-0"),
        )
        .unwrap();
        let why = in_use(&r, &disk).unwrap();
        assert!(
            why.starts_with("its partition loop9p2 is held by dm-0 (md RAID, LVM"),
            "{why}"
        );
        // ... and mounted: the chain is named
        mount(&r, "42 22 253:0 / /srv rw - xfs /dev/mapper/vg-lv rw");
        assert_eq!(
            in_use(&r, &disk).unwrap(),
            "its partition loop9p2 is held by dm-0, which is mounted at /srv"
        );
        // a holder only named by its slaves/ (the holder's side)
        fs::remove_dir(
            r.sys
                .join("devices/virtual/block/loop9/loop9p2/holders/dm-0"),
        )
        .unwrap();
        fs::create_dir_all(dm.join("slaves/loop9p1")).unwrap();
        assert_eq!(
            in_use(&r, &disk).unwrap(),
            "its partition loop9p1 is held by dm-0, which is mounted at /srv"
        );
        fs::remove_dir(dm.join("slaves/loop9p1")).unwrap();
        assert_eq!(in_use(&r, &disk), None);
        // loop10 over loop9, loop11 over loop10, whose partition is mounted
        let l10 = add_dev(&r, "loop10", "7:10");
        fs::create_dir_all(l10.join("loop")).unwrap();
        fs::write(l10.join("loop/backing_file"), "/dev/loop9\n").unwrap();
        assert_eq!(in_use(&r, &disk).unwrap(), "it backs /dev/loop10");
        let l11 = add_dev(&r, "loop11", "7:11");
        fs::create_dir_all(l11.join("loop")).unwrap();
        fs::write(l11.join("loop/backing_file"), "/dev/loop10\n").unwrap();
        let p = l11.join("loop11p1");
        fs::create_dir_all(&p).unwrap();
        fs::write(p.join("partition"), "1\n").unwrap();
        fs::write(p.join("dev"), "259:7\n").unwrap();
        std::os::unix::fs::symlink(&p, r.sys.join("dev/block/259:7")).unwrap();
        mount(&r, "43 22 259:7 / /mnt/deep rw - ext4 /dev/loop11p1 rw");
        assert_eq!(
            in_use(&r, &disk).unwrap(),
            "it backs /dev/loop10, which backs /dev/loop11, whose partition loop11p1 is mounted at /mnt/deep"
        );
        // a partition of the target is busy through its disk's users too
        let p1 = tree_by_name(&r.sys, "loop9p1").unwrap();
        assert!(
            in_use(&r, &p1)
                .unwrap()
                .starts_with("its disk loop9 backs /dev/loop10"),
        );
    }

    #[test]
    fn a_loop_cycle_ends() {
        let (_d, r) = fixture();
        let disk = tree_by_name(&r.sys, "loop9").unwrap();
        let a = add_dev(&r, "loop20", "7:20");
        let b = add_dev(&r, "loop21", "7:21");
        for (d, on) in [(&a, "/dev/loop9"), (&b, "/dev/loop20")] {
            fs::create_dir_all(d.join("loop")).unwrap();
            fs::write(d.join("loop/backing_file"), format!("{on}\n")).unwrap();
        }
        fs::create_dir_all(a.join("slaves/loop21")).unwrap();
        fs::create_dir_all(b.join("slaves/loop20")).unwrap();
        assert!(
            in_use(&r, &disk)
                .unwrap()
                .starts_with("it backs /dev/loop20")
        );
    }

    #[test]
    fn a_device_in_use_is_refused_for_reads_and_writes_whatever_destructive_says() {
        let (_d, r) = fixture();
        let disk = tree_by_name(&r.sys, "loop9").unwrap();
        mount(&r, "40 22 259:1 / /mnt/a rw - ext4 /dev/loop9p1 rw");
        for writes in [None, Some("rndwr")] {
            for d in [
                Destructive::No,
                Destructive::Yes,
                Destructive::WipeSignatures,
            ] {
                let line = check(&r, Path::new("/dev/loop9"), &disk, writes, d).unwrap_err();
                assert_eq!(
                    line,
                    "--device /dev/loop9: in use: its partition loop9p1 is mounted at /mnt/a; iolab refuses a device in use, for reads and writes, even with --destructive"
                );
            }
        }
        // a free device: writes without the flag are refused before it is opened
        let p2 = tree_by_name(&r.sys, "loop9p2").unwrap();
        let line = check(
            &r,
            Path::new("/dev/loop9p2"),
            &p2,
            Some("rndwr"),
            Destructive::No,
        )
        .unwrap_err();
        assert!(line.contains("give --destructive"), "{line}");
    }
}
