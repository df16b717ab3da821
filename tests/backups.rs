//! Backups and leftovers (issue 14, items 8-11): every replaced or deleted session file keeps
//! a backup, a backup is never left half-written, the temp-file sweep removes only files
//! sessiontool provably made, and what replaces a file keeps its owner, group and mode.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::fixture;
use sessiontool::ids::sha256_hex;

const APP: &str = "/w/app";

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sessiontool")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("SESSIONTOOL_FAULT")
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut f: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().to_path_buf())
        .collect();
    f.sort();
    f
}

fn backups_of(path: &Path) -> Vec<PathBuf> {
    let name = format!("{}.bak-", path.file_name().unwrap().to_string_lossy());
    files(path.parent().unwrap())
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&name))
        .collect()
}

/// A Qwen session with a torn last line, its time an hour back (a crashed session, not one a
/// tool is still writing).
fn torn_session(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(fixture("qwen-jsonl/plain.jsonl")).unwrap();
    bytes.extend_from_slice(b"{\"uuid\":\"torn");
    common::write_idle(path, &bytes);
    bytes
}

#[test]
fn convert_into_a_store_with_force_keeps_the_session_it_replaces() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let convert = |input: &str, force: bool| {
        let mut args = vec![
            "convert",
            input,
            "--to",
            "qwen-jsonl",
            "--store",
            "--project",
            APP,
            "--home",
            h,
            "--json",
        ];
        if force {
            args.push("--force");
        }
        run(&args)
    };
    let first = convert(fixture("qwen-jsonl/plain.jsonl").to_str().unwrap(), false);
    assert!(first.status.success(), "{}", said(&first));
    let doc: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let session = PathBuf::from(doc["output"].as_str().unwrap());
    // The user's session grew since (a long one), then a shorter copy is forced over it.
    let mut grown = std::fs::read(&session).unwrap();
    grown.extend_from_slice(b"{\"uuid\":\"later\",\"parentUuid\":null,\"sessionId\":\"x\",\"type\":\"system\",\"subtype\":\"note\"}\n");
    std::fs::write(&session, &grown).unwrap();
    let again = convert(fixture("qwen-jsonl/plain.jsonl").to_str().unwrap(), true);
    assert!(again.status.success(), "{}", said(&again));
    let doc: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    let kept = PathBuf::from(doc["replaced"].as_str().expect("the backup is named"));
    assert_eq!(backups_of(&session), vec![kept.clone()]);
    assert_eq!(std::fs::read(&kept).unwrap(), grown);
}

#[test]
fn convert_with_force_keeps_the_output_it_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    std::fs::write(&out, "mine\n").unwrap();
    let o = out.to_str().unwrap();
    let input = fixture("gemini-json/plain.json");
    let refused = run(&["convert", input.to_str().unwrap(), "-o", o]);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        b"mine\n",
        "{}",
        said(&refused)
    );
    let forced = run(&["convert", input.to_str().unwrap(), "-o", o, "--force"]);
    assert!(forced.status.success(), "{}", said(&forced));
    let backups = backups_of(&out);
    assert_eq!(backups.len(), 1, "{}", said(&forced));
    assert_eq!(std::fs::read(&backups[0]).unwrap(), b"mine\n");
    assert!(said(&forced).contains("kept as"), "{}", said(&forced));
}

#[test]
fn migrate_move_keeps_the_original_of_a_converted_session() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let legacy = common::legacy(
        "gemini-json/tools.json",
        APP,
        &h.join(".qwen/tmp").join(sha256_hex(APP)).join("chats"),
        "session-2025-09-14T08-12-a116c9ed.json",
    );
    let before = std::fs::read(&legacy).unwrap();
    let out = run(&[
        "migrate",
        "--tool",
        "qwen",
        "--to",
        "dashed",
        "--project",
        APP,
        "--move",
        "--home",
        h.to_str().unwrap(),
    ]);
    let text = said(&out);
    assert!(!legacy.exists(), "{text}");
    let kept = backups_of(&legacy);
    assert_eq!(kept.len(), 1, "{text}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), before);
    assert!(text.contains("kept as backups"), "{text}");
}

#[test]
fn the_sweep_removes_no_file_it_did_not_make() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    torn_session(&session);
    // A user's files shaped like the temp names of earlier versions, a dead pid in them.
    let users = [
        ".notes.31999.draft.final.tmp",
        ".s.jsonl.4194400.AbC123.repair.tmp",
        ".x.sessiontool-4194400.draft.tmp",
    ];
    for u in users {
        std::fs::write(dir.path().join(u), "the user's").unwrap();
    }
    // One that is ours, from a run that died.
    let dead = dir
        .path()
        .join(".s.jsonl.sessiontool-4194400-Zx9k2Q.repair.tmp");
    std::fs::write(&dead, "half a repair").unwrap();
    let out = run(&["repair", session.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    for u in users {
        assert_eq!(
            std::fs::read(dir.path().join(u)).unwrap(),
            b"the user's",
            "{u} was touched"
        );
    }
    assert!(!dead.exists());
}

#[test]
fn a_backup_that_cannot_be_written_whole_is_not_left_half_written() {
    let Some(small) = Tmpfs::mount("64k") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    let mut bytes = Vec::new();
    while bytes.len() < 200_000 {
        bytes.extend_from_slice(&std::fs::read(fixture("qwen-jsonl/plain.jsonl")).unwrap());
    }
    bytes.extend_from_slice(b"{\"uuid\":\"torn");
    common::write_idle(&session, &bytes);
    let out = run(&[
        "repair",
        session.to_str().unwrap(),
        "--backup-dir",
        small.path().to_str().unwrap(),
    ]);
    let text = said(&out);
    assert_ne!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("No space left"), "{text}");
    assert_eq!(
        std::fs::read(&session).unwrap(),
        bytes,
        "original untouched"
    );
    assert!(files(small.path()).is_empty(), "{:?}", files(small.path()));
    assert_eq!(
        files(dir.path()),
        vec![session.clone()],
        "nothing left beside it"
    );
}

#[test]
fn what_replaces_a_file_keeps_its_owner_group_and_mode() {
    if !common::prerequisite::root("keeping another user's owner") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    torn_session(&session);
    std::os::unix::fs::chown(&session, Some(4242), Some(4343)).unwrap();
    std::fs::set_permissions(&session, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = run(&["repair", session.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let all = files(dir.path());
    assert_eq!(all.len(), 3, "session, backup, sidecar: {all:?}");
    for f in all {
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!((m.uid(), m.gid()), (4242, 4343), "{}", f.display());
        assert_eq!(m.mode() & 0o7777, 0o600, "{}", f.display());
    }
}

/// A small tmpfs (root or CAP_SYS_ADMIN), unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            common::prerequisite::present(
                false,
                "mounting a small tmpfs needs root or CAP_SYS_ADMIN",
            );
            return None;
        }
        Some(Tmpfs(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}
