"""The Responses API's stream: the SDK's server-sent events for a turn, live from the thread's
event log (`turn_events`) or rebuilt from the store (`replay`), numbered from 0 so that
`starting_after=N` resumes after event N. Every stream ends with exactly one terminal event."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from starlette.responses import StreamingResponse

from actloop.checkpoint._entries import call_id as journal_call_id
from actloop.server._http import HttpError, log, sse
from actloop.server._response_objects import (
    TERMINAL,
    Meta,
    answer_text,
    approval_item,
    call_item,
    failure,
    json_arguments,
    message_id,
    message_item,
    response_object,
    result_item,
    skeleton,
    text_part,
)
from actloop.server._service import Started, ThreadService, decode_event
from actloop.server._wire import json_text

__all__ = ["ItemStream", "StreamEvent", "numbered", "replay", "sse_response", "turn_events"]


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
                events += self._whole(approval_item(self.meta, waiting))
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
        events = self._add(message_item(ident, None, "in_progress", None))
        self.open, self.text = (len(self.items) - 1, ident), ""
        where = {"item_id": ident, "output_index": self.open[0], "content_index": 0}
        return [*events, ("response.content_part.added", {**where, "part": text_part("")})]

    def _token(self, text: str, ident: str | None = None) -> list[StreamEvent]:
        """A piece of the model's text, in the open message (opened first if none is)."""
        events = self._open(ident or message_id(self.meta, self.act + 1)) if not self.open else []
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
            ("response.content_part.done", {**where, "part": text_part(self.text)}),
            self._done(index, message_item(ident, self.text, status, phase)),
        ]

    def _actions(self, actions: list[Any]) -> list[StreamEvent]:
        """The calls the agent planned: a new step unless the last item was a plan too."""
        events = self.close("commentary")
        if not self.planning:  # the first action of a step
            self.act, self.planning, self.waiting = self.act + 1, True, []
        for action in actions:
            call_id = journal_call_id(self.act, len(self.waiting))
            self.waiting.append((call_id, action))
            events += self._call(call_id, action)
        return events

    def _call(self, call_id: str, action: Any) -> list[StreamEvent]:
        """A call item, its arguments streamed in one delta."""
        name, args = str(action.get("tool")), action.get("tool_input")
        events = self._add(call_item(self.meta, call_id, name, args, done=False))
        index = len(self.items) - 1
        where = {"item_id": f"fc_{self.meta.core}_{call_id}", "output_index": index}
        text = json_arguments(args)
        events.append(("response.function_call_arguments.delta", {**where, "delta": text}))
        done = {**where, "arguments": text, "name": name}
        events.append(("response.function_call_arguments.done", done))
        events.append(self._done(index, call_item(self.meta, call_id, name, args)))
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
            events += self._whole(result_item(self.meta, match[0], step.get("observation")))
        return events

    def _final(self, outputs: dict[str, Any]) -> list[StreamEvent]:
        """The run's answer: the open message when it says just that, else a new one."""
        answer = answer_text(outputs)
        if self.open is not None and self.text == answer:
            self.answer_id = self.open[1]
            return self.close("final_answer")
        events = self.close("commentary")
        if events:  # the model's last reply is not the answer (a ReAct agent's, say)
            self.answer_id = f"msg_{self.meta.core}_answer"
        events += self._token(answer, self.answer_id)
        return events + self.close("final_answer")


def numbered(after: int) -> Callable[[str, dict[str, Any]], str]:
    """Writes the stream's events, numbered from 0; those numbered up to `after` as nothing."""
    sequence = -1

    def event(kind: str, fields: dict[str, Any]) -> str:
        nonlocal sequence
        sequence += 1
        if sequence <= after:
            return ""
        return sse(kind, json_text({"type": kind, **fields, "sequence_number": sequence}))

    return event


def sse_response(events: AsyncIterator[str]) -> StreamingResponse:
    """A stream of server-sent events (empty strings, skipped events, are not sent)."""

    async def body() -> AsyncIterator[str]:
        async for text in events:
            if text:
                yield text

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(body(), media_type="text/event-stream", headers=headers)


async def turn_events(
    service: ThreadService, started: Started, meta: Meta, after: int = -1
) -> AsyncIterator[str]:
    """The turn's stream: created, in progress, its items, then exactly one terminal event
    (the events numbered up to `after` are left out)."""
    event = numbered(after)
    created = time.time()
    for kind in ("response.created", "response.in_progress"):
        yield event(kind, {"response": skeleton(meta, "in_progress", created, [])})
    stream, ended = ItemStream(meta), "cancelled"
    try:
        async for _, name, data in started.log.follow(started.first_event):
            if name != "data":
                ended = name
                break
            for kind, fields in stream.feed(decode_event(data)):
                yield event(kind, fields)
        for kind, fields in stream.close(None, "incomplete"):
            yield event(kind, fields)
        kind, body = await _terminal(service, meta, stream, ended)
    except Exception as exc:  # the store did not answer, or a bug: still one terminal event
        if isinstance(exc, HttpError):
            reason = exc.reason
        else:
            log.exception("a Responses stream failed")
            reason = f"the stream failed ({type(exc).__name__}); see the server log"
        body = skeleton(meta, "failed", created, stream.items)
        body["error"] = {"code": "server_error", "message": reason}
        kind = "response.failed"
    yield event(kind, {"response": body})


async def _terminal(
    service: ThreadService, meta: Meta, stream: ItemStream, ended: str
) -> tuple[str, dict[str, Any]]:
    """The terminal event: the saved turn as `GET` answers it (a cancelled run: what streamed)."""
    if ended == "cancelled":
        body = skeleton(meta, "cancelled", time.time(), stream.items)
        body["error"] = {"code": "server_error", "message": "the run was cancelled"}
        return "response.failed", body
    found = await service.history(meta.thread_id, meta.turn)
    body = response_object(meta, found, stream.answer_id)
    if body["status"] not in TERMINAL:  # the log ended, the record did not say how
        body["status"], body["error"] = "failed", failure("Error")
    return TERMINAL[body["status"]], body


async def replay(body: dict[str, Any], after: int) -> AsyncIterator[str]:
    """The events of a turn that is over, rebuilt from what was saved: each item whole."""
    event = numbered(after)
    start: dict[str, Any] = {**body, "status": "in_progress", "output": []}
    start.update(error=None, completed_at=None)
    for kind in ("response.created", "response.in_progress"):
        yield event(kind, {"response": start})
    for index, item in enumerate(body["output"]):
        for kind in ("response.output_item.added", "response.output_item.done"):
            yield event(kind, {"output_index": index, "item": item})
    yield event(TERMINAL[body["status"]], {"response": body})
