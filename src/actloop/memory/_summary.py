"""Summary memories, as `langchain_classic.memory`'s: a running summary the model writes after
each exchange, alone or ahead of the latest messages that fit in a token limit."""

from __future__ import annotations

from typing import Any

from actloop.chat_history import BaseChatMessageHistory
from actloop.memory._base import BaseChatMemory
from actloop.memory._base import warn_deprecated_class as _warn
from actloop.memory._buffer import count_tokens
from actloop.messages import BaseMessage, SystemMessage, get_buffer_string
from actloop.prompts import BasePromptTemplate, PromptTemplate
from actloop.runnables._foreign import adopt

__all__ = ["SUMMARY_PROMPT", "ConversationSummaryBufferMemory", "ConversationSummaryMemory"]

_SUMMARIZER_TEMPLATE = """Progressively summarize the lines of conversation provided, adding onto the previous summary returning a new summary.

EXAMPLE
Current summary:
The human asks what the AI thinks of artificial intelligence. The AI thinks artificial intelligence is a force for good.

New lines of conversation:
Human: Why do you think artificial intelligence is a force for good?
AI: Because artificial intelligence will help humans reach their full potential.

New summary:
The human asks what the AI thinks of artificial intelligence. The AI thinks artificial intelligence is a force for good because it will help humans reach their full potential.
END OF EXAMPLE

Current summary:
{summary}

New lines of conversation:
{new_lines}

New summary:"""  # noqa: E501

SUMMARY_PROMPT = PromptTemplate(
    input_variables=["summary", "new_lines"], template=_SUMMARIZER_TEMPLATE
)
"""The prompt that extends a summary with new lines (LangChain's, word for word)."""


def _check_prompt(prompt: BasePromptTemplate) -> None:
    expected = {"summary", "new_lines"}
    if set(prompt.input_variables) != expected:
        raise ValueError(
            "Got unexpected prompt input variables. The prompt expects "
            f"{prompt.input_variables}, but it should have {expected}."
        )


def _reply_text(reply: Any) -> str:
    return reply.text if isinstance(reply, BaseMessage) else str(reply)


class _Summarizer(BaseChatMemory):
    """What the summary memories share: the model, its prompt and the summary message class."""

    def __init__(
        self,
        *,
        llm: Any,
        prompt: BasePromptTemplate = SUMMARY_PROMPT,
        summary_message_cls: type[BaseMessage] = SystemMessage,
        human_prefix: str = "Human",
        ai_prefix: str = "AI",
        memory_key: str = "history",
        chat_memory: BaseChatMessageHistory | None = None,
        output_key: str | None = None,
        input_key: str | None = None,
        return_messages: bool = False,
    ) -> None:
        _warn(type(self).__name__)
        _check_prompt(prompt)
        super().__init__(
            chat_memory=chat_memory,
            output_key=output_key,
            input_key=input_key,
            return_messages=return_messages,
        )
        self.llm = llm
        self.prompt = prompt
        self.summary_message_cls = summary_message_cls
        self.human_prefix, self.ai_prefix, self.memory_key = human_prefix, ai_prefix, memory_key

    @property
    def memory_variables(self) -> list[str]:
        """`[memory_key]`."""
        return [self.memory_key]

    def _summary_prompt(self, messages: list[BaseMessage], existing_summary: str) -> Any:
        lines = get_buffer_string(
            messages, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix
        )
        return self.prompt.format_prompt(summary=existing_summary, new_lines=lines)

    def predict_new_summary(self, messages: list[BaseMessage], existing_summary: str) -> str:
        """The model's summary of `existing_summary` extended with `messages`."""
        prompt = self._summary_prompt(messages, existing_summary)
        return _reply_text(adopt(self.llm).invoke(prompt))

    async def apredict_new_summary(self, messages: list[BaseMessage], existing_summary: str) -> str:
        """Async `predict_new_summary`."""
        prompt = self._summary_prompt(messages, existing_summary)
        return _reply_text(await adopt(self.llm).ainvoke(prompt))


