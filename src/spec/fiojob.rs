//! fio job files as fio's HOWTO defines them: `[global]` and job sections, `;`/`#` comments,
//! `include FILE`, `$ENV`/`${ENV}` substitution, options with and without values (the values'
//! rules, fio's numbers, times and bools, are `spec::fio_vocab`). Parsing only: what the options mean to iolab is decided in the cli
//! layer (docs/fio-jobs.md). Every option keeps the file and line it came from, for errors.

use crate::error::{Error, Result};
use crate::spec::fio_vocab::is_expression;
use std::path::{Path, PathBuf};

/// One option as written (after comments, includes and substitution), with where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Opt {
    /// The option's name, lowercased, with fio's aliases resolved (`readwrite` is `rw`).
    pub key: String,
    pub value: Option<String>,
    pub file: String,
    pub line: usize,
    /// Given in a `[global]` section (fio's `name=` there renames no job).
    pub global: bool,
}

impl Opt {
    /// `file:line`, the prefix of every message about this option.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
    /// `key=value` or `key`, as in the job file.
    pub fn spelled(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
}

/// One job: its section and the options that apply to it (the `[global]` options in force
/// where it starts, then its own; a later option wins).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSection {
    pub name: String,
    pub file: String,
    pub line: usize,
    /// Index of the job file on the command line (the first job of each later file starts a
    /// new phase, as in fio).
    pub file_index: usize,
    pub opts: Vec<Opt>,
}

impl JobSection {
    /// The last value given to `key` (None: not given; Some(None): given without a value).
    pub fn get(&self, key: &str) -> Option<&Opt> {
        self.opts.iter().rev().find(|o| o.key == key)
    }
}

/// A parsed job file: its text and its jobs in order.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    pub path: String,
    pub text: String,
    pub jobs: Vec<JobSection>,
}

/// fio's option aliases (alias, option).
pub const ALIASES: &[(&str, &str)] = &[
    ("readwrite", "rw"),
    ("blocksize", "bs"),
    ("blocksize_range", "bsrange"),
    ("blocksize_unaligned", "bs_unaligned"),
    ("ba", "blockalign"),
    ("iodepth_batch", "iodepth_batch_submit"),
    ("iodepth_batch_complete", "iodepth_batch_complete_min"),
    ("timeout", "runtime"),
    ("wait_for_previous", "stonewall"),
    ("ratemin", "rate_min"),
    ("io_limit", "io_size"),
    ("fileoffset", "offset"),
    ("ss", "steadystate"),
    ("ss_dur", "steadystate_duration"),
    ("ss_ramp", "steadystate_ramp_time"),
];

fn canonical_key(k: &str) -> String {
    let k = k.trim().to_ascii_lowercase();
    ALIASES
        .iter()
        .find(|(a, _)| *a == k)
        .map_or(k, |(_, o)| o.to_string())
}

/// How a job file is read: its text by path (an error says why, to follow `PATH: `), and
/// environment variables by name.
pub struct Source<'a> {
    pub read: &'a dyn Fn(&Path) -> std::result::Result<String, String>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// How deep `include`s may nest (a chain of distinct files; a loop is refused anyway).
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// Parses one job file (`-`: the text given as `stdin`). `file_index` is its place on the
/// command line.
pub fn parse(path: &str, stdin: Option<&str>, file_index: usize, src: &Source) -> Result<JobFile> {
    let text = match stdin {
        Some(t) => t.to_string(),
        None => (src.read)(Path::new(path))
            .map_err(|e| Error::usage(format!("{path}: cannot read the job file: {e}")))?,
    };
    let mut lines: Vec<(String, usize, String)> = Vec::new();
    let mut stack = vec![PathBuf::from(path)];
    let mut budget = crate::spec::input::JOB_FILE_MAX_BYTES.saturating_sub(text.len() as u64);
    expand(path, &text, &mut stack, &mut lines, &mut budget, src)?;
    let mut jobs: Vec<JobSection> = Vec::new();
    let mut global: Vec<Opt> = Vec::new();
    // None before the first section; Some(None) in [global]; Some(Some(i)) in jobs[i].
    let mut cur: Option<Option<usize>> = None;
    for (file, line, raw) in lines {
        let l = strip_comment(&raw);
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(Error::usage(format!(
                    "{file}:{line}: a section header must be [name] on its own line"
                )));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(Error::usage(format!(
                    "{file}:{line}: empty section name []"
                )));
            }
            if name == "global" {
                cur = Some(None);
            } else {
                jobs.push(JobSection {
                    name: name.to_string(),
                    file: file.clone(),
                    line,
                    file_index,
                    opts: global.clone(),
                });
                cur = Some(Some(jobs.len() - 1));
            }
            continue;
        }
        let (k, v) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (l, None),
        };
        // An option's name only (fio's are letters, digits and `_`): a line that is not an
        // option is refused without quoting it (an included file may hold anything).
        if !is_option_name(k) {
            return Err(Error::usage(format!(
                "{file}:{line}: not an option line (key=value, key, [section] or include FILE)"
            )));
        }
        let value = match v {
            Some(v) => Some(substitute(v, &file, line, src)?),
            None => None,
        };
        let opt = Opt {
            key: canonical_key(k),
            value,
            file: file.clone(),
            line,
            global: cur == Some(None),
        };
        match cur {
            None => {
                return Err(Error::usage(format!(
                    "{file}:{line}: option '{}' comes before any [section]",
                    opt.key
                )));
            }
            Some(None) => global.push(opt),
            Some(Some(i)) => jobs[i].opts.push(opt),
        }
    }
    Ok(JobFile {
        path: path.to_string(),
        text,
        jobs,
    })
}

