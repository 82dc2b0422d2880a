//! The writer: the preallocated data file, every record written and synced before it is
//! acknowledged to the journal; a failed sync stops the run, never retried into an
//! acknowledgement.

use super::*;

pub struct WriteOpts {
    pub dir: PathBuf,
    pub record_bytes: u64,
    pub file_bytes: u64,
    pub sync: SyncMode,
    pub count: Option<u64>,
    pub time_s: Option<f64>,
}

/// A random run id (unpredictable, so nobody can take a run's journal name before it; never 0).
pub fn new_run_id() -> u64 {
    rand::random::<u64>().max(1)
}

/// Offsets in a scattered order that visits every block once before any repeats: block
/// `(start + i * stride) mod n` with `stride` coprime to `n`.
pub struct Offsets {
    n: u64,
    start: u64,
    stride: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Offsets {
    pub fn new(blocks: u64, run: u64) -> Offsets {
        let n = blocks.max(1);
        let mut stride = (n as f64 * 0.618_033_988_7) as u64 + (run % 97);
        stride = stride.max(1);
        while gcd(stride % n, n) != 1 && n > 1 {
            stride += 1;
        }
        Offsets {
            n,
            start: run % n,
            stride: stride % n.max(2),
        }
    }
    /// The block of the i-th record (i from 0).
    pub fn block(&self, i: u64) -> u64 {
        ((self.start as u128 + i as u128 * self.stride as u128) % self.n as u128) as u64
    }
}

/// A block-aligned buffer (O_DIRECT needs one).
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096).expect("layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            // as std's own allocations fail: an abort naming the size, not a panic
            std::alloc::handle_alloc_error(layout);
        }
        Aligned { ptr, layout }
    }
    fn buf(&mut self) -> &mut [u8] {
        // SAFETY: ptr is a live allocation of layout.size() bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

pub fn data_path(dir: &Path) -> PathBuf {
    dir.join(cc::DATA_FILE)
}

/// Refuses (exit 2) a data file name in `dir` that holds what iolab did not make: a symbolic
/// link, a fifo, a directory (checked before the journal is opened, so nothing is left).
pub fn check_data_file(dir: &Path) -> Result<()> {
    let t = crate::system::target::TargetDir::of(dir).map_err(|e| io_err(dir.display(), e))?;
    t.entry(cc::DATA_FILE).map(|_| ())
}

/// Creates the data file afresh at its full size (allocated where the filesystem can) and makes
/// that durable, then opens it for the records with the sync mode's flags.
/// Through the directory's handle (system::target): a data file name that holds what iolab did
/// not make (a symbolic link, a fifo, a directory) is refused in one line (exit 2), never
/// removed or written through.
pub fn create_data_file(o: &WriteOpts) -> Result<File> {
    use crate::system::target::TargetDir;
    let p = data_path(&o.dir);
    let what = || p.display().to_string();
    let t = TargetDir::of(&o.dir).map_err(|e| io_err(o.dir.display(), e))?;
    t.entry(cc::DATA_FILE)?;
    t.remove(cc::DATA_FILE, false);
    let f = t
        .create_new(cc::DATA_FILE, 0)
        .map_err(|e| io_err(what(), e))?;
    // SAFETY: plain system call on an open descriptor.
    let _ = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, o.file_bytes as libc::off_t) };
    f.set_len(o.file_bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| io_err(what(), e))?;
    t.sync().map_err(|e| io_err(o.dir.display(), e))?;
    drop(f);
    let flags = match o.sync {
        SyncMode::Fsync | SyncMode::Fdatasync => 0,
        SyncMode::Dsync => libc::O_DSYNC,
        SyncMode::DirectDsync => libc::O_DSYNC | libc::O_DIRECT,
    };
    t.open_existing(cc::DATA_FILE, true, flags).map_err(|e| {
        t.remove(cc::DATA_FILE, true);
        if e.raw_os_error() == Some(libc::EINVAL) {
            Error::usage(format!(
                "--sync {}: {} refuses O_DIRECT; use --sync dsync",
                o.sync.name(),
                o.dir.display()
            ))
        } else {
            io_err(what(), e)
        }
    })
}

fn sync_call(f: &File, mode: SyncMode) -> std::io::Result<()> {
    match mode {
        SyncMode::Fsync => f.sync_all(),
        SyncMode::Fdatasync => f.sync_data(),
        SyncMode::Dsync | SyncMode::DirectDsync => Ok(()),
    }
}

