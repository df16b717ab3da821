//! The two-pass reading for `show`, `list` and `tree` (`engine::view::View`) against the
//! whole session (`convert::read`, `Tree`): the same metadata, diagnostics, head, ids,
//! parents, paths, branches, children, roots, orphans, records outside and nodes, and the
//! same head-branch summary `list` shows, for every fixture and real sample (detected and
//! forced through the Claude Code reader) and for the generated sessions; then `sessiontool
//! show` of a file (streamed) against `show -` of the same bytes (standard input: always the
//! whole session) on every Claude Code fixture and sample and on generated sessions, with
//! leaves, widths and `--json`; `tree`, `tree --full` and `tree --json` the same way.

use std::path::Path;
use std::process::{Command, Stdio};

use sessiontool::engine::view::View;
use sessiontool::engine::{FileSource, MadeFor};
use sessiontool::formats::{Format, Input};
use sessiontool::model::{Node, Role, Session};

use super::{files, fmt, generated};

/// The formats the view reads: every format with a reader in two passes, from the registry.
fn viewed() -> Vec<&'static str> {
    super::readers()
}

/// Compares the two readings of the file at `path` (read as `from`, else as detected);
/// whether the view took it.
fn same(path: &Path, from: Option<&'static dyn Format>) -> bool {
    let forced = from.map(|f| f.name());
    let name = path.display().to_string();
    let bytes = std::fs::read(path).unwrap();
    let input = Input {
        name: &name,
        path: Some(path),
        bytes: &bytes,
    };
    let source = FileSource::new(std::fs::File::open(path).unwrap()).unwrap();
    let view = View::open(&name, Some(path), &source, from).unwrap();
    let whole = sessiontool::convert::read(&input, from);
    let read_as = match &whole {
        Ok((f, _)) => Some(f.name()),
        Err(_) => None,
    };
    let Some(view) = view else {
        assert!(
            !read_as.is_some_and(|f| viewed().contains(&f)),
            "{name}: the view did not take a {read_as:?} file"
        );
        return false;
    };
    let (_, outcome) = whole.unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        read_as,
        Some(view.format().name()),
        "{name}: the view took it as another format"
    );
    let at = |what: &str| format!("{name} (forced: {forced:?}): {what}");
    let s = &outcome.session;
    let tree = s.tree();
    // (But for a copy of the input the reader keeps for its own writer.)
    // The same metadata, but for what the reader keeps for its own writer (Gemini CLI's
    // recording: the whole file, which the view never holds).
    let bare = |m: &sessiontool::model::Meta| sessiontool::model::Meta {
        origin: None,
        ..m.clone()
    };
    assert_eq!(bare(&s.meta), bare(view.meta()), "{}", at("meta"));
    let said = |d: &[sessiontool::diag::Diagnostic]| -> Vec<String> {
        d.iter().map(|d| format!("{d}")).collect()
    };
    assert_eq!(
        said(&outcome.diagnostics),
        said(view.diagnostics()),
        "{}",
        at("diagnostics")
    );
    assert_eq!(s.nodes.len(), view.len(), "{}", at("nodes"));
    assert_eq!(
        tree.head(),
        view.head().map(|h| h as usize),
        "{}",
        at("head")
    );
    assert_eq!(
        tree.branch_leaves().len(),
        view.branch_leaves(),
        "{}",
        at("branches")
    );
    // Ids and parents; every node made, as the whole reader makes it (but for the bytes it was
    // read from: only its own writer reads them). `show --json` prints these.
    let all: Vec<u32> = (0..view.len() as u32).collect();
    view.each_node(&all, MadeFor::Anyone, |i, node| {
        let whole = &s.nodes[i as usize];
        assert_eq!(whole.id, view.id(i), "{}", at("id"));
        assert_eq!(whole.parent, view.parent_id(i), "{}", at("parent"));
        assert_eq!(
            Node {
                origin: None,
                ..whole.clone()
            },
            Node {
                origin: None,
                ..node.clone()
            },
            "{}",
            at(&format!("node {i}"))
        );
        Ok(())
    })
    .unwrap();
    // Made for their own writer, with the bytes too: exactly the whole reader's nodes.
    view.each_node(&all, MadeFor::OwnWriter, |i, node| {
        assert_eq!(
            s.nodes[i as usize],
            *node,
            "{}",
            at(&format!("whole node {i}"))
        );
        Ok(())
    })
    .unwrap();
    // Leaves named by whole ids and starts of them (some name several nodes, some none).
    let step = (s.nodes.len() / 40).max(1);
    for node in s.nodes.iter().step_by(step) {
        for wanted in [
            node.id.clone(),
            node.id.chars().take(2).collect(),
            "zz".into(),
        ] {
            let want = tree.find(&wanted).map_err(|e| e.to_string());
            let got = view
                .find(&wanted)
                .map(|i| i as usize)
                .map_err(|e| e.to_string());
            assert_eq!(want, got, "{}", at(&format!("--leaf {wanted}")));
        }
    }
    // Every path, and the other children along it.
    for leaf in (0..s.nodes.len()).step_by(step).chain(tree.head()) {
        let path = tree.path_to(leaf);
        let got: Vec<usize> = view
            .path_to(leaf as u32)
            .into_iter()
            .map(|i| i as usize)
            .collect();
        assert_eq!(path, got, "{}", at(&format!("path to {leaf}")));
        let want: Vec<(usize, u32)> = path
            .iter()
            .enumerate()
            .take(path.len().saturating_sub(1))
            .flat_map(|(pos, &i)| {
                let next = path[pos + 1];
                tree.children(i)
                    .iter()
                    .filter(move |&&c| c != next)
                    .map(move |&c| (pos, c as u32))
            })
            .collect();
        let got: Vec<u32> = path.iter().map(|&i| i as u32).collect();
        assert_eq!(want, view.side_children(&got), "{}", at("side children"));
    }
    // The links `tree` draws.
    let links = view.links();
    let wide = |v: &[u32]| -> Vec<usize> { v.iter().map(|&i| i as usize).collect() };
    assert_eq!(tree.roots(), wide(links.roots()), "{}", at("roots"));
    assert_eq!(tree.orphans(), wide(links.orphans()), "{}", at("orphans"));
    assert_eq!(tree.outside(), wide(&links.outside()), "{}", at("outside"));
    for i in 0..s.nodes.len() {
        assert_eq!(
            tree.children(i),
            wide(links.children(i as u32)),
            "{}",
            at("children")
        );
    }
    // What `list` shows of the head branch.
    let prompt = |t: &str| t.trim().len() > 3;
    let mut messages = 0;
    let mut first = None;
    for i in tree.head().map(|h| tree.path_to(h)).unwrap_or_default() {
        if let Some(m) = s.nodes[i].message() {
            messages += usize::from(matches!(m.role, Role::User | Role::Assistant));
            if first.is_none() && m.role == Role::User && prompt(&m.text()) {
                first = Some(m.text());
            }
        }
    }
    let branch = view.head_branch(prompt).unwrap();
    assert_eq!(
        (messages, first),
        (branch.messages, branch.first_prompt),
        "{}",
        at("head branch")
    );
    true
}

