//! IOZone and Bonnie++ suite results (`iolab suite`, docs/experiments.md), as stored.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What [`iozone`] runs. Sizes in bytes, multiples of 1 KiB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IozoneRow {
    pub file_kb: u64,
    pub reclen_kb: u64,
    /// KB/s (KB = 1024 bytes) per test, in the order of [`IozoneResult::tests`]; `None` for a
    /// test that was not run (the stdio tests with `direct`).
    pub kb_per_sec: Vec<Option<u64>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Run although `size` is below twice the RAM (Bonnie++ refuses that unless `-r` fakes the
    /// RAM); the result then carries a warning.
    #[serde(default)]
    pub force: bool,
}

/// One bonnie++ test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(from = "BonnieStatIn")]
pub struct BonnieStat {
    /// KiB/s ("K/sec") for the data tests, operations per second for seeks and the file tests;
    /// None: the test took less than 500 ms, too fast to measure (`+++++`).
    pub value: Option<f64>,
    /// User + system CPU time of the process / wall time × 100 (`%CP`); None when too fast.
    pub cpu_pct: Option<f64>,
    /// The longest single operation, ns (Bonnie++ prints it in µs or ms; `iolab-bonnie/1`
    /// documents stored it as `max_latency_us`, read back here × 1000).
    pub max_latency_ns: u64,
    /// Wall time of the test, s.
    pub seconds: f64,
    /// Operations timed: chunks, seeks or files.
    pub ops: u64,
}

/// [`BonnieStat`] as read: `iolab-bonnie/2` (`max_latency_ns`) or `iolab-bonnie/1`
/// (`max_latency_us`).
#[derive(Deserialize, schemars::JsonSchema)]
struct BonnieStatIn {
    value: Option<f64>,
    cpu_pct: Option<f64>,
    #[serde(default)]
    max_latency_ns: Option<u64>,
    #[serde(default)]
    max_latency_us: Option<u64>,
    seconds: f64,
    ops: u64,
}

impl From<BonnieStatIn> for BonnieStat {
    fn from(s: BonnieStatIn) -> Self {
        BonnieStat {
            value: s.value,
            cpu_pct: s.cpu_pct,
            max_latency_ns: s
                .max_latency_ns
                .or(s.max_latency_us.map(|us| us.saturating_mul(1000)))
                .unwrap_or(0),
            seconds: s.seconds,
            ops: s.ops,
        }
    }
}

/// A bonnie++ run. A test that was not run (size or files 0, stopped before it) is None.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BonnieResult {
    /// `iolab-<version>` (see [`bonnie_version`]).
    pub version: String,
    pub machine: String,
    /// Always 1 (bonnie++ -c).
    pub concurrency: u32,
    pub seed: u64,
    /// Size of the data file, bytes (`file_size` in `iolab-bonnie/1`).
    #[serde(alias = "file_size")]
    pub file_size_bytes: u64,
    /// Bytes per block operation (`chunk` in `iolab-bonnie/1`).
    #[serde(alias = "chunk")]
    pub chunk_bytes: u64,
    /// In multiples of 1024.
    pub files: u32,
    /// Random seeks asked for (bonnie++ -s size:chunk:seeks); 0 in documents before it was
    /// recorded (the seeks test's `ops` is the same number when it ran).
    #[serde(default)]
    pub seek_count: u32,
    /// Threads doing the seeks (bonnie++'s seeker processes); 0 in documents before it was
    /// recorded (it was always 3).
    #[serde(default)]
    pub seek_procs: u32,
    /// Bytes the per-character tests write and read, one system call per byte like bonnie++
    /// 2.00 (the first 3 MiB of the file, or all of a smaller one); 0 in documents before it
    /// was recorded (they went through the whole file with a buffer).
    #[serde(default)]
    pub char_io_bytes: u64,
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
    /// What makes the figures doubtful, e.g. `bonnie_size_below_2x_ram` (a file below twice the
    /// RAM, run with `--force`).
    #[serde(default)]
    pub warnings: Vec<crate::model::run::Warning>,
}

impl BonnieResult {
    /// Seeks asked for: [`BonnieResult::seek_count`], or the seeks test's operations in older
    /// documents; 0 when no seeks were asked for.
    pub fn seeks_asked(&self) -> u32 {
        if self.seek_count > 0 {
            self.seek_count
        } else {
            self.seeks.as_ref().map_or(0, |s| s.ops as u32)
        }
    }
    /// Seeker threads: [`BonnieResult::seek_procs`], or 3 in older documents.
    pub fn seekers(&self) -> u32 {
        if self.seek_procs > 0 {
            self.seek_procs
        } else {
            SEEK_THREADS
        }
    }
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

/// One figure of a suite or zones result in the shape of a stored `metrics` row
/// (docs/results.md, "One measurement shape"): what `compare` and `export --format csv` read.
/// Plain data; the store writes one row per value, numbering the cells in this order.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteMetric {
    /// The cell's name, unique within one result (`compare` matches cells by it):
    /// `write file=64KiB rec=4KiB`, `put_block`, `zone 03`.
    pub mode: String,
    /// `read` or `write`; bonnie++'s `seek`, `create`, `stat`, `delete`.
    pub op: &'static str,
    pub threads: Option<u32>,
    /// Bytes per operation.
    pub bs_bytes: Option<u64>,
    pub ops: u64,
    pub bytes: u64,
    /// Operations per second.
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// ns; only where the suite measures it.
    pub lat_mean_ns: Option<f64>,
    /// ns; only where the suite measures it.
    pub lat_max_ns: Option<f64>,
}

