//! `iolab sweep`, `iolab saturate` and `iolab together`: their own options, the options they share, their help's
//! list of run options, and `presplit` (their own options first, the run options behind `--`).

use super::*;
use clap::Args;

/// The run options `sweep` and `saturate` accept, from clap's definition of `iolab run` (the
/// part of their help after the options).
pub fn run_options_help(cmd: &str) -> String {
    let run = <RunArgs as Args>::augment_args(clap::Command::new("run"));
    let invocation = run_group(INVOCATION);
    let (mut values, mut switches) = (Vec::new(), Vec::new());
    for a in run.get_arguments() {
        let Some(long) = a.get_long() else { continue };
        // the experiment's own options (or refused there)
        if long == "help"
            || invocation.iter().any(|x| x == long)
            || (cmd == "together" && long == "dir")
        {
            continue;
        }
        if a.get_action().takes_values() && !a.is_require_equals_set() {
            values.push(format!("--{long}"));
        } else {
            switches.push(format!("--{long}"));
        }
    }
    let wrap = |v: &[String]| {
        let mut out = String::new();
        let mut line = String::from("  ");
        for f in v {
            if line.len() + f.len() + 1 > 98 {
                out.push_str(line.trim_end());
                out.push('\n');
                line = String::from("  ");
            }
            line.push_str(f);
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out
    };
    let how = if cmd == "together" {
        "No option is a list: every run has the same options but its --dir."
    } else if cmd == "sweep" {
        "Any value option may be an axis: a list (--threads 1,4,8), a range that doubles\n\
         (--threads 1..32, --size 1G..16G), linear steps (4..32:+4) or a factor (1G..64G:x4).\n\
         Every cell runs with the other options as given."
    } else {
        "--over NAME=LO..HI names the value option searched (size, rate, threads, iodepth or files);\n\
         every measurement runs with the other options as given."
    };
    format!(
        "Run options (as for `iolab run`; see `iolab run --help` for what each does):\n\
         Value options:\n{}\nSwitches:\n{}\n{how}",
        wrap(&values),
        wrap(&switches)
    )
}

/// Options of `iolab sweep` itself; every other option is a run option (any of them may be a
/// list or range).
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// Axis for the rows of the matrix (default: the first axis).
    #[arg(long)]
    pub rows: Option<String>,
    /// Axis for the columns (default: the second axis).
    #[arg(long)]
    pub cols: Option<String>,
    /// The figure in the matrix: iops, mibps, p50, p90, p99, p99.9, mean.
    #[arg(long, default_value = "iops")]
    pub metric: String,
    /// Continue an interrupted sweep (its group id, e.g. g4): finished cells are not run again.
    #[arg(long)]
    pub resume: Option<String>,
    /// Runs per cell.
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub repeat: u32,
    /// Schedulers to compare (list, or all): switched on the disks under --dir and restored.
    #[arg(long)]
    pub scheduler: Option<String>,
    /// read_ahead_kb values to compare (switched and restored).
    #[arg(long)]
    pub read_ahead: Option<String>,
    /// nr_requests values to compare (switched and restored).
    #[arg(long)]
    pub nr_requests: Option<String>,
    #[command(flatten)]
    pub rank: RankTimeoutArg,
    #[command(flatten)]
    pub exp: ExperimentArgs,
}

/// Options of `iolab saturate` itself; every other option is a run option.
#[derive(Args, Debug, Clone)]
pub struct SaturateArgs {
    /// The target: mibps>=22, p99<=10ms, iops>=1000 (metrics: iops, mibps, p50, p90, p99, p99.9,
    /// mean). With --like CAPTURE and no --target: p99 at most twice the capture's.
    #[arg(long)]
    pub target: Option<String>,
    /// The axis and its range: size=10G..750G, rate=100..5000, threads=1..64, scale=1..16
    /// (with --like: times the captured load).
    #[arg(long)]
    pub over: String,
    /// Resolution: stop when the boundary is known to within this (default: 1/32 of the range).
    #[arg(long)]
    pub step: Option<String>,
    /// At most this many measurements.
    #[arg(long, default_value_t = 12)]
    pub max_steps: u32,
    #[command(flatten)]
    pub rank: RankTimeoutArg,
    #[command(flatten)]
    pub exp: ExperimentArgs,
}

