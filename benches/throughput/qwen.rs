//! Qwen Code session JSONL (FORMATS.md section 5): turns of user prompt, assistant records
//! with thoughts and tool calls, tool results, system records; the occasional rewind makes a
//! branch.

use crate::text::{FILES, IDENTS, Rng, Text, jstr, mix, timestamp, uuid};

pub const PROJECTS: &[(&str, &str)] = &[
    ("/home/dana/projects/pomodoro", "fix/timer-tests"),
    (
        "/Users/andy/workspace/projects/qwen-code",
        "feat/session-management",
    ),
    ("/home/李明/项目/番茄钟", "功能/声音"),
    ("/srv/app/backend", "main"),
    ("/home/sam/src/rust-analyzer-plugins", "perf/interning"),
    ("/Users/maría/dev/tienda-web", "develop"),
    ("/home/ci/work/monorepo/packages/core", "release/2.3"),
    (
        "/home/dana/projects/pomodoro/.worktrees/sound",
        "feat/sound",
    ),
    ("/opt/data/pipelines", "main"),
    ("/home/kenji/コード/ゲーム", "main"),
    ("C:/Users/Olek/Projects/invoice-gen", "bugfix/rounding"),
    ("/home/user/projects/api-gateway", "feat/rate-limit"),
];
const VERSIONS: &[&str] = &["0.4.1", "0.5.2", "0.15.6", "2.0.43"];
const MODELS: &[&str] = &["qwen3-coder-plus", "qwen3-coder-flash", "qwen3-max"];

pub struct QwenGen {
    pub t: Text,
    pub session_id: String,
    pub cwd: String,
    version: &'static str,
    branch: &'static str,
    model: &'static str,
    /// Milliseconds since the Unix epoch.
    now: u64,
    last: Option<String>,
    /// Recent record ids, for rewinds (branches).
    recent: Vec<String>,
    prompt_tokens: u64,
    calls: u64,
    /// The tool name and file of the call awaiting its result.
    pending_tool: Option<(&'static str, String)>,
}

impl QwenGen {
    pub fn new(seed: u64, index: u64) -> QwenGen {
        let mut rng = Rng::new(seed);
        let session_id = uuid(&mut rng);
        let (cwd, branch) = PROJECTS[(index as usize * 7 + rng.below(3) as usize) % PROJECTS.len()];
        let cjk = cwd.contains("李明") || cwd.contains("コード") || rng.chance(0.05);
        QwenGen {
            session_id,
            cwd: cwd.to_string(),
            version: rng.pick(VERSIONS),
            branch,
            model: rng.pick(MODELS),
            // Somewhere in 2025.
            now: 1_735_689_600_000 + rng.below(330 * 86_400_000),
            last: None,
            recent: Vec::new(),
            prompt_tokens: rng.range(6_000, 14_000),
            calls: 0,
            pending_tool: None,
            t: Text { rng, cjk },
        }
    }

    /// Appends one turn (user prompt, model work, answer) as JSONL; returns the record count.
    pub fn turn(&mut self, out: &mut Vec<u8>) -> u64 {
        let mut n = 0;
        if self.last.is_none() {
            if self.t.rng.chance(0.3) {
                self.system_slash(out, "/init");
                n += 2;
            }
        } else if self.t.rng.chance(0.015) && self.recent.len() > 4 {
            self.system_rewind(out);
            n += 1;
        } else if self.t.rng.chance(0.01) {
            self.system_compression(out);
            n += 1;
        }
        self.user(out);
        n += 1;
        let steps = match self.t.rng.below(10) {
            0..=2 => 0,
            3..=6 => self.t.rng.range(1, 3),
            _ => self.t.rng.range(3, 9),
        };
        for _ in 0..steps {
            n += self.assistant(out, true);
            n += self.tool_result(out);
        }
        n += self.assistant(out, false);
        if self.t.rng.chance(0.35) {
            self.system_telemetry(out);
            n += 1;
        }
        if self.t.rng.chance(0.03) {
            self.system_title(out);
            n += 1;
        }
        n
    }

    // -- record envelope ------------------------------------------------------------------------

