//! Command-line definition (clap: [`args`], the flag groups in [`flags`], each command family's
//! flags in its `*_args.rs`) and its translation into plain [`Plan`]s ([`plan`]).
//! Clap types stop here.

mod args;
mod experiment_args;
pub mod fiojob;
mod flags;
mod plan;
mod replay;
mod roles;
mod run_args;
mod stored_args;
mod stored_refs;
mod sysbench;
mod system_args;
mod workload_args;

pub use args::*;
pub use experiment_args::*;
pub use flags::*;
pub use plan::*;
pub use roles::*;
pub use run_args::*;
pub use stored_args::*;
pub use stored_refs::*;
pub use sysbench::sysbench_fileio_sweep;
pub use system_args::*;
pub use workload_args::*;

use crate::engine::Direct;
use crate::engine::runner::Plan;
use crate::error::{Error, Result};
use crate::model::job::{
    BS_RANGE_STEP, BsArg, BsDirs, BsRange, BsSide, Distribution, EngineKind, FileSetSpec,
    FsyncMode, Job, Layout, Limit, MAX_BS_SIZES, Mode, OpenFlags,
};
use crate::model::run::Warning;
use crate::model::units::{Bytes, parse_size};
use crate::system::{blockdev, fsinfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const DEFAULT_DIR: &str = "./iolab-data";

// ------------------------------------------------------------ run options for sweeps
/// Flags of `iolab run` that take a value (from clap's own definition).
fn value_flags() -> Vec<String> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let run = cmd.find_subcommand("run").expect("run subcommand");
    run.get_arguments()
        // A flag whose value must follow `=` (--destructive[=WHAT]) never takes the next word.
        .filter(|a| {
            a.get_action().takes_values() && a.get_long().is_some() && !a.is_require_equals_set()
        })
        .filter(|a| !matches!(a.get_long(), Some("role" | "profile")))
        // fio's spellings (--numjobs for --threads) too
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(|l| format!("--{l}"))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Parses `iolab run` arguments with clap into a plan.
fn plan_for(args: &[String]) -> Result<Plan> {
    if let Some(f) = args
        .iter()
        .find(|a| ["--role", "--profile"].contains(&a.split('=').next().unwrap_or("")))
    {
        return Err(Error::usage(format!(
            "{f}: roles run at once in one `iolab run`; a sweep or saturation search varies one job and takes no roles"
        )));
    }
    let mut argv = vec!["iolab".to_string(), "run".to_string()];
    argv.extend(args.iter().cloned());
    let cli = parse_from(&argv).map_err(|e| Error::usage(clap_line(&e)))?;
    match cli.cmd {
        Cmd::Run(mut r) => {
            if r.live.is_some() || r.metrics_listen.is_some() {
                return Err(Error::usage(
                    "--live and --metrics-listen are options of `iolab run`, not of the runs of a sweep or saturation search",
                ));
            }
            if args
                .iter()
                .any(|a| a == "--rank-timeout" || a.starts_with("--rank-timeout="))
            {
                return Err(Error::usage(
                    "--rank-timeout is an option of the sweep or saturation search itself, not of its runs (docs/distributed.md)",
                ));
            }
            r.quiet.quiet = true;
            let mut p = plan_run(&r)?;
            p.quiet = true;
            Ok(p)
        }
        _ => unreachable!("parsed as run"),
    }
}

/// `iolab run`'s option parser, for sweeps and saturation searches.
pub struct RunParser;

impl crate::workloads::sweep::RunOptions for RunParser {
    fn value_flags(&self) -> Vec<String> {
        value_flags()
    }
    fn plan(&self, args: &[String]) -> Result<Plan> {
        plan_for(args)
    }
}
