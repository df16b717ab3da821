//! `list`, `recover` and the commands they suggest agree (issue 16, items 8, 10, 11, 12, 17):
//! every `next:` line the program prints is a command that works as printed (the fake home
//! included), a damaged checkpoint that `list` marks REPAIR is one `recover` repairs, a cut-off
//! Gemini session is listed and resumed by the id its complete part names, Codex sessions are
//! titled by their first real prompt, `recover`'s pick list tells sessions apart by id and
//! path, and a `--home` that does not exist is said.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use sessiontool::ids::sha256_hex;

use common::fixture;

const APP: &str = "/w/app";

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sessiontool")
}

/// `sessiontool ARGS`, run from `cwd` (a folder that is no project of the stores).
fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fixture with its project path set to [`APP`] (the bytes as they are otherwise, damage
/// included), written to `dir/name`.
fn for_app(rel: &str, dir: &Path, name: &str) -> PathBuf {
    let bytes = std::fs::read(fixture(rel)).unwrap();
    let text = String::from_utf8_lossy(&bytes).replace("/home/dana/projects/pomodoro", APP);
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    common::write_idle(&path, text);
    path
}

/// A home where /w/app has a cut-off Gemini session, a damaged Gemini checkpoint, a Qwen
/// session with a torn last line (all three repairable), and a Qwen session no repair fixes.
fn damaged_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let gemini = home.path().join(".gemini/tmp").join(sha256_hex(APP));
    let truncated = std::fs::read(fixture("damaged/truncated-document.json")).unwrap();
    std::fs::create_dir_all(gemini.join("chats")).unwrap();
    common::write_idle(
        &gemini.join("chats/session-2025-10-01T09-54-f9d35d43.json"),
        truncated,
    );
    let checkpoint =
        std::fs::read(fixture("damaged/checkpoint-tool-call-unanswered.json")).unwrap();
    common::write_idle(&gemini.join("checkpoint-before.json"), checkpoint);
    let qwen = home.path().join(".qwen/projects/-w-app/chats");
    for_app("damaged/torn-tail.jsonl", &qwen, "torn.jsonl");
    for_app(
        "unfixable/duplicate-id-conflict.jsonl",
        &qwen,
        "conflict.jsonl",
    );
    home
}

/// The commands in the `next:` lines of `out`, as argument lists (a `# why` after a command
/// is not part of it; quoting as a POSIX shell reads single quotes).
fn next_commands(out: &Output) -> Vec<Vec<String>> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("next: "))
        .map(|command| shell_words(command.split("    #").next().unwrap()))
        .collect()
}

fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            ' ' if !quoted => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// Runs a suggested command (it must be ours) and checks that it did what it is for.
fn follow(home: &Path, command: &[String]) -> Output {
    assert_eq!(command[0], "sessiontool", "{command:?}");
    let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    let out = run(home, &args);
    let code = out.status.code().unwrap();
    let ok = match args[0] {
        // fsck: errors may be left (4), and corrected (1); never a usage or read error.
        "fsck" if args.contains(&"--repair") && !args.contains(&"-n") => code == 1,
        "fsck" => code == 0 || code == 4,
        _ => code == 0,
    };
    assert!(ok, "`{}` exits {code}:\n{}", command.join(" "), text(&out));
    out
}

