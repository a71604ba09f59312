"""Shared constants and helpers for the workload modules.

Every library module may define these functions (all optional; missing ones are listed in the
module's ``UNSUPPORTED`` dict with the reason):

- ``loop_sync(n) -> float`` / ``async loop_async(n) -> float``: scripted agent, no model, ``n``
  calls of a no-op tool then finish; returns seconds for the run (construction excluded).
- ``async loop_async_synctool(n) -> float``: the async loop with a sync-only no-op tool.
- ``agent_sync(n)`` / ``async agent_async(n)``: full tool-calling agent with a scripted chat model.
- ``parallel_sync()`` / ``async parallel_async()``: one step calling three 1 s tools.
- ``hung_sync()`` / ``async hung_async()``: a tool that never returns under a 0.5 s limit; returns
  ``(seconds, outcome)``.
- ``stream_first(n) -> float``: seconds from starting a streamed run to its first chunk.
- ``mem_case(kind) -> build``: ``build()`` returns ``run()``, one 20-step run
  (``kind`` = loop|agent).
- ``async many_async(count, steps) -> dict``: ``count`` concurrent runs of ``steps`` steps.
The main import of each library, timed in a fresh process, is in ``workloads.IMPORTS``.
"""

from __future__ import annotations

import time
from typing import Any

SYSTEM_PROMPT = "You are a helpful assistant."
HUNG_LIMIT = 0.5  # max_execution_time for the hung-tool workload
HUNG_SLEEP = 30.0  # how long the "hung" tool sleeps
SLOW_TOOL_SECONDS = 1.0
STOPPED_TEXT = "Agent stopped due to iteration limit or time limit."


class Counter:
    """Counts tool calls so every workload can check that the steps really ran."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def hit(self) -> str:
        self.n += 1
        return "ok"


CALLS = Counter()


def expect(cond: bool, what: str) -> None:
    """Raise if a workload's output is not what the script implies (the harness reports it)."""
    if not cond:
        raise AssertionError(f"wrong result: {what}")


def now() -> float:
    return time.perf_counter()


def unrecorded(scripted: type[Any]) -> type[Any]:
    """A subclass of `scripted` (actloop's `ScriptedChatModel`) without the test double's
    per-call log: a copy of every call's messages and options, O(N^2) over a long run. Real
    models and the references' scripted models (LangChain's `GenericFakeChatModel`) keep none."""

    class Unrecorded(scripted):  # type: ignore[misc,valid-type]
        def _record(self, messages: Any, stop: Any, kwargs: Any) -> None:
            return None

    return Unrecorded
