"""The HTTP clients `ChatOpenAI` and `OpenAI` hand the `openai` SDK: each attempt held to a total
deadline, each reply to a size limit.

httpx's timeouts bound each read, so a server sending a byte every half second kept a call with
`timeout=2` going for as long as it liked. Here the SDK's read timeout is the attempt's total
deadline (each retry gets its own): the time left bounds each phase (connecting, sending, the
status line and headers) when it starts, and every read of the body (the async path cancels a read
at the deadline; the sync one checks after each read, and each read is bounded by the time left
when the body began). A late attempt raises httpx's `ReadTimeout`, which the SDK retries and then
reports as a timeout (`ModelConnectionError`, or `StreamInterruptedError` once a stream began).

A reply body is read to at most `MAX_REPLY_BYTES` after decoding; more raises
`InvalidResponseError`. gzip and deflate (the only encodings asked for) are inflated here in
bounded pieces, so a small compressed body cannot grow into hundreds of megabytes; a reply in
an encoding that was not asked for is refused. The SDK's client defaults are kept (its
`DefaultHttpxClient`: connection limits, redirects, proxies from the environment).
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx2
import openai

from actloop.models._errors import InvalidResponseError

__all__ = ["MAX_REPLY_BYTES", "http_client"]

MAX_REPLY_BYTES = 64 * 2**20
"""The most a reply body may hold, decoded (64 MiB; a chat completion is a few kilobytes)."""

_ENCODINGS = "gzip, deflate"
_PIECE = 2**16
_DEADLINE = "actloop.deadline"


class _SyncClient(openai.DefaultHttpxClient):
    """Closed when dropped, as the SDK closes its own default client (a client handed to the SDK
    is the caller's to close, so without this each dropped model left its connections open)."""

    def __del__(self) -> None:
        if not self.is_closed:
            try:
                self.close()
            except Exception:  # a finalizer must not raise
                pass


class _AsyncClient(openai.DefaultAsyncHttpxClient):
    """Closed when dropped, on the running loop when there is one (the SDK does the same)."""

    def __del__(self) -> None:
        if not self.is_closed:
            try:
                asyncio.get_running_loop().create_task(self.aclose())
            except Exception:  # a finalizer must not raise
                pass


def http_client(asynchronous: bool) -> Any:
    """The SDK's default HTTP client (sync or async) with the deadline and the size limit."""
    if asynchronous:
        return _AsyncClient(event_hooks={"request": [_aon_request], "response": [_aon_response]})
    return _SyncClient(event_hooks={"request": [_on_request], "response": [_on_response]})


class _Timeouts(dict[str, float | None]):
    """httpcore's per-phase timeouts: each phase, when it starts, gets what is left of the
    attempt's deadline (connecting at most the connect timeout given)."""

    def __init__(self, given: dict[str, float | None], deadline: float) -> None:
        super().__init__(given)
        self.deadline = deadline

    def get(self, key: str, default: Any = None) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        left = max(self.deadline - time.monotonic(), 0.001)  # 0 would mean "do not wait"
        given = super().get(key, default)
        return left if given is None else min(given, left)


def _on_request(request: Any) -> None:
    """Start the attempt's clock; ask only for encodings we inflate in bounded pieces."""
    request.headers["Accept-Encoding"] = _ENCODINGS
    given: dict[str, float | None] = dict(request.extensions.get("timeout") or {})
    total = given.get("read")
    if total is not None:
        deadline = time.monotonic() + total
        request.extensions["timeout"] = _Timeouts(given, deadline)
        request.extensions[_DEADLINE] = (deadline, total)


async def _aon_request(request: Any) -> None:
    _on_request(request)


def _on_response(response: Any) -> None:
    response.stream = _SyncReply(response.stream, _Reading(response))


async def _aon_response(response: Any) -> None:
    response.stream = _AsyncReply(response.stream, _Reading(response))


class _Reading:
    """One reply body being read: its deadline, its decoder and how much it has given."""

    def __init__(self, response: Any) -> None:
        self.request = response.request
        self.url = str(response.request.url)
        self.status = response.status_code
        self.deadline, self.total = response.request.extensions.get(_DEADLINE, (None, None))
        self.size = 0
        coding = response.headers.get("content-encoding", "").strip().lower()
        self.decoder: Any = None
        self.headerless = coding != "deflate"
        """Whether a deflate body could still turn out to be raw (no zlib header)."""
        if coding in ("gzip", "x-gzip"):
            self.decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            self.decoder = zlib.decompressobj()
        elif coding not in ("", "identity"):
            response.close()
            raise InvalidResponseError(
                f"{self.url} answered {self.status} with Content-Encoding {coding!r}, which was "
                f"not asked for (Accept-Encoding: {_ENCODINGS})",
                status_code=self.status,
            )
        if self.decoder is not None:
            del response.headers["content-encoding"]  # inflated here, not by httpx

    def left(self) -> float | None:
        """Seconds left before the deadline (None: no deadline); raises once it has passed."""
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.late()
        return left

    def late(self) -> Exception:
        return httpx2.ReadTimeout(
            f"no complete reply from {self.url} within timeout={self.total:g} s "
            "(a total deadline for each attempt)",
            request=self.request,
        )

    def pieces(self, chunk: bytes) -> Iterator[bytes]:
        """The decoded pieces of `chunk` (at most `_PIECE` bytes each), counted to the limit."""
        if self.decoder is None:
            yield self.count(chunk)
            return
        data = chunk
        while data:
            try:
                piece = self.decoder.decompress(data, _PIECE)
            except zlib.error as exc:
                if self.headerless:
                    raise httpx2.DecodingError(str(exc), request=self.request) from exc
                self.headerless = True  # servers send deflate without its zlib header too
                self.decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self.headerless = True
            yield self.count(piece)
            data = self.decoder.unconsumed_tail

    def count(self, piece: bytes) -> bytes:
        self.size += len(piece)
        if self.size > MAX_REPLY_BYTES:
            raise InvalidResponseError(
                f"the reply from {self.url} is larger than {MAX_REPLY_BYTES} bytes (decoded); "
                "actloop reads no more than that",
                status_code=self.status,
            )
        return piece


class _SyncReply(httpx2.SyncByteStream):
    """A reply body read within the deadline and the size limit (an httpx SyncByteStream)."""

    def __init__(self, inner: Any, reading: _Reading) -> None:
        self.inner, self.reading = inner, reading

    def __iter__(self) -> Iterator[bytes]:
        reading = self.reading
        try:
            for chunk in self.inner:
                reading.left()
                yield from reading.pieces(chunk)
        except httpx2.TimeoutException as exc:  # a read outlived the time left: the deadline
            raise reading.late() from exc
        if reading.decoder is not None:
            yield reading.count(reading.decoder.flush())

    def close(self) -> None:
        self.inner.close()


class _AsyncReply(httpx2.AsyncByteStream):
    """Async twin of `_SyncReply`: a read still waiting at the deadline is cancelled."""

    def __init__(self, inner: Any, reading: _Reading) -> None:
        self.inner, self.reading = inner, reading

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reading = self.reading
        chunks = aiter(self.inner)
        while True:
            try:
                with anyio.fail_after(reading.left()):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                break
            except (TimeoutError, httpx2.TimeoutException):
                raise reading.late() from None
            for piece in reading.pieces(chunk):
                yield piece
        if reading.decoder is not None:
            yield reading.count(reading.decoder.flush())

    async def aclose(self) -> None:
        await self.inner.aclose()
