"""A LangChain text-completion model (`langchain_core` `BaseLLM`, bound or not) as an actloop
`LLM`: the prompt text goes to the LangChain model, its reply text comes back.

Bound kwargs (such as `stop` from `llm.bind(stop=...)`) are moved onto an actloop binding, so
actloop's LLM callbacks report them and a call's own `stop=None` cannot hide them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from actloop.callbacks._llm_run import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from actloop.llms import LLM
from actloop.outputs import GenerationChunk
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


def _stop(stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call kwargs for the LangChain model (no `stop` key when there is none)."""
    return {**kwargs, "stop": stop} if stop is not None else kwargs


class LangChainLLM(LLM):
    """An actloop text model that runs a langchain-core `BaseLLM` (`FakeListLLM`, an `LLM`
    subclass with `_call`, a provider's completions model)."""

    def __init__(self, langchain_llm: Any, **options: Any) -> None:
        super().__init__(**options)
        self.langchain_llm = langchain_llm
        """The wrapped langchain_core text model."""

    def __repr__(self) -> str:
        return f"LangChainLLM({self.langchain_llm!r})"

    @property
    def _llm_type(self) -> str:
        return str(getattr(self.langchain_llm, "_llm_type", "langchain-llm"))

    @property
    def _identifying_params(self) -> Mapping[str, Any]:
        params: Any = getattr(self.langchain_llm, "_identifying_params", {})
        return dict(params)

    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        return str(self.langchain_llm.invoke(prompt, **_stop(stop, kwargs)))

    async def _acall(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        return str(await self.langchain_llm.ainvoke(prompt, **_stop(stop, kwargs)))

    def _stream(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[GenerationChunk]:
        for text in self.langchain_llm.stream(prompt, **_stop(stop, kwargs)):
            yield GenerationChunk(str(text))

    async def _astream(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[GenerationChunk]:
        async for text in self.langchain_llm.astream(prompt, **_stop(stop, kwargs)):
            yield GenerationChunk(str(text))

    def get_num_tokens(self, text: str) -> int:
        """The LangChain model's own count; words when its tokenizer is not installed."""
        try:
            return int(self.langchain_llm.get_num_tokens(text))
        except ImportError:  # langchain-core's default tokenizer needs `transformers`
            return super().get_num_tokens(text)
