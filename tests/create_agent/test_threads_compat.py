"""Threads and human-in-the-loop against LangChain 1.5: a conversation over several `invoke`s of one
`thread_id` (LangGraph's `InMemorySaver` vs actloop's durable SQLite store), `get_state`, and
`HumanInTheLoopMiddleware` pauses resumed with `Command(resume=...)` (approve, edit, reject)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from _both import al_model, al_tools_of, lc_model, lc_tools_of, reply, state_fields
from langchain.agents import create_agent as lc_create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware as LcHITL
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command as LcCommand

from actloop.agents import Command, create_agent
from actloop.agents.middleware import HumanInTheLoopMiddleware
from actloop.checkpoint import SqliteCheckpointer
from actloop.exceptions import CheckpointError


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


TOOLS = [add, shout]
CONFIG = {"configurable": {"thread_id": "t1"}}


def _pair(
    replies: list[dict[str, Any]], tmp_path: Path, hitl: dict[str, Any] | None = None
) -> tuple[Any, Any]:
    """The scenario's agent in LangChain (on InMemorySaver) and actloop (on a SQLite store)."""
    lc = lc_create_agent(
        lc_model(replies),
        lc_tools_of(TOOLS),
        checkpointer=InMemorySaver(),
        middleware=[LcHITL(hitl)] if hitl else [],
    )
    al = create_agent(
        al_model(replies),
        al_tools_of(TOOLS),
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        middleware=[HumanInTheLoopMiddleware(hitl)] if hitl else [],
    )
    return lc, al


def _interrupt_values(state: dict[str, Any]) -> list[Any]:
    return [i.value for i in state.get("__interrupt__", [])]


def _without_interrupt(state: dict[str, Any]) -> dict[str, Any]:
    return state_fields({k: v for k, v in state.items() if k != "__interrupt__"})


def test_a_thread_keeps_the_conversation_across_invokes(tmp_path: Path) -> None:
    replies = [
        reply("hello", id="r1"),
        reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r2"),
        reply("3", id="r3"),
    ]
    lc, al = _pair(replies, tmp_path)
    for text in ("hi", "add 1 and 2"):
        lc_out = lc.invoke({"messages": [("user", text)]}, CONFIG)
        al_out = al.invoke({"messages": [("user", text)]}, CONFIG)
        assert state_fields(al_out) == state_fields(lc_out)
    assert [m["content"] for m in state_fields(al_out)["messages"]] == [
        "hi",
        "hello",
        "add 1 and 2",
        "",
        "3",
        "3",
    ]
    lc_snap, al_snap = lc.get_state(CONFIG), al.get_state(CONFIG)
    assert state_fields(al_snap.values) == state_fields(lc_snap.values)
    assert al_snap.next == lc_snap.next == ()
    other = {"configurable": {"thread_id": "other"}}
    assert al.get_state(other).values == lc.get_state(other).values == {}


def test_threads_on_ainvoke_and_aget_state(tmp_path: Path) -> None:
    replies = [reply("one", id="r1"), reply("two", id="r2")]
    lc, al = _pair(replies, tmp_path)

    async def run(agent: Any) -> Any:
        await agent.ainvoke({"messages": [("user", "a")]}, CONFIG)
        await agent.ainvoke({"messages": [("user", "b")]}, CONFIG)
        return await agent.aget_state(CONFIG)

    assert state_fields(asyncio.run(run(al)).values) == state_fields(asyncio.run(run(lc)).values)


TWO_CALLS = [
    reply("", ("add", {"a": 1, "b": 2}, "c1"), ("shout", {"text": "hey"}, "c2"), id="r1"),
    reply("finished", id="r2"),
]


