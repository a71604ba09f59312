"""`actloop fake-openai`: an OpenAI-compatible chat server on loopback that answers by a fixed rule,
so the README's examples (and your own first tries) run without a key, a network or a model.

The rule, per request to `POST /v1/chat/completions`:
- a tool result after the last user message: answer `The answer is RESULT.` (the last result);
- else, tools offered: call the tool whose name the question mentions (else the first one), its
  number parameters filled with the question's numbers in order, its text parameters with the
  question;
- else: answer `You asked: QUESTION`.
Streaming (server-sent events, with a usage chunk when asked) and whole JSON replies both work.
It is a stand-in for trying things, not a model: point `--base-url` at a real server for answers.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

__all__ = ["fake_openai_command", "reply_to"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ARITHMETIC = re.compile(r"[\d(][\d\s.+\-*/()%]*[\d)]")
_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _text(content: Any) -> str:
    """A message's text (a string, or the text parts of a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            cast("dict[str, Any]", p) for p in cast("list[Any]", content) if isinstance(p, dict)
        ]
        return " ".join(str(p.get("text", "")) for p in parts)
    return ""


def _arguments(schema: Mapping[str, Any], question: str) -> dict[str, Any]:
    """Arguments for a tool from the question: numbers in order for number parameters; for a
    required text parameter, the arithmetic in the question if any, else the question."""
    numbers: list[str] = _NUMBER.findall(question)
    sums = [m for m in _ARITHMETIC.findall(question) if any(op in m for op in "+-*/%")]
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    properties: dict[str, Any] = schema.get("properties") or {}
    for name, spec in properties.items():
        kind: Any = cast("dict[str, Any]", spec).get("type") if isinstance(spec, dict) else None
        if kind in ("integer", "number") and numbers:
            value = numbers.pop(0)
            args[name] = int(float(value)) if kind == "integer" else float(value)
        elif kind in ("string", None) and name in required:
            args[name] = sums[0].strip() if sums else question
    return args


def reply_to(body: Mapping[str, Any]) -> dict[str, Any]:
    """The assistant message the rule gives for a chat completions request body."""
    messages: list[dict[str, Any]] = list(body.get("messages") or [])
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    last_user = users[-1] if users else -1
    question = _text(messages[last_user].get("content")) if users else ""
    results = [m for m in messages[last_user + 1 :] if m.get("role") == "tool"]
    if results:
        return {"role": "assistant", "content": f"The answer is {_text(results[-1]['content'])}."}
    offered: list[dict[str, Any]] = body.get("tools") or []
    tools: list[dict[str, Any]] = [t["function"] for t in offered]
    if not tools:
        return {"role": "assistant", "content": f"You asked: {question}"}
    named = [t for t in tools if t["name"].lower() in question.lower()]
    tool = (named or tools)[0]
    arguments = _arguments(tool.get("parameters") or {}, question)
    call = {
        "id": f"call_{len(messages)}",
        "type": "function",
        "function": {"name": tool["name"], "arguments": json.dumps(arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _events(message: dict[str, Any], finish: str, usage: bool) -> list[dict[str, Any]]:
    """The stream chunks of `message`: its role and content, then each tool call whole."""
    head = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake"}

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    events = [chunk({"role": "assistant", "content": message.get("content") or ""})]
    for i, call in enumerate(message.get("tool_calls") or []):
        events.append(chunk({"tool_calls": [{"index": i, **call}]}))
    events.append(chunk({}, finish))
    if usage:
        events.append({**head, "choices": [], "usage": _USAGE})
    return events


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the examples' output stays theirs

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        message = reply_to(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            completion = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0}
            self._send(200, {**completion, "model": "fake", "choices": [choice], "usage": _USAGE})
            return
        options: dict[str, Any] = body.get("stream_options") or {}
        usage = bool(options.get("include_usage"))
        data = b"".join(
            f"data: {json.dumps(e)}\n\n".encode() for e in _events(message, finish, usage)
        )
        self._raw(200, data + b"data: [DONE]\n\n", "text/event-stream")

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        self._raw(status, json.dumps(payload).encode(), "application/json")

    def _raw(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def fake_openai_command(port: int) -> int:
    """Serve on 127.0.0.1:`port` (0: a free port) until interrupted; prints the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    print("a rule-playing stand-in; Ctrl-C stops it", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
