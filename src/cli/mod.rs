//! Command-line definition (clap) and its translation into plain [`Plan`]s. Clap types stop here.

use crate::engine::Direct;
use crate::engine::runner::Plan;
use crate::error::{Error, Result};
use crate::model::job::{
    Distribution, EngineKind, FileSetSpec, FsyncMode, Job, Limit, Mode, OpenFlags,
};
use crate::model::run::Warning;
use crate::model::units::{Bytes, parse_size};
use crate::system::fsinfo;
use clap::{Args, Parser, Subcommand};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const DEFAULT_DIR: &str = "./iolab-data";

#[derive(Parser, Debug)]
#[command(name = "iolab", version, about = "A storage I/O lab for people who run databases", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run file-set workloads (prepares and cleans up the files when they are not there).
    /// With no --mode: a one-minute database storage profile.
    Run(Box<RunArgs>),
    /// Create the file set and evict it from the page cache.
    Prepare(PrepareArgs),
    /// Remove the file set (only iolab-file.N files in --dir).
    Cleanup(FileSetArgs),
    /// A system summary for storage: platform, CPU, memory, kernel settings, block devices,
    /// filesystems, and the stack under PATH.
    Env(EnvArgs),
    /// Check the storage setup for what the seed articles warn about (exit 1 on warnings).
    Check(EnvArgs),
    /// Live device figures like `iostat -x` / pt-diskstats (no benchmark needed).
    Iostat(IostatArgs),
    /// Do flushes reach stable storage? fsync/fdatasync latency against the device's physics.
    FsyncProbe(FsyncProbeArgs),
    /// Database workloads: update-loop and sysbench-OLTP-like tests on SQLite (default),
    /// PostgreSQL or MariaDB/MySQL. `iolab db prepare|run|cleanup`.
    Db(Box<DbRunArgs>),
    /// Sweep run options over lists or ranges (--threads 1,4,8 --size 1G..16G); also
    /// --scheduler/--read-ahead/--nr-requests as axes. Stored as one experiment; resumable.
    Sweep(SweepArgs),
    /// Find where a target stops being met: --target 'mibps>=22' --over size=10G..750G.
    Saturate(SaturateArgs),
    /// Classic suites: iozone (automatic mode), bonnie (Bonnie++), sysbench-fileio (seed 000's
    /// file benchmark as a sweep).
    Suite(SuiteArgs),
    /// Read throughput across the whole device or file, zone by zone (outer vs inner tracks).
    Zones(ZonesArgs),
    /// One self-contained HTML report of a run, a group, an experiment, or a comparison
    /// (several ids, the first is the baseline).
    Report(ReportArgs),
    /// One chart as SVG or PNG (--list shows the chart names).
    Plot(PlotArgs),
    /// List stored runs, newest first.
    List(ListArgs),
    /// Show a stored run (or a group's summary) like the live output.
    Show(ShowArgs),
    /// Delete stored runs (ids) or groups (gN).
    Delete(DeleteArgs),
    /// Compare runs or groups; the first is the baseline.
    Compare(CompareArgs),
    /// Export stored runs as JSON or CSV.
    Export(ExportArgs),
    /// Import fio JSON (json or json+) or sysbench fileio output into the results store.
    Import(ImportArgs),
}

