//! Nodes made from the entry's text ([`super::raw_node`]) held to the nodes made through its
//! `serde_json::Value` ([`Known::node_by_value`], the reference): on every line of the fixtures
//! and samples, each line changed in the ways the text path must notice (keys repeated or
//! escaped, blocks of every shape, values of the wrong kind, numbers and escapes serde_json
//! reads otherwise), and generated sessions; for both users the text path serves.

use std::path::Path;

use serde_json::{Value, json};

use super::two_pass::{Known, Scanner};
use crate::engine::pass1::{self, Pass1Options};
use crate::engine::{Bytes, MadeFor, pass2};

const NAME: &str = "t.jsonl";

/// Every node of `bytes` made both ways, for both users; how many the text path made.
fn same_nodes(bytes: &[u8], what: &str) -> usize {
    let source = Bytes(bytes);
    let known: Known = pass1::known(
        &source,
        NAME,
        &Scanner::new(NAME, true),
        Pass1Options::default(),
    )
    .unwrap();
    let all: Vec<u32> = (0..known.spots.len() as u32).collect();
    let mut by_text = 0;
    pass2::each_record(&source, &known.spots, &all, |i, record| {
        for made_for in [MadeFor::Counting, MadeFor::Anyone] {
            let reference = known.node_by_value(i, record, made_for);
            if let Some(node) = known.message_from_text(i, record, made_for) {
                let line = String::from_utf8_lossy(record);
                // `Debug`, not `==`: maps compare equal in any order, and the order of their
                // keys is written out.
                assert_eq!(
                    format!("{node:?}"),
                    format!("{reference:?}"),
                    "{what}, {made_for:?}, line {i}: {line}"
                );
                by_text += 1;
            }
            assert_eq!(
                format!("{:?}", known.node(i, record, made_for)),
                format!("{:?}", known.node_through_value(i, record, made_for)),
                "{what}, {made_for:?}, line {i}"
            );
        }
    })
    .unwrap();
    by_text
}

/// The `.jsonl` files under the fixtures and the shared samples.
fn files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack = vec![root.join("fixtures"), root.join("../../../shared/samples")];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "jsonl") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_fixture_and_sample_gives_the_same_nodes_both_ways() {
    let mut by_text = 0;
    for path in files() {
        let bytes = std::fs::read(&path).unwrap();
        by_text += same_nodes(&bytes, &path.display().to_string());
    }
    assert!(by_text > 300, "only {by_text} nodes made from their text");
}

