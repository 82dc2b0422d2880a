//! The flag groups several commands share, each flag defined once (a command flattens the
//! group, and words the flag's help its own way with `mut_arg`), and the value parsers that
//! type and range-check values (counts, sizes, durations), so plan building starts from valid
//! numbers.

use super::*;
use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// The results store: a file path, sqlite:///path, or postgres://user:pass@host:port/db (default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, else ~/.local/share/iolab/results.db).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
}

/// Where a command's printed result goes: stdout, or `--output FILE`.
#[derive(Args, Debug, Clone, Default)]
pub struct OutArgs {
    /// Write what would be printed (the JSON with --json, else the text) to this file instead of
    /// stdout: whole or not at all, after the results are saved.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--json`, defined once: the result as one JSON document instead of the text. A command whose
/// document has a schema of its own names it in the flag's help:
/// `#[command(mut_arg("json", help("...")))]` on its Args struct.
#[derive(Args, Debug, Clone, Default)]
pub struct JsonArg {
    /// Print one JSON document instead of the text.
    #[arg(long)]
    pub json: bool,
}

/// `--tag K=V`, defined once (repeatable); a command says what it tags with
/// `#[command(mut_arg("tags", help("...")))]`.
#[derive(Args, Debug, Clone, Default)]
pub struct TagArgs {
    /// A tag K=V for the stored results (repeatable).
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
}

/// `--label`, defined once: the label of what the command stores (`list` filters by it); a
/// command words it its own way with `#[command(mut_arg("label", help("...")))]`.
#[derive(Args, Debug, Clone, Default)]
pub struct LabelArg {
    /// A label for the stored results.
    #[arg(long)]
    pub label: Option<String>,
}

/// `-q`/`--quiet`, defined once: no progress bars or live line (`prepare` and the experiments
/// word it their own way with `mut_arg`).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct QuietArg {
    /// No progress bars or live line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--rank-timeout`, defined once: how long rank 0 waits for a silent rank under mpirun
/// (`run` and `db` say what a rank does in the flag's help, with `mut_arg`).
#[derive(Args, Debug, Clone)]
pub struct RankTimeoutArg {
    /// Under mpirun: how long a rank may send no heartbeat (stopped, hung) or measure without
    /// completing any I/O before rank 0 ends the experiment, names it and saves what the other
    /// ranks measured of the point, marked incomplete (docs/distributed.md): 10s, 500ms, 30.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = positive_duration_s)]
    pub rank_timeout: f64,
}

/// A flag's help as one command words it, for `#[command(mut_arg(ID, help(TEXT)))]` on a
/// struct that flattens a shared flag group (the flag itself stays defined once).
pub(super) fn help(text: &'static str) -> impl FnOnce(clap::Arg) -> clap::Arg {
    move |a| a.help(text)
}

pub(super) fn size_arg(s: &str) -> std::result::Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// A size that may be negative (`--seq-skip -8k`).
pub(super) fn signed_size(s: &str) -> std::result::Result<i64, String> {
    let (neg, abs) = match s.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.trim()),
    };
    let n = i64::try_from(size_arg(abs)?).map_err(|_| "too large".to_string())?;
    Ok(if neg { -n } else { n })
}

/// A size of at least one byte (`--io-size`).
pub(super) fn nonzero_size(s: &str) -> std::result::Result<u64, String> {
    match size_arg(s)? {
        0 => Err("a size of at least 1 byte".into()),
        n => Ok(n),
    }
}

/// `--bs`: one size of at least one byte, a weighted mix (`16k:70,1m:30`) or a range
/// (`4k-64k`).
pub(super) fn block_sizes(s: &str) -> std::result::Result<BsArg, String> {
    s.parse()
}

/// `--speed`: a factor above 0, at most 1000 (the trace's time is divided by it).
pub(super) fn speed(s: &str) -> std::result::Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|&v| v > 0.0 && v <= 1000.0)
        .ok_or_else(|| "must be a number above 0 and at most 1000 (2: twice as fast)".into())
}

/// A whole percent 0..100 (`--rwmixread`).
pub(super) fn percent(s: &str) -> std::result::Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|&p| p <= 100)
        .ok_or_else(|| "must be a whole percent from 0 to 100 (reads among reads + writes)".into())
}

