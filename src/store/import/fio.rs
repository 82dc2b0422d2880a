//! fio JSON and json+ output (`--output-format=json` / `json+`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::spec::{fio_options, fio_vocab};

use super::*;

mod clones;
use clones::merge_clones;

// ---------------------------------------------------------------------------------------------
// fio
// ---------------------------------------------------------------------------------------------

pub(super) fn fio_err(path: &str, msg: impl Into<String>) -> ImportError {
    ImportError::Fio {
        path: path.to_string(),
        msg: msg.into(),
    }
}

/// `parent` + `.key`, or `["key"]` when the key is not a plain identifier ("job options").
pub(super) fn key_path(parent: &str, key: &str) -> String {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{key:?}]"),
    }
}

/// Byte offset where the JSON document starts: the first line that begins with '{' (fio may
/// print "note: ..." warnings or job description lines first), else the first '{' at all.
pub(super) fn json_start(text: &str) -> Option<usize> {
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(off + line.find('{').unwrap_or(0));
        }
        off += line.len();
    }
    text.find('{')
}

/// Reads the first JSON value at `start` (text after it, e.g. trailing warnings, is ignored).
/// Errors carry line/column numbers of the whole input.
pub(super) fn read_json(text: &str, start: usize) -> Result<Value, ImportError> {
    let skipped_lines = text[..start].matches('\n').count();
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let base = full.strip_suffix(&suffix).unwrap_or(&full);
            let line = e.line() + skipped_lines;
            let column = if e.line() == 1 {
                e.column() + (start - text[..start].rfind('\n').map_or(0, |p| p + 1))
            } else {
                e.column()
            };
            Err(fio_err(
                "$",
                format!("not valid JSON: {base} at line {line} column {column}"),
            ))
        }
        None => Err(fio_err("$", "no JSON document found")),
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses a fio size ("4k", "16k", "1m", "64KiB", "4096", "1.5m") by fio's rules
/// ([`fio_vocab::parse_size`]: with `kb_base` 1024, fio's default, `64KiB` is 64,000).
/// For a per-direction list ("4k,16k") the first (read) value is taken; for a range
/// ("4k-16k") the lower bound.
pub fn parse_fio_size(s: &str, kb_base: u32) -> Option<u64> {
    let s = s.trim();
    let first = if fio_vocab::is_expression(s) {
        s
    } else {
        let first = s.split([',', ':']).next()?.trim();
        first.split('-').next()?.trim()
    };
    fio_vocab::parse_size(first, kb_base).ok()
}

/// Maps a fio `rw` value to an iolab mode name ("randread" -> "rndrd" ...); values without an
/// iolab equivalent are kept ("trim" -> "trim").
pub fn fio_mode(rw: &str) -> String {
    let rw = rw.split(':').next().unwrap_or(rw).trim();
    fio_vocab::mode_of_rw(rw)
        .map_or(rw, |m| m.name())
        .to_string()
}

