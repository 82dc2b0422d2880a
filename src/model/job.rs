//! The resolved description of what to run: plain types, no CLI parsing here.

use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

pub use super::fiologs::FioLogs;
pub use super::mode::Mode;

pub use super::bs::{
    BS_RANGE_STEP, BsArg, BsDirs, BsRange, BsSide, BsWeight, MAX_BS_SIZES, fio_range_pick,
};
pub use super::caps::{Caps, Direct};
pub use super::engines::EngineKind;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FsyncMode {
    Fsync,
    Fdatasync,
}

impl FromStr for FsyncMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fsync" => Ok(FsyncMode::Fsync),
            "fdatasync" => Ok(FsyncMode::Fdatasync),
            _ => Err(format!(
                "'{s}' is not an fsync mode: use fsync or fdatasync"
            )),
        }
    }
}

/// One zone of `--distribution zoned:...`: `access_pct` of the random accesses go to the next
/// `size_pct` of the file set (zones follow each other from the start of the set).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Zone {
    pub access_pct: u32,
    pub size_pct: u32,
}

/// Distribution of random block offsets.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent `theta` (> 0): block rank k is chosen with probability ∝ 1/k^theta.
    Zipf {
        theta: f64,
    },
    /// Pareto with parameter `h` in (0, 1), fio's definition: a block rank is `n · u^(ln h / ln(1-h))`
    /// for uniform `u`; `h` = 0.5 is uniform, the further from 0.5 the more skewed.
    Pareto {
        h: f64,
    },
    /// fio's `random_distribution=zoned`: zones from the start of the set, each taking a share
    /// of the accesses (uniform inside the zone). Both shares sum to 100.
    Zoned {
        zones: Vec<Zone>,
    },
}

/// Parses the part after `zoned:`: `ACCESS/SIZE` pairs separated by `:`.
fn parse_zones(s: &str, v: &str) -> Result<Vec<Zone>, String> {
    let bad = |why: &str| {
        format!(
            "'{s}': {why}; use zoned:ACCESS/SIZE:ACCESS/SIZE... in percent, each column summing to 100 (e.g. zoned:50/5:30/15:20/80)"
        )
    };
    let mut zones = Vec::new();
    for part in v.split(':') {
        let (a, z) = part
            .split_once('/')
            .ok_or_else(|| bad(&format!("'{part}' is not ACCESS/SIZE")))?;
        let pct = |x: &str| x.trim().parse::<u32>().ok().filter(|&p| p <= 100);
        let (Some(a), Some(z)) = (pct(a), pct(z)) else {
            return Err(bad(&format!("'{part}': percents are whole numbers 0..100")));
        };
        if z == 0 {
            return Err(bad(&format!(
                "'{part}': a zone covers at least 1% of the set"
            )));
        }
        zones.push(Zone {
            access_pct: a,
            size_pct: z,
        });
    }
    let sa: u32 = zones.iter().map(|z| z.access_pct).sum();
    let sz: u32 = zones.iter().map(|z| z.size_pct).sum();
    if sa != 100 {
        return Err(bad(&format!("the access percents sum to {sa}, not 100")));
    }
    if sz != 100 {
        return Err(bad(&format!("the size percents sum to {sz}, not 100")));
    }
    Ok(zones)
}

/// The largest zipf THETA taken: beyond it every offset drawn is the first block's.
pub const MAX_ZIPF_THETA: f64 = 100.0;

impl FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{s}' is not a distribution: use uniform, zipf:THETA (THETA > 0, e.g. zipf:1.2), pareto:H (0 < H < 1, e.g. pareto:0.9) or zoned:ACCESS/SIZE:... (e.g. zoned:50/5:30/15:20/80)"
            )
        };
        if s == "uniform" {
            return Ok(Distribution::Uniform);
        }
        if let Some(v) = s.strip_prefix("zoned:") {
            return Ok(Distribution::Zoned {
                zones: parse_zones(s, v)?,
            });
        }
        let (k, v) = s.split_once(':').ok_or_else(bad)?;
        let x: f64 = v.parse().map_err(|_| bad())?;
        match k {
            // above ~10 every draw is the first block already; a larger theta is a typo
            "zipf" if x > MAX_ZIPF_THETA => Err(format!(
                "'{s}': zipf THETA must be at most {MAX_ZIPF_THETA} (zipf:1.2 is a typical skew)"
            )),
            "zipf" if x > 0.0 && x.is_finite() && x != 1.0 => Ok(Distribution::Zipf { theta: x }),
            "zipf" if x == 1.0 => Err(format!(
                "'{s}': zipf THETA must not be exactly 1.0 (use 0.99 or 1.01)"
            )),
            "pareto" if x > 0.0 && x < 1.0 => Ok(Distribution::Pareto { h: x }),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            Distribution::Pareto { h } => write!(f, "pareto:{h}"),
            Distribution::Zoned { zones } => {
                f.write_str("zoned")?;
                for z in zones {
                    write!(f, ":{}/{}", z.access_pct, z.size_pct)?;
                }
                Ok(())
            }
        }
    }
}

