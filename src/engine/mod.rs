//! Issuing I/O: the file set, the worker loop and its engines, and the runner that drives a plan.

pub mod fileset;
pub mod runner;
pub mod worker;
