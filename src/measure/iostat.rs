//! Device and CPU figures from /proc/diskstats and /proc/stat, computed like sysstat's `iostat -x`
//! (docs/iostat.md): the sampler that runs beside every workload, and `iolab iostat`.

pub use crate::model::device::{CpuPct, DeviceReport, Iostat, Sample};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub use super::wake::StopSignal;
use std::time::{Duration, Instant};

/// One line of /proc/diskstats. Kernels print 14 fields (before 4.18), 18 (with discards) or
/// 20 (with flushes, 5.5+); the missing ones are None.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStat {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks_ms: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    pub dc_ios: Option<u64>,
    pub dc_merges: Option<u64>,
    pub dc_sectors: Option<u64>,
    pub dc_ticks_ms: Option<u64>,
    pub fl_ios: Option<u64>,
    pub fl_ticks_ms: Option<u64>,
}

/// Parses one /proc/diskstats line into (name, stats).
pub fn parse_line(line: &str) -> Option<(String, DiskStat)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 14 {
        return None;
    }
    let n = |i: usize| -> Option<u64> { f.get(i)?.parse().ok() };
    Some((
        f[2].to_string(),
        DiskStat {
            rd_ios: n(3)?,
            rd_merges: n(4)?,
            rd_sectors: n(5)?,
            rd_ticks_ms: n(6)?,
            wr_ios: n(7)?,
            wr_merges: n(8)?,
            wr_sectors: n(9)?,
            wr_ticks_ms: n(10)?,
            in_flight: n(11)?,
            io_ticks_ms: n(12)?,
            time_in_queue_ms: n(13)?,
            dc_ios: n(14),
            dc_merges: n(15),
            dc_sectors: n(16),
            dc_ticks_ms: n(17),
            fl_ios: n(18),
            fl_ticks_ms: n(19),
        },
    ))
}

pub fn parse_diskstats(text: &str) -> BTreeMap<String, DiskStat> {
    text.lines().filter_map(parse_line).collect()
}

pub fn read_diskstats(proc_root: &Path) -> BTreeMap<String, DiskStat> {
    std::fs::read_to_string(proc_root.join("diskstats"))
        .map(|s| parse_diskstats(&s))
        .unwrap_or_default()
}

/// A counter difference that survives wrap-around: counters are `unsigned long` in the kernel,
/// 32 bits wide on 32-bit kernels; a counter that went backwards wrapped once.
pub fn delta(new: u64, old: u64) -> u64 {
    if new >= old {
        new - old
    } else if old <= u32::MAX as u64 {
        new + (1u64 << 32) - old
    } else {
        new.wrapping_sub(old)
    }
}

