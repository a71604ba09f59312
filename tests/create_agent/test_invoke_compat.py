"""`create_agent` runs against LangChain 1.5's: the same replies give field-equal final states."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from _both import agents, fields, human, reply, state_fields
from langgraph.errors import GraphRecursionError as LcRecursionError

import actloop.messages as al_messages
from actloop.agents import GraphRecursionError, create_agent
from actloop.testing import ScriptedChatModel
from actloop.tools import tool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def boom(x: str) -> str:
    """Always fails."""
    raise ValueError("bad thing")


TOOLS = [add, shout, boom]


def both_states(replies: list[dict[str, Any]], **kwargs: Any) -> tuple[Any, Any]:
    lc, al = agents(replies, TOOLS, **kwargs)
    lc_h, al_h = human("hi")
    return (
        state_fields(lc.invoke({"messages": [lc_h]})),
        state_fields(al.invoke({"messages": [al_h]})),
    )


def test_one_tool_call_then_an_answer() -> None:
    replies = [reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("3 it is", id="r2")]
    lc, al = both_states(replies, system_prompt="Be brief.")
    assert al == lc
    assert [m["type"] for m in al["messages"]] == ["human", "ai", "tool", "ai"]
    assert al["messages"][2]["content"] == "3"
    assert al["messages"][2]["id"] == "<uuid>"


def test_parallel_calls_unknown_tool_and_invalid_arguments() -> None:
    replies = [
        reply(
            "",
            ("add", {"a": 1, "b": 2}, "c1"),
            ("nope", {}, "c2"),
            ("add", {"a": "x"}, "c3"),
            ("shout", {"text": "hey"}, "c4"),
            id="r1",
        ),
        reply("done", id="r2"),
    ]
    lc, al = both_states(replies)
    assert al == lc
    tool_rows = [(m["content"], m["status"]) for m in al["messages"] if m["type"] == "tool"]
    assert tool_rows == [
        ("3", "success"),
        ("Error: nope is not a valid tool, try one of [add, shout, boom].", "error"),
        (
            "Error invoking tool 'add' with kwargs {'a': 'x'} with error:\n"
            " a: Input should be a valid integer, unable to parse string as an integer\n"
            "b: Field required\n Please fix the error and try again.",
            "error",
        ),
        ("HEY", "success"),
    ]


def test_a_tool_error_ends_the_run_with_that_error_on_both() -> None:
    replies = [reply("", ("boom", {"x": "1"}, "b1"), id="r1")]
    lc, al = agents(replies, TOOLS)
    lc_h, al_h = human("hi")
    with pytest.raises(ValueError) as lc_err:
        lc.invoke({"messages": [lc_h]})
    with pytest.raises(ValueError) as al_err:
        al.invoke({"messages": [al_h]})
    assert al_err.value.args == lc_err.value.args == ("bad thing",)
    # LangGraph adds a note naming its task ("During task with name 'tools' and id ..."); actloop
    # attaches the finished steps instead (as for any run).


def test_name_is_set_on_the_model_messages() -> None:
    replies = [reply("", ("add", {"a": 2, "b": 2}, "c1"), id="r1"), reply("4", id="r2")]
    lc, al = both_states(replies, name="calc")
    assert al == lc
    assert [m["name"] for m in al["messages"] if m["type"] == "ai"] == ["calc", "calc"]


def test_ainvoke_equals_langchains_ainvoke() -> None:
    replies = [
        reply("", ("add", {"a": 1, "b": 2}, "c1"), ("shout", {"text": "x"}, "c2"), id="r1"),
        reply("ok", id="r2"),
    ]
    lc, al = agents(replies, TOOLS)
    lc_h, al_h = human("hi")
    lc_out = asyncio.run(lc.ainvoke({"messages": [lc_h]}))
    al_out = asyncio.run(al.ainvoke({"messages": [al_h]}))
    assert state_fields(al_out) == state_fields(lc_out)


def _looping(n: int) -> list[dict[str, Any]]:
    return [reply("", ("add", {"a": i, "b": 1}, f"c{i}"), id=f"r{i}") for i in range(n)]


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 8])
def test_recursion_limit_stops_at_the_same_node_with_langgraphs_error(limit: int) -> None:
    lc, al = agents(_looping(10), TOOLS)
    lc_h, al_h = human("hi")
    with pytest.raises(LcRecursionError) as lc_err:
        lc.invoke({"messages": [lc_h]}, {"recursion_limit": limit})
    with pytest.raises(GraphRecursionError) as al_err:
        al.invoke({"messages": [al_h]}, {"recursion_limit": limit})
    assert str(al_err.value) == str(lc_err.value)
    assert str(al_err.value).startswith(f"Recursion limit of {limit} reached without hitting")
    assert isinstance(al_err.value, RecursionError)


def test_recursion_limit_counts_the_model_calls_langgraph_makes() -> None:
    model = ScriptedChatModel([al_messages.AIMessage(**r) for r in _looping(10)])
    agent = create_agent(model, [tool(add)])
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [al_messages.HumanMessage("hi")]}, {"recursion_limit": 5})
    assert model.remaining == 10 - 3  # model, tools, model, tools, model: LangGraph's count too


def test_string_input_messages_and_dict_messages_are_converted() -> None:
    replies = [reply("hello", id="r1")]
    lc, al = agents(replies, TOOLS)
    lc_out = lc.invoke({"messages": [("user", "hi"), {"role": "user", "content": "there"}]})
    al_out = al.invoke({"messages": [("user", "hi"), {"role": "user", "content": "there"}]})
    assert state_fields(al_out) == state_fields(lc_out)
    assert [m["id"] for m in fields(al_out["messages"])] == ["<uuid>", "<uuid>", "r1"]


def test_batch_runs_each_input() -> None:
    # LangGraph's batch runs its inputs on threads, so which input gets which scripted reply is
    # not fixed there: compare the multiset of (input, reply) pairs' shapes.
    replies = [reply("one", id="r1"), reply("two", id="r2")]
    lc, al = agents(replies, TOOLS)
    inputs = [{"messages": [("user", "a")]}, {"messages": [("user", "b")]}]
    lc_out = [state_fields(s) for s in lc.batch(inputs)]
    al_out = [state_fields(s) for s in al.batch(inputs)]
    assert [[m["content"] for m in s["messages"]] for s in al_out] == [["a", "one"], ["b", "two"]]
    assert sorted(s["messages"][1]["content"] for s in lc_out) == ["one", "two"]
    assert [len(s["messages"]) for s in lc_out] == [2, 2]


def test_max_execution_time_stops_a_hung_tool_and_answers_its_call() -> None:
    def hang(x: str) -> str:
        """Never returns in time."""
        time.sleep(30)
        return x

    model = ScriptedChatModel(
        [
            al_messages.AIMessage(
                "",
                id="r1",
                tool_calls=[
                    {"name": "add", "args": {"a": 1, "b": 1}, "id": "c1"},
                    {"name": "hang", "args": {"x": "y"}, "id": "c2"},
                ],
            )
        ]
    )
    agent = create_agent(model, [tool(add), tool(hang)], max_execution_time=0.5)
    started = time.monotonic()
    out = agent.invoke({"messages": [al_messages.HumanMessage("hi", id="h1")]})
    assert time.monotonic() - started < 20  # does not wait for the hung tool
    rows = [(m["tool_call_id"], m["content"], m["status"]) for m in fields(out["messages"])[2:]]
    assert rows == [
        ("c1", "2", "success"),
        (
            "c2",
            "Error: the run's max_execution_time passed before this tool call finished.",
            "error",
        ),
    ]


def test_context_reaches_middleware_through_the_runtime() -> None:
    from actloop.agents.middleware import before_model

    seen: list[Any] = []

    @before_model
    def look(state: Any, runtime: Any) -> None:
        seen.append(runtime.context)

    model = ScriptedChatModel([al_messages.AIMessage("ok", id="r1")])
    agent = create_agent(model, [], middleware=[look])
    agent.invoke({"messages": [("user", "hi")]}, context={"user": "ada"})
    assert seen == [{"user": "ada"}]


def test_a_string_model_names_its_provider() -> None:
    with pytest.raises(ValueError, match="Unable to infer model provider for 'nope:x'"):
        create_agent("nope:x", [])
