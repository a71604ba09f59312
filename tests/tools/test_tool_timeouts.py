"""Per-tool timeouts (issue 29): `timeout=` on `@tool`, `Tool`, `StructuredTool` and `BaseTool`
bounds each call the way the run's deadline does. A sync call still running is abandoned on its
worker, an async one cancelled, and the model gets `Tool 'NAME' timed out after N s.`; the run
goes on. In a durable run the journal records that observation as the call's, so a resume
replays what the model saw and a late result changes nothing.

These fail on the code before (no `timeout` keyword). Hung calls wait on an event the test sets
when it ends, so no worker stays blocked after it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, ConfigurationError, Tool
from actloop.checkpoint import CallRecord, SqliteCheckpointer, read_thread
from actloop.testing import ScriptedAgent
from actloop.tools import BaseTool, StructuredTool, ToolException, tool

LIVENESS = 10.0
"""Seconds a run may take before we call it hung (the hung calls below take 30 s)."""
HANG = 30.0


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set when the test ends: every hung call returns then."""
    event = threading.Event()
    yield event
    event.set()


def run_once(executor: AgentExecutor, path: str, config: Any = None) -> tuple[float, Any]:
    start = time.monotonic()
    if path == "invoke":
        result = executor.invoke({"input": "q"}, config)
    else:
        result = asyncio.run(executor.ainvoke({"input": "q"}, config))
    return time.monotonic() - start, result


def one_call(tool_: BaseTool, tool_input: Any = "x", **options: Any) -> AgentExecutor:
    """An executor whose agent calls `tool_` once, then answers with what it saw."""

    def finish(intermediate_steps: list[Any], **inputs: Any) -> AgentFinish:
        return AgentFinish({"output": intermediate_steps[-1][1]}, "")

    agent = ScriptedAgent([AgentAction(tool_.name, tool_input, ""), finish])
    return AgentExecutor(agent=agent, tools=[tool_], return_intermediate_steps=True, **options)


@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
def test_a_hung_sync_tool_is_abandoned_at_its_timeout(path: str, release: threading.Event) -> None:
    @tool(timeout=0.3)
    def lookup(query: str) -> str:
        """Look something up."""
        release.wait(HANG)
        return "too late"

    took, result = run_once(one_call(lookup, {"query": "x"}), path)
    assert took < LIVENESS
    assert result["output"] == "Tool 'lookup' timed out after 0.3 s."
    assert result["intermediate_steps"] == [
        (AgentAction("lookup", {"query": "x"}, ""), "Tool 'lookup' timed out after 0.3 s.")
    ]


def test_a_hung_async_tool_is_cancelled_at_its_timeout() -> None:
    cancelled = threading.Event()

    @tool(timeout=0.2)
    async def fetch(url: str) -> str:
        """Fetch a page."""
        try:
            await asyncio.sleep(HANG)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "too late"

    took, result = run_once(one_call(fetch, {"url": "u"}), "ainvoke")
    assert took < LIVENESS
    assert result["output"] == "Tool 'fetch' timed out after 0.2 s."
    assert cancelled.is_set()


class Slow(BaseTool):
    name: str = "slow"
    description: str = "Slow on purpose."
    timeout: float | None = 1

    def __init__(self, release: threading.Event, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = release

    def _run(self, text: str) -> str:
        self.release.wait(HANG)
        return "too late"


def test_every_kind_of_tool_takes_a_timeout(release: threading.Event) -> None:
    def hang(text: str) -> str:
        release.wait(HANG)
        return "too late"

    tools: list[BaseTool] = [
        Tool(name="plain", func=hang, description="d", timeout=0.2),
        StructuredTool.from_function(hang, name="structured", description="d", timeout=0.2),
        tool("decorated", timeout=0.2, infer_schema=False, description="d")(hang),
        Slow(release),
        Slow(release, timeout=0.2),
    ]
    assert [t.invoke("x") for t in tools] == [
        "Tool 'plain' timed out after 0.2 s.",
        "Tool 'structured' timed out after 0.2 s.",
        "Tool 'decorated' timed out after 0.2 s.",
        "Tool 'slow' timed out after 1 s.",
        "Tool 'slow' timed out after 0.2 s.",
    ]


def test_a_call_within_its_timeout_is_unchanged() -> None:
    @tool(timeout=5)
    def double(n: int) -> int:
        """Double a number."""
        return 2 * n

    @tool(timeout=5)
    def refuse(text: str) -> str:
        """Always refuses."""
        raise ToolException("not today")

    refuse.handle_tool_error = True
    assert double.invoke({"n": 21}) == 42
    assert asyncio.run(double.ainvoke({"n": 4})) == 8
    assert refuse.invoke("x") == "not today"
    divide = StructuredTool.from_function(lambda n: 1 / n, name="div", description="d", timeout=5)
    with pytest.raises(ZeroDivisionError):
        divide.invoke({"n": 0})


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "2", True])
def test_a_timeout_that_is_not_a_positive_number_is_refused(bad: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Tool(name="t", func=str, description="d", timeout=bad)
    assert str(caught.value) == (
        f"tool 't' has timeout={bad!r}; pass a positive number of seconds, or None for no limit"
    )


@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
def test_a_durable_run_journals_the_timeout_and_drops_the_late_result(
    path: str, tmp_path: Path
) -> None:
    gate = threading.Event()
    returned = threading.Event()

    @tool(timeout=0.3)
    def send(to: str) -> str:
        """Send a message."""
        gate.wait(HANG)
        returned.set()
        return f"sent to {to}"

    store = SqliteCheckpointer(tmp_path / "runs.db")
    config = {"configurable": {"thread_id": "T"}}
    executor = one_call(send, {"to": "ann"}, checkpointer=store)
    took, result = run_once(executor, path, config)
    assert took < LIVENESS
    assert result["output"] == "Tool 'send' timed out after 0.3 s."
    gate.set()  # the abandoned call finishes now; its result goes nowhere
    assert returned.wait(LIVENESS)
    time.sleep(0.2)
    found = read_thread(store, "T")
    assert found is not None
    assert found.calls == [
        CallRecord("0-0", "send", {"to": "ann"}, "Tool 'send' timed out after 0.3 s.", True)
    ]
    assert found.output == {"output": "Tool 'send' timed out after 0.3 s."}
    store.close()
