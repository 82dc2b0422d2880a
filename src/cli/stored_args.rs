//! The commands on stored results: `list`, `show`/`explain`, `delete`, `compare`, `export`,
//! `import`, `report`, `plot`, and `store copy`.

use super::*;
use clap::{Args, Subcommand};

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3); several ids make a comparison.
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// The HTML file to write.
    #[arg(long, short, default_value = "report.html")]
    pub output: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3); several ids make a comparison.
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// The chart (see --list).
    #[arg(long)]
    pub chart: Option<String>,
    /// Output file: .svg or .png.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Width in pixels (16 to 16384).
    #[arg(long, default_value_t = 960, value_parser = clap::value_parser!(u32).range(16..=16384))]
    pub width: u32,
    /// Height in pixels (16 to 16384).
    #[arg(long, default_value_t = 420, value_parser = clap::value_parser!(u32).range(16..=16384))]
    pub height: u32,
    /// List the charts available for these ids.
    #[arg(long)]
    pub list: bool,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg("tags", help("Only runs with this tag (repeatable: all must match)")))]
#[command(mut_arg("label", help("Only runs with this label")))]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub label: LabelArg,
    #[command(flatten)]
    pub tag: TagArgs,
    /// Only runs that include this mode.
    #[arg(long)]
    pub mode: Option<String>,
    /// Only runs from this host.
    #[arg(long)]
    pub host: Option<String>,
    /// Only runs since: a date (2026-11-01), an RFC 3339 time, or an age (30m, 24h, 7d).
    #[arg(long)]
    pub since: Option<String>,
    /// At most this many runs.
    #[arg(long, default_value_t = 50, value_parser = list_limit)]
    pub limit: usize,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg(
    "json",
    help(
        "Print JSON: `show` the stored document (the same one `run --json` printed), `explain` the explanation (schema iolab-explain/1)"
    )
))]
pub struct RefArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// A run id (12) or a group id (g3).
    pub id: String,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

/// `iolab show`: what `explain` takes, and the metric of a sweep's matrix.
#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    #[command(flatten)]
    pub r: RefArgs,
    /// For a sweep (gN): the matrix and the charts of this metric instead of the one it was run
    /// with: iops, mibps, p50, p90, p99, p99.9, lat_avg (mean latency, ms) or cpu (user + system,
    /// % of one CPU)
    #[arg(long)]
    pub metric: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct DeleteArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3).
    #[arg(required = true)]
    pub ids: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3); the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (12) or group ids (g3).
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// json or csv.
    #[arg(long, default_value = "json")]
    pub format: String,
    #[command(flatten)]
    pub out: OutArgs,
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg("tags", help("A tag K=V (repeatable)")))]
#[command(mut_arg("label", help("A label for the imported runs")))]
pub struct ImportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Result files (fio --output-format=json/json+, or sysbench fileio run output); - = stdin.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub label: LabelArg,
    #[command(flatten)]
    pub tag: TagArgs,
    /// The host the results came from (default: this host).
    #[arg(long)]
    pub host: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub which: StoreCmd,
}

#[derive(Subcommand, Debug, Clone)]
pub enum StoreCmd {
    /// Copy every run of store A (with its metrics, histograms, tags and group) into store B, which
    /// is created when missing; a run B already holds (same kind, start time, host and document)
    /// is not copied again. Prints each run's id in A and in B.
    Copy(StoreCopyArgs),
}

#[derive(Args, Debug, Clone)]
#[command(mut_arg("json", help("Print the id map as JSON (schema iolab-store-copy/1)")))]
pub struct StoreCopyArgs {
    /// The store to copy from: a file path, sqlite:///path or postgres://user:pass@host:port/db.
    #[arg(long, value_name = "PATH|URL")]
    pub from: PathBuf,
    /// The store to copy into (the same forms).
    #[arg(long, value_name = "PATH|URL")]
    pub to: PathBuf,
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
}
