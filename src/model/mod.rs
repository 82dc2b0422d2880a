//! Document types: what iolab measures, stores and prints. Plain data with serde; nothing here
//! uses any other iolab module.

pub mod auth;
pub mod crashcheck;
pub mod db;
pub mod device;
pub mod dist;
pub mod env;
pub mod experiment;
pub mod hist;
pub mod import;
pub mod job;
pub mod lat;
pub mod run;
pub mod stored;
pub mod suite;
pub mod units;
pub mod verify;
pub mod zones;
