//! fio's options that change how fio times, places or prioritises a job, but not which I/O it
//! issues (docs/fio-jobs.md, "Options that change no I/O"): iolab runs the job and each such
//! option given says, in a note, how iolab differs; the CPUs (`cpus_allowed`, `cpumask`,
//! `cpus_allowed_policy`) are `--cpus`.

use super::ctx::Ctx;
use crate::spec::fio_options::{self, Kind};
use crate::spec::fio_vocab;

/// The options a note is written for when given with a value that differs from fio's default
/// (each is approximated in the table, whose text the note repeats).
const NOTED: &[&str] = &[
    // timing
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "clat_percentiles",
    "lat_percentiles",
    "percentile_list",
    // placement and priority
    "numa_mem_policy",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
    // errors
    "continue_on_error",
    "ignore_error",
    "error_dump",
];

/// fio's default of an option, where giving it changes nothing (no note then).
fn is_default(key: &str, kind: Kind, value: Option<&str>) -> bool {
    let v = value.unwrap_or("").trim();
    match kind {
        // a bare boolean is 1; `clat_percentiles` is 1 by default
        Kind::Bool => {
            let on = fio_vocab::parse_bool(value).unwrap_or(true);
            on == (key == "clat_percentiles")
        }
        Kind::Percent => fio_vocab::parse_percent(v) == Ok(0),
        _ => match key {
            "continue_on_error" => matches!(v, "none" | "0"),
            "cpus_allowed_policy" => v == "shared",
            "numa_mem_policy" => matches!(v, "default" | "local"),
            _ => false,
        },
    }
}

/// A note for each option of [`NOTED`] the job gives, not at fio's default.
pub(super) fn notes(c: &Ctx, notes: &mut Vec<String>) {
    for &k in NOTED {
        let Some(o) = c.opt(k) else { continue };
        let Some(t) = fio_options::find(k) else {
            continue;
        };
        if t.status != fio_options::Status::Approximated
            || is_default(k, t.kind, o.value.as_deref())
        {
            continue;
        }
        notes.push(format!("{}: {}", o.spelled(), t.what));
    }
}

/// `--ioprio` from `prio` and `prioclass` (fio: either alone sets both, the class best-effort
/// and the level 0 when not given).
pub(super) fn ioprio(c: &mut Ctx) -> Option<String> {
    let (level, class) = (c.int("prio"), c.int("prioclass"));
    if level.is_none() && class.is_none() {
        return None;
    }
    let level = level.unwrap_or(0);
    let name = match class.unwrap_or(2) {
        1 => "rt",
        0 | 2 => "be",
        3 => return Some("idle".into()),
        _ => {
            c.bad(
                "prioclass",
                "not 1 (real-time), 2 (best-effort) or 3 (idle)",
            );
            return None;
        }
    };
    if level > 7 {
        c.bad("prio", "a level from 0 (the highest) to 7");
        return None;
    }
    Some(format!("{name}:{level}"))
}

/// The CPUs of the nodes `numa_cpu_nodes` names (`0-1`, `0,2`, `all`), from
/// /sys/devices/system/node/nodeN/cpulist; a node that is not there is refused by name.
fn numa_cpus(c: &mut Ctx) -> Option<String> {
    let v = c.val("numa_cpu_nodes")?;
    let v = v.trim();
    let nodes: Vec<u32> = if v == "all" {
        let online = std::fs::read_to_string("/sys/devices/system/node/online").unwrap_or_default();
        match online.trim().parse::<crate::model::placement::Cpus>() {
            Ok(n) => n.list,
            Err(_) => {
                c.bad("numa_cpu_nodes", "this machine lists no NUMA nodes");
                return None;
            }
        }
    } else {
        match v.parse::<crate::model::placement::Cpus>() {
            Ok(n) => n.list,
            Err(_) => {
                c.bad(
                    "numa_cpu_nodes",
                    "not a list of NUMA nodes (0, 0-1, 0,2 or all)",
                );
                return None;
            }
        }
    };
    let mut cpus = Vec::new();
    for n in nodes {
        match std::fs::read_to_string(format!("/sys/devices/system/node/node{n}/cpulist")) {
            Ok(l) if !l.trim().is_empty() => cpus.push(l.trim().to_string()),
            _ => {
                c.bad(
                    "numa_cpu_nodes",
                    format!("node {n} is not one of this machine's NUMA nodes with CPUs"),
                );
                return None;
            }
        }
    }
    Some(cpus.join(","))
}

/// `--cpus` from `cpus_allowed` (else `cpumask`, a bit per CPU) and `cpus_allowed_policy`.
pub(super) fn cpus(c: &mut Ctx, notes: &mut Vec<String>) -> Option<String> {
    let list = match (c.val("cpus_allowed"), c.val("cpumask")) {
        (Some(l), _) => l.trim().to_string(),
        (None, Some(m)) => match fio_vocab::parse_size(&m, 1024) {
            Ok(mask) if mask > 0 => (0..64)
                .filter(|b| mask >> b & 1 == 1)
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(","),
            _ => {
                c.bad("cpumask", "a mask of CPUs (bit N: CPU N), not 0");
                return None;
            }
        },
        (None, None) if c.opt("numa_cpu_nodes").is_some() => numa_cpus(c)?,
        (None, None) => {
            if c.opt("cpus_allowed_policy").is_some() {
                notes.push(
                    "cpus_allowed_policy without cpus_allowed or cpumask: no effect, as in fio"
                        .into(),
                );
            }
            return None;
        }
    };
    let policy = match c.val("cpus_allowed_policy").as_deref().map(str::trim) {
        None | Some("shared") => "",
        Some("split") => ":split",
        Some(_) => {
            c.bad("cpus_allowed_policy", "not shared or split");
            ""
        }
    };
    let spec = format!("{list}{policy}");
    match spec.parse::<crate::model::placement::Cpus>() {
        Ok(cpus) => Some(cpus.to_string()),
        Err(e) => {
            let k = if c.opt("cpus_allowed").is_some() {
                "cpus_allowed"
            } else {
                "cpumask"
            };
            c.bad(k, e);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_noted_option_is_approximated_in_the_table() {
        for k in NOTED {
            let t = fio_options::find(k).unwrap_or_else(|| panic!("{k} not in the table"));
            assert_eq!(t.status, fio_options::Status::Approximated, "{k}");
        }
    }

    #[test]
    fn fios_defaults_need_no_note() {
        assert!(is_default("clat_percentiles", Kind::Bool, Some("1")));
        assert!(!is_default("clat_percentiles", Kind::Bool, Some("0")));
        assert!(is_default("gtod_reduce", Kind::Bool, Some("0")));
        assert!(!is_default("gtod_reduce", Kind::Bool, None));
        assert!(is_default("cmdprio_percentage", Kind::Percent, Some("0")));
        assert!(!is_default("cmdprio_percentage", Kind::Percent, Some("50")));
        assert!(is_default("continue_on_error", Kind::Choice, Some("none")));
        assert!(!is_default(
            "continue_on_error",
            Kind::Choice,
            Some("write")
        ));
        assert!(is_default(
            "cpus_allowed_policy",
            Kind::Choice,
            Some("shared")
        ));
        assert!(!is_default("cpus_allowed", Kind::Str, Some("0-3")));
    }
}
