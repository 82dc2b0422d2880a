//! The system under test: environment readers (from a live or fixture root), filesystem facts,
//! the `check` rules, device tuning with restore, and the fsync probe.

pub mod check;
pub mod env;
pub mod fsinfo;
pub mod fsyncprobe;
pub mod tuning;
