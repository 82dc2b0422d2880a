//! Longer than 900 lines because it is one table, a row per fio option, as fio's `options.c`.
//!
//! fio's options as one table, as fio's own `options.c` is one: each option's name, the kind of
//! value it takes (which says how its value is checked) and what iolab does with it: runs it
//! (supported), runs something close and says how it differs (approximated), or refuses it and
//! says why. The job-file reader (`cli::fiojob`) checks every option of a job against it, the
//! fio JSON importer (`store::import`) reads job options by its names and their aliases, the
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
    o(
        "threads",
        Int,
        Supported,
        "accepted with no effect, as fio 3.33 (the `tiobench` profile's thread count, registered for every job; iolab runs no `profile=`)",
    ),
    // what
    o(
        "rw",
        Choice,
        Supported,
        "`read`→`seqrd`, `write`→`seqwr`, `randread`→`rndrd`, `randwrite`→`rndwr`, `randrw`→`rndrw`, `rw`/`readwrite`→`seqrw` (default `read`), `trim`→`seqtrim`, `randtrim`→`rndtrim`, `trimwrite`→`seqtrimwr`, `randtrimwrite`→`rndtrimwr` (each trim followed by a write of its size at its offset); a trim is `BLKDISCARD` on a device (`--destructive`), as fio's, and on a file a hole punched (`fallocate(PUNCH_HOLE|KEEP_SIZE)`), where fio 3.33 fails each trim with ENOTTY (a note says so); a sequential `:N` is `--seq-skip N` (holes, negative backwards, a pass ending where fio's does; with one file per clone, one size); a random `:N` is `--random-every N` (every Nth offset drawn, the others following the last, as fio)",
    ),
    o(
        "rw_sequencer",
        Choice,
        Supported,
        "with a random `rw=...:N`: `sequential` (the I/Os between drawn ones follow the last, `--random-every N`) or `identical` (they repeat its offset, `--random-every-same`)",
    ),
    o(
        "rwmixread",
        Percent,
        Supported,
        "`--rwmixread` for `randrw` and `rw` (default 50); from a job file each direction is chosen as fio chooses it (`get_rw_ddir`: drawn from fio's generator with fio's seed, a change of direction giving the new one a turn), so a size-bound job reads and writes the bytes fio's does (16200 and 16568 KiB of `rw=readwrite size=32m`); `iolab run --rw-ratio` keeps its exact interleave",
    ),
    o("rwmixwrite", Percent, Supported, "`--rwmixread 100-N`"),
    o(
        "bs",
        SizePair,
        Supported,
        "`--bs` (default 4k); `bs=R,W,T`: the reads' `--bs`, the writes' (a trim mode's: the trims') `--bs-write` where they differ",
    ),
    o(
        "bsrange",
        Str,
        Supported,
        "`--bs LOW-HIGH` (per direction as `bs`): LOW + HIGH × U down to a multiple of LOW, at most HIGH, as fio draws them; each side read as fio reads it, the text after a number and its unit ignored (t0023's `512/25:1k:...` is 512-1k)",
    ),
    o(
        "bssplit",
        Str,
        Supported,
        "`--bs SIZE:PCT,...` (per direction as `bs`), the odds as fio's draw gives them: missing (or 0) percentages share the rest in whole percents, the entries taken in the order of their percents and the last one given what is left; each size down to a multiple of the smallest. With fio's random map and different smallest sizes for reads and writes, both on the smaller one's grid (a note: fio aligns each to its own, and its job can end before size=)",
    ),
    o(
        "blockalign",
        SizePair,
        Supported,
        "`--block-align`: random offsets multiples of it (one value for reads and writes; different ones refused); other than the smallest block size only with `norandommap` (fio draws blocks of it but marks its random map in blocks of the smallest size)",
    ),
    o(
        "ioengine",
        Choice,
        Approximated,
        "`sync`, `psync`, `vsync`, `pvsync`, `pvsync2` run as iolab's `sync`; `libaio`, `io_uring`, `posixaio` (glibc's POSIX AIO, `iodepth` in flight), `mmap`, `null` as themselves; `falloc` (a write `fallocate(0)`, a read `fallocate(KEEP_SIZE)`, a trim a hole punched, as fio's) and `ftruncate` (a write `ftruncate` to its offset; reads and trims refused, which fio fails with EINVAL; unlike fio, each file is put back to its size when the job ends, so the set can be kept or removed), `filecreate`, `filestat`, `filedelete` (one operation per file, `nrfiles` per job, on files of iolab's own made beside what is in the directory and removed afterwards; fio's stay) as themselves; `cpuio` (no I/O: each thread busy `cpuload` % of its time, each busy cycle a read of 0 bytes) and `exec` (no I/O: the job's `program` run for its runtime) as fio's; other engines refused",
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
        "one `/dev/X`: `--device` (the whole device when no `size=`); other names: iolab's own set of that many files in their directory stands in for them (jobs run one after another on the same names use the same set; jobs of one phase that name the same files with the same sizes share one set, as fio shares the file, unless one is a sequential writer, which empties its files: then each job has a set in `DIR/NAME/`); a set that is there and longer than the job needs (a run kept with `--keep`, as fio's files stay) is used as it is, its first bytes, as fio uses a longer file it finds; names in several directories refused",
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
        "the job's bytes per clone: `--size size×numjobs`; on a device `N%` of it (without `size=`: the whole device); without `size=` and `filesize=`, the bytes of the existing files `filename=` names, as fio (a missing, empty or linked one: refused); `N%` of files refused (iolab makes its own); `Nz` (zones) refused, as fio refuses it without `zonemode=zbd`",
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
        "`--offset`: where the range starts on a device or in each file (iolab makes its files `offset`+`size`/`nrfiles` long, as fio lays them out); `N%` of a device aligned up to `offset_align` (else the smallest block), as fio; `N%` of a file is of its size before it is laid out, 0 for files iolab makes (as for a file fio creates)",
    ),
    o(
        "offset_align",
        Size,
        Supported,
        "the alignment of a percentage `offset`/`offset_increment` (default the smallest block size)",
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
        "iolab removes the set it made when the run ends (unless `--keep`), whatever the value; fio removes each job's files when the job ends with 1, and leaves them with 0 (its default): `--keep` is iolab's way to leave them for a later job file (fio's pre/post pairs)",
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
        "per clone, `read,write` (one value: each direction): `--rate rate_iops×numjobs` for a job of one direction and one block size; otherwise (a mixed job, mixed sizes) fio's schedule per direction in bytes, `rate_iops ×` the smallest block (see 'When I/O is issued')",
    ),
    o(
        "rate",
        SizePair,
        Supported,
        "bytes/s per clone, `read,write` (one value: each direction): `--rate rate÷bs×numjobs` where that is whole I/Os a second of a job of one direction and one block size; otherwise fio's schedule per direction in bytes (a mixed job's reads and writes each at its own rate, a fraction of an I/O a second, mixed sizes)",
    ),
    o(
        "rate_process",
        Choice,
        Supported,
        "`linear`, or `poisson`: exponential gaps between the slots (mean 1/rate per thread; per direction, the smallest block at its rate, as fio's), latency from each slot",
    ),
    // offsets
    o(
        "random_distribution",
        Choice,
        Supported,
        "`random`→`uniform`, `zipf:θ`, `pareto:h`, `zoned:...` (a trailing `/` as fio takes it); `normal`, `zoned_abs` refused",
    ),
    o(
        "randseed",
        Int,
        Supported,
        "`--seed`; fio's seeds from it (its `setup_random_seeds`): the read/write mix drawn as fio draws it, and the offsets too with `randrepeat=0`",
    ),
    o(
        "randrepeat",
        Bool,
        Supported,
        "default 1: a uniform random job's offsets from fio's own generator and seed (0xb1899bed times fio's thread number: the same offsets in the same order as fio), the read/write mix from fio's seed of `randseed`; `0` without `randseed`: a seed from the clock",
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
        "starts the next reporting group (fio's `groupid`) without a new phase",
    ),
    o(
        "group_reporting",
        Bool,
        Supported,
        "the jobs of a reporting group (between stonewalls, or from a `new_group` on) and their clones are one row in fio JSON, summed as fio's (without it one row per clone, as fio); iolab's own document keeps each job, its clones merged",
    ),
    // verification
    o(
        "verify",
        Choice,
        Approximated,
        "`--verify` and fio's read-back (docs/fio-jobs.md, Verification): a write job's blocks read back after its writes (on a device too, within the run: no state is kept there), a mixed job's writes read back after its last one (`--verify-backlog`); iolab's header and CRC-32C stand in for fio's checksum (and for `pattern`); a job that only reads checks the blocks iolab's own verify wrote on the same set (an earlier job of the run, or a run kept with `--keep`), not fio's headers: blocks no iolab verify write reached are counted unchecked, where fio would report bad headers; blocks read in another size or alignment than that verify wrote them (t0003) each fail (`stale`: no header of that block), as fio's headers fail",
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
        Size,
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
        Approximated,
        "iolab's blocks carry its header, payload and CRC-32C, fio's the pattern (after its header unless `verify=pattern`): a corrupted block is found either way, the bytes written differ; `%o` and quoted strings accepted",
    ),
    o(
        "verify_async",
        Int,
        Approximated,
        "iolab checks in the I/O thread (no lock, no allocation); fio hands the checks to N threads of their own: the same blocks checked, the thread's I/O waits for them",
    ),
    o(
        "verify_async_cpus",
        Str,
        Approximated,
        "no verify threads to place (see `verify_async`)",
    ),
    o(
        "verify_dump",
        Bool,
        Approximated,
        "iolab's document lists the first 100 mismatching blocks (the header expected and the one found, the kind: lost, misdirected, torn, stale); fio writes each one's data, expected and read, to files in the working directory",
    ),
    o(
        "verify_only",
        Bool,
        Approximated,
        "the job's writes are not run: its range is read and checked against the generations an earlier `iolab run --verify --keep` of the set left in `DIR/.iolab-verify` (fio regenerates the headers of its previous invocation, and counts the skipped writes in its JSON; iolab reports none); on a set without them nothing is checked (warning `verify_nothing_written`)",
    ),
    o(
        "verify_offset",
        Size,
        Approximated,
        "iolab's header stays at the start of each block; fio swaps it with the data at that offset (the same corruption is found)",
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
    o(
        "experimental_verify",
        Bool,
        Approximated,
        "iolab reads back the blocks it wrote by the generations it kept; fio's experimental verify regenerates the offsets instead of logging them: the same blocks read and checked; with `loops=N` N-1 write passes and one read-back, as fio 3.33 does",
    ),
    o(
        "trim_percentage",
        Percent,
        Refused,
        "verify's trims of written blocks (checked to read back as zeros) are not run",
    ),
    o(
        "trim_backlog",
        Int,
        Refused,
        "verify's trims of written blocks (checked to read back as zeros) are not run",
    ),
    // shaping iolab does not run
    o(
        "io_size",
        Size,
        Supported,
        "the bytes each clone moves within its `size` (wrapping, each pass of the random map anew), as fio; `N%` of `size`",
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
        Approximated,
        "`--offset-increment`: clone N's range starts N increments after `offset` and each clone moves through its whole range, as fio; clones with files of their own get files as long as the last clone's (fio makes each clone's file only as long as its own range)",
    ),
    o(
        "bs_unaligned",
        Bool,
        Supported,
        "a `bssplit` size kept as given (fio otherwise takes it down to a multiple of the smallest); with `bsrange` refused (fio then draws any byte count, iolab keeps statistics per size, at most 64)",
    ),
    o(
        "percentage_random",
        Percent,
        Supported,
        "`--random-pct`: that share of a random job's reads and writes at a drawn offset, the others following the last one, as fio; different values for reads and writes refused",
    ),
    o(
        "random_generator",
        Choice,
        Approximated,
        "`tausworthe` (fio's taus88), `tausworthe64` (taus258): fio's own generators, seeded as fio seeds them, so a uniform random job (with or without the random map) draws fio's offsets in fio's order; `lfsr`: `--random-map lfsr`, a full-period sequence that touches each block once per pass without a bitmap, not fio's exact sequence. Sizes of a `bssplit` or `bsrange` and skewed distributions are drawn with iolab's own generator",
    ),
    o(
        "allrandrepeat",
        Bool,
        Approximated,
        "every seed from 0xb1899bed times fio's thread number, as fio: the read/write mix's too; iolab's buffer contents are not seeded",
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
    o(
        "latency_target",
        Time,
        Supported,
        "fio's queue-depth search (µs unless a unit says): each thread starts at depth 1, doubles it after each good window (bisects towards the last bad depth once one failed), halves back after a bad one, and once a window leaves its depth where it was, waits for what is in flight, restarts its counts and runs one more window there, then ends; the fio JSON's `latency_depth` is the depth it ended at (see Latency target). Refused with a synchronous engine and with `ramp_time`",
    ),
    o(
        "latency_window",
        Time,
        Supported,
        "how long each depth is tried (µs unless a unit says; 0: judged every round, as fio)",
    ),
    o(
        "latency_percentile",
        Str,
        Supported,
        "the share of a window's I/Os within the target for the window to be good (default 100: the first late I/O lowers the depth at once, and at depth 1 ends the thread with ETIMEDOUT, as fio)",
    ),
    o(
        "latency_run",
        Bool,
        Supported,
        "the search goes on after the depth settled, the job running to its runtime or size",
    ),
    o(
        "max_latency",
        Str,
        Supported,
        "per direction (`read,write,trim`; µs unless a unit says): an I/O slower than it (issue to completion) ends its thread with ETIMEDOUT in its errors and a line on stderr, as fio's `lat_fatal`",
    ),
    o(
        "steadystate",
        Str,
        Supported,
        "fio's criteria: `iops`/`bw` (the window's largest deviation from its mean) and `iops_slope`/`bw_slope` (its least-squares slope) under `N%` of its mean, or `N` I/Os (bytes, with fio's units) per second; one sample per second of the job's reads, writes and trims (from the job's start; fio's helper thread ticks on its own clock, up to a second apart), the job ending once the window holds, its group's jobs together with `group_reporting` (their samples summed); the fio JSON's `steadystate` as fio's (default `iops_slope:0.01%`; see Steady state)",
    ),
    o(
        "steadystate_duration",
        Time,
        Supported,
        "the window (whole seconds, as fio truncates it; under 1 s: no steady state, as fio); with `ramp_time` refused (fio restarts its counts at the ramp's end under its sampler: a wrapped sample)",
    ),
    o(
        "steadystate_ramp_time",
        Time,
        Supported,
        "seconds after the job's start before its first sample, which is a second later (as fio's)",
    ),
    o(
        "continue_on_error",
        Choice,
        Approximated,
        "iolab counts every failed I/O by errno and goes on (fio's `continue_on_error=all`, every error ignored); with `none` (fio's default) fio ends the job at its first error, which iolab does not: a job that meets no error runs the same",
    ),
    o(
        "ignore_error",
        Str,
        Approximated,
        "iolab counts every failed I/O by errno and goes on (fio's `continue_on_error=all`, every error ignored); with `none` (fio's default) fio ends the job at its first error, which iolab does not: a job that meets no error runs the same",
    ),
    o(
        "error_dump",
        Bool,
        Approximated,
        "0 (fio's default) as fio; 1: fio prints a line for each failed I/O, iolab counts them by errno in the results (`errors`) and prints none",
    ),
    o(
        "zonemode",
        Choice,
        Supported,
        "`none`, or `strided` as fio: a sequential read or write job's I/O moves `zonesize` bytes in each zone, then goes on `zonerange + zoneskip` after the zone's start (see 'When I/O is issued'); with random, mixed or trim I/O, several files, mixed sizes or clones sharing a file refused; `zbd` (zoned block devices) refused",
    ),
    o(
        "zonesize",
        Size,
        Supported,
        "the bytes moved in each strided zone (with `zonemode=strided`: fio refuses it with `none`, the default)",
    ),
    o(
        "zonerange",
        Size,
        Supported,
        "how far into a strided zone the I/O goes before it starts over at the zone's start (default `zonesize`)",
    ),
    o(
        "zoneskip",
        Size,
        Supported,
        "the bytes skipped between strided zones",
    ),
    o("fill_device", Bool, Refused, "iolab writes `size` bytes"),
    o("atomic", Bool, Refused, "no atomic writes"),
    o(
        "openfiles",
        Int,
        Approximated,
        "with `filecreate`, `filestat`, `filedelete` without effect (they hold no file open); with the other engines refused: iolab keeps every file of the set open",
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
        Supported,
        "`--buffers ...,refill`: new pseudo-random bytes before every write (iolab's generator, not fio's bytes)",
    ),
    o(
        "scramble_buffers",
        Bool,
        Supported,
        "default 1, as fio: before each write every 512-byte sector gets its offset and the write's number (fio: the time), so no two blocks are alike; `0`: `--buffers ...,noscramble` (every write the same bytes)",
    ),
    o(
        "zero_buffers",
        Bool,
        Supported,
        "`--buffers zero` (not scrambled, as fio)",
    ),
    o(
        "buffer_pattern",
        Str,
        Supported,
        "`--buffers pattern:0xHEX`: fio's `0xHEX`, decimal and quoted-string elements, repeated from the start of each buffer, scrambled unless `scramble_buffers=0`",
    ),
    o(
        "buffer_compress_percentage",
        Percent,
        Supported,
        "`--buffers ...,compress=PCT`: that share of each chunk zeros (or the pattern), the rest pseudo-random, refilled every write, as fio's `fill_random_buf_percentage`; `100` is zeros",
    ),
    o(
        "buffer_compress_chunk",
        Size,
        Supported,
        "`--buffers ...,compress=PCT:CHUNK` (default: the smallest block size, as fio)",
    ),
    o(
        "dedupe_percentage",
        Percent,
        Supported,
        "`--buffers ...,dedupe=PCT`: that share of writes repeat an earlier write's content, the rest unique (fio-dedupe reports the share); `100`: every write the same",
    ),
    o(
        "dedupe_mode",
        Choice,
        Supported,
        "`repeat`: the previous unique write's content; `working_set`: `--buffers ...,dedupe=PCT:ws=WS`, one of the first unique contents covering WS % of the thread's part of the set",
    ),
    o(
        "dedupe_global",
        Bool,
        Approximated,
        "each thread's repeated content comes from its own working set; fio's from every job's with `dedupe_global=1` (one file alone dedupes as fio's, files together less)",
    ),
    o(
        "dedupe_working_set_percentage",
        Percent,
        Supported,
        "the working set's share (default 5, as fio; with `dedupe_percentage` at most 100 %)",
    ),
    // logs and statistics
    o(
        "write_bw_log",
        Str,
        Supported,
        "fio's bandwidth log (docs/fio-jobs.md, Log files): `NAME_bw.N.log` (N fio's thread number) in the current folder or the path given, one line per read or write (KiB/s over its completion latency), written whole after the phase",
    ),
    o(
        "write_lat_log",
        Str,
        Supported,
        "fio's `NAME_lat`, `NAME_clat` and `NAME_slat` logs (ns; a sync engine's slat log is empty, as fio's)",
    ),
    o(
        "write_iops_log",
        Str,
        Supported,
        "fio's IOPS log (1 per I/O, or I/Os per second per window)",
    ),
    o(
        "write_hist_log",
        Str,
        Supported,
        "fio's completion latency histogram log `NAME_clat_hist.N.log`: one line per `log_hist_msec` interval and direction, the interval's count in each of fio's 1856 bins (empty without log_hist_msec, as fio's)",
    ),
    o(
        "log_entries",
        Int,
        Supported,
        "no effect needed: iolab's log records grow in chunks of 65,536 (one allocation per chunk, never per I/O)",
    ),
    o(
        "log_avg_msec",
        Int,
        Supported,
        "one line per window and direction: the mean latency, the window's KiB/s and I/Os per second (block size and offset 0)",
    ),
    o(
        "log_max_value",
        Bool,
        Supported,
        "with log_avg_msec, the window's largest latency instead of its mean",
    ),
    o(
        "log_hist_msec",
        Int,
        Supported,
        "the histogram log's interval (ms)",
    ),
    o(
        "log_hist_coarseness",
        Int,
        Supported,
        "0-6: each step sums two neighbouring bins of the histogram log (1856 columns at 0)",
    ),
    o(
        "log_offset",
        Bool,
        Supported,
        "the offset column of every log",
    ),
    o(
        "log_prio",
        Bool,
        Supported,
        "the priority column as fio's ioprio value in hex: iolab's I/O run at the default priority (0x0000)",
    ),
    o(
        "log_compression",
        Size,
        Refused,
        "iolab keeps its log records uncompressed (at most 1 GiB per phase, docs/fio-jobs.md) and writes plain text logs",
    ),
    o(
        "log_store_compressed",
        Bool,
        Refused,
        "iolab writes plain text logs only (fio's .fz files need fio --inflate-log)",
    ),
    o(
        "log_unix_epoch",
        Bool,
        Supported,
        "log times in ms since the epoch of clock log_alternate_epoch_clock_id (0, the real-time clock: Unix time), the clock read when the job's measured window began",
    ),
    o(
        "log_alternate_epoch",
        Bool,
        Supported,
        "log times in ms since the epoch of clock log_alternate_epoch_clock_id, as log_unix_epoch",
    ),
    o(
        "log_alternate_epoch_clock_id",
        Int,
        Supported,
        "clock_gettime's clock id for log_unix_epoch and log_alternate_epoch (a clock the system lacks is refused)",
    ),
    o(
        "per_job_logs",
        Bool,
        Supported,
        "0: one file per log kind (`NAME_bw.log`), every thread's lines and those of later jobs of the same name appended",
    ),
    o(
        "read_iolog",
        Str,
        Approximated,
        "the log replayed as `iolab run --replay FILE`: fio's iolog version 2 or 3 (or a blktrace binary, or an iolab capture), each request at its time, one thread, a queue engine as deep as the log's queue (32 for a log that does not say), O_DIRECT with `direct=1` (else buffered, as fio); onto `replay_redirect`'s device, else the job's `filename=/dev/...`, else files under `directory` (the log's files remapped onto iolab's own, offsets modulo their size); the job's `rw`, `bs`, `size` are the log's own; a phase of its own (not beside other jobs)",
    ),
    o(
        "write_iolog",
        Str,
        Approximated,
        "fio's I/O log, version 3: `add` and `open` of each file, a line per I/O issued (`TIME FILE read|write|trim OFFSET LENGTH`, `sync`, `datasync`; µs since the job's threads began, the ramp included) and `close`, appended to the file as fio appends; the files are iolab's own (`DIR/iolab-file.N`, or the device), all of the job's set, and the clones of `numjobs` are one log in time order (fio's clones each append through their own 8 KiB buffer, their lines mixed in pieces)",
    ),
    o(
        "replay_no_stall",
        Bool,
        Supported,
        "1: `--closed`: the log's requests as fast as they go, in order, at most the log's queue depth in flight",
    ),
    o(
        "replay_time_scale",
        Int,
        Supported,
        "percent of the log's I/O rate: `--speed` of it / 100 (50: half the rate, 200: twice)",
    ),
    o(
        "replay_redirect",
        Str,
        Supported,
        "the device every request of the log goes to (`--device`; writes need `--destructive`)",
    ),
    o(
        "gtod_reduce",
        Bool,
        Approximated,
        "iolab times every I/O and reports its latencies; fio with it set measures none of those it names (zeros in its JSON, fewer clock reads): the I/O is the same",
    ),
    o(
        "disable_lat",
        Bool,
        Approximated,
        "iolab times every I/O and reports its latencies; fio with it set measures none of those it names (zeros in its JSON, fewer clock reads): the I/O is the same",
    ),
    o(
        "disable_clat",
        Bool,
        Approximated,
        "iolab times every I/O and reports its latencies; fio with it set measures none of those it names (zeros in its JSON, fewer clock reads): the I/O is the same",
    ),
    o(
        "disable_bw_measurement",
        Bool,
        Approximated,
        "iolab measures bandwidth and IOPS anyway (fio's own totals stay; its per-second samples go)",
    ),
    o(
        "disable_slat",
        Bool,
        Approximated,
        "iolab times every I/O and reports its latencies; fio with it set measures none of those it names (zeros in its JSON, fewer clock reads): the I/O is the same",
    ),
    o(
        "clat_percentiles",
        Bool,
        Approximated,
        "iolab's fio JSON lists completion-latency percentiles whatever the value, its own document its own: no I/O changes",
    ),
    o(
        "lat_percentiles",
        Bool,
        Approximated,
        "iolab's fio JSON lists completion-latency percentiles whatever the value, its own document its own: no I/O changes",
    ),
    o(
        "percentile_list",
        Str,
        Approximated,
        "iolab's fio JSON lists fio's default percentiles (1 ... 99.99), its document its own: no I/O changes",
    ),
    // placement and priority
    o(
        "cpus_allowed",
        Str,
        Supported,
        "`--cpus LIST`: each thread sets its affinity to those CPUs when it starts",
    ),
    o(
        "cpus_allowed_policy",
        Choice,
        Supported,
        "`shared` (default): every thread on the whole list; `split`: `--cpus LIST:split`, thread i on the list's (i mod n)th CPU alone (fio counts jobs across the run, iolab a job's threads)",
    ),
    o(
        "cpumask",
        Int,
        Supported,
        "`--cpus` of the mask's bits (bit N: CPU N, the first 64)",
    ),
    o(
        "numa_cpu_nodes",
        Str,
        Supported,
        "`--cpus` of the nodes' CPUs (`/sys/devices/system/node/nodeN/cpulist`; `all`: every online node), unless `cpus_allowed`/`cpumask` is given; memory is placed as `numa_mem_policy` says (not bound)",
    ),
    o(
        "numa_mem_policy",
        Str,
        Approximated,
        "iolab binds neither threads nor buffers to NUMA nodes (the kernel's default policy); the I/O is the same, memory latency may differ",
    ),
    o("nice", Int, Refused, "no priorities"),
    o(
        "prio",
        Int,
        Supported,
        "`--ioprio be:N` (with `prioclass`: its class): each thread's ioprio_set(2) when it starts, as fio",
    ),
    o(
        "prioclass",
        Int,
        Supported,
        "`1` → `--ioprio rt:N`, `2` → `be:N`, `3` → `idle` (N: `prio`, default 0, as fio)",
    ),
    o(
        "cmdprio_percentage",
        Percent,
        Approximated,
        "iolab issues every I/O at the default I/O priority (no per-command priority): the I/O is the same, its place in the device's queue may differ",
    ),
    o(
        "cmdprio_class",
        Str,
        Approximated,
        "see `cmdprio_percentage`",
    ),
    o("cmdprio", Str, Approximated, "see `cmdprio_percentage`"),
    o(
        "cmdprio_bssplit",
        Str,
        Approximated,
        "see `cmdprio_percentage`",
    ),
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
    o(
        "cpuload",
        Int,
        Supported,
        "`ioengine=cpuio`: the share of each thread's time it keeps busy (1..100 %; fio fails without it); each busy cycle is followed by a sleep of cycle × (100 − cpuload) / cpuload, as fio's think time",
    ),
    o(
        "cpuchunks",
        Int,
        Supported,
        "`ioengine=cpuio`: how long each busy cycle of `cpumode=noop` spins on the clock (µs; fio's default 50000)",
    ),
    o(
        "cpumode",
        Choice,
        Supported,
        "`ioengine=cpuio`: `noop` spins on the clock, `qsort` sorts fio's 256 Ki numbers four times with the C library's qsort each cycle (the pause follows each round's length)",
    ),
    o(
        "exit_on_io_done",
        Bool,
        Approximated,
        "`ioengine=cpuio`: 0 (fio's default) as fio; 1 refused: iolab's cpuio threads run for their runtime, not until the phase's I/O jobs end",
    ),
    o(
        "program",
        Str,
        Supported,
        "`ioengine=exec`: the program each thread starts (searched in `PATH`, run as iolab runs: docs/safety.md); SIGTERM when the runtime has passed, SIGKILL `grace_time` later, then waited for",
    ),
    o(
        "arguments",
        Str,
        Supported,
        "`ioengine=exec`: its arguments, split on spaces as fio splits them (no quoting), `%r` the runtime in seconds and `%n` the job's name",
    ),
    o(
        "grace_time",
        Int,
        Supported,
        "`ioengine=exec`: seconds between SIGTERM and SIGKILL (fio's default 1)",
    ),
    o(
        "std_redirect",
        Bool,
        Approximated,
        "`ioengine=exec`: 1 (fio's default) the program's output to `NAME.stdout` and `NAME.stderr` in the current directory, as fio's (each written anew and renamed over the name when the program has ended; a link there refused); 0: to iolab's standard error, where fio's goes to fio's standard output (iolab's may be its document); with `numjobs`>1 refused (fio's clones write one file over each other)",
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

/// The names a job file (and so fio's JSON, which prints the options as written) may give option
/// `o`: its own, then its aliases (`rw`, `readwrite`).
pub fn spellings(o: &FioOption) -> Vec<&'static str> {
    std::iter::once(o.name)
        .chain(
            crate::spec::fiojob::ALIASES
                .iter()
                .filter(|(_, to)| *to == o.name)
                .map(|(alias, _)| *alias),
        )
        .collect()
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
