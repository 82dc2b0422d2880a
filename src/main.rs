//! The `iolab` binary: puts back settings a killed iolab left switched, runs the command, exits
//! with its code (docs/exit-codes.md). Everything else is in the library (src/commands/).

fn main() {
    // Settings a killed iolab left switched (its whole recorded queue state) are put back
    // first; records of live iolabs are theirs and left alone.
    for line in iolab::system::tuning::replay_pending() {
        eprintln!("iolab: {line}");
    }
    let code = match iolab::commands::run_cli() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("iolab: error: {e}");
            e.exit as i32
        }
    };
    std::process::exit(code);
}
