//! The IOzone and Bonnie++ suites and the zones reader, on small sizes in a temporary directory.
//! No root needed.

use crate::common;

use iolab::error::Exit;
use iolab::output::suites::{
    bonnie_csv, bonnie_table, iozone_csv, iozone_excel, iozone_table, zones_table,
};
use iolab::workloads::suites::*;
use iolab::workloads::zones::zones;
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn small_iozone(dir: &Path) -> IozoneOpts {
    IozoneOpts {
        dir: dir.to_path_buf(),
        min_file: 64 * KIB,
        max_file: MIB,
        min_rec: 4 * KIB,
        max_rec: 64 * KIB,
        ..IozoneOpts::default()
    }
}

#[test]
fn iozone_plan_is_iozone_auto_mode() {
    let o = IozoneOpts::default();
    assert_eq!(
        (o.min_file, o.max_file, o.min_rec, o.max_rec),
        (64 * KIB, 512 * MIB, 4 * KIB, 16 * MIB)
    );
    let plan = iozone_plan(&o);
    assert_eq!(plan[0], (64 * KIB, 4 * KIB));
    assert!(plan.iter().all(|&(f, r)| r <= f));
    let recs_of = |f: u64| -> Vec<u64> {
        plan.iter()
            .filter(|p| p.0 == f)
            .map(|p| p.1 / KIB)
            .collect()
    };
    assert_eq!(recs_of(64 * KIB), vec![4, 8, 16, 32, 64]);
    // up to 16 MiB every record size, from 32 MiB on records start at 64 KiB (iozone CROSSOVER)
    assert_eq!(recs_of(16 * MIB)[0], 4);
    assert_eq!(recs_of(16 * MIB).len(), 13);
    assert_eq!(recs_of(32 * MIB)[0], 64);
    assert_eq!(recs_of(512 * MIB).last(), Some(&(16 * 1024)));
    assert_eq!(plan.last(), Some(&(512 * MIB, 16 * MIB)));
    // -z: all record sizes everywhere
    let z = iozone_plan(&IozoneOpts {
        all_records: true,
        ..IozoneOpts::default()
    });
    assert!(z.contains(&(512 * MIB, 4 * KIB)));
}

#[test]
fn iozone_runs_every_test_and_renders_iozone_output() {
    let d = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let last = Cell::new((0u64, 0u64));
    let r = iozone(&small_iozone(d.path()), &stop, &|done, total| {
        last.set((done, total))
    })
    .unwrap();
    assert!(!r.interrupted);
    assert_eq!(r.tests, IOZONE_TESTS.to_vec());
    // 5 file sizes (64 KiB .. 1 MiB) × 5 record sizes (4 .. 64 KiB)
    assert_eq!(r.rows.len(), 25);
    for row in &r.rows {
        assert!(row.reclen_kb <= row.file_kb);
        assert_eq!(row.kb_per_sec.len(), 13);
        for (t, v) in IOZONE_TESTS.iter().zip(&row.kb_per_sec) {
            assert!(
                v.is_some_and(|v| v > 0),
                "{t} {}/{}: {v:?}",
                row.file_kb,
                row.reclen_kb
            );
        }
    }
    let (done, total) = last.get();
    assert!(total > 0);
    assert_eq!(done, total);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));

    let table = iozone_table(&r);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2 + 25, "{table}");
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["random", "random", "bkwd", "record", "stride"]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        [
            "kB", "reclen", "write", "rewrite", "read", "reread", "read", "write", "read",
            "rewrite", "read", "fwrite", "frewrite", "fread", "freread"
        ]
    );
    // right-aligned: a number ends where its heading ends
    assert_eq!(lines[1].find("reclen").unwrap() + 6, 24);
    assert!(lines[2].starts_with("              64       4 "), "{table}");
    assert_eq!(lines[2].split_whitespace().count(), 15);

    let csv = iozone_csv(&r);
    let blocks: Vec<&str> = csv.split("\n\n").collect();
    assert_eq!(blocks.len(), 13, "{csv}");
    for (b, name) in blocks.iter().zip(IOZONE_REPORTS) {
        let l: Vec<&str> = b.lines().collect();
        assert_eq!(l[0], format!("\"{name} report\""));
        assert_eq!(l[1], ",4,8,16,32,64");
        assert_eq!(l.len(), 2 + 5);
        assert!(l[2].starts_with("64,"));
        assert!(l[6].starts_with("1024,"));
        for row in &l[2..] {
            let cells: Vec<&str> = row.split(',').collect();
            assert_eq!(cells.len(), 6);
            assert!(cells[1..].iter().all(|c| c.parse::<u64>().unwrap() > 0));
        }
    }
    assert_eq!(blocks[0].lines().next(), Some("\"Writer report\""));
    assert_eq!(blocks[12].lines().next(), Some("\"Re-Fread report\""));
}

#[test]
fn iozone_csv_leaves_records_not_run_empty() {
    let row = |f, r, v: Option<u64>| IozoneRow {
        file_kb: f,
        reclen_kb: r,
        kb_per_sec: vec![v; 13],
    };
    let r = IozoneResult {
        tests: IOZONE_TESTS.iter().map(|s| s.to_string()).collect(),
        rows: vec![row(4, 4, Some(100)), row(8, 4, Some(200)), row(8, 8, None)],
        direct: false,
        include_flush: false,
        interrupted: false,
    };
    let csv = iozone_csv(&r);
    assert!(
        csv.starts_with("\"Writer report\"\n,4,8\n4,100,\n8,200,\n\n\"Re-writer report\"\n"),
        "{csv}"
    );
    let table = iozone_table(&r);
    let l: Vec<&str> = table.lines().collect();
    assert_eq!(l[4], "               8       8");
}

/// `iozone -a -R` prints, after its table, an "Excel" report in its own layout (dump_report in
/// iozone.c): iolab's text output ends with the same, which the scripts written for iozone read.
#[test]
fn iozone_text_ends_with_iozones_excel_report() {
    let row = |f, r, v: u64| IozoneRow {
        file_kb: f,
        reclen_kb: r,
        kb_per_sec: (0..13).map(|t| (t < 9).then_some(v + t as u64)).collect(),
    };
    let r = IozoneResult {
        tests: IOZONE_TESTS.iter().map(|s| s.to_string()).collect(),
        // the 128 KiB file ran only the 64 KiB record (as iozone -a skips small records on
        // large files): iozone packs its line to the left
        rows: vec![row(64, 4, 1000), row(64, 64, 2000), row(128, 64, 3000)],
        direct: true,
        include_flush: false,
        interrupted: false,
    };
    let x = iozone_excel(&r);
    assert!(
        x.starts_with(
            "\niozone test complete.\nExcel output is below:\n\n\"Writer report\"\n        \"4\"  \"64\"\n\"64\"   1000  2000 \n\"128\"   3000 \n\n\"Re-writer report\"\n        \"4\"  \"64\"\n\"64\"   1001  2001 \n"
        ),
        "{x}"
    );
    // the stdio tests did not run (O_DIRECT): no block, as in iozone
    let titles: Vec<&str> = x.lines().filter(|l| l.ends_with(" report\"")).collect();
    assert_eq!(titles.len(), 9, "{x}");
    assert_eq!(titles[8], "\"Stride read report\"");
    // the way scripts written for iozone read it
    let after = x.split_once("Excel output is below:\n").unwrap().1;
    let first = after.trim_start().lines().collect::<Vec<_>>();
    let recs: Vec<u64> = first[1]
        .split('"')
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    assert_eq!(recs, [4, 64]);
    let vals: Vec<u64> = first[2]
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(vals, [1000, 2000]);
    let csv = iozone_csv(&r);
    assert!(
        csv.starts_with("\"Writer report\"\n,4,64\n64,1000,2000\n128,,3000\n"),
        "{csv}"
    );
    assert_eq!(csv.split("\n\n").count(), 9);
}

