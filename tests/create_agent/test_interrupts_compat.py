"""`interrupt_before`/`interrupt_after` against LangChain 1.5 / LangGraph 1.2: a run pauses at the
same nodes with the same state, `get_state().next` names the same node, `invoke(None, config)`
goes on to the same final state, and a resumed run in another process (a new agent on the same
store) has the state the pause left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import langchain.agents.middleware as lc_middleware
import pytest
from _both import al_model, al_tools_of, human, lc_model, lc_tools_of, reply, state_fields
from langchain.agents import create_agent as lc_create_agent
from langgraph.checkpoint.memory import InMemorySaver

import actloop.agents.middleware as al_middleware
from actloop.agents import CompiledAgent, create_agent
from actloop.checkpoint import SqliteCheckpointer


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CONFIG = {"configurable": {"thread_id": "t1"}}
REPLIES = [reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("3", id="r2")]


def _pair(tmp_path: Path, replies: list[dict[str, Any]], **kwargs: Any) -> tuple[Any, Any]:
    lc = lc_create_agent(
        lc_model(replies), lc_tools_of([add]), checkpointer=InMemorySaver(), **kwargs
    )
    al = create_agent(
        al_model(replies),
        al_tools_of([add]),
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        **kwargs,
    )
    return lc, al


def _run(agent: Any) -> list[tuple[Any, tuple[str, ...]]]:
    """Each invoke's state and the node named next, until the thread is done."""
    side = 1 if isinstance(agent, CompiledAgent) else 0
    out = agent.invoke({"messages": [human("hi")[side]]}, CONFIG)
    seen = [(state_fields(out), agent.get_state(CONFIG).next)]
    while seen[-1][1]:
        out = agent.invoke(None, CONFIG)
        seen.append((state_fields(out), agent.get_state(CONFIG).next))
        assert len(seen) < 10
    return seen


