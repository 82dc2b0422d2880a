//! Output: text tables, stored-run rendering, SVG/PNG charts and the HTML report.

pub mod charts;
pub mod check;
pub mod crashcheck;
pub mod db;
pub mod document;
pub mod env;
pub mod experiment;
pub mod explain;
pub mod fio;
pub mod history;
pub mod html;
pub mod shown;
pub mod stored_charts;
pub mod suites;
pub mod table;

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes a whole file or nothing: a temporary file in the same directory, synced, then renamed
/// over `path` (tempfile's `persist`). A failure names `flag` and the path (exit 2: the path the
/// user gave cannot be written) and leaves no temporary file behind.
pub fn write_atomically(path: &Path, bytes: &[u8], flag: &str) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| Error::usage(format!("{flag} {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".iolab-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| bad(&e))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| bad(&e))?;
    tmp.persist(path).map_err(|e| bad(&e.error))?;
    Ok(())
}

/// Checks before any work that [`write_atomically`] can write `path`: not a directory, and a
/// file can be made beside it (a probe, removed again). A failure names `flag` and the path
/// (exit 2).
pub fn check_writable(path: &Path, flag: &str) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| Error::usage(format!("{flag} {}: {e}", path.display()));
    if path.is_dir() {
        return Err(bad(&"is a directory"));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let probe = dir.join(format!(".iolab-{}.tmp", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| bad(&e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
