"""Prompt values (what prompt templates produce) and message coercion, as in langchain-core."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from actloop.messages import (
    AIMessage,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from actloop.messages._buffer import get_buffer_string
from actloop.messages._record import Record
from actloop.messages._tool_calls import loads_lenient

__all__ = [
    "ChatPromptValue",
    "PromptValue",
    "StringPromptValue",
    "convert_to_messages",
    "get_buffer_string",
    "troubleshooting",
]

_DOCS = "https://docs.langchain.com/oss/python/langchain/errors/"


def troubleshooting(message: str, code: str) -> str:
    """`message` with LangChain's troubleshooting link appended (kept byte-identical)."""
    return f"{message}\nFor troubleshooting, visit: {_DOCS}{code} "


class PromptValue(Record):
    """A formatted prompt, readable as text (for LLMs) or as messages (for chat models)."""

    __slots__ = ()

    def to_string(self) -> str:
        """The prompt as one string."""
        raise NotImplementedError

    def to_messages(self) -> list[BaseMessage]:
        """The prompt as a list of messages."""
        raise NotImplementedError


class StringPromptValue(PromptValue):
    """A prompt that is plain text; as messages it is one HumanMessage."""

    __slots__ = ("text",)
    type: ClassVar[str] = "StringPromptValue"
    _fields = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def to_string(self) -> str:
        """The text itself."""
        return self.text

    def to_messages(self) -> list[BaseMessage]:
        """The text as a single human message."""
        return [HumanMessage(self.text)]


class ChatPromptValue(PromptValue):
    """A prompt that is a list of messages; as text it is their buffer string."""

    __slots__ = ("messages",)
    type: ClassVar[str] = "ChatPromptValue"
    _fields = ("messages",)

    def __init__(self, messages: Sequence[BaseMessage]) -> None:
        self.messages = messages

    def to_string(self) -> str:
        """The messages as `"Role: text"` lines (see `get_buffer_string`)."""
        return get_buffer_string(self.messages)

    def to_messages(self) -> list[BaseMessage]:
        """A new list of the messages."""
        return list(self.messages)


_LC_NAME_TO_TYPE: dict[str, str] = {
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
    "FunctionMessage": "function",
    "FunctionMessageChunk": "function",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
}


def convert_to_messages(messages: Iterable[Any] | PromptValue) -> list[BaseMessage]:
    """Messages from messages, strings, `(role, content)` pairs or role/content dicts."""
    if isinstance(messages, PromptValue):
        return messages.to_messages()
    return [_to_message(m) for m in messages]


def _to_message(message: Any) -> BaseMessage:
    if isinstance(message, BaseMessage):
        return message
    if isinstance(message, str):
        return message_from_role("human", message)
    if isinstance(message, (list, tuple)):
        try:
            role, content = message  # pyright: ignore[reportUnknownVariableType]
        except ValueError as exc:
            raise NotImplementedError(
                "Message as a sequence must be (role string, template)"
            ) from exc
        return message_from_role(role, content)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(message, dict):
        return _from_dict(message)  # pyright: ignore[reportUnknownArgumentType]
    msg = troubleshooting(f"Unsupported message type: {type(message)}", "MESSAGE_COERCION_FAILURE")
    raise NotImplementedError(msg)


def _from_dict(message: dict[str, Any]) -> BaseMessage:
    ident = message.get("id")
    if (
        message.get("lc") == 1
        and message.get("type") == "constructor"
        and isinstance(ident, list)
        and ident
        and isinstance(kwargs := message.get("kwargs"), dict)
    ):
        mapped = _LC_NAME_TO_TYPE.get(ident[-1])  # pyright: ignore[reportUnknownArgumentType]
        if mapped is not None:
            return _from_dict({"type": mapped, **kwargs})
    rest = dict(message)
    try:
        role = rest.pop("role") if "role" in rest else rest.pop("type")
        content = rest.pop("content") or ""
    except KeyError as exc:
        msg = f"Message dict must contain 'role' and 'content' keys, got {message}"
        raise ValueError(troubleshooting(msg, "MESSAGE_COERCION_FAILURE")) from exc
    return message_from_role(role, content, **rest)


def message_from_role(
    role: str,
    content: Any,
    name: str | None = None,
    tool_call_id: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    id: str | None = None,
    **additional_kwargs: Any,
) -> BaseMessage:
    """A message of the class `role` names (`human`/`user`, `ai`/`assistant`, `system`, ...)."""
    kwargs = _message_kwargs(name, id, additional_kwargs)
    extra: dict[str, Any] = kwargs.get("additional_kwargs", {})
    if role in ("human", "user"):
        extra.pop("example", None)  # actloop messages carry no `example` flag
        return HumanMessage(content, **kwargs)
    if role in ("ai", "assistant"):
        extra.pop("example", None)
        if tool_calls is not None:
            kwargs["tool_calls"] = [_tool_call(tc) for tc in tool_calls]
        return AIMessage(content, **kwargs)
    if role in ("system", "developer"):
        if role == "developer":
            kwargs["additional_kwargs"] = {**extra, "__openai_role__": "developer"}
        return SystemMessage(content, **kwargs)
    if role == "function":
        return FunctionMessage(content, **kwargs)
    if role == "tool":
        artifact = extra.pop("artifact", None)
        if (status := extra.pop("status", None)) is not None:
            kwargs["status"] = status
        if tool_call_id is None:
            raise KeyError("tool_call_id")  # what langchain-core raises here
        return ToolMessage(content, tool_call_id=tool_call_id, artifact=artifact, **kwargs)
    msg = (
        f"Unexpected message type: '{role}'. Use one of 'human', 'user', 'ai', 'assistant', "
        "'function', 'tool', 'system', or 'developer'."
    )
    raise ValueError(troubleshooting(msg, "MESSAGE_COERCION_FAILURE"))


def _message_kwargs(
    name: str | None, id: str | None, additional_kwargs: dict[str, Any]
) -> dict[str, Any]:
    """Constructor kwargs from a message dict's extra keys (others go to additional_kwargs)."""
    kwargs: dict[str, Any] = {}
    if name is not None:
        kwargs["name"] = name
    if additional_kwargs:
        if response_metadata := additional_kwargs.pop("response_metadata", None):
            kwargs["response_metadata"] = response_metadata
        kwargs["additional_kwargs"] = additional_kwargs
        additional_kwargs.update(additional_kwargs.pop("additional_kwargs", {}))
    if id is not None:
        kwargs["id"] = id
    return kwargs


def _tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call in LangChain's shape, from that shape or OpenAI's `{"function": ...}` shape."""
    if "function" not in call:
        return call
    args = call["function"]["arguments"]
    if isinstance(args, str):
        args = loads_lenient(args)
    return {"name": call["function"]["name"], "args": args, "id": call["id"], "type": "tool_call"}