def _paused_pair(tmp_path: Path) -> tuple[Any, Any]:
    lc, al = _pair(TWO_CALLS, tmp_path, hitl={"add": True, "shout": True})
    lc_out = lc.invoke({"messages": [("user", "go")]}, CONFIG)
    al_out = al.invoke({"messages": [("user", "go")]}, CONFIG)
    assert _without_interrupt(al_out) == _without_interrupt(lc_out)
    assert _interrupt_values(al_out) == _interrupt_values(lc_out)
    assert _interrupt_values(al_out)[0]["action_requests"][0] == {
        "name": "add",
        "args": {"a": 1, "b": 2},
        "description": "Tool execution requires approval\n\nTool: add\nArgs: {'a': 1, 'b': 2}",
    }
    paused = ("HumanInTheLoopMiddleware.after_model",)
    assert al.get_state(CONFIG).next == lc.get_state(CONFIG).next == paused
    return lc, al


@pytest.mark.parametrize(
    "decisions",
    [
        [{"type": "approve"}, {"type": "approve"}],
        [{"type": "approve"}, {"type": "reject"}],
        [{"type": "reject", "message": "not now"}, {"type": "approve"}],
        [
            {"type": "edit", "edited_action": {"name": "add", "args": {"a": 10, "b": 20}}},
            {"type": "approve"},
        ],
    ],
    ids=["approve", "reject", "reject-with-message", "edit"],
)
def test_human_in_the_loop_decisions(tmp_path: Path, decisions: list[dict[str, Any]]) -> None:
    lc, al = _paused_pair(tmp_path)
    lc_out = lc.invoke(LcCommand(resume={"decisions": decisions}), CONFIG)
    al_out = al.invoke(Command(resume={"decisions": decisions}), CONFIG)
    assert state_fields(al_out) == state_fields(lc_out)
    lc_values = dict(lc.get_state(CONFIG).values)  # the middleware's private key too
    assert state_fields(al.get_state(CONFIG).values) == state_fields(lc_values)


def _paused_values(agent: Any) -> dict[str, Any]:
    """A paused thread's snapshot values, without LangChain's private HITL edit key (actloop
    keeps edits in the run's journal)."""
    values = dict(agent.get_state(CONFIG).values)
    values.pop("hitl_edited_tool_calls", None)
    return state_fields(values)


def test_a_paused_turn_s_state_is_the_state_at_the_interrupt(tmp_path: Path) -> None:
    lc, al = _paused_pair(tmp_path)
    assert _paused_values(al) == _paused_values(lc)
    assert [m["type"] for m in _paused_values(al)["messages"]] == ["human", "ai"]


def test_a_pause_after_finished_steps_shows_their_results(tmp_path: Path) -> None:
    """A later turn of the thread pauses in its second model turn: the snapshot holds the
    earlier turn, this turn's input, its first tool step's call and result, and the call that
    waits (not yet answered)."""
    replies = [
        reply("hello", id="r0"),
        reply("", ("shout", {"text": "hey"}, "c1"), id="r1"),
        reply("", ("add", {"a": 1, "b": 2}, "c2"), id="r2"),
        reply("3", id="r3"),
    ]
    lc, al = _pair(replies, tmp_path, hitl={"add": True})
    for agent in (lc, al):
        agent.invoke({"messages": [("user", "hi")]}, CONFIG)
        agent.invoke({"messages": [("user", "go")]}, CONFIG)
    assert _paused_values(al) == _paused_values(lc)
    assert [m["type"] for m in _paused_values(al)["messages"]] == [
        "human",
        "ai",
        "human",
        "ai",
        "tool",
        "ai",
    ]
    decisions = {"decisions": [{"type": "approve"}]}
    lc_out = lc.invoke(LcCommand(resume=decisions), CONFIG)
    al_out = al.invoke(Command(resume=decisions), CONFIG)
    assert state_fields(al_out) == state_fields(lc_out)


def test_new_input_while_paused_is_refused(tmp_path: Path) -> None:
    _, al = _pair(TWO_CALLS, tmp_path, hitl={"add": True})
    al.invoke({"messages": [("user", "go")]}, CONFIG)
    with pytest.raises(CheckpointError, match="resume it with Command"):
        al.invoke({"messages": [("user", "again")]}, CONFIG)


