//! Gemini CLI's project registry (v0.29+): `~/.gemini/projects.json` maps absolute project
//! paths to slugs, and each slug folder under `tmp/` and `history/` holds a `.project_root`
//! marker naming its project. Read-only here: what slug a project has or would get.

use std::path::{Path, PathBuf};

use super::scheme::{SlugOwner, claim_gemini_slug};

/// The folders that hold slug folders (and their markers).
const BASE_DIRS: [&str; 2] = ["tmp", "history"];
const MARKER: &str = ".project_root";

/// `~/.gemini` under `home`.
pub fn gemini_dir(home: &Path) -> PathBuf {
    home.join(".gemini")
}

/// The slug `projects.json` gives `project`, when it is there and its markers agree.
pub fn registered_slug(home: &Path, project: &str) -> Option<String> {
    let registry = std::fs::read(gemini_dir(home).join("projects.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&registry).ok()?;
    let slug = value.get("projects")?.get(project)?.as_str()?.to_string();
    (owner(home, &slug, project) != SlugOwner::Other).then_some(slug)
}

/// The slug a project has, or the one Gemini CLI would give it now (registry first, then a
/// folder whose marker names it, then the first free candidate).
pub fn slug_for(home: &Path, project: &str) -> (String, SlugSource) {
    if let Some(slug) = registered_slug(home, project) {
        return (slug, SlugSource::Registered);
    }
    if let Some(slug) = marked_slug(home, project) {
        return (slug, SlugSource::Marker);
    }
    let taken = registered_slugs(home);
    let slug = claim_gemini_slug(project, |candidate| {
        if taken.iter().any(|t| t == candidate) {
            SlugOwner::Other
        } else {
            owner(home, candidate, project)
        }
    });
    (slug, SlugSource::New)
}

/// Where a slug came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlugSource {
    Registered,
    Marker,
    /// Not registered: what the CLI would claim for it now.
    New,
}

/// Who owns slug folder `slug` by its markers.
fn owner(home: &Path, slug: &str, project: &str) -> SlugOwner {
    let mut result = SlugOwner::Free;
    for base in BASE_DIRS {
        let marker = gemini_dir(home).join(base).join(slug).join(MARKER);
        if !marker.exists() {
            continue;
        }
        match std::fs::read_to_string(&marker) {
            Ok(owner) if owner.trim() == project => result = SlugOwner::Same,
            _ => return SlugOwner::Other,
        }
    }
    result
}

/// A slug folder whose marker names `project`.
fn marked_slug(home: &Path, project: &str) -> Option<String> {
    for base in BASE_DIRS {
        let Ok(entries) = std::fs::read_dir(gemini_dir(home).join(base)) else {
            continue;
        };
        for entry in entries.flatten() {
            let marker = entry.path().join(MARKER);
            if std::fs::read_to_string(&marker).is_ok_and(|o| o.trim() == project) {
                return Some(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    None
}

fn registered_slugs(home: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(gemini_dir(home).join("projects.json")) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Vec::new();
    };
    value
        .get("projects")
        .and_then(serde_json::Value::as_object)
        .map(|m| {
            m.values()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home_with(registry: &str, markers: &[(&str, &str, &str)]) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        let g = gemini_dir(home.path());
        std::fs::create_dir_all(&g).unwrap();
        std::fs::write(g.join("projects.json"), registry).unwrap();
        for (base, slug, owner) in markers {
            let dir = g.join(base).join(slug);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(MARKER), owner).unwrap();
        }
        home
    }

    #[test]
    fn registered_projects_keep_their_slug() {
        let home = home_with(
            r#"{"projects": {"/w/app": "app-1"}}"#,
            &[("tmp", "app-1", "/w/app")],
        );
        assert_eq!(
            slug_for(home.path(), "/w/app"),
            ("app-1".into(), SlugSource::Registered)
        );
    }

    #[test]
    fn a_marker_found_on_disk_counts_as_the_projects_slug() {
        let home = home_with(r#"{"projects": {}}"#, &[("history", "app", "/w/app")]);
        assert_eq!(
            slug_for(home.path(), "/w/app"),
            ("app".into(), SlugSource::Marker)
        );
    }

    #[test]
    fn new_projects_skip_taken_slugs() {
        let home = home_with(
            r#"{"projects": {"/a/app": "app"}}"#,
            &[("tmp", "app", "/a/app"), ("tmp", "app-1", "/b/app")],
        );
        assert_eq!(
            slug_for(home.path(), "/c/app"),
            ("app-2".into(), SlugSource::New)
        );
    }

    #[test]
    fn a_registry_entry_whose_marker_disagrees_is_not_trusted() {
        let home = home_with(
            r#"{"projects": {"/w/app": "app"}}"#,
            &[("tmp", "app", "/other")],
        );
        assert_eq!(registered_slug(home.path(), "/w/app"), None);
        assert_eq!(slug_for(home.path(), "/w/app").0, "app-1");
    }
}
