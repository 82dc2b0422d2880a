//! The documents iolab prints, behind one trait: their JSON and their text (the resolver from a
//! stored reference to what `show`, `report` and `plot` present is `crate::output::shown`).

use crate::error::Result;
use crate::model::db::DbDoc;
use crate::model::env::EnvReport;
use crate::model::experiment::{CellOut, Point, SaturateSpec, SweepSpec};
use crate::model::run::RunDoc;
use crate::model::suite::{BonnieResult, IozoneResult};
use crate::model::zones::ZonesResult;
use crate::system::fsyncprobe::ProbeReport;
use serde_json::{Value, json};

/// A document a command prints, in the format the user asked for (`crate::output::export`: the
/// exporters write it from these forms).
pub trait Document {
    /// The JSON document (with its `schema` field, `crate::model::schema`; docs/results.md).
    fn json(&self) -> Value;
    /// The text a person reads (a list reads the store as it renders, so this can fail).
    fn text(&self) -> Result<String>;
    /// fio's JSON shape, for the kinds that have one (a run).
    fn fio_json(&self) -> Option<Value> {
        None
    }
}

/// A document's serde form as JSON.
pub fn to_json(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Documents whose JSON is their serde form and whose text is one render function.
macro_rules! document {
    ($($ty:ty => $render:path,)*) => {
        $(impl Document for $ty {
            fn json(&self) -> Value {
                to_json(self)
            }
            fn text(&self) -> Result<String> {
                Ok($render(self))
            }
        })*
    };
}

document! {
    crate::model::capture::CaptureSummary => crate::output::capture::render,
    crate::model::crashcheck::CrashDoc => crate::output::crashcheck::render,
    DbDoc => crate::output::db::render,
    EnvReport => crate::output::env::render,
    ProbeReport => crate::system::fsyncprobe::render,
    crate::model::verify::VerifyDoc => crate::output::crashcheck::render_verify,
}

impl Document for RunDoc {
    fn json(&self) -> Value {
        self.to_json()
    }
    fn text(&self) -> Result<String> {
        Ok(crate::output::table::render(self))
    }
}

/// The serde form of a document with its `schema` at the top level. The suite and zones
/// models have no field for it (documents stored without one read the same), so it is added here,
/// the one place their JSON is made.
fn with_schema(v: &impl serde::Serialize, schema: &str) -> Value {
    let mut v = to_json(v);
    if let Value::Object(m) = &mut v {
        m.insert("schema".into(), schema.into());
    }
    v
}

impl Document for IozoneResult {
    fn json(&self) -> Value {
        with_schema(self, crate::model::schema::IOZONE)
    }
    fn text(&self) -> Result<String> {
        // iozone -a -R: the table, then the "Excel" report
        Ok(crate::output::suites::iozone_table(self) + &crate::output::suites::iozone_excel(self))
    }
}

impl Document for crate::model::fingerprint::Fingerprint {
    fn json(&self) -> Value {
        with_schema(self, crate::model::schema::FINGERPRINT)
    }
    fn text(&self) -> Result<String> {
        Ok(crate::output::capture::fingerprint_text(self))
    }
}

impl Document for crate::model::pts::PtsResult {
    fn json(&self) -> Value {
        with_schema(self, crate::model::schema::PTS)
    }
    fn text(&self) -> Result<String> {
        Ok(crate::output::pts::pts_text(self))
    }
}

impl Document for ZonesResult {
    fn json(&self) -> Value {
        with_schema(self, crate::model::schema::ZONES)
    }
    fn text(&self) -> Result<String> {
        Ok(crate::output::suites::zones_table(self))
    }
}

impl Document for BonnieResult {
    fn json(&self) -> Value {
        with_schema(self, crate::model::schema::BONNIE)
    }
    fn text(&self) -> Result<String> {
        let mut s = crate::output::suites::bonnie_table(self);
        s.push_str(&crate::output::suites::bonnie_csv(self));
        Ok(s)
    }
}

/// A finished or stored sweep (`iolab-sweep/1`).
pub struct SweepDoc<'a> {
    pub gid: i64,
    pub spec: &'a SweepSpec,
    pub cells: &'a [CellOut],
    /// Some when the sweep just ran (stored sweeps do not say).
    pub interrupted: Option<bool>,
}

impl Document for SweepDoc<'_> {
    fn json(&self) -> Value {
        let mut v = json!({"schema": crate::model::schema::SWEEP, "group": format!("g{}", self.gid), "axes": self.spec.axes, "metric": self.spec.metric, "cells": self.cells});
        if let Some(i) = self.interrupted {
            v["interrupted"] = i.into();
        }
        v
    }
    fn text(&self) -> Result<String> {
        Ok(crate::output::experiment::render_matrix(
            self.spec, self.cells,
        ))
    }
}

/// A finished or stored saturation search (`iolab-saturate/1`).
pub struct SaturateDoc<'a> {
    pub gid: i64,
    pub spec: &'a SaturateSpec,
    pub points: &'a [Point],
    /// Some when the search just ran.
    pub interrupted: Option<bool>,
}

impl Document for SaturateDoc<'_> {
    fn json(&self) -> Value {
        let last_pass = self
            .points
            .iter()
            .filter(|p| p.passed)
            .map(|p| p.value)
            .max();
        let first_fail = self
            .points
            .iter()
            .filter(|p| !p.passed)
            .map(|p| p.value)
            .min();
        let outcome = crate::workloads::sweep::outcome(self.points);
        let mut v = json!({"schema": crate::model::schema::SATURATE, "group": format!("g{}", self.gid), "spec": self.spec, "points": self.points, "last_pass": last_pass, "first_fail": first_fail, "direction": outcome.name(), "boundary": outcome.boundary()});
        if let Some(i) = self.interrupted {
            v["interrupted"] = i.into();
        }
        v
    }
    fn text(&self) -> Result<String> {
        let mut t = crate::output::experiment::render_saturate(self.spec, self.points);
        if self.interrupted == Some(true) {
            t.push_str(
                "stopped before the search ended: the verdict covers the points above only\n",
            );
        }
        Ok(t)
    }
}

/// One interval of `iolab iostat` (`iolab-iostat/1`).
pub struct IostatLine<'a> {
    pub time: &'a str,
    pub sample: &'a crate::measure::iostat::Sample,
    pub devices: &'a [String],
}

impl crate::output::document::Document for IostatLine<'_> {
    fn json(&self) -> serde_json::Value {
        let s = self.sample;
        serde_json::json!({"schema": crate::model::schema::IOSTAT, "time": self.time, "t_s": s.t_s, "interval_s": s.dur_s, "cpu": s.cpu, "devices": s.devices})
    }
    fn text(&self) -> Result<String> {
        Ok(crate::output::table::iostat_text(
            self.time,
            self.sample,
            self.devices,
        ))
    }
}
