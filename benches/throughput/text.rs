//! Generated text shared by the session generators: a seeded PRNG, prose, code (with the
//! quotes, backslashes, tabs and newlines JSON has to escape), test output with ANSI colours,
//! unified diffs, ids, timestamps and JSON string literals. Deterministic: the same seed gives
//! the same bytes on every machine.

// ----------------------------------------------------------------------------------------------
// A tiny seeded PRNG (xorshift64*, seeded through splitmix64).

pub fn mix(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(mix(seed, 0x5EED) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }

    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    pub fn log_range(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

#[rustfmt::skip]
pub const WORDS: &[&str] = &[
    "the", "test", "function", "file", "value", "should", "update", "timer", "config", "error",
    "return", "module", "import", "async", "handler", "request", "response", "session", "record",
    "parse", "branch", "commit", "build", "tests", "pass", "fails", "because", "which", "when",
    "then", "we", "I", "will", "check", "first", "let", "me", "look", "at", "this", "that", "it",
    "is", "a", "to", "of", "and", "in", "for", "with", "on", "from", "now", "instead", "state",
    "component", "render", "cache", "index", "query", "database", "migration", "schema", "field",
    "type", "interface", "struct", "trait", "closure", "iterator", "buffer", "stream", "socket",
    "timeout", "retry", "logger", "warning", "deprecated", "refactor", "rename", "extract",
    "inline", "the", "a", "is", "to", "and", "of", "in", "that", "it", "can", "not", "be",
];
#[rustfmt::skip]
pub const CJK: &[&str] = &[
    "计时器", "测试", "文件", "修复", "提交", "分支", "会话", "记录", "错误", "函数", "配置",
    "请", "帮我", "检查", "一下", "我们", "需要", "运行", "通过", "失败", "，", "。", "的", "了",
    "テスト", "ファイル", "修正", "してください",
];
#[rustfmt::skip]
pub const SPICE: &[&str] = &[
    "🍅", "⏱️", "👍🏽", "✅", "❌", "🚀", "💪🏾", "☕", "café", "naïve", "Größe", "Ελληνικά",
    "привет", "مرحبا", "שלום", "𝄞", "—", "…", "→", "“quoted”", "e\u{301}",
];
#[rustfmt::skip]
pub const IDENTS: &[&str] = &[
    "remaining", "endAt", "phase", "config", "items", "result", "ctx", "opts", "handler", "buf",
    "session_id", "parentUuid", "records", "path", "value", "count", "tick", "state", "retries",
];
#[rustfmt::skip]
pub const FILES: &[&str] = &[
    "src/timer.js", "src/app.ts", "src/lib.rs", "src/main.rs", "test/timer.test.js",
    "packages/core/src/services/chatRecordingService.ts", "README.md", "package.json",
    "Cargo.toml", "src/records/jsonl.rs", "api/handlers/users.go", "scripts/deploy.sh",
];

// ----------------------------------------------------------------------------------------------
// Text

/// A text source: the generator's PRNG and whether this session's people write CJK.
pub struct Text {
    pub rng: Rng,
    pub cjk: bool,
}

impl Text {
    /// Prose of about `len` bytes: words, some code spans, unicode now and then.
    pub fn prose(&mut self, len: usize) -> String {
        let mut s = String::with_capacity(len + 32);
        let mut sentence = 0;
        while s.len() < len {
            if self.cjk && self.rng.chance(0.6) {
                s.push_str(self.rng.pick(CJK));
            } else {
                if !s.is_empty() {
                    s.push(' ');
                }
                let r = self.rng.below(100);
                if r < 3 {
                    s.push_str(self.rng.pick(SPICE));
                } else if r < 7 {
                    s.push('`');
                    s.push_str(self.rng.pick(IDENTS));
                    s.push('`');
                } else if r < 9 {
                    s.push('"');
                    s.push_str(self.rng.pick(WORDS));
                    s.push('"');
                } else {
                    s.push_str(self.rng.pick(WORDS));
                }
            }
            sentence += 1;
            if sentence > 6 && self.rng.chance(0.12) {
                s.push_str(if self.rng.chance(0.1) { ".\n\n" } else { "." });
                sentence = 0;
            }
        }
        s.push('.');
        s
    }

    /// Code of about `len` bytes: quotes, backslashes, tabs and newlines to escape.
    pub fn code(&mut self, len: usize) -> String {
        let mut s = String::with_capacity(len + 128);
        let mut depth = 0usize;
        while s.len() < len {
            let tabs = self.rng.chance(0.1);
            for _ in 0..depth {
                s.push_str(if tabs { "\t" } else { "    " });
            }
            let a = self.rng.pick(IDENTS);
            let b = self.rng.pick(IDENTS);
            let w = self.rng.pick(WORDS);
            match self.rng.below(12) {
                0 => s.push_str(&format!(
                    "const {a} = {b}(\"{w}\", {});",
                    self.rng.below(1000)
                )),
                1 => s.push_str(&format!(
                    "if ({a} === null) {{ throw new Error(\"{w} not found: \" + {b}); }}"
                )),
                2 => {
                    s.push_str("// ");
                    let p = self.prose(50);
                    s.push_str(&p);
                }
                3 => s.push_str(&format!(
                    "return {a}.replace(/\\s+/g, \"\\t\").split(\"\\n\");"
                )),
                4 => {
                    s.push_str(&format!(
                        "fn {a}(&self, {b}: &str) -> Result<Vec<u8>, Error> {{"
                    ));
                    depth += 1;
                }
                5 => s.push_str(&format!("println!(\"{{}}: {{:?}}\\n\", {a}, {b});")),
                6 => s.push_str(&format!("let path = \"C:\\\\Users\\\\{w}\\\\{a}.txt\";")),
                7 if depth > 0 => {
                    depth -= 1;
                    s.truncate(s.len() - if tabs { 1 } else { 4 });
                    s.push('}');
                }
                8 => {
                    s.push_str(&format!("for (const {a} of {b}) {{"));
                    depth += 1;
                }
                9 => s.push_str(&format!(
                    "{a}.{b} = {{ \"{w}\": [{}, {}], 'ok': true }};",
                    self.rng.below(99),
                    self.rng.below(99)
                )),
                10 if self.cjk || self.rng.chance(0.1) => s.push_str(&format!(
                    "log.info(\"{} {}\");",
                    self.rng.pick(CJK),
                    self.rng.pick(SPICE)
                )),
                _ => s.push_str(&format!("{a} += {b}.len(); // {w}")),
            }
            s.push('\n');
            depth = depth.min(6);
        }
        s
    }

    pub fn diff(&mut self, file: &str) -> String {
        let name = file.rsplit('/').next().unwrap_or(file);
        let mut s = format!(
            "Index: {name}\n===================================================================\n--- {name}\tCurrent\n+++ {name}\tProposed\n@@ -{},{} +{},{} @@\n",
            self.rng.range(1, 400),
            self.rng.range(1, 20),
            self.rng.range(1, 400),
            self.rng.range(1, 20)
        );
        let len = self.rng.log_range(100.0, 2_000.0) as usize;
        for line in self.code(len).lines() {
            s.push(match self.rng.below(4) {
                0 => '-',
                1 => '+',
                _ => ' ',
            });
            s.push_str(line);
            s.push('\n');
        }
        s
    }

    /// Code of a length between `lo` and `hi` bytes (log-uniform).
    pub fn code_between(&mut self, lo: f64, hi: f64) -> String {
        let len = self.rng.log_range(lo, hi) as usize;
        self.code(len)
    }

    /// Lines of a test run as a terminal shows them: check marks in ANSI colours.
    pub fn test_lines(&mut self) -> String {
        let mut s = String::new();
        for _ in 0..self.rng.range(3, 30) {
            let ok = self.rng.chance(0.9);
            let line = format!(
                " {} test/{}.test.js > {} > {}\n",
                if ok {
                    "\u{1b}[32m✓\u{1b}[39m"
                } else {
                    "\u{1b}[31m×\u{1b}[39m"
                },
                self.rng.pick(IDENTS),
                self.rng.pick(WORDS),
                self.prose(40)
            );
            s.push_str(&line);
        }
        s
    }
}

/// A random version-4 UUID, lower-case hex.
pub fn uuid(rng: &mut Rng) -> String {
    let (a, b) = (rng.next(), rng.next());
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

/// A version-7 UUID (time-ordered, as Codex names its sessions) for `ms` since the epoch.
pub fn uuid_v7(rng: &mut Rng, ms: u64) -> String {
    let (a, b) = (rng.next(), rng.next());
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
        (ms >> 16) & 0xFFFF_FFFF,
        ms & 0xFFFF,
        a & 0xFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

/// `n` characters of `[0-9A-Za-z]`, the alphabet of Anthropic's `msg_`/`req_`/`toolu_` ids
/// and OpenAI's `call_` ids.
pub fn alnum(rng: &mut Rng, n: usize) -> String {
    const A: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    (0..n)
        .map(|_| A[rng.below(A.len() as u64) as usize] as char)
        .collect()
}

/// `n` characters of standard base64 (`+`, `/`), as thinking signatures and encrypted
/// reasoning are written; `n` is rounded up to a multiple of 4.
pub fn base64(rng: &mut Rng, n: usize, url_safe: bool) -> String {
    let alphabet: &[u8] = if url_safe {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let n = n.div_ceil(4) * 4;
    let mut s = String::with_capacity(n);
    while s.len() < n {
        let mut x = rng.next();
        for _ in 0..10 {
            if s.len() == n {
                break;
            }
            s.push(alphabet[(x & 63) as usize] as char);
            x >>= 6;
        }
    }
    s
}

/// Lines numbered as `cat -n` does in Claude Code's Read and Edit results: `     1→line`.
pub fn numbered(code: &str, first: usize) -> String {
    let mut s = String::with_capacity(code.len() + code.len() / 8);
    for (i, line) in code.lines().enumerate() {
        s.push_str(&format!("{:>6}\u{2192}{line}\n", first + i));
    }
    s
}

/// ISO 8601 UTC with milliseconds, as Qwen writes it: `2025-12-06T10:30:07.318Z`.
pub fn timestamp(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let sod = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        ms % 1000
    )
}

/// Appends `s` as a JSON string literal.
pub fn jstr(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1F => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(esc);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}
