//! A worker thread's setup before its first I/O: its CPUs and I/O priority (`--cpus`,
//! `--ioprio`) and what its writes hold (`--buffers`).

use super::*;
use crate::measure::iolog::IoLog;

/// `--cpus` and `--ioprio`: the thread runs only on its CPUs and at its I/O priority from now on
/// (a system call each when it starts).
pub(super) fn place(job: &Job, thread: u32) -> std::io::Result<()> {
    // the system call's error, with what was asked
    let failed = |what: String| {
        let e = std::io::Error::last_os_error();
        Err(std::io::Error::new(e.kind(), format!("{what} ({e})")))
    };
    if let Some(p) = job.ioprio {
        // SAFETY: ioprio_set(IOPRIO_WHO_PROCESS, 0: the calling thread, value) touches no memory.
        if unsafe { libc::syscall(libc::SYS_ioprio_set, 1, 0, p.value()) } != 0 {
            return failed(format!(
                "--ioprio {p}: thread {thread} cannot take that I/O priority (rt needs CAP_SYS_ADMIN)"
            ));
        }
    }
    let Some(c) = &job.cpus else { return Ok(()) };
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes inside it (every CPU of the
    // list is at most MAX_CPU, below CPU_SETSIZE); sched_setaffinity(0) is the calling thread.
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in c.for_thread(thread) {
            libc::CPU_SET(cpu as usize, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        return failed(format!(
            "--cpus {c}: thread {thread} cannot run on those CPUs (`nproc` and the process's affinity, `taskset -p`, say which it may use)"
        ));
    }
    Ok(())
}

/// What the thread's writes hold (`--buffers`), for its part of the set.
pub(super) fn filler(job: &Job, thread: u32, g: &OpGen) -> Filler {
    let (lo, hi) = g.range();
    Filler::new(
        &job.buffers,
        job.seed,
        thread,
        job.bs_sizes()[0],
        hi.saturating_sub(lo),
    )
}

/// The thread's records for its job's fio logs (`write_bw_log`, ... and `write_iolog`), made
/// before its first I/O; the I/O log shares the job's record budget with the others.
pub(super) fn logs(job: &Job, st: &mut ThreadStats) {
    let Some(l) = &job.fio_logs else { return };
    if l.stat_logs() {
        st.fio_log = Some(crate::measure::fiolog::ThreadLog::new(l, job.threads));
    }
    if l.iolog.is_some() {
        let budget = match (l.max_record_bytes, l.stat_logs()) {
            (0, true) => crate::measure::fiolog::MAX_BYTES / 2,
            (b, true) => b / 2,
            (b, false) => b,
        };
        let datasync = job.fsync_mode == crate::model::job::FsyncMode::Fdatasync;
        st.iolog = Some(IoLog::new(budget, job.threads, datasync));
    }
}

/// `write_iolog`: the operation `next`, issued at `t0`, in the thread's I/O log (µs since the
/// thread's `start`). No allocation but a chunk's per 65,536 I/Os.
#[inline]
pub(super) fn log_issue(st: &mut ThreadStats, next: Next, start: Instant, t0: Instant) {
    if let Some(l) = &mut st.iolog {
        let us = t0.saturating_duration_since(start).as_micros() as u64;
        match next {
            Next::Io {
                kind,
                file,
                off,
                len,
                ..
            } => l.issue(kind, file, off, len, us),
            Next::Fsync { file } => l.issue(OpKind::Fsync, file, 0, 0, us),
        }
    }
}

/// `write_iolog`: the thread stopped issuing now (its files' `close` lines).
pub(super) fn log_end(st: &mut ThreadStats, start: Instant) {
    if let Some(l) = &mut st.iolog {
        l.end_us = start.elapsed().as_micros() as u64;
    }
}
