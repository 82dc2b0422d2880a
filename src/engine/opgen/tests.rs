use super::*;
use crate::model::job::{Distribution, EngineKind, FsyncMode, OpenFlags};

/// A job of `threads` threads in `mode` with the null engine, for the engine's tests.
pub(crate) fn job(mode: Mode, threads: u32) -> Job {
    Job {
        mode,
        engine: EngineKind::Null,
        threads,
        iodepth: 1,
        bs_bytes: 16384,
        bs_mix: None,
        bs_range: None,
        bs_dirs: None,
        block_align_bytes: 0,
        direct: false,
        open_flags: OpenFlags::default(),
        fsync_freq: 0,
        fsync_every_s: None,
        fsync_all: false,
        fsync_end: true,
        fsync_mode: FsyncMode::Fsync,
        rw_ratio: 1.5,
        distribution: Distribution::Uniform,
        seed: 1,
        rate_iops: None,
        no_spin: false,
        limit: Limit::Ops(1000),
        max_time_s: None,
        ramp_s: 0.0,
        verify: false,
        verify_backlog: 0,
        random_map: RandomMap::Off,
        fio_rand: None,
        fio_logs: None,
        buffers: Default::default(),
        cpus: None,
        ioprio: None,
        offset_increment_bytes: 0,
        seq_skip_bytes: 0,
        random_every: 0,
        random_every_same: false,
        follow_pct: 0,
        timing: Default::default(),
        noio: None,
        replay: None,
    }
}

#[test]
fn verify_keeps_each_thread_inside_its_own_range() {
    use crate::model::job::BsWeight;
    let fsize = 64 * 65536;
    for mode in [Mode::Rndrw, Mode::Seqrewr] {
        let mut j = job(mode, 3);
        j.verify = true;
        j.bs_bytes = 65536;
        j.bs_mix = Some(vec![
            BsWeight {
                bs_bytes: 4096,
                weight_pct: 50,
            },
            BsWeight {
                bs_bytes: 65536,
                weight_pct: 50,
            },
        ]);
        let mut prev_hi = 0;
        for t in 0..3 {
            let mut g = OpGen::new(&j, 4, fsize, t);
            let (lo, hi) = g.range();
            assert_eq!(lo, prev_hi, "ranges follow each other");
            assert!(hi > lo && lo.is_multiple_of(65536) && hi.is_multiple_of(65536));
            prev_hi = hi;
            for _ in 0..5000 {
                if let Next::Io { file, off, len, .. } = g.next_op() {
                    let p = file as u64 * fsize + off;
                    assert!(p >= lo && p + len <= hi, "{mode:?} thread {t}: {p}+{len}");
                    assert_eq!((off + len - 1) / fsize, 0, "inside its file");
                }
            }
        }
        assert_eq!(prev_hi, 4 * fsize);
    }
}