/// Bytes per IOZone/Bonnie++ KB (both mean KiB).
const KB: f64 = 1024.0;

/// Threads of bonnie++'s random seeks test: `workloads::suites::BONNIE_SEEK_THREADS`, which
/// model cannot name (tests/suites.rs keeps the two equal).
const SEEK_THREADS: u32 = 3;

impl IozoneResult {
    /// One cell per (file size, record size, test) that ran, in row order then test order.
    /// mode `TEST file=SIZE rec=SIZE` (TEST as in [`IozoneResult::tests`]); op `write` for the
    /// tests whose name says write, else `read`; one thread; `bs_bytes` = the record size.
    /// `bytes_per_sec` = KB/s × 1024; every test moves the file in records, so `ops` = file /
    /// record size, `bytes` = ops × record size (what iozone moves, not counted), `iops` =
    /// bytes_per_sec / record size. IOZone measures no latency.
    pub fn metric_rows(&self) -> Vec<SuiteMetric> {
        let mut out = Vec::new();
        for row in &self.rows {
            let rec = row.reclen_kb * 1024;
            let file = crate::model::units::Bytes(row.file_kb * 1024);
            let recs = row.file_kb.checked_div(row.reclen_kb).unwrap_or(0);
            for (test, v) in self.tests.iter().zip(&row.kb_per_sec) {
                let Some(kbs) = v else { continue };
                let bytes_per_sec = *kbs as f64 * KB;
                out.push(SuiteMetric {
                    mode: format!("{test} file={file} rec={}", crate::model::units::Bytes(rec)),
                    op: if test.contains("write") {
                        "write"
                    } else {
                        "read"
                    },
                    threads: Some(1),
                    bs_bytes: Some(rec),
                    ops: recs,
                    bytes: recs * rec,
                    iops: if rec > 0 {
                        bytes_per_sec / rec as f64
                    } else {
                        0.0
                    },
                    bytes_per_sec,
                    lat_mean_ns: None,
                    lat_max_ns: None,
                });
            }
        }
        out
    }
}

impl BonnieResult {
    /// One cell per test that ran, mode = the test's field name (`putc`, `put_block`, `rewrite`,
    /// `getc`, `get_block`, `seeks`, `seq_create`, `seq_stat`, `seq_del`, `ran_create`,
    /// `ran_stat`, `ran_del`).
    ///
    /// Data tests: op `write` (putc, put_block, rewrite: bonnie++ counts rewrite, a read and a
    /// write back of each chunk, as output) or `read` (getc, get_block); `bs_bytes` = chunk,
    /// `ops` = chunks, `bytes` = ops × chunk, `bytes_per_sec` = K/sec × 1024, `iops` =
    /// bytes_per_sec / chunk. Seeks: op `seek`, `iops` = seeks/sec, bytes 0, 3 threads. File
    /// tests: op `create`, `stat` or `delete`, `iops` = files/sec, bytes 0. Latency: bonnie++'s
    /// maximum as `lat_max_ns`; it reports no mean. A test too fast for
    /// bonnie++ to rate (`+++++`, under 0.5 s) keeps the rate of its operations over its wall
    /// time, which is what K/sec would have been.
    pub fn metric_rows(&self) -> Vec<SuiteMetric> {
        let chunk = self.chunk_bytes;
        let tests: [(&str, &Option<BonnieStat>, &'static str); 12] = [
            ("putc", &self.putc, "write"),
            ("put_block", &self.put_block, "write"),
            ("rewrite", &self.rewrite, "write"),
            ("getc", &self.getc, "read"),
            ("get_block", &self.get_block, "read"),
            ("seeks", &self.seeks, "seek"),
            ("seq_create", &self.seq_create, "create"),
            ("seq_stat", &self.seq_stat, "stat"),
            ("seq_del", &self.seq_del, "delete"),
            ("ran_create", &self.ran_create, "create"),
            ("ran_stat", &self.ran_stat, "stat"),
            ("ran_del", &self.ran_del, "delete"),
        ];
        let mut out = Vec::new();
        for (name, s, op) in tests {
            let Some(s) = s else { continue };
            let data = matches!(op, "read" | "write");
            // the figure bonnie++ prints (K/sec or /sec), else the same from ops and time
            let secs = s.seconds.max(1e-9);
            let (bytes, bytes_per_sec, iops) = if data {
                let bytes = s.ops * chunk;
                let bps = s.value.map_or(bytes as f64 / secs, |k| k * KB);
                let iops = if chunk > 0 { bps / chunk as f64 } else { 0.0 };
                (bytes, bps, iops)
            } else {
                (0, 0.0, s.value.unwrap_or(s.ops as f64 / secs))
            };
            out.push(SuiteMetric {
                mode: name.to_string(),
                op,
                threads: Some(if name == "seeks" {
                    SEEK_THREADS
                } else {
                    self.concurrency.max(1)
                }),
                bs_bytes: (data || name == "seeks").then_some(chunk),
                ops: s.ops,
                bytes,
                iops,
                bytes_per_sec,
                lat_mean_ns: None,
                lat_max_ns: Some(s.max_latency_ns as f64),
            });
        }
        out
    }
}
