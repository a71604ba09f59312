"""A durable run whose MCP tool runs as a task, its agent process killed with SIGKILL while the
task is polled: the resumed run (a new process) polls the journaled task instead of calling the
tool again, and its answer is the task's result. A task the server no longer knows becomes a
clear error observation, still without a second call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_fixtures import SERVERS, HttpServer

from actloop import loads
from actloop.checkpoint import connect
from actloop.mcp import MCPToolset

TASKS = str(SERVERS / "tasks.py")
CHILD = str(Path(__file__).with_name("task_child.py"))


def start(db: str, url: str, mode: str) -> subprocess.Popen[str]:
    """The child agent (`task_child.py`), once it said it is ready (on a pipe of its own)."""
    ready, ready_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, CHILD, db, url, "T", mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=[ready_w],
        env={**os.environ, "ACTLOOP_READY_FD": str(ready_w)},
    )
    os.close(ready_w)
    try:
        said = os.read(ready, 1)
    finally:
        os.close(ready)
    if said != b"r":
        _, err = proc.communicate()
        raise AssertionError(f"child failed before it was ready: {err}")
    return proc


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The result the child printed."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("result "))
    return loads(line.removeprefix("result "))


def kill_while_polled(db: str, server: HttpServer, watcher: MCPToolset) -> None:
    """Run the child until the server has been polled for its task, then SIGKILL it."""
    proc = start(db, server.url, "invoke")
    try:
        watcher.call("wait_for", {"polls": 1})  # the task id is journaled before the first poll
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def notes(db: str) -> list[tuple[int | None, int | None, str | None]]:
    store = connect(db)
    try:
        return [(e.act, e.call, e.data) for e in store.entries("T") if e.kind == "note"]
    finally:
        store.close()


def test_a_resumed_run_polls_the_task_instead_of_calling_again(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    server = HttpServer(TASKS)
    try:
        with MCPToolset.http(server.url) as watcher:
            kill_while_polled(db, server, watcher)
            assert notes(db) == [(0, 0, '{"mcp_task": "task-1", "tool": "slow_sum"}')]
            result = finish(start(db, server.url, "resume"))
            assert result["output"] == "the answer: 2 + 40 = 42"
            steps = [(a.tool, a.tool_input, obs) for a, obs in result["intermediate_steps"]]
            assert steps == [("slow_sum", {"a": 2, "b": 40, "seconds": 4}, "2 + 40 = 42")]
            stats = watcher.call("stats", {})
            assert stats["calls"]["slow_sum"] == 1  # the tool was called once, by the first
            assert list(stats["gets"]) == ["task-1"]
            assert stats["cancels"] == []
    finally:
        server.close()


def test_a_task_the_server_lost_is_an_error_observation(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    server = HttpServer(TASKS)
    try:
        with MCPToolset.http(server.url) as watcher:
            kill_while_polled(db, server, watcher)
        server.restart()  # a new server process: it knows no task
        result = finish(start(db, server.url, "resume"))
        observation = (
            "Error: tool 'slow_sum' of MCP server 'tasks', run as task task-1, is not known to "
            "the server (any more): Failed to retrieve task: Task not found; the tool was not "
            "called again"
        )
        assert result["output"] == f"the answer: {observation}"
        with MCPToolset.http(server.url) as watcher:
            assert watcher.call("stats", {})["calls"] == {"stats": 1}
    finally:
        server.close()
