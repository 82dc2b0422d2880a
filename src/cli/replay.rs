//! `iolab run --replay TRACE`: the trace read once (every line checked, nothing written
//! before), its requests' counts, extent and queue depth turned into the run options of one
//! job that replays it (docs/capture.md, Replay).

use super::*;
use crate::measure::trace::scan;
use crate::model::replay::Replay;

/// The in-flight limit of a trace that does not say (a fio iolog), unless `--iodepth` is larger.
pub const IOLOG_DEPTH: u32 = 32;

/// The most requests in flight a replay keeps (the engines' rings are sized for it).
pub const MAX_DEPTH: u32 = 4096;

/// The most memory the buffers of the requests in flight take (one of the trace's largest
/// request each): a trace of 1 MiB requests keeps at most 1,024 in flight.
pub const MAX_BUFFERS_BYTES: u64 = 1 << 30;

/// `a` with `--replay`'s trace read and the run options of its replay set: one thread, a queue
/// engine, the trace's queue depth, O_DIRECT unless `--buffered`, a file per file of the trace
/// as large as its extent (rounded up to its largest request), the trace's own flushes only.
pub fn prepare(a: &RunArgs) -> Result<RunArgs> {
    let (path, flag_name) = match (&a.replay, &a.like) {
        (Some(p), _) => (p, "--replay"),
        (None, Some(p)) => (p, "--like"),
        (None, None) => unreachable!("--replay or --like"),
    };
    let refused = [
        (a.mode.is_some(), "--mode"),
        (a.rate.is_some(), "--rate"),
        (a.ops.is_some(), "--ops"),
        (a.io_size.is_some(), "--io-size"),
        (a.set.bs.is_some(), "--bs"),
        (a.set.bs_write.is_some(), "--bs-write"),
        (a.threads.is_some_and(|t| t != 1), "--threads"),
        (a.verify, "--verify"),
        (!a.roles.is_empty(), "--role"),
        (a.profile.is_some(), "--profile"),
        (a.steady_state.is_some(), "--steady-state"),
        (a.ramp > 0.0, "--ramp"),
        (
            a.fsync_all || a.fsync_every.is_some(),
            "--fsync-all/--fsync-every",
        ),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        return Err(Error::usage(if a.like.is_some() {
            format!(
                "--like draws its requests, their sizes and times from the capture: {flag} cannot be used with it (--time, --scale and --closed change how long and how hard it runs, --size and --device where)"
            )
        } else {
            format!(
                "--replay issues the trace's own requests at the trace's times: {flag} cannot be used with it (--time caps it, --speed and --closed change its pace)"
            )
        }));
    }
    let engine = queue_engine(a, flag_name)?;
    if a.like.is_some() {
        return prepare_like(a, path, engine);
    }
    let s = scan(path).map_err(|e| Error::usage(format!("--replay {}: {e}", path.display())))?;
    if s.reads + s.writes + s.trims == 0 {
        return Err(Error::usage(format!(
            "--replay {}: no read, write or trim to replay ({} flushes, {} requests skipped)",
            path.display(),
            s.flushes,
            s.skipped
        )));
    }
    let want = match s.max_qd {
        0 => IOLOG_DEPTH,
        q => q,
    };
    let (mut b, bs) = one_stream(a, engine, s.max_len_bytes, want, s.writes + s.trims > 0);
    b.ops = Some(s.reads + s.writes + s.trims);
    if a.device.is_none() {
        b.set.files = Some(a.set.files.unwrap_or(s.files.max(1)));
        b.set.size = Some(
            a.set
                .size
                .unwrap_or(s.extent_bytes.div_ceil(bs).max(1) * bs),
        );
    }
    b.replay_spec = Some(Replay {
        trace: path.display().to_string(),
        format: s.format.expect("a scanned trace's format"),
        speed: a.speed.unwrap_or(1.0),
        closed: a.closed,
        requests: s.requests(),
        reads: s.reads,
        writes: s.writes,
        trims: s.trims,
        flushes: s.flushes,
        skipped: s.skipped,
        span_ns: s.span_ns,
        extent_bytes: s.extent_bytes,
        max_len_bytes: s.max_len_bytes,
        max_qd: s.max_qd,
        files: s.files.max(1),
        // the target's alignment is set once the plan knows it
        align_bytes: 512,
        like: None,
        twin: None,
    });
    Ok(b)
}

