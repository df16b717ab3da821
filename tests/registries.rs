//! The tools' registries and indexes (Gemini CLI's `projects.json` and `.project_root`
//! markers, simple-agent's `meta.json`) under attack and under load, end to end in fake homes:
//! a slug that is not one folder name, a registry that is a symbolic link, eight writers at
//! once, a lock held by another process, and a relocate onto a project that has its own
//! folder already.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use assert_cmd::cargo::cargo_bin;
use serde_json::Value;
use sessiontool::ids::sha256_hex;

use common::{fixture, legacy};

const APP: &str = "/w/app";

/// The command run in `home` with `--home home`.
fn run(home: &Path, args: &[&str]) -> std::process::Output {
    let mut c = Command::cargo_bin("sessiontool").unwrap();
    c.current_dir(home)
        .args(args)
        .args(["--home", home.to_str().unwrap()]);
    c.output().unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The same, started and left running.
fn spawn(home: &Path, args: &[&str]) -> Child {
    StdCommand::new(cargo_bin("sessiontool"))
        .current_dir(home)
        .args(args)
        .args(["--home", home.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Every file (and link) below `dir` with its content hash (a link: where it points).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            let what = if e.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(e.path()).unwrap().display())
            } else {
                sessiontool::ids::sha256_hex_bytes(&std::fs::read(e.path()).unwrap())
            };
            (e.path().to_path_buf(), what)
        })
        .collect()
}

fn store_args<'a>(input: &'a str, to: &'a str, project: &'a str) -> Vec<&'a str> {
    vec![
        "convert",
        input,
        "--to",
        to,
        "--store",
        "--project",
        project,
        "--json",
    ]
}

/// A Gemini home with /w/app's legacy session in its sha256 folder.
fn gemini_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    legacy(
        "gemini-json/seed003.json",
        APP,
        &home
            .path()
            .join(".gemini/tmp")
            .join(sha256_hex(APP))
            .join("chats"),
        "session-2025-11-12T07-00-182742ff.json",
    );
    home
}

