//! A plan: everything `iolab run` resolved from its flags, the input of the runner.

use crate::model::job::{FileSetSpec, Job};
use crate::model::run::Warning;
use crate::spec::roots::Roots;
use std::collections::BTreeMap;
use std::fs::File;
use std::sync::Arc;
use std::time::Duration;

/// Everything `iolab run` resolved from its flags.
#[derive(Debug, Clone)]
pub struct Plan {
    pub fileset: FileSetSpec,
    pub cells: Vec<Job>,
    /// Keep the file set afterwards even if this run created it.
    pub keep: bool,
    /// A set of other sizes in --dir is removed (iolab's files only) and prepared afresh instead
    /// of refused; the new set is then this run's.
    pub reprepare: bool,
    /// Read the set into the page cache before each cell instead of evicting it.
    pub warm: bool,
    /// The run created --dir (the default ./iolab-data): remove it again when empty.
    pub created_dir: bool,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Warnings known before running (e.g. O_DIRECT unavailable for the default job).
    pub notes: Vec<Warning>,
    /// No progress bars or live lines.
    pub quiet: bool,
    /// Interval of the device sampler.
    pub iostat_interval: Duration,
    /// `--report-interval`: one line per interval on stderr while running (also with quiet).
    pub report_interval: Option<Duration>,
    pub dio: DioAlign,
    /// Where /proc and /sys are read from (the live system; fixture trees in tests).
    pub roots: Roots,
    /// `--role` / `--profile db`: jobs that run concurrently in one measured phase, each with its
    /// own results; empty for an ordinary run (then `cells` run one after the other). With roles,
    /// `cells` holds the roles' jobs too (for the checks that look at every job).
    pub roles: Vec<Role>,
    /// A `--device` target, held for as long as the plan lives.
    pub device: Option<DeviceHold>,
}

/// A `--device` target taken when the plan was checked (docs/safety.md, section 2).
#[derive(Debug, Clone)]
pub struct DeviceHold {
    /// The device opened exclusively (O_EXCL): until the plan is dropped, the kernel refuses to
    /// mount it, swap on it or give it to md/dm/mkfs. Shared by the plans of one process.
    pub claim: Arc<File>,
    /// `--destructive=wipe-signatures` with a mode that writes: the runner erases every
    /// signature libblkid finds through `claim` before the first cell.
    pub wipe_signatures: bool,
}

/// One role of a run with concurrent roles.
#[derive(Debug, Clone)]
pub struct Role {
    /// `[a-z0-9_-]+`, unique in the run.
    pub name: String,
    pub job: Job,
    /// The run's file set, or the role's own in `DIR/NAME/` (`own_set`).
    pub fileset: FileSetSpec,
    /// The role set `size=` or `files=`: its files are its own, in a subdirectory of --dir.
    pub own_set: bool,
}

/// Alignment O_DIRECT needs for a file, from statx(STATX_DIOALIGN) (Linux 6.1+), else from the
/// block device's logical block size, else 4096.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioAlign {
    /// Buffer address alignment in bytes.
    pub mem: u64,
    /// File offset and length alignment in bytes.
    pub offset: u64,
    /// Where the numbers came from.
    pub source: &'static str,
}