#[test]
fn every_next_step_list_suggests_works_as_printed() {
    let home = damaged_home();
    let h = home.path().to_str().unwrap();
    let listed = run(home.path(), &["list", "--home", h, "--project", APP]);
    assert!(listed.status.success(), "{}", text(&listed));
    let shown = text(&listed);
    assert_eq!(shown.matches("REPAIR").count(), 3, "{shown}");
    let steps = next_commands(&listed);
    assert_eq!(
        steps.len(),
        2,
        "recover, and fsck for the broken one: {shown}"
    );
    for step in &steps {
        // A command on the stores names the home it was given (a file's path says it).
        if step[1] != "fsck" {
            assert!(
                step.windows(2).any(|w| w == ["--home", h]),
                "a hint names the home it was given: {step:?}"
            );
        }
        follow(home.path(), step);
    }
    // Everything recover could do is done: the checkpoint too. What is left is the broken
    // session, and the hint about it.
    let again = run(home.path(), &["list", "--home", h, "--project", APP]);
    let shown = text(&again);
    assert!(!shown.contains("REPAIR"), "{shown}");
    assert_eq!(shown.matches("BROKEN").count(), 1, "{shown}");
    let steps = next_commands(&again);
    assert_eq!(steps.len(), 1, "{shown}");
    assert_eq!(steps[0][1], "fsck", "{shown}");
}

