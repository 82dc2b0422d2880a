//! `--verify` in a run: the run id and every block's generation, and the verify state saved
//! after a verify cell (`DIR/.iolab-verify`).

use super::*;

/// `--verify`: the run id and a zero generation for every verify block of the set.
pub(super) fn new_verify_setup(plan: &Plan) -> Option<VerifySetup> {
    let block = plan
        .cells
        .iter()
        .filter(|c| c.verify)
        .map(|c| c.bs_sizes()[0])
        .min()?;
    let spec = &plan.fileset;
    let blocks = spec.files as u64 * (spec.file_size_bytes / block);
    // A set a verify run left (same files, sizes and block): its generations go on, so reads
    // check what it wrote. A device keeps no state: its generations are this run's.
    if spec.device.is_none()
        && let Ok((head, gens)) = verify::load_state(&spec.dir)
        && head.block_bytes == block
        && head.file_size_bytes == spec.file_size_bytes
        && head.offset_bytes == spec.base_offset()
        && head.files.len() == spec.files as usize
        && gens.len() as u64 == blocks
    {
        return Some(VerifySetup {
            run_id: head.run_id,
            block,
            gens,
        });
    }
    // Reads alone on a set a verify of other blocks left (another block size or range, fio's
    // t0003): each block read where that verify wrote is checked against what it wrote, so a
    // block read in other sizes than it was written fails, as fio's headers do.
    if spec.device.is_none()
        && !plan.cells.iter().any(|c| c.verify && c.mode.writes())
        && let Ok((head, gens)) = verify::load_state(&spec.dir)
        && head.files.len() == spec.files as usize
    {
        let mapped = foreign_gens(&head, &gens, spec, block);
        if mapped.iter().any(|&g| g != 0) {
            return Some(VerifySetup {
                run_id: head.run_id,
                block,
                gens: mapped,
            });
        }
    }
    let run_id = crate::spec::dist::seed_from_clock() ^ ((std::process::id() as u64) << 32);
    Some(VerifySetup {
        run_id,
        block,
        gens: vec![0; blocks as usize],
    })
}

/// The generations of a verify state of other blocks (`head`, `gens`) for the blocks of `block`
/// bytes of `spec`: each block takes the generation of the written block its first byte falls
/// in (0: no verify write reached it, not checked).
fn foreign_gens(
    head: &crate::model::verify::StateHead,
    gens: &[u32],
    spec: &FileSetSpec,
    block: u64,
) -> Vec<u32> {
    let per_w = head.file_size_bytes / head.block_bytes.max(1);
    let per_r = spec.file_size_bytes / block;
    let (w0, r0) = (head.offset_bytes, spec.base_offset());
    let mut out = vec![0; (spec.files as u64 * per_r) as usize];
    for f in 0..spec.files as u64 {
        for k in 0..per_r {
            let at = r0 + k * block;
            if at < w0 || at >= w0 + per_w * head.block_bytes {
                continue;
            }
            let j = (at - w0) / head.block_bytes;
            out[(f * per_r + k) as usize] =
                gens.get((f * per_w + j) as usize).copied().unwrap_or(0);
        }
    }
    out
}

/// Saves the verify state of the set (`--dir/.iolab-verify`) after a verify cell; nothing on a
/// device (its read-back is within the run).
pub(super) fn save_verify_state(spec: &FileSetSpec, vs: &VerifySetup) -> Result<()> {
    if spec.device.is_some() {
        return Ok(());
    }
    let head = crate::model::verify::StateHead {
        schema: crate::model::schema::VERIFY_STATE.to_string(),
        run_id: vs.run_id,
        block_bytes: vs.block,
        file_size_bytes: spec.file_size_bytes,
        files: (0..spec.files)
            .map(|i| file_path(Path::new(""), i).to_string_lossy().into_owned())
            .collect(),
        offset_bytes: spec.base_offset(),
    };
    verify::save_state(&spec.dir, &head, &vs.gens).map_err(|e| {
        Error::failed(format!(
            "--verify: writing {}: {e}",
            verify::state_path(&spec.dir).display()
        ))
    })
}
