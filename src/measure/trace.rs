//! Traces a replay reads (`iolab run --replay`), as a stream of requests: `iolab capture`'s file
//! (`iolab-capture/1`) and fio's iologs, versions 2 and 3 (fio 3.33's `iolog.c`, `read_iolog`).
//! One pass over the file with a bound per line; memory is one line, never the trace.
//!
//! - A capture: one request per line (`t_ns`, `dir`, `offset_bytes`, `size_bytes`, `qd`);
//!   `discard` is a trim, `flush` a flush; `other` (write-zeroes, zone commands) is skipped.
//! - fio iolog 3: `TIME FILE ACTION [OFFSET LENGTH]`, TIME in µs from the log's start; actions
//!   read, write, trim, sync and datasync (a flush of that file); add, open, close name files.
//! - fio iolog 2: `FILE ACTION [OFFSET LENGTH]` without times; `FILE wait N` holds the next
//!   requests until N ms after the start, as fio 3.33's `read_iolog_get` does.
//! - blktrace's binary events (`struct blk_io_trace`, 48 bytes and its payload; either byte
//!   order): the queue (`Q`) events, as fio's `blktrace.c` replays them (the bios the
//!   filesystem or the program submitted, before merges), a device per file; a discard is a
//!   trim; a flush with data is a flush, then its write (fio keeps only the flush). One file:
//!   one CPU's, or every CPU's merged in time order by `blkparse -i NAME -d FILE`.

use crate::model::capture::{CaptureIo, IoDir};
use crate::model::replay::TraceFormat;
use std::io::{BufRead, Read};
use std::path::Path;

/// The longest line read (a capture's lines are about 140 bytes).
pub const MAX_LINE_BYTES: u64 = 64 << 10;

/// What one request of a trace does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceOp {
    #[default]
    Read,
    Write,
    Trim,
    Flush,
}

/// One request of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceIo {
    /// When it was issued, ns of the trace's own time.
    pub t_ns: u64,
    pub op: TraceOp,
    /// The trace's file (index in the order the trace names them; 0 for a capture).
    pub file: u32,
    pub off: u64,
    pub len: u64,
    /// The requests in flight just after it was issued, itself included (a capture's `qd`;
    /// 0 when the trace does not say).
    pub qd: u32,
}

/// A trace read as a stream.
pub struct TraceReader {
    r: std::io::BufReader<std::fs::File>,
    pub format: TraceFormat,
    buf: Vec<u8>,
    line: u64,
    files: Vec<String>,
    /// fio iolog 2: the time of the last `wait` (ns).
    wait_ns: u64,
    /// Requests of the trace not replayed so far (a capture's `other`).
    pub skipped: u64,
    /// blktrace: the write of a flush with data, returned after the flush; the devices seen.
    pending: Option<TraceIo>,
    devices: Vec<u32>,
    /// blktrace: the file's byte order is not this machine's.
    swapped: bool,
}

/// blktrace's `BLK_IO_TRACE_MAGIC` (the high 24 bits of `magic`; the low 8: the version).
const BLK_MAGIC: u32 = 0x6561_7400;
/// `struct blk_io_trace`'s length (its payload follows).
const BLK_HEADER: usize = 48;
/// blktrace's action categories (`BLK_TC_*`, shifted by 16) and the queue action.
const BLK_TC_WRITE: u32 = 1 << (16 + 1);
const BLK_TC_FLUSH: u32 = 1 << (16 + 2);
const BLK_TC_NOTIFY: u32 = 1 << (16 + 10);
const BLK_TC_DISCARD: u32 = 1 << (16 + 13);
const BLK_TA_QUEUE: u32 = 1;

/// A line that could not be read: `line N: what`.
fn at(line: u64, what: impl std::fmt::Display) -> String {
    format!("line {line}: {what}")
}