#[test]
fn iozone_direct_skips_the_stdio_tests_or_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let o = IozoneOpts {
        direct: true,
        max_file: 256 * KIB,
        ..small_iozone(d.path())
    };
    match iozone(&o, &stop, &|_, _| {}) {
        Ok(r) => {
            assert!(!r.rows.is_empty());
            for row in &r.rows {
                assert!(row.kb_per_sec[..9].iter().all(|v| v.is_some_and(|v| v > 0)));
                assert!(row.kb_per_sec[9..].iter().all(|v| v.is_none()));
            }
        }
        // tmpfs and some other filesystems refuse O_DIRECT
        Err(e) => {
            assert_eq!(e.exit, Exit::Usage, "{}", e.msg);
            assert!(
                e.msg.contains("--direct") || e.msg.contains("--min-rec"),
                "{}",
                e.msg
            );
        }
    }
    assert!(entries(d.path()).is_empty());
}

#[test]
fn iozone_stops_early_and_cleans_up() {
    let d = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let r = iozone(&small_iozone(d.path()), &stop, &|done, _| {
        if done > 0 {
            stop.store(true, Ordering::Relaxed)
        }
    })
    .unwrap();
    assert!(r.interrupted);
    assert!(r.rows.is_empty());
    assert!(entries(d.path()).is_empty());
}

#[test]
fn iozone_refuses_bad_input() {
    let stop = AtomicBool::new(false);
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("nope");
    let e = iozone(&small_iozone(&missing), &stop, &|_, _| {}).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert!(
        e.msg.contains("--dir") && e.msg.contains("nope"),
        "{}",
        e.msg
    );
    let o = IozoneOpts {
        min_file: 2 * MIB,
        ..small_iozone(d.path())
    };
    let e = iozone(&o, &stop, &|_, _| {}).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert!(e.msg.contains("--min-file"), "{}", e.msg);
    let o = IozoneOpts {
        min_rec: 1000,
        ..small_iozone(d.path())
    };
    let e = iozone(&o, &stop, &|_, _| {}).unwrap_err();
    assert!(e.msg.contains("--min-rec"), "{}", e.msg);
}

fn small_bonnie(dir: &Path) -> BonnieOpts {
    BonnieOpts {
        dir: dir.to_path_buf(),
        size: 8 * MIB,
        chunk: 8 * KIB,
        files: 1,
        seeks: 8000,
        machine: "testbox".into(),
        seed: Some(42),
        // 8 MiB is far below twice the RAM: Bonnie++'s rule would refuse it
        force: true,
    }
}

#[test]
fn bonnie_runs_every_test_and_renders_bonnie_output() {
    let d = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let r = bonnie(&small_bonnie(d.path()), &stop).unwrap();
    assert!(!r.interrupted);
    assert_eq!(r.version, bonnie_version());
    assert!(r.version.starts_with("iolab-"));
    let all = [
        ("putc", &r.putc),
        ("put_block", &r.put_block),
        ("rewrite", &r.rewrite),
        ("getc", &r.getc),
        ("get_block", &r.get_block),
        ("seeks", &r.seeks),
        ("seq_create", &r.seq_create),
        ("seq_stat", &r.seq_stat),
        ("seq_del", &r.seq_del),
        ("ran_create", &r.ran_create),
        ("ran_stat", &r.ran_stat),
        ("ran_del", &r.ran_del),
    ];
    for (name, s) in all {
        let s = s.as_ref().unwrap_or_else(|| panic!("{name} not run"));
        assert!(s.ops > 0, "{name}");
        match s.value {
            Some(v) => {
                assert!(v > 0.0, "{name}: {v}");
                assert!(s.cpu_pct.is_some_and(|c| c >= 0.0), "{name}");
                assert!(s.seconds >= BONNIE_MIN_TIME_S, "{name}");
            }
            None => {
                assert!(s.cpu_pct.is_none(), "{name}");
                assert!(s.seconds < BONNIE_MIN_TIME_S, "{name}");
            }
        }
    }
    assert_eq!(r.seeks.as_ref().unwrap().ops, 8000);
    assert_eq!(r.seq_create.as_ref().unwrap().ops, 1024);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));

    // 1024 empty files are stat'ed well within 500 ms: too fast to measure
    assert!(r.seq_stat.as_ref().unwrap().value.is_none());

    let csv = bonnie_csv(&r);
    assert!(csv.ends_with('\n') && csv.lines().count() == 1);
    let f: Vec<&str> = csv.trim_end().split(',').collect();
    assert_eq!(f.len(), 50, "{csv}");
    assert_eq!(BONNIE_CSV_FIELDS.len(), 50);
    assert_eq!(
        &f[..9],
        [
            "1.98", &r.version, "testbox", "1", "42", "8M", "", "8000", "3"
        ]
    );
    assert_eq!(f[21], "1", "num_files");
    assert_eq!(&f[22..26], ["", "", "", ""]);
    let seq_stat = BONNIE_CSV_FIELDS
        .iter()
        .position(|&n| n == "seq_stat")
        .unwrap();
    assert_eq!(&f[seq_stat..seq_stat + 2], ["+++++", "+++"]);
    for (name, v) in BONNIE_CSV_FIELDS.iter().zip(&f).skip(38) {
        assert!(name.ends_with("_latency"));
        assert!(
            v.ends_with("us") || v.ends_with("ms") || v.ends_with('s'),
            "{name}: {v}"
        );
        assert!(
            v.trim_end_matches(char::is_alphabetic)
                .parse::<u64>()
                .is_ok()
        );
    }
    for (i, name) in BONNIE_CSV_FIELDS.iter().enumerate().take(38).skip(9) {
        if name.ends_with("_cpu") {
            assert!(
                f[i] == "+++" || f[i].parse::<u32>().is_ok(),
                "{name}: {}",
                f[i]
            );
        } else if *name != "num_files" && i < 26 && i > 21 {
            assert_eq!(f[i], "");
        } else if *name != "num_files" {
            assert!(
                f[i] == "+++++" || f[i].parse::<f64>().is_ok_and(|v| v > 0.0),
                "{name}: {}",
                f[i]
            );
        }
    }

    let t = bonnie_table(&r);
    for h in [
        "Version iolab-",
        "------Sequential Output------ --Sequential Input- --Random-",
        "-Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--",
        "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP",
        "------Sequential Create------ --------Random Create--------",
        "-Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--",
        "              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP",
        "Latency",
        "+++++ +++",
    ] {
        assert!(t.contains(h), "{h}\n{t}");
    }
    assert!(
        t.lines().any(|l| l.starts_with("testbox          8M ")),
        "{t}"
    );
    assert!(
        t.lines().any(|l| l.starts_with("                  1 ")),
        "{t}"
    );
    assert_eq!(t.lines().filter(|l| l.starts_with("Latency")).count(), 2);
}

