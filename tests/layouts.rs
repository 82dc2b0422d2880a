//! `--layout` on real filesystems (root): what prepare makes on ext4 and xfs, and whether
//! O_DIRECT writes into one file scale with threads per layout on a device with a fixed latency
//! per request (docs/layouts.md; bench/layouts.sh prints the whole table).
//!
//! The device: faultfs (tests/fixtures/faultfs), multi-threaded, adds FAULTFS_DELAY_US to every
//! request and serves them concurrently; a loop device (--direct-io=on) over a sparse image in
//! it carries ext4 or xfs. Needs root, FUSE (gcc, libfuse3-dev, fuse3), losetup, mkfs.ext4 and
//! mkfs.xfs; elsewhere the tests skip through `common::skip`.

use crate::common::blk::{have, sh};
use crate::common::faultfs::{FaultFs, skip_reason};
use crate::common::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Latency per request of the fixture device: large against the CPU cost of an I/O, so the
/// locking of the filesystem, not the machine, decides whether threads add IOPS.
const DELAY_US: &str = "1000";

/// Why these tests cannot run here, if they cannot.
fn cannot(fuse: bool) -> Option<String> {
    if !is_root() {
        return Some("needs root (loop devices, mount)".into());
    }
    for t in ["losetup", "mkfs.ext4", "mkfs.xfs", "mount"] {
        if !have(t) {
            return Some(format!("{t} is not installed (scripts/setup.sh)"));
        }
    }
    if fuse {
        return skip_reason();
    }
    None
}

/// A filesystem made on a loop device over `img` and mounted; unmounted and detached on drop
/// (also when the test panics).
struct Mounted {
    dev: String,
    mnt: tempfile::TempDir,
    img: PathBuf,
    remove_img: bool,
}

impl Mounted {
    fn new(img: &Path, size_mb: u64, fs: &str, remove_img: bool) -> Mounted {
        sh(&format!("truncate -s {size_mb}M {}", img.display()));
        let dev = sh(&format!(
            "losetup --find --show --direct-io=on {}",
            img.display()
        ));
        let m = Mounted {
            dev,
            mnt: tempfile::tempdir().unwrap(),
            img: img.to_path_buf(),
            remove_img,
        };
        let mkfs = match fs {
            "ext4" => "mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0",
            "xfs" => "mkfs.xfs -q -f",
            _ => panic!("no mkfs for {fs}"),
        };
        sh(&format!("{mkfs} {}", m.dev));
        sh(&format!("mount {} {}", m.dev, m.mnt.path().display()));
        m
    }
    fn dir(&self) -> &Path {
        self.mnt.path()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        if self.remove_img {
            let _ = std::fs::remove_file(&self.img);
        }
    }
}

/// IOPS of `iolab run --mode rndwr --bs 16k --direct` on one 64 MiB file with this layout.
fn rndwr_iops(dir: &Path, layout: &str, threads: u32) -> f64 {
    let set = dir.join("set");
    let _ = std::fs::create_dir(&set);
    let t = threads.to_string();
    let v = run_json(
        &set,
        &[
            "--mode",
            "rndwr",
            "--bs",
            "16k",
            "--direct",
            "--files",
            "1",
            "--size",
            "64M",
            "--threads",
            &t,
            "--time",
            "2",
            "--fsync-freq",
            "0",
            "--layout",
            layout,
        ],
    );
    assert_eq!(v["job"]["layout"], layout);
    v["results"]["write"]["iops"].as_f64().unwrap()
}

/// The shape of the scaling of O_DIRECT random writes into one file, 1 and 8 threads: on ext4,
/// writes into holes allocate under the exclusive inode lock and do not scale, while overwrites
/// take it shared and do; xfs allocates under its shared iolock and scales either way. Ratios,
/// never absolute numbers (docs/layouts.md has the measured table).
#[test]
fn o_direct_writes_into_one_file_scale_per_layout_and_filesystem() {
    let name = "o_direct_writes_into_one_file_scale_per_layout_and_filesystem";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let fuse = FaultFs::mount_with(
        &[("FAULTFS_WRITES", "1"), ("FAULTFS_DELAY_US", DELAY_US)],
        true,
    );
    let img = fuse.mnt.join("img");
    let mut table = Vec::new();
    let mut ratio = |fs: &str, dir: &Path, layout: &str| {
        let (one, eight) = (rndwr_iops(dir, layout, 1), rndwr_iops(dir, layout, 8));
        let r = eight / one.max(1.0);
        table.push(format!("{fs:5} {layout:10} {one:8.0} {eight:8.0} {r:6.2}"));
        r
    };
    let (ext4_over, ext4_holes) = {
        let m = Mounted::new(&img, 512, "ext4", false);
        // warm-up: the first writes after mount also read metadata
        rndwr_iops(m.dir(), "overwrite", 1);
        (
            ratio("ext4", m.dir(), "overwrite"),
            ratio("ext4", m.dir(), "holes"),
        )
    };
    let xfs_holes = {
        let m = Mounted::new(&img, 512, "xfs", false);
        rndwr_iops(m.dir(), "overwrite", 1);
        ratio("xfs", m.dir(), "holes")
    };
    let shown = format!(
        "fs    layout       1t IOPS  8t IOPS  8t/1t\n{}",
        table.join("\n")
    );
    eprintln!("{shown}");
    assert!(ext4_holes < 1.5, "ext4 holes should not scale:\n{shown}");
    assert!(ext4_over > 2.5, "ext4 overwrite should scale:\n{shown}");
    assert!(xfs_holes > 2.5, "xfs holes should scale:\n{shown}");
}

