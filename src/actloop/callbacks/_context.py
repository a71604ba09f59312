"""Handlers attached by context rather than by `callbacks=`: `collect_runs()` (actloop's run
collector) and, when langchain-core is loaded, LangChain's own `collect_runs()` collector, so a
LangChain tracer sees actloop runs as it sees LangChain's."""

from __future__ import annotations

import sys
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from actloop.callbacks._handlers import BaseCallbackHandler

if TYPE_CHECKING:
    from uuid import UUID

__all__ = ["Run", "RunCollectorCallbackHandler", "collect_runs", "context_handlers"]

_collector: ContextVar[RunCollectorCallbackHandler | None] = ContextVar(
    "actloop_run_collector", default=None
)


class Run:
    """One traced run: its id, kind, name, inputs, outputs or error, and its child runs."""

    def __init__(
        self, id: UUID, run_type: str, name: str | None, inputs: Any, parent_run_id: UUID | None
    ) -> None:
        self.id = id
        self.run_type = run_type
        self.name = name
        self.inputs = inputs
        self.parent_run_id = parent_run_id
        self.outputs: Any = None
        self.error: BaseException | None = None
        self.child_runs: list[Run] = []

    def __repr__(self) -> str:
        return f"Run(id={self.id!r}, run_type={self.run_type!r}, name={self.name!r})"


class RunCollectorCallbackHandler(BaseCallbackHandler):
    """Collects the run tree: `traced_runs` holds the root runs, each with its `child_runs`."""

    def __init__(self) -> None:
        self.traced_runs: list[Run] = []
        self._runs: dict[UUID, Run] = {}

    def _start(self, run_type: str, serialized: Any, inputs: Any, kwargs: dict[str, Any]) -> None:
        info: dict[str, Any] = cast("dict[str, Any]", serialized or {})
        name: str | None = kwargs.get("name") or info.get("name")
        run = Run(kwargs["run_id"], run_type, name, inputs, kwargs.get("parent_run_id"))
        self._runs[run.id] = run
        parent = self._runs.get(run.parent_run_id) if run.parent_run_id else None
        (parent.child_runs if parent is not None else self.traced_runs).append(run)

    def _end(self, outputs: Any, kwargs: dict[str, Any]) -> None:
        run = self._runs.get(kwargs["run_id"])
        if run is not None:
            run.outputs = outputs

    def _error(self, error: BaseException, kwargs: dict[str, Any]) -> None:
        run = self._runs.get(kwargs["run_id"])
        if run is not None:
            run.error = error

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self._start(kwargs.get("run_type") or "chain", serialized, inputs, kwargs)

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self._start("llm", serialized, {"messages": messages}, kwargs)

    def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
        self._start("llm", serialized, {"prompts": prompts}, kwargs)

    def on_tool_start(self, serialized: Any, input_str: Any, **kwargs: Any) -> None:
        self._start("tool", serialized, {"input": input_str}, kwargs)

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self._end(outputs, kwargs)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self._end(response, kwargs)

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self._end(output, kwargs)

    def on_chain_error(self, error: BaseException, **kwargs: Any) -> None:
        self._error(error, kwargs)

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        self._error(error, kwargs)

    def on_tool_error(self, error: BaseException, **kwargs: Any) -> None:
        self._error(error, kwargs)


@contextmanager
def collect_runs() -> Generator[RunCollectorCallbackHandler, None, None]:
    """Collect every run started in this context (`collector.traced_runs[0].id`, ...)."""
    collector = RunCollectorCallbackHandler()
    token = _collector.set(collector)
    try:
        yield collector
    finally:
        _collector.reset(token)


def context_handlers() -> list[Any]:
    """The handlers the current context attaches to every run (usually none)."""
    found: list[Any] = []
    ours = _collector.get()
    if ours is not None:
        found.append(ours)
    lc_context = sys.modules.get("langchain_core.tracers.context")
    if lc_context is not None:
        theirs = lc_context.run_collector_var.get()
        if theirs is not None:
            found.append(theirs)
    return found
