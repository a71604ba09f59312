"""`LLMChain`: a prompt and a model as one traced chain run (the minimal part legacy agents use).

`predict(**inputs)` formats the prompt, calls the model with the `stop` input (if any) and returns
the reply text. Chat models and text models both work: a chat reply gives its text content.
"""

from __future__ import annotations

from typing import Any

from actloop.callbacks import Callbacks
from actloop.callbacks._handlers import get_colored_text
from actloop.callbacks._manager import CallbackManager
from actloop.messages import BaseMessage
from actloop.prompts import BasePromptTemplate
from actloop.runnables._base import Runnable, open_chain_run
from actloop.runnables._config import RunnableConfig, child_config, ensure_config
from actloop.runnables._foreign import adopt

__all__ = ["LLMChain"]


def _shown(prompt: Any) -> str:
    """The `on_text` LangChain's LLMChain sends before each call: the prompt, in green."""
    return f"Prompt after formatting:\n{get_colored_text(prompt.to_string(), 'green')}"


def _text(reply: Any) -> str:
    """A model reply as text: a string as is, a message's text content."""
    if isinstance(reply, BaseMessage):
        return reply.text
    return str(reply)


class LLMChain(Runnable[dict[str, Any], dict[str, Any]]):
    """`prompt | llm` returning `{output_key: text}`; `predict` returns the text."""

    def __init__(
        self,
        *,
        llm: Runnable[Any, Any],
        prompt: BasePromptTemplate,
        output_key: str = "text",
        output_parser: Any = None,
        llm_kwargs: dict[str, Any] | None = None,
        callbacks: Callbacks = None,
        callback_manager: Callbacks = None,
        verbose: bool = False,
        name: str | None = None,
    ) -> None:
        self.llm: Runnable[Any, Any] = adopt(llm)  # a LangChain model is wrapped
        self.prompt = prompt
        self.output_key = output_key
        self.output_parser = output_parser
        """Parses the reply text (the reply text itself when None)."""
        self.llm_kwargs = dict(llm_kwargs or {})
        self.callbacks = callbacks if callbacks is not None else callback_manager
        self.verbose = verbose
        self.name = name

    @property
    def input_keys(self) -> list[str]:
        """The prompt's variables."""
        return list(self.prompt.input_variables)

    @property
    def output_keys(self) -> list[str]:
        """`[output_key]`."""
        return [self.output_key]

    def _split(self, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        variables = {k: v for k, v in inputs.items() if k in self.prompt.input_variables}
        missing = set(self.prompt.input_variables) - variables.keys()
        if missing:
            raise ValueError(f"Missing some input keys: {missing}")
        kwargs = dict(self.llm_kwargs)
        if inputs.get("stop") is not None:
            kwargs["stop"] = inputs["stop"]
        return self.prompt.format_prompt(**variables), kwargs

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """`{output_key: text}` for the prompt filled with `input` (a traced chain run)."""
        config = ensure_config(config)
        prompt, llm_kwargs = self._split(input)
        run = open_chain_run(self, None, config, input)
        if run is None:
            return {self.output_key: self._parse(self.llm.invoke(prompt, config, **llm_kwargs))}
        run.flush()
        run.fire("on_text", _shown(prompt), end="\n", verbose=self.verbose)
        try:
            reply = self.llm.invoke(prompt, child_config(config, run.get_child()), **llm_kwargs)
        except BaseException as exc:
            run.fire("on_chain_error", exc)
            raise
        output = {self.output_key: self._parse(reply)}
        run.fire("on_chain_end", output)
        return output

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Async `invoke`."""
        config = ensure_config(config)
        prompt, llm_kwargs = self._split(input)
        run = open_chain_run(self, None, config, input)
        if run is None:
            reply = await self.llm.ainvoke(prompt, config, **llm_kwargs)
            return {self.output_key: self._parse(reply)}
        await run.aflush()
        await run.afire("on_text", _shown(prompt), end="\n", verbose=self.verbose)
        try:
            child = child_config(config, run.get_child())
            reply = await self.llm.ainvoke(prompt, child, **llm_kwargs)
        except BaseException as exc:
            await run.afire("on_chain_error", exc)
            raise
        output = {self.output_key: self._parse(reply)}
        await run.afire("on_chain_end", output)
        return output

    def _parse(self, reply: Any) -> Any:
        text = _text(reply)
        return text if self.output_parser is None else self.output_parser.parse(text)

    def _config(self, callbacks: Callbacks) -> RunnableConfig:
        """The call's config: the caller's callbacks plus this chain's own."""
        merged: Any = callbacks
        if self.callbacks:
            if isinstance(callbacks, CallbackManager):
                merged = callbacks.merged_with(self.callbacks)
            else:
                merged = [*(callbacks or []), *_handlers(self.callbacks)]
        if self.verbose and merged is None:
            merged = []
        return {"callbacks": merged} if merged is not None else {}

    def predict(self, callbacks: Callbacks = None, **kwargs: Any) -> str:
        """The model's reply text for the prompt filled with `kwargs` (`stop` is passed on)."""
        return self.invoke(kwargs, self._config(callbacks))[self.output_key]

    async def apredict(self, callbacks: Callbacks = None, **kwargs: Any) -> str:
        """Async `predict`."""
        return (await self.ainvoke(kwargs, self._config(callbacks)))[self.output_key]

    def run(self, callbacks: Callbacks = None, **kwargs: Any) -> str:
        """`predict` under its old Chain name."""
        return self.predict(callbacks, **kwargs)

    async def arun(self, callbacks: Callbacks = None, **kwargs: Any) -> str:
        """Async `run`."""
        return await self.apredict(callbacks, **kwargs)


def _handlers(callbacks: Callbacks) -> list[Any]:
    if isinstance(callbacks, CallbackManager):
        return list(callbacks.handlers)
    return list(callbacks or [])
