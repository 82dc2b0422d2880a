use super::*;

fn ev(ts: u64, kind: EvKind, sector: u64, nr: u32, rwbs: &str) -> BlockEvent {
    BlockEvent {
        ts_ns: ts,
        kind,
        dev: 7 << 20,
        sector,
        nr_sector: nr,
        bytes: nr * 512,
        rwbs: rwbs.into(),
        pid: 42,
        comm: "fio".into(),
    }
}

#[test]
fn rwbs_as_the_kernel_writes_it() {
    let f = |s: &str| {
        let (d, f) = parse_rwbs(s);
        (d, f.join(","))
    };
    assert_eq!(f("R"), (IoDir::Read, "".into()));
    assert_eq!(f("RA"), (IoDir::Read, "readahead".into()));
    assert_eq!(f("WS"), (IoDir::Write, "sync".into()));
    assert_eq!(f("FWFSM"), (IoDir::Write, "preflush,fua,sync,meta".into()));
    assert_eq!(f("WFS"), (IoDir::Write, "fua,sync".into()));
    assert_eq!(f("FF"), (IoDir::Flush, "preflush".into()));
    assert_eq!(f("F"), (IoDir::Flush, "".into()));
    assert_eq!(f("FS"), (IoDir::Flush, "sync".into()));
    assert_eq!(f("D"), (IoDir::Discard, "".into()));
    assert_eq!(f("DE"), (IoDir::Other, "".into()));
    assert_eq!(f("N"), (IoDir::Other, "".into()));
    assert_eq!(f(""), (IoDir::Other, "".into()));
}

/// Records leave in issue order with their latency and the depth at issue; a completion of a
/// request issued before the start is counted in the window, not recorded.
#[test]
fn issue_order_latency_depth_and_window() {
    let mut t = Tracker::new(1000, None);
    let mut out = Vec::new();
    t.event(&ev(900, EvKind::Issue, 8, 8, "R")); // before the start
    t.event(&ev(1100, EvKind::Issue, 16, 32, "WS"));
    t.event(&ev(1200, EvKind::Issue, 64, 8, "R"));
    t.event(&ev(1250, EvKind::Complete(0), 8, 8, "R"));
    t.event(&ev(1300, EvKind::Complete(0), 64, 8, "R"));
    t.ready(&mut out);
    assert!(out.is_empty(), "the write issued first is not done");
    t.event(&ev(1500, EvKind::Complete(-5), 16, 32, "WS"));
    t.ready(&mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(
        (
            out[0].t_ns,
            out[0].dir,
            out[0].offset_bytes,
            out[0].size_bytes
        ),
        (100, IoDir::Write, 8192, 16384)
    );
    assert_eq!(
        (out[0].lat_ns, out[0].qd, out[0].error),
        (Some(400), 2, Some(-5))
    );
    assert_eq!((out[1].lat_ns, out[1].qd), (Some(100), 3));
    assert_eq!((t.ios.read, t.ios.write), (1, 1));
    assert_eq!((t.window.read, t.window.write, t.unmatched), (2, 1, 0));
    assert_eq!(t.in_flight(), 0);
}

#[test]
fn a_completion_without_its_issue_is_unmatched() {
    let mut t = Tracker::new(1000, None);
    t.event(&ev(1250, EvKind::Complete(0), 8, 8, "R"));
    assert_eq!((t.window.read, t.unmatched, t.ios.read), (1, 1, 0));
}

/// A request completed in two parts, two at one sector (FIFO), a requeue, the cap, the end.
#[test]
fn parts_duplicates_requeues_cap_and_end() {
    let mut t = Tracker::new(0, Some(3));
    let mut out = Vec::new();
    t.event(&ev(10, EvKind::Issue, 100, 16, "W"));
    t.event(&ev(20, EvKind::Complete(0), 100, 8, "W"));
    t.event(&ev(30, EvKind::Complete(0), 108, 8, "W"));
    t.event(&ev(40, EvKind::Issue, 0, 0, "FF"));
    t.event(&ev(41, EvKind::Requeue, 0, 0, "FF"));
    t.event(&ev(50, EvKind::Issue, 0, 0, "FF"));
    t.event(&ev(60, EvKind::Complete(0), 0, 0, "FF"));
    t.event(&ev(70, EvKind::Issue, 200, 8, "R"));
    t.event(&ev(80, EvKind::Issue, 300, 8, "R")); // past the cap
    t.event(&ev(85, EvKind::Complete(0), 300, 8, "R"));
    t.ready(&mut out);
    assert_eq!(out.len(), 2);
    assert_eq!((out[0].lat_ns, out[0].size_bytes), (Some(20), 8192));
    assert_eq!(
        (out[1].dir, out[1].size_bytes, out[1].t_ns),
        (IoDir::Flush, 0, 50)
    );
    assert_eq!((t.requeued, t.over_max, t.full()), (1, 1, true));
    assert_eq!((t.ios.flush, t.ios.read, t.ios.write), (1, 1, 1));
    // the completion past the cap still counts for the device comparison
    assert_eq!((t.window.read, t.window.write, t.window.flush), (1, 1, 1));
    t.end_window(90);
    t.finish(&mut out);
    assert_eq!(out.len(), 3);
    assert_eq!((out[2].lat_ns, t.incomplete), (None, 1));
}

#[test]
fn iolog_lines_in_fios_version_3() {
    let io = |t_ns, dir, off, size| CaptureIo {
        t_ns,
        dir,
        offset_bytes: off,
        size_bytes: size,
        flags: vec![],
        lat_ns: Some(1),
        qd: 1,
        pid: 1,
        comm: "x".into(),
        error: None,
        class: None,
        file: None,
    };
    let mut w = IologWriter::new(Vec::new(), "/dev/loop3").unwrap();
    w.io(&io(1_500, IoDir::Read, 4096, 16384)).unwrap();
    w.io(&io(2_000_000, IoDir::Write, 0, 512)).unwrap();
    w.io(&io(2_100_000, IoDir::Flush, 0, 0)).unwrap();
    w.io(&io(2_200_000, IoDir::Discard, 8192, 4096)).unwrap();
    w.io(&io(2_300_000, IoDir::Other, 0, 4096)).unwrap();
    assert_eq!(w.left_out, 1);
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        text,
        "fio version 3 iolog\n0 /dev/loop3 add\n0 /dev/loop3 open\n\
         1 /dev/loop3 read 4096 16384\n2000 /dev/loop3 write 0 512\n2100 /dev/loop3 sync 0 0\n\
         2200 /dev/loop3 trim 8192 4096\n2300 /dev/loop3 close\n"
    );
}

