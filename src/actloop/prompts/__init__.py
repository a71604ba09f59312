"""Prompt templates shaped like langchain-core's: `PromptTemplate`, `ChatPromptTemplate`, ..."""

from actloop.prompts._chat import (
    AIMessagePromptTemplate,
    BaseMessagePromptTemplate,
    BasePromptTemplate,
    ChatPromptTemplate,
    ChatPromptValue,
    HumanMessagePromptTemplate,
    MessageLike,
    MessagesPlaceholder,
    PromptTemplate,
    PromptValue,
    StringPromptTemplate,
    StringPromptValue,
    SystemMessagePromptTemplate,
    get_buffer_string,
)

__all__ = [
    "AIMessagePromptTemplate",
    "BaseMessagePromptTemplate",
    "BasePromptTemplate",
    "ChatPromptTemplate",
    "ChatPromptValue",
    "HumanMessagePromptTemplate",
    "MessageLike",
    "MessagesPlaceholder",
    "PromptTemplate",
    "PromptValue",
    "StringPromptTemplate",
    "StringPromptValue",
    "SystemMessagePromptTemplate",
    "get_buffer_string",
]
