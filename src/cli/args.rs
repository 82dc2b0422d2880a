//! The clap definition of every subcommand and flag. Values are typed and range-checked here
//! (value parsers), so plan building starts from valid numbers.

use super::*;
use clap::{Args, Parser, Subcommand};

pub const DEFAULT_DIR: &str = "./iolab-data";

#[derive(Parser, Debug)]
#[command(name = "iolab", version, about = "A storage I/O lab for people who run databases", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run file-set workloads (prepares and cleans up the files when they are not there), or
    /// workloads on a block device (--device; writes need --destructive).
    /// With no --mode: a one-minute database storage profile.
    Run(Box<RunArgs>),
    /// Create the file set and evict it from the page cache.
    Prepare(PrepareArgs),
    /// Remove the file set (only iolab-file.N files in --dir).
    Cleanup(FileSetArgs),
    /// A system summary for storage: platform, CPU, memory, kernel settings, block devices,
    /// filesystems, and the stack under PATH.
    Env(EnvArgs),
    /// Check the storage setup for known pitfalls: misaligned partitions, stripe mismatches, schedulers, read-ahead, write caches, dirty limits, virtualization (exit 1 on warnings).
    Check(CheckArgs),
    /// Live device figures like `iostat -x` / pt-diskstats (no benchmark needed).
    Iostat(IostatArgs),
    /// Do flushes reach stable storage? fsync/fdatasync latency against the device's physics.
    FsyncProbe(FsyncProbeArgs),
    /// Database workloads: update-loop and sysbench-OLTP-like tests on SQLite (default),
    /// PostgreSQL or MariaDB/MySQL. `iolab db prepare|run|cleanup`.
    Db(Box<DbRunArgs>),
    /// Sweep run options over lists or ranges (--threads 1,4,8 --size 1G..16G); also
    /// --scheduler/--read-ahead/--nr-requests as axes. Stored as one experiment; resumable.
    #[command(after_help = run_options_help("sweep"))]
    Sweep(SweepArgs),
    /// Find where a target stops being met: --target 'mibps>=22' --over size=10G..750G.
    #[command(after_help = run_options_help("saturate"))]
    Saturate(SaturateArgs),
    /// Classic suites: iozone (automatic mode), bonnie (Bonnie++), sysbench-fileio (sysbench's
    /// file benchmark as a stored sweep).
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
    /// Which layer limits a stored run or group (page cache, device, queue depth, cgroup
    /// throttle, filesystem, CPU, flushes, alignment, scheduler, noise), with the evidence, the
    /// rule, a confidence and a command to try next (docs/explain.md).
    Explain(ShowArgs),
    /// Delete stored runs (ids) or groups (gN).
    Delete(DeleteArgs),
    /// Compare runs or groups; the first is the baseline.
    Compare(CompareArgs),
    /// Export stored runs as JSON or CSV.
    Export(ExportArgs),
    /// Import fio JSON (json or json+) or sysbench fileio output into the results store.
    Import(ImportArgs),
    /// Prove that acknowledged writes survive a crash: `listen` on another host, `write` here
    /// (each record synced and acknowledged to the listener before the next), cut the power,
    /// then `verify` reports every acknowledged record that is missing or damaged.
    Crashcheck(CrashcheckArgs),
    /// Re-read a file set written by `iolab run --verify --keep` and check every block a verify
    /// write reached: lost, misdirected, torn and stale blocks are listed (exit 3 when any is).
    Verify(VerifyArgs),
    /// Work on results stores as a whole: `store copy --from A --to B` copies every run
    /// (SQLite <-> PostgreSQL), ids mapped, nothing copied twice.
    Store(StoreArgs),
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub which: StoreCmd,
}

#[derive(Subcommand, Debug, Clone)]
pub enum StoreCmd {
    /// Copy every run of store A (with its metrics, histograms, tags and group) into store B, which
    /// is created when missing; a run B already holds (same kind, start time, host and document)
    /// is not copied again. Prints each run's id in A and in B.
    Copy(StoreCopyArgs),
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg("json", help("Print the id map as JSON (schema iolab-store-copy/1)")))]
pub struct StoreCopyArgs {
    /// The store to copy from: a file path, sqlite:///path or postgres://user:pass@host:port/db.
    #[arg(long, value_name = "PATH|URL")]
    pub from: PathBuf,
    /// The store to copy into (the same forms).
    #[arg(long, value_name = "PATH|URL")]
    pub to: PathBuf,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "json",
    help("Print one JSON document (schema iolab-verify/1) instead of the text")
))]
#[command(mut_arg("tags", help("A tag K=V for the stored result (repeatable)")))]
pub struct VerifyArgs {
    /// The directory of the file set (with the state file `.iolab-verify` a verify run left).
    #[arg(long)]
    pub dir: PathBuf,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not save the result in the results store.
    #[arg(long)]
    pub no_save: bool,
    /// A label for the stored result.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub tag: TagArgs,
}

#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// The results store: a file path, sqlite:///path, or postgres://user:pass@host:port/db (default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, else ~/.local/share/iolab/results.db).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
}

