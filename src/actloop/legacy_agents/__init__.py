"""LangChain classic's legacy agent classes on actloop's one loop: `initialize_agent`, `AgentType`,
`Agent` with its `LLMChain`, and the agent kinds `AgentType` names."""

from actloop.legacy_agents._agent import Agent, LLMSingleActionAgent
from actloop.legacy_agents._chain import LLMChain
from actloop.legacy_agents.initialize import AGENT_TO_CLASS, AgentType, initialize_agent
from actloop.legacy_agents.mrkl import MRKLOutputParser, ZeroShotAgent

__all__ = [
    "AGENT_TO_CLASS",
    "Agent",
    "AgentType",
    "LLMChain",
    "LLMSingleActionAgent",
    "MRKLOutputParser",
    "ZeroShotAgent",
    "initialize_agent",
]
