"""`ChatOpenAI`: chat completions from OpenAI or any OpenAI-compatible server, on the `openai` SDK.

The SDK's clients send the requests and retry 429s, 5xx and connection errors with backoff up to
`max_retries`; actloop reads the raw JSON and server-sent events itself, so a malformed reply or a
stream that breaks off raises a typed `ModelAPIError` (see `actloop.models`) instead of passing a
truncated reply off as whole. Every error leaving a call has the API key masked out of it and out
of its chained causes, and the SDK's log records are masked too (see `_secret`). The `openai`
package is imported only when a `ChatOpenAI` is built. Each attempt is held to `timeout` in total
and each reply to a size limit (see `_openai_http`). A lone surrogate in a message (`\ud800`, or
a byte kept by `surrogateescape`), which UTF-8 cannot encode, is sent as U+FFFD (the request is
built again only when encoding it failed, so other calls pay nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from actloop.chat_models import BaseChatModel, LanguageModelInput
from actloop.exceptions import ConfigurationError
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage, message_to_openai
from actloop.models import _openai_wire as wire
from actloop.models._errors import ModelAPIError
from actloop.models._openai_sdk import (
    api_key_from,
    client_options,
    import_openai,
    sdk_error,
    without_surrogates,
)
from actloop.models._secret import Secret, scrub, watch_logs
from actloop.runnables._base import Runnable

if TYPE_CHECKING:
    from actloop.tools._openai import ToolLike

__all__ = ["ChatOpenAI"]

_SDK_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")
"""Call kwargs that configure the SDK request rather than go into the JSON body."""
_TOOL_CHOICES = ("auto", "none", "required")

_ALIASES = {
    "model_name": "model",
    "openai_api_key": "api_key",
    "openai_api_base": "base_url",
    "openai_organization": "organization",
    "request_timeout": "timeout",
    "max_completion_tokens": "max_tokens",
}
"""langchain-openai's field names, accepted so ported code runs unchanged."""


_UNRESOLVED: Any = object()


def default_profile(model: str) -> dict[str, Any] | None:
    """langchain-openai's profile of `model`, a copy (None when unknown). Without the Responses
    API no tool can be added mid-conversation, so `mid_conversation_tools` is False, as there."""
    from actloop.models._openai_profiles import PROFILES

    found = PROFILES.get(model)
    if not found:
        return None
    profile = dict(found)
    if profile.get("mid_conversation_tools"):
        profile["mid_conversation_tools"] = False
    return profile


