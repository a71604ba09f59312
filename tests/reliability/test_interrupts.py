"""Ctrl-C on the sync path, in a subprocess (a real SIGINT to the process).

What actloop guarantees (and SECURITY.md states): the KeyboardInterrupt reaches the caller with
the steps finished so far attached; the executor plans nothing and starts no tool after it; tools
already running on worker threads cannot be killed in Python, so they run to their end and their
worker goes idle (every worker is a daemon thread, so even a tool that never returns cannot keep
the process from exiting).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, os, signal, sys, threading, time
from actloop import AgentAction, AgentExecutor, AgentFinish, Tool
from actloop.testing import ScriptedMultiActionAgent

case = sys.argv[1]
events = []
lock = threading.Lock()

def note(*item):
    with lock:
        events.append(list(item))

def slow(q):
    note("start", q)
    if q == "hang":
        threading.Event().wait()
    time.sleep(0.4)
    note("end", q)
    return "slow " + q

def noted(decision):
    def plan(steps):
        note("plan", len(steps))
        return decision
    return plan

second = {
    "parallel": [AgentAction("slow", "b", ""), AgentAction("slow", "c", "")],
    "hung": [AgentAction("slow", "hang", ""), AgentAction("slow", "c", "")],
}.get(case, [AgentAction("slow", "b", "")])
plans = [[AgentAction("fast", "a", "")], second, AgentFinish({"output": "done"}, "")]
agent = ScriptedMultiActionAgent([noted(decision) for decision in plans])

fast = Tool(name="fast", func=lambda q: "fast " + q, description="fast")
tools = [fast, Tool(name="slow", func=slow, description="slow")]
deadline = 30.0 if case == "deadline" else None
executor = AgentExecutor(agent=agent, tools=tools, max_execution_time=deadline)

def interrupt():
    while not any(e[0] == "start" for e in events):
        time.sleep(0.005)
    time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
try:
    executor.invoke({"input": "q"})
    error, steps = None, []
except KeyboardInterrupt as exc:
    error = "KeyboardInterrupt"
    done = getattr(exc, "intermediate_steps", [("missing", None)])
    steps = [[a.tool, a.tool_input, o] for a, o in done]
note("interrupted")
time.sleep(0.8)  # in-flight tools finish; nothing new may start

def busy_workers():
    frames = sys._current_frames()
    busy = []
    for t in threading.enumerate():
        if t.name == "actloop-worker":
            frame = frames.get(t.ident)
            if frame is not None and frame.f_code.co_name != "_worker":
                busy.append(frame.f_code.co_name)
    return busy

main = threading.main_thread()
others = [t.name for t in threading.enumerate() if t is not main and not t.daemon]
print(json.dumps({"error": error, "steps": steps, "events": events,
                  "busy": busy_workers(), "non_daemon": others}))
"""


def _run(case: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, case], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("case", ["inline", "parallel", "deadline"])
def test_ctrl_c_stops_the_run_and_leaves_only_idle_daemon_workers(case: str) -> None:
    report = _run(case)
    assert report["error"] == "KeyboardInterrupt"
    assert report["steps"] == [["fast", "a", "fast a"]]
    events = report["events"]
    assert isinstance(events, list)
    cut = events.index(["interrupted"])
    after = events[cut + 1 :]
    assert [e for e in events if e[0] == "plan"] == [["plan", 0], ["plan", 1]]
    assert not any(e[0] in ("start", "plan") for e in after)  # nothing new after Ctrl-C
    if case == "inline":  # the tool ran on the caller's thread, and the interrupt hit it there
        assert ["end", "b"] not in events
    else:  # in-flight tools ran to their end on their workers, which are idle now
        assert sorted(e[1] for e in events if e[0] == "end") == (
            ["b", "c"] if case == "parallel" else ["b"]
        )
    assert report["busy"] == []
    assert report["non_daemon"] == []


def test_ctrl_c_with_a_tool_that_never_returns_still_lets_the_process_exit() -> None:
    report = _run("hung")  # returncode 0 within the timeout: the hung daemon worker is not joined
    assert report["error"] == "KeyboardInterrupt"
    assert report["steps"] == [["fast", "a", "fast a"]]
    assert len(report["busy"]) == 1  # type: ignore[arg-type]  # only the hung tool's worker
    assert report["non_daemon"] == []
