//! `iolab run`, `prepare` and `cleanup`: the file set, the run's options and its output formats.

use super::*;
use clap::Args;

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
    /// the minimum, equally likely, as fio's bsrange).
    #[arg(long, value_parser = block_sizes)]
    pub bs: Option<BsArg>,
    /// Block sizes of the writes (of the trims in the trim modes) when not those of --bs, which
    /// then sizes the reads: the same forms as --bs (fio's bs=R,W, bssplit=R,W, bsrange=R,W)
    /// [default: --bs].
    #[arg(long, value_parser = block_sizes, value_name = "BS")]
    pub bs_write: Option<BsArg>,
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
#[command(mut_arg("quiet", help("No progress bar")))]
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
    #[command(flatten)]
    pub quiet: QuietArg,
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

/// The clap group of `iolab run`'s options that say how this invocation prints, stores and is
/// watched (`--json`, `--label`, `--role`, ...): not a run option of a sweep's or saturation
/// search's cells (they are the experiment's own, or refused there), nor a key of one `--role`.
pub const INVOCATION: &str = "invocation";
/// The clap group of `iolab run`'s options that one phase shares (`--dir`, `--time`, ...): a
/// sweep may vary them, a `--role` may not set them.
pub const WHOLE_RUN: &str = "whole_run";

