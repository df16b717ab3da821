//! The migration scripts in `examples/`, run as a user runs them, against fake homes built
//! in temporary folders with the library's own API (`place`, `convert`): never the real home.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use sessiontool::ids::sha256_hex;
use sessiontool::{Home, PlaceOptions, Query};

use common::{fixture, legacy};

const APP: &str = "/w/app";
const LEGACY: &str = "gemini_legacy_to_jsonl";
const EXPORT: &str = "export_project_markdown";

/// An example's binary: `target/<profile>/examples/<name>`, beside this test's own
/// `target/<profile>/deps/`. `cargo test` builds examples, `cargo test --test examples` does
/// not: they are built (or brought up to date) once, with this test's profile and target
/// folder.
fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
        let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()));
        cargo
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--quiet", "--example", LEGACY, "--example", EXPORT])
            .arg("--target-dir")
            .arg(profile_dir.parent().unwrap());
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => {}
            Some("release") => {
                cargo.arg("--release");
            }
            Some(profile) => {
                cargo.args(["--profile", profile]);
            }
            None => {}
        }
        let status = cargo.status().expect("cargo runs");
        assert!(status.success(), "building the examples failed");
        profile_dir.join("examples")
    });
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Runs an example in `cwd` with `args`, away from the real stores: HOME and the tools'
/// variables point into the fake home unless `env` says otherwise.
fn run(name: &str, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(example(name));
    c.current_dir(cwd).args(args).env("HOME", cwd);
    for var in sessiontool::store::home::overrides() {
        c.env_remove(var);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file below `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

struct Fake {
    dir: tempfile::TempDir,
    /// Gemini legacy sessions of /w/app in its sha256 folder: one alone, one the CLI already
    /// resumed into its `.jsonl` twin, one cut off by a crash.
    plain: PathBuf,
    resumed: PathBuf,
    damaged: PathBuf,
    /// A legacy session of /w/other, placed by the library.
    other: PathBuf,
    /// Not to be converted: a checkpoint and Qwen Code's legacy JSON (the same format).
    checkpoint: PathBuf,
    qwen_legacy: PathBuf,
    /// Other tools' sessions of /w/app.
    qwen: PathBuf,
    claude: PathBuf,
}

impl Fake {
    fn home(&self) -> Home {
        Home::at(self.dir.path())
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

fn fake_home() -> Fake {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let home = Home::at(h);
    let chats = h.join(".gemini/tmp").join(sha256_hex(APP)).join("chats");
    let plain = legacy(
        "gemini-json/plain.json",
        APP,
        &chats,
        "session-2025-09-14T08-14-a116c9ed.json",
    );
    let resumed = legacy(
        "gemini-json/thoughts.json",
        APP,
        &chats,
        "session-2025-12-02T16-41-baaa5732.json",
    );
    sessiontool::convert(
        &resumed,
        "gemini-jsonl",
        resumed.with_extension("jsonl"),
        false,
    )
    .unwrap();
    let damaged = chats.join("session-2025-11-01T10-00-deadbeef.json");
    std::fs::copy(fixture("damaged/truncated-document.json"), &damaged).unwrap();
    let place = |rel: &str, to: &str, project: &str, tag: Option<&str>| {
        let options = PlaceOptions {
            tag: tag.map(String::from),
            ..PlaceOptions::default()
        };
        sessiontool::place(&home, fixture(rel), to, project, &options)
            .unwrap()
            .path
    };
    let other = place("gemini-json/tools.json", "gemini-json", "/w/other", None);
    let checkpoint = place("gemini-json/plain.json", "checkpoint", APP, Some("t1"));
    let qwen_legacy = legacy(
        "gemini-json/tools.json",
        APP,
        &h.join(".qwen/tmp").join(sha256_hex(APP)).join("chats"),
        "session-2025-10-01T09-56-f9d35d43.json",
    );
    let qwen = place("qwen-jsonl/plain.jsonl", "qwen-jsonl", APP, None);
    let claude = place("claude-jsonl/plain.jsonl", "claude-jsonl", APP, None);
    place("qwen-jsonl/tools.jsonl", "qwen-jsonl", "/w/other", None);
    Fake {
        dir,
        plain,
        resumed,
        damaged,
        other,
        checkpoint,
        qwen_legacy,
        qwen,
        claude,
    }
}

fn twin(path: &Path) -> PathBuf {
    path.with_extension("jsonl")
}

/// The id and text of every node, to compare a session with its twin.
fn content(path: &Path) -> (Option<String>, Vec<(String, String)>) {
    let s = sessiontool::open(path).unwrap().session;
    let nodes = s
        .nodes
        .iter()
        .map(|n| {
            let text = n.message().map(|m| m.text()).unwrap_or_default();
            (n.id.clone(), text)
        })
        .collect();
    (s.meta.id, nodes)
}

#[test]
fn legacy_to_jsonl_dry_run_reads_everything_and_writes_nothing() {
    let fake = fake_home();
    let before = snapshot(fake.path());
    // No --home: $HOME, with GEMINI_CLI_HOME moving Gemini's store as the CLI does.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = run(
        LEGACY,
        elsewhere.path(),
        &["--dry-run"],
        &[("GEMINI_CLI_HOME", fake.path())],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    for would in [&fake.plain, &fake.other] {
        assert!(
            so.contains(&format!("would write {}", twin(would).display())),
            "{so}"
        );
    }
    assert!(
        so.contains(&format!("exists   {}", twin(&fake.resumed).display())),
        "{so}"
    );
    assert!(
        so.contains("4 legacy session(s) in ")
            && so.contains(": 2 .jsonl would be written, 1 had one already, 1 could not be read"),
        "{so}"
    );
    // What could not be read: where, and what to do.
    assert!(
        se.contains(&format!(
            "not converted: {}:118 (byte 3900)",
            fake.damaged.display()
        )),
        "{se}"
    );
    assert!(
        se.contains(&format!("`sessiontool repair {}`", fake.damaged.display())),
        "{se}"
    );
    assert_eq!(snapshot(fake.path()), before, "a dry run wrote something");
}

#[test]
fn legacy_to_jsonl_writes_each_twin_beside_its_session_once() {
    let fake = fake_home();
    let h = fake.path().to_str().unwrap();
    let resumed_twin = std::fs::read(twin(&fake.resumed)).unwrap();

    let out = run(LEGACY, fake.path(), &["--home", h], &[]);
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    for session in [&fake.plain, &fake.other] {
        let t = twin(session);
        assert!(so.contains(&format!("wrote    {}", t.display())), "{so}");
        let opened = sessiontool::open(&t).unwrap();
        assert_eq!(opened.format, "gemini-jsonl");
        assert_eq!(content(&t), content(session), "{}", t.display());
    }
    assert!(sessiontool::check(twin(&fake.plain)).unwrap().is_clean());
    assert!(
        so.contains(": 2 .jsonl written, 1 had one already, 1 could not be read"),
        "{so}"
    );
    assert!(
        so.contains("2 of them in sha256 folders") || so.contains("1 of them in sha256 folders"),
        "{so}"
    );
    assert!(se.contains(&fake.damaged.display().to_string()), "{se}");
    // Left alone: the twin the CLI wrote, the damaged file, a checkpoint, Qwen's legacy file.
    assert_eq!(std::fs::read(twin(&fake.resumed)).unwrap(), resumed_twin);
    for untouched in [&fake.damaged, &fake.checkpoint, &fake.qwen_legacy] {
        assert!(!twin(untouched).exists(), "{}", untouched.display());
    }
    // The stores now list the legacy file as the older copy of its twin.
    let catalog = sessiontool::sessions(&fake.home(), Query::default());
    let plain = catalog
        .entries
        .iter()
        .find(|e| Path::new(&e.path) == fake.plain)
        .unwrap();
    assert_eq!(
        plain.superseded_by.as_deref(),
        Some(twin(&fake.plain).to_str().unwrap())
    );

    // Repaired as the message says, the damaged session gets its twin too; then nothing is
    // left to do.
    let repaired = sessiontool::repair(&fake.damaged, &Default::default()).unwrap();
    assert!(repaired.changed);
    let out = run(LEGACY, fake.path(), &["--home", h], &[]);
    let so = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{}", stderr(&out));
    assert!(
        so.contains(&format!("wrote    {}", twin(&fake.damaged).display())),
        "{so}"
    );
    assert_eq!(
        sessiontool::open(twin(&fake.damaged)).unwrap().format,
        "gemini-jsonl"
    );
    let before = snapshot(fake.path());
    let out = run(LEGACY, fake.path(), &["--home", h], &[]);
    let so = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{}", stderr(&out));
    assert!(
        so.contains(": 0 .jsonl written, 4 had one already, 0 could not be read"),
        "{so}"
    );
    assert!(!so.contains("wrote"), "{so}");
    assert_eq!(snapshot(fake.path()), before);
}

#[test]
fn export_project_markdown_writes_one_file_per_session_of_the_project() {
    let fake = fake_home();
    let h = fake.path().to_str().unwrap();
    let out_dir = fake.path().join("export");
    let o = out_dir.to_str().unwrap();
    let id = |p: &Path| sessiontool::open(p).unwrap().session.meta.id.unwrap();

    let out = run(
        EXPORT,
        fake.path(),
        &["--home", h, "--project", APP, "--out", o],
        &[],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    // /w/app's sessions in every store (Qwen Code's legacy file included); the older copy of
    // the resumed session and /w/other's sessions are not exported; the damaged one is said.
    let expected: BTreeSet<String> = [
        format!("gemini-{}.md", id(&fake.plain)),
        format!("gemini-{}.md", id(&twin(&fake.resumed))),
        "gemini-checkpoint-t1.md".to_string(),
        format!("qwen-{}.md", id(&fake.qwen)),
        format!("qwen-{}.md", id(&fake.qwen_legacy)),
        format!("claude-{}.md", id(&fake.claude)),
    ]
    .into();
    let written: BTreeSet<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(written, expected);
    // Each is the session's Markdown export.
    for (name, source) in [
        (format!("qwen-{}.md", id(&fake.qwen)), &fake.qwen),
        (format!("gemini-{}.md", id(&fake.plain)), &fake.plain),
    ] {
        let markdown =
            sessiontool::convert_bytes(&std::fs::read(source).unwrap(), None, "markdown")
                .unwrap()
                .bytes;
        assert_eq!(
            std::fs::read(out_dir.join(&name)).unwrap(),
            markdown,
            "{name}"
        );
    }
    assert!(
        so.contains(&format!(
            "exported 6 session(s) of /w/app into {o} (claude 1, gemini 3, qwen 2); 1 older copy skipped; 1 failed"
        )),
        "{so}"
    );
    assert!(
        so.contains(&format!(
            "skipped  {} (an older copy of {})",
            fake.resumed.display(),
            twin(&fake.resumed).display()
        )),
        "{so}"
    );
    assert!(
        se.contains(&format!(
            "not exported: {}:118 (byte 3900)",
            fake.damaged.display()
        )),
        "{se}"
    );
    assert!(!so.contains("/w/other") && !so.contains(&fake.other.display().to_string()));

    // Existing files are kept without --force, replaced with it.
    std::fs::remove_file(&fake.damaged).unwrap();
    let before = snapshot(&out_dir);
    let args = ["--home", h, "--project", APP, "--out", o];
    let out = run(EXPORT, fake.path(), &args, &[]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(se.contains("exists; nothing was written"), "{se}");
    assert!(se.contains("hint: pass --force to replace it"), "{se}");
    assert_eq!(snapshot(&out_dir), before);
    let out = run(
        EXPORT,
        fake.path(),
        &[&args[..], &["--force"][..]].concat(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("; 1 older copy skipped; 0 failed"));
    // Replaced, and each file it replaced kept beside it as `<name>.bak-<time>`.
    let (backups, now): (Vec<_>, Vec<_>) = snapshot(&out_dir)
        .into_iter()
        .partition(|(p, _)| p.to_string_lossy().contains(".md.bak-"));
    assert_eq!(now, before);
    assert_eq!(backups.len(), before.len());
    for ((backup, kept), (file, bytes)) in backups.iter().zip(&before) {
        let name = format!("{}.bak-", file.display());
        assert!(
            backup.to_string_lossy().starts_with(&name),
            "{}",
            backup.display()
        );
        assert_eq!(kept, bytes);
    }
}

#[test]
fn export_project_markdown_defaults_to_the_current_folder() {
    let fake = fake_home();
    let h = fake.path().to_str().unwrap();
    // The current folder is a project of its own: no session in any store.
    let out = run(EXPORT, fake.path(), &["--home", h, "--out", "md"], &[]);
    let so = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{}", stderr(&out));
    let project = sessiontool::project_path(fake.path()).unwrap();
    assert!(
        so.contains(&format!("exported 0 session(s) of {project} into md;")),
        "{so}"
    );
    assert!(
        so.contains(&format!("no sessions of {project} in any tool's store")),
        "{so}"
    );
    assert_eq!(
        std::fs::read_dir(fake.path().join("md")).unwrap().count(),
        0
    );
}

#[test]
fn examples_have_usage_text_and_exit_2_on_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for name in [LEGACY, EXPORT] {
        let help = run(name, dir.path(), &["--help"], &[]);
        assert_eq!(help.status.code(), Some(0));
        let text = stdout(&help);
        assert!(
            text.contains("Exit codes:") && text.contains("Examples:"),
            "{text}"
        );
        let bad = run(name, dir.path(), &["--no-such-option"], &[]);
        assert_eq!(bad.status.code(), Some(2));
        assert!(stderr(&bad).contains("Usage:"), "{}", stderr(&bad));
    }
    // --out is required.
    let out = run(EXPORT, dir.path(), &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--out <DIR>"), "{}", stderr(&out));
}
