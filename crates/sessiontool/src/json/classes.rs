//! The bytes of a 64-byte chunk that the chunked grammar check ([`super::quick`]) looks at, a
//! bit per byte (bit `k` is byte `k`), and its strings ([`super::strings`]): AVX-512 or AVX2,
//! with a carry-less multiply, when the processor has them (asked once), else SSE2, which
//! every x86-64 processor has; byte by byte elsewhere. Tests hold each to the byte-by-byte
//! way.

use super::skip::CHUNK;
use super::strings::{Carry, Strings, prefix_xor_shifts, strings};

/// One chunk's bytes by what they are to the grammar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Classes {
    pub quote: u64,
    pub backslash: u64,
    /// Below 0x20: never raw in a string; outside strings only `\t`, `\n` and `\r` may be.
    pub control: u64,
    pub space: u64,
    /// `{`, `}`, `[`, `]`, `:` and `,`.
    pub structural: u64,
    /// `{` and `[`, `}` and `]`: only for a skip (below), which needs no other class.
    pub open: u64,
    pub close: u64,
}

/// What a reading is for: `true` for a skip ([`super::skip`]: quotes, backslashes, `open` and
/// `close`), `false` for the grammar check (every class but those two).
pub(super) type ForSkip = bool;

/// A chunk classified, with its strings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Chunk {
    pub classes: Classes,
    pub strings: Strings,
}

/// A way to read chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Way {
    Bytes,
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    Sse2,
    /// AVX2 and PCLMULQDQ: only [`Way::best`] (and tests) make it, when the processor has them.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 (F and BW) and PCLMULQDQ: likewise.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Way {
    /// The quickest way this processor has (asked once: the answer is cached).
    pub(super) fn best() -> Way {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("pclmulqdq") {
                if has!("avx512f") && has!("avx512bw") {
                    return Way::Avx512;
                }
                return Way::Avx2;
            }
            #[cfg(target_feature = "sse2")]
            return Way::Sse2;
        }
        #[allow(unreachable_code)]
        Way::Bytes
    }

    /// Every way this processor has, slowest first (for tests).
    #[cfg(test)]
    pub(super) fn supported() -> Vec<Way> {
        #[allow(unused_mut)]
        let mut ways = vec![Way::Bytes];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        ways.push(Way::Sse2);
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("pclmulqdq") {
                ways.push(Way::Avx2);
                if has!("avx512f") && has!("avx512bw") {
                    ways.push(Way::Avx512);
                }
            }
        }
        ways
    }
}

/// Byte by byte, strings by shifts: other processors, and what tests hold the others to.
pub(super) fn read_bytes<const SKIP: ForSkip>(chunk: &[u8; CHUNK], carry: &mut Carry) -> Chunk {
    let classes = classify_bytes::<SKIP>(chunk);
    let strings = strings(classes.quote, classes.backslash, carry, prefix_xor_shifts);
    Chunk { classes, strings }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(super) fn read_sse2<const SKIP: ForSkip>(chunk: &[u8; CHUNK], carry: &mut Carry) -> Chunk {
    // SAFETY: the build targets SSE2 (the cfg above), so the processor has it.
    let classes = unsafe { sse2::<SKIP>(chunk) };
    let strings = strings(classes.quote, classes.backslash, carry, prefix_xor_shifts);
    Chunk { classes, strings }
}

/// Only where the processor has AVX2 and PCLMULQDQ ([`Way::Avx2`]); inlined into the caller
/// that has them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,pclmulqdq")]
#[inline]
pub(super) fn read_avx2<const SKIP: ForSkip>(chunk: &[u8; CHUNK], carry: &mut Carry) -> Chunk {
    use std::arch::x86_64::*;
    // Kept opaque: inlined into the walk, LLVM took the masks apart bit by bit (ten times
    // the instructions); a pass through the stack costs ten.
    let classes = std::hint::black_box(avx2::<SKIP>(chunk));
    // A carry-less product with all ones is the XOR of every bit with those below it.
    let prefix_xor = |x: u64| {
        let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
        _mm_cvtsi128_si64(product) as u64
    };
    let strings = strings(classes.quote, classes.backslash, carry, prefix_xor);
    Chunk { classes, strings }
}

/// Only where the processor has AVX-512 (F, BW) and PCLMULQDQ ([`Way::Avx512`]); inlined
/// into the caller that has them. The 64 bytes are compared at once, into bit masks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,pclmulqdq")]
#[inline]
pub(super) fn read_avx512<const SKIP: ForSkip>(chunk: &[u8; CHUNK], carry: &mut Carry) -> Chunk {
    use std::arch::x86_64::*;
    // SAFETY: an unaligned load of the chunk's 64 bytes.
    let v = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
    let is = |byte: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(byte as i8));
    let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    let open = _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'{' as i8));
    let close = _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'}' as i8));
    let classes = match SKIP {
        true => Classes {
            quote: is(b'"'),
            backslash: is(b'\\'),
            open,
            close,
            ..Classes::default()
        },
        false => Classes {
            quote: is(b'"'),
            backslash: is(b'\\'),
            control: _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)),
            space: is(b' '),
            structural: open | close | is(b':') | is(b','),
            ..Classes::default()
        },
    };
    let prefix_xor = |x: u64| {
        let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
        _mm_cvtsi128_si64(product) as u64
    };
    let strings = strings(classes.quote, classes.backslash, carry, prefix_xor);
    Chunk { classes, strings }
}

