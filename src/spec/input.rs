//! Reading the files a user names as input (job files and their includes, `iolab import`
//! files, standard input): regular files only, and never more than a bound. A FIFO, a device
//! (`/dev/zero`, `/dev/urandom`), a directory or a socket is refused before anything is read,
//! and a file over the bound is refused after reading one byte past it, so no input can grow
//! iolab's memory without limit or keep it reading forever.

use std::io::Read;
use std::path::Path;

/// The most a job file may hold, with all its includes: fio job files are a few KiB.
pub const JOB_FILE_MAX_BYTES: u64 = 1 << 20;
/// The most one `iolab import` file may hold: a fio json+ output of many jobs is a few MiB.
pub const IMPORT_MAX_BYTES: u64 = 64 << 20;

/// Why an input file was refused, worded to follow `PATH: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What kind of file this is, for a refusal ("a character device").
fn kind_of(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The text of the regular file `path`, at most `limit` bytes, as UTF-8. Opened without
/// blocking (a FIFO with no writer does not hang the open) and checked on the open descriptor
/// (no race between a check and the open).
pub fn read_text(path: &Path, limit: u64) -> Result<String, Refused> {
    let f = open_regular(path)?;
    let md = f
        .metadata()
        .map_err(|e| Refused(format!("cannot read it: {e}")))?;
    if md.len() > limit {
        return Err(too_large(limit));
    }
    bounded_text(f, limit)
}

/// The regular file `path` opened for reading, without blocking (a FIFO with no writer does not
/// hang the open) and checked on the open descriptor; a file read as a stream (a capture) is
/// then read with a bound per line.
pub fn open_regular(path: &Path) -> Result<std::fs::File, Refused> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Refused(format!("cannot read it: {e}")))?;
    let md = f
        .metadata()
        .map_err(|e| Refused(format!("cannot read it: {e}")))?;
    if !md.file_type().is_file() {
        return Err(Refused(format!(
            "{}, not a regular file: give a file",
            kind_of(md.file_type())
        )));
    }
    Ok(f)
}

/// At most `limit` bytes of `r` (standard input) as UTF-8; more is refused.
pub fn bounded_text(r: impl Read, limit: u64) -> Result<String, Refused> {
    let mut buf = Vec::new();
    r.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| Refused(format!("cannot read it: {e}")))?;
    if buf.len() as u64 > limit {
        return Err(too_large(limit));
    }
    String::from_utf8(buf).map_err(|e| {
        Refused(format!(
            "not text (invalid UTF-8 at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn too_large(limit: u64) -> Refused {
    Refused(format!(
        "larger than {} MiB, more than iolab reads from one input",
        limit >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_regular_text_files() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.fio");
        std::fs::write(&f, "[a]\nsize=1m\n").unwrap();
        assert_eq!(read_text(&f, 100).unwrap(), "[a]\nsize=1m\n");
        assert!(read_text(&f, 4).unwrap_err().0.starts_with("larger than"));
        for p in ["/dev/zero", "/dev/urandom", "/dev/null"] {
            let e = read_text(Path::new(p), 1 << 20).unwrap_err();
            assert!(e.0.starts_with("a character device"), "{p}: {e}");
        }
        assert!(
            read_text(d.path(), 100)
                .unwrap_err()
                .0
                .starts_with("a directory")
        );
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_text(&fifo, 100).unwrap_err().0.starts_with("a FIFO"));
        assert!(bounded_text(std::io::repeat(0).take(1 << 30), 1 << 20).is_err());
        assert!(
            bounded_text(&[0xff, 0xfe][..], 10)
                .unwrap_err()
                .0
                .starts_with("not text")
        );
    }
}
