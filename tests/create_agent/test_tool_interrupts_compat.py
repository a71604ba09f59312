"""`interrupt()` inside a tool against LangChain 1.5 / LangGraph 1.2: the run pauses with the same
state and `__interrupt__` values, `get_state` names the same node, interrupts and tasks,
`Command(resume=...)` runs the call again and each `interrupt()` returns its resume value (by
order), parallel siblings that finished are not run again, a resume map answers interrupts by id,
and a run without a checkpointer ends with its interrupts as LangGraph's does."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import langgraph.types as lg_types
import pytest
from _both import al_model, human, lc_model, reply, state_fields
from langchain.agents import create_agent as lc_create_agent
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver

import actloop.agents.types as al_types
from actloop.agents import CompiledAgent, create_agent
from actloop.checkpoint import SqliteCheckpointer
from actloop.tools import tool as al_tool

CONFIG = {"configurable": {"thread_id": "t1"}}
HEX = re.compile(r"^[0-9a-f]{32}$")


class Tools:
    """The scenario's tools, written once against one library's `interrupt`; `runs` records
    each run (a call run again on resume shows twice)."""

    def __init__(self, interrupt: Callable[[Any], Any]) -> None:
        self.runs: list[str] = []
        runs = self.runs

        def ask(q: str) -> str:
            """Ask a person."""
            runs.append(f"ask {q}")
            return f"answer: {interrupt({'q': q})}"

        def ask_twice(q: str) -> str:
            """Ask a person two things."""
            runs.append(f"ask_twice {q}")
            first = interrupt({"first": q})
            second = interrupt("second")
            return f"{first}/{second}"

        def add(a: int, b: int) -> int:
            """Add two integers."""
            runs.append(f"add {a} {b}")
            return a + b

        self.fns = [ask, ask_twice, add]


def _pair(tmp_path: Path, replies: list[dict[str, Any]], *, saved: bool = True, **kw: Any) -> Any:
    """(LangChain's agent, its tools), (actloop's agent, its tools)."""
    lc_tools, al_tools = Tools(lg_types.interrupt), Tools(al_types.interrupt)
    lc = lc_create_agent(
        lc_model(replies),
        [lc_tool(f) for f in lc_tools.fns],
        checkpointer=InMemorySaver() if saved else None,
        **kw,
    )
    al = create_agent(
        al_model(replies),
        [al_tool(f) for f in al_tools.fns],
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db") if saved else None,
        **kw,
    )
    return (lc, lc_tools), (al, al_tools)


def _side(agent: Any) -> int:
    return 1 if isinstance(agent, CompiledAgent) else 0


def _shown(out: dict[str, Any]) -> dict[str, Any]:
    """An invoke's output as data: its messages as fields, its interrupts' values (ids are
    drawn differently; each must look like LangGraph's)."""
    shown = state_fields({k: v for k, v in out.items() if k != "__interrupt__"})
    if "__interrupt__" in out:
        assert all(HEX.match(i.id) for i in out["__interrupt__"])
        shown["__interrupt__"] = [i.value for i in out["__interrupt__"]]
    return shown


def _snapshot(agent: Any) -> dict[str, Any]:
    """What `get_state` shows of a thread: values, next, interrupts, tasks (as data)."""
    snap = agent.get_state(CONFIG)
    return {
        "values": state_fields(snap.values),
        "next": snap.next,
        "interrupts": [i.value for i in snap.interrupts],
        "ids": [i.id for i in snap.interrupts] == [i.id for t in snap.tasks for i in t.interrupts],
        "tasks": [
            (
                t.name,
                t.path,
                [i.value for i in t.interrupts],
                None if t.result is None else state_fields(t.result),
            )
            for t in snap.tasks
        ],
    }


def _run(agent: Any, resumes: list[Any]) -> list[Any]:
    """The first invoke's output and snapshot, then each resume's."""
    out = agent.invoke({"messages": [human("hi")[_side(agent)]]}, CONFIG)
    seen = [(_shown(out), _snapshot(agent))]
    for resume in resumes:
        command = (lg_types.Command if _side(agent) == 0 else al_types.Command)(resume=resume)
        out = agent.invoke(command, CONFIG)
        seen.append((_shown(out), _snapshot(agent)))
    return seen


ONE = [reply("", ("ask", {"q": "x"}, "c1"), id="r1"), reply("done", id="r2")]
TWICE = [reply("", ("ask_twice", {"q": "x"}, "c1"), id="r1"), reply("done", id="r2")]
SIBLING = [
    reply("", ("ask", {"q": "x"}, "c1"), ("add", {"a": 1, "b": 2}, "c2"), id="r1"),
    reply("done", id="r2"),
]


def test_a_tool_interrupt_pauses_and_its_resume_value_is_returned(tmp_path: Path) -> None:
    (lc, lc_tools), (al, al_tools) = _pair(tmp_path, ONE)
    al_seen = _run(al, [{"ok": True}])
    assert al_seen == _run(lc, [{"ok": True}])
    first, last = al_seen[0], al_seen[-1]
    assert first[0]["__interrupt__"] == [{"q": "x"}]
    assert first[1]["next"] == ("tools",)
    assert [m["content"] for m in last[0]["messages"]] == ["hi", "", "answer: {'ok': True}", "done"]
    assert al_tools.runs == lc_tools.runs == ["ask x", "ask x"]


def test_several_interrupts_in_one_call_take_the_resume_values_in_order(tmp_path: Path) -> None:
    (lc, lc_tools), (al, al_tools) = _pair(tmp_path, TWICE)
    al_seen = _run(al, ["A", "B"])
    assert al_seen == _run(lc, ["A", "B"])
    assert [s[0].get("__interrupt__") for s in al_seen] == [[{"first": "x"}], ["second"], None]
    assert al_seen[-1][0]["messages"][2]["content"] == "A/B"
    assert al_tools.runs == lc_tools.runs == ["ask_twice x"] * 3


def test_a_finished_sibling_is_kept_and_not_run_again(tmp_path: Path) -> None:
    (lc, lc_tools), (al, al_tools) = _pair(tmp_path, SIBLING)
    al_seen = _run(al, ["yes"])
    assert al_seen == _run(lc, ["yes"])
    paused = al_seen[0]
    assert [m["content"] for m in paused[0]["messages"]] == ["hi", "", "3"]  # the sibling's
    assert [t[2] for t in paused[1]["tasks"]] == [[{"q": "x"}], []]
    assert [m["content"] for m in al_seen[-1][0]["messages"]] == [
        "hi",
        "",
        "answer: yes",
        "3",
        "done",
    ]
    assert sorted(al_tools.runs) == sorted(lc_tools.runs) == ["add 1 2", "ask x", "ask x"]


def test_a_resume_map_answers_interrupts_by_id(tmp_path: Path) -> None:
    replies = [
        reply("", ("ask", {"q": "x"}, "c1"), ("ask", {"q": "y"}, "c2"), id="r1"),
        reply("done", id="r2"),
    ]
    (lc, _), (al, _) = _pair(tmp_path, replies)
    finals: list[Any] = []
    for agent in (lc, al):
        command = lg_types.Command if _side(agent) == 0 else al_types.Command
        out = agent.invoke({"messages": [human("hi")[_side(agent)]]}, CONFIG)
        values = [i.value for i in out["__interrupt__"]]  # LangGraph's: in the order they came
        assert sorted(values, key=str) == [{"q": "x"}, {"q": "y"}]
        with pytest.raises(RuntimeError, match="must specify the interrupt id"):
            agent.invoke(command(resume="same for both"), CONFIG)
        ids = {i.value["q"]: i.id for i in agent.get_state(CONFIG).interrupts}
        out = agent.invoke(command(resume={ids["x"]: "one", ids["y"]: "two"}), CONFIG)
        finals.append(state_fields(out))
    assert finals[1] == finals[0]
    assert [m["content"] for m in finals[1]["messages"]] == [
        "hi",
        "",
        "answer: one",
        "answer: two",
        "done",
    ]


def test_without_a_checkpointer_the_run_ends_with_its_interrupts(tmp_path: Path) -> None:
    (lc, _), (al, al_tools) = _pair(tmp_path, SIBLING, saved=False)
    lc_out = _shown(lc.invoke({"messages": [human("hi")[0]]}))
    al_out = _shown(al.invoke({"messages": [human("hi")[1]]}))
    assert al_out == lc_out
    assert al_out["__interrupt__"] == [{"q": "x"}]
    assert [m["content"] for m in al_out["messages"]] == ["hi", "", "3"]
    assert sorted(al_tools.runs) == ["add 1 2", "ask x"]


def test_a_new_agent_on_the_same_store_resumes_the_call(tmp_path: Path) -> None:
    (lc, _), (al, _) = _pair(tmp_path, TWICE)
    lc_seen = _run(lc, ["A", "B"])
    al.invoke({"messages": [human("hi")[1]]}, CONFIG)
    outs: list[Any] = []
    for resume in ("A", "B"):  # another process each time: only the store is kept
        tools = Tools(al_types.interrupt)
        again = create_agent(
            al_model(TWICE[1:]),
            [al_tool(f) for f in tools.fns],
            checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        )
        outs.append(_shown(again.invoke(al_types.Command(resume=resume), CONFIG)))
        assert tools.runs == ["ask_twice x"]
    assert outs == [s[0] for s in lc_seen[1:]]


def test_ainvoke_pauses_and_resumes_as_langgraph(tmp_path: Path) -> None:
    (lc, _), (al, _) = _pair(tmp_path, SIBLING)

    async def run(agent: Any) -> list[Any]:
        side = _side(agent)
        command = lg_types.Command if side == 0 else al_types.Command
        first = await agent.ainvoke({"messages": [human("hi")[side]]}, CONFIG)
        interrupts = (await agent.aget_state(CONFIG)).interrupts
        second = await agent.ainvoke(command(resume="yes"), CONFIG)
        return [_shown(first), [i.value for i in interrupts], _shown(second)]

    assert asyncio.run(run(al)) == asyncio.run(run(lc))


def test_updates_stream_ends_with_the_interrupt(tmp_path: Path) -> None:
    (lc, _), (al, _) = _pair(tmp_path, ONE)
    lc_last = list(lc.stream({"messages": [human("hi")[0]]}, CONFIG, stream_mode="updates"))[-1]
    al_last = list(al.stream({"messages": [human("hi")[1]]}, CONFIG, stream_mode="updates"))[-1]
    assert [i.value for i in al_last["__interrupt__"]] == [
        i.value for i in lc_last["__interrupt__"]
    ]
    assert list(al_last) == list(lc_last) == ["__interrupt__"]


def test_an_interrupt_in_wrap_tool_call_reruns_the_call(tmp_path: Path) -> None:
    import langchain.agents.middleware as lc_mw

    import actloop.agents.middleware as al_mw

    def guard(lib: Any, interrupt: Callable[[Any], Any]) -> Any:
        @lib.wrap_tool_call
        def confirm(request: Any, handler: Any) -> Any:
            if interrupt(f"run {request.tool_call['name']}?") != "yes":
                return lib_message(lib)("refused", tool_call_id=request.tool_call["id"], name="ask")
            return handler(request)

        return confirm

    def lib_message(lib: Any) -> Any:
        if lib is lc_mw:
            from langchain_core.messages import ToolMessage

            return ToolMessage
        from actloop.messages import ToolMessage

        return ToolMessage

    (lc, lc_tools), (al, al_tools) = _pair(
        tmp_path, [reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("ok", id="r2")]
    )
    lc = lc_create_agent(
        lc_model([reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("ok", id="r2")]),
        [lc_tool(f) for f in lc_tools.fns],
        checkpointer=InMemorySaver(),
        middleware=[guard(lc_mw, lg_types.interrupt)],
    )
    al = create_agent(
        al_model([reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("ok", id="r2")]),
        [al_tool(f) for f in al_tools.fns],
        checkpointer=SqliteCheckpointer(tmp_path / "guard.db"),
        middleware=[guard(al_mw, al_types.interrupt)],
    )
    al_seen = _run(al, ["yes"])
    assert al_seen == _run(lc, ["yes"])
    assert al_seen[0][0]["__interrupt__"] == ["run add?"]
    assert al_tools.runs == lc_tools.runs == ["add 1 2"]


def test_interrupt_outside_an_agent_raises_graph_interrupt() -> None:
    with pytest.raises(al_types.GraphInterrupt) as raised:
        al_types.interrupt("hello")
    assert [i.value for i in raised.value.interrupts] == ["hello"]


def test_a_resume_map_naming_no_pending_interrupt_pauses_again(tmp_path: Path) -> None:
    (lc, lc_tools), (al, al_tools) = _pair(tmp_path, ONE)
    al_seen = _run(al, [{"0" * 32: "nobody"}, "yes"])
    assert al_seen == _run(lc, [{"0" * 32: "nobody"}, "yes"])
    assert [s[0].get("__interrupt__") for s in al_seen] == [[{"q": "x"}], [{"q": "x"}], None]
    # LangGraph runs the call again to find it still waits; actloop's journal knows it does
    assert (al_tools.runs, lc_tools.runs) == (["ask x"] * 2, ["ask x"] * 3)