/// What `prepare --layout` makes on ext4 and xfs: holes have the full size and no block,
/// unwritten extents are allocated, flagged unwritten by FIEMAP and read as zeros, extend files
/// are empty; a run records the layout and leaves a set that was there with its layout again.
#[test]
fn prepare_makes_each_layout_on_ext4_and_xfs() {
    let name = "prepare_makes_each_layout_on_ext4_and_xfs";
    if let Some(why) = cannot(false) {
        return skip(name, &why);
    }
    for fs in ["ext4", "xfs"] {
        let img = PathBuf::from(format!(
            "/var/tmp/iolab-layouts-{}-{fs}.img",
            std::process::id()
        ));
        let m = Mounted::new(&img, 400, fs, true);
        let dir = m.dir().to_str().unwrap();
        let file = m.dir().join("iolab-file.0");
        let set = ["--dir", dir, "--files", "2", "--size", "32M"];
        let prep = |layout: &str| {
            let mut a = vec!["prepare", "--layout", layout];
            a.extend_from_slice(&set);
            let r = iolab(&a);
            assert_eq!(r.code, 0, "{fs} {layout}: {}", r.stderr);
        };
        let extents = || {
            iolab::engine::fileset::extent_bytes(&std::fs::File::open(&file).unwrap())
                .unwrap_or_else(|e| panic!("{fs}: FIEMAP: {e}"))
        };
        prep("holes");
        let md = std::fs::metadata(&file).unwrap();
        assert_eq!(md.len(), 16 << 20, "{fs}");
        assert_eq!(md.blocks(), 0, "{fs}: holes allocate nothing");
        assert_eq!(extents().0, 0, "{fs}");
        iolab(&["cleanup", "--dir", dir]);
        prep("unwritten");
        let (mapped, unwritten) = extents();
        assert!(
            mapped >= 16 << 20 && unwritten == mapped,
            "{fs}: {mapped} mapped, {unwritten} unwritten"
        );
        assert!(std::fs::read(&file).unwrap().iter().all(|&b| b == 0));
        // a write run over them converts extents; a set that was there is made again after it
        let v = run_json(
            m.dir(),
            &[
                "--layout",
                "unwritten",
                "--mode",
                "rndwr",
                "--direct",
                "--ops",
                "500",
                "--files",
                "2",
                "--size",
                "32M",
            ],
        );
        assert_eq!(v["job"]["layout"], "unwritten");
        assert_eq!(
            extents().1,
            extents().0,
            "{fs}: unwritten again after the run"
        );
        // overwrite writes them in place: nothing unwritten is left
        prep("overwrite");
        assert_eq!(extents().1, 0, "{fs}: written data");
        iolab(&["cleanup", "--dir", dir]);
        prep("extend");
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 0, "{fs}");
        iolab(&["cleanup", "--dir", dir]);
    }
}

/// `iolab run --explain --json` on one 64 MiB file in `dir`.
fn explained(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let set = dir.join("set");
    let _ = std::fs::create_dir(&set);
    let mut a = vec!["--files", "1", "--size", "64M", "--direct", "--explain"];
    a.extend_from_slice(extra);
    run_json(&set, &a)
}

