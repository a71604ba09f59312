"""`ToolErrorMiddleware` against LangChain 1.5's: the same scripted replies and failing tools give
the same final messages, or the same propagated error."""

from __future__ import annotations

import asyncio
from typing import Any

import langchain.agents.middleware as lc_mw
import pytest
from _both import agents, reply, state_fields

import actloop.agents.middleware as al_mw


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


def lookup(key: str) -> str:
    """Look a key up."""
    raise KeyError(key)


TOOLS = [add, divide, lookup]
REPLIES = [
    reply(
        "",
        ("add", {"a": 1, "b": 2}, "c1"),
        ("divide", {"a": 1, "b": 0}, "c2"),
        ("lookup", {"key": "k"}, "c3"),
        id="r1",
    ),
    reply("done", id="r2"),
]


def on_error(exc: Exception, request: Any) -> str | None:
    """Shows zero divisions and key errors by type only; lets others propagate."""
    if isinstance(exc, ZeroDivisionError | KeyError):
        return f"`{request.tool_call['name']}` failed with {type(exc).__name__}."
    return None


def outcome(agent: Any, *, use_async: bool = False) -> Any:
    """The final state as fields, or the raised error as (type name, text)."""
    inputs = {"messages": [("user", "go")]}
    try:
        if use_async:
            return state_fields(asyncio.run(agent.ainvoke(inputs)))
        return state_fields(agent.invoke(inputs))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("use_async", [False, True])
def test_handled_errors_become_error_tool_messages(use_async: bool) -> None:
    lc, al = agents(
        REPLIES,
        TOOLS,
        lc_middleware=[lc_mw.ToolErrorMiddleware(on_error)],
        al_middleware=[al_mw.ToolErrorMiddleware(on_error)],
    )
    expected = outcome(lc, use_async=use_async)
    assert outcome(al, use_async=use_async) == expected
    tools = [m for m in expected["messages"] if m["type"] == "tool"]
    assert [(m["content"], m["status"]) for m in tools] == [
        ("3", "success"),
        ("`divide` failed with ZeroDivisionError.", "error"),
        ("`lookup` failed with KeyError.", "error"),
    ]


def test_unfiltered_tools_and_unhandled_errors_propagate() -> None:
    lc, al = agents(
        REPLIES,
        TOOLS,
        lc_middleware=[lc_mw.ToolErrorMiddleware(on_error, tools=["divide"])],
        al_middleware=[al_mw.ToolErrorMiddleware(on_error, tools=["divide"])],
    )
    assert outcome(al) == outcome(lc) == ("KeyError", "'k'")


def test_async_handler_on_the_async_path() -> None:
    async def aon_error(exc: Exception, request: Any) -> str:
        return f"async: {request.tool_call['id']} {type(exc).__name__}"

    lc, al = agents(
        REPLIES,
        TOOLS,
        lc_middleware=[lc_mw.ToolErrorMiddleware(aon_error=aon_error)],
        al_middleware=[al_mw.ToolErrorMiddleware(aon_error=aon_error)],
    )
    expected = outcome(lc, use_async=True)
    assert outcome(al, use_async=True) == expected
    assert expected["messages"][-2]["content"] == "async: c3 KeyError"
    lc, al = agents(
        REPLIES,
        TOOLS,
        lc_middleware=[lc_mw.ToolErrorMiddleware(aon_error=aon_error)],
        al_middleware=[al_mw.ToolErrorMiddleware(aon_error=aon_error)],
    )
    expected = outcome(lc)
    assert outcome(al) == expected
    assert expected[0] == "RuntimeError"
