//! The command line keeps what its output and help promise, as ripgrep, fd and git users
//! expect (issue 16, items 9, 13, 14, 16, 20, 21): ids as `tree` prints them are taken back,
//! `-q` prints errors only, `--color always` colours every command and `never` none, `fsck -`
//! reads standard input, completions offer names where names are taken, manual pages keep
//! their examples and cite only pages that exist, alike findings are grouped.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use sessiontool::ids::sha256_hex;

use common::fixture;

const APP: &str = "/w/app";

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sessiontool")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A Qwen Code session: a root, then two replies to it whose ids share their first eight
/// characters (as `tree` shows them), each the leaf of a branch.
fn twin_branches(dir: &Path) -> PathBuf {
    let record = |uuid: &str, parent: Option<&str>, kind: &str, role: &str, text: &str| {
        json!({"uuid": uuid, "parentUuid": parent, "sessionId": "s1", "type": kind,
               "timestamp": "2025-12-06T10:30:00.000Z", "cwd": APP,
               "message": {"role": role, "parts": [{"text": text}]}})
        .to_string()
    };
    let lines = [
        record("root0000-0000", None, "user", "user", "question"),
        record(
            "abcd1234-aaaa",
            Some("root0000-0000"),
            "assistant",
            "model",
            "first answer",
        ),
        record(
            "abcd1234-bbbb",
            Some("root0000-0000"),
            "assistant",
            "model",
            "second answer",
        ),
        record(
            "ef567890-cccc",
            Some("abcd1234-bbbb"),
            "user",
            "user",
            "thanks",
        ),
    ];
    let path = dir.join("twins.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn ids_as_tree_prints_them_are_taken_back() {
    let branches = fixture("qwen-jsonl/branches.jsonl");
    let tree = text(&run(&["tree", s(&branches)]));
    // The leaf that is not the head, as tree prints it.
    let leaf = tree
        .lines()
        .find(|l| l.contains("◇ leaf"))
        .and_then(|l| l.split("→").last())
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    assert_eq!(leaf.len(), 8, "{tree}");
    let out = run(&["show", s(&branches), "--leaf", &leaf]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Added `playChime()`"), "{}", text(&out));
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("one.json");
    let out = run(&[
        "convert",
        s(&branches),
        "--leaf",
        &leaf,
        "--to",
        "gemini-json",
        "-o",
        s(&to),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::read_to_string(&to).unwrap().contains("playChime"));
    // The start of two ids: both are named, and nothing is written.
    let twins = twin_branches(dir.path());
    let to = dir.path().join("twins.json");
    for args in [
        vec!["show", s(&twins), "--leaf", "abcd1234"],
        vec![
            "convert",
            s(&twins),
            "--leaf",
            "abcd",
            "--to",
            "gemini-json",
            "-o",
            s(&to),
        ],
    ] {
        let out = run(&args);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains("abcd1234-aaaa, abcd1234-bbbb"),
            "{args:?}: {said}"
        );
    }
    assert!(!to.exists());
    // An id that names nothing: 3, as for a session recover cannot find.
    let out = run(&["show", s(&twins), "--leaf", "zz"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}

/// A home where /w/app has a Qwen Code session and a legacy Gemini one (to migrate).
fn home_with_sessions() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let chats = home.path().join(".qwen/projects/-w-app/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let text = std::fs::read_to_string(fixture("qwen-jsonl/tools.jsonl"))
        .unwrap()
        .replace("/home/dana/projects/pomodoro", APP);
    common::write_idle(&chats.join("a.jsonl"), text);
    common::legacy(
        "gemini-json/plain.json",
        APP,
        &home
            .path()
            .join(".gemini/tmp")
            .join(sha256_hex(APP))
            .join("chats"),
        "session-2025-09-14T08-14-a116c9ed.json",
    );
    home
}

#[test]
fn quiet_prints_errors_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with_sessions();
    let h = s(home.path());
    let out_dir = dir.path().join("out");
    let src = fixture("gemini-json");
    let notices = fixture("gemini-json/notices.json");
    let bom = fixture("damaged/bom.jsonl");
    let silent: Vec<Vec<&str>> = vec![
        vec!["convert", s(&notices), "-o", "PLACEHOLDER"],
        vec!["convert", s(&src), "--to", "qwen-jsonl", "-o", s(&out_dir)],
        vec!["fsck", s(&bom)],
        vec!["recover", "--project", APP, "--home", h],
        vec![
            "migrate",
            "--tool",
            "gemini",
            "--to",
            "gemini-slug",
            "--project",
            APP,
            "--home",
            h,
        ],
        vec!["relocate", APP, "/w/moved", "--home", h],
        vec!["man", "--dir", "PAGES"],
    ];
    let file = dir.path().join("a.jsonl");
    let pages = dir.path().join("pages");
    let mut loud = Vec::new();
    for mut args in silent {
        for a in args.iter_mut() {
            if *a == "PLACEHOLDER" {
                *a = s(&file);
            } else if *a == "PAGES" {
                *a = s(&pages);
            }
        }
        let mut quiet = vec!["-q"];
        quiet.extend(&args);
        let out = run(&quiet);
        if !out.status.success() || !text(&out).is_empty() {
            loud.push(format!(
                "{args:?}: exit {:?}:\n{}",
                out.status.code(),
                text(&out)
            ));
        }
    }
    assert!(
        loud.is_empty(),
        "-q prints nothing when all is well:\n{}",
        loud.join("\n")
    );
    // Errors still are.
    let out = run(&["-q", "show", s(&dir.path().join("missing.jsonl"))]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error:"));
    // fsck -q: the files with errors, with their errors; no warnings, summary or hints.
    let out = run(&[
        "-q",
        "fsck",
        s(&fixture("damaged/torn-tail.jsonl")),
        s(&fixture("damaged/bom.jsonl")),
    ]);
    assert_eq!(out.status.code(), Some(4));
    let said = text(&out);
    assert!(
        said.contains("torn-tail.jsonl") && said.contains("error"),
        "{said}"
    );
    assert!(
        !said.contains("bom.jsonl") && !said.contains("next:") && !said.contains("checked"),
        "{said}"
    );
    // What a command is asked for is still printed (the sessions moved to /w/moved above).
    let out = run(&["-q", "list", "--all", "--home", h]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("TOOL"),
        "{}",
        text(&out)
    );
}

/// Only sessiontool's SGR sequences count as colour.
fn coloured(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes).contains("\x1b[")
}

#[test]
fn color_always_colours_every_command_and_never_none() {
    let home = tempfile::tempdir().unwrap();
    let chats = home.path().join(".qwen/projects/-w-app/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let torn = std::fs::read_to_string(fixture("damaged/torn-tail.jsonl"))
        .unwrap()
        .replace("/home/dana/projects/pomodoro", APP);
    common::write_idle(&chats.join("t.jsonl"), torn);
    let h = s(home.path());
    let damaged = fixture("damaged/torn-tail.jsonl");
    let tools = fixture("qwen-jsonl/tools.jsonl");
    let branches = fixture("qwen-jsonl/branches.jsonl");
    // (args, which stream carries the colour)
    let cases: Vec<(Vec<&str>, bool)> = vec![
        (vec!["fsck", s(&damaged)], true),
        (vec!["list", "--project", APP, "--home", h], true),
        (vec!["recover", "-n", "--project", APP, "--home", h], true),
        (vec!["show", "/no/such/file.jsonl"], false),
        (vec!["show", s(&tools)], true),
        (vec!["tree", s(&branches)], true),
    ];
    let mut wrong = Vec::new();
    for (args, on_stdout) in cases {
        let mut always = vec!["--color", "always"];
        always.extend(&args);
        let out = run(&always);
        let stream = if on_stdout { &out.stdout } else { &out.stderr };
        if !coloured(stream) {
            wrong.push(format!("{args:?} --color always:\n{}", text(&out)));
        }
        let mut never = vec!["--color", "never"];
        never.extend(&args);
        let out = run(&never);
        if coloured(&out.stdout) || coloured(&out.stderr) {
            wrong.push(format!("{args:?} --color never:\n{}", text(&out)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The health column is coloured by health.
    let out = run(&["--color", "always", "list", "--project", APP, "--home", h]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\x1b[1m\x1b[31mREPAIR"),
        "{}",
        text(&out)
    );
}

/// `sessiontool ARGS` with standard output and standard error on a pseudo-terminal, as a
/// person runs it, with `env` set and no colour variables inherited: what the terminal got.
fn on_terminal(args: &[&str], env: &[(&str, &str)]) -> String {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty only writes the two descriptors it opens; no name, modes or size.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both were just opened by openpty and are owned by nothing else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut command = Command::new(bin());
    command
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "xterm-256color")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    let mut child = command.spawn().unwrap();
    // The terminal ends (EIO) when the child's ends are the last ones open.
    drop(command);
    let mut seen = Vec::new();
    let mut master = std::fs::File::from(master);
    let mut buf = [0u8; 4096];
    loop {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    child.wait().unwrap();
    String::from_utf8_lossy(&seen).into_owned()
}

/// On a terminal colour is on by default; `NO_COLOR` turns it off, and `--color` decides
/// over both.
#[test]
fn on_a_terminal_colour_follows_no_color_and_the_option() {
    let torn = fixture("damaged/torn-tail.jsonl");
    let fsck = ["fsck", s(&torn)];
    let error = ["show", "/no/such/file.jsonl"];
    /// (--color, the command, the environment, whether colour is wanted)
    type Case<'a> = (&'a [&'a str], &'a [&'a str], &'a [(&'a str, &'a str)], bool);
    let cases: [Case; 6] = [
        (&[], &fsck, &[], true),
        (&[], &error, &[], true),
        (&[], &fsck, &[("NO_COLOR", "1")], false),
        (&[], &error, &[("NO_COLOR", "1")], false),
        (&["--color", "never"], &fsck, &[], false),
        (&["--color", "always"], &fsck, &[("NO_COLOR", "1")], true),
    ];
    let mut wrong = Vec::new();
    for (option, args, env, want) in cases {
        let all: Vec<&str> = option.iter().chain(args).copied().collect();
        let screen = on_terminal(&all, env);
        if !screen.contains("sessiontool") && !screen.contains("torn") {
            wrong.push(format!(
                "{all:?} {env:?}: nothing on the terminal: {screen:?}"
            ));
        } else if coloured(screen.as_bytes()) != want {
            wrong.push(format!("{all:?} {env:?}: colour {}: {screen:?}", !want));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn fsck_reads_standard_input_and_needs_a_path() {
    let mut child = Command::new(bin())
        .args(["fsck", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let torn = std::fs::read(fixture("damaged/torn-tail.jsonl")).unwrap();
    child.stdin.take().unwrap().write_all(&torn).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(4), "{said}");
    assert!(
        said.contains("<stdin>") && said.contains("torn-tail"),
        "{said}"
    );
    let out = run(&["fsck", "--repair", "-"]);
    assert_eq!(out.status.code(), Some(16), "{}", text(&out));
    let out = run(&["fsck"]);
    assert_eq!(out.status.code(), Some(16), "{}", text(&out));
    let help = text(&run(&["fsck", "--help"]));
    assert!(
        help.contains("Usage: sessiontool fsck [OPTIONS] <PATH>..."),
        "{help}"
    );
}

#[test]
fn completions_offer_names_where_names_are_taken() {
    let bash = String::from_utf8(run(&["completions", "bash"]).stdout).unwrap();
    let formats = "qwen-jsonl claude-jsonl pi-jsonl codex-jsonl gemini-jsonl llxprt-jsonl agent-jsonl gemini-json simple-agent-json checkpoint";
    assert!(
        bash.contains(&format!("compgen -W \"{formats} markdown html\"")),
        "--to"
    );
    // --from also reads the older Codex layout, which is never written.
    let readable = formats.replace("codex-jsonl", "codex-jsonl codex-legacy-jsonl");
    assert!(
        bash.contains(&format!("compgen -W \"{readable}\"")),
        "--from: no exports, and the read-only layout"
    );
    assert!(bash.contains("compgen -W \"gemini qwen claude llxprt pi codex agent simple-agent\""));
    assert!(
        bash.contains("compgen -W \"sha256 gemini-slug dashed claude pi\""),
        "--scheme"
    );
    let zsh = String::from_utf8(run(&["completions", "zsh"]).stdout).unwrap();
    assert!(zsh.contains(":FORMAT:(qwen-jsonl "), "zsh --to/--from");
    assert!(
        zsh.contains(":DIR:_files -/"),
        "zsh: folders where folders are taken"
    );
}

#[test]
fn manual_pages_keep_their_examples_and_cite_only_pages_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["man", "--dir", s(dir.path())]);
    assert!(out.status.success(), "{}", text(&out));
    let written: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let cite = regex::Regex::new(r"(sessiontool(?:\\-[a-z]+)*)\\?f?R?\((\d)\)").unwrap();
    for page in &written {
        let roff = std::fs::read_to_string(dir.path().join(page)).unwrap();
        for c in cite.captures_iter(&roff) {
            let cited = format!("{}.{}", c[1].replace("\\-", "-"), &c[2]);
            assert!(
                written.contains(&cited),
                "{page} cites {cited}, which is not written"
            );
        }
    }
    let recover = std::fs::read_to_string(dir.path().join("sessiontool-recover.1")).unwrap();
    assert!(
        recover.contains(".SH SYNOPSIS\n\\fBsessiontool recover\\fR"),
        "{recover}"
    );
    // The examples line for line: in no-fill mode, each on its own line.
    let examples = recover.split(".SH \"EXAMPLES\"\n").nth(1).unwrap();
    assert!(
        examples.starts_with(".nf\n  sessiontool recover  "),
        "{examples}"
    );
    assert!(
        examples.contains(
            "\n  sessiontool recover \\-n                         show what would be done\n"
        ),
        "{examples}"
    );
    assert!(!written.iter().any(|p| p.contains("help")), "{written:?}");
    // groff typesets them without a warning (troff reads Latin-1: other characters escaped).
    let groff = Command::new("groff").arg("--version").output().is_ok();
    if common::prerequisite::present(groff, "groff is not installed: the pages are not typeset") {
        for page in &written {
            let out = Command::new("groff")
                .args(["-man", "-Tutf8", "-ww", "-z"])
                .arg(dir.path().join(page))
                .output()
                .unwrap();
            assert!(
                out.stderr.is_empty(),
                "{page}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn formats_are_listed_in_aligned_columns() {
    let out = String::from_utf8(run(&["formats"]).stdout).unwrap();
    // Where each line's description starts: after three columns, the same on every line.
    let three = regex::Regex::new(r"^(\S+ +){3}").unwrap();
    let columns: Vec<usize> = out
        .lines()
        .map(|l| three.find(l).map_or(0, |m| m.end()))
        .collect();
    assert!(columns.iter().all(|&c| c == columns[0] && c > 0), "{out}");
    assert!(out.contains("codex-legacy-jsonl codex"), "{out}");
    assert!(
        regex::Regex::new(r"simple-agent-json +simple-agent +json")
            .unwrap()
            .is_match(&out),
        "{out}"
    );
}

/// A Qwen record whose reply makes `n` tool calls, none answered.
fn calls_without_results(dir: &Path, n: usize) -> PathBuf {
    let calls: Vec<Value> = (0..n)
        .map(|i| json!({"functionCall": {"id": format!("call{i}"), "name": "read_file", "args": {}}}))
        .collect();
    let lines = [
        json!({"uuid": "u1", "parentUuid": null, "sessionId": "s1", "type": "user", "cwd": APP,
               "timestamp": "2025-12-06T10:30:00.000Z",
               "message": {"role": "user", "parts": [{"text": "read them all"}]}}),
        json!({"uuid": "u2", "parentUuid": "u1", "sessionId": "s1", "type": "assistant", "cwd": APP,
               "timestamp": "2025-12-06T10:30:01.000Z",
               "message": {"role": "model", "parts": calls}}),
    ];
    let path = dir.join("calls.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn findings_alike_on_one_line_are_grouped() {
    let dir = tempfile::tempdir().unwrap();
    let file = calls_without_results(dir.path(), 16);
    let out = run(&["fsck", s(&file)]);
    let said = text(&out);
    // Qwen Code answers them itself on resume: warnings.
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(said.matches("tool-call-unanswered").count(), 1, "{said}");
    assert!(
        said.contains("(and 15 more alike on this line; -v lists them)"),
        "{said}"
    );
    assert!(said.contains("fix (each):"), "{said}");
    assert!(said.contains("16 warnings"), "{said}");
    // -v and --json list every one.
    let out = run(&["fsck", "-v", s(&file)]);
    assert_eq!(text(&out).matches("tool-call-unanswered").count(), 16);
    let out = run(&["fsck", "--json", s(&file)]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["files"][0]["issues"].as_array().unwrap().len(), 16);
}

#[test]
fn tree_json_lists_the_notes_tree_counts() {
    let seed = fixture("qwen-jsonl/seed000.jsonl");
    let human = text(&run(&["tree", s(&seed)]));
    assert!(
        human.contains("note(s) on how the file was read (--json lists them)"),
        "{human}"
    );
    let out = run(&["tree", "--json", s(&seed)]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = doc["diagnostics"].as_array().unwrap();
    assert!(!notes.is_empty(), "{doc:#}");
    assert!(notes.iter().all(|n| n["severity"] == "info"));
}

/// README's install commands work on a fresh home: each folder a completion script is
/// written into is made first.
#[test]
fn readme_makes_the_folders_it_writes_completions_into() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut made: Vec<String> = Vec::new();
    let mut checked = 0;
    for line in readme.lines() {
        if let Some(dirs) = line.strip_prefix("mkdir -p ") {
            made.extend(dirs.split_whitespace().map(String::from));
        }
        if let Some((_, target)) = line
            .strip_prefix("sessiontool completions ")
            .and_then(|l| l.split_once(" > "))
        {
            let target = target.split_whitespace().next().unwrap();
            let dir = &target[..target.rfind('/').unwrap()];
            assert!(
                made.iter().any(|m| m == dir),
                "{dir} is not made before: {line}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "README lists the completion commands");
}
