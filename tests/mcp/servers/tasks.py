"""An MCPServer (mcp 2.x) with the tasks extension (io.modelcontextprotocol/tasks, 2026-07-28):
some tools run as tasks for a client that declares the extension on its request.

python tasks.py                 serve over stdio
python tasks.py --http PORT     serve streamable HTTP on 127.0.0.1:PORT/mcp

Task tools answer `tools/call` with `resultType: "task"` and run in the background; `tasks/get`,
`tasks/cancel` and `tasks/update` are served per the extension. The server counts what it got
(`stats`), and `wait_for` blocks until it has seen so many `tasks/get` or `tasks/cancel` requests
(an event the tests await instead of sleeping).
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.types import CLIENT_CAPABILITIES_META_KEY, CallToolRequestParams, RequestParams

TASKS = "io.modelcontextprotocol/tasks"
PORT = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--http" else 8000
POLL_MS = 50


class TaskIdParams(RequestParams):
    """`{"taskId": ...}` (tasks/get, tasks/cancel)."""

    task_id: str


class UpdateParams(TaskIdParams):
    """`{"taskId": ..., "inputResponses": {...}}` (tasks/update)."""

    input_responses: dict[str, Any] | None = None


calls: Counter[str] = Counter()
"""`tools/call` requests received, by tool name."""
gets: Counter[str] = Counter()
"""`tasks/get` requests received, by task id."""
cancels: list[str] = []
"""Task ids of the `tasks/cancel` requests received, in order."""
changed = asyncio.Condition()
tasks: dict[str, dict[str, Any]] = {}
jobs: dict[str, asyncio.Task[None]] = {}
numbers = itertools.count(1)
"""Task ids are task-1, task-2, ... in the order the server made them."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _task(task_id: str) -> dict[str, Any]:
    """The task's wire shape (`DetailedTask`)."""
    state = tasks.get(task_id)
    if state is None:
        raise MCPError(code=-32602, message="Failed to retrieve task: Task not found")
    return {key: value for key, value in state.items() if value is not None}


async def _note() -> None:
    async with changed:
        changed.notify_all()


async def _slow_sum(a: int, b: int, seconds: float) -> dict[str, Any]:
    await asyncio.sleep(seconds)
    return {"content": [{"type": "text", "text": f"{a} + {b} = {a + b}"}], "isError": False}


async def _doomed() -> dict[str, Any]:
    await asyncio.sleep(0.2)
    raise MCPError(code=-32603, message="the job ran out of disk")


async def _refused(reason: str) -> dict[str, Any]:
    await asyncio.sleep(0.1)
    return {"content": [{"type": "text", "text": f"refused: {reason}"}], "isError": True}


async def _asks() -> dict[str, Any]:
    await asyncio.sleep(3600)
    return {}


async def _instant(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text[::-1]}], "isError": False}


WORK = {
    "slow_sum": _slow_sum,
    "doomed": _doomed,
    "refused": _refused,
    "asks": _asks,
    "instant": _instant,
}
"""The tools run as tasks; `instant`'s task has ended by the time its handle is sent."""


async def _run(task_id: str, work: Any, arguments: dict[str, Any]) -> None:
    state = tasks[task_id]
    try:
        if work is _asks:
            state["status"] = "input_required"
            state["inputRequests"] = {
                "name": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Your name?",
                        "requestedSchema": {"type": "object", "properties": {}},
                    },
                }
            }
        result = await work(**arguments)
        state.update(status="completed", result=result)
    except MCPError as exc:
        state.update(status="failed", statusMessage=exc.error.message)
        state["error"] = {"code": exc.error.code, "message": exc.error.message}
    except asyncio.CancelledError:
        state.update(status="cancelled")
    state["lastUpdatedAt"] = _now()


class Tasks(Extension):
    """The server side of the tasks extension, for the tools in WORK."""

    identifier = TASKS

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskIdParams, self.get),
            MethodBinding("tasks/cancel", TaskIdParams, self.cancel),
            MethodBinding("tasks/update", UpdateParams, self.update),
        ]

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        calls[params.name] += 1
        meta: Any = ctx.meta or {}
        declared = (meta.get(CLIENT_CAPABILITIES_META_KEY) or {}).get("extensions") or {}
        work = WORK.get(params.name)
        if work is None or TASKS not in declared:
            return await call_next(ctx)
        task_id = f"task-{next(numbers)}"
        tasks[task_id] = {
            "taskId": task_id,
            "status": "working",
            "statusMessage": "started",
            "createdAt": _now(),
            "lastUpdatedAt": _now(),
            "ttlMs": 600_000,
            "pollIntervalMs": POLL_MS,
        }
        job = _run(task_id, work, params.arguments or {})
        if work is _instant:
            await job
        else:
            jobs[task_id] = asyncio.ensure_future(job)
        return {"resultType": "task", **_task(task_id)}

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> Any:
        gets[params.task_id] += 1
        await _note()
        return {"resultType": "complete", **_task(params.task_id)}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> Any:
        _task(params.task_id)
        cancels.append(params.task_id)
        job = jobs.get(params.task_id)
        if job is not None:
            job.cancel()
        await _note()
        return {"resultType": "complete"}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> Any:
        _task(params.task_id)
        return {"resultType": "complete"}


server = MCPServer("tasks", log_level="WARNING", extensions=[Tasks()])


@server.tool(structured_output=False)
async def slow_sum(a: int, b: int, seconds: float = 0.3) -> str:
    """Add two integers, slowly (a task for clients that take tasks)."""
    result = await _slow_sum(a, b, seconds)
    return str(result["content"][0]["text"])


@server.tool(structured_output=False)
async def doomed() -> str:
    """A job that fails with a JSON-RPC error (as a task: status failed)."""
    await _doomed()
    return "unreachable"


@server.tool(structured_output=False)
async def refused(reason: str) -> str:
    """A job that completes with a tool error (isError)."""
    return "unreachable"


@server.tool(structured_output=False)
async def asks() -> str:
    """A job that needs the user's input (as a task: status input_required)."""
    return "unreachable"


@server.tool(structured_output=False)
async def instant(text: str) -> str:
    """The text backwards (as a task: already completed in its handle)."""
    return text[::-1]


@server.tool()
def stats() -> dict[str, Any]:
    """What the server got: tools/call by tool, tasks/get by task, tasks/cancel in order."""
    return {"calls": dict(calls), "gets": dict(gets), "cancels": list(cancels)}


@server.tool()
async def wait_for(polls: int = 0, cancelled: int = 0) -> dict[str, Any]:
    """Block (at most 30 s) until the server got `polls` tasks/get and `cancelled` tasks/cancel
    requests in all; then `stats`."""

    def enough() -> bool:
        return sum(gets.values()) >= polls and len(cancels) >= cancelled

    async with changed:
        try:
            await asyncio.wait_for(changed.wait_for(enough), 30)
        except TimeoutError:
            pass
    return stats()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=PORT)
    else:
        server.run("stdio")
