"""PydanticAI side: ``Agent`` driven by a ``FunctionModel`` that replays the script.

PydanticAI has no model-free agent: the scripted "model" (an async FunctionModel function) is the
closest equivalent of a scripted agent, so the loop and the full-agent workloads both use it (the
full agent adds the system prompt and returns a plain answer). Usage limits are lifted
(``UsageLimits(request_limit=None)``) so long runs are not cut at 50 requests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import FunctionToolCallEvent, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.usage import UsageLimits

from workloads.common import (
    CALLS,
    HUNG_LIMIT,
    HUNG_SLEEP,
    SLOW_TOOL_SECONDS,
    SYSTEM_PROMPT,
    expect,
    now,
)

UNSUPPORTED: dict[str, str] = {}
NOTES = {
    "loop": "scripted async FunctionModel (no model-free agent in PydanticAI)",
    "hung": "no run deadline; closest is Agent(tool_timeout=0.5): the model is told the tool "
    "timed out",
    "stream": "run_stream_events(): first FunctionToolCallEvent (needs a stream_function)",
}
NO_LIMIT = UsageLimits(request_limit=None)


def noop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


async def anoop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


def _script(n: int, final: str, first: str = "noop") -> Any:
    async def fn(messages: list[Any], info: AgentInfo) -> ModelResponse:
        k = (len(messages) - 1) // 2
        if k >= n:
            return ModelResponse(parts=[TextPart(final)])
        name = first if k == 0 else "noop"
        return ModelResponse(parts=[ToolCallPart(name, {"x": "x"}, tool_call_id=f"c{k}")])

    return fn


def _agent(n: int, is_async: bool, final: str = "done", **kw: Any) -> Agent[None, str]:
    tool = Tool(anoop, name="noop") if is_async else noop
    return Agent(FunctionModel(_script(n, final)), tools=[tool], name="bench", **kw)


def loop_sync(n: int) -> float:
    agent = _agent(n, False)
    CALLS.n = 0
    t0 = now()
    out = agent.run_sync("q", usage_limits=NO_LIMIT)
    dt = now() - t0
    expect(out.output == "done" and CALLS.n == n, f"{out.output!r}, {CALLS.n} tool calls")
    return dt


async def loop_async(n: int, is_async: bool = True) -> float:
    agent = _agent(n, is_async)
    CALLS.n = 0
    t0 = now()
    out = await agent.run("q", usage_limits=NO_LIMIT)
    dt = now() - t0
    expect(out.output == "done" and CALLS.n == n, f"{out.output!r}, {CALLS.n} tool calls")
    return dt


async def loop_async_synctool(n: int) -> float:
    return await loop_async(n, is_async=False)


def agent_sync(n: int) -> float:
    agent = _agent(n, False, "final answer", system_prompt=SYSTEM_PROMPT)
    CALLS.n = 0
    t0 = now()
    out = agent.run_sync("hi", usage_limits=NO_LIMIT)
    dt = now() - t0
    expect(out.output == "final answer" and CALLS.n == n, f"{out.output!r}, {CALLS.n} calls")
    return dt


async def agent_async(n: int) -> float:
    agent = _agent(n, True, "final answer", system_prompt=SYSTEM_PROMPT)
    CALLS.n = 0
    t0 = now()
    out = await agent.run("hi", usage_limits=NO_LIMIT)
    dt = now() - t0
    expect(out.output == "final answer" and CALLS.n == n, f"{out.output!r}, {CALLS.n} calls")
    return dt


async def stream_first(n: int) -> float:
    async def stream_fn(messages: list[Any], info: AgentInfo) -> AsyncIterator[Any]:
        k = (len(messages) - 1) // 2
        if k >= n:
            yield "final answer"
        else:
            yield {0: DeltaToolCall(name="noop", json_args='{"x": "x"}', tool_call_id=f"c{k}")}

    agent = Agent(
        FunctionModel(stream_function=stream_fn),
        tools=[Tool(anoop, name="noop")],
        system_prompt=SYSTEM_PROMPT,
    )
    first = None
    t0 = now()
    dt = 0.0
    async with agent.run_stream_events("hi", usage_limits=NO_LIMIT) as events:
        async for ev in events:
            if first is None and isinstance(ev, FunctionToolCallEvent):
                dt = now() - t0
                first = ev
    expect(first is not None, "no tool call event")
    return dt


def _slow_tools(is_async: bool) -> list[Any]:
    def make(name: str) -> Any:
        def slow(x: str) -> str:
            time.sleep(SLOW_TOOL_SECONDS)
            return name

        async def aslow(x: str) -> str:
            await asyncio.sleep(SLOW_TOOL_SECONDS)
            return name

        f = aslow if is_async else slow
        f.__name__ = name
        f.__doc__ = f"Takes one second ({name})."
        return f

    return [make(n) for n in ("slow_a", "slow_b", "slow_c")]


def _parallel_agent(is_async: bool) -> Agent[None, str]:
    async def fn(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) > 1:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(
            parts=[
                ToolCallPart(n, {"x": "x"}, tool_call_id=f"c{n}")
                for n in ("slow_a", "slow_b", "slow_c")
            ]
        )

    return Agent(FunctionModel(fn), tools=_slow_tools(is_async))


def _check_parallel(out: Any) -> None:
    rets = [p.content for m in out.all_messages() for p in m.parts if p.part_kind == "tool-return"]
    expect(out.output == "done" and rets == ["slow_a", "slow_b", "slow_c"], repr(rets))


def parallel_sync() -> float:
    agent = _parallel_agent(False)
    t0 = now()
    out = agent.run_sync("hi")
    dt = now() - t0
    _check_parallel(out)
    return dt


async def parallel_async() -> float:
    agent = _parallel_agent(True)
    t0 = now()
    out = await agent.run("hi")
    dt = now() - t0
    _check_parallel(out)
    return dt


def hang(x: str) -> str:
    """Never returns."""
    time.sleep(HUNG_SLEEP)
    return "late"


async def ahang(x: str) -> str:
    """Never returns."""
    await asyncio.sleep(HUNG_SLEEP)
    return "late"


def _hung_agent(is_async: bool) -> Agent[None, str]:
    tools = [Tool(ahang, name="hang"), Tool(anoop, name="noop")] if is_async else [hang, noop]
    model = FunctionModel(_script(1, "done", first="hang"))
    return Agent(model, tools=tools, tool_timeout=HUNG_LIMIT)


def hung_sync() -> tuple[float, str]:
    t0 = now()
    try:
        out = _hung_agent(False).run_sync("q")
        return now() - t0, f"output {out.output!r} (tool_timeout)"
    except Exception as e:
        return now() - t0, f"raises {type(e).__name__}"


async def hung_async() -> tuple[float, str]:
    t0 = now()
    try:
        out = await _hung_agent(True).run("q")
        return now() - t0, f"output {out.output!r} (tool_timeout)"
    except Exception as e:
        return now() - t0, f"raises {type(e).__name__}"


def mem_case(kind: str) -> Any:
    def build() -> Any:
        if kind == "loop":
            agent = _agent(20, False)
        else:
            agent = _agent(20, False, "final answer", system_prompt=SYSTEM_PROMPT)

        def run() -> None:
            out = agent.run_sync("q", usage_limits=NO_LIMIT)
            expect(out.output in ("done", "final answer"), repr(out.output))

        return run

    return build


async def many_async(count: int, steps: int) -> dict[str, Any]:
    async def fn(messages: list[Any], info: AgentInfo) -> ModelResponse:
        k = (len(messages) - 1) // 2
        if k >= steps:
            prompt = messages[0].parts[-1].content
            return ModelResponse(parts=[TextPart(f"done-{prompt}")])
        return ModelResponse(parts=[ToolCallPart("noop", {"x": "x"}, tool_call_id=f"c{k}")])

    agent = Agent(FunctionModel(fn), tools=[Tool(anoop, name="noop")])
    CALLS.n = 0
    t0 = now()
    outs = await asyncio.gather(*(agent.run(str(i), usage_limits=NO_LIMIT) for i in range(count)))
    dt = now() - t0
    bad = sum(1 for i, o in enumerate(outs) if o.output != f"done-{i}")
    expect(bad == 0 and CALLS.n == count * steps, f"{bad} wrong outputs, {CALLS.n} tool calls")
    return {"seconds": dt, "checked": len(outs)}
