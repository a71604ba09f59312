"""MCP tasks, the client side of the `io.modelcontextprotocol/tasks` extension (2026-07-28).

A toolset declares the extension on each request (the SDK's `ClientExtension`, which puts it in
the request's `_meta` client capabilities on a 2026-07-28 connection). A server may then answer
a `tools/call` with a task handle (`resultType: "task"`, a `taskId` and a `status`) instead of
the result. The SDK parses the handle with `TaskHandle`; the claim's resolver hands it back to
the toolset (`TaskStarted`), which follows it with a `TaskRun`:

- in a durable run, the task id is journaled first (the call's note, `actloop.tools.call_note`),
  so a run resumed after a crash polls that task instead of calling the tool again;
- `tasks/get` is polled every `pollIntervalMs` (the server's hint, kept within
  [`MIN_POLL`, `MAX_POLL`] s; `DEFAULT_POLL` without one), each request bounded by the toolset's
  `timeout`, the whole task by its `task_timeout`, until a terminal status: `completed` gives the
  `CallToolResult` in `result` (an observation like any other result), `failed` and `cancelled`
  a clear `MCPError`;
- a call that stops before the task ends (the run's deadline, a cancel, Ctrl-C, a sibling's
  error, the toolset closed, `task_timeout`) sends `tasks/cancel` for it (bounded, best effort).

`input_required` (the task waits for `tasks/update` with answers to its `inputRequests`) is not
answered: the call ends with an error observation saying so and the task is cancelled. Wire names
are the extension's (`tasks/get`, `tasks/cancel`, `taskId`, `pollIntervalMs`, `ttlMs`, ...).
2025-11-25 servers only make tasks for requests that ask for one (a `task` field), which a
toolset never sends: their tools answer as usual.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from mcp import MCPError as SDKError
from mcp import types
from mcp.client import ClientExtension
from mcp.client.extension import ClaimContext, ResultClaim

from actloop.mcp._errors import MCPConnectionError, MCPError, MCPTimeoutError, reason

if TYPE_CHECKING:
    import threading

    from actloop.mcp._connection import Connection
    from actloop.tools._input import InputCall
    from actloop.tools._notes import CallNote

__all__ = [
    "TASKS",
    "Hold",
    "TaskHandle",
    "TaskRun",
    "TaskStarted",
    "TasksExtension",
    "hold",
    "noted_task",
]

TASKS = "io.modelcontextprotocol/tasks"
"""The extension's identifier."""
TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_POLL = 1.0
"""Seconds between polls when the server gives no `pollIntervalMs`."""
MIN_POLL = 0.05
MAX_POLL = 5.0
"""The server's `pollIntervalMs` is kept within these (seconds)."""
CANCEL_BOUND = 5.0
"""Seconds a `tasks/cancel` may take (best effort: the call is ending anyway)."""
_SLICE = 0.1
"""A poll wait checks this often whether the run gave up on the call (sync runs)."""
NOT_FOUND = -32602
"""The JSON-RPC error of a `tasks/get` for a task the server does not know (Invalid params)."""


class TaskHandle(types.Result):
    """A `CreateTaskResult`: what a server answers a `tools/call` it runs as a task."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskState(types.Result):
    """A `tasks/get` answer (`DetailedTask`): the status, and the result or error once ended."""

    result_type: str | None = None
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class _Ack(types.Result):
    """The empty acknowledgement of `tasks/cancel`."""

    result_type: str | None = None


class TaskIdParams(types.RequestParams):
    """`{"taskId": ...}`."""

    task_id: str


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    """`tasks/get` (its `Mcp-Name` header is the task id, as the extension requires)."""

    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    """`tasks/cancel`."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class TaskStarted(Exception):
    """The server runs the call as a task: `handle` says which (raised by `Connection.call`
    for the claimed result, or by the claim's resolver under the SDK's `Client.call_tool`, so
    the toolset follows the task itself)."""

    def __init__(self, handle: TaskHandle) -> None:
        super().__init__(f"task {handle.task_id}")
        self.handle = handle


async def _hand_back(handle: TaskHandle, _ctx: ClaimContext) -> types.CallToolResult:
    raise TaskStarted(handle)


class TasksExtension(ClientExtension):
    """Declares the tasks extension; a task handle is handed back as `TaskStarted`."""

    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=_hand_back)]


class Hold(NamedTuple):
    """What a call takes from the caller's thread: its note handle (a durable run), the halt
    flags of the worker call it runs in (set when the run gives up on it), and a person's
    answers when the call is re-sent after it asked for input (`_input`)."""

    note: CallNote | None
    halts: tuple[threading.Event, ...]
    answered: InputCall | None = None

    @property
    def halted(self) -> bool:
        """True once the run gave up on the call (its deadline passed, a sibling failed)."""
        return any(flag.is_set() for flag in self.halts)


def hold() -> Hold:
    """The caller's `Hold` (read on the caller's thread: the call runs on the toolset's)."""
    from actloop.runnables._halts import HALTS
    from actloop.tools._input import current_input
    from actloop.tools._notes import call_note

    return Hold(call_note(), HALTS.get(), current_input())


def note_text(task_id: str, tool: str) -> str:
    """The note that journals a task: its id and the tool it runs."""
    return json.dumps({"mcp_task": task_id, "tool": tool})


def noted_task(note: CallNote | None, tool: str) -> str | None:
    """The id of the task this call started before the run was resumed, if it noted one."""
    if note is None or note.saved is None:
        return None
    try:
        value: Any = json.loads(note.saved)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    fields = cast("dict[str, Any]", value)
    task_id = fields.get("mcp_task")
    return task_id if isinstance(task_id, str) and fields.get("tool") == tool else None