/// Where a command's printed result goes: stdout, or `--output FILE`.
#[derive(Args, Debug, Clone, Default)]
pub struct OutArgs {
    /// Write what would be printed (the JSON with --json, else the text) to this file instead of
    /// stdout: whole or not at all, after the results are saved.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--json`, defined once: the result as one JSON document instead of the text. A command whose
/// document has a schema of its own names it in the flag's help:
/// `#[command(mut_arg("json", help("...")))]` on its Args struct.
#[derive(Args, Debug, Clone, Default)]
pub struct JsonArg {
    /// Print one JSON document instead of the text.
    #[arg(long)]
    pub json: bool,
}

/// `--tag K=V`, defined once (repeatable); a command says what it tags with
/// `#[command(mut_arg("tags", help("...")))]`.
#[derive(Args, Debug, Clone, Default)]
pub struct TagArgs {
    /// A tag K=V for the stored results (repeatable).
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
}

/// `--rank-timeout`, defined once: how long rank 0 waits for a silent rank under mpirun
/// (`run` and `db` say what a rank does in the flag's help, with `mut_arg`).
#[derive(Args, Debug, Clone)]
pub struct RankTimeoutArg {
    /// Under mpirun: how long a rank may send no heartbeat (stopped, hung) or measure without
    /// completing any I/O before rank 0 ends the experiment, names it and saves what the other
    /// ranks measured of the point, marked incomplete (docs/distributed.md): 10s, 500ms, 30.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = positive_duration_s)]
    pub rank_timeout: f64,
}

/// A flag's help as one command words it, for `#[command(mut_arg(ID, help(TEXT)))]` on a
/// struct that flattens a shared flag group (the flag itself stays defined once).
fn help(text: &'static str) -> impl FnOnce(clap::Arg) -> clap::Arg {
    move |a| a.help(text)
}

impl Cmd {
    /// The `--output` file of a command that prints a result (None: stdout, or a command
    /// without `--output`; `report` and `plot` write their own files).
    pub fn output(&self) -> Option<&Path> {
        let o = match self {
            Cmd::Run(a) => &a.out,
            Cmd::Env(a) => &a.out,
            Cmd::Check(a) => &a.out,
            Cmd::Iostat(a) => &a.out,
            Cmd::FsyncProbe(a) => &a.out,
            Cmd::Db(a) => &a.out,
            Cmd::Sweep(a) => &a.exp.out,
            Cmd::Saturate(a) => &a.exp.out,
            Cmd::Suite(a) => match &a.which {
                SuiteCmd::Iozone(x) => &x.out,
                SuiteCmd::Bonnie(x) => &x.out,
                SuiteCmd::SysbenchFileio(x) => &x.out,
            },
            Cmd::Zones(a) => &a.out,
            Cmd::List(a) => &a.out,
            Cmd::Show(a) | Cmd::Explain(a) => &a.out,
            Cmd::Compare(a) => &a.out,
            Cmd::Export(a) => &a.out,
            Cmd::Verify(a) => &a.out,
            Cmd::Store(a) => match &a.which {
                StoreCmd::Copy(x) => &x.out,
            },
            Cmd::Crashcheck(a) => match &a.which {
                CrashCmd::Write(x) => &x.out,
                CrashCmd::Verify(x) => &x.out,
                CrashCmd::Listen(_) => return None,
            },
            Cmd::Prepare(_)
            | Cmd::Cleanup(_)
            | Cmd::Report(_)
            | Cmd::Plot(_)
            | Cmd::Delete(_)
            | Cmd::Import(_) => return None,
        };
        o.output.as_deref()
    }
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg("json", help("Print JSON (schema iolab-env/1)")))]
pub struct EnvArgs {
    /// A path whose storage stack to describe (default: the current directory); a block device
    /// (/dev/sdb) describes that device.
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    /// Read /proc, /sys and /etc below this directory instead of the live system (fixture trees).
    #[arg(long, hide = true)]
    pub root: Option<PathBuf>,
}

/// `iolab check`: the same target as `env`, its own help.
#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "json",
    help(
        "Print the findings as JSON (schema iolab-check/1: rule id, severity, subject, evidence, why and fix)"
    )
))]
pub struct CheckArgs {
    /// A path whose storage setup to check for pitfalls (default: the current directory); a block
    /// device (/dev/sdb) checks that device.
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    /// Read /proc, /sys and /etc below this directory instead of the live system (fixture trees).
    #[arg(long, hide = true)]
    pub root: Option<PathBuf>,
}

