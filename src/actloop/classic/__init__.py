"""The rest of `langchain_classic.agents` on actloop's one loop: the agent kinds
`create_openai_functions_agent`, `create_structured_chat_agent`, `create_xml_agent`,
`create_self_ask_with_search_agent`, and the legacy classes (`initialize_agent`, `AgentType`,
`Agent` with its `LLMChain`, `ZeroShotAgent`, ...).

One package above `executor` (the legacy classes subclass its agent bases), so the package root
stays short; the modern kinds in it import nothing from `executor`.
"""

from actloop.classic._agent import Agent, LLMSingleActionAgent
from actloop.classic._chain import LLMChain
from actloop.classic.chat import ChatOutputParser, ReActJsonSingleInputOutputParser
from actloop.classic.conversational import ConvoOutputParser
from actloop.classic.initialize import AGENT_TO_CLASS, AgentType, initialize_agent
from actloop.classic.json_chat import create_json_chat_agent
from actloop.classic.legacy_kinds import (
    ChatAgent,
    ConversationalAgent,
    ConversationalChatAgent,
    ReActDocstoreAgent,
    SelfAskWithSearchAgent,
    XMLAgent,
)
from actloop.classic.mrkl import MRKLOutputParser, ZeroShotAgent
from actloop.classic.openai_functions import (
    OpenAIFunctionsAgentOutputParser,
    create_openai_functions_agent,
    format_to_openai_function_messages,
)
from actloop.classic.openai_functions_agent import OpenAIFunctionsAgent, OpenAIMultiFunctionsAgent
from actloop.classic.openai_tools import create_openai_tools_agent
from actloop.classic.self_ask import SelfAskOutputParser, create_self_ask_with_search_agent
from actloop.classic.structured_chat import (
    StructuredChatOutputParser,
    StructuredChatOutputParserWithRetries,
    create_structured_chat_agent,
)
from actloop.classic.structured_chat_agent import StructuredChatAgent
from actloop.classic.xml import XMLAgentOutputParser, create_xml_agent, format_xml

__all__ = [
    "AGENT_TO_CLASS",
    "Agent",
    "AgentType",
    "ChatAgent",
    "ChatOutputParser",
    "ConversationalAgent",
    "ConversationalChatAgent",
    "ConvoOutputParser",
    "LLMChain",
    "LLMSingleActionAgent",
    "MRKLOutputParser",
    "OpenAIFunctionsAgent",
    "OpenAIFunctionsAgentOutputParser",
    "OpenAIMultiFunctionsAgent",
    "ReActDocstoreAgent",
    "ReActJsonSingleInputOutputParser",
    "SelfAskOutputParser",
    "SelfAskWithSearchAgent",
    "StructuredChatAgent",
    "StructuredChatOutputParser",
    "StructuredChatOutputParserWithRetries",
    "XMLAgent",
    "XMLAgentOutputParser",
    "ZeroShotAgent",
    "create_json_chat_agent",
    "create_openai_functions_agent",
    "create_openai_tools_agent",
    "create_self_ask_with_search_agent",
    "create_structured_chat_agent",
    "create_xml_agent",
    "format_to_openai_function_messages",
    "format_xml",
    "initialize_agent",
]


def _pin_public_module() -> None:
    """Names from the private modules report `actloop.classic` (what users import)."""
    for name in __all__:
        obj = globals()[name]
        where = getattr(obj, "__module__", None)
        if isinstance(where, str) and where.startswith("actloop.classic._"):
            obj.__module__ = __name__


_pin_public_module()