fn per(x: u64, secs: f64) -> f64 {
    if secs > 0.0 { x as f64 / secs } else { 0.0 }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// iostat -x over `secs` seconds between two readings (sysstat's definitions).
pub fn compute(old: &DiskStat, new: &DiskStat, secs: f64) -> Iostat {
    let d = |n: u64, o: u64| delta(n, o);
    let rd = d(new.rd_ios, old.rd_ios);
    let wr = d(new.wr_ios, old.wr_ios);
    let rm = d(new.rd_merges, old.rd_merges);
    let wm = d(new.wr_merges, old.wr_merges);
    let rs = d(new.rd_sectors, old.rd_sectors);
    let ws = d(new.wr_sectors, old.wr_sectors);
    let rt = d(new.rd_ticks_ms, old.rd_ticks_ms);
    let wt = d(new.wr_ticks_ms, old.wr_ticks_ms);
    let io_ticks = d(new.io_ticks_ms, old.io_ticks_ms);
    let tiq = d(new.time_in_queue_ms, old.time_in_queue_ms);
    let opt = |n: Option<u64>, o: Option<u64>| n.zip(o).map(|(n, o)| d(n, o));
    let dc = opt(new.dc_ios, old.dc_ios);
    let dcs = opt(new.dc_sectors, old.dc_sectors);
    let dct = opt(new.dc_ticks_ms, old.dc_ticks_ms);
    let fl = opt(new.fl_ios, old.fl_ios);
    let flt = opt(new.fl_ticks_ms, old.fl_ticks_ms);
    let ms = secs * 1000.0;
    let nr = rd + wr + dc.unwrap_or(0);
    Iostat {
        r_s: per(rd, secs),
        w_s: per(wr, secs),
        rkb_s: per(rs, secs) / 2.0,
        wkb_s: per(ws, secs) / 2.0,
        rrqm_s: per(rm, secs),
        wrqm_s: per(wm, secs),
        rrqm_pct: 100.0 * ratio(rm as f64, (rm + rd) as f64),
        wrqm_pct: 100.0 * ratio(wm as f64, (wm + wr) as f64),
        r_await_ms: ratio(rt as f64, rd as f64),
        w_await_ms: ratio(wt as f64, wr as f64),
        aqu_sz: ratio(tiq as f64, ms),
        rareq_sz_kb: ratio(rs as f64 / 2.0, rd as f64),
        wareq_sz_kb: ratio(ws as f64 / 2.0, wr as f64),
        svctm_ms: ratio(io_ticks as f64, nr as f64),
        util_pct: (100.0 * ratio(io_ticks as f64, ms)).min(100.0),
        d_s: dc.map(|x| per(x, secs)),
        dkb_s: dcs.map(|x| per(x, secs) / 2.0),
        d_await_ms: dc.zip(dct).map(|(n, t)| ratio(t as f64, n as f64)),
        f_s: fl.map(|x| per(x, secs)),
        f_await_ms: fl.zip(flt).map(|(n, t)| ratio(t as f64, n as f64)),
        in_flight: new.in_flight,
    }
}

/// The "cpu" line of /proc/stat, in USER_HZ ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuStat {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

pub fn parse_cpu(stat: &str) -> Option<CpuStat> {
    let l = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = l
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let g = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuStat {
        user: g(0),
        nice: g(1),
        system: g(2),
        idle: g(3),
        iowait: g(4),
        irq: g(5),
        softirq: g(6),
        steal: g(7),
        guest: g(8),
        guest_nice: g(9),
    })
}

pub fn read_cpu(proc_root: &Path) -> CpuStat {
    std::fs::read_to_string(proc_root.join("stat"))
        .ok()
        .and_then(|s| parse_cpu(&s))
        .unwrap_or_default()
}

/// Like iostat: guest time is taken out of user and nice; %system includes irq and softirq.
pub fn cpu_pct(o: &CpuStat, n: &CpuStat) -> CpuPct {
    let d = |a: u64, b: u64| delta(a, b) as f64;
    let user = d(n.user, o.user) - d(n.guest, o.guest);
    let nice = d(n.nice, o.nice) - d(n.guest_nice, o.guest_nice);
    let system = d(n.system, o.system) + d(n.irq, o.irq) + d(n.softirq, o.softirq);
    let idle = d(n.idle, o.idle);
    let iowait = d(n.iowait, o.iowait);
    let steal = d(n.steal, o.steal);
    let guest = d(n.guest, o.guest) + d(n.guest_nice, o.guest_nice);
    let total = (user + nice + system + idle + iowait + steal + guest).max(1.0);
    let p = |x: f64| 100.0 * x.max(0.0) / total;
    CpuPct {
        user: p(user),
        nice: p(nice),
        system: p(system),
        iowait: p(iowait),
        steal: p(steal),
        idle: p(idle),
    }
}

/// One reading of the watched devices and the CPU.
#[derive(Debug, Clone)]
pub struct Reading {
    pub at: Instant,
    pub disks: BTreeMap<String, DiskStat>,
    pub cpu: CpuStat,
}

pub fn reading(proc_root: &Path, devices: &[String]) -> Reading {
    let all = read_diskstats(proc_root);
    Reading {
        at: Instant::now(),
        disks: all
            .into_iter()
            .filter(|(k, _)| devices.is_empty() || devices.contains(k))
            .collect(),
        cpu: read_cpu(proc_root),
    }
}

pub fn between(a: &Reading, b: &Reading, t0: Instant) -> Sample {
    let secs = b.at.saturating_duration_since(a.at).as_secs_f64();
    let devices = b
        .disks
        .iter()
        .filter_map(|(k, n)| a.disks.get(k).map(|o| (k.clone(), compute(o, n, secs))))
        .collect();
    Sample {
        t_s: b.at.saturating_duration_since(t0).as_secs_f64(),
        dur_s: secs,
        devices,
        cpu: cpu_pct(&a.cpu, &b.cpu),
    }
}

