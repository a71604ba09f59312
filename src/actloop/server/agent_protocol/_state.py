"""A thread's `values` as the Agent Protocol shows them, from its saved turns and a run's chunks.

The values of an AgentExecutor thread are the latest turn's inputs, its outputs once it finished,
and `messages`: the whole conversation in LangChain's message-dict shape (each turn's human input,
an AI message with `tool_calls` per step, a tool message per finished call, the final AI answer),
so a `useStream` front end renders it as a chat. Message ids are stable (`{turn id}-ai-{step}`,
...): the streamed ones and the saved ones name the same message. A tool call's id is the
journal's call id (`"0-0"`, as in `pending_approvals`; `"T:2"`'s calls are `"2:0-0"`...).

A pause is one interrupt whose value is LangChain's human-in-the-loop request (`action_requests`
with each waiting call's `id`, `name`, `args`, `description`; `review_configs`). A call that asked
a person for input also has its `questions` (`key`, `message`, `schema`), and its only allowed
decision is `answer`.
"""

from __future__ import annotations

import datetime
from typing import Any, cast

from actloop.checkpoint import ThreadHistory
from actloop.checkpoint._entries import call_id as journal_call_id
from actloop.server._service import error_type, public_id
from actloop.server._wire import as_text, encode

__all__ = ["Transcript", "interrupt", "iso"]

DECISIONS = ["approve", "edit", "reject"]


def iso(stamp: float) -> str:
    """A store time (seconds since the epoch) as ISO 8601 in UTC."""
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).isoformat()


def interrupt(turn_id: str, pending: list[dict[str, Any]]) -> dict[str, Any]:
    """The interrupt of a paused turn: its calls waiting for a decision."""
    requests = [_request(p) for p in pending]
    configs = [
        {
            "action_name": r["name"],
            "allowed_decisions": ["answer"] if "questions" in r else DECISIONS,
        }
        for r in requests
    ]
    ids = ",".join(str(p.get("id")) for p in pending)
    return {
        "value": {"action_requests": requests, "review_configs": configs},
        "id": f"{turn_id}/{ids}",
    }


def _request(pending: dict[str, Any]) -> dict[str, Any]:
    """The action request of one waiting call (with its questions, if it asked for input)."""
    request = {
        "id": pending.get("id"),
        "name": pending.get("tool"),
        "args": encode(pending.get("tool_input")),
        "description": pending.get("log") or "",
    }
    if "questions" in pending:
        request["questions"] = encode(pending["questions"])
    return request


def _args(tool_input: Any) -> dict[str, Any]:
    value = encode(tool_input)
    return cast(dict[str, Any], value) if isinstance(value, dict) else {"__arg1": value}


