//! The options of fio's engines that do no I/O (`ioengine=cpuio`, `ioengine=exec`; engine
//! options in fio's terms) as the work of the job's threads (`model::noio`). docs/fio-jobs.md,
//! "Engines without I/O".

use super::ctx::Ctx;
use crate::model::job::EngineKind;
use crate::model::noio::{CpuLoad, ExecProgram, NoIo};

/// cpuio's options.
const CPUIO: &[&str] = &["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"];
/// exec's options.
const EXEC: &[&str] = &["program", "arguments", "grace_time", "std_redirect"];

/// What the threads of a job on engine `e` do instead of I/O (None for an engine that does
/// I/O). `name`: the job's fio name (`%n`, the output files); `runtime`: its `runtime=` in
/// seconds; `numjobs`: its clones.
pub(super) fn noio(
    c: &mut Ctx,
    e: EngineKind,
    name: &str,
    runtime: Option<f64>,
    numjobs: u64,
    notes: &mut Vec<String>,
) -> Option<NoIo> {
    // an engine's options with another engine: fio does not know them there
    for (engine, keys) in [(EngineKind::Cpuio, CPUIO), (EngineKind::Exec, EXEC)] {
        if e != engine {
            let given: Vec<&str> = keys
                .iter()
                .copied()
                .filter(|k| c.opt(k).is_some())
                .collect();
            for k in given {
                c.bad(
                    k,
                    format!(
                        "an option of ioengine={}: fio rejects it with another engine",
                        engine.name()
                    ),
                );
            }
        }
    }
    if !e.caps().no_io {
        return None;
    }
    let Some(runtime) = runtime else {
        c.refuse_key(
            "ioengine",
            &format!(
                "ioengine={} does no I/O, so no size ends it: fio runs it until it is stopped; give runtime=",
                e.name()
            ),
        );
        return None;
    };
    notes.push(format!(
        "ioengine={}: a cycle still running when the runtime ends completes; fio counts it (and its time in job_runtime), iolab only the cycles that ended within the runtime",
        e.name()
    ));
    match e {
        EngineKind::Cpuio => cpuio(c),
        _ => exec(c, name, runtime, numjobs, notes),
    }
}

fn cpuio(c: &mut Ctx) -> Option<NoIo> {
    let load = match c.int("cpuload") {
        None | Some(0) => {
            c.bad(
                "cpuload",
                "ioengine=cpuio needs cpuload= (the busy share of each thread, 1..100 %; fio fails without it)",
            );
            return None;
        }
        Some(l) => l.min(100) as u32,
    };
    let chunk_us = c.int("cpuchunks").unwrap_or(50_000);
    let qsort = match c.val("cpumode").as_deref().map(str::trim) {
        None | Some("noop") => false,
        Some("qsort") => true,
        Some(_) => {
            c.bad("cpumode", "not noop or qsort");
            false
        }
    };
    if c.bool("exit_on_io_done") == Some(true) {
        c.refuse_key(
            "exit_on_io_done",
            "iolab's cpuio threads run for their runtime; they do not end when the phase's I/O jobs do",
        );
    }
    Some(NoIo::Cpu(CpuLoad {
        load_pct: load,
        chunk_us,
        qsort,
    }))
}

fn exec(
    c: &mut Ctx,
    name: &str,
    runtime: f64,
    numjobs: u64,
    notes: &mut Vec<String>,
) -> Option<NoIo> {
    let Some(program) = c.val("program").filter(|p| !p.trim().is_empty()) else {
        c.bad(
            "program",
            "ioengine=exec needs program= (fio fails without it)",
        );
        return None;
    };
    // fio's expand_variables: %r the runtime in whole seconds, %n the job's name; then the
    // command line split on spaces (no quoting, as fio's)
    let args = c
        .val("arguments")
        .map(|a| {
            a.replace("%r", &(runtime as u64).to_string())
                .replace("%n", name)
        })
        .unwrap_or_default();
    let argv: Vec<String> = std::iter::once(program.trim())
        .chain(args.split(' '))
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .collect();
    let grace_s = c.int("grace_time").unwrap_or(1);
    let redirect = c.bool("std_redirect").unwrap_or(true);
    if redirect && numjobs > 1 {
        c.refuse_key(
            "numjobs",
            "ioengine=exec with std_redirect and numjobs>1: fio's clones write one NAME.stdout over each other",
        );
    }
    if !redirect {
        notes.push(
            "std_redirect=0: the program's output goes to iolab's standard error (fio's: to fio's standard output; iolab's may be its document)".into(),
        );
    }
    let redirect_dir = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            c.bad("std_redirect", format!("the current directory: {e}"));
            return None;
        }
    };
    // the output files' names are checked before anything runs (a link is never written
    // through nor replaced)
    for ext in ["stdout", "stderr"].iter().filter(|_| redirect) {
        let p = redirect_dir.join(format!("{name}.{ext}"));
        if let Some(why) = crate::engine::fiolog::unwritable(&p) {
            c.bad("std_redirect", format!("{}: {why}", p.display()));
        }
    }
    Some(NoIo::Exec(ExecProgram {
        argv,
        grace_s,
        redirect: redirect.then(|| name.to_string()),
        redirect_dir,
    }))
}