#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// The results store (default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, else ~/.local/share/iolab/results.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct EnvArgs {
    /// A path whose storage stack to describe (default: the current directory).
    pub path: Option<PathBuf>,
    /// Print JSON (schema iolab-env/1, or iolab-check/1 for check).
    #[arg(long)]
    pub json: bool,
    /// Read /proc, /sys and /etc below this directory instead of the live system (fixture trees).
    #[arg(long, hide = true)]
    pub root: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct IostatArgs {
    /// Devices (sda, nvme0n1, /dev/dm-0); default: every device that has done I/O.
    pub devices: Vec<String>,
    /// Seconds between reports.
    #[arg(long, short, default_value_t = 1.0)]
    pub interval: f64,
    /// Stop after this many reports (default: until Ctrl-C).
    #[arg(long, short)]
    pub count: Option<u64>,
    /// One JSON object per interval (NDJSON, schema iolab-iostat/1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct FsyncProbeArgs {
    /// A directory on the storage to probe (default: the current directory).
    pub path: Option<PathBuf>,
    /// Write + sync operations per test.
    #[arg(long, default_value_t = 200)]
    pub count: u64,
    /// Other threads writing meanwhile, for the last test (0 = skip it).
    #[arg(long, default_value_t = 2)]
    pub writers: u32,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
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
    #[arg(long, default_value_t = 1000)]
    pub iterations: u64,
    /// Tables for the OLTP tests.
    #[arg(long, default_value_t = 1)]
    pub tables: u32,
    /// Rows per table.
    #[arg(long, default_value_t = 10000)]
    pub table_size: u64,
    /// Client connections (threads).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Seconds to run (default 10).
    #[arg(long, conflicts_with = "transactions")]
    pub time: Option<f64>,
    /// Exact number of transactions in total.
    #[arg(long)]
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
    /// SQLite page_size in bytes (for a new database).
    #[arg(long, default_value_t = 4096)]
    pub page_size: u32,
    /// Seed for random rows and ids.
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub no_save: bool,
    #[arg(long)]
    pub label: Option<String>,
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Options of `iolab sweep` itself; every other option is a run option (any of them may be a
/// list or range).
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// Axis for the rows of the matrix (default: the first axis).
    #[arg(long)]
    pub rows: Option<String>,
    /// Axis for the columns (default: the second axis).
    #[arg(long)]
    pub cols: Option<String>,
    /// The figure in the matrix: iops, mibps, p50, p90, p99, p99.9, mean.
    #[arg(long, default_value = "iops")]
    pub metric: String,
    /// Continue an interrupted sweep (its group id, e.g. g4): finished cells are not run again.
    #[arg(long)]
    pub resume: Option<String>,
    /// Runs per cell.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Schedulers to compare (list, or all): switched on the disks under --dir and restored.
    #[arg(long)]
    pub scheduler: Option<String>,
    /// read_ahead_kb values to compare (switched and restored).
    #[arg(long)]
    pub read_ahead: Option<String>,
    /// nr_requests values to compare (switched and restored).
    #[arg(long)]
    pub nr_requests: Option<String>,
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub label: Option<String>,
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// The run options (after --; iolab puts them there for you).
    #[arg(last = true, hide = true)]
    pub run_args: Vec<String>,
}

/// Options of `iolab saturate` itself; every other option is a run option.
#[derive(Args, Debug, Clone)]
pub struct SaturateArgs {
    /// The target: mibps>=22, p99<=10ms, iops>=1000 (metrics: iops, mibps, p50, p90, p99, p99.9, mean).
    #[arg(long)]
    pub target: String,
    /// The axis and its range: size=10G..750G, rate=100..5000, threads=1..64.
    #[arg(long)]
    pub over: String,
    /// Resolution: stop when the boundary is known to within this (default: 1/32 of the range).
    #[arg(long)]
    pub step: Option<String>,
    /// At most this many measurements.
    #[arg(long, default_value_t = 12)]
    pub max_steps: u32,
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub label: Option<String>,
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(last = true, hide = true)]
    pub run_args: Vec<String>,
}

