"""The served agent as an MCP tool at `/mcp` (streamable HTTP, the official `mcp` SDK's server).

One tool per served agent, named as it is served (`agent`): its input schema is the executor's
input keys (strings), plus an optional `thread_id` that continues a conversation as a new turn.
A call starts a durable run through `ThreadService` (so the thread is the same over every
protocol and the page), reports a progress notification per tool call and per finished step
when the client sent a progress token, and answers with the final output as text (and
`{"output", "thread_id"}` as structured content). A run that fails, is cancelled or pauses for a
person's approval answers an error result (`isError`): a failure names only the exception's
type; a pause names the thread and the calls waiting, and how to decide them (a run with
`command.resume` over the Agent Protocol, the page); the run stays paused in the store. A
client that leaves never stops the run.

The SDK's session manager runs stateless (no `Mcp-Session-Id`, so any server process can answer
any request) and serves both protocol eras: the 2025 `initialize` handshake and the 2026-07-28
revision (the version in each request). `GET` (a server-to-client stream) and `DELETE` (ending a
session) are answered 405, as the spec allows a server without sessions. The SDK is imported on
the first request to `/mcp` (importing it takes most of a second); without it installed `/mcp`
answers 501 naming the extra. The guard in front of the app checks Host, Origin, the token and
the body as for any route, so the SDK's own DNS-rebinding check is left off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, cast

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.types import Receive, Scope, Send

from actloop.server._http import MAX_BODY, HttpError, JsonResponse
from actloop.server._hub import Busy
from actloop.server._service import ThreadService, decode_event, error_type
from actloop.server._wire import encode, json_text
from actloop.server.agent_protocol import GRAPH

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel.server import Server
    from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult

    from actloop.checkpoint import ThreadHistory

__all__ = ["McpEndpoint", "tool_input_schema"]

log = logging.getLogger("actloop.server")

_HISTORY = "chat_history"
"""The input key a thread fills from its earlier turns (not asked of the client)."""
_NO_SDK = "serving MCP needs the mcp extra: pip install 'actloop[mcp]'"
_NO_SESSIONS = "this MCP server keeps no sessions: send requests with POST"


def tool_input_schema(executor_keys: list[str]) -> dict[str, Any]:
    """The tool's JSON schema: each input key a required string (`input` when the agent
    declares none), plus the optional `thread_id` of a conversation to continue."""
    keys = [k for k in executor_keys if k != _HISTORY] or ["input"]
    properties: dict[str, Any] = {k: {"type": "string"} for k in keys}
    properties["thread_id"] = {
        "type": "string",
        "description": "continue this thread (a result's thread_id) with a new turn",
    }
    return {
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": False,
    }


_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"output": {}, "thread_id": {"type": "string"}},
    "required": ["output", "thread_id"],
}


class McpEndpoint:
    """The ASGI app at `/mcp`; `running()` belongs in the app's lifespan (it holds the task
    group the SDK's session manager runs in once the first request starts it)."""

    def __init__(self, name: str = "agent", max_body: int = MAX_BODY) -> None:
        self.name = name
        self.max_body = max_body
        self._group: TaskGroup | None = None
        self._lock: asyncio.Lock | None = None
        self._manager: Any = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """While the app runs: the task group of the SDK's session manager, cancelled at the
        end (a call waiting on a run stops waiting; the run itself is the hub's to stop)."""
        async with anyio.create_task_group() as group:
            self._group, self._lock = group, asyncio.Lock()
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                self._group = self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A POST goes to the SDK's transport; any other method gets 405 (no sessions)."""
        if scope["method"] != "POST":
            refusal = JsonResponse(
                {"error": _NO_SESSIONS}, status_code=405, headers={"Allow": "POST"}
            )
            await refusal(scope, receive, send)
            return
        manager = await self._started(scope["app"].state.threads)
        await manager.handle_request(scope, receive, send)

    async def _started(self, service: ThreadService) -> Any:
        """The SDK's session manager, started on the first request."""
        if self._group is None or self._lock is None:
            raise HttpError(
                503, "the MCP endpoint is not running (the app's lifespan did not start)"
            )
        async with self._lock:
            if self._manager is None:
                try:
                    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
                except ImportError:
                    raise HttpError(501, _NO_SDK) from None
                manager = StreamableHTTPSessionManager(
                    _server(service, self.name),
                    stateless=True,
                    max_request_body_size=self.max_body,
                )
                await self._group.start(_run_manager, manager)
                self._manager = manager
        return self._manager


async def _run_manager(manager: Any, *, task_status: TaskStatus[None]) -> None:
    """Run the session manager until the task group is cancelled (the app's shutdown)."""
    async with manager.run():
        task_status.started()
        await anyio.sleep_forever()


