//! The quick reading against the full reader: the same nodes (ids, parents, roles), metadata,
//! title and user texts, on the fixtures, on every prefix of the Qwen ones, on hand-made edge
//! cases and on generated sessions full of merges, repeated keys and damage.

use std::path::Path;

use super::{Listing, RAW_VALUE_TOKEN, read};
use crate::formats::qwen_jsonl::QwenJsonl;
use crate::formats::{Format, Input};
use crate::model::{Role, Session};

/// Reads `bytes` both ways and compares; returns whether the quick reading answered.
fn same(bytes: &[u8], what: &str) -> bool {
    let input = Input {
        name: "test.jsonl",
        path: None,
        bytes,
    };
    let full = QwenJsonl
        .read(&input)
        .expect("the qwen reader reads anything")
        .session;
    let Some(quick) = read(bytes) else {
        // It gives up on the raw-value token, and on JSON that only JSON.parse takes (a
        // lone surrogate escape, a number beyond a double), which the full reader reads.
        assert!(
            only_js(bytes)
                || bytes
                    .windows(RAW_VALUE_TOKEN.len())
                    .any(|w| w == RAW_VALUE_TOKEN.as_bytes()),
            "{what}: the quick reading gave up without the raw-value token"
        );
        return false;
    };
    compare(&full, &quick, what);
    true
}

/// Whether a line holds JSON only `JSON.parse` takes (serde_json refuses it).
fn only_js(bytes: &[u8]) -> bool {
    bytes.split(|&b| b == b'\n').any(|l| {
        serde_json::from_slice::<serde_json::Value>(l).is_err()
            && crate::json::scan::validate(l).is_ok()
    })
}

fn compare(full: &Session, quick: &Listing, what: &str) {
    let (a, b) = (&full.meta, &quick.session.meta);
    assert_eq!(a.id, b.id, "{what}: id");
    assert_eq!(a.cwd, b.cwd, "{what}: cwd");
    assert_eq!(a.start_time, b.start_time, "{what}: start");
    assert_eq!(a.last_updated, b.last_updated, "{what}: last update");
    assert_eq!(a.title, b.title, "{what}: title");
    assert_eq!(a.summary, b.summary, "{what}: summary");
    assert_eq!(a.head, b.head, "{what}: head");
    assert_eq!(a.directories, b.directories, "{what}: directories");
    assert_eq!(a.project_hash, b.project_hash, "{what}: project hash");
    let ids = |s: &Session| -> Vec<(String, Option<String>, Option<Role>)> {
        s.nodes
            .iter()
            .map(|n| (n.id.clone(), n.parent.clone(), n.message().map(|m| m.role)))
            .collect()
    };
    assert_eq!(ids(full), ids(&quick.session), "{what}: nodes");
    for (i, n) in full.nodes.iter().enumerate() {
        if let Some(m) = n.message()
            && m.role == Role::User
        {
            assert_eq!(m.text(), quick.text(i), "{what}: text of node {i}");
        }
    }
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let samples = root.join("../../../shared/samples");
    // The fixtures are read either way; the real samples when they are here.
    crate::prerequisite::present(
        samples.is_dir(),
        &format!("the real samples: {} is absent", samples.display()),
    );
    for dir in [root.join("fixtures"), samples]
        .into_iter()
        .filter(|d| d.is_dir())
    {
        for entry in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let entry = entry.expect("fixtures are readable");
            if entry.file_type().is_file() {
                let path = entry.path();
                let bytes = std::fs::read(path).expect("fixture");
                files.push((path.display().to_string(), bytes));
            }
        }
    }
    assert!(files.len() > 20, "fixtures found: {}", files.len());
    files
}

#[test]
fn every_fixture_reads_the_same() {
    for (name, bytes) in fixtures() {
        same(&bytes, &name);
    }
}

#[test]
fn every_prefix_of_the_qwen_fixtures_reads_the_same() {
    for (name, bytes) in fixtures() {
        let qwen = name.contains("qwen") || name.contains("/damaged/");
        if !qwen || !name.ends_with(".jsonl") {
            continue;
        }
        // Every offset near the start and the end, a sample between.
        let step = (bytes.len() / 300).max(1);
        for cut in (0..=bytes.len()).filter(|&c| c < 64 || c + 64 > bytes.len() || c % step == 0) {
            same(&bytes[..cut], &format!("{name} cut at {cut}"));
        }
    }
}

