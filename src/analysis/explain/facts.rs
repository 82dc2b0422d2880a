//! What the explain rules read about one cell ([`Facts`]: the workload's figures, the device's
//! and CPU's over the same window, the environment snapshot, the command lines that make the
//! cell again) and the number formats their evidence uses.

use super::Confidence;
use crate::model::device::{CpuPct, Iostat};
use crate::model::env::EnvReport;
use crate::model::job::{EngineKind, Job};
use crate::model::run::{CellJob, CellResult, RunDoc};
use crate::model::units::{Bytes, human_bytes};

/// Fewer operations than this say nothing about a cache or a queue.
pub const MIN_OPS: u64 = 100;

/// What an explain hit adds to the evidence: its confidence and what to try next (a runnable
/// iolab command line).
#[derive(Debug, Clone, PartialEq)]
pub struct At {
    pub confidence: Confidence,
    pub next: String,
}

pub type Hit = crate::analysis::rule::Hit<At>;

pub(super) fn hit(confidence: Confidence, evidence: String, next: String) -> Option<Hit> {
    Some(Hit::new(At { confidence, next }, evidence))
}

/// What the rules read about one cell.
pub struct Facts<'a> {
    pub cell: &'a CellResult,
    pub job: &'a Job,
    pub env: Option<&'a EnvReport>,
    pub fs_type: &'a str,
    /// threads × iodepth (queue engines), else threads
    pub in_flight: f64,
    /// reads + writes per second, and their mean latency (ns, weighted by ops)
    pub iops: f64,
    pub lat_mean_ns: f64,
    /// the device the filesystem is on and its figures over the window
    pub dev: Option<(&'a str, &'a Iostat)>,
    pub sys_cpu: Option<&'a CpuPct>,
    /// the command line of this cell (`iolab run ...`) and the same options for a sweep
    pub run_cmd: String,
    pub opts_without_threads: String,
    /// The role this cell is (its own job and results, the phase's device and CPU figures);
    /// None for a mode's cell or a phase's totals.
    pub role: Option<&'a str>,
    /// Whether the cell does no I/O at all (the null engine; for a phase's totals: every role).
    pub null: bool,
    /// O_DIRECT only (for a phase's totals: every role).
    pub direct: bool,
    /// The reads and writes (ops, bytes/s) that went to files: a phase's totals leave out its
    /// null-engine roles, which do no I/O.
    pub io_read: (u64, f64),
    pub io_write: (u64, f64),
    /// For a role: whether the phase's page-cache residency at start was measured on the role's
    /// own file set (the first role's set, shared with the phase).
    pub resident_is_own: bool,
}

pub fn fmt_n(x: f64) -> String {
    let r = x.round();
    if x.abs() >= 100.0 || ((x - r).abs() < 0.05 && r.abs() < 1e15) {
        let s = format!("{}", r.abs() as i64);
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if r < 0.0 {
            out.insert(0, '-');
        }
        out
    } else {
        format!("{x:.1}")
    }
}

pub fn pct(a: f64, b: f64) -> String {
    if b <= 0.0 {
        return "n/a".into();
    }
    let p = a / b * 100.0;
    if p < 0.1 {
        format!("{p:.3} %")
    } else {
        format!("{p:.1} %")
    }
}

/// Whether the engine keeps `--iodepth` operations in flight per thread.
pub fn queue_engine(e: EngineKind) -> bool {
    e.caps().async_queue
}

/// The options that make this cell again, as `iolab run` takes them (without `--threads` when
/// `threads` is false).
pub fn run_options(cj: &CellJob, mode: &str, threads: bool) -> String {
    let j = &cj.job;
    let fs = &cj.fileset;
    let mut a = vec![format!("--mode {mode}")];
    match &fs.device {
        Some(d) => a.push(format!("--device {}", shell_word(&d.to_string_lossy()))),
        None => {
            a.push(format!("--dir {}", shell_word(&fs.dir.to_string_lossy())));
            a.push(format!("--files {}", fs.files));
            a.push(format!("--size {}", Bytes(fs.total_bytes)));
            if fs.layout != Default::default() {
                a.push(format!("--layout {}", fs.layout));
            }
        }
    }
    a.push(format!("--bs {}", shell_word(&j.bs_label())));
    a.push(format!("--engine {}", j.engine.name()));
    if threads {
        a.push(format!("--threads {}", j.threads));
        if queue_engine(j.engine) {
            a.push(format!("--iodepth {}", j.iodepth));
        }
    }
    if j.direct {
        a.push("--direct".into());
    }
    a.join(" ")
}

