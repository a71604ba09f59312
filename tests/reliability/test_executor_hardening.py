"""Hardening of the executor (issue 13): deadlines cover every call, errors keep the steps, and
approval never fails open.

Each test here failed on the code before the fix (see the closing note of issue 13). Hung calls
wait on an event that the test sets when it ends, so no worker stays blocked after it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish, ConfigurationError, Tool
from actloop.callbacks import BaseCallbackHandler
from actloop.chat_models import BaseChatModel
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage, BaseMessage
from actloop.react import create_react_agent
from actloop.testing import FunctionChatModel, ScriptedAgent, ScriptedMultiActionAgent

from ._support import HANG, LIVENESS, REACT_TEMPLATE, STOPPED

ACTION = "Thought: look it up\nAction: echo\nAction Input: x"


def echo_tool() -> Tool:
    return Tool(name="echo", func=lambda q: f"echo {q}", description="echo")


# -- item 2: early_stopping_method="generate" obeys the deadline ------------------------------


def test_generate_stop_call_obeys_the_deadline_sync(release: threading.Event) -> None:
    replies = iter([ACTION])

    def model(messages: list[BaseMessage]) -> str:
        reply = next(replies, None)
        if reply is None:  # the extra "generate" call hangs
            release.wait(HANG)
            return "Final Answer: too late"
        return reply

    llm = FunctionChatModel(model)
    executor = AgentExecutor(
        agent=create_react_agent(llm, [echo_tool()], REACT_TEMPLATE),
        tools=[echo_tool()],
        max_iterations=1,
        max_execution_time=1.0,
        early_stopping_method="generate",
    )
    start = time.monotonic()
    result = executor.invoke({"input": "q"})
    assert time.monotonic() - start < LIVENESS
    assert result["output"] == STOPPED
    assert len(llm.calls) == 2


def test_generate_stop_call_obeys_the_deadline_async(release: threading.Event) -> None:
    calls: list[int] = []

    async def model(messages: list[BaseMessage]) -> str:
        calls.append(1)
        if len(calls) == 1:
            return ACTION
        await asyncio.sleep(HANG)
        return "Final Answer: too late"

    executor = AgentExecutor(
        agent=create_react_agent(FunctionChatModel(model), [echo_tool()], REACT_TEMPLATE),
        tools=[echo_tool()],
        max_iterations=1,
        max_execution_time=1.0,
        early_stopping_method="generate",
    )

    async def main() -> tuple[float, dict[str, Any]]:
        start = time.monotonic()
        result = await executor.ainvoke({"input": "q"})
        return time.monotonic() - start, result

    took, result = asyncio.run(main())
    assert took < LIVENESS
    assert result["output"] == STOPPED
    assert calls == [1, 1]


def test_generate_after_a_time_limit_makes_no_model_call() -> None:
    calls: list[int] = []

    def model(messages: list[BaseMessage]) -> str:
        calls.append(1)
        time.sleep(0.3)
        return ACTION

    executor = AgentExecutor(
        agent=create_react_agent(FunctionChatModel(model), [echo_tool()], REACT_TEMPLATE),
        tools=[echo_tool()],
        max_execution_time=0.2,
        early_stopping_method="generate",
    )
    assert executor.invoke({"input": "q"})["output"] == STOPPED
    assert calls == [1]


# -- item 10: a deadline too far away to wait for ----------------------------------------------


@pytest.mark.parametrize("limit", [float("inf"), 1e10, 1e300])
def test_huge_deadline_is_no_overflow(limit: float) -> None:
    plans = [
        [AgentAction("echo", "a", ""), AgentAction("echo", "b", "")],
        AgentAction("echo", "c", ""),
        AgentFinish({"output": "done"}, ""),
    ]
    executor = AgentExecutor(
        agent=ScriptedMultiActionAgent(plans * 3),
        tools=[echo_tool()],
        max_execution_time=limit,
        return_intermediate_steps=True,
    )
    expected = [("a", "echo a"), ("b", "echo b"), ("c", "echo c")]
    result = executor.invoke({"input": "q"})
    assert [(a.tool_input, o) for a, o in result["intermediate_steps"]] == expected
    result = asyncio.run(executor.ainvoke({"input": "q"}))
    assert [(a.tool_input, o) for a, o in result["intermediate_steps"]] == expected
    chunks = list(executor.stream({"input": "q"}))
    assert chunks[-1]["output"] == "done"


# -- item 11 and a reused exception: the steps stay on the error ------------------------------


class FailsAtEnd(BaseCallbackHandler):
    raise_error = True

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        if kwargs.get("parent_run_id") is None:
            raise RuntimeError("handler failed at the end")


def test_failing_on_chain_end_handler_keeps_the_steps() -> None:
    plans = [AgentAction("echo", "a", ""), AgentFinish({"output": "done"}, "")]
    executor = AgentExecutor(agent=ScriptedAgent(plans * 2), tools=[echo_tool()])
    config: Any = {"callbacks": [FailsAtEnd()]}
    with pytest.raises(RuntimeError, match="handler failed at the end") as sync_info:
        executor.invoke({"input": "q"}, config)
    with pytest.raises(RuntimeError, match="handler failed at the end") as async_info:
        asyncio.run(executor.ainvoke({"input": "q"}, config))
    for info in (sync_info, async_info):
        steps = info.value.intermediate_steps  # type: ignore[attr-defined]
        assert [(a.tool, a.tool_input, o) for a, o in steps] == [("echo", "a", "echo a")]


def test_reused_exception_reports_only_this_runs_steps() -> None:
    error = RuntimeError("the same instance every time")
    first = AgentExecutor(
        agent=ScriptedAgent([AgentAction("echo", "a", ""), error]), tools=[echo_tool()]
    )
    with pytest.raises(RuntimeError) as info:
        first.invoke({"input": "q"})
    assert len(info.value.intermediate_steps) == 1  # type: ignore[attr-defined]
    second = AgentExecutor(agent=ScriptedAgent([error]), tools=[echo_tool()])
    with pytest.raises(RuntimeError) as info:
        second.invoke({"input": "q"})
    assert info.value.intermediate_steps == []  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError) as info:
        asyncio.run(AgentExecutor(agent=ScriptedAgent([error]), tools=[echo_tool()]).ainvoke({}))
    assert info.value.intermediate_steps == []  # type: ignore[attr-defined]


# -- item 17: approval never fails open ---------------------------------------------------------


def approval_run(store: SqliteCheckpointer | None) -> tuple[AgentExecutor, list[str]]:
    ran: list[str] = []

    def send(q: str) -> str:
        ran.append(q)
        return "sent"

    tool = Tool(name="send", func=send, description="send", requires_approval=True)
    plans = [AgentAction("send", "money", ""), AgentFinish({"output": "done"}, "")]
    return AgentExecutor(agent=ScriptedAgent(plans * 4), tools=[tool], checkpointer=store), ran


def test_approval_tool_without_a_checkpointer_is_refused() -> None:
    executor, ran = approval_run(None)
    message = (
        "tool 'send' has requires_approval=True, and only a durable run can pause for approval; "
        "pass AgentExecutor(..., checkpointer=SqliteCheckpointer(path)) and "
        "config={'configurable': {'thread_id': ...}}, or set requires_approval=False. Nothing ran."
    )
    for call in (
        lambda: executor.invoke({"input": "q"}),
        lambda: asyncio.run(executor.ainvoke({"input": "q"})),
        lambda: list(executor.stream({"input": "q"})),
    ):
        with pytest.raises(ConfigurationError) as info:
            call()
        assert str(info.value) == message
    assert ran == []


def test_approval_tool_without_a_thread_id_is_refused(tmp_path: Path) -> None:
    executor, ran = approval_run(SqliteCheckpointer(tmp_path / "runs.db"))
    with pytest.raises(ConfigurationError, match="pass config=\\{'configurable'"):
        executor.invoke({"input": "q"})
    with pytest.raises(ConfigurationError, match="requires_approval=True"):
        asyncio.run(executor.ainvoke({"input": "q"}, {"configurable": {"user": "x"}}))
    assert ran == []
    paused = executor.invoke({"input": "q"}, {"configurable": {"thread_id": "t"}})
    assert paused["status"] == "paused"
    assert ran == []


# -- item 14: a sync-only model never blocks the event loop --------------------------------------


class SyncOnlyModel(BaseChatModel):
    """A provider with only the sync hook; its second call hangs until released."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release
        self.calls = 0

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        self.calls += 1
        if self.calls == 1:
            return AIMessage(ACTION)
        self.release.wait(HANG)
        return AIMessage("Final Answer: too late")


