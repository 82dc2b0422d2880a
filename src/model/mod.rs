//! Document types: what iolab measures, stores and prints. Plain data with serde; nothing here
//! uses any other iolab module.

pub mod auth;
pub mod bs;
pub mod buffers;
pub mod caps;
pub mod capture;
pub mod crashcheck;
pub mod db;
pub mod device;
pub mod dist;
pub mod engines;
pub mod env;
pub mod experiment;
pub mod fingerprint;
pub mod fiologs;
pub mod hist;
pub mod import;
pub mod job;
pub mod lat;
pub mod mode;
pub mod noio;
pub mod placement;
pub mod pts;
pub mod replay;
pub mod run;
pub mod schema;
pub mod steady;
pub mod stored;
pub mod suite;
pub mod timing;
pub mod units;
pub mod verify;
pub mod zones;

/// Serde for a type written as its `Display` text and read back by its `FromStr` (`--buffers`,
/// `--cpus` in a job).
macro_rules! serde_as_text {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use serde_as_text;

/// A new document id (`doc_id` of a run, `iolab db` or `iolab verify` document): 128 random bits
/// as 32 hex digits, made with the document. The store saves a document id at most once, so a
/// document kept after exit 4 and saved again (by the next command, `iolab import`, `store copy`)
/// is never stored twice (docs/safety.md, section 4).
pub fn new_doc_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}
