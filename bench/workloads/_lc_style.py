"""Workloads written once against the LangChain classic API; run on LangChain and on actloop.

``api`` is a namespace holding the classes of one implementation (see ``langchain_ref.py`` and
``actloop_impl.py``), so both sides run exactly the same code.
"""

from __future__ import annotations

import asyncio
import functools
import time
from types import SimpleNamespace
from typing import Any, ClassVar

from workloads.common import (
    CALLS,
    HUNG_LIMIT,
    HUNG_SLEEP,
    SLOW_TOOL_SECONDS,
    SYSTEM_PROMPT,
    expect,
    now,
)

Api = SimpleNamespace


def _noop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


async def _anoop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


def noop_tool(api: Api, with_async: bool = True) -> Any:
    """A no-op tool with a sync and (optionally) an async implementation."""
    return api.StructuredTool.from_function(
        func=_noop,
        coroutine=_anoop if with_async else None,
        name="noop",
        description="Does nothing and returns ok.",
    )


def _hang(x: str) -> str:
    """Never returns (sleeps for a long time)."""
    time.sleep(HUNG_SLEEP)
    return "late"


async def _ahang(x: str) -> str:
    """Never returns (sleeps for a long time)."""
    await asyncio.sleep(HUNG_SLEEP)
    return "late"


def _slow_tools(api: Api, is_async: bool) -> list[Any]:
    def make(name: str) -> Any:
        def slow(x: str) -> str:
            time.sleep(SLOW_TOOL_SECONDS)
            return name

        async def aslow(x: str) -> str:
            await asyncio.sleep(SLOW_TOOL_SECONDS)
            return name

        return api.StructuredTool.from_function(
            func=None if is_async else slow,
            coroutine=aslow if is_async else None,
            name=name,
            description=f"Takes one second ({name}).",
        )

    return [make(n) for n in ("slow_a", "slow_b", "slow_c")]


# ---------------------------------------------------------------- scripted (model-free) agent


def loop_agent(api: Api, n: int, first_tool: str = "noop") -> Any:
    """A BaseSingleActionAgent: ``first_tool``, then ``noop`` until n steps, then finish."""

    class LoopAgent(api.BaseSingleActionAgent):  # type: ignore[misc,name-defined]
        steps: ClassVar[int] = n

        @property
        def input_keys(self) -> list[str]:
            return ["input"]

        def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
            k = len(intermediate_steps)
            if k >= n:
                return api.AgentFinish({"output": f"done-{kwargs['input']}"}, "")
            return api.AgentAction(first_tool if k == 0 else "noop", "x", "")

        async def aplan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
            k = len(intermediate_steps)
            if k >= n:
                return api.AgentFinish({"output": f"done-{kwargs['input']}"}, "")
            return api.AgentAction(first_tool if k == 0 else "noop", "x", "")

    return LoopAgent()


def _loop_executor(api: Api, n: int, with_async: bool = True, **kw: Any) -> Any:
    return api.AgentExecutor(
        agent=loop_agent(api, n), tools=[noop_tool(api, with_async)], max_iterations=None, **kw
    )


def loop_sync(api: Api, n: int) -> float:
    ex = _loop_executor(api, n)
    CALLS.n = 0
    t0 = now()
    out = ex.invoke({"input": "q"})
    dt = now() - t0
    expect(out["output"] == "done-q" and CALLS.n == n, f"{out!r}, {CALLS.n} tool calls")
    return dt


async def loop_async(api: Api, n: int, with_async: bool = True) -> float:
    ex = _loop_executor(api, n, with_async)
    CALLS.n = 0
    t0 = now()
    out = await ex.ainvoke({"input": "q"})
    dt = now() - t0
    expect(out["output"] == "done-q" and CALLS.n == n, f"{out!r}, {CALLS.n} tool calls")
    return dt


# ---------------------------------------------------------------- full tool-calling agent


def _tool_call_msg(api: Api, calls: list[tuple[str, str]]) -> Any:
    return api.AIMessage(
        content="",
        tool_calls=[{"name": name, "args": {"x": "x"}, "id": cid} for name, cid in calls],
    )


def _agent_executor(api: Api, responses: list[Any], tools: list[Any], **kw: Any) -> Any:
    prompt = api.ChatPromptTemplate.from_messages(
        [
            ("system", SYSTEM_PROMPT),
            ("human", "{input}"),
            api.MessagesPlaceholder("agent_scratchpad"),
        ]
    )
    llm = api.make_chat_model(responses)
    agent = api.create_tool_calling_agent(llm, tools, prompt)
    return api.AgentExecutor(agent=agent, tools=tools, max_iterations=None, **kw)


def agent_executor(api: Api, n: int) -> Any:
    responses = [_tool_call_msg(api, [("noop", f"call_{i}")]) for i in range(n)]
    responses.append(api.AIMessage(content="final answer"))
    return _agent_executor(api, responses, [noop_tool(api)])


