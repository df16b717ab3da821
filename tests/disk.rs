//! Disk full, read-only folders and file modes (issue 7): writing into a full file system fails
//! cleanly with the original untouched and no temp file left; a read-only file system gives a
//! clear error; repaired and relocated files keep their modes (some tools write 0600).
//!
//! The full and read-only file systems are small tmpfs mounts, which need root (or
//! CAP_SYS_ADMIN). Without them the full-disk case falls back to a file-size limit
//! (`ulimit -f`, which fails writes with EFBIG) and the read-only case says it did not run (in
//! CI it fails: see tests/common/prerequisite.rs).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::fixture;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sessiontool")
}

/// A tmpfs of `size` mounted at a fresh folder, unmounted on drop.
struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    fn tmpfs(size: &str) -> Option<Mount> {
        let dir = tempfile::tempdir().ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .ok()?
            .status
            .success();
        ok.then_some(Mount { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn read_only(&self) -> bool {
        Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A damaged session of about `n` × 250 bytes.
fn damaged_session(n: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..n {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"r{:08}\"", i - 1)
        };
        out.push_str(&format!(
            "{{\"uuid\":\"r{i:08}\",\"parentUuid\":{parent},\"sessionId\":\"6b0b0776-e08e-426e-bff4-91f7fbcd1892\",\"timestamp\":\"2025-12-04T09:15:02.114Z\",\"type\":\"user\",\"cwd\":\"/w/app\",\"message\":{{\"role\":\"user\",\"parts\":[{{\"text\":\"message {i}\"}}]}}}}\n"
        ));
    }
    out.push_str("{\"uuid\":\"torn");
    out.into_bytes()
}

fn temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_full_disk_fails_the_repair_cleanly() {
    let original = damaged_session(400); // ~100 KB: the repaired copy cannot fit beside it
    let (out, dir, how, _mount) = match Mount::tmpfs("160k") {
        Some(m) => {
            let file = m.path().join("s.jsonl");
            common::write_idle(&file, &original);
            let out = Command::new(bin())
                .arg("repair")
                .arg(&file)
                .output()
                .unwrap();
            (out, m.path().to_path_buf(), "a 160 KiB tmpfs", Some(m))
        }
        None => {
            let tmp = tempfile::tempdir().unwrap();
            let file = tmp.path().join("s.jsonl");
            common::write_idle(&file, &original);
            // 64 blocks of 512 bytes: the temp file cannot grow past 32 KiB.
            let out = Command::new("sh")
                .arg("-c")
                .arg("trap '' XFSZ; ulimit -f 64; exec \"$0\" repair \"$1\"")
                .arg(bin())
                .arg(&file)
                .output()
                .unwrap();
            let dir = tmp.keep();
            (
                out,
                dir,
                "a 32 KiB file-size limit (no tmpfs mount here)",
                None,
            )
        }
    };
    println!("disk full simulated with {how}");
    let text = said(&out);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(
        text.contains("No space left") || text.contains("too large"),
        "the error names the cause: {text}"
    );
    assert_eq!(
        std::fs::read(dir.join("s.jsonl")).unwrap(),
        original,
        "original untouched"
    );
    assert!(temps(&dir).is_empty(), "{:?}", temps(&dir));
}

#[test]
fn a_full_disk_fails_convert_into_a_store_cleanly() {
    let Some(m) = Mount::tmpfs("24k") else {
        common::prerequisite::present(false, "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN)");
        return;
    };
    let input = fixture("gemini-json/every-part.json");
    let out = Command::new(bin())
        .args(["convert"])
        .arg(&input)
        .args([
            "--to",
            "qwen-jsonl",
            "--store",
            "--project",
            "/w/app",
            "--home",
        ])
        .arg(m.path())
        .output()
        .unwrap();
    // Fits or not: when it does not, nothing half-written is left.
    if !out.status.success() {
        assert_eq!(out.status.code(), Some(4), "{}", said(&out));
        let leftovers: Vec<_> = walkdir::WalkDir::new(m.path())
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.path().to_path_buf())
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

#[test]
fn a_read_only_file_system_gives_a_clear_error() {
    let Some(m) = Mount::tmpfs("1m") else {
        common::prerequisite::present(false, "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN)");
        return;
    };
    let file = m.path().join("s.jsonl");
    let original = damaged_session(20);
    common::write_idle(&file, &original);
    assert!(m.read_only(), "remount read-only");
    let out = Command::new(bin())
        .arg("repair")
        .arg(&file)
        .output()
        .unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(text.contains("Read-only file system"), "{text}");
    assert_eq!(std::fs::read(&file).unwrap(), original);
    let out = Command::new(bin())
        .arg("convert")
        .arg(fixture("gemini-json/plain.json"))
        .arg("-o")
        .arg(m.path().join("out.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", said(&out));
    assert!(
        said(&out).contains("Read-only file system"),
        "{}",
        said(&out)
    );
}

#[test]
fn repaired_and_relocated_files_keep_their_modes() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.jsonl");
    common::write_idle(&file, damaged_session(5));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = Command::new(bin())
        .arg("repair")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let home = tmp.path().join("home");
    let out = Command::new(bin())
        .arg("convert")
        .arg(fixture("qwen-jsonl/plain.jsonl"))
        .args([
            "--to",
            "claude-jsonl",
            "--store",
            "--project",
            "/w/app",
            "--json",
            "--home",
        ])
        .arg(&home)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let placed = PathBuf::from(doc["output"].as_str().unwrap());
    std::fs::set_permissions(&placed, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = Command::new(bin())
        .args(["relocate", "/w/app", "/w/moved", "--home"])
        .arg(&home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    let moved = home
        .join(".claude/projects/-w-moved")
        .join(placed.file_name().unwrap());
    let mode = std::fs::metadata(&moved).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
