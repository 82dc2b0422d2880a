//! The clap definition's root: the command line (`Cli`), its subcommands (`Cmd`), and the
//! parser (every value option taking a negative number, so its value parser refuses it naming
//! the flag). Each command's flags are in the file of its family: [`super::flags`] (the flag
//! groups several commands share, the value parsers), `run_args` (run, prepare, cleanup),
//! `experiment_args` (sweep, saturate), `system_args` (env, check, iostat, capture, fsync-probe, verify,
//! crashcheck), `workload_args` (db, suite, zones), `stored_args` (the store's commands).

use super::*;
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "iolab", version = crate::VERSION, about = "A storage I/O lab for people who run databases", long_about = None)]
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
    /// Record a device's block requests from the kernel's trace events (time, direction,
    /// offset, size, flags, latency, queue depth, issuing process) to a file, beside the
    /// device's own counts; `--write-iolog` for fio's replay (needs root; docs/capture.md).
    Capture(CaptureArgs),
    /// What a capture's workload does to its device: the read/write mix, size and seek
    /// distributions, arrivals, queue depth, flushes, the hot set and the device's latency;
    /// stored like a run (docs/capture.md).
    Fingerprint(FingerprintArgs),
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
    /// The same workload on each --dir alone, then on all at once: whether the devices share a
    /// cap (the host's or the instance's), stored as a sweep.
    #[command(after_help = run_options_help("together"))]
    Together(TogetherArgs),
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
    Explain(RefArgs),
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
    /// Print a shell completion script: `iolab completions bash > /etc/bash_completion.d/iolab`
    /// (also zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Write a manual page for iolab and each subcommand (iolab.1, iolab-run.1, ...) into DIR.
    Manpages(ManpagesArgs),
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
            Cmd::Together(a) => &a.exp.out,
            Cmd::Suite(a) => match &a.which {
                SuiteCmd::Iozone(x) => &x.out,
                SuiteCmd::Bonnie(x) => &x.out,
                SuiteCmd::SysbenchFileio(x) => &x.out,
                SuiteCmd::Pts(x) => &x.out,
            },
            Cmd::Zones(a) => &a.out,
            Cmd::Fingerprint(a) => &a.out,
            Cmd::List(a) => &a.out,
            Cmd::Show(a) => &a.r.out,
            Cmd::Explain(a) => &a.out,
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
            // its -o is the capture file; the summary goes to stdout
            Cmd::Capture(_) | Cmd::Completions(_) | Cmd::Manpages(_) => return None,
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
    let line = e
        .to_string()
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    // clap's "tip: a similar argument exists" is on a line of its own: kept on this one
    match e.get(clap::error::ContextKind::SuggestedArg) {
        Some(clap::error::ContextValue::String(s)) => format!("{line}; did you mean {s}?"),
        // "the following required arguments were not provided:" names them on the next lines
        _ => match e.get(clap::error::ContextKind::InvalidArg) {
            Some(clap::error::ContextValue::Strings(v)) if line.ends_with(':') => {
                format!("{line} {}", v.join(", "))
            }
            _ => line,
        },
    }
}
