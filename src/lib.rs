//! iolab: a storage I/O lab for people who run databases. See ARCHITECTURE.md for the map.

pub mod check;
pub mod cli;
pub mod compare;
pub mod db;
pub mod dist;
pub mod error;
pub mod fileset;
pub mod fsyncprobe;
pub mod hist;
pub mod history;
pub mod import;
pub mod iostat;
pub mod job;
pub mod report;
pub mod result;
pub mod runner;
pub mod size;
pub mod stats;
pub mod store;
pub mod sweep;
pub mod sysenv;
pub mod sysinfo;
pub mod truth;
pub mod tuning;
pub mod worker;
