//! The JSON Schema of every document kind iolab prints, by schema id (`docs/schemas/NAME.json`,
//! written and checked by `tests/schemas.rs`; the ids are `crate::model::schema`). Here, not in
//! `model`, because some documents are types of later stages (a comparison, a list's rows, the
//! fsync probe's report, explain's findings).
//!
//! Each schema is generated from the types with schemars in its serialize form (what iolab
//! writes: a field skipped when empty is optional, every other one required). A document whose
//! JSON is assembled where it is printed (`serde_json::json!`) has a shape here: a struct used for
//! its schema only, whose fields are the document's types, closed to other fields
//! (`deny_unknown_fields`) so that a field added there and not here fails the test that validates
//! what the command prints. Documents of model types are open to new fields.

use crate::model::schema as id;
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Value, json};

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
}

fn of<T: JsonSchema>() -> Value {
    generator().into_root_schema_for::<T>().to_value()
}

/// The JSON Schema of each document kind, by schema id; every id of
/// [`crate::model::schema::DOCUMENTS`] but those of [`WITHOUT_JSON_SCHEMA`].
pub fn json_schemas() -> Vec<(&'static str, Value)> {
    let mut all = generated();
    for (id, s) in &mut all {
        // titled by its id, and its `schema` field that id alone
        s["title"] = (*id).into();
        s["properties"]["schema"] = json!({"type": "string", "const": id});
    }
    all
}

fn generated() -> Vec<(&'static str, Value)> {
    use crate::model;
    vec![
        (id::RUN, run()),
        (id::REPEAT, of::<shape::Repeat>()),
        (id::GROUP, of::<shape::Group>()),
        (id::DB, of::<model::db::DbDoc>()),
        (id::ENV, of::<model::env::EnvReport>()),
        (id::CHECK, of::<shape::Check>()),
        (id::EXPLAIN, of::<crate::analysis::explain::Explanation>()),
        (id::COMPARE, of::<crate::store::compare::Comparison>()),
        (id::LIST, of::<shape::List>()),
        (id::EXPORT, of::<shape::Export>()),
        (id::STORE_COPY, of::<shape::StoreCopy>()),
        (id::IMPORT, of::<shape::Import>()),
        (id::IOSTAT, of::<shape::Iostat>()),
        (id::CAPTURE, of::<model::capture::CaptureHeader>()),
        (id::CAPTURE_SUMMARY, of::<model::capture::CaptureSummary>()),
        (id::LIVE, of::<crate::measure::export::LiveLine>()),
        (
            id::FSYNC_PROBE,
            of::<crate::system::fsyncprobe::ProbeReport>(),
        ),
        (id::SWEEP, of::<shape::Sweep>()),
        (id::SATURATE, of::<shape::Saturate>()),
        (
            id::IOZONE,
            of::<shape::WithSchema<model::suite::IozoneResult>>(),
        ),
        (
            id::BONNIE,
            of::<shape::WithSchema<model::suite::BonnieResult>>(),
        ),
        (
            id::ZONES,
            of::<shape::WithSchema<model::zones::ZonesResult>>(),
        ),
        (id::PTS, of::<shape::WithSchema<model::pts::PtsResult>>()),
        (
            id::FINGERPRINT,
            of::<shape::WithSchema<model::fingerprint::Fingerprint>>(),
        ),
        (id::CRASHCHECK, of::<model::crashcheck::CrashDoc>()),
        (id::VERIFY, of::<model::verify::VerifyDoc>()),
        (id::VERIFY_STATE, of::<model::verify::StateHead>()),
    ]
}

/// Document kinds without a JSON Schema, and why: none today.
pub const WITHOUT_JSON_SCHEMA: &[(&str, &str)] = &[];

/// `iolab-run/1` as `RunDoc::to_json` writes it: `RunDoc`'s fields without `runs`, and then
/// either one cell's fields at the top level (a `CellResult`: the top level's `warnings` and
/// `interrupted` are the run's, of the same types) or, with several cells, `runs[]` and a `job`
/// of the file set and the modes. `run --explain --json` adds `explain` (`iolab-explain/1`),
/// `run JOBFILE` adds `jobfile` (an object here: `cli::fiojob` builds it) and `--output-format
/// json+` adds `hist_bins` to each `results.<op>`.
fn run() -> Value {
    let mut g = generator();
    let cell = g
        .subschema_for::<crate::model::run::CellResult>()
        .to_value();
    let jobs = g.subschema_for::<shape::RunJobs>().to_value();
    let explain = g
        .subschema_for::<crate::analysis::explain::Explanation>()
        .to_value();
    let mut s = g
        .into_root_schema_for::<crate::model::run::RunDoc>()
        .to_value();

    s["properties"]["explain"] = explain;
    s["properties"]["jobfile"] = json!({
        "description": "`run JOBFILE...`: the job files, their jobs and phases (docs/fio-jobs.md).",
        "type": "object",
    });
    s["anyOf"] = json!([
        {
            "description": "One cell: in runs[], its fields at the top level too (before runs[] was always written, only there).",
            "allOf": [cell],
            "properties": {"runs": {"maxItems": 1}},
        },
        {
            "description": "Several cells: each in runs[]; job is their file set and modes.",
            "required": ["runs", "job"],
            "properties": {"job": jobs},
        },
    ]);
    s
}

/// The shapes of the documents assembled where they are printed (their schema only: never
/// built, hence `dead_code`).
#[allow(dead_code)]
mod shape {
    use crate::model::{experiment, job, lat, stored};
    use schemars::JsonSchema;
    use serde_json::{Map, Value};
    use std::collections::BTreeMap;

