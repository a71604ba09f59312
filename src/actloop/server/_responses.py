"""OpenAI's Responses API at `/v1`: the served agent as a model the official `openai` SDK calls.

`POST /v1/responses` runs one turn of a durable thread through `ThreadService` (plain, in the
background, or streamed as the SDK's server-sent events), `GET /v1/responses/{id}` reads it back
(`?stream=true`: follows it live while it runs in this process, from `starting_after`, else
rebuilds its events from the store), `GET /v1/models` lists the agent (its `name`, else
`"agent"`).

- A response is one turn of a thread: its id is `resp_{turn}_{thread}`, so the server needs no
  memory of its own to find it; `previous_response_id` starts the next turn of that thread (an
  agent with a `chat_history` input sees the earlier turns). Its output is described in
  `_response_objects`.
- A run paused for approval ends `incomplete`, its waiting calls as `mcp_approval_request` items
  (`id` is the call's id, as in the Agent Protocol's interrupts); answer them by continuing with
  `previous_response_id` and `mcp_approval_response` input items. The same turn goes on, so the
  response keeps its id.
- A failed run ends `failed` with `{"code": "server_error", "message": "the run failed (Type)"}`:
  the exception's type, never its message. Errors are OpenAI's `{"error": {"message", "type",
  "param", "code"}}` (the guard's refusals keep the server's `{"error": reason}`).
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from actloop.server._http import HttpError, JsonResponse, parse_int, read_json
from actloop.server._langserve import check_thread_id
from actloop.server._response_objects import (
    TERMINAL,
    meta_of,
    response_id,
    response_object,
    served_name,
    skeleton,
)
from actloop.server._response_stream import replay, sse_response, turn_events
from actloop.server._service import Started, ThreadService, takes_history

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor

__all__ = ["ApiError", "parse_response_id", "responses_routes"]

_ID = re.compile(r"resp_([1-9][0-9]{0,8})_(.+)", re.DOTALL)
_ROLES = {"user", "assistant", "system", "developer"}
_TEXT_PARTS = {"input_text", "output_text", "text"}


class ApiError(HttpError):
    """An error in OpenAI's shape: the one-line `reason` plus an OpenAI `code` and `param`."""

    def __init__(self, status: int, reason: str, code: str | None = None, param: str | None = None):
        super().__init__(status, reason)
        self.code = code
        self.param = param


def _openai_error(exc: HttpError) -> Response:
    """`exc` as OpenAI's error object (a 422 of the shared service is OpenAI's 400)."""
    status = 400 if exc.status == 422 else exc.status
    body = {
        "message": exc.reason,
        "type": "invalid_request_error" if status < 500 else "server_error",
        "param": getattr(exc, "param", None),
        "code": getattr(exc, "code", None),
    }
    return JsonResponse({"error": body}, status_code=status)


Handler = Callable[[Request], Awaitable[Response]]


def _openai_errors(handler: Handler) -> Handler:
    """`handler` answering its HTTP errors in OpenAI's shape."""

    @functools.wraps(handler)
    async def route(request: Request) -> Response:
        try:
            return await handler(request)
        except HttpError as exc:
            return _openai_error(exc)

    return route


def parse_response_id(text: str) -> tuple[str, int]:
    """The (thread, turn) a response id names; 404 when it is not one."""
    found = _ID.fullmatch(text)
    try:
        if found is None:
            raise HttpError(404, "")
        return check_thread_id(found.group(2)), int(found.group(1))
    except HttpError:
        raise ApiError(404, f"no response {text[:120]!r}", "not_found") from None


# requests


@dataclass(frozen=True)
class _Ask:
    """A `POST /v1/responses` request, checked."""

    messages: list[tuple[str, str]]
    """(role, text) of each input message."""
    approvals: list[tuple[str, bool, str | None]]
    """(call id, approve, reason) of each `mcp_approval_response` item."""
    previous: tuple[str, int] | None
    stream: bool
    background: bool


_REASONS = {
    "instructions": "the agent's prompt holds its instructions",
    "tools": "the agent brings its own tools",
    "conversation": "continue a conversation with previous_response_id",
    "prompt": "stored prompts are not served here",
}


def _ask(body: dict[str, Any], executor: AgentExecutor) -> _Ask:
    """The request's parts; 400 (404 for another model) naming what is wrong."""
    model, name = body.get("model"), served_name(executor)
    if not isinstance(model, str):
        raise ApiError(400, f"'model' must name the agent ({name!r})", "invalid_value", "model")
    if model != name:
        reason = f"the model {model[:100]!r} does not exist; this server serves {name!r}"
        raise ApiError(404, reason, "model_not_found", "model")
    for key, why in _REASONS.items():
        if body.get(key) not in (None, "", []):
            raise ApiError(400, f"'{key}' is not supported: {why}", "unsupported_parameter", key)
    text = body.get("text")
    form = cast("dict[str, Any]", text).get("format") if isinstance(text, dict) else None
    if form is not None and form != {"type": "text"}:
        why = "'text.format' is not supported: the agent answers in text"
        raise ApiError(400, why, "unsupported_parameter", "text.format")
    previous = body.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        raise ApiError(
            400, "'previous_response_id' must be a string", "invalid_value", "previous_response_id"
        )
    messages, approvals = _input(body.get("input"))
    return _Ask(
        messages,
        approvals,
        parse_response_id(previous) if previous is not None else None,
        _flag(body, "stream"),
        _flag(body, "background"),
    )


