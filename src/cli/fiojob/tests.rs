//! The translation of job files, without running anything.

use super::*;

fn run_args(extra: &[&str]) -> RunArgs {
    use clap::Parser;
    let mut argv = vec!["iolab", "run", "x.fio"];
    argv.extend_from_slice(extra);
    match Cli::try_parse_from(argv).unwrap().cmd {
        Cmd::Run(a) => *a,
        _ => unreachable!(),
    }
}

fn parse_text(text: &str) -> JobFile {
    let read = |_: &Path| Err("cannot read it".to_string());
    let env = |_: &str| None;
    fiojob::parse(
        "t.fio",
        Some(text),
        0,
        &fiojob::Source {
            read: &read,
            env: &env,
        },
    )
    .unwrap()
}

fn jobs(text: &str, extra: &[&str]) -> Result<FioRun> {
    translate(&run_args(extra), vec![parse_text(text)])
}

#[test]
fn every_supported_option_becomes_run_options() {
    let r = jobs(
        include_str!("../../../tests/fixtures/fio-jobs/options.fio"),
        &[],
    )
    .unwrap();
    let by = |n: &str| r.jobs.iter().find(|j| j.name == n).unwrap();
    let args = |n: &str| by(n).iolab_args.join(" ");
    assert_eq!(
        args("randread-zipf"),
        "--mode=rndrd --bs=16384 --engine=libaio --iodepth=16 --direct --threads=2 --fsync-freq=0 --fsync-end=false --files=8 --size=2147483648 --dir=/data/bench --time=30 --ramp=5 --rate=1000 --distribution=zipf:1.2 --seed=42"
    );
    assert_eq!(
        args("oltp-mix"),
        "--mode=rndrw --rwmixread=70 --bs=4096:50,16384:25,65536:25 --engine=io_uring --iodepth=16 --direct --threads=1 --fsync-freq=16 --fsync-end=true --files=2 --size=536870912 --dir=/data/bench --io-size=536870912 --distribution=zoned:60/10:30/20:10/70"
    );
    assert_eq!(
        args("log"),
        "--mode=seqwr --bs=4096 --engine=sync --threads=1 --fsync-freq=1 --fsync-mode=fdatasync --fsync-end=false --open-flags=dsync --files=1 --size=64000000 --dir=/data/bench --ops=31250 --layout=holes"
    );
    // rate=4m of 4 KiB writes is 976.5625 a second: fio's byte schedule, not `--rate`
    assert_eq!(by("log").args.timing.rate_bps, [0, 4_000_000]);
    assert_eq!(
        args("scan"),
        "--mode=seqrd --bs=65536-1048576 --engine=mmap --threads=2 --fsync-freq=0 --fsync-end=true --files=2 --size=2147483648 --dir=/data/bench --time=60 --io-size=4294967296"
    );
    assert_eq!(
        args("dev"),
        "--mode=rndrd --bs=4096 --engine=posixaio --iodepth=16 --direct --threads=1 --fsync-freq=0 --fsync-end=false --device=/dev/nvme0n1 --offset=1073741824 --size=10737418240 --time=10 --ops=2621440 --distribution=pareto:0.9"
    );
    // phases: stonewall, wait_for on a job of the phase, stonewall
    let phases: Vec<(String, usize)> = r.jobs.iter().map(|j| (j.name.clone(), j.phase)).collect();
    assert_eq!(
        phases,
        [
            ("randread-zipf".to_string(), 0),
            ("oltp-mix".into(), 1),
            ("log".into(), 2),
            ("scan".into(), 2),
            ("dev".into(), 3)
        ]
    );
    assert_eq!(r.phases, 4);
    assert!(r.jobs.iter().all(|j| j.ignored.is_empty()));
    assert!(
        by("scan")
            .notes
            .iter()
            .any(|n| n.contains("a.dat:/data/bench/b.dat"))
    );
    assert!(
        by("log")
            .notes
            .iter()
            .any(|n| n.contains("iodepth=16 has no effect"))
    );
    assert_eq!(by("log").fio_options["kb_base"], "1000");
    assert_eq!(by("randread-zipf").at, "t.fio:18");
    // the parsed options are the run's own
    let a = &by("randread-zipf").args;
    assert_eq!(
        (a.threads, a.iodepth, a.direct, a.rate),
        (Some(2), 16, true, Some(1000))
    );
}

