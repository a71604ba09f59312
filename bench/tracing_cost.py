"""What tracing costs per step: the same runs with `actloop.tracing` off, on, and off again.

    .venv/bin/python bench/tracing_cost.py [--json]

Two runs, each timed 15 times with the settings interleaved; µs per step, best of 15 (on a
shared machine the minimum is the work, the rest is waiting for a core):
- loop: a scripted agent (no model) calling a no-op tool 1,000 times: one tool span per step;
- agent: `prompt | scripted chat model | parser` calling a tool 20 times: a chat and a tool span
  per step.
"on" is the OpenTelemetry SDK with a BatchSpanProcessor and an exporter that drops the spans, so
the number is what actloop and the SDK spend making spans, not the network. "off" has never been
instrumented; "off again" is after `uninstrument()`; "do-nothing handler" is a global handler that
listens and does nothing: what the callbacks themselves cost once anything listens. Also: the cost
of the callback check that "off" adds to every run and model/tool call (`configure(None)`), in ns.
"""

from __future__ import annotations

import gc
import json
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Tool
from actloop.callbacks import BaseCallbackHandler
from actloop.callbacks._manager import add_global_handler, configure, remove_global_handler
from actloop.messages import AIMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tracing import instrument, uninstrument

LOOP_STEPS, AGENT_STEPS, REPEATS = 1000, 20, 15
NOOP = Tool(name="noop", func=lambda text: "ok", description="does nothing")


class Dropped(SpanExporter):
    """Counts the spans and sends them nowhere."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS


class Loop(BaseSingleActionAgent):
    """Calls the no-op tool LOOP_STEPS times, then finishes."""

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        if len(intermediate_steps) < LOOP_STEPS:
            return AgentAction("noop", "x", "")
        return AgentFinish({"output": "done"}, "")


def loop_run() -> None:
    AgentExecutor(agent=Loop(), tools=[NOOP], max_iterations=None).invoke({"input": "q"})


def agent_run() -> None:
    calls = [{"name": "noop", "args": {"__arg1": "x"}, "id": f"c{i}"} for i in range(AGENT_STEPS)]
    replies: list[Any] = [AIMessage("", tool_calls=[c]) for c in calls] + ["done"]
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
    )
    agent = create_tool_calling_agent(ScriptedChatModel(replies), [NOOP], prompt)
    AgentExecutor(agent=agent, tools=[NOOP], max_iterations=None).invoke({"input": "q"})


def timed(fn: Callable[[], None]) -> float:
    gc.collect()  # garbage left by an earlier run is not this run's cost
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Listening(BaseCallbackHandler):
    """A handler that listens to every run and does nothing: the callbacks' own share of "on"."""

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        pass


def measure(fn: Callable[[], None], steps: int, provider: TracerProvider) -> dict[str, float]:
    """Best µs per step off, with a do-nothing global handler, on, and off again; the four
    alternate in every repetition."""
    times: dict[str, list[float]] = {"off": [], "handler": [], "on": [], "off_again": []}
    listening = Listening()
    fn()  # warm-up: imports, caches
    for _ in range(REPEATS):
        times["off"].append(timed(fn))
        add_global_handler(listening)
        times["handler"].append(timed(fn))
        remove_global_handler(listening)
        instrument(tracer_provider=provider)
        times["on"].append(timed(fn))
        uninstrument()
        provider.force_flush()  # the batch exporter's thread is idle while the next run is timed
        times["off_again"].append(timed(fn))
    return {k: min(v) / steps * 1e6 for k, v in times.items()}


def main() -> None:
    exporter = Dropped()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=1 << 16))
    check_ns = min(timeit.repeat(lambda: configure(None), number=100_000, repeat=5)) / 1e5 * 1e9
    result = {
        "loop": measure(loop_run, LOOP_STEPS, provider),
        "agent": measure(agent_run, AGENT_STEPS, provider),
        "check_ns": check_ns,
    }
    provider.shutdown()
    result["spans"] = exporter.count
    if "--json" in sys.argv:
        print(json.dumps(result))
        return
    for name, steps in (("loop", LOOP_STEPS), ("agent", AGENT_STEPS)):
        v = result[name]
        print(
            f"{name:<5} ({steps} steps) us/step: off {v['off']:6.1f}, do-nothing handler "
            f"{v['handler']:6.1f}, on {v['on']:6.1f} (+{v['on'] - v['off']:.1f}), off again "
            f"{v['off_again']:6.1f}"
        )
    print(f"configure(None) with tracing off: {check_ns:.0f} ns; spans exported: {exporter.count}")


if __name__ == "__main__":
    main()
