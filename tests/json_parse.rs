//! `sessiontool::json` accepts exactly what JavaScript's `JSON.parse` accepts: checked against
//! Node itself on hand-written cases and on thousands of mutations of real records (cut,
//! bytes flipped, inserted, deleted, escapes broken), and for each accepted value the entry
//! `JSON.parse` keeps for a repeated key is the one `Raw::get` returns.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use sessiontool::json::{Kind, Raw, scan};

/// Runs `JSON.parse` on each case in one Node process; for each: `None` when it throws,
/// `Some(JSON.stringify(v["k"]))` for an object (`"-"` otherwise).
fn node_verdicts(cases: &[String]) -> Option<Vec<Option<String>>> {
    let script = r#"
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(c => {
  try {
    const v = JSON.parse(c);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      return JSON.stringify(v.k === undefined ? null : v.k);
    }
    return '-';
  } catch (e) { return null; }
});
process.stdout.write(JSON.stringify(out));
"#;
    let mut child = match Command::new("node")
        .arg("-e")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) => return None,
    };
    let input = serde_json::to_vec(cases).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// A prerequisite that is missing: a failure in CI, said on standard error elsewhere.
fn not_run(why: &str) {
    common::prerequisite::present(false, why);
}

/// What our side says for a case, in the shape `node_verdicts` gives.
fn ours(case: &str) -> Option<String> {
    let raw = Raw::parse(case).ok()?;
    if raw.kind() != Kind::Object {
        return Some("-".into());
    }
    Some(match raw.get("k") {
        None => "null".into(),
        // Re-encode through JSON.stringify's rules: decoded and escaped again, as Node does.
        Some(v) => restringify(v),
    })
}

/// `JSON.stringify(JSON.parse(text))` for a value, for comparison with Node's output.
fn restringify(v: Raw) -> String {
    let mut buf = Vec::new();
    let mut out = sessiontool::json::Out::new(&mut buf, sessiontool::json::Style::JS);
    match v.kind() {
        Kind::String => {
            let t = v.as_str().unwrap();
            if t.lossy {
                // Node keeps the lone surrogate and writes it back as `\udxxx`.
                return lone_surrogates_as_node_writes(v.text());
            }
            out.str(&t.value);
        }
        Kind::Number => {
            let f = v.as_f64();
            return match f {
                Some(f) => js_number(f),
                None => "null".into(),
            };
        }
        _ => {
            out.raw(v);
        }
    }
    String::from_utf8(buf).unwrap()
}

/// JavaScript's number to string, for the values the cases use.
fn js_number(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    if f.abs() >= 1e21 || f.abs() < 1e-6 {
        let s = format!("{f:e}");
        return if s.contains("e-") {
            s
        } else {
            s.replace('e', "e+")
        };
    }
    if f.fract() == 0.0 {
        return format!("{}", f as i128);
    }
    format!("{f}")
}

/// A string literal with a lone surrogate, as `JSON.stringify` writes it after `JSON.parse`:
/// other escapes normalised, the surrogate kept as a lowercase `\udxxx`.
fn lone_surrogates_as_node_writes(literal: &str) -> String {
    let inner = &literal[1..literal.len() - 1];
    let mut units: Vec<u16> = Vec::new();
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let c = b[i + 1];
            let u = match c {
                b'u' => {
                    let u = u16::from_str_radix(&inner[i + 2..i + 6], 16).unwrap();
                    i += 6;
                    units.push(u);
                    continue;
                }
                b'n' => 10,
                b't' => 9,
                b'r' => 13,
                b'b' => 8,
                b'f' => 12,
                other => other as u16,
            };
            units.push(u);
            i += 2;
        } else {
            let ch = inner[i..].chars().next().unwrap();
            let mut buf = [0u16; 2];
            units.extend_from_slice(ch.encode_utf16(&mut buf));
            i += ch.len_utf8();
        }
    }
    let mut s = String::from("\"");
    let mut k = 0;
    while k < units.len() {
        let u = units[k];
        if (0xD800..0xDC00).contains(&u)
            && units
                .get(k + 1)
                .is_some_and(|l| (0xDC00..0xE000).contains(l))
        {
            s.push(
                char::decode_utf16([u, units[k + 1]])
                    .next()
                    .unwrap()
                    .unwrap(),
            );
            k += 2;
            continue;
        }
        match u {
            0xD800..=0xDFFF => s.push_str(&format!("\\u{u:04x}")),
            0x22 => s.push_str("\\\""),
            0x5C => s.push_str("\\\\"),
            0x0A => s.push_str("\\n"),
            0x0D => s.push_str("\\r"),
            0x09 => s.push_str("\\t"),
            0x08 => s.push_str("\\b"),
            0x0C => s.push_str("\\f"),
            u if u < 0x20 => s.push_str(&format!("\\u{u:04x}")),
            u => s.push(char::from_u32(u as u32).unwrap()),
        }
        k += 1;
    }
    s.push('"');
    s
}