/// What ext4's journal commit looks like on a device with a write cache (tracefs, kernel
/// 6.18): the flush request completes at sector -1, and the commit block's write completes
/// twice (its data, then the flush sequence with 0 sectors): one request each.
#[test]
fn a_flush_sequence_is_one_flush_and_one_write() {
    let mut t = Tracker::new(0, None);
    let mut out = Vec::new();
    t.event(&ev(10, EvKind::Issue, 0, 0, "FF"));
    t.event(&ev(20, EvKind::Complete(0), u64::MAX, 0, "FF"));
    t.event(&ev(30, EvKind::Issue, 531712, 8, "WSM"));
    t.event(&ev(40, EvKind::Complete(0), 531712, 8, "WSM"));
    t.event(&ev(50, EvKind::Issue, 0, 0, "FF"));
    t.event(&ev(60, EvKind::Complete(0), u64::MAX, 0, "FF"));
    t.event(&ev(61, EvKind::Complete(0), 531712, 0, "WSM"));
    // an fsync of the device: its flush request, then the empty preflush write completes
    t.event(&ev(70, EvKind::Issue, 0, 0, "FF"));
    t.event(&ev(80, EvKind::Complete(0), u64::MAX, 0, "FF"));
    t.event(&ev(81, EvKind::Complete(0), 0, 0, "WS"));
    t.ready(&mut out);
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|r| r.lat_ns == Some(10)), "{out:?}");
    // the device counts 3 flushes and 2 writes (the commit block, the empty preflush)
    assert_eq!((t.window.flush, t.window.write, t.unmatched), (3, 2, 0));
    assert_eq!((t.ios.flush, t.ios.write, t.empty_preflush), (3, 1, 1));
    assert_eq!((t.in_flight(), out[2].qd), (0, 1));
}

/// A request whose completion never comes (lost by the trace buffer) holds later records only
/// up to MAX_WAITING; its late completion is then counted, not recorded twice.
#[test]
fn a_lost_completion_holds_records_only_so_long() {
    let mut t = Tracker::new(0, None);
    let mut out = Vec::new();
    t.event(&ev(1, EvKind::Issue, 0, 8, "R"));
    // the lost one's later ones, each completed at once: MAX_WAITING + 1 wait, then it leaves
    for i in 0..MAX_WAITING as u64 + 10 {
        t.event(&ev(2 + i, EvKind::Issue, 100 + i * 8, 8, "R"));
        t.event(&ev(2 + i, EvKind::Complete(0), 100 + i * 8, 8, "R"));
    }
    t.ready(&mut out);
    // the stuck one leaves without a latency, and every completed one after it
    assert_eq!(out.len(), MAX_WAITING + 11);
    assert_eq!(
        (out[0].lat_ns, out[1].lat_ns, t.incomplete),
        (None, Some(0), 1)
    );
    t.event(&ev(u64::MAX / 2, EvKind::Complete(0), 0, 8, "R"));
    assert_eq!((t.in_flight(), t.unmatched), (0, 0));
    t.finish(&mut out);
    assert_eq!((out.len(), t.incomplete), (MAX_WAITING + 11, 1));
}
