"""An MCP tool that asks a person for input (2026-07-28 `input_required` with an elicitation):
a durable run pauses with the question, `runs show` shows it, and an answer (or a decline)
resumes it: the server gets exactly the answer and its request state. Outside a durable run the
call's observation says what was asked, and the run goes on."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_fixtures import SERVERS, HttpServer

from actloop import AgentAction, AgentExecutor, AgentFinish, CheckpointError
from actloop.checkpoint import SqliteCheckpointer
from actloop.cli._runs import CliResult, runs_resume, runs_show
from actloop.mcp import MCPToolset
from actloop.testing import ScriptedAgent

ASKING = str(SERVERS / "asking.py")
SCHEMA = {
    "properties": {"nights": {"description": "How many nights", "type": "integer"}},
    "required": ["nights"],
    "type": "object",
}
QUESTION = {"key": "nights", "message": "How many nights in Oslo?", "schema": SCHEMA}
PENDING = [
    {
        "id": "0-0",
        "tool": "book",
        "tool_input": {"city": "Oslo"},
        "log": "book a room",
        "questions": [QUESTION],
    }
]
STATE = '{"city": "Oslo", "round": 1}'
"""The request state the server minted (sealed on the wire, opened again by the server)."""


def received(answer: dict[str, Any]) -> str:
    """What the server's tool says it got: the answer as it arrived, and its request state."""
    return f"received {json.dumps({'nights': answer}, sort_keys=True)} with state {STATE}"


def agent() -> ScriptedAgent:
    """Books a room in Oslo, then finishes with the booking's observation."""
    return ScriptedAgent(
        [
            AgentAction("book", {"city": "Oslo"}, "book a room"),
            lambda intermediate_steps: AgentFinish({"output": intermediate_steps[-1][1]}, ""),
        ]
    )


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture
def asking(no_orphans: None) -> Iterator[MCPToolset]:
    with MCPToolset.stdio(sys.executable, [ASKING], timeout=10.0) as toolset:
        yield toolset


