"""Fault injection: tools raising every exception family, hung tools and models under a deadline,
callback handlers that raise, model errors mid-run, and cancellation on the async path.

Ctrl-C on the sync path is in `test_interrupts.py` (it runs in a subprocess so a stray
KeyboardInterrupt cannot end the test session).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish
from actloop.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from actloop.exceptions import ModelError, ToolException
from actloop.messages import AIMessage, BaseMessage
from actloop.models import (
    ModelConnectionError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.react import REACT_PROMPT, create_react_agent
from actloop.testing import (
    FunctionChatModel,
    ScriptedAgent,
    ScriptedChatModel,
    ScriptedMultiActionAgent,
)
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import Tool, tool

from ._support import LIVENESS, STOPPED


class Boom(Exception):
    """A user-defined error from a tool."""


class BaseBoom(BaseException):
    """A user-defined BaseException (not an Exception) from a tool."""


EXCEPTION_FAMILIES: list[BaseException] = [
    ToolException("tool failed"),
    ValueError("bad value"),
    TypeError("bad type"),
    KeyError("missing"),
    IndexError("out of range"),
    ZeroDivisionError("divided"),
    RuntimeError("runtime"),
    RecursionError("too deep"),
    NotImplementedError("later"),
    OSError("disk"),
    ConnectionError("network"),
    TimeoutError("slow"),
    PermissionError("denied"),
    UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    MemoryError("oom"),
    Boom("custom"),
    ModelError("a nested model failed"),
    StopIteration("stop"),
    KeyboardInterrupt(),
    SystemExit(3),
    BaseBoom("base"),
]
PATHS = ["sync-inline", "sync-parallel", "async-inline", "async-parallel", "sync-deadline"]


async def _run(executor: AgentExecutor, path: str, config: Any = None) -> dict[str, Any]:
    if path.startswith("sync"):
        return executor.invoke({"input": "q"}, config)
    return await executor.ainvoke({"input": "q"}, config)


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        self.events.append(f"tool_error:{type(error).__name__}")

    def on_chain_error(self, error: BaseException, **kw: Any) -> None:
        if kw.get("parent_run_id") is None:
            self.events.append(f"chain_error:{type(error).__name__}")

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        if kw.get("parent_run_id") is None:
            self.events.append("chain_end")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("error", EXCEPTION_FAMILIES, ids=lambda e: type(e).__name__)
def test_tool_exception_families_propagate_with_steps(path: str, error: BaseException) -> None:
    # A plain test: on the async path KeyboardInterrupt and SystemExit leave the event loop (as in
    # any asyncio program), so each async run gets its own `asyncio.run`.

    def fail(q: str) -> str:
        raise error

    ok = Tool(name="ok", func=lambda q: f"ok {q}", description="fine")
    bad = Tool(name="bad", func=fail, description="fails")
    first = AgentAction("ok", "1", "")
    if path.endswith("parallel"):
        step = [AgentAction("ok", "2", ""), AgentAction("bad", "x", "")]
        agent: Any = ScriptedMultiActionAgent([[first], step, AgentFinish({"output": "never"}, "")])
    else:
        agent = ScriptedAgent(
            [first, AgentAction("bad", "x", ""), AgentFinish({"output": "n"}, "")]
        )
    deadline = 60.0 if path == "sync-deadline" else None
    executor = AgentExecutor(agent=agent, tools=[ok, bad], max_execution_time=deadline)
    recorder = Recorder()
    # StopIteration cannot cross a generator or an asyncio future: it arrives as a RuntimeError
    # caused by it, on every path (PEP 479).
    expected = RuntimeError if isinstance(error, StopIteration) else type(error)
    with pytest.raises(expected) as info:
        asyncio.run(_run(executor, path, {"callbacks": [recorder]}))
    assert (info.value.__cause__ if expected is not type(error) else info.value) is error
    steps = info.value.intermediate_steps  # type: ignore[attr-defined]
    assert steps[0] == (first, "ok 1")
    if path.endswith("parallel"):  # the sibling may have finished before the error was seen
        assert steps[1:] in ([], [(AgentAction("ok", "2", ""), "ok 2")])
    else:
        assert steps == [(first, "ok 1")]
    name = type(error).__name__
    if path.startswith("async") and expected is not type(error):
        name = expected.__name__  # the tool's own run already reports the RuntimeError
    assert recorder.events == [f"tool_error:{name}", f"chain_error:{expected.__name__}"]
    del info.value.intermediate_steps  # type: ignore[attr-defined]  # reused across params


@pytest.mark.parametrize("path", ["sync-inline", "async-inline", "sync-parallel"])
@pytest.mark.parametrize(
    ("handler", "observation"),
    [
        (True, "tool failed: q"),
        ("Try again later.", "Try again later."),
        (lambda e: f"handled <{e}>", "handled <tool failed: q>"),
    ],
    ids=["true", "str", "callable"],
)
async def test_handled_tool_errors_become_observations(
    path: str, handler: Any, observation: str
) -> None:

    def fail(q: str) -> str:
        raise ToolException(f"tool failed: {q}")

    bad = Tool(name="bad", func=fail, description="fails", handle_tool_error=handler)
    action = AgentAction("bad", "q", "")
    if path == "sync-parallel":
        agent: Any = ScriptedMultiActionAgent([[action, action], AgentFinish({"output": "ok"}, "")])
        steps = [(action, observation), (action, observation)]
    else:
        agent = ScriptedAgent([action, AgentFinish({"output": "ok"}, "")])
        steps = [(action, observation)]
    executor = AgentExecutor(agent=agent, tools=[bad], return_intermediate_steps=True)
    result = await _run(executor, path)
    assert result == {"input": "q", "output": "ok", "intermediate_steps": steps}


# -- hung tools and models under a deadline ------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_hung_sync_tool_in_a_parallel_step_keeps_finished_siblings(mode: str) -> None:
    forever = threading.Event()  # never set while the run lasts
    hang = Tool(name="hang", func=lambda q: forever.wait(), description="never returns")
    fast = Tool(name="fast", func=lambda q: f"fast {q}", description="quick")
    a1, a2, a3 = (
        AgentAction("fast", "1", ""),
        AgentAction("hang", "2", ""),
        AgentAction("fast", "3", ""),
    )
    agent = ScriptedMultiActionAgent([[a1, a2, a3], AgentFinish({"output": "never"}, "")])
    executor = AgentExecutor(
        agent=agent, tools=[fast, hang], max_execution_time=0.3, return_intermediate_steps=True
    )
    start = time.monotonic()
    try:
        result = await _run(executor, mode)
    finally:
        forever.set()  # let the abandoned worker go idle
    assert time.monotonic() - start < LIVENESS  # the hung call would never return
    assert result == {
        "input": "q",
        "output": "Agent stopped due to max iterations.",
        "intermediate_steps": [(a1, "fast 1"), (a3, "fast 3")],
    }


async def test_hung_async_tool_is_cancelled_at_the_deadline() -> None:
    cancelled: list[str] = []

    @tool
    async def hang(q: str) -> str:
        """Never returns."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(q)
            raise
        return "never"

    agent = ScriptedAgent([AgentAction("hang", {"q": "x"}, ""), AgentFinish({"output": "n"}, "")])
    executor = AgentExecutor(agent=agent, tools=[hang], max_execution_time=0.2)
    result = await executor.ainvoke({"input": "q"})
    assert result["output"] == STOPPED
    await asyncio.sleep(0)
    assert cancelled == ["x"]
    assert asyncio.all_tasks() == {asyncio.current_task()}


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_hung_model_stops_at_the_deadline(mode: str) -> None:
    forever = threading.Event()

    def never(messages: list[BaseMessage]) -> str:
        forever.wait()
        return "Final Answer: too late"

    async def anever(messages: list[BaseMessage]) -> str:
        await asyncio.Event().wait()
        return "Final Answer: too late"

    model = FunctionChatModel(never if mode == "sync" else anever)
    echo = Tool(name="echo", func=lambda q: q, description="echo")
    agent = create_react_agent(model, [echo], REACT_PROMPT)
    executor = AgentExecutor(agent=agent, tools=[echo], max_execution_time=0.3)
    start = time.monotonic()
    try:
        result = await _run(executor, mode)
    finally:
        forever.set()
    assert time.monotonic() - start < LIVENESS  # the hung call would never return
    assert result == {"input": "q", "output": STOPPED}