/// The run of one stream of requests, `--replay`'s or `--like`'s: one thread with the queue
/// `engine`, a buffer per request in flight, each as large as the largest request rounded up to
/// 4 KiB (returned), at least `want` deep (and `--iodepth`), at most [`MAX_DEPTH`] and
/// [`MAX_BUFFERS_BYTES`] of buffers; reads alone or reads and writes; no fsync of iolab's own.
fn one_stream(a: &RunArgs, engine: &str, max_len: u64, want: u32, writes: bool) -> (RunArgs, u64) {
    let bs = max_len.div_ceil(4096).max(1) * 4096;
    let mut b = a.clone();
    b.engine = engine.to_string();
    b.iodepth = a
        .iodepth
        .max(want)
        .min(MAX_DEPTH)
        .min((MAX_BUFFERS_BYTES / bs).max(1) as u32);
    b.threads = Some(1);
    b.mode = Some(if writes { "rndrw" } else { "rndrd" }.to_string());
    b.set.bs = Some(BsArg::One(bs));
    b.direct = !a.buffered;
    b.fsync_freq = 0;
    b.fsync_end = false;
    (b, bs)
}

/// A queue engine (`--engine`, io_uring by default, else libaio): the requests in flight
/// together, as they were.
fn queue_engine(a: &RunArgs, flag_name: &str) -> Result<&'static str> {
    let engine = match a.engine.as_str() {
        "sync" | "psync" => {
            if crate::engine::available(EngineKind::IoUring, 1, MAX_DEPTH).is_ok() {
                "io_uring"
            } else {
                "libaio"
            }
        }
        e => e,
    };
    let kind: EngineKind = flag("--engine", engine)?;
    if !kind.caps().async_queue {
        return Err(Error::usage(format!(
            "{flag_name} needs an engine that keeps requests in flight: --engine io_uring, libaio or posixaio (not {engine})"
        )));
    }
    Ok(kind.name())
}

/// `--like CAPTURE`: the capture read once into its twin ([`crate::measure::twin`]); one
/// thread with a queue engine, as deep as the capture's deepest queue (times `--scale` with
/// `--closed`), one file as large as the regions the capture touched (1 MiB each) unless
/// `--size`, for `--time` or the capture's window.
fn prepare_like(a: &RunArgs, path: &std::path::Path, engine: &str) -> Result<RunArgs> {
    if a.speed.is_some() {
        return Err(Error::usage(
            "--speed is --replay's: with --like, --scale N runs N times the captured load",
        ));
    }
    // `all`: every request, one stream (as a capture that told no files)
    let class = a.like_class.as_deref().filter(|&c| c != "all");
    let tw = crate::measure::twin::twin_of(path, class)
        .map_err(|e| Error::usage(format!("--like {}: {e}", path.display())))?;
    if tw.reads + tw.writes == 0 {
        if let Some(c) = class {
            return Err(Error::usage(format!(
                "--class {c}: the capture {} holds no read or write of that class (a capture made with --dir, --pid or --cgroup tells each request's file)",
                path.display()
            )));
        }
        return Err(Error::usage(format!(
            "--like {}: the capture holds no read or write to draw from ({} flushes, {} other requests)",
            path.display(),
            tw.flushes,
            tw.skipped
        )));
    }
    let scale = a.scale.unwrap_or(1.0);
    let capture_s = tw.duration_ns as f64 / 1e9;
    let time_s = a.time.unwrap_or(capture_s);
    let qd = f64::from(tw.max_qd.max(1)) * if a.closed { scale } else { scale.max(1.0) };
    let (mut b, bs) = one_stream(a, engine, tw.max_len_bytes, qd.ceil() as u32, tw.writes > 0);
    // closed: the time ends it; open loop: the stream ends itself at the time's end (the
    // job's deadline a little later: `Job::deadline_s`)
    b.time = Some(time_s);
    b.ops = None;
    if a.device.is_none() {
        b.set.files = Some(1);
        b.set.size = Some(a.set.size.unwrap_or(
            (tw.regions_touched.max(1) * crate::measure::fingerprint::REGION_BYTES).max(bs),
        ));
    }
    let span_ns = if a.closed {
        0
    } else {
        (time_s * scale * 1e9) as u64
    };
    b.replay_spec = Some(Replay {
        trace: path.display().to_string(),
        format: crate::model::replay::TraceFormat::IolabCapture,
        speed: if a.closed { 1.0 } else { scale },
        closed: a.closed,
        requests: tw.reads + tw.writes + tw.flushes,
        reads: tw.reads,
        writes: tw.writes,
        trims: 0,
        flushes: tw.flushes,
        skipped: tw.skipped,
        span_ns,
        extent_bytes: tw.regions_touched * crate::measure::fingerprint::REGION_BYTES,
        max_len_bytes: tw.max_len_bytes,
        max_qd: tw.max_qd,
        files: 1,
        align_bytes: 512,
        like: Some(crate::model::replay::Like {
            scale,
            time_s,
            capture_s,
            regions_touched: tw.regions_touched,
            captured_p99_ns: tw.p99_ns,
            class: class.map(str::to_string),
        }),
        twin: Some(crate::model::replay::TwinRef(std::sync::Arc::new(tw))),
    });
    Ok(b)
}

