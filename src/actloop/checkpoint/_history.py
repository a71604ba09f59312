"""A thread's history, read back: the public read side of the journal.

`read_thread(store, thread_id)` (and `aread_thread`) returns a `ThreadHistory`: the run record,
its decoded inputs, pending approvals and output, and every call the journal planned as a
`CallRecord` (id, tool, input after edits, observation or None, decision or None). One damage
policy for every reader (`actloop runs show`, the server's thread views): a saved value that
cannot be decoded raises `CheckpointError` naming the journal entry, or the record's field, that
holds it; nothing is guessed or skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from actloop.checkpoint._base import JournalEntry, RunRecord
from actloop.checkpoint._entries import DAMAGE, Decision, call_id, decode_decision, decode_plan
from actloop.checkpoint._store import BaseCheckpointer
from actloop.exceptions import CheckpointError, OutputParserException
from actloop.serialization import loads
from actloop.steps import AgentAction, AgentFinish

__all__ = ["CallRecord", "ThreadHistory", "aread_thread", "read_thread", "thread_history"]


@dataclass(frozen=True)
class CallRecord:
    """One tool call the journal planned."""

    id: str
    """`"{step}-{index}"`, as in `pending_approvals` and `resume(approve=[...])`."""
    tool: str
    tool_input: Any
    """The input the call ran with: the planned one, or a person's edit of it."""
    observation: Any = None
    """What the call returned; None until it finished (see `finished`)."""
    finished: bool = False
    decision: Decision | None = None
    """A person's decision on the call, if one was recorded."""
    message_log: list[Any] = field(default_factory=lambda: [])
    """The planned action's `message_log` (a model turn's messages), if it had one."""


@dataclass(frozen=True)
class ThreadHistory:
    """A saved run, decoded: its record and what it did."""

    record: RunRecord
    inputs: dict[str, Any]
    calls: list[CallRecord] = field(default_factory=lambda: [])
    pending: list[dict[str, Any]] = field(default_factory=lambda: [])
    """The calls waiting for approval (a paused run): `{"id", "tool", "tool_input", "log"}`, plus
    `questions` (`[{"key", "message", "schema"}]`) for a call waiting for a person's answers."""
    output: dict[str, Any] | None = None
    """The final outputs of a finished run."""

    @property
    def thread_id(self) -> str:
        return self.record.thread_id

    @property
    def status(self) -> str:
        return self.record.status


class _Calls:
    """Folds journal entries into the calls they describe."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.where: dict[tuple[int, int], dict[str, Any]] = {}
        self.act = 0

    def add(self, entry: JournalEntry) -> None:
        if entry.kind == "plan":
            self._plan(decode_plan(entry.data or "null"))
        elif entry.kind in ("obs", "decision"):
            call = self.where.get((entry.act or 0, entry.call or 0))
            if call is None:
                return
            if entry.kind == "obs":
                call.update(observation=loads(entry.data or "null"), finished=True)
                return
            decision = decode_decision(entry.data, entry.seq)
            call["decision"] = decision
            if decision.kind == "edit":
                call["tool_input"] = decision.tool_input

    def _plan(self, plan: Any) -> None:
        if isinstance(plan, AgentFinish):
            return
        if isinstance(plan, OutputParserException):
            plan = AgentAction("_Exception", "", str(plan))
        actions = cast("list[Any]", plan if isinstance(plan, list) else [plan])
        for i, action in enumerate(actions):
            if not isinstance(action, AgentAction):
                raise TypeError(f"the plan holds a {type(action).__name__}, not an action")
            call = {
                "id": call_id(self.act, i),
                "tool": action.tool,
                "tool_input": action.tool_input,
                "message_log": list(getattr(action, "message_log", None) or []),
            }
            self.where[self.act, i] = call
            self.calls.append(call)
        self.act += 1


def thread_history(record: RunRecord, entries: list[JournalEntry]) -> ThreadHistory:
    """The run `record` with its journal `entries`, decoded (CheckpointError names damage)."""
    thread = record.thread_id
    folded = _Calls()
    for entry in entries:
        try:
            folded.add(entry)
        except (CheckpointError, *DAMAGE) as exc:
            raise CheckpointError(
                f"journal entry {entry.seq} of thread {thread!r} is damaged ({exc})"
            ) from None
    inputs = _field(record.inputs, "inputs", thread)
    if not isinstance(inputs, dict):
        kind = type(inputs).__name__  # pyright: ignore[reportUnknownArgumentType]
        raise CheckpointError(f"the saved inputs of thread {thread!r} are damaged (a {kind})")
    return ThreadHistory(
        record,
        cast("dict[str, Any]", inputs),
        [CallRecord(**call) for call in folded.calls],
        _field(record.pending, "pending calls", thread) if record.pending else [],
        _field(record.output, "output", thread) if record.output else None,
    )


def _field(text: str | None, what: str, thread: str) -> Any:
    try:
        return loads(text or "null")
    except DAMAGE as exc:
        raise CheckpointError(f"the saved {what} of thread {thread!r} is damaged ({exc})") from None


def read_thread(
    store: BaseCheckpointer, thread_id: str, *, timeout: float | None = None
) -> ThreadHistory | None:
    """The history of `thread_id` in `store`, or None when it has no run."""
    record = store.get(thread_id, timeout=timeout)
    if record is None:
        return None
    return thread_history(record, store.entries(thread_id, timeout=timeout))


async def aread_thread(
    store: BaseCheckpointer, thread_id: str, *, timeout: float | None = None
) -> ThreadHistory | None:
    """Async twin of `read_thread`: awaits the store, each call bounded by `timeout`."""
    record = await store.aget(thread_id, timeout=timeout)
    if record is None:
        return None
    return thread_history(record, await store.aentries(thread_id, timeout=timeout))
