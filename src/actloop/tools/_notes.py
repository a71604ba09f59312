"""Call notes: how a tool call that runs long leaves word of its progress in a durable run's
journal, and gets it back when the run is resumed after a crash.

A tool asks `call_note()` while it runs. Outside a durable run it is None. Inside one it is the
call's `CallNote`: `saved` is the latest note the call left before the run stopped (None on a
first run), and `record(text)` journals a new one (a "note" entry of the call) before it returns.
A tool that hands work to a remote job (an MCP task, a batch API) records the job's id as soon
as it has it; resumed, it finds the id in `saved` and follows the job instead of starting it
again. A call that left a note is not refused as an unsafe repeat (`idempotent=False`): the note
says the tool knows how to go on.

Only the context variable lives here (the tools layer, under the executor that sets it), so a
tool of any package can read it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

__all__ = ["NOTE", "CallNote", "call_note"]


class CallNote:
    """A durable run's hold on one running tool call: its last note, and a way to leave one."""

    __slots__ = ("_record", "saved")

    def __init__(self, saved: str | None, record: Callable[[str], None]) -> None:
        self.saved = saved
        """The latest note this call left in an earlier process of the run (None: none)."""
        self._record = record

    def record(self, text: str) -> None:
        """Journal `text` as this call's latest note; returns once the store has it (it blocks:
        from async code, call it in a thread). Nothing is written once the run has moved past
        the call's step (a call abandoned at a deadline)."""
        self._record(text)
        self.saved = text


NOTE: contextvars.ContextVar[CallNote | tuple[Any, ...] | None] = contextvars.ContextVar(
    "actloop_call_note", default=None
)
"""Set by a durable run's driver around each tool call: `(store, ticket, index, call)`, made into
the call's `CallNote` (`store.call_note(ticket, index, call)`) only when the tool asks, so a call
that takes no note costs a tuple."""


def call_note() -> CallNote | None:
    """The note handle of the tool call running now in a durable run; None anywhere else."""
    held = NOTE.get()
    if held is None or isinstance(held, CallNote):
        return held
    store, ticket, index, call = held
    note: CallNote = store.call_note(ticket, index, call)
    NOTE.set(note)  # the same handle for the rest of the call
    return note
