//! Codex CLI rollout JSONL (FORMATS.md section 10), written directly as Codex 0.4x writes it
//! (../shared/samples/codex): `session_meta` first, then per turn the user's message as a
//! `response_item` and an `event_msg` `user_message`, a `turn_context` before each model
//! request, `token_count` events, reasoning (an `agent_reasoning` event and a `reasoning`
//! item with its summary and opaque `encrypted_content`), `shell` function calls and
//! `apply_patch` custom tool calls with their outputs (JSON documents inside JSON strings), and
//! the answer as an `agent_message` event and an assistant `message` item.

use crate::qwen::PROJECTS;
use crate::text::{FILES, IDENTS, Rng, Text, alnum, base64, jstr, timestamp, uuid_v7};

const VERSIONS: &[&str] = &["0.47.0", "0.53.0", "0.58.0", "0.63.0"];
const MODELS: &[&str] = &["gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max"];

pub struct CodexGen {
    t: Text,
    pub session_id: String,
    pub cwd: String,
    /// When the session started (ms since the epoch): the file name's time.
    pub started: u64,
    version: &'static str,
    model: &'static str,
    now: u64,
    turns: u64,
    input_tokens: u64,
    output_tokens: u64,
}

impl CodexGen {
    pub fn new(seed: u64) -> CodexGen {
        let mut rng = Rng::new(seed);
        let (cwd, _) = PROJECTS[rng.below(PROJECTS.len() as u64) as usize];
        let now = 1_735_689_600_000 + rng.below(330 * 86_400_000);
        let session_id = uuid_v7(&mut rng, now);
        let cjk = cwd.contains("李明") || cwd.contains("コード");
        CodexGen {
            session_id,
            cwd: cwd.to_string(),
            started: now,
            version: rng.pick(VERSIONS),
            model: rng.pick(MODELS),
            now,
            turns: 0,
            input_tokens: rng.range(8_000, 14_000),
            output_tokens: 0,
            t: Text { rng, cjk },
        }
    }

    /// Appends one turn (the first one starts with `session_meta` and the environment context).
    pub fn turn(&mut self, out: &mut Vec<u8>) {
        if self.turns == 0 {
            self.meta(out);
        }
        self.turns += 1;
        let len = if self.t.rng.chance(0.05) {
            self.t.rng.log_range(1_500.0, 12_000.0) as usize
        } else {
            self.t.rng.log_range(20.0, 600.0) as usize
        };
        let prompt = if len > 1_500 {
            let mut p = self.t.prose(120);
            p.push_str("\n\n```\n");
            p.push_str(&self.t.code(len));
            p.push_str("```\n");
            p
        } else {
            self.t.prose(len)
        };
        self.message(out, "user", "input_text", &prompt);
        self.line(out, "event_msg");
        out.extend_from_slice(b"{\"type\":\"user_message\",\"message\":");
        jstr(out, &prompt);
        out.extend_from_slice(b",\"kind\":\"plain\"}}\n");
        self.input_tokens += prompt.len() as u64 / 3;
        let steps = match self.t.rng.below(10) {
            0..=1 => 0,
            2..=5 => self.t.rng.range(1, 3),
            _ => self.t.rng.range(3, 12),
        };
        for _ in 0..steps {
            self.turn_context(out);
            self.token_count(out);
            self.reasoning(out);
            if self.t.rng.chance(0.25) {
                self.apply_patch(out);
            } else {
                self.shell(out);
            }
        }
        self.turn_context(out);
        self.reasoning(out);
        let len = self.t.rng.log_range(60.0, 2_500.0) as usize;
        let mut answer = self.t.prose(len);
        if self.t.rng.chance(0.2) {
            answer.push_str("\n\n```\n");
            let len = self.t.rng.log_range(200.0, 3_000.0) as usize;
            answer.push_str(&self.t.code(len));
            answer.push_str("```");
        }
        self.line(out, "event_msg");
        out.extend_from_slice(b"{\"type\":\"agent_message\",\"message\":");
        jstr(out, &answer);
        out.extend_from_slice(b"}}\n");
        self.message(out, "assistant", "output_text", &answer);
        self.output_tokens += answer.len() as u64 / 4;
        self.token_count(out);
    }

    /// `{"timestamp":..,"type":..,"payload":` (unclosed).
    fn line(&mut self, out: &mut Vec<u8>, kind: &str) {
        self.now += self.t.rng.range(1, 4_000);
        out.extend_from_slice(b"{\"timestamp\":\"");
        out.extend_from_slice(timestamp(self.now).as_bytes());
        out.extend_from_slice(b"\",\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"payload\":");
    }

