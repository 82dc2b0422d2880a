//! Reading from a network peer that may be hostile: one line of at most a given length, within
//! a deadline, so that a client that sends an endless line, or nothing, costs a bounded buffer
//! and a bounded time (the crashcheck listener, the side channel's handshake).

use std::io::{self, BufRead, BufReader};
use std::net::TcpStream;
use std::time::Instant;

/// What [`read_line`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A whole line is in the buffer (its `\n` included).
    Done,
    /// The peer closed the connection (a partial line may be in the buffer).
    Eof,
    /// The line is longer than allowed: nothing past the limit was read into the buffer.
    TooLong,
    /// The deadline passed before the line ended.
    Late,
}

/// Appends to `buf` up to and including the next `\n`, never holding more than `max` bytes
/// there, and gives up at `deadline`. Without a deadline the stream's own read timeout applies:
/// its `WouldBlock`/`TimedOut` error is returned and the partial line stays in `buf` for the next
/// call.
pub fn read_line(
    r: &mut BufReader<TcpStream>,
    buf: &mut Vec<u8>,
    max: usize,
    deadline: Option<Instant>,
) -> io::Result<Line> {
    loop {
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Line::Late);
            }
            r.get_ref().set_read_timeout(Some(left))?;
        }
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if deadline.is_some()
                    && matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
            {
                continue; // the loop decides with the clock
            }
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(Line::Eof);
        }
        let (take, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        if buf.len() + take > max {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(&avail[..take]);
        r.consume(take);
        if done {
            return Ok(Line::Done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Duration;

    fn pair() -> (TcpStream, BufReader<TcpStream>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, BufReader::new(s))
    }

    #[test]
    fn lines_are_bounded_and_a_silent_peer_is_given_up() {
        let (mut c, mut r) = pair();
        c.write_all(b"hello\nworld").unwrap();
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 64, None).unwrap(), Line::Done);
        assert_eq!(buf, b"hello\n");
        buf.clear();
        // "world" and then nothing: the deadline ends it, the partial line kept
        let soon = Instant::now() + Duration::from_millis(50);
        assert_eq!(
            read_line(&mut r, &mut buf, 64, Some(soon)).unwrap(),
            Line::Late
        );
        assert_eq!(buf, b"world");
        c.write_all(&[b'x'; 100]).unwrap();
        assert_eq!(
            read_line(&mut r, &mut buf, 64, None).unwrap(),
            Line::TooLong
        );
        assert!(buf.len() <= 64);
        // a peer that closes: the end
        drop(c);
        let (c2, mut r2) = pair();
        drop(c2);
        let mut rest = Vec::new();
        assert_eq!(read_line(&mut r2, &mut rest, 64, None).unwrap(), Line::Eof);
    }
}