def _flag(body: dict[str, Any], key: str) -> bool:
    """A boolean field of the request (absent: false)."""
    value = body.get(key)
    if value is not None and not isinstance(value, bool):
        raise ApiError(400, f"'{key}' must be true or false", "invalid_value", key)
    return bool(value)


def _bad_input(reason: str) -> ApiError:
    """A 400 about `input`."""
    return ApiError(400, reason, "invalid_value", "input")


def _input(value: Any) -> tuple[list[tuple[str, str]], list[tuple[str, bool, str | None]]]:
    """The messages and approval answers of `input` (a string, or a list of items)."""
    if isinstance(value, str):
        return [("user", value)], []
    if not isinstance(value, list) or not value:
        raise _bad_input("'input' must be a string or a non-empty list of input items")
    messages: list[tuple[str, str]] = []
    approvals: list[tuple[str, bool, str | None]] = []
    for raw in cast("list[Any]", value):
        if not isinstance(raw, dict):
            raise _bad_input("each input item must be an object")
        item = cast("dict[str, Any]", raw)
        kind = item.get("type", "message")
        if kind == "message":
            messages.append(_message_in(item))
        elif kind == "mcp_approval_response":
            approvals.append(_approval_in(item))
        else:
            reason = f"input items of type {str(kind)[:60]!r} are not supported here"
            raise _bad_input(f"{reason} (send messages, or mcp_approval_response items)")
    if messages and approvals:
        raise _bad_input("send either messages or mcp_approval_response items, not both")
    ids = [ident for ident, _, _ in approvals]
    twice = next((i for i in ids if ids.count(i) > 1), None)
    if twice is not None:
        raise _bad_input(f"the approval request {twice[:100]!r} is answered more than once")
    return messages, approvals


def _message_in(item: dict[str, Any]) -> tuple[str, str]:
    """An input message as (role, text); only text content is taken."""
    role, content = item.get("role"), item.get("content")
    if role not in _ROLES:
        raise _bad_input(f"a message's role must be one of {', '.join(sorted(_ROLES))}")
    if isinstance(content, str):
        return role, content
    if not isinstance(content, list):
        raise _bad_input("a message's content must be a string or a list of text parts")
    texts: list[str] = []
    for part in cast("list[Any]", content):
        kind = cast("dict[str, Any]", part).get("type") if isinstance(part, dict) else None
        text = cast("dict[str, Any]", part).get("text") if kind in _TEXT_PARTS else None
        if not isinstance(text, str):
            raise _bad_input(f"only text content is supported (got {str(kind)[:60]!r})")
        texts.append(text)
    return role, "".join(texts)


def _approval_in(item: dict[str, Any]) -> tuple[str, bool, str | None]:
    """An `mcp_approval_response` item as (call id, approve, reason)."""
    ident, approve, reason = (
        item.get("approval_request_id"),
        item.get("approve"),
        item.get("reason"),
    )
    if not isinstance(ident, str) or not isinstance(approve, bool):
        raise _bad_input("an mcp_approval_response needs approval_request_id and approve (bool)")
    if reason is not None and not isinstance(reason, str):
        raise _bad_input("an mcp_approval_response's reason must be a string")
    return ident, approve, reason


def _inputs(executor: AgentExecutor, messages: list[tuple[str, str]], more: bool) -> Any:
    """The run's input: the last message is the question; earlier ones the chat history (an
    agent with a `chat_history` input, on a new thread only: a thread holds its own)."""
    from actloop.messages import AIMessage, HumanMessage, SystemMessage

    role, text = messages[-1]
    if role != "user":
        raise _bad_input("the last input message must be the user's")
    earlier = messages[:-1]
    if earlier and more:
        raise _bad_input(
            "with previous_response_id send only the new message: the thread holds the conversation"
        )
    if earlier and not takes_history(executor):
        raise _bad_input("this agent takes one message (it has no chat_history input)")
    keys = executor.input_keys
    if not earlier:
        return {"input": text} if not keys or "input" in keys else text
    kinds = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}
    history = [kinds.get(r, SystemMessage)(content=t) for r, t in earlier]
    return {"input": text, "chat_history": history}


