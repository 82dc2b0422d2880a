//! `iolab explain` and `iolab run --explain` on real runs that need no root: the null engine
//! (CPU bound) and a group of repetitions that disagree (noisy), through the store, `--json`,
//! `--output` and the HTML report. The root setups (cgroup throttle, page cache, FUSE queue
//! depth, ext4 serialisation) are in tests/root.rs and tests/layouts.rs; the hardware ones
//! (rotational array, misaligned partition) in tests/env_fixtures.rs.

use crate::common::*;
use iolab::model::run::RunDoc;
use iolab::store::Store;

#[test]
fn null_engine_is_cpu_bound_and_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(
        d.path(),
        &[
            "--mode",
            "rndrd,rndwr",
            "--engine",
            "null",
            "--files",
            "1",
            "--size",
            "4M",
            "--time",
            "1",
            "--explain",
        ],
    );
    let e = &v["explain"];
    assert_eq!(explain_rules(e), [["cpu_bound"], ["cpu_bound"]], "{e:#}");
    let f = &e["cells"][0]["findings"][0];
    assert_eq!(f["layer"], "cpu");
    assert_eq!(f["confidence"], "high");
    let ev = f["evidence"].as_str().unwrap();
    assert!(
        ev.contains("% of one CPU") && ev.contains("per thread"),
        "{ev}"
    );
    assert!(
        f["next"]
            .as_str()
            .unwrap()
            .starts_with("iolab run --mode rndrd")
    );
    // the document itself is unchanged beside the added key
    assert_eq!(v["schema"], "iolab-run/1");
}

