"""Durable threads: start a run on a thread, read its state, follow it live, decide approvals.

A thread's run goes on in its own task (`_hub`), whose events are numbered per thread: a client
following `GET /threads/{id}/events` that reconnects with `Last-Event-ID: N` gets every event
after N. Events are the executor's stream chunks (`actions`, `steps`, `output`, or
`pending_approvals` for a paused run) plus `{"token": text}` for the model's streamed text.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from actloop.agents import AgentAction, AgentFinish
from actloop.checkpoint import BaseCheckpointer, JournalEntry, RunRecord
from actloop.exceptions import CheckpointError, OutputParserException
from actloop.executor._durable import PAUSED_KEY, resume_request
from actloop.executor._journal import call_id, decode_plan
from actloop.serialization import loads
from actloop.server._http import HttpError, event_stream, one_line, read_json
from actloop.server._langserve import check_thread_id, prepare
from actloop.server._wire import encode

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor
    from actloop.runnables._config import RunnableConfig

__all__ = ["thread_routes", "thread_steps"]


def _store(executor: AgentExecutor) -> BaseCheckpointer:
    assert executor.checkpointer is not None
    return executor.checkpointer


def thread_steps(entries: list[JournalEntry]) -> list[dict[str, Any]]:
    """Every call the journal planned: id, tool, input (after edits), observation (or None)."""
    calls: list[dict[str, Any]] = []
    where: dict[tuple[int, int], dict[str, Any]] = {}
    act = 0
    for entry in entries:
        if entry.kind == "plan":
            plan = decode_plan(entry.data or "null")
            if isinstance(plan, OutputParserException):
                plan = AgentAction("_Exception", "", str(plan))
            if isinstance(plan, AgentFinish):
                continue
            actions = cast(list[AgentAction], plan if isinstance(plan, list) else [plan])
            for i, action in enumerate(actions):
                step: dict[str, Any] = {"id": call_id(act, i), "tool": action.tool}
                step.update(tool_input=encode(action.tool_input), observation=None)
                where[act, i] = step
                calls.append(step)
            act += 1
        elif entry.kind in ("obs", "decision") and (entry.act or 0, entry.call or 0) in where:
            step = where[entry.act or 0, entry.call or 0]
            value = loads(entry.data or "null")
            if entry.kind == "obs":
                step["observation"] = encode(value)
            elif value["decision"] == "edit":
                step["tool_input"] = encode(value["tool_input"])
    return calls


def _summary(record: RunRecord) -> dict[str, Any]:
    return {
        "thread_id": record.thread_id,
        "status": record.status,
        "input": encode(loads(record.inputs)).get("input"),
        "created": record.created,
        "updated": record.updated,
    }


async def list_threads(request: Request) -> Response:
    """`GET /threads`: every saved run, newest first."""
    records = await _store(request.app.state.executor).alist_runs()
    records.sort(key=lambda r: r.updated, reverse=True)
    return JSONResponse({"threads": [_summary(r) for r in records]})


async def get_thread(request: Request) -> Response:
    """`GET /threads/{id}`: status, inputs, steps, pending approvals, output or error."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    store = _store(request.app.state.executor)
    record = await store.aget(thread_id)
    if record is None:
        raise HttpError(404, f"no thread {thread_id!r}")
    event_log = request.app.state.hub.thread_log(thread_id)
    state = _summary(record)
    state["inputs"] = encode(loads(record.inputs))
    state["steps"] = thread_steps(await store.aentries(thread_id))
    state["pending_approvals"] = loads(record.pending) if record.pending else []
    state["output"] = encode(loads(record.output)) if record.output else None
    state["error"] = record.error
    state["live"] = bool(event_log and event_log.live)
    state["events"] = len(event_log.events) if event_log else 0
    return JSONResponse(state)


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
    hub = request.app.state.hub
    event_log = hub.thread_log(thread_id)
    if event_log is not None and event_log.live:
        raise HttpError(409, f"thread {thread_id!r} has a run going on")
    executor = request.app.state.executor
    event_log = hub.start(_tokens_and_chunks(executor, inputs, config), thread_id)
    body = {"thread_id": thread_id, "first_event": len(event_log.events)}
    return JSONResponse(body, status_code=202)


async def start_run(request: Request) -> Response:
    """`POST /threads` `{"input": ..., "thread_id"?}`: start a durable run; 202 at once."""
    executor, body = request.app.state.executor, await read_json(request)
    inputs = prepare(executor, body.get("input"))
    given = body.get("thread_id")
    thread_id = check_thread_id(given) if given is not None else uuid.uuid4().hex[:12]
    if await _store(executor).aget(thread_id) is not None:
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
    record = await _store(executor).aget(thread_id)
    if record is not None and record.pending:
        _check_ids(decisions, {p["id"] for p in loads(record.pending)})
    try:
        inputs, config = resume_request(executor, thread_id, None, **decisions)
    except CheckpointError as exc:
        raise HttpError(409, one_line(exc)) from None
    return _start(request, thread_id, inputs, config)


async def follow_thread(request: Request) -> Response:
    """`GET /threads/{id}/events`: the thread's events (SSE, with ids); `Last-Event-ID: N`
    (or `?after=N`) resumes after event N."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    event_log = request.app.state.hub.thread_log(thread_id)
    if event_log is None:
        raise HttpError(404, f"no run of thread {thread_id!r} was started by this server")
    last = request.headers.get("last-event-id") or request.query_params.get("after")
    if last is not None and not last.lstrip("-").isdigit():
        raise HttpError(400, "Last-Event-ID must be an event number")
    return event_stream(event_log, start=int(last) + 1 if last is not None else 0, ids=True)


def thread_routes() -> list[Route]:
    """The durable-thread routes (served when the executor has a checkpointer)."""
    return [
        Route("/threads", list_threads, methods=["GET"]),
        Route("/threads", start_run, methods=["POST"]),
        Route("/threads/{thread_id}", get_thread, methods=["GET"]),
        Route("/threads/{thread_id}/events", follow_thread, methods=["GET"]),
        Route("/threads/{thread_id}/resume", resume_run, methods=["POST"]),
    ]
