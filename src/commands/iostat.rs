use super::*;

pub fn cmd_iostat(a: &cli::IostatArgs) -> Result<i32> {
    use crate::measure::iostat;
    let roots = crate::system::env::Roots::live();
    let proc_root = roots.proc.as_path();
    let all = iostat::read_diskstats(proc_root);
    let devices: Vec<String> = if a.devices.is_empty() {
        all.iter()
            .filter(|(_, d)| d.rd_ios + d.wr_ios > 0)
            .map(|(k, _)| k.clone())
            .collect()
    } else {
        let mut v = Vec::new();
        for d in &a.devices {
            let n = d.trim_start_matches("/dev/").to_string();
            if !all.contains_key(&n) {
                let known: Vec<&String> = all.keys().collect();
                return Err(Error::usage(format!(
                    "{d}: no such block device in /proc/diskstats (known: {})",
                    known
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            v.push(n);
        }
        v
    };
    let (stop, wake) = stop_flag_and_wake()?;
    let interval = std::time::Duration::from_secs_f64(a.interval);
    let mut prev = iostat::reading(proc_root, &devices);
    let t0 = prev.at;
    let mut n = 0u64;
    while a.count.is_none_or(|c| n < c) {
        let next = prev.at + interval;
        // asleep until the next reading; Ctrl-C ends it at once (no polling)
        let woke = wake
            .wait(None, Some(next))
            .map_err(|e| Error::failed(format!("waiting for the next reading: {e}")))?;
        if woke == crate::measure::wake::Woke::Signal
            || stop.load(std::sync::atomic::Ordering::Relaxed)
        {
            return Ok(0);
        }
        let cur = iostat::reading(proc_root, &devices);
        let s = iostat::between(&prev, &cur, t0);
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let line = crate::output::document::IostatLine {
            time: &now,
            sample: &s,
            devices: &devices,
        };
        // --json: one line per interval
        emit(
            &line,
            if a.print.json {
                Format::JsonLine
            } else {
                Format::Text
            },
        )?;
        prev = cur;
        n += 1;
    }
    Ok(0)
}
