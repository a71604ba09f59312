"""actloop: a fast, reliable agent runtime with LangChain classic's AgentExecutor API.

Switch from LangChain by changing imports: `from actloop import AgentExecutor, tool, ...`.
"""

from typing import TYPE_CHECKING, Any

from actloop.callbacks import (
    AsyncCallbackHandler,
    AsyncCallbackManagerForLLMRun,
    BaseCallbackHandler,
    CallbackManagerForLLMRun,
    Run,
    RunCollectorCallbackHandler,
    StdOutCallbackHandler,
    collect_runs,
)
from actloop.chat_models import BaseChatModel, SimpleChatModel
from actloop.exceptions import (
    ActloopDeprecationWarning,
    ActloopError,
    CheckpointError,
    ConfigurationError,
    ModelError,
    OutputParserException,
    SerializationError,
    ToolException,
)
from actloop.executor import (
    RUN_KEY,
    AgentExecutor,
    AgentExecutorIterator,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    Resume,
    RunInfo,
    RunnableAgent,
    RunnableMultiActionAgent,
    TokenBudgetTrim,
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
    RemoveMessage,
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
    RunLog,
    RunLogPatch,
    Runnable,
    RunnableAssign,
    RunnableBinding,
    RunnableConfig,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
    RunnableSequence,
    add,
    run_in_executor,
)
from actloop.serialization import dumpd, dumps, load, loads
from actloop.steps import (
    AgentAction,
    AgentActionMessageLog,
    AgentFinish,
    AgentStep,
    ToolAgentAction,
)
from actloop.tool_calling import (
    OpenAIToolAgentAction,
    OpenAIToolsAgentOutputParser,
    ToolsAgentOutputParser,
    create_tool_calling_agent,
)
from actloop.tools import (
    BaseTool,
    ExceptionTool,
    InputCall,
    InvalidTool,
    NeedsInput,
    Question,
    StructuredTool,
    Tool,
    ToolCategories,
    convert_to_openai_tool,
    current_input,
    render_text_description,
    render_text_description_and_args,
    tool,
)

if TYPE_CHECKING:  # the lazy names below, for type checkers
    from actloop.classic import (
        Agent,
        AgentType,
        ChatAgent,
        ConversationalAgent,
        ConversationalChatAgent,
        LLMChain,
        LLMSingleActionAgent,
        MRKLOutputParser,
        OpenAIFunctionsAgent,
        OpenAIFunctionsAgentOutputParser,
        OpenAIMultiFunctionsAgent,
        ReActDocstoreAgent,
        SelfAskOutputParser,
        SelfAskWithSearchAgent,
        StructuredChatAgent,
        StructuredChatOutputParser,
        XMLAgent,
        XMLAgentOutputParser,
        ZeroShotAgent,
        create_json_chat_agent,
        create_openai_functions_agent,
        create_openai_tools_agent,
        create_self_ask_with_search_agent,
        create_structured_chat_agent,
        create_xml_agent,
        format_to_openai_function_messages,
        format_xml,
        initialize_agent,
    )
    from actloop.llms import (
        LLM,
        BaseLLM,
    )
    from actloop.outputs import (
        ChatGeneration,
        ChatResult,
        Generation,
        GenerationChunk,
        LLMResult,
    )
    from actloop.runnables import RunnableWithMessageHistory

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
            obj = module.__dict__.get(name)  # a package's lazy name pins its own module
            where = getattr(obj, "__module__", None)
            if isinstance(where, str) and where.startswith(f"{package}._"):
                obj.__module__ = package


_pin_public_modules()

