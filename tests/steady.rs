//! `--steady-state` (issue 30, "Results that hold over time"): SNIA PTS's criteria judged on
//! rounds while the run goes, on devices whose behaviour is known. A paced run (its rate exact:
//! steady in the fewest rounds, no root needed); a loop device throttled to a fixed IOPS
//! (steady in the window's five rounds); the same device whose limit drops mid-run, as a burst
//! bucket empties or an SLC cache fills (never declared steady before the drop; the rounds show
//! it); a one-shot run that was not steady says so (`not_steady`); and a FUSE device with a
//! write cliff after a known volume, which `explain` finds (`rate_drop`) within 5 % of it.

use crate::common::blk::{LoopFs, PartedLoop, Throttle, cannot};
use crate::common::faultfs::{FaultFs, skip_reason};
use crate::common::{bin, iolab, iolab_db, run_json, skip};
use serde_json::Value;
use std::time::Duration;

fn steady_of(v: &Value) -> &Value {
    &v["runs"][0]["steady"][0]
}

fn rounds(st: &Value) -> Vec<u64> {
    st["rounds_iops"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

fn codes(v: &Value) -> String {
    v["runs"][0]["warnings"].to_string()
}

/// At an exact rate every round is the same: steady within the fewest rounds (the window's
/// five, and the start's), the run ended there, long before its --time; the figures recorded.
#[test]
fn a_paced_run_is_steady_in_five_rounds() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    // 16 KiB reads of one 8 MiB file at 400 a second, for at most 30 s, in rounds of 0.5 s
    let paced = |more: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["run", "--dir", dir, "--files", "1", "--size", "8M"]
            .iter()
            .chain(&[
                "--mode", "rndrd", "--rate", "400", "--time", "30", "--round", "0.5",
            ])
            .map(|x| x.to_string())
            .collect();
        a.extend(more.iter().map(|x| x.to_string()));
        a
    };
    let a = paced(&["--no-save", "--json", "--steady-state"]);
    let r = iolab(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let st = steady_of(&v);
    assert_eq!(st["attained"], true, "{st}");
    // the window's five rounds, and at most two more: the first round starts with the phase,
    // a little before the first slot, and the pacer catches up in the second
    let n = rounds(st);
    assert!((5..=7).contains(&n.len()), "{st}");
    let at = st["attained_at_s"].as_f64().unwrap();
    assert!((2.4..4.6).contains(&at), "steady at {at} s: {st}");
    let avg = st["window_avg"].as_f64().unwrap();
    assert!((360.0..=440.0).contains(&avg), "window average {avg}: {st}");
    assert!(st["range_pct"].as_f64().unwrap() <= 20.0, "{st}");
    assert!(
        v["runs"][0]["duration_s"].as_f64().unwrap() < 10.0,
        "ended when steady"
    );
    let job = &v["runs"][0]["job"]["timing"]["steady"];
    assert_eq!(job["pts"]["range_pct"], 20.0, "{job}");
    assert_eq!(job["round_s"], 0.5, "{job}");
    assert!(!codes(&v).contains("not_steady"), "{}", codes(&v));
    // the table says it too, and the stored run has PTS's steady-state plot
    let db = d.path().join("r.db");
    let a = paced(&["--steady-state", "iops:20%,slope:10%"]);
    let t = iolab_db(&db, &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        t.stdout
            .contains("steady state (SNIA PTS on IOPS, rounds of 0.5 s): reached at round "),
        "{}",
        t.stdout
    );
    let l = iolab_db(&db, &["plot", "1", "--list"]);
    assert!(l.stdout.contains("steady-state"), "{}", l.stdout);
    let svg = d.path().join("ss.svg");
    let p = iolab_db(
        &db,
        &[
            "plot",
            "1",
            "--chart",
            "steady-state",
            "-o",
            svg.to_str().unwrap(),
        ],
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    for want in [
        "window average",
        "110 % of the average",
        "90 % of the average",
        "best-fit line",
    ] {
        assert!(text.contains(want), "{want} not in the plot");
    }
}

/// Bad criteria are refused with the flag and what is valid; --round needs --steady-state.
#[test]
fn bad_steady_state_specs_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, needle) in [
        (vec!["--steady-state", "latency:5%"], "--steady-state"),
        (vec!["--steady-state", "iops:20"], "valid: iops"),
        (vec!["--round", "5"], "--steady-state"),
    ] {
        let mut a = vec![
            "run",
            "--dir",
            dir,
            "--no-save",
            "--mode",
            "rndrd",
            "--time",
            "1",
        ];
        a.extend(args.iter().copied());
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    }
}