/// Whether `k` is shaped as an option name: ASCII letters, digits, `_` and `-`, at most 64.
fn is_option_name(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 64
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The lines of a file with its `include`s expanded in place: (file, line number, text).
/// `budget`: the bytes the includes may still add (the job file and its includes together hold
/// at most [`JOB_FILE_MAX_BYTES`](crate::spec::input::JOB_FILE_MAX_BYTES)).
fn expand(
    file: &str,
    text: &str,
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<(String, usize, String)>,
    budget: &mut u64,
    src: &Source,
) -> Result<()> {
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = strip_comment(raw);
        let t = t.trim();
        let Some(rest) = t.strip_prefix("include") else {
            out.push((file.to_string(), line, raw.to_string()));
            continue;
        };
        if !rest.starts_with(char::is_whitespace) {
            out.push((file.to_string(), line, raw.to_string()));
            continue;
        }
        let name = substitute(rest.trim(), file, line, src)?;
        let p = Path::new(&name);
        let target = if p.is_absolute() {
            p.to_path_buf()
        } else {
            Path::new(file).parent().unwrap_or(Path::new("")).join(p)
        };
        let key = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
        if stack
            .iter()
            .any(|s| std::fs::canonicalize(s).unwrap_or_else(|_| s.clone()) == key)
        {
            return Err(Error::usage(format!(
                "{file}:{line}: include {name}: an include loop ({} includes itself through this line)",
                target.display()
            )));
        }
        if stack.len() > MAX_INCLUDE_DEPTH {
            return Err(Error::usage(format!(
                "{file}:{line}: include {name}: includes nest more than {MAX_INCLUDE_DEPTH} deep"
            )));
        }
        let inc = (src.read)(&target).map_err(|e| {
            let shown = target.display().to_string();
            let at = if shown == name {
                name.clone()
            } else {
                format!("{name} ({shown})")
            };
            Error::usage(format!("{file}:{line}: include {at}: {e}"))
        })?;
        *budget = budget.checked_sub(inc.len() as u64).ok_or_else(|| {
            Error::usage(format!(
                "{file}:{line}: include {name}: the job file and its includes hold more than {} MiB",
                crate::spec::input::JOB_FILE_MAX_BYTES >> 20
            ))
        })?;
        stack.push(target.clone());
        expand(&target.display().to_string(), &inc, stack, out, budget, src)?;
        stack.pop();
    }
    Ok(())
}

/// A line without its comment: a line starting with `;` or `#`, or from ` ;`/` #` on.
fn strip_comment(l: &str) -> String {
    let t = l.trim_start();
    if t.starts_with(';') || t.starts_with('#') {
        return String::new();
    }
    let b = l.as_bytes();
    for i in 1..b.len() {
        if (b[i] == b';' || b[i] == b'#') && b[i - 1].is_ascii_whitespace() {
            return l[..i].to_string();
        }
    }
    l.to_string()
}

/// `$NAME` and `${NAME}` replaced by the environment's value; an unset name is an error. A
/// value that uses one of fio's reserved keywords in arithmetic (`8*$mb_memory`) becomes the
/// expression `(8*16384)`, as fio evaluates it.
fn substitute(v: &str, file: &str, line: usize, src: &Source) -> Result<String> {
    let mut reserved = false;
    let out = substitute_names(v, file, line, src, &mut reserved)?;
    let arithmetic = out.contains(['+', '-', '*', '/', '%', '^'])
        && out.starts_with(|c: char| c.is_ascii_digit() || c == '(')
        && out
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-*/%^(). ".contains(c));
    if reserved && arithmetic && !is_expression(&out) {
        return Ok(format!("({out})"));
    }
    Ok(out)
}

