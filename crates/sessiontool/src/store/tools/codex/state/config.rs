//! What Codex's `config.toml` tells about its state database: the model provider a thread
//! whose rollout names none is recorded under (`model_provider`, default `openai`; `codex
//! exec resume --last` lists only the threads of the provider in use), and the folder the
//! databases live in (`sqlite_home`, default CODEX_HOME).

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Codex's provider when its configuration names none.
pub const DEFAULT_PROVIDER: &str = "openai";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexConfig {
    pub default_provider: String,
    /// `sqlite_home`, made absolute against CODEX_HOME.
    pub sqlite_home: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Toml {
    model_provider: Option<String>,
    sqlite_home: Option<PathBuf>,
}

/// Reads `codex_home/config.toml` (no file: Codex's defaults). A file Codex could not read
/// either is an error that names it.
pub fn read(codex_home: &Path) -> Result<CodexConfig, String> {
    let path = codex_home.join("config.toml");
    let text = match crate::regular_file::read(&path) {
        Ok(bytes) => {
            String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let parsed: Toml = toml::from_str(&text).map_err(|e| {
        format!(
            "{} is not valid TOML (Codex cannot start with it either): {}",
            path.display(),
            e.message()
        )
    })?;
    Ok(CodexConfig {
        default_provider: parsed
            .model_provider
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| DEFAULT_PROVIDER.to_string()),
        sqlite_home: parsed.sqlite_home.map(|p| codex_home.join(p)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_without_a_file_and_the_configured_values_with_one() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read(dir.path()).unwrap(),
            CodexConfig {
                default_provider: "openai".into(),
                sqlite_home: None
            }
        );
        std::fs::write(
            dir.path().join("config.toml"),
            "model = \"m\"\nmodel_provider = 'mock' # comment\nsqlite_home = \"db\"\n[model_providers.mock]\nname = \"x\"\n",
        )
        .unwrap();
        let config = read(dir.path()).unwrap();
        assert_eq!(config.default_provider, "mock");
        assert_eq!(config.sqlite_home, Some(dir.path().join("db")));
    }

    #[test]
    fn a_file_codex_cannot_read_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "model_provider = \n").unwrap();
        let err = read(dir.path()).unwrap_err();
        assert!(err.contains("config.toml is not valid TOML"), "{err}");
    }
}
