//! `--role NAME:key=value,...` and `--profile db`: several jobs measured at once, each parsed by
//! the run parser itself (so every option, its validation and its messages are the run's).

use super::*;
use clap::{Args, FromArgMatches};

/// Run options that belong to the run as a whole, not to one role: the invocation's and the
/// phase's (clap's groups `INVOCATION` and `WHOLE_RUN` of `RunArgs`), and `help`.
fn run_only() -> Vec<String> {
    let mut v = run_group(INVOCATION);
    v.extend(run_group(WHOLE_RUN));
    v.push("help".into());
    v
}

/// One `--role` as given: its name and its keys (`None`: a switch given without a value).
#[derive(Debug, Clone, PartialEq)]
pub struct RoleSpec {
    pub name: String,
    pub keys: Vec<(String, Option<String>)>,
}

impl RoleSpec {
    /// Sets a key, replacing an earlier value of it (a later key wins).
    fn set(&mut self, k: String, v: Option<String>) {
        self.keys.retain(|(x, _)| *x != k);
        self.keys.push((k, v));
    }
}

fn run_command() -> clap::Command {
    RunArgs::augment_args(clap::Command::new("run"))
}

/// The long names of `iolab run`'s options: (value options, switches).
fn run_option_names() -> (Vec<String>, Vec<String>) {
    let (mut values, mut switches) = (Vec::new(), Vec::new());
    for a in run_command().get_arguments() {
        let Some(long) = a.get_long() else { continue };
        if a.is_hide_set() {
            continue;
        }
        if a.get_action().takes_values() {
            values.push(long.to_string());
        } else {
            switches.push(long.to_string());
        }
    }
    (values, switches)
}

/// The roles of a built-in profile.
pub fn profile(name: &str) -> Result<Vec<RoleSpec>> {
    let role = |name: &str, keys: &[(&str, &str)]| RoleSpec {
        name: name.into(),
        keys: keys
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect(),
    };
    match name {
        // The database profile: the log writer, page reads and checkpoint writes at once. The
        // log is a small set of its own (size=, files=), empty files (layout extend) that it
        // grows with 4 KiB appends, each followed by an fdatasync.
        "db" => Ok(vec![
            role(
                "wal",
                &[
                    ("mode", "seqwr"),
                    ("bs", "4k"),
                    ("threads", "1"),
                    ("fsync-freq", "1"),
                    ("fsync-mode", "fdatasync"),
                    ("size", "64m"),
                    ("files", "1"),
                    ("layout", "extend"),
                ],
            ),
            // Page reads that miss the database's buffer pool: O_DIRECT, so the device answers
            // them, not the page cache (reads:direct=false to measure a buffered database).
            role(
                "reads",
                &[
                    ("mode", "rndrd"),
                    ("bs", "16k"),
                    ("threads", "8"),
                    ("direct", "true"),
                ],
            ),
            // Buffered page writes, and every 2 seconds an fsync of each file a thread wrote
            // since its last one: a flush every few seconds whatever the device's speed (no
            // fsync by count: fsync-freq=0).
            role(
                "checkpoint",
                &[
                    ("mode", "rndwr"),
                    ("bs", "16k"),
                    ("threads", "2"),
                    ("direct", "false"),
                    ("fsync-freq", "0"),
                    ("fsync-every", "2s"),
                ],
            ),
        ]),
        _ => Err(Error::usage(format!(
            "--profile '{name}': not a profile; the one built in is db (roles wal, reads, checkpoint)"
        ))),
    }
}