#[test]
fn defaults_are_fios() {
    let r = jobs("[j]\nsize=1m\n", &["--dir", "/x"]).unwrap();
    assert_eq!(
        r.jobs[0].iolab_args.join(" "),
        format!(
            "--mode=seqrd --bs=4096 --engine=sync --threads=1 --fsync-freq=0 --fsync-end=false --files=1 --size=1048576 --ops=256 --seed={FIO_RANDSEED}"
        )
    );
    assert_eq!(r.jobs[0].args.set.dir, PathBuf::from("/x"));
    // a later job file starts a new phase; names are made unique and role-shaped
    let f2 = parse_text("[My Job]\nsize=1m\n[my job]\nsize=1m\n");
    let mut f2b = f2.clone();
    f2b.jobs.iter_mut().for_each(|j| j.file_index = 1);
    let r = translate(&run_args(&[]), vec![f2, f2b]).unwrap();
    let names: Vec<(&str, usize)> = r.jobs.iter().map(|j| (j.name.as_str(), j.phase)).collect();
    assert_eq!(
        names,
        [
            ("my-job", 0),
            ("my-job-2", 0),
            ("my-job-3", 1),
            ("my-job-4", 1)
        ]
    );
}

/// Every blocker of the files in one pass, one line each (by file and line), whatever kind:
/// before, the refusal was one line of at most eight options, and a value error or a job
/// without a size stopped the translation at the first, so files still failed after the
/// listed options were removed.
#[test]
fn every_blocker_is_listed_in_one_pass_one_line_each() {
    let text = "[global]\nsize=1m\nzonemode=zbd\n[a]\nexec_prerun=x\n[b]\nrw=randrw\nioengine=sg\nbs=4k,8k\nrandom_distribution=normal:5\natomic=1\nlockmem=1m\nfrobnicate=7\n[c]\nrw=read\nsize=\nbs=abc\ndirect=2\n";
    let e = jobs(text, &[]).unwrap_err();
    assert_eq!(e.exit, crate::error::Exit::Usage);
    let lines: Vec<&str> = e.msg.split("\niolab: error: ").collect();
    assert_eq!(
        lines,
        [
            "t.fio:3: zonemode: refused: zoned block device mode (write pointers, zone resets) is not run",
            "t.fio:5: exec_prerun: refused: iolab runs no commands",
            "t.fio:8: ioengine: refused: iolab runs sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, mmap, null, posixaio, falloc, ftruncate, filecreate, filestat, filedelete, cpuio and exec",
            "t.fio:10: random_distribution: refused: iolab draws random, zipf, pareto and zoned offsets",
            "t.fio:11: atomic: refused: no atomic writes",
            "t.fio:12: lockmem: refused: no memory locking",
            "t.fio:13: frobnicate: refused: not one of fio's options iolab knows",
            "t.fio:16: size: not a number (4096, 4k, 1m, 0x1000)",
            "t.fio:17: bs: not a number (4096, 4k, 1m, 0x1000)",
            "t.fio:18: direct: not 0 or 1 (true/false, yes/no, on/off)",
        ]
    );
    // value errors are not skipped by --ignore-unsupported
    let e = jobs(text, &["--ignore-unsupported"]).unwrap_err();
    assert_eq!(e.msg.split('\n').count(), 3, "{}", e.msg);
    let text = &text[..text.find("[c]").unwrap()];
    let r = jobs(text, &["--ignore-unsupported"]).unwrap();
    // a refused or unknown option is recorded by name only, never its value
    assert_eq!(
        r.jobs[0].ignored,
        ["t.fio:5: exec_prerun", "t.fio:3: zonemode=zbd"]
    );
    // zonemode, ioengine, random_distribution, startdelay, lockmem, frobnicate (bs=4k,8k of
    // randrw: reads 4k, writes 8k, no longer refused)
    assert_eq!(r.jobs[1].ignored.len(), 6);
    assert!(
        r.jobs[1]
            .ignored
            .contains(&"t.fio:13: frobnicate".to_string())
    );
    // and the options stored are those iolab used
    assert!(!r.jobs[0].fio_options.contains_key("zonemode"));
    assert!(!r.jobs[0].fio_options.contains_key("exec_prerun"));
    assert_eq!(r.jobs[0].fio_options["size"], "1m");
    // a random `:N` is a count of I/Os (fio's), a sequential one a size
    let e = jobs("[a]\nsize=1m\nrw=randread:x\n", &[]).unwrap_err();
    assert_eq!(
        e.msg,
        "t.fio:3: rw: `:N` of a random pattern is a count (randread:8)"
    );
}

