"""Agent Protocol runs over the service's runs: what each run was, its status, its stream parts.

A run is one start or resume of a thread's turn (`ThreadService.start` / `resume`); this process
keeps the latest `KEEP` of them (id, thread, the state it began from, where its events start in
the thread's event log). A run's stream is made from that log, so a client that joins late, or
reconnects with `Last-Event-ID`, gets the same parts (ids are the log's event numbers).

Stream modes: `values` (the whole state at the start and after each chunk, then
`{"__interrupt__": [...]}` for a pause), `updates` (`{"agent" | "tools": {"messages": [...]}}`,
`{"__interrupt__": [...]}`), `messages-tuple` (`messages`: `[message, metadata]` per token and per
whole message), `messages` (`messages/metadata`, `messages/partial`, `messages/complete`), `events`
(the run's top-level events in `astream_events` v2's shape: chain start, model tokens, chunks,
chain end). First `metadata` `{"run_id", "attempt"}`; last exactly one of `end` `{"run_id",
"status"}` or `error` `{"error": type, "message"}`.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

from actloop.executor import PAUSED_KEY
from actloop.server._hub import Event
from actloop.server._service import Started, ThreadService, decode_event
from actloop.server.agent_protocol._state import Transcript, iso

__all__ = ["KEEP", "MODES", "Run", "RunBook", "failed", "parts"]

KEEP = 1000
"""How many runs this process remembers."""

MODES = frozenset(
    {
        "values",
        "updates",
        "messages",
        "messages-tuple",
        "events",
        "tasks",
        "checkpoints",
        "debug",
        "custom",
        "tools",
        "lifecycle",
    }
)
"""Stream modes a client may ask for; the first five produce parts, the others none."""

_TERMINAL = {"end": "success", "error": "error", "cancelled": "interrupted"}


@dataclass
class Run:
    """One run: a start or resume of a thread's turn."""

    run_id: str
    thread_id: str
    assistant_id: str
    started: Started
    base: Transcript
    """The thread's state when the run began."""
    modes: set[str]
    """The stream modes it was started with (a join stream's default)."""
    metadata: dict[str, Any] = field(default_factory=lambda: {})
    created: float = field(default_factory=time.time)

    @property
    def status(self) -> str:
        """`running`, then `success`, `interrupted` (paused or cancelled) or `error`."""
        paused = False
        for _, name, data in self.started.log.events[self.started.first_event :]:
            if name in _TERMINAL:
                return "interrupted" if name == "end" and paused else _TERMINAL[name]
            if '"pending_approvals"' in data:  # cheap first: decode only a likely pause
                chunk = decode_event(data)
                paused = isinstance(chunk, dict) and PAUSED_KEY in chunk
        return "running"

    def view(self) -> dict[str, Any]:
        """The run as the protocol's `Run` object."""
        return {
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "assistant_id": self.assistant_id,
            "created_at": iso(self.created),
            "updated_at": iso(self.created),
            "status": self.status,
            "metadata": self.metadata,
            "kwargs": {},
            "multitask_strategy": "reject",
        }


class RunBook:
    """The runs this process started, newest last; the oldest forgotten past `KEEP`."""

    def __init__(self) -> None:
        self.runs: OrderedDict[str, Run] = OrderedDict()

    def add(
        self, thread_id: str, assistant_id: str, started: Started, base: Transcript, modes: set[str]
    ) -> Run:
        """Remember a run just started."""
        run = Run(str(uuid.uuid4()), thread_id, assistant_id, started, base, modes)
        self.runs[run.run_id] = run
        while len(self.runs) > KEEP:
            self.runs.popitem(last=False)
        return run

    def of_thread(self, thread_id: str) -> list[Run]:
        """The thread's runs, newest first."""
        return [r for r in reversed(self.runs.values()) if r.thread_id == thread_id]

    def forget(self, thread_id: str) -> None:
        """Drop a deleted thread's runs."""
        for run in self.of_thread(thread_id):
            del self.runs[run.run_id]


Part = tuple[str, Any, int | None]
"""(event name, data, id or None) of one stream part."""


