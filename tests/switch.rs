//! `sessiontool switch` end to end, in fake homes: every source format that has a store into
//! every other tool's store, found by an id prefix (a path for a checkpoint, which has no
//! id); an ambiguous prefix; a damaged source repaired on a copy while the original stays
//! byte for byte; dry runs; unanswered calls closed where the target's tool needs it; the
//! token budget; --exec with a stand-in tool. Each case reads back what was written.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use sessiontool::model::{Content, Role, Session};
use sessiontool::store::tool::Tool;

use common::fixture;

/// A throwaway home with a project folder inside it.
struct Home {
    dir: tempfile::TempDir,
    project: String,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("work/my app");
        std::fs::create_dir_all(&project).unwrap();
        let project = project.to_str().unwrap().to_string();
        Home { dir, project }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `sessiontool ARGS --home HOME`, run in the home (outside the project).
    fn run(&self, args: &[&str]) -> std::process::Output {
        let mut c = Command::cargo_bin("sessiontool").unwrap();
        c.current_dir(self.path())
            .args(args)
            .args(["--home", self.path().to_str().unwrap()]);
        c.output().unwrap()
    }

    /// `sessiontool ARGS --json`, expecting exit `code`; its document.
    fn json(&self, args: &[&str], code: i32) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    /// A fixture (or any file) put into its own tool's store for the project, as `format`.
    fn place(&self, input: &Path, format: &str) -> PathBuf {
        let input = input.to_str().unwrap();
        let mut args = vec![
            "convert",
            input,
            "--to",
            format,
            "--store",
            "--project",
            &self.project,
        ];
        if format == "checkpoint" {
            args.extend(["--tag", "before switch"]);
        }
        let doc = self.json(&args, 0);
        PathBuf::from(doc["output"].as_str().unwrap())
    }

    /// Every file below the home with its bytes.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        walkdir::WalkDir::new(self.path())
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
            .collect()
    }
}

/// The session formats with a store: a fixture of each, the format its tool's store holds it
/// in, and its tool.
const SOURCES: &[(&str, &str, Tool)] = &[
    ("gemini-json/tools.json", "gemini-json", Tool::Gemini),
    ("gemini-jsonl/tools.jsonl", "gemini-jsonl", Tool::Gemini),
    (
        "checkpoint/checkpoint-object.json",
        "checkpoint",
        Tool::Gemini,
    ),
    ("qwen-jsonl/tools.jsonl", "qwen-jsonl", Tool::Qwen),
    ("llxprt-jsonl/tools.jsonl", "llxprt-jsonl", Tool::Llxprt),
    ("claude-jsonl/tools.jsonl", "claude-jsonl", Tool::Claude),
    ("pi-jsonl/v3-branches.jsonl", "pi-jsonl", Tool::Pi),
    ("codex-jsonl/tools.jsonl", "codex-jsonl", Tool::Codex),
    ("agent-jsonl/tools.jsonl", "agent-jsonl", Tool::Agent),
    (
        "simple-agent-json/tools.json",
        "simple-agent-json",
        Tool::SimpleAgent,
    ),
];

fn session(path: &Path) -> Session {
    sessiontool::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .session
}

