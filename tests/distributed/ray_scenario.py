"""The executor the Ray workers build (`ray_scenario:make_executor`) and its expected result.

Workers import this module by name (the test puts this directory on PYTHONPATH). Each tool
call appends `thread:input pid` to the side-effect log named by $ACTLOOP_RAY_LOG, then works
for a while (a window for kills to land in).
"""

from __future__ import annotations

import os
import time
from typing import Any

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Tool

STEPS = 5
DELAY = 0.15


class Steps(BaseSingleActionAgent):
    """Calls `work` STEPS times (inputs `<input>-<n>`), then finishes with the observations."""

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        n = len(intermediate_steps)
        if n < STEPS:
            return AgentAction("work", f"{kwargs['input']}-{n}", f"step {n}")
        return AgentFinish({"output": " ".join(o for _, o in intermediate_steps)}, "done")


def work(text: str) -> str:
    with open(os.environ["ACTLOOP_RAY_LOG"], "a") as f:
        f.write(f"{text} {os.getpid()}\n")
    time.sleep(DELAY)
    return f"did({text})"


def make_executor() -> AgentExecutor:
    """The zero-argument factory the runner is given."""
    tool = Tool(name="work", func=work, description="does work")
    return AgentExecutor(agent=Steps(), tools=[tool])


def expected(text: str) -> dict[str, Any]:
    """The result of an uninterrupted run of input `text`."""
    return {"input": text, "output": " ".join(f"did({text}-{n})" for n in range(STEPS))}