def sync_model_executor(release: threading.Event) -> AgentExecutor:
    agent = create_react_agent(SyncOnlyModel(release), [echo_tool()], REACT_TEMPLATE)
    return AgentExecutor(agent=agent, tools=[echo_tool()], max_execution_time=0.5)


async def _astream(executor: AgentExecutor) -> Any:
    return [chunk async for chunk in executor.astream({"input": "q"})][-1]


async def _aevents(executor: AgentExecutor) -> Any:
    events = [e async for e in executor.astream_events({"input": "q"}, version="v2")]
    return [e["data"]["chunk"] for e in events if e["event"] == "on_chain_stream"][-1]


async def _abatch(executor: AgentExecutor) -> Any:
    return (await executor.abatch([{"input": "q"}, {"input": "r"}]))[1]


@pytest.mark.parametrize("call", ["ainvoke", "astream", "astream_events", "abatch"])
def test_sync_only_model_keeps_the_async_deadline(call: str, release: threading.Event) -> None:
    executor = sync_model_executor(release)
    run = {
        "ainvoke": lambda: executor.ainvoke({"input": "q"}),
        "astream": lambda: _astream(executor),
        "astream_events": lambda: _aevents(executor),
        "abatch": lambda: _abatch(executor),
    }[call]

    async def main() -> tuple[float, Any]:
        start = time.monotonic()
        result = await run()
        return time.monotonic() - start, result

    took, result = asyncio.run(main())
    assert took < LIVENESS
    assert result["output"] == STOPPED


def test_sync_only_model_can_be_cancelled(release: threading.Event) -> None:
    model = SyncOnlyModel(release)
    model.calls = 1  # the next call hangs

    async def main() -> tuple[float, bool]:
        start = time.monotonic()
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(model.ainvoke("hi"), 0.3)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(_drain(model), 0.3)
        ticker.cancel()
        return time.monotonic() - start, ticks > 10

    took, loop_ran = asyncio.run(main())
    assert took < LIVENESS
    assert loop_ran  # the event loop kept running while the model hung


async def _drain(model: BaseChatModel) -> list[Any]:
    return [chunk async for chunk in model.astream("hi")]
