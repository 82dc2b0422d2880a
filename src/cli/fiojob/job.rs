//! One fio job translated into `iolab run` options: what, how, where, how long, pacing,
//! offsets, verification. Every blocker is recorded in the job files' [`Blockers`] and the
//! translation goes on, so one pass finds them all.

use super::ctx::Ctx;
use super::{FIO_RANDSEED, FioJob};
use crate::cli::*;
use crate::spec::fio_vocab;
use crate::spec::fiojob::JobSection;

/// Options whose values the translation reads its own way (checked there, not by their kind).
const OWN_PARSE: &[&str] = &["size", "offset", "offset_increment", "io_size"];

/// The job `s` (the `index`th of the run) as run options; `None` when it has an error (a
/// refusal alone still gives the job, for `--ignore-unsupported`).
pub(super) fn translate_job(
    a: &RunArgs,
    s: &JobSection,
    index: u64,
    blockers: &mut super::Blockers,
    device_size: &dyn Fn(&Path) -> Option<u64>,
) -> Option<FioJob> {
    let errors_before = blockers.errors();
    let kb_opt = s.get("kb_base").cloned();
    let mut c = Ctx {
        s,
        kb: 1024,
        blockers,
        ignored: Vec::new(),
    };
    c.kb = match kb_opt.and_then(|o| o.value) {
        None => 1024,
        Some(v) if v.trim() == "1000" => 1000,
        Some(v) if v.trim() == "1024" => 1024,
        Some(_) => {
            c.bad("kb_base", "fio takes 1000 or 1024");
            1024
        }
    };
    c.check_all(OWN_PARSE);
    if c.opt("read_iolog").is_some() {
        return super::iolog::replay_job(a, c);
    }
    let mut notes: Vec<String> = Vec::new();
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut f = |k: &str, v: String| flags.push((k.to_string(), v));

    // what: rw
    let rw = c.val("rw").unwrap_or_else(|| "read".into());
    let (rw_kind, stride) = match rw.split_once(':') {
        Some((k, n)) => (k.trim().to_string(), Some(n.to_string())),
        None => (rw.trim().to_string(), None),
    };
    let mode = match fio_vocab::mode_of_rw(&rw_kind) {
        Some(m) => m,
        None => {
            c.bad(
                "rw",
                "not an I/O pattern of fio's (read, write, randread, randwrite, randrw, readwrite, trim, randtrim, trimwrite, randtrimwrite)",
            );
            Mode::Seqrd
        }
    };
    let writes = mode.writes();
    // the directions whose block size the job uses (read, write, trim): randtrimwrite's
    // writes take their trim's size (fio)
    let dirs = [
        mode.reads(),
        mode.issues_writes() && mode != Mode::Rndtrimwr,
        mode.trims(),
    ];
    let mode = mode.name();
    f("mode", mode.into());
    let random = mode.starts_with("rnd");
    // rw=...:N: sequential I/O moves on N bytes after each I/O (negative: backwards)
    let skip: i64 = match stride.as_deref().map(str::trim) {
        None => 0,
        Some(n) if random => {
            // a new random offset every Nth I/O, the ones between sequential (rw_sequencer)
            match n.parse::<u32>() {
                Ok(0 | 1) => {}
                Ok(k) => f("random-every", k.to_string()),
                Err(_) => c.bad("rw", "`:N` of a random pattern is a count (randread:8)"),
            }
            match c.val("rw_sequencer").as_deref().map(str::trim) {
                None | Some("sequential") => {}
                Some("identical") => f("random-every-same", String::new()),
                Some(_) => c.bad("rw_sequencer", "not sequential or identical"),
            }
            0
        }
        Some(n) => {
            let (neg, abs) = n.strip_prefix('-').map_or((false, n), |a| (true, a));
            match fio_vocab::parse_size(abs, c.kb).map(i64::try_from) {
                Ok(Ok(v)) => {
                    if neg {
                        -v
                    } else {
                        v
                    }
                }
                _ => {
                    c.bad(
                        "rw",
                        "`:N` is not a size (holes between I/Os, e.g. read:64k)",
                    );
                    0
                }
            }
        }
    };
    let mixed = matches!(mode, "rndrw" | "seqrw");
    if mixed {
        let pct = match (c.val("rwmixread"), c.val("rwmixwrite")) {
            (Some(r), _) => fio_vocab::parse_percent(&r).unwrap_or(50),
            (None, Some(w)) => 100 - fio_vocab::parse_percent(&w).unwrap_or(50),
            (None, None) => 50,
        };
        f("rwmixread", pct.to_string());
    }

    // fio's random map (default): each block once per pass; random_generator=lfsr walks a
    // full-period sequence instead; norandommap draws with replacement (iolab's own default)
    let mut map = false;
    if random {
        let lfsr = match c.val("random_generator").as_deref().map(str::trim) {
            None | Some("tausworthe") | Some("tausworthe64") => false,
            Some("lfsr") => true,
            Some(_) => {
                c.bad("random_generator", "not tausworthe, tausworthe64 or lfsr");
                false
            }
        };
        let uniform = c
            .val("random_distribution")
            .is_none_or(|d| d.trim() == "random");
        if lfsr {
            f("random-map", "lfsr".into());
        } else if !c.bool("norandommap").unwrap_or(false) && uniform {
            f("random-map", "bitmap".into());
        }
        map = lfsr || (!c.bool("norandommap").unwrap_or(false) && uniform);
    }
    // block sizes per direction: bssplit, else bsrange, else bs (fio's precedence)
    let super::bsizes::Sizes {
        fixed: bs_fixed,
        min: bs_min,
    } = super::bsizes::block_sizes(&mut c, &mut f, &mut notes, dirs, map);

    // how: engine, depth, direct, threads
    let engine = c.val("ioengine").unwrap_or_else(|| "psync".into());
    let engine = engine.trim().to_string();
    let e = match EngineKind::from_fio(&engine) {
        Some(k) => k,
        None => {
            c.refuse_key("ioengine", "iolab runs sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, mmap, null, posixaio, falloc, ftruncate, filecreate, filestat, filedelete, cpuio and exec");
            EngineKind::Sync
        }
    };
    f("engine", e.name().into());
    match c.int("iodepth") {
        Some(0) => c.bad("iodepth", "must be at least 1"),
        Some(d) if e.caps().async_queue => f("iodepth", d.to_string()),
        Some(d) if d > 1 => notes.push(format!(
            "iodepth={d} has no effect with ioengine={engine} (one I/O at a time per thread, as in fio)"
        )),
        _ => {}
    }
    let direct = c.bool("direct").unwrap_or(false) || c.bool("buffered") == Some(false);
    if direct {
        f("direct", "true".into());
    }
    let numjobs = match c.int("numjobs") {
        Some(0) => {
            c.bad("numjobs", "must be at least 1");
            1
        }
        n => n.unwrap_or(1),
    };
    f("threads", numjobs.to_string());
    // openfiles: the file engines hold no file open; the others keep every file of the set open
    if c.opt("openfiles").is_some() && !e.caps().file_ops {
        c.refuse_key("openfiles", "iolab keeps every file of the set open");
    }

    // flushes
    let fsync = c.int("fsync").unwrap_or(0);
    let fdatasync = c.int("fdatasync").unwrap_or(0);
    match (fsync, fdatasync) {
        (0, 0) => f("fsync-freq", "0".into()),
        (n, 0) => f("fsync-freq", n.to_string()),
        (0, n) => {
            f("fsync-freq", n.to_string());
            f("fsync-mode", "fdatasync".into());
        }
        _ => {
            c.refuse_key(
                "fdatasync",
                "iolab flushes one way per job (fsync= given too)",
            );
            f("fsync-freq", fsync.to_string());
        }
    }
    let end = c.bool("end_fsync").unwrap_or(false) || c.bool("fsync_on_close").unwrap_or(false);
    f("fsync-end", end.to_string());
    match c
        .val("sync")
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("0") | Some("none") => {}
        Some("1") | Some("sync") | Some("") => f("open-flags", "sync".into()),
        Some("dsync") => f("open-flags", "dsync".into()),
        Some(_) => c.bad("sync", "not none, sync or dsync"),
    }

    // where: files or a device
    let mut nrfiles = match c.int("nrfiles") {
        Some(0) => {
            c.bad("nrfiles", "must be at least 1");
            1
        }
        n => n.unwrap_or(1),
    };
    let mut dir: Option<PathBuf> = c.val("directory").map(|d| PathBuf::from(d.trim()));
    let mut device: Option<PathBuf> = None;
    let named = c.opt("filename").is_some();
    // the named files (not a device), to size a job that gives no size= by them, as fio does
    let mut named_paths: Vec<PathBuf> = Vec::new();
    if let Some(fname) = c.val("filename") {
        let names: Vec<&str> = fname.split(':').filter(|n| !n.is_empty()).collect();
        if names.len() == 1 && names[0].starts_with("/dev/") {
            device = Some(PathBuf::from(names[0]));
        } else {
            let paths: Vec<PathBuf> = names
                .iter()
                .map(|n| dir.as_ref().map_or_else(|| PathBuf::from(n), |d| d.join(n)))
                .collect();
            let parents: Vec<PathBuf> = paths
                .iter()
                .map(|p| {
                    p.parent()
                        .filter(|x| !x.as_os_str().is_empty())
                        .unwrap_or(Path::new("."))
                        .to_path_buf()
                })
                .collect();
            if paths.is_empty()
                || names.iter().any(|n| n.starts_with("/dev/"))
                || parents.iter().any(|p| *p != parents[0])
            {
                c.refuse_key(
                    "filename",
                    "iolab runs one set of files in one directory, or one device",
                );
            } else {
                notes.push(format!(
                    "filename={fname}: iolab runs on its own set of {} file(s) (iolab-file.N) in {} instead of the named file(s)",
                    paths.len(),
                    parents[0].display()
                ));
                dir = Some(parents[0].clone());
                nrfiles = paths.len() as u64;
                named_paths = paths;
            }
        }
    }
    if let Some(v) = c.val("filename_format") {
        notes.push(format!(
            "filename_format={v}: iolab names its own files (iolab-file.N)"
        ));
    }
    let dev_bytes = device.as_deref().and_then(device_size);
    // size: bytes, N% of a device, or zones (fio needs zonemode=zbd for those)
    let size = match c.val("size").map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if v.ends_with('%') => match (&device, dev_bytes, fio_vocab::parse_percent(&v)) {
            (Some(_), Some(b), Ok(p)) if p > 0 => Some(share(b, p, bs_fixed)),
            (_, _, Err(e)) => {
                c.bad("size", e);
                None
            }
            _ => {
                c.refuse_key(
                    "size",
                    "a share of existing files' size: iolab makes its own files",
                );
                None
            }
        },
        Some(v) if v.ends_with('z') && v[..v.len() - 1].chars().all(|ch| ch.is_ascii_digit()) => {
            c.refuse_key(
                "size",
                "a size in zones needs zonemode=zbd, which iolab does not run (fio 3.33 without it refuses it too)",
            );
            None
        }
        Some(_) => c.size("size"),
        None => c
            .size("filesize")
            .map(|fs| fs.saturating_mul(nrfiles))
            .or_else(|| {
                // no size: fio moves the named files' own (their sizes together)
                let n = existing_size(&named_paths)?;
                notes.push(format!(
                    "no size=: the named file(s) hold {n} bytes, which the job moves, as fio (iolab's own set is made that large)"
                ));
                Some(n)
            }),
    };
    // where the I/O goes in each file or on the device: offset= (a percentage aligned up to
    // offset_align, else to the smallest block, as fio), offset_increment= per clone
    let align = c
        .size("offset_align")
        .filter(|a| *a > 0)
        .unwrap_or(bs_min.max(1));
    let offset = start_offset(&mut c, "offset", dev_bytes, align, &mut notes);
    let increment = start_offset(&mut c, "offset_increment", dev_bytes, align, &mut notes);
    let mut per_job_bytes = size;
    let place = |f: &mut dyn FnMut(&str, String)| {
        if offset > 0 {
            f("offset", offset.to_string());
        }
        if increment > 0 && numjobs > 1 {
            f("offset-increment", increment.to_string());
        }
    };
    if let Some(d) = &device {
        f("device", d.display().to_string());
        place(&mut f);
        match size {
            Some(sz) => f("size", sz.to_string()),
            // fio uses the whole device (from the offset on)
            None => match dev_bytes {
                Some(b) => per_job_bytes = Some(b.saturating_sub(offset)),
                None => c.bad_job(
                    " gives no size=",
                    format!(
                        " and the size of {} cannot be read: give size= (fio uses the whole of a device it can read, and stops with 'you need to specify size=' where it cannot)",
                        d.display()
                    ),
                ),
            },
        }
        if writes {
            notes.push(format!(
                "writes and trims (discards) to {} need --destructive, as any iolab run on a device",
                d.display()
            ));
        }
    } else {
        // fio's falloc engine punches the hole too (it moves no data: its own trim)
        if dirs[2] && e.caps().needs_files && e.caps().moves_data {
            notes.push(format!(
                "rw={rw_kind}: each trim of a file punches a hole (fallocate PUNCH_HOLE|KEEP_SIZE); fio 3.33 fails trims of regular files (BLKDISCARD, ENOTTY)"
            ));
        }
        match size {
            None if c.opt("size").is_none() && !e.caps().no_io => c.bad_job(
                " gives no size",
                " (size= or filesize=): iolab creates its files and must know how large",
            ),
            Some(0) => c.bad("size", "a size of 0"),
            _ => {}
        }
        place(&mut f);
        // fio's clones each have their own files (numjobs × nrfiles files of size/nrfiles),
        // except named ones (filename=), which the clones share
        let clones = if named { 1 } else { numjobs };
        // the file engines (filecreate, ...) make a file of their own per operation in the
        // directory: no set of their own (the ops below are nrfiles per clone)
        if !e.caps().file_ops && !e.caps().no_io {
            match u32::try_from(nrfiles.saturating_mul(clones)) {
                Ok(files) => f("files", files.to_string()),
                Err(_) => c.bad("nrfiles", "too many files"),
            }
            f(
                "size",
                size.unwrap_or(1 << 20).saturating_mul(clones).to_string(),
            );
        }
        if let Some(d) = &dir {
            f("dir", d.display().to_string());
        }
    }

    // percentage_random: that share of a random job's I/Os drawn, the others following
    if let Some(v) = c.one_for_both("percentage_random") {
        match fio_vocab::parse_percent(&v) {
            Ok(p) if p < 100 && random => f("random-pct", p.to_string()),
            Ok(_) => {}
            Err(e) => c.bad("percentage_random", e),
        }
    }
    // rw=...:N: each clone moves through its one file (or a device range) as fio's pass does
    if skip != 0 {
        if nrfiles > 1 {
            c.refuse_key(
                "rw",
                "`:N` with nrfiles>1: iolab moves through one file per clone",
            );
        } else if bs_fixed.is_none() {
            c.refuse_key("rw", "`:N` with mixed block sizes");
        } else if numjobs > 1 && increment == 0 && (named || device.is_some()) {
            c.refuse_key(
                "rw",
                "`:N` with clones sharing one file and no offset_increment (iolab shares the file out between them)",
            );
        }
        f("seq-skip", skip.to_string());
    }
    let zones = super::zones::zones(
        &mut c,
        &super::zones::Shape {
            mode: mode.parse().unwrap_or(Mode::Seqrd),
            nrfiles,
            skip,
            bs_fixed,
            shared_clones: numjobs > 1 && increment == 0 && (named || device.is_some()),
        },
    );
    let io_size_given = c.opt("io_size").is_some();
    let loops = c.int("loops").unwrap_or(1).max(1);

    // io_size= (io_limit=): the bytes a clone moves within its size= (wrapping), as fio
    if let Some(v) = c.val("io_size").map(|v| v.trim().to_string()) {
        let io = if v.ends_with('%') {
            match fio_vocab::parse_percent(&v) {
                Ok(p) if p <= 100 => {
                    per_job_bytes.map(|b| (u128::from(b) * u128::from(p) / 100) as u64)
                }
                Ok(_) => {
                    c.bad("io_size", "fio takes at most 100%");
                    None
                }
                Err(e) => {
                    c.bad("io_size", e);
                    None
                }
            }
        } else {
            c.size("io_size")
        };
        if let Some(io) = io.filter(|b| *b > 0) {
            per_job_bytes = Some(io);
        }
    }

    // how long: time_based/runtime, else size-bound
    let runtime = c.time("runtime");
    let time_based = c.bool("time_based").unwrap_or(false);
    let runtime = runtime.filter(|t| *t > 0.0);
    if let Some(t) = runtime {
        // without time_based, beside the size's quota below: whichever comes first, as fio
        f("time", format!("{t}"));
    }
    let noio = super::engines::noio(&mut c, e, &super::job_name(s), runtime, numjobs, &mut notes);
    match (runtime, time_based) {
        _ if e.caps().no_io => {}
        (Some(_), true) => {}
        (None, true) => c.bad("time_based", "needs runtime= (how long)"),
        _ => {
            if let Some(bytes) = per_job_bytes.filter(|b| *b > 0) {
                if bytes < bs_min {
                    c.bad_job("", format!(": size {bytes} is smaller than one block"));
                }
                // number_ios: each clone stops there if its size does not stop it first
                let number_ios = c.int("number_ios").filter(|n| *n > 0);
                match bs_fixed {
                    Some(b) => {
                        let mut pass = bytes / b;
                        let mut ios = pass.saturating_mul(loops);
                        // rw=...:N: fio's pass over the file ends where its next I/O would not
                        // fit (t0007: 85 of 128 1 MiB reads); with io_size each loop is a pass
                        // (at most loops × io_size), then passes on to io_size
                        if skip != 0 && (!io_size_given || loops > 1) {
                            let range = size.or(dev_bytes.map(|d| d.saturating_sub(offset)));
                            let range = range.unwrap_or(0) / nrfiles.max(1);
                            let most = if io_size_given { range / b + 1 } else { pass };
                            // clone N's file is offset + N increments + range long for fio
                            let pass_of = |n: u64| {
                                let real = offset.saturating_add(n.saturating_mul(increment));
                                let real = real.saturating_add(range);
                                crate::engine::opgen::skip_pass_ops(b, range, real, skip, most)
                            };
                            let first = pass_of(0);
                            if increment > 0 && (1..numjobs).any(|n| pass_of(n) != first) {
                                c.refuse_key(
                                    "rw",
                                    "`:N` where fio's clones make passes of different lengths (offset_increment without io_size, or with io_size and loops>1)",
                                );
                            }
                            ios = if io_size_given {
                                let l = |n: u64| n.saturating_mul(loops);
                                l(first).min(l(pass)).max(pass)
                            } else {
                                first.saturating_mul(loops)
                            };
                            pass = first;
                        }
                        // strided zones: fio's pass ends where its next I/O would not fit
                        if let Some(z) = &zones {
                            let range = size.or(dev_bytes.map(|d| d.saturating_sub(offset)));
                            let range = range.unwrap_or(0) / nrfiles.max(1);
                            pass = crate::engine::opgen::zone_pass_ops(b, range, z, pass);
                            ios = pass.saturating_mul(loops);
                        }
                        // number_ios: at most that many I/Os per pass (fio)
                        if let Some(n) = number_ios.filter(|n| *n < pass) {
                            ios = n.saturating_mul(loops);
                        }
                        let ops = ios.saturating_mul(numjobs);
                        f("ops", ops.to_string());
                    }
                    None if number_ios.is_some() => c.refuse_key(
                        "number_ios",
                        "with mixed block sizes iolab stops at the bytes of size=, not also at a count",
                    ),
                    // mixed sizes: the bytes themselves, each thread's last I/O trimmed to fit;
                    // with fio's random map a pass is the whole smallest blocks of each file
                    // (t0001: 19 KiB blocks of its 20000 bytes); the sizes near the end drawn until
                    // one fits
                    None => {
                        let per_file = bytes / nrfiles.max(1);
                        let bytes = if map && !io_size_given && per_file >= bs_min {
                            per_file / bs_min * bs_min * nrfiles.max(1)
                        } else {
                            bytes
                        };
                        f(
                            "io-size",
                            bytes
                                .saturating_mul(numjobs)
                                .saturating_mul(loops)
                                .to_string(),
                        )
                    }
                }
            }
        }
    }
    // invalidate=0: fio leaves the page cache as it is; iolab has no such run
    if c.bool("invalidate") == Some(false) && !a.warm {
        notes.push(
            "invalidate=0: iolab still evicts the file set from the page cache before the phase (fio would leave the cache as it is); run with --warm to read the set in instead".into(),
        );
    }
    if let Some(r) = c.time("ramp_time").filter(|r| *r > 0.0) {
        f("ramp", format!("{r}"));
    }

    // pacing: `--rate` where it is fio's schedule (one direction, whole I/Os per second of one
    // block size), else fio's own per-direction byte schedules (`Timing::rate_bps`)
    let (rate, exact_bps) = super::timing::rates(&mut c, mode, bs_fixed, bs_min);
    if let Some(r) = rate {
        f("rate", r.saturating_mul(numjobs).to_string());
    }
    let mut timing = super::timing::timing_options(
        &mut c,
        FIO_RANDSEED.wrapping_add(index),
        rate.is_some() || exact_bps != [0, 0],
        e.caps().async_queue,
        &mut notes,
    );
    timing.rate_bps = exact_bps;
    timing.zones = zones;
    timing.steady = super::steady::steady(&mut c);

    // offsets
    if let Some(d) = c.val("random_distribution") {
        match distribution(d.trim()) {
            Some(m) if random => f("distribution", m),
            Some(_) => {}
            None => c.refuse_key(
                "random_distribution",
                "iolab draws random, zipf, pareto and zoned offsets",
            ),
        }
    }
    let seed = match (c.int("randseed"), c.bool("randrepeat")) {
        (Some(s), _) => Some(s),
        (None, Some(false)) => None,
        _ => Some(FIO_RANDSEED.wrapping_add(index)),
    };
    // fio's own generators where fio's seeds are fixed (its thread number is set by the run)
    let fio_rand = seed.is_some().then(|| crate::model::job::FioRand {
        thread_number: 1,
        rand_seed: c.int("randseed").unwrap_or(0x89),
        repeat: c.bool("randrepeat").unwrap_or(true),
        all_repeat: c.bool("allrandrepeat").unwrap_or(false),
        use64: c
            .val("random_generator")
            .is_some_and(|g| g.trim() == "tausworthe64"),
    });
    if let Some(sd) = seed {
        f("seed", sd.to_string());
    }
    if let Some(t) = c.val("file_service_type") {
        let k = t.split(':').next().unwrap_or("").trim().to_string();
        if !matches!(k.as_str(), "random" | "roundrobin") {
            c.refuse_key(
                "file_service_type",
                "iolab spreads each thread's I/O over the set its own way",
            );
        }
    }
    let read_back = super::verify::verify_options(
        &mut c,
        mode,
        runtime.is_some() && time_based,
        e.caps().moves_data && e.caps().needs_files,
        &mut notes,
    );
    super::noio::notes(&c, &mut notes);
    if let Some(cpus) = super::noio::cpus(&mut c, &mut notes) {
        f("cpus", cpus);
    }
    if let Some(p) = super::noio::ioprio(&mut c) {
        f("ioprio", p);
    }
    if writes && let Some(b) = super::buffers::buffers(&mut c, &mut notes) {
        f("buffers", b.to_string());
    }
    if let Some(v) = c.val("fallocate")
        && device.is_none()
        && matches!(mode, "seqwr" | "rndwr")
    {
        match v.trim() {
            "none" | "0" | "truncate" => f("layout", "holes".into()),
            "posix" | "native" | "keep" | "1" => f("layout", "unwritten".into()),
            _ => c.bad("fallocate", "not none, native, posix, keep or truncate"),
        }
    }

    // verify: iolab's headers on every write; a write job reads its range back after writing it
    if let Some(back) = read_back {
        flags.push(("verify".into(), String::new()));
        match back {
            super::verify::ReadBack::Mode(m) => {
                for (k, v) in flags.iter_mut() {
                    if k == "mode" {
                        *v = format!("{v},{m}");
                    }
                }
            }
            super::verify::ReadBack::Only(m) => {
                for (k, v) in flags.iter_mut() {
                    if k == "mode" {
                        *v = m.to_string();
                    }
                }
            }
            super::verify::ReadBack::Backlog(n) => {
                flags.push(("verify-backlog".into(), n.to_string()));
            }
            super::verify::ReadBack::No => {}
        }
    }
    // fio 3.33's experimental_verify with loops=N: N-1 write passes, one read-back of the range
    let mut readback_ops = None;
    if let Some(super::verify::ReadBack::Mode(_)) = read_back
        && loops > 1
        && c.bool("experimental_verify") == Some(true)
    {
        for (_, v) in flags.iter_mut().filter(|(k, _)| k == "ops") {
            let ops = v.parse::<u64>().unwrap_or(0);
            let pass = ops / loops;
            *v = (pass * (loops - 1)).to_string();
            readback_ops = Some(pass);
        }
    }
    // fio's log files
    let logs = super::logs::log_options(&mut c, &super::job_name(s));
    if let Some(l) = logs.as_ref().and_then(|l| l.iolog.as_ref()) {
        notes.push(format!(
            "write_iolog={l}: the log names iolab's own files (or the device), every file of the job's set{}",
            if numjobs > 1 {
                "; the clones' I/Os are one log in time order (fio's clones append to it each through its own buffer)"
            } else {
                ""
            }
        ));
    }
    if logs.is_some() && read_back.is_some_and(|b| matches!(b, super::verify::ReadBack::Mode(_))) {
        notes.push("the fio logs hold the writes: the read-back of verify is not logged".into());
    }
    if c.blockers.errors() > errors_before {
        return None;
    }
    let mut j = super::runopts::run_options(a, s, c, flags, notes)?;
    j.args.fio_logs = logs;
    j.args.timing = timing;
    j.args.fio_rand = fio_rand;
    j.args.noio = noio;
    j.args.readback_ops = readback_ops;
    j.args.named_files = named && device.is_none();
    Some(j)
}

