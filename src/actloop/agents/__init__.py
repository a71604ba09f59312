"""Agents: the data of a run (actions, finishes, steps) and LangChain 1.x's `create_agent`.

`AgentAction`, `AgentFinish`, `AgentStep`, ... live in `actloop.steps` (the data layer the loop
core imports) and report this module. `create_agent(model, tools, ...)` builds an agent with
`langchain.agents.create_agent`'s signature and results on actloop's loop
(`actloop.agents.factory`); its middleware is in `actloop.agents.middleware`, `Command` and
`interrupt` in `actloop.agents.types`.
"""

from __future__ import annotations

from actloop.agents.factory import CompiledAgent, create_agent
from actloop.agents.middleware.types import AgentState
from actloop.agents.types import Command, GraphRecursionError, Interrupt, interrupt
from actloop.steps import (
    AgentAction,
    AgentActionMessageLog,
    AgentFinish,
    AgentStep,
    ToolAgentAction,
)

__all__ = [
    "AgentAction",
    "AgentActionMessageLog",
    "AgentFinish",
    "AgentState",
    "AgentStep",
    "Command",
    "CompiledAgent",
    "GraphRecursionError",
    "Interrupt",
    "ToolAgentAction",
    "create_agent",
    "interrupt",
]
