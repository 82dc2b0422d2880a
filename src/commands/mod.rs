//! One file per subcommand. Each takes its parsed arguments and returns an exit code; what they
//! print goes through [`print_out`] (documents through [`emit`] and their exporter). `main.rs` only
//! parses, dispatches and exits.

use crate::cli::{self, Cmd};
use crate::engine::{fileset, runner};
use crate::error::{Error, Exit, Result};
use crate::output::export::Format;
use crate::output::stored_views;
use crate::store::compare;
use crate::store::{self, Store};
use crate::system::fsinfo;
use crate::workloads::sweep::RunOptions;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

mod capture;
mod charts;
mod crashcheck;
mod db;
mod experiment;
mod iostat;
mod manual;
mod prepare;
mod run;
mod saturate;
mod stored;
mod suite;
mod sweep;
mod system;
mod together;

/// A flag Ctrl-C (SIGINT) and SIGTERM set, so a run stops, prints and saves what it measured; a
/// second signal ends the process at once with 130.
pub fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal ends the process at once.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop));
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    stop
}

/// [`stop_flag`] and a [`SignalWake`](crate::measure::wake::SignalWake) the same signals set
/// off, for a command that sleeps between readings or connections: it sleeps in poll(2) and
/// still ends at once on Ctrl-C, without looking at the flag every few milliseconds.
pub fn stop_flag_and_wake() -> Result<(Arc<AtomicBool>, crate::measure::wake::SignalWake)> {
    let stop = stop_flag();
    let wake = crate::measure::wake::SignalWake::register(&[
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])
    .map_err(|e| Error::failed(format!("cannot set up the Ctrl-C wake-up: {e}")))?;
    Ok((stop, wake))
}

/// What the command printed, when it goes to `--output FILE` instead of stdout: set once in
/// [`run_cli`] from the parsed command line, written whole when the command ends.
static OUTPUT: Mutex<Option<String>> = Mutex::new(None);
/// The `--output` file of the command, when it has one.
static OUTPUT_PATH: Mutex<Option<std::path::PathBuf>> = Mutex::new(None);

/// For a command that ends the process from another thread (a distributed run's watchdog):
/// writes what it printed to `--output` as the end of [`run_cli`] would, prints an error; the
/// exit code.
pub fn end_output(r: Result<i32>) -> i32 {
    let path = OUTPUT_PATH
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let r = match path {
        Some(p) => {
            let text = output_buf().take().unwrap_or_default();
            finish_output(&p, &text, r)
        }
        None => r,
    };
    match r {
        Ok(c) => c,
        Err(e) => {
            eprintln!("iolab: error: {e}");
            e.exit as i32
        }
    }
}

fn output_buf() -> std::sync::MutexGuard<'static, Option<String>> {
    OUTPUT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Set by `--live -`: stdout carries the live NDJSON lines and nothing else, so what the
