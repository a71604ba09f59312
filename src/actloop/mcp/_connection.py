"""One live session with an MCP server, opened, served and closed by one task (anyio's rule).

The task enters the transport (actloop's stdio transport, `_stdio`, or the SDK's streamable
HTTP), a pump that notices the end of the server's stream, and the SDK's `Client`, which speaks
either protocol era: it probes `server/discover` (the 2026-07-28 revision, no handshake, the
protocol version in each request's `_meta`) and falls back to the `initialize` handshake of a
2025-era server. Then the task waits until it is told to stop or the server's stream ends.
Leaving the task ends the server (the stdio transport signals its process group). A stdio
server's stderr goes to an unlinked temporary file, so its last line can be quoted when it
crashes and it never floods the terminal.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client, MCPError, types
from mcp.shared.message import SessionMessage

from actloop.mcp._errors import Lost, NoAnswer, TooMany
from actloop.mcp._input import call_asking
from actloop.mcp._stdio import Garbage
from actloop.mcp._tasks import TaskHandle, TasksExtension, TaskStarted

if TYPE_CHECKING:
    from actloop.tools._input import InputCall

__all__ = ["Connection", "Lost", "NoAnswer", "ServerSpec", "TooMany"]


@dataclass(frozen=True)
class ServerSpec:
    """Where the server is: a command line (stdio) or a URL (streamable HTTP)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=lambda: {})

    @property
    def label(self) -> str:
        """The command line or the URL: how the server is named until it names itself."""
        if self.url is not None:
            return self.url
        return " ".join([os.path.basename(self.command or ""), *self.args])


_PULSE = 2.0
"""Seconds between pings while an HTTP call to a 2025-era server is waiting."""
MAX_PAGES = 100
"""Pages of `tools/list` read at most (a server answering with a cursor for ever is refused)."""
MAX_TOOLS = 10_000
"""Tools listed at most."""

Stream = MemoryObjectReceiveStream[Any]