    /// Writes `{"uuid":..,"parentUuid":..,...,"gitBranch":..` (unclosed) and advances the chain.
    fn open(&mut self, out: &mut Vec<u8>, ty: &str, subtype: Option<&str>) -> String {
        let id = uuid(&mut self.t.rng);
        let parent = self.last.clone();
        self.open_with(out, &id, parent.as_deref(), ty, subtype);
        self.advance(id.clone());
        id
    }

    fn open_with(
        &mut self,
        out: &mut Vec<u8>,
        id: &str,
        parent: Option<&str>,
        ty: &str,
        subtype: Option<&str>,
    ) {
        self.now += self.t.rng.range(5, 40_000);
        out.extend_from_slice(b"{\"uuid\":\"");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b"\",\"parentUuid\":");
        match parent {
            Some(p) => jstr(out, p),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"sessionId\":\"");
        out.extend_from_slice(self.session_id.as_bytes());
        out.extend_from_slice(b"\",\"timestamp\":\"");
        out.extend_from_slice(timestamp(self.now).as_bytes());
        out.extend_from_slice(b"\",\"type\":");
        jstr(out, ty);
        if let Some(s) = subtype {
            out.extend_from_slice(b",\"subtype\":");
            jstr(out, s);
        }
        out.extend_from_slice(b",\"cwd\":");
        jstr(out, &self.cwd);
        out.extend_from_slice(b",\"version\":");
        jstr(out, self.version);
        out.extend_from_slice(b",\"gitBranch\":");
        jstr(out, self.branch);
    }

    fn advance(&mut self, id: String) {
        if self.recent.len() >= 64 {
            self.recent.drain(..32);
        }
        self.recent.push(id.clone());
        self.last = Some(id);
    }

    // -- records --------------------------------------------------------------------------------

    fn user(&mut self, out: &mut Vec<u8>) {
        self.open(out, "user", None);
        out.extend_from_slice(b",\"message\":{\"role\":\"user\",\"parts\":[{\"text\":");
        let len = if self.t.rng.chance(0.05) {
            // A pasted stack trace or file.
            self.t.rng.log_range(1_500.0, 12_000.0) as usize
        } else {
            self.t.rng.log_range(20.0, 600.0) as usize
        };
        let text = if len > 1_500 {
            let mut t = self.t.prose(120);
            t.push_str("\n\n```\n");
            t.push_str(&self.t.code(len));
            t.push_str("```\n");
            t
        } else {
            self.t.prose(len)
        };
        jstr(out, &text);
        out.extend_from_slice(b"}]}}\n");
        self.prompt_tokens += (len as u64) / 3 + 20;
    }

    /// An assistant record: thought, text, maybe a function call; usage metadata. Returns the
    /// number of records (a streamed answer is sometimes split over records sharing one uuid).
    fn assistant(&mut self, out: &mut Vec<u8>, call: bool) -> u64 {
        let mut n = 1;
        let thought = self.t.rng.chance(0.6).then(|| {
            let len = self.t.rng.log_range(60.0, 900.0) as usize;
            self.t.prose(len)
        });
        let id = uuid(&mut self.t.rng);
        let parent = self.last.clone();
        if let Some(t) = &thought
            && self.t.rng.chance(0.04)
        {
            // Qwen writes the thought first, then the rest under the same uuid.
            self.open_with(out, &id, parent.as_deref(), "assistant", None);
            out.extend_from_slice(b",\"model\":");
            jstr(out, self.model);
            out.extend_from_slice(b",\"message\":{\"role\":\"model\",\"parts\":[{\"text\":");
            jstr(out, t);
            out.extend_from_slice(b",\"thought\":true}]}}\n");
            n += 1;
        }
        self.open_with(out, &id, parent.as_deref(), "assistant", None);
        self.advance(id);
        out.extend_from_slice(b",\"model\":");
        jstr(out, self.model);
        out.extend_from_slice(b",\"message\":{\"role\":\"model\",\"parts\":[");
        let mut first = true;
        if let Some(t) = &thought
            && n == 1
        {
            out.extend_from_slice(b"{\"text\":");
            jstr(out, t);
            out.extend_from_slice(b",\"thought\":true}");
            first = false;
        }
        if !call || self.t.rng.chance(0.5) {
            if !first {
                out.push(b',');
            }
            let len = if call {
                self.t.rng.log_range(20.0, 200.0)
            } else {
                self.t.rng.log_range(40.0, 1_800.0)
            } as usize;
            let mut text = self.t.prose(len);
            if !call && self.t.rng.chance(0.15) {
                text.push_str("\n\n```\n");
                let len = self.t.rng.log_range(200.0, 3_000.0) as usize;
                text.push_str(&self.t.code(len));
                text.push_str("```");
            }
            out.extend_from_slice(b"{\"text\":");
            jstr(out, &text);
            out.push(b'}');
            first = false;
        }
        if call {
            if !first {
                out.push(b',');
            }
            self.calls += 1;
            let (name, args) = self.tool_call();
            out.extend_from_slice(b"{\"functionCall\":{\"id\":\"");
            out.extend_from_slice(self.call_id().as_bytes());
            out.extend_from_slice(b"\",\"name\":");
            jstr(out, name);
            out.extend_from_slice(b",\"args\":");
            out.extend_from_slice(args.as_bytes());
            out.extend_from_slice(b"}}");
        }
        out.extend_from_slice(b"]}");
        let candidates = self.t.rng.range(20, 900);
        let cached = self.prompt_tokens - self.prompt_tokens % 256;
        let thoughts = thought.as_ref().map(|t| t.len() as u64 / 4);
        let total = self.prompt_tokens + candidates + thoughts.unwrap_or(0);
        out.extend_from_slice(
            format!(
                ",\"usageMetadata\":{{\"promptTokenCount\":{},\"candidatesTokenCount\":{},\
                 \"totalTokenCount\":{},\"cachedContentTokenCount\":{}",
                self.prompt_tokens, candidates, total, cached
            )
            .as_bytes(),
        );
        if let Some(t) = thoughts {
            out.extend_from_slice(format!(",\"thoughtsTokenCount\":{t}").as_bytes());
        }
        out.extend_from_slice(b"},\"contextWindowSize\":1000000}\n");
        self.prompt_tokens += candidates;
        n
    }