#[test]
fn bonnie_csv_and_table_of_a_known_result() {
    let stat = |v: Option<f64>, cpu: f64, lat: u64| {
        Some(BonnieStat {
            value: v,
            cpu_pct: v.map(|_| cpu),
            max_latency_ns: lat * 1000,
            seconds: if v.is_some() { 2.0 } else { 0.1 },
            ops: 10,
        })
    };
    let r = BonnieResult {
        version: "iolab-0.1.0".into(),
        machine: "ceph-admin".into(),
        concurrency: 1,
        seed: 1466787633,
        file_size_bytes: 8196 * MIB,
        chunk_bytes: 8 * KIB,
        files: 16,
        seek_count: 8000,
        seek_procs: 3,
        char_io_bytes: 3 * MIB,
        putc: stat(Some(630.0), 94.0, 12352),
        put_block: stat(Some(112045.4), 16.0, 1_034_000),
        rewrite: stat(Some(37432.0), 5.0, 2_232_000),
        getc: None,
        get_block: stat(None, 0.0, 45519),
        seeks: stat(Some(950.66), 9.0, 229_000),
        seq_create: stat(Some(29005.0), 66.0, 612),
        seq_stat: stat(None, 0.0, 667),
        seq_del: stat(Some(30628.0), 57.0, 735),
        ran_create: stat(Some(26771.0), 36.0, 66),
        ran_stat: stat(None, 0.0, 32),
        ran_del: stat(Some(30726.0), 56.0, 63),
        interrupted: false,
        warnings: vec![],
    };
    assert_eq!(
        bonnie_csv(&r),
        "1.98,iolab-0.1.0,ceph-admin,1,1466787633,8196M,,8000,3,630,94,112045,16,37432,5,,,+++++,+++,950.7,9,16,,,,,29005,66,+++++,+++,30628,57,26771,36,+++++,+++,30726,56,12352us,1034ms,2232ms,,45519us,229ms,612us,667us,735us,66us,32us,63us\n"
    );
    let t = bonnie_table(&r);
    let expected = "\
Version iolab-0.1.0 ------Sequential Output------ --Sequential Input- --Random-
Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
ceph-admin    8196M   630  94 112045  16 37432   5           +++++ +++ 950.7   9
Latency               12352us    1034ms    2232ms             45519us     229ms
Version iolab-0.1.0 ------Sequential Create------ --------Random Create--------
ceph-admin          -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
                 16 29005  66 +++++ +++ 30628  57 26771  36 +++++ +++ 30726  56
Latency                 612us     667us     735us      66us      32us      63us
";
    assert_eq!(t, expected, "\n{t}");
}

/// A stat as bonnie++ prints it: a rate and %CP (None: `+++++,+++`) and the latency in µs.
fn b_stat(v: Option<f64>, cpu: f64, lat_us: u64) -> Option<BonnieStat> {
    Some(BonnieStat {
        value: v,
        cpu_pct: v.map(|_| cpu),
        max_latency_ns: lat_us * 1000,
        seconds: if v.is_some() { 2.0 } else { 0.1 },
        ops: 10,
    })
}

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bonnie")
        .join(name);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .trim_end()
        .to_string()
}

/// The figures of tests/fixtures/bonnie/bonnie++-2.00a-s256M-n1.csv, what
/// `bonnie++ -d DIR -s 256M -r 128 -n 1 -u root -q -m testbox` (2.00a) wrote, as a result.
fn bonnie_2_00a_256m() -> BonnieResult {
    BonnieResult {
        version: "2.00a".into(),
        machine: "testbox".into(),
        concurrency: 1,
        seed: 1795463376,
        file_size_bytes: 256 * MIB,
        chunk_bytes: 8 * KIB,
        files: 1,
        seek_count: 8192,
        seek_procs: 5,
        char_io_bytes: 3 * MIB,
        putc: b_stat(Some(644.0), 49.0, 22120),
        put_block: b_stat(Some(175039.0), 47.0, 8074),
        rewrite: b_stat(None, 0.0, 8091),
        getc: b_stat(Some(1126.0), 51.0, 14197),
        get_block: b_stat(None, 0.0, 8077),
        seeks: b_stat(None, 0.0, 24123),
        seq_create: b_stat(Some(1735.0), 5.0, 12137),
        seq_stat: b_stat(None, 0.0, 4080),
        seq_del: b_stat(None, 0.0, 12111),
        ran_create: b_stat(None, 0.0, 8097),
        ran_stat: b_stat(None, 0.0, 15),
        ran_del: b_stat(None, 0.0, 60),
        interrupted: false,
        warnings: vec![],
    }
}

/// A result with a different figure in every column (no `+++++`), for the column checks.
fn bonnie_distinct() -> BonnieResult {
    BonnieResult {
        version: "iolab-0.1.0".into(),
        machine: "ceph-admin".into(),
        concurrency: 1,
        seed: 1466787633,
        file_size_bytes: 8196 * MIB,
        chunk_bytes: 8 * KIB,
        files: 16,
        seek_count: 8000,
        seek_procs: 3,
        char_io_bytes: 3 * MIB,
        putc: b_stat(Some(630.0), 94.0, 12352),
        put_block: b_stat(Some(112045.0), 16.0, 1_034_000),
        rewrite: b_stat(Some(37432.0), 5.0, 2_232_000),
        getc: b_stat(Some(9999.0), 8.0, 8),
        get_block: b_stat(Some(204800.0), 3.0, 45519),
        seeks: b_stat(Some(950.66), 9.0, 229_000),
        seq_create: b_stat(Some(29005.0), 66.0, 612),
        seq_stat: b_stat(Some(41000.0), 61.0, 667),
        seq_del: b_stat(Some(30628.0), 57.0, 735),
        ran_create: b_stat(Some(26771.0), 36.0, 66),
        ran_stat: b_stat(Some(51234.0), 71.0, 32),
        ran_del: b_stat(Some(30726.0), 56.0, 63),
        interrupted: false,
        warnings: vec![],
    }
}

