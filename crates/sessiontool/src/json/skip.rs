//! Finding where a value ends in text already known to be valid JSON, 64 bytes at a time.
//!
//! Reading a record lazily ([`super::Raw`]) skips over every value it does not look into: a
//! message's text, a tool's output. Byte by byte that was most of the time of fsck and of the
//! engine's first pass (session text has a quote or a backslash every 15 bytes or so). Here
//! each 64-byte chunk becomes four bit masks (quotes, backslashes, opening and closing
//! brackets) the quickest way the processor has ([`super::classes`]); escaped characters and
//! the bytes inside strings come from them ([`super::strings`]), and only then are brackets
//! counted. Text that is not valid JSON gives a wrong answer, never a panic or a read out of
//! bounds. A long string that must be checked as it is skipped ([`checked_string_rest`], for
//! the byte-by-byte scan) still goes through SSE2 masks and its backslashes one by one.

/// The bytes of one chunk that matter, one bit per byte (bit `k` is byte `k`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// `{` and `[`.
    open: u64,
    /// `}` and `]`.
    close: u64,
    /// Control characters (below 0x20), which a string may not hold raw.
    control: u64,
}

pub(super) const CHUNK: usize = 64;

use super::classes::{self, Chunk, Way};
use super::strings::Carry;

/// What is carried from one chunk to the next (by [`checked_string_rest`]).
#[derive(Default)]
struct State {
    /// The next chunk's first byte is escaped (this one ended in an odd run of backslashes).
    escape_next: bool,
    /// The chunk ended inside a string.
    in_string: bool,
}

impl State {
    /// The chunk's unescaped quotes, and its bytes inside strings (an opening quote counts
    /// as inside, a closing one as outside), its escaped bytes known: `quote` is every quote
    /// of the chunk, escaped or not.
    fn strings_with(&mut self, quote: u64, escaped: u64) -> (u64, u64) {
        let quotes = quote & !escaped;
        let mut inside = prefix_xor(quotes);
        if self.in_string {
            inside = !inside;
        }
        self.in_string = inside >> 63 == 1;
        (quotes, inside)
    }

    /// The bytes escaped by a backslash: a backslash not itself escaped escapes the byte
    /// after it. Backslashes are rare, so they are walked one by one.
    fn escaped(&mut self, backslash: u64) -> u64 {
        let mut escaped = u64::from(std::mem::take(&mut self.escape_next));
        let mut left = backslash & !escaped;
        while left != 0 {
            let at = left.trailing_zeros();
            if at == 63 {
                self.escape_next = true;
                break;
            }
            escaped |= 1 << (at + 1);
            // The escaped byte is no escape, even if it is a backslash.
            left &= !(1 << (at + 1));
            left &= left - 1;
        }
        escaped
    }
}

/// Each bit set to the XOR of itself and every bit below it.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The masks of 64 bytes, byte by byte (other processors; on x86-64, what tests hold SSE2's
/// masks to).
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
fn masks_scalar(chunk: &[u8; CHUNK]) -> Masks {
    let mut m = Masks::default();
    for (k, &b) in chunk.iter().enumerate() {
        let bit = 1u64 << k;
        match b {
            0..0x20 => m.control |= bit,
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b'{' | b'[' => m.open |= bit,
            b'}' | b']' => m.close |= bit,
            _ => {}
        }
    }
    m
}

/// The masks of 64 bytes with SSE2, which every x86-64 processor has.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn masks(chunk: &[u8; CHUNK]) -> Masks {
    // SAFETY: the build targets SSE2 (the cfg above), so the processor has it.
    unsafe { masks_sse2(chunk) }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn masks_sse2(chunk: &[u8; CHUNK]) -> Masks {
    use std::arch::x86_64::*;
    let mut m = Masks::default();
    let below_space = _mm_set1_epi8(0x1f);
    for part in 0..4 {
        let bytes: &[u8; 16] = chunk[part * 16..part * 16 + 16]
            .try_into()
            .expect("16 bytes");
        // SAFETY: an unaligned load of 16 bytes from a reference to 16 bytes.
        let v = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
        let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16) << (part * 16);
        // `{` and `[` differ only in 0x20, as do `}` and `]`.
        let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        m.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
        m.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
        m.open |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)));
        m.close |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)));
        // A byte is at most 0x1f when it is its minimum with 0x1f (unsigned).
        m.control |= bits(_mm_cmpeq_epi8(_mm_min_epu8(v, below_space), v));
    }
    m
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn masks(chunk: &[u8; CHUNK]) -> Masks {
    masks_scalar(chunk)
}