    fn call_id(&self) -> String {
        format!("call_{:016x}", mix(self.now, self.calls))
    }

    /// The tool of the current call and its `args` object (JSON).
    fn tool_call(&mut self) -> (&'static str, String) {
        let file = format!("{}/{}", self.cwd, self.t.rng.pick(FILES));
        let mut args = Vec::new();
        let name = match self.t.rng.below(20) {
            0..=6 => {
                args.extend_from_slice(b"{\"absolute_path\":");
                jstr(&mut args, &file);
                args.push(b'}');
                "read_file"
            }
            7..=11 => {
                let cmd = self.t.rng.pick(&[
                    "npm test",
                    "cargo test --workspace",
                    "git status --short",
                    "go test ./...",
                    "ls -la src",
                    "grep -rn \"TODO\" src | head -20",
                    "python3 -m pytest -q tests/",
                ]);
                args.extend_from_slice(b"{\"command\":");
                jstr(&mut args, cmd);
                args.extend_from_slice(b",\"description\":");
                let d = self.t.prose(40);
                jstr(&mut args, &d);
                args.push(b'}');
                "run_shell_command"
            }
            12..=14 => {
                let (old_len, new_len) = (
                    self.t.rng.log_range(40.0, 1_000.0) as usize,
                    self.t.rng.log_range(40.0, 1_200.0) as usize,
                );
                args.extend_from_slice(b"{\"file_path\":");
                jstr(&mut args, &file);
                args.extend_from_slice(b",\"old_string\":");
                let s = self.t.code(old_len);
                jstr(&mut args, &s);
                args.extend_from_slice(b",\"new_string\":");
                let s = self.t.code(new_len);
                jstr(&mut args, &s);
                args.push(b'}');
                "replace"
            }
            15 => {
                args.extend_from_slice(b"{\"file_path\":");
                jstr(&mut args, &file);
                args.extend_from_slice(b",\"content\":");
                let len = self.t.rng.log_range(200.0, 6_000.0) as usize;
                let s = self.t.code(len);
                jstr(&mut args, &s);
                args.push(b'}');
                "write_file"
            }
            16..=17 => {
                args.extend_from_slice(b"{\"pattern\":");
                let p = format!("{}\\s*\\(", self.t.rng.pick(IDENTS));
                jstr(&mut args, &p);
                args.extend_from_slice(b",\"path\":");
                jstr(&mut args, &self.cwd);
                args.push(b'}');
                "search_file_content"
            }
            18 => {
                args.extend_from_slice(b"{\"path\":");
                jstr(&mut args, &self.cwd);
                args.push(b'}');
                "list_directory"
            }
            _ => {
                args.extend_from_slice(b"{\"todos\":[");
                for i in 0..self.t.rng.range(2, 6) {
                    if i > 0 {
                        args.push(b',');
                    }
                    let c = self.t.prose(60);
                    args.extend_from_slice(
                        format!("{{\"id\":\"{}\",\"content\":", i + 1).as_bytes(),
                    );
                    jstr(&mut args, &c);
                    let st = self.t.rng.pick(&["pending", "in_progress", "completed"]);
                    args.extend_from_slice(format!(",\"status\":\"{st}\"}}").as_bytes());
                }
                args.extend_from_slice(b"]}");
                "todo_write"
            }
        };
        // Remember the name for the result record.
        self.pending_tool = Some((name, file));
        (name, String::from_utf8(args).expect("valid UTF-8"))
    }

