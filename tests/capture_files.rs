//! `iolab capture`'s files (docs/capture.md, "Files"): each request told the file it went to
//! and that file's class (WAL, data, temp) under `--dir`; `--pid` keeping a process tree's
//! I/O and leaving another's out; and a real PostgreSQL server on an ext4 loop device,
//! captured by its postmaster's pid with its own counters (`--url`): WAL told from data, the
//! WAL the block layer saw equal to what the server says it wrote. Root only (skips otherwise).

use crate::capture::{cannot_capture, read_capture, stop_capture, wait_enabled};
use crate::common::blk::{LoopFs, sh};
use crate::common::*;
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Writes `n` pages of 8 KiB to `p` (appended), each made durable (fdatasync) before the next.
fn write_pages(p: &Path, n: usize) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap();
    for i in 0..n {
        f.write_all(&[(i % 251) as u8 + 1; 8192]).unwrap();
        f.sync_data().unwrap();
    }
}

fn capture(args: &[&str], out: &Path) -> std::process::Child {
    Command::new(bin())
        .arg("capture")
        .args(args)
        .args(["-o", out.to_str().unwrap(), "--time", "600", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn class<'a>(sum: &'a Value, name: &str) -> Option<&'a Value> {
    sum["classes"]
        .as_array()?
        .iter()
        .find(|c| c["class"] == name)
}

fn written(sum: &Value, name: &str) -> u64 {
    class(sum, name).map_or(0, |c| c["bytes"]["write"].as_u64().unwrap())
}

/// Files written under `--dir` while it captures, each fsynced page by page: the WAL file's,
/// the data file's and the temporary file's write bytes are exactly what was written to each
/// (the filesystem's journal is `unmapped`), every record names its file, the temporary file
/// deleted before the end keeps its class, and the fingerprint has each class.
#[test]
fn each_request_is_told_its_file_under_dir() {
    if let Some(why) = cannot_capture() {
        return skip("capture --dir files", &why);
    }
    let d = tempfile::tempdir().unwrap();
    let fs = LoopFs::new(256, &d.path().join("mnt"));
    let data = fs.dir.join("pgdata");
    for sub in ["pg_wal", "base/16384", "base/pgsql_tmp"] {
        std::fs::create_dir_all(data.join(sub)).unwrap();
    }
    let cap = d.path().join("c");
    let child = capture(&["--dir", data.to_str().unwrap()], &cap);
    wait_enabled(child.id());
    // a symbolic link planted under --dir to a file outside it: not followed, not mapped
    let outside = fs.dir.join("outside");
    std::os::unix::fs::symlink(&outside, data.join("pg_wal/000000010000000000000009")).unwrap();
    let wal = data.join("pg_wal/000000010000000000000001");
    let rel = data.join("base/16384/16397");
    let tmp = data.join("base/pgsql_tmp/pgsql_tmp1234.0");
    write_pages(&wal, 40);
    write_pages(&rel, 25);
    write_pages(&tmp, 10);
    write_pages(&outside, 20);
    // mapped (a pass each half second), then removed: its requests keep their file
    std::thread::sleep(Duration::from_millis(1200));
    std::fs::remove_file(&tmp).unwrap();
    write_pages(&wal, 10);
    let r = stop_capture(child);
    let sum = r.json();
    assert_eq!(sum["check"]["agree"], true, "{sum}");
    assert!(sum["files_mapped"].as_u64().unwrap() >= 2, "{sum}");
    // the link's target's 20 pages are no WAL: only the real WAL file's 50
    assert_eq!(written(&sum, "wal"), 50 * 8192, "{sum}");
    assert_eq!(written(&sum, "data"), 25 * 8192, "{sum}");
    assert_eq!(written(&sum, "temp"), 10 * 8192, "{sum}");
    assert!(written(&sum, "unmapped") > 0, "the journal: {sum}");
    let (_, recs, _) = read_capture(&cap);
    let files = |class: &str| -> Vec<String> {
        let mut v: Vec<String> = recs
            .iter()
            .filter(|r| r["class"] == class)
            .map(|r| r["file"].as_str().unwrap().to_string())
            .collect();
        v.dedup();
        v
    };
    assert_eq!(files("wal"), vec!["pg_wal/000000010000000000000001"]);
    assert!(
        recs.iter()
            .all(|r| r["file"] != "pg_wal/000000010000000000000009"),
        "a record named the planted link"
    );
    assert_eq!(files("data"), vec!["base/16384/16397"]);
    assert_eq!(files("temp"), vec!["base/pgsql_tmp/pgsql_tmp1234.0"]);
    // mapped, not touched: each file as the test wrote it
    for (p, n) in [(&wal, 50), (&rel, 25)] {
        let b = std::fs::read(p).unwrap();
        assert_eq!(b.len(), n * 8192, "{}", p.display());
        assert!(
            b.chunks(8192)
                .all(|c| c.iter().all(|&x| x == c[0] && x != 0))
        );
    }
    let f = iolab(&["fingerprint", "--no-save", "--json", cap.to_str().unwrap()]);
    assert_eq!(f.code, 0, "{}", f.stderr);
    let f = f.json();
    let classes: Vec<&str> = f["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes, vec!["wal", "data", "temp", "unmapped"], "{f}");
    let wal_print = &f["classes"][0]["fingerprint"];
    assert_eq!(wal_print["write"]["bytes"], 50 * 8192);
    assert_eq!(wal_print["read"]["requests"], 0);
    // the twin of the WAL's requests alone: writes of 8 KiB (what the WAL file received)
    let twin_dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let c = cap.to_str().unwrap();
    let dir = twin_dir.path().to_str().unwrap();
    let r = iolab(&[
        "run",
        "--like",
        c,
        "--class",
        "wal",
        "--closed",
        "--time",
        "0.5",
        "--dir",
        dir,
        "--no-save",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let job = &v["job"];
    assert_eq!(job["replay"]["like"]["class"], "wal", "{job}");
    assert_eq!(job["replay"]["reads"], 0, "{job}");
    assert_eq!(job["replay"]["writes"], 50, "{job}");
    assert!(ops(&v, "write") > 0);
    let r = iolab(&[
        "run",
        "--like",
        c,
        "--class",
        "other",
        "--dir",
        dir,
        "--no-save",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("iolab: error: --class other: the capture ")
            && r.stderr.trim_end().lines().count() == 1,
        "{}",
        r.stderr
    );
    // without --class: a role per class the capture told, all at once, each the twin of its
    // class's requests on a file of its own in DIR/CLASS/, at its own rate over the capture's
    // window (the WAL's 50 writes, the data's 25, the temporary file's 10: a pass each);
    // the journal's requests are left out, said in a note
    let r = iolab(&["run", "--like", c, "--dir", dir, "--no-save", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let roles = v["roles"].as_array().unwrap_or_else(|| panic!("{v}"));
    let names: Vec<&str> = roles.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["wal", "data", "temp"], "{v}");
    let note = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "like_roles")
        .unwrap_or_else(|| panic!("no like_roles note: {v}"));
    assert!(
        note["message"].as_str().unwrap().contains("to no file"),
        "{note}"
    );
    for (role, n) in roles.iter().zip([50u64, 25, 10]) {
        let name = role["name"].as_str().unwrap();
        assert_eq!(role["job"]["replay"]["like"]["class"], name, "{role}");
        let set = role["job"]["dir"].as_str().unwrap();
        assert_eq!(Path::new(set), Path::new(dir).join(name), "{role}");
        assert_eq!(ops(role, "read"), 0, "{name}: {role}");
        let w = ops(role, "write");
        assert!(
            w >= n && w <= n + n / 4 + 1,
            "{name}: {w} writes for the capture's {n} in its window"
        );
        let sizes = &role["results"]["write"]["by_bs"];
        assert!(
            sizes.is_null() || sizes.as_array().is_some_and(|b| b.len() == 1),
            "{name}: 8 KiB writes only: {sizes}"
        );
        assert!(role["replay"]["issued"].as_u64().unwrap() >= w, "{role}");
        // the role runs the capture's window (not the run's default 10 s)
        let (limit, stream) = (
            role["job"]["limit"]["time_s"].as_f64(),
            role["job"]["replay"]["like"]["time_s"].as_f64().unwrap(),
        );
        assert!(
            limit.is_some_and(|l| (l - stream).abs() < 1e-6),
            "{name}: limit {:?}, the stream's {stream} s",
            role["job"]["limit"]
        );
    }
    // each WAL write was made durable, and its flushes are the WAL role's (a flush belongs to
    // the class whose file write came last: the temporary file's role also has those after the
    // writes to the file outside --dir, which no file of the capture owns)
    let flushes: Vec<u64> = roles.iter().map(|x| ops(x, "fsync")).collect();
    eprintln!(
        "like roles: {} s; flushes wal/data/temp {flushes:?}",
        v["window_s"]
    );
    assert!(flushes[0] >= 50 && flushes[1] >= 25, "{flushes:?}");
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "the roles' sets removed"
    );
}

/// `--pid`: a shell whose working directory is one folder writes a file there; this test
/// (another process) writes one in a second folder meanwhile. The capture keeps the shell's
/// file (mapped through its working directory) and leaves the other out, counted.
#[test]
fn pid_keeps_a_process_trees_io_and_leaves_anothers_out() {
    if let Some(why) = cannot_capture() {
        return skip("capture --pid", &why);
    }
    let d = tempfile::tempdir().unwrap();
    let fs = LoopFs::new(128, &d.path().join("mnt"));
    let (mine, other) = (fs.dir.join("mine"), fs.dir.join("other"));
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let go = fs.dir.join("go");
    let mut sh_child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while [ ! -e {} ]; do sleep 0.05; done; for i in $(seq 30); do dd if=/dev/zero of=ibdata1 bs=8k count=1 oflag=append conv=notrunc,fsync status=none; done",
            go.display()
        ))
        .current_dir(&mine)
        .spawn()
        .unwrap();
    let cap = d.path().join("c");
    let pid = sh_child.id().to_string();
    let child = capture(&["--pid", &pid], &cap);
    wait_enabled(child.id());
    std::fs::write(&go, b"").unwrap();
    write_pages(&other.join("ib_logfile0"), 30);
    assert!(sh_child.wait().unwrap().success());
    let r = stop_capture(child);
    let sum = r.json();
    assert_eq!(
        sum["device"].as_str().unwrap(),
        fs.dev.trim_start_matches("/dev/"),
        "{sum}"
    );
    assert_eq!(written(&sum, "data"), 30 * 8192, "{sum}");
    assert_eq!(
        written(&sum, "wal"),
        0,
        "another process's file kept: {sum}"
    );
    assert!(sum["left_out"].as_u64().unwrap() >= 30, "{sum}");
    let (_, recs, _) = read_capture(&cap);
    assert!(recs.iter().all(|r| {
        r["file"]
            .as_str()
            .is_none_or(|f| f.ends_with("/mine/ibdata1"))
    }));
}

/// Bad `--pid`, `--cgroup` and `--url` are one line naming the flag, exit 2 (a server that
/// cannot be reached: exit 1), and nothing is written.
#[test]
fn bad_pids_cgroups_and_dbs_are_one_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("c");
    let o = out.to_str().unwrap();
    for (args, code, starts) in [
        (
            vec!["--pid", "999999999"],
            2,
            "iolab: error: --pid 999999999: no such process",
        ),
        (
            vec!["--pid", "0"],
            2,
            "iolab: error: invalid value '0' for '--pid <PID>'",
        ),
        (
            vec!["--cgroup", "no/such/group"],
            2,
            "iolab: error: --cgroup no/such/group: not a cgroup",
        ),
        (
            vec!["--cgroup", "../../etc"],
            2,
            "iolab: error: --cgroup ../../etc: not a cgroup",
        ),
        (
            vec!["--pid", "1", "--cgroup", "x"],
            2,
            "iolab: error: the argument '--pid <PID>' cannot be used with '--cgroup <CGROUP>'",
        ),
        (
            vec!["--dir", "/", "--url", "sqlite:///nonexistent/a.db"],
            2,
            "iolab: error: --url sqlite:///nonexistent/a.db: SQLite keeps no I/O counters",
        ),
        (
            vec!["--dir", "/", "--url", "ftp://x"],
            2,
            "iolab: error: --url 'ftp://x': use sqlite:///path/file.db, postgres://",
        ),
    ] {
        let mut a = vec!["capture", "--time", "1", "-o", o];
        a.extend(&args);
        let r = iolab(&a);
        let line = r.stderr.trim_end();
        // not root: refused for that first where the input is good
        if r.stderr.contains("needs root") {
            continue;
        }
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert!(line.starts_with(starts), "{args:?}: {line}");
        assert_eq!(line.lines().count(), 1, "{args:?}: {line}");
        assert!(!out.exists(), "{args:?} wrote {o}");
    }
    if unsafe { libc::geteuid() } == 0 {
        let r = iolab(&[
            "capture",
            "--time",
            "1",
            "-o",
            o,
            "--dir",
            "/",
            "--url",
            "postgres://u@127.0.0.1:1/x",
        ]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr
                .starts_with("iolab: error: --url: postgres at 127.0.0.1:1: cannot connect"),
            "{}",
            r.stderr
        );
        assert!(!out.exists());
    }
}

/// A PostgreSQL server of this test's own (initdb) with its data directory on an ext4 loop
/// device.
struct OwnPg {
    bin: PathBuf,
    data: PathBuf,
    sock: PathBuf,
    port: u16,
}

impl OwnPg {
    fn bin() -> Option<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .map(|e| e.path().join("bin"))
            .filter(|p| p.join("initdb").exists())
            .collect();
        v.sort();
        v.pop()
    }
    fn start(bin: PathBuf, under: &Path) -> OwnPg {
        let data = under.join("pgdata");
        let sock = under.join("sock");
        for p in [&data, &sock] {
            std::fs::create_dir_all(p).unwrap();
            sh(&format!("chown postgres:postgres {}", p.display()));
        }
        let port = 56000 + (std::process::id() % 1000) as u16;
        let pg = OwnPg {
            bin,
            data,
            sock,
            port,
        };
        pg.as_postgres(&format!(
            "{}/initdb -D {} -U postgres --auth=trust >/dev/null",
            pg.bin.display(),
            pg.data.display()
        ));
        // wal_init_zero off: a new WAL segment is not written whole with zeros, so the WAL
        // the block layer sees is what the server wrote as WAL
        pg.as_postgres(&format!(
            "{}/pg_ctl -D {} -l {}/log -w -t 60 -o \"-p {} -k {} -c listen_addresses='' -c shared_buffers=16MB -c wal_init_zero=off\" start >/dev/null",
            pg.bin.display(),
            pg.data.display(),
            pg.data.display(),
            pg.port,
            pg.sock.display()
        ));
        pg
    }
    fn as_postgres(&self, cmd: &str) -> String {
        sh(&format!(
            "runuser -u postgres -- sh -c \"{}\"",
            cmd.replace('"', "\\\"")
        ))
    }
    fn url(&self) -> String {
        format!(
            "postgres://postgres@/postgres?host={}&port={}",
            self.sock.display(),
            self.port
        )
    }
    fn pid(&self) -> String {
        std::fs::read_to_string(self.data.join("postmaster.pid"))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string()
    }
    fn sql(&self, q: &str) -> String {
        self.as_postgres(&format!(
            "{}/psql -h {} -p {} -U postgres -d postgres -Atc '{q}'",
            self.bin.display(),
            self.sock.display(),
            self.port
        ))
    }
}

