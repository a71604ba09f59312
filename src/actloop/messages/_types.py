"""Chat messages shaped like langchain-core's, as plain `__slots__` classes (cheap to build)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, cast, overload

from actloop.messages import _tool_calls as _tc
from actloop.messages._blocks import content_blocks
from actloop.messages._merge import (
    Content,
    UsageMetadata,
    add_usage,
    merge_content,
    merge_dicts,
    merge_lists,
)
from actloop.messages._merge import normalize_usage as _normalize_usage
from actloop.messages._record import ALWAYS_HIDE, Record
from actloop.messages._tool_calls import InvalidToolCall, ToolCall, ToolCallChunk

__all__ = [
    "AIMessage",
    "AIMessageChunk",
    "BaseMessage",
    "Content",
    "FunctionMessage",
    "HumanMessage",
    "InvalidToolCall",
    "SystemMessage",
    "ToolCall",
    "ToolCallChunk",
    "ToolMessage",
    "UsageMetadata",
    "message_chunk_to_message",
    "message_from_openai",
    "message_to_openai",
]


_BASE_FIELDS = ("content", "additional_kwargs", "response_metadata", "name", "id")
_BASE_REPR_DEFAULTS: dict[str, Any] = {"name": None, "id": None}


class BaseMessage(Record):
    """A chat message: `content` (text or a list of content parts) plus metadata."""

    __slots__ = ("additional_kwargs", "content", "id", "name", "response_metadata")
    type: ClassVar[str] = "base"
    _fields = _BASE_FIELDS
    _repr_defaults = _BASE_REPR_DEFAULTS

    content: Content
    additional_kwargs: dict[str, Any]
    """Provider payload that has no standard field (e.g. raw OpenAI `tool_calls`)."""
    response_metadata: dict[str, Any]
    name: str | None
    id: str | None

    def __init__(
        self,
        content: Content | None = None,
        *,
        content_blocks: list[Any] | None = None,
        additional_kwargs: dict[str, Any] | None = None,
        response_metadata: dict[str, Any] | None = None,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        self.content = content if content is not None else _blocks_given(content_blocks)
        self.additional_kwargs = {} if additional_kwargs is None else additional_kwargs
        self.response_metadata = {} if response_metadata is None else response_metadata
        self.name = name
        self.id = id if id is None or isinstance(id, str) else str(id)  # pyright: ignore[reportUnnecessaryIsInstance]

    @property
    def text(self) -> str:
        """The text content: the string itself, or the text parts of list content joined."""
        return _text_of(self.content)

    @property
    def content_blocks(self) -> list[dict[str, Any]]:
        """The content as langchain-core's v1 standard blocks (`messages._blocks`)."""
        return content_blocks(self.content)


def _blocks_given(blocks: list[Any] | None) -> Content:
    """A message's content given as `content_blocks=` (langchain-core's typed way)."""
    if blocks is None:
        raise TypeError("a message needs `content` or `content_blocks`")
    return list(blocks)


def _text_of(content: Content) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif block.get("type") == "text" and isinstance(text := block.get("text"), str):
            parts.append(text)
    return "".join(parts)


class HumanMessage(BaseMessage):
    """A message from the user."""

    __slots__ = ()
    type: ClassVar[str] = "human"


class SystemMessage(BaseMessage):
    """Instructions to the model."""

    __slots__ = ()
    type: ClassVar[str] = "system"


class RemoveMessage(BaseMessage):
    """An instruction to LangGraph's messages reducer: remove the message with this `id` (or,
    with `REMOVE_ALL_MESSAGES`, every message before it)."""

    __slots__ = ()
    type: ClassVar[str] = "remove"

    def __init__(self, id: str, **kwargs: Any) -> None:
        super().__init__("", id=id, **kwargs)


