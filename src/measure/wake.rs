//! Sleeping until a deadline or an event, without polling: [`StopSignal`] (a flag another
//! thread sets, on a condition variable) and [`SignalWake`] (a descriptor SIGINT/SIGTERM make
//! readable, for a thread that sleeps in poll(2) beside other descriptors).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// A stop flag a sleeping thread waits on: [`StopSignal::set`] wakes every waiter at once,
/// so a thread that only has to notice the end sleeps to its next deadline, costing no CPU.
#[derive(Debug, Default)]
pub struct StopSignal {
    set: Mutex<bool>,
    cv: Condvar,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag and wakes every waiter.
    pub fn set(&self) {
        *self.set.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.cv.notify_all();
    }

    pub fn is_set(&self) -> bool {
        *self.set.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleeps until `deadline` or until the flag is set, whichever comes first; returns
    /// whether it is set.
    pub fn wait_until(&self, deadline: Instant) -> bool {
        let mut g = self.set.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *g {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            g = self
                .cv
                .wait_timeout(g, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// What [`SignalWake::wait`] woke for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// One of the registered signals arrived (now or earlier).
    Signal,
    /// The other descriptor is readable (a listening socket: a connection waits).
    Ready,
    /// The deadline passed.
    Deadline,
}

/// A self-pipe the signal handler writes to: [`SignalWake::wait`] sleeps in poll(2) until a
/// signal, a deadline or another descriptor, so a waiting thread costs no CPU and still ends at
/// once on Ctrl-C. Registered beside (after) the handlers that set the stop flag, so the flag is
/// already set when the wait returns [`Woke::Signal`].
#[derive(Debug)]
pub struct SignalWake {
    rx: UnixStream,
}

impl SignalWake {
    /// Registers the pipe for `signals` (for the life of the process).
    pub fn register(signals: &[i32]) -> io::Result<Self> {
        let (rx, tx) = UnixStream::pair()?;
        rx.set_nonblocking(true)?;
        tx.set_nonblocking(true)?;
        for &sig in signals {
            signal_hook::low_level::pipe::register(sig, tx.try_clone()?)?;
        }
        Ok(Self { rx })
    }

    /// A wake that a write to the other end of `rx` sets off (tests).
    pub fn from_stream(rx: UnixStream) -> io::Result<Self> {
        rx.set_nonblocking(true)?;
        Ok(Self { rx })
    }

    /// Whether a signal arrived (the pipe holds a byte); does not wait and consumes nothing.
    pub fn signalled(&self) -> bool {
        matches!(self.poll(None, Some(0)), Ok(Woke::Signal))
    }

    /// Sleeps until a signal arrives (also one that arrived before the call), `other` is
    /// readable, or `deadline` (None: no deadline) passes. A signal wins over the others.
    pub fn wait(
        &self,
        other: Option<BorrowedFd<'_>>,
        deadline: Option<Instant>,
    ) -> io::Result<Woke> {
        loop {
            let timeout_ms = match deadline {
                None => -1,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        // one look without sleeping: a signal or a ready descriptor still wins
                        return Ok(match self.poll(other, Some(0))? {
                            Woke::Deadline => Woke::Deadline,
                            w => w,
                        });
                    }
                    // rounded up: a wake before the deadline would only sleep again
                    (d - now).as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
                }
            };
            match self.poll(other, Some(timeout_ms)) {
                Ok(Woke::Deadline) => continue, // the loop decides with the clock
                Ok(w) => return Ok(w),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn poll(&self, other: Option<BorrowedFd<'_>>, timeout_ms: Option<i32>) -> io::Result<Woke> {
        let mut fds = [
            libc::pollfd {
                fd: self.rx.as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: other.map_or(-1, |f| f.as_raw_fd()),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a valid array of two pollfd; a negative fd is ignored by poll(2).
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms.unwrap_or(-1)) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(if fds[0].revents != 0 {
            Woke::Signal
        } else if fds[1].revents != 0 {
            Woke::Ready
        } else {
            Woke::Deadline
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Duration;

    // No test here depends on how fast anything runs: the deadlines that must not be waited for
    // are a year away, and a wrong wait would hang the test, never pass it.
    const YEAR: Duration = Duration::from_secs(365 * 86_400);

    #[test]
    fn stop_signal_set_before_or_during_a_wait_ends_it() {
        let s = StopSignal::new();
        // a deadline in the past: false at once, without the flag
        assert!(!s.wait_until(Instant::now()));
        assert!(!s.is_set());
        // set by another thread while this one waits for a year away
        std::thread::scope(|sc| {
            let h = sc.spawn(|| s.wait_until(Instant::now() + YEAR));
            s.set();
            assert!(h.join().unwrap());
        });
        // and a wait that begins after the set returns at once
        assert!(s.wait_until(Instant::now() + YEAR));
    }

    #[test]
    fn signal_wake_tells_a_signal_from_a_ready_descriptor_and_a_deadline() {
        let (rx, mut tx) = UnixStream::pair().unwrap();
        let w = SignalWake::from_stream(rx).unwrap();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(!w.signalled());
        // nothing pending and a deadline already passed
        assert_eq!(
            w.wait(Some(l.as_fd()), Some(Instant::now())).unwrap(),
            Woke::Deadline
        );
        // a connection waiting on the listener
        let _c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert_eq!(
            w.wait(Some(l.as_fd()), Some(Instant::now() + YEAR))
                .unwrap(),
            Woke::Ready
        );
        // a "signal" (the handler's byte) wins over the ready listener, also with no deadline
        tx.write_all(&[1]).unwrap();
        assert!(w.signalled());
        assert_eq!(w.wait(Some(l.as_fd()), None).unwrap(), Woke::Signal);
        assert_eq!(
            w.wait(None, Some(Instant::now() + YEAR)).unwrap(),
            Woke::Signal
        );
    }
}
