"""A deterministic agent and side-effect tools shared by the in-process tests and the child process.

The agent decides from the steps it is shown alone (never from a counter of its own), so a resumed
run asks it exactly what an uninterrupted run would. Every third step plans two calls at once.
Each tool appends `name:input` to the side-effect log, then works a little (a window for kills to
land in: a call killed there has had its effect but has no saved observation), then returns.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from actloop import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    Tool,
)
from actloop.checkpoint import BaseCheckpointer

STEPS = 16
"""Calls an uninterrupted run makes."""


class CountingAgent(BaseMultiActionAgent):
    """Plans `add`/`mul` calls until STEPS observations exist, then finishes with all of them."""

    def __init__(self) -> None:
        self.plans = 0

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        self.plans += 1
        n = len(intermediate_steps)
        if n >= STEPS:
            text = " ".join(str(obs) for _, obs in intermediate_steps)
            return AgentFinish({"output": f"{kwargs['input']}: {text}"}, "done")
        if n % 3 == 2 and n + 2 <= STEPS:
            return [
                AgentAction("add", f"a{n}", f"add {n}"),
                AgentAction("mul", f"m{n}", f"mul {n}"),
            ]
        return [AgentAction("add", f"a{n}", f"add {n}")]


class TwoCalls(BaseSingleActionAgent):
    """Calls `tool` twice (inputs one, two), then finishes with both observations."""

    def __init__(self, tool: str) -> None:
        self.tool = tool

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        if len(intermediate_steps) < 2:
            n = ["one", "two"][len(intermediate_steps)]
            return AgentAction(self.tool, n, f"call {n}")
        return AgentFinish({"output": " ".join(o for _, o in intermediate_steps)}, "done")


def side_effect_tool(name: str, log: Path, delay: float = 0.002, **attrs: Any) -> Tool:
    """A tool that records `name:input` in `log`, sleeps `delay`, and returns `name(input)`."""

    def run(text: str) -> str:
        with open(log, "a") as f:
            f.write(f"{name}:{text}\n")
            f.flush()
        time.sleep(delay)
        return f"{name}({text})"

    tool = Tool(name=name, func=run, description=f"{name} tool")
    for key, value in attrs.items():
        setattr(tool, key, value)
    return tool


def build(
    log: Path, checkpointer: BaseCheckpointer | None = None, delay: float = 0.002, **kwargs: Any
) -> AgentExecutor:
    """The crash-test executor: CountingAgent with `add` and `mul` (each working `delay` s)."""
    tools = [side_effect_tool("add", log, delay), side_effect_tool("mul", log, delay)]
    return AgentExecutor(
        agent=CountingAgent(),
        tools=tools,
        checkpointer=checkpointer,
        return_intermediate_steps=True,
        max_iterations=None,
        **kwargs,
    )


def mark_process(log: Path) -> None:
    """Start a new segment of the side-effect log for this process."""
    with open(log, "a") as f:
        f.write(f"# process {os.getpid()}\n")
