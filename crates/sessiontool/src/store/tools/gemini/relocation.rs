//! What `relocate` changes in Gemini CLI's registries: the `projects.json` entries and
//! `.project_root` markers naming OLD (or below).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::registry as gemini_registry;
use crate::check::Stamp;
use crate::store::rekey::Move;
use crate::store::relocate::{Change, Plan};
use crate::store::tool::Tool;

/// The registries in the `.gemini` folder `gemini`, rekeyed.
pub(super) fn registries(gemini: &Path, mv: &Move, plan: &mut Plan) {
    // Stamps taken before the reads: a change in between shows at the commit.
    let stamps = registry_stamps(gemini);
    match gemini_registry::rekeyed(gemini, &|p| mv.map_path(p)) {
        Ok(changes) => {
            for (path, bytes, inside) in changes {
                let Some(&read) = stamps.get(&path) else {
                    plan.problems.push(format!(
                        "{} changed while it was read; run relocate again",
                        path.display()
                    ));
                    continue;
                };
                // Gemini CLI locks projects.json, not the markers.
                let locked = path == gemini_registry::registry_path(gemini);
                let change = Change::index(Tool::Gemini, path, inside, (bytes, read), locked);
                plan.changes.push(change);
            }
        }
        Err(problems) => plan.problems.extend(problems),
    }
}

/// The stamps of `projects.json` and of every `.project_root` marker, before they are read.
fn registry_stamps(gemini: &Path) -> BTreeMap<PathBuf, Stamp> {
    let mut stamps = BTreeMap::new();
    for f in gemini_registry::every_file(gemini) {
        if let Ok(s) = Stamp::of(&f) {
            stamps.insert(f, s);
        }
    }
    stamps
}
