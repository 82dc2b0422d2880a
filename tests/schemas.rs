//! docs/schemas/ holds one JSON Schema per document kind, generated from the Rust types
//! (`iolab::output::schemas::json_schemas`, schemars): each file must equal what the types give, so
//! the published schemas cannot drift from the documents. After changing a document type,
//! regenerate them with
//!
//! ```sh
//! IOLAB_BLESS=1 cargo test --test integration schemas::
//! ```
//!
//! which rewrites the files instead of failing. The documents the commands print are validated
//! against their schema (jsonschema): every kind, each produced by running its command, but
//! `iolab db` against a server (its sqlite document is validated; the servers' differ only in
//! `settings`) and the run of several ranks (tests/mpi.rs).

use crate::common;

use crate::common::*;
use iolab::model::schema;
use iolab::output::schemas::{WITHOUT_JSON_SCHEMA, json_schemas};
use serde_json::Value;
use std::path::PathBuf;

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schemas")
}

fn pretty(v: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap())
}

#[test]
fn docs_schemas_are_generated_from_the_types() {
    let bless = std::env::var("IOLAB_BLESS").as_deref() == Ok("1");
    let mut stale = Vec::new();
    for (id, s) in json_schemas() {
        let path = schema_dir().join(schema::file_name(id));
        let want = pretty(&s);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(want.as_str()) {
            continue;
        }
        if bless {
            std::fs::create_dir_all(schema_dir()).unwrap();
            std::fs::write(&path, want).unwrap();
            eprintln!("IOLAB_BLESS=1: rewrote {}", path.display());
        } else {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "differ from the types: {stale:?}; regenerate with IOLAB_BLESS=1 cargo test --test integration schemas::"
    );
    // no schema file of a kind the types do not give
    let ids: Vec<String> = json_schemas()
        .iter()
        .map(|(id, _)| schema::file_name(id))
        .collect();
    for e in std::fs::read_dir(schema_dir()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            ids.contains(&name),
            "docs/schemas/{name}: no such document type"
        );
    }
}

/// Every document kind has a schema or is listed, with its reason, as having none: none
/// forgotten, none twice, no schema of a kind that is not a document.
#[test]
fn every_kind_is_accounted_for() {
    let with: Vec<&str> = json_schemas().iter().map(|(id, _)| *id).collect();
    for id in schema::DOCUMENTS {
        let without = WITHOUT_JSON_SCHEMA.iter().any(|(k, _)| k == id);
        assert!(with.contains(id) != without, "{id}: a schema xor a reason");
    }
    for id in &with {
        assert!(schema::DOCUMENTS.contains(id), "{id}: not in DOCUMENTS");
    }
    assert_eq!(
        with.len(),
        schema::DOCUMENTS.len() - WITHOUT_JSON_SCHEMA.len()
    );
}

/// The document validates against the schema of its `schema` field.
fn assert_valid(doc: &Value) {
    assert_valid_as(
        doc["schema"].as_str().expect("a document names its schema"),
        doc,
    );
}

