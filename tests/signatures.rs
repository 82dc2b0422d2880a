//! libblkid's probing and wiping (`system::blkid`, what `--device` refuses without
//! `--destructive=wipe-signatures` and wipes with it) on image files made by each format's own
//! tool: no root or loop device needed. The same formats on real loop devices, through the CLI,
//! are in tests/root.rs (`device_*`).

use crate::common::blk::{have, sh};
use crate::common::skip;
use iolab::system::blkid;
use std::path::Path;

/// Each case: a name, the tools it needs, the shell command that writes it into `$IMG` (a
/// sparse file of 128 MiB, 320 MiB for xfs, which needs 300; `$TMP` is a scratch directory),
/// and what libblkid calls it.
const CASES: &[(&str, &[&str], &str, &str)] = &[
    ("ext4", &["mkfs.ext4"], "mkfs.ext4 -q -F $IMG", "ext4"),
    ("xfs", &["mkfs.xfs"], "mkfs.xfs -q -f $IMG", "xfs"),
    ("btrfs", &["mkfs.btrfs"], "mkfs.btrfs -q -f $IMG", "btrfs"),
    ("f2fs", &["mkfs.f2fs"], "mkfs.f2fs -q -f $IMG", "f2fs"),
    ("minix", &["mkfs.minix"], "mkfs.minix $IMG", "minix"),
    ("bfs", &["mkfs.bfs"], "mkfs.bfs $IMG", "bfs"),
    (
        "cramfs",
        &["mkfs.cramfs"],
        "echo x > $TMP/d/f && mkfs.cramfs $TMP/d $TMP/c && dd if=$TMP/c of=$IMG conv=notrunc status=none",
        "cramfs",
    ),
    (
        "squashfs",
        &["mksquashfs"],
        "echo x > $TMP/d/f && mksquashfs $TMP/d $TMP/s -quiet -no-progress && dd if=$TMP/s of=$IMG conv=notrunc status=none",
        "squashfs",
    ),
    (
        "iso9660",
        &["genisoimage"],
        "echo x > $TMP/d/f && genisoimage -quiet -o $TMP/i $TMP/d && dd if=$TMP/i of=$IMG conv=notrunc status=none",
        "iso9660",
    ),
    ("vfat", &["mkfs.vfat"], "mkfs.vfat $IMG", "vfat"),
    ("swap", &["mkswap"], "mkswap $IMG", "swap"),
    (
        "LUKS",
        &["cryptsetup"],
        "printf pw > $TMP/k && cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file $TMP/k $IMG",
        "crypto_LUKS",
    ),
    (
        "dos",
        &["sfdisk"],
        "printf 'label: dos\\n,32M\\n,,\\n' | sfdisk -q $IMG",
        "dos",
    ),
    (
        "gpt",
        &["sfdisk"],
        "printf 'label: gpt\\n,32M\\n,,\\n' | sfdisk -q $IMG",
        "gpt",
    ),
    (
        "sun",
        &["sfdisk"],
        "printf 'label: sun\\n,32M\\n' | sfdisk -q $IMG",
        "sun",
    ),
    (
        "sgi",
        &["sfdisk"],
        "printf 'label: sgi\\n,32M\\n' | sfdisk -q $IMG",
        "sgi",
    ),
];

/// Why the cases cannot all run here (a missing tool), if they cannot.
fn cannot() -> Option<String> {
    CASES
        .iter()
        .flat_map(|c| c.1.iter())
        .chain(&["dd"])
        .find(|t| !have(t))
        .map(|t| format!("{t} is not installed (scripts/setup.sh installs it)"))
}

/// The image of case `c` in `tmp`.
fn image(tmp: &Path, c: &(&str, &[&str], &str, &str)) -> std::path::PathBuf {
    let img = tmp.join(format!("{}.img", c.0));
    let scratch = tmp.join(format!("{}.d", c.0));
    std::fs::create_dir_all(scratch.join("d")).unwrap();
    let mb = if c.0 == "xfs" { 320 } else { 128 };
    sh(&format!("truncate -s {mb}M {}", img.display()));
    let cmd =
        c.2.replace("$IMG", &img.display().to_string())
            .replace("$TMP", &scratch.display().to_string());
    sh(&cmd);
    img
}

