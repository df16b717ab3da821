//! `JSON.stringify` output for a `Value`: compact, with numbers written as JavaScript writes
//! them (`0.000005`, not `5e-6`; `1e+21`, not `1e21`). serde_json's own float format differs
//! from JavaScript's below 1e-5 and at 1e21 and above, and pi's `usage.cost` is full of
//! such numbers.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(js_number(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        writer.write_all(js_number(f64::from(value)).as_bytes())
    }
}

/// The JSON text of `value` (a `Value` or a `Map`) as `JSON.stringify(value)` gives it.
pub(super) fn to_vec<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let mut ser = Serializer::with_formatter(&mut out, JsFormatter);
    value
        .serialize(&mut ser)
        .expect("a Value always serializes");
    out
}

/// `Number.prototype.toString` for a finite number (ECMA-262 Number::toString): the shortest
/// digits that round-trip, in decimal for 1e-7 < |x| < 1e21, else in exponent form.
pub(super) fn js_number(x: f64) -> String {
    if !x.is_finite() {
        return "null".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde-N".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().expect("exponent") + 1;
    let mut s = String::new();
    if x < 0.0 {
        s.push('-');
    }
    if k <= n && n <= 21 {
        s.push_str(&digits);
        s.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        s.push_str(&digits[..n as usize]);
        s.push('.');
        s.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        s.push_str("0.");
        s.extend(std::iter::repeat_n('0', (-n) as usize));
        s.push_str(&digits);
    } else {
        s.push_str(&digits[..1]);
        if k > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        let e = n - 1;
        s.push('e');
        s.push(if e < 0 { '-' } else { '+' });
        s.push_str(&e.abs().to_string());
    }
    s
}
