"""Durable threads: start a run on a thread, read its state, follow it live, decide approvals.

A thread's run goes on in its own task (`_hub`), whose events are numbered per thread: a client
following `GET /threads/{id}/events` that reconnects with `Last-Event-ID: N` gets every event
after N. Events are the executor's stream chunks (`actions`, `steps`, `output`, or
`pending_approvals` for a paused run) plus `{"token": text}` for the model's streamed text.

The server's own store reads (the thread list, a thread's state, the checks before a run starts)
are awaited and bounded by `STORE_WAIT` seconds: a store that does not answer gets a 503, and
slows nothing but that request. A thread's state comes from the journal's public read side
(`actloop.checkpoint`), so `actloop runs show` and `GET /threads/{id}` tell the same history and
name the same damaged entry.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from actloop.checkpoint import (
    BaseCheckpointer,
    CallRecord,
    RunRecord,
    StoreTimeoutError,
    ThreadHistory,
    thread_history,
)
from actloop.checkpoint._entries import DAMAGE
from actloop.exceptions import CheckpointError
from actloop.executor import PAUSED_KEY, Resume
from actloop.serialization import loads
from actloop.server._http import (
    HttpError,
    JsonResponse,
    event_stream,
    one_line,
    parse_int,
    read_json,
)
from actloop.server._langserve import check_thread_id, prepare
from actloop.server._wire import encode

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor
    from actloop.runnables._config import RunnableConfig

__all__ = ["STORE_WAIT", "error_type", "thread_routes"]

_T = TypeVar("_T")
log = logging.getLogger("actloop.server")

STORE_WAIT = 5.0
"""Seconds the server waits for one of its own store reads before answering 503."""


def _store(executor: AgentExecutor) -> BaseCheckpointer:
    assert executor.checkpointer is not None
    return executor.checkpointer


async def _read(call: Awaitable[_T]) -> _T:
    """A store read of the server's own: 503 when the store does not answer in time or fails
    (the reason is logged, never sent: it names the store's address)."""
    try:
        return await call
    except StoreTimeoutError:
        raise HttpError(503, "the checkpoint store did not answer in time; try again") from None
    except CheckpointError:
        log.exception("a checkpoint store read failed")
        raise HttpError(503, "the checkpoint store is unavailable; see the server log") from None


def _step(call: CallRecord) -> dict[str, Any]:
    observation = encode(call.observation) if call.finished else None
    return {
        "id": call.id,
        "tool": call.tool,
        "tool_input": encode(call.tool_input),
        "observation": observation,
    }


def error_type(error: str | None) -> str | None:
    """What a client sees of a failed run's error (`"Type: message"`): the type alone. The
    message may hold a key or an internal address; it stays in the store and the server log."""
    if error is None:
        return None
    name = error.partition(":")[0].strip()
    return name if name.isidentifier() else "Error"


def _summary(record: RunRecord, inputs: Any = None) -> dict[str, Any]:
    """A thread's line in the list; `inputs` are its decoded, encoded inputs (decoded here when
    not given)."""
    if inputs is None:
        try:
            inputs = encode(loads(record.inputs))
        except DAMAGE:
            inputs = {}  # damaged: `GET /threads/{id}` names it
    return {
        "thread_id": record.thread_id,
        "status": record.status,
        "input": cast("dict[str, Any]", inputs).get("input") if isinstance(inputs, dict) else None,
        "created": record.created,
        "updated": record.updated,
    }


async def list_threads(request: Request) -> Response:
    """`GET /threads`: every saved run, newest first."""
    store = _store(request.app.state.executor)
    records = await _read(store.alist_runs(timeout=STORE_WAIT))
    records.sort(key=lambda r: r.updated, reverse=True)
    return JsonResponse({"threads": [_summary(r) for r in records]})


async def _history(store: BaseCheckpointer, thread_id: str) -> ThreadHistory:
    record = await _read(store.aget(thread_id, timeout=STORE_WAIT))
    if record is None:
        raise HttpError(404, f"no thread {thread_id!r}")
    entries = await _read(store.aentries(thread_id, timeout=STORE_WAIT))
    try:
        return thread_history(record, entries)
    except CheckpointError as exc:  # damage, named as `actloop runs show` names it
        raise HttpError(500, one_line(exc, 400)) from None


async def get_thread(request: Request) -> Response:
    """`GET /threads/{id}`: status, inputs, steps, pending approvals, output or error."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    found = await _history(_store(request.app.state.executor), thread_id)
    event_log = request.app.state.hub.thread_log(thread_id)
    inputs = encode(found.inputs)
    state = _summary(found.record, inputs)
    state["inputs"] = inputs
    state["steps"] = [_step(call) for call in found.calls]
    state["pending_approvals"] = found.pending
    state["output"] = encode(found.output) if found.output is not None else None
    state["error"] = error_type(found.record.error)
    state["live"] = bool(event_log and event_log.live)
    state["events"] = len(event_log.events) if event_log else 0
    return JsonResponse(state)


def _tokens_and_chunks(
    executor: AgentExecutor, inputs: Any, config: RunnableConfig
) -> Callable[[], AsyncIterator[Any]]:
    """The run's top-level chunks, plus `{"token": text}` for each piece of model text."""

    async def source() -> AsyncIterator[Any]:
        async for event in executor.astream_events(inputs, config, version="v2"):
            kind = event["event"]
            if kind == "on_chat_model_stream":
                text = getattr(event["data"].get("chunk"), "text", "")
                if text:
                    yield {"token": text}
            elif event.get("parent_ids"):
                continue
            elif kind == "on_chain_stream" and not _final(event["data"]["chunk"]):
                yield event["data"]["chunk"]
            elif kind == "on_chain_end":
                yield event["data"]["output"]  # the final chunk (its stream event may be late)

    return source


def _final(chunk: Any) -> bool:
    return isinstance(chunk, dict) and ("output" in chunk or PAUSED_KEY in chunk)


def _start(request: Request, thread_id: str, inputs: Any, config: RunnableConfig) -> Response:
    """Start the run of `inputs` (or a `Resume`) on the thread in its own task; 202 at once."""
    hub = request.app.state.hub
    event_log = hub.thread_log(thread_id)
    if event_log is not None and event_log.live:
        raise HttpError(409, f"thread {thread_id!r} has a run going on")
    executor = request.app.state.executor
    event_log = hub.start(_tokens_and_chunks(executor, inputs, config), thread_id)
    body = {"thread_id": thread_id, "first_event": len(event_log.events)}
    return JsonResponse(body, status_code=202)


async def start_run(request: Request) -> Response:
    """`POST /threads` `{"input": ..., "thread_id"?}`: start a durable run; 202 at once."""
    executor, body = request.app.state.executor, await read_json(request)
    inputs = prepare(executor, body.get("input"))
    given = body.get("thread_id")
    thread_id = check_thread_id(given) if given is not None else uuid.uuid4().hex[:12]
    if await _read(_store(executor).aget(thread_id, timeout=STORE_WAIT)) is not None:
        raise HttpError(409, f"thread {thread_id!r} already has a run; resume it instead")
    config = cast("RunnableConfig", {"configurable": {"thread_id": thread_id}})
    return _start(request, thread_id, inputs, config)


def _decisions(body: dict[str, Any]) -> dict[str, Any]:
    approve, reject, edit = body.get("approve"), body.get("reject"), body.get("edit")
    if approve is not None and approve is not True and not _strings(approve):
        raise HttpError(422, "'approve' must be true or a list of call ids")
    if reject is not None and not _strings(reject) and not isinstance(reject, dict):
        raise HttpError(422, "'reject' must be a list of call ids or {id: reason}")
    if edit is not None and not isinstance(edit, dict):
        raise HttpError(422, "'edit' must be {id: new tool input}")
    return {"approve": approve, "reject": reject, "edit": edit}


def _check_ids(decisions: dict[str, Any], waiting: set[str]) -> None:
    """422 before the run starts when a decision names a call that is not waiting."""
    for key in ("approve", "reject", "edit"):
        value = decisions[key]
        if not isinstance(value, (list, dict)):
            continue
        ids = [str(v) for v in cast("list[Any] | dict[Any, Any]", value)]
        unknown = sorted(set(ids) - waiting)
        if unknown:
            raise HttpError(
                422, f"no call waits with id {unknown[0]!r} (waiting: {', '.join(sorted(waiting))})"
            )


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in cast(list[Any], value))


