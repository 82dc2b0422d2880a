//! `iolab capture` (docs/capture.md): the device resolved, a private trace instance on it
//! (`system::tracefs`), its events merged across CPUs in time order and made into records
//! (`measure::capture::Tracker`), streamed to the capture file (and fio's iolog), and the
//! device's own counts (`/sys/block/DEV/stat`) over the same window beside the captured ones.

use crate::measure::capture::{BlockEvent, IologWriter, Tracker};
use crate::measure::filemap::ExtentMap;
use crate::measure::iostat::{DiskStat, parse_line};
use crate::model::capture::{
    CaptureHeader, CaptureIo, CaptureSummary, CountCheck, DirCounts, IoDir,
};
use crate::model::capture::{ClassCounts, FileClass};
use crate::spec::roots::Roots;
use crate::system::{blockdev, filemap, fsinfo, procfs, tracefs};
use std::collections::{HashSet, VecDeque};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the buffers are read.
const POLL: Duration = Duration::from_millis(50);
/// Events younger than this may still be committed on another CPU: they wait for the next read.
const SLACK_NS: u64 = 10_000_000;
/// How long recorded requests still in flight at the end are waited for.
const GRACE_NS: u64 = 1_000_000_000;
/// Counts further apart than this (percent of the device's) are a warning.
pub const AGREE_PCT: f64 = 1.0;

/// What to capture, as the flags said.
pub struct CaptureSpec {
    pub device: Option<String>,
    pub dir: Option<PathBuf>,
    pub time_s: f64,
    pub output: PathBuf,
    pub max_events: Option<u64>,
    pub write_iolog: Option<PathBuf>,
    /// The trace buffer per CPU, KiB.
    pub buffer_kb: u64,
    /// Only this process tree's I/O (`--pid`).
    pub pid: Option<i32>,
    /// Only this cgroup's processes' I/O (`--cgroup`, as given).
    pub cgroup: Option<PathBuf>,
}

/// The cgroup folder `--cgroup` names: a path under /sys/fs/cgroup, or relative to it (or to a
/// cgroup v1 hierarchy's folder there: `blkio/db`).
pub fn cgroup_dir(given: &Path, roots: &Roots) -> Result<PathBuf, Fault> {
    let base = roots.sys.join("fs/cgroup");
    let rel = given.strip_prefix("/sys/fs/cgroup").unwrap_or(given);
    let rel = rel.strip_prefix("/").unwrap_or(rel);
    let d = base.join(rel);
    if rel
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
        || !d.join("cgroup.procs").is_file()
    {
        return Err(usage(format!(
            "--cgroup {}: not a cgroup (no cgroup.procs under {}); name a folder under /sys/fs/cgroup",
            given.display(),
            base.display()
        )));
    }
    Ok(d)
}

/// What decides whose files are mapped: `--pid`, `--cgroup`, else `--dir` (none for `--device`).
pub fn selection(spec: &CaptureSpec, roots: &Roots) -> Result<Option<filemap::Select>, Fault> {
    Ok(if let Some(p) = spec.pid {
        Some(filemap::Select::Tree(p))
    } else if let Some(c) = &spec.cgroup {
        Some(filemap::Select::Cgroup(cgroup_dir(c, roots)?))
    } else {
        spec.dir.clone().map(filemap::Select::Dir)
    })
}

