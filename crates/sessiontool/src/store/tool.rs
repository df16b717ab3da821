//! The tools whose stores sessiontool knows, and which formats each one's store holds.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    Gemini,
    Qwen,
    Claude,
    Llxprt,
    Pi,
    Codex,
    Agent,
    SimpleAgent,
    /// Read only: its sessions are rows of a database (`formats::opencode`).
    #[serde(rename = "opencode")]
    OpenCode,
}

impl Tool {
    pub const ALL: [Tool; 9] = [
        Tool::Gemini,
        Tool::Qwen,
        Tool::Claude,
        Tool::Llxprt,
        Tool::Pi,
        Tool::Codex,
        Tool::Agent,
        Tool::SimpleAgent,
        Tool::OpenCode,
    ];

    /// The name used on the command line (`--tool qwen`).
    pub fn name(self) -> &'static str {
        match self {
            Tool::Gemini => "gemini",
            Tool::Qwen => "qwen",
            Tool::Claude => "claude",
            Tool::Llxprt => "llxprt",
            Tool::Pi => "pi",
            Tool::Codex => "codex",
            Tool::Agent => "agent",
            Tool::SimpleAgent => "simple-agent",
            Tool::OpenCode => "opencode",
        }
    }

    pub fn by_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The names, for error messages.
    pub fn names() -> String {
        Tool::ALL.map(Tool::name).join(", ")
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

    /// The format a tool writes new sessions in today.
    pub fn current_format(self) -> &'static str {
        match self {
            Tool::Gemini => "gemini-jsonl",
            Tool::Qwen => "qwen-jsonl",
            Tool::Claude => "claude-jsonl",
            Tool::Llxprt => "llxprt-jsonl",
            Tool::Pi => "pi-jsonl",
            Tool::Codex => "codex-jsonl",
            Tool::Agent => "agent-jsonl",
            Tool::SimpleAgent => "simple-agent-json",
            Tool::OpenCode => crate::formats::opencode::NAME,
        }
    }

    /// Whether sessiontool only reads this tool's store (its format is a database format,
    /// which has no writer): nothing is placed, migrated or relocated in it.
    pub fn read_only(self) -> bool {
        crate::formats::database::by_name(self.current_format()).is_some()
    }
}

impl Tool {
    /// How to resume a session of this tool from its project folder, when we know it.
    /// What resumes a Gemini CLI checkpoint saved under `tag`, typed inside the CLI.
    pub fn checkpoint_command(tag: &str) -> String {
        format!("/chat resume {tag}")
    }

    /// How to resume a session placed as a Gemini CLI checkpoint under `tag`.
    pub fn checkpoint_hint(tag: &str) -> String {
        format!("gemini, then {}", Tool::checkpoint_command(tag))
    }

    /// The command that resumes a session: by its id (`None` when it has none that could be
    /// read: never a placeholder to type), or for pi by its path.
    pub fn resume_hint(self, id: Option<&str>, path: &std::path::Path) -> Option<String> {
        if self == Tool::Pi {
            return Some(format!("pi --session {}", path.display()));
        }
        let id = id.filter(|id| !id.is_empty())?;
        Some(match self {
            Tool::Gemini => format!("gemini --resume {id}"),
            Tool::Qwen => format!("qwen --resume {id}"),
            Tool::Claude => format!("claude --resume {id}"),
            Tool::Codex => format!("codex resume {id}"),
            _ => return None,
        })
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_store_format_exists_and_maps_back_to_its_tool() {
        for tool in Tool::ALL {
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
}