class FunctionMessage(BaseMessage):
    """The result of a legacy OpenAI function call; `name` is the function's name."""

    __slots__ = ()
    type: ClassVar[str] = "function"
    _repr_defaults: ClassVar[dict[str, Any]] = {"id": None}
    name: str  # pyright: ignore[reportIncompatibleVariableOverride]

    def __init__(
        self,
        content: Content,
        *,
        name: str,
        additional_kwargs: dict[str, Any] | None = None,
        response_metadata: dict[str, Any] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(
            content,
            additional_kwargs=additional_kwargs,
            response_metadata=response_metadata,
            name=name,
            id=id,
        )


class ToolMessage(BaseMessage):
    """The result of running a tool, linked to the call by `tool_call_id`."""

    __slots__ = ("artifact", "status", "tool_call_id")
    type: ClassVar[str] = "tool"
    _fields = (*_BASE_FIELDS, "tool_call_id", "artifact", "status")
    _repr_defaults: ClassVar[dict[str, Any]] = {
        **_BASE_REPR_DEFAULTS,
        "additional_kwargs": ALWAYS_HIDE,
        "response_metadata": ALWAYS_HIDE,
        "artifact": None,
        "status": "success",
    }
    tool_call_id: str
    artifact: Any
    """Full tool output kept for the program, not sent to the model."""
    status: Literal["success", "error"]

    def __init__(
        self,
        content: Any = None,
        *,
        tool_call_id: Any,
        content_blocks: list[Any] | None = None,
        artifact: Any = None,
        status: Literal["success", "error"] = "success",
        additional_kwargs: dict[str, Any] | None = None,
        response_metadata: dict[str, Any] | None = None,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        if not isinstance(content, str):
            content = _coerce_tool_content(
                content if content is not None else _blocks_given(content_blocks)
            )
        super().__init__(
            content,
            additional_kwargs=additional_kwargs,
            response_metadata=response_metadata,
            name=name,
            id=id,
        )
        self.tool_call_id = tool_call_id if isinstance(tool_call_id, str) else str(tool_call_id)
        self.artifact = artifact
        self.status = status


def _coerce_tool_content(content: Any) -> Content:
    """Tool output that is not text becomes text (list items too), as langchain-core does."""
    if isinstance(content, (list, tuple)):
        items: list[Any] = list(content)  # pyright: ignore[reportUnknownArgumentType]
        return [x if isinstance(x, (str, dict)) else str(x) for x in items]
    return str(content)


class AIMessage(BaseMessage):
    """A model reply: content plus parsed `tool_calls`, `invalid_tool_calls`, token usage."""

    __slots__ = ("invalid_tool_calls", "tool_calls", "usage_metadata")
    type: ClassVar[str] = "ai"
    _fields = (*_BASE_FIELDS, "tool_calls", "invalid_tool_calls", "usage_metadata")
    _repr_defaults: ClassVar[dict[str, Any]] = {**_BASE_REPR_DEFAULTS, "usage_metadata": None}
    tool_calls: list[ToolCall]
    invalid_tool_calls: list[InvalidToolCall]
    usage_metadata: UsageMetadata | None

    def __init__(
        self,
        content: Content | None = None,
        *,
        content_blocks: list[Any] | None = None,
        additional_kwargs: dict[str, Any] | None = None,
        response_metadata: dict[str, Any] | None = None,
        name: str | None = None,
        id: str | None = None,
        tool_calls: Sequence[ToolCall] | None = None,
        invalid_tool_calls: Sequence[InvalidToolCall] | None = None,
        usage_metadata: UsageMetadata | None = None,
    ) -> None:
        self.content = content if content is not None else _blocks_given(content_blocks)
        self.additional_kwargs = {} if additional_kwargs is None else additional_kwargs
        self.response_metadata = {} if response_metadata is None else response_metadata
        self.name = name
        self.id = id if id is None or isinstance(id, str) else str(id)  # pyright: ignore[reportUnnecessaryIsInstance]
        if not tool_calls and not invalid_tool_calls and additional_kwargs:
            raw = additional_kwargs.get("tool_calls")
            if raw and not isinstance(self, AIMessageChunk):
                tool_calls, invalid_tool_calls = _parse_raw(raw)
        self.tool_calls = _tc.normalize_tool_calls(tool_calls) if tool_calls else []
        self.invalid_tool_calls = (
            _tc.normalize_invalid_tool_calls(invalid_tool_calls) if invalid_tool_calls else []
        )
        self.usage_metadata = None if usage_metadata is None else _normalize_usage(usage_metadata)

    @property
    def content_blocks(self) -> list[dict[str, Any]]:
        """The content as standard blocks (a v1 reply's content as it is), then the tool calls
        the content does not hold, the `reasoning_content` of `additional_kwargs` first."""
        content = self.content
        if self.response_metadata.get("output_version") == "v1" and isinstance(content, list):
            return cast("list[dict[str, Any]]", content)
        blocks = content_blocks(content)
        held = {b.get("id") for b in blocks if b.get("type") == "tool_call"}
        for call in self.tool_calls:
            if call.get("id") and call.get("id") not in held:
                block: dict[str, Any] = {"type": "tool_call", "id": call["id"]}
                block |= {"name": call["name"], "args": call["args"]}
                block |= {k: v for k, v in call.items() if k in ("index", "extras")}
                blocks.append(block)
        reasoning = self.additional_kwargs.get("reasoning_content")
        if isinstance(reasoning, str) and all(b.get("type") != "reasoning" for b in blocks):
            blocks.insert(0, {"type": "reasoning", "reasoning": reasoning})
        return blocks


def _parse_raw(raw: Any) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """OpenAI-style `additional_kwargs["tool_calls"]`, parsed best-effort."""
    try:
        return _tc.parse_openai_tool_calls(raw)
    except Exception:
        return [], []


class AIMessageChunk(AIMessage):
    """A streamed piece of a model reply; `+` merges pieces, and `tool_call_chunks` by index."""

    __slots__ = ("chunk_position", "tool_call_chunks")
    type: ClassVar[str] = "AIMessageChunk"
    _fields = (*AIMessage._fields, "tool_call_chunks", "chunk_position")
    _repr_defaults: ClassVar[dict[str, Any]] = {
        **AIMessage._repr_defaults,
        "chunk_position": None,
    }
    tool_call_chunks: list[ToolCallChunk]
    chunk_position: Literal["last"] | None

    def __init__(
        self,
        content: Content,
        *,
        additional_kwargs: dict[str, Any] | None = None,
        response_metadata: dict[str, Any] | None = None,
        name: str | None = None,
        id: str | None = None,
        tool_calls: Sequence[ToolCall] | None = None,
        invalid_tool_calls: Sequence[InvalidToolCall] | None = None,
        usage_metadata: UsageMetadata | None = None,
        tool_call_chunks: Sequence[ToolCallChunk] | None = None,
        chunk_position: Literal["last"] | None = None,
    ) -> None:
        self.content = content
        self.additional_kwargs = {} if additional_kwargs is None else additional_kwargs
        self.response_metadata = {} if response_metadata is None else response_metadata
        self.name = name
        self.id = id if id is None or isinstance(id, str) else str(id)  # pyright: ignore[reportUnnecessaryIsInstance]
        self.usage_metadata = None if usage_metadata is None else _normalize_usage(usage_metadata)
        self.chunk_position = chunk_position
        if not (tool_call_chunks or tool_calls or invalid_tool_calls):
            raw = additional_kwargs.get("tool_calls") if additional_kwargs else None
            if not raw:
                self.tool_calls, self.invalid_tool_calls, self.tool_call_chunks = [], [], []
                return
            tool_call_chunks = _parse_raw_chunks(raw)
        if tool_call_chunks:
            chunks = _tc.normalize_chunks(tool_call_chunks)
            self.tool_call_chunks = chunks
            self.tool_calls, self.invalid_tool_calls = _tc.calls_from_chunks(chunks)
            return
        calls = _tc.normalize_tool_calls(tool_calls) if tool_calls else []
        invalid = _tc.normalize_invalid_tool_calls(invalid_tool_calls) if invalid_tool_calls else []
        self.tool_calls, self.invalid_tool_calls = calls, invalid
        self.tool_call_chunks = _tc.chunks_from_calls(calls, invalid)

    def __add__(self, other: AIMessageChunk | Sequence[AIMessageChunk]) -> AIMessageChunk:
        if isinstance(other, AIMessageChunk):
            return _add_chunks(self, (other,))
        items: Any = other
        if isinstance(items, (list, tuple)) and all(isinstance(o, AIMessageChunk) for o in items):  # pyright: ignore[reportUnknownVariableType]
            return _add_chunks(self, items)  # pyright: ignore[reportUnknownArgumentType]
        names = f'"{type(self).__name__}" and "{type(other).__name__}"'
        msg = f"unsupported operand type(s) for +: {names}"
        raise TypeError(msg)


def _parse_raw_chunks(raw: Any) -> list[ToolCallChunk]:
    try:
        return _tc.parse_openai_tool_chunks(raw)
    except Exception:
        return []


def _add_chunks(left: AIMessageChunk, others: Sequence[AIMessageChunk]) -> AIMessageChunk:
    """Merge chunks exactly as langchain-core's `add_ai_message_chunks` does."""
    raw_chunks = merge_lists(left.tool_call_chunks, *[o.tool_call_chunks for o in others])
    usage: UsageMetadata | None = None
    if left.usage_metadata or [o for o in others if o.usage_metadata is not None]:
        usage = left.usage_metadata
        for other in others:
            usage = add_usage(usage, other.usage_metadata)
    last = left.chunk_position == "last" or "last" in [o.chunk_position for o in others]
    return type(left)(
        merge_content(left.content, *[o.content for o in others]),
        additional_kwargs=merge_dicts(
            left.additional_kwargs, *[o.additional_kwargs for o in others]
        ),
        tool_call_chunks=_tc.normalize_chunks(raw_chunks) if raw_chunks else None,
        response_metadata=merge_dicts(
            left.response_metadata, *[o.response_metadata for o in others]
        ),
        usage_metadata=usage,
        id=_best_id([left.id, *[o.id for o in others]]),
        chunk_position="last" if last else None,
    )


def _best_id(ids: list[str | None]) -> str | None:
    """Prefer a provider id, then an `lc_run-` id, then any other `lc_` id."""
    best_rank, chosen = -1, None
    for id_ in ids:
        if not id_:
            continue
        if not id_.startswith("lc_"):
            return id_
        rank = 1 if id_.startswith("lc_run-") else 0
        if rank > best_rank:
            best_rank, chosen = rank, id_
    return chosen


@overload
def message_chunk_to_message(chunk: AIMessageChunk) -> AIMessage: ...
@overload
def message_chunk_to_message(chunk: BaseMessage) -> BaseMessage: ...
def message_chunk_to_message(chunk: BaseMessage) -> BaseMessage:
    """An `AIMessageChunk` as the equivalent `AIMessage`; other messages are returned as is."""
    if not isinstance(chunk, AIMessageChunk):
        return chunk
    return AIMessage(
        chunk.content,
        additional_kwargs=chunk.additional_kwargs,
        response_metadata=chunk.response_metadata,
        name=chunk.name,
        id=chunk.id,
        tool_calls=chunk.tool_calls,
        invalid_tool_calls=chunk.invalid_tool_calls,
        usage_metadata=chunk.usage_metadata,
    )


def message_to_openai(message: BaseMessage) -> dict[str, Any]:
    """The OpenAI chat-completions dict for a message (roles, `tool_calls` with JSON arguments)."""
    from actloop.messages._openai import to_openai

    return to_openai(message)


def message_from_openai(data: dict[str, Any]) -> BaseMessage:
    """A message built from an OpenAI chat-completions dict (the reverse of `message_to_openai`)."""
    from actloop.messages._openai import from_openai

    return from_openai(data)
