//! IOZone and Bonnie++ suite results (`iolab suite`, docs/experiments.md), as stored.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What [`iozone`] runs. Sizes in bytes, multiples of 1 KiB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IozoneOpts {
    /// Directory for the temporary file.
    pub dir: PathBuf,
    /// Smallest file size (iozone -n; default 64 KiB).
    pub min_file: u64,
    /// Largest file size (iozone -g; default 512 MiB).
    pub max_file: u64,
    /// Smallest record size (iozone -y; default 4 KiB).
    pub min_rec: u64,
    /// Largest record size (iozone -q; default 16 MiB).
    pub max_rec: u64,
    /// O_DIRECT (iozone -I); the stdio tests are skipped.
    pub direct: bool,
    /// Time an fsync at the end of each write test (iozone -e).
    pub include_flush: bool,
    /// Also small records on files past the crossover (iozone -z).
    pub all_records: bool,
}

/// One (file size, record size) pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IozoneRow {
    pub file_kb: u64,
    pub reclen_kb: u64,
    /// KB/s (KB = 1024 bytes) per test, in the order of [`IozoneResult::tests`]; `None` for a
    /// test that was not run (the stdio tests with `direct`).
    pub kb_per_sec: Vec<Option<u64>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IozoneResult {
    /// Column order: [`IOZONE_TESTS`].
    pub tests: Vec<String>,
    pub rows: Vec<IozoneRow>,
    pub direct: bool,
    pub include_flush: bool,
    /// Stopped early: `rows` holds the pairs completed before.
    pub interrupted: bool,
}

/// What [`bonnie`] runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BonnieOpts {
    /// Directory for the test file and the file-test subdirectory.
    pub dir: PathBuf,
    /// Bytes of the data file (bonnie++ -s); a multiple of `chunk`; 0 skips the data tests.
    /// The default, 2 × RAM like bonnie++, is read from /proc/meminfo (2 GiB when unknown).
    pub size: u64,
    /// Bytes per block operation (bonnie++ -s size:chunk; default 8 KiB).
    pub chunk: u64,
    /// Files for the file tests, in multiples of 1024 (bonnie++ -n; default 16); 0 skips them.
    pub files: u32,
    /// Random seeks in all (bonnie++ default 8000); 0 skips the test.
    pub seeks: u32,
    /// Machine name for the report (bonnie++ -m; default: the host name).
    pub machine: String,
    /// Seed of the random orders and seek offsets (bonnie++ -z); None: from the clock, like
    /// bonnie++. The seed used is in the result.
    pub seed: Option<u64>,
}

/// One bonnie++ test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BonnieStat {
    /// KiB/s ("K/sec") for the data tests, operations per second for seeks and the file tests;
    /// None: the test took less than 500 ms, too fast to measure (`+++++`).
    pub value: Option<f64>,
    /// User + system CPU time of the process / wall time × 100 (`%CP`); None when too fast.
    pub cpu_pct: Option<f64>,
    /// The longest single operation, µs.
    pub max_latency_us: u64,
    /// Wall time of the test, s.
    pub seconds: f64,
    /// Operations timed: chunks, seeks or files.
    pub ops: u64,
}

/// A bonnie++ run. A test that was not run (size or files 0, stopped before it) is None.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BonnieResult {
    /// `iolab-<version>` (see [`bonnie_version`]).
    pub version: String,
    pub machine: String,
    /// Always 1 (bonnie++ -c).
    pub concurrency: u32,
    pub seed: u64,
    /// Bytes.
    pub file_size: u64,
    /// Bytes.
    pub chunk: u64,
    /// In multiples of 1024.
    pub files: u32,
    pub putc: Option<BonnieStat>,
    pub put_block: Option<BonnieStat>,
    pub rewrite: Option<BonnieStat>,
    pub getc: Option<BonnieStat>,
    pub get_block: Option<BonnieStat>,
    pub seeks: Option<BonnieStat>,
    pub seq_create: Option<BonnieStat>,
    pub seq_stat: Option<BonnieStat>,
    pub seq_del: Option<BonnieStat>,
    pub ran_create: Option<BonnieStat>,
    pub ran_stat: Option<BonnieStat>,
    pub ran_del: Option<BonnieStat>,
    pub interrupted: bool,
}

impl BonnieResult {
    pub fn data_tests(&self) -> [(&Option<BonnieStat>, bool); 6] {
        [
            (&self.putc, false),
            (&self.put_block, false),
            (&self.rewrite, false),
            (&self.getc, false),
            (&self.get_block, false),
            (&self.seeks, true),
        ]
    }
    pub fn file_tests(&self) -> [&Option<BonnieStat>; 6] {
        [
            &self.seq_create,
            &self.seq_stat,
            &self.seq_del,
            &self.ran_create,
            &self.ran_stat,
            &self.ran_del,
        ]
    }
}