/// Looks an option up in the job's options, then the global ones; returns its value as a
/// string and its JSON path.
pub(super) fn fio_opt(
    job_opts: Option<&Map<String, Value>>,
    job_path: &str,
    global: Option<&Map<String, Value>>,
    name: &str,
) -> Result<Option<(String, String)>, ImportError> {
    // the option table's name and aliases: fio prints an option as its job file spelled it
    let option = fio_options::find(name)
        .ok_or_else(|| fio_err(job_path, format!("{name} is not one of fio's options")))?;
    let keys = fio_options::spellings(option);
    let sources = [(job_opts, job_path), (global, "[\"global options\"]")];
    for (src, base) in sources {
        let Some(src) = src else { continue };
        for key in &keys {
            if let Some(v) = src.get(*key) {
                let path = key_path(base, key);
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => (if *b { "1" } else { "0" }).to_string(),
                    other => {
                        return Err(fio_err(
                            &path,
                            format!("expected a string, found {}", type_name(other)),
                        ));
                    }
                };
                return Ok(Some((s, path)));
            }
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// fio's document, as serde structs
// ---------------------------------------------------------------------------------------------

/// The top of fio's JSON document, as far as the import reads it. Keys fio prints that the
/// import does not use (`disk_util`, per job `error`, `elapsed`, `usr_cpu`, `iodepth_level`,
/// `latency_*`, per direction `slat_ns`, `bw_*`, `iops_*`, per latency `N`, ...) are not
/// mirrored: serde skips them unread.
///
/// Every field goes through one of the [`de`] functions, so a value of the wrong kind is
/// reported as "expected a number, found a string" and a missing key as "missing"; the JSON
/// path comes from `serde_path_to_error` (see [`path_error`]).
#[derive(Debug, Deserialize)]
pub(super) struct FioOutput {
    #[serde(rename = "fio version", deserialize_with = "de::text")]
    pub fio_version: String,
    /// Unix time in seconds; ignored unless a positive integer (as `timestamp_ms`)
    #[serde(default, deserialize_with = "de::loose_i64")]
    pub timestamp: Option<i64>,
    #[serde(default, deserialize_with = "de::loose_i64")]
    pub timestamp_ms: Option<i64>,
    /// Local time as text ("Tue Nov 14 22:13:20 2023"), the only time older fio prints
    #[serde(default, deserialize_with = "de::loose_str")]
    pub time: Option<String>,
    /// Options given before the first job or in `[global]`; values are strings ("4k", "1"),
    /// kept as JSON values because they are stored as given
    #[serde(rename = "global options", default, deserialize_with = "de::opt_obj")]
    pub global_options: Option<Map<String, Value>>,
    #[serde(deserialize_with = "de::objs")]
    pub jobs: Vec<FioJob>,
}

/// One entry of `jobs`: a thread, or with group_reporting a whole group.
#[derive(Debug, Deserialize)]
pub(super) struct FioJob {
    #[serde(deserialize_with = "de::text")]
    pub jobname: String,
    /// Used to tell group_reporting from separate threads; ignored unless an integer
    #[serde(default, deserialize_with = "de::loose_u64")]
    pub groupid: Option<u64>,
    #[serde(rename = "job options", default, deserialize_with = "de::opt_obj")]
    pub job_options: Option<Map<String, Value>>,
    #[serde(deserialize_with = "de::obj")]
    pub read: FioDir,
    #[serde(deserialize_with = "de::obj")]
    pub write: FioDir,
    /// Absent in output of fio before trim support in JSON
    #[serde(default, deserialize_with = "de::opt_obj")]
    pub trim: Option<FioDir>,
    #[serde(default, deserialize_with = "de::opt_obj")]
    pub sync: Option<FioSync>,
    /// ms, summed over the threads of a group
    #[serde(default, deserialize_with = "de::opt_num")]
    pub job_runtime: Option<f64>,
}

/// `read`, `write` or `trim` of a job. Only `total_ios` is always needed: the rest is required
/// (reported as "missing" then) only for a direction that did I/O.
#[derive(Debug, Deserialize)]
pub(super) struct FioDir {
    #[serde(deserialize_with = "de::count")]
    pub total_ios: u64,
    #[serde(default, deserialize_with = "de::opt_count")]
    pub io_bytes: Option<u64>,
    /// bytes/s
    #[serde(default, deserialize_with = "de::opt_num")]
    pub bw_bytes: Option<f64>,
    #[serde(default, deserialize_with = "de::opt_num")]
    pub iops: Option<f64>,
    /// ms, wall time (the longest thread under group_reporting)
    #[serde(default, deserialize_with = "de::opt_num")]
    pub runtime: Option<f64>,
    /// submission to completion
    #[serde(default, deserialize_with = "de::opt_obj")]
    pub lat_ns: Option<FioLat>,
    /// completion latency (json+ bins and percentiles are here unless lat_percentiles=1)
    #[serde(default, deserialize_with = "de::opt_obj")]
    pub clat_ns: Option<FioLat>,
}

/// `sync` of a job: the fsyncs (fio prints `total_ios` and `lat_ns`).
#[derive(Debug, Deserialize)]
pub(super) struct FioSync {
    #[serde(deserialize_with = "de::count")]
    pub total_ios: u64,
    #[serde(default, deserialize_with = "de::opt_obj")]
    pub lat_ns: Option<FioLat>,
    #[serde(default, deserialize_with = "de::opt_obj")]
    pub clat_ns: Option<FioLat>,
}

/// `lat_ns` / `clat_ns`: ns.
#[derive(Debug, Deserialize)]
pub(super) struct FioLat {
    #[serde(default, deserialize_with = "de::opt_num")]
    pub min: Option<f64>,
    #[serde(default, deserialize_with = "de::opt_num")]
    pub max: Option<f64>,
    #[serde(default, deserialize_with = "de::opt_num")]
    pub mean: Option<f64>,
    #[serde(default, deserialize_with = "de::opt_num")]
    pub stddev: Option<f64>,
    /// "99.900000" -> ns
    #[serde(default, deserialize_with = "de::opt_nums")]
    pub percentile: Option<BTreeMap<String, f64>>,
    /// json+ only: bucket value in ns ("1024") -> count
    #[serde(default, deserialize_with = "de::opt_counts")]
    pub bins: Option<BTreeMap<String, u64>>,
}

/// The kinds of JSON value fio prints, as serde `deserialize_with` functions whose errors read
/// "expected a number, found a string" (the kind found, not the value). Each asks the
/// deserializer for any value and rejects the wrong kinds itself: with a plain `f64` or a
/// derived struct serde would say "invalid type: string \"x\", expected f64", and a struct would
/// also accept an array of its fields.
pub(super) mod de {
    use std::collections::BTreeMap;
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::Value;

    fn wrong<E: de::Error>(expected: &str, found: &str) -> E {
        E::custom(format_args!("expected {expected}, found {found}"))
    }

    /// The `visit_*` methods of a visitor that refuse a kind of value.
    macro_rules! reject {
        ($de:lifetime, $what:expr; $($kind:ident),*) => { $(reject!(@$kind $de, $what);)* };
        (@boolean $de:lifetime, $what:expr) => {
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Err(wrong($what, "a boolean"))
            }
        };
        (@number $de:lifetime, $what:expr) => {
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Err(wrong($what, "a number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Err(wrong($what, "a number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Err(wrong($what, "a number"))
            }
        };
        (@string $de:lifetime, $what:expr) => {
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Err(wrong($what, "a string"))
            }
        };
        (@null $de:lifetime, $what:expr) => {
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(wrong($what, "null"))
            }
        };
        (@array $de:lifetime, $what:expr) => {
            fn visit_seq<A: SeqAccess<$de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(wrong($what, "an array"))
            }
        };
        (@object $de:lifetime, $what:expr) => {
            fn visit_map<A: MapAccess<$de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(wrong($what, "an object"))
            }
        };
    }

    /// A JSON object holding a `T` (a struct, or a map of keys to values).
    pub struct Obj<T>(pub T);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
                type Value = Obj<T>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an object")
                }
                // The map access is the one serde_path_to_error tracks, so the keys inside
                // the object still extend the path.
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                    T::deserialize(MapAccessDeserializer::new(map)).map(Obj)
                }
                reject!('de, "an object"; boolean, number, string, null, array);
            }
            d.deserialize_any(V(PhantomData))
        }
    }

    /// A JSON array of `T`.
    struct List<T>(Vec<T>);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
                type Value = List<T>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an array")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<List<T>, A::Error> {
                    Vec::deserialize(SeqAccessDeserializer::new(seq)).map(List)
                }
                reject!('de, "an array"; boolean, number, string, null, object);
            }
            d.deserialize_any(V(PhantomData))
        }
    }

    /// Any JSON number, as f64.
    struct Num(f64);

    impl<'de> Deserialize<'de> for Num {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Num;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a number")
                }
                fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                    Ok(Num(v as f64))
                }
                fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                    Ok(Num(v as f64))
                }
                fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                    Ok(Num(v))
                }
                reject!('de, "a number"; boolean, string, null, array, object);
            }
            d.deserialize_any(V)
        }
    }

    /// A non-negative integer; a float with no fraction (`3.0`) counts as one.
    struct Count(u64);

    impl<'de> Deserialize<'de> for Count {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            const WHAT: &str = "a non-negative integer";
            impl<'de> Visitor<'de> for V {
                type Value = Count;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str(WHAT)
                }
                fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                    Ok(Count(v))
                }
                fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                    match u64::try_from(v) {
                        Ok(n) => Ok(Count(n)),
                        Err(_) => self.visit_f64(v as f64),
                    }
                }
                fn visit_f64<E: de::Error>(self, f: f64) -> Result<Count, E> {
                    if f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64 {
                        Ok(Count(f as u64))
                    } else {
                        Err(E::custom(format_args!("expected {WHAT}, found {f}")))
                    }
                }
                reject!('de, WHAT; boolean, string, null, array, object);
            }
            d.deserialize_any(V)
        }
    }

    /// A JSON string.
    struct Text(String);

    impl<'de> Deserialize<'de> for Text {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Text;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a string")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                    Ok(Text(v.to_string()))
                }
                reject!('de, "a string"; boolean, number, null, array, object);
            }
            d.deserialize_any(V)
        }
    }

    // The functions named in `deserialize_with`. An `opt_` one is only called for a key that is
    // there (the field has `#[serde(default)]`), so `null` is a wrong kind, not an absent key.

    pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Text::deserialize(d).map(|t| t.0)
    }

    pub fn opt_num<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Num::deserialize(d).map(|n| Some(n.0))
    }

    pub fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Count::deserialize(d).map(|n| n.0)
    }

    pub fn opt_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        count(d).map(Some)
    }

    pub fn obj<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
        Obj::deserialize(d).map(|o| o.0)
    }

    pub fn opt_obj<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        obj(d).map(Some)
    }

    /// An array of objects.
    pub fn objs<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        List::<Obj<T>>::deserialize(d).map(|l| l.0.into_iter().map(|o| o.0).collect())
    }

    /// An object of numbers.
    pub fn opt_nums<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<BTreeMap<String, f64>>, D::Error> {
        let m: BTreeMap<String, Num> = obj(d)?;
        Ok(Some(m.into_iter().map(|(k, v)| (k, v.0)).collect()))
    }

    /// An object of non-negative integers.
    pub fn opt_counts<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<BTreeMap<String, u64>>, D::Error> {
        let m: BTreeMap<String, Count> = obj(d)?;
        Ok(Some(m.into_iter().map(|(k, v)| (k, v.0)).collect()))
    }

    // Values only used when they have the expected kind, and otherwise ignored (the start time,
    // the group id): any JSON value is accepted.

    pub fn loose_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Value::deserialize(d).map(|v| v.as_i64())
    }

    pub fn loose_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Value::deserialize(d).map(|v| v.as_u64())
    }

    pub fn loose_str<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Value::deserialize(d).map(|v| v.as_str().map(str::to_string))
    }
}

