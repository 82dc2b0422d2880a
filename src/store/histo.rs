//! Histogram encoding: the `histograms.hdr` column.

use crate::measure::hist::LatHist;

/// HdrHistogram V2 with deflate: the standard, compact, portable encoding.
pub fn serialize_hist(h: &LatHist) -> Vec<u8> {
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&h.h, &mut out)
        .expect("serialize histogram");
    out
}

pub fn deserialize_hist(b: &[u8]) -> std::result::Result<LatHist, String> {
    use hdrhistogram::serialization::Deserializer;
    let h: hdrhistogram::Histogram<u64> = Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(b))
        .map_err(|e| format!("{e:?}"))?;
    let mut l = LatHist::new();
    l.h.add(&h).map_err(|e| format!("{e:?}"))?;
    Ok(l)
}