impl CheckArgs {
    /// The system the check reads, as `env` would describe it.
    pub fn target(&self) -> EnvArgs {
        EnvArgs {
            path: self.path.clone(),
            print: self.print.clone(),
            out: self.out.clone(),
            root: self.root.clone(),
        }
    }
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "json",
    help("One JSON object per interval (NDJSON, schema iolab-iostat/1)")
))]
pub struct IostatArgs {
    /// Devices (sda, nvme0n1, /dev/dm-0); default: every device that has done I/O.
    pub devices: Vec<String>,
    /// Seconds between reports.
    #[arg(long, short, default_value_t = 1.0, value_parser = interval_s)]
    pub interval: f64,
    /// Stop after this many reports (default: until Ctrl-C).
    #[arg(long, short, value_parser = at_least_one::<u64>)]
    pub count: Option<u64>,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
pub struct FsyncProbeArgs {
    /// A directory on the storage to probe (default: the current directory).
    pub path: Option<PathBuf>,
    /// Write + sync operations per test.
    #[arg(long, default_value_t = 200, value_parser = at_least_one::<u64>)]
    pub count: u64,
    /// Other threads writing meanwhile, for the last test (0 = skip it).
    #[arg(long, default_value_t = 2)]
    pub writers: u32,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

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
    /// A label for the stored results.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub tag: TagArgs,
    /// No progress bars or live line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print one line per N seconds while running (TPS and p99 latency) on stderr, also when it
    /// is not a terminal and with -q.
    #[arg(long, value_name = "N", value_parser = interval_s, allow_negative_numbers = true)]
    pub report_interval: Option<f64>,
    #[command(flatten)]
    pub rank: RankTimeoutArg,
    #[command(flatten)]
    pub db: DbArgs,
}

/// The run options `sweep` and `saturate` accept, from clap's definition of `iolab run` (the
/// part of their help after the options).
pub fn run_options_help(cmd: &str) -> String {
    let run = <RunArgs as Args>::augment_args(clap::Command::new("run"));
    let (mut values, mut switches) = (Vec::new(), Vec::new());
    for a in run.get_arguments() {
        let Some(long) = a.get_long() else { continue };
        // the experiment's own options (or refused there)
        if [
            "help",
            "repeat",
            "db",
            "label",
            "tag",
            "json",
            "no-save",
            "quiet",
            "output",
            "output-format",
            "role",
            "profile",
            "ignore-unsupported",
            "live",
            "metrics-listen",
            "rank-timeout",
        ]
        .contains(&long)
        {
            continue;
        }
        if a.get_action().takes_values() && !a.is_require_equals_set() {
            values.push(format!("--{long}"));
        } else {
            switches.push(format!("--{long}"));
        }
    }
    let wrap = |v: &[String]| {
        let mut out = String::new();
        let mut line = String::from("  ");
        for f in v {
            if line.len() + f.len() + 1 > 98 {
                out.push_str(line.trim_end());
                out.push('\n');
                line = String::from("  ");
            }
            line.push_str(f);
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out
    };
    let how = if cmd == "sweep" {
        "Any value option may be an axis: a list (--threads 1,4,8), a range that doubles\n\
         (--threads 1..32, --size 1G..16G), linear steps (4..32:+4) or a factor (1G..64G:x4).\n\
         Every cell runs with the other options as given."
    } else {
        "--over NAME=LO..HI names the value option searched (size, rate, threads, iodepth or files);\n\
         every measurement runs with the other options as given."
    };
    format!(
        "Run options (as for `iolab run`; see `iolab run --help` for what each does):\n\
         Value options:\n{}\nSwitches:\n{}\n{how}",
        wrap(&values),
        wrap(&switches)
    )
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
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
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
    #[command(flatten)]
    pub exp: ExperimentArgs,
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
    #[command(flatten)]
    pub exp: ExperimentArgs,
}

/// The options `sweep` and `saturate` share, defined once: how the experiment prints, where
/// it is stored, and the run options behind `--` (which [`presplit`] puts there).
#[derive(Args, Debug, Clone)]
pub struct ExperimentArgs {
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    /// A label for the stored results.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub tag: TagArgs,
    /// No progress bars or live line (also for every run).
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub rank: RankTimeoutArg,
    #[command(flatten)]
    pub db: DbArgs,
    /// The run options (after --; iolab puts them there for you).
    #[arg(last = true, hide = true)]
    pub run_args: Vec<String>,
}

/// For `sweep` and `saturate`: moves their own options first and every other option behind
/// `--`, so clap parses the run options later, per cell.
pub fn presplit(argv: Vec<String>) -> Vec<String> {
    let Some(cmd) = argv.get(1).cloned() else {
        return argv;
    };
    let own_cmd = match cmd.as_str() {
        "sweep" => <SweepArgs as Args>::augment_args(clap::Command::new("sweep")),
        "saturate" => <SaturateArgs as Args>::augment_args(clap::Command::new("saturate")),
        _ => return argv,
    };
    // their own options, as clap defines them: those taking a value, and switches
    let (mut own_v, mut own_b) = (Vec::new(), vec!["--help".to_string(), "-h".to_string()]);
    for o in own_cmd.get_arguments() {
        let names = o
            .get_long()
            .map(|l| format!("--{l}"))
            .into_iter()
            .chain(o.get_short().map(|c| format!("-{c}")));
        if o.get_action().takes_values() {
            own_v.extend(names);
        } else {
            own_b.extend(names);
        }
    }
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
        if own_b.iter().any(|o| o == a) {
            own.push(a.clone());
            // quiet also goes to every run
            if a == "-q" || a == "--quiet" {
                rest.push(a.clone());
            }
        } else if own_v.iter().any(|o| o == flag) {
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
pub struct CrashcheckArgs {
    #[command(subcommand)]
    pub which: CrashCmd,
}

#[derive(Subcommand, Debug, Clone)]
pub enum CrashCmd {
    /// Keep the journal of acknowledged records, on another host than the one under test
    /// (one file per run in --journal); runs until Ctrl-C.
    Listen(CcListenArgs),
    /// Write checksummed records to DIR/iolab-crashcheck.dat, syncing each and acknowledging it
    /// to the journal before the next, until --count, --time or Ctrl-C (or the power cut).
    Write(CcWriteArgs),
    /// After the crash: read back every acknowledged record and report those lost, corrupt or
    /// misdirected (exit 3 when any is).
    Verify(CcVerifyArgs),
}

#[derive(Args, Debug, Clone)]
pub struct CcListenArgs {
    /// TCP port to listen on (0: any free port, printed at start).
    #[arg(long)]
    pub port: u16,
    /// Address to listen on: the address of this host that the writer's machine reaches
    /// (required: a listener is reachable only where it is asked to be; 127.0.0.1 for a writer
    /// on this machine).
    #[arg(long, value_name = "ADDR")]
    pub bind: String,
    /// Directory of the journals, one file per run (default: $XDG_STATE_HOME/iolab/crashcheck,
    /// else ~/.local/state/iolab/crashcheck).
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
}

/// Where the acknowledgements go (write) or come from (verify): a listener or a journal file.
#[derive(Args, Debug, Clone)]
#[group(required = true, multiple = false)]
pub struct CcJournalTo {
    /// The listener (`iolab crashcheck listen` on another host), HOST:PORT. An unreachable
    /// listener is refused before anything is written.
    #[arg(long, value_name = "HOST:PORT")]
    pub to: Option<String>,
    /// Instead of a listener: a new journal file, on another device than --dir (warned when it
    /// is not).
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "json",
    help("Print one JSON document (schema iolab-crashcheck/1) instead of the text")
))]
pub struct CcWriteArgs {
    /// Directory on the storage under test; the data file is DIR/iolab-crashcheck.dat (made
    /// afresh).
    #[arg(long)]
    pub dir: PathBuf,
    #[command(flatten)]
    pub to: CcJournalTo,
    /// How each record is made durable: fsync, fdatasync, dsync (O_DSYNC writes) or
    /// direct-dsync (O_DIRECT|O_DSYNC).
    #[arg(long, default_value = "fdatasync", value_parser = ["fsync", "fdatasync", "dsync", "direct-dsync"])]
    pub sync: String,
    /// Record size: a multiple of 512, at least 512 (a multiple of 4096 for direct-dsync).
    #[arg(long, default_value = "4k", value_parser = size_arg)]
    pub bs: u64,
    /// Size of the data file; records go to its blocks in a scattered order, each block once
    /// before any is rewritten.
    #[arg(long, default_value = "64M", value_parser = size_arg)]
    pub size: u64,
    /// Stop after this many acknowledged records (default: until --time, Ctrl-C or the crash).
    #[arg(long, value_parser = at_least_one::<u64>)]
    pub count: Option<u64>,
    /// Where to keep the run's secret key (a new file, mode 0600; default
    /// $XDG_STATE_HOME/iolab/crashcheck/keys/RUN.key, else ~/.local/state/...). `verify` needs
    /// it: every journal line is authenticated with it.
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Stop after this many seconds.
    #[arg(long, value_parser = interval_s)]
    pub time: Option<f64>,
    /// Do not save the result in the results store.
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
#[command(mut_arg(
    "json",
    help("Print one JSON document (schema iolab-crashcheck/1) instead of the text")
))]
pub struct CcVerifyArgs {
    /// The directory the writer wrote to.
    #[arg(long)]
    pub dir: PathBuf,
    /// The listener that kept the journal, HOST:PORT.
    #[arg(
        long,
        value_name = "HOST:PORT",
        required_unless_present = "journal",
        conflicts_with = "journal"
    )]
    pub from: Option<String>,
    /// Instead of a listener: the journal file the writer kept (`write --journal`).
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// The run to verify (its id, as `write` printed it); its key is read from the key
    /// directory. Default: the newest key this machine's `write` kept for this --dir.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// The run's key file (`write --key-file`).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["run", "key"])]
    pub key_file: Option<PathBuf>,
    /// The run's key as `write` printed it (64 hex digits), with --run.
    #[arg(long, value_name = "HEX", requires = "run")]
    pub key: Option<String>,
    /// Do not save the result in the results store.
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
    /// No progress bars or live line.
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
    /// A label for the stored results.
    #[arg(long)]
    pub label: Option<String>,
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
    /// Width in pixels (16 to 16384).
    #[arg(long, default_value_t = 960, value_parser = clap::value_parser!(u32).range(16..=16384))]
    pub width: u32,
    /// Height in pixels (16 to 16384).
    #[arg(long, default_value_t = 420, value_parser = clap::value_parser!(u32).range(16..=16384))]
    pub height: u32,
    /// List the charts available for these ids.
    #[arg(long)]
    pub list: bool,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg("tags", help("Only runs with this tag (repeatable: all must match)")))]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only runs with this label.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub tag: TagArgs,
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
    #[arg(long, default_value_t = 50, value_parser = list_limit)]
    pub limit: usize,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "json",
    help(
        "Print JSON: `show` the stored document (the same one `run --json` printed), `explain` the explanation (schema iolab-explain/1)"
    )
))]
pub struct ShowArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// A run id (12) or a group id (g3).
    pub id: String,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
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
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
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
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg("tags", help("A tag K=V (repeatable)")))]
pub struct ImportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Result files (fio --output-format=json/json+, or sysbench fileio run output); - = stdin.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// A label for the imported runs.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub tag: TagArgs,
    /// The host the results came from (default: this host).
    #[arg(long)]
    pub host: Option<String>,
}

