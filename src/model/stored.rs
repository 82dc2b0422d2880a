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
    Pts(crate::model::pts::PtsResult),
    Fingerprint(crate::model::fingerprint::Fingerprint),
}

impl SuiteDoc {
    pub fn name(&self) -> &'static str {
        match self {
            SuiteDoc::Iozone(_) => "iozone",
            SuiteDoc::Bonnie(_) => "bonnie",
            SuiteDoc::Zones(_) => "zones",
            SuiteDoc::Pts(_) => "pts",
            SuiteDoc::Fingerprint(_) => "fingerprint",
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

/// Defines a kind enum over the strings the store keeps in a `kind` column: each variant's string
/// written once, `as_str` and `parse` both from it, and a kind this iolab does not know (a store
/// another program wrote) kept as read, so it lists and fails exactly where it did as a string.
macro_rules! kinds {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vm])* $v,)*
            /// A kind this iolab does not know, as stored.
            Unknown(String),
        }

        impl $name {
            /// The kind as the store names it.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$v => $s,)*
                    $name::Unknown(s) => s,
                }
            }

            /// The kind a stored string names.
            pub fn parse(s: &str) -> $name {
                match s {
                    $($s => $name::$v,)*
                    other => $name::Unknown(other.to_string()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        /// Written as its string: the JSON Schema of a string.
        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                String::json_schema(g)
            }
        }
    };
}

kinds! {
    /// The kind of a stored run (`runs.kind`): which document a run row holds.
    RunKind {
        /// `iolab run`
        Run = "run",
        /// `iolab db`
        Db = "db",
        /// `iolab suite iozone|bonnie`, `iolab zones`
        Suite = "suite",
        /// `iolab import` of fio or sysbench output
        Import = "import",
        /// `iolab crashcheck write|verify`
        Crashcheck = "crashcheck",
        /// `iolab verify --dir`
        Verify = "verify",
    }
}

kinds! {
    /// The kind of a stored group (`groups.kind`).
    GroupKind {
        /// `iolab run --repeat N`: repetitions of one run
        Repeat = "run",
        /// `iolab sweep` (and `sysbench-fileio`)
        Sweep = "sweep",
        /// `iolab saturate`
        Saturate = "saturate",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_and_write_the_stored_strings() {
        for (s, k) in [
            ("run", RunKind::Run),
            ("db", RunKind::Db),
            ("suite", RunKind::Suite),
            ("import", RunKind::Import),
            ("crashcheck", RunKind::Crashcheck),
            ("verify", RunKind::Verify),
        ] {
            assert_eq!(RunKind::parse(s), k);
            assert_eq!(k.as_str(), s);
            assert_eq!(serde_json::to_value(&k).unwrap(), serde_json::json!(s));
        }
        for (s, k) in [
            ("run", GroupKind::Repeat),
            ("sweep", GroupKind::Sweep),
            ("saturate", GroupKind::Saturate),
        ] {
            assert_eq!(GroupKind::parse(s), k);
            assert_eq!(k.to_string(), s);
        }
        // a kind another program stored is kept as it was read
        let other = RunKind::parse("fio-bench");
        assert_eq!(other, RunKind::Unknown("fio-bench".into()));
        assert_eq!(
            serde_json::to_value(&other).unwrap(),
            serde_json::json!("fio-bench")
        );
        assert_eq!(GroupKind::parse("x").as_str(), "x");
    }
}