/// What each device completed between two readings, as the kernel counts it (/proc/diskstats;
/// sectors of 512 bytes): the `--metrics-listen` device counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceCounts {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// None on kernels before 4.18 (no discard fields).
    pub discards: Option<u64>,
    pub discard_bytes: Option<u64>,
    /// None on kernels before 5.5 (no flush fields).
    pub flushes: Option<u64>,
}

/// Each device's counts from reading `a` to reading `b` (a device in both).
pub fn counts_between(a: &Reading, b: &Reading) -> BTreeMap<String, DeviceCounts> {
    let opt = |n: Option<u64>, o: Option<u64>| Some(delta(n?, o?));
    b.disks
        .iter()
        .filter_map(|(k, n)| {
            let o = a.disks.get(k)?;
            Some((
                k.clone(),
                DeviceCounts {
                    reads: delta(n.rd_ios, o.rd_ios),
                    writes: delta(n.wr_ios, o.wr_ios),
                    read_bytes: delta(n.rd_sectors, o.rd_sectors) * 512,
                    write_bytes: delta(n.wr_sectors, o.wr_sectors) * 512,
                    discards: opt(n.dc_ios, o.dc_ios),
                    discard_bytes: opt(n.dc_sectors, o.dc_sectors).map(|s| s * 512),
                    flushes: opt(n.fl_ios, o.fl_ios),
                },
            ))
        })
        .collect()
}

/// A last, partial sampling interval shorter than this is not part of the series.
pub const SHORTEST_LAST: Duration = Duration::from_millis(200);

/// Samples the devices every `interval` from `start` until `stop` is set; returns the report.
/// One read of /proc/diskstats and /proc/stat per interval, nothing per I/O. Between readings
/// it sleeps on `stop` (no polling): it wakes at the next interval, or at once on the stop.
pub fn sample_until(
    proc_root: &Path,
    devices: &[String],
    interval: Duration,
    start: Instant,
    stop: &StopSignal,
) -> DeviceReport {
    sample_until_with(proc_root, devices, interval, start, stop, &|_, _| {})
}

/// What the sampler hands on at each reading (`--metrics-listen`): the interval just taken
/// (None at the first reading, and for a last interval too short for the series), and each
/// device's counts from the first reading to this one.
pub type OnSample<'a> = &'a (dyn Fn(Option<&Sample>, &BTreeMap<String, DeviceCounts>) + Sync);

/// [`sample_until`], handing each reading to `on_sample` as it is taken (`--metrics-listen`).
pub fn sample_until_with(
    proc_root: &Path,
    devices: &[String],
    interval: Duration,
    start: Instant,
    stop: &StopSignal,
    on_sample: OnSample,
) -> DeviceReport {
    stop.wait_until(start);
    let first = reading(proc_root, devices);
    on_sample(None, &counts_between(&first, &first));
    let mut prev = first.clone();
    let mut series = Vec::new();
    let mut next = first.at + interval;
    loop {
        let done = stop.wait_until(next);
        let r = reading(proc_root, devices);
        let since = r.at.saturating_duration_since(prev.at);
        if since >= Duration::from_millis(50) || series.is_empty() || done {
            // the last, partial interval: its rates and %util are per its real length
            // (dur_s); one shorter than SHORTEST_LAST is left out of the series (a few
            // ms of jiffy-rounded ticks are noise), the summary still covers it
            let counts = counts_between(&first, &r);
            if !done || series.is_empty() || since >= SHORTEST_LAST {
                let sample = between(&prev, &r, first.at);
                on_sample(Some(&sample), &counts);
                series.push(sample);
            } else {
                on_sample(None, &counts);
            }
            prev = r;
        }
        next += interval;
        if done {
            break;
        }
    }
    let summary = between(&first, &prev, first.at);
    DeviceReport {
        devices: devices.to_vec(),
        interval_s: interval.as_secs_f64(),
        summary,
        timeseries: series,
    }
}

