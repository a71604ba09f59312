"""A tool that cannot go on without a person's answers (an MCP server's elicitation, a form).

The tool raises `NeedsInput` with its questions and the state it goes on from. A durable run
pauses on it the way it pauses for an approval: the questions are the waiting call's, and a
resume with `answer={call_id: ...}` runs the call again with `current_input()` holding the
answers and that state. Outside a durable run nothing can wait for a person: the call's
observation says what the tool asked (`observation`), and the run goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any, NamedTuple

__all__ = ["ACTIONS", "CURRENT", "InputCall", "NeedsInput", "Question", "current_input"]

ACTIONS = ("accept", "decline", "cancel")
"""What a person may do with a question: answer it, refuse it, or dismiss it."""


class Question(NamedTuple):
    """One thing a tool asks a person."""

    key: str
    """The tool's name for the question: its answer comes back under this key."""
    message: str
    """What to show the person."""
    schema: Mapping[str, Any] | None = None
    """The JSON schema of the answer's content (None: a plain accept, decline or cancel)."""


class NeedsInput(Exception):
    """Raised by a tool that needs a person's answers before it can go on; `state` (JSON-able)
    comes back with the answers in `current_input()`."""

    def __init__(self, questions: Sequence[Question], state: Any = None) -> None:
        super().__init__("; ".join(q.message for q in questions) or "input needed")
        self.questions = list(questions)
        self.state = state

    def observation(self, tool: str) -> str:
        """The observation of the call outside a durable run, which cannot wait for a person."""
        return (
            f"Error: tool {tool!r} needs a person's input and did not finish; only a durable run "
            f"(a checkpointer and a thread_id) can pause to ask for it. It asked: {self}"
        )


class InputCall(NamedTuple):
    """What a durable run tells the tool call it runs (`current_input()`)."""

    answers: dict[str, dict[str, Any]] | None = None
    """The person's answers by question key, each `{"action": "accept" | "decline" | "cancel",
    "content": {...} | None}`; None on a first call (nothing asked yet)."""
    state: Any = None
    """The `state` of the `NeedsInput` the answers answer."""


CURRENT: ContextVar[InputCall | None] = ContextVar("actloop_tool_input", default=None)
"""Set by a durable run around each tool call."""


def current_input() -> InputCall | None:
    """None when the running call cannot pause (not in a durable run); else its answers and
    state (`answers` None: nothing asked yet, so raising `NeedsInput` pauses the run)."""
    return CURRENT.get()