class ConversationSummaryMemory(_Summarizer):
    """A summary of the conversation, extended by the model after each exchange."""

    def __init__(self, *, buffer: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.buffer = buffer
        """The summary so far."""

    @classmethod
    def from_messages(
        cls,
        llm: Any,
        chat_memory: BaseChatMessageHistory,
        *,
        summarize_step: int = 2,
        **kwargs: Any,
    ) -> ConversationSummaryMemory:
        """A memory whose summary covers `chat_memory`'s messages, `summarize_step` at a time."""
        memory = cls(llm=llm, chat_memory=chat_memory, **kwargs)
        messages = memory._messages()
        for i in range(0, len(messages), summarize_step):
            memory.buffer = memory.predict_new_summary(
                messages[i : i + summarize_step], memory.buffer
            )
        return memory

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """`{memory_key: summary}` (a `[summary_message_cls(summary)]` with `return_messages`)."""
        if self.return_messages:
            return {self.memory_key: [self.summary_message_cls(content=self.buffer)]}
        return {self.memory_key: self.buffer}

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async `load_memory_variables`."""
        return self.load_memory_variables(inputs)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Add the exchange and extend the summary with it."""
        super().save_context(inputs, outputs)
        self.buffer = self.predict_new_summary(self._messages()[-2:], self.buffer)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async `save_context`. LangChain's only adds the exchange (its summary stays behind
        on the async path); this one also extends the summary, with the model's async call."""
        await super().asave_context(inputs, outputs)
        messages = await self._amessages()
        self.buffer = await self.apredict_new_summary(messages[-2:], self.buffer)

    def clear(self) -> None:
        """Forget the history and the summary."""
        super().clear()
        self.buffer = ""

    async def aclear(self) -> None:
        """Async `clear`."""
        await super().aclear()
        self.buffer = ""


class ConversationSummaryBufferMemory(_Summarizer):
    """The latest messages that fit in `max_token_limit`, after a summary of older ones."""

    def __init__(
        self, *, max_token_limit: int = 2000, moving_summary_buffer: str = "", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.max_token_limit = max_token_limit
        self.moving_summary_buffer = moving_summary_buffer
        """The summary of the messages pruned so far."""

    def _shown(self, messages: list[BaseMessage]) -> Any:
        if self.moving_summary_buffer != "":
            messages = [self.summary_message_cls(content=self.moving_summary_buffer), *messages]
        if self.return_messages:
            return messages
        return get_buffer_string(messages, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix)

    @property
    def buffer(self) -> Any:
        """What `load_memory_variables` gives under `memory_key`."""
        return self._shown(self._messages())

    async def abuffer(self) -> Any:
        """Async `buffer`."""
        return self._shown(await self._amessages())

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """`{memory_key: summary + latest messages}`."""
        return {self.memory_key: self._shown(self._messages())}

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async `load_memory_variables`."""
        return {self.memory_key: self._shown(await self._amessages())}

    def _pruned(self) -> list[BaseMessage]:
        """Drop the oldest messages until the rest fit; the dropped ones."""
        buffer = self.chat_memory.messages
        pruned: list[BaseMessage] = []
        while buffer and count_tokens(self.llm, buffer) > self.max_token_limit:
            pruned.append(buffer.pop(0))
        return pruned

    def prune(self) -> None:
        """Fold the messages that no longer fit into the summary."""
        pruned = self._pruned()
        if pruned:
            summary = self.predict_new_summary(pruned, self.moving_summary_buffer)
            self.moving_summary_buffer = summary

    async def aprune(self) -> None:
        """Async `prune`."""
        pruned = self._pruned()
        if pruned:
            summary = await self.apredict_new_summary(pruned, self.moving_summary_buffer)
            self.moving_summary_buffer = summary

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Add the exchange, then prune."""
        super().save_context(inputs, outputs)
        self.prune()

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async `save_context`."""
        await super().asave_context(inputs, outputs)
        await self.aprune()

    def clear(self) -> None:
        """Forget the history and the summary."""
        super().clear()
        self.moving_summary_buffer = ""

    async def aclear(self) -> None:
        """Async `clear`."""
        await super().aclear()
        self.moving_summary_buffer = ""
