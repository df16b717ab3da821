//! How each tool names a project's folder (FORMATS.md 4). Each scheme is a small function of
//! the project's absolute path; the Gemini slug also needs the registry and markers already on
//! disk to settle collisions, which [`claim_gemini_slug`] takes as a question.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::ids::sha256_hex;

/// A naming scheme, by the name the command line uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// Gemini CLI up to v0.28, Qwen Code up to v0.3, llxprt-code: `sha256(path)` in hex.
    Sha256,
    /// Gemini CLI v0.29+: a slug of the folder's name, registered in `projects.json`.
    GeminiSlug,
    /// Qwen Code v0.4+: every character outside `[a-zA-Z0-9]` becomes `-`.
    Dashed,
    /// Claude Code: dashed, cut to 200 UTF-16 units plus `-<hash>` when longer.
    Claude,
    /// pi: `--<path without its leading separator, / \ : as ->--`.
    Pi,
}

impl Scheme {
    pub const ALL: [Scheme; 5] = [
        Scheme::Sha256,
        Scheme::GeminiSlug,
        Scheme::Dashed,
        Scheme::Claude,
        Scheme::Pi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scheme::Sha256 => "sha256",
            Scheme::GeminiSlug => "gemini-slug",
            Scheme::Dashed => "dashed",
            Scheme::Claude => "claude",
            Scheme::Pi => "pi",
        }
    }

    pub fn by_name(name: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Which tools use it.
    pub fn used_by(self) -> &'static str {
        match self {
            Scheme::Sha256 => {
                "Gemini CLI ≤ v0.28 (~/.gemini/tmp), Qwen Code ≤ v0.3 (~/.qwen/tmp), llxprt-code"
            }
            Scheme::GeminiSlug => "Gemini CLI v0.29+ (~/.gemini/tmp, ~/.gemini/history)",
            Scheme::Dashed => "Qwen Code v0.4+ (~/.qwen/projects)",
            Scheme::Claude => "Claude Code (~/.claude/projects)",
            Scheme::Pi => "pi (~/.pi/agent/sessions)",
        }
    }

    /// The folder name for `project` (absolute and normalized, see [`resolve`]). For the
    /// Gemini slug this is the name before any collision suffix (see [`claim_gemini_slug`]).
    pub fn folder(self, project: &str) -> String {
        match self {
            Scheme::Sha256 => sha256_hex(project),
            Scheme::GeminiSlug => gemini_slug(project),
            Scheme::Dashed => dashed(project),
            Scheme::Claude => claude(project).name,
            Scheme::Pi => pi(project),
        }
    }
}

/// A path made absolute against `cwd` and normalized the way Node's `path.resolve` does it:
/// `.` and `..` resolved lexically, repeated and trailing separators dropped, symbolic links
/// left alone.
pub fn resolve(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// Gemini's slug: the folder's base name lower-cased, every character outside `[a-z0-9]` a
/// `-`, runs of `-` as one, no `-` at either end; `project` when nothing is left.
pub fn gemini_slug(project: &str) -> String {
    let base = Path::new(project)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut slug = String::new();
    for c in base.to_lowercase().chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && slug.ends_with('-')) {
            slug.push(c);
        }
    }
    let slug = slug.strip_prefix('-').unwrap_or(&slug);
    let slug = slug.strip_suffix('-').unwrap_or(slug);
    if slug.is_empty() {
        "project".to_string()
    } else {
        slug.to_string()
    }
}

/// Who holds a Gemini slug folder, as far as the disk and the registry say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlugOwner {
    Free,
    /// Registered to, or marked (`.project_root`) with, this project.
    Same,
    /// Someone else's (or a marker that cannot be read).
    Other,
}

/// The slug Gemini CLI gives a project it has not seen: the base slug, else `slug-1`,
/// `slug-2`, ... — the first that `owner` says is free (or already this project's).
pub fn claim_gemini_slug(project: &str, owner: impl Fn(&str) -> SlugOwner) -> String {
    let base = gemini_slug(project);
    (0..)
        .map(|n| {
            if n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            }
        })
        .find(|candidate| owner(candidate) != SlugOwner::Other)
        .unwrap_or(base)
}

/// Qwen Code's dashed name: every UTF-16 code unit outside `[a-zA-Z0-9]` becomes `-` (the
/// tools do it with a JavaScript regular expression, so a character outside the BMP gives
/// two), nothing collapsed.
pub fn dashed(project: &str) -> String {
    project
        .encode_utf16()
        .map(|u| match char::from_u32(u32::from(u)) {
            Some(c) if c.is_ascii_alphanumeric() => c,
            _ => '-',
        })
        .collect()
}

/// Claude Code's folder name for a project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaudeName {
    /// The whole name when it is 200 units or fewer; else the 200-unit prefix and `-`, after
    /// which the CLI adds a hash of its own that cannot be computed outside it.
    pub name: String,
    /// Whether `name` is only a prefix to match folders by.
    pub prefix: bool,
}

