"""The chat completions wire format: JSON replies and event streams to messages, SDK errors to ours.

No I/O here: `ChatOpenAI` feeds in what the SDK received. An event stream is complete only once a
choice has a `finish_reason` or `[DONE]` arrives; anything less raises `StreamInterruptedError`.
Odd shapes are repaired or refused as `_openai_shapes` says; nothing a server sends raises anything
but a `ModelAPIError`. Masking the API key out of errors is `ChatOpenAI`'s job (see `_secret`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, NoReturn, cast

from actloop.messages import AIMessage, AIMessageChunk, ToolCallChunk, UsageMetadata
from actloop.models import _openai_shapes as shapes
from actloop.models._errors import (
    OVERFLOW_SIGNS,
    AuthenticationError,
    BadRequestError,
    ContextOverflowError,
    InvalidResponseError,
    ModelAPIError,
    ModelConnectionError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)

_SNIPPET = 300


def _snippet(text: str) -> str:
    return repr(text if len(text) <= _SNIPPET else text[:_SNIPPET] + "...")


def _parsed(text: str) -> Any:
    """The JSON in `text`, or the text itself when it does not decode."""
    value, problem = shapes.decode(text)
    return text if problem is not None else value


def _detail(body: Any) -> str:
    """The human part of an error body: OpenAI's `error.message` when there is one."""
    error: Any = body
    if isinstance(error, dict):
        error = cast("dict[str, Any]", error).get("error", error)
    message: Any = cast("dict[str, Any]", error).get("message") if isinstance(error, dict) else None
    if isinstance(message, str):
        return message
    if isinstance(error, str):
        return _snippet(error)
    try:
        return _snippet(json.dumps(error))
    except (ValueError, RecursionError):
        return "(an error too deeply nested to show)"


# -- errors --------------------------------------------------------------------------------------


def _status_class(status: int) -> type[ModelAPIError]:
    if status in (401, 403):
        return AuthenticationError
    if status == 429:
        return RateLimitError
    return ServerError if status >= 500 else BadRequestError


def api_error(exc: Exception, max_retries: int) -> ModelAPIError:
    """Our typed error for an exception of the `openai` SDK (the caller masks the key)."""
    import openai

    request = getattr(exc, "request", None)
    url = str(request.url) if request is not None else "the OpenAI API"
    retried = f"(retried up to max_retries={max_retries} times)"
    status: int | None = None
    body: Any = None
    cls: type[ModelAPIError] = ModelAPIError
    if isinstance(exc, openai.APIStatusError):
        status, body = exc.status_code, _parsed(exc.response.text)
        cls = _status_class(status)
        if cls is BadRequestError and any(s in exc.response.text for s in OVERFLOW_SIGNS):
            cls = ContextOverflowError
        message = f"{url} answered {status}: {_detail(body)}"
        if cls in (RateLimitError, ServerError):
            message = f"{message} {retried}"
    elif isinstance(exc, openai.APITimeoutError):
        cause = str(exc.__cause__ or "")
        late = f": {cause}" if cause.startswith("no complete reply") else ""
        cls, message = ModelConnectionError, f"the request to {url} timed out{late} {retried}"
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        cls, message = ModelConnectionError, f"could not reach {url}: {cause!r} {retried}"
    else:
        message = f"the OpenAI client failed: {exc}"
    return cls(message, status_code=status, body=body)


# -- whole replies -------------------------------------------------------------------------------


def usage_metadata(usage: dict[str, Any]) -> UsageMetadata:
    """Token usage in langchain-openai's shape (`input_tokens`, `output_tokens`, details); the
    counts are integers (`shapes.usage_of` makes them so)."""
    inputs = usage.get("prompt_tokens") or 0
    outputs = usage.get("completion_tokens") or 0
    prompt: dict[str, Any] = usage.get("prompt_tokens_details") or {}
    completion: dict[str, Any] = usage.get("completion_tokens_details") or {}
    input_details: dict[str, Any] = {
        "audio": prompt.get("audio_tokens"),
        "cache_read": prompt.get("cached_tokens"),
    }
    output_details: dict[str, Any] = {
        "audio": completion.get("audio_tokens"),
        "reasoning": completion.get("reasoning_tokens"),
    }
    return {
        "input_tokens": inputs,
        "output_tokens": outputs,
        "total_tokens": usage.get("total_tokens") or inputs + outputs,
        "input_token_details": {k: v for k, v in input_details.items() if v is not None},
        "output_token_details": {k: v for k, v in output_details.items() if v is not None},
    }


