//! iolab: a storage I/O lab for people who run databases. See ARCHITECTURE.md for the map.
//!
//! The top-level modules are the stages of the pipeline, lowest first; a module only uses the
//! ones above it in this list (checked by tests/architecture.rs):
//! `error`, `model` (document types), `spec` (what to run), `measure` (histograms, statistics,
//! the device sampler, truth checks), `system` (environment readers, device tuning),
//! `store` (results store, imports, comparisons), `analysis` (the check and explain rules:
//! documents in, findings out), `engine` (workers, file sets, the runner),
//! `workloads` (databases, suites, zones, experiments), `output` (tables, charts, HTML), `cli`
//! (flags and plans) and `commands` (one per subcommand).

/// What `iolab --version` says: the package's version and the git commit it was built from
/// (build.rs; `unknown` when built outside a git checkout).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("IOLAB_GIT_COMMIT"),
    ")"
);

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod dist;
pub mod engine;
pub mod error;
pub mod measure;
pub mod model;
pub mod output;
pub mod spec;
pub mod store;
pub mod system;
pub mod workloads;
