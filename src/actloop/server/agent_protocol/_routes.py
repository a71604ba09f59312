"""The Agent Protocol's assistants and runs routes (threads are in `server/_threads.py`).

Runs start and resume through `ThreadService`; see `_runs` for the stream and `_decide` for the
resume value of `command={"resume": ...}`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from actloop.server._http import HttpError, JsonResponse, event_stream, parse_int, read_json
from actloop.server._hub import Event
from actloop.server._langserve import check_thread_id
from actloop.server._service import Started
from actloop.server._wire import json_text
from actloop.server.agent_protocol._decide import decisions, run_input
from actloop.server.agent_protocol._runs import MODES, Run, failed, parts
from actloop.server.agent_protocol._views import GRAPH, assistant, book, load, service

__all__ = ["assistant_routes", "run_routes"]


# assistants


def _assistant_id(request: Request, value: Any) -> str:
    """The served agent's assistant id when `value` names it (its graph id or its name)."""
    executor = request.app.state.executor
    if value in (GRAPH, executor.name):
        return GRAPH
    if value is None:
        raise HttpError(422, "missing 'assistant_id'")
    raise HttpError(404, f"no assistant {str(value)[:100]!r} (this server serves {GRAPH!r})")


def _assistant(request: Request) -> dict[str, Any]:
    return assistant(request.app.state.executor, book(request).started)


async def search_assistants(request: Request) -> Response:
    """`POST /assistants/search`: the one assistant, if it matches the filters."""
    body = await read_json(request)
    found = _assistant(request)
    graph, name = body.get("graph_id"), body.get("name")
    meta: Any = body.get("metadata") or {}
    matches = (
        graph in (None, GRAPH) and name in (None, found["name"]) and _has(found["metadata"], meta)
    )
    offset = _count(body.get("offset", 0), "offset")
    return JsonResponse([found] if matches and offset == 0 else [])


def _has(metadata: dict[str, Any], wanted: Any) -> bool:
    if not isinstance(wanted, dict):
        raise HttpError(422, "'metadata' must be an object")
    return all(metadata.get(k) == v for k, v in cast(dict[str, Any], wanted).items())