/// `offset=` or `offset_increment=` in bytes: a size, or a percentage of the device's size
/// aligned up to `align` (fio's `offset_align`, else the smallest block). A percentage of a
/// file is of its size before fio lays it out: 0 for a file fio creates, as iolab's are.
fn start_offset(
    c: &mut Ctx,
    key: &str,
    dev_bytes: Option<u64>,
    align: u64,
    notes: &mut Vec<String>,
) -> u64 {
    let Some(v) = c.val(key).map(|v| v.trim().to_string()) else {
        return 0;
    };
    if !v.ends_with('%') {
        return c.size(key).unwrap_or(0);
    }
    match fio_vocab::parse_percent(&v) {
        Ok(0) => 0,
        Ok(p) => match dev_bytes {
            Some(b) => {
                let raw = (u128::from(b) * u128::from(p) / 100) as u64;
                raw.div_ceil(align).saturating_mul(align)
            }
            None if c.opt("filename").is_some_and(|o| {
                o.value
                    .as_deref()
                    .is_some_and(|n| n.trim().starts_with("/dev/"))
            }) =>
            {
                c.refuse_key(key, "a share of a device whose size cannot be read");
                0
            }
            None => {
                notes.push(format!(
                    "{key}={v}: 0, as fio takes the percentage of a file's size before it lays the file out (0 for a file it creates; iolab makes its own)"
                ));
                0
            }
        },
        Err(e) => {
            c.bad(key, e);
            0
        }
    }
}