/// The document validates against the schema of `id` (an embedded part names none).
fn assert_valid_as(id: &str, doc: &Value) {
    let (_, s) = json_schemas()
        .into_iter()
        .find(|(k, _)| *k == id)
        .unwrap_or_else(|| panic!("no JSON Schema for {id}"));
    let v = jsonschema::validator_for(&s).expect("a valid JSON Schema");
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{id}: {errors:#?}\n{doc:#}");
}

/// `doc` is a document of kind `id` (its `schema` field says so) and valid against its schema.
fn validate(id: &str, doc: &Value) {
    assert_eq!(doc["schema"], id, "{doc:#}");
    assert_valid_as(id, doc);
}

/// Every document kind is validated by a test here: this file calls `validate(schema::NAME, ...)`
/// for each id of `schema::DOCUMENTS` (read from model/schema.rs's `pub const NAME: &str`).
#[test]
fn every_kind_is_validated_by_a_test() {
    let consts = include_str!("../src/model/schema.rs");
    let me: String = include_str!("schemas.rs")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    for id in schema::DOCUMENTS {
        let name = consts
            .lines()
            .find_map(|l| {
                let (name, val) = l.strip_prefix("pub const ")?.split_once(": &str = ")?;
                (val == format!("\"{id}\";")).then_some(name)
            })
            .unwrap_or_else(|| panic!("{id}: no const in model/schema.rs"));
        assert!(
            me.contains(&format!("validate(schema::{name},")),
            "{id}: no test validates a {name} document"
        );
    }
}

/// A schema refuses a field of the wrong type (a number as a string), not only a missing one.
#[test]
fn a_wrong_field_type_fails() {
    let d = tempfile::tempdir().unwrap();
    let mut v = run_json(
        d.path(),
        &["--mode", "seqwr", "--size", "1MiB", "--ops", "16"],
    );
    validate(schema::RUN, &v);
    let (_, s) = json_schemas()
        .into_iter()
        .find(|(k, _)| *k == schema::RUN)
        .unwrap();
    let run = jsonschema::validator_for(&s).unwrap();
    let mut wrong = v.clone();
    wrong["results"]["write"]["iops"] = "fast".into();
    assert!(!run.is_valid(&wrong));
    // nor does a document of another kind pass
    v["schema"] = schema::DB.into();
    assert!(!run.is_valid(&v));
    // a document assembled where it is printed is closed: a field its shape lacks fails
    let (_, s) = json_schemas()
        .into_iter()
        .find(|(k, _)| *k == schema::LIST)
        .unwrap();
    let list = jsonschema::validator_for(&s).unwrap();
    let mut v = serde_json::json!({"schema": schema::LIST, "runs": []});
    assert!(list.is_valid(&v));
    v["extra"] = 1.into();
    assert!(!list.is_valid(&v));
}

/// A results store and a data folder in one temporary folder.
struct Kit {
    d: tempfile::TempDir,
    db: PathBuf,
    data: PathBuf,
}

impl Kit {
    fn new() -> Kit {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("r.db");
        let data = d.path().join("data");
        std::fs::create_dir(&data).unwrap();
        Kit { d, db, data }
    }
    fn data(&self) -> &str {
        self.data.to_str().unwrap()
    }
    /// iolab with `args` against this store; asserts exit `code`.
    fn code(&self, code: i32, args: &[&str]) -> Run {
        let r = iolab_db(&self.db, args);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        r
    }
    fn ok(&self, args: &[&str]) -> Run {
        self.code(0, args)
    }
    fn json(&self, args: &[&str]) -> Value {
        self.ok(args).json()
    }
}

/// A run of one mode, one of several, with `--explain`, with `--live`, and `--repeat`.
#[test]
fn run_documents_validate() {
    let k = Kit::new();
    let tiny = ["--files", "1", "--size", "1MiB", "-q"];
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--dir", k.data(), "--json", "--no-save"];
        a.extend_from_slice(&tiny);
        a.extend_from_slice(extra);
        k.json(&a)
    };
    let one = run(&["--mode", "rndrw", "--ops", "64"]);
    // runs[] in every run document, the single mode's fields at the top level too
    assert_eq!(one["runs"].as_array().unwrap().len(), 1);
    assert_eq!(one["runs"][0]["mode"], "rndrw");
    assert_eq!(one["mode"], "rndrw");
    assert_eq!(one["runs"][0]["results"], one["results"]);
    validate(schema::RUN, &one);
    let several = run(&[
        "--mode",
        "seqwr,rndrd",
        "--bs",
        "4k:50,16k:50",
        "--ops",
        "64",
    ]);
    assert_eq!(several["runs"].as_array().unwrap().len(), 2);
    validate(schema::RUN, &several);
    let explained = run(&["--mode", "rndrd", "--ops", "64", "--explain"]);
    validate(schema::RUN, &explained);
    validate(schema::EXPLAIN, &explained["explain"]);
    // a run of roles: roles[] in its cell
    let roles = run(&[
        "--time",
        "1",
        "--role",
        "a:mode=rndrd",
        "--role",
        "b:mode=seqwr,size=512KiB",
    ]);
    assert_eq!(roles["roles"].as_array().unwrap().len(), 2, "{roles}");
    validate(schema::RUN, &roles);

    // --live: one line per measured second
    let live = k.d.path().join("live.ndjson");
    run(&[
        "--mode",
        "rndrd",
        "--time",
        "1",
        "--live",
        live.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&live).unwrap();
    assert!(text.lines().count() >= 1, "no --live line");
    for l in text.lines() {
        validate(schema::LIVE, &serde_json::from_str(l).unwrap());
    }

    let repeat = k.json(&[
        "run",
        "--dir",
        k.data(),
        "--json",
        "--mode",
        "seqrd",
        "--repeat",
        "2",
        "--files",
        "1",
        "--size",
        "1MiB",
        "--ops",
        "32",
        "--explain",
        "-q",
    ]);
    validate(schema::REPEAT, &repeat);
    validate(schema::EXPLAIN, &repeat["explain"]);
    let runs = repeat["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        validate(schema::RUN, r);
    }

    // a job file of two phases: runs[] and `jobfile`; json+ adds hist_bins
    let job = k.d.path().join("two.fio");
    let text = format!(
        "[global]\nbs=4k\nsize=1m\ndirectory={}\n[a]\nrw=randread\n[b]\nstonewall\nrw=read\n",
        k.data()
    );
    std::fs::write(&job, text).unwrap();
    let job = job.to_str().unwrap();
    let v = k.json(&["run", job, "--output-format", "json+", "--no-save", "-q"]);
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(2), "{v}");
    assert!(v["jobfile"].is_object() && v["runs"][0]["results"]["read"]["hist_bins"].is_array());
    validate(schema::RUN, &v);
}

