"""One live session with an MCP server, opened, served and closed by one task (anyio's rule).

The task enters the transport (a child process over stdio, or streamable HTTP), a pump that
forwards the server's messages to the session, and the SDK's `ClientSession`; then it waits until
it is told to stop or the server's stream ends. Lines on stdout that are not JSON-RPC are counted
and dropped by the pump (the SDK would pass them to the session as errors). Leaving the task ends
the server process: stdin closed, then SIGTERM and SIGKILL to its process group (the SDK's
shutdown sequence). A stdio server's stderr goes to an unlinked temporary file, so its last line
can be quoted when it crashes and it never floods the terminal.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import IO, Any, TextIO, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession, McpError, types
from mcp.shared.message import SessionMessage

__all__ = ["Connection", "Lost", "NoAnswer", "ServerSpec"]


class _Unparsable(logging.Filter):
    """Drops the SDK's traceback for each stdout line that is not JSON-RPC: the pump counts
    those lines and the call's error quotes them."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to parse JSONRPC message")


logging.getLogger("mcp.client.stdio").addFilter(_Unparsable())


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


class Lost(Exception):
    """The connection ended (or was never up) before the call was answered."""


class NoAnswer(Exception):
    """The server did not answer within the time allowed."""


_PULSE = 2.0
"""Seconds between pings while an HTTP call is waiting."""

Inbox = MemoryObjectSendStream[SessionMessage | Exception]


class Connection:
    """A session with one server; `open`, `call`, `list_tools`, `stop` run on the toolset's loop."""

    def __init__(self, spec: ServerSpec, on_tools_changed: Any) -> None:
        self.spec = spec
        self.session: ClientSession | None = None
        self.garbage: list[str] = []
        """Excerpts of the lines on stdout that were not JSON-RPC messages."""
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

    async def open(self, seconds: float) -> types.InitializeResult:
        """Start the server (or reach it) and finish the handshake within `seconds` seconds."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[types.InitializeResult] = loop.create_future()
        self._task = asyncio.ensure_future(self._serve(ready, seconds))
        await asyncio.wait({ready, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            return ready.result()  # raises what stopped the handshake
        raise Lost("the connection ended during the handshake")

    async def _serve(self, ready: asyncio.Future[types.InitializeResult], seconds: float) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await self._transport(stack)
                inbox, session_read = anyio.create_memory_object_stream[SessionMessage | Exception](
                    0
                )
                for stream in (read, write, inbox, session_read):  # closed even if never used
                    stack.push_async_callback(stream.aclose)
                group = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(group.cancel_scope.cancel)  # after the session, before the group
                group.start_soon(self._pump, read, inbox)
                session = await stack.enter_async_context(
                    ClientSession(session_read, write, message_handler=self._on_message)
                )
                try:
                    with anyio.fail_after(seconds):
                        info = await session.initialize()
                except TimeoutError:
                    raise NoAnswer(
                        f"did not finish the MCP handshake within {seconds:g} s"
                    ) from None
                self.session = session
                ready.set_result(info)
                await self._end.wait()
        except Exception as exc:
            self.error = exc
            _fail(ready, exc)
        except BaseException as exc:  # cancelled: the process is already being ended
            _fail(ready, Lost(f"the connection was cancelled ({type(exc).__name__})"))
            raise
        finally:
            self.session = None
            self.closed.set()

    async def _transport(
        self, stack: AsyncExitStack
    ) -> tuple[MemoryObjectReceiveStream[SessionMessage | Exception], Any]:
        spec = self.spec
        if spec.url is not None:
            import httpx
            from mcp.client.streamable_http import streamable_http_client

            client = await stack.enter_async_context(
                httpx.AsyncClient(headers=spec.headers, timeout=httpx.Timeout(30.0, read=300.0))
            )
            read, write, _ = await stack.enter_async_context(
                streamable_http_client(spec.url, http_client=client)
            )
            return read, write
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=spec.command or "", args=list(spec.args), env=spec.env, cwd=spec.cwd
        )
        errlog = self._open_errlog()
        return await stack.enter_async_context(stdio_client(params, errlog=errlog))

    def _open_errlog(self) -> TextIO:
        """An unlinked temporary file for the server's stderr, with a second handle to read it."""
        fd, path = tempfile.mkstemp(prefix="actloop-mcp-", suffix=".log")
        os.close(fd)
        self._errlog = open(path, "a", encoding="utf-8")
        self._errread = open(path, "rb")
        os.unlink(path)
        return self._errlog

    async def _pump(
        self, read: MemoryObjectReceiveStream[SessionMessage | Exception], inbox: Inbox
    ):
        """Forward the server's messages; count and drop lines that are not JSON-RPC."""
        async with inbox:
            async for item in read:
                if isinstance(item, Exception):
                    self.garbage.append(_excerpt(item))
                    continue
                await inbox.send(item)
        self._end.set()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ToolListChangedNotification
        ):
            self._on_tools_changed()

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
        import httpx

        if self.pinged:
            return False
        exc: BaseException | None = self.error
        while exc is not None and not isinstance(exc, httpx.HTTPError):
            inner: Any = getattr(exc, "exceptions", None)
            exc = cast("BaseException", inner[0]) if isinstance(inner, tuple) and inner else None
        return isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))

    @property
    def up(self) -> bool:
        """True while the session can take calls."""
        return self.session is not None and not self._end.is_set()

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
        self, name: str, arguments: dict[str, Any], seconds: float | None
    ) -> types.CallToolResult:
        """`tools/call`, raced against the end of the connection and the timeout."""
        session = self.session
        if session is None or not self.up:
            raise Lost("not connected")
        return await self._race(session.call_tool(name, arguments), seconds)

    async def list_tools(self, seconds: float | None) -> list[types.Tool]:
        """Every tool the server offers (all pages)."""
        session = self.session
        if session is None or not self.up:
            raise Lost("not connected")
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await self._race(session.list_tools(params=_page(cursor)), seconds)
            tools += page.tools
            cursor = page.nextCursor
            if not cursor:
                return tools

    async def _race(self, request: Any, seconds: float | None) -> Any:
        call = asyncio.ensure_future(request)
        ended = asyncio.ensure_future(self.closed.wait())
        pulse = asyncio.ensure_future(self._heartbeat()) if self.spec.url is not None else None
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
            except McpError as exc:
                if exc.error.code == types.CONNECTION_CLOSED:
                    raise Lost(exc.error.message) from None
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
        session = self.session
        while session is not None:
            await asyncio.sleep(_PULSE)
            self.pinged = True
            try:
                with anyio.fail_after(_PULSE * 5):
                    await session.send_ping()
            except Exception:
                self._end.set()
                return


def _page(cursor: str | None) -> types.PaginatedRequestParams | None:
    return types.PaginatedRequestParams(cursor=cursor) if cursor else None


def _fail(ready: asyncio.Future[Any], exc: BaseException) -> None:
    if not ready.done():
        ready.set_exception(exc)


def _excerpt(exc: Exception) -> str:
    """The offending line of a parse error (pydantic keeps it as the error's input), shortened."""
    errors = getattr(exc, "errors", None)
    text = str(exc)
    if callable(errors):
        try:
            found: Any = errors()
            text = str(found[0].get("input", text))
        except (IndexError, TypeError, AttributeError):
            pass
    return text if len(text) <= 80 else text[:77] + "..."
