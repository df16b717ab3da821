//! Gemini CLI's project registry (v0.29+): `~/.gemini/projects.json` maps absolute project
//! paths to slugs, and each slug folder under `tmp/` and `history/` holds a `.project_root`
//! marker naming its project. Every function takes the `.gemini` folder (Gemini CLI's
//! [`Tool::folder`]).
//!
//! A slug is one folder name (Gemini CLI makes them of `[a-z0-9-]`); a registry with any
//! other value is damaged ([`RegistryError::Slug`]): nothing is written through it, since
//! Gemini CLI itself would put that project's sessions wherever the value points. Writers
//! hold [`FileLock`](crate::store::lock::FileLock) on `projects.json` (the lock Gemini CLI takes)
//! from reading it to writing it.
//!
//! [`Tool::folder`]: crate::store::tool::Tool::folder

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::store::confined::{self, NotAName};
use crate::store::scheme::{SlugOwner, claim_gemini_slug};

/// The folders that hold slug folders (and their markers).
const BASE_DIRS: [&str; 2] = ["tmp", "history"];
const MARKER: &str = ".project_root";
const REGISTRY: &str = "projects.json";

/// `projects.json` of a `.gemini` folder.
pub fn registry_path(gemini: &Path) -> PathBuf {
    gemini.join(REGISTRY)
}

/// Why `projects.json` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(
        "{} is damaged: it is not a JSON object with a `projects` object; fix it or move it away first",
        .path.display()
    )]
    Unreadable { path: PathBuf },
    #[error(
        "{} is damaged: its entry {project:?}: {slug} is not a slug (one folder name: {why}), and Gemini CLI would keep that project's sessions wherever it points; correct or remove the entry first",
        .path.display()
    )]
    Slug {
        path: PathBuf,
        project: String,
        /// The value as it is written in the file.
        slug: String,
        why: &'static str,
    },
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl From<RegistryError> for std::io::Error {
    fn from(e: RegistryError) -> Self {
        let kind = match &e {
            RegistryError::Io { source, .. } => source.kind(),
            _ => std::io::ErrorKind::InvalidData,
        };
        std::io::Error::new(kind, e.to_string())
    }
}

/// `projects.json`'s `projects` map, every slug checked; `None` when there is no registry.
fn load(gemini: &Path) -> Result<Option<Map<String, Value>>, RegistryError> {
    let path = registry_path(gemini);
    let Some(bytes) = read_current(&path).map_err(|source| RegistryError::Io {
        path: path.clone(),
        source,
    })?
    else {
        return Ok(None);
    };
    let mut root = parse(&bytes, &path)?;
    Ok(Some(match root.shift_remove("projects") {
        Some(Value::Object(projects)) => projects,
        _ => Map::new(),
    }))
}

/// The document of `projects.json` bytes, checked: an object whose `projects` (Gemini CLI
/// starts a registry without it as well) is an object of slugs. `path` names the file in
/// errors.
fn parse(bytes: &[u8], path: &Path) -> Result<Map<String, Value>, RegistryError> {
    let unreadable = || RegistryError::Unreadable {
        path: path.to_path_buf(),
    };
    let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(bytes) else {
        return Err(unreadable());
    };
    match root.get("projects") {
        None => {}
        Some(Value::Object(projects)) => check(projects, path)?,
        Some(_) => return Err(unreadable()),
    }
    Ok(root)
}

/// Every value of a `projects` map is a slug.
fn check(projects: &Map<String, Value>, path: &Path) -> Result<(), RegistryError> {
    for (project, value) in projects {
        let why = match value.as_str() {
            Some(slug) => confined::why_not_a_name(slug.as_ref()),
            None => Some("it is not a string"),
        };
        if let Some(why) = why {
            // As JSON: quoted, control characters escaped.
            let json = value.to_string();
            let mut slug: String = json.chars().take(120).collect();
            if slug.len() < json.len() {
                slug.push('…');
            }
            return Err(RegistryError::Slug {
                path: path.to_path_buf(),
                project: project.chars().take(200).collect(),
                slug,
                why,
            });
        }
    }
    Ok(())
}

/// What is wrong with the registry, for listings: `None` when it is sound or absent.
pub fn damage(gemini: &Path) -> Option<String> {
    load(gemini).err().map(|e| e.to_string())
}

/// The slug `projects.json` gives `project`, when it is there and its markers agree.
fn registered_slug(
    gemini: &Path,
    projects: Option<&Map<String, Value>>,
    project: &str,
) -> Option<String> {
    let slug = projects?.get(project)?.as_str()?.to_string();
    (owner(gemini, &slug, project) != SlugOwner::Other).then_some(slug)
}

