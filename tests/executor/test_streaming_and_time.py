"""Streaming, iter(), concurrent tools, hard deadlines, callback order (SPEC A4, A5, B2, B3, B5)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from actloop import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    AgentStep,
    AIMessage,
    BaseCallbackHandler,
    HumanMessage,
    OutputParserException,
    RunnableConfig,
    tool,
)
from actloop.testing import ScriptedAgent, ScriptedMultiActionAgent
from support.executor import finish, make_tool

LIVENESS = 10.0
"""Seconds a run with a deadline under 1 s may take before we call it hung (its tool or model
hangs forever): a liveness guard, not a speed claim."""


def test_stream_chunks_exact(search: Any) -> None:
    a1 = AgentAction("search", "cats", "I search")
    agent = ScriptedAgent([a1, finish("answer", "final log")])
    chunks = list(AgentExecutor(agent=agent, tools=[search]).stream({"input": "q"}))
    assert chunks == [
        {"actions": [a1], "messages": [AIMessage(content="I search")]},
        {
            "steps": [AgentStep(a1, "results for cats")],
            "messages": [HumanMessage(content="results for cats")],
        },
        {"output": "answer", "messages": [AIMessage(content="final log")]},
    ]
    total = chunks[0] + chunks[1] + chunks[2]
    assert total["actions"] == [a1]


async def test_astream_equals_stream(search: Any) -> None:
    a1 = AgentAction("search", "cats", "I search")
    sync_chunks = list(
        AgentExecutor(agent=ScriptedAgent([a1, finish("x")]), tools=[search]).stream({"input": "q"})
    )
    executor = AgentExecutor(
        agent=ScriptedAgent([a1, finish("x")]), tools=[search], return_intermediate_steps=False
    )
    async_chunks = [c async for c in executor.astream({"input": "q"})]
    assert async_chunks == sync_chunks


def test_parse_error_step_streams_only_steps(search: Any) -> None:
    exc = OutputParserException("bad", observation="obs", llm_output="out", send_to_llm=True)
    agent = ScriptedAgent([exc, finish("ok")])
    chunks = list(
        AgentExecutor(agent=agent, tools=[search], handle_parsing_errors=True).stream(
            {"input": "q"}
        )
    )
    action = AgentAction("_Exception", "obs", "out")
    assert chunks == [
        {"steps": [AgentStep(action, "obs")], "messages": [HumanMessage(content="obs")]},
        {"output": "ok", "messages": [AIMessage(content="final")]},
    ]


def test_stream_final_chunk_has_intermediate_steps(search: Any) -> None:
    a1 = AgentAction("search", "x", "")
    executor = AgentExecutor(
        agent=ScriptedAgent([a1, finish("y")]), tools=[search], return_intermediate_steps=True
    )
    final = list(executor.stream({"input": "q"}))[-1]
    assert final == {
        "output": "y",
        "intermediate_steps": [(a1, "results for x")],
        "messages": [AIMessage(content="final")],
    }


def test_iter_yields_steps_then_output(search: Any) -> None:
    a1 = AgentAction("search", "x", "")
    executor = AgentExecutor(agent=ScriptedAgent([a1, finish("y")]), tools=[search])
    iterator = executor.iter({"input": "q"})
    outputs = list(iterator)
    assert outputs == [
        {"intermediate_step": [(a1, "results for x")]},
        {"output": "y", "messages": [AIMessage(content="final")]},
    ]
    assert iterator.iterations == 1
    assert iterator.intermediate_steps == [(a1, "results for x")]
    assert iterator.inputs == {"input": "q"}
    assert iterator.time_elapsed >= 0.0


async def test_async_iter(search: Any) -> None:
    a1 = AgentAction("search", "x", "")
    executor = AgentExecutor(agent=ScriptedAgent([a1, finish("y")]), tools=[search])
    outputs = [o async for o in executor.iter({"input": "q"})]
    assert outputs[0] == {"intermediate_step": [(a1, "results for x")]}


def _barrier_tools(n: int, barrier: Any) -> list[Any]:
    def wait(q: str) -> str:
        barrier.wait()
        return f"done {q}"

    return [make_tool(f"t{i}", wait) for i in range(n)]


def test_sync_tools_of_one_step_overlap() -> None:
    # A barrier of 3 only opens if the three tools run at the same time.
    barrier = threading.Barrier(3, timeout=5)
    tools = _barrier_tools(3, barrier)
    actions = [AgentAction(f"t{i}", str(i), "") for i in range(3)]
    agent = ScriptedMultiActionAgent([actions, AgentFinish({"output": "ok"}, "")])
    result = AgentExecutor(agent=agent, tools=tools, return_intermediate_steps=True).invoke(
        {"input": "q"}
    )
    assert result["intermediate_steps"] == [(a, f"done {i}") for i, a in enumerate(actions)]


async def test_async_tools_of_one_step_overlap() -> None:
    barrier = asyncio.Barrier(3) if hasattr(asyncio, "Barrier") else None
    started: list[str] = []
    gate = asyncio.Event()

    @tool
    async def slow(q: str) -> str:
        """Wait until all three started."""
        started.append(q)
        if len(started) == 3:
            gate.set()
        await asyncio.wait_for(gate.wait(), 5)
        return f"done {q}"

    del barrier
    actions = [AgentAction("slow", str(i), "") for i in range(3)]
    agent = ScriptedMultiActionAgent([actions, AgentFinish({"output": "ok"}, "")])
    result = await AgentExecutor(agent=agent, tools=[slow], return_intermediate_steps=True).ainvoke(
        {"input": "q"}
    )
    assert [o for _, o in result["intermediate_steps"]] == ["done 0", "done 1", "done 2"]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_hung_tool_stops_at_deadline(mode: str) -> None:
    release = threading.Event()
    hang = make_tool("hang", lambda q: release.wait(60) and "late")
    fast = make_tool("fast", lambda q: "quick")
    a0 = AgentAction("fast", "x", "")
    a1 = AgentAction("hang", "y", "")
    agent = ScriptedAgent([a0, a1, finish("never")])
    executor = AgentExecutor(
        agent=agent, tools=[fast, hang], max_execution_time=0.5, return_intermediate_steps=True
    )
    start = time.monotonic()
    try:
        result = (
            executor.invoke({"input": "q"})
            if mode == "sync"
            else await executor.ainvoke({"input": "q"})
        )
    finally:
        release.set()
    assert time.monotonic() - start < LIVENESS  # the hung call would never return
    assert result == {
        "input": "q",
        "output": "Agent stopped due to iteration limit or time limit.",
        "intermediate_steps": [(a0, "quick")],
    }


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self.events.append(("chain_start", kw.get("name")))

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        self.events.append(("chain_end", None))

    def on_agent_action(self, action: Any, **kw: Any) -> None:
        self.events.append(("agent_action", action.tool))

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:
        self.events.append(("tool_start", serialized["name"]))

    def on_tool_end(self, output: Any, **kw: Any) -> None:
        self.events.append(("tool_end", output))

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        self.events.append(("tool_error", str(error)))

    def on_chain_error(self, error: BaseException, **kw: Any) -> None:
        self.events.append(("chain_error", str(error)))

    def on_agent_finish(self, finish: Any, **kw: Any) -> None:
        self.events.append(("agent_finish", finish.return_values["output"]))


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_callback_order(mode: str, search: Any) -> None:
    a1 = AgentAction("search", "x", "")
    a2 = AgentAction("nope", "y", "")
    rec = Recorder()
    executor = AgentExecutor(agent=ScriptedAgent([a1, a2, finish("z")]), tools=[search])
    config: RunnableConfig = {"callbacks": [rec]}
    if mode == "sync":
        executor.invoke({"input": "q"}, config)
    else:
        await executor.ainvoke({"input": "q"}, config)
    assert rec.events == [
        ("chain_start", "AgentExecutor"),
        ("agent_action", "search"),
        ("tool_start", "search"),
        ("tool_end", "results for x"),
        ("agent_action", "nope"),
        ("tool_start", "invalid_tool"),
        ("tool_end", "nope is not a valid tool, try one of [search]."),
        ("agent_finish", "z"),
        ("chain_end", None),
    ]


def test_config_reaches_tools() -> None:
    seen: list[Any] = []

    @tool
    def probe(q: str, config: RunnableConfig) -> str:
        """Record the config."""
        seen.append((config.get("tags"), config.get("metadata"), config.get("configurable")))
        return "ok"

    executor = AgentExecutor(
        agent=ScriptedAgent([AgentAction("probe", {"q": "x"}, ""), finish("done")]), tools=[probe]
    )
    executor.invoke(
        {"input": "q"},
        {"tags": ["t1"], "metadata": {"m": 1}, "configurable": {"thread_id": "T"}},
    )
    assert seen == [(["t1"], {"m": 1}, {"thread_id": "T"})]


HUNG_SCRIPT = """
import asyncio, sys, threading
from actloop import AgentAction, AgentExecutor, Tool
from actloop.testing import ScriptedAgent

hang = Tool(name="hang", func=lambda q: threading.Event().wait(), description="never returns")
agent = ScriptedAgent([AgentAction("hang", "x", "")])
executor = AgentExecutor(agent=agent, tools=[hang], max_execution_time=0.5)
if sys.argv[1] == "sync":
    print(executor.invoke({"input": "q"})["output"])
else:
    print(asyncio.run(executor.ainvoke({"input": "q"}))["output"])
"""


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_process_with_a_hung_tool_exits(mode: str) -> None:
    # The stuck worker is a daemon thread: neither asyncio.run() nor interpreter exit waits for it.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", HUNG_SCRIPT, mode], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Agent stopped due to iteration limit or time limit.\n"