@pytest.mark.parametrize(
    "kwargs",
    [
        {"interrupt_before": ["tools"]},
        {"interrupt_after": ["model"]},
        {"interrupt_after": ["tools"]},
        {"interrupt_before": ["model"]},
        {"interrupt_before": ["model", "tools"], "interrupt_after": ["model", "tools"]},
    ],
    ids=["before-tools", "after-model", "after-tools", "before-model", "all"],
)
def test_pauses_and_resumes_as_langgraph(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    lc, al = _pair(tmp_path, REPLIES, **kwargs)
    lc_seen, al_seen = _run(lc), _run(al)
    assert al_seen == lc_seen
    assert len(al_seen) > 1


def _snapshots(agent: Any) -> list[dict[str, Any]]:
    """The thread's snapshot values at each pause and at the end."""
    side = 1 if isinstance(agent, CompiledAgent) else 0
    agent.invoke({"messages": [human("hi")[side]]}, CONFIG)
    seen = [state_fields(agent.get_state(CONFIG).values)]
    while agent.get_state(CONFIG).next:
        agent.invoke(None, CONFIG)
        seen.append(state_fields(agent.get_state(CONFIG).values))
        assert len(seen) < 10
    return seen


@pytest.mark.parametrize(
    "kwargs",
    [
        {"interrupt_before": ["tools"]},
        {"interrupt_after": ["model"]},
        {"interrupt_after": ["tools"]},
        {"interrupt_before": ["model"]},
        {"interrupt_before": ["model", "tools"], "interrupt_after": ["model", "tools"]},
    ],
    ids=["before-tools", "after-model", "after-tools", "before-model", "all"],
)
def test_snapshots_at_static_pauses_hold_the_state_at_the_pause(
    tmp_path: Path, kwargs: dict[str, Any]
) -> None:
    lc, al = _pair(tmp_path, REPLIES, **kwargs)
    lc_seen, al_seen = _snapshots(lc), _snapshots(al)
    assert al_seen == lc_seen
    assert len(al_seen) > 1


def test_the_pauses_of_each_option() -> None:
    """What the comparison above saw: where each option pauses (LangGraph's `next`)."""
    expected = {
        "before-tools": [("tools",), ()],
        "before-model": [("model",), ("model",), ()],
        "after-tools": [("model",), ()],
    }
    for name, kwargs in [
        ("before-tools", {"interrupt_before": ["tools"]}),
        ("before-model", {"interrupt_before": ["model"]}),
        ("after-tools", {"interrupt_after": ["tools"]}),
    ]:
        lc = lc_create_agent(
            lc_model(REPLIES), lc_tools_of([add]), checkpointer=InMemorySaver(), **kwargs
        )
        assert [n for _, n in _run(lc)] == expected[name]


def test_no_pause_after_a_final_answer(tmp_path: Path) -> None:
    lc, al = _pair(tmp_path, [reply("hello", id="r1")], interrupt_after=["model"])
    al_seen = _run(al)
    assert al_seen == _run(lc)
    assert [n for _, n in al_seen] == [()]


def test_middleware_nodes_are_named_next(tmp_path: Path) -> None:
    def hooks(lib: Any) -> list[Any]:
        @lib.before_model
        def look(state: Any, runtime: Any) -> None:
            return None

        @lib.after_model
        def check(state: Any, runtime: Any) -> None:
            return None

        return [look, check]

    for kwargs in ({"interrupt_after": ["model"]}, {"interrupt_after": ["tools"]}):
        lc = lc_create_agent(
            lc_model(REPLIES),
            lc_tools_of([add]),
            checkpointer=InMemorySaver(),
            middleware=hooks(lc_middleware),
            **kwargs,
        )
        al = create_agent(
            al_model(REPLIES),
            al_tools_of([add]),
            checkpointer=SqliteCheckpointer(tmp_path / f"{next(iter(kwargs.values()))[0]}.db"),
            middleware=hooks(al_middleware),
            **kwargs,
        )
        lc_seen, al_seen = _run(lc), _run(al)
        assert al_seen == lc_seen
    assert [n for _, n in al_seen] == [("look.before_model",), ()]


def test_without_a_checkpointer_the_run_ends_at_the_interrupt() -> None:
    for kwargs in ({"interrupt_before": ["tools"]}, {"interrupt_after": ["tools"]}):
        lc = lc_create_agent(lc_model(REPLIES), lc_tools_of([add]), **kwargs)
        al = create_agent(al_model(REPLIES), al_tools_of([add]), **kwargs)
        lc_h, al_h = human("hi")
        lc_out = state_fields(lc.invoke({"messages": [lc_h]}))
        assert state_fields(al.invoke({"messages": [al_h]})) == lc_out
    assert [m["type"] for m in lc_out["messages"]] == ["human", "ai", "tool"]


def test_updates_stream_ends_with_an_empty_interrupt(tmp_path: Path) -> None:
    lc, al = _pair(tmp_path, REPLIES, interrupt_before=["tools"])
    lc_h, al_h = human("hi")
    lc_last = list(lc.stream({"messages": [lc_h]}, CONFIG, stream_mode="updates"))[-1]
    al_last = list(al.stream({"messages": [al_h]}, CONFIG, stream_mode="updates"))[-1]
    assert al_last == lc_last == {"__interrupt__": ()}


def test_a_new_agent_on_the_same_store_goes_on_from_the_pause(tmp_path: Path) -> None:
    lc, al = _pair(tmp_path, REPLIES, interrupt_before=["tools"])
    lc_h, al_h = human("hi")
    lc.invoke({"messages": [lc_h]}, CONFIG)
    al.invoke({"messages": [al_h]}, CONFIG)
    again = create_agent(  # another process: only the store is shared
        al_model(REPLIES[1:]),
        al_tools_of([add]),
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        interrupt_before=["tools"],
    )
    assert state_fields(again.invoke(None, CONFIG)) == state_fields(lc.invoke(None, CONFIG))


def test_names_langgraph_does_not_have_are_refused() -> None:
    with pytest.raises(ValueError) as lc_err:
        lc_create_agent(
            lc_model(REPLIES), [], interrupt_before=["nope"], checkpointer=InMemorySaver()
        )
    with pytest.raises(ValueError) as al_err:
        create_agent(al_model(REPLIES), [], interrupt_before=["nope"])
    assert str(al_err.value) == str(lc_err.value) == "Interrupt node `nope` not found"


def test_each_resume_in_a_new_agent_keeps_the_order_of_the_turns(tmp_path: Path) -> None:
    replies = [
        reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"),
        reply("", ("add", {"a": 3, "b": 4}, "c2"), id="r2"),
        reply("7", id="r3"),
    ]
    lc, _ = _pair(tmp_path, replies, interrupt_after=["tools"])
    lc_seen = _run(lc)
    al_seen = []
    for n in range(3):  # a new agent (another process) for each invoke; only the store is kept
        agent = create_agent(
            al_model(replies[n:]),
            al_tools_of([add]),
            checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
            interrupt_after=["tools"],
        )
        out = agent.invoke({"messages": [human("hi")[1]]} if n == 0 else None, CONFIG)
        al_seen.append((state_fields(out), agent.get_state(CONFIG).next))
    assert al_seen == lc_seen
    assert [m["type"] for m in al_seen[-1][0]["messages"]] == [
        "human",
        "ai",
        "tool",
        "ai",
        "tool",
        "ai",
    ]


def test_ainvoke_pauses_and_resumes_as_langgraph(tmp_path: Path) -> None:
    import asyncio

    lc, al = _pair(tmp_path, REPLIES, interrupt_before=["tools"])

    async def run(agent: Any, side: int) -> list[Any]:
        first = await agent.ainvoke({"messages": [human("hi")[side]]}, CONFIG)
        second = await agent.ainvoke(None, CONFIG)
        return [state_fields(first), (await agent.aget_state(CONFIG)).next, state_fields(second)]

    assert asyncio.run(run(al, 1)) == asyncio.run(run(lc, 0))