#[test]
fn fsck_relocate_and_migrate_hints_work_as_printed() {
    let home = damaged_home();
    let qwen = home.path().join(".qwen/projects/-w-app/chats/torn.jsonl");
    // fsck: see what would change, then repair.
    let out = run(home.path(), &["fsck", qwen.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let steps = next_commands(&out);
    assert_eq!(steps.len(), 2, "{}", text(&out));
    assert!(text(&follow(home.path(), &steps[0])).contains("dry run"));
    follow(home.path(), &steps[1]);
    let out = run(home.path(), &["fsck", qwen.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A home whose sessions can all be moved.
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    for_app(
        "qwen-jsonl/plain.jsonl",
        &home.path().join(".qwen/projects/-w-app/chats"),
        "torn.jsonl",
    );
    common::legacy(
        "gemini-json/plain.json",
        "/w/moved",
        &home
            .path()
            .join(".gemini/tmp")
            .join(sha256_hex("/w/moved"))
            .join("chats"),
        "session-2025-09-14T08-14-a116c9ed.json",
    );
    // relocate -n: the command without -n.
    let out = run(
        home.path(),
        &["relocate", APP, "/w/moved", "--home", h, "-n"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let steps = next_commands(&out);
    assert_eq!(steps.len(), 1, "{}", text(&out));
    assert!(!steps[0].contains(&"-n".to_string()));
    follow(home.path(), &steps[0]);
    assert!(
        home.path()
            .join(".qwen/projects/-w-moved/chats/torn.jsonl")
            .is_file()
    );
    // migrate -n.
    let out = run(
        home.path(),
        &[
            "migrate",
            "--tool",
            "gemini",
            "--to",
            "gemini-slug",
            "--project",
            "/w/moved",
            "--home",
            h,
            "-n",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let steps = next_commands(&out);
    assert_eq!(steps.len(), 1, "{}", text(&out));
    follow(home.path(), &steps[0]);
}

#[test]
fn a_damaged_checkpoint_is_recovered_and_resumed_by_its_tag() {
    let home = damaged_home();
    let h = home.path().to_str().unwrap();
    let checkpoint = home
        .path()
        .join(".gemini/tmp")
        .join(sha256_hex(APP))
        .join("checkpoint-before.json");
    let out = run(
        home.path(),
        &[
            "recover",
            checkpoint.to_str().unwrap(),
            "--home",
            h,
            "--project",
            APP,
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = &doc["sessions"][0];
    assert_eq!(session["steps"][0]["step"], "repaired", "{doc:#}");
    assert_eq!(
        session["resume"][0], "gemini, then /chat resume before",
        "{doc:#}"
    );
    let out = run(home.path(), &["fsck", checkpoint.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_cut_off_gemini_session_is_listed_and_resumed_by_its_id() {
    let home = damaged_home();
    let h = home.path().to_str().unwrap();
    let out = run(
        home.path(),
        &["list", "--home", h, "--project", APP, "--json"],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cut = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"].as_str().unwrap().ends_with("f9d35d43.json"))
        .unwrap();
    assert_eq!(cut["id"], "f9d35d43-770d-4909-aa66-3e665e82ae1d", "{cut:#}");
    assert!(
        cut["first_prompt"].as_str().is_some_and(|p| !p.is_empty()),
        "{cut:#}"
    );
    assert_eq!(cut["health"], "repairable");
    let out = run(
        home.path(),
        &["recover", "-n", "f9d3", "--home", h, "--project", APP],
    );
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("resume: gemini --resume f9d35d43-770d-4909-aa66-3e665e82ae1d"),
        "{shown}"
    );
    assert!(!shown.contains("<id>"), "{shown}");
}

#[test]
fn codex_sessions_are_titled_by_their_first_real_prompt() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let out = run(
        home.path(),
        &[
            "convert",
            fixture("codex-jsonl/messages.jsonl").to_str().unwrap(),
            "--to",
            "codex-jsonl",
            "--store",
            "--project",
            APP,
            "--home",
            h,
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = run(
        home.path(),
        &["list", "--home", h, "--project", APP, "--json"],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let prompt = doc["sessions"][0]["first_prompt"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!prompt.starts_with('<'), "{prompt}");
    let first_real = first_user_text_without_context(&fixture("codex-jsonl/messages.jsonl"));
    assert!(
        first_real.starts_with(&prompt.trim_end_matches('…').to_string()),
        "{prompt} / {first_real}"
    );
    // The Markdown export's title too.
    let out = run(
        home.path(),
        &[
            "convert",
            fixture("codex-jsonl/messages.jsonl").to_str().unwrap(),
            "--to",
            "markdown",
            "-o",
            "-",
        ],
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(!md.starts_with("# \\<environment"), "{md}");
}

/// The text of the first user message of a rollout that is not Codex's own context.
fn first_user_text_without_context(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "response_item" && v["payload"]["role"] == "user")
        .filter_map(|v| {
            v["payload"]["content"][0]["text"]
                .as_str()
                .map(String::from)
        })
        .find(|t| !t.trim_start().starts_with('<'))
        .unwrap()
}

#[test]
fn a_home_that_does_not_exist_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-home");
    for command in ["list", "recover"] {
        let out = run(
            dir.path(),
            &[
                command,
                "--home",
                missing.to_str().unwrap(),
                "--project",
                APP,
            ],
        );
        assert_eq!(out.status.code(), Some(3), "{command}: {}", text(&out));
        assert!(
            text(&out).contains("does not exist"),
            "{command}: {}",
            text(&out)
        );
    }
}

/// `recover`'s numbered list on a terminal shows each session's id and path: two sessions
/// with the same first prompt can be told apart.
#[test]
fn the_pick_list_tells_sessions_with_one_title_apart() {
    if !common::prerequisite::python3() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let chats = home.path().join(".qwen/projects/-w-app/chats");
    let a = for_app("qwen-jsonl/plain.jsonl", &chats, "a.jsonl");
    // The same conversation under another session id.
    let other = std::fs::read_to_string(&a).unwrap().replace(
        "6b0b0776-e08e-426e-bff4-91f7fbcd1892",
        "77777777-e08e-426e-bff4-91f7fbcd1892",
    );
    let b = chats.join("b.jsonl");
    common::write_idle(&b, other);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/terminal/recover_pick.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(bin())
        .arg(home.path())
        .arg(APP)
        .arg("1")
        .arg("")
        .output()
        .unwrap();
    let sgr = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    let screen = sgr
        .replace_all(&String::from_utf8_lossy(&out.stdout), "")
        .into_owned();
    assert!(
        screen.contains("sessions of /w/app, newest first:"),
        "{screen}"
    );
    for (id, path) in [("6b0b0776", &a), ("77777777", &b)] {
        assert!(screen.contains(id), "{id} in the list:\n{screen}");
        assert!(
            screen.contains(path.to_str().unwrap()),
            "{} in the list:\n{screen}",
            path.display()
        );
    }
}
