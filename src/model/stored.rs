//! A stored document by kind: what `show`, `report`, `plot` and `export` dispatch on, instead of
//! the kind strings the store keeps in its `runs.kind` and `groups.kind` columns.

use crate::model::db::DbDoc;
use crate::model::experiment::{CellOut, Point, SaturateSpec, SweepSpec};
use crate::model::import::Imported;
use crate::model::run::RunDoc;
use crate::model::suite::{BonnieResult, IozoneResult};
use crate::model::zones::ZonesResult;

/// The result of a suite run (stored with kind `suite`).
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // read once per `show`; boxing buys nothing
pub enum SuiteDoc {
    Iozone(IozoneResult),
    Bonnie(BonnieResult),
    Zones(ZonesResult),
}

impl SuiteDoc {
    pub fn name(&self) -> &'static str {
        match self {
            SuiteDoc::Iozone(_) => "iozone",
            SuiteDoc::Bonnie(_) => "bonnie",
            SuiteDoc::Zones(_) => "zones",
        }
    }
}

/// An experiment (a group of runs with a definition).
#[derive(Debug, Clone)]
pub enum Experiment {
    Sweep {
        spec: SweepSpec,
        cells: Vec<CellOut>,
    },
    Saturate {
        spec: SaturateSpec,
        points: Vec<Point>,
    },
}

/// One stored document, read and typed once.
#[derive(Debug, Clone)]
pub enum StoredDoc {
    /// `iolab run` (kind `run`)
    Run(Box<RunDoc>),
    /// `iolab db` (kind `db`)
    Db(Box<DbDoc>),
    /// `iolab suite iozone|bonnie`, `iolab zones` (kind `suite`)
    Suite(Box<SuiteDoc>),
    /// `iolab import` of fio or sysbench output (kind `import`)
    Import(Box<Imported>),
    /// `iolab sweep` / `iolab saturate` (a group of kind `sweep` / `saturate`)
    Experiment(Box<Experiment>),
    /// `iolab crashcheck write|verify` (kind `crashcheck`)
    Crashcheck(Box<crate::model::crashcheck::CrashDoc>),
    /// `iolab verify --dir` (kind `verify`)
    Verify(Box<crate::model::verify::VerifyDoc>),
}

impl StoredDoc {
    /// The kind as the store names it.
    pub fn kind(&self) -> &'static str {
        match self {
            StoredDoc::Run(_) => "run",
            StoredDoc::Db(_) => "db",
            StoredDoc::Suite(_) => "suite",
            StoredDoc::Import(_) => "import",
            StoredDoc::Crashcheck(_) => "crashcheck",
            StoredDoc::Verify(_) => "verify",
            StoredDoc::Experiment(e) => match **e {
                Experiment::Sweep { .. } => "sweep",
                Experiment::Saturate { .. } => "saturate",
            },
        }
    }
}

/// One operation type of a measured cell, the same for every stored kind:
/// `results.<op>.{ops, bytes, iops, bytes_per_sec, lat_ns}` (docs/results.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct OpMeasure {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// in ns; a field is null where the tool did not report it
    pub lat_ns: crate::model::lat::ReportedLat,
}

/// One measured cell of any stored kind (a mode of a run, a job of an import, a transaction type
/// of a db run, an IOZone file×record×test, a Bonnie++ test, a zone).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct MeasuredCell {
    pub cell: i64,
    pub mode: String,
    /// The role of a run with concurrent roles (`iolab run --role`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub threads: Option<i64>,
    pub bs_bytes: Option<i64>,
    pub results: std::collections::BTreeMap<String, OpMeasure>,
}