class Transcript:
    """The values of one thread, built turn by turn and chunk by chunk."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.inputs: dict[str, Any] = {}
        self.output: dict[str, Any] | None = None
        self.pending: list[dict[str, Any]] = []
        self.error: str | None = None
        self.turn_id = ""
        self.turn = 1
        self.step = 0
        self.replay = False

    def values(self) -> dict[str, Any]:
        """The thread's values now."""
        return {**self.inputs, **(self.output or {}), "messages": list(self.messages)}

    def interrupts(self) -> list[dict[str, Any]]:
        """The pending interrupt, if the turn is paused."""
        return [interrupt(self.turn_id, self.pending)] if self.pending else []

    def message_id(self, kind: str, n: Any) -> str:
        """The stable id of a message of the current turn."""
        return f"{self.turn_id}-{kind}-{n}"

    def call_id(self, step: int, index: int) -> str:
        """A tool call's id in the messages: the journal's id, marked with the turn after 1."""
        own = journal_call_id(step, index)
        return own if self.turn == 1 else f"{self.turn}:{own}"

    # a turn as saved

    def begin(self, turn_id: str, inputs: Any) -> dict[str, Any]:
        """Start a turn on `inputs`: its human message (returned)."""
        self.turn_id, self.turn = turn_id, public_id(turn_id)[1]
        self.inputs = cast(dict[str, Any], encode(inputs)) if isinstance(inputs, dict) else {}
        self.output, self.pending, self.error, self.step = None, [], None, 0
        question = self.inputs.get("input", self.inputs)
        human = {"type": "human", "content": as_text(question), "id": self.message_id("human", 0)}
        self.messages.append(human)
        return human

    def add_turn(self, found: ThreadHistory) -> None:
        """Fold a saved turn in (its record, calls, pending calls, output or error)."""
        self.begin(found.record.thread_id, found.inputs)
        steps: dict[int, list[Any]] = {}
        for call in found.calls:
            steps.setdefault(int(call.id.split("-")[0]), []).append(call)
        for step, calls in sorted(steps.items()):
            self.step = step
            self.messages.append(self.ai_calls([(c.tool, c.tool_input) for c in calls]))
            done = [(c.id, c.tool, c.observation) for c in calls if c.finished]
            self.messages.extend(self.tool_message(*d) for d in done)
            if len(done) == len(calls):
                self.step = step + 1
        if found.output is not None:
            self.finish(found.output)
        self.pending = list(found.pending)
        self.error = error_type(found.record.error)

    # messages

    def ai_calls(self, calls: list[tuple[str, Any]], content: str = "") -> dict[str, Any]:
        """The AI message of the current step: its tool calls."""
        tool_calls = [
            {
                "name": tool,
                "args": _args(tool_input),
                "id": self.call_id(self.step, i),
                "type": "tool_call",
            }
            for i, (tool, tool_input) in enumerate(calls)
        ]
        return {
            "type": "ai",
            "content": content,
            "id": self.message_id("ai", self.step),
            "tool_calls": tool_calls,
        }

    def tool_message(self, own_id: str, tool: str, observation: Any) -> dict[str, Any]:
        """The tool message of a finished call (`own_id`: the journal's call id)."""
        step, _, index = own_id.partition("-")
        call = self.call_id(int(step), int(index or 0))
        return {
            "type": "tool",
            "content": as_text(observation),
            "tool_call_id": call,
            "name": tool,
            "id": self.message_id("tool", own_id),
        }

    def finish(self, output: dict[str, Any]) -> dict[str, Any]:
        """The turn's final answer: its AI message (returned) and outputs."""
        self.output = {
            k: v for k, v in cast(dict[str, Any], encode(output)).items() if k != "messages"
        }
        answer = self.output.get("output", self.output)
        message: dict[str, Any] = {
            "type": "ai",
            "content": as_text(answer),
            "id": self.message_id("ai", self.step),
            "tool_calls": [],
        }
        self.messages.append(message)
        return message

    # a run's chunks

    def apply(self, chunk: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """Fold one chunk of a run in: the node that made it (`agent`, `tools`, `__interrupt__`
        or `` for a token) and the messages it added or changed."""
        if "actions" in chunk:
            actions = cast(list[dict[str, Any]], chunk["actions"])
            message = self.ai_calls([(a.get("tool", ""), a.get("tool_input")) for a in actions])
            self._put(message)
            return "agent", [message]
        if "steps" in chunk:
            steps = cast(list[dict[str, Any]], chunk["steps"])
            added = [
                self.tool_message(
                    journal_call_id(self.step, i), s["action"].get("tool", ""), s.get("observation")
                )
                for i, s in enumerate(steps)
            ]
            for message in added:
                self._put(message)
            self.step += 1
            return "tools", added
        if "output" in chunk:
            return "agent", [self.finish(chunk)]
        if "pending_approvals" in chunk:
            self.pending = list(cast(list[dict[str, Any]], chunk["pending_approvals"]))
            return "__interrupt__", []
        return "", []

    def _put(self, message: dict[str, Any]) -> None:
        """Add a message, or replace the one with its id (a resumed run announces the paused
        step again, an edit may have changed its input)."""
        for i, old in enumerate(self.messages):
            if old.get("id") == message["id"]:
                self.messages[i] = message
                return
        self.messages.append(message)

    def resume_at(self) -> None:
        """Get ready for a resumed run of the current turn: it goes on with the unfinished step."""
        self.pending, self.error = [], None
