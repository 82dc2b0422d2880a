//! fio's options as one table, as fio's own `options.c` is one: each option's name, the kind of
//! value it takes (which says how its value is checked) and what iolab does with it: runs it
//! (supported), runs something close and says how it differs (approximated), or refuses it and
//! says why. The job-file reader (`cli::fiojob`) checks every option of a job against it, the
//! fio JSON writer (`output::fio`) writes only options of it (its test checks), and
//! docs/fio-jobs.md's option table is generated from it (`tests/check_docs.rs`). Adding an
//! option is one row here, its translation in `cli::fiojob` when it is run, and its test.

use crate::spec::fio_vocab;

/// The kind of value an option takes (fio's `FIO_OPT_*` types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text (names, paths, lists whose rules are the option's own).
    Str,
    /// 0/1, or bare (fio's `FIO_OPT_BOOL` and `FIO_OPT_STR_SET`).
    Bool,
    /// A whole number (or an arithmetic expression).
    Int,
    /// A byte count with fio's units and `kb_base`.
    Size,
    /// A size for reads and writes (`read,write`; one value for both).
    SizePair,
    /// A time, seconds unless a unit says otherwise.
    Time,
    /// A percentage, `N` or `N%`.
    Percent,
    /// One of a fixed set of words (checked by the translation, which knows what each means).
    Choice,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Str => "text",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Size => "size",
            Kind::SizePair => "size[,size]",
            Kind::Time => "time",
            Kind::Percent => "percent",
            Kind::Choice => "choice",
        }
    }

    /// Checks a value of this kind; the error says why, never quoting the value.
    pub fn check(self, v: Option<&str>, kb_base: u32) -> Result<(), String> {
        let text = v.unwrap_or("");
        match self {
            Kind::Bool => fio_vocab::parse_bool(v).map(drop),
            Kind::Int if fio_vocab::is_expression(text) => {
                fio_vocab::parse_size(text, kb_base).map(drop)
            }
            Kind::Int => text
                .trim()
                .parse::<u64>()
                .map(drop)
                .map_err(|_| "not a whole number".to_string()),
            Kind::Size => fio_vocab::parse_size(text, kb_base).map(drop),
            Kind::SizePair => text
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .try_for_each(|p| fio_vocab::parse_size(p, kb_base).map(drop)),
            Kind::Time => fio_vocab::parse_time(text, 1.0).map(drop),
            Kind::Percent => fio_vocab::parse_percent(text).map(drop),
            Kind::Str | Kind::Choice => Ok(()),
        }
    }
}

/// What iolab does with an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Run with fio's meaning (some values may still be refused: the text says which).
    Supported,
    /// Run, with a difference from fio the text names (and the job's notes repeat).
    Approximated,
    /// Not run: the text says why. A job with it is refused unless `--ignore-unsupported`.
    Refused,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Supported => "supported",
            Status::Approximated => "approximated",
            Status::Refused => "refused",
        }
    }
}

/// One of fio's options.
#[derive(Debug, Clone, Copy)]
pub struct FioOption {
    pub name: &'static str,
    pub kind: Kind,
    pub status: Status,
    /// Supported: what iolab runs. Approximated: how it differs from fio. Refused: why.
    pub what: &'static str,
}

const fn o(name: &'static str, kind: Kind, status: Status, what: &'static str) -> FioOption {
    FioOption {
        name,
        kind,
        status,
        what,
    }
}

use Kind::*;
use Status::*;