/// --fsync-every on a clock the test sets (the worker's completion times): no fsync before
/// the period has passed since the first write completed, then one fsync of each file
/// written since, in file order, before the next write; each fsync of the sweep moves the
/// time of the last sync on; a stop in the middle of a sweep owes the rest of it.
#[test]
fn fsync_every_sweeps_the_written_files_once_the_period_has_passed() {
    let mut j = job(Mode::Rndwr, 1);
    j.fsync_every_s = Some(2.0);
    let fsize = 64 * 16384;
    let mut g = OpGen::new(&j, 4, fsize, 0);
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut written = [false; 4];
    // writes complete every 10 ms up to 1.99 s after the first: no fsync
    for i in 0..200 {
        match g.next_op() {
            Next::Io { kind, file, .. } => {
                assert_eq!(kind, OpKind::Write);
                written[file as usize] = true;
            }
            other => panic!("{other:?} before the period passed (write {i})"),
        }
        g.completed(OpKind::Write, at(i * 10));
    }
    assert!(
        written.iter().all(|&w| w),
        "random writes reach all 4 files"
    );
    // the write completing at 2.0 s starts the sweep: each file once, in order
    let Next::Io { .. } = g.next_op() else {
        panic!("a write")
    };
    g.completed(OpKind::Write, at(2000));
    for f in 0..4 {
        assert_eq!(g.next_op(), Next::Fsync { file: f });
        g.completed(OpKind::Fsync, at(2100 + f as u64 * 100));
    }
    // the sweep is done; the next period counts from its last fsync (2.4 s)
    let Next::Io { file: a, .. } = g.next_op() else {
        panic!("a write after the sweep")
    };
    g.completed(OpKind::Write, at(4399));
    let Next::Io { file: b, .. } = g.next_op() else {
        panic!("4.399 s is less than 2 s after 2.4 s: no fsync yet")
    };
    g.completed(OpKind::Write, at(4400));
    // only the files written since the sweep, in order
    let mut want = vec![a.min(b), a.max(b)];
    want.dedup();
    assert_eq!(g.next_op(), Next::Fsync { file: want[0] });
    // a stop in the middle of the sweep owes the rest of it, even without --fsync-end
    assert_eq!(g.final_fsyncs(None, false), want[1..]);
    assert!(g.final_fsyncs(None, false).is_empty(), "marks cleared");
}

/// seqrw (fio's rw=readwrite): 1.5 reads per write, exactly; the reads and the writes
/// each go through the set in order from its start, each from its own position (as fio
/// keeps one per direction), across the files and round again.
#[test]
fn seqrw_reads_and_writes_each_go_in_order() {
    let fsize = 8 * 16384;
    let mut g = OpGen::new(&job(Mode::Seqrw, 1), 2, fsize, 0);
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for _ in 0..100 {
        match g.next_op() {
            Next::Io {
                kind,
                file,
                off,
                len,
                ..
            } => {
                assert_eq!(len, 16384);
                let at = file as u64 * fsize + off;
                if kind == OpKind::Read {
                    reads.push(at);
                } else {
                    writes.push(at);
                }
            }
            other => panic!("unexpected {other:?} with fsync freq 0"),
        }
    }
    assert_eq!((reads.len(), writes.len()), (60, 40));
    // 16 blocks over the two files, in order, then from the start again
    let in_order = |n: usize| (0..n).map(|i| (i as u64 % 16) * 16384).collect::<Vec<_>>();
    assert_eq!(reads, in_order(60));
    assert_eq!(writes, in_order(40));
}

#[test]
fn rndrw_keeps_the_exact_read_write_ratio() {
    let mut g = OpGen::new(&job(Mode::Rndrw, 1), 4, 64 * 16384, 0);
    let (mut r, mut w) = (0, 0);
    for _ in 0..1000 {
        match g.next_op() {
            Next::Io {
                kind: OpKind::Read, ..
            } => r += 1,
            Next::Io {
                kind: OpKind::Write,
                ..
            } => w += 1,
            other => panic!("unexpected {other:?} with fsync freq 0"),
        }
    }
    assert_eq!((r, w), (600, 400));
}

#[test]
fn fsync_follows_every_nth_write_to_a_file() {
    let mut j = job(Mode::Seqrewr, 1);
    j.fsync_freq = 10;
    let mut g = OpGen::new(&j, 2, 16 * 16384, 0);
    let mut seq = Vec::new();
    for _ in 0..35 {
        seq.push(g.next_op());
    }
    let fsyncs: Vec<usize> = seq
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(n, Next::Fsync { .. }))
        .map(|(i, _)| i)
        .collect();
    // 16 blocks per file: writes 0..9 go to file 0, then its fsync; 6 more to file 0, then
    // 10 to file 1 and its fsync; the rest leaves both files dirty.
    assert_eq!(fsyncs, vec![10, 27]);
    assert_eq!(seq[10], Next::Fsync { file: 0 });
    assert_eq!(seq[27], Next::Fsync { file: 1 });
    assert_eq!(g.final_fsyncs(None, true), vec![0, 1]);
    assert_eq!(
        g.final_fsyncs(None, true),
        Vec::<u32>::new(),
        "marks cleared"
    );
}

