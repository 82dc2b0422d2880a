//! `iolab env` and `iolab check` on real loop devices with partition tables (root only).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sh(cmd: &str) -> String {
    let o = Command::new("sh").arg("-c").arg(cmd).output().expect("sh");
    assert!(
        o.status.success(),
        "`{cmd}` failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn cannot() -> Option<String> {
    if !is_root() {
        return Some("needs root".into());
    }
    for t in [
        "losetup",
        "sfdisk",
        "partx",
        "mkfs.ext4",
        "mkfs.xfs",
        "lsblk",
        "findmnt",
    ] {
        if !Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {t}"))
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
        {
            return Some(format!("{t} is not installed"));
        }
    }
    None
}

/// An image with one partition starting at `start` sectors, attached as a loop device with its
/// partition exposed by partx, a filesystem on it, mounted. Torn down on drop.
struct PartDisk {
    img: PathBuf,
    dev: String,
    part: String,
    mnt: tempfile::TempDir,
}

impl PartDisk {
    fn new(size_mb: u64, start: u64, mkfs: &str) -> PartDisk {
        let base = if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/var/tmp"
        };
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let img = PathBuf::from(format!("{base}/iolab-env-{}-{n}.img", std::process::id()));
        sh(&format!("truncate -s {size_mb}M {}", img.display()));
        sh(&format!(
            "echo 'start={start}, type=83' | sfdisk -q {} >/dev/null 2>&1",
            img.display()
        ));
        let dev = sh(&format!("losetup --find --show {}", img.display()));
        // This kernel does not parse partition tables of loop devices by itself.
        sh(&format!("partx -a {dev}"));
        let part = format!("{dev}p1");
        sh(&format!("{mkfs} {part} >/dev/null 2>&1"));
        let mnt = tempfile::tempdir().unwrap();
        sh(&format!("mount {part} {}", mnt.path().display()));
        PartDisk {
            img,
            dev,
            part,
            mnt,
        }
    }
    fn name(&self) -> String {
        self.dev.trim_start_matches("/dev/").to_string()
    }
}

impl Drop for PartDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        let _ = Command::new("partx").args(["-d", &self.dev]).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.img);
    }
}

