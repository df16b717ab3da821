//! The exact command that resumes a stored session in its tool: the program and its
//! arguments, the folder it must run in (every tool looks sessions up by the current folder),
//! and, when the store is not where the tool looks by itself (`--home DIR`), the variable
//! that points it there.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::home::Home;
use super::tool::Tool;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resume {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The folder to run it in: the project the session belongs to.
    pub cwd: String,
    /// Variables to set for it (only with a store elsewhere than the tool's default).
    pub env: BTreeMap<String, String>,
    /// All of it as one line for a POSIX shell.
    pub shell: String,
}

/// How `tool` resumes the session `id` stored at `path`, for `project`; `None` for a tool
/// without a known command (the Go agent and simple-agent of the seeds, OpenCode). Each tool's
/// module says its words ([`ToolStore::resume`](super::tools::ToolStore::resume)), checked
/// against the CLI's own argument parsing.
pub fn command(
    home: &Home,
    tool: Tool,
    id: Option<&str>,
    path: &Path,
    project: &str,
) -> Option<Resume> {
    let id = id.filter(|id| !id.is_empty());
    // The command runs in the project folder: every path in it is absolute.
    let argv = tool.store().resume(id, &absolute(path))?;
    let env = environment(home, tool);
    let mut shell = format!("cd {} &&", quote(project));
    for (k, v) in &env {
        shell.push_str(&format!(" {k}={}", quote(v)));
    }
    for a in &argv {
        shell.push(' ');
        shell.push_str(&quote(a));
    }
    Some(Resume {
        argv,
        cwd: project.to_string(),
        env,
        shell,
    })
}

/// Whether sessiontool knows how `tool` resumes a session.
pub fn has_command(tool: Tool) -> bool {
    tool.store().resume(Some("id"), "/path").is_some()
}

/// With `--home DIR` the tool must be told where its store is, by its own variable; from the
/// user's environment it already knows.
fn environment(home: &Home, tool: Tool) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if !home.isolated() {
        return env;
    }
    if let Some((var, dir)) = tool.store().home_variable(home) {
        env.insert(var.to_string(), absolute(&dir));
    }
    env
}

pub(super) fn absolute(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// `s` as one word for a POSIX shell: as it is when nothing in it is special, else in single
/// quotes (a quote inside written `'\''`).
pub fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:@%+=,".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_resumes_by_its_own_words_in_the_project_folder() {
        let home = Home::at("/h");
        let p = Path::new("/h/.pi/agent/sessions/--w-app--/x.jsonl");
        let id = Some("0b23371a-0000-4000-8000-000000000001");
        let line = |tool| command(&home, tool, id, p, "/w/my app").unwrap().shell;
        assert_eq!(
            line(Tool::Claude),
            "cd '/w/my app' && CLAUDE_CONFIG_DIR=/h/.claude claude --resume 0b23371a-0000-4000-8000-000000000001"
        );
        assert_eq!(
            line(Tool::Gemini),
            "cd '/w/my app' && GEMINI_CLI_HOME=/h gemini --resume 0b23371a-0000-4000-8000-000000000001"
        );
        assert_eq!(
            line(Tool::Codex),
            "cd '/w/my app' && CODEX_HOME=/h/.codex codex resume 0b23371a-0000-4000-8000-000000000001"
        );
        assert_eq!(
            line(Tool::Pi),
            "cd '/w/my app' && PI_CODING_AGENT_DIR=/h/.pi/agent pi --session /h/.pi/agent/sessions/--w-app--/x.jsonl"
        );
        assert!(
            line(Tool::Llxprt)
                .contains("LLXPRT_LOG_HOME=/h/.local/state/llxprt-code llxprt --continue 0b23")
        );
        assert!(command(&home, Tool::Agent, id, p, "/w").is_none());
        assert!(
            command(&home, Tool::Qwen, None, p, "/w").is_none(),
            "no id, no command"
        );
    }

    #[test]
    fn quoting_keeps_every_byte() {
        assert_eq!(quote("/w/app-1.2"), "/w/app-1.2");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a$b`c\"d"), "'a$b`c\"d'");
    }
}