/// The device of a process selection without `--device`/`--dir`: its working directory's, or
/// its first open regular file's on a block device.
fn device_of_pids(pids: &[i32], roots: &Roots) -> Option<u64> {
    let sys = roots.sys.as_path();
    let on_disk = |p: &Path| {
        fs::metadata(p)
            .ok()
            .map(|m| m.dev())
            .filter(|&d| fsinfo::block_dev_of(sys, d).is_some())
    };
    for pid in pids {
        let pd = roots.proc.join(pid.to_string());
        if fs::read_link(pd.join("cwd")).is_ok_and(|c| c != Path::new("/"))
            && let Some(d) = on_disk(&pd.join("cwd"))
        {
            return Some(d);
        }
    }
    for pid in pids {
        for e in fs::read_dir(roots.proc.join(pid.to_string()).join("fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if fs::metadata(e.path()).is_ok_and(|m| m.is_file())
                && let Some(d) = on_disk(&e.path())
            {
                return Some(d);
            }
        }
    }
    None
}

/// The whole disk a capture records.
pub struct Target {
    pub name: String,
    pub majmin: String,
    /// The kernel's dev_t: major << 20 | minor.
    pub devt: u32,
    pub disk_dir: PathBuf,
    /// What the user named, when it was a partition of the disk.
    pub partition: Option<String>,
}

/// An error of the capture: `Usage` (bad input, nothing written) or `Failed`.
pub enum Fault {
    Usage(String),
    Failed(String),
}

fn usage(s: String) -> Fault {
    Fault::Usage(s)
}

/// The device tree of a filesystem's block device (its partition, if on one), by name.
fn tree_of(
    sys: &Path,
    bd: &fsinfo::BlockDev,
    flag: &str,
) -> Result<(blockdev::DevTree, String), Fault> {
    let name = bd
        .part_dir
        .as_ref()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(bd.name.clone());
    let t = blockdev::tree_by_name(sys, &name)
        .ok_or_else(|| usage(format!("{flag}: {name} is not in sysfs")))?;
    Ok((t, name))
}

/// The disk of `--device` or `--dir`; a refusal names the flag.
pub fn resolve(spec: &CaptureSpec, roots: &Roots) -> Result<Target, Fault> {
    let sys = roots.sys.as_path();
    let from_pids = if spec.device.is_none() && spec.dir.is_none() {
        let (flag, pids) = match selection(spec, roots)? {
            Some(filemap::Select::Tree(p)) => {
                (format!("--pid {p}"), filemap::tree_of(&roots.proc, p))
            }
            Some(filemap::Select::Cgroup(c)) => (
                format!(
                    "--cgroup {}",
                    spec.cgroup.clone().unwrap_or_default().display()
                ),
                filemap::cgroup_pids(&c),
            ),
            _ => (String::new(), Vec::new()),
        };
        if pids.is_empty() {
            return Err(usage(format!("{flag}: no such process")));
        }
        let dev = device_of_pids(&pids, roots).ok_or_else(|| {
            usage(format!(
                "{flag}: no open file or working directory on a block device; name the device with --device"
            ))
        })?;
        Some((flag, dev))
    } else {
        None
    };
    let (tree, flag, given) = if let Some((flag, dev)) = from_pids {
        let bd = fsinfo::block_dev_of(sys, dev)
            .ok_or_else(|| usage(format!("{flag}: its device is not in sysfs")))?;
        let (t, name) = tree_of(sys, &bd, &flag)?;
        (t, "--pid", name)
    } else if let Some(d) = &spec.device {
        let t = if d.contains('/') {
            blockdev::tree_of_path(sys, Path::new(d))
        } else {
            blockdev::tree_by_name(sys, d).ok_or_else(|| "no such block device".to_string())
        };
        let t = t.map_err(|why| usage(format!("--device {d}: {why}")))?;
        (t, "--device", d.clone())
    } else {
        let p = spec.dir.clone().unwrap_or_default();
        let md = fs::metadata(&p).map_err(|e| usage(format!("--dir {}: {e}", p.display())))?;
        let bd = fsinfo::block_dev_of(sys, md.dev()).ok_or_else(|| {
            usage(format!(
                "--dir {}: no block device under it (a memory or network filesystem?)",
                p.display()
            ))
        })?;
        let (t, _) = tree_of(sys, &bd, &format!("--dir {}", p.display()))?;
        (t, "--dir", p.display().to_string())
    };
    let (disk, partition) = match &tree.parent {
        Some(p) => (p.clone(), Some(tree.node.name.clone())),
        None => (tree.node.clone(), None),
    };
    let disk_dir = sys.join("class/block").join(&disk.name);
    // a bio-based device (dm, md) issues no requests of its own
    if !disk_dir.join("mq").exists() && disk_dir.join("slaves").is_dir() {
        let under: Vec<String> = crate::system::env::names_in(&disk_dir.join("slaves"));
        return Err(usage(format!(
            "{flag} {given}: {} passes its I/O to the devices under it without block requests of its own; capture one of those ({})",
            disk.name,
            under.join(", ")
        )));
    }
    let (maj, min) = disk
        .majmin
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .ok_or_else(|| usage(format!("{flag} {given}: no major:minor in sysfs")))?;
    Ok(Target {
        name: disk.name,
        majmin: disk.majmin,
        devt: maj << 20 | min,
        disk_dir,
        partition,
    })
}

/// The device's counters (`/sys/block/DEV/stat`).
fn dev_stat(t: &Target) -> DiskStat {
    let s = fs::read_to_string(t.disk_dir.join("stat")).unwrap_or_default();
    parse_line(&format!("0 0 {} {}", t.name, s.trim()))
        .map(|(_, d)| d)
        .unwrap_or_default()
}

fn stat_counts(a: &DiskStat, b: &DiskStat) -> DirCounts {
    use crate::measure::iostat::delta;
    let opt = |x: Option<u64>, y: Option<u64>| delta(x.unwrap_or(0), y.unwrap_or(0));
    DirCounts {
        read: delta(b.rd_ios, a.rd_ios),
        write: delta(b.wr_ios, a.wr_ios),
        discard: opt(b.dc_ios, a.dc_ios),
        flush: opt(b.fl_ios, a.fl_ios),
        other: 0,
    }
}

/// The captured counts against the device's: the device counts other requests (write
/// zeroes, zone commands) as writes, so the captured `other` joins `write` here.
pub fn count_check(captured: DirCounts, device: DirCounts) -> CountCheck {
    let mut c = captured;
    c.write += c.other;
    c.other = 0;
    let max_diff_pct = [IoDir::Read, IoDir::Write, IoDir::Discard, IoDir::Flush]
        .iter()
        .map(|&d| {
            let (a, b) = (c.get(d), device.get(d));
            a.abs_diff(b) as f64 * 100.0 / b.max(1) as f64
        })
        .fold(0.0, f64::max);
    CountCheck {
        captured: c,
        device,
        max_diff_pct,
        agree: max_diff_pct <= AGREE_PCT,
    }
}

/// A new file at `path` (O_EXCL, never through a symbolic link).
fn create_new(path: &Path, flag: &str) -> Result<File, Fault> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                "it exists; iolab writes a new file and never overwrites one".to_string()
            } else {
                e.to_string()
            };
            usage(format!("{flag} {}: {why}", path.display()))
        })
}

