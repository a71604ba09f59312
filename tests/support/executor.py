"""Helpers for executor tests: tools, finishes, and what a scripted agent was shown.

The scripted agents themselves are `actloop.testing.ScriptedAgent` / `ScriptedMultiActionAgent`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from actloop import AgentAction, AgentFinish, Tool
from actloop.testing import ScriptedAgent, ScriptedMultiActionAgent

__all__ = ["finish", "make_tool", "seen"]


def seen(agent: ScriptedAgent | ScriptedMultiActionAgent) -> list[list[tuple[AgentAction, Any]]]:
    """The intermediate steps the scripted agent was shown, one list per plan call."""
    return [call.intermediate_steps for call in agent.calls]


def make_tool(name: str, func: Callable[[str], Any], **kwargs: Any) -> Tool:
    return Tool(name=name, func=func, description=f"{name} tool", **kwargs)


def finish(text: str, log: str = "final") -> AgentFinish:
    return AgentFinish({"output": text}, log)