/// A serde error with its path, in the form of iolab's fio errors: `jobs[0].read.iops`,
/// `jobs[0]["job options"].bs` (serde_path_to_error would print `jobs[0].job options.bs`), `$`
/// for the document itself; serde's "missing field `x`" (reported at the object that lacks
/// it) becomes "missing" at the path of the key.
fn path_error(e: serde_path_to_error::Error<serde_json::Error>) -> ImportError {
    use serde_path_to_error::Segment;
    let mut path = String::new();
    for seg in e.path() {
        path = match seg {
            Segment::Seq { index } => format!("{path}[{index}]"),
            Segment::Map { key } | Segment::Enum { variant: key } => key_path(&path, key),
            Segment::Unknown => format!("{path}[?]"),
        };
    }
    // Deserializing from a Value, the error has no line/column: its text is the bare message.
    let msg = e.into_inner().to_string();
    if let Some(key) = msg
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        return fio_err(&key_path(&path, key), "missing");
    }
    fio_err(if path.is_empty() { "$" } else { &path }, msg)
}

/// A key the import needs that fio left out.
fn need<T>(v: Option<T>, parent: &str, key: &str) -> Result<T, ImportError> {
    v.ok_or_else(|| fio_err(&key_path(parent, key), "missing"))
}

/// Fills the percentile fields of `lat` from a fio "percentile" object at `path`.
pub(super) fn fio_percentiles(
    lat: &mut ReportedLat,
    pct: &BTreeMap<String, f64>,
    path: &str,
) -> Result<(), ImportError> {
    for (k, &val) in pct {
        let p: f64 = k
            .trim()
            .parse()
            .map_err(|_| fio_err(&key_path(path, k), "percentile key is not a number"))?;
        let slot = match p {
            _ if (p - 50.0).abs() < 1e-6 => &mut lat.p50,
            _ if (p - 90.0).abs() < 1e-6 => &mut lat.p90,
            _ if (p - 95.0).abs() < 1e-6 => &mut lat.p95,
            _ if (p - 99.0).abs() < 1e-6 => &mut lat.p99,
            _ if (p - 99.9).abs() < 1e-6 => &mut lat.p99_9,
            _ if (p - 99.99).abs() < 1e-6 => &mut lat.p99_99,
            _ => continue,
        };
        *slot = Some(val);
    }
    Ok(())
}

