//! fio's `ioengine=cpuio` (`model::noio::CpuLoad`): no I/O and no file; each thread keeps busy
//! for a cycle and sleeps for `cycle × (100 − cpuload) / cpuload` after it, so its busy share is
//! `cpuload` %, as fio's engine sets its think time. `cpumode=noop` spins on the clock for
//! `cpuchunks` µs (fio's `usec_spin`); `cpumode=qsort` sorts fio's 256 Ki 32-bit numbers four
//! times with the C library's qsort (fio's `do_qsort`: the same data, comparisons and calls),
//! the cycle as long as the sorts take.

use super::ops::{CycleEngine, Shared};
use crate::model::job::EngineKind;
use crate::model::noio::{CpuLoad, NoIo};
use std::time::{Duration, Instant};

/// How many 32-bit numbers fio's qsort mode sorts (`qsort_size`).
const QSORT_LEN: usize = 256 << 10;

pub struct Cpu {
    load_pct: u64,
    chunk: Duration,
    /// `cpumode=qsort`: fio's data, made once when the thread starts.
    data: Option<Vec<i32>>,
}

/// fio's `mwc32`: multiply-with-carry numbers from fio's seeds (521288629, 362436069).
fn qsort_data() -> Vec<i32> {
    let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
    (0..QSORT_LEN)
        .map(|_| {
            z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
            w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
            (z << 16).wrapping_add(w) as i32
        })
        .collect()
}

extern "C" fn ascending(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
    // SAFETY: qsort hands two pointers to elements of the i32 array it sorts.
    let (a, b) = unsafe { (*(a as *const i32), *(b as *const i32)) };
    a.cmp(&b) as libc::c_int
}

extern "C" fn descending(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
    ascending(b, a)
}

extern "C" fn bytes(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
    // SAFETY: qsort hands two pointers to bytes of the array it sorts (as fio's, signed).
    let (a, b) = unsafe { (*(a as *const i8), *(b as *const i8)) };
    libc::c_int::from(a) - libc::c_int::from(b)
}

/// fio's `do_qsort`: ascending, descending, by signed byte, descending again.
fn sorts(d: &mut [i32]) {
    let p = d.as_mut_ptr() as *mut libc::c_void;
    let n = d.len();
    // SAFETY: each call sorts the `n` i32 (or `4n` bytes) of `d` in place, with comparators of
    // that element size.
    unsafe {
        libc::qsort(p, n, 4, Some(ascending));
        libc::qsort(p, n, 4, Some(descending));
        libc::qsort(p, n * 4, 1, Some(bytes));
        libc::qsort(p, n, 4, Some(descending));
    }
}

impl Cpu {
    /// The pause after a busy cycle of `busy`: busy is then `load_pct` % of the thread's time.
    fn pause(&self, busy: Duration) -> Duration {
        busy * (100 - self.load_pct) as u32 / self.load_pct.max(1) as u32
    }
}

impl<'a> CycleEngine<'a> for Cpu {
    const KIND: EngineKind = EngineKind::Cpuio;

    fn open(sh: &Shared<'a>, _thread: u32) -> std::io::Result<Self> {
        let Some(NoIo::Cpu(CpuLoad {
            load_pct,
            chunk_us,
            qsort,
        })) = &sh.job.noio
        else {
            return Err(std::io::Error::other(
                "the cpuio engine runs from a job file's cpuload= (ioengine=cpuio)",
            ));
        };
        Ok(Cpu {
            load_pct: u64::from((*load_pct).clamp(1, 100)),
            chunk: Duration::from_micros(*chunk_us),
            data: qsort.then(qsort_data),
        })
    }

    #[inline]
    fn cycle(&mut self) -> Result<Duration, i32> {
        let t0 = Instant::now();
        match &mut self.data {
            // qsort: the next pause from this round's length (fio adjusts it the same way)
            Some(d) => {
                sorts(d);
                Ok(self.pause(t0.elapsed()))
            }
            // noop: fio's pause is from cpuchunks, however late the spin ended
            None => {
                while t0.elapsed() < self.chunk {
                    std::hint::spin_loop();
                }
                Ok(self.pause(self.chunk))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_numbers_and_sorts() {
        let d = qsort_data();
        assert_eq!(d.len(), QSORT_LEN);
        // mwc32's first value from fio's seeds
        let z = 36969u32 * (362_436_069 & 65535) + (362_436_069 >> 16);
        let w = 18000u32 * (521_288_629 & 65535) + (521_288_629 >> 16);
        assert_eq!(d[0], (z << 16).wrapping_add(w) as i32);
        let mut s = d[..1000].to_vec();
        sorts(&mut s);
        assert!(s.windows(2).all(|p| p[0] >= p[1]), "descending at the end");
    }

    #[test]
    fn the_pause_makes_the_busy_share_the_load() {
        let c = Cpu {
            load_pct: 25,
            chunk: Duration::from_millis(10),
            data: None,
        };
        assert_eq!(
            c.pause(Duration::from_millis(10)),
            Duration::from_millis(30)
        );
        let full = Cpu { load_pct: 100, ..c };
        assert_eq!(full.pause(Duration::from_millis(10)), Duration::ZERO);
    }
}
