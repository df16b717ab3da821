//! Ids as fsck keeps them: a lower-case hyphenated UUID packed into 16 bytes (what nearly all
//! tools write), anything else as text; interned to small integers for the tree checks.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// Two `u64`s rather than one `u128`: 8-byte alignment keeps an `Ident` at 24 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ident {
    Uuid(u64, u64),
    Text(Box<str>),
}

impl Ident {
    pub fn new(s: &str) -> Self {
        // Only the canonical form packs: formatting it back must give the same text.
        if s.len() == 36
            && !s.bytes().any(|b| b.is_ascii_uppercase())
            && let Ok(u) = uuid::Uuid::try_parse(s)
        {
            let n = u.as_u128();
            return Ident::Uuid((n >> 64) as u64, n as u64);
        }
        Ident::Text(s.into())
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ident::Uuid(hi, lo) => {
                let n = (u128::from(*hi) << 64) | u128::from(*lo);
                write!(f, "{}", uuid::Uuid::from_u128(n).hyphenated())
            }
            Ident::Text(s) => f.write_str(s),
        }
    }
}

/// A small multiply-rotate hasher: ids are not attacker-chosen keys in a long-lived server,
/// and SipHash is a measurable share of the tree checks on large files.
#[derive(Default, Clone, Copy)]
pub struct QuickHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for QuickHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(K);
    }

    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
}

pub type QuickMap<K, V> = HashMap<K, V, BuildHasherDefault<QuickHasher>>;

/// Ids to dense numbers and back: one table holds each id once (an index set), so a large
/// file's ids cost about 50 bytes each.
#[derive(Default)]
pub struct Interner {
    set: indexmap::IndexSet<Ident, BuildHasherDefault<QuickHasher>>,
}

impl Interner {
    pub fn intern(&mut self, id: Ident) -> u32 {
        self.set.insert_full(id).0 as u32
    }

    pub fn reserve(&mut self, more: usize) {
        self.set.reserve(more);
    }

    pub fn get(&self, id: &Ident) -> Option<u32> {
        self.set.get_index_of(id).map(|n| n as u32)
    }

    pub fn name(&self, n: u32) -> &Ident {
        &self.set[n as usize]
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_uuids_pack_and_print_back() {
        let s = "7a8b890b-d829-4530-93cc-a80420f4da5c";
        assert!(matches!(Ident::new(s), Ident::Uuid(..)));
        assert_eq!(Ident::new(s).to_string(), s);
        let upper = "7A8B890B-D829-4530-93CC-A80420F4DA5C";
        assert_eq!(Ident::new(upper), Ident::Text(upper.into()));
        assert_eq!(
            Ident::new("7a8b890bd829453093cca80420f4da5c").to_string(),
            "7a8b890bd829453093cca80420f4da5c"
        );
        let mut i = Interner::default();
        assert_eq!(i.intern(Ident::new("a")), 0);
        assert_eq!(i.intern(Ident::new(s)), 1);
        assert_eq!(i.intern(Ident::new("a")), 0);
        assert_eq!(i.get(&Ident::new(s)), Some(1));
        assert_eq!(i.name(1).to_string(), s);
    }
}
