"""A2A 1.x (agent-to-agent) over JSON-RPC 2.0: the agent card and the task methods.

`GET /.well-known/agent-card.json` is the agent card (its skills are the agent's tools) and
`POST /a2a` the JSON-RPC endpoint: `SendMessage`, `SendStreamingMessage`, `GetTask`,
`CancelTask`, `SubscribeToTask`, `ListTasks`, `GetExtendedAgentCard`. The JSON is written by hand
in the protocol's ProtoJSON shape (camelCase fields, enum names), so the server needs no
`a2a-sdk` (nor protobuf): the official client reads it as it reads the SDK's own server.

Tasks are durable threads, through `_service.ThreadService` only: a task is one turn of a thread
(task id `T` for the first turn, `T:2`, `T:3`, ... for later ones: the store ids, so the mapping
needs no memory of the server) and its `contextId` is the thread `T`. A message naming a
`contextId` (and no task) is a new turn of that thread; a run paused for approval is a task in
`TASK_STATE_INPUT_REQUIRED` whose status message holds the calls that wait (a data part
`{"pending_approvals": [...]}`), and a message on that task with a data part `{"approve": true}`
(or a list of call ids), `{"reject": [ids] or {id: reason}}` or `{"edit": {id: new input}}`
resumes it; a call that asked a person for input (its `questions` in the pending item) is
answered with `{"answer": {id: the form's content, "decline" or "cancel"}}`. A failed run is
`TASK_STATE_FAILED` with only its exception type as the message.

`CancelTask` stops a run going on in this server: the store saves it failed by its
`CancelledError`, which reads as `TASK_STATE_CANCELED` (also after a restart); A2A takes a
canceled task as final, while the Agent Protocol may still resume it (`command.resume`).
"""

from __future__ import annotations

import datetime
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from actloop.checkpoint import RunRecord, ThreadHistory
from actloop.checkpoint._entries import DAMAGE
from actloop.serialization import loads
from actloop.server._http import HttpError, JsonResponse, one_line, read_json
from actloop.server._hub import Busy
from actloop.server._langserve import check_thread_id
from actloop.server._service import (
    Started,
    ThreadService,
    decode_event,
    error_type,
    public_id,
    turn_id,
)
from actloop.server._wire import encode, json_text

__all__ = ["A2A_PATH", "CARD_PATH", "a2a_routes", "agent_card"]

log = logging.getLogger("actloop.server")

A2A_PATH = "/a2a"
"""The JSON-RPC endpoint."""
CARD_PATH = "/.well-known/agent-card.json"
"""The agent card's well-known path (public: the guard lets a GET through without the token)."""
VERSION = "1.0"
"""The A2A protocol version served."""

WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
_TERMINAL = frozenset({COMPLETED, FAILED, CANCELED})
_DECISIONS = ("approve", "reject", "edit", "answer")
_MAX_PAGE = 100

# JSON-RPC and A2A error codes, with the reason A2A's ErrorInfo names.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED = -32004
CONTENT_TYPE_NOT_SUPPORTED = -32005
VERSION_NOT_SUPPORTED = -32009
_REASONS = {
    INVALID_REQUEST: "INVALID_REQUEST",
    METHOD_NOT_FOUND: "METHOD_NOT_FOUND",
    INVALID_PARAMS: "INVALID_PARAMS",
    INTERNAL_ERROR: "INTERNAL_ERROR",
    TASK_NOT_FOUND: "TASK_NOT_FOUND",
    TASK_NOT_CANCELABLE: "TASK_NOT_CANCELABLE",
    PUSH_NOT_SUPPORTED: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    UNSUPPORTED: "UNSUPPORTED_OPERATION",
    CONTENT_TYPE_NOT_SUPPORTED: "CONTENT_TYPE_NOT_SUPPORTED",
    VERSION_NOT_SUPPORTED: "VERSION_NOT_SUPPORTED",
}
_FROM_HTTP = {404: TASK_NOT_FOUND, 409: UNSUPPORTED, 400: INVALID_PARAMS, 422: INVALID_PARAMS}


