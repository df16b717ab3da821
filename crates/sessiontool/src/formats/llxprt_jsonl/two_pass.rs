//! llxprt-code's lines read in two passes by the engine: its reader is a fold over the file's
//! lines (`read::Fold`), which the engine's pass one goes through as the whole reader does
//! ([`crate::engine::lines`]). Here: the tests that hold the two to each other.

#[cfg(test)]
mod tests {
    use super::super::LlxprtJsonl;

    fn agrees(name: &str, bytes: &[u8]) {
        crate::engine::lines::assert_reads_as_whole(&LlxprtJsonl, name, bytes);
    }

    #[test]
    fn every_fixture_reads_as_the_whole_reader_reads_it() {
        let n = crate::engine::lines::assert_folder_reads_as_whole(
            &LlxprtJsonl,
            "fixtures/llxprt-jsonl",
        );
        assert!(n >= 5, "{n}");
    }

    #[test]
    fn odd_files_read_as_the_whole_reader_reads_them() {
        let start = r#"{"v":1,"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"session_start","payload":{"sessionId":"s","projectHash":"h","workspaceDirs":["/w"],"provider":"p","model":"m","startTime":"2026-01-01T00:00:00.000Z"}}"#;
        let line = |seq: u64, text: &str| {
            format!(
                r#"{{"v":1,"seq":{seq},"ts":"2026-01-01T00:00:0{seq}.000Z","type":"content","payload":{{"content":{{"speaker":"human","blocks":[{{"type":"text","text":"{text}"}}]}}}}}}"#
            )
        };
        let files = [
            String::new(),
            start.to_string(),
            format!("{start}\n"),
            // seq that does not increase, a late session_start, lines that are no line, an
            // unknown type, a malformed one, a title, records glued on one line.
            [
                start.to_string(),
                line(2, "a"),
                line(2, "b"),
                start.to_string(),
                "[1]".into(),
                r#"{"v":1,"seq":5,"ts":"t","type":"future","payload":{}}"#.into(),
                r#"{"v":1,"seq":6,"ts":"t","type":"content","payload":{"x":1}}"#.into(),
                r#"{"v":1,"seq":7,"ts":"t","type":"session_metadata","payload":{"title":"T"}}"#.into(),
                r#"{"v":1,"seq":8,"ts":"t","type":"session_named","payload":{}}"#.into(),
                format!("{}{}", line(8, "c"), line(9, "d")),
            ]
            .join("\n"),
            // No session_start; a torn last line; a lone surrogate and a repeated key.
            [
                line(1, "a"),
                r#"{"v":1,"seq":2,"ts":"t","type":"content","payload":{"content":{"speaker":"human","blocks":[{"type":"text","text":"\ud83d","text":"x"}]}}}"#.into(),
                r#"{"v":1,"se"#.into(),
            ]
            .join("\n"),
            format!("{start}\r\n{}\r\n", line(2, "a")),
            format!("\u{feff}{start}\n{}\n\n\0\0", line(2, "a")),
        ];
        for (k, text) in files.iter().enumerate() {
            agrees(&format!("odd-{k}.jsonl"), text.as_bytes());
        }
    }
}
