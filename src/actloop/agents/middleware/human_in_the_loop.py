"""`HumanInTheLoopMiddleware`: approve, edit, reject or answer tool calls before they run.

As LangChain's: in `interrupt_mode="batched"` its `after_model` calls `interrupt()` with one
`HITLRequest` (the gated calls' action requests and review configs) and, on
`Command(resume={"decisions": [...]})`, answers rejected calls with LangChain's messages, keeps
approved and edited ones (an edit is applied in `wrap_tool_call`, the result prefixed with a
notice); in `"per_call"` each gated call asks in `wrap_tool_call` with a `ToolApprovalRequest`,
answered by interrupt id with one decision. The pauses are actloop's durable ones (`interrupt()`
in a node or a tool call, `agents/_interrupts.py`): nothing of the step runs before the decision
and a finished call is never run again.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Annotated, Any, Generic, Literal, cast

from typing_extensions import NotRequired, TypedDict

from actloop.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    PrivateStateAttr,
    ResponseT,
    Runtime,
    ToolCallRequest,
)
from actloop.agents.types import Command, Interrupt, interrupt
from actloop.executor import Resume
from actloop.messages import AIMessage, ToolMessage

__all__ = [
    "Action",
    "ActionRequest",
    "Decision",
    "DecisionType",
    "HITLRequest",
    "HITLResponse",
    "HumanInTheLoopMiddleware",
    "InterruptMode",
    "InterruptOnConfig",
    "ReviewConfig",
    "ToolApprovalRequest",
]

_EDITED_TOOL_CALLS_KEY = "hitl_edited_tool_calls"
"""State key mapping tool call ID to the reviewer's replacement for it."""

EDIT_NOTICE = (
    "Note: a human reviewer replaced this tool call before it ran. The call recorded in "
    "your message is the one you produced, not the one that executed. This was "
    "intentional and authorized. Do not re-issue your original call."
)
_EDIT_NOTICE = EDIT_NOTICE
ALL_DECISIONS = ["approve", "edit", "reject", "respond"]
SUPPORTED = ("approve", "edit", "reject")
"""The decisions on a tool's own `requires_approval` pause (actloop's durable approvals)."""

DecisionType = Literal["approve", "edit", "reject", "respond"]
InterruptMode = Literal["batched", "per_call"]
"""How HITL pauses: one interrupt per model turn (`batched`) or per gated tool call."""


class Action(TypedDict):
    """An action: a tool name and its arguments."""

    name: str
    args: dict[str, Any]


class ActionRequest(TypedDict):
    """An action to review, with its description."""

    name: str
    args: dict[str, Any]
    description: NotRequired[str]


class ReviewConfig(TypedDict):
    """The decisions allowed on one action."""

    action_name: str
    allowed_decisions: list[DecisionType]
    args_schema: NotRequired[dict[str, Any]]


class HITLRequest(TypedDict):
    """The batched interrupt's value: the actions of one model turn to review."""

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]


class ApproveDecision(TypedDict):
    """Run the call as the model made it."""

    type: Literal["approve"]


class EditDecision(TypedDict):
    """Run the reviewer's call instead."""

    type: Literal["edit"]
    edited_action: Action


class RejectDecision(TypedDict):
    """Do not run the call; tell the model why (`message`)."""

    type: Literal["reject"]
    message: NotRequired[str]


class RespondDecision(TypedDict):
    """Do not run the call; `message` is its result."""

    type: Literal["respond"]
    message: str


Decision = ApproveDecision | EditDecision | RejectDecision | RespondDecision


class HITLResponse(TypedDict):
    """The answer to a batched interrupt: one decision per action, in order."""

    decisions: list[Decision]


class ToolApprovalRequest(TypedDict):
    """The per-call interrupt's value: one gated call."""

    type: Literal["tool_approval"]
    tool_call_id: str
    name: str
    args: dict[str, Any]
    description: str


