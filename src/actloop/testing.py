"""Chat models for tests: a scripted list of replies, or a function that plays the model.

Both stream like a real model: the content comes in several chunks (words with their leading
spaces, or `chunk_size` characters), and tool calls, usage and metadata arrive in the last chunk, so
the sum of the chunks equals the reply. Like a real model they honour `stop`: the content is cut
before the first stop sequence it contains. Every call is recorded in `.calls`.
"""

from __future__ import annotations

import inspect
import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeAlias

from actloop.chat_models import BaseChatModel
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCallChunk

__all__ = ["FunctionChatModel", "ModelCall", "ScriptedChatModel"]

Reply: TypeAlias = "AIMessage | str"
"""A scripted reply: an AIMessage, or a str standing for `AIMessage(content=str)`."""

_WORDS = re.compile(r"\s*\S+|\s+")


class ModelCall:
    """What one model call received: the messages, the stop sequences and the other kwargs."""

    __slots__ = ("kwargs", "messages", "stop")

    def __init__(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> None:
        self.messages = messages
        self.stop = stop
        self.kwargs = kwargs
        """Bound or call kwargs such as `tools` and `tool_choice`."""

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tool schemas the call got (from `bind_tools`), if any."""
        return self.kwargs.get("tools")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelCall):
            return NotImplemented
        return (self.messages, self.stop, self.kwargs) == (other.messages, other.stop, other.kwargs)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def __repr__(self) -> str:
        return f"ModelCall(messages={self.messages!r}, stop={self.stop!r}, kwargs={self.kwargs!r})"


def _as_message(reply: Any) -> AIMessage:
    if isinstance(reply, AIMessage):
        return reply
    if isinstance(reply, str):
        return AIMessage(reply)
    raise TypeError(f"A fake model reply must be an AIMessage or a str, got {type(reply).__name__}")


def _cut_at_stop(message: AIMessage, stop: list[str] | None) -> AIMessage:
    """The reply with its text content cut before the first stop sequence, as models do."""
    content = message.content
    if not stop or not isinstance(content, str):
        return message
    cut = min((i for s in stop if s and (i := content.find(s)) != -1), default=-1)
    if cut == -1:
        return message
    return AIMessage(
        content[:cut],
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        name=message.name,
        id=message.id,
        tool_calls=message.tool_calls,
        invalid_tool_calls=message.invalid_tool_calls,
        usage_metadata=message.usage_metadata,
    )


def _pieces(content: Any, chunk_size: int | None) -> list[Any]:
    """The content split for streaming: words with leading spaces, or fixed-size pieces."""
    if not isinstance(content, str) or not content:
        return [content]
    if chunk_size is None:
        return _WORDS.findall(content)
    return [content[i : i + chunk_size] for i in range(0, len(content), chunk_size)]


def _split(message: AIMessage, chunk_size: int | None = None) -> list[AIMessageChunk]:
    """The chunks a fake model streams for `message`; their sum equals it."""
    pieces = _pieces(message.content, chunk_size)
    chunks = [AIMessageChunk(p, id=message.id) for p in pieces[:-1]]
    tool_chunks: list[ToolCallChunk] = [
        {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
        for i, c in enumerate(message.tool_calls)
    ]
    start = len(tool_chunks)
    for i, bad in enumerate(message.invalid_tool_calls, start):
        tool_chunks.append({"name": bad["name"], "args": bad["args"], "id": bad["id"], "index": i})
    last = AIMessageChunk(
        pieces[-1],
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        id=message.id,
        usage_metadata=message.usage_metadata,
        tool_call_chunks=tool_chunks,
        chunk_position="last",
    )
    return [*chunks, last]


class _FakeChatModel(BaseChatModel):
    """Shared streaming and call recording of the fake models."""

    _llm_type = "fake-chat-model"

    def __init__(self, *, chunk_size: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive int or None, got {chunk_size!r}")
        self.chunk_size = chunk_size
        self.calls: list[ModelCall] = []
        """One record per call, in call order."""

    def _record(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> None:
        self.calls.append(ModelCall(list(messages), stop, dict(kwargs)))

    def _reply(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> AIMessage:
        raise NotImplementedError

    async def _areply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any
    ) -> AIMessage:
        return self._reply(messages, stop, kwargs)

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        return _cut_at_stop(self._reply(messages, stop, kwargs), stop)

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        reply = self._generate_message(messages, stop, **kwargs)
        yield from _split(reply, self.chunk_size)

    async def _agenerate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        return _cut_at_stop(await self._areply(messages, stop, kwargs), stop)

    async def _astream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        reply = await self._agenerate_message(messages, stop, **kwargs)
        for chunk in _split(reply, self.chunk_size):
            yield chunk


class ScriptedChatModel(_FakeChatModel):
    """Answers each call with the next scripted reply; `assert_complete()` checks all were used."""

    _llm_type = "scripted-chat-model"

    def __init__(
        self, responses: Sequence[Reply], *, chunk_size: int | None = None, **options: Any
    ) -> None:
        super().__init__(chunk_size=chunk_size, **options)
        self.responses: list[AIMessage] = [_as_message(r) for r in responses]
        self._next = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """How many scripted responses are still unused."""
        return len(self.responses) - self._next

    def _reply(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> AIMessage:
        with self._lock:
            self._record(messages, stop, kwargs)
            if self._next >= len(self.responses):
                raise AssertionError(
                    f"ScriptedChatModel got call {len(self.calls)} but was scripted with "
                    f"{len(self.responses)} response(s); add more responses to the script"
                )
            self._next += 1
            return self.responses[self._next - 1]

    def assert_complete(self) -> None:
        """Raise AssertionError unless every scripted response was used."""
        if self.remaining:
            raise AssertionError(
                f"ScriptedChatModel has {self.remaining} unused response(s) of "
                f"{len(self.responses)}; it was called {len(self.calls)} time(s)"
            )

    def __repr__(self) -> str:
        return f"ScriptedChatModel(responses={self.responses!r})"


ReplyFunction: TypeAlias = "Callable[..., Reply | Awaitable[Reply]]"
"""`fn(messages, **kwargs)` or `fn(messages)`, sync or async, returning an AIMessage or a str."""


class FunctionChatModel(_FakeChatModel):
    """A model played by `fn(messages, **kwargs)` (or `fn(messages)`), sync or async."""

    _llm_type = "function-chat-model"

    def __init__(self, fn: ReplyFunction, *, chunk_size: int | None = None, **options: Any) -> None:
        super().__init__(chunk_size=chunk_size, **options)
        self.fn = fn
        params = list(inspect.signature(fn).parameters.values())[1:]
        self._accepts: set[str] | None = (
            None
            if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
            else {p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL}
        )
        """Keyword names `fn` takes; None when it takes `**kwargs`."""

    def _call(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> Any:
        self._record(messages, stop, kwargs)
        given = kwargs if stop is None else {"stop": stop, **kwargs}
        if self._accepts is not None:
            given = {k: v for k, v in given.items() if k in self._accepts}
        return self.fn(messages, **given)

    def _reply(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> AIMessage:
        result = self._call(messages, stop, kwargs)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError(f"{self.fn!r} is async; call ainvoke or astream instead")
        return _as_message(result)

    async def _areply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any
    ) -> AIMessage:
        result = self._call(messages, stop, kwargs)
        if inspect.isawaitable(result):
            result = await result
        return _as_message(result)

    def __repr__(self) -> str:
        return f"FunctionChatModel(fn={self.fn!r})"
