"""The objects of OpenAI's Responses API that the `openai` SDK reads, built from a durable turn:
the response, its output items, and the stream events that build them up live.

A response is one turn of a thread (`resp_{turn}_{thread}`). Its output: each step's tool calls as
`function_call` items, then their results as `function_call_output` items (the agent ran them),
the calls waiting for approval as `mcp_approval_request` items, then the answer as a `message`.
Item ids derive from the response's and the calls' ids, so the stream and `GET` name the same
items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from actloop.server._service import error_type
from actloop.server._wire import encode, json_text

if TYPE_CHECKING:
    from actloop.checkpoint import ThreadHistory
    from actloop.executor import AgentExecutor

__all__ = [
    "TERMINAL",
    "ItemStream",
    "Meta",
    "StreamEvent",
    "failure",
    "meta_of",
    "response_id",
    "response_object",
    "served_name",
    "skeleton",
]

_STATUS = {
    "finished": "completed",
    "paused": "incomplete",
    "failed": "failed",
    "running": "in_progress",
}
TERMINAL = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
    "cancelled": "response.failed",
}


def response_id(thread_id: str, turn: int) -> str:
    """The id of the response that is turn `turn` of `thread_id`."""
    return f"resp_{turn}_{thread_id}"


def served_name(executor: AgentExecutor) -> str:
    """The model name the agent is served under: its `name`, else `"agent"`."""
    return executor.name or "agent"


# the response object


@dataclass(frozen=True)
class Meta:
    """What every response object of one turn shares."""

    model: str
    thread_id: str
    turn: int
    tools: list[dict[str, Any]]

    @property
    def id(self) -> str:
        """The response's id."""
        return response_id(self.thread_id, self.turn)

    @property
    def core(self) -> str:
        """The part of each item id naming this response."""
        return f"{self.turn}_{self.thread_id}"


def meta_of(executor: AgentExecutor, thread_id: str, turn: int) -> Meta:
    """The shared parts of turn `turn` of `thread_id`; the agent's tools as function tools."""
    return Meta(served_name(executor), thread_id, turn, [_tool(t) for t in executor.tools])


def _tool(tool: Any) -> dict[str, Any]:
    """A tool of the agent as a Responses function tool (its name alone when it has no schema)."""
    from actloop.tools import convert_to_openai_function

    try:
        spec = convert_to_openai_function(tool)
    except Exception:  # a tool without a usable schema is still named
        spec = {"name": str(getattr(tool, "name", tool)), "parameters": None}
    return {"type": "function", **spec, "strict": False}


def skeleton(meta: Meta, status: str, created: float, output: list[Any]) -> dict[str, Any]:
    """A response object with everything but its error and end."""
    previous = response_id(meta.thread_id, meta.turn - 1) if meta.turn > 1 else None
    return {
        "id": meta.id,
        "object": "response",
        "created_at": int(created),
        "status": status,
        "background": None,
        "completed_at": None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "metadata": {},
        "model": meta.model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": previous,
        "temperature": None,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": meta.tools,
        "top_p": None,
        "truncation": "disabled",
        "usage": None,
        "user": None,
    }


def response_object(
    meta: Meta, found: ThreadHistory, answer_id: str | None = None
) -> dict[str, Any]:
    """The response object of a saved turn (what `GET` answers and a stream ends with)."""
    record = found.record
    status = _STATUS.get(record.status, "in_progress")
    body = skeleton(meta, status, record.created, _items(meta, found, answer_id))
    if status == "completed":
        body["completed_at"] = int(record.updated)
    if status == "failed":
        body["error"] = failure(error_type(record.error) or "Error")
    return body


def failure(kind: str) -> dict[str, str]:
    """What a failed response says: the exception type, never its message."""
    return {"code": "server_error", "message": f"the run failed ({kind})"}