/// Found by tests/fuzz_input.rs: a refusal of a value derived from options that are not
/// given (filesize for size, numjobs × nrfiles without nrfiles) panicked ("option given").
#[test]
fn refusals_of_derived_values_name_the_job() {
    let e = jobs("[a]\nfilesize=0\n", &[]).unwrap_err();
    assert_eq!(e.msg, "t.fio:1: job 'a': size: a size of 0");
    let e = jobs("[a]\nsize=1m\nnumjobs=5000000000\n", &[]).unwrap_err();
    assert_eq!(e.msg, "t.fio:1: job 'a': nrfiles: too many files");
}

#[test]
fn values_fio_rejects_name_file_and_line() {
    for (text, want) in [
        ("[a]\nsize=1m\nbs=abc\n", "t.fio:3: bs: not a number"),
        (
            "[a]\nsize=1m\n[b]\nsize=1m\nwait_for=zz\n",
            "t.fio:5: wait_for: no job of that name",
        ),
        (
            "[a]\nsize=1m\nrw=sideways\n",
            "t.fio:3: rw: not an I/O pattern",
        ),
        ("[a]\nrw=read\n", "t.fio:1: job 'a' gives no size"),
        (
            "[a]\nsize=1m\nruntime=soon\n",
            "t.fio:3: runtime: not a time",
        ),
        (
            "[a]\nsize=1m\nrw=randrw\nrwmixread=120\n",
            "t.fio:4: rwmixread: not a percentage",
        ),
        (
            "[a]\nsize=1m\nbssplit=4k/60:8k/60:16k:32k\n",
            "t.fio:3: bssplit: the percentages add up to more than 100",
        ),
        ("[a]\nsize=1m\ndirect=2\n", "t.fio:3: direct: not 0 or 1"),
        (
            "[a]\nsize=1m\nnumjobs=0\n",
            "t.fio:3: numjobs: must be at least 1",
        ),
        (
            "[a]\nsize=1m\ntime_based\n",
            "t.fio:3: time_based: needs runtime=",
        ),
    ] {
        let e = jobs(text, &[]).unwrap_err();
        assert!(e.msg.starts_with(want), "{text}: {}", e.msg);
        assert!(!e.msg.contains('\n'), "{}", e.msg);
        // the value that did not parse is never quoted
        let value = text
            .lines()
            .last()
            .unwrap()
            .split('=')
            .nth(1)
            .unwrap_or("@");
        assert!(!e.msg.contains(&format!("'{value}'")), "{}", e.msg);
    }
    assert!(jobs("[a]\nsize=1m\n", &["--mode", "rndrd"]).is_err());
}

fn args_of(text: &str) -> String {
    jobs(text, &["--dir", "/x"])
        .unwrap_or_else(|e| panic!("{text}: {}", e.msg))
        .jobs[0]
        .iolab_args
        .join(" ")
}

/// fio draws a bsrange's sizes as multiples of its minimum: 1k-4k and 512-4k were refused as
/// "not a multiple of the step 4KiB".
#[test]
fn bsrange_steps_by_its_minimum_as_fio() {
    assert!(args_of("[a]\nsize=1m\nbsrange=1k-4k\n").contains("--bs=1024-4096 "));
    assert!(args_of("[a]\nsize=1m\nbsrange=512-4k\n").contains("--bs=512-4096 "));
    // a maximum that is no multiple of the minimum: drawn too, with the odds left (fio)
    assert!(args_of("[a]\nsize=1m\nbsrange=3k-8k\n").contains("--bs=3072-8192 "));
    let r = jobs("[a]\nsize=1m\nbsrange=512-4k\n", &[]).unwrap();
    match &r.jobs[0].args.set.bs {
        Some(BsArg::Range { min, max }) => assert_eq!((*min, *max), (512, 4096)),
        b => panic!("{b:?}"),
    }
}