def test_langgraphs_saver_names_work_as_checkpointers(tmp_path: Path) -> None:
    from actloop.checkpoint.memory import InMemorySaver as AlInMemorySaver
    from actloop.checkpoint.sqlite import SqliteSaver

    replies = [reply("one", id="r1"), reply("two", id="r2")]
    with SqliteSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        saver.setup()
        for checkpointer in (AlInMemorySaver(), saver):
            agent = create_agent(al_model(replies), [], checkpointer=checkpointer)
            agent.invoke({"messages": [("user", "a")]}, CONFIG)
            out = agent.invoke({"messages": [("user", "b")]}, CONFIG)
            assert [m.content for m in out["messages"]] == ["a", "one", "b", "two"]


def test_a_failed_turn_resumes_without_repeating_its_finished_calls(tmp_path: Path) -> None:
    from actloop.tools import tool

    ran: list[str] = []

    @tool
    def record(x: str) -> str:
        """Records a call."""
        ran.append(x)
        return f"recorded {x}"

    @tool
    def fragile(x: str) -> str:
        """Fails on its first call."""
        ran.append(f"fragile {x}")
        if len(ran) < 3:
            raise ConnectionError("network down")
        return "ok"

    replies = [
        reply("", ("record", {"x": "a"}, "c1"), ("fragile", {"x": "b"}, "c2"), id="r1"),
        reply("done", id="r2"),
    ]
    agent = create_agent(
        al_model(replies), [record, fragile], checkpointer=SqliteCheckpointer(tmp_path / "d.db")
    )
    with pytest.raises(ConnectionError):
        agent.invoke({"messages": [("user", "go")]}, CONFIG)
    assert ran == ["a", "fragile b"]
    out = agent.invoke(None, CONFIG)  # LangGraph's way to go on from the last checkpoint
    assert ran == ["a", "fragile b", "fragile b"]  # `record` finished: not run again
    assert [(m.type, m.content) for m in out["messages"]] == [
        ("human", "go"),
        ("ai", ""),
        ("tool", "recorded a"),
        ("tool", "ok"),
        ("ai", "done"),
    ]


def test_an_approved_return_direct_call_ends_the_turn_and_the_resume_skips_before_agent(
    tmp_path: Path,
) -> None:
    """Resuming goes on after the tools node, as LangGraph's checkpoint does: a `return_direct`
    tool that ran ends the turn (no further model call) and `before_agent` hooks do not run
    again."""
    from langchain.agents.middleware import before_agent as lc_before_agent
    from langchain_core.tools import tool as lc_tool

    from actloop.agents.middleware import before_agent
    from actloop.tools import tool

    seen: dict[str, int] = {"lc": 0, "al": 0}

    @lc_before_agent
    def lc_count(state: Any, runtime: Any) -> None:
        seen["lc"] += 1

    @before_agent
    def al_count(state: Any, runtime: Any) -> None:
        seen["al"] += 1

    replies = [reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("more", id="r2")]
    lc = lc_create_agent(
        lc_model(replies),
        [lc_tool(return_direct=True)(add)],
        checkpointer=InMemorySaver(),
        middleware=[lc_count, LcHITL({"add": True})],
    )
    al = create_agent(
        al_model(replies),
        [tool(return_direct=True)(add)],
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        middleware=[al_count, HumanInTheLoopMiddleware({"add": True})],
    )
    lc.invoke({"messages": [("user", "go")]}, CONFIG)
    al.invoke({"messages": [("user", "go")]}, CONFIG)
    approve = {"decisions": [{"type": "approve"}]}
    lc_out = lc.invoke(LcCommand(resume=approve), CONFIG)
    al_out = al.invoke(Command(resume=approve), CONFIG)
    assert state_fields(al_out) == state_fields(lc_out)
    assert [m.type for m in al_out["messages"]] == ["human", "ai", "tool"]
    assert seen == {"lc": 1, "al": 1}