/// No format given, then each the view reads.
fn forced() -> impl Iterator<Item = Option<&'static dyn Format>> {
    std::iter::once(None).chain(viewed().into_iter().map(|f| Some(fmt(f))))
}

/// Each file detected, and forced through each reader the view has.
fn check(paths: &[std::path::PathBuf]) -> usize {
    let mut taken = 0;
    for path in paths {
        for from in forced() {
            taken += usize::from(same(path, from));
        }
    }
    taken
}

#[test]
fn every_fixture_is_viewed_as_the_whole_session() {
    let all = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"));
    let taken = check(&all);
    // Claude Code's own fixtures both ways, and files of other formats whose content does
    // not contradict the Claude Code reader when it is forced.
    let claude = all
        .iter()
        .filter(|p| p.to_string_lossy().contains("/claude-jsonl/"))
        .count();
    assert!(claude >= 5 && taken > 2 * claude, "{taken} taken");
    // Every fixture of every format the view reads, as detected (an empty file is no
    // format's).
    for reader in viewed() {
        for path in super::common::fixtures_of(reader) {
            assert!(same(&path, None), "{} not taken", path.display());
        }
    }
}

#[test]
fn every_real_sample_is_viewed_as_the_whole_session() {
    let Some(root) = super::common::prerequisite::shared("") else {
        return;
    };
    let all = files(&root);
    let claude = all
        .iter()
        .filter(|p| p.to_string_lossy().contains("/claude/"))
        .count();
    assert!(claude >= 5 && check(&all) >= 2 * claude);
}

