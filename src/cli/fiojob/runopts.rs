//! A job's `iolab run` flags parsed by the run's own parser into its run options, with the
//! invocation's options that belong to the whole run (`job.rs` and `iolog.rs` both end here).

use super::FioJob;
use super::ctx::Ctx;
use crate::cli::*;
use crate::spec::fio_options;
use crate::spec::fiojob::JobSection;
use std::collections::BTreeMap;

/// The flags parsed by the run's own parser, with the invocation's options that belong to the
/// whole run; the options the job used kept (never one it did not use).
pub(super) fn run_options(
    a: &RunArgs,
    s: &JobSection,
    mut c: Ctx,
    flags: Vec<(String, String)>,
    notes: Vec<String>,
) -> Option<FioJob> {
    let mut argv: Vec<String> = vec!["iolab".into(), "run".into()];
    let mut iolab_args = Vec::new();
    for (k, v) in &flags {
        let bare = [
            "direct",
            "verify",
            "random-every-same",
            "closed",
            "buffered",
        ];
        let arg = if bare.contains(&k.as_str()) {
            format!("--{k}")
        } else {
            format!("--{k}={v}")
        };
        argv.push(arg.clone());
        iolab_args.push(arg);
    }
    let parsed = match parse_from(&argv) {
        Ok(p) => p,
        Err(e) => {
            c.bad_job("", format!(": {}", clap_line(&e)));
            return None;
        }
    };
    let Cmd::Run(p) = parsed.cmd else {
        unreachable!("parsed as run")
    };
    let mut r = *p;
    if !flags.iter().any(|(k, _)| k == "dir") {
        r.set.dir = a.set.dir.clone();
    }
    r.keep = a.keep;
    r.reprepare = a.reprepare;
    r.warm = a.warm;
    r.force = a.force;
    r.destructive = a.destructive.clone();
    r.no_save = a.no_save;
    r.label = a.label.clone();
    r.tag.tags = a.tag.tags.clone();
    r.quiet = a.quiet;
    r.iostat_interval = a.iostat_interval;
    r.report_interval = a.report_interval;
    // how the pacer waits (no fio option: fio always sleeps)
    r.no_spin = a.no_spin;
    r.db = a.db.clone();
    let mut fio_options = BTreeMap::new();
    // a [global] name= is no option of the job (it renames none, as in fio)
    for o in s.opts.iter().filter(|o| !(o.global && o.key == "name")) {
        let used =
            fio_options::find(&o.key).is_some_and(|t| t.status != fio_options::Status::Refused);
        if used
            && !c
                .ignored
                .iter()
                .any(|i| i.starts_with(&format!("{}: ", o.at())))
        {
            fio_options.insert(o.key.clone(), o.value.clone().unwrap_or_default());
        }
    }
    Some(FioJob {
        name: String::new(),
        section: s.name.clone(),
        at: String::new(),
        phase: 0,
        group: 0,
        args: r,
        iolab_args,
        fio_options,
        ignored: std::mem::take(&mut c.ignored),
        notes,
    })
}
