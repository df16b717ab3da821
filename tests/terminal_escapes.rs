//! Session text and file names never reach the terminal raw (issue 14, item 14). A session
//! whose prompt, reply, thought, tool name and arguments, tool output, title, ids, session
//! id, a missing parent's id, and file name all hold escape sequences (OSC 52 that sets the
//! clipboard, `ESC[2J` that clears the screen, an OSC that sets the window title, BEL, a C1
//! `CSI`, a bidirectional override) goes through every command that prints for people: no
//! such byte may reach standard output or standard error (with `--color always`, only
//! sessiontool's own SGR colour sequences). `--json` still carries every string exactly.

mod common;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

/// Every way in: OSC 52 (clipboard), erase display, OSC 0 (window title, ended by ST), BEL,
/// C1 CSI, a right-to-left override.
const HOSTILE: &str = "A\x1b]52;c;ZXZpbA==\x07B\x1b[2JC\x1b]0;pwned\x1b\\D\x07E\u{9b}31mF\u{202e}G";

const PROJECT: &str = "/w/app";

fn h(prefix: &str) -> String {
    format!("{prefix}{HOSTILE}")
}

/// The session's records (Qwen Code JSONL): prompt, reply with a thought and a tool call, the
/// tool's result, a title, a record whose parent is lost, and a last prompt (the head).
fn records() -> Vec<Value> {
    let base = |uuid: String, parent: Option<String>, kind: &str| {
        json!({
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": h("session"),
            "timestamp": "2025-12-06T10:30:00.000Z",
            "type": kind,
            "cwd": PROJECT,
        })
    };
    let with = |mut v: Value, key: &str, value: Value| {
        v[key] = value;
        v
    };
    let (u1, u2, u3, u4) = (h("u1"), h("u2"), h("u3"), h("u4"));
    vec![
        with(
            base(u1.clone(), None, "user"),
            "message",
            json!({"role": "user", "parts": [{"text": h("prompt ")}]}),
        ),
        with(
            base(u2.clone(), Some(u1), "assistant"),
            "message",
            json!({"role": "model", "parts": [
                {"text": h("thinking "), "thought": true},
                {"text": format!("{}\nsecond line\r\nthird", h("reply "))},
                {"functionCall": {"id": "call1", "name": h("tool"), "args": {"command": h("args ")}}}
            ]}),
        ),
        with(
            base(u3.clone(), Some(u2), "tool_result"),
            "message",
            json!({"role": "user", "parts": [
                {"functionResponse": {"id": "call1", "name": h("tool"), "response": {"output": h("output ")}}}
            ]}),
        ),
        with(
            with(
                base(u4.clone(), Some(u3), "system"),
                "subtype",
                json!("custom_title"),
            ),
            "systemPayload",
            json!({"customTitle": h("title "), "titleSource": "manual"}),
        ),
        with(
            base(h("orphan"), Some(h("gone")), "user"),
            "message",
            json!({"role": "user", "parts": [{"text": h("lost ")}]}),
        ),
        with(
            base(h("u6"), Some(u4), "user"),
            "message",
            json!({"role": "user", "parts": [{"text": h("last ")}]}),
        ),
    ]
}

/// A hostile file name: an erase-display, a C1 CSI and a BEL in it.
fn file_name() -> OsString {
    OsString::from(format!("chat\x1b[2J\u{9b}31m\x07{}.jsonl", "\u{202e}lmth"))
}

struct Setup {
    _home: tempfile::TempDir,
    home: PathBuf,
    file: PathBuf,
}

/// The session in Qwen Code's store for [`PROJECT`], under the hostile name.
fn setup() -> Setup {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".qwen/projects/-w-app/chats");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join(file_name());
    let text: String = records().iter().map(|r| format!("{r}\n")).collect();
    fs::write(&file, text).unwrap();
    Setup {
        home: home.path().to_path_buf(),
        _home: home,
        file,
    }
}

