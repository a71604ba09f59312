"""An MCP server's multi-round-trip requests (the 2026-07-28 revision's `input_required`) as a
person's input: a `tools/call` answered with elicitation requests becomes `NeedsInput` (each
request a question, the request state kept opaque), and the call re-sent with the answers carries
them as `inputResponses` with that `requestState`.

The SDK's `Client.call_tool` would answer such requests itself through its callbacks, in one
process's life; `call_asking` drives the rounds with the session's public API instead
(`allow_input_required=True`) and hands elicitations to the run, so a durable run can pause for
days and a person answer them. A result with only a request state (the server asks to be polled)
is sent again with that state (a few times, backing off); requests that are not elicitations
(sampling, roots) are an error naming them: actloop has no model or roots to give a server.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from mcp import Client, MCPError, types

from actloop.tools._input import NeedsInput, Question

if TYPE_CHECKING:
    from actloop.tools._input import InputCall

__all__ = ["MAX_ROUNDS", "call_asking", "input_responses", "questions"]


MAX_ROUNDS = 10
"""Rounds of a call the server answers with only a request state (poll me again), at most."""


async def call_asking(
    client: Client,
    name: str,
    arguments: dict[str, Any],
    meta: Any,
    answered: InputCall | None,
) -> types.CallToolResult:
    """`tools/call` through the session's public multi-round-trip API: NeedsInput for
    elicitations (a person answers them), re-sent with only the state when the server asks to
    be polled; MCPError for requests actloop cannot answer (sampling, roots). A result an
    extension claims (a task handle, `_tasks`) is returned as parsed."""
    responses, state = input_responses(answered)
    delay = 0.05
    for _ in range(MAX_ROUNDS):
        result = await _send(client, name, arguments, meta, responses, state)
        if not isinstance(result, types.InputRequiredResult):
            return result
        asked = questions(result)
        if asked:
            raise NeedsInput(asked, result.request_state)
        if result.input_requests:
            kinds = sorted({r.method for r in result.input_requests.values()})
            raise MCPError(
                types.INVALID_REQUEST,
                f"it asked for {', '.join(kinds)}, which actloop does not answer",
            )
        responses, state = None, result.request_state
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.25)
    raise MCPError(types.INVALID_REQUEST, f"it asked to be polled more than {MAX_ROUNDS} times")


async def _send(
    client: Client,
    name: str,
    arguments: dict[str, Any],
    meta: Any,
    responses: dict[str, Any] | None,
    state: str | None,
) -> Any:
    """One `tools/call`; a 2026-07-28 server's `HEADER_MISMATCH` (the tool's listing changed
    since it was read) lists the tools again and sends once more, as the SDK's `Client` does."""
    session = client.session

    async def send() -> Any:
        return await session.call_tool(
            name,
            arguments,
            meta=meta,
            input_responses=cast("Any", responses),
            request_state=state,
            allow_input_required=True,
            allow_claimed=True,  # an extension's result (a task handle) goes back to the caller
        )

    try:
        return await send()
    except MCPError as exc:
        if exc.code != types.HEADER_MISMATCH:
            raise
    await client.list_tools(cache_mode="refresh")
    return await send()


def questions(result: types.InputRequiredResult) -> list[Question]:
    """The result's requests as questions, or [] unless every one is an elicitation."""
    asked: list[Question] = []
    for key, request in (result.input_requests or {}).items():
        if not isinstance(request, types.ElicitRequest):
            return []
        params = request.params
        if isinstance(params, types.ElicitRequestURLParams):
            asked.append(Question(key, f"{params.message} (open {params.url})"))
        else:
            asked.append(Question(key, params.message, params.requested_schema))
    return asked


def input_responses(answered: InputCall | None) -> tuple[dict[str, Any] | None, str | None]:
    """The `inputResponses` and `requestState` of a call re-sent with a person's answers
    (None, None: a first call)."""
    if answered is None or answered.answers is None:
        return None, None
    responses: dict[str, Any] = {
        key: types.ElicitResult(
            action=answer["action"],
            content=answer.get("content") if answer["action"] == "accept" else None,
        )
        for key, answer in answered.answers.items()
    }
    state = answered.state
    return responses, state if isinstance(state, str) else None