def poll_interval(hint_ms: int | None) -> float:
    """Seconds until the next poll: the server's hint within bounds, or the default."""
    if hint_ms is None:
        return DEFAULT_POLL
    return min(max(hint_ms / 1000, MIN_POLL), MAX_POLL)


class TaskRun:
    """Follows one task of one call to its end; cancels it if the call stops first."""

    def __init__(
        self,
        conn: Connection,
        server: str,
        tool: str,
        task_id: str,
        hold: Hold,
        timeout: float | None,
        task_timeout: float | None,
    ) -> None:
        self.conn, self.server, self.tool, self.task_id = conn, server, tool, task_id
        self.hold = hold
        self.timeout = timeout
        """Seconds each `tasks/get` may take."""
        self.task_timeout = task_timeout
        self._gone = False
        """The server said it does not know the task: nothing to cancel."""
        self._ended = False

    async def follow(self, state: TaskHandle | TaskState | None) -> types.CallToolResult:
        """Poll until the task ends (from `state`, the handle; None: a task noted before a
        resume) and return its result; on any way out before that, cancel the task."""
        started = time.monotonic()
        try:
            if state is None:
                state = await self._get()
            elif self.hold.note is not None:  # journaled before the first poll
                from actloop.runnables._workers import run_in_worker

                await run_in_worker(self.hold.note.record, note_text(self.task_id, self.tool))
            if isinstance(state, TaskHandle) and state.status in TERMINAL:
                state = await self._get()  # a handle carries no result: the task's state does
            while state.status not in TERMINAL:
                if state.status == "input_required":
                    raise self._error(
                        "is waiting for input (input_required), which actloop does not answer "
                        "for tasks; the task was cancelled"
                    )
                await self._pause(poll_interval(state.poll_interval_ms), started)
                state = await self._get()
            self._ended = True
        finally:
            if not self._ended and not self._gone:
                await self.cancel()
        return self._outcome(cast("TaskState", state))

    async def _pause(self, seconds: float, started: float) -> None:
        """Wait `seconds` before the next poll, in slices while a run may give up on the call;
        MCPTimeoutError past `task_timeout`, MCPError once the run gave up."""
        end = time.monotonic() + seconds
        if self.task_timeout is not None and end > started + self.task_timeout:
            await asyncio.sleep(max(started + self.task_timeout - time.monotonic(), 0.0))
            raise MCPTimeoutError(
                f"MCP server {self.server!r} did not finish tool {self.tool!r} (task "
                f"{self.task_id}) within {self.task_timeout:g} s (the toolset's task_timeout); "
                "the task was cancelled",
                server=self.server,
                tool=self.tool,
            )
        if not self.hold.halts:
            await asyncio.sleep(seconds)
            return
        while (left := end - time.monotonic()) > 0:
            if self.hold.halted:
                raise self._error("was given up by the run (its deadline passed or it stopped)")
            await asyncio.sleep(min(left, _SLICE))
        if self.hold.halted:
            raise self._error("was given up by the run (its deadline passed or it stopped)")

    async def _get(self) -> TaskState:
        from actloop.mcp._errors import Lost, NoAnswer

        request = GetTask(params=TaskIdParams(task_id=self.task_id))
        try:
            state: TaskState = await self.conn.send(request, TaskState, self.timeout)
        except NoAnswer:
            raise MCPTimeoutError(
                f"MCP server {self.server!r} did not answer tasks/get for tool {self.tool!r} "
                f"(task {self.task_id}) within {self.timeout:g} s",
                server=self.server,
                tool=self.tool,
            ) from None
        except Lost as exc:
            raise MCPConnectionError(
                f"MCP server {self.server!r} closed the connection while tool {self.tool!r} "
                f"ran as task {self.task_id} ({exc})",
                server=self.server,
                tool=self.tool,
            ) from None
        except SDKError as exc:
            if exc.code == NOT_FOUND:
                self._gone = True
                raise self._error(
                    f"is not known to the server (any more): {exc.message}; the tool was not "
                    "called again"
                ) from None
            raise self._error(f"could not be polled: {exc.message}") from None
        except Exception as exc:  # an answer that is not a task's state
            raise self._error(f"could not be polled: {reason(exc)}") from None
        if state.task_id != self.task_id:
            raise self._error(f"was answered with the state of task {state.task_id!r}")
        return state

    def _outcome(self, state: TaskState) -> types.CallToolResult:
        """The result of a task that ended."""
        said = f" ({state.status_message})" if state.status_message else ""
        if state.status == "completed":
            if state.result is None:
                raise self._error("completed without a result")
            try:
                return types.CallToolResult.model_validate(state.result, by_name=False)
            except ValueError:
                raise self._error("completed with a result that is not a tool result") from None
        if state.status == "failed":
            error = state.error or {}
            message = error.get("message") or state.status_message or "no reason given"
            raise MCPError(
                f"tool {self.tool!r} of MCP server {self.server!r} failed (task "
                f"{self.task_id}): {message}",
                server=self.server,
                tool=self.tool,
            )
        raise self._error(f"was cancelled{said}")

    def _error(self, what: str) -> MCPError:
        return MCPError(
            f"tool {self.tool!r} of MCP server {self.server!r}, run as task {self.task_id}, {what}",
            server=self.server,
            tool=self.tool,
        )

    async def cancel(self) -> None:
        """Send `tasks/cancel` (best effort, bounded): the call is ending without the task."""
        self._ended = True
        request = CancelTask(params=TaskIdParams(task_id=self.task_id))
        try:
            await asyncio.wait_for(self.conn.send(request, _Ack, CANCEL_BOUND), CANCEL_BOUND)
        except Exception:  # the server may be gone; the call's own error stands
            pass
