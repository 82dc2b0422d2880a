//! From parsed flags to a [`Plan`]: the checks that need the filesystem (--dir, O_DIRECT probe,
//! alignment, free space) and the resolution of defaults (the database storage profile).

use super::*;

/// `--steady-state`'s round without `--round`: PTS's one minute.
const STEADY_ROUND_S: f64 = 60.0;
/// `--steady-state`'s rounds without `--time`: PTS's most, 25.
const STEADY_MAX_ROUNDS: f64 = 25.0;

mod device;
mod mix;
use device::*;
use mix::rw_ratio;

/// Checks --dir: it must exist (the default is created) and be a writable directory.
/// Returns whether it was created.
pub fn check_dir(dir: &Path, create_missing: bool) -> Result<bool> {
    use std::os::unix::fs::FileTypeExt;
    let mut created = false;
    match std::fs::metadata(dir) {
        Ok(md) if md.is_dir() => {
            if let Some(why) = fsinfo::not_storage(&crate::system::env::Roots::live().proc, dir) {
                return Err(Error::usage(format!(
                    "--dir {}: not storage: it is on {why}; pass a directory on a filesystem on the device to measure",
                    dir.display()
                )));
            }
        }
        Ok(md) if md.file_type().is_block_device() => {
            return Err(Error::usage(format!(
                "--dir {}: a block device, not a directory: measure the device itself with --device {} (iolab run; writes need --destructive), or mount a filesystem on it and pass a directory there (--dir /mnt/x)",
                dir.display(),
                dir.display()
            )));
        }
        Ok(_) => {
            return Err(Error::usage(format!(
                "--dir {}: not a directory",
                dir.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !create_missing {
                return Err(Error::usage(format!(
                    "--dir {}: no such directory; create it first or pick an existing one",
                    dir.display()
                )));
            }
            crate::system::target::make_dir(dir).map_err(|e| {
                Error::usage(format!("--dir {}: cannot create it: {e}", dir.display()))
            })?;
            created = true;
        }
        Err(e) => return Err(Error::usage(format!("--dir {}: {e}", dir.display()))),
    }
    Ok(created)
}

/// A probe file in --dir, removed on drop; used to test writability and O_DIRECT. Made with
/// O_EXCL (never through a symbolic link planted at its name), opened again only through its
/// descriptor, and removed only while its name still holds it.
pub struct Probe(pub PathBuf, std::fs::File);

impl Probe {
    pub fn create(dir: &Path) -> Result<Probe> {
        let p = dir.join(format!(".iolab-probe-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
            .map_err(|e| {
                let why = match e.raw_os_error() {
                    Some(libc::EROFS) => "read-only file system".to_string(),
                    Some(libc::EACCES) | Some(libc::EPERM) => "permission denied".to_string(),
                    _ => e.to_string(),
                };
                Error::usage(format!("--dir {}: not writable ({why})", dir.display()))
            })?;
        Ok(Probe(p, f))
    }
    /// The probe's own file opened again with `flags` (through /proc/self/fd: the same file,
    /// whatever its name holds now).
    fn reopen(&self, flags: libc::c_int) -> std::io::Result<std::fs::File> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(format!("/proc/self/fd/{}", self.1.as_raw_fd()))
    }
    /// Whether the filesystem accepts O_DIRECT opens.
    pub fn direct_ok(&self) -> bool {
        self.reopen(libc::O_DIRECT).is_ok()
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        use std::os::unix::fs::MetadataExt;
        let same = match (std::fs::symlink_metadata(&self.0), self.1.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

pub(super) fn flag<T: std::str::FromStr<Err = String>>(name: &str, v: &str) -> Result<T> {
    v.parse()
        .map_err(|e: String| Error::usage(format!("{name}: {e}")))
}

/// The file-set spec: size split over files, each rounded down to a multiple of `unit`.
pub fn fileset_spec(set: &FileSetArgs, unit: u64, layout: Layout) -> Result<FileSetSpec> {
    let (size, files) = (set.size(), set.files());
    let per = size / files as u64 / unit * unit;
    if per == 0 {
        return Err(Error::usage(format!(
            "--size {} over --files {} gives {} per file, less than one block of {}; use a larger --size or fewer --files",
            Bytes(size),
            files,
            Bytes(size / files as u64),
            Bytes(unit)
        )));
    }
    Ok(FileSetSpec {
        dir: set.dir.clone(),
        files,
        total_bytes: per * files as u64,
        file_size_bytes: per,
        device: None,
        offset_bytes: None,
        file_len_bytes: None,
        layout,
        larger_ok: false,
    })
}

/// `--offset` and `--offset-increment` on a file set (fio's `offset=`, `offset_increment=`): the
/// range starts that far into each file, the files made long enough for the last thread's.
fn place_range(mut spec: FileSetSpec, offset: Option<u64>, cells: &[Job]) -> Result<FileSetSpec> {
    let (off, reach) = (
        offset.unwrap_or(0),
        crate::engine::opgen::increment_reach(cells),
    );
    if reach > 0 && cells.iter().any(|c| c.verify) {
        return Err(Error::usage(
            "--verify with --offset-increment: each thread keeps to its own blocks, so the threads' ranges cannot overlap; leave --offset-increment out",
        ));
    }
    if off > 0 || reach > 0 {
        let len = (off as u128) + (reach as u128) + (spec.file_size_bytes as u128);
        if len > i64::MAX as u128 {
            return Err(Error::usage(format!(
                "--offset {off} and --offset-increment: the files would be longer than a file can be; use a smaller --offset or --offset-increment"
            )));
        }
        (spec.offset_bytes, spec.file_len_bytes) = (Some(off), Some(len as u64));
    }
    Ok(spec)
}

/// Refuses `--layout` with modes it cannot serve or where it measures nothing real, before
/// anything is created: extend only with seqwr (empty files that sequential writes grow; not
/// with mmap, whose mapping cannot grow a file); holes or unwritten with a read mode only with
/// `--force` (the reads return zeros without reaching the device).
/// `modes` None: the default profile.
pub fn check_layout(
    layout: Layout,
    modes: Option<&[Mode]>,
    engine: EngineKind,
    force: bool,
) -> Result<()> {
    const DEFAULT_MODES: [Mode; 5] = [
        Mode::Rndrd,
        Mode::Rndwr,
        Mode::Rndrw,
        Mode::Seqrd,
        Mode::Seqwr,
    ];
    let default_profile = || {
        if modes.is_none() {
            " (the default profile)"
        } else {
            ""
        }
    };
    let modes = modes.unwrap_or(&DEFAULT_MODES);
    let list = |ms: &[Mode]| ms.iter().map(|m| m.name()).collect::<Vec<_>>().join(",");
    if layout == Layout::Extend {
        let other: Vec<Mode> = modes
            .iter()
            .copied()
            .filter(|&m| m != Mode::Seqwr)
            .collect();
        if !other.is_empty() {
            return Err(Error::usage(format!(
                "--layout extend with --mode {}{}: extend files start empty and only sequential writes grow them; use --layout extend with --mode seqwr, or --layout holes for writes at random offsets into unallocated space",
                list(&other),
                default_profile()
            )));
        }
        if engine.caps().needs_mapping {
            return Err(Error::usage(format!(
                "--layout extend cannot be used with --engine {} (a mapping cannot grow a file); use --engine sync or io_uring, or --layout holes",
                engine.name()
            )));
        }
    }
    if layout.reads_zeros() && !force {
        let reads: Vec<Mode> = modes.iter().copied().filter(|m| m.reads()).collect();
        if !reads.is_empty() {
            return Err(Error::usage(format!(
                "--layout {layout} with --mode {}{}: reads of {} return zeros from the filesystem without reaching the device, so this measures nothing real; use --layout overwrite for reads, write modes (seqwr, seqrewr, rndwr) with --layout {layout}, or --force to measure it anyway",
                list(&reads),
                default_profile(),
                if layout == Layout::Holes {
                    "holes"
                } else {
                    "unwritten extents"
                }
            )));
        }
    }
    Ok(())
}

/// `--layout unwritten` needs fallocate(2): tries it on the probe file in --dir.
pub fn check_fallocate(probe: &Probe, dir: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let f = &probe.1;
    // SAFETY: fallocate on our own open descriptor.
    if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, 4096) } != 0 {
        return Err(Error::usage(format!(
            "--layout unwritten: the filesystem at {} ({}) cannot preallocate extents (fallocate: {}); use --layout holes or overwrite",
            dir.display(),
            fsinfo::fs_type(dir),
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// `--verify`: an engine that does I/O on the files of a set in --dir or on a --device (there
/// within the run: no state is kept on a device), sizes that are whole numbers of the smallest
/// (the verify block, at least 512 bytes), and one block of the largest size per thread (each
/// thread keeps to its own range).
fn check_verify(cells: &[Job], set: &crate::model::job::FileSetSpec) -> Result<()> {
    let block = cells.iter().map(|c| c.bs_sizes()[0]).min().unwrap_or(512);
    for c in cells {
        if c.mode.trims() {
            return Err(Error::usage(format!(
                "--verify does not check trims: --mode {} trims; verify seqwr, rndwr, rndrw or seqrw",
                c.mode
            )));
        }
        if !crate::engine::caps(c.engine).needs_files {
            return Err(Error::usage(format!(
                "--verify needs an engine that reads and writes the files or the device; --engine {} touches none (use sync, mmap, io_uring or libaio)",
                c.engine.name()
            )));
        }
        if !crate::engine::caps(c.engine).moves_data {
            return Err(Error::usage(format!(
                "--verify needs an engine that reads and writes the files; --engine {} moves no data (use sync, mmap, io_uring or libaio)",
                c.engine.name()
            )));
        }
        let sizes = c.bs_sizes();
        if block < 512
            || !block.is_multiple_of(512)
            || sizes.iter().any(|s| !s.is_multiple_of(block))
        {
            return Err(Error::usage(format!(
                "--verify: --bs {} must be a multiple of 512 bytes, and with a mix or range every size a multiple of the smallest (the verify block)",
                c.bs_label()
            )));
        }
        let blocks = set.files as u64 * set.file_size_bytes / c.bs_bytes;
        if blocks < c.threads as u64 {
            return Err(Error::usage(format!(
                "--verify: --threads {} needs at least one block of {} per thread, and the set has {blocks}; use a larger --size or fewer --threads",
                c.threads,
                Bytes(c.bs_bytes)
            )));
        }
    }
    Ok(())
}

/// Translates `iolab run` flags into a plan; checks everything before anything is written.
pub fn plan_run(a: &RunArgs) -> Result<Plan> {
    if (a.replay.is_some() || a.like.is_some()) && a.replay_spec.is_none() {
        // --like onto --dir: a role per file class the capture told
        if let Some((roles, note)) = super::replay::like_roles(a)? {
            let mut p = plan_role_set(a, roles)?;
            p.notes.insert(0, note);
            super::replay::align_requests(&mut p);
            return Ok(p);
        }
        return super::replay::plan_replay(a);
    }
    if let Some(f) = a.jobfiles.first() {
        return Err(Error::usage(format!(
            "'{}': a job file is run by `iolab run JOBFILE...` itself (or this is a stray word)",
            f.display()
        )));
    }
    if !a.roles.is_empty() || a.profile.is_some() {
        if a.verify {
            return Err(Error::usage(
                "--verify cannot be combined with --role or --profile; verify one workload at a time",
            ));
        }
        return plan_roles(a);
    }
    let engine: EngineKind = flag("--engine", &a.engine)?;
    let fsync_mode: FsyncMode = flag("--fsync-mode", &a.fsync_mode)?;
    let distribution: Distribution = flag("--distribution", &a.distribution)?;
    let open_flags: OpenFlags = flag("--open-flags", &a.open_flags)?;
    let tags = parse_tags(&a.tag.tags)?;
    let rw_ratio = rw_ratio(a.rw_ratio, a.rwmixread)?;
    if let Some(t) = a.time
        && !(t > 0.0 && t.is_finite())
    {
        return Err(Error::usage("--time must be a positive number of seconds"));
    }
    if !(a.ramp >= 0.0 && a.ramp.is_finite()) {
        return Err(Error::usage(
            "--ramp must be zero or a positive number of seconds",
        ));
    }
    let caps = crate::engine::caps(engine);
    if a.direct && caps.direct == Direct::Refused {
        return Err(Error::usage(format!(
            "--direct cannot be used with --engine {} (it always goes through the page cache); use --engine sync, io_uring or libaio",
            caps.name
        )));
    }
    let modes: Option<Vec<Mode>> = match &a.mode {
        None => None,
        Some(m) => {
            // an empty item (rndrd,,rndwr) is a typo, not a mode to skip
            if m.split(',').any(|s| s.trim().is_empty()) {
                return Err(Error::usage(
                    "--mode: a comma-separated list of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw, seqrw, seqtrim, rndtrim, seqtrimwr, rndtrimwr, with no empty item",
                ));
            }
            let v: Vec<Mode> = m
                .split(',')
                // fio's names too (--rw randread)
                .map(|s| match crate::spec::fio_vocab::mode_of_rw(s) {
                    Some(m) => Ok(m),
                    None => flag("--mode", s.trim()),
                })
                .collect::<Result<_>>()?;
            Some(v)
        }
    };
    if caps.file_ops && (a.ops.is_none() || a.device.is_some()) {
        return Err(Error::usage(format!(
            "--engine {} makes, stats or removes files of its own in --dir, one per operation: give --ops N (the number of files), and --dir rather than --device",
            caps.name
        )));
    }
    if caps.no_io && a.noio.is_none() {
        return Err(Error::usage(format!(
            "--engine {0}: fio's engine without I/O runs from a job file (ioengine={0} with its options and runtime=: docs/fio-jobs.md)",
            caps.name
        )));
    }
    if !caps.reads {
        // ftruncate: writes only (fio fails its reads and trims with EINVAL)
        let other: Vec<&str> = match &modes {
            None => vec!["the default profile"],
            Some(ms) => ms
                .iter()
                .filter(|m| m.reads() || m.trims())
                .map(|m| m.name())
                .collect(),
        };
        if !other.is_empty() {
            return Err(Error::usage(format!(
                "--engine {} only writes (each write sets its file's size to the write's offset), and --mode {} reads or trims; use --mode seqwr, seqrewr or rndwr",
                caps.name,
                other.join(",")
            )));
        }
    }
    let layout: Layout = flag("--layout", &a.layout)?;
    // An engine that does no I/O (null) touches no file: its layout is only recorded.
    if engine.caps().needs_files {
        check_layout(layout, modes.as_deref(), engine, a.force)?;
    }
    // What the threads of the largest cell ask for together (the default profile runs 8
    // threads), checked by the engine before anything is written.
    let threads = match (&modes, a.threads) {
        (_, Some(t)) => t,
        (None, None) => 8,
        (Some(_), None) => 1,
    };
    crate::engine::available(engine, threads, a.iodepth).map_err(Error::usage)?;
    if a.device.is_none() && a.destructive.is_some() {
        return Err(Error::usage(
            "--destructive applies to a block device target only; give --device /dev/X with it, or leave it out for a file set in --dir",
        ));
    }
    let target = a
        .device
        .as_deref()
        .map(|d| device_target(a, d, engine))
        .transpose()?;
    let is_default_dir = a.set.dir == Path::new(DEFAULT_DIR);
    let created_dir = target.is_none() && check_dir(&a.set.dir, is_default_dir)?;
    let undo_dir = |e: Error| {
        if created_dir {
            crate::system::target::remove_made_dir(&a.set.dir);
        }
        e
    };
    let (dio, direct_ok, fs, where_) = match &target {
        Some(t) => {
            // O_DIRECT on a block device: the logical block size aligns offsets and lengths.
            let dio = fsinfo::dio_align(&crate::system::env::Roots::live().sys, &t.path);
            (
                crate::spec::plan::DioAlign {
                    offset: dio.offset.max(t.lbs),
                    ..dio
                },
                true,
                "block device".to_string(),
                t.path.clone(),
            )
        }
        None => {
            let probe = Probe::create(&a.set.dir).map_err(undo_dir)?;
            if layout == Layout::Unwritten && engine.caps().needs_files {
                check_fallocate(&probe, &a.set.dir).map_err(undo_dir)?;
            }
            let dio = fsinfo::dio_align(&crate::system::env::Roots::live().sys, &probe.0);
            let direct_ok = probe.direct_ok();
            drop(probe);
            (
                dio,
                direct_ok,
                fsinfo::fs_type(&a.set.dir),
                a.set.dir.clone(),
            )
        }
    };
    // A device is measured with O_DIRECT unless --buffered; a file set only with --direct.
    let direct_flag =
        a.direct || (target.is_some() && !a.buffered && caps.direct == Direct::Honoured);
    let mut notes = Vec::new();
    let seed = a.seed.unwrap_or_else(crate::spec::dist::seed_from_clock);
    let limit = match (a.ops, a.io_size, a.time) {
        (Some(n), _, _) => Limit::Ops(n),
        (None, Some(n), _) => Limit::Bytes(n),
        (None, None, Some(t)) => Limit::TimeS(t),
        // --steady-state without --time: PTS's most rounds, 25
        (None, None, None) if a.steady_state.is_some() => {
            Limit::TimeS(STEADY_MAX_ROUNDS * a.round.unwrap_or(STEADY_ROUND_S))
        }
        (None, None, None) => Limit::TimeS(if modes.is_none() { 6.0 } else { 10.0 }),
    };
    // --time beside a quota: whichever comes first
    let max_time_s = a.time.filter(|_| a.ops.is_some() || a.io_size.is_some());
    let read = resolve_bs(a.set.bs.as_ref(), direct_flag, &dio, &where_).map_err(undo_dir)?;
    let write = match &a.set.bs_write {
        Some(w) => resolve_bs(Some(w), direct_flag, &dio, &where_).map_err(undo_dir)?,
        None => read.clone(),
    };
    let bs_bytes = read.bs_bytes.max(write.bs_bytes);
    let (bs_mix, bs_range, bs_dirs) = if read == write {
        (read.bs_mix, read.bs_range, None)
    } else {
        (None, None, Some(BsDirs { read, write }))
    };
    let base = Job {
        mode: Mode::Rndrd,
        engine,
        threads: a.threads.unwrap_or(1),
        iodepth: a.iodepth,
        bs_bytes,
        bs_mix,
        bs_range,
        bs_dirs,
        block_align_bytes: a.block_align.unwrap_or(0),
        direct: direct_flag,
        open_flags,
        fsync_freq: a.fsync_freq,
        fsync_every_s: a.fsync_every.filter(|&s| s > 0.0),
        fsync_all: a.fsync_all,
        fsync_end: a.fsync_end && !a.no_fsync_end,
        fsync_mode,
        rw_ratio,
        distribution,
        seed,
        rate_iops: a.rate,
        no_spin: a.no_spin,
        limit,
        max_time_s,
        ramp_s: a.ramp,
        verify: a.verify,
        verify_backlog: a.verify_backlog.unwrap_or(0),
        random_map: a.random_map,
        fio_rand: a.fio_rand.clone(),
        fio_logs: a.fio_logs.clone(),
        buffers: a.buffers.clone(),
        cpus: a.cpus.clone(),
        ioprio: a.ioprio,
        offset_increment_bytes: a.offset_increment.unwrap_or(0),
        seq_skip_bytes: a.seq_skip.unwrap_or(0),
        random_every: a.random_every.unwrap_or(0),
        random_every_same: a.random_every_same,
        follow_pct: 100 - a.random_pct.unwrap_or(100),
        timing: match &a.steady_state {
            Some(ss) => crate::model::timing::Timing {
                steady: Some(crate::model::steady::Steady {
                    metric: ss.metric,
                    slope: ss.fio.0,
                    limit: ss.fio.1,
                    pct: ss.fio.2,
                    window_s: ss.window,
                    ramp_s: 0.0,
                    // the job's threads judged as one (fio's group_reporting)
                    group: Some(0),
                    pts: ss.pts,
                    round_s: a.round.unwrap_or(STEADY_ROUND_S),
                }),
                ..a.timing.clone()
            },
            None => a.timing.clone(),
        },
        noio: a.noio.clone(),
        replay: a.replay_spec.clone(),
    };
    let cells: Vec<Job> = match modes {
        // a job file's logs are the first mode's (a verify job's read-back is not logged)
        Some(ms) => ms
            .into_iter()
            .enumerate()
            .map(|(i, mode)| Job {
                mode,
                fio_logs: base.fio_logs.clone().filter(|_| i == 0),
                // a job file's read-back of its own length (fio's experimental verify)
                limit: match (a.readback_ops, base.limit) {
                    (Some(n), Limit::Ops(_)) if i > 0 => Limit::Ops(n),
                    (_, l) => l,
                },
                ..base.clone()
            })
            .collect(),
        None => {
            // The default database storage profile.
            let honoured = caps.direct == Direct::Honoured;
            let direct = direct_flag || (direct_ok && honoured && !a.buffered);
            if !direct && !a.direct && !a.buffered && honoured {
                notes.push(Warning::new(
                    "direct_unsupported",
                    format!("the filesystem at {} ({fs}) does not support O_DIRECT: the default profile runs buffered, through the page cache", a.set.dir.display()),
                ));
            }
            // --bs and --threads given: every cell of the profile takes them (its 16 KiB and
            // 1 MiB sizes, its 1 and 8 threads are the defaults, never a silent override)
            let random_threads: &[u32] = match &a.threads {
                Some(t) => std::slice::from_ref(t),
                None => &[1, 8],
            };
            let sized = |mode, threads, default_bs: u64| Job {
                mode,
                threads,
                direct,
                ..if a.set.bs.is_some() || a.set.bs_write.is_some() {
                    base.clone()
                } else {
                    Job {
                        bs_bytes: default_bs,
                        bs_mix: None,
                        bs_range: None,
                        bs_dirs: None,
                        ..base.clone()
                    }
                }
            };
            let mut v = Vec::new();
            for mode in [Mode::Rndrd, Mode::Rndwr, Mode::Rndrw] {
                for &threads in random_threads {
                    v.push(sized(mode, threads, 16384));
                }
            }
            for mode in [Mode::Seqrd, Mode::Seqwr] {
                v.push(sized(mode, a.threads.unwrap_or(1), 1 << 20));
            }
            v
        }
    };
    if let Some(c) = cells.iter().find(|c| {
        c.block_align_bytes > 0
            && c.random_map != crate::model::job::RandomMap::Off
            && c.block_align_bytes != c.bs_sizes()[0]
    }) {
        return Err(undo_dir(Error::usage(format!(
            "--block-align {} with --random-map {}: the map counts blocks of the smallest size ({}); use --random-map off",
            c.block_align_bytes,
            c.random_map.name(),
            c.bs_sizes()[0]
        ))));
    }
    if cells.iter().any(|c| c.direct) {
        if !direct_ok {
            return Err(undo_dir(Error::usage(format!(
                "--direct: the filesystem at {} ({fs}) does not support O_DIRECT; run without --direct (results then include the page cache)",
                a.set.dir.display()
            ))));
        }
        for c in &cells {
            // every size of a mix or range, and so every offset on their grid (or on
            // --block-align's)
            let unaligned = c
                .bs_sizes()
                .into_iter()
                .chain(Some(c.block_align_bytes).filter(|&b| b > 0))
                .find(|b| b % dio.offset != 0);
            if let (true, Some(bs)) = (c.direct, unaligned) {
                return Err(undo_dir(Error::usage(format!(
                    "--bs {} is not a multiple of {} bytes, the O_DIRECT alignment of {} ({}); use a multiple such as {} (for --bs, --bs-write and --block-align)",
                    bs,
                    dio.offset,
                    where_.display(),
                    dio.source,
                    Bytes(dio.offset.max(4096))
                ))));
            }
        }
    }
    if !caps.async_queue && a.iodepth > 1 {
        let queued: Vec<&str> = crate::engine::ENGINES
            .iter()
            .filter(|c| c.async_queue)
            .map(|c| c.name)
            .collect();
        notes.push(Warning::new(
            "iodepth_ignored",
            format!(
                "--iodepth {} only applies to --engine {}; {} keeps one I/O in flight per thread",
                a.iodepth,
                queued.join(" or "),
                engine.name()
            ),
        ));
    }
    check_threads(&cells).map_err(undo_dir)?;
    let unit = cells.iter().map(|c| c.bs_bytes).max().unwrap_or(16384);
    let mut device = None;
    let fileset = match &target {
        Some(t) => {
            let spec = device_spec(a, t, unit)?;
            let reach = crate::engine::opgen::increment_reach(&cells);
            let end = spec.base_offset() + spec.file_size_bytes;
            if reach > 0 && end.saturating_add(reach) > t.size {
                return Err(Error::usage(format!(
                    "--offset-increment on --device {}: the last thread's range would end at {}, beyond its end ({}); use a smaller --offset-increment, --size or --threads",
                    t.path.display(),
                    Bytes(end.saturating_add(reach)),
                    Bytes(t.size)
                )));
            }
            let destructive = match a.destructive.as_deref() {
                None => blockdev::Destructive::No,
                Some("wipe-signatures") => blockdev::Destructive::WipeSignatures,
                Some(_) => blockdev::Destructive::Yes,
            };
            // Only an engine that does I/O writes (null touches nothing).
            let writes = cells
                .iter()
                .find(|c| c.mode.writes() && crate::engine::caps(c.engine).needs_files)
                .map(|c| c.mode.name());
            let claim = blockdev::check(
                &crate::system::env::Roots::live(),
                &t.path,
                &t.tree,
                writes,
                destructive,
            )
            .map_err(Error::usage)?;
            device = Some(crate::spec::plan::DeviceHold {
                claim,
                wipe_signatures: writes.is_some()
                    && destructive == blockdev::Destructive::WipeSignatures,
            });
            spec
        }
        None => {
            let spec = FileSetSpec {
                larger_ok: a.named_files,
                ..fileset_spec(&a.set, unit, layout).map_err(undo_dir)?
            };
            place_range(spec, a.offset, &cells).map_err(undo_dir)?
        }
    };
    if a.verify {
        check_verify(&cells, &fileset).map_err(undo_dir)?;
    }
    Ok(Plan {
        fileset,
        cells,
        keep: a.keep,
        reprepare: a.reprepare,
        warm: a.warm,
        created_dir,
        label: a.label.label.clone(),
        tags,
        notes,
        quiet: a.quiet.quiet || a.format() != OutputFormat::Normal,
        iostat_interval: std::time::Duration::from_secs_f64(a.iostat_interval),
        report_interval: a.report_interval.map(std::time::Duration::from_secs_f64),
        dio,
        roots: crate::system::env::Roots::live(),
        roles: Vec::new(),
        device,
    })
}

/// `--bs` (or `--bs-write`) to the sizes of a direction: `bs_bytes` (the largest size),
/// `bs_mix` and `bs_range`. A range steps by its minimum (fio's rule), which with O_DIRECT
/// must be a multiple of the alignment, as its maximum.
fn resolve_bs(
    bs: Option<&BsArg>,
    direct: bool,
    dio: &crate::spec::plan::DioAlign,
    dir: &Path,
) -> Result<BsSide> {
    let side = |bs_bytes, bs_mix, bs_range| BsSide {
        bs_bytes,
        bs_mix,
        bs_range,
    };
    Ok(match bs {
        None => side(16384, None, None),
        Some(BsArg::One(b)) => side(*b, None, None),
        Some(BsArg::Mix(m)) => side(
            m.iter().map(|w| w.bs_bytes).max().unwrap_or(16384),
            Some(m.clone()),
            None,
        ),
        Some(&BsArg::Range { min, max }) => {
            // fio's rule: every multiple of the minimum up to the maximum (and the maximum)
            let step = min;
            let align = if direct {
                dio.offset.max(BS_RANGE_STEP)
            } else {
                1
            };
            if !step.is_multiple_of(align) || !max.is_multiple_of(align) {
                return Err(Error::usage(format!(
                    "--bs {}-{}: the minimum (the step) and the maximum must be multiples of {} (the O_DIRECT alignment of {}); e.g. --bs {}-{}",
                    Bytes(min),
                    Bytes(max),
                    Bytes(align),
                    dir.display(),
                    Bytes(step.next_multiple_of(align)),
                    Bytes(max.next_multiple_of(align))
                )));
            }
            let range = BsRange {
                min_bytes: min,
                max_bytes: max,
                step_bytes: step,
            };
            let n = range.sizes().len();
            if n > MAX_BS_SIZES {
                return Err(Error::usage(format!(
                    "--bs {}-{}: {n} sizes in steps of {}, at most {MAX_BS_SIZES}; use a narrower range or a mix (16k:70,1m:30)",
                    Bytes(min),
                    Bytes(max),
                    Bytes(step)
                )));
            }
            side(max, None, Some(range))
        }
    })
}

/// What one worker thread costs besides its I/O buffers: the stack it touches, its latency
/// histograms (whole-run and per second) and its statistics, measured as the growth of the
/// peak resident set per worker (docs/measurement.md).
pub const WORKER_FIXED_BYTES: u64 = 900 * 1024;

/// Refuses a --threads that the system cannot start (thread limits) or hold (memory), before
/// anything is written: a thread that fails to start would fail the run midway. The cells of a
/// run run one after another, so the largest is what must fit.
fn check_threads(cells: &[Job]) -> Result<()> {
    let Some(job) = cells.iter().max_by_key(|c| c.threads) else {
        return Ok(());
    };
    let n = job.threads as u64;
    check_workers(&[job], |max, why| {
        if max == 0 {
            format!(
                "--bs {} with --iodepth {}: not even one worker thread fits on this system ({why}); use a smaller --bs or --iodepth",
                Bytes(job.bs_bytes),
                job.iodepth
            )
        } else {
            format!(
                "--threads {n}: at most {max} worker threads fit on this system ({why}); use --threads {max} or fewer"
            )
        }
    })
}

/// Refuses jobs that run at once (concurrent roles) when their threads together do not fit on
/// the system: each role's own check passes with the others left out. `names` label the jobs
/// in the message.
pub fn check_concurrent_threads(names: &[&str], jobs: &[&Job]) -> Result<()> {
    let n: u64 = jobs.iter().map(|j| j.threads as u64).sum();
    let parts: Vec<String> = names
        .iter()
        .zip(jobs)
        .map(|(name, j)| format!("{name} {}", j.threads))
        .collect();
    check_workers(jobs, |max, why| {
        format!(
            "roles ({}) run at once: {n} worker threads together, and at most {max} fit on this system ({why}); give the roles fewer threads (threads=)",
            parts.join(", ")
        )
    })
}

/// The check behind [`check_threads`] and [`check_concurrent_threads`]: the threads of `jobs`
/// together against the room for threads and the available memory (each worker costs
/// [`WORKER_FIXED_BYTES`] plus its buffers); `refuse(max, why)` words the refusal.
fn check_workers(jobs: &[&Job], refuse: impl Fn(u64, &str) -> String) -> Result<()> {
    // Tests reach the failure of a thread start behind this check with it.
    if jobs.is_empty() || std::env::var_os("IOLAB_TEST_SKIP_THREAD_CHECK").is_some() {
        return Ok(());
    }
    let n: u64 = jobs.iter().map(|j| j.threads as u64).sum();
    let roots = crate::system::env::Roots::live();
    // The sampler and the main thread come on top of the workers.
    let mut fits: Option<(u64, String)> = fsinfo::thread_room(&roots.proc, &roots.sys)
        .map(|(room, why)| (room.saturating_sub(2), why));
    // saturating: a --bs or --iodepth far beyond any memory is refused, not wrapped around
    let bytes: u64 = jobs
        .iter()
        .map(|j| {
            let buffers = j.bs_bytes.saturating_mul(j.iodepth as u64);
            (j.threads as u64).saturating_mul(WORKER_FIXED_BYTES.saturating_add(buffers))
        })
        .fold(0, u64::saturating_add);
    // the mean cost of a worker of these jobs
    let per = bytes.div_ceil(n.max(1)).max(1);
    if let Some((_, avail)) = fsinfo::meminfo(&roots.proc) {
        let m = avail / per;
        if fits.as_ref().is_none_or(|f| m < f.0) {
            fits = Some((
                m,
                format!(
                    "{} of memory available at about {} per worker",
                    Bytes(avail),
                    Bytes(per)
                ),
            ));
        }
    }
    match fits {
        Some((max, why)) if n > max => Err(Error::usage(refuse(max, &why))),
        _ => Ok(()),
    }
}
