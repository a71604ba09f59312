"""OpenAI Agents SDK side: ``Agent`` + ``Runner`` with a minimal custom ``Model``.

The SDK has no model-free agent: the loop workload uses the scripted model (closest equivalent).
The model derives the step from the input length, so one agent serves concurrent runs. Tracing
is disabled (no network). ``Runner.run_sync`` is the sync path (it drives an event loop inside).
Streaming uses the SDK's own ``agents.testing.ScriptedModel`` (it synthesizes stream events).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.usage import Usage

from workloads.common import (
    CALLS,
    HUNG_LIMIT,
    HUNG_SLEEP,
    SLOW_TOOL_SECONDS,
    SYSTEM_PROMPT,
    expect,
    now,
)

set_tracing_disabled(True)

UNSUPPORTED: dict[str, str] = {}
NOTES = {
    "loop": "scripted custom Model (no model-free agent in the SDK)",
    "hung": "no run deadline; closest is function_tool(timeout=0.5) (async tools only): the model "
    "is told it timed out; sync tools cannot have a timeout",
    "stream": "Runner.run_streamed(): first 'tool_called' run item event",
}


def _noop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


async def _anoop(x: str) -> str:
    """Does nothing and returns ok."""
    return CALLS.hit()


NOOP = function_tool(_noop, name_override="noop")
ANOOP = function_tool(_anoop, name_override="noop")


class StepModel(Model):
    """Answers ``script(step, input)`` where step = number of tool results so far."""

    def __init__(self, script: Any) -> None:
        self.script = script

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        k = 0 if isinstance(input, str) else (len(input) - 1) // 2
        return ModelResponse(
            output=self.script(k, input), usage=Usage(requests=1), response_id=None
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the streaming workload uses agents.testing.ScriptedModel")


def _loop_script(n: int, final: str, first: str = "noop") -> Any:
    def script(k: int, _input: Any) -> list[Any]:
        if k >= n:
            return [assistant_message(final)]
        return [function_call(first if k == 0 else "noop", {"x": "x"}, call_id=f"c{k}")]

    return script


def _agent(script: Any, tools: list[Any], **kw: Any) -> Agent[Any]:
    return Agent(name="bench", model=StepModel(script), tools=tools, **kw)


def loop_sync(n: int) -> float:
    agent = _agent(_loop_script(n, "done"), [NOOP])
    CALLS.n = 0
    t0 = now()
    out = Runner.run_sync(agent, "q", max_turns=n + 2)
    dt = now() - t0
    expect(out.final_output == "done" and CALLS.n == n, f"{out.final_output!r}, {CALLS.n} calls")
    return dt


async def loop_async(n: int, tool: Any = ANOOP) -> float:
    agent = _agent(_loop_script(n, "done"), [tool])
    CALLS.n = 0
    t0 = now()
    out = await Runner.run(agent, "q", max_turns=n + 2)
    dt = now() - t0
    expect(out.final_output == "done" and CALLS.n == n, f"{out.final_output!r}, {CALLS.n} calls")
    return dt


async def loop_async_synctool(n: int) -> float:
    return await loop_async(n, NOOP)


def agent_sync(n: int) -> float:
    agent = _agent(_loop_script(n, "final answer"), [NOOP], instructions=SYSTEM_PROMPT)
    CALLS.n = 0
    t0 = now()
    out = Runner.run_sync(agent, "hi", max_turns=n + 2)
    dt = now() - t0
    expect(out.final_output == "final answer" and CALLS.n == n, f"{out.final_output!r}")
    return dt


async def agent_async(n: int) -> float:
    agent = _agent(_loop_script(n, "final answer"), [ANOOP], instructions=SYSTEM_PROMPT)
    CALLS.n = 0
    t0 = now()
    out = await Runner.run(agent, "hi", max_turns=n + 2)
    dt = now() - t0
    expect(out.final_output == "final answer" and CALLS.n == n, f"{out.final_output!r}")
    return dt


async def stream_first(n: int) -> float:
    steps: list[Any] = [[function_call("noop", {"x": "x"}, call_id=f"c{k}")] for k in range(n)]
    steps.append([assistant_message("final answer")])
    agent = Agent(
        name="bench", model=ScriptedModel(steps), tools=[ANOOP], instructions=SYSTEM_PROMPT
    )
    t0 = now()
    dt = None
    result = Runner.run_streamed(agent, "hi", max_turns=n + 2)
    async for ev in result.stream_events():
        if dt is None and ev.type == "run_item_stream_event" and ev.name == "tool_called":
            dt = now() - t0
    expect(dt is not None and result.final_output == "final answer", repr(result.final_output))
    return dt or 0.0


def _slow_tools(is_async: bool) -> list[Any]:
    def make(name: str) -> Any:
        def slow(x: str) -> str:
            """Takes one second."""
            time.sleep(SLOW_TOOL_SECONDS)
            return name

        async def aslow(x: str) -> str:
            """Takes one second."""
            await asyncio.sleep(SLOW_TOOL_SECONDS)
            return name

        return function_tool(aslow if is_async else slow, name_override=name)

    return [make(n) for n in ("slow_a", "slow_b", "slow_c")]


def _parallel_agent(is_async: bool) -> Agent[Any]:
    def script(k: int, _input: Any) -> list[Any]:
        if k >= 1:
            return [assistant_message("done")]
        return [
            function_call(n, {"x": "x"}, call_id=f"c{n}") for n in ("slow_a", "slow_b", "slow_c")
        ]

    return _agent(script, _slow_tools(is_async))


def parallel_sync() -> float:
    agent = _parallel_agent(False)
    t0 = now()
    out = Runner.run_sync(agent, "hi")
    dt = now() - t0
    expect(out.final_output == "done", repr(out.final_output))
    return dt


async def parallel_async() -> float:
    agent = _parallel_agent(True)
    t0 = now()
    out = await Runner.run(agent, "hi")
    dt = now() - t0
    expect(out.final_output == "done", repr(out.final_output))
    return dt


def _hang(x: str) -> str:
    """Never returns."""
    time.sleep(HUNG_SLEEP)
    return "late"


async def _ahang(x: str) -> str:
    """Never returns."""
    await asyncio.sleep(HUNG_SLEEP)
    return "late"


def _hung_agent(is_async: bool) -> Agent[Any]:
    if is_async:
        hang = function_tool(_ahang, name_override="hang", timeout=HUNG_LIMIT)
    else:  # "timeout_seconds is only supported for async @function_tool handlers"
        hang = function_tool(_hang, name_override="hang")
    return _agent(_loop_script(1, "done", first="hang"), [hang, ANOOP if is_async else NOOP])


def hung_sync() -> tuple[float, str]:
    t0 = now()
    try:
        out = Runner.run_sync(_hung_agent(False), "q")
        return now() - t0, f"output {out.final_output!r} (tool timeout)"
    except Exception as e:
        return now() - t0, f"raises {type(e).__name__}: {e}"


async def hung_async() -> tuple[float, str]:
    t0 = now()
    try:
        out = await Runner.run(_hung_agent(True), "q")
        return now() - t0, f"output {out.final_output!r} (tool timeout)"
    except Exception as e:
        return now() - t0, f"raises {type(e).__name__}: {e}"


def mem_case(kind: str) -> Any:
    def build() -> Any:
        final = "done" if kind == "loop" else "final answer"
        kw = {} if kind == "loop" else {"instructions": SYSTEM_PROMPT}
        agent = _agent(_loop_script(20, final), [NOOP], **kw)

        def run() -> None:
            out = Runner.run_sync(agent, "q", max_turns=22)
            expect(out.final_output == final, repr(out.final_output))

        return run

    return build


async def many_async(count: int, steps: int) -> dict[str, Any]:
    def script(k: int, inp: Any) -> list[Any]:
        if k >= steps:
            return [assistant_message(f"done-{inp[0]['content']}")]
        return [function_call("noop", {"x": "x"}, call_id=f"c{k}")]

    agent = _agent(script, [ANOOP])
    CALLS.n = 0
    t0 = now()
    outs = await asyncio.gather(
        *(Runner.run(agent, str(i), max_turns=steps + 2) for i in range(count))
    )
    dt = now() - t0
    bad = sum(1 for i, o in enumerate(outs) if o.final_output != f"done-{i}")
    expect(bad == 0 and CALLS.n == count * steps, f"{bad} wrong outputs, {CALLS.n} tool calls")
    return {"seconds": dt, "checked": len(outs)}
