//! The resolved description of what to run: plain types, no CLI parsing here.

use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// sysbench fileio test modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Sequential write into freshly truncated files (allocating writes).
    Seqwr,
    /// Sequential rewrite of the prepared blocks in place.
    Seqrewr,
    /// Sequential read.
    Seqrd,
    /// Random read.
    Rndrd,
    /// Random write (overwrite in place).
    Rndwr,
    /// Random mix of reads and writes, `rw_ratio` reads per write.
    Rndrw,
}

impl Mode {
    pub const ALL: [Mode; 6] = [
        Mode::Seqwr,
        Mode::Seqrewr,
        Mode::Seqrd,
        Mode::Rndrd,
        Mode::Rndwr,
        Mode::Rndrw,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Mode::Seqwr => "seqwr",
            Mode::Seqrewr => "seqrewr",
            Mode::Seqrd => "seqrd",
            Mode::Rndrd => "rndrd",
            Mode::Rndwr => "rndwr",
            Mode::Rndrw => "rndrw",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, Mode::Rndrd | Mode::Rndwr | Mode::Rndrw)
    }
    pub fn writes(self) -> bool {
        matches!(
            self,
            Mode::Seqwr | Mode::Seqrewr | Mode::Rndwr | Mode::Rndrw
        )
    }
    pub fn reads(self) -> bool {
        matches!(self, Mode::Seqrd | Mode::Rndrd | Mode::Rndrw)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| {
                format!("'{s}' is not a mode: use seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw")
            })
    }
}

/// How I/O is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite, one I/O at a time per thread.
    Sync,
    /// io_uring with `iodepth` I/Os in flight per thread.
    IoUring,
    /// Memory-mapped files: reads and writes are memory copies, fsync is msync(MS_SYNC).
    Mmap,
    /// No I/O at all: measures iolab's own per-I/O cost.
    Null,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Mmap => "mmap",
            EngineKind::Null => "null",
        }
    }
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sync" | "psync" => Ok(EngineKind::Sync),
            "io_uring" | "uring" => Ok(EngineKind::IoUring),
            "mmap" => Ok(EngineKind::Mmap),
            "null" => Ok(EngineKind::Null),
            _ => Err(format!(
                "'{s}' is not an engine: use sync, io_uring, mmap or null"
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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

/// Distribution of random block offsets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
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
}

impl FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{s}' is not a distribution: use uniform, zipf:THETA (THETA > 0, e.g. zipf:1.2) or pareto:H (0 < H < 1, e.g. pareto:0.9)"
            )
        };
        if s == "uniform" {
            return Ok(Distribution::Uniform);
        }
        let (k, v) = s.split_once(':').ok_or_else(bad)?;
        let x: f64 = v.parse().map_err(|_| bad())?;
        match k {
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
        }
    }
}

/// Extra open(2) flags for the data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct FileSetSpec {
    pub dir: PathBuf,
    pub files: u32,
    /// Total size of the set in bytes (files × file_size_bytes).
    pub total_bytes: u64,
    /// Size of each file in bytes: requested total / files, rounded down to a multiple of the largest block size.
    pub file_size_bytes: u64,
    /// What the files hold before each mode (documents before `--layout` had none: overwrite).
    #[serde(default)]
    pub layout: Layout,
}

/// When the run stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Measure for this many seconds (after the ramp).
    TimeS(f64),
    /// Exactly this many read+write operations in total across all threads (fsyncs come on top).
    Ops(u64),
}

/// One fully resolved workload cell: everything a worker needs.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Job {
    pub mode: Mode,
    pub engine: EngineKind,
    pub threads: u32,
    pub iodepth: u32,
    pub bs_bytes: u64,
    pub direct: bool,
    pub open_flags: OpenFlags,
    /// fsync a file after this many writes to it by one thread (0 = never).
    pub fsync_freq: u32,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub fsync_mode: FsyncMode,
    pub rw_ratio: f64,
    pub distribution: Distribution,
    pub seed: u64,
    /// Total offered load in I/Os per second across all threads (None = as fast as possible).
    pub rate_iops: Option<u64>,
    pub limit: Limit,
    pub ramp_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

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
