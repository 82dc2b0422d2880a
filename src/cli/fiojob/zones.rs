//! fio's zones of one job: `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`) as the
//! job's [`Zones`] (docs/fio-jobs.md, "When I/O is issued"); `zonemode=zbd` refused.

use super::ctx::Ctx;
use crate::model::job::Mode;
use crate::model::timing::Zones;

/// What the job is, for its zones: its mode, files per clone, `rw=...:N`, fixed block size,
/// and whether its clones share one file or device (`filename=`, a device, `numjobs>1`).
pub(super) struct Shape {
    pub mode: Mode,
    pub nrfiles: u64,
    pub skip: i64,
    pub bs_fixed: Option<u64>,
    pub shared_clones: bool,
}

/// The job's strided zones (`zonerange` is `zonesize` unless given, as fio), None without; what
/// iolab cannot run as fio is refused.
pub(super) fn zones(c: &mut Ctx, job: &Shape) -> Option<Zones> {
    let mode = c.val("zonemode").map(|v| v.trim().to_ascii_lowercase());
    let size = c.size("zonesize").filter(|s| *s > 0);
    match mode.as_deref() {
        Some("zbd") => {
            c.refuse_key(
                "zonemode",
                "zoned block device mode (write pointers, zone resets) is not run",
            );
            return None;
        }
        None | Some("none") => {
            if size.is_some() {
                c.bad(
                    "zonesize",
                    "needs zonemode=strided (fio refuses it with zonemode=none, the default)",
                );
            }
            return None;
        }
        Some("strided") => {}
        Some(_) => {
            c.bad("zonemode", "not none, strided or zbd");
            return None;
        }
    }
    let Some(size) = size else {
        c.bad(
            "zonemode",
            "strided needs zonesize= (fio refuses it without)",
        );
        return None;
    };
    let range = c.size("zonerange").filter(|r| *r > 0).unwrap_or(size);
    let skip = c.size("zoneskip").unwrap_or(0);
    let why = if job.mode.is_random() {
        Some("random offsets within strided zones")
    } else if job.mode.is_mixed() || job.mode.trims() {
        Some("strided zones of a mixed or trim job (fio keeps one position per direction)")
    } else if job.nrfiles > 1 {
        Some("strided zones over more than one file")
    } else if job.skip != 0 {
        Some("strided zones with rw=...:N")
    } else if job.bs_fixed.is_none() {
        Some("strided zones with mixed block sizes")
    } else if job.shared_clones {
        Some(
            "strided zones of clones sharing one file or device (iolab shares the range out between them; fio's clones each walk all of it)",
        )
    } else {
        None
    };
    if let Some(why) = why {
        c.refuse_key("zonemode", why);
        return None;
    }
    Some(Zones { size, range, skip })
}