/// The slug a project has, or the one Gemini CLI would give it now (registry first, then a
/// folder whose marker names it, then the first free candidate).
pub fn slug_for(gemini: &Path, project: &str) -> Result<(String, SlugSource), RegistryError> {
    let projects = load(gemini)?;
    if let Some(slug) = registered_slug(gemini, projects.as_ref(), project) {
        return Ok((slug, SlugSource::Registered));
    }
    if let Some(slug) = marked_slug(gemini, project) {
        return Ok((slug, SlugSource::Marker));
    }
    let taken: Vec<&str> = projects
        .iter()
        .flat_map(|m| m.values())
        .filter_map(Value::as_str)
        .collect();
    let slug = claim_gemini_slug(project, |candidate| {
        if taken.contains(&candidate) {
            SlugOwner::Other
        } else {
            owner(gemini, candidate, project)
        }
    });
    Ok((slug, SlugSource::New))
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
    let Ok(markers) = markers(gemini, slug) else {
        return SlugOwner::Other;
    };
    let mut result = SlugOwner::Free;
    for marker in markers {
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

/// The project a slug folder belongs to: its marker, else the registry entry naming it.
pub fn project_of_slug(gemini: &Path, slug: &str) -> Option<String> {
    for marker in markers(gemini, slug).ok()? {
        if let Ok(owner) = std::fs::read_to_string(marker) {
            return Some(owner.trim().to_string());
        }
    }
    // A damaged registry names no folder: its listing says so (see [`damage`]).
    load(gemini)
        .ok()??
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
pub fn folder_for(
    gemini: &Path,
    project: &str,
    slug_only: bool,
) -> Result<FolderChoice, RegistryError> {
    let (slug, source) = slug_for(gemini, project)?;
    let hashed = crate::ids::sha256_hex(project);
    if source == SlugSource::New
        && !slug_only
        && !registry_path(gemini).exists()
        && gemini.join("tmp").join(&hashed).is_dir()
    {
        return Ok(FolderChoice {
            name: hashed,
            register: false,
        });
    }
    // A registered slug whose markers are missing (an interrupted registration) is
    // registered again: the markers are what the CLI looks for.
    let marked = markers(gemini, &slug).is_ok_and(|m| m.iter().all(|m| m.exists()));
    Ok(FolderChoice {
        register: source != SlugSource::Registered || !marked,
        name: slug,
    })
}

/// Records `project -> slug` in `projects.json` (kept as it is otherwise) and writes the
/// `.project_root` markers the CLI writes, where they are missing. The caller holds the
/// registry's lock. A registry that is damaged, or gives `slug` to another project meanwhile,
/// is an error, and nothing is written.
pub fn register(gemini: &Path, project: &str, slug: &str) -> std::io::Result<()> {
    let path = registry_path(gemini);
    let current = read_current(&path)?;
    if let Some(bytes) = &current {
        let projects = parse(bytes, &path)?;
        let theirs = projects
            .iter()
            .find(|(p, s)| s.as_str() == Some(slug) && p.as_str() != project);
        if let Some((other, _)) = theirs {
            return Err(taken(gemini, slug, other));
        }
    }
    if owner(gemini, slug, project) == SlugOwner::Other {
        return Err(taken(
            gemini,
            slug,
            "another project (its .project_root says so)",
        ));
    }
    let bytes = registry_bytes_with(current.as_deref(), &path, None, project, slug)?;
    std::fs::create_dir_all(gemini)?;
    crate::io::write_atomic(&path, &bytes, true)?;
    for (dir, marker) in marker_dirs(gemini, slug).map_err(not_a_slug)? {
        if marker.exists() {
            continue;
        }
        std::fs::create_dir_all(&dir)?;
        crate::io::write_atomic(&marker, project.as_bytes(), true)?;
    }
    Ok(())
}

fn taken(gemini: &Path, slug: &str, other: &str) -> std::io::Error {
    std::io::Error::other(format!(
        "the Gemini CLI folder {} was claimed by {other} meanwhile; nothing was written: run the command again",
        gemini.join("tmp").join(slug).display()
    ))
}

fn read_current(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A file to rewrite: where, its new bytes, and what changed, in words.
pub type Rewrite = (PathBuf, Vec<u8>, String);

/// For a project move: `projects.json` with every key `map` moves renamed (in place), and
/// each `.project_root` marker naming a moved project rewritten, as (file, new bytes, what
/// changed). Empty when nothing names a moved project. Refused (the problems, in words) when
/// the registry is damaged, or when a moved project would land on a path that has a slug
/// folder of its own: two folders would claim it (see `claims_after`).
pub fn rekeyed(
    gemini: &Path,
    map: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Rewrite>, Vec<String>> {
    let mut out = Vec::new();
    let path = registry_path(gemini);
    let mut claims = Vec::new();
    let current =
        read_current(&path).map_err(|e| vec![format!("cannot read {}: {e}", path.display())])?;
    if let Some(bytes) = current {
        let mut root = parse(&bytes, &path).map_err(|e| vec![e.to_string()])?;
        if let Some(Value::Object(projects)) = root.get_mut("projects") {
            claims.extend(
                projects
                    .iter()
                    .filter_map(|(p, s)| Some((p.clone(), s.as_str()?.to_string()))),
            );
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
                let mut bytes = serde_json::to_vec_pretty(&Value::Object(root))
                    .map_err(|e| vec![e.to_string()])?;
                bytes.push(b'\n');
                out.push((path, bytes, format!("{moved} project key(s)")));
            }
        }
    }
    for base in BASE_DIRS {
        let Ok(entries) = std::fs::read_dir(gemini.join(base)) else {
            continue;
        };
        let mut folders: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        folders.sort();
        for folder in folders {
            let marker = folder.join(MARKER);
            let Ok(owner) = std::fs::read_to_string(&marker) else {
                continue;
            };
            let slug = folder.file_name().unwrap_or_default().to_string_lossy();
            claims.push((owner.trim().to_string(), slug.into_owned()));
            if let Some(new) = map(owner.trim()) {
                out.push((marker, new.into_bytes(), "project path".into()));
            }
        }
    }
    let problems = claims_after(gemini, &claims, map);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// The paths that, after the move, would be claimed by two slug folders (one moving there,
/// one there already), in words. Gemini CLI uses one folder per project and would hide the
/// other's sessions; the folders cannot be merged file by file either (`logs.json`, the
/// `history/<slug>` checkpoint repository), so relocate refuses and says what to do.
fn claims_after(
    gemini: &Path,
    claims: &[(String, String)],
    map: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    use std::collections::BTreeMap;
    // New path -> (slug -> the old path it moves from, or None when it is there already).
    let mut after: BTreeMap<String, BTreeMap<&str, Option<&str>>> = BTreeMap::new();
    for (project, slug) in claims {
        let (to, from) = match map(project) {
            Some(new) => (new, Some(project.as_str())),
            None => (project.clone(), None),
        };
        let slot = after.entry(to).or_default().entry(slug).or_insert(from);
        if slot.is_none() {
            *slot = from;
        }
    }
    let folder = |slug: &str| gemini.join("tmp").join(slug).display().to_string();
    let mut problems = Vec::new();
    for (to, slugs) in &after {
        let moving: Vec<(&str, &str)> = slugs
            .iter()
            .filter_map(|(s, from)| Some((*s, (*from)?)))
            .collect();
        let staying: Vec<&str> = slugs
            .iter()
            .filter(|(_, from)| from.is_none())
            .map(|(s, _)| *s)
            .collect();
        if moving.is_empty() || slugs.len() < 2 {
            continue;
        }
        let (slug, from) = moving[0];
        let own = staying
            .first()
            .copied()
            .unwrap_or(moving[moving.len() - 1].0);
        problems.push(format!(
            "{to} has a Gemini CLI folder of its own already ({}, named in projects.json or its .project_root), and {from}'s sessions are in {}: relocate refuses rather than leave two folders claiming {to} (Gemini CLI would list only one) or merge them (logs.json and the history/ checkpoint repositories cannot be merged file by file). To move the other tools' sessions, leave Gemini CLI out (--tool for each of the others); to give {to} the moved folder, move {} and {} away and remove {to:?} from {} first",
            folder(own),
            folder(slug),
            folder(own),
            gemini.join("history").join(own).display(),
            registry_path(gemini).display()
        ));
    }
    problems
}

/// `projects.json` as it would be with `project -> slug` (and without `remove`): the rest
/// kept as it is. A registry that is damaged is an error, never overwritten.
pub fn registry_with(
    gemini: &Path,
    remove: Option<&str>,
    project: &str,
    slug: &str,
) -> std::io::Result<Vec<u8>> {
    let path = registry_path(gemini);
    let current = read_current(&path)?;
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
    let mut root = match current {
        // Refuses a damaged registry (the error says which entry).
        Some(bytes) => parse(bytes, path)?,
        None => Map::new(),
    };
    let gemini = path.parent().unwrap_or(Path::new(""));
    confined::join(&gemini.join("tmp"), slug).map_err(not_a_slug)?;
    let projects = root
        .entry("projects")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(projects) = projects else {
        return Err(RegistryError::Unreadable {
            path: path.to_path_buf(),
        }
        .into());
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

/// The marker files of a slug folder (in `tmp/` and `history/`); an error when `slug` is
/// not one folder name.
pub fn markers(gemini: &Path, slug: &str) -> Result<[PathBuf; 2], NotAName> {
    let [a, b] = marker_dirs(gemini, slug)?;
    Ok([a.1, b.1])
}

/// `projects.json` and the marker of every folder in `tmp/` and `history/` (there or not):
/// every file a relocation may rewrite.
pub(crate) fn every_file(gemini: &Path) -> Vec<PathBuf> {
    let mut files = vec![registry_path(gemini)];
    for base in BASE_DIRS {
        if let Ok(dirs) = std::fs::read_dir(gemini.join(base)) {
            files.extend(dirs.flatten().map(|d| d.path().join(MARKER)));
        }
    }
    files
}

/// Each slug folder with its marker.
fn marker_dirs(gemini: &Path, slug: &str) -> Result<[(PathBuf, PathBuf); 2], NotAName> {
    let dir = |base: &str| -> Result<(PathBuf, PathBuf), NotAName> {
        let dir = confined::join(&gemini.join(base), slug)?;
        let marker = dir.join(MARKER);
        Ok((dir, marker))
    };
    Ok([dir(BASE_DIRS[0])?, dir(BASE_DIRS[1])?])
}

fn not_a_slug(e: NotAName) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
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
            slug_for(home.path(), "/w/app").unwrap(),
            ("app-1".into(), SlugSource::Registered)
        );
    }

    #[test]
    fn a_marker_found_on_disk_counts_as_the_projects_slug() {
        let home = home_with(r#"{"projects": {}}"#, &[("history", "app", "/w/app")]);
        assert_eq!(
            slug_for(home.path(), "/w/app").unwrap(),
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
            slug_for(home.path(), "/c/app").unwrap(),
            ("app-2".into(), SlugSource::New)
        );
    }

    #[test]
    fn a_registry_entry_whose_marker_disagrees_is_not_trusted() {
        let home = home_with(
            r#"{"projects": {"/w/app": "app"}}"#,
            &[("tmp", "app", "/other")],
        );
        let projects = load(home.path()).unwrap();
        assert_eq!(
            registered_slug(home.path(), projects.as_ref(), "/w/app"),
            None
        );
        assert_eq!(slug_for(home.path(), "/w/app").unwrap().0, "app-1");
    }

    #[test]
    fn a_slug_that_is_not_one_folder_name_is_a_damaged_registry() {
        for (value, why) in [
            (r#""/etc""#, "separator"),
            (r#""../../x""#, "separator"),
            (r#"".""#, "dots"),
            (r#""""#, "empty"),
            (r#""a\\b""#, "separator"),
            (r#""a\u0000b""#, "control"),
            ("7", "not a string"),
        ] {
            let registry = format!(r#"{{"projects": {{"/w/ok": "ok", "/w/app": {value}}}}}"#);
            let home = home_with(&registry, &[]);
            let err = slug_for(home.path(), "/w/ok").unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(err, RegistryError::Slug { .. })
                    && text.contains("projects.json is damaged")
                    && text.contains("\"/w/app\"")
                    && text.contains(why),
                "{value}: {text}"
            );
            assert!(folder_for(home.path(), "/w/new", false).is_err());
            assert!(register(home.path(), "/w/new", "new").is_err());
            assert!(registry_with(home.path(), None, "/w/new", "new").is_err());
            assert!(damage(home.path()).is_some());
            assert!(!home.path().join("tmp").exists(), "nothing written");
        }
        let home = home_with(r#"{"projects": {"/w/ok": "ok"}}"#, &[]);
        assert_eq!(damage(home.path()), None);
        assert!(registry_with(home.path(), None, "/w/x", "../x").is_err());
        assert!(markers(home.path(), "..").is_err());
    }

    #[test]
    fn a_project_moving_onto_one_with_its_own_folder_is_refused() {
        let home = home_with(
            r#"{"projects": {"/w/app": "app", "/w/moved": "moved", "/w/app/sub": "sub"}}"#,
            &[
                ("tmp", "app", "/w/app"),
                ("tmp", "moved", "/w/moved"),
                ("history", "sub", "/w/app/sub"),
            ],
        );
        let mv = |to: &'static str| {
            move |p: &str| {
                p.strip_prefix("/w/app")
                    .filter(|r| r.is_empty() || r.starts_with('/'))
                    .map(|r| format!("{to}{r}"))
            }
        };
        let problems = rekeyed(home.path(), &mv("/w/moved")).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("/w/moved has a Gemini CLI folder of its own"));
        // Elsewhere the same registry moves: its key and the markers naming it.
        let changes = rekeyed(home.path(), &mv("/w/new")).unwrap();
        let files: Vec<String> = changes
            .iter()
            .map(|(p, _, _)| p.strip_prefix(home.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            files,
            [
                "projects.json",
                "tmp/app/.project_root",
                "history/sub/.project_root"
            ]
        );
    }
}