#[test]
fn explain_of_a_stored_run_text_json_output_and_report() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let dir = d.path().join("set");
    std::fs::create_dir(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let r = iolab_db(
        &db,
        &[
            "run",
            "--dir",
            dir,
            "--mode",
            "rndrd",
            "--engine",
            "null",
            "--files",
            "1",
            "--size",
            "4M",
            "--time",
            "1",
            "-q",
            "--explain",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // the table, then the explanation, naming the stored run
    let at = r.stdout.find("explain run 1\n").expect(&r.stdout);
    assert!(r.stdout[..at].contains("rndrd"), "{}", r.stdout);
    assert!(r.stdout[at..].contains("cpu: cpu_bound [high confidence]"));
    let t = iolab_db(&db, &["explain", "1"]);
    assert_eq!(t.code, 0, "{}", t.stderr);
    assert!(t.stdout.starts_with("explain run 1\n"), "{}", t.stdout);
    for k in ["evidence: ", "why: ", "next: iolab run "] {
        assert!(t.stdout.contains(k), "{k}: {}", t.stdout);
    }
    let j = iolab_db(&db, &["explain", "1", "--json"]);
    assert_eq!(explain_rules(&j.json()), [["cpu_bound"]]);
    let out = d.path().join("e.json");
    let o = iolab_db(
        &db,
        &["explain", "1", "--json", "--output", out.to_str().unwrap()],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), j.stdout);
    // the report shows it
    let html = d.path().join("r.html");
    let rep = iolab_db(&db, &["report", "1", "-o", html.to_str().unwrap()]);
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(
        h.contains("<h2>Explanation</h2>") && h.contains("cpu_bound"),
        "no explanation in the report"
    );
    // unknown ids are usage errors
    assert_eq!(iolab_db(&db, &["explain", "99"]).code, 2);
}

/// Three runs of the same job whose rates disagree (paced at 100, 200 and 400 IOPS), stored as
/// one group of repetitions: noisy, and nothing else, for every cell; the run alone is not.
#[test]
fn a_group_whose_repetitions_disagree_is_noisy() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let mut s = Store::open_write(&db).unwrap();
    let g = s
        .new_group(iolab::model::stored::GroupKind::Repeat, Some("noisy"), 3)
        .unwrap();
    let mut ids = Vec::new();
    for (i, rate) in ["100", "200", "400"].iter().enumerate() {
        let v = run_json(
            d.path(),
            &[
                "--mode", "rndrd", "--files", "1", "--size", "4M", "--time", "1", "--rate", rate,
            ],
        );
        let doc = RunDoc::from_json(&v).unwrap();
        ids.push(s.save_run(&doc, &v, Some((g, i as u32 + 1)), None).unwrap());
    }
    drop(s);
    let r = iolab_db(&db, &["explain", &format!("g{g}"), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let e = r.json();
    assert_eq!(e["subject"], format!("group g{g}"));
    assert_eq!(explain_rules(&e), [["noisy"]], "{e:#}");
    let f = &e["cells"][0]["findings"][0];
    assert_eq!(f["layer"], "noise");
    let ev = f["evidence"].as_str().unwrap();
    assert!(ev.contains("3 repetitions") && ev.contains("CV"), "{ev}");
    assert!(f["next"].as_str().unwrap().contains("--repeat "), "{f}");
    // one run of the group alone: paced by --rate, no limit named
    let one = iolab_db(&db, &["explain", &ids[0].to_string(), "--json"]).json();
    assert_eq!(explain_rules(&one), [["none"]], "{one:#}");
    assert!(
        one["cells"][0]["findings"][0]["evidence"]
            .as_str()
            .unwrap()
            .contains("paced by --rate 100")
    );
}

/// `--repeat --explain` without a store explains the repetitions it just ran; fio's formats
/// have no place for it.
#[test]
fn run_repeat_explain_and_fio_formats() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--mode",
        "rndrd",
        "--engine",
        "null",
        "--files",
        "1",
        "--size",
        "4M",
        "--time",
        "0.5",
        "-q",
        "--no-save",
        "--repeat",
        "2",
        "--explain",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("explain these repetitions\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("cpu: cpu_bound") || r.stdout.contains("noise: noisy"));
    let r = iolab(&[
        "run",
        "--dir",
        dir,
        "--mode",
        "rndrd",
        "--engine",
        "null",
        "--files",
        "1",
        "--size",
        "4M",
        "--time",
        "0.5",
        "-q",
        "--no-save",
        "--explain",
        "--output-format",
        "fio-json",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--explain"), "{}", r.stderr);
}

/// A roles phase is explained as its totals and then role by role (`role NAME (mode)`), each
/// role on its own job and results with the phase's shared device and CPU figures: the warm
/// buffered reads are the page cache, the null engine's role is CPU bound (it does no I/O), and
/// neither gets the other's finding.
#[test]
fn roles_are_explained_one_by_one_with_their_own_findings() {
    let d = tempfile::tempdir().unwrap();
    if iolab::system::fsinfo::fs_type(d.path()) == "tmpfs" {
        return skip(
            "roles_are_explained_one_by_one_with_their_own_findings",
            "the temp dir is tmpfs: --warm's residency is not measured there",
        );
    }
    let v = run_json(
        d.path(),
        &[
            "--files",
            "1",
            "--size",
            "4M",
            "--time",
            "1",
            "--warm",
            "--role",
            "reads:mode=rndrd,engine=sync,threads=1",
            "--role",
            "cpu:mode=rndrd,engine=null,threads=1",
            "--explain",
        ],
    );
    let e = &v["explain"];
    let cells = e["cells"].as_array().unwrap();
    let modes: Vec<&str> = cells.iter().map(|c| c["mode"].as_str().unwrap()).collect();
    assert_eq!(
        modes,
        ["roles", "role reads (rndrd)", "role cpu (rndrd)"],
        "{e:#}"
    );
    assert!(cells[0].get("role").is_none(), "{e:#}");
    assert_eq!(cells[1]["role"], "reads");
    assert_eq!(cells[2]["role"], "cpu");
    let rules = explain_rules(e);
    // the phase's totals: the reads' cache (the null role's reads are left out of the bytes)
    assert_eq!(rules[0][0], "page_cache", "{e:#}");
    assert_eq!(rules[1], ["page_cache"], "{e:#}");
    assert_eq!(rules[2], ["cpu_bound"], "{e:#}");
    let reads = &cells[1]["findings"][0];
    assert!(
        reads["evidence"]
            .as_str()
            .unwrap()
            .contains("in the page cache"),
        "{reads:#}"
    );
    assert!(reads["next"].as_str().unwrap().contains("--engine sync"));
    let cpu = &cells[2]["findings"][0];
    let ev = cpu["evidence"].as_str().unwrap();
    assert!(
        ev.contains("role cpu uses the null engine") && ev.contains("whole phase's"),
        "{ev}"
    );
    assert!(cpu["next"].as_str().unwrap().contains("--engine null"));
    // the text: one block per role
    let text = iolab::output::explain::render(
        &serde_json::from_value::<iolab::analysis::explain::Explanation>(e.clone()).unwrap(),
    );
    assert!(text.contains("\nrole reads (rndrd) ("), "{text}");
    assert!(text.contains("\nrole cpu (rndrd) ("), "{text}");
}