/// A count of at least 1 (`--threads`, `--files`, `--ops`, ...): typed here, so no command checks
/// for 0 by hand.
pub(super) fn at_least_one<T>(s: &str) -> std::result::Result<T, String>
where
    T: std::str::FromStr + PartialOrd + From<u8>,
    T::Err: std::fmt::Display,
{
    match s.trim().parse::<T>() {
        Ok(v) if v >= T::from(1) => Ok(v),
        Ok(_) => Err("must be at least 1".into()),
        Err(e) if s.trim().starts_with('-') => Err(format!("must be at least 1 ({e})")),
        Err(e) => Err(format!("must be a whole number, at least 1 ({e})")),
    }
}

/// The longest duration any flag takes: 10 years, in seconds. Every duration and interval
/// is bounded by it, so a clock deadline (`Instant + Duration`) and `Duration::from_secs_f64`
/// always hold it (`--time 1e19` would overflow the monotonic clock's arithmetic).
pub const MAX_SECONDS: f64 = 10.0 * 365.0 * 86_400.0;

/// A number of seconds as typed (`--time`, `--ramp`, `--interval`): a decimal number, finite,
/// at most [`MAX_SECONDS`].
pub(super) fn bounded_seconds(s: &str) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v <= MAX_SECONDS)
}

/// Reads per write (`--rw-ratio`): a finite number above 0.
pub(super) fn reads_per_write(s: &str) -> std::result::Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| "must be a positive number of reads per write (e.g. 1.5)".into())
}

/// An SQLite page size (`--page-size`): a power of two from 512 to 65536, as SQLite takes
/// (it ignores any other value silently).
pub(super) fn sqlite_page_size(s: &str) -> std::result::Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|v| v.is_power_of_two() && (512..=65536).contains(v))
        .ok_or_else(|| "must be a power of two from 512 to 65536 (bytes)".into())
}

/// A number of rows (`list --limit`): what the store's queries take (SQLite's and
/// PostgreSQL's LIMIT is a signed 64-bit integer).
pub(super) fn list_limit(s: &str) -> std::result::Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .ok()
        .filter(|&n| i64::try_from(n).is_ok())
        .ok_or_else(|| format!("must be a whole number from 0 to {}", i64::MAX))
}

/// A time to run, more than zero (`--time`): seconds, or with a unit like the other durations
/// (30s, 2m, 500ms).
pub(super) fn seconds(s: &str) -> std::result::Result<f64, String> {
    duration_s(s).ok().filter(|v| *v > 0.0).ok_or_else(|| {
        "must be a time above 0: 10, 0.5 (seconds), 30s, 2m, 500ms; at most 10 years (315360000)"
            .into()
    })
}

/// Seconds of warm-up, zero or more (`--ramp`).
pub(super) fn ramp_s(s: &str) -> std::result::Result<f64, String> {
    bounded_seconds(s).filter(|v| *v >= 0.0).ok_or_else(|| {
        "must be a number of seconds, 0 or more (5, 0.5), at most 10 years (315360000)".into()
    })
}

/// A duration in seconds, zero or more: a number with s, ms, us, m, h or d, seconds without a
/// unit (`--fsync-every`), at most [`MAX_SECONDS`].
pub(super) fn duration_s(s: &str) -> std::result::Result<f64, String> {
    let bad = || {
        "must be a duration: 2s, 500ms, 1.5 (seconds), or 0 for never; at most 10 years".to_string()
    };
    if crate::spec::fio_vocab::is_expression(s) {
        return Err(bad());
    }
    let v = crate::spec::fio_vocab::parse_time(s, 1.0).map_err(|_| bad())?;
    if !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(bad());
    }
    Ok(v)
}

/// A duration in seconds, more than zero (`--rank-timeout`).
pub(super) fn positive_duration_s(s: &str) -> std::result::Result<f64, String> {
    match duration_s(s) {
        Ok(v) if v > 0.0 => Ok(v),
        _ => Err(
            "must be a duration above zero: 10s, 500ms, 30 (seconds); at most 10 years".to_string(),
        ),
    }
}

/// A sampling interval in seconds: at least 0.05 (`--interval`, `--iostat-interval`,
/// `--report-interval`).
pub(super) fn interval_s(s: &str) -> std::result::Result<f64, String> {
    bounded_seconds(s).filter(|v| *v >= 0.05).ok_or_else(|| {
        "must be a number of seconds (1, 0.5), at least 0.05, at most 10 years (315360000)".into()
    })
}

