//! fio's `ioengine=exec` (`model::noio::ExecProgram`): no I/O and no file of the set; each
//! thread starts the job's program in its first cycle and then checks on it every 50 ms (a
//! cycle: asleep 50 ms, then a pause of 50 ms, fio's think time), until the job's runtime has
//! passed: then SIGTERM, `grace_time` seconds, SIGKILL, and the program is waited for (fio
//! leaves it unwaited). The program is what the job file names, run as iolab runs (root, as
//! fio): docs/safety.md, section 7.
//!
//! With `std_redirect` (fio's default) its standard output and error go to `NAME.stdout` and
//! `NAME.stderr` in the directory iolab was started in, as fio's: each written to a new file
//! (O_EXCL, an unpredictable name) through that directory's handle and renamed over the name
//! when the program has ended; a name that is a link or not a regular file is refused before
//! anything runs. Without it, both go to iolab's standard error (iolab's standard output may be
//! its document).

use super::ops::{CycleEngine, Shared};
use crate::model::job::EngineKind;
use crate::model::noio::NoIo;
use crate::system::target::TargetDir;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// fio's exec engine: each check sleeps 50 ms, and so does the pause after it (`thinktime`).
const CHECK: Duration = Duration::from_millis(50);

/// The files the program's output goes to until it ends: (temporary name, final name).
struct Redirect {
    dir: TargetDir,
    files: [(String, String); 2],
}

pub struct Exec {
    /// Made once when the thread starts (nothing is allocated per cycle but the start).
    cmd: Option<Command>,
    child: Option<Child>,
    grace: Duration,
    redirect: Option<Redirect>,
}

/// The output files of job `name` in `dir`: each made anew (O_EXCL) under a temporary name,
/// the names it will take checked first (a link or anything but a regular file refused).
fn redirect(dir: &std::path::Path, name: &str) -> std::io::Result<(Redirect, [Stdio; 2])> {
    let d = TargetDir::open(dir)?;
    let mut files = Vec::new();
    let mut stdio = Vec::new();
    for ext in ["stdout", "stderr"] {
        let fin = format!("{name}.{ext}");
        d.entry(&fin).map_err(|e| std::io::Error::other(e.msg))?;
        let (f, tmp) = d.create_temp(".iolab-exec-")?;
        files.push((tmp, fin));
        stdio.push(Stdio::from(f));
    }
    let [out, err] = <[Stdio; 2]>::try_from(stdio).map_err(|_| std::io::Error::other("two"))?;
    let [a, b] =
        <[(String, String); 2]>::try_from(files).map_err(|_| std::io::Error::other("two files"))?;
    Ok((
        Redirect {
            dir: d,
            files: [a, b],
        },
        [out, err],
    ))
}

impl Exec {
    /// Ends the program: SIGTERM, the grace time, SIGKILL (fio's cleanup), then waits for it.
    fn end(&mut self) -> Option<std::io::Result<()>> {
        let mut child = self.child.take()?;
        let pid = child.id() as libc::pid_t;
        // SAFETY: kill takes plain integers; the child is ours and not yet waited for, so the
        // pid is still its own.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        std::thread::sleep(self.grace);
        let _ = child.kill();
        Some(child.wait().map(drop))
    }

    /// Puts the output files under their names (the program has ended).
    fn keep_output(&mut self) -> std::io::Result<()> {
        let Some(r) = self.redirect.take() else {
            return Ok(());
        };
        for (tmp, fin) in &r.files {
            r.dir.rename(tmp, fin)?;
        }
        Ok(())
    }
}

impl<'a> CycleEngine<'a> for Exec {
    const KIND: EngineKind = EngineKind::Exec;

    fn open(sh: &Shared<'a>, _thread: u32) -> std::io::Result<Self> {
        let Some(NoIo::Exec(p)) = &sh.job.noio else {
            return Err(std::io::Error::other(
                "the exec engine runs from a job file's program= (ioengine=exec)",
            ));
        };
        let Some((prog, args)) = p.argv.split_first() else {
            return Err(std::io::Error::other("exec: no program"));
        };
        let mut cmd = Command::new(prog);
        cmd.args(args).stdin(Stdio::null());
        let redirect = match &p.redirect {
            Some(name) => {
                let (r, [out, err]) = redirect(&p.redirect_dir, name).map_err(|e| {
                    std::io::Error::new(
                        e.kind(),
                        format!(
                            "exec: {name}.stdout and {name}.stderr in {}: {e}",
                            p.redirect_dir.display()
                        ),
                    )
                })?;
                cmd.stdout(out).stderr(err);
                Some(r)
            }
            None => {
                let err = std::io::stderr().lock();
                let fd = std::os::fd::AsFd::as_fd(&err).try_clone_to_owned()?;
                cmd.stdout(Stdio::from(fd)).stderr(Stdio::inherit());
                None
            }
        };
        Ok(Exec {
            cmd: Some(cmd),
            child: None,
            grace: Duration::from_secs(p.grace_s),
            redirect,
        })
    }

    fn cycle(&mut self) -> Result<Duration, i32> {
        match self.cmd.take() {
            Some(mut c) => {
                // the first cycle starts the program (a program that cannot start is the
                // cycle's error, as fio's job goes on with its checks)
                let r = c.spawn();
                drop(c);
                match r {
                    Ok(ch) => self.child = Some(ch),
                    Err(e) => {
                        eprintln!("iolab: exec: the program did not start: {e}");
                        return Err(e.raw_os_error().unwrap_or(libc::ENOENT));
                    }
                }
            }
            None => std::thread::sleep(CHECK),
        }
        Ok(CHECK)
    }

    fn finish(&mut self) -> Option<Result<(), i32>> {
        let ended = self.end();
        if let Err(e) = self.keep_output() {
            eprintln!("iolab: exec: the program's output files: {e}");
        }
        ended.map(|r| r.map_err(|e| e.raw_os_error().unwrap_or(libc::EIO)))
    }
}

impl Drop for Exec {
    /// A program still running when the thread ends early (an error) is ended too; output files
    /// not yet renamed are removed.
    fn drop(&mut self) {
        drop(self.end());
        if let Some(r) = self.redirect.take() {
            for (tmp, _) in &r.files {
                r.dir.remove(tmp, true);
            }
        }
    }
}
