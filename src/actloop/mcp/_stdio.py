"""The stdio transport: an MCP server as a child process, its stdin and stdout as the channel.

actloop's own (not the SDK's `stdio_client`) for four promises the SDK's does not keep:
- lines are split as they arrive, so a large result is read in time linear in its size, and a
  line longer than `max_bytes` is dropped unread past the limit: the call it answers gets an error
  saying so (`TooLarge`), not a timeout;
- stdout lines that are not JSON-RPC are counted and only the last few kept (`Garbage`), so a
  server flooding its stdout uses bounded memory and does not slow the messages behind it;
- the server runs in its own process group, and closing always signals the group, also when the
  server already exited by itself (its children would survive otherwise): stdin closed, a grace,
  SIGTERM to the group, a grace, SIGKILL to what is left;
- its stderr goes to a file the caller gives (the toolset quotes its last line).
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager, suppress
from typing import IO, Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

__all__ = ["TOO_LARGE", "Garbage", "stdio_transport"]

EXIT_GRACE = 2.0
"""Seconds the server gets to exit after its stdin closes, and its group after SIGTERM."""
TOO_LARGE = -32099
"""The JSON-RPC error code of the error put in place of an answer over the size limit."""
_KEEP = 5
"""Non-JSON-RPC lines kept (the last ones)."""
_CHUNK = 1 << 16
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')

_SAFE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR")


class Garbage:
    """Lines on stdout that were not JSON-RPC: how many, and the last few (their start)."""

    def __init__(self) -> None:
        self.count = 0
        self.kept: deque[tuple[int, bytes]] = deque(maxlen=_KEEP)

    def add(self, line: bytes) -> None:
        """Count one line; keep its start."""
        self.kept.append((self.count, line[:200]))
        self.count += 1

    def since(self, mark: int) -> tuple[int, list[str]]:
        """How many lines came since the count was `mark`, and those of them still kept."""
        return self.count - mark, [_short(line) for n, line in self.kept if n >= mark]


def _short(line: bytes) -> str:
    text = line.decode(errors="replace").strip()
    return text if len(text) <= 80 else text[:77] + "..."


def environment(extra: dict[str, str] | None) -> dict[str, str]:
    """A minimal environment (PATH, HOME, ...) with `extra` on top, as the SDK gives a server."""
    env = {k: v for k in _SAFE_ENV if (v := os.environ.get(k)) is not None}
    return env | (extra or {})


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    *,
    env: dict[str, str] | None,
    cwd: str | None,
    errlog: IO[str],
    garbage: Garbage,
    max_bytes: int,
) -> AsyncGenerator[tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[Any]]]:
    """Start the server; yield (messages from it, messages to it); end it and its group."""
    process = await anyio.open_process(
        [command, *args],
        env=environment(env),
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,
    )
    inbound_send, inbound = anyio.create_memory_object_stream[Any](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read, process, inbound_send, garbage, max_bytes)
            group.start_soon(_write, process, outbound_receive, inbound_send)
            try:
                yield inbound, outbound
            finally:
                with anyio.CancelScope(shield=True):
                    await _end(process)
                group.cancel_scope.cancel()
    finally:
        for stream in (inbound_send, inbound, outbound, outbound_receive):
            stream.close()


async def _read(
    process: Process,
    inbox: MemoryObjectSendStream[Any],
    garbage: Garbage,
    max_bytes: int,
) -> None:
    """Split stdout into lines (each chunk split once, so time is linear in the bytes read)
    and hand on the messages; a line over `max_bytes` is skipped without being kept."""
    stdout: ByteReceiveStream | None = process.stdout
    assert stdout is not None
    parts: list[bytes] = []  # the line being read, in pieces
    size = 0
    skipping: bytes | None = None  # the start of a line over the limit, being skipped
    with inbox:
        try:
            while True:
                try:
                    chunk = await stdout.receive(_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                lines = chunk.split(b"\n")
                tail = lines.pop()  # no newline after it (yet)
                for i, piece in enumerate(lines):
                    if i == 0 and (parts or skipping is not None):
                        if skipping is not None or size + len(piece) > max_bytes:
                            head = skipping if skipping is not None else b"".join(parts)[:200]
                            parts, size, skipping = [], 0, None
                            item = _too_large(head, max_bytes, garbage)
                        else:
                            parts.append(piece)
                            item = _parse(b"".join(parts), garbage)
                            parts, size = [], 0
                    elif len(piece) > max_bytes:
                        item = _too_large(piece[:200], max_bytes, garbage)
                    else:
                        item = _parse(piece, garbage)
                    if item is not None:
                        await inbox.send(item)
                if tail:
                    if skipping is None and size + len(tail) > max_bytes:
                        skipping = (b"".join(parts) + tail[:200])[:200]
                        parts, size = [], 0
                    elif skipping is None:
                        parts.append(tail)
                        size += len(tail)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # the session is gone


def _parse(line: bytes, garbage: Garbage) -> SessionMessage | None:
    """A JSON-RPC message, or None for a line that is not one (counted, not logged)."""
    stripped = line.strip()
    if not stripped:
        return None
    if stripped[:1] != b"{":
        garbage.add(stripped)
        return None
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(stripped, by_name=False))
    except ValueError:
        garbage.add(stripped)
        return None


def _too_large(head: bytes, max_bytes: int, garbage: Garbage) -> SessionMessage | None:
    """An error answer in place of a message over the limit (if its id can be read), so the
    call it answers fails at once with a clear reason."""
    found = _ID.search(head)
    if found is None or not head.lstrip().startswith(b"{"):
        garbage.add(head)
        return None
    raw = found.group(1)
    request_id: int | str = int(raw) if raw[:1] != b'"' else raw[1:-1].decode(errors="replace")
    error = types.ErrorData(code=TOO_LARGE, message=f"answer larger than {max_bytes} bytes")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


async def _write(
    process: Process,
    outbox: MemoryObjectReceiveStream[SessionMessage],
    inbox: MemoryObjectSendStream[Any],
) -> None:
    """Send the session's messages to stdin, one line each."""
    stdin = process.stdin
    assert stdin is not None
    try:
        with outbox:
            async for message in outbox:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await stdin.send(data.encode() + b"\n")
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        inbox.close()  # the server stopped reading: the session sees the connection end