async def _begin(service: ThreadService, ask: _Ask) -> Started:
    """Start the turn the request asks for: a new thread, the next turn of a finished one, or
    the paused one going on with a person's decisions."""
    if ask.previous is None:
        if ask.approvals:
            raise _bad_input("mcp_approval_response items need the paused previous_response_id")
        return await service.start(_inputs(service.executor, ask.messages, False))
    thread_id, turn = ask.previous
    runs = await service.turns(thread_id)
    given = response_id(thread_id, turn)
    if turn > len(runs):
        raise ApiError(404, f"no response {given!r}", "not_found", "previous_response_id")
    if turn < len(runs):
        latest = response_id(thread_id, len(runs))
        raise ApiError(
            409, f"response {given!r} is not the latest of its thread; continue from {latest!r}"
        )
    status = "live" if service.live(thread_id) else runs[-1].status
    if ask.approvals:
        if status != "paused":
            raise ApiError(409, f"response {given!r} waits for no approval")
        approve = [i for i, yes, _ in ask.approvals if yes]
        reject = {i: why for i, yes, why in ask.approvals if not yes}
        return await service.resume(thread_id, approve=approve or None, reject=reject or None)
    if status != "finished":
        raise ApiError(409, _why_not(given, status))
    return await service.start(_inputs(service.executor, ask.messages, True), thread_id)


def _why_not(given: str, status: str) -> str:
    """Why the turn of response `given` cannot be continued with a message."""
    if status == "paused":
        answer = "answer its mcp_approval_request items with mcp_approval_response items"
        return f"response {given!r} waits for approval: {answer}"
    if status == "live":
        return f"response {given!r} is still in progress"
    return f"response {given!r} did not complete ({status}); resume its thread first"


# routes


def _service(request: Request) -> ThreadService:
    """The durable-thread service every protocol shares."""
    return request.app.state.threads


async def create_response(request: Request) -> Response:
    """`POST /v1/responses`: a turn of a thread; the response when it ends, at once with
    `background`, or its events with `stream`."""
    service = _service(request)
    ask = _ask(await read_json(request), service.executor)
    started = await _begin(service, ask)
    meta = meta_of(service.executor, started.thread_id, started.turn)
    if ask.stream:
        return sse_response(turn_events(service, started, meta))
    if ask.background:
        return JsonResponse({**skeleton(meta, "in_progress", time.time(), []), "background": True})
    return JsonResponse(response_object(meta, await service.wait(started)))


async def get_response(request: Request) -> Response:
    """`GET /v1/responses/{id}`: the turn as it stands (in progress, or how it ended); with
    `?stream=true` its events (`starting_after=N`: those after event N), live while it runs."""
    given = request.path_params["response_id"]
    thread_id, turn = parse_response_id(given)
    stream, after = _stream_query(request)
    service = _service(request)
    runs = await service.turns(thread_id)
    if turn > len(runs):
        raise ApiError(404, f"no response {given[:120]!r}", "not_found")
    meta = meta_of(service.executor, thread_id, turn)
    current = service.running(thread_id) if stream else None
    if current is not None and current.turn == turn:
        return sse_response(turn_events(service, current, meta, after))
    body = response_object(meta, await service.decode(runs[turn - 1]))
    if not stream:
        return JsonResponse(body)
    if body["status"] not in TERMINAL:
        why = "is not going on in this server process; retrieve it without stream"
        raise ApiError(409, f"response {given!r} {why}")
    return sse_response(replay(body, after))


def _stream_query(request: Request) -> tuple[bool, int]:
    """`stream` and `starting_after` of a retrieve (-1: from the first event)."""
    query = request.query_params
    stream = query.get("stream", "false")
    if stream not in ("true", "false"):
        raise ApiError(400, "'stream' must be true or false", "invalid_value", "stream")
    after = query.get("starting_after")
    if after is not None and stream == "false":
        why = "'starting_after' needs stream=true"
        raise ApiError(400, why, "invalid_value", "starting_after")
    return stream == "true", parse_int(after, "starting_after") if after is not None else -1


def _model(name: str) -> dict[str, Any]:
    """The agent as an OpenAI model object."""
    return {"id": name, "object": "model", "created": 0, "owned_by": "actloop"}


async def list_models(request: Request) -> Response:
    """`GET /v1/models`: the served agent, as the one model."""
    return JsonResponse(
        {"object": "list", "data": [_model(served_name(_service(request).executor))]}
    )


async def get_model(request: Request) -> Response:
    """`GET /v1/models/{model}`: the agent, or 404 for another name."""
    name, given = served_name(_service(request).executor), request.path_params["model"]
    if given != name:
        raise ApiError(
            404,
            f"the model {given[:100]!r} does not exist; this server serves {name!r}",
            "model_not_found",
            "model",
        )
    return JsonResponse(_model(name))


def responses_routes() -> list[Route]:
    """OpenAI's Responses API (and the model list its clients read) at `/v1`."""
    return [
        Route("/v1/responses", _openai_errors(create_response), methods=["POST"]),
        Route("/v1/responses/{response_id}", _openai_errors(get_response), methods=["GET"]),
        Route("/v1/models", _openai_errors(list_models), methods=["GET"]),
        Route("/v1/models/{model}", _openai_errors(get_model), methods=["GET"]),
    ]
