"""Durable threads: start a run on a thread, read its state, follow it live, decide approvals.

The routes are a thin shape over `_service.ThreadService` (which every protocol shares). A
thread's events are numbered per thread: a client following `GET /threads/{id}/events` that
reconnects with `Last-Event-ID: N` gets every event after N. Events are the executor's stream
chunks (`actions`, `steps`, `output`, or `pending_approvals` for a paused run) plus
`{"token": text}` for the model's streamed text.

The server's own store reads are awaited and bounded by `STORE_WAIT` seconds: a store that does
not answer gets a 503, and slows nothing but that request. A thread's state comes from the
journal's public read side (`actloop.checkpoint`), so `actloop runs show` and
`GET /threads/{id}` tell the same history and name the same damaged entry.
"""

from __future__ import annotations

from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from actloop.checkpoint import CallRecord, RunRecord
from actloop.checkpoint._entries import DAMAGE
from actloop.serialization import loads
from actloop.server._http import HttpError, JsonResponse, event_stream, parse_int, read_json
from actloop.server._langserve import check_thread_id
from actloop.server._service import Started, ThreadService, error_type, public_id
from actloop.server._wire import encode

__all__ = ["thread_routes"]


def _service(request: Request) -> ThreadService:
    return request.app.state.threads


def _step(call: CallRecord) -> dict[str, Any]:
    observation = encode(call.observation) if call.finished else None
    return {
        "id": call.id,
        "tool": call.tool,
        "tool_input": encode(call.tool_input),
        "observation": observation,
    }


def _summary(record: RunRecord, inputs: Any = None) -> dict[str, Any]:
    """A thread's line in the list; `inputs` are its decoded, encoded inputs (decoded here when
    not given)."""
    if inputs is None:
        try:
            inputs = encode(loads(record.inputs))
        except DAMAGE:
            inputs = {}  # damaged: `GET /threads/{id}` names it
    thread_id, turn = public_id(record.thread_id)
    return {
        "thread_id": thread_id,
        "turn": turn,
        "status": record.status,
        "input": cast("dict[str, Any]", inputs).get("input") if isinstance(inputs, dict) else None,
        "created": record.created,
        "updated": record.updated,
    }


async def list_threads(request: Request) -> Response:
    """`GET /threads`: every thread (its latest turn), newest first."""
    records = await _service(request).threads()
    return JsonResponse({"threads": [_summary(r) for r in records]})


async def get_thread(request: Request) -> Response:
    """`GET /threads/{id}`: status, inputs, steps, pending approvals, output or error."""
    service = _service(request)
    thread_id = check_thread_id(request.path_params["thread_id"])
    found = await service.history(thread_id)
    event_log = service.log(thread_id)
    inputs = encode(found.inputs)
    state = _summary(found.record, inputs)
    state["inputs"] = inputs
    state["steps"] = [_step(call) for call in found.calls]
    state["pending_approvals"] = found.pending
    state["output"] = encode(found.output) if found.output is not None else None
    state["error"] = error_type(found.record.error)
    state["live"] = bool(event_log and event_log.live) or await service.held_elsewhere(found.record)
    state["events"] = len(event_log.events) if event_log else 0
    return JsonResponse(state)


def _accepted(started: Started) -> Response:
    body = {"thread_id": started.thread_id, "first_event": started.first_event}
    return JsonResponse(body, status_code=202)


async def start_run(request: Request) -> Response:
    """`POST /threads` `{"input": ..., "thread_id"?}`: start a durable run (a new turn of a
    finished thread); 202 at once."""
    body = await read_json(request)
    given = body.get("thread_id")
    return _accepted(await _service(request).start(body.get("input"), given))


def _decisions(body: dict[str, Any]) -> dict[str, Any]:
    approve, reject, edit = body.get("approve"), body.get("reject"), body.get("edit")
    if approve is not None and approve is not True and not _strings(approve):
        raise HttpError(422, "'approve' must be true or a list of call ids")
    if reject is not None and not _strings(reject) and not isinstance(reject, dict):
        raise HttpError(422, "'reject' must be a list of call ids or {id: reason}")
    if edit is not None and not isinstance(edit, dict):
        raise HttpError(422, "'edit' must be {id: new tool input}")
    return {"approve": approve, "reject": reject, "edit": edit}


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in cast(list[Any], value))


async def resume_run(request: Request) -> Response:
    """`POST /threads/{id}/resume` `{"approve", "reject", "edit"}`: go on with a paused or
    failed run; 202 at once, follow it at `/threads/{id}/events`."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    decisions = _decisions(await read_json(request))
    return _accepted(await _service(request).resume(thread_id, **decisions))


async def follow_thread(request: Request) -> Response:
    """`GET /threads/{id}/events`: the thread's events (SSE, with ids); `Last-Event-ID: N`
    (or `?after=N`) resumes after event N."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    last = request.headers.get("last-event-id") or request.query_params.get("after")
    after = parse_int(last, "Last-Event-ID (or ?after=)") if last is not None else -1
    return event_stream(await _service(request).events(thread_id, after), ids=True)


def thread_routes() -> list[Route]:
    """The durable-thread routes."""
    return [
        Route("/threads", list_threads, methods=["GET"]),
        Route("/threads", start_run, methods=["POST"]),
        Route("/threads/{thread_id}", get_thread, methods=["GET"]),
        Route("/threads/{thread_id}/events", follow_thread, methods=["GET"]),
        Route("/threads/{thread_id}/resume", resume_run, methods=["POST"]),
    ]