/// Runs `f` with the device sampler beside it (from now until `f` returns).
pub fn with_sampler<T>(
    proc_root: &Path,
    devices: &[String],
    interval: Duration,
    f: impl FnOnce() -> T,
) -> (T, Option<DeviceReport>) {
    if devices.is_empty() {
        return (f(), None);
    }
    let done = StopSignal::new();
    std::thread::scope(|s| {
        let h = s.spawn(|| sample_until(proc_root, devices, interval, Instant::now(), &done));
        let r = f();
        done.set();
        (r, Some(h.join().expect("sampler panicked")))
    })
}

pub use crate::model::env::stack_devices;

#[cfg(test)]
mod tests {
    use super::*;

    // Real lines from three kernel generations.
    const L14: &str =
        "   8       0 sda 127571 4375 5781914 125744 37398 64297 3024248 416656 0 146064 542452";
    const L18: &str = " 259       0 nvme0n1 1033914 143 60383902 201347 2186302 1307870 76733882 1726104 0 1019448 1991640 0 0 0 0";
    const L20: &str = "   7       0 loop0 1651732 14 52853415 135353 17343 6227 18169797 11061 0 97180 147046 51 10 40398692 53 842 577";

    #[test]
    fn parses_all_kernel_field_counts() {
        let (n, a) = parse_line(L14).unwrap();
        assert_eq!(n, "sda");
        assert_eq!(
            (a.rd_ios, a.wr_sectors, a.time_in_queue_ms),
            (127571, 3024248, 542452)
        );
        assert_eq!((a.dc_ios, a.fl_ios), (None, None));
        let (n, b) = parse_line(L18).unwrap();
        assert_eq!(n, "nvme0n1");
        assert_eq!(
            (b.dc_ios, b.dc_ticks_ms, b.fl_ios),
            (Some(0), Some(0), None)
        );
        let (_, c) = parse_line(L20).unwrap();
        assert_eq!(
            (c.dc_ios, c.dc_sectors, c.fl_ios, c.fl_ticks_ms),
            (Some(51), Some(40398692), Some(842), Some(577))
        );
        assert!(parse_line("garbage line").is_none());
        assert_eq!(parse_diskstats(&format!("{L14}\n{L20}\n")).len(), 2);
    }

    #[test]
    fn sampler_ends_on_its_stop_not_at_its_next_interval() {
        // The interval is a year: a sampler that waited for its next reading, or for a start a
        // year away, would never return (the test would hang, not pass). Nothing here depends
        // on how fast the machine is.
        let year = Duration::from_secs(365 * 86_400);
        let stop = StopSignal::new();
        let t0 = Instant::now();
        let rep = std::thread::scope(|s| {
            let h = s.spawn(|| sample_until(Path::new("/proc"), &[], year, t0, &stop));
            stop.set();
            h.join().unwrap()
        });
        // the only, partial interval stays in the series (nothing else would describe the run),
        // and it ends with the stop, far short of the interval
        assert_eq!(rep.timeseries.len(), 1);
        assert!(rep.timeseries[0].dur_s < year.as_secs_f64() / 2.0);
        assert_eq!(rep.interval_s, year.as_secs_f64());
        // a stop set before a start a year away: no wait for the start either
        let stop = StopSignal::new();
        stop.set();
        let rep = sample_until(Path::new("/proc"), &[], year, Instant::now() + year, &stop);
        assert_eq!(rep.timeseries.len(), 1);
    }

    #[test]
    fn counter_wrap() {
        assert_eq!(delta(10, 4), 6);
        // a 32-bit counter wrapped
        assert_eq!(delta(5, u32::MAX as u64 - 4), 10);
        // a 64-bit counter wrapped
        assert_eq!(delta(3, u64::MAX - 1), 5);
        let mut o = DiskStat {
            rd_ios: u32::MAX as u64 - 99,
            ..Default::default()
        };
        o.rd_ticks_ms = 0;
        let n = DiskStat {
            rd_ios: 100,
            rd_ticks_ms: 400,
            ..Default::default()
        };
        let s = compute(&o, &n, 1.0);
        assert!((s.r_s - 200.0).abs() < 1e-9);
        assert!((s.r_await_ms - 2.0).abs() < 1e-9);
    }

