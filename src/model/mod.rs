//! Document types: what iolab measures, stores and prints. Plain data with serde; nothing here
//! uses any other iolab module.

pub mod db;
pub mod device;
pub mod env;
pub mod hist;
pub mod job;
pub mod run;
pub mod units;