/// Refuses, before anything starts, an output that exists or whose folder is missing.
pub fn check_outputs(spec: &CaptureSpec) -> Result<(), Fault> {
    let mut named = vec![("--output", &spec.output)];
    if let Some(p) = &spec.write_iolog {
        named.push(("--write-iolog", p));
    }
    for (flag, p) in named {
        if fs::symlink_metadata(p).is_ok() {
            return Err(usage(format!(
                "{flag} {}: it exists; iolab writes a new file and never overwrites one",
                p.display()
            )));
        }
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(usage(format!("{flag} {}: no such folder", p.display())));
        }
    }
    Ok(())
}

fn io_fault(what: &Path) -> impl Fn(std::io::Error) -> Fault + '_ {
    move |e| Fault::Failed(format!("writing {}: {e}", what.display()))
}

/// Records wait for a map pass that began after their issue at most this many: past it, the
/// oldest is written with the map as it is.
const MAX_WAITING: usize = 262_144;

/// The files of `--dir`, `--pid` or `--cgroup`, as mapped so far.
struct Mapping {
    running: filemap::Running,
    map: ExtentMap,
    /// The selected processes seen so far (`--pid`, `--cgroup`): their requests are kept.
    pids: HashSet<i32>,
    /// Only the selection's requests are kept.
    filter: bool,
    /// The latest pass began here (trace clock, ns).
    since_ns: u64,
    files: u64,
    full_warned: bool,
    warnings: Vec<String>,
}

