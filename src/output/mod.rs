//! Output: text tables, stored-run rendering, SVG/PNG charts and the HTML report.

pub mod capture;
pub mod charts;
pub mod check;
pub mod crashcheck;
pub mod db;
pub mod document;
pub mod env;
pub mod experiment;
pub mod experiment_charts;
pub mod explain;
pub mod export;
pub mod fio;
pub mod fio_group;
pub mod html;
pub mod html_parts;
pub mod metric_charts;
pub mod pts;
pub mod schemas;
pub mod shown;
pub mod stored_charts;
pub mod stored_views;
pub mod suites;
pub mod table;

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes a whole file or nothing: a temporary file of an unpredictable name made with O_EXCL in
/// the same directory (tempfile: a symbolic link planted there is never followed), synced, then
/// renamed over `path` (tempfile's `persist`; the path the user named is replaced, not written
/// through). The file keeps the user's umask: a new one gets 0666 less the umask, an existing one
/// keeps its mode. A failure names `flag` and the path (exit 2: the path the user gave cannot be
/// written) and leaves no temporary file behind.
pub fn write_atomically(path: &Path, bytes: &[u8], flag: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // the mode of the file it replaces, else what the umask leaves of 0666 (applied by open(2))
    let existing = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions().mode() & 0o777);
    write_with_mode(
        path,
        bytes,
        flag,
        existing.unwrap_or(0o666),
        existing.is_some(),
    )
}

/// Writes `path` whole with `mode` (set exactly with `exact`, else less the umask).
fn write_with_mode(path: &Path, bytes: &[u8], flag: &str, mode: u32, exact: bool) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let bad = |e: &dyn std::fmt::Display| Error::usage(format!("{flag} {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".iolab-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(|e| bad(&e))?;
    if exact {
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| bad(&e))?;
    }
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| bad(&e))?;
    tmp.persist(path).map_err(|e| bad(&e.error))?;
    Ok(())
}

/// Checks before any work that [`write_atomically`] can write `path`: not a directory, and a
/// file can be made beside it (a probe of an unpredictable name made with O_EXCL, removed
/// again). A failure names `flag` and the path (exit 2).
pub fn check_writable(path: &Path, flag: &str) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| Error::usage(format!("{flag} {}: {e}", path.display()));
    if path.is_dir() {
        return Err(bad(&"is a directory"));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".iolab-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| bad(&e))?;
    Ok(())
}
