//! The system under test: environment readers (from a live or fixture root), filesystem facts,
//! block devices as targets (what they are, whether iolab may write them), device tuning with restore, and the fsync probe.

pub mod blockdev;
pub mod env;
pub mod fsinfo;
pub mod fsyncprobe;
pub mod tuning;