fn write_registry(home: &Path, projects: &Value) {
    std::fs::write(
        home.join(".gemini/projects.json"),
        serde_json::to_vec_pretty(&serde_json::json!({ "projects": projects })).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_slug_that_is_not_one_folder_name_is_refused_and_nothing_is_written_through_it() {
    let outside = tempfile::tempdir().unwrap();
    let outside_abs = outside.path().join("taken").to_str().unwrap().to_string();
    let plain = fixture("gemini-json/plain.json");
    for slug in [
        outside_abs.as_str(),
        "../../escaped",
        "..",
        ".",
        "",
        "a/b",
        "a\\b",
    ] {
        let home = gemini_home();
        let h = home.path();
        write_registry(h, &serde_json::json!({ APP: slug }));
        let before = snapshot(h);
        let attempts: [Vec<&str>; 4] = [
            store_args(plain.to_str().unwrap(), "gemini-jsonl", APP),
            store_args(plain.to_str().unwrap(), "gemini-json", APP),
            vec![
                "recover",
                "--latest",
                "--project",
                APP,
                "--checkpoint",
                "t",
                "--json",
            ],
            vec![
                "migrate",
                "--tool",
                "gemini",
                "--to",
                "gemini-slug",
                "--project",
                APP,
                "--move",
            ],
        ];
        for args in &attempts {
            let out = run(h, args);
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert!(
                !out.status.success() || text.contains("\"error\": \""),
                "{slug:?} {args:?} was not refused: {text}"
            );
            assert!(
                text.contains("projects.json") && text.contains("damaged"),
                "{slug:?} {args:?}: the message names the registry: {text}"
            );
            assert_eq!(snapshot(h), before, "{slug:?} {args:?}: nothing written");
        }
        assert!(!h.join("escaped").exists());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // list says so too.
        let list = run(h, &["list", "--project", APP, "--json"]);
        let doc: Value = serde_json::from_slice(&list.stdout).unwrap();
        assert!(
            doc["problems"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p.as_str().unwrap().contains("damaged")),
            "{doc:#}"
        );
    }
}

#[test]
fn a_registry_or_marker_that_is_a_symbolic_link_is_refused_by_every_writer() {
    let plain = fixture("gemini-json/plain.json");
    let dotfiles = tempfile::tempdir().unwrap();
    let kept = dotfiles.path().join("projects.json");
    std::fs::write(&kept, r#"{"projects": {"/w/other": "other"}}"#).unwrap();
    let home = gemini_home();
    let h = home.path();
    std::os::unix::fs::symlink(&kept, h.join(".gemini/projects.json")).unwrap();
    let before = snapshot(h);
    let kept_before = std::fs::read(&kept).unwrap();
    for args in [
        store_args(plain.to_str().unwrap(), "gemini-jsonl", APP),
        vec!["recover", "--latest", "--project", APP, "--checkpoint", "t"],
        vec![
            "migrate",
            "--tool",
            "gemini",
            "--to",
            "gemini-slug",
            "--project",
            APP,
        ],
        vec!["relocate", "/w/other", "/w/else"],
    ] {
        let out = run(h, &args);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(
            text.contains("symbolic link") && text.contains("projects.json"),
            "{args:?}: {text}"
        );
        assert_eq!(snapshot(h), before, "{args:?}: nothing written");
        assert_eq!(std::fs::read(&kept).unwrap(), kept_before);
    }

    // A linked .project_root marker that a registration would write (its target is gone, so
    // the marker is missing): refused, and so is relocating while it names the project.
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let out = run(h, &store_args(plain.to_str().unwrap(), "gemini-jsonl", APP));
    assert!(out.status.success(), "{}", stderr(&out));
    let marker = h.join(".gemini/history/app/.project_root");
    let elsewhere = dotfiles.path().join("marker");
    std::fs::remove_file(&marker).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &marker).unwrap();
    let before = snapshot(h);
    let seed = fixture("gemini-json/seed003.json");
    let out = run(h, &store_args(seed.to_str().unwrap(), "gemini-jsonl", APP));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("symbolic link") && stderr(&out).contains(".project_root"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(h), before);
    assert!(!elsewhere.exists(), "nothing written through the link");
    std::fs::write(&elsewhere, APP).unwrap();
    let out = run(h, &["relocate", APP, "/w/moved"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), APP);

    // simple-agent's meta.json.
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sessions = h.join(".simple-agent/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let index = dotfiles.path().join("meta.json");
    std::fs::write(&index, "{}").unwrap();
    std::os::unix::fs::symlink(&index, sessions.join("meta.json")).unwrap();
    let input = fixture("simple-agent-json/plain.json");
    let out = run(
        h,
        &store_args(input.to_str().unwrap(), "simple-agent-json", APP),
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&index).unwrap(), b"{}");
    assert_eq!(std::fs::read_dir(&sessions).unwrap().count(), 1);
}

/// A copy of a simple-agent fixture with its own id, in `dir`.
fn simple_agent_session(dir: &Path, n: usize) -> PathBuf {
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(fixture("simple-agent-json/plain.json")).unwrap())
            .unwrap();
    doc["id"] = format!("20260101_0000{n:02}_abc{n:03}").into();
    let path = dir.join(format!("s{n}.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    path
}

const WRITERS: usize = 8;

#[test]
fn eight_writers_at_once_lose_no_registry_entry() {
    let rounds: usize = std::env::var("REGISTRY_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let inputs = tempfile::tempdir().unwrap();
    let sessions: Vec<PathBuf> = (0..WRITERS)
        .map(|n| simple_agent_session(inputs.path(), n))
        .collect();
    let gemini = fixture("gemini-json/plain.json");
    for round in 0..rounds {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        // Eight projects with the same base name: each must claim its own slug.
        let projects: Vec<String> = (0..WRITERS).map(|n| format!("/w/{n}/app")).collect();
        let mut children: Vec<(String, Child)> = Vec::new();
        for (n, project) in projects.iter().enumerate() {
            children.push((
                format!("gemini {project}"),
                spawn(
                    h,
                    &store_args(gemini.to_str().unwrap(), "gemini-jsonl", project),
                ),
            ));
            children.push((
                format!("simple-agent {n}"),
                spawn(
                    h,
                    &store_args(sessions[n].to_str().unwrap(), "simple-agent-json", APP),
                ),
            ));
        }
        for (what, child) in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}, {what}: {}",
                stderr(&out)
            );
        }
        let registry: Value =
            serde_json::from_slice(&std::fs::read(h.join(".gemini/projects.json")).unwrap())
                .unwrap();
        let map = registry["projects"].as_object().unwrap();
        assert_eq!(map.len(), WRITERS, "round {round}: {registry:#}");
        let mut slugs: Vec<&str> = map.values().map(|v| v.as_str().unwrap()).collect();
        slugs.sort();
        slugs.dedup();
        assert_eq!(
            slugs.len(),
            WRITERS,
            "round {round}: one slug each: {map:?}"
        );
        for (project, slug) in map {
            for base in ["tmp", "history"] {
                let marker = h
                    .join(".gemini")
                    .join(base)
                    .join(slug.as_str().unwrap())
                    .join(".project_root");
                assert_eq!(
                    std::fs::read_to_string(&marker).unwrap(),
                    *project,
                    "round {round}"
                );
            }
        }
        let index: Value = serde_json::from_slice(
            &std::fs::read(h.join(".simple-agent/sessions/meta.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            index["path_index"][APP].as_array().unwrap().len(),
            WRITERS,
            "round {round}: {index:#}"
        );
        let leftovers: Vec<_> = walkdir::WalkDir::new(h)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy();
                name.ends_with(".lock") || name.ends_with(".tmp")
            })
            .map(|e| e.path().to_path_buf())
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
}

/// Holds `<target>.lock` as proper-lockfile does (a folder whose time is kept fresh) until
/// the returned guard is dropped.
struct ForeignLock {
    dir: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    keeper: Option<std::thread::JoinHandle<()>>,
}

impl ForeignLock {
    fn hold(target: &Path) -> ForeignLock {
        let dir = PathBuf::from(format!("{}.lock", target.display()));
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::create_dir(&dir).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let keeper = {
            let (dir, stop) = (dir.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let now = std::time::SystemTime::now();
                    let _ = std::fs::File::open(&dir).and_then(|f| f.set_modified(now));
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        };
        ForeignLock {
            dir,
            stop,
            keeper: Some(keeper),
        }
    }
}

impl Drop for ForeignLock {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.keeper.take().unwrap().join().unwrap();
        std::fs::remove_dir(&self.dir).unwrap();
    }
}

#[test]
fn a_live_registry_lock_makes_a_writer_wait_until_it_is_released() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let lock = ForeignLock::hold(&h.join(".gemini/projects.json"));
    let plain = fixture("gemini-json/plain.json");
    let started = Instant::now();
    let mut child = spawn(h, &store_args(plain.to_str().unwrap(), "gemini-jsonl", APP));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the writer waits for the lock"
    );
    assert!(!h.join(".gemini/projects.json").exists());
    drop(lock);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_millis(1500));
    let registry: Value =
        serde_json::from_slice(&std::fs::read(h.join(".gemini/projects.json")).unwrap()).unwrap();
    assert_eq!(registry["projects"][APP], "app");
}

