//! What `--verify` costs per block, without any I/O: the time to stamp a block (payload XOR pass,
//! header, CRC-32C) before a write and to check one after a read, against the checksums alone.
//! bench/verify-overhead.sh prints it beside the IOPS it measures, so the cost of `--verify` per
//! operation can be set against the checksum's (docs/verify.md, "What it costs").
//!
//! `cargo run --release --example checksum-speed [BLOCK_BYTES] [MIB]` (default 4096, 2048 MiB).

use iolab::model::verify::{Header, check, crc_of, stamp};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let bs: usize = args
        .next()
        .map_or(4096, |a| a.parse().expect("BLOCK_BYTES"));
    let mib: usize = args.next().map_or(2048, |a| a.parse().expect("MIB"));
    let n = (mib << 20) / bs;
    let base: Vec<u8> = (0..bs).map(|i| (i.wrapping_mul(131) % 251) as u8).collect();
    let mut block = vec![0u8; bs];
    let h = |i: usize| Header {
        run_id: 0x1234_5678,
        file: 0,
        offset_bytes: (i * bs) as u64,
        generation: 1,
        thread: 0,
    };
    let report = |what: &str, secs: f64| {
        println!(
            "{what:<28} {:>7.1} ns per {bs}-byte block, {:>6.2} GB/s",
            secs * 1e9 / n as f64,
            (n * bs) as f64 / secs / 1e9
        );
    };
    println!(
        "{n} blocks of {bs} bytes ({mib} MiB), one thread, CRC-32C via the crc32c crate (hardware: {})",
        if cfg!(target_arch = "x86_64") && std::is_x86_feature_detected!("sse4.2") {
            "SSE4.2"
        } else {
            "see the crate"
        }
    );
    let t = Instant::now();
    for i in 0..n {
        stamp(black_box(&mut block), &base, &h(i % 1024));
    }
    report("stamp (write: XOR + CRC-32C)", t.elapsed().as_secs_f64());
    stamp(&mut block, &base, &h(7));
    let t = Instant::now();
    let mut ok = 0u64;
    for _ in 0..n {
        ok += u64::from(check(black_box(&block), &h(7)).is_ok());
    }
    assert_eq!(ok, n as u64);
    report("check (read: CRC-32C)", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let mut x = 0u32;
    for _ in 0..n {
        x ^= crc_of(black_box(&block));
    }
    black_box(x);
    report("CRC-32C alone", t.elapsed().as_secs_f64());
    let t = Instant::now();
    for _ in 0..n {
        x ^= crc32fast::hash(black_box(&block));
    }
    black_box(x);
    report("CRC-32 (crc32fast, format 1)", t.elapsed().as_secs_f64());
}
