//! `iolab run JOBFILE...`: fio job files translated into iolab run options, job by job, and
//! grouped into phases (jobs between stonewalls run at once, as roles). docs/fio-jobs.md.

use super::*;
use crate::spec::fio_vocab;
use crate::spec::fiojob::{self, JobFile, JobSection, Opt};

/// fio's default random seed (`randrepeat=1` without `randseed`): the same offsets every run.
pub const FIO_RANDSEED: u64 = 0xb189_9bed;

/// One fio job as iolab runs it.
#[derive(Debug, Clone)]
pub struct FioJob {
    /// The role name (the section name in iolab's role alphabet, unique in the run).
    pub name: String,
    /// The section as written.
    pub section: String,
    /// `file:line` of the section.
    pub at: String,
    pub phase: usize,
    /// The run options this job runs with.
    pub args: RunArgs,
    /// The same as `iolab run` flags: the equivalent flag run.
    pub iolab_args: Vec<String>,
    /// Every option of the job as resolved (globals included, later wins), fio's spelling.
    pub fio_options: BTreeMap<String, String>,
    /// Options iolab did not run (`--ignore-unsupported`): `file:line: key=value`.
    pub ignored: Vec<String>,
    /// How an option was approximated.
    pub notes: Vec<String>,
}

/// The job files of a run, parsed and translated.
#[derive(Debug, Clone)]
pub struct FioRun {
    pub files: Vec<JobFile>,
    pub jobs: Vec<FioJob>,
    pub phases: usize,
}

/// Reads a job file or an include: a regular file of at most 1 MiB of text
/// (`spec::input`), so `/dev/zero`, a FIFO or a huge file is refused before it is read.
fn read_jobfile(p: &Path) -> std::result::Result<String, String> {
    crate::spec::input::read_text(p, crate::spec::input::JOB_FILE_MAX_BYTES).map_err(|e| e.0)
}

/// Reads, parses and translates the job files of `iolab run JOBFILE...`. Unsupported options
/// are refused (in one line) unless `--ignore-unsupported`.
pub fn load(a: &RunArgs) -> Result<FioRun> {
    let read = read_jobfile;
    // fio's reserved names first ($ncpus, $pagesize, $mb_memory), then the environment
    let env = |k: &str| match k {
        "ncpus" => Some(
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
        ),
        // SAFETY: sysconf has no preconditions.
        "pagesize" => Some(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.to_string()),
        "mb_memory" => {
            // SAFETY: sysconf has no preconditions.
            let (pages, size) = unsafe {
                (
                    libc::sysconf(libc::_SC_PHYS_PAGES),
                    libc::sysconf(libc::_SC_PAGESIZE),
                )
            };
            Some(((pages as i128 * size as i128) >> 20).to_string())
        }
        _ => std::env::var(k).ok(),
    };
    let src = fiojob::Source {
        read: &read,
        env: &env,
    };
    let mut files = Vec::new();
    let mut stdin_used = false;
    for (i, p) in a.jobfiles.iter().enumerate() {
        let s = p.display().to_string();
        // a job file is `-`, a path ending in .fio, or a file whose first line that is not a
        // comment is a [section]
        let text = if s == "-" {
            if stdin_used {
                return Err(Error::usage("-: standard input can be read only once"));
            }
            stdin_used = true;
            crate::spec::input::bounded_text(
                std::io::stdin().lock(),
                crate::spec::input::JOB_FILE_MAX_BYTES,
            )
            .map_err(|e| Error::usage(format!("-: standard input: {e}")))?
        } else {
            let t = read_jobfile(p).map_err(|e| Error::usage(format!("{s}: job file: {e}")))?;
            if p.extension().is_none_or(|e| e != "fio") && !fiojob::looks_like_jobfile(&t) {
                return Err(Error::usage(format!(
                    "{s}: not a fio job file (its first line that is not a comment is no [section]); run options are given as --flags"
                )));
            }
            t
        };
        files.push(fiojob::parse(&s, Some(&text), i, &src)?);
    }
    translate(a, files)
}