fn finding_ids(v: &serde_json::Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn env_reports_partition_starts_and_stacks_and_check_flags_only_the_misaligned_one() {
    if let Some(why) = cannot() {
        return skip(
            "env_reports_partition_starts_and_stacks_and_check_flags_only_the_misaligned_one",
            &why,
        );
    }
    let old = PartDisk::new(64, 63, "mkfs.ext4 -q -F");
    // xfs needs at least 300 MiB; the image is sparse.
    let new = PartDisk::new(400, 2048, "mkfs.xfs -f -q");
    for (d, start, fstype) in [(&old, 63u64, "ext4"), (&new, 2048, "xfs")] {
        let mnt = d.mnt.path().to_str().unwrap();
        let r = iolab(&["env", "--json", mnt]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = r.json();
        assert_eq!(v["schema"], "iolab-env/1");
        let p = &v["path"];
        assert_eq!(p["mountpoint"], mnt);
        assert_eq!(p["fs"]["fstype"], fstype);
        let stack = p["stack"].as_array().unwrap();
        assert_eq!(stack[0]["kind"], "partition");
        assert_eq!(stack[0]["name"], format!("{}p1", d.name()));
        assert_eq!(stack[1]["name"], d.name());
        assert_eq!(p["physical_disks"], serde_json::json!([d.name()]));
        let dev = v["block_devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == d.name())
            .expect("the loop device is listed")
            .clone();
        assert_eq!(dev["partitions"][0]["start_sector"], start);
        assert_eq!(dev["partitions"][0]["start_bytes"], start * 512);
        // against the system's own tools
        let sysfs_start: u64 = sh(&format!("cat /sys/block/{n}/{n}p1/start", n = d.name()))
            .parse()
            .unwrap();
        assert_eq!(sysfs_start, start);
        let size: u64 = sh(&format!("lsblk -bdno SIZE {}", d.dev)).parse().unwrap();
        assert_eq!(dev["size_bytes"], size);
        let lsblk_sched = sh(&format!("lsblk -dno SCHED {}", d.dev));
        assert_eq!(
            dev["scheduler"].as_str().unwrap_or("none"),
            if lsblk_sched.is_empty() {
                "none"
            } else {
                lsblk_sched.as_str()
            }
        );
        let lsblk_lbs: u64 = sh(&format!("lsblk -bdno LOG-SEC {}", d.dev))
            .parse()
            .unwrap();
        assert_eq!(dev["logical_block_size"], lsblk_lbs);
        let fm = sh(&format!("findmnt -no SOURCE,FSTYPE {mnt}"));
        assert_eq!(
            fm.split_whitespace().collect::<Vec<_>>(),
            vec![d.part.as_str(), fstype]
        );
        let fm_opts = sh(&format!("findmnt -no OPTIONS {mnt}"));
        for o in fm_opts.split(',') {
            assert!(
                p["mount_options"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x == o),
                "{o} from findmnt missing in {}",
                p["mount_options"]
            );
        }
        if fstype == "xfs" {
            assert_eq!(p["fs"]["xfs_inode_mode"], "inode64");
        }
        // the readable report shows the same
        let text = iolab(&["env", mnt]).stdout;
        assert!(text.contains(&format!("start sector {start}")), "{text}");
    }
    let c_old = iolab(&["check", "--json", old.mnt.path().to_str().unwrap()]);
    let c_new = iolab(&["check", "--json", new.mnt.path().to_str().unwrap()]);
    let (ids_old, ids_new) = (finding_ids(&c_old.json()), finding_ids(&c_new.json()));
    assert!(
        ids_old
            .iter()
            .any(|i| i.starts_with("partition_misaligned")),
        "{ids_old:?}"
    );
    assert!(
        !ids_new
            .iter()
            .any(|i| i.starts_with("partition_misaligned")),
        "{ids_new:?}"
    );
    assert_eq!(c_old.code, 1, "a warning gives exit code 1");
    let text = iolab(&["check", old.mnt.path().to_str().unwrap()]).stdout;
    assert!(
        text.contains("sector 63") && text.contains("fix:"),
        "{text}"
    );
}

#[test]
fn every_saved_run_carries_its_environment() {
    if let Some(why) = cannot() {
        return skip("every_saved_run_carries_its_environment", &why);
    }
    let d = PartDisk::new(64, 2048, "mkfs.ext4 -q -F");
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let mnt = d.mnt.path().to_str().unwrap();
    let a = iolab_db(
        &db,
        &[
            "run", "--dir", mnt, "--files", "1", "--size", "1M", "--mode", "rndrd", "--ops", "20",
            "--json", "-q",
        ],
    );
    assert_eq!(a.code, 0, "{}", a.stderr);
    let v = a.json();
    assert_eq!(v["system"]["schema"], "iolab-env/1");
    assert_eq!(
        v["system"]["path"]["stack"][0]["name"],
        format!("{}p1", d.name())
    );
    // change one setting of the device, run again: compare names it
    let sched_file = format!("/sys/block/{}/queue/read_ahead_kb", d.name());
    let before = std::fs::read_to_string(&sched_file).unwrap();
    std::fs::write(&sched_file, "4096").unwrap();
    let b = iolab_db(
        &db,
        &[
            "run", "--dir", mnt, "--files", "1", "--size", "1M", "--mode", "rndrd", "--ops", "20",
            "-q",
        ],
    );
    std::fs::write(&sched_file, before.trim()).unwrap();
    assert_eq!(b.code, 0, "{}", b.stderr);
    let c = iolab_db(&db, &["compare", "1", "2"]).stdout;
    assert!(
        c.contains(&format!("env.device.{}.read_ahead_kb", d.name())),
        "{c}"
    );
    assert!(c.contains("→ 4096"), "{c}");
}
