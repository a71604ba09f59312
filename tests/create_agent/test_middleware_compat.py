"""Custom middleware of every hook kind, and `jump_to`, against LangChain 1.5: each middleware is
written once against a library namespace (`lib`: its middleware module and messages module) and
built on both sides; the final states must be field-equal, and what the hooks saw the same."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import langchain.agents.middleware as lc_middleware
import langchain_core.messages as lc_messages
import pytest
from _both import agents, human, reply, state_fields

import actloop.agents.middleware as al_middleware
import actloop.messages as al_messages

LC = SimpleNamespace(mw=lc_middleware, msg=lc_messages)
AL = SimpleNamespace(mw=al_middleware, msg=al_messages)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


TOOLS = [add, shout]
TWO_TURNS = [
    reply("", ("add", {"a": 1, "b": 2}, "c1"), ("shout", {"text": "a"}, "c2"), id="r1"),
    reply("done", id="r2"),
    reply("extra", id="r3"),
]


def compare(
    make: Any,
    replies: list[dict[str, Any]] = TWO_TURNS,
    *,
    run_async: bool = False,
    ordered: bool = True,
) -> Any:
    """Build the middleware on both sides, run, and return (actloop state, both logs)."""
    lc_log: list[Any] = []
    al_log: list[Any] = []
    lc, al = agents(replies, TOOLS, lc_middleware=make(LC, lc_log), al_middleware=make(AL, al_log))
    lc_h, al_h = human("hi")
    if run_async:
        lc_out = asyncio.run(lc.ainvoke({"messages": [lc_h]}))
        al_out = asyncio.run(al.ainvoke({"messages": [al_h]}))
    else:
        lc_out = lc.invoke({"messages": [lc_h]})
        al_out = al.invoke({"messages": [al_h]})
    assert state_fields(al_out) == state_fields(lc_out)
    if ordered:
        assert al_log == lc_log
    else:  # LangGraph runs a step's tool calls on threads: their hooks' order is not fixed there
        assert sorted(al_log, key=repr) == sorted(lc_log, key=repr)
    return state_fields(al_out), al_log


def _texts(state: Any) -> list[str]:
    return [m.text if hasattr(m, "text") else m.content for m in state["messages"]]


def test_before_and_after_model_see_the_state_and_add_messages() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.before_model
        def note(state: Any, runtime: Any) -> Any:
            log.append(("before", len(state["messages"])))
            return {"messages": [lib.msg.HumanMessage(f"note {len(log)}", id=f"n{len(log)}")]}

        @lib.mw.after_model
        def seen(state: Any, runtime: Any) -> Any:
            log.append(("after", state["messages"][-1].id))
            return None

        return [note, seen]

    state, log = compare(make)
    assert log == [("before", 1), ("after", "r1"), ("before", 5), ("after", "r2")]
    assert [m["id"] for m in state["messages"]][:3] == ["h1", "n1", "r1"]


def test_before_and_after_agent_run_once_each() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.before_agent
        def start(state: Any, runtime: Any) -> Any:
            log.append(("start", len(state["messages"])))
            return {"messages": [lib.msg.SystemMessage("ctx", id="s0")]}

        @lib.mw.after_agent
        def end(state: Any, runtime: Any) -> Any:
            log.append(("end", len(state["messages"])))
            return {"messages": [lib.msg.AIMessage("bye", id="e0")]}

        return [start, end]

    state, log = compare(make)
    assert log == [("start", 1), ("end", 6)]
    assert state["messages"][-1]["content"] == "bye"


def test_after_model_order_is_reversed_and_jump_to_end_skips_the_tools() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.after_model(can_jump_to=["end"])
        def first(state: Any, runtime: Any) -> Any:
            log.append("first")
            return {"jump_to": "end"}

        @lib.mw.after_model
        def second(state: Any, runtime: Any) -> Any:
            log.append("second")
            return None

        return [first, second]

    state, log = compare(make)
    assert log == ["second", "first"]
    assert [m["type"] for m in state["messages"]] == ["human", "ai"]


def test_jump_to_model_calls_the_model_again() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.after_model(can_jump_to=["model"])
        def again(state: Any, runtime: Any) -> Any:
            last = state["messages"][-1]
            log.append(last.id)
            if last.id == "r2":
                return {"jump_to": "model"}
            return None

        return [again]

    state, log = compare(make)
    assert log == ["r1", "r2", "r3"]
    assert [m["content"] for m in state["messages"] if m["type"] == "ai"] == ["", "done", "extra"]


def test_an_undeclared_jump_is_ignored() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.before_model
        def leave(state: Any, runtime: Any) -> Any:
            log.append(len(state["messages"]))
            return {"jump_to": "end"}

        return [leave]

    state, log = compare(make)
    assert log == [1, 4]
    assert len(state["messages"]) == 5


def test_before_model_jump_to_end_from_a_class_hook() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        class Stop(lib.mw.AgentMiddleware):
            @lib.mw.hook_config(can_jump_to=["end"])
            def before_model(self, state: Any, runtime: Any) -> Any:
                log.append(len(state["messages"]))
                if len(state["messages"]) > 1:
                    return {"jump_to": "end"}
                return None

        return [Stop()]

    state, log = compare(make)
    assert log == [1, 4]
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "tool", "tool"]


def test_wrap_model_call_layers_first_outermost_and_can_replace_the_reply() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.wrap_model_call
        def outer(request: Any, handler: Any) -> Any:
            log.append(("outer in", request.system_prompt))
            response = handler(request.override(system_message=lib.msg.SystemMessage("outer")))
            log.append(("outer out", [m.id for m in response.result]))
            return response

        @lib.mw.wrap_model_call
        def inner(request: Any, handler: Any) -> Any:
            log.append(("inner in", request.system_prompt, len(request.messages)))
            if len(request.messages) > 1:
                return lib.msg.AIMessage("replaced", id="x1")
            return handler(request)

        return [outer, inner]

    state, log = compare(make)
    assert log == [
        ("outer in", None),
        ("inner in", "outer", 1),
        ("outer out", ["r1"]),
        ("outer in", None),
        ("inner in", "outer", 4),
        ("outer out", ["x1"]),
    ]
    assert state["messages"][-1]["content"] == "replaced"


def test_dynamic_prompt_sets_the_system_message_the_model_sees() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.dynamic_prompt
        def prompt(request: Any) -> str:
            return f"{len(request.messages)} messages so far"

        @lib.mw.wrap_model_call
        def spy(request: Any, handler: Any) -> Any:
            log.append(request.system_prompt)
            return handler(request)

        return [prompt, spy]

    _, log = compare(make)
    assert log == ["1 messages so far", "4 messages so far"]


def test_wrap_tool_call_sees_each_call_and_may_answer_it_itself() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.wrap_tool_call
        def guard(request: Any, handler: Any) -> Any:
            call = request.tool_call
            log.append((call["name"], call["id"], request.tool.name))
            if call["name"] == "shout":
                return lib.msg.ToolMessage(
                    "blocked", tool_call_id=call["id"], name=call["name"], status="error"
                )
            return handler(request.override(tool_call={**call, "args": {"a": 10, "b": 20}}))

        return [guard]

    state, log = compare(make, ordered=False)
    assert log == [("add", "c1", "add"), ("shout", "c2", "shout")]
    tools = [(m["content"], m["status"]) for m in state["messages"] if m["type"] == "tool"]
    assert tools == [("30", "success"), ("blocked", "error")]


def test_async_hooks_on_ainvoke() -> None:
    def make(lib: Any, log: list[Any]) -> list[Any]:
        @lib.mw.before_model
        async def note(state: Any, runtime: Any) -> Any:
            log.append(("before", len(state["messages"])))
            return None

        @lib.mw.wrap_model_call
        async def around(request: Any, handler: Any) -> Any:
            log.append(("model", len(request.messages)))
            return await handler(request)

        @lib.mw.wrap_tool_call
        async def tools(request: Any, handler: Any) -> Any:
            log.append(("tool", request.tool_call["id"]))
            return await handler(request)

        return [note, around, tools]

    _, log = compare(make, run_async=True, ordered=False)
    assert log == [
        ("before", 1),
        ("model", 1),
        ("tool", "c1"),
        ("tool", "c2"),
        ("before", 4),
        ("model", 4),
    ]


@pytest.mark.parametrize("limit", [2, 3, 4, 5, 6])
def test_recursion_limit_counts_hook_nodes_as_langgraph_does(limit: int) -> None:
    from _both import agents as build

    from actloop.agents import GraphRecursionError

    looping = [reply("", ("add", {"a": i, "b": 1}, f"c{i}"), id=f"r{i}") for i in range(10)]
    counts: dict[str, list[int]] = {}
    built: dict[str, Any] = {}
    for name, lib in (("lc", LC), ("al", AL)):
        seen: list[int] = []
        counts[name] = seen

        @lib.mw.before_model
        def count(state: Any, runtime: Any, seen: list[int] = seen) -> Any:
            seen.append(len(state["messages"]))
            return None

        @lib.mw.after_model
        def after(state: Any, runtime: Any) -> Any:
            return None

        built[name] = [count, after]
    lc, al = build(looping, TOOLS, lc_middleware=built["lc"], al_middleware=built["al"])
    from langgraph.errors import GraphRecursionError as LcError

    with pytest.raises(LcError) as lc_err:
        lc.invoke({"messages": [("user", "hi")]}, {"recursion_limit": limit})
    with pytest.raises(GraphRecursionError) as al_err:
        al.invoke({"messages": [("user", "hi")]}, {"recursion_limit": limit})
    assert str(al_err.value) == str(lc_err.value)
    assert counts["al"] == counts["lc"]
