"""Hooks a handler does not override cost nothing; overridden async hooks still run, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from actloop import AgentExecutor
from actloop.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from actloop.messages import AIMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool

PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


@tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


def _executor() -> AgentExecutor:
    """Three steps, one tool call each, then a final answer."""
    replies: list[Any] = [
        AIMessage("", tool_calls=[{"name": "double", "args": {"n": n}, "id": f"c{n}"}])
        for n in (1, 2, 3)
    ]
    model = ScriptedChatModel([*replies, "done"])
    agent = create_tool_calling_agent(model, [double], PROMPT)
    return AgentExecutor(agent=agent, tools=[double], return_intermediate_steps=True)


def _observations(result: dict[str, Any]) -> list[Any]:
    return [obs for _, obs in result["intermediate_steps"]]


@pytest.fixture
def loops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the asyncio entry points called (`run`, `new_event_loop`) during the test."""
    calls: list[str] = []

    def counting(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(asyncio, "run", counting("run", asyncio.run))
    monkeypatch.setattr(
        asyncio, "new_event_loop", counting("new_event_loop", asyncio.new_event_loop)
    )
    return calls


class Idle(AsyncCallbackHandler):
    """Overrides nothing: every hook is AsyncCallbackHandler's coroutine no-op."""


class ToolEnds(AsyncCallbackHandler):
    """Overrides only `on_tool_end`, with a coroutine."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    async def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        await asyncio.sleep(0)
        self.seen.append(("tool_end", output))


class Events(AsyncCallbackHandler):
    """Overrides the agent and tool hooks, to check the order across events."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    async def on_agent_action(self, action: Any, **kwargs: Any) -> None:
        self.seen.append(("action", action.tool_input))

    async def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.seen.append(("tool_end", output))

    async def on_agent_finish(self, finish: Any, **kwargs: Any) -> None:
        self.seen.append(("finish", finish.return_values["output"]))


EXPECTED_EVENTS = [
    ("action", {"n": 1}),
    ("tool_end", 2),
    ("action", {"n": 2}),
    ("tool_end", 4),
    ("action", {"n": 3}),
    ("tool_end", 6),
    ("finish", "done"),
]


def test_a_handler_overriding_nothing_starts_no_event_loop(loops: list[str]) -> None:
    plain = _executor().invoke({"input": "q"})
    assert loops == []
    with_handler = _executor().invoke({"input": "q"}, {"callbacks": [Idle()]})
    assert loops == []
    assert with_handler == plain
    assert with_handler["output"] == "done"
    assert _observations(with_handler) == [2, 4, 6]


def test_a_handler_overriding_nothing_in_stream_starts_no_event_loop(loops: list[str]) -> None:
    plain = list(_executor().stream({"input": "q"}))
    with_handler = list(_executor().stream({"input": "q"}, {"callbacks": [Idle(), Idle()]}))
    assert loops == []
    assert with_handler == plain


def test_an_overridden_async_hook_runs_on_the_sync_path_for_every_event(
    loops: list[str],
) -> None:
    handler = ToolEnds()
    result = _executor().invoke({"input": "q"}, {"callbacks": [Idle(), handler]})
    assert _observations(result) == [2, 4, 6]
    assert handler.seen == [("tool_end", 2), ("tool_end", 4), ("tool_end", 6)]
    assert loops == ["run", "run", "run"]  # one loop per tool end, as before; none for the rest


async def test_an_overridden_async_hook_is_awaited_on_the_async_path() -> None:
    handler = ToolEnds()
    result = await _executor().ainvoke({"input": "q"}, {"callbacks": [Idle(), handler]})
    assert _observations(result) == [2, 4, 6]
    assert handler.seen == [("tool_end", 2), ("tool_end", 4), ("tool_end", 6)]


def test_overridden_async_hooks_keep_their_order_on_invoke() -> None:
    handler = Events()
    _executor().invoke({"input": "q"}, {"callbacks": [handler]})
    assert handler.seen == EXPECTED_EVENTS


async def test_overridden_async_hooks_keep_their_order_on_ainvoke() -> None:
    handler = Events()
    await _executor().ainvoke({"input": "q"}, {"callbacks": [handler]})
    assert handler.seen == EXPECTED_EVENTS


def test_a_hook_set_on_the_instance_is_called(loops: list[str]) -> None:
    seen: list[Any] = []

    async def on_tool_end(output: Any, **kwargs: Any) -> None:
        seen.append(output)

    handler = Idle()
    handler.on_tool_end = on_tool_end  # type: ignore[method-assign]
    _executor().invoke({"input": "q"}, {"callbacks": [handler]})
    assert seen == [2, 4, 6]
    assert loops == ["run", "run", "run"]


def test_sync_handlers_still_receive_their_overridden_hooks() -> None:
    seen: list[Any] = []

    class Sync(BaseCallbackHandler):
        def on_tool_end(self, output: Any, **kwargs: Any) -> None:
            seen.append(output)

    result = _executor().invoke({"input": "q"}, {"callbacks": [Sync(), Idle()]})
    assert seen == [2, 4, 6]
    assert result["output"] == "done"
