//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_iolab")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Prints the skip line that scripts/test.sh counts.
pub fn skip(test: &str, reason: &str) {
    eprintln!("SKIP: {test}: {reason}");
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }
}

fn to_run(o: Output) -> Run {
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs iolab with the arguments.
pub fn iolab(args: &[&str]) -> Run {
    iolab_db(&test_db(), args)
}

/// A results store private to this test process (tests that want their own pass --db).
pub fn test_db() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("iolab-test-{}.db", std::process::id()))
}

/// Runs iolab with the arguments against the store `db`.
pub fn iolab_db(db: &Path, args: &[&str]) -> Run {
    to_run(
        Command::new(bin())
            .args(args)
            .env("IOLAB_DB", db)
            .output()
            .expect("run iolab"),
    )
}

/// `iolab run --dir DIR --json --no-save -q <args>`; asserts exit 0 and returns the JSON.
pub fn run_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "run",
        "--dir",
        dir.to_str().unwrap(),
        "--json",
        "--no-save",
        "-q",
    ];
    a.extend_from_slice(args);
    let r = iolab(&a);
    assert_eq!(r.code, 0, "iolab {a:?} failed: {}", r.stderr);
    r.json()
}

pub fn ops(v: &serde_json::Value, op: &str) -> u64 {
    v["results"][op]["ops"]
        .as_u64()
        .unwrap_or_else(|| panic!("no results.{op}.ops in {v}"))
}

/// Names of the entries in a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
