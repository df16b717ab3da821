//! The options every store command shares: which home, which project, which tools.

use std::path::{Path, PathBuf};

use clap::ValueHint;
use sessiontool::store::home::Home;
use sessiontool::store::scheme::{Scheme, resolve};
use sessiontool::store::tool::Tool;

use crate::error::CliError;
use crate::escape;

#[derive(clap::Args, Debug, Clone)]
pub struct StoreArgs {
    /// Look for every tool's store under DIR instead of $HOME, ignoring the tools'
    /// environment overrides (GEMINI_CLI_HOME, QWEN_RUNTIME_DIR, CLAUDE_CONFIG_DIR,
    /// LLXPRT_LOG_HOME, PI_CODING_AGENT_DIR, CODEX_HOME, XDG_CONFIG_HOME).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub home: Option<PathBuf>,
}

impl StoreArgs {
    /// A home to put a session into (`convert --store`): its stores are made as needed, so
    /// a `--home` folder that is not there yet is made too.
    pub fn home_to_fill(&self) -> Result<Home, CliError> {
        Home::from_arg(self.home.as_deref()).ok_or_else(|| {
            CliError::input("no home folder: $HOME is not set").hint("pass --home DIR")
        })
    }

    /// The home whose stores to read; a `--home` folder that is not there is an error (a
    /// typo would otherwise look like a home without sessions).
    pub fn home(&self) -> Result<Home, CliError> {
        if let Some(dir) = &self.home
            && !dir.is_dir()
        {
            let what = if dir.exists() {
                "is not a folder"
            } else {
                "does not exist"
            };
            return Err(
                CliError::input(format!("--home {}: {what}", escape::path(dir)))
                    .hint("name the folder that holds the tools' stores (.gemini, .qwen, ...)"),
            );
        }
        self.home_to_fill()
    }

    /// `--home DIR` as it would be typed again in a command we suggest, or nothing.
    pub fn flag(&self) -> String {
        match &self.home {
            Some(dir) => format!(" --home {}", shell_word(&dir.display().to_string())),
            None => String::new(),
        }
    }
}

/// A word a shell takes as it is: quoted when it holds anything but plain characters.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
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

/// `--tool` values (clap checks them against [`tool_names`]) as tools.
pub fn tools(names: &[String]) -> Result<Vec<Tool>, CliError> {
    names
        .iter()
        .map(|n| {
            Tool::by_name(n).ok_or_else(|| {
                CliError::usage(format!("unknown tool {n:?}"))
                    .hint(format!("one of: {}", Tool::names()))
            })
        })
        .collect()
}

/// `--tool` values, for completions and `--help`.
pub fn tool_names() -> clap::builder::PossibleValuesParser {
    Tool::all().map(Tool::name).collect::<Vec<_>>().into()
}

/// `--scheme` values.
pub fn scheme_names() -> clap::builder::PossibleValuesParser {
    Scheme::ALL.map(Scheme::name).to_vec().into()
}
