"""Output parsers: Runnables that turn a model reply (a string or a message) into a value.

Shaped like langchain-core's: `invoke` wraps the input in a generation (a chat generation for a
message, a text generation for a string) and calls `parse_result`, which by default calls
`parse(text)`. Parsing is CPU work, so the async methods parse inline instead of in a thread.
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Generic, TypeVar

from actloop.messages import BaseMessage
from actloop.outputs import ChatGeneration, Generation
from actloop.runnables._base import Runnable
from actloop.runnables._config import RunnableConfig
from actloop.steps import AgentAction, AgentFinish

__all__ = [
    "AgentOutputParser",
    "BaseOutputParser",
    "Generation",
    "MultiActionAgentOutputParser",
    "StrOutputParser",
]

T = TypeVar("T")


AnyGeneration = Generation | ChatGeneration
"""What `parse_result` receives: text generations for strings, chat generations for messages."""


def _generation(input: Any) -> AnyGeneration:
    """A chat generation for a message, a text generation for anything else (a string)."""
    if isinstance(input, BaseMessage):
        return ChatGeneration(input)
    return Generation(input)


class BaseOutputParser(Runnable[str | BaseMessage, T], Generic[T]):
    """Parses a model reply; subclasses implement `parse(text)` (or `parse_result`)."""

    _run_type = "parser"

    @property
    def InputType(self) -> Any:
        return str | BaseMessage

    @property
    def OutputType(self) -> Any:
        """The parser's output type, read from its `BaseOutputParser[...]` base."""
        for klass in type(self).__mro__:
            for base in getattr(klass, "__orig_bases__", ()):
                if typing.get_origin(base) is BaseOutputParser:
                    (arg,) = typing.get_args(base)
                    if not isinstance(arg, TypeVar):
                        return arg
        raise TypeError(
            f"Runnable {type(self).__name__} doesn't have an inferable OutputType. "
            "Override the OutputType property to specify the output type."
        )

    def parse(self, text: str) -> T:
        """Parse one model output string."""
        raise NotImplementedError(f"{type(self).__name__} must implement parse()")

    async def aparse(self, text: str) -> T:
        """Async `parse` (parsing is CPU work: runs inline)."""
        return self.parse(text)

    def parse_result(self, result: Sequence[AnyGeneration], *, partial: bool = False) -> T:
        """Parse the first (most likely) generation's text."""
        return self.parse(result[0].text)

    async def aparse_result(self, result: Sequence[AnyGeneration], *, partial: bool = False) -> T:
        """Async `parse_result` (runs inline)."""
        return self.parse_result(result, partial=partial)

    def parse_with_prompt(self, completion: str, prompt: Any) -> Any:
        """Parse with the prompt at hand (for parsers that retry); by default just `parse`."""
        return self.parse(completion)

    def get_format_instructions(self) -> str:
        """Instructions telling the model how to format its reply."""
        raise NotImplementedError

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> T:
        return self.parse_result([_generation(input)])

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> T:
        return await self.aparse_result([_generation(input)])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class StrOutputParser(BaseOutputParser[str]):
    """The reply's text; streams one text chunk per input chunk."""

    def parse(self, text: str) -> str:
        """The text unchanged."""
        return text

    def _transform(
        self, chunks: Iterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> Iterator[str]:
        for chunk in chunks:
            yield self.parse_result([_generation(chunk)])

    async def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[str]:
        async for chunk in chunks:
            yield self.parse_result([_generation(chunk)])

    def _stream(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Iterator[str]:
        yield self.parse_result([_generation(input)])


class AgentOutputParser(BaseOutputParser[AgentAction | AgentFinish]):
    """Parses a reply into one action or a finish (single-action agents)."""

    @property
    def OutputType(self) -> Any:
        return AgentAction | AgentFinish

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """Parse text into an action or a finish."""
        raise NotImplementedError(f"{type(self).__name__} must implement parse()")


class MultiActionAgentOutputParser(BaseOutputParser[list[AgentAction] | AgentFinish]):
    """Parses a reply into a list of actions or a finish; the executor runs it multi-action."""

    @property
    def OutputType(self) -> Any:
        return list[AgentAction] | AgentFinish

    def parse(self, text: str) -> list[AgentAction] | AgentFinish:
        """Parse text into actions or a finish."""
        raise NotImplementedError(f"{type(self).__name__} must implement parse()")