/// Extra open(2) flags for the data files.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct OpenFlags {
    pub sync: bool,
    pub dsync: bool,
}

impl FromStr for OpenFlags {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut f = OpenFlags::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "sync" => f.sync = true,
                "dsync" => f.dsync = true,
                "none" => {}
                _ => {
                    return Err(format!(
                        "'{part}' is not an open flag: use sync, dsync or both (sync,dsync)"
                    ));
                }
            }
        }
        Ok(f)
    }
}

/// What the files hold before each mode runs (`--layout`): which blocks are allocated and
/// written decides what a write costs the filesystem (docs/layouts.md).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Every block written with data (prepare's real data): writes overwrite in place.
    #[default]
    Overwrite,
    /// Full-size files of preallocated, unwritten extents (fallocate): writes convert extents.
    Unwritten,
    /// Full-size sparse files, no block allocated: writes allocate.
    Holes,
    /// Empty files (size 0) that sequential writes grow: writes allocate and extend the size.
    Extend,
}

impl Layout {
    pub const ALL: [Layout; 4] = [
        Layout::Overwrite,
        Layout::Unwritten,
        Layout::Holes,
        Layout::Extend,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Layout::Overwrite => "overwrite",
            Layout::Unwritten => "unwritten",
            Layout::Holes => "holes",
            Layout::Extend => "extend",
        }
    }
    /// Whether a read of a block of this layout returns zeros without reaching the device.
    pub fn reads_zeros(self) -> bool {
        matches!(self, Layout::Unwritten | Layout::Holes)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Layout::ALL
            .into_iter()
            .find(|l| l.name() == s.trim())
            .ok_or_else(|| {
                format!("'{s}' is not a layout: use overwrite, unwritten, holes or extend")
            })
    }
}

/// The file set: where, how big and what the files hold.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FileSetSpec {
    pub dir: PathBuf,
    pub files: u32,
    /// Total size of the set in bytes (files × file_size_bytes).
    pub total_bytes: u64,
    /// Size of each file in bytes: requested total / files, rounded down to a multiple of the largest block size.
    pub file_size_bytes: u64,
    /// A block device as the target (`--device`): the set is this one device (`dir` is its path
    /// too, `files` is 1) and `file_size_bytes` the size of the range measured on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<PathBuf>,
    /// Where that range starts on the device or in each file (`--offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_bytes: Option<u64>,
    /// Each file's length with `--offset`/`--offset-increment`: where the last range ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_len_bytes: Option<u64>,
    /// What the files hold before each mode (documents before `--layout` had none: overwrite).
    #[serde(default)]
    pub layout: Layout,
    /// A job file's named files (fio's `filename=`): a file of the set that is there, written
    /// and longer than the set needs is used as it is (its first bytes), as fio uses a file it
    /// finds; elsewhere a set of other sizes is refused. How the set is found, not a result:
    /// not in the document.
    #[serde(skip)]
    pub larger_ok: bool,
}

impl FileSetSpec {
    /// The base offset every I/O adds (0 for a file set without `--offset`).
    pub fn base_offset(&self) -> u64 {
        self.offset_bytes.unwrap_or(0)
    }

    /// The length of each file on disk.
    pub fn file_len(&self) -> u64 {
        self.file_len_bytes.unwrap_or(self.file_size_bytes)
    }
}

/// When the run stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Measure for this many seconds (after the ramp).
    TimeS(f64),
    /// Exactly this many read+write operations in total across all threads (fsyncs come on top).
    Ops(u64),
    /// Exactly this many bytes read and written in total across all threads (fio's `size=`
    /// of a size-bound job): each thread its share, its last I/O trimmed to what is left.
    Bytes(u64),
}

