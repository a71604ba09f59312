"""`OpenAI`: a text-completion model on the OpenAI completions API (`POST /v1/completions`), which
llama.cpp's server and vLLM speak too. LangChain's `langchain_openai.OpenAI`, on actloop's `LLM`.

The `openai` package is imported when a model is built (a missing one raises
`MissingDependencyError` naming the extra); SDK errors become actloop's `ModelAPIError` family.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from actloop.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from actloop.llms import BaseLLM
from actloop.models._errors import ModelAPIError
from actloop.models._openai_sdk import (
    api_key_from,
    client_options,
    import_openai,
    sdk_error,
    without_surrogates,
)
from actloop.outputs import Generation, GenerationChunk, LLMResult

__all__ = ["OpenAI"]

_SDK_FIELDS = ("temperature", "max_tokens", "top_p", "frequency_penalty", "presence_penalty", "n")
"""Request fields the SDK's `completions.create` takes as arguments (others go in extra_body)."""


class OpenAI(BaseLLM):
    """A completions model: a prompt string in, its continuation out (sync, async, streamed)."""

    def __init__(
        self,
        model: str = "gpt-3.5-turbo-instruct",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.7,
        max_tokens: int | None = 256,
        top_p: float | None = 1,
        frequency_penalty: float | None = 0,
        presence_penalty: float | None = 0,
        n: int | None = 1,
        stop: list[str] | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
        model_kwargs: dict[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        super().__init__(**fields)
        import_openai()
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.api_key = api_key_from(api_key, self.base_url)
        """The API key; `repr` and `str` mask it."""
        # langchain-openai's defaults, sent in every request (None: leave it to the server)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_p = top_p
        self.frequency_penalty = frequency_penalty
        self.presence_penalty = presence_penalty
        self.n = n
        self.stop = stop
        self.timeout = timeout
        self.max_retries = max_retries
        self.model_kwargs = dict(model_kwargs or {})
        """Extra fields sent in every request body (e.g. `{"top_k": 40}` for llama.cpp)."""

    def __repr__(self) -> str:
        return f"OpenAI(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def _llm_type(self) -> str:
        return "openai"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model, **self._params()}

    def _params(self) -> dict[str, Any]:
        params = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "frequency_penalty": self.frequency_penalty,
            "presence_penalty": self.presence_penalty,
            "n": self.n,
        }
        return {k: v for k, v in params.items() if v is not None}

    def _client(self, asynchronous: bool = False) -> Any:
        sdk = import_openai()
        options = client_options(
            self.api_key, self.base_url, self.max_retries, self.timeout, asynchronous
        )
        return (sdk.AsyncOpenAI if asynchronous else sdk.OpenAI)(**options)

    def _request(self, prompt: str, stop: list[str] | None, kwargs: dict[str, Any]) -> Any:
        body = {**self._params(), **self.model_kwargs, **kwargs}
        request: dict[str, Any] = {"model": body.pop("model", self.model), "prompt": prompt}
        stop = stop if stop is not None else self.stop
        if stop is not None:
            request["stop"] = stop
        request.update({k: body.pop(k) for k in _SDK_FIELDS if k in body})
        if body:
            request["extra_body"] = body
        return request

    def _error(self, exc: Exception) -> ModelAPIError:
        """Our error for an SDK exception; the key is masked out of both (as in `ChatOpenAI`)."""
        return sdk_error(exc, self.api_key, self.max_retries)

    @staticmethod
    def _generation(choice: Any) -> Generation:
        return Generation(choice.text, {"finish_reason": choice.finish_reason})

    def _result(self, generations: list[list[Generation]], usage: dict[str, int]) -> LLMResult:
        return LLMResult(
            generations=generations, llm_output={"token_usage": usage, "model_name": self.model}
        )

    def _generate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        client, usage = self._client(), _Usage()
        generations: list[list[Generation]] = []
        for prompt in prompts:
            try:
                reply = _send(client.completions.create, self._request(prompt, stop, kwargs))
            except ModelAPIError:
                raise
            except Exception as exc:
                raise self._error(exc) from exc
            generations.append([self._generation(reply.choices[0])])
            usage.add(reply.usage)
        return self._result(generations, usage.totals)

    async def _agenerate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        client, usage = self._client(asynchronous=True), _Usage()
        generations: list[list[Generation]] = []
        for prompt in prompts:
            try:
                create = client.completions.create
                reply = await _asend(create, self._request(prompt, stop, kwargs))
            except ModelAPIError:
                raise
            except Exception as exc:
                raise self._error(exc) from exc
            generations.append([self._generation(reply.choices[0])])
            usage.add(reply.usage)
        return self._result(generations, usage.totals)

    def _stream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[GenerationChunk]:
        try:
            request = {**self._request(prompt, stop, kwargs), "stream": True}
            events = _send(self._client().completions.create, request)
            for event in events:
                chunk = _chunk(event)
                if chunk is None:
                    continue
                if run_manager is not None:
                    run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                yield chunk
        except ModelAPIError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    async def _astream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[GenerationChunk]:
        try:
            request = {**self._request(prompt, stop, kwargs), "stream": True}
            events = await _asend(self._client(asynchronous=True).completions.create, request)
            async for event in events:
                chunk = _chunk(event)
                if chunk is None:
                    continue
                if run_manager is not None:
                    await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                yield chunk
        except ModelAPIError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc


def _send(create: Callable[..., Any], request: dict[str, Any]) -> Any:
    """`create(**request)`; a lone surrogate UTF-8 cannot encode is sent as U+FFFD (as in
    `ChatOpenAI`: the request is rebuilt only once encoding it failed)."""
    try:
        return create(**request)
    except UnicodeEncodeError:
        return create(**without_surrogates(request))


async def _asend(create: Callable[..., Any], request: dict[str, Any]) -> Any:
    """Async twin of `_send`."""
    try:
        return await create(**request)
    except UnicodeEncodeError:
        return await create(**without_surrogates(request))


def _chunk(event: Any) -> GenerationChunk | None:
    """A streamed event's text as a chunk (None for an event without a choice)."""
    if not event.choices:
        return None
    choice = event.choices[0]
    info = {"finish_reason": choice.finish_reason} if choice.finish_reason else None
    return GenerationChunk(choice.text or "", info)


class _Usage:
    """Token counts added over the prompts of one call."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}

    def add(self, usage: Any) -> None:
        if usage is None:
            return
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            self.totals[key] = self.totals.get(key, 0) + int(getattr(usage, key, 0) or 0)
