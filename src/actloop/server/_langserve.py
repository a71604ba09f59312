"""LangServe's protocol at `/agent/`: invoke, batch, stream, stream_events and the schemas.

Request and response shapes are LangServe's (`{"input", "config", "kwargs"}` in; `{"output",
"metadata"}` or `metadata`/`data`/`end`/`error` server-sent events out), so an unmodified
`langserve.RemoteRunnable("http://host:port/agent/")` drives the served executor.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from actloop.server._http import (
    HttpError,
    JsonResponse,
    event_stream,
    guarded,
    one_line,
    read_json,
    sse,
)
from actloop.server._wire import encode

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor
    from actloop.runnables._config import RunnableConfig

__all__ = ["agent_routes", "prepare"]

_FILTERS = ("include_names", "include_types", "include_tags")
_EXCLUDES = ("exclude_names", "exclude_types", "exclude_tags")


def _executor(request: Request) -> AgentExecutor:
    return request.app.state.executor


def client_config(executor: AgentExecutor, raw: Any) -> RunnableConfig:
    """The parts of a client's config the server honours: tags, metadata, run_name, and
    `configurable.thread_id` when the executor is durable. The rest is ignored."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise HttpError(422, "config must be a JSON object")
    raw = cast(dict[str, Any], raw)
    config: dict[str, Any] = {}
    tags, metadata, name = raw.get("tags"), raw.get("metadata"), raw.get("run_name")
    if isinstance(tags, list):
        config["tags"] = [str(t) for t in cast(list[Any], tags)]
    if isinstance(metadata, dict):
        config["metadata"] = {str(k): v for k, v in cast(dict[Any, Any], metadata).items()}
    if isinstance(name, str):
        config["run_name"] = name
    configurable = raw.get("configurable")
    if isinstance(configurable, dict) and executor.checkpointer is not None:
        thread = cast(dict[str, Any], configurable).get("thread_id")
        if thread is not None:
            config["configurable"] = {"thread_id": check_thread_id(thread)}
    return cast("RunnableConfig", config)


def check_thread_id(value: Any) -> str:
    """A thread id a client may choose: 1-100 letters, digits, `-`, `_` or `.`."""
    text = str(value)
    if not (0 < len(text) <= 100) or not all(c.isalnum() or c in "-_." for c in text):
        raise HttpError(422, "thread_id must be 1-100 letters, digits, '-', '_' or '.'")
    return text


def prepare(executor: AgentExecutor, value: Any) -> dict[str, Any]:
    """The run's inputs from a client's `input` (a bare string is `{"input": it}` for an agent
    that declares no input keys); 422 with the reason when they do not fit."""
    if value is None:
        raise HttpError(422, "missing 'input'")
    if isinstance(value, str) and not executor.input_keys:
        value = {"input": value}  # agents built on a Runnable declare no keys; prompts use {input}
    try:
        return executor.prep_inputs(value)
    except (ValueError, TypeError, KeyError) as exc:
        raise HttpError(422, f"bad input: {one_line(exc)}") from None


def _kwargs(body: dict[str, Any]) -> None:
    if body.get("kwargs") not in (None, {}):
        raise HttpError(422, "kwargs are not supported")


def _metadata(run_id: str) -> dict[str, Any]:
    return {"run_id": run_id, "feedback_tokens": []}


async def invoke(request: Request) -> Response:
    """`POST /agent/invoke`: one run to its end."""
    executor, body = _executor(request), await read_json(request)
    _kwargs(body)
    inputs = prepare(executor, body.get("input"))
    config = client_config(executor, body.get("config"))
    run_id = str(uuid.uuid4())
    output = await guarded(executor.ainvoke(inputs, config))
    return JsonResponse({"output": encode(output), "metadata": _metadata(run_id)})


async def batch(request: Request) -> Response:
    """`POST /agent/batch`: several runs at once, outputs in input order."""
    executor, body = _executor(request), await read_json(request)
    _kwargs(body)
    values = body.get("inputs")
    if not isinstance(values, list) or not values:
        raise HttpError(422, "'inputs' must be a non-empty list")
    values = cast(list[Any], values)
    if len(values) > request.app.state.max_batch:
        raise HttpError(422, f"at most {request.app.state.max_batch} inputs per batch")
    raw = body.get("config")
    raws: list[Any] = cast(list[Any], raw) if isinstance(raw, list) else [raw] * len(values)
    if len(raws) != len(values):
        raise HttpError(422, "'config' must be one object or one per input")
    runs = [
        (prepare(executor, v), client_config(executor, c))
        for v, c in zip(values, raws, strict=True)
    ]
    outputs = await asyncio.gather(*(guarded(executor.ainvoke(i, c)) for i, c in runs))
    run_ids = [str(uuid.uuid4()) for _ in runs]
    metadata = {"run_ids": run_ids, "responses": [_metadata(r) for r in run_ids]}
    return JsonResponse({"output": encode(outputs), "metadata": metadata})


