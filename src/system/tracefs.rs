//! The kernel's block request events for `iolab capture` (docs/capture.md, docs/safety.md):
//! a private ftrace instance (`instances/iolab-<pid>`) with `block_rq_issue`,
//! `block_rq_complete` and `block_rq_requeue` enabled and filtered on one device, its clock
//! CLOCK_MONOTONIC (`mono`), read from each CPU's binary buffer (`per_cpu/cpuN/trace_pipe_raw`:
//! the ring buffer's pages, ns timestamps). Nothing global of tracing is changed: the instance
//! is removed when [`Instance`] is dropped (at the end, on error, after Ctrl-C); one left by an
//! iolab killed with SIGKILL is removed by the next capture ([`remove_stale`]). When tracefs is
//! not mounted, [`Tracefs::open`] mounts it at a private folder (`/run/iolab-tracefs-<pid>`),
//! unmounted when dropped.

use crate::measure::capture::{BlockEvent, EvKind};
use std::collections::HashMap;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The prefix of iolab's instances and private mounts.
pub const PREFIX: &str = "iolab-";
const EVENTS: [(&str, EvKind); 3] = [
    ("block_rq_issue", EvKind::Issue),
    ("block_rq_complete", EvKind::Complete(0)),
    ("block_rq_requeue", EvKind::Requeue),
];

/// The tracefs iolab uses: a mount found in mountinfo, or one made here (unmounted on drop).
pub struct Tracefs {
    pub root: PathBuf,
    mounted: Option<PathBuf>,
}

fn private_mount(pid: u32) -> PathBuf {
    PathBuf::from(format!("/run/{PREFIX}tracefs-{pid}"))
}

/// The first tracefs mount point of `mounts` (from /proc/self/mountinfo: mount point, type)
/// that has instances (`usable`) and is not another iolab's private mount: that one goes when
/// its iolab ends, under a capture that used it (two captures at once).
fn shared_mount(mounts: &[(String, String)], usable: impl Fn(&str) -> bool) -> Option<&str> {
    let private = format!("/run/{PREFIX}tracefs-");
    mounts
        .iter()
        .find(|(mp, t)| t == "tracefs" && !mp.starts_with(&private) && usable(mp))
        .map(|(mp, _)| mp.as_str())
}

impl Tracefs {
    /// The first shared tracefs mount of `mounts` ([`shared_mount`]), else tracefs mounted at
    /// a private folder.
    pub fn open(mounts: &[(String, String)]) -> Result<Tracefs, String> {
        if let Some(mp) = shared_mount(mounts, |mp| Path::new(mp).join("instances").is_dir()) {
            return Ok(Tracefs {
                root: PathBuf::from(mp),
                mounted: None,
            });
        }
        let dir = private_mount(std::process::id());
        fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let c = |s: &str| std::ffi::CString::new(s).unwrap_or_default();
        let target = c(&dir.to_string_lossy());
        let (src, ty) = (c("nodev"), c("tracefs"));
        // SAFETY: valid C strings; no data argument.
        let r = unsafe {
            libc::mount(
                src.as_ptr(),
                target.as_ptr(),
                ty.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            let _ = fs::remove_dir(&dir);
            return Err(format!(
                "tracefs is not mounted and cannot be mounted ({e}): the kernel needs CONFIG_FTRACE"
            ));
        }
        Ok(Tracefs {
            root: dir.clone(),
            mounted: Some(dir),
        })
    }

    /// Whether iolab mounted it (and unmounts it when dropped).
    pub fn mounted_here(&self) -> bool {
        self.mounted.is_some()
    }
}

fn unmount(dir: &Path) {
    let c = std::ffi::CString::new(dir.to_string_lossy().as_bytes()).unwrap_or_default();
    // SAFETY: a valid C string; a busy mount is detached instead.
    unsafe {
        if libc::umount2(c.as_ptr(), 0) != 0 {
            libc::umount2(c.as_ptr(), libc::MNT_DETACH);
        }
    }
    let _ = fs::remove_dir(dir);
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if let Some(d) = &self.mounted {
            unmount(d);
        }
    }
}