class _Parts:
    """Turns a run's events into the parts of the stream modes asked for."""

    def __init__(self, run: Run, modes: set[str]) -> None:
        self.run, self.modes = run, modes
        self.state = copy.deepcopy(run.base)
        self.partial: dict[str, str] = {}
        self.meta = {
            "run_id": run.run_id,
            "thread_id": run.thread_id,
            "assistant_id": run.assistant_id,
            "graph_id": run.assistant_id,
        }

    def start(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [("metadata", {"run_id": self.run.run_id, "attempt": 1})]
        if "values" in self.modes:
            out.append(("values", self.state.values()))
        if "events" in self.modes:
            out.append(("events", self._event("on_chain_start", {"input": self.state.inputs})))
        return out

    def _event(
        self, kind: str, data: dict[str, Any], name: str = "AgentExecutor"
    ) -> dict[str, Any]:
        return {
            "event": kind,
            "name": name,
            "run_id": self.run.run_id,
            "parent_ids": [],
            "tags": [],
            "metadata": self.meta,
            "data": data,
        }

    def _meta(self, node: str, step: int) -> dict[str, Any]:
        return {**self.meta, "langgraph_node": node, "langgraph_step": step}

    def data(self, chunk: Any) -> list[tuple[str, Any]]:
        if not isinstance(chunk, dict):
            return []
        chunk = cast(dict[str, Any], chunk)
        if "token" in chunk:
            return self._token(str(chunk["token"]))
        step = self.state.step
        node, messages = self.state.apply(chunk)
        out: list[tuple[str, Any]] = []
        if "events" in self.modes:
            out.append(("events", self._event("on_chain_stream", {"chunk": chunk})))
            if "output" in chunk:
                out.append(("events", self._event("on_chain_end", {"output": chunk})))
        for message in messages:
            out.extend(self._message(message, node, step))
        if node == "__interrupt__":
            interrupts = self.state.interrupts()
            if "updates" in self.modes:
                out.append(("updates", {"__interrupt__": interrupts}))
            if "values" in self.modes:
                out.append(("values", {"__interrupt__": interrupts}))
            return out
        if node and "updates" in self.modes:
            update: dict[str, Any] = {"messages": messages}
            if "output" in chunk:
                update.update(self.state.output or {})
            out.append(("updates", {node: update}))
        if node and "values" in self.modes:
            out.append(("values", self.state.values()))
        return out

    def _token(self, token: str) -> list[tuple[str, Any]]:
        ident = self.state.message_id("ai", self.state.step)
        first = ident not in self.partial
        self.partial[ident] = self.partial.get(ident, "") + token
        out: list[tuple[str, Any]] = []
        if "messages-tuple" in self.modes:
            piece: dict[str, Any] = {
                "type": "AIMessageChunk",
                "content": token,
                "id": ident,
                "tool_calls": [],
                "tool_call_chunks": [],
            }
            out.append(("messages", [piece, self._meta("agent", self.state.step)]))
        if "messages" in self.modes:
            if first:
                meta = self._meta("agent", self.state.step)
                out.append(("messages/metadata", {ident: {"metadata": meta}}))
            whole: dict[str, Any] = {"type": "ai", "content": self.partial[ident], "id": ident}
            whole["tool_calls"] = []
            out.append(("messages/partial", [whole]))
        if "events" in self.modes:
            piece = {"type": "AIMessageChunk", "content": token, "id": ident}
            out.append(("events", self._event("on_chat_model_stream", {"chunk": piece}, "model")))
        return out

    def _message(self, message: dict[str, Any], node: str, step: int) -> list[tuple[str, Any]]:
        """The parts of a whole message (an AI step or answer, a tool result)."""
        streamed = message["id"] in self.partial
        out: list[tuple[str, Any]] = []
        if "messages-tuple" in self.modes and not (streamed and not message.get("tool_calls")):
            whole = {**message, "content": ""} if streamed else message
            out.append(("messages", [whole, self._meta(node, step)]))
        if "messages" in self.modes:
            if not streamed:
                meta = self._meta(node, step)
                out.append(("messages/metadata", {message["id"]: {"metadata": meta}}))
            out.append(("messages/complete", [message]))
        return out


async def parts(
    service: ThreadService, run: Run, modes: set[str], after: int = -1
) -> AsyncIterator[Part]:
    """The run's stream parts, live until it ends; those of events up to `after` are left out."""
    maker = _Parts(run, modes)
    for name, data in maker.start():
        if name == "metadata" or after < 0:  # a reconnect has had the start
            yield name, data, None
    started = run.started
    events: AsyncIterator[Event] = started.log.follow(started.first_event)
    async for ident, name, raw in events:
        if name == "data":
            made = maker.data(decode_event(raw))
        else:
            made = [await _terminal(service, run, name)]
        if ident > after:
            for part_name, data in made:
                yield part_name, data, ident
        if name != "data":
            return


async def _terminal(service: ThreadService, run: Run, name: str) -> tuple[str, Any]:
    if name == "end":
        return "end", {"run_id": run.run_id, "status": run.status}
    if name == "cancelled":
        return "error", {"error": "UserInterrupt", "message": "the run was cancelled"}
    return "error", await failed(service, run)


async def failed(service: ThreadService, run: Run) -> dict[str, str]:
    """A failed run's error as the protocol shows it: its type only (the message may hold a key
    or an address; it stays in the store and the server log)."""
    kind = await service.failure(run.started)
    return {"error": kind, "message": f"the run failed ({kind}); see the server log"}
