"""Threads, states and assistants in the Agent Protocol's shapes, read through `ThreadService`.

A thread's status: `busy` while a run of it goes on (here, or in another process holding its
lease), `interrupted` when its latest turn waits for approval or was stopped midway (cancelled:
saved as failed with `CancelledError`; or its process died), `error` when that turn failed,
`idle` otherwise. A run with `command={"resume": null}` goes on with a stopped or failed turn.

A thread created with `POST /threads` and no run yet lives in this process only (with its
metadata) until its first run saves it in the store.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from actloop.server._http import HttpError
from actloop.server._service import ThreadService, error_type
from actloop.server.agent_protocol._runs import RunBook
from actloop.server.agent_protocol._state import Transcript, iso

if TYPE_CHECKING:
    from actloop.checkpoint import RunRecord
    from actloop.executor import AgentExecutor

__all__ = [
    "GRAPH",
    "Book",
    "Loaded",
    "assistant",
    "book",
    "load",
    "metadata",
    "service",
    "state_view",
    "status",
    "thread_view",
]

GRAPH = "agent"
"""The graph id (and assistant id) of the served agent."""

_STATUS = {"finished": "idle", "paused": "interrupted", "failed": "error"}


@dataclass
class Book:
    """What this process keeps of the protocol besides the store: runs, threads with no run."""

    runs: RunBook = field(default_factory=RunBook)
    empty: dict[str, float] = field(default_factory=lambda: {})
    """Threads created with no run yet: their creation time."""
    metadata: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    """Each thread's metadata as its client set it."""
    started: float = field(default_factory=time.time)


def service(request: Request) -> ThreadService:
    """The app's thread service."""
    return request.app.state.threads


def book(request: Request) -> Book:
    """The app's protocol book (made on first use)."""
    found: Book | None = getattr(request.app.state, "agent_protocol", None)
    if found is None:
        found = request.app.state.agent_protocol = Book()
    return found


def assistant(executor: AgentExecutor, started: float) -> dict[str, Any]:
    """The one assistant: the served agent."""
    return {
        "assistant_id": GRAPH,
        "graph_id": GRAPH,
        "name": executor.name or GRAPH,
        "description": None,
        "config": {},
        "context": {},
        "metadata": {"created_by": "system"},
        "version": 1,
        "created_at": iso(started),
        "updated_at": iso(started),
    }


@dataclass
class Loaded:
    """A thread read back: its saved turns and its values."""

    thread_id: str
    turns: list[RunRecord]
    transcript: Transcript
    states: list[dict[str, Any]] = field(default_factory=lambda: [])
    """With `history=True`: the state after each turn, oldest first."""


async def load(
    request: Request, thread_id: str, history: bool = False, missing_ok: bool = False
) -> Loaded:
    """The thread's turns and values; 404 when neither the store nor this process knows it
    (unless `missing_ok`: then an empty thread)."""
    threads = service(request)
    turns = await threads.turns(thread_id)
    if not turns and not missing_ok and thread_id not in book(request).empty:
        raise HttpError(404, f"no thread {thread_id!r}")
    loaded = Loaded(thread_id, turns, Transcript())
    for record in turns:
        loaded.transcript.add_turn(await threads.decode(record))
        if history:
            loaded.states.append(state_view(request, loaded, record))
    return loaded


def status(request: Request, loaded: Loaded) -> str:
    """The thread's status (see the module docstring)."""
    if service(request).live(loaded.thread_id):
        return "busy"
    if not loaded.turns:
        return "idle"
    latest = loaded.turns[-1]
    if latest.status == "running":
        return "busy" if latest.owner else "interrupted"
    if latest.status == "failed" and error_type(latest.error) == "CancelledError":
        return "interrupted"  # cancelled: stopped midway, not failed
    return _STATUS.get(latest.status, "idle")


def _times(request: Request, loaded: Loaded) -> tuple[str, str]:
    if not loaded.turns:
        created = book(request).empty.get(loaded.thread_id, time.time())
        return iso(created), iso(created)
    return iso(loaded.turns[0].created), iso(loaded.turns[-1].updated)


def metadata(request: Request, thread_id: str) -> dict[str, Any]:
    """The thread's metadata: the graph's and assistant's ids, and what its client set."""
    return {"graph_id": GRAPH, "assistant_id": GRAPH, **book(request).metadata.get(thread_id, {})}


def thread_view(request: Request, loaded: Loaded) -> dict[str, Any]:
    """The protocol's `Thread` object."""
    created, updated = _times(request, loaded)
    transcript = loaded.transcript
    meta = metadata(request, loaded.thread_id)
    interrupts = {transcript.turn_id: transcript.interrupts()} if transcript.pending else {}
    return {
        "thread_id": loaded.thread_id,
        "created_at": created,
        "updated_at": updated,
        "metadata": meta,
        "status": status(request, loaded),
        "config": {},
        "values": transcript.values() if loaded.turns else {},
        "interrupts": interrupts,
    }


def state_view(request: Request, loaded: Loaded, record: RunRecord | None = None) -> dict[str, Any]:
    """The protocol's `ThreadState` (after `record`'s turn, or now)."""
    transcript = loaded.transcript
    record = record or (loaded.turns[-1] if loaded.turns else None)
    tasks: list[dict[str, Any]] = []
    next_nodes: list[str] = []
    if transcript.pending:
        next_nodes = ["tools"]
        tasks.append(_task(transcript.turn_id, "tools", None, transcript.interrupts()))
    elif record is not None and record.status in ("failed", "running"):
        next_nodes = ["agent"]
        tasks.append(_task(transcript.turn_id, "agent", transcript.error, []))
    checkpoint = {
        "thread_id": loaded.thread_id,
        "checkpoint_ns": "",
        "checkpoint_id": f"{transcript.turn_id}@{len(transcript.messages)}" if record else None,
        "checkpoint_map": None,
    }
    return {
        "values": transcript.values() if record else {},
        "next": next_nodes,
        "tasks": tasks,
        "metadata": {"graph_id": GRAPH, "step": transcript.step, "source": "loop"},
        "created_at": iso(record.updated) if record else None,
        "checkpoint": checkpoint,
        "parent_checkpoint": None,
        "interrupts": transcript.interrupts(),
    }


def _task(turn_id: str, name: str, error: str | None, interrupts: list[Any]) -> dict[str, Any]:
    return {
        "id": turn_id,
        "name": name,
        "path": ["__pregel_pull", name],
        "error": error,
        "interrupts": interrupts,
        "checkpoint": None,
        "state": None,
        "result": None,
    }
