"""Use LangChain chat models, text models and tools in actloop: `from_langchain(obj)`.

A `langchain_core` chat model becomes an actloop `BaseChatModel` (invoke, stream and their async
twins; tool calls and streamed tool-call chunks kept), a `langchain_core` text model
(`BaseLLM`) an actloop `LLM`, and a `langchain_core` tool an actloop `BaseTool`. Messages are
copied field by field each way. `langchain_core` is imported when `from_langchain` is called;
without it that raises `MissingDependencyError` naming the extra.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from actloop.chat_models import BaseChatModel, LanguageModelInput
from actloop.exceptions import ToolException
from actloop.integrations._langchain_llm import LangChainLLM, llm_from_langchain
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from actloop.models._errors import MissingDependencyError
from actloop.runnables._base import Runnable
from actloop.tools import BaseTool, convert_to_openai_tool

__all__ = [
    "LangChainChatModel",
    "LangChainLLM",
    "LangChainTool",
    "from_langchain",
    "message_from_langchain",
    "message_to_langchain",
]

_CHAT_ROLES: dict[str, type[BaseMessage]] = {
    "user": HumanMessage,
    "human": HumanMessage,
    "assistant": AIMessage,
    "ai": AIMessage,
    "system": SystemMessage,
}


def _lc() -> Any:
    """The `langchain_core.messages` module, or a MissingDependencyError naming the extra."""
    try:
        from langchain_core import messages
    except ImportError as exc:
        raise MissingDependencyError(
            'from_langchain needs the langchain-core package: pip install "actloop[langchain]"',
            name="langchain_core",
        ) from exc
    return messages


def from_langchain(
    obj: Any,
) -> LangChainChatModel | LangChainTool | Runnable[Any, str] | BaseMessage:
    """An actloop chat model for a LangChain one (bound or not), a text model for a LangChain
    `BaseLLM` (its bound kwargs bound on ours), a tool for a LangChain tool, or a message for a
    LangChain message (what a LangChain memory or chat history holds)."""
    lc = _lc()
    if isinstance(obj, lc.BaseMessage):
        return message_from_langchain(obj)
    from langchain_core.language_models import BaseChatModel as LCChatModel
    from langchain_core.runnables import RunnableBinding as LCBinding
    from langchain_core.tools import BaseTool as LCTool

    if isinstance(obj, LCTool):
        return LangChainTool(obj)
    inner: Any = obj
    while isinstance(inner, LCBinding):
        inner = inner.bound  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    if isinstance(inner, LCChatModel):
        return LangChainChatModel(obj)
    text_model = llm_from_langchain(obj)
    if text_model is not None:
        return text_model
    raise TypeError(
        "from_langchain takes a langchain_core chat model, text model, tool or message, "
        f"got {type(obj).__name__}"
    )


# -- messages ------------------------------------------------------------------------------------


def message_to_langchain(message: BaseMessage) -> Any:
    """The langchain_core message with the same fields as `message`."""
    lc = _lc()
    common: dict[str, Any] = {
        "content": message.content,
        "additional_kwargs": message.additional_kwargs,
        "response_metadata": message.response_metadata,
        "name": message.name,
        "id": message.id,
    }
    if isinstance(message, AIMessageChunk):
        extra = {"chunk_position": message.chunk_position} if message.chunk_position else {}
        return lc.AIMessageChunk(
            **common,
            tool_call_chunks=message.tool_call_chunks,
            usage_metadata=message.usage_metadata,
            **extra,
        )
    if isinstance(message, AIMessage):
        return lc.AIMessage(
            **common,
            tool_calls=message.tool_calls,
            invalid_tool_calls=message.invalid_tool_calls,
            usage_metadata=message.usage_metadata,
        )
    if isinstance(message, ToolMessage):
        return lc.ToolMessage(
            **common,
            tool_call_id=message.tool_call_id,
            artifact=message.artifact,
            status=message.status,
        )
    if isinstance(message, (HumanMessage, SystemMessage, FunctionMessage)):
        return getattr(lc, type(message).__name__)(**common)
    raise TypeError(f"Cannot turn a {type(message).__name__} into a LangChain message")


def message_from_langchain(message: Any) -> BaseMessage:
    """The actloop message with the same fields as a langchain_core message (an actloop message,
    which a LangChain model's overridden `invoke` may return, as it is)."""
    if isinstance(message, BaseMessage):
        return message
    lc = _lc()
    common: dict[str, Any] = {
        "additional_kwargs": dict(message.additional_kwargs),
        "response_metadata": dict(message.response_metadata),
        "name": message.name,
        "id": message.id,
    }
    content = message.content
    if isinstance(message, lc.AIMessageChunk):
        return AIMessageChunk(
            content,
            **common,
            tool_call_chunks=message.tool_call_chunks,
            usage_metadata=message.usage_metadata,
            chunk_position=getattr(message, "chunk_position", None),
        )
    if isinstance(message, lc.AIMessage):
        return AIMessage(
            content,
            **common,
            tool_calls=message.tool_calls,
            invalid_tool_calls=message.invalid_tool_calls,
            usage_metadata=message.usage_metadata,
        )
    if isinstance(message, lc.ToolMessage):
        return ToolMessage(
            content,
            **common,
            tool_call_id=message.tool_call_id,
            artifact=message.artifact,
            status=message.status,
        )
    if isinstance(message, lc.FunctionMessage):
        return FunctionMessage(content, **{**common, "name": message.name})
    cls = _class_for(lc, message)
    return cls(content, **common)


def _class_for(lc: Any, message: Any) -> type[BaseMessage]:
    if isinstance(message, lc.HumanMessage):
        return HumanMessage
    if isinstance(message, lc.SystemMessage):
        return SystemMessage
    role = getattr(message, "role", None)
    if isinstance(message, lc.ChatMessage) and role in _CHAT_ROLES:
        return _CHAT_ROLES[role]
    raise TypeError(
        f"Cannot turn a LangChain {type(message).__name__} (role {role!r}) into actloop"
    )


def _reply(message: Any) -> AIMessage:
    converted = message_from_langchain(message)
    if not isinstance(converted, AIMessage):
        raise TypeError(
            f"The LangChain model answered with a {type(message).__name__}, not an AI message"
        )
    return converted


def _chunk(message: Any) -> AIMessageChunk:
    """A streamed LangChain message as a chunk (a model without streaming yields its AIMessage)."""
    converted = message_from_langchain(message)
    if isinstance(converted, AIMessage) and not isinstance(converted, AIMessageChunk):
        return AIMessageChunk(
            converted.content,
            additional_kwargs=converted.additional_kwargs,
            response_metadata=converted.response_metadata,
            name=converted.name,
            id=converted.id,
            tool_calls=converted.tool_calls,
            invalid_tool_calls=converted.invalid_tool_calls,
            usage_metadata=converted.usage_metadata,
            chunk_position="last",
        )
    if not isinstance(converted, AIMessageChunk):
        raise TypeError(
            f"The LangChain model streamed a {type(message).__name__}, not an AIMessageChunk"
        )
    return converted


# -- chat models ---------------------------------------------------------------------------------


def _call_kwargs(stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Call kwargs without `stop` when there is none, so a LangChain binding's bound `stop`
    (`create_react_agent` binds it on the LangChain model) is not overridden by `stop=None`;
    the call's tags and metadata as the LangChain model's config."""
    config = _CALL_CONFIG.get()
    if config is not None:
        kwargs = {**kwargs, "config": config}
    return {**kwargs, "stop": stop} if stop is not None else kwargs


_CALL_CONFIG: ContextVar[dict[str, Any] | None] = ContextVar("actloop_lc_call", default=None)
"""The tags and metadata of the `invoke`/`ainvoke` call running now (passed on to LangChain)."""


def _passed_on(config: Any) -> dict[str, Any] | None:
    """What of an actloop call's config a LangChain model gets: its tags and metadata (as
    LangChain's middleware mark internal calls); None when it has neither."""
    if not config:
        return None
    shown = {k: config[k] for k in ("tags", "metadata") if config.get(k)}
    return shown or None


class LangChainChatModel(BaseChatModel):
    """An actloop chat model that runs a LangChain chat model (or one with bound tools)."""

    _llm_type = "langchain-chat-model"

    def __init__(self, langchain_model: Any, **options: Any) -> None:
        super().__init__(**options)
        self.langchain_model = langchain_model
        """The wrapped langchain_core chat model, or a binding of one (from `bind_tools`)."""

    def __repr__(self) -> str:
        return f"LangChainChatModel({self.langchain_model!r})"

    def _identifying_params(self) -> dict[str, Any]:
        return {"langchain_model": type(self.langchain_model).__name__}

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> AIMessage:
        """actloop's `invoke`; the call's tags and metadata reach the LangChain model."""
        token = _CALL_CONFIG.set(_passed_on(config))
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            _CALL_CONFIG.reset(token)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> AIMessage:
        """actloop's `ainvoke`; the call's tags and metadata reach the LangChain model."""
        token = _CALL_CONFIG.set(_passed_on(config))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _CALL_CONFIG.reset(token)

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        lc_messages = [message_to_langchain(m) for m in messages]
        return _reply(self.langchain_model.invoke(lc_messages, **_call_kwargs(stop, kwargs)))

    async def _agenerate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        lc_messages = [message_to_langchain(m) for m in messages]
        return _reply(await self.langchain_model.ainvoke(lc_messages, **_call_kwargs(stop, kwargs)))

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        lc_messages = [message_to_langchain(m) for m in messages]
        for chunk in self.langchain_model.stream(lc_messages, **_call_kwargs(stop, kwargs)):
            yield _chunk(chunk)

    async def _astream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        lc_messages = [message_to_langchain(m) for m in messages]
        async for chunk in self.langchain_model.astream(lc_messages, **_call_kwargs(stop, kwargs)):
            yield _chunk(chunk)

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The LangChain model's own `bind_tools`, wrapped; actloop tools go as OpenAI schemas."""
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        bound = self.langchain_model.bind_tools([_tool_for_langchain(t) for t in tools], **kwargs)
        return LangChainChatModel(
            bound, callbacks=self.callbacks, tags=self.tags, metadata=self.metadata, name=self.name
        )


def _tool_for_langchain(tool: Any) -> Any:
    """What LangChain's `bind_tools` understands: the original LangChain tool, or a schema."""
    if isinstance(tool, LangChainTool):
        return tool.langchain_tool
    if isinstance(tool, BaseTool):
        return convert_to_openai_tool(tool)
    return tool


# -- tools ---------------------------------------------------------------------------------------


class LangChainTool(BaseTool):
    """An actloop tool that runs a LangChain tool; a LangChain ToolException becomes actloop's."""

    langchain_tool: Any = None
    """The wrapped langchain_core tool."""

    def __init__(self, langchain_tool: Any, **kwargs: Any) -> None:
        options: dict[str, Any] = {
            "name": langchain_tool.name,
            "description": langchain_tool.description,
            "args_schema": langchain_tool.args_schema,
            "return_direct": langchain_tool.return_direct,
            "response_format": langchain_tool.response_format,
        }
        super().__init__(langchain_tool=langchain_tool, **{**options, **kwargs})

    def _input(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        value: Any = args[0] if args else kwargs
        if self.response_format == "content_and_artifact" and isinstance(value, dict):
            fields: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return {"type": "tool_call", "name": self.name, "args": fields, "id": "actloop"}
        return value

    def _output(self, result: Any) -> Any:
        if self.response_format != "content_and_artifact":
            return result
        if isinstance(result, tuple):
            return result  # pyright: ignore[reportUnknownVariableType]
        return (result.content, result.artifact) if hasattr(result, "artifact") else (result, None)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        from langchain_core.tools import ToolException as LCToolException

        try:
            return self._output(self.langchain_tool.invoke(self._input(args, kwargs)))
        except LCToolException as exc:
            raise ToolException(*exc.args) from exc

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        from langchain_core.tools import ToolException as LCToolException

        try:
            return self._output(await self.langchain_tool.ainvoke(self._input(args, kwargs)))
        except LCToolException as exc:
            raise ToolException(*exc.args) from exc