/// Runs iolab in the throttle's cgroup; its JSON document.
fn throttled(t: &Throttle, args: &[&str]) -> Value {
    let mut c = t.command(bin());
    c.args(args);
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A throttle of 2000 IOPS on the device that a timer lowers to 400 after 4 s, and the timer,
/// which gives the wall-clock time it lowered it.
fn dropping(fs: &LoopFs) -> (Throttle, std::thread::JoinHandle<std::time::SystemTime>) {
    let t = Throttle::new(&[fs.majmin()], 2000);
    let (path, majmin) = (t.path.clone(), fs.majmin());
    let timer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(4));
        for f in ["read_iops_device", "write_iops_device"] {
            std::fs::write(
                path.join(format!("blkio.throttle.{f}")),
                format!("{majmin} 400"),
            )
            .unwrap();
        }
        std::time::SystemTime::now()
    });
    (t, timer)
}

/// A loop device throttled to 500 IOPS is steady in the five rounds of the window, at its
/// limit; when the same device's limit drops from 2000 to 400 IOPS after 4 s (a burst bucket
/// emptied, an SLC cache filled), no window that holds a round before the drop is steady: the
/// first steady window starts after it, at the lower rate.
#[test]
fn a_throttled_device_is_steady_and_a_drop_is_not() {
    let name = "a_throttled_device_is_steady_and_a_drop_is_not";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let d = tempfile::tempdir().unwrap();
    let fs = LoopFs::new(128, &d.path().join("mnt"));
    let dir = fs.dir.to_str().unwrap().to_string();
    let plain = |time: &str| -> Vec<String> {
        // the set kept: made once, under the first throttle, so each later run measures at once
        let set = "--files 1 --size 32M --keep --mode rndrd --direct --threads 4";
        format!("run --dir {dir} --no-save --json {set} --time {time}")
            .split(' ')
            .map(str::to_string)
            .collect()
    };
    let args = |time: &str| -> Vec<String> {
        let mut a = plain(time);
        a.extend(["--steady-state", "--round", "1"].map(str::to_string));
        a
    };
    let t = Throttle::new(&[fs.majmin()], 500);
    let a = args("20");
    let v = throttled(&t, &a.iter().map(String::as_str).collect::<Vec<_>>());
    let st = steady_of(&v);
    assert_eq!(st["attained"], true, "{st}");
    // the first round may hold the cgroup's initial budget; at most one more round
    assert!(rounds(st).len() <= 6, "{st}");
    let avg = st["window_avg"].as_f64().unwrap();
    assert!(
        (450.0..=550.0).contains(&avg),
        "window average {avg} IOPS at a 500 limit: {st}"
    );

    // the drop: 2000 IOPS for 4 s, then 400
    let (drop, timer) = dropping(&fs);
    let a = args("30");
    let v = throttled(&drop, &a.iter().map(String::as_str).collect::<Vec<_>>());
    timer.join().unwrap();
    let st = steady_of(&v);
    let r = rounds(st);
    assert_eq!(st["attained"], true, "{st}");
    // the rounds before the drop ran at the high rate
    assert!(r[0] > 1200 && r[2] > 1200, "{r:?}");
    let at = st["attained_at_s"].as_f64().unwrap();
    assert!(
        at >= 8.5,
        "steady at {at} s: a window with a round before the drop at 4 s: {r:?}"
    );
    let avg = st["window_avg"].as_f64().unwrap();
    assert!(
        (340.0..=460.0).contains(&avg),
        "window average {avg} at 400: {r:?}"
    );
    // the same drop in a one-shot run of 10 s without --steady-state: said, and explained as a
    // burst bucket: 1600 IOPS above the 400 baseline from the run's start to the drop (the run
    // measures within a few hundred ms of its start: the set is there), refilled at 400
    let (drop2, timer) = dropping(&fs);
    let mut p = plain("10");
    p.push("--explain".into());
    let v = throttled(&drop2, &p.iter().map(String::as_str).collect::<Vec<_>>());
    let dropped = timer.join().unwrap();
    assert!(codes(&v).contains("not_steady"), "{}", codes(&v));
    let start = chrono::DateTime::parse_from_rfc3339(v["start_time"].as_str().unwrap()).unwrap();
    let high_s = (chrono::DateTime::<chrono::Utc>::from(dropped) - start.to_utc())
        .num_milliseconds() as f64
        / 1000.0;
    let f = v["explain"]["cells"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "rate_drop")
        .unwrap_or_else(|| panic!("no rate_drop: {}", v["explain"]))
        .clone();
    let ev = f["evidence"].as_str().unwrap();
    // "... as a bucket: about 6,400 I/Os (...) above the baseline, refilled at the baseline's 400 IOPS"
    let num = |after: &str, before: &str| -> f64 {
        let i = ev.find(after).unwrap_or_else(|| panic!("{after}: {ev}")) + after.len();
        let j = i + ev[i..].find(before).unwrap();
        ev[i..j].replace(',', "").trim().parse().unwrap()
    };
    let bucket = num("about ", " I/Os");
    let refill = num("refilled at the baseline's ", " IOPS");
    let truth = 1600.0 * high_s;
    println!(
        "burst bucket: estimated {bucket} I/Os refilled at {refill} IOPS; known {truth:.0} at 400"
    );
    assert!(
        (bucket - truth).abs() <= 0.1 * truth,
        "bucket {bucket} I/Os, known {truth:.0} (1600 IOPS above the baseline for {high_s:.2} s): {ev}"
    );
    assert!((refill - 400.0).abs() <= 40.0, "baseline {refill}: {ev}");
}

