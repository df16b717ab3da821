//! The options every store command shares: which home, which project, which tools.

use std::path::{Path, PathBuf};

use sessiontool::store::home::Home;
use sessiontool::store::scheme::resolve;
use sessiontool::store::tool::Tool;

use crate::error::CliError;

#[derive(clap::Args, Debug, Clone)]
pub struct StoreArgs {
    /// Look for every tool's store under DIR instead of $HOME, ignoring the tools'
    /// environment overrides (GEMINI_CLI_HOME, QWEN_RUNTIME_DIR, CLAUDE_CONFIG_DIR,
    /// LLXPRT_LOG_HOME, PI_CODING_AGENT_DIR, CODEX_HOME, XDG_CONFIG_HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
}

impl StoreArgs {
    pub fn home(&self) -> Result<Home, CliError> {
        Home::from_arg(self.home.as_deref()).ok_or_else(|| {
            CliError::input("no home folder: $HOME is not set").hint("pass --home DIR")
        })
    }
}

/// The current folder, for resolving relative paths.
pub fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir()
        .map_err(|e| CliError::input(format!("cannot read the current folder: {e}")))
}

/// A project folder argument (default: the current folder) as the absolute path the tools
/// key sessions by.
pub fn project(arg: Option<&Path>) -> Result<String, CliError> {
    let cwd = current_dir()?;
    let path = resolve(arg.unwrap_or(Path::new(".")), &cwd);
    Ok(path.to_string_lossy().into_owned())
}

/// `--tool` values as tools.
pub fn tools(names: &[String]) -> Result<Vec<Tool>, CliError> {
    names
        .iter()
        .map(|n| {
            Tool::by_name(n).ok_or_else(|| {
                CliError {
                    code: 2,
                    message: format!("unknown tool {n:?}"),
                    location: None,
                    hint: None,
                }
                .hint(format!("one of: {}", Tool::names()))
            })
        })
        .collect()
}