/// Parses one `--role NAME:key=value,...`. Values may hold commas (`bs=16k:70,1m:30`): a piece
/// without `=` that is no switch continues the value before it.
pub fn parse_role(s: &str) -> Result<RoleSpec> {
    let (name, rest) = s.split_once(':').ok_or_else(|| {
        Error::usage(format!(
            "--role '{s}': use NAME:key=value,... (e.g. wal:mode=seqwr,bs=4k,fsync-freq=1)"
        ))
    })?;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    {
        return Err(Error::usage(format!(
            "--role '{s}': the role name '{name}' must be lowercase letters, digits, _ or -"
        )));
    }
    let (values, switches) = run_option_names();
    let mut role = RoleSpec {
        name: name.to_string(),
        keys: Vec::new(),
    };
    let mut last_value: Option<String> = None;
    for piece in rest.split(',') {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (k, v) = match piece.split_once('=') {
            Some((k, v)) => (
                k.trim().trim_start_matches("--"),
                Some(v.trim().to_string()),
            ),
            None if switches.iter().any(|x| x == piece.trim_start_matches("--")) => {
                (piece.trim_start_matches("--"), None)
            }
            None if values.iter().any(|x| x == piece.trim_start_matches("--")) => {
                return Err(Error::usage(format!(
                    "--role {name}: {piece} needs a value ({piece}=...)"
                )));
            }
            None => match &last_value {
                Some(k) => {
                    let k = k.clone();
                    if let Some((_, Some(v))) = role.keys.iter_mut().find(|(x, _)| *x == k) {
                        v.push(',');
                        v.push_str(piece);
                    }
                    continue;
                }
                None => {
                    return Err(Error::usage(format!(
                        "--role {name}: '{piece}' is not key=value (keys are run options without --: mode, bs, threads, ...)"
                    )));
                }
            },
        };
        if run_only().iter().any(|x| x == k) {
            return Err(Error::usage(format!(
                "--role {name}: {k} belongs to the whole run, not to one role; give --{k} outside --role"
            )));
        }
        let is_value = values.iter().any(|x| x == k);
        let is_switch = switches.iter().any(|x| x == k);
        if !is_value && !is_switch {
            return Err(Error::usage(format!(
                "--role {name}: unknown key '{k}' (keys are run options without --: mode, bs, threads, engine, iodepth, direct, fsync-freq, fsync-every, fsync-mode, rate, size, files, ...)"
            )));
        }
        if is_value && v.is_none() {
            return Err(Error::usage(format!(
                "--role {name}: {k} needs a value ({k}=...)"
            )));
        }
        if is_switch && !matches!(v.as_deref(), None | Some("true") | Some("false")) {
            return Err(Error::usage(format!(
                "--role {name}: {k} is a switch: give {k}, {k}=true or {k}=false"
            )));
        }
        if role.keys.iter().any(|(x, _)| x == k) {
            return Err(Error::usage(format!(
                "--role {name}: {k} is given twice; give each key once"
            )));
        }
        last_value = is_value.then(|| k.to_string());
        role.set(k.to_string(), v);
    }
    Ok(role)
}

/// The roles of a run: the profile's, then each `--role` (one with a profile role's name
/// changes that role's keys). Names are unique.
pub fn role_specs(roles: &[String], profile_name: Option<&str>) -> Result<Vec<RoleSpec>> {
    let mut out = match profile_name {
        Some(p) => profile(p)?,
        None => Vec::new(),
    };
    let from_profile = out.len();
    let mut seen: Vec<String> = Vec::new();
    for s in roles {
        let r = parse_role(s)?;
        if seen.contains(&r.name) {
            return Err(Error::usage(format!(
                "--role {}: given twice; role names are unique",
                r.name
            )));
        }
        seen.push(r.name.clone());
        match out[..from_profile].iter_mut().find(|x| x.name == r.name) {
            Some(base) => {
                for (k, v) in r.keys {
                    base.set(k, v);
                }
            }
            None => out.push(r),
        }
    }
    Ok(out)
}

