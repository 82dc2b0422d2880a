//! A block device as a benchmark target (`iolab run --device`): what it is (its kernel name,
//! partitions, parent disk, size, logical block size) and whether iolab may use it. Reads are
//! refused only on a device in use by a mounted filesystem; writes need `--destructive` and are
//! refused on a device that is mounted, held open exclusively (O_EXCL), a member of md/LVM/dm
//! (sysfs holders) or that carries a filesystem, swap, RAID, LVM or partition-table signature
//! (unless `--destructive=wipe-signatures`). [`refusal`] returns the first reason.

use crate::spec::roots::Roots;
use std::fs::{self, File};
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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

/// The sysfs tree of the device named `name` (`<sys>/class/block/<name>`).
pub fn tree_by_name(sys: &Path, name: &str) -> Option<DevTree> {
    let dir = sys.join("class/block").join(name);
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

/// Where a node of the tree is mounted ("loop3p1 is mounted at /mnt/x"), from
/// `<proc>/self/mountinfo`.
pub fn mounted(proc_root: &Path, tree: &DevTree) -> Option<String> {
    let mi = fs::read_to_string(proc_root.join("self/mountinfo")).ok()?;
    for n in tree.related() {
        for l in mi.lines() {
            let f: Vec<&str> = l.split(' ').collect();
            if f.get(2) == Some(&n.majmin.as_str()) {
                let at = f.get(4).copied().unwrap_or("?");
                return Some(if n == &tree.node {
                    format!("it is mounted at {at}")
                } else if tree.parent.as_ref() == Some(n) {
                    format!("its disk {} is mounted at {at}", n.name)
                } else {
                    format!("its partition {} is mounted at {at}", n.name)
                });
            }
        }
    }
    None
}

/// Whether a node of the tree has holders in sysfs (a member of md, LVM or another dm device).
pub fn holders(sys: &Path, tree: &DevTree) -> Option<String> {
    for n in tree.related() {
        let Ok(rd) = fs::read_dir(sys.join("class/block").join(&n.name).join("holders")) else {
            continue;
        };
        let mut h: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if h.is_empty() {
            continue;
        }
        h.sort();
        let who = if n == &tree.node {
            "it".to_string()
        } else {
            n.name.clone()
        };
        return Some(format!(
            "{who} is a member of {} (md RAID, LVM or device-mapper: /sys/class/block/{}/holders)",
            h.join(", "),
            n.name
        ));
    }
    None
}

/// Whether another opener holds the device exclusively (a mounted filesystem, md, dm, swap, or a
/// program that opened it with O_EXCL): our own O_EXCL open then fails with EBUSY.
pub fn held_exclusively(path: &Path) -> bool {
    match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
    {
        Ok(_) => false,
        Err(e) => e.raw_os_error() == Some(libc::EBUSY),
    }
}

const MD_MAGIC: u32 = 0xa92b_4efc;

/// The first on-disk signature found by `read(offset, len)` on a device of `size` bytes: a
/// filesystem, swap, RAID or LVM member, or a partition table. Bytes past the end read as None.
pub fn signature_in(read: &dyn Fn(u64, usize) -> Option<Vec<u8>>, size: u64) -> Option<String> {
    let at = |off: u64, magic: &[u8]| -> bool {
        off + magic.len() as u64 <= size && read(off, magic.len()).as_deref() == Some(magic)
    };
    let u32_at = |off: u64| -> Option<u32> {
        (off + 4 <= size)
            .then(|| read(off, 4))
            .flatten()
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if at(512, b"EFI PART") || at(4096, b"EFI PART") {
        return Some("a GPT partition table (\"EFI PART\")".into());
    }
    if at(0, b"XFSB") {
        return Some("an XFS filesystem (\"XFSB\")".into());
    }
    if at(1080, &[0x53, 0xEF]) {
        return Some("an ext2/3/4 filesystem (magic 0xEF53)".into());
    }
    if at(65600, b"_BHRfS_M") {
        return Some("a btrfs filesystem (\"_BHRfS_M\")".into());
    }
    for page in [4096u64, 8192, 16384, 65536] {
        if at(page - 10, b"SWAPSPACE2") || at(page - 10, b"SWAP-SPACE") {
            return Some("swap space (\"SWAPSPACE2\")".into());
        }
    }
    if at(0, b"LUKS\xba\xbe") {
        return Some("a LUKS encrypted volume".into());
    }
    for s in 0..4u64 {
        if at(s * 512, b"LABELONE") {
            return Some("an LVM2 physical volume (\"LABELONE\")".into());
        }
    }
    // md superblocks: 1.1 at 0, 1.2 at 4 KiB, 1.0 near the end, 0.90 in the last 64 KiB.
    let mut md_offsets = vec![0, 4096];
    if size >= 8192 {
        md_offsets.push((((size >> 9) - 16) & !7) << 9);
    }
    if size >= 131072 {
        md_offsets.push((size & !65535) - 65536);
    }
    if md_offsets.into_iter().any(|o| u32_at(o) == Some(MD_MAGIC)) {
        return Some("an md RAID member (superblock magic 0xa92b4efc)".into());
    }
    if at(3, b"NTFS    ") {
        return Some("an NTFS filesystem".into());
    }
    if at(510, &[0x55, 0xAA])
        && let Some(mbr) = read(446, 64)
        && mbr.chunks(16).any(|e| e[4] != 0)
    {
        return Some("a DOS partition table (MBR, 0x55AA with partition entries)".into());
    }
    None
}

/// The first signature on the device at `path` (see [`signature_in`]).
pub fn signature(path: &Path) -> std::io::Result<Option<String>> {
    let f = File::open(path)?;
    let size = size_bytes(path)?;
    let read = |off: u64, len: usize| -> Option<Vec<u8>> {
        let mut b = vec![0u8; len];
        f.read_exact_at(&mut b, off).ok()?;
        Some(b)
    };
    Ok(signature_in(&read, size))
}

/// What `--destructive` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destructive {
    /// No flag: read modes only.
    No,
    /// `--destructive`: writes to a device without any signature.
    Yes,
    /// `--destructive=wipe-signatures`: writes also over a filesystem, swap, RAID, LVM or
    /// partition-table signature (the writes destroy it).
    WipeSignatures,
}

/// Why `--device PATH` may not be used, or None. `writes`: some mode writes; `name` is how the
/// line names the target (its path).
pub fn refusal(
    roots: &Roots,
    path: &Path,
    tree: &DevTree,
    writes: Option<&str>,
    destructive: Destructive,
) -> Option<String> {
    let d = path.display();
    if let Some(why) = mounted(&roots.proc, tree) {
        return Some(format!(
            "--device {d}: {why}; iolab measures a device only while no filesystem on it is in use: unmount it, or measure that filesystem with --dir MOUNTPOINT"
        ));
    }
    let mode = writes?;
    if destructive == Destructive::No {
        return Some(format!(
            "--device {d}: mode {mode} writes to the device and destroys what is on it; give --destructive to allow that, or run read modes only (--mode seqrd,rndrd)"
        ));
    }
    if let Some(why) = holders(&roots.sys, tree) {
        return Some(format!(
            "--device {d}: {why}; --destructive never writes to a device in use: pick a free device or partition"
        ));
    }
    if held_exclusively(path) {
        return Some(format!(
            "--device {d}: held open exclusively by another program (O_EXCL: a filesystem, md, dm, swap or a tool like mkfs); --destructive never writes to a device in use: stop that program or pick a free device"
        ));
    }
    if destructive != Destructive::WipeSignatures {
        match signature(path) {
            Ok(Some(sig)) => {
                return Some(format!(
                    "--device {d}: it carries {sig}; its data would be destroyed: give --destructive=wipe-signatures to write over it anyway, or pick a blank device"
                ));
            }
            Ok(None) => {}
            Err(e) => {
                return Some(format!(
                    "--device {d}: cannot read it to look for signatures ({e}); --destructive needs a readable device"
                ));
            }
        }
    }
    None
}

/// The device path as given, canonical (`/dev/disk/by-id/...` to `/dev/sdb`).
pub fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(img: &[u8]) -> Option<String> {
        let read = |off: u64, len: usize| -> Option<Vec<u8>> {
            img.get(off as usize..off as usize + len)
                .map(<[u8]>::to_vec)
        };
        signature_in(&read, img.len() as u64)
    }

    fn put(img: &mut [u8], off: usize, b: &[u8]) {
        img[off..off + b.len()].copy_from_slice(b);
    }

    #[test]
    fn signatures_are_found_and_named() {
        let blank = vec![0u8; 1 << 20];
        assert_eq!(sig(&blank), None);
        let cases: &[(usize, &[u8], &str)] = &[
            (1080, &[0x53, 0xEF], "ext2/3/4"),
            (0, b"XFSB", "XFS"),
            (4086, b"SWAPSPACE2", "swap"),
            (65600, b"_BHRfS_M", "btrfs"),
            (512, b"LABELONE", "LVM2"),
            (4096, &MD_MAGIC.to_le_bytes(), "md RAID"),
            (512, b"EFI PART", "GPT"),
        ];
        for (off, magic, name) in cases {
            let mut img = blank.clone();
            put(&mut img, *off, magic);
            let s = sig(&img).unwrap_or_default();
            assert!(s.contains(name), "{name}: {s}");
        }
        // md 0.90 at the end: the last 64 KiB-aligned block minus 64 KiB
        let mut img = blank.clone();
        let n = img.len();
        put(&mut img, (n & !65535) - 65536, &MD_MAGIC.to_le_bytes());
        assert!(sig(&img).unwrap().contains("md RAID"));
        // an MBR needs a non-empty partition entry, not just 0x55AA
        let mut img = blank.clone();
        put(&mut img, 510, &[0x55, 0xAA]);
        assert_eq!(sig(&img), None);
        put(&mut img, 446 + 4, &[0x83]);
        assert!(sig(&img).unwrap().contains("DOS partition table"));
    }

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
        for n in ["loop9", "loop9/loop9p1", "loop9/loop9p2"] {
            let name = n.rsplit('/').next().unwrap();
            std::os::unix::fs::symlink(
                r.sys.join("devices/virtual/block").join(n),
                r.sys.join("class/block").join(name),
            )
            .unwrap();
        }
        fs::create_dir_all(r.proc.join("self")).unwrap();
        fs::write(
            r.proc.join("self/mountinfo"),
            "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
        )
        .unwrap();
        (d, r)
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
        assert_eq!(mounted(&r.proc, &disk), None);
        fs::write(
            r.proc.join("self/mountinfo"),
            "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n40 22 259:1 / /mnt/a rw - ext4 /dev/loop9p1 rw\n",
        )
        .unwrap();
        assert_eq!(
            mounted(&r.proc, &disk).unwrap(),
            "its partition loop9p1 is mounted at /mnt/a"
        );
        assert_eq!(mounted(&r.proc, &p2), None, "a free partition is a target");
        let p1 = tree_by_name(&r.sys, "loop9p1").unwrap();
        assert_eq!(mounted(&r.proc, &p1).unwrap(), "it is mounted at /mnt/a");
    }

    #[test]
    fn holders_mean_a_member_of_md_lvm_or_dm() {
        let (_d, r) = fixture();
        let disk = tree_by_name(&r.sys, "loop9").unwrap();
        assert_eq!(holders(&r.sys, &disk), None);
        fs::create_dir_all(
            r.sys
                .join("devices/virtual/block/loop9/loop9p2/holders/dm-0"),
        )
        .unwrap();
        let why = holders(&r.sys, &disk).unwrap();
        assert!(why.starts_with("loop9p2 is a member of dm-0"), "{why}");
        let p1 = tree_by_name(&r.sys, "loop9p1").unwrap();
        // loop9p1's parent has no holders of its own; its sibling's do not matter
        assert_eq!(holders(&r.sys, &p1), None);
        // the refusal names the flags (a write with --destructive on a held device)
        let line = refusal(
            &r,
            Path::new("/dev/loop9"),
            &disk,
            Some("rndwr"),
            Destructive::Yes,
        )
        .unwrap();
        assert!(line.starts_with("--device /dev/loop9: loop9p2 is a member of dm-0"));
        assert!(line.contains("--destructive"));
        // reads of a held device are fine; writes without the flag are refused first
        assert_eq!(
            refusal(&r, Path::new("/dev/loop9"), &disk, None, Destructive::No),
            None
        );
        let line = refusal(
            &r,
            Path::new("/dev/loop9"),
            &disk,
            Some("rndwr"),
            Destructive::No,
        )
        .unwrap();
        assert!(line.contains("give --destructive"), "{line}");
    }
}
