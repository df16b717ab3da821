//! Which bytes of a 64-byte chunk are escaped and which are inside strings, from its quote
//! and backslash bits, with no loop over the backslashes: what the chunked grammar check
//! ([`super::quick`]) carries from one chunk to the next.

/// What one chunk leaves to the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Carry {
    /// The next chunk's first byte is escaped (this one ended in an odd run of backslashes).
    pub escape_next: bool,
    /// The chunk ended inside a string.
    pub in_string: bool,
}

/// A chunk's strings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Strings {
    /// The quotes that open or close a string (not escaped).
    pub quotes: u64,
    /// The bytes inside strings, an opening quote counting as inside, a closing one outside.
    pub inside: u64,
    /// The bytes escaped by a backslash, except the backslashes that are (those are always
    /// valid escapes).
    pub escaped: u64,
}

const EVEN: u64 = 0x5555_5555_5555_5555;

/// The strings of a chunk with these `quote` and `backslash` bits; `prefix_xor` sets each bit
/// to the XOR of itself and every bit below it.
#[inline(always)]
pub(super) fn strings(
    quote: u64,
    backslash: u64,
    carry: &mut Carry,
    prefix_xor: impl Fn(u64) -> u64,
) -> Strings {
    let escaped_first = u64::from(carry.escape_next);
    // A backslash escaped by the one before the chunk escapes nothing.
    let escapers = backslash & !escaped_first;
    let starts = escapers & !(escapers << 1);
    // Adding a run's first bit to the run carries past its end: the byte after it. Runs that
    // start on an even bit and end before an odd one, or start odd and end before an even
    // one, have an odd length: the byte after them is escaped.
    let after_even = escapers.wrapping_add(starts & EVEN) & !escapers;
    let (odd_sum, past_end) = escapers.overflowing_add(starts & !EVEN);
    let after_odd = odd_sum & !escapers;
    let escaped = (after_even & !EVEN) | (after_odd & EVEN) | escaped_first;
    carry.escape_next = past_end;
    let quotes = quote & !escaped;
    let mut inside = prefix_xor(quotes);
    if carry.in_string {
        inside = !inside;
    }
    carry.in_string = inside >> 63 == 1;
    Strings {
        quotes,
        inside,
        escaped,
    }
}

/// [`strings`]'s `prefix_xor` by shifts, for any processor.
#[inline(always)]
pub(super) fn prefix_xor_shifts(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaped bytes (backslashes excepted) and the carry, one backslash at a time.
    fn escaped_one_by_one(backslash: u64, carry_in: bool) -> (u64, bool) {
        let mut escaped = 0;
        let mut escape = carry_in;
        for k in 0..64 {
            let is_backslash = backslash >> k & 1 == 1;
            if escape {
                if !is_backslash {
                    escaped |= 1 << k;
                }
                escape = false;
            } else if is_backslash {
                escape = true;
            }
        }
        (escaped | u64::from(carry_in), escape)
    }

    #[test]
    fn escapes_are_those_found_one_backslash_at_a_time() {
        let mut seed = 9u64;
        for round in 0..200_000u32 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Dense and sparse backslashes, long runs, runs at both ends.
            let backslash = match round % 4 {
                0 => seed,
                1 => seed & (seed >> 7),
                2 => !(seed & (seed << 3)),
                _ => (seed >> 40) << (seed & 63),
            };
            for carry_in in [false, true] {
                let mut carry = Carry {
                    escape_next: carry_in,
                    in_string: false,
                };
                let got = strings(0, backslash, &mut carry, prefix_xor_shifts);
                let (want, want_next) = escaped_one_by_one(backslash, carry_in);
                // Only the bytes that are not backslashes matter, and the first byte.
                let keep = !backslash | 1;
                assert_eq!(
                    got.escaped & keep,
                    want & keep,
                    "{backslash:064b} {carry_in}"
                );
                assert_eq!(carry.escape_next, want_next, "{backslash:064b} {carry_in}");
            }
        }
        for backslash in [0, u64::MAX, 1 << 63, 3 << 62, EVEN, !EVEN] {
            for carry_in in [false, true] {
                let mut carry = Carry {
                    escape_next: carry_in,
                    in_string: false,
                };
                let got = strings(0, backslash, &mut carry, prefix_xor_shifts);
                let (want, want_next) = escaped_one_by_one(backslash, carry_in);
                let keep = !backslash | 1;
                assert_eq!(got.escaped & keep, want & keep, "{backslash:064b}");
                assert_eq!(carry.escape_next, want_next, "{backslash:064b}");
            }
        }
    }

    #[test]
    fn inside_strings_from_the_unescaped_quotes() {
        let mut carry = Carry::default();
        // `"a\"b" c "` : quotes at 0, 3 (escaped), 5 and 9.
        let got = strings(
            1 | 1 << 3 | 1 << 5 | 1 << 9,
            1 << 2,
            &mut carry,
            prefix_xor_shifts,
        );
        assert_eq!(got.quotes, 1 | 1 << 5 | 1 << 9);
        assert_eq!(got.inside & 0x3ff, 0b10_0001_1111);
        assert!(carry.in_string);
        assert_eq!(prefix_xor_shifts(0b1001), 0b0111);
    }
}
