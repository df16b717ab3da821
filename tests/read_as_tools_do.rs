//! Issue 15, part 1: what the tools' own parsers take is a record for fsck, show, convert and
//! repair alike. Each case below was lost or damaged before engine v2's stage 2: a lone
//! surrogate escape (what `JSON.stringify` writes for a string cut inside an emoji), a
//! repeated key (`JSON.parse` keeps the last), numbers beyond a double, and a record longer
//! than the old 256 MiB line limit. Inputs are built from the fixtures in a temp folder.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn fixture(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn tool() -> Command {
    Command::cargo_bin("sessiontool").expect("binary builds")
}

/// `text` with `insert` placed right after the first `after`.
fn inserted(text: &str, after: &str, insert: &str) -> String {
    let at = text.find(after).expect("the marker is in the fixture") + after.len();
    format!("{}{insert}{}", &text[..at], &text[at..])
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// fsck --json of one file: (errors, the codes found).
fn fsck(path: &Path) -> (u64, Vec<String>) {
    let out = tool().args(["fsck", "--json"]).arg(path).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("fsck --json: {e}: {}", String::from_utf8_lossy(&out.stdout)));
    let file = &report["files"][0];
    let codes = file["issues"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["code"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    let errors = file["issues"]
        .as_array()
        .map(|d| d.iter().filter(|d| d["severity"] == "error").count() as u64)
        .unwrap_or_default();
    (errors, codes)
}

/// `repair` of `path` changes nothing: the file is byte for byte what it was.
fn repair_leaves_alone(path: &Path) {
    let before = fs::read(path).unwrap();
    let out = tool().arg("repair").arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "repair {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs::read(path).unwrap(),
        before,
        "repair changed {}",
        path.display()
    );
}

fn convert(path: &Path, to: &str, out: &Path) -> String {
    let run = tool()
        .arg("convert")
        .arg(path)
        .args(["--to", to, "-o"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "convert {} --to {to}: {}",
        path.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    fs::read_to_string(out).unwrap()
}

fn lines_with(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn a_legacy_gemini_session_with_a_lone_surrogate_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture("gemini-json/plain.json");
    let messages = serde_json::from_str::<Value>(&original).unwrap()["messages"]
        .as_array()
        .unwrap()
        .len();
    assert!(messages >= 4);
    // The first message's text now starts with half an emoji.
    let text = inserted(&original, "\"content\": \"", "cut \\ud83d");
    let path = write(dir.path(), "session-2026-01-05T10-00-2e1cfa82.json", &text);

    let (errors, codes) = fsck(&path);
    assert_eq!(errors, 0, "{codes:?}");
    assert!(
        !codes.iter().any(|c| c == "truncated-document"),
        "{codes:?}"
    );
    assert!(codes.iter().any(|c| c == "json-lossy"), "{codes:?}");
    repair_leaves_alone(&path);

    // Every message converts, the cut text with U+FFFD where the half emoji was.
    let out = convert(&path, "qwen-jsonl", &dir.path().join("out.jsonl"));
    assert_eq!(out.lines().count(), messages, "{out}");
    assert!(out.contains("cut \u{FFFD}"), "{out}");
}

#[test]
fn a_checkpoint_and_a_simple_agent_file_with_a_lone_surrogate_are_readable() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = inserted(
        &fixture("checkpoint/checkpoint-array.json"),
        "\"text\": \"",
        "\\udc00",
    );
    let checkpoint = write(dir.path(), "checkpoint-cut.json", &checkpoint);
    let agent = inserted(
        &fixture("simple-agent-json/plain.json"),
        "\"content\": \"",
        "\\ud800",
    );
    let agent = write(dir.path(), "agent.json", &agent);
    for path in [&checkpoint, &agent] {
        let (errors, codes) = fsck(path);
        assert_eq!(errors, 0, "{}: {codes:?}", path.display());
        let shown = tool().arg("show").arg(path).output().unwrap();
        assert!(shown.status.success(), "show {}", path.display());
        assert!(
            String::from_utf8_lossy(&shown.stdout).contains('\u{FFFD}'),
            "show {}",
            path.display()
        );
    }
}

#[test]
fn a_jsonl_record_with_a_lone_surrogate_is_shown_and_converted() {
    let dir = tempfile::tempdir().unwrap();
    let text = inserted(
        &fixture("claude-jsonl/plain.jsonl"),
        "\"content\":\"",
        "\\ud83d",
    );
    let path = write(dir.path(), "chat.jsonl", &text);
    let (errors, _) = fsck(&path);
    assert_eq!(errors, 0);
    let shown = tool().arg("show").arg(&path).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("\u{FFFD}What does"), "{shown}");
    let out = convert(&path, "qwen-jsonl", &dir.path().join("out.jsonl"));
    assert_eq!(lines_with(&out, "\u{FFFD}What does"), 1, "{out}");
    assert_eq!(out.lines().count(), text.lines().count());
}

#[test]
fn a_record_with_a_repeated_key_keeps_its_place_in_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture("claude-jsonl/plain.jsonl");
    let lines: Vec<&str> = original.lines().collect();
    assert!(lines.len() >= 2);
    // The first record names its type twice; JSON.parse keeps the last (the same value).
    let first = lines[0];
    let twice = format!("{},\"type\":\"user\"}}", &first[..first.len() - 1]);
    let text = format!("{twice}\n{}\n", lines[1..].join("\n"));
    let path = write(dir.path(), "chat.jsonl", &text);

    let (errors, codes) = fsck(&path);
    assert_eq!(errors, 0, "{codes:?}");
    assert!(!codes.iter().any(|c| c.contains("orphan")), "{codes:?}");
    repair_leaves_alone(&path);
    // The reply still answers the first message.
    let out = convert(&path, "qwen-jsonl", &dir.path().join("out.jsonl"));
    let records: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), lines.len());
    assert_eq!(records[1]["parentUuid"], records[0]["uuid"], "{out}");
}

