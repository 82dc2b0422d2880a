//! `iolab crashcheck listen|write|verify` (workloads::crashcheck) and `iolab verify --dir`
//! (engine::verify); docs/verify.md.

use super::*;
use crate::model::crashcheck::{self as cc, Hello, Journal, RunKey, Stop};
use crate::workloads::crashcheck::{self as wc, JournalAt, SyncMode};

fn journal_at(to: Option<&String>, journal: Option<&std::path::PathBuf>) -> JournalAt {
    match (to, journal) {
        (Some(a), _) => JournalAt::Tcp(a.clone()),
        (None, Some(p)) => JournalAt::File(p.clone()),
        (None, None) => unreachable!("clap requires one of them"),
    }
}

/// iolab's crashcheck state directory: $XDG_STATE_HOME/iolab/crashcheck, else
/// ~/.local/state/iolab/crashcheck.
fn state_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|s| !s.is_empty())
                .map(|h| std::path::PathBuf::from(h).join(".local/state"))
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("iolab/crashcheck")
}

/// The default directory of the listener's journals.
fn default_journal_dir() -> std::path::PathBuf {
    state_dir()
}

/// Where `write` keeps run keys by default (`RUN.key`, the directory 0700).
fn key_dir() -> std::path::PathBuf {
    state_dir().join("keys")
}

/// The key directory (made 0700 when missing and `create`); refused when another user could
/// write there (a key planted there would be taken for this machine's).
fn private_dir(d: &Path, create: bool) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let bad = |why: String| Error::usage(format!("key directory {}: {why}", d.display()));
    if create {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(d)
            .map_err(|e| bad(e.to_string()))?;
    }
    let m = std::fs::symlink_metadata(d).map_err(|e| bad(e.to_string()))?;
    // SAFETY: geteuid has no failure mode.
    let me = unsafe { libc::geteuid() };
    if !m.is_dir() || m.uid() != me || m.mode() & 0o022 != 0 {
        return Err(bad(format!(
            "must be a directory of uid {me} that nobody else can write (chmod 700)"
        )));
    }
    Ok(())
}

/// The key `verify` checks the journal with: `--key-file`, `--run` with `--key`, `--run`'s key
/// file in the key directory, or the newest key there made for `file`. Returns the key and where
/// it came from.
fn verify_key(a: &cli::CcVerifyArgs, file: &Path) -> Result<(RunKey, String)> {
    if let Some(p) = &a.key_file {
        return wc::load_key(p).map(|(k, _)| (k, p.display().to_string()));
    }
    if let Some(run) = &a.run
        && !cc::is_run_id(run)
    {
        return Err(Error::usage(format!(
            "--run {run}: a run id is 16 hex digits, as `crashcheck write` printed it"
        )));
    }
    match (&a.run, &a.key) {
        (Some(run), Some(hex)) => {
            let key = RunKey::parse_key(hex).ok_or_else(|| {
                Error::usage("--key: 64 hex digits, as `crashcheck write` printed it")
            })?;
            Ok((
                RunKey {
                    run: run.to_lowercase(),
                    key,
                },
                "--key".into(),
            ))
        }
        (Some(run), None) => {
            let p = key_dir().join(format!("{}.key", run.to_lowercase()));
            wc::load_key(&p)
                .map(|(k, _)| (k, p.display().to_string()))
                .map_err(|e| {
                    Error::usage(format!(
                        "--run {run}: no key of that run on this machine ({}); give --key HEX as `write` printed it, or --key-file",
                        e.msg
                    ))
                })
        }
        (None, _) => {
            let d = key_dir();
            let mut best: Option<(std::time::SystemTime, RunKey, std::path::PathBuf)> = None;
            if private_dir(&d, false).is_ok() {
                for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    let p = e.path();
                    let Ok((k, f)) = wc::load_key(&p) else {
                        continue;
                    };
                    if f != file.display().to_string() {
                        continue;
                    }
                    let t = e
                        .metadata()
                        .and_then(|m| m.modified())
                        .unwrap_or(std::time::UNIX_EPOCH);
                    if best.as_ref().is_none_or(|b| t >= b.0) {
                        best = Some((t, k, p));
                    }
                }
            }
            best.map(|(_, k, p)| (k, p.display().to_string()))
                .ok_or_else(|| {
                    Error::usage(format!(
                        "no crashcheck key for {} in {}: give --run ID --key HEX as `write` printed them, or --key-file",
                        file.display(),
                        d.display()
                    ))
                })
        }
    }
}

