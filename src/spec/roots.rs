//! Where the system under test is read from: the live `/proc`, `/sys` and `/etc`, or a fixture
//! tree in tests. Every environment reader takes one.

use std::path::{Path, PathBuf};

/// Where /proc, /sys and /etc are (the live system: "/proc", "/sys", "/etc").
#[derive(Debug, Clone)]
pub struct Roots {
    pub proc: PathBuf,
    pub sys: PathBuf,
    pub etc: PathBuf,
    /// Whether external tools (xfs_info, tune2fs, dmidecode, lspci, storcli ...) may be run:
    /// only on the live system.
    pub tools: bool,
}

impl Roots {
    pub fn live() -> Roots {
        Roots {
            proc: "/proc".into(),
            sys: "/sys".into(),
            etc: "/etc".into(),
            tools: true,
        }
    }
    /// A fixture tree with proc/, sys/ and etc/ below `base`; no tools are run.
    pub fn fixture(base: &Path) -> Roots {
        Roots {
            proc: base.join("proc"),
            sys: base.join("sys"),
            etc: base.join("etc"),
            tools: false,
        }
    }
}
