//! The arguments of the commands that read the store: `--tag`, `--since`, run and group
//! references.

use super::*;

/// `--tag KEY=VALUE`, each given once or more, as a map.
pub fn parse_tags(tags: &[String]) -> Result<BTreeMap<String, String>> {
    tags.iter()
        .map(|t| match t.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(Error::usage(format!("--tag '{t}': use KEY=VALUE"))),
        })
        .collect()
}

/// `--since`: a date, an RFC 3339 time or an age (30m, 24h, 7d), as an RFC 3339 UTC bound.
pub fn parse_since(s: &str) -> Result<String> {
    let bad = || {
        Error::usage(format!(
            "--since '{s}': use a date (2026-11-01), an RFC 3339 time (2026-11-01T12:00:00Z) or an age (30m, 24h, 7d)"
        ))
    };
    let t = s.trim();
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(t) {
        return Ok(dt
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        let dt = d.and_hms_opt(0, 0, 0).ok_or_else(bad)?.and_utc();
        return Ok(dt.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (n, unit) = t.split_at(split);
    let n: i64 = n.parse().map_err(|_| bad())?;
    let unit_s: i64 = match unit {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86400,
        "w" => 7 * 86400,
        _ => return Err(bad()),
    };
    // an age older than the calendar chrono holds (or than the epoch) lists everything
    let dt = n
        .checked_mul(unit_s)
        .and_then(chrono::Duration::try_seconds)
        .and_then(|d| chrono::Utc::now().checked_sub_signed(d))
        .filter(|t| t.timestamp() >= 0)
        .unwrap_or(chrono::DateTime::UNIX_EPOCH);
    Ok(dt.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// Parses run/group references.
pub fn parse_refs(ids: &[String]) -> Result<Vec<crate::store::Ref>> {
    ids.iter()
        .map(|s| s.parse().map_err(Error::usage))
        .collect()
}