    fn tool_result(&mut self, out: &mut Vec<u8>) -> u64 {
        let (name, file) = self
            .pending_tool
            .take()
            .unwrap_or(("read_file", String::new()));
        let call_id = self.call_id();
        let error = self.t.rng.chance(0.06);
        let (output, display) = if error {
            let e = format!("File not found: {file}");
            (e.clone(), e)
        } else {
            match name {
                "read_file" => {
                    let len = if self.t.rng.chance(0.005) {
                        self.t.rng.log_range(20_000.0, 150_000.0)
                    } else {
                        self.t.rng.log_range(150.0, 4_500.0)
                    } as usize;
                    (self.t.code(len), String::new())
                }
                "run_shell_command" => {
                    let out = self.shell_output();
                    let tail: String = out
                        .chars()
                        .rev()
                        .take(300)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    (out, tail)
                }
                "replace" | "write_file" => {
                    let diff = self.t.diff(&file);
                    (
                        format!("Successfully modified file: {file} (1 replacements)."),
                        diff,
                    )
                }
                "search_file_content" => {
                    let mut s = String::from("Found matches:\n---\n");
                    for _ in 0..self.t.rng.range(1, 30) {
                        let l = self.t.code(80);
                        s.push_str(&format!(
                            "File: {}\nL{}: {}\n---\n",
                            self.t.rng.pick(FILES),
                            self.t.rng.range(1, 900),
                            l.lines().next().unwrap_or("")
                        ));
                    }
                    let d = format!("Found {} matches", s.matches("File:").count());
                    (s, d)
                }
                "list_directory" => {
                    let mut s = format!("Directory listing for {}:\n", self.cwd);
                    for _ in 0..self.t.rng.range(3, 40) {
                        s.push_str(self.t.rng.pick(FILES));
                        s.push('\n');
                    }
                    let d = format!("Listed {} item(s).", s.lines().count() - 1);
                    (s, d)
                }
                _ => (
                    "Todos have been modified successfully.".to_string(),
                    String::new(),
                ),
            }
        };
        self.open(out, "tool_result", None);
        out.extend_from_slice(
            b",\"message\":{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"",
        );
        out.extend_from_slice(call_id.as_bytes());
        out.extend_from_slice(b"\",\"name\":");
        jstr(out, name);
        out.extend_from_slice(if error {
            b",\"response\":{\"error\":"
        } else {
            b",\"response\":{\"output\":"
        });
        jstr(out, &output);
        out.extend_from_slice(b"}}}]},\"toolCallResult\":{\"callId\":\"");
        out.extend_from_slice(call_id.as_bytes());
        out.extend_from_slice(if error {
            b"\",\"status\":\"error\",\"resultDisplay\":"
        } else {
            b"\",\"status\":\"success\",\"resultDisplay\":"
        });
        if (name == "replace" || name == "write_file") && !error {
            out.extend_from_slice(b"{\"fileDiff\":");
            jstr(out, &display);
            out.extend_from_slice(b",\"fileName\":");
            jstr(out, file.rsplit('/').next().unwrap_or(&file));
            out.push(b'}');
        } else {
            jstr(out, &display);
        }
        if error {
            out.extend_from_slice(b",\"error\":{},\"errorType\":\"file_not_found\"");
        }
        out.extend_from_slice(b"}}\n");
        self.prompt_tokens += output.len() as u64 / 4;
        1
    }