    /// `job` of a run document with several cells: the file set and the modes, in order.
    #[derive(JsonSchema)]
    pub struct RunJobs {
        #[serde(flatten)]
        fileset: job::FileSetSpec,
        modes: Vec<String>,
    }

    /// `iolab run --repeat N --json` (`output::history::RepeatDoc`): each run's document
    /// (`iolab-run/1`) when printed with them, and the summary.
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Repeat {
        schema: String,
        /// "g3"
        group: String,
        run_ids: Vec<i64>,
        /// The runs' documents (`iolab-run/1` each).
        runs: Vec<Map<String, Value>>,
        summary: Vec<crate::output::stored_views::SummaryRow>,
        /// `noisy_repetitions`: a mode and operation whose IOPS varied by more than 5 % (CV).
        warnings: Vec<crate::model::run::Warning>,
        /// `--explain`: the findings about the group's runs.
        #[serde(skip_serializing_if = "Option::is_none")]
        explain: Option<crate::analysis::explain::Explanation>,
    }

    /// `iolab show gN --json` of a group of runs (`output::shown`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Group {
        schema: String,
        group: String,
        run_ids: Vec<i64>,
        summary: Vec<crate::output::stored_views::SummaryRow>,
    }

    /// `iolab check --json` (`output::check::CheckDoc`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Check {
        schema: String,
        /// The path of the stack found under the path checked; null when none was.
        path: Option<String>,
        findings: Vec<crate::analysis::check::Finding>,
    }

    /// `iolab list --json` (`output::history::ListDoc`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct List {
        schema: String,
        runs: Vec<crate::store::RunRow>,
    }

    /// `iolab export --format json` (`output::history::export_json`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Export {
        schema: String,
        runs: Vec<ExportRun>,
    }

    /// One run of an export: its row, its cells in the one measurement shape, its document.
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExportRun {
        id: i64,
        group: Option<String>,
        group_id: Option<i64>,
        kind: String,
        tool: String,
        tool_version: String,
        label: Option<String>,
        tags: BTreeMap<String, String>,
        cells: Vec<stored::MeasuredCell>,
        /// The stored document in today's layout (its own `schema`).
        doc: Map<String, Value>,
    }

    /// `iolab store copy --json` (`commands::stored`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct StoreCopy {
        schema: String,
        from: String,
        to: String,
        copied: Vec<IdPair>,
        already: Vec<IdPair>,
    }

    /// A run's id in the source store and in the destination.
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct IdPair {
        from: i64,
        to: i64,
    }

    /// `iolab-import/2` (`model::import::Imported::to_doc`): cells with `results.<op>`.
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Import {
        schema: String,
        tool: String,
        tool_version: String,
        start_time: Option<String>,
        /// `tool`, `file_mtime` or `import` (`model::import::Imported::start_time_source`).
        start_time_source: Option<String>,
        source_file: String,
        options: Value,
        cells: Vec<ImportCell>,
    }

    /// One imported cell (`model::import::Cell` with its ops by name).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ImportCell {
        name: String,
        mode: String,
        threads: u32,
        iodepth: u32,
        bs_bytes: u64,
        direct: bool,
        engine: String,
        duration_s: f64,
        options: Value,
        /// By operation: "read", "write", "trim", "fsync", "events".
        results: BTreeMap<String, ImportOp>,
    }

    /// `model::import::OpSummary` without its `op` (the key it is under).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ImportOp {
        ops: u64,
        bytes: u64,
        iops: f64,
        bytes_per_sec: f64,
        lat_ns: Option<lat::ReportedLat>,
        hist_bins: Option<Vec<(u64, u64)>>,
    }

    /// `iolab iostat --json`: one line per interval (`output::document::IostatLine`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Iostat {
        schema: String,
        /// The wall-clock time of the interval's end.
        time: String,
        t_s: f64,
        interval_s: f64,
        cpu: crate::model::device::CpuPct,
        devices: BTreeMap<String, crate::model::device::Iostat>,
    }

    /// `iolab sweep --json` and `show gN --json` of a sweep (`output::document::SweepDoc`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Sweep {
        schema: String,
        group: String,
        axes: Vec<experiment::Axis>,
        metric: String,
        cells: Vec<experiment::CellOut>,
        /// Present when the sweep just ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        interrupted: Option<bool>,
    }

    /// `iolab saturate --json` and `show gN --json` of a search (`output::document::SaturateDoc`).
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Saturate {
        schema: String,
        group: String,
        spec: experiment::SaturateSpec,
        points: Vec<experiment::Point>,
        /// The highest value that passed; null when none did.
        last_pass: Option<u64>,
        /// The lowest value that failed; null when none did.
        first_fail: Option<u64>,
        /// Which way the target went: `met_below` (met up to the boundary, harder as the value
        /// grows), `met_above` (met from the boundary on, easier as it grows), `met_everywhere`,
        /// `missed_everywhere`; null when no point was measured.
        direction: Option<String>,
        /// The largest value that meets the target (`met_below`) or the smallest (`met_above`);
        /// null otherwise.
        boundary: Option<u64>,
        /// Present when the search just ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        interrupted: Option<bool>,
    }

    /// A suite's or zones' result with the `schema` its printer adds (`output::document`).
    #[derive(JsonSchema)]
    pub struct WithSchema<T> {
        schema: String,
        #[serde(flatten)]
        doc: T,
    }
}
