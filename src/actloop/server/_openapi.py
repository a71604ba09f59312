"""The OpenAPI 3.1 document of the server's routes (`GET /openapi.json`)."""

from __future__ import annotations

from typing import Any

__all__ = ["openapi"]

_JSON = "application/json"
_SSE = "text/event-stream"


def _op(summary: str, media: str = _JSON, body: dict[str, Any] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "responses": {
            "200": {"description": "OK", "content": {media: {}}},
            "4XX": {"description": '{"error": one-line reason}', "content": {_JSON: {}}},
        },
    }
    if body is not None:
        op["requestBody"] = {"required": True, "content": {_JSON: {"schema": body}}}
    return op


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


_RUN = _obj(input={}, config={"type": "object"}, kwargs={"type": "object"})
_AGENT: dict[str, Any] = {
    "/agent/invoke": {"post": _op("Run the agent to its end (LangServe invoke)", body=_RUN)},
    "/agent/batch": {
        "post": _op(
            "Several runs (LangServe batch)",
            body=_obj(inputs={"type": "array"}, config={}, kwargs={"type": "object"}),
        )
    },
    "/agent/stream": {"post": _op("Stream actions, steps, output (LangServe)", _SSE, _RUN)},
    "/agent/stream_events": {"post": _op("astream_events v2 (LangServe)", _SSE, _RUN)},
    "/agent/input_schema": {"get": _op("JSON schema of the input")},
    "/agent/output_schema": {"get": _op("JSON schema of the output")},
    "/agent/config_schema": {"get": _op("JSON schema of the honoured config")},
}
_THREADS: dict[str, Any] = {
    "/threads": {
        "get": _op("List saved threads, newest first"),
        "post": _op("Start a durable run (202)", body=_obj(input={}, thread_id={"type": "string"})),
    },
    "/threads/{thread_id}": {"get": _op("A thread's status, steps, pending approvals, output")},
    "/threads/{thread_id}/events": {
        "get": _op("Follow the thread's events (SSE; resume with Last-Event-ID)", _SSE)
    },
    "/threads/{thread_id}/resume": {
        "post": _op(
            "Approve, reject or edit pending calls, or resume a failed run (202)",
            body=_obj(approve={}, reject={}, edit={"type": "object"}),
        )
    },
}


def responses_paths() -> dict[str, Any]:
    """OpenAI's Responses API (`_responses`): errors there are OpenAI's error object."""
    create = _obj(
        model={"type": "string"},
        input={},
        previous_response_id={"type": "string"},
        stream={"type": "boolean"},
        background={"type": "boolean"},
    )
    return {
        "/v1/responses": {
            "post": _op("Run a turn (OpenAI Responses; SSE events with stream)", _JSON, create)
        },
        "/v1/responses/{response_id}": {"get": _op("A response (a turn of a thread) as it stands")},
        "/v1/models": {"get": _op("The served agent as the one model")},
        "/v1/models/{model}": {"get": _op("The served agent as a model")},
    }


def a2a_paths() -> dict[str, Any]:
    """A2A 1.x: the agent card and the JSON-RPC endpoint (`_a2a`)."""
    rpc = _obj(jsonrpc={"const": "2.0"}, id={}, method={"type": "string"}, params={})
    summary = (
        "A2A 1.x JSON-RPC: SendMessage, SendStreamingMessage (SSE), GetTask, CancelTask, "
        "SubscribeToTask (SSE), ListTasks, GetExtendedAgentCard"
    )
    return {
        "/.well-known/agent-card.json": {
            "get": {**_op("The A2A agent card (no token needed)"), "security": []}
        },
        "/a2a": {"post": _op(summary, body=rpc)},
    }


def mcp_paths() -> dict[str, Any]:
    """`/mcp`: the agent as an MCP tool (streamable HTTP, JSON-RPC in; JSON or SSE out)."""
    summary = "MCP, streamable HTTP without sessions (GET, DELETE: 405): the agent as a tool"
    message = {"type": "object", "description": "a JSON-RPC message"}
    return {"/mcp": {"post": _op(summary, _SSE, message)}}


def agui_paths() -> dict[str, Any]:
    """AG-UI's route (`_agui`): a RunAgentInput in, AG-UI events out."""
    body = _obj(
        threadId={"type": "string"},
        runId={"type": "string"},
        messages={"type": "array"},
        state={},
        tools={"type": "array"},
        context={"type": "array"},
        forwardedProps={},
        resume={"type": "array", "description": "answers to a paused run's interrupts"},
    )
    body["required"] = ["threadId", "runId", "messages"]
    summary = "Run the agent on an AG-UI RunAgentInput; AG-UI events (SSE)"
    return {"/ag-ui": {"post": _op(summary, _SSE, body)}}


def openapi(durable: bool) -> dict[str, Any]:
    """The document; the thread routes only when the served executor is durable."""
    paths: dict[str, Any] = {
        "/health": {"get": _op("Liveness (no token needed)")},
        "/": {"get": _op("The page", "text/html")},
        **_AGENT,
        **responses_paths(),
        **mcp_paths(),
        **agui_paths(),
    }
    if durable:
        paths.update(_THREADS)
    paths.update(a2a_paths())
    return {
        "openapi": "3.1.0",
        "info": {"title": "actloop serve", "version": "1"},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": paths,
    }