# -- callback handlers that raise ----------------------------------------------------------

HOOKS = [
    "on_chain_start",
    "on_chain_end",
    "on_agent_action",
    "on_agent_finish",
    "on_tool_start",
    "on_tool_end",
    "on_chat_model_start",
    "on_llm_new_token",
    "on_llm_end",
    "on_text",
]


def _raising_handler(base: type, hooks: list[str], *, is_async: bool, raise_error: bool) -> Any:
    def make(hook: str) -> Any:
        if is_async:

            async def ahook(self: Any, *args: Any, **kwargs: Any) -> None:
                raise RuntimeError(f"handler broke in {hook}")

            return ahook

        def shook(self: Any, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError(f"handler broke in {hook}")

        return shook

    body: dict[str, Any] = {hook: make(hook) for hook in hooks}
    body["raise_error"] = raise_error
    return type("Broken", (base,), body)()


def _react_executor() -> tuple[AgentExecutor, ScriptedChatModel]:
    model = ScriptedChatModel(
        ["Thought: t\nAction: echo\nAction Input: hi", "Thought: done\nFinal Answer: bye"]
    )
    echo = Tool(name="echo", func=lambda q: f"echo {q}", description="echo")
    agent = create_react_agent(model, [echo], REACT_PROMPT)
    return AgentExecutor(agent=agent, tools=[echo], return_intermediate_steps=True), model


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync_handler", "async_handler"])
async def test_a_raising_callback_handler_is_logged_and_skipped(
    mode: str, is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    base = AsyncCallbackHandler if is_async else BaseCallbackHandler
    broken = _raising_handler(base, HOOKS, is_async=is_async, raise_error=False)
    executor, model = _react_executor()
    config: Any = {"callbacks": [broken]}
    with caplog.at_level(logging.WARNING, logger="actloop.callbacks"):
        if mode == "sync":
            result = executor.invoke({"input": "q"}, config)
        elif mode == "async":
            result = await executor.ainvoke({"input": "q"}, config)
        else:
            result = [c async for c in executor.astream({"input": "q"}, config)][-1]
    model.assert_complete()
    assert result["output"] == "bye"
    assert [o for _, o in result["intermediate_steps"]] == ["echo hi"]
    broke = {r.getMessage().split(" callback:")[0] for r in caplog.records}
    assert {"Error in Broken.on_chain_start", "Error in Broken.on_tool_end"} <= broke
    assert "Error in Broken.on_agent_finish" in broke


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    "hook", ["on_chain_start", "on_tool_start", "on_tool_end", "on_agent_action"]
)
async def test_a_handler_with_raise_error_ends_the_run_with_its_error(mode: str, hook: str) -> None:
    broken = _raising_handler(BaseCallbackHandler, [hook], is_async=False, raise_error=True)
    executor, _ = _react_executor()
    with pytest.raises(RuntimeError, match=f"handler broke in {hook}") as info:
        await _run(executor, mode, {"callbacks": [broken]})
    # on_chain_start fails before the run exists, so there are no steps to attach
    assert getattr(info.value, "intermediate_steps", []) == []


# -- model errors mid-run ------------------------------------------------------------------

MODEL_ERRORS: list[Exception] = [
    ConnectionError("connection reset"),
    ModelError("provider failed"),
    ModelConnectionError("cannot connect"),
    RateLimitError("slow down", status_code=429),
    ServerError("bad gateway", status_code=502),
    StreamInterruptedError("stream cut"),
    TimeoutError("read timed out"),
]


def _failing_model(error: Exception, at_call: int, replies: list[Any]) -> FunctionChatModel:
    calls = iter(range(1, 100))

    def reply(messages: list[BaseMessage]) -> Any:
        n = next(calls)
        if n == at_call:
            raise error
        return replies[n - 1]

    return FunctionChatModel(reply)


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
@pytest.mark.parametrize("at_call", [1, 2, 3])
@pytest.mark.parametrize("error", MODEL_ERRORS, ids=lambda e: type(e).__name__)
async def test_model_error_mid_run_react(mode: str, at_call: int, error: Exception) -> None:
    replies = [f"Thought: {i}\nAction: echo\nAction Input: v{i}" for i in range(1, 4)]
    model = _failing_model(error, at_call, replies)
    echo = Tool(name="echo", func=lambda q: f"echo {q}", description="echo")
    executor = AgentExecutor(agent=create_react_agent(model, [echo], REACT_PROMPT), tools=[echo])
    recorder = Recorder()
    config: Any = {"callbacks": [recorder]}
    with pytest.raises(type(error)) as info:
        if mode == "sync":
            executor.invoke({"input": "q"}, config)
        elif mode == "async":
            await executor.ainvoke({"input": "q"}, config)
        elif mode == "stream":
            list(executor.stream({"input": "q"}, config))
        else:
            [c async for c in executor.astream({"input": "q"}, config)]
    assert info.value is error
    steps = info.value.intermediate_steps  # type: ignore[attr-defined]
    assert [(a.tool, a.tool_input, o) for a, o in steps] == [
        ("echo", f"v{i}", f"echo v{i}") for i in range(1, at_call)
    ]
    assert recorder.events == [f"chain_error:{type(error).__name__}"]
    del info.value.intermediate_steps  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_model_error_in_the_generate_call_carries_all_steps(mode: str) -> None:
    call = {"id": "c1", "name": "echo", "args": {"__arg1": "x"}, "type": "tool_call"}
    error = ServerError("overloaded", status_code=503)
    model = _failing_model(error, 2, [AIMessage("", tool_calls=[call])])  # type: ignore[list-item]
    echo = Tool(name="echo", func=lambda q: f"echo {q}", description="echo")
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
    )
    agent = create_tool_calling_agent(model, [echo], prompt)
    executor = AgentExecutor(
        agent=agent, tools=[echo], max_iterations=1, early_stopping_method="generate"
    )
    with pytest.raises(ServerError) as info:
        await _run(executor, mode)
    assert [o for _, o in info.value.intermediate_steps] == ["echo x"]  # type: ignore[attr-defined]


