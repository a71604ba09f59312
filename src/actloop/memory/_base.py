"""`BaseMemory` and `BaseChatMemory`, as `langchain_classic`'s: what a chain loads before a run
and saves after it, and which input and output of a run a chat memory keeps."""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any

from actloop.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from actloop.exceptions import warn_deprecated
from actloop.messages import AIMessage, HumanMessage
from actloop.runnables._foreign import adopt_messages, is_langchain

__all__ = ["BaseChatMemory", "BaseMemory", "get_prompt_input_key", "warn_deprecated_class"]

MEMORY_ADDENDUM = (
    "Use `langchain.agents.create_agent` instead. For agents that need to remember prior "
    "interactions, use `create_agent` with checkpointing or the `Store` API. See "
    "https://docs.langchain.com/oss/python/langchain/short-term-memory and "
    "https://docs.langchain.com/oss/python/langchain/long-term-memory"
)


def warn_deprecated_class(name: str, since: str = "0.3.1", addendum: str = MEMORY_ADDENDUM) -> None:
    """LangChain's deprecation warning for the class `name`, once per class and process."""
    text = f"The class `{name}` was deprecated in LangChain {since} and will be removed in 2.0.0."
    warn_deprecated(name, f"{text} {addendum}", stacklevel=5)


def get_prompt_input_key(inputs: dict[str, Any], memory_variables: list[str]) -> str:
    """The one input that is neither a memory variable nor `stop` (ValueError otherwise)."""
    keys = list(set(inputs).difference([*memory_variables, "stop"]))
    if len(keys) != 1:
        raise ValueError(f"One input key expected got {keys}")
    return keys[0]


class BaseMemory(ABC):
    """What a chain remembers between runs: variables loaded into a run's inputs before it,
    and the run's context saved after it."""

    @property
    @abstractmethod
    def memory_variables(self) -> list[str]:
        """The input keys this memory adds."""

    @abstractmethod
    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The variables to add to a run's `inputs`."""

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async `load_memory_variables` (on a worker unless overridden)."""
        import asyncio  # on first use: asyncio is heavy to import

        return await asyncio.to_thread(self.load_memory_variables, inputs)

    @abstractmethod
    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Remember a finished run's `inputs` and `outputs`."""

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async `save_context` (on a worker unless overridden)."""
        import asyncio  # on first use: asyncio is heavy to import

        await asyncio.to_thread(self.save_context, inputs, outputs)

    @abstractmethod
    def clear(self) -> None:
        """Forget everything."""

    async def aclear(self) -> None:
        """Async `clear` (on a worker unless overridden)."""
        import asyncio  # on first use: asyncio is heavy to import

        await asyncio.to_thread(self.clear)


class BaseChatMemory(BaseMemory):
    """A memory over a chat message history: each run adds its input as a human message and
    its output as an AI message.

    Which input: `input_key`, else the one input that is not a memory variable or `stop`. Which
    output: `output_key`, else the only one, else `"output"` with a warning (an AgentExecutor
    returning `intermediate_steps`, or `stream`/`iter` adding `messages`), as LangChain does.
    """

    def __init__(
        self,
        *,
        chat_memory: BaseChatMessageHistory | None = None,
        output_key: str | None = None,
        input_key: str | None = None,
        return_messages: bool = False,
    ) -> None:
        self.chat_memory: Any = chat_memory if chat_memory is not None else _in_memory()
        """The message store (LangChain's chat histories work too)."""
        self.output_key = output_key
        self.input_key = input_key
        self.return_messages = return_messages
        """Load messages (for a MessagesPlaceholder) rather than one string."""

    def _get_input_output(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> tuple[Any, Any]:
        if self.input_key is None:
            input_key = get_prompt_input_key(inputs, self.memory_variables)
        else:
            input_key = self.input_key
        if self.output_key is not None:
            return inputs[input_key], outputs[self.output_key]
        if len(outputs) == 1:
            return inputs[input_key], next(iter(outputs.values()))
        if "output" in outputs:
            warnings.warn(
                f"'{type(self).__name__}' got multiple output keys: {outputs.keys()}. The "
                "default 'output' key is being used. If this is not desired, please manually "
                "set 'output_key'.",
                stacklevel=3,
            )
            return inputs[input_key], outputs["output"]
        raise ValueError(
            f"Got multiple output keys: {outputs.keys()}, cannot determine which to store in "
            "memory. Please set the 'output_key' explicitly."
        )

    def _pair(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[Any]:
        human, ai = self._get_input_output(inputs, outputs)
        return _foreign_pair(self.chat_memory, human, ai) or [HumanMessage(human), AIMessage(ai)]

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Add the run's input and output to the chat history."""
        self.chat_memory.add_messages(self._pair(inputs, outputs))

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async `save_context`."""
        await self.chat_memory.aadd_messages(self._pair(inputs, outputs))

    def clear(self) -> None:
        """Forget the history."""
        self.chat_memory.clear()

    async def aclear(self) -> None:
        """Async `clear`."""
        await self.chat_memory.aclear()

    def _messages(self) -> list[Any]:
        """The history's messages as actloop messages (a LangChain history's are converted)."""
        return adopt_messages(self.chat_memory.messages)

    async def _amessages(self) -> list[Any]:
        return adopt_messages(await self.chat_memory.aget_messages())


def _in_memory() -> InMemoryChatMessageHistory:
    return InMemoryChatMessageHistory()


def _foreign_pair(store: Any, human: Any, ai: Any) -> list[Any] | None:
    """The pair as LangChain messages when `store` is a LangChain chat history."""
    if not is_langchain(store):
        return None
    from langchain_core.messages import AIMessage as LcAI
    from langchain_core.messages import HumanMessage as LcHuman

    return [LcHuman(content=human), LcAI(content=ai)]