class InterruptOnConfig(TypedDict):
    """A gated tool's decisions, description (text or `f(call, state, runtime)`) and
    `when` predicate (`f(ToolCallRequest) -> bool`: False runs the call unreviewed)."""

    allowed_decisions: list[DecisionType]
    description: NotRequired[str | Callable[..., str]]
    args_schema: NotRequired[dict[str, Any]]
    when: NotRequired[Callable[[ToolCallRequest], bool]]


class _HumanInTheLoopState(AgentState[ResponseT], Generic[ResponseT]):
    """The middleware's state: the reviewer's edits of the turn's calls (private)."""

    hitl_edited_tool_calls: NotRequired[Annotated[dict[str, Action], PrivateStateAttr]]


def _edit_args(tool: Any) -> object:
    """What an edit's `args` must look like: the tool's pydantic call schema, if it has one."""
    from pydantic import BaseModel, WithJsonSchema

    schema = getattr(tool, "tool_call_schema", None) if tool is not None else None
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        shown = cast("dict[str, Any]", schema) if isinstance(schema, dict) else {"type": "object"}
        return Annotated[dict[str, Any], WithJsonSchema(shown)]
    return schema


def _as_sent(answer: object, check: Any) -> object:
    """Check `answer`, then pass it on as sent, so the tool validates its args once."""
    check(answer)
    return answer


def _edit_decision(name: str, tool: Any) -> object:
    """`EditDecision` for one tool: `name` pinned to it, `args` from `_edit_args`."""
    from pydantic import WrapValidator, create_model

    edited_action = create_model(
        "EditedAction",
        name=(cast("Any", Literal[name]), ...),
        args=(cast("Any", _edit_args(tool)), ...),
    )
    decision = create_model(
        "EditDecision", type=(cast("Any", Literal["edit"]), ...), edited_action=(edited_action, ...)
    )
    return Annotated[decision, WrapValidator(_as_sent)]


def _decision_schema(allowed: Sequence[DecisionType], name: str, tool: Any = None) -> Any:
    """The per-call `response_schema`: the decision types `allowed` (LangChain's), the edit
    branch pinned to this tool and its argument schema; matched on `type`."""
    from typing import Union

    from pydantic import Discriminator

    by_type: dict[str, object] = {
        "approve": ApproveDecision,
        "reject": RejectDecision,
        "respond": RespondDecision,
    }
    if "edit" in allowed:
        by_type["edit"] = _edit_decision(name, tool)
    members = tuple(by_type[d] for d in dict.fromkeys(allowed))
    if len(members) == 1:
        return members[0]
    return Annotated[Union[members], Discriminator("type")]  # noqa: UP007


def _answer_message(tool_call: dict[str, Any], decision: Any) -> ToolMessage:
    """The message the model gets in place of the tool's result (reject or respond)."""
    if decision["type"] == "respond":
        content = decision["message"]
    elif reason := decision.get("message"):
        content = f"User rejected the tool call for `{tool_call['name']}` with reason: {reason}"
    else:
        content = (
            f"User rejected the tool call for `{tool_call['name']}` with id "
            f"{tool_call['id']}. The tool was not executed. Do not retry this tool "
            "call unless the user explicitly requests it."
        )
    status = "success" if decision["type"] == "respond" else "error"
    message = ToolMessage(
        content, name=tool_call["name"], tool_call_id=tool_call["id"], status=status
    )
    message.additional_kwargs.update(
        {"lc_source": "hitl_interrupt_decision", "lc_data": {"decision": decision["type"]}}
    )
    return message


