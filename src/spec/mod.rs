//! What to run: offset distributions and the per-thread random generator.

pub mod dist;
