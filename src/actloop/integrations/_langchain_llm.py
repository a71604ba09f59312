"""A LangChain text-completion model (`langchain_core` `BaseLLM`, bound or not) as an actloop
`BaseLLM`: actloop runs the LLM run (callbacks, tracing) and calls the model's own hooks
(`_generate`, `_stream` and async twins), as langchain-core's `generate` does, so a tracer sees
one LLM run named after the model, not a second one from inside it.

Bound kwargs (such as `stop` from `llm.bind(stop=...)`) are moved onto an actloop binding, so
actloop's LLM callbacks report them and a call's own `stop=None` cannot hide them. The model's
own `callbacks`, `tags`, `metadata` and `verbose` become the wrapper's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from actloop.callbacks._llm_run import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from actloop.llms import BaseLLM
from actloop.outputs import Generation, GenerationChunk, LLMResult
from actloop.runnables._base import Runnable

__all__ = ["LangChainLLM", "llm_from_langchain"]


def llm_from_langchain(obj: Any) -> Runnable[Any, str] | None:
    """An actloop text model for a LangChain one (bindings kept as ours), else None."""
    from langchain_core.language_models import BaseLLM as LCBaseLLM
    from langchain_core.runnables import RunnableBinding as LCBinding

    inner: Any = obj
    kwargs: dict[str, Any] = {}
    config: dict[str, Any] = {}
    while isinstance(inner, LCBinding):
        kwargs = {**inner.kwargs, **kwargs}  # pyright: ignore[reportUnknownMemberType]
        config = {**(inner.config or {}), **config}  # pyright: ignore[reportUnknownMemberType]
        inner = inner.bound  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    if not isinstance(inner, LCBaseLLM):
        return None
    model: Runnable[Any, str] = LangChainLLM(inner)
    if config:
        model = model.with_config(config)  # pyright: ignore[reportArgumentType]
    return model.bind(**kwargs) if kwargs else model


def _result(lc_result: Any) -> LLMResult:
    """Our LLMResult for langchain-core's (texts and generation info kept)."""
    generations = [
        [Generation(str(g.text), g.generation_info) for g in batch]
        for batch in lc_result.generations
    ]
    return LLMResult(generations=generations, llm_output=lc_result.llm_output)


def _chunk(lc_chunk: Any) -> GenerationChunk:
    return GenerationChunk(str(lc_chunk.text), lc_chunk.generation_info)


def _own_options(lc: Any) -> dict[str, Any]:
    """The LangChain model's handlers, tags, metadata, verbosity and name, for the wrapper."""
    own: Any = lc.callbacks
    handlers: list[Any] = own if isinstance(own, list) else []  # pyright: ignore[reportUnknownVariableType]
    callbacks = list(handlers) if isinstance(own, list) else None
    return {
        "callbacks": callbacks,
        "tags": lc.tags,
        "metadata": lc.metadata,
        "verbose": bool(lc.verbose),
        "name": lc.get_name(),
    }


class LangChainLLM(BaseLLM):
    """An actloop text model that runs a langchain-core `BaseLLM` (`FakeListLLM`, an `LLM`
    subclass with `_call`, a provider's completions model)."""

    def __init__(self, langchain_llm: Any, **options: Any) -> None:
        super().__init__(**{**_own_options(langchain_llm), **options})
        self.langchain_llm = langchain_llm
        """The wrapped langchain_core text model."""

    def __repr__(self) -> str:
        return f"LangChainLLM({self.langchain_llm!r})"

    @property
    def _llm_type(self) -> str:
        return str(self.langchain_llm._llm_type)

    @property
    def _identifying_params(self) -> Mapping[str, Any]:
        return dict(self.langchain_llm._identifying_params)

    def _serialized(self) -> dict[str, Any]:
        from langchain_core.load import dumpd

        return dict(dumpd(self.langchain_llm))

    def _lc_streams(self) -> bool:
        from langchain_core.language_models import BaseLLM as LCBaseLLM

        model: Any = self.langchain_llm
        own: Any = getattr(model.__class__, "_stream", None)
        return own is not getattr(LCBaseLLM, "_stream", None)

    def _generate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        return _result(self.langchain_llm._generate(prompts, stop=stop, **kwargs))

    async def _agenerate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        return _result(await self.langchain_llm._agenerate(prompts, stop=stop, **kwargs))

    def _stream(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[GenerationChunk]:
        if not self._lc_streams():
            yield _chunk(self._generate([prompt], stop, **kwargs).generations[0][0])
            return
        for chunk in self.langchain_llm._stream(prompt, stop=stop, **kwargs):
            yield _chunk(chunk)

    async def _astream(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[GenerationChunk]:
        if not self._lc_streams():
            result = await self._agenerate([prompt], stop, **kwargs)
            yield _chunk(result.generations[0][0])
            return
        async for chunk in self.langchain_llm._astream(prompt, stop=stop, **kwargs):
            yield _chunk(chunk)

    def get_num_tokens(self, text: str) -> int:
        """The LangChain model's own count; words when its tokenizer is not installed."""
        try:
            return int(self.langchain_llm.get_num_tokens(text))
        except ImportError:  # langchain-core's default tokenizer needs `transformers`
            return super().get_num_tokens(text)