fn size_arg(s: &str) -> std::result::Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// A size of at least one byte (`--io-size`).
fn nonzero_size(s: &str) -> std::result::Result<u64, String> {
    match size_arg(s)? {
        0 => Err("a size of at least 1 byte".into()),
        n => Ok(n),
    }
}

/// `--bs`: one size of at least one byte, a weighted mix (`16k:70,1m:30`) or a range
/// (`4k-64k`).
fn block_sizes(s: &str) -> std::result::Result<BsArg, String> {
    s.parse()
}

/// A whole percent 0..100 (`--rwmixread`).
fn percent(s: &str) -> std::result::Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|&p| p <= 100)
        .ok_or_else(|| "must be a whole percent from 0 to 100 (reads among reads + writes)".into())
}

/// A count of at least 1 (`--threads`, `--files`, `--ops`, ...): typed here, so no command checks
/// for 0 by hand.
fn at_least_one<T>(s: &str) -> std::result::Result<T, String>
where
    T: std::str::FromStr + PartialOrd + From<u8>,
    T::Err: std::fmt::Display,
{
    match s.trim().parse::<T>() {
        Ok(v) if v >= T::from(1) => Ok(v),
        Ok(_) => Err("must be at least 1".into()),
        Err(e) if s.trim().starts_with('-') => Err(format!("must be at least 1 ({e})")),
        Err(e) => Err(format!("must be a whole number, at least 1 ({e})")),
    }
}