async def _end(process: Process) -> None:
    """Close stdin; give the server a grace to exit; then SIGTERM its process group, a grace,
    SIGKILL. The group is signalled even when the server exited by itself: its children
    (a server's workers, a shell's commands) share the group and would outlive it."""
    if process.stdin is not None:
        with suppress(Exception):
            await process.stdin.aclose()
    await _exited(process, EXIT_GRACE)
    group = process.pid  # start_new_session: the server leads its own group
    if not _signal(group, signal.SIGTERM):
        await _exited(process, EXIT_GRACE)
        return
    with anyio.move_on_after(EXIT_GRACE):
        while _signal(group, 0):  # noqa: ASYNC110  # no event tells when a group is empty
            await anyio.sleep(0.02)
    _signal(group, signal.SIGKILL)
    await _exited(process, EXIT_GRACE)


async def _exited(process: Process, seconds: float) -> bool:
    """Wait (at most `seconds`) for the server process itself to end; reap it."""
    with anyio.move_on_after(seconds):
        # not process.wait(): it also waits for stdout's end, which a child may hold open
        while process.returncode is None:  # noqa: ASYNC110
            await anyio.sleep(0.01)
        return True
    return False


def _signal(group: int, sig: int) -> bool:
    """Send `sig` to the process group; False when no process is left in it."""
    if sys.platform == "win32":  # pragma: no cover  # the SDK's job objects are not used here
        return False
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