#[test]
fn a_registry_lock_that_is_never_released_times_out_with_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sessions = h.join(".simple-agent/sessions");
    let _lock = ForeignLock::hold(&sessions.join("meta.json"));
    let input = fixture("simple-agent-json/plain.json");
    let started = Instant::now();
    let out = run(
        h,
        &store_args(input.to_str().unwrap(), "simple-agent-json", APP),
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("meta.json.lock") && text.contains("another process"),
        "{text}"
    );
    assert!(started.elapsed() >= Duration::from_secs(10), "it waited");
    assert_eq!(
        std::fs::read_dir(&sessions).unwrap().count(),
        1,
        "only the lock"
    );
}

#[test]
fn a_stale_registry_lock_left_by_a_crash_is_taken_over() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let gemini = h.join(".gemini");
    std::fs::create_dir_all(gemini.join("projects.json.lock")).unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(60);
    std::fs::File::open(gemini.join("projects.json.lock"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let plain = fixture("gemini-json/plain.json");
    let out = run(h, &store_args(plain.to_str().unwrap(), "gemini-jsonl", APP));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!gemini.join("projects.json.lock").exists());
    assert!(gemini.join("projects.json").is_file());
}

#[test]
fn relocate_onto_a_project_with_its_own_gemini_folder_refuses_and_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let plain = fixture("gemini-jsonl/plain.jsonl");
    let qwen = fixture("qwen-jsonl/plain.jsonl");
    for (input, to, project) in [
        (&plain, "gemini-jsonl", APP),
        (&qwen, "qwen-jsonl", APP),
        (&plain, "gemini-jsonl", "/w/moved"),
    ] {
        let out = run(h, &store_args(input.to_str().unwrap(), to, project));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let before = snapshot(h);
    let out = run(h, &["relocate", APP, "/w/moved", "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems: Vec<&str> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        problems.iter().any(|p| p.contains("/w/moved")
            && p.contains("tmp/app")
            && p.contains("tmp/moved")
            && p.contains("refuses")),
        "{doc:#}"
    );
    assert_eq!(snapshot(h), before, "nothing changed");
    // Without the Gemini store, the rest moves.
    let out = run(h, &["relocate", APP, "/w/moved", "--tool", "qwen"]);
    assert!(out.status.success(), "{}", stderr(&out));
}