#[test]
fn numbers_beyond_a_double_are_kept_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture("gemini-json/plain.json");
    let numbers = r#""n": 1e400, "i": -123456789012345678901234567890, "f": 1.50, "z": -0, "#;
    let text = inserted(&original, "\"messages\": [\n    {", numbers);
    let path = write(dir.path(), "session-2026-01-05T10-00-2e1cfa82.json", &text);
    let (errors, codes) = fsck(&path);
    assert_eq!(errors, 0, "{codes:?}");
    // Through another format and back: the message and its numbers arrive as they were.
    let jsonl = convert(&path, "gemini-jsonl", &dir.path().join("mid.jsonl"));
    assert!(
        jsonl.contains(r#""n":1e+400,"i":-123456789012345678901234567890,"f":1.50,"z":-0"#),
        "{jsonl}"
    );
    let back = convert(
        &dir.path().join("mid.jsonl"),
        "gemini-json",
        &dir.path().join("back.json"),
    );
    let back: Value = serde_json::from_str(&back).unwrap();
    let first = &back["messages"][0];
    assert_eq!(first["i"].to_string(), "-123456789012345678901234567890");
    assert_eq!(first["n"].to_string(), "1e+400");
    assert_eq!(first["f"].to_string(), "1.50");
    assert_eq!(first["z"].to_string(), "-0");
    // And a Claude record holding them converts (it was dropped before).
    let claude = fixture("claude-jsonl/plain.jsonl");
    let first_line = claude.lines().next().unwrap();
    let big = format!(
        "{},\"big\":1e400}}\n{}\n",
        &first_line[..first_line.len() - 1],
        claude.lines().skip(1).collect::<Vec<_>>().join("\n")
    );
    let path = write(dir.path(), "big.jsonl", &big);
    let plain = write(dir.path(), "plain.jsonl", &claude);
    let want = convert(&plain, "codex-jsonl", &dir.path().join("plain.codex.jsonl"));
    let out = convert(&path, "codex-jsonl", &dir.path().join("big.codex.jsonl"));
    let prompt = "What does `npm test` run here?";
    assert!(lines_with(&want, prompt) > 0);
    assert_eq!(lines_with(&out, prompt), lines_with(&want, prompt), "{out}");
    assert_eq!(out.lines().count(), want.lines().count(), "{out}");
}

