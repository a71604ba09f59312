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
_THREAD = "/threads/{thread_id}"
_ONE_RUN = f"{_THREAD}/runs/{{run_id}}"
_RUN_IN = _obj(
    assistant_id={"type": "string"},
    input={},
    command=_obj(resume={}),
    stream_mode={},
    metadata={"type": "object"},
    if_not_exists={"type": "string"},
)


def agent_protocol_paths() -> dict[str, Any]:
    """The Agent Protocol's paths (threads, runs, assistants) and the thread events extension."""
    return {
        "/assistants/search": {
            "post": _op("Search assistants (the one served agent)", body=_obj())
        },
        "/assistants/{assistant_id}": {"get": _op("The assistant")},
        "/assistants/{assistant_id}/schemas": {"get": _op("Its input, output and state schemas")},
        "/threads": {
            "post": _op(
                "Create a thread",
                body=_obj(thread_id={"type": "string"}, metadata={"type": "object"}, if_exists={}),
            )
        },
        "/threads/search": {"post": _op("Search threads", body=_obj(limit={}, status={}, ids={}))},
        _THREAD: {
            "get": _op("A thread"),
            "patch": _op("Merge into its metadata", body=_obj(metadata={"type": "object"})),
            "delete": _op("Delete a thread"),
        },
        f"{_THREAD}/state": {"get": _op("The thread's state (values, next, tasks, interrupts)")},
        f"{_THREAD}/history": {
            "get": _op("The state after each turn, newest first"),
            "post": _op("The state after each turn, newest first", body=_obj(limit={})),
        },
        f"{_THREAD}/events": {
            "get": _op("actloop: follow the thread's events (SSE; resume with Last-Event-ID)", _SSE)
        },
        "/runs": {"post": _op("Start a run on a new thread", body=_RUN_IN)},
        "/runs/wait": {"post": _op("Run on a new thread; its end state", body=_RUN_IN)},
        "/runs/stream": {"post": _op("Run on a new thread, streamed", _SSE, _RUN_IN)},
        f"{_THREAD}/runs": {
            "get": _op("The thread's runs, newest first"),
            "post": _op("Start a run (or resume one with command)", body=_RUN_IN),
        },
        f"{_THREAD}/runs/wait": {"post": _op("Run; its end state", body=_RUN_IN)},
        f"{_THREAD}/runs/stream": {"post": _op("Run, streamed", _SSE, _RUN_IN)},
        _ONE_RUN: {"get": _op("A run")},
        f"{_ONE_RUN}/join": {"get": _op("Wait for the run's end; its end state")},
        f"{_ONE_RUN}/stream": {"get": _op("Join the run's stream (Last-Event-ID resumes)", _SSE)},
        f"{_ONE_RUN}/cancel": {"post": _op("Cancel the run (it stays resumable)")},
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
    """The document; `info.x-actloop-durable` says whether threads outlive the server."""
    paths: dict[str, Any] = {
        "/health": {"get": _op("Liveness (no token needed)")},
        "/": {"get": _op("The page", "text/html")},
        **_AGENT,
        **responses_paths(),
        **mcp_paths(),
        **agui_paths(),
    }
    paths.update(agent_protocol_paths())
    paths.update(a2a_paths())
    return {
        "openapi": "3.1.0",
        "info": {"title": "actloop serve", "version": "1", "x-actloop-durable": durable},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": paths,
    }