/// The longest duration any flag takes: 10 years, in seconds. Every duration and interval
/// is bounded by it, so a clock deadline (`Instant + Duration`) and `Duration::from_secs_f64`
/// always hold it (`--time 1e19` would overflow the monotonic clock's arithmetic).
pub const MAX_SECONDS: f64 = 10.0 * 365.0 * 86_400.0;

/// A number of seconds as typed (`--time`, `--ramp`, `--interval`): a decimal number, finite,
/// at most [`MAX_SECONDS`].
fn bounded_seconds(s: &str) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v <= MAX_SECONDS)
}

/// Reads per write (`--rw-ratio`): a finite number above 0.
fn reads_per_write(s: &str) -> std::result::Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| "must be a positive number of reads per write (e.g. 1.5)".into())
}

/// An SQLite page size (`--page-size`): a power of two from 512 to 65536, as SQLite takes
/// (it ignores any other value silently).
fn sqlite_page_size(s: &str) -> std::result::Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|v| v.is_power_of_two() && (512..=65536).contains(v))
        .ok_or_else(|| "must be a power of two from 512 to 65536 (bytes)".into())
}

/// A number of rows (`list --limit`): what the store's queries take (SQLite's and
/// PostgreSQL's LIMIT is a signed 64-bit integer).
fn list_limit(s: &str) -> std::result::Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .ok()
        .filter(|&n| i64::try_from(n).is_ok())
        .ok_or_else(|| format!("must be a whole number from 0 to {}", i64::MAX))
}

/// Seconds to run, more than zero (`--time`).
fn seconds(s: &str) -> std::result::Result<f64, String> {
    bounded_seconds(s).filter(|v| *v > 0.0).ok_or_else(|| {
        "must be a number of seconds above 0 (10, 0.5), at most 10 years (315360000)".into()
    })
}

/// Seconds of warm-up, zero or more (`--ramp`).
fn ramp_s(s: &str) -> std::result::Result<f64, String> {
    bounded_seconds(s).filter(|v| *v >= 0.0).ok_or_else(|| {
        "must be a number of seconds, 0 or more (5, 0.5), at most 10 years (315360000)".into()
    })
}

/// A duration in seconds, zero or more: a number with s, ms, us, m, h or d, seconds without a
/// unit (`--fsync-every`), at most [`MAX_SECONDS`].
fn duration_s(s: &str) -> std::result::Result<f64, String> {
    let bad = || {
        "must be a duration: 2s, 500ms, 1.5 (seconds), or 0 for never; at most 10 years".to_string()
    };
    if crate::spec::fio_vocab::is_expression(s) {
        return Err(bad());
    }
    let v = crate::spec::fio_vocab::parse_time(s, 1.0).map_err(|_| bad())?;
    if !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(bad());
    }
    Ok(v)
}

/// A duration in seconds, more than zero (`--rank-timeout`).
fn positive_duration_s(s: &str) -> std::result::Result<f64, String> {
    match duration_s(s) {
        Ok(v) if v > 0.0 => Ok(v),
        _ => Err(
            "must be a duration above zero: 10s, 500ms, 30 (seconds); at most 10 years".to_string(),
        ),
    }
}

/// A sampling interval in seconds: at least 0.05 (`--interval`, `--iostat-interval`,
/// `--report-interval`).
fn interval_s(s: &str) -> std::result::Result<f64, String> {
    bounded_seconds(s).filter(|v| *v >= 0.05).ok_or_else(|| {
        "must be a number of seconds (1, 0.5), at least 0.05, at most 10 years (315360000)".into()
    })
}

