"""LangGraph's static interrupts (`interrupt_before`/`interrupt_after` of "model" or "tools") on
actloop's durable pause.

A static interrupt is a plan of one action: a call of the `PauseNode`, which needs approval, so
the durable run pauses on it as on any gated call (its journal keeps what the run did so far).
The call's input says where the graph goes on (`to`); its message log holds the state's messages,
so a resumed run, which replays its journal, has them back. `invoke(None, config)` (or any
`Command`) approves it: the pause "runs" (nothing), and the next plan goes on at `to`. A run
without a checkpointer and a thread id cannot pause: it ends there, as LangGraph's does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAUSE_TOOL", "PauseNode", "is_pause", "next_node", "validated"]

PAUSE_TOOL = "__interrupt__"
"""The pause's tool name (no user tool may have it: LangGraph reserves it too)."""

NODES = ("model", "tools")


def validated(names: list[str] | None, middleware: list[Any]) -> frozenset[str]:
    """The node names asked for: LangGraph's error for a node that does not exist; middleware
    nodes (`"Name.before_model"`, ...) are not supported yet."""
    hooks = ("before_agent", "before_model", "after_model", "after_agent")
    known = {f"{m.name}.{h}" for m in middleware for h in hooks}
    for name in names or []:
        if name in known:
            raise NotImplementedError(
                f"interrupts at middleware nodes ({name!r}) are not supported yet; "
                "use 'model' or 'tools'"
            )
        if name not in NODES:
            raise ValueError(f"Interrupt node `{name}` not found")
    return frozenset(names or [])


def is_pause(action: Any) -> bool:
    """Whether a planned action is a static interrupt's pause."""
    return getattr(action, "tool", None) == PAUSE_TOOL


def next_node(spec: Any, to: str) -> str:
    """LangGraph's name of the node a pause goes on with (`StateSnapshot.next`)."""
    hooks = spec.hooks
    if to == "model" and hooks["before_model"]:
        return f"{hooks['before_model'][0].name}.before_model"
    if to == "after_model":
        return f"{hooks['after_model'][-1].name}.after_model"
    if to == "end":
        return f"{hooks['after_agent'][-1].name}.after_agent"
    return "model" if to in ("model", "model_node") else to


class PauseNode:
    """The tool a pause calls: it needs approval (so the durable run pauses) and does nothing."""

    name = PAUSE_TOOL
    return_direct = False
    requires_approval = True
    idempotent = True

    def run(self, tool_input: dict[str, Any], **kwargs: Any) -> str:
        return ""

    async def arun(self, tool_input: dict[str, Any], **kwargs: Any) -> str:
        return ""
