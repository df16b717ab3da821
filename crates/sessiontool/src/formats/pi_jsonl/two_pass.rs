//! pi's lines read in two passes by the engine: its reader is a fold over the file's lines
//! (`read::Fold`), which the engine's pass one goes through as the whole reader does
//! ([`crate::engine::lines`]). Here: the tests that hold the two to each other.

#[cfg(test)]
use super::PiJsonl;

#[cfg(test)]
mod tests {
    use super::*;

    fn agrees_in_blocks(name: &str, bytes: &[u8]) {
        crate::engine::lines::assert_reads_as_whole(&PiJsonl, name, bytes);
    }

    #[test]
    fn every_fixture_reads_as_the_whole_reader_reads_it() {
        let n = crate::engine::lines::assert_folder_reads_as_whole(&PiJsonl, "fixtures/pi-jsonl");
        assert!(n >= 3, "{n}");
    }

    #[test]
    fn odd_files_read_as_the_whole_reader_reads_them() {
        let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/p"}"#;
        let user = |id: &str, parent: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-11-20T23:33:51.000Z","message":{{"role":"user","content":"hi {id}","timestamp":1}}}}"#
            )
        };
        let v1 = concat!(
            r#"{"type":"session","id":"s1","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-11-20T23:33:51.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-11-20T23:33:52.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"2025-11-20T23:34:00.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":10}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"2025-11-20T23:34:01.000Z","summary":"t","firstKeptEntryIndex":9}"#,
            "\n",
        );
        let files = [
            String::new(),
            header.to_string(),
            format!("{header}\n"),
            v1.to_string(),
            // Ids used twice, a line that is no object, one that has no type, a title.
            [
                header.to_string(),
                user("a1", "null"),
                user("a1", r#""a1""#),
                user("a1", r#""a1""#),
                "[1,2]".into(),
                r#""a string""#.into(),
                r#"{"id":"x","parentId":"a1"}"#.into(),
                r#"{"type":"session_info","id":"t1","parentId":"a1","timestamp":"2025-11-20T23:35:00.000Z","name":"A title"}"#.into(),
                user("b1", r#""gone""#),
            ]
            .join("\n"),
            // No header; damage the records layer finds; a lone surrogate and a repeated key.
            [
                user("a1", "null"),
                r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"user","content":"\ud83d","content":"kept","timestamp":1}}"#.into(),
                r#"{"type":"mess"#.into(),
            ]
            .join("\n"),
            format!("{header}\r\n{}\r\n", user("a1", "null")),
            format!("\u{feff}{header}\n{}\n\n\0\0\0", user("a1", "null")),
            format!("{header}\n{}{}\n", user("a1", "null"), user("a2", r#""a1""#)),
        ];
        for (k, text) in files.iter().enumerate() {
            agrees_in_blocks(&format!("odd-{k}.jsonl"), text.as_bytes());
        }
    }

    #[test]
    fn the_real_samples_read_as_the_whole_reader_reads_them() {
        let dir = std::path::Path::new("../../../shared/samples/pi");
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("the real pi samples ({}): {e}", dir.display()));
        let mut n = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                agrees_in_blocks(&path.display().to_string(), &std::fs::read(&path).unwrap());
                n += 1;
            }
        }
        assert!(n >= 1, "{n}");
    }
}
