//! Pass one and the nodes made one at a time against the whole reader: the same metadata,
//! diagnostics, ids, parents, head, kinds and nodes (hints included), on the fixtures and
//! every prefix of them, on generated sessions full of merges, whole records, repeated keys
//! and damage, with blocks of every size (groups whose records lie in several blocks), from
//! memory and from a file.

use std::path::Path;

use super::{Known, Scanner};
use crate::engine::pass1::{self, Pass1Options};
use crate::engine::reading::{Reading, each_node};
use crate::engine::{Bytes, FileSource, MadeFor, Source};
use crate::formats::qwen_jsonl::QwenJsonl;
use crate::formats::{Input, gemini_content};
use crate::model::{Body, Node, Role};

const QWEN_JSONL: &dyn crate::formats::Format = &QwenJsonl;

const NAME: &str = "t.jsonl";

fn known(source: &dyn Source, block_size: usize) -> Known {
    let scanner = Scanner {
        name: NAME,
        source,
        calls: true,
    };
    pass1::known(source, NAME, &scanner, Pass1Options { block_size })
        .unwrap()
        .unwrap()
}

fn same(bytes: &[u8], what: &str) {
    let whole = QWEN_JSONL
        .read(&Input {
            name: NAME,
            path: None,
            bytes,
        })
        .expect("the qwen reader reads anything");
    let s = &whole.session;
    let said = |d: &[crate::diag::Diagnostic]| -> Vec<String> {
        d.iter().map(|d| format!("{d}")).collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(NAME);
    std::fs::write(&path, bytes).unwrap();
    let file = FileSource::new(std::fs::File::open(&path).unwrap()).unwrap();
    let memory = Bytes(bytes);
    for (source, block_size) in [
        (&memory as &dyn Source, 4 << 20),
        (&memory, 1),
        (&memory, 97),
        (&file, 1),
        (&file, 4 << 20),
    ] {
        let at = |x: &str| format!("{what} (block {block_size}): {x}");
        let k = known(source, block_size);
        assert_eq!(s.meta, *k.meta(), "{}", at("meta"));
        assert_eq!(
            said(&whole.diagnostics),
            said(k.diagnostics()),
            "{}",
            at("diagnostics")
        );
        assert_eq!(s.nodes.len(), k.spots().len(), "{}", at("nodes"));
        let sk = k.skeleton();
        for (i, n) in s.nodes.iter().enumerate() {
            let i = i as u32;
            assert_eq!(n.id, sk.name(i), "{}", at("id"));
            let parent = sk.parent_id(i).map(|p| sk.ids.name(p).to_string());
            assert_eq!(n.parent, parent, "{}", at("parent"));
            assert_eq!(
                matches!(n.body, Body::Message(_)),
                k.is_message(i),
                "{}",
                at("kind")
            );
            assert_eq!(n.timestamp.is_some(), k.timed(i), "{}", at("timed"));
        }
        // The calls pass one knows: each node's, and those no result answers.
        for (i, n) in s.nodes.iter().enumerate() {
            let known: Vec<String> = k
                .calls
                .iter()
                .filter(|c| c.0 == i as u32)
                .map(|c| c.2.to_string())
                .collect();
            assert_eq!(gemini_content::calls_of(n), known, "{}", at("calls"));
        }
        let all: Vec<u32> = (0..s.nodes.len() as u32).collect();
        assert_eq!(
            crate::check::document::unanswered_calls(s).len(),
            k.open_calls,
            "{}",
            at("open calls")
        );
        let tree = s.tree();
        let head = k.head().or_else(|| (s.nodes.len() as u32).checked_sub(1));
        assert_eq!(tree.head(), head.map(|h| h as usize), "{}", at("head"));
        // What `list` shows of the head branch.
        let path = tree.head().map(|h| tree.path_to(h)).unwrap_or_default();
        let prompt = |t: &str| t.trim().len() > 3;
        let mut want = (0, None);
        for &i in &path {
            if let Some(m) = s.nodes[i].message() {
                want.0 += usize::from(matches!(m.role, Role::User | Role::Assistant));
                if want.1.is_none() && m.role == Role::User && prompt(&m.text()) {
                    want.1 = Some(m.text());
                }
            }
        }
        let path: Vec<u32> = path.iter().map(|&i| i as u32).collect();
        let got = k.head_branch(source, &path, &prompt).unwrap();
        assert_eq!(
            want,
            (got.messages, got.first_prompt),
            "{}",
            at("head branch")
        );
        let mut made = 0;
        each_node(&k, source, &all, MadeFor::OwnWriter, |i, node| {
            assert_eq!(s.nodes[i as usize], node, "{}", at(&format!("node {i}")));
            made += 1;
        })
        .unwrap();
        assert_eq!(made, s.nodes.len(), "{}", at("nodes made"));
        // For anyone else: the same nodes, but for the bytes only this format's writer reads.
        let bare = |n: &Node| Node {
            origin: None,
            ..n.clone()
        };
        each_node(&k, source, &all, MadeFor::Anyone, |i, node| {
            assert_eq!(
                bare(&s.nodes[i as usize]),
                bare(&node),
                "{}",
                at(&format!("node {i} for anyone"))
            );
        })
        .unwrap();
    }
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/qwen-jsonl");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (path.display().to_string(), std::fs::read(&path).unwrap())
        })
        .collect();
    out.sort();
    assert!(out.len() >= 5);
    out
}

