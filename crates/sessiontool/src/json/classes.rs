//! The bytes of a 64-byte chunk that the chunked grammar check ([`super::quick`]) looks at, a
//! bit per byte (bit `k` is byte `k`): AVX2 when the processor has it (asked once), else
//! SSE2, which every x86-64 processor has; byte by byte elsewhere. Tests hold each to the
//! byte-by-byte masks.

use super::skip::CHUNK;

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
}

/// A way to classify a chunk.
pub(super) type Classify = fn(&[u8; CHUNK]) -> Classes;

/// The quickest way this processor has.
pub(super) fn best() -> Classify {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            return classify_avx2;
        }
        #[cfg(target_feature = "sse2")]
        return classify_sse2;
    }
    #[allow(unreachable_code)]
    classify_bytes
}

/// Byte by byte: other processors, and what tests hold the others to.
pub(super) fn classify_bytes(chunk: &[u8; CHUNK]) -> Classes {
    let mut c = Classes::default();
    for (k, &b) in chunk.iter().enumerate() {
        let bit = 1u64 << k;
        match b {
            0..0x20 => c.control |= bit,
            b' ' => c.space |= bit,
            b'"' => c.quote |= bit,
            b'\\' => c.backslash |= bit,
            b'{' | b'}' | b'[' | b']' | b':' | b',' => c.structural |= bit,
            _ => {}
        }
    }
    c
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(super) fn classify_sse2(chunk: &[u8; CHUNK]) -> Classes {
    // SAFETY: the build targets SSE2 (the cfg above), so the processor has it.
    unsafe { sse2(chunk) }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn sse2(chunk: &[u8; CHUNK]) -> Classes {
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
        let brackets = _mm_or_si128(
            _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)),
            _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)),
        );
        let structural = _mm_or_si128(brackets, _mm_or_si128(is(b':'), is(b',')));
        // A byte is below 0x20 when it is its minimum with 0x1f (unsigned).
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        c.quote |= bits(is(b'"'));
        c.backslash |= bits(is(b'\\'));
        c.control |= bits(control);
        c.space |= bits(is(b' '));
        c.structural |= bits(structural);
    }
    c
}

#[cfg(target_arch = "x86_64")]
fn classify_avx2(chunk: &[u8; CHUNK]) -> Classes {
    // SAFETY: only chosen by `best` when the processor has AVX2.
    unsafe { avx2(chunk) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn avx2(chunk: &[u8; CHUNK]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes::default();
    for part in 0..2 {
        // SAFETY: an unaligned load of 32 of the chunk's 64 bytes.
        let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().add(part * 32).cast()) };
        let bits = |x: __m256i| u64::from(_mm256_movemask_epi8(x) as u32) << (part * 32);
        let is = |byte: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(byte as i8));
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        let brackets = _mm256_or_si256(
            _mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'{' as i8)),
            _mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'}' as i8)),
        );
        let structural = _mm256_or_si256(brackets, _mm256_or_si256(is(b':'), is(b',')));
        let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v);
        c.quote |= bits(is(b'"'));
        c.backslash |= bits(is(b'\\'));
        c.control |= bits(control);
        c.space |= bits(is(b' '));
        c.structural |= bits(structural);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way this build and processor can classify, with its name.
    pub(crate) fn every_way() -> Vec<(&'static str, Classify)> {
        #[allow(unused_mut)]
        let mut ways: Vec<(&'static str, Classify)> = vec![("bytes", classify_bytes)];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        ways.push(("sse2", classify_sse2));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            ways.push(("avx2", classify_avx2));
        }
        ways
    }

    #[test]
    fn every_way_classifies_as_byte_by_byte() {
        let mut chunk = [0u8; CHUNK];
        let mut seed = 1u64;
        for round in 0..2000u32 {
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
            let want = classify_bytes(&chunk);
            for (name, way) in every_way() {
                assert_eq!(way(&chunk), want, "{name}: {chunk:?}");
            }
        }
        assert_eq!(best()(&chunk), classify_bytes(&chunk));
    }
}
