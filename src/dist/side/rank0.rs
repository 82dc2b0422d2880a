//! Rank 0's end of the side channel: the listener, each connection's handshake (bounded,
//! authenticated before anything else is read or kept; strangers dropped with one line) and
//! each rank's lines kept in the [`Monitor`].

use super::{
    DEFAULT_TIMEOUT, HELLO_MAX, HELLO_TIME, Link, MAX_HANDSHAKES, Monitor, Seen, Up, WORKING,
    hello_parts, lock, refs, welcome_parts,
};
use crate::measure::peer::{self, Line};
use crate::model::auth;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// This host's IPv4 addresses, loopback last (a rank on another host reaches one of the
/// others; the loopback serves ranks on this host).
fn local_addrs() -> Vec<std::net::Ipv4Addr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed by freeifaddrs below; every node is
    // read while the list lives.
    unsafe {
        if libc::getifaddrs(&mut head) == 0 {
            let mut p = head;
            while !p.is_null() {
                let a = (*p).ifa_addr;
                if !a.is_null() && (*a).sa_family as i32 == libc::AF_INET {
                    let sin = &*(a as *const libc::sockaddr_in);
                    out.push(std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)));
                }
                p = (*p).ifa_next;
            }
            libc::freeifaddrs(head);
        }
    }
    out.sort_by_key(|a| a.is_loopback());
    out.dedup();
    if out.is_empty() {
        out.push(std::net::Ipv4Addr::LOCALHOST);
    }
    out
}

/// Rank 0: listens on every address (a port the system picks); returns the listener and what
/// to tell the other ranks: a token of this run and the addresses
/// (`TOKEN;ip:port,ip:port,...`).
pub fn listen() -> std::io::Result<(TcpListener, String)> {
    let l = TcpListener::bind("0.0.0.0:0")?;
    let port = l.local_addr()?.port();
    let addrs = local_addrs()
        .iter()
        .map(|a| format!("{a}:{port}"))
        .collect::<Vec<_>>()
        .join(",");
    let token: [u8; auth::KEY_BYTES] = rand::random();
    Ok((l, format!("{};{addrs}", auth::hex(&token))))
}

/// Rank 0: accepts the other ranks' connections and keeps what they say. The watchdog starts
/// with [`start_watchdog`], once every rank said hello.
pub fn serve(l: TcpListener, n: u32, host: &str, info: &str) -> std::io::Result<Arc<Link>> {
    let token = info.split_once(';').map_or("", |t| t.0).to_string();
    let now = Instant::now();
    let ranks = (0..n)
        .map(|r| Seen {
            host: if r == 0 { host.to_string() } else { "?".into() },
            hello: r == 0,
            phase: WORKING,
            ops: 0,
            ops_at: now,
            beat_at: now,
            done: None,
            closed: false,
            bye: false,
            conn: None,
        })
        .collect();
    let monitor = Arc::new(Monitor {
        ranks: Mutex::new(ranks),
        closed: std::sync::Condvar::new(),
        timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
        armed: AtomicBool::new(false),
        on_fault: Mutex::new(None),
    });
    let m = Arc::clone(&monitor);
    std::thread::Builder::new()
        .name("iolab-accept".into())
        .spawn(move || {
            // every connection is read: one that is not a rank of this run ends at its first
            // line (bounded in size and time), dropped with one line
            let handshakes = Arc::new(AtomicUsize::new(0));
            while let Ok((s, peer)) = l.accept() {
                if handshakes.load(Ordering::SeqCst) >= MAX_HANDSHAKES {
                    dropped(&peer, "too many connections saying hello at once");
                    continue;
                }
                handshakes.fetch_add(1, Ordering::SeqCst);
                let (m, token, h) = (Arc::clone(&m), token.clone(), Arc::clone(&handshakes));
                let started = std::thread::Builder::new()
                    .name("iolab-rank".into())
                    .spawn(move || read_rank(s, &m, &token, &h));
                if started.is_err() {
                    handshakes.fetch_sub(1, Ordering::SeqCst);
                }
            }
        })?;
    Ok(Arc::new(Link {
        phase: AtomicU8::new(WORKING),
        live: Mutex::new(Vec::new()),
        aborted: AtomicBool::new(false),
        stop: Mutex::new(None),
        up: None,
        monitor: Some(monitor),
        timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
        done: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
    }))
}