# -- cancellation on the async path --------------------------------------------------------


@pytest.mark.parametrize("parallel", [False, True])
async def test_cancelling_ainvoke_cancels_its_tool_tasks(parallel: bool) -> None:
    started = asyncio.Event()
    cancelled: list[str] = []

    @tool
    async def wait(q: str) -> str:
        """Waits until cancelled."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(q)
            raise
        return "late"

    actions = [AgentAction("wait", {"q": str(i)}, "") for i in range(3 if parallel else 1)]
    agent = ScriptedMultiActionAgent([actions, AgentFinish({"output": "n"}, "")])
    executor = AgentExecutor(agent=agent, tools=[wait])
    task = asyncio.create_task(executor.ainvoke({"input": "q"}))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(3):
        await asyncio.sleep(0)
    assert sorted(cancelled) == [str(i) for i in range(len(actions))]
    model_calls = [len(call.intermediate_steps) for call in agent.calls]
    assert model_calls == [0]  # nothing planned after the cancellation
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_cancelling_ainvoke_while_a_sync_tool_runs_leaves_only_an_idle_worker() -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow(q: str) -> str:
        entered.set()
        release.wait(5)
        finished.set()
        return "done"

    worker_tool = Tool(name="slow", func=slow, description="slow")
    agent = ScriptedAgent([AgentAction("slow", "x", ""), AgentFinish({"output": "n"}, "")])
    task = asyncio.create_task(
        AgentExecutor(agent=agent, tools=[worker_tool]).ainvoke({"input": "q"})
    )
    await asyncio.to_thread(entered.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(agent.calls) == 1  # the agent is not asked again
    release.set()
    assert await asyncio.to_thread(finished.wait, 5)
    await asyncio.sleep(0)
    assert asyncio.all_tasks() == {asyncio.current_task()}


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_model_timeout_error_is_not_taken_for_the_deadline(mode: str) -> None:
    # Bug found here: under max_execution_time the sync driver read any TimeoutError from the
    # plan's future, and the async one any from `asyncio.wait_for`, as "deadline reached", so a
    # provider's read timeout silently ended the run with the stopped response.
    error = TimeoutError("read timed out")
    model = _failing_model(error, 1, [])
    echo = Tool(name="echo", func=lambda q: q, description="echo")
    agent = create_react_agent(model, [echo], REACT_PROMPT)
    executor = AgentExecutor(agent=agent, tools=[echo], max_execution_time=60)
    with pytest.raises(TimeoutError) as info:
        await _run(executor, mode)
    assert info.value is error
    assert info.value.intermediate_steps == []  # type: ignore[attr-defined]
