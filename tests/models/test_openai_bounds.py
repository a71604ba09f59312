"""`ChatOpenAI` and `OpenAI` hold each attempt to `timeout` in total and each reply to a size limit.

The servers here are raw sockets on loopback, so they can do what no framework would: trickle a
reply one byte every half second, or send a small gzip body that inflates to hundreds of megabytes.
"""

from __future__ import annotations

import functools
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator

import pytest

from actloop.messages import AIMessage, HumanMessage
from actloop.models import (
    ChatOpenAI,
    InvalidResponseError,
    ModelConnectionError,
    OpenAI,
    StreamInterruptedError,
)
from support.openai_server import LoopbackServer, message, running

Answer = Callable[[socket.socket, dict[str, object]], None]

MAX_REPLY_BYTES = 64 * 2**20
"""The documented limit of a reply body, decoded (`actloop.models._openai_http`)."""
DEADLINE = 2.0
GENEROUS = 6.0
"""Upper bound proving a call did not outlive its deadline (trickled replies last 30 s)."""


class RawServer:
    """Reads one HTTP request per connection and hands the socket to `answer`."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(body) < length:
                body += conn.recv(65536)
            try:
                self.answer(conn, json.loads(body))
            except OSError:
                pass  # the client gave up: what these tests want

    def close(self) -> None:
        self.sock.close()


def trickle(conn: socket.socket, request: dict[str, object]) -> None:
    """Headers at once (and a stream's first event), then one byte every half second (30 s)."""
    rest = b" " * 60
    if request.get("stream"):
        first = b'data: {"choices":[{"index":0,"delta":{"content":"hello"}}]}\n\n'
        head = "Content-Type: text/event-stream\r\nConnection: close\r\n"
    else:
        first, rest = b"", rest + b"{}"
        head = f"Content-Type: application/json\r\nContent-Length: {len(rest)}\r\n"
    conn.sendall(f"HTTP/1.1 200 OK\r\n{head}\r\n".encode() + first)
    for byte in rest:
        conn.sendall(bytes([byte]))
        time.sleep(0.5)


@functools.cache
def gzip_bomb() -> bytes:
    """About 200 KB that inflate to 200 MiB of spaces (valid JSON white space, were it complete)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * 2**20
    return b"".join([*(packer.compress(block) for _ in range(200)), packer.flush()])


def bomb(conn: socket.socket, request: dict[str, object]) -> None:
    kind = "text/event-stream" if request.get("stream") else "application/json"
    body = gzip_bomb()
    conn.sendall(
        f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Encoding: gzip\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


@pytest.fixture
def slow() -> Iterator[RawServer]:
    server = RawServer(trickle)
    yield server
    server.close()


@pytest.fixture
def large() -> Iterator[RawServer]:
    gzip_bomb()  # made before the request, so the reply starts at once
    server = RawServer(bomb)
    yield server
    server.close()


def chat(server: RawServer, timeout: float = DEADLINE) -> ChatOpenAI:
    return ChatOpenAI(base_url=server.url, api_key="k", timeout=timeout, max_retries=0)


def late(url: str) -> str:
    return (
        f"no complete reply from {url}/chat/completions within timeout=2 s (a total deadline "
        "for each attempt)"
    )


def test_a_trickled_reply_ends_at_the_deadline(slow: RawServer) -> None:
    # Before: httpx's timeout bounded each read, so the call lasted the whole 30 s trickle.
    llm = chat(slow)
    start = time.monotonic()
    with pytest.raises(ModelConnectionError) as caught:
        llm.invoke("hi")
    assert time.monotonic() - start < GENEROUS
    assert str(caught.value) == (
        f"the request to {slow.url}/chat/completions timed out: {late(slow.url)} "
        "(retried up to max_retries=0 times)"
    )


async def test_a_trickled_reply_ends_at_the_deadline_async(slow: RawServer) -> None:
    llm = chat(slow)
    start = time.monotonic()
    with pytest.raises(ModelConnectionError) as caught:
        await llm.ainvoke("hi")
    assert time.monotonic() - start < GENEROUS
    assert str(caught.value).endswith(f"{late(slow.url)} (retried up to max_retries=0 times)")


def test_a_trickled_stream_ends_at_the_deadline(slow: RawServer) -> None:
    llm = chat(slow)
    start = time.monotonic()
    chunks: list[str] = []
    with pytest.raises(StreamInterruptedError) as caught:
        for chunk in llm.stream("hi"):
            chunks.append(chunk.text)
    assert time.monotonic() - start < GENEROUS
    assert chunks == ["hello"]
    assert caught.value.partial is not None and caught.value.partial.text == "hello"
    assert f"the connection failed: ReadTimeout('{late(slow.url)}')" in str(caught.value)


async def test_a_trickled_stream_ends_at_the_deadline_async(slow: RawServer) -> None:
    llm = chat(slow)
    start = time.monotonic()
    chunks: list[str] = []
    with pytest.raises(StreamInterruptedError) as caught:
        async for chunk in llm.astream("hi"):
            chunks.append(chunk.text)
    assert time.monotonic() - start < GENEROUS
    assert chunks == ["hello"]
    assert f"the connection failed: ReadTimeout('{late(slow.url)}')" in str(caught.value)


def test_the_completions_model_ends_at_the_deadline_too(slow: RawServer) -> None:
    llm = OpenAI(base_url=slow.url, api_key="k", timeout=DEADLINE, max_retries=0)
    start = time.monotonic()
    with pytest.raises(ModelConnectionError) as caught:
        llm.invoke("hi")
    assert time.monotonic() - start < GENEROUS
    assert str(caught.value) == (
        f"the request to {slow.url}/completions timed out: no complete reply from "
        f"{slow.url}/completions within timeout=2 s (a total deadline for each attempt) "
        "(retried up to max_retries=0 times)"
    )


def too_large(url: str) -> str:
    return (
        f"the reply from {url}/chat/completions is larger than {MAX_REPLY_BYTES} bytes "
        "(decoded); actloop reads no more than that"
    )


def test_a_gzip_bomb_is_refused_at_the_size_limit(large: RawServer) -> None:
    # Before: the 200 KB body was inflated whole (200 MiB) before anything looked at it.
    with pytest.raises(InvalidResponseError) as caught:
        chat(large, timeout=60).invoke("hi")
    assert str(caught.value) == too_large(large.url)


async def test_a_gzip_bomb_is_refused_at_the_size_limit_async(large: RawServer) -> None:
    with pytest.raises(InvalidResponseError) as caught:
        await chat(large, timeout=60).ainvoke("hi")
    assert str(caught.value) == too_large(large.url)


def test_a_gzip_bomb_stream_is_refused_at_the_size_limit(large: RawServer) -> None:
    with pytest.raises(StreamInterruptedError) as caught:
        list(chat(large, timeout=60).stream("hi"))
    assert f"the connection failed: InvalidResponseError({too_large(large.url)!r})" in str(
        caught.value
    )


# -- a lone surrogate in a request ---------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


SURROGATES = [HumanMessage("a\ud800b"), AIMessage("bad byte \udcff"), HumanMessage("\ud83d\ude00")]
"""A model-written lone surrogate, a byte kept by `surrogateescape`, and a surrogate pair."""
SENT = [
    {"role": "user", "content": "a\ufffdb"},
    {"role": "assistant", "content": "bad byte \ufffd"},
    {"role": "user", "content": "\U0001f600"},
]


def test_a_lone_surrogate_is_sent_as_a_replacement_character(server: LoopbackServer) -> None:
    # Before: a bare UnicodeEncodeError from the SDK's request encoding.
    server.script(message("one"), message("two"))
    llm = ChatOpenAI(base_url=server.url, api_key="k", max_retries=0)
    assert llm.invoke(SURROGATES).content == "one"
    assert "".join(c.text for c in llm.stream(SURROGATES)) == "two"
    assert [b["messages"] for b in server.bodies] == [SENT, SENT]


async def test_a_lone_surrogate_is_sent_as_a_replacement_character_async(
    server: LoopbackServer,
) -> None:
    server.script(message("one"), message("two"))
    llm = ChatOpenAI(base_url=server.url, api_key="k", max_retries=0)
    assert (await llm.ainvoke(SURROGATES)).content == "one"
    assert "".join([c.text async for c in llm.astream(SURROGATES)]) == "two"
    assert [b["messages"] for b in server.bodies] == [SENT, SENT]