class RpcError(Exception):
    """A JSON-RPC error answer: `code` from the tables above and a one-line message."""

    def __init__(self, code: int, message: str) -> None:
        """An error with JSON-RPC `code` and a one-line `message`."""
        super().__init__(message)
        self.code = code
        self.message = message

    def body(self, ident: Any) -> dict[str, Any]:
        """The JSON-RPC error response (with A2A's `google.rpc.ErrorInfo` detail)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        reason = _REASONS.get(self.code)
        if reason is not None:
            error["data"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": reason,
                    "domain": "a2a-protocol.org",
                    "metadata": {},
                }
            ]
        return {"jsonrpc": "2.0", "id": ident, "error": error}


@dataclass(frozen=True)
class Call:
    """One JSON-RPC call: its params and where it came in."""

    service: ThreadService
    params: dict[str, Any]
    request: Request
    secured: bool


Result = dict[str, Any] | AsyncIterator[dict[str, Any]]


# the agent card


def agent_card(request: Request, secured: bool, *, extended: bool = False) -> dict[str, Any]:
    """The card of the served agent (`secured`: the server asks for a token); without
    `extended`, a secured server leaves the skills out (the public card names the agent and how
    to authenticate; `GetExtendedAgentCard`, which needs the token, has them)."""
    from actloop import __version__

    executor = _service(request).executor
    endpoint = str(request.base_url).rstrip("/") + A2A_PATH
    card: dict[str, Any] = {
        "name": executor.name or "actloop agent",
        "description": "An agent served by actloop: send it a task in text; it answers in text "
        "and may call its tools (its skills) on the way.",
        "supportedInterfaces": [
            {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": VERSION}
        ],
        "url": endpoint,
        "preferredTransport": "JSONRPC",
        "version": __version__,
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "extendedAgentCard": secured,
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [_skill(tool) for tool in executor.tools] if extended or not secured else [],
    }
    if secured:
        card["securitySchemes"] = {
            "bearer": {
                "httpAuthSecurityScheme": {
                    "scheme": "Bearer",
                    "description": "the token `actloop serve` was started with",
                }
            }
        }
        card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    return card


def _skill(tool: Any) -> dict[str, Any]:
    """One skill of the card: a tool's name and description."""
    name = str(tool.name)
    return {
        "id": name,
        "name": name,
        "description": str(getattr(tool, "description", "") or name),
        "tags": ["tool"],
    }


# the JSON-RPC endpoint


def _service(request: Request) -> ThreadService:
    """The thread service every protocol shares."""
    return request.app.state.threads


async def rpc_route(request: Request, secured: bool) -> Response:
    """`POST /a2a`: one JSON-RPC 2.0 request (no batches); a streaming method answers SSE."""
    try:
        body = await read_json(request)
    except HttpError as exc:
        if exc.status != 400:
            raise  # 413: the body passed the limit on the way
        bad_json = exc.reason.startswith("request body is not valid JSON")
        error = RpcError(PARSE_ERROR if bad_json else INVALID_REQUEST, exc.reason)
        return JsonResponse(error.body(None))
    ident = body.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (str, int, type(None))):
        ident = None
    try:
        method, params = _envelope(body)
        _check_version(request)
        result = await _dispatch(method, Call(_service(request), params, request, secured))
    except RpcError as exc:
        return JsonResponse(exc.body(ident))
    if isinstance(result, dict):
        return JsonResponse({"jsonrpc": "2.0", "id": ident, "result": result})
    return _stream(ident, result)


