"""The Agent Protocol (the LangGraph server's API) over the served agent's durable threads.

The subset `langgraph-sdk`'s client uses for an agent: one assistant (`agent`), threads (in
`server/_threads.py`: create, get, search, delete, state, history), runs on a thread and stateless
(create in the background, wait, stream in the modes `values`, `updates`, `messages`,
`messages-tuple` and `events`, get, list, join, join stream, cancel), and interrupts: a call that
needs approval ends the run with the thread `interrupted`; a run with `command={"resume": ...}`
approves, rejects or edits it (`_decide`). Every run starts through `ThreadService`, so the
threads are the same over every protocol and the page.
"""

from __future__ import annotations

from starlette.routing import Route

from actloop.server.agent_protocol._routes import assistant_routes, run_routes
from actloop.server.agent_protocol._state import Transcript
from actloop.server.agent_protocol._views import (
    GRAPH,
    Loaded,
    book,
    load,
    metadata,
    service,
    state_view,
    status,
    thread_view,
)

__all__ = [
    "GRAPH",
    "Loaded",
    "Transcript",
    "agent_protocol_routes",
    "book",
    "load",
    "metadata",
    "service",
    "state_view",
    "status",
    "thread_view",
]


def agent_protocol_routes() -> list[Route]:
    """The assistants and runs routes (the thread routes are `_threads.thread_routes`)."""
    return [*assistant_routes(), *run_routes()]