/// The run options of one role: the run's options with the role's keys on top, parsed by the
/// run's own clap definition. Returns them and whether the role has a file set of its own.
pub fn role_args(base: &RunArgs, role: &RoleSpec) -> Result<(RunArgs, bool)> {
    let (_, switches) = run_option_names();
    let mut argv = vec!["run".to_string()];
    let mut off: Vec<&str> = Vec::new();
    for (k, v) in &role.keys {
        let switch = switches.iter().any(|x| x == k);
        match (switch, v.as_deref()) {
            (true, Some("false")) => off.push(k),
            (true, _) => argv.push(format!("--{k}")),
            (false, Some(v)) => argv.push(format!("--{k}={v}")),
            (false, None) => {}
        }
    }
    let m = run_command().try_get_matches_from(&argv).map_err(|e| {
        let m = e.to_string();
        Error::usage(format!(
            "--role {}: {}",
            role.name,
            m.lines()
                .next()
                .unwrap_or("invalid option")
                .trim_start_matches("error: ")
        ))
    })?;
    let p = RunArgs::from_arg_matches(&m).map_err(|e| {
        Error::usage(format!(
            "--role {}: {}",
            role.name,
            e.to_string().lines().next().unwrap_or("invalid option")
        ))
    })?;
    let mut r = base.clone();
    r.roles.clear();
    r.profile = None;
    let mut own = false;
    for id in m.ids() {
        if m.value_source(id.as_str()) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        match id.as_str() {
            "files" => (r.set.files, own) = (p.set.files, true),
            "size" => (r.set.size, own) = (p.set.size, true),
            // a layout is made of the role's own files (a shared set has the run's)
            "layout" => (r.layout, own) = (p.layout.clone(), true),
            // the files laid out longer, with the range inside them
            "offset" => (r.offset, own) = (p.offset, true),
            "offset_increment" => (r.offset_increment, own) = (p.offset_increment, true),
            "seq_skip" => r.seq_skip = p.seq_skip,
            "force" => r.force = true,
            "bs" => r.set.bs = p.set.bs.clone(),
            "bs_write" => r.set.bs_write = p.set.bs_write.clone(),
            "block_align" => r.block_align = p.block_align,
            "mode" => r.mode = p.mode.clone(),
            "rw_ratio" => r.rw_ratio = p.rw_ratio,
            "rwmixread" => r.rwmixread = p.rwmixread,
            "engine" => r.engine = p.engine.clone(),
            "iodepth" => r.iodepth = p.iodepth,
            "threads" => r.threads = p.threads,
            "direct" => r.direct = true,
            "open_flags" => r.open_flags = p.open_flags.clone(),
            "fsync_freq" => r.fsync_freq = p.fsync_freq,
            "fsync_every" => r.fsync_every = p.fsync_every,
            "fsync_all" => r.fsync_all = true,
            "fsync_end" => r.fsync_end = p.fsync_end,
            "no_fsync_end" => r.no_fsync_end = true,
            "fsync_mode" => r.fsync_mode = p.fsync_mode.clone(),
            "distribution" => r.distribution = p.distribution.clone(),
            "seed" => r.seed = p.seed,
            "rate" => r.rate = p.rate,
            "no_spin" => r.no_spin = true,
            _ => {}
        }
    }
    for k in off {
        match k {
            "direct" => r.direct = false,
            "fsync-all" => r.fsync_all = false,
            "no-fsync-end" => r.no_fsync_end = false,
            _ => {}
        }
    }
    Ok((r, own))
}

/// The plan of a run with roles: each role planned by [`plan_run`] as a one-mode run, the
/// file sets decided (the run's shared set, or `DIR/NAME/` for a role with its own).
pub fn plan_roles(a: &RunArgs) -> Result<Plan> {
    if let Some(m) = &a.mode
        && m.contains(',')
    {
        return Err(Error::usage(
            "--mode with --role/--profile: a list of modes runs one after the other, roles run at once; give each role its mode (mode=rndrd)",
        ));
    }
    if let Some(d) = &a.device {
        return Err(Error::usage(format!(
            "--device {} cannot be used with --role/--profile: roles run on file sets in --dir (each role's own set in DIR/NAME/); measure the device with one --mode, or put a filesystem on it and give --dir",
            d.display()
        )));
    }
    let specs = role_specs(&a.roles, a.profile.as_deref())?;
    let mut roles = Vec::new();
    for spec in &specs {
        let (ra, own) = role_args(a, spec)?;
        let bump = a.seed.is_some() && !spec.keys.iter().any(|(k, _)| k == "seed");
        roles.push((spec.name.clone(), ra, own, bump));
    }
    plan_role_set(a, roles)
}

