//! How figures and commands are written in the report: medians, MB and MB/s, multiples,
//! seconds, instruction counts, a command line as it would be typed. Plain functions of std
//! only, so `tests/bench_format.rs` checks them in the default test run (the bench itself runs
//! only under `cargo bench`).

use std::ffi::OsString;

/// The median of some values (NaN for none).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// 12345.6 -> "12,346"; below 100 with one decimal.
pub fn thousands(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    if x < 100.0 {
        return format!("{x:.1}");
    }
    count(x.round() as u64)
}

/// A whole number with thousands separators: 1234567 -> "1,234,567".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 1234567 -> "1.23 M".
pub fn si(x: f64) -> String {
    if x >= 1e12 {
        format!("{:.2} T", x / 1e12)
    } else if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Bytes as MB or GB (10^6, 10^9).
pub fn size(b: u64) -> String {
    if b >= 1_000_000_000 {
        format!("{:.2} GB", b as f64 / 1e9)
    } else if b >= 10_000_000 {
        format!("{:.0} MB", b as f64 / 1e6)
    } else {
        format!("{:.1} MB", b as f64 / 1e6)
    }
}

/// A multiple: `7.0×`, `0.04×`.
pub fn times(x: f64) -> String {
    if x < 1.0 {
        format!("{x:.2}×")
    } else {
        format!("{x:.1}×")
    }
}

/// Seconds: `0.25 s`, `12.3 s`.
pub fn secs(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.2} s")
    } else {
        format!("{s:.1} s")
    }
}

/// The last non-empty line of a command's standard error, cut to 120 characters, with any
/// control character (a terminal escape) shown as `?` and `|` escaped for a Markdown table:
/// what a failed cell quotes.
pub fn last_line(text: &str) -> Option<String> {
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    let mut out: String = line
        .chars()
        .take(120)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if line.chars().count() > 120 {
        out.push('…');
    }
    Some(out.replace('|', "\\|"))
}

/// A command line as a POSIX shell would take it back: each word quoted only when it needs to
/// be, with `'` inside a word written `'\''`; `env` (name, value) pairs first.
pub fn shell_line(env: &[(String, String)], argv: &[OsString]) -> String {
    let word = |w: &str| {
        let plain = !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
        if plain {
            w.to_string()
        } else {
            format!("'{}'", w.replace('\'', "'\\''"))
        }
    };
    env.iter()
        .map(|(k, v)| format!("{k}={}", word(v)))
        .chain(argv.iter().map(|a| word(&a.to_string_lossy())))
        .collect::<Vec<_>>()
        .join(" ")
}