class ChatOpenAI(BaseChatModel):
    """An OpenAI chat model (or any server speaking the chat completions API), sync and async."""

    _llm_type = "openai-chat"

    def __init__(
        self,
        model: str = "gpt-3.5-turbo",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        organization: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        stop: list[str] | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
        streaming: bool = False,
        stream_usage: bool | None = None,
        model_kwargs: dict[str, Any] | None = None,
        default_headers: dict[str, str] | None = None,
        **options: Any,
    ) -> None:
        given = {_ALIASES[k]: options.pop(k) for k in list(options) if k in _ALIASES}
        super().__init__(**options)
        import_openai()
        self.model: str = given.get("model", model)
        self.base_url: str | None = (
            given.get("base_url", base_url)
            or os.environ.get("OPENAI_BASE_URL")
            or os.environ.get("OPENAI_API_BASE")
        )
        self.api_key = api_key_from(given.get("api_key", api_key), self.base_url)
        """The API key; `repr` and `str` mask it, `.get_secret_value()` reveals it."""
        watch_logs(self.api_key)
        self.organization = given.get("organization", organization) or os.environ.get(
            "OPENAI_ORG_ID"
        )
        self.temperature = temperature
        self.max_tokens: int | None = given.get("max_tokens", max_tokens)
        self.top_p = top_p
        self.seed = seed
        self.stop = stop
        self.timeout: float | None = given.get("timeout", timeout)
        self.max_retries = max_retries
        self.streaming = streaming
        """Build `invoke`'s reply from a stream (tokens reach callbacks as they arrive)."""
        self.stream_usage = stream_usage if stream_usage is not None else self.base_url is None
        """Ask for a usage chunk at the end of a stream (`stream_options.include_usage`). As in
        langchain-openai, on by default only for OpenAI's own URL: many OpenAI-compatible
        servers refuse the option; pass True to ask for it."""
        self.model_kwargs = dict(model_kwargs or {})
        """Extra fields sent in every request body (e.g. `{"top_k": 40}` for llama.cpp)."""
        self.default_headers = default_headers
        self._lock = threading.Lock()
        self._sync_client: Any = None
        self._async_client: tuple[asyncio.AbstractEventLoop, Any] | None = None

    @property
    def model_name(self) -> str:
        """The model name (LangChain's field name for `model`)."""
        return self.model

    @property
    def profile(self) -> dict[str, Any] | None:  # pyright: ignore[reportIncompatibleVariableOverride]
        """What the model can do, as langchain-openai's profile of the same model name (None
        for a name it does not know); settable. Read when first asked for (`create_agent`'s
        auto strategy reads `structured_output`, summarization `max_input_tokens`)."""
        found: Any = self.__dict__.get("_profile", _UNRESOLVED)
        if found is _UNRESOLVED:
            found = self._profile = default_profile(self.model)
        return found

    @profile.setter
    def profile(self, value: dict[str, Any] | None) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._profile = value

    @property
    def openai_api_key(self) -> Secret:
        """The API key (LangChain's field name for `api_key`)."""
        return self.api_key

    def __repr__(self) -> str:
        shown = {"model": self.model, "base_url": self.base_url, "api_key": self.api_key}
        shown.update(self._default_params())
        args = ", ".join(f"{k}={v!r}" for k, v in shown.items() if v is not None)
        return f"ChatOpenAI({args})"

    def _default_params(self) -> dict[str, Any]:
        """The request fields set on the model (unset ones are left to the server)."""
        params: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "seed": self.seed,
            "stop": self.stop,
        }
        params = {k: v for k, v in params.items() if v is not None}
        params.update(self.model_kwargs)
        return params

    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model, **self._default_params()}

    # -- tools ---------------------------------------------------------------------------------

    def bind_tools(
        self,
        tools: Sequence[ToolLike],
        *,
        tool_choice: dict[str, Any] | str | bool | None = None,
        strict: bool | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: dict[str, Any] | type | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """This model with `tools` sent to every call, as langchain-openai's `bind_tools` does:
        with a `response_format` (a JSON schema, or `create_agent`'s provider strategy's
        `{"type": "json_schema", "json_schema": {...}}`) the tools are strict unless
        `strict=False`, and the format is sent as OpenAI's `json_schema` response format."""
        from actloop.tools import convert_to_openai_tool

        if response_format and strict is not False:
            strict = True  # OpenAI requires strict tools beside a json_schema response format
        schemas = [convert_to_openai_tool(t, strict=strict) for t in tools]
        if parallel_tool_calls is not None:
            kwargs["parallel_tool_calls"] = parallel_tool_calls
        if tool_choice is not None and tool_choice is not False:
            names = [s["function"]["name"] for s in schemas if "function" in s]
            kwargs["tool_choice"] = _tool_choice(tool_choice, names)
        if response_format:
            kwargs["response_format"] = _response_format(response_format, strict)
        return self.bind(tools=schemas, **kwargs)

    # -- clients and requests ------------------------------------------------------------------

    def _client_options(self, asynchronous: bool) -> dict[str, Any]:
        options = client_options(
            self.api_key, self.base_url, self.max_retries, self.timeout, asynchronous
        )
        options["organization"] = self.organization
        options["default_headers"] = self.default_headers
        return options

    def _client(self) -> Any:
        """The SDK's sync `openai.OpenAI` client, made on first use (typed Any: we call it with
        dicts, which its overloads cannot check)."""
        with self._lock:
            if self._sync_client is None:
                self._sync_client = import_openai().OpenAI(**self._client_options(False))
            return self._sync_client

    def _aclient(self) -> Any:
        """The SDK's `openai.AsyncOpenAI` client for the running loop (its connections are tied
        to that loop)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._async_client is None or self._async_client[0] is not loop:
                client = import_openai().AsyncOpenAI(**self._client_options(True))
                self._async_client = (loop, client)
            return self._async_client[1]

    def _request(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """The SDK's `create(...)` arguments; JSON fields beyond the core ones go in extra_body."""
        body = {**self._default_params(), **kwargs}
        if stop is not None:
            body["stop"] = stop
        body.pop("stream", None)
        request: dict[str, Any] = {k: body.pop(k) for k in _SDK_OPTIONS if k in body}
        request["model"] = body.pop("model", self.model)
        request["messages"] = [message_to_openai(m) for m in messages]
        request["stream"] = stream  # langchain-openai sends `"stream": false` too
        if stream:
            options = body.pop("stream_options", None)
            if options is None and self.stream_usage:
                options = {"include_usage": True}
            if options is not None:
                request["stream_options"] = options
        if body:
            request["extra_body"] = {**(request.get("extra_body") or {}), **body}
        return request

    def _error(self, exc: Exception) -> ModelAPIError:
        """Our error for an SDK exception; the key is masked out of both (the SDK's is chained)."""
        return sdk_error(exc, self.api_key, self.max_retries)

    def _scrub(self, exc: Exception) -> None:
        """Mask the key out of an error about to leave a call (and out of its chain)."""
        scrub(exc, self.api_key.get_secret_value())

    # -- provider hooks ------------------------------------------------------------------------

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        if self.streaming:
            return super()._generate_message(messages, stop, **kwargs)
        request = self._request(messages, stop, kwargs, stream=False)
        openai = import_openai()
        try:
            create = self._client().chat.completions.with_raw_response.create
            try:
                raw = create(**request)
            except UnicodeEncodeError:  # a lone surrogate: sent as U+FFFD (see module doc)
                raw = create(**without_surrogates(request))
            return wire.message_from_body(raw.text, raw.status_code, str(raw.http_response.url))
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        except Exception as exc:
            self._scrub(exc)
            raise

    async def _agenerate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        if self.streaming:
            return await super()._agenerate_message(messages, stop, **kwargs)
        request = self._request(messages, stop, kwargs, stream=False)
        openai = import_openai()
        try:
            create = self._aclient().chat.completions.with_raw_response.create
            try:
                raw = await create(**request)
            except UnicodeEncodeError:  # a lone surrogate: sent as U+FFFD (see module doc)
                raw = await create(**without_surrogates(request))
            return wire.message_from_body(raw.text, raw.status_code, str(raw.http_response.url))
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        except Exception as exc:
            self._scrub(exc)
            raise

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        request = self._request(messages, stop, kwargs, stream=True)
        openai = import_openai()
        try:
            create = self._client().chat.completions.with_streaming_response.create
            with _opened(create, request) as resp:
                events = wire.EventStream(str(resp.http_response.url))
                kind = resp.headers.get("content-type", "")
                if not events.is_event_stream(kind):
                    events.not_event_stream(kind, resp.read())
                for line in events.guard(resp.iter_lines()):
                    if (chunk := events.feed(line)) is not None:
                        yield chunk
                events.end()
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        except Exception as exc:
            self._scrub(exc)
            raise

    async def _astream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        request = self._request(messages, stop, kwargs, stream=True)
        openai = import_openai()
        client = self._aclient()
        try:
            create = client.chat.completions.with_streaming_response.create
            async with _aopened(create, request) as resp:
                events = wire.EventStream(str(resp.http_response.url))
                kind = resp.headers.get("content-type", "")
                if not events.is_event_stream(kind):
                    events.not_event_stream(kind, await resp.read())
                async for line in events.aguard(resp.iter_lines()):
                    if (chunk := events.feed(line)) is not None:
                        yield chunk
                events.end()
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        except Exception as exc:
            self._scrub(exc)
            raise


@contextlib.contextmanager
def _opened(create: Callable[..., Any], request: dict[str, Any]) -> Generator[Any]:
    """The streaming response `create(**request)` opens; a request UTF-8 cannot encode (a lone
    surrogate) is sent again with U+FFFD in its place."""
    with contextlib.ExitStack() as stack:
        try:
            resp = stack.enter_context(create(**request))
        except UnicodeEncodeError:
            resp = stack.enter_context(create(**without_surrogates(request)))
        yield resp


@contextlib.asynccontextmanager
async def _aopened(create: Callable[..., Any], request: dict[str, Any]) -> AsyncGenerator[Any]:
    """Async twin of `_opened`."""
    async with contextlib.AsyncExitStack() as stack:
        try:
            resp = await stack.enter_async_context(create(**request))
        except UnicodeEncodeError:
            resp = await stack.enter_async_context(create(**without_surrogates(request)))
        yield resp


def _response_format(response_format: dict[str, Any] | type, strict: bool | None) -> Any:
    """OpenAI's `response_format` for a schema, as langchain-openai's `bind_tools` makes it
    (create_agent's `json_schema` wrapper is unwrapped; its `strict` wins)."""
    from actloop.tools import convert_to_openai_function

    if isinstance(response_format, dict):
        inner: Any = response_format.get("json_schema")
        if response_format.get("type") == "json_schema" and isinstance(inner, dict):
            if "schema" in inner:
                strict = cast("dict[str, Any]", inner).get("strict")
                response_format = cast("dict[str, Any]", inner)["schema"]
            else:
                return response_format
    if isinstance(response_format, dict) and {"name", "schema"} <= response_format.keys():
        return {"type": "json_schema", "json_schema": response_format}
    if strict is None:
        given = response_format.get("strict") if isinstance(response_format, dict) else None
        strict = given if isinstance(given, bool) else False
    function = convert_to_openai_function(response_format, strict=strict)
    function["schema"] = function.pop("parameters")
    return {"type": "json_schema", "json_schema": function}


def _tool_choice(choice: dict[str, Any] | str | bool, names: list[str]) -> dict[str, Any] | str:
    """OpenAI's `tool_choice` for LangChain's spellings: a tool name, "any", True, or a dict."""
    if isinstance(choice, dict):
        return choice
    if choice is True:
        return "required"
    if isinstance(choice, str):
        if choice in names:
            return {"type": "function", "function": {"name": choice}}
        if choice == "any":
            return "required"
        if choice in _TOOL_CHOICES:
            return choice
        raise ConfigurationError(
            f"tool_choice {choice!r} names no bound tool; pass one of {names} "
            "or 'auto', 'none', 'required', 'any'"
        )
    raise ConfigurationError(
        f"tool_choice must be a tool name, 'auto', 'none', 'required', 'any', True or a dict; "
        f"got {choice!r}"
    )
