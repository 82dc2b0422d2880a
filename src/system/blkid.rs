//! On-disk signatures of a block device by libblkid, the library util-linux's `blkid` and
//! `wipefs` (and every distribution's installer) ask: over a hundred filesystem, RAID, LVM,
//! crypto, swap and partition-table signatures. [`probe`] lists them as `wipefs --no-act` does;
//! [`wipe`] erases each one's magic as `wipefs --all` does. Both read and write through a
//! descriptor the caller opened (the exclusive open iolab holds for the run), never by path.
//! The only unsafe code of this is here: the calls into libblkid (libblkid-rs-sys, bindings
//! generated from the installed `blkid.h`).

use libblkid_rs_sys as ffi;
use std::ffi::CStr;
use std::fs::File;
use std::os::fd::AsRawFd;

/// One signature libblkid found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// libblkid's name (`TYPE` or `PTTYPE`): `ext4`, `swap`, `linux_raid_member`, `vfat`, `dos`.
    pub name: String,
    /// A partition table (else a superblock).
    pub partition_table: bool,
    /// libblkid's `USAGE` of a superblock: `filesystem`, `raid`, `crypto`, `other`.
    pub usage: Option<String>,
    /// Where its magic is, in bytes from the start of the device, and how long it is: what
    /// wiping erases. None when libblkid recognised it without a magic string.
    pub magic: Option<(u64, usize)>,
}

impl Signature {
    /// "a minix filesystem signature (libblkid: TYPE=minix, magic at byte 1040)".
    pub fn describe(&self) -> String {
        let n = &self.name;
        let a = if n.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        };
        let what = if self.partition_table {
            format!("{a} {n} partition table")
        } else {
            match self.usage.as_deref() {
                Some("filesystem") => format!("{a} {n} filesystem"),
                Some("raid") => format!("{a} {n} RAID or volume-manager member"),
                Some("crypto") => format!("{a} {n} encrypted volume"),
                _ => format!("{a} {n} signature"),
            }
        };
        let key = if self.partition_table {
            "PTTYPE"
        } else {
            "TYPE"
        };
        match self.magic {
            Some((off, _)) => format!(
                "{what} (libblkid: {key}={}, magic at byte {off})",
                self.name
            ),
            None => format!("{what} (libblkid: {key}={})", self.name),
        }
    }
}

/// A libblkid probe over a descriptor, freed on drop.
struct Probe(ffi::blkid_probe);

impl Drop for Probe {
    fn drop(&mut self) {
        // SAFETY: a probe from blkid_new_probe, freed once.
        unsafe { ffi::blkid_free_probe(self.0) }
    }
}

impl Probe {
    /// Superblocks (type, usage, magic; also those with a bad checksum, as wipefs) and
    /// partition tables (type, magic) of the whole device behind `fd`.
    fn new(fd: &File) -> Result<Probe, String> {
        // SAFETY: allocation; null on failure.
        let pr = unsafe { ffi::blkid_new_probe() };
        if pr.is_null() {
            return Err("libblkid could not allocate a probe".into());
        }
        let p = Probe(pr);
        let sb = ffi::BLKID_SUBLKS_TYPE
            | ffi::BLKID_SUBLKS_USAGE
            | ffi::BLKID_SUBLKS_MAGIC
            | ffi::BLKID_SUBLKS_BADCSUM;
        // SAFETY: a live probe and a descriptor that outlives it (the caller's `fd` is
        // borrowed for the probe's whole life, which ends in this module).
        let steps = unsafe {
            [
                ffi::blkid_probe_set_device(p.0, fd.as_raw_fd(), 0, 0),
                ffi::blkid_probe_enable_superblocks(p.0, 1),
                ffi::blkid_probe_set_superblocks_flags(p.0, sb as i32),
                ffi::blkid_probe_enable_partitions(p.0, 1),
                ffi::blkid_probe_set_partitions_flags(p.0, ffi::BLKID_PARTS_MAGIC as i32),
            ]
        };
        if steps.iter().any(|&rc| rc != 0) {
            return Err(format!(
                "libblkid cannot probe it ({})",
                std::io::Error::last_os_error()
            ));
        }
        Ok(p)
    }