/// Rank 0's one line about a connection it drops (not a rank of this run): it changes nothing.
fn dropped(peer: &SocketAddr, why: &str) {
    eprintln!("iolab: warning: side channel: {peer}: {why}; connection dropped");
}

/// Rank 0: a connection's hello, read and checked before anything else of it is read or kept:
/// one line of at most [`HELLO_MAX`] bytes within [`HELLO_TIME`], its proof checked in constant
/// time, a rank of this run that has not said hello yet. Err: why it is dropped.
fn handshake(
    r: &mut BufReader<TcpStream>,
    m: &Monitor,
    token: &str,
) -> Result<(usize, String, String), String> {
    let mut line = Vec::new();
    match peer::read_line(r, &mut line, HELLO_MAX, Some(Instant::now() + HELLO_TIME)) {
        Ok(Line::Done) => {}
        Ok(Line::Eof) => return Err("closed before its hello".into()),
        Ok(Line::TooLong) => return Err(format!("a first line over {HELLO_MAX} bytes")),
        Ok(Line::Late) => {
            return Err(format!("no hello in {} s", HELLO_TIME.as_secs()));
        }
        Err(e) => return Err(e.to_string()),
    }
    let Ok(Up::Hello {
        rank,
        host,
        nonce,
        proof,
    }) = serde_json::from_slice::<Up>(&line)
    else {
        return Err("not a hello".into());
    };
    if !auth::tag_ok(
        token.as_bytes(),
        &refs(&hello_parts(rank, &host, &nonce)),
        &proof,
    ) {
        return Err("a hello without this run's token".into());
    }
    let n = lock(&m.ranks).len();
    if rank as usize >= n || rank == 0 {
        return Err(format!("a hello of rank {rank}, not one of ranks 1..{n}"));
    }
    if lock(&m.ranks)[rank as usize].hello {
        return Err(format!("a second hello of rank {rank}"));
    }
    Ok((rank as usize, host, nonce))
}

/// Rank 0: one connection: its hello ([`handshake`]), then the rank's lines until it closes.
fn read_rank(s: TcpStream, m: &Monitor, token: &str, handshakes: &AtomicUsize) {
    let peer = s
        .peer_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let writer = s.try_clone().ok();
    let mut r = BufReader::new(s);
    let hello = handshake(&mut r, m, token);
    handshakes.fetch_sub(1, Ordering::SeqCst);
    let (who, host, nonce) = match hello {
        Ok(h) => h,
        Err(why) => return dropped(&peer, &why),
    };
    let _ = r.get_ref().set_read_timeout(None);
    {
        let mut all = lock(&m.ranks);
        let Some(seen) = all.get_mut(who).filter(|s| !s.hello) else {
            drop(all);
            return dropped(&peer, &format!("a second hello of rank {who}"));
        };
        if let Some(mut w) = writer.as_ref().and_then(|w| w.try_clone().ok()) {
            let tag = auth::tag_hex(token.as_bytes(), &refs(&welcome_parts(who as u32, &nonce)));
            let _ = w.write_all(format!("welcome {tag}\n").as_bytes());
        }
        seen.host = host;
        seen.hello = true;
        seen.beat_at = Instant::now();
        seen.ops_at = Instant::now();
        seen.conn = writer.as_ref().and_then(|w| w.try_clone().ok());
        if let Some(c) = &seen.conn {
            // a stopped rank's full buffer never blocks rank 0
            let _ = c.set_write_timeout(Some(Duration::from_millis(200)));
        }
    }
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(msg) = serde_json::from_slice::<Up>(&line) else {
            continue;
        };
        match msg {
            Up::Hello { .. } => {}
            Up::Beat { phase, ops } => m.beat(who, phase, ops),
            Up::Progress(epoch, d) => lock(&m.ranks)[who].done = Some((epoch, d)),
            Up::Bye => lock(&m.ranks)[who].bye = true,
        }
    }
    lock(&m.ranks)[who].closed = true;
    m.closed.notify_all();
}

/// Rank 0: waits until every rank said hello (at most `wait`); the ranks that did not.
pub fn wait_hellos(link: &Link, wait: Duration) -> Vec<u32> {
    let Some(m) = &link.monitor else {
        return Vec::new();
    };
    let deadline = Instant::now() + wait;
    loop {
        let missing: Vec<u32> = lock(&m.ranks)
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.hello)
            .map(|(r, _)| r as u32)
            .collect();
        if missing.is_empty() || Instant::now() >= deadline {
            return missing;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
