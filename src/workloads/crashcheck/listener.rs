//! The listener (a thread per connection, at most 64, every line bounded, each journal line
//! fdatasync'd before `OK`) and fetching a run's journal from it or from a journal folder.

use super::*;

fn journal_file(dir: &Path, run: &str) -> PathBuf {
    dir.join(format!("{run}.journal"))
}

/// Connections served at once; more are closed at once with a line (a flood of clients costs
/// bounded threads and memory: at most this many lines of [`cc::MAX_LINE`]).
const MAX_CONNECTIONS: usize = 64;

/// Serves writers (one journal per run) and verifiers until `stop` is set or `wake` sees its
/// signal; between connections it sleeps in poll(2) on the socket and `wake`. `say` hears one line
/// per connection that ends.
pub fn listen(
    l: TcpListener,
    dir: &Path,
    stop: &AtomicBool,
    wake: &SignalWake,
    say: &(dyn Fn(&str) + Sync),
) -> Result<()> {
    l.set_nonblocking(true)
        .map_err(|e| io_err("the listening socket", e))?;
    let busy = AtomicUsize::new(0);
    let busy = &busy;
    std::thread::scope(|s| {
        while !stop.load(Ordering::Relaxed) {
            match l.accept() {
                Ok((c, peer)) => {
                    if busy.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                        say(&format!(
                            "{peer}: {MAX_CONNECTIONS} connections are being served already; connection closed"
                        ));
                        continue;
                    }
                    let _ = c.set_nonblocking(false);
                    busy.fetch_add(1, Ordering::SeqCst);
                    // A connection the listener has no thread for (a thread limit) is refused
                    // (closed), said, and the listener goes on.
                    let started = std::thread::Builder::new().spawn_scoped(s, move || {
                        if let Err(e) = serve(c, dir, stop, say) {
                            say(&format!("{peer}: {e}"));
                        }
                        busy.fetch_sub(1, Ordering::SeqCst);
                    });
                    if let Err(e) = started {
                        busy.fetch_sub(1, Ordering::SeqCst);
                        say(&format!(
                            "{peer}: no thread to serve it ({e}); connection closed"
                        ));
                    }
                }
                // asleep until a connection or the stop's signal (no polling)
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    match wake.wait(Some(l.as_fd()), None) {
                        Ok(Woke::Signal) => stop.store(true, Ordering::Relaxed),
                        Ok(_) => {}
                        Err(e) => {
                            say(&format!("waiting for connections: {e}"));
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
                Err(e) => say(&format!("accept: {e}")),
            }
        }
    });
    Ok(())
}

/// The line a listener drops a connection with when a line is longer than [`cc::MAX_LINE`].
fn too_long() -> String {
    format!(
        "a line longer than {} KiB: connection dropped",
        cc::MAX_LINE / 1024
    )
}

/// One connection: a writer's run (HELLO, then ACK/FAIL/END lines) or a verifier's GET. Ends
/// when the peer closes it, sends its END, or `stop` is set. Every line is bounded
/// ([`cc::MAX_LINE`]) and the first one must come within [`ANSWER_TIMEOUT`]; a line that is not
/// the protocol's ends the connection with one line. The lines' tags are kept as they came:
/// only `verify`, which holds the run's key, can check them.
fn serve(
    c: TcpStream,
    dir: &Path,
    stop: &AtomicBool,
    say: &dyn Fn(&str),
) -> std::result::Result<(), String> {
    let peer = c
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let mut w = c.try_clone().map_err(|e| e.to_string())?;
    let mut r = BufReader::new(c);
    let mut first = Vec::new();
    // a client that says nothing, or trickles, is not waited for forever
    match peer::read_line(
        &mut r,
        &mut first,
        cc::MAX_LINE,
        Some(Instant::now() + ANSWER_TIMEOUT),
    )
    .map_err(|e| e.to_string())?
    {
        Line::Done => {}
        Line::Eof => return Ok(()),
        Line::TooLong => return Err(too_long()),
        Line::Late => {
            return Err(format!(
                "no first line in {} s: connection dropped",
                ANSWER_TIMEOUT.as_secs()
            ));
        }
    }
    let first = String::from_utf8_lossy(&first);
    let first = first.trim_end_matches('\n');
    if let Some(run) = first.strip_prefix("GET ") {
        let reply = match find_journal(dir, run) {
            Ok((_, text)) => {
                let mut v = format!("JOURNAL {}\n", text.len()).into_bytes();
                v.extend_from_slice(text.as_bytes());
                v
            }
            Err(e) => format!("ERR {e}\n").into_bytes(),
        };
        return w.write_all(&reply).map_err(|e| e.to_string());
    }
    let Some(hello) = cc::split_mac(first).and_then(|(t, _)| Hello::parse(t)) else {
        let _ = w.write_all(
            format!(
                "ERR expected HELLO {} ... mac=.. or GET RUN\n",
                crate::model::schema::CRASHCHECK_PROTOCOL
            )
            .as_bytes(),
        );
        return Err(format!(
            "not a crashcheck client of {}: {:?}",
            crate::model::schema::CRASHCHECK_PROTOCOL,
            first.chars().take(80).collect::<String>()
        ));
    };
    let path = journal_file(dir, &hello.run);
    let mut j = OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| {
            let _ = w.write_all(format!("ERR {}: {e}\n", path.display()).as_bytes());
            format!("{}: {e}", path.display())
        })?;
    let durable = |j: &mut File, line: &str| -> std::result::Result<(), String> {
        j.write_all(format!("{line}\n").as_bytes())
            .and_then(|_| j.sync_data())
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    durable(&mut j, first)?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    w.write_all(b"OK\n").map_err(|e| e.to_string())?;
    let (mut acks, mut end) = (0u64, None);
    // wake up now and then to see whether the listener is being stopped
    let _ = r
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(500)));
    let mut line = Vec::new();
    let mut dropped = None;
    while end.is_none() {
        match peer::read_line(&mut r, &mut line, cc::MAX_LINE, None) {
            Ok(Line::Done) => {}
            Ok(Line::TooLong) => {
                dropped = Some(too_long());
                break;
            }
            Ok(_) => break,
            // a partial line stays in `line` and is completed by the next read
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                continue;
            }
            Err(_) => break,
        }
        let l = String::from_utf8_lossy(&std::mem::take(&mut line)).into_owned();
        let l = l.trim_end_matches('\n');
        if !cc::is_report_line(l) {
            let _ = w.write_all(b"ERR expected ACK, FAIL or END with mac=\n");
            dropped = Some(format!(
                "not a report line: {:?}: connection dropped",
                l.chars().take(80).collect::<String>()
            ));
            break;
        }
        if let Err(e) = durable(&mut j, l) {
            let _ = w.write_all(format!("ERR {e}\n").as_bytes());
            return Err(e);
        }
        if l.starts_with("ACK ") {
            acks += 1;
        }
        if l.starts_with("END ") {
            end = Some(());
        }
        if w.write_all(b"OK\n").is_err() {
            break;
        }
    }
    say(&format!(
        "run {} from {} ({peer}): {acks} acknowledged, {}",
        hello.run,
        hello.host,
        match (&dropped, end) {
            (Some(why), _) => why.as_str(),
            (None, Some(_)) => "ended",
            (None, None) => "connection lost without END (killed, crashed or power cut?)",
        }
    ));
    Ok(())
}

