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
        **agui_paths(),
    }
    if durable:
        paths.update(_THREADS)
    return {
        "openapi": "3.1.0",
        "info": {"title": "actloop serve", "version": "1"},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": paths,
    }