/// fio's rand-zones example ends its zoned list with `20/`: the rest of the range.
#[test]
fn a_zoned_list_ending_in_a_slash_takes_the_rest() {
    let a =
        args_of("[a]\nsize=1m\nrw=randread\nruntime=1\nrandom_distribution=zoned:50/5:30/15:20/\n");
    assert!(a.contains("--distribution=zoned:50/5:30/15:20/80"), "{a}");
}

/// `offset=0%` is the start; `size=128z` is zones, which fio refuses without zonemode=zbd (so
/// iolab refuses it with that reason, not "not a number").
#[test]
fn offset_percent_and_zone_sizes() {
    assert!(!args_of("[a]\nsize=1m\noffset=0%\n").contains("--offset"));
    let e = jobs("[a]\nsize=128z\n", &[]).unwrap_err();
    assert_eq!(
        e.msg,
        "t.fio:2: size: refused: a size in zones needs zonemode=zbd, which iolab does not run (fio 3.33 without it refuses it too)"
    );
}

/// A job on a device without size= runs over the whole device (from offset=), as fio does; it
/// was refused ("gives neither size= nor runtime=").
#[test]
fn a_device_without_size_is_the_whole_device() {
    let f = parse_text("[a]\nfilename=/dev/loop9\noffset=25%\n");
    let r = translate_with(&run_args(&[]), vec![f], &|p| {
        (p == Path::new("/dev/loop9")).then_some(1 << 30)
    })
    .unwrap();
    let a = r.jobs[0].iolab_args.join(" ");
    assert!(
        a.contains("--device=/dev/loop9 --offset=268435456")
            && a.contains(&format!("--ops={}", (3 << 28) / 4096)),
        "{a}"
    );
    // unreadable: one line saying what to give
    let f = parse_text("[a]\nfilename=/dev/loop9\n");
    let e = translate_with(&run_args(&[]), vec![f], &|_| None).unwrap_err();
    assert!(
        e.msg.starts_with(
            "t.fio:1: job 'a' gives no size= and the size of /dev/loop9 cannot be read"
        ),
        "{}",
        e.msg
    );
}

/// A job naming existing files without size= moves their bytes, as fio (it refused: "gives no
/// size"); a named file that is missing, empty or a symbolic link still needs size=.
#[test]
fn named_existing_files_without_size_give_their_size() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f1"), vec![1u8; 1 << 20]).unwrap();
    std::fs::write(d.path().join("f2"), vec![1u8; 3 << 20]).unwrap();
    std::fs::write(d.path().join("empty"), b"").unwrap();
    std::os::unix::fs::symlink(d.path().join("f1"), d.path().join("link")).unwrap();
    let text = |names: &str| {
        format!(
            "[a]\nrw=read\ndirectory={}\nfilename={names}\n",
            d.path().display()
        )
    };
    let r = translate(&run_args(&[]), vec![parse_text(&text("f1:f2"))]).unwrap();
    let a = r.jobs[0].iolab_args.join(" ");
    assert!(
        a.contains(&format!("--ops={}", (4 << 20) / 4096)) && a.contains("--files=2"),
        "{a}"
    );
    for names in ["f1:missing", "empty", "link"] {
        let e = translate(&run_args(&[]), vec![parse_text(&text(names))]).unwrap_err();
        assert!(e.msg.contains("gives no size"), "{names}: {}", e.msg);
    }
}

/// A [global] name= renames no job (fio 3.33's JSON keeps the sections' names; checked against
/// fio in tests/fiojob.rs); a job's own name= does, and is what wait_for names.
#[test]
fn a_global_name_renames_no_job() {
    let f = parse_text("[global]\nname=g\nsize=1m\n[s1]\n[s2]\nname=own\n[s3]\nwait_for=own\n");
    assert_eq!(
        f.jobs.iter().map(job_name).collect::<Vec<_>>(),
        ["s1", "own", "s3"]
    );
    let r = translate(&run_args(&[]), vec![f]).unwrap();
    assert_eq!(
        r.jobs.iter().map(|j| j.phase).collect::<Vec<_>>(),
        [0, 0, 1]
    );
    // before, wait_for=g matched every job through the global name
    assert!(jobs("[global]\nname=g\nsize=1m\n[s1]\n[s2]\nwait_for=g\n", &[]).is_err());
}

