//! Measuring: latency histograms, per-thread statistics, the device (iostat -x) sampler and the
//! truth checks on results.

pub mod export;
pub mod hist;
pub mod iostat;
pub mod live;
pub mod peer;
pub mod stats;
pub mod truth;
pub mod wake;