#[test]
fn libblkid_names_each_signature_on_an_image() {
    if let Some(why) = cannot() {
        return skip("libblkid_names_each_signature_on_an_image", &why);
    }
    let tmp = tempfile::tempdir().unwrap();
    // A blank image carries nothing.
    let blank = tmp.path().join("blank.img");
    sh(&format!("truncate -s 128M {}", blank.display()));
    let f = std::fs::File::open(&blank).unwrap();
    assert_eq!(blkid::probe(&f).unwrap(), vec![]);
    for c in CASES {
        let f = std::fs::File::open(image(tmp.path(), c)).unwrap();
        let found = blkid::probe(&f).unwrap();
        let s = found
            .iter()
            .find(|s| s.name == c.3)
            .unwrap_or_else(|| panic!("{}: libblkid found {found:?}", c.0));
        assert!(s.magic.is_some(), "{}: a magic to wipe: {s:?}", c.0);
        let d = s.describe();
        assert!(d.contains(&format!(
            "{}=",
            if s.partition_table { "PTTYPE" } else { "TYPE" }
        )));
        assert!(d.contains(c.3), "{d}");
    }
}

#[test]
fn wiping_erases_each_magic_and_nothing_else() {
    if let Some(why) = cannot() {
        return skip("wiping_erases_each_magic_and_nothing_else", &why);
    }
    let tmp = tempfile::tempdir().unwrap();
    for c in CASES {
        let img = image(tmp.path(), c);
        let before = img.with_extension("before");
        sh(&format!(
            "cp --sparse=always {} {}",
            img.display(),
            before.display()
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&img)
            .unwrap();
        let wiped = blkid::wipe(&f).unwrap_or_else(|e| panic!("{}: {e}", c.0));
        assert!(wiped.iter().any(|s| s.name == c.3), "{}: {wiped:?}", c.0);
        assert_eq!(blkid::probe(&f).unwrap(), vec![], "{}: nothing left", c.0);
        // what `blkid -p` sees too
        let o = std::process::Command::new("blkid")
            .args(["-p", img.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}: blkid -p finds nothing", c.0);
        // every byte that changed lies in a wiped magic, and is zero now
        let ranges: Vec<(u64, u64)> = wiped
            .iter()
            .filter_map(|s| s.magic)
            .map(|(o, l)| (o, o + l as u64))
            .collect();
        let changed = changed_bytes(&before, &img);
        assert!(!changed.is_empty(), "{}: something was wiped", c.0);
        for (i, now) in changed {
            assert!(
                ranges.iter().any(|&(lo, hi)| (lo..hi).contains(&i)),
                "{}: byte {i} changed outside the wiped magics {ranges:?}",
                c.0
            );
            assert_eq!(now, 0, "{}: wiped to zero", c.0);
        }
        std::fs::remove_file(&before).unwrap();
        std::fs::remove_file(&img).unwrap();
    }
}

/// The offsets where file `b` differs from file `a` (of the same length), with `b`'s byte.
fn changed_bytes(a: &Path, b: &Path) -> Vec<(u64, u8)> {
    use std::io::Read;
    let (mut fa, mut fb) = (
        std::fs::File::open(a).unwrap(),
        std::fs::File::open(b).unwrap(),
    );
    assert_eq!(fa.metadata().unwrap().len(), fb.metadata().unwrap().len());
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    let mut out = Vec::new();
    let mut at = 0u64;
    loop {
        let n = fa.read(&mut ba).unwrap();
        if n == 0 {
            return out;
        }
        fb.read_exact(&mut bb[..n]).unwrap();
        if ba[..n] == bb[..n] {
            at += n as u64;
            continue;
        }
        for i in (0..n).filter(|&i| ba[i] != bb[i]) {
            out.push((at + i as u64, bb[i]));
        }
        at += n as u64;
    }
}
