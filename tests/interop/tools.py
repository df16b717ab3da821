"""The five CLIs the interop suite drives: pinned npm packages, how each is pointed at the mock
model server inside a throwaway home, and the command that resumes a session with one prompt.

Facts from issue 6, checked against these versions (see README.md beside this file for what was
found different).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Tool:
    name: str
    package: str
    version: str
    bin: str
    protocol: str  # checks.PROTOCOLS key: the wire protocol of its model calls
    format: str  # the sessiontool format its store holds (what we convert into)
    store_var: str = ""  # the env var that moves its store (set to the fake home's folder)
    notes: tuple = field(default_factory=tuple)

    @property
    def spec(self):
        return f"{self.package}@{self.version}"


# Pinned versions: the newest on the npm registry when the suite was written (all run with
# node 20 here, though Qwen Code and Claude Code declare node >= 22 in `engines`).
TOOLS = {
    t.name: t
    for t in (
        Tool("gemini", "@google/gemini-cli", "0.61.0", "gemini", "gemini", "gemini-jsonl"),
        Tool("qwen", "@qwen-code/qwen-code", "0.24.4", "qwen", "openai-chat", "qwen-jsonl"),
        Tool("claude", "@anthropic-ai/claude-code", "2.1.330", "claude", "anthropic",
             "claude-jsonl"),
        Tool("pi", "@mariozechner/pi-coding-agent", "0.73.1", "pi", "openai-chat", "pi-jsonl"),
        Tool("codex", "@openai/codex", "0.169.0", "codex", "openai-responses", "codex-jsonl"),
    )
}


def _write_json(path: Path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def configure(tool: Tool, home: Path, base_url: str):
    """Write the tool's settings into the fake home: auth pointed at the mock, updates,
    telemetry, trust prompts and background model calls off."""
    if tool.name == "gemini":
        _write_json(home / ".gemini" / "settings.json", {
            "security": {"auth": {"selectedType": "gemini-api-key"},
                         "folderTrust": {"enabled": False}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                        "disableAutoUpdate": True, "disableUpdateNag": True},
            "telemetry": {"enabled": False},
            "privacy": {"usageStatisticsEnabled": False},
        })
    elif tool.name == "qwen":
        _write_json(home / ".qwen" / "settings.json", {
            "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
            "general": {"enableAutoUpdate": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False,
                       "enableAutoSkill": False},
        })
    elif tool.name == "claude":
        pass  # everything by environment
    elif tool.name == "pi":
        _write_json(home / ".pi" / "agent" / "models.json", {
            "providers": {"mock": {"baseUrl": base_url + "/v1", "api": "openai-completions",
                                   "apiKey": "dummy", "models": [{"id": "m"}]}}})
    elif tool.name == "codex":
        codex = home / ".codex"
        codex.mkdir(parents=True, exist_ok=True)
        (codex / "config.toml").write_text(
            'model = "m"\n'
            'model_provider = "mock"\n'
            "[model_providers.mock]\n"
            'name = "mock"\n'
            f'base_url = "{base_url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n",
            encoding="utf-8",
        )


def environment(tool: Tool, home: Path, base_url: str, node_dir: str):
    """A minimal environment: nothing of the caller's (no real keys, no real home), the fake
    home and XDG folders inside it, and the tool's own variables pointing at the mock."""
    env = {
        "PATH": os.pathsep.join(dict.fromkeys([node_dir, "/usr/local/bin", "/usr/bin", "/bin"])),
        "HOME": str(home),
        "USER": "interop",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": str(home / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    if tool.name == "gemini":
        env.update(GOOGLE_GEMINI_BASE_URL=base_url, GEMINI_API_KEY="dummy",
                   GEMINI_CLI_HOME=str(home))
    elif tool.name == "qwen":
        env.update(OPENAI_BASE_URL=base_url + "/v1", OPENAI_API_KEY="dummy", OPENAI_MODEL="m",
                   QWEN_RUNTIME_DIR=str(home / ".qwen"))
    elif tool.name == "claude":
        env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="dummy",
                   DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   CLAUDE_CONFIG_DIR=str(home / ".claude"))
    elif tool.name == "pi":
        env.update(PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1",
                   PI_CODING_AGENT_DIR=str(home / ".pi" / "agent"))
    elif tool.name == "codex":
        env.update(CODEX_HOME=str(home / ".codex"), OPENAI_API_KEY="dummy")
    return env