fn data_dir(dir: &Path) -> Result<std::path::PathBuf> {
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "--dir {}: not a directory",
            dir.display()
        )));
    }
    std::fs::canonicalize(dir).map_err(|e| Error::usage(format!("--dir {}: {e}", dir.display())))
}

fn warn(warnings: &mut Vec<String>, w: Option<String>) {
    if let Some(w) = w {
        eprintln!("iolab: warning: {w}");
        warnings.push(w);
    }
}

fn save(db: &cli::DbArgs, no_save: bool, doc: &cc::CrashDoc, dir: &Path) -> Result<()> {
    if no_save {
        return Ok(());
    }
    let mut s = open_store_write(db)?;
    let system = crate::system::env::collect(&crate::system::env::Roots::live(), Some(dir));
    let id = s.save_crashcheck(doc, Some(&system))?;
    eprintln!("saved as run {id} in {}", s.path.display());
    Ok(())
}

pub fn listen(a: &cli::CcListenArgs) -> Result<i32> {
    let dir = a.journal.clone().unwrap_or_else(default_journal_dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::usage(format!("--journal {}: {e}", dir.display())))?;
    let l = std::net::TcpListener::bind((a.bind.as_str(), a.port))
        .map_err(|e| Error::usage(format!("--bind {} --port {}: {e}", a.bind, a.port)))?;
    let addr = l
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| format!("{}:{}", a.bind, a.port));
    eprintln!(
        "listening on {addr}, journals in {} (Ctrl-C to stop)",
        dir.display()
    );
    let (stop, wake) = stop_flag_and_wake()?;
    wc::listen(l, &dir, &stop, &wake, &|line| eprintln!("{line}"))?;
    Ok(0)
}

pub fn write(a: &cli::CcWriteArgs) -> Result<i32> {
    let sync = SyncMode::parse(&a.sync).ok_or_else(|| {
        Error::usage(format!(
            "--sync {}: use fsync, fdatasync, dsync or direct-dsync",
            a.sync
        ))
    })?;
    let align = if sync == SyncMode::DirectDsync {
        4096
    } else {
        512
    };
    if a.bs < 512 || !a.bs.is_multiple_of(align) || a.bs > 64 << 20 {
        return Err(Error::usage(format!(
            "--bs {}: must be a multiple of {align} bytes, from {align} to 64 MiB",
            a.bs
        )));
    }
    let file_bytes = a.size / a.bs * a.bs;
    if file_bytes == 0 {
        return Err(Error::usage(format!(
            "--size {}: smaller than one record (--bs {})",
            a.size, a.bs
        )));
    }
    let dir = data_dir(&a.dir)?;
    let at = journal_at(a.to.to.as_ref(), a.to.journal.as_ref());
    let key = wc::new_run_key();
    let run = key.run_id();
    let hello = Hello {
        run: key.run.clone(),
        key: key.fingerprint(),
        host: fsinfo::hostname(),
        file: wc::data_path(&dir).display().to_string(),
        record_bytes: a.bs,
        file_bytes,
        sync: sync.name().into(),
    };
    wc::check_data_file(&dir)?;
    // The key, then the journal: neither kept means nothing is written.
    let key_file = match &a.key_file {
        Some(p) => p.clone(),
        None => {
            let d = key_dir();
            private_dir(&d, true)?;
            d.join(format!("{}.key", key.run))
        }
    };
    wc::save_key(&key_file, &key, &hello.file)?;
    // An unreachable listener is refused before the data file exists.
    let mut sink = match wc::Sink::open(&at, &hello, &key) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&key_file);
            return Err(e);
        }
    };
    eprintln!(
        "run {} key {} (fingerprint {}), kept in {}: `crashcheck verify` reads it there, or give it --run {} --key KEY",
        key.run,
        crate::model::auth::hex(&key.key),
        key.fingerprint(),
        key_file.display(),
        key.run
    );
    let mut warnings = Vec::new();
    warn(&mut warnings, wc::same_device_warning(&dir, &at));
    let o = wc::WriteOpts {
        dir: dir.clone(),
        record_bytes: a.bs,
        file_bytes,
        sync,
        count: a.count,
        time_s: a.time,
    };
    let f = wc::create_data_file(&o).inspect_err(|_| {
        // nothing was written: the run's key is not kept either
        let _ = std::fs::remove_file(&key_file);
    })?;
    eprintln!(
        "run {} writing {} ({}, {} records, {}), acknowledging to {}",
        hello.run,
        hello.file,
        crate::model::units::Bytes(file_bytes),
        crate::model::units::Bytes(a.bs),
        sync.name(),
        at.describe()
    );
    let stop = stop_flag();
    let w = wc::write(&o, run, &f, &mut sink, &stop, &|l| eprintln!("iolab: {l}"));
    drop(f);
    let mut doc = wc::doc("write", &hello, &at, warnings);
    let code = match w.stopped {
        Stop::Count | Stop::Time => 0,
        Stop::Interrupted => Exit::Interrupted as i32,
        Stop::IoError => Exit::IoErrors as i32,
        Stop::ListenerLost => Exit::Failed as i32,
    };
    doc.write = Some(w);
    emit(&doc, Format::json_if(a.print.json))?;
    save(&a.db, a.no_save, &doc, &dir)?;
    Ok(code)
}

