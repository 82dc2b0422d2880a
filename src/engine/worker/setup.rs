//! A worker thread's setup before its first I/O: its CPUs and I/O priority (`--cpus`,
//! `--ioprio`) and what its writes hold (`--buffers`).

use super::*;

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
