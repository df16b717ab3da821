//! The Go agent's lines read in two passes by the engine: its reader is a fold over the file's
//! lines (`read::Fold`), which the engine's pass one goes through as the whole reader does
//! ([`crate::engine::lines`]). Here: the tests that hold the two to each other.

#[cfg(test)]
mod tests {
    use super::super::AgentJsonl;

    fn agrees(name: &str, bytes: &[u8]) {
        crate::engine::lines::assert_reads_as_whole(&AgentJsonl, name, bytes);
    }

    #[test]
    fn every_fixture_reads_as_the_whole_reader_reads_it() {
        let n =
            crate::engine::lines::assert_folder_reads_as_whole(&AgentJsonl, "fixtures/agent-jsonl");
        assert!(n >= 3, "{n}");
    }

    #[test]
    fn odd_files_read_as_the_whole_reader_reads_them() {
        let header =
            r#"{"type":"session","id":"s1","cwd":"/p","created_at":"2026-01-01T00:00:00Z"}"#;
        let entry = |id: &str, parent: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parent_id":"{parent}","timestamp":"2026-01-01T00:00:01Z","message":{{"role":"user","content":[{{"type":"text","text":"hi {id}"}}]}}}}"#
            )
        };
        let files = [
            String::new(),
            header.to_string(),
            // Ids used twice (also glued on one line), lines that are no object, an entry with
            // no id, one whose parent is missing.
            [
                header.to_string(),
                entry("a", ""),
                entry("a", "a"),
                format!("{}{}", entry("a", "a"), entry("a", "a")),
                "[1]".into(),
                r#""text""#.into(),
                r#"{"type":"message","message":{"role":"user"}}"#.into(),
                entry("b", "gone"),
            ]
            .join("\n"),
            // No header; a torn last line; a lone surrogate and a repeated key.
            [
                entry("a", ""),
                r#"{"type":"message","id":"c","parent_id":"a","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"\ud83d","text":"x"}]}}"#.into(),
                r#"{"type":"mess"#.into(),
            ]
            .join("\n"),
            format!("{header}\r\n{}\r\n", entry("a", "")),
            format!("\u{feff}{header}\n{}\n\n\0\0", entry("a", "")),
        ];
        for (k, text) in files.iter().enumerate() {
            agrees(&format!("odd-{k}.jsonl"), text.as_bytes());
        }
    }
}
