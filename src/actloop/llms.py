"""Text-completion models (langchain-core's `BaseLLM`/`LLM`): a prompt string in, a string out.

Write one the langchain-core way: annotated settings fields, `_call(prompt, stop, run_manager)`
returning the text, optionally `_stream` yielding `GenerationChunk`s and the async twins. Messages
or a prompt value given to it become one buffer string (`"Human: ..."` lines), as in LangChain.
Callbacks are LLM callbacks (`on_llm_start` with the prompts), fired only when a handler listens.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, cast

from actloop.callbacks import Callbacks
from actloop.callbacks._llm_run import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from actloop.callbacks._manager import RunManager
from actloop.messages import BaseMessage, get_buffer_string
from actloop.outputs import Generation, GenerationChunk, LLMResult
from actloop.runnables._base import Runnable
from actloop.runnables._config import RunnableConfig, ensure_config
from actloop.runnables._fields import init_fields
from actloop.runnables._model_run import (
    acollect_input,
    collect_input,
    configure_model_run,
    serialized,
)

__all__ = ["LLM", "BaseLLM"]


def to_prompt(input: Any) -> str:
    """The prompt text for an input: a string, a prompt value, or messages as a buffer string."""
    if isinstance(input, str):
        return input
    to_string = getattr(input, "to_string", None)
    if to_string is not None:
        return str(to_string())
    if isinstance(input, Sequence):
        items: list[Any] = list(cast("Sequence[Any]", input))
        if all(isinstance(m, BaseMessage) for m in items):
            return get_buffer_string(items)
    kind = type(cast(object, input))
    raise ValueError(
        f"Invalid input type {kind}. Must be a PromptValue, str, or list of BaseMessages."
    )


class BaseLLM(Runnable[Any, str]):
    """A text-completion model; subclasses implement `_generate` (or use `LLM` and `_call`)."""

    cache: bool | None = None
    """Kept for LangChain compatibility; actloop has no model cache."""
    verbose: bool = False
    callbacks: Callbacks = None
    """Handlers for this model's runs only."""
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None

    def __init__(self, **kwargs: Any) -> None:
        init_fields(self, kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @property
    def _llm_type(self) -> str:
        """Reported as `invocation_params["_type"]`."""
        return "llm"

    @property
    def _identifying_params(self) -> Mapping[str, Any]:
        """Model settings reported in `invocation_params`."""
        return {}

    # -- provider hooks ------------------------------------------------------------------------

    def _generate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        """One list of generations per prompt."""
        raise NotImplementedError(f"{type(self).__name__} must implement _generate or _call")

    async def _agenerate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        """Async `_generate`; by default the sync hook, called inline."""
        sync = run_manager.get_sync() if run_manager else None
        return self._generate(prompts, stop, sync, **kwargs)

    def _stream(  # pyright: ignore[reportIncompatibleMethodOverride]  # langchain-core's hook
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[GenerationChunk]:
        """Reply chunks; implement it to stream (the default: no streaming)."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def _astream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[GenerationChunk]:
        """Async reply chunks; by default the sync `_stream`, iterated inline."""
        sync = run_manager.get_sync() if run_manager else None
        for chunk in self._stream(prompt, stop, sync, **kwargs):
            yield chunk

    def _streams(self) -> bool:
        own = type(self)
        return own._stream is not BaseLLM._stream or own._astream is not BaseLLM._astream

    # -- public API ----------------------------------------------------------------------------

    def generate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        callbacks: Callbacks = None,
        **kwargs: Any,
    ) -> LLMResult:
        """Generations for each prompt (one model run per prompt batch)."""
        config: RunnableConfig = {"callbacks": callbacks} if callbacks else {}
        return self._run_generate(prompts, config, stop, kwargs)

    async def agenerate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        callbacks: Callbacks = None,
        **kwargs: Any,
    ) -> LLMResult:
        """Async `generate`."""
        config: RunnableConfig = {"callbacks": callbacks} if callbacks else {}
        return await self._arun_generate(prompts, config, stop, kwargs)

    def invoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> str:
        """The completion of `input`."""
        config = ensure_config(config)
        return self._text(self._run_generate([to_prompt(input)], config, stop, kwargs))

    async def ainvoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> str:
        """The completion of `input` (async)."""
        config = ensure_config(config)
        return self._text(await self._arun_generate([to_prompt(input)], config, stop, kwargs))

    def stream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> Iterator[str]:
        """The completion as text pieces (one piece when the model does not stream)."""
        if type(self)._stream is BaseLLM._stream:
            yield self.invoke(input, config, stop=stop, **kwargs)
            return
        config = ensure_config(config)
        prompt = to_prompt(input)
        run = self._start([prompt], config, stop, kwargs)
        manager = CallbackManagerForLLMRun(run) if run is not None else None
        if run is not None:
            run.flush()
        total: GenerationChunk | None = None
        try:
            for chunk in self._stream(prompt, stop, manager, **kwargs):
                total = chunk if total is None else total + chunk
                yield chunk.text
        except BaseException as exc:
            if run is not None:
                run.fire("on_llm_error", exc, response=_result(total))
            raise
        if run is not None:
            run.fire("on_llm_end", _result(total))

    async def astream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[str]:
        """The completion as text pieces (async)."""
        if not self._streams():
            yield await self.ainvoke(input, config, stop=stop, **kwargs)
            return
        config = ensure_config(config)
        prompt = to_prompt(input)
        run = self._start([prompt], config, stop, kwargs)
        manager = AsyncCallbackManagerForLLMRun(run) if run is not None else None
        if run is not None:
            await run.aflush()
        total: GenerationChunk | None = None
        try:
            async for chunk in self._astream(prompt, stop, manager, **kwargs):
                total = chunk if total is None else total + chunk
                yield chunk.text
        except BaseException as exc:
            if run is not None:
                await run.afire("on_llm_error", exc, response=_result(total))
            raise
        if run is not None:
            await run.afire("on_llm_end", _result(total))

    def transform(
        self, chunks: Iterator[Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[str]:
        """Wait for the whole upstream input (e.g. a prompt value), then stream the completion."""
        yield from self.stream(collect_input(chunks), config, **kwargs)

    async def atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[str]:
        """Wait for the whole upstream input, then stream the completion (async)."""
        async for out in self.astream(await acollect_input(chunks), config, **kwargs):
            yield out

    def get_num_tokens(self, text: str) -> int:
        """Tokens in `text`; by default whitespace-separated words (override with a tokenizer)."""
        return len(text.split())

    # -- machinery -----------------------------------------------------------------------------

    @staticmethod
    def _text(result: LLMResult) -> str:
        return str(result.generations[0][0].text)

    def _run_generate(
        self,
        prompts: list[str],
        config: RunnableConfig,
        stop: list[str] | None,
        kwargs: dict[str, Any],
    ) -> LLMResult:
        run = self._start(prompts, config, stop, kwargs)
        if run is None:
            return self._generate(prompts, stop, None, **kwargs)
        run.flush()
        try:
            result = self._generate(prompts, stop, CallbackManagerForLLMRun(run), **kwargs)
        except BaseException as exc:
            run.fire("on_llm_error", exc, response=LLMResult(generations=[]))
            raise
        run.fire("on_llm_end", result)
        return result

    async def _arun_generate(
        self,
        prompts: list[str],
        config: RunnableConfig,
        stop: list[str] | None,
        kwargs: dict[str, Any],
    ) -> LLMResult:
        run = self._start(prompts, config, stop, kwargs)
        if run is None:
            return await self._agenerate(prompts, stop, None, **kwargs)
        await run.aflush()
        try:
            result = await self._agenerate(
                prompts, stop, AsyncCallbackManagerForLLMRun(run), **kwargs
            )
        except BaseException as exc:
            await run.afire("on_llm_error", exc, response=LLMResult(generations=[]))
            raise
        await run.afire("on_llm_end", result)
        return result

    def _start(
        self,
        prompts: list[str],
        config: RunnableConfig,
        stop: list[str] | None,
        kwargs: dict[str, Any],
    ) -> RunManager | None:
        """Open the LLM run if any handler listens (`on_llm_start` with the prompts)."""
        manager = configure_model_run(self, config, lambda: self._ls_params(stop, kwargs))
        if manager is None:
            return None
        params = {**self._identifying_params, "_type": self._llm_type, "stop": stop, **kwargs}
        return manager.start(
            "on_llm_start",
            self._serialized(),
            prompts,
            run_id=config.get("run_id"),
            name=config.get("run_name"),
            invocation_params=params,
            options={"stop": stop},
            batch_size=len(prompts),
        )

    def _serialized(self) -> dict[str, Any]:
        return serialized(self)

    def _ls_params(self, stop: list[str] | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The `ls_*` tracing metadata langchain-core adds to an LLM run."""
        provider = type(self).__name__.removesuffix("LLM").lower()
        params: dict[str, Any] = {"ls_provider": provider, "ls_model_type": "llm"}
        if stop:
            params["ls_stop"] = stop
        for key, attrs in (("ls_model_name", ("model", "model_name")),):
            for attr in attrs:
                value = kwargs.get(attr, getattr(self, attr, None))
                if isinstance(value, str):
                    params[key] = value
                    break
        return params


def _result(total: GenerationChunk | None) -> LLMResult:
    return LLMResult(generations=[[total]] if total is not None else [])


class LLM(BaseLLM):
    """A text model written as `_call(prompt, stop, run_manager) -> str` (and `_acall`)."""

    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        """The completion of one prompt."""
        raise NotImplementedError(f"{type(self).__name__} must implement _call")

    async def _acall(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        """Async `_call`; by default the sync one, inline."""
        sync = run_manager.get_sync() if run_manager else None
        return self._call(prompt, stop, sync, **kwargs)

    def _generate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        return LLMResult(
            generations=[[Generation(self._call(p, stop, run_manager, **kwargs))] for p in prompts]
        )

    async def _agenerate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        texts = [await self._acall(p, stop, run_manager, **kwargs) for p in prompts]
        return LLMResult(generations=[[Generation(t)] for t in texts])
