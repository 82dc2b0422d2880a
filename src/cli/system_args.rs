//! The commands that read or probe the machine and its storage: `env`, `check`, `iostat`,
//! `capture`, `fsync-probe`, `verify` and `crashcheck`.

use super::*;
use clap::{Args, Subcommand};

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

/// `iolab capture`: a device's block requests from the kernel's trace events (docs/capture.md).
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("capture_target").required(true).multiple(true).args(["device", "dir", "pid", "cgroup"])))]
#[command(mut_arg(
    "json",
    help(
        "Print the summary as one JSON document (schema iolab-capture-summary/1) instead of the text"
    )
))]
pub struct CaptureArgs {
    /// The block device to capture (loop3, /dev/nvme0n1); a partition captures its whole disk.
    #[arg(long, value_name = "DEV")]
    pub device: Option<String>,
    /// Capture the device under this path (the disk of the filesystem it is on), and tell the
    /// files under it each request went to (WAL, data, temp: a database's data directory).
    #[arg(long, value_name = "PATH", conflicts_with = "device")]
    pub dir: Option<PathBuf>,
    /// Keep only the I/O of this process and its descendants: requests to the files they hold
    /// open or that lie under their working directory (whoever issued them: the page cache's
    /// writeback too), and those they issued. The device is their data's (or --device/--dir's).
    #[arg(long, value_name = "PID", value_parser = at_least_one::<i32>, conflicts_with = "cgroup")]
    pub pid: Option<i32>,
    /// As --pid, for the processes of a cgroup (a folder under /sys/fs/cgroup, or a path
    /// relative to it: system.slice/postgresql@15-main.service) and of the cgroups under it.
    #[arg(long, value_name = "CGROUP")]
    pub cgroup: Option<PathBuf>,
    /// Also read the database's own counters at the capture's start and end and put their
    /// change in the summary (as `iolab db --url`): postgres://... (pg_stat_wal, pg_stat_io on 16+, the WAL position)
    /// or mysql://... (performance_schema.file_summary_by_instance per file class).
    #[arg(long = "url", value_name = "URL")]
    pub db_url: Option<String>,
    /// How long to capture: 10, 30s, 2m, 500ms.
    #[arg(long, value_parser = seconds)]
    pub time: f64,
    /// The capture file, written as the requests complete (NDJSON, iolab-capture/1): a new
    /// file; an existing one is refused.
    #[arg(long, short, value_name = "CAPTURE")]
    pub output: PathBuf,
    /// Stop after recording this many requests.
    #[arg(long, value_name = "N", value_parser = at_least_one::<u64>)]
    pub max_events: Option<u64>,
    /// The kernel's trace buffer per CPU, KiB: raise it when the summary says events were
    /// lost (a busy device, a slow disk for the capture file).
    #[arg(long, value_name = "KIB", default_value_t = 4096, value_parser = at_least_one::<u64>)]
    pub buffer_kb: u64,
    /// Also write the capture as fio's iolog (version 3), so fio can replay it
    /// (`fio --read_iolog=FILE --replay_redirect=/dev/...`): a new file.
    #[arg(long, value_name = "FILE")]
    pub write_iolog: Option<PathBuf>,
    #[command(flatten)]
    pub print: JsonArg,
}

#[derive(Args, Debug, Clone)]
pub struct FingerprintArgs {
    /// A capture file (iolab capture -o CAPTURE).
    pub capture: PathBuf,
    /// Do not save the fingerprint in the results store.
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
    "json",
    help("Print one JSON document (schema iolab-verify/1) instead of the text")
))]
#[command(mut_arg("tags", help("A tag K=V for the stored result (repeatable)")))]
#[command(mut_arg("label", help("A label for the stored result")))]
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
    #[command(flatten)]
    pub label: LabelArg,
    #[command(flatten)]
    pub tag: TagArgs,
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
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug, Clone)]
pub struct ManpagesArgs {
    /// An existing directory: each page is a new file there (one already there is refused,
    /// nothing written).
    pub dir: PathBuf,
}
