//! docs/check.md's rule list is generated from `iolab::analysis::check::RULES`: the text between
//! `<!-- rules:begin -->` and `<!-- rules:end -->` must equal `check::rules_markdown()` exactly,
//! so the docs cannot drift from the rules. After changing a rule, regenerate it with
//!
//! ```sh
//! IOLAB_BLESS=1 cargo test --test integration check_docs::
//! ```
//!
//! which rewrites that section of docs/check.md instead of failing. Every rule must also be
//! exercised by the fixture tests: `every_rule_fires_on_a_fixture` in tests/env_fixtures.rs makes
//! each one fire, and the test here checks that tests/env_fixtures.rs asserts each id.

use iolab::analysis::check;
use std::path::PathBuf;

const BEGIN: &str = "<!-- rules:begin -->\n";
const END: &str = "<!-- rules:end -->";

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/check.md")
}

/// (text before the section, the section, text from the end marker on).
fn split(doc: &str) -> (&str, &str, &str) {
    let b = doc
        .find(BEGIN)
        .unwrap_or_else(|| panic!("docs/check.md has no {BEGIN:?} line"))
        + BEGIN.len();
    let e = b + doc[b..]
        .find(END)
        .unwrap_or_else(|| panic!("docs/check.md has no {END:?} after {BEGIN:?}"));
    (&doc[..b], &doc[b..e], &doc[e..])
}

#[test]
fn docs_rule_list_is_generated_from_the_table() {
    let path = doc_path();
    let doc = std::fs::read_to_string(&path).expect("read docs/check.md");
    let (before, section, after) = split(&doc);
    let want = check::rules_markdown();
    // The docs name the effect a rule guards against, not the article that reported it.
    for text in [before, want.as_str(), after] {
        assert!(!text.to_lowercase().contains("seed 00"), "{text}");
    }
    if section == want {
        return;
    }
    if std::env::var("IOLAB_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, format!("{before}{want}{after}")).expect("write docs/check.md");
        eprintln!("IOLAB_BLESS=1: rewrote the rule list in {}", path.display());
        return;
    }
    panic!(
        "docs/check.md's rule list differs from check::rules_markdown(); regenerate it with \
         IOLAB_BLESS=1 cargo test --test integration check_docs::\n--- docs/check.md\n{section}\n--- rules_markdown()\n{want}"
    );
}

/// Each id appears as a string in tests/env_fixtures.rs (the fixture tests that make the rule
/// fire and that keep it quiet); `every_rule_fires_on_a_fixture` there checks that it fires.
#[test]
fn every_rule_is_named_by_a_fixture_test() {
    let src = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/env_fixtures.rs"),
    )
    .expect("read tests/env_fixtures.rs");
    assert!(
        src.contains("fn every_rule_fires_on_a_fixture()"),
        "tests/env_fixtures.rs lost every_rule_fires_on_a_fixture"
    );
    let missing: Vec<&str> = check::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !src.contains(&format!("\"{id}\"")))
        .collect();
    assert!(
        missing.is_empty(),
        "rules no test in tests/env_fixtures.rs names: {missing:?}"
    );
}

/// docs/explain.md's rule list is generated from `iolab::analysis::explain::rules::RULES` the same way.
#[test]
fn explain_docs_rule_list_is_generated_from_the_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/explain.md");
    let doc = std::fs::read_to_string(&path).expect("read docs/explain.md");
    let (before, section, after) = split(&doc);
    let want = iolab::analysis::explain::rules::rules_markdown();
    if section == want {
        return;
    }
    if std::env::var("IOLAB_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, format!("{before}{want}{after}")).expect("write docs/explain.md");
        eprintln!("IOLAB_BLESS=1: rewrote the rule list in {}", path.display());
        return;
    }
    panic!(
        "docs/explain.md's rule list differs from explain::rules_markdown(); regenerate it with \
         IOLAB_BLESS=1 cargo test --test integration check_docs::\n--- docs/explain.md\n{section}\n--- rules_markdown()\n{want}"
    );
}

/// Each explain rule is asserted by a test on a real setup or a fixture tree.
#[test]
fn every_explain_rule_is_named_by_a_test() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
    let src: String = [
        "explain.rs",
        "root.rs",
        "layouts.rs",
        "env_fixtures.rs",
        "honesty.rs",
        "steady.rs",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(dir.join(f)).expect("read a test file"))
    .collect();
    let missing: Vec<&str> = iolab::analysis::explain::rules::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !src.contains(&format!("[\"{id}\"]")) && !src.contains(&format!("\"{id}\"]")))
        .collect();
    assert!(
        missing.is_empty(),
        "explain rules no test asserts: {missing:?}"
    );
}

/// The section of `doc` from the heading `head` to the next `## ` heading.
fn section<'a>(doc: &'a str, head: &str) -> &'a str {
    let b = doc
        .find(head)
        .unwrap_or_else(|| panic!("docs/fio-jobs.md has no {head:?}"));
    let rest = &doc[b + head.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

const OPTIONS_BEGIN: &str = "<!-- fio-options:begin -->\n";
const OPTIONS_END: &str = "<!-- fio-options:end -->";

/// docs/fio-jobs.md's table of fio options is generated from `spec::fio_options::OPTIONS`
/// (`markdown()`): every option, supported / approximated (how) / refused (why), so it cannot
/// drift from what the job-file reader does. `IOLAB_BLESS=1 cargo test --test integration check_docs::`
/// rewrites it. Its Verification table names every checksum `verify=` takes.
#[test]
fn fio_jobs_docs_option_table_is_generated_from_the_table() {
    use iolab::cli::fiojob::FIO_CHECKSUMS;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/fio-jobs.md");
    let doc = std::fs::read_to_string(&path).expect("read docs/fio-jobs.md");
    let b = doc
        .find(OPTIONS_BEGIN)
        .unwrap_or_else(|| panic!("docs/fio-jobs.md has no {OPTIONS_BEGIN:?} line"))
        + OPTIONS_BEGIN.len();
    let e = b + doc[b..]
        .find(OPTIONS_END)
        .unwrap_or_else(|| panic!("docs/fio-jobs.md has no {OPTIONS_END:?}"));
    let want = iolab::spec::fio_options::markdown();
    if doc[b..e] != want {
        if std::env::var("IOLAB_BLESS").as_deref() == Ok("1") {
            std::fs::write(&path, format!("{}{want}{}", &doc[..b], &doc[e..]))
                .expect("write docs/fio-jobs.md");
            eprintln!(
                "IOLAB_BLESS=1: rewrote the option table in {}",
                path.display()
            );
        } else {
            panic!(
                "docs/fio-jobs.md's option table differs from spec::fio_options::markdown(); regenerate it with IOLAB_BLESS=1 cargo test --test integration check_docs::\n--- docs\n{}\n--- markdown()\n{want}",
                &doc[b..e]
            );
        }
    }
    let verification = section(&doc, "\n## Verification\n");
    let missing: Vec<&&str> = FIO_CHECKSUMS
        .iter()
        .filter(|c| !verification.contains(&format!("`{c}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "verify= checksums docs/fio-jobs.md's Verification section does not name: {missing:?}"
    );
}