#[test]
fn edge_cases_read_the_same() {
    let cases: &[&str] = &[
        // Repeated keys: the last value counts.
        r#"{"uuid":"a","uuid":"b","type":"user","message":{"parts":[{"text":"x"}]}}"#,
        r#"{"uuid":"a","type":"user","type":"zzz","message":{"parts":[{"text":"x"}],"parts":[{"text":"y"}]}}"#,
        r#"{"uuid":"a","type":"user","message":{"parts":[{"text":"x","text":"y"},{"text":"t","thought":true,"thought":false}]}}"#,
        r#"{"uuid":"a","uuid":5,"type":"user"}"#,
        // Parts of every kind.
        r#"{"uuid":"a","type":"user","message":{"parts":["plain",{"text":"t","thought":true},{"text":5},3,null,{"functionCall":{"name":"f"}},{"text":"é \" \\ \n end"}]}}"#,
        r#"{"uuid":"a","type":"user","message":{"parts":{"text":"not an array"}}}"#,
        r#"{"uuid":"a","type":"user","message":"text"}"#,
        // Merges.
        "{\"uuid\":\"a\",\"type\":\"user\",\"message\":{\"parts\":[{\"text\":\"one\"}]}}\n{\"uuid\":\"a\",\"type\":\"assistant\",\"message\":{\"parts\":[{\"text\":\"two\"}]}}",
        "{\"uuid\":\"a\",\"type\":\"user\"}\n{\"uuid\":\"a\",\"message\":{\"parts\":[\"late\"]}}\n{\"uuid\":\"a\",\"message\":{\"parts\":[\"later\"]}}",
        "{\"uuid\":\"a\",\"type\":\"user\",\"message\":{}}\n{\"uuid\":\"a\",\"message\":{\"parts\":\"x\"}}\n{\"uuid\":\"a\",\"message\":{\"parts\":[\"y\"]}}",
        "{\"uuid\":\"a\",\"type\":\"user\",\"message\":5}\n{\"uuid\":\"a\",\"message\":{\"parts\":[\"y\"]}}",
        "{\"uuid\":\"a\",\"type\":\"system\"}\n{\"uuid\":\"a\",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":\"late\"}}",
        "{\"uuid\":\"a\",\"type\":\"system\",\"subtype\":null}\n{\"uuid\":\"a\",\"subtype\":\"custom_title\"}",
        // Titles.
        "{\"uuid\":\"a\",\"type\":\"system\",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":\"first\"}}\n{\"uuid\":\"b\",\"type\":\"system\",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":\" \"}}\n{\"uuid\":\"c\",\"type\":\"system\",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":5}}",
        "{\"uuid\":\"a\",\"type\":\"system\",\"subtype\":\"custom_title\",\"systemPayload\":[\"x\"]}",
        // Whole records, their names, and ids that collide with them.
        "[1,2]\n\"str\"\n{\"no\":\"uuid\"}{\"uuid\":\"line-1\",\"type\":\"user\"}\n{\"uuid\":\"line-3\",\"parentUuid\":\"line-1\",\"type\":\"user\"}",
        "{\"uuid\":\"a\"}\n{\"x\":1}{\"y\":2}{\"uuid\":\"b\",\"parentUuid\":\"a\",\"type\":\"assistant\"}",
        // What a `Value` refuses and a lenient parse would take.
        "{\"uuid\":\"a\",\"type\":\"user\",\"n\":1e999}",
        "{\"uuid\":\"a\",\"type\":\"user\",\"n\":-1e400}",
        "{\"uuid\":\"a\",\"type\":\"user\",\"s\":\"\\ud800\"}",
        "{\"uuid\":\"a\",\"type\":\"user\",\"s\":\"\\udc00x\"}",
        "{\"uuid\":\"a\",\"type\":\"user\",\"s\":\"\\ud83d\\ude00\"}",
        // Damage.
        "\u{feff}{\"uuid\":\"a\",\"type\":\"user\"}\n",
        "{\"uuid\":\"a\",\"type\":\"user\"}\r\n{\"uuid\":\"b\",\"parentUuid\":\"a\",\"type\":\"user\"}\r\n",
        "{\"uuid\":\"a\",\"type\":\"user\"}\n\n   \n{\"uuid\":\"b\",\"type\":\"user\"}\n\0\0\0",
        "{\"uuid\":\"a\",\"type\":\"user\"}\0\0{\"uuid\":\"b\",\"type\":\"user\"}\n",
        "{\"uuid\":\"a\",\"type\":\"user\"}\n{\"uuid\":\"b\",\"type\":\"us",
        "{\"uuid\":\"a\",\"ty{\"uuid\":\"b\",\"type\":\"user\"}\n",
        "{\"uuid\":\"a\",\"type\":\"user\"} 5\n",
        // Timestamps.
        "{\"uuid\":\"a\",\"timestamp\":\"2025-02\"}\n{\"uuid\":\"b\",\"timestamp\":\"2025-01\"}\n{\"uuid\":\"c\",\"timestamp\":5}\n{\"uuid\":\"a\",\"timestamp\":\"2026\"}",
        "{\"x\":1}\n{\"uuid\":\"b\",\"sessionId\":\"s\",\"cwd\":\"/p\",\"timestamp\":\"t\"}\n{\"uuid\":\"c\",\"sessionId\":\"s2\"}",
        "{\"uuid\":\"b\",\"sessionId\":5,\"cwd\":null}",
        // Escaped keys are the same keys.
        "{\"\\u0075uid\":\"a\",\"type\":\"user\",\"message\":{\"part\\u0073\":[\"x\"]}}",
    ];
    for (i, case) in cases.iter().enumerate() {
        assert!(
            same(case.as_bytes(), &format!("case {i}: {case}")) || only_js(case.as_bytes()),
            "case {i}"
        );
    }
    // Bytes that are not UTF-8, inside and outside strings.
    for case in [
        &b"{\"uuid\":\"a\",\"type\":\"user\",\"message\":{\"parts\":[\"\xff\"]}}\n"[..],
        &b"{\"uuid\":\"a\",\"type\":\"user\"}\xff\n"[..],
    ] {
        assert!(same(case, "invalid UTF-8"));
    }
    // Nesting deeper than a `Value` takes.
    let deep = format!(
        "{{\"uuid\":\"a\",\"type\":\"user\",\"d\":{}{}}}\n{{\"uuid\":\"b\",\"type\":\"user\"}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    // serde_json refuses it (its limit is 128), so the quick reading leaves it to the full one.
    assert!(!same(deep.as_bytes(), "deep") && only_js(deep.as_bytes()));
    let full = QwenJsonl
        .read(&Input {
            name: "deep.jsonl",
            path: None,
            bytes: deep.as_bytes(),
        })
        .unwrap()
        .session;
    assert_eq!(full.nodes.len(), 2, "JSON.parse reads a record 200 deep");
    let fine = format!(
        "{{\"uuid\":\"a\",\"type\":\"user\",\"d\":{}{}}}",
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(same(fine.as_bytes(), "nested"));
    // The raw-value token: left to the full reader.
    let token =
        format!("{{\"uuid\":\"a\",\"type\":\"user\",\"x\":{{\"{RAW_VALUE_TOKEN}\":\"{{}}\"}}}}");
    assert!(!same(token.as_bytes(), "token"));
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn parts(rng: &mut Rng) -> String {
    const PARTS: &[&str] = &[
        r#""plain""#,
        r#"{"text":"hi"}"#,
        r#"{"text":"  "}"#,
        r#"{"text":"line one\nline two \u00e9 \"q\""}"#,
        r#"{"text":"t","thought":true}"#,
        r#"{"thought":true,"text":"t","thought":false}"#,
        r#"{"text":"t","thought":"yes"}"#,
        r#"{"text":5}"#,
        r#"{"text":"x","text":"y"}"#,
        r#"{"functionCall":{"name":"f","args":{"a":[1,2.5,-3e2]}}}"#,
        r#"{"functionResponse":{"id":"c","name":"f","response":{"output":"o"}}}"#,
        "3",
        "null",
    ];
    let n = rng.below(4);
    let items: Vec<&str> = (0..n).map(|_| rng.pick(PARTS)).collect();
    format!("[{}]", items.join(","))
}

/// One record: a random choice of the fields the reading looks at, in random order, some
/// repeated, some of the wrong type.
fn record(rng: &mut Rng) -> String {
    const UUIDS: &[&str] = &[
        r#""a""#,
        r#""b""#,
        r#""c""#,
        r#""d""#,
        r#""e""#,
        r#""line-1""#,
        r#""line-2""#,
        "5",
        "null",
    ];
    let mut fields: Vec<String> = Vec::new();
    let mut add = |rng: &mut Rng, key: &str, value: String| {
        fields.push(format!("\"{key}\":{value}"));
        if rng.below(20) == 0 {
            let i = rng.below(fields.len());
            let last = fields.len() - 1;
            fields.swap(i, last);
        }
    };
    if rng.below(10) != 0 {
        let v = rng.pick(UUIDS).to_string();
        add(rng, "uuid", v);
    }
    if rng.below(4) != 0 {
        let v = rng.pick(UUIDS).to_string();
        add(rng, "parentUuid", v);
    }
    if rng.below(8) != 0 {
        let v = rng
            .pick(&[
                r#""user""#,
                r#""user""#,
                r#""assistant""#,
                r#""tool_result""#,
                r#""system""#,
                r#""note""#,
                "3",
            ])
            .to_string();
        add(rng, "type", v);
    }
    if rng.below(3) == 0 {
        let v = rng
            .pick(&[
                r#""custom_title""#,
                r#""custom_title""#,
                r#""chat_compression""#,
                r#""x""#,
                "1",
                "null",
            ])
            .to_string();
        add(rng, "subtype", v);
    }
    if rng.below(3) == 0 {
        let v = rng
            .pick(&[
                r#"{"customTitle":"Title one"}"#,
                r#"{"customTitle":"Two"}"#,
                r#"{"customTitle":"  "}"#,
                r#"{"customTitle":5}"#,
                r#"{"customTitle":"A","customTitle":"B"}"#,
                r#""str""#,
                "[1]",
                "null",
            ])
            .to_string();
        add(rng, "systemPayload", v);
    }
    if rng.below(4) != 0 {
        let p = parts(rng);
        let v = match rng.below(8) {
            0 => r#""str""#.to_string(),
            1 => "null".to_string(),
            2 => r#"{"role":"user"}"#.to_string(),
            3 => r#"{"parts":"x"}"#.to_string(),
            4 => format!(r#"{{"parts":{p},"parts":{}}}"#, parts(rng)),
            _ => format!(r#"{{"role":"user","parts":{p}}}"#),
        };
        add(rng, "message", v);
    }
    if rng.below(2) == 0 {
        let v = format!("\"2025-01-{:02}T00:00:00Z\"", 1 + rng.below(28));
        add(rng, "timestamp", v);
    }
    if rng.below(2) == 0 {
        let v = rng.pick(&[r#""s1""#, r#""s2""#, "1"]).to_string();
        add(rng, "sessionId", v);
    }
    if rng.below(3) == 0 {
        let v = rng.pick(&[r#""/p""#, r#""/q""#, "null"]).to_string();
        add(rng, "cwd", v);
    }
    if rng.below(3) == 0 {
        add(
            rng,
            "x",
            r#"{"deep":[1,2,{"y":"z\n"}],"n":1e5}"#.to_string(),
        );
    }
    if rng.below(15) == 0 {
        // A repeated key.
        let i = rng.below(fields.len().max(1));
        if let Some(f) = fields.get(i).cloned() {
            fields.push(f);
        }
        let v = rng.pick(UUIDS).to_string();
        fields.push(format!("\"uuid\":{v}"));
    }
    format!("{{{}}}", fields.join(","))
}

fn session(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    let lines = rng.below(12);
    for _ in 0..lines {
        let line = match rng.below(30) {
            0 => "[1,2]".to_string(),
            1 => "{bad".to_string(),
            2 => String::new(),
            3 => format!("{}{}", record(rng), record(rng)),
            4 => format!("{}\0\0", record(rng)),
            5 => {
                let r = record(rng);
                r[..rng.below(r.len())].to_string()
            }
            6 => format!("{}\r", record(rng)),
            _ => record(rng),
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    if rng.below(4) == 0 && !out.is_empty() {
        // A cut anywhere: a torn tail, or a lost final newline.
        let cut = rng.below(out.len());
        out.truncate(cut);
    }
    out
}

#[test]
fn generated_sessions_read_the_same() {
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    for n in 0..3000 {
        let bytes = session(&mut rng);
        same(
            &bytes,
            &format!("generated {n}: {}", String::from_utf8_lossy(&bytes)),
        );
    }
}