def test_a_durable_run_pauses_on_the_question_and_goes_on_with_the_answer(
    asking: MCPToolset, tmp_path: Path
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteCheckpointer(path)
    executor = AgentExecutor(agent=agent(), tools=asking.get_tools(), checkpointer=store)
    paused = executor.invoke({}, cfg("T"))
    assert paused == {PAUSED: PENDING, "thread_id": "T", "status": "paused"}

    shown = runs_show(path, "T")
    assert shown.code == 0
    lines = shown.text.splitlines()
    assert lines[:2] == ["thread:  T", "status:  paused"]
    assert lines[3:] == [
        "inputs:  {}",
        "steps:   1",
        '  [0-0] book({"city": "Oslo"}) -> (not finished)',
        "waiting for an answer:",
        '  [0-0] book({"city": "Oslo"}) asks:',
        "    nights: How many nights in Oslo? answer: "
        '{"properties": {"nights": {"type": "integer", "description": "How many nights"}}, '
        '"required": ["nights"], "type": "object"}',
    ]

    done = executor.resume("T", answer={"0-0": {"nights": 3}})
    assert done == {"output": received({"action": "accept", "content": {"nights": 3}})}
    lines = runs_show(path, "T").text.splitlines()
    assert lines[1] == "status:  finished"
    assert lines[5] == (
        '  [0-0] book({"city": "Oslo"}) -> received {"nights": {"action": "accept", '
        '"content": {"nights": 3}}} with stat...'
    )
    output = {"output": received({"action": "accept", "content": {"nights": 3}})}
    assert lines[6:] == [f"output:  {json.dumps(output)}"]
    store.close()


PAUSED = "pending_approvals"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_or_cancelled_question_reaches_the_server(
    asking: MCPToolset, action: str
) -> None:
    from actloop.checkpoint.memory import InMemorySaver

    store = InMemorySaver()
    executor = AgentExecutor(agent=agent(), tools=await asking.aget_tools(), checkpointer=store)
    paused = await executor.ainvoke({}, cfg("T"))
    assert paused[PAUSED] == PENDING
    done = await executor.aresume("T", answer={"0-0": action})
    assert done == {"output": received({"action": action})}
    store.close()


def test_answers_that_do_not_fit_are_refused_and_nothing_is_lost(asking: MCPToolset) -> None:
    from actloop.checkpoint.memory import InMemorySaver

    store = InMemorySaver()
    executor = AgentExecutor(agent=agent(), tools=asking.get_tools(), checkpointer=store)
    executor.invoke({}, cfg("T"))
    with pytest.raises(CheckpointError) as unknown:
        executor.resume("T", answer={"1-0": {"nights": 2}})
    assert str(unknown.value) == (
        "thread 'T' has no call waiting for an answer with id 1-0; waiting: ['0-0']"
    )
    with pytest.raises(CheckpointError) as malformed:
        executor.resume("T", answer={"0-0": 3})
    assert str(malformed.value) == (
        "the answer to call 0-0 must be an object (the form's content), 'decline', 'cancel' "
        "or {'action': ..., 'content': {...}}"
    )
    again = executor.resume("T", approve=True)  # no answer: still waiting for one
    assert again == {PAUSED: PENDING, "thread_id": "T", "status": "paused"}
    done = executor.resume("T", answer={"0-0": {"action": "accept", "content": {"nights": 1}}})
    assert done == {"output": received({"action": "accept", "content": {"nights": 1}})}
    store.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_without_a_durable_run_the_question_is_an_observation(
    asking: MCPToolset, mode: str
) -> None:
    executor = AgentExecutor(agent=agent(), tools=asking.get_tools())
    done = executor.invoke({}) if mode == "sync" else await executor.ainvoke({})
    assert done == {
        "output": "Error: tool 'book' needs a person's input and did not finish; only a durable "
        "run (a checkpointer and a thread_id) can pause to ask for it. It asked: How many "
        "nights in Oslo?"
    }


async def test_over_http_the_answer_reaches_the_server(no_orphans: None) -> None:
    from actloop.checkpoint.memory import InMemorySaver

    server = HttpServer(ASKING)
    store = InMemorySaver()
    try:
        async with MCPToolset.http(server.url, timeout=10.0) as toolset:
            executor = AgentExecutor(
                agent=agent(), tools=await toolset.aget_tools(), checkpointer=store
            )
            paused = await executor.ainvoke({}, cfg("H"))
            assert paused[PAUSED] == PENDING
            done = await executor.aresume("H", answer={"0-0": {"nights": 5}})
            assert done == {"output": received({"action": "accept", "content": {"nights": 5}})}
    finally:
        store.close()
        server.close()


def test_runs_resume_answers_the_question(asking: MCPToolset, tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SqliteCheckpointer(path)
    AgentExecutor(agent=agent(), tools=asking.get_tools(), checkpointer=store).invoke({}, cfg("R"))
    store.close()
    finish = agent().plans[1]

    def factory(checkpointer: Any) -> AgentExecutor:
        return AgentExecutor(
            agent=ScriptedAgent([finish]), tools=asking.get_tools(), checkpointer=checkpointer
        )

    assert runs_resume(path, "R", factory, answer={"0-0": {"nights": 2}}) == CliResult(
        0, received({"action": "accept", "content": {"nights": 2}})
    )


def test_a_tool_that_asks_twice_pauses_twice(asking: MCPToolset) -> None:
    from actloop.checkpoint.memory import InMemorySaver

    store = InMemorySaver()
    agent = ScriptedAgent(
        [
            AgentAction("trip", {"city": "Oslo"}, "plan a trip"),
            lambda intermediate_steps: AgentFinish({"output": intermediate_steps[-1][1]}, ""),
        ]
    )
    executor = AgentExecutor(agent=agent, tools=asking.get_tools(), checkpointer=store)
    first = executor.invoke({}, cfg("T"))
    assert [p["questions"] for p in first[PAUSED]] == [[QUESTION]]
    second = executor.resume("T", answer={"0-0": {"nights": 2}})
    breakfast = {"type": "object", "properties": {"breakfast": {"type": "boolean"}}}
    assert second[PAUSED] == [
        {
            "id": "0-0",
            "tool": "trip",
            "tool_input": {"city": "Oslo"},
            "log": "plan a trip",
            "questions": [{"key": "breakfast", "message": "Breakfast too?", "schema": breakfast}],
        }
    ]
    done = executor.resume("T", answer={"0-0": {"breakfast": True}})
    assert done == {
        "output": 'trip {"breakfast": {"action": "accept", "content": {"breakfast": true}}, '
        '"city": "Oslo", "nights": {"action": "accept", "content": {"nights": 2}}}'
    }
    kinds = [(e.kind, e.act, e.call) for e in store.entries("T") if e.kind != "context"]
    assert kinds == [  # the tool is not idempotent: a "start" before each call, ended by an ask
        ("plan", None, None),
        ("start", 0, 0),
        ("ask", 0, 0),
        ("answer", 0, 0),
        ("start", 0, 0),
        ("ask", 0, 0),
        ("answer", 0, 0),
        ("start", 0, 0),
        ("obs", 0, 0),
        ("plan", None, None),
    ]
    store.close()