/// iolab's CSV line is bonnie++ 2.00a's, field for field: the same figures give the very line
/// bonnie++ wrote (tests/fixtures/bonnie/, recorded with the commands in docs/experiments.md).
#[test]
fn bonnie_csv_is_bonnie_2_00a_csv_field_for_field() {
    let real = fixture("bonnie++-2.00a-s256M-n1.csv");
    assert_eq!(real.split(',').count(), 50);
    assert_eq!(bonnie_csv(&bonnie_2_00a_256m()), format!("{real}\n"));

    // file tests only (-s 0): the size, chunk, seeks and seekers fields are empty
    let real = fixture("bonnie++-2.00a-s0-n1.csv");
    let r = BonnieResult {
        machine: "tb".into(),
        seed: 1795488857,
        file_size_bytes: 0,
        seek_count: 0,
        char_io_bytes: 0,
        putc: None,
        put_block: None,
        rewrite: None,
        getc: None,
        get_block: None,
        seeks: None,
        seq_create: b_stat(None, 0.0, 2238),
        seq_stat: b_stat(None, 0.0, 150),
        seq_del: b_stat(None, 0.0, 238),
        ran_create: b_stat(None, 0.0, 730),
        ran_stat: b_stat(None, 0.0, 5),
        ran_del: b_stat(None, 0.0, 399),
        ..bonnie_2_00a_256m()
    };
    assert_eq!(bonnie_csv(&r), format!("{real}\n"));

    // per-char tests skipped (-f), no file tests, 4 KiB chunks, 500 seeks by 3 seekers:
    // bonnie++ 2.00a leaves io_chunk_size empty even then; iolab writes the chunk there
    let real = fixture("bonnie++-2.00a-s64M-4096-500-3-f-n0.csv");
    let r = BonnieResult {
        machine: "tb".into(),
        seed: 1795488101,
        file_size_bytes: 64 * MIB,
        chunk_bytes: 4 * KIB,
        files: 0,
        seek_count: 500,
        seek_procs: 3,
        putc: None,
        put_block: b_stat(None, 0.0, 5351),
        rewrite: b_stat(None, 0.0, 20044),
        getc: None,
        get_block: b_stat(None, 0.0, 1167),
        seeks: b_stat(None, 0.0, 13),
        seq_create: None,
        seq_stat: None,
        seq_del: None,
        ran_create: None,
        ran_stat: None,
        ran_del: None,
        ..bonnie_2_00a_256m()
    };
    let ours = bonnie_csv(&r);
    let ours: Vec<&str> = ours.trim_end().split(',').collect();
    let theirs: Vec<&str> = real.split(',').collect();
    assert_eq!(ours.len(), theirs.len());
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        if BONNIE_CSV_FIELDS[i] == "io_chunk_size" {
            assert_eq!((*a, *b), ("4k", ""));
        } else {
            assert_eq!(a, b, "{}", BONNIE_CSV_FIELDS[i]);
        }
    }
}

/// Runs a Bonnie++ converter on `csv`; None when it is not installed.
fn bon_tool(tool: &str, csv: &str) -> Option<String> {
    use std::io::Write;
    let mut c = match std::process::Command::new(tool)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("{tool}: {e}"),
    };
    c.stdin.take().unwrap().write_all(csv.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "{tool}: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{tool} complained: {err}");
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The `<td>` texts of the row of `machine` in bon_csv2html's table.
fn html_row(html: &str, machine: &str) -> Vec<String> {
    let row = html
        .split("<tr>")
        .find(|r| r.contains(&format!("<font size=+1>{machine}</td>")))
        .unwrap_or_else(|| panic!("no row of {machine}: {html}"));
    row.split("<td")
        .skip(2)
        .map(|c| {
            let c = &c[c.find('>').unwrap() + 1..];
            c[..c.find("</td>").unwrap()].to_string()
        })
        .collect()
}

/// Bonnie++'s own converters read `suite bonnie` CSV with every figure in its column:
/// bon_csv2txt and bon_csv2html give for iolab's line what they give for bonnie++'s, and each
/// figure of a result with a different value in every column lands under its heading.
#[test]
fn bon_csv2txt_and_bon_csv2html_read_bonnie_csv() {
    let name = "bon_csv2txt_and_bon_csv2html_read_bonnie_csv";
    let real = fixture("bonnie++-2.00a-s256M-n1.csv") + "\n";
    let ours = bonnie_csv(&BonnieResult {
        version: bonnie_version(),
        ..bonnie_2_00a_256m()
    });
    let Some(txt_real) = bon_tool("bon_csv2txt", &real) else {
        return common::skip(
            name,
            "bon_csv2txt is not installed (apt-get install bonnie++)",
        );
    };
    assert_eq!(bon_tool("bon_csv2txt", &ours).unwrap(), txt_real);
    let Some(html_real) = bon_tool("bon_csv2html", &real) else {
        return common::skip(
            name,
            "bon_csv2html is not installed (apt-get install bonnie++)",
        );
    };
    assert_eq!(bon_tool("bon_csv2html", &ours).unwrap(), html_real);

    let csv = bonnie_csv(&bonnie_distinct());
    let txt = bon_tool("bon_csv2txt", &csv).unwrap();
    let lines: Vec<&str> = txt.lines().collect();
    // bon_csv2txt: K/sec below 10000 as `630k`, else MiB/s (`109m`, `36.6m`); the size field
    // is size:chunk:seeks:seekers
    assert_eq!(
        lines[3], "ceph- 8196M::8000:3  630k  94  109m  16 36.6m   5 9999k   8  200m   3 950.7   9",
        "{txt}"
    );
    assert_eq!(
        lines[4], "Latency             12352us    1034ms    2232ms       8us   45519us     229ms",
        "{txt}"
    );
    assert_eq!(
        lines[8], "ceph-admin       16 29005  66 41000  61 30628  57 26771  36 51234  71 30726  56",
        "{txt}"
    );
    assert_eq!(
        lines[9], "Latency               612us     667us     735us      66us      32us      63us",
        "{txt}"
    );
    let html = bon_tool("bon_csv2html", &csv).unwrap();
    // size, then rate and %CP of putc, put_block, rewrite, getc, get_block (per char in K/sec,
    // block, rewrite in MiB/s), seeks; the file count, then the six file tests
    assert_eq!(
        html_row(&html, "ceph-admin"),
        [
            "8196M", "630", "94", "109", "16", "37", "5", "9999", "8", "200", "3", "950.7", "9",
            "16", "29005", "66", "41000", "61", "30628", "57", "26771", "36", "51234", "71",
            "30726", "56"
        ],
        "{html}"
    );
    for lat in [
        "12352us", "1034ms", "2232ms", "8us", "45519us", "229ms", "612us", "667us", "735us",
        "66us", "32us", "63us",
    ] {
        assert!(
            html.contains(&format!("<td colspan=\"2\">{lat}</td>")),
            "{lat}: {html}"
        );
    }
}

