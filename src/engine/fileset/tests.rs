//! The file set's preparation, shapes and cleanup, on files in a temporary folder.

use super::*;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

fn spec(dir: &Path, files: u32, fsize: u64) -> FileSetSpec {
    FileSetSpec {
        dir: dir.to_path_buf(),
        files,
        total_bytes: files as u64 * fsize,
        file_size_bytes: fsize,
        device: None,
        offset_bytes: None,
        file_len_bytes: None,
        layout: Layout::Overwrite,
        larger_ok: false,
    }
}

/// A longer written set is refused, except for a job file's named files (`larger_ok`),
/// which use it as it is; a longer sparse one is refused for both.
#[test]
fn a_longer_set_serves_a_job_files_named_files_only() {
    let d = tempfile::tempdir().unwrap();
    let long = spec(d.path(), 1, 512 * 1024);
    let stop = AtomicBool::new(false);
    prepare(&long, PrepWrite::Auto, 4096, &stop, true, false).unwrap();
    let short = spec(d.path(), 1, 128 * 1024);
    assert!(check_sizes(&short).is_err());
    assert_eq!(status(&short).ready_files, 0);
    let named = FileSetSpec {
        larger_ok: true,
        ..short.clone()
    };
    assert!(check_sizes(&named).is_ok());
    assert!(status(&named).complete(&named));
    let r = prepare(&named, PrepWrite::Auto, 4096, &stop, true, false).unwrap();
    assert_eq!((r.written_bytes, r.reused_files), (0, 1));
    assert_eq!(
        fs::metadata(file_path(d.path(), 0)).unwrap().len(),
        512 * 1024
    );
    // sparse and longer: not written data, refused
    let f = OpenOptions::new()
        .write(true)
        .open(file_path(d.path(), 0))
        .unwrap();
    f.set_len(0).unwrap();
    f.set_len(1 << 20).unwrap();
    assert!(check_sizes(&named).is_err());
}

#[test]
fn prepare_writes_full_files_then_reuses_them() {
    let d = tempfile::tempdir().unwrap();
    let s = spec(d.path(), 3, 256 * 1024);
    let stop = AtomicBool::new(false);
    assert_eq!(status(&s).ready_files, 0);
    let r = prepare(&s, PrepWrite::Auto, 4096, &stop, true, false).unwrap();
    assert_eq!(r.written_bytes, 3 * 256 * 1024);
    assert!(status(&s).complete(&s));
    for i in 0..3 {
        let md = fs::metadata(file_path(d.path(), i)).unwrap();
        assert!(md.blocks() * 512 >= md.len(), "not sparse");
        let data = fs::read(file_path(d.path(), i)).unwrap();
        assert!(
            data.iter().filter(|&&b| b == 0).count() < data.len() / 100,
            "real data, not zeros"
        );
    }
    let r2 = prepare(&s, PrepWrite::Buffered, 4096, &stop, true, false).unwrap();
    assert_eq!((r2.written_bytes, r2.reused_files), (0, 3));
    // a wrong-sized file is rewritten
    fs::write(file_path(d.path(), 1), b"short").unwrap();
    let r3 = prepare(&s, PrepWrite::Buffered, 4096, &stop, true, false).unwrap();
    assert_eq!((r3.written_bytes, r3.reused_files), (256 * 1024, 2));
}

