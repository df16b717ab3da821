//! Claude Code session JSONL (FORMATS.md section 9), written directly as Claude Code 2.0 writes
//! it (the samples in ../shared/samples/claude): user and assistant entries chained by
//! `uuid`/`parentUuid`; one content block per assistant entry, the blocks of one API reply
//! sharing `message.id` and `requestId`; `thinking` blocks with signatures; every `tool_use`
//! answered by a user entry holding its `tool_result` and the tool's `toolUseResult` (Read,
//! Edit, Write, Bash, Grep, Glob, TodoWrite, some of them failing); `file-history-snapshot`
//! entries before prompts and now and then a `summary`. One chain without branches, so every
//! converter reads the same records.

use crate::qwen::PROJECTS;
use crate::text::{FILES, IDENTS, Rng, Text, alnum, base64, jstr, numbered, timestamp, uuid};

const VERSIONS: &[&str] = &["2.0.24", "2.0.37", "2.0.55", "2.1.3"];
const MODELS: &[&str] = &[
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-5-20251101",
    "claude-haiku-4-5-20251001",
];

pub struct ClaudeGen {
    t: Text,
    pub session_id: String,
    pub cwd: String,
    version: &'static str,
    branch: &'static str,
    model: &'static str,
    /// Milliseconds since the Unix epoch.
    now: u64,
    /// The last entry of the chain.
    last: Option<String>,
    context_tokens: u64,
}

/// One API reply being written: its ids, shared by every block's entry.
struct Reply {
    message_id: String,
    request_id: String,
    input_tokens: u64,
    cache_read: u64,
}

/// A tool call waiting for its result: the tool, its id and what the result needs.
struct Call {
    id: String,
    tool: &'static str,
    file: String,
    /// Edit: (old, new) strings; Write: the content; TodoWrite: the list (JSON).
    a: String,
    b: String,
}

impl ClaudeGen {
    pub fn new(seed: u64) -> ClaudeGen {
        let mut rng = Rng::new(seed);
        let session_id = uuid(&mut rng);
        let (cwd, branch) = PROJECTS[rng.below(PROJECTS.len() as u64) as usize];
        let cjk = cwd.contains("李明") || cwd.contains("コード");
        ClaudeGen {
            session_id,
            cwd: cwd.to_string(),
            version: rng.pick(VERSIONS),
            branch,
            model: rng.pick(MODELS),
            now: 1_735_689_600_000 + rng.below(330 * 86_400_000),
            last: None,
            context_tokens: rng.range(12_000, 20_000),
            t: Text { rng, cjk },
        }
    }

    /// Appends one turn: a prompt, the model's replies with their tool calls and results, and
    /// the answer.
    pub fn turn(&mut self, out: &mut Vec<u8>) {
        let prompt_id = uuid(&mut self.t.rng);
        if self.t.rng.chance(0.6) {
            self.snapshot(out, &prompt_id);
        }
        self.prompt(out, &prompt_id);
        let steps = match self.t.rng.below(10) {
            0..=1 => 0,
            2..=5 => self.t.rng.range(1, 3),
            _ => self.t.rng.range(3, 12),
        };
        for _ in 0..steps {
            let reply = self.reply();
            self.thinking(out, &reply, 0.6);
            if self.t.rng.chance(0.5) {
                let len = self.t.rng.log_range(30.0, 300.0) as usize;
                let text = self.t.prose(len);
                self.text(out, &reply, &text);
            }
            // Now and then two calls in one reply, answered in order.
            let n = if self.t.rng.chance(0.12) { 2 } else { 1 };
            let calls: Vec<Call> = (0..n).map(|_| self.tool_use(out, &reply)).collect();
            for call in calls {
                self.tool_result(out, call);
            }
        }
        let reply = self.reply();
        self.thinking(out, &reply, 0.5);
        let len = self.t.rng.log_range(60.0, 2_500.0) as usize;
        let mut text = self.t.prose(len);
        if self.t.rng.chance(0.2) {
            text.push_str("\n\n```\n");
            let len = self.t.rng.log_range(200.0, 3_000.0) as usize;
            text.push_str(&self.t.code(len));
            text.push_str("```");
        }
        self.text(out, &reply, &text);
        if self.t.rng.chance(0.01) {
            // As the CLI appends after summarising the conversation so far.
            out.extend_from_slice(b"{\"type\":\"summary\",\"summary\":");
            let s = self.t.prose(60);
            jstr(out, s.trim_end_matches('.'));
            out.extend_from_slice(b",\"leafUuid\":");
            jstr(out, self.last.as_deref().unwrap_or_default());
            out.extend_from_slice(b"}\n");
        }
    }

