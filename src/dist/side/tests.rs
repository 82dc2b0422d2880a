//! The side channel's tests: real TCP connections on this host between a rank 0 and its ranks
//! (and strangers).

use super::watchdog::{end_early, judge, outcomes};
use super::*;
use crate::model::auth;
use std::net::SocketAddr;

fn pair(n: u32) -> (Arc<Link>, Vec<Arc<Link>>) {
    let (l, addrs) = listen().unwrap();
    let zero = serve(l, n, "h0", &addrs).unwrap();
    let others: Vec<Arc<Link>> = (1..n)
        .map(|r| connect(&addrs, r, &format!("h{r}")).unwrap())
        .collect();
    assert!(wait_hellos(&zero, CONNECT).is_empty());
    (zero, others)
}

/// Rank 0's side-channel address in `info` (the loopback one).
fn port_of(info: &str) -> SocketAddr {
    info.split_once(';')
        .unwrap()
        .1
        .split(',')
        .filter_map(|a| a.parse::<SocketAddr>().ok())
        .find(|a| a.ip().is_loopback())
        .unwrap()
}

/// Reads until rank 0 closes the connection: true when it did (EOF or reset) before the
/// test's own limit, far above rank 0's handshake time.
fn closed_by_rank_0(mut c: TcpStream) -> bool {
    use std::io::Read;
    c.set_read_timeout(Some(HELLO_TIME * 6)).unwrap();
    let mut b = [0u8; 256];
    loop {
        match c.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// Connections to rank 0's port that are not ranks of this run: garbage, an endless line,
/// nothing at all, a hello without the token, a replayed hello of a rank already there. Each
/// is dropped (rank 0 reads at most [`HELLO_MAX`] of it, waits at most [`HELLO_TIME`]), none
/// counts as a rank or changes one, and the real rank still joins.
#[test]
fn strangers_on_rank_0s_port_are_dropped_and_change_nothing() {
    let (l, info) = listen().unwrap();
    let zero = serve(l, 3, "h0", &info).unwrap();
    let m = zero.monitor.clone().unwrap();
    let at = port_of(&info);
    // garbage, then a valid-looking hello after it: dropped at the first line
    let mut g = TcpStream::connect(at).unwrap();
    g.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    assert!(closed_by_rank_0(g), "garbage was not dropped");
    // an endless line: rank 0 stops reading after HELLO_MAX bytes and closes
    let mut huge = TcpStream::connect(at).unwrap();
    huge.set_write_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut sent = 0usize;
    while sent < 256 << 20 {
        match huge.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    assert!(
        sent < 256 << 20,
        "rank 0 took {sent} bytes of a line that never ends"
    );
    // nothing at all: closed after the handshake time, while a real rank joins meanwhile
    let silent = TcpStream::connect(at).unwrap();
    // a hello with a made-up proof
    let forged = serde_json::to_vec(&Up::Hello {
        rank: 1,
        host: "evil".into(),
        nonce: "00".into(),
        proof: "11".repeat(32),
    })
    .unwrap();
    let mut f = TcpStream::connect(at).unwrap();
    f.write_all(&forged).unwrap();
    f.write_all(b"\n").unwrap();
    assert!(closed_by_rank_0(f), "a forged hello was not dropped");
    assert!(!lock(&m.ranks)[1].hello, "a forged hello counted");
    let one = connect(&info, 1, "h1").unwrap();
    let two = connect(&info, 2, "h2").unwrap();
    assert!(wait_hellos(&zero, CONNECT).is_empty());
    assert_eq!(lock(&m.ranks)[1].host, "h1");
    // a second hello of rank 1 (a replay, or another process with the token) is dropped
    let (token, _) = info.split_once(';').unwrap();
    let nonce = "ab".to_string();
    let proof = auth::tag_hex(token.as_bytes(), &refs(&hello_parts(1, "h1", &nonce)));
    let mut again = TcpStream::connect(at).unwrap();
    let mut line = serde_json::to_vec(&Up::Hello {
        rank: 1,
        host: "h1".into(),
        nonce,
        proof,
    })
    .unwrap();
    line.push(b'\n');
    again.write_all(&line).unwrap();
    assert!(closed_by_rank_0(again), "a second hello was not dropped");
    assert!(closed_by_rank_0(silent), "a silent connection was kept");
    m.armed.store(true, Ordering::SeqCst);
    assert!(judge(&m).is_none(), "a stranger changed a rank");
    drop((one, two));
}

#[test]
fn a_rank_skips_an_address_where_another_runs_rank_0_listens() {
    let (la, info_a) = listen().unwrap();
    let (lb, info_b) = listen().unwrap();
    let a = serve(la, 2, "a0", &info_a).unwrap();
    let b = serve(lb, 2, "b0", &info_b).unwrap();
    // run B's token, run A's address first
    let (token_b, addrs_b) = info_b.split_once(';').unwrap();
    let addr_a = info_a.split_once(';').unwrap().1.split(',').next().unwrap();
    let link = connect(&format!("{token_b};{addr_a},{addrs_b}"), 1, "h1").unwrap();
    assert!(
        wait_hellos(&b, CONNECT).is_empty(),
        "run B's rank 0 got the hello"
    );
    assert_eq!(wait_hellos(&a, Duration::from_millis(200)), vec![1]);
    drop(link);
}

#[test]
fn a_closed_connection_without_goodbye_is_a_fault_naming_the_rank_and_host() {
    let (zero, others) = pair(3);
    let m = zero.monitor.clone().unwrap();
    m.armed.store(true, Ordering::SeqCst);
    assert!(judge(&m).is_none());
    others[0].bye();
    // rank 1 said goodbye: its closing is normal; rank 2 just closes (as when killed)
    for l in &others {
        let s = lock(l.up.as_ref().unwrap());
        s.shutdown(std::net::Shutdown::Both).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let f = loop {
        if let Some(f) = judge(&m) {
            break f;
        }
        assert!(Instant::now() < deadline, "no fault seen");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!((f.rank, f.host.as_str()), (2, "h2"));
    assert!(f.reason.starts_with("killed or exited"), "{}", f.reason);
}

#[test]
fn silence_and_stalled_io_are_faults_after_the_timeout() {
    let (zero, others) = pair(2);
    let m = zero.monitor.clone().unwrap();
    zero.set_timeout(Duration::from_millis(1));
    // a rank whose last beat is older than the timeout
    lock(&m.ranks)[1].beat_at = Instant::now() - Duration::from_secs(1);
    let f = judge(&m).unwrap();
    assert_eq!(f.rank, 1);
    assert!(f.reason.starts_with("no heartbeat"), "{}", f.reason);
    // rank 0 measuring with counters that do not grow
    m.beat(1, WAITING, 0);
    zero.measuring(vec![Arc::new(LiveCounters::default())]);
    lock(&m.ranks)[0].ops_at = Instant::now() - Duration::from_secs(1);
    let f = judge(&m).unwrap();
    assert_eq!(f.rank, 0);
    assert!(f.reason.starts_with("no I/O completed"), "{}", f.reason);
    drop(others);
}

/// A run document as a rank sends it (the report fixture's).
fn so_far() -> SoFar {
    let v: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/fixtures/report/run.json")).unwrap();
    SoFar::Run(Box::new(Done {
        doc: crate::model::run::RunDoc::from_json(&v).unwrap(),
        hists: Vec::new(),
        windows: Vec::new(),
    }))
}

#[test]
fn a_document_of_an_earlier_experiment_point_is_never_taken() {
    let (zero, others) = pair(3);
    let m = zero.monitor.clone().unwrap();
    let fault = Fault {
        rank: 2,
        host: "h2".into(),
        reason: "test".into(),
    };
    let sent = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while lock(&m.ranks)[1].done.is_none() {
            assert!(Instant::now() < deadline, "progress {n} did not arrive");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    // point 1: rank 1 measured and sent its document
    for l in [&zero, &others[0], &others[1]] {
        l.arm();
    }
    others[0].progress(so_far());
    sent(1);
    // point 2: a rank fails before rank 1 sent anything of it
    for l in [&zero, &others[0], &others[1]] {
        l.arm();
    }
    let out = outcomes(&m, &fault, zero.epoch(), Some);
    let r1 = out[1]
        .result
        .as_ref()
        .err()
        .expect("not point 1's document");
    assert!(r1.only_stopped(), "{}", r1.msg);
    assert_eq!(out[2].result.as_ref().err().unwrap().msg, "test");
    // rank 1's document of point 2 is taken
    others[0].progress(so_far());
    sent(2);
    let out = outcomes(&m, &fault, zero.epoch(), Some);
    assert!(out[1].result.is_ok());
}

#[test]
fn a_stop_from_rank_0_sets_each_ranks_stop_flag() {
    let (zero, others) = pair(2);
    let flag = Arc::new(AtomicBool::new(false));
    others[0].watch_stop(Arc::clone(&flag));
    let m = zero.monitor.clone().unwrap();
    others[0].set_phase(PARKED);
    let code = end_early(
        &zero,
        &m,
        Fault {
            rank: 1,
            host: "h1".into(),
            reason: "test".into(),
        },
    );
    assert_eq!(code, crate::error::Exit::Failed as i32);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !flag.load(Ordering::Relaxed) {
        assert!(Instant::now() < deadline, "the stop did not arrive");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(others[0].aborted() && zero.aborted());
}