/// fio's seeds of a job run from a job file (`randrepeat`, `randseed`, `random_generator`):
/// with them iolab draws the job's random offsets and its read/write mix with fio's own
/// generators (`spec::fio_rand`), so both are fio's, in fio's order. Absent for iolab's own
/// runs and for a job whose seeds fio takes from the system (`randrepeat=0`, no `randseed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FioRand {
    /// fio's `thread_number` of the job's first thread (1 for the first job of the run; each
    /// `numjobs` clone the next): thread N of the job is this + N.
    pub thread_number: u64,
    /// `randseed` (fio's default 0x89).
    pub rand_seed: u64,
    /// `randrepeat` (fio's default): the offsets' seed is 0xb1899bed × thread_number, whatever
    /// `randseed` says.
    pub repeat: bool,
    /// `allrandrepeat`: every seed from 0xb1899bed × thread_number (the mix's too).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_repeat: bool,
    /// `random_generator=tausworthe64`: the offsets from fio's 64-bit generator.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub use64: bool,
}

/// fio's `FIO_RANDSEED`.
pub const FIO_RANDSEED: u64 = 0xb189_9bed;
/// fio's number of seeds per thread (`FIO_RAND_NR_OFFS` of fio 3.33).
const FIO_RAND_NR_OFFS: usize = 21;
/// fio's `FIO_RAND_BLOCK_OFF`: the offsets' seed.
const FIO_RAND_BLOCK_OFF: usize = 6;

impl FioRand {
    /// fio's `setup_random_seeds` for `thread_number`: `td->rand_seeds`.
    pub fn seeds(&self, thread_number: u64) -> [u64; FIO_RAND_NR_OFFS] {
        let mut seed = self.rand_seed;
        for _ in 0..4 {
            seed = seed.wrapping_mul(0x9e37_0001);
        }
        let mut out = [0u64; FIO_RAND_NR_OFFS];
        for (i, o) in out.iter_mut().enumerate() {
            *o = if self.all_repeat {
                FIO_RANDSEED
                    .wrapping_mul(thread_number)
                    .wrapping_add(i as u64)
            } else {
                seed.wrapping_mul(thread_number).wrapping_add(i as u64)
            };
            seed = seed.wrapping_mul(0x9e37_0001);
        }
        out
    }

    /// The seed of the offsets of fio's thread `thread_number` (`td_fill_rand_seeds_internal`).
    pub fn block_seed(&self, thread_number: u64) -> u64 {
        if self.repeat {
            FIO_RANDSEED.wrapping_mul(thread_number)
        } else {
            self.seeds(thread_number)[FIO_RAND_BLOCK_OFF]
        }
    }
}

/// How random offsets are drawn (`--random-map`; fio's `norandommap` and `random_generator`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RandomMap {
    /// Each offset drawn with replacement: some blocks twice, some not at all (fio's
    /// `norandommap`).
    #[default]
    Off,
    /// fio's default: each thread keeps a bitmap of its blocks; a drawn block already done
    /// moves on to the next one not done, an I/O is trimmed to the blocks not done from its
    /// start, and the bitmap is cleared when every block is done (one pass).
    Bitmap,
    /// fio's `random_generator=lfsr`: a full-period permutation of the thread's blocks, each
    /// once per pass, without a bitmap.
    Lfsr,
}

impl RandomMap {
    pub const NAMES: &'static str = "off, bitmap or lfsr";
    pub fn name(self) -> &'static str {
        match self {
            RandomMap::Off => "off",
            RandomMap::Bitmap => "bitmap",
            RandomMap::Lfsr => "lfsr",
        }
    }
}

impl FromStr for RandomMap {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(RandomMap::Off),
            "bitmap" => Ok(RandomMap::Bitmap),
            "lfsr" => Ok(RandomMap::Lfsr),
            _ => Err(format!("'{s}' is not a random map: use {}", Self::NAMES)),
        }
    }
}