/// The cliff's volume (bytes): faultfs serves writes at 0.6 ms each until this much was
/// written to it, then at 4 ms (an SLC cache that filled).
const CLIFF: u64 = 64 << 20;

/// 16 KiB O_DIRECT sequential writes that allocate (`--layout extend`: nothing written before
/// the mode) on a FUSE device with a write cliff after 64 MiB: `explain` names the drop
/// (`rate_drop`) and where it was, within 5 % of 64 MiB written; `--steady-state` on the same
/// device holds no round before the cliff in its steady window.
#[test]
fn a_write_cliff_is_found_where_it_is() {
    let name = "a_write_cliff_is_found_where_it_is";
    if let Some(why) = skip_reason() {
        return skip(name, &why);
    }
    let cliff = format!("{CLIFF}:4000");
    let env = [
        ("FAULTFS_WRITES", "1"),
        ("FAULTFS_DELAY_US", "600"),
        ("FAULTFS_CLIFF", cliff.as_str()),
    ];
    let args = [
        "--files", "1", "--size", "512M", "--mode", "seqwr", "--direct", "--bs", "16k", "--layout",
        "extend",
    ];
    let fuse = FaultFs::mount(&env);
    let mut a = args.to_vec();
    a.extend_from_slice(&["--time", "9", "--explain"]);
    let v = run_json(std::path::Path::new(fuse.dir()), &a);
    let f = v["explain"]["cells"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "rate_drop")
        .unwrap_or_else(|| {
            panic!(
                "no rate_drop: {:#}\n{}",
                v["explain"], v["runs"][0]["timeseries"]
            )
        })
        .clone();
    let ev = f["evidence"].as_str().unwrap();
    // "after 64.12 MiB written"
    let mib: f64 = ev
        .split("after ")
        .nth(1)
        .and_then(|t| t.split(" MiB written").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no volume in: {ev}"));
    let want = CLIFF as f64 / 1048576.0;
    assert!(
        (mib - want).abs() <= 0.05 * want,
        "{mib} MiB against {want}: {ev}"
    );
    assert!(ev.contains("a write cliff"), "{ev}");
    drop(fuse);

    let fuse = FaultFs::mount(&env);
    let mut a = args.to_vec();
    a.extend_from_slice(&["--time", "20", "--steady-state", "--round", "1"]);
    let v = run_json(std::path::Path::new(fuse.dir()), &a);
    let st = steady_of(&v);
    let r = rounds(st);
    assert_eq!(st["attained"], true, "{st}");
    // the first round ran before the cliff; the steady window (the last five) holds none of it
    let fast = r[0] as f64;
    let window = &r[r.len() - 5..];
    assert!(
        window.iter().all(|&x| (x as f64) < 0.5 * fast),
        "a round before the cliff in the steady window: {r:?}"
    );
}

/// A block-size sweep (4, 16 and 64 KiB O_DIRECT random reads) on a loop device under a cgroup
/// limit of 400 IOPS, then under one of 4 MiB/s: `explain` tells the caps apart, `iops_cap`
/// (the same IOPS at every size) and `bandwidth_cap` (the same bytes/s), on every cell.
#[test]
fn an_iops_cap_and_a_bandwidth_cap_are_told_apart() {
    let name = "an_iops_cap_and_a_bandwidth_cap_are_told_apart";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let d = tempfile::tempdir().unwrap();
    let fs = LoopFs::new(128, &d.path().join("mnt"));
    let dir = fs.dir.to_str().unwrap().to_string();
    for (i, (t, want)) in [
        (Throttle::new(&[fs.majmin()], 400), ["iops_cap"]),
        (Throttle::read_bps(&fs.majmin(), 4 << 20), ["bandwidth_cap"]),
    ]
    .into_iter()
    .enumerate()
    {
        let db = d.path().join(format!("s{i}.db"));
        let sweep = format!(
            "sweep --dir {dir} --direct --files 1 --size 32M --mode rndrd --threads 4 --bs 4k,16k,64k --ramp 1 --time 2 -q"
        );
        let mut c = t.command(bin());
        c.args(sweep.split(' ')).env("IOLAB_DB", &db);
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let e = iolab_db(&db, &["explain", "g1", "--json"]).json();
        let rules = crate::common::explain_rules(&e);
        assert_eq!(rules.len(), 3, "{e:#}");
        for cell in &rules {
            let caps: Vec<&str> = cell
                .iter()
                .map(String::as_str)
                .filter(|r| r.ends_with("_cap"))
                .collect();
            assert_eq!(caps, want, "{e:#}");
        }
    }
}

/// `iolab together` on devices whose limits are known: two partitions of one loop device under
/// a cgroup limit of 400 IOPS on the disk (each alone 400, both at once 400 together: a cap they
/// share, as an instance's across its volumes) and a partition beside another loop device with
/// a limit of its own (400 + 400 at once: none). `explain` names `shared_cap` on every run of
/// the first and on none of the second; the sets iolab made are gone after; `show` prints the
/// matrix; the group cannot be resumed as a sweep.
#[test]
fn a_cap_two_devices_share_is_told_from_limits_of_their_own() {
    let name = "a_cap_two_devices_share_is_told_from_limits_of_their_own";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let d = tempfile::tempdir().unwrap();
    let parted = PartedLoop::new(48, [d.path().join("p1"), d.path().join("p2")]);
    let other = LoopFs::new(48, &d.path().join("other"));
    let t = Throttle::new(&[parted.majmin(), other.majmin()], 400);
    let [p1, p2] = parted.dirs.clone().map(|p| p.to_str().unwrap().to_string());
    let o = other.dir.to_str().unwrap().to_string();
    for (i, (a, b, want)) in [(&p1, &p2, true), (&p1, &o, false)].into_iter().enumerate() {
        let db = d.path().join(format!("t{i}.db"));
        let cmd = format!(
            "together --dir {a} --dir {b} --direct --files 1 --size 8M --mode rndrd --threads 2 --time 2 -q"
        );
        let mut c = t.command(bin());
        c.args(cmd.split(' ')).env("IOLAB_DB", &db);
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{text}");
        let e = iolab_db(&db, &["explain", "g1", "--json"]).json();
        let rules = crate::common::explain_rules(&e);
        assert_eq!(rules.len(), 4, "{e:#}");
        for cell in &rules {
            let shared: Vec<&str> = cell
                .iter()
                .map(String::as_str)
                .filter(|r| *r == "shared_cap")
                .collect();
            let none: &[&str] = &[];
            assert_eq!(
                shared,
                if want { &["shared_cap"][..] } else { none },
                "{e:#}"
            );
        }
        assert!(
            text.contains(if want {
                "a cap the devices share"
            } else {
                "no cap shared"
            }),
            "{text}"
        );
        for dir in [a, b] {
            let left: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "lost+found")
                .collect();
            assert!(left.is_empty(), "{dir} keeps {left:?}");
        }
        let show = iolab_db(&db, &["show", "g1"]);
        assert!(show.stdout.contains("dir \\ load"), "{}", show.stdout);
        let r = iolab_db(&db, &["sweep", "--resume", "g1"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("iolab together"), "{}", r.stderr);
    }
}

/// 16 KiB O_DIRECT random reads, each block once per pass (`--random-map bitmap`), on a FUSE
/// device whose first read of each 4 KiB block takes 2 ms (a volume restored from a snapshot)
/// and later ones no wait: `explain` names `first_touch`, the volume read before the rise within
/// 10 % of the 32 MiB set (one pass).
#[test]
fn first_touch_reads_are_found_after_one_pass() {
    let name = "first_touch_reads_are_found_after_one_pass";
    if let Some(why) = skip_reason() {
        return skip(name, &why);
    }
    let fuse = FaultFs::mount(&[("FAULTFS_FIRST_READ", "2000")]);
    let v = run_json(
        std::path::Path::new(fuse.dir()),
        &[
            "--files",
            "1",
            "--size",
            "32M",
            "--mode",
            "rndrd",
            "--direct",
            "--bs",
            "16k",
            "--random-map",
            "bitmap",
            "--time",
            "9",
            "--explain",
        ],
    );
    let f = v["explain"]["cells"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "first_touch")
        .unwrap_or_else(|| {
            panic!(
                "no first_touch: {:#}\n{}",
                v["explain"], v["runs"][0]["timeseries"]
            )
        })
        .clone();
    let ev = f["evidence"].as_str().unwrap();
    // "after 32.1 MiB read (100 % of the 32 MiB set)"
    let pct: f64 = ev
        .split(" read (")
        .nth(1)
        .and_then(|t| t.split(" % of the").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no share in: {ev}"));
    println!("first_touch: {ev}");
    assert!((90.0..=110.0).contains(&pct), "{pct} % of the set: {ev}");
    assert_eq!(f["confidence"], "medium", "{f}");
    drop(fuse);
}