def message_from_body(text: str, status: int, url: str) -> AIMessage:
    """The reply in a chat completions response body; a body that is not one raises."""
    data, problem = shapes.decode(text)
    if problem is not None:
        raise InvalidResponseError(
            f"{url} answered {status} with a body that is {problem}: {_snippet(text)}",
            status_code=status,
            body=text,
        )
    if not isinstance(data, dict) or not data.get("choices"):  # pyright: ignore[reportUnknownMemberType]
        if isinstance(data, dict) and "error" in data:
            raise ModelAPIError(
                f"{url} answered {status} with an error: {_detail(data)}",
                status_code=status,
                body=data,
            )
        raise InvalidResponseError(
            f"{url} answered {status} with JSON that is not a chat completion (no choices): "
            f"{_snippet(text)}",
            status_code=status,
            body=data,
        )
    try:
        return message_from_completion(cast("dict[str, Any]", data))
    except shapes.OddShape as exc:
        raise InvalidResponseError(
            f"{url} answered {status} with a chat completion of an unexpected shape ({exc}): "
            f"{_snippet(text)}",
            status_code=status,
            body=data,
        ) from None


def message_from_completion(data: dict[str, Any]) -> AIMessage:
    """An AIMessage for a chat completion dict: tool calls parsed, usage and metadata filled in;
    a shape that cannot be read raises `shapes.OddShape`."""
    choice = shapes.first_choice(data) or {}
    raw = shapes.object_of(choice.get("message"), "choices[0].message", required=True)
    extra: dict[str, Any] = {}
    if function_call := shapes.function_call_of(raw.get("function_call")):
        extra["function_call"] = function_call
    raw_calls = shapes.raw_tool_calls(raw.get("tool_calls"))
    if raw_calls:
        extra["tool_calls"] = raw_calls
    if audio := raw.get("audio"):
        extra["audio"] = audio
    if raw.get("refusal"):
        extra["refusal"] = raw["refusal"]
    calls, invalid = shapes.parse_calls(raw_calls)
    usage = shapes.usage_of(data.get("usage"))
    metadata: dict[str, Any] = {
        "token_usage": usage,
        "model_provider": "openai",
        "model_name": data.get("model"),
        "system_fingerprint": data.get("system_fingerprint"),
        "id": data.get("id"),
    }
    if "service_tier" in data:
        metadata["service_tier"] = data["service_tier"]
    metadata["finish_reason"] = choice.get("finish_reason")
    metadata["logprobs"] = choice.get("logprobs")
    return AIMessage(
        shapes.content_of(raw.get("content")),
        additional_kwargs=extra,
        response_metadata=metadata,
        id=data.get("id"),
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata=usage_metadata(usage) if usage else None,
    )


# -- streams -------------------------------------------------------------------------------------


def chunk_from_data(data: dict[str, Any]) -> tuple[AIMessageChunk | None, bool]:
    """The chunk for one streamed event (None if it carries nothing), and whether it finishes;
    a shape that cannot be read raises `shapes.OddShape`."""
    usage_data = shapes.usage_of(data.get("usage"))
    usage = usage_metadata(usage_data) if usage_data else None
    choice = shapes.first_choice(data)
    if choice is None:
        return (
            AIMessageChunk("", id=data.get("id"), usage_metadata=usage) if usage else None
        ), False
    delta = shapes.object_of(choice.get("delta"), "choices[0].delta")
    extra: dict[str, Any] = {}
    calls: list[ToolCallChunk] = []
    if raw_calls := shapes.raw_tool_calls(delta.get("tool_calls"), streaming=True):
        extra["tool_calls"] = raw_calls
        for raw in raw_calls:
            function: dict[str, Any] = raw.get("function") or {}
            calls.append(
                {
                    "name": function.get("name"),
                    "args": function.get("arguments"),
                    "id": raw.get("id"),
                    "index": raw.get("index"),
                }
            )
    if function_call := shapes.function_call_of(delta.get("function_call")):
        extra["function_call"] = function_call
    metadata: dict[str, Any] = {}
    if finish := choice.get("finish_reason"):
        metadata = {
            "finish_reason": finish,
            "model_name": data.get("model"),
            "system_fingerprint": data.get("system_fingerprint"),
            "model_provider": "openai",
        }
    chunk = AIMessageChunk(
        shapes.content_of(delta.get("content")),
        additional_kwargs=extra,
        response_metadata=metadata,
        id=data.get("id"),
        tool_call_chunks=calls,
        usage_metadata=usage,
    )
    return chunk, bool(finish)


