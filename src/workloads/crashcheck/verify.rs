//! Verify: every acknowledged record of an authenticated journal read back and classified.

use super::*;

const MAX_PROBLEMS: usize = 100;

/// Reads back the last acknowledged record of every offset in `file` and classifies it.
/// A missing data file counts every acknowledged record as lost.
pub fn verify(j: &Journal, file: &Path) -> Result<(VerifyOut, Vec<String>)> {
    let run = j
        .hello
        .run_id()
        .ok_or_else(|| Error::failed("the journal has no run id"))?;
    let bs = j.hello.record_bytes as usize;
    let mut warnings = Vec::new();
    let f = match File::open(file) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            warnings.push(format!(
                "{}: the data file is missing, although its creation was synced",
                file.display()
            ));
            None
        }
        Err(e) => return Err(io_err(file.display(), e)),
    };
    let mut buf = vec![0u8; bs];
    let mut out = VerifyOut {
        acknowledged: j.acks.len() as u64,
        checked: 0,
        ok: 0,
        overwritten: 0,
        lost: 0,
        corrupt: 0,
        misdirected: 0,
        writer: match (&j.failed, j.ended) {
            (Some((seq, _, why)), _) => format!("stopped at record {seq}: {why}"),
            (None, Some(n)) => format!("ended ({n} acknowledged)"),
            (None, None) => "no end recorded (killed, crashed or power cut)".into(),
        },
        problems: Vec::new(),
    };
    for a in j.last_per_offset() {
        buf.fill(0);
        if let Some(f) = &f {
            let mut got = 0;
            while got < bs {
                match f.read_at(&mut buf[got..], a.offset + got as u64) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) => return Err(io_err(format!("{} at {}", file.display(), a.offset), e)),
                }
            }
        }
        let block = cc::decode(&buf);
        let class = cc::classify(run, &a, block);
        out.checked += 1;
        match class {
            Class::Ok => out.ok += 1,
            Class::Overwritten => out.overwritten += 1,
            Class::Lost => out.lost += 1,
            Class::Corrupt => out.corrupt += 1,
            Class::Misdirected => out.misdirected += 1,
        }
        if class.is_failure() {
            out.problems.push(Problem {
                seq: a.seq,
                offset_bytes: a.offset,
                class,
                found: match block {
                    Block::Zeros => "zeros".into(),
                    Block::Garbage => "garbage (torn or damaged)".into(),
                    Block::Record(h) if h.run != run => {
                        format!("run {:016x} seq {}", h.run, h.seq)
                    }
                    Block::Record(h) => format!("seq {} (offset {})", h.seq, h.offset),
                },
            });
        }
    }
    // the first problems by seq: the earliest acknowledged writes the storage dropped
    out.problems.sort_by_key(|p| p.seq);
    out.problems.truncate(MAX_PROBLEMS);
    Ok((out, warnings))
}
