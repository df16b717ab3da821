//! The one way a path is built from what files say (a slug in `projects.json`, a session id,
//! a checkpoint tag, a project folder named after a `cwd`, a name read from a folder): a base
//! folder joined with names that are each one plain folder or file name. The result is always
//! strictly inside the base; anything else is an error naming the base and the value.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// The longest name a file system takes (Linux `NAME_MAX`, macOS, NTFS: 255).
const NAME_MAX: usize = 255;

/// A value refused as a name inside `base`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value} cannot be a name inside {}: {why}", base.display())]
pub struct NotAName {
    pub base: PathBuf,
    /// The value, quoted with control characters escaped, cut after 120 characters.
    pub value: String,
    pub why: &'static str,
}

/// `base/name`, where `name` must be one plain name (see [`why_not_a_name`]).
pub fn join(base: &Path, name: &str) -> Result<PathBuf, NotAName> {
    match why_not_a_name(OsStr::new(name)) {
        None => Ok(base.join(name)),
        Some(why) => Err(refused(base, OsStr::new(name), why)),
    }
}

/// `base/rel`, where `rel` is a relative path whose every part is one plain name (`a/b/c`,
/// never `a/../b`, `/a` or `a//`-style empties that would make the result `base` itself).
pub fn join_all(base: &Path, rel: impl AsRef<Path>) -> Result<PathBuf, NotAName> {
    let rel = rel.as_ref();
    let raw = rel.as_os_str();
    if raw.is_empty() {
        return Err(refused(base, raw, "it is empty"));
    }
    // `components()` quietly drops `.` parts and doubled separators: check the raw parts.
    for part in raw.as_encoded_bytes().split(|b| *b == b'/') {
        if let Some(why) = why_not(part) {
            return Err(refused(base, raw, why));
        }
    }
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(refused(base, raw, "it is not a plain relative path"));
    }
    Ok(base.join(rel))
}

/// Why `name` cannot be one plain file or folder name, or `None` when it can: empty; only dots
/// and spaces (`.`, `..`, and `...` or `. .`, which Windows reads as `.`/`..` or nothing);
/// holding `/`, `\`, `:` (a separator, or a drive or stream on Windows), NUL or another
/// control character; or longer than 255 bytes.
pub fn why_not_a_name(name: &OsStr) -> Option<&'static str> {
    why_not(name.as_encoded_bytes())
}

fn why_not(bytes: &[u8]) -> Option<&'static str> {
    if bytes.is_empty() {
        return Some("it is empty");
    }
    if bytes.iter().all(|b| matches!(b, b'.' | b' ')) {
        return Some("it is made of dots (`.` and `..` name this folder or the one above it)");
    }
    if bytes.iter().any(|b| matches!(b, b'/' | b'\\')) {
        return Some("it holds a path separator (`/` or `\\`)");
    }
    if bytes.contains(&b':') {
        return Some("it holds `:` (a drive or stream name on Windows)");
    }
    if bytes.iter().any(|b| *b < 0x20 || *b == 0x7f) {
        return Some("it holds NUL or another control character");
    }
    if bytes.len() > NAME_MAX {
        return Some("it is longer than the 255 bytes a file name can have");
    }
    None
}

fn refused(base: &Path, value: &OsStr, why: &'static str) -> NotAName {
    let text = value.to_string_lossy();
    let mut shown: String = text.chars().take(120).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    NotAName {
        base: base.to_path_buf(),
        value: format!("{shown:?}"),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_names_join_and_hostile_ones_are_refused() {
        let base = Path::new("/h/.gemini/tmp");
        assert_eq!(join(base, "app-1").unwrap(), base.join("app-1"));
        assert_eq!(join(base, "番茄钟").unwrap(), base.join("番茄钟"));
        assert_eq!(
            join(base, ".project_root").unwrap(),
            base.join(".project_root")
        );
        for bad in [
            "",
            ".",
            "..",
            "...",
            ". .",
            "/etc",
            "../../x",
            "a/b",
            "a\\b",
            "..\\x",
            "C:",
            "c:x",
            "a\0b",
            "a\nb",
            "\u{1b}[31m",
        ] {
            let err = join(base, bad).unwrap_err();
            assert_eq!(err.base, base);
            assert!(err.to_string().contains("/h/.gemini/tmp"), "{err}");
        }
        assert!(join(base, &"a".repeat(255)).is_ok());
        let err = join(base, &"a".repeat(5000)).unwrap_err();
        assert!(err.to_string().len() < 400, "a long value is cut: {err}");
        assert!(
            !join(base, "\u{1b}[2J")
                .unwrap_err()
                .to_string()
                .contains('\u{1b}'),
            "no terminal escapes in the message"
        );
    }

    #[test]
    fn relative_paths_join_part_by_part() {
        let base = Path::new("/h/.codex/sessions");
        assert_eq!(
            join_all(base, "2025/10/21").unwrap(),
            base.join("2025").join("10").join("21")
        );
        for bad in [
            "",
            "/2025",
            "2025/../..",
            "a/./b",
            "a//b",
            "a/",
            "./a",
            "a\\..\\b",
        ] {
            assert!(join_all(base, bad).is_err(), "{bad:?}");
        }
    }

    /// Strings built from the pieces that make paths escape.
    fn hostile() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just(".".to_string()),
            Just("..".to_string()),
            Just("/".to_string()),
            Just("\\".to_string()),
            Just("\0".to_string()),
            Just(":".to_string()),
            Just(" ".to_string()),
            Just("C:".to_string()),
            Just("//server/share".to_string()),
            Just("\u{2215}".to_string()),
            Just("\u{ff0f}".to_string()),
            Just("\u{ff0e}\u{ff0e}".to_string()),
            Just("%2e%2e%2f".to_string()),
            Just("a".repeat(300)),
            "[a-z0-9-]{1,8}",
            any::<String>(),
        ];
        prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
    }

    /// Strictly inside: below `base`, not `base`, no `.` or `..` step on the way.
    fn strictly_inside(base: &Path, p: &Path) -> bool {
        p != base
            && p.starts_with(base)
            && p.strip_prefix(base)
                .unwrap()
                .components()
                .all(|c| matches!(c, Component::Normal(_)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn a_joined_name_is_strictly_inside_its_base_or_an_error(name in hostile()) {
            let base = Path::new("/h/store");
            match join(base, &name) {
                Ok(p) => {
                    prop_assert!(strictly_inside(base, &p), "{p:?}");
                    prop_assert_eq!(p.parent(), Some(base));
                    prop_assert_eq!(p.file_name(), Some(OsStr::new(&name)));
                }
                Err(e) => prop_assert_eq!(e.base, base),
            }
        }

        #[test]
        fn a_joined_relative_path_is_strictly_inside_its_base_or_an_error(rel in hostile()) {
            let base = Path::new("/h/store");
            match join_all(base, &rel) {
                Ok(p) => {
                    prop_assert!(strictly_inside(base, &p), "{p:?}");
                    prop_assert_eq!(
                        p.strip_prefix(base).unwrap().components().count(),
                        rel.split('/').count()
                    );
                }
                Err(e) => prop_assert_eq!(e.base, base),
            }
        }
    }
}
