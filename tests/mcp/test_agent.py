"""Agent runs (a scripted model) calling real MCP servers through the executor: invoke, ainvoke
and stream; a hung tool under the run's deadline; a failure that escapes keeps its steps."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest
from mcp_fixtures import DEMO, HttpServer

from actloop import AgentExecutor
from actloop.mcp import MCPConnectionError, MCPToolset
from actloop.messages import AIMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import BaseTool

PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


def _call(name: str, args: dict[str, Any], id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": id}


def _executor(
    replies: list[Any], tools: list[BaseTool], **kwargs: Any
) -> tuple[AgentExecutor, ScriptedChatModel]:
    model = ScriptedChatModel(replies)
    agent = create_tool_calling_agent(model, tools, PROMPT)
    executor = AgentExecutor(agent=agent, tools=tools, return_intermediate_steps=True, **kwargs)
    return executor, model


def _steps(result: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(action.tool, obs) for action, obs in result["intermediate_steps"]]


FAULTS = [
    AIMessage("", tool_calls=[_call("add", {"a": 2, "b": 3}, "c1")]),
    AIMessage("", tool_calls=[_call("add", {"a": "x", "b": 3}, "c2")]),
    AIMessage("", tool_calls=[_call("boom", {"reason": "why"}, "c3")]),
    AIMessage("", tool_calls=[_call("crash", {}, "c4")]),
    AIMessage("", tool_calls=[_call("shout", {"text": "back"}, "c5")]),
    "all done",
]
EXPECTED = [
    ("add", {"result": 5}),
    (
        "add",
        "Invalid arguments for tool 'add': field 'a': Input should be a valid integer. "
        "Fix the arguments and try again.",
    ),
    (
        "boom",
        "Error: tool 'boom' of MCP server 'demo' failed: Error executing tool boom: "
        "cannot do it: why",
    ),
    (
        "crash",
        "Error: MCP server 'demo' closed the connection during tool 'crash' (it exited, crashed "
        "or dropped the connection; its last stderr line: fatal: the disk is on fire); the next "
        "call starts it again",
    ),
    ("shout", {"result": "BACK"}),
]


def test_invoke_through_faults_keeps_going(demo: MCPToolset) -> None:
    executor, model = _executor(list(FAULTS), demo.get_tools())
    result = executor.invoke({"input": "go"})
    assert _steps(result) == EXPECTED
    assert result["output"] == "all done"
    model.assert_complete()


async def test_ainvoke_through_faults_keeps_going(demo: MCPToolset) -> None:
    executor, model = _executor(list(FAULTS), await demo.aget_tools())
    result = await executor.ainvoke({"input": "go"})
    assert _steps(result) == EXPECTED
    model.assert_complete()


def test_stream_over_http(http_server: HttpServer) -> None:
    with MCPToolset.http(http_server.url, prefix="web_") as toolset:
        replies = [AIMessage("", tool_calls=[_call("web_add", {"a": 1, "b": 1}, "c1")]), "2"]
        executor, _ = _executor(replies, toolset.get_tools())
        chunks = list(executor.stream({"input": "1+1"}))
    assert [sorted(c) for c in chunks] == [
        ["actions", "messages"],
        ["messages", "steps"],
        ["intermediate_steps", "messages", "output"],
    ]
    assert [(s.action.tool, s.observation) for s in chunks[1]["steps"]] == [
        ("web_add", {"result": 2})
    ]
    assert chunks[2]["output"] == "2"


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_hung_tool_obeys_the_runs_deadline(mode: str, no_orphans: None) -> None:
    async with MCPToolset.stdio(sys.executable, [DEMO], timeout=None) as toolset:
        replies = [
            AIMessage("", tool_calls=[_call("add", {"a": 1, "b": 1}, "c1")]),
            AIMessage("", tool_calls=[_call("hang", {}, "c2")]),
            "never",
        ]
        executor, _ = _executor(replies, await toolset.aget_tools(), max_execution_time=3.0)
        started = time.monotonic()
        if mode == "invoke":
            result = executor.invoke({"input": "go"})
        else:
            result = await executor.ainvoke({"input": "go"})
        assert time.monotonic() - started < 30  # liveness, not speed: it did not hang
        assert result["output"] == "Agent stopped due to max iterations."
        assert _steps(result) == [("add", {"result": 2})]
        assert await toolset.acall("add", {"a": 2, "b": 2}) == {"result": 4}


def test_an_escaping_server_error_keeps_the_steps(demo: MCPToolset) -> None:
    tools = demo.get_tools()
    for tool in tools:
        tool.handle_tool_error = False
    replies = [
        AIMessage("", tool_calls=[_call("add", {"a": 1, "b": 1}, "c1")]),
        AIMessage("", tool_calls=[_call("crash", {}, "c2")]),
        "never",
    ]
    executor, _ = _executor(replies, tools)
    with pytest.raises(MCPConnectionError) as caught:
        executor.invoke({"input": "go"})
    assert caught.value.server == "demo"
    assert caught.value.tool == "crash"
    steps = caught.value.intermediate_steps  # type: ignore[attr-defined]
    assert [(a.tool, o) for a, o in steps] == [("add", {"result": 2})]