    // -- envelope -------------------------------------------------------------------------------

    /// `{"parentUuid":..,...,"gitBranch":..,` (unclosed); the entry becomes the chain's last.
    fn open(&mut self, out: &mut Vec<u8>, id: &str) {
        self.now += self.t.rng.range(40, 25_000);
        out.extend_from_slice(b"{\"parentUuid\":");
        match &self.last {
            Some(p) => jstr(out, p),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":");
        jstr(out, &self.cwd);
        out.extend_from_slice(b",\"sessionId\":\"");
        out.extend_from_slice(self.session_id.as_bytes());
        out.extend_from_slice(b"\",\"version\":");
        jstr(out, self.version);
        out.extend_from_slice(b",\"gitBranch\":");
        jstr(out, self.branch);
        out.push(b',');
        self.last = Some(id.to_string());
    }

    /// `"uuid":..,"timestamp":..` closing what `open` began, before any trailing fields.
    fn id_and_time(&self, out: &mut Vec<u8>, id: &str) {
        out.extend_from_slice(b"\"uuid\":\"");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b"\",\"timestamp\":\"");
        out.extend_from_slice(timestamp(self.now).as_bytes());
        out.push(b'"');
    }

    // -- entries --------------------------------------------------------------------------------

    fn snapshot(&mut self, out: &mut Vec<u8>, prompt_id: &str) {
        out.extend_from_slice(b"{\"type\":\"file-history-snapshot\",\"messageId\":\"");
        out.extend_from_slice(prompt_id.as_bytes());
        out.extend_from_slice(b"\",\"snapshot\":{\"messageId\":\"");
        out.extend_from_slice(prompt_id.as_bytes());
        out.extend_from_slice(b"\",\"trackedFileBackups\":{");
        for i in 0..self.t.rng.below(4) {
            if i > 0 {
                out.push(b',');
            }
            let file = self.t.rng.pick(FILES);
            let version = self.t.rng.range(1, 9);
            jstr(out, file);
            out.extend_from_slice(
                format!(
                    ":{{\"backupFileName\":\"{}@v{version}\",\"version\":{version},\"backupTime\":\"{}\"}}",
                    alnum(&mut self.t.rng, 16).to_ascii_lowercase(),
                    timestamp(self.now)
                )
                .as_bytes(),
            );
        }
        out.extend_from_slice(b"},\"timestamp\":\"");
        out.extend_from_slice(timestamp(self.now + 9).as_bytes());
        out.extend_from_slice(b"\"},\"isSnapshotUpdate\":false}\n");
    }

    fn prompt(&mut self, out: &mut Vec<u8>, id: &str) {
        self.open(out, id);
        out.extend_from_slice(b"\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":");
        let len = if self.t.rng.chance(0.06) {
            self.t.rng.log_range(1_500.0, 15_000.0) as usize
        } else {
            self.t.rng.log_range(20.0, 700.0) as usize
        };
        let text = if len > 1_500 {
            // A pasted stack trace or file.
            let mut t = self.t.prose(150);
            t.push_str("\n\n```\n");
            t.push_str(&self.t.code(len));
            t.push_str("```\n");
            t
        } else {
            self.t.prose(len)
        };
        jstr(out, &text);
        out.extend_from_slice(b"},");
        self.id_and_time(out, id);
        out.extend_from_slice(
            b",\"thinkingMetadata\":{\"level\":\"high\",\"disabled\":false,\"triggers\":[]}}\n",
        );
        self.context_tokens += text.len() as u64 / 3 + 20;
    }

    fn reply(&mut self) -> Reply {
        let message_id = format!("msg_01{}", alnum(&mut self.t.rng, 22));
        let request_id = format!("req_011C{}", alnum(&mut self.t.rng, 20));
        let fresh = self.t.rng.range(4, 3_000);
        Reply {
            message_id,
            request_id,
            input_tokens: self.t.rng.range(2, 12),
            cache_read: self.context_tokens.saturating_sub(fresh),
        }
    }

    /// One assistant entry holding `block` (a JSON object).
    fn assistant(&mut self, out: &mut Vec<u8>, reply: &Reply, block: &[u8], output_tokens: u64) {
        let id = uuid(&mut self.t.rng);
        self.open(out, &id);
        out.extend_from_slice(b"\"message\":{\"model\":");
        jstr(out, self.model);
        out.extend_from_slice(b",\"id\":\"");
        out.extend_from_slice(reply.message_id.as_bytes());
        out.extend_from_slice(b"\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
        out.extend_from_slice(block);
        let created = self.t.rng.range(0, 4_000);
        out.extend_from_slice(
            format!(
                "],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{},\
                 \"cache_creation_input_tokens\":{created},\"cache_read_input_tokens\":{},\
                 \"cache_creation\":{{\"ephemeral_5m_input_tokens\":{created},\
                 \"ephemeral_1h_input_tokens\":0}},\"output_tokens\":{output_tokens},\
                 \"service_tier\":\"standard\"}}}},\"requestId\":\"{}\",\"type\":\"assistant\",",
                reply.input_tokens, reply.cache_read, reply.request_id
            )
            .as_bytes(),
        );
        self.id_and_time(out, &id);
        out.extend_from_slice(b"}\n");
        self.context_tokens += output_tokens;
    }

    fn thinking(&mut self, out: &mut Vec<u8>, reply: &Reply, p: f64) {
        if !self.t.rng.chance(p) {
            return;
        }
        let len = self.t.rng.log_range(80.0, 2_500.0) as usize;
        let thought = self.t.prose(len);
        // Real signatures grow with the thought: about 400 characters plus 1.2 per character.
        let sig_len = (400 + len * 6 / 5).min(8_000);
        let mut block = b"{\"type\":\"thinking\",\"thinking\":".to_vec();
        jstr(&mut block, &thought);
        block.extend_from_slice(b",\"signature\":\"");
        block.extend_from_slice(base64(&mut self.t.rng, sig_len, false).as_bytes());
        block.extend_from_slice(b"\"}");
        self.assistant(out, reply, &block, len as u64 / 4);
    }

    fn text(&mut self, out: &mut Vec<u8>, reply: &Reply, text: &str) {
        let mut block = b"{\"type\":\"text\",\"text\":".to_vec();
        jstr(&mut block, text);
        block.push(b'}');
        self.assistant(out, reply, &block, text.len() as u64 / 4);
    }

    // -- tools ----------------------------------------------------------------------------------

    fn tool_use(&mut self, out: &mut Vec<u8>, reply: &Reply) -> Call {
        let id = format!("toolu_01{}", alnum(&mut self.t.rng, 22));
        let file = format!("{}/{}", self.cwd, self.t.rng.pick(FILES));
        let mut input = Vec::new();
        let (tool, a, b) = match self.t.rng.below(20) {
            0..=6 => {
                input.extend_from_slice(b"{\"file_path\":");
                jstr(&mut input, &file);
                input.push(b'}');
                ("Read", String::new(), String::new())
            }
            7..=10 => {
                let (old, new) = (
                    self.t.code_between(40.0, 900.0),
                    self.t.code_between(40.0, 1_100.0),
                );
                input.extend_from_slice(b"{\"file_path\":");
                jstr(&mut input, &file);
                input.extend_from_slice(b",\"old_string\":");
                jstr(&mut input, &old);
                input.extend_from_slice(b",\"new_string\":");
                jstr(&mut input, &new);
                input.push(b'}');
                ("Edit", old, new)
            }
            11 => {
                let content = self.t.code_between(300.0, 8_000.0);
                input.extend_from_slice(b"{\"file_path\":");
                jstr(&mut input, &file);
                input.extend_from_slice(b",\"content\":");
                jstr(&mut input, &content);
                input.push(b'}');
                ("Write", content, String::new())
            }
            12..=15 => {
                let cmd = self.t.rng.pick(&[
                    "npm test",
                    "cargo test --workspace 2>&1 | tail -40",
                    "git status --short",
                    "git diff --stat",
                    "go test ./...",
                    "ls -la src",
                    "python3 -m pytest -q tests/",
                ]);
                input.extend_from_slice(b"{\"command\":");
                jstr(&mut input, cmd);
                input.extend_from_slice(b",\"description\":");
                let d = self.t.prose(30);
                jstr(&mut input, d.trim_end_matches('.'));
                input.push(b'}');
                ("Bash", cmd.to_string(), String::new())
            }
            16 => {
                let pattern = format!("{}\\s*\\(", self.t.rng.pick(IDENTS));
                input.extend_from_slice(b"{\"pattern\":");
                jstr(&mut input, &pattern);
                input.extend_from_slice(b",\"path\":");
                jstr(&mut input, &self.cwd);
                input.extend_from_slice(b",\"output_mode\":\"content\",\"-n\":true}");
                ("Grep", pattern, String::new())
            }
            17 => {
                let pattern = self.t.rng.pick(&["**/*.ts", "src/**/*.rs", "**/*.test.js"]);
                input.extend_from_slice(b"{\"pattern\":");
                jstr(&mut input, pattern);
                input.push(b'}');
                ("Glob", pattern.to_string(), String::new())
            }
            _ => {
                let todos = self.todos();
                input.extend_from_slice(b"{\"todos\":");
                input.extend_from_slice(todos.as_bytes());
                input.push(b'}');
                ("TodoWrite", todos, String::new())
            }
        };
        let mut block = b"{\"type\":\"tool_use\",\"id\":\"".to_vec();
        block.extend_from_slice(id.as_bytes());
        block.extend_from_slice(b"\",\"name\":");
        jstr(&mut block, tool);
        block.extend_from_slice(b",\"input\":");
        block.extend_from_slice(&input);
        block.push(b'}');
        self.assistant(out, reply, &block, input.len() as u64 / 4 + 20);
        Call {
            id,
            tool,
            file,
            a,
            b,
        }
    }

    /// The user entry answering `call`: the `tool_result` block and the tool's own record of
    /// what it did (`toolUseResult`), which repeats the content in another shape.
    fn tool_result(&mut self, out: &mut Vec<u8>, call: Call) {
        let id = uuid(&mut self.t.rng);
        self.open(out, &id);
        out.extend_from_slice(
            b"\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"",
        );
        out.extend_from_slice(call.id.as_bytes());
        out.extend_from_slice(b"\",\"type\":\"tool_result\",\"content\":");
        let error = call.tool != "TodoWrite" && self.t.rng.chance(0.05);
        let mut record = Vec::new();
        if error {
            let e = match call.tool {
                "Bash" => format!(
                    "Exit code 1\n{}\nerror: {} failed",
                    self.t.test_lines(),
                    call.a
                ),
                _ => "<tool_use_error>File does not exist.</tool_use_error>".to_string(),
            };
            jstr(out, &e);
            out.extend_from_slice(b",\"is_error\":true");
            jstr(&mut record, &format!("Error: {e}"));
        } else {
            let content = self.result(&call, &mut record);
            jstr(out, &content);
        }
        out.extend_from_slice(b"}]},");
        self.id_and_time(out, &id);
        out.extend_from_slice(b",\"toolUseResult\":");
        out.extend_from_slice(&record);
        out.extend_from_slice(b"}\n");
        self.context_tokens += record.len() as u64 / 8;
    }

    /// The `tool_result` content of a call that worked; its `toolUseResult` into `record`.
    fn result(&mut self, call: &Call, record: &mut Vec<u8>) -> String {
        match call.tool {
            "Read" => {
                let len = if self.t.rng.chance(0.01) {
                    self.t.rng.log_range(20_000.0, 150_000.0)
                } else {
                    self.t.rng.log_range(300.0, 12_000.0)
                } as usize;
                let code = self.t.code(len);
                let lines = code.lines().count();
                record.extend_from_slice(b"{\"type\":\"text\",\"file\":{\"filePath\":");
                jstr(record, &call.file);
                record.extend_from_slice(b",\"content\":");
                jstr(record, &code);
                record.extend_from_slice(
                    format!(",\"numLines\":{lines},\"startLine\":1,\"totalLines\":{lines}}}}}")
                        .as_bytes(),
                );
                numbered(&code, 1)
            }
            "Edit" => {
                let at = self.t.rng.range(1, 400) as usize;
                let original = self.t.code_between(800.0, 14_000.0);
                record.extend_from_slice(b"{\"filePath\":");
                jstr(record, &call.file);
                record.extend_from_slice(b",\"oldString\":");
                jstr(record, &call.a);
                record.extend_from_slice(b",\"newString\":");
                jstr(record, &call.b);
                record.extend_from_slice(b",\"originalFile\":");
                jstr(record, &original);
                let (old_lines, new_lines) = (call.a.lines().count(), call.b.lines().count());
                record.extend_from_slice(
                    format!(
                        ",\"structuredPatch\":[{{\"oldStart\":{at},\"oldLines\":{old_lines},\
                         \"newStart\":{at},\"newLines\":{new_lines},\"lines\":["
                    )
                    .as_bytes(),
                );
                let patch = call
                    .a
                    .lines()
                    .map(|l| format!("-{l}"))
                    .chain(call.b.lines().map(|l| format!("+{l}")));
                for (i, line) in patch.enumerate() {
                    if i > 0 {
                        record.push(b',');
                    }
                    jstr(record, &line);
                }
                record.extend_from_slice(b"]}],\"userModified\":false,\"replaceAll\":false}");
                format!(
                    "The file {} has been updated. Here's the result of running `cat -n` on a \
                     snippet of the edited file:\n{}",
                    call.file,
                    numbered(&call.b, at)
                )
            }
            "Write" => {
                record.extend_from_slice(b"{\"type\":\"create\",\"filePath\":");
                jstr(record, &call.file);
                record.extend_from_slice(b",\"content\":");
                jstr(record, &call.a);
                record.extend_from_slice(b",\"structuredPatch\":[]}");
                format!("File created successfully at: {}", call.file)
            }
            "Bash" => {
                let mut stdout = format!("> {}\n", call.a);
                stdout.push_str(&self.t.test_lines());
                if self.t.rng.chance(0.2) {
                    // A long build log.
                    let len = self.t.rng.log_range(2_000.0, 40_000.0) as usize;
                    stdout.push_str(&self.t.code(len));
                }
                stdout.push_str(&format!(
                    "\n Tests  {} passed ({})",
                    self.t.rng.range(1, 300),
                    self.t.rng.range(1, 300)
                ));
                record.extend_from_slice(b"{\"stdout\":");
                jstr(record, &stdout);
                record.extend_from_slice(
                    b",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}",
                );
                stdout
            }
            "Grep" => {
                let mut s = String::new();
                let n = self.t.rng.range(1, 40);
                for _ in 0..n {
                    let line = self.t.code(60);
                    s.push_str(&format!(
                        "{}/{}:{}:{}\n",
                        self.cwd,
                        self.t.rng.pick(FILES),
                        self.t.rng.range(1, 900),
                        line.lines().next().unwrap_or("")
                    ));
                }
                record.extend_from_slice(
                    b"{\"mode\":\"content\",\"numFiles\":0,\"filenames\":[],\"content\":",
                );
                jstr(record, &s);
                record.extend_from_slice(format!(",\"numLines\":{n}}}").as_bytes());
                s
            }
            "Glob" => {
                let n = self.t.rng.range(1, 60) as usize;
                let files: Vec<String> = (0..n)
                    .map(|_| format!("{}/{}", self.cwd, self.t.rng.pick(FILES)))
                    .collect();
                record.extend_from_slice(b"{\"filenames\":[");
                for (i, f) in files.iter().enumerate() {
                    if i > 0 {
                        record.push(b',');
                    }
                    jstr(record, f);
                }
                record.extend_from_slice(
                    format!(
                        "],\"durationMs\":{},\"numFiles\":{n},\"truncated\":false}}",
                        self.t.rng.range(2, 400)
                    )
                    .as_bytes(),
                );
                files.join("\n")
            }
            _ => {
                record.extend_from_slice(b"{\"oldTodos\":[],\"newTodos\":");
                record.extend_from_slice(call.a.as_bytes());
                record.push(b'}');
                "Todos have been modified successfully. Ensure that you continue to use the todo \
                 list to track your progress. Please proceed with the current tasks if applicable"
                    .to_string()
            }
        }
    }

    /// A TodoWrite list (JSON array).
    fn todos(&mut self) -> String {
        let mut s = Vec::from(&b"["[..]);
        for i in 0..self.t.rng.range(2, 7) {
            if i > 0 {
                s.push(b',');
            }
            let c = self.t.prose(50);
            let c = c.trim_end_matches('.');
            s.extend_from_slice(b"{\"content\":");
            jstr(&mut s, c);
            let st = self.t.rng.pick(&["pending", "in_progress", "completed"]);
            s.extend_from_slice(format!(",\"status\":\"{st}\",\"activeForm\":").as_bytes());
            jstr(&mut s, &format!("Working on: {c}"));
            s.push(b'}');
        }
        s.push(b']');
        String::from_utf8(s).expect("valid UTF-8")
    }
}