/// For `sweep` and `saturate`: moves their own options first and every other option behind
/// `--`, so clap parses the run options later, per cell.
pub fn presplit(argv: Vec<String>) -> Vec<String> {
    let Some(cmd) = argv.get(1).cloned() else {
        return argv;
    };
    let (own_v, own_b): (&[&str], &[&str]) = match cmd.as_str() {
        "sweep" => (
            &[
                "--rows",
                "--cols",
                "--metric",
                "--resume",
                "--repeat",
                "--scheduler",
                "--read-ahead",
                "--nr-requests",
                "--label",
                "--tag",
                "--db",
            ],
            &["--json", "--help", "-h"],
        ),
        "saturate" => (
            &[
                "--target",
                "--over",
                "--step",
                "--max-steps",
                "--label",
                "--tag",
                "--db",
            ],
            &["--json", "--help", "-h"],
        ),
        _ => return argv,
    };
    let mut own = vec![argv[0].clone(), cmd];
    let mut rest = Vec::new();
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--" {
            rest.extend(argv[i + 1..].iter().cloned());
            break;
        }
        let flag = a.split('=').next().unwrap_or("");
        if own_b.contains(&a.as_str()) {
            own.push(a.clone());
        } else if own_v.contains(&flag) {
            own.push(a.clone());
            if !a.contains('=') && i + 1 < argv.len() {
                i += 1;
                own.push(argv[i].clone());
            }
            // labels and tags also go to every run
            if flag == "--label" || flag == "--tag" {
                rest.push(own[own.len() - if a.contains('=') { 1 } else { 2 }].clone());
                if !a.contains('=') {
                    rest.push(own[own.len() - 1].clone());
                }
            }
        } else {
            rest.push(a.clone());
        }
        i += 1;
    }
    own.push("--".into());
    own.extend(rest);
    own
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
    /// Seed 000's sysbench fileio benchmark: 64 files, 1/4/16 GiB, 1/4/8 threads, 16 KiB, every
    /// mode, O_DIRECT.
    SysbenchFileio(SbFileioArgs),
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
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long)]
    pub json: bool,
    #[arg(long, short)]
    pub quiet: bool,
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
    /// Files for the create/stat/delete tests, in multiples of 1024 (bonnie -n).
    #[arg(long, default_value_t = 16)]
    pub files: u32,
    /// Random seeks.
    #[arg(long, default_value_t = 8000)]
    pub seeks: u32,
    /// Write the Bonnie++ CSV line to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct SbFileioArgs {
    /// Directory for the file set.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Divide the 1/4/16 GiB sizes by this for small disks (16: 64 MiB/256 MiB/1 GiB).
    #[arg(long, default_value_t = 1)]
    pub scale: u64,
    /// Seconds per cell.
    #[arg(long, default_value_t = 10.0)]
    pub time: f64,
    /// Runs per cell.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// sync or io_uring.
    #[arg(long, default_value = "sync")]
    pub engine: String,
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ZonesArgs {
    /// A block device (/dev/sdb) or a file; only read.
    pub target: PathBuf,
    /// Number of evenly spaced zones.
    #[arg(long, default_value_t = 16)]
    pub zones: u32,
    /// Bytes read in each zone.
    #[arg(long, default_value = "64M", value_parser = size_arg)]
    pub per_zone: u64,
    /// Read size.
    #[arg(long, default_value = "1M", value_parser = size_arg)]
    pub bs: u64,
    #[arg(long)]
    pub no_save: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3); several ids make a comparison.
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// The HTML file to write.
    #[arg(long, short, default_value = "report.html")]
    pub output: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3); several ids make a comparison.
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// The chart (see --list).
    #[arg(long)]
    pub chart: Option<String>,
    /// Output file: .svg or .png.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Width in pixels.
    #[arg(long, default_value_t = 960)]
    pub width: u32,
    /// Height in pixels.
    #[arg(long, default_value_t = 420)]
    pub height: u32,
    /// List the charts available for these ids.
    #[arg(long)]
    pub list: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only runs with this label.
    #[arg(long)]
    pub label: Option<String>,
    /// Only runs with this tag (repeatable: all must match).
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
    /// Only runs that include this mode.
    #[arg(long)]
    pub mode: Option<String>,
    /// Only runs from this host.
    #[arg(long)]
    pub host: Option<String>,
    /// Only runs since: a date (2026-11-01), an RFC 3339 time, or an age (30m, 24h, 7d).
    #[arg(long)]
    pub since: Option<String>,
    /// At most this many runs.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// A run id (12) or a group id (g3).
    pub id: String,
    /// Print the stored JSON document (the same one `run --json` printed).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DeleteArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3).
    #[arg(required = true)]
    pub ids: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3); the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub ids: Vec<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3).
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// json or csv.
    #[arg(long, default_value = "json")]
    pub format: String,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Result files (fio --output-format=json/json+, or sysbench fileio run output); - = stdin.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// A label for the imported runs.
    #[arg(long)]
    pub label: Option<String>,
    /// A tag K=V (repeatable).
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
    /// The host the results came from (default: this host).
    #[arg(long)]
    pub host: Option<String>,
}

fn size_arg(s: &str) -> std::result::Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