/// A role of a phase as `plan_role_set` takes it: its name, run options, whether it has a set
/// of its own, whether its seed is the run's plus its index.
pub type RoleArgs = (String, RunArgs, bool, bool);

/// `--like` onto `--dir` without `--class`, of a capture that told its requests' files: one
/// role per file class the capture read or wrote (`wal`, `data`, `temp`, `other`, in that
/// order), each the twin of its class's requests alone on a file of its own in `DIR/CLASS/`,
/// all at once (a WAL writer beside the data's readers and writers, each at its own rate and
/// depth); `--size` shared out by the regions each class touched. None: one stream (a capture
/// of a device, `--class`, `--device`, `--replay`). The requests to no file (the filesystem's
/// journal and metadata) are left out, with a note: the target's filesystem makes its own.
pub fn like_roles(a: &RunArgs) -> Result<Option<(Vec<RoleArgs>, Warning)>> {
    let (Some(path), None, None, None) = (&a.like, &a.replay, &a.like_class, &a.device) else {
        return Ok(None);
    };
    let n = crate::measure::twin::class_requests(path)
        .map_err(|e| Error::usage(format!("--like {}: {e}", path.display())))?;
    let slots = crate::model::capture::FileClass::SLOTS;
    let classes: Vec<usize> = (0..4).filter(|&i| n[i] > 0).collect();
    if classes.is_empty() {
        return Ok(None);
    }
    let mut roles = Vec::new();
    for &i in &classes {
        let mut ra = a.clone();
        ra.like_class = Some(slots[i].to_string());
        ra.set.size = None;
        let b = prepare(&ra)?;
        roles.push((slots[i].to_string(), b, true, true));
    }
    // --size: each class's part as its share of the regions the classes touched
    if let Some(total) = a.set.size {
        let touched: Vec<u64> = roles.iter().map(|r| r.1.set.size.unwrap_or(0)).collect();
        let sum: u64 = touched.iter().sum::<u64>().max(1);
        for (r, t) in roles.iter_mut().zip(touched) {
            let bs = match r.1.set.bs {
                Some(BsArg::One(b)) => b,
                _ => 4096,
            };
            let part = (u128::from(total) * u128::from(t) / u128::from(sum)) as u64;
            r.1.set.size = Some((part / bs).max(1) * bs);
        }
    }
    let names: Vec<&str> = classes.iter().map(|&i| slots[i]).collect();
    let note = Warning::new(
        "like_roles",
        format!(
            "--like: one role per file class of the capture ({}), each the twin of its class's requests on files of its own in DIR/CLASS/, all at once{}; --class CLASS runs one class, --class all one stream of every request",
            names.join(", "),
            if n[4] > 0 {
                format!(
                    "; the capture's {} reads and writes to no file (the filesystem's journal and metadata) are left out, as the target's filesystem makes its own",
                    n[4]
                )
            } else {
                String::new()
            }
        ),
    );
    Ok(Some((roles, note)))
}

/// The plan of a replay: `plan_run` of [`prepare`]'s options, each request aligned as the
/// target needs ([`align_requests`]). (`--like`'s roles: [`like_roles`], planned by `plan_run`.)
pub fn plan_replay(a: &RunArgs) -> Result<Plan> {
    let mut plan = plan_run(&prepare(a)?)?;
    align_requests(&mut plan);
    Ok(plan)
}

/// Each replaying job's requests aligned as the target needs: its O_DIRECT alignment, else
/// 512 bytes.
pub fn align_requests(plan: &mut Plan) {
    let dio = plan.dio.offset.max(512);
    let jobs = plan
        .cells
        .iter_mut()
        .chain(plan.roles.iter_mut().map(|r| &mut r.job));
    for j in jobs {
        let align = if j.direct { dio } else { 512 };
        if let Some(r) = j.replay.as_mut() {
            r.align_bytes = align;
        }
    }
}
