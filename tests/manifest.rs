//! Cargo.toml asks for nothing the code does not use (issue 16, item 23): every dependency is
//! named in the source it is for, and every feature asked of one is used.

use std::path::Path;

/// The `[name]` tables' entries of Cargo.toml: (table, crate, the line).
fn entries(manifest: &str) -> Vec<(String, String, String)> {
    let mut table = String::new();
    let mut out = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if let Some(t) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = t.to_string();
        } else if let Some((name, _)) = line.split_once('=')
            && !line.starts_with('#')
            && table.ends_with("dependencies")
        {
            out.push((table.clone(), name.trim().to_string(), line.to_string()));
        }
    }
    out
}

/// Every `.rs` file below `dirs`, concatenated.
fn source(root: &Path, dirs: &[&str]) -> String {
    let mut text = String::new();
    for dir in dirs {
        for entry in walkdir::WalkDir::new(root.join(dir)) {
            let entry = entry.unwrap();
            if entry.path().extension().is_some_and(|e| e == "rs") {
                text.push_str(&std::fs::read_to_string(entry.path()).unwrap());
            }
        }
    }
    text
}

/// The dependencies of one package's manifest (`dir/Cargo.toml`) that its code (`main`) or its
/// tests (`tests`) never name.
fn unused(root: &Path, dir: &str, main: &[&str], tests: &[&str]) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
    let main = source(root, main);
    let tests = source(root, tests);
    let mut unused = Vec::new();
    for (table, name, line) in entries(&manifest) {
        let code = if table == "dependencies" {
            &main
        } else {
            &tests
        };
        let module = name.replace('-', "_");
        let named = [
            format!("{module}::"),
            format!("use {module}"),
            format!("{module}!"),
        ]
        .iter()
        .any(|n| code.contains(n.as_str()));
        if !named {
            unused.push(format!("{dir}/Cargo.toml [{table}] {line}"));
        }
    }
    unused
}

/// Both packages of the workspace: the command line at the root (its tests, benchmarks and
/// examples beside it) and the library in `crates/sessiontool`.
#[test]
fn every_dependency_and_feature_is_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = "crates/sessiontool/src";
    let mut unused = unused(
        root,
        ".",
        &["src"],
        &["tests", "benches", "examples", "src"],
    );
    unused.extend(unused_in_library(root, lib));
    assert!(unused.is_empty(), "unused: {unused:#?}");
    // uuid's v4 (random ids): temp names of the library's io/temp.rs.
    let manifest = std::fs::read_to_string(root.join("crates/sessiontool/Cargo.toml")).unwrap();
    assert!(manifest.contains(r#"features = ["v4"]"#));
    assert!(
        source(root, &[lib]).contains("Uuid::new_v4()"),
        "uuid's v4 feature is asked for and unused"
    );
}

/// The library's unit tests share `tests/common` (the prerequisite helper).
fn unused_in_library(root: &Path, lib: &str) -> Vec<String> {
    unused(root, "crates/sessiontool", &[lib], &[lib, "tests/common"])
}

/// A library user compiles no command-line parser, terminal styling or progress bar.
#[test]
fn the_library_asks_for_nothing_of_the_command_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("crates/sessiontool/Cargo.toml")).unwrap();
    for (_, name, _) in entries(&manifest) {
        assert!(
            ![
                "clap",
                "clap_complete",
                "clap_mangen",
                "indicatif",
                "anstream",
                "anstyle",
                "terminal_size",
                "mimalloc"
            ]
            .contains(&name.as_str()),
            "the library depends on {name}"
        );
    }
}
