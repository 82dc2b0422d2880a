//! Warnings for results that would measure something other than the device (page cache, eviction,
//! link speed, unsynced writes, errors): one `Warning` per finding, attached to the cell.

use crate::model::job::{FileSetSpec, Job, Layout};
use crate::model::run::{CellResult, RunEnv, Warning};
use crate::model::units::{fmt_ns, human_bytes};

/// Residency above this percentage after eviction counts as a failed eviction.
pub const EVICT_FAIL_PCT: f64 = 1.0;

/// A schedule lag p99 above this share of the latency p99 means the pacer, not the device, shapes
/// the tail (`pacing_lag`).
pub const PACING_LAG_SHARE: f64 = 0.10;
/// ...unless it is below this (ns): a few µs of loop and clock overhead are always there.
pub const PACING_LAG_FLOOR_NS: u64 = 5_000;

/// Warnings about one measured cell.
pub fn check_cell(
    job: &Job,
    set: &FileSetSpec,
    env: &RunEnv,
    link_bps: Option<f64>,
    cell: &CellResult,
    warm: bool,
) -> Vec<Warning> {
    let mut w = Vec::new();
    let caps = job.engine.caps();
    let buffered = !job.direct || caps.always_buffered();
    if !caps.does_io() {
        return w;
    }
    if caps.queues_only_direct && !job.direct {
        w.push(Warning::new(
            &format!("{}_buffered", caps.name),
            format!(
                "{}: --engine {} without --direct: on buffered files the kernel does each I/O inside io_submit, so --iodepth {} keeps nothing in flight and the figures are those of sync (pread/pwrite) with extra system calls. Use --direct (O_DIRECT), or --engine io_uring for queued buffered I/O",
                job.mode, caps.name, job.iodepth
            ),
        ));
    }
    let total_bytes = set.total_bytes;
    w.extend(layout_warnings(job, set, env, cell));
    if buffered
        && let Some(mem) = env.mem_total_bytes
        && total_bytes <= mem
    {
        w.push(Warning::new(
            "page_cache",
            format!(
                "{}: the working set ({}) fits in RAM ({}) and the run is buffered: results will measure the page cache, not the device. Use --direct, or a --size larger than RAM",
                job.mode,
                human_bytes(total_bytes as f64),
                human_bytes(mem as f64)
            ),
        ));
    }
    if !warm && cell.cache_resident_pct_at_start > EVICT_FAIL_PCT {
        w.push(Warning::new(
            "eviction_failed",
            format!(
                "{}: {:.1}% of the file set was still in the page cache after eviction (fsync + POSIX_FADV_DONTNEED); reads will partly measure memory ({} cannot drop its cache this way?)",
                job.mode, cell.cache_resident_pct_at_start, env.fs_type
            ),
        ));
    }
    let moved = cell.results.read.bytes_per_sec + cell.results.write.bytes_per_sec;
    if let (Some(bps), Some(link)) = (link_bps, env.device_link.as_ref())
        && !buffered
        && moved > bps * 1.05
    {
        w.push(Warning::new(
            "above_link_speed",
            format!(
                "{}: {}/s is more than the device's link ({}, at most {}/s) can carry: a cache above the device served the I/O",
                job.mode,
                human_bytes(moved),
                link,
                human_bytes(bps)
            ),
        ));
    }
    if env.device_rotational == Some(true) && job.mode.is_random() && !buffered {
        let iops = cell.results.read.iops + cell.results.write.iops;
        // A 15k rpm disk does ~200 random IOPS per spindle at queue depth 1; 2000 per device
        // needs a large array or a cache.
        if iops > 2000.0 * job.iodepth.max(1) as f64 * job.threads as f64 {
            w.push(Warning::new(
                "implausible_for_rotational",
                format!("{}: {:.0} random IOPS is implausible for a device that reports itself rotational at this concurrency: a cache (controller, hypervisor, or a virtual disk that only claims to be rotational) is answering", job.mode, iops),
            ));
        }
    }
    let synced = job.syncs_while_running() || job.open_flags.sync || job.open_flags.dsync;
    if job.mode.issues_writes() && buffered && !synced {
        w.push(Warning::new(
            "writes_not_synced",
            format!("{}: a write mode without --direct and without fsync (--fsync-freq 0, no --fsync-every): writes land in the page cache and the figures say little about the device", job.mode),
        ));
    }
    // What iolab issued against what the device under the filesystem saw.
    if let Some(d) = &cell.device
        && let Some(name) = d.devices.first()
        && let Some(x) = d.summary.devices.get(name)
    {
        let (rd, wr) = (cell.results.read.iops, cell.results.write.iops);
        // the mean size of iolab's reads (a mix or range of block sizes has several)
        let r = &cell.results.read;
        let bs_kb = if r.ops > 0 {
            r.bytes as f64 / r.ops as f64 / 1024.0
        } else {
            job.bs_bytes as f64 / 1024.0
        };
        if rd > 50.0 && x.r_s < 0.5 * rd {
            w.push(Warning::new(
                "device_fewer_reads",
                format!("{}: the device {name} saw {:.0} reads/s while iolab completed {:.0}: a cache above the device (page cache, or the device's own) served the rest", job.mode, x.r_s, rd),
            ));
        }
        if rd > 50.0 && x.r_s > 0.0 && x.rareq_sz_kb > 1.5 * bs_kb {
            w.push(Warning::new(
                "device_larger_reads",
                format!("{}: the device's average read was {:.1} kB for iolab's {bs_kb:.0} kB reads: requests were merged or read ahead", job.mode, x.rareq_sz_kb),
            ));
        }
        if wr > 50.0 && x.w_s < 0.5 * wr && buffered {
            w.push(Warning::new(
                "device_fewer_writes",
                format!("{}: the device {name} saw {:.0} writes/s while iolab completed {:.0}: the page cache absorbed them and writes them back later", job.mode, x.w_s, wr),
            ));
        }
    }
    if let Some(d) = &cell.device {
        w.extend(device_counts(job, buffered, d, cell));
        w.extend(cpu_saturated(job, &d.summary.cpu));
        w.extend(above_throttle(job, env, d, cell));
    }
    if let Some(x) = not_steady(job, cell) {
        w.push(x);
    }
    if let Some(x) = pacing_lag(job, cell) {
        w.push(x);
    }
    let errs = cell.total_errors();
    if errs > 0 {
        let list: Vec<String> = cell
            .errors
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        w.push(Warning::new(
            "io_errors",
            format!(
                "{}: {errs} operations failed ({})",
                job.mode,
                list.join(", ")
            ),
        ));
    }
    w
}