impl TraceReader {
    /// Opens `path` (a regular file) and reads its first line to know its format.
    pub fn open(path: &Path) -> Result<TraceReader, String> {
        let f = crate::spec::input::open_regular(path).map_err(|e| e.to_string())?;
        let mut t = TraceReader {
            r: std::io::BufReader::with_capacity(1 << 20, f),
            format: TraceFormat::IolabCapture,
            buf: Vec::with_capacity(256),
            line: 0,
            files: Vec::new(),
            wait_ns: 0,
            skipped: 0,
            pending: None,
            devices: Vec::new(),
            swapped: false,
        };
        // blktrace's binary events: the magic in either byte order
        let head = t.r.fill_buf().map_err(|e| format!("cannot read it: {e}"))?;
        if head.len() >= 4 {
            let m = u32::from_ne_bytes([head[0], head[1], head[2], head[3]]);
            if m & 0xffff_ff00 == BLK_MAGIC || m.swap_bytes() & 0xffff_ff00 == BLK_MAGIC {
                t.format = TraceFormat::Blktrace;
                t.swapped = m & 0xffff_ff00 != BLK_MAGIC;
                return Ok(t);
            }
        }
        let first = t
            .next_line()?
            .ok_or("empty: not a trace (an iolab capture file or a fio iolog)")?
            .trim()
            .to_string();
        t.format = match first.as_str() {
            "fio version 2 iolog" => TraceFormat::FioIolog2,
            "fio version 3 iolog" => TraceFormat::FioIolog3,
            s if s.starts_with('{') => {
                let v: serde_json::Value =
                    serde_json::from_str(s).map_err(|e| at(1, format!("not JSON: {e}")))?;
                if v.get("schema").and_then(|s| s.as_str()) != Some(crate::model::schema::CAPTURE) {
                    return Err(at(
                        1,
                        "not a capture file's header (iolab-capture/1; made by iolab capture)",
                    ));
                }
                TraceFormat::IolabCapture
            }
            _ => {
                return Err(at(
                    1,
                    "neither an iolab capture file (iolab-capture/1) nor a fio iolog ('fio version 2 iolog' or 'fio version 3 iolog')",
                ));
            }
        };
        Ok(t)
    }

    /// The next line as text (None at the end), at most [`MAX_LINE_BYTES`].
    fn next_line(&mut self) -> Result<Option<&str>, String> {
        self.buf.clear();
        let got = (&mut self.r)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| format!("cannot read it: {e}"))?;
        if got == 0 {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.len() as u64 > MAX_LINE_BYTES {
            return Err(at(
                self.line,
                format!("longer than {MAX_LINE_BYTES} bytes: not a trace"),
            ));
        }
        std::str::from_utf8(&self.buf)
            .map(Some)
            .map_err(|_| at(self.line, "not UTF-8"))
    }

    /// The files a fio iolog named so far (`add`), in order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The next request into `io`; false at the end of the trace.
    pub fn next_io(&mut self, io: &mut TraceIo) -> Result<bool, String> {
        if self.format == TraceFormat::Blktrace {
            return self.next_blk(io);
        }
        loop {
            if self.next_line()?.is_none() {
                return Ok(false);
            }
            // the line's bytes, lent out while the line is read (no copy, no allocation)
            let buf = std::mem::take(&mut self.buf);
            let s = std::str::from_utf8(&buf)
                .expect("checked by next_line")
                .trim();
            let line = self.line;
            let got = match self.format {
                _ if s.is_empty() => Ok(Got::Nothing),
                TraceFormat::IolabCapture => capture_line(s, io),
                TraceFormat::FioIolog2 | TraceFormat::FioIolog3 => self.iolog_line(s, io),
                TraceFormat::Blktrace => unreachable!("read by next_blk"),
            };
            self.buf = buf;
            match got.map_err(|e| at(line, e))? {
                Got::Io => return Ok(true),
                Got::Skipped => self.skipped += 1,
                Got::Nothing => {}
            }
        }
    }