impl Mapping {
    fn apply(&mut self, u: filemap::Update) {
        for (start, len, name) in u.extents {
            let id = self.map.file(&name);
            if !self.map.set(start, len, id) && !self.full_warned {
                self.full_warned = true;
                self.warnings.push(format!(
                    "over {} extents mapped: later ones are left out (their requests have no file)",
                    crate::measure::filemap::MAX_RANGES
                ));
            }
        }
        self.pids.extend(u.pids);
        self.since_ns = self.since_ns.max(u.since_ns);
        self.files = u.files;
        self.warnings.extend(u.warnings);
    }
    fn poll(&mut self) {
        while let Ok(u) = self.running.updates.try_recv() {
            self.apply(u);
        }
    }
    /// Ends the passes and applies the last (it began after this call).
    fn finish(&mut self) {
        self.running.finish();
        self.poll();
    }
}

/// The files a capture writes as it goes.
struct Sinks<'a> {
    spec: &'a CaptureSpec,
    file: BufWriter<File>,
    iolog: Option<IologWriter<BufWriter<File>>>,
    line: Vec<u8>,
    mapping: Option<Mapping>,
    /// Records waiting for a map pass begun after their issue.
    waiting: VecDeque<CaptureIo>,
    /// The capture's start on the trace clock (a record's `t_ns` is after it).
    start_ns: u64,
    ios: DirCounts,
    bytes: DirCounts,
    /// wal, data, temp, other, unmapped.
    classes: [(DirCounts, DirCounts); 5],
    left_out: u64,
}

impl Sinks<'_> {
    /// Takes the records ready; writes those whose file is known by now.
    fn put(&mut self, recs: &mut Vec<CaptureIo>) -> Result<(), Fault> {
        self.waiting.extend(recs.drain(..));
        let since = match &mut self.mapping {
            Some(m) => {
                m.poll();
                m.since_ns
            }
            None => u64::MAX,
        };
        while let Some(r) = self.waiting.front() {
            if self.start_ns + r.t_ns >= since && self.waiting.len() <= MAX_WAITING {
                break;
            }
            let r = self.waiting.pop_front().unwrap_or_else(|| unreachable!());
            self.write(r)?;
        }
        Ok(())
    }

    /// Every record left (after the mapping's last pass).
    fn flush(&mut self) -> Result<(), Fault> {
        if let Some(m) = &mut self.mapping {
            m.finish();
        }
        while let Some(r) = self.waiting.pop_front() {
            self.write(r)?;
        }
        Ok(())
    }

    fn write(&mut self, mut r: CaptureIo) -> Result<(), Fault> {
        if let Some(m) = &self.mapping {
            if let Some(f) = m.map.lookup(r.offset_bytes).filter(|_| r.size_bytes > 0) {
                r.class = Some(f.class);
                r.file = Some(f.path.clone());
            } else if m.filter && !m.pids.contains(&r.pid) {
                self.left_out += 1;
                return Ok(());
            }
        }
        self.ios.add(r.dir, 1);
        self.bytes.add(r.dir, r.size_bytes);
        let slot = FileClass::slot(r.class);
        self.classes[slot].0.add(r.dir, 1);
        self.classes[slot].1.add(r.dir, r.size_bytes);
        self.line.clear();
        serde_json::to_writer(&mut self.line, &r).map_err(|e| Fault::Failed(e.to_string()))?;
        self.line.push(b'\n');
        self.file
            .write_all(&self.line)
            .map_err(io_fault(&self.spec.output))?;
        if let (Some(w), Some(p)) = (&mut self.iolog, &self.spec.write_iolog) {
            w.io(&r).map_err(io_fault(p))?;
        }
        Ok(())
    }

    /// The counts by class (none without a mapping).
    fn class_counts(&self) -> Vec<ClassCounts> {
        if self.mapping.is_none() {
            return Vec::new();
        }
        FileClass::SLOTS
            .iter()
            .zip(&self.classes)
            .filter(|(_, (ios, _))| ios.total() > 0)
            .map(|(n, (ios, bytes))| ClassCounts {
                class: n.to_string(),
                ios: *ios,
                bytes: *bytes,
            })
            .collect()
    }
}

/// Events read so far, waiting until no CPU can still hold an older one.
struct Merge {
    buf: Vec<BlockEvent>,
    recs: Vec<CaptureIo>,
}