#[test]
fn a_record_over_the_old_line_limit_is_a_record() {
    // 260 MiB of text in the first record, a reply after it: before, the record was skipped,
    // the reply called an orphan, and repair relinked it past its parent.
    let dir = tempfile::tempdir().unwrap();
    let claude = fixture("claude-jsonl/plain.jsonl");
    let lines: Vec<&str> = claude.lines().collect();
    let path = dir.path().join("long.jsonl");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(fs::File::create(&path).unwrap());
        let first = lines[0];
        let cut = first.find("\"content\":\"").unwrap() + "\"content\":\"".len();
        f.write_all(&first.as_bytes()[..cut]).unwrap();
        let block = vec![b'x'; 1 << 20];
        for _ in 0..260 {
            f.write_all(&block).unwrap();
        }
        f.write_all(&first.as_bytes()[cut..]).unwrap();
        f.write_all(b"\n").unwrap();
        for l in &lines[1..] {
            f.write_all(l.as_bytes()).unwrap();
            f.write_all(b"\n").unwrap();
        }
    }
    let (errors, codes) = fsck(&path);
    assert_eq!(errors, 0, "{codes:?}");
    assert!(
        !codes
            .iter()
            .any(|c| c.contains("orphan") || c.contains("oversized")),
        "{codes:?}"
    );
    repair_leaves_alone(&path);
}

/// Codex reads each rollout line into a `serde_json::Value` and skips the lines serde_json
/// refuses (a lone surrogate escape, nesting past 128), though `JSON.parse` takes them. fsck,
/// show and repair say the same of them: no record of the session for Codex, left as written.
#[test]
fn codex_and_fsck_agree_on_the_lines_serde_json_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let mut lines: Vec<String> = fixture("codex-jsonl/messages.jsonl")
        .lines()
        .map(str::to_string)
        .collect();
    // A paired escape (an emoji) is read by both: not flagged.
    lines[3] = inserted(&lines[3], "\"text\":\"", "\\ud83c\\udf45 ");
    lines[8] = inserted(&lines[8], "\"text\":\"", "\\ud83d");
    lines.push(format!(
        r#"{{"timestamp":"2026-01-12T08:00:06.000Z","type":"event_msg","payload":{{"type":"other","deep":{deep}}}}}"#
    ));
    let rollout = write(dir.path(), "rollout.jsonl", &(lines.join("\n") + "\n"));

    let legacy = fixture("codex-legacy-jsonl/early.jsonl");
    let legacy = inserted(&legacy, "\"text\":\"", "\\udc00");
    let legacy = write(dir.path(), "legacy.jsonl", &legacy);

    for (path, format, refused) in [
        (&rollout, "codex-jsonl", vec![9, 11]),
        (&legacy, "codex-legacy-jsonl", vec![2]),
    ] {
        let out = tool()
            .args(["fsck", "--json", "--from", format])
            .arg(path)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let flagged: Vec<u64> = report["files"][0]["issues"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["code"] == "not-a-record")
            .inspect(|i| {
                let message = i["message"].as_str().unwrap();
                assert!(message.starts_with("Codex cannot parse this line"), "{i}");
            })
            .map(|i| i["line"].as_u64().unwrap())
            .collect();
        assert_eq!(flagged, refused, "fsck of {format}: {report}");

        let shown = tool()
            .args(["show", "--json", "--from", format])
            .arg(path)
            .output()
            .unwrap();
        let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
        let unparseable: Vec<u64> = shown["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "codex-unparseable")
            .map(|d| d["location"]["line"].as_u64().unwrap())
            .collect();
        assert_eq!(unparseable, refused, "show of {format}: {shown}");
    }
    repair_leaves_alone(&rollout);
    // The legacy fixture has a call without a result, which a repair answers; the line Codex
    // skips stays as written.
    let refused_line = fs::read_to_string(&legacy)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    tool().arg("repair").arg(&legacy).output().unwrap();
    let repaired = fs::read_to_string(&legacy).unwrap();
    assert_eq!(repaired.lines().nth(1), Some(refused_line.as_str()));
    assert_eq!(repaired.lines().count(), 12, "{repaired}");

    // A result Codex skips answers nothing: its call is unanswered for fsck as for Codex.
    let tools = fixture("codex-jsonl/tools.jsonl");
    let tools = inserted(&tools, "\"call_id\":\"call_W4\",\"output\":\"", "\\ud800");
    let tools = write(dir.path(), "tools.jsonl", &tools);
    let (_, codes) = fsck(&tools);
    assert_eq!(codes, ["tool-call-unanswered", "not-a-record"]);
    let untouched = write(
        dir.path(),
        "untouched.jsonl",
        &fixture("codex-jsonl/tools.jsonl"),
    );
    assert_eq!(fsck(&untouched).1, Vec::<String>::new());
}