def _envelope(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The method and params of a JSON-RPC 2.0 request; -32600 when it is not one."""
    if body.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "'jsonrpc' must be exactly \"2.0\"")
    ident = body.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (str, int, type(None))):
        raise RpcError(INVALID_REQUEST, "'id' must be a string, an integer or null")
    method = body.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "'method' must be a non-empty string")
    params = body.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "'params' must be an object")
    return method, cast("dict[str, Any]", params)


def _check_version(request: Request) -> None:
    """An `A2A-Version` other than 1.x is refused (-32009); none is taken as 1.0."""
    given = request.headers.get("a2a-version", "").strip()
    if given and given.split(".")[0] != "1":
        raise RpcError(
            VERSION_NOT_SUPPORTED,
            f"A2A version {given[:20]!r} is not supported; this server speaks {VERSION}",
        )


async def _dispatch(method: str, call: Call) -> Result:
    """Run the method; the service's HTTP errors become their JSON-RPC codes."""
    handler = _METHODS.get(method)
    if handler is None:
        if method in _PUSH_METHODS:
            raise RpcError(PUSH_NOT_SUPPORTED, "push notifications are not supported")
        raise RpcError(METHOD_NOT_FOUND, f"no method {method[:60]!r}")
    try:
        return await handler(call)
    except RpcError:
        raise
    except HttpError as exc:
        raise RpcError(_FROM_HTTP.get(exc.status, INTERNAL_ERROR), exc.reason) from None
    except Busy as exc:
        raise RpcError(INTERNAL_ERROR, one_line(exc)) from None
    except Exception as exc:
        raise _internal(exc) from None


def _internal(exc: Exception) -> RpcError:
    """An unexpected failure: logged here, its type alone for the client."""
    log.exception("an A2A call failed")
    return RpcError(INTERNAL_ERROR, f"internal error ({type(exc).__name__}); see the server log")


def _stream(ident: Any, results: AsyncIterator[dict[str, Any]]) -> StreamingResponse:
    """Each result as an SSE `data:` line holding its JSON-RPC response; a failure on the way
    ends the stream with an `error` event holding a JSON-RPC error (a one-line reason)."""

    async def body() -> AsyncIterator[str]:
        """The SSE text of the results."""
        try:
            async for result in results:
                yield f"data: {json_text({'jsonrpc': '2.0', 'id': ident, 'result': result})}\n\n"
        except (HttpError, RpcError, Busy) as exc:
            reason = exc.reason if isinstance(exc, HttpError) else one_line(exc)
            code = exc.code if isinstance(exc, RpcError) else INTERNAL_ERROR
            failure = RpcError(code, reason).body(ident)
            yield f"event: error\ndata: {json_text(failure)}\n\n"
        except Exception as exc:
            yield f"event: error\ndata: {json_text(_internal(exc).body(ident))}\n\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(body(), media_type="text/event-stream", headers=headers)


# params


def _get(obj: dict[str, Any], camel: str, snake: str | None = None) -> Any:
    """A field by its ProtoJSON (camelCase) name, or its proto (snake_case) name."""
    if camel in obj:
        return obj[camel]
    return obj.get(snake) if snake else None


def _text_field(obj: dict[str, Any], camel: str, snake: str | None = None) -> str | None:
    """A string field, None when absent or empty; -32602 when it is not a string."""
    value = _get(obj, camel, snake)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, f"'{camel}' must be a string")
    return value


def _task_ref(params: dict[str, Any]) -> tuple[str, int]:
    """The thread and turn a task id names; -32001 when it cannot name one."""
    task_id = _text_field(params, "id")
    if task_id is None:
        raise RpcError(INVALID_PARAMS, "'id' (the task id) is required")
    thread, turn = public_id(task_id)
    try:
        check_thread_id(thread)
    except HttpError:
        raise RpcError(TASK_NOT_FOUND, f"no task {task_id[:100]!r}") from None
    if turn_id(thread, turn) != task_id:
        raise RpcError(TASK_NOT_FOUND, f"no task {task_id[:100]!r}")
    return thread, turn


