use super::*;

pub fn prepare(a: &cli::PrepareArgs) -> Result<i32> {
    let layout: crate::model::job::Layout = a
        .layout
        .parse()
        .map_err(|e: String| Error::usage(format!("--layout: {e}")))?;
    // files are rounded to the largest size of a mix or range
    let bs = a.set.bs.as_ref().map_or(16384, |b| b.largest());
    let bs = a.set.bs_write.as_ref().map_or(bs, |w| w.largest().max(bs));
    // the sizes first: nothing is created for a set that cannot be
    let spec = cli::fileset_spec(&a.set, bs, layout)?;
    let is_default = a.set.dir == Path::new(cli::DEFAULT_DIR);
    let created = cli::check_dir(&a.set.dir, is_default)?;
    let checked = (|| -> Result<crate::spec::plan::DioAlign> {
        let probe = cli::Probe::create(&a.set.dir)?;
        let dio = fsinfo::dio_align(&crate::system::env::Roots::live().sys, &probe.0);
        if a.direct && !probe.direct_ok() {
            return Err(Error::usage(format!(
                "--direct: the filesystem at {} does not support O_DIRECT",
                a.set.dir.display()
            )));
        }
        if layout == crate::model::job::Layout::Unwritten {
            cli::check_fallocate(&probe, &a.set.dir)?;
        }
        drop(probe);
        if a.direct && !bs.is_multiple_of(dio.offset) {
            return Err(Error::usage(format!(
                "--bs {bs} is not a multiple of {} bytes, the O_DIRECT alignment",
                dio.offset
            )));
        }
        Ok(dio)
    })();
    let dio = match checked {
        Ok(d) => d,
        Err(e) => {
            // a refused prepare leaves no default --dir behind
            if created {
                crate::system::target::remove_made_dir(&a.set.dir);
            }
            return Err(e);
        }
    };
    let stop = stop_flag();
    // One iolab at a time on a set; a set of other sizes is refused, never rewritten (with
    // --reprepare: removed, iolab's files only, and prepared afresh).
    let _lock = fileset::lock(&spec.dir)?;
    if a.reprepare {
        let n = fileset::remove_other_sizes(&spec)?;
        if n > 0 {
            eprintln!(
                "--reprepare: removed the {n} files of a set of other sizes from {}",
                spec.dir.display()
            );
        }
    }
    fileset::check_sizes(&spec)?;
    let how = match (a.direct, a.buffered) {
        (true, _) => fileset::PrepWrite::Direct,
        (_, true) => fileset::PrepWrite::Buffered,
        _ => fileset::PrepWrite::Auto,
    };
    let r = fileset::prepare(&spec, how, dio.mem, &stop, a.quiet.quiet, false)?;
    let res =
        fileset::evict(&spec).map_err(|e| Error::failed(format!("evicting the file set: {e}")))?;
    if layout != crate::model::job::Layout::Overwrite {
        print_out(&format!(
            "prepared {} files of {} in {} as --layout {layout} ({} made, {} reused; nothing written)\n",
            spec.files,
            crate::model::units::Bytes(spec.file_size_bytes),
            spec.dir.display(),
            spec.files - r.reused_files,
            r.reused_files,
        ));
        return Ok(0);
    }
    print_out(&format!(
        "prepared {} files of {} in {} ({} written in {:.1} s{}, {} reused); page cache after eviction: {:.1}% resident\n",
        spec.files,
        crate::model::units::Bytes(spec.file_size_bytes),
        spec.dir.display(),
        crate::model::units::human_bytes(r.written_bytes as f64),
        r.seconds,
        match (r.written_bytes, r.direct_bytes) {
            (0, _) => "",
            (w, d) if d == w => " with O_DIRECT",
            (_, 0) => " through the page cache",
            _ => " partly with O_DIRECT",
        },
        r.reused_files,
        res.pct()
    ));
    if res.pct() > crate::measure::warnings::EVICT_FAIL_PCT {
        eprintln!(
            "warning [eviction_failed]: {:.1}% of the file set is still in the page cache after fsync + POSIX_FADV_DONTNEED",
            res.pct()
        );
    }
    Ok(0)
}

pub fn cleanup(a: &cli::FileSetArgs) -> Result<i32> {
    cli::check_dir(&a.dir, false)?;
    let _lock = fileset::lock(&a.dir)?;
    let n = fileset::cleanup_dir(&a.dir)?;
    print_out(&format!("removed {n} files from {}\n", a.dir.display()));
    Ok(0)
}
