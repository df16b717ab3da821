//! The grammar check of [`super::scan`], 64 bytes at a time, for text that is valid.
//!
//! Each chunk is classified at once ([`super::classes`]): escaped bytes are found from the
//! backslash runs, the bytes inside strings from the unescaped quotes (a running XOR,
//! [`super::strings`]), and only
//! the tokens are walked one by one: the quotes, the brackets, colons and commas outside
//! strings, and the first byte of each run of other bytes outside strings (a number or a
//! literal, read by the byte-by-byte scan's own code). What lies between tokens is checked by
//! masks: no control byte in a string, only white space among the low bytes outside them, and
//! each escape one of JSON's (looked at one by one: they are few).
//!
//! It answers only when the text is valid up to the value's end, telling `note` what the
//! byte-by-byte scan tells it (depth, numbers, surrogate escapes, keys and value ends in
//! order; white space once, at the end, when there is some). Anything else (an error
//! anywhere, a value nested deeper than 64, a text that ends first) gives `None`: the caller
//! forgets the notes and asks the byte-by-byte scan, which says what and where.

use super::classes::{self, Chunk, Classes, Way};
use super::scan::{NOTED_DEPTH, Note, is_surrogate_hex, literal_end, number_end};
use super::skip::CHUNK;
use super::strings::Carry;

/// Where the value starting at `start` (white space allowed before it) ends, when the text is
/// valid that far; see the module's documentation.
pub(super) fn value_end<N: Note>(b: &[u8], start: usize, note: &mut N) -> Option<usize> {
    value_end_by(Way::best(), b, start, note)
}

/// [`value_end`] reading chunks `way` (tests try each).
pub(super) fn value_end_by<N: Note>(
    way: Way,
    b: &[u8],
    start: usize,
    note: &mut N,
) -> Option<usize> {
    match way {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Way::Avx512` is only made where the processor has AVX-512 F and BW and
        // PCLMULQDQ.
        Way::Avx512 => unsafe { walk_avx512(b, start, note) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Way::Avx2` is only made where the processor has AVX2 and PCLMULQDQ.
        Way::Avx2 => unsafe { walk_avx2(b, start, note) },
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        Way::Sse2 => walk(b, start, note, classes::read_sse2::<false>),
        Way::Bytes => walk(b, start, note, classes::read_bytes::<false>),
    }
}

/// [`walk`] compiled for AVX2, the chunks read inline.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,pclmulqdq")]
fn walk_avx2<N: Note>(b: &[u8], start: usize, note: &mut N) -> Option<usize> {
    walk(b, start, note, |chunk, carry| {
        classes::read_avx2::<false>(chunk, carry)
    })
}

/// [`walk`] compiled for AVX-512.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,pclmulqdq")]
fn walk_avx512<N: Note>(b: &[u8], start: usize, note: &mut N) -> Option<usize> {
    walk(b, start, note, |chunk, carry| {
        classes::read_avx512::<false>(chunk, carry)
    })
}

#[inline(always)]
fn walk<N: Note>(
    b: &[u8],
    start: usize,
    note: &mut N,
    read: impl Fn(&[u8; CHUNK], &mut Carry) -> Chunk,
) -> Option<usize> {
    let mut walk = Walk {
        expect: Expect::Value,
        objects: 0,
        depth: 0,
        string_start: 0,
    };
    let mut carry = Carry::default();
    let mut atom_before = false;
    let mut spaced = false;
    let mut at = start;
    while at < b.len() {
        let Chunk {
            classes: c,
            strings,
        } = match b.get(at..at + CHUNK) {
            Some(chunk) => read(chunk.try_into().expect("a chunk"), &mut carry),
            None => {
                // The last bytes, padded with spaces: white space the value never reaches.
                let mut last = [b' '; CHUNK];
                last[..b.len() - at].copy_from_slice(&b[at..]);
                read(&last, &mut carry)
            }
        };
        let inside = strings.inside;
        let outside = !inside;
        let low = c.control | c.space;
        // Bytes of numbers and literals, and anything else out of place outside strings.
        let atoms = outside & !(low | c.structural | c.quote);
        let atom_starts = atoms & !(atoms << 1 | u64::from(atom_before));
        atom_before = atoms >> 63 == 1;
        let mut tokens = strings.quotes | (c.structural & outside) | atom_starts;
        let mut end = None;
        while tokens != 0 {
            let p = at + tokens.trailing_zeros() as usize;
            match walk.token(b, p, note)? {
                Step::On => tokens &= tokens - 1,
                Step::Ended(e) => {
                    end = Some(e);
                    break;
                }
            }
        }
        // The bytes checked here: the chunk's, or those up to the value's end.
        let upto = match end {
            None => u64::MAX,
            Some(e) if e - at < CHUNK => (1u64 << (e - at)) - 1,
            Some(e) if e - at == CHUNK => u64::MAX,
            // A number ending the text beyond this chunk: not looked at here.
            Some(_) => return None,
        };
        spaced |= between_tokens(b, at, &c, outside & upto)?;
        strings_hold(b, at, &c, strings.escaped & upto, inside & upto, note)?;
        if let Some(e) = end {
            if spaced {
                note.space();
            }
            return Some(e);
        }
        at += CHUNK;
    }
    None
}

