"""Buffer memories, as `langchain_classic.memory`'s: the whole conversation, its last `k`
exchanges, or as much of it as fits in `max_token_limit` tokens (counted by the model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actloop.chat_history import BaseChatMessageHistory
from actloop.memory._base import BaseChatMemory, BaseMemory, get_prompt_input_key
from actloop.memory._base import warn_deprecated_class as _warn
from actloop.messages import BaseMessage, get_buffer_string

__all__ = [
    "ConversationBufferMemory",
    "ConversationBufferWindowMemory",
    "ConversationStringBufferMemory",
    "ConversationTokenBufferMemory",
    "count_tokens",
]


class _Buffer(BaseChatMemory):
    """What the buffer memories share: prefixes, `memory_key` and the string or message form."""

    def __init__(
        self,
        *,
        human_prefix: str = "Human",
        ai_prefix: str = "AI",
        memory_key: str = "history",
        chat_memory: BaseChatMessageHistory | None = None,
        output_key: str | None = None,
        input_key: str | None = None,
        return_messages: bool = False,
    ) -> None:
        _warn(type(self).__name__)
        super().__init__(
            chat_memory=chat_memory,
            output_key=output_key,
            input_key=input_key,
            return_messages=return_messages,
        )
        self.human_prefix = human_prefix
        self.ai_prefix = ai_prefix
        self.memory_key = memory_key

    @property
    def memory_variables(self) -> list[str]:
        """`[memory_key]`."""
        return [self.memory_key]

    def _kept(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """The messages this memory shows (all of them here)."""
        return messages

    def _shown(self, messages: list[BaseMessage]) -> Any:
        kept = self._kept(messages)
        if self.return_messages:
            return kept
        return get_buffer_string(kept, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix)

    @property
    def buffer(self) -> Any:
        """The conversation: messages with `return_messages`, else one string."""
        return self._shown(self._messages())

    @property
    def buffer_as_str(self) -> str:
        """The conversation as `Human: ...`/`AI: ...` lines."""
        kept = self._kept(self._messages())
        return get_buffer_string(kept, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix)

    @property
    def buffer_as_messages(self) -> list[BaseMessage]:
        """The conversation's messages."""
        return self._kept(self._messages())

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """`{memory_key: buffer}`."""
        return {self.memory_key: self.buffer}

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async `load_memory_variables` (awaits the store's `aget_messages`)."""
        return {self.memory_key: self._shown(await self._amessages())}


class ConversationBufferMemory(_Buffer):
    """The whole conversation."""

    async def abuffer(self) -> Any:
        """Async `buffer`."""
        return self._shown(await self._amessages())


class ConversationBufferWindowMemory(_Buffer):
    """The last `k` exchanges (2k messages) of the conversation."""

    def __init__(self, *, k: int = 5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.k = k
        """Exchanges kept."""

    def _kept(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        return messages[-self.k * 2 :] if self.k > 0 else []


def count_tokens(llm: Any, messages: Sequence[BaseMessage]) -> int:
    """Tokens of `messages` by `llm`: its `get_num_tokens_from_messages`, else the sum of its
    `get_num_tokens` of each message as a `Human: ...` line (langchain-core's default)."""
    counter = getattr(llm, "get_num_tokens_from_messages", None)
    if counter is not None:
        return counter(list(messages))
    per_text = getattr(llm, "get_num_tokens", None)
    if per_text is None:
        raise TypeError(
            f"{type(llm).__name__} cannot count tokens; give the memory a model with "
            "get_num_tokens_from_messages(messages) or get_num_tokens(text)"
        )
    return sum(per_text(get_buffer_string([m])) for m in messages)


class ConversationTokenBufferMemory(_Buffer):
    """The latest messages that fit in `max_token_limit` tokens, as `llm` counts them."""

    def __init__(self, *, llm: Any, max_token_limit: int = 2000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.llm = llm
        self.max_token_limit = max_token_limit

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Add the exchange, then drop the oldest messages until the rest fit."""
        super().save_context(inputs, outputs)
        self._prune()

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async `save_context`. LangChain's only adds the exchange (its buffer outgrows the
        limit on the async path); this one prunes too."""
        await super().asave_context(inputs, outputs)
        self._prune()

    def _prune(self) -> None:
        buffer = self.chat_memory.messages
        while buffer and count_tokens(self.llm, buffer) > self.max_token_limit:
            buffer.pop(0)


class ConversationStringBufferMemory(BaseMemory):
    """The conversation kept as one string (no message store)."""

    def __init__(
        self,
        *,
        human_prefix: str = "Human",
        ai_prefix: str = "AI",
        buffer: str = "",
        output_key: str | None = None,
        input_key: str | None = None,
        memory_key: str = "history",
    ) -> None:
        _warn(type(self).__name__)
        self.human_prefix, self.ai_prefix, self.buffer = human_prefix, ai_prefix, buffer
        self.output_key, self.input_key, self.memory_key = output_key, input_key, memory_key

    @property
    def memory_variables(self) -> list[str]:
        """`[memory_key]`."""
        return [self.memory_key]

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """`{memory_key: buffer}`."""
        return {self.memory_key: self.buffer}

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async `load_memory_variables`."""
        return self.load_memory_variables(inputs)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Append `\\nHuman: <input>\\nAI: <output>` to the buffer."""
        key = self.input_key or get_prompt_input_key(inputs, self.memory_variables)
        if self.output_key is None:
            if len(outputs) != 1:
                raise ValueError(f"One output key expected, got {outputs.keys()}")
            output = next(iter(outputs.values()))
        else:
            output = outputs[self.output_key]
        human = f"{self.human_prefix}: " + inputs[key]
        ai = f"{self.ai_prefix}: " + output
        self.buffer += f"\n{human}\n{ai}"

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async `save_context`."""
        self.save_context(inputs, outputs)

    def clear(self) -> None:
        """Empty the buffer."""
        self.buffer = ""

    async def aclear(self) -> None:
        """Async `clear`."""
        self.clear()
