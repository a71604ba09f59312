"""`max_concurrency` caps how many of a step's tool calls run at once, on both paths."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, StructuredTool, Tool
from actloop.testing import ScriptedMultiActionAgent

CALLS = 6


class Gauge:
    """Counts the calls running at once; each call waits at a barrier of `limit` parties, so
    exactly `limit` calls must overlap (a lower cap would leave the barrier short)."""

    def __init__(self, limit: int) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.barrier = threading.Barrier(limit, timeout=10)

    def enter(self) -> None:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)

    def leave(self) -> None:
        with self.lock:
            self.running -= 1


def sync_tool(gauge: Gauge) -> Tool:
    def work(q: str) -> str:
        gauge.enter()
        try:
            gauge.barrier.wait()
            return f"done {q}"
        finally:
            gauge.leave()

    return Tool(name="work", func=work, description="work")


def async_tool(gauge: Gauge) -> StructuredTool:
    async def work(q: str) -> str:
        gauge.enter()
        try:
            await asyncio.to_thread(gauge.barrier.wait)
            return f"done {q}"
        finally:
            gauge.leave()

    return StructuredTool.from_function(coroutine=work, name="work", description="work")


def executor(tool: Any, **kwargs: Any) -> AgentExecutor:
    step = [AgentAction("work", str(i), f"l{i}") for i in range(CALLS)]
    agent = ScriptedMultiActionAgent([step, AgentFinish({"output": "ok"}, "")])
    return AgentExecutor(agent=agent, tools=[tool], return_intermediate_steps=True, **kwargs)


def expected_steps() -> list[tuple[AgentAction, str]]:
    return [(AgentAction("work", str(i), f"l{i}"), f"done {i}") for i in range(CALLS)]


@pytest.mark.parametrize("limit", [1, 2, 3, 6])
@pytest.mark.parametrize("deadline", [None, 30.0])
def test_sync_path_runs_at_most_max_concurrency_calls(limit: int, deadline: float | None) -> None:
    gauge = Gauge(limit)
    run = executor(sync_tool(gauge), max_execution_time=deadline)
    result = run.invoke({"input": "q"}, {"max_concurrency": limit})
    assert result["intermediate_steps"] == expected_steps()
    assert gauge.peak == limit


@pytest.mark.parametrize("limit", [1, 2, 3, 6])
@pytest.mark.parametrize("kind", ["sync tool", "async tool"])
async def test_async_path_runs_at_most_max_concurrency_calls(limit: int, kind: str) -> None:
    gauge = Gauge(limit)
    tool = sync_tool(gauge) if kind == "sync tool" else async_tool(gauge)
    result = await executor(tool).ainvoke({"input": "q"}, {"max_concurrency": limit})
    assert result["intermediate_steps"] == expected_steps()
    assert gauge.peak == limit


def test_without_a_cap_every_call_of_a_step_runs_at_once() -> None:
    gauge = Gauge(CALLS)
    result = executor(sync_tool(gauge)).invoke({"input": "q"})
    assert result["intermediate_steps"] == expected_steps()
    assert gauge.peak == CALLS


def test_a_capped_step_stops_starting_calls_after_one_fails() -> None:
    started: list[str] = []

    def work(q: str) -> str:
        started.append(q)
        if q == "1":
            raise RuntimeError("tool broke")
        return f"done {q}"

    run = executor(Tool(name="work", func=work, description="work"))
    with pytest.raises(RuntimeError, match="tool broke") as caught:
        run.invoke({"input": "q"}, {"max_concurrency": 1})
    assert started == ["0", "1"]
    assert caught.value.intermediate_steps == [(AgentAction("work", "0", "l0"), "done 0")]  # type: ignore[attr-defined]
