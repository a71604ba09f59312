"""The executors the Ray workers build (`ray_scenario:make_executor`, and
`ray_scenario:make_deadline_executor` for the frozen store) and their expected result.

Workers import this module by name (the test puts this directory on PYTHONPATH). Each tool
call appends `<input>-<step> <pid>` to the side-effect log named by $ACTLOOP_RAY_LOG, then works
for a while (a window for kills, or a freeze of the store, to land in).
"""

from __future__ import annotations

import os
import time
from typing import Any

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Tool

STEPS = 5
DELAY = 0.15
SLOW_DELAY = 0.3
"""How long a call of `make_deadline_executor` works."""
DEADLINE = 4.0
"""The `max_execution_time` of `make_deadline_executor` (an uninterrupted run takes ~1.5 s)."""


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


def logged(text: str, delay: float) -> str:
    """Log the call, then work for `delay` seconds."""
    with open(os.environ["ACTLOOP_RAY_LOG"], "a") as f:
        f.write(f"{text} {os.getpid()}\n")
    time.sleep(delay)
    return f"did({text})"


def work(text: str) -> str:
    return logged(text, DELAY)


def slow_work(text: str) -> str:
    return logged(text, SLOW_DELAY)


def make_executor() -> AgentExecutor:
    """The zero-argument factory the runner is given."""
    tool = Tool(name="work", func=work, description="does work")
    return AgentExecutor(agent=Steps(), tools=[tool])


def make_deadline_executor() -> AgentExecutor:
    """The same run with slower calls, under a deadline of DEADLINE seconds."""
    tool = Tool(name="work", func=slow_work, description="does work")
    return AgentExecutor(agent=Steps(), tools=[tool], max_execution_time=DEADLINE)


def expected(text: str) -> dict[str, Any]:
    """The result of an uninterrupted run of input `text`."""
    return {"input": text, "output": " ".join(f"did({text}-{n})" for n in range(STEPS))}
