//! Writing a job's fio log files after its phase (the lines are `measure::fiolog`'s): each file
//! written whole to a temporary file beside it and renamed over the name, so no reader ever
//! sees half a log; a name that is a symbolic link, a directory or anything but a regular file
//! is never written through or replaced (docs/safety.md, section 6).

use crate::measure::fiolog::{LogKind, ThreadLog, file_name};
use crate::model::job::FioLogs;
use crate::system::target::TargetDir;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes the logs of one job (its threads' records in thread order) and returns one warning
/// line per file that could not be written or was cut short (the run's results stand).
/// `since_start`: how long ago the measured window began (for `log_unix_epoch`).
pub fn write_job_logs(
    spec: &FioLogs,
    logs: &[ThreadLog],
    since_start: std::time::Duration,
) -> Vec<String> {
    let epoch_ms = match spec.epoch_clock.map(|c| clock_ms(c, since_start)) {
        None => 0,
        Some(Ok(ms)) => ms,
        Some(Err(e)) => return vec![format!("fio logs: not written: {e}")],
    };
    let mut warnings = Vec::new();
    if logs.iter().any(|l| l.truncated) {
        warnings.push(format!(
            "fio logs: a thread recorded more I/Os than its share of {} MiB of log records: its later I/Os are not in the logs (use log_avg_msec)",
            match spec.max_record_bytes {
                0 => crate::measure::fiolog::MAX_BYTES,
                b => b,
            } >> 20
        ));
    }
    for kind in LogKind::ALL {
        if kind.prefix(spec).is_none() {
            continue;
        }
        // one file per thread (per_job_logs), else one for all of them
        let groups: Vec<(String, Vec<&ThreadLog>)> = if spec.per_job {
            logs.iter()
                .enumerate()
                .filter_map(|(t, l)| {
                    file_name(spec, kind, spec.first_thread + t as u32).map(|n| (n, vec![l]))
                })
                .collect()
        } else {
            file_name(spec, kind, spec.first_thread)
                .map(|n| vec![(n, logs.iter().collect())])
                .unwrap_or_default()
        };
        for (name, threads) in groups {
            let path = PathBuf::from(&name);
            let r = write_whole(&path, spec.append.contains(&name), |w| {
                threads.iter().try_for_each(|l| l.write(kind, epoch_ms, w))
            });
            if let Err(e) = r {
                warnings.push(format!("fio log {name}: not written: {e}"));
            }
        }
    }
    warnings
}

/// fio's `write_iolog` of one job (its threads' records, taken from their statistics): the
/// lines appended to the file, as fio opens it for appending, written whole as the other logs;
/// each file of the job's set named by its path (`set`: the device, or `DIR/iolab-file.N`).
/// A warning line when it could not be written or was cut short.
pub fn write_iolog(
    spec: &FioLogs,
    set: &crate::model::job::FileSetSpec,
    stats: &mut [crate::measure::stats::ThreadStats],
) -> Option<String> {
    let name = spec.iolog.as_ref()?;
    let logs: Vec<_> = stats.iter_mut().filter_map(|s| s.iolog.take()).collect();
    let names: Vec<String> = match &set.device {
        Some(d) => vec![d.display().to_string()],
        None => (0..set.files)
            .map(|i| {
                crate::engine::fileset::file_path(&set.dir, i)
                    .display()
                    .to_string()
            })
            .collect(),
    };
    let r = write_whole(Path::new(name), true, |w| {
        crate::measure::iolog::write(&names, &logs, w)
    });
    match r {
        Err(e) => Some(format!("fio I/O log {name}: not written: {e}")),
        Ok(()) if logs.iter().any(|l| l.truncated) => Some(format!(
            "fio I/O log {name}: a thread issued more I/Os than its share of the log records: its later I/Os are not in it"
        )),
        Ok(()) => None,
    }
}

/// The time of clock `clock` (clock_gettime's clock id) `since` ago, in ms since its epoch.
pub fn clock_ms(clock: i32, since: std::time::Duration) -> Result<u64, String> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    if unsafe { libc::clock_gettime(clock as libc::clockid_t, &mut ts) } != 0 {
        return Err(format!(
            "clock {clock}: {}",
            std::io::Error::last_os_error()
        ));
    }
    let now_ms = ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000;
    Ok(now_ms.saturating_sub(since.as_millis() as u64))
}