def _message(params: dict[str, Any]) -> dict[str, Any]:
    """The params' message, checked: an object with a non-empty list of text or data parts."""
    found = params.get("message")
    if not isinstance(found, dict):
        raise RpcError(INVALID_PARAMS, "'message' must be an object")
    message = cast("dict[str, Any]", found)
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        raise RpcError(INVALID_PARAMS, "'message.parts' must be a non-empty list")
    for part in cast("list[Any]", parts):
        if not isinstance(part, dict):
            raise RpcError(INVALID_PARAMS, "each part must be an object")
        if "text" not in part and "data" not in part:
            kind = "url" if "url" in part else "raw" if "raw" in part else "empty"
            raise RpcError(
                CONTENT_TYPE_NOT_SUPPORTED, f"a {kind} part is not supported: send text or data"
            )
        if "text" in part and not isinstance(part["text"], str):
            raise RpcError(INVALID_PARAMS, "a text part's 'text' must be a string")
    return message


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A checked message's parts."""
    return cast("list[dict[str, Any]]", message["parts"])


def _input(message: dict[str, Any]) -> Any:
    """The run's input from a message: its text (parts joined by new lines), or the object of
    its data parts (their fields are the agent's inputs; text, if any, is `input`)."""
    texts = [p["text"] for p in _parts(message) if "text" in p]
    objects = [p["data"] for p in _parts(message) if isinstance(p.get("data"), dict)]
    text = "\n".join(texts)
    if not objects:
        if not text.strip():
            raise RpcError(INVALID_PARAMS, "the message holds no text nor data object to act on")
        return text
    value: dict[str, Any] = {}
    for item in objects:
        value.update(cast("dict[str, Any]", item))
    if texts:
        value.setdefault("input", text)
    return value


def _decisions(message: dict[str, Any], task_id: str) -> dict[str, Any]:
    """The approval decisions of a message on a task that waits for input (its data parts)."""
    found: dict[str, Any] = {}
    for part in _parts(message):
        data = part.get("data")
        if isinstance(data, dict):
            found.update(cast("dict[str, Any]", data))
    unknown = sorted(set(found) - set(_DECISIONS))
    if not found or unknown:
        what = f"unknown field {unknown[0]!r}" if unknown else "no decision"
        raise RpcError(
            INVALID_PARAMS,
            f"task {task_id!r} waits for approval or an answer and the message holds {what}: "
            'send a data part {"approve": true or [ids]}, {"reject": [ids] or {id: reason}}, '
            '{"edit": {id: new input}} or {"answer": {id: answer}}',
        )
    approve, reject, edit, answer = (found.get(k) for k in _DECISIONS)
    if approve is not None and approve is not True and not _strings(approve):
        raise RpcError(INVALID_PARAMS, "'approve' must be true or a list of call ids")
    if reject is not None and not _strings(reject) and not isinstance(reject, dict):
        raise RpcError(INVALID_PARAMS, "'reject' must be a list of call ids or {id: reason}")
    if edit is not None and not isinstance(edit, dict):
        raise RpcError(INVALID_PARAMS, "'edit' must be {id: new tool input}")
    return {"approve": approve, "reject": reject, "edit": edit, "answer": answer}


def _strings(value: Any) -> bool:
    """Whether `value` is a list of strings."""
    return isinstance(value, list) and all(isinstance(v, str) for v in cast("list[Any]", value))


# tasks


def _timestamp(seconds: float) -> str:
    """Seconds since the epoch as an RFC 3339 time in UTC (ProtoJSON's Timestamp)."""
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return moment.isoformat().replace("+00:00", "Z")


def _state(service: ThreadService, record: RunRecord, latest: bool) -> str:
    """The A2A state of a saved run (`latest`: it is its thread's latest turn)."""
    thread, _ = public_id(record.thread_id)
    if latest and service.live(thread):
        return WORKING
    if record.status == "failed" and error_type(record.error) == "CancelledError":
        return CANCELED  # a cancelled run is saved as failed by its CancelledError (resumable)
    status = {"finished": COMPLETED, "paused": INPUT_REQUIRED, "failed": FAILED}.get(record.status)
    return status or WORKING  # running: in another process, or interrupted, not taken over yet


