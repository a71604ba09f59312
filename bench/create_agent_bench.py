"""`create_agent` on actloop against LangChain 1.x's `create_agent` (LangGraph), side by side.

Both get the same scripted model (N tool-calling replies, then an answer) and the same no-op
tool; the model and the tool cost nothing, so what is measured is the agent loop itself:

- loop cost: microseconds per step (a model turn and its tool call), from runs of N and 10N steps
  (the difference over the extra steps, so setup cost cancels out);
- full run: milliseconds for a 20-step run, invoke;
- memory: peak bytes allocated by one 20-step run (tracemalloc);
- concurrent: 50 20-step runs with `abatch`/gather, milliseconds for all;
- first chunk: milliseconds from `stream(stream_mode="updates")` to its first chunk.

Usage: python bench/create_agent_bench.py [--steps N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any


def noop(x: int) -> int:
    """Returns its input."""
    return x


def _replies(n: int) -> list[dict[str, Any]]:
    calls = [
        {
            "content": "",
            "id": f"r{i}",
            "tool_calls": [{"name": "noop", "args": {"x": i}, "id": f"c{i}", "type": "tool_call"}],
        }
        for i in range(n)
    ]
    return [*calls, {"content": "done", "id": "rf"}]


def langchain_agent(n: int) -> Any:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    model = Scripted(messages=iter([AIMessage(**r) for r in _replies(n)]))
    return create_agent(model, [tool(noop)])


def actloop_agent(n: int) -> Any:
    from workloads.common import unrecorded

    from actloop.agents import create_agent
    from actloop.messages import AIMessage
    from actloop.testing import ScriptedChatModel
    from actloop.tools import tool

    model = unrecorded(ScriptedChatModel)([AIMessage(**r) for r in _replies(n)])
    return create_agent(model, [tool(noop)])


LIBS: dict[str, Callable[[int], Any]] = {"langchain": langchain_agent, "actloop": actloop_agent}
INPUT = {"messages": [("user", "go")]}
CONFIG = {"recursion_limit": 100_000}


def _timed_run(build: Callable[[int], Any], n: int) -> float:
    agent = build(n)
    start = time.perf_counter()
    agent.invoke(INPUT, CONFIG)
    return time.perf_counter() - start


def loop_cost_us(build: Callable[[int], Any], n: int, repeat: int) -> float:
    small = min(_timed_run(build, n) for _ in range(repeat))
    large = min(_timed_run(build, 10 * n) for _ in range(repeat))
    return (large - small) / (9 * n) * 1e6


def full_run_ms(build: Callable[[int], Any], repeat: int) -> float:
    return statistics.median(_timed_run(build, 20) for _ in range(repeat)) * 1e3


def memory_bytes(build: Callable[[int], Any]) -> int:
    agent = build(20)
    tracemalloc.start()
    agent.invoke(INPUT, CONFIG)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def concurrent_ms(build: Callable[[int], Any], runs: int = 50) -> float:
    agents = [build(20) for _ in range(runs)]

    async def all_runs() -> None:
        await asyncio.gather(*(a.ainvoke(INPUT, CONFIG) for a in agents))

    start = time.perf_counter()
    asyncio.run(all_runs())
    return (time.perf_counter() - start) * 1e3


def first_chunk_ms(build: Callable[[int], Any], repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        agent = build(20)
        start = time.perf_counter()
        stream = agent.stream(INPUT, CONFIG, stream_mode="updates")
        next(iter(stream))
        times.append(time.perf_counter() - start)
        for _ in stream:  # finish the run
            pass
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows: dict[str, dict[str, float]] = {}
    for name, build in LIBS.items():
        rows[name] = {
            "loop cost (us/step)": loop_cost_us(build, args.steps, args.repeat),
            "full run, 20 steps (ms)": full_run_ms(build, args.repeat),
            "memory per 20-step run (KB)": memory_bytes(build) / 1024,
            "50 concurrent runs (ms)": concurrent_ms(build),
            "first chunk (ms)": first_chunk_ms(build, args.repeat),
        }
    print(f"{'create_agent':32} {'langchain 1.x':>14} {'actloop':>10} {'ratio':>7}")
    for metric in rows["actloop"]:
        theirs, ours = rows["langchain"][metric], rows["actloop"][metric]
        print(f"{metric:32} {theirs:14.1f} {ours:10.1f} {theirs / ours:6.1f}x")


if __name__ == "__main__":
    main()
