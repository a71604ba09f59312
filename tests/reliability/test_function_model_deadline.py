"""Issue 29, item 11 (first part): a `FunctionChatModel` whose `fn` is a blocking sync function
keeps the run's deadline on the async path too (`ainvoke`, `astream`, `astream_events`, `abatch`),
as `invoke` does: the sync `fn` runs on a worker, which the deadline abandons.

These failed on the code before the fix (`ainvoke` returned the late answer after the whole
hang). The hung calls wait on an event that the test sets when it ends.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from actloop import AgentExecutor
from actloop.messages import BaseMessage
from actloop.react import create_react_agent
from actloop.testing import FunctionChatModel

from ._support import HANG, LIVENESS, REACT_TEMPLATE, STOPPED


def blocking_executor(release: threading.Event) -> AgentExecutor:
    def fn(messages: list[BaseMessage]) -> str:
        release.wait(HANG)  # blocks its thread, as `time.sleep` would
        return "Final Answer: too late"

    agent = create_react_agent(FunctionChatModel(fn), [], REACT_TEMPLATE)
    return AgentExecutor(agent=agent, tools=[], max_execution_time=0.5)


async def _astream(executor: AgentExecutor) -> Any:
    return [chunk async for chunk in executor.astream({"input": "q"})][-1]


async def _aevents(executor: AgentExecutor) -> Any:
    events = [e async for e in executor.astream_events({"input": "q"}, version="v2")]
    assert (events[-1]["event"], events[-1]["name"]) == ("on_chain_end", "AgentExecutor")
    return events[-1]["data"]["output"]


async def _abatch(executor: AgentExecutor) -> Any:
    results = await executor.abatch([{"input": "q"}, {"input": "r"}])
    assert results[0]["output"] == STOPPED
    return results[1]


@pytest.mark.parametrize("call", ["ainvoke", "astream", "astream_events", "abatch"])
def test_blocking_function_model_keeps_the_async_deadline(
    call: str, release: threading.Event
) -> None:
    executor = blocking_executor(release)
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


def test_async_function_model_still_runs_on_the_event_loop() -> None:
    """An async `fn` is awaited on the caller's loop (not a worker); a sync one returning an
    awaitable is awaited there too."""
    seen: list[bool] = []

    async def afn(messages: list[BaseMessage]) -> str:
        seen.append(threading.current_thread() is threading.main_thread())
        return "hello"

    def sync_returning_awaitable(messages: list[BaseMessage]) -> Any:
        return afn(messages)

    async def main() -> list[str]:
        first = await FunctionChatModel(afn).ainvoke("hi")
        second = await FunctionChatModel(sync_returning_awaitable).ainvoke("hi")
        return [str(first.content), str(second.content)]

    assert asyncio.run(main()) == ["hello", "hello"]
    assert seen == [True, True]