#[test]
fn generated_sessions_are_viewed_as_the_whole_session() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..150 {
        let path = dir.path().join(format!("generated-{seed}.jsonl"));
        std::fs::write(&path, generated(seed)).unwrap();
        assert!(
            same(&path, Some(fmt("claude-jsonl"))),
            "seed {seed} not taken"
        );
    }
}

#[test]
fn generated_rollouts_are_viewed_as_the_whole_session() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..150 {
        let path = dir.path().join(format!("rollout-{seed}.jsonl"));
        std::fs::write(&path, super::rollout::rollout(seed)).unwrap();
        assert!(
            same(&path, Some(fmt("codex-jsonl"))),
            "seed {seed} not taken"
        );
    }
}

/// `sessiontool COMMAND` with `args`, `stdin` on standard input: exit code, output and
/// errors.
fn run(command: &str, args: &[&str], stdin: Option<&[u8]>) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sessiontool"))
        .arg(command)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.unwrap_or_default().to_vec();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `show FILE` and `tree FILE` (streamed when the view takes it) against the same command of
/// `-` with the same bytes (always the whole session), with `extra` arguments, through the
/// reader of `format` (given with `--from` when `forced`): the same exit code, output and
/// errors, the input's name aside.
fn show_agrees(path: &Path, bytes: &[u8], format: &str, forced: bool, extra: &[String]) {
    agrees("show", path, bytes, (format, forced), extra);
    if extra.is_empty() {
        agrees("tree", path, bytes, (format, forced), &[]);
        agrees("tree", path, bytes, (format, forced), &["--full".into()]);
        agrees("tree", path, bytes, (format, forced), &["--json".into()]);
    }
}

fn agrees(command: &str, path: &Path, bytes: &[u8], read: (&str, bool), extra: &[String]) {
    let (format, forced) = read;
    let file = path.to_str().unwrap();
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let mut streamed = vec![file];
    if forced {
        streamed.extend(["--from", format]);
    }
    streamed.extend(&extra);
    let mut whole = vec!["-", "--from", format];
    whole.extend(&extra);
    let (code, out, err) = run(command, &whole, Some(bytes));
    let want = (
        code,
        out.replace("<stdin>", file),
        err.replace("<stdin>", file),
    );
    let got = run(command, &streamed, None);
    assert_eq!(want, got, "{command} {file} {streamed:?}");
}

/// Options to show `session` with: none, a narrow width, `--json`, and leaves named by some of its
/// ids and starts of them.
fn show_options(session: &Session) -> Vec<Vec<String>> {
    let mut options: Vec<Vec<String>> = vec![
        vec![],
        vec!["--width".into(), "30".into()],
        vec!["--json".into()],
    ];
    let step = (session.nodes.len() / 4).max(1);
    for node in session.nodes.iter().step_by(step) {
        options.push(vec!["--leaf".into(), node.id.clone()]);
        options.push(vec!["--leaf".into(), node.id.chars().take(1).collect()]);
    }
    options
}

fn session_of(format: &str, bytes: &[u8]) -> Session {
    fmt(format)
        .read(&Input {
            name: "x",
            path: None,
            bytes,
        })
        .unwrap()
        .session
}

