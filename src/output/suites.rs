//! IOZone, Bonnie++ and zones results as their tools print them: IOZone's report table, its
//! `-R` "Excel" report and the `-b` sheet as CSV,
//! Bonnie++'s table and its CSV line (read by `bon_csv2txt` / `bon_csv2html`), the zones table.

use crate::model::suite::*;
use crate::model::units::{Bytes, human_bytes};
use crate::model::zones::*;
use crate::workloads::suites::*;
use std::collections::BTreeSet;

/// Column widths of iozone's table (kB, reclen, then the 13 tests).
const IOZONE_WIDTHS: [usize; 15] = [16, 8, 9, 9, 9, 9, 9, 9, 9, 10, 10, 9, 9, 9, 9];
const IOZONE_HEAD1: [&str; 15] = [
    "", "", "", "", "", "", "random", "random", "bkwd", "record", "stride", "", "", "", "",
];
const IOZONE_HEAD2: [&str; 15] = [
    "kB", "reclen", "write", "rewrite", "read", "reread", "read", "write", "read", "rewrite",
    "read", "fwrite", "frewrite", "fread", "freread",
];

/// iozone's own table: two header lines, then one line per pair, right-aligned, KB/s; a test that
/// was not run is blank.
pub fn iozone_table(r: &IozoneResult) -> String {
    let line = |cells: &mut dyn Iterator<Item = String>| -> String {
        let mut s = String::new();
        for (c, w) in cells.zip(IOZONE_WIDTHS) {
            s.push_str(&format!("{c:>w$}"));
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&mut IOZONE_HEAD1.iter().map(|s| s.to_string()));
    out += &line(&mut IOZONE_HEAD2.iter().map(|s| s.to_string()));
    for row in &r.rows {
        let mut cells = [row.file_kb, row.reclen_kb]
            .into_iter()
            .map(|v| v.to_string())
            .chain(
                (0..IOZONE_TESTS.len())
                    .map(|i| row.kb_per_sec.get(i).copied().flatten())
                    .map(|v| v.map(|v| v.to_string()).unwrap_or_default()),
            );
        out += &line(&mut cells);
    }
    out
}

/// The tests that ran at least once, as (column in [`IOZONE_TESTS`], report title).
fn iozone_reports_run(r: &IozoneResult) -> Vec<(usize, &'static str)> {
    IOZONE_REPORTS
        .iter()
        .enumerate()
        .filter(|(t, _)| {
            r.rows
                .iter()
                .any(|x| x.kb_per_sec.get(*t).copied().flatten().is_some())
        })
        .map(|(t, name)| (t, *name))
        .collect()
}

/// The sheet `iozone -b FILE` writes, as CSV, cell for cell: per test a title cell
/// `"Writer report"`, a row of record sizes (kB) after an empty corner cell, then one row per
/// file size (kB) with its figures (KB/s); blocks in iozone's order, separated by an empty line.
/// Where iozone packs a short row to the left (records skipped on large files), the cell of a
/// record size that was not run is left empty, so every figure stays under its record size.
/// A test that never ran (the stdio tests with `--direct`) has no block, as in iozone.
pub fn iozone_csv(r: &IozoneResult) -> String {
    let recs: BTreeSet<u64> = r.rows.iter().map(|x| x.reclen_kb).collect();
    let files: BTreeSet<u64> = r.rows.iter().map(|x| x.file_kb).collect();
    let mut blocks = Vec::with_capacity(IOZONE_REPORTS.len());
    for (t, name) in iozone_reports_run(r) {
        let mut b = format!("\"{name} report\"\n");
        for rec in &recs {
            b += &format!(",{rec}");
        }
        b.push('\n');
        for f in &files {
            b += &f.to_string();
            for rec in &recs {
                let v = r
                    .rows
                    .iter()
                    .find(|x| x.file_kb == *f && x.reclen_kb == *rec)
                    .and_then(|x| x.kb_per_sec.get(t).copied().flatten());
                b.push(',');
                if let Some(v) = v {
                    b += &v.to_string();
                }
            }
            b.push('\n');
        }
        blocks.push(b);
    }
    blocks.join("\n")
}

/// What `iozone -a -R` prints after its table, byte for byte in iozone's layout (its
/// `dump_excel`/`dump_report`): `iozone test complete.`, `Excel output is below:`, then per test
/// an empty line, `"Writer report"`, the record sizes (`  "4"  "8"` after six spaces) and one
/// line per file size (`"64"  ` then ` VALUE ` per record size run). Like iozone, a file size's
/// line lists only the records that ran, from the left; the scripts that read iozone's report
/// (a regex for `"(.+) report"`, then quoted numbers and whitespace-separated values) read it.
pub fn iozone_excel(r: &IozoneResult) -> String {
    let recs: BTreeSet<u64> = r.rows.iter().map(|x| x.reclen_kb).collect();
    let mut out = String::from("\niozone test complete.\nExcel output is below:\n");
    for (t, name) in iozone_reports_run(r) {
        out += &format!("\n\"{name} report\"\n      ");
        for rec in &recs {
            out += &format!("  \"{rec}\"");
        }
        out.push('\n');
        let mut current: Option<u64> = None;
        for row in &r.rows {
            let Some(v) = row.kb_per_sec.get(t).copied().flatten() else {
                continue;
            };
            if current != Some(row.file_kb) {
                if current.is_some() {
                    out.push('\n');
                }
                out += &format!("\"{}\"  ", row.file_kb);
                current = Some(row.file_kb);
            }
            out += &format!(" {v} ");
        }
        out.push('\n');
    }
    out
}

/// bonnie++'s size notation: whole GiB as `4G`, else MiB as `512M` (KiB as `64k` below 1 MiB).
fn bonnie_size(b: u64) -> String {
    if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
        format!("{}G", b >> 30)
    } else if b >= 1 << 20 {
        format!("{}M", b >> 20)
    } else {
        format!("{}k", b >> 10)
    }
}

