"""MCPToolset: the tools of one MCP server, over stdio or streamable HTTP, sync or async.

The connection lives on the toolset's own event loop thread (`_thread`), so sync code, any event
loop and several `asyncio.run` calls share it. Every call is bounded: the per-call `timeout`, the
run's deadline (the executor abandons or cancels the call), and the `connect_timeout` of a
(re)connection. A connection that dropped is opened again by the next call; a server that sent
`tools/list_changed` is listed again before the next call or `get_tools`.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
import time
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from actloop.exceptions import ConfigurationError
from actloop.mcp._errors import (
    MCPConnectionError,
    MCPError,
    MCPTimeoutError,
    garbage_note,
    leaf,
    reason,
)
from actloop.mcp._tool import MCPTool
from actloop.tools._input import NeedsInput

if TYPE_CHECKING:
    from mcp import types

    from actloop.mcp._connection import Connection, ServerSpec
    from actloop.mcp._tasks import Hold, TaskRun
    from actloop.mcp._thread import LoopThread
    from actloop.tools import BaseTool

__all__ = ["MCPToolset"]

T = TypeVar("T")

_OPEN: weakref.WeakSet[MCPToolset] = weakref.WeakSet()
_CLOSE_BOUND = 20.0
"""Seconds `close` waits for the server to end (the SDK needs ~2 s, ~4 s for a hung server)."""


def _close_all() -> None:
    """At interpreter exit: end the servers of toolsets nobody closed."""
    for toolset in list(_OPEN):
        toolset.close()


atexit.register(_close_all)


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError as exc:
        from actloop.models._errors import MissingDependencyError

        raise MissingDependencyError(
            'actloop.mcp needs the mcp package: pip install "actloop[mcp]"', name="mcp"
        ) from exc


class MCPToolset:
    """The tools of one MCP server; open it (`with`, `async with`, or `open()`), then `get_tools`.

    `prefix` is put before every tool name (to keep two servers' tools apart); `timeout` bounds
    each call in seconds (None: only the run's deadline); `structured=False` returns the text of
    a result even when the server sends structured content.

    A call the server runs as a task (the tasks extension, `_tasks`) is polled until it ends:
    `timeout` then bounds each request, `task_timeout` the whole task (None: only the run's
    deadline). `tasks=False` does not declare the extension (the server answers as usual or
    refuses the call).
    """

    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        prefix: str = "",
        timeout: float | None = 30.0,
        connect_timeout: float = 30.0,
        structured: bool = True,
        max_result_bytes: int = 32 * 1024 * 1024,
        tasks: bool = True,
        task_timeout: float | None = None,
    ) -> None:
        if (command is None) == (url is None):
            raise ConfigurationError(
                "MCPToolset needs either command=... (a server over stdio) or url=... (streamable"
                " HTTP); use MCPToolset.stdio(COMMAND, ARGS) or MCPToolset.http(URL)"
            )
        _require_sdk()
        from actloop.mcp._connection import ServerSpec

        self._spec: ServerSpec = ServerSpec(
            command=command,
            args=tuple(args),
            env=dict(env) if env is not None else None,
            cwd=cwd,
            url=url,
            headers=dict(headers or {}),
        )
        self._given_name = name
        self._server_name: str | None = None
        self.prefix = prefix
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.structured = structured
        self.max_result_bytes = max_result_bytes
        self.tasks = tasks
        self.task_timeout = task_timeout
        self._task_runs: set[TaskRun] = set()
        """Tasks being polled: `close` cancels them."""
        self._calls: set[asyncio.Task[Any]] = set()
        """Calls running on the toolset's loop: `close` lets them end with their error."""
        self._guard = threading.Lock()
        self._thread: LoopThread | None = None
        self._conn: Connection | None = None
        self._lock: asyncio.Lock | None = None
        self._listing: dict[str, types.Tool] = {}
        self._tools: dict[str, MCPTool] = {}
        self._stale = False
        self._closing = False
        """True while `close` ends the connection: calls cut short say so."""

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        **options: Any,
    ) -> MCPToolset:
        """A server started as `command args` that speaks MCP on its stdin and stdout.

        The process gets `env` on top of a minimal environment (PATH, HOME, ...), as in the SDK.
        """
        return cls(command=command, args=args, env=env, cwd=cwd, **options)

    @classmethod
    def http(cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any):
        """A server reached over streamable HTTP at `url` (e.g. http://127.0.0.1:8000/mcp)."""
        return cls(url=url, headers=headers, **options)

    @property
    def name(self) -> str:
        """The server's name: as given, else as the server names itself, else its command/URL."""
        return self._given_name or self._server_name or self._spec.label

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision agreed with the server (e.g. "2026-07-28", or "2025-11-25" after the
        handshake of an older server); None while not connected."""
        conn = self._conn
        client = conn.client if conn is not None else None
        return client.protocol_version if client is not None else None

    def __repr__(self) -> str:
        return f"MCPToolset({self.name!r})"

    # -- sync ------------------------------------------------------------------------------------

    def open(self) -> MCPToolset:
        """Start (or reach) the server and list its tools; raises MCPError if it cannot."""
        self._wait(self._connection())
        return self

    def close(self) -> None:
        """End the session and the server process, then the toolset's thread. Idempotent."""
        thread = self._detach()
        if thread is None:
            return
        try:
            thread.submit(self._shutdown()).result(timeout=_CLOSE_BOUND)
        except Exception:  # the thread is stopped below whatever happened
            pass
        finally:
            thread.stop()

    def _detach(self) -> LoopThread | None:
        """Take the loop thread away from the toolset (the next use starts a new one)."""
        with self._guard:
            thread, self._thread = self._thread, None
            _OPEN.discard(self)
            self._lock = None
        return thread if thread is not None and thread.alive else None

    def get_tools(self) -> list[BaseTool]:
        """The server's tools as actloop tools (connecting first if needed)."""
        return self._wait(self._current_tools())

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        """Call the server's tool `tool` (its own name, without prefix); see `MCPTool`."""
        return self._wait(self._call(tool, dict(arguments), _trace(), _hold()))

    def __enter__(self) -> MCPToolset:
        try:
            return self.open()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- async -----------------------------------------------------------------------------------

    async def aopen(self) -> MCPToolset:
        """Async `open`."""
        await self._await(self._connection())
        return self

    async def aclose(self) -> None:
        """Async `close`."""
        thread = self._detach()
        if thread is None:
            return
        try:
            shutdown = asyncio.wrap_future(thread.submit(self._shutdown()))
            await asyncio.wait_for(shutdown, _CLOSE_BOUND)
        except Exception:  # the thread is stopped below whatever happened
            pass
        finally:
            thread.stop()  # quick: the loop has nothing left to do

    async def aget_tools(self) -> list[BaseTool]:
        """Async `get_tools`."""
        return await self._await(self._current_tools())

    async def acall(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        """Async `call`; cancelling it cancels the request."""
        return await self._await(self._call(tool, dict(arguments), _trace(), _hold()))

    async def __aenter__(self) -> MCPToolset:
        try:
            return await self.aopen()
        except BaseException:
            await self.aclose()
            raise

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- bridging to the toolset's loop ------------------------------------------------------------

    def _loop_thread(self) -> LoopThread:
        with self._guard:
            if self._thread is None:
                from actloop.mcp._thread import LoopThread

                self._thread = LoopThread(f"actloop-mcp-{self._spec.label[:40]}")
                _OPEN.add(self)
            return self._thread

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        future = self._loop_thread().submit(coro)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise self._cut() from None
        except BaseException:
            future.cancel()  # Ctrl-C or an abandoned caller: cancel the request on the loop
            raise

    def _cut(self) -> BaseException:
        """What a caller whose call the stopped loop cancelled gets: an MCPConnectionError
        if the toolset was being closed (a call cut by close, even one the loop outlived)."""
        if self._closing:
            message = f"MCP server {self.name!r} was closed while a call was running"
            return MCPConnectionError(message, server=self.name)
        return concurrent.futures.CancelledError()

    async def _await(self, coro: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(self._loop_thread().submit(coro))

    # -- on the toolset's loop -------------------------------------------------------------------

    async def _connection(self) -> Connection:
        """The live connection, opened (again) if there is none or it dropped."""
        self._closing = False
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            conn = self._conn
            if conn is not None and conn.up:
                return conn
            if conn is not None:
                await conn.stop()
                conn.dispose()
            from actloop.mcp._connection import Connection

            self._conn = conn = Connection(
                self._spec, self._mark_stale, self.max_result_bytes, self.tasks
            )
            started = time.monotonic()  # one bound for the handshake and the whole listing
            try:
                self._server_name = await conn.open(self.connect_timeout) or self._server_name
                await self._list(conn, self.connect_timeout - (time.monotonic() - started))
            except BaseException as exc:
                await conn.stop()
                error = self._start_error(conn, exc)
                conn.dispose()
                raise error from None
            return conn

    def _start_error(self, conn: Connection, exc: BaseException) -> BaseException:
        from actloop.mcp._connection import NoAnswer

        if isinstance(exc, MCPError) or not isinstance(exc, Exception):
            return exc
        exc = leaf(exc)
        if isinstance(exc, NoAnswer):
            return MCPTimeoutError(f"MCP server {self.name!r} {exc}", server=self.name)
        tail = conn.stderr_tail()
        said = f"; its last stderr line: {tail}" if tail else ""
        return MCPConnectionError(
            f"could not start or reach MCP server {self.name!r}: {reason(exc)}{said}",
            server=self.name,
        )

    def _mark_stale(self) -> None:
        self._stale = True

    async def _list(self, conn: Connection, seconds: float | None = None) -> None:
        """List the server's tools; keep the MCPTool objects of tools that are still there."""
        from mcp import MCPError as SDKError

        from actloop.mcp._connection import Lost, NoAnswer, TooMany

        self._stale = False
        name = self.name
        try:
            left = self.connect_timeout if seconds is None else seconds
            listed = await conn.list_tools(left)
        except NoAnswer:
            message = (
                f"MCP server {name!r} did not list its tools within {self.connect_timeout:g} s"
            )
            raise MCPTimeoutError(message, server=name) from None
        except TooMany as exc:
            message = f"MCP server {name!r} {exc}: refused (a server stuck in a loop?)"
            raise MCPConnectionError(message, server=name) from None
        except (Lost, SDKError) as exc:
            message = f"MCP server {name!r} failed to list its tools: {reason(exc)}"
            raise MCPConnectionError(message, server=name) from None
        listing = {t.name: t for t in listed}
        self._listing = listing
        tools: dict[str, MCPTool] = {}
        for remote, spec in listing.items():
            tool = self._tools.get(remote)
            if tool is None:
                tool = MCPTool(name=self.prefix + remote, toolset=self, remote_name=remote)
            tool.description = spec.description or ""
            tool.args_schema = {"properties": {}, **spec.input_schema}
            tool.metadata = {"mcp_server": self.name}
            hints = spec.annotations  # MCP's default: a tool may not be safe to run twice
            tool.idempotent = hints is not None and bool(
                hints.read_only_hint or hints.idempotent_hint
            )
            tools[remote] = tool
        self._tools = tools

    async def _current_tools(self) -> list[BaseTool]:
        """The tools, listed again when the server said the list changed, and always on a
        2026-07-28 server: its changes come on a separate `subscriptions/listen` stream, which
        may lag behind the answer of the call that made them."""
        conn = await self._connection()
        if self._stale or conn.modern:
            await self._list(conn)
        return list(self._tools.values())

    async def _call(
        self, tool: str, arguments: dict[str, Any], trace: dict[str, str], held: Hold
    ) -> Any:
        """Call `tool`; a request that never reached the server is sent once more, on a new
        connection (an HTTP server restarted, or a session the server no longer knows). Runs
        under the caller's trace context, so the SDK's request carries it in `_meta`; `held`
        is the caller's note handle and halt flags (for tasks)."""
        from actloop.tracing._propagation import continue_trace

        task = asyncio.current_task()
        if task is not None:
            self._calls.add(task)
        try:
            with continue_trace(trace):
                try:
                    return await self._attempt(tool, arguments, held)
                except _Resend:
                    return await self._attempt(tool, arguments, held, last=True)
        finally:
            self._calls.discard(cast("asyncio.Task[Any]", task))

    async def _attempt(
        self, tool: str, arguments: dict[str, Any], held: Hold, last: bool = False
    ) -> Any:
        from mcp import MCPError as SDKError

        from actloop.mcp._connection import Lost, NoAnswer
        from actloop.mcp._stdio import TOO_LARGE
        from actloop.mcp._tasks import noted_task

        conn = await self._connection()
        noted = noted_task(held.note, tool)
        if noted is not None:  # a resumed durable run: follow the task, do not call again
            return self._checked(tool, await self._follow(conn, tool, noted, held, None))
        if self._stale:
            await self._list(conn)
        server = self.name
        if tool not in self._listing:
            offered = ", ".join(repr(n) for n in self._listing) or "none"
            message = f"MCP server {server!r} does not offer tool {tool!r} (any more); it offers: "
            raise MCPError(message + offered, server=server, tool=tool)
        seen = conn.garbage.count
        try:
            result = await self._request(conn, tool, arguments, held)
        except (NeedsInput, MCPError):  # a person asked (a durable run pauses), a task's end
            raise
        except NoAnswer:
            message = (
                f"MCP server {server!r} did not answer tool {tool!r} within {self.timeout:g} s"
            )
            message += garbage_note(*conn.garbage.since(seen))
            raise MCPTimeoutError(message, server=server, tool=tool) from None
        except Lost:
            await conn.stop()
            if not last and conn.unreached:
                raise _Resend from None
            raise self._lost(conn, tool, seen) from None
        except SDKError as exc:
            if not last and exc.message == "Session terminated":
                await conn.stop()
                raise _Resend from None
            if exc.code == TOO_LARGE:
                raise self._too_large(tool) from None
            message = f"MCP server {server!r} refused tool {tool!r}: {exc.message}"
            raise MCPError(message, server=server, tool=tool) from None
        except Exception as exc:
            message = f"MCP server {server!r} failed on tool {tool!r}: {reason(exc)}"
            raise MCPError(message, server=server, tool=tool) from None
        return self._checked(tool, result)

    def _checked(self, tool: str, result: types.CallToolResult) -> Any:
        """The result's value, once its size is checked."""
        from actloop.mcp._results import result_size

        if self._spec.url is not None and result_size(result) > self.max_result_bytes:
            raise self._too_large(tool)  # over HTTP, checked once read (see the README)
        return self._value(tool, result)

    async def _request(
        self, conn: Connection, tool: str, arguments: dict[str, Any], held: Hold
    ) -> types.CallToolResult:
        """The call's result: the server's answer, or the end of the task it runs the call as."""
        from actloop.mcp._tasks import TaskStarted

        try:
            return await conn.call(tool, arguments, self.timeout, answered=held.answered)
        except TaskStarted as started:
            handle = started.handle
            return await self._follow(conn, tool, handle.task_id, held, handle)

    async def _follow(
        self, conn: Connection, tool: str, task_id: str, held: Hold, first: Any
    ) -> types.CallToolResult:
        """Poll the task the call runs as (`first`: its handle; None: noted before a resume)."""
        from actloop.mcp._tasks import TaskRun

        run = TaskRun(conn, self.name, tool, task_id, held, self.timeout, self.task_timeout)
        self._task_runs.add(run)
        try:
            return await run.follow(first)
        finally:
            self._task_runs.discard(run)

    def _too_large(self, tool: str) -> MCPError:
        message = (
            f"MCP server {self.name!r} answered tool {tool!r} with more than "
            f"{self.max_result_bytes} bytes (the toolset's max_result_bytes); "
            "the answer was dropped"
        )
        return MCPError(message, server=self.name, tool=tool)

    def _lost(self, conn: Connection, tool: str, seen: int) -> MCPConnectionError:
        """The error for a connection that ended during a call (after the process is gone)."""
        if self._closing:
            message = f"MCP server {self.name!r} was closed while tool {tool!r} was running"
            return MCPConnectionError(message, server=self.name, tool=tool)
        tail = conn.stderr_tail()
        why = f"; its last stderr line: {tail}" if tail else ""
        again = "reconnects" if self._spec.url is not None else "starts it again"
        return MCPConnectionError(
            f"MCP server {self.name!r} closed the connection during tool {tool!r} (it exited, "
            f"crashed or dropped the connection{why}){garbage_note(*conn.garbage.since(seen))}; "
            f"the next call {again}",
            server=self.name,
            tool=tool,
        )

    def _value(self, tool: str, result: types.CallToolResult) -> Any:
        from actloop.mcp._results import result_text

        text = result_text(result)
        if result.is_error:
            raise MCPError(
                f"tool {tool!r} of MCP server {self.name!r} failed: {text}",
                server=self.name,
                tool=tool,
            )
        if self.structured and result.structured_content is not None:
            return result.structured_content
        return text

    async def _shutdown(self) -> None:
        self._closing = True
        if self._task_runs:  # tasks the server would run on for nobody
            await asyncio.gather(*(run.cancel() for run in self._task_runs))
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.stop()
            conn.dispose()
        if self._calls:  # let cut calls raise their error before the loop stops (bounded)
            await asyncio.wait(set(self._calls), timeout=5.0)


def _trace() -> dict[str, str]:
    """The caller's trace context (W3C fields), taken on the caller's thread: the call runs on
    the toolset's loop, where the tool's span is not current."""
    from actloop.tracing._propagation import inject_context

    return inject_context()


def _hold() -> Hold:
    """The caller's note handle and halt flags, taken on the caller's thread (see `_tasks`)."""
    from actloop.mcp._tasks import hold

    return hold()


class _Resend(Exception):
    """The request never reached the server: send it again on a new connection."""