/// Writes records until `--count`, `--time`, a stop signal, an I/O error or a lost listener.
/// Each record is written and synced, then acknowledged to `sink`, and only then is the next
/// one written. A failed sync is never retried into an acknowledgement: the run stops there.
/// `tell` hears one line per event worth a line (the failure).
pub fn write(
    o: &WriteOpts,
    run: u64,
    f: &File,
    sink: &mut Sink,
    stop: &AtomicBool,
    tell: &dyn Fn(&str),
) -> WriteOut {
    let blocks = o.file_bytes / o.record_bytes;
    let offsets = Offsets::new(blocks, run);
    let mut buf = Aligned::new(o.record_bytes as usize);
    let t0 = Instant::now();
    let mut written = 0u64;
    let mut acked = 0u64;
    let mut failure = None;
    let stopped = loop {
        if o.count.is_some_and(|c| acked >= c) {
            break Stop::Count;
        }
        if o.time_s.is_some_and(|t| t0.elapsed().as_secs_f64() >= t) {
            break Stop::Time;
        }
        if stop.load(Ordering::Relaxed) {
            break Stop::Interrupted;
        }
        let seq = written + 1;
        let offset = offsets.block(written) * o.record_bytes;
        let crc = cc::encode(buf.buf(), run, seq, offset);
        let res = f
            .write_all_at(buf.buf(), offset)
            .map_err(|e| ("write", e))
            .and_then(|_| {
                sync_call(f, o.sync).map_err(|e| {
                    (
                        if o.sync == SyncMode::Fsync {
                            "fsync"
                        } else {
                            "fdatasync"
                        },
                        e,
                    )
                })
            });
        written += 1;
        if let Err((call, e)) = res {
            // fsyncgate: the kernel reports a writeback error once; a second sync that returns
            // 0 says nothing about this record. It is not acknowledged, and nothing after it is.
            let second = match o.sync {
                SyncMode::Fsync => f.sync_all(),
                _ => f.sync_data(),
            };
            let second_sync = Some(match &second {
                Ok(()) => "ok".to_string(),
                Err(e) => errno_text(e),
            });
            let fail = IoFailure {
                seq,
                offset_bytes: offset,
                call: call.into(),
                error: errno_text(&e),
                second_sync,
            };
            tell(&failure_line(&fail, o.sync));
            let _ = sink.send(&format!("FAIL {seq} {offset} {call} {}", fail.error));
            failure = Some(fail);
            break Stop::IoError;
        }
        if let Err(e) = sink.send(&cc::ack_line(&Ack {
            seq,
            offset,
            checksum: crc,
        })) {
            tell(&format!(
                "record {seq} was written and synced but could not be acknowledged: {e}; stopping"
            ));
            break Stop::ListenerLost;
        }
        acked += 1;
    };
    if stopped != Stop::ListenerLost {
        let _ = sink.send(&format!("END {acked}"));
    }
    let elapsed_s = t0.elapsed().as_secs_f64();
    WriteOut {
        written,
        acknowledged: acked,
        elapsed_s,
        acks_per_sec: if elapsed_s > 0.0 {
            acked as f64 / elapsed_s
        } else {
            0.0
        },
        stopped,
        failure,
    }
}

/// The one line a failed write or sync gets.
pub fn failure_line(f: &IoFailure, mode: SyncMode) -> String {
    let mut s = format!(
        "record {} at offset {}: {} failed: {}",
        f.seq, f.offset_bytes, f.call, f.error
    );
    match f.second_sync.as_deref() {
        Some("ok") => s.push_str(&format!(
            "; a second {} then returned success, which proves nothing (the error is reported once and the data may be gone)",
            if mode == SyncMode::Fsync { "fsync" } else { "fdatasync" }
        )),
        Some(e) => s.push_str(&format!("; a second sync failed too: {e}")),
        None => {}
    }
    s.push_str(&format!(
        "; record {} is not acknowledged and the run stops",
        f.seq
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_visit_every_block_once_per_pass() {
        for n in [1u64, 2, 7, 64, 1000, 4096] {
            let o = Offsets::new(n, 0xdead_beef);
            let mut seen: Vec<u64> = (0..n).map(|i| o.block(i)).collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len() as u64, n, "n={n}");
            assert_eq!(o.block(n), o.block(0));
        }
        // scattered, not sequential
        let o = Offsets::new(4096, 1);
        assert!((0..10).any(|i| o.block(i + 1) != o.block(i) + 1));
    }
}