#[derive(Args, Debug, Clone)]
pub struct FileSetArgs {
    /// Directory for the file set (created when it is the default and missing).
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Number of files in the set.
    #[arg(long, default_value_t = 64)]
    pub files: u32,
    /// Total size of the set: bytes, or with K/M/G/T (powers of 1024): 1G, 1GiB, 512M.
    #[arg(long, default_value = "1GiB", value_parser = size_arg)]
    pub size: u64,
    /// Block size of each I/O (16KiB = an InnoDB page): 4k, 16KiB, 1M ...
    #[arg(long, value_parser = size_arg)]
    pub bs: Option<u64>,
}

#[derive(Args, Debug, Clone)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub set: FileSetArgs,
    /// Write the files with O_DIRECT.
    #[arg(long)]
    pub direct: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub set: FileSetArgs,
    /// Test mode(s), comma separated: seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw.
    #[arg(long)]
    pub mode: Option<String>,
    /// Reads per write for rndrw.
    #[arg(long, default_value_t = 1.5)]
    pub rw_ratio: f64,
    /// How I/O is issued: sync (pread/pwrite), io_uring, mmap, null (no I/O).
    #[arg(long, default_value = "sync")]
    pub engine: String,
    /// I/Os in flight per thread (io_uring).
    #[arg(long, default_value_t = 1)]
    pub iodepth: u32,
    /// Worker threads.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Use O_DIRECT (bypass the page cache).
    #[arg(long)]
    pub direct: bool,
    /// Extra open flags: sync, dsync or sync,dsync.
    #[arg(long, default_value = "")]
    pub open_flags: String,
    /// fsync a file after this many writes to it (per thread); 0 = never.
    #[arg(long, default_value_t = 100)]
    pub fsync_freq: u32,
    /// fsync after every write.
    #[arg(long)]
    pub fsync_all: bool,
    /// fsync every written file at the end of each mode (default on; --fsync-end=false or
    /// --no-fsync-end turns it off).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub fsync_end: bool,
    #[arg(long, hide = true)]
    pub no_fsync_end: bool,
    /// fsync or fdatasync.
    #[arg(long, default_value = "fsync")]
    pub fsync_mode: String,
    /// Random offsets: uniform, zipf:THETA, pareto:H.
    #[arg(long, default_value = "uniform")]
    pub distribution: String,
    /// Seed for random offsets (default: from the clock; recorded in the results).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Total offered load in I/Os per second; latency is then measured from each I/O's
    /// scheduled start.
    #[arg(long)]
    pub rate: Option<u64>,
    /// Seconds to measure each mode (default 10; 6 per step in the default profile).
    #[arg(long, conflicts_with = "ops")]
    pub time: Option<f64>,
    /// Exact total number of reads+writes across all threads (fsyncs come on top).
    #[arg(long)]
    pub ops: Option<u64>,
    /// Seconds of warm-up before measuring (not counted).
    #[arg(long, default_value_t = 0.0)]
    pub ramp: f64,
    /// Keep the file set after the run.
    #[arg(long)]
    pub keep: bool,
    /// Measure a warm cache: instead of evicting the files from the page cache before each mode,
    /// read them into it (buffered runs then measure memory, on purpose).
    #[arg(long, conflicts_with = "direct")]
    pub warm: bool,
    /// Print one JSON document (schema iolab-run/1) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Do not save the run in the results store.
    #[arg(long)]
    pub no_save: bool,
    /// Run the whole job N times (caches evicted before each) and store the runs as one group.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    #[command(flatten)]
    pub db: DbArgs,
    /// A label for this run.
    #[arg(long)]
    pub label: Option<String>,
    /// A tag K=V (repeatable).
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
    /// No progress bars or live line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Seconds between samples of the device figures (iostat -x) taken beside the workload.
    #[arg(long, default_value_t = 1.0)]
    pub iostat_interval: f64,
}

