//! Two classic file-system benchmark suites, re-implemented so their numbers can be produced (and
//! read) the way their users know them: IOzone's automatic mode ([`iozone()`], `iozone.rs`) and
//! Bonnie++ ([`bonnie()`], `bonnie.rs`); this file holds what both use (the fixed-seed shuffles,
//! eviction, record stamps, temporary names, cleanup, the `--dir` and space checks).
//!
//! Both suites remove every file and directory they created, also after an error or a stop. When
//! `stop` is set they return `Ok` with `interrupted: true` and the results measured so far.

mod bonnie;
mod iozone;

pub use bonnie::*;
pub use iozone::*;

use crate::engine::fileset::WriteBack;
use crate::error::{Error, Result};
pub use crate::model::suite::*;
use crate::model::units::human_bytes;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// A generator whose output is fixed by its definition (SplitMix64), so shuffles and seek offsets
/// are the same for the same seed on every machine and version.
struct SplitMix(rand_xoshiro::SplitMix64);

impl SplitMix {
    fn new(seed: u64) -> SplitMix {
        use rand::SeedableRng;
        SplitMix(rand_xoshiro::SplitMix64::seed_from_u64(seed))
    }
    /// Uniform in `0..n` (`n` > 0), by multiply-shift.
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        use rand::Rng;
        ((self.0.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// `0..n` in a random order (Fisher-Yates). Built before a timed loop, never inside one.
fn shuffled(n: u64, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    let mut rng = SplitMix::new(seed);
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

/// Writes the file's dirty pages back and drops its pages from the page cache.
fn evict(f: &File) -> io::Result<()> {
    crate::engine::fileset::drop_cached(f, WriteBack::Data, 0, 0)
}

/// Marks every 4 KiB page of `buf` with `v`, so no two written records are identical and
/// deduplicating storage cannot skip them. A few stores per page: cheap enough for a timed loop.
#[inline]
fn stamp(buf: &mut [u8], v: u64) {
    for page in buf.chunks_mut(4096) {
        if page.len() >= 8 {
            page[..8].copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// A process-wide counter that keeps the temporary names of concurrent runs apart.
static RUN_NO: AtomicU32 = AtomicU32::new(0);

fn unique_name(prefix: &str) -> String {
    format!(
        "{prefix}.{}.{}",
        std::process::id(),
        RUN_NO.fetch_add(1, Relaxed)
    )
}

/// Options that never open through a symbolic link (O_NOFOLLOW): a suite's files are its own.
fn nofollow() -> OpenOptions {
    let mut oo = OpenOptions::new();
    oo.custom_flags(libc::O_NOFOLLOW);
    oo
}

/// Removes the files and directories a suite created when it goes out of scope, whatever happened.
struct Cleanup {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for f in &self.files {
            let _ = fs::remove_file(f);
        }
        for d in &self.dirs {
            crate::system::target::remove_made_tree(d);
        }
    }
}

/// `--dir` must be an existing directory.
fn check_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Error::usage(format!(
            "--dir {}: not a directory",
            dir.display()
        ))),
        Err(e) => Err(Error::usage(format!("--dir {}: {e}", dir.display()))),
    }
}

/// Refuses a run that cannot fit in `dir`, before anything is written.
fn check_space(dir: &Path, need: u64, flag: &str) -> Result<()> {
    if std::env::var_os("IOLAB_TEST_SKIP_SPACE_CHECK").is_some() {
        return Ok(());
    }
    if let Some(free) = crate::system::fsinfo::free_bytes(dir)
        && need > free
    {
        return Err(Error::usage(format!(
            "{flag}: the test needs {} in --dir {} but only {} is free",
            human_bytes(need as f64),
            dir.display(),
            human_bytes(free as f64)
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffles_are_permutations_and_fixed_by_the_seed() {
        let a = shuffled(1000, 7);
        let mut s = a.clone();
        s.sort();
        assert_eq!(s, (0..1000).collect::<Vec<_>>());
        assert_eq!(a, shuffled(1000, 7));
        assert_ne!(a, shuffled(1000, 8));
    }
}
