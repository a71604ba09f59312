"""Chat messages shaped like langchain-core's, typed tool calls, and OpenAI dict conversion."""

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

AnyMessage = BaseMessage
"""Any message (langchain-core's union of the message classes)."""

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
    "ToolCall",
    "ToolCallChunk",
    "ToolMessage",
    "UsageMetadata",
    "get_buffer_string",
    "message_chunk_to_message",
    "message_from_openai",
    "message_to_openai",
]