/// `runtime=` without `time_based`: the size's quota and the time, whichever comes first (fio's
/// semantics), no note; with `time_based` the time alone. Before, `--time` alone and a note.
#[test]
fn runtime_without_time_based_keeps_the_size_quota_beside_the_time() {
    let r = jobs("[a]\nsize=1m\nbs=4k\nruntime=3\n", &[]).unwrap();
    let a = r.jobs[0].iolab_args.join(" ");
    assert!(a.contains("--time=3") && a.contains("--ops=256"), "{a}");
    assert_eq!(r.jobs[0].notes, Vec::<String>::new());
    let r = jobs("[a]\nsize=1m\nbs=4k\nruntime=3\ntime_based\n", &[]).unwrap();
    let a = r.jobs[0].iolab_args.join(" ");
    assert!(a.contains("--time=3") && !a.contains("--ops"), "{a}");
}

#[test]
fn log_options_name_fios_files_by_thread_number_and_shared_names_append() {
    let r = jobs(
        "[global]\nioengine=null\nsize=1m\n\
         [a]\nnumjobs=2\nwrite_bw_log\nwrite_lat_log=l\nlog_offset=1\nlog_avg_msec=500\n\
         [b]\nwrite_iops_log=s\nper_job_logs=0\nlog_prio=1\n\
         [c]\nwrite_iops_log=s\nper_job_logs=0\n[d]\n",
        &[],
    )
    .unwrap();
    let l: Vec<_> = r.jobs.iter().map(|j| j.args.fio_logs.clone()).collect();
    let a = l[0].as_ref().unwrap();
    // a bare write_bw_log takes the job's name; per_job_logs is fio's default
    assert_eq!(a.bw.as_deref(), Some("a"));
    assert_eq!(a.lat.as_deref(), Some("l"));
    assert!(a.offset && a.per_job && !a.prio);
    assert_eq!(a.avg_msec, 500);
    assert_eq!(a.first_thread, 1);
    assert_eq!(
        log_files(a, 2),
        [
            "l_lat.1.log",
            "l_lat.2.log",
            "l_slat.1.log",
            "l_slat.2.log",
            "l_clat.1.log",
            "l_clat.2.log",
            "a_bw.1.log",
            "a_bw.2.log"
        ]
    );
    // the two clones of a are threads 1 and 2: b is 3, c is 4
    let (b, c) = (l[1].as_ref().unwrap(), l[2].as_ref().unwrap());
    assert_eq!((b.first_thread, c.first_thread), (3, 4));
    assert!(b.prio && !b.per_job);
    assert!(b.append.is_empty());
    assert_eq!(c.append, ["s_iops.log"]);
    assert!(l[3].is_none());
    // the phase's 1 GiB of records (at most) split over its three jobs with logs
    assert!(a.max_record_bytes > 0 && a.max_record_bytes <= (1 << 30) / 3);
    assert_eq!(a.max_record_bytes, c.max_record_bytes);
}

/// Concurrent jobs with verify= (fio's t0002/t0003 pre files): each runs in a phase of its own,
/// noted; before, the translation gave one phase that the run then refused (verify with roles).
#[test]
fn concurrent_verify_jobs_run_one_phase_each_with_a_note() {
    let r = jobs(
        "[global]\nsize=1m\nrw=write\n[a]\nverify=md5\n[b]\n[c]\nverify=crc32c\n[d]\nstonewall\n",
        &[],
    )
    .unwrap();
    let phases: Vec<(&str, usize)> = r.jobs.iter().map(|j| (j.name.as_str(), j.phase)).collect();
    assert_eq!(phases, [("a", 1), ("b", 0), ("c", 2), ("d", 3)]);
    assert_eq!(r.phases, 4);
    let note = |n: &str| {
        r.jobs
            .iter()
            .find(|j| j.name == n)
            .unwrap()
            .notes
            .join("\n")
    };
    assert!(
        note("a").contains("verify: runs in a phase of its own, not at once with b, c as in fio"),
        "{}",
        note("a")
    );
    assert!(!note("b").contains("phase of its own"));
    // verify_backlog takes fio's units (t0009: verify_backlog=1m)
    let r = jobs(
        "[v]\nsize=1m\nrw=randwrite\nverify=md5\nverify_backlog=1k\n",
        &[],
    )
    .unwrap();
    assert!(
        r.jobs[0]
            .iolab_args
            .contains(&"--verify-backlog=1024".to_string())
    );
}

