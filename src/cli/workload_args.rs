//! The workloads beside `iolab run`: `db`, the suites (IOZone, Bonnie++, sysbench fileio) and
//! `zones`.

use super::*;
use clap::{Args, Subcommand};

#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "rank_timeout",
    help(
        "Under mpirun: how long a rank may send no heartbeat (stopped, hung) or run its transactions without completing any before rank 0 ends the run, names it and saves what the other ranks measured, marked incomplete (docs/distributed.md): 10s, 500ms, 30"
    )
))]
pub struct DbRunArgs {
    /// run (default), prepare (create and load the tables) or cleanup (drop iolab's tables).
    #[arg(value_parser = ["run", "prepare", "cleanup"], default_value = "run")]
    pub action: String,
    /// sqlite:///path/file.db, postgres://user:pass@host:port/db (or ?host=/socket/dir),
    /// mysql://user:pass@host:port/db. Default: an SQLite database iolab.db under --dir.
    #[arg(long)]
    pub url: Option<String>,
    /// Directory for the default SQLite database.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// update-loop, point-select, update-index, update-non-index, insert, read-write.
    #[arg(long, default_value = "read-write")]
    pub test: String,
    /// UPDATEs in the update-loop test.
    #[arg(long, default_value_t = 1000, value_parser = at_least_one::<u64>)]
    pub iterations: u64,
    /// Tables for the OLTP tests.
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub tables: u32,
    /// Rows per table.
    #[arg(long, default_value_t = 10000, value_parser = at_least_one::<u64>)]
    pub table_size: u64,
    /// Client connections (threads).
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub threads: u32,
    /// Seconds to run (default 10).
    #[arg(long, conflicts_with = "transactions", value_parser = seconds)]
    pub time: Option<f64>,
    /// Exact number of transactions in total.
    #[arg(long, value_parser = at_least_one::<u64>)]
    pub transactions: Option<u64>,
    /// explicit (BEGIN ... COMMIT around each transaction; default for read-write) or auto
    /// (each statement commits by itself; default for the single-statement tests).
    #[arg(long)]
    pub trx: Option<String>,
    /// Shorthand for --trx auto.
    #[arg(long, conflicts_with = "trx")]
    pub autocommit: bool,
    /// SQLite journal_mode (delete, truncate, persist, wal, memory, off).
    #[arg(long, default_value = "wal")]
    pub journal_mode: String,
    /// SQLite synchronous (off, normal, full, extra).
    #[arg(long, default_value = "full")]
    pub synchronous: String,
    /// SQLite page_size in bytes (for a new database): a power of two from 512 to 65536.
    #[arg(long, default_value_t = 4096, value_parser = sqlite_page_size)]
    pub page_size: u32,
    /// Seed for random rows and ids.
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    /// Do not save the results in the results store.
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub label: LabelArg,
    #[command(flatten)]
    pub tag: TagArgs,
    #[command(flatten)]
    pub quiet: QuietArg,
    /// Print one line per N seconds while running (TPS and p99 latency) on stderr, also when it
    /// is not a terminal and with -q.
    #[arg(long, value_name = "N", value_parser = interval_s, allow_negative_numbers = true)]
    pub report_interval: Option<f64>,
    #[command(flatten)]
    pub rank: RankTimeoutArg,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Args, Debug, Clone)]
pub struct SuiteArgs {
    #[command(subcommand)]
    pub which: SuiteCmd,
}

#[derive(Subcommand, Debug, Clone)]
pub enum SuiteCmd {
    /// IOZone's automatic mode: file sizes x record sizes, 13 tests, KB/s.
    Iozone(IozoneArgs),
    /// Bonnie++: per-char and block I/O, rewrite, seeks, file create/stat/delete.
    Bonnie(BonnieArgs),
    /// The classic sysbench fileio file benchmark (the MySQL storage comparison): 64 files, 1/4/16 GiB, 1/4/8 threads, 16 KiB, every
    /// mode, O_DIRECT.
    SysbenchFileio(SbFileioArgs),
    /// SNIA PTS's client tests (docs/steady-state.md): purge, preconditioning (128 KiB sequential
    /// writes over twice the capacity), then the IOPS (7 mixes x 8 block sizes), throughput
    /// (128 KiB and 1 MiB sequential) and latency (3 mixes x 3 sizes at depth 1) tests, each in
    /// rounds until steady over 5 rounds, and write saturation. --quick: minutes, not hours.
    Pts(PtsArgs),
}