#[test]
fn an_fsync_due_with_the_last_write_is_still_owed() {
    let mut j = job(Mode::Rndwr, 1);
    j.fsync_all = true;
    let mut g = OpGen::new(&j, 4, 16 * 16384, 0);
    let Next::Io { file, .. } = g.next_op() else {
        panic!()
    };
    assert_eq!(g.final_fsyncs(None, false), vec![file]);
}

#[test]
fn sequential_threads_get_disjoint_whole_files() {
    let j = job(Mode::Seqrd, 4);
    let mut seen = std::collections::HashSet::new();
    for t in 0..4 {
        let mut g = OpGen::new(&j, 8, 4 * 16384, t);
        for _ in 0..8 {
            let Next::Io { file, off, .. } = g.next_op() else {
                panic!()
            };
            assert_eq!(file / 2, t, "thread {t} stays in its files");
            assert!(seen.insert((file, off)));
        }
    }
    assert_eq!(seen.len(), 32, "together they cover the set once");
}

fn with_bs(mode: Mode, bs: &str) -> Job {
    let mut j = job(mode, 1);
    match bs.parse::<crate::model::job::BsArg>().unwrap() {
        crate::model::job::BsArg::Mix(m) => {
            j.bs_bytes = m.last().unwrap().bs_bytes;
            j.bs_mix = Some(m);
        }
        crate::model::job::BsArg::Range { min, max } => {
            j.bs_bytes = max;
            j.bs_range = Some(crate::model::job::BsRange {
                min_bytes: min,
                max_bytes: max,
                step_bytes: 4096,
            });
        }
        crate::model::job::BsArg::One(b) => j.bs_bytes = b,
    }
    j
}

/// Draws `n` I/Os and checks each stays inside its file on the grid; returns the count of
/// each size index.
fn draw(j: &Job, files: u32, fsize: u64, n: usize) -> Vec<u64> {
    let sizes = j.bs_sizes();
    let mut g = OpGen::new(j, files, fsize, 0);
    let mut c = vec![0u64; sizes.len()];
    for _ in 0..n {
        let Next::Io {
            file, off, len, si, ..
        } = g.next_op()
        else {
            panic!()
        };
        assert_eq!(len, sizes[si as usize]);
        assert!(file < files);
        assert!(off + len <= fsize, "{off} + {len} past {fsize}");
        if j.mode.is_random() {
            assert_eq!(off % sizes[0], 0, "on the grid of the smallest size");
        }
        c[si as usize] += 1;
    }
    c
}

#[test]
fn a_bs_mix_gives_each_size_its_weight() {
    let j = with_bs(Mode::Rndrd, "4k:20,16k:50,1m:30");
    let n = 200_000;
    // files large enough that a size drawn again where it would pass a file's end (fio's
    // io_u_fits) moves no share
    let c = draw(&j, 4, 4 << 30, n);
    for (got, want) in c.iter().zip([0.2, 0.5, 0.3]) {
        let share = *got as f64 / n as f64;
        assert!((share - want).abs() < 0.02, "{c:?}");
    }
}

#[test]
fn a_bs_range_gives_every_step_about_equally() {
    let j = with_bs(Mode::Rndwr, "4k-64k");
    assert_eq!(j.bs_sizes().len(), 16);
    let n = 200_000;
    let c = draw(&j, 2, 1 << 20, n);
    for got in &c {
        let share = *got as f64 / n as f64;
        assert!((share - 1.0 / 16.0).abs() < 0.02, "{c:?}");
    }
}

