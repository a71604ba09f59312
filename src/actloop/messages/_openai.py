"""Messages to and from OpenAI chat-completions dicts, matching langchain-openai's conversion."""

from __future__ import annotations

import json
from typing import Any

from actloop.messages import (
    AIMessage,
    BaseMessage,
    Content,
    FunctionMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from actloop.messages import _tool_calls as _tc

__all__ = ["from_openai", "to_openai"]

_SKIPPED_BLOCKS = frozenset({"tool_use", "thinking", "reasoning_content"})
_TOOL_CALL_KEYS = frozenset({"id", "type", "function"})


def to_openai(message: BaseMessage) -> dict[str, Any]:
    """The OpenAI dict for one message; raises TypeError for message kinds OpenAI lacks."""
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "content": _content(message.content),
            "tool_call_id": message.tool_call_id,
        }
    result: dict[str, Any] = {"role": _role(message), "content": _content(message.content)}
    name = message.name or message.additional_kwargs.get("name")
    if name is not None:
        result["name"] = name
    if isinstance(message, AIMessage):
        _add_assistant_calls(message, result)
    return result


def _role(message: BaseMessage) -> str:
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, SystemMessage):
        return str(message.additional_kwargs.get("__openai_role__", "system"))
    if isinstance(message, FunctionMessage):
        return "function"
    msg = f"Got unknown type {message!r}"
    raise TypeError(msg)


def _content(content: Content) -> Content:
    if isinstance(content, str):
        return content
    return [b for b in content if not (isinstance(b, dict) and b.get("type") in _SKIPPED_BLOCKS)]


def _add_assistant_calls(message: AIMessage, result: dict[str, Any]) -> None:
    extra = message.additional_kwargs
    if "function_call" in extra:
        result["function_call"] = extra["function_call"]
    if message.tool_calls or message.invalid_tool_calls:
        calls = [
            _call(c["id"], c["name"], json.dumps(c["args"], ensure_ascii=False))
            for c in message.tool_calls
        ]
        calls += [_call(c["id"], c["name"], c["args"]) for c in message.invalid_tool_calls]
        result["tool_calls"] = calls
    elif "tool_calls" in extra:
        raw: list[dict[str, Any]] = extra["tool_calls"]
        result["tool_calls"] = [{k: v for k, v in c.items() if k in _TOOL_CALL_KEYS} for c in raw]
    if "function_call" in result or "tool_calls" in result:
        result["content"] = result["content"] or None


def _call(id_: str | None, name: str | None, arguments: str | None) -> dict[str, Any]:
    return {"type": "function", "id": id_, "function": {"name": name, "arguments": arguments}}


def from_openai(data: dict[str, Any]) -> BaseMessage:
    """Build the message for an OpenAI dict; an unknown role raises ValueError."""
    role = data.get("role")
    name, id_ = data.get("name"), data.get("id")
    content = data.get("content", "")
    if role == "user":
        return HumanMessage(content, name=name, id=id_)
    if role == "assistant":
        return _assistant(data, name, id_)
    if role in ("system", "developer"):
        extra = {"__openai_role__": "developer"} if role == "developer" else {}
        return SystemMessage(content, name=name, id=id_, additional_kwargs=extra)
    if role == "function":
        return FunctionMessage(content, name=name or "", id=id_)
    if role == "tool":
        extra = {"name": data["name"]} if "name" in data else {}
        return ToolMessage(
            content,
            tool_call_id=data.get("tool_call_id"),
            additional_kwargs=extra,
            name=name,
            id=id_,
        )
    msg = (
        f"Unknown OpenAI message role {role!r}; "
        "expected user, assistant, system, developer, tool or function"
    )
    raise ValueError(msg)


def _assistant(data: dict[str, Any], name: str | None, id_: str | None) -> AIMessage:
    extra: dict[str, Any] = {}
    if function_call := data.get("function_call"):
        extra["function_call"] = dict(function_call)
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    if raw_calls := data.get("tool_calls"):
        extra["tool_calls"] = raw_calls
        for raw in raw_calls:
            if "function" in raw:
                _parse_call(raw, calls, invalid)
    if audio := data.get("audio"):
        extra["audio"] = audio
    return AIMessage(
        data.get("content", "") or "",
        additional_kwargs=extra,
        name=name,
        id=id_,
        tool_calls=calls,
        invalid_tool_calls=invalid,
    )


def _parse_call(raw: dict[str, Any], calls: list[ToolCall], invalid: list[InvalidToolCall]) -> None:
    function = raw["function"]
    arguments = function.get("arguments")
    try:
        args: Any = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError as e:
        error = (
            f"Function {function.get('name')} arguments:\n\n{arguments}\n\n"
            f"are not valid JSON. Received JSONDecodeError {e}"
        )
        invalid.append(_tc.invalid_tool_call(function.get("name"), arguments, raw.get("id"), error))
    else:
        calls.append(_tc.tool_call(function.get("name") or "", args or {}, raw.get("id")))