/// Per Chr is what bonnie++ 2.00 does: the first 3 MiB (or a smaller file) one system call per
/// byte, so at least that many write(2) and read(2) calls (the process's counters in /proc).
#[test]
fn bonnie_per_char_tests_make_one_system_call_per_byte() {
    assert_eq!(bonnie_char_io_bytes(8 * MIB, 8 * KIB), 3 * MIB);
    assert_eq!(bonnie_char_io_bytes(MIB, 8 * KIB), MIB);
    assert_eq!(bonnie_char_io_bytes(8 * MIB, 4 * MIB), 4 * MIB);
    let io = || -> (u64, u64) {
        let s = std::fs::read_to_string("/proc/self/io").unwrap();
        let get = |k: &str| {
            s.lines()
                .find_map(|l| l.strip_prefix(k))
                .unwrap()
                .trim()
                .parse::<u64>()
                .unwrap()
        };
        (get("syscw:"), get("syscr:"))
    };
    let d = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let o = BonnieOpts {
        files: 0,
        seeks: 0,
        ..small_bonnie(d.path())
    };
    let (w0, r0) = io();
    let r = bonnie(&o, &stop).unwrap();
    let (w1, r1) = io();
    assert_eq!(r.char_io_bytes, 3 * MIB);
    assert_eq!(r.putc.as_ref().unwrap().ops * r.chunk_bytes, 3 * MIB);
    assert_eq!(r.getc.as_ref().unwrap().ops * r.chunk_bytes, 3 * MIB);
    assert_eq!(r.put_block.as_ref().unwrap().ops * r.chunk_bytes, 8 * MIB);
    assert!(w1 - w0 >= 3 * MIB, "write calls: {}", w1 - w0);
    assert!(r1 - r0 >= 3 * MIB, "read calls: {}", r1 - r0);
    assert_eq!(r.seek_count, 0);
    assert!(r.seeks.is_none());
}

/// Like Bonnie++, a file below twice the RAM is refused (one line naming --size and the RAM,
/// exit 2, nothing created); with --force it runs and the result says so.
#[test]
fn bonnie_refuses_a_size_below_twice_the_ram_without_force() {
    let gib = 1u64 << 30;
    let e = bonnie_ram_rule(256 * MIB, Some(23 * gib), false).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert!(
        e.msg.contains("--size 256MiB") && e.msg.contains("23.00 GiB"),
        "{}",
        e.msg
    );
    assert!(e.msg.contains("--force"), "{}", e.msg);
    let w = bonnie_ram_rule(256 * MIB, Some(23 * gib), true)
        .unwrap()
        .unwrap();
    assert_eq!(w.code, BONNIE_SMALL_SIZE_WARNING);
    assert!(
        bonnie_ram_rule(46 * gib, Some(23 * gib), false)
            .unwrap()
            .is_none()
    );
    assert!(bonnie_ram_rule(0, Some(23 * gib), false).unwrap().is_none());
    assert!(bonnie_ram_rule(MIB, None, false).unwrap().is_none());

    let d = tempfile::tempdir().unwrap();
    let o = BonnieOpts {
        force: false,
        ..small_bonnie(d.path())
    };
    let e = bonnie(&o, &AtomicBool::new(false)).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);

    let db = d.path().join("results.db");
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let args = [
        "suite",
        "bonnie",
        "--dir",
        dir.to_str().unwrap(),
        "--size",
        "8M",
        "--files",
        "0",
        "--seeks",
        "10",
    ];
    let r = common::iolab_db(&db, &args);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--size 8MiB") && r.stderr.contains("of RAM"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    assert!(!db.exists(), "nothing stored");
    let missing = d.path().join("not-there");
    let r = common::iolab_db(
        &db,
        &[
            "suite",
            "bonnie",
            "--dir",
            missing.to_str().unwrap(),
            "--size",
            "8M",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!missing.exists());

    let mut forced = args.to_vec();
    forced.extend(["--force", "--json", "--no-save"]);
    let r = common::iolab_db(&db, &forced);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["warnings"][0]["code"], BONNIE_SMALL_SIZE_WARNING, "{j}");
    assert!(r.stderr.contains("warning: --size 8MiB"), "{}", r.stderr);
    assert!(entries(&dir).is_empty());
}

#[test]
fn bonnie_stops_early_and_cleans_up() {
    let d = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(true);
    let r = bonnie(&small_bonnie(d.path()), &stop).unwrap();
    assert!(r.interrupted);
    assert!(r.putc.is_none());
    assert!(entries(d.path()).is_empty());
}

#[test]
fn bonnie_refuses_bad_input() {
    let stop = AtomicBool::new(false);
    let d = tempfile::tempdir().unwrap();
    let e = bonnie(&small_bonnie(&d.path().join("nope")), &stop).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert!(e.msg.contains("--dir"), "{}", e.msg);
    let o = BonnieOpts {
        size: 8 * MIB + 1,
        ..small_bonnie(d.path())
    };
    let e = bonnie(&o, &stop).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert!(e.msg.contains("--size"), "{}", e.msg);
    let o = BonnieOpts {
        size: 0,
        files: 0,
        ..small_bonnie(d.path())
    };
    assert_eq!(bonnie(&o, &stop).unwrap_err().exit, Exit::Usage);
}

#[test]
fn zones_reads_evenly_spaced_zones_of_a_regular_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("disk.img");
    let data: Vec<u8> = (0..64 * MIB).map(|i| (i * 7 + i / 4096) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    let before = std::fs::metadata(&p).unwrap().modified().unwrap();
    let stop = AtomicBool::new(false);

    let r = zones(&p, 8, 4 * MIB, MIB, &stop).unwrap();
    assert_eq!(r.zones.len(), 8);
    assert_eq!(r.size_bytes, 64 * MIB);
    assert_eq!(r.kind, "regular file");
    assert_eq!(r.per_zone_bytes, 4 * MIB);
    assert!(!r.interrupted);
    assert_eq!(r.zones[0].offset_bytes, 0);
    for w in r.zones.windows(2) {
        assert!(w[0].offset_bytes + w[0].bytes <= w[1].offset_bytes, "{w:?}");
        assert!(w[0].offset_pct < w[1].offset_pct);
    }
    for (i, z) in r.zones.iter().enumerate() {
        assert_eq!(z.index as usize, i);
        assert_eq!(z.offset_bytes % MIB, 0);
        assert_eq!(z.bytes, 4 * MIB);
        assert!(z.mib_per_sec > 0.0 && z.lat_ms_mean > 0.0, "{z:?}");
    }
    let last = r.zones.last().unwrap();
    assert_eq!(last.offset_bytes + last.bytes, 64 * MIB);
    assert!(r.first_last_ratio.is_some_and(|x| x > 0.0));
    let t = zones_table(&r);
    for h in ["zone", "offset", "MiB/s", "mean lat ms", "first/last zone"] {
        assert!(t.contains(h), "{h}\n{t}");
    }

    // the default 64 MiB per zone does not fit 8 times: clamped so zones do not overlap
    let r = zones(&p, 8, 64 * MIB, MIB, &stop).unwrap();
    assert_eq!(r.per_zone_bytes, 8 * MIB);
    assert!(
        r.notes.iter().any(|n| n.contains("--per-zone")),
        "{:?}",
        r.notes
    );
    let offs: Vec<u64> = r.zones.iter().map(|z| z.offset_bytes).collect();
    assert_eq!(offs, (0..8).map(|i| i * 8 * MIB).collect::<Vec<_>>());

    // read-only: the file is unchanged
    assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), before);
    assert!(std::fs::read(&p).unwrap() == data);
}