/// The chunks of `b` from `start`: whole ones in place, the last one padded with spaces
/// (which change nothing: they are neither quotes, backslashes nor brackets).
fn each_chunk(
    b: &[u8],
    start: usize,
    mut each: impl FnMut(usize, Masks) -> Option<usize>,
) -> usize {
    let mut at = start;
    while at + CHUNK <= b.len() {
        let chunk: &[u8; CHUNK] = b[at..at + CHUNK].try_into().expect("a chunk");
        if let Some(end) = each(at, masks(chunk)) {
            return end;
        }
        at += CHUNK;
    }
    if at < b.len() {
        let mut last = [b' '; CHUNK];
        last[..b.len() - at].copy_from_slice(&b[at..]);
        if let Some(end) = each(at, masks(&last)) {
            return end.min(b.len());
        }
    }
    b.len()
}

/// One past the bracket that closes the `depth` objects and arrays open at `b[from]` (a place
/// outside strings).
pub(crate) fn container_rest(b: &[u8], from: usize, depth: u32) -> usize {
    container_rest_by(Way::best(), b, from, depth)
}

/// One past the quote closing a string whose bytes from `b[from]` on are still inside it
/// (`from` not escaped).
pub(crate) fn string_rest(b: &[u8], from: usize) -> usize {
    string_rest_by(Way::best(), b, from)
}

/// [`container_rest`], reading chunks `way`.
fn container_rest_by(way: Way, b: &[u8], from: usize, depth: u32) -> usize {
    match way {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Way::Avx512` is only made where the processor has AVX-512 F and BW and
        // PCLMULQDQ.
        Way::Avx512 => unsafe { container_rest_avx512(b, from, depth) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Way::Avx2` is only made where the processor has AVX2 and PCLMULQDQ.
        Way::Avx2 => unsafe { container_rest_avx2(b, from, depth) },
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        Way::Sse2 => container_end(b, from, depth, classes::read_sse2::<true>),
        Way::Bytes => container_end(b, from, depth, classes::read_bytes::<true>),
    }
}