def _items(meta: Meta, found: ThreadHistory, answer_id: str | None) -> list[dict[str, Any]]:
    """Each step's calls, then their results; waiting calls; the answer."""
    acts: dict[str, list[Any]] = {}
    for call in found.calls:
        acts.setdefault(call.id.partition("-")[0], []).append(call)
    items: list[dict[str, Any]] = []
    for calls in acts.values():
        items.extend(_call_item(meta, c.id, c.tool, encode(c.tool_input)) for c in calls)
        done = [c for c in calls if c.finished]
        items.extend(_result_item(meta, c.id, encode(c.observation)) for c in done)
    items.extend(_approval_item(meta, p) for p in found.pending)
    if found.output is not None:
        text = _answer(encode(found.output))
        ident = answer_id or _message_id(meta, len(acts))
        items.append(_message(ident, text, "completed", "final_answer"))
    return items


def _json(value: Any) -> str:
    """A tool input as the JSON text of `arguments`."""
    return json_text(value)


def _text(value: Any) -> str:
    """A value as text: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json_text(value)


def _answer(outputs: Any) -> str:
    """The answer text of the run's (encoded) outputs: `output`, or all of them as JSON."""
    if isinstance(outputs, dict) and "output" in outputs:
        return _text(cast("dict[str, Any]", outputs)["output"])
    return _text(outputs)


def _call_item(meta: Meta, call_id: str, name: str, args: Any, done: bool = True) -> dict[str, Any]:
    """A tool call the agent made (`done=False`: its arguments still to stream)."""
    return {
        "type": "function_call",
        "id": f"fc_{meta.core}_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": _json(args) if done else "",
        "status": "completed" if done else "in_progress",
    }


def _result_item(meta: Meta, call_id: str, observation: Any) -> dict[str, Any]:
    """A call's result: what the tool returned to the agent."""
    return {
        "type": "function_call_output",
        "id": f"fco_{meta.core}_{call_id}",
        "call_id": call_id,
        "output": _text(observation),
        "status": "completed",
    }


def _approval_item(meta: Meta, pending: dict[str, Any]) -> dict[str, Any]:
    """A call waiting for a person: its `id` is the call id decisions name."""
    return {
        "type": "mcp_approval_request",
        "id": str(pending.get("id")),
        "name": str(pending.get("tool")),
        "arguments": _json(encode(pending.get("tool_input"))),
        "server_label": meta.model,
    }


def _message_id(meta: Meta, turn: int) -> str:
    """The id of the message of the model's `turn`-th reply (0-based) in this response."""
    return f"msg_{meta.core}_{turn}"


def _part(text: str) -> dict[str, Any]:
    """The one text part of a message."""
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message(ident: str, text: str | None, status: str, phase: str | None) -> dict[str, Any]:
    """An assistant message (`text` None: opened, its part still to come)."""
    return {
        "type": "message",
        "id": ident,
        "role": "assistant",
        "status": status,
        "content": [] if text is None else [_part(text)],
        "phase": phase,
    }


# streaming

StreamEvent = tuple[str, dict[str, Any]]
"""An event of the SDK's stream: its `type` and fields (its `sequence_number` comes later)."""