/// The texts of the prompts and replies on the branch the tool resumes, in order.
fn turns(s: &Session, role: Role) -> Vec<String> {
    let tree = s.tree();
    let Some(head) = tree.head() else {
        return Vec::new();
    };
    tree.path_to(head)
        .into_iter()
        .filter_map(|i| tree.node(i).message())
        .filter(|m| m.role == role)
        .map(|m| m.text().trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Every tool call on the head branch, and whether a result answers it.
fn calls(s: &Session) -> Vec<(String, bool)> {
    let tree = s.tree();
    let path = tree.head().map(|h| tree.path_to(h)).unwrap_or_default();
    let parts: Vec<&Content> = path
        .iter()
        .filter_map(|&i| tree.node(i).message())
        .flat_map(|m| m.parts.iter().map(|p| &p.content))
        .collect();
    let answered = |id: &str| {
        parts
            .iter()
            .any(|c| matches!(c, Content::ToolResult { call_id: Some(r), .. } if r == id))
    };
    parts
        .iter()
        .filter_map(|c| match c {
            Content::ToolCall { id: Some(id), .. } => Some((id.clone(), answered(id))),
            _ => None,
        })
        .collect()
}

fn id_of(path: &Path) -> Option<String> {
    session(path).meta.id
}

/// One switch of the fixture `source` into `to`, in a home of its own; checks what was
/// written against the source and returns the document.
fn switch_one(source: &(&str, &str, Tool), to: Tool) -> Value {
    let (rel, format, from) = *source;
    let home = Home::new();
    let placed = home.place(&fixture(rel), format);
    let before = std::fs::read(&placed).unwrap();
    // An id prefix, as `list` shows ids; a checkpoint has no id of its own: its path.
    let wanted = match id_of(&placed) {
        Some(id) if format != "checkpoint" => id[..8].to_string(),
        _ => placed.to_str().unwrap().to_string(),
    };
    let what = format!("{rel} -> {to}");
    let doc = home.json(&["switch", &wanted, "--to", to.name()], 0);
    assert_eq!(doc["schema"], "sessiontool.switch/1");
    assert_eq!(doc["source"]["tool"], from.name(), "{what}");
    assert_eq!(doc["source"]["unchanged"], true, "{what}");
    assert_eq!(
        std::fs::read(&placed).unwrap(),
        before,
        "{what}: the source changed"
    );
    assert_eq!(doc["project"], home.project, "{what}");
    let out = PathBuf::from(doc["output"]["path"].as_str().unwrap());
    assert!(out.starts_with(home.path()), "{what}: {}", out.display());
    assert_eq!(doc["output"]["tool"], to.name(), "{what}");
    let opened = sessiontool::open(&out).unwrap();
    assert_eq!(opened.format, to.current_format(), "{what}");
    // The conversation arrived: every prompt, in order, and every reply's text.
    let (src, dst) = (session(&placed), opened.session);
    assert!(
        !turns(&src, Role::User).is_empty() && !turns(&src, Role::Assistant).is_empty(),
        "{what}: the fixture has a conversation"
    );
    assert_eq!(
        turns(&dst, Role::User),
        turns(&src, Role::User),
        "{what}: prompts"
    );
    let replies = turns(&dst, Role::Assistant).join("\n");
    for reply in turns(&src, Role::Assistant) {
        assert!(replies.contains(&reply), "{what}: reply {reply:?} missing");
    }
    // Every answered call is still answered; an open one is closed unless the tool does it.
    let (src_calls, dst_calls) = (calls(&src), calls(&dst));
    assert_eq!(dst_calls.len(), src_calls.len(), "{what}: tool calls");
    let closes_itself = [Tool::Pi, Tool::Codex, Tool::Qwen, Tool::Llxprt].contains(&to);
    for ((_, before), (id, after)) in src_calls.iter().zip(&dst_calls) {
        assert!(
            *after == (*before || !closes_itself),
            "{what}: call {id} answered {before} -> {after}"
        );
    }
    // The project is recorded as the tools look it up.
    let meta = &dst.meta;
    let recorded = meta.cwd.as_deref() == Some(home.project.as_str())
        || meta.project_hash.as_deref() == Some(&sessiontool::ids::sha256_hex(&home.project));
    assert!(recorded, "{what}: project not recorded: {meta:?}");
    // The command that resumes it names it and runs in the project.
    let resume = &doc["resume"];
    if [Tool::Agent, Tool::SimpleAgent].contains(&to) {
        assert!(resume.is_null(), "{what}");
    } else {
        let argv: Vec<&str> = resume["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(argv[0], to.name(), "{what}");
        let names = if to == Tool::Pi {
            out.to_str().unwrap().to_string()
        } else {
            dst.meta.id.clone().unwrap()
        };
        assert_eq!(argv.last().copied(), Some(names.as_str()), "{what}");
        assert_eq!(resume["cwd"], home.project, "{what}");
        let env = resume["env"].as_object().unwrap();
        assert_eq!(env.len(), 1, "{what}: {env:?}");
        let (_, value) = env.iter().next().unwrap();
        assert!(
            Path::new(value.as_str().unwrap()).starts_with(home.path()),
            "{what}: {env:?}"
        );
        assert!(
            resume["shell"]
                .as_str()
                .unwrap()
                .starts_with(&format!("cd '{}' && ", home.project)),
            "{what}: {resume}"
        );
    }
    doc
}

fn every_source_into(to: Tool) {
    for source in SOURCES.iter().filter(|s| s.2 != to) {
        let doc = switch_one(source, to);
        if to == Tool::Gemini {
            let registered = doc["output"]["registered"].as_array().unwrap();
            assert!(
                registered
                    .iter()
                    .any(|r| r.as_str().unwrap().contains("projects.json")),
                "{doc}"
            );
        }
    }
}

#[test]
fn every_source_into_gemini() {
    every_source_into(Tool::Gemini);
}

#[test]
fn every_source_into_qwen() {
    every_source_into(Tool::Qwen);
}

#[test]
fn every_source_into_claude() {
    every_source_into(Tool::Claude);
}

#[test]
fn every_source_into_llxprt() {
    every_source_into(Tool::Llxprt);
}

#[test]
fn every_source_into_pi() {
    every_source_into(Tool::Pi);
}

#[test]
fn every_source_into_codex() {
    every_source_into(Tool::Codex);
}

#[test]
fn every_source_into_agent_and_simple_agent() {
    every_source_into(Tool::Agent);
    every_source_into(Tool::SimpleAgent);
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_ambiguous_prefix_lists_the_matches_and_writes_nothing() {
    let home = Home::new();
    // Claude's fixture is 5f0c2d1e-..., llxprt's 5f0c2b7e-...
    let claude = home.place(&fixture("claude-jsonl/tools.jsonl"), "claude-jsonl");
    let llxprt = home.place(&fixture("llxprt-jsonl/tools.jsonl"), "llxprt-jsonl");
    let before = home.snapshot();
    let out = home.run(&["switch", "5F0C", "--to", "codex"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("2 sessions match \"5F0C\""), "{err}");
    for (id, path) in [
        ("5f0c2d1e-8a47-4b6e-9c3d-2e1f0a9b8c7d", &claude),
        ("5f0c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f", &llxprt),
    ] {
        assert!(err.contains(id), "{err}");
        assert!(err.contains(path.to_str().unwrap()), "{err}");
    }
    assert!(out.stdout.is_empty());
    assert_eq!(home.snapshot(), before, "nothing written");
    // One more character settles it.
    let doc = home.json(&["switch", "5f0c2d", "--to", "codex"], 0);
    assert_eq!(doc["source"]["tool"], "claude");
    // An id nothing has, and a path that is not there.
    let out = home.run(&["switch", "ffff", "--to", "codex"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("no stored session has the id \"ffff\""));
    let out = home.run(&["switch", "./nothing/here.jsonl", "--to", "codex"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

#[test]
fn a_damaged_source_is_repaired_on_a_copy_and_the_original_stays_byte_for_byte() {
    let home = Home::new();
    let placed = home.place(&fixture("claude-jsonl/tools.jsonl"), "claude-jsonl");
    // The writer crashed mid-line.
    let torn = br#"{"parentUuid":"00000000-0000-4000-8000-000000000007","type":"user","message":{"role":"us"#;
    let mut bytes = std::fs::read(&placed).unwrap();
    bytes.extend_from_slice(torn);
    std::fs::write(&placed, &bytes).unwrap();
    let folder = placed.parent().unwrap();
    let listing = |dir: &Path| -> Vec<_> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let files_before = listing(folder);
    let tmp = home.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::cargo_bin("sessiontool")
        .unwrap()
        .current_dir(home.path())
        .env("TMPDIR", &tmp)
        .args(["switch", "5f0c", "--to", "qwen", "--json", "--home"])
        .arg(home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The original: the same bytes, nothing beside it (no backup, no sidecar).
    assert_eq!(std::fs::read(&placed).unwrap(), bytes);
    assert_eq!(listing(folder), files_before);
    assert_eq!(doc["source"]["unchanged"], true);
    assert_eq!(
        doc["source"]["sha256"],
        sessiontool::ids::sha256_hex_bytes(&bytes)
    );
    // The copy was repaired, and that is said.
    let repaired = &doc["repaired"];
    assert_eq!(repaired["fixed"], 1, "{doc}");
    assert_eq!(repaired["codes"], serde_json::json!(["torn-tail"]));
    assert_eq!(repaired["set_aside_records"], 1);
    assert_eq!(repaired["set_aside_bytes"], torn.len());
    let set_aside = doc["losses"]["losses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["code"] == "repair-set-aside")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(set_aside["count"], 1);
    assert!(
        set_aside["message"]
            .as_str()
            .unwrap()
            .contains(&format!("({} bytes", torn.len())),
        "{set_aside}"
    );
    // The private copy is gone.
    assert_eq!(listing(&tmp), Vec::<std::ffi::OsString>::new());
    // What was written is whole and healthy.
    let out_path = PathBuf::from(doc["output"]["path"].as_str().unwrap());
    let report = sessiontool::check(&out_path).unwrap();
    assert_eq!(
        report.count(sessiontool::diag::Severity::Error),
        0,
        "{report:?}"
    );
    assert_eq!(
        turns(&session(&out_path), Role::Assistant),
        turns(
            &session(&fixture("claude-jsonl/tools.jsonl")),
            Role::Assistant
        )
    );
    // In human words too.
    let again = home.run(&["switch", "5f0c", "--from", "claude", "--to", "codex"]);
    assert!(
        stderr(&again).contains(
            "damaged: a copy was repaired (1 fixed: torn-tail; 0 left); the original is not changed"
        ),
        "{}",
        stderr(&again)
    );
}

#[test]
fn a_dry_run_writes_nothing_and_says_what_it_would_do() {
    let home = Home::new();
    home.place(&fixture("codex-jsonl/tools.jsonl"), "codex-jsonl");
    let before = home.snapshot();
    let doc = home.json(&["switch", "0199a3c4", "--to", "gemini", "-n"], 0);
    assert_eq!(home.snapshot(), before, "a dry run wrote something");
    assert_eq!(doc["dry_run"], true);
    let out = PathBuf::from(doc["output"]["path"].as_str().unwrap());
    assert!(!out.exists());
    assert!(out.starts_with(home.path().join(".gemini/tmp")), "{doc}");
    assert!(
        doc["output"]["registered"][0]
            .as_str()
            .unwrap()
            .contains("projects.json maps"),
        "{doc}"
    );
    assert!(!home.path().join(".gemini/projects.json").exists());
    assert!(
        doc["resume"]["shell"]
            .as_str()
            .unwrap()
            .contains("gemini --resume")
    );
    let out = home.run(&["switch", "0199a3c4", "--to", "gemini", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("would be written for gemini"),
        "{}",
        stderr(&out)
    );
    assert_eq!(home.snapshot(), before);
}

/// Claude Code's fixture with a tool call that never got its result.
fn open_call_home() -> (Home, PathBuf) {
    let home = Home::new();
    let placed = home.place(
        &fixture("damaged/claude-tool-use-unanswered.jsonl"),
        "claude-jsonl",
    );
    (home, placed)
}

#[test]
fn unanswered_calls_are_closed_where_the_target_tool_does_not_close_them() {
    for to in [Tool::Gemini, Tool::Qwen, Tool::Pi, Tool::Codex] {
        let (home, placed) = open_call_home();
        let before = std::fs::read(&placed).unwrap();
        let doc = home.json(&["switch", "5f0c", "--to", to.name()], 0);
        assert_eq!(std::fs::read(&placed).unwrap(), before);
        let out = session(Path::new(doc["output"]["path"].as_str().unwrap()));
        let closed = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "tool-call-closed");
        let answered: Vec<bool> = calls(&out).into_iter().map(|(_, a)| a).collect();
        if to == Tool::Gemini {
            // Gemini CLI sends an open call to the API as it is: closed, with the reason.
            assert!(closed, "{doc}");
            assert_eq!(answered, [true, true]);
            let text = serde_json::to_string(&out).unwrap();
            assert!(text.contains("[sessiontool] this tool call never got a result"));
        } else {
            // Qwen Code, pi and Codex answer it themselves when they resume.
            assert!(!closed, "{to}: {doc}");
            assert_eq!(answered, [false, true], "{to}");
        }
    }
}

#[test]
fn a_session_of_the_target_tool_is_not_switched() {
    let home = Home::new();
    home.place(&fixture("claude-jsonl/tools.jsonl"), "claude-jsonl");
    let before = home.snapshot();
    let out = home.run(&["switch", "5f0c", "--to", "claude"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("is already a claude session"), "{err}");
    assert!(
        err.contains("claude --resume 5f0c2d1e-8a47-4b6e-9c3d-2e1f0a9b8c7d"),
        "{err}"
    );
    assert_eq!(home.snapshot(), before);
    // Nor into something that is not a tool.
    let out = home.run(&["switch", "5f0c", "--to", "markdown"]);
    assert_eq!(out.status.code(), Some(2));
    let out = home.run(&["switch", "5f0c", "--to", "checkpoint"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--checkpoint TAG"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_outside_every_store_is_found_by_its_path_and_needs_a_project_when_it_records_none() {
    let home = Home::new();
    let before = home.snapshot();
    // Legacy Gemini JSON records neither cwd nor a project hash a path is known for.
    let file = fixture("gemini-json/tools.json");
    let out = home.run(&["switch", file.to_str().unwrap(), "--to", "claude"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("records no project folder"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--project DIR"));
    assert_eq!(home.snapshot(), before);
    let doc = home.json(
        &[
            "switch",
            file.to_str().unwrap(),
            "--to",
            "claude",
            "--project",
            &home.project,
        ],
        0,
    );
    assert_eq!(doc["source"]["tool"], "gemini");
    assert_eq!(doc["project"], home.project);
    let out = session(Path::new(doc["output"]["path"].as_str().unwrap()));
    assert_eq!(out.meta.cwd.as_deref(), Some(home.project.as_str()));
}

#[test]
fn switching_back_takes_the_copy_from_elsewhere_and_then_the_copy_updated_last() {
    let home = Home::new();
    let claude = home.place(&fixture("claude-jsonl/tools.jsonl"), "claude-jsonl");
    home.json(&["switch", "5f0c2d", "--to", "codex"], 0);
    // Back into Claude Code: the Claude copy is passed over and the Codex one taken; it
    // replaces the old Claude file only with --force, which keeps that file as a backup.
    let out = home.run(&["switch", "5f0c2d", "--to", "claude"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("pass --force"), "{}", stderr(&out));
    let before = std::fs::read(&claude).unwrap();
    let doc = home.json(&["switch", "5f0c2d", "--to", "claude", "--force"], 0);
    assert_eq!(doc["source"]["tool"], "codex");
    assert_eq!(doc["output"]["path"], claude.to_str().unwrap());
    let kept = PathBuf::from(doc["output"]["replaced"].as_str().unwrap());
    assert_eq!(std::fs::read(kept).unwrap(), before);
    // For a third tool, of two copies updated at the same time the original is taken (the
    // Codex rollout, which the Claude file was switched back from).
    let doc = home.json(&["switch", "5f0c2d", "--to", "gemini"], 0);
    assert_eq!(doc["source"]["tool"], "codex", "{doc}");
    assert!(
        doc["notes"].to_string().contains("also in claude's store"),
        "{doc}"
    );
    let doc = home.json(
        &[
            "switch", "5f0c2d", "--from", "claude", "--to", "gemini", "--force",
        ],
        0,
    );
    assert_eq!(doc["source"]["tool"], "claude");
    // The copy updated last is taken when one is: the user went on in Claude Code.
    let mut file = std::fs::read_to_string(&claude).unwrap();
    let last: Value = serde_json::from_str(file.lines().last().unwrap()).unwrap();
    let mut more = last.clone();
    more["parentUuid"] = last["uuid"].clone();
    more["uuid"] = "00000000-0000-4000-8000-0000000000ff".into();
    more["type"] = "user".into();
    more["message"] = serde_json::json!({"role": "user", "content": "one more thing"});
    more["timestamp"] = "2030-01-01T00:00:00.000Z".into();
    file.push_str(&format!("{more}\n"));
    std::fs::write(&claude, file).unwrap();
    let doc = home.json(&["switch", "5f0c2d", "--to", "pi"], 0);
    assert_eq!(doc["source"]["tool"], "claude", "{doc}");
    let out = session(Path::new(doc["output"]["path"].as_str().unwrap()));
    assert_eq!(turns(&out, Role::User).last().unwrap(), "one more thing");
}

/// A Claude Code session of `turns` turns: a prompt (`prompt N` and padding), tool calls
/// with their results (one a turn, `last_calls` in the last) and a reply (`reply N`), each
/// part about `pad` bytes.
fn long_claude_session(dir: &Path, turns: usize, last_calls: usize, pad: usize) -> PathBuf {
    let mut lines = Vec::new();
    let mut parent = Value::Null;
    let mut n = 0;
    let mut push = |entry: Value| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        let mut e = entry;
        e["parentUuid"] = parent.clone();
        e["uuid"] = uuid.clone().into();
        e["sessionId"] = "6e7f8a9b-0000-4000-8000-000000000001".into();
        e["cwd"] = "/w/app".into();
        e["timestamp"] = format!("2026-01-01T{:02}:{:02}:00.000Z", n / 60, n % 60).into();
        parent = uuid.into();
        lines.push(e.to_string());
    };
    let padding = "x".repeat(pad);
    for t in 0..turns {
        push(
            serde_json::json!({"type": "user", "message": {"role": "user",
            "content": format!("prompt {t} {padding}")}}),
        );
        let calls = if t + 1 == turns { last_calls } else { 1 };
        for c in 0..calls {
            let id = format!("toolu_{t}_{c}");
            push(
                serde_json::json!({"type": "assistant", "message": {"role": "assistant",
                "id": format!("m{t}_{c}"), "content": [{"type": "tool_use", "id": id,
                "name": "Bash", "input": {"command": padding}}]}}),
            );
            push(
                serde_json::json!({"type": "user", "message": {"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": id, "content": padding}]}}),
            );
        }
        push(
            serde_json::json!({"type": "assistant", "message": {"role": "assistant",
            "id": format!("r{t}"), "content": [{"type": "text", "text": format!("reply {t} {padding}")}]}}),
        );
    }
    let path = dir.join("long.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn max_tokens_keeps_the_first_prompt_and_the_newest_turns_with_their_results() {
    let home = Home::new();
    let input = long_claude_session(home.path(), 30, 1, 400);
    home.place(&input, "claude-jsonl");
    // Without a budget nothing is cut.
    let whole = home.json(&["switch", "6e7f", "--to", "gemini", "-n"], 0);
    assert!(whole["budget"].is_null());
    // Each turn is about 4 x 100 tokens: a budget of 2,000 keeps four.
    let doc = home.json(
        &["switch", "6e7f", "--to", "gemini", "--max-tokens", "2000"],
        0,
    );
    let b = &doc["budget"];
    assert_eq!(b["max_tokens"], 2000);
    assert_eq!(b["turns"], 30);
    let kept = b["kept"].as_u64().unwrap();
    assert!(kept <= 2000 && kept > 1500, "{b}");
    assert!(b["estimated"].as_u64().unwrap() > 12_000, "{b}");
    let out = session(Path::new(doc["output"]["path"].as_str().unwrap()));
    let prompts: Vec<String> = turns(&out, Role::User)
        .iter()
        .map(|t| t.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    let newest = b["turns_kept"].as_u64().unwrap() as usize;
    let mut expected = vec!["prompt 0".to_string()];
    expected.extend((30 - newest..30).map(|t| format!("prompt {t}")));
    assert_eq!(prompts, expected);
    assert!(newest >= 3, "{b}");
    // Every call kept has its result; the loss report says what was left out.
    let c = calls(&out);
    assert_eq!(c.len(), newest);
    assert!(c.iter().all(|(_, answered)| *answered), "{c:?}");
    let loss = doc["losses"]["losses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["code"] == "max-tokens")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(loss["count"], b["left_out"]);
    // The reply to the first prompt and the older turns: 4 nodes a turn, less the prompt.
    assert_eq!(
        b["left_out"].as_u64().unwrap() as usize,
        30 * 4 - 1 - newest * 4
    );
    // A budget too small for the first prompt and the newest reply: nothing written.
    let before = home.snapshot();
    let out = home.run(&[
        "switch",
        "6e7f",
        "--from",
        "claude",
        "--to",
        "qwen",
        "--max-tokens",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--max-tokens 100 is too small"),
        "{}",
        stderr(&out)
    );
    assert_eq!(home.snapshot(), before);
}

#[test]
fn max_tokens_cuts_inside_a_turn_too_long_to_keep_whole() {
    let home = Home::new();
    // Two prompts; the second starts a run of 20 tool calls (about 250 tokens each pair).
    let input = long_claude_session(home.path(), 2, 20, 400);
    home.place(&input, "claude-jsonl");
    let doc = home.json(
        &["switch", "6e7f", "--to", "codex", "--max-tokens", "1500"],
        0,
    );
    let b = &doc["budget"];
    assert_eq!(b["cut_within_turn"], true, "{b}");
    assert_eq!(b["turns_kept"], 1);
    assert!(b["kept"].as_u64().unwrap() <= 1500, "{b}");
    let out = session(Path::new(doc["output"]["path"].as_str().unwrap()));
    // Both prompts, then the newest calls with their results and the last reply.
    let prompts: Vec<String> = turns(&out, Role::User)
        .iter()
        .map(|t| t.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(prompts, ["prompt 0", "prompt 1"]);
    assert!(
        turns(&out, Role::Assistant)
            .last()
            .unwrap()
            .starts_with("reply 1 ")
    );
    let c = calls(&out);
    assert!(!c.is_empty() && c.len() < 20, "{c:?}");
    assert!(c.iter().all(|(_, answered)| *answered), "{c:?}");
    assert_eq!(
        c.last().unwrap().0,
        "toolu_1_19",
        "the newest calls are kept"
    );
    // In human words.
    let out = home.run(&[
        "switch",
        "6e7f",
        "--to",
        "codex",
        "--max-tokens",
        "1500",
        "--force",
    ]);
    assert!(
        stderr(&out).contains("(that one cut to its newest messages)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn convert_takes_max_tokens_too() {
    let home = Home::new();
    let input = long_claude_session(home.path(), 10, 1, 400);
    let output = home.path().join("cut.jsonl");
    let doc = home.json(
        &[
            "convert",
            input.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
            "--to",
            "qwen-jsonl",
            "--max-tokens",
            "1500",
        ],
        0,
    );
    let b = &doc["budget"];
    assert_eq!(b["turns"], 10);
    assert!(b["kept"].as_u64().unwrap() <= 1500, "{b}");
    let out = session(&output);
    let first = &turns(&out, Role::User)[0];
    assert!(first.starts_with("prompt 0 "), "{first}");
    assert!(
        turns(&out, Role::Assistant)
            .last()
            .unwrap()
            .starts_with("reply 9 ")
    );
    assert!(calls(&out).iter().all(|(_, a)| *a));
    // A budget the session fits: the output is what it is without one.
    let plain = home.path().join("plain.jsonl");
    let roomy = home.path().join("roomy.jsonl");
    for (path, extra) in [(&plain, vec![]), (&roomy, vec!["--max-tokens", "1000000"])] {
        let mut args = vec![
            "convert",
            input.to_str().unwrap(),
            "-o",
            path.to_str().unwrap(),
            "--to",
            "qwen-jsonl",
        ];
        args.extend(extra);
        home.json(&args, 0);
    }
    assert_eq!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&roomy).unwrap()
    );
}

/// A stand-in for a tool's program: writes its folder, the variable that points it at its
/// store, and its arguments into `$OUT`, and exits 7.
fn stand_in(bin: &Path, name: &str, var: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).unwrap();
    let script = bin.join(name);
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s|%s|%s' \"$PWD\" \"${var}\" \"$*\" > \"$OUT\"\nexit 7\n"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn exec_runs_the_resume_command_in_the_project_and_passes_its_exit_code_on() {
    let home = Home::new();
    home.place(&fixture("codex-jsonl/tools.jsonl"), "codex-jsonl");
    let bin = home.path().join("bin");
    stand_in(&bin, "claude", "CLAUDE_CONFIG_DIR");
    let said = home.path().join("said");
    let run = |path: &Path| {
        Command::cargo_bin("sessiontool")
            .unwrap()
            .current_dir(home.path())
            .env("PATH", path)
            .env("OUT", &said)
            .args([
                "switch", "0199", "--to", "claude", "--exec", "--force", "--home",
            ])
            .arg(home.path())
            .output()
            .unwrap()
    };
    let out = run(&bin);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let id = id_of(
        &std::fs::read_dir(home.path().join(".claude/projects"))
            .unwrap()
            .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
            .map(|e| e.unwrap().path())
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&said).unwrap(),
        format!(
            "{}|{}|--resume {id}",
            home.project,
            home.path().join(".claude").display()
        )
    );
    // No such program: 127, and the session stays in place with its command.
    let out = run(&home.path().join("empty"));
    assert_eq!(out.status.code(), Some(127), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot run claude: not found on PATH"),
        "{err}"
    );
    assert!(err.contains(&format!("claude --resume {id}")), "{err}");
    // Not with --json or a dry run (usage errors).
    let out = home.run(&["switch", "0199", "--to", "claude", "--exec", "-n"]);
    assert_eq!(out.status.code(), Some(2));
    let out = home.run(&["switch", "0199", "--to", "agent", "--exec"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn switch_has_a_manual_page_and_completions() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("sessiontool")
        .unwrap()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = std::fs::read_to_string(dir.path().join("sessiontool-switch.1")).unwrap();
    for word in ["max\\-tokens", "exec", "dry\\-run", "SESSION", "127"] {
        assert!(page.contains(word), "the page lacks {word}");
    }
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::cargo_bin("sessiontool")
            .unwrap()
            .args(["completions", shell])
            .output()
            .unwrap();
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("switch"), "{shell}");
        assert!(script.contains("max-tokens"), "{shell}");
    }
}

#[test]
fn recover_to_another_tool_names_the_id_the_target_was_given() {
    // simple-agent's ids are not UUIDs: Qwen Code gets one derived from it, and only that
    // one resumes it (`qwen --resume` takes UUIDs only).
    let home = Home::new();
    home.place(
        &fixture("simple-agent-json/tools.json"),
        "simple-agent-json",
    );
    let doc = home.json(
        &[
            "recover",
            "20251206",
            "--to",
            "qwen-jsonl",
            "--project",
            &home.project,
        ],
        0,
    );
    let outcome = &doc["sessions"][0];
    let placed = outcome["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "placed")
        .unwrap_or_else(|| panic!("{doc}"));
    let id = id_of(Path::new(placed["path"].as_str().unwrap())).unwrap();
    assert!(sessiontool::ids::is_uuid(&id), "{id}");
    assert_eq!(outcome["resume"][0], format!("qwen --resume {id}"), "{doc}");
}