/// The `iolab run` options that run a roles phase again: the shared set and one `--role` per
/// role (a role with a set of its own gives its size, files and layout).
pub fn roles_options(cell: &CellResult) -> String {
    let fs = &cell.job.fileset;
    let mut a = vec![
        format!("--dir {}", shell_word(&fs.dir.to_string_lossy())),
        format!("--files {}", fs.files),
        format!("--size {}", Bytes(fs.total_bytes)),
    ];
    for r in &cell.roles {
        let j = &r.job.job;
        let mut k = vec![
            format!("mode={}", r.mode),
            format!("bs={}", j.bs_label()),
            format!("threads={}", j.threads),
            format!("engine={}", j.engine.name()),
        ];
        if queue_engine(j.engine) {
            k.push(format!("iodepth={}", j.iodepth));
        }
        k.push(format!("direct={}", j.direct));
        let own = &r.job.fileset;
        if own.dir != fs.dir {
            k.push(format!("size={}", Bytes(own.total_bytes)));
            k.push(format!("files={}", own.files));
            if own.layout != Default::default() {
                k.push(format!("layout={}", own.layout));
            }
        }
        a.push(format!(
            "--role {}",
            shell_word(&format!("{}:{}", r.name, k.join(",")))
        ));
    }
    a.join(" ")
}

pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:,=+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

impl<'a> Facts<'a> {
    pub fn of(doc: &'a RunDoc, cell: &'a CellResult) -> Facts<'a> {
        let job = &cell.job.job;
        let depth = if queue_engine(job.engine) {
            job.iodepth.max(1)
        } else {
            1
        };
        let r = &cell.results;
        let iops = r.read.iops + r.write.iops;
        let lat = |o: &crate::model::run::OpResult| o.lat_ns.as_ref().map_or(0.0, |l| l.mean);
        let n = (r.read.ops + r.write.ops) as f64;
        let lat_mean_ns = if n > 0.0 {
            (lat(&r.read) * r.read.ops as f64 + lat(&r.write) * r.write.ops as f64) / n
        } else {
            0.0
        };
        let dev = cell.device.as_ref().and_then(|d| {
            let name = d.devices.first()?;
            Some((name.as_str(), d.summary.devices.get(name)?))
        });
        let io: Vec<&crate::model::run::Results> = if cell.roles.is_empty() {
            vec![r]
        } else {
            cell.roles
                .iter()
                .filter(|x| x.job.job.engine.caps().does_io())
                .map(|x| &x.results)
                .collect()
        };
        let in_flight = if cell.roles.is_empty() {
            (job.threads.max(1) * depth) as f64
        } else {
            cell.roles
                .iter()
                .map(|x| {
                    let j = &x.job.job;
                    let d = if queue_engine(j.engine) {
                        j.iodepth.max(1)
                    } else {
                        1
                    };
                    (j.threads.max(1) * d) as f64
                })
                .sum()
        };
        Facts {
            role: None,
            null: if cell.roles.is_empty() {
                !job.engine.caps().does_io()
            } else {
                cell.roles
                    .iter()
                    .all(|x| !x.job.job.engine.caps().does_io())
            },
            direct: if cell.roles.is_empty() {
                job.direct
            } else {
                cell.roles.iter().all(|x| x.job.job.direct)
            },
            io_read: (
                io.iter().map(|x| x.read.ops).sum(),
                io.iter().map(|x| x.read.bytes_per_sec).sum(),
            ),
            io_write: (
                io.iter().map(|x| x.write.ops).sum(),
                io.iter().map(|x| x.write.bytes_per_sec).sum(),
            ),
            resident_is_own: true,
            cell,
            job,
            env: doc.system.as_ref(),
            fs_type: &doc.env.fs_type,
            in_flight,
            iops,
            lat_mean_ns,
            dev,
            sys_cpu: cell.device.as_ref().map(|d| &d.summary.cpu),
            run_cmd: match cell.roles.first() {
                None => format!("iolab run {}", run_options(&cell.job, &cell.mode, true)),
                Some(_) => format!("iolab run {}", roles_options(cell)),
            },
            // A roles phase cannot be swept: the sweeps it suggests vary its first role alone.
            opts_without_threads: match cell.roles.first() {
                None => run_options(&cell.job, &cell.mode, false),
                Some(r) => run_options(&r.job, &r.mode, false),
            },
        }
    }

    /// The facts of one role of a roles phase: `cell` is the role made a cell (its job and
    /// results, [`role_cell`]), `phase` the phase's cell (device and CPU figures). The next
    /// commands run the role alone.
    pub fn of_role(
        doc: &'a RunDoc,
        phase: &'a CellResult,
        cell: &'a CellResult,
        name: &'a str,
    ) -> Facts<'a> {
        let mut f = Facts::of(doc, cell);
        f.role = Some(name);
        f.resident_is_own = phase.roles.first().map(|r| &r.job.fileset) == Some(&phase.job.fileset)
            && cell.job.fileset == phase.job.fileset;
        f
    }

    /// " (the device's figures are the whole phase's, all roles')" for a role.
    pub fn shared(&self) -> &'static str {
        if self.role.is_some() {
            " (device figures: the whole phase's, all roles together)"
        } else {
            ""
        }
    }

    pub fn sweep_cmd(&self) -> String {
        if queue_engine(self.job.engine) {
            format!(
                "iolab sweep {} --threads {} --iodepth 1,4,16,32,64",
                self.opts_without_threads, self.job.threads
            )
        } else {
            format!(
                "iolab sweep {} --threads 1,2,4,8,16,32",
                self.opts_without_threads
            )
        }
    }

    pub fn ops(&self) -> (u64, u64) {
        (self.cell.results.read.ops, self.cell.results.write.ops)
    }

    pub fn dev_text(&self) -> String {
        match self.dev {
            Some((n, d)) => format!(
                "device {n}: {} r/s, {} w/s, aqu-sz {:.2}, %util {:.0}",
                fmt_n(d.r_s),
                fmt_n(d.w_s),
                d.aqu_sz,
                d.util_pct
            ),
            None => "no device figures (no block device found under --dir)".into(),
        }
    }

    /// [`Self::dev_text`], said to be the phase's for a role.
    pub fn dev_text_shared(&self) -> String {
        format!("{}{}", self.dev_text(), self.shared())
    }

    pub fn cpu_pct(&self) -> f64 {
        self.cell.cpu.user_pct + self.cell.cpu.sys_pct
    }

    /// The devices of the stack under --dir (names).
    pub fn stack(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .cell
            .device
            .as_ref()
            .map(|d| d.devices.clone())
            .unwrap_or_default();
        if let Some(e) = self.env {
            for n in crate::model::env::stack_devices(e) {
                if !v.contains(&n) {
                    v.push(n);
                }
            }
        }
        if let Some(d) = &self.cell.job.fileset.device
            && let Some(n) = d.file_name()
        {
            v.push(n.to_string_lossy().into_owned());
        }
        v
    }
}