/// bonnie++'s latency notation: µs below 100 ms (`8631us`), ms below 100 s (`184ms`), else s.
pub fn bonnie_latency(us: u64) -> String {
    if us < 100_000 {
        format!("{us}us")
    } else if us < 100_000_000 {
        format!("{}ms", us / 1000)
    } else {
        format!("{}s", us / 1_000_000)
    }
}

/// (rate, %CP) as bonnie++ prints them: blank when not run, `+++++`/`+++` when too fast; seeks
/// with one decimal below 1000/s.
fn bonnie_cells(s: &Option<BonnieStat>, seeks: bool) -> (String, String) {
    match s {
        None => (String::new(), String::new()),
        Some(BonnieStat {
            value: Some(v),
            cpu_pct,
            ..
        }) => {
            let v = if seeks && *v < 1000.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            };
            (v, format!("{:.0}", cpu_pct.unwrap_or(0.0)))
        }
        Some(_) => ("+++++".into(), "+++".into()),
    }
}

fn bonnie_lat(s: &Option<BonnieStat>) -> String {
    s.as_ref()
        .map(|s| bonnie_latency(s.max_latency_ns / 1000))
        .unwrap_or_default()
}

/// A 19-character left column, then ` value cpu` cells of 10 characters.
fn bonnie_row(label: &str, cells: &[(String, String)]) -> String {
    let mut s = format!("{label:<19}");
    for (v, c) in cells {
        s += &format!(" {v:>5} {c:>3}");
    }
    s.trim_end().to_string() + "\n"
}

fn bonnie_latency_row(lats: &[String]) -> String {
    let mut s = format!("{:<19}", "Latency");
    for l in lats {
        s += &format!(" {l:>9}");
    }
    s.trim_end().to_string() + "\n"
}

/// The report bonnie++ prints for people: the data block (Sequential Output / Input, Random
/// Seeks), then the file block (Sequential Create / Random Create), each with its Latency line.
/// A block whose tests were not run is left out. Warnings follow, one `warning:` line each.
pub fn bonnie_table(r: &BonnieResult) -> String {
    let version = format!("Version {:<11}", r.version);
    let mut out = String::new();
    if r.file_size_bytes > 0 {
        let size = bonnie_size(r.file_size_bytes);
        let size = if r.chunk_bytes != BONNIE_DEFAULT_CHUNK {
            format!("{size}:{}k", r.chunk_bytes / 1024)
        } else {
            size
        };
        let room = 19usize.saturating_sub(size.len() + 1).max(1);
        let machine: String = r.machine.chars().take(room).collect();
        out += &format!("{version} ------Sequential Output------ --Sequential Input- --Random-\n");
        out += &format!(
            "{:<19} -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n",
            format!("Concurrency {:>3}", r.concurrency)
        );
        out += "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP\n";
        let cells: Vec<_> = r
            .data_tests()
            .iter()
            .map(|(s, seeks)| bonnie_cells(s, *seeks))
            .collect();
        let label = format!("{machine:<w$}{size:>s$}", w = room, s = 19 - room);
        out += &bonnie_row(&label, &cells);
        let lats: Vec<String> = r.data_tests().iter().map(|(s, _)| bonnie_lat(s)).collect();
        out += &bonnie_latency_row(&lats);
    }
    if r.files > 0 {
        let machine: String = r.machine.chars().take(19).collect();
        out += &format!("{version} ------Sequential Create------ --------Random Create--------\n");
        out +=
            &format!("{machine:<19} -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n");
        out += "              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n";
        let cells: Vec<_> = r
            .file_tests()
            .iter()
            .map(|s| bonnie_cells(s, false))
            .collect();
        out += &bonnie_row(&format!("{:>19}", r.files), &cells);
        let lats: Vec<String> = r.file_tests().iter().map(|s| bonnie_lat(s)).collect();
        out += &bonnie_latency_row(&lats);
    }
    for w in &r.warnings {
        out += &format!("warning: {}\n", w.message);
    }
    out
}