#[test]
fn show_and_tree_stream_generated_sessions_as_the_whole_session_draws_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut shown = 0;
    for seed in (0..150).step_by(3) {
        let bytes = generated(seed);
        let path = dir.path().join(format!("g{seed}.jsonl"));
        std::fs::write(&path, &bytes).unwrap();
        for extra in show_options(&session_of("claude-jsonl", &bytes)) {
            show_agrees(&path, &bytes, "claude-jsonl", true, &extra);
            shown += 1;
        }
    }
    assert!(shown > 200, "{shown}");
}

#[test]
fn show_and_tree_stream_generated_rollouts_as_the_whole_session_draws_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut shown = 0;
    for seed in (0..150).step_by(5) {
        let bytes = super::rollout::rollout(seed);
        let path = dir.path().join(format!("r{seed}.jsonl"));
        std::fs::write(&path, &bytes).unwrap();
        for extra in show_options(&session_of("codex-jsonl", &bytes)) {
            show_agrees(&path, &bytes, "codex-jsonl", true, &extra);
            shown += 1;
        }
    }
    assert!(shown > 100, "{shown}");
}

#[test]
fn show_and_tree_stream_every_fixture_and_sample_as_the_whole_session_draws_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = files(&root.join("fixtures"));
    if let Some(samples) = super::common::prerequisite::shared("") {
        all.extend(files(&samples));
    }
    let mut shown = 0;
    for path in all {
        let bytes = std::fs::read(&path).unwrap();
        if bytes.starts_with(sessiontool::formats::database::SQLITE_MAGIC) {
            // `show` reads a database whole (and names the file, which standard input has
            // not: the two do not compare).
            continue;
        }
        let source = FileSource::new(std::fs::File::open(&path).unwrap()).unwrap();
        for from in forced() {
            let Some(view) = View::open("x", Some(&path), &source, from).unwrap() else {
                continue;
            };
            let format = view.format().name();
            for extra in show_options(&session_of(format, &bytes)) {
                show_agrees(&path, &bytes, format, from.is_some(), &extra);
                shown += 1;
            }
        }
    }
    assert!(shown > 200, "{shown}");
}

/// Qwen Code sessions whose records share uuids (one node of several records, far apart),
/// with records kept whole and a title set late: `show` and `tree` of the file read them in two
/// passes, as the whole session draws them.
#[test]
fn show_and_tree_stream_merged_qwen_records_as_the_whole_session_draws_them() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        concat!(
            r#"{"uuid":"u1","parentUuid":null,"sessionId":"s","cwd":"/p","type":"user","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","parts":[{"text":"first part"}]}}"#,
            "\n",
            r#"{"uuid":"a1","parentUuid":"u1","sessionId":"s","cwd":"/p","type":"assistant","timestamp":"2025-01-01T00:00:02Z","message":{"role":"model","parts":[{"text":"reply"}]}}"#,
            "\n",
            r#"{"uuid":"u1","type":"user","timestamp":"2025-01-01T00:00:01Z","message":{"parts":[{"text":"second part"}]}}"#,
            "\n[1,2]\n",
            r#"{"uuid":"t1","parentUuid":"a1","type":"system","subtype":"custom_title","systemPayload":{"customTitle":"Late title"}}"#,
            "\n",
            r#"{"uuid":"a1","sessionId":"other","usageMetadata":{"totalTokenCount":5}}"#,
            "\n",
        ),
        concat!(
            r#"{"uuid":"x","type":"user","message":{"parts":["a"]}}{"uuid":"y","parentUuid":"gone","type":"note"}"#,
            "\n",
            r#"{"uuid":"x","message":{"parts":["b"]}}"#,
            "\n{\"no\":\"uuid\"}\n"
        ),
    ];
    let mut shown = 0;
    for (k, text) in cases.iter().enumerate() {
        let bytes = text.as_bytes();
        let path = dir.path().join(format!("q{k}.jsonl"));
        std::fs::write(&path, bytes).unwrap();
        assert!(same(&path, Some(fmt("qwen-jsonl"))), "case {k} not taken");
        for extra in show_options(&session_of("qwen-jsonl", bytes)) {
            show_agrees(&path, bytes, "qwen-jsonl", true, &extra);
            shown += 1;
        }
    }
    assert!(shown >= 10, "{shown}");
}