/// Checks --dir: it must exist (the default is created) and be a writable directory.
/// Returns whether it was created.
pub fn check_dir(dir: &Path, create_missing: bool) -> Result<bool> {
    let mut created = false;
    match std::fs::metadata(dir) {
        Ok(md) if md.is_dir() => {}
        Ok(_) => {
            return Err(Error::usage(format!(
                "--dir {}: not a directory",
                dir.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !create_missing {
                return Err(Error::usage(format!(
                    "--dir {}: no such directory; create it first or pick an existing one",
                    dir.display()
                )));
            }
            std::fs::create_dir(dir).map_err(|e| {
                Error::usage(format!("--dir {}: cannot create it: {e}", dir.display()))
            })?;
            created = true;
        }
        Err(e) => return Err(Error::usage(format!("--dir {}: {e}", dir.display()))),
    }
    Ok(created)
}

/// A probe file in --dir, removed on drop; used to test writability and O_DIRECT.
pub struct Probe(pub PathBuf);

impl Probe {
    pub fn create(dir: &Path) -> Result<Probe> {
        let p = dir.join(format!(".iolab-probe-{}", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
            .map_err(|e| {
                let why = match e.raw_os_error() {
                    Some(libc::EROFS) => "read-only file system".to_string(),
                    Some(libc::EACCES) | Some(libc::EPERM) => "permission denied".to_string(),
                    _ => e.to_string(),
                };
                Error::usage(format!("--dir {}: not writable ({why})", dir.display()))
            })?;
        Ok(Probe(p))
    }
    /// Whether the filesystem accepts O_DIRECT opens.
    pub fn direct_ok(&self) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&self.0)
            .is_ok()
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub fn parse_tags(tags: &[String]) -> Result<BTreeMap<String, String>> {
    tags.iter()
        .map(|t| match t.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(Error::usage(format!("--tag '{t}': use KEY=VALUE"))),
        })
        .collect()
}

fn flag<T: std::str::FromStr<Err = String>>(name: &str, v: &str) -> Result<T> {
    v.parse()
        .map_err(|e: String| Error::usage(format!("{name}: {e}")))
}

/// The file-set spec: size split over files, each rounded down to a multiple of `unit`.
pub fn fileset_spec(set: &FileSetArgs, unit: u64) -> Result<FileSetSpec> {
    if set.files == 0 {
        return Err(Error::usage("--files must be at least 1"));
    }
    let per = set.size / set.files as u64 / unit * unit;
    if per == 0 {
        return Err(Error::usage(format!(
            "--size {} over --files {} gives {} per file, less than one block of {}; use a larger --size or fewer --files",
            Bytes(set.size),
            set.files,
            Bytes(set.size / set.files as u64),
            Bytes(unit)
        )));
    }
    Ok(FileSetSpec {
        dir: set.dir.clone(),
        files: set.files,
        total_bytes: per * set.files as u64,
        file_size_bytes: per,
    })
}

/// Translates `iolab run` flags into a plan; checks everything before anything is written.
pub fn plan_run(a: &RunArgs) -> Result<Plan> {
    let engine: EngineKind = flag("--engine", &a.engine)?;
    let fsync_mode: FsyncMode = flag("--fsync-mode", &a.fsync_mode)?;
    let distribution: Distribution = flag("--distribution", &a.distribution)?;
    let open_flags: OpenFlags = flag("--open-flags", &a.open_flags)?;
    let tags = parse_tags(&a.tags)?;
    if a.threads == Some(0) {
        return Err(Error::usage("--threads must be at least 1"));
    }
    if a.iodepth == 0 {
        return Err(Error::usage("--iodepth must be at least 1"));
    }
    if a.rw_ratio.is_nan() || a.rw_ratio <= 0.0 {
        return Err(Error::usage(
            "--rw-ratio must be a positive number of reads per write (e.g. 1.5)",
        ));
    }
    if a.rate == Some(0) {
        return Err(Error::usage("--rate must be at least 1 I/O per second"));
    }
    if a.ops == Some(0) {
        return Err(Error::usage("--ops must be at least 1"));
    }
    if let Some(t) = a.time
        && !(t > 0.0 && t.is_finite())
    {
        return Err(Error::usage("--time must be a positive number of seconds"));
    }
    if !(a.ramp >= 0.0 && a.ramp.is_finite()) {
        return Err(Error::usage(
            "--ramp must be zero or a positive number of seconds",
        ));
    }
    if !(a.iostat_interval >= 0.05 && a.iostat_interval.is_finite()) {
        return Err(Error::usage(
            "--iostat-interval must be at least 0.05 seconds",
        ));
    }
    if a.repeat == 0 {
        return Err(Error::usage("--repeat must be at least 1"));
    }
    if a.set.bs == Some(0) {
        return Err(Error::usage("--bs must be at least 1 byte"));
    }
    let caps = crate::engine::caps(engine);
    if a.direct && caps.direct == Direct::Refused {
        return Err(Error::usage(format!(
            "--direct cannot be used with --engine {} (it always goes through the page cache); use --engine sync or io_uring",
            caps.name
        )));
    }
    let modes: Option<Vec<Mode>> = match &a.mode {
        None => None,
        Some(m) => {
            let v: Vec<Mode> = m
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| flag("--mode", s))
                .collect::<Result<_>>()?;
            if v.is_empty() {
                return Err(Error::usage(
                    "--mode: give at least one of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw",
                ));
            }
            Some(v)
        }
    };
    if engine == EngineKind::IoUring {
        io_uring::IoUring::new(2)
            .map_err(|e| Error::usage(format!("--engine io_uring: io_uring is not available on this kernel or is disabled ({e}); use --engine sync")))?;
    }
    let is_default_dir = a.set.dir == Path::new(DEFAULT_DIR);
    let created_dir = check_dir(&a.set.dir, is_default_dir)?;
    let undo_dir = |e: Error| {
        if created_dir {
            let _ = std::fs::remove_dir(&a.set.dir);
        }
        e
    };
    let probe = Probe::create(&a.set.dir).map_err(undo_dir)?;
    let dio = fsinfo::dio_align(&crate::system::env::Roots::live().sys, &probe.0);
    let direct_ok = probe.direct_ok();
    drop(probe);
    let fs = fsinfo::fs_type(&a.set.dir);
    let mut notes = Vec::new();
    let seed = a.seed.unwrap_or_else(crate::spec::dist::seed_from_clock);
    let limit = match (a.ops, a.time) {
        (Some(n), _) => Limit::Ops(n),
        (None, Some(t)) => Limit::TimeS(t),
        (None, None) => Limit::TimeS(if modes.is_none() { 6.0 } else { 10.0 }),
    };
    let base = Job {
        mode: Mode::Rndrd,
        engine,
        threads: a.threads.unwrap_or(1),
        iodepth: a.iodepth,
        bs_bytes: a.set.bs.unwrap_or(16384),
        direct: a.direct,
        open_flags,
        fsync_freq: a.fsync_freq,
        fsync_all: a.fsync_all,
        fsync_end: a.fsync_end && !a.no_fsync_end,
        fsync_mode,
        rw_ratio: a.rw_ratio,
        distribution,
        seed,
        rate_iops: a.rate,
        limit,
        ramp_s: a.ramp,
    };
    let cells: Vec<Job> = match modes {
        Some(ms) => ms
            .into_iter()
            .map(|mode| Job {
                mode,
                ..base.clone()
            })
            .collect(),
        None => {
            // The default database storage profile.
            let honoured = caps.direct == Direct::Honoured;
            let direct = a.direct || (direct_ok && honoured);
            if !direct && !a.direct && honoured {
                notes.push(Warning::new(
                    "direct_unsupported",
                    format!("the filesystem at {} ({fs}) does not support O_DIRECT: the default profile runs buffered, through the page cache", a.set.dir.display()),
                ));
            }
            let mut v = Vec::new();
            for mode in [Mode::Rndrd, Mode::Rndwr, Mode::Rndrw] {
                for threads in [1, 8] {
                    v.push(Job {
                        mode,
                        threads,
                        bs_bytes: 16384,
                        direct,
                        ..base.clone()
                    });
                }
            }
            for mode in [Mode::Seqrd, Mode::Seqwr] {
                v.push(Job {
                    mode,
                    threads: 1,
                    bs_bytes: 1 << 20,
                    direct,
                    ..base.clone()
                });
            }
            v
        }
    };
    if cells.iter().any(|c| c.direct) {
        if !direct_ok {
            return Err(undo_dir(Error::usage(format!(
                "--direct: the filesystem at {} ({fs}) does not support O_DIRECT; run without --direct (results then include the page cache)",
                a.set.dir.display()
            ))));
        }
        for c in &cells {
            if c.direct && c.bs_bytes % dio.offset != 0 {
                return Err(undo_dir(Error::usage(format!(
                    "--bs {} is not a multiple of {} bytes, the O_DIRECT alignment of {} ({}); use a multiple such as {}",
                    c.bs_bytes,
                    dio.offset,
                    a.set.dir.display(),
                    dio.source,
                    Bytes(dio.offset.max(4096))
                ))));
            }
        }
    }
    if !caps.async_queue && a.iodepth > 1 {
        let queued: Vec<&str> = crate::engine::ENGINES
            .iter()
            .filter(|c| c.async_queue)
            .map(|c| c.name)
            .collect();
        notes.push(Warning::new(
            "iodepth_ignored",
            format!(
                "--iodepth {} only applies to --engine {}; {} keeps one I/O in flight per thread",
                a.iodepth,
                queued.join(" or "),
                engine.name()
            ),
        ));
    }
    let unit = cells.iter().map(|c| c.bs_bytes).max().unwrap_or(16384);
    let fileset = fileset_spec(&a.set, unit).map_err(undo_dir)?;
    Ok(Plan {
        fileset,
        cells,
        keep: a.keep,
        warm: a.warm,
        created_dir,
        label: a.label.clone(),
        tags,
        notes,
        quiet: a.quiet || a.json,
        iostat_interval: std::time::Duration::from_secs_f64(a.iostat_interval),
        dio,
        roots: crate::system::env::Roots::live(),
    })
}

/// `--since`: a date, an RFC 3339 time or an age (30m, 24h, 7d), as an RFC 3339 UTC bound.
pub fn parse_since(s: &str) -> Result<String> {
    let bad = || {
        Error::usage(format!(
            "--since '{s}': use a date (2026-11-01), an RFC 3339 time (2026-11-01T12:00:00Z) or an age (30m, 24h, 7d)"
        ))
    };
    let t = s.trim();
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(t) {
        return Ok(dt
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        let dt = d.and_hms_opt(0, 0, 0).ok_or_else(bad)?.and_utc();
        return Ok(dt.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (n, unit) = t.split_at(split);
    let n: i64 = n.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => n,
        "m" | "min" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        "w" => n * 7 * 86400,
        _ => return Err(bad()),
    };
    let dt = chrono::Utc::now() - chrono::Duration::seconds(secs);
    Ok(dt.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// Parses run/group references.
pub fn parse_refs(ids: &[String]) -> Result<Vec<crate::store::Ref>> {
    ids.iter()
        .map(|s| s.parse().map_err(Error::usage))
        .collect()
}

// ------------------------------------------------------------ run options for sweeps

/// Flags of `iolab run` that take a value (from clap's own definition).
fn value_flags() -> Vec<String> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let run = cmd.find_subcommand("run").expect("run subcommand");
    run.get_arguments()
        .filter(|a| a.get_action().takes_values() && a.get_long().is_some())
        .map(|a| format!("--{}", a.get_long().unwrap()))
        .collect()
}

/// Parses `iolab run` arguments with clap into a plan.
fn plan_for(args: &[String]) -> Result<Plan> {
    use clap::Parser;
    let mut argv = vec!["iolab".to_string(), "run".to_string()];
    argv.extend(args.iter().cloned());
    let cli = Cli::try_parse_from(&argv).map_err(|e| {
        let m = e.to_string();
        Error::usage(
            m.lines()
                .next()
                .unwrap_or("invalid run options")
                .trim_start_matches("error: ")
                .to_string(),
        )
    })?;
    match cli.cmd {
        Cmd::Run(mut r) => {
            r.quiet = true;
            let mut p = plan_run(&r)?;
            p.quiet = true;
            Ok(p)
        }
        _ => unreachable!("parsed as run"),
    }
}

/// `iolab run`'s option parser, for sweeps and saturation searches.
pub struct RunParser;

impl crate::workloads::sweep::RunOptions for RunParser {
    fn value_flags(&self) -> Vec<String> {
        value_flags()
    }
    fn plan(&self, args: &[String]) -> Result<Plan> {
        plan_for(args)
    }
}
