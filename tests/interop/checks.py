"""What the interop runner checks: markers in session copies, the history a session should show,
and the requests a real CLI sent to the mock model server.

Pure functions over JSON values; no processes, no files except where named.
"""

from __future__ import annotations

import datetime as dt
import json
import re

# ---------------------------------------------------------------------------------------------
# The session side: what `sessiontool show --json` says a session holds


def head_branch(show_json):
    """The nodes of the head branch, root first (as the tools resume it)."""
    session = show_json["session"]
    nodes = session["nodes"]
    by_id = {n["id"]: n for n in nodes}
    head = session["meta"].get("head") or (nodes[-1]["id"] if nodes else None)
    branch, seen = [], set()
    while head is not None and head in by_id and head not in seen:
        seen.add(head)
        node = by_id[head]
        branch.append(node)
        head = node.get("parent")
    branch.reverse()
    return branch


def _parts(node):
    body = node.get("body") or {}
    if body.get("node") != "message":
        return None, []
    return body.get("role"), body.get("parts") or []


def first_user_text(nodes):
    """The first non-empty user text in `nodes` (in the order given)."""
    for node in nodes:
        role, parts = _parts(node)
        if role != "user":
            continue
        for part in parts:
            content = part.get("content") or {}
            if content.get("type") == "text" and content.get("text", "").strip():
                return content["text"]
    return None


def expected_history(show_json):
    """What a resumed session must bring back, from the head branch: the user prompts and
    the assistant's visible texts in order (thoughts, notices and events excluded), the number
    of tool calls, how many of them have a result, and the number of results."""
    turns, calls, results = [], [], []
    for node in head_branch(show_json):
        role, parts = _parts(node)
        if role not in ("user", "assistant", "tool"):
            continue
        for part in parts:
            content = part.get("content") or {}
            kind = content.get("type")
            if kind == "text" and role in ("user", "assistant"):
                text = content.get("text", "").strip()
                if text:
                    turns.append(("user" if role == "user" else "model", text))
            elif kind == "tool_call":
                calls.append((content.get("id"), content.get("name")))
            elif kind == "tool_result":
                results.append((content.get("call_id"), content.get("name")))
    open_results = list(results)
    answered = 0
    for cid, name in calls:
        match = next((r for r in open_results if cid is not None and r[0] == cid), None)
        if match is None:  # a call without an id (Gemini checkpoints): the next result by name
            match = next((r for r in open_results
                          if (cid is None or r[0] is None) and r[1] in (name, None)), None)
        if match is not None:
            open_results.remove(match)
            answered += 1
    return {"turns": turns, "tool_calls": len(calls), "answered_calls": answered,
            "tool_results": len(results)}


# ---------------------------------------------------------------------------------------------
# Markers


def json_encodings(text):
    """The ways the writers of these formats spell `text` inside a JSON string."""
    plain = json.dumps(text, ensure_ascii=False)[1:-1]
    ascii_ = json.dumps(text)[1:-1]
    go = plain.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    go = go.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    out = []
    for enc in (plain, ascii_, go):
        if enc not in out:
            out.append(enc)
    return out


def insert_marker(data: bytes, text: str, marker: str):
    """Append ` marker` to every JSON string whose whole value is `text`; returns (new bytes,
    how many were changed). Works on damaged files too: only those string literals change."""
    count = 0
    for enc in json_encodings(text):
        needle = ('"' + enc + '"').encode("utf-8")
        n = data.count(needle)
        if n:
            data = data.replace(needle, ('"' + enc + " " + marker + '"').encode("utf-8"))
            count += n
    return data, count


# ---------------------------------------------------------------------------------------------
# The request side: a request body as a list of conversation entries
#
# entry = {"role": "user"|"model"|"system"|"tool", "texts": [...], "calls": n, "results": n}


def _entry(role):
    return {"role": role, "texts": [], "calls": 0, "results": 0}