fn hand_written() -> Vec<String> {
    [
        r#"{"k":1,"k":2}"#,
        r#"{"k":"\ud83d"}"#,
        r#"{"k":"a\udc00b\ud800"}"#,
        r#"{"k":"\ud83d\ude00"}"#,
        r#"{"k":1e400}"#,
        r#"{"k":-0}"#,
        r#"{"k":123456789012345678901234567890}"#,
        r#"{"k":1e5}"#,
        r#"{"k":{"a":[1,{"b":null}]},"k":[true,false]}"#,
        r#"{"k":1,}"#,
        r#"{"k":01}"#,
        r#"{"k":"\x41"}"#,
        "{\"k\":\"\t\"}",
        "{\"k\":\"\u{7f}\"}",
        r#"{'k':1}"#,
        r#"{"k":NaN}"#,
        r#"{"k":.5}"#,
        "\u{feff}{}",
        " \t\n\r{} \n",
        "{}\u{a0}",
        r#"[1,2]"#,
        r#""\u0000""#,
        r#"{"k":"\/"}"#,
        r#"{"\u006b":2}"#,
        r#"{"k":1}{"k":2}"#,
        "",
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

/// Mutations of every JSONL line of the fixtures: deterministic, thousands.
fn mutations() -> Vec<String> {
    let mut lines = Vec::new();
    for dir in [
        "qwen-jsonl",
        "claude-jsonl",
        "codex-jsonl",
        "pi-jsonl",
        "llxprt-jsonl",
    ] {
        for e in std::fs::read_dir(common::fixture(dir)).unwrap().flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            lines.extend(text.lines().filter(|l| l.len() < 4000).map(String::from));
        }
    }
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut out = Vec::new();
    for line in &lines {
        out.push(line.clone());
        for _ in 0..12 {
            let mut b = line.as_bytes().to_vec();
            if b.is_empty() {
                continue;
            }
            let at = (next() as usize) % b.len();
            match next() % 7 {
                0 => b.truncate(at),
                1 => {
                    b.remove(at);
                }
                2 => b.insert(at, b"{}[],:\"\\0-eE.u"[(next() % 14) as usize]),
                3 => b[at] = b"{}[],:\"\\0 tnf"[(next() % 13) as usize],
                4 => {
                    let esc: &[u8] = [&b"\\ud83d"[..], b"\\udc00", b"\\u00", b"\\x", b"\\"]
                        [(next() % 5) as usize];
                    let pos = (at..b.len()).find(|&i| b[i] == b'"').unwrap_or(at);
                    b.splice(pos..pos, esc.iter().copied());
                }
                5 => {
                    // A key given twice.
                    if let Some(pos) = b.iter().position(|&c| c == b'{') {
                        b.splice(pos + 1..pos + 1, b"\"k\":7,".iter().copied());
                        b.splice(
                            b.len() - 1..b.len() - 1,
                            b",\"k\":[\"last\"]".iter().copied(),
                        );
                    }
                }
                _ => b.insert(at, b' '),
            }
            if let Ok(s) = String::from_utf8(b) {
                out.push(s);
            }
        }
    }
    out
}

#[test]
fn accepts_exactly_what_json_parse_accepts() {
    let mut cases = hand_written();
    cases.extend(mutations());
    let Some(verdicts) = node_verdicts(&cases) else {
        return not_run("node is not installed");
    };
    let mut disagree = Vec::new();
    for (case, node) in cases.iter().zip(&verdicts) {
        let mine = ours(case);
        if &mine != node {
            disagree.push(format!(
                "{case:?}\n  JSON.parse: {node:?}\n  ours:       {mine:?}"
            ));
        }
    }
    assert!(
        disagree.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagree.len(),
        cases.len(),
        disagree
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    println!("{} cases agree with JSON.parse", cases.len());
}

#[test]
fn a_value_cut_anywhere_is_cut_short_not_wrong() {
    let line = std::fs::read_to_string(common::fixture("qwen-jsonl/plain.jsonl")).unwrap();
    let first = line.lines().next().unwrap();
    for cut in 1..first.len() {
        if !first.is_char_boundary(cut) {
            continue;
        }
        let e = scan::validate(&first.as_bytes()[..cut]).unwrap_err();
        assert!(e.cut_short, "{cut}: {e}");
    }
}

/// An outlined object's keys come in file order, a repeated key each time it stands, escapes
/// decoded, without the values being read again.
#[test]
fn outlined_keys_are_the_objects_keys_in_file_order() {
    let text = r#" {"a":1,"b":{"c":[2,{"x":0}]},"a":"3","\u0064":null} "#;
    let outlined = sessiontool::json::Outlined::parse(text).unwrap();
    let keys: Vec<String> = outlined.keys().map(|k| k.to_cow().into_owned()).collect();
    assert_eq!(keys, ["a", "b", "a", "d"]);
    assert!(sessiontool::json::Outlined::parse("[1]").is_none());
    let empty = sessiontool::json::Outlined::parse("{}").unwrap();
    assert_eq!(empty.keys().count(), 0);
}