pub fn verify(a: &cli::CcVerifyArgs) -> Result<i32> {
    let dir = data_dir(&a.dir)?;
    let file = wc::data_path(&dir);
    let at = journal_at(a.from.as_ref(), a.journal.as_ref());
    let (key, from) = verify_key(a, &file)?;
    let text = wc::fetch_journal(&at, &key.run)?;
    // only the writer's journal: every line authenticated by the run's key, in its order (a
    // refusal is one line, naming the run and its key)
    let j = Journal::parse(&text, &key)
        .map_err(|e| Error::usage(format!("the journal from {}: {e}; refused", at.describe())))?;
    eprintln!(
        "checking run {} (key {}, from {from})",
        key.run,
        key.fingerprint()
    );
    let mut warnings = Vec::new();
    if j.hello.file != file.display().to_string() {
        warn(
            &mut warnings,
            Some(format!(
                "run {} wrote {}; checking {}",
                j.hello.run,
                j.hello.file,
                file.display()
            )),
        );
    }
    let (v, more) = wc::verify(&j, &file)?;
    for w in more {
        warn(&mut warnings, Some(w));
    }
    let mut doc = wc::doc("verify", &j.hello, &at, warnings);
    doc.file = file.display().to_string();
    let failed = v.failures() > 0;
    doc.verify = Some(v);
    emit(&doc, Format::json_if(a.print.json))?;
    save(&a.db, a.no_save, &doc, &dir)?;
    Ok(if failed { Exit::IoErrors as i32 } else { 0 })
}

/// `iolab verify --dir D`: every block of a `run --verify` set checked against its state file;
/// stored (kind `verify`) unless `--no-save`. Exit 3 on mismatches; 4 when the store did not take
/// it (the document is kept in a file for `iolab import`, as `iolab run` does).
pub fn verify_set(a: &cli::VerifyArgs) -> Result<i32> {
    let dir = data_dir(&a.dir)?;
    let tags = cli::parse_tags(&a.tag.tags)?;
    // The store first: a store that cannot be opened is refused before the set is read.
    let mut store = if a.no_save {
        None
    } else {
        Some(open_store_write(&a.db)?)
    };
    let start_time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let (head, res, unwritten) = crate::engine::verify::verify_set(&dir)?;
    let doc = crate::model::verify::VerifyDoc {
        schema: crate::model::schema::VERIFY.to_string(),
        doc_id: Some(crate::model::new_doc_id()),
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        start_time,
        dir: dir.display().to_string(),
        run_id: head.run_id,
        block_bytes: head.block_bytes,
        unwritten,
        verify: res,
        host: fsinfo::hostname(),
        label: a.label.label.clone(),
        tags,
    };
    let json = serde_json::to_value(&doc).map_err(|e| Error::failed(e.to_string()))?;
    let saved = store.as_mut().map(|s| {
        let system = crate::system::env::collect(&crate::system::env::Roots::live(), Some(&dir));
        s.save_verify(&doc, &json, Some(&system))
            .map(|id| (id, s.path.clone()))
            .map_err(|e| (e, s.path.clone()))
    });
    emit(&doc, Format::json_if(a.print.json))?;
    match saved {
        Some(Ok((id, p))) => eprintln!("saved as run {id} in {}", p.display()),
        Some(Err((e, path))) => {
            eprintln!(
                "iolab: error: the results above were not saved: {}",
                kept_instead(&path, &e.msg, &json)
            );
            return Ok(Exit::NotSaved as i32);
        }
        None => {}
    }
    Ok(if doc.verify.bad() > 0 {
        Exit::IoErrors as i32
    } else {
        0
    })
}