/// Longest Claude folder name kept whole, in UTF-16 units.
const CLAUDE_MAX: usize = 200;

pub fn claude(project: &str) -> ClaudeName {
    let name = dashed(project);
    // Dashed names are ASCII: bytes are UTF-16 units.
    if name.len() <= CLAUDE_MAX {
        ClaudeName {
            name,
            prefix: false,
        }
    } else {
        ClaudeName {
            name: format!("{}-", &name[..CLAUDE_MAX]),
            prefix: true,
        }
    }
}

/// The Claude folder name of a project as Claude Code computes it: from the real path
/// (symbolic links resolved) when the folder exists, else from the path as given.
pub fn claude_of_real_path(project: &str) -> ClaudeName {
    let real = std::fs::canonicalize(project)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| project.to_string());
    claude(&real)
}

/// Whether a folder under `~/.claude/projects` may hold `project`'s sessions (different
/// paths can share a name: the `cwd` inside the files decides).
pub fn claude_folder_matches(folder: &str, project: &str) -> bool {
    let want = claude(project);
    if want.prefix {
        folder.starts_with(&want.name)
    } else {
        folder == want.name
    }
}

/// pi's folder name: `--` + the path without its leading `/` or `\`, with `/`, `\` and `:`
/// as `-`, + `--`.
pub fn pi(project: &str) -> String {
    let p = project
        .strip_prefix('/')
        .or_else(|| project.strip_prefix('\\'))
        .unwrap_or(project);
    let body: String = p
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_of_the_path_string() {
        assert_eq!(
            Scheme::Sha256.folder("/home/dana/projects/pomodoro"),
            sha256_hex("/home/dana/projects/pomodoro")
        );
        assert_eq!(Scheme::Sha256.folder("/a").len(), 64);
    }

    #[test]
    fn gemini_slugs() {
        assert_eq!(gemini_slug("/home/dana/My Project"), "my-project");
        assert_eq!(gemini_slug("/home/dana/--Weird__Name!!"), "weird-name");
        assert_eq!(gemini_slug("/home/dana/番茄钟"), "project");
        assert_eq!(gemini_slug("/home/dana/app-2.0"), "app-2-0");
        assert_eq!(gemini_slug("/"), "project");
        assert_eq!(
            gemini_slug("/srv/ÄPP"),
            "pp",
            "non-ASCII letters become dashes after lower-casing"
        );
    }

    #[test]
    fn slug_collisions_take_the_next_free_suffix() {
        let taken = |s: &str| match s {
            "app" | "app-1" => SlugOwner::Other,
            "app-2" => SlugOwner::Free,
            _ => SlugOwner::Free,
        };
        assert_eq!(claim_gemini_slug("/x/app", taken), "app-2");
        let mine = |s: &str| {
            if s == "app" {
                SlugOwner::Same
            } else {
                SlugOwner::Other
            }
        };
        assert_eq!(claim_gemini_slug("/x/app", mine), "app");
    }

    #[test]
    fn dashed_names_count_utf16_units() {
        assert_eq!(dashed("/a/.b"), "-a--b");
        assert_eq!(
            dashed("/home/dana/projects/pomodoro"),
            "-home-dana-projects-pomodoro"
        );
        assert_eq!(dashed("/x/李"), "-x--");
        assert_eq!(
            dashed("/x/😀"),
            "-x---",
            "a surrogate pair gives two dashes"
        );
    }

    #[test]
    fn claude_names_over_200_units_become_a_prefix() {
        let short = "/home/dana/app";
        assert_eq!(
            claude(short),
            ClaudeName {
                name: "-home-dana-app".into(),
                prefix: false
            }
        );
        let long = format!("/{}", "a".repeat(250));
        let c = claude(&long);
        assert!(c.prefix);
        assert_eq!(c.name.len(), 201);
        assert!(claude_folder_matches(&format!("{}abc123", c.name), &long));
        assert!(!claude_folder_matches("-home-dana-app-x", short));
        assert!(claude_folder_matches("-home-dana-app", short));
    }

    #[test]
    fn pi_names() {
        assert_eq!(
            pi("/Users/badlogic/workspaces/pi-mono"),
            "--Users-badlogic-workspaces-pi-mono--"
        );
        assert_eq!(pi("C:\\work\\app"), "--C--work-app--");
    }

    #[test]
    fn resolve_is_lexical_like_node() {
        let cwd = Path::new("/home/dana");
        assert_eq!(
            resolve(Path::new("x/../y/./z/"), cwd),
            PathBuf::from("/home/dana/y/z")
        );
        assert_eq!(resolve(Path::new("/a//b/"), cwd), PathBuf::from("/a/b"));
        assert_eq!(resolve(Path::new("/.."), cwd), PathBuf::from("/"));
    }
}
