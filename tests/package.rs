//! What a Linux user expects of a CLI tool (issue 31): manual pages and shell completions made
//! from the clap definition, `--version` naming the commit, and the Debian package
//! (scripts/package.sh) installed with dpkg into a root of its own, as in a fresh container: its
//! files in place, its manual page read by man, its bash completion completing, `iolab run`
//! working from the installed binary, and removed again.

use crate::common::*;
use std::path::Path;
use std::process::Command;

fn sh(cmd: &mut Command) -> (bool, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `manpages DIR` writes a page for iolab and for every subcommand at every depth (each a roff
/// page naming itself), refuses a directory that holds one already without writing anything,
/// and `completions` prints a script for each shell that names the subcommands.
#[test]
fn manual_pages_and_completions_come_from_the_definition() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let r = iolab(&["manpages", dir]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for want in [
        "iolab.1",
        "iolab-run.1",
        "iolab-sweep.1",
        "iolab-together.1",
        "iolab-suite-pts.1",
        "iolab-crashcheck-listen.1",
        "iolab-store-copy.1",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
    }
    let run = std::fs::read_to_string(d.path().join("iolab-run.1")).unwrap();
    assert!(run.starts_with(".ie \\n(.g .ds Aq"), "roff: {}", &run[..80]);
    assert!(
        run.contains("iolab\\-run") && run.contains("\\-\\-threads"),
        "{run}"
    );
    // a second time: the pages are there, nothing is written, exit 2
    let before = std::fs::metadata(d.path().join("iolab.1"))
        .unwrap()
        .modified()
        .unwrap();
    let r = iolab(&["manpages", dir]);
    assert_refused(&r, "is there already");
    let after = std::fs::metadata(d.path().join("iolab.1"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
    // a link planted at a page's name is refused, and what it points to untouched
    let e = tempfile::tempdir().unwrap();
    let victim = e.path().join("victim");
    std::fs::write(&victim, "mine").unwrap();
    let planted = e.path().join("pages");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink(&victim, planted.join("iolab-run.1")).unwrap();
    let r = iolab(&["manpages", planted.to_str().unwrap()]);
    assert_refused(&r, "iolab-run.1: is a symbolic link");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
    assert_eq!(
        std::fs::read_dir(&planted).unwrap().count(),
        1,
        "nothing written"
    );
    let r = iolab(&["manpages", "/nonexistent/iolab-man"]);
    assert_refused(&r, "manpages /nonexistent/iolab-man");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = iolab(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        for sub in ["run", "sweep", "together", "report"] {
            assert!(r.stdout.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    assert_refused(&iolab(&["completions", "tcsh"]), "tcsh");
}

/// `iolab --version` names the package's version and the commit of the checkout it was built
/// from.
#[test]
fn version_names_the_commit() {
    let r = iolab(&["--version"]);
    assert_eq!(r.code, 0);
    let v = r.stdout.trim();
    assert!(
        v.starts_with(&format!("iolab {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    let (ok, head, _) = sh(Command::new("git").args(["rev-parse", "--short=12", "HEAD"]));
    if ok {
        // the binary of this checkout: its HEAD (the build runs again when HEAD moves)
        assert_eq!(
            v,
            format!(
                "iolab {} (commit {})",
                env!("CARGO_PKG_VERSION"),
                head.trim()
            )
        );
    }
}

/// The package: built from the tests' binary, installed by dpkg into a root of its own whose
/// package database holds only what it depends on (as the host has it), listed, used, removed.
#[test]
fn the_debian_package_installs_and_runs() {
    let name = "the_debian_package_installs_and_runs";
    if !is_root() {
        return skip(name, "dpkg --root installs as root only");
    }
    for t in ["dpkg-deb", "dpkg-shlibdeps", "dpkg-query", "man"] {
        if !have(t) {
            return skip(
                name,
                &format!("{t} is not installed (scripts/setup.sh: dpkg-dev, man-db)"),
            );
        }
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let (ok, stdout, stderr) = sh(Command::new("bash").args([
        "scripts/package.sh",
        "--binary",
        bin(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(ok, "package.sh: {stderr}");
    let deb = stdout.lines().last().unwrap().trim().to_string();
    assert!(
        deb.ends_with(".deb") && Path::new(&deb).exists(),
        "{stdout}"
    );
    let field = |f: &str| {
        let (ok, v, e) = sh(Command::new("dpkg-deb").args(["-f", &deb, f]));
        assert!(ok, "{e}");
        v.trim().to_string()
    };
    assert_eq!(field("Package"), "iolab");
    assert_eq!(field("Version"), env!("CARGO_PKG_VERSION"));
    let depends = field("Depends");
    assert!(depends.contains("libc6"), "{depends}");
    // a root of its own: a dpkg database of the packages iolab depends on, as installed here
    let root = d.path().join("root");
    let admin = root.join("var/lib/dpkg");
    for sub in ["info", "updates", "triggers"] {
        std::fs::create_dir_all(admin.join(sub)).unwrap();
    }
    let pkgs: Vec<String> = depends
        .split(',')
        .map(|p| p.split_whitespace().next().unwrap().to_string())
        .collect();
    let (ok, status, e) = sh(Command::new("dpkg-query").arg("-s").args(&pkgs));
    assert!(ok, "{e}");
    std::fs::write(admin.join("status"), status).unwrap();
    std::fs::write(admin.join("available"), "").unwrap();
    let arch = sh(Command::new("dpkg").arg("--print-architecture")).1;
    for p in &pkgs {
        for list in [format!("{p}.list"), format!("{p}:{}.list", arch.trim())] {
            std::fs::write(admin.join("info").join(list), "").unwrap();
        }
    }
    let r = root.to_str().unwrap();
    let dpkg = |args: &[&str]| sh(Command::new("dpkg").arg(format!("--root={r}")).args(args));
    let (ok, _, e) = dpkg(&["-i", &deb]);
    assert!(ok, "dpkg -i: {e}");
    assert!(!e.contains("warning"), "dpkg -i: {e}");
    let (_, s, _) = dpkg(&["-s", "iolab"]);
    assert!(s.contains("Status: install ok installed"), "{s}");
    let (_, files, _) = dpkg(&["-L", "iolab"]);
    for f in [
        "/usr/bin/iolab",
        "/usr/share/man/man1/iolab.1.gz",
        "/usr/share/man/man1/iolab-run.1.gz",
        "/usr/share/man/man1/iolab-suite-pts.1.gz",
        "/usr/share/bash-completion/completions/iolab",
        "/usr/share/zsh/vendor-completions/_iolab",
        "/usr/share/fish/vendor_completions.d/iolab.fish",
        "/usr/share/doc/iolab/README.md",
    ] {
        assert!(
            files.lines().any(|l| l == f),
            "{f} not in the package: {files}"
        );
        assert!(root.join(&f[1..]).exists(), "{f} not installed");
    }
    let installed = root.join("usr/bin/iolab");
    let (ok, v, _) = sh(Command::new(&installed).arg("--version"));
    assert!(ok && v.contains("(commit "), "{v}");
    // the installed binary runs
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let (ok, o, e) = sh(Command::new(&installed)
        .args([
            "run",
            "--dir",
            data.to_str().unwrap(),
            "--files",
            "1",
            "--size",
            "4M",
        ])
        .args([
            "--mode",
            "rndrd",
            "--time",
            "0.3",
            "--no-save",
            "--json",
            "-q",
        ]));
    assert!(ok, "{e}");
    let j: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert!(
        j["runs"][0]["results"]["read"]["iops"].as_f64().unwrap() > 0.0,
        "{o}"
    );
    // man reads its page
    let page = root.join("usr/share/man/man1/iolab-run.1.gz");
    let (ok, text, e) = sh(Command::new("man")
        .env("MANWIDTH", "100")
        .args(["-l", page.to_str().unwrap()]));
    assert!(ok, "man: {e}");
    // bold and underline as overstrikes (`X\bX`, `_\bX`): the letters
    let mut plain = String::new();
    for ch in text.chars() {
        if ch == '\u{8}' {
            plain.pop();
        } else {
            plain.push(ch);
        }
    }
    assert!(
        plain.contains("iolab-run") && plain.contains("--threads"),
        "{plain}"
    );
    // bash completes a subcommand and a flag of run
    let comp = root.join("usr/share/bash-completion/completions/iolab");
    let complete = |line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        let script = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; _iolab iolab '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            comp.display(),
            words.join(" "),
            words.len() - 1,
            line.len(),
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let (ok, o, e) = sh(Command::new("bash").args(["-c", &script]));
        assert!(ok, "bash completion of {line:?}: {e}");
        o
    };
    assert!(complete("iolab toge").lines().any(|l| l == "together"));
    assert!(
        complete("iolab run --thr")
            .lines()
            .any(|l| l == "--threads")
    );
    for (shell, file, check) in [
        ("zsh", "usr/share/zsh/vendor-completions/_iolab", "-n"),
        (
            "fish",
            "usr/share/fish/vendor_completions.d/iolab.fish",
            "--no-execute",
        ),
    ] {
        if have(shell) {
            let (ok, _, e) = sh(Command::new(shell).arg(check).arg(root.join(file)));
            assert!(ok, "{shell} reads its completion: {e}");
        }
    }
    let (ok, _, e) = dpkg(&["-r", "iolab"]);
    assert!(ok, "dpkg -r: {e}");
    assert!(!installed.exists() && !page.exists());
}