fn sessiontool(args: &[&OsStr]) -> Output {
    assert_cmd::Command::cargo_bin("sessiontool")
        .unwrap()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// Where a byte sequence that a terminal acts on is, if any: C0 controls but line feed and
/// tab, DEL, C1 controls (UTF-8 `C2 80`..`C2 9F`), bidirectional overrides and isolates;
/// with `colour`, an ESC is allowed only as the start of an SGR sequence (`ESC [ digits;... m`).
fn raw_control(bytes: &[u8], colour: bool) -> Option<usize> {
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if colour && b == 0x1b {
            let sgr = bytes[i + 1..].strip_prefix(b"[").and_then(|rest| {
                let n = rest
                    .iter()
                    .take_while(|c| c.is_ascii_digit() || **c == b';')
                    .count();
                (rest.get(n) == Some(&b'm')).then_some(n + 2)
            });
            match sgr {
                Some(len) => {
                    i += 1 + len;
                    continue;
                }
                None => return Some(i),
            }
        }
        let c0 = (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f;
        let c1 = b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n));
        let bidi = b == 0xe2
            && matches!(
                (bytes.get(i + 1), bytes.get(i + 2)),
                (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
            );
        if c0 || c1 || bidi {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn assert_safe(what: &str, out: &Output, colour: bool) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(at) = raw_control(bytes, colour) {
            let from = at.saturating_sub(40);
            panic!(
                "{what}: a raw control sequence on {stream} at byte {at}: {:?}",
                String::from_utf8_lossy(&bytes[from..(at + 40).min(bytes.len())])
            );
        }
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Each command that prints for people, on the hostile session, as `(what, args, exit code)`.
fn human_commands(s: &Setup) -> Vec<(String, Vec<OsString>, i32)> {
    let file = s.file.clone().into_os_string();
    let home = s.home.clone().into_os_string();
    let dir = s.file.parent().unwrap().as_os_str().to_os_string();
    let with = |args: &[&str], extra: &[&OsString]| {
        let mut v = os(args);
        v.extend(extra.iter().map(|e| (*e).clone()));
        v
    };
    let store = |args: &[&str]| {
        let mut v = os(args);
        v.extend([
            "--home".into(),
            home.clone(),
            "--project".into(),
            PROJECT.into(),
        ]);
        v
    };
    let out_md = s.home.join("out.md").into_os_string();
    let missing = s
        .home
        .join(format!("missing{HOSTILE}.jsonl"))
        .into_os_string();
    vec![
        ("show".into(), with(&["show"], &[&file]), 0),
        (
            "show --width 30".into(),
            with(&["show", "--width", "30"], &[&file]),
            0,
        ),
        (
            "show --leaf (an id the session has)".into(),
            with(&["show", "--leaf", &h("u2")], &[&file]),
            0,
        ),
        (
            "show --leaf (an unknown one)".into(),
            with(&["show", "--leaf", &h("nope")], &[&file]),
            3,
        ),
        (
            "show (a missing file)".into(),
            with(&["show"], &[&missing]),
            3,
        ),
        ("tree".into(), with(&["tree"], &[&file]), 0),
        ("tree --full".into(), with(&["tree", "--full"], &[&file]), 0),
        ("fsck".into(), with(&["fsck"], &[&file]), 4),
        (
            "fsck -v (a folder)".into(),
            with(&["fsck", "-v"], &[&dir]),
            4,
        ),
        ("repair -n".into(), with(&["repair", "-n"], &[&file]), 4),
        ("detect".into(), with(&["detect"], &[&file]), 0),
        (
            "convert".into(),
            with(&["convert", "--force"], &[&file, &"-o".into(), &out_md]),
            0,
        ),
        ("list".into(), store(&["list"]), 0),
        ("recover -n".into(), store(&["recover", "-n"]), 0),
    ]
}

#[test]
fn no_escape_sequence_from_a_session_or_a_file_name_reaches_the_terminal() {
    let s = setup();
    for (what, args, code) in human_commands(&s) {
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        let out = sessiontool(&args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_safe(&what, &out, false);
        // What was there is shown, visibly.
        let shown = [&out.stdout[..], &out.stderr[..]].concat();
        assert!(
            String::from_utf8_lossy(&shown).contains("\\x1b"),
            "{what} shows the escapes it met:\n{}",
            String::from_utf8_lossy(&shown)
        );
        // With colour, only sessiontool's own SGR sequences.
        let mut coloured = vec![OsStr::new("--color"), OsStr::new("always")];
        coloured.extend(&args);
        assert_safe(
            &format!("{what} --color always"),
            &sessiontool(&coloured),
            true,
        );
    }
}

#[test]
fn show_keeps_the_lines_of_a_body_and_escapes_the_rest() {
    let s = setup();
    let out = sessiontool(&[OsStr::new("show"), s.file.as_os_str()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "reply A\\x1b]52;c;ZXZpbA==\\x07B\\x1b[2JC\\x1b]0;pwned\\x1b\\D\\x07E\\u{9b}31mF\\u{202e}G\nsecond line\nthird"
        ),
        "{text}"
    );
    assert!(text.contains("→ toolA\\x1b]52"), "the tool's name: {text}");
    assert!(
        text.contains("← toolA\\x1b]52"),
        "the result's tool name: {text}"
    );
}

/// The JSON documents carry the session's strings exactly: escaping is for terminals only.
#[test]
fn json_output_keeps_every_string_exactly() {
    let s = setup();
    let json = |args: &[&OsStr]| -> Value {
        let out = sessiontool(args);
        assert_safe(&format!("{args:?}"), &out, false);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };
    let file = s.file.as_os_str();
    let home = s.home.as_os_str();
    let name = s.file.to_str().unwrap();

    let show = json(&[OsStr::new("show"), OsStr::new("--json"), file]);
    assert_eq!(show["file"], name);
    let nodes = show["session"]["nodes"].as_array().unwrap();
    assert_eq!(nodes[0]["id"], h("u1"));
    let text = serde_json::to_string(&show).unwrap();
    for exact in [h("prompt "), h("tool"), h("output "), h("thinking ")] {
        assert!(
            text.contains(&serde_json::to_string(&exact).unwrap()),
            "{exact:?} in show --json"
        );
    }

    let tree = json(&[OsStr::new("tree"), OsStr::new("--json"), file]);
    assert_eq!(tree["nodes"][0]["id"], h("u1"));
    assert_eq!(tree["nodes"][4]["parent"], h("gone"));

    let fsck = json(&[OsStr::new("fsck"), OsStr::new("--json"), file]);
    let issues = serde_json::to_string(&fsck["files"][0]["issues"]).unwrap();
    let gone = serde_json::to_string(&h("gone")).unwrap();
    assert!(
        issues.contains(gone.trim_matches('"')),
        "the orphan's parent, exactly: {issues}"
    );

    let detect = json(&[OsStr::new("detect"), OsStr::new("--json"), file]);
    assert_eq!(detect["files"][0]["file"], name);

    let list = json(&[
        OsStr::new("list"),
        OsStr::new("--json"),
        OsStr::new("--home"),
        home,
        OsStr::new("--project"),
        OsStr::new(PROJECT),
    ]);
    let entry = &list["sessions"][0];
    assert_eq!(entry["path"], name);
    assert_eq!(entry["title"], h("title "));
    assert_eq!(entry["id"], h("session"));
}

/// `recover`'s numbered list on a terminal (a pseudo-terminal, so with colour): the titles
/// it lists are escaped, and nothing but sessiontool's colours reaches the screen.
#[test]
fn recover_pick_list_on_a_terminal_is_escaped() {
    if !common::prerequisite::python3() {
        return;
    }
    let s = setup();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/terminal/recover_pick.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("sessiontool"))
        .arg(&s.home)
        .arg(PROJECT)
        .arg("1")
        .arg("")
        .output()
        .unwrap();
    let screen = &out.stdout;
    assert!(
        String::from_utf8_lossy(screen).contains("sessions of /w/app, newest first:"),
        "{}\n{}",
        String::from_utf8_lossy(screen),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(screen).contains("title A\\x1b]52"),
        "{}",
        String::from_utf8_lossy(screen)
    );
    // The terminal itself turns each line feed into CR LF; nothing else may be raw.
    let screen: Vec<u8> = screen.iter().copied().filter(|&b| b != b'\r').collect();
    if let Some(at) = raw_control(&screen, true) {
        panic!(
            "a raw control sequence on the terminal at byte {at}: {:?}",
            String::from_utf8_lossy(&screen[at.saturating_sub(40)..(at + 40).min(screen.len())])
        );
    }
}