impl Drop for OwnPg {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args([
                "-D",
                self.data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .stdout(Stdio::null())
            .status();
    }
}

/// Bytes covered by the union of the requests' ranges.
fn covered(mut r: Vec<(u64, u64)>) -> u64 {
    r.sort_unstable();
    let (mut total, mut end) = (0u64, 0u64);
    for (s, e) in r {
        if e > end {
            total += e - s.max(end);
            end = e;
        }
    }
    total
}

/// PostgreSQL under `iolab db run` (read-write transactions, then a CHECKPOINT), captured by
/// its postmaster's pid with `--url`: the capture's counts equal the device's within 1 %; WAL
/// and data writes are told apart; the WAL bytes the device received (each page once) equal
/// the server's WAL position's advance within 5 % (+ 2 pages), and its WAL write requests its
/// `pg_stat_wal.wal_sync` count within 10 %; the fingerprint has a WAL and a data class.
#[test]
fn postgresql_wal_and_data_told_apart_and_equal_to_what_the_server_says() {
    if let Some(why) = cannot_capture() {
        return skip("capture PostgreSQL", &why);
    }
    let Some(bin) = OwnPg::bin() else {
        return skip(
            "capture PostgreSQL",
            "PostgreSQL is not installed (apt-get install postgresql)",
        );
    };
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let fs = LoopFs::new(512, &d.path().join("mnt"));
    let pg = OwnPg::start(bin, &fs.dir);
    let url = pg.url();
    let prep = iolab(&[
        "db",
        "prepare",
        "--url",
        &url,
        "--table-size",
        "50000",
        "--no-save",
        "-q",
    ]);
    assert_eq!(prep.code, 0, "{}", prep.stderr);
    pg.sql("CHECKPOINT");
    let cap = d.path().join("pg.cap");
    let pid = pg.pid();
    let child = capture(&["--pid", &pid, "--url", &url], &cap);
    wait_enabled(child.id());
    let run = iolab(&[
        "db",
        "run",
        "--url",
        &url,
        "--table-size",
        "50000",
        "--time",
        "3",
        "--no-save",
        "-q",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    pg.sql("CHECKPOINT");
    let r = stop_capture(child);
    let sum = r.json();
    assert_eq!(sum["check"]["agree"], true, "{sum}");
    let wal_w = class(&sum, "wal").map_or(0, |c| c["ios"]["write"].as_u64().unwrap());
    assert!(wal_w > 50, "WAL writes {wal_w}: {sum}");
    assert!(written(&sum, "data") >= 8192 * 10, "data writes: {sum}");
    let db = &sum["db"];
    assert_eq!(db["engine"], "postgresql", "{sum}");
    let counter = |n: &str| {
        db["counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == n)
            .map(|c| c["delta"].as_f64().unwrap())
            .unwrap_or_else(|| panic!("no {n}: {db}"))
    };
    let (_, recs, _) = read_capture(&cap);
    let wal_ranges: Vec<(u64, u64)> = recs
        .iter()
        .filter(|r| r["class"] == "wal" && r["dir"] == "write")
        .map(|r| {
            let o = r["offset_bytes"].as_u64().unwrap();
            (o, o + r["size_bytes"].as_u64().unwrap())
        })
        .collect();
    let got = covered(wal_ranges) as f64;
    let lsn = counter("wal_position");
    assert!(
        (got - lsn).abs() <= 0.05 * lsn + 16384.0,
        "the WAL pages written ({got} bytes) against the WAL position's advance ({lsn} bytes)"
    );
    let syncs = counter("pg_stat_wal.wal_sync");
    assert!(
        (wal_w as f64 - syncs).abs() <= 0.10 * syncs,
        "WAL write requests {wal_w} against pg_stat_wal.wal_sync {syncs}"
    );
    eprintln!(
        "PostgreSQL: WAL {wal_w} write requests ({got} bytes of pages) against wal_sync {syncs} and the WAL position's advance {lsn} bytes; data {} bytes written; {} requests left out",
        written(&sum, "data"),
        sum["left_out"]
    );
    let f = iolab(&["fingerprint", "--no-save", "--json", cap.to_str().unwrap()]).json();
    let classes: Vec<&str> = f["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    assert!(
        classes.contains(&"wal") && classes.contains(&"data"),
        "{classes:?}"
    );
}

/// The test MariaDB server (IOLAB_TEST_MYSQL_URL, scripts/test.sh's) under `iolab db run`,
/// captured by its pid with `--url`: the device's counts within 1 %; its redo log
/// (`ib_logfile0`) told as WAL, the bytes written there at least the server's
/// `Innodb_os_log_written` (redo is written in whole blocks, pages again), and InnoDB's counters
/// in the summary.
#[test]
fn mariadb_redo_told_as_wal_beside_innodbs_counters() {
    if let Some(why) = cannot_capture() {
        return skip("capture MariaDB", &why);
    }
    let Some(url) = std::env::var("IOLAB_TEST_MYSQL_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        return skip(
            "capture MariaDB",
            "IOLAB_TEST_MYSQL_URL not set (scripts/test.sh starts a private server as root)",
        );
    };
    use mysql::prelude::Queryable;
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    let pid_file: String = c.query_first("SELECT @@pid_file").unwrap().unwrap();
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    let size = ["--tables", "1", "--table-size", "10000"];
    let mut a = vec!["db", "prepare", "--url", &url, "--no-save", "-q"];
    a.extend(size);
    let cleanup: Vec<&str> = vec!["db", "cleanup", "--url", &url, "--tables", "1"];
    assert_eq!(iolab(&cleanup).code, 0);
    let r = iolab(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = tempfile::tempdir().unwrap();
    let cap = d.path().join("my.cap");
    let child = capture(&["--pid", &pid, "--url", &url], &cap);
    wait_enabled(child.id());
    let mut a = vec!["db", "run", "--url", &url, "--time", "3", "--no-save", "-q"];
    a.extend(size);
    let run = iolab(&a);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = stop_capture(child);
    iolab(&cleanup);
    let sum = r.json();
    assert_eq!(sum["check"]["agree"], true, "{sum}");
    let db = &sum["db"];
    assert_eq!(db["engine"], "mysql", "{sum}");
    let log = db["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "status.innodb_os_log_written")
        .map(|c| c["delta"].as_f64().unwrap())
        .unwrap_or_else(|| panic!("no innodb_os_log_written: {db}"));
    let wal = written(&sum, "wal") as f64;
    assert!(
        log > 0.0 && wal >= 0.9 * log,
        "redo written {wal} bytes against Innodb_os_log_written {log}: {sum}"
    );
    let (_, recs, _) = read_capture(&cap);
    assert!(
        recs.iter()
            .filter(|r| r["class"] == "wal")
            .all(|r| r["file"].as_str().unwrap().contains("ib_logfile")),
        "WAL requests to files other than the redo log"
    );
    eprintln!(
        "MariaDB: redo written {wal} bytes against Innodb_os_log_written {log}; {} requests left out",
        sum["left_out"]
    );
}