    /// The next queue event of a blktrace file (`line` counts events).
    fn next_blk(&mut self, io: &mut TraceIo) -> Result<bool, String> {
        if let Some(p) = self.pending.take() {
            *io = p;
            return Ok(true);
        }
        let mut h = [0u8; BLK_HEADER];
        loop {
            if self
                .r
                .fill_buf()
                .map_err(|e| format!("cannot read it: {e}"))?
                .is_empty()
            {
                return Ok(false);
            }
            self.r.read_exact(&mut h).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    at(self.line + 1, "a blktrace event cut short")
                } else {
                    format!("cannot read it: {e}")
                }
            })?;
            self.line += 1;
            let u32_at = |o: usize| {
                let v = u32::from_ne_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
                if self.swapped { v.swap_bytes() } else { v }
            };
            let u64_at = |o: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&h[o..o + 8]);
                let v = u64::from_ne_bytes(b);
                if self.swapped { v.swap_bytes() } else { v }
            };
            if u32_at(0) & 0xffff_ff00 != BLK_MAGIC {
                return Err(at(self.line, "not a blktrace event (its magic is wrong)"));
            }
            let pdu = u16::from_ne_bytes([h[46], h[47]]);
            let pdu = if self.swapped { pdu.swap_bytes() } else { pdu };
            std::io::copy(&mut (&mut self.r).take(pdu as u64), &mut std::io::sink())
                .map_err(|e| format!("cannot read it: {e}"))?;
            let (time, sector, bytes, action, device) = (
                u64_at(8),
                u64_at(16),
                u32_at(24) as u64,
                u32_at(28),
                u32_at(36),
            );
            if action & 0xffff != BLK_TA_QUEUE || action & BLK_TC_NOTIFY != 0 {
                continue;
            }
            let file = match self.devices.iter().position(|&d| d == device) {
                Some(i) => i as u32,
                None => {
                    if self.devices.len() >= 1 << 16 {
                        return Err(at(self.line, "more than 65536 devices"));
                    }
                    self.devices.push(device);
                    (self.devices.len() - 1) as u32
                }
            };
            let off = sector
                .checked_mul(512)
                .ok_or(at(self.line, "a sector past 2^64 bytes"))?;
            let base = TraceIo {
                t_ns: time,
                op: TraceOp::Read,
                file,
                off,
                len: bytes,
                qd: 0,
            };
            let data = if action & BLK_TC_DISCARD != 0 {
                TraceOp::Trim
            } else if action & BLK_TC_WRITE != 0 {
                TraceOp::Write
            } else {
                TraceOp::Read
            };
            if action & BLK_TC_FLUSH != 0 {
                *io = TraceIo {
                    op: TraceOp::Flush,
                    off: 0,
                    len: 0,
                    ..base
                };
                if bytes > 0 {
                    self.pending = Some(TraceIo { op: data, ..base });
                }
                return Ok(true);
            }
            if bytes == 0 {
                // fio too ignores a queue event of no bytes that is no flush
                self.skipped += 1;
                continue;
            }
            *io = TraceIo { op: data, ..base };
            return Ok(true);
        }
    }

    /// One line of a fio iolog.
    fn iolog_line(&mut self, s: &str, io: &mut TraceIo) -> Result<Got, String> {
        let mut w = s.split_ascii_whitespace();
        let t_ns = if self.format == TraceFormat::FioIolog3 {
            let t: u64 = w
                .next()
                .and_then(|t| t.parse().ok())
                .ok_or("a fio iolog 3 line starts with its time in µs")?;
            t.checked_mul(1000).ok_or("a time past 2^64 ns")?
        } else {
            self.wait_ns
        };
        let (Some(file), Some(act)) = (w.next(), w.next()) else {
            return Err("a fio iolog line is FILE ACTION [OFFSET LENGTH]".into());
        };
        let mut num = |what: &str| -> Result<Option<u64>, String> {
            w.next()
                .map(|n| {
                    n.parse::<u64>()
                        .map_err(|_| format!("{what} {n:?} is not a number"))
                })
                .transpose()
        };
        let (off, len) = (num("the offset")?, num("the length")?);
        let op = match act {
            "add" => {
                if !self.files.iter().any(|f| f == file) {
                    if self.files.len() >= 1 << 16 {
                        return Err("more than 65536 files".into());
                    }
                    self.files.push(file.to_string());
                }
                return Ok(Got::Nothing);
            }
            "open" | "close" => return Ok(Got::Nothing),
            "wait" if self.format == TraceFormat::FioIolog2 => {
                // fio 3.33: the next requests wait until N ms after the start
                let ms = off.ok_or("wait needs its time (ms)")?;
                self.wait_ns = self.wait_ns.max(ms.saturating_mul(1_000_000));
                return Ok(Got::Nothing);
            }
            // fio ignores a wait in version 3
            "wait" => return Ok(Got::Nothing),
            "read" => TraceOp::Read,
            "write" => TraceOp::Write,
            "trim" => TraceOp::Trim,
            "sync" | "datasync" => TraceOp::Flush,
            other => {
                return Err(format!(
                    "unknown action {other:?} (read, write, trim, sync, datasync, wait, add, open, close)"
                ));
            }
        };
        let file = match self.files.iter().position(|f| f == file) {
            Some(i) => i as u32,
            None => return Err(format!("file {file:?} was not added ('{file} add' first)")),
        };
        let (off, len) = match op {
            TraceOp::Flush => (0, 0),
            _ => match (off, len) {
                (Some(o), Some(l)) if l > 0 => (o, l),
                _ => return Err(format!("{act} needs an offset and a length above 0")),
            },
        };
        *io = TraceIo {
            t_ns,
            op,
            file,
            off,
            len,
            qd: 0,
        };
        Ok(Got::Io)
    }
}