/// What the store gives back: list, show of a run and of a group, explain, compare, export,
/// store copy, and an import shown.
#[test]
fn stored_documents_validate() {
    let k = Kit::new();
    let r = k.ok(&[
        "run",
        "--dir",
        k.data(),
        "--mode",
        "rndrd",
        "--repeat",
        "2",
        "--files",
        "1",
        "--size",
        "1MiB",
        "--ops",
        "32",
        "-q",
    ]);
    assert!(r.stderr.contains("g1"), "{}", r.stderr);
    let list = k.json(&["list", "--json"]);
    validate(schema::LIST, &list);
    assert_eq!(list["runs"].as_array().unwrap().len(), 2);
    validate(schema::RUN, &k.json(&["show", "1", "--json"]));
    validate(schema::GROUP, &k.json(&["show", "g1", "--json"]));
    validate(schema::EXPLAIN, &k.json(&["explain", "1", "--json"]));
    validate(schema::EXPLAIN, &k.json(&["explain", "g1", "--json"]));
    validate(schema::COMPARE, &k.json(&["compare", "1", "2", "--json"]));
    let import = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    for f in ["fio-randrw-jsonplus.json", "sysbench-rndrw.txt"] {
        k.ok(&["import", import.join(f).to_str().unwrap()]);
    }
    validate(schema::IMPORT, &k.json(&["show", "3", "--json"]));
    validate(schema::IMPORT, &k.json(&["show", "4", "--json"]));
    let export = k.json(&["export", "1", "2", "3", "4", "--format", "json"]);
    validate(schema::EXPORT, &export);
    let docs: Vec<&Value> = export["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["doc"])
        .collect();
    assert_eq!(docs.len(), 4);
    for d in docs {
        assert_valid(d);
    }
    let to = k.d.path().join("copy.db");
    let copied = k.json(&[
        "store",
        "copy",
        "--from",
        k.db.to_str().unwrap(),
        "--to",
        to.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(copied["copied"].as_array().unwrap().len(), 4, "{copied}");
    validate(schema::STORE_COPY, &copied);
}

/// env, check, fsync-probe and iostat.
#[test]
fn system_documents_validate() {
    let k = Kit::new();
    validate(schema::ENV, &k.json(&["env", "--json", k.data()]));
    // check exits 1 when it warns about something
    let c = iolab_db(&k.db, &["check", "--json", k.data()]);
    assert!(c.code == 0 || c.code == 1, "{}", c.stderr);
    validate(schema::CHECK, &c.json());
    validate(
        schema::FSYNC_PROBE,
        &k.json(&[
            "fsync-probe",
            k.data(),
            "--count",
            "5",
            "--writers",
            "1",
            "--json",
        ]),
    );
    let r = k.ok(&["iostat", "--json", "--count", "2", "--interval", "0.1"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    for l in lines {
        validate(schema::IOSTAT, &serde_json::from_str(l).unwrap());
    }
}

/// A sweep and a saturation search, as they run and as shown from the store.
#[test]
fn experiment_documents_validate() {
    let k = Kit::new();
    let common = [
        "--dir",
        k.data(),
        "--files",
        "1",
        "--size",
        "1MiB",
        "--mode",
        "rndrd",
        "-q",
    ];
    let mut a = vec!["sweep", "--threads", "1,2", "--ops", "32", "--json"];
    a.extend_from_slice(&common);
    let sweep = k.json(&a);
    assert_eq!(sweep["cells"].as_array().unwrap().len(), 2, "{sweep}");
    validate(schema::SWEEP, &sweep);
    validate(schema::SWEEP, &k.json(&["show", "g1", "--json"]));
    let mut a = vec![
        "saturate",
        "--target",
        "iops>=1",
        "--over",
        "threads=1..2",
        "--max-steps",
        "2",
        "--ops",
        "32",
        "--json",
    ];
    a.extend_from_slice(&common);
    let sat = k.json(&a);
    validate(schema::SATURATE, &sat);
    validate(schema::SATURATE, &k.json(&["show", "g2", "--json"]));
}

/// IOZone, Bonnie++, zones, SNIA PTS and a capture's fingerprint, each tiny.
#[test]
fn suite_documents_validate() {
    let k = Kit::new();
    let iozone = k.json(&[
        "suite",
        "iozone",
        "--dir",
        k.data(),
        "--min-file",
        "64k",
        "--max-file",
        "64k",
        "--min-rec",
        "4k",
        "--max-rec",
        "4k",
        "--json",
        "--no-save",
        "-q",
    ]);
    validate(schema::IOZONE, &iozone);
    let bonnie = k.json(&[
        "suite",
        "bonnie",
        "--force",
        "--dir",
        k.data(),
        "--size",
        "8M",
        "--files",
        "1",
        "--json",
        "--no-save",
    ]);
    validate(schema::BONNIE, &bonnie);
    let f = k.d.path().join("disk.img");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let zones = k.json(&[
        "zones",
        f.to_str().unwrap(),
        "--zones",
        "4",
        "--per-zone",
        "64k",
        "--bs",
        "64k",
        "--json",
        "--no-save",
    ]);
    validate(schema::ZONES, &zones);
    let pts = k.json(&[
        "suite",
        "pts",
        "--dir",
        k.data(),
        "--size",
        "4M",
        "--tests",
        "latency,wsat",
        "--cell-time",
        "0.02",
        "--max-rounds",
        "5",
        "--wsat-time",
        "0.5",
        "--wsat-round",
        "0.1",
        "--json",
        "--no-save",
    ]);
    validate(schema::PTS, &pts);
    // a capture of two requests, as iolab capture writes it
    let cap = k.d.path().join("cap.ndjson");
    std::fs::write(
        &cap,
        concat!(
            r#"{"schema":"iolab-capture/1","iolab_version":"t","device":"loop9","majmin":"7:9","start":"2026-11-29T10:00:00.000Z","host":"h","kernel":"k","source":"t"}"#,
            "\n",
            r#"{"t_ns":1000,"dir":"read","offset_bytes":0,"size_bytes":4096,"lat_ns":5000,"qd":1,"pid":1,"comm":"x"}"#,
            "\n",
            r#"{"t_ns":2000000,"dir":"write","offset_bytes":8192,"size_bytes":4096,"flags":["sync"],"lat_ns":9000,"qd":2,"pid":1,"comm":"x"}"#,
            "\n"
        ),
    )
    .unwrap();
    let fp = k.json(&["fingerprint", cap.to_str().unwrap(), "--json", "--no-save"]);
    validate(schema::FINGERPRINT, &fp);
}

/// `iolab db` against SQLite (a file here; the servers' documents have the same fields).
#[test]
fn db_document_validates() {
    let k = Kit::new();
    let url = format!("sqlite://{}", k.d.path().join("bench.db").display());
    let v = k.json(&[
        "db",
        "--json",
        "-q",
        "--url",
        &url,
        "--test",
        "point-select",
        "--transactions",
        "10",
        "--table-size",
        "100",
        "--no-save",
    ]);
    validate(schema::DB, &v);
}

/// `crashcheck write` and `verify` with a journal file; `run --verify`'s state file and
/// `iolab verify`.
#[test]
fn crashcheck_and_verify_documents_validate() {
    let k = Kit::new();
    let journal = k.d.path().join("j.journal");
    let js = journal.to_str().unwrap();
    let crashcheck = |args: &[&str]| {
        let mut a = vec!["crashcheck"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--dir", k.data(), "--journal", js, "--json", "--no-save"]);
        k.json(&a)
    };
    let w = crashcheck(&["write", "--size", "1M", "--count", "20"]);
    assert_eq!(w["phase"], "write");
    validate(schema::CRASHCHECK, &w);
    let v = crashcheck(&["verify"]);
    assert_eq!(v["phase"], "verify");
    validate(schema::CRASHCHECK, &v);

    let set = k.d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let dir = set.to_str().unwrap();
    k.ok(&[
        "run",
        "--dir",
        dir,
        "--mode",
        "seqwr",
        "--bs",
        "16k",
        "--files",
        "1",
        "--size",
        "1M",
        "--ops",
        "64",
        "--verify",
        "--keep",
        "--json",
        "--no-save",
        "-q",
    ]);
    let state = std::fs::read(set.join(".iolab-verify")).unwrap();
    let head = state.split(|b| *b == b'\n').next().unwrap();
    validate(schema::VERIFY_STATE, &serde_json::from_slice(head).unwrap());
    validate(schema::VERIFY, &k.json(&["verify", "--dir", dir, "--json"]));
}

/// `iolab capture`: the capture file's first line and its summary (printed with --json and the
/// file's last line). Root only: it reads the kernel's trace events.
#[test]
fn capture_documents_validate() {
    if let Some(why) = common::blk::cannot(false) {
        return skip("capture_documents_validate", &why);
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("img");
    common::blk::sh(&format!("truncate -s 16M {}", img.display()));
    let dev = common::blk::sh(&format!("losetup --find --show {}", img.display()));
    let out = d.path().join("cap.ndjson");
    let mut child = std::process::Command::new(bin())
        .args([
            "capture",
            "--device",
            &dev,
            "--time",
            "60",
            "--max-events",
            "16",
        ])
        .args(["--json", "-o"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // its events on (the instance's enable file), wherever tracefs is
    let pid = child.id();
    let t0 = std::time::Instant::now();
    while ![
        "/sys/kernel/tracing".to_string(),
        format!("/run/iolab-tracefs-{pid}"),
    ]
    .iter()
    .any(|t| {
        std::fs::read_to_string(format!(
            "{t}/instances/iolab-{pid}/events/block/block_rq_issue/enable"
        ))
        .is_ok_and(|s| s.trim() == "1")
    }) {
        assert!(
            t0.elapsed() < READY_TIMEOUT,
            "the capture never enabled its events"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = common::blk::sh(&format!(
        "dd if={dev} of=/dev/null bs=4k count=64 iflag=direct 2>&1"
    ));
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let ok = child.wait().unwrap().success();
    let _ = std::process::Command::new("losetup")
        .args(["-d", &dev])
        .status();
    assert!(ok, "{stdout}");
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    validate(schema::CAPTURE_SUMMARY, &printed);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    validate(schema::CAPTURE, &lines[0]);
    validate(schema::CAPTURE_SUMMARY, lines.last().unwrap());
    assert_eq!(lines.len(), 18, "16 requests: {text}");
}
