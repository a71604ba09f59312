"""A loopback server that speaks the OpenAI chat completions API and plays a script of replies.

The one such server of the test suite, shared by the provider's fault tests, the CLI tests and the
security tests: whole completions (JSON, or an event stream when the request asks to stream), HTTP
errors, garbage, dropped connections. It records every request (path, headers, body).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAST_RETRY = {"retry-after-ms": "1"}
"""Tells the SDK to wait 1 ms before retrying, so retry tests stay fast."""
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@dataclass
class Reply:
    """One scripted answer of the server."""

    kind: str
    """"message" (JSON or a stream, as the request asks), "http" (status + body), "stream" (raw
    events), "drop" (close without answering)."""
    message: dict[str, Any] = field(default_factory=dict[str, Any])
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict[str, str])
    events: list[str] = field(default_factory=list[str])
    chunked: bool = True
    """Stream with chunked encoding (a drop is then a broken read) or close-delimited."""
    drop: bool = False
    """Close the connection after the events, without ending the stream properly."""
    delay: float = 0.0


def message(content: str | None = "", tool_calls: list[dict[str, Any]] | None = None) -> Reply:
    """A whole assistant reply; tool calls are `{"id", "name", "arguments"}` dicts."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in tool_calls
        ]
    return Reply("message", message=msg)


def error(status: int, text: str, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": text, "type": "test_error", "code": None}}).encode()
    return Reply("http", status=status, body=body, headers=headers or {})


def completion_json(msg: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-test",
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
        "usage": USAGE,
    }


def stream_events(msg: dict[str, Any], finish: str, usage: bool) -> list[str]:
    """The event payloads for `msg`: a role delta, word deltas, tool-call deltas in two pieces."""
    base = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-test",
    }

    def event(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return json.dumps({**base, "choices": [choice]})

    events = [event({"role": "assistant", "content": ""})]
    text = msg.get("content") or ""
    events += [event({"content": word}) for word in _words(text)]
    for i, call in enumerate(msg.get("tool_calls", [])):
        args = call["function"]["arguments"]
        head = {"index": i, "id": call["id"], "type": "function"}
        events.append(
            event(
                {
                    "tool_calls": [
                        {
                            **head,
                            "function": {"name": call["function"]["name"], "arguments": args[:5]},
                        }
                    ]
                }
            )
        )
        events.append(event({"tool_calls": [{"index": i, "function": {"arguments": args[5:]}}]}))
    events.append(event({}, finish))
    if usage:
        events.append(json.dumps({**base, "choices": [], "usage": USAGE}))
    return [*events, "[DONE]"]


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)] if text else []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LoopbackServer  # pyright: ignore[reportIncompatibleVariableOverride]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            }
        )
        reply = self.server.next_reply()
        time.sleep(reply.delay)
        self.close_connection = True
        if reply.kind == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
        elif reply.kind == "message":
            finish = "tool_calls" if reply.message.get("tool_calls") else "stop"
            if body.get("stream"):
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(stream_events(reply.message, finish, usage), chunked=True, drop=False)
            else:
                self._send(
                    200,
                    json.dumps(completion_json(reply.message, finish)).encode(),
                    "application/json",
                    {},
                )
        elif reply.kind == "http":
            self._send(reply.status, reply.body, reply.content_type, reply.headers)
        else:
            self._stream(reply.events, chunked=reply.chunked, drop=reply.drop)

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, events: list[str], *, chunked: bool, drop: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for payload in events:
            data = f"data: {payload}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            self.wfile.flush()
        if drop:
            self.connection.shutdown(socket.SHUT_RDWR)
        elif chunked:
            self.wfile.write(b"0\r\n\r\n")


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict[str, Any]] = []
        self.replies: list[Reply] = []
        self.thread = threading.Thread()
        self._lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout test) leaves a broken pipe; that is expected

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def next_reply(self) -> Reply:
        with self._lock:
            if not self.replies:
                return error(599, "the test server ran out of scripted replies")
            return self.replies.pop(0)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]


def serve() -> LoopbackServer:
    """Start a server on a free loopback port (stop it with `stop`)."""
    srv = LoopbackServer()
    srv.thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    srv.thread.start()
    return srv


def stop(srv: LoopbackServer) -> None:
    srv.shutdown()
    srv.server_close()
    srv.thread.join()


def running() -> Iterator[LoopbackServer]:
    """A generator for pytest fixtures: a started server, stopped afterwards."""
    srv = serve()
    yield srv
    stop(srv)