#[test]
fn zones_refuses_missing_and_unusable_targets() {
    let stop = AtomicBool::new(false);
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("no-such-disk");
    let e = zones(&missing, 16, 64 * MIB, MIB, &stop).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert!(e.msg.contains("no-such-disk"), "{}", e.msg);
    let e = zones(d.path(), 16, 64 * MIB, MIB, &stop).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert!(
        e.msg.contains("not a regular file or a block device"),
        "{}",
        e.msg
    );
    let small = d.path().join("small");
    std::fs::write(&small, vec![1u8; 4096]).unwrap();
    let e = zones(&small, 16, 64 * MIB, MIB, &stop).unwrap_err();
    assert_eq!(e.exit, Exit::Usage);
    assert_eq!(
        zones(&small, 0, MIB, MIB, &stop).unwrap_err().exit,
        Exit::Usage
    );
}

// ---- suites as metrics rows: compare and export (docs/results.md, "One measurement shape") ----

#[test]
fn iozone_metric_rows_are_one_cell_per_file_record_and_test() {
    let r = IozoneResult {
        tests: IOZONE_TESTS.iter().map(|s| s.to_string()).collect(),
        rows: vec![
            IozoneRow {
                file_kb: 64,
                reclen_kb: 4,
                kb_per_sec: (1..=13).map(|i| Some(i * 1000)).collect(),
            },
            IozoneRow {
                file_kb: 128,
                reclen_kb: 4,
                // the stdio tests not run (--direct)
                kb_per_sec: (1..=13).map(|i| (i <= 9).then_some(2048)).collect(),
            },
        ],
        direct: false,
        include_flush: false,
        interrupted: false,
    };
    let m = r.metric_rows();
    assert_eq!(m.len(), 13 + 9);
    let names: Vec<&str> = m.iter().map(|x| x.mode.as_str()).collect();
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert_eq!(m[0].mode, "write file=64KiB rec=4KiB");
    assert_eq!(m[13].mode, "write file=128KiB rec=4KiB");
    for (x, t) in m.iter().zip(IOZONE_TESTS) {
        assert!(x.mode.starts_with(&format!("{t} ")), "{}", x.mode);
        let op = if t.contains("write") { "write" } else { "read" };
        assert_eq!(x.op, op, "{t}");
    }
    let random_read = &m[4];
    assert_eq!(random_read.mode, "random_read file=64KiB rec=4KiB");
    assert_eq!(random_read.op, "read");
    assert_eq!(m[7].mode, "record_rewrite file=64KiB rec=4KiB");
    assert_eq!(m[7].op, "write");
    // 5000 KB/s, KB = 1024 bytes; 16 records of 4 KiB each
    assert_eq!(random_read.bytes_per_sec, 5000.0 * 1024.0);
    assert_eq!(random_read.iops, 5000.0 / 4.0);
    assert_eq!(random_read.bs_bytes, Some(4096));
    assert_eq!((random_read.ops, random_read.bytes), (16, 65536));
    assert_eq!(random_read.threads, Some(1));
    assert_eq!(
        (random_read.lat_mean_ns, random_read.lat_max_ns),
        (None, None)
    );
    assert!(m[13..].iter().all(|x| x.ops == 32 && x.bytes == 128 * 1024));
}

#[test]
fn bonnie_and_zones_metric_rows() {
    let stat = |v: Option<f64>, lat: u64, ops: u64| {
        Some(BonnieStat {
            value: v,
            cpu_pct: v.map(|_| 10.0),
            max_latency_ns: lat * 1000,
            seconds: if v.is_some() { 2.0 } else { 0.25 },
            ops,
        })
    };
    let r = BonnieResult {
        version: "iolab-0.1.0".into(),
        machine: "m".into(),
        concurrency: 1,
        seed: 1,
        file_size_bytes: 8 * MIB,
        chunk_bytes: 8 * KIB,
        files: 1,
        seek_count: 8000,
        seek_procs: 3,
        char_io_bytes: 8 * MIB,
        putc: stat(Some(630.0), 12352, 1024),
        put_block: stat(Some(4096.0), 100, 1024),
        rewrite: None,
        getc: None,
        get_block: stat(None, 7, 1024),
        seeks: stat(Some(950.5), 229_000, 8000),
        seq_create: stat(Some(29005.0), 612, 1024),
        seq_stat: stat(None, 5, 1024),
        seq_del: None,
        ran_create: None,
        ran_stat: None,
        ran_del: None,
        interrupted: false,
        warnings: vec![],
    };
    let m = r.metric_rows();
    let names: Vec<(&str, &str)> = m.iter().map(|x| (x.mode.as_str(), x.op)).collect();
    assert_eq!(
        names,
        [
            ("putc", "write"),
            ("put_block", "write"),
            ("get_block", "read"),
            ("seeks", "seek"),
            ("seq_create", "create"),
            ("seq_stat", "stat")
        ]
    );
    // K/sec × 1024; chunks per second
    assert_eq!(m[1].bytes_per_sec, 4096.0 * 1024.0);
    assert_eq!(m[1].iops, 512.0);
    assert_eq!(
        (m[1].ops, m[1].bytes, m[1].bs_bytes),
        (1024, 8 * MIB, Some(8 * KIB))
    );
    // latency: the maximum, µs → ns
    assert_eq!(m[0].lat_max_ns, Some(12_352_000.0));
    assert_eq!(m[0].lat_mean_ns, None);
    // too fast for bonnie++ (+++++): the rate of its operations over its wall time
    assert_eq!(m[2].bytes_per_sec, 8.0 * MIB as f64 / 0.25);
    assert_eq!(m[5].iops, 1024.0 / 0.25);
    // seeks and file tests: operations per second, no bytes
    assert_eq!((m[3].iops, m[3].bytes, m[3].bytes_per_sec), (950.5, 0, 0.0));
    assert_eq!(m[3].threads, Some(BONNIE_SEEK_THREADS));
    assert_eq!((m[4].iops, m[4].bs_bytes), (29005.0, None));

    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("disk.img");
    std::fs::write(&p, vec![3u8; 8 << 20]).unwrap();
    let z = zones(&p, 4, MIB, 256 * KIB, &AtomicBool::new(false)).unwrap();
    let m = z.metric_rows();
    assert_eq!(m.len(), 4);
    for (i, (x, zs)) in m.iter().zip(&z.zones).enumerate() {
        assert_eq!(x.mode, format!("zone {i:02}"));
        assert_eq!(x.op, "read");
        assert_eq!(x.bytes, zs.bytes);
        assert_eq!(x.ops, zs.bytes.div_ceil(256 * KIB));
        assert_eq!(x.bytes_per_sec, zs.mib_per_sec * MIB as f64);
        assert!((x.iops - x.bytes_per_sec / (256 * KIB) as f64).abs() < 1e-6 * x.iops);
        assert_eq!(x.lat_mean_ns, Some(zs.lat_ms_mean * 1e6));
    }
}