/// fio's `bs=R,W,T`, `bssplit=R,W,T`, `bsrange=R,W,T`: the reads' sizes as `--bs`, the writes'
/// (the trims' in a trim mode) as `--bs-write` where they differ; a direction the job does not
/// use is not asked. Before, a job whose directions differed was refused.
#[test]
fn block_sizes_per_direction_are_fios() {
    let a = |t: &str| args_of(&format!("[a]\nsize=1m\n{t}"));
    assert!(a("rw=randrw\nbs=4k,64k\n").contains("--bs=4096 --bs-write=65536 "));
    assert!(a("rw=read\nbs=4k,64k\n").contains("--bs=4096 "));
    assert!(a("rw=write\nbs=4k,64k\n").contains("--bs=65536 "));
    assert!(!a("rw=write\nbs=4k,64k\n").contains("--bs-write"));
    // a trim mode's second side is the trims' (t0023's bs_no_rm: bs=4k,4k,8k)
    assert!(a("rw=randtrimwrite\nbs=4k,4k,8k\n").contains("--bs=8192 "));
    // fio's cmdprio-bssplit example
    let x = a("rw=randrw\nbssplit=64k/40:1024k/60,1024k/100\n");
    assert!(
        x.contains("--bs=65536:40,1048576:60 --bs-write=1048576 "),
        "{x}"
    );
    assert!(
        a("rw=randrw\nbsrange=1k-4k,8k-16k\n").contains("--bs=1024-4096 --bs-write=8192-16384 ")
    );
    // an empty value takes the default (4k)
    assert!(a("rw=randrw\nbs=,64k\n").contains("--bs=4096 --bs-write=65536 "));
}

/// bssplit as fio 3.33 reads it (options.c `bssplit_ddir`, io_u.c `get_next_buflen`): the
/// entries drawn in the order of their percents, the last taking what the others leave; missing
/// percents share the rest in whole percents; a percent of 0 is missing; sizes down to a
/// multiple of the smallest unless `bs_unaligned`.
#[test]
fn bssplit_percents_and_alignment_are_fios() {
    let a = |t: &str| args_of(&format!("[a]\nsize=1m\nrw=randread\n{t}"));
    // 90 % given: 8k (40) drawn first, 4k takes the other 60
    assert!(a("bssplit=4k/50:8k/40\n").contains("--bs=4096:60,8192:40 "));
    // two missing share 60: 30 each
    assert!(a("bssplit=4k:8k:16k/40\n").contains("--bs=4096:30,8192:30,16384:40 "));
    // 4k/0 is missing: it takes the 50 left
    assert!(a("bssplit=4k/0:8k/50\n").contains("--bs=4096:50,8192:50 "));
    // 1536 is 1024 to fio unless bs_unaligned
    assert!(a("bssplit=1k/50:1536/50\n").contains("--bs=1024 "));
    assert!(a("bssplit=1k/50:1536/50\nbs_unaligned\n").contains("--bs=1024:50,1536:50 "));
    // t0023's range: 512-1k
    assert!(a("bsrange=512/25:1k:25:2k:25:4k/25\n").contains("--bs=512-1024 "));
}

/// blockalign: the smallest size (fio's default) changes nothing; another value is
/// `--block-align` without fio's random map, and refused with it (fio draws blockalign blocks
/// but marks its map in blocks of the smallest size).
#[test]
fn blockalign_is_block_align_without_the_random_map() {
    let a = |t: &str| args_of(&format!("[a]\nsize=1m\nrw=randrw\n{t}"));
    assert!(!a("bs=4k\nblockalign=4k\n").contains("--block-align"));
    assert!(a("bssplit=512/50:4k/50\nblockalign=4k\nnorandommap\n").contains("--block-align=4096"));
    let e = jobs("[a]\nsize=1m\nrw=randrw\nbs=512\nblockalign=4k\n", &[]).unwrap_err();
    assert!(
        e.msg.contains(
            "blockalign: refused: other than the smallest block size with fio's random map"
        ),
        "{}",
        e.msg
    );
    let e = jobs(
        "[a]\nsize=1m\nrw=randrw\nbs=512\nnorandommap\nblockalign=4k,8k\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.msg.contains("blockalign: refused: different alignments"),
        "{}",
        e.msg
    );
}

