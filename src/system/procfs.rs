//! One reader for the /proc files more than one module reads: `self/mountinfo` (with its octal
//! escapes undone, so a mount point with a space is `/mnt/a b` everywhere), `meminfo`, the host
//! name and the kernel release. Each takes the `/proc` of a [`Roots`](crate::spec::roots::Roots)
//! (`roots.proc`), so fixture trees test them; see ARCHITECTURE.md for why this is not the
//! `procfs` crate.

use crate::model::env::Mount;
use std::fs;
use std::path::Path;

/// A file's text, trimmed; `None` when it cannot be read or is empty.
fn read(p: &Path) -> Option<String> {
    fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The host's name (`<proc>/sys/kernel/hostname`), "unknown" when unreadable.
pub fn hostname(proc: &Path) -> String {
    read(&proc.join("sys/kernel/hostname")).unwrap_or_else(|| "unknown".into())
}

/// The kernel release, as `uname -r` (`<proc>/sys/kernel/osrelease`), "unknown" when unreadable.
pub fn kernel_release(proc: &Path) -> String {
    read(&proc.join("sys/kernel/osrelease")).unwrap_or_else(|| "unknown".into())
}

/// The figures of `<proc>/meminfo` iolab uses, in bytes; `None` for a line that is missing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemInfo {
    pub total: Option<u64>,
    pub available: Option<u64>,
    pub swap_total: Option<u64>,
    pub swap_free: Option<u64>,
}

/// `<proc>/meminfo` (its kB are KiB); all `None` when it cannot be read.
pub fn meminfo(proc: &Path) -> MemInfo {
    let s = read(&proc.join("meminfo")).unwrap_or_default();
    let get = |k: &str| -> Option<u64> {
        s.lines()
            .find(|l| l.starts_with(k))?
            .split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
            .map(|kb| kb * 1024)
    };
    MemInfo {
        total: get("MemTotal:"),
        available: get("MemAvailable:"),
        swap_total: get("SwapTotal:"),
        swap_free: get("SwapFree:"),
    }
}

/// Mounts from `<proc>/self/mountinfo`, with superblock options merged in, source and mount
/// point unescaped.
pub fn mounts(proc: &Path) -> Vec<Mount> {
    let s = read(&proc.join("self/mountinfo")).unwrap_or_default();
    s.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let f: Vec<&str> = pre.split_whitespace().collect();
            let g: Vec<&str> = post.split_whitespace().collect();
            let mut options: Vec<String> = f.get(5)?.split(',').map(String::from).collect();
            for o in g.get(2).unwrap_or(&"").split(',') {
                if !o.is_empty() && !options.iter().any(|x| x == o) {
                    options.push(o.to_string());
                }
            }
            Some(Mount {
                source: unescape(g.get(1).copied().unwrap_or("")),
                mountpoint: unescape(f.get(4)?),
                fstype: g.first()?.to_string(),
                options,
                dev: f.get(2)?.to_string(),
            })
        })
        .collect()
}

/// /proc escapes space, tab, newline and backslash in paths as `\040`, `\011`, `\012`, `\134`
/// (mountinfo, swaps).
pub fn unescape(s: &str) -> String {
    let mut out = String::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = u8::from_str_radix(&s[i + 1..i + 4], 8).unwrap_or(b'?');
            out.push(v as char);
            i += 4;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = d.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        d
    }

    #[test]
    fn mountinfo_is_unescaped_and_options_merged() {
        let d = fixture(&[(
            "self/mountinfo",
            "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw,errors=remount-ro\n\
             40 22 259:1 / /mnt/a\\040b rw - xfs /dev/disk\\040x rw,noquota\n",
        )]);
        let m = mounts(d.path());
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].options, ["rw", "relatime", "errors=remount-ro"]);
        assert_eq!(m[1].mountpoint, "/mnt/a b");
        assert_eq!(m[1].source, "/dev/disk x");
        assert_eq!((m[1].fstype.as_str(), m[1].dev.as_str()), ("xfs", "259:1"));
        assert!(mounts(&d.path().join("none")).is_empty());
    }

    #[test]
    fn meminfo_hostname_and_release() {
        let d = fixture(&[
            (
                "meminfo",
                "MemTotal:       16384 kB\nMemFree: 1 kB\nMemAvailable:    8192 kB\nSwapTotal: 0 kB\n",
            ),
            ("sys/kernel/hostname", "db1\n"),
            ("sys/kernel/osrelease", "6.1.0-13-amd64\n"),
        ]);
        let m = meminfo(d.path());
        assert_eq!(m.total, Some(16384 * 1024));
        assert_eq!(m.available, Some(8192 * 1024));
        assert_eq!((m.swap_total, m.swap_free), (Some(0), None));
        assert_eq!(hostname(d.path()), "db1");
        assert_eq!(kernel_release(d.path()), "6.1.0-13-amd64");
        let none = d.path().join("none");
        assert_eq!(meminfo(&none), MemInfo::default());
        assert_eq!(hostname(&none), "unknown");
    }
}
