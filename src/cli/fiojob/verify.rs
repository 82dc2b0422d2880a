//! fio's verify options (docs/fio-jobs.md, "Verification") as iolab's `--verify` and a
//! read-back phase.

use super::ctx::Ctx;

/// fio's checksum kinds of `verify=`: iolab's own header and CRC-32C stand in for each.
pub const FIO_CHECKSUMS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
];

/// fio's verify options (docs/fio-jobs.md, "Verification"). `None`: no `--verify`;
/// `Some(None)`: `--verify` on the job's own mode; `Some(Some(m))`: `--verify` and the mode `m`
/// after the writes, reading back the range they wrote (fio's verify phase of a write job).
pub(super) fn verify_options(
    c: &mut Ctx,
    mode: &str,
    timed: bool,
    notes: &mut Vec<String>,
) -> Option<Option<&'static str>> {
    // verify_pattern: fio's own byte pattern, which iolab's header cannot stand in for
    let Some(v) = c.val("verify") else {
        for k in [
            "do_verify",
            "verify_fatal",
            "verify_backlog",
            "verify_interval",
        ] {
            if c.opt(k).is_some() {
                notes.push(format!("{k} without verify=: no effect, as in fio"));
            }
        }
        return None;
    };
    let kind = v.trim().to_string();
    match kind.as_str() {
        "0" | "none" => return None,
        "null" => {
            notes.push("verify=null: fio checks nothing; iolab runs without --verify".into());
            return None;
        }
        "pattern" => {
            c.refuse_key(
                "verify",
                "iolab's payload is derived from its header, not a fixed pattern",
            );
            return None;
        }
        k if FIO_CHECKSUMS.contains(&k) => {}
        _ => {
            c.bad(
                "verify",
                "not a verify method of fio's (md5, crc32c, sha256, xxhash, meta, pattern, ...)",
            );
            return None;
        }
    }
    let writes = matches!(mode, "seqwr" | "rndwr" | "rndrw" | "seqrw");
    if !writes {
        // a read job checks data an earlier fio job wrote with fio's headers: nothing iolab
        // wrote, so nothing it can check
        c.refuse_key(
            "verify",
            "a job that only reads would check fio's headers from an earlier fio run",
        );
        return None;
    }
    notes.push(if kind.starts_with("crc32c") {
        format!("verify={kind}: iolab's header, with the same checksum (CRC-32C) as fio's {kind}")
    } else {
        format!("verify={kind}: checksum crc32c (iolab's header) in place of fio's {kind}")
    });
    let do_verify = c.bool("do_verify").unwrap_or(true);
    if let Some(true) = c.bool("verify_fatal") {
        notes.push(
            "verify_fatal=1: iolab counts every mismatch and exits 3 at the end instead of stopping at the first"
                .into(),
        );
    }
    if let Some(n) = c.val("verify_backlog") {
        notes.push(format!(
            "verify_backlog={}: iolab reads the blocks back after all the writes, not every {} blocks (the same bytes, later)",
            n.trim(),
            n.trim()
        ));
    }
    if let Some(n) = c.val("verify_interval") {
        notes.push(format!(
            "verify_interval={}: iolab's header and checksum cover the whole block",
            n.trim()
        ));
    }
    if !do_verify {
        notes.push("do_verify=0: written with iolab's headers, not read back".into());
        return Some(None);
    }
    if matches!(mode, "rndrw" | "seqrw") {
        notes.push(format!(
            "verify with {}: iolab's reads check what the job wrote as they go; fio's verify phase at the end is not run",
            if mode == "rndrw" { "randrw" } else { "readwrite" }
        ));
        return Some(None);
    }
    if timed {
        notes.push(
            "verify with runtime=: the read-back runs for the same time as the writes, not once over what they wrote"
                .into(),
        );
    }
    notes.push(
        "verify: after the writes, a seqrd pass reads back and checks the range written (fio's verify phase)"
            .into(),
    );
    Some(Some("seqrd"))
}