/// fio's options iolab knows, in fio's HOWTO order by family. An option fio has that is not
/// here is refused as unknown to iolab.
pub const OPTIONS: &[FioOption] = &[
    // job description
    o(
        "name",
        Str,
        Supported,
        "recorded; a job's own `name=` is what `wait_for` names and the fio JSON `jobname` (a `[global]` `name=` renames no job, as in fio 3.33)",
    ),
    o("description", Str, Supported, "recorded"),
    o(
        "kb_base",
        Int,
        Supported,
        "1024 or 1000, for the job's numbers",
    ),
    o("thread", Bool, Supported, "iolab always runs threads"),
    // what
    o(
        "rw",
        Choice,
        Supported,
        "`read`→`seqrd`, `write`→`seqwr`, `randread`→`rndrd`, `randwrite`→`rndwr`, `randrw`→`rndrw`, `rw`/`readwrite`→`seqrw` (default `read`); trim modes and `rw=...:N` (holes) refused: iolab has no trim or strided I/O",
    ),
    o(
        "rwmixread",
        Percent,
        Supported,
        "`--rwmixread` for `randrw` and `rw` (default 50)",
    ),
    o("rwmixwrite", Percent, Supported, "`--rwmixread 100-N`"),
    o(
        "bs",
        SizePair,
        Supported,
        "`--bs` (default 4k); different sizes for reads and writes refused",
    ),
    o(
        "bsrange",
        Str,
        Supported,
        "`--bs LOW-HIGH`: every multiple of LOW up to HIGH, as fio draws them",
    ),
    o(
        "bssplit",
        Str,
        Supported,
        "`--bs SIZE:PCT,...`; empty percentages share the rest, as in fio",
    ),
    o(
        "blockalign",
        SizePair,
        Supported,
        "accepted when equal to the block size (iolab aligns to it); other values refused",
    ),
    o(
        "ioengine",
        Choice,
        Approximated,
        "`sync`, `psync`, `vsync`, `pvsync`, `pvsync2` run as iolab's `sync`; `libaio`, `io_uring`, `posixaio` (glibc's POSIX AIO, `iodepth` in flight), `mmap`, `null` as themselves; other engines refused",
    ),
    o(
        "iodepth",
        Int,
        Supported,
        "`--iodepth` with `libaio`/`io_uring`; no effect with a sync engine, as in fio",
    ),
    o("direct", Bool, Supported, "`--direct` (default buffered)"),
    o("buffered", Bool, Supported, "`buffered=0` is `--direct`"),
    o(
        "numjobs",
        Int,
        Approximated,
        "one job of N threads with N× the files and size (fio's clones' footprint); its results are the clones merged, as with `group_reporting`",
    ),
    // where
    o("directory", Str, Supported, "`--dir`"),
    o(
        "filename",
        Str,
        Approximated,
        "one `/dev/X`: `--device` (the whole device when no `size=`); other names: iolab's own set of that many files in their directory stands in for them; names in several directories refused",
    ),
    o(
        "filename_format",
        Str,
        Approximated,
        "iolab names its own files (`iolab-file.N`); fio's `$jobname`, `$jobnum`, `$filenum`, `$clientuid` are kept as written",
    ),
    o(
        "size",
        Size,
        Supported,
        "the job's bytes per clone: `--size size×numjobs`; on a device `N%` of it (without `size=`: the whole device); `N%` of files refused (iolab makes its own); `Nz` (zones) refused, as fio refuses it without `zonemode=zbd`",
    ),
    o(
        "filesize",
        Size,
        Supported,
        "without `size=`: `filesize×nrfiles`",
    ),
    o("nrfiles", Int, Supported, "`--files nrfiles×numjobs`"),
    o(
        "offset",
        Size,
        Supported,
        "`--offset` on a device (`N%` of it, down to a whole block); `0` or `0%` on files; a non-zero offset on files refused",
    ),
    o(
        "fallocate",
        Choice,
        Approximated,
        "write jobs: `none`/`truncate` → `--layout holes`, `native`/`posix`/`keep` → `--layout unwritten`; read jobs: ignored",
    ),
    o(
        "create_on_open",
        Bool,
        Approximated,
        "iolab creates the set before the phase, whatever the value",
    ),
    o(
        "invalidate",
        Bool,
        Approximated,
        "iolab evicts the set from the page cache before each phase; `invalidate=0` is not honoured (noted; `--warm` reads the set in instead)",
    ),
    o(
        "unlink",
        Bool,
        Approximated,
        "iolab removes the set it made when the run ends (unless `--keep`), whatever the value; fio removes each job's files when the job ends",
    ),
    // flushes
    o(
        "fsync",
        Int,
        Supported,
        "`--fsync-freq N` (iolab counts writes per file per thread)",
    ),
    o(
        "fdatasync",
        Int,
        Supported,
        "`--fsync-freq N --fsync-mode fdatasync`; with `fsync=` refused",
    ),
    o("end_fsync", Bool, Supported, "`--fsync-end`"),
    o("fsync_on_close", Bool, Supported, "`--fsync-end`"),
    o(
        "sync",
        Choice,
        Supported,
        "`1`/`sync` → `--open-flags sync`, `dsync` → `--open-flags dsync`, `0`/`none` → nothing",
    ),
    // how long
    o(
        "runtime",
        Time,
        Supported,
        "`--time`; without `time_based` beside the size's `--ops`/`--io-size`: whichever comes first, as fio",
    ),
    o("time_based", Bool, Supported, "with `runtime=`"),
    o(
        "ramp_time",
        Time,
        Supported,
        "`--ramp` (a phase's window is its first job's)",
    ),
    o(
        "startdelay",
        Str,
        Supported,
        "the job starts that long after its phase (its ramp, runtime and rates count from there, as fio's); a range `LOW-HIGH` draws one delay per job from iolab's generator (fio's draw differs)",
    ),
    o(
        "loops",
        Int,
        Supported,
        "multiplies a size-bound job's operations",
    ),
    // pacing
    o(
        "rate_iops",
        SizePair,
        Supported,
        "`--rate rate_iops×numjobs` for read or write jobs; on mixed jobs refused",
    ),
    o(
        "rate",
        SizePair,
        Supported,
        "bytes/s ÷ bs as `rate_iops` (fixed block size; with mixed sizes refused)",
    ),
    o(
        "rate_process",
        Choice,
        Supported,
        "`linear`, or `poisson`: exponential gaps between the `--rate` slots (mean 1/rate per thread), latency from each slot",
    ),
    // offsets
    o(
        "random_distribution",
        Choice,
        Supported,
        "`random`→`uniform`, `zipf:θ`, `pareto:h`, `zoned:...` (a trailing `/` as fio takes it); `normal`, `zoned_abs` refused",
    ),
    o("randseed", Int, Supported, "`--seed`"),
    o(
        "randrepeat",
        Bool,
        Supported,
        "default 1: fio's seed 0xb1899bed plus the job's index; `0`: a seed from the clock",
    ),
    o(
        "norandommap",
        Bool,
        Supported,
        "`--random-map off` (offsets drawn with repetition); without it a uniform random job keeps fio's random map (`--random-map bitmap`: each block once per pass, an I/O trimmed to the blocks not done)",
    ),
    o(
        "file_service_type",
        Choice,
        Approximated,
        "`random`, `roundrobin`: iolab spreads each thread's I/O over the set its own way; `sequential` refused",
    ),
    // phases and reporting
    o("stonewall", Bool, Supported, "a new phase"),
    o(
        "wait_for",
        Str,
        Supported,
        "a new phase when it names a job of the current one",
    ),
    o(
        "new_group",
        Bool,
        Supported,
        "accepted: results are per job",
    ),
    o(
        "group_reporting",
        Bool,
        Supported,
        "a job's clones are one row in fio JSON (without it one row each, as fio); iolab's own document always merges them",
    ),
    // verification
    o(
        "verify",
        Choice,
        Approximated,
        "`--verify` and fio's read-back (docs/fio-jobs.md, Verification): a write job's blocks read back after its writes, a mixed job's writes read back after its last one (`--verify-backlog`); iolab's header and CRC-32C stand in for fio's checksum; `pattern` and a read-only job refused",
    ),
    o(
        "do_verify",
        Bool,
        Supported,
        "`0`: written with headers, not read back",
    ),
    o(
        "verify_fatal",
        Bool,
        Approximated,
        "iolab counts every mismatch and exits 3 at the end instead of stopping at the first",
    ),
    o(
        "verify_backlog",
        Int,
        Supported,
        "`--verify-backlog N`: every N writes the thread reads them back and checks them, the rest after its last write",
    ),
    o(
        "verify_interval",
        Size,
        Approximated,
        "iolab's header and checksum cover the whole block",
    ),
    o(
        "verify_pattern",
        Str,
        Refused,
        "iolab's payload is derived from its header, not a fixed pattern",
    ),
    o(
        "verify_async",
        Int,
        Refused,
        "fio hands the checks to N threads of their own; iolab checks in the I/O thread, so its I/O timing would differ",
    ),
    o(
        "verify_dump",
        Bool,
        Refused,
        "fio writes each mismatching block to files in the working directory; iolab reports the first 100 mismatches in its document (header expected and found), not the data",
    ),
    o(
        "verify_only",
        Bool,
        Refused,
        "fio checks, without writing, the headers an earlier fio run wrote; iolab reads only its own headers: `iolab verify --dir` checks a set an earlier `iolab run --verify --keep` wrote",
    ),
    o(
        "verify_offset",
        Size,
        Refused,
        "iolab's header is at the start of the block",
    ),
    o(
        "verify_state_save",
        Bool,
        Refused,
        "fio's state file (`*-verify.state`, where a killed write job got to) has fio's format; iolab always saves its own, every block's generation, in `DIR/.iolab-verify` (with `--keep`, `iolab verify --dir` reads it)",
    ),
    o(
        "verify_state_load",
        Bool,
        Refused,
        "fio's state file (`*-verify.state`) has fio's format; iolab's `iolab verify --dir` reads its own `DIR/.iolab-verify`, which every `iolab run --verify` saves",
    ),
    o("experimental_verify", Bool, Refused, "not implemented"),
    o("trim_percentage", Percent, Refused, "iolab has no trim"),
    o("trim_backlog", Int, Refused, "iolab has no trim"),
    // shaping iolab does not run
    o(
        "io_size",
        Size,
        Refused,
        "iolab moves `size` bytes per clone",
    ),
    o(
        "number_ios",
        Int,
        Supported,
        "each clone stops after that many I/Os (× `loops`) if `size` does not stop it first; no effect with `time_based`, as fio 3.33; with mixed block sizes refused",
    ),
    o(
        "offset_increment",
        Size,
        Refused,
        "clones share one offset range",
    ),
    o(
        "bs_unaligned",
        Bool,
        Refused,
        "iolab aligns every I/O to its block size",
    ),
    o(
        "percentage_random",
        Percent,
        Refused,
        "a job is all random or all sequential",
    ),
    o(
        "random_generator",
        Choice,
        Approximated,
        "`tausworthe`, `tausworthe64`: iolab's own generator (Xoshiro256++) with fio's random map; `lfsr`: `--random-map lfsr`, a full-period sequence that touches each block once per pass without a bitmap, not fio's exact sequence",
    ),
    o(
        "allrandrepeat",
        Bool,
        Approximated,
        "offsets and the read/write mix are seeded as `randrepeat`/`randseed` say; iolab's buffer contents are not seeded",
    ),
    o(
        "rate_min",
        SizePair,
        Supported,
        "as fio: per thread and direction, after 2 s, every `ratecycle`; a thread below it ends with EIO in its errors and a line on stderr",
    ),
    o(
        "rate_iops_min",
        SizePair,
        Supported,
        "as `rate_min`, in I/Os per second (when `rate_min` is not given)",
    ),
    o(
        "ratecycle",
        Int,
        Supported,
        "the window of `rate_min`/`rate_iops_min` in ms (default 1000)",
    ),
    o(
        "io_submit_mode",
        Choice,
        Approximated,
        "`inline`; `offload`: iolab still submits from the worker thread (fio hands each I/O to a submitter thread): the I/O, its pacing and rates are the same, latency counts from each slot in both",
    ),
    o(
        "iodepth_batch_submit",
        Int,
        Approximated,
        "iolab submits every I/O it queued in one call each round (up to `iodepth`)",
    ),
    o(
        "iodepth_batch_complete_min",
        Int,
        Supported,
        "a queue engine waits for that many completions (at most those in flight) before issuing again",
    ),
    o(
        "iodepth_batch_complete_max",
        Int,
        Approximated,
        "iolab reaps every completion there is each round",
    ),
    o(
        "serialize_overlap",
        Bool,
        Supported,
        "an I/O that overlaps one in flight waits for it (queue engines)",
    ),
    o("iodepth_low", Int, Refused, "iolab keeps the queue full"),
    o(
        "thinktime",
        Time,
        Supported,
        "µs unless a unit says: after `thinktime_blocks` I/Os a thread waits for what is in flight, then pauses (asleep on the clock)",
    ),
    o(
        "thinktime_blocks",
        Int,
        Supported,
        "I/Os between pauses (default 1)",
    ),
    o(
        "thinktime_blocks_type",
        Choice,
        Supported,
        "`complete` (default) or `issue`: which I/Os `thinktime_blocks` counts",
    ),
    o(
        "thinktime_spin",
        Time,
        Supported,
        "the first part of each pause spent busy on the CPU (µs), as fio's",
    ),
    o(
        "thinktime_iotime",
        Time,
        Supported,
        "also pause after that much time of I/O (without `thinktime_blocks`: only then)",
    ),
    o(
        "exitall",
        Bool,
        Supported,
        "when a thread of the job ends, every job of its phase (fio's group: the jobs between stonewalls) ends",
    ),
    o(
        "exitall_on_error",
        Bool,
        Supported,
        "an I/O error or a missed minimum rate in the job ends its phase",
    ),
    o(
        "exit_what",
        Choice,
        Approximated,
        "`group` and `stonewall` as fio (one phase runs at a time); `all` ends the phase, but the phases after it still run",
    ),
    o(
        "flow",
        Int,
        Supported,
        "the jobs of a phase sharing a `flow_id` issue I/Os in the ratio of their weights (a shared counter, as fio's); a finished job leaves the flow",
    ),
    o("flow_id", Int, Supported, "which flow (default 0)"),
    o(
        "flow_sleep",
        Int,
        Approximated,
        "µs a thread ahead of its share pauses; 0: iolab sleeps 50 µs where fio spins",
    ),
    o("latency_target", Time, Refused, "no queue-depth search"),
    o("latency_window", Time, Refused, "no queue-depth search"),
    o(
        "latency_percentile",
        Percent,
        Refused,
        "no queue-depth search",
    ),
    o(
        "steadystate",
        Str,
        Refused,
        "fio's steady-state criteria are not implemented",
    ),
    o(
        "steadystate_duration",
        Time,
        Refused,
        "fio's steady-state criteria are not implemented",
    ),
    o(
        "steadystate_ramp_time",
        Time,
        Refused,
        "fio's steady-state criteria are not implemented",
    ),
    o(
        "continue_on_error",
        Choice,
        Refused,
        "iolab counts errors and goes on; fio's classes are not implemented",
    ),
    o(
        "ignore_error",
        Str,
        Refused,
        "iolab counts errors and goes on; fio's classes are not implemented",
    ),
    o("zonemode", Choice, Refused, "no zoned or strided zones"),
    o("zonesize", Size, Refused, "no zoned or strided zones"),
    o("zonerange", Size, Refused, "no zoned or strided zones"),
    o("zoneskip", Size, Refused, "no zoned or strided zones"),
    o("fill_device", Bool, Refused, "iolab writes `size` bytes"),
    o("atomic", Bool, Refused, "no atomic writes"),
    o(
        "openfiles",
        Int,
        Refused,
        "iolab keeps every file of the set open",
    ),
    o("file_append", Bool, Refused, "iolab writes within the set"),
    o(
        "overwrite",
        Bool,
        Refused,
        "iolab writes over its prepared set",
    ),
    o("pre_read", Bool, Refused, "use `--warm`"),
    o("lockfile", Choice, Refused, "no file locking"),
    o(
        "unique_filename",
        Bool,
        Refused,
        "iolab names its own files",
    ),
    // buffer contents
    o(
        "refill_buffers",
        Bool,
        Refused,
        "iolab fills its buffers once",
    ),
    o(
        "scramble_buffers",
        Bool,
        Refused,
        "iolab fills its buffers once",
    ),
    o(
        "zero_buffers",
        Bool,
        Refused,
        "iolab's buffers are pseudo-random",
    ),
    o(
        "buffer_pattern",
        Str,
        Refused,
        "iolab's buffers are pseudo-random",
    ),
    o(
        "buffer_compress_percentage",
        Percent,
        Refused,
        "iolab's buffers are pseudo-random",
    ),
    o(
        "buffer_compress_chunk",
        Size,
        Refused,
        "iolab's buffers are pseudo-random",
    ),
    o(
        "dedupe_percentage",
        Percent,
        Refused,
        "iolab's buffers are pseudo-random",
    ),
    // logs and statistics
    o(
        "write_bw_log",
        Str,
        Refused,
        "iolab keeps its own per-second series in the run document",
    ),
    o(
        "write_lat_log",
        Str,
        Refused,
        "iolab keeps its own per-second series in the run document",
    ),
    o(
        "write_iops_log",
        Str,
        Refused,
        "iolab keeps its own per-second series in the run document",
    ),
    o(
        "write_hist_log",
        Str,
        Refused,
        "iolab keeps its own histograms in the run document",
    ),
    o("log_avg_msec", Int, Refused, "no fio logs"),
    o("log_hist_msec", Int, Refused, "no fio logs"),
    o("log_offset", Bool, Refused, "no fio logs"),
    o("log_prio", Bool, Refused, "no fio logs"),
    o("log_compression", Size, Refused, "no fio logs"),
    o("per_job_logs", Bool, Refused, "no fio logs"),
    o("read_iolog", Str, Refused, "no I/O log replay"),
    o("write_iolog", Str, Refused, "no I/O log replay"),
    o("replay_no_stall", Bool, Refused, "no I/O log replay"),
    o("gtod_reduce", Bool, Refused, "iolab always times every I/O"),
    o("disable_lat", Bool, Refused, "iolab always times every I/O"),
    o(
        "disable_clat",
        Bool,
        Refused,
        "iolab always times every I/O",
    ),
    o(
        "disable_slat",
        Bool,
        Refused,
        "iolab always times every I/O",
    ),
    o(
        "clat_percentiles",
        Bool,
        Refused,
        "iolab reports its own percentiles",
    ),
    o(
        "lat_percentiles",
        Bool,
        Refused,
        "iolab reports its own percentiles",
    ),
    o(
        "percentile_list",
        Str,
        Refused,
        "iolab reports its own percentiles",
    ),
    // placement and priority
    o("cpus_allowed", Str, Refused, "no CPU pinning"),
    o("cpus_allowed_policy", Choice, Refused, "no CPU pinning"),
    o("cpumask", Int, Refused, "no CPU pinning"),
    o("numa_cpu_nodes", Str, Refused, "no NUMA placement"),
    o("numa_mem_policy", Str, Refused, "no NUMA placement"),
    o("nice", Int, Refused, "no priorities"),
    o("prio", Int, Refused, "no I/O priorities"),
    o("prioclass", Int, Refused, "no I/O priorities"),
    o("cmdprio_percentage", Percent, Refused, "no I/O priorities"),
    o("ioscheduler", Str, Refused, "use `iolab sweep --scheduler`"),
    // engine options
    o("hipri", Bool, Refused, "no polled I/O"),
    o("fixedbufs", Bool, Refused, "no registered buffers"),
    o("registerfiles", Bool, Refused, "no registered files"),
    o(
        "sqthread_poll",
        Bool,
        Refused,
        "no submission-queue polling thread",
    ),
    o(
        "nonvectored",
        Bool,
        Refused,
        "iolab's io_uring reads and writes are not vectored either way",
    ),
    o("exec_prerun", Str, Refused, "iolab runs no commands"),
    o("exec_postrun", Str, Refused, "iolab runs no commands"),
    o(
        "mem",
        Choice,
        Refused,
        "iolab allocates its own aligned buffers",
    ),
    o("lockmem", Size, Refused, "no memory locking"),
];

