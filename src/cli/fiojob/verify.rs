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

/// How a verify job reads back what it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadBack {
    /// Not at all (`do_verify=0`).
    No,
    /// A read mode after the writes, over the range they wrote (fio's verify phase of a write
    /// job).
    Mode(&'static str),
    /// `--verify-backlog N`: each thread reads back its writes every N, and the rest after its
    /// last one, in the job's own mode.
    Backlog(u64),
    /// `verify_only`: the writes are not run; a read mode checks what an earlier run wrote.
    Only(&'static str),
}

/// The backlog that stands in for fio's end-of-job verify phase of a mixed job (its writes read
/// back after its last one): at most this many writes wait per thread (24 bytes each, made
/// before the run).
pub(super) const MIXED_BACKLOG: u64 = 1 << 16;

/// fio's verify options (docs/fio-jobs.md, "Verification"). `None`: no `--verify`; else
/// `--verify` and how the job reads back what it wrote.
pub(super) fn verify_options(
    c: &mut Ctx,
    mode: &str,
    timed: bool,
    moves_data: bool,
    notes: &mut Vec<String>,
) -> Option<ReadBack> {
    // verify_pattern without verify= is verify=pattern, as fio's str_verify_pattern_cb sets it
    let given = c
        .val("verify")
        .or_else(|| c.opt("verify_pattern").map(|_| "pattern".to_string()));
    let Some(v) = given else {
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
        "pattern" | "pattern_hdr" => {}
        k if FIO_CHECKSUMS.contains(&k) => {}
        _ => {
            c.bad(
                "verify",
                "not a verify method of fio's (md5, crc32c, sha256, xxhash, meta, pattern, ...)",
            );
            return None;
        }
    }
    if !moves_data {
        // fio runs the verify options with an engine that moves no data (t0009: ioengine=null,
        // its check is the runtime): its verify reads check nothing
        notes.push(format!(
            "verify={kind} with an engine that moves no data: nothing is written or read back, so nothing is checked (fio's verify checks nothing with it either); iolab runs without --verify"
        ));
        return None;
    }
    let writes = matches!(mode, "seqwr" | "rndwr" | "rndrw" | "seqrw");
    if !writes {
        other_options(c, notes);
        // fio checks the headers an earlier job wrote; iolab checks the blocks its own verify
        // writes reached on the same set (their generations are in DIR/.iolab-verify)
        notes.push(format!(
            "verify={kind} on a job that only reads: iolab checks the blocks its own verify writes reached on this set (an earlier job of the run on the same files, or a run kept with --keep); a block no iolab verify write reached is counted unchecked, where fio would report a bad header"
        ));
        return Some(ReadBack::No);
    }
    notes.push(if kind.starts_with("crc32c") {
        format!("verify={kind}: iolab's header, with the same checksum (CRC-32C) as fio's {kind}")
    } else if kind.starts_with("pattern") {
        format!(
            "verify={kind}: iolab's header, payload and CRC-32C stand in for fio's pattern check (the bytes written differ; a corrupted block is found either way)"
        )
    } else {
        format!("verify={kind}: checksum crc32c (iolab's header) in place of fio's {kind}")
    });
    other_options(c, notes);
    if c.bool("verify_only") == Some(true) {
        notes.push(
            "verify_only=1: the writes are not run; a seqrd pass checks the blocks an earlier `iolab run --verify --keep` of this set wrote (their generations in DIR/.iolab-verify), as fio checks its previous invocation's"
                .into(),
        );
        return Some(ReadBack::Only("seqrd"));
    }
    let do_verify = c.bool("do_verify").unwrap_or(true);
    let backlog = c.size("verify_backlog").filter(|&n| n > 0);
    if !do_verify {
        notes.push("do_verify=0: written with iolab's headers, not read back".into());
        return Some(ReadBack::No);
    }
    if c.bool("norandommap") == Some(true) && mode.starts_with("rnd") {
        notes.push(
            "verify with norandommap: iolab reads back every write in the order written; fio reads each block once, by offset"
                .into(),
        );
    }
    if let Some(n) = backlog {
        notes.push(format!(
            "verify_backlog={n}: every {n} writes the thread reads them back and checks them, and the rest after its last write, as fio"
        ));
        if timed {
            notes.push(format!(
                "verify_backlog with runtime=: the writes since the last {n} are not read back when the time is up"
            ));
        }
        return Some(ReadBack::Backlog(n));
    }
    if timed {
        // fio's verify phase comes after the runtime, which the job's I/O used up: fio reads
        // nothing back (for a write job it warns "verification read phase will never start")
        notes.push(
            "verify with time_based and no verify_backlog: fio's verify phase never starts (the runtime is used up, as fio warns); iolab writes its headers and reads nothing back either (give verify_backlog= to check while writing)"
                .into(),
        );
        return Some(ReadBack::No);
    }
    if matches!(mode, "rndrw" | "seqrw") {
        notes.push(format!(
            "verify with {}: every write is read back and checked after the job's last one, as fio's verify phase (with more than {MIXED_BACKLOG} writes per thread, every {MIXED_BACKLOG})",
            if mode == "rndrw" { "randrw" } else { "readwrite" }
        ));
        return Some(ReadBack::Backlog(MIXED_BACKLOG));
    }
    if let Some(n) = c.int("loops").filter(|&n| n > 1) {
        notes.push(if c.bool("experimental_verify") == Some(true) {
            // fio 3.33 (backend.c): experimental verify reads while its bytes verified stay
            // below the bytes written, and its count goes on across the loops: only the first
            // loop's verify reads; and such a job writes one loop less (t0026: 7 of loops=8)
            format!(
                "verify with loops={n} and experimental_verify=1: {} write passes and one read-back of the range, as fio 3.33 (its experimental verify reads back the first loop only and it writes one loop less); iolab reads back after the last pass, checking its writes",
                n - 1
            )
        } else {
            format!(
                "verify with loops={n}: the read-back reads the range {n} times, as often as it was written (fio reads the range back after each loop)"
            )
        });
    }
    notes.push(
        "verify: after the writes, a seqrd pass reads back and checks the range written (fio's verify phase)"
            .into(),
    );
    Some(ReadBack::Mode("seqrd"))
}

/// Notes for the verify options that change how fio checks, not what iolab reads back.
fn other_options(c: &mut Ctx, notes: &mut Vec<String>) {
    if let Some(true) = c.bool("verify_fatal") {
        notes.push(
            "verify_fatal=1: iolab counts every mismatch and exits 3 at the end instead of stopping at the first"
                .into(),
        );
    }
    if let Some(n) = c.val("verify_interval") {
        notes.push(format!(
            "verify_interval={}: iolab's header and checksum cover the whole block",
            n.trim()
        ));
    }
    if let Some(p) = c.val("verify_pattern") {
        notes.push(format!(
            "verify_pattern={}: iolab's blocks carry its header, payload and CRC-32C, not the pattern (a corrupted block is found either way; the bytes written differ)",
            p.trim()
        ));
    }
    if let Some(n) = c.int("verify_async").filter(|&n| n > 0) {
        notes.push(format!(
            "verify_async={n}: iolab checks in the I/O thread (fio in {n} threads of their own): the same blocks checked, the thread's next I/O waits for the check"
        ));
    }
    if c.bool("verify_dump") == Some(true) {
        notes.push(
            "verify_dump=1: iolab's document lists the first 100 mismatching blocks (header expected and found, the kind); fio writes each one's data to files in the working directory"
                .into(),
        );
    }
    if let Some(n) = c.size("verify_offset").filter(|&n| n > 0) {
        notes.push(format!(
            "verify_offset={n}: iolab's header stays at the start of each block (fio moves it {n} bytes in)"
        ));
    }
    if c.bool("experimental_verify") == Some(true) {
        notes.push(
            "experimental_verify=1: iolab reads back the blocks it wrote by the generations it kept (fio regenerates the offsets instead of logging them): the same blocks read and checked"
                .into(),
        );
    }
}
