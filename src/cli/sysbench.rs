//! `iolab suite sysbench-fileio`: sysbench fileio's options translated into the sweep that runs
//! its classic matrix (as `cli::fiojob` translates a fio job file into run options): 64 files of
//! 1/4/16 GiB (divided by `--scale`), 1/4/8 threads, 16 KiB O_DIRECT I/O, its six modes.

use crate::cli::{RunParser, SbFileioArgs};
use crate::error::{Error, Result};
use crate::workloads::sweep::{self, Axis, SweepSpec};

/// The sweep `iolab suite sysbench-fileio` runs, its cells checked (modes, sizes, space) before
/// anything is made.
pub fn sysbench_fileio_sweep(a: &SbFileioArgs) -> Result<SweepSpec> {
    let gib = 1u64 << 30;
    let sizes: Vec<String> = [1, 4, 16]
        .iter()
        .map(|g| crate::model::units::Bytes(g * gib / a.scale / (1 << 20) * (1 << 20)).to_string())
        .collect();
    let backlog = a.file_async_backlog.to_string();
    let engine: &[&str] = match a.file_io_mode.as_deref() {
        None => &["--engine", &a.engine],
        Some("sync") => &["--engine", "sync"],
        Some("async") => &["--engine", "libaio", "--iodepth", &backlog],
        Some(m) => {
            return Err(Error::usage(format!(
                "--file-io-mode: '{m}' is not offered; use sync or async (the suite runs O_DIRECT, which sysbench's mmap mode bypasses)"
            )));
        }
    };
    let fixed: Vec<String> = [
        "--dir",
        &a.dir.display().to_string(),
        "--files",
        "64",
        "--bs",
        "16k",
        "--direct",
        "--time",
        &a.time.to_string(),
    ]
    .iter()
    .chain(engine)
    .map(|s| s.to_string())
    .chain(
        a.label
            .label
            .iter()
            .flat_map(|l| ["--label".to_string(), l.clone()]),
    )
    .chain(a.reprepare.then(|| "--reprepare".to_string()))
    .collect();
    let axes = vec![
        Axis {
            name: "size".into(),
            values: sizes,
        },
        Axis {
            name: "threads".into(),
            values: vec!["1".into(), "4".into(), "8".into()],
        },
        Axis {
            name: "mode".into(),
            values: ["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        },
    ];
    sweep::check_cells(&RunParser, &fixed, &axes)?;
    Ok(SweepSpec {
        fixed,
        axes,
        repeat: a.repeat.max(1),
        rows: Some("threads".into()),
        cols: Some("mode".into()),
        metric: "iops".into(),
    })
}
