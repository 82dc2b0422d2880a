//! `Mode`: what a job's threads do (sysbench fileio's test modes, fio's `rw` patterns, and the
//! trim modes).

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// sysbench fileio test modes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
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
    /// Sequential mix of reads and writes (fio's `rw=readwrite`), `rw_ratio` reads per write:
    /// the reads and the writes each go through the thread's range in order, each from its own
    /// position (as fio keeps one per direction); the writes overwrite in place.
    Seqrw,
    /// Sequential trim (fio's `rw=trim`): a hole punched in a file
    /// (`fallocate(PUNCH_HOLE | KEEP_SIZE)`), a discard on a device (`BLKDISCARD`).
    Seqtrim,
    /// Random trim (fio's `rw=randtrim`).
    Rndtrim,
    /// Sequential trims, each followed by a write of the same size at the same offset (fio's
    /// `rw=trimwrite`).
    Seqtrimwr,
    /// Random trims, each followed by a write of the same size at the same offset (fio's
    /// `rw=randtrimwrite`).
    Rndtrimwr,
}

impl Mode {
    pub const ALL: [Mode; 11] = [
        Mode::Seqwr,
        Mode::Seqrewr,
        Mode::Seqrd,
        Mode::Rndrd,
        Mode::Rndwr,
        Mode::Rndrw,
        Mode::Seqrw,
        Mode::Seqtrim,
        Mode::Rndtrim,
        Mode::Seqtrimwr,
        Mode::Rndtrimwr,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Mode::Seqwr => "seqwr",
            Mode::Seqrewr => "seqrewr",
            Mode::Seqrd => "seqrd",
            Mode::Rndrd => "rndrd",
            Mode::Rndwr => "rndwr",
            Mode::Rndrw => "rndrw",
            Mode::Seqrw => "seqrw",
            Mode::Seqtrim => "seqtrim",
            Mode::Rndtrim => "rndtrim",
            Mode::Seqtrimwr => "seqtrimwr",
            Mode::Rndtrimwr => "rndtrimwr",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Mode::Rndrd | Mode::Rndwr | Mode::Rndrw | Mode::Rndtrim | Mode::Rndtrimwr
        )
    }
    /// Whether the mode changes the target's data: it writes or trims (a device needs
    /// `--destructive`, files are opened for writing).
    pub fn writes(self) -> bool {
        self.issues_writes() || self.trims()
    }
    /// Whether the mode issues writes (the trim-and-write modes do, after each trim).
    pub fn issues_writes(self) -> bool {
        matches!(
            self,
            Mode::Seqwr
                | Mode::Seqrewr
                | Mode::Rndwr
                | Mode::Rndrw
                | Mode::Seqrw
                | Mode::Seqtrimwr
                | Mode::Rndtrimwr
        )
    }
    /// Whether the mode trims (fio's trim directions).
    pub fn trims(self) -> bool {
        matches!(
            self,
            Mode::Seqtrim | Mode::Rndtrim | Mode::Seqtrimwr | Mode::Rndtrimwr
        )
    }
    /// Each trim followed by a write of the same size at the same offset (`trimwrite`).
    pub fn trim_then_write(self) -> bool {
        matches!(self, Mode::Seqtrimwr | Mode::Rndtrimwr)
    }
    pub fn reads(self) -> bool {
        matches!(self, Mode::Seqrd | Mode::Rndrd | Mode::Rndrw | Mode::Seqrw)
    }
    /// A mix of reads and writes in one mode (`rw_ratio` reads per write).
    pub fn is_mixed(self) -> bool {
        matches!(self, Mode::Rndrw | Mode::Seqrw)
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
                format!(
                    "'{s}' is not a mode: use seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw, seqrw, seqtrim, rndtrim, seqtrimwr or rndtrimwr"
                )
            })
    }
}
