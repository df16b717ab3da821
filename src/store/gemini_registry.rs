//! Gemini CLI's project registry (v0.29+): `~/.gemini/projects.json` maps absolute project
//! paths to slugs, and each slug folder under `tmp/` and `history/` holds a `.project_root`
//! marker naming its project. Every function takes the `.gemini` folder ([`Home::gemini`]).
//!
//! [`Home::gemini`]: super::home::Home::gemini

use std::path::Path;

use super::scheme::{SlugOwner, claim_gemini_slug};

/// The folders that hold slug folders (and their markers).
const BASE_DIRS: [&str; 2] = ["tmp", "history"];
const MARKER: &str = ".project_root";

/// The slug `projects.json` gives `project`, when it is there and its markers agree.
pub fn registered_slug(gemini: &Path, project: &str) -> Option<String> {
    let slug = registry(gemini)?.get(project)?.as_str()?.to_string();
    (owner(gemini, &slug, project) != SlugOwner::Other).then_some(slug)
}

/// The slug a project has, or the one Gemini CLI would give it now (registry first, then a
/// folder whose marker names it, then the first free candidate).
pub fn slug_for(gemini: &Path, project: &str) -> (String, SlugSource) {
    if let Some(slug) = registered_slug(gemini, project) {
        return (slug, SlugSource::Registered);
    }
    if let Some(slug) = marked_slug(gemini, project) {
        return (slug, SlugSource::Marker);
    }
    let taken = registered_slugs(gemini);
    let slug = claim_gemini_slug(project, |candidate| {
        if taken.iter().any(|t| t == candidate) {
            SlugOwner::Other
        } else {
            owner(gemini, candidate, project)
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
fn owner(gemini: &Path, slug: &str, project: &str) -> SlugOwner {
    let mut result = SlugOwner::Free;
    for base in BASE_DIRS {
        let marker = gemini.join(base).join(slug).join(MARKER);
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
fn marked_slug(gemini: &Path, project: &str) -> Option<String> {
    for base in BASE_DIRS {
        let Ok(entries) = std::fs::read_dir(gemini.join(base)) else {
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

fn registered_slugs(gemini: &Path) -> Vec<String> {
    registry(gemini)
        .map(|m| {
            m.values()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The project a slug folder belongs to: its marker, else the registry entry naming it.
pub fn project_of_slug(gemini: &Path, slug: &str) -> Option<String> {
    for base in BASE_DIRS {
        if let Ok(owner) = std::fs::read_to_string(gemini.join(base).join(slug).join(MARKER)) {
            return Some(owner.trim().to_string());
        }
    }
    registry(gemini)?
        .into_iter()
        .find(|(_, s)| s.as_str() == Some(slug))
        .map(|(project, _)| project)
}

/// The folder under `tmp/` a new session of `project` goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderChoice {
    pub name: String,
    /// Whether `projects.json` and the markers must learn the slug (see [`register`]).
    pub register: bool,
}

/// The project's registered or marked slug; its sha256 folder when the store has one and no
/// registry (a CLI before v0.29 reads only that) and `slug_only` is false; else the slug the
/// CLI would claim now. `slug_only` is for files only a v0.29+ CLI reads (JSONL sessions).
pub fn folder_for(gemini: &Path, project: &str, slug_only: bool) -> FolderChoice {
    let (slug, source) = slug_for(gemini, project);
    let hashed = crate::ids::sha256_hex(project);
    if source == SlugSource::New
        && !slug_only
        && !gemini.join("projects.json").exists()
        && gemini.join("tmp").join(&hashed).is_dir()
    {
        return FolderChoice {
            name: hashed,
            register: false,
        };
    }
    // A registered slug whose markers are missing (an interrupted registration) is
    // registered again: the markers are what the CLI looks for.
    let marked = markers(gemini, &slug).iter().all(|m| m.exists());
    FolderChoice {
        register: source != SlugSource::Registered || !marked,
        name: slug,
    }
}

/// Records `project -> slug` in `projects.json` (kept as it is otherwise) and writes the
/// `.project_root` markers the CLI writes, where they are missing. A registry that does not
/// parse is an error, never overwritten.
pub fn register(gemini: &Path, project: &str, slug: &str) -> std::io::Result<()> {
    set_registry_entry(gemini, None, project, slug)?;
    write_markers(gemini, slug, project, false)
}

/// Moves a registry entry and the markers of its slug from `old` to `new` (relocate).
pub fn rekey(gemini: &Path, old: &str, new: &str, slug: &str) -> std::io::Result<()> {
    set_registry_entry(gemini, Some(old), new, slug)?;
    write_markers(gemini, slug, new, true)
}

/// For a project move: `projects.json` with every key `map` moves renamed (in place), and
/// each `.project_root` marker naming a moved project rewritten, as (file, new bytes, what
/// changed). Empty when nothing names a moved project.
pub fn rekeyed(
    gemini: &Path,
    map: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(std::path::PathBuf, Vec<u8>, String)>, String> {
    use serde_json::{Map, Value};
    let mut out = Vec::new();
    let path = gemini.join("projects.json");
    if let Ok(bytes) = std::fs::read(&path) {
        let Ok(Value::Object(mut root)) = serde_json::from_slice::<Value>(&bytes) else {
            return Err(invalid(&path).to_string());
        };
        if let Some(Value::Object(projects)) = root.get_mut("projects") {
            let mut moved = 0;
            let renamed: Map<String, Value> = std::mem::take(projects)
                .into_iter()
                .map(|(k, v)| match map(&k) {
                    Some(new) => {
                        moved += 1;
                        (new, v)
                    }
                    None => (k, v),
                })
                .collect();
            *projects = renamed;
            if moved > 0 {
                let mut bytes =
                    serde_json::to_vec_pretty(&Value::Object(root)).map_err(|e| e.to_string())?;
                bytes.push(b'\n');
                out.push((path, bytes, format!("{moved} project key(s)")));
            }
        }
    }
    for base in BASE_DIRS {
        let Ok(entries) = std::fs::read_dir(gemini.join(base)) else {
            continue;
        };
        let mut markers: Vec<_> = entries.flatten().map(|e| e.path().join(MARKER)).collect();
        markers.sort();
        for marker in markers {
            let Ok(owner) = std::fs::read_to_string(&marker) else {
                continue;
            };
            if let Some(new) = map(owner.trim()) {
                out.push((marker, new.into_bytes(), "project path".into()));
            }
        }
    }
    Ok(out)
}

fn set_registry_entry(
    gemini: &Path,
    remove: Option<&str>,
    project: &str,
    slug: &str,
) -> std::io::Result<()> {
    let bytes = registry_with(gemini, remove, project, slug)?;
    std::fs::create_dir_all(gemini)?;
    crate::io::write_atomic(&gemini.join("projects.json"), &bytes, true)
}

/// `projects.json` as it would be with `project -> slug` (and without `remove`): the rest
/// kept as it is. A registry that does not parse is an error, never overwritten.
pub fn registry_with(
    gemini: &Path,
    remove: Option<&str>,
    project: &str,
    slug: &str,
) -> std::io::Result<Vec<u8>> {
    let path = gemini.join("projects.json");
    let current = match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    registry_bytes_with(current.as_deref(), &path, remove, project, slug)
}

/// [`registry_with`] on given `projects.json` bytes (`None`: no registry yet), for a caller
/// that builds several entries before writing; `path` names the file in errors.
pub fn registry_bytes_with(
    current: Option<&[u8]>,
    path: &Path,
    remove: Option<&str>,
    project: &str,
    slug: &str,
) -> std::io::Result<Vec<u8>> {
    use serde_json::{Map, Value};
    let mut root = match current.map(serde_json::from_slice::<Value>) {
        Some(Ok(Value::Object(m))) => m,
        Some(_) => return Err(invalid(path)),
        None => Map::new(),
    };
    let projects = root
        .entry("projects")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(projects) = projects else {
        return Err(invalid(path));
    };
    if let Some(old) = remove {
        projects.shift_remove(old);
    }
    projects.insert(project.to_string(), slug.into());
    let mut bytes =
        serde_json::to_vec_pretty(&Value::Object(root)).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The marker files of a slug folder (in `tmp/` and `history/`).
pub fn markers(gemini: &Path, slug: &str) -> [std::path::PathBuf; 2] {
    BASE_DIRS.map(|base| gemini.join(base).join(slug).join(MARKER))
}

fn write_markers(gemini: &Path, slug: &str, project: &str, replace: bool) -> std::io::Result<()> {
    for base in BASE_DIRS {
        let dir = gemini.join(base).join(slug);
        let marker = dir.join(MARKER);
        if marker.exists() && !replace {
            continue;
        }
        std::fs::create_dir_all(&dir)?;
        crate::io::write_atomic(&marker, project.as_bytes(), true)?;
    }
    Ok(())
}

fn invalid(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "{} is not a JSON object with a `projects` object; fix or move it first",
            path.display()
        ),
    )
}

/// `projects.json`'s `projects` map.
fn registry(gemini: &Path) -> Option<serde_json::Map<String, serde_json::Value>> {
    let bytes = std::fs::read(gemini.join("projects.json")).ok()?;
    match serde_json::from_slice::<serde_json::Value>(&bytes).ok()? {
        serde_json::Value::Object(mut m) => match m.shift_remove("projects")? {
            serde_json::Value::Object(p) => Some(p),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home_with(registry: &str, markers: &[(&str, &str, &str)]) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        let g = home.path().to_path_buf();
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