/// The CSV line of bonnie++ 1.98/2.00 (50 fields, see [`BONNIE_CSV_FIELDS`]), newline-terminated,
/// so that `bon_csv2txt` and `bon_csv2html` put every figure in its column.
/// `bonnie_version` is `iolab-<version>`; tests not run are empty, too fast ones `+++++,+++`;
/// `io_chunk_size` is empty for the default 8 KiB (bonnie++ 2.00a leaves it empty always);
/// `num_seeks` and `seek_proc_count` are what ran (empty, like the size, without data tests);
/// `max_size`, `min_size`, `num_dirs` and `file_chunk_size` are empty (empty files in one
/// directory, bonnie++'s default).
pub fn bonnie_csv(r: &BonnieResult) -> String {
    let data = r.file_size_bytes > 0;
    let mut f: Vec<String> = vec![
        BONNIE_CSV_FORMAT.into(),
        r.version.clone(),
        r.machine.replace(',', "_"),
        r.concurrency.to_string(),
        r.seed.to_string(),
        if data {
            bonnie_size(r.file_size_bytes)
        } else {
            String::new()
        },
        if data && r.chunk_bytes != BONNIE_DEFAULT_CHUNK {
            bonnie_size(r.chunk_bytes)
        } else {
            String::new()
        },
        if data {
            r.seeks_asked().to_string()
        } else {
            String::new()
        },
        if data {
            r.seekers().to_string()
        } else {
            String::new()
        },
    ];
    for (s, seeks) in r.data_tests() {
        let (v, c) = bonnie_cells(s, seeks);
        f.push(v);
        f.push(c);
    }
    f.push(if r.files > 0 {
        r.files.to_string()
    } else {
        String::new()
    });
    f.extend(std::iter::repeat_n(String::new(), 4));
    for s in r.file_tests() {
        let (v, c) = bonnie_cells(s, false);
        f.push(v);
        f.push(c);
    }
    for (s, _) in r.data_tests() {
        f.push(bonnie_lat(s));
    }
    for s in r.file_tests() {
        f.push(bonnie_lat(s));
    }
    debug_assert_eq!(f.len(), BONNIE_CSV_FIELDS.len());
    f.join(",") + "\n"
}

/// A header line, one table row per zone, the first/last ratio and the notes.
pub fn zones_table(r: &ZonesResult) -> String {
    use comfy_table::{CellAlignment, Table};
    let mut out = format!(
        "{} ({}, {}): {} zones of {} read in {} blocks, {}\n",
        r.target,
        r.kind,
        human_bytes(r.size_bytes as f64),
        r.zones.len(),
        Bytes(r.per_zone_bytes),
        Bytes(r.bs_bytes),
        if r.direct { "O_DIRECT" } else { "buffered" }
    );
    let mut t = Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec!["zone", "offset", "offset %", "MiB/s", "mean lat ms"]);
    for z in &r.zones {
        t.add_row(vec![
            z.index.to_string(),
            human_bytes(z.offset_bytes as f64),
            format!("{:.1}", z.offset_pct),
            format!("{:.1}", z.mib_per_sec),
            format!("{:.3}", z.lat_ms_mean),
        ]);
    }
    for i in [0, 2, 3, 4] {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    out += &t.to_string();
    out.push('\n');
    if let Some(x) = r.first_last_ratio {
        out += &format!(
            "first/last zone: {x:.2}x (outer vs inner tracks: a rotating disk reads its first zones faster, typically 1.5-2x; an SSD is flat)\n"
        );
    }
    if r.interrupted {
        out += "interrupted: only the zones above were read\n";
    }
    for n in &r.notes {
        out += &format!("note: {n}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bonnie_notations() {
        assert_eq!(bonnie_latency(8631), "8631us");
        assert_eq!(bonnie_latency(99_999), "99999us");
        assert_eq!(bonnie_latency(184_000), "184ms");
        assert_eq!(bonnie_latency(200_000_000), "200s");
        assert_eq!(bonnie_size(4 << 30), "4G");
        assert_eq!(bonnie_size(8196 << 20), "8196M");
        assert_eq!(bonnie_size(8 << 20), "8M");
    }
}
