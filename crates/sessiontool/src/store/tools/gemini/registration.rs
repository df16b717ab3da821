//! Gemini CLI v0.29+ finds a project's slug folder through `projects.json`, which maps the
//! project to its slug, and the `.project_root` markers in `tmp/<slug>` and `history/<slug>`
//! that name the project: a session placed in a new slug folder registers it in both.

use std::path::PathBuf;

use super::registry as gemini_registry;
use crate::store::place::PlaceFailure;
use crate::store::tools::{Registration, RegistryLocks};

#[derive(Debug)]
pub(super) struct GeminiProject {
    /// The `.gemini` folder.
    pub(super) gemini: PathBuf,
    pub(super) project: String,
    pub(super) slug: String,
}

impl Registration for GeminiProject {
    fn files(&self) -> Vec<PathBuf> {
        let mut files = vec![gemini_registry::registry_path(&self.gemini)];
        // A slug that is not a folder name was refused when the target was chosen.
        files.extend(
            gemini_registry::markers(&self.gemini, &self.slug)
                .into_iter()
                .flatten(),
        );
        files
    }

    fn describe(&self) -> String {
        let (project, slug) = (&self.project, &self.slug);
        format!(
            "{} maps {project} to {slug}; .project_root markers in tmp/{slug} and history/{slug}",
            gemini_registry::registry_path(&self.gemini).display()
        )
    }

    fn apply(&self, locks: &RegistryLocks) -> Result<(), PlaceFailure> {
        let registry = gemini_registry::registry_path(&self.gemini);
        locks.verify(&registry)?;
        gemini_registry::register(&self.gemini, &self.project, &self.slug)
            .map_err(|e| PlaceFailure::Io(registry, e))
    }
}