class HumanInTheLoopMiddleware(AgentMiddleware):
    """Pause before the tools named in `interrupt_on` run, for a person's decision."""

    state_schema = _HumanInTheLoopState
    private_state = (_EDITED_TOOL_CALLS_KEY,)

    def __init__(
        self,
        interrupt_on: dict[str, bool | InterruptOnConfig],
        *,
        description_prefix: str = "Tool execution requires approval",
        edit_notice: str | None = EDIT_NOTICE,
        interrupt_mode: InterruptMode = "batched",
    ) -> None:
        super().__init__()
        if interrupt_mode not in ("batched", "per_call"):
            raise ValueError(
                f"`interrupt_mode` must be 'batched' or 'per_call', got {interrupt_mode!r}."
            )
        self.interrupt_mode = interrupt_mode
        self.edit_notice = edit_notice
        self.description_prefix = description_prefix
        self.interrupt_on: dict[str, InterruptOnConfig] = {}
        for name, config in interrupt_on.items():
            if isinstance(config, bool):
                if config:
                    self.interrupt_on[name] = InterruptOnConfig(
                        allowed_decisions=cast("list[DecisionType]", list(ALL_DECISIONS))
                    )
            elif config.get("allowed_decisions"):
                self.interrupt_on[name] = config
            else:
                raise ValueError(
                    f"Invalid `interrupt_on` config for tool '{name}': `allowed_decisions` "
                    "must be a non-empty list of decision types (e.g. ['approve', 'reject']). "
                    f"Got config with keys {sorted(config)} and "
                    f"allowed_decisions={config.get('allowed_decisions')!r}."
                )

    def gates(self, tool: str) -> bool:
        """Whether calls to `tool` wait for a decision."""
        return tool in self.interrupt_on

    def _create_action_and_config(
        self, tool_call: dict[str, Any], config: InterruptOnConfig, state: Any, runtime: Any
    ) -> tuple[ActionRequest, ReviewConfig]:
        """LangChain's action request and review config for one gated call."""
        described = config.get("description")
        if callable(described):
            description = described(tool_call, state, runtime)
        elif described is not None:
            description = described
        else:
            description = (
                f"{self.description_prefix}\n\nTool: {tool_call['name']}\nArgs: {tool_call['args']}"
            )
        action = ActionRequest(
            name=tool_call["name"], args=tool_call["args"], description=description
        )
        review = ReviewConfig(
            action_name=tool_call["name"], allowed_decisions=config["allowed_decisions"]
        )
        return action, review

    def request(self, call: dict[str, Any], state: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The action request and review config of `call` (no runtime)."""
        action, review = self._create_action_and_config(
            call, self.interrupt_on[call["name"]], state, None
        )
        return cast("dict[str, Any]", action), cast("dict[str, Any]", review)

    @staticmethod
    def _process_decision(
        decision: Any, tool_call: dict[str, Any], config: InterruptOnConfig
    ) -> tuple[dict[str, Any] | None, ToolMessage | None]:
        """The call kept and the message answering it, for one decision."""
        allowed = config["allowed_decisions"]
        kind = decision["type"]
        if kind in ("approve", "edit") and kind in allowed:
            return tool_call, None
        if kind in allowed and kind in ("reject", "respond"):
            return tool_call, _answer_message(tool_call, decision)
        raise ValueError(
            f"Unexpected human decision: {decision}. Decision type '{decision.get('type')}' "
            f"is not allowed for tool '{tool_call['name']}'. "
            f"Expected one of {allowed} based on the tool's configuration."
        )

    def _should_interrupt(
        self, tool_call: dict[str, Any], config: InterruptOnConfig, state: Any, runtime: Any
    ) -> bool:
        """False when the `when` predicate lets this call run unreviewed."""
        when = config.get("when")
        if when is None:
            return True
        from actloop.tools import ToolRuntime

        try:
            config_of_run = get_config()
        except RuntimeError:
            config_of_run = dict(getattr(runtime, "config", None) or {})
        tool_runtime = ToolRuntime(
            state,
            getattr(runtime, "context", None),
            config_of_run,
            getattr(runtime, "stream_writer", None) or (lambda _: None),
            tool_call["id"],
            getattr(runtime, "store", None),
        )
        tool_runtime.tools = []  # type: ignore[attr-defined]  # LangChain's: none given
        return when(ToolCallRequest(tool_call, None, state, tool_runtime))

    def _tool_approval_request(
        self, request: ToolCallRequest, config: InterruptOnConfig
    ) -> ToolApprovalRequest:
        """The per-call interrupt's value for one gated call."""
        tool_call = request.tool_call
        if tool_call.get("id") is None:
            raise ValueError(
                f"Tool call `{tool_call['name']}` has no ID, so its result can't be matched "
                "to it. Make sure the chat model returns tool call IDs."
            )
        action, _ = self._create_action_and_config(
            tool_call, config, request.state, _graph_runtime(request.runtime)
        )
        return ToolApprovalRequest(
            type="tool_approval",
            tool_call_id=tool_call["id"],
            name=tool_call["name"],
            args=tool_call["args"],
            description=action.get("description", ""),
        )

    def _resolve_per_call(
        self, request: ToolCallRequest
    ) -> tuple[ToolCallRequest, Action | None] | ToolMessage:
        """Ask the reviewer about one call, if it is gated: the request to run (the
        reviewer's call for an edit), or the message to answer it with."""
        tool_call = request.tool_call
        config = self.interrupt_on.get(tool_call["name"])
        if config is None:
            return request, None
        when = config.get("when")
        if when is not None and not when(request):
            return request, None
        value = self._tool_approval_request(request, config)
        schema = _decision_schema(config["allowed_decisions"], tool_call["name"], request.tool)
        decision = interrupt(value, response_schema=schema)
        if decision["type"] == "approve":
            return request, None
        if decision["type"] == "edit":
            executed = cast("Action", decision["edited_action"])
            return self._apply_edit(request, executed), executed
        return _answer_message(tool_call, decision)

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Batched mode: one interrupt for the last model turn's gated calls; the turn's
        calls as decided (rejected and answered ones answered by a message)."""
        if self.interrupt_mode == "per_call":
            return None
        messages = state["messages"]
        if not messages:
            return None
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None or not last.tool_calls:
            return None
        actions: list[ActionRequest] = []
        reviews: list[ReviewConfig] = []
        gated: list[int] = []
        for index, call in enumerate(last.tool_calls):
            tool_call = cast("dict[str, Any]", call)
            config = self.interrupt_on.get(tool_call["name"])
            if config is None or not self._should_interrupt(tool_call, config, state, runtime):
                continue
            action, review = self._create_action_and_config(tool_call, config, state, runtime)
            actions.append(action)
            reviews.append(review)
            gated.append(index)
        if not actions:
            return {_EDITED_TOOL_CALLS_KEY: {}} if state.get(_EDITED_TOOL_CALLS_KEY) else None
        decisions = interrupt(HITLRequest(action_requests=actions, review_configs=reviews))[
            "decisions"
        ]
        if len(decisions) != len(gated):
            raise ValueError(
                f"Number of human decisions ({len(decisions)}) does not match "
                f"number of hanging tool calls ({len(gated)})."
            )
        return self._decided(last, gated, decisions)

    def _decided(self, last: AIMessage, gated: list[int], decisions: list[Any]) -> dict[str, Any]:
        """The update for the decisions on the `gated` calls of `last`."""
        revised: list[Any] = []
        answers: list[ToolMessage] = []
        edited: dict[str, Any] = {}
        decided = iter(decisions)
        for index, call in enumerate(last.tool_calls):
            tool_call = cast("dict[str, Any]", call)
            if index not in gated:
                revised.append(tool_call)
                continue
            decision = next(decided)
            kept, answer = self._process_decision(
                decision, tool_call, self.interrupt_on[tool_call["name"]]
            )
            if kept is not None:
                revised.append(kept)
                if decision["type"] == "edit" and kept.get("id"):
                    edited[kept["id"]] = decision["edited_action"]
            if answer is not None:
                answers.append(answer)
        last.tool_calls = revised
        return {"messages": [last, *answers], _EDITED_TOOL_CALLS_KEY: edited}

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Async `after_model`."""
        return self.after_model(state, runtime)

    def _reviewer_edit(self, request: ToolCallRequest) -> Action | None:
        """The reviewer's replacement for this call, if an edit replaced it."""
        call_id = request.tool_call.get("id")
        if not call_id:
            return None
        state = cast("dict[str, Any]", request.state or {})
        edited = cast("dict[str, Action]", state.get(_EDITED_TOOL_CALLS_KEY) or {})
        return edited.get(call_id)

    def _apply_edit(self, request: ToolCallRequest, executed: Action) -> ToolCallRequest:
        """The request pointed at the reviewer's call (another tool of the agent's, if
        named)."""
        tool_call = {**request.tool_call, "name": executed["name"], "args": executed["args"]}
        if executed["name"] == request.tool_call["name"]:
            return request.override(tool_call=tool_call)
        available: list[Any] = list(getattr(request.runtime, "tools", None) or [])
        tool = next((t for t in available if t.name == executed["name"]), None)
        if tool is None:
            names = ", ".join(sorted(t.name for t in available))
            raise ValueError(
                f"Reviewer edited tool call {request.tool_call['id']!r} to "
                f"{executed['name']!r}, which is not an available tool. "
                f"Available tools: {names}."
            )
        return request.override(tool_call=tool_call, tool=tool)

    def _notice(self, executed: Action, *, has_content: bool) -> str:
        """The notice, naming the call that ran."""
        notice = (
            f"{self.edit_notice} Executed instead: {executed['name']} with arguments "
            f"{json.dumps(executed['args'], default=str)}."
        )
        return f"{notice}\n\nTool response:" if has_content else notice

    def _prepend_notice(self, message: ToolMessage, executed: Action) -> ToolMessage:
        """`message` (a copy) with the edit notice in front of its content."""
        if not self.edit_notice:
            return message
        notice = self._notice(executed, has_content=bool(message.content))
        content: Any = message.content
        if isinstance(content, str):
            if notice in content:
                return message
            content = f"{notice}{chr(10) if content else ''}{content}"
        else:
            blocks = cast("list[Any]", content)
            if any(notice in str(b) for b in blocks):
                return message
            plain = bool(blocks) and all(isinstance(b, str) for b in blocks)
            content = [notice if plain else {"type": "text", "text": notice}, *blocks]
        marked = copy.copy(message)
        marked.content = content
        return marked

    def _annotate_edited_result(
        self, result: Any, request: ToolCallRequest, executed: Action | None
    ) -> Any:
        """Tell the model a reviewer replaced the call, and with what."""
        if not self.edit_notice or executed is None:
            return result
        if isinstance(result, ToolMessage):
            return self._prepend_notice(result, executed)
        update: Any = result.update if isinstance(result, Command) else None
        if not isinstance(update, dict):
            return result
        update = cast("dict[str, Any]", update)
        messages = update.get("messages")
        if not isinstance(messages, list):
            return result
        call_id = request.tool_call.get("id")
        marked = [
            self._prepend_notice(m, executed)
            if isinstance(m, ToolMessage) and m.tool_call_id == call_id
            else m
            for m in cast("list[Any]", messages)
        ]
        return replace(result, update={**update, "messages": marked})

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[Any], Any]) -> Any:
        """Run the call as decided: the reviewer's edit applied and noted (per-call mode:
        ask first)."""
        if self.interrupt_mode == "per_call":
            resolved = self._resolve_per_call(request)
            if isinstance(resolved, ToolMessage):
                return resolved
            to_run, executed = resolved
            return self._annotate_edited_result(handler(to_run), to_run, executed)
        executed = self._reviewer_edit(request)
        if executed is not None:
            request = self._apply_edit(request, executed)
        return self._annotate_edited_result(handler(request), request, executed)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Async `wrap_tool_call`."""
        if self.interrupt_mode == "per_call":
            resolved = self._resolve_per_call(request)
            if isinstance(resolved, ToolMessage):
                return resolved
            to_run, executed = resolved
            return self._annotate_edited_result(await handler(to_run), to_run, executed)
        executed = self._reviewer_edit(request)
        if executed is not None:
            request = self._apply_edit(request, executed)
        return self._annotate_edited_result(await handler(request), request, executed)


def _graph_runtime(tool_runtime: Any) -> Runtime:
    """The node's `Runtime` a description factory gets (as in batched mode), from a call's."""
    return Runtime(
        context=getattr(tool_runtime, "context", None),
        store=getattr(tool_runtime, "store", None),
        stream_writer=getattr(tool_runtime, "stream_writer", None) or (lambda _: None),
        config=dict(getattr(tool_runtime, "config", None) or {}),
    )


def get_config() -> dict[str, Any]:
    """LangGraph's ambient config of the running node; actloop has none (RuntimeError, as
    LangGraph's outside a run): the `when` predicate's runtime gets the node runtime's config."""
    raise RuntimeError("Called get_config outside of a runnable context")


