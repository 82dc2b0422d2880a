//! Results imported from other tools (fio JSON / json+, sysbench fileio text), normalized.

use serde::{Deserialize, Serialize};

pub use crate::model::lat::ReportedLat;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct OpSummary {
    /// "read", "write", "trim" (fio), "fsync", or "events" (sysbench's latency covers all
    /// operations together)
    pub op: String,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub lat_ns: Option<ReportedLat>,
    /// Latency histogram rebuilt from fio json+ `clat_ns.bins` / `lat_ns.bins` (value_ns -> count), when present.
    /// Serialized as a list of [value_ns, count] pairs; None otherwise.
    pub hist_bins: Option<Vec<(u64, u64)>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Cell {
    /// The tool's job name (fio job name; "fileio" for sysbench)
    pub name: String,
    /// iolab mode name when it maps (seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw), else the tool's own (e.g. fio "trim")
    pub mode: String,
    pub threads: u32,
    pub iodepth: u32,
    pub bs_bytes: u64,
    pub direct: bool,
    /// engine as the tool names it ("psync", "io_uring", "libaio", "sync" for sysbench's synchronous mode, "mmap" ...)
    pub engine: String,
    pub duration_s: f64,
    pub ops: Vec<OpSummary>,
    /// the job's own options as the tool printed them (fio: job options merged over global options; sysbench: the "Running the test with following options" block as key/value strings)
    pub options: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Imported {
    /// "fio" or "sysbench"
    pub tool: String,
    /// e.g. "fio-3.33", "1.0.20"
    pub tool_version: String,
    /// RFC 3339 when the tool recorded it (fio "time"/"timestamp"), else what
    /// [`Imported::date_from_file`] made of the file's time, else None (the time of import)
    pub start_time: Option<String>,
    /// Where `start_time` came from: `tool` (the tool printed it), `file_mtime` (the file's
    /// modification time, when the tool finished writing it, less the run's duration) or
    /// `import` (neither: the time of import); None in documents of an iolab before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time_source: Option<String>,
    /// fio "global options"; sysbench: same as the cell options
    pub options: serde_json::Value,
    pub cells: Vec<Cell>,
}

/// Schema of the stored import document: `cells[].results.<op>`, the shape of every other stored
/// measurement (docs/results.md). `iolab-import/1` (`cells[].ops[]`) is still read.
/// The order ops are listed in when a document names them by key.
const OP_ORDER: [&str; 5] = ["read", "write", "trim", "fsync", "events"];

impl Imported {
    /// The run's own time where the tool printed none (sysbench): the file was last written
    /// when the tool ended, so the run started its longest cell's duration before that. From
    /// stdin (`modified` None) the time stays the import's, and the source says so.
    pub fn date_from_file(&mut self, modified: Option<std::time::SystemTime>) {
        if self.start_time.is_some() {
            self.start_time_source = Some("tool".into());
            return;
        }
        let longest = self.cells.iter().map(|c| c.duration_s).fold(0.0, f64::max);
        let start = modified.and_then(|m| {
            let d = std::time::Duration::try_from_secs_f64(longest).ok()?;
            m.checked_sub(d)
        });
        match start {
            Some(t) => {
                let t: chrono::DateTime<chrono::Utc> = t.into();
                self.start_time = Some(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
                self.start_time_source = Some("file_mtime".into());
            }
            None => self.start_time_source = Some("import".into()),
        }
    }

    /// The stored document: `schema`, the tool, `source_file`, and `cells[]` each with
    /// `results.<op>.{ops, bytes, iops, bytes_per_sec, lat_ns, hist_bins}`.
    pub fn to_doc(&self, source_file: &str) -> serde_json::Value {
        let cells: Vec<serde_json::Value> = self
            .cells
            .iter()
            .map(|c| {
                let mut results = serde_json::Map::new();
                for o in &c.ops {
                    let mut v = serde_json::to_value(o).unwrap_or_default();
                    if let Some(m) = v.as_object_mut() {
                        m.remove("op");
                    }
                    results.insert(o.op.clone(), v);
                }
                serde_json::json!({
                    "name": c.name, "mode": c.mode, "threads": c.threads, "iodepth": c.iodepth,
                    "bs_bytes": c.bs_bytes, "direct": c.direct, "engine": c.engine,
                    "duration_s": c.duration_s, "options": c.options, "results": results,
                })
            })
            .collect();
        serde_json::json!({
            "schema": crate::model::schema::IMPORT, "tool": self.tool, "tool_version": self.tool_version,
            "start_time": self.start_time, "start_time_source": self.start_time_source,
            "source_file": source_file, "options": self.options, "cells": cells,
        })
    }

    /// Reads a stored import document of either schema (`iolab-import/2` with
    /// `cells[].results.<op>`, or `iolab-import/1` with `cells[].ops[]`).
    pub fn from_doc(doc: &serde_json::Value) -> Result<Imported, serde_json::Error> {
        let mut doc = doc.clone();
        if let Some(cells) = doc.get_mut("cells").and_then(|c| c.as_array_mut()) {
            for c in cells {
                let Some(obj) = c.as_object_mut() else {
                    continue;
                };
                let Some(results) = obj.remove("results") else {
                    continue; // iolab-import/1: already `ops[]`
                };
                let mut ops: Vec<(usize, serde_json::Value)> = Vec::new();
                if let serde_json::Value::Object(m) = results {
                    for (name, mut v) in m {
                        if let Some(o) = v.as_object_mut() {
                            o.insert("op".into(), name.clone().into());
                        }
                        let rank = OP_ORDER
                            .iter()
                            .position(|x| *x == name)
                            .unwrap_or(OP_ORDER.len());
                        ops.push((rank, v));
                    }
                }
                ops.sort_by_key(|(r, _)| *r);
                obj.insert(
                    "ops".into(),
                    ops.into_iter().map(|(_, v)| v).collect::<Vec<_>>().into(),
                );
            }
        }
        serde_json::from_value(doc)
    }
}
