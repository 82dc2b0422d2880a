//! The read/write mix of `plan_run`: sysbench's `--rw-ratio` and fio's `--rwmixread` as one.

use super::*;

/// The stored read/write mix of rndrw from `--rw-ratio` (reads per write, sysbench) and
/// `--rwmixread` (percent reads, fio): one meaning, `rw_ratio`. Both given must agree (to
/// 0.005 percent); `--rwmixread 100` (reads only) is stored as the largest double.
pub(super) fn rw_ratio(ratio: Option<f64>, mixread: Option<u32>) -> Result<f64> {
    if let Some(r) = ratio
        && !(r > 0.0 && r.is_finite())
    {
        return Err(Error::usage(
            "--rw-ratio must be a positive number of reads per write (e.g. 1.5)",
        ));
    }
    let Some(p) = mixread else {
        return Ok(ratio.unwrap_or(1.5));
    };
    let from_pct = if p == 100 {
        f64::MAX
    } else {
        p as f64 / (100 - p) as f64
    };
    if let Some(r) = ratio {
        let pct = 100.0 * r / (1.0 + r);
        if (pct - p as f64).abs() >= 0.005 {
            return Err(Error::usage(format!(
                "--rwmixread {p} and --rw-ratio {r} disagree: --rw-ratio {r} is {pct:.2}% reads; give one of them"
            )));
        }
    }
    Ok(from_pct)
}