#[test]
fn sequential_mixes_advance_by_each_size_and_stay_in_their_files() {
    let j = with_bs(Mode::Seqrd, "16k:50,64k:50");
    let fsize = 256 << 10;
    let mut g = OpGen::new(&j, 2, fsize, 0);
    let mut expect = 0u64; // position in the set
    for _ in 0..1000 {
        let Next::Io { file, off, len, .. } = g.next_op() else {
            panic!()
        };
        let at = file as u64 * fsize + off;
        if expect + len > 2 * fsize {
            expect = 0; // wraps
        }
        if expect % fsize + len > fsize {
            expect = expect.next_multiple_of(fsize); // skips the rest of the file
        }
        assert_eq!(at, expect);
        assert!(off + len <= fsize);
        expect = at + len;
        if expect >= 2 * fsize {
            expect = 0;
        }
    }
    // other thread counts: every I/O inside its file
    for threads in [3, 5] {
        let mut j = j.clone();
        j.threads = threads;
        for t in 0..threads {
            let mut g = OpGen::new(&j, 2, fsize, t);
            for _ in 0..200 {
                let Next::Io { off, len, .. } = g.next_op() else {
                    panic!()
                };
                assert!(off + len <= fsize);
            }
        }
    }
}

#[test]
fn bs_arg_parses_mixes_and_ranges_and_refuses_bad_ones() {
    use crate::model::job::{BsArg, BsWeight};
    assert_eq!("16k".parse::<BsArg>(), Ok(BsArg::One(16384)));
    assert_eq!(
        "1m:30,16k:70".parse::<BsArg>(),
        Ok(BsArg::Mix(vec![
            BsWeight {
                bs_bytes: 16384,
                weight_pct: 70
            },
            BsWeight {
                bs_bytes: 1 << 20,
                weight_pct: 30
            }
        ]))
    );
    // fio's rule: every multiple of the minimum (1k-4k was refused for a 4 KiB step)
    assert_eq!(
        "1k-4k".parse::<BsArg>(),
        Ok(BsArg::Range {
            min: 1024,
            max: 4096
        })
    );
    assert_eq!(
        "4k-64k".parse::<BsArg>(),
        Ok(BsArg::Range {
            min: 4096,
            max: 65536
        })
    );
    for bad in [
        "16k:70,1m",
        "16k:70,1m:20",
        "16k:70,16k:30",
        "16k:0,1m:100",
        "64k-4k",
        "4k-4k",
        "0",
    ] {
        assert!(bad.parse::<BsArg>().is_err(), "{bad}");
    }
}

#[test]
fn a_single_size_draws_exactly_as_before() {
    // one size takes no draw for the size: the offsets of a seed stay what they were
    let j = job(Mode::Rndrd, 1);
    let mut g = OpGen::new(&j, 4, 64 * 16384, 0);
    let g2 = OffsetGen::new(&j.distribution, 4 * 64);
    let mut rng = thread_rng(j.seed, 0);
    for _ in 0..100 {
        let b = g2.next(&mut rng);
        let Next::Io { file, off, len, .. } = g.next_op() else {
            panic!()
        };
        assert_eq!((file as u64, off, len), (b / 64, (b % 64) * 16384, 16384));
    }
}

#[test]
fn a_base_offset_moves_every_io_into_the_range() {
    let j = job(Mode::Rndrw, 1);
    let mut g = OpGen::new(&j, 1, 64 * 16384, 0).with_base(1 << 20);
    for _ in 0..1000 {
        let Next::Io { file, off, .. } = g.next_op() else {
            panic!()
        };
        assert_eq!(file, 0);
        assert!((1 << 20..(1 << 20) + 64 * 16384).contains(&off), "{off}");
        assert_eq!(off % 16384, 0);
    }
}

