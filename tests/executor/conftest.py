"""Shared helpers for executor tests: tools, finishes, and what a scripted agent was shown.

The scripted agents themselves are `actloop.testing.ScriptedAgent` / `ScriptedMultiActionAgent`;
`ScriptedAgent` is re-exported here for the tests that import it from this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from actloop import AgentAction, AgentFinish, Tool
from actloop.testing import ScriptedAgent, ScriptedMultiActionAgent

__all__ = ["ScriptedAgent", "finish", "make_tool", "seen"]


def seen(agent: ScriptedAgent | ScriptedMultiActionAgent) -> list[list[tuple[AgentAction, Any]]]:
    """The intermediate steps the scripted agent was shown, one list per plan call."""
    return [call.intermediate_steps for call in agent.calls]


def make_tool(name: str, func: Callable[[str], Any], **kwargs: Any) -> Tool:
    return Tool(name=name, func=func, description=f"{name} tool", **kwargs)


@pytest.fixture
def search() -> Tool:
    return make_tool("search", lambda q: f"results for {q}")


@pytest.fixture
def lookup() -> Tool:
    return make_tool("lookup", lambda q: f"entry {q}")


def finish(text: str, log: str = "final") -> AgentFinish:
    return AgentFinish({"output": text}, log)
