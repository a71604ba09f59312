"""MCP tasks (io.modelcontextprotocol/tasks, 2026-07-28) against a real server with the
extension, over stdio and streamable HTTP: a task polled to its result, a failed, refused or
input-needing task as an error observation, and `tasks/cancel` sent when the run stops (its
deadline, with sync and async runs), at `task_timeout`, and when the toolset closes."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_fixtures import SERVERS, HttpServer

from actloop import AgentExecutor
from actloop.mcp import MCPError, MCPTimeoutError, MCPToolset
from actloop.mcp._tasks import poll_interval
from actloop.messages import AIMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import BaseTool

TASKS = str(SERVERS / "tasks.py")
PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


@pytest.fixture(params=["stdio", "http"])
def tasks(request: pytest.FixtureRequest, no_orphans: None) -> Iterator[MCPToolset]:
    """The tasks server, opened over stdio or streamable HTTP (a fresh server per test)."""
    if request.param == "stdio":
        with MCPToolset.stdio(sys.executable, [TASKS], timeout=10.0) as toolset:
            yield toolset
        return
    server = HttpServer(TASKS)
    try:
        with MCPToolset.http(server.url, timeout=10.0) as toolset:
            yield toolset
    finally:
        server.close()


def _agent(tools: list[BaseTool], calls: list[tuple[str, dict[str, Any]]], **kwargs: Any):
    """An executor whose scripted model calls `calls` one step each, then says 'done'."""
    replies: list[Any] = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c{i}"}])
        for i, (name, args) in enumerate(calls)
    ]
    model = ScriptedChatModel([*replies, "done"])
    agent = create_tool_calling_agent(model, tools, PROMPT)
    return AgentExecutor(agent=agent, tools=tools, return_intermediate_steps=True, **kwargs)


def _observations(result: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(action.tool, obs) for action, obs in result["intermediate_steps"]]


def test_a_task_is_polled_to_its_result(tasks: MCPToolset) -> None:
    assert tasks.protocol_version == "2026-07-28"
    assert tasks.call("slow_sum", {"a": 2, "b": 3, "seconds": 0.3}) == "2 + 3 = 5"
    stats = tasks.call("stats", {})
    assert stats["calls"] == {"slow_sum": 1, "stats": 1}
    assert list(stats["gets"]) == ["task-1"]  # polled, never called twice
    assert stats["gets"]["task-1"] >= 2  # 0.3 s at the server's 50 ms interval
    assert stats["cancels"] == []


def test_a_task_that_ended_before_its_handle_was_sent_is_read_once(tasks: MCPToolset) -> None:
    assert tasks.call("instant", {"text": "abc"}) == "cba"
    assert tasks.call("stats", {})["gets"] == {"task-1": 1}


def test_a_tasks_result_is_the_observation_a_plain_call_gives(
    tasks: MCPToolset, no_orphans: None
) -> None:
    calls = [
        ("slow_sum", {"a": 20, "b": 22, "seconds": 0.2}),
        ("doomed", {}),
        ("refused", {"reason": "no"}),
        ("asks", {}),
    ]
    result = _agent(tasks.get_tools(), calls).invoke({"input": "go"})
    assert _observations(result) == [
        ("slow_sum", "20 + 22 = 42"),
        (
            "doomed",
            "Error: tool 'doomed' of MCP server 'tasks' failed (task task-2): the job ran out "
            "of disk",
        ),
        ("refused", "Error: tool 'refused' of MCP server 'tasks' failed: refused: no"),
        (
            "asks",
            "Error: tool 'asks' of MCP server 'tasks', run as task task-4, is waiting for input "
            "(input_required), which actloop does not answer for tasks; the task was cancelled",
        ),
    ]
    assert tasks.call("stats", {})["cancels"] == ["task-4"]
    with MCPToolset.stdio(sys.executable, [TASKS], tasks=False) as plain:  # no extension
        assert plain.call("slow_sum", {"a": 20, "b": 22, "seconds": 0.0}) == "20 + 22 = 42"
        assert plain.call("stats", {})["gets"] == {}


def test_the_run_deadline_cancels_the_task_sync(tasks: MCPToolset) -> None:
    calls = [("slow_sum", {"a": 1, "b": 1, "seconds": 60})]
    ex = _agent(tasks.get_tools(), calls, max_execution_time=1.0)
    result = ex.invoke({"input": "go"})
    assert result["output"] == "Agent stopped due to max iterations."
    stats = tasks.call("wait_for", {"cancelled": 1})
    assert stats["cancels"] == ["task-1"]
    assert stats["calls"]["slow_sum"] == 1


def test_the_run_deadline_cancels_the_task_async(tasks: MCPToolset) -> None:
    calls = [("slow_sum", {"a": 1, "b": 1, "seconds": 60})]
    ex = _agent(tasks.get_tools(), calls, max_execution_time=1.0)
    result = asyncio.run(ex.ainvoke({"input": "go"}))
    assert result["output"] == "Agent stopped due to max iterations."
    stats = tasks.call("wait_for", {"cancelled": 1})
    assert stats["cancels"] == ["task-1"]


def test_task_timeout_cancels_the_task(no_orphans: None) -> None:
    with MCPToolset.stdio(sys.executable, [TASKS], task_timeout=0.5) as toolset:
        with pytest.raises(MCPTimeoutError) as caught:
            toolset.call("slow_sum", {"a": 1, "b": 1, "seconds": 60})
        assert str(caught.value) == (
            "MCP server 'tasks' did not finish tool 'slow_sum' (task task-1) within 0.5 s (the "
            "toolset's task_timeout); the task was cancelled"
        )
        assert toolset.call("wait_for", {"cancelled": 1})["cancels"] == ["task-1"]


def test_closing_the_toolset_cancels_its_tasks(no_orphans: None) -> None:
    server = HttpServer(TASKS)
    try:
        toolset = MCPToolset.http(server.url).open()
        errors: list[BaseException] = []

        def call() -> None:
            try:
                toolset.call("slow_sum", {"a": 1, "b": 1, "seconds": 60})
            except MCPError as exc:
                errors.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        with MCPToolset.http(server.url) as watcher:
            watcher.call("wait_for", {"polls": 1})  # the task is being polled
            toolset.close()
            caller.join(30)
            assert watcher.call("wait_for", {"cancelled": 1})["cancels"] == ["task-1"]
        assert [type(e).__name__ for e in errors] == ["MCPConnectionError"]
    finally:
        server.close()


def test_the_poll_interval_is_the_servers_hint_within_bounds() -> None:
    assert poll_interval(None) == 1.0
    assert poll_interval(200) == 0.2
    assert poll_interval(1) == 0.05
    assert poll_interval(600_000) == 5.0
