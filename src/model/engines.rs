//! The engines as one table ([`EngineKind`] and each one's [`Caps`]): what every stage asks
//! instead of an engine's name. The engine's code is registered beside it in
//! `engine::registry!`.

use super::caps::{Caps, Direct};
use serde::Serialize;
use std::str::FromStr;

/// Declares the engines: for each, its [`EngineKind`] variant and its [`Caps`]. Generates the
/// enum, [`EngineKind::ALL`], [`EngineKind::caps`], the name and the parser from one table. The
/// engine's code is registered beside it in `engine::registry!`.
macro_rules! engines {
    ($($(#[$doc:meta])* $kind:ident => $caps:expr,)*) => {
        /// How I/O is issued.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum EngineKind {
            $($(#[$doc])* $kind,)*
        }

        impl EngineKind {
            /// Every engine, in `--engine` order.
            pub const ALL: &[EngineKind] = &[$(EngineKind::$kind),*];

            /// What the engine is and can do.
            pub const fn caps(self) -> &'static Caps {
                match self {
                    $(EngineKind::$kind => {
                        const C: Caps = $caps;
                        &C
                    })*
                }
            }
        }
    };
}

engines! {
    /// pread/pwrite, one I/O at a time per thread.
    Sync => Caps {
        name: "sync",
        aliases: &["psync"],
        fio: &["psync", "sync", "pvsync", "pvsync2", "vsync"],
        needs_files: true,
        needs_mapping: false,
        direct: Direct::Honoured,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: true,
        reads: true,
        file_ops: false,
        no_io: false,
    },
    /// io_uring with `iodepth` I/Os in flight per thread.
    IoUring => Caps {
        name: "io_uring",
        aliases: &["uring"],
        fio: &["io_uring"],
        needs_files: true,
        needs_mapping: false,
        direct: Direct::Honoured,
        async_queue: true,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: true,
        reads: true,
        file_ops: false,
        no_io: false,
    },
    /// Linux native AIO (io_submit/io_getevents) with `iodepth` I/Os in flight per thread;
    /// asynchronous only with O_DIRECT.
    Libaio => Caps {
        name: "libaio",
        aliases: &[],
        fio: &["libaio"],
        needs_files: true,
        needs_mapping: false,
        direct: Direct::Honoured,
        async_queue: true,
        queues_only_direct: true,
        counts_errors: true,
        moves_data: true,
        reads: true,
        file_ops: false,
        no_io: false,
    },
    /// POSIX AIO (aio_read/aio_write through glibc, which runs them on helper threads) with
    /// `iodepth` I/Os in flight per thread, buffered or not: fio's posixaio.
    Posixaio => Caps {
        name: "posixaio",
        aliases: &[],
        fio: &["posixaio"],
        needs_files: true,
        needs_mapping: false,
        direct: Direct::Honoured,
        async_queue: true,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: true,
        reads: true,
        file_ops: false,
        no_io: false,
    },
    /// Memory-mapped files: reads and writes are memory copies, fsync is msync(MS_SYNC).
    Mmap => Caps {
        name: "mmap",
        aliases: &[],
        fio: &["mmap"],
        needs_files: true,
        needs_mapping: true,
        direct: Direct::Refused,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: false,
        moves_data: true,
        reads: true,
        file_ops: false,
        no_io: false,
    },
    /// fio's falloc: a write is `fallocate(0)` (allocates the range), a read
    /// `fallocate(KEEP_SIZE)`, a trim a hole punched; no data moves.
    Falloc => Caps {
        name: "falloc",
        aliases: &[],
        fio: &["falloc"],
        needs_files: true,
        needs_mapping: false,
        direct: Direct::Honoured,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: false,
        reads: true,
        file_ops: false,
        no_io: false,
    },
    /// fio's ftruncate: a write truncates (or extends) the file to the write's offset; no
    /// reads. Each file is put back to its size when the job ends.
    Ftruncate => Caps {
        name: "ftruncate",
        aliases: &[],
        fio: &["ftruncate"],
        needs_files: true,
        needs_mapping: false,
        direct: Direct::Honoured,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: false,
        reads: false,
        file_ops: false,
        no_io: false,
    },
    /// fio's filecreate: each operation creates a new file of its own in `--dir` (O_CREAT | O_EXCL), timed; the files are removed when the thread ends.
    Filecreate => Caps {
        name: "filecreate",
        aliases: &[],
        fio: &["filecreate"],
        needs_files: false,
        needs_mapping: false,
        direct: Direct::Ignored,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: false,
        reads: true,
        file_ops: true,
        no_io: false,
    },
    /// fio's filestat: each operation stats a file of its own (made untimed before the thread starts, removed when it ends).
    Filestat => Caps {
        name: "filestat",
        aliases: &[],
        fio: &["filestat"],
        needs_files: false,
        needs_mapping: false,
        direct: Direct::Ignored,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: false,
        reads: true,
        file_ops: true,
        no_io: false,
    },
    /// fio's filedelete: each operation removes a file of its own (made untimed before the thread starts), checked to be the file iolab made.
    Filedelete => Caps {
        name: "filedelete",
        aliases: &[],
        fio: &["filedelete"],
        needs_files: false,
        needs_mapping: false,
        direct: Direct::Ignored,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: true,
        moves_data: false,
        reads: true,
        file_ops: true,
        no_io: false,
    },
    /// fio's cpuio: no I/O and no file; each thread burns CPU (`cpuload`, `cpuchunks`,
    /// `cpumode`) for the job's runtime, each busy cycle counted as a read of 0 bytes.
    Cpuio => Caps {
        name: "cpuio",
        aliases: &[],
        fio: &["cpuio"],
        needs_files: false,
        needs_mapping: false,
        direct: Direct::Ignored,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: false,
        moves_data: false,
        reads: true,
        file_ops: false,
        no_io: true,
    },
    /// fio's exec: no I/O and no file; thread 0 runs the job's `program` for the job's runtime
    /// (SIGTERM, `grace_time`, SIGKILL), each check on it every 50 ms a read of 0 bytes.
    Exec => Caps {
        name: "exec",
        aliases: &[],
        fio: &["exec"],
        needs_files: false,
        needs_mapping: false,
        direct: Direct::Ignored,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: false,
        moves_data: false,
        reads: true,
        file_ops: false,
        no_io: true,
    },
    /// No I/O at all: measures iolab's own per-I/O cost.
    Null => Caps {
        name: "null",
        aliases: &[],
        fio: &["null"],
        needs_files: false,
        needs_mapping: false,
        direct: Direct::Ignored,
        async_queue: false,
        queues_only_direct: false,
        counts_errors: false,
        moves_data: true,
        reads: true,
        file_ops: false,
        no_io: false,
    },
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        self.caps().name
    }

    /// The engine that runs fio's `ioengine=NAME`, if iolab has one.
    pub fn from_fio(name: &str) -> Option<EngineKind> {
        EngineKind::ALL
            .iter()
            .copied()
            .find(|k| k.caps().fio.contains(&name))
    }
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(&k) = EngineKind::ALL
            .iter()
            .find(|k| k.name() == s || k.caps().aliases.contains(&s))
        {
            return Ok(k);
        }
        // fio's ioengine names (pvsync2, ...)
        if let Some(k) = EngineKind::from_fio(s) {
            return Ok(k);
        }
        let names: Vec<&str> = EngineKind::ALL.iter().map(|k| k.name()).collect();
        let (last, rest) = names.split_last().expect("at least one engine");
        Err(format!(
            "'{s}' is not an engine: use {} or {last}",
            rest.join(", ")
        ))
    }
}
