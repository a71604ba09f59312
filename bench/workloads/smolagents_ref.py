"""smolagents side: ``ToolCallingAgent`` with a ``Model`` subclass that replays the script.

smolagents has no model-free agent and no async API: the loop workload uses the scripted model
(the closest equivalent), async workloads are not available, and there is no run time limit.
Logging is off (``verbosity_level=LogLevel.OFF``); the run ends with a ``final_answer`` tool call.
"""

from __future__ import annotations

import time
from typing import Any

from smolagents import ToolCallingAgent, tool
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, Model
from smolagents.monitoring import LogLevel

from workloads.common import CALLS, HUNG_SLEEP, SLOW_TOOL_SECONDS, SYSTEM_PROMPT, expect, now

_NO_ASYNC = "smolagents has no async API"
UNSUPPORTED = {
    "loop_async": _NO_ASYNC,
    "loop_async_synctool": _NO_ASYNC,
    "agent_async": _NO_ASYNC,
    "parallel_async": _NO_ASYNC,
    "hung_async": _NO_ASYNC,
    "many_async": _NO_ASYNC,
}
NOTES = {
    "loop": "scripted Model.generate (no model-free agent in smolagents)",
    "hung": "no run time limit option: the run waits for the tool",
    "stream": "run(stream=True): first ToolCall item",
}


@tool
def noop(x: str) -> str:
    """Does nothing and returns ok.

    Args:
        x: ignored.
    """
    return CALLS.hit()


def _call(name: str, cid: str, args: dict[str, Any]) -> ChatMessageToolCall:
    return ChatMessageToolCall(
        id=cid, type="function", function=ChatMessageToolCallFunction(name=name, arguments=args)
    )


class ScriptedModel(Model):
    """Returns tool calls from ``script(step)``; the step is counted per run."""

    def __init__(self, script: Any) -> None:
        super().__init__(model_id="scripted")
        self.script = script
        self.step = 0

    def generate(
        self,
        messages: Any,
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        calls = self.script(self.step)
        self.step += 1
        return ChatMessage(role="assistant", content="", tool_calls=calls)


def _loop_script(n: int, final: str, first: str = "noop") -> Any:
    def script(k: int) -> list[ChatMessageToolCall]:
        if k >= n:
            return [_call("final_answer", f"c{k}", {"answer": final})]
        return [_call(first if k == 0 else "noop", f"c{k}", {"x": "x"})]

    return script


def _agent(script: Any, tools: list[Any], max_steps: int, **kw: Any) -> ToolCallingAgent:
    return ToolCallingAgent(
        tools=tools,
        model=ScriptedModel(script),
        max_steps=max_steps,
        verbosity_level=LogLevel.OFF,
        **kw,
    )


def _run(n: int, final: str, **kw: Any) -> float:
    agent = _agent(_loop_script(n, final), [noop], n + 2, **kw)
    CALLS.n = 0
    t0 = now()
    out = agent.run("q")
    dt = now() - t0
    expect(out == final and CALLS.n == n, f"{out!r}, {CALLS.n} tool calls")
    return dt


def loop_sync(n: int) -> float:
    return _run(n, "done")


def agent_sync(n: int) -> float:
    return _run(n, "final answer", instructions=SYSTEM_PROMPT)


def stream_first(n: int) -> float:
    from smolagents.memory import ToolCall

    agent = _agent(_loop_script(n, "final answer"), [noop], n + 2, instructions=SYSTEM_PROMPT)
    t0 = now()
    dt = None
    items = 0
    for item in agent.run("hi", stream=True):
        items += 1
        if dt is None and isinstance(item, ToolCall):
            dt = now() - t0
    expect(dt is not None and items > n, f"{items} items, no ToolCall")
    return dt or 0.0


def _slow_tools() -> list[Any]:
    @tool
    def slow_a(x: str) -> str:
        """Takes one second.

        Args:
            x: ignored.
        """
        time.sleep(SLOW_TOOL_SECONDS)
        return "slow_a"

    @tool
    def slow_b(x: str) -> str:
        """Takes one second.

        Args:
            x: ignored.
        """
        time.sleep(SLOW_TOOL_SECONDS)
        return "slow_b"

    @tool
    def slow_c(x: str) -> str:
        """Takes one second.

        Args:
            x: ignored.
        """
        time.sleep(SLOW_TOOL_SECONDS)
        return "slow_c"

    return [slow_a, slow_b, slow_c]


def parallel_sync() -> float:
    def script(k: int) -> list[ChatMessageToolCall]:
        if k >= 1:
            return [_call("final_answer", "f", {"answer": "done"})]
        return [_call(n, f"c{n}", {"x": "x"}) for n in ("slow_a", "slow_b", "slow_c")]

    agent = _agent(script, _slow_tools(), 3)
    t0 = now()
    out = agent.run("hi")
    dt = now() - t0
    expect(out == "done", repr(out))
    return dt


@tool
def hang(x: str) -> str:
    """Never returns.

    Args:
        x: ignored.
    """
    time.sleep(HUNG_SLEEP)
    return "late"


def hung_sync() -> tuple[float, str]:
    agent = _agent(_loop_script(1, "done", first="hang"), [hang, noop], 3)
    t0 = now()
    out = agent.run("q")
    return now() - t0, f"output {out!r}"


def mem_case(kind: str) -> Any:
    def build() -> Any:
        final = "done" if kind == "loop" else "final answer"
        kw = {} if kind == "loop" else {"instructions": SYSTEM_PROMPT}
        agent = _agent(_loop_script(20, final), [noop], 22, **kw)

        def run() -> None:
            agent.model.step = 0  # type: ignore[attr-defined]
            out = agent.run("q")
            expect(out == final, repr(out))

        return run

    return build
