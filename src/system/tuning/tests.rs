//! The tuner and its records on a fixture sysfs tree and records folder.

use super::*;

/// A records folder and a sysfs tree with `sda` under mq-deadline.
fn fixture() -> (tempfile::TempDir, Records) {
    let d = tempfile::tempdir().unwrap();
    let q = d.path().join("sys/block/sda/queue");
    std::fs::create_dir_all(q.join("iosched")).unwrap();
    std::fs::write(q.join("scheduler"), "none [mq-deadline] kyber\n").unwrap();
    std::fs::write(q.join("nr_requests"), "77\n").unwrap();
    std::fs::write(q.join("read_ahead_kb"), "128\n").unwrap();
    std::fs::write(q.join("iosched/fifo_batch"), "7\n").unwrap();
    std::fs::write(q.join("iosched/read_expire"), "123\n").unwrap();
    std::fs::write(d.path().join("sys/block/sda/diskseq"), "9\n").unwrap();
    let records = Records {
        dir: d.path().join("records"),
        sys: d.path().join("sys"),
    };
    (d, records)
}

fn val(r: &Records, attr: &str) -> String {
    current(&queue(&r.sys, "sda").join(attr)).unwrap()
}

/// pid 1 never dies: a record of it is a live owner's.
fn live_other() -> Owner {
    Owner {
        pid: 1,
        start: start_time(1).unwrap(),
        boot: boot_id(),
    }
}

#[test]
fn the_whole_queue_state_is_recorded_in_restore_order() {
    let (_d, r) = fixture();
    let s = snapshot(&r.sys, "sda").unwrap();
    let attrs: Vec<&str> = s.settings.iter().map(|s| s.attr.as_str()).collect();
    assert_eq!(
        attrs,
        [
            "scheduler",
            "nr_requests",
            "iosched/fifo_batch",
            "iosched/read_expire",
            "read_ahead_kb"
        ]
    );
    assert_eq!(s.settings[0].original, "mq-deadline");
    assert_eq!(s.diskseq.as_deref(), Some("9"));
}

#[test]
fn a_tuner_puts_back_every_value_and_removes_only_its_own_record() {
    let (_d, r) = fixture();
    std::fs::create_dir_all(&r.dir).unwrap();
    let other = r.dir.join(live_other().file_name());
    let theirs = Record {
        owner: live_other(),
        devices: vec![DeviceState {
            dev: "sdb".into(),
            diskseq: None,
            settings: vec![Saved {
                attr: "scheduler".into(),
                original: "bfq".into(),
            }],
        }],
    };
    write_record(&other, &theirs).unwrap();
    let sys = r.sys.clone();
    let mut t = Tuner::new(r);
    t.set("sda", "scheduler", "none", "--scheduler").unwrap();
    let mine = t.record_path();
    assert!(mine.exists());
    // what the kernel does on a switch: nr_requests and the tunables reset
    let q = queue(&sys, "sda");
    std::fs::write(q.join("nr_requests"), "256").unwrap();
    std::fs::write(q.join("iosched/fifo_batch"), "16").unwrap();
    assert!(t.restore().is_empty());
    assert_eq!(val(&t.records, "scheduler"), "mq-deadline");
    assert_eq!(val(&t.records, "nr_requests"), "77");
    assert_eq!(val(&t.records, "iosched/fifo_batch"), "7");
    assert!(!mine.exists());
    assert_eq!(
        read_record(&other).unwrap(),
        theirs,
        "another's record untouched"
    );
}

#[test]
fn a_live_owners_device_is_refused_and_its_record_kept() {
    let (_d, r) = fixture();
    std::fs::create_dir_all(&r.dir).unwrap();
    let theirs = Record {
        owner: live_other(),
        devices: vec![snapshot(&r.sys, "sda").unwrap()],
    };
    let path = r.dir.join(theirs.owner.file_name());
    write_record(&path, &theirs).unwrap();
    assert!(r.replay().is_empty());
    let mut t = Tuner::new(r);
    let e = t
        .set("sda", "scheduler", "none", "--scheduler")
        .unwrap_err();
    assert!(e.to_string().contains("another iolab (pid 1)"), "{e}");
    assert!(t.restore().is_empty());
    drop(t);
    assert_eq!(read_record(&path).unwrap(), theirs);
}

#[test]
fn a_dead_owners_record_is_replayed_and_removed() {
    let (_d, r) = fixture();
    std::fs::create_dir_all(&r.dir).unwrap();
    // the pid of this process with another start time: a reused pid
    let dead = Owner {
        start: Owner::me().start + 1,
        ..Owner::me()
    };
    let rec = Record {
        owner: dead.clone(),
        devices: vec![snapshot(&r.sys, "sda").unwrap()],
    };
    let path = r.dir.join(dead.file_name());
    write_record(&path, &rec).unwrap();
    let q = queue(&r.sys, "sda");
    std::fs::write(q.join("scheduler"), "none").unwrap();
    std::fs::write(q.join("iosched/read_expire"), "500").unwrap();
    let lines = r.replay();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("scheduler mq-deadline, iosched/read_expire 123"),
        "{lines:?}"
    );
    assert_eq!(val(&r, "scheduler"), "mq-deadline");
    assert_eq!(val(&r, "iosched/read_expire"), "123");
    assert!(!path.exists());
}

#[test]
fn a_record_of_an_earlier_iolab_is_put_back_once() {
    let (d, r) = fixture();
    let legacy = d.path().join("restore.json");
    let q = queue(&r.sys, "sda");
    // above the kernel's highest pid (PID_MAX_LIMIT, 2^22): no such process
    let rec = serde_json::json!({
        "pid": i32::MAX,
        "settings": [
            {"path": q.join("scheduler"), "original": "kyber"},
            {"path": d.path().join("victim"), "original": "x"},
        ]
    });
    std::fs::write(&legacy, rec.to_string()).unwrap();
    let lines = r.replay_legacy(&legacy);
    assert_eq!(val(&r, "scheduler"), "kyber", "{lines:?}");
    assert!(!d.path().join("victim").exists());
    assert!(!legacy.exists());
}

#[test]
fn a_record_names_only_queue_settings() {
    let (d, r) = fixture();
    std::fs::create_dir_all(&r.dir).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let rec = Record {
        owner: Owner {
            pid: u32::MAX,
            ..Owner::me()
        },
        devices: vec![DeviceState {
            dev: "sda".into(),
            diskseq: None,
            settings: vec![Saved {
                attr: "../../../../victim".into(),
                original: "overwritten".into(),
            }],
        }],
    };
    write_record(&r.dir.join("x.json"), &rec).unwrap();
    let lines = r.replay();
    assert!(
        lines.iter().any(|l| l.contains("not a queue setting")),
        "{lines:?}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(!r.dir.join("x.json").exists(), "nothing in it to try again");
}