/// Whether process `pid` is a running iolab (its `comm`), from `proc`.
fn iolab_alive(proc: &Path, pid: u32) -> bool {
    fs::read_to_string(proc.join(pid.to_string()).join("comm")).is_ok_and(|c| c.trim() == "iolab")
}

/// Removes what a killed iolab left: instances `iolab-<pid>` of `tracefs` and private mounts
/// `/run/iolab-tracefs-<pid>` whose process is gone; what was removed, one line each.
pub fn remove_stale(tracefs: &Path, proc: &Path) -> Vec<String> {
    let mut gone = Vec::new();
    let pid_of = |name: &str, prefix: &str| name.strip_prefix(prefix)?.parse::<u32>().ok();
    let mine = std::process::id();
    if let Ok(rd) = fs::read_dir(tracefs.join("instances")) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = pid_of(&name, PREFIX) else {
                continue;
            };
            if pid == mine || iolab_alive(proc, pid) {
                continue;
            }
            if fs::remove_dir(e.path()).is_ok() {
                gone.push(format!("trace instance {name}"));
            }
        }
    }
    if let Ok(rd) = fs::read_dir("/run") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = pid_of(&name, &format!("{PREFIX}tracefs-")) else {
                continue;
            };
            if pid != mine && !iolab_alive(proc, pid) {
                unmount(&e.path());
                gone.push(format!("tracefs mount {}", e.path().display()));
            }
        }
    }
    gone
}

/// Where a field of an event's record is (`events/block/NAME/format`): offset, size.
type Fields = HashMap<String, (usize, usize)>;

/// The fields of an event's `format` file, by name.
pub fn parse_format(text: &str) -> (Option<u16>, Fields) {
    let mut id = None;
    let mut f = Fields::new();
    for l in text.lines() {
        let l = l.trim();
        if let Some(v) = l.strip_prefix("ID:") {
            id = v.trim().parse().ok();
        }
        let Some(rest) = l.strip_prefix("field:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let num = |p: Option<&str>, key: &str| {
            p.and_then(|s| s.strip_prefix(key))
                .and_then(|v| v.trim().parse::<usize>().ok())
        };
        let (Some(off), Some(size)) = (num(parts.next(), "offset:"), num(parts.next(), "size:"))
        else {
            continue;
        };
        let name = decl
            .rsplit(|c: char| c.is_whitespace() || c == '*')
            .next()
            .unwrap_or("")
            .split('[')
            .next()
            .unwrap_or("");
        f.insert(name.to_string(), (off, size));
    }
    (id, f)
}

/// One enabled event: its kind and where its fields are.
struct EventLayout {
    kind: EvKind,
    fields: Fields,
}

impl EventLayout {
    fn uint(&self, rec: &[u8], name: &str) -> Option<u64> {
        let &(off, size) = self.fields.get(name)?;
        let b = rec.get(off..off + size)?;
        Some(match size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_le_bytes(b.try_into().ok()?)),
            4 => u64::from(u32::from_le_bytes(b.try_into().ok()?)),
            8 => u64::from_le_bytes(b.try_into().ok()?),
            _ => return None,
        })
    }
    fn text(&self, rec: &[u8], name: &str) -> String {
        let Some(&(off, size)) = self.fields.get(name) else {
            return String::new();
        };
        let b = rec.get(off..off + size).unwrap_or(&[]);
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).into_owned()
    }
    fn decode(&self, ts_ns: u64, rec: &[u8]) -> Option<BlockEvent> {
        let kind = match self.kind {
            EvKind::Complete(_) => EvKind::Complete(self.uint(rec, "error")? as u32 as i32),
            k => k,
        };
        Some(BlockEvent {
            ts_ns,
            kind,
            dev: self.uint(rec, "dev")? as u32,
            sector: self.uint(rec, "sector")?,
            nr_sector: self.uint(rec, "nr_sector")? as u32,
            bytes: self.uint(rec, "bytes").unwrap_or(0) as u32,
            rwbs: self.text(rec, "rwbs"),
            pid: self.uint(rec, "common_pid").unwrap_or(0) as u32 as i32,
            comm: self.text(rec, "comm"),
        })
    }
}

