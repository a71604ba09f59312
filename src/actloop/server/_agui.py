"""AG-UI at `POST /ag-ui`: a `RunAgentInput` in, the run's AG-UI events out as server-sent events.

`threadId` names a durable thread (`_service.ThreadService`): a new thread, or a new turn of a
finished one, on the latest user message; a `resume` list (AG-UI 1.0's answers to interrupts)
decides the calls a paused run waits on instead. The run goes on in its own task (`_hub`), so a
client that leaves stops following it, never the run.

Events, in AG-UI 1.0's JSON shapes (camelCase, no `null` for an absent field): `RUN_STARTED`;
the model's streamed text as `TEXT_MESSAGE_START/CONTENT/END` (the final answer as one message
when the model did not stream it); each tool call as `TOOL_CALL_START/ARGS/END`, its observation
as `TOOL_CALL_RESULT`; a pause for approval as `STATE_SNAPSHOT` (the client's state plus
`pending_approvals`), then `RUN_FINISHED` with an `interrupt` outcome naming each waiting call (a
call that asked a person for input: reason `input_required`, its questions as the message and
`{"answer": ...}` as the payload it takes).
Every stream ends with exactly one terminal event: `RUN_FINISHED` (its `result` the output),
`RUN_FINISHED` with a `cancelled` outcome, or `RUN_ERROR` carrying the error's type only (a cut
model stream fails the run, so it is a `RUN_ERROR`, never a finish).

The events are written here as plain JSON, so serving needs no `ag-ui-protocol` package (a
handful of shapes; the tests check every event against that package's models).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from actloop.executor import PAUSED_KEY
from actloop.server._http import HttpError, read_json
from actloop.server._langserve import check_thread_id
from actloop.server._service import Started, ThreadService, decode_event
from actloop.server._wire import as_text, json_text

__all__ = ["PROTOCOL_VERSION", "agui_routes"]

log = logging.getLogger("actloop.server")

PROTOCOL_VERSION = "1.0"
"""The AG-UI version these events follow (declared on `RUN_STARTED`)."""

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean"},
        "reason": {"type": "string"},
        "edit": {"type": "object", "description": "new tool input: run the call with it"},
    },
}
"""What an interrupt for a call waiting for approval expects as its resume payload."""

Json = dict[str, Any]


def _new_id(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:16]}"


class Translator:
    """Turns a thread's event items into AG-UI events, remembering what is open between them."""

    def __init__(self, thread_id: str, run_id: str, state: Any) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        self.state: Json = cast(Json, state) if isinstance(state, dict) else {}
        self.message: str | None = None
        """The text message being streamed, if one is open."""
        self.said: str | None = None
        """The id of the text message streamed since the last tool call, if any."""
        self.streamed = ""
        """The text streamed since the last tool call (the final answer, when it streamed)."""
        self.calls: list[tuple[Any, Any, str]] = []
        """Announced calls without a result yet: (tool, tool input, call id)."""
        self.interrupts: list[Json] = []
        self.result: Any = None

    def item(self, data: Any) -> list[Json]:
        """The events of one item of the run (see `_service`'s event shapes)."""
        if not isinstance(data, dict):
            return []
        data = cast(Json, data)
        if "token" in data:
            return self._token(str(data["token"]))
        if PAUSED_KEY in data:
            return self._paused(data[PAUSED_KEY])
        if "output" in data:
            return self._output(data["output"])
        if "actions" in data:
            return self._actions(data["actions"])
        if "steps" in data:
            return self._steps(data["steps"])
        return []

    def close(self) -> list[Json]:
        """End the open text message, if any."""
        if self.message is None:
            return []
        event = {"type": "TEXT_MESSAGE_END", "messageId": self.message}
        self.message = None
        return [event]

    def finished(self, cancelled: bool = False) -> Json:
        """`RUN_FINISHED`: its result the output; an `interrupt` outcome when the run waits for
        approval, a `cancelled` one when it was stopped."""
        event: Json = {"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id}
        if cancelled:
            event["outcome"] = {"type": "cancelled"}
        elif self.interrupts:
            event["outcome"] = {"type": "interrupt", "interrupts": self.interrupts}
        elif self.result is not None:
            event["result"] = self.result
        return event

    def snapshot(self, pending: list[Json]) -> Json:
        """`STATE_SNAPSHOT`: the client's state with the calls waiting for approval."""
        return {"type": "STATE_SNAPSHOT", "snapshot": {**self.state, PAUSED_KEY: pending}}

    def _token(self, text: str) -> list[Json]:
        events: list[Json] = []
        if self.message is None:
            self.message = self.said = _new_id("msg")
            self.streamed = ""
            events.append(
                {"type": "TEXT_MESSAGE_START", "messageId": self.message, "role": "assistant"}
            )
        self.streamed += text
        events.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": self.message, "delta": text})
        return events

    def _actions(self, actions: Any) -> list[Json]:
        events = self.close()
        for action in _dicts(actions):  # one chunk per call: the step's text is their parent
            events.extend(self._call(action, self.said))
        self.streamed = ""
        return events

    def _call(self, action: Json, parent: str | None) -> list[Json]:
        """`TOOL_CALL_START/ARGS/END` of one call, remembered until its result comes."""
        tool, tool_input = action.get("tool"), action.get("tool_input")
        call_id = str(action.get("tool_call_id") or _new_id("call"))
        self.calls.append((tool, tool_input, call_id))
        start: Json = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": str(tool)}
        if parent is not None:
            start["parentMessageId"] = parent
        args = {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": json_text(tool_input)}
        return [start, args, {"type": "TOOL_CALL_END", "toolCallId": call_id}]

    def _take(self, tool: Any, tool_input: Any) -> str | None:
        """The id of the announced call of `tool` on `tool_input` (forgotten once taken)."""
        for index, (name, given, call_id) in enumerate(self.calls):
            if name == tool and given == tool_input:
                del self.calls[index]
                return call_id
        return None

    def _steps(self, steps: Any) -> list[Json]:
        events = self.close()
        for step in _dicts(steps):
            action = cast(Json, step.get("action") or {})
            call_id = self._take(action.get("tool"), action.get("tool_input"))
            if call_id is None:  # a step never announced (a parse error's): announce it now
                events.extend(self._call(action, None))
                call_id = self.calls.pop()[2]
            events.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": _new_id("tool"),
                    "toolCallId": call_id,
                    "content": as_text(step.get("observation")),
                    "role": "tool",
                }
            )
        self.said, self.streamed = None, ""
        return events

    def _paused(self, pending: Any) -> list[Json]:
        events = self.close()
        waiting = list(_dicts(pending))
        for call in waiting:
            interrupt: Json = {
                "id": str(call.get("id")),
                "reason": "tool_approval",
                "message": f"approve the call of {call.get('tool')}",
                "toolCallId": self._take(call.get("tool"), call.get("tool_input")),
                "responseSchema": APPROVAL_SCHEMA,
            }
            if "questions" in call:  # the tool asked a person for input
                interrupt.update(_asking(call))
            if interrupt["toolCallId"] is None:  # never announced: no call id to name
                del interrupt["toolCallId"]
            self.interrupts.append(interrupt)
        return [*events, self.snapshot(waiting)]

    def _output(self, output: Any) -> list[Json]:
        """The final answer: the message that streamed it, or one message with all of it."""
        self.result = output
        text = "" if output is None else as_text(output)
        if self.message is not None and self.streamed == text:
            return self.close()
        events = self.close()
        if text:
            message = _new_id("msg")
            events += [
                {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": text},
                {"type": "TEXT_MESSAGE_END", "messageId": message},
            ]
        return events


def _asking(call: Json) -> Json:
    """The interrupt fields of a call waiting for a person's answer: its questions, and the
    payload it takes (`{"answer": the form's content | "decline" | "cancel"}`; with several
    questions, the answer is keyed by question)."""
    questions = _dicts(call.get("questions"))
    schemas = [q.get("schema") or {"type": "object"} for q in questions]
    answer: Any = (
        schemas[0]
        if len(schemas) == 1
        else {
            "type": "object",
            "properties": {str(q.get("key")): s for q, s in zip(questions, schemas, strict=True)},
        }
    )
    return {
        "reason": "input_required",
        "message": "; ".join(str(q.get("message")) for q in questions),
        "responseSchema": {"type": "object", "properties": {"answer": answer}},
    }


def _dicts(value: Any) -> list[Json]:
    items = cast(list[Any], value) if isinstance(value, list) else []
    return [cast(Json, v) for v in items if isinstance(v, dict)]


# -- the request ---------------------------------------------------------------------------------


def _required_text(body: Json, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise HttpError(422, f"'{key}' must be a non-empty string")
    if len(value) > 200:
        raise HttpError(422, f"'{key}' must be at most 200 characters")
    return value


def _content_text(content: Any) -> str:
    """A user message's text: its string content, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        raise HttpError(422, "a user message's 'content' must be a string or a list of parts")
    texts = [_part_text(p) for p in cast(list[Any], content)]
    if not all(isinstance(t, str) for t in texts):
        raise HttpError(422, "only text parts are supported in a user message")
    return "\n".join(cast(list[str], texts))


def _part_text(part: Any) -> str | None:
    if isinstance(part, dict) and cast(Json, part).get("type") == "text":
        found = cast(Json, part).get("text")
        return found if isinstance(found, str) else None
    return None


def latest_question(messages: Any) -> str:
    """The text of the latest user message; 422 when there is none."""
    if not isinstance(messages, list):
        raise HttpError(422, "'messages' must be a list of AG-UI messages")
    for message in reversed(cast(list[Any], messages)):
        if isinstance(message, dict) and cast(Json, message).get("role") == "user":
            return _content_text(cast(Json, message).get("content"))
    raise HttpError(422, "no user message to answer ('messages' holds none; or send 'resume')")


def decisions(resume: Any) -> dict[str, Any]:
    """`ThreadService.resume`'s decisions from AG-UI resume entries: `resolved` with payload
    `{"approve": true}` (or `true`) approves the call, `{"approve": false, "reason"?}` (or
    `false`) rejects it, `{"edit": input}` runs it on a new input, `{"answer": ...}` answers a
    call that asked a person for input (the form's content, "decline" or "cancel"); `cancelled`
    rejects it."""
    if not isinstance(resume, list):
        raise HttpError(422, "'resume' must be a list of {interruptId, status, payload}")
    found: dict[str, Any] = {"approve": [], "reject": {}, "edit": {}, "answer": {}}
    for entry in cast(list[Any], resume):
        call = cast(Json, entry).get("interruptId") if isinstance(entry, dict) else None
        if not isinstance(call, str):
            raise HttpError(422, "each 'resume' entry must be an object with an 'interruptId'")
        kind, value = _decision(cast(Json, entry))
        if kind == "approve":
            found["approve"].append(call)
        else:
            found[kind][call] = value
    return {kind: value or None for kind, value in found.items()}


def _decision(entry: Json) -> tuple[str, Any]:
    """One resume entry as ("approve", None), ("reject", reason), ("edit", new input) or
    ("answer", answer)."""
    status, payload = entry.get("status"), entry.get("payload")
    if status == "cancelled":
        return "reject", None
    if status != "resolved":
        raise HttpError(422, "a 'resume' entry's status must be 'resolved' or 'cancelled'")
    answer = cast(Json, payload) if isinstance(payload, dict) else {"approve": payload}
    if "edit" in answer:
        return "edit", answer["edit"]
    if "answer" in answer:
        return "answer", answer["answer"]
    verdict, reason = answer.get("approve"), answer.get("reason")
    if not isinstance(verdict, bool) or not isinstance(reason, (str, type(None))):
        raise HttpError(
            422, 'a resume payload must be {"approve": bool, "reason"?: str} or {"edit": input}'
        )
    return ("approve", None) if verdict else ("reject", reason)


async def run_agent(request: Request) -> Response:
    """`POST /ag-ui`: run the agent on a `RunAgentInput`; its AG-UI events as SSE."""
    service: ThreadService = request.app.state.threads
    body = await read_json(request)
    thread_id = check_thread_id(_required_text(body, "threadId"))
    run_id = _required_text(body, "runId")
    resumed = body.get("resume") is not None
    if resumed:
        started = await service.resume(thread_id, **decisions(body["resume"]))
    else:
        question = latest_question(body.get("messages"))
        value: Any = question if len(service.executor.input_keys) <= 1 else {"input": question}
        started = await service.start(value, thread_id)
    translator = Translator(thread_id, run_id, body.get("state"))
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    events = _events(service, started, translator, resumed)
    return StreamingResponse(_sse(events), media_type="text/event-stream", headers=headers)


async def _sse(events: AsyncIterator[Json]) -> AsyncIterator[str]:
    async for event in events:
        yield f"data: {json_text(event)}\n\n"


async def _events(
    service: ThreadService, started: Started, t: Translator, resumed: bool
) -> AsyncIterator[Json]:
    """`RUN_STARTED`, the run's events, then exactly one terminal event (also when following the
    run fails here). A client that leaves cancels this generator, never the run."""
    yield {
        "type": "RUN_STARTED",
        "threadId": t.thread_id,
        "runId": t.run_id,
        "protocolVersion": PROTOCOL_VERSION,
    }
    if resumed:  # the calls it waited on are decided: none waits now
        yield t.snapshot([])
    terminal: Json | None = None
    try:
        async for _, name, data in started.log.follow(started.first_event):
            if name == "data":
                for event in t.item(decode_event(data)):
                    yield event
                continue
            if name in ("end", "cancelled"):
                for event in t.close():
                    yield event
                terminal = t.finished(cancelled=name == "cancelled")
            else:
                terminal = _failed(await _error_type(service, started))
            break
    except Exception as exc:  # following the run failed: the stream still ends in an error
        log.exception("an AG-UI stream failed")
        terminal = _failed(type(exc).__name__)
    yield terminal or _failed("Error")


def _failed(kind: str) -> Json:
    """`RUN_ERROR` naming the error's type only (its message stays in the store and the log)."""
    message = f"the run failed ({kind}); see the server log"
    return {"type": "RUN_ERROR", "message": message, "code": kind}


async def _error_type(service: ThreadService, started: Started) -> str:
    """The type of the error the run's record holds ("Error" when it cannot be read)."""
    try:
        return await service.failure(started)
    except HttpError:
        return "Error"


def agui_routes() -> list[Route]:
    """The AG-UI route."""
    return [Route("/ag-ui", run_agent, methods=["POST"])]