/// The long names (without `--`) of `iolab run`'s options in one of its groups ([`INVOCATION`],
/// [`WHOLE_RUN`]), read from clap's definition.
pub fn run_group(group: &str) -> Vec<String> {
    let run = <RunArgs as Args>::augment_args(clap::Command::new("run"));
    let ids: Vec<&clap::Id> = run
        .get_groups()
        .find(|g| g.get_id() == group)
        .map(|g| g.get_args().collect())
        .unwrap_or_default();
    run.get_arguments()
        .filter(|a| ids.contains(&a.get_id()))
        .filter_map(|a| a.get_long().map(String::from))
        .collect()
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
#[command(mut_arg("label", help("A label for this run")))]
#[command(group(clap::ArgGroup::new(INVOCATION).multiple(true).args([
    "json", "output_format", "output", "no_save", "repeat", "db", "label", "tags", "quiet", "live",
    "metrics_listen", "metrics_linger", "rank_timeout", "roles", "profile", "ignore_unsupported", "parse_only",
])))]
#[command(group(clap::ArgGroup::new("trace").args(["replay", "like"])))]
#[command(group(clap::ArgGroup::new(WHOLE_RUN).multiple(true).args([
    "dir", "time", "ops", "ramp", "keep", "reprepare", "warm", "iostat_interval", "report_interval",
])))]
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
    /// With job files: parse and translate them, print each job's equivalent `iolab run` flags and
    /// how an option is approximated, and run nothing (fio's --parse-only). Exit 0 when every
    /// job can run, 2 with the list of blockers otherwise.
    #[arg(long)]
    pub parse_only: bool,
    #[command(flatten)]
    pub set: FileSetArgs,
    /// Test mode(s), comma separated: seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw, seqrw (a
    /// sequential mix of reads and writes, fio's rw=readwrite), seqtrim, rndtrim (holes punched
    /// in files, discards on a --device), seqtrimwr, rndtrimwr (each trim followed by a write
    /// there); fio's names too (--rw randread, --rw trimwrite).
    #[arg(long, visible_alias = "rw")]
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
    /// --direct: buffered, it completes each I/O inside io_submit), posixaio (POSIX AIO through
    /// glibc's helper threads), mmap, falloc (fallocate per I/O, no data), ftruncate (each
    /// write truncates to its offset), filecreate, filestat, filedelete (a file of its own per
    /// operation in --dir; with --ops), null (no I/O); fio's names too (--ioengine psync).
    /// cpuio and exec (fio's engines without I/O) run from job files only.
    #[arg(long, visible_alias = "ioengine", default_value = "sync")]
    pub engine: String,
    /// I/Os in flight per thread (io_uring, libaio, posixaio).
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub iodepth: u32,
    /// Worker threads (fio's --numjobs).
    #[arg(long, visible_alias = "numjobs", value_parser = at_least_one::<u32>)]
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
    #[arg(long, visible_alias = "filename", value_name = "PATH")]
    pub device: Option<PathBuf>,
    /// Where the range starts on --device (bytes, or 4K, 1G ...; a multiple of the device's
    /// logical block size), or in each file of the set in --dir (fio's offset=: the files are
    /// made that much longer, the I/O stays in the --size/--files after it) [default: 0].
    #[arg(long, value_parser = size_arg, value_name = "BYTES")]
    pub offset: Option<u64>,
    /// Thread N's range starts N times this further on (fio's offset_increment=), in each file
    /// of the set or on --device; each thread then moves through the whole range instead of a
    /// share of it [default: 0].
    #[arg(long, value_parser = size_arg, value_name = "BYTES")]
    pub offset_increment: Option<u64>,
    /// Random modes: every offset a multiple of this, in each file or from --offset on a
    /// --device (fio's blockalign=) [default: the smallest block size of the I/O's direction].
    #[arg(long, value_parser = nonzero_size, value_name = "BYTES")]
    pub block_align: Option<u64>,
    /// Sequential modes: after each read or write, move on this much further (fio's
    /// rw=...:N, holes between I/Os; negative goes backwards); a pass of a thread's range ends
    /// where the next I/O would not fit, and the next starts at the range's start
    /// [default: 0].
    #[arg(long, value_parser = signed_size, value_name = "BYTES", allow_negative_numbers = true)]
    pub seq_skip: Option<i64>,
    /// Random modes: draw a new random offset every N reads and writes only; the ones between
    /// follow the last one sequentially (fio's rw=randread:N) [default: every one].
    #[arg(long, value_parser = at_least_one::<u32>, value_name = "N")]
    pub random_every: Option<u32>,
    /// With --random-every: the I/Os between repeat the last offset instead of following it
    /// (fio's rw_sequencer=identical).
    #[arg(long, requires = "random_every")]
    pub random_every_same: bool,
    /// Random modes: this percent of reads and writes at a drawn offset, the others following
    /// the last one sequentially (fio's percentage_random) [default: 100].
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100), value_name = "PCT")]
    pub random_pct: Option<u8>,
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
    /// With --rate (or a job file's rates): sleep to each I/O's slot, never spin on the clock
    /// before it. By default a thread spins the last 20 µs before a slot only when its threads
    /// leave a CPU idle besides (threads < CPUs - 1); see docs/measurement.md.
    #[arg(long)]
    pub no_spin: bool,
    /// How long to measure each mode: 30, 30s, 2m, 500ms (default 10 s; 6 per step in the
    /// default profile); fio's --runtime. With --ops or --io-size: stop at whichever comes
    /// first (fio's runtime without time_based).
    #[arg(long, visible_alias = "runtime", value_parser = seconds)]
    pub time: Option<f64>,
    /// Exact total number of reads+writes across all threads (fsyncs come on top).
    #[arg(long, value_parser = at_least_one::<u64>)]
    pub ops: Option<u64>,
    /// Exact total bytes read+written across all threads, as fio's size= of a size-bound job:
    /// each thread its share, its last I/O trimmed to fit.
    #[arg(long, conflicts_with = "ops", value_parser = nonzero_size)]
    pub io_size: Option<u64>,
    /// How random offsets are drawn: off (with replacement, fio's norandommap), bitmap (fio's
    /// default: each block of a thread's part of the set once per pass, an I/O trimmed to the
    /// blocks not done) or lfsr (fio's random_generator=lfsr: a full-period sequence, no bitmap).
    #[arg(long, default_value = "off")]
    pub random_map: crate::model::job::RandomMap,
    /// A job file's fio log files (`write_bw_log`, ...): set by the job file's translation,
    /// never a flag.
    #[arg(skip)]
    pub fio_logs: Option<crate::model::job::FioLogs>,
    /// A job file's fio seeds (its offsets and mix drawn with fio's generators): set by the
    /// job file's translation, never a flag.
    #[arg(skip)]
    pub fio_rand: Option<crate::model::job::FioRand>,
    /// What writes hold: random (pseudo-random bytes, each 512-byte sector stamped with its
    /// offset and the write's number so no two blocks are alike: fio's default), zero or
    /// pattern:0xHEX; then ,refill (new bytes every write), ,noscramble, ,compress=PCT[:CHUNK]
    /// (that share of each chunk zeros), ,dedupe=PCT[:ws=PCT] (that share of writes repeat an
    /// earlier one). fio's buffer options; docs/measurement.md.
    #[arg(long, value_name = "SPEC", default_value = "random")]
    pub buffers: crate::model::buffers::Buffers,
    /// Run the threads only on these CPUs: 0,5,8-15 (fio's cpus_allowed); with :split each
    /// thread on one of them in turn (fio's cpus_allowed_policy=split). Each thread sets its own
    /// affinity when it starts.
    #[arg(long, value_name = "LIST[:split]")]
    pub cpus: Option<crate::model::placement::Cpus>,
    /// The threads' I/O priority: rt:N, be:N (N from 0, the highest, to 7) or idle (fio's
    /// prioclass and prio; ionice's classes). Each thread sets its own when it starts.
    #[arg(long, value_name = "CLASS[:LEVEL]")]
    pub ioprio: Option<crate::model::placement::IoPrio>,
    /// Replay a trace instead of a workload of iolab's: a file of `iolab capture`, a fio iolog
    /// (version 2 or 3, fio's write_iolog) or a blktrace binary (blkparse -d), onto --dir (one file per file of the trace, as large
    /// as the trace's extent by default) or --device, each request at its time (docs/capture.md,
    /// Replay). Offsets past the target's size wrap around it.
    #[arg(long, value_name = "TRACE")]
    pub replay: Option<PathBuf>,
    /// With --replay: the trace's time divided by this (2: twice as fast, 0.5: half) [default: 1].
    #[arg(long, value_name = "N", requires = "replay", value_parser = speed)]
    pub speed: Option<f64>,
    /// With --replay: ignore the trace's times, issue each request as soon as fewer than its
    /// captured queue depth are in flight (closed loop, as fast as the target allows); with
    /// --like: the twin's requests so, its queue depths drawn from the capture's.
    #[arg(long, requires = "trace")]
    pub closed: bool,
    /// Run a synthetic twin of an `iolab capture` file: requests drawn from its distributions
    /// (mix, sizes, sequentiality, gaps between requests, queue depth, hot regions), at its rate
    /// (or --closed), for --time or the capture's window, onto --dir or --device of any size
    /// (docs/capture.md, Like).
    #[arg(long, value_name = "CAPTURE")]
    pub like: Option<PathBuf>,
    /// With --like: N times the captured load (its request rate; with --closed its queue
    /// depth) [default: 1].
    #[arg(long, value_name = "N", requires = "like", value_parser = speed)]
    pub scale: Option<f64>,
    /// With --like: the twin of one file class's requests only (a capture made with --dir,
    /// --pid or --cgroup): wal, data, temp, other, or unmapped (the filesystem's own); all:
    /// every request in one stream. Without it, onto --dir, each class the capture told is a
    /// role of its own, all at once.
    #[arg(long = "class", value_name = "CLASS", requires = "like", value_parser = ["wal", "data", "temp", "other", "unmapped", "all"])]
    pub like_class: Option<String>,
    /// --replay's trace as read (set by `plan_run`, never a flag).
    #[arg(skip)]
    pub replay_spec: Option<crate::model::replay::Replay>,
    /// A job file's `filename=` (files, not a device): an existing file longer than the job
    /// needs is used as it is, as fio does (set by the job file's translation, never a flag).
    #[arg(skip)]
    pub named_files: bool,
    /// fio's options of when I/O is issued, set by a job file only (no flag).
    #[arg(skip)]
    pub timing: crate::model::timing::Timing,
    /// What a thread of fio's `cpuio` or `exec` engine does, set by a job file only (no flag).
    #[arg(skip)]
    pub noio: Option<crate::model::noio::NoIo>,
    /// A job file's verify read-back (the modes after the first) moves this many operations in
    /// place of `--ops` (fio's `experimental_verify` with `loops`: one read-back pass); not a flag.
    #[arg(skip)]
    pub readback_ops: Option<u64>,
    /// Run until the result holds (SNIA PTS): rounds of --round seconds; steady once, over the
    /// last 5 rounds, the IOPS's range is within 20 % of their average and the best-fit line's
    /// excursion within 10 % (`iops:20%,slope:10%`, the default; `mibps:...` tracks MiB/s;
    /// `fio:iops_slope:0.1%` fio's one criterion; `,window:N` rounds). Ends at --time (default
    /// 25 rounds) if never steady, with a not_steady warning. docs/steady-state.md.
    #[arg(long, value_name = "SPEC", num_args = 0..=1, require_equals = false,
          default_missing_value = "iops:20%,slope:10%", value_parser = steady_state)]
    pub steady_state: Option<SteadyArg>,
    /// Seconds per --steady-state round (default 60, PTS's one-minute rounds).
    #[arg(long, value_name = "SECONDS", value_parser = seconds, requires = "steady_state")]
    pub round: Option<f64>,
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
    /// With --verify: every N writes, each thread reads those N back and checks them before
    /// writing on (and what is left after its last write), in the same mode (fio's
    /// verify_backlog); a size-bound mode then moves its bytes both ways.
    #[arg(long, value_name = "N", requires = "verify", value_parser = at_least_one::<u64>)]
    pub verify_backlog: Option<u64>,
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
    #[command(flatten)]
    pub label: LabelArg,
    #[command(flatten)]
    pub tag: TagArgs,
    #[command(flatten)]
    pub quiet: QuietArg,
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
    /// iolab_bytes_total, iolab_errors_total, iolab_latency_seconds, iolab_run_info, the device
    /// counters; docs/metrics.md); `:PORT` is every address.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,
    /// With --metrics-listen: after the run (its results printed), keep serving until one
    /// scrape has read the final counts, at most this long: 20s, 500ms, 0 (end at once);
    /// Ctrl-C ends it (docs/metrics.md).
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = duration_s, requires = "metrics_listen")]
    pub metrics_linger: f64,
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

    #[test]
    fn the_run_option_groups_name_options_of_run_each_in_one_group() {
        let (inv, whole) = (run_group(INVOCATION), run_group(WHOLE_RUN));
        assert_eq!(inv.len(), 17, "{inv:?}");
        assert_eq!(whole.len(), 9, "{whole:?}");
        assert!(inv.iter().all(|x| !whole.contains(x)), "{inv:?} {whole:?}");
        for k in [
            "json",
            "tag",
            "label",
            "quiet",
            "role",
            "rank-timeout",
            "metrics-linger",
        ] {
            assert!(inv.iter().any(|x| x == k), "{k} in {inv:?}");
        }
        for k in ["dir", "time", "iostat-interval"] {
            assert!(whole.iter().any(|x| x == k), "{k} in {whole:?}");
        }
    }
}