_LAZY = {
    "Agent": "actloop.classic",
    "RunnableWithMessageHistory": "actloop.runnables",
    "AgentType": "actloop.classic",
    "BaseLLM": "actloop.llms",
    "ChatAgent": "actloop.classic",
    "ChatGeneration": "actloop.outputs",
    "ChatResult": "actloop.outputs",
    "ConversationalAgent": "actloop.classic",
    "ConversationalChatAgent": "actloop.classic",
    "Generation": "actloop.outputs",
    "GenerationChunk": "actloop.outputs",
    "LLM": "actloop.llms",
    "LLMChain": "actloop.classic",
    "LLMResult": "actloop.outputs",
    "LLMSingleActionAgent": "actloop.classic",
    "MRKLOutputParser": "actloop.classic",
    "OpenAIFunctionsAgent": "actloop.classic",
    "OpenAIFunctionsAgentOutputParser": "actloop.classic",
    "OpenAIMultiFunctionsAgent": "actloop.classic",
    "ReActDocstoreAgent": "actloop.classic",
    "SelfAskOutputParser": "actloop.classic",
    "SelfAskWithSearchAgent": "actloop.classic",
    "StructuredChatAgent": "actloop.classic",
    "StructuredChatOutputParser": "actloop.classic",
    "XMLAgent": "actloop.classic",
    "XMLAgentOutputParser": "actloop.classic",
    "ZeroShotAgent": "actloop.classic",
    "create_json_chat_agent": "actloop.classic",
    "create_openai_functions_agent": "actloop.classic",
    "create_openai_tools_agent": "actloop.classic",
    "create_self_ask_with_search_agent": "actloop.classic",
    "create_structured_chat_agent": "actloop.classic",
    "create_xml_agent": "actloop.classic",
    "format_to_openai_function_messages": "actloop.classic",
    "format_xml": "actloop.classic",
    "initialize_agent": "actloop.classic",
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
    "ActloopDeprecationWarning",
    "ActloopError",
    "AddableDict",
    "Agent",
    "AgentAction",
    "AgentActionMessageLog",
    "AgentExecutor",
    "AgentExecutorIterator",
    "AgentFinish",
    "AgentOutputParser",
    "AgentStep",
    "AgentType",
    "AsyncCallbackHandler",
    "AsyncCallbackManagerForLLMRun",
    "BaseCallbackHandler",
    "BaseChatModel",
    "BaseLLM",
    "BaseMessage",
    "BaseMultiActionAgent",
    "BaseOutputParser",
    "BaseSingleActionAgent",
    "BaseTool",
    "CallbackManagerForLLMRun",
    "ChatAgent",
    "ChatGeneration",
    "ChatPromptTemplate",
    "ChatPromptValue",
    "ChatResult",
    "CheckpointError",
    "ConfigurationError",
    "ConversationalAgent",
    "ConversationalChatAgent",
    "ExceptionTool",
    "FunctionMessage",
    "Generation",
    "GenerationChunk",
    "HumanMessage",
    "HumanMessagePromptTemplate",
    "InputCall",
    "InvalidTool",
    "JSONAgentOutputParser",
    "LLM",
    "LLMChain",
    "LLMResult",
    "LLMSingleActionAgent",
    "MRKLOutputParser",
    "MessagesPlaceholder",
    "ModelError",
    "MultiActionAgentOutputParser",
    "NeedsInput",
    "OpenAIFunctionsAgent",
    "OpenAIFunctionsAgentOutputParser",
    "OpenAIMultiFunctionsAgent",
    "OpenAIToolAgentAction",
    "OpenAIToolsAgentOutputParser",
    "OutputParserException",
    "PromptTemplate",
    "Question",
    "REACT_PROMPT",
    "RUN_KEY",
    "ReActDocstoreAgent",
    "ReActSingleInputOutputParser",
    "RemoveMessage",
    "Resume",
    "Run",
    "RunCollectorCallbackHandler",
    "RunInfo",
    "RunLog",
    "RunLogPatch",
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
    "RunnableWithMessageHistory",
    "SelfAskOutputParser",
    "SelfAskWithSearchAgent",
    "SerializationError",
    "SimpleChatModel",
    "StdOutCallbackHandler",
    "StrOutputParser",
    "StringPromptValue",
    "StructuredChatAgent",
    "StructuredChatOutputParser",
    "StructuredTool",
    "SystemMessage",
    "SystemMessagePromptTemplate",
    "TokenBudgetTrim",
    "Tool",
    "ToolAgentAction",
    "ToolCall",
    "ToolCategories",
    "ToolException",
    "ToolMessage",
    "ToolsAgentOutputParser",
    "XMLAgent",
    "XMLAgentOutputParser",
    "ZeroShotAgent",
    "__version__",
    "add",
    "collect_runs",
    "convert_to_openai_tool",
    "create_json_chat_agent",
    "create_openai_functions_agent",
    "create_openai_tools_agent",
    "create_react_agent",
    "create_self_ask_with_search_agent",
    "create_structured_chat_agent",
    "create_structured_json_agent",
    "create_tool_calling_agent",
    "create_xml_agent",
    "current_input",
    "dumpd",
    "dumps",
    "format_log_to_messages",
    "format_log_to_str",
    "format_to_openai_function_messages",
    "format_to_openai_tool_messages",
    "format_to_tool_messages",
    "format_xml",
    "get_buffer_string",
    "initialize_agent",
    "json_agent_schema",
    "load",
    "loads",
    "message_from_openai",
    "message_to_openai",
    "render_text_description",
    "render_text_description_and_args",
    "run_in_executor",
    "tool",
]
