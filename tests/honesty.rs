//! The honesty check of every run (issue 27): iolab's counts against the device's own over the
//! same window, the host's CPU, a cgroup limit; each warning made to fire by what it names (a
//! `dd` on the same device, a CPU hog, a throttled device answered from the page cache) and
//! silent on a clean run.

use crate::common::blk::{LoopFs, Throttle, cannot, sh};
use crate::common::*;
use std::process::{Child, Command};

const HONESTY: [&str; 4] = [
    "other_io",
    "device_counts_short",
    "cpu_saturated",
    "above_throttle",
];

/// The warning codes of a run document (every cell's).
fn codes(v: &serde_json::Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["code"].as_str().map(String::from))
        .collect()
}

/// Background shell loops, each in a process group of its own, killed with everything they
/// started (a `dd` of the loop too, which would keep the filesystem busy) when dropped.
struct Procs(Vec<Child>);

impl Procs {
    fn shells(n: usize, script: &str) -> Procs {
        use std::os::unix::process::CommandExt;
        Procs(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", script])
                        .process_group(0)
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            // SAFETY: kill(2) of the process group this test made for the child.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
            let _ = c.wait();
        }
    }
}

/// 16 KiB O_DIRECT random reads for 2 s on `dir`, saved in `db`: its document.
fn direct_reads(
    db: &std::path::Path,
    dir: &std::path::Path,
    prefix: &[String],
) -> serde_json::Value {
    let mut cmd = match prefix.split_first() {
        Some((p, rest)) => {
            let mut c = Command::new(p);
            c.args(rest).arg(bin());
            c
        }
        None => Command::new(bin()),
    };
    let r = to_run(
        cmd.args(["run", "--dir", dir.to_str().unwrap()])
            .args([
                "--mode", "rndrd", "--direct", "--files", "2", "--size", "32M",
            ])
            .args(["--time", "2", "--json", "-q"])
            .env("IOLAB_DB", db)
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json()
}

/// A clean run on a loop device of its own says nothing; the same run with `dd` writing to the
/// same device beside it says how much of the device's work was not iolab's (`other_io`), and
/// `explain` names the shared device.
#[test]
fn another_writer_on_the_device_is_said_and_a_clean_run_is_silent() {
    if let Some(why) = cannot(false) {
        return skip(
            "another_writer_on_the_device_is_said_and_a_clean_run_is_silent",
            &why,
        );
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let fs = LoopFs::new(512, &d.path().join("mnt"));
    let db = d.path().join("r.db");
    let clean = direct_reads(&db, &fs.dir, &[]);
    let found: Vec<String> = codes(&clean)
        .into_iter()
        .filter(|c| HONESTY.contains(&c.as_str()))
        .collect();
    assert!(
        found.is_empty(),
        "a clean run: {found:?}: {}",
        clean["warnings"]
    );
    // dd writes 256 MiB with O_DIRECT, over and over, to a file of its own on the same device
    let dd = Procs::shells(
        1,
        &format!(
            "while :; do dd if=/dev/zero of={}/dd.out bs=1M count=256 oflag=direct status=none; done",
            fs.dir.display()
        ),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let shared = direct_reads(&db, &fs.dir, &[]);
    drop(dd);
    let w = shared["warnings"].to_string();
    assert!(codes(&shared).contains(&"other_io".into()), "{w}");
    assert!(w.contains("were not iolab's"), "{w}");
    // explain uses it: the shared device beside what limits the reads
    let e = iolab_db(&db, &["explain", "2", "--json"]);
    assert_eq!(e.code, 0, "{}", e.stderr);
    let rules = explain_rules(&e.json());
    let want = ["shared_device"];
    assert!(
        rules.iter().any(|r| r.iter().any(|x| x == want[0])),
        "{rules:?}"
    );
}

/// Every CPU kept busy by other processes: the figures are the machine's (`cpu_saturated`).
#[test]
fn a_saturated_host_cpu_is_said() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let hogs = Procs::shells(n, "while :; do :; done");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let v = direct_reads(&d.path().join("r.db"), d.path(), &[]);
    drop(hogs);
    if v["runs"][0]["device"].is_null() {
        return skip(
            "a_saturated_host_cpu_is_said",
            "no block device under /var/tmp to read the CPU figures beside",
        );
    }
    let w = v["warnings"].to_string();
    assert!(codes(&v).contains(&"cpu_saturated".into()), "{w}");
    assert!(w.contains("the figures are the machine's"), "{w}");
}

/// A loop device throttled to 200 read IOPS in iolab's cgroup: buffered rereads from the page
/// cache count far more than the device can do (`above_throttle`); O_DIRECT reads keep to the
/// limit and the check stays silent.
#[test]
fn counts_above_a_cgroup_limit_are_said() {
    if let Some(why) = cannot(true) {
        return skip("counts_above_a_cgroup_limit_are_said", &why);
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let fs = LoopFs::new(256, &d.path().join("mnt"));
    let db = d.path().join("r.db");
    let t = Throttle::new(&[fs.majmin()], 200);
    let direct = direct_reads(&db, &fs.dir, &t.prefix());
    assert!(
        !codes(&direct).contains(&"above_throttle".into()),
        "{}",
        direct["warnings"]
    );
    let iops = direct["runs"][0]["results"]["read"]["iops"]
        .as_f64()
        .unwrap();
    assert!(iops < 230.0, "O_DIRECT keeps to the limit: {iops}");
    // buffered, warm: the page cache answers
    let mut cmd = Command::new(&t.prefix()[0]);
    cmd.args(&t.prefix()[1..]).arg(bin());
    let r = to_run(
        cmd.args(["run", "--dir", fs.dir.to_str().unwrap()])
            .args(["--mode", "rndrd", "--files", "2", "--size", "32M", "--warm"])
            .args(["--time", "2", "--json", "-q", "--no-save"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let w = v["warnings"].to_string();
    assert!(codes(&v).contains(&"above_throttle".into()), "{w}");
    assert!(
        w.contains(&fs.dev.trim_start_matches("/dev/").to_string()),
        "{w}"
    );
    sh("true");
}