/// command prints goes to stderr (or to its `--output` file).
static STDOUT_IS_LIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--live -` took stdout for its lines: [`print_out`] writes to stderr from now on.
pub fn stdout_taken_by_live_lines() {
    STDOUT_IS_LIVE.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Writes to stdout (or to the `--output` file; to stderr while `--live -` has stdout); a
/// closed pipe is not an error.
pub fn print_out(s: &str) {
    if let Some(buf) = output_buf().as_mut() {
        buf.push_str(s);
        return;
    }
    if STDOUT_IS_LIVE.load(std::sync::atomic::Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(s.as_bytes()).and_then(|_| err.flush());
        return;
    }
    let mut out = std::io::stdout().lock();
    // A closed pipe (iolab run | head) is a normal end.
    let _ = out.write_all(s.as_bytes()).and_then(|_| out.flush());
}

/// Prints a document in the format asked for, through its exporter (`crate::output::export`):
/// the one place where commands' output is written.
pub fn emit(
    doc: &dyn crate::output::document::Document,
    format: crate::output::export::Format,
) -> Result<()> {
    print_out(&crate::output::export::export(doc, format)?);
    Ok(())
}

pub fn open_store(db: &cli::DbArgs) -> Result<Store> {
    Store::open_at(&store::resolve_location(db.db.as_deref())?)
}

pub fn open_store_write(db: &cli::DbArgs) -> Result<Store> {
    let mut s = Store::open_write_at(&store::resolve_location(db.db.as_deref())?)?;
    save_kept(&mut s);
    Ok(s)
}

/// The part of a kept document's file name that names the store it was meant for: `-for-` and
/// 16 hex digits of the FNV-1a hash of the store as messages name it (the file's canonical path,
/// or the URL with its password masked).
fn kept_tag(store_path: &Path) -> String {
    // An SQLite file by its canonical path, however the command spelled it.
    let canon = std::fs::canonicalize(store_path).unwrap_or_else(|_| store_path.to_path_buf());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canon.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("-for-{h:016x}")
}

/// Saves the documents an earlier command kept because this store did not take them (exit 4:
/// a full disk, a PostgreSQL server gone during the run), now that it opened for writing: each
/// saved is said on stderr and its file removed. Only this user's own spool folders and files
/// are taken ([`store::spool`]); each file is claimed first, so of several commands starting
/// together one saves it, and a document the store holds already (`iolab import` saved it) is
/// not saved again, only its file removed. One that cannot be saved stays for the next command
/// (or `iolab import FILE`).
pub fn save_kept(s: &mut Store) {
    let suffix = format!("{}.json", kept_tag(&s.path));
    for dir in store::spool::dirs(&s.path) {
        let spool = match store::spool::Spool::open(&dir, false) {
            None => continue,
            Some(Ok(sp)) => sp,
            Some(Err(why)) => {
                eprintln!("iolab: warning: {why}");
                continue;
            }
        };
        for name in spool.names(&suffix) {
            let c = match spool.claim(&name) {
                Ok(Some(c)) => c,
                Ok(None) => continue,
                Err(why) => {
                    eprintln!("iolab: warning: {why}");
                    continue;
                }
            };
            let Some(saved) = serde_json::from_str::<serde_json::Value>(&c.text)
                .ok()
                .and_then(|v| save_kept_doc(s, v))
            else {
                continue;
            };
            let path = c.path.clone();
            match saved {
                Ok(saved) => {
                    let _ = spool.remove(c);
                    if saved.already {
                        eprintln!(
                            "iolab: removed {}: {} holds its document already, as run {}",
                            path.display(),
                            s.path.display(),
                            saved.id
                        );
                    } else {
                        eprintln!(
                            "iolab: saved {} (kept when {} did not take it) as run {}",
                            path.display(),
                            s.path.display(),
                            saved.id
                        );
                    }
                }
                Err(e) => {
                    eprintln!(
                        "iolab: warning: {} is still not saved ({e}); it stays for the next command",
                        path.display()
                    );
                    return;
                }
            }
        }
    }
}

/// Saves a kept document (a run, `iolab db` or `iolab verify` document) once; None for
/// anything else.
fn save_kept_doc(s: &mut Store, v: serde_json::Value) -> Option<Result<store::Saved>> {
    use store::import::ImportFile;
    Some(match store::import::kept_doc(v)?.ok()? {
        ImportFile::Run(d, v) => s.save_run_once(&d, &v, None, None),
        ImportFile::Db(d, v) => s.save_db_once(&d, &v, &fsinfo::hostname()),
        ImportFile::Verify(d, v) => s.save_verify_once(&d, &v, None),
        ImportFile::Tool(_) => return None,
    })
}

/// After `iolab import FILE` saved the document of `file` (or found it saved): a file kept for
/// this store (its name ends with the store's `-for-<hash>.json`) in a folder of this user's
/// that no one else may write is removed (claimed first, and only while it still holds that
/// document), so the next command does not find it. Says so on stderr.
pub fn remove_kept(s: &Store, file: &Path, doc: &serde_json::Value) {
    let suffix = format!("{}.json", kept_tag(&s.path));
    if !file
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(&suffix))
    {
        return;
    }
    let Some((spool, name)) = store::spool::Spool::holding(file) else {
        return;
    };
    let Ok(Some(c)) = spool.claim(&name) else {
        return;
    };
    if serde_json::from_str::<serde_json::Value>(&c.text)
        .ok()
        .as_ref()
        != Some(doc)
    {
        return;
    }
    if spool.remove(c).is_ok() {
        eprintln!("iolab: removed {}: it is saved", file.display());
    }
}

/// The roots and path `iolab env` / `iolab check` describe (`--root` for a fixture tree).
pub fn env_target(a: &cli::EnvArgs) -> Result<(crate::system::env::Roots, std::path::PathBuf)> {
    let path = a.path.clone().unwrap_or_else(|| ".".into());
    if !path.exists() {
        return Err(Error::usage(format!(
            "{}: no such file or directory",
            path.display()
        )));
    }
    let roots = match &a.root {
        Some(r) => crate::system::env::Roots::fixture(r),
        None => crate::system::env::Roots::live(),
    };
    Ok((roots, path))
}

/// Writes a side file (`--csv`) whole or not at all, and says where.
pub fn write_side_file(p: &Option<std::path::PathBuf>, text: &str) -> Result<()> {
    if let Some(p) = p {
        write_atomically(p, text.as_bytes(), "--csv")?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
pub use crate::output::write_atomically;
pub use charts::report_html;
pub use stored::explain_ref;

/// What to say about a result the store did not take (`err`): where its document is kept
/// instead ([`keep_unsaved`]), for `iolab import` to save later.
pub fn kept_instead(store_path: &Path, err: &str, json: &serde_json::Value) -> String {
    match keep_unsaved(store_path, json) {
        Ok(p) => format!(
            "{err}; the document is kept in {} (`iolab import {}` saves it later)",
            p.display(),
            p.display()
        ),
        Err(why) => format!("{err}; it could not be kept in a file either: {why}"),
    }
}

/// Writes a document the store did not take (a run, `iolab db` or `iolab verify` document) to
/// the first spool folder of [`store::spool::dirs`] that takes it (`<time>-<pid>-for-<hash>.json`,
/// mode 0600, whole or absent, in a folder of this user's that no one else may write), so the
/// next command into that store, or `iolab import`, can save it later.
pub fn keep_unsaved(
    store_path: &Path,
    json: &serde_json::Value,
) -> std::result::Result<std::path::PathBuf, String> {
    let name = format!(
        "{}-{}{}.json",
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id(),
        kept_tag(store_path)
    );
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(json).unwrap_or_default()
    );
    let mut why = Vec::new();
    for dir in store::spool::dirs(store_path) {
        match store::spool::Spool::open(&dir, true) {
            Some(Ok(spool)) => match spool.keep(&name, text.as_bytes()) {
                Ok(p) => return Ok(p),
                Err(e) => why.push(e),
            },
            Some(Err(e)) => why.push(e),
            None => {}
        }
    }
    if why.is_empty() {
        why.push("no folder to keep it in (set XDG_STATE_HOME or HOME)".into());
    }
    Err(why.join("; "))
}

/// Parses the process arguments and runs the subcommand; returns the exit code.
pub fn run_cli() -> Result<i32> {
    let cli = match cli::parse_from(cli::presplit(std::env::args().collect())) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind as K;
            if matches!(
                e.kind(),
                K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return Ok(if e.kind() == K::DisplayHelpOnMissingArgumentOrSubcommand {
                    Exit::Usage as i32
                } else {
                    0
                });
            }
            return Err(Error::usage(cli::clap_line(&e)));
        }
    };
    let Some(output) = cli.cmd.output().map(Path::to_path_buf) else {
        return dispatch(cli.cmd);
    };
    // A file that cannot be written is refused before anything runs (exit 2).
    crate::output::check_writable(&output, "--output")?;
    *output_buf() = Some(String::new());
    *OUTPUT_PATH.lock().unwrap_or_else(|e| e.into_inner()) = Some(output.clone());
    let r = dispatch(cli.cmd);
    let text = output_buf().take().unwrap_or_default();
    if crate::dist::secondary_rank() {
        // rank 0 of a distributed run writes the file
        return r;
    }
    finish_output(&output, &text, r)
}

/// Writes what the command printed to `--output` (whole or not at all), after the command saved
/// its results; nothing when it failed before printing anything. When the file cannot be written
/// now, the text goes to stdout instead, so no result is lost, and the command fails (exit 1).
fn finish_output(path: &Path, text: &str, r: Result<i32>) -> Result<i32> {
    if r.is_err() && text.is_empty() {
        return r;
    }
    match write_atomically(path, text.as_bytes(), "--output") {
        Ok(()) => {
            eprintln!("wrote {}", path.display());
            r
        }
        Err(e) => {
            print_out(text);
            let msg = format!("{e} (printed on stdout instead)");
            match r {
                Ok(_) => Err(Error::failed(msg)),
                Err(first) => {
                    eprintln!("iolab: error: {msg}");
                    Err(first)
                }
            }
        }
    }
}

fn dispatch(cmd: Cmd) -> Result<i32> {
    match cmd {
        Cmd::Run(a) => run::cmd_run(&a),
        Cmd::Prepare(a) => prepare::prepare(&a),
        Cmd::Cleanup(a) => prepare::cleanup(&a),
        Cmd::Env(a) => system::env(&a),
        Cmd::Check(a) => system::check(&a),
        Cmd::Iostat(a) => iostat::cmd_iostat(&a),
        Cmd::Capture(a) => capture::cmd_capture(&a),
        Cmd::Fingerprint(a) => capture::cmd_fingerprint(&a),
        Cmd::FsyncProbe(a) => system::fsync_probe(&a),
        Cmd::Db(a) => db::cmd_db(&a),
        Cmd::Sweep(a) => sweep::cmd_sweep(&a),
        Cmd::Saturate(a) => saturate::cmd_saturate(&a),
        Cmd::Together(a) => together::cmd_together(&a),
        Cmd::Completions(a) => manual::completions(&a),
        Cmd::Manpages(a) => manual::manpages(&a),
        Cmd::Suite(a) => match &a.which {
            cli::SuiteCmd::SysbenchFileio(x) => suite::cmd_sysbench_fileio(x),
            cli::SuiteCmd::Iozone(x) => suite::cmd_iozone(x),
            cli::SuiteCmd::Bonnie(x) => suite::cmd_bonnie(x),
            cli::SuiteCmd::Pts(x) => suite::cmd_pts(x),
        },
        Cmd::Zones(a) => suite::cmd_zones(&a),
        Cmd::Report(a) => charts::report(&a),
        Cmd::Plot(a) => charts::plot(&a),
        Cmd::List(a) => stored::list(&a),
        Cmd::Show(a) => stored::show(&a),
        Cmd::Explain(a) => stored::explain(&a),
        Cmd::Delete(a) => stored::delete(&a),
        Cmd::Compare(a) => stored::compare(&a),
        Cmd::Export(a) => stored::export(&a),
        Cmd::Import(a) => stored::import(&a),
        Cmd::Crashcheck(a) => match &a.which {
            cli::CrashCmd::Listen(x) => crashcheck::listen(x),
            cli::CrashCmd::Write(x) => crashcheck::write(x),
            cli::CrashCmd::Verify(x) => crashcheck::verify(x),
        },
        Cmd::Verify(a) => crashcheck::verify_set(&a),
        Cmd::Store(a) => match &a.which {
            cli::StoreCmd::Copy(x) => stored::store_copy(x),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--output` written when the command ends: whole; no file when nothing was printed before a
    /// failure; a file that fails only then fails the command (exit 1) with the text on stdout.
    #[test]
    fn output_is_written_at_the_end_or_not_lost() {
        let d = tempfile::tempdir().unwrap();
        let ok = d.path().join("r.txt");
        assert_eq!(finish_output(&ok, "a table\n", Ok(3)).unwrap(), 3);
        assert_eq!(std::fs::read_to_string(&ok).unwrap(), "a table\n");
        let none = d.path().join("none.txt");
        let e = finish_output(&none, "", Err(Error::usage("bad"))).unwrap_err();
        assert_eq!(e.msg, "bad");
        assert!(!none.exists());
        let gone = d.path().join("gone/r.txt");
        let e = finish_output(&gone, "a table\n", Ok(0)).unwrap_err();
        assert_eq!(e.exit, Exit::Failed);
        assert!(
            e.msg.starts_with(&format!("--output {}", gone.display()))
                && e.msg.ends_with("(printed on stdout instead)"),
            "{}",
            e.msg
        );
        // The command's own error stays the one it exits with.
        let e = finish_output(&gone, "a table\n", Err(Error::failed("first"))).unwrap_err();
        assert_eq!(e.msg, "first");
        assert_eq!(
            crate::output::check_writable(&gone, "--output")
                .unwrap_err()
                .exit,
            Exit::Usage
        );
        assert_eq!(
            crate::output::check_writable(d.path(), "--output")
                .unwrap_err()
                .exit,
            Exit::Usage
        );
        crate::output::check_writable(&ok, "--output").unwrap();
        assert_eq!(entries(d.path()), ["r.txt"]);
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}
