use clap::Parser;
use iolab::cli::{self, Cli, Cmd};
use iolab::error::{Error, Exit};
use iolab::{fileset, report, runner, sysinfo};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Exit code when a run completed but some I/O operations failed (docs/exit-codes.md).
const EXIT_IO_ERRORS: i32 = 3;

fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal ends the process at once.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop));
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    stop
}

fn print_out(s: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (iolab run | head) is a normal end.
    let _ = out.write_all(s.as_bytes()).and_then(|_| out.flush());
}

fn real_main() -> Result<i32, Error> {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp
                    | clap::error::ErrorKind::DisplayVersion
                    | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return Ok(
                    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    {
                        Exit::Usage as i32
                    } else {
                        0
                    },
                );
            }
            let msg = e.to_string();
            let line = msg
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            return Err(Error::usage(line.to_string()));
        }
    };
    match cli.cmd {
        Cmd::Run(a) => {
            let plan = cli::plan_run(&a)?;
            let stop = stop_flag();
            let doc = runner::run(&plan, &stop, |_| {})?;
            if a.json {
                print_out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&doc.to_json()).expect("json")
                ));
            } else {
                print_out(&report::render(&doc));
            }
            let errors: u64 = doc.runs.iter().map(|c| c.total_errors()).sum();
            Ok(if doc.interrupted {
                Exit::Interrupted as i32
            } else if errors > 0 {
                EXIT_IO_ERRORS
            } else {
                0
            })
        }
        Cmd::Prepare(a) => {
            let is_default = a.set.dir == Path::new(cli::DEFAULT_DIR);
            cli::check_dir(&a.set.dir, is_default)?;
            let probe = cli::Probe::create(&a.set.dir)?;
            let dio = sysinfo::dio_align(Path::new("/sys"), &probe.0);
            if a.direct && !probe.direct_ok() {
                return Err(Error::usage(format!(
                    "--direct: the filesystem at {} does not support O_DIRECT",
                    a.set.dir.display()
                )));
            }
            drop(probe);
            let bs = a.set.bs.unwrap_or(16384);
            if a.direct && bs % dio.offset != 0 {
                return Err(Error::usage(format!(
                    "--bs {bs} is not a multiple of {} bytes, the O_DIRECT alignment",
                    dio.offset
                )));
            }
            let spec = cli::fileset_spec(&a.set, bs)?;
            let stop = stop_flag();
            let r = fileset::prepare(&spec, a.direct, dio.mem, &stop, a.quiet)?;
            let res = fileset::evict(&spec)
                .map_err(|e| Error::failed(format!("evicting the file set: {e}")))?;
            print_out(&format!(
                "prepared {} files of {} in {} ({} written in {:.1} s, {} reused); page cache after eviction: {:.1}% resident\n",
                spec.files,
                iolab::size::Bytes(spec.file_size_bytes),
                spec.dir.display(),
                iolab::size::human_bytes(r.written_bytes as f64),
                r.seconds,
                r.reused_files,
                res.pct()
            ));
            if res.pct() > iolab::truth::EVICT_FAIL_PCT {
                eprintln!(
                    "warning [eviction_failed]: {:.1}% of the file set is still in the page cache after fsync + POSIX_FADV_DONTNEED",
                    res.pct()
                );
            }
            Ok(0)
        }
        Cmd::Cleanup(a) => {
            cli::check_dir(&a.dir, false)?;
            let n = fileset::cleanup_dir(&a.dir);
            print_out(&format!("removed {n} files from {}\n", a.dir.display()));
            Ok(0)
        }
    }
}

fn main() {
    let code = match real_main() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("iolab: error: {e}");
            e.exit as i32
        }
    };
    std::process::exit(code);
}