#[test]
fn every_fixture_and_every_prefix_of_one_reads_as_the_whole_reader_reads_it() {
    for (name, bytes) in fixtures() {
        same(&bytes, &name);
        // Prefixes: cut inside records and at line ends.
        let step = (bytes.len() / 25).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            same(&bytes[..cut], &format!("{name} cut at {cut}"));
        }
    }
}

#[test]
fn merged_groups_whole_records_and_damage_read_as_the_whole_reader_reads_them() {
    let cases: &[&str] = &[
        // A group over lines far apart, its later records changing what it is.
        "{\"uuid\":\"a\",\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"parts\":[\"one\"]}}\n{\"uuid\":\"b\",\"parentUuid\":\"a\",\"type\":\"assistant\"}\n{\"uuid\":\"a\",\"type\":\"assistant\",\"parentUuid\":\"x\",\"message\":{\"parts\":[\"two\"]},\"sessionId\":\"t\"}\n",
        "{\"uuid\":\"a\",\"type\":\"system\"}\n{\"uuid\":\"b\",\"parentUuid\":\"a\",\"type\":\"system\",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":\"kept?\"}}\n{\"uuid\":\"a\",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":\"late\"}}\n",
        "{\"uuid\":\"a\",\"type\":\"system\",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":\"first\"}}\n{\"uuid\":\"b\",\"type\":\"note\"}\n{\"uuid\":\"b\",\"type\":\"system\",\"subtype\":\"x\"}\n",
        "{\"uuid\":\"a\",\"sessionId\":\"s\"}\n{\"uuid\":\"b\"}\n{\"uuid\":\"b\",\"sessionId\":\"other\"}\n{\"uuid\":\"c\",\"sessionId\":\"other\"}\n",
        // Whole records and names that collide with them.
        "[1,2]\n\"str\"\n{\"no\":\"uuid\"}{\"uuid\":\"line-1\",\"type\":\"user\"}\n{\"uuid\":\"line-3\",\"parentUuid\":\"line-1\",\"type\":\"user\"}\n{\"uuid\":\"line-1\",\"message\":{\"parts\":[\"merged\"]}}\n{\"x\":1}",
        // A lone surrogate, a number beyond a double, nesting past serde's limit.
        "{\"uuid\":\"a\",\"type\":\"user\",\"s\":\"\\ud800\",\"n\":1e999}\n{\"uuid\":\"a\",\"message\":{\"parts\":[\"\\udc00\"]}}\n",
        &format!(
            "{{\"uuid\":\"a\",\"type\":\"user\",\"d\":{}{}}}\n{{\"uuid\":\"b\",\"parentUuid\":\"a\",\"type\":\"user\"}}\n",
            "[".repeat(200),
            "]".repeat(200)
        ),
        // Tool calls: answered, not, answered only by a merged record, named twice, no id,
        // a part that is text first.
        concat!(
            r#"{"uuid":"a","type":"assistant","message":{"parts":[{"functionCall":{"id":"c1","name":"ls"}},{"functionCall":{"id":"c2","name":"cat","name":"cat2"}},{"functionCall":{"name":"noid"}},{"text":"t","functionCall":{"id":"c9","name":"x"}},{"functionCall":{"id":5,"name":"n"}},{"functionCall":{"id":"c3","name":7}}]}}"#,
            "\n",
            r#"{"uuid":"b","parentUuid":"a","type":"tool_result","message":{"parts":[{"functionResponse":{"id":"c1","name":"ls","response":{}}}]}}"#,
            "\n",
            r#"{"uuid":"c","parentUuid":"b","type":"assistant","message":{"parts":[{"functionCall":{"id":"c1","name":"again"}},{"functionCall":{"id":"c4","name":"grep"}}]}}"#,
            "\n",
            r#"{"uuid":"b","message":{"parts":[{"functionResponse":{"id":"c2","response":{}}}]}}"#,
            "\n",
            r#"{"uuid":"d","parentUuid":"c","type":"system","subtype":"x","message":{"parts":[{"functionResponse":{"id":"c4"}}]}}"#,
            "\n",
            r#"{"uuid":"e","type":"user"}"#,
            "\n",
            r#"{"uuid":"e","type":"user","message":{"parts":[{"functionCall":{"id":"c5","name":"late"}}]}}"#,
            "\n",
        ),
        // Damage the records layer names.
        "\u{feff}{\"uuid\":\"a\",\"type\":\"user\"}\r\n{\"uuid\":\"a\",\"type\":\"user\"}\0\0\n{\"uuid\":\"b\",\"ty",
    ];
    for (i, case) in cases.iter().enumerate() {
        same(case.as_bytes(), &format!("case {i}: {case}"));
    }
    same(
        b"{\"uuid\":\"a\",\"type\":\"user\",\"message\":{\"parts\":[\"\xff\"]}}\n{\"uuid\":\"a\"}\xff\n",
        "invalid UTF-8",
    );
}

/// Repeated keys, parts of every kind, merges, titles, whole records and names colliding with
/// them, what only `JSON.parse` takes, damage, timestamps, escaped keys.
#[test]
fn edge_cases_read_as_the_whole_reader_reads_them() {
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
        same(case.as_bytes(), &format!("edge case {i}: {case}"));
    }
}

#[test]
fn generated_sessions_read_as_the_whole_reader_reads_them() {
    let mut rng = Rng(0x2a55_0e0f_9b1d_7c33);
    for n in 0..400 {
        let bytes = session(&mut rng);
        same(
            &bytes,
            &format!("generated {n}: {}", String::from_utf8_lossy(&bytes)),
        );
    }
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