/// The translation of parsed job files (no file system access).
pub fn translate(a: &RunArgs, files: Vec<JobFile>) -> Result<FioRun> {
    if a.mode.is_some() || !a.roles.is_empty() || a.profile.is_some() {
        return Err(Error::usage(
            "a job file says what to run: --mode, --role and --profile cannot be given with one",
        ));
    }
    let mut jobs: Vec<FioJob> = Vec::new();
    let mut unsupported: Vec<(String, String)> = Vec::new();
    let mut phase = 0usize;
    let mut phase_jobs: Vec<String> = Vec::new();
    let mut prev_file: Option<usize> = None;
    let mut index = 0u64;
    let mut all_names: Vec<String> = Vec::new();
    for f in &files {
        if f.jobs.is_empty() {
            return Err(Error::usage(format!(
                "{}: no job in the file (only [global] or nothing)",
                f.path
            )));
        }
        for s in &f.jobs {
            let at = format!("{}:{}", s.file, s.line);
            let mut j = translate_job(a, s, index, &mut unsupported)?;
            index += 1;
            // phases: a stonewall, a wait_for on a job of this phase, or a later job file
            let stonewall = match s.get("stonewall") {
                Some(o) => fio_vocab::parse_bool(o.value.as_deref())
                    .map_err(|e| Error::usage(format!("{}: stonewall: {e}", o.at())))?,
                None => false,
            };
            let mut new_phase = stonewall || prev_file.is_some_and(|p| p != s.file_index);
            if let Some(o) = s.get("wait_for") {
                let w = o.value.clone().unwrap_or_default();
                if !all_names.contains(&w) {
                    return Err(Error::usage(format!(
                        "{}: wait_for: no job of that name comes before this one",
                        o.at()
                    )));
                }
                new_phase |= phase_jobs.contains(&w);
            }
            if new_phase && !phase_jobs.is_empty() {
                phase += 1;
                phase_jobs.clear();
            }
            prev_file = Some(s.file_index);
            let fio_name = s
                .get("name")
                .and_then(|o| o.value.clone())
                .unwrap_or_else(|| s.name.clone());
            phase_jobs.push(fio_name.clone());
            phase_jobs.push(s.name.clone());
            all_names.push(fio_name);
            all_names.push(s.name.clone());
            j.phase = phase;
            j.at = at;
            // a unique role name
            let base = role_name(&j.section);
            let mut name = base.clone();
            let mut n = 2;
            while jobs.iter().any(|x| x.name == name) {
                name = format!("{base}-{n}");
                n += 1;
            }
            j.name = name;
            jobs.push(j);
        }
    }
    if !unsupported.is_empty() && !a.ignore_unsupported {
        // One line, naming each option by file, line and name only: never a value, which could
        // be anything an included file holds.
        let mut seen = Vec::new();
        let named: Vec<String> = unsupported
            .iter()
            .filter(|(at, _)| {
                let new = !seen.contains(at);
                seen.push(at.clone());
                new
            })
            .map(|(at, key)| format!("{at}: {key}"))
            .collect();
        const SHOWN: usize = 8;
        let more = match named.len().saturating_sub(SHOWN) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        return Err(Error::usage(format!(
            "options iolab does not support (or not with the value given): {}{more} (docs/fio-jobs.md lists what iolab runs; --ignore-unsupported runs the jobs without these options)",
            named[..named.len().min(SHOWN)].join(", ")
        )));
    }
    Ok(FioRun {
        files,
        jobs,
        phases: phase + 1,
    })
}

/// A section name in the role alphabet (`[a-z0-9_-]+`).
fn role_name(s: &str) -> String {
    let n: String = s
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if n.is_empty() { "job".into() } else { n }
}

/// Options that change nothing in what iolab runs (accepted, echoed).
pub const ACCEPTED: &[&str] = &[
    "name",
    "description",
    "thread",
    "group_reporting",
    "new_group",
    "stonewall",
    "wait_for",
    "norandommap",
    "create_on_open",
    "invalidate",
    "kb_base",
];

/// Options translated below.
pub const MAPPED: &[&str] = &[
    "filename",
    "directory",
    "size",
    "filesize",
    "nrfiles",
    "offset",
    "rw",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "bsrange",
    "bssplit",
    "blockalign",
    "ioengine",
    "iodepth",
    "direct",
    "buffered",
    "numjobs",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "sync",
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "loops",
    "rate_iops",
    "rate",
    "rate_process",
    "random_distribution",
    "randrepeat",
    "randseed",
    "allrandrepeat",
    "random_generator",
    "file_service_type",
    "verify",
    "do_verify",
    "verify_fatal",
    "verify_backlog",
    "verify_interval",
    "verify_pattern",
    "fallocate",
];

struct Ctx<'a> {
    s: &'a JobSection,
    kb: u32,
    unsupported: &'a mut Vec<(String, String)>,
    ignored: Vec<String>,
}

impl Ctx<'_> {
    fn opt(&self, k: &str) -> Option<&Opt> {
        self.s.get(k)
    }
    fn val(&self, k: &str) -> Option<String> {
        self.s.get(k).map(|o| o.value.clone().unwrap_or_default())
    }
    /// An option iolab does not run: named for the refusal, recorded for
    /// `--ignore-unsupported` with its value only when it is one of fio's options iolab reads
    /// (an unknown key's value is never kept: an include may hold anything).
    fn refuse(&mut self, o: &Opt) {
        self.unsupported.push((o.at(), o.key.clone()));
        let known = MAPPED.contains(&o.key.as_str()) || ACCEPTED.contains(&o.key.as_str());
        let what = if known { o.spelled() } else { o.key.clone() };
        self.ignored.push(format!("{}: {what}", o.at()));
    }
    /// A value that does not parse: `file:line: key: why`, never the value itself.
    fn bad(&self, k: &str, why: String) -> Error {
        match self.s.get(k) {
            Some(o) => Error::usage(format!("{}: {}: {why}", o.at(), o.key)),
            // a value derived from others (numjobs × nrfiles, filesize for size): the job
            None => Error::usage(format!(
                "{}:{}: job '{}': {k}: {why}",
                self.s.file, self.s.line, self.s.name
            )),
        }
    }
    fn size(&self, k: &str) -> Result<Option<u64>> {
        match self.val(k) {
            None => Ok(None),
            Some(v) => fio_vocab::parse_size(&v, self.kb)
                .map(Some)
                .map_err(|e| self.bad(k, e)),
        }
    }
    fn bool(&self, k: &str) -> Result<Option<bool>> {
        match self.opt(k) {
            None => Ok(None),
            Some(o) => fio_vocab::parse_bool(o.value.as_deref())
                .map(Some)
                .map_err(|e| self.bad(k, e)),
        }
    }
    fn int(&self, k: &str) -> Result<Option<u64>> {
        match self.val(k) {
            None => Ok(None),
            // an expression `(...)` as for sizes (fio's str_to_decimal)
            Some(v) if fio_vocab::is_expression(&v) => fio_vocab::parse_size(&v, self.kb)
                .map(Some)
                .map_err(|e| self.bad(k, e)),
            Some(v) => v
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| self.bad(k, format!("'{v}' is not a whole number"))),
        }
    }
    fn time(&self, k: &str) -> Result<Option<f64>> {
        match self.val(k) {
            None => Ok(None),
            Some(v) => fio_vocab::parse_time(&v, 1.0)
                .map(Some)
                .map_err(|e| self.bad(k, e)),
        }
    }
}

