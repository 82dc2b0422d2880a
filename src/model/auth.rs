//! Authenticating what a network peer says: HMAC-SHA256 tags (RFC 2104) over a message's parts
//! with a secret both ends hold (a `crashcheck` run's key, a distributed run's token), checked in
//! constant time. Used by the crashcheck journal lines (`model::crashcheck`) and the side
//! channel's handshake (`dist::side`).

use hmac::{KeyInit, Mac};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// Bytes of a secret key.
pub const KEY_BYTES: usize = 32;

fn mac(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC takes a key of any length: new_from_slice cannot fail
    let mut m = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    for p in parts {
        // each part with its length first: ("ab", "c") and ("a", "bc") get different tags
        m.update(&(p.len() as u64).to_le_bytes());
        m.update(p);
    }
    m
}

/// The tag of `parts` under `key`, 64 hex digits.
pub fn tag_hex(key: &[u8], parts: &[&[u8]]) -> String {
    hex(&mac(key, parts).finalize().into_bytes())
}

/// Whether `tag` (hex) is the tag of `parts` under `key`; the comparison takes the same time
/// wherever the first wrong byte is.
pub fn tag_ok(key: &[u8], parts: &[&[u8]], tag: &str) -> bool {
    match unhex(tag) {
        Some(t) if t.len() == 32 => mac(key, parts).verify_slice(&t).is_ok(),
        _ => false,
    }
}

/// A short public name of a secret key (16 hex digits of its SHA-256): tells which key a run
/// used without telling the key.
pub fn fingerprint(key: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::new()
        .chain_update(b"iolab key fingerprint\0")
        .chain_update(key)
        .finalize();
    hex(&d[..8])
}

/// Lower-case hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Hex (either case) to bytes; None for an odd length or a non-hex digit.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_check_and_bind_every_part() {
        let k = [7u8; KEY_BYTES];
        let t = tag_hex(&k, &[b"ab", b"c"]);
        assert_eq!(t.len(), 64);
        assert!(tag_ok(&k, &[b"ab", b"c"], &t));
        assert!(!tag_ok(&k, &[b"a", b"bc"], &t));
        assert!(!tag_ok(&[8u8; KEY_BYTES], &[b"ab", b"c"], &t));
        assert!(!tag_ok(&k, &[b"ab", b"c"], &t[..62]));
        assert!(!tag_ok(&k, &[b"ab", b"c"], "zz"));
        assert_eq!(unhex(&hex(&[0, 255, 16])), Some(vec![0, 255, 16]));
        assert_eq!(fingerprint(&k).len(), 16);
        assert_ne!(fingerprint(&k), fingerprint(&[8u8; KEY_BYTES]));
    }
}
