"""Shared helpers for executor tests: scripted agents (the model's decisions) and tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from actloop import (
    AgentAction,
    AgentFinish,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    Tool,
)


class ScriptedAgent(BaseSingleActionAgent):
    """Plays back a list of decisions (an exception in the list is raised); records what it saw."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.seen: list[list[tuple[AgentAction, Any]]] = []
        self.inputs: list[dict[str, Any]] = []

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(intermediate_steps))
        self.inputs.append(kwargs)
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


class ScriptedMultiAgent(BaseMultiActionAgent):
    """Multi-action twin of ScriptedAgent."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.seen: list[list[tuple[AgentAction, Any]]] = []

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(intermediate_steps))
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


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