def entries_gemini(body):
    out = []
    for content in body.get("contents") or []:
        e = _entry("model" if content.get("role") == "model" else "user")
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str) and not part.get("thought"):
                e["texts"].append(part["text"])
            if "functionCall" in part:
                e["calls"] += 1
            if "functionResponse" in part:
                e["results"] += 1
        out.append(e)
    return out


def _text_blocks(content, kinds=("text", "input_text", "output_text")):
    if isinstance(content, str):
        return [content]
    texts = []
    for block in content or []:
        if isinstance(block, dict) and block.get("type") in kinds and isinstance(
                block.get("text"), str):
            texts.append(block["text"])
    return texts


def entries_chat(body):
    out = []
    for m in body.get("messages") or []:
        role = m.get("role")
        e = _entry({"assistant": "model", "user": "user", "tool": "tool"}.get(role, "system"))
        e["texts"] = _text_blocks(m.get("content"))
        e["calls"] = len(m.get("tool_calls") or [])
        e["results"] = 1 if role == "tool" else 0
        out.append(e)
    return out


def entries_anthropic(body):
    out = []
    for m in body.get("messages") or []:
        role = m.get("role")
        e = _entry({"assistant": "model", "user": "user"}.get(role, "system"))
        content = m.get("content")
        e["texts"] = _text_blocks(content, ("text",))
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") in ("tool_use", "server_tool_use"):
                    e["calls"] += 1
                elif block.get("type") == "tool_result":
                    e["results"] += 1
        out.append(e)
    return out


CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output",
                "tool_search_output")


def entries_responses(body):
    out = []
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items or []:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            e = _entry({"assistant": "model", "user": "user"}.get(role, "system"))
            e["texts"] = _text_blocks(item.get("content"))
        elif kind in CALL_ITEMS:
            e = _entry("model")
            e["calls"] = 1
        elif kind in OUTPUT_ITEMS:
            e = _entry("tool")
            e["results"] = 1
        else:  # reasoning and the rest: not conversation text
            continue
        out.append(e)
    return out


PROTOCOLS = {
    "gemini": {"routes": ("gemini.stream", "gemini.generate"), "entries": entries_gemini},
    "openai-chat": {"routes": ("openai.chat.stream", "openai.chat"), "entries": entries_chat},
    "anthropic": {"routes": ("anthropic.stream", "anthropic.message"),
                  "entries": entries_anthropic},
    "openai-responses": {"routes": ("openai.responses",), "entries": entries_responses},
}


def main_request(log, protocol, prompt):
    """The request that carried the resumed history: among the model calls of `protocol`
    holding `prompt` in a user entry, the one with the most entries. (None, reason) if none."""
    spec = PROTOCOLS[protocol]
    best = None
    calls = [e for e in log if e.get("route") in spec["routes"] and isinstance(e.get("body"), dict)]
    for e in calls:
        entries = spec["entries"](e["body"])
        if any(x["role"] == "user" and any(prompt in t for t in x["texts"]) for x in entries):
            if best is None or len(entries) > len(best[1]):
                best = (e, entries)
    if best is None:
        if not calls:
            return None, None, f"no {protocol} model request reached the mock"
        return None, None, f"{len(calls)} {protocol} request(s), none with the prompt"
    return best[0], best[1], None


def match_history(entries, expected_turns):
    """Greedy in-order match of the expected (role, text) turns against the texts of the
    request entries; several turns may sit in one text (a CLI may join adjacent messages), in
    order. Greedy is exact for this kind of subsequence matching. Returns the turns not found."""
    flat = [(e["role"], t) for e in entries for t in e["texts"]]
    i, offset, missing = 0, 0, []
    for role, text in expected_turns:
        j, off = i, offset
        while j < len(flat):
            if flat[j][0] == role:
                pos = flat[j][1].find(text, off)
                if pos >= 0:
                    break
            j, off = j + 1, 0
        if j == len(flat):
            missing.append((role, text))
        else:
            i, offset = j, pos + len(text)
    return missing


# ---------------------------------------------------------------------------------------------
# API rules: what the real model APIs reject, checked on the request the mock received (the mock
# itself accepts anything, which would hide such a history)

