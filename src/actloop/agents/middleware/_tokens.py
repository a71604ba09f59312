"""LangChain's approximate token counter (`count_tokens_approximately` of
`langchain_core.messages.utils`, ported), shared by the context editing and summarization
middleware so their triggers fire at the same counts as LangChain's."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from actloop.messages import AIMessage, BaseMessage, ToolMessage

__all__ = ["TokenCounter", "count_tokens_approximately"]

TokenCounter = Callable[[Sequence[BaseMessage]], int]

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _role(message: BaseMessage) -> str:
    """The message's OpenAI role (LangChain's `_get_message_openai_role`)."""
    if message.type == "chat":
        return str(getattr(message, "role", "chat"))
    if message.type == "function":
        return "function"
    return _ROLES.get(message.type, message.type)


def _tools_tokens(tools: Sequence[Any], chars_per_token: float) -> int:
    """The tokens of the tools' schemas as the model would be sent them."""
    chars = 0
    for tool in tools:
        if isinstance(tool, dict):
            spec = cast("dict[str, Any]", tool)
        else:
            schema = tool.tool_call_schema
            if isinstance(schema, dict):
                parameters = dict(cast("dict[str, Any]", schema))
            else:
                parameters = dict(schema.model_json_schema())
            parameters.pop("title", None)
            parameters.pop("description", None)
            spec = {"name": tool.name, "description": tool.description, "parameters": parameters}
        chars += len(json.dumps(spec))
    return math.ceil(chars / chars_per_token)


def _content_size(content: Any, tokens_per_image: int) -> tuple[int, int]:
    """(characters, image tokens) of a message's content."""
    if isinstance(content, str):
        return len(content), 0
    if not isinstance(content, list):
        return len(repr(content)), 0
    chars = images = 0
    for block in cast("list[Any]", content):
        if isinstance(block, str):
            chars += len(block)
        elif isinstance(block, dict):
            item = cast("dict[str, Any]", block)
            kind = item.get("type", "")
            if kind in {"image", "image_url"}:
                images += tokens_per_image
            elif kind == "text":
                chars += len(item.get("text", ""))
            else:
                chars += len(repr(item))
        else:
            chars += len(repr(block))
    return chars, images


def count_tokens_approximately(
    messages: Iterable[Any],
    *,
    chars_per_token: float = 4.0,
    extra_tokens_per_message: float = 3.0,
    count_name: bool = True,
    tokens_per_image: int = 85,
    use_usage_metadata_scaling: bool = False,
    tools: Sequence[Any] | None = None,
) -> int:
    """Approximate tokens of `messages` (and `tools`): characters / `chars_per_token` per
    message rounded up, plus `extra_tokens_per_message`; optionally scaled by the last AI
    message's reported usage (LangChain's rule, bounded to 1.0-1.25)."""
    from actloop.chat_models import convert_to_messages

    converted = convert_to_messages(list(messages))
    count = float(_tools_tokens(tools, chars_per_token)) if tools else 0.0
    provider: Any = None
    mixed = False
    last_total: int | None = None
    at_last: float | None = None
    for message in converted:
        chars, images = _content_size(message.content, tokens_per_image)
        count += images
        if isinstance(message, AIMessage) and not isinstance(message.content, list):
            if message.tool_calls:
                chars += len(repr(message.tool_calls))
        if isinstance(message, ToolMessage):
            chars += len(message.tool_call_id)
        chars += len(_role(message))
        if message.name and count_name:
            chars += len(message.name)
        count += math.ceil(chars / chars_per_token) + extra_tokens_per_message
        if use_usage_metadata_scaling and isinstance(message, AIMessage):
            found = message.response_metadata.get("model_provider")
            if provider is None:
                provider = found
            elif found != provider:
                mixed = True
            total = (message.usage_metadata or {}).get("total_tokens")
            if isinstance(total, int):
                last_total, at_last = total, count
    scaled = use_usage_metadata_scaling and len(converted) > 1 and not mixed
    if scaled and provider is not None and last_total is not None and at_last:
        count *= min(1.25, max(1.0, last_total / at_last))
    return math.ceil(count)
