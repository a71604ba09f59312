"""`BaseChatModel`: the Runnable every chat model builds on (invoke, stream, callbacks, tools).

A provider implements `_generate_message` (one reply) and/or `_stream_message` (reply chunks), plus
the async twins `_agenerate_message` / `_astream_message` when it has real async I/O. Missing hooks
are derived: generate merges the stream, stream yields one chunk from generate. An async hook the
subclass lacks is served by its sync hook run on a daemon worker (as langchain-core runs it in an
executor), so a sync-only provider never blocks the event loop: deadlines and `asyncio.wait_for`
can stop waiting for it (the call itself runs on, abandoned). Callbacks are chat-model callbacks
(`on_chat_model_start`, `on_llm_*`), fired only when a handler is attached.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast

from actloop.callbacks._llm_run import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from actloop.callbacks._manager import RunManager
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    message_chunk_to_message,
    message_from_openai,
)
from actloop.outputs import ChatGeneration, ChatGenerationChunk, ChatResult, LLMResult
from actloop.runnables._base import NOTHING, Runnable, amerge_chunks
from actloop.runnables._config import RunnableConfig, ensure_config
from actloop.runnables._fields import init_fields
from actloop.runnables._model_run import (
    acollect_input,
    collect_input,
    configure_model_run,
    serialized,
)

if TYPE_CHECKING:
    from actloop.callbacks import Callbacks
    from actloop.tools._openai import ToolLike

__all__ = [
    "BaseChatModel",
    "LanguageModelInput",
    "MessageLike",
    "PromptValueLike",
    "SimpleChatModel",
    "convert_to_messages",
]


class PromptValueLike(Protocol):
    """Anything with `to_messages()`, such as a prompt value."""

    def to_messages(self) -> list[BaseMessage]: ...


MessageLike: TypeAlias = "BaseMessage | tuple[str, Any] | str | dict[str, Any]"
"""A message, a `(role, content)` pair, a string (a human message) or an OpenAI-style dict."""
LanguageModelInput: TypeAlias = "str | Sequence[MessageLike] | PromptValueLike"
"""What a chat model accepts: a string, a sequence of message-likes, or a prompt value."""

_ROLES: dict[str, type[BaseMessage]] = {
    "human": HumanMessage,
    "user": HumanMessage,
    "ai": AIMessage,
    "assistant": AIMessage,
    "system": SystemMessage,
    "developer": SystemMessage,
}


_END: Any = object()
"""What `next` returns for an exhausted sync stream read from the async path."""


def _to_message(item: Any) -> BaseMessage:
    """One message from a message-like (see `MessageLike`)."""
    if isinstance(item, BaseMessage):
        return item
    if isinstance(item, str):
        return HumanMessage(item)
    if isinstance(item, dict) and "role" in item:
        return message_from_openai(item)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(item, dict):
        role, content = item.get("type"), item.get("content", "")  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    elif isinstance(item, (tuple, list)) and len(item) == 2:  # pyright: ignore[reportUnknownArgumentType]
        role, content = item  # pyright: ignore[reportUnknownVariableType]
    else:
        raise ValueError(
            f"Cannot turn {item!r} into a message; "
            "pass a BaseMessage, a (role, content) tuple or a str"
        )
    return _from_role(str(role), content)  # pyright: ignore[reportUnknownArgumentType]


def _from_role(role: str, content: Any) -> BaseMessage:
    cls = _ROLES.get(role)
    if cls is not None:
        return cls(content)
    if role == "tool":
        raise ValueError("A ('tool', content) tuple has no tool_call_id; pass a ToolMessage")
    if role == "function":
        raise ValueError("A ('function', content) tuple has no name; pass a FunctionMessage")
    raise ValueError(
        f"Unexpected message type: {role!r}. Use one of 'human', 'user', 'ai', 'assistant', "
        "'system' or 'developer'."
    )


def convert_to_messages(input: Any) -> list[BaseMessage]:
    """The message list for a model input: a str, a sequence of message-likes or a prompt value."""
    if type(input) is list:  # the common case first: a list of messages
        items: list[Any] = input  # pyright: ignore[reportUnknownVariableType]
        if all(map(isinstance, items, repeat(BaseMessage))):  # C speed: a long history
            return list(items)
    if isinstance(input, str):
        return [HumanMessage(input)]
    to_messages: Any = getattr(input, "to_messages", None)  # pyright: ignore[reportUnknownArgumentType]
    if to_messages is not None:
        return to_messages()
    if isinstance(input, Sequence):
        return [_to_message(item) for item in input]  # pyright: ignore[reportUnknownVariableType]
    raise ValueError(
        f"Invalid input type {type(input)}. Must be a PromptValue, str, or list of BaseMessages."
    )


def _to_chunk(message: AIMessage) -> AIMessageChunk:
    """A whole reply as one final chunk."""
    if isinstance(message, AIMessageChunk):
        return message
    return AIMessageChunk(
        message.content,
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        name=message.name,
        id=message.id,
        tool_calls=message.tool_calls,
        invalid_tool_calls=message.invalid_tool_calls,
        usage_metadata=message.usage_metadata,
        chunk_position="last",
    )


def _merge(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    if not chunks:
        raise ValueError("No generation chunks were returned")
    return chunks[0] + chunks[1:] if len(chunks) > 1 else chunks[0]


def _closing_chunk(last: AIMessageChunk | None) -> AIMessageChunk | None:
    """The empty `chunk_position="last"` chunk langchain-core adds when the provider sent none."""
    if last is None or last.chunk_position is not None:
        return None
    return AIMessageChunk("" if isinstance(last.content, str) else [], chunk_position="last")


class BaseChatModel(Runnable[LanguageModelInput, AIMessage]):
    """A chat model: messages in, an `AIMessage` out; streams `AIMessageChunk`s."""

    callbacks: Callbacks = None
    """Handlers for this model's runs only (a list or a manager)."""
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    verbose: bool = False
    profile: dict[str, Any] | None = None
    """What the model can do, as langchain-core's `ModelProfile` (e.g. `{"structured_output":
    True}`: `create_agent`'s auto strategy then uses the provider's structured output)."""
    _llm_type: str = "chat-model"
    """Reported as `invocation_params["_type"]`."""

    def __init__(
        self,
        *,
        callbacks: Callbacks = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        verbose: bool = False,
        name: str | None = None,
        **fields: Any,
    ) -> None:
        self.callbacks = callbacks
        self.tags = tags
        self.metadata = metadata
        self.verbose = verbose
        self.name = name
        init_fields(self, fields)  # settings declared as annotated fields, langchain-core style

    @property
    def InputType(self) -> Any:
        return LanguageModelInput

    @property
    def OutputType(self) -> Any:
        return AIMessage

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    # -- provider hooks ------------------------------------------------------------------------

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        """One reply; by default the merged chunks of `_stream_message`."""
        if _defines(self, "_generate"):
            run_manager = kwargs.pop("run_manager", None)
            result = getattr(self, "_generate")(messages, stop, run_manager, **kwargs)  # noqa: B009
            return cast(AIMessage, result.generations[0].message)
        if not self._overrides("_stream_message") and not _defines(self, "_stream"):
            raise NotImplementedError(self._missing_hooks())
        chunks = list(self._stream_message(messages, stop, **kwargs))
        return message_chunk_to_message(_merge(chunks))

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        """Reply chunks; by default one chunk holding `_generate_message`'s reply."""
        if _defines(self, "_stream"):
            kwargs.pop("run_manager", None)  # as langchain-core: the stream reports its chunks
            stream: Any = getattr(self, "_stream")  # noqa: B009  # langchain-core's signature
            for chunk in stream(messages, stop, None, **kwargs):
                yield cast(AIMessageChunk, chunk.message)
            return
        yield _to_chunk(self._generate_message(messages, stop, **kwargs))

    async def _agenerate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        """One reply (async): langchain-core's `_agenerate` if defined, else merged
        `_astream_message`, else the sync hook on a worker thread (never blocking the loop)."""
        if _defines(self, "_agenerate"):
            run_manager = kwargs.pop("run_manager", None)
            result = await getattr(self, "_agenerate")(messages, stop, run_manager, **kwargs)  # noqa: B009
            return cast(AIMessage, result.generations[0].message)
        if _defines(self, "_generate") or _defines(self, "_stream"):
            kwargs = _sync_manager(kwargs)
        elif self._overrides("_astream_message"):
            chunks = [c async for c in self._astream_message(messages, stop, **kwargs)]
            return message_chunk_to_message(_merge(chunks))
        from actloop.runnables._workers import run_in_worker

        call = functools.partial(self._generate_message, messages, stop, **kwargs)
        return await run_in_worker(call)

    async def _astream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        """Reply chunks (async): langchain-core's `_astream` if defined, else from
        `_agenerate_message` if any, else the sync stream, each chunk read on a worker thread."""
        if _defines(self, "_astream"):
            kwargs.pop("run_manager", None)
            astream: Any = getattr(self, "_astream")  # noqa: B009  # langchain-core's signature
            async for chunk in astream(messages, stop, None, **kwargs):
                yield cast(AIMessageChunk, chunk.message)
            return
        if _defines(self, "_stream"):
            kwargs = _sync_manager(kwargs)
        elif self._overrides("_agenerate_message") or _defines(self, "_agenerate"):
            yield _to_chunk(await self._agenerate_message(messages, stop, **kwargs))
            return
        from actloop.runnables._workers import run_in_worker

        chunks = self._stream_message(messages, stop, **kwargs)
        while True:
            chunk: Any = await run_in_worker(next, chunks, _END)
            if chunk is _END:
                return
            yield chunk

    def _identifying_params(self) -> dict[str, Any]:
        """Model settings reported in `invocation_params` (e.g. the model name)."""
        return {}

    def _overrides(self, hook: str) -> bool:
        return getattr(type(self), hook) is not getattr(BaseChatModel, hook)

    def _missing_hooks(self) -> str:
        name = type(self).__name__
        if self._overrides("_agenerate_message") or self._overrides("_astream_message"):
            return f"{name} only implements async hooks; call ainvoke or astream"
        return f"{name} must implement _generate_message or _stream_message"

    # -- public API ----------------------------------------------------------------------------

    def invoke(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        """One reply to `input`."""
        config = ensure_config(config)
        messages = convert_to_messages(input)
        run = self._start(messages, config, stop, kwargs)
        if run is None:
            return self._generate_message(messages, stop, **kwargs)
        run.flush()
        kwargs = _with_manager(self, run, kwargs, is_async=False)
        if self._wants_tokens(run, "_stream_message", "_stream"):
            chunks = list(self._observed(run, self._chunks(messages, stop, kwargs), whole=True))
            return message_chunk_to_message(_merge(chunks))
        try:
            message = self._generate_message(messages, stop, **kwargs)
        except BaseException as exc:
            run.fire("on_llm_error", exc, response=LLMResult(generations=[]))
            raise
        run.fire("on_llm_end", LLMResult(generations=[[ChatGeneration(message)]]))
        return message

    async def ainvoke(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        """One reply to `input` (async)."""
        config = ensure_config(config)
        messages = convert_to_messages(input)
        run = self._start(messages, config, stop, kwargs)
        if run is None:
            return await self._agenerate_message(messages, stop, **kwargs)
        await run.aflush()
        kwargs = _with_manager(self, run, kwargs, is_async=True)
        if self._wants_tokens(run, "_stream_message", "_astream_message", "_stream", "_astream"):
            stream = self._aobserved(run, self._achunks(messages, stop, kwargs), whole=True)
            chunks = [c async for c in stream]
            return message_chunk_to_message(_merge(chunks))
        try:
            message = await self._agenerate_message(messages, stop, **kwargs)
        except BaseException as exc:
            await run.afire("on_llm_error", exc, response=LLMResult(generations=[]))
            raise
        await run.afire("on_llm_end", LLMResult(generations=[[ChatGeneration(message)]]))
        return message

    def stream(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> Iterator[AIMessageChunk]:
        """The reply to `input` as chunks; their sum is the whole reply."""
        return self._streamed(input, config, stop, kwargs)

    def _streamed(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None,
        stop: list[str] | None,
        kwargs: dict[str, Any],
    ) -> Iterator[AIMessageChunk]:
        """`stream`'s generator, the call's kwargs as a dict (`transform` hands on its own)."""
        config = ensure_config(config)
        messages = convert_to_messages(input)
        run = self._start(messages, config, stop, kwargs)
        chunks = self._chunks(messages, stop, _with_manager(self, run, kwargs, is_async=False))
        if run is None:
            yield from chunks
            return
        run.flush()
        yield from self._observed(run, chunks)

    async def astream(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AIMessageChunk]:
        """The reply to `input` as chunks (async); their sum is the whole reply."""
        run, chunks = self._aopen(input, config, stop, kwargs)
        if run is not None:
            await run.aflush()
            chunks = self._aobserved(run, chunks)
        async for chunk in chunks:
            yield chunk

    def _aopen(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None,
        stop: list[str] | None,
        kwargs: dict[str, Any],
    ) -> tuple[RunManager | None, AsyncIterator[AIMessageChunk]]:
        """`astream`'s run (None when nothing listens) and the reply's chunks, not yet observed."""
        config = ensure_config(config)
        messages = convert_to_messages(input)
        run = self._start(messages, config, stop, kwargs)
        return run, self._achunks(messages, stop, _with_manager(self, run, kwargs, is_async=True))

    _fast_guard = ("astream", "atransform")

    _fast_single = False  # (`_fast_buffers`: `atransform` collects its whole input first)

    def _afast_merged(
        self, input: LanguageModelInput, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> Awaitable[Any]:
        return self._amerged(input, config, dict(kwargs))

    async def _amerged(
        self, input: LanguageModelInput, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> Any:
        """`astream`'s chunks added together, without `astream`'s own generator."""
        stop = kwargs.pop("stop", None)
        run, chunks = self._aopen(input, config, stop, kwargs)
        if run is not None:
            await run.aflush()
            chunks = self._aobserved(run, chunks)
        return await amerge_chunks(chunks, NOTHING)

    def transform(
        self,
        chunks: Iterator[LanguageModelInput],
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Iterator[AIMessageChunk]:
        """Wait for the whole upstream input (e.g. a prompt value), then stream the reply."""
        if type(self).stream is BaseChatModel.stream and "input" not in kwargs:
            stop = kwargs.pop("stop", None)  # `kwargs` is this call's own dict
            yield from self._streamed(collect_input(chunks), config, stop, kwargs)
        else:
            yield from self.stream(collect_input(chunks), config, **kwargs)

    async def atransform(
        self,
        chunks: AsyncIterator[LanguageModelInput],
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AIMessageChunk]:
        """Wait for the whole upstream input, then stream the reply (async)."""
        async for out in self.astream(await acollect_input(chunks), config, **kwargs):
            yield out

    def bind_tools(
        self,
        tools: Sequence[ToolLike],
        *,
        tool_choice: dict[str, Any] | str | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """This model with `tools` (as OpenAI tool schemas) passed to every call."""
        from actloop.tools import convert_to_openai_tool

        schemas: list[dict[str, Any]] = [convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=schemas, **kwargs)

    # -- machinery -----------------------------------------------------------------------------

    def _chunks(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> Iterator[AIMessageChunk]:
        last: AIMessageChunk | None = None
        for last in self._stream_message(messages, stop, **kwargs):
            yield last
        if (closing := _closing_chunk(last)) is not None:
            yield closing

    async def _achunks(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> AsyncIterator[AIMessageChunk]:
        last: AIMessageChunk | None = None
        async for last in self._astream_message(messages, stop, **kwargs):
            yield last
        if (closing := _closing_chunk(last)) is not None:
            yield closing

    def _observed(
        self, run: RunManager, chunks: Iterator[AIMessageChunk], *, whole: bool = False
    ) -> Iterator[AIMessageChunk]:
        """Pass chunks through, reporting each as a token and the reply at the end (`whole`: as an
        AIMessage, for invoke)."""
        seen: list[AIMessageChunk] = []
        try:
            for chunk in chunks:
                run.fire("on_llm_new_token", chunk.content, chunk=ChatGenerationChunk(chunk))
                seen.append(chunk)
                yield chunk
            merged = _merge(seen)
        except BaseException as exc:
            run.fire("on_llm_error", exc, response=_partial(seen))
            raise
        run.fire("on_llm_end", _result(merged, whole))

    async def _aobserved(
        self, run: RunManager, chunks: AsyncIterator[AIMessageChunk], *, whole: bool = False
    ) -> AsyncIterator[AIMessageChunk]:
        seen: list[AIMessageChunk] = []
        try:
            async for chunk in chunks:
                await run.afire("on_llm_new_token", chunk.content, chunk=ChatGenerationChunk(chunk))
                seen.append(chunk)
                yield chunk
            merged = _merge(seen)
        except BaseException as exc:
            await run.afire("on_llm_error", exc, response=_partial(seen))
            raise
        await run.afire("on_llm_end", _result(merged, whole))

    def _wants_tokens(self, run: RunManager, *hooks: str) -> bool:
        """Stream inside invoke when a handler consumes streamed output (as astream_events does)."""
        return any(self._overrides(h) or _defines(self, h) for h in hooks) and any(
            hasattr(h, "_on_stream") for h in run.handlers
        )

    def _start(
        self,
        messages: list[BaseMessage],
        config: RunnableConfig,
        stop: list[str] | None,
        kwargs: dict[str, Any],
    ) -> RunManager | None:
        """Open the chat-model run if any handler listens, else None (no callback work)."""
        manager = configure_model_run(self, config, lambda: self._ls_params(stop, kwargs))
        if manager is None:
            return None
        identifying: Any = (
            self._identifying_params
        )  # a method here, a property langchain-core style
        if callable(identifying):
            identifying = identifying()
        params = {**identifying, "_type": self._llm_type, "stop": stop, **kwargs}
        options = {"stop": stop, **{k: params[k] for k in kwargs}}
        return manager.start(
            "on_chat_model_start",
            self._serialized(),
            [messages],
            run_id=config.get("run_id"),
            name=config.get("run_name"),
            invocation_params=params,
            options=options,
            batch_size=1,
        )

    def _serialized(self) -> dict[str, Any]:
        """`on_chat_model_start`'s `serialized` (langchain-core's not-implemented shape)."""
        return serialized(self)

    def _ls_params(self, stop: list[str] | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The `ls_*` tracing metadata langchain-core adds to a chat model run."""
        provider = type(self).__name__
        provider = provider[4:] if provider.startswith("Chat") else provider.removesuffix("Chat")
        params: dict[str, Any] = {"ls_provider": provider.lower(), "ls_model_type": "chat"}
        if stop:
            params["ls_stop"] = stop
        model = (
            kwargs.get("model") or getattr(self, "model", None) or getattr(self, "model_name", None)
        )
        if isinstance(model, str):
            params["ls_model_name"] = model
        params["ls_integration"] = "langchain_chat_model"
        return params


class SimpleChatModel(BaseChatModel):
    """A chat model written as `_call(messages, stop, run_manager) -> str` (langchain-core's)."""

    def _call(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        """The reply text."""
        raise NotImplementedError(f"{type(self).__name__} must implement _call")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """`_call`'s text as one AI message."""
        text = self._call(messages, stop, run_manager, **kwargs)
        return ChatResult(generations=[ChatGeneration(AIMessage(content=text))])


_RUNNABLE_HOOKS: dict[str, Any] = {
    "_stream": getattr(Runnable, "_stream"),  # noqa: B009
    "_astream": getattr(Runnable, "_astream"),  # noqa: B009
}


def _defines(model: BaseChatModel, hook: str) -> bool:
    """True when the model implements langchain-core's hook `hook` (`_generate`, `_stream`, ...)."""
    found = getattr(type(model), hook, None)
    return found is not None and found is not _RUNNABLE_HOOKS.get(hook)


def _is_langchain_style(model: BaseChatModel) -> bool:
    return any(_defines(model, h) for h in ("_generate", "_agenerate", "_stream", "_astream"))


def _with_manager(
    model: BaseChatModel, run: RunManager | None, kwargs: dict[str, Any], *, is_async: bool
) -> dict[str, Any]:
    """The hook keywords plus `run_manager` for a model written the langchain-core way."""
    if run is None or not _is_langchain_style(model):
        return kwargs
    manager = AsyncCallbackManagerForLLMRun(run) if is_async else CallbackManagerForLLMRun(run)
    return {**kwargs, "run_manager": manager}


def _sync_manager(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keywords for a sync hook called from the async path: the sync run manager."""
    manager = kwargs.get("run_manager")
    if isinstance(manager, AsyncCallbackManagerForLLMRun):
        return {**kwargs, "run_manager": manager.get_sync()}
    return kwargs


def _partial(seen: list[AIMessageChunk]) -> LLMResult:
    """What `on_llm_error` gets: the chunks streamed before the error, merged."""
    return LLMResult(generations=[[ChatGenerationChunk(_merge(seen))]] if seen else [])


def _result(merged: AIMessageChunk, whole: bool) -> LLMResult:
    """What `on_llm_end` gets: the merged chunk, or for invoke the equivalent AIMessage."""
    if whole:
        return LLMResult(generations=[[ChatGeneration(message_chunk_to_message(merged))]])
    return LLMResult(generations=[[ChatGenerationChunk(merged)]])
