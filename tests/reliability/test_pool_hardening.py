"""The worker pool under nesting, abandonment and interrupts (issue 13, items 3, 4 and 5).

Each case runs in its own process: the pool is per process, and before the fix these cases hung
forever or left it unusable. A case prints one JSON line; the process must also exit by itself
(hung calls sit on daemon threads).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

SCRIPT = r"""
import asyncio, json, os, signal, sys, threading, time
from actloop import AgentAction, AgentExecutor, AgentFinish, Tool
from actloop.runnables import _workers
from actloop.testing import ScriptedMultiActionAgent

case = sys.argv[1]
FINISH = AgentFinish({"output": "done"}, "")


def fan_out(tool, inputs):
    return ScriptedMultiActionAgent([[AgentAction(tool, i, "") for i in inputs], FINISH])


def sub_agent_tool(name, width, inner):
    # A tool whose every call runs its own agent with `width` parallel calls of `inner`.
    def run(q):
        time.sleep(0.3)  # the sub-agent thinks first: every caller holds its worker by then
        agent = fan_out(inner.name, [f"{q}.{i}" for i in range(width)])
        steps = AgentExecutor(agent=agent, tools=[inner], return_intermediate_steps=True)
        return str(len(steps.invoke({"input": q})["intermediate_steps"]))
    return Tool(name=name, func=run, description=name)


leaf = Tool(name="leaf", func=lambda q: "ok", description="leaf")

if case == "nested":  # 130 parallel agents-as-tools, each with two parallel calls
    tool = sub_agent_tool("sub", 2, leaf)
    executor = AgentExecutor(agent=fan_out("sub", [str(i) for i in range(130)]), tools=[tool],
                             return_intermediate_steps=True)
    steps = executor.invoke({"input": "q"})["intermediate_steps"]
    print(json.dumps({"steps": len(steps), "observations": sorted({o for _, o in steps})}))

elif case == "supervisor":  # 12 x 11 x 2, under a generous deadline
    middle = sub_agent_tool("middle", 2, leaf)
    top = sub_agent_tool("top", 11, middle)
    executor = AgentExecutor(agent=fan_out("top", [str(i) for i in range(12)]), tools=[top],
                             return_intermediate_steps=True, max_execution_time=600)
    steps = executor.invoke({"input": "q"})["intermediate_steps"]
    print(json.dumps({"steps": len(steps), "observations": sorted({o for _, o in steps})}))

elif case == "abandoned":  # 128 calls hang forever; later runs must still work
    hang = Tool(name="hang", func=lambda q: threading.Event().wait(), description="hang")
    stuck = AgentExecutor(agent=fan_out("hang", [str(i) for i in range(128)]), tools=[hang],
                          max_execution_time=0.3)
    first = stuck.invoke({"input": "q"})["output"]
    later = AgentExecutor(agent=fan_out("leaf", ["a", "b"]), tools=[leaf],
                          return_intermediate_steps=True)
    result = asyncio.run(later.ainvoke({"input": "q"}))
    timed = AgentExecutor(agent=fan_out("leaf", ["a", "b", "c"]), tools=[leaf],
                          return_intermediate_steps=True, max_execution_time=30)
    print(json.dumps({
        "first": first,
        "async": [o for _, o in result["intermediate_steps"]],
        "timed": [o for _, o in timed.invoke({"input": "q"})["intermediate_steps"]],
    }))

else:  # "interrupt", "deadline", "adeadline": 140 calls on a full pool, none start late
    gate = threading.Event()
    started = []
    lock = threading.Lock()

    def slow(q):
        with lock:
            started.append(q)
        gate.wait(20)
        return "slow " + q

    tool = Tool(name="slow", func=slow, description="slow")
    limit = 1.0 if case in ("deadline", "adeadline") else None
    executor = AgentExecutor(agent=fan_out("slow", [str(i) for i in range(140)]), tools=[tool],
                             max_execution_time=limit)
    if case == "interrupt":
        def interrupt():
            while len(started) < _workers.MAX_WORKERS - 40:
                time.sleep(0.005)
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt, daemon=True).start()
    try:
        if case == "adeadline":
            outcome = asyncio.run(executor.ainvoke({"input": "q"}))["output"]
        else:
            outcome = executor.invoke({"input": "q"})["output"]
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    with lock:
        at_end = len(started)
    gate.set()  # running calls finish; their workers are free for queued calls
    time.sleep(1.0)
    print(json.dumps({"outcome": outcome, "at_end": at_end, "after": len(started) - at_end}))
"""


def run_case(case: str, timeout: float = 120) -> dict[str, Any]:
    """Run one case in a fresh interpreter; it must print its JSON line and exit by itself."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT, case], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"case {case!r} hung for {timeout} s")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_agents_as_tools_never_deadlock_the_pool() -> None:
    assert run_case("nested") == {"steps": 130, "observations": ["2"]}


def test_nested_supervisor_finishes() -> None:
    assert run_case("supervisor") == {"steps": 12, "observations": ["11"]}


def test_abandoned_hung_calls_do_not_starve_later_runs() -> None:
    assert run_case("abandoned") == {
        "first": "Agent stopped due to max iterations.",
        "async": ["ok", "ok"],
        "timed": ["ok", "ok", "ok"],
    }


def test_no_queued_call_starts_after_ctrl_c() -> None:
    result = run_case("interrupt")
    assert result["outcome"] == "KeyboardInterrupt"
    assert result["after"] == 0
    assert result["at_end"] <= 128


@pytest.mark.parametrize("case", ["deadline", "adeadline"])
def test_no_queued_call_starts_after_the_deadline(case: str) -> None:
    result = run_case(case)
    assert result["outcome"] == "Agent stopped due to max iterations."
    assert result["after"] == 0
    assert result["at_end"] <= 128