    fn meta(&mut self, out: &mut Vec<u8>) {
        self.line(out, "session_meta");
        out.extend_from_slice(b"{\"id\":\"");
        out.extend_from_slice(self.session_id.as_bytes());
        out.extend_from_slice(b"\",\"timestamp\":\"");
        out.extend_from_slice(timestamp(self.started).as_bytes());
        out.extend_from_slice(b"\",\"cwd\":");
        jstr(out, &self.cwd);
        out.extend_from_slice(b",\"originator\":\"codex_cli_rs\",\"cli_version\":");
        jstr(out, self.version);
        out.extend_from_slice(
            format!(
                ",\"instructions\":null,\"source\":\"cli\",\"model_provider\":\"openai\",\
                 \"git\":{{\"commit_hash\":\"{:016x}{:016x}{:08x}\",\"branch\":\"main\",\
                 \"repository_url\":\"git@github.com:example/app.git\"}}}}}}\n",
                self.t.rng.next(),
                self.t.rng.next(),
                self.t.rng.next() as u32
            )
            .as_bytes(),
        );
        let env = format!(
            "<environment_context>\n  <cwd>{}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>",
            self.cwd
        );
        self.message(out, "user", "input_text", &env);
    }

    fn message(&mut self, out: &mut Vec<u8>, role: &str, part: &str, text: &str) {
        self.line(out, "response_item");
        out.extend_from_slice(b"{\"type\":\"message\",\"role\":\"");
        out.extend_from_slice(role.as_bytes());
        out.extend_from_slice(b"\",\"content\":[{\"type\":\"");
        out.extend_from_slice(part.as_bytes());
        out.extend_from_slice(b"\",\"text\":");
        jstr(out, text);
        out.extend_from_slice(b"}]}}\n");
    }

    fn turn_context(&mut self, out: &mut Vec<u8>) {
        self.line(out, "turn_context");
        out.extend_from_slice(b"{\"cwd\":");
        jstr(out, &self.cwd);
        out.extend_from_slice(
            b",\"approval_policy\":\"on-request\",\"sandbox_policy\":{\"mode\":\"workspace-write\",\
              \"network_access\":false,\"exclude_tmpdir_env_var\":false,\"exclude_slash_tmp\":false},\
              \"model\":",
        );
        jstr(out, self.model);
        out.extend_from_slice(b",\"effort\":\"medium\",\"summary\":\"auto\"}}\n");
    }

    fn token_count(&mut self, out: &mut Vec<u8>) {
        self.line(out, "event_msg");
        let cached = self.input_tokens - self.input_tokens % 256;
        let last_in = self.t.rng.range(200, 9_000);
        let last_out = self.t.rng.range(20, 2_000);
        out.extend_from_slice(
            format!(
                "{{\"type\":\"token_count\",\"info\":{{\"total_token_usage\":{{\"input_tokens\":{i},\
                 \"cached_input_tokens\":{cached},\"output_tokens\":{o},\"reasoning_output_tokens\":{r},\
                 \"total_tokens\":{t}}},\"last_token_usage\":{{\"input_tokens\":{last_in},\
                 \"cached_input_tokens\":0,\"output_tokens\":{last_out},\"reasoning_output_tokens\":0,\
                 \"total_tokens\":{lt}}},\"model_context_window\":272000}},\"rate_limits\":{{\
                 \"primary\":{{\"used_percent\":{p}.0,\"window_minutes\":299,\"resets_in_seconds\":{s1}}},\
                 \"secondary\":{{\"used_percent\":{q}.0,\"window_minutes\":10079,\"resets_in_seconds\":{s2}}}}}}}}}\n",
                i = self.input_tokens,
                o = self.output_tokens,
                r = self.output_tokens / 3,
                t = self.input_tokens + self.output_tokens,
                lt = last_in + last_out,
                p = self.t.rng.below(100),
                q = self.t.rng.below(100),
                s1 = self.t.rng.range(60, 18_000),
                s2 = self.t.rng.range(60, 600_000),
            )
            .as_bytes(),
        );
    }

    fn reasoning(&mut self, out: &mut Vec<u8>) {
        if !self.t.rng.chance(0.8) {
            return;
        }
        let title = format!(
            "**{} {}**",
            self.t
                .rng
                .pick(&["Examining", "Planning", "Checking", "Updating", "Reviewing"]),
            self.t.rng.pick(IDENTS)
        );
        let summary = if self.t.rng.chance(0.4) {
            let len = self.t.rng.log_range(80.0, 900.0) as usize;
            format!("{title}\n\n{}", self.t.prose(len))
        } else {
            title
        };
        self.line(out, "event_msg");
        out.extend_from_slice(b"{\"type\":\"agent_reasoning\",\"text\":");
        jstr(out, &summary);
        out.extend_from_slice(b"}}\n");
        self.line(out, "response_item");
        out.extend_from_slice(
            b"{\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":",
        );
        jstr(out, &summary);
        out.extend_from_slice(b"}],\"content\":null,\"encrypted_content\":\"gAAAAAB");
        let len = self.t.rng.log_range(900.0, 9_000.0) as usize;
        out.extend_from_slice(base64(&mut self.t.rng, len, true).as_bytes());
        out.extend_from_slice(b"\"}}\n");
        self.output_tokens += len as u64 / 6;
    }