/// The journal of run `run` (16 hex digits).
fn find_journal(dir: &Path, run: &str) -> std::result::Result<(PathBuf, String), String> {
    if !cc::is_run_id(run) {
        return Err(format!(
            "{:?} is not a run id (16 hex digits)",
            run.chars().take(40).collect::<String>()
        ));
    }
    let p = journal_file(dir, run);
    std::fs::read_to_string(&p)
        .map(|t| (p, t))
        .map_err(|_| format!("no journal of run {run} here"))
}

/// Reads run `run`'s journal: from a listener (`GET RUN`) or a local file. What a listener
/// sends is read as it arrives (no buffer of the size it announces).
pub fn fetch_journal(at: &JournalAt, run: &str) -> Result<String> {
    match at {
        // a regular file only (not /dev/zero or a FIFO), at most 1 GiB (20 million records)
        JournalAt::File(p) => crate::spec::input::read_text(p, 1 << 30)
            .map_err(|e| Error::usage(format!("--journal {}: {e}", p.display()))),
        JournalAt::Tcp(addr) => {
            let mut c = connect(addr)?;
            let _ = c.set_read_timeout(Some(ANSWER_TIMEOUT));
            c.write_all(format!("GET {run}\n").as_bytes())
                .map_err(|e| io_err(format!("the listener at {addr}"), e))?;
            let mut r = BufReader::new(c);
            let mut head = Vec::new();
            peer::read_line(&mut r, &mut head, cc::MAX_LINE, None)
                .map_err(|e| io_err(format!("the listener at {addr}"), e))?;
            let head = String::from_utf8_lossy(&head);
            let head = head.trim_end();
            if let Some(e) = head.strip_prefix("ERR ") {
                return Err(Error::usage(format!("the listener at {addr}: {e}")));
            }
            let n: u64 = head
                .strip_prefix("JOURNAL ")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    Error::failed(format!("the listener at {addr} answered {head:?}"))
                })?;
            let mut v = Vec::new();
            r.take(n)
                .read_to_end(&mut v)
                .map_err(|e| io_err(format!("the listener at {addr}"), e))?;
            if (v.len() as u64) < n {
                return Err(Error::failed(format!(
                    "the listener at {addr} sent {} of the journal's {n} bytes",
                    v.len()
                )));
            }
            String::from_utf8(v)
                .map_err(|_| Error::failed(format!("the listener at {addr}: a journal not UTF-8")))
        }
    }
}