/// A record a same-format conversion does not change is written back as its bytes, even where
/// a value tree cannot hold what `JSON.parse` took: a lone surrogate escape and a repeated key
/// in the middle of a session of every JSONL format read by a JavaScript tool.
#[test]
fn a_same_format_conversion_gives_back_what_json_parse_took() {
    let dir = tempfile::tempdir().unwrap();
    for (format, file) in [
        ("claude-jsonl", "claude-jsonl/tools.jsonl"),
        ("gemini-jsonl", "gemini-jsonl/plain.jsonl"),
        ("llxprt-jsonl", "llxprt-jsonl/plain.jsonl"),
        ("pi-jsonl", "pi-jsonl/v3.jsonl"),
        ("qwen-jsonl", "qwen-jsonl/plain.jsonl"),
        ("qwen-jsonl", "qwen-jsonl/unknown-fields.jsonl"),
        ("agent-jsonl", "agent-jsonl/plain.jsonl"),
    ] {
        let original = fixture(file);
        let mut lines: Vec<String> = original.lines().map(String::from).collect();
        assert!(lines.len() >= 3, "{file}: {} lines", lines.len());
        // The first text after the first line: half an emoji in it, and a field of its
        // record named twice.
        let (k, at) = (1..lines.len())
            .find_map(|k| {
                ["\"text\":\"", "\"content\":\""]
                    .iter()
                    .find_map(|m| lines[k].find(m).map(|i| (k, i + m.len())))
            })
            .unwrap_or_else(|| panic!("{file}: no text after line 1"));
        let cut = format!("{}cut \\ud83d{}", &lines[k][..at], &lines[k][at..]);
        lines[k] = format!("{{\"zz\":1,\"zz\":\"\\udc00\",{}", &cut[1..]);
        // The last record: a lone surrogate in a string of its own.
        let last = lines.len() - 1;
        lines[last] = format!("{{\"yy\":\"\\ud800\",{}", &lines[last][1..]);
        let text = lines.join("\n") + "\n";
        let path = write(dir.path(), &format!("{format}-in.jsonl"), &text);
        let out = dir.path().join(format!("{format}-out.jsonl"));
        let _ = fs::remove_file(&out);
        let written = convert(&path, format, &out);
        assert_eq!(written, text, "{file}: --to {format} changed the records");
    }
}

/// A document written back into its own format gives back its bytes, lone surrogate escapes
/// and all, when the conversion changes nothing; when it changes something (here `--leaf`
/// cuts the session), the document is rebuilt and the escape read as U+FFFD, as said.
#[test]
fn a_document_written_back_unchanged_keeps_its_lone_surrogates() {
    let dir = tempfile::tempdir().unwrap();
    for (format, file, marker) in [
        ("gemini-json", "gemini-json/plain.json", "\"content\": \""),
        (
            "checkpoint",
            "checkpoint/checkpoint-array.json",
            "\"text\": \"",
        ),
        (
            "simple-agent-json",
            "simple-agent-json/plain.json",
            "\"content\": \"",
        ),
    ] {
        let text = inserted(&fixture(file), marker, "cut \\ud83d");
        let path = write(dir.path(), &format!("{format}-in.json"), &text);
        let (errors, codes) = fsck(&path);
        assert_eq!(errors, 0, "{file}: {codes:?}");
        assert!(codes.iter().any(|c| c == "json-lossy"), "{file}: {codes:?}");
        let out = dir.path().join(format!("{format}-out.json"));
        assert_eq!(convert(&path, format, &out), text, "{file}");
    }
    // Cut at the first message: rebuilt.
    let text = inserted(
        &fixture("gemini-json/plain.json"),
        "\"content\": \"",
        "cut \\ud83d",
    );
    let first = serde_json::from_str::<Value>(&text.replace("\\ud83d", "")).unwrap()["messages"][0]
        ["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = write(dir.path(), "cut.json", &text);
    let out = dir.path().join("cut-out.json");
    let run = tool()
        .args(["convert", "--to", "gemini-json", "--leaf", &first, "-o"])
        .arg(&out)
        .arg(&path)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let written = fs::read_to_string(&out).unwrap();
    assert!(written.contains("cut \u{FFFD}"), "{written}");
    assert_eq!(
        serde_json::from_str::<Value>(&written).unwrap()["messages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