/// What a line was.
enum Got {
    Io,
    Skipped,
    Nothing,
}

/// One line of a capture file: a request, or the header or summary (a `schema` field).
fn capture_line(s: &str, io: &mut TraceIo) -> Result<Got, String> {
    let c: CaptureIo = match serde_json::from_str(s) {
        Ok(c) => c,
        Err(e) => {
            let v: serde_json::Value =
                serde_json::from_str(s).map_err(|_| format!("not JSON: {e}"))?;
            return match v.get("schema") {
                Some(_) => Ok(Got::Nothing),
                None => Err(format!("not a capture's request: {e}")),
            };
        }
    };
    let op = match c.dir {
        IoDir::Read => TraceOp::Read,
        IoDir::Write => TraceOp::Write,
        IoDir::Discard => TraceOp::Trim,
        IoDir::Flush => TraceOp::Flush,
        IoDir::Other => return Ok(Got::Skipped),
    };
    if op != TraceOp::Flush && c.size_bytes == 0 {
        return Err(format!("a {} of 0 bytes", c.dir.name()));
    }
    *io = TraceIo {
        t_ns: c.t_ns,
        op,
        file: 0,
        off: c.offset_bytes,
        len: if op == TraceOp::Flush {
            0
        } else {
            c.size_bytes
        },
        qd: c.qd,
    };
    Ok(Got::Io)
}

/// What a trace holds, read once before a replay (every line checked).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceScan {
    pub format: Option<TraceFormat>,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub flushes: u64,
    pub skipped: u64,
    pub first_ns: u64,
    pub span_ns: u64,
    pub extent_bytes: u64,
    pub max_len_bytes: u64,
    pub max_qd: u32,
    pub files: u32,
    /// The smallest power of two every offset and length is a multiple of (at most 4096).
    pub align_bytes: u64,
}

impl TraceScan {
    pub fn requests(&self) -> u64 {
        self.reads + self.writes + self.trims + self.flushes
    }
}