async def resume_run(request: Request) -> Response:
    """`POST /threads/{id}/resume` `{"approve", "reject", "edit"}`: go on with a paused or
    failed run; 202 at once, follow it at `/threads/{id}/events`."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    executor, body = request.app.state.executor, await read_json(request)
    decisions = _decisions(body)
    found = await _history(_store(executor), thread_id)
    if found.status == "finished":
        raise HttpError(409, f"thread {thread_id!r} already finished; there is nothing to resume")
    if found.pending:
        _check_ids(decisions, {str(p.get("id")) for p in found.pending})
    config = cast("RunnableConfig", {"configurable": {"thread_id": thread_id}})
    return _start(request, thread_id, Resume.of(**decisions), config)


async def follow_thread(request: Request) -> Response:
    """`GET /threads/{id}/events`: the thread's events (SSE, with ids); `Last-Event-ID: N`
    (or `?after=N`) resumes after event N."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    event_log = request.app.state.hub.thread_log(thread_id)
    if event_log is None:
        raise HttpError(404, f"no run of thread {thread_id!r} was started by this server")
    last = request.headers.get("last-event-id") or request.query_params.get("after")
    after = parse_int(last, "Last-Event-ID (or ?after=)") if last is not None else -1
    return event_stream(event_log, start=after + 1, ids=True)


def thread_routes() -> list[Route]:
    """The durable-thread routes (served when the executor has a checkpointer)."""
    return [
        Route("/threads", list_threads, methods=["GET"]),
        Route("/threads", start_run, methods=["POST"]),
        Route("/threads/{thread_id}", get_thread, methods=["GET"]),
        Route("/threads/{thread_id}/events", follow_thread, methods=["GET"]),
        Route("/threads/{thread_id}/resume", resume_run, methods=["POST"]),
    ]