def paused_node(spec: Any) -> str | None:
    """The node LangGraph names as next while the middleware waits (its `after_model`)."""
    hitl = _middleware(spec)
    return None if hitl is None else f"{hitl.name}.after_model"


def _middleware(spec: Any) -> HumanInTheLoopMiddleware | None:
    found = [m for m in spec.middleware if isinstance(m, HumanInTheLoopMiddleware)]
    return found[0] if found else None


def interrupts_of(spec: Any, pending: list[dict[str, Any]], state: Any) -> list[Interrupt]:
    """The `__interrupt__` value of a run paused with `pending` calls."""
    hitl = _middleware(spec)
    actions: list[dict[str, Any]] = []
    reviews: list[dict[str, Any]] = []
    for entry in pending:
        call = cast("dict[str, Any]", entry["tool_input"])
        if hitl is not None and hitl.gates(call["name"]):
            action, review = hitl.request(call, state)
        else:  # a tool with requires_approval=True of its own
            action = {"name": call["name"], "args": call["args"], "description": ""}
            review = {"action_name": call["name"], "allowed_decisions": list(SUPPORTED)}
        actions.append(action)
        reviews.append(review)
    value = {"action_requests": actions, "review_configs": reviews}
    return [Interrupt(value, id=",".join(str(e["id"]) for e in pending))]