    fn system_rewind(&mut self, out: &mut Vec<u8>) {
        // Branch: the rewind record hangs below an earlier record, not below the last one.
        let back = self.t.rng.range(2, self.recent.len().min(12) as u64) as usize;
        let parent = self.recent[self.recent.len() - back].clone();
        let id = uuid(&mut self.t.rng);
        self.open_with(out, &id, Some(&parent), "system", Some("rewind"));
        out.extend_from_slice(
            format!(",\"systemPayload\":{{\"truncatedCount\":{back}}}}}\n").as_bytes(),
        );
        self.advance(id);
    }

    fn system_compression(&mut self, out: &mut Vec<u8>) {
        self.open(out, "system", Some("chat_compression"));
        let summary = format!(
            "<state_snapshot>\n<overall_goal>{}</overall_goal>\n<key_knowledge>{}</key_knowledge>\n<recent_actions>{}</recent_actions>\n</state_snapshot>",
            self.t.prose(120),
            self.t.prose(600),
            self.t.prose(400)
        );
        let new = self.t.rng.range(4_000, 12_000);
        out.extend_from_slice(
            format!(
                ",\"systemPayload\":{{\"info\":{{\"originalTokenCount\":{},\"newTokenCount\":{new},\"compressionStatus\":1}},\"compressedHistory\":[{{\"role\":\"user\",\"parts\":[{{\"text\":",
                self.prompt_tokens
            )
            .as_bytes(),
        );
        jstr(out, &summary);
        out.extend_from_slice(
            b"}]},{\"role\":\"model\",\"parts\":[{\"text\":\"Got it. Thanks for the additional context!\"}]}],\"summary\":",
        );
        jstr(out, &summary);
        out.extend_from_slice(b"}}\n");
        self.prompt_tokens = new;
    }

    fn system_slash(&mut self, out: &mut Vec<u8>, cmd: &str) {
        for phase in ["invocation", "result"] {
            self.open(out, "system", Some("slash_command"));
            out.extend_from_slice(b",\"systemPayload\":{\"phase\":");
            jstr(out, phase);
            out.extend_from_slice(b",\"rawCommand\":");
            jstr(out, cmd);
            out.extend_from_slice(b"}}\n");
        }
    }

    fn system_telemetry(&mut self, out: &mut Vec<u8>) {
        self.open(out, "system", Some("ui_telemetry"));
        let ts = timestamp(self.now);
        let (i, o) = (self.prompt_tokens, self.t.rng.range(10, 900));
        out.extend_from_slice(
            format!(
                ",\"systemPayload\":{{\"uiEvent\":{{\"event.name\":\"api_response\",\"event.timestamp\":\"{ts}\",\"response_id\":\"chatcmpl-{:08x}\",\"model\":\"{}\",\"status_code\":200,\"duration_ms\":{},\"input_token_count\":{i},\"output_token_count\":{o},\"cached_content_token_count\":{},\"thoughts_token_count\":0,\"tool_token_count\":0,\"total_token_count\":{},\"prompt_id\":\"{:012x}#{}\",\"auth_type\":\"openai\"}}}}}}\n",
                self.t.rng.next() as u32,
                self.model,
                self.t.rng.range(300, 30_000),
                i - i % 256,
                i + o,
                self.t.rng.next() >> 16,
                self.t.rng.range(1, 40)
            )
            .as_bytes(),
        );
    }

    fn system_title(&mut self, out: &mut Vec<u8>) {
        self.open(out, "system", Some("custom_title"));
        let t = self.t.prose(40);
        out.extend_from_slice(b",\"systemPayload\":{\"customTitle\":");
        jstr(out, t.trim_end_matches('.'));
        out.extend_from_slice(b",\"titleSource\":\"auto\"}}\n");
    }

    fn shell_output(&mut self) -> String {
        let mut s = String::from("Command: npm test\nDirectory: (root)\nStdout: \n");
        s.push_str(&self.t.test_lines());
        let code = self.t.rng.below(2);
        s.push_str(&format!(
            "\n Tests  {} passed\nStderr: (empty)\nError: (none)\nExit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: {}",
            self.t.rng.range(1, 300),
            self.t.rng.range(1000, 99999)
        ));
        s
    }
}
