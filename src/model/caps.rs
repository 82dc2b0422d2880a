//! What an engine is and can do ([`Caps`]), read by every stage instead of the engine's name;
//! each engine's row is in `model::engines`' `engines!` table.

/// What `--direct` (O_DIRECT) does with an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direct {
    /// The files are opened with O_DIRECT and I/O bypasses the page cache.
    Honoured,
    /// `--direct` is a usage error: the engine always goes through the page cache (mappings).
    Refused,
    /// Accepted and without effect: the engine touches no file.
    Ignored,
}

/// What an engine is and can do: the capabilities every stage asks instead of the engine's name
/// (as fio asks `td_ioengine_flagged`). They live here, beside [`EngineKind`], because the stages
/// above `engine` (measure, analysis) judge documents by them too; the engine itself is
/// `src/engine/NAME.rs` (the contract in `engine::ops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// The `--engine` name; it is also the name in documents (`EngineKind`'s serde name).
    pub name: &'static str,
    /// Other spellings `--engine` takes.
    pub aliases: &'static [&'static str],
    /// The fio `ioengine`s this engine runs (job files), the first one the engine written in
    /// fio's terms (fio JSON output).
    pub fio: &'static [&'static str],
    /// Reads and writes the data files: the runner prepares the file set and opens every file
    /// for each cell. False: no file set is prepared, opened or written (null, which does no
    /// I/O at all, and the file engines, which make files of their own: `file_ops`).
    pub needs_files: bool,
    /// Works on shared read-write mappings of the files, which the runner creates and removes
    /// (so no block device, and no file that must grow).
    pub needs_mapping: bool,
    /// What `--direct` does.
    pub direct: Direct,
    /// Keeps up to `--iodepth` operations in flight per thread (`engine::ops::QueueEngine`);
    /// false: one at a time (`SyncEngine`), and `--iodepth` is ignored.
    pub async_queue: bool,
    /// Queues only with `--direct`: on buffered files the kernel does each I/O inside the submit
    /// call, so nothing is in flight (Linux native AIO; warning `NAME_buffered`).
    pub queues_only_direct: bool,
    /// A failed or short read, write or fsync reaches the results as an error count. False for
    /// an engine whose operations cannot fail (null) or whose failures cannot be caught (an I/O
    /// error on a mapping arrives as SIGBUS).
    pub counts_errors: bool,
    /// Reads fill the buffer and writes store it. False: the operations allocate, deallocate
    /// or truncate (fio's falloc and ftruncate engines), so `--verify` has nothing to check.
    pub moves_data: bool,
    /// Has a read operation. False: only writes (and trims) run (fio's ftruncate engine, whose
    /// reads fio fails with EINVAL), so a mode with reads is a usage error.
    pub reads: bool,
    /// Each operation makes, stats or removes a file of its own in `--dir` (fio's filecreate,
    /// filestat, filedelete), made with O_EXCL and removed only when it is still the file iolab
    /// made: the run needs `--ops` (one file per operation) and a directory, not a device.
    pub file_ops: bool,
    /// Does no I/O and needs no size: each operation is one cycle of the engine's own work
    /// (fio's `FIO_NOIO` engines: cpuio burns CPU, exec watches a program), counted as a read
    /// of 0 bytes and timed; the job's runtime ends it (`model::noio`).
    pub no_io: bool,
}

impl Caps {
    /// Whether the engine does any I/O: on the file set, or on files of its own (the null engine
    /// does none: its figures are iolab's own cost per operation).
    pub const fn does_io(&self) -> bool {
        self.needs_files || self.file_ops
    }

    /// Whether every byte goes through the page cache, `--direct` or not.
    pub fn always_buffered(&self) -> bool {
        self.direct == Direct::Refused
    }
}
