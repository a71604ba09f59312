"""`ToolNode`: one tool of a `create_agent` agent as the loop runs it, inside the
`wrap_tool_call` chain, answering as LangGraph's ToolNode does (`ToolMessage`s, its error texts,
injected arguments)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from actloop.agents._compose import async_hook, sync_hook
from actloop.agents._events import NodeRun
from actloop.agents._interrupts import awith_scratch, with_scratch
from actloop.agents._state import journaled
from actloop.agents.middleware.types import (
    AgentMiddleware,
    ToolCallRequest,
    ToolRuntime,
)
from actloop.messages import ToolMessage
from actloop.tools import InjectedState, InjectedStore, InjectedToolCallId
from actloop.tools._injected import injected_fields, injected_params
from actloop.tools._validate import InvalidArguments

if TYPE_CHECKING:
    from actloop.agents._graph import GraphRun

EDITS_KEY = "hitl_edited_tool_calls"
"""HumanInTheLoopMiddleware's state key: the reviewer's edits by tool call id (LangChain's)."""
EDIT_KEY = "__hitl_edit__"
"""A planned call's key holding its reviewer's edit (`GraphRun._with_edit`): the journal keeps
it, and a resumed run's `ToolNode` puts it back in the state (`_restored`)."""

__all__ = ["DYNAMIC_TOOL", "EDITS_KEY", "EDIT_KEY", "INVALID_TOOL", "ToolNode"]

INVALID_TOOL = "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
INVOCATION_ERROR = (
    "Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
    " {error}\n"
    " Please fix the error and try again."
)
DYNAMIC_TOOL = "__actloop_dynamic_tool__"
"""The loop's name for calls of tools `create_agent` was not given (middleware's dynamic tools,
run by its `wrap_tool_call`): one `DynamicToolNode` takes them all, the call names the tool."""


def _wrap_sync(m: AgentMiddleware, hook: str, inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`inner` wrapped by `m`'s sync `hook` (`wrap_tool_call`)."""
    method = sync_hook(m, hook)
    return lambda request: method(request, inner)


def _wrap_async(
    m: AgentMiddleware, hook: str, inner: Callable[[Any], Awaitable[Any]]
) -> Callable[[Any], Awaitable[Any]]:
    """`inner` wrapped by `m`'s async `hook` (`wrap_tool_call`)."""
    method = async_hook(m, hook)
    return lambda request: method(request, inner)


class ToolNode:
    """One tool as the loop runs it in a `create_agent` agent: its input is the model's tool
    call; it runs the `wrap_tool_call` chain around the tool and returns LangGraph's
    `ToolMessage` (argument errors become the model's error message; other errors raise).
    `ToolNode(None, run)` takes calls of tools the agent was not given (`DYNAMIC_TOOL`): the
    chain's `request.tool` is None until a middleware sets one."""

    return_direct = False
    """The graph decides return_direct itself (after the whole step), never the loop."""

    def __init__(self, tool: Any, run: GraphRun) -> None:
        self.tool = tool
        self.name: str = DYNAMIC_TOOL if tool is None else tool.name
        self.owner = run
        self.requires_approval: bool = bool(getattr(tool, "requires_approval", False))
        self.idempotent: bool = bool(getattr(tool, "idempotent", True))

    def _request(self, call: dict[str, Any]) -> ToolCallRequest:
        run, runtime = self.owner, self.owner.runtime
        tool_runtime = ToolRuntime(
            run.state,
            runtime.context,
            runtime.config,
            runtime.stream_writer,
            call.get("id"),
            runtime.store,
        )
        tool_runtime.tools = list(run.spec.tools.values())  # type: ignore[attr-defined]
        return ToolCallRequest(call, self._tool_of(call), run.state, tool_runtime)

    def _tool_of(self, call: dict[str, Any]) -> Any:
        """This node's tool, or the agent's tool a reviewer's edit redirected the call to."""
        name = call.get("name")
        if name == self.name or name not in self.owner.spec.tools:
            return self.tool
        return self.owner.spec.tools[name]

    def _unknown(self, call: dict[str, Any]) -> ToolMessage:
        """LangGraph's answer to a call of a tool nobody provided."""
        names = ", ".join(self.owner.spec.tools)
        text = INVALID_TOOL.format(requested_tool=call["name"], available_tools=names)
        return ToolMessage(text, tool_call_id=call["id"], name=call["name"], status="error")

    def run(self, tool_input: dict[str, Any], **kwargs: Any) -> Any:
        _restored(self.owner, tool_input)
        call, edited = _unedited(tool_input)
        node = self._node(call, kwargs)

        def execute(request: ToolCallRequest) -> Any:
            args, answer = self._checked(request)
            if answer is not None:
                return answer
            call_id = request.tool_call["id"]
            return request.tool.run(args, tool_call_id=call_id, **_tool_kwargs(kwargs))

        handler: Callable[[Any], Any] = execute
        for m in reversed(self.owner.spec.tool_wrappers):
            handler = _wrap_sync(m, "wrap_tool_call", handler)
        try:
            result = with_scratch(call["id"], lambda: handler(self._request(call)), self.owner)
            result = self._edited(result, edited)
        except BaseException as exc:
            if node is not None:
                node.error(exc)
            raise
        return journaled(_ended(node, result))

    def _checked(self, request: ToolCallRequest) -> tuple[dict[str, Any], ToolMessage | None]:
        """The call's arguments with the injected ones, or the answer that stands for running
        it: LangGraph's for an unknown tool or for arguments failing the tool's schema."""
        call = request.tool_call
        if request.tool is None:
            return {}, self._unknown(call)
        args = _with_injected(request)
        return args, _invalid(request.tool, call, args)

    def _node(self, call: dict[str, Any], kwargs: dict[str, Any]) -> NodeRun | None:
        """The tools node's run of this call (LangGraph runs one per call), when a handler
        listens; the tool runs inside it."""
        run = self.owner
        push = run.pushed.get(call.get("id", ""), 0)
        node = NodeRun.open(kwargs.get("callbacks"), "tools", run.nodes, [dict(call)], push)
        if node is not None:
            kwargs["callbacks"] = node.child
        return node

    def _edited(self, result: Any, edited: dict[str, Any] | None) -> Any:
        if edited is None:
            return result
        from actloop.agents.middleware.human_in_the_loop import edited_result

        return edited_result(self.owner.spec, result, edited)

    async def arun(self, tool_input: dict[str, Any], **kwargs: Any) -> Any:
        _restored(self.owner, tool_input)
        call, edited = _unedited(tool_input)
        node = self._node(call, kwargs)

        async def execute(request: ToolCallRequest) -> Any:
            args, answer = self._checked(request)
            if answer is not None:
                return answer
            call_id = request.tool_call["id"]
            return await request.tool.arun(args, tool_call_id=call_id, **_tool_kwargs(kwargs))

        handler: Callable[[Any], Awaitable[Any]] = execute
        for m in reversed(self.owner.spec.tool_wrappers):
            handler = _wrap_async(m, "wrap_tool_call", handler)
        try:
            result = await awith_scratch(
                call["id"], lambda: handler(self._request(call)), self.owner
            )
            result = self._edited(result, edited)
        except BaseException as exc:
            if node is not None:
                node.error(exc)
            raise
        return journaled(_ended(node, result))


def _ended(node: NodeRun | None, result: Any) -> Any:
    """End the tools node's run with its output: a tool's message (with the id the state gives
    it: a journal's copy keeps it, so a paused turn's state shows the id it ends with) as an
    update, a `Command` as it is."""
    if isinstance(result, ToolMessage) and not result.id:
        # a uuid4 from `random` (os.urandom would let a sibling call's thread run first here)
        result.id = str(uuid.UUID(int=random.getrandbits(128), version=4))
    if node is None:
        return result
    if isinstance(result, ToolMessage):
        node.end({"messages": [result]})
    else:
        node.end([result])
    return result


def _unedited(tool_input: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The call to run and, for a reviewer's edit, what the reviewer sent (an approval's
    `edited`; a HITL edit the plan carries goes back in the state, see `_restored`)."""
    if "edited" not in tool_input and EDIT_KEY not in tool_input:
        return tool_input, None
    call = {k: v for k, v in tool_input.items() if k not in ("edited", EDIT_KEY)}
    return call, tool_input.get("edited")


def _restored(run: GraphRun, tool_input: dict[str, Any]) -> None:
    """Put the reviewer's edit a planned call carries back in the state, where
    `HumanInTheLoopMiddleware.wrap_tool_call` reads it (a resumed run's state lacks it)."""
    if EDIT_KEY in tool_input:
        edits: dict[str, Any] = run.state.get(EDITS_KEY) or {}
        if tool_input["id"] not in edits:
            run.state[EDITS_KEY] = {**edits, tool_input["id"]: tool_input[EDIT_KEY]}


def _tool_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The driver's run kwargs a tool takes (callbacks, config); colours are classic's."""
    return {k: v for k, v in kwargs.items() if k in ("callbacks", "config")}


def _injected(tool: Any) -> dict[str, Any]:
    """The tool's injected arguments: from its pydantic args schema, or, for a JSON schema
    dict, from its function's signature."""
    schema = getattr(tool, "args_schema", None)
    if isinstance(schema, dict):
        return injected_params(getattr(tool, "func", None) or getattr(tool, "coroutine", None))
    return injected_fields(schema)


def _with_injected(request: ToolCallRequest) -> dict[str, Any]:
    """The call's arguments with the tool's injected ones filled in (`ToolRuntime`,
    `InjectedState`, `InjectedToolCallId`, `InjectedStore`), as LangGraph's ToolNode fills them."""
    call = request.tool_call
    injected = _injected(request.tool)
    if not injected:
        return call["args"]
    args = dict(call["args"])
    runtime: Any = request.runtime
    for name, kind in injected.items():
        if kind == "runtime":
            args[name] = runtime
        elif isinstance(kind, InjectedState):
            args[name] = request.state if kind.field is None else request.state[kind.field]
        elif isinstance(kind, InjectedToolCallId):
            args[name] = call["id"]
        elif isinstance(kind, InjectedStore):
            args[name] = getattr(runtime, "store", None)
    return args


def _invalid(tool: Any, call: dict[str, Any], args: dict[str, Any]) -> ToolMessage | None:
    """LangGraph's message when the call's arguments fail the tool's schema (a tool that
    handles its own validation errors, `handle_validation_error`, answers them itself)."""
    check = getattr(tool, "_to_args_and_kwargs", None)
    if check is None or getattr(tool, "handle_validation_error", False):
        return None
    try:
        check(args, call["id"])
    except InvalidArguments as exc:
        return _invocation_error(call, exc, frozenset(_injected(tool)))
    return None


def _invocation_error(
    call: dict[str, Any], exc: InvalidArguments, injected: frozenset[str] = frozenset()
) -> ToolMessage:
    """LangGraph's `ToolInvocationError` message for arguments that failed validation (errors
    of arguments the agent injects are not the model's: left out)."""
    cause = exc.cause
    errors = getattr(cause, "errors", None)
    if callable(errors):
        lines = [
            ".".join(str(p) for p in e.get("loc", ())) + ": " + str(e.get("msg", "Unknown error"))
            for e in cast("list[dict[str, Any]]", errors())
            if not (e.get("loc") and e["loc"][0] in injected)
        ]
        detail = "\n".join(lines)
    else:
        detail = str(exc)
    text = INVOCATION_ERROR.format(tool_name=call["name"], tool_kwargs=call["args"], error=detail)
    return ToolMessage(text, tool_call_id=call["id"], name=call["name"], status="error")