/// Writes past this share of the set's size count as having used up a layout other than
/// overwrite (`layout_used_up`).
pub const LAYOUT_USED_UP_SHARE: f64 = 0.5;

/// What a `--layout` other than overwrite changes in what a mode measures (docs/layouts.md):
/// `layout_reads_zeros` (reads of holes or unwritten extents never reach the device),
/// `layout_allocating_writes` (every write allocates or converts: the filesystem's allocation,
/// journal and locking are measured with the device), `layout_used_up` (the mode wrote so much
/// of the set that later writes overwrote blocks it had allocated itself).
pub fn layout_warnings(
    job: &Job,
    set: &FileSetSpec,
    env: &RunEnv,
    cell: &CellResult,
) -> Vec<Warning> {
    let mut w = Vec::new();
    let l = set.layout;
    if l == Layout::Overwrite {
        return w;
    }
    if job.mode.reads() && l.reads_zeros() {
        w.push(Warning::new(
            "layout_reads_zeros",
            format!(
                "{}: --layout {l}: reads of {} return zeros from the filesystem without reaching the device; the read figures measure the filesystem and memory, not storage (use --layout overwrite for reads)",
                job.mode,
                if l == Layout::Holes {
                    "holes"
                } else {
                    "unwritten extents"
                }
            ),
        ));
    }
    if job.mode.writes() {
        let what = match l {
            Layout::Holes => "allocates blocks",
            Layout::Unwritten => "converts an unwritten extent to written",
            _ => "allocates blocks and grows the file",
        };
        let mut msg = format!(
            "{}: --layout {l}: every write {what}, so the figures include the filesystem's allocation, journal and locking, not only the device (a database overwrites its grown files in place: --layout overwrite)",
            job.mode
        );
        let fs = env.fs_type.as_str();
        if job.direct
            && job.threads > 1
            && matches!(fs, "ext4" | "ext3" | "ext2")
            && matches!(l, Layout::Holes | Layout::Extend)
        {
            msg.push_str(&format!(
                "; on {fs} an O_DIRECT write that allocates takes the file's inode lock exclusively, so the {} threads writing one file are serialised and more threads add little",
                job.threads
            ));
        }
        w.push(Warning::new("layout_allocating_writes", msg));
        let written = cell.results.write.bytes as f64;
        if set.total_bytes > 0 && written > LAYOUT_USED_UP_SHARE * set.total_bytes as f64 {
            w.push(Warning::new(
                "layout_used_up",
                format!(
                    "{}: --layout {l}: the mode wrote {}, {:.0}% of the set's {}: a growing share of its writes landed on blocks it had already allocated or converted itself, and measured overwrite instead; use a larger --size or a shorter --time",
                    job.mode,
                    human_bytes(written),
                    100.0 * written / set.total_bytes as f64,
                    human_bytes(set.total_bytes as f64)
                ),
            ));
        }
    }
    w
}

