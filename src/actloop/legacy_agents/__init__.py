"""LangChain classic's legacy agent classes on actloop's one loop: `initialize_agent`, `AgentType`,
`Agent` with its `LLMChain`, and the agent kinds `AgentType` names."""

from actloop.legacy_agents._agent import Agent, LLMSingleActionAgent
from actloop.legacy_agents._chain import LLMChain
from actloop.legacy_agents.chat import ChatOutputParser, ReActJsonSingleInputOutputParser
from actloop.legacy_agents.conversational import ConvoOutputParser
from actloop.legacy_agents.initialize import AGENT_TO_CLASS, AgentType, initialize_agent
from actloop.legacy_agents.mrkl import MRKLOutputParser, ZeroShotAgent
from actloop.legacy_agents.openai_functions import OpenAIFunctionsAgent
from actloop.legacy_agents.structured_chat import StructuredChatAgent

__all__ = [
    "AGENT_TO_CLASS",
    "Agent",
    "AgentType",
    "ChatOutputParser",
    "ConvoOutputParser",
    "LLMChain",
    "LLMSingleActionAgent",
    "MRKLOutputParser",
    "OpenAIFunctionsAgent",
    "ReActJsonSingleInputOutputParser",
    "StructuredChatAgent",
    "ZeroShotAgent",
    "initialize_agent",
]
