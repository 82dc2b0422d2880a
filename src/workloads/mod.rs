//! Workloads beyond one `run`: database tests, IOZone and Bonnie++ suites, zones, sweeps and
//! saturation searches.

pub mod crashcheck;
pub mod db;
pub mod pts;
pub mod suites;
pub mod sweep;
pub mod zones;
