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

#[test]
fn every_dependency_and_feature_is_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let main = source(root, &["src"]);
    let tests = source(root, &["tests", "benches", "examples", "src"]);
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
            unused.push(format!("[{table}] {line}"));
        }
    }
    assert!(unused.is_empty(), "unused: {unused:#?}");
    // uuid's v4 (random ids): temp names of src/io/temp.rs.
    assert!(manifest.contains(r#"features = ["v4"]"#));
    assert!(
        main.contains("Uuid::new_v4()"),
        "uuid's v4 feature is asked for and unused"
    );
}
