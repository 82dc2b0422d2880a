use super::*;

pub fn env(a: &cli::EnvArgs) -> Result<i32> {
    let (roots, path) = env_target(a)?;
    let e = crate::system::env::collect(&roots, Some(&path));
    emit(&e, Format::json_if(a.print.json))?;
    Ok(0)
}

pub fn check(a: &cli::CheckArgs) -> Result<i32> {
    let (roots, path) = env_target(&a.target())?;
    let e = crate::system::env::collect(&roots, Some(&path));
    let findings = crate::analysis::check::check(&e);
    let doc = crate::output::check::CheckDoc {
        target: path.display().to_string(),
        path: e.path.as_ref().map(|p| p.path.clone()),
        findings: &findings,
    };
    emit(&doc, Format::json_if(a.print.json))?;
    Ok(if crate::analysis::check::has_warnings(&findings) {
        1
    } else {
        0
    })
}

pub fn fsync_probe(a: &cli::FsyncProbeArgs) -> Result<i32> {
    let dir = a.path.clone().unwrap_or_else(|| ".".into());
    if !dir.is_dir() {
        return Err(Error::usage(format!("{}: not a directory", dir.display())));
    }
    let env = crate::system::env::collect(&crate::system::env::Roots::live(), Some(&dir));
    let stop = stop_flag();
    let r = crate::system::fsyncprobe::run(&dir, &env, a.count, a.writers, &stop)?;
    emit(&r, Format::json_if(a.print.json))?;
    Ok(if r.interrupted {
        Exit::Interrupted as i32
    } else {
        0
    })
}
