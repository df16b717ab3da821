//! Writers never follow a symbolic link inside a store: a folder or file below a tool's base
//! folder that is a link (perhaps pointing out of the store, perhaps planted) stops the write.
//! The base folders themselves may be links (`~/.claude` kept in a dotfiles repository).

use std::path::{Path, PathBuf};

use super::home::Home;

/// The folders each tool keeps everything under, as its module declares them.
fn bases(home: &Home) -> Vec<PathBuf> {
    super::tools::all()
        .iter()
        .flat_map(|tool| tool.bases(home))
        .collect()
}

/// Refuses `target` when a folder or file between its tool's base folder and it is a
/// symbolic link. Paths outside every store are not this guard's business.
pub fn check(home: &Home, target: &Path) -> std::io::Result<()> {
    let Some(base) = bases(home).into_iter().find(|b| target.starts_with(b)) else {
        return Ok(());
    };
    let mut at = base.clone();
    for part in target
        .strip_prefix(&base)
        .unwrap_or(Path::new(""))
        .components()
    {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is a symbolic link inside {}; sessiontool does not write through links in a store (move it, or point --home elsewhere)",
                        at.display(),
                        base.display()
                    ),
                ));
            }
            Ok(_) => {}
            // The rest does not exist yet: it will be made as real folders.
            Err(_) => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_inside_a_store_stop_a_write_and_a_linked_base_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let projects = dir.path().join(".qwen/projects");
        std::fs::create_dir_all(&projects).unwrap();
        std::os::unix::fs::symlink(outside.path(), projects.join("-w-app")).unwrap();
        let target = projects.join("-w-app/chats/x.jsonl");
        let err = check(&home, &target).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(check(&home, &projects.join("-w-other/chats/x.jsonl")).is_ok());
        // ~/.claude itself a link: fine.
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".claude")).unwrap();
        assert!(check(&home, &dir.path().join(".claude/projects/-w/x.jsonl")).is_ok());
        assert!(check(&home, Path::new("/elsewhere/x.jsonl")).is_ok());
    }
}