/// Reads the whole trace once: its counts, span, extent, largest request and queue depth.
pub fn scan(path: &Path) -> Result<TraceScan, String> {
    let mut r = TraceReader::open(path)?;
    let mut s = TraceScan {
        format: Some(r.format),
        align_bytes: 4096,
        ..TraceScan::default()
    };
    let mut io = TraceIo::default();
    let (mut first, mut last) = (None, 0u64);
    while r.next_io(&mut io)? {
        match io.op {
            TraceOp::Read => s.reads += 1,
            TraceOp::Write => s.writes += 1,
            TraceOp::Trim => s.trims += 1,
            TraceOp::Flush => s.flushes += 1,
        }
        first.get_or_insert(io.t_ns);
        last = last.max(io.t_ns);
        if io.op != TraceOp::Flush {
            let end = io.off.checked_add(io.len).ok_or(format!(
                "a request past 2^64 bytes (offset {}, length {})",
                io.off, io.len
            ))?;
            s.extent_bytes = s.extent_bytes.max(end);
            s.max_len_bytes = s.max_len_bytes.max(io.len);
            while s.align_bytes > 1 && (io.off | io.len) % s.align_bytes != 0 {
                s.align_bytes /= 2;
            }
        }
        s.max_qd = s.max_qd.max(io.qd);
    }
    s.skipped = r.skipped;
    s.first_ns = first.unwrap_or(0);
    s.span_ns = last.saturating_sub(s.first_ns);
    s.files = match r.format {
        TraceFormat::IolabCapture => 1,
        TraceFormat::Blktrace => r.devices.len() as u32,
        _ => r.files().len() as u32,
    };
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    fn all(p: &Path) -> Vec<TraceIo> {
        let mut r = TraceReader::open(p).unwrap();
        let mut v = Vec::new();
        let mut io = TraceIo::default();
        while r.next_io(&mut io).unwrap() {
            v.push(io);
        }
        v
    }

    #[test]
    fn a_capture_is_read_request_by_request() {
        let (_d, p) = write(concat!(
            r#"{"schema":"iolab-capture/1","iolab_version":"x","device":"loop0","majmin":"7:0","start":"2026-01-01T00:00:00Z","host":"h","kernel":"k","source":"s"}"#,
            "\n",
            r#"{"t_ns":1000,"dir":"read","offset_bytes":8192,"size_bytes":16384,"lat_ns":5,"qd":1,"pid":1,"comm":"schema"}"#,
            "\n",
            r#"{"t_ns":2000,"dir":"other","offset_bytes":0,"size_bytes":4096,"qd":2,"pid":1,"comm":"k"}"#,
            "\n",
            r#"{"t_ns":3000,"dir":"flush","offset_bytes":0,"size_bytes":0,"flags":["preflush"],"qd":2,"pid":1,"comm":"k"}"#,
            "\n",
            r#"{"t_ns":5000,"dir":"discard","offset_bytes":1048576,"size_bytes":1048576,"qd":3,"pid":1,"comm":"k"}"#,
            "\n",
            r#"{"schema":"iolab-capture-summary/1"}"#,
            "\n"
        ));
        let v = all(&p);
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0],
            TraceIo {
                t_ns: 1000,
                op: TraceOp::Read,
                file: 0,
                off: 8192,
                len: 16384,
                qd: 1
            }
        );
        assert_eq!((v[1].op, v[1].len), (TraceOp::Flush, 0));
        assert_eq!((v[2].op, v[2].qd), (TraceOp::Trim, 3));
        let s = scan(&p).unwrap();
        assert_eq!(
            (s.reads, s.flushes, s.trims, s.skipped, s.span_ns, s.max_qd),
            (1, 1, 1, 1, 4000, 3)
        );
        assert_eq!(
            (s.extent_bytes, s.max_len_bytes, s.align_bytes),
            (2 << 20, 1 << 20, 4096)
        );
        assert_eq!(s.format, Some(TraceFormat::IolabCapture));
    }

    /// fio 3.33's own `write_iolog` lines (version 3) and a version 2 log with waits.
    #[test]
    fn fio_iologs_are_read_as_fio_reads_them() {
        let (_d, p) = write(
            "fio version 3 iolog\n0 /tmp/a add\n0 /tmp/b add\n0 /tmp/a open\n\
             12 /tmp/a write 4096 512\n250 /tmp/b read 0 4096\n300 /tmp/a sync 0 0\n\
             301 /tmp/a wait 5 0\n400 /tmp/b trim 8192 8192\n500 /tmp/a close\n",
        );
        let v = all(&p);
        assert_eq!(v.len(), 4);
        assert_eq!(
            (v[0].t_ns, v[0].op, v[0].off, v[0].len),
            (12_000, TraceOp::Write, 4096, 512)
        );
        assert_eq!((v[1].file, v[1].t_ns), (1, 250_000));
        assert_eq!((v[2].op, v[2].file), (TraceOp::Flush, 0));
        assert_eq!(v[3].op, TraceOp::Trim);
        let s = scan(&p).unwrap();
        assert_eq!((s.files, s.span_ns, s.align_bytes), (2, 388_000, 512));
        let (_d, p) = write(
            "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf wait 20 0\nf write 4096 4096\nf close\n",
        );
        let v = all(&p);
        assert_eq!((v[0].t_ns, v[1].t_ns), (0, 20_000_000));
    }

    /// A blktrace event in the other byte order (a trace made on a big-endian machine): a
    /// queue event of a sync write, a flush with data (the flush, then the write), an issue
    /// event skipped.
    #[test]
    fn blktrace_events_of_either_byte_order_are_read() {
        fn ev(t: u64, sector: u64, bytes: u32, action: u32, be: bool) -> Vec<u8> {
            let mut v = Vec::new();
            let w32 = |v: &mut Vec<u8>, x: u32| {
                v.extend(if be { x.to_be_bytes() } else { x.to_le_bytes() })
            };
            w32(&mut v, 0x6561_7407);
            w32(&mut v, 1);
            v.extend(if be { t.to_be_bytes() } else { t.to_le_bytes() });
            v.extend(if be {
                sector.to_be_bytes()
            } else {
                sector.to_le_bytes()
            });
            w32(&mut v, bytes);
            w32(&mut v, action);
            w32(&mut v, 7); // pid
            w32(&mut v, (8 << 20) | 16); // device 8:16
            w32(&mut v, 0); // cpu
            v.extend([0, 0, 0, 0]); // error, pdu_len
            v
        }
        let q = |cat: u32| 1 | ((16 | cat) << 16);
        for be in [true, false] {
            let mut b = ev(5_000, 8, 4096, q(2 | 8), be);
            b.extend(ev(6_000, 8, 4096, 7 | ((64 | 2) << 16), be));
            b.extend(ev(9_000, 16, 8192, q(2 | 4), be));
            let (_d, p) = write("");
            std::fs::write(&p, &b).unwrap();
            let v = all(&p);
            assert_eq!(v.len(), 3, "big-endian {be}: {v:?}");
            assert_eq!(
                (v[0].op, v[0].off, v[0].len, v[0].t_ns),
                (TraceOp::Write, 4096, 4096, 5000)
            );
            assert_eq!(
                (v[1].op, v[2].op, v[2].off, v[2].len),
                (TraceOp::Flush, TraceOp::Write, 8192, 8192)
            );
            let s = scan(&p).unwrap();
            assert_eq!(
                (s.format, s.files, s.span_ns),
                (Some(TraceFormat::Blktrace), 1, 4000)
            );
        }
    }

    #[test]
    fn bad_traces_name_the_line() {
        for (text, want) in [
            ("", "empty"),
            ("hello\n", "line 1: neither"),
            (
                "fio version 3 iolog\n0 f read 0 4096\n",
                "line 2: file \"f\" was not added",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f read x 4096\n",
                "line 3: the offset \"x\"",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f fly 0 4096\n",
                "line 3: unknown action",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f read 0 0\n",
                "line 3: read needs",
            ),
            ("{\"schema\":\"iolab-run/1\"}\n", "line 1: not a capture"),
        ] {
            let (_d, p) = write(text);
            let e = scan(&p).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