def agent_sync(api: Api, n: int) -> float:
    ex = agent_executor(api, n)
    CALLS.n = 0
    t0 = now()
    out = ex.invoke({"input": "hi"})
    dt = now() - t0
    expect(out["output"] == "final answer" and CALLS.n == n, f"{out!r}, {CALLS.n} tool calls")
    return dt


async def agent_async(api: Api, n: int) -> float:
    ex = agent_executor(api, n)
    CALLS.n = 0
    t0 = now()
    out = await ex.ainvoke({"input": "hi"})
    dt = now() - t0
    expect(out["output"] == "final answer" and CALLS.n == n, f"{out!r}, {CALLS.n} tool calls")
    return dt


def stream_first(api: Api, n: int) -> float:
    ex = agent_executor(api, n)
    t0 = now()
    it = iter(ex.stream({"input": "hi"}))
    first = next(it)
    dt = now() - t0
    rest = list(it)
    expect("actions" in first, f"first chunk {first!r}")
    expect(rest[-1].get("output") == "final answer", f"last chunk {rest[-1]!r}")
    return dt


# ---------------------------------------------------------------- parallel and hung tools


def _parallel_executor(api: Api, is_async: bool) -> Any:
    responses = [
        _tool_call_msg(api, [("slow_a", "c1"), ("slow_b", "c2"), ("slow_c", "c3")]),
        api.AIMessage(content="done"),
    ]
    return _agent_executor(
        api, responses, _slow_tools(api, is_async), return_intermediate_steps=True
    )


def _check_parallel(out: dict[str, Any]) -> None:
    names = [a.tool for a, _ in out["intermediate_steps"]]
    obs = [o for _, o in out["intermediate_steps"]]
    expect(out["output"] == "done", repr(out))
    expect(names == ["slow_a", "slow_b", "slow_c"] and obs == names, f"steps {names} {obs}")


def parallel_sync(api: Api) -> float:
    ex = _parallel_executor(api, False)
    t0 = now()
    out = ex.invoke({"input": "hi"})
    dt = now() - t0
    _check_parallel(out)
    return dt


async def parallel_async(api: Api) -> float:
    ex = _parallel_executor(api, True)
    t0 = now()
    out = await ex.ainvoke({"input": "hi"})
    dt = now() - t0
    _check_parallel(out)
    return dt


def _hung_executor(api: Api) -> Any:
    hang = api.StructuredTool.from_function(
        func=_hang, coroutine=_ahang, name="hang", description="Never returns."
    )
    return api.AgentExecutor(
        agent=loop_agent(api, 1, first_tool="hang"),
        tools=[hang, noop_tool(api)],
        max_iterations=None,
        max_execution_time=HUNG_LIMIT,
    )


def hung_sync(api: Api) -> tuple[float, str]:
    ex = _hung_executor(api)
    t0 = now()
    out = ex.invoke({"input": "q"})
    return now() - t0, f"output: {out['output']!r}"


async def hung_async(api: Api) -> tuple[float, str]:
    ex = _hung_executor(api)
    t0 = now()
    out = await ex.ainvoke({"input": "q"})
    return now() - t0, f"output: {out['output']!r}"


# ---------------------------------------------------------------- memory and concurrency


def mem_case(api: Api, kind: str) -> Any:
    def build() -> Any:
        ex = _loop_executor(api, 20) if kind == "loop" else agent_executor(api, 20)

        def run() -> None:
            out = ex.invoke({"input": "q"})
            expect(out["output"] in ("done-q", "final answer"), repr(out))

        return run

    return build


async def many_async(api: Api, count: int, steps: int) -> dict[str, Any]:
    ex = _loop_executor(api, steps)
    CALLS.n = 0
    t0 = now()
    outs = await asyncio.gather(*(ex.ainvoke({"input": str(i)}) for i in range(count)))
    dt = now() - t0
    bad = sum(1 for i, o in enumerate(outs) if o["output"] != f"done-{i}")
    expect(bad == 0 and CALLS.n == count * steps, f"{bad} wrong outputs, {CALLS.n} tool calls")
    return {"seconds": dt, "checked": len(outs)}


WORKLOADS = (
    "loop_sync",
    "loop_async",
    "agent_sync",
    "agent_async",
    "stream_first",
    "parallel_sync",
    "parallel_async",
    "hung_sync",
    "hung_async",
    "mem_case",
    "many_async",
)
"""The workloads a LangChain-style library module exposes (each takes the library's API first)."""


def bind_workloads(api: Api) -> dict[str, Any]:
    """This module's workloads with ``api`` filled in, to put in a library module's namespace."""
    bound: dict[str, Any] = {name: functools.partial(globals()[name], api) for name in WORKLOADS}
    bound["loop_async_synctool"] = functools.partial(loop_async, api, with_async=False)
    return bound