GEMINI_DATA = {"text", "inlineData", "fileData", "functionCall", "functionResponse",
               "executableCode", "codeExecutionResult"}
GEMINI_PART_META = {"thought", "thoughtSignature", "videoMetadata", "partMetadata",
                    "mediaResolution"}
GEMINI_CALL = {"id", "name", "args", "partialArgs", "willContinue"}
GEMINI_RESPONSE = {"id", "name", "response", "willContinue", "scheduling", "parts"}


def api_problems_gemini(body):
    problems = []
    contents = body.get("contents") or []
    for i, c in enumerate(contents):
        where = f"contents[{i}]"
        if c.get("role") not in ("user", "model"):
            problems.append(f"{where}.role is {c.get('role')!r} (user or model)")
        parts = c.get("parts")
        if not parts:
            problems.append(f"{where} has no parts")
            continue
        for j, p in enumerate(parts):
            w = f"{where}.parts[{j}]"
            if not isinstance(p, dict):
                problems.append(f"{w} is not an object")
                continue
            data = [k for k in p if k in GEMINI_DATA]
            unknown = [k for k in p if k not in GEMINI_DATA and k not in GEMINI_PART_META]
            if len(data) != 1:
                problems.append(f"{w} holds {len(data)} data fields {data} (exactly one)")
            if unknown:
                problems.append(f"{w}: unknown field(s) {unknown} (Invalid JSON payload)")
            fc, fr = p.get("functionCall"), p.get("functionResponse")
            if isinstance(fc, dict):
                extra = sorted(set(fc) - GEMINI_CALL)
                if extra:
                    problems.append(f"{w}.functionCall: unknown field(s) {extra}")
                if not fc.get("name"):
                    problems.append(f"{w}.functionCall.name is empty")
            if isinstance(fr, dict):
                extra = sorted(set(fr) - GEMINI_RESPONSE)
                if extra:
                    problems.append(f"{w}.functionResponse: unknown field(s) {extra}")
                if not fr.get("name"):
                    problems.append(f"{w}.functionResponse.name is missing or empty")
                if "response" in fr and not isinstance(fr["response"], dict):
                    problems.append(f"{w}.functionResponse.response is not an object")
    # A function call turn must be answered by the next turn, one response per call.
    for i, c in enumerate(contents):
        ncalls = sum(1 for p in c.get("parts") or [] if isinstance(p, dict) and "functionCall" in p)
        if not ncalls or c.get("role") != "model":
            continue
        nxt = contents[i + 1] if i + 1 < len(contents) else None
        nresp = sum(1 for p in (nxt or {}).get("parts") or []
                    if isinstance(p, dict) and "functionResponse" in p)
        if nxt is None or nresp != ncalls:
            problems.append(f"contents[{i}]: {ncalls} function call(s) answered by {nresp} "
                            f"response(s) in the next turn (must be equal)")
    return problems