def _agent_message(task_id: str, context_id: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A message of the agent on the task (a fresh message id)."""
    return {
        "messageId": uuid.uuid4().hex,
        "contextId": context_id,
        "taskId": task_id,
        "role": "ROLE_AGENT",
        "parts": parts,
    }


def _input_message(task_id: str, context_id: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The saved input of a turn as the user's message (text when it is one string)."""
    question = inputs.get("input")
    rest = {k: v for k, v in inputs.items() if k not in ("input", "chat_history")}
    if isinstance(question, str) and not rest:
        parts: list[dict[str, Any]] = [{"text": question}]
    else:
        parts = [{"data": encode({k: v for k, v in inputs.items() if k != "chat_history"})}]
    return {
        "messageId": f"{task_id}-input",
        "contextId": context_id,
        "taskId": task_id,
        "role": "ROLE_USER",
        "parts": parts,
    }


def _answer(output: dict[str, Any]) -> dict[str, Any]:
    """The final answer as the task's artifact."""
    value = output.get("output") if "output" in output else output
    part = {"text": value} if isinstance(value, str) else {"data": encode(value)}
    return {"artifactId": "answer", "name": "answer", "parts": [part]}


def _waiting(task_id: str, context_id: str, pending: list[dict[str, Any]]) -> dict[str, Any]:
    """The status message of a task waiting for approval: what waits, and the calls as data."""
    names = ", ".join(f"{p.get('tool')} ({p.get('id')})" for p in pending if "questions" not in p)
    asks = [_asks(p) for p in pending if "questions" in p]
    waits = [f"Waiting for approval: {names}."] if names else []
    waits += [f"Waiting for an answer: {', '.join(asks)}."] if asks else []
    text = " ".join([*waits, "Answer on this task with a data part."])
    data = {"pending_approvals": encode(pending)}
    return _agent_message(task_id, context_id, [{"text": text}, {"data": data}])


def _asks(pending: dict[str, Any]) -> str:
    """A call waiting for a person's answer, and what it asks."""
    questions = cast("list[Any]", pending.get("questions") or [])
    asked = "; ".join(str(cast("dict[str, Any]", q).get("message")) for q in questions)
    return f"{pending.get('tool')} ({pending.get('id')}) asks: {asked}"


def _status(
    state: str, task_id: str, context_id: str, *, pending: Any = None, error: str | None = None
) -> dict[str, Any]:
    """A task status in `state` now, with the message that state carries (the calls that
    wait; a failure's type)."""
    status: dict[str, Any] = {"state": state, "timestamp": _timestamp(_now())}
    if state == INPUT_REQUIRED and pending:
        status["message"] = _waiting(task_id, context_id, pending)
    elif state == FAILED:
        status["message"] = _agent_message(task_id, context_id, [{"text": error or "Error"}])
    return status


def _now() -> float:
    """The time now, in seconds since the epoch."""
    return datetime.datetime.now(datetime.timezone.utc).timestamp()


def _task(
    service: ThreadService,
    record: RunRecord,
    inputs: dict[str, Any],
    *,
    latest: bool,
    output: dict[str, Any] | None = None,
    pending: list[dict[str, Any]] | None = None,
    history_length: int | None = None,
) -> dict[str, Any]:
    """A saved run as an A2A task."""
    task_id = record.thread_id
    context_id, _ = public_id(task_id)
    state = _state(service, record, latest)
    status = _status(state, task_id, context_id, pending=pending, error=error_type(record.error))
    status["timestamp"] = _timestamp(record.updated)
    task: dict[str, Any] = {"id": task_id, "contextId": context_id, "status": status}
    if state == COMPLETED and output is not None:
        task["artifacts"] = [_answer(output)]
    history = [_input_message(task_id, context_id, inputs)]
    if history_length is not None:
        history = history[len(history) - history_length :] if history_length else []
    if history:
        task["history"] = history
    return task


def _from_history(
    service: ThreadService, found: ThreadHistory, latest: bool, history_length: int | None = None
) -> dict[str, Any]:
    """A decoded saved run as an A2A task."""
    return _task(
        service,
        found.record,
        found.inputs,
        latest=latest,
        output=found.output,
        pending=found.pending,
        history_length=history_length,
    )


async def _find(service: ThreadService, thread: str, turn: int) -> tuple[ThreadHistory, bool]:
    """The saved run of a task, and whether it is its thread's latest turn; -32001 if none."""
    runs = await service.turns(thread)
    if not 0 < turn <= len(runs):
        raise RpcError(TASK_NOT_FOUND, f"no task {turn_id(thread, turn)!r}")
    return await service.decode(runs[turn - 1]), turn == len(runs)


def _history_length(params: dict[str, Any], holder: dict[str, Any] | None = None) -> int | None:
    """`historyLength` of the params (or of `holder`), None when absent; -32602 if bad."""
    value = _get(holder if holder is not None else params, "historyLength", "history_length")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RpcError(INVALID_PARAMS, "'historyLength' must be a whole number >= 0")
    return value


# methods


async def get_task(call: Call) -> Result:
    """`GetTask {id, historyLength?}`: the task's state, answer artifact and input."""
    thread, turn = _task_ref(call.params)
    found, latest = await _find(call.service, thread, turn)
    return _from_history(call.service, found, latest, _history_length(call.params))


async def cancel_task(call: Call) -> Result:
    """`CancelTask {id}`: stop the task's run going on in this server; -32002 for a task that
    is over, waits for input, or runs elsewhere."""
    thread, turn = _task_ref(call.params)
    found, latest = await _find(call.service, thread, turn)
    state = _state(call.service, found.record, latest)
    if state != WORKING or not await call.service.cancel(thread):
        why = {
            COMPLETED: "is completed",
            FAILED: "has failed",
            CANCELED: "is already canceled",
            INPUT_REQUIRED: "waits for input: reject its calls to end it",
        }.get(state, "has no run going on in this server")
        raise RpcError(TASK_NOT_CANCELABLE, f"task {found.record.thread_id!r} {why}")
    found, latest = await _find(call.service, thread, turn)
    return _from_history(call.service, found, latest)


async def _begin(call: Call) -> tuple[Started, dict[str, Any]]:
    """Start the run a message asks for (a new task, a new turn of its context, or the resumed
    task that waited for input); the started run and the task as it stands."""
    message = _message(call.params)
    task_id = _text_field(message, "taskId", "task_id")
    context_id = _text_field(message, "contextId", "context_id")
    service = call.service
    if task_id is None:
        if context_id is not None:
            try:
                check_thread_id(context_id)
            except HttpError:
                raise RpcError(
                    INVALID_PARAMS, "'contextId' must be 1-100 letters, digits, '-', '_' or '.'"
                ) from None
        started = await service.start(_input(message), context_id)
        echoed = {**message, "taskId": started.run_id, "contextId": started.thread_id}
        return started, _fresh(started, echoed)
    thread, turn = _task_ref({"id": task_id})
    if context_id is not None and context_id != thread:
        raise RpcError(
            INVALID_PARAMS, f"contextId {context_id!r} is not the context of task {task_id!r}"
        )
    found, latest = await _find(service, thread, turn)
    state = _state(service, found.record, latest)
    if state != INPUT_REQUIRED:
        hint = "; send a new message with its contextId" if state in _TERMINAL else ""
        name = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
        raise RpcError(UNSUPPORTED, f"task {task_id!r} is {name}: it takes no message{hint}")
    started = await service.resume(thread, **_decisions(message, task_id))
    task = _from_history(service, found, latest)
    task["status"] = _status(WORKING, task_id, thread)
    task["history"] = [
        *task.get("history", []),
        {**message, "taskId": task_id, "contextId": thread},
    ]
    return started, task


def _fresh(started: Started, message: dict[str, Any]) -> dict[str, Any]:
    """A task just started, working, with the message that started it."""
    status = _status(WORKING, started.run_id, started.thread_id)
    return {
        "id": started.run_id,
        "contextId": started.thread_id,
        "status": status,
        "history": [message],
    }


async def send_message(call: Call) -> Result:
    """`SendMessage`: start (or resume) the task and answer it once its run is over (at once,
    working, with `configuration.returnImmediately`)."""
    started, task = await _begin(call)
    configuration = call.params.get("configuration")
    config = cast("dict[str, Any]", configuration) if isinstance(configuration, dict) else {}
    length = _history_length(call.params, config)
    if _get(config, "returnImmediately", "return_immediately") is True:
        return {"task": task}
    found = await call.service.wait(started)
    return {"task": _from_history(call.service, found, True, length)}


async def send_streaming_message(call: Call) -> Result:
    """`SendStreamingMessage`: the task (working), then its status and artifact updates until
    its run ends: completed, input-required, failed or canceled."""
    started, task = await _begin(call)
    return _updates(call.service, started, task)


async def subscribe_to_task(call: Call) -> Result:
    """`SubscribeToTask {id}`: the task as it stands, then its updates, while its run goes on
    in this server; -32004 for a task whose run is not going on here."""
    thread, turn = _task_ref(call.params)
    found, latest = await _find(call.service, thread, turn)
    event_log = call.service.log(thread)
    if not (latest and event_log and event_log.live):
        state = _state(call.service, found.record, latest)
        name = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
        raise RpcError(UNSUPPORTED, f"task {found.record.thread_id!r} is {name}, not running here")
    first = len(event_log.events)
    task = _from_history(call.service, found, latest)
    run = Started(thread, found.record.thread_id, turn, event_log, first)
    return _updates(call.service, run, task)


async def _updates(
    service: ThreadService, started: Started, task: dict[str, Any]
) -> AsyncIterator[dict[str, Any]]:
    """The stream of a run: `{"task"}` first, then `{"statusUpdate"}` / `{"artifactUpdate"}`
    for its events, ending with its terminal state (a client that leaves stops nothing)."""
    task_id, context_id = started.run_id, started.thread_id
    yield {"task": task}

    def update(state: str, **extra: Any) -> dict[str, Any]:
        """A status update of the task to `state`."""
        status = _status(state, task_id, context_id, **extra)
        return {"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": status}}

    async for _, name, data in started.log.follow(started.first_event):
        if name == "cancelled":
            yield update(CANCELED)
            return
        if name == "error":
            found = await service.history(context_id, started.turn)
            yield update(FAILED, error=error_type(found.record.error))
            return
        if name == "end":
            found = await service.history(context_id, started.turn)
            state = _state(service, found.record, True)
            yield update(state, pending=found.pending, error=error_type(found.record.error))
            return
        item = decode_event(data)
        if isinstance(item, dict):
            for result in _item_updates(cast("dict[str, Any]", item), task_id, context_id):
                yield result


