"""actloop: a fast, reliable agent runtime with LangChain classic's AgentExecutor API.

Switch from LangChain by changing imports: `from actloop import AgentExecutor, tool, ...`.
"""

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
from actloop.executor import (
    AgentExecutor,
    AgentExecutorIterator,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    RunnableAgent,
    RunnableMultiActionAgent,
)
from actloop.format_scratchpad import (
    format_log_to_messages,
    format_log_to_str,
    format_to_openai_tool_messages,
    format_to_tool_messages,
)
from actloop.json_agent import (
    JSONAgentOutputParser,
    create_structured_json_agent,
    json_agent_schema,
)
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
from actloop.output_parsers import (
    AgentOutputParser,
    BaseOutputParser,
    MultiActionAgentOutputParser,
    StrOutputParser,
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
from actloop.react import REACT_PROMPT, ReActSingleInputOutputParser, create_react_agent
from actloop.runnables import (
    AddableDict,
    Runnable,
    RunnableAssign,
    RunnableBinding,
    RunnableConfig,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
    RunnableSequence,
)
from actloop.serialization import dumpd, dumps, load, loads
from actloop.tool_calling import (
    OpenAIToolsAgentOutputParser,
    ToolsAgentOutputParser,
    create_tool_calling_agent,
)
from actloop.tools import (
    BaseTool,
    ExceptionTool,
    InvalidTool,
    StructuredTool,
    Tool,
    convert_to_openai_tool,
    render_text_description,
    render_text_description_and_args,
    tool,
)

from typing import Any

__version__ = "0.1.0"

_PUBLIC_PACKAGES = (
    "actloop.callbacks",
    "actloop.executor",
    "actloop.messages",
    "actloop.prompts",
    "actloop.runnables",
    "actloop.serialization",
    "actloop.tools",
)


def _pin_public_modules() -> None:
    """Names a public package exports from its private modules report the package as their
    `__module__` (what users import, and what serialized ids and reprs show)."""
    import sys

    for package in _PUBLIC_PACKAGES:
        module = sys.modules[package]
        for name in module.__all__:
            obj = getattr(module, name)
            where = getattr(obj, "__module__", None)
            if isinstance(where, str) and where.startswith(f"{package}._"):
                obj.__module__ = package


_pin_public_modules()

_LAZY = {
    "Agent": "actloop.legacy_agents",
    "AgentType": "actloop.legacy_agents",
    "BaseLLM": "actloop.llms",
    "LLM": "actloop.llms",
    "LLMChain": "actloop.legacy_agents",
    "LLMSingleActionAgent": "actloop.legacy_agents",
    "ZeroShotAgent": "actloop.legacy_agents",
    "initialize_agent": "actloop.legacy_agents",
}
"""Names loaded on first use (the legacy agents and text models are not needed by most runs)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'actloop' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [  # noqa: RUF022 - plain sorted() order, as tests/test_public_api.py checks
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
    "AgentOutputParser",
    "AgentStep",
    "AsyncCallbackHandler",
    "BaseCallbackHandler",
    "BaseChatModel",
    "BaseMessage",
    "BaseMultiActionAgent",
    "BaseOutputParser",
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
    "JSONAgentOutputParser",
    "MessagesPlaceholder",
    "ModelError",
    "MultiActionAgentOutputParser",
    "OpenAIToolsAgentOutputParser",
    "OutputParserException",
    "PromptTemplate",
    "REACT_PROMPT",
    "ReActSingleInputOutputParser",
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
    "StrOutputParser",
    "StringPromptValue",
    "StructuredTool",
    "SystemMessage",
    "SystemMessagePromptTemplate",
    "Tool",
    "ToolAgentAction",
    "ToolCall",
    "ToolException",
    "ToolMessage",
    "ToolsAgentOutputParser",
    "__version__",
    "convert_to_openai_tool",
    "create_react_agent",
    "create_structured_json_agent",
    "create_tool_calling_agent",
    "dumpd",
    "dumps",
    "format_log_to_messages",
    "format_log_to_str",
    "format_to_openai_tool_messages",
    "format_to_tool_messages",
    "get_buffer_string",
    "json_agent_schema",
    "load",
    "loads",
    "message_from_openai",
    "message_to_openai",
    "render_text_description",
    "render_text_description_and_args",
    "tool",
]