    #[test]
    fn figures_match_a_hand_checked_interval() {
        // Over 2 s: 1000 reads of 8 sectors (4 KiB) with 200 merged, 400 writes of 32 sectors
        // (16 KiB) with 100 merged; read ticks 3000 ms, write ticks 2000 ms; busy 1500 ms;
        // weighted time 5000 ms; 20 flushes taking 60 ms.
        let o = DiskStat {
            fl_ios: Some(0),
            fl_ticks_ms: Some(0),
            dc_ios: Some(0),
            dc_sectors: Some(0),
            dc_ticks_ms: Some(0),
            dc_merges: Some(0),
            ..Default::default()
        };
        let n = DiskStat {
            rd_ios: 1000,
            rd_merges: 200,
            rd_sectors: 8000,
            rd_ticks_ms: 3000,
            wr_ios: 400,
            wr_merges: 100,
            wr_sectors: 12800,
            wr_ticks_ms: 2000,
            in_flight: 3,
            io_ticks_ms: 1500,
            time_in_queue_ms: 5000,
            dc_ios: Some(0),
            dc_merges: Some(0),
            dc_sectors: Some(0),
            dc_ticks_ms: Some(0),
            fl_ios: Some(20),
            fl_ticks_ms: Some(60),
        };
        let s = compute(&o, &n, 2.0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(s.r_s, 500.0) && close(s.w_s, 200.0));
        assert!(close(s.rkb_s, 2000.0) && close(s.wkb_s, 3200.0));
        assert!(close(s.rrqm_s, 100.0) && close(s.wrqm_s, 50.0));
        assert!(close(s.rrqm_pct, 100.0 * 200.0 / 1200.0) && close(s.wrqm_pct, 20.0));
        assert!(close(s.r_await_ms, 3.0) && close(s.w_await_ms, 5.0));
        assert!(close(s.aqu_sz, 2.5));
        assert!(close(s.rareq_sz_kb, 4.0) && close(s.wareq_sz_kb, 16.0));
        assert!(close(s.svctm_ms, 1500.0 / 1400.0));
        assert!(close(s.util_pct, 75.0));
        assert_eq!(s.f_s, Some(10.0));
        assert_eq!(s.f_await_ms, Some(3.0));
        assert_eq!(s.in_flight, 3);
    }

    #[test]
    fn cpu_percentages_follow_iostat() {
        let o = parse_cpu("cpu  100 0 50 800 50 0 0 0 0 0\n").unwrap();
        let n = parse_cpu("cpu  200 10 100 1600 80 5 5 10 20 0\n").unwrap();
        let c = cpu_pct(&o, &n);
        // deltas: user 100 (of which guest 20 -> 80), nice 10, system 50+5+5 = 60, idle 800,
        // iowait 30, steal 10, guest 20: total 1010
        let t = 1010.0;
        assert!((c.user - 8000.0 / t).abs() < 1e-9);
        assert!((c.system - 6000.0 / t).abs() < 1e-9);
        assert!((c.iowait - 3000.0 / t).abs() < 1e-9);
        assert!((c.idle - 80000.0 / t).abs() < 1e-9);
        assert!((c.steal - 1000.0 / t).abs() < 1e-9);
    }

    #[test]
    fn device_counts_are_the_kernel_counters_differences() {
        let at = |l: &str| {
            let (n, d) = parse_line(l).unwrap();
            Reading {
                at: Instant::now(),
                disks: [(n, d)].into_iter().collect(),
                cpu: CpuStat::default(),
            }
        };
        let a = at(L20);
        let b = at(
            "   7       0 loop0 1651932 14 52854215 135353 17443 6227 18170597 11061 0 97180 147046 61 10 40398792 53 845 577",
        );
        let c = &counts_between(&a, &b)["loop0"];
        assert_eq!((c.reads, c.writes), (200, 100));
        assert_eq!((c.read_bytes, c.write_bytes), (800 * 512, 800 * 512));
        assert_eq!(
            (c.discards, c.discard_bytes, c.flushes),
            (Some(10), Some(100 * 512), Some(3))
        );
        // a kernel without the discard and flush fields: none
        let old = at(L14);
        let c = &counts_between(&old, &old)["sda"];
        assert_eq!((c.reads, c.discards, c.flushes), (0, None, None));
    }
}
