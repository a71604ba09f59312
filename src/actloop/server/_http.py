"""Request and response helpers shared by the routes: bounded JSON bodies, one-line errors, SSE."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import Any, TypeVar, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse

from actloop.exceptions import CheckpointError, ConfigurationError
from actloop.server._hub import Event, EventLog
from actloop.server._wire import json_text

__all__ = [
    "MAX_BODY",
    "MAX_DEPTH",
    "HttpError",
    "JsonResponse",
    "event_stream",
    "guarded",
    "one_line",
    "parse_int",
    "read_json",
    "sse",
]

T = TypeVar("T")
log = logging.getLogger("actloop.server")

MAX_BODY = 1 << 20
"""Default request size limit (1 MiB)."""

MAX_DEPTH = 100
"""How deep a request's JSON may nest arrays and objects."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class JsonResponse(JSONResponse):
    """Starlette's JSON response, whose text always encodes (`_wire.json_text`)."""

    def render(self, content: Any) -> bytes:
        """`content` as UTF-8 JSON."""
        return json_text(content).encode("utf-8")


class HttpError(Exception):
    """A 4xx answer with a one-line reason; the app turns it into `{"error": reason}`."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason

    def response(self) -> JSONResponse:
        """This error as the JSON response the client gets."""
        return JsonResponse({"error": self.reason}, status_code=self.status)


async def read_json(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object; 400 if malformed or nested more than `MAX_DEPTH`
    levels (the guard in `_guard` has already bounded its size)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
    try:
        data = json.loads(body or b"null", parse_constant=_no_constant)
    except RecursionError:
        raise HttpError(400, f"request body is nested more than {MAX_DEPTH} levels deep") from None
    except (ValueError, UnicodeDecodeError):
        raise HttpError(400, "request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise HttpError(400, "request body must be a JSON object")
    if _too_deep(data):  # pyright: ignore[reportUnknownArgumentType]
        raise HttpError(400, f"request body is nested more than {MAX_DEPTH} levels deep")
    if _SURROGATE_ESCAPE.search(body) and _lone_surrogate(data):
        raise HttpError(400, "request body holds a lone surrogate (an unpaired \\udXXX escape)")
    return data  # pyright: ignore[reportUnknownVariableType]


def _no_constant(name: str) -> Any:
    raise HttpError(400, f"request body holds {name}, which JSON does not allow")


def _lone_surrogate(data: Any) -> bool:
    """Whether a string of `data` holds a lone surrogate (text no UTF-8 can carry onwards)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _too_deep(data: Any) -> bool:
    """Whether `data` nests containers more than `MAX_DEPTH` deep (no recursion: any depth)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        items = cast("Iterable[Any]", value.values() if isinstance(value, dict) else value)
        stack.extend((cast(Any, v), depth + 1) for v in items if isinstance(v, (dict, list)))
    return False


def parse_int(text: str, what: str, digits: int = 18) -> int:
    """`text` as a whole number (ASCII digits, an optional `-`, at most `digits` of them); 400
    naming `what` otherwise (`²`, `٣`, 5,000 digits, ...)."""
    if not re.fullmatch(rf"-?[0-9]{{1,{digits}}}", text):
        raise HttpError(400, f"{what} must be a whole number of at most {digits} digits")
    return int(text)


def sse(name: str, data: str, ident: int | None = None) -> str:
    """One server-sent event; multi-line data is split as the format requires."""
    head = f"id: {ident}\n" if ident is not None else ""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}event: {name}\n{lines}\n"


def event_stream(
    events: EventLog | AsyncIterator[Event], *, start: int = 0, first: str = "", ids: bool = False
) -> StreamingResponse:
    """A response following an event log from event `start` (or the given events); `first` is
    sent before them."""
    source = events.follow(start) if isinstance(events, EventLog) else events

    async def body() -> AsyncIterator[str]:
        if first:
            yield first
        async for ident, name, data in source:
            yield sse(name, data, ident if ids else None)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(body(), media_type="text/event-stream", headers=headers)


def one_line(exc: BaseException, width: int = 200) -> str:
    """The exception's message on one line, cut to `width` characters."""
    return " ".join(str(exc).split())[:width]


async def guarded(awaitable: Awaitable[T]) -> T:
    """Await a run; its failure becomes a 409/422 with the reason, or a bare 500 (logged here,
    never sent: a model error's text may hold a server's address or a key)."""
    try:
        return await awaitable
    except CheckpointError as exc:
        raise HttpError(409, one_line(exc)) from None
    except ConfigurationError as exc:
        raise HttpError(422, one_line(exc)) from None
    except Exception as exc:
        log.exception("a run failed")
        raise HttpError(500, f"the run failed ({type(exc).__name__}); see the server log") from None