async def stream(request: Request) -> Response:
    """`POST /agent/stream`: the run's chunks (`actions`, `steps`, `output`) as they come."""
    executor, body = _executor(request), await read_json(request)
    _kwargs(body)
    inputs = prepare(executor, body.get("input"))
    config = client_config(executor, body.get("config"))
    thread = (config.get("configurable") or {}).get("thread_id")
    running = request.app.state.hub.thread_log(thread) if thread else None
    if running is not None and running.live:
        raise HttpError(409, f"thread {thread!r} has a run going on")
    event_log = request.app.state.hub.start(lambda: executor.astream(inputs, config), thread)
    first = sse("metadata", json.dumps({"run_id": str(uuid.uuid4())}))
    return event_stream(event_log, start=len(event_log.events), first=first)


async def stream_events(request: Request) -> Response:
    """`POST /agent/stream_events`: astream_events (v2) of the run, filtered as asked."""
    executor, body = _executor(request), await read_json(request)
    _kwargs(body)
    inputs = prepare(executor, body.get("input"))
    config = client_config(executor, body.get("config"))
    filters = {k: _names(body.get(k), k) for k in _FILTERS}
    excludes = {k: _names(body.get(k), k) for k in _EXCLUDES}

    async def source() -> AsyncIterator[Any]:
        events = executor.astream_events(inputs, config, version="v2", **filters)
        async for event in events:
            if not _excluded(event, excludes):
                meta = cast(dict[str, Any], event.get("metadata") or {})
                event["metadata"] = {k: v for k, v in meta.items() if not k.startswith("__")}
                yield event

    event_log = request.app.state.hub.start(source)
    return event_stream(event_log)


def _names(value: Any, key: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in cast(list[Any], value)):
        raise HttpError(422, f"'{key}' must be a list of strings")
    return cast(list[str], value)


def _excluded(event: dict[str, Any], excludes: dict[str, list[str] | None]) -> bool:
    names, types, tags = (excludes[k] or () for k in _EXCLUDES)
    kind = str(event.get("event", "")).split("_")[1] if "_" in str(event.get("event")) else ""
    event_tags: Sequence[str] = event.get("tags") or ()
    return event.get("name") in names or kind in types or bool(set(tags) & set(event_tags))


async def input_schema(request: Request) -> Response:
    """`GET /agent/input_schema`: JSON schema of the executor's inputs."""
    keys = _executor(request).input_keys
    return JsonResponse(_object_schema("AgentExecutorInput", keys, keys))


async def output_schema(request: Request) -> Response:
    """`GET /agent/output_schema`: JSON schema of what invoke returns."""
    executor = _executor(request)
    keys = [*executor.input_keys, *executor.output_keys]
    return JsonResponse(_object_schema("AgentExecutorOutput", keys, executor.output_keys))


async def config_schema(request: Request) -> Response:
    """`GET /agent/config_schema`: the config keys the server honours."""
    properties: dict[str, Any] = {
        "tags": {"title": "Tags", "type": "array", "items": {"type": "string"}},
        "metadata": {"title": "Metadata", "type": "object"},
        "run_name": {"title": "Run Name", "type": "string"},
    }
    if _executor(request).checkpointer is not None:
        thread = {"thread_id": {"title": "Thread Id", "type": "string"}}
        properties["configurable"] = {
            "title": "Configurable",
            "type": "object",
            "properties": thread,
        }
    return JsonResponse(
        {"title": "AgentExecutorConfig", "type": "object", "properties": properties}
    )


def _object_schema(title: str, keys: list[str], required: list[str]) -> dict[str, Any]:
    properties = {k: {"title": k.replace("_", " ").title()} for k in keys}
    return {"title": title, "type": "object", "properties": properties, "required": required}


def agent_routes() -> list[Route]:
    """The LangServe routes, mounted under `/agent`."""
    return [
        Route("/invoke", invoke, methods=["POST"]),
        Route("/batch", batch, methods=["POST"]),
        Route("/stream", stream, methods=["POST"]),
        Route("/stream_events", stream_events, methods=["POST"]),
        Route("/input_schema", input_schema, methods=["GET"]),
        Route("/output_schema", output_schema, methods=["GET"]),
        Route("/config_schema", config_schema, methods=["GET"]),
    ]
