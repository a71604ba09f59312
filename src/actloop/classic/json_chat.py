"""`create_json_chat_agent`: a chat agent answering with a JSON blob, the observations sent back
as human messages (LangChain's JSON chat agent)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actloop.format_scratchpad import format_log_to_messages
from actloop.json_agent import JSONAgentOutputParser
from actloop.messages import BaseMessage
from actloop.prompts import ChatPromptTemplate
from actloop.prompts._agent_checks import require_variables, with_stop
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool
from actloop.tools.render import ToolsRenderer, render_text_description

__all__ = ["TEMPLATE_TOOL_RESPONSE", "create_json_chat_agent"]

TEMPLATE_TOOL_RESPONSE = (
    "TOOL RESPONSE:\n---------------------\n{observation}\n\nUSER'S INPUT\n"
    "--------------------\n\nOkay, so what is the response to my last comment? If using "
    "information obtained from the tools you must mention it explicitly without mentioning the "
    "tool names - I have forgotten all TOOL RESPONSES! Remember to respond with a markdown code "
    "snippet of a json blob with a single action, and NOTHING else - even if you just want to "
    "respond to the user. Do NOT respond with anything except a JSON snippet no matter what!"
)
"""How each observation goes back to the model (LangChain's text)."""


def create_json_chat_agent(
    llm: Runnable[Any, Any],
    tools: Sequence[BaseTool],
    prompt: ChatPromptTemplate,
    stop_sequence: bool | list[str] = True,
    tools_renderer: ToolsRenderer = render_text_description,
    template_tool_response: str = TEMPLATE_TOOL_RESPONSE,
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """`scratchpad messages | prompt | llm (stop at Observation) | JSONAgentOutputParser`."""
    require_variables(prompt, {"tools", "tool_names", "agent_scratchpad"})
    if "{observation}" not in template_tool_response:
        raise ValueError("Template tool response missing required variable 'observation'")
    prompt = prompt.partial(
        tools=tools_renderer(list(tools)), tool_names=", ".join(t.name for t in tools)
    )
    llm_to_use = with_stop(llm, stop_sequence, ["\nObservation"])

    def scratchpad(inputs: dict[str, Any]) -> list[BaseMessage]:
        return format_log_to_messages(inputs["intermediate_steps"], template_tool_response)

    return (
        RunnablePassthrough.assign(agent_scratchpad=scratchpad)
        | prompt
        | llm_to_use
        | JSONAgentOutputParser()
    )