/// One fully resolved workload cell: everything a worker needs.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Job {
    pub mode: Mode,
    pub engine: EngineKind,
    pub threads: u32,
    pub iodepth: u32,
    /// The size of each read/write; with a mix or a range, the largest size (files are rounded
    /// to it and buffers hold it).
    pub bs_bytes: u64,
    /// `--bs 16k:70,1m:30`: the sizes and their weights, ascending (absent for one size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_mix: Option<Vec<BsWeight>>,
    /// `--bs 4k-64k`: the range (absent for one size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_range: Option<BsRange>,
    /// `--bs-write`: the reads' and the writes' (trims' in the trim modes) sizes when they
    /// differ; then `bs_mix` and `bs_range` are absent and `bs_bytes` is the largest of both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_dirs: Option<BsDirs>,
    /// `--block-align`: random offsets are multiples of this (fio's `blockalign`; absent: of
    /// the smallest size of the I/O's direction).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub block_align_bytes: u64,
    pub direct: bool,
    pub open_flags: OpenFlags,
    /// fsync a file after this many writes to it by one thread (0 = never).
    pub fsync_freq: u32,
    /// `--fsync-every`: each thread fsyncs every file it wrote since its last fsync once this
    /// many seconds have passed since its last such sweep (checked as writes complete; None =
    /// never). Documents from before the option read as None.
    #[serde(default)]
    pub fsync_every_s: Option<f64>,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub fsync_mode: FsyncMode,
    pub rw_ratio: f64,
    pub distribution: Distribution,
    pub seed: u64,
    /// Total offered load in I/Os per second across all threads (None = as fast as possible).
    pub rate_iops: Option<u64>,
    /// `--no-spin`: paced threads sleep to each slot and never spin on the clock before it
    /// (absent: a thread spins the last µs before a slot when a CPU is left to spare;
    /// docs/measurement.md, Paced latency).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_spin: bool,
    pub limit: Limit,
    /// With `--ops`/`--io-size` and `--time`: also stop after this many measured seconds,
    /// whichever comes first (fio's `runtime=` without `time_based`). Absent: the quota alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_s: Option<f64>,
    pub ramp_s: f64,
    /// `--verify`: every written block carries a checked header, every read is checked, and each
    /// thread keeps to its own part of the set (docs/verify.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    /// `--verify-backlog N` (fio's `verify_backlog`): each thread reads back and checks its last
    /// N writes every N writes, and what is left when its writes are done (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verify_backlog: u64,
    /// `--random-map`: how random offsets are drawn (absent: with replacement).
    #[serde(default, skip_serializing_if = "is_off")]
    pub random_map: RandomMap,
    /// A job file's fio seeds: its offsets and mix drawn as fio draws them (absent: iolab's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_rand: Option<FioRand>,
    /// fio's `write_bw_log`/`write_lat_log`/`write_iops_log` of a job run from a job file: the
    /// log files its threads write after the phase (docs/fio-jobs.md, Log files). Not part of
    /// the documents.
    #[serde(skip)]
    #[schemars(skip)]
    pub fio_logs: Option<FioLogs>,
    /// `--buffers`: what writes hold (absent: pseudo-random bytes, scrambled per write).
    #[serde(
        default,
        skip_serializing_if = "crate::model::buffers::Buffers::is_default"
    )]
    #[schemars(with = "Option<String>")]
    pub buffers: crate::model::buffers::Buffers,
    /// `--cpus`: the CPUs the threads run on (absent: where the scheduler puts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub cpus: Option<crate::model::placement::Cpus>,
    /// `--ioprio`: the threads' I/O priority (absent: the default, as the process has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub ioprio: Option<crate::model::placement::IoPrio>,
    /// `--offset-increment`: thread N's range starts N times this on, each over all of it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset_increment_bytes: u64,
    /// `--seq-skip` (fio's `rw=...:N`): bytes moved on after each sequential I/O (<0: back).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq_skip_bytes: i64,
    /// `--random-every N` (fio's `rw=randX:N`): random modes draw every Nth offset, the I/Os
    /// between follow the last one (`--random-every-same`: repeat it) (0: every I/O drawn).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub random_every: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub random_every_same: bool,
    /// `--random-pct P` (fio's `percentage_random`): 100 − P, the % of I/Os that follow.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub follow_pct: u8,
    /// fio's options of when I/O is issued (job files: think time, start delay, exitall,
    /// Poisson arrivals, minimum rates, flows; absent: none).
    #[serde(
        default,
        skip_serializing_if = "crate::model::timing::Timing::is_default"
    )]
    pub timing: crate::model::timing::Timing,
    /// fio's `cpuio` and `exec` engines (`no_io` in their `Caps`): what each thread does
    /// instead of I/O (absent for every other engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noio: Option<crate::model::noio::NoIo>,
    /// `--replay TRACE`: the job replays the trace instead of drawing its own I/O (absent
    /// otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::model::replay::Replay>,
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

fn is_off(m: &RandomMap) -> bool {
    *m == RandomMap::Off
}

