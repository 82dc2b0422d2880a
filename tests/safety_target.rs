//! docs/safety.md, section 1: nothing outside the target. Every name iolab writes in a target
//! (each file of the set, the lock, the verify state and its temporary name, crashcheck's data
//! file, a `--live` file) gets a symbolic link planted at it (to an outside file of the right
//! size, dangling, to a directory), a hard link to an outside file, a fifo or a directory; iolab
//! must refuse in one line with exit 2, and leave the outside file byte-identical with its mtime
//! unchanged and the planted thing where it was. Output files keep the user's umask. A target
//! unmounted lazily during a run (root, a loop device) leaves the files under its mountpoint.
use crate::common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The set of every command below: 2 files of 1 MiB.
const FILE_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Copy)]
enum Plant {
    /// A symbolic link to a file outside the target, of the size of a file of the set.
    LinkToOutside,
    /// A symbolic link to a name outside the target that does not exist.
    Dangling,
    /// A symbolic link to a directory outside the target.
    LinkToDir,
    /// A hard link to the outside file.
    HardLink,
    Fifo,
    Dir,
}

const PLANTS: [Plant; 6] = [
    Plant::LinkToOutside,
    Plant::Dangling,
    Plant::LinkToDir,
    Plant::HardLink,
    Plant::Fifo,
    Plant::Dir,
];

/// A target directory, and outside it a file and a directory that must stay as they are.
struct Scene {
    dir: tempfile::TempDir,
    outside_dir: tempfile::TempDir,
    outside: PathBuf,
    bytes: Vec<u8>,
    mtime: (i64, i64),
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let outside_dir = tempfile::tempdir().unwrap();
        let outside = outside_dir.path().join("precious");
        let bytes: Vec<u8> = (0..FILE_BYTES).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&outside, &bytes).unwrap();
        let m = std::fs::metadata(&outside).unwrap();
        Scene {
            dir,
            outside_dir,
            outside,
            bytes,
            mtime: (m.mtime(), m.mtime_nsec()),
        }
    }

    fn dir(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }

    fn never(&self) -> PathBuf {
        self.outside_dir.path().join("never-created")
    }

    fn plant(&self, name: &str, how: Plant) -> PathBuf {
        let p = self.dir.path().join(name);
        match how {
            Plant::LinkToOutside => std::os::unix::fs::symlink(&self.outside, &p).unwrap(),
            Plant::Dangling => std::os::unix::fs::symlink(self.never(), &p).unwrap(),
            Plant::LinkToDir => std::os::unix::fs::symlink(self.outside_dir.path(), &p).unwrap(),
            Plant::HardLink => std::fs::hard_link(&self.outside, &p).unwrap(),
            Plant::Fifo => {
                let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
                // SAFETY: a NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
            Plant::Dir => std::fs::create_dir(&p).unwrap(),
        }
        p
    }

    /// What is wrong after `what` ran with `how` planted at `p`: the outside file changed, the
    /// planted thing moved, something made outside.
    fn damage(&self, p: &Path, how: Plant) -> Vec<String> {
        let mut bad = Vec::new();
        let m = std::fs::metadata(&self.outside).unwrap();
        if std::fs::read(&self.outside).unwrap() != self.bytes {
            bad.push("the outside file was written".to_string());
        }
        if (m.mtime(), m.mtime_nsec()) != self.mtime {
            bad.push("the outside file's mtime changed".to_string());
        }
        if self.never().exists() {
            bad.push("a file was created outside the target".to_string());
        }
        let still = std::fs::symlink_metadata(p).map(|m| m.file_type());
        let ok = match how {
            Plant::LinkToOutside | Plant::Dangling | Plant::LinkToDir => {
                still.is_ok_and(|t| t.is_symlink())
            }
            Plant::HardLink => still.is_ok_and(|t| t.is_file()),
            Plant::Fifo => still.is_ok_and(|t| std::os::unix::fs::FileTypeExt::is_fifo(&t)),
            Plant::Dir => still.is_ok_and(|t| t.is_dir()),
        };
        if !ok {
            bad.push(format!(
                "the planted {how:?} at {} was removed or replaced",
                p.display()
            ));
        }
        bad
    }
}

