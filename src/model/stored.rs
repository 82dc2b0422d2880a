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
}

impl StoredDoc {
    /// The kind as the store names it.
    pub fn kind(&self) -> &'static str {
        match self {
            StoredDoc::Run(_) => "run",
            StoredDoc::Db(_) => "db",
            StoredDoc::Suite(_) => "suite",
            StoredDoc::Import(_) => "import",
            StoredDoc::Experiment(e) => match **e {
                Experiment::Sweep { .. } => "sweep",
                Experiment::Saturate { .. } => "saturate",
            },
        }
    }
}