def _item_updates(item: dict[str, Any], task_id: str, context_id: str) -> list[dict[str, Any]]:
    """The updates one run event makes: a working status with the tool calls or their results,
    or the answer artifact (tokens and the pause itself add nothing: the end says it)."""
    ids = {"taskId": task_id, "contextId": context_id}
    if "output" in item:
        artifact = _answer(item)
        return [{"artifactUpdate": {**ids, "artifact": artifact, "lastChunk": True}}]
    if "actions" in item:
        data: dict[str, Any] = {"tool_calls": [_call(a) for a in _objects(item["actions"])]}
    elif "steps" in item:
        data = {"tool_results": [_result(s) for s in _objects(item["steps"])]}
    else:
        return []
    message = _agent_message(task_id, context_id, [{"data": data}])
    status = {"state": WORKING, "message": message, "timestamp": _timestamp(_now())}
    return [{"statusUpdate": {**ids, "status": status}}]


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON list (nothing when it is not one)."""
    items = cast("list[Any]", value) if isinstance(value, list) else []
    return [cast("dict[str, Any]", v) for v in items if isinstance(v, dict)]


def _call(action: dict[str, Any]) -> dict[str, Any]:
    """A planned tool call as the streamed data shows it."""
    return {"tool": action.get("tool"), "tool_input": action.get("tool_input")}


def _result(step: dict[str, Any]) -> dict[str, Any]:
    """A finished tool call (a step) as the streamed data shows it."""
    action = step.get("action")
    tool = cast("dict[str, Any]", action).get("tool") if isinstance(action, dict) else None
    return {"tool": tool, "observation": step.get("observation")}


async def list_tasks(call: Call) -> Result:
    """`ListTasks {contextId?, status?, pageSize?, pageToken?, historyLength?,
    includeArtifacts?}`: saved tasks, newest first."""
    params, service = call.params, call.service
    context_id = _text_field(params, "contextId", "context_id")
    wanted = _text_field(params, "status")
    size = _get(params, "pageSize", "page_size")
    if size is None:
        size = 50
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= _MAX_PAGE:
        raise RpcError(INVALID_PARAMS, f"'pageSize' must be a whole number from 1 to {_MAX_PAGE}")
    token = _text_field(params, "pageToken", "page_token") or "0"
    if not token.isdigit() or len(token) > 9:
        raise RpcError(INVALID_PARAMS, "'pageToken' must be one this server gave")
    latest_turns: dict[str, int] = {}
    records = await service.records()
    for record in records:
        thread, turn = public_id(record.thread_id)
        latest_turns[thread] = max(turn, latest_turns.get(thread, 0))
    tasks: list[dict[str, Any]] = []
    for record in records:
        thread, turn = public_id(record.thread_id)
        if context_id is not None and thread != context_id:
            continue
        task = _listed(service, record, turn == latest_turns[thread], params)
        if wanted is None or task["status"]["state"] == wanted:
            tasks.append(task)
    start = int(token)
    page = tasks[start : start + size]
    following = str(start + size) if start + size < len(tasks) else ""
    return {"tasks": page, "nextPageToken": following, "pageSize": size, "totalSize": len(tasks)}


def _listed(
    service: ThreadService, record: RunRecord, latest: bool, params: dict[str, Any]
) -> dict[str, Any]:
    """A task of the list, from its record alone (no journal read)."""
    try:
        inputs: Any = loads(record.inputs)
        output: Any = loads(record.output) if record.output else None
        pending: Any = decode_event(record.pending) if record.pending else None
    except DAMAGE:
        inputs, output, pending = {}, None, None  # damaged: GetTask names the entry
    task = _task(
        service,
        record,
        cast("dict[str, Any]", inputs) if isinstance(inputs, dict) else {},
        latest=latest,
        output=cast("dict[str, Any]", output) if isinstance(output, dict) else None,
        pending=_objects(pending) or None,
        history_length=_history_length(params),
    )
    if _get(params, "includeArtifacts", "include_artifacts") is not True:
        task.pop("artifacts", None)
    return task


async def extended_card(call: Call) -> Result:
    """`GetExtendedAgentCard`: the card with the skills (behind the token like every call)."""
    return agent_card(call.request, call.secured, extended=True)


_METHODS: dict[str, Callable[[Call], Awaitable[Result]]] = {
    "SendMessage": send_message,
    "SendStreamingMessage": send_streaming_message,
    "GetTask": get_task,
    "CancelTask": cancel_task,
    "SubscribeToTask": subscribe_to_task,
    "ListTasks": list_tasks,
    "GetExtendedAgentCard": extended_card,
}
_PUSH_METHODS = frozenset(
    {
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    }
)


def a2a_routes(secured: bool) -> list[Route]:
    """The A2A routes: the card and the JSON-RPC endpoint (`secured`: the server has a token)."""

    async def card(request: Request) -> Response:
        """`GET /.well-known/agent-card.json`: the public agent card (read-only)."""
        return JsonResponse(agent_card(request, secured), headers={"Cache-Control": "no-store"})

    async def rpc(request: Request) -> Response:
        """`POST /a2a`."""
        return await rpc_route(request, secured)

    return [Route(CARD_PATH, card, methods=["GET"]), Route(A2A_PATH, rpc, methods=["POST"])]