    /// A value of the last signature found, without its trailing NUL; None when not set.
    fn value(&self, name: &CStr) -> Option<Vec<u8>> {
        let mut data: *const std::os::raw::c_char = std::ptr::null();
        let mut len: usize = 0;
        // SAFETY: a live probe; libblkid points `data` at `len` bytes it owns until the next
        // probe call, copied out here at once.
        let rc =
            unsafe { ffi::blkid_probe_lookup_value(self.0, name.as_ptr(), &mut data, &mut len) };
        if rc != 0 || data.is_null() {
            return None;
        }
        // SAFETY: see above.
        let mut v = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }.to_vec();
        while v.last() == Some(&0) {
            v.pop();
        }
        Some(v)
    }

    /// The next signature, or None when every chain is done.
    fn next(&mut self) -> Result<Option<Signature>, String> {
        // SAFETY: a live probe.
        let rc = unsafe { ffi::blkid_do_probe(self.0) };
        if rc == 1 {
            return Ok(None);
        }
        if rc < 0 {
            return Err(format!(
                "libblkid could not read it ({})",
                std::io::Error::last_os_error()
            ));
        }
        let text = |n: &CStr| {
            self.value(n)
                .map(|v| String::from_utf8_lossy(&v).into_owned())
        };
        let (name, partition_table) = match (text(c"TYPE"), text(c"PTTYPE")) {
            (Some(t), _) => (t, false),
            (None, Some(t)) => (t, true),
            (None, None) => ("unknown".to_string(), false),
        };
        let (off_key, magic_key) = if partition_table {
            (c"PTMAGIC_OFFSET", c"PTMAGIC")
        } else {
            (c"SBMAGIC_OFFSET", c"SBMAGIC")
        };
        let magic = match (
            text(off_key).and_then(|o| o.trim().parse::<u64>().ok()),
            self.value(magic_key),
        ) {
            (Some(o), Some(m)) if !m.is_empty() => Some((o, m.len())),
            _ => None,
        };
        Ok(Some(Signature {
            name,
            partition_table,
            usage: if partition_table {
                None
            } else {
                text(c"USAGE")
            },
            magic,
        }))
    }
}

/// More signatures than any device carries: a bound on the loops below.
const MAX_SIGNATURES: usize = 256;

/// Every signature libblkid finds on the device behind `fd` (superblocks, then partition
/// tables), as `wipefs --no-act` lists them.
pub fn probe(fd: &File) -> Result<Vec<Signature>, String> {
    let mut p = Probe::new(fd)?;
    let mut found = Vec::new();
    while let Some(s) = p.next()? {
        found.push(s);
        if found.len() >= MAX_SIGNATURES {
            break;
        }
    }
    Ok(found)
}

/// Erases the magic of every signature libblkid finds on the device behind `fd` (opened for
/// writing), as `wipefs --all` does, then probes again: an error when one cannot be erased or
/// is still found. Returns what was erased.
pub fn wipe(fd: &File) -> Result<Vec<Signature>, String> {
    let mut p = Probe::new(fd)?;
    let mut wiped = Vec::new();
    while let Some(s) = p.next()? {
        if s.magic.is_none() {
            return Err(format!(
                "cannot wipe {}: libblkid knows no magic to erase",
                s.describe()
            ));
        }
        // SAFETY: a live probe, positioned on the signature just found; libblkid writes zeros
        // over its magic through our descriptor, syncs it and steps back so the next probe
        // looks again where it was.
        if unsafe { ffi::blkid_do_wipe(p.0, 0) } != 0 {
            return Err(format!(
                "wiping {}: {}",
                s.describe(),
                std::io::Error::last_os_error()
            ));
        }
        wiped.push(s);
        if wiped.len() >= MAX_SIGNATURES {
            break;
        }
    }
    drop(p);
    if let Some(s) = probe(fd)?.first() {
        return Err(format!("{} is still there after wiping", s.describe()));
    }
    Ok(wiped)
}
