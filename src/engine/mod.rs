//! Issuing I/O: the file set, the worker loops and their engines, and the runner that drives a
//! plan.
//!
//! The engine layer reads like fio's `ioengine_ops`: [`ops`] is the contract (capability flags
//! and the calls a loop makes), each engine is one file implementing it, and the registry below
//! has one line per engine. Adding an engine: a new file, its row (`EngineKind` variant and
//! capabilities) in `model::engines`' `engines!` table, one line here.

pub mod buf;
pub mod checkpoints;
pub mod cpuio;
pub mod exec;
pub mod falloc;
pub mod fileops;
pub mod fileset;
pub mod fiolog;
pub mod ftruncate;
pub mod libaio;
pub mod lifecycle;
pub mod mmap;
pub mod null;
pub mod opgen;
pub mod ops;
pub mod pagecache;
pub mod phase;
pub mod posixaio;
pub mod psync;
pub mod randmap;
pub mod runner;
pub mod setlock;
pub mod steady;
pub mod timing;
pub mod uring;
pub mod verify;
pub mod worker;

use crate::measure::stats::ThreadStats;
use crate::model::job::EngineKind;
use ops::Shared;
pub use ops::{Caps, Direct};
use ops::{CycleEngine, QueueEngine, SyncEngine};
use worker::{Progress, run_cycles, run_queue, run_sync};

/// Declares the engines' code: for each, its kind (its row, with its [`Caps`], in
/// `model::engines`' `engines!` table), the loop it runs in and its type. Generates the list
/// [`ENGINES`], the lookup [`caps`], the probe [`available`] and the dispatch [`run_worker`] from
/// one table, so they cannot disagree.
macro_rules! registry {
    ($($kind:ident => $run:ident::<$ty:ty>,)*) => {
        /// Every engine's capabilities, in `--engine` order.
        pub const ENGINES: &[Caps] = &[$(*EngineKind::$kind.caps()),*];

        /// The capabilities of an engine.
        pub fn caps(kind: EngineKind) -> &'static Caps {
            kind.caps()
        }

        /// Whether this kernel can run `kind` for `threads` threads with `depth` operations in
        /// flight each (the engine's `available`): the usage error otherwise.
        pub fn available(kind: EngineKind, threads: u32, depth: u32) -> Result<(), String> {
            match kind {
                $(EngineKind::$kind => <$ty>::available(threads, depth),)*
            }
        }

        /// The kind each engine's type declares, beside the kind it is registered as.
        #[cfg(test)]
        fn declared_kinds() -> Vec<(EngineKind, EngineKind)> {
            vec![$((<$ty>::KIND, EngineKind::$kind)),*]
        }

        /// Runs one worker with the job's engine: the engine is chosen here, once per phase, and
        /// its loop is monomorphized for it.
        pub fn run_worker(
            sh: &Shared,
            thread: u32,
            files: u32,
            prog: &Progress,
        ) -> std::io::Result<ThreadStats> {
            match sh.job.engine {
                $(EngineKind::$kind => $run::<$ty>(sh, thread, files, prog),)*
            }
        }
    };
}

registry! {
    Sync => run_sync::<psync::Psync>,
    IoUring => run_queue::<uring::Uring>,
    Libaio => run_queue::<libaio::Libaio>,
    Posixaio => run_queue::<posixaio::PosixAio>,
    Mmap => run_sync::<mmap::Mmap>,
    Falloc => run_sync::<falloc::Falloc>,
    Ftruncate => run_sync::<ftruncate::Ftruncate>,
    Filecreate => run_sync::<fileops::Create>,
    Filestat => run_sync::<fileops::Stat>,
    Filedelete => run_sync::<fileops::Delete>,
    Cpuio => run_cycles::<cpuio::Cpu>,
    Exec => run_cycles::<exec::Exec>,
    Null => run_sync::<null::Null>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_engine_is_named_as_its_kind() {
        assert_eq!(ENGINES.len(), 13);
        assert_eq!(ENGINES.len(), EngineKind::ALL.len());
        for (declared, registered) in declared_kinds() {
            assert_eq!(declared, registered);
        }
        for c in ENGINES {
            let kind: EngineKind = c.name.parse().unwrap();
            assert_eq!(kind.name(), c.name);
            assert_eq!(caps(kind), c);
        }
    }

    #[test]
    fn capability_flags_are_consistent() {
        for c in ENGINES {
            assert!(c.needs_files || !c.needs_mapping, "{}: maps files", c.name);
            assert!(
                c.does_io() || !c.counts_errors,
                "{}: errors without I/O",
                c.name
            );
            assert!(
                !c.file_ops || (!c.needs_files && !c.moves_data),
                "{}: a file engine has no file set and moves no data",
                c.name
            );
            assert_eq!(
                c.direct == Direct::Ignored,
                !c.needs_files,
                "{}: --direct matters exactly when files are opened",
                c.name
            );
            assert!(
                !c.queues_only_direct || (c.async_queue && c.direct == Direct::Honoured),
                "{}: queues only with --direct, which it must queue and honour",
                c.name
            );
        }
        for &k in EngineKind::ALL {
            // The name documents carry (serde) is the --engine name.
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }
}
