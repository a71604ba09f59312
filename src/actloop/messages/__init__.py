"""Chat messages shaped like langchain-core's, typed tool calls, and OpenAI dict conversion."""

from typing import TYPE_CHECKING

from actloop.messages._buffer import get_buffer_string
from actloop.messages._types import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    Content,
    FunctionMessage,
    HumanMessage,
    InvalidToolCall,
    RemoveMessage,
    SystemMessage,
    ToolCall,
    ToolCallChunk,
    ToolMessage,
    UsageMetadata,
    message_chunk_to_message,
    message_from_openai,
    message_to_openai,
)

if TYPE_CHECKING:
    from actloop.messages._blocks import TextContentBlock

AnyMessage = BaseMessage
"""Any message (langchain-core's union of the message classes)."""


def __getattr__(name: str) -> object:
    """`TextContentBlock`, built when first asked for (a TypedDict costs import time)."""
    if name == "TextContentBlock":
        from actloop.messages._blocks import TextContentBlock

        return TextContentBlock
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AIMessage",
    "AIMessageChunk",
    "AnyMessage",
    "BaseMessage",
    "Content",
    "FunctionMessage",
    "HumanMessage",
    "InvalidToolCall",
    "RemoveMessage",
    "SystemMessage",
    "TextContentBlock",
    "ToolCall",
    "ToolCallChunk",
    "ToolMessage",
    "UsageMetadata",
    "get_buffer_string",
    "message_chunk_to_message",
    "message_from_openai",
    "message_to_openai",
]