def _count(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise HttpError(422, f"{what!r} must be a whole number >= 0")
    return value


async def get_assistant(request: Request) -> Response:
    """`GET /assistants/{id}`."""
    _assistant_id(request, request.path_params["assistant_id"])
    return JsonResponse(_assistant(request))


async def assistant_schemas(request: Request) -> Response:
    """`GET /assistants/{id}/schemas`: input, output, state and config schemas."""
    _assistant_id(request, request.path_params["assistant_id"])
    executor = request.app.state.executor
    keys: list[str] = list(executor.input_keys) or ["input"]  # a Runnable agent's prompt: {input}
    outputs: list[str] = list(executor.output_keys) or ["output"]
    message_list = {"type": "array", "items": {"type": "object"}}
    state = _schema("State", {**_props(keys + outputs), "messages": message_list}, [])
    return JsonResponse(
        {
            "graph_id": GRAPH,
            "input_schema": _schema("Input", _props(keys), keys),
            "output_schema": _schema("Output", _props(outputs), outputs),
            "state_schema": state,
            "config_schema": _schema("Config", {}, []),
            "context_schema": None,
        }
    )


def _props(keys: list[str]) -> dict[str, Any]:
    return {k: {"title": k.replace("_", " ").title()} for k in keys}


def _schema(title: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"title": title, "type": "object", "properties": properties, "required": required}


def assistant_routes() -> list[Route]:
    """The assistants routes."""
    return [
        Route("/assistants/search", search_assistants, methods=["POST"]),
        Route("/assistants/{assistant_id}", get_assistant, methods=["GET"]),
        Route("/assistants/{assistant_id}/schemas", assistant_schemas, methods=["GET"]),
    ]


# runs


def _modes(value: Any) -> set[str]:
    chosen = cast(list[Any], value if isinstance(value, list) else [value or "values"])
    for mode in chosen:
        if mode not in MODES:
            raise HttpError(422, f"unknown stream_mode {str(mode)[:40]!r}")
    return {str(m) for m in chosen}


async def _create(request: Request, thread_id: str | None) -> tuple[Run, dict[str, Any]]:
    """Start a run from the request's body (a new thread when `thread_id` is None)."""
    body = await read_json(request)
    assistant_id = _assistant_id(request, body.get("assistant_id"))
    modes = _modes(body.get("stream_mode"))
    threads, kept = service(request), book(request)
    missing_ok = thread_id is None or body.get("if_not_exists") == "create"
    thread_id = check_thread_id(thread_id or uuid.uuid4().hex)
    loaded = await load(request, thread_id, missing_ok=missing_ok)
    base = loaded.transcript
    command = body.get("command")
    if command is not None:
        resume = _resume(command)
        if not loaded.turns:
            raise HttpError(409, f"thread {thread_id!r} has no run to resume")
        started = await threads.resume(thread_id, **decisions(resume, base.pending))
        base.resume_at()
    else:
        value = run_input(request.app.state.executor, body.get("input"))
        started = await threads.start(value, thread_id)
        base.begin(started.run_id, value)
    _keep(request, thread_id, body.get("metadata"))
    run = kept.runs.add(thread_id, assistant_id, started, base, modes)
    return run, body


def _resume(command: Any) -> Any:
    if not isinstance(command, dict):
        raise HttpError(422, "'command' must be an object")
    command = cast(dict[str, Any], command)
    other = sorted(set(command) - {"resume"})
    if other:
        raise HttpError(422, f"command {other[0]!r} is not supported (only 'resume')")
    return command.get("resume")  # langgraph-sdk leaves out a None resume


def _keep(request: Request, thread_id: str, metadata: Any) -> None:
    kept = book(request)
    kept.empty.pop(thread_id, None)
    if isinstance(metadata, dict) and metadata:
        kept.metadata.setdefault(thread_id, {}).update(cast(dict[str, Any], metadata))


def _headers(run: Run) -> dict[str, str]:
    where = f"/threads/{run.thread_id}/runs/{run.run_id}"
    return {"Content-Location": where}


async def create_run(request: Request) -> Response:
    """`POST /threads/{id}/runs` (or `POST /runs`): start a run in the background."""
    run, _ = await _create(request, request.path_params.get("thread_id"))
    return JsonResponse(run.view(), headers=_headers(run))


async def wait_run(request: Request) -> Response:
    """`POST /threads/{id}/runs/wait` (or `/runs/wait`): start a run, answer its end state."""
    run, _ = await _create(request, request.path_params.get("thread_id"))
    return JsonResponse(await _outcome(request, run), headers=_headers(run))


async def _outcome(request: Request, run: Run) -> dict[str, Any]:
    """Wait for the run's end: the thread's values, with `__interrupt__` for a pause or
    `__error__` for a failure."""
    await _ended(run.started)
    status = run.status
    if status == "error":
        return {"__error__": await failed(service(request), run)}
    loaded = await load(request, run.thread_id)
    values = loaded.transcript.values()
    if loaded.transcript.pending:
        values["__interrupt__"] = loaded.transcript.interrupts()
    return values


async def _ended(started: Started) -> None:
    async for _, name, _ in started.log.follow(started.first_event):
        if name != "data":
            return


async def stream_run(request: Request) -> Response:
    """`POST /threads/{id}/runs/stream` (or `/runs/stream`): start a run and stream it."""
    run, _ = await _create(request, request.path_params.get("thread_id"))
    return _stream(request, run, run.modes, -1)


def _stream(request: Request, run: Run, modes: set[str], after: int) -> Response:
    async def events() -> AsyncIterator[Event]:
        async for name, data, ident in parts(service(request), run, modes, after):
            yield cast(Event, (ident, name, json_text(data)))

    response = event_stream(events(), ids=True)
    response.headers.update(_headers(run))
    response.headers["Location"] = f"/threads/{run.thread_id}/runs/{run.run_id}/stream"
    return response


def _run(request: Request) -> Run:
    thread_id = check_thread_id(request.path_params["thread_id"])
    run = book(request).runs.runs.get(request.path_params["run_id"])
    if run is None or run.thread_id != thread_id:
        raise HttpError(
            404, f"no run {request.path_params['run_id'][:100]!r} of thread {thread_id!r}"
        )
    return run


async def get_run(request: Request) -> Response:
    """`GET /threads/{id}/runs/{run_id}`."""
    return JsonResponse(_run(request).view())


async def list_runs(request: Request) -> Response:
    """`GET /threads/{id}/runs?limit=&offset=&status=`: the thread's runs, newest first."""
    thread_id = check_thread_id(request.path_params["thread_id"])
    await load(request, thread_id)
    query = request.query_params
    limit = parse_int(query.get("limit", "10"), "limit")
    offset = parse_int(query.get("offset", "0"), "offset")
    wanted = query.get("status")
    runs = [r.view() for r in book(request).runs.of_thread(thread_id)]
    runs = [r for r in runs if wanted in (None, r["status"])]
    return JsonResponse(runs[offset : offset + max(limit, 0)])


async def join_run(request: Request) -> Response:
    """`GET /threads/{id}/runs/{run_id}/join`: wait for the run's end; its end state."""
    run = _run(request)
    return JsonResponse(await _outcome(request, run))


async def join_stream(request: Request) -> Response:
    """`GET /threads/{id}/runs/{run_id}/stream`: the run's stream from its start, or after
    `Last-Event-ID`; `?stream_mode=` (repeatable) picks modes, the run's own by default."""
    run = _run(request)
    asked = [m for m in request.query_params.getlist("stream_mode") if m]
    modes = _modes(asked) if asked else run.modes
    last = request.headers.get("last-event-id")
    after = parse_int(last, "Last-Event-ID") if last else -1
    return _stream(request, run, modes, after)


async def cancel_run(request: Request) -> Response:
    """`POST /threads/{id}/runs/{run_id}/cancel`: stop the run (it stays resumable); 202."""
    run = _run(request)
    if request.query_params.get("action", "interrupt") != "interrupt":
        raise HttpError(422, "only action=interrupt is supported")
    if run.status == "running":
        await service(request).cancel(run.thread_id)
    return Response(status_code=202)


def run_routes() -> list[Route]:
    """The runs routes, on a thread and stateless."""
    return [
        Route("/runs", create_run, methods=["POST"]),
        Route("/runs/wait", wait_run, methods=["POST"]),
        Route("/runs/stream", stream_run, methods=["POST"]),
        Route("/threads/{thread_id}/runs", create_run, methods=["POST"]),
        Route("/threads/{thread_id}/runs", list_runs, methods=["GET"]),
        Route("/threads/{thread_id}/runs/wait", wait_run, methods=["POST"]),
        Route("/threads/{thread_id}/runs/stream", stream_run, methods=["POST"]),
        Route("/threads/{thread_id}/runs/{run_id}", get_run, methods=["GET"]),
        Route("/threads/{thread_id}/runs/{run_id}/join", join_run, methods=["GET"]),
        Route("/threads/{thread_id}/runs/{run_id}/stream", join_stream, methods=["GET"]),
        Route("/threads/{thread_id}/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
    ]
