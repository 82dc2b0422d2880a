//! Measuring: latency histograms, per-thread statistics, the device (iostat -x) sampler and the
//! warnings about results that measure something other than the device.

pub mod capture;
pub mod export;
pub mod filemap;
pub mod fingerprint;
pub mod fiolog;
pub mod hist;
pub mod iolog;
pub mod iostat;
pub mod live;
pub mod peer;
pub mod prom;
pub mod stats;
pub mod steady;
pub mod trace;
pub mod twin;
pub mod wake;
pub mod warnings;