/// The longest a refused command may take: one that blocks (on a fifo, say) is killed and
/// counted as a failure instead of hanging the suite.
const HANG: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs iolab with a private store, killed if it outlives [`HANG`] (None then).
fn iolab_bounded(args: &[&str]) -> Option<Run> {
    use std::process::Stdio;
    let child = Command::new(bin())
        .args(args)
        .env("IOLAB_DB", test_db())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let o = child.wait_with_output().unwrap();
        let _ = tx.send(());
        o
    });
    if rx.recv_timeout(HANG).is_err() {
        // SAFETY: our own child, not yet reaped (the waiter is still waiting for it).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let _ = waiter.join();
        return None;
    }
    Some(to_run(waiter.join().unwrap()))
}

/// Runs iolab with a private store; what is wrong with a refusal: not exit 2, not one line,
/// not naming `name`.
fn refused(args: &[&str], name: &str) -> Vec<String> {
    let Some(r) = iolab_bounded(args) else {
        return vec![format!("hung: killed after {} s", HANG.as_secs())];
    };
    let mut bad = Vec::new();
    if r.code != 2 {
        bad.push(format!("exit {} (not 2)", r.code));
    }
    let lines: Vec<&str> = r.stderr.lines().collect();
    if lines.len() != 1 || !lines[0].starts_with("iolab: error: ") || !lines[0].contains(name) {
        bad.push(format!("not one line naming {name}: {:?}", r.stderr));
    }
    bad
}

