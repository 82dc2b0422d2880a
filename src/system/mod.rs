//! The system under test: environment readers (from a live or fixture root), filesystem facts,
//! block devices as targets (what they are, whether iolab may write them), device tuning with restore, the fsync probe, and the target directory every file iolab writes goes through (`target`).

pub mod blkid;
pub mod blockdev;
pub mod capture;
pub mod env;
pub mod extents;
pub mod filemap;
pub mod fsinfo;
pub mod fsyncprobe;
pub mod procfs;
pub mod target;
pub mod tracefs;
pub mod tuning;