def api_problems_anthropic(body):
    problems = []
    msgs = [m for m in body.get("messages") or [] if m.get("role") in ("user", "assistant")]
    for i, m in enumerate(msgs):
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        for j, b in enumerate(blocks):
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and not b.get("text"):
                problems.append(f"messages[{i}].content[{j}]: empty text block")
            if b.get("type") == "thinking" and not b.get("signature"):
                problems.append(f"messages[{i}].content[{j}]: thinking block without signature")
        uses = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if m.get("role") == "assistant" and uses:
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            nblocks = nxt.get("content") if nxt and isinstance(nxt.get("content"), list) else []
            answered = {b.get("tool_use_id") for b in nblocks
                        if isinstance(b, dict) and b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                problems.append(f"messages[{i}]: tool_use id(s) {missing} without tool_result "
                                f"blocks immediately after")
        if m.get("role") == "user":
            results = [b.get("tool_use_id") for b in blocks
                       if isinstance(b, dict) and b.get("type") == "tool_result"]
            prev = msgs[i - 1] if i > 0 else None
            pblocks = prev.get("content") if prev and prev.get("role") == "assistant" and \
                isinstance(prev.get("content"), list) else []
            known = {b.get("id") for b in pblocks
                     if isinstance(b, dict) and b.get("type") == "tool_use"}
            stray = [r for r in results if r not in known]
            if stray:
                problems.append(f"messages[{i}]: tool_result for unexpected tool_use_id(s) {stray}")
    return problems


def api_problems_chat(body):
    problems = []
    msgs = body.get("messages") or []
    pending, open_ids = None, set()
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in open_ids:
                problems.append(f"messages[{i}]: tool message for {m.get('tool_call_id')!r} does "
                                f"not answer a preceding tool_calls message")
            else:
                open_ids.discard(m.get("tool_call_id"))
            continue
        if open_ids:
            problems.append(f"messages[{pending}]: tool_call_id(s) {sorted(open_ids)} not "
                            f"answered by tool messages")
            open_ids = set()
        calls = m.get("tool_calls") or []
        for c in calls:
            args = (c.get("function") or {}).get("arguments")
            if not isinstance(args, str):
                problems.append(f"messages[{i}]: tool call arguments are not a string")
        if role == "assistant" and calls:
            pending, open_ids = i, {c.get("id") for c in calls}
    if open_ids:
        problems.append(f"messages[{pending}]: tool_call_id(s) {sorted(open_ids)} not answered")
    return problems


def api_problems_responses(body):
    problems, warnings = [], []
    items = body.get("input") if isinstance(body.get("input"), list) else []
    calls, outputs = {}, {}
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind in CALL_ITEMS and item.get("call_id"):
            calls.setdefault(item["call_id"], i)
        if kind in OUTPUT_ITEMS:
            cid = item.get("call_id")
            if cid not in calls:
                problems.append(f"input[{i}]: no tool call found for output with call_id {cid!r}")
            outputs[cid] = i
        if kind == "reasoning" and not item.get("encrypted_content") and not item.get("id"):
            warnings.append(f"input[{i}]: reasoning item with neither id nor encrypted_content")
    for cid, i in calls.items():
        if cid not in outputs:
            problems.append(f"input[{i}]: no tool output found for call_id {cid!r}")
    return problems, warnings


def api_problems(protocol, body):
    """(problems the real API would reject, warnings) for a request body."""
    if protocol == "gemini":
        return api_problems_gemini(body), []
    if protocol == "anthropic":
        return api_problems_anthropic(body), []
    if protocol == "openai-chat":
        return api_problems_chat(body), []
    if protocol == "openai-responses":
        return api_problems_responses(body)
    return [], []


def short(text, n=70):
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[: n - 1] + "…"


# RFC 3339 times as the formats write them: 2026-01-12T08:00:00.120Z, with or without a
# fraction, Z or an offset.
_ISO_TIME = re.compile(rb"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})")


def _parse_iso(m):
    base, frac, zone = m.group(1).decode(), (m.group(2) or b"").decode(), m.group(3).decode()
    t = dt.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S")
    micros = int((frac[1:] + "000000")[:6]) if frac else 0
    offset = dt.timedelta(0) if zone == "Z" else \
        (1 if zone[0] == "+" else -1) * dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return t.replace(microsecond=micros, tzinfo=dt.timezone(offset)), frac, zone


def shift_timestamps(data: bytes, start: dt.datetime) -> bytes:
    """Every RFC 3339 time in `data` moved by one amount, so that the earliest is `start`: a
    session that happened now (in a lived-in home, newer than the one the CLI just wrote).
    Each time keeps its shape (fraction digits, zone), so only those bytes change."""
    found = [_parse_iso(m)[0] for m in _ISO_TIME.finditer(data)]
    if not found:
        return data
    delta = start - min(found)

    def moved(m):
        t, frac, zone = _parse_iso(m)
        t = (t + delta).astimezone(t.tzinfo)
        out = t.strftime("%Y-%m-%dT%H:%M:%S")
        if frac:
            out += "." + f"{t.microsecond:06d}{'000'}"[:len(frac) - 1]
        return (out + zone).encode()

    return _ISO_TIME.sub(moved, data)
