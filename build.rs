//! Names the git commit the binary is built from (`iolab --version`): `IOLAB_GIT_COMMIT`, the
//! commit's hash (12 digits), or `unknown` outside a git checkout (a source tarball) or without
//! git. `IOLAB_GIT_COMMIT` set in the environment (a package built from an exported tree) is
//! taken as it is. (Whether the tree had edits is not said: cargo would have to run this at every
//! change of any file to know.)

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=IOLAB_GIT_COMMIT");
    let commit = match std::env::var("IOLAB_GIT_COMMIT") {
        Ok(c) if !c.is_empty() => c,
        _ => {
            // run again when HEAD moves (a commit, a checkout): the files git keeps it in (only
            // those that exist: cargo runs this at every build for one that does not)
            let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
            watch.extend(git(&["symbolic-ref", "-q", "HEAD"]));
            for what in watch {
                if let Some(p) = git(&["rev-parse", "--git-path", &what])
                    && std::path::Path::new(&p).exists()
                {
                    println!("cargo:rerun-if-changed={p}");
                }
            }
            git(&["rev-parse", "--short=12", "HEAD"])
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "unknown".into())
        }
    };
    println!("cargo:rustc-env=IOLAB_GIT_COMMIT={commit}");
}