pub fn little(f: &Facts) -> f64 {
    f.iops * f.lat_mean_ns / 1e9
}

/// The device's await (ms), reads and writes weighted by their rates.
pub fn await_ms(d: &Iostat) -> f64 {
    if d.r_s + d.w_s > 0.0 {
        (d.r_await_ms * d.r_s + d.w_await_ms * d.w_s) / (d.r_s + d.w_s)
    } else {
        0.0
    }
}

/// How many rotating members serve one device: an md array's members, else the data disks of
/// a RAID logical drive as the stripe width over the chunk (optimal_io_size / minimum_io_size,
/// which RAID controllers and md export); None when the device does not say.
pub fn members(b: &crate::model::env::BlockDevice) -> Option<(u64, String)> {
    if let Some(md) = &b.md
        && md.members.len() >= 2
    {
        return Some((
            md.members.len() as u64,
            format!("md {} members", md.members.len()),
        ));
    }
    match (b.minimum_io_size, b.optimal_io_size) {
        (Some(min), Some(opt)) if min > 0 && opt >= 2 * min && opt % min == 0 => Some((
            opt / min,
            format!(
                "optimal_io_size {} / minimum_io_size {} = {} data members",
                human_bytes(opt as f64),
                human_bytes(min as f64),
                opt / min
            ),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_numbers() {
        assert_eq!(fmt_n(21000.0), "21,000");
        assert_eq!(fmt_n(12.0), "12");
        assert_eq!(fmt_n(0.5), "0.5");
        assert_eq!(fmt_n(12629.4), "12,629");
        assert_eq!(fmt_n(-1234567.0), "-1,234,567");
        assert_eq!(pct(12.0, 21000.0), "0.057 %");
    }
}