/// `pct` percent of `bytes`, down to a whole block (fio aligns a percentage offset to the
/// block size).
fn share(bytes: u64, pct: u32, bs: Option<u64>) -> u64 {
    let b = (u128::from(bytes) * u128::from(pct) / 100) as u64;
    let align = bs.unwrap_or(4096).max(1);
    b - b % align
}

/// fio's `random_distribution` as iolab's `--distribution`; `None`: not one iolab draws. A
/// zoned list's last zone may leave its size empty (`20/`, fio's rand-zones example): it takes
/// the rest of the range.
fn distribution(d: &str) -> Option<String> {
    let (kind, arg) = d.split_once(':').unwrap_or((d, ""));
    match kind {
        "random" => Some("uniform".to_string()),
        "zipf" | "pareto" if !arg.is_empty() && !arg.contains(':') => Some(format!("{kind}:{arg}")),
        "zoned" if !arg.is_empty() => {
            let zones: Vec<&str> = arg.trim_end_matches(':').split(':').collect();
            let sized: u32 = zones
                .iter()
                .filter_map(|z| z.split_once('/'))
                .filter_map(|(_, s)| s.trim().parse::<u32>().ok())
                .sum();
            let filled: Vec<String> = zones
                .iter()
                .enumerate()
                .map(|(i, z)| match z.split_once('/') {
                    Some((a, s)) if s.trim().is_empty() && i + 1 == zones.len() => {
                        format!("{a}/{}", 100u32.saturating_sub(sized))
                    }
                    _ => z.to_string(),
                })
                .collect();
            Some(format!("zoned:{}", filled.join(":")))
        }
        _ => None,
    }
}

/// The bytes of `paths` together when each is an existing regular file (a symbolic link is not
/// followed) of some bytes; None otherwise.
fn existing_size(paths: &[PathBuf]) -> Option<u64> {
    let mut n = 0u64;
    for p in paths {
        let m = std::fs::symlink_metadata(p).ok()?;
        if !m.is_file() || m.len() == 0 {
            return None;
        }
        n = n.saturating_add(m.len());
    }
    (!paths.is_empty()).then_some(n)
}
