"""What a span records of a model call: usage, finish reasons and (opt-in) the messages.

Messages follow the GenAI conventions' JSON shape (`{"role", "parts": [...]}`) and are recorded
only when content capture is on, because prompts and replies hold private data.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["input_messages", "output_messages", "response_attributes"]

_ROLES = {"human": "user", "ai": "assistant", "AIMessageChunk": "assistant", "system": "system"}


def _parts(message: Any) -> list[dict[str, Any]]:
    """The message's content and tool calls as convention parts."""
    content = message.content
    parts: list[dict[str, Any]] = []
    if message.type == "tool":
        return [{"type": "tool_call_response", "id": message.tool_call_id, "result": content}]
    if isinstance(content, str):
        if content:
            parts.append({"type": "text", "content": content})
    else:
        parts.append({"type": "text", "content": json.dumps(content, default=str)})
    for call in getattr(message, "tool_calls", None) or ():
        parts.append(
            {"type": "tool_call", "id": call["id"], "name": call["name"], "arguments": call["args"]}
        )
    return parts


def _message(message: Any) -> dict[str, Any]:
    return {"role": _ROLES.get(message.type, message.type), "parts": _parts(message)}


def input_messages(messages: list[Any]) -> str:
    """`gen_ai.input.messages`: the chat history sent to the model, as JSON."""
    return json.dumps([_message(m) for m in messages], default=str)


def output_messages(response: Any, reasons: list[str]) -> str:
    """`gen_ai.output.messages`: one message per generation, with its finish reason."""
    out: list[dict[str, Any]] = []
    for i, generation in enumerate(_generations(response)):
        message = _message(generation.message)
        if i < len(reasons):
            message["finish_reason"] = reasons[i]
        out.append(message)
    return json.dumps(out, default=str)


def _generations(response: Any) -> list[Any]:
    return [g for batch in response.generations for g in batch]


def _finish_reason(generation: Any) -> str | None:
    info: dict[str, Any] = generation.generation_info or {}
    metadata: dict[str, Any] = getattr(generation.message, "response_metadata", None) or {}
    reason = info.get("finish_reason") or metadata.get("finish_reason")
    return None if reason is None else str(reason)


def _usage(response: Any) -> tuple[int | None, int | None]:
    """(input tokens, output tokens): from the messages' usage, else the provider's output."""
    found = False
    tokens_in = tokens_out = 0
    for generation in _generations(response):
        counted: dict[str, Any] | None = getattr(generation.message, "usage_metadata", None)
        if counted:
            found = True
            tokens_in += int(counted.get("input_tokens", 0))
            tokens_out += int(counted.get("output_tokens", 0))
    if found:
        return tokens_in, tokens_out
    output: dict[str, Any] = response.llm_output or {}
    usage: dict[str, Any] = output.get("token_usage") or {}
    if not usage:
        return None, None
    return usage.get("prompt_tokens"), usage.get("completion_tokens")


def response_attributes(response: Any) -> tuple[dict[str, Any], list[str]]:
    """A chat span's response attributes (model, id, finish reasons, usage), and the reasons."""
    generations = _generations(response)
    reasons = [r for r in map(_finish_reason, generations) if r is not None]
    attributes: dict[str, Any] = {}
    if reasons:
        attributes["gen_ai.response.finish_reasons"] = reasons
    if generations:
        message = generations[0].message
        metadata: dict[str, Any] = getattr(message, "response_metadata", None) or {}
        model = metadata.get("model_name") or metadata.get("model")
        if model:
            attributes["gen_ai.response.model"] = str(model)
        if getattr(message, "id", None):
            attributes["gen_ai.response.id"] = str(message.id)
    tokens_in, tokens_out = _usage(response)
    if tokens_in is not None:
        attributes["gen_ai.usage.input_tokens"] = tokens_in
    if tokens_out is not None:
        attributes["gen_ai.usage.output_tokens"] = tokens_out
    return attributes, reasons