#[test]
fn quota_splits_exactly() {
    let mut j = job(Mode::Rndrd, 3);
    j.limit = Limit::Ops(1000);
    let q: Vec<Quota> = (0..3).map(|t| thread_quota(&j, t).unwrap()).collect();
    assert_eq!(q, vec![Quota::Ops(334), Quota::Ops(333), Quota::Ops(333)]);
    j.limit = Limit::Bytes(10 * 16384 + 5);
    let q: Vec<Quota> = (0..3).map(|t| thread_quota(&j, t).unwrap()).collect();
    assert_eq!(
        q,
        vec![
            Quota::Bytes(54615),
            Quota::Bytes(54615),
            Quota::Bytes(54615)
        ]
    );
    j.limit = Limit::Bytes(10 * 16384);
    let q: Vec<Quota> = (0..3).map(|t| thread_quota(&j, t).unwrap()).collect();
    assert_eq!(
        q,
        vec![
            Quota::Bytes(4 * 16384),
            Quota::Bytes(3 * 16384),
            Quota::Bytes(3 * 16384)
        ]
    );
}

/// fio's `rw=read:-8k` with bs=4k (examples/backwards-read.fio): the first block, then from the
/// end of the range down, wrapping to the end again after block 0.
#[test]
fn a_negative_skip_reads_backwards_as_fio() {
    let mut j = job(Mode::Seqrd, 1);
    j.bs_bytes = 4096;
    j.seq_skip_bytes = -8192;
    let mut g = OpGen::new(&j, 1, 16 * 4096, 0);
    let offs: Vec<u64> = (0..18)
        .map(|_| match g.next_op() {
            Next::Io { off, .. } => off / 4096,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        offs,
        [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 14, 13]
    );
}

/// t0007: 1 MiB reads with 512 KiB holes over 128 MiB end after 85 reads (fio's expected
/// result); the next pass starts at the range's start.
#[test]
fn a_pass_with_holes_ends_where_the_next_io_would_not_fit() {
    let m = 1u64 << 20;
    assert_eq!(skip_pass_ops(m, 128 * m, 128 * m, 512 << 10, u64::MAX), 85);
    let mut j = job(Mode::Seqwr, 1);
    j.bs_bytes = m;
    j.seq_skip_bytes = 512 << 10;
    let mut g = OpGen::new(&j, 1, 4 * m, 0);
    let offs: Vec<u64> = (0..4)
        .map(|_| match g.next_op() {
            Next::Io { off, .. } => off >> 19,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(offs, [0, 3, 6, 0], "in half MiB");
}

/// --offset-increment: thread N starts N increments further on and moves through the whole
/// range, not a share of it.
#[test]
fn an_offset_increment_spreads_the_threads() {
    let mut j = job(Mode::Seqrd, 3);
    j.offset_increment_bytes = 1 << 20;
    for t in 0..3u64 {
        let mut g = OpGen::new(&j, 1, 64 * 16384, t as u32).with_base(4096);
        let offs: Vec<u64> = (0..65)
            .map(|_| match g.next_op() {
                Next::Io { off, .. } => off,
                other => panic!("{other:?}"),
            })
            .collect();
        let start = 4096 + t * (1 << 20);
        assert_eq!(offs[0], start);
        assert_eq!(offs[63], start + 63 * 16384);
        assert_eq!(offs[64], start, "the whole range, then again");
    }
}

/// fio's trimwrite and randtrimwrite (t/jobs/t0023.fio, t0024.fio, judged by
/// t/run-fio-tests.py): every trim is followed by a write of the same size at the same offset,
/// and with the random map the trims of a pass cover every block once.
#[test]
fn trimwrite_pairs_each_trim_with_a_write_at_its_place() {
    use crate::model::job::BsRange;
    for (mode, map) in [
        (Mode::Seqtrimwr, RandomMap::Off),
        (Mode::Rndtrimwr, RandomMap::Bitmap),
        (Mode::Rndtrimwr, RandomMap::Off),
    ] {
        let mut j = job(mode, 1);
        j.random_map = map;
        j.bs_bytes = 4096;
        j.bs_range = Some(BsRange {
            min_bytes: 512,
            max_bytes: 4096,
            step_bytes: 512,
        });
        let fsize = 1 << 20;
        let mut g = OpGen::new(&j, 1, fsize, 0);
        let mut covered = vec![false; (fsize / 512) as usize];
        let mut trimmed = 0;
        while trimmed < fsize {
            let Next::Io {
                kind: OpKind::Trim,
                file,
                off,
                len,
                si,
            } = g.next_op()
            else {
                panic!("{mode}: a trim first");
            };
            assert_eq!(
                g.next_op(),
                Next::Io {
                    kind: OpKind::Write,
                    file,
                    off,
                    len,
                    si,
                },
                "{mode}: the write of the pair"
            );
            for b in off / 512..(off + len) / 512 {
                covered[b as usize] = true;
            }
            trimmed += len;
        }
        if mode == Mode::Seqtrimwr || map == RandomMap::Bitmap {
            assert!(covered.iter().all(|&c| c), "{mode}: every block trimmed");
        }
    }
    // the pure trim modes: trims only
    let mut g = OpGen::new(&job(Mode::Rndtrim, 1), 1, 1 << 20, 0);
    for _ in 0..100 {
        assert!(matches!(
            g.next_op(),
            Next::Io {
                kind: OpKind::Trim,
                ..
            }
        ));
    }
}

/// `--bs-write`: reads and writes each of their own sizes, each on the grid of its own
/// smallest size (fio's per-direction `bs` and `blockalign` default), the statistics' sizes the
/// union of both.
#[test]
fn each_direction_draws_its_own_sizes_on_its_own_grid() {
    use crate::model::job::{BsDirs, BsSide};
    let mut j = job(Mode::Rndrw, 1);
    let side = |bs: &str| match bs.parse::<crate::model::job::BsArg>().unwrap() {
        crate::model::job::BsArg::Mix(m) => BsSide {
            bs_bytes: m.last().unwrap().bs_bytes,
            bs_mix: Some(m),
            bs_range: None,
        },
        crate::model::job::BsArg::One(b) => BsSide {
            bs_bytes: b,
            ..BsSide::default()
        },
        b => panic!("{b:?}"),
    };
    j.bs_dirs = Some(BsDirs {
        read: side("64k:40,1m:60"),
        write: side("1m"),
    });
    j.bs_bytes = 1 << 20;
    assert_eq!(j.bs_sizes(), [65536, 1 << 20]);
    let mut g = OpGen::new(&j, 2, 64 << 20, 0);
    let (mut reads, mut small) = (0, 0);
    for _ in 0..20_000 {
        let Next::Io {
            kind, off, len, si, ..
        } = g.next_op()
        else {
            panic!()
        };
        assert_eq!(len, j.bs_sizes()[si as usize]);
        assert!(off + len <= 64 << 20);
        match kind {
            OpKind::Read => {
                reads += 1;
                small += u64::from(len == 65536);
                assert_eq!(off % 65536, 0);
            }
            _ => {
                assert_eq!(len, 1 << 20, "every write 1 MiB");
                assert_eq!(off % (1 << 20), 0, "writes on the 1 MiB grid");
            }
        }
    }
    let share = small as f64 / reads as f64;
    assert!((share - 0.4).abs() < 0.03, "64 KiB reads: {share}");
}

/// `--block-align`: every random offset a multiple of it, the sizes as drawn (fio's
/// `blockalign`); no offset lets an I/O pass its file's end.
#[test]
fn block_align_aligns_every_random_offset() {
    let mut j = with_bs(Mode::Rndrd, "512:50,4k:50");
    j.block_align_bytes = 4096;
    let mut g = OpGen::new(&j, 1, 1 << 20, 0);
    let mut unaligned_len = 0;
    for _ in 0..10_000 {
        let Next::Io { off, len, .. } = g.next_op() else {
            panic!()
        };
        assert_eq!(off % 4096, 0);
        assert!(off + len <= 1 << 20);
        unaligned_len += u32::from(len == 512);
    }
    assert!(unaligned_len > 4000, "{unaligned_len} reads of 512 bytes");
}

#[test]
fn at_the_end_of_its_file_a_mix_draws_the_sizes_that_fit_as_fio() {
    // fio's get_next_buflen draws again until the size fits before the end of the file: a
    // 512/50:1M/50 split over a file of 4 MiB and 1.5 KiB ends in 512-byte I/Os (fio 3.33 on
    // 32 MiB: 2048 of them after the last 1 MiB that fits), then starts the file again
    let j = with_bs(Mode::Seqwr, "512:50,1m:50");
    let fsize = (4u64 << 20) + 3 * 512;
    let mut g = OpGen::new(&j, 1, fsize, 0);
    let (mut done, mut small_at_end) = (0u64, 0u64);
    while done < fsize {
        let Next::Io { off, len, .. } = g.next_op() else {
            panic!()
        };
        assert_eq!(off, done, "sequential, no wrap before the end");
        assert!(
            len == 512 || len == 1 << 20,
            "a size of the split, not {len}"
        );
        small_at_end += u64::from(fsize - done < 1 << 20 && len == 512);
        done += len;
    }
    assert_eq!(done, fsize, "the file exactly");
    assert!(small_at_end >= 3, "the end in 512-byte I/Os");
    let Next::Io { off, .. } = g.next_op() else {
        panic!()
    };
    assert_eq!(off, 0, "the next pass");
    // a quota below the smallest size: the last I/O trimmed to it
    let mut g = OpGen::new(&j, 1, fsize, 0);
    g.cap(100);
    let Next::Io { len, .. } = g.next_op() else {
        panic!()
    };
    assert_eq!(len, 100);
}

/// fio's strided zones: `size` bytes in each zone from its start (again from there past its
/// range), the next zone `range + skip` after its start, back to the range's start past its end.
#[test]
fn strided_zones_move_through_the_range_as_fios() {
    let zoned = |size: u64, range: u64, skip: u64| {
        let mut j = job(Mode::Seqrd, 1);
        j.bs_bytes = 4096;
        j.timing.zones = Some(Zones { size, range, skip });
        let mut g = OpGen::new(&j, 1, 64 << 10, 0);
        (0..10)
            .map(|_| match g.next_op() {
                Next::Io { off, .. } => off >> 10,
                Next::Fsync { .. } => panic!("no fsync"),
            })
            .collect::<Vec<u64>>()
    };
    // 8 KiB zones 16 KiB apart, then over again
    assert_eq!(
        zoned(8 << 10, 8 << 10, 8 << 10),
        [0, 4, 16, 20, 32, 36, 48, 52, 0, 4]
    );
    // a zone's 12 KiB in its 8 KiB range: back to its start for the third
    assert_eq!(
        zoned(12 << 10, 8 << 10, 4 << 10),
        [0, 4, 0, 12, 16, 12, 24, 28, 24, 36]
    );
    // fio's pass ends at the first I/O that does not fit: zones at 0 and 12 KiB of 18 KiB
    let z = Zones {
        size: 8 << 10,
        range: 8 << 10,
        skip: 4 << 10,
    };
    assert_eq!(zone_pass_ops(4096, 18 << 10, &z, 100), 3);
    // zones that fit: the limit; the next zone starting past the end starts over
    assert_eq!(zone_pass_ops(4096, 20 << 10, &z, 100), 100);
    assert_eq!(zone_pass_ops(4096, 60 << 20, &z, 1 << 20), 1 << 20);
    // 64 MiB: the zone at 65532 KiB has room for one of its two I/Os
    assert_eq!(zone_pass_ops(4096, 64 << 20, &z, 1 << 20), 5461 * 2 + 1);
}