/// The shortest time-limited run whose per-second rates are judged for steadiness without
/// `--steady-state` (five rounds of a second at least).
pub const STEADY_CHECK_MIN_S: usize = 5;

/// `not_steady`: a `--steady-state` run that ended (at its --time) before SNIA PTS's criteria
/// held; or, without it, a time-limited run of at least [`STEADY_CHECK_MIN_S`] seconds whose
/// I/Os per second, cut into the window's five equal rounds, fail them (its figures are then
/// the start of something, not the device's lasting rate).
pub fn not_steady(job: &Job, cell: &CellResult) -> Option<Warning> {
    use crate::measure::steady::{SNIA_WINDOW_ROUNDS, pts_judge};
    use crate::model::steady::Pts;
    if cell.interrupted {
        return None;
    }
    if let Some(spec) = &job.timing.steady {
        let p = spec.pts?;
        let st = cell.steady.first()?;
        if st.attained {
            return None;
        }
        let n = st.rounds_iops.len();
        let why = match (st.range_pct, st.slope_pct) {
            (Some(r), Some(s)) => format!(
                "the last window's range is {r:.1} % of its average (limit {:.0} %), its best-fit line's excursion {s:.1} % (limit {:.0} %)",
                p.range_pct, p.slope_pct
            ),
            _ => format!("fewer rounds than the window's {}", spec.window_s),
        };
        return Some(Warning::new(
            "not_steady",
            format!(
                "{}: not steady after {n} rounds of {} s: {why}. The figures are not the device's lasting rate: run longer (--time), or precondition the device",
                job.mode, spec.round_s
            ),
        ));
    }
    if !matches!(job.limit, crate::model::job::Limit::TimeS(_)) || job.rate_iops.is_some() {
        return None;
    }
    // whole seconds only (the last may be short); the latest multiple of five of them
    let per_s = crate::measure::steady::seconds(&cell.timeseries);
    let k = per_s.len() / SNIA_WINDOW_ROUNDS;
    if per_s.len() < STEADY_CHECK_MIN_S || k == 0 {
        return None;
    }
    let tail = &per_s[per_s.len() - k * SNIA_WINDOW_ROUNDS..];
    let rounds: Vec<f64> = tail
        .chunks(k)
        .map(|c| c.iter().map(|x| x.ios).sum::<f64>() / c.iter().map(|x| x.dur_s).sum::<f64>())
        .collect();
    let j = pts_judge(&rounds, &Pts::SNIA);
    if j.attained || j.avg <= 0.0 {
        return None;
    }
    Some(Warning::new(
        "not_steady",
        format!(
            "{}: not steady: over {} rounds of {k} s the IOPS range {:.1} % of their average (SNIA PTS allows 20 %) and the best-fit line moves {:.1} % (10 %): {}. The figures are not the device's lasting rate: run longer, or with --steady-state",
            job.mode,
            SNIA_WINDOW_ROUNDS,
            j.range_pct,
            j.slope_pct,
            rounds
                .iter()
                .map(|r| format!("{r:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// `pacing_lag`: with `--rate`, iolab issued operations late enough behind their schedule that
/// its own lateness, which the latency (measured from the schedule) includes, rivals the device's.
pub fn pacing_lag(job: &Job, cell: &CellResult) -> Option<Warning> {
    let rate = job.rate_iops? as f64;
    let lag = cell.schedule_lag_ns.as_ref()?;
    let lat_p99 = [&cell.results.read, &cell.results.write]
        .iter()
        .filter_map(|r| r.lat_ns.as_ref().map(|l| l.p99))
        .max()?;
    let interval_ns = (1e9 * job.threads.max(1) as f64 / rate) as u64;
    // Not "lag above the interval": above saturation a stall's lag stays carried in a backlog
    // that never drains, yet the device's backlog still dwarfs it.
    if lag.p99 < PACING_LAG_FLOOR_NS || lag.p99 as f64 <= PACING_LAG_SHARE * lat_p99 as f64 {
        return None;
    }
    Some(Warning::new(
        "pacing_lag",
        format!(
            "{}: iolab itself issued the paced operations late: schedule lag p50 {} p99 {} against a latency p99 of {} (one operation every {} per thread). Latency is measured from the schedule, so this lateness of the generator (CPU contention, wakeups, too many threads per core) is counted as device latency. Use fewer threads per core, a lower --rate, or --engine io_uring with fewer threads and a deeper --iodepth",
            job.mode,
            fmt_ns(lag.p50 as f64),
            fmt_ns(lag.p99 as f64),
            fmt_ns(lat_p99 as f64),
            fmt_ns(interval_ns as f64)
        ),
    ))
}

/// A direction of the device moving this share of its bytes that iolab did not move means
/// another process used the device (`other_io`).
pub const OTHER_IO_SHARE: f64 = 0.05;
/// ...when that is more than this many bytes per second (a filesystem's journal and metadata
/// writes stay below it).
pub const OTHER_IO_FLOOR_BPS: f64 = 512.0 * 1024.0;
/// With O_DIRECT the device moves iolab's bytes, give or take its own merging: counted short by
/// more than this share, a cache or layer above it answered part (`device_counts_short`).
pub const COUNTS_TOLERANCE: f64 = 0.02;
/// The host's CPUs idle (and waiting on I/O) less than this percent over the measured window:
/// saturated (`cpu_saturated`).
pub const CPU_IDLE_MIN_PCT: f64 = 5.0;

/// What the device under the set did against what iolab did, per direction, over the same
/// window: bytes iolab did not move (another process on the device: `other_io`), and with
/// O_DIRECT bytes iolab moved that the device did not see (`device_counts_short`). Buffered
/// directions are left to the page-cache warnings (the device sees reads ahead and writes back
/// later); a direction iolab does not use is compared even then (a read-only run's device
/// writes are another writer's).
fn device_counts(
    job: &Job,
    buffered: bool,
    d: &crate::model::device::DeviceReport,
    cell: &CellResult,
) -> Vec<Warning> {
    let mut w = Vec::new();
    let Some(name) = d.devices.first() else {
        return w;
    };
    let Some(x) = d.summary.devices.get(name) else {
        return w;
    };
    let mib = |b: f64| b / 1048576.0;
    for (dir, ours, theirs, ops_s) in [
        (
            "read",
            cell.results.read.bytes_per_sec,
            x.rkb_s * 1024.0,
            x.r_s,
        ),
        (
            "write",
            cell.results.write.bytes_per_sec,
            x.wkb_s * 1024.0,
            x.w_s,
        ),
    ] {
        let compared = !buffered || ours == 0.0;
        if !compared {
            continue;
        }
        let extra = theirs - ours;
        if extra > OTHER_IO_FLOOR_BPS && extra > OTHER_IO_SHARE * theirs && ops_s >= 5.0 {
            w.push(Warning::new(
                "other_io",
                format!(
                    "{}: the device {name} moved {:.1} MiB/s of {dir}s that were not iolab's ({:.0} % of its {dir} bytes; iolab {:.1} MiB/s, the device {:.1} MiB/s at {:.0} {dir}s/s): another process used the device during the run, and the figures share it",
                    job.mode,
                    mib(extra),
                    100.0 * extra / theirs,
                    mib(ours),
                    mib(theirs),
                    ops_s
                ),
            ));
        } else if !buffered
            && ours > OTHER_IO_FLOOR_BPS
            && theirs < ours * (1.0 - COUNTS_TOLERANCE)
            && theirs >= 0.5 * ours
        {
            // (below half, device_fewer_reads says it)
            w.push(Warning::new(
                "device_counts_short",
                format!(
                    "{}: with O_DIRECT the device {name} counted {:.1} MiB/s of {dir}s where iolab moved {:.1} MiB/s ({:.1} % fewer, beyond the {:.0} % of its own merging): a cache or layer above the device answered part of them",
                    job.mode,
                    mib(theirs),
                    mib(ours),
                    100.0 * (ours - theirs) / ours,
                    COUNTS_TOLERANCE * 100.0
                ),
            ));
        }
    }
    w
}

/// iolab's counts above a cgroup limit on a device of the stack by more than this share: the
/// device cannot have done them (`above_throttle`).
pub const ABOVE_LIMIT_SHARE: f64 = 0.10;

/// A cgroup I/O limit on a device under the set that iolab's own counts exceed: the device could
/// not have done them, so a cache above it (the page cache, a controller) answered the rest.
fn above_throttle(
    job: &Job,
    env: &RunEnv,
    d: &crate::model::device::DeviceReport,
    cell: &CellResult,
) -> Vec<Warning> {
    let r = &cell.results;
    let mut w = Vec::new();
    for l in &env.cgroup_io {
        let Some(name) = l
            .device
            .as_deref()
            .filter(|n| d.devices.iter().any(|x| x == n))
        else {
            continue;
        };
        let (ours, unit) = match l.kind.as_str() {
            "read_iops" => (r.read.iops, "reads/s"),
            "write_iops" => (r.write.iops, "writes/s"),
            "read_bps" => (r.read.bytes_per_sec, "bytes/s read"),
            "write_bps" => (r.write.bytes_per_sec, "bytes/s written"),
            _ => continue,
        };
        let limit = l.limit as f64;
        if limit > 0.0 && ours > limit * (1.0 + ABOVE_LIMIT_SHARE) {
            w.push(Warning::new(
                "above_throttle",
                format!(
                    "{}: iolab counted {ours:.0} {unit}, but the cgroup limit {} lets {name} do at most {} ({:.0} % more than the device can have done): a cache above the device (the page cache, a controller) answered the rest, so these figures are not the device's",
                    job.mode,
                    l.file,
                    l.limit,
                    100.0 * (ours / limit - 1.0)
                ),
            ));
        }
    }
    w
}

/// The host's CPUs all busy over the window (idle and I/O wait under [`CPU_IDLE_MIN_PCT`]):
/// iolab's threads and the kernel's work for the device (loop, dm-crypt, a network block client,
/// a virtio backend) wait for CPU, so the figures are the machine's, not the storage's.
fn cpu_saturated(job: &Job, cpu: &crate::model::device::CpuPct) -> Option<Warning> {
    let free = cpu.idle + cpu.iowait;
    if free >= CPU_IDLE_MIN_PCT || cpu.user + cpu.system + cpu.nice <= 0.0 {
        return None;
    }
    let steal = if cpu.steal >= 1.0 {
        format!(", {:.1} % stolen by the hypervisor", cpu.steal)
    } else {
        String::new()
    };
    Some(Warning::new(
        "cpu_saturated",
        format!(
            "{}: the host's CPUs were {:.1} % idle over the measured window (user {:.1} %, system {:.1} %{steal}; under {:.0} % counts as saturated): iolab's threads and the kernel's work for the device waited for CPU, so the figures are the machine's, not the storage's. Run with fewer --threads, or stop what else runs on the host",
            job.mode, free, cpu.user, cpu.system, CPU_IDLE_MIN_PCT
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::{Distribution, EngineKind, FsyncMode, Limit, Mode, OpenFlags};
    use crate::model::run::{CellJob, Cpu, LatSummary, OpResult, Results};
    use std::collections::BTreeMap;

    /// A run environment on ext4 with no device figures.
    fn ext4_env() -> RunEnv {
        RunEnv {
            host: "h".into(),
            kernel: "k".into(),
            fs_type: "ext4".into(),
            device: None,
            device_rotational: None,
            device_link: None,
            mem_total_bytes: None,
            dio_mem_align_bytes: 512,
            dio_offset_align_bytes: 512,
            cgroup_io: Vec::new(),
        }
    }

    fn job(rate: Option<u64>) -> Job {
        Job {
            mode: Mode::Rndrd,
            engine: EngineKind::Sync,
            threads: 2,
            iodepth: 1,
            bs_bytes: 16384,
            bs_mix: None,
            bs_range: None,
            bs_dirs: None,
            block_align_bytes: 0,
            direct: true,
            open_flags: OpenFlags::default(),
            fsync_freq: 0,
            fsync_every_s: None,
            fsync_all: false,
            fsync_end: false,
            fsync_mode: FsyncMode::Fsync,
            rw_ratio: 1.5,
            distribution: Distribution::Uniform,
            seed: 1,
            rate_iops: rate,
            no_spin: false,
            limit: Limit::TimeS(10.0),
            max_time_s: None,
            ramp_s: 0.0,
            verify: false,
            verify_backlog: 0,
            random_map: Default::default(),
            fio_rand: None,
            fio_logs: None,
            buffers: Default::default(),
            cpus: None,
            ioprio: None,
            offset_increment_bytes: 0,
            seq_skip_bytes: 0,
            random_every: 0,
            random_every_same: false,
            follow_pct: 0,
            timing: Default::default(),
            noio: None,
            replay: None,
        }
    }

    /// A summary whose p50 and p99 are the given figures (ns).
    fn lat(p50: u64, p99: u64) -> LatSummary {
        LatSummary {
            min: p50 / 2,
            mean: p50 as f64,
            max: p99 * 2,
            stddev: 0.0,
            p50,
            p90: p99,
            p95: p99,
            p99,
            p99_9: p99,
            p99_99: p99,
        }
    }

    fn op(l: Option<LatSummary>) -> OpResult {
        OpResult {
            ops: if l.is_some() { 20_000 } else { 0 },
            bytes: 0,
            iops: 2000.0,
            bytes_per_sec: 0.0,
            lat_ns: l,
            slat_ns: None,
            issue_lat_ns: None,
            by_bs: Vec::new(),
        }
    }

    /// A paced read cell with the given read latency p99 and schedule lag p99 (ns).
    fn cell(j: &Job, read_p99: u64, lag_p99: Option<u64>) -> CellResult {
        CellResult {
            mode: j.mode.name().to_string(),
            job: CellJob {
                job: j.clone(),
                fileset: FileSetSpec {
                    dir: "/tmp".into(),
                    files: 1,
                    total_bytes: 1 << 30,
                    file_size_bytes: 1 << 30,
                    device: None,
                    offset_bytes: None,
                    file_len_bytes: None,
                    layout: Layout::Overwrite,
                    larger_ok: false,
                },
            },
            duration_s: 10.0,
            window_s: 10.0,
            results: Results {
                read: op(Some(lat(read_p99 / 2, read_p99))),
                write: op(None),
                fsync: op(None),
                trim: op(None),
            },
            schedule_lag_ns: lag_p99.map(|p| lat(p / 4, p)),
            cpu: Cpu::default(),
            timeseries: Vec::new(),
            errors: BTreeMap::new(),
            cache_resident_pct_at_start: 0.0,
            warnings: Vec::new(),
            interrupted: false,
            device: None,
            roles: Vec::new(),
            verify: None,
            steady: Vec::new(),
            latency_depth: None,
            replay: None,
            lat_hists: Vec::new(),
            clones: Vec::new(),
            clat_hists: Vec::new(),
        }
    }

    #[test]
    fn pacing_lag_fires_when_the_schedule_lag_p99_dominates_the_latency_p99() {
        let j = job(Some(2000));
        // the generator was 2 ms late at p99 against a 3 ms latency p99: its own lateness is
        // most of the tail
        let w = pacing_lag(&j, &cell(&j, 3_000_000, Some(2_000_000))).expect("pacing_lag");
        assert_eq!(w.code, "pacing_lag");
        let figures = format!(
            "p99 {} against a latency p99 of {}",
            fmt_ns(2e6),
            fmt_ns(3e6)
        );
        assert!(w.message.contains(&figures), "{}", w.message);
        // one operation every 1 ms per thread: 2 threads at 2000/s
        assert!(w.message.contains(&fmt_ns(1e6)), "{}", w.message);
        // and check_cell reports it with the cell's other warnings
        let set = cell(&j, 0, None).job.fileset;
        let env = ext4_env();
        let codes: Vec<String> = check_cell(
            &j,
            &set,
            &env,
            None,
            &cell(&j, 3_000_000, Some(2_000_000)),
            false,
        )
        .into_iter()
        .map(|w| w.code)
        .collect();
        assert!(codes.contains(&"pacing_lag".to_string()), "{codes:?}");
    }

    #[test]
    fn pacing_lag_is_quiet_when_the_device_dominates_or_nothing_is_paced() {
        let j = job(Some(2000));
        // lag p99 at 10% of the latency p99 or below: the device shapes the tail
        assert!(pacing_lag(&j, &cell(&j, 3_000_000, Some(300_000))).is_none());
        assert!(pacing_lag(&j, &cell(&j, 3_000_000, Some(100_000))).is_none());
        // just above the share: it fires (the boundary is the share, not some other figure)
        assert!(pacing_lag(&j, &cell(&j, 3_000_000, Some(300_001))).is_some());
        // a few µs of loop and clock overhead never count, however fast the device
        assert!(pacing_lag(&j, &cell(&j, 20_000, Some(PACING_LAG_FLOOR_NS - 1))).is_none());
        assert!(pacing_lag(&j, &cell(&j, 20_000, Some(PACING_LAG_FLOOR_NS + 1000))).is_some());
        // not paced: no --rate, or no lag recorded
        let free = job(None);
        assert!(pacing_lag(&free, &cell(&free, 3_000_000, Some(2_000_000))).is_none());
        assert!(pacing_lag(&j, &cell(&j, 3_000_000, None)).is_none());
    }

    /// Buffered writes without any fsync while running are flagged; `--fsync-every` syncs them
    /// like `--fsync-freq` does.
    #[test]
    fn writes_synced_by_time_are_synced() {
        let codes = |j: &Job| -> Vec<String> {
            let c = cell(j, 1_000_000, None);
            let env = ext4_env();
            check_cell(j, &c.job.fileset, &env, None, &c, false)
                .into_iter()
                .map(|w| w.code)
                .collect()
        };
        let mut j = job(None);
        j.mode = Mode::Rndwr;
        j.direct = false;
        assert!(codes(&j).contains(&"writes_not_synced".to_string()));
        j.fsync_every_s = Some(2.0);
        assert!(!codes(&j).contains(&"writes_not_synced".to_string()));
        j.fsync_every_s = None;
        j.fsync_freq = 1024;
        assert!(!codes(&j).contains(&"writes_not_synced".to_string()));
    }
}