/// Why `path` cannot be a log file: it exists and is not a regular file (a symbolic link is
/// never followed nor replaced), or its folder does not exist. None: it can be written.
pub fn unwritable(path: &Path) -> Option<String> {
    if let Ok(m) = std::fs::symlink_metadata(path)
        && (!m.file_type().is_file() || std::os::unix::fs::MetadataExt::nlink(&m) != 1)
    {
        return Some(
            "exists and is not a regular file of one name (a symbolic link, hard link, folder or device): iolab never writes through or replaces one".into(),
        );
    }
    let dir = folder(path);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => None,
        _ => Some(format!("its folder {} does not exist", dir.display())),
    }
}

fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes `path` whole, everything through one handle of its folder taken first
/// (`system::target::TargetDir`): what is at the name must be a regular file of one link or
/// nothing; a new temporary file beside it (O_CREAT | O_EXCL | O_NOFOLLOW, an unpredictable
/// name) is filled by `body` (after the existing file's contents with `append`, read without
/// following a link), flushed to disk and renamed over the name (renameat: neither followed).
/// A failure removes the temporary file.
fn write_whole(
    path: &Path,
    append: bool,
    body: impl FnOnce(&mut BufWriter<&mut std::fs::File>) -> std::io::Result<()>,
) -> std::result::Result<(), String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| "not a file name".to_string())?;
    let dir = TargetDir::open(folder(path))
        .map_err(|e| format!("its folder {}: {e}", folder(path).display()))?;
    dir.entry(name).map_err(|e| e.msg)?;
    let (mut f, tmp) = dir.create_temp(".iolab-log-").map_err(|e| e.to_string())?;
    let written = (|| -> std::io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, &mut f);
        if append {
            match dir.open_existing(name, false, libc::O_NONBLOCK) {
                Ok(mut old) => {
                    std::io::copy(&mut old, &mut w)?;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        body(&mut w)?;
        w.flush()?;
        drop(w);
        f.sync_all()?;
        dir.rename(&tmp, name)
    })();
    if let Err(e) = written {
        dir.remove(&tmp, true);
        return Err(e.to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::OpKind;

    fn spec(prefix: &Path, per_job: bool) -> FioLogs {
        FioLogs {
            bw: Some(prefix.display().to_string()),
            per_job,
            first_thread: 2,
            ..FioLogs::default()
        }
    }

    fn one(spec: &FioLogs, off: u64) -> ThreadLog {
        let mut l = ThreadLog::new(spec, 2);
        l.io(OpKind::Read, off, 4096, 1000, None, 0);
        l
    }

    #[test]
    fn per_job_files_are_numbered_from_the_jobs_first_thread() {
        let d = tempfile::tempdir().unwrap();
        let s = spec(&d.path().join("x"), true);
        let w = write_job_logs(&s, &[one(&s, 0), one(&s, 4096)], Default::default());
        assert!(w.is_empty(), "{w:?}");
        let a = std::fs::read_to_string(d.path().join("x_bw.2.log")).unwrap();
        let b = std::fs::read_to_string(d.path().join("x_bw.3.log")).unwrap();
        assert_eq!(a, "0, 4096000, 0, 4096, 0\n");
        assert_eq!(b, a);
        // nothing else: no temporary file left
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }

    #[test]
    fn one_file_for_all_threads_and_appended_after_an_earlier_job() {
        let d = tempfile::tempdir().unwrap();
        let s = FioLogs {
            offset: true,
            ..spec(&d.path().join("x"), false)
        };
        assert!(write_job_logs(&s, &[one(&s, 0), one(&s, 4096)], Default::default()).is_empty());
        let s2 = FioLogs {
            append: vec![d.path().join("x_bw.log").display().to_string()],
            ..s
        };
        assert!(write_job_logs(&s2, &[one(&s2, 8192)], Default::default()).is_empty());
        let t = std::fs::read_to_string(d.path().join("x_bw.log")).unwrap();
        let offs: Vec<&str> = t.lines().map(|l| l.split(", ").nth(4).unwrap()).collect();
        assert_eq!(offs, ["0", "4096", "8192"]);
    }

    #[test]
    fn a_symlink_is_neither_followed_nor_replaced() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, d.path().join("x_bw.log")).unwrap();
        let s = spec(&d.path().join("x"), false);
        let w = write_job_logs(&s, &[one(&s, 0)], Default::default());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("not a regular file"), "{w:?}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert!(
            std::fs::symlink_metadata(d.path().join("x_bw.log"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