/// Both directions' values of a `read,write` option, refused when they differ.
fn one_for_both(c: &mut Ctx, k: &str) -> Option<String> {
    let v = c.val(k)?;
    let parts: Vec<&str> = v
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    match parts.as_slice() {
        [] => None,
        [x] => Some(x.to_string()),
        [x, rest @ ..] if rest.iter().all(|r| r == x) => Some(x.to_string()),
        _ => {
            let o = c.opt(k).cloned().expect("given");
            c.refuse(&o);
            Some(parts[0].to_string())
        }
    }
}

fn translate_job(
    a: &RunArgs,
    s: &JobSection,
    index: u64,
    unsupported: &mut Vec<(String, String)>,
) -> Result<FioJob> {
    let kb = match s.get("kb_base").and_then(|o| o.value.clone()) {
        None => 1024,
        Some(v) if v.trim() == "1024" => 1024,
        Some(v) if v.trim() == "1000" => 1000,
        Some(_) => {
            let o = s.get("kb_base").unwrap();
            return Err(Error::usage(format!(
                "{}: kb_base: fio takes 1000 or 1024",
                o.at()
            )));
        }
    };
    let mut c = Ctx {
        s,
        kb,
        unsupported,
        ignored: Vec::new(),
    };
    let mut notes: Vec<String> = Vec::new();
    // every option: known or refused
    let all: Vec<Opt> = s.opts.clone();
    for o in &all {
        if !ACCEPTED.contains(&o.key.as_str()) && !MAPPED.contains(&o.key.as_str()) {
            c.refuse(o);
        }
    }
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut f = |k: &str, v: String| flags.push((k.to_string(), v));

    // what: rw
    let rw = c.val("rw").unwrap_or_else(|| "read".into());
    let (rw_kind, stride) = match rw.split_once(':') {
        Some((k, n)) => (k.trim().to_string(), Some(n.to_string())),
        None => (rw.trim().to_string(), None),
    };
    if stride.is_some() {
        let o = c.opt("rw").cloned().unwrap();
        c.refuse(&o);
    }
    let mode = match fio_vocab::mode_of_rw(&rw_kind) {
        Some(m) => m.name(),
        None if matches!(
            rw_kind.as_str(),
            "trim" | "randtrim" | "trimwrite" | "randtrimwrite"
        ) =>
        {
            let o = c.opt("rw").cloned().unwrap();
            c.refuse(&o);
            "seqrd"
        }
        None => {
            return Err(c.bad(
                "rw",
                "not an I/O pattern of fio's (read, write, randread, randwrite, randrw, readwrite)"
                    .into(),
            ));
        }
    };
    f("mode", mode.into());
    let random = mode.starts_with("rnd");
    let writes = matches!(mode, "seqwr" | "rndwr" | "rndrw" | "seqrw");
    let mixed = matches!(mode, "rndrw" | "seqrw");
    if mixed {
        let pct = match (c.val("rwmixread"), c.val("rwmixwrite")) {
            (Some(r), _) => fio_vocab::parse_percent(&r).map_err(|e| c.bad("rwmixread", e))?,
            (None, Some(w)) => {
                100 - fio_vocab::parse_percent(&w).map_err(|e| c.bad("rwmixwrite", e))?
            }
            (None, None) => 50,
        };
        f("rwmixread", pct.to_string());
    }

    // block sizes: bssplit, else bsrange, else bs (fio's precedence)
    let mut bs_fixed: Option<u64> = None;
    let mut bs_min: u64;
    if let Some(v) = one_for_both(&mut c, "bssplit") {
        let mut parts: Vec<(u64, Option<u32>)> = Vec::new();
        for p in v.split(':').filter(|p| !p.is_empty()) {
            let (b, pct) = p.split_once('/').unwrap_or((p, ""));
            let b = fio_vocab::parse_size(b, kb).map_err(|e| c.bad("bssplit", e))?;
            let pct = if pct.trim().is_empty() {
                None
            } else {
                Some(fio_vocab::parse_percent(pct).map_err(|e| c.bad("bssplit", e))?)
            };
            parts.push((b, pct));
        }
        let given: u32 = parts.iter().filter_map(|p| p.1).sum();
        let open = parts.iter().filter(|p| p.1.is_none()).count() as u32;
        if given > 100 || (open == 0 && given != 100) || parts.is_empty() {
            return Err(c.bad("bssplit", "the percentages must add up to 100".to_string()));
        }
        let share = (100 - given).checked_div(open).unwrap_or(0);
        let mut rest = (100 - given).checked_rem(open).unwrap_or(0);
        let mut mix = Vec::new();
        bs_min = u64::MAX;
        for (b, p) in parts {
            let p = p.unwrap_or_else(|| {
                let extra = u32::from(rest > 0);
                rest = rest.saturating_sub(1);
                share + extra
            });
            bs_min = bs_min.min(b);
            mix.push(format!("{b}:{p}"));
        }
        f("bs", mix.join(","));
    } else if let Some(v) = one_for_both(&mut c, "bsrange") {
        let (lo, hi) = v
            .split_once('-')
            .or_else(|| v.split_once(':'))
            .ok_or_else(|| c.bad("bsrange", "use LOW-HIGH (e.g. 4k-64k)".into()))?;
        let mut lo = fio_vocab::parse_size(lo, kb).map_err(|e| c.bad("bsrange", e))?;
        let mut hi = fio_vocab::parse_size(hi, kb).map_err(|e| c.bad("bsrange", e))?;
        if lo > hi {
            std::mem::swap(&mut lo, &mut hi);
        }
        bs_min = lo;
        if lo == hi {
            bs_fixed = Some(lo);
            f("bs", lo.to_string());
        } else {
            f("bs", format!("{lo}-{hi}"));
        }
    } else {
        let b = match one_for_both(&mut c, "bs") {
            Some(v) => fio_vocab::parse_size(&v, kb).map_err(|e| c.bad("bs", e))?,
            None => 4096,
        };
        if b == 0 {
            return Err(c.bad("bs", "a block size of 0".into()));
        }
        bs_fixed = Some(b);
        bs_min = b;
        f("bs", b.to_string());
    }
    if let Some(ba) = c.size("blockalign")? {
        let min = bs_fixed.unwrap_or(0);
        if bs_fixed.is_none() || ba != min {
            let o = c.opt("blockalign").cloned().unwrap();
            c.refuse(&o);
        }
    }

    // how: engine, depth, direct, threads
    let engine = c.val("ioengine").unwrap_or_else(|| "psync".into());
    let engine = engine.trim().to_string();
    let e = match EngineKind::from_fio(&engine) {
        Some(k) => k,
        None if engine == "posixaio" => {
            notes.push("ioengine=posixaio runs as iolab's sync engine (pread/pwrite), one I/O at a time per thread".into());
            EngineKind::Sync
        }
        None => {
            let o = c.opt("ioengine").cloned().unwrap();
            c.refuse(&o);
            EngineKind::Sync
        }
    };
    f("engine", e.name().into());
    if let Some(d) = c.int("iodepth")? {
        if d == 0 {
            return Err(c.bad("iodepth", "must be at least 1".into()));
        }
        if e.caps().async_queue {
            f("iodepth", d.to_string());
        } else if d > 1 {
            notes.push(format!(
                "iodepth={d} has no effect with ioengine={engine} (one I/O at a time per thread, as in fio)"
            ));
        }
    }
    let direct = c.bool("direct")?.unwrap_or(false) || c.bool("buffered")? == Some(false);
    if direct {
        f("direct", "true".into());
    }
    let numjobs = c.int("numjobs")?.unwrap_or(1);
    if numjobs == 0 {
        return Err(c.bad("numjobs", "must be at least 1".into()));
    }
    f("threads", numjobs.to_string());

    // flushes
    let fsync = c.int("fsync")?.unwrap_or(0);
    let fdatasync = c.int("fdatasync")?.unwrap_or(0);
    match (fsync, fdatasync) {
        (0, 0) => f("fsync-freq", "0".into()),
        (n, 0) => f("fsync-freq", n.to_string()),
        (0, n) => {
            f("fsync-freq", n.to_string());
            f("fsync-mode", "fdatasync".into());
        }
        _ => {
            let o = c.opt("fdatasync").cloned().unwrap();
            c.refuse(&o);
            f("fsync-freq", fsync.to_string());
        }
    }
    let end = c.bool("end_fsync")?.unwrap_or(false) || c.bool("fsync_on_close")?.unwrap_or(false);
    f("fsync-end", end.to_string());
    match c
        .val("sync")
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("0") | Some("none") => {}
        Some("1") | Some("sync") | Some("") => f("open-flags", "sync".into()),
        Some("dsync") => f("open-flags", "dsync".into()),
        Some(_) => return Err(c.bad("sync", "not none, sync or dsync".into())),
    }

    // where: files or a device
    let mut nrfiles = c.int("nrfiles")?.unwrap_or(1);
    if nrfiles == 0 {
        return Err(c.bad("nrfiles", "must be at least 1".into()));
    }
    let mut dir: Option<PathBuf> = c.val("directory").map(|d| PathBuf::from(d.trim()));
    let mut device: Option<PathBuf> = None;
    let named = c.opt("filename").is_some();
    if let Some(fname) = c.val("filename") {
        let names: Vec<&str> = fname.split(':').filter(|n| !n.is_empty()).collect();
        if names.len() == 1 && names[0].starts_with("/dev/") {
            device = Some(PathBuf::from(names[0]));
        } else {
            let paths: Vec<PathBuf> = names
                .iter()
                .map(|n| match &dir {
                    Some(d) => d.join(n),
                    None => PathBuf::from(n),
                })
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
                let o = c.opt("filename").cloned().unwrap();
                c.refuse(&o);
            } else {
                notes.push(format!(
                    "filename={fname}: iolab runs on its own set of {} file(s) (iolab-file.N) in {} instead of the named file(s)",
                    paths.len(),
                    parents[0].display()
                ));
                dir = Some(parents[0].clone());
                nrfiles = paths.len() as u64;
            }
        }
    }
    let size = match (c.val("size"), c.size("filesize")?) {
        (Some(v), _) if v.trim().ends_with('%') => {
            let o = c.opt("size").cloned().unwrap();
            c.refuse(&o);
            None
        }
        (Some(_), _) => c.size("size")?,
        (None, Some(fs)) => Some(fs.saturating_mul(nrfiles)),
        (None, None) => None,
    };
    let offset = c.size("offset")?.unwrap_or(0);
    if let Some(d) = &device {
        f("device", d.display().to_string());
        if offset > 0 {
            f("offset", offset.to_string());
        }
        if let Some(sz) = size {
            f("size", sz.to_string());
        }
        if writes {
            notes.push(format!(
                "writes to {} need --destructive, as any iolab run on a device",
                d.display()
            ));
        }
    } else {
        let Some(sz) = size else {
            return Err(Error::usage(format!(
                "{}:{}: job '{}' gives no size (size= or filesize=): iolab creates its files and must know how large",
                s.file, s.line, s.name
            )));
        };
        if sz == 0 {
            return Err(c.bad("size", "a size of 0".into()));
        }
        if offset > 0 {
            let o = c.opt("offset").cloned().unwrap();
            c.refuse(&o);
        }
        // fio's clones each have their own files (numjobs × nrfiles files of size/nrfiles),
        // except named ones (filename=), which the clones share
        let clones = if named { 1 } else { numjobs };
        let files = nrfiles.saturating_mul(clones);
        let files = u32::try_from(files).map_err(|_| c.bad("nrfiles", "too many files".into()))?;
        f("files", files.to_string());
        f("size", sz.saturating_mul(clones).to_string());
        if let Some(d) = &dir {
            f("dir", d.display().to_string());
        }
    }
    let per_job_bytes = match (size, &device) {
        (Some(sz), _) => Some(sz),
        (None, Some(_)) => None,
        (None, None) => None,
    };

    // how long: time_based/runtime, else size-bound
    let runtime = c.time("runtime")?;
    let time_based = c.bool("time_based")?.unwrap_or(false);
    let loops = c.int("loops")?.unwrap_or(1).max(1);
    match (runtime, time_based) {
        (Some(t), _) if t > 0.0 => {
            f("time", format!("{t}"));
            if !time_based {
                notes.push(format!(
                    "runtime={t}s without time_based: iolab measures for {t}s (fio would stop earlier once size bytes were done)"
                ));
            }
        }
        (_, true) => {
            let o = c.opt("time_based").cloned().unwrap();
            return Err(Error::usage(format!(
                "{}: time_based needs runtime= (how long)",
                o.at()
            )));
        }
        _ => {
            let Some(bytes) = per_job_bytes else {
                return Err(Error::usage(format!(
                    "{}:{}: job '{}' on a device gives neither size= nor runtime=: say how much or how long",
                    s.file, s.line, s.name
                )));
            };
            if bytes < bs_min {
                return Err(Error::usage(format!(
                    "{}:{}: job '{}': size {bytes} is smaller than one block",
                    s.file, s.line, s.name
                )));
            }
            match bs_fixed {
                Some(b) => {
                    let ops = (bytes / b).saturating_mul(numjobs).saturating_mul(loops);
                    f("ops", ops.to_string());
                }
                // mixed sizes: the bytes themselves, each thread's last I/O trimmed to fit
                None => f(
                    "io-size",
                    bytes
                        .saturating_mul(numjobs)
                        .saturating_mul(loops)
                        .to_string(),
                ),
            }
        }
    }
    // fio's random map (default): each block once per pass; random_generator=lfsr walks a
    // full-period sequence instead; norandommap draws with replacement (iolab's own default)
    if random {
        let lfsr = match c.val("random_generator").as_deref().map(str::trim) {
            None | Some("tausworthe") | Some("tausworthe64") => false,
            Some("lfsr") => true,
            Some(_) => {
                return Err(c.bad(
                    "random_generator",
                    "not tausworthe, tausworthe64 or lfsr".into(),
                ));
            }
        };
        let uniform = c
            .val("random_distribution")
            .is_none_or(|d| d.trim() == "random");
        if lfsr {
            f("random-map", "lfsr".into());
        } else if !c.bool("norandommap")?.unwrap_or(false) && uniform {
            f("random-map", "bitmap".into());
        }
    }
    // invalidate=0: fio leaves the page cache as it is; iolab has no such run
    if c.bool("invalidate")? == Some(false) && !a.warm {
        notes.push(
            "invalidate=0: iolab still evicts the file set from the page cache before the phase (fio would leave the cache as it is); run with --warm to read the set in instead".into(),
        );
    }
    if let Some(r) = c.time("ramp_time")?
        && r > 0.0
    {
        f("ramp", format!("{r}"));
    }
    if let Some(d) = c.time("startdelay")?
        && d > 0.0
    {
        let o = c.opt("startdelay").cloned().unwrap();
        c.refuse(&o);
    }

    // pacing
    let mut rate: Option<u64> = None;
    if let Some(v) = one_for_both(&mut c, "rate_iops") {
        let r = fio_vocab::parse_size(&v, kb).map_err(|e| c.bad("rate_iops", e))?;
        rate = Some(r);
    }
    if let Some(v) = one_for_both(&mut c, "rate") {
        let bps = fio_vocab::parse_size(&v, kb).map_err(|e| c.bad("rate", e))?;
        match bs_fixed {
            Some(b) => rate = Some((bps / b).max(1)),
            None => {
                let o = c.opt("rate").cloned().unwrap();
                c.refuse(&o);
            }
        }
    }
    if let Some(r) = rate {
        if mixed {
            let o = c
                .opt("rate_iops")
                .or_else(|| c.opt("rate"))
                .cloned()
                .unwrap();
            c.refuse(&o);
        } else if r > 0 {
            f("rate", r.saturating_mul(numjobs).to_string());
        }
    }
    if let Some(p) = c.val("rate_process")
        && p.trim() != "linear"
    {
        let o = c.opt("rate_process").cloned().unwrap();
        c.refuse(&o);
    }

    // offsets
    if let Some(d) = c.val("random_distribution") {
        let d = d.trim().to_string();
        let (kind, arg) = d.split_once(':').unwrap_or((&d, ""));
        let mapped = match kind {
            "random" => Some("uniform".to_string()),
            "zipf" | "pareto" if !arg.is_empty() && !arg.contains(':') => {
                Some(format!("{kind}:{arg}"))
            }
            "zoned" if !arg.is_empty() => Some(format!("zoned:{arg}")),
            _ => None,
        };
        match mapped {
            Some(m) if random => f("distribution", m),
            Some(_) => {}
            None => {
                let o = c.opt("random_distribution").cloned().unwrap();
                c.refuse(&o);
            }
        }
    }
    let seed = match (c.int("randseed")?, c.bool("randrepeat")?) {
        (Some(s), _) => Some(s),
        (None, Some(false)) => None,
        _ => Some(FIO_RANDSEED.wrapping_add(index)),
    };
    if let Some(sd) = seed {
        f("seed", sd.to_string());
    }
    if let Some(t) = c.val("file_service_type") {
        let k = t.split(':').next().unwrap_or("").trim().to_string();
        if !matches!(k.as_str(), "random" | "roundrobin") {
            let o = c.opt("file_service_type").cloned().unwrap();
            c.refuse(&o);
        }
    }
    let read_back = verify_options(&mut c, mode, runtime.is_some_and(|t| t > 0.0), &mut notes)?;
    if let Some(v) = c.val("fallocate")
        && device.is_none()
        && matches!(mode, "seqwr" | "rndwr")
    {
        let layout = match v.trim() {
            "none" | "0" | "truncate" => "holes",
            "posix" | "native" | "keep" | "1" => "unwritten",
            _ => {
                return Err(c.bad(
                    "fallocate",
                    "not none, native, posix, keep or truncate".into(),
                ));
            }
        };
        f("layout", layout.into());
    }

    // verify: iolab's headers on every write; a write job reads its range back after writing it
    if let Some(back) = read_back {
        flags.push(("verify".into(), String::new()));
        if let Some(m) = back {
            for (k, v) in flags.iter_mut() {
                if k == "mode" {
                    *v = format!("{v},{m}");
                }
            }
        }
    }

    // the run options, by the run's own parser
    let mut argv: Vec<String> = vec!["iolab".into(), "run".into()];
    let mut iolab_args = Vec::new();
    for (k, v) in &flags {
        if k == "direct" || k == "verify" {
            argv.push(format!("--{k}"));
            iolab_args.push(format!("--{k}"));
        } else {
            argv.push(format!("--{k}={v}"));
            iolab_args.push(format!("--{k}={v}"));
        }
    }
    let parsed = {
        parse_from(&argv).map_err(|e| {
            Error::usage(format!(
                "{}:{}: job '{}': {}",
                s.file,
                s.line,
                s.name,
                clap_line(&e)
            ))
        })?
    };
    let Cmd::Run(p) = parsed.cmd else {
        unreachable!("parsed as run")
    };
    let mut r = *p;
    // the invocation's options that belong to the whole run
    if !flags.iter().any(|(k, _)| k == "dir") {
        r.set.dir = a.set.dir.clone();
    }
    r.keep = a.keep;
    r.reprepare = a.reprepare;
    r.warm = a.warm;
    r.force = a.force;
    r.destructive = a.destructive.clone();
    r.no_save = a.no_save;
    r.label = a.label.clone();
    r.tag.tags = a.tag.tags.clone();
    r.quiet = a.quiet;
    r.iostat_interval = a.iostat_interval;
    r.report_interval = a.report_interval;
    r.db = a.db.clone();
    // the options iolab read (stored in the run document): never one it did not use
    let mut fio_options = BTreeMap::new();
    for o in &s.opts {
        let used = MAPPED.contains(&o.key.as_str()) || ACCEPTED.contains(&o.key.as_str());
        if used
            && !c
                .ignored
                .iter()
                .any(|i| i.starts_with(&format!("{}: ", o.at())))
        {
            fio_options.insert(o.key.clone(), o.value.clone().unwrap_or_default());
        }
    }
    Ok(FioJob {
        name: String::new(),
        section: s.name.clone(),
        at: String::new(),
        phase: 0,
        args: r,
        iolab_args,
        fio_options,
        ignored: c.ignored,
        notes,
    })
}

