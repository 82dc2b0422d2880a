//! Document types: what iolab measures, stores and prints. Plain data with serde; nothing here
//! uses any other iolab module.

pub mod job;
pub mod run;
pub mod units;