/// Whether there is white space among the `outside` bytes (outside strings); `None` when a
/// low byte there is not white space.
#[inline(always)]
fn between_tokens(b: &[u8], at: usize, c: &Classes, outside: u64) -> Option<bool> {
    let mut control = c.control & outside;
    while control != 0 {
        let p = at + control.trailing_zeros() as usize;
        if !matches!(b.get(p), Some(b'\t' | b'\n' | b'\r')) {
            return None;
        }
        control &= control - 1;
    }
    Some((c.control | c.space) & outside != 0)
}

/// Whether the strings' bytes among `inside` are all ones a string may hold, and each of the
/// `escaped` bytes one of JSON's escapes (surrogate escapes noted); `None` when not.
#[inline(always)]
fn strings_hold<N: Note>(
    b: &[u8],
    at: usize,
    c: &Classes,
    escaped: u64,
    inside: u64,
    note: &mut N,
) -> Option<()> {
    if c.control & inside != 0 {
        return None;
    }
    // An escaped byte outside strings follows a backslash outside strings: an error the
    // tokens already found. Escaped backslashes are not among `escaped`: always valid.
    let mut escapes = escaped & inside;
    while escapes != 0 {
        let p = at + escapes.trailing_zeros() as usize;
        match b.get(p) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {}
            Some(b'u') => {
                let hex = b.get(p + 1..p + 5)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                if is_surrogate_hex(hex) {
                    note.surrogate();
                }
            }
            _ => return None,
        }
        escapes &= escapes - 1;
    }
    Some(())
}

/// What the next token may be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (the first, after `:`, or after `,` in an array).
    Value,
    /// A value or `]` (after `[`).
    ValueOrClose,
    /// A key or `}` (after `{`).
    KeyOrClose,
    /// A key (after `,` in an object).
    Key,
    /// The closing quote of a key.
    KeyEnd,
    /// The closing quote of a string value.
    StringEnd,
    Colon,
    /// `,` or the bracket closing the innermost container.
    CommaOrClose,
}

/// The grammar over tokens, with the open containers as bits.
struct Walk {
    expect: Expect,
    /// Bit `d` is set when the container open at depth `d + 1` is an object.
    objects: u64,
    depth: u32,
    /// The opening quote of the string being read.
    string_start: usize,
}

enum Step {
    On,
    /// The value ends here (exclusive).
    Ended(usize),
}

