"""Hardening of durable runs (issue 13, item 12 and the journal's size).

A store that cannot write (the disk filled up during a tool) fails the run with a message that
says so, never "corrupt", and the lease is given up as soon as the store can write again, so
another process can resume while this one lives. Tool arguments too deep to journal are refused
with an observation instead of killing the run, and a step of N calls journals O(N) bytes.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, Tool, ToolAgentAction
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage
from actloop.testing import ScriptedAgent, ScriptedMultiActionAgent

FULL_DISK = r"""
import json, os, resource, signal, sys, time
from pathlib import Path
from actloop import AgentAction, AgentExecutor, AgentFinish, CheckpointError, Tool
from actloop.checkpoint import SqliteCheckpointer
from actloop.testing import ScriptedAgent

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
path = Path(sys.argv[1])
limits = resource.getrlimit(resource.RLIMIT_FSIZE)

def fill(q):
    # The disk fills up while the tool runs: the write-ahead log may not grow any more.
    wal = path.with_name(path.name + "-wal").stat().st_size
    resource.setrlimit(resource.RLIMIT_FSIZE, (wal, limits[1]))
    return "y" * 100_000

agent = ScriptedAgent([AgentAction("fill", "a", ""), AgentFinish({"output": "done"}, "")])
tool = Tool(name="fill", func=fill, description="fill")
executor = AgentExecutor(agent=agent, tools=[tool], checkpointer=SqliteCheckpointer(path))
try:
    executor.invoke({"input": "q"}, {"configurable": {"thread_id": "t"}})
    error = None
except CheckpointError as exc:
    error = str(exc)
resource.setrlimit(resource.RLIMIT_FSIZE, limits)  # space is free again
deadline = time.monotonic() + 10
while SqliteCheckpointer(path).get("t").owner is not None and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps({"error": error, "owner": SqliteCheckpointer(path).get("t").owner}), flush=True)
sys.stdin.readline()  # stay alive while the parent resumes the run
"""


def test_disk_full_releases_the_lease_and_says_what_happened(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with subprocess.Popen(
        [sys.executable, "-c", FULL_DISK, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            resume_beside(child, path)
        finally:
            if child.poll() is None:
                child.kill()


def resume_beside(child: subprocess.Popen[str], path: Path) -> None:
    """Read the child's report, then resume its run here while it is still alive."""
    assert child.stdout is not None and child.stdin is not None and child.stderr is not None
    line = child.stdout.readline()
    assert line, child.stderr.read()
    report = json.loads(line)
    assert report["error"].startswith(f"could not read or write checkpoint file {path} (")
    assert "corrupt or unreadable" not in report["error"]
    assert report["owner"] is None  # released while the process still runs
    tool = Tool(name="fill", func=lambda q: "filled", description="fill")
    agent = ScriptedAgent([AgentFinish({"output": "resumed"}, "")])
    executor = AgentExecutor(agent=agent, tools=[tool], checkpointer=SqliteCheckpointer(path))
    assert executor.resume("t")["output"] == "resumed"
    assert child.poll() is None  # the other process was alive all along
    child.stdin.write("\n")
    child.stdin.flush()
    assert child.wait(timeout=30) == 0


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


DEEP_OBSERVATION = (
    "Error: the arguments of tool 'echo' are nested more than 200 levels deep, too deep for a "
    "durable run to save; the tool did not run. Send flatter arguments."
)


def test_too_deep_arguments_get_an_observation_not_a_dead_run(tmp_path: Path) -> None:
    ran: list[Any] = []

    def echo(q: Any) -> str:
        ran.append(q)
        return f"echo {q}"

    tool = Tool(name="echo", func=echo, description="echo")
    plans = [
        [AgentAction("echo", nested(250), "deep"), AgentAction("echo", "flat", "flat")],
        AgentFinish({"output": "done"}, ""),
    ]
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = AgentExecutor(
        agent=ScriptedMultiActionAgent(plans),
        tools=[tool],
        checkpointer=store,
        return_intermediate_steps=True,
    )
    result = executor.invoke({"input": "q"}, {"configurable": {"thread_id": "deep"}})
    steps = [(a.tool_input, a.log, o) for a, o in result["intermediate_steps"]]
    assert steps == [
        ("<arguments nested too deeply to save>", "deep", DEEP_OBSERVATION),
        ("flat", "flat", "echo flat"),
    ]
    assert ran == ["flat"]
    assert store.get("deep").status == "finished"  # type: ignore[union-attr]


def tool_call_step(count: int) -> list[ToolAgentAction]:
    """One model reply with `count` tool calls, as a tool-calling agent parses it."""
    calls = [
        {"name": "echo", "args": {"__arg1": f"q{i}"}, "id": f"call_{i}", "type": "tool_call"}
        for i in range(count)
    ]
    message = AIMessage("", tool_calls=calls)  # type: ignore[arg-type]
    return [
        ToolAgentAction("echo", f"q{i}", f"log {i}", [message], f"call_{i}") for i in range(count)
    ]


def plan_entry_size(tmp_path: Path, count: int) -> int:
    path = tmp_path / f"runs-{count}.db"
    tool = Tool(name="echo", func=lambda q: "ok", description="echo")
    agent = ScriptedMultiActionAgent([tool_call_step(count), AgentFinish({"output": "done"}, "")])
    executor = AgentExecutor(agent=agent, tools=[tool], checkpointer=SqliteCheckpointer(path))
    executor.invoke({"input": "q"}, {"configurable": {"thread_id": "t"}})
    with sqlite3.connect(path) as conn:
        (size,) = conn.execute("SELECT length(data) FROM entries WHERE kind='plan'").fetchone()
    return size


def test_a_step_of_n_calls_journals_o_of_n_bytes(tmp_path: Path) -> None:
    small, large = plan_entry_size(tmp_path, 100), plan_entry_size(tmp_path, 400)
    assert large / small < 5  # linear: about 4; quadratic: about 16


@pytest.mark.parametrize("count", [2, 30])
def test_shared_message_logs_come_back_on_resume(tmp_path: Path, count: int) -> None:
    send = Tool(name="send", func=lambda q: "sent", description="send", requires_approval=True)
    echo = Tool(name="echo", func=lambda q: f"echo {q}", description="echo")
    step = tool_call_step(count)
    plans = [step, [AgentAction("send", "it", "")], AgentFinish({"output": "done"}, "")]
    store = SqliteCheckpointer(tmp_path / "runs.db")
    config: Any = {"configurable": {"thread_id": "t"}}

    def executor(agent: Any) -> AgentExecutor:
        return AgentExecutor(
            agent=agent, tools=[echo, send], checkpointer=store, return_intermediate_steps=True
        )

    assert executor(ScriptedMultiActionAgent(plans)).invoke({}, config)["status"] == "paused"
    resumed = executor(ScriptedMultiActionAgent(plans[2:])).resume("t", approve=True)
    replayed = [a for a, _ in resumed["intermediate_steps"][:count]]
    assert [(a.tool_input, a.log, a.tool_call_id) for a in replayed] == [
        (a.tool_input, a.log, a.tool_call_id) for a in step
    ]
    assert all(a.message_log == step[0].message_log for a in replayed)
    assert [o for _, o in resumed["intermediate_steps"]] == [
        *(f"echo q{i}" for i in range(count)),
        "sent",
    ]