/// fio's checksum kinds of `verify=`: iolab's own header and CRC-32C stand in for each.
pub const FIO_CHECKSUMS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
];

/// fio's verify options (docs/fio-jobs.md, "Verification"). `None`: no `--verify`;
/// `Some(None)`: `--verify` on the job's own mode; `Some(Some(m))`: `--verify` and the mode `m`
/// after the writes, reading back the range they wrote (fio's verify phase of a write job).
fn verify_options(
    c: &mut Ctx,
    mode: &str,
    timed: bool,
    notes: &mut Vec<String>,
) -> Result<Option<Option<&'static str>>> {
    // verify_pattern: fio's own byte pattern, which iolab's header cannot stand in for
    if let Some(o) = c.opt("verify_pattern").cloned() {
        c.refuse(&o);
    }
    let Some(v) = c.val("verify") else {
        for k in [
            "do_verify",
            "verify_fatal",
            "verify_backlog",
            "verify_interval",
        ] {
            if c.opt(k).is_some() {
                notes.push(format!("{k} without verify=: no effect, as in fio"));
            }
        }
        return Ok(None);
    };
    let kind = v.trim().to_string();
    match kind.as_str() {
        "0" | "none" => return Ok(None),
        "null" => {
            notes.push("verify=null: fio checks nothing; iolab runs without --verify".into());
            return Ok(None);
        }
        "pattern" => {
            let o = c.opt("verify").cloned().unwrap();
            c.refuse(&o);
            return Ok(None);
        }
        k if FIO_CHECKSUMS.contains(&k) => {}
        _ => {
            return Err(c.bad(
                "verify",
                "not a verify method of fio's (md5, crc32c, sha256, xxhash, meta, pattern, ...)"
                    .into(),
            ));
        }
    }
    let writes = matches!(mode, "seqwr" | "rndwr" | "rndrw" | "seqrw");
    if !writes {
        // a read job checks data an earlier fio job wrote with fio's headers: nothing iolab
        // wrote, so nothing it can check
        let o = c.opt("verify").cloned().unwrap();
        c.refuse(&o);
        return Ok(None);
    }
    notes.push(if kind.starts_with("crc32c") {
        format!("verify={kind}: iolab's header, with the same checksum (CRC-32C) as fio's {kind}")
    } else {
        format!("verify={kind}: checksum crc32c (iolab's header) in place of fio's {kind}")
    });
    let do_verify = c.bool("do_verify")?.unwrap_or(true);
    if let Some(true) = c.bool("verify_fatal")? {
        notes.push(
            "verify_fatal=1: iolab counts every mismatch and exits 3 at the end instead of stopping at the first"
                .into(),
        );
    }
    if let Some(n) = c.val("verify_backlog") {
        notes.push(format!(
            "verify_backlog={}: iolab reads the blocks back after all the writes, not every {} blocks (the same bytes, later)",
            n.trim(),
            n.trim()
        ));
    }
    if let Some(n) = c.val("verify_interval") {
        notes.push(format!(
            "verify_interval={}: iolab's header and checksum cover the whole block",
            n.trim()
        ));
    }
    if !do_verify {
        notes.push("do_verify=0: written with iolab's headers, not read back".into());
        return Ok(Some(None));
    }
    if matches!(mode, "rndrw" | "seqrw") {
        notes.push(format!(
            "verify with {}: iolab's reads check what the job wrote as they go; fio's verify phase at the end is not run",
            if mode == "rndrw" { "randrw" } else { "readwrite" }
        ));
        return Ok(Some(None));
    }
    if timed {
        notes.push(
            "verify with runtime=: the read-back runs for the same time as the writes, not once over what they wrote"
                .into(),
        );
    }
    notes.push(
        "verify: after the writes, a seqrd pass reads back and checks the range written (fio's verify phase)"
            .into(),
    );
    Ok(Some(Some("seqrd")))
}