/// json+ latency bins: (value_ns, count), sorted by value.
pub(super) type Bins = Vec<(u64, u64)>;

pub(super) fn fio_bins(bins: &BTreeMap<String, u64>, path: &str) -> Result<Bins, ImportError> {
    let mut out = Vec::with_capacity(bins.len());
    for (k, &count) in bins {
        let value: u64 = k
            .trim()
            .parse()
            .map_err(|_| fio_err(&key_path(path, k), "bin key is not an integer"))?;
        out.push((value, count));
    }
    out.sort_unstable();
    Ok(out)
}

/// Which of fio's latencies an op's figures come from: `"clat"` (completion latency,
/// `clat_ns`) or `"lat"` (total latency, `lat_ns`).
pub(super) type LatSource = &'static str;

/// The key of a cell's `options` that records, per op, which latency its figures come from.
pub const LATENCY_SOURCE_KEY: &str = "iolab.latency_source";

/// Latency summary and json+ bins of one fio direction (or the "sync" object) at `path`, all
/// from one of fio's latencies, so the mean and the percentiles describe the same thing:
/// `clat_ns` (completion latency, what fio reports percentiles for by default) when it has
/// percentiles or there is no `lat_ns`, else `lat_ns` (the total latency: `lat_percentiles=1`,
/// or fio's "sync" object, which has only `lat_ns`).
pub(super) fn fio_lat(
    lat_ns: Option<&FioLat>,
    clat_ns: Option<&FioLat>,
    path: &str,
) -> Result<(Option<ReportedLat>, Option<Bins>, LatSource), ImportError> {
    let clat_has_pct = clat_ns.is_some_and(|c| c.percentile.is_some());
    let (stats, key, source) = if clat_has_pct || lat_ns.is_none() {
        (clat_ns, "clat_ns", "clat")
    } else {
        (lat_ns, "lat_ns", "lat")
    };
    let Some(stats) = stats else {
        return Ok((None, None, source));
    };
    let mut lat = ReportedLat {
        min: stats.min,
        mean: stats.mean,
        max: stats.max,
        stddev: stats.stddev,
        ..ReportedLat::default()
    };
    let base = key_path(path, key);
    if let Some(pct) = &stats.percentile {
        fio_percentiles(&mut lat, pct, &key_path(&base, "percentile"))?;
    }
    let bins = stats
        .bins
        .as_ref()
        .map(|b| fio_bins(b, &key_path(&base, "bins")))
        .transpose()?;
    Ok(((!lat.is_empty()).then_some(lat), bins, source))
}