@dataclass
class ItemStream:
    """Turns a turn's live events into the SDK's stream events, numbering the output items as
    the SDK's accumulator does. The model's text streams as a message per reply; a reply that
    ends in tool calls closes as `commentary`, the last one as the `final_answer`."""

    meta: Meta
    items: list[dict[str, Any]] = field(default_factory=lambda: [])
    """Each output item as last sent."""
    act: int = -1
    planning: bool = False
    waiting: list[tuple[str, Any]] = field(default_factory=lambda: [])
    """The current step's calls without a result: (call id, action)."""
    open: tuple[int, str] | None = None
    text: str = ""
    answer_id: str | None = None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """The events for one data item of the thread's log."""
        if not isinstance(chunk, dict):
            return []
        chunk = cast("dict[str, Any]", chunk)
        if "token" in chunk:
            return self._token(str(chunk["token"]))
        if "actions" in chunk:
            return self._actions(cast("list[Any]", chunk["actions"]))
        self.planning = False
        if "steps" in chunk:
            return self._steps(cast("list[Any]", chunk["steps"]))
        if "pending_approvals" in chunk:
            pending = cast("list[dict[str, Any]]", chunk["pending_approvals"])
            events = self.close("commentary")
            for waiting in pending:
                events += self._whole(_approval_item(self.meta, waiting))
            return events
        return self._final({k: v for k, v in chunk.items() if k != "messages"})

    def _add(self, item: dict[str, Any]) -> list[StreamEvent]:
        """Add an item: the `output_item.added` event."""
        self.items.append(item)
        return [("response.output_item.added", {"output_index": len(self.items) - 1, "item": item})]

    def _done(self, index: int, item: dict[str, Any]) -> StreamEvent:
        """An item in its final form: the `output_item.done` event."""
        self.items[index] = item
        return ("response.output_item.done", {"output_index": index, "item": item})

    def _whole(self, item: dict[str, Any]) -> list[StreamEvent]:
        """An item added and done at once."""
        return [*self._add(item), self._done(len(self.items) - 1, item)]

    def _open(self, ident: str) -> list[StreamEvent]:
        """Open a message for the model's text: the item, then its one text part."""
        events = self._add(_message(ident, None, "in_progress", None))
        self.open, self.text = (len(self.items) - 1, ident), ""
        where = {"item_id": ident, "output_index": self.open[0], "content_index": 0}
        return [*events, ("response.content_part.added", {**where, "part": _part("")})]

    def _token(self, text: str, ident: str | None = None) -> list[StreamEvent]:
        """A piece of the model's text, in the open message (opened first if none is)."""
        events = self._open(ident or _message_id(self.meta, self.act + 1)) if not self.open else []
        assert self.open is not None
        index, ident = self.open
        self.text += text
        where = {"item_id": ident, "output_index": index, "content_index": 0}
        events.append(("response.output_text.delta", {**where, "delta": text, "logprobs": []}))
        return events

    def close(self, phase: str | None, status: str = "completed") -> list[StreamEvent]:
        """Close the message the model's text is streaming into, if one is open."""
        if self.open is None:
            return []
        (index, ident), self.open = self.open, None
        where = {"item_id": ident, "output_index": index, "content_index": 0}
        return [
            ("response.output_text.done", {**where, "text": self.text, "logprobs": []}),
            ("response.content_part.done", {**where, "part": _part(self.text)}),
            self._done(index, _message(ident, self.text, status, phase)),
        ]

    def _actions(self, actions: list[Any]) -> list[StreamEvent]:
        """The calls the agent planned: a new step unless the last item was a plan too."""
        events = self.close("commentary")
        if not self.planning:  # the first action of a step
            self.act, self.planning, self.waiting = self.act + 1, True, []
        for action in actions:
            call_id = f"{self.act}-{len(self.waiting)}"
            self.waiting.append((call_id, action))
            events += self._call(call_id, action)
        return events

    def _call(self, call_id: str, action: Any) -> list[StreamEvent]:
        """A call item, its arguments streamed in one delta."""
        name, args = str(action.get("tool")), action.get("tool_input")
        events = self._add(_call_item(self.meta, call_id, name, args, done=False))
        index = len(self.items) - 1
        where = {"item_id": f"fc_{self.meta.core}_{call_id}", "output_index": index}
        text = _json(args)
        events.append(("response.function_call_arguments.delta", {**where, "delta": text}))
        done = {**where, "arguments": text, "name": name}
        events.append(("response.function_call_arguments.done", done))
        events.append(self._done(index, _call_item(self.meta, call_id, name, args)))
        return events

    def _steps(self, steps: list[Any]) -> list[StreamEvent]:
        """Results of calls: each matched to its planned call of the current step."""
        events = self.close("commentary")
        for step in steps:
            action = step.get("action")
            if not self.waiting:  # a step no action announced: the model's reply did not parse
                self.act += 1
                self.waiting = [(f"{self.act}-0", action)]
                events += self._call(f"{self.act}-0", action)
            match = next((w for w in self.waiting if w[1] == action), self.waiting[0])
            self.waiting.remove(match)
            events += self._whole(_result_item(self.meta, match[0], step.get("observation")))
        return events

    def _final(self, outputs: dict[str, Any]) -> list[StreamEvent]:
        """The run's answer: the open message when it says just that, else a new one."""
        answer = _answer(outputs)
        if self.open is not None and self.text == answer:
            self.answer_id = self.open[1]
            return self.close("final_answer")
        events = self.close("commentary")
        if events:  # the model's last reply is not the answer (a ReAct agent's, say)
            self.answer_id = f"msg_{self.meta.core}_answer"
        events += self._token(answer, self.answer_id)
        return events + self.close("final_answer")