/// iolab's clap definition, with every option that takes a value also taking one that starts
/// with `-` and looks like a number (`--threads -1`): its value parser then refuses it, naming
/// the flag, where clap alone would say "unexpected argument '-1' found".
pub fn command() -> clap::Command {
    fn negatives(c: clap::Command) -> clap::Command {
        c.mut_args(|a| {
            if a.get_action().takes_values() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(negatives)
    }
    negatives(<Cli as clap::CommandFactory>::command())
}

/// Parses a command line with [`command`].
pub fn parse_from<I, T>(argv: I) -> std::result::Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let m = command().try_get_matches_from(argv)?;
    <Cli as clap::FromArgMatches>::from_arg_matches(&m)
}

/// The first line of a clap error, without its `error: ` (an `iolab: error:` line's text).
pub fn clap_line(e: &clap::Error) -> String {
    e.to_string()
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string()
}

#[derive(Args, Debug, Clone)]
pub struct FileSetArgs {
    /// Directory for the file set (created when it is the default and missing).
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Number of files in the set [default: 64].
    #[arg(long, value_parser = at_least_one::<u32>)]
    pub files: Option<u32>,
    /// Total size of the set: bytes, or with K/M/G/T (powers of 1024): 1G, 1GiB, 512M
    /// [default: 1GiB; with --device: the device from --offset to its end].
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,
    /// Block size of each I/O (16KiB = an InnoDB page): 4k, 16KiB, 1M ...; a mix with weights
    /// in percent (16k:70,1m:30, like fio's bssplit) or a range (4k-64k: every multiple of
    /// 4 KiB, or of the O_DIRECT alignment when larger, equally likely).
    #[arg(long, value_parser = block_sizes)]
    pub bs: Option<BsArg>,
}

impl FileSetArgs {
    pub const DEFAULT_FILES: u32 = 64;
    pub const DEFAULT_SIZE: u64 = 1 << 30;
    /// `--files`, or its default.
    pub fn files(&self) -> u32 {
        self.files.unwrap_or(Self::DEFAULT_FILES)
    }
    /// `--size`, or its default.
    pub fn size(&self) -> u64 {
        self.size.unwrap_or(Self::DEFAULT_SIZE)
    }
}

#[derive(Args, Debug, Clone)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub set: FileSetArgs,
    /// Write the files with O_DIRECT, and refuse a filesystem that does not take it. Without
    /// --direct or --buffered the files are written with O_DIRECT where the filesystem takes it
    /// and through the page cache where not (the same data either way).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,
    /// Write the files through the page cache (then fsync and evict them), never with O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// What the files hold before each mode: overwrite (written data: writes overwrite in
    /// place), unwritten (preallocated extents, fallocate), holes (sparse files of the full size),
    /// extend (empty files that seqwr grows). Layouts other than overwrite are made afresh before
    /// every mode (docs/layouts.md).
    #[arg(long, default_value = "overwrite", value_name = "LAYOUT")]
    pub layout: String,
    /// When --dir holds a set of other sizes: remove its files (iolab-file.N only) and prepare
    /// the set afresh instead of refusing.
    #[arg(long)]
    pub reprepare: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `iolab run --output-format`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// the table
    Normal,
    /// the iolab-run/1 document (--json)
    Json,
    /// the iolab-run/1 document with each operation's latency histogram (`hist_bins`)
    #[value(name = "json+")]
    JsonPlus,
    /// fio's --output-format=json shape
    FioJson,
    /// fio's --output-format=json+ shape (latency `bins`)
    #[value(name = "fio-json+")]
    FioJsonPlus,
}

impl OutputFormat {
    /// The format its exporter writes (`crate::output::export`).
    pub fn export_format(self) -> crate::output::export::Format {
        use crate::output::export::Format;
        match self {
            OutputFormat::Normal => Format::Text,
            OutputFormat::Json | OutputFormat::JsonPlus => Format::Json,
            OutputFormat::FioJson | OutputFormat::FioJsonPlus => Format::FioJson,
        }
    }

    /// json+ and fio-json+: each operation's latency histogram goes with the document.
    pub fn bins(self) -> bool {
        matches!(self, OutputFormat::JsonPlus | OutputFormat::FioJsonPlus)
    }
}

