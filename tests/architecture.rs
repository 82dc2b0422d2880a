//! The module tree is the pipeline: each top-level module of src/ may use only the ones before it
//! in `LAYERS` (so there is no cycle between top-level modules), and `model` uses nothing else of
//! iolab's. This reads the sources, so a new `use crate::...` that breaks the order fails here
//! with the file and line.

use std::path::{Path, PathBuf};

/// Lowest first. `commands` and `main.rs` sit on top of everything.
const LAYERS: [&str; 14] = [
    "model",
    "error",
    "spec",
    "measure",
    "system",
    "store",
    "analysis",
    "engine",
    "dist",
    "workloads",
    "output",
    "cli",
    "commands",
    "main",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a source file belongs to (`src/store/import/fio.rs` -> "store").
fn top_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::NAME` / `iolab::NAME` in code (not in comments), with its line number.
fn uses(text: &str, prefix: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((i + 1, name));
            }
        }
    }
    out
}

#[test]
fn top_level_modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut bad = Vec::new();
    for f in &files {
        let top = top_of(&src, f);
        if top == "lib" {
            continue;
        }
        let Some(own) = rank(&top) else {
            bad.push(format!(
                "{}: top-level module {top:?} is not in LAYERS",
                f.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        let prefix = if top == "main" || top == "commands" && text.contains("iolab::") {
            "iolab::"
        } else {
            "crate::"
        };
        for (line, name) in uses(&text, prefix)
            .into_iter()
            .chain(uses(&text, "crate::"))
        {
            match rank(&name) {
                Some(r) if r > own => bad.push(format!(
                    "{}:{line}: {top} uses {name}, a higher layer",
                    f.display()
                )),
                Some(_) => {}
                None => bad.push(format!("{}:{line}: unknown module {name}", f.display())),
            }
            if top == "model" && name != "model" {
                bad.push(format!("{}:{line}: model uses {name}", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "layering broken:\n{}", bad.join("\n"));
}

#[test]
fn every_top_level_module_is_a_known_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for line in lib.lines().filter(|l| l.starts_with("pub mod ")) {
        let m = line.trim_start_matches("pub mod ").trim_end_matches(';');
        assert!(
            LAYERS.contains(&m),
            "lib.rs declares {m}, which is not in LAYERS"
        );
    }
}