/// Options of `iolab together` itself; every other option is a run option (none a list).
#[derive(Args, Debug, Clone)]
pub struct TogetherArgs {
    /// A directory on one of the devices compared (give it twice or more, each on its own
    /// device): each is measured alone, then all at once.
    #[arg(long = "dir", value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub exp: ExperimentArgs,
}

/// The options `sweep`, `saturate` and `together` share, defined once: how the experiment prints,
/// where it is stored, and the run options behind `--` (which [`presplit`] puts there).
#[derive(Args, Debug, Clone)]
#[command(mut_arg("quiet", help("No progress bars or live line (also for every run)")))]
pub struct ExperimentArgs {
    #[command(flatten)]
    pub print: JsonArg,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub label: LabelArg,
    #[command(flatten)]
    pub tag: TagArgs,
    #[command(flatten)]
    pub quiet: QuietArg,
    #[command(flatten)]
    pub db: DbArgs,
    /// The run options (after --; iolab puts them there for you).
    #[arg(last = true, hide = true)]
    pub run_args: Vec<String>,
}

/// For `sweep` and `saturate`: moves their own options first and every other option behind
/// `--`, so clap parses the run options later, per cell.
pub fn presplit(argv: Vec<String>) -> Vec<String> {
    let Some(cmd) = argv.get(1).cloned() else {
        return argv;
    };
    let own_cmd = match cmd.as_str() {
        "sweep" => <SweepArgs as Args>::augment_args(clap::Command::new("sweep")),
        "saturate" => <SaturateArgs as Args>::augment_args(clap::Command::new("saturate")),
        "together" => <TogetherArgs as Args>::augment_args(clap::Command::new("together")),
        _ => return argv,
    };
    // their own options, as clap defines them: those taking a value, and switches
    let (mut own_v, mut own_b) = (Vec::new(), vec!["--help".to_string(), "-h".to_string()]);
    for o in own_cmd.get_arguments() {
        let names = o
            .get_long()
            .map(|l| format!("--{l}"))
            .into_iter()
            .chain(o.get_short().map(|c| format!("-{c}")));
        if o.get_action().takes_values() {
            own_v.extend(names);
        } else {
            own_b.extend(names);
        }
    }
    let mut own = vec![argv[0].clone(), cmd];
    let mut rest = Vec::new();
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--" {
            rest.extend(argv[i + 1..].iter().cloned());
            break;
        }
        let flag = a.split('=').next().unwrap_or("");
        if own_b.iter().any(|o| o == a) {
            own.push(a.clone());
            // quiet also goes to every run
            if a == "-q" || a == "--quiet" {
                rest.push(a.clone());
            }
        } else if own_v.iter().any(|o| o == flag) {
            own.push(a.clone());
            if !a.contains('=') && i + 1 < argv.len() {
                i += 1;
                own.push(argv[i].clone());
            }
            // labels and tags also go to every run
            if flag == "--label" || flag == "--tag" {
                rest.push(own[own.len() - if a.contains('=') { 1 } else { 2 }].clone());
                if !a.contains('=') {
                    rest.push(own[own.len() - 1].clone());
                }
            }
        } else {
            rest.push(a.clone());
        }
        i += 1;
    }
    own.push("--".into());
    own.extend(rest);
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case: the command line, and what `presplit` makes of it (words split at spaces).
    const CASES: &[(&str, &str)] = &[
        (
            "iolab sweep --threads 1,2 --json --tag a=b -o f -q --rank-timeout=5 --rows threads --mode seqrd",
            "iolab sweep --json --tag a=b -o f -q --rank-timeout=5 --rows threads -- --threads 1,2 --tag a=b -q --mode seqrd",
        ),
        (
            "iolab saturate --target iops>=1 --size 1G --max-steps 3 --label x --help",
            "iolab saturate --target iops>=1 --max-steps 3 --label x --help -- --size 1G --label x",
        ),
        // other commands are left alone
        ("iolab run --json --tag a=b", "iolab run --json --tag a=b"),
    ];

    #[test]
    fn presplit_keeps_the_experiment_options_before_the_run_options() {
        for (given, want) in CASES {
            let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
            assert_eq!(presplit(words(given)), words(want), "{given}");
        }
    }
}
