"""Sync tools and plans on daemon workers run in a copy of the caller's contextvars context."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from actloop import AgentExecutor
from actloop.agents import AgentAction, ToolAgentAction
from actloop.messages import AIMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedAgent, ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import BaseTool, tool
from support.executor import finish, make_tool

REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="unset")
PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


@pytest.fixture
def caller() -> Iterator[str]:
    """The caller's value of REQUEST for the test, reset afterwards."""
    token = REQUEST.set("caller")
    yield "caller"
    REQUEST.reset(token)


@tool
def probe(label: str) -> str:
    """Report the request seen by this sync tool and the thread it ran on."""
    on_worker = threading.current_thread().name == "actloop-worker"
    return f"{label}:{REQUEST.get()}:{'worker' if on_worker else 'caller'}"


@tool
def overwrite(value: str) -> str:
    """Set the request inside the tool, then report it."""
    REQUEST.set(value)
    return REQUEST.get()


def _call(name: str, args: dict[str, Any], id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": id}


def _executor(calls: list[dict[str, Any]], tools: list[BaseTool], **kwargs: Any) -> AgentExecutor:
    model = ScriptedChatModel([AIMessage("", tool_calls=calls), "done"])
    agent = create_tool_calling_agent(model, tools, PROMPT)
    return AgentExecutor(agent=agent, tools=tools, return_intermediate_steps=True, **kwargs)


def _observations(result: dict[str, Any]) -> list[Any]:
    return [obs for _, obs in result["intermediate_steps"]]


async def test_one_sync_tool_on_the_async_path_sees_the_caller_value(caller: str) -> None:
    executor = _executor([_call("probe", {"label": "a"}, "c1")], [probe])
    result = await executor.ainvoke({"input": "q"})
    assert _observations(result) == ["a:caller:worker"]
    assert result["output"] == "done"


def test_parallel_sync_tools_on_the_sync_path_see_the_caller_value(caller: str) -> None:
    calls = [_call("probe", {"label": label}, f"c{label}") for label in "abc"]
    result = _executor(calls, [probe]).invoke({"input": "q"})
    assert _observations(result) == ["a:caller:worker", "b:caller:worker", "c:caller:worker"]


def test_parallel_sync_tools_in_stream_see_the_caller_value(caller: str) -> None:
    calls = [_call("probe", {"label": label}, f"c{label}") for label in "ab"]
    chunks = list(_executor(calls, [probe]).stream({"input": "q"}))
    assert [step.observation for chunk in chunks for step in chunk.get("steps", [])] == [
        "a:caller:worker",
        "b:caller:worker",
    ]
    assert chunks[-1]["output"] == "done"


def test_a_tool_under_a_deadline_sees_the_caller_value(caller: str) -> None:
    executor = _executor([_call("probe", {"label": "a"}, "c1")], [probe], max_execution_time=30)
    assert _observations(executor.invoke({"input": "q"})) == ["a:caller:worker"]


async def test_a_tool_under_a_deadline_on_the_async_path_sees_the_caller_value(
    caller: str,
) -> None:
    executor = _executor([_call("probe", {"label": "a"}, "c1")], [probe], max_execution_time=30)
    assert _observations(await executor.ainvoke({"input": "q"})) == ["a:caller:worker"]


def test_a_plan_under_a_deadline_sees_the_caller_value(caller: str) -> None:
    seen: list[str] = []

    class Recording(ScriptedAgent):
        def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
            seen.append(REQUEST.get())
            return super().plan(intermediate_steps, callbacks, **kwargs)

    action = AgentAction("search", "x", "")
    search = make_tool("search", lambda q: f"{q}:{REQUEST.get()}")
    agent = Recording([action, finish("ok")])
    executor = AgentExecutor(agent=agent, tools=[search], max_execution_time=30)
    assert executor.invoke({"input": "q"}) == {"input": "q", "output": "ok"}
    assert seen == ["caller", "caller"]


def test_a_var_set_by_parallel_tools_does_not_leak_back(caller: str) -> None:
    calls = [_call("overwrite", {"value": "one"}, "c1"), _call("overwrite", {"value": "two"}, "c2")]
    result = _executor(calls, [overwrite]).invoke({"input": "q"})
    assert _observations(result) == ["one", "two"]
    assert REQUEST.get() == "caller"


def test_a_var_set_under_a_deadline_does_not_leak_back(caller: str) -> None:
    calls = [_call("overwrite", {"value": "one"}, "c1")]
    executor = _executor(calls, [overwrite], max_execution_time=30)
    assert _observations(executor.invoke({"input": "q"})) == ["one"]
    assert REQUEST.get() == "caller"


def test_a_var_set_by_one_inline_sync_tool_does_not_leak_back(caller: str) -> None:
    # one call and no deadline: the tool runs on the caller's thread, in a copy of its context
    calls = [_call("overwrite", {"value": "one"}, "c1")]
    result = _executor(calls, [overwrite]).invoke({"input": "q"})
    assert _observations(result) == ["one"]
    assert REQUEST.get() == "caller"


async def test_a_var_set_by_a_sync_tool_on_the_async_path_does_not_leak_back(caller: str) -> None:
    calls = [_call("overwrite", {"value": "one"}, "c1")]
    result = await _executor(calls, [overwrite]).ainvoke({"input": "q"})
    assert _observations(result) == ["one"]
    assert REQUEST.get() == "caller"


def test_a_later_step_sees_the_caller_value_not_an_earlier_tools(caller: str) -> None:
    first = AIMessage("", tool_calls=[_call("overwrite", {"value": "one"}, "c1")])
    second = AIMessage(
        "",
        tool_calls=[_call("probe", {"label": "a"}, "c2"), _call("probe", {"label": "b"}, "c3")],
    )
    model = ScriptedChatModel([first, second, "done"])
    agent = create_tool_calling_agent(model, [overwrite, probe], PROMPT)
    executor = AgentExecutor(
        agent=agent,
        tools=[overwrite, probe],
        return_intermediate_steps=True,
        max_execution_time=30,
    )
    result = executor.invoke({"input": "q"})
    assert _observations(result) == ["one", "a:caller:worker", "b:caller:worker"]
    assert [type(a) for a, _ in result["intermediate_steps"]] == [ToolAgentAction] * 3
    assert REQUEST.get() == "caller"


def test_a_var_set_by_a_tool_does_not_leak_into_later_tools_on_the_same_workers() -> None:
    first = AIMessage(
        "",
        tool_calls=[_call("overwrite", {"value": v}, f"c{v}") for v in ("one", "two")],
    )
    second = AIMessage("", tool_calls=[_call("probe", {"label": x}, f"c{x}") for x in "ab"])
    model = ScriptedChatModel([first, second, "done"])
    agent = create_tool_calling_agent(model, [overwrite, probe], PROMPT)
    executor = AgentExecutor(agent=agent, tools=[overwrite, probe], return_intermediate_steps=True)
    result = executor.invoke({"input": "q"})
    assert _observations(result) == ["one", "two", "a:unset:worker", "b:unset:worker"]
    assert REQUEST.get() == "unset"