/// Runs `iolab ARGS --db DB` and returns the new run's id ("saved as run N").
fn saved(db: &Path, args: &[&str]) -> String {
    let r = common::iolab_db(db, args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stderr
        .lines()
        .find_map(|l| l.strip_prefix("saved as run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("not saved: {}", r.stderr))
        .to_string()
}

/// `compare A B --json` succeeds and every cell of `cells` has IOPS and MiB/s rows with deltas.
fn compares(db: &Path, a: &str, b: &str, cells: &[&str]) -> serde_json::Value {
    let r = common::iolab_db(db, &["compare", a, b]);
    assert_eq!(r.code, 0, "compare {a} {b}: {}", r.stderr);
    for c in cells {
        assert!(r.stdout.contains(c), "{c}:\n{}", r.stdout);
    }
    let r = common::iolab_db(db, &["compare", a, b, "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = r.json();
    let rows = c["rows"].as_array().expect("rows");
    for cell in cells {
        let iops = rows
            .iter()
            .find(|r| r["cell"] == *cell && r["metric"] == "iops")
            .unwrap_or_else(|| panic!("no IOPS row for {cell}: {c}"));
        assert!(iops["sides"][1]["delta_pct"].is_number(), "{iops}");
        assert_eq!(iops["sides"][1]["verdict"], "no repetitions");
    }
    assert!(c["not_comparable"].as_array().unwrap().is_empty(), "{c}");
    c
}

/// CSV export of a run: its data rows, each by column name (no field of a suite row is quoted).
fn export_rows(db: &Path, id: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let r = common::iolab_db(db, &["export", id, "--format", "csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut lines = r.stdout.lines();
    let head: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|l| {
            head.iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn iozone_runs_compare_and_export_cell_by_cell() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let args = [
        "suite",
        "iozone",
        "--dir",
        dir.to_str().unwrap(),
        "--min-file",
        "64k",
        "--max-file",
        "128k",
        "--min-rec",
        "4k",
        "--max-rec",
        "8k",
        "-q",
    ];
    let a = saved(&db, &args);
    let b = saved(&db, &args);
    compares(
        &db,
        &a,
        &b,
        &[
            "write file=64KiB rec=4KiB",
            "write file=128KiB rec=8KiB",
            "random_read file=128KiB rec=4KiB",
            "record_rewrite file=64KiB rec=8KiB",
            "freread file=128KiB rec=8KiB",
        ],
    );
    // 2 file sizes × 2 records × 13 tests
    let rows = export_rows(&db, &a);
    assert_eq!(rows.len(), 2 * 2 * 13);
    let w = rows
        .iter()
        .find(|r| r["mode"] == "write file=128KiB rec=8KiB")
        .expect("the write row");
    assert_eq!(
        (
            w["op"].as_str(),
            w["threads"].as_str(),
            w["bs_bytes"].as_str()
        ),
        ("write", "1", "8192")
    );
    assert_eq!((w["ops"].as_str(), w["bytes"].as_str()), ("16", "131072"));
    let bps: f64 = w["bytes_per_sec"].parse().unwrap();
    let iops: f64 = w["iops"].parse().unwrap();
    assert!(bps > 0.0 && bps % 1024.0 == 0.0, "KB/s × 1024: {bps}");
    assert!((iops - bps / 8192.0).abs() < 1e-6 * iops);

    // show still renders the document: iozone's table, no metrics table
    let stored: serde_json::Value = {
        let r = common::iolab_db(&db, &["export", &a, "--format", "json"]);
        r.json()["runs"][0]["doc"]["result"].clone()
    };
    let r: IozoneResult = serde_json::from_value(stored).unwrap();
    let show = common::iolab_db(&db, &["show", &a]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let body = show.stdout.split_once('\n').unwrap().1;
    assert_eq!(body, iozone_table(&r) + &iozone_excel(&r));
}

#[test]
fn bonnie_runs_compare_and_export_test_by_test() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let args = [
        "suite",
        "bonnie",
        "--force",
        "--dir",
        dir.to_str().unwrap(),
        "--size",
        "8M",
        "--files",
        "1",
        "--seeks",
        "2000",
    ];
    let a = saved(&db, &args);
    let b = saved(&db, &args);
    let tests = [
        "putc",
        "put_block",
        "rewrite",
        "getc",
        "get_block",
        "seeks",
        "seq_create",
        "seq_stat",
        "seq_del",
        "ran_create",
        "ran_stat",
        "ran_del",
    ];
    compares(&db, &a, &b, &tests);
    let rows = export_rows(&db, &a);
    let modes: Vec<&str> = rows.iter().map(|r| r["mode"].as_str()).collect();
    assert_eq!(modes, tests);
    let seeks = &rows[5];
    assert_eq!(seeks["op"], "seek");
    assert_eq!(seeks["threads"], BONNIE_SEEK_THREADS.to_string());
    assert_eq!(seeks["ops"], "2000");
    for r in &rows {
        let max: f64 = r["lat_max_ns"].parse().unwrap();
        assert!(max >= 0.0 && max.fract() == 0.0, "whole ns: {r:?}");
        assert!(r["iops"].parse::<f64>().unwrap() > 0.0, "{r:?}");
    }
    let block = &rows[1];
    assert_eq!(
        (block["op"].as_str(), block["bs_bytes"].as_str()),
        ("write", "8192")
    );
    assert_eq!(block["bytes"], (8 * MIB).to_string());

    // show still renders the document: bonnie's table and CSV line
    let stored = common::iolab_db(&db, &["export", &a, "--format", "json"]).json()["runs"][0]
        ["doc"]["result"]
        .clone();
    let r: BonnieResult = serde_json::from_value(stored).unwrap();
    let show = common::iolab_db(&db, &["show", &a]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let body = show.stdout.split_once('\n').unwrap().1;
    assert_eq!(body, format!("{}{}", bonnie_table(&r), bonnie_csv(&r)));
}

#[test]
fn suite_and_zones_json_documents_carry_a_schema() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let img = d.path().join("disk.img");
    std::fs::write(&img, vec![7u8; 4 * MIB as usize]).unwrap();
    let dir_s = dir.to_str().unwrap();
    let iozone = [
        "suite",
        "iozone",
        "--dir",
        dir_s,
        "--min-file",
        "64k",
        "--max-file",
        "64k",
        "--min-rec",
        "4k",
        "--max-rec",
        "4k",
        "-q",
        "--json",
    ];
    let bonnie = [
        "suite", "bonnie", "--force", "--dir", dir_s, "--size", "8M", "--files", "1", "--seeks",
        "200", "--json",
    ];
    let zones = [
        "zones",
        img.to_str().unwrap(),
        "--zones",
        "2",
        "--per-zone",
        "1M",
        "--bs",
        "256k",
        "--json",
    ];
    for (args, schema) in [
        (&iozone[..], "iolab-iozone/1"),
        (&bonnie[..], "iolab-bonnie/2"),
        (&zones[..], "iolab-zones/2"),
    ] {
        let r = common::iolab_db(&db, args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let v = r.json();
        assert_eq!(v["schema"], schema, "{args:?}");
        // stored with it, and shown the same
        let id = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("saved as run "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap()
            .to_string();
        let shown = common::iolab_db(&db, &["show", &id, "--json"]).json();
        assert_eq!(shown["result"]["schema"], schema, "{shown}");
        assert_eq!(common::iolab_db(&db, &["show", &id]).code, 0);
    }
    // a document stored before the schema field reads as before
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("UPDATE runs SET doc = json_remove(doc, '$.result.schema');")
        .unwrap();
    drop(conn);
    for id in ["1", "2", "3"] {
        let r = common::iolab_db(&db, &["show", id]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
}

/// Bonnie++ and zones documents carry their units in their field names since `iolab-bonnie/2`
/// and `iolab-zones/2`; results stored in the `/1` layout (`max_latency_us`, `file_size`,
/// `chunk`, `bs`) read back in the new one, with the latency converted, not relabelled.
#[test]
fn bonnie_and_zones_stored_in_the_old_layout_show_in_the_new_one() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let img = d.path().join("disk.img");
    std::fs::write(&img, vec![7u8; 4 * MIB as usize]).unwrap();
    let bonnie = [
        "suite",
        "bonnie",
        "--force",
        "--dir",
        dir.to_str().unwrap(),
        "--size",
        "8M",
        "--files",
        "0",
        "--seeks",
        "200",
        "--json",
    ];
    let zones = [
        "zones",
        img.to_str().unwrap(),
        "--zones",
        "2",
        "--per-zone",
        "1M",
        "--bs",
        "256k",
        "--json",
    ];
    let saved = |r: &common::Run| {
        r.stderr
            .lines()
            .find_map(|l| l.strip_prefix("saved as run "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap()
            .to_string()
    };
    let b = common::iolab_db(&db, &bonnie);
    assert_eq!(b.code, 0, "{}", b.stderr);
    let new_b = b.json();
    assert_eq!(new_b["file_size_bytes"], 8 * MIB);
    assert_eq!(new_b["chunk_bytes"], 8 * KIB);
    assert!(new_b.get("file_size").is_none() && new_b.get("chunk").is_none());
    let lat_ns = new_b["put_block"]["max_latency_ns"].as_u64().unwrap();
    assert!(lat_ns > 0, "{new_b}");
    let z = common::iolab_db(&db, &zones);
    assert_eq!(z.code, 0, "{}", z.stderr);
    let new_z = z.json();
    assert_eq!(new_z["bs_bytes"], 256 * KIB);
    assert!(new_z.get("bs").is_none());
    let (bid, zid) = (saved(&b), saved(&z));

    // Rewrite the stored documents as an older iolab wrote them.
    let mut old_b = new_b.clone();
    let o = old_b.as_object_mut().unwrap();
    o.insert("schema".into(), "iolab-bonnie/1".into());
    let v = o.remove("file_size_bytes").unwrap();
    o.insert("file_size".into(), v);
    let v = o.remove("chunk_bytes").unwrap();
    o.insert("chunk".into(), v);
    for (_, t) in o.iter_mut() {
        if let Some(t) = t
            .as_object_mut()
            .filter(|t| t.contains_key("max_latency_ns"))
        {
            let ns = t.remove("max_latency_ns").unwrap().as_u64().unwrap();
            t.insert("max_latency_us".into(), (ns / 1000).into());
        }
    }
    let mut old_z = new_z.clone();
    let o = old_z.as_object_mut().unwrap();
    o.insert("schema".into(), "iolab-zones/1".into());
    let v = o.remove("bs_bytes").unwrap();
    o.insert("bs".into(), v);
    let conn = rusqlite::Connection::open(&db).unwrap();
    for (id, doc) in [(&bid, &old_b), (&zid, &old_z)] {
        let n = conn
            .execute(
                "UPDATE runs SET doc = json_set(doc, '$.result', json(?1)) WHERE id = ?2",
                rusqlite::params![doc.to_string(), id.parse::<i64>().unwrap()],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    drop(conn);

    let shown = common::iolab_db(&db, &["show", &bid, "--json"]).json();
    let r = &shown["result"];
    assert_eq!(r["file_size_bytes"], 8 * MIB, "{shown}");
    assert_eq!(r["chunk_bytes"], 8 * KIB);
    assert_eq!(r["put_block"]["max_latency_ns"], (lat_ns / 1000) * 1000);
    assert!(r["put_block"].get("max_latency_us").is_none());
    let shown = common::iolab_db(&db, &["show", &zid, "--json"]).json();
    assert_eq!(shown["result"]["bs_bytes"], 256 * KIB, "{shown}");
    // export gives the same layout
    let ex = common::iolab_db(&db, &["export", &bid, "--format", "json"]);
    assert_eq!(ex.code, 0, "{}", ex.stderr);
    let ex = ex.json();
    assert_eq!(
        ex["runs"][0]["doc"]["result"]["schema"], "iolab-bonnie/2",
        "{ex}"
    );
    assert_eq!(ex["runs"][0]["doc"]["result"]["chunk_bytes"], 8 * KIB);
    // and the table reads them too
    let t = common::iolab_db(&db, &["show", &bid]);
    assert_eq!(t.code, 0, "{}", t.stderr);
}

/// A Bonnie++ run refused for its values printed the RAM warning first (two lines): the values
/// are checked before anything is printed or created (issue 24).
#[test]
fn bonnie_values_are_refused_in_one_line_before_the_ram_warning() {
    let d = tempfile::tempdir().unwrap();
    let r = common::iolab(&[
        "suite",
        "bonnie",
        "--dir",
        d.path().to_str().unwrap(),
        "--size",
        "1",
        "--force",
        "--no-save",
    ]);
    common::assert_refused(&r, "--size 1B must be a positive multiple of --chunk 8KiB");
    assert!(entries(d.path()).is_empty());
}
