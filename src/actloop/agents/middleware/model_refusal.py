"""`ModelRefusalMiddleware` (LangChain 1.5's, ported): a reply holding a refusal raises
`ModelRefusalError` instead of passing as the answer.

LangChain reads the refusal from the reply's standard `content_blocks`, which langchain-core
derives by the reply's `response_metadata["model_provider"]`; actloop's messages have no
`content_blocks`, so `refusals` derives the refusal blocks alone, by the same rules: Anthropic's
`refusal` blocks and `stop_reason="refusal"` (its `stop_details`; Bedrock's Claude replies the
same), OpenAI's `additional_kwargs["refusal"]` and `refusal` blocks, Gemini's blocking finish
or prompt-block reasons, and otherwise `{"type": "refusal"}` items of a list content.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from actloop.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from actloop.agents.structured_output import StructuredOutputValidationError
from actloop.messages import BaseMessage
from actloop.models import ModelRefusalError

__all__ = ["ModelRefusalMiddleware", "refusals"]

_GEMINI_REFUSALS = frozenset({"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST"})
"""Gemini finish reasons that mean it blocked the response (langchain-core's)."""


def refusals(message: BaseMessage) -> list[dict[str, Any]]:
    """The standard refusal blocks of `message`, as langchain-core's `content_blocks` has them."""
    metadata = message.response_metadata
    items = _items(message)
    if metadata.get("output_version") == "v1" and isinstance(message.content, list):
        return [b for b in items if b.get("type") == "refusal"]
    provider = metadata.get("model_provider")
    if provider == "anthropic" or (
        provider == "bedrock" and "claude" in str(metadata.get("model_name", "")).lower()
    ):
        return _anthropic(items, metadata)
    if provider == "openai":
        return _openai(message, items)
    if provider in ("google_genai", "google_vertexai"):
        block = _gemini(metadata)
        return [] if block is None else [block]
    if provider in ("groq", "bedrock_converse", "bedrock"):
        return []
    return [b for b in items if b.get("type") == "refusal" and "source_type" not in b]


def _items(message: BaseMessage) -> list[dict[str, Any]]:
    """The dict items of a list content."""
    content: Any = message.content
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]  # pyright: ignore[reportUnknownVariableType]


def _anthropic(items: list[dict[str, Any]], metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """Anthropic's refusal blocks, and one from a `refusal` stop reason when there is none."""
    blocks = [_refusal_block(b, ("extras", "index")) for b in items if b.get("type") == "refusal"]
    if metadata.get("stop_reason") == "refusal" and not blocks:
        details = _mapping(metadata.get("stop_details"))
        block: dict[str, Any] = {"type": "refusal", "refusal": details.get("explanation") or ""}
        if category := details.get("category"):
            block["extras"] = {"category": category}
        blocks.append(block)
    return blocks


def _mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a dict, else an empty one."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _refusal_block(item: dict[str, Any], kept: tuple[str, ...]) -> dict[str, Any]:
    """A content item of type `refusal` as a standard block."""
    block: dict[str, Any] = {"type": "refusal", "refusal": item.get("refusal", "")}
    block.update({key: item[key] for key in kept if item.get(key) is not None})
    return block


def _openai(message: BaseMessage, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI's refusals: the chat completions field, and the Responses API's refusal items
    (their other keys as `extras`)."""
    blocks: list[dict[str, Any]] = []
    if refusal := message.additional_kwargs.get("refusal"):
        blocks.append({"type": "refusal", "refusal": refusal})
    for item in items:
        if item.get("type") != "refusal":
            continue
        block = _refusal_block(item, ())
        block.update({key: item[key] for key in ("id", "index") if key in item})
        skip = {"type", "refusal", "id", "index", "extras"}
        extras = {k: v for k, v in item.items() if k not in skip}
        if item.get("extras"):
            extras = {**item["extras"], **extras}
        if extras:
            block["extras"] = extras
        blocks.append(block)
    return blocks


def _gemini(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """A refusal block from Gemini's finish reason or prompt block reason, if they say so."""
    extras: dict[str, Any] = {}
    finish = _reason_name(metadata.get("finish_reason"))
    if finish in _GEMINI_REFUSALS:
        extras["finish_reason"] = finish
    blocked = _reason_name(_mapping(metadata.get("prompt_feedback")).get("block_reason"))
    if blocked and blocked != "BLOCKED_REASON_UNSPECIFIED":
        extras["block_reason"] = blocked
    if not extras:
        return None
    return {"type": "refusal", "refusal": metadata.get("finish_message") or "", "extras": extras}


def _reason_name(reason: object) -> str | None:
    """The enum member name of a Gemini reason (or its text)."""
    if not reason:
        return None
    return str(getattr(reason, "name", reason)).rsplit(".", 1)[-1]


def _raise_if_refused(message: BaseMessage) -> None:
    """Raise `ModelRefusalError` for the message's first refusal block."""
    blocks = refusals(message)
    if blocks:
        raise ModelRefusalError.from_refusal(blocks[0], raw_message=message)


def _check_refusal(response: ModelResponse) -> ModelResponse:
    """`response` itself, once none of its messages is a refusal."""
    for message in response.result:
        _raise_if_refused(message)
    return response


class ModelRefusalMiddleware(AgentMiddleware):
    """Raise `ModelRefusalError` for responses containing a standard refusal block.

    Without it a refusal is a successful final answer. List it after `ModelFallbackMiddleware`
    so the fallback can catch the error. It infers no refusal from text and retries nothing.
    """

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Check the completed model response for a refusal."""
        try:
            response = handler(request)
        except StructuredOutputValidationError as exc:
            _raise_if_refused(exc.ai_message)
            raise
        return _check_refusal(response)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Check the completed model response for a refusal (async path)."""
        try:
            response = await handler(request)
        except StructuredOutputValidationError as exc:
            _raise_if_refused(exc.ai_message)
            raise
        return _check_refusal(response)
