#!/usr/bin/env python3
"""A mock model server for the interop suite: loopback only, Python stdlib only.

It speaks just enough of four wire protocols for the real CLIs to send one prompt and get one
answer:

- Gemini API: ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (SSE chunks),
  ``:generateContent`` (JSON), ``:countTokens``, ``:embedContent``, ``GET /v1beta/models``;
- OpenAI chat completions: ``POST /v1/chat/completions`` (SSE with ``stream: true``, else JSON);
- Anthropic Messages: ``POST /v1/messages`` (SSE ``message_start`` ... ``message_stop``, or JSON),
  ``POST /v1/messages/count_tokens``;
- OpenAI Responses: ``POST /v1/responses`` (the event stream Codex reads);

plus the side requests the CLIs make (model lists, token counts), answered with something
harmless. Every answer is the same fixed text: the server NEVER echoes anything from a request, so
a marker found in a logged request body can only have come from the session the CLI loaded.

Every request is appended to the log file as one JSON line: time, method, path, query, the
route that answered it (``unknown`` for paths the server does not know, answered 404), a few
headers, and the body (parsed JSON when it is JSON, else text).

Standalone: ``python3 mock_server.py --log /tmp/mock.jsonl [--port 0] [--port-file F]``.
The runner imports it and starts one server per case (``start(log_path)``).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

REPLY = "MOCK-REPLY-7f3a: acknowledged, nothing else to add."
# A JSON answer for the CLIs' internal structured calls (Gemini CLI's next-speaker check, model
# router, loop detection, ...): every field one of them may look for, none taken from a request.
STRUCTURED_REPLY = json.dumps(
    {
        "reasoning": "mock",
        "next_speaker": "user",
        "model_choice": "flash",
        "complexity_reasoning": "mock",
        "complexity_score": 1,
        "unproductive_state_analysis": "none",
        "unproductive_state_confidence": 0,
        "confidence": 0,
        "title": "Mock session",
        "summary": "Mock session",
    }
)
MODEL = "mock-model"
LOGGED_HEADERS = ("content-type", "user-agent", "accept", "anthropic-version", "x-goog-api-client")


def _sse(events):
    """`events`: (event name or None, JSON-able data or raw string) pairs -> SSE bytes."""
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        text = data if isinstance(data, str) else json.dumps(data)
        out.append(f"data: {text}\n\n")
    return "".join(out).encode()


def _wants_json(body) -> bool:
    if not isinstance(body, dict):
        return False
    cfg = body.get("generationConfig") or body.get("generation_config") or {}
    mime = cfg.get("responseMimeType") or cfg.get("response_mime_type") or ""
    return "json" in str(mime) or "responseSchema" in cfg or "responseJsonSchema" in cfg


# ---------------------------------------------------------------------------------------------
# Gemini API


def gemini_candidate(text):
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": MODEL,
        "responseId": "mock-response",
    }


def gemini_stream(body):
    text = STRUCTURED_REPLY if _wants_json(body) else REPLY
    first = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}],
        "modelVersion": MODEL,
        "responseId": "mock-response",
    }
    last = gemini_candidate("")
    last["candidates"][0]["content"]["parts"] = [{"text": ""}]
    return _sse([(None, first), (None, last)])


def gemini_generate(body):
    return gemini_candidate(STRUCTURED_REPLY if _wants_json(body) else REPLY)


# ---------------------------------------------------------------------------------------------
# OpenAI chat completions


def chat_stream(body):
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": MODEL}
    chunks = [
        dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""},
                             "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {"content": REPLY}, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        dict(base, choices=[], usage={"prompt_tokens": 10, "completion_tokens": 5,
                                      "total_tokens": 15}),
    ]
    return _sse([(None, c) for c in chunks] + [(None, "[DONE]")])


def chat_json(body):
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


# ---------------------------------------------------------------------------------------------
# Anthropic Messages


def anthropic_message(body, text=REPLY):
    return {
        "id": "msg_mock",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0},
    }


def anthropic_stream(body):
    start = anthropic_message(body)
    start["content"] = []
    start["stop_reason"] = None
    start["usage"] = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}
    return _sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": REPLY}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])


# ---------------------------------------------------------------------------------------------
# OpenAI Responses


def responses_stream(body):
    model = MODEL
    item = {"id": "msg_mock", "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}
    response = {"id": "resp_mock", "object": "response", "created_at": int(time.time()),
                "status": "in_progress", "model": model, "output": []}
    done = dict(response, status="completed", output=[item], usage={
        "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15})
    events = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0,
         "item": dict(item, status="in_progress", content=[])},
        {"type": "response.content_part.added", "item_id": "msg_mock", "output_index": 0,
         "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", "item_id": "msg_mock", "output_index": 0,
         "content_index": 0, "delta": REPLY},
        {"type": "response.output_text.done", "item_id": "msg_mock", "output_index": 0,
         "content_index": 0, "text": REPLY},
        {"type": "response.content_part.done", "item_id": "msg_mock", "output_index": 0,
         "content_index": 0, "part": item["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": done},
    ]
    for seq, e in enumerate(events):
        e["sequence_number"] = seq
    return _sse([(e["type"], e) for e in events])


# ---------------------------------------------------------------------------------------------
# The server


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sessiontool-interop-mock/1"

    def log_message(self, fmt, *args):  # quiet: the JSON log says everything
        pass

    def _read_body(self):
        length = int(self.headers.get("content-length") or 0)
        if length:
            return self.rfile.read(length)
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def _log(self, route, raw, body):
        entry = {
            "time": time.time(),
            "method": self.command,
            "path": urlsplit(self.path).path,
            "query": parse_qs(urlsplit(self.path).query),
            "route": route,
            "headers": {h: self.headers.get(h) for h in LOGGED_HEADERS if self.headers.get(h)},
            "body": body if body is not None else raw.decode("utf-8", "replace"),
        }
        if "gzip" in (self.headers.get("content-encoding") or "") or \
                "zstd" in (self.headers.get("content-encoding") or ""):
            entry["content_encoding"] = self.headers.get("content-encoding")
        with self.server.log_lock:
            with open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def _send(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        if content_type == "text/event-stream":
            self.send_header("cache-control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _route(self, method, path, query, body):
        """(route name, status, payload, content type)."""
        stream = isinstance(body, dict) and body.get("stream") is True
        if path.startswith("/v1beta/models/") or path.startswith("/v1/models/") and ":" in path:
            action = path.rsplit(":", 1)[-1] if ":" in path else ""
            if action == "streamGenerateContent":
                return "gemini.stream", 200, gemini_stream(body), "text/event-stream"
            if action == "generateContent":
                return "gemini.generate", 200, gemini_generate(body), None
            if action == "countTokens":
                return "gemini.countTokens", 200, {"totalTokens": 10}, None
            if action in ("embedContent", "batchEmbedContents"):
                vec = {"values": [0.0] * 8}
                return "gemini.embed", 200, {"embedding": vec, "embeddings": [vec]}, None
            if method == "GET":
                return "gemini.model", 200, {"name": path.split("/")[-1]}, None
        if path in ("/v1beta/models", "/models", "/v1/models"):
            model = {"id": MODEL, "object": "model", "created": 0, "owned_by": "mock"}
            return "models", 200, {"object": "list", "data": [model], "models": []}, None
        if path.endswith("/chat/completions"):
            if stream:
                return "openai.chat.stream", 200, chat_stream(body), "text/event-stream"
            return "openai.chat", 200, chat_json(body), None
        if path.endswith("/messages/count_tokens"):
            return "anthropic.count_tokens", 200, {"input_tokens": 10}, None
        if path.endswith("/v1/messages") or path == "/messages":
            if stream:
                return "anthropic.stream", 200, anthropic_stream(body), "text/event-stream"
            return "anthropic.message", 200, anthropic_message(body), None
        if path.endswith("/responses"):
            return "openai.responses", 200, responses_stream(body), "text/event-stream"
        return "unknown", 404, {"error": {"message": "not served by the interop mock",
                                          "type": "not_found"}}, None

    def _handle(self):
        raw = self._read_body()
        body = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        split = urlsplit(self.path)
        route, status, payload, ctype = self._route(self.command, split.path,
                                                    parse_qs(split.query), body)
        self._log(route, raw, body)
        self._send(status, payload, ctype or "application/json")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle


class MockServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, log_path, port=0):
        super().__init__(("127.0.0.1", port), Handler)
        self.log_path = log_path
        self.log_lock = threading.Lock()

    @property
    def port(self):
        return self.server_address[1]

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"


def start(log_path, port=0):
    """Start a server on a free loopback port in a daemon thread; call .shutdown() to stop."""
    server = MockServer(str(log_path), port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def read_log(log_path):
    try:
        with open(log_path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


SELF_TEST_REQUESTS = [
    ("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
     {"contents": [{"role": "user", "parts": [{"text": "{marker}"}]}]}),
    ("POST", "/v1beta/models/gemini-2.5-flash:generateContent",
     {"contents": [{"role": "user", "parts": [{"text": "{marker}"}]}],
      "generationConfig": {"responseMimeType": "application/json"}}),
    ("POST", "/v1beta/models/gemini-2.5-flash:countTokens",
     {"contents": [{"role": "user", "parts": [{"text": "{marker}"}]}]}),
    ("POST", "/v1/chat/completions",
     {"model": "{marker}", "stream": True, "messages": [{"role": "user", "content": "{marker}"}]}),
    ("POST", "/v1/chat/completions",
     {"model": "{marker}", "messages": [{"role": "user", "content": "{marker}"}]}),
    ("POST", "/v1/messages?beta=true",
     {"model": "{marker}", "stream": True, "messages": [{"role": "user", "content": "{marker}"}]}),
    ("POST", "/v1/messages/count_tokens",
     {"model": "{marker}", "messages": [{"role": "user", "content": "{marker}"}]}),
    ("POST", "/v1/responses",
     {"model": "{marker}", "stream": True, "input": [{"type": "message", "role": "user",
                                                        "content": "{marker}"}]}),
    ("GET", "/v1/models", None),
    ("POST", "/{marker}/unknown", {"x": "{marker}"}),
]


def self_test(log_path):
    """Every route answers, never with anything taken from the request (models included), and
    every request is logged with its body. Raises AssertionError otherwise."""
    import urllib.error
    import urllib.request

    marker = "SELFTEST-MARKER-" + str(time.time_ns())
    server = start(log_path)
    try:
        for method, path, body in SELF_TEST_REQUESTS:
            path = path.replace("{marker}", marker)
            data = json.dumps(body).replace("{marker}", marker).encode() if body else None
            req = urllib.request.Request(server.base_url + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    answer = resp.read().decode()
            except urllib.error.HTTPError as e:
                answer = e.read().decode()
                assert e.code == 404 and "unknown" in path, f"{method} {path}: {e.code}"
            assert marker not in answer, f"{method} {path} echoed request text"
            if "event-stream" in path or (body or {}).get("stream"):
                assert "data: " in answer, f"{method} {path}: not an event stream"
        logged = read_log(log_path)
        assert len(logged) == len(SELF_TEST_REQUESTS), "not every request was logged"
        assert all(marker in json.dumps(e) for e in logged if e["method"] == "POST"), \
            "a request body was not logged"
        assert logged[-1]["route"] == "unknown"
    finally:
        server.shutdown()
        server.server_close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", required=True, help="append one JSON line per request here")
    ap.add_argument("--port-file", help="write the chosen port here once listening")
    ap.add_argument("--self-test", action="store_true",
                    help="check every route once (no echo, all logged) and exit")
    args = ap.parse_args(argv)
    if args.self_test:
        self_test(args.log)
        print("mock self-test passed", file=sys.stderr)
        return
    server = MockServer(args.log, args.port)
    if args.port_file:
        with open(args.port_file, "w") as f:
            f.write(str(server.port))
    print(f"mock listening on {server.base_url}, logging to {args.log}", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
