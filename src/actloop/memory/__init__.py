"""Chain memory, as `langchain_classic.memory`: pass `memory=` to an `AgentExecutor` or an
`LLMChain` (or `initialize_agent`) and each run loads the memory's variables into its inputs
before it starts and saves its input and output after it ends.

`ConversationBufferMemory` keeps the whole conversation, `ConversationBufferWindowMemory` its last
`k` exchanges, `ConversationTokenBufferMemory` what fits in a token limit, and the summary
memories a running summary the model writes. `ReadOnlySharedMemory` and `CombinedMemory` compose
memories. The messages live in a chat message history (`actloop.chat_history`; subclass
`BaseChatMessageHistory` for your own store). LangChain's memory objects and histories work as
they are.
"""

from actloop.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from actloop.memory._base import BaseChatMemory, BaseMemory, get_prompt_input_key
from actloop.memory._buffer import (
    ConversationBufferMemory,
    ConversationBufferWindowMemory,
    ConversationStringBufferMemory,
    ConversationTokenBufferMemory,
)
from actloop.memory._shared import CombinedMemory, ReadOnlySharedMemory, SimpleMemory
from actloop.memory._summary import (
    SUMMARY_PROMPT,
    ConversationSummaryBufferMemory,
    ConversationSummaryMemory,
)

ChatMessageHistory = InMemoryChatMessageHistory
"""LangChain's older name of `InMemoryChatMessageHistory`."""

__all__ = [
    "SUMMARY_PROMPT",
    "BaseChatMemory",
    "BaseChatMessageHistory",
    "BaseMemory",
    "ChatMessageHistory",
    "CombinedMemory",
    "ConversationBufferMemory",
    "ConversationBufferWindowMemory",
    "ConversationStringBufferMemory",
    "ConversationSummaryBufferMemory",
    "ConversationSummaryMemory",
    "ConversationTokenBufferMemory",
    "InMemoryChatMessageHistory",
    "ReadOnlySharedMemory",
    "SimpleMemory",
    "get_prompt_input_key",
]

for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith(f"{__name__}._"):
        _obj.__module__ = __name__  # users import these from actloop.memory