    fn call_id(&mut self) -> String {
        format!("call_{}", alnum(&mut self.t.rng, 24))
    }

    fn shell(&mut self, out: &mut Vec<u8>) {
        let file = self.t.rng.pick(FILES);
        let (command, output) = match self.t.rng.below(10) {
            0..=4 => {
                let len = if self.t.rng.chance(0.01) {
                    self.t.rng.log_range(20_000.0, 150_000.0)
                } else {
                    self.t.rng.log_range(300.0, 12_000.0)
                } as usize;
                (format!("sed -n '1,400p' {file}"), self.t.code(len))
            }
            5..=7 => {
                let mut o = self.t.test_lines();
                if self.t.rng.chance(0.2) {
                    let len = self.t.rng.log_range(2_000.0, 40_000.0) as usize;
                    o.push_str(&self.t.code(len));
                }
                ("npm test".to_string(), o)
            }
            8 => {
                let mut o = String::new();
                for _ in 0..self.t.rng.range(1, 40) {
                    let line = self.t.code(60);
                    o.push_str(&format!(
                        "{}:{}:{}\n",
                        self.t.rng.pick(FILES),
                        self.t.rng.range(1, 900),
                        line.lines().next().unwrap_or("")
                    ));
                }
                (format!("rg -n \"{}\" src", self.t.rng.pick(IDENTS)), o)
            }
            _ => {
                let n = self.t.rng.range(2, 40) as usize;
                let o: Vec<&str> = (0..n).map(|_| self.t.rng.pick(FILES)).collect();
                ("ls -R".to_string(), o.join("\n"))
            }
        };
        let call_id = self.call_id();
        let mut args = b"{\"command\":[\"bash\",\"-lc\",".to_vec();
        jstr(&mut args, &command);
        args.extend_from_slice(b"],\"workdir\":");
        jstr(&mut args, &self.cwd);
        args.extend_from_slice(b",\"timeout_ms\":120000}");
        self.line(out, "response_item");
        out.extend_from_slice(b"{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":");
        jstr(out, std::str::from_utf8(&args).expect("valid UTF-8"));
        out.extend_from_slice(b",\"call_id\":\"");
        out.extend_from_slice(call_id.as_bytes());
        out.extend_from_slice(b"\"}}\n");
        let exit = u32::from(self.t.rng.chance(0.08));
        self.call_output(out, "function_call_output", &call_id, &output, exit);
    }

    fn apply_patch(&mut self, out: &mut Vec<u8>) {
        let file = self.t.rng.pick(FILES);
        let mut patch = format!("*** Begin Patch\n*** Update File: {file}\n@@\n");
        let old_len = self.t.rng.log_range(40.0, 900.0) as usize;
        for l in self.t.code(old_len).lines() {
            patch.push_str(&format!("-{l}\n"));
        }
        let new_len = self.t.rng.log_range(40.0, 1_100.0) as usize;
        for l in self.t.code(new_len).lines() {
            patch.push_str(&format!("+{l}\n"));
        }
        patch.push_str("*** End Patch");
        let call_id = self.call_id();
        self.line(out, "response_item");
        out.extend_from_slice(
            b"{\"type\":\"custom_tool_call\",\"status\":\"completed\",\"call_id\":\"",
        );
        out.extend_from_slice(call_id.as_bytes());
        out.extend_from_slice(b"\",\"name\":\"apply_patch\",\"input\":");
        jstr(out, &patch);
        out.extend_from_slice(b"}}\n");
        let output = format!("Success. Updated the following files:\nM {file}\n");
        self.call_output(out, "custom_tool_call_output", &call_id, &output, 0);
    }

    /// The output item: `{"output": ..., "metadata": {...}}` serialised into a string.
    fn call_output(&mut self, out: &mut Vec<u8>, kind: &str, call_id: &str, text: &str, exit: u32) {
        let mut doc = b"{\"output\":".to_vec();
        jstr(&mut doc, text);
        doc.extend_from_slice(
            format!(
                ",\"metadata\":{{\"exit_code\":{exit},\"duration_seconds\":{}.{}}}}}",
                self.t.rng.below(30),
                self.t.rng.below(10)
            )
            .as_bytes(),
        );
        self.line(out, "response_item");
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"call_id\":\"");
        out.extend_from_slice(call_id.as_bytes());
        out.extend_from_slice(b"\",\"output\":");
        jstr(out, std::str::from_utf8(&doc).expect("valid UTF-8"));
        out.extend_from_slice(b"}}\n");
        self.input_tokens += text.len() as u64 / 4;
    }
}