impl Merge {
    /// Reads every CPU's buffer and hands the tracker the events older than `upto` (ns), in
    /// time order; the records ready go to the sinks.
    fn step(
        &mut self,
        inst: &mut tracefs::Instance,
        tr: &mut Tracker,
        sinks: &mut Sinks,
        upto: u64,
    ) -> Result<(), Fault> {
        inst.read(&mut self.buf).map_err(Fault::Failed)?;
        // stable: each CPU's events keep their order
        self.buf.sort_by_key(|e| e.ts_ns);
        let n = self.buf.partition_point(|e| e.ts_ns < upto);
        for e in self.buf.drain(..n) {
            tr.event(&e);
        }
        tr.ready(&mut self.recs);
        sinks.put(&mut self.recs)
    }
}

/// Captures until the time passes, `--max-events` requests are recorded or `stop` is set
/// (Ctrl-C); the summary, also written as the capture file's last line.
///
/// `window` is called as the window opens (`true`) and closes (`false`): the database's own
/// counters are read there, and their change returned at the close.
pub fn run(
    spec: &CaptureSpec,
    t: &Target,
    roots: &Roots,
    stop: &AtomicBool,
    window: &mut dyn FnMut(bool) -> Option<crate::model::capture::DbView>,
) -> Result<CaptureSummary, Fault> {
    let select = selection(spec, roots)?;
    let mounts: Vec<(String, String)> = procfs::mounts(&roots.proc)
        .into_iter()
        .map(|m| (m.mountpoint, m.fstype))
        .collect();
    let tfs = tracefs::Tracefs::open(&mounts).map_err(Fault::Failed)?;
    for gone in tracefs::remove_stale(&tfs.root, &roots.proc) {
        eprintln!("iolab: removed the {gone} a killed iolab left");
    }
    let mut inst =
        tracefs::Instance::create(&tfs, t.devt, spec.buffer_kb).map_err(Fault::Failed)?;
    let file = create_new(&spec.output, "--output")?;
    let mut warnings = Vec::new();
    if let Some(p) = &t.partition {
        warnings.push(format!(
            "{p} is a partition of {}: the capture holds the whole disk's requests, offsets from the disk's start",
            t.name
        ));
    }
    let out_dev = spec
        .output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Some(bd) = fs::metadata(out_dev)
        .ok()
        .and_then(|m| fsinfo::block_dev_of(&roots.sys, m.dev()))
        && bd.name == t.name
    {
        warnings.push(format!(
            "the capture file is on {}, the captured device: its own writes are in the capture",
            t.name
        ));
    }
    let iolog = match &spec.write_iolog {
        Some(p) => {
            let f = create_new(p, "--write-iolog")?;
            Some(
                IologWriter::new(BufWriter::new(f), &format!("/dev/{}", t.name))
                    .map_err(io_fault(p))?,
            )
        }
        None => None,
    };
    let filter = matches!(
        select,
        Some(filemap::Select::Tree(_) | filemap::Select::Cgroup(_))
    );
    let mapping = select.map(|sel| Mapping {
        running: filemap::start(sel, &t.name, roots, tracefs::mono_ns),
        map: ExtentMap::default(),
        pids: HashSet::new(),
        filter,
        since_ns: 0,
        files: 0,
        full_warned: false,
        warnings: Vec::new(),
    });
    let mut sinks = Sinks {
        spec,
        file: BufWriter::with_capacity(1 << 20, file),
        iolog,
        line: Vec::with_capacity(256),
        mapping,
        waiting: VecDeque::new(),
        start_ns: 0,
        ios: DirCounts::default(),
        bytes: DirCounts::default(),
        classes: Default::default(),
        left_out: 0,
    };
    let start_wall = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let header = CaptureHeader {
        schema: crate::model::schema::CAPTURE.into(),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        device: t.name.clone(),
        majmin: t.majmin.clone(),
        start: start_wall.clone(),
        host: procfs::hostname(&roots.proc),
        kernel: procfs::kernel_release(&roots.proc),
        source: "tracefs block_rq_issue/block_rq_complete/block_rq_requeue".into(),
    };
    let mut head = serde_json::to_vec(&header).unwrap_or_default();
    head.push(b'\n');
    sinks
        .file
        .write_all(&head)
        .map_err(io_fault(&spec.output))?;

    window(true);
    inst.enable(true).map_err(Fault::Failed)?;
    let stat0 = dev_stat(t);
    let start = tracefs::mono_ns();
    sinks.start_ns = start;
    let mut tr = Tracker::new(start, spec.max_events);
    let deadline = start + (spec.time_s * 1e9) as u64;
    let mut m = Merge {
        buf: Vec::new(),
        recs: Vec::new(),
    };
    let stopped_by = loop {
        std::thread::sleep(POLL.min(Duration::from_nanos(
            deadline.saturating_sub(tracefs::mono_ns()),
        )));
        let now = tracefs::mono_ns();
        m.step(&mut inst, &mut tr, &mut sinks, now.saturating_sub(SLACK_NS))?;
        if stop.load(Ordering::Relaxed) {
            break "interrupted";
        }
        if tr.full() {
            break "max_events";
        }
        if now >= deadline {
            break "time";
        }
    };
    let stat1 = dev_stat(t);
    let end = tracefs::mono_ns();
    tr.end_window(end);
    let db = window(false);
    // the recorded requests still in flight: their completions, for a second at most
    while tr.waiting() > 0 && tracefs::mono_ns() < end + GRACE_NS {
        std::thread::sleep(Duration::from_millis(20));
        let now = tracefs::mono_ns();
        m.step(&mut inst, &mut tr, &mut sinks, now.saturating_sub(SLACK_NS))?;
    }
    inst.enable(false).map_err(Fault::Failed)?;
    m.step(&mut inst, &mut tr, &mut sinks, u64::MAX)?;
    tr.finish(&mut m.recs);
    sinks.put(&mut m.recs)?;
    sinks.flush()?;
    if let Some(mp) = &mut sinks.mapping {
        warnings.append(&mut mp.warnings);
    }
    let events_lost = inst.lost();
    drop(inst);
    drop(tfs);

    let check = count_check(tr.window, stat_counts(&stat0, &stat1));
    if events_lost > 0 {
        warnings.push(format!(
            "the kernel's trace buffer lost {events_lost} events (read too late): the capture misses requests; a larger --buffer-kb (now {}) keeps more",
            spec.buffer_kb
        ));
    }
    if !check.agree {
        warnings.push(format!(
            "the capture and the device's own counts differ by {:.1} % (over {AGREE_PCT} %): captured {} reads, {} writes, {} discards, {} flushes; the device counted {}, {}, {}, {}",
            check.max_diff_pct,
            check.captured.read,
            check.captured.write,
            check.captured.discard,
            check.captured.flush,
            check.device.read,
            check.device.write,
            check.device.discard,
            check.device.flush
        ));
    }
    if tr.incomplete > 0 {
        warnings.push(format!(
            "{} recorded requests have no completion in the capture (no lat_ns): not completed {} s after the end, or their completion lost",
            tr.incomplete,
            GRACE_NS / 1_000_000_000
        ));
    }
    if let Some(w) = &sinks.iolog
        && w.left_out > 0
    {
        warnings.push(format!(
            "{} requests that are neither read, write, discard nor flush are not in the iolog",
            w.left_out
        ));
    }
    let summary = CaptureSummary {
        schema: crate::model::schema::CAPTURE_SUMMARY.into(),
        device: t.name.clone(),
        majmin: t.majmin.clone(),
        file: spec.output.display().to_string(),
        iolog: spec.write_iolog.as_ref().map(|p| p.display().to_string()),
        start: start_wall,
        duration_s: end.saturating_sub(start) as f64 / 1e9,
        ios: sinks.ios,
        bytes: sinks.bytes,
        check,
        events_lost,
        incomplete: tr.incomplete,
        unmatched_completions: tr.unmatched,
        empty_preflush_writes: tr.empty_preflush,
        requeued: tr.requeued,
        stopped_by: stopped_by.into(),
        classes: sinks.class_counts(),
        files_mapped: sinks.mapping.as_ref().map_or(0, |m| m.files),
        left_out: sinks.left_out,
        db,
        warnings,
    };
    let mut last = serde_json::to_vec(&summary).unwrap_or_default();
    last.push(b'\n');
    sinks
        .file
        .write_all(&last)
        .map_err(io_fault(&spec.output))?;
    let f = sinks
        .file
        .into_inner()
        .map_err(|e| io_fault(&spec.output)(e.into_error()))?;
    f.sync_all().map_err(io_fault(&spec.output))?;
    if let (Some(w), Some(p)) = (sinks.iolog, &spec.write_iolog) {
        let f = w.finish().map_err(io_fault(p))?;
        let f = f.into_inner().map_err(|e| io_fault(p)(e.into_error()))?;
        f.sync_all().map_err(io_fault(p))?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(device: &str) -> CaptureSpec {
        CaptureSpec {
            device: Some(device.into()),
            dir: None,
            time_s: 1.0,
            output: "x".into(),
            max_events: None,
            write_iolog: None,
            buffer_kb: 4096,
            pid: None,
            cgroup: None,
        }
    }

    /// A request-based disk is captured by its dev_t; a partition by its disk's; a device
    /// mapper device (no `mq`) is refused naming the devices under it; an unknown name is
    /// refused naming --device (a fixture sysfs).
    #[test]
    fn devices_resolve_to_the_disk_that_issues_requests() {
        let d = tempfile::tempdir().unwrap();
        let sys = d.path().join("sys");
        let mk = |rel: &str, dev: &str| {
            let p = sys.join(rel);
            fs::create_dir_all(&p).unwrap();
            fs::write(p.join("dev"), format!("{dev}\n")).unwrap();
            p
        };
        let loop3 = mk("devices/virtual/block/loop3", "7:3");
        fs::create_dir_all(loop3.join("mq")).unwrap();
        let part = mk("devices/virtual/block/loop3/loop3p1", "259:0");
        fs::write(part.join("partition"), "1\n").unwrap();
        let dm = mk("devices/virtual/block/dm-0", "253:0");
        fs::create_dir_all(dm.join("slaves/loop3")).unwrap();
        fs::create_dir_all(sys.join("class/block")).unwrap();
        for (name, at) in [("loop3", &loop3), ("loop3p1", &part), ("dm-0", &dm)] {
            std::os::unix::fs::symlink(at, sys.join("class/block").join(name)).unwrap();
        }
        let roots = Roots::fixture(d.path());
        let t = resolve(&spec("loop3"), &roots).ok().unwrap();
        assert_eq!(
            (t.name.as_str(), t.devt, t.partition),
            ("loop3", 7 << 20 | 3, None)
        );
        let t = resolve(&spec("loop3p1"), &roots).ok().unwrap();
        assert_eq!(
            (t.name.as_str(), t.partition.as_deref()),
            ("loop3", Some("loop3p1"))
        );
        let refused = |name: &str| match resolve(&spec(name), &roots) {
            Err(Fault::Usage(s)) => s,
            _ => panic!("{name} not refused"),
        };
        let why = refused("dm-0");
        assert!(
            why.starts_with("--device dm-0: ") && why.ends_with("(loop3)"),
            "{why}"
        );
        assert_eq!(refused("sdz"), "--device sdz: no such block device");
    }

    /// Within 1 % agree; a direction 2 % short does not; the captured `other` counts as writes.
    #[test]
    fn counts_agree_within_one_percent() {
        let c = |read, write, flush, other| DirCounts {
            read,
            write,
            discard: 0,
            flush,
            other,
        };
        let ok = count_check(c(1000, 995, 10, 5), c(1000, 1000, 10, 0));
        assert!(ok.agree && ok.max_diff_pct == 0.0, "{ok:?}");
        let near = count_check(c(991, 1000, 10, 0), c(1000, 1000, 10, 0));
        assert!(
            near.agree && (near.max_diff_pct - 0.9).abs() < 1e-9,
            "{near:?}"
        );
        let short = count_check(c(980, 1000, 10, 0), c(1000, 1000, 10, 0));
        assert!(
            !short.agree && (short.max_diff_pct - 2.0).abs() < 1e-9,
            "{short:?}"
        );
        let flush = count_check(c(0, 0, 1, 0), c(0, 0, 2, 0));
        assert!(!flush.agree && flush.max_diff_pct == 50.0, "{flush:?}");
    }
}
