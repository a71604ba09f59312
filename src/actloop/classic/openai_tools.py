"""`create_openai_tools_agent`: the tool-calling agent with `tools=` bound as OpenAI tool schemas
(LangChain's OpenAI-specific twin of `create_tool_calling_agent`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actloop.format_scratchpad import format_to_openai_tool_messages, from_steps
from actloop.prompts import ChatPromptTemplate
from actloop.prompts._agent_checks import require_variables
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish
from actloop.tool_calling import OpenAIToolsAgentOutputParser
from actloop.tools import convert_to_openai_tool
from actloop.tools._openai import ToolLike

__all__ = ["create_openai_tools_agent"]


def create_openai_tools_agent(
    llm: Runnable[Any, Any],
    tools: Sequence[ToolLike],
    prompt: ChatPromptTemplate,
    strict: bool | None = None,
) -> Runnable[dict[str, Any], list[AgentAction] | AgentFinish]:
    """`scratchpad | prompt | llm.bind(tools=[...]) | OpenAIToolsAgentOutputParser`."""
    require_variables(prompt, {"agent_scratchpad"})
    llm_with_tools = llm.bind(tools=[convert_to_openai_tool(t, strict=strict) for t in tools])
    return (
        RunnablePassthrough.assign(agent_scratchpad=from_steps(format_to_openai_tool_messages))
        | prompt
        | llm_with_tools
        | OpenAIToolsAgentOutputParser()
    )
