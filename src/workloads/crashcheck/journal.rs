//! The journal a writer reports to (a listener over TCP, or a file on another device: [`Sink`])
//! and the run key (made, kept in a 0600 O_EXCL key file, read back).

use super::*;

pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the writer waits for one OK; a listener slower than this is taken as gone.
pub(super) const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The writer's side of a journal: a listener connection or a local journal file, and the run's
/// key that seals every line with its index.
pub struct Sink {
    to: SinkTo,
    key: RunKey,
    /// the index of the next line (0: the HELLO)
    next: u64,
}

enum SinkTo {
    Tcp {
        w: TcpStream,
        r: BufReader<TcpStream>,
    },
    File(File),
}

pub(super) fn connect(addr: &str) -> Result<TcpStream> {
    let addrs: Vec<_> = addr
        .to_socket_addrs()
        .map_err(|e| {
            Error::usage(format!(
                "{addr}: not a HOST:PORT this machine can resolve ({e})"
            ))
        })?
        .collect();
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::usage(format!(
        "the listener at {addr} cannot be reached ({}); start `iolab crashcheck listen --port P` there first. Nothing was written",
        last.map(|e| e.to_string())
            .unwrap_or_else(|| "no address".into())
    )))
}

impl Sink {
    /// Opens the journal and records the run's HELLO there (durably) before anything is
    /// written: an unreachable listener or an unwritable journal is a usage error (exit 2).
    pub fn open(at: &JournalAt, hello: &Hello, key: &RunKey) -> Result<Sink> {
        let to = match at {
            JournalAt::Tcp(addr) => {
                let w = connect(addr)?;
                let _ = w.set_nodelay(true);
                let _ = w.set_read_timeout(Some(ANSWER_TIMEOUT));
                let r = BufReader::new(
                    w.try_clone()
                        .map_err(|e| io_err(format!("the listener at {addr}"), e))?,
                );
                SinkTo::Tcp { w, r }
            }
            JournalAt::File(p) => {
                let f = OpenOptions::new()
                    .append(true)
                    .create_new(true)
                    .open(p)
                    .map_err(|e| {
                        Error::usage(format!(
                            "--journal {}: {e} (a new file is needed per run)",
                            p.display()
                        ))
                    })?;
                if let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                    let _ = File::open(parent).and_then(|d| d.sync_all());
                }
                SinkTo::File(f)
            }
        };
        let mut s = Sink {
            to,
            key: key.clone(),
            next: 0,
        };
        s.send(&hello.line()).map_err(|e| Error::usage(e.msg))?;
        Ok(s)
    }

    /// Sends one line, sealed with the run's key and its index, and returns once it is durable
    /// in the journal (the listener's OK).
    pub fn send(&mut self, text: &str) -> Result<()> {
        let line = self.key.seal(self.next, text) + "\n";
        self.next += 1;
        match &mut self.to {
            SinkTo::File(f) => {
                f.write_all(line.as_bytes())
                    .and_then(|_| f.sync_data())
                    .map_err(|e| io_err("the journal", e))?;
            }
            SinkTo::Tcp { w, r } => {
                w.write_all(line.as_bytes())
                    .map_err(|e| io_err("the listener", e))?;
                let mut ans = Vec::new();
                match peer::read_line(r, &mut ans, 4096, None) {
                    Ok(Line::Done) => {}
                    Ok(Line::Eof) => {
                        return Err(Error::failed("the listener closed the connection"));
                    }
                    Ok(_) => return Err(Error::failed("the listener answered a line too long")),
                    Err(e) => return Err(io_err("the listener", e)),
                }
                let ans = String::from_utf8_lossy(&ans);
                if ans.trim_end() != "OK" {
                    return Err(Error::failed(format!(
                        "the listener answered {:?}",
                        ans.trim_end()
                    )));
                }
            }
        }
        Ok(())
    }
}

/// A new run key: 32 bytes from the operating system's random source (through `rand`'s
/// thread generator, ChaCha reseeded from getrandom), under a random run id.
pub fn new_run_key() -> RunKey {
    RunKey {
        run: format!("{:016x}", new_run_id()),
        key: rand::random(),
    }
}

/// Keeps a run's key in `path`: a new file (O_EXCL, never through a symlink), mode 0600, synced
/// with its directory, before anything is written.
pub fn save_key(path: &Path, key: &RunKey, data_file: &str) -> Result<()> {
    let what = |e: std::io::Error| {
        Error::usage(format!(
            "--key-file {}: {e} (a new file is made per run)",
            path.display()
        ))
    };
    let parent = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(what)?;
    f.write_all(key.file_line(data_file).as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(what)?;
    File::open(parent)
        .and_then(|d| d.sync_all())
        .map_err(what)?;
    Ok(())
}

/// Reads a key file `save_key` wrote: the key and the data file it was made for.
pub fn load_key(path: &Path) -> Result<(RunKey, String)> {
    let bad = |why: String| Error::usage(format!("--key-file {}: {why}", path.display()));
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| bad(e.to_string()))?;
    let m = f.metadata().map_err(|e| bad(e.to_string()))?;
    // SAFETY: geteuid has no failure mode.
    let me = unsafe { libc::geteuid() };
    if !m.is_file() || m.uid() != me || m.mode() & 0o077 != 0 {
        return Err(bad(format!(
            "a key file is a regular file of uid {me} that only it can read (mode 0600)"
        )));
    }
    let mut text = String::new();
    f.take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|e| bad(e.to_string()))?;
    RunKey::parse_file(&text).ok_or_else(|| {
        Error::usage(format!(
            "--key-file {}: not a crashcheck key file (KEY {} run=.. key=.. file=..)",
            path.display(),
            crate::model::schema::CRASHCHECK_PROTOCOL
        ))
    })
}