class EventStream:
    """Turns the lines of a chat completions event stream into chunks, and checks it ended well."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._event: str | None = None
        self._data: list[str] = []
        self._complete = False
        self._received: list[AIMessageChunk] = []

    @staticmethod
    def is_event_stream(content_type: str) -> bool:
        """Whether a response's content type is `text/event-stream`."""
        return "text/event-stream" in content_type.lower()

    def not_event_stream(self, content_type: str, body: bytes) -> NoReturn:
        """Raise for a streaming request answered with something other than an event stream."""
        text = body.decode("utf-8", "replace")
        raise InvalidResponseError(
            f"{self.url} answered a streaming request with {content_type or 'no content type'} "
            f"instead of an event stream: {_snippet(text)}",
            status_code=200,
            body=_parsed(text),
        )

    def guard(self, lines: Iterator[str]) -> Iterator[str]:
        """The lines; a transport failure before the reply is complete is a StreamInterruptedError
        (after it, only the usage chunk can be lost, so the stream just ends)."""
        try:
            yield from lines
        except Exception as exc:
            if not self._complete:
                raise self.interrupted(f"the connection failed: {exc!r}") from exc

    async def aguard(self, lines: AsyncIterator[str]) -> AsyncIterator[str]:
        """Async twin of `guard`."""
        try:
            async for line in lines:
                yield line
        except Exception as exc:
            if not self._complete:
                raise self.interrupted(f"the connection failed: {exc!r}") from exc

    def feed(self, line: str) -> AIMessageChunk | None:
        """Take one line; returns a chunk when the line completes an event that carries one."""
        if line:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                self._data.append(value)
            elif field == "event":
                self._event = value
            return None
        if not self._data:
            return None
        payload, event = "\n".join(self._data), self._event
        self._data, self._event = [], None
        return self._on_event(event, payload)

    def _on_event(self, event: str | None, payload: str) -> AIMessageChunk | None:
        if payload.strip() == "[DONE]":
            self._complete = True
            return None
        data, problem = shapes.decode(payload)
        if problem is not None:
            raise self.interrupted(f"an event is {problem}: {_snippet(payload)}")
        if not isinstance(data, dict):
            raise self.interrupted(f"an event is not a JSON object: {_snippet(payload)}")
        if event == "error" or "error" in data:
            raise self.interrupted(f"the server sent an error: {_detail(data)}", body=data)
        try:
            chunk, finished = chunk_from_data(cast("dict[str, Any]", data))
        except shapes.OddShape as exc:
            raise self.interrupted(
                f"an event has an unexpected shape ({exc}): {_snippet(payload)}", body=data
            ) from None
        self._complete = self._complete or finished
        if chunk is not None:
            self._received.append(chunk)
        return chunk

    def end(self) -> None:
        """Call when the lines run out: raises unless the reply was complete."""
        if not self._complete:
            reason = "it ended without a finish_reason or [DONE]"
            raise self.interrupted(reason if self._received else f"{reason}, sending no chunk")

    def interrupted(self, reason: str, body: Any = None) -> StreamInterruptedError:
        """The error for a stream that broke off, carrying the chunks received so far."""
        got = self._received
        partial = got[0] + got[1:] if len(got) > 1 else (got[0] if got else None)
        size = len(partial.text) if partial is not None else 0
        return StreamInterruptedError(
            f"the stream from {self.url} broke off after {len(got)} chunk(s) and {size} "
            f"character(s) of text: {reason}; what arrived is in .partial",
            partial=partial,
            body=body,
        )