/// Every command, with every plant at `name`: refused, nothing outside touched.
fn try_every_plant(name: &str, commands: &[&[&str]], setup: impl Fn(&Scene)) {
    let mut failures = Vec::new();
    for how in PLANTS {
        for cmd in commands {
            let s = Scene::new();
            setup(&s);
            let p = s.plant(name, how);
            let mut args: Vec<&str> = cmd.to_vec();
            for a in args.iter_mut() {
                if *a == "DIR" {
                    *a = s.dir();
                }
            }
            let mut bad = refused(&args, name);
            bad.extend(s.damage(&p, how));
            if !bad.is_empty() {
                failures.push(format!(
                    "{name} as {how:?}, `iolab {}`: {}",
                    cmd.join(" "),
                    bad.join("; ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

const RUN: &[&str] = &[
    "run",
    "--dir",
    "DIR",
    "--size",
    "2M",
    "--files",
    "2",
    "--mode",
    "rndwr",
    "--ops",
    "64",
    "--no-save",
    "-q",
    "--json",
];
const RUN_READ: &[&str] = &[
    "run",
    "--dir",
    "DIR",
    "--size",
    "2M",
    "--files",
    "2",
    "--mode",
    "rndrd",
    "--ops",
    "64",
    "--no-save",
    "-q",
    "--json",
];
const PREPARE: &[&str] = &[
    "prepare", "--dir", "DIR", "--size", "2M", "--files", "2", "-q",
];
const CLEANUP: &[&str] = &["cleanup", "--dir", "DIR"];

/// A file of the set (`iolab-file.0`, `iolab-file.1`) that is a link, a fifo or a directory is
/// refused by run, prepare and cleanup; before, a link to an outside file of the right size got
/// the random writes, and a dangling one made a 1 MiB file outside --dir and lost the user's link.
#[test]
fn planted_set_members_are_refused_and_nothing_outside_is_touched() {
    for name in ["iolab-file.0", "iolab-file.1"] {
        try_every_plant(name, &[RUN, RUN_READ, PREPARE, CLEANUP], |_| {});
    }
}

/// The lock file (`DIR/.iolab-lock`) that is a link, a fifo or a directory is refused by run,
/// prepare and cleanup; before, a planted link's target was truncated and got a pid and command
/// line.
#[test]
fn a_planted_lock_is_refused_and_nothing_outside_is_touched() {
    try_every_plant(".iolab-lock", &[RUN, PREPARE, CLEANUP], |_| {});
}

/// The verify state (`DIR/.iolab-verify`) that is a link, a fifo or a directory is refused by a
/// verify run, a writing run (which would remove it), `iolab verify --dir` and cleanup.
#[test]
fn a_planted_verify_state_is_refused_and_nothing_outside_is_touched() {
    let verify: &[&str] = &[
        "run",
        "--dir",
        "DIR",
        "--size",
        "2M",
        "--files",
        "2",
        "--mode",
        "rndwr",
        "--ops",
        "64",
        "--verify",
        "--keep",
        "--no-save",
        "-q",
        "--json",
    ];
    let check: &[&str] = &["verify", "--dir", "DIR", "--json"];
    try_every_plant(".iolab-verify", &[verify, RUN, check, CLEANUP], |_| {});
}

/// The verify state is written aside under an unpredictable name: links planted at the name iolab
/// used before (`.iolab-verify.tmp`) are never written through, and stay.
#[test]
fn the_verify_state_is_never_written_through_a_planted_temporary_name() {
    let mut failures = Vec::new();
    for how in [Plant::LinkToOutside, Plant::Dangling] {
        let s = Scene::new();
        let p = s.plant(".iolab-verify.tmp", how);
        let r = iolab(&[
            "run",
            "--dir",
            s.dir(),
            "--size",
            "2M",
            "--files",
            "2",
            "--mode",
            "rndwr",
            "--ops",
            "64",
            "--verify",
            "--keep",
            "--no-save",
            "-q",
            "--json",
        ]);
        if r.code != 0 {
            failures.push(format!("{how:?}: exit {}: {}", r.code, r.stderr));
        }
        if !s.dir.path().join(".iolab-verify").is_file() {
            failures.push(format!("{how:?}: no state file was saved"));
        }
        for d in s.damage(&p, how) {
            failures.push(format!("{how:?}: {d}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// crashcheck's data file (`DIR/iolab-crashcheck.dat`) that is a link, a fifo or a directory is
/// refused before the journal is made; before, a link was removed and replaced.
#[test]
fn a_planted_crashcheck_data_file_is_refused_and_nothing_outside_is_touched() {
    let mut failures = Vec::new();
    for how in PLANTS {
        let s = Scene::new();
        let p = s.plant("iolab-crashcheck.dat", how);
        let journal = s.outside_dir.path().join("journal");
        let mut bad = refused(
            &[
                "crashcheck",
                "write",
                "--dir",
                s.dir(),
                "--journal",
                journal.to_str().unwrap(),
                "--size",
                "1M",
                "--count",
                "4",
                "--json",
                "--no-save",
            ],
            "iolab-crashcheck.dat",
        );
        bad.extend(s.damage(&p, how));
        if journal.exists() {
            bad.push("the journal was made for a refused run".into());
        }
        if !bad.is_empty() {
            failures.push(format!("{how:?}: {}", bad.join("; ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// `--live FILE` where FILE is a symbolic link (planted in a shared directory, say) is refused,
/// never truncated or written through.
#[test]
fn a_live_file_that_is_a_planted_link_is_refused() {
    let mut failures = Vec::new();
    for how in [Plant::LinkToOutside, Plant::Dangling] {
        let s = Scene::new();
        let p = s.plant("live.ndjson", how);
        let mut bad = refused(
            &[
                "run",
                "--dir",
                s.dir(),
                "--size",
                "2M",
                "--files",
                "2",
                "--mode",
                "rndrd",
                "--ops",
                "64",
                "--no-save",
                "-q",
                "--json",
                "--live",
                p.to_str().unwrap(),
            ],
            "--live",
        );
        bad.extend(s.damage(&p, how));
        if !bad.is_empty() {
            failures.push(format!("{how:?}: {}", bad.join("; ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Runs iolab under umask 022 with a private store.
fn with_umask_022(db: &Path, args: &[&str]) -> Run {
    let mut c = Command::new(bin());
    c.args(args).env("IOLAB_DB", db);
    // SAFETY: umask is async-signal-safe; it only sets the child's file creation mask.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, || {
            libc::umask(0o022);
            Ok(())
        });
    }
    to_run(c.output().unwrap())
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// `-o`/`--output`, `--csv` and `report` files under umask 022 are 0644 when new, and an existing
/// file keeps its mode (0644 stays 0644, 0640 stays 0640); before, every one was 0600.
#[test]
fn output_files_keep_the_umask_and_an_existing_files_mode() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("s.db");
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let out = |n: &str| d.path().join(n);
    let mut failures = Vec::new();
    let mut expect = |what: &str, p: &Path, want: u32, r: &Run| {
        if r.code != 0 {
            failures.push(format!("{what}: exit {}: {}", r.code, r.stderr));
        } else if mode(p) != want {
            failures.push(format!("{what}: mode {:o}, not {want:o}", mode(p)));
        }
    };
    let run = |o: &Path| {
        with_umask_022(
            &db,
            &[
                "run",
                "--dir",
                set.to_str().unwrap(),
                "--size",
                "2M",
                "--files",
                "2",
                "--mode",
                "rndrd",
                "--ops",
                "64",
                "-q",
                "-o",
                o.to_str().unwrap(),
            ],
        )
    };
    let r = run(&out("new.txt"));
    expect("run -o NEW", &out("new.txt"), 0o644, &r);
    for keep in [0o644, 0o640] {
        let p = out(&format!("old-{keep:o}.txt"));
        std::fs::write(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(keep)).unwrap();
        let r = run(&p);
        expect(&format!("run -o EXISTING ({keep:o})"), &p, keep, &r);
    }
    let r = with_umask_022(&db, &["report", "1", "-o", out("r.html").to_str().unwrap()]);
    expect("report -o NEW", &out("r.html"), 0o644, &r);
    let csv = out("b.csv");
    let r = with_umask_022(
        &db,
        &[
            "suite",
            "iozone",
            "--dir",
            set.to_str().unwrap(),
            "--min-file",
            "64k",
            "--max-file",
            "64k",
            "--min-rec",
            "4k",
            "--max-rec",
            "4k",
            "--no-save",
            "--csv",
            csv.to_str().unwrap(),
        ],
    );
    expect("suite iozone --csv NEW", &csv, 0o644, &r);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A target whose filesystem is unmounted lazily (`umount -l`) during a run: the files the user
/// then has under the mountpoint with iolab's names (`iolab-file.N`, `.iolab-lock`) survive the
/// run's cleanup, which removes iolab's own files through the directory it opened at the start,
/// and one line says the target disappeared. Before, cleanup removed the user's files.
#[test]
fn a_lazily_unmounted_target_leaves_the_files_under_its_mountpoint() {
    const NAME: &str = "a_lazily_unmounted_target_leaves_the_files_under_its_mountpoint";
    if let Some(why) = blk::cannot(false) {
        return skip(NAME, &why);
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let mnt = base.path().join("mnt");
    let fs = blk::LoopFs::new(64, &mnt);
    let names = ["iolab-file.0", "iolab-file.1", ".iolab-lock"];
    let mut planted = false;
    let o = interrupt_when(
        Command::new(bin())
            .args([
                "run",
                "--dir",
                mnt.to_str().unwrap(),
                "--size",
                "8M",
                "--files",
                "2",
            ])
            .args(["--mode", "rndrd", "--time", "120", "--no-save", "--json"])
            .env("IOLAB_DB", test_db()),
        "the run measuring",
        |pid, _| {
            if !thread_has_read(pid, "iolab-w") {
                return false;
            }
            if !planted {
                blk::sh(&format!("umount -l {}", mnt.display()));
                for n in names {
                    std::fs::write(mnt.join(n), format!("the user's {n}")).unwrap();
                }
                planted = true;
            }
            true
        },
    );
    let r = to_run(o);
    let mut bad = Vec::new();
    for n in names {
        match std::fs::read_to_string(mnt.join(n)) {
            Ok(t) if t == format!("the user's {n}") => {}
            Ok(t) => bad.push(format!("{n} holds {t:?}")),
            Err(e) => bad.push(format!("{n}: {e}")),
        }
    }
    let said: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("disappeared"))
        .collect();
    if said.len() != 1 {
        bad.push(format!(
            "not one line saying the target disappeared: {:?}",
            r.stderr
        ));
    }
    drop(fs);
    assert!(
        bad.is_empty(),
        "exit {}: {}\nstderr: {}",
        r.code,
        bad.join("; "),
        r.stderr
    );
}
