//! Every schema id iolab writes, in one place (docs/results.md; each document's JSON Schema is
//! `docs/schemas/NAME.json`, generated from the types by `crate::output::schemas` and written
//! and checked by `tests/schemas.rs`). A document kind changes its id's version when a field
//! changes meaning or goes away.

/// `iolab run`: one run (`model::run::RunDoc`).
pub const RUN: &str = "iolab-run/1";
/// `iolab run --repeat N --json`: the group's runs and their summary.
pub const REPEAT: &str = "iolab-repeat/1";
/// `iolab show gN --json`: a stored group's runs and summary.
pub const GROUP: &str = "iolab-group/1";
/// `iolab db` (`model::db::DbDoc`).
pub const DB: &str = "iolab-db/1";
/// `iolab env` (`model::env::EnvReport`), also embedded in every run.
pub const ENV: &str = "iolab-env/1";
/// `iolab check`: the findings about an environment.
pub const CHECK: &str = "iolab-check/1";
/// `iolab explain` and `run --explain`.
pub const EXPLAIN: &str = "iolab-explain/1";
/// `iolab compare`.
pub const COMPARE: &str = "iolab-compare/1";
/// `iolab list --json`.
pub const LIST: &str = "iolab-list/1";
/// `iolab export`.
pub const EXPORT: &str = "iolab-export/1";
/// `iolab store copy --json`.
pub const STORE_COPY: &str = "iolab-store-copy/1";
/// `iolab import`: metrics read from another tool's output (`model::import`).
pub const IMPORT: &str = "iolab-import/2";
/// `iolab iostat --json`: one line per interval.
pub const IOSTAT: &str = "iolab-iostat/1";
/// `iolab capture`: the capture file's first line (`model::capture::CaptureHeader`); its
/// records follow, one request per line (docs/capture.md).
pub const CAPTURE: &str = "iolab-capture/1";
/// `iolab capture --json`, and the capture file's last line (`model::capture::CaptureSummary`).
pub const CAPTURE_SUMMARY: &str = "iolab-capture-summary/1";
/// `iolab run --live`: one line per second.
pub const LIVE: &str = "iolab-live/1";
/// `iolab fsync-probe`.
pub const FSYNC_PROBE: &str = "iolab-fsync-probe/1";
/// `iolab sweep`.
pub const SWEEP: &str = "iolab-sweep/1";
/// `iolab saturate`.
pub const SATURATE: &str = "iolab-saturate/1";
/// `iolab iozone`.
pub const IOZONE: &str = "iolab-iozone/1";
/// `iolab bonnie`.
pub const BONNIE: &str = "iolab-bonnie/2";
/// `iolab zones`.
pub const ZONES: &str = "iolab-zones/2";
/// `iolab fingerprint`: a capture's distributions (`model::fingerprint::Fingerprint`).
pub const FINGERPRINT: &str = "iolab-fingerprint/1";
/// `iolab suite pts`.
pub const PTS: &str = "iolab-pts/1";
/// `iolab crashcheck verify`.
pub const CRASHCHECK: &str = "iolab-crashcheck/1";
/// `iolab verify` and `run --verify`'s result.
pub const VERIFY: &str = "iolab-verify/1";
/// The first line of a verify run's state file in `--dir`.
pub const VERIFY_STATE: &str = "iolab-verify-state/2";
/// The state schema of format 1 (blocks with CRC-32 headers): recognised, refused.
pub const VERIFY_STATE_V1: &str = "iolab-verify-state/1";
/// The crashcheck journal's protocol (HELLO's first word after `HELLO`). Version 2 ends every
/// line with ` mac=TAG`; version 1 journals (no tags) are refused by `verify`.
pub const CRASHCHECK_PROTOCOL: &str = "iolab-crashcheck/2";

/// Every document kind iolab writes, each with its JSON Schema (`crate::output::schemas`,
/// `docs/schemas/`). Not here: [`VERIFY_STATE_V1`] (a format only recognised, to refuse it) and
/// [`CRASHCHECK_PROTOCOL`] (the journal's line protocol, no JSON document).
pub const DOCUMENTS: &[&str] = &[
    RUN,
    REPEAT,
    GROUP,
    DB,
    ENV,
    CHECK,
    EXPLAIN,
    COMPARE,
    LIST,
    EXPORT,
    STORE_COPY,
    IMPORT,
    IOSTAT,
    CAPTURE,
    CAPTURE_SUMMARY,
    LIVE,
    FSYNC_PROBE,
    SWEEP,
    SATURATE,
    IOZONE,
    BONNIE,
    ZONES,
    PTS,
    FINGERPRINT,
    CRASHCHECK,
    VERIFY,
    VERIFY_STATE,
];

/// The file of a schema id under `docs/schemas/`: `iolab-run/1` is `iolab-run.1.json`.
pub fn file_name(id: &str) -> String {
    format!("{}.json", id.replace('/', "."))
}