impl Walk {
    /// The token at `p`; `None` when it is out of place (or nested too deep for the bits).
    #[inline(always)]
    fn token<N: Note>(&mut self, b: &[u8], p: usize, note: &mut N) -> Option<Step> {
        let byte = b[p];
        match self.expect {
            // Inside a string the only token is its closing quote.
            Expect::StringEnd => Some(self.value_ended(p + 1, note)),
            Expect::KeyEnd => {
                if let Some(depth) = self.noted() {
                    note.key(depth, self.string_start, p + 1);
                }
                self.expect = Expect::Colon;
                Some(Step::On)
            }
            Expect::Value | Expect::ValueOrClose => {
                if byte != b']' {
                    self.item_start(p, note);
                }
                self.value(b, p, byte, note)
            }
            Expect::KeyOrClose | Expect::Key => match byte {
                b'"' => {
                    self.string_start = p;
                    self.expect = Expect::KeyEnd;
                    Some(Step::On)
                }
                b'}' if self.expect == Expect::KeyOrClose => Some(self.close(p, note)),
                _ => None,
            },
            Expect::Colon => {
                self.expect = Expect::Value;
                (byte == b':').then_some(Step::On)
            }
            Expect::CommaOrClose => {
                let in_object = self.objects >> (self.depth - 1) & 1 == 1;
                match (byte, in_object) {
                    (b',', true) => self.expect = Expect::Key,
                    (b',', false) => self.expect = Expect::Value,
                    (b'}', true) | (b']', false) => return Some(self.close(p, note)),
                    _ => return None,
                }
                Some(Step::On)
            }
        }
    }

    /// A value starting at `p` (its first byte `byte`).
    #[inline(always)]
    fn value<N: Note>(&mut self, b: &[u8], p: usize, byte: u8, note: &mut N) -> Option<Step> {
        match byte {
            b'"' => {
                self.string_start = p;
                self.expect = Expect::StringEnd;
                Some(Step::On)
            }
            b'{' => self.open(true, Expect::KeyOrClose, note),
            b'[' => self.open(false, Expect::ValueOrClose, note),
            b']' if self.expect == Expect::ValueOrClose => Some(self.close(p, note)),
            b'-' | b'0'..=b'9' => {
                let (end, exponent) = number_end(b, p).ok()?;
                note.number(end - p, exponent);
                self.scalar_ended(b, end, note)
            }
            b't' => self.scalar_ended(b, literal_end(b, p, b"true").ok()?, note),
            b'f' => self.scalar_ended(b, literal_end(b, p, b"false").ok()?, note),
            b'n' => self.scalar_ended(b, literal_end(b, p, b"null").ok()?, note),
            _ => None,
        }
    }

    /// A value starting at `p` is an item of the innermost container when that is an array:
    /// noted when it is noted.
    #[inline(always)]
    fn item_start<N: Note>(&self, p: usize, note: &mut N) {
        let in_array = self.depth > 0 && self.objects >> (self.depth - 1) & 1 == 0;
        if in_array && self.depth as usize <= NOTED_DEPTH {
            note.item(self.depth as usize, p);
        }
    }

    #[inline(always)]
    fn open<N: Note>(&mut self, object: bool, expect: Expect, note: &mut N) -> Option<Step> {
        if self.depth == u64::BITS {
            return None;
        }
        note.depth(self.depth as usize + 1);
        self.objects |= u64::from(object) << self.depth;
        self.depth += 1;
        self.expect = expect;
        Some(Step::On)
    }

    #[inline(always)]
    fn close<N: Note>(&mut self, p: usize, note: &mut N) -> Step {
        self.depth -= 1;
        self.objects &= !(1 << self.depth);
        self.value_ended(p + 1, note)
    }

    /// A number or literal ended at `end`: only when no other such byte follows it (`1x`,
    /// `truex` and `1\` are errors for the byte-by-byte scan to name).
    #[inline(always)]
    fn scalar_ended<N: Note>(&mut self, b: &[u8], end: usize, note: &mut N) -> Option<Step> {
        match b.get(end) {
            None | Some(0..=0x20 | b'"' | b'{' | b'}' | b'[' | b']' | b':' | b',') => {
                Some(self.value_ended(end, note))
            }
            Some(_) => None,
        }
    }

    #[inline(always)]
    fn value_ended<N: Note>(&mut self, end: usize, note: &mut N) -> Step {
        if self.depth == 0 {
            return Step::Ended(end);
        }
        if let Some(depth) = self.noted() {
            note.value_end(depth, end);
        }
        self.expect = Expect::CommaOrClose;
        Step::On
    }

    /// What [`Note::key`] and [`Note::value_end`] are told as depth in the innermost open
    /// container, when it is noted.
    #[inline(always)]
    fn noted(&self) -> Option<usize> {
        let depth = self.depth as usize;
        (1..=NOTED_DEPTH).contains(&depth).then_some(depth)
    }
}
