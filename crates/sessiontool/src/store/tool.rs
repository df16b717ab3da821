//! The tools whose stores sessiontool knows. A [`Tool`] is a handle on the tool's own module
//! ([`super::tools`]), which declares everything about it: its name, the format it writes
//! today, where its store is and how it is read and placed into, how a session resumes.
//! Adding a tool is its module and one line in [`super::tools::all`]; nothing else names it.

use std::hash::{Hash, Hasher};

use serde::Serialize;

use super::tools::{self, ToolStore};

/// One tool: compared, ordered and written (JSON, `--tool`) by its name. `Tool::Claude` and
/// the like are constants each tool's module declares.
#[derive(Clone, Copy)]
pub struct Tool(&'static dyn ToolStore);

impl Tool {
    /// The handle on a tool's module (for the modules' own constants).
    pub(crate) const fn of(store: &'static dyn ToolStore) -> Tool {
        Tool(store)
    }

    /// Every tool, in the order `list` shows them.
    pub fn all() -> impl Iterator<Item = Tool> {
        tools::all().iter().map(|s| Tool(*s))
    }

    /// What the tool's module declares about its store.
    pub fn store(self) -> &'static dyn ToolStore {
        self.0
    }

    /// The name used on the command line (`--tool qwen`).
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    pub fn by_name(name: &str) -> Option<Tool> {
        Tool::all().find(|t| t.name() == name)
    }

    /// The names, for error messages.
    pub fn names() -> String {
        Tool::all().map(Tool::name).collect::<Vec<_>>().join(", ")
    }

    /// The tool whose store a format's sessions live in (`None` for exports): the format
    /// module says which tool writes it.
    pub fn of_format(format: &str) -> Option<Tool> {
        let f = crate::formats::by_name(format)?;
        if !f.resumable() {
            return None;
        }
        Tool::by_name(f.tool())
    }

    /// The tool's own folder under `home` (`~/.gemini`, `$CODEX_HOME`), as its module says and
    /// its environment variables move it.
    pub fn folder(self, home: &super::home::Home) -> std::path::PathBuf {
        self.0.folder(home)
    }

    /// The format a tool writes new sessions in today.
    pub fn current_format(self) -> &'static str {
        self.0.current_format()
    }

    /// Whether sessiontool only reads this tool's store (its format is a database format,
    /// which has no writer): nothing is placed, migrated or relocated in it.
    pub fn read_only(self) -> bool {
        crate::formats::database::by_name(self.current_format()).is_some()
    }

    /// Where the tool stands in [`Tool::all`].
    fn rank(self) -> usize {
        tools::all()
            .iter()
            .position(|s| s.name() == self.name())
            .unwrap_or(usize::MAX)
    }
}

impl Tool {
    /// What resumes a Gemini CLI checkpoint saved under `tag`, typed inside the CLI.
    pub fn checkpoint_command(tag: &str) -> String {
        format!("/chat resume {tag}")
    }

    /// How to resume a session placed as a Gemini CLI checkpoint under `tag`.
    pub fn checkpoint_hint(tag: &str) -> String {
        format!("gemini, then {}", Tool::checkpoint_command(tag))
    }

    /// The command that resumes a session, as one line for a shell: by its id (`None` when
    /// it has none that could be read: never a placeholder to type), or for pi by its path.
    /// The same command as [`super::resume::command`]'s, without its folder and variables.
    pub fn resume_hint(self, id: Option<&str>, path: &std::path::Path) -> Option<String> {
        let path = super::resume::absolute(path);
        let argv = self.0.resume(id.filter(|id| !id.is_empty()), &path)?;
        Some(
            argv.iter()
                .map(|a| super::resume::quote(a))
                .collect::<Vec<_>>()
                .join(" "),
        )
    }
}

impl PartialEq for Tool {
    fn eq(&self, other: &Tool) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Tool {}

impl Hash for Tool {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state)
    }
}

impl PartialOrd for Tool {
    fn partial_cmp(&self, other: &Tool) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Tool {
    fn cmp(&self, other: &Tool) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tool({})", self.name())
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Tool {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_store_format_exists_and_maps_back_to_its_tool() {
        for tool in Tool::all() {
            assert_eq!(Tool::by_name(tool.name()), Some(tool));
            let format = tool.current_format();
            if tool.read_only() {
                let db = crate::formats::database::by_name(format).unwrap();
                assert_eq!(db.tool(), tool.name());
                continue;
            }
            assert!(crate::formats::by_name(format).is_some(), "{format}");
            assert_eq!(Tool::of_format(format), Some(tool));
        }
        for f in crate::formats::all() {
            assert_eq!(
                Tool::of_format(f.name()).is_some(),
                f.resumable(),
                "{}",
                f.name()
            );
        }
    }

    #[test]
    fn names_are_unique_and_order_follows_the_registry() {
        let all: Vec<Tool> = Tool::all().collect();
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a == b, i == j, "{a} {b}");
                assert_eq!(a.cmp(b), i.cmp(&j), "{a} {b}");
            }
        }
        assert_eq!(
            serde_json::to_string(&Tool::SimpleAgent).unwrap(),
            "\"simple-agent\""
        );
    }

    #[test]
    fn the_resume_hint_is_the_resume_command() {
        let home = crate::store::home::Home::at("/h");
        let path = std::path::Path::new("/s/x y.jsonl");
        for tool in Tool::all() {
            let command = super::super::resume::command(&home, tool, Some("abc"), path, "/w");
            assert_eq!(
                tool.resume_hint(Some("abc"), path),
                command.map(|c| c
                    .argv
                    .iter()
                    .map(|a| super::super::resume::quote(a))
                    .collect::<Vec<_>>()
                    .join(" ")),
                "{tool}"
            );
        }
        assert_eq!(Tool::Claude.resume_hint(None, path), None);
        assert_eq!(
            Tool::Pi.resume_hint(None, path).as_deref(),
            Some("pi --session '/s/x y.jsonl'")
        );
    }
}