#[test]
fn the_default_writes_the_bytes_buffered_writes_falling_back_where_o_direct_is_refused() {
    // One whole write of 4 chunks, then 3 chunks and an unaligned tail of 100 bytes in the
    // second write, which no filesystem with O_DIRECT alignment takes as an O_DIRECT write
    // (EINVAL): it is written buffered. Where the filesystem refuses O_DIRECT opens (tmpfs
    // before Linux 6.6) all of it is.
    let fsize = (WRITE + 3 * CHUNK) as u64 + 100;
    let stop = AtomicBool::new(false);
    let mut bases = vec![tempfile::tempdir().unwrap()];
    if let Ok(d) = tempfile::tempdir_in("/dev/shm") {
        bases.push(d);
    }
    for base in &bases {
        let (a, b) = (base.path().join("auto"), base.path().join("buffered"));
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        let (sa, sb) = (spec(&a, 1, fsize), spec(&b, 1, fsize));
        let ra = prepare(&sa, PrepWrite::Auto, 4096, &stop, true, false).unwrap();
        let rb = prepare(&sb, PrepWrite::Buffered, 4096, &stop, true, false).unwrap();
        assert_eq!((ra.written_bytes, rb.written_bytes), (fsize, fsize));
        assert_eq!(rb.direct_bytes, 0, "--buffered never uses O_DIRECT");
        let fs_type = crate::system::fsinfo::fs_type(base.path());
        let takes_direct = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(file_path(&a, 0))
            .is_ok();
        if !takes_direct {
            assert_eq!(ra.direct_bytes, 0, "{fs_type}");
        } else if fs_type == "tmpfs" {
            // tmpfs takes O_DIRECT of any alignment (it has no device below it)
            assert!(ra.direct_bytes >= WRITE as u64, "{fs_type}");
        } else {
            assert_eq!(
                ra.direct_bytes, WRITE as u64,
                "{fs_type}: the tail buffered"
            );
        }
        let (da, db) = (
            fs::read(file_path(&a, 0)).unwrap(),
            fs::read(file_path(&b, 0)).unwrap(),
        );
        assert_eq!(da.len() as u64, fsize);
        assert!(da == db, "{fs_type}: the same bytes either way");
        // what a set holds: chunk k (from 1) of a writer's first file is the writer's 1 MiB
        // pattern with k in the first 8 bytes of every 4 KiB page
        for (o, page) in da.chunks(4096).enumerate().map(|(p, d)| (p * 4096, d)) {
            let k = (o / CHUNK + 1) as u64;
            assert_eq!(
                page[..8.min(page.len())],
                k.to_le_bytes()[..8.min(page.len())]
            );
            let same = &da[o % CHUNK..][..page.len()];
            assert_eq!(
                page[8.min(page.len())..],
                same[8.min(page.len())..],
                "at {o}"
            );
        }
        assert!(status(&sa).complete(&sa), "{fs_type}");
        let res = evict(&sa).unwrap();
        assert!(
            fs_type == "tmpfs" || res.pct() <= crate::measure::warnings::EVICT_FAIL_PCT,
            "{fs_type}: evicted after a partly buffered prepare ({:.1} %)",
            res.pct()
        );
    }
}

#[test]
fn layouts_are_made_recognised_and_told_apart() {
    let with = |s: &FileSetSpec, layout| FileSetSpec {
        layout,
        ..s.clone()
    };
    for layout in [Layout::Holes, Layout::Unwritten, Layout::Extend] {
        let d = tempfile::tempdir().unwrap();
        let s = with(&spec(d.path(), 2, 256 * 1024), layout);
        assert_eq!(status(&s).ready_files, 0);
        assert_eq!(make_layout(&s, false).unwrap(), 2);
        assert!(status(&s).complete(&s), "{layout}");
        assert!(check_sizes(&s).is_ok(), "{layout}");
        assert_eq!(make_layout(&s, true).unwrap(), 0, "only missing files");
        // overwrite completes a sparse or preallocated set in place; it is not ready yet
        let o = with(&s, Layout::Overwrite);
        assert_eq!(status(&o).ready_files, 0, "{layout} is not written data");
        assert_eq!(
            check_sizes(&o).is_ok(),
            layout != Layout::Extend,
            "{layout}"
        );
        // every other layout refuses it, naming --layout
        for other in [Layout::Holes, Layout::Unwritten, Layout::Extend] {
            if other != layout {
                let e = check_sizes(&with(&s, other)).unwrap_err();
                assert!(e.to_string().contains("--layout"), "{e}");
            }
        }
    }
    // written data is none of the other layouts
    let d = tempfile::tempdir().unwrap();
    let s = spec(d.path(), 1, 256 * 1024);
    prepare(
        &s,
        PrepWrite::Buffered,
        4096,
        &AtomicBool::new(false),
        true,
        false,
    )
    .unwrap();
    for other in [Layout::Holes, Layout::Unwritten, Layout::Extend] {
        assert!(check_sizes(&with(&s, other)).is_err(), "{other}");
    }
}

#[test]
fn cleanup_removes_only_iolab_files() {
    let d = tempfile::tempdir().unwrap();
    for n in [
        "iolab-file.0",
        "iolab-file.12",
        "iolab-file.x",
        "keep.txt",
        "iolab-file.",
    ] {
        fs::write(d.path().join(n), b"x").unwrap();
    }
    assert_eq!(cleanup_dir(d.path()).unwrap(), 2);
    let mut left: Vec<String> = fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, vec!["iolab-file.", "iolab-file.x", "keep.txt"]);
}
