"""A thread's events told from the store: how a server process follows a run another one runs.

Each process keeps event logs only of the runs it started (`_hub`). A thread whose run goes on in
another process (behind a load balancer, say) is followed from the shared store instead: its
runs' records and journals are read at a short interval and turned into the items the local log
would hold, in the same wire shape (`_wire`):

    a plan entry          {"actions": [...], "messages": [...]}   (every call of the step)
    an obs entry          {"steps": [{"action", "observation"}], "messages": [...]}
    a finished run        {"output": ..., "messages": [...]}, then `end`
    a paused run          {"pending_approvals": [...], "thread_id", "status": "paused",
                          "messages": [...]}, then `end`
    a failed run          `error` (LangServe's event, as the local log)

A pause that was since decided is told where its decisions start in the journal (the calls the
decisions name). Model tokens are not journaled, so a store-told stream has none; a step with
one call is journaled when the call finishes, so its actions come with its step.

Event ids are made from the store, so every process gives the same event the same id and a
client may reconnect to any of them with `Last-Event-ID`: `turn * 10**9 + 3 * seq + slot`, where
`seq` is the journal entry's number (`seq` = the journal's length for what the record tells
after it), and `slot` is 0 for a run's last item (pending approvals or output), 1 for its
terminal event and 2 for the entry's own item. The journal is append-only and a record's end
is told at the journal's end, so ids only grow and are never given to another event.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any, cast

from actloop.checkpoint import JournalEntry, RunRecord
from actloop.checkpoint._entries import call_id, decode_decision, decode_plan
from actloop.exceptions import OutputParserException
from actloop.executor import PAUSED_KEY
from actloop.serialization import loads
from actloop.server._hub import ERROR_EVENT, Event
from actloop.server._wire import dumps
from actloop.steps import AgentAction, AgentFinish, AgentStep

__all__ = ["STORE_IDS", "event_id", "newer", "run_events"]

STORE_IDS = 10**9
"""Ids from here on are store-made (`event_id`); a process's own log numbers from 0."""


def event_id(turn: int, seq: int, slot: int) -> int:
    """The id of an event told from the store (see the module docstring)."""
    return turn * STORE_IDS + 3 * seq + slot


class _Turn:
    """Folds one run's journal into events, entry by entry."""

    def __init__(self, turn: int, run_id: str) -> None:
        self.turn, self.run_id = turn, run_id
        self.events: list[Event] = []
        self.actions: dict[tuple[int, int], AgentAction] = {}
        self.act = 0
        self.finish: AgentFinish | None = None
        self.deciding = False
        """The entries just read are decisions (of one resume)."""

    def push(self, seq: int, slot: int, name: str, item: Any = None) -> None:
        data = "" if item is None else dumps(item)
        self.events.append((event_id(self.turn, seq, slot), name, data))

    def end(self, seq: int, name: str, data: str = "") -> None:
        self.events.append((event_id(self.turn, seq, 1), name, data))

    def add(self, entries: list[JournalEntry], index: int) -> None:
        entry = entries[index]
        if entry.kind == "decision" and not self.deciding:
            self._decided_pause(entries, index)
        self.deciding = entry.kind == "decision"
        if entry.kind in ("plan", "stop"):
            self._plan(entry.seq, decode_plan(entry.data or "null"))
        elif entry.kind == "obs":
            action = self.actions.get((entry.act or 0, entry.call or 0))
            if action is not None:
                step = AgentStep(action, loads(entry.data or "null"))
                self.push(entry.seq, 2, "data", {"steps": [step], "messages": step.messages})

    def _plan(self, seq: int, plan: Any) -> None:
        if isinstance(plan, AgentFinish):
            self.finish = plan
            return
        if isinstance(plan, OutputParserException):
            plan = AgentAction("_Exception", "", str(plan))  # as the journal's read side does
        actions = cast("list[AgentAction]", plan if isinstance(plan, list) else [plan])
        for index, action in enumerate(actions):
            self.actions[self.act, index] = action
        self.act += 1
        if actions:
            self.push(seq, 2, "data", {"actions": actions, "messages": actions[0].messages})

    def _decided_pause(self, entries: list[JournalEntry], first: int) -> None:
        """The pause a resume's decisions ended: its pending calls are the ones they decide."""
        pending: list[dict[str, Any]] = []
        for entry in itertools.islice(entries, first, None):
            if entry.kind != "decision":
                break
            key = (entry.act or 0, entry.call or 0)
            action = self.actions.get(key)
            decision = decode_decision(entry.data, entry.seq)
            if action is None:
                continue
            pending.append(_pending(call_id(*key), action))
            if decision.kind == "edit":
                edited = copy.copy(action)
                edited.tool_input = decision.tool_input
                self.actions[key] = edited
        seq = entries[first].seq
        self.push(seq, 0, "data", _paused(pending, self.run_id))
        self.end(seq, "end")

    def close(self, record: RunRecord, end: int, cancelled: bool) -> None:
        """Tell the record's end (if it has one) at journal position `end`."""
        if record.status == "finished":
            outputs = loads(record.output or "null")
            messages = self.finish.messages if self.finish is not None else ()
            self.push(end, 0, "data", {**(outputs or {}), "messages": messages})
            self.end(end, "end")
        elif record.status == "paused":
            self.push(end, 0, "data", _paused(loads(record.pending or "[]"), self.run_id))
            self.end(end, "end")
        elif record.status == "failed":
            self.end(end, "error", ERROR_EVENT)
        elif cancelled:
            self.end(end, "cancelled")


def _pending(ident: str, action: AgentAction) -> dict[str, Any]:
    return {"id": ident, "tool": action.tool, "tool_input": action.tool_input, "log": action.log}


def _paused(pending: list[dict[str, Any]], run_id: str) -> dict[str, Any]:
    """The paused run's last item, as `DurableRun.pause` returns it."""
    values = {PAUSED_KEY: pending, "thread_id": run_id, "status": "paused"}
    return {**values, "messages": AgentFinish(values, "").messages}


def run_events(
    turn: int, record: RunRecord, entries: list[JournalEntry], cancelled: bool = False
) -> list[Event]:
    """The events one saved run (turn `turn` of its thread) tells so far, ids increasing; a
    `running` run ends with `cancelled` when `cancelled` (nobody runs it any more)."""
    folded = _Turn(turn, record.thread_id)
    for index in range(len(entries)):
        folded.add(entries, index)
    end = entries[-1].seq + 1 if entries else 0
    folded.close(record, end, cancelled and record.status == "running")
    return folded.events


def newer(events: list[Event], last: int) -> Iterator[Event]:
    """The events whose id is above `last`."""
    return (event for event in events if event[0] > last)
