//! A rank other than 0: its connection to rank 0 (the hello, rank 0's welcome checked), its
//! heartbeat thread and the thread that waits for rank 0's stop or notices rank 0's silence.

use super::{
    BEAT, CONNECT, DEFAULT_TIMEOUT, Link, STOP, Up, WORKING, hello_parts, refs, welcome_parts,
};
use crate::measure::peer::{self, Line};
use crate::model::auth;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One line from `s`, read byte by byte (nothing after it is consumed), within its read timeout.
fn read_line_exact(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 128 {
        if s.read(&mut b)? == 0 {
            break;
        }
        line.push(b[0]);
        if b[0] == b'\n' {
            break;
        }
    }
    Ok(line)
}

/// A rank other than 0: connects to the first of rank 0's addresses where rank 0 of this run
/// answers its hello; its heartbeat and stop threads start. Err says which addresses were tried.
pub fn connect(info: &str, rank: u32, host: &str) -> Result<Arc<Link>, String> {
    let deadline = Instant::now() + CONNECT;
    let (token, addrs) = info.split_once(';').unwrap_or(("", info));
    let list: Vec<SocketAddr> = addrs.split(',').filter_map(|a| a.parse().ok()).collect();
    let mut last = String::from("no address");
    let nonce = auth::hex(&rand::random::<[u8; 16]>());
    let hello = {
        let proof = auth::tag_hex(token.as_bytes(), &refs(&hello_parts(rank, host, &nonce)));
        let mut h = serde_json::to_vec(&Up::Hello {
            rank,
            host: host.to_string(),
            nonce: nonce.clone(),
            proof,
        })
        .expect("serializable");
        h.push(b'\n');
        h
    };
    // rank 0's welcome: `welcome TAG`, the token's HMAC over this rank and nonce
    let welcomed = |answer: &[u8]| {
        std::str::from_utf8(answer)
            .ok()
            .and_then(|a| a.strip_prefix("welcome "))
            .and_then(|a| a.strip_suffix('\n'))
            .is_some_and(|tag| {
                auth::tag_ok(token.as_bytes(), &refs(&welcome_parts(rank, &nonce)), tag)
            })
    };
    let stream = 'found: loop {
        for a in &list {
            let tried = TcpStream::connect_timeout(a, Duration::from_secs(2)).and_then(|mut s| {
                s.set_read_timeout(Some(Duration::from_secs(2)))?;
                s.write_all(&hello)?;
                let answer = read_line_exact(&mut s)?;
                s.set_read_timeout(None)?;
                Ok((s, answer))
            });
            match tried {
                Ok((s, answer)) if welcomed(&answer) => break 'found s,
                Ok(_) => last = format!("{a}: not this run's rank 0"),
                Err(e) => last = format!("{a}: {e}"),
            }
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "cannot reach rank 0's side channel at {addrs} ({last})"
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = stream.set_nodelay(true);
    let reader = stream.try_clone().map_err(|e| e.to_string())?;
    let link = Arc::new(Link {
        phase: AtomicU8::new(WORKING),
        live: Mutex::new(Vec::new()),
        aborted: AtomicBool::new(false),
        stop: Mutex::new(None),
        up: Some(Mutex::new(stream)),
        monitor: None,
        timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
        done: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
    });
    // The threads hold the link weakly: once its owner drops it (the run is over, or a test's
    // rank), they end instead of beating, or ending the process, for a rank that is gone.
    let w = Arc::downgrade(&link);
    std::thread::Builder::new()
        .name("iolab-beat".into())
        .spawn(move || {
            loop {
                std::thread::sleep(BEAT);
                let Some(l) = w.upgrade() else { return };
                l.beat();
            }
        })
        .map_err(|e| e.to_string())?;
    let w = Arc::downgrade(&link);
    let host = host.to_string();
    let _ = reader.set_read_timeout(Some(BEAT));
    std::thread::Builder::new()
        .name("iolab-stop".into())
        .spawn(move || {
            let mut r = BufReader::new(reader);
            let mut line = Vec::new();
            let mut heard = Instant::now();
            loop {
                // rank 0 sends only `beat` and `stop`
                let Some(l) = w.upgrade() else { return };
                match peer::read_line(&mut r, &mut line, 64, None) {
                    // rank 0's end: the launcher ends this rank
                    Ok(Line::Eof | Line::TooLong | Line::Late) => return,
                    Ok(Line::Done) => {
                        heard = Instant::now();
                        if line == STOP.as_bytes() {
                            l.abort_here();
                        }
                        line.clear();
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => return,
                }
                let t = l.timeout();
                if heard.elapsed() > t && !l.done.load(Ordering::SeqCst) && !l.aborted() {
                    // Rank 0 is stopped or hung: nobody would end this rank. It ends, and the
                    // launcher ends the others.
                    eprintln!(
                        "iolab: error: rank {rank} on {host}: rank 0 sent no heartbeat for {} s (stopped or hung): ending the run",
                        t.as_secs_f64()
                    );
                    std::process::exit(crate::error::Exit::Failed as i32);
                }
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(link)
}
