"""`HumanInTheLoopMiddleware`: approve, edit or reject tool calls, on actloop's durable approvals.

LangChain pauses the graph with `interrupt()` in `after_model`; here a gated tool is a tool that
`requires_approval`, so the durable run itself pauses before the step runs (nothing of the step
runs unapproved, finished calls are never repeated) and `invoke` returns the state with
LangChain's `__interrupt__` (one `Interrupt` holding `action_requests` and `review_configs`).
`Command(resume={"decisions": [...]})` goes on: each decision, in the order of the requests,
becomes an approval, an edit (the call runs with the reviewer's arguments, its result prefixed
with LangChain's notice) or a rejection (LangChain's rejection message, status "error").
"""

from __future__ import annotations

import json
from typing import Any, cast

from actloop.agents.middleware.types import AgentMiddleware
from actloop.agents.types import Interrupt
from actloop.executor import Resume
from actloop.messages import ToolMessage

__all__ = ["HumanInTheLoopMiddleware", "InterruptOnConfig"]

InterruptOnConfig = dict[str, Any]
"""`{"allowed_decisions": [...], "description": str | callable}`."""

EDIT_NOTICE = (
    "Note: a human reviewer replaced this tool call before it ran. The call recorded in "
    "your message is the one you produced, not the one that executed. This was "
    "intentional and authorized. Do not re-issue your original call."
)
ALL_DECISIONS = ["approve", "edit", "reject", "respond"]
SUPPORTED = ("approve", "edit", "reject")


class HumanInTheLoopMiddleware(AgentMiddleware):
    """Pause before the tools named in `interrupt_on` run, for a person's decision."""

    def __init__(
        self,
        interrupt_on: dict[str, bool | InterruptOnConfig],
        *,
        description_prefix: str = "Tool execution requires approval",
        edit_notice: str | None = EDIT_NOTICE,
        interrupt_mode: str = "batched",
    ) -> None:
        if interrupt_mode != "batched":
            raise NotImplementedError("only interrupt_mode='batched' is supported")
        self.description_prefix = description_prefix
        self.edit_notice = edit_notice
        self.interrupt_on: dict[str, InterruptOnConfig] = {}
        for name, config in interrupt_on.items():
            if isinstance(config, bool):
                if config:
                    self.interrupt_on[name] = {"allowed_decisions": list(ALL_DECISIONS)}
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

    def request(self, call: dict[str, Any], state: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """LangChain's action request and review config for one waiting call."""
        config = self.interrupt_on[call["name"]]
        described = config.get("description")
        if callable(described):
            description = described(call, state, None)
        elif described is not None:
            description = described
        else:
            description = f"{self.description_prefix}\n\nTool: {call['name']}\nArgs: {call['args']}"
        action = {"name": call["name"], "args": call["args"], "description": description}
        return action, {
            "action_name": call["name"],
            "allowed_decisions": config["allowed_decisions"],
        }


def gated(spec: Any, tool: str) -> bool:
    """Whether a human-in-the-loop middleware of `spec` gates `tool`."""
    hitl = _middleware(spec)
    return hitl is not None and hitl.gates(tool)


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
