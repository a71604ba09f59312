"""Call notes in a durable run (`actloop.tools._notes` says what a tool sees): which notes a
resumed run gives back, and the handle a durable tool call gets when it asks (`call_note()`).

A note is a "note" journal entry of call i of step a (data: the tool's text); the latest one of
each call of the step a resume stops in is given back as `CallNote.saved`. Reading them is pure
(`saved_notes`); writing one is a `DurableRun.note` transaction, carried out with the store's
sync methods (a tool records from its own thread, or from another event loop: an MCP toolset's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from actloop.tools._notes import CallNote

if TYPE_CHECKING:
    from actloop.checkpoint import JournalEntry
    from actloop.executor._approvals import Approvals
    from actloop.executor._durable import DurableRun, Writes
    from actloop.executor._loop import ToolCall

__all__ = ["call_note", "saved_notes"]


def saved_notes(entries: list[JournalEntry], act: int, approvals: Approvals) -> dict[int, str]:
    """The latest note of each unfinished call of step `act` (the step a resume stops in), by
    call index. A call that left one can go on from it, so it is no longer counted as started
    (an `idempotent=False` tool is then not refused as an unsafe repeat)."""
    notes = {
        e.call: e.data
        for e in entries
        if e.kind == "note" and e.act == act and e.call is not None and e.data is not None
    }
    notes = {i: text for i, text in notes.items() if i not in approvals.results}
    for index in notes:
        approvals.starts.pop(index, None)
    return notes


def call_note(
    run: DurableRun, carry: Callable[[Writes], Any], ticket: int, index: int, call: ToolCall
) -> CallNote:
    """The note handle of one tool call of a durable run, whose `record` journals through
    `carry` (the store's sync methods, bounded by the run); made when the tool asks (the driver
    only sets `NOTE` to the call's coordinates)."""

    def record(text: str) -> None:
        carry(run.note(ticket, index, call, text))

    return CallNote(run.saved_note(ticket, index), record)