impl RunArgs {
    /// The output format asked for: `--output-format`, else `--json`, else the table.
    pub fn format(&self) -> OutputFormat {
        match (self.output_format, self.print.json) {
            (Some(f), _) => f,
            (None, true) => OutputFormat::Json,
            (None, false) => OutputFormat::Normal,
        }
    }
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "json",
    help(
        "Print one JSON document (schema iolab-run/1) instead of the table: --output-format json"
    )
))]
#[command(mut_arg("tags", help("A tag K=V (repeatable)")))]
#[command(mut_arg(
    "rank_timeout",
    help(
        "Under mpirun: how long a rank may send no heartbeat (stopped, hung) or measure without completing any I/O before rank 0 ends the run, names it and saves what the other ranks measured, marked incomplete (docs/distributed.md): 10s, 500ms, 30 (seconds)"
    )
))]
pub struct RunArgs {
    /// fio job files to run (a path ending in .fio, or a file whose first line that is not a
    /// comment is a [section]; - reads standard input): the jobs between stonewalls run at once,
    /// the phases one after the other, stored as one run (docs/fio-jobs.md).
    #[arg(value_name = "JOBFILE")]
    pub jobfiles: Vec<PathBuf>,
    /// With job files: run them without the options iolab does not support (each is recorded in
    /// the results and warned about) instead of refusing them.
    #[arg(long)]
    pub ignore_unsupported: bool,
    #[command(flatten)]
    pub set: FileSetArgs,
    /// Test mode(s), comma separated: seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw, seqrw (a
    /// sequential mix of reads and writes, fio's rw=readwrite).
    #[arg(long)]
    pub mode: Option<String>,
    /// What the files hold before each mode: overwrite (written data: writes overwrite in
    /// place), unwritten (preallocated extents, fallocate), holes (sparse files of the full size),
    /// extend (empty files that seqwr grows). Layouts other than overwrite are made afresh before
    /// every mode (docs/layouts.md).
    #[arg(long, default_value = "overwrite", value_name = "LAYOUT")]
    pub layout: String,
    /// Run a combination that measures nothing real: read modes on --layout holes or unwritten
    /// (the reads return zeros without reaching the device); a warning stays in the results.
    #[arg(long)]
    pub force: bool,
    /// Reads per write for rndrw and seqrw, sysbench's spelling (default 1.5).
    #[arg(long, value_parser = reads_per_write)]
    pub rw_ratio: Option<f64>,
    /// Percent of rndrw's or seqrw's I/Os that are reads, fio's spelling (0..100): 70 = --rw-ratio 2.333...
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub rwmixread: Option<u32>,
    /// How I/O is issued: sync (pread/pwrite), io_uring, libaio (Linux native AIO; use it with
    /// --direct: buffered, it completes each I/O inside io_submit), mmap, null (no I/O).
    #[arg(long, default_value = "sync")]
    pub engine: String,
    /// I/Os in flight per thread (io_uring, libaio).
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub iodepth: u32,
    /// Worker threads.
    #[arg(long, value_parser = at_least_one::<u32>)]
    pub threads: Option<u32>,
    /// Use O_DIRECT (bypass the page cache); the default with --device.
    #[arg(long)]
    pub direct: bool,
    /// Go through the page cache (no O_DIRECT), also with --device and in the default profile.
    #[arg(long, conflicts_with = "direct")]
    pub buffered: bool,
    /// A block device as the target instead of a file set in --dir (fio's filename=/dev/X):
    /// nothing is created or removed, I/O goes to the range --offset .. --offset+--size of the
    /// device, with O_DIRECT unless --buffered. Read modes need no other flag; write modes need
    /// --destructive. A device in use (mounted, swap, md/LVM/dm, under a loop device, held
    /// open exclusively) is refused, whatever --destructive says.
    #[arg(long, value_name = "PATH")]
    pub device: Option<PathBuf>,
    /// Where the range starts on --device (bytes, or 4K, 1G ...; a multiple of the device's
    /// logical block size) [default: 0].
    #[arg(long, value_parser = size_arg, value_name = "BYTES")]
    pub offset: Option<u64>,
    /// Allow write modes on --device, destroying its data in the range. Refused even then on a
    /// device in use, or on which libblkid finds a filesystem, swap, RAID, LVM, crypto or
    /// partition-table signature; --destructive=wipe-signatures first wipes every such
    /// signature (as wipefs --all), then writes.
    #[arg(long, value_name = "WHAT", num_args = 0..=1, require_equals = true, default_missing_value = "yes", value_parser = ["yes", "wipe-signatures"])]
    pub destructive: Option<String>,
    /// Extra open flags: sync, dsync or sync,dsync.
    #[arg(long, default_value = "")]
    pub open_flags: String,
    /// fsync a file after this many writes to it (per thread); 0 = never.
    #[arg(long, default_value_t = 100)]
    pub fsync_freq: u32,
    /// fsync by time, as a database checkpoint does: each thread fsyncs every file it wrote
    /// since its last fsync once this long has passed since its last such sweep (checked as
    /// its writes complete): 2s, 500ms, 1.5 (seconds); 0 = never [default: never]. Works beside
    /// --fsync-freq (give --fsync-freq 0 for time alone).
    #[arg(long, value_name = "DURATION", value_parser = duration_s)]
    pub fsync_every: Option<f64>,
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
    /// Random offsets: uniform, zipf:THETA, pareto:H, or zoned:ACCESS/SIZE:... (percent of the
    /// accesses to percent of the set, zones from its start; e.g. zoned:50/5:30/15:20/80).
    #[arg(long, default_value = "uniform")]
    pub distribution: String,
    /// Seed for random offsets (default: from the clock; recorded in the results).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Total offered load in I/Os per second; latency is then measured from each I/O's
    /// scheduled start.
    #[arg(long, value_parser = at_least_one::<u64>)]
    pub rate: Option<u64>,
    /// Seconds to measure each mode (default 10; 6 per step in the default profile).
    #[arg(long, conflicts_with = "ops", value_parser = seconds)]
    pub time: Option<f64>,
    /// Exact total number of reads+writes across all threads (fsyncs come on top).
    #[arg(long, value_parser = at_least_one::<u64>)]
    pub ops: Option<u64>,
    /// Exact total bytes read+written across all threads, as fio's size= of a size-bound job:
    /// each thread its share, its last I/O trimmed to fit.
    #[arg(long, conflicts_with_all = ["ops", "time"], value_parser = nonzero_size)]
    pub io_size: Option<u64>,
    /// How random offsets are drawn: off (with replacement, fio's norandommap), bitmap (fio's
    /// default: each block of a thread's part of the set once per pass, an I/O trimmed to the
    /// blocks not done) or lfsr (fio's random_generator=lfsr: a full-period sequence, no bitmap).
    #[arg(long, default_value = "off")]
    pub random_map: crate::model::job::RandomMap,
    /// Seconds of warm-up before measuring (not counted).
    #[arg(long, default_value_t = 0.0, value_parser = ramp_s)]
    pub ramp: f64,
    /// Keep the file set after the run.
    #[arg(long)]
    pub keep: bool,
    /// Write blocks that can be checked (header, generation, checksum) and check every block
    /// read; mismatches are classified (lost, misdirected, torn, stale) and exit 3. Each thread
    /// keeps to its own part of the set. With --keep, `iolab verify --dir` checks it later.
    #[arg(long)]
    pub verify: bool,
    /// When --dir holds a set of other sizes: remove its files (iolab-file.N only) and prepare
    /// the set afresh instead of refusing; the new set counts as this run's (removed at the end
    /// unless --keep).
    #[arg(long)]
    pub reprepare: bool,
    /// Measure a warm cache: instead of evicting the files from the page cache before each mode,
    /// read them into it (buffered runs then measure memory, on purpose).
    #[arg(long, conflicts_with = "direct")]
    pub warm: bool,
    #[command(flatten)]
    pub print: JsonArg,
    /// After the table, say which layer limits each mode, with the evidence, the rule and a
    /// command to try next (`iolab explain`, docs/explain.md); with --json, the document gains
    /// an `explain` key (schema iolab-explain/1).
    #[arg(long)]
    pub explain: bool,
    /// What to print: normal (the table), json (the iolab-run/1 document, as --json), json+
    /// (that document with each operation's latency histogram as `hist_bins`), fio-json or
    /// fio-json+ (fio's JSON shape, json+ with latency `bins`, read by fio's own tools and by
    /// `iolab import`; docs/fio-output.md).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub output_format: Option<OutputFormat>,
    #[command(flatten)]
    pub out: OutArgs,
    /// Do not save the run in the results store.
    #[arg(long)]
    pub no_save: bool,
    /// Run the whole job N times (caches evicted before each) and store the runs as one group.
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub repeat: u32,
    #[command(flatten)]
    pub db: DbArgs,
    /// A label for this run.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub tag: TagArgs,
    /// No progress bars or live line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Seconds between samples of the device figures (iostat -x) taken beside the workload.
    #[arg(long, default_value_t = 1.0, value_parser = interval_s)]
    pub iostat_interval: f64,
    /// Print one line per N seconds while running (IOPS, MiB/s and p99 per operation) on
    /// stderr, also when it is not a terminal and with -q.
    #[arg(long, value_name = "N", value_parser = interval_s, allow_negative_numbers = true)]
    pub report_interval: Option<f64>,
    /// Write the per-second series as NDJSON while running: one object per measured second
    /// (schema iolab-live/1, the fields of the stored time series), flushed each second; `-`
    /// for stdout (docs/metrics.md).
    #[arg(long, value_name = "FILE|-")]
    pub live: Option<PathBuf>,
    /// Serve Prometheus/OpenMetrics text at ADDR:PORT while running (iolab_ops_total,
    /// iolab_bytes_total, iolab_latency_seconds, the device figures; docs/metrics.md).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,
    /// A role that runs at the same time as the other roles, with its own options and results
    /// (repeatable): NAME:key=value,... with run options as keys (mode=seqwr,bs=4k,threads=1,
    /// fsync-freq=1,direct,...). Options outside --role apply to every role; a role with size=
    /// or files= has its own file set in DIR/NAME/ (docs/roles.md).
    #[arg(long = "role", value_name = "NAME:KEY=VALUE,...")]
    pub roles: Vec<String>,
    /// A built-in set of roles: db = wal (4 KiB appends, fdatasync each), reads (16 KiB random
    /// reads, 8 threads), checkpoint (16 KiB buffered random writes, 2 threads, periodic
    /// fsync); a --role of the same name changes that role.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    #[command(flatten)]
    pub rank: RankTimeoutArg,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case: the command line, and what `presplit` makes of it (words split at spaces).
    const CASES: &[(&str, &str)] = &[
        (
            "iolab sweep --threads 1,2 --json --tag a=b -o f -q --rank-timeout=5 --rows threads --mode seqrd",
            "iolab sweep --json --tag a=b -o f -q --rank-timeout=5 --rows threads -- --threads 1,2 --tag a=b -q --mode seqrd",
        ),
        (
            "iolab saturate --target iops>=1 --size 1G --max-steps 3 --label x --help",
            "iolab saturate --target iops>=1 --max-steps 3 --label x --help -- --size 1G --label x",
        ),
        // other commands are left alone
        ("iolab run --json --tag a=b", "iolab run --json --tag a=b"),
    ];

    #[test]
    fn presplit_keeps_the_experiment_options_before_the_run_options() {
        for (given, want) in CASES {
            let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
            assert_eq!(presplit(words(given)), words(want), "{given}");
        }
    }
}