/// `--steady-state`'s criteria: what is tracked, and SNIA PTS's two criteria or fio's one.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyArg {
    pub metric: crate::model::steady::SteadyMetric,
    /// PTS's criteria; None for fio's (`fio:...`).
    pub pts: Option<crate::model::steady::Pts>,
    /// fio's criterion: (slope, limit, pct), used without `pts`.
    pub fio: (bool, f64, bool),
    /// Rounds in the window (PTS: 5).
    pub window: u64,
}

/// `--steady-state [SPEC]`: `iops` or `mibps` with PTS's range limit (`iops:20%`) and best-fit
/// excursion limit (`,slope:10%`), each defaulting to PTS's; `fio:CRITERION:LIMIT` for fio's
/// single criterion (`fio:iops_slope:0.1%`); `,window:N` rounds (default 5) with either.
pub(super) fn steady_state(s: &str) -> std::result::Result<SteadyArg, String> {
    use crate::model::steady::{Pts, SteadyMetric};
    const VALID: &str = "valid: iops, mibps, iops:20%,slope:10% (SNIA PTS's criteria, the default), fio:iops:10%, fio:iops_slope:0.1%, fio:bw:5% (fio's one criterion); then ,window:N rounds (default 5)";
    let pct = |t: &str| -> std::result::Result<f64, String> {
        t.trim()
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite() && *x >= 0.0 && *x <= 1000.0)
            .ok_or_else(|| format!("`{t}` is not a percentage (20%); {VALID}"))
    };
    let mut parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let mut window = crate::measure::steady::SNIA_WINDOW_ROUNDS as u64;
    if let Some(i) = parts.iter().position(|p| p.starts_with("window:")) {
        let w = parts.remove(i);
        window = w["window:".len()..]
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (2..=1000).contains(n))
            .ok_or_else(|| format!("`{w}`: the window is 2 to 1000 rounds; {VALID}"))?;
    }
    let Some(first) = parts.first().copied().filter(|f| !f.is_empty()) else {
        return Err(format!("no criterion; {VALID}"));
    };
    if let Some(fio) = first.strip_prefix("fio:") {
        if parts.len() > 1 {
            return Err(format!("fio's criterion is one: `{s}`; {VALID}"));
        }
        let (metric, slope, limit, pct) =
            crate::spec::fio_vocab::steadystate(fio, 1024).map_err(|e| format!("{e}; {VALID}"))?;
        return Ok(SteadyArg {
            metric,
            pts: None,
            fio: (slope, limit, pct),
            window,
        });
    }
    let (name, range) = match first.split_once(':') {
        Some((n, r)) => (n.trim(), pct(r)?),
        None => (first, Pts::SNIA.range_pct),
    };
    let metric = match name.to_ascii_lowercase().as_str() {
        "iops" => SteadyMetric::Iops,
        "mibps" | "bw" => SteadyMetric::Bw,
        _ => return Err(format!("`{name}` is not a tracked figure; {VALID}")),
    };
    let mut slope = Pts::SNIA.slope_pct;
    for p in &parts[1..] {
        match p.split_once(':') {
            Some(("slope", v)) => slope = pct(v)?,
            _ => return Err(format!("`{p}` is not a criterion; {VALID}")),
        }
    }
    Ok(SteadyArg {
        metric,
        pts: Some(Pts {
            range_pct: range,
            slope_pct: slope,
        }),
        fio: (false, 0.0, false),
        window,
    })
}

#[cfg(test)]
mod steady_tests {
    use super::*;
    use crate::model::steady::{Pts, SteadyMetric};

    #[test]
    fn steady_state_specs() {
        let d = steady_state("iops:20%,slope:10%").unwrap();
        assert_eq!(
            (d.metric, d.pts, d.window),
            (SteadyMetric::Iops, Some(Pts::SNIA), 5)
        );
        let m = steady_state("mibps:15%,window:8").unwrap();
        assert_eq!(m.metric, SteadyMetric::Bw);
        assert_eq!(m.pts.unwrap().range_pct, 15.0);
        assert_eq!(m.pts.unwrap().slope_pct, 10.0);
        assert_eq!(m.window, 8);
        let f = steady_state("fio:iops_slope:0.1%").unwrap();
        assert_eq!((f.pts, f.fio), (None, (true, 0.1, true)));
        for bad in [
            "",
            "latency:5%",
            "iops:20",
            "iops,slope:x%",
            "fio:iops:5%,slope:1%",
            "iops,window:1",
            "iops,size:3%",
        ] {
            let e = steady_state(bad).unwrap_err();
            assert!(e.contains("valid: iops"), "{bad}: {e}");
        }
    }
}