/// Changes of one line's text that the text path must read as the `Value` path does (or leave
/// to it).
fn variants(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut replace = |from: &str, to: &str| {
        if line.contains(from) {
            out.push(line.replacen(from, to, 1));
        }
    };
    // Keys repeated at each level, escaped, spaced.
    replace("{\"parentUuid\":", "{\"parentUuid\":\"x\",\"parentUuid\":");
    replace(
        "\"message\":{",
        "\"message\":{\"role\":1,\"role\":\"user\",",
    );
    replace("\"message\":{", "\"message\":{\"model\":7,");
    replace("\"message\":{", "\"message\":{\"usage\":[],");
    replace("\"message\":{", "\"message\":{\"content\":\"first\",");
    replace("{\"type\":\"text\",", "{\"type\":\"text\",\"text\":\"a\",");
    replace(
        "{\"type\":\"tool_use\",",
        "{\"type\":\"tool_use\",\"id\":\"b\",",
    );
    replace("\"uuid\":", "\"u\\u0075id\":");
    replace("\"type\":\"text\"", "\"t\\u0079pe\":\"text\"");
    replace("\"isSidechain\":", "\"isSidechain\" : ");
    replace(",\"", ", \"");
    // Values of other kinds.
    replace("\"parentUuid\":\"", "\"parentUuid\":null,\"x\":\"");
    replace("\"parentUuid\":", "\"parentUuid\":3,\"y\":");
    replace("\"timestamp\":\"", "\"timestamp\":1,\"z\":\"");
    replace("\"role\":\"assistant\"", "\"role\":\"user\"");
    replace("\"role\":\"user\"", "\"role\":\"assistant\"");
    replace("\"role\":\"user\"", "\"role\":[\"user\"]");
    replace("\"model\":\"", "\"model\":null,\"m\":\"");
    replace(
        "\"usage\":{",
        "\"usage\":{\"input_tokens\":1e3,\"x\":[1.50,-0],",
    );
    replace(
        "\"usage\":{",
        "\"usage\":{\"input_tokens\":18446744073709551615,\"output_tokens\":-1,",
    );
    replace("\"usage\":{", "\"usage\":{\"output_tokens\":1,");
    replace(
        "\"usage\":{",
        "\"usage\":{\"input_tokens\":\"5\",\"output_tokens\":5.0,\"x\":{},",
    );
    replace(
        "\"usage\":{",
        "\"usage\":{\"cache_creation_input_tokens\":18446744073709551615,\"c\\u0061\":1,",
    );
    replace(
        "\"usage\":{",
        "\"usage\":{\"cache_read_input_tokens\":-0,\"z\":[],",
    );
    replace("\"is_error\":false", "\"is_error\":true");
    replace("\"is_error\":false", "\"is_error\":\"no\"");
    replace(
        "\"type\":\"tool_result\",",
        "\"type\":\"tool_result\",\"is_error\":true,",
    );
    replace(
        "\"type\":\"tool_result\",",
        "\"type\":\"tool_result\",\"is_error\":0,",
    );
    replace("\"signature\":\"", "\"signature\":5,\"s\":\"");
    replace(
        "\"type\":\"thinking\",",
        "\"type\":\"thinking\",\"extra\":{\"a\":[]},",
    );
    replace("\"tool_use_id\":\"", "\"tool_use_id\":9,\"t\":\"");
    replace("\"input\":", "\"inputs\":");
    replace("\"content\":[", "\"content\":[7,\"s\",[],null,");
    replace(
        "\"content\":[",
        "\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"u\"}},",
    );
    replace(
        "\"content\":[",
        "\"content\":[{\"type\":\"redacted_thinking\",\"data\":\"d\"},{\"type\":\"x\"},{},",
    );
    replace("\"content\":[", "\"content\":{\"a\":[");
    replace(
        "\"content\":\"",
        "\"content\":\"\\/\\u00e9\\ud83d\\ude00\\n",
    );
    replace("\"content\":\"", "\"content\":\"\\ud83d");
    replace("\"text\":\"", "\"text\":\"\\\"\\\\\\b\\f\\r\\t\\u0001");
    // Key order and numbers as written, at every level (a repeated key keeps its first place
    // and its last value).
    replace(
        "\"input\":{",
        "\"input\":{\"k\":1,\"j\":[2.50,-0,1E2],\"k\":{\"z\":1,\"a\":2},",
    );
    // Flat objects (built without serde_json): every kind of scalar, and what sends one back.
    replace(
        "\"input\":{",
        "\"input\":{\"n\":0,\"m\":-5,\"t\":true,\"z\":null,\"e\":1E5,\"f\":-0,\"g\":18446744073709551616,",
    );
    replace("\"input\":{", "\"input\":{\"s\":\"a\\ud800b\",");
    replace("\"input\":{", "\"input\":{\"s\":\"\\u00e9\\n\\/\",\"s\":2,");
    replace("\"input\":{", "\"input\":{\"\\u0073\":\"x\",");
    replace("\"input\":{", "\"input\":{\"n\" : 12 , \"o\":\"p\" ,");
    replace(
        "{\"type\":\"text\",",
        "{\"zz\":1.0,\"type\":\"text\",\"aa\":[],",
    );
    replace(
        "{\"type\":\"tool_result\",",
        "{\"zz\":-0,\"type\":\"tool_result\",\"c\\u0061\":1,",
    );
    replace("{\"parentUuid\":", "{\"zeta\":1.0,\"parentUuid\":");
    replace(
        "\"toolUseResult\":{",
        "\"toolUseResult\":{\"b\":1,\"a\":2.50,\"b\":3,\"\\ud800\":4,",
    );
    replace("\"message\":{", "\"message\":{\"zz\":{\"y\":1,\"x\":0.10},");
    replace("\"type\":\"user\"", "\"type\":\"system\"");
    replace("\"type\":\"assistant\"", "\"type\":\"user\"");
    replace("\"cwd\":\"", "\"cwd\":\"elsewhere");
    replace("\"version\":\"", "\"version\":2,\"v\":\"");
    if let Some(stripped) = line.strip_suffix('}') {
        out.push(format!("{stripped},\"alpha\":{{\"b\":1,\"a\":2e-3}}}}"));
    }
    out.push(line.replacen("{", "{\"a\":[[[[1e400]]]],", 1));
    let many: String = (0..40).map(|k| format!("\"f{k}\":{k},")).collect();
    out.push(line.replacen("{", &format!("{{{many}"), 1));
    let deep = "[".repeat(120) + &"]".repeat(120);
    out.push(line.replacen("{", &format!("{{\"deep\":{deep},"), 1));
    out
}

#[test]
fn changed_lines_give_the_same_nodes_both_ways() {
    let mut by_text = 0;
    let mut lines = 0;
    for path in files() {
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        // A session's first chain entry decides its base fields: each changed line is read
        // after the file's first lines, and alone.
        let head: String = text.lines().take(8).flat_map(|l| [l, "\n"]).collect();
        for line in text.lines().filter(|l| l.contains("\"message\":{")) {
            for changed in variants(line) {
                let mut session = head.clone();
                session.push_str(&changed);
                by_text += same_nodes(session.as_bytes(), &path.display().to_string());
                by_text += same_nodes(changed.as_bytes(), &path.display().to_string());
                lines += 1;
            }
            if lines > 4000 {
                break;
            }
        }
    }
    assert!(lines > 1000, "only {lines} changed lines");
    assert!(by_text > 1000, "only {by_text} nodes made from their text");
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
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len() as u64) as usize]
    }
}