/// cpuio and exec need no size and make no file set; their options become the threads' work
/// (`model::noio`), `%r` and `%n` expanded as fio's; a runtime is needed (fio runs them until
/// stopped), and an engine's options with another engine are fio's errors.
#[test]
fn cpuio_and_exec_need_no_size_and_take_their_options() {
    use crate::model::noio::{CpuLoad, NoIo};
    let r = jobs(
        "[burn]\nioengine=cpuio\nruntime=3\ncpuload=150\ncpumode=qsort\nnumjobs=2\n[run]\nioengine=exec\nruntime=3\nprogram=/bin/echo\narguments=a  %n %r\nstd_redirect=0\n",
        &[],
    )
    .unwrap();
    let burn = &r.jobs[0];
    assert_eq!(
        burn.iolab_args.join(" "),
        "--mode=seqrd --bs=4096 --engine=cpuio --threads=2 --fsync-freq=0 --fsync-end=false --time=3 --seed=2978585581"
    );
    assert_eq!(
        burn.args.noio,
        Some(NoIo::Cpu(CpuLoad {
            load_pct: 100,
            chunk_us: 50_000,
            qsort: true
        }))
    );
    match &r.jobs[1].args.noio {
        Some(NoIo::Exec(p)) => {
            assert_eq!(p.argv, ["/bin/echo", "a", "run", "3"]);
            assert_eq!((p.grace_s, p.redirect.as_deref()), (1, None));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        r.jobs[1]
            .notes
            .iter()
            .any(|n| n.starts_with("std_redirect=0"))
    );
    let e = jobs("[b]\nioengine=cpuio\ncpuload=10\n", &[]).unwrap_err();
    assert!(
        e.msg
            .contains("ioengine: refused: ioengine=cpuio does no I/O"),
        "{}",
        e.msg
    );
    let e = jobs("[b]\nioengine=cpuio\nruntime=1\n", &[]).unwrap_err();
    assert!(e.msg.contains("needs cpuload="), "{}", e.msg);
    let e = jobs("[b]\nsize=1m\ncpuload=10\n", &[]).unwrap_err();
    assert!(
        e.msg
            .contains("t.fio:3: cpuload: an option of ioengine=cpuio"),
        "{}",
        e.msg
    );
    let e = jobs("[b]\nioengine=exec\nruntime=1\n", &[]).unwrap_err();
    assert!(e.msg.contains("needs program="), "{}", e.msg);
}

/// error_dump (examples/enospc-pressure.fio's `error_dump=0`, refused as unknown before): fio's
/// default runs as fio; 1 (fio prints each failed I/O) runs with a note.
#[test]
fn error_dump_is_accepted_and_noted_when_on() {
    let notes = |v: &str| {
        jobs(&format!("[j]\nsize=1m\nerror_dump={v}\n"), &[])
            .unwrap()
            .jobs[0]
            .notes
            .clone()
    };
    assert!(notes("0").is_empty());
    let on = notes("1");
    assert!(on.iter().any(|n| n.starts_with("error_dump=1: ")), "{on:?}");
}

/// fio's steady state: `ss`/`ss_dur`/`ss_ramp` read as fio reads them, judged by reporting
/// group with `group_reporting`; `ss_dur` under a second is none (as fio); a group whose jobs'
/// criteria differ is fio's rejection, `ramp_time` beside it refused.
#[test]
fn steady_state_by_job_and_group() {
    use crate::model::steady::SteadyMetric;
    let text = "[global]\nsize=1m\nioengine=null\ntime_based\nruntime=60\n\
                [a]\nss=iops:10%\nss_dur=30s\nss_ramp=10s\n\
                [b]\nstonewall\ngroup_reporting\nnumjobs=2\nss_dur=5\n\
                [c]\nstonewall\nss=bw:1m\nss_dur=500ms\n";
    let r = jobs(text, &[]).unwrap();
    let s = |n: &str| {
        let j = r.jobs.iter().find(|j| j.name == n).unwrap();
        j.args.timing.steady.clone()
    };
    let a = s("a").unwrap();
    assert_eq!(
        (
            a.metric, a.slope, a.limit, a.pct, a.window_s, a.ramp_s, a.group
        ),
        (SteadyMetric::Iops, false, 10.0, true, 30, 10.0, None)
    );
    let b = s("b").unwrap();
    assert_eq!(b.fio_spelling(), "iops_slope:0.010000%", "fio's default");
    assert_eq!(b.group, Some(1), "judged as its reporting group");
    assert!(s("c").is_none(), "ss_dur under a second: no steady state");

    let e = jobs(
        "[global]\nsize=1m\nioengine=null\n[a]\nss=iops:5%\nss_dur=2\n[b]\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.msg
            .contains("steadystate options must be consistent within reporting groups"),
        "{}",
        e.msg
    );
    let e = jobs(
        "[a]\nsize=1m\nioengine=null\nramp_time=2\nss=iops:5%\nss_dur=2\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.msg
            .contains("t.fio:6: steadystate_duration: refused: with ramp_time"),
        "{}",
        e.msg
    );
    let e = jobs("[a]\nsize=1m\nioengine=null\nss=iops\nss_dur=2\n", &[]).unwrap_err();
    assert!(
        e.msg
            .contains("t.fio:4: steadystate: steadystate threshold"),
        "{}",
        e.msg
    );
    // clone by clone beside another job of the phase: refused, dropped with --ignore-unsupported
    let text = "[global]\nsize=1m\nioengine=null\n[a]\nnumjobs=2\nss=iops:5%\nss_dur=2\n[b]\n\
                ss=iops:5%\nss_dur=2\n";
    let e = jobs(text, &[]).unwrap_err();
    assert!(e.msg.contains("judged clone by clone"), "{}", e.msg);
    let r = jobs(text, &["--ignore-unsupported"]).unwrap();
    assert!(r.jobs[0].args.timing.steady.is_none());
    assert!(r.jobs[1].args.timing.steady.is_some());
}

/// fio's queue-depth search read as fio reads it: `latency_target` and `latency_window` in µs
/// unless a unit says (the target kept in ns), `latency_percentile` 100 by default; refused with
/// a synchronous engine and with `ramp_time`.
#[test]
fn latency_target_options() {
    use crate::model::timing::LatencyTarget;
    let text = "[global]\nsize=1m\nioengine=libaio\niodepth=16\n\
                [a]\nlatency_target=500000\nlatency_window=5000000\nlatency_percentile=99.9\n\
                [b]\nlatency_target=2ms\nlatency_run=1\n[c]\n";
    let r = jobs(text, &[]).unwrap();
    let lt = |n: &str| {
        let j = r.jobs.iter().find(|j| j.name == n).unwrap();
        j.args.timing.lat_target
    };
    assert_eq!(
        lt("a"),
        Some(LatencyTarget {
            target_ns: 500_000_000,
            window_us: 5_000_000,
            percentile: 99.9,
            keep_running: false
        })
    );
    assert_eq!(
        lt("b"),
        Some(LatencyTarget {
            target_ns: 2_000_000,
            window_us: 0,
            percentile: 100.0,
            keep_running: true
        })
    );
    assert_eq!(lt("c"), None);
    // max_latency: µs, per direction (one value: each)
    let text = "[global]\nsize=1m\n[a]\nmax_latency=250\n[b]\nmax_latency=,5ms\n[c]\n";
    let r = jobs(text, &[]).unwrap();
    let max: Vec<[u64; 3]> = r.jobs.iter().map(|j| j.args.timing.max_lat_ns).collect();
    assert_eq!(max, [[250_000; 3], [0, 5_000_000, 0], [0; 3]]);
    let e = jobs("[a]\nsize=1m\nioengine=psync\nlatency_target=1ms\n", &[]).unwrap_err();
    assert!(
        e.msg
            .contains("t.fio:4: latency_target: refused: with a synchronous engine"),
        "{}",
        e.msg
    );
    let e = jobs(
        "[a]\nsize=1m\nioengine=libaio\nramp_time=1\nlatency_target=1ms\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.msg.contains("latency_target: refused: with ramp_time"),
        "{}",
        e.msg
    );
}