/// Parses fio `--output-format=json` or `json+` output. Leading non-JSON lines are skipped.
pub fn parse_fio_json(text: &str) -> Result<Imported, ImportError> {
    let start = json_start(text).ok_or_else(|| fio_err("$", "no JSON object found"))?;
    // The whole document is read first, so a syntax error is reported (with the line and column
    // in the whole input) before any missing or mistyped key.
    fio_from_value(read_json(text, start)?)
}

/// fio JSON already read into a value (`parse` and `parse_file` read the text once).
pub(super) fn fio_from_value(doc: Value) -> Result<Imported, ImportError> {
    let de::Obj(fio) =
        serde_path_to_error::deserialize::<_, de::Obj<FioOutput>>(doc).map_err(path_error)?;
    if fio.jobs.is_empty() {
        return Err(fio_err("jobs", "no jobs in the result"));
    }
    let start_time = fio_start_time(&fio);
    let global = fio.global_options.as_ref();
    // With group_reporting fio prints one entry per group; without it one per thread. The
    // "group_reporting" flag itself is not printed, so count the entries of each group.
    let groupids: Vec<Option<u64>> = fio.jobs.iter().map(|j| j.groupid).collect();
    // (cell, its group id when fio printed its threads separately, latency source per op)
    let mut parsed: Vec<(Cell, Option<u64>, Map<String, Value>)> =
        Vec::with_capacity(fio.jobs.len());
    for (i, job) in fio.jobs.iter().enumerate() {
        let jp = format!("jobs[{i}]");
        let job_opts_path = key_path(&jp, "job options");
        let job_opts = job.job_options.as_ref();
        let opt = |name: &str| fio_opt(job_opts, &job_opts_path, global, name);

        let mode = fio_mode(&opt("rw")?.map_or("read".into(), |(s, _)| s));
        let kb_base = match opt("kb_base")? {
            Some((s, p)) => match s.trim() {
                "1000" => 1000,
                "1024" => 1024,
                _ => return Err(fio_err(&p, format!("cannot parse kb_base {s:?}"))),
            },
            None => 1024,
        };
        // `bs=R,W,T` (per direction): the largest, as a job's bs_bytes
        let bs_bytes = match opt("bs")? {
            Some((s, p)) => s
                .split(',')
                .filter(|x| !x.trim().is_empty())
                .map(|x| parse_fio_size(x, kb_base).filter(|&b| b > 0))
                .collect::<Option<Vec<u64>>>()
                .and_then(|v| v.into_iter().max())
                .ok_or_else(|| fio_err(&p, format!("cannot parse block size {s:?}")))?,
            None => 4096,
        };
        let numjobs = match opt("numjobs")? {
            Some((s, p)) => s
                .trim()
                .parse::<u32>()
                .map_err(|_| fio_err(&p, format!("cannot parse numjobs {s:?}")))?,
            None => 1,
        };
        let merged_group = match groupids[i] {
            Some(g) => groupids.iter().filter(|x| **x == Some(g)).count() == 1,
            None => true,
        };
        let threads = if merged_group { numjobs.max(1) } else { 1 };
        let iodepth = match opt("iodepth")? {
            Some((s, p)) => s
                .trim()
                .parse::<u32>()
                .map_err(|_| fio_err(&p, format!("cannot parse iodepth {s:?}")))?,
            None => 1,
        };
        let direct = match opt("direct")? {
            Some((s, p)) => fio_vocab::parse_bool(Some(&s))
                .ok()
                .ok_or_else(|| fio_err(&p, format!("cannot parse direct {s:?}")))?,
            None => match opt("buffered")? {
                Some((s, p)) => !fio_vocab::parse_bool(Some(&s))
                    .ok()
                    .ok_or_else(|| fio_err(&p, format!("cannot parse buffered {s:?}")))?,
                None => false,
            },
        };
        let engine = opt("ioengine")?.map_or("psync".into(), |(s, _)| s);

        // Directions. "runtime" of a direction is the wall time (the longest thread under
        // group_reporting); "job_runtime" is summed over the threads of a group.
        let mut dirs = Vec::new();
        let mut runtime_ms: f64 = 0.0;
        for (key, dir) in [
            ("read", Some(&job.read)),
            ("write", Some(&job.write)),
            ("trim", job.trim.as_ref()),
        ] {
            let Some(dir) = dir else { continue };
            if dir.total_ios == 0 {
                continue;
            }
            let dp = key_path(&jp, key);
            runtime_ms = runtime_ms.max(need(dir.runtime, &dp, "runtime")?);
            dirs.push((key, dir, dp));
        }
        let duration_s = if runtime_ms > 0.0 {
            runtime_ms / 1000.0
        } else {
            job.job_runtime
                .map_or(0.0, |ms| ms / 1000.0 / f64::from(threads))
        };
        let mut ops = Vec::new();
        let mut sources = Map::new();
        for (key, dir, dp) in dirs {
            let (lat_ns, hist_bins, source) =
                fio_lat(dir.lat_ns.as_ref(), dir.clat_ns.as_ref(), &dp)?;
            if lat_ns.is_some() {
                sources.insert(key.into(), source.into());
            }
            ops.push(OpSummary {
                op: key.to_string(),
                ops: dir.total_ios,
                bytes: need(dir.io_bytes, &dp, "io_bytes")?,
                iops: need(dir.iops, &dp, "iops")?,
                bytes_per_sec: need(dir.bw_bytes, &dp, "bw_bytes")?,
                lat_ns,
                hist_bins,
            });
        }
        if let Some(sync) = &job.sync
            && sync.total_ios > 0
        {
            let sp = key_path(&jp, "sync");
            let (lat_ns, hist_bins, source) =
                fio_lat(sync.lat_ns.as_ref(), sync.clat_ns.as_ref(), &sp)?;
            if lat_ns.is_some() {
                sources.insert("fsync".into(), source.into());
            }
            let total = sync.total_ios;
            ops.push(OpSummary {
                op: "fsync".into(),
                ops: total,
                bytes: 0,
                iops: if duration_s > 0.0 {
                    total as f64 / duration_s
                } else {
                    0.0
                },
                bytes_per_sec: 0.0,
                lat_ns,
                hist_bins,
            });
        }
        let mut options = global.cloned().unwrap_or_default();
        if let Some(j) = job_opts {
            options.extend(j.clone());
        }
        let clone_group = if merged_group { None } else { groupids[i] };
        let cell = Cell {
            name: job.jobname.clone(),
            mode,
            threads,
            iodepth,
            bs_bytes,
            direct,
            engine,
            duration_s,
            ops,
            options: Value::Object(options),
        };
        parsed.push((cell, clone_group, sources));
    }
    let cells = merge_clones(parsed);
    Ok(Imported {
        tool: "fio".into(),
        tool_version: fio.fio_version,
        start_time,
        start_time_source: None,
        options: Value::Object(fio.global_options.unwrap_or_default()),
        cells,
    })
}

/// fio's start time: "timestamp_ms" / "timestamp" (Unix time), else "time" (local time text).
pub(super) fn fio_start_time(fio: &FioOutput) -> Option<String> {
    use chrono::{DateTime, Local, NaiveDateTime, SecondsFormat, TimeZone};
    let from_ms = |ms: i64| {
        DateTime::from_timestamp_millis(ms).map(|t| {
            t.with_timezone(&Local)
                .to_rfc3339_opts(SecondsFormat::Millis, true)
        })
    };
    if let Some(ms) = fio.timestamp_ms.filter(|&x| x > 0) {
        return from_ms(ms);
    }
    if let Some(s) = fio.timestamp.filter(|&x| x > 0) {
        return from_ms(s.checked_mul(1000)?);
    }
    let text = fio.time.as_deref()?;
    let naive = NaiveDateTime::parse_from_str(text.trim(), "%a %b %e %H:%M:%S %Y").ok()?;
    Local
        .from_local_datetime(&naive)
        .earliest()
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
}