class Connection:
    """A session with one server; `open`, `call`, `list_tools`, `stop` run on the toolset's loop."""

    def __init__(
        self, spec: ServerSpec, on_tools_changed: Any, max_bytes: int, tasks: bool = True
    ) -> None:
        self.spec = spec
        self.tasks = tasks
        """Declare the tasks extension: a server may answer a call with a task (`_tasks`)."""
        self.client: Client | None = None
        self.garbage = Garbage()
        """The lines on stdout that were not JSON-RPC messages (counted, the last few kept)."""
        self.max_bytes = max_bytes
        self._on_tools_changed = on_tools_changed
        self._end = asyncio.Event()
        self.closed = asyncio.Event()
        """Set when the session task has ended (the server process is gone)."""
        self._task: asyncio.Task[None] | None = None
        self._errlog: TextIO | None = None
        self._errread: IO[bytes] | None = None
        self.error: BaseException | None = None
        """What ended the session task, if it failed."""
        self.pinged = False
        """A heartbeat ping was sent: a call had been waiting, so it had reached the server."""

    # -- life ------------------------------------------------------------------------------------

    async def open(self, seconds: float) -> str | None:
        """Start the server (or reach it) and agree on the protocol within `seconds` seconds;
        the server's name, if it gives one."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[str | None] = loop.create_future()
        self._task = asyncio.ensure_future(self._serve(ready, seconds))
        await asyncio.wait({ready, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            return ready.result()  # raises what stopped the handshake
        raise Lost("the connection ended during the handshake")

    async def _serve(self, ready: asyncio.Future[str | None], seconds: float) -> None:
        try:
            # one scope for the session's whole life (anyio's rule): its deadline bounds the
            # handshake, then is lifted
            with anyio.CancelScope(deadline=anyio.current_time() + seconds) as scope:
                await self._session(ready, scope)
            if scope.cancelled_caught and not ready.done():
                raise NoAnswer(f"did not finish the MCP handshake within {seconds:g} s")
        except Exception as exc:
            self.error = exc
            _fail(ready, exc)
        except BaseException as exc:  # cancelled: the process is already being ended
            _fail(ready, Lost(f"the connection was cancelled ({type(exc).__name__})"))
            raise
        finally:
            self.client = None
            self.closed.set()

    async def _session(self, ready: asyncio.Future[str | None], scope: anyio.CancelScope) -> None:
        """Connect, then wait until told to stop or the server's stream ends."""
        async with AsyncExitStack() as stack:
            client = Client(
                self._watched(),
                mode="auto",
                cache=None,  # a tools/list after list_changed must reach the server
                message_handler=self._on_message,
                extensions=[TasksExtension()] if self.tasks else None,
            )
            await stack.enter_async_context(client)
            scope.deadline = float("inf")
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)  # before the client is left
            self.client = client
            if self.modern:
                group.start_soon(self._listen, client)
            info = client.server_info
            ready.set_result(info.name if info is not None else None)
            await self._end.wait()

    @asynccontextmanager
    async def _watched(self) -> AsyncGenerator[tuple[Stream, Any]]:
        """The transport's streams, with the end of the server's stream noticed (`_end`)."""
        async with AsyncExitStack() as stack:
            read, write = await self._transport(stack)
            inbox, session_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            for stream in (inbox, session_read):
                stack.callback(stream.close)
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            group.start_soon(self._pump, read, inbox)
            yield session_read, write

    async def _transport(self, stack: AsyncExitStack) -> tuple[Stream, Any]:
        spec = self.spec
        if spec.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = httpx2.AsyncClient(
                headers=spec.headers, timeout=httpx2.Timeout(30.0, read=300.0)
            )
            stack.push_async_callback(client.aclose)
            read, write = await stack.enter_async_context(
                streamable_http_client(
                    spec.url, http_client=client, max_sse_event_size=self.max_bytes
                )
            )
            return cast("Stream", read), write
        from actloop.mcp._stdio import stdio_transport

        return await stack.enter_async_context(
            stdio_transport(
                spec.command or "",
                list(spec.args),
                env=spec.env,
                cwd=spec.cwd,
                errlog=self._open_errlog(),
                garbage=self.garbage,
                max_bytes=self.max_bytes,
            )
        )

    def _open_errlog(self) -> TextIO:
        """An unlinked temporary file for the server's stderr, with a second handle to read it."""
        fd, path = tempfile.mkstemp(prefix="actloop-mcp-", suffix=".log")
        os.close(fd)
        self._errlog = open(path, "a", encoding="utf-8")
        self._errread = open(path, "rb")
        os.unlink(path)
        return self._errlog

    async def _pump(self, read: Stream, inbox: MemoryObjectSendStream[Any]) -> None:
        """Forward the server's messages; a transport error item is counted as garbage."""
        try:
            with inbox:
                async for item in read:
                    if isinstance(item, Exception):
                        self.garbage.add(str(item).encode())
                        continue
                    await inbox.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        self._end.set()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._on_tools_changed()

    async def _listen(self, client: Client) -> None:
        """On a 2026-07-28 server, changes of the tool list come on a `subscriptions/listen`
        stream (best effort: a server without it just never reports changes)."""
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _ in events:
                    self._on_tools_changed()
        except Exception:
            return

    @property
    def modern(self) -> bool:
        """True on a 2026-07-28 (stateless, no handshake) connection."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        client = self.client
        session = client.session if client is not None else None
        return session is not None and session.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def stop(self, seconds: float = 10.0) -> None:
        """End the session and the server process; cancel the task if it takes too long."""
        self._end.set()
        task = self._task
        if task is None:
            return
        done, _ = await asyncio.wait({task}, timeout=seconds)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=seconds)

    def dispose(self) -> None:
        """Close the stderr file (after `stop`)."""
        for handle in (self._errlog, self._errread):
            if handle is not None:
                handle.close()
        self._errlog = self._errread = None

    @property
    def unreached(self) -> bool:
        """True when the session ended because the server could not be reached (HTTP): a
        request sent then never got to the server, so it is safe to send it again."""
        import httpx2

        if self.pinged:
            return False
        exc: BaseException | None = self.error
        while exc is not None and not isinstance(exc, httpx2.HTTPError):
            inner: Any = getattr(exc, "exceptions", None)
            exc = cast("BaseException", inner[0]) if isinstance(inner, tuple) and inner else None
        return isinstance(exc, (httpx2.ConnectError, httpx2.ConnectTimeout))

    @property
    def up(self) -> bool:
        """True while the session can take calls."""
        return self.client is not None and not self._end.is_set()

    def stderr_tail(self) -> str:
        """The last non-empty line the server wrote to stderr ('' if none, or over HTTP)."""
        reader = self._errread
        if reader is None:
            return ""
        reader.seek(0, os.SEEK_END)
        reader.seek(max(reader.tell() - 4000, 0))
        lines = [ln.strip() for ln in reader.read().decode(errors="replace").splitlines()]
        return next((ln for ln in reversed(lines) if ln), "")

    # -- requests --------------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        seconds: float | None,
        meta: dict[str, Any] | None = None,
        answered: InputCall | None = None,
    ) -> types.CallToolResult:
        """`tools/call`, raced against the end of the connection and the timeout; `answered`
        re-sends a call that asked for input with a person's answers and its request state
        (NeedsInput when the server asks a person for input)."""
        client = self.client
        if client is None or not self.up:
            raise Lost("not connected")
        request = call_asking(client, name, arguments, meta or None, answered)
        result = await self._race(request, seconds)
        if isinstance(result, TaskHandle):  # the server runs the call as a task (`_tasks`)
            raise TaskStarted(result)
        return result

    async def send(self, request: Any, result_type: Any, seconds: float | None) -> Any:
        """A request the SDK has no helper for (an extension's, such as `tasks/get`), raced
        like a call; returns the answer as `result_type`."""
        client = self.client
        if client is None or not self.up:
            raise Lost("not connected")
        return await self._race(client.session.send_request(request, result_type), seconds)

    async def list_tools(self, seconds: float) -> list[types.Tool]:
        """Every tool the server offers: all pages, within `seconds` in all, at most
        `MAX_PAGES` pages and `MAX_TOOLS` tools."""
        client = self.client
        if client is None or not self.up:
            raise Lost("not connected")
        deadline = time.monotonic() + seconds
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            left = deadline - time.monotonic()
            if left <= 0:
                raise NoAnswer
            page = await self._race(client.list_tools(cursor=cursor), left)
            tools += page.tools
            if len(tools) > MAX_TOOLS:
                raise TooMany(f"listed more than {MAX_TOOLS} tools")
            cursor = page.next_cursor
            if not cursor:
                return tools
        raise TooMany(f"kept paging its tool list past {MAX_PAGES} pages")

    async def _race(self, request: Any, seconds: float | None) -> Any:
        call = asyncio.ensure_future(request)
        ended = asyncio.ensure_future(self.closed.wait())
        legacy_http = self.spec.url is not None and not self.modern
        pulse = asyncio.ensure_future(self._heartbeat()) if legacy_http else None
        try:
            done, _ = await asyncio.wait(
                {call, ended}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for task in (ended, pulse):
                if task is not None:
                    task.cancel()
            if not call.done():
                call.cancel()
        if call in done:
            try:
                return call.result()
            except MCPError as exc:
                if exc.code == types.CONNECTION_CLOSED:
                    raise Lost(exc.message) from None
                raise
            except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                raise Lost(type(exc).__name__) from None
        if ended in done:
            raise Lost("the connection ended")
        raise NoAnswer

    async def _heartbeat(self) -> None:
        """While an HTTP call waits, ping the server now and then: the SDK drops a response
        stream cut by a dead server silently, so without this the call would wait for its
        timeout. A failed ping ends the connection, which ends the call."""
        client = self.client
        while client is not None:
            await asyncio.sleep(_PULSE)
            self.pinged = True
            try:
                with anyio.fail_after(_PULSE * 5):
                    await client.session.send_ping()
            except Exception:
                self._end.set()
                return


def _fail(ready: asyncio.Future[Any], exc: BaseException) -> None:
    if not ready.done():
        ready.set_exception(exc)