def _server(service: ThreadService, name: str) -> Server[Any]:
    """The SDK's low-level server with the agent's one tool."""
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS, ListToolsResult, Tool

    executor = service.executor
    schema = tool_input_schema(executor.input_keys)
    tool = Tool(
        name=name,
        description=_description(executor.tools),
        input_schema=schema,
        output_schema=_OUTPUT_SCHEMA,
    )

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> ListToolsResult:
        """`tools/list`: the one tool."""
        return ListToolsResult(tools=[tool])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        """`tools/call`: a turn of the agent; what goes wrong is an error result with a
        one-line reason (never an exception's message: the 2025-era transport would send it)."""
        if params.name != name:
            raise MCPError(
                INVALID_PARAMS, f"no tool {params.name[:100]!r} (this server has {name!r})"
            )
        try:
            return await _call(service, ctx, schema, params.arguments or {})
        except HttpError as exc:
            return _error(exc.reason)
        except Busy as exc:
            return _error(str(exc))
        except Exception as exc:
            log.exception("an MCP tool call failed")
            return _error(f"the server failed ({type(exc).__name__}); see its log")

    return Server(
        "actloop",
        version=_version(),
        get_tool_input_schema=lambda called: schema if called == name else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _version() -> str:
    """actloop's version, as the server names itself."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("actloop")
    except PackageNotFoundError:  # a source tree on the path, not installed
        return ""


def _description(tools: list[Any]) -> str:
    """What the tool does: the agent and its tools, each with the first line of its own
    description."""
    lines = [
        (str(t.name), (str(t.description or "").strip().splitlines() or [""])[0]) for t in tools
    ]
    listed = "; ".join(f"{n} ({d})" if d else n for n, d in lines) or "none"
    return (
        f"Ask an actloop agent; it answers using its tools: {listed}. "
        "Give a result's thread_id to continue that conversation."
    )


def _inputs(schema: dict[str, Any], arguments: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The run's input and thread id from a call's arguments; 422 naming a bad argument."""
    properties: dict[str, Any] = schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise HttpError(422, f"unexpected argument {unknown[0][:100]!r}")
    for key, value in arguments.items():
        if not isinstance(value, str):
            raise HttpError(422, f"argument {key!r} must be a string")
    missing = [k for k in schema["required"] if k not in arguments]
    if missing:
        raise HttpError(422, f"missing argument {missing[0]!r}")
    value = {k: v for k, v in arguments.items() if k != "thread_id"}
    return value, arguments.get("thread_id")


async def _call(
    service: ThreadService,
    ctx: ServerRequestContext[Any],
    schema: dict[str, Any],
    arguments: dict[str, Any],
) -> CallToolResult:
    """Run a turn of the agent, reporting its steps, and its result as a tool result."""
    value, thread_id = _inputs(schema, arguments)
    started = await service.start(value, thread_id)
    progress = _Progress(ctx)
    terminal = "end"
    async for _, event, data in started.log.follow(started.first_event):
        if event == "data":
            await progress.report(decode_event(data))
        else:
            terminal = event
    found = await service.history(started.thread_id, started.turn)
    return _result(found, started.thread_id, terminal)


class _Progress:
    """Progress notifications of one call: one per tool call decided, one per step finished."""

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self.ctx = ctx
        self.count = 0

    async def report(self, item: Any) -> None:
        """The notifications an event's item makes (none for model text or the output)."""
        if not isinstance(item, dict):
            return
        chunk = cast(dict[str, Any], item)
        for action in cast(list[Any], chunk.get("actions") or []):
            await self._send(f"calling {_tool(action)}")
        for step in cast(list[Any], chunk.get("steps") or []):
            action = cast(dict[str, Any], step).get("action") if isinstance(step, dict) else None
            await self._send(f"{_tool(action)} returned")

    async def _send(self, message: str) -> None:
        self.count += 1
        await self.ctx.session.report_progress(self.count, None, message)


def _tool(action: Any) -> str:
    """The tool an action (in the wire shape) calls."""
    name = cast(dict[str, Any], action).get("tool") if isinstance(action, dict) else None
    return str(name)[:100] if name is not None else "a tool"


def _result(found: ThreadHistory, thread_id: str, terminal: str) -> CallToolResult:
    """The tool result of a run that is over: its output, or an error result saying why not."""
    from mcp_types import CallToolResult, TextContent

    resume = _resume_run(thread_id, None)
    if terminal == "cancelled":
        return _error(f"the run of thread {thread_id!r} was cancelled; resume it with {resume}")
    if found.status == "paused":
        return _paused(found, thread_id)
    if found.status != "finished" or found.output is None:
        kind = error_type(found.record.error) or "Error"
        return _error(
            f"the run of thread {thread_id!r} failed ({kind}); "
            f"it keeps its finished steps: resume it with {resume}"
        )
    output = encode(found.output.get("output"))
    text = output if isinstance(output, str) else json_text(output)
    return CallToolResult(
        content=[TextContent(text=text)],
        structured_content={"output": output, "thread_id": thread_id},
    )


def _resume_run(thread_id: str, decision: Any) -> str:
    """The Agent Protocol's request that resumes the thread's run with `decision` (JSON's
    `null`: go on with a failed or cancelled run)."""
    body = {"assistant_id": GRAPH, "command": {"resume": decision}}
    return f"POST /threads/{thread_id}/runs {json.dumps(body)}"


def _paused(found: ThreadHistory, thread_id: str) -> CallToolResult:
    """The error result of a run waiting for approval: the thread, the calls, how to decide."""
    calls = ", ".join(
        f"{p.get('tool')}({json_text(encode(p.get('tool_input')))[:200]}) [call {p.get('id')}]"
        for p in found.pending
    )
    ids = [str(p.get("id")) for p in found.pending]
    waits, it = ("waits", "it") if len(found.pending) == 1 else ("wait", "them")
    text = (
        f"thread {thread_id!r} is paused: {calls} {waits} for a person's approval. Approve or "
        f"reject {it} on the server's page, or with {_resume_run(thread_id, {'approve': ids})}; "
        f"then GET /threads/{thread_id}/state has the answer."
    )
    pending = [
        {"id": p.get("id"), "tool": p.get("tool"), "tool_input": encode(p.get("tool_input"))}
        for p in found.pending
    ]
    structured = {"thread_id": thread_id, "status": "paused", "pending_approvals": pending}
    return _error(text, structured)


def _error(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    """An error result (`isError`): what the client's model reads as the tool's failure."""
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(text=text)], structured_content=structured, is_error=True
    )
