//! `sessiontool dirname`: the folder name each tool gives a project.

use std::path::PathBuf;

use anstream::println;
use clap::{Parser, ValueHint};
use serde::Serialize;
use sessiontool::store::gemini_registry::{SlugSource, slug_for};
use sessiontool::store::home::Home;
use sessiontool::store::scheme::{Scheme, claude_of_real_path};
use sessiontool::store::tool::Tool;

use crate::error::CliError;
use crate::escape;

const EXAMPLES: &str = "Examples:
  sessiontool dirname .                           every scheme for the current folder
  sessiontool dirname ~/src/app --scheme dashed   just Qwen Code's name
  sessiontool dirname /work/app --json

The Gemini slug comes from ~/.gemini/projects.json and the .project_root markers when the
project is registered; otherwise it is the slug Gemini CLI would claim now (read-only).
Claude Code keys folders by the real path (symbolic links resolved); the others by the path as
given, made absolute.";

/// Print the project folder names of a path under each naming scheme.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The project folder (made absolute against the current folder; it need not exist).
    #[arg(value_hint = ValueHint::DirPath)]
    path: PathBuf,
    /// Only this scheme.
    #[arg(long, value_name = "SCHEME", value_parser = crate::store_args::scheme_names())]
    scheme: Option<String>,
    /// The home folder whose tool stores to consult (default: $HOME and the tools'
    /// environment overrides, such as GEMINI_CLI_HOME).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    home: Option<PathBuf>,
    /// Machine-readable output (schema sessiontool.dirname/1).
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Folder {
    scheme: &'static str,
    name: String,
    used_by: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let schemes: Vec<Scheme> = match &args.scheme {
        Some(name) => vec![Scheme::by_name(name).ok_or_else(|| {
            CliError::usage(format!("unknown scheme {name:?}"))
                .hint("one of: sha256, gemini-slug, dashed, claude, pi")
        })?],
        None => Scheme::ALL.to_vec(),
    };
    let project = crate::store_args::project(Some(&args.path))?;
    let home = match &args.home {
        Some(_) => Some(
            crate::store_args::StoreArgs {
                home: args.home.clone(),
            }
            .home()?,
        ),
        None => Home::from_arg(None),
    };
    let folders: Vec<Folder> = schemes
        .into_iter()
        .map(|s| folder(s, &project, home.as_ref()))
        .collect();
    if args.json {
        let doc = serde_json::json!({"schema": "sessiontool.dirname/1", "path": project, "folders": folders});
        crate::report::print_json(&doc);
    } else if folders.len() == 1 && args.scheme.is_some() {
        println!("{}", escape::line(&folders[0].name));
    } else {
        // The path is the user's, a slug may come from projects.json: escaped for the terminal.
        println!("{}", escape::line(&project));
        for f in &folders {
            let note = f
                .note
                .as_deref()
                .map(|n| format!("  ({})", escape::line(n)))
                .unwrap_or_default();
            println!("  {:<12} {}{note}", f.scheme, escape::line(&f.name));
            println!("  {:<12} {}", "", f.used_by);
        }
    }
    Ok(0)
}

fn folder(scheme: Scheme, project: &str, home: Option<&Home>) -> Folder {
    let (name, note) = match scheme {
        Scheme::GeminiSlug => match home {
            Some(home) => match slug_for(&Tool::Gemini.folder(home), project) {
                Ok((slug, source)) => {
                    let note = match source {
                        SlugSource::Registered => "registered in projects.json",
                        SlugSource::Marker => "found by its .project_root marker",
                        SlugSource::New => {
                            "not registered yet: the slug Gemini CLI would claim now"
                        }
                    };
                    (slug, Some(note.to_string()))
                }
                // The slug it would have without the damaged registry, and why not.
                Err(e) => (scheme.folder(project), Some(e.to_string())),
            },
            None => (
                scheme.folder(project),
                Some("no home folder to check for collisions".into()),
            ),
        },
        Scheme::Claude => {
            let c = claude_of_real_path(project);
            let note = c
                .prefix
                .then(|| "over 200 characters: Claude adds a hash of its own; folders starting with this name".to_string());
            (c.name, note)
        }
        _ => (scheme.folder(project), None),
    };
    Folder {
        scheme: scheme.name(),
        name,
        used_by: scheme.used_by(),
        note,
    }
}
