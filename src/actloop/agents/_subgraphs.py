"""`stream(..., subgraphs=True)`: a sub-agent run inside a tool streams into its parent's stream.

LangGraph gives each chunk as `(namespace, mode, chunk)` (`(namespace, chunk)` for one mode
given as a string): `()` for the streamed graph's own nodes, `("tools:<task id>",)` for a graph
run inside its tools node, one more part a level deeper. Here the streamed run opens an `Outer`
in a context variable; a `create_agent` run that starts while one is open (a tool called it, on
the tools' worker with the run's context) sends its chunks there under a namespace of its own,
and its own sub-runs nest under it. The task ids are uuids (LangGraph's are hashes of its
checkpoint: neither can be predicted).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actloop.agents._graph import GraphRun

__all__ = ["Nested", "Outer", "chunk", "inside", "top"]


@dataclass(frozen=True)
class Nested:
    """A sub-run's chunk on the way to the streamed run's queue."""

    namespace: tuple[str, ...]
    payload: Any


@dataclass(frozen=True)
class Outer:
    """Where chunks of runs started inside a streamed run go: `put((mode, Nested(...)))`."""

    put: Callable[[tuple[str, Any]], None]
    modes: tuple[str, ...]
    namespace: tuple[str, ...] = ()


OUTER: ContextVar[Outer | None] = ContextVar("actloop_agents_outer_stream", default=None)


def top(modes: tuple[str, ...], put: Callable[[tuple[str, Any]], None]) -> Outer:
    """The streamed run's `Outer` (namespace `()`)."""
    return Outer(put, modes)


@contextmanager
def inside(run: GraphRun, outer: Outer | None) -> Generator[None, None, None]:
    """While `run` runs: `outer` open for the runs its tools start (the streamed run's own, or,
    for a run started inside a streamed run, its sink there and a namespace a level deeper)."""
    if outer is None:
        found = OUTER.get()
        if found is None or run.sink is not None:
            yield
            return
        namespace = (*found.namespace, f"tools:{uuid.uuid4()}")
        outer = Outer(found.put, found.modes, namespace)
        run.stream_tokens = "messages" in found.modes

        def sink(mode: str, payload: Any) -> None:
            if mode in found.modes:
                found.put((mode, Nested(namespace, payload)))

        run.sink = sink
    token = OUTER.set(outer)
    try:
        yield
    finally:
        OUTER.reset(token)


def chunk(mode: str, payload: Any, single: bool, subgraphs: bool) -> Any:
    """What the stream yields for a chunk: LangGraph's shape for one mode or several, with its
    namespace first when `subgraphs`."""
    if not subgraphs:
        return payload if single else (mode, payload)
    namespace: tuple[str, ...] = ()
    if isinstance(payload, Nested):
        namespace, payload = payload.namespace, payload.payload
    return (namespace, payload) if single else (namespace, mode, payload)
