//! `iolab completions SHELL` and `iolab manpages DIR`: the shell completion scripts
//! (clap_complete) and the manual pages (clap_mangen) generated from the clap definition, so
//! they say what the parser takes. The Debian package (scripts/package.sh) installs both.

use super::*;
use std::io::Write;

pub fn completions(a: &cli::CompletionsArgs) -> Result<i32> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cli::command(), "iolab", &mut out);
    print_out(&String::from_utf8_lossy(&out));
    Ok(0)
}

/// Every page: `iolab.1`, then one per subcommand at every depth (`iolab-run.1`,
/// `iolab-suite-pts.1`, ...), each rendered whole.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
        let man = clap_mangen::Man::new(cmd.clone()).source(format!("iolab {}", crate::VERSION));
        let mut page = Vec::new();
        man.render(&mut page)
            .map_err(|e| Error::failed(format!("{}: {e}", man.get_filename())))?;
        out.push((man.get_filename(), page));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out)?;
        }
        Ok(())
    }
    let mut cmd = cli::command().disable_help_subcommand(true);
    // names each subcommand's page and synopsis by its path: `iolab-suite-pts`
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out)?;
    Ok(out)
}

pub fn manpages(a: &cli::ManpagesArgs) -> Result<i32> {
    let pages = pages()?;
    let dir = crate::system::target::TargetDir::open(&a.dir)
        .map_err(|e| Error::usage(format!("manpages {}: {e}", a.dir.display())))?;
    // a page already there is refused before anything is written
    for (name, _) in &pages {
        if dir.entry(name)?.is_some() {
            return Err(Error::usage(format!(
                "manpages {}: {name} is there already; give an empty directory (nothing was written)",
                a.dir.display()
            )));
        }
    }
    let mut written: Vec<&str> = Vec::new();
    for (name, page) in &pages {
        let r = dir
            .create_new(name, 0)
            .and_then(|mut f| f.write_all(page).and_then(|_| f.sync_all()));
        if let Err(e) = r {
            // none or all: what this command wrote is removed
            for n in written
                .iter()
                .copied()
                .chain(std::iter::once(name.as_str()))
            {
                dir.remove(n, true);
            }
            return Err(Error::failed(format!(
                "manpages {}: {name}: {e} (nothing was left)",
                a.dir.display()
            )));
        }
        written.push(name);
    }
    print_out(&format!(
        "wrote {} manual pages in {}\n",
        pages.len(),
        a.dir.display()
    ));
    Ok(0)
}