/// The events of one ring-buffer page (`trace_pipe_raw`: `events/header_page` and
/// `header_event`: a u64 timestamp, a commit word whose low 30 bits are the data's length, the
/// data at 16; each event a 32-bit header of type_len (5 bits) and time delta (27 bits)).
fn parse_page(page: &[u8], layouts: &HashMap<u16, EventLayout>, out: &mut Vec<BlockEvent>) {
    let u32_at = |i: usize| {
        page.get(i..i + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    let Some(ts0) = page
        .get(0..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    else {
        return;
    };
    let commit = u32_at(8).unwrap_or(0) & 0x3fff_ffff;
    let data = &page[16.min(page.len())..];
    let len = (commit as usize).min(data.len());
    let data = &data[..len];
    let at = |i: usize| {
        data.get(i..i + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    let mut ts = ts0;
    let mut i = 0usize;
    while let Some(h) = at(i) {
        let type_len = h & 0x1f;
        let delta = u64::from(h >> 5);
        match type_len {
            29 => {
                // padding: a discarded event (its delta counts), or the rest of the page
                if delta == 0 {
                    break;
                }
                ts += delta;
                i += 4 + at(i + 4).unwrap_or(u32::MAX) as usize;
            }
            30 => {
                ts += (u64::from(at(i + 4).unwrap_or(0)) << 27) + delta;
                i += 8;
            }
            31 => {
                ts = (u64::from(at(i + 4).unwrap_or(0)) << 27) + delta;
                i += 8;
            }
            0 => {
                ts += delta;
                let Some(n) = at(i + 4) else { break };
                let n = (n as usize).saturating_sub(4);
                if let Some(rec) = data.get(i + 8..i + 8 + n) {
                    record(ts, rec, layouts, out);
                }
                i += 8 + ((n + 3) & !3);
            }
            n => {
                ts += delta;
                let n = n as usize * 4;
                if let Some(rec) = data.get(i + 4..i + 4 + n) {
                    record(ts, rec, layouts, out);
                }
                i += 4 + n;
            }
        }
    }
}

fn record(ts: u64, rec: &[u8], layouts: &HashMap<u16, EventLayout>, out: &mut Vec<BlockEvent>) {
    let Some(ty) = rec.get(0..2).map(|b| u16::from_le_bytes([b[0], b[1]])) else {
        return;
    };
    if let Some(e) = layouts.get(&ty).and_then(|l| l.decode(ts, rec)) {
        out.push(e);
    }
}

/// A private trace instance recording one device's block requests; removed on drop.
pub struct Instance {
    dir: PathBuf,
    layouts: HashMap<u16, EventLayout>,
    readers: Vec<File>,
    page: Vec<u8>,
}

fn write(p: &Path, v: &str) -> Result<(), String> {
    fs::write(p, v).map_err(|e| format!("{}: {e}", p.display()))
}

impl Instance {
    /// Makes `instances/iolab-<pid>` for device `devt` (the kernel's dev_t: major << 20 |
    /// minor), its events filtered on it and not yet enabled, with a buffer of `buffer_kb` KiB
    /// per CPU.
    pub fn create(t: &Tracefs, devt: u32, buffer_kb: u64) -> Result<Instance, String> {
        let dir = t
            .root
            .join("instances")
            .join(format!("{PREFIX}{}", std::process::id()));
        fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        // from here on, dropping it removes the instance
        let mut me = Instance {
            dir,
            layouts: HashMap::new(),
            readers: Vec::new(),
            page: Vec::new(),
        };
        write(&me.dir.join("trace_clock"), "mono")?;
        write(&me.dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
        for (name, kind) in EVENTS {
            let ev = me.dir.join("events/block").join(name);
            let text = fs::read_to_string(ev.join("format")).map_err(|e| {
                format!("the kernel has no block/{name} trace event ({e}): it needs CONFIG_BLK_DEV_IO_TRACE or tracepoints")
            })?;
            let (Some(id), fields) = parse_format(&text) else {
                return Err(format!("block/{name}: no ID in its format"));
            };
            me.layouts.insert(id, EventLayout { kind, fields });
            write(&ev.join("filter"), &format!("dev == {devt}"))?;
        }
        let sub_kb: usize = fs::read_to_string(me.dir.join("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(4);
        me.page = vec![0u8; sub_kb * 1024];
        let mut cpus: Vec<(u32, PathBuf)> = fs::read_dir(me.dir.join("per_cpu"))
            .map_err(|e| format!("{}/per_cpu: {e}", me.dir.display()))?
            .flatten()
            .filter_map(|e| {
                let n = e
                    .file_name()
                    .to_string_lossy()
                    .strip_prefix("cpu")?
                    .parse()
                    .ok()?;
                Some((n, e.path()))
            })
            .collect();
        cpus.sort();
        for (_, p) in cpus {
            if let Ok(f) = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(p.join("trace_pipe_raw"))
            {
                me.readers.push(f);
            }
        }
        if me.readers.is_empty() {
            return Err(format!("{}: no per-CPU buffer to read", me.dir.display()));
        }
        Ok(me)
    }

    /// The instance's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Turns the events on (`on`) or off.
    pub fn enable(&self, on: bool) -> Result<(), String> {
        for (name, _) in EVENTS {
            write(
                &self.dir.join("events/block").join(name).join("enable"),
                if on { "1" } else { "0" },
            )?;
        }
        Ok(())
    }

    /// Reads every page each CPU's buffer holds now into `out` (per CPU in time order; the
    /// caller merges the CPUs).
    pub fn read(&mut self, out: &mut Vec<BlockEvent>) -> Result<(), String> {
        for f in &mut self.readers {
            loop {
                match f.read(&mut self.page) {
                    Ok(0) => break,
                    Ok(n) => parse_page(&self.page[..n], &self.layouts, out),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // an offline CPU
                    Err(e) if e.raw_os_error() == Some(libc::ENODEV) => break,
                    Err(e) => return Err(format!("reading the trace buffer: {e}")),
                }
            }
        }
        Ok(())
    }

    /// Events the buffers lost: overwritten before they were read, or dropped
    /// (`per_cpu/cpuN/stats`: overrun, commit overrun, dropped events).
    pub fn lost(&self) -> u64 {
        let mut n = 0;
        let Ok(rd) = fs::read_dir(self.dir.join("per_cpu")) else {
            return 0;
        };
        for e in rd.flatten() {
            let s = fs::read_to_string(e.path().join("stats")).unwrap_or_default();
            for l in s.lines() {
                if let Some((k, v)) = l.split_once(':')
                    && matches!(k.trim(), "overrun" | "commit overrun" | "dropped events")
                {
                    n += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
        n
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.enable(false);
        self.readers.clear();
        // the kernel refuses while a file of it is still open elsewhere: a few tries
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!(
            "iolab: warning: could not remove the trace instance {} (the next capture removes it)",
            self.dir.display()
        );
    }
}

/// CLOCK_MONOTONIC now, ns: the instance's clock (`mono`).
pub fn mono_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the struct.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another iolab's private mount is passed over (it is unmounted when that iolab ends);
    /// the shared one is taken; none: a mount of its own.
    #[test]
    fn another_iolabs_private_tracefs_is_not_used() {
        let m = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let mounts = m(&[
            ("/run/iolab-tracefs-1384", "tracefs"),
            ("/sys/kernel/debug", "debugfs"),
            ("/sys/kernel/tracing", "tracefs"),
        ]);
        assert_eq!(shared_mount(&mounts, |_| true), Some("/sys/kernel/tracing"));
        assert_eq!(shared_mount(&mounts[..2], |_| true), None);
        assert_eq!(shared_mount(&mounts, |_| false), None);
    }

    const ISSUE: &str = "name: block_rq_issue\nID: 2104\nformat:\n\
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;\n\
	field:int common_pid;	offset:4;	size:4;	signed:1;\n\
	field:dev_t dev;	offset:8;	size:4;	signed:0;\n\
	field:sector_t sector;	offset:16;	size:8;	signed:0;\n\
	field:unsigned int nr_sector;	offset:24;	size:4;	signed:0;\n\
	field:unsigned int bytes;	offset:28;	size:4;	signed:0;\n\
	field:char rwbs[10];	offset:34;	size:10;	signed:0;\n\
	field:char comm[16];	offset:44;	size:16;	signed:0;\n\
	field:__data_loc char[] cmd;	offset:60;	size:4;	signed:0;\n";

    fn rec(ty: u16, pid: i32, dev: u32, sector: u64, nr: u32, rwbs: &str, comm: &str) -> Vec<u8> {
        let mut r = vec![0u8; 64];
        r[0..2].copy_from_slice(&ty.to_le_bytes());
        r[4..8].copy_from_slice(&pid.to_le_bytes());
        r[8..12].copy_from_slice(&dev.to_le_bytes());
        r[16..24].copy_from_slice(&sector.to_le_bytes());
        r[24..28].copy_from_slice(&nr.to_le_bytes());
        r[28..32].copy_from_slice(&(nr * 512).to_le_bytes());
        r[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        r[44..44 + comm.len()].copy_from_slice(comm.as_bytes());
        r
    }

    /// A page as the ring buffer lays it out: a small event (type_len 16: 64 bytes), a time
    /// extend, a discarded event (padding), a large event (type_len 0 with its length).
    #[test]
    fn a_ring_buffer_page_decodes_with_its_timestamps() {
        let (id, fields) = parse_format(ISSUE);
        assert_eq!(id, Some(2104));
        assert_eq!(fields["rwbs"], (34, 10));
        assert_eq!(fields["comm"], (44, 16));
        let mut layouts = HashMap::new();
        layouts.insert(
            2104,
            EventLayout {
                kind: EvKind::Issue,
                fields,
            },
        );
        let mut data = Vec::new();
        let hdr = |type_len: u32, delta: u32| (type_len | (delta << 5)).to_le_bytes();
        data.extend_from_slice(&hdr(16, 10));
        data.extend(rec(2104, 77, 7 << 20 | 3, 2048, 32, "WS", "fio"));
        data.extend_from_slice(&hdr(30, 5));
        data.extend_from_slice(&1u32.to_le_bytes()); // + 1 << 27
        data.extend_from_slice(&hdr(29, 3)); // discarded: 4 + 8 bytes
        data.extend_from_slice(&12u32.to_le_bytes()); // its length after the header
        data.extend_from_slice(&[0u8; 8]);
        data.extend_from_slice(&hdr(0, 2));
        data.extend_from_slice(&(64u32 + 4).to_le_bytes());
        data.extend(rec(2104, 78, 7 << 20 | 3, 4096, 8, "R", "kworker/0:1"));
        data.extend_from_slice(&hdr(29, 0)); // the rest of the page
        let mut page = vec![0u8; 4096];
        page[0..8].copy_from_slice(&1_000_000u64.to_le_bytes());
        let commit = data.len() as u64 | (1 << 31); // a missed-events flag
        page[8..16].copy_from_slice(&commit.to_le_bytes());
        page[16..16 + data.len()].copy_from_slice(&data);
        let mut out = Vec::new();
        parse_page(&page, &layouts, &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(
            (
                out[0].ts_ns,
                out[0].pid,
                out[0].dev,
                out[0].sector,
                out[0].nr_sector
            ),
            (1_000_010, 77, 7 << 20 | 3, 2048, 32)
        );
        assert_eq!((out[0].rwbs.as_str(), out[0].comm.as_str()), ("WS", "fio"));
        assert_eq!(out[0].bytes, 16384);
        assert_eq!(out[1].ts_ns, 1_000_010 + (1 << 27) + 5 + 3 + 2);
        assert_eq!(
            (out[1].rwbs.as_str(), out[1].comm.as_str(), out[1].sector),
            ("R", "kworker/0:1", 4096)
        );
    }
}
