"""A durable run's calls that asked for a person's input (a tool raised `NeedsInput`).

Such a call is journaled as an "ask" entry (its questions and the state to go on from) instead
of an observation, and the run pauses once its step's other calls are done: the call waits in
`pending_approvals` with its `questions`. A `Resume` with `answer={call_id: ...}` is journaled as
an "answer" entry; the call then runs again with `current_input()` holding the answers and the
saved state (the tool may ask again: the latest ask and answer count). No I/O here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from actloop.checkpoint._entries import call_id, encode
from actloop.serialization import loads
from actloop.tools._input import InputCall, NeedsInput

if TYPE_CHECKING:
    from actloop.checkpoint import JournalEntry
    from actloop.executor._loop import ToolCall

__all__ = [
    "NOTHING_ASKED",
    "Answered",
    "Asked",
    "ask_data",
    "asked_calls",
    "asking_item",
    "input_call",
    "pending_item",
    "waiting_for_answer",
]


class Asked(NamedTuple):
    """The latest "ask" entry of a call: what it asked, and the state it goes on from."""

    seq: int
    questions: list[dict[str, Any]]
    state: Any


class Answered(NamedTuple):
    """The latest "answer" entry of a call: a person's answers by question key."""

    seq: int
    answers: dict[str, dict[str, Any]]


def ask_data(asked: NeedsInput) -> tuple[list[dict[str, Any]], str]:
    """The questions of `asked` as shown to a person, and the data of its "ask" entry."""
    questions = [
        {"key": q.key, "message": q.message, "schema": dict(q.schema) if q.schema else None}
        for q in asked.questions
    ]
    return questions, encode({"questions": questions, "state": asked.state}, "the tool's question")


def asked_calls(
    entries: list[JournalEntry], act: int
) -> tuple[dict[int, Asked], dict[int, Answered]]:
    """The latest ask and answer of each call of step `act` (the step a replay stopped in)."""
    asks: dict[int, Asked] = {}
    answers: dict[int, Answered] = {}
    for entry in entries:
        if entry.act != act or entry.call is None:
            continue
        if entry.kind == "ask":
            value = loads(entry.data or "null")
            asks[entry.call] = Asked(entry.seq, list(value["questions"]), value["state"])
        elif entry.kind == "answer":
            answers[entry.call] = Answered(entry.seq, dict(loads(entry.data or "null")))
    return asks, answers


def waiting_for_answer(asked: Asked | None, answered: Answered | None) -> bool:
    """Whether a call's latest question has no answer after it."""
    return asked is not None and (answered is None or answered.seq < asked.seq)


NOTHING_ASKED = InputCall()
"""What a call of a durable run runs with before it asked anything: it may ask."""


def input_call(asked: Asked | None, answered: Answered | None) -> InputCall:
    """What the call runs with: the answers to its latest question and its state, or nothing
    asked yet (it may ask)."""
    if asked is None or answered is None or answered.seq < asked.seq:
        return NOTHING_ASKED
    return InputCall(answered.answers, asked.state)


def pending_item(act: int, index: int, call: ToolCall) -> dict[str, Any]:
    """The `pending_approvals` item of a call waiting for a person (`id`, `tool`, `tool_input`,
    `log`)."""
    action = call.action
    return {
        "id": call_id(act, index),
        "tool": action.tool,
        "tool_input": action.tool_input,
        "log": action.log,
    }


def asking_item(
    act: int, index: int, call: ToolCall, questions: list[dict[str, Any]]
) -> dict[str, Any]:
    """The `pending_approvals` item of a call waiting for answers."""
    return {**pending_item(act, index, call), "questions": questions}