#[derive(Args, Debug, Clone)]
pub struct PtsArgs {
    /// A directory for the test file (one file of --size; it cannot be purged).
    #[arg(long, conflicts_with = "device")]
    pub dir: Option<PathBuf>,
    /// A block device, tested over --offset .. --offset+--size (default: all of it); needs
    /// --destructive (everything on it is destroyed); a device in use is refused.
    #[arg(long, value_name = "PATH")]
    pub device: Option<PathBuf>,
    /// Allow the suite to write to --device, destroying its data (as `iolab run --destructive`;
    /// wipe-signatures first wipes every signature libblkid finds).
    #[arg(long, value_name = "WHAT", num_args = 0..=1, require_equals = true, default_missing_value = "yes", value_parser = ["yes", "wipe-signatures"])]
    pub destructive: Option<String>,
    /// The capacity tested: the test file's size [default: 1G], or the range of --device
    /// [default: the whole device].
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,
    /// Where the range starts on --device.
    #[arg(long, value_parser = size_arg, requires = "device")]
    pub offset: Option<u64>,
    /// Which tests, in this order: iops, throughput, latency, wsat (write saturation).
    #[arg(
        long,
        default_value = "iops,throughput,latency,wsat",
        value_name = "LIST"
    )]
    pub tests: String,
    /// Scale the suite to minutes: cells of 0.5 s, at most 10 rounds per test, write
    /// saturation in rounds of 1 s for at most 60 s (PTS: cells of 60 s, 25 rounds, rounds of
    /// 60 s for up to 24 h).
    #[arg(long)]
    pub quick: bool,
    /// Seconds each cell of a round runs (overrides PTS's 60 and --quick's 0.5).
    #[arg(long, value_parser = seconds, value_name = "S")]
    pub cell_time: Option<f64>,
    /// The most rounds of a test before it is reported as not steady (at least 5) [PTS: 25;
    /// --quick: 10].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Write saturation's most seconds [PTS: 86400; --quick: 60].
    #[arg(long, value_parser = seconds, value_name = "S")]
    pub wsat_time: Option<f64>,
    /// Write saturation's round, seconds [PTS: 60; --quick: 1].
    #[arg(long, value_parser = seconds, value_name = "S")]
    pub wsat_round: Option<f64>,
    /// How I/O is issued (as `iolab run --engine`).
    #[arg(long, default_value = "sync")]
    pub engine: String,
    /// Threads of the IOPS and throughput tests (the latency test runs one).
    #[arg(long, default_value_t = 4, value_parser = at_least_one::<u32>)]
    pub threads: u32,
    /// I/Os in flight per thread (io_uring, libaio; the latency test runs one).
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub iodepth: u32,
    /// Do not save the results in the results store.
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub quiet: QuietArg,
}

#[derive(Args, Debug, Clone)]
pub struct IozoneArgs {
    /// Directory for the test files.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Smallest file size (iozone -n).
    #[arg(long, default_value = "64k", value_parser = size_arg)]
    pub min_file: u64,
    /// Largest file size (iozone -g).
    #[arg(long, default_value = "512M", value_parser = size_arg)]
    pub max_file: u64,
    /// Smallest record size (iozone -y).
    #[arg(long, default_value = "4k", value_parser = size_arg)]
    pub min_rec: u64,
    /// Largest record size (iozone -q).
    #[arg(long, default_value = "16M", value_parser = size_arg)]
    pub max_rec: u64,
    /// O_DIRECT (iozone -I).
    #[arg(long)]
    pub direct: bool,
    /// Include fsync in the write timings (iozone -e).
    #[arg(long)]
    pub include_flush: bool,
    /// Write the spreadsheet CSV (iozone -b) to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Do not save the results in the results store.
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub quiet: QuietArg,
}

#[derive(Args, Debug, Clone)]
pub struct BonnieArgs {
    /// Directory for the test files.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// File size for the data tests (default: twice the RAM, like Bonnie++).
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,
    /// Chunk size of block I/O.
    #[arg(long, default_value = "8k", value_parser = size_arg)]
    pub chunk: u64,
    /// Files for the create/stat/delete tests, in multiples of 1024 (bonnie -n); 0 skips them.
    #[arg(long, default_value_t = 16)]
    pub files: u32,
    /// Random seeks.
    #[arg(long, default_value_t = 8000)]
    pub seeks: u32,
    /// Run although --size is below twice the RAM (refused otherwise, as Bonnie++ does): the
    /// result then carries a warning.
    #[arg(long)]
    pub force: bool,
    /// Write the Bonnie++ CSV line (what bon_csv2txt and bon_csv2html read) to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Do not save the results in the results store.
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
pub struct SbFileioArgs {
    /// Directory for the file set.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Divide the 1/4/16 GiB sizes by this for small disks (16: 64 MiB/256 MiB/1 GiB).
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u64>)]
    pub scale: u64,
    /// Seconds per cell.
    #[arg(long, default_value_t = 10.0, value_parser = seconds)]
    pub time: f64,
    /// Runs per cell.
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub repeat: u32,
    /// sync, io_uring or libaio.
    #[arg(long, default_value = "sync")]
    pub engine: String,
    /// When --dir holds a set of other sizes: remove its files (iolab-file.N only) and prepare
    /// each cell's set afresh instead of refusing.
    #[arg(long)]
    pub reprepare: bool,
    /// sysbench's --file-io-mode: sync (--engine sync) or async (Linux native AIO, as sysbench
    /// issues it: --engine libaio with --file-async-backlog I/Os in flight per thread).
    #[arg(long, conflicts_with = "engine", value_name = "sync|async")]
    pub file_io_mode: Option<String>,
    /// sysbench's --file-async-backlog: I/Os in flight per thread in async mode.
    #[arg(long, default_value_t = 128, value_parser = at_least_one::<u32>)]
    pub file_async_backlog: u32,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub label: LabelArg,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ZonesArgs {
    /// A block device (/dev/sdb) or a file; only read.
    pub target: PathBuf,
    /// Number of evenly spaced zones (1 to 100000).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub zones: u32,
    /// Bytes read in each zone.
    #[arg(long, default_value = "64M", value_parser = size_arg)]
    pub per_zone: u64,
    /// Read size.
    #[arg(long, default_value = "1M", value_parser = size_arg)]
    pub bs: u64,
    /// Do not save the results in the results store.
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}