/// The plan of one phase: one job is an ordinary run, several are roles (each on its own file
/// set in `DIR/NAME/`).
pub fn plan_phase(jobs: &[&FioJob]) -> Result<Plan> {
    match jobs {
        [] => Err(Error::usage("a phase without jobs")),
        [j] => plan_run(&j.args).map_err(|e| Error {
            msg: format!("{} [{}]: {}", j.at, j.section, e.msg),
            ..e
        }),
        _ => {
            let base = jobs[0].args.clone();
            plan_role_set(
                &base,
                jobs.iter()
                    .map(|j| (j.name.clone(), j.args.clone(), true, false))
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(extra: &[&str]) -> RunArgs {
        use clap::Parser;
        let mut argv = vec!["iolab", "run", "x.fio"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).unwrap().cmd {
            Cmd::Run(a) => *a,
            _ => unreachable!(),
        }
    }

    fn parse_text(text: &str) -> JobFile {
        let read = |_: &Path| Err("cannot read it".to_string());
        let env = |_: &str| None;
        fiojob::parse(
            "t.fio",
            Some(text),
            0,
            &fiojob::Source {
                read: &read,
                env: &env,
            },
        )
        .unwrap()
    }

    fn jobs(text: &str, extra: &[&str]) -> Result<FioRun> {
        translate(&run_args(extra), vec![parse_text(text)])
    }

    #[test]
    fn every_supported_option_becomes_run_options() {
        let r = jobs(
            include_str!("../../tests/fixtures/fio-jobs/options.fio"),
            &[],
        )
        .unwrap();
        let by = |n: &str| r.jobs.iter().find(|j| j.name == n).unwrap();
        let args = |n: &str| by(n).iolab_args.join(" ");
        assert_eq!(
            args("randread-zipf"),
            "--mode=rndrd --bs=16384 --engine=libaio --iodepth=16 --direct --threads=2 --fsync-freq=0 --fsync-end=false --files=8 --size=2147483648 --dir=/data/bench --time=30 --ramp=5 --rate=1000 --distribution=zipf:1.2 --seed=42"
        );
        assert_eq!(
            args("oltp-mix"),
            "--mode=rndrw --rwmixread=70 --bs=4096:50,16384:25,65536:25 --engine=io_uring --iodepth=16 --direct --threads=1 --fsync-freq=16 --fsync-end=true --files=2 --size=536870912 --dir=/data/bench --io-size=536870912 --distribution=zoned:60/10:30/20:10/70"
        );
        assert_eq!(
            args("log"),
            "--mode=seqwr --bs=4096 --engine=sync --threads=1 --fsync-freq=1 --fsync-mode=fdatasync --fsync-end=false --open-flags=dsync --files=1 --size=64000000 --dir=/data/bench --ops=31250 --rate=976 --layout=holes"
        );
        assert_eq!(
            args("scan"),
            "--mode=seqrd --bs=65536-1048576 --engine=mmap --threads=2 --fsync-freq=0 --fsync-end=true --files=2 --size=2147483648 --dir=/data/bench --time=60"
        );
        assert_eq!(
            args("dev"),
            "--mode=rndrd --bs=4096 --engine=sync --direct --threads=1 --fsync-freq=0 --fsync-end=false --device=/dev/nvme0n1 --offset=1073741824 --size=10737418240 --time=10 --distribution=pareto:0.9"
        );
        // phases: stonewall, wait_for on a job of the phase, stonewall
        let phases: Vec<(String, usize)> =
            r.jobs.iter().map(|j| (j.name.clone(), j.phase)).collect();
        assert_eq!(
            phases,
            [
                ("randread-zipf".to_string(), 0),
                ("oltp-mix".into(), 1),
                ("log".into(), 2),
                ("scan".into(), 2),
                ("dev".into(), 3)
            ]
        );
        assert_eq!(r.phases, 4);
        assert!(r.jobs.iter().all(|j| j.ignored.is_empty()));
        assert!(by("dev").notes.iter().any(|n| n.contains("posixaio")));
        assert!(
            by("scan")
                .notes
                .iter()
                .any(|n| n.contains("a.dat:/data/bench/b.dat"))
        );
        assert!(
            by("log")
                .notes
                .iter()
                .any(|n| n.contains("iodepth=16 has no effect"))
        );
        assert_eq!(by("log").fio_options["kb_base"], "1000");
        assert_eq!(by("randread-zipf").at, "t.fio:18");
        // the parsed options are the run's own
        let a = &by("randread-zipf").args;
        assert_eq!(
            (a.threads, a.iodepth, a.direct, a.rate),
            (Some(2), 16, true, Some(1000))
        );
    }

    #[test]
    fn defaults_are_fios() {
        let r = jobs("[j]\nsize=1m\n", &["--dir", "/x"]).unwrap();
        assert_eq!(
            r.jobs[0].iolab_args.join(" "),
            format!(
                "--mode=seqrd --bs=4096 --engine=sync --threads=1 --fsync-freq=0 --fsync-end=false --files=1 --size=1048576 --ops=256 --seed={FIO_RANDSEED}"
            )
        );
        assert_eq!(r.jobs[0].args.set.dir, PathBuf::from("/x"));
        // a later job file starts a new phase; names are made unique and role-shaped
        let f2 = parse_text("[My Job]\nsize=1m\n[my job]\nsize=1m\n");
        let mut f2b = f2.clone();
        f2b.jobs.iter_mut().for_each(|j| j.file_index = 1);
        let r = translate(&run_args(&[]), vec![f2, f2b]).unwrap();
        let names: Vec<(&str, usize)> = r.jobs.iter().map(|j| (j.name.as_str(), j.phase)).collect();
        assert_eq!(
            names,
            [
                ("my-job", 0),
                ("my-job-2", 0),
                ("my-job-3", 1),
                ("my-job-4", 1)
            ]
        );
    }

    #[test]
    fn unsupported_options_are_refused_in_one_line_or_recorded() {
        let text = "[global]\nsize=1m\nzonemode=zbd\n[a]\nrw=trim\n[b]\nrw=randread:8\nioengine=sg\nbs=4k,8k\nrandom_distribution=normal:5\nstartdelay=2\nverify=md5\n";
        let e = jobs(text, &[]).unwrap_err();
        assert_eq!(e.exit, crate::error::Exit::Usage);
        assert_eq!(
            e.msg,
            "options iolab does not support (or not with the value given): t.fio:3: zonemode, t.fio:5: rw, t.fio:7: rw, t.fio:9: bs, t.fio:8: ioengine, t.fio:11: startdelay, t.fio:10: random_distribution, t.fio:12: verify (docs/fio-jobs.md lists what iolab runs; --ignore-unsupported runs the jobs without these options)"
        );
        let r = jobs(text, &["--ignore-unsupported"]).unwrap();
        // an option fio does not have is recorded by name only, never its value
        assert_eq!(r.jobs[0].ignored, ["t.fio:3: zonemode", "t.fio:5: rw=trim"]);
        assert_eq!(r.jobs[1].ignored.len(), 7);
        // and the options stored are those iolab used
        assert!(!r.jobs[0].fio_options.contains_key("zonemode"));
        assert!(!r.jobs[0].fio_options.contains_key("rw"));
        assert_eq!(r.jobs[0].fio_options["size"], "1m");
    }

    /// Found by tests/fuzz_input.rs: a refusal of a value derived from options that are not
    /// given (filesize for size, numjobs × nrfiles without nrfiles) panicked ("option given").
    #[test]
    fn refusals_of_derived_values_name_the_job() {
        let e = jobs("[a]\nfilesize=0\n", &[]).unwrap_err();
        assert_eq!(e.msg, "t.fio:1: job 'a': size: a size of 0");
        let e = jobs("[a]\nsize=1m\nnumjobs=5000000000\n", &[]).unwrap_err();
        assert_eq!(e.msg, "t.fio:1: job 'a': nrfiles: too many files");
    }

    #[test]
    fn values_fio_rejects_name_file_and_line() {
        for (text, want) in [
            ("[a]\nsize=1m\nbs=abc\n", "t.fio:3: bs: not a number"),
            (
                "[a]\nsize=1m\n[b]\nsize=1m\nwait_for=zz\n",
                "t.fio:5: wait_for: no job of that name",
            ),
            (
                "[a]\nsize=1m\nrw=sideways\n",
                "t.fio:3: rw: not an I/O pattern",
            ),
            ("[a]\nrw=read\n", "t.fio:1: job 'a' gives no size"),
            (
                "[a]\nsize=1m\nruntime=soon\n",
                "t.fio:3: runtime: not a time",
            ),
            (
                "[a]\nsize=1m\nrw=randrw\nrwmixread=120\n",
                "t.fio:4: rwmixread: not a percentage",
            ),
            (
                "[a]\nsize=1m\nbssplit=4k/60:8k/60\n",
                "t.fio:3: bssplit: the percentages",
            ),
            ("[a]\nsize=1m\ndirect=2\n", "t.fio:3: direct: not 0 or 1"),
            (
                "[a]\nsize=1m\nnumjobs=0\n",
                "t.fio:3: numjobs: must be at least 1",
            ),
            (
                "[a]\nsize=1m\ntime_based\n",
                "t.fio:3: time_based needs runtime=",
            ),
        ] {
            let e = jobs(text, &[]).unwrap_err();
            assert!(e.msg.starts_with(want), "{text}: {}", e.msg);
            assert!(!e.msg.contains('\n'), "{}", e.msg);
            // the value that did not parse is never quoted
            let value = text
                .lines()
                .last()
                .unwrap()
                .split('=')
                .nth(1)
                .unwrap_or("@");
            assert!(!e.msg.contains(&format!("'{value}'")), "{}", e.msg);
        }
        assert!(jobs("[a]\nsize=1m\n", &["--mode", "rndrd"]).is_err());
    }
}