/// The plan of a phase of concurrent roles, each given by its name, its run options, whether
/// it has a file set of its own (in `ITS_DIR/NAME/`) and whether its seed is the run's plus its
/// index. `a` holds the run's options (the shared file set).
pub fn plan_role_set(a: &RunArgs, specs: Vec<(String, RunArgs, bool, bool)>) -> Result<Plan> {
    let mut created_dir = false;
    let undo = |created: bool, e: Error| {
        if created {
            crate::system::target::remove_made_dir(&a.set.dir);
        }
        e
    };
    let mut roles: Vec<crate::spec::plan::Role> = Vec::new();
    let mut first: Option<Plan> = None;
    let mut notes: Vec<Warning> = Vec::new();
    for (i, (name, ra, own, bump)) in specs.into_iter().enumerate() {
        let spec = RoleSpec {
            name,
            keys: Vec::new(),
        };
        if let Some(d) = &ra.device {
            return Err(undo(
                created_dir,
                Error::usage(format!(
                    "{}: a block device ({}) cannot be measured by a role: roles run on file sets at once; give the device a phase of its own",
                    spec.name,
                    d.display()
                )),
            ));
        }
        if ra.verify {
            return Err(undo(
                created_dir,
                Error::usage(format!(
                    "{}: --verify cannot be combined with roles (--role, --profile or a job file's concurrent jobs); verify one workload at a time",
                    spec.name
                )),
            ));
        }
        let p = plan_run(&ra).map_err(|e| {
            let e = if e.msg.starts_with("--role") {
                e
            } else {
                Error {
                    msg: format!("--role {}: {}", spec.name, e.msg),
                    ..e
                }
            };
            undo(created_dir, e)
        })?;
        created_dir |= p.created_dir;
        if p.cells.len() != 1 {
            return Err(undo(
                created_dir,
                Error::usage(if ra.mode.is_none() {
                    format!(
                        "--role {}: give the role a mode (mode=rndrd, seqwr, ...)",
                        spec.name
                    )
                } else {
                    format!(
                        "--role {}: one mode per role; give several roles instead of a list",
                        spec.name
                    )
                }),
            ));
        }
        let mut job = p.cells[0].clone();
        if bump {
            // One --seed for the run: each role its own offsets, reproducibly.
            job.seed = job.seed.wrapping_add(i as u64);
        }
        let uses_files = crate::engine::caps(job.engine).needs_files;
        if job.mode == Mode::Seqwr && !own && uses_files {
            return Err(undo(
                created_dir,
                Error::usage(format!(
                    "--role {}: seqwr empties its files first, so it needs a file set of its own: give the role size= or files=",
                    spec.name
                )),
            ));
        }
        let mut fileset = p.fileset.clone();
        if !own && fileset.device.is_none() && fileset.file_len_bytes.is_some() {
            return Err(undo(
                created_dir,
                Error::usage(format!(
                    "--role {}: --offset or --offset-increment lays the files out longer, so it needs a file set of its own: give the role size= or files=",
                    spec.name
                )),
            ));
        }
        if own {
            fileset.dir = ra.set.dir.join(&spec.name);
        }
        for n in &p.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
        roles.push(crate::spec::plan::Role {
            name: spec.name.clone(),
            job,
            fileset,
            own_set: own,
        });
        if first.is_none() {
            first = Some(p);
        }
    }
    let Some(first) = first else {
        return Err(Error::usage("--role: no roles given"));
    };
    // Each role's threads fit on their own (plan_run checked them); the roles run at once.
    let names: Vec<&str> = roles.iter().map(|r| r.name.as_str()).collect();
    let jobs: Vec<&Job> = roles.iter().map(|r| &r.job).collect();
    crate::cli::plan::check_concurrent_threads(&names, &jobs).map_err(|e| undo(created_dir, e))?;
    // the shared set's block; when every role has its own set, the shared one is only
    // recorded: the smallest role block (16k would refuse roles of small files, 200 x 4k)
    let unit = roles
        .iter()
        .filter(|r| !r.own_set)
        .map(|r| r.job.bs_bytes)
        .max()
        .unwrap_or_else(|| roles.iter().map(|r| r.job.bs_bytes).min().unwrap_or(16384));
    let layout: crate::model::job::Layout = a
        .layout
        .parse()
        .map_err(|e: String| undo(created_dir, Error::usage(format!("--layout: {e}"))))?;
    let fileset = crate::model::job::FileSetSpec {
        larger_ok: a.named_files,
        ..fileset_spec(&a.set, unit, layout).map_err(|e| undo(created_dir, e))?
    };
    for r in roles.iter_mut().filter(|r| !r.own_set) {
        r.fileset = fileset.clone();
    }
    Ok(Plan {
        fileset,
        cells: roles.iter().map(|r| r.job.clone()).collect(),
        created_dir,
        notes,
        roles,
        ..first
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(r: &RoleSpec) -> Vec<String> {
        r.keys
            .iter()
            .map(|(k, v)| match v {
                Some(v) => format!("{k}={v}"),
                None => k.clone(),
            })
            .collect()
    }

    #[test]
    fn parses_keys_switches_and_values_with_commas() {
        let r = parse_role("wal:mode=seqwr,bs=16k:70,1m:30,direct,threads=2").unwrap();
        assert_eq!(r.name, "wal");
        assert_eq!(
            keys(&r),
            ["mode=seqwr", "bs=16k:70,1m:30", "direct", "threads=2"]
        );
        let r = parse_role("a-1_b:fsync-freq=1,direct=false,bs=4k").unwrap();
        assert_eq!(keys(&r), ["fsync-freq=1", "direct=false", "bs=4k"]);
        // a key given twice is a typo, refused (issue 24: the last one silently won)
        let e = parse_role("x:bs=4k,bs=8k").unwrap_err();
        assert_eq!(e.msg, "--role x: bs is given twice; give each key once");
    }

    #[test]
    fn refuses_bad_roles_with_one_line_naming_role_and_key() {
        let err = |s: &str| parse_role(s).unwrap_err();
        let e = err("wal:mode=seqwr,colour=blue");
        assert_eq!(e.exit, crate::error::Exit::Usage);
        assert!(
            e.msg.contains("--role wal") && e.msg.contains("'colour'"),
            "{}",
            e.msg
        );
        assert!(!e.msg.contains('\n'));
        assert!(err("wal").msg.contains("NAME:key=value"));
        assert!(err("Wal:mode=seqwr").msg.contains("lowercase"));
        assert!(err(":mode=seqwr").msg.contains("role name"));
        assert!(err("wal:time=5").msg.contains("give --time outside --role"));
        assert!(err("wal:dir=/tmp").msg.contains("--dir"));
        // the invocation's options (clap's INVOCATION group) and the phase's (WHOLE_RUN)
        for k in [
            "label=x",
            "tag=a=b",
            "quiet",
            "output-format=json",
            "rank-timeout=5",
            "ramp=1",
        ] {
            let m = err(&format!("wal:{k}")).msg;
            assert!(m.contains("belongs to the whole run"), "{k}: {m}");
        }
        assert!(err("wal:bs").msg.contains("bs needs a value"));
        assert!(err("wal:direct=maybe").msg.contains("switch"));
        assert!(err("wal:seqwr").msg.contains("'seqwr' is not key=value"));
    }

    #[test]
    fn profile_db_expands_and_roles_override_it() {
        let p = role_specs(&[], Some("db")).unwrap();
        let names: Vec<&str> = p.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["wal", "reads", "checkpoint"]);
        assert!(keys(&p[0]).contains(&"fsync-mode=fdatasync".to_string()));
        assert!(keys(&p[0]).contains(&"fsync-freq=1".to_string()));
        assert!(keys(&p[2]).contains(&"fsync-every=2s".to_string()));
        assert!(keys(&p[2]).contains(&"fsync-freq=0".to_string()));
        let p = role_specs(
            &["reads:threads=2".into(), "extra:mode=rndrd".into()],
            Some("db"),
        )
        .unwrap();
        assert_eq!(p.len(), 4);
        assert!(keys(&p[1]).contains(&"threads=2".to_string()));
        assert!(!keys(&p[1]).contains(&"threads=8".to_string()));
        assert!(keys(&p[1]).contains(&"bs=16k".to_string()));
        assert_eq!(p[3].name, "extra");
        let e = role_specs(&["a:mode=rndrd".into(), "a:mode=rndwr".into()], None).unwrap_err();
        assert!(e.msg.contains("given twice"), "{}", e.msg);
        assert!(
            role_specs(&[], Some("oltp"))
                .unwrap_err()
                .msg
                .contains("not a profile")
        );
    }

    #[test]
    fn role_args_layer_the_role_over_the_run_options() {
        use clap::Parser;
        let Cmd::Run(base) = Cli::try_parse_from([
            "iolab",
            "run",
            "--threads",
            "4",
            "--direct",
            "--fsync-freq",
            "10",
            "--size",
            "8m",
        ])
        .unwrap()
        .cmd
        else {
            unreachable!()
        };
        let r = parse_role("w:mode=seqwr,bs=4k,direct=false,size=1m").unwrap();
        let (a, own) = role_args(&base, &r).unwrap();
        assert!(own);
        assert_eq!(a.mode.as_deref(), Some("seqwr"));
        assert!(!a.direct);
        assert_eq!(a.threads, Some(4));
        assert_eq!(
            a.fsync_freq, 10,
            "defaults of the role do not replace the run's"
        );
        assert_eq!(a.set.size, Some(1 << 20));
        assert_eq!(a.fsync_every, None);
        let (a, _) = role_args(
            &base,
            &parse_role("c:mode=rndwr,fsync-every=500ms").unwrap(),
        )
        .unwrap();
        assert_eq!((a.fsync_every, a.fsync_freq), (Some(0.5), 10));
        let (a, own) = role_args(&base, &parse_role("r:mode=rndrd").unwrap()).unwrap();
        assert!(!own && a.direct && a.set.size == Some(8 << 20));
        let e = role_args(&base, &parse_role("r:threads=0").unwrap()).unwrap_err();
        assert!(e.msg.starts_with("--role r: "), "{}", e.msg);
        assert_eq!(e.exit, crate::error::Exit::Usage);
    }
}
