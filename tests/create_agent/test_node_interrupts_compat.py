"""`interrupt()` inside middleware hooks and `wrap_model_call` against LangChain 1.5 / LangGraph
1.2: the run pauses in that node with the same state, `get_state` names the node and its
interrupt, and `Command(resume=...)` runs the node again, where `interrupt()` returns the value;
the nodes before it in the step are not run again."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import langchain.agents.middleware as lc_mw
import langgraph.types as lg_types
import pytest
from _both import al_model, human, lc_model, reply, state_fields
from langchain.agents import create_agent as lc_create_agent
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver

import actloop.agents.middleware as al_mw
import actloop.agents.types as al_types
from actloop.agents import CompiledAgent, create_agent
from actloop.checkpoint import SqliteCheckpointer
from actloop.tools import tool as al_tool

CONFIG = {"configurable": {"thread_id": "t1"}}
HEX = re.compile(r"^[0-9a-f]{32}$")
REPLIES = [reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("3", id="r2")]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Hooks:
    """Middleware written once against one library: `hook` asks once, on its first run, and
    (for the model) every hook run is recorded."""

    def __init__(self, lib: Any, interrupt: Callable[[Any], Any], hook: str, times: int) -> None:
        self.runs: list[str] = []
        runs = self.runs
        answers: list[Any] = []

        def ask(name: str, state: Any) -> Any:
            runs.append(name)
            if name != hook or len(answers) >= times:
                return None
            got = [interrupt({"at": name, "n": n}) for n in range(times)]
            answers.extend(got)
            return {"messages": [_ai(lib)(f"{name} got {got}", id=f"{name}-said")]}

        @lib.before_agent
        def first(state: Any, runtime: Any) -> Any:
            return ask("before_agent", state)

        @lib.before_model
        def look(state: Any, runtime: Any) -> Any:
            return ask("before_model", state)

        @lib.after_model
        def check(state: Any, runtime: Any) -> Any:
            return ask("after_model", state)

        @lib.after_agent
        def last(state: Any, runtime: Any) -> Any:
            return ask("after_agent", state)

        @lib.before_model
        def second_look(state: Any, runtime: Any) -> Any:
            runs.append("second_look")

        self.middleware = [first, look, second_look, check, last]


def _ai(lib: Any) -> Any:
    if lib is lc_mw:
        from langchain_core.messages import AIMessage

        return AIMessage
    from actloop.messages import AIMessage

    return AIMessage


def _pair(tmp_path: Path, hook: str, times: int = 1, saved: bool = True) -> Any:
    lc_hooks = Hooks(lc_mw, lg_types.interrupt, hook, times)
    al_hooks = Hooks(al_mw, al_types.interrupt, hook, times)
    lc = lc_create_agent(
        lc_model(REPLIES),
        [lc_tool(add)],
        middleware=lc_hooks.middleware,
        checkpointer=InMemorySaver() if saved else None,
    )
    al = create_agent(
        al_model(REPLIES),
        [al_tool(add)],
        middleware=al_hooks.middleware,
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db") if saved else None,
    )
    return (lc, lc_hooks), (al, al_hooks)


def _side(agent: Any) -> int:
    return 1 if isinstance(agent, CompiledAgent) else 0


def _shown(out: dict[str, Any]) -> dict[str, Any]:
    shown = state_fields({k: v for k, v in out.items() if k != "__interrupt__"})
    if "__interrupt__" in out:
        assert all(HEX.match(i.id) for i in out["__interrupt__"])
        shown["__interrupt__"] = [i.value for i in out["__interrupt__"]]
    return shown


def _snapshot(agent: Any) -> dict[str, Any]:
    snap = agent.get_state(CONFIG)
    return {
        "values": state_fields(snap.values),
        "next": snap.next,
        "interrupts": [i.value for i in snap.interrupts],
        "tasks": [(t.name, [i.value for i in t.interrupts]) for t in snap.tasks],
    }


def _run(agent: Any, resumes: list[Any]) -> list[Any]:
    out = agent.invoke({"messages": [human("hi")[_side(agent)]]}, CONFIG)
    seen = [(_shown(out), _snapshot(agent))]
    for resume in resumes:
        command = (lg_types.Command if _side(agent) == 0 else al_types.Command)(resume=resume)
        out = agent.invoke(command, CONFIG)
        seen.append((_shown(out), _snapshot(agent)))
    return seen


@pytest.mark.parametrize("hook", ["before_agent", "before_model", "after_model", "after_agent"])
def test_a_hook_interrupt_pauses_in_its_node_and_resumes_there(tmp_path: Path, hook: str) -> None:
    (lc, lc_hooks), (al, al_hooks) = _pair(tmp_path, hook)
    al_seen = _run(al, ["yes"])
    assert al_seen == _run(lc, ["yes"])
    assert al_seen[0][0]["__interrupt__"] == [{"at": hook, "n": 0}]
    said = [m["content"] for m in al_seen[-1][0]["messages"] if m["id"] == f"{hook}-said"]
    assert said == [f"{hook} got ['yes']"]
    assert al_hooks.runs == lc_hooks.runs


def test_two_interrupts_in_one_hook_take_the_values_in_order(tmp_path: Path) -> None:
    (lc, lc_hooks), (al, al_hooks) = _pair(tmp_path, "after_model", times=2)
    al_seen = _run(al, ["A", "B"])
    assert al_seen == _run(lc, ["A", "B"])
    assert [s[0].get("__interrupt__") for s in al_seen] == [
        [{"at": "after_model", "n": 0}],
        [{"at": "after_model", "n": 1}],
        None,
    ]
    assert al_hooks.runs == lc_hooks.runs


def test_without_a_checkpointer_a_hook_interrupt_ends_the_run(tmp_path: Path) -> None:
    (lc, _), (al, _) = _pair(tmp_path, "before_model", saved=False)
    lc_out = _shown(lc.invoke({"messages": [human("hi")[0]]}))
    assert _shown(al.invoke({"messages": [human("hi")[1]]})) == lc_out
    assert lc_out["__interrupt__"] == [{"at": "before_model", "n": 0}]


def test_an_interrupt_in_wrap_model_call_reruns_the_model_node(tmp_path: Path) -> None:
    def gate(lib: Any, interrupt: Callable[[Any], Any], runs: list[str]) -> Any:
        @lib.wrap_model_call
        def ask_first(request: Any, handler: Any) -> Any:
            runs.append("wrap")
            if len(request.messages) == 1:
                interrupt("may I call the model?")
            return handler(request)

        return ask_first

    lc_runs: list[str] = []
    al_runs: list[str] = []
    lc = lc_create_agent(
        lc_model(REPLIES),
        [lc_tool(add)],
        middleware=[gate(lc_mw, lg_types.interrupt, lc_runs)],
        checkpointer=InMemorySaver(),
    )
    al = create_agent(
        al_model(REPLIES),
        [al_tool(add)],
        middleware=[gate(al_mw, al_types.interrupt, al_runs)],
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
    )
    al_seen = _run(al, ["go"])
    assert al_seen == _run(lc, ["go"])
    assert al_seen[0][1]["next"] == ("model",)
    assert al_runs == lc_runs == ["wrap", "wrap", "wrap"]


def test_a_new_agent_on_the_same_store_resumes_the_hook(tmp_path: Path) -> None:
    (lc, _), (al, _) = _pair(tmp_path, "after_model", times=2)
    lc_seen = _run(lc, ["A", "B"])
    al.invoke({"messages": [human("hi")[1]]}, CONFIG)
    outs: list[Any] = []
    for resume in ("A", "B"):  # another process each time: only the store is kept
        hooks = Hooks(al_mw, al_types.interrupt, "after_model", 2)
        again = create_agent(
            al_model(REPLIES[1:]),
            [al_tool(add)],
            middleware=hooks.middleware,
            checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        )
        outs.append(_shown(again.invoke(al_types.Command(resume=resume), CONFIG)))
    assert outs == [s[0] for s in lc_seen[1:]]


def test_ainvoke_pauses_in_a_hook_and_resumes_as_langgraph(tmp_path: Path) -> None:
    (lc, _), (al, _) = _pair(tmp_path, "before_model")

    async def run(agent: Any) -> list[Any]:
        side = _side(agent)
        command = lg_types.Command if side == 0 else al_types.Command
        first = await agent.ainvoke({"messages": [human("hi")[side]]}, CONFIG)
        second = await agent.ainvoke(command(resume="ok"), CONFIG)
        return [_shown(first), _shown(second)]

    assert asyncio.run(run(al)) == asyncio.run(run(lc))


def test_a_reviewers_edit_holds_when_the_tools_step_fails_and_resumes(tmp_path: Path) -> None:
    """The edit lives in HITL's state key; a failed tools step resumed with `invoke(None)`
    (another process for actloop: its state is rebuilt from the journal) runs the edited call."""
    runs: dict[str, list[str]] = {"lc": [], "al": []}

    def fragile_for(side: str) -> Callable[..., str]:
        def send(to: str) -> str:
            """Send the report."""
            runs[side].append(to)
            if len(runs[side]) == 1:
                raise ConnectionError("network down")
            return f"sent to {to}"

        return send

    replies = [reply("", ("send", {"to": "ana"}, "c1"), id="r1"), reply("done", id="r2")]
    decision = {"type": "edit", "edited_action": {"name": "send", "args": {"to": "bob"}}}
    lc = lc_create_agent(
        lc_model(replies),
        [lc_tool(fragile_for("lc"))],
        middleware=[lc_mw.HumanInTheLoopMiddleware({"send": True})],
        checkpointer=InMemorySaver(),
    )

    def al_agent(tail: int) -> Any:
        return create_agent(
            al_model(replies[tail:]),
            [al_tool(fragile_for("al"))],
            middleware=[al_mw.HumanInTheLoopMiddleware({"send": True})],
            checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        )

    finals: list[Any] = []
    for agent, command, side in (
        (lc, lg_types.Command, 0),
        (al_agent(0), al_types.Command, 1),
    ):
        agent.invoke({"messages": [human("hi")[side]]}, CONFIG)
        with pytest.raises(ConnectionError):
            agent.invoke(command(resume={"decisions": [decision]}), CONFIG)
        again = agent if side == 0 else al_agent(1)
        finals.append(_shown(again.invoke(None, CONFIG)))
    assert finals[1] == finals[0]
    assert runs["al"] == runs["lc"] == ["bob", "bob"]
    assert '"to": "bob"' in finals[1]["messages"][2]["content"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"interrupt_before": ["tools"]},
        {"interrupt_after": ["model"]},
        {"interrupt_after": ["tools"]},
    ],
    ids=["before-tools", "after-model", "after-tools"],
)
def test_static_interrupts_beside_human_in_the_loop(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    """Each pause (the reviewer's and the static one) comes where LangGraph's does."""
    lc = lc_create_agent(
        lc_model(REPLIES),
        [lc_tool(add)],
        middleware=[lc_mw.HumanInTheLoopMiddleware({"add": True})],
        checkpointer=InMemorySaver(),
        **kwargs,
    )
    al = create_agent(
        al_model(REPLIES),
        [al_tool(add)],
        middleware=[al_mw.HumanInTheLoopMiddleware({"add": True})],
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
        **kwargs,
    )
    seen: list[list[Any]] = []
    for agent in (lc, al):
        command = lg_types.Command if _side(agent) == 0 else al_types.Command
        out = agent.invoke({"messages": [human("hi")[_side(agent)]]}, CONFIG)
        steps = [(_shown(out), agent.get_state(CONFIG).next)]
        while agent.get_state(CONFIG).next:
            approve = command(resume={"decisions": [{"type": "approve"}]})
            out = agent.invoke(approve if agent.get_state(CONFIG).interrupts else None, CONFIG)
            steps.append((_shown(out), agent.get_state(CONFIG).next))
            assert len(steps) < 6
        seen.append(steps)
    assert seen[1] == seen[0]
    assert len(seen[1]) >= 3  # the reviewer's pause and the static one