impl Job {
    /// How long the job measures at most: `--time`, or the cap beside a quota (`max_time_s`).
    pub fn time_limit_s(&self) -> Option<f64> {
        match self.limit {
            Limit::TimeS(t) => Some(t),
            Limit::Ops(_) | Limit::Bytes(_) => self.max_time_s,
        }
    }

    /// When the job is stopped, seconds after its measured window starts: its time limit, or
    /// for `--like`'s open-loop stream (which ends itself at its time) that and 10 % and 1 s
    /// more, so that a stream its target kept behind is still judged by its own end.
    pub fn deadline_s(&self) -> Option<f64> {
        let t = self.time_limit_s()?;
        let open_twin = self
            .replay
            .as_ref()
            .is_some_and(|r| r.like.is_some() && !r.closed);
        Some(if open_twin { t * 1.1 + 1.0 } else { t })
    }

    /// Whether the job fsyncs while it runs (`--fsync-freq`, `--fsync-all`, `--fsync-every`
    /// or a replayed trace's flushes), not only at the end of the mode.
    pub fn syncs_while_running(&self) -> bool {
        self.fsync_freq > 0
            || self.fsync_all
            || self.fsync_every_s.is_some()
            || self.replay.is_some()
    }

    /// The distinct sizes of the reads and writes, ascending (one entry for a single size):
    /// the per-size statistics' order.
    pub fn bs_sizes(&self) -> Vec<u64> {
        let mut v = self.bs_side(false).sizes();
        if self.bs_dirs.is_some() {
            v.extend(self.bs_side(true).sizes());
            v.sort_unstable();
            v.dedup();
        }
        v
    }

    /// The sizes of the reads (`write` false) or of the writes and trims.
    pub fn bs_side(&self, write: bool) -> BsSide {
        match &self.bs_dirs {
            Some(d) if write => d.write.clone(),
            Some(d) => d.read.clone(),
            None => BsSide {
                bs_bytes: self.bs_bytes,
                bs_mix: self.bs_mix.clone(),
                bs_range: self.bs_range,
            },
        }
    }

    /// `--bs` as people write it: `16KiB`, `16KiB:70,1MiB:30`, `4KiB-64KiB`; with `--bs-write`
    /// the reads' then the writes': `64KiB / 1MiB`.
    pub fn bs_label(&self) -> String {
        match &self.bs_dirs {
            Some(d) => format!("{} / {}", d.read.label(), d.write.label()),
            None => self.bs_side(false).label(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_parsed_by_name_alias_and_fio_name() {
        for (s, k) in [
            ("sync", EngineKind::Sync),
            ("psync", EngineKind::Sync),
            ("io_uring", EngineKind::IoUring),
            ("uring", EngineKind::IoUring),
            ("libaio", EngineKind::Libaio),
            ("mmap", EngineKind::Mmap),
            ("null", EngineKind::Null),
            ("falloc", EngineKind::Falloc),
            ("ftruncate", EngineKind::Ftruncate),
        ] {
            assert_eq!(s.parse::<EngineKind>().unwrap(), k);
        }
        assert_eq!(
            "aio".parse::<EngineKind>().unwrap_err(),
            "'aio' is not an engine: use sync, io_uring, libaio, posixaio, mmap, falloc, ftruncate, filecreate, filestat, filedelete, cpuio, exec or null"
        );
        for f in ["sync", "psync", "pvsync", "pvsync2", "vsync"] {
            assert_eq!(EngineKind::from_fio(f), Some(EngineKind::Sync));
        }
        assert_eq!(EngineKind::from_fio("posixaio"), Some(EngineKind::Posixaio));
        assert_eq!(EngineKind::from_fio("solarisaio"), None);
        for &k in EngineKind::ALL {
            assert_eq!(EngineKind::from_fio(k.caps().fio[0]), Some(k));
        }
    }

    #[test]
    fn a_file_set_without_layout_reads_as_overwrite_and_layouts_round_trip() {
        let old = r#"{"dir": "/d", "files": 2, "total_bytes": 2048, "file_size_bytes": 1024}"#;
        let s: FileSetSpec = serde_json::from_str(old).unwrap();
        assert_eq!(s.layout, Layout::Overwrite);
        for l in Layout::ALL {
            assert_eq!(l.name().parse::<Layout>(), Ok(l));
            let v = serde_json::to_value(FileSetSpec {
                layout: l,
                ..s.clone()
            })
            .unwrap();
            assert_eq!(v["layout"], l.name());
        }
        assert!("sparse".parse::<Layout>().unwrap_err().contains("holes"));
    }
}
