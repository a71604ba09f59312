"""Threads, in the Agent Protocol's shape (the LangGraph server's API): create, get, search,
delete, state, history; plus actloop's live events of a thread.

The routes are a thin shape over `_service.ThreadService` (which every protocol shares); runs on a
thread are in `agent_protocol`. A thread's `values` and status are described in
`agent_protocol/_state.py` and `agent_protocol/_views.py`.

`GET /threads/{id}/events` (actloop's extension, what the page follows) streams the thread's
events in this process, numbered per thread: a client that reconnects with `Last-Event-ID: N` (or
`?after=N`) gets every event after N. Events are the executor's stream chunks (`actions`, `steps`,
`output`, or `pending_approvals` for a paused run) plus `{"token": text}` for the model's streamed
text; `GET /threads/{id}/state` says in `X-Actloop-Last-Event` the number of the thread's last
event when it was read, so a page showing a state can follow the run from there.

The server's own store reads are bounded by `STORE_WAIT` seconds (503 past it). A thread's state
comes from the journal's public read side (`actloop.checkpoint`), so `actloop runs show` and
`GET /threads/{id}/state` tell the same history and name the same damaged entry.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from actloop.server._http import HttpError, JsonResponse, event_stream, parse_int, read_json
from actloop.server._langserve import check_thread_id
from actloop.server._service import public_id
from actloop.server.agent_protocol import (
    Loaded,
    Transcript,
    book,
    load,
    metadata,
    service,
    state_view,
    status,
    thread_view,
)

if TYPE_CHECKING:
    from actloop.checkpoint import RunRecord

__all__ = ["thread_routes"]

_STATUSES = ("idle", "busy", "interrupted", "error")


async def create_thread(request: Request) -> Response:
    """`POST /threads` `{"thread_id"?, "metadata"?, "if_exists"?: "raise" | "do_nothing"}`: a
    new thread with no run (409 when the id is taken, unless `do_nothing`: then that thread)."""
    body = await read_json(request)
    given = body.get("thread_id")
    thread_id = check_thread_id(given) if given is not None else str(uuid.uuid4())
    metadata: Any = body.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise HttpError(422, "'metadata' must be an object")
    kept = book(request)
    exists = thread_id in kept.empty or bool(await service(request).turns(thread_id))
    if exists and body.get("if_exists", "raise") != "do_nothing":
        raise HttpError(409, f"thread {thread_id!r} already exists")
    if not exists:
        kept.empty[thread_id] = time.time()
        kept.metadata[thread_id] = dict(cast(dict[str, Any], metadata))
    return JsonResponse(thread_view(request, await load(request, thread_id)))


async def get_thread(request: Request) -> Response:
    """`GET /threads/{id}`: the thread (status, values, interrupts)."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    return JsonResponse(thread_view(request, await load(request, thread_id)))


async def update_thread(request: Request) -> Response:
    """`PATCH /threads/{id}` `{"metadata": {...}}`: merge into the thread's metadata (kept by
    this process); the thread."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    given: Any = (await read_json(request)).get("metadata") or {}
    if not isinstance(given, dict):
        raise HttpError(422, "'metadata' must be an object")
    loaded = await load(request, thread_id)
    book(request).metadata.setdefault(thread_id, {}).update(cast(dict[str, Any], given))
    return JsonResponse(thread_view(request, loaded))


async def delete_thread(request: Request) -> Response:
    """`DELETE /threads/{id}`: forget the thread and its runs (409 while one goes on)."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    kept = book(request)
    saved = await service(request).delete(thread_id)
    if not saved and kept.empty.pop(thread_id, None) is None:
        raise HttpError(404, f"no thread {thread_id!r}")
    kept.empty.pop(thread_id, None)
    kept.metadata.pop(thread_id, None)
    kept.runs.forget(thread_id)
    return Response(status_code=204)


async def search_threads(request: Request) -> Response:
    """`POST /threads/search` `{"ids", "status", "metadata", "values", "limit", "offset",
    "sort_by", "sort_order"}`: threads, by default the latest updated first."""
    body = await read_json(request)
    limit, offset = _whole(body.get("limit", 10), "limit"), _whole(body.get("offset", 0), "offset")
    ids = body.get("ids")
    wanted = body.get("status")
    if wanted is not None and wanted not in _STATUSES:
        raise HttpError(422, f"'status' must be one of {', '.join(_STATUSES)}")
    records = await service(request).threads()
    known = [public_id(r.thread_id)[0] for r in records]
    known += [t for t in book(request).empty if t not in known]
    if ids is not None:
        if not isinstance(ids, list):
            raise HttpError(422, "'ids' must be a list of thread ids")
        chosen = {str(i) for i in cast(list[Any], ids)}
        known = [t for t in known if t in chosen]
    if body.get("values") is None and _sort_key(body) in ("updated_at", "thread_id"):
        picked = _picked(request, records, known, body)[offset : offset + limit]
        return JsonResponse([thread_view(request, await load(request, t)) for t in picked])
    found: list[dict[str, Any]] = []
    for thread_id in known:
        view = thread_view(request, await load(request, thread_id))
        if _matches(view, wanted, body.get("metadata"), body.get("values")):
            found.append(view)
    found.sort(
        key=lambda v: str(v.get(_sort_key(body), "")),
        reverse=body.get("sort_order", "desc") != "asc",
    )
    return JsonResponse(found[offset : offset + limit])


