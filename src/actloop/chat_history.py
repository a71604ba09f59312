"""Chat message histories, as `langchain_core.chat_history`: `BaseChatMessageHistory` for custom
stores (a database, a file) and `InMemoryChatMessageHistory`, the list that memory classes and
`RunnableWithMessageHistory` keep by default.

A store implements `messages` (a property or attribute), `add_messages` (or `add_message`) and
`clear`; the async twins run the sync ones on a worker unless the store overrides them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from actloop.messages import AIMessage, BaseMessage, HumanMessage, get_buffer_string

__all__ = ["BaseChatMessageHistory", "InMemoryChatMessageHistory"]


class BaseChatMessageHistory(ABC):
    """A conversation's messages in some store; subclass it for your own store."""

    messages: list[BaseMessage]
    """The stored messages, oldest first (subclasses may make it a property)."""

    async def aget_messages(self) -> list[BaseMessage]:
        """Async `messages` (the sync property, on a worker)."""
        import asyncio  # on first use: asyncio is heavy to import

        return await asyncio.to_thread(lambda: list(self.messages))

    def add_user_message(self, message: HumanMessage | str) -> None:
        """Add a human message (a string becomes a `HumanMessage`)."""
        self.add_message(message if isinstance(message, HumanMessage) else HumanMessage(message))

    def add_ai_message(self, message: AIMessage | str) -> None:
        """Add an AI message (a string becomes an `AIMessage`)."""
        self.add_message(message if isinstance(message, AIMessage) else AIMessage(message))

    def add_message(self, message: BaseMessage) -> None:
        """Add one message (through `add_messages` when the subclass has only that)."""
        if type(self).add_messages is not BaseChatMessageHistory.add_messages:
            self.add_messages([message])
            return
        raise NotImplementedError(
            "add_message is not implemented for this class. "
            "Please implement add_message or add_messages."
        )

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Add messages in order (one `add_message` each unless overridden)."""
        for message in messages:
            self.add_message(message)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async `add_messages` (on a worker unless overridden)."""
        import asyncio  # on first use: asyncio is heavy to import

        await asyncio.to_thread(self.add_messages, messages)

    @abstractmethod
    def clear(self) -> None:
        """Remove every message."""

    async def aclear(self) -> None:
        """Async `clear` (on a worker unless overridden)."""
        import asyncio  # on first use: asyncio is heavy to import

        await asyncio.to_thread(self.clear)

    def __str__(self) -> str:
        return get_buffer_string(self.messages)


class InMemoryChatMessageHistory(BaseChatMessageHistory):
    """Messages in a list, in this process (LangChain's `ChatMessageHistory` too)."""

    def __init__(self, messages: Sequence[BaseMessage] | None = None) -> None:
        self.messages = list(messages or [])

    async def aget_messages(self) -> list[BaseMessage]:
        """The messages (no worker needed)."""
        return self.messages

    def add_message(self, message: BaseMessage) -> None:
        """Append one message."""
        self.messages.append(message)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages (no worker needed)."""
        self.add_messages(messages)

    def clear(self) -> None:
        """Forget every message."""
        self.messages = []

    async def aclear(self) -> None:
        """Forget every message (no worker needed)."""
        self.clear()

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, InMemoryChatMessageHistory) and other.messages == self.messages

    __hash__ = None  # pyright: ignore[reportAssignmentType]

    def __repr__(self) -> str:
        return f"InMemoryChatMessageHistory(messages={self.messages!r})"
