"""actloop: a fast, reliable agent runtime with LangChain classic's AgentExecutor API.

Switch from LangChain by changing imports: `from actloop import AgentExecutor, tool, ...`.
"""

from actloop._agent_base import (
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    RunnableAgent,
    RunnableMultiActionAgent,
)
from actloop._compose import (
    AddableDict,
    RunnableAssign,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
    RunnableSequence,
)
from actloop._config import RunnableConfig
from actloop._executor_iter import AgentExecutorIterator
from actloop._runnable import Runnable, RunnableBinding
from actloop.agents import (
    AgentAction,
    AgentActionMessageLog,
    AgentFinish,
    AgentStep,
    ToolAgentAction,
)
from actloop.callbacks import AsyncCallbackHandler, BaseCallbackHandler, StdOutCallbackHandler
from actloop.chat_models import BaseChatModel
from actloop.exceptions import (
    ActloopError,
    CheckpointError,
    ConfigurationError,
    ModelError,
    OutputParserException,
    SerializationError,
    ToolException,
)
from actloop.executor import AgentExecutor
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    message_from_openai,
    message_to_openai,
)
from actloop.prompts import (
    AIMessagePromptTemplate,
    ChatPromptTemplate,
    ChatPromptValue,
    HumanMessagePromptTemplate,
    MessagesPlaceholder,
    PromptTemplate,
    StringPromptValue,
    SystemMessagePromptTemplate,
    get_buffer_string,
)
from actloop.serialization import dumpd, dumps, load, loads
from actloop.tools import (
    BaseTool,
    ExceptionTool,
    InvalidTool,
    StructuredTool,
    Tool,
    convert_to_openai_tool,
    tool,
)

__version__ = "0.1.0"

__all__ = [
    "AIMessage",
    "AIMessageChunk",
    "AIMessagePromptTemplate",
    "ActloopError",
    "AddableDict",
    "AgentAction",
    "AgentActionMessageLog",
    "AgentExecutor",
    "AgentExecutorIterator",
    "AgentFinish",
    "AgentStep",
    "AsyncCallbackHandler",
    "BaseCallbackHandler",
    "BaseChatModel",
    "BaseMessage",
    "BaseMultiActionAgent",
    "BaseSingleActionAgent",
    "BaseTool",
    "ChatPromptTemplate",
    "ChatPromptValue",
    "CheckpointError",
    "ConfigurationError",
    "ExceptionTool",
    "FunctionMessage",
    "HumanMessage",
    "HumanMessagePromptTemplate",
    "InvalidTool",
    "MessagesPlaceholder",
    "ModelError",
    "OutputParserException",
    "PromptTemplate",
    "Runnable",
    "RunnableAgent",
    "RunnableAssign",
    "RunnableBinding",
    "RunnableConfig",
    "RunnableLambda",
    "RunnableMultiActionAgent",
    "RunnableParallel",
    "RunnablePassthrough",
    "RunnableSequence",
    "SerializationError",
    "StdOutCallbackHandler",
    "StringPromptValue",
    "StructuredTool",
    "SystemMessage",
    "SystemMessagePromptTemplate",
    "Tool",
    "ToolAgentAction",
    "ToolCall",
    "ToolException",
    "ToolMessage",
    "__version__",
    "convert_to_openai_tool",
    "dumpd",
    "dumps",
    "get_buffer_string",
    "load",
    "loads",
    "message_from_openai",
    "message_to_openai",
    "tool",
]