/// The option of that name (fio's aliases resolved by the parser first).
pub fn find(name: &str) -> Option<&'static FioOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The table as Markdown, for docs/fio-jobs.md (`tests/check_docs.rs` keeps them equal):
/// one row per option, its aliases beside it.
pub fn markdown() -> String {
    let mut rows: Vec<&FioOption> = OPTIONS.iter().collect();
    rows.sort_by_key(|o| (o.status as u8, o.name));
    let mut out = String::from(
        "| fio option | value | iolab | what iolab does (supported), how it differs (approximated), why not (refused) |\n|---|---|---|---|\n",
    );
    for r in rows {
        let aliases: Vec<String> = crate::spec::fiojob::ALIASES
            .iter()
            .filter(|(_, to)| *to == r.name)
            .map(|(a, _)| format!("`{a}`"))
            .collect();
        let name = if aliases.is_empty() {
            format!("`{}`", r.name)
        } else {
            format!("`{}` ({})", r.name, aliases.join(", "))
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {} |\n",
            r.kind.name(),
            r.status.name(),
            r.what
        ));
    }
    let count = |s: Status| OPTIONS.iter().filter(|o| o.status == s).count();
    out.push_str(&format!(
        "\n{} options: {} supported, {} approximated, {} refused. Any other option is refused as one iolab does not know.\n",
        OPTIONS.len(),
        count(Supported),
        count(Approximated),
        count(Refused)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_option_once_and_aliases_name_options() {
        for (i, a) in OPTIONS.iter().enumerate() {
            assert!(
                OPTIONS[i + 1..].iter().all(|b| b.name != a.name),
                "{} twice",
                a.name
            );
            assert!(!a.what.is_empty(), "{}", a.name);
        }
        for (alias, to) in crate::spec::fiojob::ALIASES {
            assert!(find(alias).is_none(), "{alias} is an alias");
            assert!(
                find(to).is_some(),
                "alias {alias} names {to}, not in the table"
            );
        }
    }

    #[test]
    fn kinds_check_values_as_fio_reads_them() {
        assert!(Kind::Size.check(Some("4k"), 1024).is_ok());
        assert!(Kind::Size.check(Some("abc"), 1024).is_err());
        assert!(Kind::SizePair.check(Some("4k,8k"), 1024).is_ok());
        assert!(Kind::Bool.check(None, 1024).is_ok());
        assert!(Kind::Bool.check(Some("2"), 1024).is_err());
        assert!(Kind::Int.check(Some("(2*3)"), 1024).is_ok());
        assert!(Kind::Int.check(Some("x"), 1024).is_err());
        assert!(Kind::Time.check(Some("30s"), 1024).is_ok());
        assert!(Kind::Percent.check(Some("120"), 1024).is_err());
    }
}