/// [`string_rest`], reading chunks `way`.
fn string_rest_by(way: Way, b: &[u8], from: usize) -> usize {
    match way {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `container_rest_by`.
        Way::Avx512 => unsafe { string_rest_avx512(b, from) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `container_rest_by`.
        Way::Avx2 => unsafe { string_rest_avx2(b, from) },
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        Way::Sse2 => string_end(b, from, classes::read_sse2::<true>),
        Way::Bytes => string_end(b, from, classes::read_bytes::<true>),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,pclmulqdq")]
fn container_rest_avx512(b: &[u8], from: usize, depth: u32) -> usize {
    container_end(b, from, depth, |chunk, carry| {
        classes::read_avx512::<true>(chunk, carry)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,pclmulqdq")]
fn container_rest_avx2(b: &[u8], from: usize, depth: u32) -> usize {
    container_end(b, from, depth, |chunk, carry| {
        classes::read_avx2::<true>(chunk, carry)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,pclmulqdq")]
fn string_rest_avx512(b: &[u8], from: usize) -> usize {
    string_end(b, from, |chunk, carry| {
        classes::read_avx512::<true>(chunk, carry)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,pclmulqdq")]
fn string_rest_avx2(b: &[u8], from: usize) -> usize {
    string_end(b, from, |chunk, carry| {
        classes::read_avx2::<true>(chunk, carry)
    })
}

/// The chunks of `b` from `start`, each read by `read` (the last one padded with spaces,
/// which change nothing here) and given with its place to `each` until it says where to stop.
#[inline(always)]
fn each_read(
    b: &[u8],
    start: usize,
    read: impl Fn(&[u8; CHUNK], &mut Carry) -> Chunk,
    mut each: impl FnMut(usize, &Chunk) -> Option<usize>,
) -> usize {
    let mut carry = Carry::default();
    let mut at = start;
    while let Some(chunk) = b.get(at..at + CHUNK) {
        let chunk = read(chunk.try_into().expect("a chunk"), &mut carry);
        if let Some(end) = each(at, &chunk) {
            return end;
        }
        at += CHUNK;
    }
    if at < b.len() {
        let mut last = [b' '; CHUNK];
        last[..b.len() - at].copy_from_slice(&b[at..]);
        if let Some(end) = each(at, &read(&last, &mut carry)) {
            return end.min(b.len());
        }
    }
    b.len()
}

#[inline(always)]
fn container_end(
    b: &[u8],
    from: usize,
    depth: u32,
    read: impl Fn(&[u8; CHUNK], &mut Carry) -> Chunk,
) -> usize {
    let mut depth = depth;
    each_read(b, from, read, |at, chunk| {
        let outside = !chunk.strings.inside;
        let opens = chunk.classes.open & outside;
        let closes = chunk.classes.close & outside;
        // The bracket that closes it is in this chunk only if there are enough closers.
        if closes.count_ones() < depth {
            depth = depth + opens.count_ones() - closes.count_ones();
            return None;
        }
        let mut brackets = opens | closes;
        while brackets != 0 {
            let k = brackets.trailing_zeros();
            if opens >> k & 1 == 1 {
                depth += 1;
            } else {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(at + k as usize + 1);
                }
            }
            brackets &= brackets - 1;
        }
        None
    })
}

#[inline(always)]
fn string_end(b: &[u8], from: usize, read: impl Fn(&[u8; CHUNK], &mut Carry) -> Chunk) -> usize {
    each_read(b, from, read, |at, chunk| {
        let quotes = chunk.strings.quotes;
        (quotes != 0).then(|| at + quotes.trailing_zeros() as usize + 1)
    })
}

/// One past the quote closing a string whose bytes from `b[from]` on are still inside it
/// (`from` not escaped), when every byte before that quote is one a string may hold and every
/// escape is one of JSON's; `None` when something is wrong (the caller, reading byte by byte,
/// says what and where) or the text ends first.
pub(crate) fn checked_string_rest<N: super::scan::Note>(
    b: &[u8],
    from: usize,
    note: &mut N,
) -> Option<usize> {
    let mut state = State::default();
    let mut failed = false;
    let mut closed = false;
    let end = each_chunk(b, from, |at, m| {
        let escaped = state.escaped(m.backslash);
        let (quotes, _) = state.strings_with(m.quote, escaped);
        // The bytes up to the closing quote (all of them when it is not in this chunk).
        let upto = match quotes {
            0 => u64::MAX,
            q => (q & q.wrapping_neg()) - 1,
        };
        let mut escapes = escaped & upto;
        if m.control & upto != 0 {
            failed = true;
            return Some(0);
        }
        while escapes != 0 {
            let p = at + escapes.trailing_zeros() as usize;
            let ok = match b.get(p) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => true,
                Some(b'u') => b.get(p + 1..p + 5).is_some_and(|h| {
                    if super::scan::is_surrogate_hex(h) {
                        note.surrogate();
                    }
                    h.iter().all(u8::is_ascii_hexdigit)
                }),
                _ => false,
            };
            if !ok {
                failed = true;
                return Some(0);
            }
            escapes &= escapes - 1;
        }
        closed = quotes != 0;
        closed.then(|| at + quotes.trailing_zeros() as usize + 1)
    });
    (closed && !failed).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse2_masks_are_the_bytes_masks() {
        let mut chunk = [0u8; CHUNK];
        for round in 0..64u32 {
            for (k, b) in chunk.iter_mut().enumerate() {
                *b = b"\"\\{}[]a \x80\xff"[(k as u32 * 7 + round * 13) as usize % 10];
            }
            assert_eq!(masks(&chunk), masks_scalar(&chunk));
        }
    }

    #[test]
    fn prefix_xor_marks_the_bytes_between_quotes() {
        assert_eq!(prefix_xor(0b1001), 0b0111);
        assert_eq!(prefix_xor(1 << 63), 1 << 63);
        assert_eq!(prefix_xor(0b11), 0b01);
    }

    /// Ends of values found byte by byte, the way the grammar scan skips them.
    fn slow_end(b: &[u8], start: usize) -> usize {
        super::super::scan::value_end(b, start).unwrap()
    }

    #[test]
    fn ends_are_those_of_the_grammar_scan() {
        let mut texts = vec![
            r#"{}"#.to_string(),
            r#"[]"#.into(),
            r#"{"a":"}"}"#.into(),
            r#"["\"]",{"b":["\\"]}]"#.into(),
            r#"{"a":"\\\"}\\\\"}"#.into(),
            r#""""#.into(),
            r#""\\""#.into(),
            r#""\"""#.into(),
            r#""a\\\\\"b""#.into(),
        ];
        // Backslash runs of every length placed across every chunk boundary, brackets in
        // strings, deep nesting.
        for run in 0..6 {
            for pad in 0..70 {
                let bs = "\\".repeat(run * 2);
                let fill = "x".repeat(pad);
                texts.push(format!(
                    r#"{{"t":"{fill}{bs}\"]}}{bs}","u":[{{"v":"{bs}"}}]}}"#
                ));
                texts.push(format!(r#""{fill}{bs}\"{bs}""#));
                texts.push(format!(r#"[{fill:?},"{bs}\\\"",[[["]"]]],{{}}]"#));
            }
        }
        texts.push(format!("{}{}", "[".repeat(300), "]".repeat(300)));
        texts.push(format!("{}1{}", "{\"a\":[".repeat(100), "]}".repeat(100)));
        for text in &texts {
            let b = text.as_bytes();
            let start = 0;
            let expected = slow_end(b, start);
            for way in Way::supported() {
                let end = |b: &[u8]| match b[start] {
                    b'"' => string_rest_by(way, b, start + 1),
                    _ => container_rest_by(way, b, start + 1, 1),
                };
                assert_eq!(end(b), expected, "{way:?} {text}");
                // The same value with more text after it.
                let longer = format!("{text}, {text} ]}}");
                assert_eq!(end(longer.as_bytes()), expected, "{way:?} {longer}");
            }
            // And what skipping it with the scalar scan does.
            assert_eq!(super::super::scan::skip_valid(b, start), expected, "{text}");
        }
    }

    #[test]
    fn invalid_text_never_panics() {
        for text in [&b"{"[..], b"[[[", b"\"abc", b"{\"a\":\"\\", b"]]]", b"\"\\"] {
            for way in Way::supported() {
                assert!(container_rest_by(way, text, 1, 1) <= text.len());
                assert!(string_rest_by(way, text, 1) <= text.len());
            }
        }
    }

    /// A JSON value made from `seed`: strings with runs of backslashes, quotes and brackets
    /// in them, long and short; objects and arrays nested a few deep.
    fn generated(seed: &mut u64, depth: u32, out: &mut String) {
        let mut next = |n: u64| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) % n
        };
        match if depth > 4 { 0 } else { next(4) } {
            0 => {
                out.push('"');
                for _ in 0..next(90) {
                    match next(9) {
                        0 => out.push_str(&"\\\\".repeat(next(3) as usize)),
                        1 => out.push_str("\\\""),
                        2 => out.push_str("\\n"),
                        3 => out.push_str("]}[{"),
                        4 => out.push_str("\\u00e9"),
                        _ => out.push_str("text "),
                    }
                }
                out.push('"');
            }
            1 => out.push_str(["1", "-2.5e3", "true", "null"][next(4) as usize]),
            2 => {
                out.push('[');
                for k in 0..next(5) {
                    if k > 0 {
                        out.push(',');
                    }
                    generated(seed, depth + 1, out);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for k in 0..next(5) {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&format!("\"k{k}\":"));
                    generated(seed, depth + 1, out);
                }
                out.push('}');
            }
        }
    }

    #[test]
    fn generated_values_end_where_the_grammar_scan_says() {
        let mut seed = 7;
        for _ in 0..3000 {
            let mut text = String::new();
            generated(&mut seed, 0, &mut text);
            let after = format!("{text} ,{text}]");
            let b = after.as_bytes();
            let expected = slow_end(b, 0);
            assert_eq!(expected, text.len());
            assert_eq!(super::super::scan::skip_valid(b, 0), expected, "{text}");
            for way in Way::supported() {
                if b[0] == b'"' {
                    assert_eq!(string_rest_by(way, b, 1), expected, "{way:?} {text}");
                } else if matches!(b[0], b'{' | b'[') {
                    assert_eq!(container_rest_by(way, b, 1, 1), expected, "{way:?} {text}");
                }
            }
        }
    }
}