/// A string with the characters escaping and decoding care about.
fn some_text(r: &mut Rng) -> String {
    let pieces = [
        "plain",
        " ",
        "\n",
        "\"",
        "\\",
        "é",
        "😀",
        "\u{1}",
        "\t",
        "</>",
        "\u{2028}",
        "{\"a\":1}",
    ];
    (0..r.below(12)).map(|_| r.pick(&pieces)).collect()
}

fn some_value(r: &mut Rng) -> Value {
    match r.below(7) {
        0 => Value::Null,
        1 => json!(r.below(2) == 0),
        2 => json!(r.below(1000)),
        3 => serde_json::from_str("-1.50").unwrap(),
        4 => json!(some_text(r)),
        5 => json!([some_text(r), {"k": r.below(9)}, []]),
        _ => json!({"a": some_text(r), "b": [1, {"c": null}]}),
    }
}

fn some_block(r: &mut Rng) -> Value {
    let mut b = match r.below(9) {
        0 | 1 => json!({"type": "text", "text": some_text(r)}),
        2 => json!({"type": "thinking", "thinking": some_text(r), "signature": "c2ln"}),
        3 => json!({"type": "thinking", "thinking": some_text(r)}),
        4 => json!({"type": "tool_use", "id": format!("t{}", r.below(5)), "name": "Bash",
                    "input": {"command": some_text(r), "n": r.below(3)}}),
        5 => json!({"tool_use_id": format!("t{}", r.below(5)), "type": "tool_result",
                    "content": some_value(r)}),
        6 => json!({"type": "tool_result", "tool_use_id": "t1", "content": some_text(r),
                    "is_error": r.below(2) == 0}),
        7 => json!({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                    "data": "AAAA"}}),
        _ => some_value(r),
    };
    if let Value::Object(m) = &mut b
        && r.below(3) == 0
    {
        m.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
    b
}

fn some_entry(r: &mut Rng, k: u64) -> Value {
    let kind = r.pick(&["user", "assistant", "assistant", "system"]);
    let content = match r.below(4) {
        0 => json!(some_text(r)),
        _ => Value::Array((0..r.below(4)).map(|_| some_block(r)).collect()),
    };
    let mut message = json!({"role": kind, "content": content});
    let m = message.as_object_mut().unwrap();
    if kind == "assistant" {
        m.insert("model".into(), json!(r.pick(&["claude-x", "claude-y"])));
        m.insert("id".into(), json!(format!("msg_{}", r.below(3))));
        if r.below(2) == 0 {
            m.insert(
                "usage".into(),
                json!({"input_tokens": r.below(100), "output_tokens": 5,
                       "cache_read_input_tokens": 2, "cache_creation_input_tokens": 1,
                       "service_tier": "standard"}),
            );
        }
    }
    if r.below(4) == 0 {
        m.insert("stop_reason".into(), some_value(r));
    }
    let mut entry = json!({
        "parentUuid": if k == 0 { Value::Null } else { json!(format!("u{}", k - 1)) },
        "isSidechain": false,
        "cwd": r.pick(&["/p", "/p", "/q"]),
        "sessionId": "s",
        "version": "2.0",
        "type": kind,
        "message": message,
        "uuid": format!("u{}", if r.below(20) == 0 { 0 } else { k }),
        "timestamp": format!("2025-01-01T00:00:{:02}Z", k % 60),
    });
    let e = entry.as_object_mut().unwrap();
    if r.below(3) == 0 {
        e.insert("toolUseResult".into(), some_value(r));
    }
    if r.below(5) == 0 {
        e.insert("requestId".into(), json!("req_1"));
    }
    entry
}

#[test]
fn generated_sessions_give_the_same_nodes_both_ways() {
    let mut by_text = 0;
    for seed in 1..300u64 {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut text = String::new();
        for k in 0..r.below(30) + 1 {
            let line = serde_json::to_string(&some_entry(&mut r, k)).unwrap();
            // Some lines changed as the fixtures' are.
            match r.below(6) {
                0 => {
                    let v = variants(&line);
                    let pick = r.below(v.len() as u64) as usize;
                    text.push_str(&v[pick]);
                }
                _ => text.push_str(&line),
            }
            text.push('\n');
        }
        by_text += same_nodes(text.as_bytes(), &format!("seed {seed}"));
    }
    assert!(by_text > 2000, "only {by_text} nodes made from their text");
}