/// ext4 on the fixed-latency device, O_DIRECT random writes into holes at 8 threads: the
/// filesystem serialises them (named with its layout), and nothing else fires; the same
/// writes as overwrites reach the device in parallel and are not called serialised.
#[test]
fn explain_says_ext4_serialises_writes_into_holes() {
    let name = "explain_says_ext4_serialises_writes_into_holes";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let fuse = FaultFs::mount_with(
        &[("FAULTFS_WRITES", "1"), ("FAULTFS_DELAY_US", DELAY_US)],
        true,
    );
    let m = Mounted::new(&fuse.mnt.join("img"), 512, "ext4", false);
    rndwr_iops(m.dir(), "overwrite", 1);
    let w = [
        "--mode",
        "rndwr",
        "--bs",
        "16k",
        "--threads",
        "8",
        "--time",
        "2",
        "--fsync-freq",
        "0",
    ];
    let mut a = w.to_vec();
    a.extend_from_slice(&["--layout", "holes"]);
    let v = explained(m.dir(), &a);
    assert_eq!(
        explain_rules(&v["explain"]),
        [["fs_serialisation"]],
        "{:#}",
        v["explain"]
    );
    let f = &v["explain"]["cells"][0]["findings"][0];
    assert_eq!(f["layer"], "filesystem");
    let ev = f["evidence"].as_str().unwrap();
    assert!(ev.contains("ext4, layout holes"), "{ev}");
    assert!(
        f["next"]
            .as_str()
            .unwrap()
            .contains("--layout overwrite,holes")
    );
    let mut a = w.to_vec();
    a.extend_from_slice(&["--layout", "overwrite"]);
    let v = explained(m.dir(), &a);
    let got = explain_rules(&v["explain"]);
    assert!(
        !got[0].iter().any(|r| r == "fs_serialisation"),
        "{:#}",
        v["explain"]
    );
}

/// The same device and writes as a sweep of 1 and 8 threads: into holes, the 8-thread cell is
/// fs_serialisation with "per-thread latency up as threads rise" against the 1-thread cell
/// (high confidence), the 1-thread cell queue-depth bound, nothing else; as overwrites no cell
/// is called serialised.
#[test]
fn explain_sweep_says_ext4_serialisation_raises_per_thread_latency() {
    let name = "explain_sweep_says_ext4_serialisation_raises_per_thread_latency";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let fuse = FaultFs::mount_with(
        &[("FAULTFS_WRITES", "1"), ("FAULTFS_DELAY_US", DELAY_US)],
        true,
    );
    let m = Mounted::new(&fuse.mnt.join("img"), 512, "ext4", false);
    rndwr_iops(m.dir(), "overwrite", 1);
    let w = |layout| {
        [
            "--mode",
            "rndwr",
            "--bs",
            "16k",
            "--fsync-freq",
            "0",
            "--layout",
            layout,
        ]
    };
    let e = sweep_explained(m.dir(), &w("holes"), "1,8");
    eprintln!("holes: {e:#}");
    assert_eq!(
        explain_rules(&e),
        [["queue_depth_bound"], ["fs_serialisation"]],
        "{e:#}"
    );
    let f = &e["cells"][1]["findings"][0];
    assert_eq!(f["confidence"], "high");
    let ev = f["evidence"].as_str().unwrap();
    assert!(
        ev.contains("ext4, layout holes")
            && ev.contains("per-thread latency up as threads rise")
            && ev.contains("at 1 in flight (run 1) →"),
        "{ev}"
    );
    let e = sweep_explained(m.dir(), &w("overwrite"), "1,8");
    eprintln!("overwrite: {e:#}");
    assert!(
        !explain_rules(&e)
            .iter()
            .flatten()
            .any(|r| r == "fs_serialisation"),
        "{e:#}"
    );
}

/// O_DIRECT random reads on ext4 over the fixed-latency device (1 ms per request, served in
/// parallel by faultfs's FUSE threads, of which libfuse runs at most 10): one at a time is
/// queue-depth bound (Little's law at the lowest load there is) and nothing else. 16 in flight
/// in a run alone are not (one run has no low-load latency to tell a device serving them in
/// parallel from one queueing them); in a sweep of 1 and 16 threads they are not either, from
/// the figures: the device's await at 16 is well above its await at 1 (the requests queue
/// behind the FUSE threads), though not the 3 × that would call it saturated.
#[test]
fn explain_says_queue_depth_bound_at_1_not_at_16() {
    let name = "explain_says_queue_depth_bound_at_1_not_at_16";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    let fuse = FaultFs::mount_with(&[("FAULTFS_DELAY_US", DELAY_US)], true);
    let m = Mounted::new(&fuse.mnt.join("img"), 256, "ext4", false);
    let r = ["--mode", "rndrd", "--bs", "4k", "--time", "2"];
    let mut a = r.to_vec();
    a.extend_from_slice(&["--threads", "1"]);
    let v = explained(m.dir(), &a);
    assert_eq!(
        explain_rules(&v["explain"]),
        [["queue_depth_bound"]],
        "{:#}",
        v["explain"]
    );
    let f = &v["explain"]["cells"][0]["findings"][0];
    assert_eq!(f["layer"], "queue_depth");
    assert_eq!(f["confidence"], "high");
    let ev = f["evidence"].as_str().unwrap();
    assert!(
        ev.contains("in flight") && ev.contains("lowest load"),
        "{f}"
    );
    assert!(
        f["next"].as_str().unwrap().starts_with("iolab sweep "),
        "{f}"
    );
    let mut a = r.to_vec();
    a.extend_from_slice(&["--threads", "16"]);
    let v = explained(m.dir(), &a);
    let got = explain_rules(&v["explain"]);
    eprintln!("16 in flight: {:#}", v["explain"]);
    assert_eq!(got, [["none"]], "{:#}", v["explain"]);
    let e = sweep_explained(m.dir(), &["--mode", "rndrd", "--bs", "4k"], "1,16");
    eprintln!("sweep 1,16: {e:#}");
    assert_eq!(
        explain_rules(&e),
        [["queue_depth_bound"], ["none"]],
        "{e:#}"
    );
}

