//! The text of `iolab show`, `compare`, `explain`, `env` and `check`, each compared whole with a
//! snapshot under tests/snapshots/ (`IOLAB_BLESS=1` rewrites them, as for the schemas and the
//! rule docs). The inputs are fixed: a store built from the fixture run and the fio and sysbench
//! import fixtures (the commands run as the binary, TZ=UTC), and fixture /proc, /sys and /etc
//! trees for `env` and `check`. Nothing of the host reaches the text; the one path that differs
//! per test (the temporary store) is replaced by `<DIR>`.

use crate::common::*;
use iolab::store::Store;
use std::path::{Path, PathBuf};
use std::process::Command;

const RUN: &str = include_str!("fixtures/report/run.json");

/// The store: run 1 (the fixture run), run 2 (the same run with its random reads 20 % slower),
/// runs 3 and 4 (imports of fio and sysbench output), and a group (runs 5 and 6: run 1, started
/// a minute and two minutes later, as the repetitions of one run); returns the group's id.
fn fixture_store(dir: &Path) -> (PathBuf, i64) {
    let db = dir.join("snap.db");
    let mut s = Store::open(&db).unwrap();
    let doc = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(RUN).unwrap();
        edit(&mut v);
        (iolab::model::run::RunDoc::from_json(&v).unwrap(), v)
    };
    let (d, v) = doc(&|_| {});
    s.save_run(&d, &v, None, None).unwrap();
    let (d, v) = doc(&|v| {
        v["label"] = "slower".into();
        let read = &mut v["runs"][0]["results"]["read"];
        for k in ["bytes", "ops"] {
            read[k] = (read[k].as_u64().unwrap() * 4 / 5).into();
        }
        for k in ["bytes_per_sec", "iops"] {
            read[k] = (read[k].as_f64().unwrap() * 0.8).into();
        }
    });
    s.save_run(&d, &v, None, None).unwrap();
    drop(s);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    for f in ["fio-randread.json", "sysbench-rndrw.txt"] {
        let f = fixtures.join(f);
        let r = iolab_db(
            &db,
            &["import", "--host", "fixture-host", f.to_str().unwrap()],
        );
        assert_eq!(r.code, 0, "import {}: {}", f.display(), r.stderr);
    }
    let mut s = Store::open(&db).unwrap();
    let g = s
        .new_group(iolab::model::stored::GroupKind::Repeat, Some("repeated"), 2)
        .unwrap();
    for i in 1..=2 {
        let (d, v) = doc(&|v| {
            v["label"] = "repeated".into();
            for k in ["start_time", "end_time"] {
                let t = v[k]
                    .as_str()
                    .unwrap()
                    .replace("T22:31", &format!("T22:4{i}"));
                v[k] = t.into();
            }
        });
        assert_eq!(
            s.save_run(&d, &v, Some((g, i)), None).unwrap(),
            4 + i64::from(i)
        );
    }
    (db, g)
}

/// `iolab ARGS --db DB` in UTC; its stdout, with the store's folder as `<DIR>`.
fn text(db: &Path, args: &[&str], code: i32) -> String {
    let o = Command::new(bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .env("TZ", "UTC")
        .env_remove("IOLAB_DB")
        .output()
        .unwrap();
    let r = to_run(o);
    assert_eq!(r.code, code, "iolab {args:?}: {}", r.stderr);
    let dir = db.parent().unwrap().to_str().unwrap();
    r.stdout.replace(dir, "<DIR>")
}

#[test]
fn show_compare_and_explain_print_their_snapshots() {
    let d = tempfile::tempdir().unwrap();
    let (db, g) = fixture_store(d.path());
    let g = format!("g{g}");
    let cases: &[(&str, &[&str])] = &[
        ("show-run.txt", &["show", "1"]),
        ("show-import-fio.txt", &["show", "3"]),
        ("show-import-sysbench.txt", &["show", "4"]),
        ("show-group.txt", &["show", g.as_str()]),
        ("compare-runs.txt", &["compare", "1", "2"]),
        ("compare-run-group.txt", &["compare", "2", g.as_str()]),
        ("explain-run.txt", &["explain", "1"]),
        ("explain-group.txt", &["explain", g.as_str()]),
    ];
    for (snap, args) in cases {
        let mut got = text(&db, args, 0);
        if *snap == "show-import-sysbench.txt" {
            // sysbench prints no start time: the import's time stands in for it
            let (head, rest) = got.split_once('\n').unwrap();
            let (run, at) = head.split_once(", ").unwrap();
            let (_, host) = at.split_once(" on ").unwrap();
            got = format!("{run}, <IMPORTED> on {host}\n{rest}");
        }
        assert_snapshot(snap, &got);
    }
}