/// Byte by byte: other processors, and what tests hold the others to.
pub(super) fn classify_bytes<const SKIP: ForSkip>(chunk: &[u8; CHUNK]) -> Classes {
    let mut c = Classes::default();
    for (k, &b) in chunk.iter().enumerate() {
        let bit = 1u64 << k;
        match b {
            0..0x20 => c.control |= bit,
            b' ' => c.space |= bit,
            b'"' => c.quote |= bit,
            b'\\' => c.backslash |= bit,
            b'{' | b'[' => c.open |= bit,
            b'}' | b']' => c.close |= bit,
            b':' | b',' => c.structural |= bit,
            _ => {}
        }
    }
    match SKIP {
        true => Classes {
            quote: c.quote,
            backslash: c.backslash,
            open: c.open,
            close: c.close,
            ..Classes::default()
        },
        false => Classes {
            structural: c.structural | c.open | c.close,
            open: 0,
            close: 0,
            ..c
        },
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn sse2<const SKIP: ForSkip>(chunk: &[u8; CHUNK]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes::default();
    for part in 0..4 {
        // SAFETY: an unaligned load of 16 of the chunk's 64 bytes.
        let v = unsafe { _mm_loadu_si128(chunk.as_ptr().add(part * 16).cast()) };
        let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16) << (part * 16);
        let is = |byte: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8));
        // `{` and `[` differ only in 0x20, as do `}` and `]` (`:` and `,` have it already,
        // but so would control bytes folded onto them).
        let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let open = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8));
        let close = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8));
        c.quote |= bits(is(b'"'));
        c.backslash |= bits(is(b'\\'));
        if SKIP {
            c.open |= bits(open);
            c.close |= bits(close);
            continue;
        }
        let structural = _mm_or_si128(_mm_or_si128(open, close), _mm_or_si128(is(b':'), is(b',')));
        // A byte is below 0x20 when it is its minimum with 0x1f (unsigned).
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        c.control |= bits(control);
        c.space |= bits(is(b' '));
        c.structural |= bits(structural);
    }
    c
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn avx2<const SKIP: ForSkip>(chunk: &[u8; CHUNK]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes::default();
    for part in 0..2 {
        // SAFETY: an unaligned load of 32 of the chunk's 64 bytes.
        let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().add(part * 32).cast()) };
        let bits = |x: __m256i| u64::from(_mm256_movemask_epi8(x) as u32) << (part * 32);
        let is = |byte: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(byte as i8));
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        let open = _mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'{' as i8));
        let close = _mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'}' as i8));
        c.quote |= bits(is(b'"'));
        c.backslash |= bits(is(b'\\'));
        if SKIP {
            c.open |= bits(open);
            c.close |= bits(close);
            continue;
        }
        let brackets = _mm256_or_si256(open, close);
        let structural = _mm256_or_si256(brackets, _mm256_or_si256(is(b':'), is(b',')));
        let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v);
        c.control |= bits(control);
        c.space |= bits(is(b' '));
        c.structural |= bits(structural);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way this processor has reads `chunk` as bytes do.
    fn check<const SKIP: ForSkip>(chunk: &[u8; CHUNK], carry: Carry) {
        let mut want_carry = carry;
        let want = read_bytes::<SKIP>(chunk, &mut want_carry);
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            let mut got_carry = carry;
            assert_eq!(read_sse2::<SKIP>(chunk, &mut got_carry), want, "{chunk:?}");
            assert_eq!(got_carry, want_carry);
        }
        #[cfg(target_arch = "x86_64")]
        if Way::supported().contains(&Way::Avx2) {
            let mut got_carry = carry;
            // SAFETY: the processor has AVX2 and PCLMULQDQ (`Way::supported` asked).
            let got = unsafe { read_avx2::<SKIP>(chunk, &mut got_carry) };
            assert_eq!(got, want, "{chunk:?}");
            assert_eq!(got_carry, want_carry);
        }
        #[cfg(target_arch = "x86_64")]
        if Way::supported().contains(&Way::Avx512) {
            let mut got_carry = carry;
            // SAFETY: the processor has AVX-512 F and BW and PCLMULQDQ (asked).
            let got = unsafe { read_avx512::<SKIP>(chunk, &mut got_carry) };
            assert_eq!(got, want, "{chunk:?}");
            assert_eq!(got_carry, want_carry);
        }
    }

    #[test]
    fn every_way_reads_as_byte_by_byte() {
        let mut chunk = [0u8; CHUNK];
        let mut seed = 1u64;
        for round in 0..4000u32 {
            for (k, b) in chunk.iter_mut().enumerate() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *b = if round < 4 {
                    // Every byte value, at every place.
                    (k as u32 + round * 64) as u8
                } else {
                    let pool = b"\"\\{}[]:, \t\n\r\x00\x1f\x1a\x0c\x7f\x80\xffa0";
                    pool[(seed >> 33) as usize % pool.len()]
                };
            }
            let carry = Carry {
                escape_next: round % 3 == 0,
                in_string: round % 5 == 0,
            };
            check::<false>(&chunk, carry);
            check::<true>(&chunk, carry);
        }
    }
}
