//! Qwen Code sessions into Claude Code, into a Codex rollout, into Gemini (both layouts) and
//! back into Qwen Code through the two passes, against the whole-session path: every Qwen fixture (the real samples hold no Qwen Code
//! session), and Qwen sessions made from the generated Claude Code ones (tool calls, branches,
//! titles) with records that share a uuid (a line written twice, a later record adding
//! parts), records kept whole, and leaves.

use std::path::Path;

use sessiontool::convert;
use sessiontool::formats::Input;

use super::{agree, fmt, generated, leaves_in, no_adjust, options, targets};

/// `bytes` (a Qwen session) into each target, detected and forced, with each leaf: every
/// conversion taken by the engine, and equal to the whole path's.
fn converts(name: &str, bytes: &[u8]) {
    for to in targets() {
        for from in [None, Some(fmt("qwen-jsonl"))] {
            for leaf in leaves_in("qwen-jsonl", bytes) {
                let o = options(leaf.as_deref());
                assert!(
                    agree(name, bytes, from, fmt(to), &o, &no_adjust),
                    "{name} -> {to} (leaf {leaf:?}, from {:?}): not taken by the engine:\n{}",
                    from.map(|f| f.name()),
                    String::from_utf8_lossy(bytes)
                );
            }
        }
    }
}

#[test]
fn every_qwen_fixture_converts_as_the_whole_session_path_converts_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // (The real samples hold no Qwen Code session.)
    let all = super::files(&root.join("fixtures/qwen-jsonl"));
    let mut n = 0;
    for path in all {
        let bytes = std::fs::read(&path).unwrap();
        if bytes.is_empty() {
            continue;
        }
        converts(&path.display().to_string(), &bytes);
        n += 1;
    }
    assert!(n >= 7, "{n} Qwen files");
}

#[test]
fn generated_qwen_sessions_with_merged_records_convert_as_the_whole_session_path_converts_them() {
    let mut n = 0;
    for seed in (0..150).step_by(5) {
        let input = Input {
            name: "g.jsonl",
            path: None,
            bytes: &generated(seed),
        };
        let Ok(c) = convert::convert_whole(
            &input,
            Some(fmt("claude-jsonl")),
            fmt("qwen-jsonl"),
            &options(None),
            |_| {},
        ) else {
            continue;
        };
        let text = String::from_utf8(c.bytes).unwrap();
        if text.is_empty() {
            // No format's: nothing for the engine to take.
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        let name = format!("qwen from generated {seed}");
        converts(&name, text.as_bytes());
        if lines.len() < 3 {
            continue;
        }
        // A line written twice, one written again at the end with more parts, a record that
        // is not one and a glued pair: records sharing a uuid are one node.
        let k = (seed as usize) % lines.len();
        let mut varied: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        varied.insert(k + 1, lines[k].to_string());
        if let Some(uuid) = lines[1]
            .split("\"uuid\":\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
        {
            varied.push(format!(
                r#"{{"uuid":"{uuid}","message":{{"parts":[{{"text":"added later"}}]}},"timestamp":"2030-01-01T00:00:00Z"}}"#
            ));
        }
        // A record of a type not known, with a time; then a uuid written twice without a
        // time: its merged node takes the time of the last record that has one, not the
        // unknown one's.
        varied.push(format!(
            r#"{{"uuid":"odd-{seed}","type":"later","timestamp":"2031-01-01T00:00:00Z"}}"#
        ));
        for part in ["one", "two"] {
            varied.push(format!(
                r#"{{"uuid":"twice-{seed}","type":"user","message":{{"role":"user","parts":[{{"text":"{part}"}}]}}}}"#
            ));
        }
        varied.push("[1,2]".into());
        let last = varied.len() - 1;
        varied[last - 2] = format!("{}{}", varied[last - 2], lines[0]);
        let varied = varied.join("\n") + "\n";
        converts(&format!("{name}, varied"), varied.as_bytes());
        n += 1;
    }
    assert!(n >= 20, "{n} generated sessions");
}

/// Closing unanswered calls adds nodes: the whole path converts that (for a target whose tool
/// does not answer them itself); a session with none to close stays with the engine.
#[test]
fn closing_calls_of_a_qwen_session_goes_through_the_whole_session() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/qwen-jsonl/tools.jsonl"),
    )
    .unwrap();
    let cut = &bytes[..bytes.len() / 2];
    let cut = &cut[..cut.iter().rposition(|&b| b == b'\n').unwrap() + 1];
    for to in targets() {
        let mut o = options(None);
        o.close_open_calls = true;
        // Only a target whose tool does not answer open calls itself gets them closed.
        let closes = fmt(to).resumable() && !fmt(to).answers_open_calls_itself();
        assert_eq!(
            agree("cut.jsonl", cut, None, fmt(to), &o, &no_adjust),
            !closes,
            "{to}"
        );
        assert!(
            agree("whole.jsonl", &bytes, None, fmt(to), &o, &no_adjust),
            "{to}"
        );
        o.close_open_calls = false;
        assert!(agree("cut.jsonl", cut, None, fmt(to), &o, &no_adjust));
    }
}

/// Back into Qwen Code with the session's fields changed (`convert --store` placing it under
/// another project) or a first record without a `cwd` (given by `--cwd`, or not at all):
/// every node made and written by the writer, as the whole path writes it.
#[test]
fn a_qwen_session_written_back_with_other_fields_is_written_as_the_whole_session_path_writes_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/qwen-jsonl");
    let qwen = fmt("qwen-jsonl");
    let place = |m: &mut sessiontool::model::Meta| {
        m.cwd = Some("/elsewhere/app".into());
    };
    let mut taken = 0;
    for name in [
        "plain.jsonl",
        "branches.jsonl",
        "tools.jsonl",
        "unknown-fields.jsonl",
    ] {
        let bytes = std::fs::read(root.join(name)).unwrap();
        taken += usize::from(agree(name, &bytes, None, qwen, &options(None), &place));
        // The first record without its cwd: the records that had one keep theirs.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let first = text.lines().next().unwrap();
        let cwd = first
            .split(",\"cwd\":")
            .nth(1)
            .unwrap()
            .split('"')
            .nth(1)
            .unwrap();
        let without = text.replacen(&format!(",\"cwd\":\"{cwd}\""), "", 1);
        assert_ne!(without, text);
        let mut o = options(None);
        taken += usize::from(agree(name, without.as_bytes(), None, qwen, &o, &no_adjust));
        o.cwd = Some("/given".into());
        taken += usize::from(agree(name, without.as_bytes(), None, qwen, &o, &no_adjust));
    }
    assert_eq!(taken, 12);
}
