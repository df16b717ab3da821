//! Ids a writer must invent: stable ones, derived from what they stand for, so converting the
//! same input twice gives the same output.

use sha2::{Digest, Sha256};

/// A version-4-shaped UUID derived from `seed` (same seed, same UUID).
pub fn derived_uuid(seed: &str) -> String {
    let hash = Sha256::digest(seed.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&hash[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).hyphenated().to_string()
}

/// Whether `s` is a UUID in the usual hyphenated form.
pub fn is_uuid(s: &str) -> bool {
    s.len() == 36 && uuid::Uuid::try_parse(s).is_ok()
}

/// Lower-case hex sha256 of a string: the `sha256` project-folder scheme and `projectHash`.
pub fn sha256_hex(s: &str) -> String {
    sha256_hex_bytes(s.as_bytes())
}

pub fn sha256_hex_bytes(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(hash.len() * 2);
    for b in hash {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_uuids_are_stable_and_valid() {
        let a = derived_uuid("x");
        assert_eq!(a, derived_uuid("x"));
        assert_ne!(a, derived_uuid("y"));
        assert!(is_uuid(&a));
        assert_eq!(&a[14..15], "4");
    }

    #[test]
    fn sha256_of_path() {
        assert_eq!(
            sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
