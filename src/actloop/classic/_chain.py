"""`LLMChain`: a prompt and a model as one traced chain run (the minimal part legacy agents use).

`predict(**inputs)` formats the prompt, calls the model with the `stop` input (if any) and returns
the reply text. Chat models and text models both work: a chat reply gives its text content.
"""

from __future__ import annotations

from typing import Any, cast

from actloop.callbacks import Callbacks
from actloop.callbacks._handlers import get_colored_text
from actloop.callbacks._manager import CallbackManager
from actloop.exceptions import called_by_user, warn_deprecated
from actloop.memory._runs import aload_into, asave_run, load_into, one_input_key, save_run
from actloop.messages import BaseMessage
from actloop.prompts import BasePromptTemplate
from actloop.runnables._base import Runnable, open_chain_run
from actloop.runnables._config import RunnableConfig, child_config, ensure_config
from actloop.runnables._foreign import adopt

__all__ = ["LLMChain"]

LLMCHAIN_DEPRECATION = (
    "The class `LLMChain` was deprecated in LangChain 0.1.17 and will be removed in 2.0.0. "
    "Use `RunnableSequence, e.g., `prompt | llm`` instead."
)


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
        memory: Any = None,
    ) -> None:
        if called_by_user():
            warn_deprecated("LLMChain", LLMCHAIN_DEPRECATION)
        self.llm: Runnable[Any, Any] = adopt(llm)  # a LangChain model is wrapped
        self.prompt = prompt
        self.output_key = output_key
        self.output_parser = output_parser
        """Parses the reply text (the reply text itself when None)."""
        self.llm_kwargs = dict(llm_kwargs or {})
        self.callbacks = callbacks if callbacks is not None else callback_manager
        self.verbose = verbose
        self.name = name
        self.memory = memory
        """Loaded into each call's inputs, saved after it (`actloop.memory`)."""

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

    def _prep(self, input: Any) -> dict[str, Any]:
        inputs = _as_dict(input, self.input_keys, self.memory)
        return inputs if self.memory is None else load_into(self.memory, inputs)

    async def _aprep(self, input: Any) -> dict[str, Any]:
        inputs = _as_dict(input, self.input_keys, self.memory)
        return inputs if self.memory is None else await aload_into(self.memory, inputs)

    def _final(self, inputs: dict[str, Any], output: dict[str, Any], kwargs: Any) -> Any:
        return output if kwargs.get("return_only_outputs") else {**inputs, **output}

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """`{**inputs, output_key: text}` for the prompt filled with `input` (a traced chain
        run; `return_only_outputs=True`: the output alone)."""
        config = ensure_config(config)
        inputs = self._prep(input)
        prompt, llm_kwargs = self._split(inputs)
        run = open_chain_run(self, None, config, inputs)
        if run is None:
            output = {self.output_key: self._parse(self.llm.invoke(prompt, config, **llm_kwargs))}
            if self.memory is not None:
                save_run(self.memory, inputs, output)
            return self._final(inputs, output, kwargs)
        run.flush()
        run.fire("on_text", _shown(prompt), end="\n", verbose=self.verbose)
        try:
            reply = self.llm.invoke(prompt, child_config(config, run.get_child()), **llm_kwargs)
            output = {self.output_key: self._parse(reply)}
            if self.memory is not None:
                save_run(self.memory, inputs, output)
        except BaseException as exc:
            run.fire("on_chain_error", exc)
            raise
        run.fire("on_chain_end", output)
        return self._final(inputs, output, kwargs)

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Async `invoke`."""
        config = ensure_config(config)
        inputs = await self._aprep(input)
        prompt, llm_kwargs = self._split(inputs)
        run = open_chain_run(self, None, config, inputs)
        if run is None:
            reply = await self.llm.ainvoke(prompt, config, **llm_kwargs)
            output = {self.output_key: self._parse(reply)}
            if self.memory is not None:
                await asave_run(self.memory, inputs, output)
            return self._final(inputs, output, kwargs)
        await run.aflush()
        await run.afire("on_text", _shown(prompt), end="\n", verbose=self.verbose)
        try:
            child = child_config(config, run.get_child())
            reply = await self.llm.ainvoke(prompt, child, **llm_kwargs)
            output = {self.output_key: self._parse(reply)}
            if self.memory is not None:
                await asave_run(self.memory, inputs, output)
        except BaseException as exc:
            await run.afire("on_chain_error", exc)
            raise
        await run.afire("on_chain_end", output)
        return self._final(inputs, output, kwargs)

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


def _as_dict(input: Any, input_keys: list[str], memory: Any) -> dict[str, Any]:
    """A call's inputs as a dict (a bare value goes to the one key memory does not fill)."""
    if isinstance(input, dict):
        return dict(cast("dict[str, Any]", input))
    return {one_input_key(input_keys, memory): input}