def _picked(
    request: Request, records: list[RunRecord], known: list[str], body: dict[str, Any]
) -> list[str]:
    """The threads a search without a `values` filter finds, in order, from their latest
    records alone (no journal read: only the page asked for is loaded)."""
    latest = {public_id(r.thread_id)[0]: r for r in records}
    kept = book(request)
    wanted, meta = body.get("status"), body.get("metadata")
    found: list[tuple[Any, str]] = []
    for thread_id in known:
        record = latest.get(thread_id)
        light = Loaded(thread_id, [record] if record else [], Transcript())
        view = {"status": status(request, light), "metadata": metadata(request, thread_id)}
        if _matches({**view, "values": {}}, wanted, meta, None):
            when = record.updated if record else kept.empty.get(thread_id, 0.0)
            found.append((when if _sort_key(body) == "updated_at" else thread_id, thread_id))
    found.sort(reverse=body.get("sort_order", "desc") != "asc")
    return [thread_id for _, thread_id in found]


def _sort_key(body: dict[str, Any]) -> str:
    key = body.get("sort_by", "updated_at")
    if key not in ("thread_id", "status", "created_at", "updated_at"):
        raise HttpError(422, "'sort_by' must be thread_id, status, created_at or updated_at")
    return str(key)


def _whole(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10_000:
        raise HttpError(422, f"{what!r} must be a whole number from 0 to 10000")
    return value


def _matches(view: dict[str, Any], status: Any, metadata: Any, values: Any) -> bool:
    if status is not None and view["status"] != status:
        return False
    for wanted, have in ((metadata, view["metadata"]), (values, view["values"])):
        if wanted is None:
            continue
        if not isinstance(wanted, dict):
            raise HttpError(422, "'metadata' and 'values' must be objects")
        if any(have.get(k) != v for k, v in cast(dict[str, Any], wanted).items()):
            return False
    return True


async def thread_state(request: Request) -> Response:
    """`GET /threads/{id}/state`: the thread's current state (values, next, tasks, interrupts)."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    before = _last_event(request, thread_id)
    loaded = await load(request, thread_id)
    for _ in range(2):  # a state no event came in during: the page follows from its last one
        if _last_event(request, thread_id) == before:
            break
        before = _last_event(request, thread_id)
        loaded = await load(request, thread_id)
    headers = {"X-Actloop-Last-Event": str(before)}
    return JsonResponse(state_view(request, loaded), headers=headers)


def _last_event(request: Request, thread_id: str) -> int:
    event_log = service(request).log(thread_id)
    return len(event_log.events) - 1 if event_log else -1


async def thread_history(request: Request) -> Response:
    """`GET|POST /threads/{id}/history` `{"limit"}`: the state after each turn, newest first
    (one state per turn, not per step)."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    if request.method == "POST":
        limit = _whole((await read_json(request)).get("limit", 10), "limit")
    else:
        limit = parse_int(request.query_params.get("limit", "10"), "limit")
    loaded = await load(request, thread_id, history=True)
    return JsonResponse(list(reversed(loaded.states))[: max(limit, 0)])


async def follow_thread(request: Request) -> Response:
    """`GET /threads/{id}/events`: the thread's events (SSE, with ids); `Last-Event-ID: N`
    (or `?after=N`) resumes after event N."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    last = request.headers.get("last-event-id") or request.query_params.get("after")
    after = parse_int(last, "Last-Event-ID (or ?after=)") if last is not None else -1
    return event_stream(await service(request).events(thread_id, after), ids=True)


def thread_routes() -> list[Route]:
    """The thread routes (served always: an executor without a store gets an in-memory one)."""
    return [
        Route("/threads", create_thread, methods=["POST"]),
        Route("/threads/search", search_threads, methods=["POST"]),
        Route("/threads/{thread_id}", get_thread, methods=["GET"]),
        Route("/threads/{thread_id}", update_thread, methods=["PATCH"]),
        Route("/threads/{thread_id}", delete_thread, methods=["DELETE"]),
        Route("/threads/{thread_id}/state", thread_state, methods=["GET"]),
        Route("/threads/{thread_id}/history", thread_history, methods=["GET", "POST"]),
        Route("/threads/{thread_id}/events", follow_thread, methods=["GET"]),
    ]