fn substitute_names(
    v: &str,
    file: &str,
    line: usize,
    src: &Source,
    reserved: &mut bool,
) -> Result<String> {
    let mut out = String::new();
    let mut rest = v;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(b) = after.strip_prefix('{') {
            let Some(end) = b.find('}') else {
                return Err(Error::usage(format!(
                    "{file}:{line}: '${{' without its closing '}}'"
                )));
            };
            (&b[..end], end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        let braced = after.starts_with('{');
        if name.is_empty() || (!braced && PLACEHOLDERS.contains(&name)) {
            // `$` alone, or fio's own placeholder (filename_format's `$jobnum`): kept as written
            out.push('$');
            rest = after;
            continue;
        }
        *reserved |= RESERVED.contains(&name);
        match (src.env)(name) {
            Some(x) => out.push_str(&x),
            None => {
                return Err(Error::usage(format!(
                    "{file}:{line}: environment variable '{name}' is not set"
                )));
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// fio's reserved keywords (HOWTO "Reserved keywords"): replaced by the system's values, and a
/// value that uses one with arithmetic (`size=8*$mb_memory`) is evaluated as an expression.
pub const RESERVED: &[&str] = &["pagesize", "mb_memory", "ncpus"];

/// fio's placeholders of `filename_format` (HOWTO "filename_format"): fio's, not the
/// environment's, so `$jobnum` is kept as written (`${jobnum}` is still the environment's).
pub const PLACEHOLDERS: &[&str] = &["jobname", "jobnum", "filenum", "clientuid"];

/// Does this text look like a job file: its first line that is no comment is a `[section]`?
pub fn looks_like_jobfile(text: &str) -> bool {
    text.lines()
        .map(strip_comment)
        .map(|l| l.trim().to_string())
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::fio_vocab::parse_size;
    use std::collections::HashMap;

    fn parse_with(files: &[(&str, &str)], env: &[(&str, &str)]) -> Result<JobFile> {
        let files: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let read = |p: &Path| {
            files
                .get(p)
                .cloned()
                .ok_or_else(|| "cannot read it: No such file or directory".to_string())
        };
        let envf = |k: &str| env.get(k).cloned();
        parse(
            "d/job.fio",
            None,
            0,
            &Source {
                read: &read,
                env: &envf,
            },
        )
    }

    #[test]
    fn sections_globals_comments_aliases_and_bare_options() {
        let j = parse_with(
            &[(
                "d/job.fio",
                "; a comment\n# another\n[global]\nblocksize=8k ; trailing\ndirect\n[a]\nreadwrite=randread # why\n[global]\niodepth=4\n[b]\nrw=write\nbs=16k\n",
            )],
            &[],
        )
        .unwrap();
        assert_eq!(j.jobs.len(), 2);
        let a = &j.jobs[0];
        assert_eq!((a.name.as_str(), a.line), ("a", 6));
        assert_eq!(a.get("bs").unwrap().value.as_deref(), Some("8k"));
        assert_eq!(a.get("direct").unwrap().value, None);
        assert_eq!(a.get("rw").unwrap().value.as_deref(), Some("randread"));
        assert_eq!(a.get("rw").unwrap().at(), "d/job.fio:7");
        assert!(
            a.get("iodepth").is_none(),
            "a later [global] does not reach back"
        );
        let b = &j.jobs[1];
        assert_eq!(b.get("iodepth").unwrap().value.as_deref(), Some("4"));
        assert_eq!(b.get("bs").unwrap().value.as_deref(), Some("16k"));
    }

    #[test]
    fn includes_are_relative_and_loops_are_refused() {
        let j = parse_with(
            &[
                (
                    "d/job.fio",
                    "[global]\ninclude inc/common.fio\n[a]\nrw=read\n",
                ),
                ("d/inc/common.fio", "bs=64k\n"),
            ],
            &[],
        )
        .unwrap();
        let o = j.jobs[0].get("bs").unwrap();
        assert_eq!(o.at(), "d/inc/common.fio:1");
        let e = parse_with(
            &[
                ("d/job.fio", "[a]\ninclude b.fio\n"),
                ("d/b.fio", "rw=read\ninclude job.fio\n"),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.msg.starts_with("d/b.fio:2: include job.fio"), "{}", e.msg);
        assert!(e.msg.contains("loop") && !e.msg.contains('\n'));
        let e = parse_with(&[("d/job.fio", "[a]\n\ninclude nope.fio\n")], &[]).unwrap_err();
        assert!(
            e.msg.starts_with("d/job.fio:3: include nope.fio"),
            "{}",
            e.msg
        );
    }

    #[test]
    fn environment_substitution() {
        let j = parse_with(
            &[("d/job.fio", "[a]\nsize=${SZ}\ndirectory=$DIR/x\n")],
            &[("SZ", "1g"), ("DIR", "/mnt")],
        )
        .unwrap();
        assert_eq!(j.jobs[0].get("size").unwrap().value.as_deref(), Some("1g"));
        assert_eq!(
            j.jobs[0].get("directory").unwrap().value.as_deref(),
            Some("/mnt/x")
        );
        let e = parse_with(&[("d/job.fio", "[a]\nsize=${NOPE}\n")], &[]).unwrap_err();
        assert!(
            e.msg
                .starts_with("d/job.fio:2: environment variable 'NOPE'")
        );
        let e = parse_with(&[("d/job.fio", "rw=read\n[a]\n")], &[]).unwrap_err();
        assert!(e.msg.starts_with("d/job.fio:1: option 'rw' comes before"));
    }

    /// fio's placeholders of filename_format are fio's, not unset environment variables (they
    /// were refused as such); a [global] option is marked so (its name= renames no job).
    #[test]
    fn filename_format_placeholders_are_kept_and_globals_marked() {
        let j = parse_with(
            &[(
                "d/job.fio",
                "[global]\nname=g\n[a]\nfilename_format=$jobname.$jobnum.$filenum.$clientuid\n",
            )],
            &[],
        )
        .unwrap();
        let f = j.jobs[0].get("filename_format").unwrap();
        assert_eq!(
            f.value.as_deref(),
            Some("$jobname.$jobnum.$filenum.$clientuid")
        );
        assert!(!f.global);
        assert!(j.jobs[0].get("name").unwrap().global);
        // the braced form is still the environment's
        assert!(parse_with(&[("d/job.fio", "[a]\nfilename_format=${jobnum}\n")], &[]).is_err());
    }

    #[test]
    fn reserved_keywords_with_arithmetic_are_expressions() {
        // HOWTO "Reserved keywords": size=8*$mb_memory
        let j = parse_with(
            &[(
                "d/job.fio",
                "[a]\nsize=8*$mb_memory\nnumjobs=$ncpus\nbs=$pagesize\ndirectory=/x/$ncpus-y\n",
            )],
            &[("mb_memory", "16"), ("ncpus", "4"), ("pagesize", "4096")],
        )
        .unwrap();
        let get = |k: &str| j.jobs[0].get(k).unwrap().value.clone().unwrap();
        assert_eq!(get("size"), "(8*16)");
        assert_eq!(parse_size(&get("size"), 1024), Ok(128));
        assert_eq!(get("numjobs"), "4");
        assert_eq!(get("bs"), "4096");
        assert_eq!(get("directory"), "/x/4-y");
    }

    #[test]
    fn hostile_values_are_bounded_and_never_quoted() {
        let deep = format!("{}1{}", "(".repeat(200_000), ")".repeat(200_000));
        let e = parse_size(&deep, 1024).unwrap_err();
        assert!(e.contains("nested more than 64 deep"), "{e}");
        let e = parse_size(&format!("({}1)", "-".repeat(10_000)), 1024).unwrap_err();
        assert!(e.contains("nested"), "{e}");
        assert_eq!(
            parse_size(&format!("{}4k{}", "(".repeat(30), ")".repeat(30)), 1024),
            Ok(4096)
        );
        let e = parse_size("(0-170141183460469231731687303715884105727-1)", 1024).unwrap_err();
        assert!(!e.contains("1701"), "{e}");
        let e = parse_size("(-(0-170141183460469231731687303715884105727-1))", 1024).unwrap_err();
        assert!(e.contains("overflow"), "{e}");
        let e = parse_with(
            &[
                ("d/job.fio", "[a]\ninclude s\n"),
                ("d/s", "root:$6$secret:20228:0:99999:7:::\n"),
            ],
            &[],
        )
        .unwrap_err();
        assert_eq!(
            e.msg,
            "d/s:1: not an option line (key=value, key, [section] or include FILE)"
        );
        let mut files = vec![("d/job.fio".to_string(), "[a]\ninclude i0\n".to_string())];
        for i in 0..40 {
            files.push((format!("d/i{i}"), format!("include i{}\n", i + 1)));
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let e = parse_with(&files, &[]).unwrap_err();
        assert!(e.msg.contains("nest more than 16 deep"), "{}", e.msg);
    }

    #[test]
    fn detects_job_files() {
        assert!(looks_like_jobfile("; c\n\n[global]\nrw=read\n"));
        assert!(!looks_like_jobfile("rw=read\n"));
        assert!(!looks_like_jobfile(""));
    }
}