/// `iolab sweep --direct --files 1 --size 64M --time 2 --threads THREADS` with `extra`, in
/// `dir/set`, stored in a fresh store, explained (`iolab explain g1 --json`).
fn sweep_explained(dir: &Path, extra: &[&str], threads: &str) -> serde_json::Value {
    let set = dir.join("set");
    let _ = std::fs::create_dir(&set);
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let mut a = vec![
        "sweep",
        "--dir",
        set.to_str().unwrap(),
        "--direct",
        "--files",
        "1",
        "--size",
        "64M",
        "--threads",
        threads,
        "--time",
        "2",
        "-q",
    ];
    a.extend_from_slice(extra);
    let r = iolab_db(&db, &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    iolab_db(&db, &["explain", "g1", "--json"]).json()
}

/// `iolab sweep --threads 1,8` of O_DIRECT random reads on ext4 over the fixed-latency
/// device (4 ms per request), explained. Served one request at a time (faultfs
/// single-threaded): the device's await at 8 threads is several times its await at 1 (its
/// low-load latency) with 8 queued at 100 % util, and 8 threads add no IOPS: the 8-thread cell
/// is device_saturated with the flat IOPS in its evidence (a loop device's %util called weak
/// evidence), the 1-thread cell device_flat, nothing else; the 8-thread run alone is not called
/// anything (one run has no low-load latency). Served in parallel, 8 threads scale at the
/// low-load latency: queue-depth bound on both cells, no device finding.
#[test]
fn explain_sweep_says_the_device_is_saturated_only_when_it_is() {
    let name = "explain_sweep_says_the_device_is_saturated_only_when_it_is";
    if let Some(why) = cannot(true) {
        return skip(name, &why);
    }
    for parallel in [false, true] {
        // 4 ms per request: the per-request overhead outside the delay (FUSE, loop), which
        // threads can overlap with it, stays a few percent of it
        let fuse = FaultFs::mount_with(&[("FAULTFS_DELAY_US", "4000")], parallel);
        let m = Mounted::new(&fuse.mnt.join("img"), 256, "ext4", false);
        let e = sweep_explained(m.dir(), &["--mode", "rndrd", "--bs", "4k"], "1,8");
        let got = explain_rules(&e);
        eprintln!("parallel {parallel}: {got:?}\n{e:#}");
        if parallel {
            assert_eq!(got, [["queue_depth_bound"], ["queue_depth_bound"]], "{e:#}");
            let ev = e["cells"][1]["findings"][0]["evidence"].as_str().unwrap();
            assert!(ev.contains("its low-load latency"), "{ev}");
        } else {
            assert_eq!(got, [["device_flat"], ["device_saturated"]], "{e:#}");
            let ev = e["cells"][0]["findings"][0]["evidence"].as_str().unwrap();
            assert!(ev.starts_with("1 → 8 in flight"), "{ev}");
            let f = &e["cells"][1]["findings"][0];
            assert_eq!(f["layer"], "device");
            assert_eq!(f["confidence"], "high");
            let ev = f["evidence"].as_str().unwrap();
            assert!(
                ev.contains("at 1 in flight (run 1, its low-load latency)")
                    && ev.contains("weak evidence")
                    && ev.contains("IOPS flat as threads rise"),
                "{ev}"
            );
            let v = explained(
                m.dir(),
                &[
                    "--mode",
                    "rndrd",
                    "--bs",
                    "4k",
                    "--time",
                    "2",
                    "--threads",
                    "8",
                ],
            );
            assert_eq!(
                explain_rules(&v["explain"]),
                [["none"]],
                "{:#}",
                v["explain"]
            );
        }
    }
}