def command(tool: Tool, exe: str, prompt: str, session_id: str, session_path: str, by: str):
    """The resume command. by="latest": the tool's own 'most recent session of this project'
    lookup (proves the folder naming and the recorded cwd); by="id": the session's id (pi: its
    file)."""
    if tool.name == "gemini":  # --resume takes "latest", an index or the session's id
        pick = "latest" if by == "latest" else session_id
        return [exe, "-m", "gemini-2.5-flash", "--resume", pick, "-p", prompt]
    if tool.name == "qwen":
        pick = ["--continue"] if by == "latest" else ["--resume", session_id]
        return [exe, "--auth-type", "openai", *pick, prompt]
    if tool.name == "claude":
        pick = ["--continue"] if by == "latest" else ["--resume", session_id]
        return [exe, *pick, "-p", prompt]
    if tool.name == "pi":
        pick = ["--continue"] if by == "latest" else ["--session", session_path]
        return [exe, "--provider", "mock", "--model", "m", *pick, "-p", prompt]
    if tool.name == "codex":
        pick = ["--last"] if by == "latest" else [session_id]
        return [exe, "exec", "--skip-git-repo-check", "resume", *pick, prompt]
    raise ValueError(tool.name)


def printed_command(tool: Tool, exe: str, argv: list, prompt: str):
    """The command `sessiontool switch` printed (`argv`), run as printed with the suite's own
    additions for a run without a terminal against the mock: the model or provider, and the
    prompt (Codex: `codex resume ID` through its non-interactive `exec`)."""
    if not argv or argv[0] != tool.bin:
        raise ValueError(f"switch printed {argv!r}, not a {tool.bin} command")
    args = list(argv[1:])
    if tool.name == "gemini":
        return [exe, "-m", "gemini-2.5-flash", *args, "-p", prompt]
    if tool.name == "qwen":
        return [exe, "--auth-type", "openai", *args, prompt]
    if tool.name == "claude":
        return [exe, *args, "-p", prompt]
    if tool.name == "pi":
        return [exe, "--provider", "mock", "--model", "m", *args, "-p", prompt]
    if tool.name == "codex":
        if args[:1] != ["resume"]:
            raise ValueError(f"switch printed {argv!r}, not `codex resume ID`")
        return [exe, "exec", "--skip-git-repo-check", *args, prompt]
    raise ValueError(tool.name)


def new_session_command(tool: Tool, exe: str, prompt: str):
    """A new session of the project with one prompt: how a lived-in home gets the CLI's own
    session (and whatever indexes the CLI keeps) before a converted one is placed beside it."""
    if tool.name == "gemini":
        return [exe, "-m", "gemini-2.5-flash", "-p", prompt]
    if tool.name == "qwen":
        return [exe, "--auth-type", "openai", prompt]
    if tool.name == "claude":
        return [exe, "-p", prompt]
    if tool.name == "pi":
        return [exe, "--provider", "mock", "--model", "m", "-p", prompt]
    if tool.name == "codex":
        return [exe, "exec", "--skip-git-repo-check", prompt]
    raise ValueError(tool.name)


def session_id_of(tool: Tool, path: Path):
    """The id the tool knows the session by, read from the written file."""
    try:  # a whole-document format (Gemini legacy JSON)
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict):
            return doc.get("sessionId") or doc.get("id")
    except ValueError:
        pass
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            if tool.name == "gemini":
                return rec.get("sessionId")
            if tool.name in ("qwen", "claude"):
                if rec.get("sessionId"):
                    return rec["sessionId"]
                continue
            if tool.name == "pi":
                return rec.get("id")
            if tool.name == "codex":
                return (rec.get("payload") or {}).get("id")
    return None