def decisions_to_resume(answer: Any, pending: list[dict[str, Any]]) -> Resume:
    """The executor's `Resume` for `{"decisions": [...]}`, one decision per waiting call."""
    decisions = cast("list[dict[str, Any]]", answer["decisions"])
    if len(decisions) != len(pending):
        raise ValueError(
            f"Number of human decisions ({len(decisions)}) does not match number of hanging "
            f"tool calls ({len(pending)})."
        )
    approve: set[str] = set()
    reject: dict[str, str | None] = {}
    edit: dict[str, Any] = {}
    for entry, decision in zip(pending, decisions, strict=True):
        call_id, call = str(entry["id"]), cast("dict[str, Any]", entry["tool_input"])
        kind = decision.get("type")
        if kind == "approve":
            approve.add(call_id)
        elif kind == "edit":
            edited = decision["edited_action"]
            name = edited.get("name", call["name"])  # LangChain runs the reviewer's tool
            edit[call_id] = {**call, "name": name, "args": edited["args"], "edited": edited}
        elif kind == "reject":
            reject[call_id] = json.dumps({"message": decision.get("message")})
        else:
            raise ValueError(f"Unexpected human decision: {decision}.")
    return Resume.of(approve=approve, reject=reject, edit=edit)


def rejected_message(call: dict[str, Any], reason: str | None) -> ToolMessage:
    """LangChain's message for a rejected call (`reason`: the reviewer's message, if any)."""
    if reason:
        content = f"User rejected the tool call for `{call['name']}` with reason: {reason}"
    else:
        content = (
            f"User rejected the tool call for `{call['name']}` with id {call['id']}. The tool "
            "was not executed. Do not retry this tool call unless the user explicitly "
            "requests it."
        )
    message = ToolMessage(content, tool_call_id=call["id"], name=call["name"], status="error")
    message.additional_kwargs.update(
        {"lc_source": "hitl_interrupt_decision", "lc_data": {"decision": "reject"}}
    )
    return message


def edited_result(spec: Any, message: Any, edited: dict[str, Any]) -> Any:
    """An edited call's result with LangChain's notice in front (when the notice is on)."""
    hitl = _middleware(spec)
    if hitl is None or not hitl.edit_notice or not isinstance(message, ToolMessage):
        return message
    content = message.content
    notice = (
        f"{hitl.edit_notice} Executed instead: {edited['name']} with arguments "
        f"{json.dumps(edited['args'], default=str)}."
    )
    if isinstance(content, str):
        message.content = f"{notice}\n\nTool response:\n{content}" if content else notice
    return message
