"""An MCP server's multi-round-trip requests (the 2026-07-28 revision's `input_required`) as a
person's input: a `tools/call` answered with elicitation requests becomes `NeedsInput` (each
request a question, the request state kept opaque), and the call re-sent with the answers carries
them as `inputResponses` with that `requestState`.

The SDK's `Client` would answer such requests itself through its callbacks, in one process's
life; `AskingClient` hands them to the run instead, so a durable run can pause for days and a
person answer them. A result with only a request state (the server asks to be polled) and
requests that are not elicitations (sampling, roots) still go to the SDK's own driver.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp import Client, types

from actloop.tools._input import NeedsInput, Question

if TYPE_CHECKING:
    from actloop.tools._input import InputCall

__all__ = ["AskingClient", "input_responses", "questions"]


class AskingClient(Client):
    """The SDK's `Client`, raising `NeedsInput` for elicitations a person must answer."""

    async def _drive_input_required(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        first: Any,
        retry: Callable[[Any, Any], Awaitable[Any]],
    ) -> Any:
        """Raise `NeedsInput` for an `input_required` result made of elicitations; anything else
        goes to the SDK's driver."""
        if isinstance(first, types.InputRequiredResult):
            asked = questions(first)
            if asked:
                raise NeedsInput(asked, first.request_state)
        return await super()._drive_input_required(first, retry)  # pyright: ignore[reportPrivateUsage]


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
